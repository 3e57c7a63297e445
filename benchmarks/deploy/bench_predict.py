"""Prediction cost: one-row latency and batch throughput of every model family, against LIBSVM,
ONNX Runtime and the arithmetic floor, and the start of a new process that fits one model.

Models, per set:

* **exact**: LIBSVM (scikit-learn ``SVC``) at the set's C and gamma (``docs/datasets.md``; iris:
  ``SVC()``'s defaults on standardised rows); the same model is read into leansvm
  (``expansion_from_sklearn``), exported by ``leansvm.io.to_onnx`` (float32 MatMul graph) and by
  skl2onnx from scikit-learn's estimator (its ``SVMClassifier`` operator), so all four sides
  evaluate one expansion;
* **budgeted families** (``--families``, magic by default): BudgetSVC, BSGDClassifier, ReducedSVC
  and CompressedSVC, each at ``--size`` vectors, predicted by leansvm and by ONNX Runtime.

Per model and side: the median and 99th percentile of ``predict`` on one row (``--calls`` calls, a
different test row each), and batch throughput (rows per second predicting the whole test set, best
of ``--repeat``). The floor is 2 m d flops per row (the kernel's inner products of m vectors of d
features) at the GEMM rate measured in the same run (a float64 2048 x 2048 product, leansvm's
threads). A process start: a new Python process that imports the library, fits ``SVC()`` on iris
and predicts one row, scikit-learn against leansvm, interleaved, median wall time of
``--starts`` each; a third process is scikit-learn's with numba imported and its runtime started
(what leansvm's first load of compiled code needs: ``leansvm.core.jit._runtime_ready``), to show
numba's share of the difference, and a fourth leansvm's with numba's whole CPU target refreshed
first, as numba's own loading of cached code would do.

Threads: leansvm and ONNX Runtime use all cores (their defaults; ONNX Runtime's threads do not spin
between runs), LIBSVM's prediction is single-threaded; the GEMM rate is measured at all cores.

    python benchmarks/deploy/bench_predict.py
    python benchmarks/deploy/bench_predict.py --sets iris --families --starts 3
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import finish_run, libsvm_input, race  # noqa: E402

from leansvm import datasets  # noqa: E402
from leansvm.io import to_onnx  # noqa: E402

from bench_onnx import leansvm_model  # noqa: E402

FAMILY_SIZE = 256

START_SCRIPT = """
import time
t0 = time.perf_counter()
from sklearn.datasets import load_iris
X, y = load_iris(return_X_y=True)
from {module} import SVC
{numba}
t1 = time.perf_counter()
SVC().fit(X, y).predict(X[:1])
print(t1 - t0, time.perf_counter() - t1)
"""
#: the scikit-learn process with numba imported and its runtime started, as leansvm's first load of compiled code
NUMBA_SETUP = ("import numba\nfrom numba.core.registry import cpu_target\nfrom numba.core.runtime import rtsys\n"
               "rtsys.initialize(cpu_target.target_context)")
#: leansvm with numba's whole CPU target refreshed first, as numba's own loading of cached code does
#: (``leansvm.core.jit._runtime_ready`` leaves the refresh to a compilation)
NUMBA_REFRESH = "from numba.core.registry import cpu_target\ncpu_target.target_context.refresh()"
START_SIDES = (("sklearn", "sklearn.svm", ""), ("leansvm", "leansvm", ""), ("sklearn_numba", "sklearn.svm", NUMBA_SETUP),
               ("leansvm_refresh", "leansvm", NUMBA_REFRESH))


def gemm_rate(n: int = 2048, repeat: int = 3) -> float:
    """Float64 GEMM flops per second: the best of ``repeat`` n x n products."""
    a = np.random.default_rng(0).standard_normal((n, n))
    best = min(_timed(lambda: a @ a) for _ in range(repeat))
    return 2.0 * n**3 / best


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def one_row_latency(predict, X, calls: int) -> tuple[float, float]:
    """(median, 99th percentile) seconds of ``predict`` on one row, a different row each call."""
    rows = [np.ascontiguousarray(X[i % X.shape[0]:i % X.shape[0] + 1]) for i in range(calls)]
    predict(rows[0])
    times = np.empty(calls)
    for i, row in enumerate(rows):
        t0 = time.perf_counter()
        predict(row)
        times[i] = time.perf_counter() - t0
    return float(np.median(times)), float(np.percentile(times, 99))


def ort_session(onnx_model):
    """An ONNX Runtime session whose threads sleep between runs: spinning ones (its default) would take
    the cores from the side timed after it."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(onnx_model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def ort_predict(onnx_model):
    """A callable that runs the graph on float32 rows and returns its first output (the labels)."""
    sess = ort_session(onnx_model)
    name = sess.get_inputs()[0].name
    return lambda X: sess.run(None, {name: np.asarray(X, dtype=np.float32)})[0]


