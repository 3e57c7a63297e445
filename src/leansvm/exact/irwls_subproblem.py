r"""The IRWLS working-set sub-problem, compiled with numba (the solver's inner loop).

On a working set W of q variables of the dual problem (:mod:`leansvm.core.problems`:
y, linear term p, bounds C; the others fixed, entering through f and c_out) one
iteration is (Pérez-Cruz et al., NIPS 2000, Table 1; details in the docstring
of :mod:`leansvm.exact.irwls`):

1. weights a_i = C_i / max(u_i, delta) on S1, with u_i = -p_i - y_i (f_i + b)   (8)
   (the hinge's 1 - y_i (f_i + b) for C-SVC, p = -1)
2. the weighted least-squares system on S1, for v = y * beta                    (3)

       (K_11 + D_a^{-1} + mu I) v_1 + b 1 = -y_1 p_1 - K_13 v_3 - g_1 + mu y_1 a_1
       1' v_1                             = -1' v_3 - c_out      (only with y'a = Delta)

   by Cholesky and a Schur complement for b; components outside [0, C_i]
   move to their bound and the system is re-solved (at most 4 rounds; while
   few rows have left S1, from the first round's factor: :func:`_solve_principal`);
3. the safeguard: a <- a + eta (beta - a) with the exact minimising step on
   the dual D, clipped to the box (D never increases), and a
   Levenberg-Marquardt rule for the proximal weight mu;
4. SMO pair steps on W's maximal violating pair (second-order choice of
   the partner, Fan, Chen & Lin 2005); without the equality constraint,
   two-coordinate greedy descent steps (second-order partner, exact 2 x 2 box
   step, :func:`box_pair_step`). These steps guarantee convergence.

``equality`` is the number of equality constraints the problem has, as a mode:
0 (none), 1 (y'a = Delta) or 2 (LIBSVM's nu forms: sum_{y_i = +1} a_i = Delta_+ and
sum_{y_i = -1} a_i = Delta_-, Solver_NU). In mode 2 each sign is a group g with
its own multiplier b_g: u_i = -p_i - y_i (f_i + b_g), the system (3) has one
constraint row per group, the stopping rule and the pair steps work within a
group. ``b`` and ``c_out`` are arrays of two (group +1, group -1); with one
equality only their first entry is used.

All routines work in place on ``alpha`` and ``f`` (outputs without bias).
"""

from __future__ import annotations

import numpy as np

from ..core.jit import njit
from ..core.lapack import cholesky_solve, factored_solve

BOUND_RTOL = 1e-12
#: a round's system is solved from the last factor while it lacks at most 1/PRINCIPAL_MAX_DROP
#: of that factor's rows (:func:`_solve_principal`), else factored anew
PRINCIPAL_MAX_DROP = 6


#: The per-sample helpers below take scalars: an array passed to a compiled function inside a
#: loop is reference-counted on each call (atomic NRT increments and decrements, about 10 ns),
#: which made the working-set selection's pass over letter's pairs (1,200 samples) 17 us
#: instead of 4.
@njit(cache=True, nogil=True, inline="always")
def group(y_k, equality):
    """The equality group of a variable of label y_k: 0, or 1 for y_k = -1 in mode 2 (one
    equality per sign)."""
    return 1 if equality == 2 and y_k < 0 else 0


@njit(cache=True, nogil=True)
def violation(y, p, f, alpha, C, equality):
    """Stopping measure and the two most violating samples (i, j).

    With y'a = Delta: LIBSVM's m(a) - M(a), s = -y p - f maximised over I_up (i),
    minimised over I_low (j). With one equality per sign (mode 2): the larger of
    the two groups' m - M, and its pair (LIBSVM's Solver_NU). Without: the
    projected-gradient gap max(PG, 0) - min(PG, 0) with G = y f + p (i: most
    negative PG, j: most positive).
    """
    if equality:
        return _shift_and_violation(y, p, C, alpha, f, 0.0, f, f, equality)
    hi, lo = -np.inf, np.inf
    i, j = -1, -1
    for k in range(y.size):
        pg = projected_gradient(y[k], p[k], f[k], alpha[k], C[k])
        if pg < lo:
            lo, i = pg, k
        if pg > hi:
            hi, j = pg, k
    return max(hi, 0.0) - min(lo, 0.0), i, j


