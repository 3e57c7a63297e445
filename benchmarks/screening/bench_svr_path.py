"""The screened epsilon-SVR path against LIBSVM's grid over the same C values.

    python benchmarks/screening/bench_svr_path.py [--rows 10000] [--n-C 20]

diamonds (../shared/benchmarks.md "Regression": X and y standardised on the training part;
gamma 0.01, epsilon 0.1), the first ``--rows`` training rows; C on a log grid from 0.01 to 100
(``--n-C`` values). Sides, one thread each, one after another in one process: LIBSVM
(scikit-learn ``SVR`` fitted once per C, tol 1e-3), leansvm's path with the duality-gap rule and
without screening (``leansvm.svr_path``, tol 1e-3). Per C: each side's seconds, support
vectors, test RMSE, the largest prediction difference to LIBSVM's (standardised units) and the
variables screened; for the whole grid and paths also CPU seconds (the process's: one thread shows
as CPU = wall). A one-C path of each kind runs first, so that no timing pays the loading of numba's
compiled code. (The first path after LIBSVM's fits still pays some first touches of memory at its
first C: 0.4-0.9 s against 0.25 s, BENCHMARKS.md.) JSON to benchmarks/results/svr-path-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import finish_run, load_regression, machine_info


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10000)
    parser.add_argument("--n-C", type=int, default=20)
    args = parser.parse_args()
    import sklearn.svm as sk
    import leansvm
    X, z, X_te, z_te = load_regression("diamonds")
    X, z = X[:args.rows], z[:args.rows]
    Cs = np.logspace(-2, 2, args.n_C)
    rows = []
    with threadpool_limits(1):
        for screening in ("gap", None):      # compiled code loaded, memory paged in, before any timing
            leansvm.svr_path(X, z, Cs[:1], gamma=0.01, epsilon=0.1, screening=screening)
        libsvm = []
        for C in Cs:
            t, cpu = time.perf_counter(), time.process_time()
            model = sk.SVR(C=C, gamma=0.01, epsilon=0.1).fit(X, z)
            libsvm.append((time.perf_counter() - t, model, time.process_time() - cpu))
        paths = {}
        for screening in ("gap", None):
            t, cpu = time.perf_counter(), time.process_time()
            paths[screening] = leansvm.svr_path(X, z, Cs, gamma=0.01, epsilon=0.1, screening=screening)
            paths[f"{screening} total"] = time.perf_counter() - t
            paths[f"{screening} cpu"] = time.process_time() - cpu
    for k, C in enumerate(Cs):
        ref = libsvm[k][1].predict(X_te)
        for side, seconds, model, screened in [("libsvm", libsvm[k][0], libsvm[k][1], 0)] + [
                (f"path {s or 'unscreened'}", paths[s][k].solve_seconds + paths[s][k].rule_seconds, paths[s][k].model,
                 paths[s][k].n_screened) for s in ("gap", None)]:
            pred = model.predict(X_te)
            rows.append({"C": float(C), "side": side, "seconds": seconds, "n_sv": int(np.size(model.support_)),
                         "rmse": float(np.sqrt(np.mean((pred - z_te) ** 2))),
                         "max_pred_diff": float(np.max(np.abs(pred - ref))), "screened": int(screened)})
    total = sum(s for s, _, _ in libsvm)
    for s in ("gap", None):
        rows.append({"C": float("nan"), "side": f"path {s or 'unscreened'} (whole path)",
                     "seconds": paths[f"{s} total"], "cpu_seconds": paths[f"{s} cpu"],
                     "libsvm_ratio": total / paths[f"{s} total"]})
    rows.append({"C": float("nan"), "side": "libsvm (whole grid)", "seconds": total,
                 "cpu_seconds": sum(c for _, _, c in libsvm), "libsvm_ratio": 1.0})
    columns = [("C", "C", ".4g"), ("side", "side", "s"), ("seconds", "s", ".2f"), ("cpu_seconds", "CPU s", ".2f"), ("n_sv", "SV", "d"),
               ("rmse", "test RMSE", ".4f"), ("max_pred_diff", "max |pred - LIBSVM|", ".1e"),
               ("screened", "screened variables", "d"), ("libsvm_ratio", "LIBSVM / side", ".2f")]
    finish_run(rows, columns, "svr-path")
    print(machine_info())


if __name__ == "__main__":
    main()
