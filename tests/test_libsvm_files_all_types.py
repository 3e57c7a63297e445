"""LIBSVM model files for every svm type: nu_svc, epsilon_svr, nu_svr and one_class
written by leansvm are read by the real LIBSVM (``libsvm-official``) with the same predictions,
and LIBSVM's own files of these types load as the matching leansvm estimator.

The multi-class nu_svc file is checked with Debian's ``svm-predict`` where installed: the
``libsvm-official`` 3.37 wheel crashes (bus error) predicting with any multi-class nu_svc model,
its own included, while binary nu_svc and multi-class c_svc work.
"""

import shutil
import subprocess

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, make_classification, make_friedman1
from threadpoolctl import threadpool_limits

import leansvm
from leansvm import io
from leansvm.budget.landmarks import LandmarkSVR

svmutil = pytest.importorskip("libsvm.svmutil")


def _regression_data():
    X, z = make_friedman1(n_samples=300, noise=0.5, random_state=0)
    X_new, z_new = make_friedman1(n_samples=100, noise=0.5, random_state=1)
    return X, z, X_new, z_new


def _libsvm_values(path, X, y):
    model = svmutil.svm_load_model(str(path))
    with threadpool_limits(1, user_api="openmp"):
        labels, _, values = svmutil.svm_predict(np.asarray(y, dtype=float), X, model, "-q")
    return np.array(labels), np.array(values)


@pytest.mark.parametrize("estimator", [leansvm.SVR(C=5.0, epsilon=0.2, gamma=0.2),
                                       leansvm.NuSVR(nu=0.4, C=5.0, gamma=0.2)], ids=["SVR", "NuSVR"])
def test_regression_files_predict_as_libsvm(estimator, tmp_path):
    X, z, X_new, z_new = _regression_data()
    estimator.fit(X, z)
    path = tmp_path / "model.txt"
    io.save_libsvm_model(estimator, path)
    assert path.read_text().splitlines()[0] == f"svm_type {estimator.libsvm_svm_type}"
    predictions, _ = _libsvm_values(path, X_new, z_new)
    np.testing.assert_allclose(predictions, estimator.predict(X_new), rtol=0, atol=1e-10)
    back = io.load_libsvm_model(path)
    assert type(back) is type(estimator)
    np.testing.assert_array_equal(back.predict(X_new), estimator.predict(X_new))


@pytest.mark.parametrize("estimator", [leansvm.ReducedSVR(n_vectors=20, max_iter=30, progress=False, random_state=0),
                                       LandmarkSVR(budget=30, C=5.0, gamma=0.2, random_state=0)],
                         ids=["ReducedSVR", "LandmarkSVR"])
def test_the_regression_job_s_cheap_models_are_written_as_epsilon_svr(estimator, tmp_path):
    """Any regressor's one-output expansion is an epsilon-SVR to svm-predict (``leansvm fit`` writes the
    regression job's returned model so): svm-predict gives its predictions."""
    X, z, X_new, z_new = _regression_data()
    estimator.fit(X, z)
    path = tmp_path / "model.txt"
    io.save_libsvm_model(estimator, path)
    assert path.read_text().splitlines()[0] == "svm_type epsilon_svr"
    predictions, _ = _libsvm_values(path, X_new, z_new)
    np.testing.assert_allclose(predictions, estimator.predict(X_new), rtol=0, atol=1e-6)


def test_one_class_file_predicts_as_libsvm(tmp_path):
    X, _, X_new, _ = _regression_data()
    model = leansvm.OneClassSVM(nu=0.2, gamma=0.2).fit(X)
    path = tmp_path / "one_class.txt"
    io.save_libsvm_model(model, path)
    labels, values = _libsvm_values(path, X_new, np.zeros(len(X_new)))
    np.testing.assert_array_equal(labels, model.predict(X_new))
    np.testing.assert_allclose(values[:, 0], model.decision_function(X_new), rtol=0, atol=1e-10)
    back = io.load_libsvm_model(path)
    assert isinstance(back, leansvm.OneClassSVM)
    np.testing.assert_array_equal(back.decision_function(X_new), model.decision_function(X_new))
    np.testing.assert_allclose(back.offset_, model.offset_)


def test_binary_nu_svc_file_predicts_as_libsvm(tmp_path):
    X, y = make_classification(n_samples=300, n_features=5, n_informative=3, random_state=0)
    model = leansvm.NuSVC(nu=0.3, gamma=0.2).fit(X, y)
    path = tmp_path / "nu_svc.txt"
    io.save_libsvm_model(model, path)
    labels, values = _libsvm_values(path, X, y)
    np.testing.assert_array_equal(labels, model.predict(X))
    np.testing.assert_allclose(values[:, 0], -model.decision_function(X), rtol=0, atol=1e-10)
    assert isinstance(io.load_libsvm_model(path), leansvm.NuSVC)


