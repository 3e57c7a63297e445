r"""Budget SMO over kernel rows with LIBSVM-style shrinking (the large-n path of :mod:`.budget_smo`).

The pair step, the allowed pairs, the constant-factor working-pair selection
and the margin-relative stop are those of :func:`.budget_smo._smo_block`
(module docstring there); this loop differs in where the kernel comes from
and in which samples it looks at.

Kernel rows. Row k(x_i, X) is read from a slab of rows (``slab[slot_of[i]]``):
either the whole n x n matrix (``slot_of = arange(n)``) or the slab of a
:class:`~leansvm.core.kernels.KernelRowCache` (float32 by default, as LIBSVM's
``Qfloat``; the gradient is accumulated in float64). A pair step needs the
rows of the two I_up candidates i (one per class) and of the chosen j; when
one is not resident the compiled loop returns ``NEED_ROW`` and the driver
makes it resident (refreshing the LRU stamps of the rows used since the last
return, so hot rows are not evicted) and calls the loop again.

Shrinking (Joachims 1999; Fan, Chen & Lin 2005, LIBSVM's ``do_shrinking``).
With v_t = -y_t G_t, a pair (i in I_up, j in I_low) violates when
v_i > v_j. Allowed pairs are (+,+), (-,-), (- up, + low) always and
(+ up, - low) only while the sum constraint 1'a <= S has slack: when it is
active its multiplier rho splits the common level b into two class levels
(b + rho, b - rho) and the classes only couple through the pair that lowers
1'a. A sample at a bound can move one way only; it is removed from the active
set while it cannot be part of any allowed violating pair, i.e.

    y = +1, a = 0 (I_up only):  v_t < min(low_+, low_- if slack > 0)
    y = +1, a = U (I_low only): v_t > max(up_+, up_-)
    y = -1, a = U (I_up only):  v_t < min(low_-, low_+)
    y = -1, a = 0 (I_low only): v_t > max(up_-, up_+ if slack > 0)

(up_c = max of v over I_up of class c, low_c = min over I_low, both over the
active set), checked every min(n, 1000) steps. The gradient of a removed
sample is not updated; it is reconstructed from the support vectors,
G_t = y_t sum_s y_s a_s k(x_s, x_t) - 1 + eta a_t, once when the violation
first falls below 10 tol x scale (LIBSVM's unshrink; shrinking then goes on
with exact values) and whenever the active set converges, and the stop is
decided on the whole set.
"""

from __future__ import annotations

import numba
import numpy as np

from leansvm.core.jit import njit
from leansvm.core.threads import one_blas_thread
from leansvm.budget.smo_steps import _TAU, CONVERGED, MAX_ITER, SIGMA, STALLED, _apply_pair, _low_partner, _scan_set, max_violation

#: status codes beyond CONVERGED, MAX_ITER, STALLED: a kernel row is missing / time to unshrink /
#: periodic check of the whole set
NEED_ROW, UNSHRINK, RESET = 3, 4, 5
#: steps between two shrinking passes (LIBSVM: min(n, 1000))
SHRINK_EVERY = 1000
#: rows whose LRU stamps are refreshed at a cache miss (at most half the cache)
RECENT_ROWS = 2048
#: rows computed ahead at a cache miss (one GEMM), at most a quarter of the free cache
PREFETCH_ROWS = 256
#: the whole set is checked again after this many times n steps on a shrunk set
FULL_CHECK_EVERY = 10


