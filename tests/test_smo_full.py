"""SMO on the whole Q (leansvm.exact.smo_full), the exact solver's route for small problems: the same
optimum as chunked IRWLS and LIBSVM's, KKT at tol, every problem form, and very large C."""

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC as LibSVC

from leansvm.core.kernels import Kernel
from leansvm.core.problems import c_svc, epsilon_svr, nu_svc, one_class
from leansvm.exact import smo_full
from leansvm.exact.irwls import solve_irwls


def _iris_pair(a=1, b=2):
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    keep = (y == a) | (y == b)
    return X[keep], np.where(y[keep] == a, 1.0, -1.0)


@pytest.mark.parametrize("C, gamma", [(1.0, 0.1), (100.0, 1.0), (1e10, 1e-5), (1e10, 1e-4)])
def test_small_problems_reach_the_optimum_at_least_as_low_as_libsvm_s(C, gamma):
    """iris versicolor against virginica: the route is SMO (100 variables), the violation is within
    tol, the dual objective is at most IRWLS's and LIBSVM's (at C = 1e10 LIBSVM stops far above it)."""
    X, y = _iris_pair()
    problem, kernel = c_svc(y, np.full(y.size, C)), Kernel("rbf", gamma=gamma)
    fit = solve_irwls(X, problem, kernel, tol=1e-3)
    assert fit.stats["route"] == "smo" and fit.converged and fit.stats["violation"] <= 1e-3
    irwls = solve_irwls(X, problem, kernel, tol=1e-3, method="irwls")
    scale = max(1.0, abs(irwls.dual_objective))
    assert fit.dual_objective <= irwls.dual_objective + 1e-3 * scale
    lib = LibSVC(C=C, gamma=gamma).fit(X, y)
    alpha = np.zeros(y.size)
    alpha[lib.support_] = np.abs(lib.dual_coef_[0])
    Q = np.outer(y, y) * kernel(X)
    assert fit.dual_objective <= 0.5 * alpha @ Q @ alpha - alpha.sum() + 1e-3 * scale
    np.testing.assert_allclose(y @ fit.alpha, 0.0, atol=1e-6 * max(1.0, fit.alpha.max()))
    assert np.all((fit.alpha >= 0) & (fit.alpha <= C))


def test_every_problem_form_matches_irwls():
    """epsilon-SVR (two variables a sample), nu-SVC (one equality per sign) and one-class: the same
    dual objective as chunked IRWLS within the tolerance."""
    X, y = _iris_pair(0, 1)
    z = X[:, 0] + 0.3 * X[:, 1]
    kernel = Kernel("rbf", gamma=0.5)
    for problem, rows in ((epsilon_svr(z, 10.0, 0.1), 2 * z.size),
                          (nu_svc(y, 0.3, np.ones(y.size)), y.size),
                          (one_class(0.2, np.ones(y.size)), y.size)):
        fit = solve_irwls(X, problem, kernel, tol=1e-4)
        assert fit.stats["route"] == "smo" and fit.alpha.size == rows and fit.converged
        irwls = solve_irwls(X, problem, kernel, tol=1e-4, method="irwls")
        assert fit.dual_objective == pytest.approx(irwls.dual_objective, rel=1e-3, abs=1e-4)


