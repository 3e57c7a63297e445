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
   Then the number of machine-code files the jobs added to the installed package and the user's
   caches (0: nothing compiled, nothing copied);
4. the same in the other settings users have: ``NUMBA_CACHE_DIR`` an empty folder (containers, CI
   runners); a package and home the user cannot write (the jobs run as ``nobody`` where the
   benchmark runs as root); another CPU model of the platform (the run-time side told it is a
   haswell: AVX2, no AVX-512); and ``compiled on first use``, a CPU below every shipped level
   (told: core2), what every first run paid before the package shipped its code.

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


def _timed(cmd, env, cwd=None, own_clock=False, user=None) -> float:
    """Seconds of a command: the process's wall time, or (own_clock) the last number it prints;
    ``user``: the uid to run it as (a user to whom the package and home are read-only)."""
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, user=user)
    seconds = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed:\n{out.stderr[-3000:]}")
    return float(out.stdout.strip().splitlines()[-1]) if own_clock else seconds


def _machine_code_files(venv: Path, tmp: Path) -> int:
    """numba data files in the installed package and in the run's folder (home, NUMBA_CACHE_DIR)."""
    return sum(1 for _ in venv.glob("lib/python*/site-packages/leansvm/**/*.nbc")) + \
        sum(1 for _ in (tmp / "home").rglob("*.nbc")) + sum(1 for _ in tmp.glob("numba-cache-*/**/*.nbc"))


#: what haswell (AVX2, no AVX-512) reports, and a core2 (SSE3, below every shipped level)
HASWELL = "+avx,+avx2,+bmi,+bmi2,+cx16,+f16c,+fma,+lzcnt,+movbe,+popcnt,+sahf,+sse3,+sse4.1,+sse4.2,+ssse3,+xsave"
CORE2 = "+cx16,+sse3,+ssse3"


def _runs_as_nobody(python: Path) -> bool:
    """Whether 'nobody' can start the environment's Python (not where it links into /root)."""
    try:
        return subprocess.run([python, "-c", "pass"], capture_output=True, user=65534).returncode == 0
    except OSError:                       # the interpreter itself cannot be opened
        return False


def base_python(requested: str | None) -> str:
    """The interpreter the new environment is made from: ``requested``, else this one; run as root, where
    'nobody' cannot start this one (a Python installed under /root), the system's Python of the same
    version where there is one, so that the read-only setting can run as 'nobody'."""
    if requested:
        return requested
    if os.getuid() == 0 and not _runs_as_nobody(Path(sys.executable)):
        system = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
        if system.exists() and _runs_as_nobody(system):
            return str(system)
    return sys.executable


def _variants(env: dict, tmp: Path, skip_compiled: bool, python: Path):
    """(name, environment of a job, uid to run as) of each setting a user's first run meets."""
    cache = lambda name: str(tmp / f"numba-cache-{name}")   # noqa: E731
    variants = [("default settings", lambda name: env, None),
                ("NUMBA_CACHE_DIR an empty folder", lambda name: {**env, "NUMBA_CACHE_DIR": cache(name)}, None)]
    (tmp / "out").mkdir(exist_ok=True)      # where the jobs write their models, whoever runs them
    os.chmod(tmp / "out", 0o777)
    if os.getuid() == 0:                    # root writes everywhere: the jobs run as 'nobody' instead
        os.chmod(tmp, 0o755)
    if os.getuid() == 0 and _runs_as_nobody(python):
        variants.append(("read-only package and home (as nobody)", lambda name: env, 65534))
    variants.append(("another CPU model (told: haswell)",
                     lambda name: {**env, "NUMBA_CPU_NAME": "haswell", "NUMBA_CPU_FEATURES": HASWELL,
                                   "NUMBA_CACHE_DIR": cache(f"haswell-{name}")}, None))
    if not skip_compiled:
        variants.append(("compiled on first use (told: core2, below every level)",
                         lambda name: {**env, "NUMBA_CPU_NAME": "core2", "NUMBA_CPU_FEATURES": CORE2,
                                       "NUMBA_CACHE_DIR": cache(f"core2-{name}")}, None))
    return variants


def _jobs(python: Path, workdir: Path):
    leansvm = python.parent / "leansvm"
    return [("svc-1000", [python, "-c", SVC_1000], False),
            ("fit_lean-banana", [python, "-c", FIT_LEAN_BANANA], True),
            ("cli-banana", [leansvm, "fit", "banana", workdir / "out" / "banana.npz"], False)]


def run(skip_compiled: bool, interpreter: str) -> list[dict]:
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
        subprocess.run([interpreter, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"], env=env, check=True)
        seconds = _timed([python, "-m", "pip", "install", "--quiet", f"{ROOT}[{EXTRAS}]"], env, cwd=tmp)
        version = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                                 capture_output=True, text=True).stdout.strip()
        rows.append({"step": "install", "what": f'pip install "<clone>[{EXTRAS}]" into a new venv', "seconds": seconds,
                     "python": f"{interpreter} ({version})"})
        print(rows[-1], flush=True)
        wheels = tmp / "wheels"
        seconds = _timed([python, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", wheels, ROOT], env, cwd=tmp)
        wheel = next(wheels.glob("leansvm-*.whl"))
        rows.append({"step": "wheel", "what": f"pip wheel --no-deps (the build): {wheel.name}", "seconds": seconds})
        seconds = _timed([python, "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", wheel], env)
        rows.append({"step": "wheel", "what": "pip install --no-deps --force-reinstall of that wheel",
                     "seconds": seconds})
        print(rows[-2:], flush=True)
        for variant, job_env, user in _variants(env, tmp, skip_compiled, python):
            before = _machine_code_files(venv, tmp)
            for name, cmd, own_clock in _jobs(python, tmp):
                first = _timed(cmd, job_env(name), cwd=tmp, own_clock=own_clock, user=user)
                second = _timed(cmd, job_env(name), cwd=tmp, own_clock=own_clock, user=user)
                rows.append({"step": "job", "what": name, "code": variant, "first_s": first, "second_s": second,
                             "extra_s": first - second})
                print(rows[-1], flush=True)
            rows.append({"step": "compiled by the jobs", "code": variant, "seconds": None,
                         "what": "machine-code files the jobs added to the package and the user's caches",
                         "files": _machine_code_files(venv, tmp) - before})
            print(rows[-1], flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-compiled", action="store_true",
                        help="leave out the runs that compile (a CPU below every shipped level, about 5 minutes)")
    parser.add_argument("--python", help="the interpreter the new environment is made from (default: this one, "
                        "or, run as root, the system's Python of the same version that 'nobody' can start)")
    args = parser.parse_args()
    interpreter = base_python(args.python)
    print(f"new environments from {interpreter}", flush=True)
    rows = run(args.skip_compiled, interpreter)
    columns = [("step", "step", "s"), ("what", "what", "s"), ("code", "compiled code", "s"),
               ("seconds", "s", ".1f"), ("first_s", "first process s", ".2f"),
               ("second_s", "second process s", ".2f"), ("extra_s", "first - second s", ".2f")]
    finish_run(rows, columns, "first-run")
    print(machine_info())


if __name__ == "__main__":
    main()
