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
import numpy as np
import scipy.sparse as sp

from leansvm.core.threads import SPLIT_MIN_ENTRIES, blas_is_single, can_split, split_range

KERNELS = ("linear", "poly", "rbf", "sigmoid")
#: LIBSVM's numeric kernel codes (``-t`` option, ``kernel_type`` in model files).
LIBSVM_KERNEL_CODES = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3, "precomputed": 4}

DEFAULT_BLOCK_MB = 64.0


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


def squared_row_norms(X) -> np.ndarray:
    """||x_i||^2 for every row, dense or CSR, in float64."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", X, X, dtype=np.float64)


def rows_per_block(n_cols: int, max_mb: float, itemsize: int = 8) -> int:
    """How many rows of an (rows x n_cols) block fit in ``max_mb`` megabytes (at least 1)."""
    return max(1, int(max_mb * 2**20 // (max(n_cols, 1) * itemsize)))


def inner_products(X, Y, dtype) -> np.ndarray:
    """Dense X Y' for dense or CSR X, Y. A large dense product under one BLAS thread (the solvers'
    loops) is split by rows over the thread pool: IRWLS on a9a 5.8 -> 5.2 s, magic 1.5 -> 1.2 s on 2 cores
    (``benchmarks/bench_irwls_threads.py``)."""
    if blas_is_single() and can_split() and not sp.issparse(X) and not sp.issparse(Y) \
            and X.shape[0] >= 2 and X.shape[0] * Y.shape[0] >= SPLIT_MIN_ENTRIES:
        out = np.empty((X.shape[0], Y.shape[0]), dtype=dtype)

        def rows(a, b):
            out[a:b] = X[a:b] @ Y.T

        split_range(rows, X.shape[0])
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


@numba.njit(cache=True, nogil=True)
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


def _rbf_rows(G, x_norms, y_norms, gamma):
    """G <- exp(-gamma * max(|x_i|^2 + |y_j|^2 - 2 G, 0)) in place: the exponents in one compiled
    pass, then NumPy's SIMD exp. Five NumPy passes before: 10 rows x 1,750 columns in float32
    54 -> 42 us; one-thread SVC fits penbased 0.113 -> 0.103 s, magic 0.87 -> 0.77 s (best of 5)."""
    work = G if G.flags.c_contiguous else np.ascontiguousarray(G)
    _rbf_exponents(work, x_norms, y_norms, G.dtype.type(-2.0), G.dtype.type(-gamma))
    np.exp(work, out=work)
    if work is not G:
        G[...] = work


def _rbf_inplace(G, x_norms, y_norms, gamma):
    """In-place RBF transform of inner products; large blocks split over threads by rows."""
    if G.size < SPLIT_MIN_ENTRIES:
        _rbf_rows(G, x_norms, y_norms, gamma)
        return
    split_range(lambda a, b: _rbf_rows(G[a:b], x_norms[a:b], y_norms, gamma), G.shape[0])


@dataclass(frozen=True)
class Kernel:
    """A kernel with numeric parameters (gamma already resolved).

    ``Kernel.from_params(kernel, gamma, degree, coef0, X)`` resolves
    scikit-learn's ``'scale'``/``'auto'`` gamma against training data.
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


@numba.njit(cache=True, nogil=True)
def gather_rows(slab, slots, cols, out, out_slots):
    """out[out_slots[r], k] = slab[slots[r], cols[k]]: cached rows restricted to columns, written
    straight into another cache's slots (no temporary, no second copy)."""
    for r in range(slots.size):
        row = slab[slots[r]]
        dst = out[out_slots[r]]
        for k in range(cols.size):
            dst[k] = row[cols[k]]


@numba.njit(cache=True, nogil=True)
def _accumulate_rows(slab, slots, coef, cols, out):
    """out[k] += sum_r coef[r] slab[slots[r], cols[k]]."""
    for r in range(slots.size):
        c = coef[r]
        row = slab[slots[r]]
        for k in range(cols.size):
            out[k] += c * row[cols[k]]


