"""The main job at 200k-1M rows: ``leansvm fit`` under a time budget beside Nystroem + a linear model.

    python benchmarks/main_job/bench_main_job_scale.py [--datasets synth-200k synth-1M checker-1M friedman1-1M]
                                              [--budget-seconds 600]

For each dataset (its benchmark training and test parts, ``docs/datasets.md``): ``leansvm.fit_lean``
with ``--budget-seconds`` (wall time and peak memory of the whole call, in a child process so that
the peak is its own), the returned model's #SV and test accuracy (regression: RMSE); then the peer
at the returned model's size: Nystroem with as many landmarks + ``LinearSVC`` (``Ridge`` for
regression), C from {0.1, 1, 10} by its own 3-fold search on 20,000 rows, fitted on at most 4 GB of
features (all rows up to 250,000 at 2,000 landmarks); and scikit-learn-intelex's SVC (SVR) on every
training row at the job's hyperparameters, on every core, stopped after ``--intelex-minutes`` (30) and
marked so. ``--peer-for FILE`` adds the peers a row of an earlier results file lacks.
``--reference-seconds R``: where the job fitted its exact model on a subsample, the
exact SVC (SVR) at the job's hyperparameters on the largest subsample found to fit in R seconds (the job's
subsample fit scaled as n^1.7, the growth measured on synth from 2,000 to 160,000 rows, then grown from
each fit's own time while the next is estimated to fit), the reference the returned model is compared with.
Writes ``benchmarks/results/main-job-scale-<timestamp>.json``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import RESULTS_DIR as RESULTS  # noqa: E402
#: the peer's largest size (the bound on the returned model: at most 5,000 vectors)
MAX_LANDMARKS = 5000


def _fit_child(name, budget, queue):
    from leansvm import datasets, fit_lean

    ds = datasets.load(name)
    classification = {} if ds.task == "regression" else {"libsvm_reference_model": False, "progress": False}
    start = time.perf_counter()
    result = fit_lean(ds.X_train, ds.y_train, X_test=ds.X_test, y_test=ds.y_test, budget_seconds=budget,
                      verbose=True, **classification)
    seconds = time.perf_counter() - start
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
    final = result.final
    regression = result.task == "regression"
    row = {"dataset": name, "budget_seconds": budget, "seconds": seconds, "peak_gb": peak_gb,
           "returned": final.name, "returned_n_sv": int(final.n_support)}
    exact = next(c for c in result.candidates if c.kind == "exact")
    subsample = re.search(r"\((\d+) of \d+ (?:samples|rows)\)", exact.name)
    row.update(exact_name=exact.name, exact_n_sv=int(exact.n_support), exact_fit_seconds=exact.fit_seconds,
               exact_rows=int(subsample.group(1)) if subsample else None,
               steps=[f"[{s.stage}] {s.choice} -- {s.reason}" for s in result.steps],
               stage_seconds=result.stage_seconds())
    if regression:
        row.update(returned_test_rmse=final.test_error, exact_test_rmse=exact.test_error, params=result.params)
    else:
        row.update(returned_test_acc=final.test_accuracy, exact_test_acc=exact.test_accuracy,
                   C=result.selection.fit_C, gamma=result.selection.gamma)
    # every model the job trained, chosen or not (what each family reached in its share): accuracy, or RMSE
    score = ("validation_error", "test_error") if regression else ("validation_accuracy", "test_accuracy")
    row["candidates"] = [{"name": c.name, "kind": c.kind, "n_sv": int(c.n_support), "fit_seconds": c.fit_seconds,
                          "validation": getattr(c, score[0]), "test": getattr(c, score[1], None)}
                         for c in result.candidates]
    queue.put(row)


#: growth of leansvm's exact fit time in n on synth (2,000 -> 160,000 rows: 0.05 s -> 77 s)
FIT_GROWTH = 1.7


def _result_of(child, queue, limit=None):
    """What ``child`` put on ``queue``; a RuntimeError when it ended without (its traceback is on stderr)
    instead of waiting for ever; None, the child stopped, after ``limit`` seconds."""
    import queue as queues

    start = time.perf_counter()
    while True:
        try:
            out = queue.get(timeout=5)
            child.join()
            return out
        except queues.Empty:
            if not child.is_alive():
                raise RuntimeError(f"the child process ended with code {child.exitcode} and no result") from None
            if limit is not None and time.perf_counter() - start > limit:
                child.terminate()
                child.join()
                return None


def _reference_child(name, rows, params, queue, library="leansvm"):
    """The exact SVC (SVR) at ``params`` on ``rows`` random training rows (None: all) of ``name``, by
    leansvm (one core) or ``library`` 'intelex' (scikit-learn-intelex, every core); its time, #SV and
    test score on ``queue``."""
    from sklearn.preprocessing import StandardScaler

    import leansvm
    from leansvm import datasets

    ds = datasets.load(name)
    rows = ds.X_train.shape[0] if rows is None else rows
    pick = np.sort(np.random.default_rng(0).permutation(ds.X_train.shape[0])[:rows])
    # scaled as the job scales (z-scores of the training rows), so that (C, gamma) mean the same
    scaler = StandardScaler().fit(ds.X_train[pick])
    X, y = scaler.transform(ds.X_train[pick]), np.asarray(ds.y_train)[pick]
    Xt, yt = scaler.transform(ds.X_test), np.asarray(ds.y_test)
    regression = "epsilon" in params
    if library == "intelex":
        from sklearnex.svm import SVC, SVR

        make = lambda: (SVR if regression else SVC)(cache_size=500, **params)  # noqa: E731
    else:
        make = lambda: (leansvm.SVR if regression else leansvm.SVC)(cache_size=500, random_state=0,  # noqa: E731
                                                                    **params)
    start = time.perf_counter()
    model = make().fit(X, y)
    seconds = time.perf_counter() - start
    pred = model.predict(Xt)
    n_sv = model.support_.size if library == "intelex" else model.expansion_.n_support
    queue.put({"rows": int(rows), "seconds": seconds, "n_sv": int(n_sv),
               **({"test_rmse": float(np.sqrt(np.mean((pred - yt) ** 2)))} if regression else
                  {"test_acc": float(np.mean(pred == yt))})})


def _params(row) -> dict:
    return row.get("params") or {"C": row["C"], "gamma": row["gamma"]}


def intelex_peer(name, row, minutes):
    """scikit-learn-intelex's SVC (SVR) on every training row at the job's hyperparameters, in a child
    process stopped after ``minutes`` (then {'stopped_after_seconds': ...}); {'missing': ...} where it is
    not installed (the 'bench' extra), so the job's own row is still written."""
    import importlib.util

    if importlib.util.find_spec("sklearnex") is None:
        return {"missing": "scikit-learn-intelex is not installed (pip install '.[bench]')"}
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    child = ctx.Process(target=_reference_child, args=(name, None, _params(row), queue, "intelex"))
    child.start()
    out = _result_of(child, queue, limit=60 * minutes)
    return out or {"stopped_after_seconds": 60 * minutes, "threads": os.cpu_count()}


