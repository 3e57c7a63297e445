"""BSGD inside the main job: with or without its convex refit.

    python benchmarks/budget/bench_budget_refit.py [--datasets banana magic satimage a9a]

The main job trains ``BSGDClassifier`` at budgets of 2, 5, 10 and 20 % of the exact model's
support vectors (at most 2,000 here), at the benchmark's C and gamma (docs/datasets.md), on the
training part. For each budget: test accuracy and fit seconds with ``refit=False`` and
``refit=True`` (one process, one after the other, same random order), and the paired difference.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import finish_run  # noqa: E402

from leansvm import BSGDClassifier, SVC, datasets  # noqa: E402

FRACTIONS = (0.02, 0.05, 0.1, 0.2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["banana", "magic", "satimage", "a9a"])
    args = parser.parse_args()
    rows = []
    for name in args.datasets:
        data = datasets.load(name)
        X, y, Xt, yt = data.X_train, np.asarray(data.y_train), data.X_test, np.asarray(data.y_test)
        n_sv = SVC(C=data.C, gamma=data.gamma).fit(X[:4000], y[:4000]).expansion_.n_support * X.shape[0] / min(
            X.shape[0], 4000)                    # the exact model's #SV, estimated from 4,000 rows
        for budget in sorted({max(10, min(2000, int(round(f * n_sv)))) for f in FRACTIONS}):
            row = {"dataset": name, "budget": budget}
            for refit in (False, True):
                start = time.perf_counter()
                model = BSGDClassifier(budget=budget, C=data.C, gamma=data.gamma, refit=refit,
                                       random_state=0).fit(X, y)
                key = "refit" if refit else "plain"
                row[f"{key}_seconds"] = time.perf_counter() - start
                row[f"{key}_acc"] = float(np.mean(model.predict(Xt) == yt))
            row["gain_points"] = 100 * (row["refit_acc"] - row["plain_acc"])
            row["time_ratio"] = row["refit_seconds"] / row["plain_seconds"]
            rows.append(row)
            print(row, flush=True)
    columns = [("dataset", "set", "s"), ("budget", "B", "d"), ("plain_acc", "plain acc", ".4f"),
               ("plain_seconds", "plain s", ".2f"), ("refit_acc", "refit acc", ".4f"),
               ("refit_seconds", "refit s", ".2f"), ("gain_points", "gain (points)", "+.2f"),
               ("time_ratio", "time ratio", ".2f")]
    finish_run(rows, columns, "budget-refit")


if __name__ == "__main__":
    main()
