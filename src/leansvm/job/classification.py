"""The main job: from data to the cheapest accurate model (``leansvm fit`` / ``fit_lean``).

The pipeline is a chain of stages, each a function with one contract, run in
order by :func:`fit_lean` (each readable on one screen):

1. :func:`_prepare_data`           -- a table's columns encoded or a matrix scaled (as
   LIBSVM's ``svm-scale``), inputs checked, :func:`summarize_data` (sizes, classes, balance).
2. :func:`validation_folds`        -- stratified folds; the first one's held-out rows are the
   validation part every later choice is made on.
3. :func:`_choose_hyperparameters` -- (C, gamma) by :func:`search_hyperparameters`, 5-fold
   cross-validation over grid.py's ranges (:mod:`leansvm.paths.search`: warm-started C paths,
   coarse-to-fine gamma, successive halving over subsamples, edges that extend); a grid the
   caller gives goes to :func:`select_hyperparameters` (screened paths of ``leansvm.SVCCV``);
   the wide search's C is then carried to the training rows' size (:func:`carry_C`).
4. :func:`_choose_route`           -- exact or budget training, from :func:`estimate_exact_seconds`
   (two timed subsamples, t ~ n^p, p in [1.5, 3]) against its share of the time budget.
5. :func:`_train_candidates`       -- :func:`train_exact` (on a subsample on the budget route) and
   :func:`train_budget_models` (``BSGDClassifier`` and Nystroem + LinearSVC at fractions of the
   exact model's size; on the budget route also at :func:`budget_route_sizes`).
6. :func:`_compress_reference`     -- on the budget route one more budget size between a miss and
   the smallest qualifying one (:func:`refine_budget_size`); ReducedSVC from the labels
   (:func:`train_reduced_models`); :func:`compress_models`:
   ``leansvm.compress`` of the exact model at doubling sizes until one is within the drop on the
   validation part.
7-8. every task's stages (:func:`~leansvm.job.pipeline.train_and_choose`, which runs 5-6 as this
   task's candidates): the model with the fewest support vectors whose accuracy drop against the
   exact model has a one-sided ``confidence`` bound (95 %) within ``max_accuracy_drop`` (a fraction)
   on the validation part (:mod:`leansvm.job.estimates`); :func:`confirm_on_folds` then pools the
   other folds (both models trained again without each) before a candidate is taken, so that one
   lucky hold-out does not decide, and where they refuted every accepted model compression one size
   up (:func:`_compressed_sizes_up`); then the chosen kind and size trained again on every training
   row (the validation part included), as ``GridSearchCV(refit=True)`` does: the exact SVC at the
   chosen (C, gamma), its compression to the chosen size, or the chosen budget model
   (:mod:`leansvm.job.refit`). This is the returned model.
9. :func:`_measure`                -- test accuracy, and seconds per 1000 predictions of every
   model and of LIBSVM's full model (scikit-learn ``SVC``) at the chosen (C, gamma)
   (:func:`measure_prediction_cost`); never used for a choice.

Each stage takes the run's :class:`~leansvm.job.context.JobContext` (rows and split, the task's rules
:class:`~leansvm.job.task_rules.ClassificationTask`, deadline, log, random state) and appends a
:class:`Step` (what it chose, why, how long, and a ``fallback`` note when an intended method was not
available): the log that ``verbose`` prints and the HTML report (:mod:`leansvm.job.report`) shows. A Ctrl-C once a
model cheaper than the exact one was accepted ends the job with that model
(:func:`~leansvm.job.pipeline.held_model`).
"""

from __future__ import annotations

import sys
import warnings
from functools import partial

import numpy as np
import scipy.sparse as sp

from leansvm import io
from leansvm.core.kernels import resolve_gamma
from leansvm.core.validation import allowed_share
from leansvm.job.candidates import (DEFAULT_SIZE_FRACTIONS, budget_route_sizes, compress_models,
                                    estimate_exact_seconds, exact_svc, estimate_fit_seconds, refine_budget_size,
                                    rows_within, scaled_fit_seconds, train_budget_models, train_exact)
