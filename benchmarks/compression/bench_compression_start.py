"""Where the gradient step starts: coefficients fitted to the full model's outputs, or to them clipped at the margin.

    python benchmarks/compression/bench_compression_start.py

``compress`` (margin loss, the main job's default) starts L-BFGS from the LARS selection with
(B, c) the least-squares fit to the full model's outputs F. Where C is large, |F| runs far past the
margin (checker at C = 2^20: up to 1,200) and that fit chases values the margin loss ignores; the
fit to F clipped to [-1, 1] minimises an upper bound of the margin loss instead. For each case (a
benchmark set at the (C, gamma) the main job chose on split seed 0 or 1, its training part
standardised, the exact SVC on at most 40,000 training rows, compressed on those rows with the
main job's iteration bounds) and size: the test accuracy, the final loss and the L-BFGS
iterations from each start. Writes ``benchmarks/results/compression-start-<timestamp>.json``.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import RESULTS_DIR  # noqa: E402

#: (dataset, C, gamma, sizes): the main job's (C, gamma) on split seed 0 (magic also seed 1's small C),
#: checker's from its run at 1M rows, and the sizes its size search tries near the chosen one
CASES = (("magic", 131072.0, 0.0022097, (40, 80, 160)),
         ("magic", 8.0, 0.14142, (40, 80)),
         ("page-blocks0", 2048.0, 0.14142, (10, 20, 40)),
         ("a9a", 262144.0, 2.4802e-06, (38, 76)),
         ("satimage", 4.0, 0.11111, (120, 240)),
         ("twonorm", 0.25, 0.14142, (10, 20)),
         ("banana", 0.125, 2.0, (30, 60)),
         ("checker-50k", 2.0 ** 20, 1.41421, (16, 24, 48)))
MAX_ROWS = 40000


def run_case(name, C, gamma, sizes):
    import leansvm
    from leansvm import datasets
    from leansvm.compression import cvm
    from leansvm.job.candidates import search_iterations
    from sklearn.preprocessing import StandardScaler

    ds = datasets.load(name)
    X, y = ds.X_train[:MAX_ROWS], np.asarray(ds.y_train)[:MAX_ROWS]
    scaler = StandardScaler(with_mean=not sp.issparse(X)).fit(X)
    X, Xt, yt = scaler.transform(X), scaler.transform(ds.X_test), np.asarray(ds.y_test)
    exact = leansvm.SVC(C=C, gamma=gamma, cache_size=500, random_state=0).fit(X, y)
    F = exact.decision_function(X)
    rows = []
    fit_to_outputs = cvm.refit_coefficients
    for start in ("outputs", "clipped"):
        # the clipped start is not in the library: its least-squares fit is swapped in here alone
        cvm.refit_coefficients = fit_to_outputs if start == "outputs" else \
            (lambda K, F, blocks: fit_to_outputs(K, np.clip(F, -1.0, 1.0), blocks))
        try:
            for size in sizes:
                t = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = leansvm.compress(exact, n_sv=size, X=X, y=y, max_fit_points=None, random_state=0,
                                             iteration_range=search_iterations(exact))
                stats = model.compression_
                rows.append({"dataset": name, "C": C, "gamma": gamma, "start": start, "size": size,
                             "test_acc": float(np.mean(model.predict(Xt) == yt)),
                             "loss": float(stats["loss_cvm"]), "iterations": int(stats["n_iter"]),
                             "seconds": time.perf_counter() - t})
                print(json.dumps(rows[-1]), flush=True)
        finally:
            cvm.refit_coefficients = fit_to_outputs
    return {"dataset": name, "C": C, "gamma": gamma, "rows": X.shape[0], "exact_n_sv": int(exact.expansion_.n_support),
            "exact_test_acc": float(np.mean(exact.predict(Xt) == yt)),
            "outputs_beyond_margin": float(np.mean(np.abs(F) > 1.0)),
            "largest_output": float(np.abs(F).max()), "compressions": rows}


def main() -> int:
    from leansvm.io import atomic_write

    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / f"compression-start-{time.strftime('%Y%m%d-%H%M%S')}.json"
    cases = []
    for name, C, gamma, sizes in CASES:
        cases.append(run_case(name, C, gamma, sizes))
        with atomic_write(out, "w", encoding="utf-8") as f:
            json.dump({"cases": cases}, f, indent=1)
    print(f"results written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