#: the reference's next subsample is this share of the rows estimated to take the whole time, and is
#: fitted only when it has at least REFERENCE_STEP times the rows of the last fit
REFERENCE_MARGIN, REFERENCE_STEP = 0.9, 1.25


def exact_reference(name, row, seconds):
    """The exact SVC (SVR) on the largest subsample found to fit in ``seconds``, each fit in a child
    process stopped at ``seconds``: first the rows estimated from the job's exact fit (t ~ n^FIT_GROWTH),
    then, while a fit ends well inside the time, the rows estimated from that fit's own time. The
    job's fit ran under other load (checker-1M: 39,995 rows in 101 s gave 114,366 rows, fitted in
    248 s). The last fit within ``seconds`` is the reference; 'tried' lists every (rows, seconds)."""
    from leansvm import datasets

    n = datasets.load(name).X_train.shape[0]
    rows = min(n, int(row["exact_rows"] * (seconds / max(row["exact_fit_seconds"], 1e-9)) ** (1 / FIT_GROWTH)))
    best, tried = None, []
    while True:
        queue = mp.get_context("spawn").Queue()
        child = mp.get_context("spawn").Process(target=_reference_child, args=(name, rows, _params(row), queue))
        child.start()
        out = _result_of(child, queue, limit=seconds)
        tried.append([rows, None if out is None else out["seconds"]])
        if out is None:                   # past the time: the last fit within it stands, or half the rows
            if best is not None:
                break
            rows //= 2
            continue
        best = out
        grown = min(n, int(rows * REFERENCE_MARGIN * (seconds / max(out["seconds"], 1e-9)) ** (1 / FIT_GROWTH)))
        if rows >= n or grown < REFERENCE_STEP * rows:
            break
        rows = grown
    return {**best, "tried": tried}


