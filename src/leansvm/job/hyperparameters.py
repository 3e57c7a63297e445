"""Stage 3 of the main job: (C, gamma) by the wide search (:mod:`leansvm.paths.search`) or on a
given grid (screened paths of ``leansvm.SVCCV``), and the screening rate along C's path there."""

from __future__ import annotations


import numpy as np
from sklearn.model_selection import StratifiedKFold

from leansvm.exact.svc import SVC
from leansvm.job.helpers import _QuietConvergence, _accuracy, _optional, majority_share
from leansvm.job.records import Selection, JobLog
from leansvm.progress import Progress


#: C grid relative to nothing (C is scale-free for standardised data); gamma grid relative to 'scale'.
DEFAULT_C_GRID = (1.0, 10.0, 100.0)


DEFAULT_GAMMA_FACTORS = (0.3, 1.0, 3.0)


def _grid_fallback(X, y, Cs, gammas, n_folds, random_state, progress=None):
    """Validation accuracy and #SV over the grid by k-fold CV with one ``leansvm.SVC`` fit per cell."""
    folds = list(StratifiedKFold(n_folds, shuffle=True, random_state=random_state).split(X, y))
    accuracy = np.zeros((len(gammas), len(Cs)))
    n_support = np.zeros((len(gammas), len(Cs)))
    cells = [(i, j) for i in range(len(gammas)) for j in range(len(Cs))]
    with Progress(len(cells) * n_folds, "grid search", "fits", progress) as bar:
        for i, j in cells:
            accs, svs = [], []
            for train, test in folds:
                model = SVC(C=Cs[j], gamma=gammas[i], random_state=random_state).fit(X[train], y[train])
                accs.append(_accuracy(model, X[test], y[test]))
                svs.append(model.expansion_.n_support)
                bar.update()
            accuracy[i, j], n_support[i, j] = np.mean(accs), np.mean(svs)
    return accuracy, n_support


def select_hyperparameters(X, y, Cs, gammas, n_folds=3, random_state=0, log=None) -> Selection:
    """(C, gamma) with the best k-fold validation accuracy (ties: smaller C, then smaller #SV).

    Uses the screened regularization path (``leansvm.SVCCV``) when available;
    otherwise one ``leansvm.SVC`` fit per grid cell and fold (fallback).
    """
    log = log or JobLog(False)
    Cs, gammas = np.sort(np.asarray(Cs, float)), np.sort(np.asarray(gammas, float))
    start = log.clock()
    accuracy, n_support, fallback = None, None, None
    method = "screened C path (leansvm.SVCCV)"
    path_search = _optional("SVCCV")
    quiet = _QuietConvergence()
    if path_search is not None:
        try:
            with quiet:
                accuracy, n_support = _path_search(path_search, X, y, Cs, gammas, n_folds, random_state)
        except Exception as exc:  # report it, then fall back to the plain grid
            fallback = f"SVCCV failed ({type(exc).__name__}: {exc}); plain grid of leansvm.SVC fits"
    else:
        fallback = ("leansvm.SVCCV (the screened path search) is not available; "
                    "plain grid of leansvm.SVC fits")
    if accuracy is None:
        method = f"grid of leansvm.SVC fits, {n_folds}-fold CV"
        with quiet:
            accuracy, n_support = _grid_fallback(X, y, Cs, gammas, n_folds, random_state)
    # best accuracy; among ties (within half a validation sample) the fewest support vectors
    tie = accuracy >= accuracy.max() - 0.5 / X.shape[0]
    i, j = np.unravel_index(np.argmin(np.where(tie, n_support, np.inf)), accuracy.shape)
    selection = Selection(Cs, gammas, accuracy, n_support, float(Cs[j]), float(gammas[i]), method,
                          int(X.shape[0]), n_folds)
    log.step("select", f"C = {selection.C:g}, gamma = {selection.gamma:g}",
             f"best {n_folds}-fold CV accuracy {accuracy[i, j]:.4f} over {len(gammas)} gamma x {len(Cs)} C "
             f"on {X.shape[0]} samples ({method}); ties broken by fewer support vectors" + quiet.note(),
             log.clock() - start, fallback)
    return selection


