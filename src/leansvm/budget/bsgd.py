"""Budgeted stochastic gradient descent (BSGD) for the kernel SVM primal, with budget maintenance.

Primal objective (Qaadan & Glasmachers, arXiv:1806.10179, eq. (1)):

    P(w, b) = lambda/2 ||w||^2 + 1/n sum_i max(0, 1 - y_i (w'phi(x_i) + b)),   w = sum_j alpha_j phi(sv_j)

Pegasos step t (learning rate eta_t = 1 / (lambda t)): alpha <- (1 - 1/t) alpha; when
y_t f(x_t) < 1 the point joins the model with alpha = eta_t y_t. The unregularised bias b is held
fixed during a pass and set after it by exact minimisation of (1) over b with w fixed
(:func:`optimal_bias`, a weighted median of the hinge breakpoints), so each pass is a block coordinate step
in b. (A Pegasos step eta_t = n C / t on b is far too large: b is not shrunk by the regulariser, so the
first steps' noise of size n C never decays; the reference toolboxes have no bias at all, which on
imbalanced data such as a9a costs several points.) When the model holds more than ``budget`` vectors, budget maintenance (Wang, Crammer & Vucetic, JMLR 13, 2012, Sec. 4):

* removal: drop the vector of smallest |alpha|;
* projection: drop it and add alpha_r K^{-1} k_r to the others (the inverse kernel matrix
  is kept up to date in O(B^2) per change; weight degradation alpha_r^2 / (K^{-1})_rr);
* merge (Gaussian kernel): z = h x_i + (1 - h) x_j, kappa = k(x_i, x_j),

      alpha_z(h) = alpha_i kappa^((1-h)^2) + alpha_j kappa^(h^2)                       (closed form)
      degradation D(h) = alpha_i^2 + alpha_j^2 + 2 alpha_i alpha_j kappa - alpha_z(h)^2,

  h maximising |alpha_z| by golden-section search (h in [0, 1] for equal signs, outside it for
  opposite signs), or read from a precomputed table over (alpha ratio, kappa)
  (Glasmachers & Qaadan, arXiv:1806.10180), or by gradient steps on z (MM-GD);
* multi-merge with M = ``n_merge`` points (arXiv:1806.10179, Sec. 3): the first point has the
  smallest |alpha|, the M-1 partners have the smallest pairwise degradation with it; they are
  merged as a cascade of binary merges (Algorithm 1, MM-BSGD: ``merge_solver`` 'golden' or
  'lookup') or at once by gradient ascent on |sum_m alpha_m k(x_m, z)| (Algorithm 2, MM-GD:
  ``merge_solver='gradient'``).

The whole SGD pass, margins and maintenance run in numba (``cache=True``); the merge arithmetic is in
:mod:`.merging`, the kernel evaluations in :mod:`.sgd_kernels`, the bias and the convex refit after the
passes in :mod:`.bsgd_refit`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from numba import objmode

from leansvm.budget.merging import (GOLDEN_ITERATIONS, _gd_merge, _pair_h, cascade_guard, golden_h, lookup_table,
                                    merge_alpha, merge_degradation)
from leansvm.budget.sgd_kernels import _kernel_value, _margin, _store_row
from leansvm.core.expansion import KernelExpansion
from leansvm.core.jit import njit

MAINTENANCE = {"removal": 0, "projection": 1, "merge": 2}
#: the loss of the SGD steps: the hinge (classification) or the epsilon-insensitive loss (regression)
LOSSES = {"hinge": 0, "epsilon_insensitive": 1, "one_class": 2}
MERGE_SOLVERS = {"golden": 0, "lookup": 1, "gradient": 2}
KERNEL_CODES = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3}

_LN_KAPPA_FLOOR = -700.0         # exp() underflow guard
_PROJECTION_RIDGE = 1e-6         # K + ridge I is inverted for projection (duplicates make K singular)
_PROJECTION_REFRESH = 100        # the inverse is recomputed anew every this many projections
#: cascade='greedy' picks partners 2..M-1 among the GREEDY_POOL (M-1) best-ranked candidates.
#: 10 rather than 3: the pool then holds the light unmerged vectors near the merged point, so
#: cascades stop feeding heavy vectors into one (synth-200k B=519: |alpha| q90/median 10 -> 2.3,
#: M=3 accuracy 0.852/0.866 -> 0.871/0.875; checker-100k B=26 0.935/0.919 -> 0.973/0.979; 30: no gain)
GREEDY_POOL = 10

# fit_stats layout (float64 array); ST_MASS_IN / ST_MASS_OUT: sum over merges of sum_m |alpha_m|
# and of |alpha_z| (binary problems); ST_UNMERGED: vectors never merged at the end of the last pass
(ST_MAINT, ST_MERGES, ST_MAINT_TIME, ST_ADDED, ST_DEGR, ST_GD_ITER, ST_REMOVED, ST_STEPS,
 ST_MASS_IN, ST_MASS_OUT, ST_UNMERGED) = range(11)
N_STATS = 11
UNMERGED_RTOL = 1e-6             # |alpha_j| lambda t within this of 1: sv_j was never merged


@dataclass
class BudgetState:
    """Everything SGD needs to continue on one binary problem (and what ``partial_fit`` keeps).

    ``support_vectors`` (m x d), ``alpha`` (m,) with f(x) = sum_j alpha_j k(sv_j, x) + bias,
    ``t`` steps taken so far, ``lam`` the regularisation parameter lambda. A multi-class model
    with one shared budget (Crammer-Singer, :mod:`.bsgd_crammer_singer`) has ``alpha`` (m x K)
    and f_k(x) = sum_j alpha_jk k(sv_j, x) + bias_k (bias 0 after SGD; one per class, an array,
    after the classifier's refit).
    """

    support_vectors: np.ndarray
    alpha: np.ndarray
    bias: float = 0.0
    t: int = 0
    lam: float = 1.0
    stats: np.ndarray = field(default_factory=lambda: np.zeros(N_STATS))
    degradations: list = field(default_factory=list)

    @classmethod
    def empty(cls, n_features: int, lam: float, n_classes: int | None = None) -> "BudgetState":
        """No vectors yet; ``n_classes`` given: a shared-budget multi-class (Crammer-Singer) state."""
        alpha = np.zeros(0) if n_classes is None else np.zeros((0, int(n_classes)))
        return cls(np.zeros((0, n_features)), alpha, 0.0, 0, float(lam))

    @property
    def shared_multiclass(self) -> bool:
        return self.alpha.ndim == 2

    @property
    def n_support(self) -> int:
        return self.alpha.shape[0]


@dataclass(frozen=True)
class BudgetConfig:
    """Settings of the compiled SGD loop: its loss and budget maintenance (numeric codes).

    ``loss='hinge'`` steps on max(0, 1 - y f(x)) (y = +1 / -1); ``'epsilon_insensitive'`` on
    max(0, |y - f(x)| - epsilon) (regression): a point outside the tube joins the model with
    alpha = eta sign(y - f(x)), the same step with the residual's sign for the label.
    ``'one_class'``: Schoelkopf's one-class primal scaled by nu = lambda, lambda/2 ||w||^2 +
    1/n sum_i max(0, rho - w'phi_i) - lambda rho, with f = w'phi - rho (bias = -rho): a point
    with f(x) < 0 joins with alpha = eta, and every step moves the bias by
    eta ([f(x) < 0] - lambda) (the offset's stochastic gradient, as scikit-learn's
    SGDOneClassSVM); y is ignored.

    ``same_sign_merge`` restricts merge partners to vectors whose coefficient has the sign of
    the first one (an option for experiments: on a9a it changed nothing, on checker-100k at
    B=100 it cost 0.1 points at M=2 and over 20 points at M=3).

    ``merge_guard`` = tau > 0 (beyond the paper; 0 = off, the paper's Algorithm 1): in a cascade,
    partner q >= 2 is merged only while its actual degradation against the merged point z is at
    most tau times the first binary merge's; otherwise the cascade stops early (fewer than M
    points merged this time). It bounds the extra degradation multi-merge can cause where
    kernels are narrow and partners far apart.

    ``cascade``: how the M-1 partners of a multi-merge are chosen. 'ranked' (the paper): the M-1
    smallest pairwise degradations against the first point. 'greedy' (beyond the paper): the
    first partner as before, then each next one among the ``GREEDY_POOL`` (M-1) = 10 (M-1)
    best-ranked candidates by its degradation against the current merged point z (so the
    cascade merges what suits z, not the first point); (M-2) 10 (M-1) extra h searches per
    maintenance step.
    """

    budget: int
    maintenance: str = "merge"
    n_merge: int = 2
    merge_solver: str = "golden"
    kernel: str = "rbf"
    gamma: float = 1.0
    coef0: float = 0.0
    degree: int = 3
    golden_iterations: int = GOLDEN_ITERATIONS
    same_sign_merge: bool = False
    merge_guard: float = 0.0
    cascade: str = "ranked"
    loss: str = "hinge"
    epsilon: float = 0.0

    def __post_init__(self):
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {tuple(LOSSES)}, got {self.loss!r}")
        if not (np.isfinite(self.epsilon) and self.epsilon >= 0):
            raise ValueError(f"epsilon must be a finite number >= 0, got {self.epsilon!r}")
        if int(self.budget) != self.budget or self.budget < 1:
            raise ValueError(f"budget must be a positive integer, got {self.budget!r}")
        if self.maintenance not in MAINTENANCE:
            raise ValueError(f"maintenance must be one of {tuple(MAINTENANCE)}, got {self.maintenance!r}")
        if self.merge_solver not in MERGE_SOLVERS:
            raise ValueError(f"merge_solver must be one of {tuple(MERGE_SOLVERS)}, got {self.merge_solver!r}")
        if self.cascade not in ("ranked", "greedy"):
            raise ValueError(f"cascade must be 'ranked' or 'greedy', got {self.cascade!r}")
        if int(self.n_merge) != self.n_merge or self.n_merge < 2:
            raise ValueError(f"n_merge must be an integer >= 2, got {self.n_merge!r}")
        if self.maintenance == "merge":
            if self.kernel != "rbf":
                raise ValueError("maintenance='merge' needs the Gaussian (rbf) kernel; "
                                 f"use 'removal' or 'projection' with kernel={self.kernel!r}")
            if self.n_merge > self.budget + 1:
                raise ValueError(f"n_merge={self.n_merge} exceeds budget + 1 = {self.budget + 1}")
        if self.kernel not in KERNEL_CODES:
            raise ValueError(f"kernel must be one of {tuple(KERNEL_CODES)}, got {self.kernel!r}")


def check_regularisation(C, lambda_) -> None:
    """ValueError unless at most one of C and lambda_ is given, each a positive finite number."""
    if C is not None and lambda_ is not None:
        raise ValueError("give either C or lambda_, not both")
    for name, v in (("C", C), ("lambda_", lambda_)):
        if v is not None and not (np.isscalar(v) and np.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be a positive finite number, got {v!r}")


def config_of(estimator, kernel, **loss) -> BudgetConfig:
    """The :class:`BudgetConfig` of an estimator's ``budget``, ``maintenance``, ``n_merge`` and
    ``merge_solver`` for its resolved ``kernel`` and the given loss (``loss``, ``epsilon``)."""
    return BudgetConfig(budget=estimator.budget, maintenance=estimator.maintenance, n_merge=estimator.n_merge,
                        merge_solver=estimator.merge_solver, kernel=kernel.name, gamma=kernel.gamma,
                        coef0=kernel.coef0, degree=kernel.degree, **loss)


@njit(cache=True)
def _record_maintenance(stats, deg_log, n_log, deg, seconds):
    """Add one maintenance step's time and degradation to the statistics; returns the log length."""
    stats[ST_MAINT_TIME] += seconds
    stats[ST_DEGR] += deg
    if n_log < deg_log.shape[0]:
        deg_log[n_log] = deg
        n_log += 1
    return n_log


# -- budget maintenance ---------------------------------------------------------------------
@njit(cache=True)
def _remove_slot(SV, sv_sq, alpha, P, n_sv, r, with_inverse):
    """Drop vector r (the last one moves into its slot); the inverse kernel matrix follows."""
    last = n_sv - 1
    if with_inverse:
        # inverse of K without row/column r: P_-r,-r - P_-r,r P_r,-r / P_rr (in place, then move)
        prr = P[r, r]
        for i in range(n_sv):
            if i == r:
                continue
            f = P[i, r] / prr
            for j in range(n_sv):
                if j != r:
                    P[i, j] -= f * P[r, j]
        if r != last:
            for j in range(n_sv):
                P[r, j] = P[last, j]
            for i in range(n_sv):
                P[i, r] = P[i, last]
            P[r, r] = P[last, last]
    if r != last:
        SV[r, :] = SV[last, :]
        sv_sq[r] = sv_sq[last]
        alpha[r] = alpha[last]
    return last


@njit(cache=True)
def _smallest(alpha, n_sv):
    r = 0
    best = abs(alpha[0])
    for j in range(1, n_sv):
        if abs(alpha[j]) < best:
            best = abs(alpha[j])
            r = j
    return r


@njit(cache=True)
def k_smallest(values, n, k):
    """Indices of the min(k, n) smallest of values[:n], in increasing order (ties: lower index
    first); O(n k) insertion, i.e. O(B) for the few partners a merge needs (a full sort of the B
    degradations was a third of a lookup merge's time at B = 500)."""
    k = min(k, n)
    idx = np.empty(k, dtype=np.int64)
    vals = np.empty(k)
    cnt = 0
    for j in range(n):
        v = values[j]
        if cnt == k and not v < vals[k - 1]:
            continue
        p = cnt if cnt < k else k - 1
        while p > 0 and vals[p - 1] > v:
            vals[p] = vals[p - 1]
            idx[p] = idx[p - 1]
            p -= 1
        vals[p] = v
        idx[p] = j
        if cnt < k:
            cnt += 1
    return idx


@njit(cache=True)
def _sq_dist(SV, i, z, zsq, svsq_i):
    s = 0.0
    for c in range(SV.shape[1]):
        s += SV[i, c] * z[c]
    d2 = svsq_i + zsq - 2.0 * s
    return d2 if d2 > 0.0 else 0.0


@njit(cache=True)
def ln_kappa(SV, i, z, zsq, svsq_i, gamma):
    """ln k(sv_i, z) = -gamma ||sv_i - z||^2 for the Gaussian kernel (floored against exp underflow)."""
    return max(-gamma * _sq_dist(SV, i, z, zsq, svsq_i), _LN_KAPPA_FLOOR)


@njit(cache=True)
def pair_degradations(SV, sv_sq, alpha, n_sv, r, same_sign, n_merge, solver, gamma, table, iterations,
                      buf_lnk, buf_deg):
    """For every j < n_sv: buf_lnk[j] = ln k(sv_r, sv_j) and buf_deg[j] = the weight degradation
    ||a_r phi(sv_r) + a_j phi(sv_j) - a_z phi(z)||^2 of their best binary merge (inf for j = r and,
    with ``same_sign``, for partners of the other sign): the partner ranking of every merge."""
    ar = alpha[r]
    x_r = SV[r].copy()
    for j in range(n_sv):
        if j == r or (same_sign and alpha[j] * ar < 0.0):
            buf_deg[j] = np.inf
            continue
        lnk = ln_kappa(SV, j, x_r, sv_sq[r], sv_sq[j], gamma)
        buf_lnk[j] = lnk
        if solver == 2 and n_merge > 2:
            # MM-GD ranks partners by the same pairwise degradation (golden-section search)
            h = golden_h(ar, alpha[j], lnk, iterations)
        else:
            h = _pair_h(ar, alpha[j], lnk, solver, table, iterations)
        buf_deg[j] = merge_degradation(h, ar, alpha[j], lnk)


@njit(cache=True)
def _maintain(SV, sv_sq, alpha, P, n_sv, maintenance, n_merge, solver, kcode, gamma, coef0, degree,
              table, iterations, same_sign, guard, greedy, stats, buf_lnk, buf_deg):
    """One budget-maintenance step on the first ``n_sv`` rows; returns (new n_sv, weight degradation)."""
    r = _smallest(alpha, n_sv)
    stats[ST_MAINT] += 1
    if maintenance == 0:                       # removal
        deg = alpha[r] * alpha[r]
        n_sv = _remove_slot(SV, sv_sq, alpha, P, n_sv, r, False)
        stats[ST_REMOVED] += 1
        return n_sv, deg
    if maintenance == 1:                       # projection onto the span of the others
        if stats[ST_REMOVED] % _PROJECTION_REFRESH == 0 or not np.isfinite(P[r, r]) or P[r, r] <= 0.0:
            _recompute_inverse(P, SV, sv_sq, n_sv, kcode, gamma, coef0, degree)
        prr = P[r, r]
        ar = alpha[r]
        for j in range(n_sv):
            if j != r:
                alpha[j] -= ar * P[j, r] / prr
        deg = ar * ar / prr
        n_sv = _remove_slot(SV, sv_sq, alpha, P, n_sv, r, True)
        stats[ST_REMOVED] += 1
        return n_sv, deg

    # merge: pairwise degradation of r with every other vector (vectorised over the budget)
    d = SV.shape[1]
    ar = alpha[r]
    pair_degradations(SV, sv_sq, alpha, n_sv, r, same_sign, n_merge, solver, gamma, table, iterations,
                      buf_lnk, buf_deg)
    m = min(n_merge, n_sv)
    use_greedy = greedy and m > 2 and solver != 2
    ranked = k_smallest(buf_deg, n_sv, GREEDY_POOL * (m - 1) if use_greedy else m - 1)
    partners = ranked[: m - 1].copy()
    if use_greedy and np.isfinite(buf_deg[ranked[m - 2]]):
        n_cand = min(n_sv - 1, GREEDY_POOL * (m - 1))
        while not np.isfinite(buf_deg[ranked[n_cand - 1]]):     # admissible candidates only
            n_cand -= 1
        _greedy_partners(SV, sv_sq, alpha, r, ranked[:n_cand], buf_lnk, partners, gamma, solver,
                         table, iterations)
    while m > 2 and not np.isfinite(buf_deg[partners[m - 2]]):   # fewer same-sign partners than M-1
        m -= 1
        partners = partners[: m - 1]
    if not np.isfinite(buf_deg[partners[0]]):     # no admissible partner at all: remove r
        deg = ar * ar
        stats[ST_REMOVED] += 1
        return _remove_slot(SV, sv_sq, alpha, P, n_sv, r, False), deg

    members = np.empty(m, dtype=np.int64)
    members[0] = r
    members[1:] = partners
    Zm = np.empty((m, d))
    am = np.empty(m)
    for q in range(m):
        Zm[q] = SV[members[q]]
        am[q] = alpha[members[q]]

    z = np.empty(d)
    if solver == 2:                           # Algorithm 2: all m points at once by gradient ascent
        total = am.sum()
        if abs(total) > 1e-12 * np.abs(am).sum():
            for c in range(d):
                z[c] = (am * Zm[:, c]).sum() / total
        else:
            z[:] = Zm[np.argmax(np.abs(am))]
        stats[ST_GD_ITER] += _gd_merge(Zm, am, gamma, z, 200)
        stats[ST_MERGES] += 1
    else:                                     # Algorithm 1: cascade of binary merges
        z[:] = Zm[0]
        az = am[0]
        first_deg = 0.0
        zsq = sv_sq[r]
        for q in range(1, m):
            xq = Zm[q]
            lnk = ln_kappa(Zm, q, z, zsq, sv_sq[members[q]], gamma)
            if q == 1:
                lnk = buf_lnk[members[1]]
            h = _pair_h(az, am[q], lnk, solver, table, iterations)
            first_deg, stop = cascade_guard(q, merge_degradation(h, az, am[q], lnk), first_deg, guard)
            if stop:
                m = q                          # the guard stops the cascade: merge members[:q]
                partners = partners[: q - 1]
                break
            az = merge_alpha(h, az, am[q], lnk)
            for c in range(d):
                z[c] = h * z[c] + (1.0 - h) * xq[c]
            zsq = 0.0
            for c in range(d):
                zsq += z[c] * z[c]
            stats[ST_MERGES] += 1
    zsq = 0.0
    for c in range(d):
        zsq += z[c] * z[c]
    # alpha_z optimal for z (closed form: projection onto phi(z)) and the exact degradation
    g = 0.0
    kk = 0.0
    for q in range(m):
        g += am[q] * np.exp(-gamma * _sq_dist(Zm, q, z, zsq, (Zm[q] * Zm[q]).sum()))
        for p in range(m):
            d2 = 0.0
            for c in range(d):
                diff = Zm[q, c] - Zm[p, c]
                d2 += diff * diff
            kk += am[q] * am[p] * np.exp(-gamma * d2)
    deg = max(kk - g * g, 0.0)
    stats[ST_MASS_IN] += np.abs(am).sum()
    stats[ST_MASS_OUT] += abs(g)
    # write z over r, then drop the partners (highest slot first so moves never touch them)
    SV[r, :] = z
    sv_sq[r] = zsq
    alpha[r] = g
    order = np.sort(partners)[::-1]
    for q in range(order.shape[0]):
        n_sv = _remove_slot(SV, sv_sq, alpha, P, n_sv, order[q], False)
    return n_sv, deg


@njit(cache=True)
def _greedy_partners(SV, sv_sq, alpha, r, cand, buf_lnk, partners, gamma, solver, table, iterations):
    """Fill ``partners`` (M-1 slots): cand[0], then each next one the candidate whose binary merge
    with the current merged point z has the smallest degradation (``BudgetConfig.cascade``)."""
    L = cand.shape[0]
    used = np.zeros(L, dtype=np.bool_)
    used[0] = True
    j = cand[0]
    h = _pair_h(alpha[r], alpha[j], buf_lnk[j], solver, table, iterations)
    az = merge_alpha(h, alpha[r], alpha[j], buf_lnk[j])
    z = h * SV[r] + (1.0 - h) * SV[j]
    for q in range(1, partners.shape[0]):
        zsq = (z * z).sum()
        best, best_u, best_h, best_lnk = np.inf, -1, 0.0, 0.0
        for u in range(L):
            if used[u]:
                continue
            j = cand[u]
            lnk = ln_kappa(SV, j, z, zsq, sv_sq[j], gamma)
            h = _pair_h(az, alpha[j], lnk, solver, table, iterations)
            deg = merge_degradation(h, az, alpha[j], lnk)
            if deg < best:
                best, best_u, best_h, best_lnk = deg, u, h, lnk
        used[best_u] = True
        j = cand[best_u]
        partners[q] = j
        az = merge_alpha(best_h, az, alpha[j], best_lnk)
        z = best_h * z + (1.0 - best_h) * SV[j]


@njit(cache=True)
def _recompute_inverse(P, SV, sv_sq, n_sv, kcode, gamma, coef0, degree):
    """P = (K + ridge I)^{-1} of the first n_sv vectors anew (drift of the O(m^2) updates)."""
    K = np.empty((n_sv, n_sv))
    for i in range(n_sv):
        for j in range(i, n_sv):
            s = 0.0
            for c in range(SV.shape[1]):
                s += SV[i, c] * SV[j, c]
            K[i, j] = _kernel_value(s, sv_sq[i], sv_sq[j], kcode, gamma, coef0, degree)
            K[j, i] = K[i, j]
        K[i, i] += _PROJECTION_RIDGE
    P[:n_sv, :n_sv] = np.linalg.inv(K)


@njit(cache=True)
def _append_inverse(P, SV, sv_sq, n_sv, kcode, gamma, coef0, degree):
    """Grow P = (K + ridge I)^{-1} by the new last vector (block inverse, O(m^2))."""
    m = n_sv - 1
    x = SV[m]
    kx = np.empty(m)
    for j in range(m):
        s = 0.0
        for c in range(SV.shape[1]):
            s += SV[j, c] * x[c]
        kx[j] = _kernel_value(s, sv_sq[j], sv_sq[m], kcode, gamma, coef0, degree)
    kxx = _kernel_value(sv_sq[m], sv_sq[m], sv_sq[m], kcode, gamma, coef0, degree) + _PROJECTION_RIDGE
    Pk = np.zeros(m)
    for i in range(m):
        s = 0.0
        for j in range(m):
            s += P[i, j] * kx[j]
        Pk[i] = s
    schur = kxx - (kx * Pk).sum()
    if schur < _PROJECTION_RIDGE:
        schur = _PROJECTION_RIDGE
    for i in range(m):
        for j in range(m):
            P[i, j] += Pk[i] * Pk[j] / schur
        P[i, m] = -Pk[i] / schur
        P[m, i] = -Pk[i] / schur
    P[m, m] = 1.0 / schur


# -- the SGD pass ---------------------------------------------------------------------------
@njit(cache=True)
def _sgd_pass(Xd, data, indices, indptr, sparse, x_sq, y, order, SV, sv_sq, alpha, P, n_sv, bias, t,
              lam, budget, maintenance, n_merge, solver, kcode, gamma, coef0, degree,
              table, iterations, same_sign, guard, greedy, loss, epsilon, stats, deg_log, n_log):
    """Pegasos steps over ``order``; budget maintenance whenever more than ``budget`` vectors.
    ``loss`` 0: hinge on labels y = +1 / -1; 1: epsilon-insensitive on targets y; 2: one-class
    (the bias moves at every step). Returns (n_sv, t, n_log, bias)."""
    kbuf = np.empty(SV.shape[0])
    buf_lnk = np.empty(SV.shape[0])
    buf_deg = np.empty(SV.shape[0])
    for p in range(order.shape[0]):
        i = order[p]
        t += 1
        # margin f(x_i) with the current model
        f = _margin(Xd, data, indices, indptr, sparse, x_sq, i, SV, sv_sq, alpha, n_sv, kbuf, kcode,
                    gamma, coef0, degree, bias)
        # regularisation step: alpha <- (1 - eta lambda) alpha = (1 - 1/t) alpha
        shrink = 1.0 - 1.0 / t
        for j in range(n_sv):
            alpha[j] *= shrink
        stats[ST_STEPS] += 1
        if loss == 2:
            violated = f < 0.0
            bias += (1.0 / (lam * t)) * ((1.0 if violated else 0.0) - lam)
            if not violated:
                continue
            direction = 1.0
        elif loss == 0:
            if y[i] * f >= 1.0:
                continue
            direction = y[i]
        else:
            residual = y[i] - f
            if abs(residual) <= epsilon:
                continue
            direction = 1.0 if residual > 0.0 else -1.0
        eta = 1.0 / (lam * t)
        # the violator joins the model
        _store_row(Xd, data, indices, indptr, sparse, x_sq, i, SV, sv_sq, n_sv)
        alpha[n_sv] = eta * direction
        n_sv += 1
        stats[ST_ADDED] += 1
        if maintenance == 1:
            _append_inverse(P, SV, sv_sq, n_sv, kcode, gamma, coef0, degree)
        if n_sv > budget:
            with objmode(t0="f8"):
                t0 = _clock()
            n_sv, deg = _maintain(SV, sv_sq, alpha, P, n_sv, maintenance, n_merge, solver, kcode,
                                  gamma, coef0, degree, table, iterations, same_sign, guard, greedy, stats, buf_lnk, buf_deg)
            with objmode(t1="f8"):
                t1 = _clock()
            n_log = _record_maintenance(stats, deg_log, n_log, deg, t1 - t0)
    return n_sv, t, n_log, bias


def _clock() -> float:
    import time
    return time.perf_counter()


# -- Python entry points --------------------------------------------------------------------
def _row_arrays(X):
    """(dense X or dummy, CSR data/indices/indptr or dummies, sparse flag, squared norms)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        X.sort_indices()
        x_sq = np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
        return (np.zeros((1, 1)), X.data.astype(np.float64), X.indices.astype(np.int64),
                X.indptr.astype(np.int64), True, x_sq)
    X = np.ascontiguousarray(X, dtype=np.float64)
    return (X, np.zeros(1), np.zeros(1, dtype=np.int64), np.zeros(2, dtype=np.int64), False,
            np.einsum("ij,ij->i", X, X))


def _working_arrays(state: BudgetState, config: BudgetConfig, n_features: int):
    cap = max(config.budget, state.n_support) + 1
    SV = np.zeros((cap, n_features))
    alpha = np.zeros((cap,) + state.alpha.shape[1:])
    sv_sq = np.zeros(cap)
    m = state.n_support
    SV[:m] = state.support_vectors
    alpha[:m] = state.alpha
    sv_sq[:m] = np.einsum("ij,ij->i", SV[:m], SV[:m])
    if config.maintenance == "projection":
        P = np.zeros((cap, cap))
        if m:
            from leansvm.core.kernels import Kernel
            K = Kernel(config.kernel, config.gamma, config.degree, config.coef0).block(SV[:m], SV[:m])
            P[:m, :m] = np.linalg.inv(K + _PROJECTION_RIDGE * np.eye(m))
    else:
        P = np.zeros((1, 1))
    return SV, alpha, sv_sq, P


def _codes(config: BudgetConfig):
    table = lookup_table() if config.merge_solver == "lookup" else np.zeros((2, 2))
    return (config.budget, MAINTENANCE[config.maintenance], int(config.n_merge),
            MERGE_SOLVERS[config.merge_solver], KERNEL_CODES[config.kernel], float(config.gamma),
            float(config.coef0), float(config.degree), table, int(config.golden_iterations), bool(config.same_sign_merge),
            float(config.merge_guard), config.cascade == "greedy")


def sgd_pass(state: BudgetState, X, y_pm, order, config: BudgetConfig) -> BudgetState:
    """Continue SGD on ``state`` over the rows ``order`` of (X, y_pm); returns the new state.

    ``y_pm`` holds +1/-1 (hinge) or the targets (epsilon-insensitive loss). One numba call runs
    the whole pass (margins, SGD steps, maintenance).
    """
    d = X.shape[1]
    if state.support_vectors.shape[1] != d:
        raise ValueError(f"X has {d} features, the budget model has {state.support_vectors.shape[1]}")
    if state.shared_multiclass:
        raise ValueError("a shared multi-class budget runs bsgd_crammer_singer.sgd_pass")
    Xd, data, indices, indptr, sparse, x_sq = _row_arrays(X)
    SV, alpha, sv_sq, P = _working_arrays(state, config, d)
    stats = state.stats.copy()
    deg_log = np.zeros(len(order))
    (budget, maint, n_merge, solver, kcode, gamma, coef0, degree, table, iterations,
     same_sign, guard, greedy) = _codes(config)
    n_sv, t, n_log, bias = _sgd_pass(
        Xd, data, indices, indptr, sparse, x_sq, np.ascontiguousarray(y_pm, dtype=np.float64),
        np.ascontiguousarray(order, dtype=np.int64), SV, sv_sq, alpha, P, state.n_support,
        float(state.bias), int(state.t), float(state.lam), budget, maint, n_merge, solver, kcode,
        gamma, coef0, degree, table, iterations, same_sign, guard, greedy, LOSSES[config.loss],
        float(config.epsilon), stats, deg_log, 0)
    stats[ST_UNMERGED] = count_unmerged(alpha[:n_sv], state.lam, t)
    return BudgetState(SV[:n_sv].copy(), alpha[:n_sv].copy(), float(bias), int(t), state.lam,
                       stats, state.degradations + [deg_log[:n_log]])


def count_unmerged(alpha, lam, t) -> int:
    """How many vectors were never merged (or projected onto) since they joined.

    A violator joining at step t0 gets |alpha| = 1 / (lambda t0) and then shrinks by (1 - 1/s)
    at every step s, so at step t every unmerged vector has |alpha| = 1 / (lambda t) exactly
    (Pegasos; up to rounding), the smallest weight a vector can carry without cancellation.
    Multi-merge leaves many of them in the budget (``benchmarks/budget/bench_bsgd_margin.py``).
    """
    if t < 1 or alpha.size == 0:
        return 0
    return int(np.count_nonzero(np.abs(np.abs(alpha) * lam * t - 1.0) <= UNMERGED_RTOL))


def check_shared_multiclass(config: BudgetConfig) -> None:
    """The shared-budget multi-class solver has removal and golden-section (multi-)merge only."""
    if config.maintenance == "projection":
        raise ValueError("multiclass='crammer_singer' supports maintenance 'merge' and 'removal', "
                         "not 'projection'")
    if config.maintenance == "merge" and config.merge_solver != "golden":
        raise ValueError("multiclass='crammer_singer' merges coefficient vectors by golden-section "
                         f"search only (merge_solver='golden'), got {config.merge_solver!r}")
    if config.cascade != "ranked" and config.n_merge > 2:
        raise ValueError("multiclass='crammer_singer' has the paper's ranked cascade only: pass "
                         f"cascade='ranked' with n_merge={config.n_merge}, got {config.cascade!r}")


def reduce_to_budget(state: BudgetState, config: BudgetConfig, budget: int | None = None) -> BudgetState:
    """Apply budget maintenance until at most ``budget`` (default ``config.budget``) vectors remain.

    Use it to shrink any expansion f = sum_j alpha_j k(sv_j, .) + b, e.g. the union of models
    trained on separate chunks (concatenate vectors, average coefficients, then reduce).
    A shared multi-class budget is reduced by ``bsgd_crammer_singer.reduce_to_budget``.
    """
    if state.shared_multiclass:
        raise ValueError("a shared multi-class budget is reduced by bsgd_crammer_singer.reduce_to_budget")
    (_, maint, n_merge, solver, kcode, gamma, coef0, degree, table, iterations,
     same_sign, guard, greedy) = _codes(config)

    def maintain(SV, sv_sq, alpha, P, n_sv, m, stats, buf_lnk, buf_deg):
        return _maintain(SV, sv_sq, alpha, P, n_sv, maint, m, solver, kcode, gamma, coef0,
                         degree, table, iterations, same_sign, guard, greedy, stats, buf_lnk, buf_deg)

    reduced = reduce_with(state, config, budget, maintain)
    reduced.stats[ST_UNMERGED] = count_unmerged(reduced.alpha, state.lam, state.t)
    return reduced


def reduce_with(state: BudgetState, config: BudgetConfig, budget, maintain) -> BudgetState:
    """Call ``maintain`` (one maintenance step on at most m vectors) until ``budget`` vectors remain."""
    budget = config.budget if budget is None else int(budget)
    if budget < 1:
        raise ValueError(f"budget must be a positive integer, got {budget!r}")
    SV, alpha, sv_sq, P = _working_arrays(state, config, state.support_vectors.shape[1])
    stats = state.stats.copy()
    buf_lnk = np.empty(SV.shape[0])
    buf_deg = np.empty(SV.shape[0])
    n_sv = state.n_support
    degs = []
    while n_sv > budget:
        m = min(int(config.n_merge), n_sv - budget + 1)      # never merge more points than needed
        n_sv, deg = maintain(SV, sv_sq, alpha, P, n_sv, m, stats, buf_lnk, buf_deg)
        degs.append(deg)
    stats[ST_DEGR] += float(np.sum(degs))
    return BudgetState(SV[:n_sv].copy(), alpha[:n_sv].copy(), state.bias, state.t, state.lam, stats,
                       state.degradations + [np.asarray(degs)])


def margins(state: BudgetState, kernel, X) -> np.ndarray:
    """sum_j alpha_j k(sv_j, x) for every row of X (no bias): the outputs of a one-output state."""
    if state.n_support == 0:
        return np.zeros(X.shape[0])
    return KernelExpansion(state.support_vectors, state.alpha, [0.0], kernel).decision_function(X)[:, 0]