@njit(cache=True, nogil=True, inline="always")
def up_low(y_k, alpha_k, C_k):
    """Is sample k in LIBSVM's I_up (y_k a_k can increase) and in I_low (it can decrease)?"""
    below = alpha_k < C_k
    above = alpha_k > 0
    if y_k > 0:
        return below, above
    return above, below


@njit(cache=True, nogil=True, inline="always")
def projected_gradient(y_k, p_k, f_k, alpha_k, C_k):
    """PG_k of the box: G_k = y_k f_k + p_k, cut to its feasible sign at a bound."""
    g = y_k * f_k + p_k
    if alpha_k <= 0:
        return min(g, 0.0)
    if alpha_k >= C_k:
        return max(g, 0.0)
    return g


@njit(cache=True, nogil=True)
def _solve_spd(M, B):
    """Solve M X' = B' in place (:func:`~leansvm.core.lapack.cholesky_solve`), with a ridge on
    the diagonal when M is not numerically positive definite; status 0 ok, 1 ridged, -1 failed."""
    m = M.shape[0]
    diag = np.empty(m)
    scale = 1e-12
    for k in range(m):
        diag[k] = M[k, k]
        scale = max(scale, abs(M[k, k]))
    if cholesky_solve(M, B) == 0:
        return 0
    ridge = 1e-10 * scale
    while ridge < 1e3 * scale:
        for r in range(m):                      # the failed factorisation wrote only the upper
            for c in range(r + 1, m):           # triangle and the diagonal
                M[r, c] = M[c, r]
            M[r, r] = diag[r] + ridge
        if cholesky_solve(M, B) == 0:
            return 1
        ridge *= 100.0
    return -1


@njit(cache=True, nogil=True)
def _solve_principal(F, drop, B):
    """Solve M_SS X' = B' in place, S the rows of M not in ``drop``, from the factor F of M
    (:func:`_solve_spd`) instead of factoring M_SS; returns LAPACK's info (> 0: not solved).

    With Z = M^-1 and R = ``drop`` (r rows), the Schur complement gives
    M_SS^-1 = Z_SS - Z_SR Z_RR^-1 Z_RS: one solve with F of the k right-hand sides padded with
    zeros on R and of r unit vectors, then an r x r system: (k + r) m^2 against m^3 / 3 for a
    new factor. B is (k, |S|) C order, S in M's row order.
    """
    m = F.shape[0]
    r = drop.size
    k = B.shape[0]
    kept = np.ones(m, dtype=np.bool_)
    for a in range(r):
        kept[drop[a]] = False
    Z = np.zeros((k + r, m))                    # rows: Z [b; 0] per right-hand side, Z e_R
    s = 0
    for i in range(m):
        if kept[i]:
            for j in range(k):
                Z[j, i] = B[j, s]
            s += 1
    for a in range(r):
        Z[k + a, drop[a]] = 1.0
    info = factored_solve(F, Z)
    if info != 0:
        return info
    Z_RR = np.empty((r, r))
    T = np.empty((k, r))                         # Z_RS b, then Z_RR^-1 Z_RS b
    for a in range(r):
        for c in range(r):
            Z_RR[a, c] = Z[k + a, drop[c]]
        for j in range(k):
            T[j, a] = Z[j, drop[a]]
    info = cholesky_solve(Z_RR, T)
    if info != 0:
        return info
    s = 0
    for i in range(m):
        if kept[i]:
            for j in range(k):
                v = Z[j, i]
                for a in range(r):
                    v -= Z[k + a, i] * T[j, a]
                B[j, s] = v
            s += 1
    return 0


@njit(cache=True, nogil=True)
def _move(alpha, f, d_alpha, d_f, C):
    for k in range(alpha.size):
        alpha[k] += d_alpha[k]
        alpha[k] = _snapped(alpha[k], C[k])
    f += d_f


