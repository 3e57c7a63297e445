import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels

from leansvm.core.kernels import Kernel, KernelRowCache, resolve_gamma, squared_row_norms

PARAMS = [
    ("linear", {}),
    ("rbf", {"gamma": 0.3}),
    ("poly", {"gamma": 0.2, "degree": 3, "coef0": 1.0}),
    ("sigmoid", {"gamma": 0.1, "coef0": -0.5}),
]


def _reference(name, X, Y, p):
    return pairwise_kernels(X, Y, metric={"poly": "polynomial"}.get(name, name), **p)


@pytest.mark.parametrize("name,p", PARAMS)
def test_kernel_block_matches_sklearn_dense_and_sparse(name, p):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 7))
    Y = rng.normal(size=(11, 7))
    X[X < 0.3] = 0.0
    kernel = Kernel(name, p.get("gamma", 1.0), p.get("degree", 3), p.get("coef0", 0.0))
    expected = _reference(name, X, Y, p)
    np.testing.assert_allclose(kernel.block(X, Y), expected, rtol=1e-10, atol=1e-12)
    Xs = sp.csr_matrix(X)
    Xs64 = sp.csr_matrix((Xs.data, Xs.indices.astype(np.int64), Xs.indptr.astype(np.int64)), shape=X.shape)
    for Xin, Yin in [(Xs, Y), (X, sp.csr_matrix(Y)), (Xs64, sp.csr_matrix(Y))]:
        np.testing.assert_allclose(kernel.block(Xin, Yin), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(kernel.block(X, Y, dtype=np.float32), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(kernel.diagonal(X), np.diag(_reference(name, X, X, p)), rtol=1e-10)


def test_blocks_cover_all_rows_under_budget():
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(1000, 5)), rng.normal(size=(300, 5))
    kernel = Kernel("rbf", 0.5)
    full = kernel(X, Y)
    seen = 0
    for start, stop, block in kernel.blocks(X, Y, max_mb=0.5):
        assert block.nbytes <= 0.5 * 2**20
        np.testing.assert_allclose(block, full[start:stop])
        seen += stop - start
    assert seen == X.shape[0]


def test_gamma_scale_and_auto_as_sklearn():
    rng = np.random.default_rng(2)
    X = rng.normal(scale=3.0, size=(50, 4))
    assert resolve_gamma("auto", X) == pytest.approx(0.25)
    assert resolve_gamma("scale", X) == pytest.approx(1.0 / (4 * X.var()))
    assert resolve_gamma("scale", sp.csr_matrix(X)) == pytest.approx(1.0 / (4 * X.var()))
    with pytest.raises(ValueError, match="gamma"):
        resolve_gamma(-1.0, X)
    with pytest.raises(ValueError, match="kernel"):
        Kernel("cubic")
    with pytest.raises(ValueError, match="gamma and coef0 must be numbers, got 'scale'.*from_params"):
        Kernel("rbf", gamma="scale")


def test_row_cache_bounded_and_exact():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3))
    kernel = Kernel("rbf", 1.0)
    full = kernel(X)
    cache_mb = 20 * 200 * 8 / 2**20          # room for 20 rows
    cache = KernelRowCache(kernel, X, cache_size=cache_mb)
    for idx in ([1, 5, 7], [5, 9], list(range(50)), [1, 2]):
        np.testing.assert_allclose(cache.rows(idx), full[idx])
        assert len(cache) <= 20
    assert cache.hits > 0 and cache.misses > 0


def test_row_cache_requests_with_repeated_rows_read_the_right_rows():
    """The two variables of an SVR sample ask for one row twice in one call: one slot, and no
    orphan slot whose later eviction would leave a live row marked as not cached."""
    from leansvm.core.kernels import Kernel, KernelRowCache
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    kernel = Kernel("rbf", gamma=0.5)
    K = kernel(X)
    cache = KernelRowCache(kernel, X, cache_size=10 * 60 * 8 / 2**20)      # room for 10 rows
    assert cache.capacity == 10
    for _ in range(200):
        rows = rng.integers(0, 60, size=4)
        idx = np.r_[rows, rows[::-1]]
        slots = cache.slots(idx)
        assert np.all(slots >= 0)
        np.testing.assert_allclose(cache.slab[slots], K[idx], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rbf_transform_is_the_numpy_passes(dtype):
    """The compiled RBF transform against the five NumPy passes it replaced, on a C-contiguous
    block and on a strided view: float64 (one compiled pass for the exponent, NumPy's exp)
    bit for bit; float32 (exponent and exp in one pass, Cephes' expf) within 3 ulps down to
    e^-87, 0 below (where NumPy gives under 1.7e-38)."""
    from leansvm.core.kernels import rbf_transform_rows
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 6)).astype(dtype)
    norms = np.einsum("ij,ij->i", X, X, dtype=np.float64).astype(dtype)
    G = X @ X.T
    for gamma in (dtype(0.01), dtype(0.7), dtype(30.0)):      # exponents from -0.1 to below -87
        want = G.copy()
        want *= -2.0
        want += norms[:, None]
        want += norms
        np.maximum(want, 0.0, out=want)
        want *= -gamma
        np.exp(want, out=want)
        got = G.copy()
        rbf_transform_rows(got, norms, norms, gamma)
        strided = G.copy()[:, ::2]
        rbf_transform_rows(strided, norms, norms[::2], gamma)
        for value, expected in ((got, want), (strided, want[:, ::2])):
            if dtype == np.float64:
                assert np.array_equal(value, expected)
                continue
            kept = expected >= np.exp(np.float32(-87.0))
            ulp = np.spacing(expected[kept])
            assert np.all(np.abs(value[kept] - expected[kept]) <= 3 * ulp)
            assert np.all(value[~kept] == 0)


