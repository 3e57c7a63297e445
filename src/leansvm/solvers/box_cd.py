r"""Greedy coordinate descent for the SVM dual without an equality constraint (box QP).

    min_a  1/2 a'Qa - 1'a,   0 <= a_i <= C_i,   Q_ij = y_i y_j (k(x_i, x_j) + offset)

(offset 1: the augmented bias of Ogawa et al. / liblinear; 0: no bias). With
no equality constraint one variable can move alone, so each iteration is
LIBSVM's working-set step with a single index: pick the coordinate with the
largest projected gradient PG_i (Gauss-Southwell), take the exact clipped
Newton step a_i <- clip(a_i - g_i / Q_ii, 0, C_i), and update the gradient
g = Qa - 1 with one kernel row. Stopping rule: max PG - min PG <= tol
(the two-sided rule of :func:`irwls.box_violation`, LIBSVM's m - M).

Rows are computed inside the compiled loop (dense X; linear, poly, rbf,
sigmoid) and kept in a FIFO row cache bounded by ``cache_size`` MB. The
solver works only on the active samples: samples fixed at 0 or at C_i (safe
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

from ..kernels import DEFAULT_BLOCK_MB, Kernel, squared_row_norms
from ..multiclass import BinaryFit

_KERNEL_CODES = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3}


@numba.njit(cache=True)
def _kernel_row(X, norms, i, code, gamma, coef0, degree, offset, out):
    n, d = X.shape
    for j in range(n):
        dot = 0.0
        for k in range(d):
            dot += X[i, k] * X[j, k]
        if code == 0:
            v = dot
        elif code == 2:
            v = np.exp(-gamma * max(norms[i] + norms[j] - 2.0 * dot, 0.0))
        elif code == 1:
            v = (gamma * dot + coef0) ** degree
        else:
            v = np.tanh(gamma * dot + coef0)
        out[j] = v + offset


@numba.njit(cache=True)
def _greedy_cd(X, norms, y, upper, alpha, grad, diag, code, gamma, coef0, degree, offset,
               tol, max_iter, cache_rows):
    n = y.size
    slot_of = np.full(n, -1, dtype=np.int64)
    owner = np.full(cache_rows, -1, dtype=np.int64)
    rows = np.empty((cache_rows, n))
    next_slot = 0
    gap = np.inf
    it = 0
    for it in range(max_iter):
        pg_min = 0.0
        pg_max = 0.0
        best = -1
        best_score = 0.0
        for j in range(n):
            g = grad[j]
            if alpha[j] <= 0.0:
                pg = min(g, 0.0)
            elif alpha[j] >= upper[j]:
                pg = max(g, 0.0)
            else:
                pg = g
            if pg < pg_min:
                pg_min = pg
            if pg > pg_max:
                pg_max = pg
            score = pg * pg / diag[j]
            if score > best_score:
                best_score = score
                best = j
        gap = pg_max - pg_min
        if gap <= tol or best < 0:
            return it, gap
        i = best
        new = min(max(alpha[i] - grad[i] / diag[i], 0.0), upper[i])
        delta = new - alpha[i]
        if delta == 0.0:
            return it, gap
        alpha[i] = new
        s = slot_of[i]
        if s < 0:
            s = next_slot
            if owner[s] >= 0:
                slot_of[owner[s]] = -1
            owner[s] = i
            slot_of[i] = s
            next_slot = (next_slot + 1) % cache_rows
            _kernel_row(X, norms, i, code, gamma, coef0, degree, offset, rows[s])
        row = rows[s]
        step = delta * y[i]
        for j in range(n):
            grad[j] += step * y[j] * row[j]
    return max_iter, gap


def _outputs(kernel, X_rows, X_cols, coef, offset, max_mb=DEFAULT_BLOCK_MB):
    """sum_j coef_j (k(x_i, x_j) + offset) for every row, blocked."""
    out = np.zeros(X_rows.shape[0])
    if coef.size == 0 or X_rows.shape[0] == 0:
        return out
    for start, stop, K in kernel.blocks(X_rows, X_cols, max_mb=max_mb):
        out[start:stop] = K @ coef + offset * coef.sum()
    return out


def solve_box_cd(X, y, C, kernel: Kernel, *, tol=1e-3, bias="augmented", alpha_init=None,
                 fixed_at_zero=None, fixed_at_C=None, cache_size=200.0, max_iter=-1) -> BinaryFit:
    """Solve the box-constrained SVM dual by greedy coordinate descent (module docstring).

    Same contract as ``solve_irwls`` for ``bias`` in {'augmented', 'none'}:
    per-sample bounds ``C``, warm start ``alpha_init``, screened samples held
    at 0 / C_i. Returns a :class:`BinaryFit` (intercept = sum_i y_i a_i for
    the augmented bias, so the plain-kernel expansion gives the same f).
    """
    if bias not in ("augmented", "none"):
        raise ValueError(f"solve_box_cd solves the box QP: bias must be 'augmented' or 'none', got {bias!r}")
    offset = 1.0 if bias == "augmented" else 0.0
    y = np.asarray(y, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    n = y.size
    fixed0 = np.zeros(n, bool) if fixed_at_zero is None else np.asarray(fixed_at_zero, bool)
    fixedC = np.zeros(n, bool) if fixed_at_C is None else np.asarray(fixed_at_C, bool)
    if fixed0.shape != (n,) or fixedC.shape != (n,) or (fixed0 & fixedC).any():
        raise ValueError("fixed_at_zero / fixed_at_C must be disjoint boolean masks of length n")
    start = time.perf_counter()
    Xd = X.toarray() if sp.issparse(X) else np.ascontiguousarray(X, dtype=np.float64)
    active = ~(fixed0 | fixedC)
    alpha = np.where(fixedC, C, 0.0)
    if alpha_init is not None:
        alpha_init = np.asarray(alpha_init, dtype=np.float64)
        if alpha_init.shape != (n,) or not np.all(np.isfinite(alpha_init)):
            raise ValueError(f"alpha_init must be {n} finite values")
        alpha[active] = np.clip(alpha_init[active], 0.0, C[active])
    A = np.flatnonzero(active)
    nz = np.flatnonzero(alpha)
    coef = y[nz] * alpha[nz]
    f_A = _outputs(kernel, Xd[A], Xd[nz], coef, offset)
    grad = y[A] * f_A - 1.0
    XA = np.ascontiguousarray(Xd[A])
    normsA = squared_row_norms(XA)
    diag = np.maximum(kernel.diagonal(XA) + offset, 1e-12)
    limit = int(max_iter) if max_iter and max_iter > 0 else 100 * max(n, 1000) + 100_000
    cache_rows = int(max(2, min(A.size, cache_size * 2**20 // max(8 * A.size, 1))))
    aA = alpha[A].copy()
    code = _KERNEL_CODES[kernel.name]
    n_iter, gap = _greedy_cd(XA, normsA, y[A], C[A], aA, grad, diag, code, float(kernel.gamma),
                             float(kernel.coef0), float(kernel.degree), offset, float(tol), limit,
                             cache_rows) if A.size else (0, 0.0)
    converged = gap <= tol
    if not converged:
        warnings.warn(f"box coordinate descent stopped after {n_iter} iterations with violation "
                      f"{gap:.3e} > tol={tol}", ConvergenceWarning, stacklevel=2)
    alpha[A] = aA
    # objective: sum_i a_i (y_i f_i / 2 - 1); y_i f_i = g_i + 1 on the active set
    objective = float(aA @ ((grad + 1.0) / 2 - 1.0)) if A.size else 0.0
    at_C = np.flatnonzero(fixedC)
    if at_C.size:
        nz = np.flatnonzero(alpha)
        f_C = _outputs(kernel, Xd[at_C], Xd[nz], y[nz] * alpha[nz], offset)
        objective += float(alpha[at_C] @ (y[at_C] * f_C / 2 - 1.0))
    return BinaryFit(alpha=alpha, intercept=offset * float(y @ alpha), dual_objective=objective,
                     n_iter=int(n_iter), converged=bool(converged),
                     stats={"violation": float(gap), "n_active": int(A.size), "active": A,
                            "active_margins": grad + 1.0,
                            "seconds": time.perf_counter() - start})
