"""The chunked IRWLS solver's machinery: shrinking, monotone objective, working-set sizes, cache, n_jobs."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.svm import SVC as LibSVC

from leansvm import SVC
from leansvm.core.kernels import Kernel, KernelRowCache
from leansvm.exact import irwls, irwls_chunk
from leansvm.core.problems import c_svc
from functools import partial

from leansvm.exact import irwls

#: these tests are of chunked IRWLS itself (its shrinking, trace, row cache), also on small problems
#: that ``method="auto"`` would solve by SMO on the whole Q
solve_irwls = partial(irwls.solve_irwls, method="irwls")
from leansvm.exact.irwls_chunk import select_working_set

from .conftest import libsvm_dual_objectives


def _select_working_set(y, p, f, alpha, C, b, q, rng, tol, equality=True, slot_of=None):
    """The compiled selection as the solver calls it (one seed drawn from ``rng``, b per group)."""
    if slot_of is None:
        slot_of = np.zeros(0, dtype=np.intp)
    b = np.broadcast_to(np.asarray(b, dtype=np.float64), (2,)).copy()
    return select_working_set(y, p, f, alpha, C, b, int(q), float(tol), int(equality),
                              int(rng.integers(1, 2**63 - 1)), slot_of, np.zeros(0, dtype=np.int64))


@pytest.fixture(scope="module")
def noisy_problem():
    """Overlapping classes: many bounded SVs and many samples firmly at 0, so shrinking acts."""
    X, y = make_classification(n_samples=1500, n_features=10, n_informative=6, flip_y=0.1,
                               class_sep=0.8, random_state=7)
    return X, np.where(y > 0, 1.0, -1.0)


@pytest.mark.parametrize("shrinking", [True, False])
def test_shrinking_on_and_off_reach_libsvms_optimum(noisy_problem, shrinking, monkeypatch):
    monkeypatch.setattr(irwls, "SMALL_PROBLEM", 0)     # shrink even this small problem
    X, y = noisy_problem
    C = np.full(y.size, 10.0)
    fit = solve_irwls(X, c_svc(y, C), Kernel("rbf", gamma=0.1), tol=1e-3, working_set_size=64,
                      random_state=0, shrinking=shrinking)
    ref = LibSVC(C=10.0, gamma=0.1, tol=1e-3).fit(X, y)
    assert fit.converged
    if shrinking:
        assert fit.stats["n_shrink"] > 0        # the heuristic really ran
    else:
        assert fit.stats["n_shrink"] == 0
    assert fit.dual_objective == pytest.approx(libsvm_dual_objectives(ref)[0], rel=1e-3)
    # the stopping rule holds on all samples (shrunk ones included), with exact outputs
    f = Kernel("rbf", gamma=0.1)(X) @ (y * fit.alpha)
    assert c_svc(y, C).kkt_violation(fit.alpha, f)[0] <= 1.5e-3


def test_chunk_iterations_never_increase_the_dual_objective(noisy_problem):
    X, y = noisy_problem
    fit = solve_irwls(X, c_svc(y, np.full(y.size, 10.0)), Kernel("rbf", gamma=0.1), tol=1e-4,
                      working_set_size=32, random_state=1, shrinking=False)
    trace = fit.stats["objective_trace"]
    assert trace.size > 5
    increases = np.diff(trace)
    assert increases.max() <= 1e-9 * np.abs(trace).max()


@pytest.mark.parametrize("q", [2, 16, 200, 5000])
def test_any_working_set_size_converges_to_the_same_optimum(noisy_problem, q):
    X, y = noisy_problem
    X, y = X[:400], y[:400]
    C = np.full(y.size, 5.0)
    ref = LibSVC(C=5.0, gamma=0.1, tol=1e-4).fit(X, y)
    fit = solve_irwls(X, c_svc(y, C), Kernel("rbf", gamma=0.1), tol=1e-4, working_set_size=q,
                      random_state=0)
    assert fit.converged
    assert fit.dual_objective == pytest.approx(libsvm_dual_objectives(ref)[0], rel=1e-5)


def test_row_cache_slots_are_lru_and_exact():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    kernel = Kernel("rbf", gamma=0.5)
    K = kernel(X)
    cache = KernelRowCache(kernel, X, cache_size=10 * 50 * 8 / 2**20)   # room for 10 rows
    assert cache.capacity == 10
    first = cache.slots(np.arange(8))
    np.testing.assert_allclose(cache.slab[first], K[:8])
    cache.slots(np.array([0, 1]))                     # 0 and 1 become the most recent
    cache.slots(np.arange(20, 26))                    # evicts the 6 least recent: 2..7
    assert cache.misses == 8 + 6 and cache.hits == 2
    again = cache.slots(np.array([0, 1, 20]))
    assert cache.hits == 5                            # still resident
    np.testing.assert_allclose(cache.slab[again], K[[0, 1, 20]])
    cache.slots(np.array([2]))
    assert cache.misses == 15                         # 2 had been evicted
    with pytest.raises(ValueError, match="cache"):
        cache.slots(np.arange(11))
    np.testing.assert_allclose(cache.rows(np.arange(30)), K[:30])   # larger than the cache


def test_parallel_one_vs_one_equals_serial(multiclass_problem):
    X, y = multiclass_problem
    serial = SVC(C=3.0, gamma=0.2, random_state=0, n_jobs=1).fit(X, y)
    parallel = SVC(C=3.0, gamma=0.2, random_state=0, n_jobs=2).fit(X, y)
    np.testing.assert_allclose(parallel.dual_objective_, serial.dual_objective_, rtol=1e-12)
    np.testing.assert_array_equal(parallel.predict(X), serial.predict(X))


@pytest.mark.parametrize("density", [0.005, 0.3])
def test_row_cache_on_sparse_data_equals_dense(density):
    """Sparse data denser than DENSE_MIN_DENSITY is densified once for GEMM; rows are unchanged."""
    import scipy.sparse as sp

    X = sp.random(300, 40, density=density, format="csr", random_state=0)
    kernel = Kernel("rbf", gamma=0.5)
    cache = KernelRowCache(kernel, X, cache_size=1.0)
    assert sp.issparse(cache.X) == (density < KernelRowCache.DENSE_MIN_DENSITY)
    idx = np.array([3, 7, 250])
    np.testing.assert_allclose(cache.rows(idx), kernel(X.toarray())[idx], atol=1e-12)


def _selection_state(n=600, seed=3):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    C = np.full(n, 2.0)
    alpha = rng.choice([0.0, 1.0, 2.0], size=n, p=[0.5, 0.3, 0.2])   # at 0, free, at C
    f = rng.normal(size=n)
    return y, f, alpha, C


def test_working_set_holds_the_maximal_violating_pair():
    y, f, alpha, C = _selection_state()
    rng = np.random.default_rng(0)
    W = _select_working_set(y, -np.ones_like(y), f, alpha, C, 0.0, 40, rng, 1e-3)
    assert W.size == 40 and np.all(np.diff(W) > 0)
    _, i, j = c_svc(y, C).kkt_violation(alpha, f)
    assert i in W and j in W


def test_working_set_draws_cached_candidates_first():
    """The random part of W comes from cached rows when enough candidates are cached."""
    y, f, alpha, C = _selection_state()
    n, q = y.size, 40
    slot_of = np.full(n, -1, dtype=np.intp)
    cached = np.random.default_rng(1).random(n) < 0.5
    slot_of[cached] = np.arange(np.count_nonzero(cached))
    forced_at_most = 2 * (q // 4) + 4        # top q/4 of each side + worst violator per class
    for seed in range(5):
        W = _select_working_set(y, -np.ones_like(y), f, alpha, C, 0.0, q, np.random.default_rng(seed), 1e-3,
                                slot_of=slot_of)
        assert W.size == q
        assert np.count_nonzero(~cached[W]) <= forced_at_most
        plain = _select_working_set(y, -np.ones_like(y), f, alpha, C, 0.0, q, np.random.default_rng(seed), 1e-3)
        assert np.count_nonzero(cached[W]) > np.count_nonzero(cached[plain])


def test_small_problems_are_not_shrunk(noisy_problem):
    """Below SMALL_PROBLEM shrinking is off (it costs more than it saves there)."""
    X, y = noisy_problem
    assert y.size < irwls.SMALL_PROBLEM
    fit = solve_irwls(X, c_svc(y, np.full(y.size, 10.0)), Kernel("rbf", gamma=0.1), working_set_size=64,
                      random_state=0, shrinking=True)
    assert fit.converged and fit.stats["n_shrink"] == 0


def test_subset_row_cache_reads_the_parents_rows():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 5))
    kernel = Kernel("rbf", gamma=0.3)
    parent = KernelRowCache(kernel, X, cache_size=0.1)         # 43 rows: evictions happen
    index = rng.choice(300, size=120, replace=False)
    sub = irwls.SubsetRowCache(parent, index, cache_size=0.07)         # 76 rows
    want = kernel(X[index])
    for W in (np.arange(10), rng.choice(120, size=40, replace=False), np.arange(60, 120)):
        np.testing.assert_allclose(sub.slab[sub.slots(W)], want[W], rtol=1e-12)
    assert parent.misses > 0                                   # the parent computed the rows
    coef = rng.normal(size=50)
    rows, cols = rng.choice(300, 50, replace=False), rng.choice(300, 70, replace=False)
    np.testing.assert_allclose(parent.outputs(rows, coef, cols), coef @ kernel(X[rows], X[cols]),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(parent.outputs(rows, coef, cols, offset=1.0),
                               coef @ (kernel(X[rows], X[cols]) + 1.0), rtol=1e-10, atol=1e-12)
    wide = rng.choice(300, 400, replace=True)                 # >= a quarter of the columns, repeats
    np.testing.assert_allclose(parent.outputs(rows, coef, wide), coef @ kernel(X[rows], X[wide]),
                               rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="row numbers"):
        irwls.SubsetRowCache(parent, [0, 300])


def test_a_cache_built_on_an_earlier_buffer_reuses_its_memory_and_serves_exact_rows():
    """A shrinking phase's cache (fewer columns) reuses the last one's slab memory; a buffer lent
    by the parent after a solve gave it back is the same memory; rows stay exact."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 4))
    kernel = Kernel("rbf", gamma=0.5)
    parent = KernelRowCache(kernel, X, cache_size=0.2)
    assert parent.lend_buffer() is None
    first = irwls.SubsetRowCache(parent, np.arange(150), cache_size=0.1)
    first.slots(np.arange(40))
    index = rng.choice(150, size=90, replace=False)
    second = irwls.SubsetRowCache(parent, index, cache_size=0.1, buffer=first.buffer)
    assert np.shares_memory(second.slab, first.buffer)
    W = rng.choice(90, size=30, replace=False)
    np.testing.assert_allclose(second.slab[second.slots(W)], kernel(X[index[W]], X[index]), rtol=1e-12)
    parent.give_back_buffer(second.buffer)
    assert parent.lend_buffer() is second.buffer and parent.lend_buffer() is None
    too_small = irwls.KernelRowCache(kernel, X, cache_size=0.5, buffer=first.buffer[:10])
    assert not np.shares_memory(too_small.slab, first.buffer)


