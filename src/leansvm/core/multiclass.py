"""One-vs-one and one-vs-rest reductions over one shared support-vector pool.

Any binary trainer plugs in: a callable ``train_binary(X, y_pm, C) -> BinaryFit``
where ``y_pm`` is +1/-1, ``C`` the per-sample box bound, and ``BinaryFit``
carries ``alpha`` (n,), ``intercept`` b with f(x) = sum_i alpha_i y_i k(x_i, x) + b
and f > 0 meaning the +1 class.

LIBSVM's one-vs-one conventions are kept exactly:

* pairs are ordered (0,1), (0,2), ..., (0,k-1), (1,2), ...; in pair (i, j)
  class i is the +1 class, so output column p > 0 votes for i;
* the support-vector pool is grouped by class (class order, then training order);
* a vote tie goes to the lowest class index.

For a binary problem the single output column is negated (f > 0 means
``classes_[1]``) as scikit-learn does.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
from sklearn.utils.multiclass import _ovr_decision_function

from leansvm.core.expansion import KernelExpansion
from leansvm.core.threads import run_parallel


@dataclass
class BinaryFit:
    """What a binary trainer returns: dual variables alpha >= 0, bias b and statistics."""

    alpha: np.ndarray
    intercept: float
    dual_objective: float = float("nan")
    n_iter: int = 0
    converged: bool = True
    stats: dict = field(default_factory=dict)

    def kept_stats(self) -> dict:
        """The statistics a fitted estimator keeps (``solver_stats_``): all but the per-sample outputs,
        which a path or a screening rule reads during the fit and a pickled model need not carry."""
        return {k: v for k, v in self.stats.items() if k != "outputs"}


def ovo_pairs(n_classes: int) -> list[tuple[int, int]]:
    """LIBSVM's pair order (0,1), (0,2), ..., (k-2, k-1)."""
    return [(i, j) for i in range(n_classes) for j in range(i + 1, n_classes)]


def n_binary_problems(n_classes: int, strategy: str = "ovo") -> int:
    """Binary problems trained for ``n_classes``: k(k-1)/2 one-vs-one, k one-vs-rest (1 for two)."""
    if n_classes <= 2:
        return 1
    return n_classes if strategy == "ovr" else n_classes * (n_classes - 1) // 2


@dataclass
class MulticlassFit:
    """The pooled expansion plus per-problem fits and, per pool entry, its training index."""

    expansion: KernelExpansion
    support: np.ndarray          # training indices of the pooled support vectors
    n_support: np.ndarray        # pool size per class
    fits: list                   # BinaryFit per output column (before any sign flip)
    strategy: str


def _pool(support_sets, y_enc, n_classes):
    """Union of support indices, grouped by class then training order (LIBSVM layout)."""
    union = np.unique(np.concatenate(support_sets)) if support_sets else np.array([], dtype=np.intp)
    order = np.lexsort((union, y_enc[union]))
    support = union[order]
    n_support = np.bincount(y_enc[support], minlength=n_classes)
    return support, n_support


#: up to this many training rows the problems are solved one after another in the caller's thread:
#: starting a pool of threads cost 6 ms of a 10 ms fit on iris (150 rows, three pairs of 0.7 ms)
SERIAL_ROWS = 500


def _jobs_for(n_rows, n_jobs):
    """``n_jobs``, or 1 for a problem of at most :data:`SERIAL_ROWS` rows (``n_jobs`` checked
    either way: joblib's error for 0)."""
    from joblib import effective_n_jobs
    effective_n_jobs(n_jobs)
    return 1 if n_rows <= SERIAL_ROWS else n_jobs


def fit_ovo(X, y_enc, n_classes, train_binary, C, kernel, n_jobs=None) -> MulticlassFit:
    """Train k(k-1)/2 pairwise problems and pool them into one expansion."""
    pairs = ovo_pairs(n_classes)
    jobs = []
    members = []
    for i, j in pairs:
        idx = np.flatnonzero((y_enc == i) | (y_enc == j))
        y_pm = np.where(y_enc[idx] == i, 1.0, -1.0)
        members.append((idx, y_pm))
        jobs.append((train_binary, (X[idx], y_pm, C[idx])))
    fits = run_parallel(jobs, _jobs_for(X.shape[0], n_jobs))
    support_sets = [idx[fit.alpha > 0] for (idx, _), fit in zip(members, fits)]
    support, n_support = _pool(support_sets, y_enc, n_classes)
    position = np.full(y_enc.shape[0], -1, dtype=np.intp)
    position[support] = np.arange(support.size)
    coef = np.zeros((support.size, len(pairs)))
    for p, ((idx, y_pm), fit) in enumerate(zip(members, fits)):
        sv = fit.alpha > 0
        coef[position[idx[sv]], p] = fit.alpha[sv] * y_pm[sv]
    intercept = np.array([fit.intercept for fit in fits])
    if n_classes == 2:
        coef, intercept = -coef, -intercept
    expansion = KernelExpansion(X[support], coef, intercept, kernel)
    return MulticlassFit(expansion, support, n_support, fits, "ovo")


