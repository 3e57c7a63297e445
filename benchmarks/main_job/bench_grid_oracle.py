"""grid.py's choice where grid.py itself takes hours: its 110 cells by leansvm's exact C paths.

    python benchmarks/main_job/bench_grid_oracle.py --dataset magic [--gammas 0,2,4] [--folds 0,1] [--jobs 2]
                                           [--cache-mb 2000] [--max-C 512] [--cells-file F] [--check-cells 3]
                                           [--top-cells 5]

grid.py's search (``bench_model_selection.grid_py``: C = 2^-5, 2^-3, ..., 2^15, gamma = 2^-15, 2^-13,
..., 2^3, 5-fold stratified CV with shuffling seed 0) scores each cell with LIBSVM's C-SVC trained
afresh. The same dual, min 1/2 a'Qa - e'a subject to 0 <= a_i <= C and y'a = 0 (LIBSVM's bias, by the
equality), is what :class:`leansvm.SVCCV` solves with ``fit_intercept='equality'``, warm-started along
each (gamma, fold) C path, to the same tolerance (1e-3) and without screening. Its cell scores are
therefore grid.py's up to where the two solvers stop inside the tolerance; on wdbc all 110 match
scikit-learn's ``SVC`` exactly, and on page-blocks0 and banana the choice and its CV accuracy do
(``--check-cells`` compares cells of any set again).

Each (gamma, fold) path is one task (``--jobs`` at once, each in its own process, with its own kernel
row cache of ``--cache-mb`` MB, and IRWLS's solves another of up to as much: synth-50k's paths at 4000
MB held 7.8 GB each). Each cell's test accuracy is appended, as one JSON line, to
``results/grid-oracle-<set>-cells.jsonl`` as soon as its C is solved, and the solution is saved in
``results/grid-oracle-checkpoints/`` (ignored by git), so a stopped path goes on from its last C
(a9a's paths at gamma 2^-7 and 2^-5 take hours); paths already whole are skipped. A gamma's cells are
complete when its five folds are there (whole paths of earlier runs are also read from
``grid-oracle-<set>-folds.jsonl`` and, whole gammas, from ``grid-oracle-<set>.jsonl``). ``bench_model_selection.py`` takes grid.py's choice from a complete
file (all 10 gammas) when grid.py's own run is cut short and extrapolated, and marks the row so.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.svm import SVC

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import RESULTS_DIR, libsvm_exact as exact, libsvm_input  # noqa: E402

from leansvm import datasets  # noqa: E402
from leansvm.core.kernels import Kernel  # noqa: E402
from leansvm.core.multiclass import BinaryFit  # noqa: E402
from leansvm.paths.binary_path import PathPoint, row_cache  # noqa: E402
from leansvm.paths.model_selection import cached_accuracy, fold_labels, fold_paths  # noqa: E402

GRID_C = 2.0 ** np.arange(-5, 16, 2)
GRID_GAMMA = 2.0 ** np.arange(-15, 4, 2)
TOL = 1e-3                                   # grid.py's (LIBSVM's default)
CHECKPOINTS = RESULTS_DIR / "grid-oracle-checkpoints"      # ignored by git: the solutions paths resume from


def grid_folds(random_state=0):
    """grid.py's folds as ``bench_model_selection`` reproduces them."""
    return StratifiedKFold(5, shuffle=True, random_state=random_state)


def cell_accuracy(X, y, C, gamma, folds) -> float:
    """grid.py's score of one cell: LIBSVM (scikit-learn ``SVC``) trained afresh on each fold."""
    return cross_val_score(SVC(C=C, gamma=gamma, cache_size=500), libsvm_input(X), y, cv=folds).mean()


def oracle_file(name: str) -> Path:
    return RESULTS_DIR / f"grid-oracle-{name}.jsonl"


def folds_file(name: str) -> Path:
    return RESULTS_DIR / f"grid-oracle-{name}-folds.jsonl"


def cells_file(name: str) -> Path:
    return RESULTS_DIR / f"grid-oracle-{name}-cells.jsonl"


def checkpoint_file(name: str, gamma: float, fold: int) -> Path:
    return CHECKPOINTS / f"{name}-gamma{np.log2(gamma):+.0f}-fold{fold}.npz"


