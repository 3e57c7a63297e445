"""The install step's precompilation covers what typical fits compile."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from leansvm import precompile

# Typical fits, not the precompile workloads: other sizes (above the small-problem and compaction
# thresholds), other parameters, the main job and the command line. Run in a fresh process, so
# that what other tests compiled in this one does not count.
USER_FITS = r"""
import json, sys, warnings
import numpy as np, scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression
warnings.simplefilter("ignore")
from leansvm import precompile
precompile.run()
before = precompile.signatures()

import leansvm
from leansvm.job.classification import fit_lean_classification as fit_lean
X, y = make_classification(n_samples=3000, n_features=10, n_informative=6, n_classes=3, random_state=4)
X = (X - X.mean(0)) / X.std(0)
Xs = sp.csr_matrix(np.where(np.abs(X) < 1.0, 0.0, X).astype(np.float32))
z = X[:, 0] - X[:, 1] ** 2
y2 = np.where(y == 0, "a", "b")
leansvm.SVC().fit(X, y)
leansvm.SVC(C=100, gamma=1.0).fit(Xs, y2)
leansvm.SVR(C=3).fit(X, z)
leansvm.NuSVC(nu=0.5).fit(X[:1500], y2[:1500])
leansvm.OneClassSVM(nu=0.1).fit(Xs)
leansvm.SVCCV(Cs=[0.1, 1, 10, 100], gammas=[0.05, 0.5], cv=3).fit(X[:1200], y2[:1200])
leansvm.svm_path(X[:2500], y2[:2500], [0.01, 0.1, 1, 10, 100], gamma=0.2)
leansvm.BSGDClassifier(budget=50).fit(Xs, y)
leansvm.BudgetSVC(budget=50, C=10).fit(X, y2)
leansvm.BudgetSVC(budget=50, C=10, cache_size=1).fit(X, y2)
fit_lean(X[:1000], y[:1000], X_test=X[2500:], y_test=y[2500:], progress=False)
after = precompile.signatures()
print(json.dumps({k: sorted(map(str, after[k] - before[k])) for k in after if after[k] - before[k]}))
"""


def test_typical_fits_compile_nothing_that_precompile_left_out():
    """Every compiled entry point's argument types in the fits above are among those the
    precompile workloads used, so a first fit after the install step loads, never compiles
    (a callee's types follow from its caller's)."""
    out = subprocess.run([sys.executable, "-c", USER_FITS], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {}


def test_precompile_knows_every_compiled_module_and_runs_every_workload():
    """A module with a numba function that COMPILED_MODULES leaves out would be missed by the
    coverage test above; every workload must run (a failing one compiles less)."""
    package = Path(precompile.__file__).parent
    compiled = {str(p.relative_to(package).with_suffix("")).replace("/", ".")
                for p in package.rglob("*.py") if "njit(" in p.read_text() and p != package / "core" / "jit.py"}
    assert compiled == set(precompile.COMPILED_MODULES)
    assert {n.rsplit(".", 1)[0] for n in precompile.dispatchers()} == set(precompile.COMPILED_MODULES)
    result = precompile.run()
    assert result["failed"] == [] and result["signatures"] > 0


def test_the_work_clock_leaves_out_compilation_once_and_only_when_it_happens():
    """core.clock: compiling a new function (which compiles the jitted function it calls inside its own
    compilation) adds its compile time once; calling it again adds nothing, and the work clock then
    advances with the wall clock."""
    import time

    import numba
    import numpy as np

    from leansvm.core.clock import compile_seconds, work_time

    @numba.njit                        # no cache: compiled here, in this test
    def inner(x):
        return x * x + 1.0

    @numba.njit
    def outer(values):
        total = 0.0
        for v in values:
            total += inner(v)
        return total

    values = np.arange(1000.0)
    wall, compiled = time.perf_counter(), compile_seconds()
    outer(values)
    wall, compiled = time.perf_counter() - wall, compile_seconds() - compiled
    assert 0.0 < compiled <= wall          # counted, and the nested compilation not twice
    assert compiled > 0.5 * wall           # a first call is mostly compilation
    wall, compiled, work = time.perf_counter(), compile_seconds(), work_time()
    for _ in range(200):
        outer(values)
    assert compile_seconds() == compiled
    assert work_time() - work == pytest.approx(time.perf_counter() - wall, rel=0.01, abs=1e-4)
