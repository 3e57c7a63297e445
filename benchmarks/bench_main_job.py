"""Does ``leansvm fit`` keep its promise on data it has never seen? Promised drop against realised test drop.

    python benchmarks/bench_main_job.py [--datasets banana twonorm ...] [--seeds 5]
                                        [--max-accuracy-drop 0.5] [--confidence 0.95] [--jobs 1]

For each dataset and split seed: the training and test parts of the benchmark dataset are pooled
and split again (``train_test_split(test_size=0.2, stratify=y, random_state=seed)``, standardised
on the training part); ``leansvm.fit_lean`` runs on the training part with ``random_state=seed``;
the exact SVC at the (C, gamma) it chose is trained on the same training rows. The realised drop
is the exact model's test accuracy minus the returned model's (percentage points): the promise
holds when it is at most ``--max-accuracy-drop``. The summary counts the runs within the promise,
within the promise + 0.5 points, and the largest excess. ``--jobs``: runs in parallel processes,
one thread each. Writes ``benchmarks/results/main-job-<timestamp>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import RESULTS_DIR as RESULTS  # noqa: E402
#: the classification sets of ../shared/benchmarks.md that fit a quick run (a9a, magic and letter take longer)
DEFAULT_DATASETS = ("banana", "twonorm", "page-blocks0", "satimage", "optdigits", "penbased", "splice",
                    "mushroom", "wdbc")


def run_one(name, seed, drop, confidence):
    """One dataset, one split seed: the returned model's and the exact model's test accuracy."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return _run_one(name, seed, drop, confidence)


def _run_one(name, seed, drop, confidence):
    import numpy as np
    import scipy.sparse as sp
    from sklearn.model_selection import train_test_split

    import leansvm
    from leansvm import datasets

    ds = datasets.load(name, standardize=False)
    stack = sp.vstack if sp.issparse(ds.X_train) else np.vstack
    X, y = stack([ds.X_train, ds.X_test]), np.concatenate([np.asarray(ds.y_train), np.asarray(ds.y_test)])
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=seed)
    start = time.perf_counter()
    result = leansvm.fit_lean(X_train, y_train, X_test=X_test, y_test=y_test, max_accuracy_drop=drop,
                              confidence=confidence, random_state=seed, libsvm_reference_model=False)
    wall = time.perf_counter() - start
    C, gamma = result.selection.C, result.selection.gamma
    scaler = result.model.steps[0][1] if hasattr(result.model, "steps") else None
    Xs_train = X_train if scaler is None else scaler.transform(X_train)
    Xs_test = X_test if scaler is None else scaler.transform(X_test)
    exact = leansvm.SVC(C=C, gamma=gamma, random_state=seed).fit(Xs_train, y_train)
    exact_acc = float(exact.score(Xs_test, y_test))
    returned_acc = float(result.model.score(X_test, y_test))
    chosen = result.chosen
    return {"dataset": name, "seed": seed, "C": C, "gamma": gamma, "chosen": chosen.name, "kind": chosen.kind,
            "returned_n_sv": int(result.final.n_support), "exact_n_sv": int(exact.expansion_.n_support),
            "exact_test_acc": exact_acc, "returned_test_acc": returned_acc,
            "realised_drop_points": 100 * (exact_acc - returned_acc),
            "estimated_drop_points": None if chosen.drop is None else 100 * chosen.drop.mean,
            "bound_points": None if chosen.drop is None else 100 * chosen.drop.upper,
            "evidence_rows": None if chosen.drop is None else chosen.drop.n,
            "n_train": int(X_train.shape[0]), "wall_seconds": wall}


def summarize(rows, drop_points):
    runs = [r for r in rows if "error" not in r]
    excess = [r["realised_drop_points"] - drop_points for r in runs]
    return {"runs": len(runs),
            "within_promise": sum(e <= 1e-9 for e in excess),
            "within_promise_plus_half": sum(e <= 0.5 + 1e-9 for e in excess),
            "within_promise_plus_one": sum(e <= 1.0 + 1e-9 for e in excess),
            "largest_excess_points": max(excess, default=None),
            "cheaper_than_exact": sum(r["kind"] != "exact" for r in runs),
            "median_size_ratio": None if not runs else
            float(sorted(r["returned_n_sv"] / max(r["exact_n_sv"], 1) for r in runs)[len(runs) // 2])}


def main(argv=None) -> int:
    from joblib import Parallel, delayed

    from leansvm.io import atomic_write

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DEFAULT_DATASETS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--max-accuracy-drop", type=float, default=0.5, help="percentage points")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--jobs", type=int, default=1, help="parallel processes (one thread each)")
    args = parser.parse_args(argv)
    tasks = [(name, seed) for name in args.datasets for seed in range(args.seeds)]
    os.environ.setdefault("LEANSVM_PROGRESS", "0")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"main-job-{time.strftime('%Y%m%d-%H%M%S')}.json"
    rows = []

    def save(summary=None):          # after every run: an interrupted benchmark keeps what it measured
        with atomic_write(out, "w", encoding="utf-8") as f:
            json.dump({"max_accuracy_drop_points": args.max_accuracy_drop, "confidence": args.confidence,
                       "seeds": args.seeds, "jobs": args.jobs, "threads_per_job": 1, "cpu_count": os.cpu_count(),
                       "complete": summary is not None, "summary": summary, "rows": rows}, f, indent=1,
                      default=lambda o: o.item() if hasattr(o, "item") else str(o))

    for row in Parallel(n_jobs=args.jobs, return_as="generator_unordered")(
            delayed(run_one)(name, seed, args.max_accuracy_drop / 100, args.confidence) for name, seed in tasks):
        rows.append(row)
        save()
    rows.sort(key=lambda r: (r["dataset"], r["seed"]))
    print(f"{'dataset':13} {'seed':>4} {'chosen':36} {'#SV':>6} {'exact #SV':>9} {'est':>6} {'bound':>6} "
          f"{'realised':>8} {'s':>6}")
    fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
    for r in rows:
        print(f"{r['dataset']:13} {r['seed']:>4} {r['chosen'][:36]:36} {r['returned_n_sv']:>6} {r['exact_n_sv']:>9} "
              f"{fmt(r['estimated_drop_points']):>6} {fmt(r['bound_points']):>6} "
              f"{r['realised_drop_points']:>8.2f} {r['wall_seconds']:>6.0f}")
    summary = summarize(rows, args.max_accuracy_drop)
    print("\n" + ", ".join(f"{k}: {v}" for k, v in summary.items()))
    save(summary)
    print(f"\nresults written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