#: the peer's feature matrix is at most this many float64 values (4 GB): min(n, PEER_VALUES / landmarks) rows
PEER_VALUES = 5e8


def job_scaling(row) -> str | None:
    """The feature scaling the job used: its log's '[scale] <kind>:' line (a choice), or its scale line
    in the scaler's own words (no choice: the one-output tasks, ``FeatureScaler.what``); None where
    it logged none."""
    from leansvm.preprocessing.scaling import FeatureScaler

    said = {kind: FeatureScaler(kind).fit(np.array([[0.0, 1.0], [1.0, 3.0]])).what()[:30]
            for kind in ("range", "standard", "max-abs")}
    for step in (s for s in row.get("steps", []) if s.startswith("[scale]")):
        found = re.match(r"\[scale\] ([a-z-]+):", step)
        if found:
            return found.group(1)
        kind = next((kind for kind, words in said.items() if words in step), None)
        if kind:
            return kind
    return None


def nystroem_peer(name, n_landmarks, gamma, regression, scaling=None):
    """Nystroem(n_landmarks) + LinearSVC (Ridge), C (alpha) by 3-fold CV on 20,000 rows, refit on the
    training rows (at most PEER_VALUES / n_landmarks of them, a random subsample, so that its features
    stay within 4 GB); on the features scaled as the job scaled them (``scaling``: its kind, the job's
    gamma is in those units; None: as loaded)."""
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    from leansvm import datasets

    from leansvm.preprocessing.scaling import FeatureScaler

    ds = datasets.load(name)
    X_train, X_test = ds.X_train, ds.X_test
    if scaling is not None:
        scaler = FeatureScaler(scaling).fit(X_train)
        X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    linear = Ridge() if regression else LinearSVC(max_iter=2000)
    grid = {"ridge__alpha": [0.1, 1.0, 10.0]} if regression else {"linearsvc__C": [0.1, 1.0, 10.0]}
    pipe = make_pipeline(Nystroem(gamma=gamma, n_components=int(n_landmarks), random_state=0), linear)
    order = np.random.default_rng(0).permutation(X_train.shape[0])
    rows, fit_rows = order[:20000], np.sort(order[:int(PEER_VALUES / n_landmarks)])
    start = time.perf_counter()
    search = GridSearchCV(pipe, grid, cv=3).fit(X_train[rows], np.asarray(ds.y_train)[rows])
    model = pipe.set_params(**search.best_params_).fit(X_train[fit_rows], np.asarray(ds.y_train)[fit_rows])
    pred = model.predict(X_test)
    y = np.asarray(ds.y_test)
    score = float(np.sqrt(np.mean((pred - y) ** 2))) if regression else float(np.mean(pred == y))
    return {"landmarks": int(n_landmarks), "rows": int(fit_rows.size), "seconds": time.perf_counter() - start,
            "scaling": scaling,
            ("test_rmse" if regression else "test_acc"): score, "params": search.best_params_}


