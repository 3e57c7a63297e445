"""The install ships the solvers' machine code for the platform's baseline CPUs (setup.py,
leansvm.precompile, leansvm.core.jit): a first fit loads it whatever the user's cache settings and
CPU model, where none fits the user is told once, and each numba internal it rests on is checked."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import leansvm
from leansvm.core import jit

INSTALLED = not (Path(leansvm.__file__).resolve().parents[2] / "setup.py").exists()
needs_install = pytest.mark.skipif(not INSTALLED, reason="leansvm runs from its source tree (an editable "
                                   "install), which ships no compiled code; `make test` installs the package")

#: a count of compilations of leansvm functions, then a first fit as a user's first process makes it
COUNT_AND_FIT = r"""
import json, sys
from numba.core import event
compiled = []
class Count(event.Listener):
    def on_start(self, ev):
        module = ev.data["dispatcher"].py_func.__module__
        if module.startswith("leansvm."):
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Count())
PREPARE
import leansvm
from sklearn.datasets import make_classification
X, y = make_classification(n_samples=1000, n_features=10, random_state=0)
leansvm.SVC().fit(X, y)
print(json.dumps(compiled))
"""

#: what haswell (AVX2, no AVX-512) reports: a CPU model other than this one, of level x86-64-v3
HASWELL = "+avx,+avx2,+bmi,+bmi2,+cx16,+f16c,+fma,+lzcnt,+movbe,+popcnt,+sahf,+sse3,+sse4.1,+sse4.2,+ssse3,+xsave"
#: a nehalem: SSE4.2, no AVX (level x86-64-v2)
NEHALEM = "+cx16,+popcnt,+sahf,+sse3,+sse4.1,+sse4.2,+ssse3"


def _fresh_user(tmp_path, **extra):
    """The environment of a user with an empty home (numba's user cache is in it) and no numba settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_") and k != "XDG_CACHE_HOME"}
    (tmp_path / "home").mkdir(exist_ok=True)
    return {**env, "HOME": str(tmp_path / "home"), **extra}


def _run(code, env):
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def _package_files():
    """Every file of the installed package but Python's own bytecode (written at import)."""
    return sorted(p for p in Path(leansvm.__file__).parent.rglob("*") if p.is_file() and p.suffix != ".pyc")


def _x86():
    return jit.architecture(jit.this_machine()["triple"]) == "x86_64"


@needs_install
def test_the_installed_package_ships_code_this_machine_runs(tmp_path):
    """The build's targets are the platform's baselines, one of them runs here, and a first fit in a
    new process compiles nothing and prints no notice."""
    records = jit.shipped_targets()
    assert {r["target"] for r in records} == set(jit.build_targets())
    assert all(r["signatures"] > 0 for r in records)
    assert jit.mismatch() is None and jit.usable_targets()
    compiled, stderr = _run(COUNT_AND_FIT.replace("PREPARE", ""), _fresh_user(tmp_path))
    assert compiled == []
    assert "compiling" not in stderr


@needs_install
def test_numba_cache_dir_set_still_loads_the_shipped_code_and_adds_nothing(tmp_path):
    """Containers and CI runners set NUMBA_CACHE_DIR: numba then looks there first, finds nothing, and
    the shipped code is read in place; neither that folder nor the package gains a file."""
    before = _package_files()
    env = _fresh_user(tmp_path, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    compiled, stderr = _run(COUNT_AND_FIT.replace("PREPARE", ""), env)
    assert compiled == [] and "compiling" not in stderr
    assert not [p for p in (tmp_path / "numba-cache").rglob("*") if p.is_file()]
    assert _package_files() == before


@needs_install
@pytest.mark.skipif(not _x86(), reason="the CPU model named is an x86-64 one")
def test_another_cpu_model_of_the_platform_loads_a_shipped_baseline(tmp_path):
    """The run-time side told it is a haswell (AVX2, no AVX-512; numba's NUMBA_CPU_NAME/FEATURES):
    numba's key differs from every build's, and the x86-64-v2 code is loaded, nothing compiled."""
    env = _fresh_user(tmp_path, NUMBA_CPU_NAME="haswell", NUMBA_CPU_FEATURES=HASWELL)
    prepare = "from leansvm.core import jit\nassert jit.usable_targets()[0].name == 'x86-64-v2', jit.usable_targets()"
    compiled, stderr = _run(COUNT_AND_FIT.replace("PREPARE", prepare), env)
    assert compiled == [] and "compiling" not in stderr


@needs_install
def test_nowhere_to_write_still_loads_the_shipped_code(tmp_path):
    """A read-only package and a read-only home: numba finds no folder for its cache
    (``FunctionCache`` raises; the tests run as root, to whom every folder is writable, so that is
    how it is made so); the fit reads the shipped code in place and compiles nothing."""
    prepare = ("from numba.core import caching\n"
               "def nowhere(self, py_func): raise RuntimeError('cannot cache function: no locator available')\n"
               "caching.FunctionCache.__init__ = nowhere")
    compiled, _ = _run(COUNT_AND_FIT.replace("PREPARE", prepare), _fresh_user(tmp_path))
    assert compiled == []


@needs_install
def test_a_budget_fit_s_object_mode_glue_is_compiled_without_a_notice(tmp_path):
    """BSGD times its budget maintenance in ``with objmode()`` blocks; numba compiles their glue in every
    process (it is never cached), quickly, and that is not a solver the install lacks."""
    code = COUNT_AND_FIT.replace("PREPARE", "").replace(
        "leansvm.SVC().fit(X, y)", "leansvm.BSGDClassifier(budget=20, gamma=0.1, random_state=0).fit(X, y)")
    compiled, stderr = _run(code, _fresh_user(tmp_path))
    assert set(compiled) <= {"_sgd_pass"}          # at most the glue, named after its function
    assert "compiling" not in stderr


NOTICE = r"""
import json
from leansvm import progress
from leansvm.budget.merging import merge_alpha
shown = []
original = progress.Progress.show_compiling
progress.Progress.show_compiling = lambda self, c: (shown.append(c), original(self, c))
with progress.Progress(total=2, desc="fit", enabled=True) as bar:
    merge_alpha(0.5, 1.0, -0.5, 0.3)            # compiles (no shipped target runs on this 'CPU')
    bar.update()
    merge_alpha(0.5, 1.0, -0.5, 0.3)            # compiled: nothing shown
    bar.update()
from leansvm.budget.merging import merge_degradation
merge_degradation(0.5, 1.0, -0.5, 0.3)          # compiles again, outside any bar: no second notice
print(json.dumps(shown))
"""


@pytest.mark.skipif(not _x86(), reason="the CPU model named is an x86-64 one")
def test_a_cpu_below_every_shipped_target_is_told_once_why_and_shown_on_the_bar(tmp_path):
    """A core2 (no SSE4.2) runs none of the x86-64 levels: numba compiles, one line says so and
    why, the open bar shows "compiling" while it runs (start and end of the outermost compilation
    only)."""
    env = _fresh_user(tmp_path, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"), NUMBA_CPU_NAME="core2",
                      NUMBA_CPU_FEATURES="+cx16,+sse3,+ssse3")
    shown, stderr = _run(NOTICE, env)
    notices = [line for line in stderr.splitlines() if "leansvm: compiling" in line]
    assert len(notices) == 1, stderr
    if INSTALLED:
        assert "this CPU lacks popcnt, sahf, sse4.1, sse4.2 (x86-64-v2)" in notices[0]
    assert shown == [True, False]


MACHINE = {"numba": "0.68.1", "python": "3.11", "triple": "x86_64-unknown-linux-gnu", "cpu": "znver5",
           "features": "+avx2,+avx512f"}


def _level(name):
    return {**MACHINE, "target": name, "cpu": name, "features": ""}


def test_why_not_names_what_differs():
    features = set(dict(jit.LEVELS["x86_64"])["x86-64-v3"])                 # an AVX2 CPU
    native = {**MACHINE, "target": "native"}
    assert jit.why_not(native, MACHINE, features) is None                  # built on this very CPU
    assert jit.why_not(_level("x86-64-v3"), MACHINE, features) is None
    assert jit.why_not(_level("x86-64-v4"), MACHINE, features) == \
        "this CPU lacks avx512bw, avx512cd, avx512dq, avx512f, avx512vl (x86-64-v4)"
    assert "numba 0.67.0" in jit.why_not({**native, "numba": "0.67.0"}, MACHINE, features)
    assert "Python 3.12" in jit.why_not({**native, "python": "3.12"}, MACHINE, features)
    assert "a skylake CPU" in jit.why_not({**native, "cpu": "skylake"}, MACHINE, features)
    assert "aarch64" in jit.why_not({**native, "triple": "aarch64-unknown-linux-gnu"}, MACHINE, features)
    assert "no compiled code" in jit.mismatch([], MACHINE, features)
    assert jit.mismatch([_level("x86-64-v2"), _level("x86-64-v4")], MACHINE, features) is None
    assert jit.mismatch([_level("x86-64-v4")], MACHINE, set()).endswith("(x86-64-v4)")


def test_targets_are_ordered_exact_cpu_first_then_the_highest_level():
    records = [_level("x86-64-v2"), _level("x86-64-v4"), _level("x86-64-v3"), {**MACHINE, "target": "native"}]
    v4 = set(dict(jit.LEVELS["x86_64"])["x86-64-v4"])
    assert [r["target"] for r in jit.order_targets(records, MACHINE, v4)] == \
        ["native", "x86-64-v4", "x86-64-v3", "x86-64-v2"]
    v3 = set(dict(jit.LEVELS["x86_64"])["x86-64-v3"])
    assert [r["target"] for r in jit.order_targets(records, {**MACHINE, "cpu": "haswell"}, v3)] == \
        ["x86-64-v3", "x86-64-v2"]


def test_the_cpu_numba_is_told_of_is_the_one_whose_features_count(monkeypatch):
    monkeypatch.setattr(jit.config, "CPU_NAME", "haswell")
    monkeypatch.setattr(jit.config, "CPU_FEATURES", HASWELL)
    assert "avx2" in jit.cpu_features() and "avx512f" not in jit.cpu_features()
    monkeypatch.setattr(jit.config, "CPU_NAME", "x86-64-v2")
    monkeypatch.setattr(jit.config, "CPU_FEATURES", "")
    assert jit.cpu_features() == set(dict(jit.LEVELS["x86_64"])["x86-64-v2"])
    monkeypatch.setattr(jit.config, "CPU_NAME", None)
    assert jit.cpu_features()                                             # the host's, from LLVM


def test_build_targets_are_the_platform_s_baselines_unless_named(monkeypatch):
    monkeypatch.delenv("LEANSVM_BUILD_TARGETS", raising=False)
    assert jit.build_targets("x86_64-unknown-linux-gnu") == ("x86-64-v4", "x86-64-v2")
    assert jit.build_targets("arm64-apple-darwin22.0.0") == ("generic",)
    assert jit.build_targets("powerpc64le-unknown-linux-gnu") == ("native",)
    monkeypatch.setenv("LEANSVM_BUILD_TARGETS", "native, x86-64-v4")
    assert jit.build_targets("x86_64-unknown-linux-gnu") == ("native", "x86-64-v4")
    env = jit.target_environment("x86-64-v3", {"NUMBA_CPU_NAME": "skylake", "PATH": "/bin"})
    assert env == {"PATH": "/bin", "NUMBA_CPU_NAME": "x86-64-v3", "NUMBA_CPU_FEATURES": ""}
    assert jit.target_environment("native", {"NUMBA_CPU_NAME": "skylake"}) == {}
    # a build machine tuned for 512-bit vectors: the AVX-512 level drops LLVM's 256-bit preference, no other
    wide = {t: jit.target_environment(t, {}, wide_vectors=True)["NUMBA_CPU_FEATURES"] for t in ("x86-64-v4", "x86-64-v2")}
    assert wide == {"x86-64-v4": "-prefer-256-bit", "x86-64-v2": ""}
    assert jit.target_environment("x86-64-v4", {})["NUMBA_CPU_FEATURES"] == ""


def test_a_tuning_flag_leaves_the_level_s_features_as_they_are(monkeypatch):
    """``-prefer-256-bit`` is LLVM tuning, not a CPU feature: the level's features still count."""
    monkeypatch.setattr(jit.config, "CPU_NAME", "x86-64-v4")
    monkeypatch.setattr(jit.config, "CPU_FEATURES", "-prefer-256-bit")
    assert jit.cpu_features() == set(dict(jit.LEVELS["x86_64"])["x86-64-v4"])
    monkeypatch.setattr(jit.config, "CPU_FEATURES", "-avx512bw")
    assert "avx512bw" not in jit.cpu_features() and "avx512f" in jit.cpu_features()


PROBE = "import json; from leansvm.core import jit; print(json.dumps(jit.host_prefers_wide_vectors()))"


@pytest.mark.skipif(not _x86(), reason="x86-64 levels")
def test_the_probe_reads_llvm_s_vector_width_for_the_cpu_numba_compiles_for(tmp_path):
    """x86-64-v4 as LLVM tunes it keeps to 256-bit vectors, without ``prefer-256-bit`` it uses zmm
    registers; x86-64-v2 has none (no AVX-512). Each in a process of its own (numba reads the CPU at start)."""
    def probe(cpu, features=""):
        return _run(PROBE, _fresh_user(tmp_path, NUMBA_CPU_NAME=cpu, NUMBA_CPU_FEATURES=features,
                                       NUMBA_CACHE_DIR=str(tmp_path / "cache")))[0]
    assert [probe("x86-64-v4"), probe("x86-64-v4", "-prefer-256-bit"), probe("x86-64-v2")] == [False, True, False]


BUILD_V3 = r"""
import json, sys
from leansvm import precompile
result = precompile.compile_from(sys.argv[1], modules={"budget.merging"})
precompile.record("x86-64-v3", result)
print(json.dumps(result))
"""


@needs_install
@pytest.mark.skipif(not _x86(), reason="x86-64 levels")
def test_a_target_built_without_running_it_loads_where_it_runs_and_nowhere_else(tmp_path):
    """The build compiles a level the build machine's CPU may not run from the signatures another
    target's run found (no code executed): here x86-64-v3, which the package does not ship. Its code
    then loads where the CPU has the level (a haswell), and where it lacks it (a nehalem has no AVX)
    it is passed over and numba compiles."""
    folder = tmp_path / "compiled" / "x86-64-v3"
    v2 = jit.COMPILED / "x86-64-v2"
    env = {**jit.target_environment("x86-64-v3", _fresh_user(tmp_path)), "LEANSVM_COMPILE_INTO": str(folder)}
    result, _ = _run(BUILD_V3.replace("sys.argv[1]", repr(str(v2))), env)
    assert result["failed"] == [] and result["signatures"] > 0
    from leansvm.budget import merging
    assert set(merging.merge_alpha._cache.shipped_signatures(folder)) == \
        set(merging.merge_alpha._cache.shipped_signatures(v2))
    assert json.loads((folder / "target.json").read_text())["cpu"] == "x86-64-v3"
    load = ("import json\nfrom leansvm.core import jit\nfrom pathlib import Path\n"
            f"jit.COMPILED = Path({str(folder.parent)!r})\n"
            "from numba.core import event\ncompiled = []\n"
            "class Count(event.Listener):\n"
            "    def on_start(self, ev): compiled.append(ev.data['dispatcher'].py_func.__qualname__)\n"
            "    def on_end(self, ev): pass\n"
            "event.register('numba:compile', Count())\n"
            "from leansvm.budget.merging import merge_alpha\nmerge_alpha(0.5, 1.0, -0.5, 0.3)\n"
            "print(json.dumps(compiled))")
    cache = str(tmp_path / "numba-cache")
    loaded, _ = _run(load, _fresh_user(tmp_path, NUMBA_CACHE_DIR=cache, NUMBA_CPU_NAME="haswell",
                                       NUMBA_CPU_FEATURES=HASWELL))
    assert loaded == []
    passed_over, _ = _run(load, _fresh_user(tmp_path, NUMBA_CACHE_DIR=cache + "-2", NUMBA_CPU_NAME="nehalem",
                                            NUMBA_CPU_FEATURES=NEHALEM))
    assert passed_over == ["merge_alpha"]


IMPORT_ONLY = r"""
import json
from numba.core import event
before = {k: list(v) for k, v in event._registered.items()}
import leansvm
after = {k: list(v) for k, v in event._registered.items()}
print(json.dumps(before == after))
"""


def test_importing_leansvm_registers_nothing_with_numba(tmp_path):
    registered_nothing, _ = _run(IMPORT_ONLY, _fresh_user(tmp_path))
    assert registered_nothing


#: a first fit and prediction, then which of numba's registries the process installed
FIT_AND_REGISTRIES = r"""
import json, sys
import leansvm
from sklearn.datasets import make_classification
X, y = make_classification(n_samples=1000, n_features=10, random_state=0)
leansvm.SVC().fit(X, y).predict(X[:1])
leansvm.SVR().fit(X, X[:, 0])
from numba.core.registry import cpu_target
print(json.dumps([len(cpu_target.target_context._registries), len(cpu_target.typing_context._registries),
                  "numba.np.polynomial.polynomial_core" in sys.modules]))
"""


@needs_install
def test_loaded_code_runs_without_numba_s_compiler_registries(tmp_path):
    """Loading shipped code initialises numba's runtime only (``jit._runtime_ready``): the typing and
    lowering registries that numba's own loading installs (about 0.2 s of a new process) are left to
    a compilation, which installs them itself."""
    (target_registries, typing_registries, polynomials), _ = _run(FIT_AND_REGISTRIES, _fresh_user(tmp_path))
    assert (target_registries, typing_registries, polynomials) == (0, 0, False)


def test_code_compiled_after_a_light_load_still_compiles_and_runs():
    """A function compiled in a process that has only loaded code: numba's compiler installs the
    registries it needs (np.sort, math) before it compiles."""
    import numpy as np

    @jit.njit                                                  # not cached: compiled here
    def middle(x):
        return np.sort(x)[x.size // 2] + np.float64(np.exp(0.0))

    assert middle(np.array([3.0, 1.0, 2.0])) == 3.0


# -- one test per numba internal that core/jit.py rests on (a numba upgrade fails here, by name) --

def test_numba_internal_dispatcher_consults_its_cache_attribute():
    """``Dispatcher._cache``: numba's ``enable_caching`` sets it, and compilation asks its
    ``load_overload`` before compiling and ``save_overload`` after."""
    calls = []

    @jit.njit(cache=True)
    def square(x):
        return x * x

    cache = square._cache
    assert isinstance(cache, jit.LeanCache)
    cache._numba = None                                        # nothing written beside the test file
    load, save = cache.load_overload, cache.save_overload
    cache.load_overload = lambda sig, ctx: (calls.append("load"), load(sig, ctx))[1]
    cache.save_overload = lambda sig, cres: (calls.append("save"), save(sig, cres))[1]
    assert square(3.0) == 9.0
    assert calls == ["load", "save"]


def test_numba_internal_function_cache_and_index_files(tmp_path):
    """``caching.FunctionCache(py_func)`` and ``caching.IndexDataCacheFile(cache_path, filename_base,
    source_stamp)`` with ``save``, ``load`` and ``_load_index``."""
    from numba.core import caching
    from leansvm.budget import merging
    assert hasattr(caching.FunctionCache(merging.merge_alpha.py_func), "load_overload")
    files = caching.IndexDataCacheFile(cache_path=str(tmp_path), filename_base="f-1.py311", source_stamp=b"s")
    files.save(("sig", "hash"), ("payload",))
    assert files.load(("sig", "hash")) == ("payload",)
    assert list(files._load_index()) == [("sig", "hash")]
    stale = caching.IndexDataCacheFile(cache_path=str(tmp_path), filename_base="f-1.py311", source_stamp=b"t")
    assert stale.load(("sig", "hash")) is None                     # another source: not loaded


def test_numba_internal_codegen_magic_tuple_and_cpu_settings():
    """``codegen().magic_tuple()`` (triple, CPU name, features), numba's cache key of the CPU, and
    ``config.CPU_NAME`` / ``config.CPU_FEATURES`` (NUMBA_CPU_NAME / NUMBA_CPU_FEATURES)."""
    machine = jit.this_machine()
    assert all(isinstance(machine[k], str) for k in ("triple", "cpu", "features")) and machine["triple"]
    assert hasattr(jit.config, "CPU_NAME") and hasattr(jit.config, "CPU_FEATURES")


def test_numba_internal_cache_load_without_refresh_and_runtime_initialisation():
    """``caching.Cache._load_overload(sig, target_context)`` and its guard
    ``_guard_against_spurious_io_errors()`` (numba's ``load_overload`` less the target refresh), and
    ``numba.core.runtime.rtsys.initialize(target_context)``, safe to call again."""
    from numba.core import caching
    from numba.core.registry import cpu_target
    from numba.core.runtime import rtsys
    assert callable(caching.Cache._load_overload) and callable(caching.Cache._guard_against_spurious_io_errors)
    rtsys.initialize(cpu_target.target_context)
    rtsys.initialize(cpu_target.target_context)


def test_numba_internal_object_mode_glue_class():
    """``numba.core.dispatcher.ObjModeLiftedWith``: the glue of a ``with objmode()`` block, left out of
    the notice."""
    from numba.core.dispatcher import ObjModeLiftedWith
    assert not jit._is_ours(ObjModeLiftedWith.__new__(ObjModeLiftedWith))


def test_numba_internal_compile_result_reduce_and_rebuild_through_a_shipped_folder(tmp_path, monkeypatch):
    """``CompileResult._reduce()`` and ``CompileResult._rebuild(target_context, *payload)``: with
    :data:`jit.BUILD_INTO` set a compiled function lands in that folder (the package build's
    path), and it loads from there in place (the user's)."""
    from pathlib import PurePath
    from numba.core.registry import cpu_target

    @jit.njit(cache=True)
    def halve(x):
        return 0.5 * x

    cache = halve._cache
    monkeypatch.setattr(cache, "_numba", None)
    monkeypatch.setattr(cache, "_folder", PurePath("here"))
    monkeypatch.setattr(jit, "BUILD_INTO", str(tmp_path))
    assert halve(3.0) == 1.5                                   # compiled, then saved by save_overload
    sig = next(iter(halve.overloads))
    assert cache.shipped_signatures(tmp_path) == [sig]
    monkeypatch.setattr(jit, "BUILD_INTO", None)
    monkeypatch.setattr(jit, "usable_targets", lambda: (tmp_path,))
    loaded = cache.load_overload(sig, cpu_target.target_context)
    assert loaded is not None and loaded.entry_point(5.0) == 2.5
