"""Feature scaling kept with the model: svm-scale's ranges by default (zeros kept, the same for
every form of the same numbers), z-scores and max-abs on request, svm-scale's range file beside
LIBSVM model files, the main job on raw columns."""

import shutil
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.preprocessing import MaxAbsScaler, StandardScaler

from leansvm import fit_lean, io
from leansvm.cli import main
from leansvm.preprocessing.scaling import FeatureScaler


@pytest.fixture(scope="module")
def raw():
    """Informative features on scales from 1e-3 to 1e4, split 70/30."""
    X, y = make_classification(600, n_features=6, n_informative=4, n_redundant=0, class_sep=1.2, random_state=3)
    X = X * np.array([1e-3, 1.0, 1e4, 30.0, 1e-2, 5e3]) + np.array([0, 5, -2e4, 0, 1, 0])
    return X[:420], y[:420], X[420:], y[420:]


def test_the_default_is_svm_scales_ranges_up_to_a_shift_the_rbf_kernel_does_not_see():
    X = np.random.default_rng(0).normal(size=(50, 3)) * [1, 100, 1] + [0, 7, 0]
    X[:, 2] = 4.0
    scaler = FeatureScaler().fit(X)
    out = scaler.transform(X)
    np.testing.assert_allclose(out, FeatureScaler.to_range(X, -1.0, 1.0).transform(X), atol=1e-15)
    np.testing.assert_allclose(out[:, :2].min(axis=0), -1.0)
    np.testing.assert_allclose(out[:, :2].max(axis=0), 1.0)
    np.testing.assert_array_equal(out[:, 2], 0.0)             # a constant column: dropped, as svm-scale drops it
    assert scaler.kind_ == "range" and "svm-scale -l -1 -u 1" in scaler.describe()


@pytest.mark.parametrize("scaling", ["range", "max-abs"])
def test_sparse_data_stays_sparse_with_the_differences_of_its_dense_twin(scaling):
    X = sp.random(80, 5, density=0.2, random_state=0, format="csr") * 40 - sp.random(80, 5, density=0.1,
                                                                                       random_state=1, format="csr")
    scaler = FeatureScaler(scaling).fit(X)
    out = scaler.transform(X)
    assert sp.issparse(out) and out.nnz == X.nnz
    dense = FeatureScaler(scaling).fit(X.toarray()).transform(X.toarray())
    np.testing.assert_allclose(out.toarray() - out[0].toarray(), dense - dense[0], atol=1e-12)
    if scaling == "max-abs":
        np.testing.assert_allclose(out.toarray(), MaxAbsScaler().fit_transform(X).toarray(), atol=1e-12)


def test_z_scores_on_request():
    X = np.random.default_rng(0).normal(size=(50, 3)) * [1, 100, 1] + [0, 7, 0]
    X[:, 2] = 4.0
    scaler = FeatureScaler("standard").fit(X)
    expected = StandardScaler().fit_transform(X)
    expected[:, 2] = 0.0                                      # svm-scale drops single-valued features
    np.testing.assert_allclose(scaler.transform(X), expected, atol=1e-12)
    assert scaler.kind_ == "standard" and "standardised" in scaler.describe()
    with pytest.raises(ValueError, match="scaling must be one of"):
        FeatureScaler("minmax").fit(X)


def test_the_range_file_round_trips_and_reads_svm_scales_own(tmp_path):
    X = np.random.default_rng(1).normal(size=(30, 4)) * [1, 10, 100, 1000]
    scaler = FeatureScaler().fit(X)
    path = tmp_path / "m.range"
    path.write_text(scaler.range_file_text())
    again = FeatureScaler.from_range_file(path)
    np.testing.assert_allclose(again.transform(X), scaler.transform(X), rtol=1e-14, atol=1e-14)
    # a file svm-scale wrote with -l 0 -u 1: feature 2 absent (single-valued), features beyond 3 unknown
    path.write_text("x\n0 1\n1 -2 2\n3 0 10\n")
    user = FeatureScaler.from_range_file(path, n_features=3)
    np.testing.assert_allclose(user.transform(np.array([[0.0, 9.0, 5.0, 7.0]])), [[0.5, 0.0, 0.5]])
    for bad, message in [("y\n-1 1\n1 0 1\nx\n-1 1\n", "'y' section"), ("1 2 3\n", "first line must be 'x'"),
                         ("x\n-1 1\n1 a b\n", "expected 'lower upper'"), ("x\n1 -1\n", "lower < upper")]:
        path.write_text(bad)
        with pytest.raises(ValueError, match=message):
            FeatureScaler.from_range_file(path)


