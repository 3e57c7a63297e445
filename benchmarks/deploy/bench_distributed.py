"""Dask benchmarks: prediction throughput, distributed budget training, model selection on a cluster.

    python benchmarks/deploy/bench_distributed.py                  # all three parts
    python benchmarks/deploy/bench_distributed.py --parts predict --rows 10000000

1. predict: checkerboard rows generated on the workers (``dask.array.random``),
   predicted by ``leansvm.distributed.predict`` on a ``LocalCluster`` (2 worker
   processes, 1 thread each) with the full model (leansvm SVC on checker-20k,
   C = 100, gamma = 2) and with its compressed version (``leansvm.compress``);
   accuracy reduced on the cluster, so only a number comes back. Side by side:
   the same models predicting 1/10 of the rows in this process (leansvm's own
   thread pool, all cores).
2. fit_budget: ``leansvm.distributed.fit_budget`` (budget B) with 1, 2 and 4
   workers (merge + projection, with and without the final one-block pass) vs
   single-machine ``BSGDClassifier.fit`` on the same checkerboard rows, each
   over several SGD seeds; mean / min / max test accuracy on the 20,000-point
   checker test set, wall seconds, and the CPU seconds of every chain (its
   worker process) and of the final pass, so the scaling shows even where the
   wall clock cannot (2 shared cores).
3. model selection: ``SVCCV`` (gamma x fold screened paths) locally (n_jobs=1)
   and through ``fit_svccv`` on the 2-worker cluster; same best (C, gamma)?

The machine has 2 cores shared with other jobs: 4 workers oversubscribe it,
and all timings are noisy. Results: a table and JSON in benchmarks/results/.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import RESULTS_DIR, format_table, machine_info, write_json_atomic  # noqa: E402

import leansvm  # noqa: E402
from leansvm import datasets  # noqa: E402
from leansvm import distributed as ld  # noqa: E402


def cluster(n_workers):
    import distributed
    cl = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40)
    return cl, distributed.Client(cl)


def checker_labels(X):
    return ((np.floor(X[:, 0]) + np.floor(X[:, 1])).astype(np.int64) % 2)


def _warm(client, model):
    """Import leansvm and compile on every worker before timing."""
    import dask.array as da
    ld.predict(model, da.zeros((4, 2), chunks=2), client=client).compute()


def bench_predict(rows: int, chunk: int, n_sv_compressed: int, full_rows: int | None = None) -> list[dict]:
    import dask.array as da
    ds = datasets.load("checker-20k")
    full = leansvm.SVC(C=ds.C, gamma=ds.gamma).fit(ds.X_train, ds.y_train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = leansvm.compress(full, n_sv=n_sv_compressed, random_state=0)
    out = []
    cl, client = cluster(2)
    try:
        for name, model, n_rows in (("full", full, full_rows or rows), ("compressed", small, rows)):
            _warm(client, model)
            X = da.random.default_rng(0).uniform(0, 4, size=(n_rows, 2), chunks=(chunk, 2))
            truth = X.map_blocks(checker_labels, drop_axis=1, dtype=np.int64)
            pred = ld.predict(model, X, client=client)
            start = time.perf_counter()
            accuracy = float(client.compute((pred == truth).mean(), sync=True))
            dask_s = time.perf_counter() - start
            local_rows = n_rows // 10
            Xl = np.random.default_rng(1).uniform(0, 4, size=(local_rows, 2))
            model.predict(Xl[:1000])
            start = time.perf_counter()
            local_acc = float(np.mean(model.predict(Xl) == checker_labels(Xl)))
            local_s = time.perf_counter() - start
            row = {"model": name, "n_sv": model.expansion_.n_support, "rows": n_rows,
                   "dask_s": dask_s, "dask_rows_per_s": n_rows / dask_s, "dask_accuracy": accuracy,
                   "local_rows": local_rows, "local_rows_per_s": local_rows / local_s,
                   "local_accuracy": local_acc, "test_accuracy": float(model.score(ds.X_test, ds.y_test))}
            out.append(row)
            print(f"predict {name}: {row}", flush=True)
    finally:
        client.close()
        cl.close()
    full_rate = out[0]["dask_rows_per_s"]
    for row in out:
        row["speedup_vs_full"] = row["dask_rows_per_s"] / full_rate
        row["dask_vs_local"] = row["dask_rows_per_s"] / row["local_rows_per_s"]
    return out


def bench_fit_budget(n: int, budget: int, chunk: int, workers: list[int], seeds: list[int]) -> list[dict]:
    """Single-machine BSGD vs fit_budget (merge + projection, with and without the final pass),
    each over ``seeds`` (SGD order); wall seconds, client CPU and every chain's CPU seconds."""
    import dask.array as da
    from leansvm.budget.bsgd_classifier import BSGDClassifier

    ds = datasets.load("checker-100k")
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 4, size=(n, 2))
    y = checker_labels(X)
    params = dict(C=ds.C, gamma=ds.gamma)

    def summary(setting, w, accs, walls, extra):
        row = {"setting": setting, "workers": w, "seeds": len(accs), "seconds": float(np.mean(walls)),
               "accuracy": float(np.mean(accs)), "accuracy_min": float(np.min(accs)),
               "accuracy_max": float(np.max(accs)), "accuracies": [float(a) for a in accs], **extra}
        print(row, flush=True)
        return row

    accs, walls, cpus = [], [], []
    for seed in seeds:
        start, cpu = time.perf_counter(), time.process_time()
        single = BSGDClassifier(budget=budget, random_state=seed, **params).fit(X, y)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        accs.append(single.score(ds.X_test, ds.y_test))
    single_s = float(np.mean(walls))
    rows = [summary("single machine BSGDClassifier.fit", 1, accs, walls,
                    {"speedup": 1.0, "chain_cpu_max_s": float(np.mean(cpus)), "chain_cpu_sum_s": float(np.mean(cpus)),
                     "final_cpu_s": 0.0})]
    Xd, yd = da.from_array(X, chunks=(chunk, 2)), da.from_array(y, chunks=chunk)
    for w in workers:
        cl, client = cluster(w)
        try:
            # warm-up: import + numba compilation on every worker, not timed
            warm = min(n, 400 * w)
            ld.fit_budget(da.from_array(X[:warm], chunks=(400, 2)), da.from_array(y[:warm], chunks=400),
                          budget=budget, client=client, **params)
            for final_blocks, label in ((0, "merge + projection"), (None, "+ final pass (default)")):
                if w == 1 and final_blocks is None:
                    continue                     # one chain: the default runs no final pass
                accs, walls, cmax, csum, fin = [], [], [], [], []
                for seed in seeds:
                    start = time.perf_counter()
                    model = ld.fit_budget(Xd, yd, budget=budget, client=client, final_blocks=final_blocks,
                                          random_state=seed, **params)
                    walls.append(time.perf_counter() - start)
                    accs.append(model.score(ds.X_test, ds.y_test))
                    chain_cpu = model.distributed_info_["chain_cpu_s"][0]
                    cmax.append(max(chain_cpu))
                    csum.append(sum(chain_cpu))
                    fin.append(model.distributed_info_["final_cpu_s"])
                rows.append(summary(f"fit_budget, {w} worker(s), {label}", w, accs, walls,
                                    {"speedup": single_s / float(np.mean(walls)),
                                     "chain_cpu_max_s": float(np.mean(cmax)), "chain_cpu_sum_s": float(np.mean(csum)),
                                     "final_cpu_s": float(np.mean(fin))}))
        finally:
            client.close()
            cl.close()
    return rows


