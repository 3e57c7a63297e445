"""Compressed SVMs (Xu et al. 2015): test accuracy against the number of support vectors, and test-time cost.

For each dataset the full model is LIBSVM's (scikit-learn ``SVC`` at the
benchmarks.md C and gamma); then, at 1, 2, 5, 10 and 20 % of its support
vectors:

* ``cvm``      leansvm.compress(method='cvm'): LARS-SVM selection + gradient support vectors
* ``lars``     leansvm.compress(method='lars'): LARS-SVM selection + least-squares coefficients
* ``random``   a random subset of the support vectors + the same least-squares coefficients
* ``nystroem`` scikit-learn Nystroem(same number of landmarks) + LinearSVC (C of the dataset)
* ``bsgd``     leansvm's BSGD at the same budget, when that estimator is available

Test-time cost: prediction time of the compressed model vs the full model in
the same engine (leansvm's KernelExpansion) and vs scikit-learn ``SVC.predict``
of the full model, measured side by side (interleaved, best of 3).

    python benchmarks/compression/bench_compression.py                     # all six datasets
    python benchmarks/compression/bench_compression.py --datasets banana magic --fractions 0.02 0.1
    python benchmarks/compression/bench_compression.py --circle             # the paper's Figure 2 only
    python benchmarks/compression/bench_compression.py --shared-vs-separate --datasets satimage --fractions 0.02 0.1
    python benchmarks/compression/bench_compression.py --datasets magic --fractions 0.1 --methods cvm lars --random-states 0 1 2

Models with more than ``cvm.EIG_MAX`` SVs (binary) or more than
``max_fit_points`` training points select / fit on random subsamples, so one
run is one draw: ``--random-states`` repeats each size per seed and prints,
for cvm vs lars of the same seed, the test points where their labels differ
(how many only one of them gets right, the two-sided sign test) and the mean
and sd over seeds of the accuracy difference.

Writes ``benchmarks/results/compression-<time>.json``, one
``compression_<dataset>.png`` per dataset and ``cvm_circle.png``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import RESULTS_DIR, format_table, libsvm_input, machine_info, markdown_table, race, write_json_atomic  # noqa: E402

from leansvm import compress, datasets  # noqa: E402
from leansvm.core.sklearn_svc import expansion_from_sklearn  # noqa: E402

DATASETS = ("magic", "letter", "page-blocks0", "banana", "satimage", "a9a")
FRACTIONS = (0.01, 0.02, 0.05, 0.10, 0.20)
METHODS = ("cvm", "lars", "random", "nystroem", "bsgd")
#: methods that do not depend on compress (``--plot-only --baselines``)
BASELINES = ("nystroem", "bsgd")


def _cpu_s():
    return time.process_time()


def _load():
    with open("/proc/loadavg") as fh:
        return float(fh.read().split()[0])


def _accuracy(model, X, y):
    return float(np.mean(np.asarray(model.predict(X)) == np.asarray(y)))


def _nystroem(ds, n, X, y, Xt, yt):
    from sklearn.kernel_approximation import Nystroem
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    model = make_pipeline(Nystroem(gamma=ds.gamma, n_components=n, random_state=0),
                          LinearSVC(C=ds.C, dual=False, max_iter=2000))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    return model, time.perf_counter() - t0


def _bsgd(ds, n, X, y):
    try:
        from leansvm import BSGDClassifier
    except ImportError:
        return None, None
    model = BSGDClassifier(budget=n, C=ds.C, gamma=ds.gamma, random_state=0)
    t0 = time.perf_counter()
    model.fit(X, y)
    return model, time.perf_counter() - t0


def paired_comparison(pred_a, pred_b, y, full_pred):
    """Test points where two models' labels differ: how many each gets right there, and the sign test.

    ``a_only`` / ``b_only``: points only a / only b labels correctly (the discordant pairs of a
    McNemar / sign test); ``p_sign``: two-sided exact binomial test of a_only vs b_only at 1/2.
    """
    from scipy.stats import binomtest

    a_ok, b_ok = pred_a == y, pred_b == y
    a_only, b_only = int(np.sum(a_ok & ~b_ok)), int(np.sum(b_ok & ~a_ok))
    n = a_only + b_only
    return {"a_correct": int(a_ok.sum()), "b_correct": int(b_ok.sum()), "a_only": a_only, "b_only": b_only,
            "labels_differ": int(np.sum(pred_a != pred_b)),
            "a_differs_from_full": int(np.sum(pred_a != full_pred)),
            "b_differs_from_full": int(np.sum(pred_b != full_pred)),
            "p_sign": float(binomtest(a_only, n, 0.5).pvalue) if n else 1.0}


def run_dataset(name, fractions, methods, max_iter, timing_fractions, fit_on="sv", options=None,
                random_states=(0,)):
    from sklearn.svm import SVC as LibSVC

    ds = datasets.load(name)
    X, y, Xt, yt = ds.X_train, np.asarray(ds.y_train), ds.X_test, np.asarray(ds.y_test)
    t0 = time.perf_counter()
    full = LibSVC(C=ds.C, gamma=ds.gamma, cache_size=1000).fit(libsvm_input(X), y)
    fit_s = time.perf_counter() - t0
    m = int(full.support_vectors_.shape[0])
    full_pred = np.asarray(full.predict(libsvm_input(Xt)))
    full_acc = float(np.mean(full_pred == yt))
    print(f"\n== {name}: n={X.shape[0]}, d={X.shape[1]}, classes={len(full.classes_)}; LIBSVM {m} SVs, "
          f"test accuracy {full_acc:.4f}, fit {fit_s:.1f} s", flush=True)
    record = {"dataset": name, "n_train": X.shape[0], "n_test": Xt.shape[0], "d": X.shape[1],
              "n_classes": len(full.classes_), "C": ds.C, "gamma": ds.gamma, "full_n_sv": m,
              "full_accuracy": full_acc, "full_fit_s": fit_s, "rows": [], "timing": [], "paired": []}
    full_exp = expansion_from_sklearn(full)
    for f, seed in [(f, s) for f in fractions for s in random_states]:
        n = max(1, int(round(f * m)))
        predictions = {}
        for method in methods:
            row = {"dataset": name, "fraction": f, "method": method, "n_sv_budget": n, "random_state": seed}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if method in ("cvm", "lars", "random"):
                    t0, c0 = time.perf_counter(), _cpu_s()
                    fit_points = dict(X=X, y=y) if fit_on == "train" else {}
                    model = compress(full, n_sv=n, method=method, max_iter=max_iter, random_state=seed,
                                     progress=False, **fit_points, **(options or {}))
                    row["fit_s"] = time.perf_counter() - t0
                    row["fit_cpu_s"] = _cpu_s() - c0
                    row["load_avg_1min"] = _load()
                    row["n_sv"] = model.expansion_.n_support
                    for key in ("selection", "n_iter", "max_iter", "best_iteration", "layout", "gamma",
                                "validation_agreement"):
                        if key in model.compression_:
                            row[key] = model.compression_[key]
                elif method == "nystroem":
                    model, row["fit_s"] = _nystroem(ds, n, X, y, Xt, yt)
                    row["n_sv"] = n
                else:
                    model, row["fit_s"] = _bsgd(ds, n, X, y)
                    if model is None:
                        continue
                    row["n_sv"] = model.expansion_.n_support
            predictions[method] = pred = np.asarray(model.predict(Xt))
            row["accuracy"] = float(np.mean(pred == yt))
            row["drop_points"] = 100 * (full_acc - row["accuracy"])
            row["agreement_with_full"] = float(np.mean(pred == full_pred))
            record["rows"].append(row)
            extra = "".join(f" {k} {row[k]}" for k in ("layout", "n_iter", "best_iteration") if k in row)
            print(f"  {f:5.0%} n={n:5d} seed {seed} {method:9s} acc {row['accuracy']:.4f} "
                  f"(drop {row['drop_points']:+.2f} pp, agreement {row['agreement_with_full']:.4f}) "
                  f"fit {row['fit_s']:.1f} s (cpu {row.get('fit_cpu_s', float('nan')):.1f} s, load "
                  f"{_load():.1f}){extra}", flush=True)
            if method == "cvm" and f in timing_fractions and seed == random_states[0]:
                record["timing"].append(_timing(name, f, model, full_exp, full, Xt))
        if "cvm" in predictions and "lars" in predictions:   # a = cvm, b = lars, same seed
            pair = {"fraction": f, "n_sv_budget": n, "random_state": seed,
                    **paired_comparison(predictions["cvm"], predictions["lars"], yt, full_pred)}
            record["paired"].append(pair)
            print(f"  {f:5.0%} seed {seed} cvm vs lars: {pair['a_correct']} vs {pair['b_correct']} correct, "
                  f"labels differ at {pair['labels_differ']}, only cvm right {pair['a_only']}, only lars right "
                  f"{pair['b_only']} (sign test p {pair['p_sign']:.2f}); differ from full {pair['a_differs_from_full']}"
                  f" vs {pair['b_differs_from_full']}", flush=True)
    record["seed_summary"] = _seed_summary(record, random_states)
    return record


def _seed_summary(record, random_states):
    """Per size with several seeds: mean and sample sd over seeds of (cvm - lars) test accuracy, in points."""
    out = []
    for f in sorted({p["fraction"] for p in record["paired"]}):
        pairs = [p for p in record["paired"] if p["fraction"] == f]
        if len(pairs) < 2:
            continue
        diff = np.array([100 * (p["a_correct"] - p["b_correct"]) / record["n_test"] for p in pairs])
        a_only, b_only = sum(p["a_only"] for p in pairs), sum(p["b_only"] for p in pairs)
        summary = {"fraction": f, "random_states": [p["random_state"] for p in pairs],
                   "cvm_minus_lars_points": diff.tolist(), "mean": float(diff.mean()),
                   "sd": float(diff.std(ddof=1)), "cvm_below_lars": int(np.sum(diff < 0)),
                   "a_only_total": a_only, "b_only_total": b_only}
        out.append(summary)
        print(f"  {record['dataset']} {f:.0%} over seeds {summary['random_states']}: cvm - lars "
              f"{summary['mean']:+.3f} +- {summary['sd']:.3f} points (sd over seeds), cvm below lars in "
              f"{summary['cvm_below_lars']} of {len(pairs)}; discordant totals cvm-only {a_only}, lars-only {b_only}",
              flush=True)
    return out


def _timing(name, f, compressed, full_exp, full, Xt):
    """Prediction time of the compressed model vs the full model (same engine) and vs LIBSVM."""
    Xl = libsvm_input(Xt)
    best, _ = race({"compressed": lambda: compressed.expansion_.decision_function(Xt),
                    "full_leansvm": lambda: full_exp.decision_function(Xt),
                    "full_libsvm": lambda: full.predict(Xl)}, repeat=3, budget_s=60)
    row = {"dataset": name, "fraction": f, "n_sv": compressed.expansion_.n_support,
           "compressed_s": best["compressed"], "full_leansvm_s": best["full_leansvm"],
           "full_libsvm_s": best["full_libsvm"],
           "speedup_vs_full_same_engine": best["full_leansvm"] / best["compressed"],
           "speedup_vs_libsvm": best["full_libsvm"] / best["compressed"]}
    print(f"  predict {Xt.shape[0]} points at {f:.0%}: compressed {best['compressed']:.4f} s, full (leansvm) "
          f"{best['full_leansvm']:.3f} s ({row['speedup_vs_full_same_engine']:.1f}x), LIBSVM predict "
          f"{best['full_libsvm']:.3f} s ({row['speedup_vs_libsvm']:.1f}x)", flush=True)
    return row


def _records_with_baselines(result_files, baseline_files):
    """Dataset records of ``result_files`` (one per dataset: a later file's rows replace the same method and
    size of earlier ones), plus the Nystroem / BSGD rows they lack from ``baseline_files`` (same dataset and
    full model size only: those rows do not depend on compress's defaults)."""
    import json

    def records(files):
        for path in files:
            with open(path) as fh:
                yield from (r for r in json.load(fh)["datasets"] if "rows" in r)

    base = list(records(baseline_files))
    merged = {}   # one record per dataset: rows of later files replace earlier rows of the same method and size
    for record in records(result_files):
        key = (record["dataset"], record["full_n_sv"])
        if key in merged:
            new = {_row_key(r) for r in record["rows"]}
            record["rows"] = [r for r in merged[key]["rows"] if _row_key(r) not in new] + record["rows"]
        merged[key] = record
    out = []
    for record in merged.values():
        have = {r["method"] for r in record["rows"]}
        for old in base:
            if old["dataset"] == record["dataset"] and old["full_n_sv"] == record["full_n_sv"]:
                extra = [r for r in old["rows"] if r["method"] in BASELINES and r["method"] not in have]
                record["rows"] += extra
                have |= {r["method"] for r in extra}
        out.append(record)
    return out


def _row_key(row):
    return row["method"], row["fraction"], row.get("random_state", 0)


def plot_dataset(record, path):
    """Test accuracy against size per method (random_state 0 rows: one draw per cell, as the table)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4))
    for method, marker in zip(METHODS, "osv^D"):
        rows = sorted((r for r in record["rows"] if r["method"] == method and r.get("random_state", 0) == 0),
                      key=lambda r: r["n_sv_budget"])
        if rows:
            ax.plot([r["n_sv_budget"] for r in rows], [r["accuracy"] for r in rows], marker=marker,
                    label=method)
    ax.axhline(record["full_accuracy"], color="k", ls="--", lw=1,
               label=f"full LIBSVM ({record['full_n_sv']} SVs)")
    ax.set_xscale("log")
    ax.set_xlabel("number of support vectors (1-20% of the full model)")
    ax.set_ylabel("test accuracy")
    ax.set_title(f"{record['dataset']}: accuracy vs size")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def circle_figure(path, iterations=(0, 5, 10, 20, 50, 200)):
    """The paper's Figure 2: full SVM, 10% LARS-SVM, gradient support vectors after more iterations."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.svm import SVC as LibSVC

    from leansvm.compression import cvm

    ds = datasets.load("circle")
    X = np.vstack([ds.X_train, ds.X_test])
    y = np.concatenate([np.asarray(ds.y_train), np.asarray(ds.y_test)])
    full = LibSVC(C=ds.C, gamma=ds.gamma).fit(X, y)
    m = full.support_vectors_.shape[0]
    n = max(1, round(0.1 * m))
    lars = compress(full, n_sv=n, method="lars", X=X, y=y, random_state=0)
    # replay the gradient step from the LARS-SVM solution, recording the vectors after each iteration
    full_exp = expansion_from_sklearn(full)
    exp = lars.expansion_
    # eq. 10 over the training points, as the paper's K~ (fitting only at the SVs lets vectors
    # drift into empty regions after many iterations)
    problem = cvm.GradientProblem(exp.kernel, X, full_exp.decision_function(X), cvm.output_blocks(None, None, 1),
                                  exp.n_support)
    snapshots = {0: problem.pack(exp.support_vectors, exp.coef, exp.intercept)}
    count = [0]

    def record(theta):
        count[0] += 1
        if count[0] in iterations:
            snapshots[count[0]] = theta.copy()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cvm.optimise_vectors(problem, exp.support_vectors, exp.coef, exp.intercept, max_iter=max(iterations),
                             callback=record)
    grid = np.linspace(-3.2, 3.2, 200)
    gx, gy = np.meshgrid(grid, grid)
    G = np.column_stack([gx.ravel(), gy.ravel()])
    panels = [("(a) full SVM: %d SVs, train acc %.3f" % (m, full.score(X, y)), full.decision_function(G),
               full.support_vectors_),
              ("(b) LARS-SVM: %d SVs, acc %.3f" % (n, lars.score(X, y)), lars.decision_function(G),
               exp.support_vectors)]
    from leansvm import KernelExpansion
    for it in sorted(k for k in snapshots if k > 0):
        Z, B, c = problem.unpack(snapshots[it])
        e = KernelExpansion(Z, B, c, exp.kernel)
        acc = np.mean((e.decision_function(X)[:, 0] > 0) == (y == full.classes_[1]))
        panels.append((f"({chr(ord('b') + len(panels) - 1)}) gradient SVs, {it} iterations, acc {acc:.3f}",
                       e.decision_function(G)[:, 0], Z))
    fig, axes = plt.subplots(2, 4, figsize=(16, 8))
    for ax, (title, values, sv) in zip(axes.ravel(), panels):
        ax.scatter(X[:, 0], X[:, 1], c=np.where(y == full.classes_[1], "tab:red", "tab:blue"), s=5, alpha=0.4)
        ax.contour(gx, gy, values.reshape(gx.shape), levels=[0], colors="k")
        if panels[0][1] is not values:
            ax.contour(gx, gy, panels[0][1].reshape(gx.shape), levels=[0], colors="0.6", linestyles="--")
        ax.scatter(sv[:, 0], sv[:, 1], facecolors="none", edgecolors="k", s=30)
        ax.set_title(title, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    for ax in axes.ravel()[len(panels):]:
        ax.axis("off")
    fig.suptitle("circle data (600 points): full SVM (dashed grey), 10% LARS-SVM, gradient support vectors")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"wrote {path}")


COLUMNS = [("dataset", "dataset", "s"), ("fraction", "% SV", ".0%"), ("n_sv_budget", "n", "d"),
           ("method", "method", "s"), ("random_state", "seed", "d"), ("accuracy", "test acc", ".4f"), ("drop_points", "drop (pp)", "+.2f"),
           ("agreement_with_full", "agree", ".4f"), ("fit_s", "fit s", ".1f"), ("fit_cpu_s", "cpu s", ".1f")]
TIMING_COLUMNS = [("dataset", "dataset", "s"), ("fraction", "% SV", ".0%"), ("n_sv", "n", "d"),
                  ("compressed_s", "compressed s", ".4f"), ("full_leansvm_s", "full leansvm s", ".3f"),
                  ("full_libsvm_s", "LIBSVM predict s", ".3f"),
                  ("speedup_vs_full_same_engine", "x vs full", ".1f"), ("speedup_vs_libsvm", "x vs LIBSVM", ".1f")]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--fractions", nargs="+", type=float, default=list(FRACTIONS))
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--max-iter", type=int, default=None,
                        help="L-BFGS iterations of the gradient step (default: compress's automatic choice)")
    parser.add_argument("--timing-fractions", nargs="+", type=float, default=[0.02, 0.10])
    parser.add_argument("--fit-on", choices=("sv", "train"), default="train",
                        help="fitting points of compress: the training set (default; at most 20,000 of it, "
                             "as the paper's eq. 10) or the full model's SVs")
    parser.add_argument("--loss", choices=("squared", "margin"), default="margin",
                        help="gradient step's loss (compress(loss=...))")
    parser.add_argument("--layout", choices=("auto", "shared", "libsvm"), default="auto",
                        help="multi-class vector layout (compress(layout=...))")
    parser.add_argument("--random-states", nargs="+", type=int, default=[0],
                        help="compress(random_state=...) values, each size run once per value; with cvm and "
                             "lars the paired test-point comparison and the mean / sd over seeds are printed")
    parser.add_argument("--circle", action="store_true", help="only draw the paper's Figure 2")
    parser.add_argument("--plot-only", nargs="+", metavar="JSON",
                        help="redraw compression_<dataset>.png from these result files (no runs)")
    parser.add_argument("--baselines", nargs="+", metavar="JSON", default=[],
                        help="with --plot-only: nystroem / bsgd rows missing from the results, taken from "
                             "these earlier result files of the same dataset and full model")
    parser.add_argument("--shared-vs-separate", action="store_true",
                        help="multi-class only: one shared pool vs each pair compressed separately")
    args = parser.parse_args(argv)
    RESULTS_DIR.mkdir(exist_ok=True)
    if args.circle:
        circle_figure(RESULTS_DIR / "cvm_circle.png")
        return 0
    if args.plot_only:
        for record in _records_with_baselines(args.plot_only, args.baselines):
            plot_dataset(record, RESULTS_DIR / f"compression_{record['dataset']}.png")
        return 0
    stamp = time.strftime("%Y%m%d-%H%M%S")
    if args.shared_vs_separate:
        rows = [row for name in args.datasets for row in separate_vs_shared(name, args.fractions, args.max_iter)]
        write_json_atomic(RESULTS_DIR / f"compression-shared-vs-separate-{stamp}.json",
                          {"benchmark": "compression: shared pool vs separate pairs", "max_iter": args.max_iter,
                           "machine": machine_info(), "rows": rows})
        return 0
    out = RESULTS_DIR / f"compression-{args.fit_on}-{args.layout}-{stamp}.json"
    payload = {"benchmark": "compression", "machine": machine_info(), "max_iter": args.max_iter,
               "fit_on": args.fit_on, "loss": args.loss, "layout": args.layout,
               "note": "shared 2-core machine, loaded by other jobs: timings are side by side, compare ratios",
               "datasets": []}
    for name in args.datasets:
        try:
            record = run_dataset(name, args.fractions, args.methods, args.max_iter, args.timing_fractions,
                                 args.fit_on, options={"loss": args.loss, "layout": args.layout},
                                 random_states=args.random_states)
        except (FileNotFoundError, ImportError, ValueError) as exc:
            print(f"{name}: skipped ({exc})")
            payload["datasets"].append({"dataset": name, "error": str(exc)})
            continue
        payload["datasets"].append(record)
        suffix = ("" if args.fit_on == "train" else "_fit-sv") + ("" if args.layout == "auto" else f"_{args.layout}")
        plot_dataset(record, RESULTS_DIR / f"compression_{name}{suffix}.png")
        write_json_atomic(out, payload)
    rows = [r for rec in payload["datasets"] for r in rec.get("rows", [])]
    timing = [r for rec in payload["datasets"] for r in rec.get("timing", [])]
    print("\n" + format_table(rows, COLUMNS))
    print("\n" + format_table(timing, TIMING_COLUMNS))
    payload["markdown"] = {"accuracy": markdown_table(rows, COLUMNS), "timing": markdown_table(timing, TIMING_COLUMNS)}
    write_json_atomic(out, payload)
    print(f"\nwrote {out}")
    return 0



