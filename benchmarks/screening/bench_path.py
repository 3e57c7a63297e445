"""Safe sample screening (Ogawa et al.), regularisation paths and SVCCV, side by side with LIBSVM.

Three parts (``--parts``):

* ``rates``  screening rate (screened / non-SVs at the solution) of BT1, BT2
  and IT for C_a / C_b = 0.5, 0.9, 0.99 along a grid of C_b, linear and RBF
  kernels, on wdbc (paper's D01), satimage (D04; largest class vs the rest)
  and mushroom (D06). References are solutions of the box-QP coordinate
  descent at tol=1e-3 (bias='augmented'), polished as the path does until the
  duality gap no longer voids the gap-safeguarded BT1 ball; ``it_raw`` is IT
  with the unpolished reference.
  Writes ``screening_rates.png`` (the paper's Figure 4 layout).
* ``path``   a 20-value log-spaced C grid (1e-2 .. 1e2), fixed gamma: leansvm
  ``svm_path`` variants (``--variants``: ``screened`` = IT + warm start +
  kernel reuse, ``unscreened`` = warm start + kernel reuse, ``dynamic`` = IT
  plus dynamic gap screening during each solve, ``eq_gap`` / ``eq_plain`` =
  LIBSVM's unregularised bias with / without the gap rule, static and dynamic;
  ``eq_gap_static`` the static gap rule alone)
  and LIBSVM (scikit-learn SVC, OMP_NUM_THREADS=1, cache 1000 MB) fitted cold
  at every C; wall and CPU time, test accuracy per C.
* ``cv``     ``SVCCV`` vs ``GridSearchCV(sklearn.svm.SVC)`` on the same grid and
  the same 5 folds: time, chosen (C, gamma), test accuracy of the refit.

    python benchmarks/screening/bench_path.py                                  # everything (long)
    python benchmarks/screening/bench_path.py --parts rates --rate-datasets wdbc
    python benchmarks/screening/bench_path.py --parts path --path-datasets satimage mushroom --max-train 3000

The machine is shared: timings of one run are comparable with each other only.
Writes ``benchmarks/results/path-<time>.json``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import RESULTS_DIR, format_table, libsvm_input, machine_info, write_json_atomic  # noqa: E402

from leansvm import SVCCV, datasets, svm_path  # noqa: E402
from leansvm.core.kernels import Kernel  # noqa: E402
from leansvm.core.problems import c_svc  # noqa: E402
from leansvm.exact.box_cd import solve_box_cd  # noqa: E402
from leansvm.paths.binary_path import _reference  # noqa: E402
from leansvm.paths.screening import RULES, ScreeningReference, screen  # noqa: E402

RATIOS = (0.5, 0.9, 0.99)


def _binary(name, max_train=None):
    ds = datasets.load(name)
    X, y = ds.X_train, np.asarray(ds.y_train)
    labels, counts = np.unique(y, return_counts=True)
    y_pm = np.where(y == labels[np.argmax(counts)], 1.0, -1.0)   # largest class vs the rest
    if max_train and X.shape[0] > max_train:
        idx = np.random.default_rng(0).choice(X.shape[0], max_train, replace=False)
        X, y_pm = X[idx], y_pm[idx]
    if hasattr(X, "toarray"):
        X = X.toarray()
    return ds, X, y_pm


def screening_rates(names, n_grid, max_train, tol, c_max):
    rows = []
    for name in names:
        ds, X, y = _binary(name, max_train)
        n = y.size
        for kernel in (Kernel("linear"), Kernel("rbf", gamma=ds.gamma)):
            for C_b in np.logspace(-2, np.log10(c_max), n_grid):
                target = solve_box_cd(X, c_svc(y, np.full(n, C_b)), kernel, tol=tol)
                non_sv = int(np.count_nonzero((target.alpha <= 0) | (target.alpha >= C_b)))
                for ratio in RATIOS:
                    C_a = ratio * C_b
                    raw = solve_box_cd(X, c_svc(y, np.full(n, C_a)), kernel, tol=tol)
                    raw_ref = ScreeningReference.from_solution(X, y, C_a, raw.alpha, kernel)
                    # the path's reference: polished until its gap no longer voids BT1 (path._reference)
                    _, ref, polish_s, _ = _reference(X, c_svc(y, 1.0), C_a, C_b, raw, kernel, True, solve_box_cd,
                                                  tol, None, None, "augmented", {}, polish=True)
                    row = {"dataset": name, "kernel": kernel.name, "C_b": float(C_b), "ratio": ratio,
                           "n": n, "non_sv": non_sv, "gap_raw": raw_ref.gap, "gap": ref.gap,
                           "reference_s": ref.seconds, "polish_s": polish_s,
                           "it_raw": screen(raw_ref, C_b, "it").n_screened / max(non_sv, 1)}
                    for rule in RULES:
                        res = screen(ref, C_b, rule)
                        row[rule] = res.n_screened / max(non_sv, 1)
                        row[f"{rule}_s"] = res.seconds
                    rows.append(row)
                print(f"  {name:9s} {kernel.name:6s} C_b={C_b:8.3g}  " + "  ".join(
                    f"r={r['ratio']}: bt1 {r['bt1']:.2f} bt2 {r['bt2']:.2f} it {r['it']:.2f}"
                    for r in rows[-3:]), flush=True)
    return rows


def plot_rates(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    keys = sorted({(r["dataset"], r["kernel"]) for r in rows}, key=lambda k: (k[1], k[0]))
    fig, axes = plt.subplots(len(RATIOS), len(keys), figsize=(3.2 * len(keys), 2.6 * len(RATIOS)),
                             squeeze=False, sharey=True)
    for j, (name, kern) in enumerate(keys):
        for i, ratio in enumerate(RATIOS):
            ax = axes[i, j]
            sel = [r for r in rows if r["dataset"] == name and r["kernel"] == kern and r["ratio"] == ratio]
            Cb = [r["C_b"] for r in sel]
            for rule, style in zip(RULES, ("--", ":", "-")):
                ax.plot(Cb, [100 * r[rule] for r in sel], style, marker="o", ms=3, label=rule.upper())
            ax.set_xscale("log")
            ax.set_ylim(-2, 102)
            if i == 0:
                ax.set_title(f"{name} ({kern})", fontsize=9)
            if j == 0:
                ax.set_ylabel(f"rate % (C_a/C_b={ratio})", fontsize=8)
            if i == len(RATIOS) - 1:
                ax.set_xlabel("C_b", fontsize=8)
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _accuracy(model, X, y):
    return float(np.mean(np.asarray(model.predict(X)) == np.asarray(y)))


def _warm_up():
    """Load the compiled solver and start the thread pools before anything is timed."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = np.where(X[:, 0] > 0, 1, -1)
    svm_path(X, y, [0.5, 1.0], gamma=0.5, screening="it")
    svm_path(X, y, [0.5, 1.0], gamma=0.5, screening="it", solver="irwls")   # IRWLS's compiled loops too
    svm_path(X, y, [0.5, 1.0], kernel="linear", screening="it")


