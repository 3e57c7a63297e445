r"""One chunk iteration of the chunked IRWLS solver, compiled with numba.

Chunks run back to back in one compiled call (:func:`run_chunks`), which also
computes missing float32 RBF rows of dense data into never-used slots of a
cache that holds every row; a chunk whose rows are computed another way (sparse
data, other kernels, float64 rows, rows split over threads, a cache smaller
than the problem) goes back to Python, which makes its rows resident and calls
:func:`solve_chunk`. A chunk is:

* :func:`select_working_set`: the sample selection of section 3 of Pérez-Cruz
  et al. (NIPS 2000). Always in W: per class, the worst violator of each of
  the stopping conditions (9) (a_i = 0, u_i > eps) and (10) (a_i = C_i,
  u_i < -eps), and the q/4 most violating samples of each side of the stopping
  rule (LIBSVM's I_up / I_low, or the projected gradient without y'a = 0).
  The rest of W is a uniform random choice among the violators of (9)-(10)
  and the free samples, completed by the samples of smallest |u_i| when there
  are too few candidates. Here u_i = -p_i - y_i (f_i + b) (1 - y_i (f_i + b) for C-SVC;
  b the multiplier of i's group in the nu forms, :mod:`.irwls_subproblem`).
* :func:`solve_chunk`: gathers K_WW from the kernel-row cache, solves the
  working-set sub-problem (:func:`irwls_subproblem.solve_working_set`) with the
  samples outside W entering through f and c_out = sum_{i not in W} y_i a_i - Delta
  (one per sign group in the nu forms),
  then updates every output, f_i += sum_{j in W} k_ji y_j (a_j^new - a_j^old),
  reading each changed cached row once (no copies; :func:`update_outputs`), and returns the dual
  objective 1/2 a'Qa + p'a = sum_i a_i (y_i f_i / 2 + p_i).
"""

from __future__ import annotations

import numpy as np

from leansvm.core.jit import njit
from leansvm.core.kernels import rbf_rows_float32
from leansvm.exact.irwls_subproblem import group, projected_gradient, solve_working_set, up_low, violation

_MULT = np.uint64(0x2545F4914F6CDD1D)


@njit(cache=True, nogil=True, inline="always")
def column(cols, i):
    """The cached rows' column of variable i: ``cols[i]``, or i itself where ``cols`` is empty.

    A problem with two variables per sample (SVR, nu-SVR) reads the rows of a cache over its
    samples in place, ``cols`` giving each variable's sample (LIBSVM's SVR_Q does the same): a
    cache over the variables would hold every row twice over and copy it from the samples' rows
    (diamonds, 43,152 rows: 1.3 s of gathers, and its outputs' update read twice the memory)."""
    return i if cols.size == 0 else cols[i]