from leansvm.job.choice import confirm_on_folds
from leansvm.job.context import JobContext
from leansvm.job.data import prepare_table, scale_features, scaling_name, summarize_data, validation_folds
from leansvm.job.deadline import (TEACHER_FREE_FROM, Deadline, exact_share_without_margin, lend_to_the_search,
                                  release_unaffordable_shares, say_bound_after_exact)
from leansvm.job.estimates import DEFAULT_CONFIDENCE, check_confidence
from leansvm.job.helpers import (_accuracy, _same_labels, _subsample, _timed, _int32_indices, thread_limited,
                                 hold_on_interrupt)
from leansvm.job.hyperparameters import (DEFAULT_C_GRID, DEFAULT_GAMMA_FACTORS, carry_C, screening_along_path,
                                         search_hyperparameters, select_hyperparameters)
from leansvm.job.measure import REFERENCE_MARGIN, TIMING_ROWS, libsvm_reference, measure_prediction_cost
from leansvm.job.pipeline import held_model, train_and_choose
from leansvm.job.records import LeanResult, Selection, JobLog
from leansvm.job.reduced import (continue_in_the_time_left, next_size_in_the_time_left, reduced_family, within_reach,
                                 teacher_free_size, train_reduced_models)
from leansvm.job.report import accuracy_cell, drop_cell, text_table
from leansvm.job.task_rules import ClassificationTask
from leansvm.progress import default_progress, progress_enabled

__all__ = ["fit_lean_classification", "format_table", "save_result_model"]


def _check_inputs(X, y):
    from sklearn.utils import check_X_y

    from sklearn.utils.multiclass import type_of_target

    X, y = check_X_y(X, y, accept_sparse="csr", dtype=np.float64)
    if type_of_target(y) == "continuous":
        raise ValueError(f"the classification job got labels that look like regression targets "
                         f"({np.unique(y).size} distinct non-integer values); leansvm.fit_lean (task='auto', "
                         "as `leansvm fit`) runs the regression job on them, or use leansvm.SVRCV / leansvm.SVR, "
                         "leansvm.BSGDRegressor, leansvm.compress")
    if np.unique(y).size < 2:
        raise ValueError("fit_lean needs samples of at least two classes")
    return X, y


def _prepare_data(X, y, X_test, y_test, target, impute, scale, log):
    """Stage 1: a table's columns encoded (:func:`prepare_table`) or a matrix scaled (:func:`scale_features`),
    inputs checked; returns (X, y, X_test, y_test, preprocessor or None, data summary)."""
    X, y, X_test, y_test, preprocessor = prepare_table(X, y, X_test, y_test, target, impute, log,
                                                       scaling_name(scale, labelled=True))
    X, y = _check_inputs(X, y)
    if preprocessor is None:
        X, X_test, preprocessor = scale_features(X, X_test, scale, log, y)
    summary = summarize_data(X, y, X_test, y_test)
    log.step("data", f"{summary['n_train']} samples x {summary['n_features']} features, "
                     f"{len(summary['classes'])} classes",
             ("sparse" if summary["sparse"] else "dense") + f"; test part: {summary['n_test'] or 'none'}")
    return X, y, X_test, y_test, preprocessor, summary


def _choose_hyperparameters(job, Cs, gammas, selection_size, n_folds, one_se) -> Selection:
    """Stage 3: (C, gamma) by the wide search, or on the grid ``Cs`` x ``gammas`` when either is given;
    then how much screening saves along C's path there (reported, not used for a choice)."""
    X_fit, random_state, log = job.X_fit, job.random_state, job.log
    X_sel, y_sel = _subsample(X_fit, job.y_fit, selection_size, random_state)
    if Cs is None and gammas is None:
        # every training row, as grid.py: the folds hold rows out (the validation part only
        # chooses among the models trained at this (C, gamma) later)
        if job.deadline.seconds is not None:
            _lend_to_the_search(job)
        selection = search_hyperparameters(job, selection_size, n_folds, one_se,
                                           time_limit=job.deadline.allowance("search"))
    else:
        scale = resolve_gamma("scale", X_fit)
        Cs = DEFAULT_C_GRID if Cs is None else Cs
        gammas = tuple(f * scale for f in DEFAULT_GAMMA_FACTORS) if gammas is None else gammas
        selection = select_hyperparameters(X_sel, y_sel, Cs, gammas, n_folds, random_state, log)
    C = selection.C
    selection.screening = screening_along_path(X_sel, y_sel, C / 2 ** 5, C * 2 ** 4, selection.gamma,
                                               random_state=random_state, log=log)
    return selection


