"""grid.py's choice where grid.py itself takes hours: its 110 cells by leansvm's exact C paths (issue 19).

    python benchmarks/bench_grid_oracle.py --dataset magic [--gammas 0,2,4] [--check-cells 3]

grid.py's search (``bench_model_selection.grid_py``: C = 2^-5, 2^-3, ..., 2^15, gamma = 2^-15, 2^-13,
..., 2^3, 5-fold stratified CV with shuffling seed 0) scores each cell with LIBSVM's C-SVC trained
afresh. The same dual, min 1/2 a'Qa - e'a subject to 0 <= a_i <= C and y'a = 0 (LIBSVM's bias, by the
equality), is what :class:`leansvm.SVCCV` solves with ``fit_intercept='equality'``, warm-started along
each (gamma, fold) C path, to the same tolerance (1e-3) and without screening. Its cell scores are
therefore grid.py's up to where the two solvers stop inside the tolerance; on wdbc all 110 match
scikit-learn's ``SVC`` exactly, and on page-blocks0 and banana the choice and its CV accuracy do
(``--check-cells`` compares cells of any set again).

Each gamma's 11 cells are appended, as one JSON line, to ``results/grid-oracle-<set>.jsonl`` as soon
as its five fold paths are done, so a run can be split over processes (``--gammas``) or resumed: gammas
already in the file are skipped. ``bench_model_selection.py`` takes grid.py's choice from a complete
file (all 10 gammas) when grid.py's own run is cut short and extrapolated, and marks the row so.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.svm import SVC

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import RESULTS_DIR, libsvm_input  # noqa: E402

from leansvm import datasets  # noqa: E402
from leansvm.paths.model_selection import SVCCV  # noqa: E402

GRID_C = 2.0 ** np.arange(-5, 16, 2)
GRID_GAMMA = 2.0 ** np.arange(-15, 4, 2)


def grid_folds(random_state=0):
    """grid.py's folds as ``bench_model_selection`` reproduces them."""
    return StratifiedKFold(5, shuffle=True, random_state=random_state)


def cell_accuracy(X, y, C, gamma, folds) -> float:
    """grid.py's score of one cell: LIBSVM (scikit-learn ``SVC``) trained afresh on each fold."""
    return cross_val_score(SVC(C=C, gamma=gamma, cache_size=500), libsvm_input(X), y, cv=folds).mean()


def oracle_file(name: str) -> Path:
    return RESULTS_DIR / f"grid-oracle-{name}.jsonl"


def gamma_cells(X, y, gamma, random_state=0) -> dict:
    """One gamma's 11 cells: CV accuracy per C (and per fold), LIBSVM's dual on leansvm's paths."""
    start = time.perf_counter()
    search = SVCCV(Cs=GRID_C, gammas=[gamma], cv=grid_folds(random_state), fit_intercept="equality",
                   screening=None, tol=1e-3, n_jobs=1, refit=False).fit(X, y)
    res = search.cv_results_
    return {"gamma": float(gamma), "Cs": GRID_C.tolist(), "cv": res["mean_test_score"].tolist(),
            "splits": [res[f"split{f}_test_score"].tolist() for f in range(5)],
            "seconds": time.perf_counter() - start}


def read_oracle(name: str) -> dict:
    """{gamma: record} of the set's oracle file (empty when there is none)."""
    path = oracle_file(name)
    if not path.exists():
        return {}
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {r["gamma"]: r for r in records}


def oracle_choice(name: str):
    """grid.py's choice from a complete oracle file: (C, gamma, CV accuracy, seconds of all paths),
    the best mean accuracy, ties to the first cell in C-major order (``GridSearchCV``'s rule, as
    ``bench_model_selection.grid_py``); None while a gamma is missing."""
    records = read_oracle(name)
    if any(float(g) not in records for g in GRID_GAMMA):
        return None
    scores = np.array([[records[float(g)]["cv"][i] for g in GRID_GAMMA] for i in range(GRID_C.size)])
    best = max(range(scores.size), key=lambda k: (scores.flat[k], -k))
    i, j = divmod(best, GRID_GAMMA.size)
    return GRID_C[i], GRID_GAMMA[j], float(scores[i, j]), sum(r["seconds"] for r in records.values())


def check_cells(X, y, records, n_cells, seed=0):
    """scikit-learn ``SVC``'s CV accuracy on ``n_cells`` random cells of the file against the oracle's."""
    rng = np.random.default_rng(seed)
    cells = [(g, i) for g in records for i in range(GRID_C.size)]
    for k in rng.permutation(len(cells))[:n_cells]:
        g, i = cells[k]
        start = time.perf_counter()
        sk = cell_accuracy(X, y, GRID_C[i], g, grid_folds())
        print(f"check C={GRID_C[i]:g} gamma={g:g}: SVC {sk:.6f}, oracle {records[g]['cv'][i]:.6f} "
              f"({time.perf_counter() - start:.0f} s)", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--gammas", default=None, help="indices into grid.py's 10 gammas (default: all)")
    parser.add_argument("--check-cells", type=int, default=0, help="compare this many cells with SVC's CV")
    args = parser.parse_args()
    data = datasets.load(args.dataset)
    X, y = data.X_train, np.asarray(data.y_train)
    wanted = range(GRID_GAMMA.size) if args.gammas is None else [int(i) for i in args.gammas.split(",")]
    for j in wanted:
        if float(GRID_GAMMA[j]) in read_oracle(args.dataset):
            continue
        record = {"dataset": args.dataset, **gamma_cells(X, y, GRID_GAMMA[j])}
        with open(oracle_file(args.dataset), "a") as out:      # one whole line per gamma
            out.write(json.dumps(record) + "\n")
        print(f"gamma {GRID_GAMMA[j]:g}: best CV {max(record['cv']):.4f}, {record['seconds']:.0f} s", flush=True)
    if args.check_cells:
        check_cells(X, y, read_oracle(args.dataset), args.check_cells)
    choice = oracle_choice(args.dataset)
    print("grid.py's choice:", "incomplete" if choice is None else
          f"C={choice[0]:g} gamma={choice[1]:g} CV={choice[2]:.4f} (paths {choice[3]:.0f} s)")


if __name__ == "__main__":
    main()
