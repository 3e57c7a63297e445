"""Budgeted one-class SVM: ``leansvm.BSGDOneClassSVM`` against the exact one-class SVM
(leansvm's and LIBSVM's through scikit-learn) and Nystroem + ``SGDOneClassSVM``.

    python benchmarks/budget/bench_bsgd_one_class.py [--sets magic satimage] [--budget 200] [--epochs 3]

Setup of ../shared/benchmarks.md "Novelty detection": train on the training rows of one class
(magic: g, satimage: 1, a9a: -1), nu = 0.1, the classification gamma; measured on the whole test part:
ROC AUC of ``decision_function`` (that class against the rest), the fraction of the class's test
rows flagged inliers, and the labels' agreement with LIBSVM's. One thread each, one after another
in one process. JSON to benchmarks/results/bsgd-one-class-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import ONE_CLASS_LABEL, finish_run, libsvm_input, machine_info


def run(name, budget, epochs):
    import sklearn.svm as sk
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import SGDOneClassSVM
    from sklearn.metrics import roc_auc_score
    from sklearn.pipeline import make_pipeline
    import leansvm
    from leansvm import datasets
    data = datasets.load(name)
    y, y_te = np.asarray(data.y_train), np.asarray(data.y_test)
    label = type(y[0])(ONE_CLASS_LABEL[name])
    X, g = libsvm_input(data.X_train[y == label]), data.gamma      # a9a: int32 indices for scikit-learn
    X_test = libsvm_input(data.X_test)
    sides = [("libsvm OneClassSVM", lambda: sk.OneClassSVM(nu=0.1, gamma=g)),
             ("leansvm OneClassSVM", lambda: leansvm.OneClassSVM(nu=0.1, gamma=g)),
             (f"BSGDOneClassSVM B={budget} merge", lambda: leansvm.BSGDOneClassSVM(
                 budget=budget, nu=0.1, gamma=g, epochs=epochs, random_state=0)),
             (f"BSGDOneClassSVM B={budget} removal", lambda: leansvm.BSGDOneClassSVM(
                 budget=budget, nu=0.1, gamma=g, epochs=epochs, maintenance="removal", random_state=0)),
             (f"Nystroem {budget} + SGDOneClassSVM", lambda: make_pipeline(
                 Nystroem(gamma=g, n_components=budget, random_state=0), SGDOneClassSVM(nu=0.1, random_state=0)))]
    rows, reference = [], None
    for side, make in sides:
        model = make()
        t = time.perf_counter()
        with threadpool_limits(1):
            model.fit(X)
        seconds = time.perf_counter() - t
        pred = model.predict(X_test)
        reference = pred if reference is None else reference
        vectors = (model.expansion_.n_support if hasattr(model, "expansion_") else
                   np.size(model.support_) if hasattr(model, "support_") else budget)
        rows.append({"set": name, "side": side, "n_train": X.shape[0], "fit_s": seconds, "n_sv": int(vectors),
                     "auc": float(roc_auc_score(y_te == label, model.decision_function(X_test))),
                     "inliers": float(np.mean(pred[y_te == label] == 1)),
                     "labels_eq_libsvm": float(np.mean(pred == reference))})
        print(rows[-1], flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=["magic", "satimage"])
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for name in args.sets:
        rows += run(name, args.budget, args.epochs)
    columns = [("set", "set", "s"), ("side", "side", "s"), ("n_train", "n", "d"), ("fit_s", "fit s", ".2f"),
               ("n_sv", "vectors", "d"), ("auc", "ROC AUC", ".4f"), ("inliers", "class inliers", ".4f"),
               ("labels_eq_libsvm", "labels = LIBSVM", ".4f")]
    finish_run(rows, columns, "bsgd-one-class")
    print(machine_info())


if __name__ == "__main__":
    main()
