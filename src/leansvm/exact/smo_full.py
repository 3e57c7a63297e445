r"""Small problems: SMO on the whole matrix Q in memory, with second-order working set selection.

The problem is :class:`leansvm.core.problems.DualProblem`'s,

    min_a  1/2 a'Qa + p'a,   0 <= a_i <= C_i,   y'a = Delta   (or one equality per sign, the nu forms).

For a few thousand variables Q (n^2 doubles) costs one BLAS product and fits in memory; a pair step
then costs O(n) and nothing else: no kernel rows to fetch, no linear system. That is LIBSVM's
regime on small data, where chunked IRWLS (:mod:`leansvm.exact.irwls`) pays a fixed cost per chunk
(working-set selection, a Cholesky factor, the kernel rows) that one pair step does not, and at
very large C, where IRWLS's weights C_i / u_i make the systems ill-conditioned: iris (150 rows,
standardised), C = 1e10, gamma = 1e-5 took 3.4 s by IRWLS against LIBSVM's 2 ms.

A step moves the pair (i, j) along d_i = y_i, d_j = -y_j, which keeps y'a: with the violation
b = -y_i G_i + y_j G_j > 0 and the curvature a = d'Qd = K_ii + K_jj - 2 K_ij, the step is b / a
clipped to the box. The pair (Fan, Chen & Lin, "Working set selection using second order
information for training SVM", JMLR 6, 2005, WSS 2): i maximises -y_t G_t over I_up, j maximises
the gain b_it^2 / a_it over the t in I_low with b_it > 0. In the nu forms both come from one sign
group (Chang & Lin, LIBSVM, ACM TIST 2011, section 4.2). Stopping rule: the maximal violation
(per group) at most tol, the rule of IRWLS and of LIBSVM.
"""

from __future__ import annotations

import numpy as np

from leansvm.core.jit import njit
from leansvm.core.threads import check_cancelled

#: problems of up to this many variables take this route: one binary problem of the first n rows of
#: banana, magic, twonorm, satimage, a9a, letter at their C and gamma, one thread, SMO / IRWLS time:
#: 0.44-1.28 at n = 300, 1.16-2.44 at 800, 1.6-6.2 at 2,000 (``benchmarks/exact/bench_small_grid.py
#: --crossover``); below it the fixed cost per chunk is IRWLS's loss, above it the O(n) pair steps
MAX_ROWS = 400
#: a compiled burst does about this many multiply-adds (steps x n) before Python checks Ctrl-C
BURST_WORK = 2e7
#: the curvature used where d'Qd <= 0 (a non-positive-definite kernel; LIBSVM's TAU)
TAU = 1e-12


@njit(cache=True, nogil=True)
def _violation(alpha, y, G, C, groups):
    """(max violation, i of group 0, i of group 1, m of group 0, m of group 1): m_g = max of -y G
    over I_up of group g (group 1: y < 0, only with ``groups == 2``), the gap max_g m_g - M_g."""
    m0 = -np.inf
    m1 = -np.inf
    low0 = np.inf
    low1 = np.inf
    i0 = -1
    i1 = -1
    for t in range(y.size):
        v = -y[t] * G[t]
        if y[t] > 0:
            up = alpha[t] < C[t]
            low = alpha[t] > 0.0
        else:
            up = alpha[t] > 0.0
            low = alpha[t] < C[t]
        if groups == 2 and y[t] < 0:
            if up and v > m1:
                m1 = v
                i1 = t
            if low and v < low1:
                low1 = v
        else:
            if up and v > m0:
                m0 = v
                i0 = t
            if low and v < low0:
                low0 = v
    gap = m0 - low0
    if groups == 2 and m1 - low1 > gap:
        gap = m1 - low1
    return gap, i0, i1, m0, m1


