"""The main job: from data to the cheapest accurate model (``leansvm fit`` / ``fit_lean``).

The pipeline is a chain of stages, each a function with one contract, run in
order by :func:`fit_lean` (each readable on one screen):

1. :func:`_prepare_data`           -- a table's columns encoded or a matrix scaled (as
   LIBSVM's ``svm-scale``), inputs checked, :func:`summarize_data` (sizes, classes, balance).
2. :func:`split_validation`        -- a stratified hold-out part for every later choice.
3. :func:`_choose_hyperparameters` -- (C, gamma) by :func:`search_hyperparameters`, 5-fold
   cross-validation over grid.py's ranges (:mod:`leansvm.paths.search`: warm-started C paths,
   coarse-to-fine gamma, successive halving over subsamples, edges that extend); a grid the
   caller gives goes to :func:`select_hyperparameters` (screened paths of ``leansvm.SVCCV``).
4. :func:`_choose_route`           -- exact or budget training, from :func:`estimate_exact_seconds`
   (two timed subsamples, t ~ n^p, p in [2, 3]) against the time budget.
5. :func:`_train_candidates`       -- :func:`train_exact` (on a subsample on the budget route) and
   :func:`train_budget_models` (``BSGDClassifier``, or Nystroem + LinearSVC as a fallback).
6. :func:`_compress_reference`     -- :func:`compress_models`: ``leansvm.compress`` of the exact
   model at doubling sizes until one is within the drop on the validation part.
7. :func:`choose_model`            -- the model with the fewest support vectors whose
   validation accuracy is within ``max_accuracy_drop`` (a fraction) of the best,
   by a margin of ``margin_sd`` standard errors (:func:`required_accuracy`).
8. :func:`refit_on_all_rows`       -- the choice trained again on every training row
   (the validation part included), as ``GridSearchCV(refit=True)`` does: the
   exact SVC at the chosen (C, gamma) and, for a compressed choice, its
   compression to the chosen size. This is the returned model.
9. :func:`_measure`                -- test accuracy, and seconds per 1000 predictions of every
   model and of LIBSVM's full model (scikit-learn ``SVC``) at the chosen (C, gamma)
   (:func:`measure_prediction_cost`); never used for a choice.

Every stage appends a :class:`Step` (what it chose, why, how long, and a
``fallback`` note when an intended method was not available): the log that
``verbose=True`` prints and the HTML report (:mod:`leansvm.report`) shows.
"""

from __future__ import annotations

import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold, train_test_split

from leansvm import interrupts, io
from leansvm.budget.landmark_svc import LandmarkSVC
from leansvm.compression.cvm import reuse_eigendecompositions
from leansvm.core.kernels import resolve_gamma
from leansvm.exact.svc import SVC
from leansvm.progress import Progress, default_progress, progress_enabled
from leansvm.report import accuracy_cell

__all__ = ["fit_lean", "LeanResult", "Candidate", "Step", "Selection"]

#: C grid relative to nothing (C is scale-free for standardised data); gamma grid relative to 'scale'.
DEFAULT_C_GRID = (1.0, 10.0, 100.0)
DEFAULT_GAMMA_FACTORS = (0.3, 1.0, 3.0)
#: The compression size search stops when the next size would take it past this many time budgets.
COMPRESSION_BUDGET_FACTOR = 3.0
#: Compression fitting points: at least this many training rows per compressed vector (see compress_models).
POINTS_PER_VECTOR = 4
#: The compression size search starts with at least this many vectors per class (more than two classes).
VECTORS_PER_CLASS = 20
#: L-BFGS iterations of each compression in the size search and of the refit of the chosen size
#: (compress's automatic count, within these bounds instead of its 100-3000): the refit trains the
#: configuration that was validated. 300 and 3,000 iterations label validation rows alike at the
#: chosen sizes (page-blocks0, optdigits, banana: docs/fit.md) and test rows alike on page-blocks0
#: (40 / 80 vectors: 0.9735 / 0.9726 against 0.9726 / 0.9735) and banana (12 / 24: 0.9066 both), at
#: a seventh to an eighth of the time (page-blocks0's refit 14.4 -> 1.8 s); magic gives up 0.34 /
#: 0.21 test points at 40 / 226 vectors for 7.2 against 32.6 s and 21.9 against 155 s
#: (BENCHMARKS.md, stop 36). letter's sizes get 100 either way.
SEARCH_ITERATION_RANGE = (100, 300)
#: Budget models as fractions of the exact model's support vectors.
DEFAULT_SIZE_FRACTIONS = (0.02, 0.05, 0.1, 0.2)


# -- records ---------------------------------------------------------------------------
@dataclass
class Step:
    """One stage's decision: what it chose, why, how long it took, and any fallback used."""

    stage: str
    choice: str
    reason: str
    seconds: float = 0.0
    fallback: str | None = None


@dataclass
class Selection:
    """Validation accuracy over the (gamma, C) grid and the chosen pair.

    ``accuracy[i, j]`` and ``n_support[i, j]`` belong to ``gammas[i]``, ``Cs[j]``.
    ``screening`` (or None) is ``(Cs, rate)`` along one screened path at the
    chosen gamma: the fraction of non-support vectors the safe rules removed
    before solving at each C.
    """

    Cs: np.ndarray
    gammas: np.ndarray
    accuracy: np.ndarray
    n_support: np.ndarray
    C: float
    gamma: float
    method: str
    n_samples: int
    n_folds: int
    screening: tuple | None = None   # (Cs, rate per C) along one screened path at the chosen gamma
    search: object = None            # the wide search's record (leansvm.paths.search.SearchResult), or None
    se: float = float("nan")         # standard error of the chosen cell's CV accuracy


@dataclass
class Candidate:
    """A trained model with its size, accuracies and test-time cost."""

    name: str
    kind: str                     # 'exact' | 'compressed' | 'budget' | 'refit'
    model: object
    n_support: int
    fit_seconds: float
    validation_accuracy: float = float("nan")
    test_accuracy: float | None = None
    seconds_per_1000: float | None = None
    note: str = ""
    #: validation accuracy it had to reach: best - drop + margin (see :func:`required_accuracy`)
    required_accuracy: float = float("nan")
    validation_predictions: np.ndarray | None = field(default=None, repr=False)


