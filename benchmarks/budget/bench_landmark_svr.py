"""Nystroem landmarks + ridge regression (``LandmarkSVR``) at scale: landmarks x ridge rows, against BSGD.

    python benchmarks/budget/bench_landmark_svr.py [--dataset friedman1-1M] [--landmarks 262 654 1309 2618]
                                                   [--rows 50000 100000 200000] [--bsgd 262]
    python benchmarks/budget/bench_landmark_svr.py --gcv --scaling range --gamma 0.03334 --landmarks 1181 2362 \
                                                   --Cs 62.5 250 1000 4000 16000 64000 1e6 --bsgd

On the dataset's training part less a 20 % hold-out (as the main job's fit part: 800,000 rows of
friedman1-1M), at the (C, gamma, epsilon) the main job chose there (C = 1000, gamma = 0.0111,
epsilon = 0.1): ``LandmarkSVR`` with each number of landmarks, its ridge problem solved on each
number of rows (``RIDGE_ROWS``), and ``BSGDRegressor`` with the ``--bsgd`` budgets (a pass over
every fit row, then its ridge refit on 100,000). Test RMSE in standardised units and fit seconds,
on every core. This is the measurement behind ``landmarks.RIDGE_ROWS`` and behind Nystroem as a
family of the regression job. Writes ``benchmarks/results/landmark-svr-<timestamp>.json``.

``--gcv``: instead of the rows, each number of landmarks at each C of ``--Cs`` (``RIDGE_ROWS`` rows) and
with C chosen among them by generalized cross-validation (``LandmarkSVR(Cs=...)``): the test RMSE of
each and the GCV scores (the main job passes its SVR's C instead: ``leansvm.job.regression`` says why).
``--scaling range`` maps the raw columns to [-1, 1] as the job does (``--gamma`` in those units).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import RESULTS_DIR  # noqa: E402

#: the main job's choice on friedman1-1M (BENCHMARKS.md, "The main job at scale")
PARAMS = {"C": 1000.0, "gamma": 0.011111766234597064, "epsilon": 0.10004492174370028}


def main(argv=None) -> int:
    import leansvm
    from leansvm.budget import bsgd_regressor, landmarks
    from leansvm.datasets import load
    from leansvm.io import atomic_write

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="friedman1-1M")
    parser.add_argument("--landmarks", type=int, nargs="+", default=[262, 654, 1309, 2618])
    parser.add_argument("--rows", type=int, nargs="+", default=[50000, 100000, 200000])
    parser.add_argument("--bsgd", type=int, nargs="*", default=[262])
    parser.add_argument("--gcv", action="store_true", help="C by GCV against each C of --Cs")
    parser.add_argument("--Cs", type=float, nargs="+", default=[62.5, 250, 1000, 4000, 16000, 64000, 1e6])
    parser.add_argument("--scaling", choices=["standard", "range"], default="standard")
    parser.add_argument("--gamma", type=float, default=PARAMS["gamma"])
    args = parser.parse_args(argv)

    ds = load(args.dataset, standardize=args.scaling == "standard")
    X_train, Xt, y_train, yt = ds.X_train, ds.X_test, ds.y_train, ds.y_test
    if args.scaling == "range":          # the job's columns; the targets in standardised units as above
        from leansvm.preprocessing.scaling import FeatureScaler
        scaler = FeatureScaler("range").fit(X_train)
        X_train, Xt = scaler.transform(X_train), scaler.transform(Xt)
        mean, std = y_train.mean(), y_train.std()
        y_train, yt = (y_train - mean) / std, (yt - mean) / std
    n = X_train.shape[0]
    fit = np.sort(np.random.default_rng(0).permutation(n)[: int(0.8 * n)])
    X, y = X_train[fit], y_train[fit]

    def measured(model):
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start
        return {"seconds": seconds, "test_rmse": float(np.sqrt(np.mean((model.predict(Xt) - yt) ** 2)))}

    rows_out = []
    default_rows = landmarks.RIDGE_ROWS
    for m in args.landmarks if args.gcv else []:
        for C in args.Cs:
            row = {"model": "LandmarkSVR", "vectors": m, "C": C, "ridge_rows": min(default_rows, X.shape[0]),
                   **measured(landmarks.LandmarkSVR(budget=m, C=C, gamma=args.gamma, random_state=0))}
            rows_out.append(row)
            print(json.dumps(row), flush=True)
        model = landmarks.LandmarkSVR(budget=m, gamma=args.gamma, random_state=0, Cs=args.Cs)
        row = {"model": "LandmarkSVR, C by GCV", "vectors": m, "ridge_rows": min(default_rows, X.shape[0]),
               **measured(model), "C": model.C_, "gcv": {str(c): v for c, v in model.gcv_scores_.items()}}
        rows_out.append(row)
        print(json.dumps(row), flush=True)
    try:
        for m in args.landmarks if not args.gcv else []:
            for rows in args.rows:
                landmarks.RIDGE_ROWS = rows
                row = {"model": "LandmarkSVR", "vectors": m, "ridge_rows": min(rows, X.shape[0]),
                       **measured(landmarks.LandmarkSVR(budget=m, C=PARAMS["C"], gamma=PARAMS["gamma"], random_state=0))}
                rows_out.append(row)
                print(json.dumps(row), flush=True)
    finally:
        landmarks.RIDGE_ROWS = default_rows
    for budget in args.bsgd:
        row = {"model": "BSGDRegressor", "vectors": budget, "ridge_rows": min(bsgd_regressor.REFIT_SAMPLE, X.shape[0]),
               **measured(leansvm.BSGDRegressor(budget=budget, random_state=0, **PARAMS))}
        rows_out.append(row)
        print(json.dumps(row), flush=True)

    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / f"landmark-svr-{time.strftime('%Y%m%d-%H%M%S')}.json"
    with atomic_write(out, "w") as f:
        json.dump({"dataset": args.dataset, "fit_rows": int(X.shape[0]), "scaling": args.scaling,
                   "params": {**PARAMS, "gamma": args.gamma}, "rows": rows_out}, f, indent=1)
    print(f"results written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
