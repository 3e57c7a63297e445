"""Kernel functions with LIBSVM's parameter meanings, blocked evaluation and a row cache.

    linear   k(u, v) = u'v
    poly     k(u, v) = (gamma u'v + coef0) ** degree
    rbf      k(u, v) = exp(-gamma ||u - v||^2)
    sigmoid  k(u, v) = tanh(gamma u'v + coef0)

Every kernel block is computed from one matrix product X Y' (BLAS for dense
input, SciPy's sparse-dense product for CSR) followed by an element-wise
transform done in place, so a block costs one GEMM plus one pass of `exp`
(or `tanh`, `pow`). Blocks are sized so that no temporary exceeds a memory
budget, whatever the number of rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numba.extending

import numpy as np
import scipy.sparse as sp

from leansvm.core.buffers import page_backed_buffer
from leansvm.core.expf import expf_nonpositive
from leansvm.core.jit import njit
from leansvm.core.row_norms import squared_row_norms  # noqa: F401  (re-exported: every kernel's |x|^2)
from leansvm.core.slab_ops import (accumulate_rows, accumulate_whole_rows, first_occurrences, gather_rows,
                                    scatter_tile)
from leansvm.core.threads import SPLIT_MIN_ENTRIES, blas_is_single, can_split, split_range

KERNELS = ("linear", "poly", "rbf", "sigmoid")
#: LIBSVM's numeric kernel codes (``-t`` option, ``kernel_type`` in model files).
LIBSVM_KERNEL_CODES = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3, "precomputed": 4}

DEFAULT_BLOCK_MB = 64.0
#: a row cache computes rows bound for scattered slots in tiles of columns of about this many KB
#: (KernelRowCache._tiles_into): a tile stays in a core's cache from its product to its copy
FILL_TILE_KB = 1024


def resolve_gamma(gamma, X) -> float:
    """Numeric gamma from scikit-learn's ``'scale'`` / ``'auto'`` or a number.

    scale: 1 / (d * Var[X]) (Var over all entries, sparse-aware); auto: 1 / d.
    """
    n_features = X.shape[1]
    if isinstance(gamma, str):
        if gamma == "auto":
            return 1.0 / n_features
        if gamma == "scale":
            if sp.issparse(X):
                mean = X.mean()
                var = X.multiply(X).mean() - mean**2
            else:
                var = float(np.var(X))
            return 1.0 / (n_features * var) if var > 0 else 1.0
        raise ValueError(f"gamma must be 'scale', 'auto' or a positive float, got {gamma!r}")
    gamma = float(gamma)
    if not np.isfinite(gamma) or gamma <= 0:
        raise ValueError(f"gamma must be a positive finite number, got {gamma!r}")
    return gamma


def rows_per_block(n_cols: int, max_mb: float, itemsize: int = 8) -> int:
    """How many rows of an (rows x n_cols) block fit in ``max_mb`` megabytes (at least 1)."""
    return max(1, int(max_mb * 2**20 // (max(n_cols, 1) * itemsize)))


def splits_rows(n_rows, n_cols) -> bool:
    """Whether an (n_rows x n_cols) block is computed in row ranges over the thread pool: under one
    BLAS thread (the solvers' loops), large enough, and where the pool would split."""
    return blas_is_single() and can_split() and n_rows >= 2 and n_rows * n_cols >= SPLIT_MIN_ENTRIES


def inner_products(X, Y, dtype, out=None, YT=None) -> np.ndarray:
    """Dense X Y' for dense or CSR X, Y (into ``out`` when given: a C-contiguous block of ``dtype``).
    ``YT``: Y' as a C-contiguous array, when the caller keeps one (a row cache): BLAS then reads
    it without transposing, 5-30 % faster for blocks of 16-128 rows (a9a, 37 rows: 6.4 -> 4.5 ms).
    A large dense product under one BLAS thread (the solvers' loops) is split by rows over the
    thread pool: IRWLS on a9a 5.8 -> 5.2 s, magic 1.5 -> 1.2 s on 2 cores
    (``benchmarks/exact/bench_irwls_threads.py``)."""
    if not sp.issparse(X) and not sp.issparse(Y) and (out is not None or splits_rows(X.shape[0], Y.shape[0])):
        if out is None:
            out = np.empty((X.shape[0], Y.shape[0]), dtype=dtype)
        right = Y.T if YT is None else YT

        def rows(a, b):
            if X.dtype == right.dtype == out.dtype:
                np.matmul(X[a:b], right, out=out[a:b])
            else:
                out[a:b] = X[a:b] @ right

        if splits_rows(X.shape[0], Y.shape[0]):
            split_range(rows, X.shape[0])
        else:
            rows(0, X.shape[0])
        return out
    if out is not None:
        out[...] = inner_products(X, Y, dtype)
        return out
    if sp.issparse(X) and sp.issparse(Y):
        out = (X @ Y.T).toarray()
    elif sp.issparse(X):
        out = np.asarray(X @ Y.T)
    elif sp.issparse(Y):
        out = np.asarray((Y @ X.T).T)
    else:
        out = X @ Y.T
    return np.ascontiguousarray(out, dtype=dtype)


@njit(cache=True, nogil=True)
def _rbf_exponents(G, x_norms, y_norms, minus_two, minus_gamma):
    """G <- max(-2 G + |x_i|^2 + |y_j|^2, 0) * -gamma in place, in one pass (C-contiguous G). The
    constants come in G's dtype and the operations in NumPy's order: the same values, bit for bit,
    as the five NumPy passes it replaces."""
    for i in range(G.shape[0]):
        row = G[i]
        x = x_norms[i]
        for j in range(row.size):
            d = minus_two * row[j] + x + y_norms[j]
            row[j] = (d if d > 0 else 0 * d) * minus_gamma     # 0 * d: zero in d's dtype (NaN stays NaN)


_F = np.float32


_FAST = {"contract", "nnan", "ninf", "nsz", "arcp", "afn"}


@njit(cache=True, nogil=True, inline="always", fastmath=_FAST)
def _rbf_value(g, x, y, minus_gamma):
    """exp(-gamma max(-2 g + x + y, 0)) for float32 g = <u, v>, x = |u|^2, y = |v|^2."""
    return expf_nonpositive(max(_F(-2.0) * g + x + y, _F(0.0)) * minus_gamma)


@njit(cache=True, nogil=True, fastmath=_FAST)
def _rbf_float32(G, x_norms, y_norms, minus_gamma):
    """G <- exp(-gamma max(-2 G + |x_i|^2 + |y_j|^2, 0)) in place for float32 G (C-contiguous), the
    exponent and its exp (:func:`expf_nonpositive`) in one pass that vectorises (8 lanes). Within
    3 float32 ulps of NumPy's exp down to e^-87 (tests/test_kernels.py), 0 below (NumPy: under
    1.7e-38). Two rows go through each step of the loop: the exp is a chain of about 20 dependent
    vector operations, and two independent chains keep the floating-point units busier (one core,
    300 runs alternating with the one-row loop, best (median): 1,024 x 868 0.65 (0.83) -> 0.54
    (0.69) ms, 64 x 40,000 2.0-2.15 -> 1.57-1.66 ms best, the same values bit for bit; four rows
    at a time stopped vectorising). fastmath without reassociation:
    Cody-Waite's two-step reduction must keep its order."""
    n = G.shape[0]
    for i in range(0, n - 1, 2):
        row, next_row = G[i], G[i + 1]
        x, next_x = x_norms[i], x_norms[i + 1]
        for j in range(row.size):
            g, next_g, y = row[j], next_row[j], y_norms[j]     # both loads before either store
            row[j] = _rbf_value(g, x, y, minus_gamma)
            next_row[j] = _rbf_value(next_g, next_x, y, minus_gamma)
    if n % 2:
        row, x = G[n - 1], x_norms[n - 1]
        for j in range(row.size):
            row[j] = _rbf_value(row[j], x, y_norms[j], minus_gamma)


def _rbf_float32_only(G, x_norms, y_norms, minus_gamma):
    """:func:`_rbf_float32` where G is float32; compiled code that also types float64 blocks (a
    float64 row cache) calls this, and only float32 rows are ever computed through it."""


@numba.extending.overload(_rbf_float32_only)
def _rbf_float32_only_impl(G, x_norms, y_norms, minus_gamma):
    if G.dtype == numba.types.float32:
        return lambda G, x_norms, y_norms, minus_gamma: _rbf_float32(G, x_norms, y_norms, minus_gamma)

    def refuse(G, x_norms, y_norms, minus_gamma):
        raise TypeError("compiled RBF rows are float32 only")
    return refuse


@njit(cache=True, nogil=True)
def rbf_rows_float32(out, X, idx, XT, norms, minus_gamma):
    """out[r, j] = exp(-gamma ||x_idx[r] - x_j||^2) for every j, float32 rows of dense X: the
    rows gathered, one SGEMM against X' (C-contiguous; numba's np.dot calls BLAS), then
    :func:`_rbf_float32`: :meth:`Kernel.block_into`'s float32 RBF rows, compiled, for the chunk
    loop that fills a row cache itself (``irwls_chunk.run_chunks``,
    :meth:`KernelRowCache.compiled_state`: such a cache gets all its rows from here)."""
    if idx.size == 0:
        return
    A = np.empty((idx.size, X.shape[1]), dtype=out.dtype)
    for r in range(idx.size):
        A[r] = X[idx[r]]
    np.dot(A, XT, out)
    _rbf_float32_only(out, norms[idx], norms, minus_gamma)


def rbf_transform_rows(G, x_norms, y_norms, gamma):
    """G <- exp(-gamma * max(|x_i|^2 + |y_j|^2 - 2 G, 0)) in place. float32: one compiled pass
    (:func:`_rbf_float32`: magic's one-thread SVC 1.31 -> 1.09 s). float64: the exponents in one
    compiled pass, then NumPy's SIMD exp (five NumPy passes before: one-thread SVC fits penbased
    0.113 -> 0.103 s, magic 0.87 -> 0.77 s, best of 5)."""
    work = G if G.flags.c_contiguous else np.ascontiguousarray(G)
    if work.dtype == np.float32:
        _rbf_float32(work, x_norms, y_norms, _F(-gamma))
    else:
        _rbf_exponents(work, x_norms, y_norms, G.dtype.type(-2.0), G.dtype.type(-gamma))
        np.exp(work, out=work)
    if work is not G:
        G[...] = work


def _rbf_inplace(G, x_norms, y_norms, gamma):
    """In-place RBF transform of inner products; large blocks split over threads by rows."""
    if G.size < SPLIT_MIN_ENTRIES:
        rbf_transform_rows(G, x_norms, y_norms, gamma)
        return
    split_range(lambda a, b: rbf_transform_rows(G[a:b], x_norms[a:b], y_norms, gamma), G.shape[0])


@dataclass(frozen=True)
class Kernel:
    """One of LIBSVM's four kernels with numeric parameters (gamma already resolved).

    linear u'v; poly (gamma u'v + coef0)^degree; rbf exp(-gamma |u - v|^2);
    sigmoid tanh(gamma u'v + coef0). ``Kernel.from_params(kernel, gamma, degree, coef0, X)``
    resolves scikit-learn's ``'scale'`` / ``'auto'`` gamma against training data X.

    Parameters
    ----------
    name : {'linear', 'poly', 'rbf', 'sigmoid'}, default='rbf'
        The kernel.
    gamma : float, default=1.0
        Kernel coefficient of 'rbf', 'poly' and 'sigmoid'.
    degree : int, default=3
        Degree of 'poly'.
    coef0 : float, default=0.0
        Constant of 'poly' and 'sigmoid'.

    Attributes
    ----------
    name, gamma, degree, coef0
        The parameters as given (``gamma`` a number: :meth:`from_params` resolves ``'scale'``).

    Examples
    --------
    >>> import numpy as np
    >>> from leansvm.core.kernels import Kernel
    >>> k = Kernel.from_params("rbf", gamma="scale", X=np.array([[0.0], [2.0]]))
    >>> k.gamma
    1.0
    >>> k.block(np.array([[0.0]]), np.array([[0.0], [1.0]])).round(4)
    array([[1.    , 0.3679]])
    """

    name: str = "rbf"
    gamma: float = 1.0
    degree: int = 3
    coef0: float = 0.0
    #: True where a sample's row holds kernel values, not features (:mod:`leansvm.core.user_kernels`)
    pairwise = False

    def __post_init__(self):
        if self.name not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}, got {self.name!r}")
        if self.name == "poly" and (int(self.degree) != self.degree or self.degree < 0):
            raise ValueError(f"degree must be a non-negative integer, got {self.degree!r}")
        if not all(np.isscalar(v) and not isinstance(v, (str, bytes)) for v in (self.gamma, self.coef0)):
            raise ValueError(f"Kernel's gamma and coef0 must be numbers, got {self.gamma!r}, {self.coef0!r} (for "
                             "scikit-learn's 'scale' / 'auto': Kernel.from_params(kernel, gamma, X=X))")
        if not np.isfinite(self.gamma) or not np.isfinite(self.coef0):
            raise ValueError("kernel gamma and coef0 must be finite")

    @classmethod
    def from_params(cls, kernel="rbf", gamma="scale", degree=3, coef0=0.0, X=None):
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
        g = resolve_gamma(gamma, X) if X is not None else float(gamma)
        return cls(kernel, g, int(degree), float(coef0))

    def params(self) -> dict:
        return {"kernel": self.name, "gamma": self.gamma, "degree": self.degree, "coef0": self.coef0}

    # -- evaluation ---------------------------------------------------------------
    def block(self, X, Y, x_norms=None, y_norms=None, dtype=np.float64) -> np.ndarray:
        """The dense kernel matrix K[i, j] = k(X[i], Y[j]) for one block of rows."""
        G = inner_products(X, Y, dtype)
        return self.transform_inner(G, X, Y, x_norms, y_norms)

    def block_into(self, out, X, Y, x_norms=None, y_norms=None, YT=None) -> np.ndarray:
        """:meth:`block` written into ``out`` (C-contiguous, of the block's dtype): no temporary.
        ``YT``: Y' kept C-contiguous by the caller (:func:`inner_products`)."""
        G = inner_products(X, Y, out.dtype, out=out, YT=YT)
        return self.transform_inner(G, X, Y, x_norms, y_norms)

    def transform_inner(self, G, X=None, Y=None, x_norms=None, y_norms=None) -> np.ndarray:
        """Turn inner products G = X Y' into kernel values, in place."""
        if self.name == "linear":
            return G
        if self.name == "rbf":
            if x_norms is None:
                x_norms = squared_row_norms(X)
            if y_norms is None:
                y_norms = squared_row_norms(Y)
            _rbf_inplace(G, x_norms.astype(G.dtype, copy=False), y_norms.astype(G.dtype, copy=False), G.dtype.type(self.gamma))
            return G
        G *= self.gamma
        G += self.coef0
        if self.name == "poly":
            if self.degree == 1:
                return G
            return np.power(G, self.degree, out=G)
        return np.tanh(G, out=G)

    def diagonal(self, X) -> np.ndarray:
        """k(x_i, x_i) for every row."""
        if self.name == "rbf":
            return np.ones(X.shape[0])                  # exp(-gamma ||x - x||^2): no norms needed
        norms = squared_row_norms(X)
        if self.name == "linear":
            return norms
        t = self.gamma * norms + self.coef0
        return t**self.degree if self.name == "poly" else np.tanh(t)

    def support_rows(self, support_vectors):
        """What a model keeps of its support vectors' rows: all of them (a precomputed kernel keeps
        one column)."""
        return support_vectors

    def blocks(self, X, Y, max_mb=DEFAULT_BLOCK_MB, dtype=np.float64, y_norms=None):
        """Yield ``(start, stop, K[start:stop])`` over row blocks of X, each under ``max_mb``."""
        if self.name == "rbf" and y_norms is None:
            y_norms = squared_row_norms(Y)
        step = rows_per_block(Y.shape[0], max_mb, np.dtype(dtype).itemsize)
        for start in range(0, X.shape[0], step):
            stop = min(start + step, X.shape[0])
            yield start, stop, self.block(X[start:stop], Y, y_norms=y_norms, dtype=dtype)

    def __call__(self, X, Y=None, dtype=np.float64) -> np.ndarray:
        """Whole kernel matrix (small inputs only: tests, small sub-problems)."""
        Y = X if Y is None else Y
        return self.block(X, Y, dtype=dtype)


