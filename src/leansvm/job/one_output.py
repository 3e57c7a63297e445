"""What the one-output tasks of ``leansvm fit`` share: regression (:mod:`leansvm.job.regression`)
and novelty detection (:mod:`leansvm.job.novelty`). They run the stages every task runs
(:func:`leansvm.job.pipeline.train_and_choose`: the reference, the choice, the confirming folds, the
refit) with these candidates (:func:`one_output_candidates`):

1. an exact model (``leansvm.SVR`` or ``leansvm.OneClassSVM``) on the training rows, or with a
   budget on the largest subsample that fits its share (:func:`train_exact_model`);
2. cheap candidates at fractions of its support vectors (:func:`cheap_candidates`):
   ``leansvm.compress`` fitted at training rows (Xu et al.'s eq. 10 on the model's outputs)
   and a budgeted SGD model (``BSGDRegressor`` / ``BSGDOneClassSVM``, and Nystroem landmarks for
   regression) of each size, cheapest first while the time lasts;
3. the teacher-free family where the task has one (``ReducedSVR``), in the time they left.

After the choice, the task measures what is never used for a choice: the same error on the test part,
the prediction cost (:func:`leansvm.job.measure.measure_prediction_cost`). The result
(:func:`one_output_result`, :class:`~leansvm.job.records.LeanResult`) is what the table
(:func:`format_one_output_table`) and the HTML report (:mod:`leansvm.job.report`) read.
"""

from __future__ import annotations

import warnings

from leansvm.job.records import Candidate, LeanResult

#: L-BFGS iterations of each compressed candidate (compress's default scales to 3,000 at small
#: sizes: 95 s for 256 vectors on friedman1-10k)
COMPRESS_ITERATIONS = 300
#: the least fitting points of a compressed candidate (the classification job's ``compression_points``)
COMPRESSION_POINTS = 20000
#: candidate sizes as fractions of the exact model's support vectors
DEFAULT_SIZE_FRACTIONS = (0.02, 0.05, 0.1, 0.2, 0.33)
#: the smallest candidate
MIN_VECTORS = 5


def one_output_result(job, chosen, refit, candidates, preprocessor, interrupted=None, **fields) -> LeanResult:
    """The job's :class:`~leansvm.job.records.LeanResult`: the returned model, ``refit`` else ``chosen``,
    with its preprocessing; ``interrupted``: the Ctrl-C that ended the job with ``chosen`` as validated
    (:func:`~leansvm.job.pipeline.train_and_choose`). ``fields``: the result's fields the task fills (``summary``, ``params``,
    ``error_name``, ``limit``, ``allowed``, ``evaluation``, ...)."""
    from leansvm import io

    final = refit or chosen
    model = final.model if preprocessor is None else io.with_preprocessing(preprocessor, final.model)
    job.log.flush()
    return LeanResult(model, chosen, candidates, None, None, job.log.steps, fields.pop("summary"),
                      seconds=job.log.clock() - job.started, final=final,
                      preprocessing=None if preprocessor is None else preprocessor.describe(),
                      confidence=job.task.confidence, interrupted=interrupted, task=job.task.name, **fields)


def candidate_sizes(n_support, size_fractions) -> list[int]:
    """The cheap candidates' sizes: ``size_fractions`` of the exact model's vectors, at least
    ``MIN_VECTORS``, below the exact size, without repeats."""
    sizes = {max(MIN_VECTORS, int(round(f * n_support))) for f in size_fractions}
    return sorted(s for s in sizes if s < n_support)


