"""The main job (``leansvm.fit_lean``) on benchmark datasets: chosen model vs the exact and LIBSVM models.

    python benchmarks/main_job/bench_fit.py [--datasets magic letter a9a] [--budget-seconds 120]
                                   [--max-accuracy-drop 0.5]

Per dataset: the route taken, the chosen model (#SV, validation and test
accuracy), the exact model it was chosen against, LIBSVM's full model at the
same (C, gamma) (#SV, test accuracy) and prediction cost per 1000 test rows
(chosen / LIBSVM), plus total wall time. Prints a table and writes JSON to
``benchmarks/results/fit-<timestamp>.json``; each dataset's HTML report goes
next to it. The machine is shared: compare ratios within one run.

The exact solver alone, side by side with LIBSVM and scikit-learn-intelex on one thread and on
every core, is ``benchmarks/exact/bench_irwls.py --n-jobs 1,-1 --intelex``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import RESULTS_DIR as RESULTS  # noqa: E402


def run_one(name, budget_seconds, drop, confidence=0.95):
    from leansvm import datasets, fit_lean
    from leansvm.job.report import write_report

    data = datasets.load(name)
    start = time.perf_counter()
    result = fit_lean(data.X_train, np.asarray(data.y_train), X_test=data.X_test, y_test=np.asarray(data.y_test),
                      max_accuracy_drop=drop, budget_seconds=budget_seconds, confidence=confidence, verbose=True,
                      progress=False)   # the step lines, without bars filling the log
    wall = time.perf_counter() - start
    stamp = time.strftime("%Y%m%d-%H%M%S")
    report = RESULTS / f"fit-{name}-{stamp}.html"
    write_report(result, report, title=f"leansvm fit: {name}")
    exact = [c for c in result.candidates if c.kind == "exact"]
    best_val = max(c.validation_accuracy for c in result.candidates if c.kind in ("exact", "budget"))
    chosen, final = result.chosen, result.final
    return {
        "dataset": name, "route": result.route, "C": result.selection.C, "gamma": result.selection.gamma,
        "chosen": chosen.name, "chosen_n_sv": chosen.n_support,
        "chosen_val_acc": chosen.validation_accuracy, "chosen_test_acc": chosen.test_accuracy,
        "chosen_required_val_acc": chosen.required_accuracy, "confidence": confidence,
        "returned": final.name, "returned_n_sv": final.n_support, "returned_test_acc": final.test_accuracy,
        "returned_ms_per_1000": 1000 * final.seconds_per_1000,
        "candidates": [{"name": c.name, "n_sv": c.n_support, "val_acc": c.validation_accuracy,
                        "required_val_acc": c.required_accuracy, "test_acc": c.test_accuracy}
                       for c in result.candidates],
        "best_val_acc": best_val,
        "exact": exact[0].name if exact else None, "exact_n_sv": exact[0].n_support if exact else None,
        "exact_test_acc": exact[0].test_accuracy if exact else None,
        "libsvm_n_sv": result.libsvm_n_support, "libsvm_test_acc": result.libsvm_test_accuracy,
        "chosen_ms_per_1000": 1000 * chosen.seconds_per_1000,
        "libsvm_ms_per_1000": None if result.libsvm_seconds_per_1000 is None else 1000 * result.libsvm_seconds_per_1000,
        "wall_seconds": wall, "report": str(report.name), "loadavg_after": _loadavg(),
        "steps": [vars(s) for s in result.steps],
    }


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def main(argv=None) -> int:
    from leansvm.io import atomic_write

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["magic", "letter", "a9a"])
    parser.add_argument("--budget-seconds", type=float, default=120.0)
    parser.add_argument("--max-accuracy-drop", type=float, default=0.5, help="percentage points")
    parser.add_argument("--confidence", type=float, default=0.95, help="fit_lean's one-sided bound on each drop")
    args = parser.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    start_load = _loadavg()
    rows = []
    for name in args.datasets:
        try:
            rows.append(run_one(name, args.budget_seconds, args.max_accuracy_drop / 100, args.confidence))
        except (FileNotFoundError, ValueError) as exc:  # e.g. a9a without ../shared/data
            print(f"{name}: skipped ({exc})")
            rows.append({"dataset": name, "error": str(exc)})
    print(f"\n{'dataset':10} {'route':6} {'chosen':34} {'#SV':>6} {'test':>7} {'returned test':>13} "
          f"{'exact #SV':>10} {'exact test':>10} "
          f"{'LIBSVM #SV':>10} {'LIBSVM test':>11} {'pred speed-up':>13} {'wall s':>7}")
    for r in rows:
        if "error" in r:
            print(f"{r['dataset']:10} error: {r['error']}")
            continue
        speed = "-" if r["libsvm_ms_per_1000"] is None else f"{r['libsvm_ms_per_1000'] / r['returned_ms_per_1000']:.1f}x"
        fmt = lambda v: "-" if v is None else (f"{v:.4f}" if isinstance(v, float) else str(v))  # noqa: E731
        print(f"{r['dataset']:10} {r['route']:6} {r['chosen']:34} {r['chosen_n_sv']:>6} {fmt(r['chosen_test_acc']):>7} "
              f"{fmt(r['returned_test_acc']):>13} "
              f"{fmt(r['exact_n_sv']):>10} {fmt(r['exact_test_acc']):>10} {fmt(r['libsvm_n_sv']):>10} "
              f"{fmt(r['libsvm_test_acc']):>11} {speed:>13} {r['wall_seconds']:>7.0f}")
    out = RESULTS / f"fit-{time.strftime('%Y%m%d-%H%M%S')}.json"
    with atomic_write(out, "w", encoding="utf-8") as f:
        json.dump({"budget_seconds": args.budget_seconds, "max_accuracy_drop_points": args.max_accuracy_drop,
                   "confidence": args.confidence, "loadavg_at_start": start_load,
                   "note": "shared 2-core machine under load from other processes", "rows": rows}, f, indent=1,
                  default=lambda o: o.item() if hasattr(o, "item") else str(o))
    print(f"\nresults written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
