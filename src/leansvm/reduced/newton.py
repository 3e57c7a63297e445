"""The coefficients of a kernel expansion with its vectors fixed, by Newton's method on every row.

With the vectors Z fixed, the reduced model's objective (:mod:`leansvm.reduced.reduced_svm`) is, per
output and times the rows N,

    P(beta, b) = 1/(2C) ||beta||^2 + sum_i h(u_i),      o = K beta + b,   K = k(X, Z)  (N x r),

convex and piecewise quadratic: for classification u_i = 1 - f_i o_i and h the smoothed hinge (u^2 / 2
up to ``huber`` = delta, delta u - delta^2 / 2 beyond, 0 below 0); for regression u_i = f_i - o_i and
h = u^2 / 2 on every row. With the rows A in the quadratic zone and L beyond it held fixed, its
minimiser solves (Chapelle, "Training a Support Vector Machine in the Primal", Neural Computation
19(5), 2007, eq. 11; Keerthi, Chapelle & DeCoste, JMLR 7, 2006, Sec. 3: Newton on the coefficients
of the chosen basis)

    [I/C + K_A'K_A   K_A'1] [beta]   [K_A'f_A + delta K_L'f_L]
    [1'K_A           |A|  ] [b   ] = [sum f_A + delta sum f_L]

(on A, h'(u) du/do = o_i - f_i as f_i^2 = 1). A Newton step goes there, with a backtracking line search
on P; where A and L no longer change it lands on the minimiser. Every term is a sum over rows, so it is
computed in row blocks (memory: one block and the r x r system) or summed over Dask workers' blocks. A
step costs one pass for the system, |A| r^2 flops for the Gram K_A'K_A (in the blocks' dtype, summed in
float64), and one pass per line-search trial for P, N r (d + p).

Why: L-BFGS on the vectors and the coefficients together moves the coefficients slowly where there
are many of them. On synth-200k (2,000 vectors, C = 1, 30 s of L-BFGS) the fit tested 0.9250; Newton
steps on every row with its vectors fixed (a first, ad hoc version: 8 s more) took it to 0.9299, the
exact SVC's 0.9305 within 0.1 point. The same steps on 50,000 of the rows reached 0.9255: the
coefficients want every row. In the estimator, 30 s in all (L-BFGS on two subsample phases, then the
steps) test 0.9294-0.9318.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from leansvm.compression.rbf_objective import block_rows
from leansvm.core.kernels import rbf_transform_rows, squared_row_norms
from leansvm.core.threads import SPLIT_MIN_ENTRIES, one_blas_thread, split_range


#: a thread gathers the rows of the quadratic zone into buffers of at most this many bytes (all outputs)
#: and adds each buffer's Gram at once (NumPy's W'W: BLAS syrk without the GIL), rather than updating the
#: r x r Gram (16 MB at 2,000 vectors) per block of 1,024 rows through SciPy's syrk, which holds the GIL
#: so that the threads took turns: synth-200k, 2,000 vectors, 94,565 active rows, 2 cores: 1.9 s a
#: system against 3.8 s
GRAM_BUFFER_BYTES = 64 * 2**20


@dataclass
class CoefficientSums:
    """Per output (p of them): the loss sum_i h(u_i) and the rows in the quadratic zone |A| (of ``rows``); with the
    system, also K_A'K_A (p x r x r), K_A'1 and the right-hand side of the module docstring's system."""

    loss: np.ndarray
    active: np.ndarray
    rows: int
    gram: np.ndarray | None = None
    ones: np.ndarray | None = None
    rhs: np.ndarray | None = None
    rhs_intercept: np.ndarray | None = None

    def __add__(self, other: "CoefficientSums") -> "CoefficientSums":
        def add(a, b):
            return None if a is None else a + b
        return CoefficientSums(self.loss + other.loss, self.active + other.active, self.rows + other.rows,
                               add(self.gram, other.gram),
                               add(self.ones, other.ones), add(self.rhs, other.rhs),
                               add(self.rhs_intercept, other.rhs_intercept))