def fold_cells(X, y, gamma, fold, cache_mb=200.0, on_cell=None, checkpoint=None, random_state=0, max_C=None):
    """One (gamma, fold) path, C by C: LIBSVM's dual (``fit_intercept='equality'``, no screening, tol 1e-3)
    on leansvm's warm-started C path, as :class:`SVCCV` runs it, scored on the fold's test part.

    ``on_cell(C, accuracy, seconds)`` is called as each C is solved. ``checkpoint`` (a path): each
    C's solution (alpha, bias, margins per one-vs-one problem) is saved there, and a later call goes
    on from the last C saved, warm, as the uninterrupted path would (``iter_binary_path(start=...)``):
    a path of hours survives an interrupted run. ``max_C``: stop after this C (a later call goes on)."""
    train, test = list(grid_folds(random_state).split(X, y))[fold]
    classes, problems, y_test = fold_labels(y, train, test)
    kernel = Kernel.from_params("rbf", float(gamma), 3, 0.0, X)
    cache = row_cache(kernel, X, cache_mb, TOL)
    starts, done = [None] * len(problems), 0
    if checkpoint is not None and Path(checkpoint).exists():
        saved = np.load(checkpoint)
        done = int(saved["n_done"])
        starts = [PathPoint(float(GRID_C[done - 1]), BinaryFit(
            saved[f"alpha{p}"], float(saved[f"intercept{p}"]),
            stats={"margins": saved[f"margins{p}"], "solver": "irwls"}))    # LIBSVM's bias: IRWLS at every C
            for p in range(len(problems))]
    Cs = GRID_C[done:]
    Cs = Cs if max_C is None else Cs[Cs <= max_C]
    if Cs.size == 0:
        return
    paths = fold_paths(X, train, problems, np.ones(y.size), Cs, cache, screening=None, bias="equality", tol=TOL,
                       cache_size=cache_mb, random_state=random_state, starts=starts)
    for k, C in enumerate(Cs):
        start = time.perf_counter()
        fits = [next(path).fit for path in paths]
        accuracy = cached_accuracy(cache, train, test, problems, fits, y_test, classes.size)
        if checkpoint is not None:
            arrays = {"n_done": done + k + 1}
            for p, fit in enumerate(fits):
                arrays.update({f"alpha{p}": fit.alpha, f"intercept{p}": fit.intercept,
                               f"margins{p}": fit.stats["margins"]})
            tmp = Path(str(checkpoint) + ".tmp.npz")
            np.savez(tmp, **arrays)
            tmp.replace(checkpoint)           # atomic: a killed run leaves the last whole C
        if on_cell is not None:
            on_cell(float(C), accuracy, time.perf_counter() - start)


def _read_lines(path: Path) -> list:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def read_cells(name: str, path: Path | None = None) -> dict:
    """{(gamma, fold): {C: (accuracy, seconds)}} of the set's per-cell file."""
    out = {}
    for r in _read_lines(path or cells_file(name)):
        out.setdefault((r["gamma"], r["fold"]), {})[r["C"]] = (r["accuracy"], r["seconds"])
    return out


def read_folds(name: str) -> dict:
    """{(gamma, fold): record} of every whole path: the per-path file's, then the paths whose 11 cells
    the per-cell file holds (record: accuracy per C, seconds)."""
    folds = {(r["gamma"], r["fold"]): r for r in _read_lines(folds_file(name))}
    for key, cells in read_cells(name).items():
        if key not in folds and all(float(C) in cells for C in GRID_C):
            folds[key] = {"gamma": key[0], "fold": key[1], "Cs": GRID_C.tolist(),
                          "accuracy": [cells[float(C)][0] for C in GRID_C],
                          "seconds": sum(cells[float(C)][1] for C in GRID_C)}
    return folds


def read_oracle(name: str) -> dict:
    """{gamma: record} of every gamma whose five folds are done: the whole-gamma lines of earlier runs,
    then the gammas the per-path file completes (record: CV accuracy per C, per-fold splits, seconds)."""
    records = {r["gamma"]: r for r in _read_lines(oracle_file(name))}
    folds = read_folds(name)
    for g in {g for g, _ in folds}:
        if g not in records and all((g, f) in folds for f in range(5)):
            splits = [folds[g, f]["accuracy"] for f in range(5)]
            records[g] = {"gamma": g, "Cs": GRID_C.tolist(), "cv": np.mean(splits, axis=0).tolist(),
                          "splits": splits, "seconds": sum(folds[g, f]["seconds"] for f in range(5))}
    return records


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