@pytest.mark.parametrize("bias", ["equality", "augmented"])
def test_shared_kernel_cache_gives_the_same_solution(noisy_problem, bias, monkeypatch):
    """A sub-problem solved on rows of a superset's cache (shrinking, screened samples, warm
    start) reaches the optimum of the same problem solved with its own rows."""
    monkeypatch.setattr(irwls, "SMALL_PROBLEM", 0)
    X, y = noisy_problem
    kernel = Kernel("rbf", gamma=0.1)
    rows = np.arange(100, 1400)                                # the sub-problem's samples
    Xs, ys = X[rows], y[rows]
    C = np.full(rows.size, 5.0)
    own = solve_irwls(Xs, c_svc(ys, C), kernel, tol=1e-4, random_state=0, bias=bias)
    fixed0 = np.zeros(rows.size, dtype=bool)
    fixed0[own.alpha == 0] = True
    fixed0[::3] = False                                        # some known non-SVs, as screening gives
    fixedC = own.alpha >= C
    fixedC[1::3] = False
    parent = KernelRowCache(kernel, X, cache_size=2.0, dtype=np.float64)
    warm = np.clip(own.alpha * 0.7, 0, C)
    shared = solve_irwls(Xs, c_svc(ys, C), kernel, tol=1e-4, random_state=1, bias=bias,
                         kernel_cache=(parent, rows), alpha_init=warm,
                         fixed_at_zero=fixed0, fixed_at_C=fixedC)
    assert shared.converged and parent.hits + parent.misses > 0
    assert shared.dual_objective == pytest.approx(own.dual_objective, rel=1e-6)
    offset = 1.0 if bias == "augmented" else 0.0
    f = (kernel(Xs) + offset) @ (ys * shared.alpha)
    np.testing.assert_allclose(shared.stats["outputs"], f, rtol=1e-8, atol=1e-8)
    with pytest.raises(ValueError, match="kernel_cache rows"):
        solve_irwls(Xs, c_svc(ys, C), kernel, kernel_cache=(parent, rows[:-1]))
    with pytest.raises(ValueError, match="another kernel"):
        solve_irwls(Xs, c_svc(ys, C), Kernel("rbf", gamma=0.2), kernel_cache=(parent, rows))


