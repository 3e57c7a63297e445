"""Small data over a wide grid: scikit-learn's RBF-parameters gallery example, LIBSVM against leansvm.

    python benchmarks/exact/bench_small_grid.py
    python benchmarks/exact/bench_small_grid.py --repeat 1      # a quick look

The gallery's example ("RBF SVM parameters"): iris (150 rows, standardised), C in logspace(-2, 10,
13), gamma in logspace(-9, 3, 13), a GridSearchCV over StratifiedShuffleSplit(5 splits, 20 % test,
random_state=42). Both sides on one thread (one BLAS thread, leansvm ``n_jobs=1``), fitted back to
back in the same run: the whole search, and each of the 169 cells fitted once on all 150 rows
(the best of ``--repeat`` times per cell), with the dual objectives of the two fits per cell (the
sum over the one-vs-one problems; leansvm's lower or equal is a better optimum) and their test
predictions' agreement on the rows themselves.

Beside it, a kernel of low rank at huge C: iris versicolor against virginica (100 rows, raw
features), a linear kernel (rank 4), C = 1e4, 1e6, 1e8: each side's fit (best of ``--repeat``), its
dual objective 1/2 a'Qa - sum a (lower is the better optimum) and training accuracy.

``--crossover``: where SMO on the whole Q stops paying against chunked IRWLS (``smo_full.MAX_ROWS``):
one binary problem (the first class against the rest) of the first n rows of six benchmark sets at
their C and gamma, n = 300, 800, 1,500, 2,000, both methods, one thread, best of 3.

JSON to benchmarks/results/small-grid-<timestamp>.json (``--crossover``: smo-crossover-<timestamp>.json).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_iris
from sklearn.model_selection import GridSearchCV, StratifiedShuffleSplit
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC as LibSVC
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import finish_run  # noqa: E402

import leansvm  # noqa: E402

C_RANGE = np.logspace(-2, 10, 13)
GAMMA_RANGE = np.logspace(-9, 3, 13)


def best_time(fit, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        model = fit()
        times.append(time.perf_counter() - start)
    return min(times), model


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--name", default="small-grid")
    parser.add_argument("--crossover", action="store_true", help="SMO against IRWLS by problem size")
    args = parser.parse_args()
    if args.crossover:
        return crossover()
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    sides = {"libsvm": lambda **p: LibSVC(**p), "leansvm": lambda **p: leansvm.SVC(n_jobs=1, **p)}
    rows = []
    with threadpool_limits(1):
        leansvm.SVC(n_jobs=1).fit(X, y)                          # loads the compiled code
        for side, make in sides.items():
            cv = StratifiedShuffleSplit(n_splits=5, test_size=0.2, random_state=42)
            search = GridSearchCV(make(), {"C": C_RANGE, "gamma": GAMMA_RANGE}, cv=cv)
            seconds, _ = best_time(lambda: search.fit(X, y), 1)
            rows.append({"what": "GridSearchCV, 169 cells x 5 splits", "side": side, "seconds": seconds,
                         "best": f"C={search.best_params_['C']:g} gamma={search.best_params_['gamma']:g} "
                                 f"score {search.best_score_:.3f}"})
            print(rows[-1], flush=True)
        for C in C_RANGE:
            for gamma in GAMMA_RANGE:
                cell = {"what": "cell", "C": float(C), "gamma": float(gamma)}
                for side, make in sides.items():
                    seconds, model = best_time(lambda: make(C=C, gamma=gamma).fit(X, y), args.repeat)
                    cell[f"{side}_s"] = seconds
                    cell[f"{side}_predict"] = model.predict(X)
                    cell[f"{side}_objective"] = _objective(model, X, y, gamma)
                cell["agreement"] = float(np.mean(cell.pop("libsvm_predict") == cell.pop("leansvm_predict")))
                cell["ratio"] = cell["leansvm_s"] / cell["libsvm_s"]
                rows.append(cell)
        rows += low_rank_rows(sides, args.repeat)
    cells = [r for r in rows if r["what"] == "cell"]
    ratios = np.array([r["ratio"] for r in cells])
    over = [r for r in cells if r["leansvm_s"] > 2 * r["libsvm_s"] + 0.005]
    rows.append({"what": "cells", "side": "summary", "seconds": None,
                 "median_ratio": float(np.median(ratios)), "worst_ratio": float(ratios.max()),
                 "libsvm_total_s": float(sum(r["libsvm_s"] for r in cells)),
                 "leansvm_total_s": float(sum(r["leansvm_s"] for r in cells)),
                 "over_twice_plus_5ms": len(over),
                 "worse_objective": int(sum(r["leansvm_objective"] > r["libsvm_objective"] +
                                            1e-3 * max(1.0, abs(r["libsvm_objective"])) for r in cells)),
                 "min_agreement": float(min(r["agreement"] for r in cells))})
    print(rows[-1])
    columns = [("what", "what", "s"), ("side", "side", "s"), ("seconds", "s", ".3f"), ("C", "C", ".0e"),
               ("gamma", "gamma", ".0e"), ("libsvm_s", "LIBSVM s", ".4f"), ("leansvm_s", "leansvm s", ".4f"),
               ("ratio", "ratio", ".2f")]
    finish_run(rows, columns, args.name, markdown=False)


#: the low-rank rows' C values
LOW_RANK_CS = (1e4, 1e6, 1e8)


def low_rank_rows(sides, repeat) -> list:
    """iris versicolor / virginica, raw features, linear kernel, at each of LOW_RANK_CS (module docstring)."""
    X, y3 = load_iris(return_X_y=True)
    X, y = X[y3 > 0], y3[y3 > 0]
    signs = np.where(y == 1, 1.0, -1.0)
    Q = np.outer(signs, signs) * (X @ X.T)
    rows = []
    for C in LOW_RANK_CS:
        row = {"what": "low rank", "C": C}
        for side, make in sides.items():
            seconds, model = best_time(lambda: make(kernel="linear", C=C).fit(X, y), repeat)
            alpha = np.zeros(y.size)
            alpha[model.support_] = np.abs(np.ravel(model.dual_coef_))
            row[f"{side}_s"] = seconds
            row[f"{side}_objective"] = float(0.5 * alpha @ Q @ alpha - alpha.sum())
            row[f"{side}_accuracy"] = float(model.score(X, y))
        row["ratio"] = row["leansvm_s"] / row["libsvm_s"]
        print(row, flush=True)
        rows.append(row)
    return rows


def crossover():
    from leansvm import datasets
    from leansvm.core.kernels import Kernel
    from leansvm.core.problems import c_svc
    from leansvm.exact.irwls import solve_irwls
    rows = []
    with threadpool_limits(1):
        for name in ("banana", "magic", "twonorm", "satimage", "a9a", "letter"):
            ds = datasets.load(name)
            y = np.where(ds.y_train == np.unique(ds.y_train)[0], 1.0, -1.0)
            for n in (300, 800, 1500, 2000):
                problem, kernel = c_svc(y[:n], np.full(n, ds.C)), Kernel("rbf", gamma=ds.gamma)
                row = {"set": name, "n": n}
                for method in ("irwls", "smo"):
                    seconds, fit = best_time(lambda: solve_irwls(ds.X_train[:n], problem, kernel, method=method), 3)
                    row[f"{method}_ms"], row[f"{method}_objective"] = 1e3 * seconds, fit.dual_objective
                row["ratio"] = row["smo_ms"] / row["irwls_ms"]
                rows.append(row)
                print(row, flush=True)
    finish_run(rows, [("set", "set", "s"), ("n", "n", "d"), ("irwls_ms", "IRWLS ms", ".1f"),
                      ("smo_ms", "SMO ms", ".1f"), ("ratio", "SMO / IRWLS", ".2f")], "smo-crossover")


def _objective(model, X, y, gamma) -> float:
    """The sum over the one-vs-one problems of 1/2 a'Qa - sum a, from the fitted dual coefficients
    (scikit-learn's layout, which leansvm.SVC shares)."""
    from sklearn.metrics.pairwise import rbf_kernel
    classes = np.unique(y)
    total = 0.0
    sv = model.support_
    start = np.concatenate(([0], np.cumsum(model.n_support_)))
    p = 0
    for i in range(classes.size):
        for j in range(i + 1, classes.size):
            si = np.arange(start[i], start[i + 1])
            sj = np.arange(start[j], start[j + 1])
            idx = np.concatenate((si, sj))
            coef = np.concatenate((model.dual_coef_[j - 1, si], model.dual_coef_[i, sj]))
            K = rbf_kernel(X[sv[idx]], gamma=gamma)
            total += 0.5 * coef @ K @ coef - np.abs(coef).sum()
            p += 1
    return float(total)


if __name__ == "__main__":
    main()
