"""Compression's arithmetic speed: one L-BFGS iteration of eq. 10 against the machine's GEMM rate.

    python benchmarks/compression/bench_compression_speed.py [--shapes 50000x20x868 12800x16x520/26 ...]
                                                              [--repeats 5]

For each shape N x d x r (fitting points, features, vectors; RBF kernel; one output, or with /k a
one-vs-one model of k classes whose points count in their class's q = k - 1 pairs, as ``compress``
fits them; /kL: in LIBSVM's layout too, each vector serving only its own class's k - 1 pairs, as
``compress`` lays out sizes from 4 vectors per pair on): the objective and gradient of ``leansvm.compression.cvm.GradientProblem`` timed (best of
``--repeats``) in float32 row blocks (``compression/rbf_objective.py``, the default), in float64 row
blocks (where ``cvm.block_dtype_for`` finds float32 too coarse for the coefficients) and on the whole
N x r matrix in float64 (``block_dtype=None``), all on every core through leansvm's thread pool with
one BLAS thread each, as ``compress`` runs them. With q > 1 the float32 blocks form H = (R B') * K
(``ONE_PRODUCT_MAX_WIDTH_OVER_H``); a third row times them with the one-product gradient instead,
the measurement behind that threshold. The iteration's useful work is 4 N r (d + q) flops
(the products <x, z>, H' X, K B and K' R), and 2 N r q more for G = -R B' / N when q > 1; GFLOP/s is
that over the seconds. The peer in the same run: the machine's float32 and float64 GEMM rate on a
square 2,000 x 2,000 product with every core; and for each path, the float32 GEMM timed just
before and just after it: this machine's speed drifts up to 2x within minutes, so the share is
taken against the GEMM rate of the same moments (the higher of the two).
Writes ``benchmarks/results/compression-speed-<timestamp>.json``.
"""

from __future__ import annotations

import argparse
import contextlib
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


#: the GEMM peer's matrices: GEMM_SIDE x GEMM_SIDE
GEMM_SIDE = 2000


def gemm_rate(dtype, repeats, n=GEMM_SIDE):
    A = np.random.default_rng(0).normal(size=(n, n)).astype(dtype)
    return 2 * n ** 3 / best_of(lambda: A @ A, repeats) / 1e9


#: seconds to wait after a multi-threaded GEMM: OpenBLAS's idle threads spin for about 0.1 s, and
#: timed meanwhile the objective ran at 0.11-0.14 s an iteration against 0.07-0.09 s (50000x20x868)
BLAS_SETTLE_SECONDS = 0.3


def bracketed_best(fn, repeats):
    """Best-of seconds of ``fn`` and the float32 GEMM rate timed just before and just after it (the
    higher of the two: the share is then the lower reading)."""
    before = gemm_rate(np.float32, 3)
    time.sleep(BLAS_SETTLE_SECONDS)
    seconds = best_of(fn, repeats)
    after = gemm_rate(np.float32, 3)
    time.sleep(BLAS_SETTLE_SECONDS)
    return seconds, max(before, after)


def objective_rate(N, d, r, repeats, classes=2, libsvm_layout=False):
    from leansvm.compression import cvm
    from leansvm.core.kernels import Kernel
    from leansvm.core.threads import one_blas_thread

    rng = np.random.default_rng(0)
    p = 1 if classes == 2 else classes * (classes - 1) // 2
    X, Z, F = rng.normal(size=(N, d)), rng.normal(size=(r, d)), rng.normal(size=(N, p))
    blocks = cvm.output_blocks(np.sort(rng.integers(0, classes, r)) if libsvm_layout else None,
                               cvm.ovo_pair_columns(classes) if libsvm_layout else None, p)
    point_blocks = None if classes == 2 else cvm.own_pair_blocks(rng.integers(0, classes, N), classes)
    q = 1 if classes == 2 else classes - 1
    flops = 4 * N * r * (d + q) + (2 * N * r * q if q > 1 else 0)
    paths = [("float32 blocks", np.float32, None), ("float64 blocks", np.float64, None),
             ("float64 whole matrix", None, None)]
    if q > 1:
        paths.insert(1, ("float32 blocks, one product", np.float32, np.inf))
    out = {}
    for name, dtype, width in paths:
        problem = cvm.GradientProblem(Kernel("rbf", 1.0 / d), X, F, blocks, r, block_dtype=dtype,
                                      point_blocks=point_blocks, loss="squared" if p == 1 else "margin")
        theta = problem.pack(Z, 0.01 * rng.normal(size=(r, p)), np.zeros(p))
        def iteration():
            with one_blas_thread(), one_product_width(width):
                problem.objective(theta)
        seconds, gemm = bracketed_best(iteration, repeats)
        out[name] = {"seconds": seconds, "gflops": flops / seconds / 1e9, "gemm_float32_gflops": gemm}
    return out


@contextlib.contextmanager
def one_product_width(width):
    """``rbf_objective.ONE_PRODUCT_MAX_WIDTH_OVER_H`` set to ``width`` inside (None: unchanged);
    infinity times the one-product gradient whatever the outputs."""
    from leansvm.compression import rbf_objective

    saved = rbf_objective.ONE_PRODUCT_MAX_WIDTH_OVER_H
    if width is not None:
        rbf_objective.ONE_PRODUCT_MAX_WIDTH_OVER_H = width
    try:
        yield
    finally:
        rbf_objective.ONE_PRODUCT_MAX_WIDTH_OVER_H = saved


def main(argv=None) -> int:
    from leansvm.io import atomic_write

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+",
                        default=["50000x20x868", "200000x20x2000", "15216x10x156", "12800x16x520/26",
                                 "12800x16x1300/26L"])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    gemm = {"float32": gemm_rate(np.float32, args.repeats), "float64": gemm_rate(np.float64, args.repeats)}
    print(f"GEMM 2000^3 on {os.cpu_count()} cores: float32 {gemm['float32']:.1f} GFLOP/s, "
          f"float64 {gemm['float64']:.1f} GFLOP/s")
    rows = []
    print(f"{'N x d x r':>16} {'path':>22} {'s / iteration':>14} {'GFLOP/s':>8} {'f32 GEMM':>8} {'share':>6}")
    for shape in args.shapes:
        dims, _, classes = shape.partition("/")
        N, d, r = (int(v) for v in dims.split("x"))
        libsvm_layout = classes.endswith("L")
        for name, m in objective_rate(N, d, r, args.repeats, int(classes.rstrip("L") or 2), libsvm_layout).items():
            share = m["gflops"] / m["gemm_float32_gflops"]
            print(f"{shape:>16} {name:>22} {m['seconds']:>14.4f} {m['gflops']:>8.1f} "
                  f"{m['gemm_float32_gflops']:>8.1f} {share:>6.0%}")
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
