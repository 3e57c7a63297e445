"""Epsilon-SVR paths (leansvm.svr_path) and the duality-gap screening rule on SVR's two-sided loss."""

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.svm import SVR as LibsvmSVR

import leansvm
from leansvm.core.problems import epsilon_svr
from leansvm.paths.screening import gap_screen_from_reference


@pytest.fixture(scope="module")
def data():
    X, z = make_friedman1(n_samples=400, n_features=5, noise=0.3, random_state=0)
    return (X - X.mean(0)) / X.std(0), (z - z.mean()) / z.std()


def _libsvm_alpha(X, z, C, epsilon):
    """[alpha; alpha*] and the outputs without bias of LIBSVM's solution (tol 1e-9)."""
    model = LibsvmSVR(C=C, gamma=0.2, epsilon=epsilon, tol=1e-9).fit(X, z)
    coef = np.zeros(z.size)
    coef[model.support_] = model.dual_coef_[0]
    return np.concatenate([np.maximum(coef, 0), np.maximum(-coef, 0)]), model.predict(X) - model.intercept_[0]


@pytest.mark.parametrize("epsilon, C, rho", [(0.1, 0.1, 1.01), (0.3, 0.1, 1.1), (0.3, 1.0, 1.01)])
def test_gap_rule_is_safe_on_svr(data, epsilon, C, rho):
    """From LIBSVM's exact solution at C, the variables the gap rule proves at 0 (inside the tube
    on their side) or at rho C (outside it) are there in LIBSVM's solution at rho C, and it proves
    some of each."""
    X, z = data
    unit = epsilon_svr(z, np.ones(z.size), epsilon)
    alpha, f = _libsvm_alpha(X, z, C, epsilon)
    target, _ = _libsvm_alpha(X, z, rho * C, epsilon)
    result = gap_screen_from_reference(alpha, unit.y * f[unit.rows], C, rho * C, unit, np.ones(unit.n),
                                       equality=True)
    assert result.in_R.sum() > 0 and result.in_L.sum() > 0
    assert np.all(target[result.in_R] <= 1e-7)
    assert np.all(target[result.in_L] >= rho * C - 1e-7)


def test_svr_path_equals_independent_fits(data):
    X, z = data
    Cs = [0.1, 0.3, 1.0, 3.0]
    screened = leansvm.svr_path(X, z, Cs, gamma=0.2, epsilon=0.1, tol=1e-5)
    plain = leansvm.svr_path(X, z, Cs, gamma=0.2, epsilon=0.1, tol=1e-5, screening=None)
    assert [p.C for p in screened] == Cs
    for a, b in zip(screened, plain):
        single = leansvm.SVR(C=a.C, gamma=0.2, epsilon=0.1, tol=1e-5).fit(X, z)
        reference = LibsvmSVR(C=a.C, gamma=0.2, epsilon=0.1, tol=1e-5).fit(X, z)
        assert isinstance(a.model, leansvm.SVR) and a.model.C == a.C
        np.testing.assert_allclose(a.model.predict(X), b.model.predict(X), atol=1e-3)
        np.testing.assert_allclose(a.model.predict(X), single.predict(X), atol=1e-3)
        np.testing.assert_allclose(a.model.predict(X), reference.predict(X), atol=1e-3)
        np.testing.assert_allclose(a.model.dual_objective_, single.dual_objective_, rtol=1e-4)


def test_svr_path_bad_input(data):
    X, z = data
    with pytest.raises(ValueError, match="gap"):
        leansvm.svr_path(X, z, [1.0], screening="it")
    with pytest.raises(ValueError, match="NaN"):
        leansvm.svr_path(X, np.where(np.arange(z.size) == 3, np.nan, z), [1.0])
    with pytest.raises(ValueError, match="epsilon"):
        leansvm.svr_path(X, z, [1.0], epsilon=-0.1)
    with pytest.raises(ValueError, match="positive"):
        leansvm.svr_path(X, z, [0.0, 1.0])


