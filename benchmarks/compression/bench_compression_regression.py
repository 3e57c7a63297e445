"""Compressed SVR: ``leansvm.compress`` on epsilon-SVR models at 10 % and 2 % of their
support vectors, against the full model.

    python benchmarks/compression/bench_compression_regression.py [--sets diamonds friedman1-10k] [--ratios 0.1 0.02]
                                                      [--fit-points sv train]

Data and SVR settings as ``exact/bench_regression.py`` (../shared/benchmarks.md "Regression": X and y
standardised on the training part, C = 10, epsilon = 0.1, gamma 0.01 diamonds / 0.03 friedman1).
Per row: vectors, test RMSE and R² in standardised units, the RMSE increase over the full model
(percent), compression seconds (LARS-SVM selection + gradient support vectors, the defaults) and
prediction seconds on the test part. ``--fit-points``: the points whose full-model outputs the
compressed model fits: ``sv`` the full model's support vectors (``compress``'s default),
``train`` the training rows (``compress(model, X=X_train, y=y_train)``), at most 20,000 of
either (a random subset beyond). One process, one thread for the solver; JSON to
benchmarks/results/compression-regression-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import REGRESSION_GAMMA, finish_run, load_regression, machine_info


def run(name, ratios, fit_points):
    import leansvm
    X, z, X_te, z_te = load_regression(name)
    t = time.perf_counter()
    full = leansvm.SVR(C=10.0, epsilon=0.1, gamma=REGRESSION_GAMMA[name], random_state=0).fit(X, z)
    fit_s = time.perf_counter() - t
    rows = []
    data = (X, z) if fit_points == "train" else (None, None)
    for ratio, model, seconds in [(1.0, full, fit_s)] + [
            (r, *_compressed(full, r, *data)) for r in ratios]:
        t = time.perf_counter()
        pred = model.predict(X_te)
        predict_s = time.perf_counter() - t
        rmse = float(np.sqrt(np.mean((pred - z_te) ** 2)))
        rows.append({"set": name, "fit_points": fit_points if ratio < 1 else "-", "ratio": ratio, "n_sv": int(model.expansion_.n_support), "rmse": rmse,
                     "r2": 1 - rmse ** 2 / float(np.var(z_te)), "seconds": seconds, "predict_s": predict_s})
    base = rows[0]["rmse"]
    for r in rows:
        r["rmse_increase_pct"] = 100 * (r["rmse"] / base - 1)
    return rows


def _compressed(full, ratio, X=None, y=None):
    import leansvm
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # L-BFGS may stop at its iteration cap
        small = leansvm.compress(full, ratio=ratio, X=X, y=y, random_state=0, progress=False)
    return small, time.perf_counter() - t


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=["diamonds", "friedman1-10k"])
    parser.add_argument("--ratios", nargs="+", type=float, default=[0.1, 0.02])
    parser.add_argument("--fit-points", nargs="+", choices=("sv", "train"), default=["sv"])
    args = parser.parse_args()
    rows = []
    for name in args.sets:
        for fit_points in args.fit_points:
            rows += run(name, args.ratios, fit_points)
            for row in rows[-1 - len(args.ratios):]:
                print(row, flush=True)
    columns = [("set", "set", "s"), ("fit_points", "fitted at", "s"), ("ratio", "share of SV", "g"), ("n_sv", "vectors", "d"),
               ("rmse", "test RMSE", ".4f"), ("r2", "R2", ".4f"), ("rmse_increase_pct", "RMSE +%", ".2f"),
               ("seconds", "fit / compress s", ".1f"), ("predict_s", "predict s", ".3f")]
    finish_run(rows, columns, "compression-regression")
    print(machine_info())


if __name__ == "__main__":
    main()
