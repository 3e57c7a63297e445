"""The shipped baseline machine code against code compiled for this very CPU, side by side.

    python benchmarks/exact/bench_compiled_targets.py                       # the exact table's sets
    python benchmarks/exact/bench_compiled_targets.py --sets wdbc,banana --rounds 2   # a quick look

The package ships its solvers compiled for the platform's baseline levels (x86-64: x86-64-v4 and
x86-64-v2, ``leansvm.core.jit``). Each target runs in processes of its own, numba told to compile
for it (``NUMBA_CPU_NAME``), so the run-time side picks exactly that target's shipped code; the
``native`` rows compile for this machine's own CPU into a folder of the run's (the first process
of each target is a warm-up, untimed). Rounds alternate the targets, so that every target sees
the same machine load; the table gives each hot loop's median seconds and its ratio to native.

Hot loops: ``SVC.fit`` on the exact-training table's sets (their C and gamma, training part, one
thread), ``SVR.fit`` on friedman1-10k, the compression of a 1,000-row SVC to 50 vectors
(``compress``, 30 iterations) and ``BSGDClassifier.fit`` with budget 200 on magic's first 10,000
rows.

JSON to benchmarks/results/compiled-targets-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import finish_run  # noqa: E402

SETS = "wdbc,banana,page-blocks0,twonorm,satimage,magic,letter,a9a"

#: one process: every hot loop once, its seconds as JSON on the last line
WORKER = r"""
import json, sys, time
from threadpoolctl import threadpool_limits
import leansvm
from leansvm import datasets
from leansvm.core import jit

def timed(f):
    t = time.perf_counter(); f(); return time.perf_counter() - t

sets = sys.argv[1].split(",")
if sys.argv[2] == "native":                   # numba's own cache only: code for this very CPU
    jit.usable_targets = lambda: ()
out = {"target folder": [p.name for p in jit.usable_targets()][:1]}
with threadpool_limits(1):
    for name in sets:
        ds = datasets.load(name)
        out[f"SVC {name}"] = timed(lambda: leansvm.SVC(**ds.params).fit(ds.X_train, ds.y_train))
    r = datasets.load("friedman1-10k")
    out["SVR friedman1-10k"] = timed(lambda: leansvm.SVR(**r.params).fit(r.X_train, r.y_train))
    m = datasets.load("magic")
    X, y = m.X_train[:1000], m.y_train[:1000]
    model = leansvm.SVC(**m.params).fit(X, y)
    out["compress 1000 -> 50"] = timed(lambda: leansvm.compress(model, n_sv=50, X=X, y=y, max_iter=30,
                                                                 random_state=0, progress=False))
    out["BSGD magic 10k"] = timed(lambda: leansvm.BSGDClassifier(budget=200, gamma=m.gamma, C=m.C,
                                  random_state=0).fit(m.X_train[:10000], m.y_train[:10000]))
print(json.dumps(out))
"""


def environment(target: str, cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES")}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               NUMBA_CACHE_DIR=str(cache / target))
    if target != "native":
        env.update(NUMBA_CPU_NAME=target, NUMBA_CPU_FEATURES="")
    return env


def one_process(target: str, sets: str, cache: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", WORKER, sets, target], env=environment(target, cache),
                         capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    from leansvm.core import jit
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default=SETS)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--targets", default=None, help="default: native and every shipped target")
    parser.add_argument("--name", default="compiled-targets")
    args = parser.parse_args()
    shipped = [r["target"] for r in jit.shipped_targets()]
    targets = args.targets.split(",") if args.targets else ["native", *shipped]
    times = {t: [] for t in targets}
    with tempfile.TemporaryDirectory() as cache:
        for target in targets:                              # warm-up: native compiles here
            folder = one_process(target, args.sets, Path(cache))["target folder"]
            print(f"{target}: warm-up done (shipped code used: {folder or 'none'})", flush=True)
        for r in range(args.rounds):
            for target in (targets if r % 2 == 0 else targets[::-1]):
                times[target].append(one_process(target, args.sets, Path(cache)))
            print(f"round {r + 1} of {args.rounds} done", flush=True)
    loops = [k for k in times[targets[0]][0] if k != "target folder"]
    tuning = {r["target"]: r.get("features", "") for r in jit.shipped_targets()}   # LLVM flags it was built with
    rows = []
    for loop in loops:
        base = float(np.median([run[loop] for run in times["native"]])) if "native" in times else None
        for target in targets:
            median = float(np.median([run[loop] for run in times[target]]))
            rows.append({"loop": loop, "target": target, "built_with": tuning.get(target, ""), "median_s": median,
                         "all_s": [run[loop] for run in times[target]],
                         "vs_native": median / base if base else None})
    columns = [("loop", "loop", "s"), ("target", "target", "s"), ("median_s", "median s", ".3f"),
               ("vs_native", "/ native", ".3f")]
    finish_run(rows, columns, args.name)


if __name__ == "__main__":
    main()