def test_svrcv_chooses_as_grid_search_over_the_same_grid(data):
    """The same folds and grid as GridSearchCV(leansvm.SVR): the same best cell (scores to the
    solver tolerance), refitted on all rows."""
    from sklearn.model_selection import GridSearchCV, KFold
    X, z = data
    Cs, gammas = [0.1, 1.0, 10.0], [0.05, 0.5]
    folds = KFold(3, shuffle=True, random_state=0)
    cv = leansvm.SVRCV(Cs=Cs, gammas=gammas, cv=folds, tol=1e-5).fit(X, z)
    grid = GridSearchCV(leansvm.SVR(tol=1e-5), {"C": Cs, "gamma": gammas}, cv=folds).fit(X, z)
    assert cv.best_params_ == grid.best_params_
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"], grid.cv_results_["mean_test_score"], atol=1e-4)
    single = leansvm.SVR(tol=1e-5, **cv.best_params_).fit(X, z)
    np.testing.assert_allclose(cv.predict(X), single.predict(X), atol=1e-4)   # both solved to tol 1e-5


def test_svrcv_searches_epsilon_as_grid_search(data):
    """A list of epsilon is a third axis: the same cells, order, scores and best cell as
    GridSearchCV over C, epsilon and gamma."""
    from sklearn.model_selection import GridSearchCV, KFold
    X, z = data
    Cs, gammas, epsilons = [0.3, 3.0], [0.05, 0.5], [0.05, 0.5]
    folds = KFold(3, shuffle=True, random_state=0)
    cv = leansvm.SVRCV(Cs=Cs, gammas=gammas, epsilon=epsilons, cv=folds, tol=1e-5).fit(X, z)
    grid = GridSearchCV(leansvm.SVR(tol=1e-5), {"C": Cs, "epsilon": epsilons, "gamma": gammas}, cv=folds).fit(X, z)
    assert cv.cv_results_["params"] == grid.cv_results_["params"]
    assert cv.best_params_ == grid.best_params_ and set(cv.best_params_) == {"C", "epsilon", "gamma"}
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"], grid.cv_results_["mean_test_score"], atol=1e-4)
    assert list(cv.cv_results_["param_epsilon"]) == list(grid.cv_results_["param_epsilon"])
    np.testing.assert_allclose(cv.predict(X), leansvm.SVR(tol=1e-5, **cv.best_params_).fit(X, z).predict(X),
                               atol=1e-4)
    with pytest.raises(ValueError, match="epsilon"):
        leansvm.SVRCV(Cs=Cs, epsilon=[0.1, -1.0]).fit(X, z)


def test_gap_rule_is_skipped_after_a_step_where_it_proves_nothing(data, monkeypatch):
    """Along coarse C steps (ratio 10) the gap rule proves nothing on SVR: after such a step the next
    ones skip it, except every 4th, which probes again; at fine steps, where it proves >= 1 % of the
    variables, it runs at every step. The solutions are the same either way (a skipped rule only
    screens fewer variables)."""
    from leansvm.paths import binary_path
    X, z = data
    calls = []
    real = binary_path.gap_screen_from_reference

    def counting(*args, **kwargs):
        result = real(*args, **kwargs)
        calls.append(int(result.in_R.sum() + result.in_L.sum()))
        return result

    monkeypatch.setattr(binary_path, "gap_screen_from_reference", counting)
    coarse = leansvm.svr_path(X, z, np.logspace(-2, 5, 8), gamma=0.2, epsilon=0.1)
    assert max(calls) < 0.01 * 2 * z.size and len(calls) == 2       # k = 1, then the probe at k = 4
    plain = leansvm.svr_path(X, z, np.logspace(-2, 5, 8), gamma=0.2, epsilon=0.1, screening=None)
    for a, b in zip(coarse, plain):
        np.testing.assert_allclose(a.model.predict(X), b.model.predict(X), atol=5e-3)
    calls.clear()
    leansvm.svr_path(X, z, 0.1 * 1.01 ** np.arange(6), gamma=0.2, epsilon=0.3)
    assert len(calls) == 5 and min(calls) >= 0.01 * 2 * z.size