def skl2onnx_predict(svc, d: int):
    from skl2onnx import to_onnx as skl_to_onnx

    return ort_predict(skl_to_onnx(svc, np.zeros((1, d), dtype=np.float32), options={id(svc): {"zipmap": False}}))


def load_set(name: str):
    """(X_train, y_train, X_test, C, gamma): iris standardised at SVC()'s defaults, else the set's own."""
    if name == "iris":
        from sklearn.datasets import load_iris
        from sklearn.preprocessing import StandardScaler

        X, y = load_iris(return_X_y=True)
        X = StandardScaler().fit_transform(X)
        return X, y, X, 1.0, "scale"
    ds = datasets.load(name)
    X_test = ds.X_test.toarray() if sp.issparse(ds.X_test) else np.asarray(ds.X_test, dtype=np.float64)
    return ds.X_train, ds.y_train, X_test, ds.C, ds.gamma


def measure(row: dict, sides: dict, X, calls: int, repeat: int, floor_rows_s: float) -> dict:
    """Latency and throughput of each side (name -> predict callable) into ``row``."""
    for side, predict in sides.items():
        row[f"{side}_one_row_median_us"], row[f"{side}_one_row_p99_us"] = \
            (1e6 * t for t in one_row_latency(predict, X, calls))
    times, _ = race({side: (lambda p=predict: p(X)) for side, predict in sides.items()}, repeat=repeat)
    for side, t in times.items():
        row[f"{side}_rows_per_s"] = X.shape[0] / t
        row[f"{side}_share_of_floor"] = row[f"{side}_rows_per_s"] / floor_rows_s
    return row


def exact_row(name: str, calls: int, repeat: int, rate: float) -> dict:
    from sklearn.svm import SVC as SkSVC

    X, y, X_test, C, gamma = load_set(name)
    svc = SkSVC(C=C, gamma=gamma).fit(libsvm_input(X), y)
    model = leansvm_model(svc)
    m, d = model.expansion_.n_support, X_test.shape[1]
    floor = rate / (2.0 * m * d)
    sides = {"leansvm": model.predict, "libsvm": svc.predict,
             "ort_leansvm": ort_predict(to_onnx(model, method="matmul", dtype=np.float32)),
             "ort_skl2onnx": skl2onnx_predict(svc, d)}
    row = {"set": name, "family": "exact", "n_vectors": m, "d": d, "classes": len(svc.classes_),
           "n_test": X_test.shape[0], "floor_rows_per_s": floor}
    row = measure(row, sides, X_test, calls, repeat, floor)
    row["labels_equal"] = bool(np.array_equal(model.predict(X_test), svc.predict(X_test)))
    return row


def family_models(C, gamma, size: int) -> dict:
    """Each budgeted family, unfitted, at ``size`` vectors (the compressed one from leansvm's exact SVC at
    the same C and gamma)."""
    from leansvm import SVC, BSGDClassifier, BudgetSVC, CompressedSVC, ReducedSVC

    return {
        "BudgetSVC": BudgetSVC(budget=size, C=C, gamma=gamma),
        "BSGDClassifier": BSGDClassifier(budget=size, C=C, gamma=gamma, random_state=0),
        "ReducedSVC": ReducedSVC(n_vectors=size, C=C, gamma=gamma, random_state=0),
        "CompressedSVC": CompressedSVC(estimator=SVC(C=C, gamma=gamma), n_sv=size, random_state=0),
    }


