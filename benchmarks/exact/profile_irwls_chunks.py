"""Where IRWLS's time goes on SVR at large C: one chunk against its gradient update,
and the working-set size and inner tolerance around their defaults.

    python benchmarks/exact/profile_irwls_chunks.py [--parts chunks q inner] [--q 128 64 32 16] [--inner 0.03 0.1 0.3]

diamonds (``bench_regression.load_regression``), the first 10,000 training rows, SVR C = 100,
gamma 0.01, epsilon 0.1, one thread (threadpoolctl), numba's compiled code loaded before any timing.

* ``chunks``: the arguments of ``irwls.solve_chunk`` at chunk iterations 2,000, 4,000 and 6,000
  are copied; each chunk is then timed again (best of 20, fresh copies of alpha and f) beside a
  bare update f += K[:, W] d over the same q cached rows and the two O(n) scans of a chunk;
* ``q``: the whole fit at each working-set size;
* ``inner``: the whole fit, and magic's SVC (C = 10, gamma 0.1), at each ``INNER_RELATIVE_TOL``.

Prints each figure; nothing is written (a profile, not a peer comparison).
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
from threadpoolctl import threadpool_limits

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import load_regression


@numba.njit
def _update(slab, slots, d, f):
    for r in range(slots.size):
        row = slab[slots[r]]
        for i in range(f.size):
            f[i] += d[r] * row[i]


@numba.njit
def _scans(y, alpha, f, p):
    total = 0.0
    for i in range(f.size):
        total += y[i] * alpha[i]
    for i in range(f.size):
        total += alpha[i] * (y[i] * f[i] * 0.5 + p[i])
    return total


def _best(fn, repeats=20):
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def chunks(X, z):
    import leansvm
    import leansvm.exact.irwls as irwls
    solve_chunk, captured, count = irwls.solve_chunk, [], [0]

    def capture(*args):
        count[0] += 1
        if count[0] in (2000, 4000, 6000):
            captured.append(tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args))
        return solve_chunk(*args)

    irwls.solve_chunk = capture
    try:
        leansvm.SVR(C=100, gamma=0.01, epsilon=0.1, random_state=0).fit(X, z)
    finally:
        irwls.solve_chunk = solve_chunk
    for args in captured:
        slab, slots, W, y, p, _, alpha, f = args[:8]

        def one_chunk():
            fresh = list(args)
            fresh[6], fresh[7], fresh[8], fresh[16] = alpha.copy(), f.copy(), args[8].copy(), args[16].copy()
            solve_chunk(*fresh)

        d, f_copy = np.random.default_rng(0).normal(size=slots.size), f.copy()
        _update(slab, slots, d, f_copy)
        _scans(y, alpha, f, p)
        print(f"active n = {f.size}, q = {W.size}: chunk {1e3 * _best(one_chunk):.3f} ms, update of f by the q rows "
              f"{1e3 * _best(lambda: _update(slab, slots, d, f_copy)):.3f} ms, two O(n) scans "
              f"{1e3 * _best(lambda: _scans(y, alpha, f, p)):.3f} ms", flush=True)


def fit_seconds(make, X, y):
    t0 = time.perf_counter()
    model = make().fit(X, y)
    return time.perf_counter() - t0, model


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", nargs="+", default=["chunks", "q", "inner"])
    parser.add_argument("--q", type=int, nargs="+", default=[128, 64, 32, 16])
    parser.add_argument("--inner", type=float, nargs="+", default=[0.03, 0.1, 0.3])
    args = parser.parse_args()
    import leansvm
    import leansvm.exact.irwls as irwls
    from leansvm import datasets
    X, z, _, _ = load_regression("diamonds")
    X, z = X[:10000], z[:10000]
    leansvm.SVR(C=1, gamma=0.01).fit(X[:300], z[:300])         # compiled code loaded before any timing
    with threadpool_limits(1):
        if "chunks" in args.parts:
            chunks(X, z)
        if "q" in args.parts:
            for q in args.q:
                seconds, m = fit_seconds(lambda: leansvm.SVR(C=100, gamma=0.01, epsilon=0.1, random_state=0,
                                                             working_set_size=q), X, z)
                print(f"q = {q}: SVR fit {seconds:.2f} s, {m.n_iter_[0]} chunks", flush=True)
        if "inner" in args.parts:
            magic = datasets.load("magic")
            default = irwls.INNER_RELATIVE_TOL
            try:
                for rel in args.inner:
                    irwls.INNER_RELATIVE_TOL = rel
                    svr, _ = fit_seconds(lambda: leansvm.SVR(C=100, gamma=0.01, epsilon=0.1, random_state=0), X, z)
                    svc, _ = fit_seconds(lambda: leansvm.SVC(C=10, gamma=0.1, random_state=0),
                                         magic.X_train, magic.y_train)
                    print(f"INNER_RELATIVE_TOL = {rel}: SVR {svr:.2f} s, magic SVC {svc:.2f} s", flush=True)
            finally:
                irwls.INNER_RELATIVE_TOL = default


if __name__ == "__main__":
    main()
