"""BSGDRegressor and BSGDOneClassSVM: budgeted SGD on the epsilon-insensitive and one-class losses
."""

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.utils.estimator_checks import parametrize_with_checks

import leansvm
from leansvm import BSGDRegressor
from leansvm.budget import bsgd
from leansvm.budget import bsgd_refit
from leansvm.io import load_libsvm_model, load_model, save_libsvm_model, save_model


@pytest.fixture(scope="module")
def friedman():
    X, z = make_friedman1(n_samples=4000, n_features=10, noise=1.0, random_state=0)
    X = (X - X[:3000].mean(0)) / X[:3000].std(0)
    z = (z - z[:3000].mean()) / z[:3000].std()
    return X[:3000], z[:3000], X[3000:], z[3000:]


def _rmse(model, X, z):
    return float(np.sqrt(np.mean((model.predict(X) - z) ** 2)))


def test_optimal_tube_bias_is_the_exact_minimiser():
    rng = np.random.default_rng(0)
    g, z = rng.normal(size=200), rng.normal(size=200)
    b = bsgd_refit.optimal_tube_bias(g, z, 0.3)
    objective = lambda c: np.maximum(np.abs(z - g - c) - 0.3, 0).sum()   # noqa: E731
    grid = np.linspace(-3, 3, 6001)
    assert objective(b) <= min(objective(c) for c in grid) + 1e-9


def test_points_inside_the_tube_never_join():
    """One pass from an empty model: a point joins exactly when its residual exceeds epsilon."""
    X = np.linspace(0, 1, 50)[:, None]
    z = np.zeros(50)
    config = bsgd.BudgetConfig(budget=100, maintenance="removal", kernel="rbf", gamma=1.0,
                               loss="epsilon_insensitive", epsilon=0.1)
    state = bsgd.sgd_pass(bsgd.BudgetState.empty(1, 1.0), X, z, np.arange(50), config)
    assert state.n_support == 0                          # every residual is 0 <= epsilon
    state = bsgd.sgd_pass(bsgd.BudgetState.empty(1, 1.0), X, z + 1.0, np.arange(50), config)
    assert state.n_support >= 1 and np.all(state.alpha > 0)    # all residuals positive: alpha > 0


def test_near_exact_svr_with_a_budget(friedman):
    X, z, Xt, zt = friedman
    exact = leansvm.SVR(C=10, gamma=0.03, epsilon=0.1).fit(X, z)
    budget = BSGDRegressor(budget=400, C=10, gamma=0.03, epsilon=0.1, random_state=0).fit(X, z)
    assert budget.expansion_.n_support <= 400 < exact.expansion_.n_support / 4
    # 3,000 rows, a fifth of the exact model's vectors: within 10 % (5.5 % measured; the benchmark
    # measures the 5 % goal at friedman1-50k, budget 500)
    assert _rmse(budget, Xt, zt) <= 1.10 * _rmse(exact, Xt, zt)
    plain = BSGDRegressor(budget=400, C=10, gamma=0.03, epsilon=0.1, refit=False, random_state=0).fit(X, z)
    assert _rmse(plain, Xt, zt) < np.std(zt)              # SGD alone learns, the refit sharpens


@pytest.mark.parametrize("maintenance", ["removal", "projection"])
def test_other_maintenance(friedman, maintenance):
    X, z, Xt, zt = friedman
    model = BSGDRegressor(budget=100, C=10, gamma=0.03, maintenance=maintenance, random_state=0).fit(X, z)
    assert model.expansion_.n_support <= 100 and _rmse(model, Xt, zt) < 0.5


def test_partial_fit_continues_and_one_chunk_equals_fit(friedman):
    X, z, Xt, zt = friedman
    whole = BSGDRegressor(budget=100, C=10, gamma=0.03, random_state=1).fit(X, z)
    chunked = BSGDRegressor(budget=100, C=10, gamma=0.03, random_state=1).partial_fit(X, z)
    np.testing.assert_allclose(chunked.predict(Xt), whole.predict(Xt), atol=1e-12)
    stream = BSGDRegressor(budget=100, C=10, gamma=0.03, random_state=1)
    for start in range(0, 3000, 1000):
        stream.partial_fit(X[start:start + 1000], z[start:start + 1000], n_samples_total=3000)
    assert stream.fit_stats_["steps"] == 3000 and _rmse(stream, Xt, zt) < 0.35
    with pytest.raises(ValueError, match="features"):
        stream.partial_fit(X[:10, :5], z[:10])


def test_files_predict_as_the_model_and_as_libsvm(friedman, tmp_path):
    X, z, Xt, _ = friedman
    model = BSGDRegressor(budget=50, C=10, gamma=0.03, random_state=0).fit(X, z)
    save_model(model, tmp_path / "m.npz")
    np.testing.assert_allclose(load_model(tmp_path / "m.npz").predict(Xt), model.predict(Xt), atol=1e-12)
    save_libsvm_model(model, tmp_path / "m.model")
    assert open(tmp_path / "m.model").readline().split() == ["svm_type", "epsilon_svr"]
    np.testing.assert_allclose(load_libsvm_model(tmp_path / "m.model").predict(Xt), model.predict(Xt), atol=1e-10)
    svmutil = pytest.importorskip("libsvm.svmutil")
    rows = [{j + 1: float(v) for j, v in enumerate(r)} for r in Xt[:100]]
    labels, _, _ = svmutil.svm_predict([0] * 100, rows, svmutil.svm_load_model(str(tmp_path / "m.model")), "-q")
    np.testing.assert_allclose(labels, model.predict(Xt[:100]), atol=1e-9)


