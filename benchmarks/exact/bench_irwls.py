"""Exact training: the working-set size q, shrinking on/off, and leansvm.SVC vs LIBSVM side by side.

    python benchmarks/exact/bench_irwls.py                       # q sweep + shrinking on the quick sets
    python benchmarks/exact/bench_irwls.py --datasets magic --q 128

For each dataset (hyperparameters from leansvm.datasets / benchmarks.md) and
each configuration, LIBSVM (scikit-learn SVC, one OpenMP thread) and leansvm
are fitted back to back in the same run, so both see the same machine load;
the table gives the ratio leansvm / LIBSVM time, the relative difference of
the dual objectives and the agreement of test predictions. Wall time and
CPU time (the process's, all threads) are both reported: LIBSVM runs on one
thread; leansvm computes large kernel-row blocks on two threads and, with
``--n-jobs``, solves one-vs-one problems in parallel threads. On a loaded
machine CPU-time ratios are the steadier figure. ``--intelex`` adds
scikit-learn-intelex's SVC (oneDAL) on every core beside ``--n-jobs -1`` rows
and on one thread beside the others:

    python benchmarks/exact/bench_irwls.py --q 128 --shrinking 1 --n-jobs 1,-1 --intelex \
        --datasets wdbc,banana,page-blocks0,twonorm,satimage,splice,mushroom,optdigits,penbased,letter
    python benchmarks/exact/bench_irwls.py --q 128 --shrinking 1 --n-jobs 1,-1 --intelex --repeat 1 \
        --datasets magic,a9a,synth-50k,checker-100k     # every classification set of the benchmark list
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.svm import SVC as LibSVC
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import finish_run, format_table, libsvm_input  # noqa: E402

from leansvm import SVC, datasets  # noqa: E402
from leansvm.core.sklearn_svc import libsvm_dual_objectives  # noqa: E402

QUICK = ["wdbc", "banana", "page-blocks0", "twonorm", "satimage"]
COLUMNS = [("dataset", "dataset", "s"), ("n", "n", "d"), ("q", "q", "d"), ("shrinking", "shrink", ""),
           ("n_jobs", "jobs", ""), ("libsvm_s", "LIBSVM s", ".2f"), ("leansvm_s", "leansvm s", ".2f"),
           ("ratio", "ratio", ".2f"), ("libsvm_cpu", "LIBSVM cpu", ".2f"),
           ("leansvm_cpu", "leansvm cpu", ".2f"), ("cpu_ratio", "cpu ratio", ".2f"),
           ("iterations", "chunks", "d"), ("rel_obj", "rel obj diff", ".1e"),
           ("agree", "agree", ".4f"), ("converged", "converged", ""), ("load", "load", ".1f")]


INTELEX_COLUMNS = [("intelex_threads", "intelex threads", "d"), ("intelex_s", "intelex s", ".2f"),
                   ("intelex_cpu", "intelex cpu", ".2f"), ("intelex_ratio", "leansvm / intelex", ".2f"),
                   ("accuracy", "leansvm acc", ".4f"), ("intelex_accuracy", "intelex acc", ".4f")]


REPEAT = 1          # --repeat: each side's fit timed this many times, the fastest kept


def _timed(fit):
    """(wall seconds, CPU seconds of the process) of the fastest of ``REPEAT`` runs of ``fit()``."""
    best = (np.inf, np.inf)
    for _ in range(REPEAT):
        c0, t0 = time.process_time(), time.perf_counter()
        fit()
        best = min(best, (time.perf_counter() - t0, time.process_time() - c0))
    return best


def run_one(ds, q, shrinking, seed, n_jobs=None, peer=True, cache_size=1000):
    model = SVC(C=ds.C, gamma=ds.gamma, cache_size=cache_size, working_set_size=q, shrinking=shrinking,
                random_state=seed, n_jobs=n_jobs)
    t_ours, c_ours = _timed(lambda: model.fit(ds.X_train, ds.y_train))
    if not peer:                   # leansvm alone (LIBSVM's time taken in another run)
        return {"dataset": ds.name, "n": ds.X_train.shape[0], "q": q, "shrinking": shrinking,
                "n_jobs": n_jobs or 1, "leansvm_s": t_ours, "leansvm_cpu": c_ours,
                "load": os.getloadavg()[0], "iterations": int(model.n_iter_.sum()),
                "dual_objective": model.dual_objective_.tolist(),
                "accuracy": float(model.score(ds.X_test, ds.y_test)),
                "converged": model.fit_status_ == 0, "leansvm_sv": int(model.support_.size)}
    Xl, Xl_test = libsvm_input(ds.X_train), libsvm_input(ds.X_test)
    ref = LibSVC(C=ds.C, gamma=ds.gamma, cache_size=cache_size)
    with threadpool_limits(1, user_api="openmp"):
        t_ref, c_ref = _timed(lambda: ref.fit(Xl, ds.y_train))
    ref_obj = libsvm_dual_objectives(ref)
    return {"dataset": ds.name, "n": ds.X_train.shape[0], "q": q, "shrinking": shrinking, "cache_mb": cache_size,
            "n_jobs": n_jobs or 1, "libsvm_s": t_ref, "leansvm_s": t_ours, "ratio": t_ours / t_ref,
            "libsvm_cpu": c_ref, "leansvm_cpu": c_ours, "cpu_ratio": c_ours / c_ref,
            "load": os.getloadavg()[0],
            "iterations": int(model.n_iter_.sum()),
            "rel_obj": float(np.max(np.abs(model.dual_objective_ - ref_obj) / np.abs(ref_obj))),
            "agree": float(np.mean(model.predict(ds.X_test) == ref.predict(Xl_test))),
            "converged": model.fit_status_ == 0, "accuracy": float(model.score(ds.X_test, ds.y_test)),
            "libsvm_sv": int(ref.support_.size), "leansvm_sv": int(model.support_.size)}


def run_intelex(ds, n_jobs, cache_size=1000):
    """scikit-learn-intelex's SVC (oneDAL) at the same C and gamma: wall and CPU seconds with its
    default threads (every core) when leansvm's n_jobs is -1, with one thread
    (``daal4py.daalinit(1)``) otherwise; its test labels' agreement with LIBSVM's is not taken
    here (the leansvm row has LIBSVM's)."""
    import daal4py
    from sklearnex.svm import SVC as IntelSVC
    threads = os.cpu_count() if n_jobs == -1 else 1
    daal4py.daalinit(threads)
    try:
        model = IntelSVC(C=ds.C, gamma=ds.gamma, cache_size=cache_size)
        wall, cpu = _timed(lambda: model.fit(libsvm_input(ds.X_train), ds.y_train))
        accuracy = float(model.score(libsvm_input(ds.X_test), ds.y_test))
    finally:
        daal4py.daalinit(os.cpu_count())
    return {"intelex_threads": threads, "intelex_s": wall, "intelex_cpu": cpu, "intelex_accuracy": accuracy}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(QUICK))
    parser.add_argument("--q", default="32,64,128,256,512", help="working-set sizes to sweep")
    parser.add_argument("--shrinking", default="1,0", help="shrinking settings to run (1,0)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", default="1", help="leansvm n_jobs values to run (1,2)")
    parser.add_argument("--no-libsvm", action="store_true",
                        help="fit leansvm alone (e.g. synth-200k, where LIBSVM takes ~17 min)")
    parser.add_argument("--cache-size", type=float, default=1000.0,
                        help="MB of kernel cache, every side (200: the libraries' default)")
    parser.add_argument("--intelex", action="store_true",
                        help="also scikit-learn-intelex's SVC: every core beside n_jobs=-1, one thread beside 1")
    parser.add_argument("--repeat", type=int, default=1,
                        help="time each side's fit this many times and keep the fastest (sub-second sets)")
    parser.add_argument("--name", default="irwls")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    global REPEAT
    REPEAT = max(1, args.repeat)
    columns = COLUMNS + (INTELEX_COLUMNS if args.intelex else [])
    rows = []
    for name in args.datasets.split(","):
        ds = datasets.load(name)
        # compiled code loaded before any timing: a small fit on two classes
        warm = np.concatenate([np.flatnonzero(ds.y_train == c)[:100] for c in np.unique(ds.y_train)[:2]])
        SVC(C=ds.C, gamma=ds.gamma).fit(ds.X_train[warm], ds.y_train[warm])
        for shrinking in (bool(int(v)) for v in args.shrinking.split(",")):
            for q in (int(v) for v in args.q.split(",")):
                for n_jobs in (int(v) for v in args.n_jobs.split(",")):
                    row = run_one(ds, q, shrinking, args.seed, n_jobs, peer=not args.no_libsvm, cache_size=args.cache_size)
                    if args.intelex:
                        row.update(run_intelex(ds, n_jobs, args.cache_size))
                        row["intelex_ratio"] = row["leansvm_s"] / row["intelex_s"]
                    rows.append(row)
                    print(format_table([row], columns).splitlines()[-1], flush=True)
    finish_run(rows, columns, args.name, args.markdown)


if __name__ == "__main__":
    main()