def fit_ovr(X, y_enc, n_classes, train_binary, C, kernel, n_jobs=None) -> MulticlassFit:
    """Train one class-against-the-rest problem per class over one pooled expansion."""
    if n_classes == 2:
        return fit_ovo(X, y_enc, n_classes, train_binary, C, kernel, n_jobs)
    jobs = []
    for c in range(n_classes):
        y_pm = np.where(y_enc == c, 1.0, -1.0)
        jobs.append((train_binary, (X, y_pm, C)))
    fits = run_parallel(jobs, _jobs_for(X.shape[0], n_jobs))
    support_sets = [np.flatnonzero(fit.alpha > 0) for fit in fits]
    support, n_support = _pool(support_sets, y_enc, n_classes)
    coef = np.zeros((support.size, n_classes))
    for c, fit in enumerate(fits):
        y_pm = np.where(y_enc[support] == c, 1.0, -1.0)
        coef[:, c] = fit.alpha[support] * y_pm
    intercept = np.array([fit.intercept for fit in fits])
    expansion = KernelExpansion(X[support], coef, intercept, kernel)
    return MulticlassFit(expansion, support, n_support, fits, "ovr")


# -- turning outputs into labels ------------------------------------------------------
@functools.lru_cache(maxsize=64)
def _pair_members(n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """The first and the second class of each one-vs-one pair, as read-only index arrays (built once per
    class count: for 26 classes building them took a third of a one-row prediction)."""
    first, second = np.array(ovo_pairs(n_classes), dtype=np.intp).reshape(-1, 2).T.copy()
    first.flags.writeable = second.flags.writeable = False
    return first, second


def ovo_votes(decision: np.ndarray, n_classes: int) -> np.ndarray:
    """(n, n_classes) vote counts of one-vs-one outputs (column p > 0 votes for pair[p][0]): one
    bincount over the winners' cells row * n_classes + class."""
    first, second = _pair_members(n_classes)
    n = decision.shape[0]
    cells = np.where(decision > 0, first, second) + (np.arange(n, dtype=np.intp) * n_classes)[:, None]
    return np.bincount(cells.ravel(), minlength=n * n_classes).reshape(n, n_classes)


def predict_index(decision: np.ndarray, n_classes: int, strategy: str) -> np.ndarray:
    """Class indices from expansion outputs."""
    if n_classes == 2:
        return (decision[:, 0] >= 0).astype(np.intp)  # LIBSVM: f_libsvm = -f <= 0 -> second label
    if strategy == "ovr":
        return np.argmax(decision, axis=1)
    return np.argmax(ovo_votes(decision, n_classes), axis=1)  # argmax: ties to the lowest index


def shape_decision(decision: np.ndarray, n_classes: int, strategy: str, shape: str) -> np.ndarray:
    """scikit-learn's ``decision_function`` shapes: binary -> (n,), 'ovo' -> pairs, 'ovr' -> classes."""
    if n_classes == 2:
        return decision[:, 0]
    if strategy == "ovr" or shape == "ovo":
        return decision
    votes_input = (decision < 0).astype(int)  # sklearn: column p predicts class j when negative
    return _ovr_decision_function(votes_input, -decision, n_classes)


# -- LIBSVM's compact coefficient layout ------------------------------------------------
def dense_from_libsvm_coef(sv_coef: np.ndarray, n_support: np.ndarray) -> np.ndarray:
    """LIBSVM's (k-1) x m ``sv_coef`` to the expansion's m x k(k-1)/2 matrix.

    For pair (i, j), the coefficient of a support vector of class i is stored
    in row j-1, that of a support vector of class j in row i.
    """
    n_classes = len(n_support)
    starts = np.concatenate(([0], np.cumsum(n_support)))
    coef = np.zeros((sv_coef.shape[1], len(ovo_pairs(n_classes))))
    for p, (i, j) in enumerate(ovo_pairs(n_classes)):
        si, sj = slice(starts[i], starts[i + 1]), slice(starts[j], starts[j + 1])
        coef[si, p] = sv_coef[j - 1, si]
        coef[sj, p] = sv_coef[i, sj]
    return coef


def libsvm_coef_from_dense(coef: np.ndarray, n_support: np.ndarray) -> np.ndarray:
    """Inverse of :func:`dense_from_libsvm_coef`."""
    n_classes = len(n_support)
    starts = np.concatenate(([0], np.cumsum(n_support)))
    sv_coef = np.zeros((n_classes - 1, coef.shape[0]))
    for p, (i, j) in enumerate(ovo_pairs(n_classes)):
        si, sj = slice(starts[i], starts[i + 1]), slice(starts[j], starts[j + 1])
        sv_coef[j - 1, si] = coef[si, p]
        sv_coef[i, sj] = coef[sj, p]
    return sv_coef