@pytest.mark.parametrize("equality", [1, 2])
def test_pair_steps_keep_outputs_and_equalities_and_reach_the_tolerance(equality):
    """The fused SMO steps on a working set (one pass per step, rows of K): f stays f0 + K y (a - a0),
    every equality group's sum of y a is unchanged, a stays in the box, and the violation ends <= tol."""
    from leansvm.exact.irwls_subproblem import _pair_steps, violation
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    K = Kernel("rbf", gamma=0.5).block(X, X)
    y = np.where(rng.random(60) < 0.5, 1.0, -1.0)
    p = rng.normal(size=60) - 1.0
    C = np.full(60, 2.0)
    alpha = rng.uniform(0.0, 2.0, size=60)
    alpha[rng.random(60) < 0.3] = 0.0
    f0 = K @ (y * alpha)
    a0, f = alpha.copy(), f0.copy()
    gap, i, j = violation(y, p, f, alpha, C, equality)
    counts = np.zeros(3, dtype=np.int64)
    _pair_steps(K, y, p, C, alpha, f, gap, i, j, 1e-6, 100000, equality, counts)
    assert counts[1] > 10
    assert violation(y, p, f, alpha, C, equality)[0] <= 1e-6
    np.testing.assert_allclose(f, f0 + K @ (y * (alpha - a0)), atol=1e-9)
    assert np.all((alpha >= 0) & (alpha <= C))
    groups = [y > 0, y < 0] if equality == 2 else [np.ones(60, dtype=bool)]
    for g in groups:
        assert abs(y[g] @ alpha[g] - y[g] @ a0[g]) <= 1e-9