def bench_model_selection(n: int) -> list[dict]:
    ds = datasets.load("twonorm")
    X, y = ds.X_train[:n], ds.y_train[:n]
    grid = dict(Cs=np.logspace(-2, 2, 9), gammas=[0.005, 0.015, 0.05, 0.15], cv=3)
    leansvm.SVCCV(Cs=[1.0], gammas=[0.1], cv=2, n_jobs=1).fit(X[:100], y[:100])   # warm-up (compilation)
    start = time.perf_counter()
    local = leansvm.SVCCV(n_jobs=1, **grid).fit(X, y)
    local_s = time.perf_counter() - start
    cl, client = cluster(2)
    try:
        ld.fit_svccv(leansvm.SVCCV(Cs=[1.0], gammas=[0.1], cv=2), X[:100], y[:100], client=client)  # warm-up
        start = time.perf_counter()
        remote = ld.fit_svccv(leansvm.SVCCV(**grid), X, y, client=client)
        remote_s = time.perf_counter() - start
    finally:
        client.close()
        cl.close()
    same = (remote.best_params_ == local.best_params_
            and np.array_equal(remote.cv_results_["mean_test_score"], local.cv_results_["mean_test_score"]))
    row = {"n": n, "tasks": len(grid["gammas"]) * grid["cv"], "Cs": len(grid["Cs"]), "local_s": local_s,
           "dask_2_workers_s": remote_s, "speedup": local_s / remote_s, "same_result": bool(same),
           "best_params": remote.best_params_, "best_score": remote.best_score_}
    print(row, flush=True)
    return [row]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", default=["predict", "fit_budget", "select"])
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows predicted through Dask")
    parser.add_argument("--full-rows", type=int, help="rows predicted by the full model (default: --rows)")
    parser.add_argument("--chunk", type=int, default=250_000, help="rows per block (prediction)")
    parser.add_argument("--n-sv-compressed", type=int, default=64)
    parser.add_argument("--train-rows", type=int, default=400_000, help="rows for fit_budget")
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--train-chunk", type=int, default=25_000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="SGD seeds (fit_budget)")
    parser.add_argument("--select-rows", type=int, default=3000)
    parser.add_argument("--tag", default="distributed")
    args = parser.parse_args(argv)
    results = {}
    if "predict" in args.parts:
        results["predict"] = bench_predict(args.rows, args.chunk, args.n_sv_compressed, args.full_rows)
        print(format_table(results["predict"], [
            ("model", "model", "s"), ("n_sv", "#SV", "d"), ("rows", "rows", "d"), ("dask_s", "Dask s", ".1f"),
            ("dask_rows_per_s", "rows/s (Dask, 2 workers)", ".3g"),
            ("local_rows_per_s", "rows/s (in process)", ".3g"),
            ("speedup_vs_full", "x full", ".1f"), ("dask_accuracy", "accuracy", ".4f")]))
    if "fit_budget" in args.parts:
        results["fit_budget"] = bench_fit_budget(args.train_rows, args.budget, args.train_chunk, args.workers,
                                                 args.seeds)
        print(format_table(results["fit_budget"], [
            ("setting", "setting", "s"), ("seconds", "wall s", ".1f"), ("speedup", "speed-up", ".2f"),
            ("chain_cpu_max_s", "CPU s slowest chain", ".2f"), ("chain_cpu_sum_s", "CPU s all chains", ".2f"),
            ("final_cpu_s", "CPU s final pass", ".2f"), ("accuracy", "mean acc", ".4f"),
            ("accuracy_min", "min", ".4f"), ("accuracy_max", "max", ".4f")]))
    if "select" in args.parts:
        results["select"] = bench_model_selection(args.select_rows)
        print(format_table(results["select"], [
            ("n", "n", "d"), ("tasks", "paths", "d"), ("Cs", "Cs/path", "d"), ("local_s", "local s", ".1f"),
            ("dask_2_workers_s", "Dask 2 workers s", ".1f"), ("speedup", "speed-up", ".2f"),
            ("same_result", "same result", "s")]))
    out = RESULTS_DIR / f"{args.tag}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    write_json_atomic(out, {"benchmark": "distributed", "machine": machine_info(), "args": vars(args),
                            "results": results})
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
