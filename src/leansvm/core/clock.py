"""A clock of the solvers' work: wall time less numba's compilation.

numba compiles a function at its first call for each argument types (``cache=True`` keeps the machine
code for later processes; ``python -m leansvm.precompile`` builds it ahead). A time estimate scaled
from a measurement that included that compilation carries its one-time seconds into every size it
predicts. On a fresh 16-core machine, without the precompile step, the main job's search measured
44 s for its first round on 444 rows of synth-1M, mostly compilation, estimated 230 s for the next
round and stopped there, and the exact fit's trial at 40,000 rows took longer than on 2 warm cores.

:func:`work_time` is :func:`time.perf_counter` less the seconds spent compiling so far (numba's
``numba:compile`` events, which fire only when machine code is built, not when it is loaded from
the cache): the difference of two readings is the work in between, the measure estimates scale.
Budgets and deadlines stay on the wall clock.
"""

from __future__ import annotations

import threading
import time

from numba.core import event


class _CompileTimer(event.Listener):
    """Seconds between the outermost start and end of ``numba:compile`` events, per thread (a
    function compiles the jitted functions it calls inside its own event), summed over threads."""

    def __init__(self):
        self.total = 0.0
        self._lock = threading.Lock()
        self._local = threading.local()

    def on_start(self, ev):
        depth = getattr(self._local, "depth", 0)
        if depth == 0:
            self._local.started = time.perf_counter()
        self._local.depth = depth + 1

    def on_end(self, ev):
        self._local.depth -= 1
        if self._local.depth == 0:
            with self._lock:
                self.total += time.perf_counter() - self._local.started


_COMPILING = _CompileTimer()
event.register("numba:compile", _COMPILING)


def compile_seconds() -> float:
    """Seconds this process has spent compiling numba functions (finished compilations)."""
    return _COMPILING.total


def work_time() -> float:
    """:func:`time.perf_counter` less :func:`compile_seconds`: differences of two readings measure
    the work between them without the compilation."""
    return time.perf_counter() - _COMPILING.total