def test_compiled_bursts_and_python_chunks_reach_the_same_optimum(noisy_problem, monkeypatch):
    """Chunks whose rows are cached run in compiled bursts (``run_chunks``); with bursts turned off
    (every W handed back to Python, as on several threads) the solver reaches the same optimum,
    and every chunk's rows are counted once, as a hit or a miss, whichever side solved it."""
    X, y = noisy_problem
    problem, kernel = c_svc(y, np.full(y.size, 10.0)), Kernel("rbf", gamma=0.1)
    burst = solve_irwls(X, problem, kernel, tol=1e-4, working_set_size=64, random_state=0, shrinking=False)
    real = irwls.run_chunks
    monkeypatch.setattr(irwls, "run_chunks", lambda *args: real(*args, False))   # solve_cached=False
    python = solve_irwls(X, problem, kernel, tol=1e-4, working_set_size=64, random_state=0, shrinking=False)
    assert burst.converged and python.converged
    assert burst.dual_objective == pytest.approx(python.dual_objective, rel=1e-6)
    q = 48                                          # 3/4 of 64 below SMALL_PROBLEM
    for fit in (burst, python):
        assert fit.stats["cache_hits"] + fit.stats["cache_misses"] == q * fit.n_iter


def test_update_outputs_takes_four_rows_per_pass_and_the_leftovers():
    """Four rows per pass and the leftover rows one by one give f + sum_r d_r (K_r + offset) and
    the objective at the new f."""
    from leansvm.exact.irwls_chunk import update_outputs
    rng = np.random.default_rng(3)
    n = 301
    slab = rng.normal(size=(12, n)).astype(np.float32)
    slots = rng.permutation(12)[:9].astype(np.int64)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    p, alpha, f0 = -np.ones(n), rng.random(n), rng.normal(size=n)
    for m in (0, 3, 4, 7, 9):                      # leftovers after groups of four: 0..3
        d = rng.normal(size=m)
        want = f0 + d @ (slab[slots[:m]].astype(np.float64) + 0.5) if m else f0.copy()
        whole = f0.copy()
        obj = update_outputs(slab, slots[:m], d, y, p, alpha, whole, 0.5)
        np.testing.assert_allclose(whole, want, rtol=1e-12, atol=1e-12)
        assert obj == pytest.approx(float(alpha @ (y * whole / 2 + p)), rel=1e-12)


