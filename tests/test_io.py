"""Model files: LIBSVM round trips against the real LIBSVM, native .npz, corrupt files, atomicity."""

import os
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris
from sklearn.preprocessing import MinMaxScaler
from threadpoolctl import threadpool_limits

from leansvm import SVC
from leansvm.core.expansion import DENSE_FRACTION
from leansvm.io import (load_libsvm_model, load_model, load_svmlight,
                        save_libsvm_model, save_model)

svmutil = pytest.importorskip("libsvm.svmutil")

HEART = Path(__file__).resolve().parents[2] / "shared" / "data" / "heart_scale"
KERNELS = {
    "linear": dict(kernel="linear"),
    "poly": dict(kernel="poly", gamma=0.1, degree=3, coef0=1.0),
    "rbf": dict(kernel="rbf", gamma=0.1),
    "sigmoid": dict(kernel="sigmoid", gamma=0.01, coef0=-0.5),
}
LIBSVM_KERNEL_OPTIONS = {"linear": "-t 0", "poly": "-t 1 -g 0.1 -d 3 -r 1", "rbf": "-t 2 -g 0.1",
                         "sigmoid": "-t 3 -g 0.01 -r -0.5"}


# -- data ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def heart():
    """heart_scale as CSR: (X_train, y_train, X_test, y_test), labels +1/-1, +1 first."""
    if not HEART.exists():
        pytest.skip(f"{HEART} not found")
    X, y = load_svmlight(HEART)
    return X[:200], y[:200], X[200:], y[200:]


@pytest.fixture(scope="module")
def iris():
    """Scaled iris, dense, labels 7 / 2 / 4 with 7 first (LIBSVM's label order is not sorted)."""
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(y))
    X = MinMaxScaler((-1, 1)).fit_transform(X)[order]
    y = np.array([4, 7, 2])[y[order]]
    first = np.flatnonzero(y == 7)[0]
    X[[0, first]], y[[0, first]] = X[[first, 0]], y[[first, 0]]
    return X[:110], y[:110], X[110:], y[110:]


