"""Where IRWLS's second core comes from, by ablation: SVC with its defaults against
the same fit with OpenBLAS's own threads inside the chunk loop, and with large kernel-row products
not split over leansvm's thread pool.

    python benchmarks/exact/bench_irwls_threads.py --datasets a9a magic

Same process, the three variants alternating, best of ``--repeat`` (default 2); wall and CPU
seconds, default cache (200 MB), one binary problem on these sets (so ``n_jobs`` plays no part).
The variants patch module names for the duration of one fit: ``irwls.one_blas_thread`` (the
chunk loop's BLAS limit) and ``kernels.can_split`` (the pool split). JSON to
benchmarks/results/irwls-threads-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import contextlib
import time

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import finish_run, machine_info


def run(name, repeat):
    from leansvm import SVC, datasets
    from leansvm.core import kernels
    from leansvm.exact import irwls
    data = datasets.load(name)
    SVC(C=data.C, gamma=data.gamma).fit(data.X_train[:300], data.y_train[:300])      # warm cache loaded
    variants = {"default": {},
                "OpenBLAS threads in the chunk loop": {(irwls, "one_blas_thread"): contextlib.nullcontext},
                "no pool split of kernel rows": {(kernels, "can_split"): lambda: False}}
    best = {}
    for _ in range(repeat):
        for label, patches in variants.items():
            saved = {key: getattr(*key) for key in patches}
            for (module, attr), value in patches.items():
                setattr(module, attr, value)
            try:
                t, c = time.perf_counter(), time.process_time()
                model = SVC(C=data.C, gamma=data.gamma, random_state=0).fit(data.X_train, data.y_train)
                wall, cpu = time.perf_counter() - t, time.process_time() - c
            finally:
                for (module, attr), value in saved.items():
                    setattr(module, attr, value)
            if label not in best or wall < best[label]["wall_s"]:
                best[label] = {"set": name, "variant": label, "wall_s": wall, "cpu_s": cpu,
                               "n_sv": int(model.support_.size), "chunks": int(model.n_iter_.sum())}
        print(best, flush=True)
    return list(best.values())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["a9a", "magic"])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    rows = [r for name in args.datasets for r in run(name, args.repeat)]
    columns = [("set", "set", "s"), ("variant", "variant", "s"), ("wall_s", "wall s", ".2f"),
               ("cpu_s", "CPU s", ".2f"), ("n_sv", "#SV", "d"), ("chunks", "chunks", "d")]
    finish_run(rows, columns, "irwls-threads")
    print(machine_info())


if __name__ == "__main__":
    main()
