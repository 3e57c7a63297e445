"""Helpers shared by the benchmark runners: timing, LIBSVM models as expansions, dual objectives, output.

Nothing here is timed against anything: it measures, converts and writes.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from leansvm import KernelExpansion
from leansvm.io import atomic_write
from leansvm.core.multiclass import predict_index

#: where every benchmark writes its JSON; ``LEANSVM_BENCH_RESULTS`` moves it (``suite.py run --quick``
#: writes elsewhere, so that a smoke run never becomes a figure of the results page)
RESULTS_DIR = Path(os.environ.get("LEANSVM_BENCH_RESULTS") or Path(__file__).resolve().parent / "results")


# -- data -------------------------------------------------------------------------------------
#: the regression sets and their gamma; any other name is a classification set of leansvm.datasets
REGRESSION_GAMMA = {"diamonds": 0.01, "friedman1-10k": 0.03, "friedman1-50k": 0.03}
#: the one-class sets and the class trained on
ONE_CLASS_LABEL = {"magic": "g", "satimage": 1, "a9a": -1}


def load_regression(name):
    """(X_train, z_train, X_test, z_test) of ``leansvm.datasets.load(name)``: X and z standardised on
    the training part."""
    from leansvm import datasets
    ds = datasets.load(name)
    return ds.X_train, ds.y_train, ds.X_test, ds.y_test


# -- the main job's promise ---------------------------------------------------------------------
#: the sets the promise is measured on, per task: every classification set of the benchmark definitions
#: (docs/datasets.md) and the regression sets; each with PROMISE_SEEDS split seeds
PROMISE_SETS = {"classification": ("a9a", "banana", "letter", "magic", "mushroom", "optdigits", "page-blocks0",
                                   "penbased", "satimage", "splice", "twonorm", "wdbc"),
                "regression": ("diamonds", "friedman1-10k")}
#: split seeds per set in the promise benchmark
PROMISE_SEEDS = 5
#: each task's realised figure in a row of ``bench_main_job.py`` (points; percent of the exact model's RMSE)
REALISED = {"classification": "realised_drop_points", "regression": "realised_increase_pct"}


def task_rows(rows, task: str) -> list:
    """The runs of ``task`` that ended without an error (rows without a task are classification runs)."""
    return [r for r in rows if "error" not in r and r.get("task", "classification") == task]


def promise_counts(rows, task: str, promised: float) -> dict:
    """How well the runs of ``task`` among ``rows`` (:func:`task_rows`) kept a promise of ``promised``
    (points; regression: percent). Runs within the promise, within it + 0.5 and + 1, the largest excess
    and realised figure, and how many returned a cheaper model than the exact one with the median share
    of the exact model's vectors among those."""
    rows, realised = task_rows(rows, task), REALISED[task]
    excess = [r[realised] - promised for r in rows]
    cheaper = [r for r in rows if r["kind"] != "exact"]
    ratios = sorted(r["returned_n_sv"] / max(r["exact_n_sv"], 1) for r in cheaper)
    return {"runs": len(rows), "within": sum(e <= 1e-9 for e in excess),
            "within_half": sum(e <= 0.5 + 1e-9 for e in excess), "within_one": sum(e <= 1.0 + 1e-9 for e in excess),
            "largest_excess": max(excess, default=None), "largest": max((r[realised] for r in rows), default=None),
            "cheaper": len(cheaper), "median_ratio": ratios[len(ratios) // 2] if ratios else None}


# -- timing ------------------------------------------------------------------------------------
def race(contenders: dict, repeat: int = 1, budget_s: float = 20.0) -> tuple[dict, dict]:
    """Run each callable ``repeat`` times, interleaved, and keep the best time of each.

    Interleaving (a, b, a, b, ...) lets both sides see the same machine load,
    which matters on shared machines. Repetition stops early once ``budget_s``
    seconds have been spent (every contender runs at least once).
    Returns ``(best seconds by name, last result by name)``.
    """
    best = {name: float("inf") for name in contenders}
    results = {}
    spent = 0.0
    for r in range(max(1, repeat)):
        if r > 0 and spent > budget_s:
            break
        for name, fn in contenders.items():
            t0 = time.perf_counter()
            results[name] = fn()
            elapsed = time.perf_counter() - t0
            spent += elapsed
            best[name] = min(best[name], elapsed)
    return best, results


# -- LIBSVM (scikit-learn SVC) models as kernel expansions ------------------------------------
def libsvm_input(X):
    """scikit-learn's SVC rejects int64 sparse indices (load_svmlight_file's output): cast to int32."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        X.indices = X.indices.astype(np.int32)
        X.indptr = X.indptr.astype(np.int32)
    return X


class ExpansionClassifier:
    """A tiny predictor over an expansion: one-vs-one votes (LIBSVM's rule) or the binary sign."""

    def __init__(self, expansion: KernelExpansion, classes, strategy: str = "ovo"):
        self.expansion = expansion
        self.classes_ = np.asarray(classes)
        self.strategy = strategy

    def decision_function(self, X):
        return self.expansion.decision_function(X)

    def predict(self, X):
        raw = self.expansion.decision_function(X)
        return self.classes_[predict_index(raw, len(self.classes_), self.strategy)]


def libsvm_exact(X, y, Xt, yt, C, gamma):
    """(test accuracy, #SV) of LIBSVM (scikit-learn ``SVC``, 500 MB of cache) at (C, gamma): the
    exact model grid.py's choice is judged by."""
    from sklearn.svm import SVC

    model = SVC(C=C, gamma=gamma, cache_size=500).fit(libsvm_input(X), y)     # int32 sparse indices (a9a)
    return float(np.mean(model.predict(libsvm_input(Xt)) == yt)), int(model.n_support_.sum())


def relative_difference(a, b) -> np.ndarray:
    """(a - b) / |b| element-wise (b is the reference)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return (a - b) / np.maximum(np.abs(b), np.finfo(float).tiny)


# -- machine and output -------------------------------------------------------------------------------
def machine_info() -> dict:
    import numba
    import sklearn

    import leansvm

    info = {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "scikit-learn": sklearn.__version__,
        "numba": numba.__version__,
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "leansvm": leansvm.__version__,
    }
    info["thread_env"] = {k: os.environ[k] for k in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS",
                                                       "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
                          if k in os.environ}
    try:
        import numba as _nb
        info["numba_threading_layer"] = _nb.threading_layer()
    except ValueError:  # no parallel region has run yet
        pass
    try:
        info["load_average"] = list(os.getloadavg())
    except OSError:  # pragma: no cover - not on every platform
        pass
    try:
        from threadpoolctl import threadpool_info
        info["blas"] = [{k: pool.get(k) for k in ("internal_api", "version", "num_threads", "threading_layer",
                                                    "architecture")}
                        for pool in threadpool_info()]
    except Exception:  # pragma: no cover - threadpoolctl comes with scikit-learn
        pass
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return info


def write_json_atomic(path: Path, payload) -> None:
    """Write JSON to ``path`` through leansvm's atomic writer (temporary file + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, encoding="utf-8") as fh:
        json.dump(payload, fh, indent=1, default=_json_default)
        fh.write("\n")


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def _cells(rows: list[dict], columns: list[tuple[str, str, str]]) -> list[list[str]]:
    """Formatted cells of a table; missing values print as '-', booleans as yes/NO."""
    cells = []
    for row in rows:
        line = []
        for key, _, spec in columns:
            value = row.get(key)
            if value is None or (isinstance(value, float) and np.isnan(value)):
                line.append("-")
            elif isinstance(value, bool):
                line.append("yes" if value else "NO")
            else:
                line.append(format(value, spec))
        cells.append(line)
    return cells


def format_table(rows: list[dict], columns: list[tuple[str, str, str]]) -> str:
    """A plain-text table; ``columns`` are (key, header, format spec)."""
    cells = _cells(rows, columns)
    headers = [header for _, header, _ in columns]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(headers)]

    def fmt(values):
        return "  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(values, widths)))

    return "\n".join([fmt(headers), fmt(["-" * w for w in widths])] + [fmt(c) for c in cells])


def markdown_table(rows: list[dict], columns: list[tuple[str, str, str]]) -> str:
    """The same table in Markdown."""
    lines = ["| " + " | ".join(h for _, h, _ in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(line) + " |" for line in _cells(rows, columns)]
    return "\n".join(lines)


def finish_run(rows: list[dict], columns, name: str, markdown: bool = True) -> Path:
    """Print the run's table (and its Markdown), write ``results/<name>-<time>.json``; return the path."""
    print()
    print(format_table(rows, columns))
    if markdown:
        print()
        print(markdown_table(rows, columns))
    path = RESULTS_DIR / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    write_json_atomic(path, {"machine": machine_info(), "rows": rows})
    print(f"\nwrote {path}")
    return path
