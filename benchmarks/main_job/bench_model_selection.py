"""The main job's (C, gamma) choice against LIBSVM's grid.py.

    python benchmarks/main_job/bench_model_selection.py [--datasets wdbc banana ...] [--grid-minutes 15]

For each classification set of docs/datasets.md (standardised as ``datasets.load`` gives it):

* **grid.py**, reproduced: scikit-learn ``SVC`` (LIBSVM, one thread) over grid.py's default grid,
  C = 2^-5, 2^-3, ..., 2^15 and gamma = 2^-15, 2^-13, ..., 2^3 (110 cells), 5-fold stratified CV on
  every training row, the best mean accuracy chosen as ``GridSearchCV`` does (ties: the first cell
  in C-major order). Cells run in a random order; when they exceed ``--grid-minutes``, the rest are
  not run: the grid's time is extrapolated (mean seconds per cell x 110) and marked ``extrapolated``;
  a cell still running then is stopped (each cell runs in a child process) and counts with the
  seconds it ran, so that the extrapolation is a lower bound (``grid_cells_cut``),
  and the best of the cells run is recorded apart (``partial_grid_*``). grid.py's choice then comes
  from ``bench_grid_oracle.py``'s file for the set when it holds all 110 cells (the same dual, folds
  and tolerance on leansvm's exact C paths; ``grid_choice_from`` = 'oracle'), else it is left empty.
* **leansvm fit** (``fit_lean`` with its defaults, one process): the searched (C, gamma), its CV
  accuracy and SE, the search's seconds, the whole command's seconds, the returned model's #SV and
  test accuracy.
* **tuned exact models**: scikit-learn ``SVC`` trained on every training row at grid.py's choice,
  at leansvm's choice (the default rule), and at each rule of the same search: the best cell and
  the one-SE choice (the fewest SV within one SE of the best cell; the default), each with its
  test accuracy and #SV.

leansvm is timed in a warm process, as grid.py's side is: before the first set, ``fit_lean`` on 150
synthetic rows loads numba's compiled code (scikit-learn's libsvm is loaded when it is imported, before
any timing). That warm-up's seconds, the one-off start a fresh ``leansvm fit`` process pays on top of
the times below (about 0.2 s: numba's own start, 0.17 s, and the solvers' cached machine code), are
recorded in every row as ``warm_up_seconds``.

The criteria: leansvm's tuned exact model >= grid.py's - 0.3 points; the returned model >=
grid.py's - (0.5 + 0.3) points; the search <= 1/10 of grid.py's time, the command <= 1/3.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from pathlib import Path

import numpy as np


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import finish_run, libsvm_exact as exact  # noqa: E402

from bench_grid_oracle import GRID_C, GRID_GAMMA, cell_accuracy, grid_folds, oracle_choice  # noqa: E402

from leansvm import datasets, fit_lean  # noqa: E402
from leansvm.paths.search import choose_cell  # noqa: E402

SETS = ["wdbc", "splice", "page-blocks0", "banana", "mushroom", "optdigits", "satimage", "twonorm",
        "penbased", "magic", "letter", "a9a", "synth-50k"]


def _cell(X, y, C, gamma, folds, limit):
    """grid.py's CV accuracy of one cell, in a child process stopped after ``limit`` seconds:
    (accuracy, or None when it was stopped; seconds: the cell's own, timed in the child, without
    the fork; or the seconds until it was stopped). On large sets one cell at large C can take
    hours (a9a at C = 2^15)."""
    context = multiprocessing.get_context("fork")        # the child shares X, copy-on-write
    queue = context.Queue()

    def run():
        start = time.perf_counter()
        score = cell_accuracy(X, y, C, gamma, folds)
        queue.put((score, time.perf_counter() - start))

    start = time.perf_counter()
    child = context.Process(target=run)
    child.start()
    child.join(limit)
    if child.is_alive():
        child.terminate()
        child.join()
        return None, time.perf_counter() - start
    return queue.get()


def grid_py(X, y, minutes, random_state=0):
    """grid.py's search (module docstring): (C, gamma, CV accuracy, seconds, extrapolated?, cells run,
    cells cut). The seconds are the cells' own; a cell still running when the minutes are up is
    stopped and counts with the seconds it ran: the extrapolated time is then a lower bound."""
    folds = grid_folds(random_state)
    cells = [(C, g) for C in GRID_C for g in GRID_GAMMA]           # C-major, as ParameterGrid
    order = np.random.default_rng(random_state).permutation(len(cells))
    scores, spent, cut = {}, 0.0, 0
    for n_run, k in enumerate(order, 1):
        C, g = cells[k]
        score, seconds = _cell(X, y, C, g, folds, max(60 * minutes - spent, 1.0))
        spent += seconds
        if score is None:
            cut += 1
        else:
            scores[k] = score
        if spent > 60 * minutes and n_run < len(cells):
            partial = max(scores, key=lambda k: (scores[k], -k)) if scores else None   # reported apart
            best_run = None if partial is None else (cells[partial], scores[partial])
            return None, None, best_run, spent / n_run * len(cells), True, n_run, cut
    best = max(range(len(cells)), key=lambda k: (scores[k], -k))
    return cells[best][0], cells[best][1], scores[best], spent, False, len(cells), 0


def warm_up_seconds() -> float:
    """``fit_lean`` on 150 synthetic rows of three classes (module docstring): its seconds."""
    from sklearn.datasets import make_classification
    X, y = make_classification(n_samples=150, n_features=6, n_informative=4, n_classes=3, random_state=0)
    start = time.perf_counter()
    fit_lean(X, y, libsvm_reference_model=False, progress=False)
    return time.perf_counter() - start


def one(name, minutes, verbose=False, budget_seconds=None):
    data = datasets.load(name)
    X, y, Xt, yt = data.X_train, np.asarray(data.y_train), data.X_test, np.asarray(data.y_test)
    row = {"dataset": name, "n_train": X.shape[0], "budget_seconds": budget_seconds}
    start = time.perf_counter()
    result = fit_lean(X, y, X_test=Xt, y_test=yt, libsvm_reference_model=False, progress=False, verbose=verbose,
                      budget_seconds=budget_seconds)
    row["fit_seconds"] = time.perf_counter() - start
    sel = result.selection
    row.update(lean_C=sel.fit_C, lean_search_C=sel.C, lean_gamma=sel.gamma, lean_cv=sel.search.accuracy, lean_se=sel.se,
               search_seconds=sel.search.seconds, search_rows=sel.n_samples, extended=len(sel.search.extended),
               returned_acc=float(np.mean(result.model.predict(Xt) == yt)), returned_sv=result.final.n_support,
               returned=result.final.name)
    row["lean_exact_acc"], row["lean_exact_sv"] = exact(X, y, Xt, yt, sel.fit_C, sel.gamma)
    for key, one_se in (("best", 0.0), ("one_se", 1.0)):     # the search's two rules, whichever is the default
        cell = choose_cell(sel.search.final_cells(), one_se=one_se)
        C1, g1 = 2.0 ** cell.log2_C, sel.search.scale * 2.0 ** cell.log2_gamma
        row[f"{key}_C"], row[f"{key}_gamma"] = C1, g1
        row[f"{key}_acc"], row[f"{key}_sv"] = exact(X, y, Xt, yt, C1, g1)
    print({k: v for k, v in row.items()}, flush=True)
    C, g, cv, seconds, extrapolated, n_cells, n_cut = grid_py(X, y, minutes)
    row.update(grid_seconds=seconds, grid_extrapolated=extrapolated, grid_cells_run=n_cells, grid_cells_cut=n_cut)
    if C is None:                    # the best of the cells run: not grid.py's choice, a lower bound on its CV
        if cv is not None:
            (pC, pg), pcv = cv
            row.update(partial_grid_C=pC, partial_grid_gamma=pg, partial_grid_cv=pcv)
        oracle = oracle_choice(name)
        if oracle is not None:
            C, g, cv, row["grid_oracle_seconds"] = oracle
            row["grid_choice_from"] = "oracle"
    else:
        row["grid_choice_from"] = "grid.py"
    if C is not None:
        row.update(grid_C=C, grid_gamma=g, grid_cv=cv)
        row["grid_exact_acc"], row["grid_exact_sv"] = exact(X, y, Xt, yt, C, g)
        row["exact_diff_points"] = 100 * (row["lean_exact_acc"] - row["grid_exact_acc"])
        row["returned_diff_points"] = 100 * (row["returned_acc"] - row["grid_exact_acc"])
    row["search_ratio"] = row["search_seconds"] / seconds
    row["fit_ratio"] = row["fit_seconds"] / seconds
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=SETS)
    parser.add_argument("--grid-minutes", type=float, default=15.0,
                        help="stop grid.py's cells after this long and extrapolate its time (15)")
    parser.add_argument("--verbose", action="store_true", help="print leansvm fit's step log (where its time goes)")
    parser.add_argument("--budget-seconds", type=float, default=None,
                        help="leansvm fit's --budget-seconds (default: none, as the main job's default)")
    args = parser.parse_args()
    warm_up = warm_up_seconds()
    print(f"warm-up (numba's compiled code loaded): {warm_up:.2f} s", flush=True)
    rows = []
    for name in args.datasets:
        rows.append({**one(name, args.grid_minutes, args.verbose, args.budget_seconds), "warm_up_seconds": warm_up})
        print(rows[-1], flush=True)
    columns = [("dataset", "set", "s"), ("n_train", "train", "d"),
               ("grid_C", "grid.py C", ".4g"), ("grid_gamma", "gamma", ".4g"),
               ("grid_choice_from", "choice from", "s"), ("grid_cv", "CV", ".4f"),
               ("grid_exact_acc", "test", ".4f"), ("grid_exact_sv", "#SV", "d"),
               ("grid_seconds", "grid.py s", ".0f"), ("grid_extrapolated", "extrapolated", "s"),
               ("lean_C", "leansvm C", ".4g"), ("lean_gamma", "gamma ", ".4g"), ("lean_cv", "CV ", ".4f"),
               ("lean_se", "SE", ".4f"), ("lean_exact_acc", "tuned exact test", ".4f"), ("lean_exact_sv", "#SV ", "d"),
               ("returned_acc", "returned test", ".4f"), ("returned_sv", "returned #SV", "d"),
               ("best_acc", "best-cell test", ".4f"), ("best_sv", "best-cell #SV", "d"),
               ("one_se_acc", "one-SE test", ".4f"), ("one_se_sv", "one-SE #SV", "d"),
               ("exact_diff_points", "exact diff", "+.2f"), ("returned_diff_points", "returned diff", "+.2f"),
               ("search_seconds", "search s", ".1f"), ("fit_seconds", "fit s", ".1f"),
               ("search_ratio", "search/grid", ".3f"), ("fit_ratio", "fit/grid", ".3f")]
    finish_run(rows, columns, "model-selection")


if __name__ == "__main__":
    main()
