"""Linear SVM in the primal: sparse rules (w explicit) are safe and the screened optimum is the
unscreened one (and scikit-learn LinearSVC's, the same augmented-bias objective).

Safety tolerance (stated): a sample screened into R has margin >= 1 - 1e-6 at a
solution converged to max PG - min PG <= 1e-9, one screened into L has margin <= 1 + 1e-6.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from leansvm.paths.linear_screening import (fit_liblinear, linear_path, linear_reference, objective,
                                              screen_linear, screened_solve, solve_linear_cd)

from .conftest import SHARED_DATA

TIGHT = 1e-9
MARGIN_TOL = 1e-6


def _sparse_problem(n=400, d=60, seed=0, density=0.15):
    X, y = make_classification(n_samples=n, n_features=d, n_informative=8, flip_y=0.05, random_state=seed)
    rng = np.random.default_rng(seed)
    X = X * (rng.random(X.shape) < density)
    return sp.csr_matrix(X), np.where(y == 1, 1.0, -1.0)


@pytest.fixture(scope="module")
def problem():
    return _sparse_problem()


def _margins(X, y, sol):
    return y * (np.asarray(X @ sol.w).ravel() + sol.intercept)


def test_cd_matches_liblinear_objective(problem):
    X, y = problem
    for C in (0.05, 1.0):
        ours = solve_linear_cd(X, y, C, tol=TIGHT, max_iter=100_000)
        assert ours.converged
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            peer = LinearSVC(C=C, loss="hinge", dual=True, tol=1e-10, max_iter=200_000).fit(X, y)
        o_ours = objective(X, y, ours.w, ours.intercept, C)
        o_peer = objective(X, y, peer.coef_.ravel(), peer.intercept_[0], C)
        assert o_ours == pytest.approx(o_peer, rel=1e-6)
        # w is the dual point's expansion: strong duality at the optimum
        dual = ours.alpha.sum() - 0.5 * (ours.w @ ours.w + ours.w_bias ** 2)
        assert dual == pytest.approx(o_ours, rel=1e-6)


@pytest.mark.parametrize("rule", ["bt1", "bt2", "it"])
def test_rules_are_safe(rule):
    n_screened = 0
    for seed in range(3):
        X, y = _sparse_problem(n=300, d=40, seed=seed)
        for C in (0.1, 1.0):
            exact = solve_linear_cd(X, y, C, tol=TIGHT, max_iter=100_000)
            g = _margins(X, y, exact)
            for ratio in (0.3, 0.7, 0.95):
                C_ref = ratio * C
                ref_sol = solve_linear_cd(X, y, C_ref, tol=1e-3, max_iter=100_000)   # inexact reference
                res = screen_linear(linear_reference(X, y, ref_sol, C_ref), C, rule)
                assert np.all(g[res.in_R] >= 1 - MARGIN_TOL)
                assert np.all(exact.alpha[res.in_R] <= 1e-6 * C)
                assert np.all(g[res.in_L] <= 1 + MARGIN_TOL)
                n_screened += res.n_screened
    assert n_screened > 0


def test_path_screened_equals_unscreened(problem):
    X, y = problem
    Cs = np.logspace(-2, 0, 6)
    screened = linear_path(X, y, Cs, screening="it", tol=1e-8, max_iter=200_000)
    plain = linear_path(X, y, Cs, screening=None, warm_start=False, tol=1e-8, max_iter=200_000)
    assert sum(p.n_screened for p in screened) > 0
    for p, q in zip(screened, plain):
        o_p = objective(X, y, p.solution.w, p.solution.intercept, p.C)
        o_q = objective(X, y, q.solution.w, q.solution.intercept, q.C)
        assert o_p == pytest.approx(o_q, rel=1e-6)
        assert p.n_screened <= p.n_non_sv


def test_liblinear_on_reduced_rows_same_optimum(problem):
    X, y = problem
    C_ref, C = 0.3, 0.4
    ref = linear_reference(X, y, solve_linear_cd(X, y, C_ref, tol=TIGHT, max_iter=100_000), C_ref)
    w, b, _, in_R, _, _, _ = screened_solve(X, y, C, ref, solver="liblinear", tol=1e-10, max_iter=200_000)
    assert in_R.sum() > 0
    w_all, b_all, _ = fit_liblinear(X, y, C, tol=1e-10, max_iter=200_000)
    assert objective(X, y, w, b, C) == pytest.approx(objective(X, y, w_all, b_all, C), rel=1e-6)


def test_bad_input(problem):
    X, y = problem
    with pytest.raises(ValueError, match="labels"):
        solve_linear_cd(X, np.where(y > 0, 1.0, 0.0), 1.0)
    with pytest.raises(ValueError, match="rows"):
        solve_linear_cd(X[:10], y, 1.0)
    Xn = X.copy()
    Xn.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        solve_linear_cd(Xn, y, 1.0)
    with pytest.raises(ValueError, match="screening"):
        linear_path(X, y, [0.1, 1.0], screening="dvi")
    with pytest.warns(ConvergenceWarning):
        solve_linear_cd(X, y, 10.0, tol=1e-12, max_iter=2)


@pytest.mark.skipif(not (SHARED_DATA / "a9a_train.txt").exists(), reason="a9a not in ../shared/data")
def test_a9a_subset_safe():
    from sklearn.datasets import load_svmlight_file
    X, y = load_svmlight_file(str(SHARED_DATA / "a9a_train.txt"), n_features=123)
    X, y = X[:3000], y[:3000]
    C_ref, C = 0.09, 0.1
    exact = solve_linear_cd(X, y, C, tol=1e-8, max_iter=200_000)
    g = _margins(X, y, exact)
    ref = linear_reference(X, y, solve_linear_cd(X, y, C_ref, tol=1e-6, max_iter=200_000), C_ref)
    res = screen_linear(ref, C, "it")
    assert res.n_screened > 0.3 * y.size
    assert np.all(g[res.in_R] >= 1 - MARGIN_TOL) and np.all(g[res.in_L] <= 1 + MARGIN_TOL)