@dataclass
class LeanResult:
    """Everything ``fit_lean`` decided and measured; ``model`` is the returned estimator.

    ``chosen`` is the candidate the validation part chose; ``final`` the model
    returned: ``chosen`` refit on all training rows (kind 'refit', see
    :func:`refit_on_all_rows`), or ``chosen`` itself when not refit."""

    model: object
    chosen: Candidate
    candidates: list[Candidate]
    selection: Selection
    route: str                    # 'exact' | 'budget'
    steps: list[Step]
    summary: dict
    max_accuracy_drop: float
    libsvm_seconds_per_1000: float | None = None
    libsvm_n_support: int | None = None
    libsvm_test_accuracy: float | None = None
    data_2d: tuple | None = None  # (X, y) for decision-boundary plots when d == 2
    classes: np.ndarray = field(default_factory=lambda: np.empty(0))
    seconds: float = 0.0
    final: Candidate | None = None
    preprocessing: str | None = None    # what stage 1 did (a table's columns, or the scaling); None: nothing

    def __post_init__(self):
        if self.final is None:
            self.final = self.chosen


# -- small helpers ---------------------------------------------------------------------
class _Log:
    """Prints each step when verbose; keeps every step for the report."""

    def __init__(self, verbose):
        self.verbose = verbose
        self.steps: list[Step] = []

    def say(self, message):
        if self.verbose:
            print(message, file=sys.stdout, flush=True)

    def step(self, stage, choice, reason, seconds=0.0, fallback=None):
        interrupts.check()                     # between stages: a recorded Ctrl-C stops here
        self.steps.append(Step(stage, choice, reason, seconds, fallback))
        line = f"[{stage}] {choice} -- {reason}"
        if fallback:
            line += f" (fallback: {fallback})"
        self.say(line + (f" [{seconds:.1f} s]" if seconds else ""))


def _optional(name):
    """``leansvm.<name>`` when that part of the library has landed, else None."""
    import leansvm
    return getattr(leansvm, name, None)


def _accuracy(model, X, y) -> float:
    return float(np.mean(_same_labels(model.predict(X), y)))


def _validate(candidate, X_val, y_val):
    """Set the candidate's validation predictions and accuracy."""
    candidate.validation_predictions = np.asarray(candidate.model.predict(X_val))
    candidate.validation_accuracy = float(np.mean(_same_labels(candidate.validation_predictions, y_val)))
    return candidate


def required_accuracy(candidate, best, max_accuracy_drop, margin_sd) -> float:
    """Validation accuracy ``candidate`` must reach: best - drop + margin_sd x SE(candidate - best).

    Both accuracies are measured on the same n validation points, so the
    standard error of their difference is at most sqrt(d / n), d the fraction
    of points on which the two models disagree (the paired view of McNemar's
    test: Var = (d - delta^2) / n). With ``margin_sd = 1`` a candidate that
    clears the drop by this margin is within the drop on new data from the
    same distribution with about 84 % confidence (one-sided normal
    approximation); 0 gives the plain rule. The best model needs no margin.
    """
    if candidate is best or margin_sd <= 0 or candidate.validation_predictions is None \
            or best.validation_predictions is None:
        return best.validation_accuracy - max_accuracy_drop
    differ = np.mean(~_same_labels(candidate.validation_predictions, best.validation_predictions))
    n = best.validation_predictions.shape[0]
    return best.validation_accuracy - max_accuracy_drop + margin_sd * float(np.sqrt(differ / n))


def _same_labels(pred, y):
    pred, y = np.asarray(pred), np.asarray(y)
    if (pred.dtype.kind in "US") != (y.dtype.kind in "US"):
        return pred.astype(str) == y.astype(str)
    return pred == y


def _subsample(X, y, size, random_state):
    """A stratified subsample of at most ``size`` rows (all rows when there are fewer)."""
    n = X.shape[0]
    if n <= size:
        return X, y
    try:
        Xs, _, ys, _ = train_test_split(X, y, train_size=size, stratify=y, random_state=random_state)
    except ValueError:  # a class too small to stratify
        Xs, _, ys, _ = train_test_split(X, y, train_size=size, random_state=random_state)
    return Xs, ys


def _int32_indices(X):
    """CSR with int32 indices (scikit-learn's SVC rejects int64 ones); dense X unchanged."""
    if not sp.issparse(X):
        return X
    X = sp.csr_matrix(X, copy=True)
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    return X


