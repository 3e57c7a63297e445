"""Stage 1 of the main job: a table's columns encoded or a matrix scaled (kept with the model),
the data summarised, and the stratified folds whose first held-out part is the validation part."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp


def summarize_data(X, y=None, X_test=None, y_test=None) -> dict:
    """Sizes, features, sparsity and, given labels ``y``, the classes and their counts."""
    density = X.nnz / max(1, X.shape[0] * X.shape[1]) if sp.issparse(X) else 1.0
    summary = {
        "n_train": int(X.shape[0]), "n_features": int(X.shape[1]),
        "n_test": None if X_test is None else int(X_test.shape[0]),
        "sparse": bool(sp.issparse(X)), "density": float(density),
    }
    if y is not None:
        classes, counts = np.unique(np.asarray(y), return_counts=True)
        summary["classes"] = [c.item() if hasattr(c, "item") else c for c in classes]
        summary["class_counts"] = counts.tolist()
    return summary


def validation_folds(X, y, fraction, random_state):
    """(fit rows, held-out rows) index pairs of round(1 / ``fraction``) folds over the rows of ``X``,
    stratified by the labels ``y`` (plain folds when ``y`` is None, for regression targets and
    one-class data, or when a class is too small): the first fold's held-out rows are the validation
    part, the others the extra evidence the confirming folds may use
    (:func:`leansvm.job.choice.pool_folds`)."""
    from sklearn.model_selection import KFold, StratifiedKFold

    if not 0 < fraction < 1:
        raise ValueError(f"validation_fraction must be in (0, 1), got {fraction!r}")
    k = max(2, int(round(1 / fraction)))
    stratified = False
    if y is not None:
        y = np.asarray(y)
        stratified = np.unique(y, return_counts=True)[1].min() >= k
    splitter = StratifiedKFold(k, shuffle=True, random_state=random_state) if stratified else \
        KFold(k, shuffle=True, random_state=random_state)
    return list(splitter.split(np.zeros((X.shape[0], 1)), y if stratified else None))


#: ``fit_lean``'s scaling of the features: "auto" (:func:`choose_scaling`) for labelled data, svm-scale's
#: ranges without labels; or one of :data:`leansvm.preprocessing.scaling.SCALINGS`, or "none"
DEFAULT_SCALING = "auto"
#: what "auto" chooses among, the first preferred where their scores tie
AUTO_SCALINGS = ("range", "standard")
#: a tied scaling's first search round may cost this many times the other's before the other is taken
AUTO_COST_RATIO = 3.0


def scaling_name(scale, labelled=False) -> str:
    """``scale`` as a scaling's name: True is :data:`DEFAULT_SCALING` ("auto" only with labels, else
    svm-scale's "range"), False / None / "none" none."""
    from leansvm.preprocessing.scaling import SCALINGS

    names = SCALINGS + ("none", "auto")
    if scale is True:
        scale = DEFAULT_SCALING
    if scale is False or scale is None:
        return "none"
    if scale not in names:
        raise ValueError(f"scale must be True, False or one of {', '.join(map(repr, names))}, got {scale!r}")
    return AUTO_SCALINGS[0] if scale == "auto" and not labelled else scale


def choose_scaling(scaled, y, log, n_folds=5, random_state=0) -> str:
    """"auto": the scaling of :data:`AUTO_SCALINGS` (svm-scale's ranges, z-scores) under which the
    search's first, cheapest round (:func:`leansvm.paths.search.wide_search` on its ``min_rows``
    rows, K-fold) scores higher. Within one standard error of each other they tie, and the first
    is taken, unless its round's modelled solver work is over :data:`AUTO_COST_RATIO` times the
    other's: ranges squeezed by a few extreme values (magic, page-blocks0) need C far up the
    grid, where every later fit is slow. ``scaled``: a function of a scaling's name that returns
    the training rows so scaled."""
    from leansvm.job.helpers import _QuietConvergence
    from leansvm.paths.search import wide_search

    start, scores = log.clock(), {}
    for name in AUTO_SCALINGS:
        try:
            with _QuietConvergence():      # counted by the search itself; not printed mid-job
                found = wide_search(scaled(name), y, n_folds=n_folds, max_rows=400, random_state=random_state,
                                    progress=False, race=False)   # the first round compares the scalings
        except ValueError as exc:              # too few rows of a class for the folds: the job will say so
            log.step("scale", f"{AUTO_SCALINGS[0]} (not compared: {exc})", "")
            return AUTO_SCALINGS[0]
        work = sum(w for *_, w, _ in found.rounds[0]["paths"])
        scores[name] = (found.accuracy, found.se, work, found.rounds[0]["rows"])
    chosen, why = pick_scaling(scores)
    detail = ", ".join(f"{n} {acc:.4f} +- {se:.4f}" for n, (acc, se, _, _) in scores.items())
    rows = next(iter(scores.values()))[3]
    scored = " against ".join(f"{n} {acc:.4f}" for n, (acc, *_) in sorted(scores.items(), key=lambda i: i[0] != chosen))
    short = ""                     # the default line's reason where the lower score may be the one taken
    if _tied(*scores.values()):
        first = next(iter(scores))    # taken on a tie unless its round costs over AUTO_COST_RATIO times the work
        ratio = scores[first][2] / max(scores[chosen][2], 1e-12)
        short = "; tied" if chosen == first else f"; tied, {first} {ratio:.1f}x work"
    log.step("scale", f"{chosen}: CV accuracy {scored}{short}", f"the search's first round, {n_folds}-fold CV on {rows} rows: "
             f"{detail}; " + why, log.clock() - start)
    return chosen