@njit(cache=True, nogil=True)
def _xorshift(state):
    """xorshift64* step: (new state, uniform float in [0, 1))."""
    state ^= state >> np.uint64(12)
    state ^= state << np.uint64(25)
    state ^= state >> np.uint64(27)
    return state, float((state * _MULT) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


#: ranks up to this are found by :func:`_kth_largest_small`
SMALL_RANK = 32


@njit(cache=True, nogil=True)
def _kth_largest_small(score, k):
    """The k-th largest entry of ``score`` for small k: one pass keeping the k largest seen,
    in ascending order (an entry above the smallest kept is inserted in place). Scores in
    random order displace about k ln(n / k) times, so this is a pass over n, not np.partition's
    copy and partition (letter's pairs, n = 1,200 and k = 24: the working-set selection
    43 -> 32 us)."""
    top = np.full(k, -np.inf)
    for i in range(score.size):
        v = score[i]
        if v > top[0]:
            j = 1
            while j < k and top[j] < v:
                top[j - 1] = top[j]
                j += 1
            top[j - 1] = v
    return top[0]


@njit(cache=True, nogil=True)
def _kth_largest(score, k):
    """The k-th largest entry of ``score`` (1 <= k <= n), as ``np.partition`` gives it.

    For k much smaller than n, a guess from a strided sample of 1,024 scores (about twice the
    rank needed) keeps the scores >= the guess; when they are k or more, the k-th largest is
    among them and only they are partitioned (a pass and a small partition instead of a
    partition of n: select_working_set at n = 15,000, 810 -> 515 us). Otherwise, all n."""
    n = score.size
    if k <= SMALL_RANK:
        return _kth_largest_small(score, k)
    m = 1024
    if n >= 4 * m and 64 * k <= n:
        sample = score[::n // m][:m].copy()
        rank = min(m, 2 * (k * m) // n + 2)
        guess = np.partition(sample, m - rank)[m - rank]
        kept = np.empty(n)
        c = 0
        for i in range(n):
            if score[i] >= guess:
                kept[c] = score[i]
                c += 1
        if c >= k:
            return np.partition(kept[:c], c - k)[c - k]
    return np.partition(score, n - k)[n - k]


@njit(cache=True, nogil=True)
def _mark_top(score, k, chosen):
    """Mark the (at most) k samples of largest finite score; ties by index order."""
    n = score.size
    k = min(k, n)
    if k <= 0:
        return
    threshold = _kth_largest(score, k)
    if threshold == -np.inf:                 # fewer than k eligible: take every finite one
        for i in range(n):
            if score[i] > -np.inf:
                chosen[i] = True
        return
    taken = 0
    for i in range(n):
        if score[i] > threshold:
            chosen[i] = True
            taken += 1
    for i in range(n):
        if taken >= k:
            break
        if score[i] == threshold and not chosen[i]:
            chosen[i] = True
            taken += 1


@njit(cache=True, nogil=True)
def _side_scores(y, p, f, alpha, C, equality):
    """Per-sample scores of the two sides of the stopping rule (-inf where not eligible).

    With y'a = Delta: s_i = -y_i p_i - f_i over I_up and -s_i over I_low (LIBSVM); with one
    equality per sign, s_i - mid_g, each group's s centred on the middle of its own range
    (max_{I_up} s + min_{I_low} s) / 2, so that both groups' violators rank at the top.
    Without: -PG_i where the projected gradient PG_i < 0, PG_i where PG_i > 0.
    """
    n = y.size
    up = np.full(n, -np.inf)
    low = np.full(n, -np.inf)
    mid = np.zeros(2)
    if equality == 2:
        hi = np.full(2, -np.inf)
        lo = np.full(2, np.inf)
        for i in range(n):
            s = -y[i] * p[i] - f[i]
            gr = group(y[i], equality)
            in_up, in_low = up_low(y[i], alpha[i], C[i])
            if in_up:
                hi[gr] = max(hi[gr], s)
            if in_low:
                lo[gr] = min(lo[gr], s)
        for gr in range(2):
            if np.isfinite(hi[gr]) and np.isfinite(lo[gr]):
                mid[gr] = (hi[gr] + lo[gr]) / 2
    for i in range(n):
        if equality:
            s = -y[i] * p[i] - f[i]
            if equality == 2:
                s -= mid[group(y[i], equality)]
            in_up, in_low = up_low(y[i], alpha[i], C[i])
            if in_up:
                up[i] = s
            if in_low:
                low[i] = -s
        else:
            pg = projected_gradient(y[i], p[i], f[i], alpha[i], C[i])
            if pg < 0:
                up[i] = -pg
            elif pg > 0:
                low[i] = pg
    return up, low


#: cached rows are preferred only when used within this many chunks: with every cached row
#: preferred, a large cache (a9a: 1,000 MB, 8,000 rows) kept drawing rows long out of play
#: (1,267 chunk iterations against 1,024 at 200 MB; 1,062 against 971 with this window)
RECENT_CHUNKS = 16


@njit(cache=True, nogil=True)
def select_working_set(y, p, f, alpha, C, b, q, tol, equality, seed, slot_of, cols, stamp=None, oldest=0):
    """Indices of the working set W (sorted, |W| = min(q, n)); see the module docstring.

    ``slot_of[column(cols, i)] >= 0``: the kernel row of variable i is cached (:func:`column`).
    The random choice takes cached candidates first (an empty ``slot_of`` means no preference),
    and with ``stamp`` (the cache's last use of each slot, in chunks) only those used at
    ``oldest`` or later (``RECENT_CHUNKS``).
    """
    n = y.size
    if n <= q:
        return np.arange(n)
    chosen = np.zeros(n, dtype=np.bool_)
    eligible = np.zeros(n, dtype=np.bool_)
    abs_u = np.empty(n)
    worst = np.full(4, -np.inf)              # (class +1, -1) x (condition 9, 10)
    worst_at = np.full(4, -1)
    for i in range(n):
        u = -p[i] - y[i] * (f[i] + b[group(y[i], equality)])
        abs_u[i] = abs(u)
        slot = 0 if y[i] > 0 else 2
        if alpha[i] <= 0:
            if u > tol:                      # violates (9)
                eligible[i] = True
                if u > worst[slot]:
                    worst[slot], worst_at[slot] = u, i
        elif alpha[i] >= C[i]:
            if u < -tol:                     # violates (10)
                eligible[i] = True
                if -u > worst[slot + 1]:
                    worst[slot + 1], worst_at[slot + 1] = -u, i
        else:
            eligible[i] = True               # free sample
    for s in range(4):
        if worst_at[s] >= 0:
            chosen[worst_at[s]] = True
    up, low = _side_scores(y, p, f, alpha, C, equality)
    k = max(1, q // 4)
    _mark_top(up, k, chosen)
    _mark_top(low, k, chosen)
    n_chosen = 0
    for i in range(n):
        n_chosen += chosen[i]
    if n_chosen > q:                         # tiny q: only the best of each side
        chosen[:] = False
        _mark_top(up, q - q // 2, chosen)
        side = low.copy()
        for i in range(n):
            if chosen[i]:
                side[i] = -np.inf
        _mark_top(side, q // 2, chosen)
        n_chosen = 0
        for i in range(n):
            n_chosen += chosen[i]
    room = q - n_chosen
    candidates = np.empty(n, dtype=np.int64)
    n_cand = 0
    for i in range(n):
        if eligible[i] and not chosen[i]:
            candidates[n_cand] = i
            n_cand += 1
    if n_cand >= room:
        n_front = 0                          # cached candidates to the front
        if slot_of.size > 0:
            for r in range(n_cand):
                slot = slot_of[column(cols, candidates[r])]
                if slot >= 0 and (stamp is None or stamp[slot] >= oldest):
                    candidates[n_front], candidates[r] = candidates[r], candidates[n_front]
                    n_front += 1
        # ``take`` uniform among the cached ones, then a uniform rest among all that are left
        # (two partial Fisher-Yates shuffles: over candidates[:n_front], then candidates[take:])
        take = min(n_front, room)
        state = np.uint64(seed) | np.uint64(1)
        for r in range(room):
            stop = n_front if r < take else n_cand
            state, x = _xorshift(state)
            pick = r + min(int(x * (stop - r)), stop - r - 1)
            candidates[r], candidates[pick] = candidates[pick], candidates[r]
            chosen[candidates[r]] = True
    else:
        for r in range(n_cand):
            chosen[candidates[r]] = True
        fill = np.full(n, -np.inf)           # the rest, by smallest |u|
        for i in range(n):
            if not chosen[i]:
                fill[i] = -abs_u[i]
        _mark_top(fill, room - n_cand, chosen)
    return np.flatnonzero(chosen)


@njit(cache=True, nogil=True)
def solve_chunk(slab, slots, W, cols, y, p, C, alpha, f, c_const, offset, b, mu, delta, tol, max_inner,
                equality, counts, n_pair, mu_floor):
    """Solve the sub-problem on W and update alpha and every output f in place.

    ``slab[slots[r]]`` is the cached kernel row of variable W[r]; variable i's entry in a row is
    at column ``column(cols, i)`` (:func:`column`). ``offset`` is added to every kernel value
    (augmented bias). ``c_const`` is the part of y'a held outside this problem, minus Delta
    (per group, as ``b``). Returns (b, mu, inner iterations, dual objective after the step).
    """
    q = W.size
    n = y.size
    K = np.empty((q, q))
    y_W = np.empty(q)
    p_W = np.empty(q)
    C_W = np.empty(q)
    alpha_W = np.empty(q)
    f_W = np.empty(q)
    c_out = c_const.copy()
    for i in range(n):
        c_out[group(y[i], equality)] += y[i] * alpha[i]
    # K_WW read from each row in increasing column order (W's two runs of samples merged, for
    # SVR's variables), not in W's: 512 columns of 512 rows of diamonds 3.4 -> 2.3 ms
    at = np.empty(q, dtype=np.int64)
    for c in range(q):
        at[c] = column(cols, W[c])
    order = np.argsort(at)
    ascending = at[order]
    values = np.empty(q, dtype=slab.dtype)
    for r in range(q):
        row = slab[slots[r]]
        w = W[r]
        for k in range(q):
            values[k] = row[ascending[k]]
        for k in range(q):
            K[r, order[k]] = values[k] + offset
        y_W[r], p_W[r], C_W[r], alpha_W[r], f_W[r] = y[w], p[w], C[w], alpha[w], f[w]
        c_out[group(y[w], equality)] -= y[w] * alpha[w]
    b, mu, n_inner = solve_working_set(K, y_W, p_W, C_W, alpha_W, f_W, c_out, b, mu, delta, tol,
                                       max_inner, equality, counts, n_pair, mu_floor)
    moved = np.empty(q, dtype=np.int64)          # the slots of the rows that moved, and their steps
    d = np.empty(q)
    m = 0
    for r in range(q):
        w = W[r]
        step = y_W[r] * (alpha_W[r] - alpha[w])
        if step != 0.0:
            moved[m], d[m] = slots[r], step
            m += 1
            alpha[w] = alpha_W[r]
    if cols.size == 0:
        return b, mu, n_inner, update_outputs(slab, moved[:m], d[:m], y, p, alpha, f, offset)
    m = _merge_shared_rows(moved[:m], d[:m])
    return b, mu, n_inner, update_outputs_by_column(slab, moved[:m], d[:m], cols, y, p, alpha, f, offset)


@njit(cache=True, nogil=True)
def _merge_shared_rows(moved, d):
    """Steps on one slot summed (a sample's two variables both in W read one row): the rows and
    steps in place, sorted by slot; returns how many distinct rows moved."""
    order = np.argsort(moved)
    slots, steps = moved[order], d[order]
    m = 0
    for k in range(slots.size):
        if m > 0 and moved[m - 1] == slots[k]:
            d[m - 1] += steps[k]
        else:
            moved[m], d[m] = slots[k], steps[k]
            m += 1
    return m


@njit(cache=True, nogil=True)
def _accumulate(rows_out, slab, moved, d, n):
    """rows_out[i] += sum_k d_k slab[moved_k, i] for i < n, four rows per pass over rows_out
    ((d_0 K_0i + d_1 K_1i) + (d_2 K_2i + d_3 K_3i)): a load and a store per four rows instead
    of per row, 2x faster in float32 rows, 2.7x in float64 (128 rows of 15,000 columns:
    1.76 -> 0.89 ms, 1.84 -> 0.68 ms). Returns sum_k d_k."""
    d_sum = 0.0
    m = moved.size
    k = 0
    while k + 4 <= m:
        r0, r1, r2, r3 = slab[moved[k]], slab[moved[k + 1]], slab[moved[k + 2]], slab[moved[k + 3]]
        d0, d1, d2, d3 = d[k], d[k + 1], d[k + 2], d[k + 3]
        for i in range(n):
            rows_out[i] += (d0 * r0[i] + d1 * r1[i]) + (d2 * r2[i] + d3 * r3[i])
        d_sum += (d0 + d1) + (d2 + d3)
        k += 4
    for k in range(k, m):
        row = slab[moved[k]]
        dk = d[k]
        for i in range(n):
            rows_out[i] += dk * row[i]
        d_sum += dk
    return d_sum


@njit(cache=True, nogil=True)
def _objective_after(d_sum, y, p, alpha, f, offset):
    """Adds the offset's share offset x sum_k d_k to every output; returns the dual objective
    sum_i a_i (y_i f_i / 2 + p_i)."""
    objective = 0.0
    for i in range(f.size):
        if offset != 0.0:
            f[i] += offset * d_sum
        objective += alpha[i] * (y[i] * f[i] * 0.5 + p[i])
    return objective


@njit(cache=True, nogil=True)
def update_outputs(slab, moved, d, y, p, alpha, f, offset):
    """f_i += sum_k d_k (K[moved_k, i] + offset) for every i, each moved row (a slot of ``slab``)
    read once (:func:`_accumulate`); returns the dual objective sum_i a_i (y_i f_i / 2 + p_i)
    after the step."""
    return _objective_after(_accumulate(f, slab, moved, d, f.size), y, p, alpha, f, offset)


@njit(cache=True, nogil=True)
def update_outputs_by_column(slab, moved, d, cols, y, p, alpha, f, offset):
    """:func:`update_outputs` where variable i's kernel value is in column ``cols[i]`` of the
    rows: the sums over whole rows, then one gather, where the variables cover a quarter of
    the columns or more (each row read once, sequentially: a sample's two variables share
    its sum); over fewer, each variable's columns read where they are."""
    n = f.size
    if 4 * n >= slab.shape[1]:
        sums = np.zeros(slab.shape[1])
        d_sum = _accumulate(sums, slab, moved, d, slab.shape[1])
        for i in range(n):
            f[i] += sums[cols[i]]
    else:
        d_sum = 0.0
        for k in range(moved.size):
            row = slab[moved[k]]
            dk = d[k]
            for i in range(n):
                f[i] += dk * row[cols[i]]
            d_sum += dk
    return _objective_after(d_sum, y, p, alpha, f, offset)


#: :func:`run_chunks`' outcomes
CONVERGED, MISSED, PAUSED = 0, 1, 2


@njit(cache=True, nogil=True)
def run_chunks(slab, slot_of, stamp, clock, owner, filled, rows_X, rows_XT, row_norms, minus_gamma,
               y, p, C, alpha, f, c_const, offset, b, mu, delta, tol, max_inner, equality, counts, n_pair,
               mu_floor, q, seed, n_chunks, trace, inner_relative_tol, cols, fill_work=-1.0, solve_cached=True):
    """Up to ``n_chunks`` chunk iterations in one compiled call.

    Each iteration is the solver's: the violation on all samples; stop if it is <= ``tol``;
    select W (:func:`select_working_set`, its random draws seeded from ``seed``); make W's
    kernel rows resident; stamp W's slots as used now (the cache's LRU clock) and
    :func:`solve_chunk` with the inner tolerance max(tol / 2, ``inner_relative_tol`` x the
    violation). Missing rows are computed here into never-used slots (``filled`` onwards; the
    cache's ``owner`` and ``slot_of`` updated as ``KernelRowCache._claim`` does) by
    :func:`~leansvm.core.kernels.rbf_rows_float32` when ``rows_X`` is given (not empty: see
    ``KernelRowCache.compiled_state``: a cache that holds every row); otherwise W is returned
    to the caller, which computes its rows and solves that chunk. On letter's pairs
    (one thread) every chunk then runs here: 5,631 of 9,450 chunks went through Python before.
    ``fill_work`` (>= 0): the multiply-adds of row products (rows x n x d) this call may spend;
    a chunk whose rows would pass it ends the call (PAUSED) unless it is the call's first, so
    that a caller sees Ctrl-C and reports progress within milliseconds on large problems too.
    ``cols``: each variable's column in the rows, and the sample whose row it reads
    (:func:`column`; empty: the variables are the rows' samples).
    ``solve_cached=False`` hands every W back (each chunk then solved from Python: the tests
    check that both reach one optimum).

    ``trace[k]``: the dual objective after the k-th chunk of this call. Returns (outcome, gap,
    chunks done, W (the missed one, else empty), b, mu, inner iterations, clock, filled, rows
    read from the cache, rows computed); outcome is CONVERGED, MISSED or PAUSED (``n_chunks``
    done; gap is the violation at that point).
    """
    done = 0
    inner = 0
    hits = 0
    misses = 0
    state = np.uint64(seed) | np.uint64(1)
    empty = np.zeros(0, dtype=np.int64)
    can_fill = rows_X.shape[0] > 0 and solve_cached
    while True:
        gap = violation(y, p, f, alpha, C, equality)[0]
        if gap <= tol:
            return CONVERGED, gap, done, empty, b, mu, inner, clock, filled, hits, misses
        if done >= n_chunks:
            return PAUSED, gap, done, empty, b, mu, inner, clock, filled, hits, misses
        state, _ = _xorshift(state)
        W = select_working_set(y, p, f, alpha, C, b, q, tol, equality, np.int64(state >> np.uint64(1)),
                               slot_of, cols, stamp, clock - RECENT_CHUNKS)
        slots = np.empty(W.size, dtype=np.int64)
        n_miss = 0
        for r in range(W.size):
            slots[r] = slot_of[column(cols, W[r])]
            n_miss += slots[r] < 0
        if not solve_cached or (n_miss and not (can_fill and filled + n_miss <= slab.shape[0])):
            return MISSED, gap, done, W, b, mu, inner, clock, filled, hits, misses
        if n_miss and fill_work >= 0 and done > 0 and \
                (misses + n_miss) * float(rows_X.shape[0]) * rows_X.shape[1] > fill_work:
            return PAUSED, gap, done, empty, b, mu, inner, clock, filled, hits, misses
        clock += 1
        if n_miss:
            missing = np.empty(n_miss, dtype=np.int64)
            k = 0
            for r in range(W.size):
                row = column(cols, W[r])
                if slot_of[row] < 0:             # (a sample's second variable finds its row claimed)
                    missing[k] = row
                    slot_of[row] = filled + k
                    owner[filled + k] = row
                    k += 1
                slots[r] = slot_of[row]
            rbf_rows_float32(slab[filled:filled + k], rows_X, missing[:k], rows_XT, row_norms, minus_gamma)
            filled += k
        for r in range(W.size):
            stamp[slots[r]] = clock
        hits += W.size - n_miss
        misses += n_miss
        b, mu, n_inner, objective = solve_chunk(slab, slots, W, cols, y, p, C, alpha, f, c_const, offset, b, mu,
                                                delta, max(0.5 * tol, inner_relative_tol * gap), max_inner,
                                                equality, counts, n_pair, mu_floor)
        inner += n_inner
        trace[done] = objective
        done += 1
