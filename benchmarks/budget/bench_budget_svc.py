"""Budget-L1 / budget-L2 SVM (Dekel & Singer, NIPS 2006): the paper's experiment and a side-by-side run.

    python benchmarks/budget/bench_budget_svc.py heatmap            # section 5 on sklearn digits and optdigits
    python benchmarks/budget/bench_budget_svc.py heatmap --problems 5 --step 100   # quick look
    python benchmarks/budget/bench_budget_svc.py side               # magic and a9a at equal budget
    python benchmarks/budget/bench_budget_svc.py side --datasets a9a --max-train 8000   # reduced a9a
    python benchmarks/budget/bench_budget_svc.py tol --dataset magic --max-train 2000 --budget 200   # relative_tol cost

heatmap (the paper's Figure 1)
    50 random binary problems per dataset: the 10 digit classes split at random
    into two sets of five, 1000 training examples, the rest for testing; data
    scaled to average unit norm, Gaussian kernel with sigma = 1
    (k = exp(-||x - x'||^2 / (2 sigma^2)), gamma = 0.5; ``--gamma`` changes it).
    For B in {20, 40, ..., 1000}: budget-L1 with C = 10/B and budget-L2 with
    C = 10/sqrt(B), solved to tol = 1e-3; every solution pruned to its s
    largest weights, s in {20, ..., 1000}, bias refit by the KKT rule
    (``refit_bias='kkt'``; the error with the unpruned bias is recorded too).
    Reference: the standard L1-SVM (LIBSVM through scikit-learn's SVC) at
    C = 10/n (the B = n corner of the grid) and at C = 1, pruned the same
    way. Mean test error over the problems -> two heat maps per dataset
    (``benchmarks/results/budget_svm_heatmap.png``) and a table comparing,
    for each s, the L1-SVM pruned to s with budget-SVM (B = s) pruned to s.

side
    magic and a9a (``benchmarks.md`` C and gamma) at equal budget B:
    BudgetSVC (l1, l2; pruned to B) vs BSGDClassifier (when leansvm has it)
    vs Nystroem(B landmarks) + LinearSVC, with full LIBSVM as the reference:
    test accuracy, fit time, number of support vectors / landmarks.

Both write JSON to ``benchmarks/results/`` through ``io.atomic_write``.
Timings are taken on a shared machine; compare ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from datetime import datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import RESULTS_DIR, format_table, libsvm_input, machine_info, markdown_table, write_json_atomic  # noqa: E402

import leansvm  # noqa: E402
from leansvm.core.kernels import Kernel  # noqa: E402
from leansvm.budget.budget_smo import kkt_intercept, largest_weights, solve_budget_smo  # noqa: E402


# -- heat map (section 5) ------------------------------------------------------------------------
def digit_data(name):
    """All examples (X scaled to average unit norm) and digit labels 0..9."""
    if name == "digits":
        from sklearn.datasets import load_digits
        X, d = load_digits(return_X_y=True)
    else:
        from leansvm import datasets
        ds = datasets.load(name)
        X = np.vstack([ds.X_train, ds.X_test])
        d = np.concatenate([np.asarray(ds.y_train), np.asarray(ds.y_test)]).astype(int)
    X = np.asarray(X, dtype=np.float64)
    return X / np.linalg.norm(X, axis=1).mean(), d


def pruned_errors(alpha, y_tr, K_tr, K_te, y_te, b_full, s_grid, C, rho, eta):
    """Test errors of alpha pruned to each s (KKT bias refit, and with the unpruned bias)."""
    order = largest_weights(alpha, alpha.size)
    order = order[np.argsort(-alpha[order], kind="stable")]
    coef_mat = np.zeros((order.size, len(s_grid)))            # rows: the support vectors, largest first
    for k, s in enumerate(s_grid):
        coef_mat[:s, k] = alpha[order[:s]] * y_tr[order[:s]]
    F_tr, F_te = K_tr[:, order] @ coef_mat, K_te[:, order] @ coef_mat
    U = np.full(alpha.size, C)
    refit, kept = np.empty(len(s_grid)), np.empty(len(s_grid))
    for k in range(len(s_grid)):
        a = np.zeros(alpha.size)
        a[order] = np.abs(coef_mat[:, k])
        G = y_tr * F_tr[:, k] - 1.0 + eta * a
        b = kkt_intercept(a, y_tr, G, U, 0.0 if rho > 0 else 1.0)[0]
        refit[k] = np.mean(np.where(F_te[:, k] + b >= 0, 1.0, -1.0) != y_te)
        kept[k] = np.mean(np.where(F_te[:, k] + b_full >= 0, 1.0, -1.0) != y_te)
    return refit, kept


def one_problem(X, d, seed, n_train, gamma, B_grid, s_grid, tol, max_iter=-1, warm_start=True):
    """All budget solutions and pruned errors of one random 5-vs-5 problem.

    One kernel matrix per problem serves every B. With ``warm_start`` each B
    starts from the previous B's solution scaled by C_new / C_old (feasible:
    the box and the ball shrink by that factor, S = 10 is the same for every
    B), and budget-L2 from the previous ball multiplier. Early-stopped runs
    (``max_iter``) start cold, as the paper's fixed iteration count means.
    """
    from sklearn.svm import SVC as LibSVM

    rng = np.random.default_rng(seed)
    positive = rng.permutation(10)[:5]
    y = np.where(np.isin(d, positive), 1.0, -1.0)
    perm = rng.permutation(y.size)
    tr, te = perm[:n_train], perm[n_train:]
    kernel = Kernel("rbf", gamma)
    K_tr, K_te = kernel(X[tr]), kernel(X[te], X[tr])
    y_tr, y_te = y[tr], y[te]
    out = {"positive": positive.tolist()}
    for norm in ("l1", "l2"):
        err, err_kept, n_sv, full_err, secs, iters, prev = [], [], [], [], 0.0, 0, None
        for B in B_grid:
            C = 10.0 / B if norm == "l1" else 10.0 / np.sqrt(B)
            warm = {}
            if warm_start and max_iter < 0 and prev is not None:
                warm = {"alpha0": prev.alpha * (C / prev_C), "eta0": prev.stats["eta"]}
            t0 = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = solve_budget_smo(X[tr], y_tr, C, kernel, budget=B, norm=norm, tol=tol, gram=K_tr,
                                       max_iter=max_iter, **warm)
            secs += time.process_time() - t0
            iters += fit.n_iter
            prev, prev_C = fit, C
            e, ek = pruned_errors(fit.alpha, y_tr, K_tr, K_te, y_te, fit.intercept, s_grid,
                                  C if norm == "l1" else np.inf, fit.stats["rho"], fit.stats["eta"])
            err.append(e)
            err_kept.append(ek)
            n_sv.append(int(np.count_nonzero(fit.alpha)))
            full_err.append(float(np.mean(np.where(K_te @ (fit.alpha * y_tr) + fit.intercept >= 0, 1, -1) != y_te)))
        out[norm] = {"error": np.array(err), "error_unrefit_bias": np.array(err_kept), "n_sv": n_sv,
                     "unpruned_error": full_err, "solve_cpu_seconds": secs, "pair_steps": iters}
    for label, C in (("svc_C_10_over_n", 10.0 / n_train), ("svc_C_1", 1.0)):
        ref = LibSVM(C=C, kernel="precomputed", tol=tol).fit(K_tr, y_tr)
        alpha = np.zeros(n_train)
        alpha[ref.support_] = np.abs(ref.dual_coef_[0])
        e, ek = pruned_errors(alpha, y_tr, K_tr, K_te, y_te, float(ref.intercept_[0]), s_grid, C, 0.0, 0.0)
        out[label] = {"error": e, "error_unrefit_bias": ek, "n_sv": int(ref.support_.size),
                      "unpruned_error": float(1 - ref.score(K_te, y_te))}
    return out


def run_heatmap(args):
    from joblib import Parallel, delayed

    grid = list(range(args.step, args.max_budget + 1, args.step))
    stem = "budget_svm_heatmap" + (f"-{args.tag}" if args.tag else "")
    payload = {"experiment": "budget-svm heat map (Dekel & Singer 2006, section 5)", "gamma": args.gamma,
               "max_iter": args.max_iter, "warm_start": not args.cold, "grid_step": args.step,
               "problems": args.problems, "tol": args.tol, "machine": machine_info(), "datasets": {},
               "started": datetime.now().isoformat(timespec="seconds")}
    for name in args.datasets.split(","):
        X, d = digit_data(name)
        n_train = min(args.train, X.shape[0] - 100)
        B_grid = [b for b in grid if b <= n_train]
        s_grid = B_grid
        t0 = time.perf_counter()
        results = Parallel(n_jobs=args.jobs)(delayed(one_problem)(X, d, 1000 + p, n_train, args.gamma, B_grid,
                                                                   s_grid, args.tol, args.max_iter,
                                                                   not args.cold)
                                             for p in range(args.problems))
        elapsed = time.perf_counter() - t0
        summary = summarise(results, B_grid, s_grid)
        load = list(os.getloadavg())
        summary.update(n_train=n_train, n_test=X.shape[0] - n_train, seconds=elapsed, load_average_end=load)
        payload["datasets"][name] = summary
        print(f"\n{name}: {args.problems} problems, {n_train} train / {X.shape[0] - n_train} test, "
              f"{elapsed:.0f} s wall (load average now {load[0]:.1f}); SMO: budget-L1 "
              f"{summary['l1']['solve_cpu_seconds']:.0f} s CPU / {summary['l1']['pair_steps']} pair steps, "
              f"budget-L2 {summary['l2']['solve_cpu_seconds']:.0f} s CPU / {summary['l2']['pair_steps']} pair steps")
        print(claim_table(summary, args.markdown))
        print(claim_summary(summary))
        write_json_atomic(RESULTS_DIR / f"{stem}.json", payload)
    plot_heatmaps(payload, RESULTS_DIR / f"{stem}.png")
    print(f"\nwrote {RESULTS_DIR / stem}.json and .png")


def summarise(results, B_grid, s_grid):
    out = {"B_grid": B_grid, "s_grid": s_grid}
    for norm in ("l1", "l2"):
        out[norm] = {
            "mean_error": np.mean([r[norm]["error"] for r in results], axis=0),
            "mean_error_unrefit_bias": np.mean([r[norm]["error_unrefit_bias"] for r in results], axis=0),
            "mean_n_sv": np.mean([r[norm]["n_sv"] for r in results], axis=0),
            "mean_unpruned_error": np.mean([r[norm]["unpruned_error"] for r in results], axis=0),
            "solve_cpu_seconds": float(np.sum([r[norm]["solve_cpu_seconds"] for r in results])),
            "pair_steps": int(np.sum([r[norm]["pair_steps"] for r in results])),
        }
    for label in ("svc_C_10_over_n", "svc_C_1"):
        out[label] = {
            "mean_error": np.mean([r[label]["error"] for r in results], axis=0),
            "mean_error_unrefit_bias": np.mean([r[label]["error_unrefit_bias"] for r in results], axis=0),
            "mean_n_sv": float(np.mean([r[label]["n_sv"] for r in results])),
            "mean_unpruned_error": float(np.mean([r[label]["unpruned_error"] for r in results])),
        }
    return out


def claim_table(summary, markdown=False):
    """Per s: L1-SVM pruned to s vs budget-SVM with B = s pruned to s (and the best B for that s)."""
    B_grid, s_grid = summary["B_grid"], summary["s_grid"]
    rows = []
    for k, s in enumerate(s_grid):
        if s not in (20, 40, 60, 100, 200, 300, 400, 600, 800, 1000) and s != s_grid[-1]:
            continue
        row = {"s": s}
        for label, key in (("svc_C_10_over_n", "svc_n"), ("svc_C_1", "svc_1")):
            row[key] = float(summary[label]["mean_error"][k])
        for norm in ("l1", "l2"):
            err = np.asarray(summary[norm]["mean_error"])
            b_index = B_grid.index(s) if s in B_grid else None
            row[f"{norm}_B_eq_s"] = float(err[b_index, k]) if b_index is not None else None
            best = int(np.argmin(err[:, k]))
            row[f"{norm}_best"] = float(err[best, k])
            row[f"{norm}_best_B"] = B_grid[best]
        rows.append(row)
    cols = [("s", "s", "d"), ("svc_n", "L1-SVM C=10/n", ".3f"), ("svc_1", "L1-SVM C=1", ".3f"),
            ("l1_B_eq_s", "budget-L1 B=s", ".3f"), ("l1_best", "budget-L1 best B", ".3f"),
            ("l1_best_B", "at B", "d"), ("l2_B_eq_s", "budget-L2 B=s", ".3f"),
            ("l2_best", "budget-L2 best B", ".3f"), ("l2_best_B", "at B", "d")]
    head = (f"mean #SV: L1-SVM C=10/n {summary['svc_C_10_over_n']['mean_n_sv']:.0f} "
            f"(unpruned error {summary['svc_C_10_over_n']['mean_unpruned_error']:.3f}), "
            f"C=1 {summary['svc_C_1']['mean_n_sv']:.0f} "
            f"(unpruned error {summary['svc_C_1']['mean_unpruned_error']:.3f}); budget-L1 #SV at B="
            f"{B_grid[0]}/{B_grid[-1]}: {summary['l1']['mean_n_sv'][0]:.0f}/{summary['l1']['mean_n_sv'][-1]:.0f} "
            f"(unpruned error {summary['l1']['mean_unpruned_error'][0]:.3f}/"
            f"{summary['l1']['mean_unpruned_error'][-1]:.3f}); budget-L2: {summary['l2']['mean_n_sv'][0]:.0f}/"
            f"{summary['l2']['mean_n_sv'][-1]:.0f} (unpruned error {summary['l2']['mean_unpruned_error'][0]:.3f}/"
            f"{summary['l2']['mean_unpruned_error'][-1]:.3f})")
    table = markdown_table(rows, cols) if markdown else format_table(rows, cols)
    return head + "\nmean test error after pruning to s (KKT bias refit):\n" + table


def claim_summary(summary, margin=0.01):
    """The claim in numbers: diagonal wins for s below L1-SVM's #SV, and the fewest weights reaching its error.

    Reference: the L1-SVM at C = 1 (LIBSVM) with its unpruned test error e*. For
    each method, the smallest s whose (best-B) pruned error is <= e* + ``margin``.
    """
    B_grid, s_grid = summary["B_grid"], summary["s_grid"]
    ref = summary["svc_C_1"]
    ref_err, ref_sv = np.asarray(ref["mean_error"]), ref["mean_n_sv"]
    target = ref["mean_unpruned_error"] + margin

    def fewest(errors):
        ok = [s for s, e in zip(s_grid, errors) if e <= target]
        return ok[0] if ok else None

    lines = [f"L1-SVM C=1: {ref_sv:.0f} SVs, unpruned error {ref['mean_unpruned_error']:.3f}; "
             f"fewest weights reaching error <= {target:.3f}: L1-SVM C=1 pruned s = {fewest(ref_err)}, "
             f"L1-SVM C=10/n pruned s = {fewest(summary['svc_C_10_over_n']['mean_error'])}"]
    for norm in ("l1", "l2"):
        err = np.asarray(summary[norm]["mean_error"])
        below = [(k, s) for k, s in enumerate(s_grid) if s < ref_sv and s in B_grid]
        diag = np.array([err[B_grid.index(s), k] for k, s in below])
        refs = np.array([min(ref_err[k], summary["svc_C_10_over_n"]["mean_error"][k]) for k, _ in below])
        wins = [s for (_, s), d, r in zip(below, diag, refs) if d < r - margin]
        losses = [s for (_, s), d, r in zip(below, diag, refs) if d > r + margin]
        best = err.min(axis=0)[[k for k, _ in below]]
        lines.append(f"budget-{norm.upper()}: fewest weights (best B) reaching it s = {fewest(err.min(axis=0))}; "
                     f"for s < {ref_sv:.0f}, B = s pruned to s is lower than the better L1-SVM pruned to s "
                     f"by > {margin} at s = {wins}, higher by > {margin} at s = {losses}; with the best B "
                     f"lower by > {margin} at {int(np.sum(best < refs - margin))} of {len(below)} s "
                     f"(mean difference {np.mean(best - refs):+.3f})")
    return "\n".join(lines)


def report(path):
    """Print the claim tables of a heat-map JSON (no computation)."""
    payload = json.loads(Path(path).read_text())
    for name, summary in payload["datasets"].items():
        print(f"\n{name}: {payload['problems']} problems, grid step {summary['B_grid'][1] - summary['B_grid'][0]}")
        print(claim_table(summary, markdown=True))
        print(claim_summary(summary))


def plot_heatmaps(payload, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(payload["datasets"])
    fig, axes = plt.subplots(len(names), 3, figsize=(15, 4.2 * len(names)), squeeze=False)
    for row, name in enumerate(names):
        summary = payload["datasets"][name]
        B, s = summary["B_grid"], summary["s_grid"]
        for col, norm in enumerate(("l1", "l2")):
            ax = axes[row, col]
            err = np.asarray(summary[norm]["mean_error"]).T      # rows s, columns B
            im = ax.imshow(err, origin="lower", aspect="auto", cmap="gray_r", vmin=0, vmax=0.5,
                           extent=[B[0] - (B[1] - B[0]) / 2 if len(B) > 1 else 0, B[-1] + (B[1] - B[0]) / 2 if len(B) > 1 else 1,
                                   s[0] - (s[1] - s[0]) / 2 if len(s) > 1 else 0, s[-1] + (s[1] - s[0]) / 2 if len(s) > 1 else 1])
            ax.set_title(f"{name}: budget-{norm.upper()}-SVM, mean test error")
            ax.set_xlabel("B (budget)")
            ax.set_ylabel("s (weights kept)")
            fig.colorbar(im, ax=ax, label="mean test error (dark: high)")
        ax = axes[row, 2]                                        # the reference: L1-SVM pruned to s
        for label, key in (("L1-SVM C=10/n", "svc_C_10_over_n"), ("L1-SVM C=1", "svc_C_1")):
            ax.plot(s, summary[key]["mean_error"], label=f"{label} pruned to s")
        for norm in ("l1", "l2"):
            err = np.asarray(summary[norm]["mean_error"])
            diag = [err[B.index(v), k] if v in B else np.nan for k, v in enumerate(s)]
            ax.plot(s, diag, "--", label=f"budget-{norm.upper()} B=s pruned to s")
            ax.plot(s, err.min(axis=0), ":", label=f"budget-{norm.upper()} best B pruned to s")
        ax.set_ylim(0, 0.6)
        ax.set_xlabel("s (weights kept)")
        ax.set_ylabel("mean test error")
        ax.set_title(f"{name}: reference and budget-SVM")
        ax.legend(fontsize=7)
    fig.suptitle(f"Dekel & Singer section 5: {payload['problems']} random 5-vs-5 problems, gamma={payload['gamma']}")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=110)
    tmp.replace(path)
    plt.close(fig)


# -- side by side on magic and a9a ---------------------------------------------------------------------
def run_side(args):
    from sklearn.kernel_approximation import Nystroem
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import SVC as LibSVM
    from sklearn.svm import LinearSVC

    from leansvm import datasets

    bsgd = getattr(leansvm, "BSGDClassifier", None)
    payload = {"experiment": "budget methods side by side", "machine": machine_info(), "rows": [],
               "bsgd_available": bsgd is not None, "started": datetime.now().isoformat(timespec="seconds")}
    out_path = RESULTS_DIR / f"budget_svc_side-{datetime.now():%Y%m%d-%H%M%S}.json"
    for name in args.datasets.split(","):
        ds = datasets.load(name)
        if args.max_train and ds.X_train.shape[0] > args.max_train:
            ds = _subsample(ds, args.max_train)
            name = f"{name} (train subsample {args.max_train})"
        contenders = {}
        for B in [int(b) for b in args.budgets.split(",")]:
            rel = not args.absolute_tol
            for norm in ("l1", "l2"):
                contenders[f"BudgetSVC-{norm}"] = (B, lambda B=B, norm=norm: leansvm.BudgetSVC(
                    budget=B, C=ds.C, gamma=ds.gamma, norm=norm, cache_size=args.cache_size, relative_tol=rel))
            if not args.no_small_budget:
                # the heat map's lesson: a smaller budget whose unpruned solution has about s SVs, pruned to s = B
                contenders[f"BudgetSVC-l1 B={max(1, B // 5)}, s={B}"] = (B, lambda B=B: leansvm.BudgetSVC(
                    budget=max(1, B // 5), n_keep=B, C=ds.C, gamma=ds.gamma, cache_size=args.cache_size,
                    relative_tol=rel))
            if bsgd is not None:
                contenders["BSGDClassifier"] = (B, lambda B=B: bsgd(budget=B, C=ds.C, gamma=ds.gamma,
                                                                    random_state=0))
            contenders["Nystroem+LinearSVC"] = (B, lambda B=B: make_pipeline(
                Nystroem(gamma=ds.gamma, n_components=B, random_state=0), LinearSVC(C=ds.C, max_iter=5000)))
            for label, (budget, make) in contenders.items():
                payload["rows"].append(_side_row(name, label, budget, make, ds))
                print(format_table(payload["rows"][-1:], SIDE_COLS), flush=True)
                write_json_atomic(out_path, payload)
            contenders = {}
        if not args.no_libsvm:
            row = _side_row(name, "LIBSVM (full)", None, lambda: LibSVM(C=ds.C, gamma=ds.gamma, cache_size=1000), ds,
                            libsvm=True)
            payload["rows"].append(row)
            write_json_atomic(out_path, payload)
    print("\n" + (markdown_table if args.markdown else format_table)(payload["rows"], SIDE_COLS))
    write_json_atomic(out_path, payload)
    print(f"wrote {out_path}")


def run_tol(args):
    """Cost of the margin-relative stop: BudgetSVC(prune=False) with relative_tol True / False (and shrinking)."""
    from leansvm import datasets

    ds = _subsample(datasets.load(args.dataset), args.max_train)
    rows = []
    out_path = RESULTS_DIR / f"budget_svc_tol-{datetime.now():%Y%m%d-%H%M%S}.json"
    for norm in ("l1", "l2"):
        for shrinking in ([True, False] if args.compare_shrinking else [True]):
            for rel in (False, True):
                model = leansvm.BudgetSVC(budget=args.budget, C=ds.C, gamma=ds.gamma, norm=norm, prune=False,
                                          relative_tol=rel, shrinking=shrinking, cache_size=args.cache_size)
                t0, c0 = time.perf_counter(), time.process_time()
                model.fit(ds.X_train, ds.y_train)
                rows.append({"dataset": f"{args.dataset} ({ds.X_train.shape[0]} train)", "norm": norm,
                             "shrinking": shrinking, "relative_tol": rel, "pair_steps": int(model.n_iter_.sum()),
                             "fit_s": time.perf_counter() - t0, "fit_cpu_s": time.process_time() - c0,
                             "rho": float(model.sum_multiplier_[0]), "n_sv": int(model.expansion_.n_support),
                             "accuracy": float(model.score(ds.X_test, ds.y_test)),
                             "load": " ".join(open("/proc/loadavg").read().split()[:3])})
                print(format_table(rows[-1:], TOL_COLS), flush=True)
                write_json_atomic(out_path, {"experiment": "relative_tol cost", "budget": args.budget,
                                             "machine": machine_info(), "rows": rows})
    print("\n" + markdown_table(rows, TOL_COLS))
    print(f"wrote {out_path}")


TOL_COLS = [("dataset", "dataset", "s"), ("norm", "norm", "s"), ("shrinking", "shrinking", "s"),
            ("relative_tol", "relative tol", "s"), ("pair_steps", "pair steps", "d"), ("fit_s", "fit s", ".1f"),
            ("fit_cpu_s", "CPU s", ".1f"), ("rho", "rho", ".6f"), ("n_sv", "#SV", "d"),
            ("accuracy", "test acc", ".4f"), ("load", "load", "s")]


def _subsample(ds, max_train):
    """The dataset with a stratified training subsample of ``max_train`` rows (0: unchanged)."""
    if not max_train or ds.X_train.shape[0] <= max_train:
        return ds
    from dataclasses import replace

    from sklearn.model_selection import train_test_split
    keep, _ = train_test_split(np.arange(ds.X_train.shape[0]), train_size=max_train, random_state=0,
                               stratify=np.asarray(ds.y_train))
    keep = np.sort(keep)
    return replace(ds, X_train=ds.X_train[keep], y_train=np.asarray(ds.y_train)[keep])


SIDE_COLS = [("dataset", "dataset", "s"), ("method", "method", "s"), ("budget", "B", "d"),
             ("n_sv", "#SV/landmarks", "d"), ("accuracy", "test acc", ".4f"), ("fit_s", "fit s", ".1f"),
             ("fit_cpu_s", "fit CPU s", ".1f"), ("load", "load", "s"), ("note", "note", "s")]


def _side_row(name, label, budget, make, ds, libsvm=False):
    X_tr, X_te = (libsvm_input(ds.X_train), libsvm_input(ds.X_test)) if libsvm else (ds.X_train, ds.X_test)
    model = make()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0, c0 = time.perf_counter(), time.process_time()
        model.fit(X_tr, ds.y_train)
        fit_s, fit_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    acc = float(np.mean(model.predict(X_te) == ds.y_test))
    if hasattr(model, "expansion_"):
        n_sv = int(model.expansion_.n_support)
    elif hasattr(model, "support_"):
        n_sv = int(model.support_.size)
    else:
        n_sv = budget
    note = ""
    if hasattr(model, "unpruned_expansion_"):
        raw = model.unpruned_expansion_.decision_function(X_te)[:, 0]
        unpruned_acc = float(np.mean(model.classes_[(raw >= 0).astype(int)] == ds.y_test))
        note = (f"unpruned: {model.unpruned_expansion_.n_support} SV, acc {unpruned_acc:.4f}; "
                f"rho {model.sum_multiplier_[0]:.6f}, {int(model.n_iter_.sum())} pair steps, "
                f"{'relative' if model.relative_tol else 'absolute'} tol")
    conv = [str(w.message)[:60] for w in caught if issubclass(w.category, Warning)]
    return {"dataset": name, "method": label, "budget": budget, "n_sv": n_sv, "accuracy": acc, "fit_s": fit_s,
            "fit_cpu_s": fit_cpu_s, "load": " ".join(open("/proc/loadavg").read().split()[:3]),
            "note": note, "warnings": conv}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    h = sub.add_parser("heatmap", help="the paper's experiment (section 5)")
    h.add_argument("--datasets", default="digits,optdigits")
    h.add_argument("--problems", type=int, default=50)
    h.add_argument("--train", type=int, default=1000)
    h.add_argument("--step", type=int, default=20, help="grid step of B and s (20 as the paper)")
    h.add_argument("--max-budget", type=int, default=1000)
    h.add_argument("--gamma", type=float, default=0.5, help="0.5: sigma = 1 as the paper")
    h.add_argument("--tol", type=float, default=1e-3)
    h.add_argument("--jobs", type=int, default=1, help="problems solved in parallel processes")
    h.add_argument("--max-iter", type=int, default=-1,
                   help="stop SMO after this many pair steps (the paper's 'fixed number of iterations')")
    h.add_argument("--cold", action="store_true", help="no warm start from the neighbouring B")
    h.add_argument("--tag", default="", help="suffix of the output files (budget_svm_heatmap-TAG.*)")
    h.add_argument("--markdown", action="store_true")
    h.set_defaults(func=run_heatmap)
    r = sub.add_parser("replot", help="redraw budget_svm_heatmap.png from budget_svm_heatmap.json")
    r.set_defaults(func=lambda args: plot_heatmaps(json.loads((RESULTS_DIR / "budget_svm_heatmap.json").read_text()),
                                                   RESULTS_DIR / "budget_svm_heatmap.png"))
    rp = sub.add_parser("report", help="claim tables of a heat-map JSON")
    rp.add_argument("path", nargs="?", default=str(RESULTS_DIR / "budget_svm_heatmap.json"))
    rp.set_defaults(func=lambda args: report(args.path))
    s = sub.add_parser("side", help="magic and a9a at equal budget")
    s.add_argument("--datasets", default="magic,a9a")
    s.add_argument("--budgets", default="500")
    s.add_argument("--cache-size", type=float, default=1000.0)
    s.add_argument("--no-libsvm", action="store_true")
    s.add_argument("--absolute-tol", action="store_true",
                   help="BudgetSVC(relative_tol=False): LIBSVM's absolute KKT tol")
    s.add_argument("--no-small-budget", action="store_true", help="skip the B/5, s = B contender")
    s.add_argument("--max-train", type=int, default=0,
                   help="train on a stratified subsample of this many examples (0: all)")
    s.add_argument("--markdown", action="store_true")
    s.set_defaults(func=run_side)
    t = sub.add_parser("tol", help="cost of relative_tol (unpruned BudgetSVC, both tols)")
    t.add_argument("--dataset", default="magic")
    t.add_argument("--max-train", type=int, default=2000)
    t.add_argument("--budget", type=int, default=200)
    t.add_argument("--cache-size", type=float, default=1000.0)
    t.add_argument("--compare-shrinking", action="store_true", help="also without shrinking")
    t.set_defaults(func=run_tol)
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
