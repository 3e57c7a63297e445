"""What a first run pays for numba's compilation, with and without the install step's precompile
.

    python benchmarks/exact/bench_first_run.py                          # fit_lean on banana
    python benchmarks/exact/bench_first_run.py --jobs fit_lean:banana bsgd:a9a svc:magic

Each job runs in a fresh process with its own empty numba cache directory (NUMBA_CACHE_DIR), in
two orders: "cold" (the first process compiles, the second loads what the first wrote) and
"precompiled" (``python -m leansvm.precompile`` first, then the two processes). A job's seconds
are its own (the fit, not the imports). The cost of a first run is first minus second. Jobs:
``fit_lean:<set>`` (the main job on a benchmark set, test part given), ``bsgd:<set>``
(``BSGDClassifier(budget=500)`` with the set's C and gamma), ``svc:<set>`` (exact ``SVC``).
JSON to benchmarks/results/first-run-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import finish_run, machine_info

JOB = r"""
import sys, time, warnings
warnings.simplefilter("ignore")
from leansvm import datasets
kind, name = sys.argv[1].split(":")
data = datasets.load(name)
t0 = time.perf_counter()
if kind == "fit_lean":
    from leansvm.job.classification import fit_lean_classification as fit_lean
    fit_lean(data.X_train, data.y_train, X_test=data.X_test, y_test=data.y_test, progress=False)
elif kind == "bsgd":
    from leansvm import BSGDClassifier
    BSGDClassifier(budget=500, C=data.C, gamma=data.gamma, random_state=0).fit(data.X_train, data.y_train)
elif kind == "svc":
    from leansvm import SVC
    SVC(C=data.C, gamma=data.gamma, random_state=0).fit(data.X_train, data.y_train)
else:
    raise SystemExit(f"unknown job kind {kind!r}")
print(time.perf_counter() - t0)
"""


def _seconds(cmd, env) -> float:
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def run(job: str) -> list[dict]:
    rows = []
    for order in ("cold", "precompiled"):
        with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
            env = {**os.environ, "NUMBA_CACHE_DIR": cache}
            precompile_s = None
            if order == "precompiled":
                t0 = time.perf_counter()
                subprocess.run([sys.executable, "-m", "leansvm.precompile"], env=env, check=True,
                               capture_output=True)
                precompile_s = time.perf_counter() - t0
            first = _seconds([sys.executable, "-c", JOB, job], env)
            second = _seconds([sys.executable, "-c", JOB, job], env)
        rows.append({"job": job, "order": order, "precompile_s": precompile_s, "first_s": first,
                     "second_s": second, "extra_s": first - second})
        print(rows[-1], flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", nargs="+", default=["fit_lean:banana"])
    args = parser.parse_args()
    rows = [r for job in args.jobs for r in run(job)]
    columns = [("job", "job", "s"), ("order", "cache", "s"), ("precompile_s", "precompile s", ".1f"),
               ("first_s", "first process s", ".2f"), ("second_s", "second process s", ".2f"),
               ("extra_s", "first - second s", ".2f")]
    finish_run(rows, columns, "first-run")
    print(machine_info())


if __name__ == "__main__":
    main()
