"""Thread control shared by the solvers: one BLAS thread around small, latency-bound products, and
independent problems (one-vs-one pairs) solved in parallel threads that stop when abandoned."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

import numpy as np
from threadpoolctl import ThreadpoolController

from leansvm import interrupts

__all__ = ["one_blas_thread", "blas_is_single", "may_split", "can_split", "split_range", "run_parallel",
           "check_cancelled", "Cancelled", "SPLIT_MIN_ENTRIES", "at_most", "effective_jobs"]

#: seconds between two looks of the calling thread at its jobs (and at a pending Ctrl-C)
POLL_S = 0.05

_worker = threading.local()          # .cancel: the Event of the run_parallel call this thread serves


@functools.lru_cache(maxsize=1)
def _controller() -> ThreadpoolController:
    """One controller per process: building it scans the loaded libraries (milliseconds)."""
    return ThreadpoolController()


_single_blas = 0                     # depth of one_blas_thread blocks (any thread: parallel IRWLS jobs too)
_single_blas_limit = None            # threadpoolctl's limiter of the outermost block, which restores BLAS
_single_blas_lock = threading.Lock()


@contextlib.contextmanager
def one_blas_thread():
    """A context manager limiting BLAS to one thread (restored when the last block open in any thread ends).

    Products of a few rows (IRWLS chunks, SMO rows, small kernel blocks) finish
    before BLAS threads have started; on a loaded 2-core machine threads only
    add waiting (a 455 x 455 RBF block: 18.5 ms on 2 threads, 3.8 ms on 1; OpenBLAS's
    own threads in IRWLS's chunk loop: a9a 11.1 s against 5.2 s, magic 5.4 s against 1.2 s,
    ``benchmarks/exact/bench_irwls_threads.py``). Large products are split
    over leansvm's threads instead (:func:`blas_is_single`, ``kernels.inner_products``).

    The limit is process-wide, so the blocks of parallel jobs share one: each block restoring what
    it found would leave BLAS at one thread wherever two blocks overlap (the second finds one).
    OpenBLAS ignores a thread count set outside the main thread once its own threads run
    (threadpoolctl supports the main thread only), so the limit holds where the outermost block is
    the main thread's, as :func:`run_parallel`'s is.
    """
    global _single_blas, _single_blas_limit
    with _single_blas_lock:
        if _single_blas == 0:
            _single_blas_limit = _controller().limit(limits=1, user_api="blas")
        _single_blas += 1
    try:
        yield
    finally:
        with _single_blas_lock:
            _single_blas -= 1
            if _single_blas == 0:
                _single_blas_limit.restore_original_limits()
                _single_blas_limit = None


def blas_is_single() -> bool:
    """True inside :func:`one_blas_thread`: a product split over threads runs one BLAS thread each."""
    return _single_blas > 0


_cap = None                          # at_most's thread count while a block is open, else None


@contextlib.contextmanager
def at_most(n_jobs):
    """Every thread count of leansvm at most ``n_jobs`` (joblib's meaning: -1 every core, -2 all but
    one) while the block runs: the parallel problems (:func:`run_parallel`, joblib's ``Parallel`` through
    :func:`effective_jobs`), the split kernel blocks (:func:`split_range`) and BLAS. Process-wide: the main
    job (``fit_lean(n_jobs=...)``, ``--n-jobs``) opens it around all it runs. ``n_jobs`` -1 changes
    nothing."""
    from joblib import effective_n_jobs

    global _cap
    n = effective_n_jobs(n_jobs)
    if n_jobs == -1 or (os.cpu_count() or 1) <= n:
        yield
        return
    previous, _cap = _cap, n if _cap is None else min(_cap, n)
    limiter = _controller().limit(limits=_cap, user_api="blas")
    try:
        if _cap == 1:
            with _single_thread():
                yield
        else:
            yield
    finally:
        limiter.restore_original_limits()
        _cap = previous


def effective_jobs(n_jobs) -> int:
    """The threads ``n_jobs`` asks for (joblib's ``effective_n_jobs``), at most :func:`at_most`'s."""
    from joblib import effective_n_jobs

    n = effective_n_jobs(n_jobs)
    return n if _cap is None else min(n, _cap)


def may_split() -> bool:
    """False in the thread of a ``run_parallel(jobs, n_jobs=1)`` call, or under ``at_most(1)``: the
    caller asked for one thread, so large kernel blocks are not split over the thread pool either."""
    return not getattr(_worker, "single", False) and _cap != 1


@contextlib.contextmanager
def _single_thread():
    """One thread for what runs in this thread: BLAS limited, no pool splits (:func:`may_split`)."""
    previous = getattr(_worker, "single", False)
    _worker.single = True
    try:
        with one_blas_thread():
            yield
    finally:
        _worker.single = previous


#: leansvm's own threads for splitting one large piece of work (a kernel block, a gradient) by rows
#: below this many entries (of a kernel block, a product) a thread hand-off costs more than it saves
SPLIT_MIN_ENTRIES = 1 << 18
_POOL = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="leansvm-split") \
    if (os.cpu_count() or 1) > 1 else None


def can_split() -> bool:
    """Whether :func:`split_range` would use more than one thread here: more than one core, not a
    one-thread run (:func:`may_split`), and not already inside a split (its pieces run inline)."""
    return _POOL is not None and may_split() and not getattr(_worker, "splitting", False)


def split_range(work, n):
    """``[work(a, b) for each range]`` over contiguous ranges covering [0, n), one per pool thread when
    :func:`can_split` (else one range, here). ``work`` must release the GIL to gain (NumPy's large
    array operations and BLAS do)."""
    if not can_split() or n < 2:
        return [work(0, n)]

    def piece(a, b):
        _worker.splitting = True
        try:
            return work(a, b)
        finally:
            _worker.splitting = False

    pieces = _POOL._max_workers if _cap is None else min(_POOL._max_workers, _cap)
    bounds = np.linspace(0, n, pieces + 1).astype(int)
    jobs = [_POOL.submit(piece, a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    return [job.result() for job in jobs]


class Cancelled(Exception):
    """A job of :func:`run_parallel` stopped because its caller gave the run up."""


def check_cancelled():
    """Raise :class:`Cancelled` in a worker of :func:`run_parallel` whose run was given up (the
    caller's Ctrl-C, another job's error); in the command's main thread, raise a Ctrl-C it
    recorded without raising (:mod:`leansvm.interrupts`); a no-op anywhere else. Solvers call it once per
    iteration (an IRWLS chunk: milliseconds), so an abandoned job stops within one."""
    cancel = getattr(_worker, "cancel", None)
    if cancel is not None:
        if cancel.is_set() or interrupts.pending():
            raise Cancelled      # interrupts.pending(): the command's Ctrl-C, wherever it was raised
    elif interrupts.pending() and threading.current_thread() is threading.main_thread():
        interrupts.check()       # a Ctrl-C the command recorded without raising (interrupts module)


def run_parallel(jobs, n_jobs):
    """``[fn(*args) for fn, args in jobs]``, in up to ``n_jobs`` threads (joblib's meaning: None
    is 1, -1 every core). ``n_jobs=1`` is one thread throughout: BLAS and the kernel blocks the
    pool would split (:func:`may_split`) included, for one-thread comparisons.

    The jobs are the parallelism, so BLAS runs one thread meanwhile (two jobs with two BLAS
    threads each: satimage 0.27 s against 0.14 s one job at a time, ``benchmarks/exact/bench_irwls.py``). A Ctrl-C in the calling thread, or an error in a
    job, returns at once: jobs not started are dropped and running ones stop at their next
    :func:`check_cancelled` (the numba loops release the GIL, so the jobs really run side by side).
    """
    if n_jobs == 1 or _cap == 1:          # one thread asked for: BLAS and kernel blocks included
        with _single_thread():
            return [fn(*args) for fn, args in jobs]
    n_threads = min(len(jobs), effective_jobs(n_jobs))
    if n_threads <= 1:
        return [fn(*args) for fn, args in jobs]
    cancel = threading.Event()

    def serve(fn, args):
        _worker.cancel = cancel
        try:
            return fn(*args)
        finally:
            _worker.cancel = None

    pool = ThreadPoolExecutor(n_threads, thread_name_prefix="leansvm-job")
    try:
        with one_blas_thread():
            futures = [pool.submit(serve, fn, args) for fn, args in jobs]
            # short waits: a SIGINT the OS hands to a worker thread does not wake a blocked wait;
            # Python raises it in this thread at the next bytecode, so there must be one soon
            while True:
                done, running = wait(futures, timeout=POLL_S, return_when=FIRST_EXCEPTION)
                failed = [future.exception() for future in done if future.exception() is not None]
                if failed:
                    raise failed[0]
                if not running:
                    return [future.result() for future in futures]
    except BaseException:
        cancel.set()
        raise
    finally:
        pool.shutdown(wait=not cancel.is_set(), cancel_futures=True)
