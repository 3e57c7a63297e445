"""numba's ``njit`` as leansvm declares every compiled function, the machine code the package ships,
and every use of numba's internals (each has a test: ``tests/test_compiled_code.py``).

numba compiles a function at its first call for its argument types. The package build
(``setup.py``, :mod:`leansvm.precompile`) compiles every solver ahead for a few baseline CPUs of the
platform and ships the code in ``leansvm/compiled/<target>/``: for x86-64 the psABI's levels
``x86-64-v4`` (AVX-512) and ``x86-64-v2`` (SSE4.2: every x86-64 CPU since about 2009), on
aarch64 its ``generic`` baseline; a level's instructions, tuned as LLVM tunes the build machine's
CPU where that uses 512-bit vectors (:func:`target_environment`). ``<target>/target.json`` records
what each was built for.

A function declared ``@njit(cache=True)`` here reads its machine code through :class:`LeanCache`:

1. numba's own cache first, wherever the user's settings put it (``NUMBA_CACHE_DIR``, the
   package's ``__pycache__``, the user-wide cache): code compiled on this machine earlier;
2. then the shipped targets this CPU can run, best first (:func:`usable_targets`), read in place
   from the package: nothing is copied, so a read-only package or home changes nothing.

What is compiled after all (a CPU below every shipped level, another numba, an argument type the
build did not cover) goes to numba's own cache, as numba would put it. The first such compilation
in a process prints one line that says why and about how long it takes, and an open progress bar
shows "compiling" until it ends (:class:`_CompileEvents`). Nothing is registered with numba at
import: the listener is installed by the first load of a leansvm function, and it reacts to
leansvm's functions only (a user's own numba code sees no change).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import sys
import threading
import time
from pathlib import Path

import numba
from numba.core import caching, compiler, config, event
from numba.core.dispatcher import ObjModeLiftedWith
from numba.core.runtime import rtsys

__all__ = ["njit", "LeanCache", "usable_targets", "shipped_targets", "mismatch", "this_machine",
           "compile_seconds", "COMPILED"]

PACKAGE = Path(__file__).resolve().parents[1]
#: the shipped machine code: ``<target>/<module folder>/<numba's files>`` and ``<target>/target.json``
COMPILED = PACKAGE / "compiled"
#: set by the package build (:mod:`leansvm.precompile`): compile into this target's folder only
BUILD_INTO = os.environ.get("LEANSVM_COMPILE_INTO") or None
#: seconds a complete compilation took on the 2-core benchmark machine, when the record has none
DEFAULT_COMPILE_SECONDS = 110.0

_V2 = ("cx16", "sahf", "popcnt", "sse3", "sse4.1", "sse4.2", "ssse3")
_V3 = _V2 + ("avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave")
_V4 = _V3 + ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")
#: {architecture: ((LLVM CPU name, the CPU features it needs), ...)}, best first; the x86-64 levels
#: are the psABI's (x86-64-v2/v3/v4), which LLVM knows as CPU names
LEVELS = {"x86_64": (("x86-64-v4", _V4), ("x86-64-v3", _V3), ("x86-64-v2", _V2)),
          "aarch64": (("generic", ()),)}
#: what the build compiles for, per architecture (``LEANSVM_BUILD_TARGETS`` overrides; ``native``:
#: the build machine's own CPU). Measured on an AVX-512 host (benchmarks/exact/bench_compiled_targets.py):
#: v4's code within 6 % of native on every hot loop, v3's and v2's up to 15-30 % slower on the small
#: sets and alike to each other; so v4 for AVX-512 CPUs and v2 for every other x86-64 CPU
DEFAULT_BUILD_TARGETS = {"x86_64": ("x86-64-v4", "x86-64-v2"), "aarch64": ("generic",)}


# -- the machine ----------------------------------------------------------------------------------

def this_machine() -> dict:
    """numba's version, Python's, and the (target triple, CPU name, CPU features) of the code numba
    compiles in this process (``codegen.magic_tuple()``, the key of numba's cache)."""
    from numba.core.registry import cpu_target
    triple, cpu, features = cpu_target.target_context.codegen().magic_tuple()
    return {"numba": numba.__version__, "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
            "triple": triple, "cpu": cpu, "features": features}


def architecture(triple: str) -> str:
    """``x86_64`` or ``aarch64`` (macOS says ``arm64``) from a target triple."""
    arch = triple.split("-")[0]
    return "aarch64" if arch == "arm64" else arch


def cpu_features() -> set[str]:
    """The features of the CPU numba compiles for: the host's (LLVM's view, which includes what the
    operating system enables), or those numba is told of with ``NUMBA_CPU_NAME``/``NUMBA_CPU_FEATURES``
    (how a test makes this process see another CPU)."""
    if config.CPU_NAME:
        level = next((set(needs) for levels in LEVELS.values() for name, needs in levels
                      if name == config.CPU_NAME), set())
        flags = [f.strip() for f in (config.CPU_FEATURES or "").split(",") if f.strip()]
        return (level | {f[1:] for f in flags if f.startswith("+")}) - {f[1:] for f in flags if f.startswith("-")}
    import llvmlite.binding as ll
    return {name for name, on in ll.get_host_cpu_features().items() if on}


def build_targets(triple: str | None = None) -> tuple[str, ...]:
    """The targets the package build compiles for on this platform."""
    chosen = os.environ.get("LEANSVM_BUILD_TARGETS")
    if chosen:
        return tuple(t.strip() for t in chosen.split(",") if t.strip())
    return DEFAULT_BUILD_TARGETS.get(architecture(triple or this_machine()["triple"]), ("native",))


#: LLVM's tuning flag that keeps a CPU with 512-bit registers to 256-bit vectors; x86-64-v4 has it (as
#: LLVM's Intel AVX-512 tunings do), AMD's Zen 4 and Zen 5 do not
PREFER_256_BIT = "prefer-256-bit"


def target_environment(target: str, environ: dict, wide_vectors: bool = False) -> dict:
    """``environ`` with numba told to compile for ``target`` (a level's CPU name, or ``native``).

    ``wide_vectors`` (:func:`host_prefers_wide_vectors`: the build machine's own tuning uses 512-bit
    registers): a level with AVX-512 is compiled without LLVM's ``prefer-256-bit``, the same
    instructions tuned as the build machine's CPU would be. On an AMD EPYC (Zen 5), one thread, median
    of 5 rounds, each compiled fresh (a one-off check): x86-64-v4 as LLVM tunes it 1.04-1.09 times
    native on magic, letter and friedman1-10k's SVR, without the flag 0.98-1.01; the shipped code so
    built, 0.91-1.01 on every hot loop (BENCHMARKS.md, "Shipped machine code against native code")."""
    env = {k: v for k, v in environ.items() if k not in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES")}
    if target != "native":
        wide = wide_vectors and "avx512f" in dict(LEVELS.get("x86_64", ())).get(target, ())
        env.update(NUMBA_CPU_NAME=target, NUMBA_CPU_FEATURES=f"-{PREFER_256_BIT}" if wide else "")
    return env


def host_prefers_wide_vectors() -> bool:
    """Whether numba, compiling for this process's CPU, vectorises a plain loop with 512-bit (zmm)
    registers: LLVM's own tuning of the CPU, read from the machine code of a probe."""
    import numpy as np

    @numba.njit(fastmath=True)
    def probe(a):
        total = 0.0
        for x in a:
            total += x
        return total

    probe(np.ones(64))
    return any("zmm" in asm for asm in probe.inspect_asm().values())


# -- the shipped targets --------------------------------------------------------------------------

def shipped_targets() -> list[dict]:
    """The records of the shipped targets (:mod:`leansvm.precompile` writes them), each with
    ``target``, ``numba``, ``python``, ``triple``, ``cpu``, ``features``, ``seconds``, ``signatures``."""
    records = []
    for path in sorted(COMPILED.glob("*/target.json")):
        try:
            records.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return records


def why_not(record: dict, machine: dict, features: set[str]) -> str | None:
    """Why one shipped target's code cannot run here, in words; None where it can."""
    for key, what in (("python", "Python"), ("numba", "numba")):
        if record.get(key) != machine[key]:
            return f"it was built for {what} {record.get(key)}, this is {what} {machine[key]}"
    if record.get("triple") != machine["triple"]:
        return f"it was built for {record.get('triple')}, this is {machine['triple']}"
    if (record.get("cpu"), record.get("features")) == (machine["cpu"], machine["features"]):
        return None
    needs = dict(LEVELS.get(architecture(machine["triple"]), ())).get(record.get("cpu"))
    if needs is None:
        return f"it was built for a {record.get('cpu')} CPU, this is a {machine['cpu']}"
    missing = sorted(set(needs) - features)
    return f"this CPU lacks {', '.join(missing)} ({record['cpu']})" if missing else None


def order_targets(records: list[dict], machine: dict, features: set[str]) -> list[dict]:
    """The records whose code runs here, best first: one built for exactly this CPU, then the
    levels from the highest down."""
    order = [name for name, _ in LEVELS.get(architecture(machine["triple"]), ())]
    usable = [r for r in records if why_not(r, machine, features) is None]
    return sorted(usable, key=lambda r: ((r["cpu"], r["features"]) != (machine["cpu"], machine["features"]),
                                         order.index(r["cpu"]) if r["cpu"] in order else len(order)))


@functools.lru_cache(maxsize=None)
def _usable(machine_key: tuple, features: frozenset) -> tuple[Path, ...]:
    machine = dict(zip(("numba", "python", "triple", "cpu", "features"), machine_key))
    return tuple(COMPILED / r["target"] for r in order_targets(shipped_targets(), machine, set(features)))


def usable_targets() -> tuple[Path, ...]:
    """The folders of the shipped targets this CPU runs, best first (:func:`order_targets`). The
    package build reads its own target's folder only."""
    if BUILD_INTO:
        return (Path(BUILD_INTO),)
    machine = this_machine()
    return _usable(tuple(machine[k] for k in ("numba", "python", "triple", "cpu", "features")),
                   frozenset(cpu_features()))


def mismatch(records: list[dict] | None = None, machine: dict | None = None,
             features: set[str] | None = None) -> str | None:
    """Why no shipped code can be loaded here, in words; None where some can."""
    records = shipped_targets() if records is None else records
    if not records:
        return "this install holds no compiled code (an editable install, or built without it)"
    machine = this_machine() if machine is None else machine
    features = cpu_features() if features is None else features
    reasons = [why_not(r, machine, features) for r in records]
    if None in reasons:
        return None
    return min(reasons, key=len)             # the nearest miss: the least demanding target's


# -- the cache of a leansvm function --------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _source_stamp(path: str) -> bytes:
    """The source file's SHA-256, the freshness stamp of its functions' cache entries (numba >= 0.68
    stamps its own entries the same way)."""
    return hashlib.sha256(Path(path).read_bytes()).digest()


class LeanCache(caching._Cache):
    """The cache of one leansvm function: numba's own (:class:`numba.core.caching.FunctionCache`,
    placed by the user's settings) for loading and saving, then the shipped targets' folders
    for loading (numba's index and data files, read in place).

    Shipped entries are keyed by the signature and the function's bytecode hash; the CPU is the
    folder's. In the package build only the target being built is read and written."""

    def __init__(self, py_func):
        self._py_func = py_func
        self._enabled = True
        source = Path(inspect.getfile(py_func)).resolve()
        self._folder = source.parent.relative_to(PACKAGE) if source.is_relative_to(PACKAGE) else None
        self._stamp = _source_stamp(str(source))
        abi = f"{sys.version_info[0]}{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"
        self._filename_base = (f"{source.stem}.{py_func.__qualname__}-{py_func.__code__.co_firstlineno}"
                               f".py{abi}").replace("<", "").replace(">", "")
        self._code_hash = hashlib.sha256(py_func.__code__.co_code).hexdigest()
        self._numba = None
        if not BUILD_INTO:
            try:
                self._numba = caching.FunctionCache(py_func)
            except RuntimeError:             # no cache folder can be written: the shipped code only
                self._numba = None

    def __repr__(self):
        return f"<LeanCache {self._py_func.__module__}.{self._py_func.__qualname__}>"

    @property
    def cache_path(self):
        return self._numba.cache_path if self._numba is not None else str(COMPILED)

    def enable(self):
        self._enabled = True

    def disable(self):
        self._enabled = False

    def flush(self):
        if self._numba is not None:
            self._numba.flush()

    def shipped_file(self, target_folder: Path):
        """numba's index and data files of this function in one target's folder."""
        return caching.IndexDataCacheFile(cache_path=str(Path(target_folder) / self._folder),
                                          filename_base=self._filename_base, source_stamp=self._stamp)

    def shipped_signatures(self, target_folder: Path) -> list:
        """The argument types this function has code for in one target's folder."""
        if self._folder is None:
            return []
        return [key[0] for key in self.shipped_file(target_folder)._load_index()]

    def load_overload(self, sig, target_context):
        if not self._enabled:
            return None
        _listen()
        _runtime_ready(target_context)
        if self._numba is not None:
            with self._numba._guard_against_spurious_io_errors():
                found = self._numba._load_overload(sig, target_context)
            if found is not None:
                return found
        if self._folder is None:
            return None
        for folder in usable_targets():
            try:
                payload = self.shipped_file(folder).load((sig, self._code_hash))
                if payload is not None:
                    return compiler.CompileResult._rebuild(target_context, *payload)
            except Exception:                # an unreadable or damaged file: compiled instead
                continue
        return None

    def save_overload(self, sig, cres):
        if not self._enabled:
            return
        if BUILD_INTO:
            if self._folder is not None and not cres.library.has_dynamic_globals \
                    and all(lifted.can_cache for lifted in cres.lifted):
                (Path(BUILD_INTO) / self._folder).mkdir(parents=True, exist_ok=True)
                self.shipped_file(Path(BUILD_INTO)).save((sig, self._code_hash), cres._reduce())
        elif self._numba is not None:
            self._numba.save_overload(sig, cres)


def _runtime_ready(target_context):
    """Make numba's CPU target ready to run loaded machine code: its runtime (NRT) initialised.

    numba's own loading refreshes the whole target first: it imports and installs every typing and
    lowering registry (numba.np, numba.cpython, the typed containers, ...), which only compiling
    reads, and numba's compiler refreshes the target itself before it compiles. Loaded code needs
    the runtime's symbols alone (the C helpers are registered when the target is created). A new
    process that fits ``SVC()`` on iris and predicts a row took 0.71 s longer than scikit-learn's with
    the refresh and 0.43 s without, where numba's import and runtime alone cost 0.45 s (median of 15,
    2-core AMD EPYC; ``benchmarks/deploy/bench_predict.py``)."""
    rtsys.initialize(target_context)


def njit(*args, cache: bool = False, **options):
    """``numba.njit``; with ``cache=True`` the machine code is loaded through :class:`LeanCache`
    (what numba's ``enable_caching`` would set to its own ``FunctionCache``)."""
    if args and callable(args[0]):
        return njit(cache=cache, **options)(args[0])
    decorate = numba.njit(*args, **options)
    if not cache:
        return decorate

    def decorator(function):
        dispatcher = decorate(function)
        dispatcher._cache = LeanCache(dispatcher.py_func)
        return dispatcher
    return decorator


# -- compilation events: the notice, the progress bar, the work clock -----------------------------

def _is_ours(dispatcher) -> bool:
    """A leansvm function being compiled, not the object-mode glue of one of its ``with objmode()``
    blocks: numba compiles that glue in every process (it cannot be cached), in about 0.3 s (the
    first BSGDClassifier fit of a process: 0.39 s, the next 0.004 s); announced, it read as if the
    install lacked a solver."""
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    return module.startswith("leansvm.") and not isinstance(dispatcher, ObjModeLiftedWith)


class _CompileEvents(event.Listener):
    """numba's ``numba:compile`` events: seconds between the outermost start and end per thread (a
    function compiles the jitted functions it calls inside its own event), summed over threads,
    for the work clock; and, at the first compilation of a leansvm function in this process, one
    line on standard error (through an open progress bar, if any) with the reason and the expected
    time, while the innermost open bar shows "compiling"."""

    def __init__(self):
        self.total = 0.0
        self.told = False
        self.registered = False
        self._lock = threading.Lock()
        self._local = threading.local()

    def on_start(self, ev):
        depth = getattr(self._local, "depth", 0)
        self._local.depth = depth + 1
        if depth:
            return
        self._local.started = time.perf_counter()
        self._local.ours = _is_ours(ev.data.get("dispatcher"))
        if self._local.ours:
            from leansvm import progress
            with self._lock:
                first, self.told = not self.told, True
            progress.note_compiling(True, self.message(ev.data) if first else None)

    def on_end(self, ev):
        self._local.depth -= 1
        if self._local.depth:
            return
        with self._lock:
            self.total += time.perf_counter() - self._local.started
        if self._local.ours:
            from leansvm import progress
            progress.note_compiling(False)

    @staticmethod
    def message(data: dict | None = None) -> str:
        """The notice; where shipped code runs here, it names the function and the argument types it
        lacked (``data``: the compile event's), for a report that adds them to the build's workloads
        (:mod:`leansvm.precompile`)."""
        records = shipped_targets()
        reason = mismatch(records)
        if reason is None:
            dispatcher, args = (data or {}).get("dispatcher"), (data or {}).get("args")
            what = "" if dispatcher is None else \
                f" ({dispatcher.py_func.__module__}.{dispatcher.py_func.__qualname__}{tuple(args or ())})"
            return ("leansvm: compiling a solver for argument types the install did not compile"
                    f"{what} (a few seconds, once; later runs load it)")
        seconds = max((r.get("seconds") or 0 for r in records), default=0) or DEFAULT_COMPILE_SECONDS
        return (f"leansvm: compiling the solvers for this machine, once: {reason}. The first fits "
                f"take up to about {seconds:.0f} s longer; later runs load the compiled code.")


EVENTS = _CompileEvents()
EVENTS.told = bool(BUILD_INTO)              # the package build compiles everything: nothing to announce
_listening = threading.Lock()


def _listen():
    """Register :data:`EVENTS` with numba, once, at the first use of a leansvm solver or clock."""
    if not EVENTS.registered:
        with _listening:
            if not EVENTS.registered:
                event.register("numba:compile", EVENTS)
                EVENTS.registered = True


def compile_seconds() -> float:
    """Seconds this process has spent compiling numba functions (finished compilations) since the
    first use of a leansvm solver or clock."""
    _listen()
    return EVENTS.total
