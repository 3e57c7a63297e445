"""Progress feedback for long operations: a bar on a terminal or when asked, silence otherwise.

Every long operation of the library (``svm_path``, ``SVCCV.fit``, ``compress``,
``BSGDClassifier.fit`` epochs, ``fit_lean``) reports through :class:`Progress`::

    with Progress(total=len(Cs), desc="svm path", unit="C", enabled=progress) as bar:
        for C in Cs:
            ...
            bar.update()

Whether anything is shown (:func:`progress_enabled`): ``enabled=True`` always,
``enabled=False`` never, ``enabled=None`` (the default everywhere) when standard
error is a terminal. The environment variable ``LEANSVM_PROGRESS`` (``1``/``on``
or ``0``/``off``) overrides that automatic choice, not an explicit True/False;
:func:`default_progress` does the same for the operations run inside a block
(``fit_lean`` passes its own choice down that way).

The bar is tqdm's (an optional dependency, in the ``plot`` extra), on standard
error, with the estimated time left. Without tqdm, a plain line
(``svm path: 5/20 C, 12 s elapsed, about 36 s left``) is written at most every
``interval`` seconds. The estimate assumes the remaining steps cost what the
finished ones did on average.

Ctrl-C: the bar is closed, one line says which operation stopped and how far it
had got, and ``KeyboardInterrupt`` goes on to the caller. Only the innermost
operation prints that line. Inside the ``leansvm`` command the line is not
printed but passed on with the exception: the command prints one line,
``leansvm: interrupted (Ctrl-C): svm path after 2/5 fits in 3 s``, and exits
with status 130 (:mod:`leansvm.interrupts`). Every :meth:`Progress.update` is
also a safe point where a Ctrl-C the command recorded, and Python dropped, is
raised.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import time

import numpy as np

from leansvm import interrupts

__all__ = ["Progress", "ConvergenceProgress", "progress_enabled", "default_progress", "note_compiling",
           "ENV_VARIABLE"]

ENV_VARIABLE = "LEANSVM_PROGRESS"
_ON, _OFF = ("1", "on", "true", "yes"), ("0", "off", "false", "no")
#: seconds between two plain progress lines (without tqdm)
LINE_INTERVAL = 10.0
_default: contextvars.ContextVar = contextvars.ContextVar("leansvm_progress", default=None)
#: the bars open now, innermost last (numba's compilation is shown on the innermost)
_open: list = []
#: what a bar shows while numba compiles
COMPILING = "compiling"


def progress_enabled(enabled=None, stream=None) -> bool:
    """True/False as given; for None: the enclosing :func:`default_progress`, else
    ``LEANSVM_PROGRESS``, else whether ``stream`` (standard error) is a terminal."""
    if enabled is not None:
        return bool(enabled)
    inherited = _default.get()
    if inherited is not None:
        return inherited
    env = os.environ.get(ENV_VARIABLE, "").strip().lower()
    if env in _ON:
        return True
    if env in _OFF:
        return False
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):   # no isatty, or a closed stream
        return False


@contextlib.contextmanager
def default_progress(enabled):
    """Within the block, operations called with ``enabled=None`` show progress iff ``enabled``
    (None: leave the automatic choice). Thread- and context-local."""
    token = _default.set(None if enabled is None else bool(enabled))
    try:
        yield
    finally:
        _default.reset(token)


def _tqdm():
    """tqdm's class, or None when it is not installed (it is optional)."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm


