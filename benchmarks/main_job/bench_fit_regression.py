"""The main job on regression targets: ``fit_lean_regression`` (what ``leansvm fit`` runs on
continuous targets) on the shared list's regression sets.

    python benchmarks/main_job/bench_fit_regression.py [--sets friedman1-10k diamonds] [--max-error-increase 0.02]

Data as ``exact/bench_regression.py`` (X and y standardised on the training part; the job scales X
again, a no-op). Per set: the tuned (C, gamma), the exact SVR's vectors and test RMSE, the
returned model's kind, vectors, test RMSE and increase over the exact model's, and the whole
job's seconds (one process, BLAS threads as the machine gives). JSON to
benchmarks/results/fit-regression-<timestamp>.json.
"""

from __future__ import annotations

import argparse

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import finish_run, load_regression, machine_info


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=["friedman1-10k"])
    parser.add_argument("--max-error-increase", type=float, default=0.02)
    args = parser.parse_args()
    from leansvm.job.one_output import format_one_output_table
    from leansvm.job.regression import fit_lean_regression
    rows = []
    for name in args.sets:
        X, z, X_te, z_te = load_regression(name)
        r = fit_lean_regression(X, z, X_test=X_te, y_test=z_te, max_error_increase=args.max_error_increase,
                                verbose=True)
        print(format_one_output_table(r), flush=True)
        exact = next(c for c in r.candidates if c.kind == "exact")
        rows.append({"set": name, "C": r.params["C"], "gamma": r.params["gamma"], "exact_sv": exact.n_support,
                     "exact_rmse": exact.test_error, "chosen": r.chosen.name, "chosen_sv": r.chosen.n_support,
                     "chosen_rmse": r.chosen.test_error,
                     "increase_pct": 100 * (r.chosen.test_error / exact.test_error - 1),
                     "sv_share": r.chosen.n_support / exact.n_support, "seconds": r.seconds})
    columns = [("set", "set", "s"), ("C", "C", "g"), ("gamma", "gamma", ".4g"), ("exact_sv", "exact SV", "d"),
               ("exact_rmse", "exact test RMSE", ".4f"), ("chosen", "returned", "s"), ("chosen_sv", "vectors", "d"),
               ("chosen_rmse", "test RMSE", ".4f"), ("increase_pct", "RMSE +%", ".2f"),
               ("sv_share", "share of SV", ".3f"), ("seconds", "job s", ".1f")]
    finish_run(rows, columns, "fit-regression")
    print(machine_info())


if __name__ == "__main__":
    main()
