r"""Greedy coordinate descent for the SVM dual without an equality constraint (box QP).

    min_a  1/2 a'Qa + p'a,   0 <= a_i <= C_i,   Q_ij = y_i y_j (k(x_i, x_j) + offset)

(a :class:`leansvm.core.problems.DualProblem` without its equality; C-SVC: p = -1)

(offset 1: the augmented bias of Ogawa et al. / liblinear; 0: no bias). With
no equality constraint variables can move alone; each iteration is
LIBSVM's two-index working-set step without the equality: i has the largest
single-step gain PG_i^2 / Q_ii (Gauss-Southwell), j the largest gain of the
unconstrained Newton step in (a_i, a_j) (a second-order choice, as LIBSVM's
WSS 2; it follows the direction that couples samples through the bias
feature, along which single-coordinate steps zig-zag), the 2 x 2 box QP is
solved exactly, and the gradient g = Qa + p is updated with two kernel rows. Stopping rule: max PG - min PG <= tol
(the two-sided rule of :func:`irwls.box_violation`, LIBSVM's m - M).

Kernel rows come from a :class:`PathKernelCache` (a ``KernelRowCache``:
one GEMM per block of missing rows, LRU, ``cache_size`` MB) that a whole
regularisation path shares over its C values, pairs and folds; the compiled
loop returns to Python when it needs a row that is not cached. The solver
works only on the active samples: samples fixed at 0 or at C_i (safe
screening) enter once, through the initial gradient, which is why a screened
problem costs less per iteration as well as in iterations. This is the
reduced-problem solver of the regularisation path (:mod:`.path`); the
general exact solver stays IRWLS.
"""

from __future__ import annotations

import time
import warnings

import numba
import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from leansvm.core.jit import njit
from leansvm.core.kernels import Kernel, KernelRowCache
from leansvm.core.slab_ops import gather_rows
from leansvm.core.multiclass import BinaryFit
from leansvm.core.problems import DualProblem
from leansvm.exact.irwls_subproblem import box_pair_step
from leansvm.exact.screened_start import screened_start


@njit(cache=True, nogil=True)
def _pg(a, u, g):
    if a <= 0.0:
        return min(g, 0.0)
    if a >= u:
        return max(g, 0.0)
    return g


