"""Precomputed kernels (scikit-learn's kernel='precomputed', LIBSVM's -t 4) and kernel functions
(callables) for every exact estimator: the same model as the named kernel, the same predictions
as scikit-learn's estimators on the same matrix, LIBSVM model files that the real LIBSVM reads,
and named errors for bad input."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import svm
from sklearn.datasets import make_classification, make_friedman1
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import cross_val_score

import leansvm
from leansvm.io import load_libsvm_model, load_model, save_libsvm_model, save_model

GAMMA = 0.2


def _classification():
    X, y = make_classification(n_samples=240, n_features=6, n_informative=4, n_classes=3, random_state=0)
    return X, y


def _regression():
    X, z = make_friedman1(n_samples=240, n_features=6, noise=0.5, random_state=0)
    return X, (z - z.mean()) / z.std()


def _case(name):
    """(leansvm class, scikit-learn class, X, target or None, extra parameters)."""
    X, y = _classification()
    Xr, z = _regression()
    return {"SVC": (leansvm.SVC, svm.SVC, X, y, {}),
            "NuSVC": (leansvm.NuSVC, svm.NuSVC, X, y, {"nu": 0.3}),
            "SVR": (leansvm.SVR, svm.SVR, Xr, z, {}),
            "NuSVR": (leansvm.NuSVR, svm.NuSVR, Xr, z, {}),
            "OneClassSVM": (leansvm.OneClassSVM, svm.OneClassSVM, Xr, None, {"nu": 0.2})}[name]


def _fit(model, X, target):
    return model.fit(X) if target is None else model.fit(X, target)


def _agree(a, b, regression, scale=1.0):
    if regression:
        assert np.max(np.abs(a - b)) <= 1e-2 * scale
    else:
        assert np.mean(a == b) >= 0.99


ESTIMATORS = ["SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM"]


@pytest.mark.parametrize("name", ESTIMATORS)
def test_precomputed_kernel_is_the_named_kernels_model(name):
    ours, theirs, X, target, extra = _case(name)
    X_new = X[:60] + 0.05
    K, K_new = rbf_kernel(X, X, gamma=GAMMA), rbf_kernel(X_new, X, gamma=GAMMA)
    pre = _fit(ours(kernel="precomputed", tol=1e-5, **extra), K, target)
    named = _fit(ours(gamma=GAMMA, tol=1e-5, **extra), X, target)
    reference = _fit(theirs(kernel="precomputed", tol=1e-5, **extra), K, target)
    assert np.array_equal(pre.support_, named.support_)
    np.testing.assert_allclose(pre.dual_objective_, named.dual_objective_, rtol=1e-6)
    regression = name in ("SVR", "NuSVR")
    _agree(pre.predict(K_new), named.predict(X_new), regression)
    _agree(pre.predict(K_new), reference.predict(K_new), regression)
    assert pre.support_vectors_.shape == (0, 0)            # as scikit-learn: no feature rows
    assert pre.n_features_in_ == X.shape[0]


@pytest.mark.parametrize("name", ESTIMATORS)
def test_kernel_function_is_the_named_kernels_model(name):
    ours, _, X, target, extra = _case(name)
    calls = []

    def kernel(A, B):
        calls.append((A.shape[0], B.shape[0]))
        return rbf_kernel(A, B, gamma=GAMMA)

    by_function = _fit(ours(kernel=kernel, tol=1e-5, **extra), X, target)
    named = _fit(ours(gamma=GAMMA, tol=1e-5, **extra), X, target)
    assert calls and np.array_equal(by_function.support_, named.support_)
    np.testing.assert_allclose(by_function.support_vectors_, X[by_function.support_])
    X_new = X[:50] + 0.05
    np.testing.assert_allclose(by_function.predict(X_new) if name in ("SVR", "NuSVR") else
                               by_function.decision_function(X_new),
                               named.predict(X_new) if name in ("SVR", "NuSVR") else named.decision_function(X_new),
                               atol=1e-4)   # both solved to tol 1e-5; kernel values rounded differently


def test_precomputed_kernel_bad_input_is_named():
    X, y = _classification()
    K = rbf_kernel(X, X, gamma=GAMMA)
    with pytest.raises(ValueError, match="square matrix"):
        leansvm.SVC(kernel="precomputed").fit(K[:, :100], y)
    with pytest.raises(ValueError, match="square matrix"):
        leansvm.OneClassSVM(kernel="precomputed").fit(K[:100])
    model = leansvm.SVR(kernel="precomputed").fit(K, X[:, 0])
    with pytest.raises(ValueError, match="240 features"):
        model.predict(K[:5, :100])
    bad = K.copy()
    bad[3, 4] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        leansvm.SVC(kernel="precomputed").fit(bad, y)


def test_sparse_precomputed_kernel_is_refused_as_scikit_learn_does():
    X, y = _classification()
    K = rbf_kernel(X, X, gamma=GAMMA)
    with pytest.raises(TypeError, match="Sparse precomputed.*K.toarray"):
        leansvm.SVC(kernel="precomputed").fit(sp.csr_matrix(K), y)
    model = leansvm.SVC(kernel="precomputed").fit(K, y)
    with pytest.raises(TypeError, match="Sparse precomputed"):
        model.predict(sp.csr_matrix(K))


def test_kernel_function_bad_output_is_named():
    X, y = _classification()
    with pytest.raises(ValueError, match="must return"):
        leansvm.SVC(kernel=lambda A, B: A @ B.T[:, :1]).fit(X, y)
    with pytest.raises(ValueError, match="NaN or inf"):
        leansvm.SVR(kernel=lambda A, B: np.full((A.shape[0], B.shape[0]), np.inf)).fit(X, X[:, 0])


def test_precomputed_kernel_is_pairwise_for_cross_validation():
    """scikit-learn slices K by rows and columns (the pairwise tag): the folds' scores equal those
    of the named kernel."""
    X, y = _classification()
    K = rbf_kernel(X, X, gamma=GAMMA)
    assert leansvm.SVC(kernel="precomputed").__sklearn_tags__().input_tags.pairwise
    pre = cross_val_score(leansvm.SVC(kernel="precomputed"), K, y, cv=3)
    named = cross_val_score(leansvm.SVC(gamma=GAMMA), X, y, cv=3)
    np.testing.assert_allclose(pre, named, atol=0.02)


@pytest.mark.parametrize("name", ["SVC", "SVR", "OneClassSVM"])
def test_precomputed_libsvm_files_predict_as_libsvm(name, tmp_path):
    """Written with 0:serial support vectors; the real LIBSVM predicts the same from them, and the
    file loads back to the same predictions."""
    svmutil = pytest.importorskip("libsvm.svmutil")
    ours, _, X, target, extra = _case(name)
    if name == "SVC":
        target = (target == 0).astype(int)
    K, K_new = rbf_kernel(X, X, gamma=GAMMA), rbf_kernel(X[:40] + 0.05, X, gamma=GAMMA)
    model = _fit(ours(kernel="precomputed", **extra), K, target)
    path = tmp_path / "pre.model"
    save_libsvm_model(model, path)
    text = path.read_text()
    assert "kernel_type precomputed" in text and " 0:" in text.split("SV\n")[1]
    loaded = load_libsvm_model(path)
    np.testing.assert_allclose(loaded.predict(K_new), model.predict(K_new), atol=1e-12)
    rows = [{0: 0.0, **{j + 1: float(v) for j, v in enumerate(row)}} for row in K_new]
    labels, _, _ = svmutil.svm_predict([0] * len(rows), rows, svmutil.svm_load_model(str(path)), "-q")
    np.testing.assert_allclose(labels, model.predict(K_new), atol=1e-9)


def test_precomputed_native_file_round_trip(tmp_path):
    X, y = _classification()
    K = rbf_kernel(X, X, gamma=GAMMA)
    model = leansvm.NuSVC(kernel="precomputed", nu=0.3).fit(K, y)
    save_model(model, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert loaded.n_features_in_ == X.shape[0]
    np.testing.assert_array_equal(loaded.predict(K[:50]), model.predict(K[:50]))


def test_kernel_function_models_are_not_written_to_files(tmp_path):
    X, z = _regression()
    model = leansvm.SVR(kernel=lambda A, B: A @ B.T).fit(X, z)
    for save in (save_model, save_libsvm_model):
        with pytest.raises(ValueError, match="kernel function .* cannot be written"):
            save(model, tmp_path / "f.model")
    assert not (tmp_path / "f.model").exists()


@pytest.mark.parametrize("cls", [leansvm.SVR, leansvm.NuSVR])
def test_laplace_sigma_of_precomputed_and_named_kernels_agree(cls, tmp_path):
    """probability=True: LIBSVM's Laplace sigma from 5-fold residuals; the precomputed kernel's
    folds are sliced by rows and columns, so with the same folds both give one sigma; it survives
    the native file."""
    X, z = _regression()
    named = cls(gamma=GAMMA, probability=True, random_state=0, tol=1e-5).fit(X, z)
    pre = cls(kernel="precomputed", probability=True, random_state=0, tol=1e-5).fit(rbf_kernel(X, X, gamma=GAMMA), z)
    assert 0 < named.probA_[0] < np.std(z)
    np.testing.assert_allclose(pre.probA_, named.probA_, rtol=1e-3)
    save_model(named, tmp_path / "m.npz")
    np.testing.assert_array_equal(load_model(tmp_path / "m.npz").probA_, named.probA_)


def _count_kernel(A, B):
    """A kernel on strings: the inner product of their letter counts."""
    letters = "AB"
    ca = np.array([[a.count(c) for c in letters] for a in A], dtype=float)
    cb = np.array([[b.count(c) for c in letters] for b in B], dtype=float)
    return ca @ cb.T


def test_a_kernel_function_takes_samples_that_are_not_numbers():
    """As scikit-learn: the function gets the samples themselves (strings here) and the model is the
    one trained on the matrix it returns (a precomputed kernel)."""
    words = ["A A", "A", "B", "B B", "A B", "A A B", "B B B", "A"]
    y = np.array([1, 1, 2, 2, 1, 1, 2, 1])
    K = _count_kernel(words, words)
    on_words = leansvm.SVC(kernel=_count_kernel).fit(words, y)
    on_matrix = leansvm.SVC(kernel="precomputed").fit(K, y)
    np.testing.assert_allclose(on_words.decision_function(words), on_matrix.decision_function(K))
    np.testing.assert_allclose(on_words.decision_function(["B A A"]),
                               on_matrix.decision_function(_count_kernel(["B A A"], words)))
    targets = y.astype(float) + np.arange(y.size) / 10
    np.testing.assert_allclose(leansvm.SVR(kernel=_count_kernel).fit(words, targets).predict(words),
                               leansvm.SVR(kernel="precomputed").fit(K, targets).predict(K))
    # a later fit on numbers forgets the strings
    X = np.array([[2.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 2.0], [1.0, 1.0], [2.0, 1.0], [0.0, 3.0], [1.0, 0.0]])
    refit = on_words.set_params(kernel=lambda A, B: A @ B.T).fit(X, y)
    np.testing.assert_allclose(refit.decision_function(X), leansvm.SVC(kernel="linear").fit(X, y).decision_function(X))
