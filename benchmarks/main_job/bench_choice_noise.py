"""How much of a (C, gamma) choice's test accuracy is the folds' luck: grid.py and leansvm's search
over several CV shuffles (the accuracy criterion of the (C, gamma) search on small test sets).

    python benchmarks/main_job/bench_choice_noise.py [--datasets wdbc ...] [--seeds 20]

For each set and each fold seed s = 0 .. seeds - 1, on the same standardised training rows:

* **grid.py**, as in ``bench_model_selection.py`` (scikit-learn ``SVC``, grid.py's 110 cells,
  5-fold stratified CV) with the folds shuffled by seed s;
* **leansvm's search** (``wide_search`` with the main job's defaults) with its folds shuffled by
  seed s;

and for each choice the tuned exact model: scikit-learn ``SVC`` on every training row at that
(C, gamma), its test accuracy. The summary per set: the mean and standard deviation of each side's
test accuracy over the seeds, the mean of the paired differences (leansvm - grid.py) with its
standard error, and the spread of grid.py's own test accuracy from one seed to another. A single
seed's difference (``bench_model_selection.py`` runs seed 0) is one draw from that spread.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.preprocessing import StandardScaler

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_model_selection import grid_py  # noqa: E402
from common import libsvm_exact as exact  # noqa: E402
from common import finish_run  # noqa: E402

from leansvm import datasets  # noqa: E402
from leansvm.paths.search import wide_search  # noqa: E402


def one(name, seeds, minutes):
    data = datasets.load(name)
    X, y, Xt, yt = data.X_train, np.asarray(data.y_train), data.X_test, np.asarray(data.y_test)
    scaler = StandardScaler().fit(X)                 # as fit_lean: z-scores fitted on the training rows
    Xs, Xts = scaler.transform(X), scaler.transform(Xt)
    rows = []
    for s in range(seeds):
        row = {"dataset": name, "seed": s, "n_test": int(yt.size)}
        C, g, cv, seconds, extrapolated, _ = grid_py(Xs, y, minutes, random_state=s)
        if extrapolated:
            raise SystemExit(f"{name}: grid.py did not finish in {minutes} min; use a larger --grid-minutes")
        row.update(grid_C=C, grid_gamma=g, grid_cv=cv, grid_seconds=seconds)
        row["grid_acc"], row["grid_sv"] = exact(Xs, y, Xts, yt, C, g)
        start = time.perf_counter()
        found = wide_search(Xs, y, random_state=s, progress=False)
        row.update(lean_C=found.C, lean_gamma=found.gamma, lean_cv=found.accuracy, lean_se=found.se,
                   lean_seconds=time.perf_counter() - start)
        row["lean_acc"], row["lean_sv"] = exact(Xs, y, Xts, yt, found.C, found.gamma)
        row["diff_points"] = 100 * (row["lean_acc"] - row["grid_acc"])
        print({k: (round(v, 5) if isinstance(v, float) else v) for k, v in row.items()}, flush=True)
        rows.append(row)
    return rows


def summary(rows):
    """Per set: mean (sd) test accuracy of each side over the seeds, the mean paired difference and
    its standard error, in points."""
    out = []
    for name in dict.fromkeys(r["dataset"] for r in rows):
        part = [r for r in rows if r["dataset"] == name]
        grid = 100 * np.array([r["grid_acc"] for r in part])
        lean = 100 * np.array([r["lean_acc"] for r in part])
        diff = lean - grid
        n = len(part)
        out.append({"dataset": name, "seeds": n, "n_test": part[0]["n_test"],
                    "grid_mean": grid.mean(), "grid_sd": grid.std(ddof=1) if n > 1 else 0.0,
                    "lean_mean": lean.mean(), "lean_sd": lean.std(ddof=1) if n > 1 else 0.0,
                    "diff_mean": diff.mean(), "diff_se": diff.std(ddof=1) / math.sqrt(n) if n > 1 else 0.0,
                    "grid_min": grid.min(), "grid_max": grid.max(),
                    "grid_choices": len({(r["grid_C"], r["grid_gamma"]) for r in part}),
                    "lean_choices": len({(r["lean_C"], r["lean_gamma"]) for r in part}), "per_seed": part})
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["wdbc"])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--grid-minutes", type=float, default=15.0)
    args = parser.parse_args()
    rows = [r for name in args.datasets for r in one(name, args.seeds, args.grid_minutes)]
    columns = [("dataset", "set", "s"), ("seeds", "seeds", "d"), ("n_test", "test rows", "d"),
               ("grid_mean", "grid.py test %", ".2f"), ("grid_sd", "sd", ".2f"),
               ("lean_mean", "leansvm test %", ".2f"), ("lean_sd", "sd ", ".2f"),
               ("diff_mean", "leansvm - grid.py (points)", "+.2f"), ("diff_se", "SE", ".2f"),
               ("grid_min", "grid.py min", ".2f"), ("grid_max", "grid.py max", ".2f"),
               ("grid_choices", "grid.py cells", "d"), ("lean_choices", "leansvm cells", "d")]
    finish_run(summary(rows), columns, "choice-noise")


if __name__ == "__main__":
    main()
