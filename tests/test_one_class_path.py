"""The one-class SVM along nu (leansvm.one_class_path): the nu path is a C path of
the problem scaled to sum b = 1, warm-started and screened by the duality-gap rule with the
equality's term in the primal."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import OneClassSVM as LibsvmOneClassSVM

import leansvm
from leansvm.core.problems import DualProblem
from leansvm.paths.screening import gap_screen_from_reference

GAMMA = 0.2


@pytest.fixture(scope="module")
def data():
    X, _ = make_blobs(n_samples=600, centers=3, n_features=4, random_state=0)
    return X


def _libsvm_b(X, nu):
    """LIBSVM's solution at nu in the path's scaling b = a / (nu l), and its margins K b."""
    model = LibsvmOneClassSVM(nu=nu, gamma=GAMMA, tol=1e-8).fit(X)
    a = np.zeros(X.shape[0])
    a[model.support_] = model.dual_coef_[0]
    b = a / (nu * X.shape[0])
    return b, rbf_kernel(X, X, gamma=GAMMA) @ b


@pytest.mark.parametrize("nu, ratio", [(0.2, 1.01), (0.1, 1.02), (0.3, 1.005)])
def test_gap_rule_is_safe_along_nu(data, nu, ratio):
    """From LIBSVM's exact solution at nu, the samples the rule proves inside (a = 0) or outside
    (a = 1, LIBSVM's bound) are there in LIBSVM's solution at nu / ratio, and it proves some."""
    X = data
    n = X.shape[0]
    unit = DualProblem(np.ones(n), np.zeros(n), np.full(n, 1.0 / n), 1.0, None, "one_class")
    b, margins = _libsvm_b(X, nu)
    target, _ = _libsvm_b(X, nu / ratio)
    result = gap_screen_from_reference(b, margins, 1.0 / nu, ratio / nu, unit, np.ones(n), equality=True)
    assert result.n_screened > 0
    a_target = target * (nu / ratio) * n                      # LIBSVM's scaling: 0 <= a <= 1
    assert np.all(a_target[result.in_R] <= 1e-6)
    assert np.all(a_target[result.in_L] >= 1 - 1e-6)


def test_gap_rule_refuses_a_reference_from_a_smaller_box(data):
    n = data.shape[0]
    unit = DualProblem(np.ones(n), np.zeros(n), np.full(n, 1.0 / n), 1.0, None, "one_class")
    b, margins = _libsvm_b(data, 0.2)
    with pytest.raises(ValueError, match="reference"):
        gap_screen_from_reference(b, margins, 1.0 / 0.2, 1.0 / 0.3, unit, np.ones(n), equality=True)


def test_path_equals_libsvm_at_every_nu(data):
    X = data
    X_new = np.random.default_rng(1).uniform(-12, 12, size=(400, 4))
    nus = [0.05, 0.3, 0.1, 0.2]
    points = leansvm.one_class_path(X, nus, gamma=GAMMA, tol=1e-5)
    assert [p.nu for p in points] == sorted(nus, reverse=True)
    for p in points:
        reference = LibsvmOneClassSVM(nu=p.nu, gamma=GAMMA, tol=1e-5).fit(X)
        assert isinstance(p.model, leansvm.OneClassSVM) and p.model.nu == p.nu
        np.testing.assert_allclose(p.model.decision_function(X_new), reference.decision_function(X_new),
                                   rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(p.model.offset_, reference.offset_, rtol=1e-3)
        assert abs(p.model.n_support_[0] - reference.support_.size) <= 2
        # the nu-property: at most a share nu of the training rows outside
        assert np.mean(p.model.decision_function(X) < -1e-6) <= p.nu + 1e-9


def test_screened_path_equals_the_unscreened_one(data):
    nus = 0.2 / 1.01 ** np.arange(6)
    screened = leansvm.one_class_path(data, nus, gamma=GAMMA, tol=1e-5)
    plain = leansvm.one_class_path(data, nus, gamma=GAMMA, tol=1e-5, screening=None)
    assert sum(p.n_screened for p in screened) > 0 and all(p.n_screened == 0 for p in plain)
    for a, b in zip(screened, plain):
        np.testing.assert_allclose(a.model.decision_function(data), b.model.decision_function(data), atol=1e-4)


def test_sample_weights_and_bad_input(data):
    X = data
    w = np.r_[np.zeros(50), np.ones(X.shape[0] - 50)]
    (point,) = leansvm.one_class_path(X, [0.2], gamma=GAMMA, sample_weight=w, tol=1e-5)
    single = leansvm.OneClassSVM(nu=0.2, gamma=GAMMA, tol=1e-5).fit(X[50:])
    np.testing.assert_allclose(point.model.decision_function(X), single.decision_function(X), atol=1e-3)
    assert point.model.support_.min() >= 50
    with pytest.raises(ValueError, match="nu must be in"):
        leansvm.one_class_path(X, [0.5, 1.5])
    with pytest.raises(ValueError, match="distinct"):
        leansvm.one_class_path(X, [0.2, 0.2])
    with pytest.raises(ValueError, match="gap"):
        leansvm.one_class_path(X, [0.2], screening="it")
    with pytest.raises(ValueError, match="NaN|infinity"):
        leansvm.one_class_path(np.where(np.arange(X.size).reshape(X.shape) == 7, np.nan, X), [0.2])
