"""How much can any safe screening rule speed up the C path? An oracle bound.

The goal is a screened path >= 3x faster than the unscreened one (both
with warm start and kernel reuse). A safe rule can at best remove every
sample that is a non-SV at the target C (a_i = 0 or a_i = C c_i at the exact
solution), and it costs >= 0 to evaluate. So the path's solve time with an
*oracle* that hands the solver exactly those sets, before each C, bounds from
below what any safe rule (IT, BT1, BT2, gap, or one not yet invented) can
reach with this solver; unscreened / oracle bounds the speed-up from above.

Method, per binary problem (one-vs-one pairs for multi-class sets, as
``svm_path`` does): (1) ``binary_path(screening=None)`` gives the solution at
every C of the benchmark grid (20 values, 1e-2 .. 1e2); (2) the same path with
``screening='it'`` and ``adaptive=False`` (a reference at every C), where the
rule is replaced by the sets of (1) at that C; (3) the real IT path. Reported:
the sum of ``solve_seconds`` over the grid (warm-start margins and the solve;
references and rules are counted apart, the oracle's as free), and the
fraction of non-SVs each variant screened. Alternating runs, fastest kept.

    python benchmarks/screening/bench_screening_oracle.py --datasets satimage magic --repeat 2

Writes ``benchmarks/results/screening-oracle-<time>.json``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import RESULTS_DIR, format_table, machine_info, write_json_atomic  # noqa: E402

from leansvm import datasets  # noqa: E402
from leansvm.core.kernels import Kernel  # noqa: E402
from leansvm.core.problems import c_svc  # noqa: E402
from leansvm.paths import binary_path as path_module  # noqa: E402
from leansvm.paths.screening import ScreeningResult  # noqa: E402

CS = np.logspace(-2, 2, 20)


def binary_problems(name, max_train=None):
    """(label, X, y in +1/-1) for each one-vs-one pair of ``name`` (the problem itself when binary)."""
    ds = datasets.load(name)
    X, y = ds.X_train, np.asarray(ds.y_train)
    if hasattr(X, "toarray"):
        X = X.toarray()
    if max_train and X.shape[0] > max_train:
        idx = np.random.default_rng(0).choice(X.shape[0], max_train, replace=False)
        X, y = X[idx], y[idx]
    classes = np.unique(y)
    for a, b in itertools.combinations(classes, 2):
        rows = (y == a) | (y == b)
        yield f"{a}/{b}", X[rows], np.where(y[rows] == a, 1.0, -1.0), ds.gamma


class Oracle:
    """Stands in for ``screening.screen``: the exact non-SV sets at each C of the grid."""

    def __init__(self, points):
        self.sets = {}
        for pt in points:
            upper = pt.C * np.ones_like(pt.fit.alpha)
            self.sets[float(pt.C)] = (pt.fit.alpha <= 0.0, (pt.fit.alpha >= upper) & (pt.fit.alpha > 0))

    def __call__(self, ref, C, rule="it", slack=None):
        in_R, in_L = self.sets[float(C)]
        inf = np.full(in_R.shape, np.inf)
        return ScreeningResult(rule, float(C), in_R.copy(), in_L.copy(), -inf, inf, 0.0)


def run_path(X, y, gamma, screening, cache_size, oracle=None):
    real_screen = path_module.screen
    if oracle is not None:
        path_module.screen = oracle
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        points = path_module.binary_path(X, c_svc(y, 1.0), CS, Kernel("rbf", gamma=gamma), screening=screening,
                                         adaptive=oracle is None,
                                         solver_options={"cache_size": cache_size})
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        path_module.screen = real_screen
    return points, wall, cpu


def summarise(points):
    non_sv = sum(pt.n_non_sv for pt in points)
    return {"solve_s": float(sum(pt.solve_seconds for pt in points)),
            "rule_s": float(sum(pt.rule_seconds for pt in points)),
            "screened_fraction": float(sum(pt.n_screened for pt in points) / max(non_sv, 1)),
            "objective": [float(pt.fit.dual_objective) for pt in points]}


def measure(name, max_train, cache_size, repeat):
    totals = {}
    for label, X, y, gamma in binary_problems(name, max_train):
        exact, _, _ = run_path(X, y, gamma, None, cache_size)
        oracle = Oracle(exact)
        for variant in ["none", "oracle", "it"] * repeat:
            points, wall, cpu = run_path(X, y, gamma, None if variant == "none" else "it", cache_size,
                                         oracle if variant == "oracle" else None)
            row = summarise(points)
            row.update(wall_s=wall, cpu_s=cpu)
            best = totals.setdefault((label, variant), row)
            if row["solve_s"] < best["solve_s"]:
                totals[(label, variant)] = row
        gaps = [abs(a - b) / max(abs(b), 1e-12) for a, b in
                zip(totals[(label, "oracle")]["objective"], totals[(label, "none")]["objective"])]
        totals[(label, "oracle")]["max_rel_objective_diff"] = float(max(gaps))
    record = {"dataset": name, "max_train": max_train, "load": os.getloadavg()[0], "pairs": {}}
    for (label, variant), row in totals.items():
        record["pairs"].setdefault(label, {})[variant] = row
    for variant in ("none", "oracle", "it"):
        record[f"{variant}_solve_s"] = sum(p[variant]["solve_s"] for p in record["pairs"].values())
        record[f"{variant}_rule_s"] = sum(p[variant]["rule_s"] for p in record["pairs"].values())
        record[f"{variant}_wall_s"] = sum(p[variant]["wall_s"] for p in record["pairs"].values())
    record["oracle_bound"] = record["none_solve_s"] / record["oracle_solve_s"]
    record["it_speedup_solve"] = record["none_solve_s"] / record["it_solve_s"]
    record["max_rel_objective_diff"] = max(p["oracle"]["max_rel_objective_diff"] for p in record["pairs"].values())
    return record


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["satimage", "magic"])
    parser.add_argument("--max-train", type=int, default=None)
    parser.add_argument("--cache-size", type=float, default=1000.0)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    records = [measure(name, args.max_train, args.cache_size, args.repeat) for name in args.datasets]
    columns = [("dataset", "dataset", ""), ("none_solve_s", "unscreened solve s", ".2f"),
               ("oracle_solve_s", "oracle solve s", ".2f"), ("it_solve_s", "IT solve s", ".2f"),
               ("it_rule_s", "IT rule s", ".2f"), ("oracle_bound", "bound unscr/oracle", ".2f"),
               ("it_speedup_solve", "unscr/IT (solve)", ".2f"), ("max_rel_objective_diff", "oracle obj diff", ".1e"),
               ("load", "load", ".1f")]
    print(format_table(records, columns))
    out = RESULTS_DIR / f"screening-oracle-{time.strftime('%Y%m%d-%H%M%S')}.json"
    write_json_atomic(out, {"machine": machine_info(), "args": vars(args), "records": records})
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
