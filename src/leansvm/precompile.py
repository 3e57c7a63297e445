"""Compile leansvm's numba loops before the first fit.

numba compiles a function at its first call for the argument types of that call, and with
``cache=True`` keeps the machine code in ``__pycache__`` for later processes. Without it, the first
process pays the compilation: about a minute on 2 cores (a first ``fit_lean`` on banana 64 s longer
than the second). LIBSVM, which is compiled C, pays nothing.

:func:`run` pays it ahead: it runs each solver once on small data of every kind the solvers are
given (dense and sparse rows, float32 and float64 kernel rows, two and more classes, each problem
type, paths, budgeted SGD, budget SMO), so that every signature a fit uses is in the cache.
The package build runs it on the files it packages (``setup.py``, with ``--build``: once per
build target, into ``leansvm/compiled/<target>/``, :mod:`leansvm.core.jit`), so ``pip install``
ships the code and no user needs this command. It serves an editable install (``pip install -e
.``), or a CPU below every shipped target (its code then goes to numba's own cache). Which
signatures a fit needs is a matter of types, not sizes, so small data suffices; ``tests/test_precompile.py`` checks that typical fits afterwards
compile nothing new.
"""

from __future__ import annotations

import importlib
import time
import warnings
from pathlib import Path

#: the modules that define compiled functions (each imports the compiled helpers it calls)
COMPILED_MODULES = ("core.expf", "core.row_norms", "core.slab_ops", "core.kernels", "core.lapack",
                    "exact.irwls_chunk", "exact.irwls_subproblem", "exact.box_cd", "exact.smo_full",
                    "paths.linear_screening", "budget.sgd_kernels",
                    "budget.merging", "budget.bsgd", "budget.bsgd_crammer_singer", "budget.budget_smo",
                    "budget.budget_shrinking", "budget.smo_steps", "compression.cvm")


def dispatchers() -> dict:
    """{qualified name: numba dispatcher} for every compiled function of leansvm."""
    from numba.core.registry import CPUDispatcher
    found = {}
    for name in COMPILED_MODULES:
        module = importlib.import_module(f"leansvm.{name}")
        for attr, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__:
                found[f"{name}.{attr}"] = value
    return found


def signatures() -> dict:
    """{qualified name: set of argument-type tuples compiled or loaded in this process}."""
    return {name: set(d.overloads) for name, d in dispatchers().items()}


def _data():
    import numpy as np
    import scipy.sparse as sp
    from sklearn.datasets import make_classification
    X, y = make_classification(n_samples=240, n_features=6, n_informative=4, n_classes=3,
                               n_clusters_per_class=1, random_state=0)
    X = (X - X.mean(0)) / X.std(0)
    Xs = sp.csr_matrix(np.where(np.abs(X) < 0.5, 0.0, X))
    return X, Xs, y, (y > 0).astype(int), X[:, 0] + 0.1 * X[:, 1] ** 2