def _lend_to_the_search(job) -> None:
    """Under a budget, the search's share follows the exact fit's cost (:func:`lend_to_the_search`),
    estimated at SVC()'s cell (C = 1, gamma = 'scale') before the search has chosen one."""
    X_fit, deadline = job.X_fit, job.deadline
    estimate = estimate_exact_seconds(X_fit, job.y_fit, 1.0, resolve_gamma("scale", X_fit), random_state=job.random_state,
                                      enough=exact_share_without_margin(deadline))[0]
    lend_to_the_search(deadline, estimate, job.log)


def _choose_route(job, C, gamma):
    """Stage 4: exact training, or budget training when the exact fit's estimated time exceeds the
    exact stage's share of the budget, and the teacher-free split of the budget
    (:meth:`Deadline.teacher_free`) where it exceeds ``TEACHER_FREE_FROM`` of all of it (without class
    weights: the reduced family has none); returns (route, (measured seconds, sample size,
    power) or None)."""
    X_fit, y_fit, deadline, log, class_weight = job.X_fit, job.y_fit, job.deadline, job.log, job.task.class_weight
    random_state = job.random_state
    if deadline.seconds is None:
        log.step("route", "exact training", "no time budget given", detail=True)
        return "exact", None
    estimated, measured, size, power = estimate_exact_seconds(X_fit, y_fit, C, gamma, random_state=random_state)
    allowed = deadline.allowance("exact")
    route = "exact" if estimated <= allowed else "budget"
    split = ""
    if estimated > TEACHER_FREE_FROM * deadline.seconds and class_weight is None:
        deadline.teacher_free()
        split = (f"; over {TEACHER_FREE_FROM:g} of the whole budget, so the exact model on a subsample gets "
                 f"{deadline.shares['exact']:.0%} of it and ReducedSVC, trained on every row without a teacher, "
                 f"{deadline.shares['reduced']:.0%}")
    log.step("route", f"{route} training",
             f"exact fit estimated at {estimated:.1f} s ({measured:.2f} s on {size} samples, "
             f"scaled by n^{power:.2f}) {'within' if route == 'exact' else 'over'} its share of the budget, "
             f"{allowed:.0f} of {deadline.seconds:g} s{split}")
    return route, (measured, size, power)


def _train_candidates(job, C, gamma, route, timing, size_fractions, candidates):
    """Stages 5-6, classification's ``train_candidates`` (:func:`~leansvm.job.pipeline.train_and_choose`):
    the exact model (on the budget route on the largest subsample estimated to fit the exact stage's
    share of the budget) and budget models at fractions of its size, then the shares the exact fit
    showed unaffordable released and the other families (:func:`_compress_reference`); appends each to
    ``candidates`` as it is trained and returns the exact model."""
    X_fit, y_fit, deadline, log, class_weight = job.X_fit, job.y_fit, job.deadline, job.log, job.task.class_weight
    random_state = job.random_state
    if route == "exact":
        exact = train_exact(X_fit, y_fit, C, gamma, random_state, class_weight)
        log.step("train", f"exact SVC: {exact.n_support} support vectors", f"IRWLS at C = {C:g}, gamma = {gamma:g}",
                 exact.fit_seconds)
        say_bound_after_exact(deadline, exact.fit_seconds, log)
        m = exact.n_support
        budgets = sorted({max(10, int(round(f * m))) for f in size_fractions if f * m < m})
    else:
        # the exact solver on the largest subsample estimated to fit the exact stage's share
        measured, size, power = timing
        allowed = deadline.allowance("exact")
        X_sub, y_sub = _subsample(X_fit, y_fit, rows_within(allowed, measured, size, power, X_fit.shape[0]),
                                  random_state)
        exact = train_exact(X_sub, y_sub, C, gamma, random_state, class_weight)
        exact.name = f"exact SVC ({X_sub.shape[0]} of {X_fit.shape[0]} samples)"
        log.step("train", f"{exact.name}: {exact.n_support} support vectors",
                 f"IRWLS at C = {C:g}, gamma = {gamma:g} on the largest subsample estimated to take "
                 f"{allowed:.0f} s (the exact stage's share of the budget); the reference for compression",
                 exact.fit_seconds)
        budgets = budget_route_sizes(exact.n_support, X_fit.shape[0], size_fractions)
    candidates += [exact]
    candidates += train_budget_models(job, C, gamma, budgets, time_limit=deadline.allowance("budget"))
    release_unaffordable_shares(deadline, exact.fit_seconds,
                                scaled_fit_seconds(exact.fit_seconds, job.X.shape[0], X_fit.shape[0]),
                                f"the exact SVC on all {job.X.shape[0]} rows", log)
    _compress_reference(job, exact, candidates, C, gamma, route == "budget")
    return exact