def fold_table(name: str) -> dict:
    """{(C, gamma): {fold: accuracy}} of every cell computed so far, whole gammas, whole paths and
    single cells of every file format."""
    table = {}
    for r in _read_lines(oracle_file(name)):          # each file once (read_oracle and read_folds
        for f, split in enumerate(r["splits"]):        # assemble the later ones again)
            for C, a in zip(GRID_C, split):
                table.setdefault((float(C), float(r["gamma"])), {})[f] = a
    for r in _read_lines(folds_file(name)):
        for C, a in zip(r["Cs"], r["accuracy"]):
            table.setdefault((float(C), float(r["gamma"])), {})[r["fold"]] = a
    for (g, f), cells in read_cells(name).items():
        for C, (a, _) in cells.items():
            table.setdefault((float(C), float(g)), {})[f] = a
    return table


def open_cells(name: str, near=0.10):
    """Where an incomplete oracle stands: the leader (the best mean among cells with all five folds)
    and every other cell as 'done', 'bounded' (even 100 % on its missing folds leaves its mean below
    the leader's: it cannot be grid.py's choice), 'paired' (on the folds it has, it is below the leader
    by more than the paired spread s: the largest |(mean_A - mean_B) - (mean_S A - mean_S B)| over
    pairs of whole cells within ``near`` of the leader, S its folds; evidence, not a bound) or 'open'.
    Returns (leader (C, gamma), its mean, {cell: (status, estimate)})."""
    table = fold_table(name)
    whole = {k: np.array([v[f] for f in range(5)]) for k, v in table.items() if len(v) == 5}
    if not whole:
        return None, None, {}
    leader = max(whole, key=lambda k: (whole[k].mean(), -list(GRID_C).index(k[0]), -list(GRID_GAMMA).index(k[1])))
    top = whole[leader].mean()
    close = [v for v in whole.values() if v.mean() >= top - near]
    spreads = {}                                       # per fold set S: the paired spread

    def spread(S):
        if S not in spreads:
            spreads[S] = max((abs((a.mean() - b.mean()) - (a[list(S)].mean() - b[list(S)].mean()))
                              for a in close for b in close), default=np.inf)
        return spreads[S]

    status = {}
    for C in GRID_C:
        for g in GRID_GAMMA:
            key = (float(C), float(g))
            folds = table.get(key, {})
            if len(folds) == 5:
                status[key] = ("done", whole[key].mean())
                continue
            S = tuple(sorted(folds))
            if (sum(folds.values()) + 5 - len(S)) / 5 < top:
                status[key] = ("bounded", None)
                continue
            if not S:
                status[key] = ("open", None)
                continue
            d = float(np.mean([folds[f] - whole[leader][f] for f in S]))
            status[key] = ("paired" if d < -spread(S) else "open", top + d)
    return leader, top, status


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


def top_cells(name, n, libsvm_max_C=512.0) -> list:
    """Test accuracy of the oracle's ``n`` best cells, models on all training rows: LIBSVM's dual on
    leansvm's warm-started path (``svm_path``, as the cells), and scikit-learn ``SVC`` for C up to
    ``libsvm_max_C`` (above it LIBSVM takes hours). The best cells can lie within a few rows of CV
    accuracy of each other (a9a: 0.8484, 0.8483, 0.8482), where solvers stopping at different points
    inside the tolerance could change grid.py's pick: a criterion met against all of them holds
    whichever it is."""
    from leansvm import svm_path
    data = datasets.load(name)
    X, y, Xt, yt = data.X_train, np.asarray(data.y_train), data.X_test, np.asarray(data.y_test)
    records = read_oracle(name)
    best = sorted(((records[g]["cv"][i], float(C), g) for g in records for i, C in enumerate(GRID_C)),
                  reverse=True)[:n]
    out = []
    for g in sorted({g for _, _, g in best}):
        Cs = GRID_C[GRID_C <= max(C for _, C, h in best if h == g)]
        path = svm_path(X, y, Cs, gamma=g, fit_intercept="equality", screening=None, tol=TOL, cache_size=3000)
        for C, model in zip(Cs, path.models):
            cv = next((v for v, c, h in best if c == C and h == g), None)
            if cv is not None:
                row = {"C": float(C), "gamma": g, "cv": cv, "n_sv": int(model.n_support_.sum()),
                       "test_equality_path": float(np.mean(model.predict(Xt) == yt))}
                if C <= libsvm_max_C:
                    row["test_libsvm"], row["n_sv_libsvm"] = exact(X, y, Xt, yt, C, g)
                out.append(row)
                print(row, flush=True)
    return out


