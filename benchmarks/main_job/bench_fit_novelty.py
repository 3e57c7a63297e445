"""The main job for novelty detection: ``fit_lean_novelty`` (what ``leansvm fit --task
novelty`` runs) on the shared list's one-class sets.

    python benchmarks/main_job/bench_fit_novelty.py [--sets magic satimage] [--nu 0.1] [--max-disagreement 0.01]

Setup of ../shared/benchmarks.md "Novelty detection": train on the training rows of one class
(magic: g, satimage: 1), nu = 0.1; the whole test part is measured with that class as +1 (normal)
and the rest as -1. The job picks gamma itself ('scale' of its scaled features: no labels to tune
by). Per set: the exact model's vectors and test AUC, the returned model's kind, vectors, share
of the vectors, its disagreement with the exact model on the validation rows with the bound the
choice used and the folds that bound pools, on the test part (the returned model: the chosen kind
and size refit on every row), test AUC, and the whole job's seconds
(one process, BLAS threads as the machine gives). Beside it LIBSVM's one-class SVM (scikit-learn)
at the job's nu and gamma on all of the class's training rows (the job trains on 80 % of them): vectors, AUC, fit seconds.
JSON to benchmarks/results/fit-novelty-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import ONE_CLASS_LABEL, finish_run, machine_info


def run(name, nu, max_disagreement):
    import sklearn.svm as sk
    from sklearn.metrics import roc_auc_score

    from leansvm import datasets
    from leansvm.job.novelty import fit_lean_novelty
    from leansvm.job.one_output import format_one_output_table
    data = datasets.load(name)
    y, y_te = np.asarray(data.y_train), np.asarray(data.y_test)
    label = type(y[0])(ONE_CLASS_LABEL[name])
    X = data.X_train[y == label]
    truth = np.where(y_te == label, 1.0, -1.0)
    r = fit_lean_novelty(X, X_test=data.X_test, y_test=truth, nu=nu, max_disagreement=max_disagreement,
                         verbose=True)
    print(format_one_output_table(r), flush=True)
    scaler = r.model[0] if hasattr(r.model, "steps") else None
    Xs = X if scaler is None else scaler.transform(X)
    Xs_te = data.X_test if scaler is None else scaler.transform(data.X_test)
    t0 = time.perf_counter()
    libsvm = sk.OneClassSVM(nu=nu, gamma=r.params["gamma"]).fit(Xs)
    libsvm_s = time.perf_counter() - t0
    exact, final = r.exact, r.final
    return {"set": name, "n_train": X.shape[0], "gamma": r.params["gamma"], "exact_sv": exact.n_support,
            "exact_auc": exact.test_metrics["AUC"], "chosen": final.name, "chosen_sv": final.n_support,
            "sv_share": final.n_support / exact.n_support, "val_disagreement": r.chosen.validation_error,
            "bound": r.chosen.error_bound, "folds": r.chosen.evidence_folds, "limit": max_disagreement,
            "test_disagreement": final.test_error, "chosen_auc": final.test_metrics["AUC"],
            "seconds": r.seconds, "libsvm_sv": int(libsvm.support_.size),
            "libsvm_auc": float(roc_auc_score(truth == 1, libsvm.decision_function(Xs_te))), "libsvm_fit_s": libsvm_s}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=["magic", "satimage"])
    parser.add_argument("--nu", type=float, default=0.1)
    parser.add_argument("--max-disagreement", type=float, default=0.01)
    args = parser.parse_args()
    rows = [run(name, args.nu, args.max_disagreement) for name in args.sets]
    columns = [("set", "set", "s"), ("n_train", "n", "d"), ("gamma", "gamma", ".4g"), ("exact_sv", "exact SV", "d"),
               ("exact_auc", "exact AUC", ".4f"), ("chosen", "returned", "s"), ("chosen_sv", "vectors", "d"),
               ("sv_share", "share of SV", ".3f"), ("val_disagreement", "validation disagreement", ".4f"),
               ("bound", "bound", ".4f"), ("folds", "folds", "d"), ("test_disagreement", "test disagreement", ".4f"),
               ("chosen_auc", "AUC", ".4f"), ("seconds", "job s", ".1f"), ("libsvm_sv", "LIBSVM SV", "d"),
               ("libsvm_auc", "LIBSVM AUC", ".4f"), ("libsvm_fit_s", "LIBSVM fit s", ".2f")]
    finish_run(rows, columns, "fit-novelty")
    print(machine_info())


if __name__ == "__main__":
    main()