def test_compiled_float32_rbf_rows_are_the_kernel_and_fill_only_caches_that_hold_every_row():
    """``rbf_rows_float32`` (float32 RBF rows computed inside the compiled chunk loop): the kernel
    within float32 rounding. The loop gets them only for a cache that holds every row (so all of
    that cache's rows come from it, none from Python's product); a smaller cache, float64 rows or
    another kernel get none."""
    from leansvm.core.kernels import rbf_rows_float32
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 9))
    kernel = Kernel("rbf", gamma=0.3)
    cache = KernelRowCache(kernel, X, dtype=np.float32)
    idx = np.array([5, 0, 299, 17], dtype=np.intp)
    out = np.empty((idx.size, X.shape[0]), dtype=np.float32)
    rbf_rows_float32(out, cache.X, idx, cache._XT, cache._row_norms, np.float32(-0.3))
    np.testing.assert_allclose(out, kernel(X[idx], X), atol=3e-6)
    assert cache.compiled_state(16)[5] is cache.X
    small = KernelRowCache(kernel, X, cache_size=100 * 300 * 4 / 2**20, dtype=np.float32)
    assert small.capacity < X.shape[0] and small.compiled_state(16)[5].size == 0
    for other in (KernelRowCache(kernel, X, dtype=np.float64),
                  KernelRowCache(Kernel("linear"), X, dtype=np.float32)):
        assert other.compiled_state(16)[5].size == 0


def test_first_occurrences_keeps_each_sample_once_in_request_order():
    from leansvm.core.slab_ops import first_occurrences
    idx = np.array([4, 2, 4, 9, 2, 2, 0, 9], dtype=np.intp)
    np.testing.assert_array_equal(first_occurrences(idx), [4, 2, 9, 0])
    np.testing.assert_array_equal(first_occurrences(np.arange(5, dtype=np.intp)), np.arange(5))
    assert first_occurrences(np.zeros(0, dtype=np.intp)).size == 0


def test_a_full_row_cache_computes_missing_rows_in_bounded_blocks(monkeypatch):
    """Once a cache is full, missing rows are computed in tiles of columns of ``FILL_TILE_KB`` (dense
    rows of the built-in kernels) or blocks of rows of ``DEFAULT_BLOCK_MB`` and scattered into
    their slots: the same rows, and no temporary block of every missing row (which took up to half
    the cache's size again)."""
    import tracemalloc
    from leansvm.core import kernels
    from leansvm.paths.binary_path import row_cache
    X = np.random.default_rng(0).standard_normal((3000, 5))
    kernel = Kernel.from_params("rbf", 0.2, 3, 0.0, X)
    cache = row_cache(kernel, X, cache_size=4.0, tol=1e-3)           # float32 rows of 12 kB
    cache.slots(np.arange(cache.capacity))                           # full, in never-used slots
    monkeypatch.setattr(kernels, "DEFAULT_BLOCK_MB", 0.1)            # 8 rows a block
    monkeypatch.setattr(kernels, "FILL_TILE_KB", 100)                # 150 rows x 170 columns a tile
    cache.slots(np.arange(cache.capacity, cache.capacity + 2))       # compiled first (numba's own memory)
    wanted = np.arange(cache.capacity + 2, cache.capacity + 152)     # 1.8 MB of missing rows
    tracemalloc.start()
    try:
        slots = cache.slots(wanted)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.5 * 2**20
    np.testing.assert_allclose(cache.slab[slots], kernel.block(X[wanted], X), rtol=1e-5, atol=1e-6)


def test_squared_row_norms_are_the_same_bits_for_every_form_of_the_same_rows():
    """Each row's squares are added one by one in column order, so a zero entry adds nothing and
    the dense, CSR (int32 and int64 indices, explicit zeros, duplicates to sum), float32, Fortran-order
    and sliced forms give identical bits, on any instruction set (a SIMD sum would not)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1003, 37)) * 10.0 ** rng.integers(-3, 4, size=(1003, 1))
    X[rng.random(X.shape) < 0.6] = 0.0
    want = squared_row_norms(X)
    exact = np.array([sum(v * v for v in row) for row in X.tolist()])      # Python's left-to-right sum
    np.testing.assert_array_equal(want, exact)
    csr = sp.csr_matrix(X)
    csr64 = csr.copy()
    csr64.indices, csr64.indptr = csr64.indices.astype(np.int64), csr64.indptr.astype(np.int64)
    explicit_zero = csr.copy()
    explicit_zero.data[::7] = 0.0
    dense_zeroed = explicit_zero.toarray()
    split = sp.csr_matrix((np.r_[csr.data[:1] / 2, csr.data[:1] / 2, csr.data[1:]],
                           np.r_[csr.indices[:1], csr.indices[:1], csr.indices[1:]],
                           np.r_[0, csr.indptr[1:] + 1]), shape=csr.shape)      # one entry as a duplicate pair
    for form in (csr, csr64, sp.csc_matrix(X), sp.csr_array(X), np.asfortranarray(X)):
        np.testing.assert_array_equal(squared_row_norms(form), want)
    np.testing.assert_array_equal(squared_row_norms(explicit_zero), squared_row_norms(dense_zeroed))
    np.testing.assert_array_equal(squared_row_norms(split)[1:], want[1:])
    np.testing.assert_allclose(squared_row_norms(split)[0], want[0], rtol=1e-15)
    np.testing.assert_array_equal(squared_row_norms(X[::2]), want[::2])
    X32 = X.astype(np.float32)
    np.testing.assert_array_equal(squared_row_norms(X32), squared_row_norms(sp.csr_matrix(X32)))
