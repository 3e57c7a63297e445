"""The main job on raw columns against standardised ones.

    python benchmarks/exact/bench_scaling.py [--datasets wdbc banana ...] [--unscaled]

For each KEEL benchmark set (docs/datasets.md), ``fit_lean`` with its defaults on

* ``standardised``: the set as ``datasets.load`` gives it (standardised with the training part's
  mean and std), ``scale=False``: the main job as it was before it scaled by itself;
* ``raw``: the same rows with their raw units (``datasets.load(name, standardize=False)``: one-hot
  encoded, not standardised), default ``scale=True``: the main job standardises and keeps the
  scaling with the model;
* with ``--unscaled``, also ``raw`` with ``scale=False`` (what the main job did on raw columns).

Reports the chosen (C, gamma relative to 1/(d Var X)), the exact model's and the returned
model's test accuracy and #SV. The criterion: raw within 0.5 points of standardised.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import finish_run  # noqa: E402

from leansvm import datasets, fit_lean  # noqa: E402

SETS = ["wdbc", "splice", "banana", "page-blocks0", "mushroom", "optdigits", "satimage", "twonorm",
        "penbased", "magic", "letter"]


def one(data, X, Xt, scale):
    start = time.perf_counter()
    result = fit_lean(X, data.y_train, X_test=Xt, y_test=data.y_test, scale=scale,
                      libsvm_reference_model=False)
    seconds = time.perf_counter() - start
    exact = next(c for c in result.candidates if c.kind == "exact")
    returned = result.final
    return {"C": result.selection.C, "gamma": result.selection.gamma, "exact_acc": exact.test_accuracy,
            "acc": float(np.mean(result.model.predict(Xt) == data.y_test)), "n_sv": returned.n_support,
            "exact_n_sv": exact.n_support, "seconds": seconds}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=SETS)
    parser.add_argument("--unscaled", action="store_true", help="also raw columns without scaling")
    args = parser.parse_args()
    rows = []
    for name in args.datasets:
        standard, raw = datasets.load(name), datasets.load(name, standardize=False)
        row = {"dataset": name, "n_train": standard.X_train.shape[0], "raw_std_ratio":
               float(raw.X_train.std(axis=0).max() / max(raw.X_train.std(axis=0)[raw.X_train.std(axis=0) > 0].min(), 1e-300))}
        for key, data, scale in [("std", standard, False), ("raw", raw, True)] + (
                [("unscaled", raw, False)] if args.unscaled else []):
            for field, value in one(data, data.X_train, data.X_test, scale).items():
                row[f"{key}_{field}"] = value
        row["diff_points"] = 100 * (row["raw_acc"] - row["std_acc"])
        row["exact_diff_points"] = 100 * (row["raw_exact_acc"] - row["std_exact_acc"])
        rows.append(row)
        print(row, flush=True)
    columns = [("dataset", "set", "s"), ("n_train", "train", "d"), ("raw_std_ratio", "raw std max/min", ".3g"),
               ("std_exact_acc", "std: exact acc", ".4f"), ("std_acc", "std: returned", ".4f"), ("std_n_sv", "#SV", "d"),
               ("raw_exact_acc", "raw: exact acc", ".4f"), ("raw_acc", "raw: returned", ".4f"), ("raw_n_sv", "#SV ", "d"),
               ("exact_diff_points", "exact diff", "+.2f"), ("diff_points", "returned diff", "+.2f")]
    if args.unscaled:
        columns += [("unscaled_exact_acc", "raw, no scaling: exact", ".4f"), ("unscaled_acc", "returned", ".4f")]
    finish_run(rows, columns, "scaling")


if __name__ == "__main__":
    main()