def _load():
    return os.getloadavg()[0]


#: label -> svm_path options; "screened" and "unscreened" keep their earlier meaning
#: (IT + warm start + kernel reuse / warm start + kernel reuse, augmented bias)
VARIANTS = {
    "screened": {"screening": "it"},
    "unscreened": {"screening": None},
    "dynamic": {"screening": "it", "dynamic": True},          # IT before each C + gap rule during it
    "eq_gap": {"screening": "gap", "dynamic": True, "fit_intercept": "equality"},   # LIBSVM's formulation
    "eq_gap_static": {"screening": "gap", "fit_intercept": "equality"},
    "eq_plain": {"screening": None, "fit_intercept": "equality"},
}


def path_speed(names, n_c, max_train, tol, cache_size, repeat=1, variants=("screened", "unscreened", "dynamic")):
    from sklearn.svm import SVC as LibSVC
    from threadpoolctl import threadpool_limits
    Cs = np.logspace(-2, 2, n_c)
    out = []
    _warm_up()
    for name in names:
        ds = datasets.load(name)
        X, y, Xt, yt = ds.X_train, np.asarray(ds.y_train), ds.X_test, np.asarray(ds.y_test)
        if max_train and X.shape[0] > max_train:
            idx = np.random.default_rng(0).choice(X.shape[0], max_train, replace=False)
            X, y = X[idx], y[idx]
        record = {"dataset": name, "n_train": X.shape[0], "gamma": ds.gamma, "Cs": Cs.tolist(),
                  "load_before": _load()}
        # alternating runs, the fastest of each kept (the first run of a dataset pays first-touch costs)
        for label in list(variants) * repeat:
            t0, c0 = time.perf_counter(), time.process_time()
            path = svm_path(X, y, Cs, gamma=ds.gamma, tol=tol, cache_size=cache_size, **VARIANTS[label])
            seconds = time.perf_counter() - t0
            if seconds >= record.get(f"{label}_s", np.inf):
                continue
            record[f"{label}_s"] = seconds
            record[f"{label}_cpu"] = time.process_time() - c0
            record[f"{label}_dynamic"] = [int(sum(pt.extra.get("dynamic", 0) for pt in pts))
                                          for pts in zip(*path.binary_points)]
            record[f"{label}_solver"] = [sorted({pt.fit.stats.get("solver", "cd") for pt in pts})
                                         for pts in zip(*path.binary_points)]
            record[f"{label}_n_iter"] = [int(sum(pt.fit.n_iter for pt in pts)) for pts in zip(*path.binary_points)]
            record[f"{label}_rule_s"] = path.rule_seconds.tolist()
            record[f"{label}_solve_s"] = path.solve_seconds.tolist()
            record[f"{label}_rate"] = path.screening_rate.tolist()
            record[f"{label}_n_sv"] = path.n_support.tolist()
            record[f"{label}_acc"] = [_accuracy(m, Xt, yt) for m in path.models]
            print(f"  {name}: {label} path {record[f'{label}_s']:.1f} s", flush=True)
        Xl, Xtl = libsvm_input(X), libsvm_input(Xt)
        times, accs, nsv = [], [], []
        fit_cpu = 0.0                  # CPU of the fits only (predictions for the accuracy are not timed)
        with threadpool_limits(1, user_api="openmp"):
            for C in Cs:
                t0, c0 = time.perf_counter(), time.process_time()
                model = LibSVC(C=C, gamma=ds.gamma, cache_size=1000).fit(Xl, y)
                times.append(time.perf_counter() - t0)
                fit_cpu += time.process_time() - c0
                accs.append(_accuracy(model, Xtl, yt))
                nsv.append(int(model.n_support_.sum()))
        record.update(libsvm_s=float(sum(times)), libsvm_cpu=fit_cpu, libsvm_fit_s=times,
                      libsvm_acc=accs, libsvm_n_sv=nsv, load_after=_load())
        print(f"  {name}: LIBSVM grid {record['libsvm_s']:.1f} s", flush=True)
        out.append(record)
    return out