@njit(cache=True, nogil=True, inline="always")
def _snapped(alpha_k, C_k):
    """a_k snapped to its bound when it is within rounding of it (0 below BOUND_RTOL C_k, C_k
    above (1 - BOUND_RTOL) C_k): every update of a in this module ends with it."""
    if alpha_k < BOUND_RTOL * C_k:
        return 0.0
    if alpha_k > C_k * (1 - BOUND_RTOL):
        return C_k
    return alpha_k


@njit(cache=True, nogil=True)
def _targets(K, y, p, C, alpha, f, u, c_out, mu, delta, equality, counts):
    """beta* of the weighted least-squares system (3) and its multipliers (one per group);
    ok=False when it cannot be formed."""
    q = y.size
    n_groups = 2 if equality == 2 else 1
    b_new = np.zeros(2)
    s1 = np.empty(q, dtype=np.bool_)
    target = np.zeros(q)
    for k in range(q):
        s2 = alpha[k] <= 0 and u[k] < 0
        s3 = alpha[k] >= C[k] and u[k] > 0
        s1[k] = not (s2 or s3)
        if s3:
            target[k] = C[k]
    g = f - K @ (y * alpha)                      # contribution of the samples outside W
    factored = np.zeros(0, dtype=np.int64)      # the rows whose M is factored in F
    F = np.empty((0, 0))
    for round_ in range(4):
        idx = np.flatnonzero(s1)
        m = idx.size
        if m == 0:
            return False, target, b_new
        v3 = y * target
        v3[idx] = 0.0
        Kv3 = K @ v3
        sol_t = np.zeros((1 + n_groups, m))     # right-hand sides, then solutions, one per row
        for r in range(m):
            a = idx[r]
            sol_t[0, r] = -y[a] * p[a] - Kv3[a] - g[a] + mu * y[a] * alpha[a]
            sol_t[1 + group(y[a], equality), r] = 1.0
        # a later round's S1 is the factored one less the rows clipped since: few of them
        # (letter's pairs: 96 rows, then 1-15 fewer a round) are solved from F
        status = 1
        n_drop = factored.size - m
        if 0 < n_drop and PRINCIPAL_MAX_DROP * n_drop <= factored.size:
            drop = np.empty(n_drop, dtype=np.int64)
            d = 0
            for t in range(factored.size):
                if not s1[factored[t]]:
                    drop[d] = t
                    d += 1
            status = _solve_principal(F, drop, sol_t)
        if status != 0:
            M = np.empty((m, m))
            for r in range(m):
                a = idx[r]
                for c in range(m):
                    M[r, c] = K[a, idx[c]]
                M[r, r] += max(u[a], delta) / C[a] + mu      # D_a^{-1} + mu
            status = _solve_spd(M, sol_t)
            if status >= 0:
                factored, F = idx, M
        counts[0] += 1
        if status < 0:
            return False, target, b_new
        if status > 0:
            counts[2] += 1
        sol = sol_t.T
        if equality == 1:
            c = -v3.sum() - c_out[0]
            den = sol[:, 1].sum()              # y'(K + D^-1)^-1 y: > 0 unless the system is numerically
            if not den > 0:                    # singular (a huge C makes D^-1 vanish on a low-rank K)
                return False, target, b_new
            b_new[:] = (sol[:, 0].sum() - c) / den
        elif equality == 2:
            if not _group_multipliers(y, idx, sol, v3, c_out, b_new):
                return False, target, b_new
        n_move = 0
        worst = np.full(2, np.inf)
        worst_r = np.zeros(2, dtype=np.int64)
        n_free = np.zeros(2, dtype=np.int64)     # rows of each group in S1
        moving = np.zeros(2, dtype=np.int64)
        for r in range(m):
            a = idx[r]
            gr = group(y[a], equality)
            beta = y[a] * (sol[r, 0] - b_new[0] * sol[r, 1]) if n_groups == 1 else \
                y[a] * (sol[r, 0] - b_new[0] * sol[r, 1] - b_new[1] * sol[r, 2])
            target[a] = beta
            out = max(beta - C[a], 0.0) - min(beta, 0.0)
            n_free[gr] += 1
            if out > 0:
                n_move += 1
                moving[gr] += 1
            if out < worst[gr]:
                worst[gr], worst_r[gr] = out, r
        if n_move == 0 or round_ == 3:
            # components still outside the box are clipped by the line search
            return True, target, b_new
        for r in range(m):
            a = idx[r]
            gr = group(y[a], equality)
            # keep one free per group so that its equality can hold
            if equality and moving[gr] == n_free[gr] and r == worst_r[gr]:
                continue
            if target[a] > C[a]:
                target[a] = C[a]
                s1[a] = False
            elif target[a] < 0:
                target[a] = 0.0
                s1[a] = False
    return True, target, b_new


