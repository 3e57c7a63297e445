"""Multi-class budgeted SGD with ONE shared budget (Crammer-Singer loss; Wang, Crammer & Vucetic,
JMLR 13 (2012), Sec. 6, "BSGD for multi-class SVM").

Model: f_k(x) = sum_j alpha_jk k(sv_j, x) for k = 1..K, one set of at most B vectors, each with
a coefficient vector alpha_j in R^K; prediction argmax_k f_k(x). Objective

    P(W) = lambda/2 sum_k ||w_k||^2 + 1/n sum_i max(0, 1 + f_r(x_i) - f_{y_i}(x_i)),
    r = argmax_{k != y_i} f_k(x_i)

(no bias, as in the paper). Pegasos step t (eta_t = 1/(lambda t)): all alpha shrink by (1 - 1/t);
when f_y(x_t) - f_r(x_t) < 1 the point joins with alpha_y = +eta_t, alpha_r = -eta_t.

Budget maintenance by merging (Gaussian kernel): the vector r with the smallest ||alpha_r||,
the partner(s) by smallest pairwise weight degradation. Merging (x_i, a_i) and (x_j, a_j) into
z = h x_i + (1-h) x_j with kappa = k(x_i, x_j):

    a_z(h) = a_i kappa^((1-h)^2) + a_j kappa^(h^2)                       (projection onto phi(z))
    ||a_z(h)||^2 = A kappa^(2(1-h)^2) + Bn kappa^(2h^2) + 2 D kappa^((1-h)^2 + h^2)
    degradation = A + Bn + 2 D kappa - ||a_z(h)||^2,   A = ||a_i||^2, Bn = ||a_j||^2, D = a_i.a_j

h maximises ||a_z(h)||^2 by golden-section search over h in [0, 1]; when D < 0 also beyond the
vector of larger norm (h < 0 or h > 1, up to 3 kernel widths, as in the binary case K = 1), and
the better of the two is kept (partly opposite vectors can have their optimum inside [0, 1]).
Multi-merge (n_merge = M > 2, Qaadan & Glasmachers, arXiv:1806.10179, Algorithm 1): the M-1
best partners by pairwise degradation, merged as a cascade in order of increasing degradation;
the final a_z is the exact projection sum_m a_m k(x_m, z). Removal drops the smallest ||alpha||.

Partners are ranked with at most ``RANK_ITERATIONS`` golden-section steps per candidate (h to
0.618^12 ~ 3e-3 of its interval; the degradation is flat at its optimum, so its error is of the
order 1e-5 relative); the merges themselves use the full ``iterations``.
"""

from __future__ import annotations

import numpy as np
from numba import objmode

from leansvm.budget.bsgd import (KERNEL_CODES, MAINTENANCE, ST_ADDED, ST_MAINT, ST_MERGES, ST_REMOVED, ST_STEPS,
                                 BudgetConfig, BudgetState, _clock, _record_maintenance, _row_arrays,
                                 _working_arrays, check_shared_multiclass, k_smallest, ln_kappa, reduce_with)
from leansvm.budget.merging import _FAR, _INV_GOLD, _opposite_sign_reach, cascade_guard
from leansvm.budget.sgd_kernels import _dots_row, _kernel_value, _store_row
from leansvm.core.jit import njit


#: golden-section steps per candidate when ranking merge partners (the merges use all of them)
RANK_ITERATIONS = 12


@njit(cache=True)
def merged_norm_sq(h, A, Bn, D, lnk):
    """||a_z(h)||^2 for squared norms A, Bn, dot product D and ln kappa ``lnk``."""
    ei = np.exp(lnk * (1.0 - h) * (1.0 - h))
    ej = np.exp(lnk * h * h)
    return A * ei * ei + Bn * ej * ej + 2.0 * D * ei * ej


@njit(cache=True)
def _golden_max(A, Bn, D, lnk, lo, hi, iterations):
    a, b = lo, hi
    c = b - _INV_GOLD * (b - a)
    d = a + _INV_GOLD * (b - a)
    fc = merged_norm_sq(c, A, Bn, D, lnk)
    fd = merged_norm_sq(d, A, Bn, D, lnk)
    for _ in range(iterations):
        if fc > fd:
            b, d, fd = d, c, fc
            c = b - _INV_GOLD * (b - a)
            fc = merged_norm_sq(c, A, Bn, D, lnk)
        else:
            a, c, fc = c, d, fd
            d = a + _INV_GOLD * (b - a)
            fd = merged_norm_sq(d, A, Bn, D, lnk)
    return 0.5 * (a + b)