# -- the same descent on kernel rows shared by a whole path --------------------------------------
class PathKernelCache(KernelRowCache):
    """One kernel row cache for every C, fold and one-vs-one pair of a path at fixed kernel.

    Rows are k(x_r, X) over the *whole* training set X of the path; a binary
    sub-problem (a pair, a fold's training part, the unscreened samples) is a
    set of global row indices and reads its entries by column indexing, so a
    row computed once serves every C and every sub-problem that contains the
    sample. LIBSVM's grid recomputes them at every C.
    """

    #: rows computed per GEMM when filling never-used slots in place (64 MB of float32 rows at n = 15,000)
    FILL_BLOCK_ROWS = 1024

    @property
    def entry_error(self) -> float:
        """A bound on |K_stored[i, j] - k(x_i, x_j)| over every entry (the exact kernel of the float64 data).

        float32 rows are computed from float32 data by a float32 GEMM and
        transform (:meth:`_fill`), so the error is not 2^-23 relative to
        k: with u = 2^-24, s = max ||x_i||^2 and p features, rounding x to
        float32 moves ||x_i - x_j||^2 by <= 8 u s, the GEMM by <= 2 p u s
        (the dot-product bound gamma_p), the float32 norms and the two sums
        by <= 10 u s; the RBF value moves by <= gamma x that (|d exp(-t)/dt| <= 1)
        plus 6 u for the products, the exp and the float32 store. Linear:
        (p + 4) u s; poly/sigmoid through their derivative on |gamma <x, x'> + coef0|.
        float64 rows: the same with u = 2^-53 (GEMM error only). A 1.1 factor covers the
        second-order terms. Measured in ``tests/test_screening_float32.py``."""
        u = 2.0 ** -24 if self.dtype == np.float32 else 2.0 ** -53
        p = float(self.X.shape[1])
        s = float(self.norms.max(initial=0.0))
        dot = (2.0 * p + 18.0) * u * s               # bound on the error of 2 <x, x'> and of ||x - x'||^2
        k = self.kernel
        if k.name == "rbf":
            bound = k.gamma * dot + 6.0 * u
        elif k.name == "linear":
            bound = (p + 4.0) * u * s
        else:
            t = k.gamma * s + abs(k.coef0)         # |gamma <x, x'> + coef0| <= t
            slope = (k.degree * t ** (k.degree - 1) if k.degree >= 1 else 0.0) if k.name == "poly" else 1.0
            value = t ** k.degree if k.name == "poly" else 1.0
            bound = slope * k.gamma * dot + (k.degree + 3.0) * u * value
        return 1.1 * bound

    def _fill(self, samples):
        """Compute rows K[samples, :] straight into never-used slots (dense X, exact dtype): no
        temporary block, no copy. The generic path computes a block of up to half the cache and
        copies it in; on magic (15,216 rows, 926 MB) that copy and the fresh temporary's page
        faults cost 2.3 s CPU of the first C's 3.1 s. Elsewhere the generic path."""
        if sp.issparse(self.X) or self.X.dtype != self.dtype or self._filled + samples.size > self.capacity:
            return super()._fill(samples)
        start = self._claim(samples)[0]              # never-used slots: contiguous, in order
        for a in range(0, samples.size, self.FILL_BLOCK_ROWS):
            rows = samples[a:a + self.FILL_BLOCK_ROWS]
            out = self._slab[start + a:start + a + rows.size]
            np.dot(self.X[rows], self.X.T, out=out)
            self.kernel.transform_inner(out, x_norms=self.norms[rows], y_norms=self.norms)

    def fill_from_inner(self, inner) -> bool:
        """Every row at once from precomputed inner products X X' (n x n, the cache's dtype) when the
        cache is empty, holds all n rows and its data are dense: one GEMM then serves every gamma of a
        search round (:mod:`leansvm.paths.search`). Returns whether it filled."""
        if self._filled or self.capacity < self.n or sp.issparse(self.X) or inner.shape != self._slab.shape \
                or inner.dtype != self.dtype:
            return False
        self._claim(np.arange(self.n))
        np.copyto(self._slab, inner)
        self.kernel.transform_inner(self._slab, x_norms=self.norms, y_norms=self.norms)
        return True

    @property
    def row_diagonal(self) -> np.ndarray:
        """k(x_i, x_i) of every row of X, computed once (each solve of a path reads its part)."""
        if getattr(self, "_row_diagonal", None) is None:
            self._row_diagonal = self.kernel.diagonal(self.X)
        return self._row_diagonal

    def resident_slots(self, idx) -> np.ndarray:
        """Slot in ``slab`` of each global row of ``idx``, -1 where the row is not cached (no side effect)."""
        return self._slot_of[np.asarray(idx, dtype=np.intp)]

    def subset(self, idx) -> "PathKernelCache":
        """A cache holding the whole block K[idx, idx] (rows over ``idx`` only), copied from this
        one (rows computed here when missing). A sub-problem (one-vs-one pair) then reads short
        contiguous rows: the descent's cost per step is memory traffic over its rows."""
        idx = np.asarray(idx, dtype=np.intp)
        sub = PathKernelCache(self.kernel, self.X[idx], idx.size * idx.size * self.dtype.itemsize / 2**20 + 1e-3,
                              dtype=self.dtype)
        step = max(1, self.capacity // 2)
        for start in range(0, idx.size, step):
            block = idx[start:start + step]
            # gathered straight into the new slab (satimage's 15 pairs: 0.4 s CPU for np.ix_ plus the copy)
            free = sub._claim(np.arange(start, start + block.size))   # a fresh cache: in order
            gather_rows(self.slab, self.slots(block).astype(np.int64), idx.astype(np.int64), sub._slab,
                        free.astype(np.int64))
        return sub


@njit(cache=True, nogil=True)
def _firm(alpha, upper, grad, act, n_act):
    """LIBSVM/liblinear shrinking without the equality: which of the positions act[:n_act] are
    firmly at a bound (at 0 with a gradient above the largest projected gradient, or at C_i below
    the smallest)."""
    pg_max = 0.0
    pg_min = 0.0
    for t in range(n_act):
        k = act[t]
        pg = _pg(alpha[k], upper[k], grad[k])
        pg_max = max(pg_max, pg)
        pg_min = min(pg_min, pg)
    leave = np.zeros(n_act, dtype=np.bool_)
    for t in range(n_act):
        k = act[t]
        leave[t] = (alpha[k] <= 0.0 and grad[k] > pg_max) or (alpha[k] >= upper[k] and grad[k] < pg_min)
    return leave


@njit(cache=True, nogil=True)
def _shrink(alpha, upper, grad, act, n_act):
    """The samples firmly at a bound (:func:`_firm`) leave the active set (moved behind it in
    ``act``). Returns the new active count."""
    return _compact(act, n_act, _firm(alpha, upper, grad, act, n_act))


@njit(cache=True, nogil=True)
def _compact(act, n_act, leave):
    """Move the positions act[t] with leave[t] behind the active part act[:n_act]; returns the new count."""
    kept = 0
    for t in range(n_act):
        if not leave[t]:
            k = act[kept]
            act[kept] = act[t]
            act[t] = k
            kept += 1
    return kept


@njit(cache=True, nogil=True)
def _gap_drop(alpha, upper, grad, znorm, p, act, n_act, err, slack):
    """Dynamic safe screening (the duality-gap rule): the gap of the problem restricted to the active
    samples (the others are held at bounds proven safe), G_A = sum_A a_i (g_i + p_i) + C_i (-p_i - g_i)_+
    with the margins g_i = grad_i - p_i (the hinge's 1 - g_i for p = -1), bounds ||w - w*|| <= sqrt(2 G_A)
    (screening.gap_bounds, restricted form). Samples already at 0 with g_i - r ||z_i|| > -p_i, or at C_i
    with g_i + r ||z_i|| < -p_i, leave for good (moved behind act[:n_act]). ``err`` bounds the error of
    every g_i (float32 rows). Returns n_act."""
    gap = 0.0
    total_c = 0.0
    for t in range(n_act):
        k = act[t]
        g = grad[k] - p[k]
        gap += alpha[k] * (g + p[k]) + upper[k] * max(-p[k] - g, 0.0)
        total_c += upper[k]
    r = np.sqrt(2.0 * (max(gap, 0.0) + 2.0 * err * total_c))
    leave = np.zeros(n_act, dtype=np.bool_)
    for t in range(n_act):
        k = act[t]
        g = grad[k] - p[k]
        width = r * znorm[k] + err + slack * (1.0 + abs(g))
        leave[t] = (alpha[k] <= 0.0 and g - width > -p[k]) or (alpha[k] >= upper[k] and g + width < -p[k])
    return _compact(act, n_act, leave)


@njit(cache=True, nogil=True)
def _bound_flag(a, u):
    """Which case of the projected gradient a sample is in: 0 free, 1 at 0, 2 at its bound u."""
    if a <= 0.0:
        return 1
    if a >= u:
        return 2
    return 0


@njit(cache=True, nogil=True)
def _flag_pg(flag, g):
    """:func:`_pg` from the sample's :func:`_bound_flag` (one byte read instead of a and u)."""
    if flag == 1:
        return min(g, 0.0)
    if flag == 2:
        return max(g, 0.0)
    return g


@njit(cache=True, nogil=True, inline="always")
def _visit(k, g, flag, inv_diag, cand, acc):
    """One sample of a selection pass: list it as a candidate second index (PG != 0), track
    min / max PG and the greedy first index. ``acc`` = (i, best PG^2/Q_ii, min PG, max PG, #cand)."""
    i, best, pg_min, pg_max, n_cand = acc
    pg = _flag_pg(flag[k], g)
    cand[n_cand] = k
    n_cand += pg != 0.0
    score = pg * pg * inv_diag[k]
    if score > best:
        best = score
        i = k
    return i, best, min(pg_min, pg), max(pg_max, pg), n_cand


@njit(cache=True, nogil=True)
def _select(flag, grad, inv_diag, act, n_act, ident, cand):
    """Greedy first index over act[:n_act] (``ident``: act is the identity): (i, best PG^2/Q_ii,
    min PG, max PG, number of candidates), the candidates (PG != 0, the only possible second
    indices) written to ``cand``."""
    acc = (-1, 0.0, 0.0, 0.0, 0)
    if ident:
        for k in range(n_act):
            acc = _visit(k, grad[k], flag, inv_diag, cand, acc)
    else:
        for t in range(n_act):
            acc = _visit(act[t], grad[act[t]], flag, inv_diag, cand, acc)
    return acc


@njit(cache=True, nogil=True)
def _update_select(si, row_i, sj, row_j, both, cols, y, grad, flag, inv_diag, act, n_act, ident, cand, direct):
    """g_k += y_k (s_i K_ik + s_j K_jk + (s_i + s_j) offset) over the active set, fused with the
    next :func:`_select` (one pass over the rows instead of two is the point). Reading act[t]
    when it is the identity costs 30 % (satimage pairs), hence the two loops; ``direct``: the
    columns are the identity too (a whole pair block of a subset cache, nothing screened), so
    row entries are read without cols[k]."""
    acc = (-1, 0.0, 0.0, 0.0, 0)
    if ident and direct:
        for k in range(n_act):
            g = grad[k] + y[k] * (si * row_i[k] + sj * row_j[k] + both)
            grad[k] = g
            acc = _visit(k, g, flag, inv_diag, cand, acc)
    elif ident:
        for k in range(n_act):
            c = cols[k]
            g = grad[k] + y[k] * (si * row_i[c] + sj * row_j[c] + both)
            grad[k] = g
            acc = _visit(k, g, flag, inv_diag, cand, acc)
    else:
        for t in range(n_act):
            k = act[t]
            c = cols[k]
            g = grad[k] + y[k] * (si * row_i[c] + sj * row_j[c] + both)
            grad[k] = g
            acc = _visit(k, g, flag, inv_diag, cand, acc)
    return acc


@njit(cache=True, nogil=True)
def _greedy_cd_cached(slab, slot, cols, y, upper, alpha, grad, diag, offset, tol, it, max_iter, used,
                      act, state, shrink_every, znorm, p, err):
    """Greedy CD on cached rows, Q_ik = y_i y_k (slab[slot[i], cols[k]] + offset), over the
    active positions act[:state[0]] (shrinking every ``shrink_every`` steps while state[2] = 1;
    state[1] counts steps since the last shrink; state[3] = 1: dynamic gap screening
    instead, :func:`_gap_drop` with ``znorm`` ||z_i||, the linear term ``p`` and margin error ``err``; state[4] sums
    the active-set sizes of the steps, the work the path's solver choice reads). The
    gradient update and the next first-index selection share one pass over the active set,
    which also lists the samples with a non-zero projected gradient: the second index is
    searched among those only (on data with many bounded SVs, most samples at a bound have
    PG = 0). Per sample the passes read a one-byte bound flag instead of a_i and C_i (the loop
    is bound by memory traffic: 1.5-1.8x faster than reading both, same iterates).

    Returns (iterations so far, gap, code): code >= 0 is an active sample whose
    row is not resident (the caller caches it and calls again); -2: converged
    on a shrunk set (the caller restores the other gradients and calls again);
    -1: converged on every sample, or ``max_iter`` reached.
    """
    n = y.size
    inv_diag = np.empty(n)
    flag = np.empty(n, dtype=np.int8)
    for k in range(n):
        inv_diag[k] = 1.0 / diag[k]
        flag[k] = _bound_flag(alpha[k], upper[k])
    cand = np.empty(n, dtype=np.int64)
    n_cand = 0
    ident = state[2] == 0 and state[3] == 0 and state[0] == n   # act never changes: skip reading it
    direct = True                                               # cols the identity: skip reading it too
    for k in range(n):
        if cols[k] != k:
            direct = False
            break
    gap = np.inf
    fresh = False              # (i, best_score, pg_min, pg_max, cand) from the last update pass
    i = -1
    best_score = 0.0
    pg_min = 0.0
    pg_max = 0.0
    while it < max_iter:
        if state[2] == 1 and state[1] >= shrink_every:
            state[1] = 0
            state[0] = _shrink(alpha, upper, grad, act, state[0])
            fresh = False
        elif state[3] == 1 and state[1] >= shrink_every:
            state[1] = 0
            state[0] = _gap_drop(alpha, upper, grad, znorm, p, act, state[0], err, 1e-9)
            fresh = False
        n_act = state[0]
        if not fresh:
            i, best_score, pg_min, pg_max, n_cand = _select(flag, grad, inv_diag, act, n_act, ident, cand)
        fresh = False
        gap = pg_max - pg_min
        if gap <= tol or i < 0:
            return it, gap, (-2 if n_act < n else -1)
        if slot[i] < 0:
            return it, gap, i
        row_i = slab[slot[i]]
        gi = grad[i]
        qii = diag[i]
        yi = y[i]
        j = -1
        best_gain = best_score / 2.0
        for t in range(n_cand):
            k = cand[t]
            if k == i:
                continue
            qik = yi * y[k] * (row_i[cols[k]] + offset)
            det = qii * diag[k] - qik * qik
            if det <= 1e-12 * qii * diag[k]:
                continue
            gk = grad[k]
            gain = (diag[k] * gi * gi - 2.0 * qik * gi * gk + qii * gk * gk) / (2.0 * det)
            if gain > best_gain:
                best_gain = gain
                j = k
        ai = alpha[i]
        used[i] = True
        si = 0.0
        sj = 0.0
        if j < 0:
            new_i = min(max(ai - gi / qii, 0.0), upper[i])
            di = new_i - ai
            if di == 0.0:
                return it, gap, (-2 if n_act < n else -1)
            alpha[i] = new_i
            si = di * y[i]
            row_j = row_i
        else:
            if slot[j] < 0:
                return it, gap, j
            row_j = slab[slot[j]]
            used[j] = True
            qij = y[i] * y[j] * (row_i[cols[j]] + offset)
            qjj = diag[j]
            gj = grad[j]
            aj = alpha[j]
            di, dj = box_pair_step(ai, upper[i], gi, qii, aj, upper[j], gj, qjj, qij)   # exact 2 x 2 box QP
            if di == 0.0 and dj == 0.0:
                return it, gap, (-2 if n_act < n else -1)
            alpha[i] = ai + di
            alpha[j] = aj + dj
            si = di * y[i]
            sj = dj * y[j]
            flag[j] = _bound_flag(alpha[j], upper[j])
        flag[i] = _bound_flag(alpha[i], upper[i])
        both = (si + sj) * offset
        i, best_score, pg_min, pg_max, n_cand = _update_select(si, row_i, sj, row_j, both, cols, y, grad, flag,
                                                                inv_diag, act, n_act, ident, cand, direct)
        fresh = True
        it += 1
        state[1] += 1
        state[4] += n_act
    return it, gap, -1


@njit(cache=True, nogil=True)
def _greedy_cd_compacted(slab, slot, cols, y, upper, alpha, grad, diag, offset, tol, it, max_iter, used,
                         act, state, shrink_every, znorm, p, err):
    """:func:`_greedy_cd_cached` with shrinking on compacted copies: the active samples are moved
    to the front of local arrays (LIBSVM's swap_index), so the descent runs in segments of
    ``shrink_every`` steps over a contiguous prefix (rows read through ``cols``) instead of through
    ``act[]``; after each segment the samples firmly at a bound (:func:`_shrink`'s rule) move
    behind the prefix. Same arguments, results and return codes; on return ``act`` lists the
    active positions first (state[0] of them) and alpha, grad and used are written back.
    state[4] counts n visits per step, as without shrinking: the path's solver choice
    (:class:`.path._CachedSolver`) reads the same work counts with and without it."""
    n = y.size
    order = act.copy()
    l_cols, l_y, l_upper, l_alpha = cols[order], y[order], upper[order], alpha[order]
    l_grad, l_diag, l_slot, l_used, l_znorm = grad[order], diag[order], slot[order], used[order], znorm[order]
    l_p = p[order]
    n_act = state[0]
    code = -1
    gap = np.inf
    while True:
        budget = min(max_iter, it + max(shrink_every - state[1], 1))
        inner = np.array([n_act, 0, 0, 0, 0], dtype=np.int64)
        start = it
        it, gap, code = _greedy_cd_cached(slab, l_slot[:n_act], l_cols[:n_act], l_y[:n_act], l_upper[:n_act],
                                          l_alpha[:n_act], l_grad[:n_act], l_diag[:n_act], offset, tol, it,
                                          budget, l_used[:n_act], np.arange(n_act), inner, shrink_every,
                                          l_znorm[:n_act], l_p[:n_act], err)
        state[4] += (it - start) * n           # the work count of the same steps without shrinking
        state[1] += it - start
        if code >= 0:                      # a row to fetch: its position in the caller's arrays
            code = order[code]
            break
        if it < budget or it >= max_iter:  # converged (or stalled) on the prefix, or out of steps
            code = -2 if n_act < n else -1
            break
        state[1] = 0
        leave = _firm(l_alpha, l_upper, l_grad, np.arange(n_act), n_act)
        perm = np.concatenate((np.flatnonzero(~leave), np.flatnonzero(leave)))
        for arr in (l_cols, l_slot, order):
            arr[:n_act] = arr[:n_act][perm]
        for arr in (l_y, l_upper, l_alpha, l_grad, l_diag, l_znorm, l_p):
            arr[:n_act] = arr[:n_act][perm]
        l_used[:n_act] = l_used[:n_act][perm]
        n_act -= int(leave.sum())
    alpha[order] = l_alpha
    grad[order] = l_grad
    used[order] = l_used
    act[:] = order
    state[0] = n_act
    return it, gap, code


#: steps between two shrinking passes of ``shrinking='compact'`` (:func:`_greedy_cd_compacted`)
COMPACT_SHRINK_EVERY = 300


def _fetch_rows(cache, cols, need, alpha, upper, grad, diag, used, batch, active):
    """Cache the needed row plus the ``batch - 1`` uncached rows most likely to be needed next
    (largest single-step gain), and refresh the LRU stamps of the rows the descent used."""
    slot = cache.resident_slots(cols)
    touched = np.flatnonzero(used & (slot >= 0))
    used[:] = False
    room = max(1, min(batch, cache.capacity // 2))
    pg = np.where(alpha <= 0, np.minimum(grad, 0.0), np.where(alpha >= upper, np.maximum(grad, 0.0), grad))
    score = np.where((slot < 0) & active, pg * pg / diag, -1.0)
    score[need] = np.inf
    cand = np.flatnonzero(score > 0)
    if cand.size > room:
        cand = cand[np.argpartition(-score[cand], room - 1)[:room]]
    if touched.size:
        cache.slots(cols[touched[-max(1, cache.capacity - cand.size - 1):]])
    cache.slots(cols[cand])
    return cache.resident_slots(cols).astype(np.int64)


def box_start(C, alpha_init=None, fixed_at_zero=None, fixed_at_C=None):
    """(active mask, starting alpha) of a box QP 0 <= a <= C with screened samples: those fixed at 0
    or at C_i take that value, the others ``alpha_init`` clipped to the box (0 without it)."""
    fixed0, fixedC, alpha = screened_start(C, alpha_init, fixed_at_zero, fixed_at_C)
    return ~(fixed0 | fixedC), alpha


def solve_box_cd_cached(cache: PathKernelCache, index, problem: DualProblem, *, tol=1e-3, bias="augmented",
                        alpha_init=None, fixed_at_zero=None, fixed_at_C=None, initial_margins=None,
                        max_iter=-1, batch=128, shrinking=False, dynamic=False) -> BinaryFit:
    """:func:`solve_box_cd` on the rows ``index`` (global, into ``cache.X``) of a shared row cache.

    Same problem, warm start and screened samples (``index`` gives the row of each sample; with
    ``problem.rows``, variable i reads the row index[rows[i]]). Rows come from ``cache``
    (computed in blocks of ``batch`` by one GEMM when missing, kept for the
    next C / fold / pair). ``initial_margins`` (y_i f(x_i) at the start, e.g.
    from the previous C) skips the start-up product. The margins of every
    sample at the solution are returned in ``stats["margins"]``. ``shrinking``:
    as LIBSVM, samples firmly at a bound leave the active set every
    min(n, 1000) steps; at convergence their gradients are restored from the
    start and the columns that moved, and the rule is checked on all samples
    (after 3 such restores shrinking stops, so the loop ends). Off by default:
    on a 3000-sample RBF problem at C = 10 and 100 (tol 1e-3) it added 15 %
    iterations (samples shrunk too early come back) and saved no time.
    ``dynamic``: safe dynamic screening instead of shrinking (:func:`_gap_drop`
    every max(50, n / 8) steps, O(n) each: samples proven at their bound by the gap ball of
    the restricted problem leave for good, with no check at the end); their
    count is ``stats["dynamic_screened"]``.
    """
    if bias not in ("augmented", "none"):
        raise ValueError(f"solve_box_cd solves the box QP: bias must be 'augmented' or 'none', got {bias!r}")
    offset = 1.0 if bias == "augmented" else 0.0
    index = np.asarray(index, dtype=np.intp)
    if problem.rows is not None:
        index = index[problem.rows]
    y, p, C = problem.y, problem.p, problem.C
    n = y.size
    if index.shape != (n,) or C.shape != (n,):
        raise ValueError(f"index and C must have shape ({n},)")
    start = time.perf_counter()
    active, alpha = box_start(C, alpha_init, fixed_at_zero, fixed_at_C)
    if initial_margins is not None:
        margins = np.array(initial_margins, dtype=np.float64)
        if margins.shape != (n,):
            raise ValueError(f"initial_margins must have shape ({n},)")
    else:
        nz = np.flatnonzero(alpha)
        margins = y * cache.outputs(index[nz], y[nz] * alpha[nz], index, offset)
    alpha_start = alpha.copy()
    A = np.flatnonzero(active)
    cols = index[A].astype(np.int64)
    yA, pA, CA = y[A], p[A], C[A]
    aA = alpha[A].copy()
    grad = margins[A] + p[A]
    diag = np.maximum(cache.row_diagonal[cols] + offset, 1e-12)
    limit = int(max_iter) if max_iter and max_iter > 0 else 100 * max(n, 1000) + 100_000
    used = np.zeros(A.size, dtype=np.bool_)
    it, gap, need = 0, (0.0 if A.size == 0 else np.inf), -1
    slot = cache.resident_slots(cols).astype(np.int64)
    act = np.arange(A.size, dtype=np.int64)
    if shrinking not in (False, True, "compact"):
        raise ValueError(f"shrinking must be False, True or 'compact', got {shrinking!r}")
    compact = shrinking == "compact" and not dynamic
    state = np.array([A.size, 0, 1 if shrinking and not dynamic else 0, 1 if dynamic else 0, 0], dtype=np.int64)
    znorm = np.sqrt(diag)
    # |error| of a margin accumulated from the cached rows (PathKernelCache.entry_error per unit of a, x 2)
    err = 2.0 * cache.entry_error * (float(CA.sum()) + 1.0)
    grad_start, a_start = grad.copy(), aA.copy()
    n_fetch = n_restore = 0

    def restore():
        """Exact gradients of the shrunk positions: start value plus the columns that moved."""
        out = act[state[0]:]
        moved = np.flatnonzero(aA != a_start)
        grad[out] = grad_start[out] + yA[out] * cache.outputs(
            cols[moved], yA[moved] * (aA[moved] - a_start[moved]), cols[out], offset)
        state[0] = A.size
        if not compact:
            state[4] += moved.size * out.size // 2  # kernel entries read, each ~half a step's visit

    while A.size:
        descent = _greedy_cd_compacted if compact and state[2] == 1 else _greedy_cd_cached
        every = max(50, A.size // 8) if dynamic else min(A.size, COMPACT_SHRINK_EVERY if compact else 1000)
        it, gap, need = descent(cache.slab, slot, cols, yA, CA, aA, grad, diag, offset,
                                float(tol), it, limit, used, act, state, every, znorm, pA, err)
        if need == -2 and dynamic:
            break                              # the samples out of the active set are proven at their bound
        if need == -2 and n_restore < 3 * A.size:
            restore()
            # restore's product may evict rows the descent holds slots of: read the slots again
            # (stale slots made full a9a's margins drift by 3e-3 in one solve, 22 at C = 100 on the path)
            slot = cache.resident_slots(cols).astype(np.int64)
            n_restore += 1
            if n_restore >= 3:
                state[2] = 0
            continue
        if need < 0 or n_fetch > limit:
            break
        active_now = np.zeros(A.size, dtype=bool)
        active_now[act[:state[0]]] = True
        slot = _fetch_rows(cache, cols, need, aA, CA, grad, diag, used, batch, active_now)
        n_fetch += 1
    n_dynamic = int(A.size - state[0]) if dynamic else 0
    if state[0] < A.size:
        restore()
    if A.size and not np.isfinite(gap):            # stopped at max_iter before a selection pass measured it
        pg = np.where(aA <= 0.0, np.minimum(grad, 0.0), np.where(aA >= CA, np.maximum(grad, 0.0), grad))
        gap = float(pg.max() - pg.min())
    converged = gap <= tol
    if not converged:
        warnings.warn(f"box coordinate descent stopped after {it} iterations with violation "
                      f"{gap:.3e} > tol={tol}", ConvergenceWarning, stacklevel=2)
    alpha[A] = aA
    margins[A] = grad - pA
    F = np.flatnonzero(~active)
    changed = np.flatnonzero(alpha != alpha_start)
    if F.size and changed.size:
        d_coef = y[changed] * (alpha[changed] - alpha_start[changed])
        margins[F] += y[F] * cache.outputs(index[changed], d_coef, index[F], offset)
    objective = float(alpha @ (margins / 2 + p))
    return BinaryFit(alpha=alpha, intercept=offset * float(y @ alpha), dual_objective=objective,
                     n_iter=int(it), converged=bool(converged),
                     stats={"violation": float(gap), "n_active": int(A.size), "active": A,
                            "active_margins": margins[A], "margins": margins, "row_fetches": n_fetch,
                            "n_restore": n_restore, "dynamic_screened": n_dynamic, "visits": int(state[4]),
                            "seconds": time.perf_counter() - start})


def solve_box_cd(X, problem: DualProblem, kernel: Kernel, *, tol=1e-3, bias="augmented", alpha_init=None,
                 fixed_at_zero=None, fixed_at_C=None, initial_margins=None, cache_size=200.0,
                 max_iter=-1) -> BinaryFit:
    """Solve the box-constrained SVM dual by greedy coordinate descent (module docstring).

    Same contract as ``solve_irwls`` for ``bias`` in {'augmented', 'none'}:
    per-sample bounds ``C``, warm start ``alpha_init``, screened samples held
    at 0 / C_i. Returns a :class:`BinaryFit` (intercept = sum_i y_i a_i for
    the augmented bias, so the plain-kernel expansion gives the same f), with
    the margins y_i f(x_i) of every sample in ``stats["margins"]``.
    ``initial_margins``: those at the starting point when the caller knows
    them (skips the start-up product). Rows in float64, in a cache of
    ``cache_size`` MB of its own (:func:`solve_box_cd_cached` shares one).
    """
    if bias not in ("augmented", "none"):
        raise ValueError(f"solve_box_cd solves the box QP: bias must be 'augmented' or 'none', got {bias!r}")
    cache = PathKernelCache(kernel, X, cache_size, np.float64)
    return solve_box_cd_cached(cache, np.arange(X.shape[0]), problem, tol=tol, bias=bias,
                               alpha_init=alpha_init, fixed_at_zero=fixed_at_zero, fixed_at_C=fixed_at_C,
                               initial_margins=initial_margins, max_iter=max_iter)