def peer_of(row) -> dict:
    """The Nystroem peer of a result row: as many landmarks as the returned model has vectors, at most
    MAX_LANDMARKS (an exact model's tens of thousands would need tens of GB of features)."""
    gamma = row.get("gamma") or (row.get("params") or {}).get("gamma")
    landmarks = int(np.clip(row["returned_n_sv"], 10, MAX_LANDMARKS))
    return nystroem_peer(row["dataset"], landmarks, gamma, "returned_test_rmse" in row, job_scaling(row))


def add_peers(path, nystroem=True, intelex_minutes=30.0) -> int:
    """The peers (Nystroem, scikit-learn-intelex after ``intelex_minutes``; 0: none) each row of the
    results file ``path`` lacks (of a repeated command, its first run), written into that file."""
    from leansvm.io import atomic_write

    data = json.loads(Path(path).read_text())
    for row in (r for r in data["rows"] if r.get("run", 1) == 1):
        for key, wanted, run in (("nystroem", nystroem, lambda: peer_of(row)),
                                 ("intelex", intelex_minutes > 0, lambda: intelex_peer(row["dataset"], row,
                                                                                      intelex_minutes))):
            if wanted and key not in row:
                row[key] = run()
                print(json.dumps({"dataset": row["dataset"], key: row[key]}, default=str), flush=True)
                with atomic_write(path, "w", encoding="utf-8") as f:
                    json.dump(data, f, indent=1, default=str)
    return 0


def main(argv=None) -> int:
    from leansvm.io import atomic_write

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["synth-200k", "synth-1M", "checker-1M", "friedman1-1M"],
                        help="names leansvm.datasets.load knows (friedman1-<N>: regression, RMSE)")
    parser.add_argument("--budget-seconds", type=float, default=600.0)
    parser.add_argument("--no-peer", action="store_true",
                        help="skip Nystroem + a linear model (at 5,000 landmarks on 200k rows: over 10 minutes here)")
    parser.add_argument("--reference-seconds", type=float, default=None,
                        help="where the job's exact model is on a subsample: the exact SVC on the largest "
                             "subsample found to fit in this many seconds")
    parser.add_argument("--intelex-minutes", type=float, default=30.0,
                        help="stop scikit-learn-intelex's SVC on the full data after this long (0: do not run it)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="run the same command this many times per set (rows numbered by 'run'; the peers "
                             "and the reference beside the first): whether a budget's outcome holds from run to run")
    parser.add_argument("--peer-for", type=Path, metavar="RESULTS_FILE",
                        help="run only the peers, for each row of this results file that lacks them, and add them there")
    args = parser.parse_args(argv)
    if args.peer_for:
        return add_peers(args.peer_for, not args.no_peer, args.intelex_minutes)
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"main-job-scale-{time.strftime('%Y%m%d-%H%M%S')}.json"
    rows = []
    for name, run in ((name, run) for name in args.datasets for run in range(1, args.repeats + 1)):
        queue = mp.get_context("spawn").Queue()
        child = mp.get_context("spawn").Process(target=_fit_child, args=(name, args.budget_seconds, queue))
        child.start()
        row = _result_of(child, queue)
        if args.repeats > 1:
            row["run"] = run
        if run == 1 and args.reference_seconds and row.get("exact_rows"):
            row["reference"] = exact_reference(name, row, args.reference_seconds)
        if run == 1 and not args.no_peer:
            row["nystroem"] = peer_of(row)
        if run == 1 and args.intelex_minutes > 0:
            row["intelex"] = intelex_peer(name, row, args.intelex_minutes)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "steps"}, default=str), flush=True)
        with atomic_write(out, "w", encoding="utf-8") as f:
            json.dump({"cpu_count": os.cpu_count(), "budget_seconds": args.budget_seconds, "rows": rows}, f,
                      indent=1, default=str)
    print(f"results written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