def _compress_reference(job, reference, candidates, C, gamma, refine):
    """Stage 6: every candidate validated and its drop against ``reference`` estimated; with
    ``refine`` (the budget route) one more budget size between the smallest qualifying one and the
    miss below it (:func:`refine_budget_size`); ReducedSVC from the small end below the smallest
    model that qualifies (:func:`train_reduced_models`), and where none qualified but the family came
    within reach of the target (:func:`within_reach`), its next size first, in compression's time; then
    compressed models of ``reference``
    below the smallest model that qualifies by then (:func:`compress_models`). Adds the models it
    trains to ``candidates`` as each family ends, so that a Ctrl-C finds them there (the job's held
    model, :func:`~leansvm.job.pipeline.held_model`).

    Only the budget route refines: there the budget models are the main family, trained on every
    row while the exact model, and so compression, sees a subsample."""
    task, deadline = job.task, job.deadline
    for c in candidates:
        task.validate(c, job.X_val)
    task.estimate(candidates, reference)

    def smallest_qualified():
        return min((c.n_support for c in candidates if c is not reference and task.within(c)), default=None)

    if refine:
        refined = refine_budget_size(job, candidates, reference, deadline.allowance("compress"))
        candidates += [refined] if refined is not None else []
    one_size = teacher_free_size(reference, task.n_classes, smallest_qualified()) if deadline.without_teacher else None
    candidates += train_reduced_models(job, reference, C, gamma, deadline.allowance("reduced"),
                                       below=smallest_qualified(), plan=one_size)
    if smallest_qualified() is None and not deadline.without_teacher and within_reach(task, reduced_family(candidates)):
        candidates += _next_reduced_size(job, candidates, reference, (C, gamma), "it came within reach of the target")
    # a compressed model is only worth trying below the smallest model that already qualifies
    candidates += compress_models(job, reference, time_limit=deadline.allowance("compress"),
                                  below=smallest_qualified())
    if smallest_qualified() is None and deadline.seconds is not None:
        if deadline.without_teacher:      # its one size trains on, rather than doubling
            family = reduced_family(candidates)
            candidates += continue_in_the_time_left(job, family[-1] if family else None, reference,
                                                    deadline.allowance("compress"))
        else:
            candidates += _next_reduced_size(job, candidates, reference, (C, gamma),
                                             "nothing qualified and the stages stopped for lack of time")


def _next_reduced_size(job, candidates, reference, params, why) -> list:
    """The reduced family's next doubling (:func:`next_size_in_the_time_left`) in the time compression's
    allowance holds, ``why`` in the log; [] where there is none to try."""
    left = job.deadline.allowance("compress")
    sizes = next_size_in_the_time_left(job.task, reduced_family(candidates), reference, left)
    if not sizes:
        return []
    return train_reduced_models(job, reference, *params, left, plan=dict(
        sizes=sizes, why=f"the next size in the {left:.0f} s the budget has left: {why}"))