def cheap_candidates(job, exact: Candidate, budget_families, sizes, time_limit=None):
    """For every size: a compressed copy of the exact model (fitted at training rows; at most
    ``COMPRESS_ITERATIONS`` L-BFGS iterations) and, for each (name, make, work) of ``budget_families``,
    ``make(size)`` trained on all training rows (named '<name> <the task's model name> (size)').

    The compression's fitting points are a random subsample of the training rows, as the
    classification job's (:func:`leansvm.job.candidates._n_fitting_points`): at least
    the job's ``compression_points``, 4 per vector and 3 per fitted parameter (all rows when there are fewer),
    so that they grow with the size past ``compress``'s own cap of 20,000 (synth-50k's 868 vectors
    x 21 parameters tested 0.9098 fitted on 50,000 rows, 0.9004 on 20,000).

    ``budget_families``: (name, make, work) triples; ``work(size, rows)`` is the fit's work up to a
    constant (:func:`leansvm.job.candidates.pass_work`: a pass over the rows; ``LandmarkSVR.fit_work``: a ridge problem).
    ``time_limit`` (seconds): the models are made cheapest first, each family's expected time being
    its last model's scaled by the ratio of their work (a budget family's first model timed
    beforehand on a subsample, :func:`leansvm.job.candidates._timed_subsample`; a compression's time
    taken as proportional to its size, the first one always made), and once the cheapest next model
    would end past the limit the rest are left out; the log names them. Made in the order of the sizes
    instead, on friedman1-1M's 800,000 rows the BSGD models of 172 and 430 vectors (a pass over
    every row each) were made and Nystroem's 860 to 2,839 landmarks were left out for lack of time;
    cheapest first, Nystroem's five sizes were made and BSGD's larger four left out."""
    import numpy as np

    from leansvm.job.candidates import _timed_subsample
    from leansvm.job.helpers import _timed

    X_fit, y_fit, random_state, log, label = job.X_fit, job.y_fit, job.random_state, job.log, job.task.model_name
    rng = np.random.default_rng(random_state)
    n, start = X_fit.shape[0], job.clock()
    plan = [(f"compressed {label}", "compressed", None, lambda size, rows: size)] + \
        [(f"{name} {label}", "budget", make, work) for name, make, work in budget_families]
    todo = [(size, k) for size in sizes for k in range(len(plan))]      # the order of the sizes
    last = {}                          # family index -> (size, seconds, rows) of its last model
    ready = {}                         # entry -> (model, seconds): a timing fit that took every row
    if time_limit is not None and sizes:
        for k, (_, _, make, _) in enumerate(plan):
            if make is not None:
                *last[k], model = _timed_subsample(make(sizes[0]), X_fit, y_fit, random_state)
                if model is not None:
                    ready[(sizes[0], k)] = (model, last[k][1])

    def expected(entry):
        size, k = entry
        if k not in last:
            return 0.0
        done, seconds, rows = last[k]
        return seconds * plan[k][3](size, n) / max(plan[k][3](done, rows), 1e-12)

    made = []
    while todo:
        entry = min(todo, key=lambda e: 0.0 if e in ready else expected(e)) if time_limit is not None else todo[0]
        if entry not in ready and time_limit is not None and entry[1] in last \
                and job.clock() - start + expected(entry) > time_limit:
            break
        todo.remove(entry)
        (size, k), (family, kind, make, _) = entry, plan[entry[1]]
        if entry in ready:
            model, seconds = ready.pop(entry)
        elif make is None:
            model, seconds = _timed(compress_exact, exact.model, size, X_fit, y_fit, rng, random_state,
                                    job.compression_points)
        else:
            model, seconds = _timed(make(size).fit, X_fit, y_fit)
        last[k] = (size, seconds, n)
        made.append((entry, Candidate(f"{family} ({size})", kind, model, int(model.expansion_.n_support),
                                              seconds)))
    made = [c for _, c in sorted(made, key=lambda pair: pair[0])]
    if todo:
        log.say(f"  left out for lack of time ({time_limit:.0f} s): "
                + ", ".join(f"{plan[k][0]} ({size})" for size, k in sorted(todo)))
    # a step of its own, so that the stage times show what the cheap models cost (else the next step's)
    log.step("candidates", f"{len(made)} cheap models", ", ".join(c.name for c in made)
             + (f"; {len(todo)} left out for lack of time" if todo else ""), job.clock() - start)
    return made


