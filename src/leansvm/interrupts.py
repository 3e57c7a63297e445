"""Ctrl-C in the ``leansvm`` command: one recorded interrupt that cannot be lost.

Python raises ``KeyboardInterrupt`` at whatever bytecode runs when SIGINT
arrives. Three places in a command cannot take it:

* numba's compiler (and its cache loads and writes): an exception there can
  leave a half-built library behind (``RuntimeError: no compiled object yet
  for <Library ...>`` on the next call) -- a wrong error for a Ctrl-C;
* a callback from C (numba writes its cache through ctypes callbacks): Python
  reports the exception as "unraisable", prints it and the work runs on;
* the imports before any handler of ours exists: a traceback, death by signal.

:func:`handled` (around every command; :func:`leansvm.command.run_command` installs it before
the heavy imports) therefore makes SIGINT *record* the interrupt first:

1. The handler counts the Ctrl-C. Outside a numba compilation it raises
   ``KeyboardInterrupt`` at once (plain Python and NumPy code stop cleanly),
   except inside a callback of compiled code (:func:`_in_numba_callback`),
   where it only records it: the solvers' next :func:`check` raises it.
   Inside one (numba's global compiler lock held by the main thread, seen
   through numba's ``numba:compiler_lock`` events) the first Ctrl-C waits:
   the compilation finishes, its cache entry is written, and the raise
   happens as the lock is released. A second Ctrl-C raises at once, wherever.
2. A ``KeyboardInterrupt`` that Python drops (unraisable) is not printed; the
   interrupt is still recorded, and :func:`check` -- called by every progress
   step and between the stages of a command -- raises it again.
3. The command reports an error raised while an interrupt is recorded as the
   interrupt (status 130), and a command that got to its end with an
   interrupt recorded as well.

Library use (no :func:`handled` block) is untouched: Python's own handler,
:func:`check` a no-op. This module imports only the standard library at load
time, so that the command can install the handler before NumPy and numba.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading

__all__ = ["handled", "check", "pending", "active", "add_context", "message", "report"]

_ctrl_c = 0                  # Ctrl-C received inside the current handled() block
_deferred = False            # a first Ctrl-C waits for the end of a numba compilation
_compiling = 0               # depth of numba's compiler lock held by the main thread
_active = 0                  # nesting depth of handled()


def active() -> bool:
    """True inside :func:`handled` (the ``leansvm`` command)."""
    return _active > 0


def pending() -> bool:
    """True when a Ctrl-C was received inside :func:`handled`."""
    return _ctrl_c > 0


def check():
    """Raise ``KeyboardInterrupt`` when a Ctrl-C was received: a safe point for it (never inside
    a numba compilation, where it waits for the compiler lock's release)."""
    if _ctrl_c and not _compiling:
        raise KeyboardInterrupt


def _in_numba_callback(frame) -> bool:
    """Whether Python runs a callback of numba-compiled code: boxing an array it returns, the
    compiled code calls ``numba.core.serialize._numba_unpickle`` for the array's type. An
    exception raised there is lost (a SystemError) and the compiled code reads a null result:
    the process dies (measured: SIGSEGV on a Ctrl-C as the IRWLS chunk loop returned)."""
    depth = 0
    while frame is not None and depth < 8:
        if frame.f_code.co_name == "_numba_unpickle":
            return True
        frame, depth = frame.f_back, depth + 1
    return False


def _on_sigint(signum, frame):
    global _ctrl_c, _deferred
    _ctrl_c += 1
    if _in_numba_callback(frame):
        return                           # recorded: check() raises it, the solvers call it per chunk
    if _ctrl_c == 1 and _compiling > 0:
        _deferred = True                 # raised when numba releases its compiler lock
        return
    _deferred = False
    raise KeyboardInterrupt


def _compile_listener():
    """A numba event listener tracking the main thread's hold of the global compiler lock; as
    the outermost hold ends it raises a Ctrl-C that waited for it. None without numba."""
    try:
        from numba.core import event
    except ImportError:                                  # pragma: no cover - numba is a dependency
        return None, None

    class CompilerLockListener(event.Listener):
        def on_start(self, ev):
            global _compiling
            if threading.current_thread() is threading.main_thread():
                _compiling += 1

        def on_end(self, ev):
            global _compiling, _deferred
            if threading.current_thread() is not threading.main_thread():
                return
            _compiling -= 1
            if _compiling == 0 and _deferred:
                _deferred = False
                raise KeyboardInterrupt      # the lock is released; the compiled function is whole

    return event, CompilerLockListener()


def _quiet_unraisable(previous):
    def hook(unraisable):
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and _ctrl_c:
            return                               # recorded already: check() raises it again
        previous(unraisable)
    return hook


@contextlib.contextmanager
def handled(leave=None):
    """Within the block, SIGINT is recorded and raised as described in the module docstring.

    Only the outermost block of the main thread installs anything; elsewhere it is a no-op, and
    so is a block where SIGINT is ignored (a job started in the background by a shell script
    ignores the terminal's Ctrl-C; Python keeps that, and so does the command). On leaving it,
    SIGINT gets ``leave`` (default: the handler it had before)."""
    global _active, _ctrl_c, _deferred, _compiling
    if _active or threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:   # ignored by the parent (a `cmd &`)
        _active += 1
        try:
            yield
        finally:
            _active -= 1
        return
    previous_handler = signal.signal(signal.SIGINT, _on_sigint)
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _quiet_unraisable(previous_hook)
    _active, _ctrl_c, _deferred, _compiling = 1, 0, False, 0
    event = listener = None
    try:
        event, listener = _compile_listener()     # imports numba: under the handler already
        if listener is not None:
            event.register("numba:compiler_lock", listener)
        yield
    finally:
        if listener is not None:
            event.unregister("numba:compiler_lock", listener)
        sys.unraisablehook = previous_hook
        signal.signal(signal.SIGINT, previous_handler if leave is None else leave)
        _active, _ctrl_c, _deferred, _compiling = 0, 0, False, 0


# -- one message line -------------------------------------------------------------------
def add_context(exc: BaseException, where: str):
    """Record on a ``KeyboardInterrupt`` where it stopped (``"svm path after 2/5 fits in 3 s"``);
    the command prints every such note, innermost first, on its one message line."""
    notes = getattr(exc, "leansvm_context", None)
    if notes is None:
        notes = []
        try:
            exc.leansvm_context = notes
        except AttributeError:                 # pragma: no cover - exceptions take attributes
            return
    notes.append(where)


def message(exc: BaseException | None = None) -> str:
    """``leansvm: interrupted (Ctrl-C)``, with where it stopped when the exception says."""
    notes = getattr(exc, "leansvm_context", None) or []
    return "leansvm: interrupted (Ctrl-C)" + (": " + "; ".join(notes) if notes else "")


def report(exc: BaseException | None = None) -> int:
    """Print the one message line of an interrupted command; its exit status, 130 (128 + SIGINT)."""
    print(message(exc), file=sys.stderr, flush=True)
    return 130
