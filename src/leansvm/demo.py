"""The demo (``make demo``): train on the default dataset, compare with LIBSVM, save the model.

    python -m leansvm.demo [--dataset magic] [--output models/magic.model]

Trains ``leansvm.SVC`` and LIBSVM (scikit-learn's ``SVC``) with the benchmark
hyperparameters side by side, prints one table (fit time, #SV, accuracy,
dual objective, prediction time) and writes the leansvm model: a LIBSVM
model file when the labels are integers, else the native ``.npz`` format.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np


def _timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def main(argv=None) -> int:
    from sklearn import svm

    import leansvm
    from leansvm import datasets, io
    from leansvm.compare import libsvm_dual_objectives

    parser = argparse.ArgumentParser(prog="python -m leansvm.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="magic")
    parser.add_argument("--output", default=None, help="model path (default models/<dataset>.model)")
    args = parser.parse_args(argv)

    data = datasets.load(args.dataset)
    n, d = data.X_train.shape
    classes = np.unique(data.y_train)
    print(f"dataset {data.name}: {n} training x {d} features, {len(data.y_test)} test, "
          f"{len(classes)} classes; RBF C={data.C:g} gamma={data.gamma:g}")

    ours, t_ours = _timed(leansvm.SVC(C=data.C, gamma=data.gamma, cache_size=1000).fit,
                          data.X_train, data.y_train)
    ref, t_ref = _timed(svm.SVC(C=data.C, gamma=data.gamma, cache_size=1000).fit,
                        data.X_train, data.y_train)
    pred_ours, p_ours = _timed(ours.predict, data.X_test)
    pred_ref, p_ref = _timed(ref.predict, data.X_test)

    ref_obj = float(libsvm_dual_objectives(ref).sum())
    rows = [
        ("fit time (s)", f"{t_ours:.2f}", f"{t_ref:.2f}", f"{t_ours / t_ref:.2f}x"),
        ("support vectors", f"{ours.n_support_.sum()}", f"{ref.n_support_.sum()}", ""),
        ("test accuracy", f"{np.mean(pred_ours == data.y_test):.4f}", f"{np.mean(pred_ref == data.y_test):.4f}", ""),
        ("dual objective", f"{ours.dual_objective_.sum():.6g}", f"{ref_obj:.6g}",
         f"rel diff {abs(ours.dual_objective_.sum() - ref_obj) / abs(ref_obj):.1e}"),
        ("predict time (s)", f"{p_ours:.3f}", f"{p_ref:.3f}", f"{p_ref / p_ours:.1f}x faster"),
        ("same test labels", f"{np.mean(pred_ours == pred_ref):.2%}", "", ""),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"\n{'':{width}}  {'leansvm':>12}  {'LIBSVM':>12}  ratio")
    for name, a, b, ratio in rows:
        print(f"{name:{width}}  {a:>12}  {b:>12}  {ratio}")

    # LIBSVM files hold integer labels only (magic's are 'g'/'h'): otherwise the native format
    integer_labels = np.issubdtype(np.asarray(data.y_train).dtype, np.integer)
    default = f"models/{data.name}.model" if integer_labels else f"models/{data.name}.npz"
    path = Path(args.output or default)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".npz":
        io.save_model(ours, path)
        print(f"\nmodel written to {path} (leansvm native format; `leansvm info {path}`)")
    else:
        io.save_libsvm_model(ours, path)
        print(f"\nmodel written to {path} (LIBSVM format: `leansvm predict` or LIBSVM's svm-predict read it)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