@njit(cache=True)
def _smo_shrinking(slab, slot_of, active, m, y, alpha, G, U, diag, slack, eta, tol, max_iter, floor,
                   shrinking, unshrunk, recent, n_recent, countdown):
    """SMO on the active samples ``active[:m]`` (pair update (9), clipping (10)-(12)).

    Returns (steps, m, slack, violation, status, missing row or -1, n_recent).
    ``recent`` is a ring buffer of the samples whose rows were read;
    ``countdown[0]`` counts the steps to the next shrinking pass, ``countdown[1]`` the steps since
    the active set was last the whole set (both kept across calls): after ``FULL_CHECK_EVERY`` x n
    such steps the loop asks for a reconstruction (degenerate problems, rho -> 1, move the levels
    that shrinking relied on).
    """
    n = y.shape[0]
    L = recent.shape[0]
    n_iter = 0
    while True:
        viol, scale, up_arg0, up_arg1, up_max0, up_max1, low_min0, low_min1 = _scan_set(
            alpha, y, G, U, slack, floor, active, m)
        sum_active = slack <= 0.0
        if viol <= tol * scale:
            return n_iter, m, slack, viol, CONVERGED, -1, n_recent
        if n_iter >= max_iter:
            return n_iter, m, slack, viol, MAX_ITER, -1, n_recent
        if shrinking:
            countdown[0] -= 1
            countdown[1] = 0 if m == n else countdown[1] + 1
            if countdown[1] > FULL_CHECK_EVERY * n:
                countdown[1] = 0
                return n_iter, m, slack, viol, RESET, -1, n_recent
            if countdown[0] <= 0:
                countdown[0] = min(n, SHRINK_EVERY)
                if not unshrunk and viol <= 10.0 * tol * scale:
                    return n_iter, m, slack, viol, UNSHRINK, -1, n_recent
                m = _shrink(active, m, y, alpha, G, U, up_max0, up_max1, low_min0, low_min1, sum_active)
                continue
        for i in (up_arg0, up_arg1):                      # rows of the two I_up candidates
            if i >= 0 and slot_of[i] < 0:
                for k in (up_arg0, up_arg1):
                    if k >= 0:
                        recent[n_recent % L] = k
                        n_recent += 1
                return n_iter, m, slack, viol, NEED_ROW, i, n_recent
        threshold = SIGMA * viol
        best = -1.0
        bi = -1
        bj = -1
        for ci in range(2):
            i = up_arg0 if ci == 0 else up_arg1
            if i < 0:
                continue
            Ki = slab[slot_of[i]]
            vi = -y[i] * G[i]
            Kii = diag[i]
            for p in range(m):
                t = active[p]
                if not _low_partner(alpha, y, U, t, ci == 0 and sum_active):
                    continue
                b = vi + y[t] * G[t]
                if b < threshold or b <= 0.0:
                    continue
                a = Kii + diag[t] - 2.0 * Ki[t] + 2.0 * eta
                if a <= 0.0:
                    a = _TAU
                gain = b * b / a
                if gain > best:
                    best = gain
                    bi = i
                    bj = t
        i = bi
        j = bj
        if i < 0:
            return n_iter, m, slack, viol, STALLED, -1, n_recent
        if slot_of[j] < 0:
            recent[n_recent % L] = i
            n_recent += 1
            return n_iter, m, slack, viol, NEED_ROW, j, n_recent
        Ki = slab[slot_of[i]]
        Kj = slab[slot_of[j]]
        a = diag[i] + diag[j] - 2.0 * Ki[j] + 2.0 * eta
        if a <= 0.0:
            a = _TAU
        step = (-y[i] * G[i] + y[j] * G[j]) / a           # (9)
        t_max = U[i] - alpha[i] if y[i] > 0 else alpha[i]  # (10), (11)
        t_max = min(t_max, alpha[j] if y[j] > 0 else U[j] - alpha[j])
        if y[i] > 0 and y[j] < 0:                          # (12)
            t_max = min(t_max, 0.5 * slack)
        if step > t_max:
            step = t_max
        if step <= 0.0:
            return n_iter, m, slack, viol, STALLED, -1, n_recent
        d_i, d_j, slack = _apply_pair(alpha, y, U, i, j, step, slack)
        ci = y[i] * d_i
        cj = y[j] * d_j
        for p in range(m):
            t = active[p]
            G[t] += y[t] * (Ki[t] * ci + Kj[t] * cj)
        G[i] += eta * d_i
        G[j] += eta * d_j
        recent[n_recent % L] = i
        recent[(n_recent + 1) % L] = j
        n_recent += 2
        n_iter += 1


@njit(cache=True)
def _shrink(active, m, y, alpha, G, U, up_max0, up_max1, low_min0, low_min1, sum_active):
    """Move the samples that cannot join an allowed violating pair behind position m (order kept)."""
    low_pos_up = low_min0 if sum_active else min(low_min0, low_min1)   # partners of (+, I_up only)
    up_neg_low = up_max1 if sum_active else max(up_max1, up_max0)      # partners of (-, I_low only)
    up_any = max(up_max0, up_max1)
    low_any = min(low_min0, low_min1)
    removed = np.empty(m, dtype=active.dtype)
    k = 0
    r = 0
    for p in range(m):
        t = active[p]
        v = -y[t] * G[t]
        drop = False
        if alpha[t] <= 0.0:
            drop = v < low_pos_up if y[t] > 0 else v > up_neg_low
        elif alpha[t] >= U[t]:
            drop = v > up_any if y[t] > 0 else v < low_any
        if drop:
            removed[r] = t
            r += 1
        else:
            active[k] = t
            k += 1
    for p in range(r):
        active[k + p] = removed[p]
    return k


@njit(cache=True)
def _add_outputs(slab, slots, coef, cols, G, y):
    """G[cols] += y[cols] * sum_r coef_r K[r, cols] (float64 accumulation of float32 rows)."""
    for c in range(cols.shape[0]):
        t = cols[c]
        acc = 0.0
        for r in range(slots.shape[0]):
            acc += coef[r] * slab[slots[r], t]
        G[t] += y[t] * acc


