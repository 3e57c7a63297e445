"""Cheap models on wide, many-class rows: where their time goes, and what a model of 1/5 of the exact
model's vectors costs and tests.

    python benchmarks/reduced/bench_wide.py                      # both parts
    python benchmarks/reduced/bench_wide.py --parts objective     # the per-evaluation cost only

``objective``: seconds per evaluation of ReducedSVC's objective and gradient (one L-BFGS iteration's
work; compression's is the same in :mod:`leansvm.compression.rbf_objective`) on pixels-20k rows, 200
vectors, with the width and the classes changed one at a time: the 784 pixels or their 7 x 7 means
(49 columns), 10 classes (10 outputs) or two (the digit's parity, 1 output). Best of 5 evaluations, on
``--threads`` cores (pinned, BLAS on as many); the rate is 4 N r (d + p) flops over the seconds.

``fifth``: on pixels-60k as ``leansvm fit`` prepares it (svm-scale's ranges, its validation part held
out: 48,000 fit rows; C = 4, gamma = 4 x 'scale' of the scaled rows, the cell the job chose at 600 s), the exact SVC, then at
1/5 of its support vectors: Nystroem landmarks + LinearSVC (``LandmarkSVC``), ReducedSVC stopped at
``--reduced-seconds`` (default 900, past the job's whole budget for it), and compression to
``--compressed-fractions`` of them (default 1/20, a size the job's doubling reaches before 1/5, and 1/5):
fit seconds on every core, accuracy on the job's validation rows (where it judges the promise) and on
the test images, and the drops against the exact model in points.
JSON to benchmarks/results/wide-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import finish_run  # noqa: E402


def objective_rows(threads: int) -> list[dict]:
    from threadpoolctl import threadpool_limits

    from leansvm.core.kernels import Kernel
    from leansvm.datasets import load
    from leansvm.reduced.reduced_svm import HUBER, label_problem, label_targets

    ds = load("pixels-20k")
    X, y, r = ds.X_train, ds.y_train, 200
    pooled = X.reshape(-1, 7, 4, 7, 4).mean(axis=(2, 4)).reshape(-1, 49)
    rng, rows = np.random.default_rng(0), []
    cores = os.cpu_count() or threads
    os.sched_setaffinity(0, set(range(cores - threads, cores)))      # the last cores
    with threadpool_limits(threads):
        for width, Xv in (("784 pixels", X), ("7 x 7 means", pooled)):
            for classes, yv in (("10 classes", y), ("parity", y % 2)):
                F = label_targets(yv, np.unique(yv))
                kernel = Kernel("rbf", gamma=1.0 / (Xv.shape[1] * Xv.var()))
                problem = label_problem(Xv, F, kernel=kernel, n_vectors=r, loss="margin", block_dtype=np.float32,
                                        learn_gamma=False, huber=HUBER)
                Z = Xv[rng.choice(len(Xv), r, replace=False)]
                theta = np.concatenate([Z.ravel(), 0.01 * rng.standard_normal(int(problem.mask.sum())),
                                        np.zeros(F.shape[1])])
                problem.objective(theta)                      # compiled and warm
                seconds = []
                for _ in range(5):
                    t0 = time.perf_counter()
                    problem.objective(theta)
                    seconds.append(time.perf_counter() - t0)
                n, d, p = Xv.shape[0], Xv.shape[1], F.shape[1]
                flops = 4 * n * r * (d + p)
                rows.append({"part": "objective", "width": width, "classes": classes, "rows": n, "d": d,
                             "outputs": p, "vectors": r, "threads": threads, "seconds": min(seconds),
                             "gflops": flops / min(seconds) / 1e9})
                print(rows[-1], flush=True)
    return rows


def fifth_rows(reduced_seconds: float, compressed_fractions) -> list[dict]:
    from leansvm import SVC, ReducedSVC, compress
    from leansvm.budget.landmarks import LandmarkSVC
    from leansvm.core.kernels import resolve_gamma
    from leansvm.datasets import load
    from leansvm.job.data import validation_folds
    from leansvm.preprocessing.scaling import FeatureScaler

    ds = load("pixels-60k")
    fit, val = validation_folds(ds.X_train, ds.y_train, 0.2, 0)[0]
    scaler = FeatureScaler("range").fit(ds.X_train)
    X, X_test = scaler.transform(ds.X_train), scaler.transform(ds.X_test)
    X_fit, y_fit, gamma, rows = X[fit], ds.y_train[fit], 4.0 * resolve_gamma("scale", X), []
    X_val, y_val = X[val], ds.y_train[val]

    def record(name, make):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = make()
        seconds = time.perf_counter() - t0
        accuracy = float(np.mean(model.predict(X_test) == ds.y_test))
        validation = float(np.mean(model.predict(X_val) == y_val))
        rows.append({"part": "fifth", "model": name, "vectors": int(model.expansion_.n_support), "seconds": seconds,
                     "test": accuracy, "drop_points": 100 * (rows[0]["test"] - accuracy) if rows else 0.0,
                     "validation": validation,
                     "validation_drop_points": 100 * (rows[0]["validation"] - validation) if rows else 0.0})
        print(rows[-1], flush=True)
        return model

    exact = record("exact SVC", lambda: SVC(C=4.0, gamma=gamma).fit(X_fit, y_fit))
    m = int(exact.expansion_.n_support) // 5
    compressed_sizes = [int(f * exact.expansion_.n_support) for f in compressed_fractions]
    record(f"Nystroem + LinearSVC ({m})", lambda: LandmarkSVC(budget=m, C=4.0, gamma=gamma, random_state=0)
           .fit(X_fit, y_fit))
    record(f"ReducedSVC ({m}, at most {reduced_seconds:g} s)",
           lambda: ReducedSVC(n_vectors=m, C=4.0, gamma=gamma, max_seconds=reduced_seconds, progress=False,
                              random_state=0).fit(X_fit, y_fit))
    for size in compressed_sizes:
        record(f"compressed ({size})", lambda size=size: compress(exact, n_sv=size, X=X_fit, y=y_fit, random_state=0,
                                                                  progress=False))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", nargs="+", default=["objective", "fifth"], choices=["objective", "fifth"])
    parser.add_argument("--threads", type=int, default=1, help="cores of the objective part")
    parser.add_argument("--reduced-seconds", type=float, default=900.0)
    parser.add_argument("--compressed-fractions", type=float, nargs="*", default=[0.05, 0.2])
    args = parser.parse_args()
    rows = []
    if "objective" in args.parts:
        rows += objective_rows(args.threads)
    if "fifth" in args.parts:
        rows += fifth_rows(args.reduced_seconds, args.compressed_fractions)
    finish_run(rows, [("part", "part", "s"), ("width", "width", "s"), ("classes", "classes", "s"),
                      ("model", "model", "s"), ("vectors", "vectors", "d"), ("seconds", "s", ".3f"),
                      ("gflops", "GFLOP/s", ".0f"), ("test", "test", ".4f"), ("drop_points", "drop", ".2f"),
                      ("validation", "validation", ".4f"), ("validation_drop_points", "val drop", ".2f")], "wide")


if __name__ == "__main__":
    main()
