"""The main job for novelty detection (``leansvm fit --task novelty``): data to
the cheapest one-class SVM that flags the same rows as the exact one.

Stages, each one line of the log:

1. data: a table's columns encoded, or a matrix scaled as svm-scale does (kept with the model); a
   random ``validation_fraction`` of the rows held out. Training labels are ignored, as LIBSVM's
   one-class SVM ignores them (the rows are taken as normal data, a share ``nu`` of which may lie
   outside);
2. the exact :class:`leansvm.OneClassSVM` (nu, gamma) on the other rows. There are no labels to
   tune by: ``nu`` is the share of training rows the user lets lie outside (Schoelkopf et al.'s
   nu-property), gamma is scikit-learn's 'scale' times ``gamma_factor`` on the scaled features;
3. cheap candidates at ``size_fractions`` of its support vectors (:mod:`leansvm.job.one_output`):
   ``leansvm.compress`` fitted at the training rows and :class:`leansvm.BSGDOneClassSVM`;
4. the choice: the fewest vectors whose labels (inlier / outlier) differ from the exact model's
   on at most ``max_disagreement`` of the validation rows (a one-sided ``confidence`` bound), then
   of the other folds pooled (``confirm``: both models trained again without each); the chosen kind
   and size is trained again on every row;
5. measurements never used for a choice: the same disagreement on the test part; with test labels
   (+1 normal, anything else an outlier, as svm-predict counts a one-class model's accuracy) the
   accuracy of the predicted +1 / -1 and the AUC of the decision values; the prediction cost.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from leansvm.core.validation import allowed_share
from leansvm.job.helpers import thread_limited
from leansvm.job.candidates import pass_work
from leansvm.job.context import JobContext
from leansvm.job.data import prepare_table, scale_features, scaling_name, validation_folds
from leansvm.job.estimates import DEFAULT_CONFIDENCE, check_confidence
from leansvm.job.measure import TIMING_ROWS, measure_prediction_cost
from leansvm.job.records import JobLog, LeanResult
from leansvm.job.one_output import (COMPRESSION_POINTS, DEFAULT_SIZE_FRACTIONS, one_output_deadline,
                                     one_output_candidates, one_output_result, summarize)
from leansvm.job.pipeline import train_and_choose
from leansvm.job.task_rules import NoveltyTask

#: the share of training rows allowed outside (a novelty job's contamination; LIBSVM's default 0.5
#: would flag half the normal data)
DEFAULT_NU = 0.05


def label_metrics(model, X, predicted, labels) -> dict:
    """Accuracy of the ``predicted`` +1 / -1 (the model's on X) against ``labels`` (svm-predict's
    one-class accuracy) and, when both kinds are present, the AUC of the decision values for
    'label == +1' (normal)."""
    from sklearn.metrics import roc_auc_score

    labels = np.asarray(labels, dtype=np.float64)
    out = {"accuracy": float(np.mean(predicted == labels))}
    normal = labels == 1
    if 0 < normal.sum() < normal.size:
        out["AUC"] = float(roc_auc_score(normal, model.decision_function(X)))
    return out


def _check(nu, gamma_factor, validation_fraction, confidence=DEFAULT_CONFIDENCE):
    if not (np.isfinite(nu) and 0 < nu <= 1):
        raise ValueError(f"nu is the share of training rows allowed outside, in (0, 1]; got {nu!r}")
    if not (np.isfinite(gamma_factor) and gamma_factor > 0):
        raise ValueError(f"gamma_factor must be a positive number, got {gamma_factor!r}")
    if not 0 < validation_fraction < 1:
        raise ValueError(f"validation_fraction must be in (0, 1), got {validation_fraction!r}")
    check_confidence(confidence)


@thread_limited
def fit_lean_novelty(X, y=None, *, X_test=None, y_test=None, target=None, impute=None, scale=True, nu=DEFAULT_NU,
                     gamma_factor=1.0, max_disagreement=0.01, size_fractions=DEFAULT_SIZE_FRACTIONS,
                     validation_fraction=0.2, random_state=0, verbose=False,
                     confidence=DEFAULT_CONFIDENCE, budget_seconds=None, refit=True,
                     confirm=True) -> LeanResult:
    """Data to the cheapest one-class SVM (module docstring). ``max_disagreement``: a fraction
    (0.01 = the returned model labels at most 1 % of the validation rows otherwise than the exact
    model) or a percentage ('1%'). ``y`` (or a ``target`` column) is ignored but for its removal from a table.
    ``budget_seconds``: a bound on the whole call (the exact model on a subsample, fewer sizes; None:
    the candidates take a multiple of the time until the exact fit, ``Deadline.bound_after_exact``);
    ``refit=False`` returns the chosen model as trained on the fit part instead of training it again on
    every row; ``confirm=False`` takes the choice on the validation part alone; ``n_jobs`` (-1: every
    core): the threads the job may use, as ``--n-jobs``."""
    from sklearn.utils import check_array

    import leansvm

    max_disagreement = allowed_share("max_disagreement", max_disagreement)
    _check(nu, gamma_factor, validation_fraction, confidence)
    log = JobLog(verbose)
    start = log.clock()
    deadline = one_output_deadline(budget_seconds, confirm, log.clock)
    if y is None and target is None and hasattr(X, "columns"):
        y = np.zeros(len(X))                           # a table of features only: no column to split off
    X, _, X_test, y_test, preprocessor = prepare_table(X, y, X_test, y_test, target, impute, log,
                                                       scaling_name(scale))
    X = check_array(X, accept_sparse="csr", dtype=np.float64)
    if preprocessor is None:
        X, X_test, preprocessor = scale_features(X, X_test, scale, log)
    folds = validation_folds(X, None, validation_fraction, random_state)
    job = JobContext(X, None, folds, NoveltyTask(max_disagreement, confidence), deadline, log, random_state, COMPRESSION_POINTS, start)
    X_fit, X_val = job.X_fit, job.X_val
    gamma = gamma_factor * leansvm.Kernel.from_params("rbf", "scale", X=X_fit).gamma
    log.step("data", f"{X.shape[0]} samples x {X.shape[1]} features, novelty detection",
             f"{X_val.shape[0]} rows held out for validation; training labels, if any, are ignored (LIBSVM's "
             f"one-class); nu = {nu:g}: the share of training rows allowed outside")

    make_exact = lambda: leansvm.OneClassSVM(nu=nu, gamma=gamma, random_state=random_state)  # noqa: E731
    families = [("BSGD", lambda size: leansvm.BSGDOneClassSVM(budget=size, nu=nu, gamma=gamma,
                                                              random_state=random_state), pass_work)]
    how = f"IRWLS at nu = {nu:g}, gamma = {gamma:.4g} ({gamma_factor:g} x 'scale': no labels to tune by)"
    stages = train_and_choose(job, make_exact, partial(one_output_candidates, job, make_exact, how, families,
                                                       size_fractions, (None, gamma)), refit=refit, confirm=confirm)
    exact, candidates, chosen, refit = stages.exact, stages.candidates, stages.chosen, stages.refit
    choice = {"params": {"nu": nu, "gamma": gamma}, "error_name": "disagreement", "limit": max_disagreement,
              "allowed": f"labels differing from the exact model's on at most {100 * max_disagreement:g} % of the "
                         "validation rows"}
    summary = summarize(X, X_test, X_val.shape[0])
    if stages.interrupted is not None:
        return one_output_result(job, chosen, None, candidates, preprocessor, stages.interrupted, summary=summary,
                                 **choice)
    final = refit or chosen
    if X_test is not None:                                    # measured, never used for the choice
        reference_test = exact.model.predict(X_test)
        for c in candidates:
            predicted = c.model.predict(X_test)
            c.test_error = float(np.mean(predicted != reference_test))
            if y_test is not None:
                c.test_metrics = label_metrics(c.model, X_test, predicted, y_test)
    measured = "test" if X_test is not None else "validation"
    X_eval = X_test if X_test is not None else X_val
    measure_prediction_cost(candidates, X_eval[:TIMING_ROWS])
    evaluation = {"part": measured, "labels": None if measured != "test" or y_test is None else np.asarray(y_test, float),
                  "exact": exact.model.decision_function(X_eval), "chosen": final.model.decision_function(X_eval)}
    return one_output_result(job, chosen, refit, candidates, preprocessor, summary=summary, evaluation=evaluation,
                             **choice)