def _fit(X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # sigmoid kernels are indefinite
        return SVC(C=1.0, random_state=0, **params).fit(X, y)


def one_thread():
    """LIBSVM's wheel uses OpenMP, which crawls on a busy 2-core machine: run it single-threaded."""
    return threadpool_limits(1, user_api="openmp")


def _libsvm_predict(model_path, X, y, options="-q"):
    model = svmutil.svm_load_model(str(model_path))
    with one_thread():
        labels, _, values = svmutil.svm_predict(y, X, model, options)
    return model, np.array(labels), np.array(values)


def _assert_same_as_libsvm(est, model_path, X, y):
    """LIBSVM's labels and decision values on the file equal the estimator's."""
    _, labels, values = _libsvm_predict(model_path, X, y)
    np.testing.assert_array_equal(labels, est.predict(X))
    if len(est.classes_) == 2:
        expected = -est.decision_function(X)[:, None]
    else:
        expected = est.set_params(decision_function_shape="ovo").decision_function(X)
    np.testing.assert_allclose(values, expected, rtol=1e-8, atol=1e-8)


# -- leansvm -> LIBSVM -----------------------------------------------------------------
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_leansvm_model_predicts_identically_in_libsvm_binary(heart, tmp_path, kernel):
    X, y, Xt, yt = heart
    est = _fit(X, y, **KERNELS[kernel])
    path = tmp_path / "heart.model"
    save_libsvm_model(est, path)
    _assert_same_as_libsvm(est, path, Xt, yt)


@pytest.mark.parametrize("kernel", list(KERNELS))
def test_leansvm_model_predicts_identically_in_libsvm_multiclass(iris, tmp_path, kernel):
    X, y, Xt, yt = iris
    est = _fit(X, y, **KERNELS[kernel])
    path = tmp_path / "iris.model"
    save_libsvm_model(est, path)
    _assert_same_as_libsvm(est, path, Xt, yt)
    assert load_libsvm_model(path).classes_.tolist() == est.classes_.tolist()


def test_binary_probability_is_written_for_libsvm(heart, tmp_path):
    X, y, Xt, yt = heart
    est = _fit(X, y, kernel="rbf", gamma=0.1, probability=True)
    path = tmp_path / "prob.model"
    save_libsvm_model(est, path)
    model, _, probs = _libsvm_predict(path, Xt, yt, "-b 1 -q")
    label_order = model.get_labels()  # LIBSVM's columns follow its label line
    columns = [list(est.classes_).index(label) for label in label_order]
    np.testing.assert_allclose(np.array(probs), est.predict_proba(Xt)[:, columns], atol=1e-6)


# -- LIBSVM -> leansvm -----------------------------------------------------------------
def _libsvm_train(X, y, options, path):
    with one_thread():
        model = svmutil.svm_train(y, X, options + " -q")
    svmutil.svm_save_model(str(path), model)
    return model


@pytest.mark.parametrize("kernel", list(KERNELS))
def test_libsvm_model_loads_binary(heart, tmp_path, kernel):
    X, y, Xt, yt = heart
    path = tmp_path / "libsvm.model"
    model = _libsvm_train(X, y, "-c 1 " + LIBSVM_KERNEL_OPTIONS[kernel], path)
    est = load_libsvm_model(path)
    assert est.classes_.tolist() == model.get_labels() == [1, -1]  # first training label first
    assert est.n_support_.sum() == est.expansion_.n_support == model.get_nr_sv()
    assert est.n_features_in_ == 13 and est.fit_status_ == 0 and est.support_.size == 0
    _assert_same_as_libsvm(est, path, Xt, yt)


@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_libsvm_model_loads_multiclass_unsorted_labels(iris, tmp_path, kernel):
    X, y, Xt, yt = iris
    path = tmp_path / "libsvm.model"
    model = _libsvm_train(X, y, "-c 2 " + LIBSVM_KERNEL_OPTIONS[kernel], path)
    est = load_libsvm_model(path)
    assert model.get_labels()[0] == 7
    assert est.classes_.tolist() == model.get_labels()
    assert est.classes_.tolist() != sorted(est.classes_.tolist())
    _assert_same_as_libsvm(est, path, Xt, yt)


@pytest.mark.parametrize("data", ["heart", "iris"])
def test_libsvm_probability_model_loads(request, tmp_path, data):
    X, y, Xt, yt = request.getfixturevalue(data)
    path = tmp_path / "prob.model"
    model = _libsvm_train(X, y, "-c 1 -g 0.1 -b 1", path)
    est = load_libsvm_model(path)
    k = len(model.get_labels())
    assert est.probA_.shape == est.probB_.shape == (k * (k - 1) // 2,)
    text = path.read_text()
    assert text.split("probA ")[1].split("\n")[0] == " ".join("%.17g" % v for v in est.probA_)
    _assert_same_as_libsvm(est, path, Xt, yt)
    again = tmp_path / "again.model"
    save_libsvm_model(est, again)
    assert "probA" in again.read_text()
    _assert_same_as_libsvm(est, again, Xt, yt)


def test_save_load_save_is_identical(heart, iris, tmp_path):
    for X, y, Xt, yt in (heart, iris):
        first, second, third = (tmp_path / f"{i}.model" for i in range(3))
        save_libsvm_model(_fit(X, y, kernel="rbf", gamma=0.1), first)
        save_libsvm_model(load_libsvm_model(first), second)
        assert first.read_bytes() == second.read_bytes()
        _libsvm_train(X, y, "-c 1 -g 0.1 -b 1", third)   # LIBSVM writes %.8g features: re-save once
        save_libsvm_model(load_libsvm_model(third), first)
        save_libsvm_model(load_libsvm_model(first), second)
        assert first.read_bytes() == second.read_bytes()


def test_sparse_file_loads_as_csr(tmp_path):
    text = ("svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 2\nrho 0.1\n"
            "label 3 -3\nnr_sv 1 1\nSV\n1 5:1 900:2\n-1 40:-1\n")
    path = tmp_path / "sparse.model"
    path.write_text(text)
    est = load_libsvm_model(path)
    assert sp.issparse(est.support_vectors_) and est.n_features_in_ == 900
    assert load_libsvm_model(path, n_features=1000).n_features_in_ == 1000
    with pytest.raises(ValueError, match="n_features"):
        load_libsvm_model(path, n_features=100)
    X = np.zeros((2, 900))
    X[0, 4], X[1, 899] = 1.0, 2.0
    _assert_same_as_libsvm(est, path, X, np.array([3.0, -3.0]))
    path.write_text(text.replace("5:1 900:2", "1:1 4:2").replace("40:-1", "3:-1"))  # 3 of 8 non-zero
    assert 3 / 8 >= DENSE_FRACTION and not sp.issparse(load_libsvm_model(path).support_vectors_)


# -- labels and strategies LIBSVM cannot store ------------------------------------------
def test_libsvm_format_refuses_what_it_cannot_represent(iris, tmp_path):
    X, y, _, _ = iris
    path = tmp_path / "m.model"
    with pytest.raises(ValueError, match="one-vs-one"):
        save_libsvm_model(_fit(X, y, multiclass="ovr", gamma=0.5), path)
    with pytest.raises(ValueError, match="integer labels"):
        save_libsvm_model(_fit(X, np.array(["a", "b", "c"])[y % 3], gamma=0.5), path)
    fractional = _fit(X, y, gamma=0.5)
    fractional.classes_ = fractional.classes_ + 0.5
    with pytest.raises(ValueError, match="not an integer"):
        save_libsvm_model(fractional, path)
    assert not path.exists() and os.listdir(tmp_path) == []
    est = _fit(X, y.astype(float), gamma=0.5)   # integral floats are fine
    save_libsvm_model(est, path)
    assert "label 2 4 7" in path.read_text()


# -- native format ---------------------------------------------------------------------
def _assert_same_model(a, b, X):
    ea, eb = a.expansion_, b.expansion_
    assert type(a) is type(b) and a.get_params() == b.get_params()
    assert a.classes_.dtype == b.classes_.dtype
    np.testing.assert_array_equal(a.classes_, b.classes_)
    assert sp.issparse(ea.support_vectors) == sp.issparse(eb.support_vectors)
    if sp.issparse(ea.support_vectors):
        for attr in ("data", "indices", "indptr"):
            np.testing.assert_array_equal(getattr(ea.support_vectors, attr), getattr(eb.support_vectors, attr))
    else:
        np.testing.assert_array_equal(ea.support_vectors, eb.support_vectors)
    np.testing.assert_array_equal(ea.coef, eb.coef)
    np.testing.assert_array_equal(ea.intercept, eb.intercept)
    assert ea.kernel == eb.kernel and a.multiclass_ == b.multiclass_
    np.testing.assert_array_equal(a.n_support_, b.n_support_)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


@pytest.mark.parametrize("case", ["dense", "csr", "strings", "ovr", "poly"])
def test_native_round_trip_is_exact(heart, iris, tmp_path, case):
    if case == "csr":
        X, y, Xt, _ = heart
        est = _fit(X, y, kernel="rbf", gamma=0.1)
        assert sp.issparse(est.support_vectors_)
    else:
        X, y, Xt, _ = iris
        if case == "strings":
            y = np.array(["setosa", "versicolor", "virginica"])[np.searchsorted([2, 4, 7], y)]
        params = {"ovr": dict(multiclass="ovr", gamma=0.5), "poly": KERNELS["poly"]}.get(case, dict(gamma=0.5))
        est = _fit(X, y, decision_function_shape="ovo", **params)
    path = tmp_path / "model.npz"
    save_model(est, path)
    loaded = load_model(path)
    _assert_same_model(est, loaded, Xt)
    assert loaded.n_features_in_ == est.n_features_in_ and loaded._gamma == est._gamma
    assert np.load(path, allow_pickle=False)["classes"].dtype != object


def test_native_loads_libsvm_loaded_model(iris, tmp_path):
    X, y, Xt, yt = iris
    _libsvm_train(X, y, "-c 1 -g 0.1 -b 1", tmp_path / "m.model")
    est = load_libsvm_model(tmp_path / "m.model")
    save_model(est, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    _assert_same_model(est, loaded, Xt)
    np.testing.assert_array_equal(loaded.probA_, est.probA_)


def test_native_format_errors(iris, tmp_path):
    import json

    X, y, _, _ = iris
    path = tmp_path / "m.npz"
    save_model(_fit(X, y, gamma=0.5), path)
    arrays = dict(np.load(path, allow_pickle=False))
    meta = json.loads(str(arrays["metadata"]))

    def write(name, meta_changes=None, drop=()):
        m = {**meta, **(meta_changes or {})}
        data = {k: v for k, v in arrays.items() if k not in drop}
        if "metadata" not in drop:
            data["metadata"] = np.array(json.dumps(m))
        np.savez(tmp_path / name, **data)
        return tmp_path / name

    for bad, match in [
        (write("v2.npz", {"format_version": 2}), "format_version 2"),
        (write("fmt.npz", {"format": "other"}), "not a leansvm-expansion"),
        (write("cls.npz", {"estimator": "Nope"}), "unknown estimator class 'Nope'"),
        (write("coef.npz", drop=("coef",)), "missing entries"),
        (write("meta.npz", drop=("metadata",)), "no 'metadata'"),
    ]:
        with pytest.raises(ValueError, match=match):
            load_model(bad)
    meta.pop("kernel")
    with pytest.raises(ValueError, match="missing entries.*kernel"):
        load_model(write("kernel.npz"))
    (tmp_path / "junk.npz").write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(ValueError, match="junk.npz"):
        load_model(tmp_path / "junk.npz")


def test_a_fresh_process_that_imported_svc_loads_every_estimator(iris, tmp_path):
    """The registry imports every estimator module when a file is read, however many of them the
    process has imported already (importing SVC alone once left BudgetSVC unknown)."""
    import subprocess
    import sys

    from leansvm import BSGDClassifier, BudgetSVC

    X, y, _, _ = iris
    for model in (BudgetSVC(budget=5), BSGDClassifier(budget=10, random_state=0)):
        save_model(model.fit(X, y), tmp_path / f"{type(model).__name__}.npz")
    code = ("import sys; from leansvm import SVC; SVC; from leansvm.io import load_model; "
            "print(*(type(load_model(p)).__name__ for p in sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", code, *(str(p) for p in sorted(tmp_path.glob("*.npz")))],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["BSGDClassifier", "BudgetSVC"]


def test_registry_restores_subclasses(iris, tmp_path):
    from leansvm.io import ESTIMATORS, register_estimator

    class MySVC(SVC):
        pass

    X, y, Xt, _ = iris
    est = MySVC(gamma=0.5, random_state=0).fit(X, y)
    save_model(est, tmp_path / "m.npz")
    try:
        register_estimator(MySVC)
        assert type(load_model(tmp_path / "m.npz")) is MySVC
    finally:
        ESTIMATORS.pop("MySVC", None)
    with pytest.raises(ValueError, match="unknown estimator class 'MySVC'"):
        load_model(tmp_path / "m.npz")


# -- corrupt LIBSVM files --------------------------------------------------------------
@pytest.fixture(scope="module")
def model_text(iris, tmp_path_factory):
    X, y, _, _ = iris
    path = tmp_path_factory.mktemp("valid") / "iris.model"
    save_libsvm_model(_fit(X, y, gamma=0.5), path)
    return path.read_text()


def _lines(text):
    return text.splitlines(keepends=True)


def _replace_line(text, key, new):
    return "".join(new + "\n" if line.split()[0] == key else line for line in _lines(text))


def _key_line(text, key):
    return next(i for i, line in enumerate(_lines(text), 1) if line.split()[0] == key)


def _sv_line_number(text):
    return next(i for i, line in enumerate(_lines(text), 1) if line.strip() == "SV")


CORRUPTIONS = {
    # name: (mutation, expected line number (callable on the valid text), message fragment)
    "empty": (lambda t: "", lambda t: 1, "empty"),
    "truncated header": (lambda t: "".join(_lines(t)[:4]), lambda t: 5, "truncated header"),
    "truncated SVs": (lambda t: "".join(_lines(t)[:_sv_line_number(t) + 3]),
                      lambda t: _sv_line_number(t) + 4, "file ends after 3 of total_sv"),
    "garbled SV number": (lambda t: "".join(l.replace(" 1:", " 1:0.5x", 1) if i == _sv_line_number(t) + 2
                                            else l for i, l in enumerate(_lines(t), 1)),
                          lambda t: _sv_line_number(t) + 2, "'0.5x.*is not a number"),
    "garbled coefficient": (lambda t: "".join("abc" + l[l.index(" "):] if i == _sv_line_number(t) + 1
                                              else l for i, l in enumerate(_lines(t), 1)),
                            lambda t: _sv_line_number(t) + 1, "coefficient 1: 'abc'"),
    "garbled rho": (lambda t: _replace_line(t, "rho", "rho 0.1 zz 0.3"), lambda t: _key_line(t, "rho"), "rho value 2"),
    "unknown kernel": (lambda t: _replace_line(t, "kernel_type", "kernel_type quantum"), lambda t: 2,
                       "unknown or unsupported kernel_type 'quantum'"),
    "precomputed kernel without serials": (lambda t: _replace_line(t, "kernel_type", "kernel_type precomputed"),
                                           lambda t: t.splitlines().index("SV") + 2, "0:serial"),
    "unknown svm_type": (lambda t: _replace_line(t, "svm_type", "svm_type nu_svm"), lambda t: 1,
                         "unknown svm_type 'nu_svm'"),
    "regression type on a 3-class file": (
        lambda t: _replace_line(t, "svm_type", "svm_type epsilon_svr"),
        lambda t: 1 + next(i for i, l in enumerate(_lines(t)) if l.startswith("nr_class")),
        "epsilon_svr model has nr_class 2, got 3"),
    "missing rho": (lambda t: "".join(l for l in _lines(t) if not l.startswith("rho")),
                    lambda t: _sv_line_number(t) - 1, "lacks 'rho'"),
    "missing gamma": (lambda t: "".join(l for l in _lines(t) if not l.startswith("gamma")),
                      lambda t: _sv_line_number(t) - 1, "lacks 'gamma'"),
    "unknown key": (lambda t: "bogus 1\n" + t, lambda t: 1, "unknown header key 'bogus'"),
    "rho count": (lambda t: _replace_line(t, "rho", "rho 0.1 0.2"), lambda t: _key_line(t, "rho"), "'rho' needs 3 values"),
    "nr_sv sum": (lambda t: _replace_line(t, "nr_sv", "nr_sv 1 1 1"), lambda t: _key_line(t, "nr_sv"), "sum to 3"),
    "nr_class huge": (lambda t: _replace_line(t, "nr_class", "nr_class 1000000000"), lambda t: _key_line(t, "nr_class"),
                      "exceeds the supported maximum"),
    "total_sv 1e12": (lambda t: _replace_line(_replace_line(t, "total_sv", "total_sv 1000000000000"),
                                              "nr_sv", "nr_sv 999999999999 1 0"),
                      lambda t: _key_line(t, "total_sv"), "32-bit"),
    "decreasing index": (lambda t: "".join(l.rstrip("\n") + " 2:1\n" if i == _sv_line_number(t) + 1 else l
                                           for i, l in enumerate(_lines(t), 1)),
                         lambda t: _sv_line_number(t) + 1, "feature indices must increase"),
    "index zero": (lambda t: "".join(l.replace(" 1:", " 0:", 1) if i == _sv_line_number(t) + 1 else l
                                     for i, l in enumerate(_lines(t), 1)),
                   lambda t: _sv_line_number(t) + 1, "feature index must be at least 1"),
    "missing colon": (lambda t: "".join(l.rstrip("\n") + " 7\n" if i == _sv_line_number(t) + 1 else l
                              for i, l in enumerate(_lines(t), 1)),
                      lambda t: _sv_line_number(t) + 1, "expected index:value, got '7'"),
    "extra SV line": (lambda t: t + "1 1 1:0.5\n", lambda t: len(_lines(t)) + 1, "more support vector lines"),
    "binary garbage": (lambda t: "svm_type c_svc\n\udcff\udcfe\n", lambda t: 2, "not a text file"),
}


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_corrupt_libsvm_file_raises_with_line_number(model_text, tmp_path, name):
    mutate, line, fragment = CORRUPTIONS[name]
    path = tmp_path / "bad.model"
    path.write_bytes(mutate(model_text).encode("utf-8", "surrogateescape"))
    with pytest.raises(ValueError, match=rf"bad\.model: line {line(model_text)}: .*{fragment}"):
        load_libsvm_model(path)


def test_declared_counts_never_allocate(model_text, tmp_path):
    """total_sv near LIBSVM's int limit with two SV lines fails fast (nothing preallocated)."""
    sv = _sv_line_number(model_text)
    text = "".join(_lines(model_text)[:sv + 2])
    text = _replace_line(text, "total_sv", f"total_sv {2**31 - 1}")
    text = _replace_line(text, "nr_sv", f"nr_sv {2**31 - 3} 1 1")
    path = tmp_path / "huge.model"
    path.write_text(text)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=rf"line {sv + 3}: file ends after 2 of total_sv = {2**31 - 1}"):
        load_libsvm_model(path)
    assert time.perf_counter() - start < 1.0


# -- atomic writes ---------------------------------------------------------------------
def test_failed_libsvm_write_keeps_previous_file(iris, tmp_path, monkeypatch):
    import leansvm.io.libsvm as lio

    X, y, _, _ = iris
    est = _fit(X, y, gamma=0.5)
    path = tmp_path / "m.model"
    path.write_text("previous content\n")

    def broken(support_vectors, sv_coef, first_index=1):
        yield "1 1 1:1"
        raise RuntimeError("disk full")

    monkeypatch.setattr(lio, "_sv_lines", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        save_libsvm_model(est, path)
    assert path.read_text() == "previous content\n"
    assert os.listdir(tmp_path) == ["m.model"]
    with pytest.raises(RuntimeError):
        save_libsvm_model(est, tmp_path / "new.model")
    assert os.listdir(tmp_path) == ["m.model"]


def test_failed_native_write_keeps_previous_file(iris, tmp_path, monkeypatch):
    X, y, _, _ = iris
    est = _fit(X, y, gamma=0.5)
    path = tmp_path / "m.npz"
    save_model(est, path)
    before = path.read_bytes()

    def broken(f, **arrays):
        f.write(b"PK\x03\x04partial")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez_compressed", broken)
    with pytest.raises(OSError, match="disk full"):
        save_model(est, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["m.npz"]


def test_written_files_get_normal_permissions(iris, tmp_path):
    X, y, _, _ = iris
    path = tmp_path / "m.model"
    save_libsvm_model(_fit(X, y, gamma=0.5), path)
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask


# -- svmlight data ---------------------------------------------------------------------
def test_load_svmlight(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("1 1:0.5 3:2\n-1 2:1\n")
    X, y = load_svmlight(path)
    assert sp.isspmatrix_csr(X) and X.dtype == np.float64 and X.shape == (2, 3)
    np.testing.assert_array_equal(X.toarray(), [[0.5, 0, 2], [0, 1, 0]])
    np.testing.assert_array_equal(y, [1, -1])
    assert load_svmlight(path, n_features=10)[0].shape == (2, 10)
    path.write_text("1 1:0.5 3:abc\n")
    with pytest.raises(ValueError, match=r"d\.txt"):
        load_svmlight(path)
    path.write_text("1 0:0.5\n")   # index 0: a 0-based file, refused only when told 1-based
    np.testing.assert_array_equal(load_svmlight(path)[0].toarray(), [[0.5]])
    with pytest.raises(ValueError, match=r"d\.txt: feature index 0 in a file read as 1-based"):
        load_svmlight(path, zero_based=False)
