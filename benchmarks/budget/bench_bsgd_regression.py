"""Budgeted SGD regression: ``leansvm.BSGDRegressor`` against exact SVR (LIBSVM through
scikit-learn's ``SVR``), Nystroem + Ridge and LinearSVR.

    python benchmarks/budget/bench_bsgd_regression.py [--sets friedman1-50k diamonds] [--budget 500]

Data and SVR settings of ``exact/bench_regression.py`` (../shared/benchmarks.md "Regression": X and y
standardised on the training part; C = 10, epsilon = 0.1, gamma 0.03 friedman1 / 0.01
diamonds). Sides, all one thread, in one process one after another: LIBSVM (exact SVR, the
reference RMSE and time), BSGDRegressor with merge (M = 2, the defaults: one epoch, refit) and
with removal, Nystroem (as many components as the budget, same gamma) + Ridge (alpha = 1 /
(2 C)), LinearSVR (C = 10, epsilon 0.1). Per row: fit
seconds, vectors, test RMSE and R², RMSE against LIBSVM's (percent) and LIBSVM's time over
the side's. JSON to benchmarks/results/bsgd-regression-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import REGRESSION_GAMMA, finish_run, load_regression, machine_info


def sides(gamma, budget, n):
    import sklearn.svm as sk
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    import leansvm
    return [("libsvm SVR", lambda: sk.SVR(C=10.0, epsilon=0.1, gamma=gamma)),
            (f"BSGDRegressor B={budget} merge", lambda: leansvm.BSGDRegressor(
                budget=budget, C=10.0, epsilon=0.1, gamma=gamma, random_state=0)),
            (f"BSGDRegressor B={budget} removal", lambda: leansvm.BSGDRegressor(
                budget=budget, C=10.0, epsilon=0.1, gamma=gamma, maintenance="removal", random_state=0)),
            (f"Nystroem {budget} + Ridge", lambda: make_pipeline(
                Nystroem(gamma=gamma, n_components=budget, random_state=0), Ridge(alpha=1 / 20.0))),
            ("LinearSVR", lambda: sk.LinearSVR(C=10.0, epsilon=0.1, dual="auto", max_iter=10000, random_state=0))]


def n_vectors(model):
    if hasattr(model, "expansion_"):
        return int(model.expansion_.n_support)
    if hasattr(model, "support_"):
        return int(np.size(model.support_))
    if hasattr(model, "steps"):
        return int(model.steps[0][1].n_components)
    return 0


def run(name, budget):
    X, z, X_te, z_te = load_regression(name)
    gamma = REGRESSION_GAMMA[name]
    rows = []
    for side, make in sides(gamma, budget, X.shape[0]):
        model = make()
        t = time.perf_counter()
        with threadpool_limits(1):
            model.fit(X, z)
        seconds = time.perf_counter() - t
        rmse = float(np.sqrt(np.mean((model.predict(X_te) - z_te) ** 2)))
        rows.append({"set": name, "side": side, "n_train": X.shape[0], "fit_s": seconds, "n_sv": n_vectors(model),
                     "rmse": rmse, "r2": 1 - rmse ** 2 / float(np.var(z_te))})
        print(rows[-1], flush=True)
    ref = rows[0]
    for r in rows:
        r["rmse_vs_libsvm_pct"] = 100 * (r["rmse"] / ref["rmse"] - 1)
        r["libsvm_time_ratio"] = ref["fit_s"] / r["fit_s"]
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=["friedman1-50k"])
    parser.add_argument("--budget", type=int, default=500)
    args = parser.parse_args()
    rows = []
    for name in args.sets:
        rows += run(name, args.budget)
    columns = [("set", "set", "s"), ("side", "side", "s"), ("n_train", "n", "d"), ("fit_s", "fit s", ".2f"),
               ("n_sv", "vectors", "d"), ("rmse", "test RMSE", ".4f"), ("r2", "R2", ".4f"),
               ("rmse_vs_libsvm_pct", "RMSE vs LIBSVM %", "+.2f"), ("libsvm_time_ratio", "LIBSVM / side", ".1f")]
    finish_run(rows, columns, "bsgd-regression")
    print(machine_info())


if __name__ == "__main__":
    main()