def family_rows(name: str, size: int, calls: int, repeat: int, rate: float) -> list:
    X, y, X_test, C, gamma = load_set(name)
    rows = []
    for family, estimator in family_models(C, gamma, size).items():
        t0 = time.perf_counter()
        estimator.fit(X, y)
        m, d = estimator.expansion_.n_support, X_test.shape[1]
        floor = rate / (2.0 * m * d)
        row = {"set": name, "family": family, "n_vectors": m, "d": d, "classes": len(estimator.classes_),
               "n_test": X_test.shape[0], "fit_s": time.perf_counter() - t0, "floor_rows_per_s": floor}
        sides = {"leansvm": estimator.predict,
                 "ort_leansvm": ort_predict(to_onnx(estimator, method="matmul", dtype=np.float32))}
        rows.append(measure(row, sides, X_test, calls, repeat, floor))
        print(family, f"{m} vectors", {k: round(v, 3) for k, v in row.items() if k.endswith("_us")}, flush=True)
    return rows


def process_starts(starts: int) -> dict:
    """Median wall seconds of a new process importing, fitting SVC() on iris and predicting a row."""
    walls = {side: [] for side, _, _ in START_SIDES}
    parts = {side: [] for side, _, _ in START_SIDES}
    for _ in range(starts):
        for side, module, numba in START_SIDES:
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", START_SCRIPT.format(module=module, numba=numba)], check=True,
                                 capture_output=True, text=True, env=dict(os.environ)).stdout
            walls[side].append(time.perf_counter() - t0)
            parts[side].append([float(v) for v in out.split()])
    row = {"set": "iris", "family": "process start", "starts": starts}
    for side in walls:
        row[f"{side}_process_s"] = float(np.median(walls[side]))
        row[f"{side}_import_s"], row[f"{side}_fit_predict_s"] = (float(v) for v in np.median(parts[side], axis=0))
    row["extra_s"] = row["leansvm_process_s"] - row["sklearn_process_s"]
    row["numba_extra_s"] = row["sklearn_numba_process_s"] - row["sklearn_process_s"]
    row["refresh_extra_s"] = row["leansvm_refresh_process_s"] - row["sklearn_process_s"]
    return row


COLUMNS = [("set", "set", "s"), ("family", "model", "s"), ("n_vectors", "m", "d"), ("d", "d", "d"),
           ("leansvm_one_row_median_us", "leansvm 1 row us", ".0f"),
           ("libsvm_one_row_median_us", "LIBSVM 1 row us", ".0f"),
           ("ort_leansvm_one_row_median_us", "ORT 1 row us", ".0f"),
           ("ort_skl2onnx_one_row_median_us", "skl2onnx 1 row us", ".0f"),
           ("leansvm_rows_per_s", "leansvm rows/s", ".0f"), ("libsvm_rows_per_s", "LIBSVM rows/s", ".0f"),
           ("ort_leansvm_rows_per_s", "ORT rows/s", ".0f"), ("ort_skl2onnx_rows_per_s", "skl2onnx rows/s", ".0f"),
           ("floor_rows_per_s", "floor rows/s", ".0f")]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["iris", "magic", "letter"])
    parser.add_argument("--families", nargs="*", default=["magic"], help="sets the budgeted families are fitted on")
    parser.add_argument("--size", type=int, default=FAMILY_SIZE, help="vectors of each budgeted model")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--starts", type=int, default=15)
    args = parser.parse_args(argv)
    rate = gemm_rate()
    print(f"GEMM {rate / 1e9:.1f} GFLOP/s", flush=True)
    rows = []
    for name in args.sets:
        rows.append(exact_row(name, args.calls, args.repeat, rate))
        print({k: round(v, 1) if isinstance(v, float) else v for k, v in rows[-1].items()}, flush=True)
    for name in args.families:
        rows += family_rows(name, args.size, args.calls, args.repeat, rate)
    start = process_starts(args.starts) if args.starts else None
    if start:
        print(start, flush=True)
    for row in rows:
        row["gemm_flops_per_s"] = rate
    finish_run(rows + ([start] if start else []), COLUMNS, "prediction", markdown=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