def cv_speed(names, n_c, gammas_factor, max_train, tol, n_jobs, cache_size, repeat=1):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC as LibSVC
    from threadpoolctl import threadpool_limits
    Cs = np.logspace(-2, 2, n_c)
    out = []
    _warm_up()
    for name in names:
        ds = datasets.load(name)
        X, y, Xt, yt = ds.X_train, np.asarray(ds.y_train), ds.X_test, np.asarray(ds.y_test)
        if max_train and X.shape[0] > max_train:
            idx = np.random.default_rng(0).choice(X.shape[0], max_train, replace=False)
            X, y = X[idx], y[idx]
        gammas = [float(ds.gamma * f) for f in gammas_factor]
        folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
        load_before = _load()
        Xl = libsvm_input(X)
        ours_s = ours_cpu = grid_s = grid_cpu = np.inf
        for _ in range(repeat):        # alternating, the fastest of each kept
            t0, c0 = time.perf_counter(), time.process_time()
            ours = SVCCV(Cs=Cs, gammas=gammas, cv=folds, tol=tol, n_jobs=n_jobs, cache_size=cache_size).fit(X, y)
            ours_s, ours_cpu = min(ours_s, time.perf_counter() - t0), min(ours_cpu, time.process_time() - c0)
            t0, c0 = time.perf_counter(), time.process_time()
            with threadpool_limits(1, user_api="openmp"):
                grid = GridSearchCV(LibSVC(cache_size=cache_size), {"C": Cs, "gamma": gammas}, cv=folds,
                                    n_jobs=n_jobs).fit(Xl, y)
            grid_s, grid_cpu = min(grid_s, time.perf_counter() - t0), min(grid_cpu, time.process_time() - c0)
        rec = {"dataset": name, "n_train": X.shape[0], "n_candidates": len(Cs) * len(gammas),
               "svccv_s": ours_s, "gridsearch_s": grid_s, "svccv_cpu": ours_cpu, "gridsearch_cpu": grid_cpu,
               "svccv_best": ours.best_params_, "gridsearch_best": {k: float(v) for k, v in grid.best_params_.items()},
               "svccv_cv_score": ours.best_score_, "gridsearch_cv_score": float(grid.best_score_),
               "svccv_test_acc": _accuracy(ours, Xt, yt), "gridsearch_test_acc": _accuracy(grid, libsvm_input(Xt), yt),
               "svccv_mean_screening_rate": float(ours.screening_rate_.mean()),
               "load_before": load_before, "load_after": _load()}
        print(f"  {name}: SVCCV {ours_s:.1f} s best {ours.best_params_}  GridSearchCV {grid_s:.1f} s "
              f"best {grid.best_params_}", flush=True)
        out.append(rec)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", default=["rates", "path", "cv"], choices=["rates", "path", "cv"])
    parser.add_argument("--rate-datasets", nargs="+", default=["wdbc", "satimage", "mushroom"])
    parser.add_argument("--rate-grid", type=int, default=7, help="number of C_b values (1e-2 .. --rate-c-max)")
    parser.add_argument("--rate-c-max", type=float, default=10.0,
                        help="largest C_b (10: coordinate descent on linear kernels at larger C is slow)")
    parser.add_argument("--path-datasets", nargs="+", default=["magic", "satimage", "a9a", "mushroom"])
    parser.add_argument("--cv-datasets", nargs="+", default=["wdbc", "banana"])
    parser.add_argument("--n-c", type=int, default=20)
    parser.add_argument("--cv-n-c", type=int, default=10)
    parser.add_argument("--cv-gamma-factors", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    parser.add_argument("--max-train", type=int, default=None, help="subsample training sets (path, rates)")
    parser.add_argument("--cv-max-train", type=int, default=2000)
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1,
                        help="alternating runs per dataset (path: screened/unscreened; cv: SVCCV/GridSearchCV); the fastest of each is kept")
    parser.add_argument("--variants", nargs="+", default=["screened", "unscreened", "dynamic"],
                        choices=list(VARIANTS), help="path variants timed against the LIBSVM grid")
    parser.add_argument("--cache-size", type=float, default=1000.0,
                        help="MB of kernel cache, for leansvm's path and LIBSVM alike")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", category=UserWarning)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    payload = {"machine": machine_info(), "args": vars(args)}
    if "rates" in args.parts:
        print("screening rates")
        rows = screening_rates(args.rate_datasets, args.rate_grid, args.max_train, args.tol, args.rate_c_max)
        payload["rates"] = rows
        plot_rates(rows, RESULTS_DIR / "screening_rates.png")
        summary = []
        for (name, kern) in sorted({(r["dataset"], r["kernel"]) for r in rows}):
            for ratio in RATIOS:
                sel = [r for r in rows if r["dataset"] == name and r["kernel"] == kern and r["ratio"] == ratio]
                summary.append({"dataset": name, "kernel": kern, "ratio": ratio,
                                **{rule: float(np.mean([r[rule] for r in sel])) for rule in RULES + ("it_raw",)},
                                "it_below_bt1": int(sum(r["it"] < r["bt1"] for r in sel))})
        payload["rates_summary"] = summary
        print(format_table(summary, [("dataset", "dataset", "s"), ("kernel", "kernel", "s"),
                                     ("ratio", "C_a/C_b", ".2f"), ("bt1", "BT1", ".3f"), ("bt2", "BT2", ".3f"),
                                     ("it", "IT", ".3f"), ("it_raw", "IT unpolished", ".3f"),
                                     ("it_below_bt1", "IT<BT1", "d")]))
    if "path" in args.parts:
        print("path speed")
        recs = path_speed(args.path_datasets, args.n_c, args.max_train, args.tol, args.cache_size, args.repeat,
                          args.variants)
        payload["path"] = recs
        rows = []
        for r in recs:
            row = {"dataset": r["dataset"], "n": r["n_train"], "libsvm": r["libsvm_s"],
                   "libsvm_cpu": r["libsvm_cpu"], "load": f"{r['load_before']:.1f}/{r['load_after']:.1f}"}
            for v in args.variants:
                row[v] = r[f"{v}_s"]
                row[f"{v}_cpu"] = r[f"{v}_cpu"]
                row[f"{v}_vs_libsvm"] = r["libsvm_s"] / r[f"{v}_s"]
                row[f"{v}_dyn"] = int(sum(r[f"{v}_dynamic"]))
                row[f"{v}_rate"] = float(np.mean(r[f"{v}_rate"][1:])) if len(r["Cs"]) > 1 else 0.0
            if "screened" in args.variants:
                row["rate"] = float(np.mean(r["screened_rate"][1:])) if len(r["Cs"]) > 1 else 0.0
                row["max_acc_diff"] = float(np.max(np.abs(np.subtract(r["screened_acc"], r["libsvm_acc"]))))
                if "unscreened" in args.variants:
                    row["vs_unscr"] = r["unscreened_s"] / r["screened_s"]
            rows.append(row)
        columns = [("dataset", "dataset", "s"), ("n", "n", "d")]
        for v in args.variants:
            columns += [(v, f"{v} s", ".1f"), (f"{v}_cpu", "cpu", ".1f"), (f"{v}_vs_libsvm", "LIBSVM/v", ".2f")]
            if "dynamic" in VARIANTS[v]:
                columns.append((f"{v}_dyn", "dyn. screened", "d"))
            if VARIANTS[v].get("screening"):
                columns.append((f"{v}_rate", "static rate", ".3f"))
        columns += [("libsvm", "LIBSVM grid s", ".1f"), ("libsvm_cpu", "cpu", ".1f")]
        if "screened" in args.variants:
            columns += [("rate", "mean IT rate", ".3f"), ("max_acc_diff", "max |acc diff|", ".4f")]
            if "unscreened" in args.variants:
                columns.append(("vs_unscr", "unscr/scr", ".2f"))
        print(format_table(rows, columns + [("load", "load avg", "s")]))
    if "cv" in args.parts:
        print("cross-validation")
        recs = cv_speed(args.cv_datasets, args.cv_n_c, args.cv_gamma_factors, args.cv_max_train, args.tol,
                        args.n_jobs, args.cache_size, args.repeat)
        payload["cv"] = recs
        print(format_table([{**r, "ratio": r["gridsearch_s"] / r["svccv_s"], "cpu_ratio": r["gridsearch_cpu"] / r["svccv_cpu"],
                             "load": f"{r['load_before']:.1f}/{r['load_after']:.1f}",
                             "same": r["svccv_best"] == r["gridsearch_best"]} for r in recs],
                           [("dataset", "dataset", "s"), ("n_train", "n", "d"), ("svccv_s", "SVCCV s", ".2f"),
                            ("gridsearch_s", "GridSearchCV s", ".2f"), ("ratio", "GS/SVCCV", ".2f"),
                            ("svccv_cpu", "SVCCV cpu", ".2f"), ("gridsearch_cpu", "GS cpu", ".2f"),
                            ("cpu_ratio", "GS/SVCCV cpu", ".2f"),
                            ("same", "same params", "s"), ("svccv_test_acc", "SVCCV acc", ".4f"),
                            ("gridsearch_test_acc", "GS acc", ".4f"), ("load", "load avg", "s")]))
    out = RESULTS_DIR / f"path-{'-'.join(args.parts)}-{stamp}.json"
    write_json_atomic(out, payload)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