def _workloads():
    """(label, callable) pairs, one per solver and input kind."""
    import numpy as np
    import scipy.sparse as sp

    import leansvm
    from sklearn.datasets import make_classification
    X, Xs, y3, y2, z = _data()
    sv = dict(gamma=0.3, random_state=0)
    jobs = []
    for kind, rows in (("dense", X), ("sparse", Xs)):
        for tol in (1e-3, 1e-5):                                   # float32 and float64 kernel rows
            jobs.append((f"SVC {kind} tol={tol:g}", lambda r=rows, t=tol: leansvm.SVC(C=10, tol=t, **sv).fit(r, y3)))
        jobs += [
            (f"SVR {kind}", lambda r=rows: leansvm.SVR(C=10, **sv).fit(r, z)),
            (f"NuSVR {kind}", lambda r=rows: leansvm.NuSVR(C=10, **sv).fit(r, z)),
            (f"NuSVC {kind}", lambda r=rows: leansvm.NuSVC(nu=0.4, **sv).fit(r, y2)),
            (f"OneClassSVM {kind}", lambda r=rows: leansvm.OneClassSVM(nu=0.2, **sv).fit(r)),
            (f"svm_path {kind}", lambda r=rows: leansvm.svm_path(r, y2, [0.1, 1, 10], gamma=0.3)),
            (f"svm_path ovo {kind}", lambda r=rows: leansvm.svm_path(r, y3, [0.1, 1, 10], gamma=0.3)),
            (f"svr_path {kind}", lambda r=rows: leansvm.svr_path(r, z, [0.1, 1, 10], gamma=0.3)),
            (f"one_class_path {kind}", lambda r=rows: leansvm.one_class_path(r, [0.5, 0.2], gamma=0.3)),
            (f"linear_path {kind}", lambda r=rows: leansvm.linear_path(r, 2 * y2 - 1, [0.1, 1, 10])),
            (f"BudgetSVC {kind}", lambda r=rows: leansvm.BudgetSVC(budget=20, C=10, gamma=0.3).fit(r, y3)),
            (f"BudgetSVC l2 {kind}", lambda r=rows: leansvm.BudgetSVC(budget=20, C=10, norm="l2", gamma=0.3).fit(r, y2)),
            (f"BSGDRegressor {kind}", lambda r=rows: leansvm.BSGDRegressor(budget=20, **sv).fit(r, z)),
            (f"BSGDOneClassSVM {kind}", lambda r=rows: leansvm.BSGDOneClassSVM(budget=20, **sv).fit(r)),
        ]
        for maintenance, solver in (("merge", "golden"), ("merge", "lookup"), ("merge", "gradient"),
                                    ("removal", "golden"), ("projection", "golden")):
            jobs.append((f"BSGDClassifier {maintenance}/{solver} {kind}",
                         lambda r=rows, m=maintenance, s=solver: leansvm.BSGDClassifier(
                             budget=20, maintenance=m, merge_solver=s, **sv).fit(r, y3)))
        jobs.append((f"compress ovo {kind}", lambda r=rows: leansvm.compress(
            leansvm.SVC(C=10, **sv).fit(r, y3), n_sv=12, X=r, y=y3, max_iter=5, random_state=0, progress=False)))
        jobs.append((f"BSGDClassifier crammer-singer {kind}", lambda r=rows: leansvm.BSGDClassifier(
            budget=20, multiclass="crammer_singer", cascade="ranked", **sv).fit(r, y3)))
    # SMO on the whole Q at extreme C: its bursts stop short, Newton steps on the free set follow
    jobs.append(("SVC extreme C", lambda: leansvm.SVC(C=1e10, gamma=1e-5).fit(X, y3)))
    # a row cache's outputs over a few of its columns (gathered sums; wide ones sum whole rows), as
    # the paths' folds ask for the outputs of a few samples, with float32 and float64 rows
    for dtype in ("float32", "float64"):
        jobs.append((f"row cache outputs {dtype}", lambda d=dtype: _few_column_outputs(X, d)))
    # larger problems: a path whose free set is large enough for the compacted coordinate descent
    # (COMPACT_MIN_ACTIVE), budget SMO on a float32 row cache (n^2 doubles above cache_size)
    Xl, yl = make_classification(n_samples=1200, n_features=6, random_state=1)
    # (from a small C: a path that starts from 0 at C >= 1 on this many samples is IRWLS's, binary_path.IRWLS_START_C)
    jobs.append(("svm_path compacted", lambda: leansvm.svm_path(Xl, yl, [0.05, 1.0, 2.0], gamma=0.3, screening=None)))
    # IRWLS (problems above smo_full.MAX_ROWS): float32 and float64 rows, dense and sparse; with
    # shrinking (from irwls.SMALL_PROBLEM samples on): its checks run between compiled chunk bursts
    Xk, yk = make_classification(n_samples=2100, n_features=6, random_state=2)
    Xks = sp.csr_matrix(np.where(np.abs(Xk) < 0.5, 0.0, Xk))
    for rows in (Xk, Xks):
        for tol in (1e-3, 1e-5):
            jobs.append((f"SVC IRWLS tol={tol:g} {'sparse' if rows is Xks else 'dense'}",
                         lambda r=rows, t=tol: leansvm.SVC(C=10, gamma=0.3, tol=t).fit(r, yk)))
    # SVR on a row cache of fewer rows than samples (more than a chunk's): chunks solved from Python,
    # a sample's row read in place for both its variables, rows filled in tiles, float32 and float64 rows
    zk = Xk[:, 0] + 0.1 * Xk[:, 1] ** 2
    for tol in (1e-3, 1e-5):
        jobs.append((f"SVR rows in place tol={tol:g}", lambda t=tol: leansvm.SVR(C=10, gamma=0.3, tol=t, cache_size=4)
                     .fit(Xk, zk)))
    for shrinking in (True, False):
        jobs.append((f"BudgetSVC row cache shrinking={shrinking}", lambda s=shrinking: leansvm.BudgetSVC(
            budget=20, C=10, gamma=0.3, cache_size=1, shrinking=s).fit(Xl, yl)))
    return jobs


def _few_column_outputs(X, dtype):
    import numpy as np
    from leansvm.core.kernels import Kernel, KernelRowCache
    cache = KernelRowCache(Kernel("rbf", gamma=0.3), X, 1.0, dtype=np.dtype(dtype))
    return cache.outputs(np.arange(5), np.ones(5), np.arange(3))


def run(verbose: bool = False) -> dict:
    """Run every workload once (warnings silenced); {'seconds', 'signatures', 'failed'}."""
    start = time.perf_counter()
    failed = []
    for label, job in _workloads():
        t = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                job()
        except Exception as exc:              # one solver's failure must not stop the others' compilation
            failed.append(f"{label}: {type(exc).__name__}: {exc}")
        if verbose:
            print(f"{time.perf_counter() - t:7.2f} s  {label}", flush=True)
    return {"seconds": time.perf_counter() - start,
            "signatures": sum(len(s) for s in signatures().values()), "failed": failed}