def search_hyperparameters(job, max_rows=4000, n_folds=5, one_se=0.0, time_limit=None) -> Selection:
    """(C, gamma) by :func:`leansvm.paths.search.wide_search` on every row of the job (grid.py's
    ranges, successive halving up to ``max_rows`` rows, no round started past ``time_limit``
    seconds); the final round's cells as the grid of a :class:`Selection`."""
    from leansvm.paths.search import wide_search
    X, y, log = job.X, job.y, job.log
    with _QuietConvergence() as quiet:
        found = wide_search(X, y, n_folds=n_folds, max_rows=max_rows, one_se=one_se,
                            class_weight=job.task.class_weight, random_state=job.random_state,
                            time_limit=time_limit)
    last = found.final_cells()
    gammas = np.array(sorted({found.scale * 2.0 ** c.log2_gamma for c in last}))
    Cs = np.array(sorted({2.0 ** c.log2_C for c in last}))
    accuracy, n_support = np.full((gammas.size, Cs.size), np.nan), np.full((gammas.size, Cs.size), np.nan)
    for c in last:
        i, j = np.searchsorted(gammas, found.scale * 2.0 ** c.log2_gamma), np.searchsorted(Cs, 2.0 ** c.log2_C)
        accuracy[i, j], n_support[i, j] = c.accuracy, c.n_support
    rows = found.rounds[-1]["rows"]
    method = (f"wide search: warm-started C paths, {len(found.rounds)} round(s) of successive halving up to "
              f"{rows} rows, {found.n_paths} paths, {found.n_fits} (C, fold) solutions")
    selection = Selection(Cs, gammas, accuracy, n_support, found.C, found.gamma, method, rows, n_folds,
                          search=found, se=found.se)
    moved = f"; range extended: {', '.join(found.extended)}" if found.extended else ""
    moved += f"; edges moved inside the range: {', '.join(found.edges_moved)}" if found.edges_moved else ""
    moved += f"; {found.stopped}" if found.stopped else ""
    moved += f"; {found.race}" if found.race else ""
    rule = f"; the fewest SV within {one_se:g} SE of the best" if one_se else ""
    majority = majority_share(y)
    if found.accuracy <= majority + found.se:
        moved += (f"; NOTE: no better than predicting the majority class ({majority:.4f} of the rows) by its "
                  f"standard error: on these rows the RBF SVM found no signal beyond the class shares")
    log.step("select", f"C = {found.C:.4g}, gamma = {found.gamma:.4g}",
             f"{n_folds}-fold CV accuracy {found.accuracy:.4f} +- {found.se:.4f} (SE) on {rows} rows; "
             f"C 2^-5..2^15, gamma 2^-12..2^6 x scale ({method}){rule}{moved}" + quiet.note(),
             found.seconds)
    return selection


def _path_search(path_search, X, y, Cs, gammas, n_folds, random_state):
    """Grid accuracies from ``leansvm.SVCCV`` (one screened path per gamma and fold).

    ``cv_results_`` lists candidates in scikit-learn's ParameterGrid order (C
    outer, gamma inner); SVCCV does not report #SV, so ties go to the first
    (smallest gamma, then smallest C).
    """
    search = path_search(Cs=Cs, gammas=list(gammas), cv=n_folds, refit=False, random_state=random_state)
    search.fit(X, y)
    res = search.cv_results_
    accuracy = np.asarray(res["mean_test_score"], float).reshape(len(Cs), len(gammas)).T
    return accuracy, np.zeros_like(accuracy)


def screening_along_path(X, y, C_min, C_max, gamma, n_C=10, random_state=0, log=None):
    """(Cs, screening rate per C) of one screened path (``leansvm.svm_path``, IT rule) at ``gamma``, or None."""
    log = log or JobLog(False)
    svm_path = _optional("svm_path")
    if svm_path is None:
        log.step("screening", "not measured", "the screening-rate plot needs the screened path",
                 fallback="leansvm.svm_path is not available")
        return None
    Cs = np.logspace(np.log10(C_min), np.log10(C_max), n_C)
    start = log.clock()
    try:
        with _QuietConvergence() as quiet:
            path = svm_path(X, y, Cs, gamma=gamma, screening="it", random_state=random_state)
    except Exception as exc:
        log.step("screening", "not measured", f"svm_path failed: {type(exc).__name__}: {exc}")
        return None
    rate = np.asarray(path.screening_rate, float)
    log.step("screening", f"mean screening rate {rate.mean():.2f} along {n_C} values of C",
             f"one path with the Intersection Test at gamma = {gamma:g} on {X.shape[0]} samples" + quiet.note(),
             log.clock() - start)
    return Cs, rate