def test_the_main_job_on_raw_columns_matches_svm_scaled_ones(raw):
    X, y, Xt, yt = raw
    options = dict(Cs=[1.0, 10.0], gammas=None, size_fractions=(), libsvm_reference_model=False)
    scaled = fit_lean(X, y, X_test=Xt, y_test=yt, **options)
    mean, std = X.min(axis=0), np.ptp(X, axis=0) / 2          # svm-scale -l -1 -u 1, by hand
    standard = fit_lean((X - mean) / std, y, X_test=(Xt - mean) / std, y_test=yt, scale=False, **options)
    unscaled = fit_lean(X, y, X_test=Xt, y_test=yt, scale=False, **options)
    accuracy = {name: np.mean(r.model.predict(data) == yt) for name, r, data in
                [("scaled", scaled, Xt), ("standard", standard, (Xt - mean) / std), ("unscaled", unscaled, Xt)]}
    exact = {name: next(c.test_accuracy for c in r.candidates if c.kind == "exact")
             for name, r in [("scaled", scaled), ("standard", standard), ("unscaled", unscaled)]}
    assert (scaled.selection.C, scaled.selection.gamma) == pytest.approx((standard.selection.C, standard.selection.gamma))
    assert abs(exact["scaled"] - exact["standard"]) <= 1 / len(yt) + 1e-12, exact   # rounding: one test point
    # the returned (compressed or budget) models: scaling is what lifts them above raw columns
    assert min(accuracy["scaled"], accuracy["standard"]) > accuracy["unscaled"] + 0.05, accuracy
    assert scaled.steps[0].stage == "scale" and "svm-scale" in scaled.preprocessing
    assert scaled.model[0].kind_ == "range"


def test_scaled_models_keep_their_scaling_in_files_onnx_and_compress(raw, tmp_path, capsys):
    X, y, Xt, _ = raw
    result = fit_lean(X, y, Cs=[1.0, 10.0], size_fractions=(), libsvm_reference_model=False)
    path = tmp_path / "m.npz"
    io.save_model(result.model, path)
    loaded = io.load_model(path)
    np.testing.assert_array_equal(loaded.decision_function(Xt), result.model.decision_function(Xt))
    small = tmp_path / "small.npz"
    assert main(["compress", str(path), str(small), "--n-sv", "5", "-q"]) == 0
    assert io.load_model(small)[-1].expansion_.n_support <= 5
    assert isinstance(io.load_model(small)[0], FeatureScaler)
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(io.to_onnx(result.model).SerializeToString())
    scores = session.run(["scores"], {"X": Xt})[0]
    np.testing.assert_allclose(scores.ravel(), result.model.decision_function(Xt), atol=1e-8)


@pytest.mark.skipif(shutil.which("svm-scale") is None or shutil.which("svm-predict") is None,
                    reason="LIBSVM's command-line tools not installed (Debian: apt-get install libsvm-tools)")
def test_the_real_svm_scale_and_svm_predict_read_the_range_file_and_the_model(raw, tmp_path):
    """`leansvm fit -o model.txt` on raw columns, then LIBSVM's own tools on the raw test file:
    svm-scale -r model.txt.range test | svm-predict: the same labels as `leansvm predict`."""
    from sklearn.datasets import dump_svmlight_file

    X, y, Xt, yt = raw
    train, test, model = tmp_path / "train.svm", tmp_path / "test.svm", tmp_path / "model.txt"
    dump_svmlight_file(X, 2 * y - 1, str(train), zero_based=False)
    dump_svmlight_file(Xt, 2 * yt - 1, str(test), zero_based=False)
    assert main(["fit", str(train), "-o", str(model), "-q", "--C-grid", "1", "10"]) == 0
    scaled = subprocess.run(["svm-scale", "-r", f"{model}.range", str(test)], capture_output=True, text=True,
                            check=True).stdout
    (tmp_path / "scaled.svm").write_text(scaled)
    subprocess.run(["svm-predict", str(tmp_path / "scaled.svm"), str(model), str(tmp_path / "libsvm.txt")],
                   capture_output=True, check=True)
    assert main(["predict", "-q", str(test), str(model), str(tmp_path / "leansvm.txt")]) == 0
    theirs, ours = np.loadtxt(tmp_path / "libsvm.txt"), np.loadtxt(tmp_path / "leansvm.txt")
    # svm-scale prints 6 significant digits: a point within that rounding of the boundary may flip
    assert np.mean(theirs == ours) >= 0.995, int(np.sum(theirs != ours))
    assert np.mean(ours == 2 * yt - 1) > 0.85