def _tied(a, b) -> bool:
    """Two scalings' (CV accuracy, its SE, ...) within one standard error of each other."""
    return abs(a[0] - b[0]) <= max(a[1], b[1])


def pick_scaling(scores) -> tuple:
    """(name, why) of :func:`choose_scaling`'s rule over ``scores``: {name: (CV accuracy, its SE,
    modelled work, rows)} of two scalings, the preferred first."""
    (first, a), (second, b) = scores.items()
    if not _tied(a, b):
        return (first, "it scores higher") if a[0] > b[0] else (second, "it scores higher")
    if a[2] > AUTO_COST_RATIO * b[2]:
        return second, f"tied within one SE, and {first}'s round took {a[2] / max(b[2], 1e-12):.1f} x its work"
    return first, "tied within one SE: the first is preferred"


def prepare_table(X, y, X_test, y_test, target, impute, log, scaling=DEFAULT_SCALING):
    """Stage 1, for a pandas DataFrame: the target column split off (``target``, else ``y``),
    numeric columns imputed, categorical ones one-hot encoded, the encoded matrix scaled as
    :func:`scale_features` scales a matrix (:class:`leansvm.preprocessing.tabular.TablePreprocessor`,
    fitted on the training rows and kept with the returned model); ``scaling``: a name of
    :func:`scaling_name`'s. Anything else passes through. Returns (X, y, X_test, y_test, preprocessor)."""
    if not hasattr(X, "columns") or not hasattr(X, "iloc"):
        if target is not None:
            raise ValueError("target names a column of a DataFrame; X is not a DataFrame")
        return X, y, X_test, y_test, None
    from leansvm.preprocessing.tabular import TablePreprocessor, split_target

    if y is not None and target is not None:
        raise ValueError("give the labels as y or as a target column, not both")
    if y is None:
        X, y = split_target(X, target)
        if X_test is not None and y_test is None and target in getattr(X_test, "columns", ()):
            X_test, y_test = split_target(X_test, target)
    def scaled(name):                       # the table as each scaling would encode it; its warnings said once, below
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return working_form(TablePreprocessor(impute=impute, scaling=name).fit_transform(X))

    if scaling == "auto":
        scaling = choose_scaling(scaled, np.asarray(y), log)
    prep = TablePreprocessor(impute=impute, scaling=scaling).fit(X)
    log.step("preprocess", prep.describe(), "fitted on the training rows, kept with the model")
    X, X_test = working_form(prep.transform(X)), None if X_test is None else working_form(prep.transform(X_test))
    return X, y, X_test, y_test, prep


def scale_features(X, X_test, scale, log, y=None):
    """Stage 1 for a matrix: each feature scaled by ``scale`` (True: :data:`DEFAULT_SCALING`,
    svm-scale's ranges with zeros kept, as LIBSVM's guide and easy.py scale before training),
    fitted on the training rows and kept with the model (:class:`leansvm.preprocessing.scaling.FeatureScaler`;
    a LIBSVM model file gets svm-scale's range file beside it); False leaves X as given. Then the
    rows in :func:`working_form` first, so that the same numbers as an array or a sparse matrix (a LIBSVM
    file) are scaled alike and give the same model. ``scale="auto"`` with labels ``y``: the scaling
    :func:`choose_scaling` chooses. Returns (X, X_test, scaler or None)."""
    from sklearn.utils import check_array

    from leansvm.preprocessing.scaling import FeatureScaler

    scaling, scaler = scaling_name(scale, y is not None), None
    X = working_form(X)
    searched = scaling == "auto"
    if searched:
        scaling = choose_scaling(lambda name: FeatureScaler(name).fit_transform(X), y, log)
    if scaling != "none":
        scaler = FeatureScaler(scaling).fit(X)
        log.step("scale", scaler.describe(), "as svm-scale before LIBSVM (its practical guide): RBF distances "
                 "weigh every feature alike whatever its units; fitted on the training rows",
                 detail=searched)   # the choice's line above says it
        X = scaler.transform(X)
        if X_test is not None:
            X_test = scaler.transform(check_array(X_test, accept_sparse="csr", dtype=np.float64))
    return working_form(X), None if X_test is None else working_form(X_test), scaler


def working_form(X):
    """The rows dense or sparse by their numbers, not by the form they came in: dense where at least
    ``KernelRowCache.DENSE_MIN_DENSITY`` of the entries are non-zero and a dense copy fits in
    ``DENSE_MAX_MB`` (as the exact solver's kernel rows take them), CSR below that density; larger
    data keeps its form. Every later stage then computes the same way from the same numbers."""
    from leansvm.core.kernels import KernelRowCache, dense_if_worth_it

    if sp.issparse(X):
        return dense_if_worth_it(X)
    X = np.asarray(X)
    if X.size and np.count_nonzero(X) < KernelRowCache.DENSE_MIN_DENSITY * X.size:
        return sp.csr_matrix(X)
    return X
