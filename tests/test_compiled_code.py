"""The install ships the solvers' machine code (setup.py, leansvm.core.jit): a first fit loads it,
where it cannot the user is told once, and a read-only package's code is still used."""

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


def _fresh_user(tmp_path, **extra):
    """The environment of a user with an empty home (numba's user cache is in it) and no numba settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_") and k != "XDG_CACHE_HOME"}
    (tmp_path / "home").mkdir(exist_ok=True)
    return {**env, "HOME": str(tmp_path / "home"), **extra}


def _run(code, env):
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


@needs_install
def test_the_installed_package_holds_machine_code_for_this_machine(tmp_path, monkeypatch):
    """What the build recorded matches this machine, and a first fit in a new process compiles
    nothing and prints no notice."""
    monkeypatch.setattr(jit.config, "CACHE_DIR", "")
    record = jit.shipped_code()
    assert record is not None and record["signatures"] > 0
    assert jit.mismatch(record) is None
    compiled, stderr = _run(COUNT_AND_FIT.replace("PREPARE", ""), _fresh_user(tmp_path))
    assert compiled == []
    assert "compiling" not in stderr


@needs_install
def test_a_budget_fit_s_object_mode_glue_is_compiled_without_a_notice(tmp_path, monkeypatch):
    """BSGD times its budget maintenance in ``with objmode()`` blocks; numba compiles their glue in every
    process (it is never cached), quickly, and that is not a solver the install lacks."""
    monkeypatch.setattr(jit.config, "CACHE_DIR", "")
    code = COUNT_AND_FIT.replace("PREPARE", "").replace(
        "leansvm.SVC().fit(X, y)", "leansvm.BSGDClassifier(budget=20, gamma=0.1, random_state=0).fit(X, y)")
    compiled, stderr = _run(code, _fresh_user(tmp_path))
    assert set(compiled) <= {"_sgd_pass"}          # at most the glue, named after its function
    assert "compiling" not in stderr


@needs_install
def test_a_package_that_cannot_be_written_still_loads_its_machine_code(tmp_path):
    """numba skips a ``__pycache__`` it cannot write; ShippedCodeLocator copies the shipped files to the
    user's cache instead, and the fit loads them (the package is made 'unwritable' for the locator:
    the tests run as root, to whom every directory is writable)."""
    prepare = "from leansvm.core import jit\njit._writable = lambda directory: False"
    compiled, _ = _run(COUNT_AND_FIT.replace("PREPARE", prepare), _fresh_user(tmp_path))
    assert compiled == []
    copied = list((tmp_path / "home" / ".cache" / "numba").rglob("*.nbc"))
    assert copied, "the shipped machine code was not copied to the user's cache"


NOTICE = r"""
import json
from leansvm import progress
from leansvm.budget.merging import merge_alpha
shown = []
original = progress.Progress.show_compiling
progress.Progress.show_compiling = lambda self, c: (shown.append(c), original(self, c))
with progress.Progress(total=2, desc="fit", enabled=True) as bar:
    merge_alpha(0.5, 1.0, -0.5, 0.3)            # compiles (an empty NUMBA_CACHE_DIR)
    bar.update()
    merge_alpha(0.5, 1.0, -0.5, 0.3)            # compiled: nothing shown
    bar.update()
from leansvm.budget.merging import merge_degradation
merge_degradation(0.5, 1.0, -0.5, 0.3)          # compiles again, outside any bar: no second notice
print(json.dumps(shown))
"""


def test_a_first_compilation_is_announced_once_with_its_reason_and_shown_on_the_bar(tmp_path):
    """With ``NUMBA_CACHE_DIR`` set numba looks there and compiles: one line says so and why, the open bar
    shows "compiling" while it runs (start and end of the outermost compilation only)."""
    env = _fresh_user(tmp_path, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    shown, stderr = _run(NOTICE, env)
    notices = [line for line in stderr.splitlines() if "leansvm: compiling" in line]
    assert len(notices) == 1, stderr
    assert "NUMBA_CACHE_DIR is set" in notices[0]
    assert shown == [True, False]


def test_mismatch_names_what_differs(monkeypatch):
    monkeypatch.setattr(jit.config, "CACHE_DIR", "")
    here = {"numba": "0.68.1", "python": "3.11", "triple": "x86_64-unknown-linux-gnu", "cpu": "znver5",
            "features": "+avx2,+avx512f"}
    assert jit.mismatch(dict(here), here) is None
    assert "no compiled code" in jit.mismatch({}, here)
    assert "numba 0.67.0" in jit.mismatch({**here, "numba": "0.67.0"}, here)
    assert "skylake" in jit.mismatch({**here, "cpu": "skylake"}, here)
    assert "other features" in jit.mismatch({**here, "features": "+avx2,-avx512f"}, here)
    monkeypatch.setattr(jit.config, "CACHE_DIR", "/somewhere")
    assert "NUMBA_CACHE_DIR" in jit.mismatch(dict(here), here)
