"""Can any choice of *which* vectors to merge save multi-merge's accuracy? A merge oracle.

The goal "M in {3, 4, 5} no less accurate than M = 2 by more than 0.5
points at every budget" fails on synth-200k at 1-5 % budgets (docs/methods/bsgd.md). Multi-merge replaces M vectors by one point whenever the budget is
exceeded. The library picks them as the paper does: the first is the smallest
|alpha|, the partners the best by weight degradation (``cascade='greedy'``:
from a pool of 10(M-1) candidates against the moving merged point z).

The *oracle* drops both limits. At every maintenance step it tries every
vector of the budget as the first one, builds the greedy cascade over every
candidate (pool = the whole budget), computes the exact M-point weight
degradation ||sum_q a_q phi(x_q) - a_z phi(z)||^2 of that cascade (a_z the
optimal coefficient at z), and merges the set with the smallest one:
O(M B^2 d) per step instead of O(B d), so it is a bound on what a better
partner rule could buy (minimal degradation per step, the paper's own
criterion), not a usable method.

The oracle is not in the library: this script copies ``src/leansvm`` to a
temporary folder, inserts :data:`ORACLE_SOURCE` into the copy's
``budget/bsgd.py`` (each edit checks its anchor) and runs the copy in a
subprocess; the library itself runs in another subprocess, same seeds (same
random order), one epoch, lookup merges, ``cascade='greedy'``.

    python benchmarks/budget/bench_bsgd_oracle.py --dataset synth-200k --budget 519 --merges 3,5 --seeds 0,1

Writes ``benchmarks/results/bsgd-oracle-<dataset>-<budget>-M<merges>-seeds<seeds>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src" / "leansvm"

ORACLE_SOURCE = '''
@njit(cache=True)
def _oracle_first(SV, sv_sq, alpha, n_sv, m, gamma, solver, table, iterations, same_sign, buf_lnk, buf_deg):
    """ORACLE (benchmarks/budget/bench_bsgd_oracle.py, not the library): the first vector whose greedy
    cascade over every candidate has the smallest exact M-point weight degradation."""
    best_r, best = 0, np.inf
    d = SV.shape[1]
    for r0 in range(n_sv):
        ar = alpha[r0]
        pair_degradations(SV, sv_sq, alpha, n_sv, r0, same_sign, m, solver, gamma, table, iterations,
                          buf_lnk, buf_deg)
        ranked = np.argsort(buf_deg[:n_sv], kind="mergesort")    # O(B log B); ties: lower index
        n_cand = n_sv - 1
        while n_cand > 0 and not np.isfinite(buf_deg[ranked[n_cand - 1]]):
            n_cand -= 1
        if n_cand < m - 1:
            continue
        partners = ranked[: m - 1].copy()
        _greedy_partners(SV, sv_sq, alpha, r0, ranked[:n_cand], buf_lnk, partners, gamma, solver,
                         table, iterations)
        members = np.empty(m, dtype=np.int64)
        members[0] = r0
        members[1:] = partners
        z = SV[r0].copy()
        az = ar
        for q in range(1, m):
            jq = members[q]
            zsq = (z * z).sum()
            lnk = ln_kappa(SV, jq, z, zsq, sv_sq[jq], gamma)
            h = _pair_h(az, alpha[jq], lnk, solver, table, iterations)
            az = merge_alpha(h, az, alpha[jq], lnk)
            z = h * z + (1.0 - h) * SV[jq]
        zsq = (z * z).sum()
        g = 0.0
        kk = 0.0
        for q in range(m):
            iq = members[q]
            g += alpha[iq] * np.exp(-gamma * _sq_dist(SV, iq, z, zsq, sv_sq[iq]))
            for p in range(m):
                ip = members[p]
                d2 = 0.0
                for c in range(d):
                    diff = SV[iq, c] - SV[ip, c]
                    d2 += diff * diff
                kk += alpha[iq] * alpha[ip] * np.exp(-gamma * d2)
        deg = kk - g * g
        if deg < best:
            best, best_r = deg, r0
    return best_r

'''

#: (anchor in budget/bsgd.py, replacement): the oracle's edits of the copy
EDITS = [
    ("GREEDY_POOL = 10\n", "GREEDY_POOL = 1_000_000   # oracle: every candidate\n"),
    ("    r = _smallest(alpha, n_sv)\n    stats[ST_MAINT] += 1\n",
     "    if maintenance == 2 and n_merge > 2 and greedy and solver != 2:\n"
     "        r = _oracle_first(SV, sv_sq, alpha, n_sv, min(n_merge, n_sv), gamma, solver, table,\n"
     "                          iterations, same_sign, buf_lnk, buf_deg)\n"
     "    else:\n"
     "        r = _smallest(alpha, n_sv)\n"
     "    stats[ST_MAINT] += 1\n"),
    ("\n@njit(cache=True)\ndef _greedy_partners(", ORACLE_SOURCE + "\n@njit(cache=True)\ndef _greedy_partners("),
]


def oracle_copy(root: Path) -> Path:
    """A copy of the package with the oracle inserted; returns the folder to put on sys.path."""
    pkg = root / "leansvm"
    shutil.copytree(SRC, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    path = pkg / "budget" / "bsgd.py"
    text = path.read_text()
    for anchor, replacement in EDITS:
        if text.count(anchor) != 1:
            raise SystemExit(f"oracle edit: anchor {anchor!r} found {text.count(anchor)} times in budget/bsgd.py")
        text = text.replace(anchor, replacement)
    path.write_text(text)
    return root


def worker(args) -> None:
    """Run the fits in this process (the library or the oracle copy, whichever is on sys.path)."""
    import numpy as np

    from leansvm import BSGDClassifier, datasets
    ds = datasets.load(args.dataset)
    for seed in args.seeds:
        for M in args.merges:
            clf = BSGDClassifier(budget=args.budget, C=ds.C, gamma=ds.gamma, n_merge=M, merge_solver="lookup",
                                 cascade="greedy", random_state=seed)
            t0, c0 = time.perf_counter(), time.process_time()
            clf.fit(ds.X_train, ds.y_train)
            st = clf.fit_stats_
            print(json.dumps({"seed": seed, "M": M, "acc": float(np.mean(clf.predict(ds.X_test) == ds.y_test)),
                              "fit_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
                              "n_maintenance": st["n_maintenance"], "degradation_total": st["degradation_total"],
                              "unmerged_fraction": st["unmerged_fraction"], "merge_mass_kept": st["merge_mass_kept"],
                              "load1": os.getloadavg()[0]}), flush=True)


def run(variant: str, pythonpath: Path, args) -> list[dict]:
    merges = args.merges if variant == "oracle" else sorted({2, *args.merges})
    cmd = [sys.executable, __file__, "--worker", "--dataset", args.dataset, "--budget", str(args.budget),
           "--merges", ",".join(map(str, merges)), "--seeds", ",".join(map(str, args.seeds))]
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    rows = []
    with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True) as proc:
        for line in proc.stdout:
            row = dict(json.loads(line), variant=variant)
            print(f"{variant:8s} seed {row['seed']} M={row['M']}: acc {row['acc']:.4f}  cpu {row['cpu_s']:.1f} s  "
                  f"unmerged {row['unmerged_fraction']:.2f}  mass kept {row['merge_mass_kept']:.2f}", flush=True)
            rows.append(row)
    if proc.returncode:
        raise SystemExit(f"{variant} worker failed ({proc.returncode})")
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", default="synth-200k")
    p.add_argument("--budget", type=int, default=519)
    p.add_argument("--merges", type=lambda s: [int(v) for v in s.split(",")], default=[3, 5])
    p.add_argument("--seeds", type=lambda s: [int(v) for v in s.split(",")], default=[0, 1])
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args)
    sys.path.insert(0, str(HERE.parent))  # benchmarks/: common.py
    from common import RESULTS_DIR, machine_info, write_json_atomic
    rows = run("library", HERE.parents[1] / "src", args)
    with tempfile.TemporaryDirectory(prefix="leansvm-oracle-") as tmp:
        rows += run("oracle", oracle_copy(Path(tmp)), args)
    base = {r["seed"]: r["acc"] for r in rows if r["M"] == 2}
    print("\naccuracy minus M=2 (points), mean over seeds:")
    summary = {}
    for variant in ("library", "oracle"):
        for M in args.merges:
            diffs = [100 * (r["acc"] - base[r["seed"]]) for r in rows if r["variant"] == variant and r["M"] == M]
            summary[f"{variant} M={M}"] = diffs
            print(f"  {variant:8s} M={M}: {sum(diffs) / len(diffs):+.2f}  (per seed {', '.join(f'{d:+.2f}' for d in diffs)})")
    write_json_atomic(RESULTS_DIR / (f"bsgd-oracle-{args.dataset}-{args.budget}-M{''.join(map(str, args.merges))}"
                      f"-seeds{''.join(map(str, args.seeds))}.json"),
                      {"benchmark": "bsgd merge oracle", "command": " ".join(sys.argv), "machine": machine_info(),
                       "rows": rows, "minus_m2_points": summary})


if __name__ == "__main__":
    main()