@numba.njit(cache=True, nogil=True)
def _accumulate_whole_rows(slab, slots, coef, out):
    """out[k] += sum_r coef[r] slab[slots[r], k]: :func:`_accumulate_rows` over every column in
    order, without the column gather (it vectorises; same operations in the same order)."""
    for r in range(slots.size):
        c = coef[r]
        row = slab[slots[r]]
        for k in range(out.size):
            out[k] += c * row[k]


def _first_occurrences(idx) -> np.ndarray:
    """``idx`` without repeats, in order. A row requested twice in one call (the two variables of
    an SVR sample) must get one slot: a second slot would be an orphan whose eviction marks the
    sample as not cached while its live slot is still being read."""
    _, first = np.unique(idx, return_index=True)
    return idx if first.size == idx.size else idx[np.sort(first)]


class KernelRowCache:
    """Least-recently-used cache of kernel rows k(x_i, X) over the training set.

    One preallocated slab of rows (``cache_size`` MB, as LIBSVM's ``-m``), a
    slot per cached sample and a use stamp per slot: a request is served by
    vectorised indexing, the missing rows are computed in one GEMM and
    replace the least recently used slots. Requests larger than the cache are
    still served (only the tail is kept). ``idx`` of a request must be unique.
    """

    #: sparse training data denser than this, whose dense copy fits in DENSE_MAX_MB, is
    #: densified once: BLAS GEMM beats sparse x sparse products by far (a9a: 11 % dense, 3x)
    DENSE_MIN_DENSITY = 0.02
    DENSE_MAX_MB = 512.0

    def __init__(self, kernel: Kernel, X, cache_size: float = 200.0, dtype=np.float64, buffer=None):
        self.kernel = kernel
        if sp.issparse(X) and X.shape[0] * X.shape[1] > 0:
            density = X.nnz / (X.shape[0] * X.shape[1])
            if density >= self.DENSE_MIN_DENSITY and X.shape[0] * X.shape[1] * 8 <= self.DENSE_MAX_MB * 2**20:
                X = X.toarray()
        self.norms = squared_row_norms(X)
        if np.dtype(dtype) == np.float32 and type(kernel) is Kernel and not sp.issparse(X):
            # rows stored in float32: the product in float32 too (SGEMM, twice DGEMM's speed; SVC
            # on a9a 6.9 -> 4.9 s in benchmarks/bench_irwls.py); the norms stay exact, so ||x - y||^2 = |x|^2 + |y|^2 - 2 x.y errs by
            # about 2^-24 (|x|^2 + |y|^2), as the float32 row itself does
            X = np.asarray(X, dtype=np.float32)
        self.X = X
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
            self.buffer = np.empty(size, dtype=self.dtype)          # pages in as used
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

    def lru_state(self):
        """(slot_of, stamp, clock): what a compiled loop needs to read cached rows and mark them
        used as :meth:`slots` does (``stamp[slot] = clock`` after ``clock += 1`` per request);
        it hands the clock and its hits back through :meth:`record_use`."""
        return self.slot_of, self._stamp, self._clock

    def record_use(self, clock, hits):
        """The LRU clock a compiled loop advanced to, and the rows it read (all hits)."""
        self._clock = int(clock)
        self.hits += int(hits)

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
            self._fill(_first_occurrences(idx[~hit]))
            slots = self._slot_of[idx]
        return slots

    def _fill(self, samples):
        """Compute the missing rows K[samples, :] into the cache (a subclass may compute in place)."""
        self._store(samples, self._compute(samples))

    def _compute(self, idx) -> np.ndarray:
        """K[idx, :] computed (one GEMM and an element-wise transform)."""
        return self.kernel.block(self.X[idx], self.X, x_norms=self.norms[idx], y_norms=self.norms,
                                 dtype=self.dtype)

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
                _accumulate_whole_rows(self._slab, slots, coef[start:start + step], sums)
            else:
                _accumulate_rows(self._slab, slots, coef[start:start + step], cols, out)
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
            gather_rows(self.parent.slab, slots, self._columns, out, out_rows[start:start + step])
