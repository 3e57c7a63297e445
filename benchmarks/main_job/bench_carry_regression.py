"""The regression job's C carried to the fit's size: the exact SVR, the reference of every promise,
at the C the search chose on its rows and at the C carried to the fit rows.

    python benchmarks/main_job/bench_carry_regression.py [--sets friedman1-50k diamonds]

Per set, the job's own stages on its own split (``leansvm.job``: the scaling it chooses, the
validation part, ``tune_svr``: its search and its carry): the searched C, the carried C, and for each
the exact SVR fitted on the fit rows (vectors, seconds, validation and test RMSE). One process, BLAS
threads as the machine gives. JSON to benchmarks/results/carry-regression-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import finish_run, load_regression  # noqa: E402


def carry_study(name) -> list[dict]:
    import leansvm
    from leansvm.job.context import JobContext
    from leansvm.job.data import scale_features, validation_folds
    from leansvm.job.records import JobLog
    from leansvm.job.regression import tune_svr
    from leansvm.job.task_rules import RegressionTask

    X, z, X_te, z_te = load_regression(name)
    log = JobLog(True)
    X, X_te, _ = scale_features(X, X_te, True, log)
    folds = validation_folds(X, None, 0.2, 0)
    job = JobContext(X, z, folds, RegressionTask(z[folds[0][1]]), log=log)
    eps = float(0.1 * np.std(job.y_fit))
    t0 = time.perf_counter()
    searched, carried, gamma, _ = tune_svr(job, None, None, 2000, eps)     # the job's own rule and time limit
    carry_seconds = time.perf_counter() - t0
    rows = []
    for which, C in (("searched", searched), ("carried", carried)):
        start = time.perf_counter()
        model = leansvm.SVR(C=C, gamma=gamma, epsilon=eps, random_state=job.random_state).fit(job.X_fit, job.y_fit)
        seconds = time.perf_counter() - start
        rmse = lambda A, b: float(np.sqrt(np.mean((model.predict(A) - b) ** 2)))  # noqa: E731
        rows.append({"set": name, "C_from": which, "C": C, "gamma": gamma, "fit_rows": job.n_fit,
                     "n_sv": int(model.n_support_[0]), "fit_s": seconds, "validation_rmse": rmse(job.X_val, job.y_val),
                     "test_rmse": rmse(X_te, z_te), "search_and_carry_s": carry_seconds})
        print(rows[-1], flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=["friedman1-50k", "diamonds"])
    args = parser.parse_args()
    rows = [row for name in args.sets for row in carry_study(name)]
    columns = [("set", "set", "s"), ("C_from", "C", "s"), ("C", "value", "g"), ("gamma", "gamma", ".4g"),
               ("fit_rows", "fit rows", "d"), ("n_sv", "#SV", "d"), ("fit_s", "fit s", ".1f"),
               ("validation_rmse", "validation RMSE", ".4f"), ("test_rmse", "test RMSE", ".4f")]
    finish_run(rows, columns, "carry-regression")


if __name__ == "__main__":
    main()