@pytest.mark.skipif(shutil.which("svm-predict") is None, reason="Debian's libsvm-tools (svm-predict) not installed")
def test_multiclass_nu_svc_file_predicts_as_svm_predict(tmp_path):
    X, y = make_classification(n_samples=300, n_features=5, n_informative=3, n_classes=3, random_state=0)
    model = leansvm.NuSVC(nu=0.3, gamma=0.2).fit(X, y)
    path, data, out = tmp_path / "nu_svc.txt", tmp_path / "data.svm", tmp_path / "out.txt"
    io.save_libsvm_model(model, path)
    dump_svmlight_file(X, y, str(data), zero_based=False)
    subprocess.run(["svm-predict", str(data), str(path), str(out)], check=True, capture_output=True)
    np.testing.assert_array_equal(np.loadtxt(out), model.predict(X))


@pytest.mark.parametrize("options, cls", [("-s 3 -p 0.1 -c 5", "SVR"), ("-s 4 -n 0.4 -c 5", "NuSVR"),
                                          ("-s 2 -n 0.2", "OneClassSVM"), ("-s 1 -n 0.3", "NuSVC")])
def test_libsvm_files_of_every_type_load_as_the_matching_estimator(options, cls, tmp_path):
    if cls == "NuSVC":
        X, y = make_classification(n_samples=300, n_features=5, n_informative=3, random_state=0)
        X_new = X
    else:
        X, y, X_new, _ = _regression_data()
    with threadpool_limits(1, user_api="openmp"):
        trained = svmutil.svm_train(np.asarray(y, dtype=float), X, f"{options} -g 0.2 -q")
    path = tmp_path / "libsvm.model"
    svmutil.svm_save_model(str(path), trained)
    labels, values = _libsvm_values(path, X_new, np.zeros(len(X_new)))
    model = io.load_libsvm_model(path)
    assert type(model).__name__ == cls
    if cls in ("SVR", "NuSVR"):
        # LIBSVM writes support vectors with 8 significant digits
        np.testing.assert_allclose(model.predict(X_new), labels, rtol=0, atol=1e-5)
    else:
        np.testing.assert_array_equal(model.predict(X_new), labels)
        ours = model.decision_function(X_new)
        np.testing.assert_allclose(ours if cls == "OneClassSVM" else -ours, values[:, 0], rtol=0, atol=1e-5)


@pytest.mark.parametrize("text, message", [
    ("svm_type epsilon_svr\nkernel_type rbf\ngamma 0.5\nnr_class 3\ntotal_sv 1\nrho 0\nSV\n1 1:1\n", "nr_class 2"),
    ("svm_type one_class\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 1\nrho 0\nlabel 1 -1\nSV\n1 1:1\n",
     "has no 'label'"),
    ("svm_type nu_svm\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 1\nrho 0\nSV\n1 1:1\n",
     "unknown svm_type 'nu_svm'"),
    ("svm_type nu_svr\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 2\nrho 0\nSV\n1 1:1\n", "total_sv|truncated|ends"),
])
def test_malformed_files_of_the_new_types_are_named(text, message, tmp_path):
    path = tmp_path / "bad.model"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        io.load_libsvm_model(path)


@pytest.mark.parametrize("estimator", [leansvm.SVR(gamma=0.2), leansvm.NuSVR(gamma=0.2), leansvm.OneClassSVM(gamma=0.2),
                                       leansvm.NuSVC(nu=0.3, gamma=0.2)], ids=lambda e: type(e).__name__)
def test_native_files_round_trip_every_type(estimator, tmp_path):
    X, z, X_new, _ = _regression_data()
    y = (z > np.median(z)).astype(int) if isinstance(estimator, leansvm.NuSVC) else z
    estimator.fit(X, y) if not isinstance(estimator, leansvm.OneClassSVM) else estimator.fit(X)
    path = tmp_path / "model.npz"
    io.save_model(estimator, path)
    back = io.load_model(path)
    assert type(back) is type(estimator)
    np.testing.assert_array_equal(back.predict(X_new), estimator.predict(X_new))
    assert back.get_params() == estimator.get_params()


def test_native_file_with_classes_removed_or_added_is_refused(tmp_path):
    X, z, _, _ = _regression_data()
    svc = leansvm.SVC(gamma=0.2).fit(X, (z > np.median(z)).astype(int))
    svr = leansvm.SVR(gamma=0.2).fit(X, z)
    for model, classes, message in ((svc, np.empty(0), "SVC model needs classes"),
                                    (svr, np.array([0, 1]), "SVR model has no classes")):
        path = tmp_path / "model.npz"
        io.save_model(model, path)
        arrays = dict(np.load(path))
        arrays["classes"] = classes
        np.savez(path, **arrays)
        with pytest.raises(ValueError, match=message):
            io.load_model(path)
