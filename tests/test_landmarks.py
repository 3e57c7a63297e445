"""Nystroem landmarks + a linear model as kernel expansions (leansvm.budget.landmarks), and the
closed-form ridge refit they share with BSGDRegressor (leansvm.budget.bsgd_refit.ridge_refit)."""

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.linear_model import Ridge

from leansvm.budget.bsgd_refit import kernel_inverse_sqrt, ridge_gcv, ridge_refit
from leansvm.budget.landmarks import LandmarkSVR
from leansvm.core import kernels
from leansvm.core.kernels import Kernel
from leansvm.io import load_model, save_model


@pytest.fixture(scope="module")
def friedman():
    X, z = make_friedman1(n_samples=700, n_features=5, noise=0.3, random_state=0)
    return (X - X.mean(axis=0)) / X.std(axis=0), z


def _ridge_on_features(kernel, SV, X, z, C):
    """scikit-learn's Ridge on F = K(X, SV) K_SV^(-1/2): ||z - F v - b||^2 + 1/(2C) ||v||^2 is C^-1 times
    the refit's objective, so alpha = 1 / (2 C)."""
    inv_sqrt = kernel_inverse_sqrt(kernel, SV)
    ridge = Ridge(alpha=1 / (2 * C), solver="cholesky").fit(kernel.block(X, SV) @ inv_sqrt, z)
    return inv_sqrt @ ridge.coef_, ridge.intercept_


@pytest.mark.parametrize("rows_per_block", [None, 7])
def test_the_ridge_refit_is_ridge_regression_on_the_nystroem_features(friedman, monkeypatch, rows_per_block):
    """The same coefficients and bias as scikit-learn's Ridge, whether F'F is summed in one block
    or in blocks of 7 rows."""
    X, z = friedman
    if rows_per_block is not None:
        monkeypatch.setattr(kernels, "rows_per_block", lambda *a, **k: rows_per_block)
    kernel, SV = Kernel("rbf", 0.3), X[:40]
    alpha, bias = ridge_refit(kernel, SV, X, z, C=5.0)
    ref_alpha, ref_bias = _ridge_on_features(kernel, SV, X, z, 5.0)
    np.testing.assert_allclose(alpha, ref_alpha, rtol=1e-6, atol=1e-8)
    assert bias == pytest.approx(ref_bias, rel=1e-8)


def test_gcv_scores_each_C_by_the_hat_matrix_and_fits_the_least(friedman):
    """Each GCV score against the textbook n ||z - H z||^2 / (n - tr H)^2 with the hat matrix H of
    ridge on the centred features written out (1/n 11' for the intercept); the fit is ridge_refit's at
    the C of the least score."""
    X, z = friedman
    kernel, SV, Cs = Kernel("rbf", 0.3), X[:40], [0.01, 0.3, 10.0, 1e4]
    alpha, bias, chosen, scores = ridge_gcv(kernel, SV, X, z, Cs)
    F = kernel.block(X, SV) @ kernel_inverse_sqrt(kernel, SV)
    Fc, n = F - F.mean(axis=0), X.shape[0]
    for C in Cs:
        H = np.full((n, n), 1.0 / n) + Fc @ np.linalg.solve(Fc.T @ Fc + np.eye(SV.shape[0]) / (2 * C), Fc.T)
        expected = n * np.sum((z - H @ z) ** 2) / (n - np.trace(H)) ** 2
        assert scores[C] == pytest.approx(expected, rel=1e-6)
    assert chosen == min(scores, key=scores.get) and len(set(scores.values())) == len(Cs)
    ref_alpha, ref_bias = ridge_refit(kernel, SV, X, z, chosen)
    np.testing.assert_allclose(alpha, ref_alpha, rtol=1e-6, atol=1e-8)
    assert bias == pytest.approx(ref_bias, rel=1e-8)


def test_landmark_svr_chooses_C_by_gcv_among_Cs(friedman):
    """With ``Cs`` the model is the fixed-C model at the C that GCV chose (``C_``); C itself is unused.
    On these rows (noise 0.3) the tiny C over-regularises and GCV does not choose it."""
    X, z = friedman
    model = LandmarkSVR(budget=60, C=123.0, gamma=0.3, random_state=0, Cs=[1e-3, 1.0, 100.0]).fit(X, z)
    assert model.C_ in (1.0, 100.0) and set(model.gcv_scores_) == {1e-3, 1.0, 100.0}
    fixed = LandmarkSVR(budget=60, C=model.C_, gamma=0.3, random_state=0).fit(X, z)
    np.testing.assert_allclose(model.predict(X[:50]), fixed.predict(X[:50]), rtol=1e-6, atol=1e-8)
    assert LandmarkSVR(budget=60, C=5.0, gamma=0.3).fit(X, z).C_ == 5.0
    for bad, words in (([], "at least one"), ([1.0, -2.0], "each value of Cs"), (["a"], "each value of Cs")):
        with pytest.raises(ValueError, match=words):
            LandmarkSVR(Cs=bad).fit(X, z)


def test_landmark_svr_is_ridge_over_training_rows_as_a_kernel_expansion(friedman):
    X, z = friedman
    model = LandmarkSVR(budget=30, C=10.0, gamma=0.3, random_state=0).fit(X, z)
    # the landmarks are training rows, named by support_
    assert model.n_support_.tolist() == [30] and np.unique(model.support_).size == 30
    np.testing.assert_array_equal(model.support_vectors_, X[model.support_])
    alpha, bias = _ridge_on_features(Kernel("rbf", 0.3), X[model.support_], X, z, 10.0)
    expected = Kernel("rbf", 0.3).block(X[:50], X[model.support_]) @ alpha + bias
    np.testing.assert_allclose(model.predict(X[:50]), expected, rtol=1e-6, atol=1e-8)
    # more landmarks fit the training rows better; the same seed draws the same landmarks
    wider = LandmarkSVR(budget=200, C=10.0, gamma=0.3, random_state=0).fit(X, z)
    assert np.mean((wider.predict(X) - z) ** 2) < np.mean((model.predict(X) - z) ** 2)
    again = LandmarkSVR(budget=30, C=10.0, gamma=0.3, random_state=0).fit(X, z)
    np.testing.assert_array_equal(again.support_, model.support_)


def test_landmark_svr_refuses_bad_input_by_name(friedman):
    X, z = friedman
    with pytest.raises(ValueError, match="budget"):
        LandmarkSVR(budget=0).fit(X, z)
    with pytest.raises(ValueError, match="C must be"):
        LandmarkSVR(C=-1.0).fit(X, z)
    with pytest.raises(ValueError, match="NaN"):
        LandmarkSVR().fit(X, np.where(np.arange(z.size) == 3, np.nan, z))
    # a budget past the rows: every row is a landmark
    assert LandmarkSVR(budget=10_000).fit(X[:20], z[:20]).n_support_.tolist() == [20]


def test_landmark_svr_round_trips_through_the_native_file(friedman, tmp_path):
    X, z = friedman
    model = LandmarkSVR(budget=25, C=3.0, gamma=0.2, random_state=1).fit(X, z)
    save_model(model, tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    assert type(back) is LandmarkSVR
    np.testing.assert_allclose(back.predict(X[:40]), model.predict(X[:40]))
    # the candidates of C travel with the model, so a refit of the loaded model chooses as the first did
    chosen = LandmarkSVR(budget=25, gamma=0.2, random_state=1, Cs=[0.5, 50.0]).fit(X, z)
    save_model(chosen, tmp_path / "c.npz")
    assert load_model(tmp_path / "c.npz").get_params()["Cs"] == [0.5, 50.0]
