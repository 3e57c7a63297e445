r"""Regularisation paths and cross-validated (C, gamma) selection with safe screening.

``svm_path(X, y, Cs, ...)`` fits one model per C from the smallest C to the
largest: every binary problem (one-vs-one pairs for more than two classes)
runs :func:`leansvm.paths.binary_path.binary_path`, i.e. an exact solver (greedy
coordinate descent on the box QP by default, or IRWLS) warm-started from
the previous C with the samples a safe rule (BT1, BT2 or IT of Ogawa et al.)
proves to be non-SVs held at their bound. Per C it reports the screening rate
(screened samples / non-SVs of the solution, summed over the binary
problems), the rule time and the solve time.

``SVCCV`` selects (C, gamma) by K-fold cross-validation: each (gamma, fold)
task is one screened path over the whole C grid, tasks run in parallel joblib
workers, and the best pair is refitted on all data.

Formulation. ``fit_intercept=True`` is the paper's SVM with the bias as an
augmented constant feature (kernel k + 1; the bias is regularised, as in
liblinear), the setting in which the rules are proven. ``fit_intercept=False``
drops the bias. ``fit_intercept="equality"`` is LIBSVM's unregularised bias
(y'a = 0); no safe rule of the paper covers it, so it needs ``screening=None``
(warm start only). The fitted models are :class:`leansvm.SVC` objects whose
expansion is the path's solution (``bias_`` records the formulation).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils.validation import check_is_fitted

from leansvm.core.classifier import KernelClassifierMixin
from leansvm.core.validation import check_int, per_sample_C, validate_training_data
from leansvm.core.problems import c_svc
from leansvm.exact.svc import SVC
from leansvm.core.kernels import Kernel
from leansvm.core.multiclass import fit_ovo
from leansvm.progress import Progress
from leansvm.core.threads import effective_jobs
from leansvm.exact.irwls import DEFAULT_WORKING_SET
from leansvm.paths.binary_path import (BIAS_MODES, binary_path, check_grid, check_screening, iter_binary_path,
                                       row_cache)

__all__ = ["svm_path", "SVMPath", "SVCCV", "default_C_grid", "svc_from_solution"]


#: below this many samples the path's kernel blocks run on one BLAS thread
SMALL_PROBLEM = 10_000


def _blas_threads(n_samples):
    """One BLAS thread for small problems: their kernel blocks are too small for threads to pay
    (a 455 x 455 RBF block, wdbc: 18.5 ms on 2 threads vs 3.8 ms on 1, 2 cores at load 7)."""
    from contextlib import nullcontext

    from leansvm.core.threads import one_blas_thread
    return one_blas_thread() if n_samples < SMALL_PROBLEM else nullcontext()


def default_C_grid(n: int = 20, low: float = 1e-2, high: float = 1e2) -> np.ndarray:
    """``n`` log-spaced values from ``low`` to ``high`` (by default the 20 values that the path
    benchmarks use, docs/methods/screening-paths.md)."""
    return np.logspace(np.log10(low), np.log10(high), n)


def _bias_mode(fit_intercept) -> str:
    if fit_intercept is True:
        return "augmented"
    if fit_intercept is False:
        return "none"
    if fit_intercept in BIAS_MODES:
        return fit_intercept
    raise ValueError(f"fit_intercept must be True, False or one of {BIAS_MODES}, got {fit_intercept!r}")


@dataclass
class SVMPath:
    """The fitted models of a path and, per C, what screening bought."""

    Cs: np.ndarray
    models: list
    screening: str | None
    n_screened: np.ndarray          # per C, summed over binary problems
    n_non_sv: np.ndarray
    rule_seconds: np.ndarray
    solve_seconds: np.ndarray
    n_support: np.ndarray
    dual_objectives: list           # per C: one per binary problem (of the problem solved)
    binary_points: list = field(default_factory=list)   # per binary problem: list of PathPoint

    @property
    def screening_rate(self) -> np.ndarray:
        """Screened samples / non-SVs at the solution, per C (the paper's rate)."""
        return np.divide(self.n_screened, np.maximum(self.n_non_sv, 1))

    def table(self) -> list[dict]:
        return [{"C": float(C), "n_support": int(m), "screening_rate": float(r),
                 "rule_seconds": float(t_r), "solve_seconds": float(t_s)}
                for C, m, r, t_r, t_s in zip(self.Cs, self.n_support, self.screening_rate,
                                             self.rule_seconds, self.solve_seconds)]


def _pair_problems(y_enc, n_classes):
    """(indices, +1/-1 labels) of every one-vs-one problem, LIBSVM's pair order."""
    from leansvm.core.multiclass import ovo_pairs
    out = []
    for i, j in ovo_pairs(n_classes):
        idx = np.flatnonzero((y_enc == i) | (y_enc == j))
        out.append((idx, np.where(y_enc[idx] == i, 1.0, -1.0)))
    return out


def _run_paths(X, y_enc, n_classes, weights, Cs, kernel, screening, bias, tol, trivial_start,
               solver, solver_options, n_jobs, callback=None, kernel_cache=None, dynamic=False):
    """One binary path per one-vs-one pair. Run one after the other, the pairs share one kernel
    row cache (``kernel_cache`` = (PathKernelCache, global row of each sample of X), or one built
    here); in threads (``n_jobs`` > 1) each pair keeps its own."""
    problems = _pair_problems(y_enc, n_classes)
    sequential = n_jobs in (None, 1) or len(problems) == 1
    if sequential and kernel_cache is None:         # CD and IRWLS both read the shared rows
        kernel_cache = (row_cache(kernel, X, solver_options["cache_size"], tol), np.arange(y_enc.size))

    def one(idx, y_pm):
        shared = {} if kernel_cache is None or not sequential else {
            "cache": kernel_cache[0], "index": kernel_cache[1][idx]}
        return binary_path(X[idx], c_svc(y_pm, weights[idx]), Cs, kernel, screening=screening,
                           bias=bias, tol=tol, trivial_start=trivial_start, solver=solver,
                           solver_options=solver_options, callback=callback, dynamic=dynamic, **shared)

    if sequential:
        return problems, [one(idx, y_pm) for idx, y_pm in problems]
    return problems, Parallel(n_jobs=effective_jobs(n_jobs), prefer="threads")(
        delayed(one)(idx, y_pm) for idx, y_pm in problems)


def svc_from_solution(result, classes, C, params, bias="augmented", n_features=None) -> SVC:
    """A fitted :class:`leansvm.SVC` holding a solution computed elsewhere (a path's, a ``MulticlassFit``).

    The fitted attributes come from :meth:`SVC.from_multiclass_fit`; in addition
    ``n_features_in_`` and ``bias_`` (the formulation: 'augmented', 'none' or
    'equality'). ``params``: SVC constructor parameters.
    """
    model = SVC.from_multiclass_fit(result, classes, C=float(C), **params)
    if n_features is not None:
        model.n_features_in_ = int(n_features)
    model.bias_ = bias
    return model


def _model_at(k, C, X, y_enc, classes, weights, kernel, pair_points, bias, params):
    """An SVC holding the path's solution at the k-th C (one-vs-one pooling of ``multiclass``)."""
    fits = iter([points[k].fit for points in pair_points])

    def stored_fit(Xb, yb, Cb):
        return next(fits)

    result = fit_ovo(X, y_enc, classes.size, stored_fit, C * weights, kernel)
    return svc_from_solution(result, classes, C, params, bias, X.shape[1])


def svm_path(X, y, Cs=None, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
             screening="it", fit_intercept=True, tol=1e-3, class_weight=None, sample_weight=None,
             trivial_start=False, solver="auto", cache_size=200.0, working_set_size=None,
             max_iter=-1,
             random_state=0, n_jobs=None, progress=None, kernel_cache=None, dynamic=False,
             build_models=True) -> SVMPath:
    """Fit an SVM for every C of ``Cs`` (ascending) with warm start and safe screening.

    ``screening``: 'it' (Intersection Test, the strongest), 'bt1' (DVI),
    'bt2', 'gap' (duality-gap ball, our addition, valid for every
    ``fit_intercept``) or None. ``fit_intercept``: True (augmented bias, the paper's
    formulation), False, or 'equality' (LIBSVM's; screening 'gap' or None).
    ``dynamic``: also screen during each solve with the gap rule (solver
    stages at 100 tol and 10 tol; :func:`leansvm.paths.binary_path.binary_path`).
    ``build_models=False`` skips the SVC objects (``models`` empty; the
    solutions stay in ``binary_points``), as :class:`SVCCV` scores from them.
    ``solver``: 'cd' (greedy coordinate descent on the box QP, LIBSVM-like
    cost per step, only the unscreened samples, on the shared kernel rows),
    'irwls' (the exact IRWLS solver with samples fixed at their bounds) or
    'auto' (CD, handing over to IRWLS for the rest of the path once a CD solve costs more than
    IRWLS is expected to, by a cost model on step and chunk counts); 'equality' always uses IRWLS.
    ``working_set_size``: IRWLS's working set (None: 512 from 10,000 samples, IRWLS's 128 below).
    Returns an :class:`SVMPath` (models, per-C screening rate, rule and solve
    seconds, #SV, dual objectives). ``progress``: a bar with the time left over
    the (C, binary problem) fits; None shows it on a terminal (:mod:`leansvm.progress`).

    Kernel reuse: at fixed kernel the matrix never changes along the path, so
    (solver 'cd') every kernel row is computed once, into one cache of
    ``cache_size`` MB (float32 rows when tol >= 1e-4) shared by every C and
    every one-vs-one pair. ``kernel_cache``: (PathKernelCache, row of each
    sample of X in it) to share a cache with other paths, e.g. the folds of
    :class:`SVCCV` (X must then hold exactly those rows of the cache's data). An IRWLS solve on
    the path keeps a cache of up to ``cache_size`` MB of its own (its active columns), so a path
    takes up to twice ``cache_size``.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Training rows.
    y : array-like of shape (n_samples,)
        Class labels.
    Cs : array-like
        The values of C, ascending.
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'} or callable, default='rbf'
        The kernel, with LIBSVM's meanings of ``gamma``, ``degree`` and ``coef0``.
    gamma : {'scale', 'auto'} or float, default='scale'
        Kernel coefficient; 'scale' is 1 / (n_features X.var()), as scikit-learn.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.0
        Independent term of the polynomial and sigmoid kernels.
    screening : str or None, default='it'
        The safe rule: 'it', 'bt1', 'bt2' (Ogawa et al.) or 'gap' (a duality-gap ball); None: warm starts only.
    fit_intercept : bool or 'equality', default=True
        True: the augmented bias of the paper; False: none; 'equality': LIBSVM's.
    tol : float, default=1e-3
        Stopping tolerance on the maximal KKT violation (LIBSVM's eps).
    class_weight : dict or 'balanced', default=None
        Accepted for scikit-learn compatibility; nu-SVC ignores it with a warning, as LIBSVM.
    sample_weight : array-like, optional
        Per-sample factor of the bounds C_i.
    trivial_start : bool, default=False
        Start the path at the trivial solution of a very small C.
    solver : {'auto', 'cd', 'irwls'}, default='auto'
        Coordinate descent on the shared kernel rows, IRWLS, or CD handing over to IRWLS by a cost model.
    cache_size : float, default=200
        Kernel row cache in MB.
    working_set_size : int, optional
        IRWLS's working set.
    max_iter : int, default=-1
        Bound on the coordinate-descent epochs per C.
    random_state : int, default=0
        Seed of the solvers.
    n_jobs : int, optional
        Binary problems in parallel threads.
    progress : bool, optional
        A bar with the time left (None: on a terminal).
    kernel_cache : tuple, optional
        (PathKernelCache, row of each sample in it): a cache shared with other paths.
    dynamic : bool, default=False
        Also screen during each solve with the gap rule.
    build_models : bool, default=True
        Build an SVC per C (False: the solutions stay in ``binary_points``).

    Returns
    -------
    SVMPath
        ``models`` (an SVC per C), ``Cs``, ``n_support``, ``screening_rate`` (share of the non-support vectors the rule removed before each solve), ``rule_seconds``, ``solve_seconds``, the dual objectives.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from leansvm import svm_path
    >>> X, y = make_moons(200, noise=0.2, random_state=0)
    >>> path = svm_path(X, y, [0.1, 1.0, 10.0], gamma=1.0)
    >>> len(path.models), [round(float(m.score(X, y)), 2) > 0.8 for m in path.models]
    (3, [True, True, True])
    """
    Cs = default_C_grid() if Cs is None else check_grid(Cs)
    bias = _bias_mode(fit_intercept)
    check_screening(screening, bias)
    holder = SVC(kernel=kernel, gamma=gamma, degree=degree, coef0=coef0)
    X, classes, y_enc, sample_weight = validate_training_data(holder, X, y, sample_weight)
    weights = per_sample_C(1.0, class_weight, classes, y_enc, sample_weight)
    if np.any(weights <= 0):
        raise ValueError("svm_path needs positive class and sample weights")
    return _fit_path(X, classes, y_enc, weights, Cs, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                     screening=screening, bias=bias, tol=tol, class_weight=class_weight,
                     trivial_start=trivial_start, solver=solver, cache_size=cache_size,
                     working_set_size=working_set_size, max_iter=max_iter, random_state=random_state,
                     n_jobs=n_jobs, progress=progress, kernel_cache=kernel_cache, dynamic=dynamic,
                     build_models=build_models)


def _fit_path(X, classes, y_enc, weights, Cs, *, kernel, gamma, degree, coef0, screening, bias, tol,
              class_weight, trivial_start, solver, cache_size, working_set_size, max_iter, random_state,
              n_jobs, progress, kernel_cache, dynamic, build_models) -> SVMPath:
    """:func:`svm_path` on validated data (X checked, labels encoded, per-sample weights, grid checked):
    the folds of :class:`SVCCV` come here directly, their data checked once by ``SVCCV.fit``."""
    if working_set_size is not None:
        check_int("working_set_size", working_set_size, 2)
    kern = Kernel.from_params(kernel, gamma, degree, coef0, X)
    if kernel_cache is not None and kernel_cache[0].kernel != kern:
        kernel_cache = None      # e.g. gamma='scale' resolved on this part of the data: rows differ
    options = {"cache_size": cache_size, "working_set_size": working_set_size,
               "max_iter": max_iter, "random_state": random_state}
    n_fits = Cs.size * classes.size * (classes.size - 1) // 2
    with Progress(n_fits, "svm path", "fits", progress) as bar, _blas_threads(X.shape[0]):
        problems, pair_points = _run_paths(X, y_enc, classes.size, weights, Cs, kern, screening, bias,
                                           tol, trivial_start, solver, options, n_jobs,
                                           callback=lambda C: bar.update(), kernel_cache=kernel_cache,
                                           dynamic=dynamic)
    params = {"kernel": kernel, "gamma": kern.gamma, "degree": degree, "coef0": coef0, "tol": tol,
              "cache_size": cache_size, "class_weight": class_weight,
              "working_set_size": DEFAULT_WORKING_SET if working_set_size is None else working_set_size,
              "max_iter": max_iter, "random_state": random_state}
    models = [_model_at(k, C, X, y_enc, classes, weights, kern, pair_points, bias, params)
              for k, C in enumerate(Cs)] if build_models else []
    # #SV: samples with a_i > 0 in any binary problem (the shared one-vs-one pool)
    n_support = [np.unique(np.concatenate([idx[points[k].fit.alpha > 0] for (idx, _), points
                                           in zip(problems, pair_points)])).size for k in range(Cs.size)]

    def total(attr):
        return np.array([sum(getattr(points[k], attr) for points in pair_points) for k in range(Cs.size)])

    return SVMPath(
        Cs=Cs, models=models, screening=screening,
        n_screened=total("n_screened"), n_non_sv=total("n_non_sv"),
        rule_seconds=total("rule_seconds"), solve_seconds=total("solve_seconds"),
        n_support=np.array(n_support),
        dual_objectives=[np.array([points[k].fit.dual_objective for points in pair_points])
                         for k in range(Cs.size)],
        binary_points=pair_points,
    )


# -- cross-validation --------------------------------------------------------------------
def fold_labels(y, train, test):
    """(classes, one-vs-one problems of the training part, class index of each test label or -1)."""
    classes, y_enc = np.unique(y[train], return_inverse=True)
    pos = np.searchsorted(classes, y[test])
    known = (pos < classes.size) & (classes[np.minimum(pos, classes.size - 1)] == y[test])
    return classes, _pair_problems(y_enc, classes.size), np.where(known, pos, -1)


def fold_paths(X, train, problems, weights, Cs, cache, *, screening, tol, cache_size, random_state,
               bias="augmented", starts=None) -> list:
    """One fold's warm-started C paths, one :func:`~leansvm.paths.binary_path.iter_binary_path` per
    one-vs-one problem of :func:`fold_labels` (its rows ``train[idx]``, C factors ``weights`` of
    those rows), on the shared kernel rows of ``cache`` (built on all of X); ``starts``: a
    ``PathPoint`` per problem to go on from (None: cold). ``cache_size``: the solvers' own (IRWLS's) MB."""
    options = {"cache_size": cache_size, "max_iter": -1, "working_set_size": None,
               "random_state": random_state}
    rows = [np.asarray(train)[idx] for idx, _ in problems]
    starts = [None] * len(rows) if starts is None else starts
    return [iter_binary_path(X[r], c_svc(y_pm, weights[r]), Cs, cache.kernel, screening=screening, bias=bias,
                             tol=tol, solver="auto", solver_options=options, cache=cache, index=r, start=point)
            for r, (_, y_pm), point in zip(rows, problems, starts)]


def cached_accuracy(cache, train, test, problems, fits, y_test, n_classes) -> float:
    """Accuracy on ``test`` of one-vs-one binary ``fits`` (one per problem of :func:`fold_labels`)
    from the shared kernel rows (no kernel evaluation when the SV rows are cached: they span all
    of X, the test part included): votes of f_p(x) = sum_j coef_j k(x_j, x) + b_p, ties to the
    lowest class (LIBSVM's rule)."""
    from leansvm.core.multiclass import ovo_votes
    rows, cols = np.asarray(train), np.asarray(test)
    decision = np.empty((cols.size, len(problems)))
    for p, ((idx, y_pm), fit) in enumerate(zip(problems, fits)):
        sv = np.flatnonzero(fit.alpha > 0)
        decision[:, p] = cache.outputs(rows[idx[sv]], y_pm[sv] * fit.alpha[sv], cols) + fit.intercept
    return float(np.mean(np.argmax(ovo_votes(decision, n_classes), axis=1) == y_test))


def _cached_accuracy(path, cache, train, test, y):
    """Accuracy on ``test`` at every C of ``path`` (:func:`cached_accuracy`)."""
    classes, problems, y_test = fold_labels(y, train, test)
    return np.array([cached_accuracy(cache, train, test, problems, [points[k].fit for points in path.binary_points],
                                     y_test, classes.size) for k in range(path.Cs.size)])


def _score_path(X, y, train, test, Cs, gamma, scoring, path_options, kernel_cache=None):
    """One (gamma, fold) task: a path on the training part, one score per C on the test part.

    With a shared kernel cache and accuracy scoring the test outputs come from its rows
    (:func:`_cached_accuracy`); otherwise the path's models are scored by scikit-learn's scorer."""
    start = time.perf_counter()
    shared = None if kernel_cache is None else (kernel_cache, train)
    fast = shared is not None and scoring in (None, "accuracy")
    options = dict(path_options)
    classes, y_enc = np.unique(y[train], return_inverse=True)
    if classes.size < 2:
        raise ValueError(f"SVCCV: a training fold holds only one class ({classes[0]!r}); use fewer folds")
    weights = per_sample_C(1.0, options.pop("class_weight"), classes, y_enc, np.ones(y_enc.size))
    path = _fit_path(X[train], classes, y_enc, weights, Cs, gamma=gamma, kernel_cache=shared,
                     build_models=not fast, bias=_bias_mode(options.pop("fit_intercept")), trivial_start=False,
                     n_jobs=None, dynamic=False, class_weight=path_options["class_weight"], **options)
    fit_seconds = time.perf_counter() - start
    if fast:
        scores = _cached_accuracy(path, kernel_cache, train, test, y)
    else:
        scorer = check_scoring(path.models[0], scoring=scoring)
        Xt, yt = X[test], y[test]
        scores = np.array([scorer(model, Xt, yt) for model in path.models])
    return scores, fit_seconds, float(np.sum(path.n_screened) / max(np.sum(path.n_non_sv), 1))


def _score_gamma(X, y, folds, Cs, gamma, scoring, path_options):
    """Every fold of one gamma: one kernel row cache over all of X, shared by the folds' paths
    (a fold's training part is a subset of the rows; LIBSVM's grid recomputes them per C and fold)."""
    cache = None
    if not isinstance(gamma, str):          # 'scale'/'auto' resolve on each fold's own data
        kernel = Kernel.from_params(path_options["kernel"], gamma, path_options["degree"],
                                    path_options["coef0"], X)
        cache = row_cache(kernel, X, path_options["cache_size"], path_options["tol"])
    return [_score_path(X, y, train, test, Cs, gamma, scoring, path_options, cache)
            for train, test in folds]


def cv_results(Cs, gammas, scores, seconds, inner=None):
    """``GridSearchCV``-shaped results of scores (C x inner x fold) and path seconds (inner x fold);
    candidates in ParameterGrid order (C outer, the inner candidates in order). The inner
    candidates are ``inner`` (dicts of parameters, e.g. epsilon and gamma of SVRCV, in the sorted
    order of their names as ParameterGrid) or one {"gamma": g} per gamma. Returns (cv_results_,
    best_index_, best_params_, best_score_)."""
    inner = [{"gamma": gamma} for gamma in gammas] if inner is None else inner
    params, split = [], []
    fit_time = []
    for i, C in enumerate(Cs):
        for g, extra in enumerate(inner):
            params.append({"C": float(C), **extra})
            split.append(scores[i, g])
            fit_time.append(seconds[g].mean() / Cs.size)   # a path's time shared by its Cs
    split = np.array(split)
    mean = split.mean(axis=1)
    # scikit-learn's rank: 'min' method on -mean, so ties share the best rank
    order = np.argsort(-mean, kind="stable")
    rank = np.empty(mean.size, dtype=np.int32)
    rank[order] = np.arange(1, mean.size + 1)
    for k in range(1, mean.size):
        if mean[order[k]] == mean[order[k - 1]]:
            rank[order[k]] = rank[order[k - 1]]
    results = {"params": params,
               "param_C": np.ma.masked_array([p["C"] for p in params], mask=False),
               **{f"param_{key}": np.ma.masked_array([p[key] for p in params], mask=False, dtype=object)
                  for key in inner[0]},
               "mean_test_score": mean, "std_test_score": split.std(axis=1),
               "rank_test_score": rank, "mean_fit_time": np.array(fit_time)}
    for f in range(split.shape[1]):
        results[f"split{f}_test_score"] = split[:, f]
    best = int(np.flatnonzero(rank == 1)[0])
    return results, best, dict(params[best]), float(mean[best])


class SVCCV(KernelClassifierMixin, BaseEstimator):
    """Cross-validated C-SVC: (C, gamma) chosen by K-fold CV over screened regularisation paths.

    For every gamma in ``gammas`` and every fold, one :func:`svm_path` over
    ``Cs`` (warm start + safe screening) is fitted on the training part and
    scored at every C on the held-out part. The folds of one gamma share one
    kernel row cache over all of X (``cache_size`` MB; a numeric gamma), and
    the gammas run in ``n_jobs`` joblib workers. The best mean score (ties: the first candidate
    in scikit-learn's ``ParameterGrid`` order, C outer, gamma inner, as
    ``GridSearchCV``) is refitted on all data (``refit=True``).

    Attributes: ``best_params_``, ``best_score_``, ``best_index_``,
    ``best_estimator_`` (a fitted :class:`leansvm.SVC`), ``cv_results_``
    (``GridSearchCV``'s keys: params, param_C, param_gamma, split<k>_test_score,
    mean/std/rank_test_score, mean_fit_time per path), and the expansion of
    the refitted model (``predict``, ``decision_function``, ``score``).

    Parameters
    ----------
    Cs : array-like, optional
        The values of C, ascending (default: a log-spaced grid, :func:`~leansvm.paths.model_selection.default_C_grid`).
    gammas : sequence of float or 'scale', default=('scale',)
        The kernel widths searched; the folds of one gamma share one kernel row cache.
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'} or callable, default='rbf'
        The kernel, with LIBSVM's meanings of ``gamma``, ``degree`` and ``coef0``.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.0
        Independent term of the polynomial and sigmoid kernels.
    cv : int or cross-validation generator, default=5
        The folds, as scikit-learn.
    scoring : str or callable, optional
        The held-out score (default: accuracy), as scikit-learn's.
    screening : {'it', 'bt1', 'bt2', 'gap'} or None, default='it'
        The safe screening rule (Ogawa et al.'s Intersection Test, DVI, BT2; 'gap': a duality-gap ball, valid with LIBSVM's bias).
    fit_intercept : bool or 'equality', default=True
        True: the augmented bias of the paper; False: none; 'equality': LIBSVM's (screening 'gap' or None).
    tol : float, default=1e-3
        Stopping tolerance on the maximal KKT violation (LIBSVM's eps).
    class_weight : dict or 'balanced', default=None
        Accepted for scikit-learn compatibility; nu-SVC ignores it with a warning, as LIBSVM.
    solver : {'auto', 'cd', 'irwls'}, default='auto'
        Coordinate descent on the shared kernel rows, the exact IRWLS solver, or CD handing over to IRWLS by a cost model.
    cache_size : float, default=200
        Kernel row cache in MB.
    working_set_size : int, optional
        IRWLS's working set (default: 512 from 10,000 samples, 128 below).
    max_iter : int, default=-1
        Bound on the solver iterations (-1: none); a ``ConvergenceWarning`` when reached.
    refit : bool, default=True
        Refit the best (C, gamma) on all data.
    n_jobs : int, optional
        The gammas in this many joblib workers.
    random_state : int, default=0
        Seed of the fold shuffling and the solvers.
    decision_function_shape : {'ovr', 'ovo'}, default='ovr'
        Shape of ``decision_function`` for more than two classes, as scikit-learn.
    verbose : int, default=0
        A progress bar (:mod:`leansvm.progress`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The model's vectors (training rows).
    dual_coef_ : ndarray
        Coefficients of the vectors, in scikit-learn's layout.
    intercept_ : ndarray
        The constants of the decision functions.
    n_support_ : ndarray of shape (n_classes,)
        Vectors per class.
    expansion_ : KernelExpansion
        The model as a kernel expansion f(x) = sum_i coef_i k(sv_i, x) + b (:mod:`leansvm.core.expansion`).
    n_features_in_ : int
        Number of features seen in ``fit``.
    best_params_ : dict
        The chosen ``C`` and ``gamma``.
    best_score_ : float
        Their mean cross-validated accuracy.
    cv_results_ : dict of ndarray
        Per (C, gamma): mean and standard deviation of the folds' scores, as ``GridSearchCV``'s.
    best_estimator_ : SVC
        The model refit on all rows at ``best_params_`` (its attributes are also this object's).
    screening_rate_ : ndarray of shape (n_gammas, n_folds)
        Per gamma and fold, the mean share of the non-support vectors that safe screening removed
        along the C path.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from leansvm import SVCCV
    >>> X, y = make_moons(200, noise=0.2, random_state=0)
    >>> search = SVCCV(Cs=[0.1, 1, 10], gammas=[0.5, 2.0], cv=3).fit(X, y)
    >>> sorted(search.best_params_)
    ['C', 'gamma']
    >>> bool(search.best_score_ > 0.8)
    True
    """

    def __init__(self, Cs=None, gammas=("scale",), kernel="rbf", degree=3, coef0=0.0, cv=5,
                 scoring=None, screening="it", fit_intercept=True, tol=1e-3, class_weight=None,
                 solver="auto", cache_size=200.0, working_set_size=None, max_iter=-1, refit=True,
                 n_jobs=None,
                 random_state=0, decision_function_shape="ovr", verbose=0):
        self.Cs = Cs
        self.gammas = gammas
        self.kernel = kernel
        self.degree = degree
        self.coef0 = coef0
        self.cv = cv
        self.scoring = scoring
        self.screening = screening
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.class_weight = class_weight
        self.solver = solver
        self.cache_size = cache_size
        self.working_set_size = working_set_size
        self.max_iter = max_iter
        self.refit = refit
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.decision_function_shape = decision_function_shape
        self.verbose = verbose

    def _path_options(self):
        return {"kernel": self.kernel, "degree": self.degree, "coef0": self.coef0,
                "screening": self.screening, "fit_intercept": self.fit_intercept, "tol": self.tol,
                "class_weight": self.class_weight, "solver": self.solver, "cache_size": self.cache_size,
                "working_set_size": self.working_set_size, "max_iter": self.max_iter,
                "random_state": self.random_state}

    def fit(self, X, y):
        Cs = default_C_grid() if self.Cs is None else check_grid(self.Cs)
        gammas = list(self.gammas) if not isinstance(self.gammas, (str, float, int)) else [self.gammas]
        if not gammas:
            raise ValueError("gammas must hold at least one value")
        check_screening(self.screening, _bias_mode(self.fit_intercept))
        X, classes, y_enc, _ = validate_training_data(self, X, y)
        labels = classes[y_enc]
        folds = list(check_cv(self.cv, labels, classifier=True).split(X, labels))
        options = self._path_options()
        tasks = [(g, f) for g in range(len(gammas)) for f in range(len(folds))]
        inner = {**options, "progress": False}   # one bar over the (gamma, fold) paths, none inside
        out = []
        with Progress(len(tasks), "SVCCV", "paths", True if self.verbose else None) as bar, \
                _blas_threads(X.shape[0]):
            for task in Parallel(n_jobs=effective_jobs(self.n_jobs), verbose=self.verbose, return_as="generator")(
                    delayed(_score_gamma)(X, labels, folds, Cs, gammas[g], self.scoring, inner)
                    for g in range(len(gammas))):
                out.extend(task)
                bar.update(len(task))
        scores = np.empty((Cs.size, len(gammas), len(folds)))
        seconds = np.empty((len(gammas), len(folds)))
        rates = np.empty((len(gammas), len(folds)))
        for (g, f), (s, t, r) in zip(tasks, out):
            scores[:, g, f] = s
            seconds[g, f] = t
            rates[g, f] = r
        self.cv_results_, self.best_index_, self.best_params_, self.best_score_ = cv_results(Cs, gammas, scores,
                                                                                            seconds)
        self.screening_rate_ = rates
        if self.refit:
            start = time.perf_counter()
            best = self.best_params_
            path = svm_path(X, labels, [best["C"]], gamma=best["gamma"], **options)
            self.best_estimator_ = path.models[0]
            self.refit_time_ = time.perf_counter() - start
            for name in ("classes_", "multiclass_", "expansion_", "support_", "n_support_",
                         "dual_objective_", "n_iter_", "fit_status_"):
                setattr(self, name, getattr(self.best_estimator_, name))
            self.bias_ = self.best_estimator_.bias_
        else:
            self.classes_ = classes
        return self

    def predict(self, X):
        check_is_fitted(self, "expansion_")
        return super().predict(X)