def _compressed_sizes_up(job, candidates, reference, make_exact, time_limit, fold_references=None):
    """After the confirming folds refuted every model the validation part had accepted: the compressed
    model one doubling above the largest compressed one tried, validated, and confirmed on the folds on
    its own; again one doubling up while the validation part accepts and the folds refute, under the exact
    model's size and within ``time_limit`` seconds; the folds' exact models are the first confirmation's
    (``fold_references``), not trained again. Returns the accepted model, or ``reference``.
    Compression stops at its first size that reaches the target on the validation part, so a refuted hit
    left no larger compressed model: satimage seed 0 (120 vectors accepted, refuted on the folds) and
    letter seed 1 returned the exact model."""
    start, task, log = job.clock(), job.task, job.log
    while True:
        size = 2 * max((c.n_support for c in candidates if c.kind == "compressed"), default=reference.n_support)
        left = None if time_limit is None else time_limit - (job.clock() - start)
        if size >= reference.n_support or (left is not None and left <= 0):
            return reference
        log.say(f"  every model the validation part accepted was refuted: compression one size up, {size} vectors")
        new = compress_models(job, reference, first_fraction=size / reference.n_support, time_limit=left,
                              below=size + 1)
        candidates += new
        if not any(task.within(c) for c in new):
            return reference
        left = None if time_limit is None else max(time_limit - (job.clock() - start), 0.0)
        chosen = confirm_on_folds(job, new, reference, make_exact, left, fold_references)
        if chosen is not None and chosen is not reference:
            return chosen


def _measure(job, candidates, X_test, y_test, C, gamma, libsvm_reference_model):
    """Stage 9, measurements never used for a choice: test accuracy, LIBSVM's full model at the same
    (C, gamma) and the prediction cost of every model; returns LIBSVM's (seconds per 1000
    predictions, #SV, test accuracy), None where not measured."""
    X_fit, y_fit, deadline, log, class_weight = job.X_fit, job.y_fit, job.deadline, job.log, job.task.class_weight
    X_measure = X_test if X_test is not None else job.X_val
    if X_test is not None:
        for c in candidates:
            c.test_accuracy = _accuracy(c.model, X_test, y_test)
    X_timing = X_measure[:TIMING_ROWS]
    libsvm_model = libsvm_n_sv = libsvm_acc = libsvm_estimate = None
    allowed = deadline.allowance("measure")
    if libsvm_reference_model and allowed is not None:
        from sklearn.svm import SVC as LibsvmSVC
        libsvm_estimate, _, _, _ = estimate_fit_seconds(lambda: LibsvmSVC(C=C, gamma=gamma, class_weight=class_weight),
                                                        X_fit, y_fit, random_state=job.random_state,
                                                        enough=allowed / REFERENCE_MARGIN)
    if libsvm_reference_model and (libsvm_estimate is None or REFERENCE_MARGIN * libsvm_estimate <= allowed):
        start = job.clock()
        (libsvm_model, _), libsvm_fit = _timed(libsvm_reference, X_fit, y_fit, C, gamma, class_weight)
        libsvm_n_sv = int(libsvm_model.n_support_.sum())
        X_timing, tested = _libsvm_rows(libsvm_model, X_timing, X_test, None if allowed is None else
                                        allowed - (job.clock() - start))
        if tested:
            libsvm_acc = float(np.mean(_same_labels(libsvm_model.predict(_int32_indices(X_test)), y_test)))
        log.step("reference", f"LIBSVM (scikit-learn SVC): {libsvm_n_sv} support vectors",
                 "the full model at the same C and gamma, for test-time cost"
                 + ("" if tested or X_test is None else "; not tested: its predictions would pass the time budget"),
                 libsvm_fit)
    elif libsvm_reference_model:
        log.step("reference", "LIBSVM full model not trained",
                 f"{REFERENCE_MARGIN:g} times its estimated training time ({libsvm_estimate:.0f} s) exceeds what "
                 f"is left of the time budget ({allowed:.0f} s)")
    libsvm_seconds = measure_prediction_cost(candidates, X_timing, libsvm_model)
    log.step("measure", f"prediction cost on {X_timing.shape[0]} rows",
             "best of 5 runs, seconds per 1000 predictions (machine shared: ratios, not absolutes)")
    return libsvm_seconds, libsvm_n_sv, libsvm_acc


def _libsvm_rows(libsvm_model, X_timing, X_test, seconds):
    """(rows to time every model's prediction on, whether LIBSVM's full model is tested) within ``seconds``
    (None: no limit): its prediction, one row block timed, scaled to the test part and the timing runs
    (5 x ``X_timing``). On pixels-60k (784 columns, 21,000 vectors) they took minutes past a 600-s budget."""
    if seconds is None:
        return X_timing, X_test is not None
    probe = X_timing[:200]
    _, probe_seconds = _timed(libsvm_model.predict, _int32_indices(probe))
    per_row = probe_seconds / max(probe.shape[0], 1)
    test_seconds = 0.0 if X_test is None else per_row * X_test.shape[0]
    tested = X_test is not None and test_seconds + 5 * per_row * X_timing.shape[0] <= seconds
    rows = int((seconds - (test_seconds if tested else 0.0)) / max(5 * per_row, 1e-12))
    return X_timing[:max(probe.shape[0], min(rows, X_timing.shape[0]))], tested