@njit(cache=True, nogil=True)
def smo_steps(Q, y, C, alpha, G, groups, tol, max_steps):
    """At most ``max_steps`` pair steps on ``alpha`` and the gradient ``G = Qa + p`` (both updated in
    place); (steps taken, the violation when it stopped). Stops once the violation is <= tol."""
    n = y.size
    for step in range(max_steps):
        gap, i0, i1, m0, m1 = _violation(alpha, y, G, C, groups)
        if gap <= tol:
            return step, gap
        j = -1
        best = 0.0
        for t in range(n):
            low = alpha[t] > 0.0 if y[t] > 0 else alpha[t] < C[t]
            if not low:
                continue
            if groups == 2 and y[t] < 0:
                i, m = i1, m1
            else:
                i, m = i0, m0
            if i < 0:
                continue
            b = m + y[t] * G[t]
            if b > 0.0:
                a = Q[i, i] + Q[t, t] - 2.0 * y[i] * y[t] * Q[i, t]
                if a <= 0.0:
                    a = TAU
                if b * b / a > best:
                    best = b * b / a
                    j = t
        if j < 0:
            return step, gap
        i = i1 if (groups == 2 and y[j] < 0) else i0
        a = Q[i, i] + Q[j, j] - 2.0 * y[i] * y[j] * Q[i, j]
        if a <= 0.0:
            a = TAU
        step_size = (-y[i] * G[i] + y[j] * G[j]) / a
        room_i = C[i] - alpha[i] if y[i] > 0 else alpha[i]
        room_j = alpha[j] if y[j] > 0 else C[j] - alpha[j]
        step_size = min(step_size, room_i, room_j)
        di = y[i] * step_size
        dj = -y[j] * step_size
        if step_size == room_i:               # onto the bound exactly, no rounding residue
            alpha[i] = C[i] if y[i] > 0 else 0.0
        else:
            alpha[i] += di
        if step_size == room_j:
            alpha[j] = 0.0 if y[j] > 0 else C[j]
        else:
            alpha[j] += dj
        Qi = Q[i]
        Qj = Q[j]
        for t in range(n):
            G[t] += Qi[t] * di + Qj[t] * dj
    gap = _violation(alpha, y, G, C, groups)[0]
    return max_steps, gap


def signed_matrix(kernel, X, y, offset=0.0) -> np.ndarray:
    """Q = (y y') * (K + offset), C-contiguous float64."""
    Q = np.ascontiguousarray(kernel(X), dtype=np.float64)
    if offset:
        Q += offset
    Q *= y[:, None]
    Q *= y[None, :]
    return Q


@njit(cache=True, nogil=True)
def _solve_or_least_squares(system, rhs):
    """The solution of a square system by LU (a tenth of the SVD's time at 100 unknowns), or by
    least squares (minimum norm, singular values below rounding dropped) where LU finds it singular
    or its solution does not reproduce ``rhs`` to 1e-8 of its size: a nearly flat kernel (gamma =
    1e-7 on iris) makes Q_FF singular to rounding, and LU's solution then is noise."""
    scale = 0.0
    for a in range(rhs.size):
        scale = max(scale, abs(rhs[a]))
    try:
        solution = np.linalg.solve(system, rhs)
        residual = system @ solution - rhs
        good = True
        for a in range(rhs.size):
            if not abs(residual[a]) <= 1e-8 * scale:
                good = False
        if good:
            return solution
    except Exception:
        pass
    return np.linalg.lstsq(system, rhs, 2.220446049250313e-16 * rhs.size)[0]


@njit(cache=True, nogil=True)
def _flat_direction(system, residual, scale, solution, k):
    """(True, d) where the Newton system has no solution, d a descent direction of zero curvature;
    else (False, the Newton step ``solution[:k]``).

    A kernel of low rank (a linear kernel of few features) leaves Q_FF singular, and where -G_F is
    not in the range of the system the least-squares solution is no step to an optimum. Its residual
    r = rhs - S s is then orthogonal to S's range, i.e. in S's null space: Q_FF r_F + A r_e = 0 and
    A' r_F = 0, so d = r_F keeps the equalities, has d'Q_FF d = -(A'd)'r_e = 0, and G_F'd =
    -r'rhs = -|r|^2 < 0: the objective falls linearly along d until a variable reaches its bound
    and leaves F, as an active-set method for a semidefinite quadratic moves (Nocedal & Wright,
    Numerical Optimization, 16.5). Each such step drops a free variable; once the free set is no
    larger than the rank allows, the system is solvable and the next step is Newton's. d is projected
    onto A'd = 0 (A's columns are orthogonal: y_F, or the indicators of disjoint sign groups), so that
    a long step keeps the equalities to rounding. ``residual`` is rhs - S s, ``scale`` the largest
    |rhs| entry."""
    size = 0.0
    for a in range(k):
        size = max(size, abs(residual[a]))
    if not size > 1e-8 * scale:
        return False, solution[:k]
    d = residual[:k].copy()
    for e in range(k, residual.size):     # A'd = 0 exactly, not to the solver's rounding: the step is long
        along = 0.0
        norm = 0.0
        for a in range(k):
            along += system[a, e] * d[a]
            norm += system[a, e] * system[a, e]
        if norm > 0:
            for a in range(k):
                d[a] -= system[a, e] * along / norm
    return True, d


