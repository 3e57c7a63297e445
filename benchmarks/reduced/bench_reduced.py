"""A small model from the labels: ReducedSVC against the exact SVC and Nystroem + LinearSVC of the same size.

    python benchmarks/reduced/bench_reduced.py                        # magic, a9a, synth-200k
    python benchmarks/reduced/bench_reduced.py --sets synth-200k:500,1000,2000

For each set (the C and gamma of docs/datasets.md) and size r: ``ReducedSVC(n_vectors=r)`` (its
defaults: up to 1,000 L-BFGS iterations over growing subsamples, the iterate chosen on a tenth of the
rows held out, gamma learned from the set's), the same with ``max_seconds`` set to the exact fit's
seconds (what it reaches in the exact model's time), Nystroem with r landmarks + ``LinearSVC`` written
as an expansion (``LandmarkSVC``, the same C and gamma), and once per set the exact ``SVC``: fit
seconds (2 threads), vectors, iterations, test accuracy, and each model's accuracy minus the exact
model's in points. JSON to benchmarks/results/reduced-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import finish_run, machine_info

DEFAULT_SETS = ("magic:50,100,200", "a9a:100,200,500", "synth-200k:500,1000,2000")


def timed(make, X, y):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make().fit(X, y)
    return model, time.perf_counter() - t0


def run(name: str, sizes: list[int]) -> list[dict]:
    from leansvm import SVC, ReducedSVC, datasets
    from leansvm.budget.landmarks import LandmarkSVC

    ds = datasets.load(name)
    X, y, Xt, yt = ds.X_train, ds.y_train, ds.X_test, ds.y_test
    exact, seconds = timed(lambda: SVC(C=ds.C, gamma=ds.gamma), X, y)
    exact_acc = float(exact.score(Xt, yt))
    rows = [{"set": name, "n": X.shape[0], "method": "exact SVC", "vectors": int(exact.expansion_.n_support),
             "seconds": seconds, "test_acc": exact_acc, "vs_exact_points": 0.0}]
    print(rows[-1], flush=True)
    exact_seconds = seconds
    for r in sizes:
        for method, make in (("ReducedSVC", lambda: ReducedSVC(n_vectors=r, C=ds.C, gamma=ds.gamma, random_state=0,
                                                              progress=False)),
                             ("ReducedSVC in the exact fit's time",
                              lambda: ReducedSVC(n_vectors=r, C=ds.C, gamma=ds.gamma, random_state=0, progress=False,
                                                 max_seconds=exact_seconds)),
                             ("Nystroem + LinearSVC", lambda: LandmarkSVC(budget=r, C=ds.C, gamma=ds.gamma,
                                                                          random_state=0))):
            model, seconds = timed(make, X, y)
            acc = float(model.score(Xt, yt))
            rows.append({"set": name, "n": X.shape[0], "method": method, "vectors": int(model.expansion_.n_support),
                         "seconds": seconds, "test_acc": acc, "vs_exact_points": 100 * (acc - exact_acc),
                         "gamma": float(model.expansion_.kernel.gamma), "iterations": getattr(model, "n_iter_", None)})
            print(rows[-1], flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=list(DEFAULT_SETS), help="SET:r1,r2,...")
    args = parser.parse_args(argv)
    rows = []
    for spec in args.sets:
        name, sizes = spec.split(":")
        rows += run(name, [int(s) for s in sizes.split(",")])
    columns = [("set", "set", "s"), ("n", "rows", ",d"), ("method", "method", "s"), ("vectors", "vectors", ",d"),
               ("seconds", "fit s", ".1f"), ("iterations", "iterations", "d"), ("test_acc", "test accuracy", ".4f"),
               ("vs_exact_points", "vs exact (points)", "+.2f")]
    finish_run(rows, columns, "reduced")
    print(machine_info())


if __name__ == "__main__":
    main()