def test_the_route_is_irwls_above_the_crossover_and_where_rows_are_shared():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(smo_full.MAX_ROWS + 1, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    fit = solve_irwls(X, c_svc(y, np.ones(y.size)), Kernel("rbf", gamma=0.5))
    assert "route" not in fit.stats
    with pytest.raises(ValueError, match="method must be"):
        solve_irwls(X, c_svc(y, np.ones(y.size)), Kernel("rbf", gamma=0.5), method="fast")


def test_a_newton_step_on_the_right_free_set_lands_on_the_optimum():
    """From an SMO point whose free set is the optimum's, one Newton step leaves a violation at
    rounding level (pair steps alone take many thousands of steps at C = 1e10)."""
    X, y = _iris_pair()
    C = np.full(y.size, 1e10)
    fit = solve_irwls(X, c_svc(y, C), Kernel("rbf", gamma=1e-4), tol=1e-9)
    Q = smo_full.signed_matrix(Kernel("rbf", gamma=1e-4), X, y)
    alpha = fit.alpha.copy()
    free = (alpha > 0) & (alpha < C)
    alpha[free] *= 1.001                                       # off the optimum, on its free set
    alpha[free] -= (y[free] @ alpha[free] - y[free] @ fit.alpha[free]) * y[free] / free.sum()
    G = Q @ alpha - 1.0
    before = smo_full._violation(alpha, y, G, C, 1)[0]
    assert smo_full.newton_on_free(Q, y, C, alpha, G, 1)
    after = smo_full._violation(alpha, y, G, C, 1)[0]
    assert after < 1e-6 * before


def test_extreme_c_takes_newton_steps_between_short_bursts_not_a_million_pair_steps():
    """Three blobs of 240 rows (the build's workload data), C = 1e10, gamma = 1e-5, an almost linear
    hard margin: with bursts that doubled, a pair took 413,000 and 914,000 pair steps (2 s against
    LIBSVM's 21 ms). Short bursts sized to a Newton step's cost end each pair in a few thousand
    steps, at an objective no higher than LIBSVM's, and the free set's last step polishes it."""
    from leansvm.precompile import _data
    X, _, y3, _, _ = _data()
    kernel = Kernel("rbf", gamma=1e-5)
    for a, b in ((0, 1), (0, 2), (1, 2)):
        keep = (y3 == a) | (y3 == b)
        Xp, y = X[keep], np.where(y3[keep] == a, 1.0, -1.0)
        fit = solve_irwls(Xp, c_svc(y, np.full(y.size, 1e10)), kernel, tol=1e-3)
        assert fit.converged and fit.stats["route"] == "smo"
        assert fit.stats["pair_steps"] < 5000 and fit.stats["newton_steps"] <= 2 * y.size
        lib = LibSVC(C=1e10, gamma=1e-5).fit(Xp, y)
        alpha = np.zeros(y.size)
        alpha[lib.support_] = np.abs(lib.dual_coef_[0])
        Q = np.outer(y, y) * kernel(Xp)
        assert fit.dual_objective <= 0.5 * alpha @ Q @ alpha - alpha.sum() + 1e-6 * abs(fit.dual_objective)


def test_a_low_rank_kernel_reaches_its_optimum_by_steps_along_flat_directions():
    """iris versicolor against virginica, raw features, linear kernel (rank 4), C = 1e6: the free set
    grows past the rank, the Newton system has no solution, and pair steps alone took 4.9 million
    steps (4 s; LIBSVM 0.07 s at an objective 22 % higher). Steps of no curvature to the box drop a
    free variable each; the solve ends in a few hundred pair steps at an objective at most LIBSVM's,
    with y'a = 0."""
    X, y3 = load_iris(return_X_y=True)
    keep = y3 > 0
    X, y = X[keep], np.where(y3[keep] == 1, 1.0, -1.0)
    C = 1e6
    kernel = Kernel("linear")
    fit = solve_irwls(X, c_svc(y, np.full(y.size, C)), kernel, tol=1e-3)
    assert fit.converged and fit.stats["route"] == "smo" and fit.stats["pair_steps"] < 5000
    np.testing.assert_allclose(y @ fit.alpha, 0.0, atol=1e-6 * C)
    lib = LibSVC(kernel="linear", C=C).fit(X, y)
    alpha = np.zeros(y.size)
    alpha[lib.support_] = np.abs(lib.dual_coef_[0])
    Q = np.outer(y, y) * kernel(X)
    assert fit.dual_objective <= 0.5 * alpha @ Q @ alpha - alpha.sum()


def test_a_flat_direction_keeps_the_equality_has_no_curvature_and_descends():
    """``_flat_direction`` on a singular system whose right-hand side is outside its range: d with
    y_F'd = 0 to rounding, Q_FF d = 0 where the equality's multiplier is absent, and G_F'd < 0; on a
    solvable system, the solution itself."""
    v = np.array([1.0, 2.0, 0.0, -1.0])
    Q_FF = np.outer(v, v)                                  # rank 1
    y_F = np.array([1.0, -1.0, 1.0, -1.0])
    G_F = np.array([-1.0, 0.5, -2.0, 0.3])
    system = np.zeros((5, 5))
    system[:4, :4], system[:4, 4], system[4, :4] = Q_FF, y_F, y_F
    rhs = np.concatenate([-G_F, [0.0]])
    solution = np.linalg.lstsq(system, rhs, rcond=None)[0]
    flat, d = smo_full._flat_direction(system, rhs - system @ solution, np.abs(rhs).max(), solution, 4)
    assert flat
    assert abs(y_F @ d) <= 1e-12 * np.abs(d).max() and G_F @ d < 0
    assert d @ Q_FF @ d <= 1e-12 * (d @ d)
    solvable = system @ np.array([0.3, -0.2, 0.1, 0.4, 0.0])
    solution = np.linalg.lstsq(system, solvable, rcond=None)[0]
    flat, d = smo_full._flat_direction(system, solvable - system @ solution, np.abs(solvable).max(), solution, 4)
    assert not flat
    np.testing.assert_array_equal(d, solution[:4])


def test_the_polish_solves_by_lu_and_falls_back_to_least_squares_on_a_singular_free_block():
    """``_solve_or_least_squares``: LU's answer where it reproduces the right-hand side, the minimum-norm
    least-squares answer on a singular system (two equal rows), never LU's noise."""
    A = np.array([[2.0, 1.0], [1.0, 3.0]])
    b = np.array([1.0, 2.0])
    np.testing.assert_allclose(smo_full._solve_or_least_squares(A, b), np.linalg.solve(A, b))
    S = np.array([[1.0, 1.0], [1.0, 1.0]])
    c = np.array([2.0, 2.0])
    np.testing.assert_allclose(smo_full._solve_or_least_squares(S, c), [1.0, 1.0])