@njit(cache=True, nogil=True)
def _step_along(d, free, alpha, C, G, system, unbounded):
    """(t, cut, gain) of a step t d on the free variables: t at most 1 (a Newton step) or, for a
    direction of no curvature (``unbounded``), the minimum along d; cut short by the box where a
    variable reaches its bound first (``cut``); gain = t G_F'd + t^2 d'Q_FF d / 2, the objective's
    change (the free block of Q is the system's top-left block)."""
    k = d.size
    change = 0.0
    curvature = 0.0
    for a in range(k):
        change += G[free[a]] * d[a]
        for b in range(k):
            curvature += d[a] * system[a, b] * d[b]
    t = 1.0
    if unbounded:
        t = -change / curvature if curvature > 0 else np.inf
    box = np.inf
    for a in range(k):
        i = free[a]
        if d[a] > 0:
            box = min(box, (C[i] - alpha[i]) / d[a])
        elif d[a] < 0:
            box = min(box, -alpha[i] / d[a])
    cut = box < t
    t = min(t, box)
    if not (t > 0 and np.isfinite(t)):
        return 0.0, False, 0.0
    return t, cut, t * change + 0.5 * t * t * curvature


@njit(cache=True, nogil=True)
def newton_on_free(Q, y, C, alpha, G, groups, polish_tol=0.0):
    """One Newton step on the free variables F (0 < a_i < C_i), the others held: the equality-
    constrained minimiser of the quadratic on F, [Q_FF A; A' 0] [d; l] = [-G_F; 0] with A the
    equality rows (y_F, or one indicator per sign group that has free variables), by least squares
    (Q_FF is singular where the kernel is nearly flat: gamma = 1e-7 on iris), taken as far as the
    box allows (at most the full step). Where the free set is right this lands on the optimum at
    once, which pair steps reach slowly at very large C (iris at C = 1e10: millions of steps, each
    undoing part of the last). Where the system has no solution (a kernel of low rank), a step of no
    curvature to the box (:func:`_flat_direction`) where it lowers the objective more: iris's linear
    pair at C = 1e6 took 4.9 million pair steps without it, 203 with it. Updates ``alpha`` and ``G``.
    Returns 0 where it did not decrease the objective (or found nothing to move), 1 for a full step,
    2 for a step the box cut short (a variable left the free set: the next step may go on from there).

    ``polish_tol`` > 0: the last step of a converged solve (as :func:`leansvm.exact.irwls._polish_free`,
    from the Q in memory), taken only in full, where the system is solved to rounding, every a_F
    stays strictly inside its box and moves by less than ``polish_tol`` (the free set was already
    right): the solution then lands on the optimum to rounding, as LIBSVM's closed-form pair steps
    do. Not for one-sign problems (their free vectors would land exactly on the decision boundary,
    where a rounding error's sign decides the label)."""
    n = y.size
    k = 0
    n_pos = 0
    for t in range(n):
        if alpha[t] > 0.0 and alpha[t] < C[t]:
            k += 1
            if y[t] > 0:
                n_pos += 1
    if k < (1 if polish_tol > 0 else 2):
        return 0
    if polish_tol > 0:
        all_pos = True
        all_neg = True
        for t in range(n):
            if y[t] > 0:
                all_neg = False
            else:
                all_pos = False
        if all_pos or all_neg:
            return 0
    free = np.empty(k, np.intp)
    k = 0
    for t in range(n):
        if alpha[t] > 0.0 and alpha[t] < C[t]:
            free[k] = t
            k += 1
    # the equality rows: y_F (one group), or the indicator of each sign present (two groups)
    n_rows = 1 if groups == 1 else (n_pos > 0) + (n_pos < k)
    m = k + n_rows
    system = np.zeros((m, m))
    rhs = np.zeros(m)
    for a in range(k):
        i = free[a]
        for b in range(k):
            system[a, b] = Q[i, free[b]]
        rhs[a] = -G[i]
        if groups == 1:
            e = k
            value = y[i]
        else:
            e = k + (0 if (y[i] > 0 or n_pos == 0) else 1)
            value = 1.0
        system[a, e] = value
        system[e, a] = value
    solution = _solve_or_least_squares(system, rhs)
    d = solution[:k]
    for a in range(k):
        if not np.isfinite(d[a]):
            return 0
    residual = rhs - system @ solution         # the polish's check, the flat step's direction
    scale = 0.0
    for a in range(m):
        scale = max(scale, abs(rhs[a]))
    if polish_tol > 0:
        for a in range(m):
            if abs(residual[a]) > 1e-9 * max(scale, 1.0):
                return 0
        t_max = 1.0
        for a in range(k):
            i = free[a]
            new = alpha[i] + d[a]
            if not (new > 0 and new < C[i] and abs(d[a]) < polish_tol):
                return 0
        cut = False
    else:
        t_max, cut, gain = _step_along(d, free, alpha, C, G, system, False)
        flat, d_flat = _flat_direction(system, residual, scale, solution, k)
        if flat:                               # the step that lowers the objective more: on a kernel
            t_flat, cut_flat, gain_flat = _step_along(d_flat, free, alpha, C, G, system, True)
            if gain_flat < gain:               # singular only to rounding the least-squares one
                d, t_max, cut, gain = d_flat, t_flat, cut_flat, gain_flat
        if not gain < 0:
            return 0
    moved = False
    step = np.empty(k)
    for a in range(k):
        i = free[a]
        if polish_tol > 0:
            new = alpha[i] + d[a]
        else:
            new = alpha[i] + t_max * d[a]
            if d[a] > 0 and (C[i] - alpha[i]) / d[a] <= t_max:
                new = C[i]                     # onto the bound exactly
            elif d[a] < 0 and -alpha[i] / d[a] <= t_max:
                new = 0.0
        step[a] = new - alpha[i]
        moved = moved or step[a] != 0.0
        alpha[i] = new
    for t in range(n):
        total = 0.0
        for a in range(k):
            total += Q[t, free[a]] * step[a]
        G[t] += total
    if not moved:
        return 0
    return 2 if cut else 1