def reconstruct_gradient(rows_source, y, alpha, G, eta, cols):
    """G[cols] = y Q a - 1 + eta a on the samples ``cols`` from the rows of the support vectors.

    ``rows_source``: (slab, None) for the whole matrix, or a KernelRowCache
    (rows fetched in batches of at most half the cache).
    """
    if cols.size == 0:
        return
    sv = np.flatnonzero(alpha)
    G[cols] = eta * alpha[cols] - 1.0
    coef = alpha[sv] * y[sv]
    cols = np.sort(cols)
    if isinstance(rows_source, tuple):
        _add_outputs(rows_source[0], sv, coef, cols, G, y)
        return
    step = max(1, rows_source.capacity // 2)
    for start in range(0, sv.size, step):
        slots = rows_source.slots(sv[start:start + step])
        _add_outputs(rows_source.slab, slots, coef[start:start + step], cols, G, y)


def _prefetch(cache, active, y, alpha, G, U, slack, limit):
    """Up to ``limit`` (<= PREFETCH_ROWS) non-resident active samples most likely to be chosen next.

    Score: how far a sample could violate, v_t - min v over I_low for I_up
    members, max v over I_up - v_t for I_low members (the allowed-pair
    coupling ignored); computing these rows in one GEMM costs far less than
    one product per miss.
    """
    limit = min(limit, PREFETCH_ROWS)
    cand = active[cache.slot_of[active] < 0]
    if limit <= 0 or cand.size == 0:
        return cand[:0]
    v = -y * G
    pos = y > 0
    up = np.where(pos, alpha < U, alpha > 0)
    low = np.where(pos, alpha > 0, alpha < U)
    up_max = np.max(v[active][up[active]], initial=-np.inf)
    low_min = np.min(v[active][low[active]], initial=np.inf)
    score = np.maximum(np.where(up[cand], v[cand] - low_min, -np.inf), np.where(low[cand], up_max - v[cand], -np.inf))
    if cand.size > limit:
        keep = np.argpartition(-score, limit - 1)[:limit]
        cand, score = cand[keep], score[keep]
    return cand[score > 0]


def solve_shrinking(full, cache, y, alpha, G, U, slack, eta, tol, max_iter, floor, diag, shrinking=True):
    """Budget SMO to violation <= tol x scale on the whole set (alpha, G updated in place).

    ``full``: the n x n kernel matrix, or None and ``cache`` a KernelRowCache.
    Returns (steps, slack, violation, status, stats) with stats counting
    cache misses, shrinking passes and the smallest active set.
    """
    n = y.size
    if full is not None:
        slab, slot_of, source = full, np.arange(n), (full, None)
    else:
        slab, slot_of, source = cache.slab, cache.slot_of, cache
    ring = int(max(1, min(RECENT_ROWS, (cache.capacity // 2 - 2) if cache is not None else RECENT_ROWS)))
    recent = np.full(ring, -1, dtype=np.intp)
    active = np.arange(n, dtype=np.intp)
    countdown = np.array([min(n, SHRINK_EVERY), 0], dtype=np.int64)
    info = {"row_requests": 0, "reconstructions": 0, "min_active": n}
    with one_blas_thread():     # few-row products: BLAS threads only add latency
        return _loop(slab, slot_of, source, cache, active, y, alpha, G, U, slack, eta, tol, max_iter, floor, diag,
                     shrinking, recent, ring, countdown, info)


def _loop(slab, slot_of, source, cache, active, y, alpha, G, U, slack, eta, tol, max_iter, floor, diag,
          shrinking, recent, ring, countdown, info):
    """The driver of :func:`solve_shrinking`: misses, unshrinking and the final check on the whole set."""
    n = y.size
    m, unshrunk, n_recent, total, last_need = n, False, 0, 0, -1
    while True:
        steps, m, slack, viol, status, need, n_recent = _smo_shrinking(
            slab, slot_of, active, m, y, alpha, G, U, diag, slack, eta, tol, max(0, max_iter - total), floor,
            shrinking, unshrunk, recent, n_recent, countdown)
        total += steps
        info["min_active"] = min(info["min_active"], int(m))
        if status == NEED_ROW:
            if need == last_need and steps == 0:
                raise RuntimeError("budget SMO: the kernel row cache cannot hold the rows of one pair step; "
                                   "raise cache_size")
            last_need = need
            used = recent[: min(n_recent, ring)]
            want = np.union1d(used[used >= 0], [need])
            room = (cache.capacity - want.size) // 4 if cache.capacity >= 2 * m else 0   # no thrashing
            cache.slots(np.union1d(want, _prefetch(cache, active[:m], y, alpha, G, U, slack, room)))
            info["row_requests"] += 1
            continue
        last_need = -1
        if m < n and status in (UNSHRINK, RESET, CONVERGED, MAX_ITER, STALLED):
            reconstruct_gradient(source, y, alpha, G, eta, active[m:])
            info["reconstructions"] += 1
            active = np.arange(n, dtype=np.intp)
            m = n
            if status == UNSHRINK:
                unshrunk = True
            if status in (UNSHRINK, CONVERGED, RESET):
                continue                          # decide on the whole set
            viol = max_violation(alpha, y, G, U, slack)
        if status == UNSHRINK:                    # m == n already: nothing shrunk
            unshrunk = True
            continue
        return total, slack, viol, status, info