@thread_limited
def fit_lean_classification(X, y=None, *, X_test=None, y_test=None, target=None, impute=None, scale=True, max_accuracy_drop=0.005,
             budget_seconds=None, Cs=None, gammas=None, n_folds=5, validation_fraction=0.2, selection_size=4000,
             one_se=0.0, class_weight=None,
             size_fractions=DEFAULT_SIZE_FRACTIONS, compression_points=20000, libsvm_reference_model=True,
             random_state=0, verbose=False, progress=None, confidence=DEFAULT_CONFIDENCE, refit=True,
             confirm=True) -> LeanResult:
    """From data to the cheapest classifier whose accuracy is within ``max_accuracy_drop`` of the exact model's.

    The stages are in the module docstring; each appends a :class:`~leansvm.job.records.Step` to the
    log that ``verbose`` prints and the HTML report shows.

    Parameters
    ----------
    X : array-like, sparse matrix or pandas DataFrame
        Training rows. A DataFrame of raw columns (numeric, categorical, missing values with
        ``impute``) is encoded by :func:`~leansvm.job.data.prepare_table`; a matrix is scaled as
        svm-scale does (``scale``). Either way the returned model is a ``Pipeline`` that takes raw rows.
    y : array-like, optional
        Labels (or the DataFrame's ``target`` column).
    X_test, y_test : optional
        Only measured, never used for a choice.
    target : str, optional
        The label column of a DataFrame.
    impute : {'median', 'most_frequent'}, optional
        Fill a table's missing values (default: a missing value is an error).
    scale : bool or {'auto', 'range', 'standard', 'max-abs', 'none'}, default=True
        How features (a table's encoded columns too) are scaled, fitted on the training rows and kept
        with the model: True is 'auto', svm-scale's ranges or z-scores by the search's first round
        (:func:`~leansvm.job.data.choose_scaling`); 'range' is svm-scale's
        (:mod:`leansvm.preprocessing.scaling`); False is 'none'. The same numbers as an array, a
        sparse matrix or a table scale alike.
    max_accuracy_drop : float or str, default=0.005
        Allowed accuracy drop against the exact model: a fraction (0.005: half a point) or a
        percentage ('0.5%'), as ``--max-accuracy-drop`` takes it.
    budget_seconds : float, optional
        A bound on the whole call: each stage gets a share (:mod:`leansvm.job.deadline`) and does
        less to fit it; above its share the exact model is fitted on a subsample. None: the budget models,
        compression and confirming folds share a multiple of the time until the exact model
        (``Deadline.bound_after_exact``).
    Cs, gammas : sequences, optional
        A grid instead of the wide search (C 2^-5..2^15, gamma 2^-12..2^6 x 'scale', successive halving
        up to ``selection_size`` rows, ``n_folds``-fold CV; :mod:`leansvm.paths.search`).
    n_folds : int, default=5
        Folds of the (C, gamma) search.
    validation_fraction : float, default=0.2
        The validation part; its inverse is the number of folds :func:`confirm_on_folds` may pool.
    selection_size : int, default=4000
        Rows of the search's last halving round (its closing race of the best cells and SVC()'s
        default gamma: twice as many).
    one_se : float, default=0
        > 0: the fewest support vectors within that many standard errors of the best cell (on
        magic it moved to C = 2^15 and an exact fit of 144 s instead of 3 s: not the default).
    class_weight : dict or 'balanced', optional
        C per class in the search, the exact models and LIBSVM's reference.
    size_fractions : sequence of float
        Budget models' sizes as fractions of the exact model's support vectors.
    compression_points : int, default=20000
        The fewest training rows a compressed model is fitted on (4 per vector and 3 per parameter
        beyond; 8,000 rather than 2,000 took a9a from no qualifying compressed model to 115 SV).
    libsvm_reference_model : bool, default=True
        Train LIBSVM's full model at the same (C, gamma) for the prediction-cost comparison.
    random_state : int, default=0
        Seed of the splits, subsamples and stochastic trainers.
    verbose : bool or int, default=False
        True (1): one line per stage, what it decided and its seconds; 2: the reasons and the models
        tried too (:class:`~leansvm.job.records.JobLog`).
    progress : bool, optional
        Progress bars of the long operations (None: when ``verbose`` or on a terminal).
    confidence : float, default=0.95
        A candidate qualifies when the one-sided ``confidence`` bound of its accuracy drop against
        the exact model, paired row by row, is within ``max_accuracy_drop``
        (:mod:`leansvm.job.estimates`).
    refit : bool, default=True
        Return the chosen kind and size trained again on all rows (budget models too); False
        returns the validated model.
    n_jobs : int, default=-1
        Threads for everything the job runs (joblib's meaning: -1 every core, -2 all but one), as
        ``--n-jobs``.
    confirm : bool, default=True
        Pool the other folds (both models trained again without each) before a candidate is taken
        (exact route). With one hold-out and the best candidate as the reference, a BSGD model 0.2
        points above the exact one on 865 validation rows tested 2.9 points below it.

    Returns
    -------
    LeanResult
        ``model`` (the returned estimator), ``chosen``, ``final``, every candidate with its drop
        estimate, the selection, the steps. Ctrl-C before any model cheaper than the exact one was
        accepted stops it with a line naming the last finished step (``KeyboardInterrupt``
        propagates); after, it returns the cheapest model accepted so far, as validated, with the
        interrupt in ``interrupted``.
    """
    max_accuracy_drop = allowed_share("max_accuracy_drop", max_accuracy_drop)
    check_confidence(confidence)
    log = JobLog(verbose)
    start = log.clock()
    deadline = Deadline(budget_seconds, clock=log.clock)     # one clock for the budget and the log
    candidates, stages, selection, route, summary, preprocessor, task = [], None, None, None, None, None, None

    def result(held, reference, **fields) -> LeanResult:
        model = held.model if preprocessor is None else io.with_preprocessing(preprocessor, held.model)
        log.flush()
        params = {} if selection is None else {"C": selection.fit_C, "gamma": selection.gamma}
        return LeanResult(model, fields.pop("chosen", held), candidates, selection, route, log.steps, summary,
                          max_accuracy_drop, classes=np.unique(y), seconds=log.clock() - start, final=held,
                          preprocessing=None if preprocessor is None else preprocessor.describe(),
                          confidence=confidence, reference=reference, params=params, **fields)

    try:
        with default_progress(progress_enabled(True if progress is None and verbose else progress)):
            X, y, X_test, y_test, preprocessor, summary = _prepare_data(X, y, X_test, y_test, target, impute, scale,
                                                                        log)
            folds = validation_folds(X, y, validation_fraction, random_state)
            task = ClassificationTask(y[folds[0][1]], max_accuracy_drop, confidence, class_weight, np.unique(y).size)
            job = JobContext(X, y, folds, task, deadline, log, random_state, compression_points)
            X_fit, y_fit = job.X_fit, job.y_fit
            log.step("split", f"{X_fit.shape[0]} for training, {job.X_val.shape[0]} for validation",
                     f"stratified hold-out of {100 * validation_fraction:g}% for choosing among models")
            selection = _choose_hyperparameters(job, Cs, gammas, selection_size, n_folds, one_se)
            C, gamma = selection.C, selection.gamma
            if selection.search is not None:      # the wide search's C, chosen on its rows
                C = carry_C(job, lambda c: exact_svc(c, gamma, random_state, class_weight), C, selection.n_samples,
                            deadline.allowance("search") if deadline.seconds is not None else selection.search.seconds)
                selection.carried_C = C
            route, timing = _choose_route(job, C, gamma)
            confirm = confirm and route == "exact"
            if not confirm:
                deadline.skip("confirm")
            stages = train_and_choose(job, partial(exact_svc, C, gamma, random_state, class_weight),
                                      partial(_train_candidates, job, C, gamma, route, timing, size_fractions),
                                      candidates, refit=refit, confirm=confirm, sizes_up=_compressed_sizes_up)
            if stages.interrupted is not None:
                return result(stages.chosen, stages.reference, interrupted=stages.interrupted)
            final = stages.refit or stages.chosen
            libsvm = _measure(job, candidates, X_test, y_test, C, gamma, libsvm_reference_model)
            if budget_seconds is not None and deadline.elapsed() > budget_seconds:
                warnings.warn(f"leansvm fit took {deadline.elapsed():.0f} s, over the budget of {budget_seconds:g} s "
                              f"(no stage could be cut further); the model returned is {final.name}, the best "
                              "found in that time", RuntimeWarning, stacklevel=2)
            data_2d = None
            if X.shape[1] == 2:
                data_2d = (X_fit.toarray() if sp.issparse(X_fit) else X_fit, y_fit)
            return result(final, stages.reference, chosen=stages.chosen, libsvm_seconds_per_1000=libsvm[0],
                          libsvm_n_support=libsvm[1], libsvm_test_accuracy=libsvm[2], data_2d=data_2d)
    except KeyboardInterrupt as exc:        # outside the stages that hold their own (the data, the search, measuring)
        held = None if task is None else held_model(task, candidates, None if stages is None else stages.chosen)
        hold_on_interrupt(exc, start, log, held)
        if held is None:
            raise
        return result(held, None if stages is None else stages.reference, interrupted=exc)


