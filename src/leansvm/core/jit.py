"""numba's ``njit`` as leansvm declares every compiled function, and the compiled code it ships.

numba compiles a function at its first call for its argument types and, with ``cache=True``, keeps
the machine code in ``__pycache__`` beside the source under a key of the source file's hash,
numba's version and the CPU's name and features. The package build (``setup.py``) runs
:mod:`leansvm.precompile` on the files it packages and records in ``compiled.json`` what that code
was built for, so ``pip install`` brings the code along: the first fit loads it (about a second)
instead of compiling it (about a minute).

Where it does not match (another CPU model or numba version than the build's, an editable install,
``NUMBA_CACHE_DIR`` pointing elsewhere), numba compiles as it always did. The first compilation of
a leansvm function in a process prints one line that says so, why, and about how long it takes,
and a progress bar open at the time shows "compiling" until it ends (:class:`_CompileNotice`).

A package directory that cannot be written (a read-only site-packages, a shared image on cluster
workers) would make numba pass over ``__pycache__`` and compile into the user's cache directory;
:class:`ShippedCodeLocator` copies the function's shipped files there first, so they are loaded.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path

import numba
from numba import njit  # noqa: F401  (re-exported: ``from leansvm.core.jit import njit``)
from numba.core import caching, config, event
from numba.core.dispatcher import ObjModeLiftedWith

__all__ = ["njit", "shipped_code", "mismatch", "ShippedCodeLocator", "RECORD"]

PACKAGE = Path(__file__).resolve().parents[1]
#: what the build compiled for (written by ``python -m leansvm.precompile --record``)
RECORD = PACKAGE / "compiled.json"
#: seconds a complete compilation took on the 2-core benchmark machine, when the record has none
DEFAULT_COMPILE_SECONDS = 60.0


def this_machine() -> dict:
    """numba's version, Python's, and the (target triple, CPU name, CPU features) of compiled code."""
    from numba.core.registry import cpu_target
    triple, cpu, features = cpu_target.target_context.codegen().magic_tuple()
    return {"numba": numba.__version__, "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
            "triple": triple, "cpu": cpu, "features": features}


def shipped_code() -> dict | None:
    """The build's record (:func:`this_machine` at build time, plus ``seconds`` and ``signatures``),
    or None where the package holds no compiled code."""
    try:
        return json.loads(RECORD.read_text())
    except (OSError, ValueError):
        return None


def mismatch(record: dict | None = None, machine: dict | None = None) -> str | None:
    """Why the shipped code cannot be loaded here, in words; None where it can."""
    record = shipped_code() if record is None else record
    if not record:
        return "this install holds no compiled code (an editable install, or built without it)"
    if config.CACHE_DIR:
        return "NUMBA_CACHE_DIR is set, so numba looks for compiled code there, not in the package"
    machine = this_machine() if machine is None else machine
    for key, what in (("python", "Python"), ("numba", "numba")):
        if record.get(key) != machine[key]:
            return f"it was built for {what} {record.get(key)}, this is {what} {machine[key]}"
    if (record.get("triple"), record.get("cpu")) != (machine["triple"], machine["cpu"]):
        return f"it was built for a {record.get('cpu')} CPU ({record.get('triple')}), " \
               f"this is a {machine['cpu']} ({machine['triple']})"
    if record.get("features") != machine["features"]:
        return f"it was built for a {record.get('cpu')} CPU with other features than this one's"
    return None


def _is_ours(dispatcher) -> bool:
    """A leansvm function being compiled, not the object-mode glue of one of its ``with objmode()``
    blocks: numba compiles that glue in every process (it cannot be cached), in about 0.3 s (the
    first BSGDClassifier fit of a process: 0.39 s, the next 0.004 s); announced, it read as if the
    install lacked a solver."""
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    return module.startswith("leansvm.") and not isinstance(dispatcher, ObjModeLiftedWith)


class _CompileNotice(event.Listener):
    """At the first compilation of a leansvm function in this process: one line on standard error
    (through an open progress bar, if any) with the reason and the expected time; while any leansvm
    compilation runs, the innermost open bar shows "compiling"."""

    def __init__(self):
        self.told = False
        self._lock = threading.Lock()
        self._local = threading.local()

    def on_start(self, ev):
        depth = getattr(self._local, "depth", 0)
        self._local.depth = depth + 1
        if depth or not _is_ours(ev.data.get("dispatcher")):
            return
        from leansvm import progress
        with self._lock:
            first, self.told = not self.told, True
        progress.note_compiling(True, self.message(ev.data) if first else None)

    def on_end(self, ev):
        self._local.depth -= 1
        if self._local.depth == 0 and _is_ours(ev.data.get("dispatcher")):
            from leansvm import progress
            progress.note_compiling(False)

    @staticmethod
    def message(data: dict | None = None) -> str:
        """The notice; where the shipped code matches this machine, it names the function and the
        argument types it lacked (``data``: the compile event's), for a report that adds them to the
        build's signatures (:mod:`leansvm.precompile`)."""
        record = shipped_code()
        reason = mismatch(record)
        if reason is None:
            dispatcher, args = (data or {}).get("dispatcher"), (data or {}).get("args")
            what = "" if dispatcher is None else \
                f" ({dispatcher.py_func.__module__}.{dispatcher.py_func.__qualname__}{tuple(args or ())})"
            return ("leansvm: compiling a solver for argument types the install did not compile"
                    f"{what} (a few seconds, once; later runs load it)")
        seconds = (record or {}).get("seconds") or DEFAULT_COMPILE_SECONDS
        return (f"leansvm: compiling the solvers for this machine, once: {reason}. The first fits "
                f"take up to about {seconds:.0f} s longer; later runs load the compiled code.")


NOTICE = _CompileNotice()
event.register("numba:compile", NOTICE)


def _writable(directory: str) -> bool:
    try:
        os.makedirs(directory, exist_ok=True)
        tempfile.TemporaryFile(dir=directory).close()
        return True
    except OSError:
        return False


class ShippedCodeLocator(caching.UserWideCacheLocator):
    """For a leansvm function whose package ``__pycache__`` cannot be written: the user's numba cache
    directory, with the shipped index and machine code of the function copied there on first use
    (numba's own locators would skip the shipped files and compile). Other functions: not handled."""

    @classmethod
    def from_function(cls, py_func, py_file):
        shipped = os.path.join(os.path.dirname(os.path.abspath(py_file)), "__pycache__")
        if not os.path.abspath(py_file).startswith(str(PACKAGE) + os.sep) or not os.path.isdir(shipped) \
                or _writable(shipped):
            return None
        self = super().from_function(py_func, py_file)
        if self is not None:
            self.copy_shipped(py_func, py_file, shipped)
        return self

    def copy_shipped(self, py_func, py_file, shipped):
        """Copy ``<module>.<qualname>-<line>.py<XY>.nbi`` and its ``.nbc`` files, unless already there
        (numba's file names: ``CacheImpl.get_filename_base``)."""
        module = os.path.splitext(os.path.basename(py_file))[0]
        base = f"{module}.{py_func.__qualname__}-{py_func.__code__.co_firstlineno}.py" \
               f"{sys.version_info[0]}{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"
        base = base.replace("<", "").replace(">", "")
        target = self.get_cache_path()
        if os.path.exists(os.path.join(target, base + ".nbi")):
            return
        for path in sorted(glob.glob(os.path.join(shipped, glob.escape(base) + ".*.nbc"))) \
                + [os.path.join(shipped, base + ".nbi")]:          # the index last: it names the rest
            if os.path.exists(path):
                temporary = os.path.join(target, f".{os.path.basename(path)}.{os.getpid()}")
                shutil.copyfile(path, temporary)
                os.replace(temporary, os.path.join(target, os.path.basename(path)))


def _install_locator():
    """Put :class:`ShippedCodeLocator` after ``NUMBA_CACHE_DIR``'s locator, before the in-tree one."""
    classes = caching.CacheImpl._locator_classes
    if ShippedCodeLocator not in classes:
        classes.insert(classes.index(caching.InTreeCacheLocator), ShippedCodeLocator)


_install_locator()
