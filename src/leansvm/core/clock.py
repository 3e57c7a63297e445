"""A clock of the solvers' work: wall time less numba's compilation.

numba compiles a function at its first call for each argument types (``cache=True`` keeps the machine
code for later processes; ``python -m leansvm.precompile`` builds it ahead). A time estimate scaled
from a measurement that included that compilation carries its one-time seconds into every size it
predicts. On a fresh 16-core machine, without the precompile step, the main job's search measured
44 s for its first round on 444 rows of synth-1M, mostly compilation, estimated 230 s for the next
round and stopped there, and the exact fit's trial at 40,000 rows took longer than on 2 warm cores.

:func:`work_time` is :func:`time.perf_counter` less the seconds spent compiling so far (numba's
``numba:compile`` events, counted in :mod:`leansvm.core.jit`; they fire only when machine code is
built, not when it is loaded from the cache): the difference of two readings is the work in between, the measure estimates scale.
Budgets and deadlines stay on the wall clock.
"""

from __future__ import annotations

import time

from leansvm.core.jit import compile_seconds

__all__ = ["compile_seconds", "work_time"]


def work_time() -> float:
    """:func:`time.perf_counter` less :func:`compile_seconds`: differences of two readings measure
    the work between them without the compilation."""
    return time.perf_counter() - compile_seconds()