def test_update_by_column_reads_each_variables_sample_column():
    """Variables reading the columns of their samples (two per sample, or a few of many samples):
    f_i += sum_k d_k (K[slot_k, cols_i] + offset), the same through whole rows and a gather
    (variables cover a quarter of the columns or more) and through each variable's column; steps
    on one slot (a sample's two variables) are summed first."""
    from leansvm.exact.irwls_chunk import _merge_shared_rows, update_outputs_by_column
    rng = np.random.default_rng(4)
    n_samples = 200
    slab = rng.normal(size=(10, n_samples)).astype(np.float32)
    for cols in (np.concatenate([np.arange(n_samples)] * 2), np.sort(rng.choice(n_samples, 30, replace=False))):
        cols = cols.astype(np.int64)
        n = cols.size
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        p, alpha, f0 = -np.ones(n), rng.random(n), rng.normal(size=n)
        moved = np.array([3, 7, 3, 0, 9, 7, 1], dtype=np.int64)
        d = rng.normal(size=moved.size)
        want = f0 + d @ (slab[moved][:, cols].astype(np.float64) + 0.25)
        m = _merge_shared_rows(moved, d)
        assert m == 5 and list(moved[:m]) == [0, 1, 3, 7, 9]
        whole = f0.copy()
        obj = update_outputs_by_column(slab, moved[:m], d[:m], cols, y, p, alpha, whole, 0.25)
        np.testing.assert_allclose(whole, want, rtol=1e-12, atol=1e-12)
        assert obj == pytest.approx(float(alpha @ (y * whole / 2 + p)), rel=1e-12)


def test_kth_largest_is_numpys_partition():
    """Neither the sampled guess (large n, k up to n / 64) nor the one-pass top-k (k up to
    SMALL_RANK) of the working-set selection changes the threshold: ties, -inf scores (fewer
    eligible than k), scores in ascending and descending order (every entry displaces one)."""
    from leansvm.exact.irwls_chunk import SMALL_RANK, _kth_largest
    rng = np.random.default_rng(1)
    for trial in range(600):
        n = int(rng.integers(1, 30000))
        k = int(rng.integers(1, min(n, 200 if trial < 300 else SMALL_RANK) + 1))
        score = rng.normal(size=n)
        if trial % 6 == 1:
            score = np.round(score, 1)
        elif trial % 6 == 2:
            score[rng.random(n) < 0.9] = -np.inf
        elif trial % 6 == 3:
            score[rng.random(n) < 0.999] = -np.inf
        elif trial % 6 == 4:
            score = np.sort(np.round(score, 1))
        elif trial % 6 == 5:
            score = np.sort(score)[::-1].copy()
        assert _kth_largest(score, k) == np.partition(score, n - k)[n - k]


