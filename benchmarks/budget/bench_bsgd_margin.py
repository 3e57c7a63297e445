"""The vectorised RBF margin of the BSGD pass against the solver of an earlier commit.

    python benchmarks/budget/bench_bsgd_margin.py [--base 504a430]

Loads ``src/leansvm/budget/bsgd.py`` as it was at ``--base`` (git show) next to the current
one and runs the same SGD pass (same order, lookup merges) with each, back to back, twice,
reporting the smaller CPU time of each (process time; the machine is shared) and their ratio.
Only the per-step margin changed (reassociated dot products and a vectorisable exp), so the
ratio is the gain in the non-maintenance part. Results: benchmarks/results/bsgd_margin.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import RESULTS_DIR, format_table, machine_info, write_json_atomic  # noqa: E402

from leansvm import datasets  # noqa: E402
from leansvm.budget import bsgd as bsgd_new  # noqa: E402

CASES = [("synth-200k", 519), ("synth-200k", 2596), ("checker-100k", 132), ("magic", 245), ("a9a", 569)]


def load_base(commit: str):
    """The solver module at ``commit`` (relative imports rewritten to absolute ones)."""
    root = Path(__file__).resolve().parents[2]
    src = subprocess.run(["git", "show", f"{commit}:src/leansvm/budget/bsgd.py"], cwd=root,
                         check=True, capture_output=True, text=True).stdout
    src = src.replace("from ..kernels import", "from leansvm.core.kernels import")
    path = Path(tempfile.mkdtemp(prefix="bsgd_base_")) / "bsgd_base.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("bsgd_base", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod                    # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def one_pass(mod, X, y, order, lam, B, M, gamma):
    cfg = mod.BudgetConfig(budget=B, n_merge=M, merge_solver="lookup", gamma=gamma)
    c0 = time.process_time()
    mod.sgd_pass(mod.BudgetState.empty(X.shape[1], lam), X, y, order, cfg)
    return time.process_time() - c0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", default="504a430")
    p.add_argument("--merges", default="2,10")
    p.add_argument("--out", default=str(RESULTS_DIR / "bsgd_margin.json"))
    args = p.parse_args(argv)
    threadpool_limits(1, user_api="blas")
    base = load_base(args.base)
    rows = []
    for name, B in CASES:
        ds = datasets.load(name)
        y = np.where(ds.y_train == np.unique(ds.y_train)[1], 1.0, -1.0)
        n = len(y)
        lam = 1.0 / (n * ds.C)
        order = np.random.default_rng(0).permutation(n)
        for mod in (base, bsgd_new):                     # compile / load from the cache
            one_pass(mod, ds.X_train, y, np.arange(min(n, 2000)), lam, B, 2, ds.gamma)
        for M in (int(m) for m in args.merges.split(",")):
            t = {"base": [], "new": []}
            for _ in range(2):
                for tag, mod in (("base", base), ("new", bsgd_new)):
                    t[tag].append(one_pass(mod, ds.X_train, y, order, lam, B, M, ds.gamma))
            rows.append({"dataset": name, "budget": B, "M": M, "cpu_base": min(t["base"]),
                         "cpu_new": min(t["new"]), "ratio": min(t["base"]) / min(t["new"]),
                         "load1": os.getloadavg()[0]})
            print(f"  {name} B={B} M={M}: {rows[-1]['cpu_base']:.2f} -> {rows[-1]['cpu_new']:.2f} s CPU "
                  f"({rows[-1]['ratio']:.2f}x) load {rows[-1]['load1']:.1f}", flush=True)
    print(format_table(rows, [("dataset", "dataset", "s"), ("budget", "B", "d"), ("M", "M", "d"),
                              ("cpu_base", f"CPU s {args.base}", ".2f"), ("cpu_new", "CPU s now", ".2f"),
                              ("ratio", "ratio", ".2f"), ("load1", "load", ".1f")]))
    write_json_atomic(Path(args.out), {"rows": rows, "base": args.base, "machine": machine_info(),
                                       "command": " ".join(sys.argv),
                                       "finished": time.strftime("%Y-%m-%d %H:%M:%S")})


if __name__ == "__main__":
    main()