@njit(cache=True, nogil=True)
def _group_multipliers(y, idx, sol, v3, c_out, b_new):
    """Mode 2: the two multipliers from the 2 x 2 Schur complement of (3),
    sum_{r in g} (sol_0 - b_+ sol_1 - b_- sol_2)_r = c_g for g = +, -, with
    c_g = -sum_{i in g} v3_i - c_out_g. False when a group has no row in S1."""
    S = np.zeros((2, 2))
    rhs = np.zeros(2)
    for g in range(2):
        rhs[g] = c_out[g]
    for a in range(y.size):
        rhs[0 if y[a] > 0 else 1] += v3[a]      # rhs_g = -c_g
    for r in range(idx.size):
        g = 0 if y[idx[r]] > 0 else 1
        rhs[g] += sol[r, 0]
        S[g, 0] += sol[r, 1]
        S[g, 1] += sol[r, 2]
    det = S[0, 0] * S[1, 1] - S[0, 1] * S[1, 0]
    if not (S[0, 0] > 0 and S[1, 1] > 0 and det > 0):
        return False
    b_new[0] = (rhs[0] * S[1, 1] - S[0, 1] * rhs[1]) / det
    b_new[1] = (S[0, 0] * rhs[1] - S[1, 0] * rhs[0]) / det
    return True


@njit(cache=True, nogil=True)
def _step_towards(K, y, p, C, alpha, f, target, mu, mu_floor, equality):
    """Exact line search on D from alpha towards target, clipped to the box; (moved, mu).

    The step may extrapolate past the target (eta > 1). Near convergence d = target - alpha is
    tiny and its group sums are rounding noise that a large eta would amplify into a visible
    violation of the equalities (measured: 0.4 on a sum of 600 in nu-SVC, 77 of 987 in a
    one-class SVM started sparse); each group's sum of y d is therefore made zero on its largest
    component first."""
    d = target - alpha
    if equality:
        _zero_group_sums(y, d, equality)
    slope = 0.0
    for k in range(d.size):
        slope += d[k] * (y[k] * f[k] + p[k])
    if not slope < 0:
        return False, mu
    w = y * d
    Kw = K @ w
    curv = np.dot(w, Kw)
    eta = -slope / curv if curv > 0 else np.inf
    box = np.inf
    for k in range(d.size):
        if d[k] > 0:
            box = min(box, (C[k] - alpha[k]) / d[k])
        elif d[k] < 0:
            box = min(box, -alpha[k] / d[k])
    # Levenberg-Marquardt: damp when the box cuts the step short, relax when it does not
    scale = np.mean(np.diag(K))
    if box < 0.5:
        mu = max(10.0 * mu, 1e-6 * scale)
    elif box >= 1.0:
        mu = mu / 10.0 if mu > 1e-9 * scale else 0.0
    mu = max(mu, mu_floor)
    eta = min(eta, box)
    if not np.isfinite(eta) or eta <= 0:
        return False, mu
    _move(alpha, f, eta * d, eta * Kw, C)
    return True, mu


@njit(cache=True, nogil=True)
def _zero_group_sums(y, d, equality):
    """Move each equality group's sum of y_k d_k onto its largest |d_k|, leaving a zero sum."""
    for gr in range(2 if equality == 2 else 1):
        total, big, at = 0.0, 0.0, -1
        for k in range(y.size):
            if group(y[k], equality) == gr:
                total += y[k] * d[k]
                if abs(d[k]) > big:
                    big, at = abs(d[k]), k
        if at >= 0:
            d[at] -= y[at] * total


