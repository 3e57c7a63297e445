"""The first run after an install, as a new user meets it: a fresh virtual environment, no numba cache.

    python benchmarks/exact/bench_first_run.py                 # install this clone, then the jobs
    python benchmarks/exact/bench_first_run.py --skip-compiled # leave out the runs that compile

Every step is timed in new processes, with HOME an empty folder (numba's user cache is in it) and
pip's download cache kept (``PIP_CACHE_DIR``), so that the registry's speed does not count:

1. ``install``: ``python -m venv``, then README's install command, ``pip install "<clone>[datasets,plot,
   dask,onnx]"`` (the build compiles the solvers into the package: ``setup.py``);
2. ``wheel``: ``pip wheel --no-deps`` of the clone (the build alone), then ``pip install --no-deps
   --force-reinstall`` of that wheel into the environment of step 1;
3. each job twice in a row, ``first`` and ``second``: ``svc-1000`` (a whole process: import leansvm,
   ``leansvm.SVC().fit`` on 1,000 x 10 rows of ``make_classification``), ``fit_lean-banana`` (the
   main job on banana, the fit alone) and ``cli-banana`` (a whole ``leansvm fit banana`` process).
   Then the number of machine-code files the jobs added to the installed package (0: nothing compiled);
4. ``compiled on first use``: the jobs again with ``NUMBA_CACHE_DIR`` an empty folder of their own,
   where numba then looks for compiled code instead of the package: what every first run paid before
   the package shipped its code.

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

ROOT = Path(__file__).resolve().parents[2]
#: README's install command's extras
EXTRAS = "datasets,plot,dask,onnx"

SVC_1000 = r"""
import time
t0 = time.perf_counter()
import leansvm
from sklearn.datasets import make_classification
X, y = make_classification(n_samples=1000, n_features=10, random_state=0)
leansvm.SVC().fit(X, y)
print(time.perf_counter() - t0)
"""

FIT_LEAN_BANANA = r"""
import time, warnings
warnings.simplefilter("ignore")
from leansvm import datasets
from leansvm.job.classification import fit_lean_classification as fit_lean
data = datasets.load("banana")
t0 = time.perf_counter()
fit_lean(data.X_train, data.y_train, X_test=data.X_test, y_test=data.y_test, progress=False)
print(time.perf_counter() - t0)
"""


def _timed(cmd, env, cwd=None, own_clock=False) -> float:
    """Seconds of a command: the process's wall time, or (own_clock) the last number it prints."""
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed:\n{out.stderr[-3000:]}")
    return float(out.stdout.strip().splitlines()[-1]) if own_clock else seconds


def _machine_code_files(venv: Path) -> int:
    return sum(1 for _ in venv.glob("lib/python*/site-packages/leansvm/**/*.nbc"))


def _jobs(python: Path, workdir: Path):
    leansvm = python.parent / "leansvm"
    return [("svc-1000", [python, "-c", SVC_1000], False),
            ("fit_lean-banana", [python, "-c", FIT_LEAN_BANANA], True),
            ("cli-banana", [leansvm, "fit", "banana", workdir / "banana.npz"], False)]


def run(skip_compiled: bool) -> list[dict]:
    rows = []
    pip_cache = subprocess.run([sys.executable, "-m", "pip", "cache", "dir"], capture_output=True,
                               text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="leansvm-first-run-") as tmp:
        tmp = Path(tmp)
        home = tmp / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
        env.update(HOME=str(home), PIP_CACHE_DIR=pip_cache, PIP_DISABLE_PIP_VERSION_CHECK="1",
                   LEANSVM_PROGRESS="0")
        env.pop("VIRTUAL_ENV", None)
        venv = tmp / "venv"
        python = venv / "bin" / "python"
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        seconds = _timed([python, "-m", "pip", "install", "--quiet", f"{ROOT}[{EXTRAS}]"], env, cwd=tmp)
        rows.append({"step": "install", "what": f'pip install "<clone>[{EXTRAS}]" into a new venv', "seconds": seconds})
        print(rows[-1], flush=True)
        wheels = tmp / "wheels"
        seconds = _timed([python, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", wheels, ROOT], env, cwd=tmp)
        wheel = next(wheels.glob("leansvm-*.whl"))
        rows.append({"step": "wheel", "what": f"pip wheel --no-deps (the build): {wheel.name}", "seconds": seconds})
        seconds = _timed([python, "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", wheel], env)
        rows.append({"step": "wheel", "what": "pip install --no-deps --force-reinstall of that wheel",
                     "seconds": seconds})
        print(rows[-2:], flush=True)
        before = _machine_code_files(venv)
        variants = [("shipped in the package", lambda name: env)]
        if not skip_compiled:
            variants.append(("compiled on first use",
                             lambda name: {**env, "NUMBA_CACHE_DIR": str(tmp / f"numba-cache-{name}")}))
        for variant, job_env in variants:
            for name, cmd, own_clock in _jobs(python, tmp):
                first = _timed(cmd, job_env(name), cwd=tmp, own_clock=own_clock)
                second = _timed(cmd, job_env(name), cwd=tmp, own_clock=own_clock)
                rows.append({"step": "job", "what": name, "code": variant, "first_s": first, "second_s": second,
                             "extra_s": first - second})
                print(rows[-1], flush=True)
            if variant == "shipped in the package":
                rows.append({"step": "compiled by the jobs", "what": "machine-code files the jobs added to the package",
                             "seconds": None, "files": _machine_code_files(venv) - before})
                print(rows[-1], flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-compiled", action="store_true",
                        help="leave out the runs with an empty NUMBA_CACHE_DIR (about 4 minutes)")
    args = parser.parse_args()
    rows = run(args.skip_compiled)
    columns = [("step", "step", "s"), ("what", "what", "s"), ("code", "compiled code", "s"),
               ("seconds", "s", ".1f"), ("first_s", "first process s", ".2f"),
               ("second_s", "second process s", ".2f"), ("extra_s", "first - second s", ".2f")]
    finish_run(rows, columns, "first-run")
    print(machine_info())


if __name__ == "__main__":
    main()
