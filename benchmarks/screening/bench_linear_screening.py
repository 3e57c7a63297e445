"""Linear SVM at large scale in the primal: safe screening (w explicit, sparse X) vs LinearSVC.

Two parts (``--parts``), on a9a (../shared/data) and a synthetic sparse set
``synth-sparse-N`` (default N = 1,000,000; text-like: 14 draws per row from a
Zipf-like feature popularity over 256 binary features (a9a: 123, ~14 per row), labels from a fixed
sparse linear rule with 5 % flipped):

* ``single`` (the paper's Table III): the solution at C is wanted and the
  optimum at C_ref = ratio * C is known (computed first, not timed against
  anyone). Columns: LinearSVC on all samples (the peer); leansvm's dual CD on
  all samples warm-started from the reference (no screening); IT rule + CD on
  the reduced problem (R dropped, L held at C); IT rule + LinearSVC on the rows
  not in R.
* ``path``: a log-spaced C grid: ``linear_path`` with IT screening + warm
  start, the same path unscreened (warm start only), and LinearSVC fitted cold
  at every C.

The problem is liblinear's (``LinearSVC(loss='hinge', dual=True,
intercept_scaling=1)``: the bias is a regularised constant feature, the
paper's eq. 1); every method stops at the same rule, max PG - min PG <= tol.
Objectives are reported relative to the smallest one found at that C.

    python benchmarks/screening/bench_linear_screening.py --datasets a9a synth-sparse --n-synth 1000000

Writes ``benchmarks/results/linear-screening-<time>.json``.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import RESULTS_DIR, format_table, machine_info, write_json_atomic  # noqa: E402

from leansvm.paths.linear_screening import (fit_liblinear, linear_path, linear_reference, objective,  # noqa: E402
                                              screened_solve, solve_linear_cd)


def synth_sparse(n, d=256, draws=14, seed=0):
    """Text-like sparse binary problem (module docstring); n rows, CSR float64, the same rule for any seed."""
    rng = np.random.default_rng(seed)
    pop = 1.0 / (np.arange(d) + 10.0)
    pop /= pop.sum()
    cols = rng.choice(d, size=n * draws, p=pop).astype(np.int32)
    X = sp.csr_matrix((np.ones(n * draws), cols, np.arange(0, n * draws + 1, draws, dtype=np.int64)), shape=(n, d))
    X.sum_duplicates()
    X.data = np.minimum(X.data, 1.0)                     # binary features (as a9a, url)
    rule = np.random.default_rng(12345)
    w_true = rule.normal(size=d) * (rule.random(d) < 0.2)
    score = np.asarray(X @ w_true).ravel()
    y = np.where(score > 0, 1.0, -1.0)
    flip = rng.random(n) < 0.05
    y[flip] = -y[flip]
    return X, y


def load(name, n_synth):
    if name == "a9a":
        from leansvm import datasets
        ds = datasets.load("a9a")
        return ds.X_train, np.where(np.asarray(ds.y_train) > 0, 1.0, -1.0)
    if name == "synth-sparse":
        return synth_sparse(n_synth)
    raise ValueError(f"unknown dataset {name!r}")


def _cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(fn, *args, **kwargs):
    t0, c0 = time.perf_counter(), _cpu()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0, _cpu() - c0


def single(name, X, y, Cs, ratio, tol, max_iter):
    rows = []
    for C in Cs:
        C_ref = ratio * C
        ref_sol = solve_linear_cd(X, y, C_ref, tol=tol, max_iter=max_iter)
        (w_p, b_p, _), peer_s, peer_cpu = timed(fit_liblinear, X, y, C, tol=tol, max_iter=max_iter)
        warm = np.where(ref_sol.alpha >= C_ref, C, ref_sol.alpha)
        full, full_s, full_cpu = timed(solve_linear_cd, X, y, C, tol=tol, alpha_init=warm, max_iter=max_iter)
        ref, ref_s, _ = timed(linear_reference, X, y, ref_sol, C_ref)
        cd, cd_s, cd_cpu = timed(screened_solve, X, y, C, ref, alpha_init=warm, tol=tol, max_iter=max_iter)
        ll, ll_s, ll_cpu = timed(screened_solve, X, y, C, ref, solver="liblinear", tol=tol, max_iter=max_iter)
        objs = {"liblinear_all": objective(X, y, w_p, b_p, C), "cd_all_warm": objective(X, y, full.w, full.intercept, C),
                "it_cd": objective(X, y, cd[0], cd[1], C), "it_liblinear": objective(X, y, ll[0], ll[1], C)}
        best = min(objs.values())
        non_sv = int(np.count_nonzero((full.alpha <= 0) | (full.alpha >= C)))
        row = {"dataset": name, "n": y.size, "C": C, "C_ref": C_ref, "liblinear_all_s": peer_s,
               "liblinear_all_cpu": peer_cpu, "cd_all_warm_s": full_s, "cd_all_warm_cpu": full_cpu,
               "reference_products_s": ref_s, "it_cd_s": ref_s + cd_s, "it_cd_cpu": cd_cpu,
               "it_liblinear_s": ref_s + ll_s, "it_liblinear_cpu": ll_cpu,
               "rule_s": cd[5], "n_R": int(cd[3].sum()), "n_L": int(cd[4].sum()),
               "rate": int(cd[3].sum() + cd[4].sum()) / max(non_sv, 1), "gap_ref": ref.gap,
               **{f"obj_rel_{k}": (v - best) / abs(best) for k, v in objs.items()},
               "load": os.getloadavg()[0]}
        row["best_ours_s"] = min(row["it_cd_s"], row["it_liblinear_s"])
        row["speedup"] = peer_s / row["best_ours_s"]
        rows.append(row)
        print(f"  {name} C={C:g}: LinearSVC {peer_s:.2f} s, CD warm {full_s:.2f} s, IT+CD {row['it_cd_s']:.2f} s, "
              f"IT+LinearSVC {row['it_liblinear_s']:.2f} s, rate {row['rate']:.3f}", flush=True)
    return rows


def path(name, X, y, Cs, tol, max_iter):
    rec = {"dataset": name, "n": y.size, "Cs": list(map(float, Cs)), "load_before": os.getloadavg()[0]}
    scr, rec["screened_s"], rec["screened_cpu"] = timed(linear_path, X, y, Cs, screening="it", tol=tol,
                                                        max_iter=max_iter)
    uns, rec["unscreened_s"], rec["unscreened_cpu"] = timed(linear_path, X, y, Cs, screening=None, tol=tol,
                                                            max_iter=max_iter)
    peer, rec["liblinear_s"], rec["liblinear_cpu"] = timed(
        lambda: [fit_liblinear(X, y, C, tol=tol, max_iter=max_iter) for C in Cs])
    rel = []
    for p, q, (w, b, _) in zip(scr, uns, peer):
        o = [objective(X, y, p.solution.w, p.solution.intercept, p.C),
             objective(X, y, q.solution.w, q.solution.intercept, q.C), objective(X, y, w, b, p.C)]
        rel.append([(v - min(o)) / abs(min(o)) for v in o])
    rec.update(rate=[p.n_screened / max(p.n_non_sv, 1) for p in scr],
               screened_solve_s=[p.solve_seconds for p in scr], rule_s=[p.rule_seconds for p in scr],
               unscreened_solve_s=[q.solve_seconds for q in uns],
               liblinear_fit_s=[t for _, _, t in peer], obj_rel=rel,
               epochs_screened=[p.solution.n_iter for p in scr], epochs_unscreened=[q.solution.n_iter for q in uns],
               load_after=os.getloadavg()[0])
    print(f"  {name} path: screened {rec['screened_s']:.1f} s, unscreened {rec['unscreened_s']:.1f} s, "
          f"LinearSVC grid {rec['liblinear_s']:.1f} s", flush=True)
    return rec


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", default=["single", "path"], choices=["single", "path"])
    parser.add_argument("--datasets", nargs="+", default=["a9a", "synth-sparse"])
    parser.add_argument("--n-synth", type=int, default=1_000_000)
    parser.add_argument("--single-Cs", type=float, nargs="+", default=[0.1, 1.0])
    parser.add_argument("--ratio", type=float, default=0.9, help="C_ref / C of the single part")
    parser.add_argument("--path-Cs", type=float, nargs=3, default=[-2, 0, 10], metavar=("LOG_MIN", "LOG_MAX", "N"))
    parser.add_argument("--tol", type=float, default=1e-2, help="max PG - min PG, every method")
    parser.add_argument("--max-iter", type=int, default=1000, help="epochs, every method (LinearSVC's default)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    payload = {"machine": machine_info(), "args": vars(args)}
    for name in args.datasets:
        (X, y), load_s, _ = timed(load, name, args.n_synth)
        print(f"{name}: {X.shape[0]} x {X.shape[1]}, nnz {X.nnz}, loaded in {load_s:.1f} s, "
              f"max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GB", flush=True)
        solve_linear_cd(X[:100], y[:100], 1.0, tol=0.1)           # compile before timing
        if "single" in args.parts:
            payload.setdefault("single", []).extend(single(name, X, y, args.single_Cs, args.ratio, args.tol,
                                                           args.max_iter))
        if "path" in args.parts:
            lo, hi, k = args.path_Cs
            payload.setdefault("path", []).append(path(name, X, y, np.logspace(lo, hi, int(k)), args.tol,
                                                       args.max_iter))
    payload["max_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    if "single" in payload:
        print(format_table(payload["single"], [
            ("dataset", "dataset", "s"), ("C", "C", "g"), ("liblinear_all_s", "LinearSVC all s", ".2f"),
            ("cd_all_warm_s", "CD all warm s", ".2f"), ("it_cd_s", "IT+CD s", ".2f"),
            ("it_liblinear_s", "IT+LinearSVC s", ".2f"), ("speedup", "LinearSVC/best", ".2f"),
            ("rate", "rate", ".3f"), ("obj_rel_it_cd", "obj rel IT+CD", ".1e"),
            ("obj_rel_liblinear_all", "obj rel LinearSVC", ".1e"), ("load", "load", ".1f")]))
    if "path" in payload:
        rows = [{**r, "vs_unscr": r["unscreened_s"] / r["screened_s"], "vs_ll": r["liblinear_s"] / r["screened_s"],
                 "mean_rate": float(np.mean(r["rate"][1:])), "max_rel": float(np.max([o[0] for o in r["obj_rel"]])),
                 "load": f"{r['load_before']:.1f}/{r['load_after']:.1f}"} for r in payload["path"]]
        print(format_table(rows, [
            ("dataset", "dataset", "s"), ("screened_s", "screened s", ".1f"), ("screened_cpu", "cpu", ".1f"),
            ("unscreened_s", "unscreened s", ".1f"), ("liblinear_s", "LinearSVC grid s", ".1f"),
            ("liblinear_cpu", "cpu", ".1f"), ("vs_unscr", "unscr/scr", ".2f"), ("vs_ll", "LinearSVC/scr", ".2f"),
            ("mean_rate", "mean rate", ".3f"), ("max_rel", "max obj rel (scr)", ".1e"), ("load", "load", "s")]))
    print(f"max RSS {payload['max_rss_gb']:.2f} GB")
    out = RESULTS_DIR / f"linear-screening-{time.strftime('%Y%m%d-%H%M%S')}.json"
    write_json_atomic(out, payload)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
