"""Which points should a compressed model be fitted on? (``fit_lean``'s ``compression_points``)

    python benchmarks/main_job/bench_fit_points.py --dataset letter --n-sv 800 [--C 10 --gamma 0.1875]
                                          [--points svs rows8000 all] [--max-iter 50]

Trains the exact SVC on the dataset's training part (C and gamma from
``../shared/benchmarks.md`` unless given), then compresses it to ``--n-sv``
vectors fitted to its outputs on each point set: ``svs`` (its support
vectors), ``rowsN`` (N random training rows), ``all`` (every training row),
``svs+rowsN`` (the support vectors and N random rows). Reports test accuracy
(full and compressed) and CPU time; JSON to
``benchmarks/results/fit_points-<dataset>-<timestamp>.json``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import write_json_atomic  # noqa: E402

from common import RESULTS_DIR as RESULTS  # noqa: E402


def point_set(name, n, support, rng):
    """Row indices of the training part for a point-set name."""
    if name == "svs":
        return support
    if name == "all":
        return np.arange(n)
    if name.startswith("svs+rows"):
        extra = rng.choice(n, min(n, int(name[len("svs+rows"):])), replace=False)
        return np.union1d(support, extra)
    if name.startswith("rows"):
        return rng.choice(n, min(n, int(name[len("rows"):])), replace=False)
    raise ValueError(f"unknown point set {name!r}: svs, all, rowsN or svs+rowsN")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="letter")
    parser.add_argument("--n-sv", type=int, default=800)
    parser.add_argument("--C", type=float, default=None)
    parser.add_argument("--gamma", type=float, default=None)
    parser.add_argument("--points", nargs="+", default=["svs", "rows8000", "all"])
    parser.add_argument("--max-iter", type=int, default=None, help="L-BFGS iterations (default: compress's own)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from leansvm import SVC, compress, datasets
    from leansvm.compression.cvm import reuse_eigendecompositions

    ds = datasets.load(args.dataset)
    C = ds.C if args.C is None else args.C
    gamma = ds.gamma if args.gamma is None else args.gamma
    full = SVC(C=C, gamma=gamma).fit(ds.X_train, ds.y_train)
    full_test = full.score(ds.X_test, ds.y_test)
    print(f"{args.dataset}: full model C={C:g} gamma={gamma:g}, {full.support_.size} SV, test {full_test:.4f}")
    rng = np.random.default_rng(args.seed)
    rows = []
    with reuse_eigendecompositions(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in args.points:
            idx = point_set(name, ds.X_train.shape[0], full.support_, rng)
            cpu = time.process_time()
            model = compress(full, n_sv=args.n_sv, X=ds.X_train[idx], y=np.asarray(ds.y_train)[idx],
                             max_iter=args.max_iter, random_state=args.seed, progress=False)
            row = {"points": name, "n_points": int(idx.size), "n_sv": args.n_sv,
                   "test_acc": model.score(ds.X_test, ds.y_test), "cpu_s": time.process_time() - cpu}
            rows.append(row)
            print(f"  {name:>14} ({idx.size} points): test {row['test_acc']:.4f} "
                  f"({100 * (row['test_acc'] - full_test):+.2f} points), {row['cpu_s']:.0f} s CPU", flush=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    write_json_atomic(RESULTS / f"fit_points-{args.dataset}-{stamp}.json",
                      {"dataset": args.dataset, "C": C, "gamma": gamma, "max_iter": args.max_iter,
                       "full_n_sv": int(full.support_.size), "full_test_acc": full_test,
                       "loadavg": " ".join(os.getloadavg().__repr__().strip("()").split(", ")), "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
