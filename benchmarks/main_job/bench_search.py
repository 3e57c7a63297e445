"""The main job's (C, gamma) search alone (``leansvm.paths.search.wide_search``): its choice, CV
accuracy, fold solves and seconds per set, for before/after comparisons of the search.

    python benchmarks/main_job/bench_search.py [--datasets wdbc page-blocks0 ...] [--repeats 3]

Per set: ``d = leansvm.datasets.load(name)``, the training rows standardised (``StandardScaler``,
as ``leansvm fit`` scales them; max-abs for sparse rows), then ``wide_search`` with its defaults
(no time limit, both cores), timed ``--repeats`` times in one warm process (a search on 200 rows
first loads numba's compiled code; its seconds are printed). The median time is reported, with
the choice, its CV accuracy and SE, the (C, fold) solves and each round's rows and seconds.
Beside it, the unit of the main job's time: the exact ``SVC`` at the chosen (C, gamma) on every
training row (both cores, the median of ``--repeats`` fits), its test accuracy, and the search's
seconds and its last round's as multiples of that fit. The last round scores the few gammas and Cs
left around the choice on the most rows: a search that knew where to look would still run it to
choose as finely. ``--folds``: the search's K (5 by default, as the main job's).

To compare two versions, run this script at each commit on a quiet machine, one after the other
(each checkout with its numba cache warm: run it once before timing).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import MaxAbsScaler, StandardScaler

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import finish_run  # noqa: E402

from leansvm import datasets  # noqa: E402
from leansvm.paths.search import wide_search  # noqa: E402

SETS = ["wdbc", "page-blocks0", "splice", "twonorm", "banana", "mushroom", "optdigits", "satimage", "penbased",
        "magic"]


def one(name, repeats, n_folds=5):
    from leansvm import SVC
    data = datasets.load(name)
    X = data.X_train
    scaler = MaxAbsScaler() if sp.issparse(X) else StandardScaler()
    X, X_test = scaler.fit_transform(X), scaler.transform(data.X_test)
    y = np.asarray(data.y_train)
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        found = wide_search(X, y, n_folds=n_folds, progress=False)
        seconds.append(time.perf_counter() - start)
    fits = []
    for _ in range(repeats):
        start = time.perf_counter()
        exact = SVC(C=found.C, gamma=found.gamma).fit(X, y)
        fits.append(time.perf_counter() - start)
    fit = float(np.median(fits))
    row = {"dataset": name, "n_train": int(X.shape[0]), "folds": n_folds, "C": found.C, "gamma": found.gamma,
           "cv": found.accuracy, "se": found.se, "fold_solves": found.n_fits,
           "seconds": float(np.median(seconds)), "seconds_all": seconds,
           "exact_fit_seconds": fit, "test_accuracy": float(exact.score(X_test, data.y_test)),
           "x_exact_fit": float(np.median(seconds)) / fit, "last_round_x_exact_fit": found.rounds[-1]["seconds"] / fit,
           "rounds": " ".join(f"{r['rows']}:{r['seconds']:.2f}" for r in found.rounds),
           "stops": " ".join(f"{why}:{n}" for why, n in sorted(Counter(
               str(why) for r in found.rounds for *_, why in r["paths"]).items()))}
    print(row, flush=True)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=SETS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--folds", type=int, default=5, help="the search's K-fold CV (the main job's: 5)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    X0 = rng.normal(size=(200, 5))
    start = time.perf_counter()
    wide_search(X0, (X0[:, 0] + 0.3 * rng.normal(size=200) > 0).astype(int), progress=False)
    print(f"warm-up (numba's compiled code loaded): {time.perf_counter() - start:.2f} s", flush=True)
    rows = [one(name, args.repeats, args.folds) for name in args.datasets]
    columns = [("dataset", "set", "s"), ("n_train", "train", "d"), ("folds", "K", "d"), ("C", "C", ".4g"),
               ("gamma", "gamma", ".4g"), ("cv", "CV", ".4f"), ("se", "SE", ".4f"), ("fold_solves", "fold solves", "d"),
               ("seconds", "median s", ".2f"), ("exact_fit_seconds", "exact fit s", ".3f"),
               ("x_exact_fit", "x exact fit", ".0f"), ("last_round_x_exact_fit", "last round x exact fit", ".0f"),
               ("test_accuracy", "exact test acc", ".4f"), ("rounds", "rounds (rows:s)", "s"),
               ("stops", "path stops", "s")]
    finish_run(rows, columns, "search")


if __name__ == "__main__":
    main()