# -- leansvm scale: svm-scale's command ------------------------------------------------------
def _sparse_file(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    X, y = make_classification(200, 8, random_state=3)
    X[:, 3] = 0.0                                         # a single-valued feature: dropped by both
    X[X < -1] = 0.0                                       # absent entries count as 0 in min and max
    X[:, 0] *= 50
    path = tmp_path / "data.txt"
    dump_svmlight_file(X, 2 * y - 1, str(path), zero_based=False)
    return path, X


def test_scale_maps_every_feature_to_the_range_and_saves_it(tmp_path, capsys):
    path, X = _sparse_file(tmp_path)
    assert main(["scale", "-l", "0", "-u", "1", "-s", str(tmp_path / "r"), str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == X.shape[0]
    scaled = np.zeros_like(X)
    for i, line in enumerate(out):
        for cell in line.split()[1:]:
            j, v = cell.split(":")
            scaled[i, int(j) - 1] = float(v)
    live = X.max(0) > X.min(0)
    expected = (X[:, live] - X[:, live].min(0)) / (X[:, live].max(0) - X[:, live].min(0))
    np.testing.assert_allclose(scaled[:, live], expected, atol=1e-5)          # "%g": 6 digits
    assert np.all(scaled[:, ~live] == 0)
    ranges = FeatureScaler.from_range_file(tmp_path / "r")
    np.testing.assert_allclose(ranges.min_[live], X[:, live].min(0))
    # -r applies the saved ranges: the same output
    assert main(["scale", "-r", str(tmp_path / "r"), str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == out
    assert main(["scale", "-s", "a", "-r", "b", str(path)]) == 2          # as svm-scale: one or the other
    assert main(["scale", "-y", "0", "1", str(path)]) == 2


@pytest.mark.skipif(shutil.which("svm-scale") is None, reason="LIBSVM's svm-scale is not installed")
@pytest.mark.parametrize("limits", [[], ["-l", "0", "-u", "1"]], ids=["default", "0-1"])
def test_scale_writes_what_svm_scale_writes_and_reads_its_range_files(tmp_path, capsys, limits):
    """Byte for byte: `svm-scale` and `leansvm scale` on the same file, each restoring the other's ranges."""
    path, _ = _sparse_file(tmp_path)
    theirs = subprocess.run(["svm-scale", *limits, "-s", str(tmp_path / "theirs"), str(path)],
                            capture_output=True, text=True, check=True).stdout
    assert main(["scale", *limits, "-s", str(tmp_path / "ours"), str(path)]) == 0
    assert capsys.readouterr().out == theirs
    assert (tmp_path / "ours").read_text() == (tmp_path / "theirs").read_text()
    assert main(["scale", "-r", str(tmp_path / "theirs"), str(path)]) == 0
    assert capsys.readouterr().out == theirs
    again = subprocess.run(["svm-scale", "-r", str(tmp_path / "ours"), str(path)], capture_output=True,
                           text=True, check=True).stdout
    assert again == theirs


def test_auto_takes_the_higher_first_round_and_ranges_on_a_tie_unless_they_cost_far_more():
    from leansvm.job.data import pick_scaling

    assert pick_scaling({"range": (0.90, 0.01, 5.0, 400), "standard": (0.93, 0.01, 5.0, 400)})[0] == "standard"
    assert pick_scaling({"range": (0.95, 0.01, 50.0, 400), "standard": (0.93, 0.01, 5.0, 400)})[0] == "range"
    assert pick_scaling({"range": (0.93, 0.01, 14.0, 400), "standard": (0.925, 0.01, 5.0, 400)})[0] == "range"
    assert pick_scaling({"range": (0.93, 0.01, 16.0, 400), "standard": (0.925, 0.01, 5.0, 400)}) == (
        "standard", "tied within one SE, and range's round took 3.2 x its work")


def test_auto_is_logged_with_both_scores_and_is_range_without_labels(raw):
    from leansvm.job.data import scale_features

    X, y, Xt, _ = raw

    import time

    class Log:
        lines = []
        clock = staticmethod(time.perf_counter)      # the job log's clock, as JobLog has

        def step(self, stage, what, why="", *rest, **options):
            self.lines.append(f"{stage}: {what} ({why})")

    log = Log()
    _, _, scaler = scale_features(X, Xt, "auto", log, y)
    assert scaler.kind_ in ("range", "standard")
    assert log.lines[0].startswith(f"scale: {scaler.kind_}: CV accuracy {scaler.kind_} ")
    assert "(the search's first round, 5-fold CV on 400 rows: range " in log.lines[0]
    assert scale_features(X, Xt, "auto", Log())[2].kind_ == "range"          # regression, novelty: no labels