def test_a_failed_row_computation_leaves_no_sample_claiming_a_slot(monkeypatch):
    """A Ctrl-C while missing rows are computed: the samples whose rows were being written stay
    uncached (the next request computes them), the other rows stay exact."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    kernel = Kernel("rbf", gamma=0.5)
    cache = KernelRowCache(kernel, X, cache_size=20 * 60 * 8 / 2**20, dtype=np.float64)
    cache.slots(np.arange(15))
    real = Kernel.block_into

    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    for request in (np.arange(15, 20), np.arange(30, 40)):      # never-used slots, then evictions
        monkeypatch.setattr(Kernel, "block_into", interrupted)
        with pytest.raises(KeyboardInterrupt):
            cache.slots(request)
        monkeypatch.setattr(Kernel, "block_into", real)
        assert np.all(cache.slot_of[request] < 0)
        held = np.flatnonzero(cache.slot_of >= 0)
        np.testing.assert_allclose(cache.slab[cache.slot_of[held]], kernel(X[held], X), rtol=1e-12)
        np.testing.assert_allclose(cache.slab[cache.slots(request)], kernel(X[request], X), rtol=1e-12)


def _run_chunks_from_zero(cache, state, y, q, n_chunks, fill_work=-1.0):
    """``run_chunks`` on the C-SVC (C = 10) of labels y from alpha = 0, with ``cache`` and its
    ``compiled_state``; (its outputs, alpha after them)."""
    from leansvm.exact.irwls_chunk import run_chunks
    problem = c_svc(y, np.full(y.size, 10.0))
    alpha, f = np.zeros(y.size), np.zeros(y.size)
    out = run_chunks(cache.slab, *state, problem.y, problem.p, problem.C, alpha, f, np.zeros(2), 0.0,
                     np.zeros(2), 0.0, 1e-5, 1e-3, 3, 1, np.zeros(3, dtype=np.int64), 1000, 1e-5, q, 7,
                     n_chunks, np.empty(n_chunks), irwls.INNER_RELATIVE_TOL, np.zeros(0, dtype=np.int64),
                     fill_work)
    return out, alpha


def test_a_burst_stops_before_rows_past_its_work_budget(noisy_problem):
    """``fill_work``: a chunk whose missing rows would pass the multiply-adds left ends the
    burst (PAUSED) before any of its rows is computed, unless it is the burst's first; a
    budget of zero runs exactly one chunk."""
    X, y = noisy_problem
    X, y = X[:400], y[:400]
    q = 16
    row_work = X.shape[0] * X.shape[1]
    for budget, most_rows in ((0.0, q), (3.5 * q * row_work, 3.5 * q)):
        cache = KernelRowCache(Kernel("rbf", gamma=0.1), X, cache_size=200.0, dtype=np.float32)
        out, _ = _run_chunks_from_zero(cache, cache.compiled_state(q), y, q, 12, fill_work=budget)
        outcome, done, misses = out[0], out[2], out[10]
        assert outcome == irwls_chunk.PAUSED and 1 <= done < 12
        assert misses <= max(most_rows, q) and out[8] == misses
        if budget == 0.0:
            assert done == 1 and misses == q


def test_the_compiled_loop_fills_missing_rows_as_the_cache_would(noisy_problem):
    """``run_chunks`` computes missing float32 RBF rows into never-used slots itself: afterwards
    every cached sample's slot holds its kernel row (against a float64 reference), the slot's
    owner is that sample, the filled mark counts the cached samples, and every chunk's rows were
    counted once as a hit or a miss."""
    X, y = noisy_problem
    X, y = X[:400], y[:400]
    kernel = Kernel("rbf", gamma=0.1)
    cache = KernelRowCache(kernel, X, cache_size=200.0, dtype=np.float32)
    state = cache.compiled_state(16)
    assert state[5].shape[0] == X.shape[0]                 # allowed to fill rows itself
    n_chunks, q = 12, 16
    out, alpha = _run_chunks_from_zero(cache, state, y, q, n_chunks)
    outcome, done, clock, filled, hits, misses = out[0], out[2], out[7], out[8], out[9], out[10]
    cache.record_use(clock, filled, hits, misses)
    assert done == n_chunks and outcome != irwls.MISSED
    cached = np.flatnonzero(cache.slot_of >= 0)
    assert cached.size == filled == misses > q
    assert hits + misses == q * done
    slots = cache.slot_of[cached]
    np.testing.assert_array_equal(cache._owner[slots], cached)
    np.testing.assert_array_equal(np.sort(slots), np.arange(filled))
    np.testing.assert_allclose(cache.slab[slots], kernel(X[cached], X), atol=2e-6)
    assert np.all(alpha >= 0) and np.all(alpha <= 10.0) and alpha.any()


def test_a_compiled_loop_that_may_not_compute_rows_hands_the_chunk_back(noisy_problem):
    """A linear kernel (rows computed in Python): the first chunk, whose rows are all missing,
    comes back to Python with its working set, nothing filled and nothing moved."""
    X, y = noisy_problem
    X, y = X[:300], y[:300]
    cache = KernelRowCache(Kernel("linear"), X, cache_size=200.0, dtype=np.float32)
    state = cache.compiled_state(16)
    assert state[5].shape[0] == 0
    out, alpha = _run_chunks_from_zero(cache, state, y, 16, 5)
    assert out[0] == irwls.MISSED and out[2] == 0 and out[3].size == 16
    assert out[8] == 0 and not alpha.any() and np.all(cache.slot_of < 0)


def test_lapack_cholesky_solve_is_numpys_solve_and_reports_indefinite_matrices():
    """dpotrf/dpotrs through numba: the solution of M X' = B' for row-major B (k right-hand sides),
    M's strict lower triangle left as it was; info > 0 and B unchanged for an indefinite M; the
    ridged fallback solves M + ridge I."""
    from leansvm.core.lapack import cholesky_solve
    from leansvm.exact.irwls_subproblem import _solve_spd
    rng = np.random.default_rng(0)
    for m, k in ((1, 1), (7, 2), (96, 3)):
        A = rng.normal(size=(m, m + 3))
        M = A @ A.T + 0.1 * np.eye(m)
        B = rng.normal(size=(k, m))
        work, X = M.copy(), B.copy()
        assert cholesky_solve(work, X) == 0
        np.testing.assert_allclose(X, np.linalg.solve(M, B.T).T, rtol=1e-9, atol=1e-9)
        lower = np.tril_indices(m, -1)
        np.testing.assert_array_equal(work[lower], M[lower])
    M = np.diag([1.0, -1.0, 2.0])
    B = np.ones((2, 3))
    assert cholesky_solve(M.copy(), B) > 0 and np.all(B == 1.0)
    S = np.array([[1.0, 1.0], [1.0, 1.0 - 1e-14]])             # indefinite by rounding
    X = np.array([[2.0, 2.0]])
    assert _solve_spd(S.copy(), X) == 1
    np.testing.assert_allclose(S @ X[0], [2.0, 2.0], rtol=1e-6)


def test_a_principal_subsystem_solved_from_the_whole_systems_factor_is_its_own_solution():
    """IRWLS's later rounds drop clipped rows from S1 and solve M_SS x = b from the factor of
    the whole M (Schur complement of M^-1): the solution equals numpy's solve of M_SS, for one
    dropped row, several, and all but one."""
    from leansvm.core.lapack import cholesky_factor
    from leansvm.exact.irwls_subproblem import _solve_principal
    rng = np.random.default_rng(3)
    for m, n_drop, k in ((5, 1, 2), (40, 6, 3), (96, 15, 2), (12, 11, 1)):
        A = rng.normal(size=(m, m + 2))
        M = A @ A.T + 0.05 * np.eye(m)
        F = M.copy()
        assert cholesky_factor(F) == 0
        drop = np.sort(rng.choice(m, n_drop, replace=False)).astype(np.int64)
        kept = np.setdiff1d(np.arange(m), drop)
        B = rng.normal(size=(k, kept.size))
        expected = np.linalg.solve(M[np.ix_(kept, kept)], B.T).T
        assert _solve_principal(F, drop, B) == 0
        np.testing.assert_allclose(B, expected, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("shared", [False, True])
def test_at_extreme_c_float32_outputs_are_checked_and_the_solve_goes_on_in_float64(shared):
    """Outputs updated chunk by chunk through float32 rows drift with C times how far the alpha
    travel; at C = 1e5 they drifted 17 x tol here and the stopping rule passed on them while
    the true violation was 0.017. The solver checks them against exact ones and goes on in
    float64 rows from there: the rule then holds on exact outputs, and the reported objective
    is the alpha's own."""
    X, y = make_classification(1200, 10, n_informative=5, flip_y=0.1, random_state=0)
    y = np.where(y == 1, 1.0, -1.0)
    kernel, problem = Kernel("rbf", gamma=0.02), c_svc(y, 1e5)
    cache = (KernelRowCache(kernel, X, cache_size=20.0, dtype=np.float32), np.arange(y.size)) if shared \
        else None
    fit = solve_irwls(X, problem, kernel, tol=1e-3, kernel_cache=cache)
    assert fit.converged and fit.stats["outputs_refined"] and fit.stats["row_dtype"] == "float64"
    f = kernel(X) @ (y * fit.alpha)
    assert problem.kkt_violation(fit.alpha, f)[0] <= 1.001e-3
    assert fit.dual_objective == pytest.approx(problem.objective(fit.alpha, f), rel=1e-9)
    np.testing.assert_allclose(fit.stats["outputs"], f, atol=1e-6)
    smo = irwls.solve_irwls(X, problem, kernel, tol=1e-3, method="smo")
    assert fit.dual_objective <= smo.dual_objective * (1 - 1e-6)      # SMO's to 1e-6 (minimised)