#: :func:`carry_C`: the C values tried at each size, as factors of the C carried so far ...
CARRY_FACTORS = (0.25, 0.5, 1.0, 2.0)
#: ... at sizes growing by this factor from the search's rows, up to half the rows the exact model fits on
CARRY_GROWTH = 4
#: ... each scored on at most this many validation rows
CARRY_VALIDATION_ROWS = 20000


def carry_C(job, make, C, search_rows, time_limit) -> float:
    """C at the size it is used: the search chose C on ``search_rows`` rows, the exact model trains on
    the job's fit rows (``job.n_fit``). With C sum_i loss_i + 1/2 ||w||^2, a C right for 4,000 rows
    regularises 50 times less at 200,000. So at sizes ``CARRY_GROWTH`` times larger each (below half the
    fit rows), the exact model ``make(C')`` (unfitted) is fitted at ``CARRY_FACTORS`` times the current C
    on a random subsample of the training rows and scored row by row (``job.task.row_scores``: right or
    wrong, or minus the squared error) on at most ``CARRY_VALIDATION_ROWS`` validation rows; the
    smallest C within one standard error of the best mean score (the paired difference's, row by row)
    is carried to the next size. No size is started when the last one's time, scaled by the rows
    (n^2), would end past ``time_limit`` seconds. Returns the C to fit with; the log says which C was
    carried and why."""
    from leansvm.job.helpers import _subsample

    X_fit, y_fit, X_val, y_val, log, task = job.X_fit, job.y_fit, job.X_val, job.y_val, job.log, job.task
    fit_rows, random_state = job.n_fit, job.random_state
    start, sizes, trail = job.clock(), [], []
    size = CARRY_GROWTH * int(search_rows)
    while size <= fit_rows // 2:
        sizes.append(size)
        size *= CARRY_GROWTH
    if not sizes or (time_limit is not None and time_limit <= 0):
        return C
    rows = np.random.default_rng(random_state).permutation(len(y_val))[:CARRY_VALIDATION_ROWS]
    X_v, y_v = X_val[rows], np.asarray(y_val)[rows]
    last_seconds, stopped = None, ""
    for size in sizes:
        if last_seconds is not None and time_limit is not None and \
                job.clock() - start + last_seconds * CARRY_GROWTH ** 2 > time_limit:
            stopped = f"; stopped before {size} rows: the next size would pass the {time_limit:.0f} s left of " \
                      "the search's share"
            break
        X_s, y_s = _subsample(X_fit, y_fit, size, random_state)
        t0, scores = job.clock(), []
        for factor in CARRY_FACTORS:
            with _QuietConvergence():
                model = make(C * factor).fit(X_s, y_s)
            scores.append(task.row_scores(model.predict(X_v), y_v))
        last_seconds = job.clock() - t0
        best = int(np.argmax([s.mean() for s in scores]))
        within = [k for k, s in enumerate(scores)
                  if s.mean() >= scores[best].mean() - np.std(scores[best] - s) / np.sqrt(len(y_v))]
        C = C * CARRY_FACTORS[min(within)]
        trail.append(f"{size} rows: C = {C:g} ({task.describe_scores(scores[best])} best)")
    if trail:
        log.step("carry", f"C = {C:g} for {fit_rows} rows",
                 f"the search's C carried to the fit's size: the smallest C within one SE of the best validation "
                 f"{task.score_name} on {len(y_v)} rows among {', '.join(f'{f:g}' for f in CARRY_FACTORS)} x C, at "
                 f"{'; '.join(trail)}{stopped}", job.clock() - start)
    return C
