"""Compiled reads and writes of a row cache's slab (:class:`leansvm.core.kernels.KernelRowCache`):
rows restricted to columns, tiles copied into their slots, weighted sums of rows, and a request's
samples without repeats. Each releases the GIL, so the threads that share a cache's work run side
by side."""

from __future__ import annotations

import numpy as np

from leansvm.core.jit import njit


@njit(cache=True, nogil=True)
def gather_rows(slab, slots, cols, out, out_slots):
    """out[out_slots[r], k] = slab[slots[r], cols[k]]: cached rows restricted to columns, written
    straight into another cache's slots (no temporary, no second copy)."""
    for r in range(slots.size):
        row = slab[slots[r]]
        dst = out[out_slots[r]]
        for k in range(cols.size):
            dst[k] = row[cols[k]]


@njit(cache=True, nogil=True)
def scatter_tile(slab, slots, start, tile):
    """slab[slots[r], start:start + width] = tile[r]: a tile of rows copied into their slots
    without the GIL (NumPy's fancy assignment holds it, so threads filling one cache took turns)."""
    width = tile.shape[1]
    for r in range(slots.size):
        slab[slots[r], start:start + width] = tile[r]


@njit(cache=True, nogil=True)
def accumulate_rows(slab, slots, coef, cols, out):
    """out[k] += sum_r coef[r] slab[slots[r], cols[k]]."""
    for r in range(slots.size):
        c = coef[r]
        row = slab[slots[r]]
        for k in range(cols.size):
            out[k] += c * row[cols[k]]


@njit(cache=True, nogil=True)
def accumulate_whole_rows(slab, slots, coef, out):
    """out[k] += sum_r coef[r] slab[slots[r], k]: :func:`accumulate_rows` over every column in
    order, without the column gather (it vectorises; same operations in the same order)."""
    for r in range(slots.size):
        c = coef[r]
        row = slab[slots[r]]
        for k in range(out.size):
            out[k] += c * row[k]


@njit(cache=True, nogil=True)
def first_occurrences(idx) -> np.ndarray:
    """``idx`` without repeats, in order. A row requested twice in one call (the two variables of
    an SVR sample) must get one slot: a second slot would be an orphan whose eviction marks the
    sample as not cached while its live slot is still being read. Compiled: ``np.unique`` cost
    21 us a call, a fifth of a cache request's own time on letter's pairs."""
    order = np.argsort(idx, kind="mergesort")          # stable: equal samples in request order
    keep = np.ones(idx.size, dtype=np.bool_)
    for t in range(1, idx.size):
        if idx[order[t]] == idx[order[t - 1]]:
            keep[order[t]] = False
    return idx[keep]