@njit(cache=True, nogil=True)
def _pair_step(K, diag, y, p, C, alpha, f, i, j, equality):
    """SMO step (with y'a = Delta) on (i, j') with j' by the second-order rule (WSS 2), j' in the
    group of i in mode 2; moves a_i and a_j' only and returns (t, j'), t the step along
    y_i d_i = -y_j' d_j' (f then moves by t (K_i - K_j'), :func:`_shift_and_violation`).
    ``diag`` is K's diagonal. Without the equality :func:`_pair_descent` takes the steps."""
    s_i = -y[i] * p[i] - f[i]
    row_i = K[i]
    # largest b^2 / a without a division per candidate: num * den_best > num_best * den
    num_best, den_best, jj = -1.0, 1.0, j
    for k in range(y.size):
        if equality == 2 and y[k] != y[i]:
            continue
        b_ik = s_i + y[k] * p[k] + f[k]
        if b_ik > 0 and up_low(y[k], alpha[k], C[k])[1]:
            a_ik = max(diag[i] + diag[k] - 2 * row_i[k], 1e-12)
            num = b_ik * b_ik
            if num * den_best > num_best * a_ik:
                num_best, den_best, jj = num, a_ik, k
    j = jj
    curv = max(diag[i] + diag[j] - 2 * row_i[j], 1e-12)
    t = (s_i + y[j] * p[j] + f[j]) / curv
    ti = C[i] - alpha[i] if y[i] > 0 else alpha[i]
    tj = alpha[j] if y[j] > 0 else C[j] - alpha[j]
    t = min(t, ti, tj)
    alpha[i] += y[i] * t
    alpha[i] = _snapped(alpha[i], C[i])
    alpha[j] -= y[j] * t
    alpha[j] = _snapped(alpha[j], C[j])
    return t, j


@njit(cache=True, nogil=True)
def _shift_and_violation(y, p, C, alpha, f, t, row_i, row_j, equality):
    """f += t (row_i - row_j) (t = 0: f is left alone), then :func:`violation` with an equality
    (modes 1 and 2: within each sign group in mode 2, LIBSVM's Solver_NU), in one pass."""
    shift = t != 0.0
    hi0 = hi1 = -np.inf
    lo0 = lo1 = np.inf
    i0 = i1 = j0 = j1 = -1
    for k in range(y.size):
        if shift:
            f[k] += t * (row_i[k] - row_j[k])
        s = -y[k] * p[k] - f[k]
        up, low = up_low(y[k], alpha[k], C[k])
        if group(y[k], equality) == 0:
            if up and s > hi0:
                hi0, i0 = s, k
            if low and s < lo0:
                lo0, j0 = s, k
        else:
            if up and s > hi1:
                hi1, i1 = s, k
            if low and s < lo1:
                lo1, j1 = s, k
    if equality == 1:                      # m - M, negative once strictly optimal
        return (hi0 - lo0, i0, j0) if i0 >= 0 and j0 >= 0 else (0.0, -1, -1)
    gap, i, j = 0.0, -1, -1                # mode 2: the larger group's m - M
    if i0 >= 0 and j0 >= 0 and hi0 - lo0 > gap:
        gap, i, j = hi0 - lo0, i0, j0
    if i1 >= 0 and j1 >= 0 and hi1 - lo1 > gap:
        gap, i, j = hi1 - lo1, i1, j1
    return gap, i, j


@njit(cache=True, nogil=True)
def _pair_steps(K, y, p, C, alpha, f, gap, i, j, tol, n_steps, equality, counts):
    """Up to ``n_steps`` SMO steps on W (y'a = Delta, or one equality per sign) from the current
    violation ``gap`` and pair (i, j); stops when the violation on W is <= tol or no pair is left.
    Each step reads two rows of K and makes one pass over W (update of f and next pair)."""
    diag = np.empty(y.size)
    for k in range(y.size):               # every entry snapped, as _move leaves them
        alpha[k] = _snapped(alpha[k], C[k])
        diag[k] = K[k, k]
    for _ in range(n_steps):
        if gap <= tol or i < 0:
            return
        t, j = _pair_step(K, diag, y, p, C, alpha, f, i, j, equality)
        counts[1] += 1
        gap, i, j = _shift_and_violation(y, p, C, alpha, f, t, K[i], K[j], equality)


