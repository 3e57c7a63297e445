r"""Safe sample screening for the linear SVM in the primal (Ogawa et al., Table III setting).

Problem (the paper's eq. 1 with the bias as an augmented feature of value B,
``intercept_scaling``; exactly liblinear's / scikit-learn ``LinearSVC(loss='hinge',
dual=True, fit_intercept=True, intercept_scaling=B)`` objective):

    min_{w, w_b}  1/2 (||w||^2 + w_b^2) + C sum_i c_i max(0, 1 - y_i (x_i'w + B w_b))

z_i = y_i [x_i; B], ||z_i||^2 = ||x_i||^2 + B^2; the intercept is B w_b.
With w explicit, every quantity the rules of :mod:`.screening` need is a
sparse product, O(nnz(X)), and no kernel row is ever formed:

    margins       g_i   = z_i'w~                = y_i (X w~ + B w~_b)_i
    free part     z_i'u,  u = sum_{0 < a~_j < C~ c_j} a~_j z_j  (one X'(.) and one X(.))
    norms         ||w~||^2, ||u||^2, u'w~        (d-vectors)

and the rules are then the same O(n) formulas as for kernels
(:func:`.screening.screen` on a :class:`.screening.ScreeningReference`).

Solvers of the reduced problem (samples proven in R dropped, those proven in
L held at C c_i):

* ``"cd"``: liblinear's dual coordinate descent (Hsieh et al. 2008, Alg. 1
  with shrinking; random order per epoch) compiled with numba, on the active
  samples only, warm-started from the reference (at-bound SVs moved to the
  new C, as the kernel path does). It returns the dual point a, from which
  the next reference (and its duality gap, the rules' safeguard) is built.
* ``"liblinear"``: scikit-learn's ``LinearSVC`` on the rows not in R (it has
  no way to hold samples at C or to warm-start, so L rows stay in the
  problem; the optimum is the same since only R rows are removed).

Stopping rule of "cd": liblinear's, max PG - min PG <= tol over the samples.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numba
import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from leansvm.core.jit import njit
from leansvm.exact.box_cd import box_start
from leansvm.paths.screening import DEFAULT_SLACK, RULES, ScreeningReference, screen

__all__ = ["LinearSolution", "solve_linear_cd", "linear_reference", "screen_linear",
           "objective", "linear_path", "fit_liblinear", "screened_solve"]


def _as_csr(X):
    """float64 CSR with int32 column indices (one compiled variant), no copy when already so."""
    X = sp.csr_matrix(X, dtype=np.float64)
    if X.indices.dtype != np.int32:
        X.indices = X.indices.astype(np.int32)
    if X.indptr.dtype != np.int64:
        X.indptr = X.indptr.astype(np.int64)
    return X


@njit(cache=True)
def _dual_cd(indptr, indices, data, y, upper, alpha, w, wb, bias2, qd, index, n_active, tol, max_epochs, seed,
             shrinking):
    """liblinear's solve_l2r_l1l2_svc (L1 loss) on the samples index[:n_active].

    w (d,) and wb[0] (bias weight, feature value sqrt(bias2)) are kept equal to
    sum_i a_i z_i and updated in place. Returns (epochs, max PG - min PG).
    """
    state = np.uint64(seed * 2654435761 + 88172645463325252)
    B = np.sqrt(bias2)
    act = n_active
    pg_max_old = np.inf
    pg_min_old = -np.inf
    gap = np.inf
    epoch = 0
    while epoch < max_epochs:
        pg_max = -np.inf
        pg_min = np.inf
        for s in range(act):                     # random order over the active samples (xorshift64)
            state ^= state << np.uint64(13)
            state ^= state >> np.uint64(7)
            state ^= state << np.uint64(17)
            t = s + np.int64(state % np.uint64(act - s))
            tmp = index[s]
            index[s] = index[t]
            index[t] = tmp
        s = 0
        while s < act:
            i = index[s]
            g = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                g += w[indices[p]] * data[p]
            g = y[i] * (g + B * wb[0]) - 1.0
            a = alpha[i]
            c = upper[i]
            pg = 0.0
            if a <= 0.0:
                if shrinking and g > pg_max_old:
                    act -= 1
                    index[s] = index[act]
                    index[act] = i
                    continue
                if g < 0.0:
                    pg = g
            elif a >= c:
                if shrinking and g < pg_min_old:
                    act -= 1
                    index[s] = index[act]
                    index[act] = i
                    continue
                if g > 0.0:
                    pg = g
            else:
                pg = g
            if pg > pg_max:
                pg_max = pg
            if pg < pg_min:
                pg_min = pg
            if abs(pg) > 1e-12:
                new = min(max(a - g / qd[i], 0.0), c)
                d = (new - a) * y[i]
                alpha[i] = new
                for p in range(indptr[i], indptr[i + 1]):
                    w[indices[p]] += d * data[p]
                wb[0] += d * B
            s += 1
        epoch += 1
        if act == 0:
            pg_max = 0.0
            pg_min = 0.0
        gap = pg_max - pg_min
        if gap <= tol:
            if act == n_active:
                break
            act = n_active                       # converged on the shrunk set: check every sample
            pg_max_old = np.inf
            pg_min_old = -np.inf
            continue
        pg_max_old = pg_max if pg_max > 0.0 else np.inf
        pg_min_old = pg_min if pg_min < 0.0 else -np.inf
    return epoch, gap


@dataclass
class LinearSolution:
    """A linear SVM solution of the augmented-bias problem: dual point, primal weights, statistics."""

    C: float
    alpha: np.ndarray            # (n,) 0 <= a_i <= C c_i; NaN-free
    w: np.ndarray                # (d,)
    w_bias: float                # weight of the constant feature; intercept = B w_bias
    intercept_scaling: float
    n_iter: int
    converged: bool
    stats: dict = field(default_factory=dict)

    @property
    def intercept(self) -> float:
        return self.intercept_scaling * self.w_bias

    def decision_function(self, X) -> np.ndarray:
        return np.asarray(X @ self.w).ravel() + self.intercept


def _weights(y, sample_weight):
    n = y.size
    weights = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if weights.shape != (n,) or np.any(weights <= 0) or not np.all(np.isfinite(weights)):
        raise ValueError(f"sample_weight must be {n} positive finite values")
    return weights


def _z_norms(X, B):
    """||z_i|| = sqrt(||x_i||^2 + B^2), row by row of a CSR matrix (no copy of X)."""
    if X.nnz == 0:
        return np.full(X.shape[0], float(B))
    sq = np.add.reduceat(X.data * X.data, np.minimum(X.indptr[:-1], X.nnz - 1))
    sq[np.diff(X.indptr) == 0] = 0.0                     # reduceat gives junk on empty rows
    return np.sqrt(sq + B * B)


def _check_binary(X, y):
    X = _as_csr(X)
    y = np.asarray(y, dtype=np.float64).ravel()
    if X.shape[0] != y.size:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.size} labels")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("y must hold +1/-1 labels (binary problems only)")
    if np.unique(y).size < 2:
        raise ValueError("y must hold both classes")
    if not np.all(np.isfinite(X.data)):
        raise ValueError("X contains NaN or infinity")
    return X, y


def solve_linear_cd(X, y, C, *, intercept_scaling=1.0, tol=1e-3, alpha_init=None, fixed_at_zero=None,
                    fixed_at_C=None, max_iter=1000, shrinking=True, random_state=0, z_norms=None) -> LinearSolution:
    """Dual coordinate descent (liblinear's algorithm) for the augmented-bias linear SVM.

    ``C`` per-sample upper bounds (C c_i). ``alpha_init`` warm start (clipped
    to the box); samples in ``fixed_at_zero`` / ``fixed_at_C`` are held at
    0 / C_i and never visited (safe screening). ``max_iter`` bounds the epochs
    (ConvergenceWarning when reached). stats: ``violation`` (max PG - min PG),
    ``n_active``, ``seconds``. ``z_norms``: ||z_i|| = sqrt(||x_i||^2 + B^2) when known (a path's).
    """
    start = time.perf_counter()
    X, y = _check_binary(X, y)
    n = y.size
    C = np.broadcast_to(np.asarray(C, dtype=np.float64), (n,)).copy()
    B = float(intercept_scaling)
    if not B > 0:
        raise ValueError(f"intercept_scaling must be positive, got {intercept_scaling!r}")
    active, alpha = box_start(C, alpha_init, fixed_at_zero, fixed_at_C)
    coef = y * alpha
    w = np.asarray(X.T @ coef).ravel()
    wb = np.array([B * coef.sum()])
    qd = _z_norms(X, B) ** 2 if z_norms is None else np.asarray(z_norms, dtype=np.float64) ** 2
    if np.any(qd <= 0):
        raise ValueError("a sample has ||z_i|| = 0 (empty row with intercept_scaling 0)")
    index = np.flatnonzero(active).astype(np.int64)
    epochs, gap = _dual_cd(X.indptr, X.indices, X.data, y, C, alpha, w, wb, B * B, qd, index, index.size,
                           float(tol), int(max_iter), int(random_state), bool(shrinking))
    converged = bool(gap <= tol)
    if not converged:
        warnings.warn(f"linear dual coordinate descent stopped after {epochs} epochs with violation "
                      f"{gap:.3e} > tol={tol}", ConvergenceWarning, stacklevel=2)
    return LinearSolution(C=float(np.max(C)), alpha=alpha, w=w, w_bias=float(wb[0]), intercept_scaling=B,
                          n_iter=int(epochs), converged=converged,
                          stats={"violation": float(gap), "n_active": int(index.size),
                                 "seconds": time.perf_counter() - start})


def objective(X, y, w, intercept, C, intercept_scaling=1.0) -> float:
    """The augmented-bias primal objective 1/2 (||w||^2 + w_b^2) + sum_i C_i hinge_i, w_b = intercept / B."""
    margins = y * (np.asarray(X @ w).ravel() + intercept)
    wb = intercept / intercept_scaling
    return float(0.5 * (w @ w + wb * wb) + np.sum(np.asarray(C) * np.maximum(0.0, 1.0 - margins)))


def linear_reference(X, y, solution: LinearSolution, C_ref, weights=None, *, z_norms=None) -> ScreeningReference:
    """The :class:`ScreeningReference` of a linear solution at ``C_ref``, from sparse products only.

    margins g = y (X w + B w_b); the free-SV part u = X'(y a) over the free
    a_i plus its bias component; ||w||^2 etc. are d-vector products.
    """
    start = time.perf_counter()
    X, y = _check_binary(X, y)
    n = y.size
    weights = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    B = solution.intercept_scaling
    alpha = solution.alpha
    upper = C_ref * weights
    margins = y * (np.asarray(X @ solution.w).ravel() + B * solution.w_bias)
    free = (alpha > 0) & (alpha < upper)
    coef = np.where(free, y * alpha, 0.0)
    u = np.asarray(X.T @ coef).ravel()
    ub = B * coef.sum()
    free_margins = y * (np.asarray(X @ u).ravel() + B * ub)
    if z_norms is None:
        z_norms = _z_norms(X, B)
    ref = ScreeningReference.from_margins(None, y, C_ref, alpha, None, margins, free_margins,
                                          weights=weights, z_norms=z_norms)
    # exact d-vector norms (alpha @ margins equals ||w||^2 only when w = sum a z exactly)
    ref.w_norm2 = float(solution.w @ solution.w + solution.w_bias ** 2)
    ref.u_norm2 = float(u @ u + ub * ub)
    ref.wu = float(u @ solution.w + ub * solution.w_bias)
    ref.seconds = time.perf_counter() - start
    return ref


def screen_linear(ref: ScreeningReference, C, rule="it", slack=DEFAULT_SLACK):
    """:func:`.screening.screen` (the O(n) formulas once the reference's products are known)."""
    return screen(ref, C, rule, slack)


def fit_liblinear(X, y, C, *, sample_weight=None, intercept_scaling=1.0, tol=1e-3, max_iter=1000,
                  random_state=0):
    """scikit-learn's ``LinearSVC`` on the same augmented-bias problem: returns (w, intercept, seconds)."""
    from sklearn.svm import LinearSVC
    X = _as_csr(X)
    if X.indptr[-1] < 2**31:                     # LinearSVC accepts 32-bit indices only
        X = sp.csr_matrix((X.data, X.indices, X.indptr.astype(np.int32)), shape=X.shape)
    start = time.perf_counter()
    model = LinearSVC(C=float(C), loss="hinge", dual=True, fit_intercept=True, intercept_scaling=intercept_scaling,
                      tol=tol, max_iter=max_iter, random_state=random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y, sample_weight=sample_weight)
    return model.coef_.ravel().copy(), float(model.intercept_[0]), time.perf_counter() - start


@dataclass
class LinearPathPoint:
    """One C of a linear path: the solution and what screening did for it."""

    C: float
    solution: LinearSolution
    n_screened_R: int
    n_screened_L: int
    n_non_sv: int
    rule_seconds: float
    solve_seconds: float

    @property
    def n_screened(self) -> int:
        return self.n_screened_R + self.n_screened_L


def _warm_alpha(prev: LinearSolution, prev_upper, upper):
    """The previous dual point with its at-bound SVs moved to the new bound (the kernel path's warm start)."""
    return np.where((prev.alpha >= prev_upper) & (prev.alpha > 0), upper, prev.alpha)


def screened_solve(X, y, C, ref: ScreeningReference | None, *, rule="it", weights=None, solver="cd",
                   alpha_init=None, intercept_scaling=1.0, tol=1e-3, max_iter=1000, random_state=0,
                   z_norms=None):
    """Solve at ``C`` with the samples a rule proves (from ``ref``) held out. Returns
    (w, intercept, LinearSolution or None, in_R, in_L, rule seconds, solve seconds).

    solver 'cd': :func:`solve_linear_cd` with R at 0 and L at C c_i, warm from
    ``alpha_init``; 'liblinear': ``LinearSVC`` on the rows not in R (cold).
    """
    X, y = _check_binary(X, y)
    n = y.size
    weights = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    t0 = time.perf_counter()
    in_R = in_L = np.zeros(n, bool)
    if ref is not None and rule is not None:
        res = screen(ref, C, rule)
        in_R, in_L = res.in_R, res.in_L
    rule_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    if solver == "cd":
        sol = solve_linear_cd(X, y, C * weights, intercept_scaling=intercept_scaling, tol=tol,
                              alpha_init=alpha_init, fixed_at_zero=in_R, fixed_at_C=in_L, max_iter=max_iter,
                              random_state=random_state, z_norms=z_norms)
        w, b = sol.w, sol.intercept
    elif solver == "liblinear":
        keep = np.flatnonzero(~in_R)
        w, b, _ = fit_liblinear(X[keep], y[keep], C, sample_weight=weights[keep],
                                intercept_scaling=intercept_scaling, tol=tol, max_iter=max_iter,
                                random_state=random_state)
        sol = None
    else:
        raise ValueError(f"solver must be 'cd' or 'liblinear', got {solver!r}")
    return w, b, sol, in_R, in_L, rule_s, time.perf_counter() - t0


def linear_path(X, y, Cs, *, screening="it", sample_weight=None, intercept_scaling=1.0, tol=1e-3,
                warm_start=True, max_iter=1000, random_state=0) -> list[LinearPathPoint]:
    """Linear SVM (augmented bias) for every C of an ascending grid, in the primal.

    Each C is solved by :func:`solve_linear_cd` warm-started from the previous
    C, with the samples that ``screening`` ('it', 'bt1', 'bt2' or None) proves
    to be in R / L against the previous solution held at 0 / C c_i. The
    reference costs three sparse products (O(nnz)), the rule O(n).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Training rows.
    y : array-like of shape (n_samples,)
        Labels +1 / -1 (binary problems only).
    Cs : array-like
        The values of C, ascending.
    screening : str or None, default='it'
        The safe rule: 'it', 'bt1', 'bt2' (Ogawa et al.); None: warm starts only.
    sample_weight : array-like, optional
        Per-sample factor of the bounds C_i.
    intercept_scaling : float, default=1.0
        The constant feature of the augmented bias.
    tol : float, default=1e-3
        Stopping tolerance on the maximal KKT violation (LIBSVM's eps).
    warm_start : bool, default=True
        Start each C from the previous solution.
    max_iter : int, default=1000
        Bound on the coordinate-descent epochs per C.
    random_state : int, default=0
        Seed of the solvers.

    Returns
    -------
    list of LinearPathPoint
        One per C: the primal weights, bias and what screening did.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from leansvm import linear_path
    >>> X, y = make_classification(200, 5, random_state=0)
    >>> points = linear_path(X, 2 * y - 1, [0.01, 0.1, 1.0])          # labels +1 / -1
    >>> len(points)
    3
    """
    from leansvm.paths.binary_path import check_grid
    Cs = check_grid(Cs)
    if screening is not None and screening not in RULES:
        raise ValueError(f"screening must be one of {RULES} or None, got {screening!r}")
    X, y = _check_binary(X, y)
    weights = _weights(y, sample_weight)
    z_norms = _z_norms(X, intercept_scaling)
    points: list[LinearPathPoint] = []
    prev = ref = None
    pending = 0.0
    for k, C in enumerate(Cs):
        upper = C * weights
        alpha_init = None
        if warm_start and prev is not None:
            alpha_init = _warm_alpha(prev.solution, prev.C * weights, upper)
        _, _, sol, in_R, in_L, rule_s, solve_s = screened_solve(
            X, y, C, ref, rule=screening, weights=weights, alpha_init=alpha_init,
            intercept_scaling=intercept_scaling, tol=tol, max_iter=max_iter, random_state=random_state,
            z_norms=z_norms)
        ref = None
        if screening is not None and k + 1 < Cs.size:
            ref = linear_reference(X, y, sol, C, weights, z_norms=z_norms)
        n_non_sv = int(np.count_nonzero((sol.alpha <= 0) | (sol.alpha >= upper)))
        points.append(LinearPathPoint(float(C), sol, int(in_R.sum()), int(in_L.sum()), n_non_sv,
                                      rule_s + pending, solve_s))
        pending = ref.seconds if ref is not None else 0.0
        prev = points[-1]
    return points
