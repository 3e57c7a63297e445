"""Does ``leansvm fit`` keep its promise on data it has never seen? Promised drop against realised test drop.

    python benchmarks/main_job/bench_main_job.py [--datasets banana twonorm ... friedman1-10k diamonds] [--seeds 5]
                                        [--max-accuracy-drop 0.5] [--max-error-increase 0.02]
                                        [--confidence 0.95] [--jobs 1] [--threads 1]

For each dataset and split seed: the training and test parts of the benchmark dataset are pooled
and split again (``train_test_split(test_size=0.2, stratify=y, random_state=seed)``, standardised
on the training part); ``leansvm.fit_lean`` runs on the training part with ``random_state=seed``;
the exact SVC at the (C, gamma) it chose is trained on the same training rows. The realised drop
is the exact model's test accuracy minus the returned model's (percentage points): the promise
holds when it is at most ``--max-accuracy-drop``. ``exact_fit_seconds``: that exact model's fit on
every training row, the unit of the job's time (``wall_seconds``). The summary counts the runs within the promise,
within the promise + 0.5 points, and the largest excess. ``--jobs``: runs in parallel processes,
``--threads`` BLAS threads each (1 by default). Writes ``benchmarks/results/main-job-<timestamp>.json``.

Regression sets (``friedman1-<N>``, ``diamonds``): the split is not stratified, the exact SVR at the
job's (C, gamma, epsilon) is the reference, and the realised increase is the returned model's test
RMSE over the exact model's, minus 1, in percent: the promise holds when it is at most
``--max-error-increase`` (a fraction, 0.02 = 2 %).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import PROMISE_SEEDS, RESULTS_DIR as RESULTS, promise_counts  # noqa: E402
#: the classification sets of ../shared/benchmarks.md that fit a quick run (a9a, magic and letter take longer)
DEFAULT_DATASETS = ("banana", "twonorm", "page-blocks0", "satimage", "optdigits", "penbased", "splice",
                    "mushroom", "wdbc")


def run_one(name, seed, drop, increase, confidence, threads=1):
    """One dataset, one split seed: the returned model's and the exact model's test accuracy (RMSE)."""
    from threadpoolctl import threadpool_limits

    from leansvm import datasets

    with threadpool_limits(threads):
        ds = datasets.load(name, standardize=False)
        if ds.task == "regression":
            return _run_regression(ds, seed, increase, confidence)
        return _run_one(ds, seed, drop, confidence)


def _pooled_split(ds, seed):
    """The dataset's training and test parts pooled and split again 80/20 by ``seed`` (stratified for
    classification)."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn.model_selection import train_test_split

    stack = sp.vstack if sp.issparse(ds.X_train) else np.vstack
    X, y = stack([ds.X_train, ds.X_test]), np.concatenate([np.asarray(ds.y_train), np.asarray(ds.y_test)])
    return train_test_split(X, y, test_size=0.2, random_state=seed,
                            stratify=None if ds.task == "regression" else y)


def _scaled(result, X_train, X_test):
    """The training and test rows as the returned model's own preprocessing step transforms them."""
    scaler = result.model.steps[0][1] if hasattr(result.model, "steps") else None
    return (X_train, X_test) if scaler is None else (scaler.transform(X_train), scaler.transform(X_test))


def _run_regression(ds, seed, increase, confidence):
    import numpy as np

    import leansvm

    X_train, X_test, y_train, y_test = _pooled_split(ds, seed)
    start = time.perf_counter()
    result = leansvm.fit_lean(X_train, y_train, X_test=X_test, y_test=y_test, max_error_increase=increase,
                              confidence=confidence, random_state=seed)
    wall = time.perf_counter() - start
    Xs_train, Xs_test = _scaled(result, X_train, X_test)
    fit_start = time.perf_counter()
    exact = leansvm.SVR(**result.params, random_state=seed).fit(Xs_train, y_train)
    exact_fit = time.perf_counter() - fit_start
    rmse = lambda pred: float(np.sqrt(np.mean((pred - y_test) ** 2)))  # noqa: E731
    exact_rmse, returned_rmse = rmse(exact.predict(Xs_test)), rmse(result.model.predict(X_test))
    chosen = result.chosen
    # against the exact model's RMSE on the rows the estimate is over (the folds it was confirmed on)
    relative = lambda error: 100 * (error / chosen.reference_error - 1)  # noqa: E731
    return {"dataset": ds.name, "task": "regression", "seed": seed, **result.params, "chosen": chosen.name,
            "returned": result.final.name, "kind": chosen.kind, "returned_n_sv": int(result.final.n_support), "exact_n_sv": int(exact.expansion_.n_support),
            "exact_test_rmse": exact_rmse, "returned_test_rmse": returned_rmse,
            "realised_increase_pct": 100 * (returned_rmse / exact_rmse - 1),
            "estimated_increase_pct": relative(chosen.validation_error),
            "bound_pct": relative(chosen.error_bound), "evidence_folds": chosen.evidence_folds, "n_train": int(X_train.shape[0]), "wall_seconds": wall,
            "exact_fit_seconds": exact_fit, "stage_seconds": result.stage_seconds()}


