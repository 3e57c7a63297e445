"""What the choice among the candidates rests on, for every task: classification's paired drop
estimates (:func:`estimate_drops`), the reference where the exact model had a subsample
(:func:`stronger_reference`), and the confirmation on more folds (:func:`confirm_on_folds`: the
other cross-validation folds, with the exact model and the candidate trained again without each)
before a candidate is taken. The choice itself and the stages' order:
:mod:`leansvm.job.pipeline`; the refit that follows: :mod:`leansvm.job.refit`.
"""

from __future__ import annotations

import numpy as np

from leansvm.job.estimates import DEFAULT_CONFIDENCE, correct, set_drop
from leansvm.job.records import Candidate
from leansvm.job.refit import train_like


def estimate_drops(candidates, reference: Candidate, y_val, max_accuracy_drop, confidence=DEFAULT_CONFIDENCE):
    """Set every validated candidate's :class:`~leansvm.job.estimates.DropEstimate` against
    ``reference`` (the exact model, or :func:`stronger_reference`'s) on the validation part, and the
    accuracy it had to reach; the reference has none (an estimate against another model would be stale)."""
    reference_correct = correct(reference.validation_predictions, y_val)
    for c in candidates:
        if c is not reference and c.validation_predictions is not None:
            set_drop(c, reference_correct, y_val, max_accuracy_drop, confidence)
    reference.required_accuracy, reference.drop = reference.validation_accuracy, None


def stronger_reference(task, candidates, exact: Candidate, n_fit, log) -> Candidate:
    """The model the others are judged against where the exact model had only a subsample of the
    ``n_fit`` fit rows (a time budget): the candidate most surely better than it (the lowest one-sided
    bound of ``task.margin`` against ``exact``, where that bound is below 0: the task's paired estimate,
    :mod:`leansvm.job.tasks`), else ``exact``; every candidate is then judged against it, so the
    promise is kept against the better of the two.

    Measured: under the teacher-free split the exact SVC gets a tenth of the budget; on synth-1M
    (600 s) its 169,488 rows tested 0.9423, 0.73 points under the exact SVC on 707,421 rows, and the
    family's 591 vectors, 0.51 points above it on 20,000 validation rows, tested 0.9474. On
    friedman1-1M the exact SVR on 11,159 of 800,000 rows tested RMSE 0.2095 and the exact SVR on the
    32,926 rows that fit 10 minutes 0.2030: within 2 % of the first could be 5 % above the second; the
    1,420 Nystroem landmarks chosen against the better reference tested 0.1998."""
    task.estimate(candidates, exact)
    better = [c for c in candidates if c is not exact and task.margin(c, exact) < 0]
    if not better:
        return exact
    reference = min(better, key=lambda c: task.margin(c, exact))
    log.step("reference", f"{reference.name}: {task.describe(reference)}",
             f"the exact {task.model_name} had {exact.n_rows} of the {n_fit} fit rows ({task.describe(exact)}); "
             f"this model, trained on every fit row, is better at {100 * task.confidence:g} % confidence, so the "
             "candidates are judged against it")
    task.estimate(candidates, reference)
    return reference


def pool_folds(finalists, n_folds, reference_on_fold, candidate_on_fold, judge, reference_seconds,
               seconds_left=None, references=None):
    """Try ``finalists`` (smallest first) on folds 0..``n_folds`` - 1 pooled, until ``judge`` accepts one.

    Fold 0 is the validation part the candidates were chosen on; on each other fold the reference
    (the exact model) and a model of the candidate's kind and size are trained without its held-out
    rows and compared there. ``reference_on_fold(k)`` returns (model, evidence) and is called once
    per fold, its model shared by the finalists; ``candidate_on_fold(c, k, reference model)`` returns
    the candidate's evidence on fold k (k = 0: its validation evidence, the model None);
    ``judge(c, reference evidence, candidate evidence)`` (lists over the folds used) sets ``c``'s pooled
    estimate and says whether it is accepted. No fold is started when the reference's
    ``reference_seconds`` and the candidate's ``fit_seconds`` would pass ``seconds_left()`` (a
    callable, the seconds the job's clock has left; None: no limit): a
    candidate is judged on the folds it has, and once the time is out the later ones on the
    validation part alone (the folds refute a candidate; one they could not reach keeps the
    verdict of the rows it was chosen on: letter, 12,800 rows, seed 4: 520 compressed vectors
    failed on two folds and used the time, and 1,040 vectors, 0.06 points below the exact model on
    the hold-out with a bound of 0.24, were not judged, so the exact model was returned). A larger
    finalist is tried only when a smaller one failed. ``references``: {fold: (model, evidence)} of the
    reference already trained, filled here (a later call on the same folds reuses them). Returns
    (accepted candidate or None, [(candidate, folds it was judged on)] of those tried, out of time)."""
    references = {} if references is None else references
    if 0 not in references:
        references[0] = reference_on_fold(0)
    tried, out_of_time = [], False

    def over(extra):
        return seconds_left is not None and extra > seconds_left()

    for c in finalists:
        evidence = [candidate_on_fold(c, 0, None)]
        for k in range(1, n_folds):
            if out_of_time:
                break
            # a fold needs both models: an exact fit without the candidate's is wasted (synth-200k:
            # 67 s on a fold's exact SVC, then the 233-s compression did not fit)
            if k not in references and not over(reference_seconds + c.fit_seconds):
                references[k] = reference_on_fold(k)
            if k not in references or over(c.fit_seconds):
                out_of_time = True
                break
            evidence.append(candidate_on_fold(c, k, references[k][0]))
        tried.append((c, len(evidence)))
        if judge(c, [references[k][1] for k in range(len(evidence))], evidence):
            return c, tried, out_of_time
    return None, tried, out_of_time