@njit(cache=True, nogil=True)
def _scan(y, p, C, alpha, f, inv_diag, cand, si, row_i, sj, row_j):
    """One pass over W: f += si K_i + sj K_j (the last step's rows; si = sj = 0: none), then the
    first index i of the next step (largest PG_i^2 / Q_ii), min and max PG (the violation), and
    the samples with PG != 0 (the possible second indices) listed in ``cand``.
    Returns (i, PG_i^2 / Q_ii, min PG, max PG, number of candidates)."""
    i, best, lo, hi, n_cand = -1, 0.0, 0.0, 0.0, 0
    for r in range(y.size):
        f[r] += si * row_i[r] + sj * row_j[r]
        pg = projected_gradient(y[r], p[r], f[r], alpha[r], C[r])
        cand[n_cand] = r
        n_cand += pg != 0.0
        score = pg * pg * inv_diag[r]
        if score > best:
            best, i = score, r
        lo = min(lo, pg)
        hi = max(hi, pg)
    return i, best, lo, hi, n_cand


@njit(cache=True, nogil=True)
def _edge(g, q, lo, hi):
    """argmin over d in [lo, hi] of q d^2 / 2 + g d (q > 0)."""
    return min(max(-g / q, lo), hi)


@njit(cache=True, nogil=True)
def box_pair_step(ai, ui, gi, qii, aj, uj, gj, qjj, qij):
    """Exact minimiser (di, dj) of 1/2 [di dj] Q [di dj]' + gi di + gj dj over the box
    -ai <= di <= ui - ai, -aj <= dj <= uj - aj, Q = [[qii, qij], [qij, qjj]] positive definite:
    the unconstrained Newton step when it is feasible, else the best of the four edges (the
    minimum of a convex quadratic outside the box lies on its boundary). Closed form: the
    alternating minimisation it replaces needs ~1 / (1 - qij^2 / (qii qjj)) sweeps, many for
    samples that the augmented bias (kernel + 1) makes nearly collinear."""
    det = qii * qjj - qij * qij
    lo_i, hi_i, lo_j, hi_j = -ai, ui - ai, -aj, uj - aj
    di = (qij * gj - qjj * gi) / det
    dj = (qij * gi - qii * gj) / det
    if lo_i <= di <= hi_i and lo_j <= dj <= hi_j:
        return di, dj
    best, bi, bj = np.inf, 0.0, 0.0
    for side in range(4):
        if side < 2:                      # di at a bound, dj minimised on that edge
            di = lo_i if side == 0 else hi_i
            dj = _edge(gj + qij * di, qjj, lo_j, hi_j)
        else:                             # dj at a bound
            dj = lo_j if side == 2 else hi_j
            di = _edge(gi + qij * dj, qii, lo_i, hi_i)
        value = 0.5 * (qii * di * di + qjj * dj * dj) + qij * di * dj + gi * di + gj * dj
        if value < best:
            best, bi, bj = value, di, dj
    return bi, bj