#: a gather of at least this many entries is split over leansvm's threads by rows (memory-bound, so it
#: gains less than two threads' worth): SVR's chunks of 512 rows over 86,000 variables on diamonds
GATHER_SPLIT_ENTRIES = 1 << 20


def dense_if_worth_it(X):
    """Sparse X as a dense array when it is dense enough for GEMM to beat sparse products and its
    dense copy fits in :attr:`KernelRowCache.DENSE_MAX_MB`; else X as it is."""
    if sp.issparse(X) and X.shape[0] * X.shape[1] > 0:
        density = X.nnz / (X.shape[0] * X.shape[1])
        if density >= KernelRowCache.DENSE_MIN_DENSITY and \
                X.shape[0] * X.shape[1] * 8 <= KernelRowCache.DENSE_MAX_MB * 2**20:
            return X.toarray()
    return X


class KernelRowCache:
    """Least-recently-used cache of kernel rows k(x_i, X) over the training set.

    One preallocated slab of rows (``cache_size`` MB, as LIBSVM's ``-m``), a
    slot per cached sample and a use stamp per slot: a request is served by
    vectorised indexing, the missing rows are computed in one GEMM and
    replace the least recently used slots. Requests larger than the cache are
    still served (only the tail is kept). ``idx`` of a request must be unique.
    """

    _compiled_rbf = False

    #: sparse training data denser than this, whose dense copy fits in DENSE_MAX_MB, is
    #: densified once: BLAS GEMM beats sparse x sparse products by far (a9a: 11 % dense, 3x)
    DENSE_MIN_DENSITY = 0.02
    DENSE_MAX_MB = 512.0

    def __init__(self, kernel: Kernel, X, cache_size: float = 200.0, dtype=np.float64, buffer=None):
        self.kernel = kernel
        X = dense_if_worth_it(X)
        self.norms = squared_row_norms(X)
        float32_products = np.dtype(dtype) == np.float32 and type(kernel) is Kernel and not sp.issparse(X)
        if float32_products:
            # rows stored in float32: the product in float32 too (SGEMM, twice DGEMM's speed; SVC
            # on a9a 6.9 -> 4.9 s in benchmarks/exact/bench_irwls.py); the norms stay exact, so ||x - y||^2 = |x|^2 + |y|^2 - 2 x.y errs by
            # about 2^-24 (|x|^2 + |y|^2), as the float32 row itself does
            X = np.ascontiguousarray(X, dtype=np.float32)
        self.X = X
        # float32 RBF rows of dense X: the compiled chunk loop may compute them (compiled_state)
        self._compiled_rbf = float32_products and kernel.name == "rbf"
        # the norms in the rows' dtype, as the RBF transform reads them (no cast at every fill)
        self._row_norms = self.norms.astype(dtype)
        # X' contiguous for the row products (inner_products' YT): a second copy of dense X
        self._XT = None if sp.issparse(X) or type(kernel) is not Kernel else np.ascontiguousarray(X.T)
        self._allocate(X.shape[0], cache_size, dtype, buffer)

    def _allocate(self, n, cache_size, dtype, buffer=None):
        """An empty slab of as many length-n rows as fit in ``cache_size`` MB (at least one).

        ``buffer``: a 1-d array (the ``buffer`` of an earlier cache) whose memory the slab
        reuses when it is large enough and of the same dtype: a solver that rebuilds its cache
        at each shrinking phase then does not page in fresh memory each time (SVR's path on
        diamonds 10k: 1.6 s of 15 in first writes to new slabs)."""
        self.dtype = np.dtype(dtype)
        self.n = n
        self.row_bytes = max(1, n) * self.dtype.itemsize
        self.capacity = int(min(max(n, 1), max(1, cache_size * 2**20 // self.row_bytes)))
        size = self.capacity * self.n
        if buffer is not None and buffer.dtype == self.dtype and buffer.size >= size:
            self.buffer = buffer
        else:
            self.buffer = page_backed_buffer(size, self.dtype)      # pages in as used
        self._slab = self.buffer[:size].reshape(self.capacity, self.n)
        self._spare = []
        self._slot_of = np.full(self.n, -1, dtype=np.intp)
        self._owner = np.full(self.capacity, -1, dtype=np.intp)
        self._stamp = np.full(self.capacity, -1, dtype=np.int64)
        self._clock = 0
        self._filled = 0          # slots 0 .. _filled-1 have been used (filled in order)
        self.hits = 0
        self.misses = 0

    def lend_buffer(self):
        """A slab buffer given back by an earlier sub-problem's cache over these rows, or None.

        Sub-problems solved one after another on this cache's rows (the C of a path) then
        write into memory that is already paged in. Thread-safe (list pop / append)."""
        try:
            return self._spare.pop()
        except IndexError:
            return None

    def give_back_buffer(self, buffer):
        """Keep ``buffer`` for the next :meth:`lend_buffer` (two at most: one per thread)."""
        if len(self._spare) < 2:
            self._spare.append(buffer)

    def __len__(self):
        return int(np.count_nonzero(self._owner >= 0))

    def rows(self, idx) -> np.ndarray:
        """K[idx, :] as a (len(idx), n) array (a copy)."""
        idx = np.asarray(idx, dtype=np.intp)
        if idx.size <= self.capacity:
            return self._slab[self.slots(idx)]
        out = self._compute(idx)
        self.misses += idx.size
        self._clock += 1
        self._store(idx[-self.capacity:], out[-self.capacity:])
        return out

    @property
    def slot_of(self) -> np.ndarray:
        """Slot of each sample's row in ``slab``, -1 where it is not cached (read only)."""
        view = self._slot_of.view()
        view.flags.writeable = False
        return view

    @property
    def slab(self) -> np.ndarray:
        """The cached rows; row ``slots(idx)[r]`` is K[idx[r], :] until the next request."""
        return self._slab

    def compiled_state(self, max_rows):
        """What a compiled loop needs to read cached rows and mark them used as :meth:`slots` does
        (``stamp[slot] = clock`` after ``clock += 1`` per request) and, for float32 RBF rows
        of dense X (:func:`rbf_rows_float32`), to compute missing rows into never-used slots
        itself: (slot_of, stamp, clock, owner, filled, X, X', norms, -gamma). X is empty where
        the loop may not compute rows: other rows, requests of ``max_rows`` rows that
        :meth:`_fill` would split over the threads, or a cache that cannot hold every row. The
        loop then computes every row of this cache (it never evicts, so no row is left for
        Python to compute): its rows come one way, the loop's BLAS through numba. That BLAS
        (scipy's OpenBLAS 0.3.30 here) is slower than NumPy's for wide blocks (64 rows of a9a:
        7.8 against 6.4 ms), which is why rows computed from Python keep NumPy's product.
        The loop hands its clock, its filled slots and its counts back through :meth:`record_use`."""
        if self._compiled_rbf and self.capacity >= self.n and not splits_rows(max_rows, self.n):
            X, XT, norms = self.X, self._XT, self._row_norms
        else:
            X = XT = np.zeros((0, 0), dtype=self.dtype)
            norms = np.zeros(0, dtype=self.dtype)
        return (self._slot_of, self._stamp, self._clock, self._owner, self._filled, X, XT, norms,
                self.dtype.type(-self.kernel.gamma))

    def record_use(self, clock, filled, hits, misses):
        """The LRU clock and the never-used slots' mark a compiled loop advanced to, and the rows
        it read from the cache (hits) and computed (misses)."""
        self._clock, self._filled = int(clock), int(filled)
        self.hits += int(hits)
        self.misses += int(misses)

    def holds_all(self) -> bool:
        """Whether every row is resident: requests then only read the slab (threads may share it)."""
        return self.capacity >= self.n and bool(np.all(self._slot_of >= 0))

    def slots(self, idx) -> np.ndarray:
        """Make rows K[idx, :] resident (len(idx) <= capacity) and return their slots in ``slab``.

        Saves copying rows: a solver reads only the rows it needs, e.g. the few
        whose coefficients changed.
        """
        idx = np.asarray(idx, dtype=np.intp)
        if idx.size > self.capacity:
            raise ValueError(f"{idx.size} rows requested, the cache holds {self.capacity}: "
                             "raise cache_size")
        self._clock += 1
        slots = self._slot_of[idx]
        hit = slots >= 0
        self._stamp[slots[hit]] = self._clock
        n_hit = int(np.count_nonzero(hit))
        self.hits += n_hit
        self.misses += idx.size - n_hit
        if n_hit < idx.size:
            self._fill(first_occurrences(idx[~hit]))
            slots = self._slot_of[idx]
        return slots

    def _fill(self, samples):
        """Compute the missing rows K[samples, :] straight into their slots.

        A large block is split by rows over the thread pool, each range computed and written by
        its thread (:func:`splits_rows`); a range whose slots are consecutive (never-used slots,
        filled in order) is computed in place, the others in tiles of columns (:meth:`_tiles_into`)
        or, for rows of other kernels or sparse X, through blocks of at most :data:`DEFAULT_BLOCK_MB`
        and a scatter each, so that the cache stays within its size (a block of every missing row
        took up to half of it again: 200 MB more for a 400 MB cache, ``tests/test_kernels.py``).
        If the computation fails (a Ctrl-C), the slots are given up, so no sample points at a row
        that was not written."""
        consecutive = self._filled + samples.size <= self.capacity      # never-used slots (_claim)
        slots = self._claim(samples)
        block_rows = max(1, int(DEFAULT_BLOCK_MB * 2**20 // self.row_bytes))

        def rows(a, b):
            if consecutive:
                self._rows_into(self._slab[slots[a]:slots[a] + b - a], samples[a:b])
                return
            if self._XT is not None:
                self._tiles_into(samples[a:b], slots[a:b])
                return
            out = np.empty((min(block_rows, b - a), self.n), self.dtype)
            for c in range(a, b, block_rows):
                d = min(b, c + block_rows)
                self._slab[slots[c:d]] = self._rows_into(out[:d - c], samples[c:d])

        try:
            if splits_rows(samples.size, self.n):
                split_range(rows, samples.size)
            else:
                rows(0, samples.size)
        except BaseException:
            self._slot_of[samples] = -1
            self._owner[slots] = -1
            self._stamp[slots] = -1
            raise

    def _tiles_into(self, samples, slots):
        """K[samples, :] written into scattered ``slots``, a tile of columns at a time (about
        :data:`FILL_TILE_KB`): each tile's product, transform and copy into the slots run while
        it sits in the core's cache, so the slab's memory is written once. A block of whole rows
        is written, read back by the transform and read again by the copy: diamonds' SVR
        (43,152 rows, 68,000 rows filled) 13.6 -> 11.4 s of CPU on 2 cores (means of three
        interleaved fits)."""
        m, n = samples.size, self.n
        width = min(n, max(16, int(FILL_TILE_KB * 1024 // (m * self.dtype.itemsize))))
        buffer = np.empty(m * width, dtype=self.dtype)
        X, norms = self.X[samples], self._row_norms[samples]
        for start in range(0, n, width):
            stop = min(n, start + width)
            tile = buffer[:m * (stop - start)].reshape(m, stop - start)      # C-contiguous
            self.kernel.block_into(tile, X, self.X[start:stop], x_norms=norms,
                                   y_norms=self._row_norms[start:stop], YT=self._XT[:, start:stop])
            scatter_tile(self._slab, slots, start, tile)

    def _compute(self, idx) -> np.ndarray:
        """K[idx, :] computed into a new block."""
        return self._rows_into(np.empty((len(idx), self.n), dtype=self.dtype), idx)

    def _rows_into(self, out, idx) -> np.ndarray:
        """K[idx, :] written into ``out`` (one GEMM against the contiguous X', one transform). Rows
        bound for scattered slots are computed a tile of columns at a time (:meth:`_tiles_into`),
        whose products BLAS may round in another order: the same values to a float's last bits."""
        return self.kernel.block_into(out, self.X[idx], self.X, x_norms=self._row_norms[idx],
                                      y_norms=self._row_norms, YT=self._XT)

    def outputs(self, rows, coef, cols, offset=0.0) -> np.ndarray:
        """sum_r coef_r (K[rows_r, cols_k] + offset) for every k, read from (and filling) the cache.

        Rows are fetched in batches of at most half the cache, so that a batch
        never evicts itself, and summed in float64 straight from the slab (no
        gathered copy of the rows). When ``cols`` covers a quarter of the columns
        or more (every column of a pair or fold block copied out of a path's
        cache, a fold's rows, an SVR problem's two variables per sample) the sums
        run over whole rows, which vectorise, and are gathered once at the end:
        the same sums (satimage path CPU 0.89 -> 0.86 s; SVR path on diamonds
        10k: 0.9 -> 0.3 s); over fewer columns, a gather per row and column.
        """
        rows = np.asarray(rows, dtype=np.intp)
        cols = np.asarray(cols, dtype=np.int64)
        coef = np.asarray(coef, dtype=np.float64)
        out = np.zeros(cols.size)
        if rows.size == 0 or cols.size == 0:
            return out
        whole_rows = 4 * cols.size >= self.n
        sums = np.zeros(self.n) if whole_rows else out
        step = max(1, self.capacity // 2)
        for start in range(0, rows.size, step):
            slots = self.slots(rows[start:start + step]).astype(np.int64)
            if whole_rows:
                accumulate_whole_rows(self._slab, slots, coef[start:start + step], sums)
            else:
                accumulate_rows(self._slab, slots, coef[start:start + step], cols, out)
        if whole_rows:
            out = sums[cols]
        if offset:
            out += offset * coef.sum()
        return out

    def _store(self, samples, rows):
        """Put rows into the least recently used slots (empty slots first)."""
        self._slab[self._claim(samples)] = rows

    def _claim(self, samples) -> np.ndarray:
        """Slots for ``samples``: never-used ones in order (contiguous), else the least recently
        used (their old rows evicted); bookkeeping only, the caller writes the rows."""
        k = samples.size
        if self._filled + k <= self.capacity:          # never-used slots: no eviction
            free = np.arange(self._filled, self._filled + k)
            self._filled += k
        else:
            free = (np.argpartition(self._stamp, k - 1)[:k] if k < self.capacity
                    else np.arange(self.capacity))
            self._filled = self.capacity
            old = self._owner[free]
            self._slot_of[old[old >= 0]] = -1
        self._owner[free] = samples
        self._slot_of[samples] = free
        self._stamp[free] = self._clock
        return free


class SubsetRowCache(KernelRowCache):
    """Rows K[idx, index] of a sub-problem (samples ``index`` of a parent cache's set).

    A miss is served by the parent (a slab read and a column gather; the parent
    computes the row only when it does not hold it), so rows computed once for a
    superset (a regularisation path over C, the folds of a cross-validation)
    serve every sub-problem, every shrinking phase and every C.
    """

    def __init__(self, parent: KernelRowCache, index, cache_size: float = 200.0, dtype=None, buffer=None):
        self.parent = parent
        self.index = np.asarray(index, dtype=np.intp)
        if self.index.ndim != 1 or (self.index.size and (
                self.index.min() < 0 or self.index.max() >= parent.n)):
            raise ValueError(f"index must be row numbers of the parent cache (0 .. {parent.n - 1})")
        self.kernel = parent.kernel
        self._columns = self.index.astype(np.int64)
        self.X = None                                  # rows come from the parent
        self.norms = None
        self._allocate(self.index.size, cache_size, parent.dtype if dtype is None else dtype, buffer)

    def _fill(self, samples):
        """The parent's rows of ``samples``, column-gathered straight into this cache's slots."""
        self._gather(samples, self._slab, self._claim(samples))

    def _compute(self, idx) -> np.ndarray:
        out = np.empty((len(idx), self.n), dtype=self.dtype)
        self._gather(idx, out, np.arange(len(idx)))
        return out

    def _gather(self, idx, out, out_rows):
        """out[out_rows[r]] = the parent's row of sample idx[r] at this cache's columns, fetched in
        batches of half the parent's capacity (a batch never evicts itself)."""
        rows = self.index[np.asarray(idx, dtype=np.intp)]
        out_rows = np.asarray(out_rows, dtype=np.int64)
        step = max(1, self.parent.capacity // 2)
        for start in range(0, rows.size, step):
            slots = self.parent.slots(rows[start:start + step]).astype(np.int64)
            dst = out_rows[start:start + step]
            if slots.size > 1 and slots.size * self._columns.size >= GATHER_SPLIT_ENTRIES:
                split_range(lambda a, b: gather_rows(self.parent.slab, slots[a:b], self._columns, out, dst[a:b]),
                            slots.size)
            else:
                gather_rows(self.parent.slab, slots, self._columns, out, dst)
