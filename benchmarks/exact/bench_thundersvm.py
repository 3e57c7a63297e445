"""ThunderSVM (CPU build) as a second peer of the exact solver, side by side with leansvm and LIBSVM.

ThunderSVM's wheel needs numpy < 1.24, so it lives in its own virtual
environment; this script (run in leansvm's environment) writes each dataset
to a temporary .npz and fits ThunderSVM in a child process of that
environment, then fits LIBSVM (scikit-learn SVC) and leansvm in this process.

    python3 -m venv /tmp/tsvm && /tmp/tsvm/bin/pip install 'numpy<1.24' thundersvm-cpu
    python benchmarks/exact/bench_thundersvm.py --python /tmp/tsvm/bin/python --datasets magic,a9a

Same C, gamma, tol (1e-3) for all three; ThunderSVM runs with ``n_jobs=1``
and LIBSVM single-threaded, like leansvm's solver loop. Reports fit times,
ratios to LIBSVM, #SV, test accuracy and agreement with LIBSVM's labels.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.svm import SVC as LibSVC
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import finish_run, format_table, libsvm_input  # noqa: E402

from leansvm import SVC, datasets  # noqa: E402

WORKER = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    import scipy.sparse as sp
    from thundersvm import SVC
    d = np.load(sys.argv[1], allow_pickle=False)
    def matrix(prefix):
        if prefix + "_data" in d:
            return sp.csr_matrix((d[prefix + "_data"], d[prefix + "_indices"], d[prefix + "_indptr"]),
                                 shape=tuple(d[prefix + "_shape"]))
        return d[prefix]
    X, Xt, y = matrix("X"), matrix("Xt"), d["y"]
    m = SVC(C=float(d["C"]), gamma=float(d["gamma"]), tol=1e-3, n_jobs=1)
    t = time.perf_counter(); m.fit(X, y); fit_s = time.perf_counter() - t
    pred = m.predict(Xt)
    np.save(sys.argv[2], np.asarray(pred))
    print(json.dumps({"fit_s": fit_s, "n_sv": int(np.sum(m.n_sv))}))
""")

COLUMNS = [("dataset", "dataset", "s"), ("n", "n", "d"), ("libsvm_s", "LIBSVM s", ".2f"),
           ("leansvm_s", "leansvm s", ".2f"), ("thunder_s", "ThunderSVM s", ".2f"),
           ("leansvm_ratio", "leansvm/LIBSVM", ".2f"), ("thunder_ratio", "Thunder/LIBSVM", ".2f"),
           ("libsvm_sv", "LIBSVM #SV", "d"), ("leansvm_sv", "leansvm #SV", "d"),
           ("thunder_sv", "Thunder #SV", "d"), ("libsvm_acc", "LIBSVM acc", ".4f"),
           ("leansvm_acc", "leansvm acc", ".4f"), ("thunder_acc", "Thunder acc", ".4f"),
           ("thunder_agree", "Thunder agree", ".4f")]


def _save(path, ds):
    codes = np.unique(ds.y_train, return_inverse=True)[1]     # labels as 0..k-1 (may be strings)
    arrays = {"y": codes.astype(np.float64), "C": ds.C, "gamma": ds.gamma}
    for prefix, X in (("X", ds.X_train), ("Xt", ds.X_test)):
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            arrays.update({prefix + "_data": X.data, prefix + "_indices": X.indices.astype(np.int32),
                           prefix + "_indptr": X.indptr.astype(np.int32),
                           prefix + "_shape": np.array(X.shape)})
        else:
            arrays[prefix] = np.ascontiguousarray(X, dtype=np.float64)
    np.savez(path, **arrays)


def run_thunder(python, ds, tmp):
    data, pred = Path(tmp) / "data.npz", Path(tmp) / "pred.npy"
    worker = Path(tmp) / "worker.py"
    worker.write_text(WORKER)
    _save(data, ds)
    out = subprocess.run([python, str(worker), str(data), str(pred)], capture_output=True, text=True,
                         env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result, np.load(pred)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True, help="python of the ThunderSVM environment")
    parser.add_argument("--datasets", default="magic,a9a")
    parser.add_argument("--name", default="thundersvm")
    args = parser.parse_args(argv)
    rows = []
    for name in args.datasets.split(","):
        ds = datasets.load(name)
        with tempfile.TemporaryDirectory() as tmp:
            thunder, thunder_pred = run_thunder(args.python, ds, tmp)
        Xl, Xlt = libsvm_input(ds.X_train), libsvm_input(ds.X_test)
        with threadpool_limits(1, user_api="openmp"):
            t0 = time.perf_counter()
            ref = LibSVC(C=ds.C, gamma=ds.gamma, cache_size=1000).fit(Xl, ds.y_train)
            t_ref = time.perf_counter() - t0
        ours = SVC(C=ds.C, gamma=ds.gamma, cache_size=1000, random_state=0)
        t0 = time.perf_counter()
        ours.fit(ds.X_train, ds.y_train)
        t_ours = time.perf_counter() - t0
        ref_pred = ref.predict(Xlt)
        thunder_pred = np.unique(ds.y_train)[np.rint(thunder_pred).astype(int)]
        row = {"dataset": name, "n": ds.X_train.shape[0], "libsvm_s": t_ref, "leansvm_s": t_ours,
               "thunder_s": thunder["fit_s"], "leansvm_ratio": t_ours / t_ref,
               "thunder_ratio": thunder["fit_s"] / t_ref, "libsvm_sv": int(ref.support_.size),
               "leansvm_sv": int(ours.support_.size), "thunder_sv": thunder["n_sv"],
               "libsvm_acc": float(np.mean(ref_pred == ds.y_test)),
               "leansvm_acc": float(ours.score(ds.X_test, ds.y_test)),
               "thunder_acc": float(np.mean(thunder_pred == ds.y_test)),
               "thunder_agree": float(np.mean(thunder_pred == ref_pred))}
        rows.append(row)
        print(format_table([row], COLUMNS).splitlines()[-1], flush=True)
    finish_run(rows, COLUMNS, args.name)

if __name__ == "__main__":
    main()