class _QuietConvergence:
    """Collect ConvergenceWarnings (counted in the log line) instead of printing them mid-progress."""

    def __enter__(self):
        self._catch = warnings.catch_warnings(record=True)
        self.caught = self._catch.__enter__()
        warnings.simplefilter("always", ConvergenceWarning)
        return self

    def __exit__(self, *exc):
        caught = list(self.caught)
        result = self._catch.__exit__(*exc)
        self.count = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
        for w in caught:  # anything else is shown as usual, after the filter is restored
            if not issubclass(w.category, ConvergenceWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return result

    def note(self) -> str:
        return f"; {self.count} solve(s) stopped at their iteration bound" if self.count else ""


def _timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


# -- stages ----------------------------------------------------------------------------
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


def split_validation(X, y, fraction, random_state):
    """(X_fit, y_fit, X_val, y_val): a stratified hold-out part of ``fraction`` of the rows."""
    if not 0 < fraction < 1:
        raise ValueError(f"validation_fraction must be in (0, 1), got {fraction!r}")
    try:
        return _ordered(train_test_split(X, y, test_size=fraction, stratify=y, random_state=random_state))
    except ValueError:
        return _ordered(train_test_split(X, y, test_size=fraction, random_state=random_state))


def _ordered(parts):
    X_fit, X_val, y_fit, y_val = parts
    return X_fit, y_fit, X_val, y_val


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
    log = log or _Log(False)
    Cs, gammas = np.sort(np.asarray(Cs, float)), np.sort(np.asarray(gammas, float))
    start = time.perf_counter()
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
        fallback = ("leansvm.SVCCV (screened path search, issue 4) is not available; "
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
             time.perf_counter() - start, fallback)
    return selection


def search_hyperparameters(X, y, max_rows=4000, n_folds=5, one_se=0.0, class_weight=None, random_state=0,
                           log=None, progress=None, time_limit=None) -> Selection:
    """(C, gamma) by :func:`leansvm.paths.search.wide_search` (grid.py's ranges, successive halving up to
    ``max_rows`` rows, no round started past ``time_limit`` seconds); the final round's cells as
    the grid of a :class:`Selection`."""
    from leansvm.paths.search import wide_search
    log = log or _Log(False)
    with _QuietConvergence() as quiet:
        found = wide_search(X, y, n_folds=n_folds, max_rows=max_rows, one_se=one_se, class_weight=class_weight,
                            random_state=random_state, progress=progress, time_limit=time_limit)
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
    rule = f"; the fewest SV within {one_se:g} SE of the best" if one_se else ""
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
    log = log or _Log(False)
    svm_path = _optional("svm_path")
    if svm_path is None:
        log.step("screening", "not measured", "the screening-rate plot needs the screened path",
                 fallback="leansvm.svm_path (issue 4) is not available")
        return None
    Cs = np.logspace(np.log10(C_min), np.log10(C_max), n_C)
    start = time.perf_counter()
    try:
        with _QuietConvergence() as quiet:
            path = svm_path(X, y, Cs, gamma=gamma, screening="it", random_state=random_state)
    except Exception as exc:
        log.step("screening", "not measured", f"svm_path failed: {type(exc).__name__}: {exc}")
        return None
    rate = np.asarray(path.screening_rate, float)
    log.step("screening", f"mean screening rate {rate.mean():.2f} along {n_C} values of C",
             f"one path with the Intersection Test at gamma = {gamma:g} on {X.shape[0]} samples" + quiet.note(),
             time.perf_counter() - start)
    return Cs, rate


GROWTH_MIN, GROWTH_MAX = 1.5, 3.0     # bounds of the fitted exponent of fit time in n


def estimate_fit_seconds(make_estimator, X, y, sample_size=2000, random_state=0) -> tuple[float, float, int, float]:
    """(estimated seconds to fit all of X, measured seconds, subsample size, growth exponent p).

    Times ``make_estimator().fit`` on stratified subsamples of s/2 and s =
    ``sample_size`` rows and extrapolates t(n) = t(s) (n / s)^p, with p fitted
    to the two timings and clipped to [GROWTH_MIN, GROWTH_MAX]: LIBSVM grows about
    as n^2.2 on the synthetic sets, leansvm's IRWLS with shrinking as n^1.4
    from 5k to 50k (BENCHMARKS.md); small subsamples time overheads, hence the clip.
    """
    Xs, ys = _subsample(X, y, sample_size, random_state)
    if Xs.shape[0] == X.shape[0]:
        _, seconds = _timed(make_estimator().fit, _int32_indices(Xs), ys)
        return seconds, seconds, Xs.shape[0], GROWTH_MIN
    Xh, yh = _subsample(Xs, ys, Xs.shape[0] // 2, random_state)
    _, half = _timed(make_estimator().fit, _int32_indices(Xh), yh)
    _, seconds = _timed(make_estimator().fit, _int32_indices(Xs), ys)
    p = float(np.clip(np.log(max(seconds, 1e-9) / max(half, 1e-9)) / np.log(Xs.shape[0] / Xh.shape[0]),
                      GROWTH_MIN, GROWTH_MAX))
    return seconds * (X.shape[0] / Xs.shape[0]) ** p, seconds, Xs.shape[0], p


def estimate_exact_seconds(X, y, C, gamma, sample_size=2000, random_state=0) -> tuple[float, float, int, float]:
    """:func:`estimate_fit_seconds` of ``leansvm.SVC`` at (C, gamma)."""
    return estimate_fit_seconds(lambda: SVC(C=C, gamma=gamma, random_state=random_state), X, y,
                                sample_size, random_state)


def train_exact(X, y, C, gamma, random_state=0, class_weight=None) -> Candidate:
    """The exact C-SVC (``leansvm.SVC``, IRWLS) at (C, gamma)."""
    model, seconds = _timed(SVC(C=C, gamma=gamma, random_state=random_state, cache_size=500,
                                class_weight=class_weight).fit, X, y)
    return Candidate("exact SVC", "exact", model, model.expansion_.n_support, seconds)


def train_budget_models(X, y, C, gamma, budgets, random_state=0, log=None, progress=None):
    """Budget models at each budget: ``leansvm.BSGDClassifier`` or, until it lands, Nystroem + LinearSVC.

    ``progress``: a bar over the budgets (None: on a terminal, :mod:`leansvm.progress`)."""
    log = log or _Log(False)
    bsgd = _optional("BSGDClassifier")
    fallback = None
    if bsgd is None:
        fallback = ("leansvm.BSGDClassifier (issue 5) is not available; Nystroem landmarks + "
                    "LinearSVC (scikit-learn), written as a kernel expansion over the landmarks")
    out = []
    start = time.perf_counter()
    with Progress(len(budgets), "budget models", "models", progress) as bar:
        for budget in budgets:
            if bsgd is not None:
                # the convex refit: +2.0..+4.3 test points at 0.8-3.3x the time on banana and magic at
                # the main job's budgets (benchmarks/bench_budget_refit.py, BENCHMARKS.md)
                estimator = bsgd(budget=int(budget), C=C, gamma=gamma, random_state=random_state, refit=True)
                name = f"BSGD B={int(budget)}"
            else:
                estimator = LandmarkSVC(budget=int(budget), C=C, gamma=gamma, random_state=random_state)
                name = f"Nystroem B={int(budget)}"
            with default_progress(False):   # this bar counts the models; none inside each fit
                model, seconds = _timed(estimator.fit, X, y)
            out.append(Candidate(name, "budget", model, model.expansion_.n_support, seconds))
            bar.update()
    log.step("budget", f"{len(out)} budget model(s), B = {', '.join(str(int(b)) for b in budgets)}",
             "budgeted training at fixed size: " + ("BSGDClassifier with its convex refit" if bsgd is not None
                                                    else "Nystroem + LinearSVC"),
             time.perf_counter() - start, fallback)
    return out


def compression_out_of_reach(sizes, misses, limit, chance_miss) -> bool:
    """Whether the doubling size search stops short: no size under ``limit`` is expected to reach the target.

    ``misses``: required minus validation accuracy of each size tried (``sizes``, doubling), all > 0.
    With m_k the smallest miss up to size s_k, the last two doublings closed it by
    r = (m_{k-2} - m_k) / log2(s_k / s_{k-2}) per doubling; the search stops when m_k > r log2(limit / s_k),
    the miss left after every doubling up to ``limit`` at that rate (linear in log-size: compressed
    accuracy grows ever more slowly as the size nears the reference's, so the rate is optimistic).
    The running minimum keeps one poor compression from looking like a plateau (page-blocks0: 5, 10, 20
    vectors missed by 0.95, 0.57, 1.58 points, then 160 vectors reached it). Only once the misses are
    within half of ``chance_miss`` (the miss of predicting the majority class): a curve still near chance
    may not have started to rise. Measured on magic (39, 78, 156 vectors: misses 1.07, 0.94, 1.12 points,
    389 the largest size): it stops, and 312 vectors, which also missed (0.52), are not tried.
    """
    if len(sizes) < 3 or not sizes[-1] > sizes[-3]:
        return False
    smallest = np.minimum.accumulate(np.asarray(misses, dtype=float))
    if smallest[-1] > chance_miss / 2:
        return False
    rate = (smallest[-3] - smallest[-1]) / np.log2(sizes[-1] / sizes[-3])
    return bool(smallest[-1] > rate * np.log2(limit / sizes[-1]))


def compress_models(reference: Candidate, X_fit, y_fit, X_val, y_val, target_accuracy, first_fraction=0.01,
                    max_iter=None, time_limit=None, random_state=0, log=None, progress=None, best=None,
                    margin_sd=0.0, min_points=None, points_per_vector=POINTS_PER_VECTOR, per_class=VECTORS_PER_CLASS,
                    below=None, iteration_range=SEARCH_ITERATION_RANGE):
    """Compressed models of ``reference`` (``leansvm.compress``), searching the smallest size that reaches
    ``target_accuracy`` on the validation part.

    Sizes double from ``first_fraction`` of the reference's #SV until one
    reaches the target, or until the misses shrink too slowly for any size under
    the limit to reach it (:func:`compression_out_of_reach`); then one more size,
    the geometric mean of the last miss and the hit, refines it. Every compressed model is fitted to the
    reference's outputs on training points ``X_fit`` (never on the validation
    part, which only measures), so each tried size is an honest point of the
    accuracy-against-#SV curve. ``max_iter`` fixes the L-BFGS iterations of
    the gradient support vectors (None: compress's own choice scaled to the
    problem, within ``iteration_range``; letter at 1,040 vectors: 0.9745 on
    test against 0.9720 with 50 iterations, the full model 0.9768). The search
    runs fewer iterations than compress's default (``SEARCH_ITERATION_RANGE``), and so does
    the refit of the chosen size (:func:`refit_on_all_rows`).
    ``time_limit`` (seconds): no new size is tried when the next one (about
    twice the last one's time) would end past it. Cost: about 2.5 times the compression at the
    final size (``compress(max_accuracy_drop=...)`` grows sizes by 1.25 and
    pays about 5 times). ``progress``: each compression's bar (None: on a terminal).
    With ``best`` (the most accurate model so far) and ``margin_sd``, a size
    reaches the target only when its validation accuracy also clears the
    margin of :func:`required_accuracy` (``target_accuracy`` = best - drop).
    Fitting points: a stratified subsample of ``X_fit`` with at least
    ``min_points`` rows (default: all) and ``points_per_vector`` rows per
    compressed vector, so that larger models are not fitted to too few
    points (each vector has d + outputs parameters). The first size has at
    least ``per_class`` vectors per class. ``below``: no size at or above it is tried
    (the #SV of the smallest model that already qualifies: a larger compressed one
    could not be chosen; on magic with BSGD's refit, B = 199 qualified and sizes of 312
    and more were tried for nothing).
    """
    log = log or _Log(False)
    compress = _optional("compress")
    if compress is None:
        log.step("compress", "no compression",
                 "compression is not available in this build", 0.0,
                 "leansvm.compress (issue 7) is not available; the exact and budget models are the candidates")
        return []
    m = reference.n_support
    out, start, n_unconverged = [], time.perf_counter(), 0

    def attempt(size):
        nonlocal n_unconverged
        X_pts, y_pts = _fitting_points(X_fit, y_fit, size, min_points, points_per_vector, random_state)
        try:
            with _QuietConvergence() as quiet:
                model, seconds = _timed(compress, reference.model, n_sv=int(size), X=X_pts, y=y_pts,
                                        max_iter=max_iter, random_state=random_state, progress=progress,
                                        iteration_range=iteration_range)
        except Exception as exc:
            log.step("compress", f"size {size} failed", f"{type(exc).__name__}: {exc}")
            return None
        n_unconverged += quiet.count
        n_sv = model.expansion_.n_support
        c = _validate(Candidate(f"compressed {n_sv} SV", "compressed", model, n_sv, seconds), X_val, y_val)
        c.required_accuracy = target_accuracy if best is None else \
            target_accuracy + required_accuracy(c, best, 0.0, margin_sd) - best.validation_accuracy
        out.append(c)
        log.say(f"  compressed to {n_sv} SV (fitted on {X_pts.shape[0]} points): validation accuracy "
                f"{c.validation_accuracy:.4f} (target {c.required_accuracy:.4f}) [{seconds:.1f} s]")
        return c

    def out_of_time(next_cost):
        return time_limit is not None and time.perf_counter() - start + next_cost > time_limit

    n_classes = np.unique(np.asarray(y_fit)).size
    majority = np.max(np.unique(np.asarray(y_val), return_counts=True)[1]) / max(len(y_val), 1)
    size = max(5, int(round(first_fraction * m)), per_class * n_classes if n_classes > 2 else 0)
    miss, hit, stopped, out_of_reach = None, None, False, False
    missed = []                          # (size, required - validation accuracy) of each doubling
    with reuse_eigendecompositions():   # one K_SS eigendecomposition for all sizes (same candidates)
        limit = m if below is None else min(m, below)
        while size < limit:
            c = attempt(size)
            if c is not None and c.validation_accuracy >= c.required_accuracy - 1e-12:
                hit = size
                break
            if c is not None:
                missed.append((c.n_support, c.required_accuracy - c.validation_accuracy))
            miss, size = size, 2 * size
            if size < limit and out_of_time(2 * (c.fit_seconds if c is not None else 0.0)):
                stopped = True
                break
            if size < limit and c is not None and compression_out_of_reach(
                    [s for s, _ in missed], [g for _, g in missed], limit, c.required_accuracy - majority):
                out_of_reach = True
                break
        if hit is not None and miss is not None:
            middle = int(round(np.sqrt(miss * hit)))
            if miss < middle < hit and not out_of_time(out[-1].fit_seconds):
                attempt(middle)
    out.sort(key=lambda c: c.n_support)
    reached = [c for c in out if c.validation_accuracy >= c.required_accuracy - 1e-12]
    log.step("compress", (f"smallest compressed model reaching the target: {min(c.n_support for c in reached)} SV"
                          if reached else "no compressed model reached the target"),
             f"sizes tried {', '.join(str(c.n_support) for c in out)} (doubling, then one refinement) "
             f"for {reference.name} ({m} SV), fitted to its outputs on training points "
             f"(at least {min_points or X_fit.shape[0]}, {points_per_vector} per vector)"
             + (f"; {n_unconverged} optimisation(s) stopped at max_iter" if n_unconverged else "")
             + (f"; stopped before size {size}: the next size would pass the time limit of {time_limit:g} s"
                if stopped else "")
             + (f"; stopped before size {size}: the smallest miss of the target, "
                f"{100 * min(g for _, g in missed):.2f} points, shrank too slowly over the last two doublings "
                f"to close below {limit} vectors" if out_of_reach else "")
             + (f"; no size from {below} on: a model of {below} SV already qualifies"
                if below is not None and below < m and not stopped and not out_of_reach and hit is None else ""),
             time.perf_counter() - start)
    return out


def _fitting_points(X, y, n_sv, min_points, points_per_vector, random_state):
    """Rows a compression to ``n_sv`` vectors is fitted on: all of ``X`` (``min_points`` None), else a
    stratified subsample of at least ``min_points`` rows and ``points_per_vector`` per vector."""
    n_points = X.shape[0] if min_points is None else max(min_points, points_per_vector * int(n_sv))
    return _subsample(X, y, n_points, random_state)


def choose_model(candidates, max_accuracy_drop, log=None, margin_sd=0.0) -> Candidate:
    """The candidate with the fewest support vectors whose validation accuracy is within the drop of the
    best, by the margin of :func:`required_accuracy` (``margin_sd`` standard errors; 0: the plain rule).

    "The best" is the most accurate trained (exact or budget) model: compressed models approximate the
    exact one, so one that beats it on validation does so by noise; the compression search used the same
    reference."""
    trained = [c for c in candidates if c.kind != "compressed"] or candidates
    best = max(trained, key=lambda c: c.validation_accuracy)
    for c in candidates:
        c.required_accuracy = required_accuracy(c, best, max_accuracy_drop, margin_sd)
    eligible = [c for c in candidates if c.validation_accuracy >= c.required_accuracy - 1e-12]
    chosen = min(eligible, key=lambda c: (c.n_support, -c.validation_accuracy))
    if log is not None:
        margin = (f", each by {margin_sd:g} standard error(s) of its paired difference to the best"
                  if margin_sd > 0 else "")
        log.step("choose", f"{chosen.name} ({chosen.n_support} SV, validation accuracy "
                           f"{chosen.validation_accuracy:.4f})",
                 f"fewest support vectors among {len(eligible)} of {len(candidates)} models within "
                 f"{100 * max_accuracy_drop:g} points of the best validation accuracy "
                 f"{best.validation_accuracy:.4f}{margin}")
    return chosen


def refit_on_all_rows(chosen: Candidate, X, y, C, gamma, min_points=None, time_limit=None, random_state=0,
                      log=None, progress=None, n_fit=None, class_weight=None) -> Candidate | None:
    """The chosen model trained again on all rows ``X, y`` (training and validation parts together).

    After the validation part has chosen the kind and size, the returned model
    should use every labelled row, as scikit-learn's ``GridSearchCV(refit=True)``
    does: the exact SVC at the chosen (C, gamma) on all rows and, for a
    compressed choice, ``compress`` of it to the chosen size, fitted to its
    outputs on all rows (at least ``min_points``, ``POINTS_PER_VECTOR`` per
    vector, as :func:`compress_models`) with the size search's iteration bounds
    (``SEARCH_ITERATION_RANGE``). Measured on letter (16,000 rows, 1,040
    vectors): test accuracy 0.9702 compressed from the 12,800-row model, 0.9738
    from the 16,000-row one. The result has no validation accuracy (it has seen
    the validation part); its test accuracy is measured like the others'.
    Budget models are not refit (returns None); nor is anything when the
    estimated time (the chosen model's own fit time, for a compressed choice
    its compression, scaled by the row ratio ``X.shape[0] / n_fit`` to the
    power 1.5) exceeds ``time_limit`` seconds.
    """
    log = log or _Log(False)
    if chosen.kind not in ("exact", "compressed"):
        log.step("refit", "not refit", f"the chosen model is a {chosen.kind} model; it is returned as validated")
        return None
    if time_limit is not None and n_fit:
        estimate = chosen.fit_seconds * (X.shape[0] / n_fit) ** 1.5
        if estimate > time_limit:
            log.step("refit", "not refit", f"refitting on all {X.shape[0]} rows is estimated at {estimate:.0f} s, "
                                           f"over the limit of {time_limit:g} s; the validated model is returned")
            return None
    start = time.perf_counter()
    exact = train_exact(X, y, C, gamma, random_state, class_weight)
    model, what = exact.model, f"exact SVC at C = {C:g}, gamma = {gamma:g}"
    if chosen.kind == "compressed":
        compress = _optional("compress")
        X_pts, y_pts = _fitting_points(X, y, chosen.n_support, min_points, POINTS_PER_VECTOR, random_state)
        with _QuietConvergence():
            model = compress(exact.model, n_sv=chosen.n_support, X=X_pts, y=y_pts, max_iter=None,
                             random_state=random_state, progress=progress,
                             iteration_range=SEARCH_ITERATION_RANGE)
        what += f" ({exact.n_support} SV), compressed to {model.expansion_.n_support} SV on {X_pts.shape[0]} rows"
    seconds = time.perf_counter() - start
    n_sv = model.expansion_.n_support
    base = "exact SVC" if chosen.kind == "exact" else f"compressed {n_sv} SV"
    final = Candidate(f"{base}, refit on all {X.shape[0]} rows", "refit", model, n_sv, seconds,
                      note=f"the chosen {chosen.name} trained again on the training and validation parts")
    log.step("refit", f"{final.name} (returned)", f"{what}: the chosen kind and size, trained on every row "
                                                  "(as GridSearchCV's refit); no validation accuracy", seconds)
    return final


def seconds_per_1000(predict, X, repeats=5) -> float:
    """Best-of-``repeats`` wall time of ``predict(X)``, per 1000 rows."""
    best = np.inf
    for _ in range(repeats):
        _, seconds = _timed(predict, X)
        best = min(best, seconds)
    return 1000.0 * best / X.shape[0]


def libsvm_reference(X, y, C, gamma, class_weight=None):
    """LIBSVM's full model (scikit-learn ``SVC``, the same C, gamma and class weights)."""
    from sklearn.svm import SVC as LibsvmSVC

    X = _int32_indices(X)
    return LibsvmSVC(C=C, gamma=gamma, cache_size=500, class_weight=class_weight).fit(X, y), X


#: prediction costs are timed on at most this many rows of the measured part
TIMING_ROWS = 5000


def measure_prediction_cost(candidates, X, reference=None, repeats=5):
    """Fill ``seconds_per_1000`` of every candidate; return LIBSVM's (or None)."""
    for c in candidates:
        c.seconds_per_1000 = seconds_per_1000(c.model.predict, X, repeats)
    if reference is None:
        return None
    return seconds_per_1000(reference.predict, _int32_indices(X), repeats)


# -- the whole job ---------------------------------------------------------------------
def _check_inputs(X, y, max_accuracy_drop, budget_seconds, margin_sd=0.0):
    from sklearn.utils import check_X_y

    from sklearn.utils.multiclass import type_of_target

    X, y = check_X_y(X, y, accept_sparse="csr", dtype=np.float64)
    if type_of_target(y) == "continuous":
        raise ValueError(f"fit_lean chooses classifiers, and the labels look like regression targets "
                         f"({np.unique(y).size} distinct non-integer values); for regression use "
                         "leansvm.lean_regression.fit_lean_regression (what `leansvm fit` runs on such "
                         "targets), or leansvm.SVRCV / leansvm.SVR, leansvm.BSGDRegressor, leansvm.compress")
    if np.unique(y).size < 2:
        raise ValueError("fit_lean needs samples of at least two classes")
    if not (np.isfinite(max_accuracy_drop) and 0 <= max_accuracy_drop < 1):
        raise ValueError(f"max_accuracy_drop is a fraction in [0, 1), got {max_accuracy_drop!r} "
                         "(0.005 is half a percentage point)")
    if budget_seconds is not None and not budget_seconds > 0:
        raise ValueError(f"budget_seconds must be positive, got {budget_seconds!r}")
    if not (np.isfinite(margin_sd) and margin_sd >= 0):
        raise ValueError(f"margin_sd must be a non-negative number of standard errors, got {margin_sd!r}")
    return X, y


def prepare_table(X, y, X_test, y_test, target, impute, log):
    """Stage 1, for a pandas DataFrame: the target column split off (``target``, else ``y``),
    numeric columns imputed and standardised, categorical ones one-hot encoded
    (:class:`leansvm.preprocessing.tabular.TablePreprocessor`, fitted on the training rows and kept with the
    returned model). Anything else passes through. Returns (X, y, X_test, y_test, preprocessor)."""
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
    prep = TablePreprocessor(impute=impute).fit(X)
    log.step("preprocess", prep.describe(), "fitted on the training rows, kept with the model")
    return prep.transform(X), y, None if X_test is None else prep.transform(X_test), y_test, prep


def scale_features(X, X_test, scale, log):
    """Stage 1 for a matrix, as LIBSVM's guide and easy.py do (svm-scale): features standardised
    (dense) or divided by their largest absolute value (sparse, zeros kept), fitted on the
    training rows and kept with the model (:class:`leansvm.preprocessing.scaling.FeatureScaler`; a LIBSVM model
    file gets svm-scale's range file beside it). ``scale=False`` leaves X as given.
    Returns (X, X_test, scaler or None)."""
    if not scale:
        return X, X_test, None
    from sklearn.utils import check_array

    from leansvm.preprocessing.scaling import FeatureScaler

    scaler = FeatureScaler().fit(X)
    log.step("scale", scaler.describe(), "as svm-scale before LIBSVM (its practical guide): RBF distances "
             "weigh every feature alike whatever its units; fitted on the training rows")
    if X_test is not None:
        X_test = scaler.transform(check_array(X_test, accept_sparse="csr", dtype=np.float64))
    return scaler.transform(X), X_test, scaler


def _prepare_data(X, y, X_test, y_test, target, impute, scale, max_accuracy_drop, budget_seconds, margin_sd, log):
    """Stage 1: a table's columns encoded (:func:`prepare_table`) or a matrix scaled (:func:`scale_features`),
    inputs checked; returns (X, y, X_test, y_test, preprocessor or None, data summary)."""
    X, y, X_test, y_test, preprocessor = prepare_table(X, y, X_test, y_test, target, impute, log)
    X, y = _check_inputs(X, y, max_accuracy_drop, budget_seconds, margin_sd)
    if preprocessor is None:
        X, X_test, preprocessor = scale_features(X, X_test, scale, log)
    summary = summarize_data(X, y, X_test, y_test)
    log.step("data", f"{summary['n_train']} samples x {summary['n_features']} features, "
                     f"{len(summary['classes'])} classes",
             ("sparse" if summary["sparse"] else "dense") + f"; test part: {summary['n_test'] or 'none'}")
    return X, y, X_test, y_test, preprocessor, summary


def _choose_hyperparameters(X, y, X_fit, y_fit, Cs, gammas, selection_size, n_folds, one_se, class_weight,
                            random_state, budget_seconds, log) -> Selection:
    """Stage 3: (C, gamma) by the wide search, or on the grid ``Cs`` x ``gammas`` when either is given;
    then how much screening saves along C's path there (reported, not used for a choice)."""
    X_sel, y_sel = _subsample(X_fit, y_fit, selection_size, random_state)
    if Cs is None and gammas is None:
        # every training row, as grid.py: the folds hold rows out (the validation part only
        # chooses among the models trained at this (C, gamma) later)
        selection = search_hyperparameters(X, y, selection_size, n_folds, one_se, class_weight,
                                           random_state, log, time_limit=budget_seconds)
    else:
        scale = resolve_gamma("scale", X_fit)
        Cs = DEFAULT_C_GRID if Cs is None else Cs
        gammas = tuple(f * scale for f in DEFAULT_GAMMA_FACTORS) if gammas is None else gammas
        selection = select_hyperparameters(X_sel, y_sel, Cs, gammas, n_folds, random_state, log)
    C = selection.C
    selection.screening = screening_along_path(X_sel, y_sel, C / 2 ** 5, C * 2 ** 4, selection.gamma,
                                               random_state=random_state, log=log)
    return selection


def _choose_route(X_fit, y_fit, C, gamma, budget_seconds, random_state, log):
    """Stage 4: exact training, or budget training when the exact fit's estimated time exceeds
    ``budget_seconds``; returns (route, (measured seconds, sample size, power) or None)."""
    if budget_seconds is None:
        log.step("route", "exact training", "no time budget given")
        return "exact", None
    estimated, measured, size, power = estimate_exact_seconds(X_fit, y_fit, C, gamma, random_state=random_state)
    route = "exact" if estimated <= budget_seconds else "budget"
    log.step("route", f"{route} training",
             f"exact fit estimated at {estimated:.1f} s ({measured:.2f} s on {size} samples, "
             f"scaled by n^{power:.2f}) {'within' if route == 'exact' else 'over'} the budget of "
             f"{budget_seconds:g} s")
    return route, (measured, size, power)


def _train_candidates(X_fit, y_fit, C, gamma, route, timing, budget_seconds, size_fractions, class_weight,
                      random_state, log):
    """Stage 5: the exact model (on a subsample that fits half the budget on the budget route) and
    budget models at fractions of its size; returns (candidates, the exact one)."""
    if route == "exact":
        exact = train_exact(X_fit, y_fit, C, gamma, random_state, class_weight)
        log.step("train", f"exact SVC: {exact.n_support} support vectors", f"IRWLS at C = {C:g}, gamma = {gamma:g}",
                 exact.fit_seconds)
        m = exact.n_support
        budgets = sorted({max(10, int(round(f * m))) for f in size_fractions if f * m < m})
    else:
        # the exact solver on the largest subsample whose estimated time is half the budget
        measured, size, power = timing
        n_sub = int(min(X_fit.shape[0], size * (0.5 * budget_seconds / max(measured, 1e-9)) ** (1 / power)))
        X_sub, y_sub = _subsample(X_fit, y_fit, max(n_sub, size), random_state)
        exact = train_exact(X_sub, y_sub, C, gamma, random_state, class_weight)
        exact.name = f"exact SVC ({X_sub.shape[0]} of {X_fit.shape[0]} samples)"
        log.step("train", f"{exact.name}: {exact.n_support} support vectors",
                 f"IRWLS at C = {C:g}, gamma = {gamma:g} on the largest subsample estimated to take half "
                 "the budget; the reference for compression", exact.fit_seconds)
        budgets = sorted({int(b) for b in (50, 100, 200, 500) if b < X_fit.shape[0]})
    return [exact] + train_budget_models(X_fit, y_fit, C, gamma, budgets, random_state, log), exact


def _compress_reference(reference, candidates, X_fit, y_fit, X_val, y_val, max_accuracy_drop, margin_sd,
                        compression_points, compression_limit, random_state, log):
    """Stage 6: every candidate validated, then compressed models of ``reference`` below the smallest
    candidate that already qualifies (:func:`compress_models`)."""
    for c in candidates:
        _validate(c, X_val, y_val)
    best = max(candidates, key=lambda c: c.validation_accuracy)
    target = best.validation_accuracy - max_accuracy_drop
    # a compressed model is only worth trying below the smallest model that already qualifies
    qualified = [c.n_support for c in candidates
                 if c.validation_accuracy >= required_accuracy(c, best, max_accuracy_drop, margin_sd) - 1e-12]
    return compress_models(reference, X_fit, y_fit, X_val, y_val, target, min_points=compression_points,
                           time_limit=compression_limit, random_state=random_state, log=log, best=best,
                           margin_sd=margin_sd, below=min(qualified, default=None))


def _measure(candidates, X_fit, y_fit, X_val, X_test, y_test, C, gamma, class_weight, libsvm_reference_model,
             budget_seconds, random_state, log):
    """Stage 9, measurements never used for a choice: test accuracy, LIBSVM's full model at the same
    (C, gamma) and the prediction cost of every model; returns LIBSVM's (seconds per 1000
    predictions, #SV, test accuracy), None where not measured."""
    X_measure = X_test if X_test is not None else X_val
    if X_test is not None:
        for c in candidates:
            c.test_accuracy = _accuracy(c.model, X_test, y_test)
    X_timing = X_measure[:TIMING_ROWS]
    libsvm_model = libsvm_n_sv = libsvm_acc = libsvm_estimate = None
    if libsvm_reference_model and budget_seconds is not None:
        from sklearn.svm import SVC as LibsvmSVC
        libsvm_estimate, _, _, _ = estimate_fit_seconds(lambda: LibsvmSVC(C=C, gamma=gamma, class_weight=class_weight),
                                                        X_fit, y_fit, random_state=random_state)
    if libsvm_reference_model and (libsvm_estimate is None or libsvm_estimate <= budget_seconds):
        (libsvm_model, _), libsvm_fit = _timed(libsvm_reference, X_fit, y_fit, C, gamma, class_weight)
        libsvm_n_sv = int(libsvm_model.n_support_.sum())
        if X_test is not None:
            libsvm_acc = float(np.mean(_same_labels(libsvm_model.predict(_int32_indices(X_test)), y_test)))
        log.step("reference", f"LIBSVM (scikit-learn SVC): {libsvm_n_sv} support vectors",
                 "the full model at the same C and gamma, for test-time cost", libsvm_fit)
    elif libsvm_reference_model:
        log.step("reference", "LIBSVM full model not trained",
                 f"its estimated training time ({libsvm_estimate:.0f} s) exceeds the time budget")
    libsvm_seconds = measure_prediction_cost(candidates, X_timing, libsvm_model)
    log.step("measure", f"prediction cost on {X_timing.shape[0]} rows",
             "best of 5 runs, seconds per 1000 predictions (machine shared: ratios, not absolutes)")
    return libsvm_seconds, libsvm_n_sv, libsvm_acc


def fit_lean(X, y=None, *, X_test=None, y_test=None, target=None, impute=None, scale=True, max_accuracy_drop=0.005,
             budget_seconds=None, Cs=None, gammas=None, n_folds=5, validation_fraction=0.2, selection_size=4000,
             one_se=0.0, class_weight=None,
             size_fractions=DEFAULT_SIZE_FRACTIONS, compression_points=20000, libsvm_reference_model=True,
             random_state=0, verbose=False, progress=None, margin_sd=1.0, refit=True) -> LeanResult:
    """From data to the cheapest accurate model; see the module docstring for the stages.

    ``X`` is a matrix (dense or sparse) with labels ``y``, or a pandas DataFrame
    of raw columns (numeric, categorical, with missing values when ``impute``
    is "median" or "most_frequent"): then the labels are ``y`` or the column
    named ``target``, and the returned model (a scikit-learn ``Pipeline`` of the
    preprocessing and the kernel model) predicts on DataFrames of the same columns
    (:func:`prepare_table`). A matrix is scaled first (``scale=True``, :func:`scale_features`):
    the returned model is then such a ``Pipeline`` too, predicting unscaled inputs.

    ``max_accuracy_drop`` is a fraction (0.005 = half a percentage point), as in
    ``compress``. ``budget_seconds`` bounds the estimated exact training time
    (and, times ``COMPRESSION_BUDGET_FACTOR``, the compression size search; the
    (C, gamma) search starts no halving round past it):
    above it, the exact solver runs on the largest subsample estimated to take
    half the budget (the model compression starts from), beside budget models
    on all rows. ``size_fractions``: budgets of the budget models as fractions
    of the exact model's #SV; ``compression_points``: the fewest training
    rows a compressed model is fitted on (all training rows when there are fewer;
    ``POINTS_PER_VECTOR`` per vector beyond). Measured (BENCHMARKS.md): 8000 rather
    than 2000 took a9a from no qualifying compressed model to 115 SV within 0.1
    point on test, and magic from 453 to 226 SV; letter's one-vs-one outputs need
    more (each pair is fitted only at its two classes' points): at 800 vectors,
    0.9695 on test from 8000 rows, 0.9753 from all 16000 (the full model: 0.978),
    while magic and a9a do not change. Hyperparameters: by default the wide
    search (:func:`search_hyperparameters`, :mod:`leansvm.paths.search`: C 2^-5..2^15,
    gamma 2^-12..2^6 times 1/(d Var X), ``n_folds``-fold CV, successive halving
    up to ``selection_size`` rows; the best cell by default; ``one_se`` > 0: the
    fewest support vectors within that many standard errors of the best cell. Not
    the default: on magic it moved to C = 2^15 on the small-gamma ridge (fewer SV
    at larger C), and the exact fit took 144 s instead of about 3 s; the cheaper
    model is chosen later, among trained models, by ``margin_sd``); ``Cs`` and/or ``gammas``
    given: that grid (the other axis: C in 1, 10, 100 or gamma 0.3, 1, 3 times
    'scale') on ``selection_size`` rows. ``class_weight`` (None, 'balanced' or a
    dict) weighs C per class in the search, the exact models and LIBSVM's
    reference (not in the budget models). Models are trained on the training rows minus a stratified
    ``validation_fraction`` used to choose among them; ``X_test, y_test``
    (optional) are only measured, never used for a choice. ``margin_sd``: a
    model counts as within the drop only when its validation accuracy clears
    it by that many standard errors of its paired difference to the best
    model (:func:`required_accuracy`; 1 by default, about 84 % confidence
    that the drop holds on new data too; 0 for the plain rule). Measured: with
    0, magic's 113-vector model was 0.39 points below on validation but 1.19
    on test; with 1, a9a's compressed models (0.4-0.5 points below on
    validation) do not qualify. ``verbose``: print
    every step. ``refit``: return the choice trained again on all training
    rows (:func:`refit_on_all_rows`; exact route only); False returns the
    validated model itself. ``progress``: progress bars (with the time left) of the long
    operations inside (path search, compression, budget training); None: when
    ``verbose`` or on a terminal (:mod:`leansvm.progress`). Ctrl-C stops it with
    a line naming the last finished step; ``KeyboardInterrupt`` propagates.
    """
    log = _Log(verbose)
    start = time.perf_counter()
    try:
        with default_progress(progress_enabled(True if progress is None and verbose else progress)):
            X, y, X_test, y_test, preprocessor, summary = _prepare_data(
                X, y, X_test, y_test, target, impute, scale, max_accuracy_drop, budget_seconds, margin_sd, log)
            X_fit, y_fit, X_val, y_val = split_validation(X, y, validation_fraction, random_state)
            log.step("split", f"{X_fit.shape[0]} for training, {X_val.shape[0]} for validation",
                     f"stratified hold-out of {100 * validation_fraction:g}% for choosing among models")
            selection = _choose_hyperparameters(X, y, X_fit, y_fit, Cs, gammas, selection_size, n_folds, one_se,
                                                class_weight, random_state, budget_seconds, log)
            C, gamma = selection.C, selection.gamma
            route, timing = _choose_route(X_fit, y_fit, C, gamma, budget_seconds, random_state, log)
            candidates, reference = _train_candidates(X_fit, y_fit, C, gamma, route, timing, budget_seconds,
                                                      size_fractions, class_weight, random_state, log)
            # the size search, and the refit after it, each stop at this many seconds
            compression_limit = None if budget_seconds is None else COMPRESSION_BUDGET_FACTOR * budget_seconds
            candidates += _compress_reference(reference, candidates, X_fit, y_fit, X_val, y_val, max_accuracy_drop,
                                              margin_sd, compression_points, compression_limit, random_state, log)
            chosen = choose_model(candidates, max_accuracy_drop, log, margin_sd)
            final = None
            if refit and route == "exact":
                final = refit_on_all_rows(chosen, X, y, C, gamma, compression_points, compression_limit,
                                          random_state, log, n_fit=X_fit.shape[0], class_weight=class_weight)
                if final is not None:
                    candidates.append(final)
            elif refit:
                log.step("refit", "not refit", "the exact solver does not fit the time budget on all rows; "
                                               "the validated model is returned")
            final = final or chosen
            libsvm = _measure(candidates, X_fit, y_fit, X_val, X_test, y_test, C, gamma, class_weight,
                              libsvm_reference_model, budget_seconds, random_state, log)
            data_2d = None
            if X.shape[1] == 2:
                data_2d = (X_fit.toarray() if sp.issparse(X_fit) else X_fit, y_fit)
            model = final.model if preprocessor is None else io.with_preprocessing(preprocessor, final.model)
            return LeanResult(model, chosen, candidates, selection, route, log.steps, summary,
                              max_accuracy_drop, *libsvm, data_2d,
                              np.unique(y), time.perf_counter() - start, final,
                              None if preprocessor is None else preprocessor.describe())
    except KeyboardInterrupt as exc:
        last = log.steps[-1].stage if log.steps else "none"
        where = f"leansvm fit after {time.perf_counter() - start:.0f} s, last finished step: {last}"
        if interrupts.active():                # the command prints it on its one line
            interrupts.add_context(exc, where)
        else:
            print(f"leansvm fit: interrupted (Ctrl-C) after {time.perf_counter() - start:.0f} s; "
                  f"last finished step: {last}", file=sys.stderr, flush=True)
        raise


def format_table(result: LeanResult) -> str:
    """The final table: model, #SV, validation / test accuracy, prediction cost vs LIBSVM."""
    rows = [("model", "#SV", "val acc", "test acc", "ms/1000 pred", "speed vs LIBSVM")]
    lib = result.libsvm_seconds_per_1000
    for c in sorted(result.candidates, key=lambda c: (c.kind != "exact", c.kind == "refit", c.n_support)):
        mark = " *" if c is result.chosen else (" **" if c is result.final else "")
        rows.append((c.name + mark, str(c.n_support), accuracy_cell(c.validation_accuracy),
                     accuracy_cell(c.test_accuracy),
                     f"{1000 * c.seconds_per_1000:.2f}",
                     "-" if lib is None else f"{lib / c.seconds_per_1000:.1f}x"))
    if lib is not None:
        rows.append(("LIBSVM full (sklearn SVC)", str(result.libsvm_n_support), "-",
                     accuracy_cell(result.libsvm_test_accuracy),
                     f"{1000 * lib:.2f}", "1.0x"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths)))
             for r in rows]
    legend = "(* = chosen model" + ("; ** = returned: the chosen model refit on all rows)"
                                    if result.final is not result.chosen else ")")
    return "\n".join(lines + [legend])


def save_result_model(result: LeanResult, path) -> str:
    """Write the chosen model: LIBSVM file when it can hold it, else native ``.npz``; returns the path used."""
    import os

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
        print(f"note: a LIBSVM file cannot hold this model ({exc}); wrote leansvm's native format "
              f"to {native}", file=sys.stderr)
        return native
