"""Peak memory of the exact solver: leansvm.SVC(cache_size=...) on synth-N, side by side with LIBSVM.

Each fit runs in its own fresh Python process, so the process's peak resident
set size (``ru_maxrss``) is the fit's peak (data loading included; the RSS
after loading the data is reported too). Goal: synth-200k with
``cache_size=500`` stays below 2 GB; an n x n float64 kernel would be 320 GB.

    python benchmarks/exact/bench_memory.py --n 200k --cache-size 500            # leansvm only
    python benchmarks/exact/bench_memory.py --n 20k --cache-size 500 --peer      # and LIBSVM (sklearn SVC)

A child that runs past ``--max-seconds`` is stopped; its last progress record
(peak RSS so far, written every 5 s) is kept and marked ``finished: false``.
Prints a table and writes JSON to ``benchmarks/results/memory-<time>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmarks/: common.py


def _rss_mb() -> float:
    """Current resident set size of this process, MB (Linux /proc)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # Linux: KB


def child(args) -> None:
    """Load synth-N, fit one solver, write the record to args.out (and progress while fitting)."""
    from threadpoolctl import threadpool_limits

    from leansvm import datasets

    ds = datasets.load(f"synth-{args.n}")
    record = {"solver": args.child, "n": int(ds.X_train.shape[0]), "d": int(ds.X_train.shape[1]),
              "cache_size_mb": args.cache_size, "C": ds.C, "gamma": ds.gamma,
              "rss_after_data_mb": _rss_mb(), "finished": False}
    start = time.perf_counter()

    def progress():
        while True:
            record.update(peak_rss_mb=_peak_mb(), seconds=time.perf_counter() - start)
            _write(args.out, record)
            time.sleep(5)

    threading.Thread(target=progress, daemon=True).start()
    with threadpool_limits(args.threads):
        if args.child == "leansvm":
            from leansvm import SVC
            model = SVC(C=ds.C, gamma=ds.gamma, cache_size=args.cache_size, random_state=0)
        else:
            from sklearn.svm import SVC as LibSVC
            model = LibSVC(C=ds.C, gamma=ds.gamma, cache_size=args.cache_size)
        model.fit(ds.X_train, ds.y_train)
        fit_s = time.perf_counter() - start
        accuracy = float(model.score(ds.X_test, ds.y_test))
    record.update(finished=True, seconds=fit_s, peak_rss_mb=_peak_mb(), accuracy=accuracy,
                  n_support=int(sum(model.n_support_)),
                  kernel_matrix_mb=record["n"] ** 2 * 8 / 2**20)
    _write(args.out, record)


def _write(path, record):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(record, f)
    os.replace(tmp, path)


def run_child(solver, args) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "record.json")
        cmd = [sys.executable, __file__, "--child", solver, "--n", args.n, "--cache-size", str(args.cache_size),
               "--threads", str(args.threads), "--out", out]
        proc = subprocess.Popen(cmd)
        try:
            proc.wait(timeout=args.max_seconds)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        try:
            with open(out) as f:
                return json.load(f)
        except FileNotFoundError:
            return {"solver": solver, "finished": False, "error": f"exit status {proc.returncode}"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="200k", help="synth-N training size (e.g. 20k, 200k)")
    parser.add_argument("--cache-size", type=float, default=500.0, help="kernel cache, MB (500)")
    parser.add_argument("--peer", action="store_true", help="also fit LIBSVM (scikit-learn SVC)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads per fit (1)")
    parser.add_argument("--max-seconds", type=float, default=3600.0, help="stop a fit after this long")
    parser.add_argument("--child", choices=("leansvm", "libsvm"), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return 0

    from common import RESULTS_DIR  # noqa: E402  (benchmarks/common.py)
    from leansvm.io import atomic_write

    records = [run_child("leansvm", args)] + ([run_child("libsvm", args)] if args.peer else [])
    print(f"synth-{args.n}, cache_size = {args.cache_size:g} MB, {args.threads} thread(s); "
          "shared machine, loaded by other jobs (times are indicative)")
    print(f"{'solver':8s} {'finished':>8s} {'seconds':>9s} {'peak RSS MB':>12s} {'RSS data MB':>12s} "
          f"{'SVs':>7s} {'accuracy':>9s}")
    for r in records:
        print(f"{r['solver']:8s} {str(r.get('finished')):>8s} {r.get('seconds', float('nan')):9.1f} "
              f"{r.get('peak_rss_mb', float('nan')):12.1f} {r.get('rss_after_data_mb', float('nan')):12.1f} "
              f"{r.get('n_support', -1):7d} {r.get('accuracy', float('nan')):9.4f}")
    if len(records) == 2 and all(r.get("finished") for r in records):
        print(f"peak RSS ratio leansvm / LIBSVM: {records[0]['peak_rss_mb'] / records[1]['peak_rss_mb']:.2f}; "
              f"time ratio: {records[0]['seconds'] / records[1]['seconds']:.2f}")
    RESULTS_DIR.mkdir(exist_ok=True)
    path = RESULTS_DIR / f"memory-{time.strftime('%Y%m%d-%H%M%S')}.json"
    with atomic_write(path, "w") as f:
        json.dump({"n": args.n, "cache_size_mb": args.cache_size, "threads": args.threads,
                   "records": records}, f, indent=1)
    print(f"written {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
