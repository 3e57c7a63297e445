"""nu-SVC's tolerance steps (``NuSVC._solve_binary``): the margin level r and the seconds of each
warm-started solve when the tolerance tightens by 100 at once or by 10 per step.

    python benchmarks/exact/bench_nu_svc_tolerance.py --sets magic            # all training rows
    python benchmarks/exact/bench_nu_svc_tolerance.py --sets a9a --rows 8000  # the first 8,000 rows

The binary problem of the set's first two classes (label of the larger class +1) at nu = 0.2,
the classification gamma, solved by ``solve_irwls`` at the tolerances (1e-3, 1e-5) and then, from
nothing, at (1e-3, 1e-4, 1e-5); each later solve warm-started from the one before. One thread
(threadpoolctl). A stable r shows the problem is well posed; an r that falls with the tolerance
shows the optimum's r is 0. JSON to benchmarks/results/nu-svc-tolerance-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import finish_run, machine_info

SCHEDULES = ((1e-3, 1e-5), (1e-3, 1e-4, 1e-5))


def run(name, rows):
    from leansvm import datasets
    from leansvm.core.kernels import Kernel
    from leansvm.core.problems import nu_svc
    from leansvm.exact.irwls import solve_irwls
    data = datasets.load(name)
    X, labels = data.X_train, np.asarray(data.y_train)
    if rows:
        X, labels = X[:rows], labels[:rows]
    y = np.where(labels == np.unique(labels)[1], 1.0, -1.0)
    kernel = Kernel.from_params("rbf", data.gamma, 3, 0.0, X)
    problem = nu_svc(y, 0.2, np.ones(y.size))
    out = []
    with threadpool_limits(1):
        for schedule in SCHEDULES:
            fit, total = None, 0.0
            for tol in schedule:
                t0 = time.perf_counter()
                fit = solve_irwls(X, problem, kernel, tol=tol, random_state=0,
                                  alpha_init=None if fit is None else fit.alpha)
                seconds = time.perf_counter() - t0
                total += seconds
                out.append({"set": name, "n": X.shape[0], "schedule": " > ".join(f"{t:g}" for t in schedule),
                            "tol": tol, "r": fit.stats["margin_level"], "seconds": seconds, "total_s": total})
                print(out[-1], flush=True)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=["magic"])
    parser.add_argument("--rows", type=int, default=0, help="the first ROWS training rows (0: all)")
    args = parser.parse_args()
    rows = [r for name in args.sets for r in run(name, args.rows)]
    columns = [("set", "set", "s"), ("n", "n", "d"), ("schedule", "tolerances", "s"), ("tol", "tol", "g"),
               ("r", "r", ".3g"), ("seconds", "solve s", ".2f"), ("total_s", "schedule s so far", ".2f")]
    finish_run(rows, columns, "nu-svc-tolerance")
    print(machine_info())


if __name__ == "__main__":
    main()