def test_bad_input_is_named(friedman):
    X, z, _, _ = friedman
    with pytest.raises(ValueError, match="y contains NaN"):
        BSGDRegressor().fit(X, np.where(np.arange(3000) == 5, np.nan, z))
    with pytest.raises(ValueError, match="epsilon"):
        BSGDRegressor(epsilon=-1).fit(X, z)
    with pytest.raises(ValueError, match="either C or lambda_"):
        BSGDRegressor(C=1, lambda_=0.1).fit(X, z)
    with pytest.raises(ValueError, match="merge"):
        BSGDRegressor(kernel="linear").fit(X, z)


@parametrize_with_checks([BSGDRegressor(budget=30, random_state=0)])
def test_sklearn_conformance(estimator, check):
    check(estimator)


# -- the one-class SVM on a budget ---------------------------------------------------------------
@pytest.fixture(scope="module")
def blobs():
    from sklearn.datasets import make_blobs
    X, _ = make_blobs(n_samples=2500, centers=3, n_features=4, cluster_std=1.0, random_state=0)
    outliers = np.random.default_rng(0).uniform(-12, 12, size=(250, 4))
    return X[:2000], np.vstack([X[2000:], outliers]), np.r_[np.ones(500), -np.ones(250)]


def test_one_class_budget_near_exact(blobs):
    """nu's meaning (the fraction of training points outside), the exact one-class SVM's labels and
    ROC AUC on points with planted outliers."""
    from sklearn.metrics import roc_auc_score
    X, X_new, truth = blobs
    exact = leansvm.OneClassSVM(nu=0.1, gamma=0.2).fit(X)
    budget = leansvm.BSGDOneClassSVM(budget=100, nu=0.1, gamma=0.2, epochs=2, random_state=0).fit(X)
    assert budget.expansion_.n_support <= 100 < exact.expansion_.n_support
    assert abs(np.mean(budget.predict(X) == -1) - 0.1) <= 0.01
    assert np.mean(budget.predict(X_new) == exact.predict(X_new)) >= 0.95
    auc_budget = roc_auc_score(truth, budget.decision_function(X_new))
    assert auc_budget >= roc_auc_score(truth, exact.decision_function(X_new)) - 0.01
    np.testing.assert_allclose(budget.score_samples(X_new) - budget.offset_, budget.decision_function(X_new))


@pytest.mark.parametrize("nu", [0.02, 0.05])
def test_one_class_budget_keeps_adding_vectors_at_small_nu(blobs, nu):
    """Without the step offset t0 = 1/nu the first point's alpha = 1/nu drove rho to about -1/nu and
    no other point joined in one pass: one vector at every budget (nu = 0.05)."""
    from sklearn.metrics import roc_auc_score
    X, X_new, truth = blobs
    budget = leansvm.BSGDOneClassSVM(budget=50, nu=nu, gamma=0.2, random_state=0).fit(X)
    # about nu of the steps violate, each adds a vector: nu = 0.02 gives ~40 in 2000 steps
    assert budget.expansion_.n_support >= min(50, 0.75 * nu * X.shape[0])
    assert abs(np.mean(budget.predict(X) == -1) - nu) <= 0.01
    exact = leansvm.OneClassSVM(nu=nu, gamma=0.2).fit(X)
    assert roc_auc_score(truth, budget.decision_function(X_new)) >= \
        roc_auc_score(truth, exact.decision_function(X_new)) - 0.01


def test_one_class_budget_files(blobs, tmp_path):
    X, X_new, _ = blobs
    model = leansvm.BSGDOneClassSVM(budget=50, nu=0.2, gamma=0.2, random_state=0).fit(X)
    save_model(model, tmp_path / "m.npz")
    np.testing.assert_allclose(load_model(tmp_path / "m.npz").decision_function(X_new),
                               model.decision_function(X_new), atol=1e-12)
    save_libsvm_model(model, tmp_path / "m.model")
    assert open(tmp_path / "m.model").readline().split() == ["svm_type", "one_class"]
    svmutil = pytest.importorskip("libsvm.svmutil")
    rows = [{j + 1: float(v) for j, v in enumerate(r)} for r in X_new[:200]]
    labels, _, _ = svmutil.svm_predict([0] * 200, rows, svmutil.svm_load_model(str(tmp_path / "m.model")), "-q")
    np.testing.assert_array_equal(labels, model.predict(X_new[:200]))


@parametrize_with_checks([leansvm.BSGDOneClassSVM(budget=20, random_state=0)])
def test_one_class_sklearn_conformance(estimator, check):
    check(estimator)