@njit(cache=True, nogil=True)
def _pair_descent(K, y, p, C, alpha, f, tol, n_steps, counts):
    """Up to ``n_steps`` two-coordinate steps of greedy coordinate descent on W (no equality
    constraint; :mod:`.box_cd`'s step on W's block): i maximises PG_i^2 / Q_ii, j the gain of the
    unconstrained Newton step in (a_i, a_j) (second order, as LIBSVM's WSS 2), and the 2 x 2 box QP
    is solved exactly. Single-coordinate steps zig-zag along the direction that the augmented
    bias (every kernel entry + 1) couples: banana's SVCCV took 1,500 of them per chunk. The
    update of f and the next selection share one pass over W; no temporaries. Stops when the
    violation on W is <= tol (or no step moves)."""
    q = y.size
    for k in range(q):                    # every entry snapped, as _move leaves them
        alpha[k] = _snapped(alpha[k], C[k])
    cand = np.empty(q, dtype=np.int64)
    diag = np.empty(q)
    inv_diag = np.empty(q)
    for k in range(q):
        diag[k] = max(K[k, k], 1e-12)
        inv_diag[k] = 1.0 / diag[k]
    i, best, lo, hi, n_cand = _scan(y, p, C, alpha, f, inv_diag, cand, 0.0, K[0], 0.0, K[0])
    for _ in range(n_steps):
        if hi - lo <= tol or i < 0:
            return
        gi = y[i] * f[i] + p[i]
        qii = diag[i]
        row_i = K[i]
        j = -1
        # largest gain num / (2 det) without a division per candidate: num * den_best > num_best * den
        num_best, den_best = best, 1.0
        for t in range(n_cand):
            k = cand[t]
            qkk = diag[k]
            qik = y[i] * y[k] * row_i[k]
            det = qii * qkk - qik * qik
            if k == i or det <= 1e-12 * qii * qkk:
                continue
            gk = y[k] * f[k] + p[k]
            num = qkk * gi * gi - 2.0 * qik * gi * gk + qii * gk * gk
            if num * den_best > num_best * det:
                num_best, den_best, j = num, det, k
        ai = alpha[i]
        di = dj = 0.0
        if j < 0:
            di = min(max(ai - gi / qii, 0.0), C[i]) - ai
            j = i
        else:
            aj = alpha[j]
            gj = y[j] * f[j] + p[j]
            qjj = diag[j]
            qij = y[i] * y[j] * row_i[j]
            di, dj = box_pair_step(ai, C[i], gi, qii, aj, C[j], gj, qjj, qij)
            alpha[j] = aj + dj
            alpha[j] = _snapped(alpha[j], C[j])
        if di == 0.0 and dj == 0.0:
            return
        alpha[i] = ai + di
        alpha[i] = _snapped(alpha[i], C[i])
        counts[1] += 1
        si, sj = y[i] * di, y[j] * dj
        # f moves along the rows of the moved samples, as solve_chunk updates f
        i, best, lo, hi, n_cand = _scan(y, p, C, alpha, f, inv_diag, cand, si, row_i, sj, K[j])


@njit(cache=True, nogil=True)
def solve_working_set(K, y, p, C, alpha, f, c_out, b, mu, delta, tol, max_inner, equality, counts,
                      n_pair=1, mu_floor=0.0):
    """IRWLS on W until its violation is <= tol or ``max_inner`` iterations; returns (b, mu, n),
    b the multipliers of the groups (module docstring).

    After each IRWLS step, up to ``n_pair`` SMO pair steps (at least one; without y'a = 0 the
    two-coordinate steps of :func:`_pair_descent`).
    ``counts`` accumulates [linear solves, pair steps, ridged solves]. ``mu_floor``
    keeps a minimal proximal weight (it does not move the fixed point) for kernel
    blocks stored in float32, whose rounding can make K_11 + D^{-1} indefinite.
    """
    mu = max(mu, mu_floor)
    for it in range(max_inner):
        gap, i, j = violation(y, p, f, alpha, C, equality)
        if gap <= tol:
            return b, mu, it
        u = np.empty(y.size)
        for k in range(y.size):
            u[k] = -p[k] - y[k] * (f[k] + b[group(y[k], equality)])
        ok, target, b_new = _targets(K, y, p, C, alpha, f, u, c_out, mu, delta, equality, counts)
        if ok:
            moved, mu = _step_towards(K, y, p, C, alpha, f, target, mu, mu_floor, equality)
            if moved:
                b = b_new
                gap, i, j = violation(y, p, f, alpha, C, equality)
                if gap <= tol:
                    return b, mu, it + 1
        # SMO polish of W: pair steps are O(q) each, an IRWLS step O(q^3)
        if not equality:
            _pair_descent(K, y, p, C, alpha, f, tol, n_pair, counts)
            continue
        _pair_steps(K, y, p, C, alpha, f, gap, i, j, tol, n_pair, equality, counts)
    return b, mu, max_inner
