"""Memory for large working arrays (the kernel row cache's slab)."""

from __future__ import annotations

import importlib

import numpy as np

__all__ = ["page_backed_buffer"]


def _numpy_huge_page_switch():
    """NumPy's switch for its MADV_HUGEPAGE advice on large arrays (None where it has none)."""
    for module in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            return getattr(importlib.import_module(module), "_set_madvise_hugepage")
        except (ImportError, AttributeError):
            continue
    return None


def page_backed_buffer(size: int, dtype) -> np.ndarray:
    """An uninitialised 1-d array of ``size`` items, allocated without NumPy's huge-page advice.

    A row cache writes each slot once before reading it, so its first writes page the memory
    in. NumPy advises huge pages (MADV_HUGEPAGE) for large arrays; where the kernel then
    compacts memory on each fault (``transparent_hugepage/defrag = madvise``, as on this
    machine) the first write costs 2.3 s per GB against 0.39 s without the advice, which made
    ``SVC(cache_size=1000)`` slower than the default 200 MB on a9a (7.3 against 5.0 s)."""
    switch = _numpy_huge_page_switch()
    if switch is None:
        return np.empty(size, dtype=dtype)
    previous = switch(False)
    try:
        return np.empty(size, dtype=dtype)
    finally:
        switch(previous)