class KernelRows:
    """Rows X with fitted outputs F (N x p: +-1 per class, or the regression targets), stored once in
    the row blocks' dtype with their squared norms, and :class:`CoefficientSums` over them for an RBF
    expansion. The rows go through in cache-sized blocks (compression's
    :func:`~leansvm.compression.rbf_objective.block_rows`: one product and one compiled pass make a
    block of kernel rows, consumed while in cache), split over leansvm's threads with one BLAS thread
    each; each thread sums its own float32 K_A'K_A. On synth-200k (2,000 vectors, 2 cores) a pass of
    the loss takes 0.13 s; through ``Kernel.blocks`` (float32 blocks of the default size, one thread for
    the exp) it took 0.99 s."""

    def __init__(self, X, F, huber, dtype=np.float32):
        self.dtype = np.dtype(dtype)
        self.sparse = sp.issparse(X)
        self.X = X.astype(self.dtype) if self.sparse else np.ascontiguousarray(X, dtype=self.dtype)
        self.norms = squared_row_norms(X).astype(self.dtype)
        self.F = np.asarray(F, dtype=np.float64)
        self.huber = huber

    def sums(self, Z, B, c, gamma, system=True) -> CoefficientSums:
        """:class:`CoefficientSums` over these rows at coefficients B (r x p), intercepts c (p,), RBF
        ``gamma``; ``huber``: the smoothed hinge's delta (classification), or None for the squared
        error on every row (regression)."""
        N, (r, p) = self.X.shape[0], B.shape
        Zt = np.ascontiguousarray(np.asarray(Z).T, dtype=self.dtype)
        z_norms = np.einsum("ij,ij->i", Z, Z).astype(self.dtype)
        Bd = np.ascontiguousarray(B, dtype=self.dtype)
        n_rows = block_rows(r, self.dtype.itemsize)
        huber = self.huber

        gram_rows = max(n_rows, GRAM_BUFFER_BYTES // (p * r * self.dtype.itemsize))

        def rows(a, b):
            loss, active = np.zeros(p), np.zeros(p)
            gram = np.zeros((p, r, r), dtype=self.dtype) if system else None
            ones, rhs, rhs_intercept = np.zeros((p, r)), np.zeros((p, r)), np.zeros(p)
            K_rows = np.empty((min(n_rows, b - a), r), dtype=self.dtype)
            waiting = [np.empty((gram_rows, r), dtype=self.dtype) for _ in range(p)] if system else None
            filled = [0] * p

            def add_gram(j):      # NumPy's W'W is BLAS syrk, run without the GIL (SciPy's syrk holds it)
                W = waiting[j][:filled[j]]
                gram[j] += W.T @ W
                filled[j] = 0
            for s in range(a, b, n_rows):
                e = min(s + n_rows, b)
                X_blk = self.X[s:e].toarray() if self.sparse else self.X[s:e]
                K = np.matmul(X_blk, Zt, out=K_rows[:e - s])
                rbf_transform_rows(K, self.norms[s:e], z_norms, gamma)
                Fb = self.F[s:e]
                O = K @ Bd + c
                if huber is None:
                    U = Fb - O
                    quad, weight = np.ones(U.shape, dtype=bool), np.ones(U.shape)
                    loss += 0.5 * np.einsum("ij,ij->j", U, U)
                else:
                    U = 1.0 - Fb * O
                    quad, beyond = (U > 0) & (U <= huber), U > huber
                    loss += 0.5 * np.where(quad, U * U, 0.0).sum(axis=0) \
                        + np.where(beyond, huber * U - 0.5 * huber ** 2, 0.0).sum(axis=0)
                    weight = quad + huber * beyond
                active += quad.sum(axis=0)
                if not system:
                    continue
                fw = (Fb * weight).astype(self.dtype)
                rhs += (fw.T @ K)
                rhs_intercept += fw.sum(axis=0)
                for j in range(p):
                    KA = K if quad[:, j].all() else K[quad[:, j]]
                    ones[j] += KA.sum(axis=0)
                    if filled[j] + KA.shape[0] > gram_rows:
                        add_gram(j)
                    waiting[j][filled[j]:filled[j] + KA.shape[0]] = KA
                    filled[j] += KA.shape[0]
            for j in range(p if system else 0):
                if filled[j]:
                    add_gram(j)
            return CoefficientSums(loss, active, b - a, gram, ones, rhs, rhs_intercept)

        with one_blas_thread():
            parts = split_range(rows, N) if N * r >= SPLIT_MIN_ENTRIES else [rows(0, N)]
        total = sum(parts[1:], parts[0])
        if system:
            total.gram = total.gram.astype(np.float64)
        return total


def newton_point(sums: CoefficientSums, C: float, j: int) -> tuple[np.ndarray, float]:
    """(beta, b) solving output j's system (module docstring) with its A and L held fixed."""
    r = sums.gram.shape[1]
    H = np.empty((r + 1, r + 1))
    H[:r, :r] = sums.gram[j] + np.eye(r) / C
    H[:r, r] = H[r, :r] = sums.ones[j]
    H[r, r] = sums.active[j] + 1e-12
    rhs = np.append(sums.rhs[j], sums.rhs_intercept[j])
    try:
        sol = np.linalg.solve(H, rhs)
    except np.linalg.LinAlgError:
        sol = np.linalg.lstsq(H, rhs, rcond=None)[0]
    return sol[:r], float(sol[r])


def newton_coefficients(sums, B, c, C: float, max_steps: int, tol: float = 1e-3, ends: float | None = None,
                        halvings: int = 20):
    """Newton steps on the coefficients (module docstring) from (B, c); returns (B, c, steps taken).

    ``sums(B, c, system)``: :class:`CoefficientSums` over every row (in row blocks, or over Dask
    workers). A step is taken per output where it lowers that output's P (line search: halve the step
    up to ``halvings`` times); the steps stop after ``max_steps``, when no output's P falls by more than
    ``tol`` relatively, or where the next system would end after ``ends`` (``time.perf_counter``'s
    clock; the last system's seconds as its forecast)."""
    B, c = np.array(B, dtype=np.float64), np.array(c, dtype=np.float64)
    p = B.shape[1]

    def objective(s, B):
        return s.loss + 0.5 / C * np.einsum("ij,ij->j", B, B)

    steps = 0
    for steps in range(max_steps):
        tick = time.perf_counter()
        now = sums(B, c, True)
        system_seconds = time.perf_counter() - tick
        before = objective(now, B)
        target = [newton_point(now, C, j) for j in range(p)]
        dB = np.column_stack([beta for beta, _ in target]) - B
        dc = np.array([b for _, b in target]) - c
        t, after = np.ones(p), before.copy()
        for _ in range(halvings):
            trial = objective(sums(B + t * dB, c + t * dc, False), B + t * dB)
            worse = trial > before
            after = np.where(worse, after, trial)
            if not worse.any():
                break
            t[worse] *= 0.5
        else:
            t[worse] = 0.0
        B, c = B + t * dB, c + t * dc
        if np.all((before - after) <= tol * np.maximum(np.abs(before), 1e-300)):
            return B, c, steps + 1
        if ends is not None and time.perf_counter() + system_seconds > ends:
            return B, c, steps + 1
    return B, c, steps + 1 if max_steps else 0
