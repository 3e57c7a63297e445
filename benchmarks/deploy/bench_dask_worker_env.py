"""What a Dask nanny's environment costs ReducedSVC's objective on a worker, against the client.

    python benchmarks/deploy/bench_dask_worker_env.py

One row block's objective (the smoothed hinge, 1,000 vectors, 100,000 rows of synth-200k, float32
blocks, one BLAS thread) timed as the mean of 5 calls, in this process and in a one-worker
``LocalCluster`` (2 threads) started under each ``distributed.nanny.pre-spawn-environ``: Dask's
default (``MALLOC_TRIM_THRESHOLD_=65536`` and one OpenMP/BLAS/MKL thread), none, the thread settings
only, the trim setting only. Each cluster starts in a fresh process: the nanny's settings stay in
the environment of the process that started it, so a second cluster there inherits the first's.
Prints the seconds; writes nothing.
"""

from __future__ import annotations

import subprocess
import sys
import time
import warnings

import numpy as np

ENVIRONMENTS = {"Dask's default": None, "none": {},
                "threads only": {"OMP_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1, "MKL_NUM_THREADS": 1},
                "trim only": {"MALLOC_TRIM_THRESHOLD_": 65536}}


def make_problem():
    from leansvm import datasets
    from leansvm.core.kernels import Kernel
    from leansvm.reduced.reduced_svm import label_problem, label_targets
    ds = datasets.load("synth-200k")
    X, y = np.ascontiguousarray(ds.X_train[:100000]), ds.y_train[:100000]
    return label_problem(X, label_targets(y, np.unique(y)), kernel=Kernel("rbf", 0.05), n_vectors=1000,
                         loss="margin", block_dtype=np.float32, learn_gamma=True, huber=1.0)


def seconds_per_objective(problem, theta, repeats=5) -> float:
    """As the Dask fit runs it on a worker (``_block_objective``: one BLAS thread, freed memory kept)."""
    from leansvm.distributed import _block_objective
    _block_objective(problem, theta)
    start = time.perf_counter()
    for _ in range(repeats):
        _block_objective(problem, theta)
    return (time.perf_counter() - start) / repeats


def one(name):
    import dask
    import distributed

    warnings.simplefilter("ignore")
    problem = make_problem()
    rng = np.random.default_rng(0)
    theta = problem.pack(problem.X[rng.choice(problem.X.shape[0], 1000, replace=False)],
                         0.01 * rng.normal(size=(1000, 1)), np.zeros(1))
    environ = ENVIRONMENTS[name]
    if name == "Dask's default":
        print(f"client: {seconds_per_objective(problem, theta):.4f} s", flush=True)
    settings = {} if environ is None else {"distributed.nanny.pre-spawn-environ": environ}
    with dask.config.set(settings), distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                                            dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        remote = client.submit(make_problem)
        print(f"worker, {name}: {client.submit(seconds_per_objective, remote, theta).result():.4f} s", flush=True)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        return one(sys.argv[2])
    for name in ENVIRONMENTS:
        subprocess.run([sys.executable, __file__, "--one", name], check=True)


if __name__ == "__main__":
    main()