def _seconds(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


class Progress:
    """A progress report over ``total`` steps (None: unknown); see the module docstring.

    ``update(n)`` advances it; ``eta()`` is the estimated seconds left (None
    when unknown); ``write(message)`` prints a line without breaking the bar.
    """

    def __init__(self, total=None, desc="", unit="step", enabled=None, interval=None, stream=None):
        self.total = None if total is None else int(total)
        self.desc = desc
        self.unit = unit
        self.stream = stream
        self.enabled = progress_enabled(enabled, stream)
        self.interval = LINE_INTERVAL if interval is None else float(interval)
        self.n = 0
        self.start = self._last_line = time.perf_counter()
        self._bar = None
        self.compiling = False

    @property
    def _file(self):
        return sys.stderr if self.stream is None else self.stream

    def __enter__(self):
        self.start = self._last_line = time.perf_counter()
        if self.enabled:
            tqdm = _tqdm()
            if tqdm is not None:
                try:
                    self._bar = tqdm(total=self.total, desc=self.desc, unit=self.unit, leave=False,
                                     file=self._file, dynamic_ncols=True, mininterval=0.2)
                except KeyboardInterrupt as exc:   # a Ctrl-C at the bar's first render: the with
                    self.__exit__(type(exc), exc, exc.__traceback__)     # block never started
                    raise
            _open.append(self)
        return self

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def eta(self):
        """Seconds left if the remaining steps cost what the finished ones did on average."""
        if not self.total or not self.n:
            return None
        return self.elapsed() / self.n * max(self.total - self.n, 0)

    def _done(self) -> str:
        return f"{self.n}/{self.total}" if self.total else f"{self.n}"

    def status(self) -> str:
        """``desc: n/total unit, E s elapsed, about L s left``."""
        line = f"{self.desc}: {self._done()} {self.unit}, {_seconds(self.elapsed())} elapsed"
        if self.compiling:
            return line + f", {COMPILING}"
        eta = self.eta()
        return line + (f", about {_seconds(eta)} left" if eta is not None and self.n < self.total else "")

    def update(self, n=1):
        interrupts.check()                     # a Ctrl-C the command recorded but Python dropped
        self.n += n
        if self._bar is not None:
            self._bar.update(n)
        elif self.enabled:
            now = time.perf_counter()
            if now - self._last_line >= self.interval:
                self._last_line = now
                print(self.status(), file=self._file, flush=True)

    def write(self, message: str):
        """Print ``message`` on standard error above the bar (when shown) or as a plain line."""
        if self._bar is not None:
            self._bar.write(message, file=self._file)
        else:
            print(message, file=self._file, flush=True)

    def show_compiling(self, compiling: bool):
        """Show (or stop showing) that numba is compiling, which the bar's rate does not foresee."""
        self.compiling = bool(compiling)
        if self._bar is not None:
            self._bar.set_postfix_str(COMPILING if compiling else "", refresh=True)

    def close(self):
        if self in _open:
            _open.remove(self)
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __exit__(self, exc_type, exc, tb):
        self.close()
        if exc_type is None or not issubclass(exc_type, KeyboardInterrupt) \
                or getattr(exc, "_leansvm_reported", False):
            return False
        where = f"{self.desc} after {self._done()} {self.unit} in {_seconds(self.elapsed())}"
        if interrupts.active():                           # the command prints it on its one line
            interrupts.add_context(exc, where)
        elif self.enabled:
            print(f"leansvm: {self.desc} interrupted (Ctrl-C) after {self._done()} {self.unit} "
                  f"in {_seconds(self.elapsed())}; stopping", file=self._file, flush=True)
        else:
            return False
        exc._leansvm_reported = True                      # only the innermost operation speaks
        return False


def note_compiling(compiling: bool, message: str | None = None):
    """numba starts (True) or ends (False) compiling a leansvm function: the innermost open bar shows
    it, and ``message`` (if any) goes on standard error above that bar or as a plain line."""
    bar = _open[-1] if _open else None
    if bar is not None:
        bar.show_compiling(compiling)
        if message:
            bar.write(message)
    elif message:
        print(message, file=sys.stderr, flush=True)


class ConvergenceProgress:
    """Progress of an iterative solver in percent, from its violation of the stopping rule.

    With v_0 the first violation reported and ``tol`` the target, the fraction done
    is log(v_0 / v) / log(v_0 / tol) (violations of dual solvers fall roughly
    geometrically), never moving back (shrinking phases restart the violation on
    fewer samples) and held at 99 % until :meth:`finish`. Call the object with
    each violation; ``bar`` is a :class:`Progress` with ``total=100``.
    """

    def __init__(self, bar: Progress, tol: float):
        self.bar, self.tol = bar, float(tol)
        self.first = None
        self.done = 0

    def __call__(self, violation: float):
        if not (violation > 0) or not np.isfinite(violation):
            return
        if self.first is None:
            self.first = max(float(violation), self.tol * (1 + 1e-12))
            return
        fraction = np.log(self.first / max(violation, self.tol)) / np.log(self.first / self.tol)
        percent = int(min(99, max(0.0, 100 * fraction)))
        if percent > self.done:
            self.bar.update(percent - self.done)
            self.done = percent

    def finish(self):
        if self.done < 100:
            self.bar.update(100 - self.done)
            self.done = 100
