"""Compression's arithmetic speed: one L-BFGS iteration of eq. 10 against the machine's GEMM rate.

    python benchmarks/compression/bench_compression_speed.py [--shapes 50000x20x868 ...] [--repeats 5]

For each shape N x d x r (fitting points, features, vectors; one output, RBF kernel): the objective
and gradient of ``leansvm.compression.cvm.GradientProblem`` timed (best of ``--repeats``) in float32
row blocks (``compression/rbf_objective.py``, the default) and on the whole N x r matrix in float64
(``block_dtype=None``), both on every core through leansvm's thread pool with one BLAS thread each,
as ``compress`` runs them. The iteration's useful work is 4 N r (d + 1) flops (the products
<x, z>, H' X, K B and K' R); GFLOP/s is that over the seconds. The peer in the same run: the
machine's float32 and float64 GEMM rate on a square 2,000 x 2,000 product with every core.
Writes ``benchmarks/results/compression-speed-<timestamp>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import RESULTS_DIR as RESULTS  # noqa: E402


def best_of(fn, repeats):
    fn()
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def gemm_rate(dtype, repeats, n=2000):
    A = np.random.default_rng(0).normal(size=(n, n)).astype(dtype)
    return 2 * n ** 3 / best_of(lambda: A @ A, repeats) / 1e9


def objective_rate(N, d, r, repeats):
    from leansvm.compression import cvm
    from leansvm.core.kernels import Kernel
    from leansvm.core.threads import one_blas_thread

    rng = np.random.default_rng(0)
    X, Z, F = rng.normal(size=(N, d)), rng.normal(size=(r, d)), rng.normal(size=(N, 1))
    blocks = cvm.output_blocks(None, None, 1)
    out = {}
    for name, dtype in (("float32 blocks", np.float32), ("float64 whole matrix", None)):
        problem = cvm.GradientProblem(Kernel("rbf", 1.0 / d), X, F, blocks, r, block_dtype=dtype)
        theta = problem.pack(Z, 0.01 * rng.normal(size=(r, 1)), np.zeros(1))
        with one_blas_thread():
            seconds = best_of(lambda: problem.objective(theta), repeats)
        out[name] = {"seconds": seconds, "gflops": 4 * N * r * (d + 1) / seconds / 1e9}
    return out


def main(argv=None) -> int:
    from leansvm.io import atomic_write

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+", default=["50000x20x868", "200000x20x2000", "15216x10x156"])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    gemm = {"float32": gemm_rate(np.float32, args.repeats), "float64": gemm_rate(np.float64, args.repeats)}
    print(f"GEMM 2000^3 on {os.cpu_count()} cores: float32 {gemm['float32']:.1f} GFLOP/s, "
          f"float64 {gemm['float64']:.1f} GFLOP/s")
    rows = []
    print(f"{'N x d x r':>16} {'path':>22} {'s / iteration':>14} {'GFLOP/s':>8} {'of f32 GEMM':>11}")
    for shape in args.shapes:
        N, d, r = (int(v) for v in shape.split("x"))
        for name, m in objective_rate(N, d, r, args.repeats).items():
            share = m["gflops"] / gemm["float32"]
            print(f"{shape:>16} {name:>22} {m['seconds']:>14.4f} {m['gflops']:>8.1f} {share:>10.0%}")
            rows.append({"shape": shape, "path": name, **m, "share_of_float32_gemm": share})
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"compression-speed-{time.strftime('%Y%m%d-%H%M%S')}.json"
    with atomic_write(out, "w", encoding="utf-8") as f:
        json.dump({"cpu_count": os.cpu_count(), "gemm_gflops": gemm, "rows": rows,
                   "threads": "leansvm's pool (one per core), one BLAS thread each; GEMM: every core"}, f, indent=1)
    print(f"\nresults written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