def format_table(result: LeanResult, every_model: bool = True) -> str:
    """The final table of any task's result (a regression or novelty job's:
    :func:`~leansvm.job.one_output.format_one_output_table`); classification: model, vectors,
    validation / test accuracy, the drop's estimate, prediction cost against LIBSVM. ``every_model``
    False keeps the exact and the returned models (the command's default, within its log's 100
    columns; -v and the report show every candidate)."""
    if result.task != "classification":
        from leansvm.job.one_output import format_one_output_table
        return format_one_output_table(result, every_model)
    rows = [("model", "#SV", "val acc", f"drop vs {result.reference_name()}", "test acc", "ms/1k", "vs LIBSVM")]
    lib = result.libsvm_seconds_per_1000
    shown = [c for c in result.candidates if every_model or c.kind == "exact" or c is result.final
             or c is result.reference]
    for c in sorted(shown, key=lambda c: (c.kind != "exact", c.kind == "refit", c.n_support)):
        mark = " *" if c is result.chosen else (" **" if c is result.final else "")
        name = c.name if every_model or c.kind != "refit" else f"{result.chosen.name}, refit"
        rows.append((name + mark, str(c.n_support), accuracy_cell(c.validation_accuracy), drop_cell(c.drop),
                     accuracy_cell(c.test_accuracy),
                     f"{1000 * c.seconds_per_1000:.2f}",
                     "-" if lib is None else f"{lib / c.seconds_per_1000:.1f}x"))
    if lib is not None:
        rows.append(("LIBSVM (sklearn SVC)", str(result.libsvm_n_support), "-", "-",
                     accuracy_cell(result.libsvm_test_accuracy),
                     f"{1000 * lib:.2f}", "1.0x"))
    lines = text_table(rows)
    legend = ["* chosen on validation rows"] if result.chosen in shown else []
    if result.final is not result.chosen:
        legend.append(f"** returned: refit on all {result.summary.get('n_train', 'the')} rows")
    left_out = len(result.candidates) - len(shown)
    if left_out:
        legend.append(f"{left_out} more with -v")
    return "\n".join(lines + ["(" + "; ".join(legend) + ")"] if legend else lines)


def save_result_model(result: LeanResult, path) -> str:
    """Write the chosen model: LIBSVM file when it can hold it, else native ``.npz``; returns the path used."""
    import os
    import textwrap

    path = os.fspath(path)
    if path.lower().endswith(".npz"):
        io.save_model(result.model, path)
        return path
    try:
        io.save_libsvm_model(result.model, path)
        return path
    except ValueError as exc:  # string labels, one-vs-rest multi-class: LIBSVM cannot hold it
        native = path + ".npz"
        io.save_model(result.model, native)
        print(textwrap.fill(f"note: wrote leansvm's native format to {native}: a LIBSVM model file cannot "
                            f"hold this model ({exc})", 100, subsequent_indent="  "), file=sys.stderr)
        return native