def test_float32_outputs_within_their_drift_are_kept(noisy_problem):
    """At an ordinary C the check finds the float32 outputs close to exact and nothing is redone."""
    X, y = noisy_problem
    fit = solve_irwls(X, c_svc(y, 10.0), Kernel("rbf", gamma=0.1), tol=1e-3)
    assert fit.converged and not fit.stats["outputs_refined"] and fit.stats["row_dtype"] == "float32"


def test_without_max_iter_the_safety_bound_counts_chunks_by_the_problems_size(noisy_problem, monkeypatch):
    """max_iter=-1 stops only at SAFETY_CHUNKS x (n / q + 1) + 10 SAFETY_CHUNKS chunk iterations (a
    solve at large C may need hundreds of thousands), with scikit-learn's ConvergenceWarning."""
    from sklearn.exceptions import ConvergenceWarning
    monkeypatch.setattr(irwls, "SAFETY_CHUNKS", 1)
    X, y = noisy_problem
    q = int(irwls.SMALL_PROBLEM_Q * 64)                   # 1,500 rows: a small problem's working set
    with pytest.warns(ConvergenceWarning, match="Solver terminated early"):
        fit = solve_irwls(X, c_svc(y, 1e3), Kernel("rbf", gamma=0.1), tol=1e-6, working_set_size=64)
    assert not fit.converged and fit.n_iter == y.size // q + 1 + 10


def test_a_large_gather_split_over_the_threads_reads_the_same_rows(monkeypatch):
    """From GATHER_SPLIT_ENTRIES entries on a subset cache gathers its rows from the parent's over
    leansvm's threads (by rows); the rows are the parent's at the subset's columns either way."""
    import leansvm.core.kernels as kernels
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 5))
    kernel = Kernel("rbf", gamma=0.3)
    index = np.r_[np.arange(400), np.arange(400)]                   # two variables per sample, as SVR
    want = kernel(X)[index][:, index]
    pieces = []
    real = kernels.split_range

    def counted(work, n):
        pieces.append(n)
        return real(work, n)

    monkeypatch.setattr(kernels, "split_range", counted)
    for limit, split in ((1 << 62, False), (1, True)):
        monkeypatch.setattr(kernels, "GATHER_SPLIT_ENTRIES", limit)
        pieces.clear()
        sub = irwls.SubsetRowCache(KernelRowCache(kernel, X, cache_size=2.0), index, cache_size=2.0)
        W = rng.choice(800, size=100, replace=False)
        np.testing.assert_allclose(sub.slab[sub.slots(W)], want[W], rtol=1e-12)
        assert bool(pieces) == split