@njit(cache=True)
def vector_merge_h(A, Bn, D, lnk, iterations):
    """h of the best merge z = h x_i + (1-h) x_j of two vectors with coefficient vectors (see module)."""
    if lnk < _FAR:                       # no interaction: keep the larger one
        return 0.0 if Bn >= A else 1.0
    inner = _golden_max(A, Bn, D, lnk, 0.0, 1.0, iterations)
    if D >= 0.0:
        return inner
    # partly opposite coefficient vectors: the optimum is inside [0, 1] or beyond the larger one
    reach = _opposite_sign_reach(lnk)
    if Bn >= A:
        outer = _golden_max(A, Bn, D, lnk, -reach, 0.0, iterations)
    else:
        outer = _golden_max(A, Bn, D, lnk, 1.0, 1.0 + reach, iterations)
    if merged_norm_sq(outer, A, Bn, D, lnk) > merged_norm_sq(inner, A, Bn, D, lnk):
        return outer
    return inner


@njit(cache=True)
def _row_dot(W, i, j):
    s = 0.0
    for k in range(W.shape[1]):
        s += W[i, k] * W[j, k]
    return s


@njit(cache=True)
def _drop(SV, sv_sq, W, n_sv, r):
    last = n_sv - 1
    if r != last:
        SV[r, :] = SV[last, :]
        sv_sq[r] = sv_sq[last]
        W[r, :] = W[last, :]
    return last


@njit(cache=True)
def cs_maintain(SV, sv_sq, W, n_sv, maintenance, n_merge, gamma, iterations, guard, stats, buf_lnk,
                buf_deg):
    """One budget-maintenance step (0 removal, 2 merge) on the first ``n_sv`` rows; ``guard`` as
    ``BudgetConfig.merge_guard`` (0 = off).

    Returns (new n_sv, weight degradation sum_k ||Delta_k||^2).
    """
    stats[ST_MAINT] += 1
    r = 0
    best = _row_dot(W, 0, 0)
    for j in range(1, n_sv):
        v = _row_dot(W, j, j)
        if v < best:
            best, r = v, j
    A = best
    if maintenance == 0:
        stats[ST_REMOVED] += 1
        return _drop(SV, sv_sq, W, n_sv, r), A
    d = SV.shape[1]
    x_r = SV[r].copy()
    for j in range(n_sv):
        if j == r:
            buf_deg[j] = np.inf
            continue
        lnk = ln_kappa(SV, j, x_r, sv_sq[r], sv_sq[j], gamma)
        buf_lnk[j] = lnk
        Bn = _row_dot(W, j, j)
        D = _row_dot(W, r, j)
        h = vector_merge_h(A, Bn, D, lnk, min(iterations, RANK_ITERATIONS))
        buf_deg[j] = A + Bn + 2.0 * D * np.exp(lnk) - merged_norm_sq(h, A, Bn, D, lnk)
    m = min(n_merge, n_sv)
    partners = k_smallest(buf_deg, n_sv, m - 1)
    K = W.shape[1]
    members = np.empty(m, dtype=np.int64)
    members[0] = r
    members[1:] = partners
    # cascade of binary merges (Algorithm 1) in order of increasing pairwise degradation
    z = x_r.copy()
    zsq = sv_sq[r]
    az = W[r].copy()
    first_deg = 0.0
    for q in range(1, m):
        jq = members[q]
        lnk = ln_kappa(SV, jq, z, zsq, sv_sq[jq], gamma)
        Az = (az * az).sum()
        Bn = _row_dot(W, jq, jq)
        D = 0.0
        for k in range(K):
            D += az[k] * W[jq, k]
        h = vector_merge_h(Az, Bn, D, lnk, iterations)
        step_deg = Az + Bn + 2.0 * D * np.exp(lnk) - merged_norm_sq(h, Az, Bn, D, lnk)
        first_deg, stop = cascade_guard(q, step_deg, first_deg, guard)
        if stop:
            m = q                              # the guard stops the cascade: merge members[:q]
            partners = partners[: q - 1]
            break
        ei = np.exp(lnk * (1.0 - h) * (1.0 - h))
        ej = np.exp(lnk * h * h)
        for k in range(K):
            az[k] = az[k] * ei + W[jq, k] * ej
        for c in range(d):
            z[c] = h * z[c] + (1.0 - h) * SV[jq, c]
        zsq = (z * z).sum()
        stats[ST_MERGES] += 1
    # exact projection a_z = sum_m a_m k(x_m, z) and the exact degradation
    kz = np.empty(m)
    for q in range(m):
        s = 0.0
        for c in range(d):
            s += SV[members[q], c] * z[c]
        d2 = sv_sq[members[q]] + zsq - 2.0 * s
        kz[q] = np.exp(-gamma * (d2 if d2 > 0.0 else 0.0))
    az[:] = 0.0
    kk = 0.0
    for q in range(m):
        for k in range(K):
            az[k] += kz[q] * W[members[q], k]
        for p in range(m):
            s = 0.0
            for c in range(d):
                diff = SV[members[q], c] - SV[members[p], c]
                s += diff * diff
            kk += _row_dot(W, members[q], members[p]) * np.exp(-gamma * s)
    deg = max(kk - (az * az).sum(), 0.0)
    SV[r, :] = z
    sv_sq[r] = zsq
    W[r, :] = az
    order = np.sort(partners)[::-1]
    for q in range(order.shape[0]):
        n_sv = _drop(SV, sv_sq, W, n_sv, order[q])
    return n_sv, deg


