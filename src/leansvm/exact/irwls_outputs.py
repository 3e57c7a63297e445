"""The outputs f_i = sum_j y_j a_j (k_ij + offset) of the samples of a dual problem, as the chunked
IRWLS solver (:mod:`leansvm.exact.irwls`) and the C paths need them: from an expansion over the
samples that moved (the project's prediction engine, kernel values in float32 or float64), from
rows a shared cache holds, or updated from outputs known at another alpha.
"""

from __future__ import annotations

import numpy as np

from leansvm.core.expansion import KernelExpansion
from leansvm.core.kernels import KernelRowCache


def expansion_outputs(kernel, X_eval, X_src, coef, offset, dtype=np.float64):
    """sum_j coef_j (k(x_j, x) + offset) at every row x of X_eval, kernel values in ``dtype``
    (the row cache's: float32 rows as the chunks' own updates use) summed in float64.

    That is the plain-kernel expansion over X_src with intercept offset * sum_j coef_j,
    so the project's prediction engine computes it (blocked, memory-bounded).
    """
    expansion = KernelExpansion(X_src, coef, offset * float(np.sum(coef)), kernel)
    return expansion.decision_function(X_eval, dtype=dtype)[:, 0]


def checked_shared_rows(kernel_cache, X, kernel):
    """``kernel_cache`` as (cache, rows), checked; None when not given."""
    if kernel_cache is None:
        return None
    if isinstance(kernel_cache, KernelRowCache):
        cache, rows = kernel_cache, np.arange(X.shape[0])
    else:
        cache, rows = kernel_cache
    rows = np.asarray(rows, dtype=np.intp)
    if rows.shape != (X.shape[0],) or (rows.size and (rows.min() < 0 or rows.max() >= cache.n)):
        raise ValueError(f"kernel_cache rows must give a row of the cache (0 .. {cache.n - 1}) "
                         f"for each of the {X.shape[0]} samples")
    if cache.kernel != kernel:
        raise ValueError("kernel_cache was built for another kernel")
    return cache, rows


def sample_outputs(kernel, X, shared, eval_idx, src_idx, coef, offset, dtype=np.float64):
    """sum_j coef_j (k(x_src_j, x_eval_i) + offset): from the shared rows when given, else with
    kernel values in ``dtype`` (:func:`expansion_outputs`)."""
    if eval_idx.size == 0 or src_idx.size == 0:
        return np.zeros(eval_idx.size)
    if shared is None:
        return expansion_outputs(kernel, X[eval_idx], X[src_idx], coef, offset, dtype)
    cache, rows = shared
    return cache.outputs(rows[src_idx], coef, rows[eval_idx], offset)


def start_outputs(kernel, X, shared, A, y, alpha, alpha_init, initial_outputs, offset):
    """Outputs of the samples ``A`` at ``alpha`` from the known ``initial_outputs`` at ``alpha_init``:
    f + sum over the samples that moved of y_j (a_j - a_init_j) (k_ij + offset)."""
    n = y.size
    if alpha_init is None:
        raise ValueError("initial_outputs needs alpha_init (the point where the outputs were computed)")
    f0 = np.asarray(initial_outputs, dtype=np.float64)
    if f0.shape != (n,) or not np.all(np.isfinite(f0)):
        raise ValueError(f"initial_outputs must be {n} finite values, got shape {f0.shape}")
    a0 = np.asarray(alpha_init, dtype=np.float64)
    moved = np.flatnonzero(alpha != a0)
    f = f0[A].copy()
    if moved.size:
        f += sample_outputs(kernel, X, shared, A, moved, y[moved] * (alpha[moved] - a0[moved]), offset)
    return f