def compress_exact(exact_model, size, X, y, rng, random_state, compression_points=COMPRESSION_POINTS):
    """``leansvm.compress`` of ``exact_model`` to ``size`` vectors, fitted at a random subsample of the
    rows ``X`` (``rng`` draws it; :func:`leansvm.job.candidates._n_fitting_points` sizes it) with at
    most ``COMPRESS_ITERATIONS`` L-BFGS iterations. ``y``: targets, or None for one-class models."""
    import numpy as np

    import leansvm
    from leansvm.job.candidates import POINTS_PER_VECTOR, _n_fitting_points

    pick = np.sort(rng.choice(X.shape[0], _n_fitting_points(X, size, compression_points, POINTS_PER_VECTOR),
                              replace=False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                # L-BFGS may stop at its iteration cap
        return leansvm.compress(exact_model, n_sv=size, X=X[pick], y=None if y is None else y[pick],
                                random_state=random_state, max_iter=COMPRESS_ITERATIONS, max_fit_points=None,
                                progress=False)


def one_output_deadline(budget_seconds, confirm, clock):
    """The time budget of a one-output job, on ``clock`` (the job log's):
    :class:`~leansvm.job.deadline.Deadline` whose refit share goes to the candidates (the refit runs
    when time is left), and the confirming folds' too when ``confirm`` is False; the reduced family's
    share goes to compression, in whose allowance these jobs train it after the cheap families
    (:func:`one_output_candidates`)."""
    from leansvm.job.deadline import Deadline

    deadline = Deadline(budget_seconds, clock=clock)
    deadline.skip("refit")
    deadline.skip("reduced")
    if not confirm:
        deadline.skip("confirm")
    return deadline


def compressor(random_state, compression_points=COMPRESSION_POINTS):
    """The one-output tasks' ``compress_to`` (:mod:`leansvm.job.refit`): :func:`compress_exact` with
    its fitting points drawn by a generator seeded ``random_state``."""
    import numpy as np

    return lambda model, size, X, y: compress_exact(model, size, X, y, np.random.default_rng(random_state),
                                                    random_state, compression_points)


def train_exact_model(job, make_exact, how) -> Candidate:
    """The exact model (``make_exact()``, named 'exact <the task's model name>') on every training row,
    or with a time budget on the largest subsample whose fit is estimated
    (:func:`~leansvm.job.candidates.estimate_fit_seconds`) to fit the exact stage's share; one log
    step, ``how`` its reason."""
    import numpy as np

    from leansvm.job.candidates import estimate_fit_seconds, rows_within
    from leansvm.job.deadline import release_unaffordable_shares, say_bound_after_exact
    from leansvm.job.helpers import _subsample, _timed

    X_fit, deadline, random_state, log, label = job.X_fit, job.deadline, job.random_state, job.log, job.task.model_name
    y_fit = np.zeros(X_fit.shape[0]) if job.y_fit is None else job.y_fit       # one-class fit takes zeros
    X_ex, y_ex, name = X_fit, y_fit, f"exact {label}"
    allowed = deadline.allowance("exact")
    if allowed is not None:
        estimated, measured, size, power = estimate_fit_seconds(make_exact, X_fit, y_fit, random_state=random_state)
        if estimated > allowed:
            X_ex, y_ex = _subsample(X_fit, y_fit, rows_within(allowed, measured, size, power, X_fit.shape[0]),
                                    random_state)
            name = f"exact {label} ({X_ex.shape[0]} of {X_fit.shape[0]} rows)"
            how += (f"; all {X_fit.shape[0]} rows estimated at {estimated:.0f} s, over the exact stage's "
                    f"{allowed:.0f} s of the budget: the largest subsample estimated to fit it")
    model, seconds = _timed(make_exact().fit, X_ex, y_ex)
    exact = Candidate(name, "exact", model, int(model.n_support_[0]), seconds, n_rows=X_ex.shape[0])
    log.step("train", f"{name}: {exact.n_support} support vectors", how, seconds)
    say_bound_after_exact(deadline, seconds, log)
    if X_ex.shape[0] < X_fit.shape[0]:
        deadline.skip("confirm")      # a fold's exact model on all its rows would be slower still
    release_unaffordable_shares(deadline, seconds, None, None, log)
    return exact


def one_output_candidates(job, make_exact, how, families, size_fractions, reduced_params, candidates) -> Candidate:
    """A one-output task's candidates (the ``train_candidates`` of
    :func:`~leansvm.job.pipeline.train_and_choose`), appended to ``candidates``: the exact model
    (:func:`train_exact_model`, ``how`` the log's reason); the ``families``' models ((name, make(size),
    work) each, and compression) at ``size_fractions`` of its vectors (:func:`cheap_candidates`), each
    validated and judged against it; then the reduced family (``reduced_params``: its (C, gamma)) in the
    time they left, below the smallest that qualifies (a larger one could not be chosen; the log says
    once where the family does not apply). Returns the exact model.

    The reduced family is not given the classification job's teacher-free split of the budget: on
    friedman1-200k (2 cores) ReducedSVR with 300 vectors took 78.5 s for test RMSE 0.2161 and
    Nystroem's 300 landmarks 1.8 s for 0.2171, so a budget moved to it is time Nystroem lacks."""
    from leansvm.job.reduced import train_reduced_models

    task, deadline = job.task, job.deadline
    exact = train_exact_model(job, make_exact, how)
    candidates += [exact]
    candidates += cheap_candidates(job, exact, families, candidate_sizes(exact.n_support, size_fractions),
                                   time_limit=deadline.allowance("compress"))
    for c in candidates:
        task.validate(c, job.X_val)
    task.estimate(candidates, exact)
    below = min((c.n_support for c in candidates if c is not exact and task.within(c)), default=None)
    candidates += train_reduced_models(job, exact, *reduced_params, deadline.allowance("compress"), below=below)
    return exact


def summarize(X, X_test, n_validation) -> dict:
    """The report's data summary: :func:`leansvm.job.data.summarize_data` without classes, and the
    validation rows held out."""
    from leansvm.job.data import summarize_data

    return {**summarize_data(X, None, X_test), "n_validation": int(n_validation)}


def format_one_output_table(result: LeanResult, every_model: bool = True) -> str:
    """The candidates (and the refit), one line each: vectors, fit seconds, validation (and test) error,
    further test figures; * = returned. ``every_model`` False keeps the exact, chosen and returned models
    (the command's default; -v shows every candidate)."""
    from leansvm.job.report import number_cell, text_table

    extra = sorted({k for c in result.candidates for k in c.test_metrics})
    name = result.error_name
    shown = [c for c in result.candidates if every_model or c.kind == "exact" or c is result.chosen or c is result.final]
    rows = [["model", "vectors", "fit s", "val " + name, "test " + name] + ["test " + k for k in extra]]
    for c in shown:
        rows.append([c.name + (" *" if c is result.final else ""), str(c.n_support), f"{c.fit_seconds:.2f}",
                     number_cell(c.validation_error), number_cell(c.test_error)]
                    + [number_cell(c.test_metrics.get(k)) for k in extra])
    lines = text_table(rows)
    hidden = len(result.candidates) - len(shown)
    return "\n".join(lines + ([f"(* returned; {hidden} more with -v)"] if hidden else []))
