"""The kernel expansion every leansvm model is:

    f(x) = sum_j coef[j, :] * k(sv[j], x) + intercept        (one column per binary problem)

``KernelExpansion.decision_function`` evaluates it in row blocks of X whose
kernel block (rows x m) stays under a memory budget, computing each block by
one BLAS product, one in-place vectorised transform, and one product with the
coefficient matrix.

Coefficient matrices of one-vs-one models are block sparse (the support
vectors of class c only carry the k-1 pairs involving c). The expansion
detects runs of consecutive support vectors sharing one pattern of non-zero
columns and multiplies only those sub-blocks, so a 26-class model costs
n x m x (k-1) flops like LIBSVM's loop, not n x m x k(k-1)/2.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from leansvm.core.kernels import Kernel, rows_per_block, squared_row_norms


#: Support vectors are kept dense when at least this fraction of entries is non-zero.
DENSE_FRACTION = 0.25

def _coef_blocks(coef: np.ndarray):
    """Runs of consecutive rows of ``coef`` with one non-zero column pattern.

    Returns a list of (row_start, row_stop, column_indices, coef[row_start:row_stop][:, column_indices]),
    or None when the pattern is dense enough that one full product is cheaper.
    """
    m, k = coef.shape
    if k <= 2 or m == 0:
        return None
    nz = coef != 0
    change = np.flatnonzero(np.any(nz[1:] != nz[:-1], axis=1)) + 1
    starts = np.concatenate(([0], change))
    stops = np.concatenate((change, [m]))
    # merge neighbouring runs while the union of their columns stays small
    # (a one-vs-one class block: each row holds a subset of the class's k-1 pairs); each run's
    # pattern as a Python int bit mask: the merge loop runs over ints, not tiny arrays (a satimage
    # path made 32,769 ndarray.sum calls here)
    widest = int(nz.sum(axis=1).max())
    if k <= 62:
        patterns = (nz[starts].astype(np.int64) @ (np.int64(1) << np.arange(k, dtype=np.int64))).tolist()
    else:
        patterns = [int.from_bytes(row.tobytes(), "big") for row in np.packbits(nz[starts], axis=1)]
    bounds = []                                   # [start, stop, union bit mask] of each block
    for a, b, cols in zip(starts.tolist(), stops.tolist(), patterns):
        if bounds:
            union = bounds[-1][2] | cols
            if union.bit_count() <= widest:
                bounds[-1][1:] = b, union
                continue
        bounds.append([a, b, cols])
    if len(bounds) > 4 * k + 64:  # fragmented: not worth a Python loop per block
        return None
    # a block's columns: those of any of its rows (the union of its runs' patterns)
    blocks = [(a, b, np.flatnonzero(nz[a:b].any(axis=0))) for a, b, _ in bounds]
    work = sum((b - a) * cols.size for a, b, cols in blocks)
    return [(a, b, cols, coef[a:b][:, cols]) for a, b, cols in blocks] if work < 0.7 * m * k else None


#: megabytes of one kernel block at prediction: a block that, split over the threads, stays near each
#: core's L2 cache is computed, exponentiated and multiplied by the coefficients before it leaves the
#: cache. 64 MB blocks (the solvers' size) took 64 ms for magic's test set (3,804 rows, 4,907 SVs), 8 MB
#: 34 ms; letter (4,000 rows, 8,011 SVs, 325 outputs) 171 -> 99 ms (2 cores, 4 MB of L2 each)
PREDICT_BLOCK_MB = 8.0

#: mult-adds a block of the coefficient product must save per block to pay for its Python call: a
#: one-row iris prediction took 24 us through three blocks, 6 us through the full product
BLOCK_CALL_MULT_ADDS = 8192


class KernelExpansion:
    """A fitted kernel model: f_k(x) = sum_j coef[j, k] k(sv_j, x) + intercept[k].

    Every leansvm model (exact, budget, compressed, Nystroem) ends as one: prediction, model
    files, ONNX export and Dask all read only this.

    Parameters
    ----------
    support_vectors : array-like or sparse matrix of shape (m, n_features)
        The expansion's vectors (dense or CSR; kept as given).
    coef : array-like of shape (m,) or (m, n_outputs)
        Coefficients; a binary SVM's column holds y_j alpha_j.
    intercept : float or array-like of shape (n_outputs,)
        One intercept per output.
    kernel : Kernel
        The kernel k, its parameters resolved.

    Attributes
    ----------
    n_support : int
        Number of vectors m.
    n_features : int
        Number of features of each vector.
    n_outputs : int
        Number of output columns (one per binary problem, class or target).

    Examples
    --------
    >>> import numpy as np
    >>> from leansvm.core.expansion import KernelExpansion
    >>> from leansvm.core.kernels import Kernel
    >>> model = KernelExpansion(np.array([[0.0, 0.0], [1.0, 1.0]]), [1.0, -1.0], 0.0,
    ...                         Kernel("rbf", gamma=1.0))
    >>> model.decision_function(np.array([[0.0, 0.0], [1.0, 1.0]])).round(3).ravel()
    array([ 0.865, -0.865])
    """

    def __init__(self, support_vectors, coef, intercept, kernel: Kernel):
        coef = np.asarray(coef, dtype=np.float64)
        support_vectors = kernel.support_rows(support_vectors)
        if coef.ndim == 1:
            coef = coef[:, None]
        if sp.issparse(support_vectors):
            support_vectors = sp.csr_matrix(support_vectors, dtype=np.float64)
        else:
            support_vectors = np.ascontiguousarray(support_vectors, dtype=np.float64)
            if support_vectors.ndim != 2:
                raise ValueError("support_vectors must be a 2-D array")
        if support_vectors.shape[0] != coef.shape[0]:
            raise ValueError(
                f"{support_vectors.shape[0]} support vectors but {coef.shape[0]} coefficient rows"
            )
        intercept = np.atleast_1d(np.asarray(intercept, dtype=np.float64))
        if intercept.shape != (coef.shape[1],):
            raise ValueError(f"intercept must have {coef.shape[1]} entries, got {intercept.shape}")
        if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(intercept))):
            raise ValueError("expansion coefficients and intercepts must be finite")
        self.support_vectors = support_vectors
        self.coef = np.ascontiguousarray(coef)
        self.intercept = intercept
        self.kernel = kernel
        self._sv_norms = squared_row_norms(support_vectors)
        self._blocks = _coef_blocks(self.coef)
        self._saved_per_row = 0 if self._blocks is None else \
            self.coef.size - sum((b - a) * cols.size for a, b, cols, _ in self._blocks)
        self._dense_sv = None

    @property
    def n_support(self) -> int:
        return self.coef.shape[0]

    @property
    def n_features(self) -> int:
        return self.support_vectors.shape[1]

    @property
    def n_outputs(self) -> int:
        return self.coef.shape[1]

    def _sv_operand(self, X):
        """SVs in the form that makes X SV' fastest: dense unless both are sparse and SVs are huge."""
        if not sp.issparse(self.support_vectors):
            return self.support_vectors
        if self._dense_sv is None and self.n_support * self.n_features * 8 <= 256 * 2**20:
            self._dense_sv = self.support_vectors.toarray()
        return self._dense_sv if self._dense_sv is not None else self.support_vectors

    def decision_function(self, X, max_mb: float = PREDICT_BLOCK_MB, dtype=np.float64) -> np.ndarray:
        """f(X) as an (n, n_outputs) array; kernel blocks stay under ``max_mb`` megabytes.

        ``dtype=np.float32`` computes kernel blocks in single precision (GEMM twice as fast, the
        RBF exp several times; kernel values within a few float32 ulps), summed with the
        coefficients in double precision (a float32 sum over thousands of support vectors
        would lose the scores' last digits).
        """
        if X.shape[1] != self.n_features and not self.kernel.pairwise:
            raise ValueError(f"X has {X.shape[1]} features, but the model expects {self.n_features}")
        if sp.issparse(X):
            X = sp.csr_matrix(X)
        n = X.shape[0]
        out = np.empty((n, self.n_outputs), dtype=np.float64)
        if self.n_support == 0:
            out[:] = self.intercept
            return out
        SV = self._sv_operand(X)
        dtype = np.dtype(dtype)
        coef = self.coef
        step = rows_per_block(self.n_support, max_mb, dtype.itemsize)
        for start in range(0, n, step):
            stop = min(start + step, n)
            Xb = X[start:stop]
            if not sp.issparse(Xb) and Xb.dtype != dtype:
                Xb = Xb.astype(dtype)
            K = self.kernel.block(Xb, SV if sp.issparse(SV) else SV.astype(dtype, copy=False),
                                  y_norms=self._sv_norms, dtype=dtype)
            K = K.astype(np.float64, copy=False)
            if self._blocks is None or (stop - start) * self._saved_per_row < BLOCK_CALL_MULT_ADDS * len(self._blocks):
                out[start:stop] = K @ coef
            else:
                res = np.zeros((stop - start, self.n_outputs))
                for a, b, cols, block_coef in self._blocks:
                    if cols.size:
                        res[:, cols] += K[:, a:b] @ block_coef
                out[start:stop] = res
        out += self.intercept
        return out

    def subset(self, rows) -> "KernelExpansion":
        """The expansion restricted to some support vectors (same kernel and intercepts)."""
        rows = np.asarray(rows)
        return KernelExpansion(self.support_vectors[rows], self.coef[rows], self.intercept.copy(), self.kernel)

    def __repr__(self):
        return (f"KernelExpansion(n_support={self.n_support}, n_features={self.n_features}, "
                f"n_outputs={self.n_outputs}, kernel={self.kernel})")