# -- multi-class: one shared pool vs each one-vs-one problem compressed on its own ------------------
class _PairModel:
    """Pair p of a one-vs-one expansion as a binary model (its two classes' SVs, column p)."""

    def __init__(self, expansion, n_support, classes, p, i, j):
        from leansvm import KernelExpansion
        starts = np.concatenate(([0], np.cumsum(n_support)))
        rows = np.r_[starts[i]:starts[i + 1], starts[j]:starts[j + 1]]
        rows = rows[expansion.coef[rows, p] != 0]
        self.expansion_ = KernelExpansion(expansion.support_vectors[rows], expansion.coef[rows, p],
                                          expansion.intercept[p:p + 1], expansion.kernel)
        self.classes_ = np.array([classes[j], classes[i]])   # column p > 0 votes for class i
        self.multiclass_ = "ovo"


def separate_vs_shared(name, fractions, max_iter):
    """Test accuracy of compressing each pair separately (total budget split over pairs) vs one shared pool."""
    from sklearn.svm import SVC as LibSVC

    from leansvm.core.multiclass import ovo_pairs, predict_index

    ds = datasets.load(name)
    X, y, Xt, yt = ds.X_train, np.asarray(ds.y_train), ds.X_test, np.asarray(ds.y_test)
    full = LibSVC(C=ds.C, gamma=ds.gamma, cache_size=1000).fit(X, y)
    exp = expansion_from_sklearn(full)
    k, m = len(full.classes_), exp.n_support
    pairs = ovo_pairs(k)
    rows = []
    for f in fractions:
        n = max(1, int(round(f * m)))
        per_pair = np.full(len(pairs), n // len(pairs))
        per_pair[: n - per_pair.sum()] += 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            shared = compress(full, n_sv=n, max_iter=max_iter, random_state=0)
            outputs, used = np.zeros((Xt.shape[0], len(pairs))), 0
            for p, (i, j) in enumerate(pairs):
                if per_pair[p] == 0:
                    outputs[:, p] = exp.intercept[p]
                    continue
                small = compress(_PairModel(exp, full.n_support_, full.classes_, p, i, j), n_sv=int(per_pair[p]),
                                 max_iter=max_iter, random_state=0)
                outputs[:, p] = small.expansion_.decision_function(Xt)[:, 0]
                used += small.expansion_.n_support
        separate_acc = float(np.mean(full.classes_[predict_index(outputs, k, "ovo")] == yt))
        row = {"dataset": name, "fraction": f, "n_sv_budget": n, "shared_accuracy": _accuracy(shared, Xt, yt),
               "separate_accuracy": separate_acc, "separate_n_sv": used, "full_accuracy": _accuracy(full, Xt, yt)}
        rows.append(row)
        print(f"  {name} {f:.0%} n={n}: shared pool {row['shared_accuracy']:.4f}, separate pairs "
              f"{separate_acc:.4f} ({used} vectors), full {row['full_accuracy']:.4f}", flush=True)
    return rows


if __name__ == "__main__":
    sys.exit(main())
