"""Eq. 10's objective and gradient for the RBF kernel: float32 row blocks through BLAS.

One L-BFGS iteration of the gradient support vectors (Xu et al., eq. 10) on N fitting points,
r vectors in d dimensions and p outputs costs two N x r x d products (the inner products
<x_i, z_j> and H' X for dL/dZ) and two N x r x p ones (predictions and dL/dB): about
4 N r (d + p) flops. Everything between them (the kernel's exp, the residuals, the outer
product G = -R B' / N, H = G * K and its column sums) is element-wise on the N x r block. Done on
the whole N x r matrix in float64 (:meth:`leansvm.compression.cvm.GradientProblem.objective`),
each such pass streams N r 8 bytes from memory and the iteration runs at memory speed, not at
arithmetic speed: 1.6 GFLOP/s on synth-50k's shape (N = 50,000, r = 868, d = 20).

Here the points go through in blocks of :func:`block_rows` rows, so that one block's kernel rows
(about 4 MB) stay in cache from the product that makes them to the product that
consumes them; a block is made by one product and one compiled pass (distance and exp), and
consumed by two products (:class:`BlockedRBF` says how); the products are float32 GEMMs; the row
blocks are split over leansvm's threads (each thread sums its own products in float64).
The objective and the gradient returned are float64 (L-BFGS works in float64); float32 rounds
the kernel values to about 1e-7 relative, far below what the fit resolves (the same blocks in
float64 check the algebra against finite differences in the tests).
``benchmarks/compression/bench_compression_speed.py`` measures the iteration's GFLOP/s against the
machine's GEMM rate.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from leansvm.core.kernels import rbf_transform_rows
from leansvm.core.threads import SPLIT_MIN_ENTRIES, split_range

#: rows of one block: at most BLOCK_ROWS, and halved down to MIN_BLOCK_ROWS while the block's kernel
#: rows pass BLOCK_BYTES (about a core's share of the cache): 1,024 x 868 float32 rows are 3.5 MB;
#: at 2,000 vectors (float32) and at 868 in float64, 512 rows took 0.57-0.66 s and 0.134 s an
#: iteration against 0.62-0.79 s and 0.147-0.156 s with 1,024 (200,000 and 50,000 points, 2 cores)
BLOCK_ROWS = 1024
MIN_BLOCK_ROWS = 256
BLOCK_BYTES = 4 * 2**20

#: sparse points are made dense one block at a time up to this many features (a9a: 123)
DENSE_BLOCK_MAX_FEATURES = 4096
#: the one-product gradient (BlockedRBF) costs q (d + 1) multiply-adds per kernel entry for q outputs,
#: forming H costs about 2 q + d and one more pass over the block: the one product while its width is
#: at most this many times 2 q + d (binary: 1 output; one-vs-one point blocks of letter: 25 outputs,
#: d = 16, where H takes 0.027 s per evaluation against 0.067 s for the one product on 12,800 points,
#: 520 vectors, 2 cores: ``benchmarks/compression/bench_compression_speed.py``)
ONE_PRODUCT_MAX_WIDTH_OVER_H = 1.5
#: the one product's width (q (d + 1) columns) rounded up to a multiple of this with zero columns:
#: K' [.] for a 1,024 x 868 float32 block and 21 columns took 0.85 ms on one core, padded to 24
#: 0.72 ms (OpenBLAS's float32 kernels work in column panels; 22 and 28 columns were as slow as 21)
PRODUCT_WIDTH_STEP = 8


def block_rows(n_vectors: int, itemsize: int) -> int:
    """Rows of one block of kernel rows against ``n_vectors`` vectors of ``itemsize`` bytes."""
    rows = BLOCK_ROWS
    while rows > MIN_BLOCK_ROWS and rows * n_vectors * itemsize > BLOCK_BYTES:
        rows //= 2
    return rows


def applies(kernel, X) -> bool:
    """Whether the blocked float32 path computes the objective of ``kernel`` at fitting points ``X``:
    the RBF kernel, dense points (or sparse ones with few features). Vectors restricted to some outputs (LIBSVM's one-vs-one
    layout: a vector serves only its class's pairs) need nothing of their own: B is zero outside
    their outputs (``GradientProblem.unpack``), so the dense products give the restricted outputs,
    and the gradient is packed on those entries only."""
    return kernel.name == "rbf" and (not sp.issparse(X) or X.shape[1] <= DENSE_BLOCK_MAX_FEATURES)


class BlockedRBF:
    """The fitting points in float32 and their squared norms (made once per problem), and the
    objective over row blocks.

    One product <x_i, z_j> and one compiled pass (:func:`leansvm.core.kernels.rbf_transform_rows`:
    the distance |x_i|^2 + |z_j|^2 - 2 <x_i, z_j> and its exp together) make a block of kernel rows,
    written into one buffer per thread. The gradient needs no pass over the block either: with
    G = -R B' / N and H = G * K,

        dL/dB = -K' R / N,    sum_i H_ij = sum_k B_jk (dL/dB)_jk,
        H' X = sum_k diag(B_k) K' (X * (-R_k / N))            (R_k: the k-th output's residuals),

    so one product K' [-R / N, X * (-R_1 / N), ..., X * (-R_p / N)] gives them all. For a learned
    gamma, sum_ij H_ij |x_i - z_j|^2 = sum_i |x_i|^2 sum_k (-R_ik / N) (K B)_ik + sum_j |z_j|^2 sum_i H_ij
    - 2 sum_j <z_j, (H' X)_j>: no pass either.

    With point blocks (one-vs-one, more than two classes: a point counts only in the k - 1 pairs of
    its class), the points are stored class by class and each class's rows use only its columns
    of B, R and the product above: (k - 1) instead of k (k - 1) / 2 outputs per point."""

    def __init__(self, problem, dtype=np.float32):
        self.problem = problem
        self.dtype = np.dtype(dtype)
        #: ``order``: the problem's row of each stored row (None: the same order); ``segments``: (first row,
        #: end row, output columns or None for all) of each class's stored rows
        if problem.point_blocks is None:
            self.order, self.segments = None, [(0, problem.N, None)]
        else:
            self.order = np.concatenate([np.asarray(rows, dtype=np.intp) for rows, _ in problem.point_blocks])
            ends = np.cumsum([len(rows) for rows, _ in problem.point_blocks])
            self.segments = [(int(e - len(rows)), int(e), np.asarray(cols, dtype=np.intp))
                             for (rows, cols), e in zip(problem.point_blocks, ends)]
        X = problem.X if self.order is None else problem.X[self.order]
        self.X = X.astype(self.dtype) if problem.sparse else np.ascontiguousarray(X, dtype=self.dtype)
        norms = problem.x_norms if self.order is None else problem.x_norms[self.order]
        self.x_norms64 = np.asarray(norms, dtype=np.float64)
        self.x_norms = self.x_norms64.astype(self.dtype)

    def _buffer(self, key, shape, zero=False):
        """A work array of ``shape`` (this object's dtype) kept for the next evaluation under ``key`` (the
        row range and role: one per thread). Made once, not at every evaluation: a Dask worker's
        nanny sets ``MALLOC_TRIM_THRESHOLD_``, which also fixes glibc's mmap threshold at 128 KB, so
        the large arrays (a block's kernel rows: up to 4 MB) were fresh pages at every evaluation
        there; the small ones are ``distributed._freed_memory_kept``'s. One objective of 1,000 vectors
        on 100,000 rows under the trim setting alone, with both: 0.059-0.060 s (the client 0.058-0.061);
        without these arrays kept: 0.067-0.068 s (``benchmarks/deploy/bench_dask_worker_env.py``).
        ``zero``: zeros when made (padding columns that stay zero)."""
        buffers = self.__dict__.setdefault("_buffers", {})
        found = buffers.get(key)
        if found is None or found.shape != shape:
            found = buffers[key] = (np.zeros if zero else np.empty)(shape, dtype=self.dtype)
        return found

    def _points(self, s, e):
        """Rows s:e of the fitting points (in this object's order), dense."""
        return self.X[s:e].toarray() if self.problem.sparse else self.X[s:e]

    def _chunks(self, a, b, rows):
        """(s, e, segment index) of ``rows`` at most, over rows a:b, within one segment each."""
        for i, (first, end, _) in enumerate(self.segments):
            lo, hi = max(a, first), min(b, end)
            for s in range(lo, hi, rows):
                yield s, min(s + rows, hi), i

    def objective(self, Z, B, c, gamma):
        """(L, dL/dZ, dL/dB, dL/dc, S) of eq. 10 at (Z, B, c) with RBF ``gamma``, float64, where
        S = sum_ij H_ij |x_i - z_j|^2 (dL/dlog(gamma) = -gamma S)."""
        prob = self.problem
        N, r, p, d = prob.N, Z.shape[0], prob.p, prob.d
        dtype = self.dtype
        Zt = np.ascontiguousarray(Z.T, dtype=dtype)
        z_sq = np.einsum("ij,ij->i", Z, Z)
        z_norms = z_sq.astype(dtype)
        B32 = np.ascontiguousarray(B, dtype=dtype)
        n_rows = block_rows(r, dtype.itemsize)
        # each segment's columns of B (float64 and float32), gathered once for all its row blocks
        B_cols = [(B, B32) if cols is None else (B[:, cols], np.ascontiguousarray(B32[:, cols]))
                  for _, _, cols in self.segments]

        def rows(a, b):
            loss, gB, XH, gc, x_term = 0.0, np.zeros((r, p)), np.zeros((r, d)), np.zeros(p), 0.0
            K_rows = self._buffer(("K", a, b), (min(n_rows, b - a), r))
            right_of = {}                 # the one product's right-hand side for q outputs, reused
            for s, e, i in self._chunks(a, b, n_rows):
                n = e - s
                cols = self.segments[i][2]
                Bq, Bq32 = B_cols[i]
                q = Bq.shape[1]
                X_blk = self._points(s, e)
                K = np.matmul(X_blk, Zt, out=K_rows[:n])              # <x, z>
                rbf_transform_rows(K, self.x_norms[s:e], z_norms, gamma)      # k(x, z), in place
                KB = K @ Bq32
                at = (slice(s, e),) if cols is None else (self.order[s:e], cols)
                pred = KB + (c if cols is None else c[cols])
                R = prob.residuals(pred, *at)                        # float64, n x p
                beyond = prob.loss_beyond_residuals(pred, *at)
                if prob.weights is None:
                    loss += (0.5 * float(np.einsum("ij,ij->", R, R)) + beyond) / N
                else:
                    loss += 0.5 * float(np.einsum("ij,ij,ij->", R, R, prob.weights[s:e])) / N
                    R = R * prob.weights[s:e]
                Rn = -R / N                                          # dL/dpred
                out = slice(None) if cols is None else cols
                if q * (d + 1) <= ONE_PRODUCT_MAX_WIDTH_OVER_H * (2 * q + d):
                    # one product K' [Rn, X * Rn_1, ..., X * Rn_q] (class docstring)
                    right = right_of.get(q)
                    if right is None:      # zero columns pad the width (PRODUCT_WIDTH_STEP)
                        width = -(-q * (d + 1) // PRODUCT_WIDTH_STEP) * PRODUCT_WIDTH_STEP
                        right = right_of[q] = (self._buffer(("right", a, b, q), (K_rows.shape[0], width), zero=True),
                                               self._buffer(("product", a, b, q), (width, r)))
                    right, product = right
                    right[:n, :q] = Rn
                    for k in range(q):
                        np.multiply(X_blk, Rn[:, k:k + 1], out=right[:n, q + k * d:q + (k + 1) * d])
                    # as ([.]' K)': OpenBLAS runs it 5-10 % faster than K' [.] (one core, 1,024 x 868:
                    # 0.84 against 1.01 ms; 2 cores, 200000x20x2000, median of 6: 0.66-0.70 against 0.73-0.74 s)
                    M = np.matmul(right[:n].T, K, out=product).T
                    gB[:, out] += M[:, :q]
                    for k in range(q):
                        XH += Bq[:, k:k + 1] * M[:, q + k * d:q + (k + 1) * d]
                else:
                    # many outputs: H = (Rn B') * K itself, then H' X and K' Rn (2 q + d per entry, not q (d + 1))
                    Rn32 = Rn.astype(dtype)
                    H = Rn32 @ Bq32.T
                    H *= K
                    XH += H.T @ X_blk
                    gB[:, out] += K.T @ Rn32
                gc[out] += Rn.sum(axis=0)
                x_term += float(self.x_norms64[s:e] @ np.einsum("ik,ik->i", Rn, KB))
            return loss, gB, XH, gc, x_term

        parts = split_range(rows, N) if N * r >= SPLIT_MIN_ENTRIES else [rows(0, N)]
        loss, gB, XH, gc, x_term = (sum(part[i] for part in parts) for i in range(5))
        cols = np.einsum("jk,jk->j", B, gB)
        gZ = 2.0 * gamma * (XH - Z * cols[:, None])
        S = x_term + z_sq @ cols - 2.0 * float(np.einsum("ij,ij->", Z, XH))
        return loss, gZ, gB, gc, S