@njit(cache=True)
def cs_pass(Xd, data, indices, indptr, sparse, x_sq, y, order, SV, sv_sq, W, n_sv, t, lam, budget,
            maintenance, n_merge, kcode, gamma, coef0, degree, iterations, guard, stats, deg_log, n_log):
    """Crammer-Singer Pegasos steps over ``order`` (labels ``y`` in 0..K-1), shared budget."""
    K = W.shape[1]
    kbuf = np.empty(SV.shape[0])
    buf_lnk = np.empty(SV.shape[0])
    buf_deg = np.empty(SV.shape[0])
    f = np.empty(K)
    for p in range(order.shape[0]):
        i = order[p]
        t += 1
        _dots_row(Xd, data, indices, indptr, sparse, i, SV, n_sv, kbuf)
        f[:] = 0.0
        for j in range(n_sv):
            kv = _kernel_value(kbuf[j], sv_sq[j], x_sq[i], kcode, gamma, coef0, degree)
            for k in range(K):
                f[k] += W[j, k] * kv
        shrink = 1.0 - 1.0 / t
        for j in range(n_sv):
            for k in range(K):
                W[j, k] *= shrink
        stats[ST_STEPS] += 1
        c = y[i]
        r = -1
        for k in range(K):
            if k != c and (r < 0 or f[k] > f[r]):
                r = k
        if f[c] - f[r] >= 1.0:
            continue
        eta = 1.0 / (lam * t)
        _store_row(Xd, data, indices, indptr, sparse, x_sq, i, SV, sv_sq, n_sv)
        W[n_sv, :] = 0.0
        W[n_sv, c] = eta
        W[n_sv, r] = -eta
        n_sv += 1
        stats[ST_ADDED] += 1
        if n_sv > budget:
            with objmode(t0="f8"):
                t0 = _clock()
            n_sv, deg = cs_maintain(SV, sv_sq, W, n_sv, maintenance, n_merge, gamma, iterations, guard,
                                    stats, buf_lnk, buf_deg)
            with objmode(t1="f8"):
                t1 = _clock()
            n_log = _record_maintenance(stats, deg_log, n_log, deg, t1 - t0)
    return n_sv, t, n_log


def sgd_pass(state: BudgetState, X, y_int, order, config: BudgetConfig) -> BudgetState:
    """Continue shared-budget SGD on ``state`` over the rows ``order`` (``y_int``: class indices)."""
    check_shared_multiclass(config)
    Xd, data, indices, indptr, sparse, x_sq = _row_arrays(X)
    SV, W, sv_sq, _ = _working_arrays(state, config, X.shape[1])
    stats = state.stats.copy()
    deg_log = np.zeros(len(order))
    n_sv, t, n_log = cs_pass(
        Xd, data, indices, indptr, sparse, x_sq, np.ascontiguousarray(y_int, dtype=np.int64),
        np.ascontiguousarray(order, dtype=np.int64), SV, sv_sq, W, state.n_support, int(state.t),
        float(state.lam), int(config.budget), MAINTENANCE[config.maintenance], int(config.n_merge),
        KERNEL_CODES[config.kernel], float(config.gamma), float(config.coef0), float(config.degree),
        int(config.golden_iterations), float(config.merge_guard), stats, deg_log, 0)
    return BudgetState(SV[:n_sv].copy(), W[:n_sv].copy(), 0.0, int(t), state.lam, stats,
                       state.degradations + [deg_log[:n_log]])


def reduce_to_budget(state: BudgetState, config: BudgetConfig, budget: int | None = None) -> BudgetState:
    """:func:`leansvm.budget.bsgd.reduce_to_budget` for a shared multi-class budget (coefficient vectors)."""
    check_shared_multiclass(config)
    iterations, guard = int(config.golden_iterations), float(config.merge_guard)

    def maintain(SV, sv_sq, W, P, n_sv, m, stats, buf_lnk, buf_deg):
        return cs_maintain(SV, sv_sq, W, n_sv, MAINTENANCE[config.maintenance], m, float(config.gamma),
                           iterations, guard, stats, buf_lnk, buf_deg)

    return reduce_with(state, config, budget, maintain)