def _task(dataset, gamma, fold, cache_mb, path, max_C=None):
    """One path in a worker process: each C's cell appended to ``path`` as soon as it is solved."""
    data = datasets.load(dataset)
    CHECKPOINTS.mkdir(parents=True, exist_ok=True)

    def write(C, accuracy, seconds):
        with open(path, "a") as out:          # one whole line per cell
            out.write(json.dumps({"dataset": dataset, "gamma": float(gamma), "fold": int(fold), "C": C,
                                  "accuracy": accuracy, "seconds": seconds}) + "\n")
        print(f"gamma {gamma:g} fold {fold} C {C:g}: accuracy {accuracy:.4f}, {seconds:.0f} s", flush=True)

    fold_cells(data.X_train, np.asarray(data.y_train), gamma, fold, cache_mb, on_cell=write,
               checkpoint=checkpoint_file(dataset, gamma, fold), max_C=max_C)
    return gamma, fold


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--gammas", default=None, help="indices into grid.py's 10 gammas, in the order "
                                                       "to run (default: all)")
    parser.add_argument("--folds", default="0,1,2,3,4", help="fold indices (default: all five)")
    parser.add_argument("--jobs", type=int, default=1, help="paths run at once, each in its own process")
    parser.add_argument("--cache-mb", type=float, default=200.0, help="each path's kernel row cache")
    parser.add_argument("--max-C", type=float, default=None,
                        help="run each path only up to this C (a later run without it goes on from there)")
    parser.add_argument("--cells-file", type=Path, default=None, help="the per-cell file (default: results/)")
    parser.add_argument("--check-cells", type=int, default=0, help="compare this many cells with SVC's CV")
    parser.add_argument("--top-cells", type=int, default=0,
                        help="test accuracy of this many best cells (file results/grid-oracle-<set>-top-cells.json)")
    args = parser.parse_args()
    if args.max_C is not None and not args.max_C >= GRID_C[0]:
        parser.error(f"--max-C {args.max_C:g} is below grid.py's smallest C ({GRID_C[0]:g}): no cell would run")
    path = args.cells_file or cells_file(args.dataset)
    n_wanted = int(np.sum(GRID_C <= (np.inf if args.max_C is None else args.max_C)))
    done = set(read_folds(args.dataset)) | {key for key, cells in read_cells(args.dataset, path).items()
                                            if len(cells) >= n_wanted}
    done |= {(g, f) for g in read_oracle(args.dataset) for f in range(5)}
    wanted = range(GRID_GAMMA.size) if args.gammas is None else [int(i) for i in args.gammas.split(",")]
    tasks = [(float(GRID_GAMMA[j]), int(f)) for j in wanted for f in args.folds.split(",")
             if (float(GRID_GAMMA[j]), int(f)) not in done]
    with ProcessPoolExecutor(max(args.jobs, 1)) as pool:
        for future in as_completed([pool.submit(_task, args.dataset, g, f, args.cache_mb, path, args.max_C) for g, f in tasks]):
            g, f = future.result()
            print(f"gamma {g:g} fold {f}: path done" + (f" up to C = {args.max_C:g}" if args.max_C else ""),
                  flush=True)
    if args.check_cells:
        data = datasets.load(args.dataset)
        check_cells(data.X_train, np.asarray(data.y_train), read_oracle(args.dataset), args.check_cells)
    if args.top_cells:
        (RESULTS_DIR / f"grid-oracle-{args.dataset}-top-cells.json").write_text(
            json.dumps(top_cells(args.dataset, args.top_cells), indent=1))
    choice = oracle_choice(args.dataset)
    if choice is not None:
        print(f"grid.py's choice: C={choice[0]:g} gamma={choice[1]:g} CV={choice[2]:.4f} (paths {choice[3]:.0f} s)")
        return
    leader, top, status = open_cells(args.dataset)
    counts = {k: sum(1 for v, _ in status.values() if v == k) for k in ("done", "bounded", "paired", "open")}
    print("grid.py's choice: incomplete;", ", ".join(f"{n} {k}" for k, n in counts.items()),
          "" if leader is None else f"; leader C={leader[0]:g} gamma={leader[1]:g} CV={top:.4f}")
    for (C, g), (kind, estimate) in status.items():
        if kind == "open":
            print(f"  open: C=2^{np.log2(C):.0f} gamma=2^{np.log2(g):.0f}"
                  + ("" if estimate is None else f", paired estimate {estimate:.4f}"))


if __name__ == "__main__":
    main()