@njit(cache=True, nogil=True)
def newton_repeats(Q, y, C, alpha, G, groups, tol, repeats):
    """:func:`newton_on_free` steps while the box cuts each one short and the violation stays above
    ``tol``, at most ``repeats``: each such step drops a variable from the free set and the next
    goes on from there (an active-set descent). After a full step the free set's optimum is
    reached: what still violates is a variable at its bound, the pair steps' work. The number of
    steps taken."""
    taken = 0
    for _ in range(repeats):
        status = newton_on_free(Q, y, C, alpha, G, groups)
        if status == 0:
            break
        taken += 1
        if status == 1 or _violation(alpha, y, G, C, groups)[0] <= tol:
            break
    return taken


def solve_small(X, problem, kernel, alpha, f, groups, tol, max_iter=-1, callback=None, polish=False):
    """SMO on the variables of ``problem`` (rows of ``X``) from the feasible ``alpha`` with outputs
    ``f`` (f_i = sum_j y_j a_j k_ij over every sample, fixed ones included); ``alpha`` and ``f`` are
    updated in place. ``polish``: once converged, :func:`newton_on_free`'s polish. (alpha, violation, steps,
    converged, stats), as the IRWLS chunk loop's."""
    y, C = problem.y, problem.C
    n = y.size
    if n == 0:
        return alpha, 0.0, 0, True, {"route": "smo"}
    Q = signed_matrix(kernel, X, y)
    G = y * f + problem.p
    limit = max_iter if max_iter and max_iter > 0 else max(10_000_000, 100 * n)
    # bursts of pair steps, the first of 2 n; after each one that did not converge, Newton steps on
    # the free set (newton_repeats), then a burst of about the pair steps one Newton step costs,
    # k^3 / n for k free variables: the pair steps bring the variables the free set lacks, the Newton
    # steps solve it (iris's hardest pair at C = 1e10, gamma = 1e-5: 7,315 pair steps and 73 Newton
    # steps with bursts doubling, 208 and 19 so). Once the Newton steps outnumber the variables they
    # are not finding the free set (a nearly flat kernel), and the bursts double, up to BURST_WORK's size.
    burst, longest = 2 * n, int(max(100, BURST_WORK // n))
    steps, gap, newton = 0, np.inf, 0
    while steps < limit:
        check_cancelled()                     # a given-up parallel run, Ctrl-C: between bursts
        if callback is not None:
            callback(gap)
        asked = min(burst, limit - steps)
        taken, gap = smo_steps(Q, y, C, alpha, G, groups, tol, asked)
        steps += taken
        if taken < asked:                     # converged (or no pair can improve)
            break
        newton += newton_repeats(Q, y, C, alpha, G, groups, tol, n)   # each drops a free variable
        burst = min(2 * burst, longest)
        if newton <= n:
            free = int(np.count_nonzero((alpha > 0.0) & (alpha < C)))
            burst = max(1, min(burst, free ** 3 // n))
    if polish and gap <= tol:
        newton_on_free(Q, y, C, alpha, G, groups, tol)
    f[:] = y * (G - problem.p)
    return alpha, float(gap), steps, bool(gap <= tol), {"route": "smo", "pair_steps": steps,
                                                          "newton_steps": newton}