def confirm_on_folds(job, candidates, reference: Candidate, make_exact, time_limit=None,
                     fold_references=None) -> Candidate | None:
    """The smallest cheap candidate the task's rule accepts on every fold of the job's ``folds``
    pooled, else ``reference``; None where there is nothing to confirm (no candidate is promising, or
    one fold only): the validation part's choice stands.

    The first fold is the validation part the candidates were chosen on; on each other one the exact
    model (``make_exact()``) and a model of the candidate's kind and size
    (:func:`~leansvm.job.refit.train_like`) are trained on its fit rows and predict its held-out rows
    (:func:`pool_folds`). Candidates are tried from the smallest (ties as the choice breaks them:
    the smaller ``task.margin`` first), among those the task finds promising (its validation
    estimate would pass with the standard error the pooled folds are expected to have). A
    candidate whose folds did not all fit in ``time_limit`` seconds is judged on the folds it has,
    and the later ones on the validation part alone. Each tried candidate's
    estimate becomes the pooled one. ``fold_references``: the exact models of the folds, kept across
    calls on the same folds (:func:`pool_folds`' ``references``)."""
    task, X, y, folds, log = job.task, job.X, job.y, job.folds, job.log
    start = job.clock()
    finalists = sorted((c for c in candidates if c.kind in ("budget", "compressed")   # the choice's order:
                        and task.promising(c, reference, len(folds))),                # ties to the smaller bound
                       key=lambda c: (c.n_support, task.margin(c, reference)))
    if not finalists or len(folds) < 2:
        return None
    compress_to = job.compress_to()

    def fit_part(k):
        fit = folds[k][0]
        return X[fit], (np.zeros(fit.size) if y is None else y[fit])

    def reference_on_fold(k):
        if k == 0:
            return reference.model, reference.validation_predictions
        model = make_exact().fit(*fit_part(k))
        return model, model.predict(X[folds[k][1]])

    def candidate_on_fold(c, k, exact_model):
        if k == 0:
            return c.validation_predictions
        X_k, y_k = fit_part(k)
        model, _ = train_like(c, X_k, None if y is None else y_k, exact_model, compress_to, job.random_state)
        return model.predict(X[folds[k][1]])

    def judge(c, reference_predictions, predictions):
        used = range(len(predictions))
        task.pool(c, reference_predictions, predictions, None if y is None else [y[folds[k][1]] for k in used])
        log.say(f"  {c.name}: {task.describe_pooled(c)} on {sum(folds[k][1].size for k in used)} rows of "
                f"{len(predictions)} folds")
        return task.within(c)

    choice = next((c for c in finalists if task.within(c)), reference)    # the validation part's, before pooling
    ends = None if time_limit is None else job.clock() + time_limit
    accepted, tried, out_of_time = pool_folds(finalists, len(folds), reference_on_fold, candidate_on_fold, judge,
                                              reference.fit_seconds, None if ends is None else
                                              (lambda: ends - job.clock()), fold_references)
    chosen = accepted or reference
    used = next((folds for c, folds in tried if c is accepted), 1)
    confirmed = (f"confirmed on {used - 1} other fold{'s' if used > 2 else ''}" if used > 1 else
                 "kept on the validation part alone: no time for the other folds")
    if accepted is None:
        head, why = (f"none confirmed on the other folds: {chosen.name}, {chosen.n_support} vectors",
                     f"no candidate's bound is within the limit on the pooled folds; {reference.name}")
    elif accepted is choice:
        head, why = f"{chosen.name}: {chosen.n_support} vectors, {confirmed}", \
            f"its {task.describe_pooled(chosen)} is within the limit"
    else:                                  # the folds settled on another candidate than the validation part's
        head = f"{chosen.name} in place of {choice.name}: {confirmed}"
        why = f"its {task.describe_pooled(chosen)} is within the limit; " + (
            f"smaller than {choice.name}, it missed the target on the validation part alone and is within it on "
            "the pooled folds" if accepted.n_support < choice.n_support else
            f"{choice.name} is not within the limit on the pooled folds")
    log.step("confirm", head, why + tried_note(tried, len(folds), out_of_time), job.clock() - start)
    return chosen


def tried_note(tried, n_folds, out_of_time) -> str:
    """The confirming step's closing words: which candidates :func:`pool_folds` tried, on how many of the
    ``n_folds`` folds (each (candidate, folds) of its ``tried``)."""
    def where(folds):
        return "the validation part alone" if folds == 1 else f"{folds} folds"
    stopped = f"; the time limit stopped the folds short of {n_folds}" if out_of_time else ""
    return (f" ({', '.join(f'{c.name} on {where(folds)}' for c, folds in tried)}{stopped}; each fold's models "
            "trained again without it)")
