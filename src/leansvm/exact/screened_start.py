"""The starting point of a box-constrained dual with screened samples (shared by every solver)."""

from __future__ import annotations

import numpy as np

__all__ = ["screened_start"]


def _mask(mask, n, name):
    if mask is None:
        return np.zeros(n, dtype=bool)
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != (n,):
        raise ValueError(f"{name} must be a boolean mask of length {n}, got shape {mask.shape}")
    return mask


def screened_start(C, alpha_init=None, fixed_at_zero=None, fixed_at_C=None):
    """(fixed at 0, fixed at C, starting alpha) for 0 <= a <= C with safely screened samples.

    Samples proven in R (``fixed_at_zero``) start and stay at 0, those proven in L
    (``fixed_at_C``) at C_i; the others start at ``alpha_init`` clipped to the box
    (0 without it). Masks of the wrong length, overlapping masks and a non-finite
    or misshapen ``alpha_init`` are ValueErrors.
    """
    n = C.size
    fixed0 = _mask(fixed_at_zero, n, "fixed_at_zero")
    fixedC = _mask(fixed_at_C, n, "fixed_at_C")
    if (fixed0 & fixedC).any():
        raise ValueError("a sample cannot be fixed both at 0 and at C")
    alpha = np.where(fixedC, C, 0.0)
    if alpha_init is not None:
        alpha_init = np.asarray(alpha_init, dtype=np.float64)
        if alpha_init.shape != (n,) or not np.all(np.isfinite(alpha_init)):
            raise ValueError(f"alpha_init must be {n} finite values, got shape {alpha_init.shape}")
        free = ~(fixed0 | fixedC)
        alpha[free] = np.clip(alpha_init[free], 0.0, C[free])
    return fixed0, fixedC, alpha