def compile_from(folder, modules=None) -> dict:
    """Compile every signature that another target's folder holds code for (of ``modules``, default
    all), without running anything: a target this machine's CPU cannot execute.
    {'seconds', 'signatures', 'failed'}."""
    start, failed = time.perf_counter(), []
    for name, dispatcher in dispatchers().items():
        if modules is not None and name.rsplit(".", 1)[0] not in modules:
            continue
        for signature in dispatcher._cache.shipped_signatures(folder):
            try:
                dispatcher.compile(signature)
            except Exception as exc:
                failed.append(f"{name}{signature}: {type(exc).__name__}: {exc}")
    return {"seconds": time.perf_counter() - start,
            "signatures": sum(len(s) for s in signatures().values()), "failed": failed}


def build(package, environ=None) -> list[str]:
    """The package build's step (``setup.py``): compile into ``package/compiled/<target>`` for every
    target of :func:`leansvm.core.jit.build_targets`, one process per target, as many at once as
    there are cores. Targets this CPU runs execute the workloads; the others then compile the
    signatures those found (:func:`compile_from`). Where this CPU's own tuning uses 512-bit vectors
    the AVX-512 level is tuned so too (:func:`leansvm.core.jit.target_environment`). Returns the failures."""
    import json
    import os
    import subprocess
    import sys
    from leansvm.core import jit
    environ = dict(os.environ if environ is None else environ)
    machine, features = jit.this_machine(), jit.cpu_features()
    targets = jit.build_targets(machine["triple"])
    runs_here = [t for t in targets if t == "native" or jit.why_not(
        {**machine, "cpu": t, "features": ""}, machine, features) is None]
    if not runs_here:
        raise RuntimeError(f"this CPU runs none of the build targets {targets}; "
                           "set LEANSVM_BUILD_TARGETS=native")
    compiled = Path(package) / "compiled"
    failed = []
    wide = jit.host_prefers_wide_vectors()

    def launch(group, extra=()):
        running = []
        for target in group:
            env = {**jit.target_environment(target, environ, wide), "LEANSVM_COMPILE_INTO": str(compiled / target),
                   "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
            env.pop("NUMBA_CACHE_DIR", None)
            running.append((target, subprocess.Popen(
                [sys.executable, "-m", "leansvm.precompile", "--target", target, *extra], env=env,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
            if len(running) >= (os.cpu_count() or 1):
                failed.extend(_finish(*running.pop(0)))
        for target, process in running:
            failed.extend(_finish(target, process))

    launch(runs_here)
    launch([t for t in targets if t not in runs_here], ("--compile-from", str(compiled / runs_here[0])))
    for target in targets:
        if not (compiled / target / "target.json").exists():
            failed.append(f"{target}: no code was recorded")
    print(json.dumps({t: json.loads((compiled / t / "target.json").read_text())["seconds"]
                      for t in targets if (compiled / t / "target.json").exists()}))
    return failed


def _finish(target, process) -> list[str]:
    output = process.communicate()[0]
    print(f"[{target}] " + output.strip().replace("\n", f"\n[{target}] "), flush=True)
    return [] if process.returncode == 0 else [f"{target}: exit status {process.returncode}"]


def main() -> int:
    import argparse
    parser = argparse.ArgumentParser(prog="python -m leansvm.precompile", description=__doc__.split("\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="time each workload")
    parser.add_argument("--build", action="store_true",
                        help="compile for every build target into the package's compiled/ (the build does)")
    parser.add_argument("--target", help=argparse.SUPPRESS)          # one target of --build
    parser.add_argument("--compile-from", help=argparse.SUPPRESS)    # its signatures from that folder
    args = parser.parse_args()
    if args.build:
        failed = build(Path(__file__).resolve().parent)
        for line in failed:
            print(f"leansvm: precompile step failed: {line}")
        return 1 if failed else 0
    result = compile_from(args.compile_from) if args.compile_from else run(verbose=args.verbose)
    print(f"leansvm: {result['signatures']} compiled signatures ready in {result['seconds']:.1f} s")
    for line in result["failed"]:
        print(f"leansvm: precompile step failed: {line}")
    if args.target and not result["failed"]:
        record(args.target, result)
    return 1 if result["failed"] else 0


def record(target: str, result: dict):
    """Write :func:`leansvm.core.jit.this_machine` with the target's name, the compilation's seconds
    and signatures to ``compiled/<target>/target.json`` (atomically)."""
    import json
    import os
    from leansvm.core import jit
    folder = Path(jit.BUILD_INTO)
    folder.mkdir(parents=True, exist_ok=True)
    data = {**jit.this_machine(), "target": target, "seconds": round(result["seconds"], 1),
            "signatures": result["signatures"]}
    temporary = folder / "target.json.tmp"
    temporary.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(temporary, folder / "target.json")


if __name__ == "__main__":
    raise SystemExit(main())
