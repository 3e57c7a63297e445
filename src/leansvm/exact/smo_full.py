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
#: Newton steps on the free set after a burst, at most (each one that the box cuts short drops a
#: variable from the free set)
NEWTON_REPEATS = 20
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


def newton_on_free(Q, y, C, alpha, G, groups) -> bool:
    """One Newton step on the free variables F (0 < a_i < C_i), the others held: the equality-
    constrained minimiser of the quadratic on F, [Q_FF A; A' 0] [d; l] = [-G_F; 0] with A the
    equality rows (y_F, or one indicator per sign), taken as far as the box allows (at most the full
    step). Where the free set is right this lands on the optimum at once, which pair steps reach
    slowly at very large C (iris at C = 1e10: millions of steps, each undoing part of the last).
    Updates ``alpha`` and ``G``; False where it did not decrease the objective."""
    free = np.flatnonzero((alpha > 0.0) & (alpha < C))
    if free.size < 2:
        return False
    yF = y[free]
    rows = [yF] if groups == 1 else [(yF > 0).astype(float), (yF < 0).astype(float)]
    rows = [r for r in rows if r.any()]
    k = free.size
    system = np.zeros((k + len(rows), k + len(rows)))
    system[:k, :k] = Q[np.ix_(free, free)]
    for e, r in enumerate(rows):
        system[:k, k + e] = r
        system[k + e, :k] = r
    rhs = np.concatenate((-G[free], np.zeros(len(rows))))
    d = np.linalg.lstsq(system, rhs, rcond=None)[0][:k]
    if not np.all(np.isfinite(d)):
        return False
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(d > 0, (C[free] - alpha[free]) / d, np.where(d < 0, -alpha[free] / d, np.inf))
    t = float(min(1.0, room.min()))
    QFd = system[:k, :k] @ d                  # the free block, gathered once above
    change = t * float(G[free] @ d) + 0.5 * t * t * float(d @ QFd)
    if not t > 0 or not change < 0:
        return False
    step = t * d
    new = alpha[free] + step
    new[room <= t] = np.where(d[room <= t] > 0, C[free][room <= t], 0.0)    # onto the bound exactly
    step = new - alpha[free]
    alpha[free] = new
    G += Q[:, free] @ step
    return True


def solve_small(X, problem, kernel, alpha, f, groups, tol, max_iter=-1, callback=None):
    """SMO on the variables of ``problem`` (rows of ``X``) from the feasible ``alpha`` with outputs
    ``f`` (f_i = sum_j y_j a_j k_ij over every sample, fixed ones included); ``alpha`` and ``f`` are
    updated in place. (alpha, violation, steps, converged, stats), as the IRWLS chunk loop's."""
    y, C = problem.y, problem.C
    n = y.size
    if n == 0:
        return alpha, 0.0, 0, True, {"route": "smo"}
    Q = signed_matrix(kernel, X, y)
    G = y * f + problem.p
    limit = max_iter if max_iter and max_iter > 0 else max(10_000_000, 100 * n)
    # bursts of pair steps, growing from 2 n to BURST_WORK's size; after each one that did not
    # converge, a Newton step on the free set (newton_on_free)
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
        for _ in range(NEWTON_REPEATS):      # a step cut short by the box frees the set: again
            if not newton_on_free(Q, y, C, alpha, G, groups):
                break
            newton += 1
            if _violation(alpha, y, G, C, groups)[0] <= tol:
                break
        burst = min(2 * burst, longest)
    f[:] = y * (G - problem.p)
    return alpha, float(gap), steps, bool(gap <= tol), {"route": "smo", "pair_steps": steps,
                                                          "newton_steps": newton}
