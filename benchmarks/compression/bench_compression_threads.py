"""Compression on one core against two ("both cores" for what builds on the solver).

    python benchmarks/compression/bench_compression_threads.py --datasets letter satimage optdigits page-blocks0 --fractions 0.02 0.1

Per set: leansvm's SVC at the benchmark settings (docs/datasets.md) on the training part, then
``compress`` to each fraction of its support vectors (``compress``'s own iteration count, the
training part as fitting points) twice, alternating: with its defaults (the objective's products
and one-vs-one point blocks split over leansvm's two threads) and in one thread throughout (what
``run_parallel(..., n_jobs=1)`` runs: BLAS limited, no splits). Wall and CPU seconds, iterations,
test accuracy of each (L-BFGS's path moves with the summation order, so the two may differ by a
few test points). JSON to benchmarks/results/compression-threads-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import contextlib
import time
import warnings

import numpy as np

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import finish_run


def run(name, fractions):
    from leansvm import SVC, compress, datasets
    from leansvm.core import threads
    data = datasets.load(name)
    model = SVC(C=data.C, gamma=data.gamma, random_state=0).fit(data.X_train, data.y_train)
    yt = np.asarray(data.y_test)
    rows = []
    for fraction in fractions:
        n_sv = max(5, int(round(fraction * model.support_.size)))
        for label, context in (("two threads (default)", contextlib.nullcontext), ("one thread", threads._single_thread)):
            with context(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t, c = time.perf_counter(), time.process_time()
                small = compress(model, n_sv=n_sv, X=data.X_train, y=data.y_train, random_state=0, progress=False)
                wall, cpu = time.perf_counter() - t, time.process_time() - c
            rows.append({"set": name, "fraction": fraction, "n_sv": n_sv, "variant": label, "wall_s": wall,
                         "cpu_s": cpu, "n_iter": int(small.compression_.get("n_iter", 0)),
                         "test_acc": float(np.mean(small.predict(data.X_test) == yt))})
            print(rows[-1], flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["letter", "satimage", "optdigits", "page-blocks0"])
    parser.add_argument("--fractions", nargs="+", type=float, default=[0.02, 0.1])
    args = parser.parse_args()
    rows = [r for name in args.datasets for r in run(name, args.fractions)]
    columns = [("set", "set", "s"), ("fraction", "fraction", ".2f"), ("n_sv", "vectors", "d"),
               ("variant", "variant", "s"), ("wall_s", "wall s", ".1f"), ("cpu_s", "CPU s", ".1f"),
               ("n_iter", "iterations", "d"), ("test_acc", "test acc", ".4f")]
    finish_run(rows, columns, "compression-threads")


if __name__ == "__main__":
    main()
