"""The one-class SVM along nu: ``leansvm.one_class_path`` against LIBSVM fitted cold at
every nu (scikit-learn ``OneClassSVM``).

    python benchmarks/screening/bench_one_class_path.py [--sets magic satimage] [--n-nu 20] [--nu-max 0.5] [--nu-min 0.01]

Setup of ../shared/benchmarks.md "Novelty detection" (one class's training rows, the
classification gamma) over a grid of nu (geometric, largest first). Per nu: LIBSVM's fit seconds,
the path's step seconds (rule + solve) with the gap rule and without it, support vectors of both,
samples screened, the largest difference of the decision values against LIBSVM's on the test part
(relative to rho). A small path runs first, so no side pays the loading of numba's compiled code. One thread each (threadpoolctl), one after another in one process.
JSON to benchmarks/results/one-class-path-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import ONE_CLASS_LABEL, finish_run, machine_info


def run(name, nus):
    import sklearn.svm as sk
    import leansvm
    from leansvm import datasets
    data = datasets.load(name)
    y = np.asarray(data.y_train)
    X, g = data.X_train[y == type(y[0])(ONE_CLASS_LABEL[name])], data.gamma
    with threadpool_limits(1):
        leansvm.one_class_path(X, nus[:2], gamma=g)             # compiled code loaded before any timing
        screened = leansvm.one_class_path(X, nus, gamma=g)
        plain = leansvm.one_class_path(X, nus, gamma=g, screening=None)
        rows = []
        for a, b in zip(screened, plain):
            t0 = time.perf_counter()
            ref = sk.OneClassSVM(nu=a.nu, gamma=g).fit(X)
            seconds = time.perf_counter() - t0
            diff = np.max(np.abs(a.model.decision_function(data.X_test) - ref.decision_function(data.X_test)))
            rows.append({"set": name, "nu": a.nu, "libsvm_s": seconds, "path_s": a.solve_seconds + a.rule_seconds,
                         "plain_s": b.solve_seconds + b.rule_seconds, "libsvm_sv": int(ref.support_.size),
                         "path_sv": int(a.model.n_support_[0]), "screened": a.n_screened,
                         "max_diff_rel": float(diff / abs(ref.offset_[0]))})
            print(rows[-1], flush=True)
    total = {"set": name, "nu": float("nan"), "libsvm_s": sum(r["libsvm_s"] for r in rows),
             "path_s": sum(r["path_s"] for r in rows), "plain_s": sum(r["plain_s"] for r in rows),
             "libsvm_sv": 0, "path_sv": 0, "screened": sum(r["screened"] for r in rows),
             "max_diff_rel": max(r["max_diff_rel"] for r in rows)}
    print(f"{name}: LIBSVM {total['libsvm_s']:.2f} s, path {total['path_s']:.2f} s "
          f"({total['libsvm_s'] / total['path_s']:.2f}x), unscreened {total['plain_s']:.2f} s", flush=True)
    return rows + [total]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=["magic", "satimage"])
    parser.add_argument("--n-nu", type=int, default=20)
    parser.add_argument("--nu-max", type=float, default=0.5)
    parser.add_argument("--nu-min", type=float, default=0.01)
    args = parser.parse_args()
    nus = np.geomspace(args.nu_max, args.nu_min, args.n_nu)
    rows = []
    for name in args.sets:
        rows += run(name, nus)
    columns = [("set", "set", "s"), ("nu", "nu", ".4g"), ("libsvm_s", "LIBSVM s", ".3f"), ("path_s", "path (gap) s", ".3f"),
               ("plain_s", "path (unscreened) s", ".3f"), ("libsvm_sv", "LIBSVM SV", "d"), ("path_sv", "path SV", "d"),
               ("screened", "screened", "d"), ("max_diff_rel", "max |f - LIBSVM| / rho", ".1e")]
    finish_run(rows, columns, "one-class-path")
    print(machine_info())


if __name__ == "__main__":
    main()
