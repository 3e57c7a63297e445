"""Run the ``leansvm`` command with SIGINT sent to itself at a named stage (the interrupt tests).

    python tests/sigint_at.py STAGE [leansvm arguments ...]

Runs the command exactly as the console script does (``leansvm.command.run_command``), after
arranging for ``os.kill(getpid(), SIGINT)`` at STAGE, so that no test depends on timing:

* ``none``: no signal (the control run);
* ``import``: when ``sklearn`` starts to be imported (the command is still importing);
* ``compile``: when numba starts compiling a function (cold cache);
* ``compile-twice``: two signals there: the second must stop the compilation itself;
* ``cache-write``: when numba writes a compiled function to its cache;
* ``compiled-call``: from inside a compiled solver call (a numba-compiled ``kill`` wrapped around
  the command's main compiled loop): Python sees the signal only when the call returns;
* ``progress``: inside the first progress step;
* ``write``: while the output file is being written.

The signal is sent once (the first time the stage is reached), except ``compile-twice``.
"""

import contextlib
import ctypes
import importlib
import os
import signal
import sys
import threading


def interrupt(times=1):
    for _ in range(times):
        os.kill(os.getpid(), signal.SIGINT)


class _Once:
    """Call ``interrupt`` the first time only."""

    def __init__(self, times=1):
        self.times, self.done = times, False

    def __call__(self):
        if not self.done:
            self.done = True
            interrupt(self.times)


def at_import(module="sklearn"):
    once = _Once()

    class Finder:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name == module:
                once()
            return None

    sys.meta_path.insert(0, Finder)


def at_numba_event(kind, times=1):
    """SIGINT as numba starts a ``kind`` event (registered before any leansvm code compiles, after
    leansvm's own listener, which a first use of a solver registers: its notice comes first, as in a
    user's process)."""
    from numba.core import event

    from leansvm.core import jit
    jit._listen()

    once = _Once(times)

    class Listener(event.Listener):
        def on_start(self, ev):
            once()

        def on_end(self, ev):
            pass

    event.register(kind, Listener())


def at_cache_write():
    from numba.core import caching

    once = _Once()
    real = caching.IndexDataCacheFile._save_data

    def save_data(self, name, data):
        once()
        return real(self, name, data)

    caching.IndexDataCacheFile._save_data = save_data


def in_compiled_calls():
    """Wrap the compiled loops the exact solvers call from Python in a compiled function that
    signals the process first: the signal arrives while the main thread runs machine code."""
    import numba

    libc = ctypes.CDLL(None)
    kill, getpid = libc.kill, libc.getpid
    kill.argtypes, kill.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    getpid.argtypes, getpid.restype = [], ctypes.c_int

    def signalling(compiled):
        @numba.njit
        def kill_then(*args):
            kill(getpid(), 2)
            return compiled(*args)

        # once per process, as every stage: two solver threads each entering the call before the
        # first signal has stopped them would otherwise send two (a second Ctrl-C)
        lock, sent = threading.Lock(), []

        def wrapper(*args):
            with lock:
                first = not sent
                sent.append(True)
            return kill_then(*args) if first else compiled(*args)
        return wrapper

    for module_name, name in (("leansvm.exact.box_cd", "_greedy_cd_cached"),
                              ("leansvm.exact.irwls", "run_chunks"),
                              ("leansvm.exact.irwls", "solve_chunk"),
                              ("leansvm.exact.smo_full", "smo_steps"),
                              ("leansvm.budget.bsgd", "_sgd_pass")):
        module = importlib.import_module(module_name)
        setattr(module, name, signalling(getattr(module, name)))


def in_progress():
    from leansvm import progress

    once = _Once()
    real = progress.Progress.update

    def update(self, n=1):
        once()
        return real(self, n)

    progress.Progress.update = update


def at_write():
    from leansvm import io

    once = _Once()
    real = io.atomic_write

    def atomic_write(*args, **kwargs):
        with real(*args, **kwargs) as f:
            once()
            yield f

    patched = contextlib.contextmanager(atomic_write)
    for module in (io, io.files, io.libsvm, io.native):      # every name the writers call it by
        module.atomic_write = patched


STAGES = {
    "none": lambda: None,
    "import": at_import,
    "compile": lambda: at_numba_event("numba:compile"),
    "compile-twice": lambda: at_numba_event("numba:compile", times=2),
    "cache-write": at_cache_write,
    "compiled-call": in_compiled_calls,
    "progress": in_progress,
    "write": at_write,
}

if __name__ == "__main__":
    stage, argv = sys.argv[1], sys.argv[2:]
    from leansvm.command import run_command   # standard library only: nothing heavy yet

    STAGES[stage]()
    sys.argv = ["leansvm"] + argv
    run_command()