def _run_one(ds, seed, drop, confidence):
    import leansvm

    X_train, X_test, y_train, y_test = _pooled_split(ds, seed)
    start = time.perf_counter()
    result = leansvm.fit_lean(X_train, y_train, X_test=X_test, y_test=y_test, max_accuracy_drop=drop,
                              confidence=confidence, random_state=seed, libsvm_reference_model=False)
    wall = time.perf_counter() - start
    C, gamma = result.selection.fit_C, result.selection.gamma
    Xs_train, Xs_test = _scaled(result, X_train, X_test)
    fit_start = time.perf_counter()
    exact = leansvm.SVC(C=C, gamma=gamma, random_state=seed).fit(Xs_train, y_train)
    exact_fit = time.perf_counter() - fit_start
    exact_acc = float(exact.score(Xs_test, y_test))
    returned_acc = float(result.model.score(X_test, y_test))
    chosen = result.chosen
    return {"dataset": ds.name, "task": "classification", "seed": seed, "C": C, "gamma": gamma, "chosen": chosen.name, "kind": chosen.kind,
            "returned_n_sv": int(result.final.n_support), "exact_n_sv": int(exact.expansion_.n_support),
            "exact_test_acc": exact_acc, "returned_test_acc": returned_acc,
            "realised_drop_points": 100 * (exact_acc - returned_acc),
            "estimated_drop_points": None if chosen.drop is None else 100 * chosen.drop.mean,
            "bound_points": None if chosen.drop is None else 100 * chosen.drop.upper,
            "evidence_rows": None if chosen.drop is None else chosen.drop.n,
            "n_train": int(X_train.shape[0]), "wall_seconds": wall, "exact_fit_seconds": exact_fit,
            "stage_seconds": result.stage_seconds()}


def summarize(rows, drop_points, increase_pct):
    """Per task: ``common.promise_counts`` of its runs (regression: percent of the exact model's RMSE)."""
    return {task: promise_counts(rows, task, promised)
            for task, promised in (("classification", drop_points), ("regression", increase_pct))
            if any(r.get("task", "classification") == task for r in rows)}


def main(argv=None) -> int:
    from joblib import Parallel, delayed

    from leansvm.io import atomic_write

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DEFAULT_DATASETS))
    parser.add_argument("--seeds", type=int, default=PROMISE_SEEDS)
    parser.add_argument("--first-seed", type=int, default=0, help="run seeds first-seed ... first-seed + seeds - 1")
    parser.add_argument("--max-accuracy-drop", type=float, default=0.5, help="percentage points")
    parser.add_argument("--max-error-increase", type=float, default=0.02,
                        help="regression: a fraction of the exact model's RMSE")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--jobs", type=int, default=1, help="parallel processes")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads per process")
    args = parser.parse_args(argv)
    tasks = [(name, seed) for name in args.datasets for seed in range(args.first_seed, args.first_seed + args.seeds)]
    os.environ.setdefault("LEANSVM_PROGRESS", "0")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"main-job-{time.strftime('%Y%m%d-%H%M%S')}.json"
    rows = []

    def save(summary=None):          # after every run: an interrupted benchmark keeps what it measured
        with atomic_write(out, "w", encoding="utf-8") as f:
            json.dump({"max_accuracy_drop_points": args.max_accuracy_drop,
                       "max_error_increase_pct": 100 * args.max_error_increase, "confidence": args.confidence,
                       "seeds": args.seeds, "first_seed": args.first_seed, "jobs": args.jobs, "threads_per_job": args.threads, "cpu_count": os.cpu_count(),
                       "complete": summary is not None, "summary": summary, "rows": rows}, f, indent=1,
                      default=lambda o: o.item() if hasattr(o, "item") else str(o))

    for row in Parallel(n_jobs=args.jobs, return_as="generator_unordered")(
            delayed(run_one)(name, seed, args.max_accuracy_drop / 100, args.max_error_increase, args.confidence,
                             args.threads)
            for name, seed in tasks):
        rows.append(row)
        save()
    rows.sort(key=lambda r: (r["dataset"], r["seed"]))
    print(f"{'dataset':13} {'seed':>4} {'chosen':36} {'#SV':>6} {'exact #SV':>9} {'est':>6} {'bound':>6} "
          f"{'realised':>8} {'s':>6}")
    fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
    for r in rows:       # drops in points; regression: RMSE increases in percent
        regression = r["task"] == "regression"
        estimated, bound, realised = (r["estimated_increase_pct"], r["bound_pct"], r["realised_increase_pct"]) \
            if regression else (r["estimated_drop_points"], r["bound_points"], r["realised_drop_points"])
        print(f"{r['dataset']:13} {r['seed']:>4} {r['chosen'][:36]:36} {r['returned_n_sv']:>6} {r['exact_n_sv']:>9} "
              f"{fmt(estimated):>6} {fmt(bound):>6} {realised:>8.2f} {r['wall_seconds']:>6.0f}")
    summary = summarize(rows, args.max_accuracy_drop, 100 * args.max_error_increase)
    print("\n" + ", ".join(f"{k}: {v}" for k, v in summary.items()))
    save(summary)
    print(f"\nresults written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
