"""BudgetSVC / budget SMO (Dekel & Singer 2006): exactness against LIBSVM and a generic QP solver,
the paper's Theorems 1 and 2, pruning with bias refit, multi-class models and files, bad input."""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC as SkSVC

from leansvm import BudgetSVC, io
from leansvm.core.sklearn_svc import dual_objectives
from leansvm.core.kernels import Kernel
from leansvm.budget.budget_smo import (interpolation_norm, largest_weights, max_violation, primal_loss,
                                        refit_intercept, solve_budget_smo, violation_and_scale)

from .conftest import libsvm_dual_objectives


def _random_problem(seed, n=None, noise=0.8):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 120)) if n is None else n
    X = rng.normal(size=(n, 3))
    y = np.where(X @ rng.normal(size=3) + noise * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y, rng


# -- B >= n: budget-L1 is the C-SVC -------------------------------------------------------------
@pytest.mark.parametrize("C", [1.0, 10.0])
@pytest.mark.parametrize("cache_size", [200.0, 0.05])   # whole kernel / decomposition with the row cache
def test_large_budget_equals_libsvm(binary_problem, C, cache_size):
    X, y = binary_problem
    ref = SkSVC(C=C, gamma=0.2, tol=1e-3).fit(X, y)
    model = BudgetSVC(budget=X.shape[0], C=C, gamma=0.2, cache_size=cache_size, working_set_size=64).fit(X, y)
    d_ref = libsvm_dual_objectives(ref)[0]
    d_ours = dual_objectives(model.expansion_)[0]
    assert abs(d_ours - d_ref) <= 1e-3 * abs(d_ref)
    # the row cache holds float32 rows (as LIBSVM): the solver's objective is that of the rounded kernel
    assert abs(model.dual_objective_[0] - d_ours) <= (1e-9 if cache_size > 1 else 1e-6) * abs(d_ours)
    assert model.sum_multiplier_[0] == 0.0
    assert abs(model.intercept_[0] - ref.intercept_[0]) < 2e-2
    assert np.mean(model.predict(X) == ref.predict(X)) >= 0.99
    assert model.expansion_.n_support == model.unpruned_expansion_.n_support  # nothing to prune


# -- exactness on budget-constrained problems: a generic QP solver as reference --------------------
@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_budget_dual_matches_generic_qp_solver(norm):
    X, y, _ = _random_problem(3, n=36)
    kernel, C, B = Kernel("rbf", 0.5), 1.5, 6
    Q = (y[:, None] * y[None, :]) * kernel(X)
    S = B * C if norm == "l1" else np.sqrt(B) * C
    cons = [{"type": "eq", "fun": lambda a: y @ a, "jac": lambda a: y},
            {"type": "ineq", "fun": lambda a: S - a.sum(), "jac": lambda a: -np.ones_like(a)}]
    if norm == "l2":
        cons.append({"type": "ineq", "fun": lambda a: C * C - a @ a, "jac": lambda a: -2 * a})
    bounds = [(0, C)] * y.size
    ref = minimize(lambda a: 0.5 * a @ Q @ a - a.sum(), np.zeros(y.size), jac=lambda a: Q @ a - 1,
                   bounds=bounds, constraints=cons, method="SLSQP", options={"ftol": 1e-13, "maxiter": 1000})
    fit = solve_budget_smo(X, y, C, kernel, budget=B, norm=norm, tol=1e-7)
    assert fit.converged
    a = fit.alpha
    assert np.all(a >= 0) and abs(y @ a) < 1e-9 and a.sum() <= S * (1 + 1e-12)
    if norm == "l1":
        assert np.all(a <= C)
    else:
        assert a @ a <= C * C * (1 + 1e-12)
    d = 0.5 * a @ Q @ a - a.sum()
    assert abs(d - fit.dual_objective) < 1e-9
    assert d <= ref.fun + 1e-6 * abs(ref.fun)           # at least as good as SLSQP
    assert abs(d - ref.fun) <= 1e-5 * abs(ref.fun)


def test_l2_paper_smo_never_beats_multiplier_method(binary_problem):
    """The plain SMO with the chord (13) can stall on the 2-norm sphere; the multiplier method cannot."""
    X, y = binary_problem
    yb = np.where(y == 1, 1.0, -1.0)
    kernel = Kernel("rbf", 0.2)
    exact = solve_budget_smo(X, yb, 1.0, kernel, budget=50, norm="l2", tol=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        paper = solve_budget_smo(X, yb, 1.0, kernel, budget=50, norm="l2", tol=1e-5, l2_solver="paper")
    assert exact.converged
    assert np.linalg.norm(paper.alpha) <= 1.0 + 1e-9 and abs(yb @ paper.alpha) < 1e-9
    assert exact.dual_objective <= paper.dual_objective + 1e-9
    assert exact.stats["certified_gap"] <= 1e-6 * 50**0.5


def test_decomposition_matches_whole_kernel_solve(binary_problem):
    X, y = binary_problem
    yb = np.where(y == 1, 1.0, -1.0)
    kernel = Kernel("rbf", 0.2)
    for norm, B in (("l1", 20), ("l2", 50)):
        whole = solve_budget_smo(X, yb, 1.0, kernel, budget=B, norm=norm, tol=1e-4)
        split = solve_budget_smo(X, yb, 1.0, kernel, budget=B, norm=norm, tol=1e-4, cache_size=0.05,
                                 working_set_size=64)
        assert whole.stats["kernel_mode"] == "full" and split.stats["kernel_mode"] == "cache"
        assert abs(whole.dual_objective - split.dual_objective) <= 1e-5 * abs(whole.dual_objective)


# -- Theorem 2 ---------------------------------------------------------------------------------
# -- shrinking (LIBSVM-style, with the sum constraint's multiplier) ----------------------------------
def _exact_violation(fit, X, y, kernel, C, S):
    """(violation, scale) from a gradient recomputed in float64 anew."""
    eta = fit.stats.get("eta", 0.0)
    G = y * (kernel(X) @ (fit.alpha * y)) - 1 + eta * fit.alpha
    slack = S - fit.alpha.sum()
    return violation_and_scale(fit.alpha, y, G, np.full(y.size, C), slack if slack > 1e-9 * S else 0.0)


@pytest.mark.parametrize("norm, B", [("l1", 100), ("l2", 100**2)])   # sum bound 100 C either way
@pytest.mark.parametrize("cache_size", [200.0, 1.0])      # whole kernel matrix / row cache (262 rows)
def test_shrinking_gives_the_same_solution_and_kkt(norm, B, cache_size):
    """Shrinking (with the budget active: rho > 0) reaches the same optimum, KKT holds on the whole set.

    (A sum bound far below the hard-margin solution's 1'a makes rho -> 1 and SMO does not
    converge in reasonable time, with or without shrinking: not used here.)
    """
    X, y, _ = _random_problem(3, n=500, noise=0.5)
    kernel, C, tol = Kernel("rbf", 0.5), 1.0, 1e-4
    kw = dict(budget=B, norm=norm, tol=tol, cache_size=cache_size, kernel_dtype=np.float64, working_set_size=64)
    on = solve_budget_smo(X, y, C, kernel, shrinking=True, **kw)
    off = solve_budget_smo(X, y, C, kernel, shrinking=False, **kw)
    assert on.converged and off.converged
    assert on.stats["kernel_mode"] == ("full" if cache_size > 1 else "cache")
    assert on.stats["rho" if norm == "l1" else "eta"] > 0     # the sum constraint / the ball is active
    assert on.stats["min_active"] < y.size / 2 and on.stats["reconstructions"] >= 1   # it did shrink
    assert off.stats["min_active"] == y.size and off.stats["reconstructions"] == 0
    assert on.dual_objective == pytest.approx(off.dual_objective, rel=1e-5)
    S = B * C if norm == "l1" else B**0.5 * C
    viol, scale = _exact_violation(on, X, y, kernel, C, S)   # KKT on the whole set at the end
    assert viol <= tol * scale * (1 + 1e-6)
    assert abs(on.intercept - off.intercept) < 1e-2 * max(1.0, abs(off.intercept))


def test_shrinking_stopped_early_reports_the_whole_set():
    """max_iter on a shrunk active set: the gradient is reconstructed before returning, so the
    reported violation and objective are those of the whole set (degenerate budget, rho -> 1)."""
    X, y, _ = _random_problem(3, n=500, noise=0.5)
    kernel = Kernel("rbf", 0.5)
    with pytest.warns(ConvergenceWarning):
        fit = solve_budget_smo(X, y, 1.0, kernel, budget=10, tol=1e-4, max_iter=20000)
    assert fit.stats["min_active"] < y.size and fit.stats["reconstructions"] >= 1
    G = y * (kernel(X) @ (fit.alpha * y)) - 1
    slack = 10.0 - fit.alpha.sum()
    exact = max_violation(fit.alpha, y, G, np.ones(y.size), slack if slack > 1e-9 else 0.0)
    assert fit.stats["max_violation"] == pytest.approx(exact, rel=1e-6, abs=1e-12)
    assert fit.dual_objective == pytest.approx(0.5 * fit.alpha @ (G + 1) - fit.alpha.sum(), rel=1e-9)


def test_float32_row_cache_matches_float64():
    X, y, _ = _random_problem(3, n=500, noise=0.5)
    kernel = Kernel("rbf", 0.5)
    fits = [solve_budget_smo(X, y, 1.0, kernel, budget=100, tol=1e-4, cache_size=1.0,
                             kernel_dtype=dtype, working_set_size=64)
            for dtype in (np.float32, np.float64)]
    assert fits[0].stats["kernel_mode"] == "cache" and fits[0].stats["row_requests"] > 0
    assert fits[0].dual_objective == pytest.approx(fits[1].dual_objective, rel=1e-5)
    viol, scale = _exact_violation(fits[0], X, y, kernel, 1.0, 100.0)
    # with the exact kernel, KKT holds up to the float32 rounding of the rows (|dG| <= eps32 1'a)
    assert viol <= 1e-4 * scale + 4 * np.finfo(np.float32).eps * fits[0].alpha.sum()
    viol64, _ = _exact_violation(fits[1], X, y, kernel, 1.0, 100.0)
    assert viol64 <= 1e-4 * scale * (1 + 1e-6)


def test_theorem2_on_random_problems():
    """alpha_k = 0 whenever mu_k > mu_(B) (mu_(B) < 1), hence #SV <= B when mu_(B) != mu_(B+1).

    The corollary's condition rarely holds at budget-L1 optima (free SVs share
    the margin 1 - rho, so mu_(B) = mu_(B+1) once #SV > B); the theorem itself
    is checked sample by sample on every problem, the corollary where it applies.
    """
    checked = 0
    for seed in range(25):
        X, y, rng = _random_problem(seed)
        B = int(rng.integers(2, y.size // 2))
        C, gamma = float(10 ** rng.uniform(-1, 1)), float(10 ** rng.uniform(-1, 0.5))
        kernel = Kernel("rbf", gamma)
        fit = solve_budget_smo(X, y, C, kernel, budget=B, tol=1e-9)
        assert fit.converged
        mu = y * (kernel(X) @ (fit.alpha * y) + fit.intercept)
        mu_sorted = np.sort(mu)
        assert np.count_nonzero(fit.alpha >= C) <= B              # sum a <= B C with a_i = C
        if mu_sorted[B - 1] < 1 - 1e-6:
            beyond = mu > mu_sorted[B - 1] + 1e-6
            assert beyond.any()
            assert np.all(fit.alpha[beyond] == 0), seed
            checked += 1
            if mu_sorted[B] - mu_sorted[B - 1] > 1e-6:
                assert np.count_nonzero(fit.alpha) <= B
    assert checked >= 15


def test_theorem2_corollary_on_small_random_problems():
    """#SV <= B whenever mu_(B) < 1 and mu_(B) != mu_(B+1), over 300 small random problems.

    The condition needs exactly B bounded SVs and no free one, which small
    problems reach now and then (linear and RBF kernels, random labels).
    """
    held = 0
    for seed in range(300):
        rng = np.random.default_rng(seed)
        n, d = int(rng.integers(6, 30)), int(rng.integers(1, 4))
        X = rng.normal(size=(n, d))
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        if abs(y.sum()) == n:
            continue
        B, C, gamma = int(rng.integers(1, n)), float(10 ** rng.uniform(-2, 2)), float(10 ** rng.uniform(-2, 1))
        kernel = Kernel(("rbf", "linear")[seed % 2], gamma)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit = solve_budget_smo(X, y, C, kernel, budget=B, tol=1e-9, max_iter=100_000)
        if not fit.converged:      # a few ill-conditioned 1-D problems converge slowly
            continue
        mu = np.sort(y * (kernel(X) @ (fit.alpha * y) + fit.intercept))
        if mu[B - 1] < 1 - 1e-6 and mu[B] - mu[B - 1] > 1e-6:
            held += 1
            assert np.count_nonzero(fit.alpha) <= B, seed
    assert held >= 2


# -- active budget = nu-SVM; what pruning keeps ------------------------------------------------------
def _blob_pair():
    """Two of scikit-learn's 3 blobs (the hardening check's data), standardised: 200 points."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n_samples=300, random_state=0)
    X = (X - X.mean(0)) / X.std(0)
    keep = y < 2
    return X[keep], np.where(y[keep] == 0, 1.0, -1.0)


@pytest.mark.parametrize("B, C", [(10, 1.0), (5, 3.0), (30, 0.2)])
def test_active_budget_equals_nu_svm(B, C):
    """With 1'a = B C active, min 1/2 a'Qa - 1'a is min 1/2 a'Qa on {0 <= a <= C, y'a = 0, 1'a = B C}:
    LIBSVM's nu-SVC with nu = B/n, scaled by C. Same decisions, proportional alpha."""
    from sklearn.svm import NuSVC

    X, y = _blob_pair()
    kernel = Kernel("rbf", 0.5)
    fit = solve_budget_smo(X, y, C, kernel, budget=B, tol=1e-6)
    assert fit.stats["rho"] > 0 and fit.alpha.sum() == pytest.approx(B * C)
    ref = NuSVC(nu=B / y.size, gamma=0.5, tol=1e-8).fit(X, y)
    a_ref = np.zeros(y.size)
    a_ref[ref.support_] = np.abs(ref.dual_coef_[0])
    K = kernel(X)
    a, r = fit.alpha / fit.alpha.sum(), a_ref / a_ref.sum()
    quad = [(v * y) @ K @ (v * y) for v in (a, r)]                # the nu-SVM objective, normalised
    assert quad[0] == pytest.approx(quad[1], rel=1e-5)
    np.testing.assert_allclose(a, r, atol=1e-3)
    ours = K @ (fit.alpha * y) + fit.intercept
    assert np.mean(np.sign(ours) == np.sign(ref.decision_function(X))) >= 0.99


def test_tolerance_is_relative_to_the_margin_level():
    """rho -> 1 shrinks the whole solution (margin 1 - rho ~ 1e-4 here): the stopping rule scales with it.

    An absolute tol of 1e-3 stopped this problem at a point whose violation was
    larger than its margin (training accuracy 0.81 instead of 0.945).
    """
    X, y = _blob_pair()
    kernel = Kernel("rbf", 0.5)
    fit = solve_budget_smo(X, y, 1.0, kernel, budget=10, tol=1e-3)
    tight = solve_budget_smo(X, y, 1.0, kernel, budget=10, tol=1e-9)
    margin = 1 - tight.stats["rho"]
    assert 0 < margin < 1e-2
    G = y * (kernel(X) @ (fit.alpha * y)) - 1
    viol, scale = violation_and_scale(fit.alpha, y, G, np.ones(y.size), 0.0)
    assert scale < 1e-2 and viol <= 1e-3 * scale
    assert fit.dual_objective - tight.dual_objective <= 1e-3 * margin * abs(tight.dual_objective)
    absolute = solve_budget_smo(X, y, 1.0, kernel, budget=10, tol=1e-3, relative_tol=False)
    G = y * (kernel(X) @ (absolute.alpha * y)) - 1
    assert max_violation(absolute.alpha, y, G, np.ones(y.size), 0.0) <= 1e-3
    assert absolute.n_iter < fit.n_iter


def test_pruning_to_B_keeps_the_margin_errors():
    """Why BudgetSVC(budget=10) is below chance on blobs: at the optimum a_i = C exactly for the margin
    errors (y_i (f_i + b) <= 1 - rho; at most B of them: nu-property) and there are >= B SVs, so the
    B largest weights are the margin errors. Their expansion votes for each one's own label on the wrong
    side of the boundary: anti-correlated with y, and no bias makes it better than a constant."""
    X, y = _blob_pair()
    kernel = Kernel("rbf", 0.5)
    B, C = 10, 1.0
    fit = solve_budget_smo(X, y, C, kernel, budget=B, tol=1e-9)
    K = kernel(X)
    mu = y * (K @ (fit.alpha * y) + fit.intercept)
    level = 1 - fit.stats["rho"]
    bounded = fit.alpha >= C
    assert bounded.sum() <= B <= np.count_nonzero(fit.alpha)
    assert np.all(mu[bounded] <= level + 1e-6) and np.all(mu[fit.alpha == 0] >= level - 1e-6)
    keep = largest_weights(fit.alpha, B)
    assert set(np.flatnonzero(bounded)) <= set(keep)
    f_kept = K[:, keep] @ (fit.alpha[keep] * y[keep])
    assert np.corrcoef(f_kept, y)[0, 1] < -0.3
    best_bias_accuracy = max(np.mean(np.where(f_kept + b >= 0, 1, -1) == y) for b in np.append(-f_kept, 1e9))
    assert best_bias_accuracy <= max(np.mean(y > 0), np.mean(y < 0)) + 0.01
    assert np.mean(np.sign(K @ (fit.alpha * y) + fit.intercept) == y) >= 0.93   # unpruned: fine
    # budget-L2: mu_i + eta a_i = 1 - rho on every SV, so the largest a_i are the smallest margins
    l2 = solve_budget_smo(X, y, C, kernel, budget=B, norm="l2", tol=1e-8)
    sv = l2.alpha > 0
    mu2 = y * (K @ (l2.alpha * y) + l2.intercept)
    eta, level2 = l2.stats["eta"], 1 - l2.stats["rho"]
    assert eta > 0
    np.testing.assert_allclose(mu2[sv] + eta * l2.alpha[sv], level2, atol=1e-6 * max(1.0, eta))


def test_warm_start():
    """alpha0 (a neighbouring B's solution scaled by C_new / C_old) reaches the cold-start optimum."""
    X, y = _blob_pair()
    kernel = Kernel("rbf", 0.5)
    for norm in ("l1", "l2"):
        c_of = (lambda B: 10 / B) if norm == "l1" else (lambda B: 10 / np.sqrt(B))
        prev = solve_budget_smo(X, y, c_of(20), kernel, budget=20, norm=norm, tol=1e-6)
        cold = solve_budget_smo(X, y, c_of(40), kernel, budget=40, norm=norm, tol=1e-6)
        warm = solve_budget_smo(X, y, c_of(40), kernel, budget=40, norm=norm, tol=1e-6,
                                alpha0=prev.alpha * (c_of(40) / c_of(20)), eta0=prev.stats["eta"])
        assert warm.converged
        assert abs(warm.dual_objective - cold.dual_objective) <= 1e-5 * abs(cold.dual_objective)
    with pytest.raises(ValueError, match="alpha0"):
        solve_budget_smo(X, y, 1.0, kernel, budget=10, alpha0=np.ones(y.size))


# -- Theorem 1, pruning, bias refit -------------------------------------------------------------
def test_interpolation_norms_theorem1():
    rng = np.random.default_rng(0)
    v = rng.normal(size=50)
    top = np.sort(np.abs(v))[::-1]
    for B in (1, 7, 50):
        assert interpolation_norm(v, B, "l1") == pytest.approx(top[:B].sum())
        k2 = interpolation_norm(v, B, "l2")
        # brute force of the K-functional min_phi ||(|v| - phi)_+||_2 + sqrt(B) phi
        phis = np.linspace(0, top[0], 20001)
        brute = min(np.linalg.norm(np.maximum(top - p, 0)) + np.sqrt(B) * p for p in phis)
        assert k2 == pytest.approx(brute, rel=1e-6, abs=1e-9) and k2 <= brute + 1e-12
        lower = np.sqrt((top[:B] ** 2).sum())
        assert lower - 1e-12 <= k2 <= lower + np.sqrt(B) * top[B - 1] + 1e-12   # Theorem 1's bounds


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_refit_intercept_minimises_primal_loss(norm):
    rng = np.random.default_rng(1)
    y = np.where(rng.random(80) < 0.4, 1.0, -1.0)
    f = 0.8 * y + rng.normal(size=80)
    for B in (3, 10, 80):
        b = refit_intercept(f, y, B, norm)
        grid = np.linspace(-4, 4, 4001)
        best = min(primal_loss(f, y, g, B, norm) for g in grid)
        assert primal_loss(f, y, b, B, norm) <= best + 1e-7


def test_largest_weights():
    alpha = np.array([0.0, 0.5, 0.2, 0.5, 0.1, 0.0])
    assert largest_weights(alpha, 2).tolist() == [1, 3]
    assert largest_weights(alpha, 10).tolist() == [1, 2, 3, 4]


def test_pruning_keeps_s_largest_and_exposes_unpruned(binary_problem):
    X, y = binary_problem
    model = BudgetSVC(budget=15, C=1.0, gamma=0.2, n_keep=10, refit_bias="primal").fit(X, y)
    unpruned = BudgetSVC(budget=15, C=1.0, gamma=0.2, prune=False).fit(X, y)
    assert model.expansion_.n_support == 10 and model.n_support_.sum() == 10
    assert unpruned.expansion_.n_support > 10
    np.testing.assert_allclose(model.unpruned_expansion_.coef, unpruned.expansion_.coef)
    np.testing.assert_allclose(model.unpruned_expansion_.intercept, unpruned.expansion_.intercept)
    kept = np.abs(model.expansion_.coef[:, 0])
    dropped = np.setdiff1d(np.abs(unpruned.expansion_.coef[:, 0]), kept)
    assert kept.min() >= dropped.max()
    # the refit bias minimises the top-B hinge loss of the pruned outputs
    yb = np.where(y == model.classes_[1], 1.0, -1.0)
    f = model.expansion_.decision_function(X)[:, 0] - model.intercept_[0]
    b = model.intercept_[0]
    for shift in (-0.05, 0.05):
        assert primal_loss(f, yb, b, 15) <= primal_loss(f, yb, b + shift, 15) + 1e-12
    kept_bias = BudgetSVC(budget=15, C=1.0, gamma=0.2, n_keep=10, refit_bias="none").fit(X, y)
    np.testing.assert_allclose(kept_bias.intercept_, unpruned.intercept_)
    kkt = BudgetSVC(budget=15, C=1.0, gamma=0.2, n_keep=10).fit(X, y)
    np.testing.assert_allclose(kkt.expansion_.coef, model.expansion_.coef)


# -- estimator: multi-class, files, scikit-learn API ----------------------------------------------
@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_multiclass_files_roundtrip(multiclass_problem, tmp_path, norm):
    X, y = multiclass_problem
    model = BudgetSVC(budget=40, C=2.0, gamma=0.5, norm=norm).fit(X, y)
    assert model.expansion_.n_outputs == 6 and model.dual_coef_.shape == (3, model.expansion_.n_support)
    assert np.all(np.count_nonzero(model.expansion_.coef, axis=0) <= 40)
    assert model.unpruned_expansion_.n_support > model.expansion_.n_support
    unpruned = BudgetSVC(budget=40, C=2.0, gamma=0.5, norm=norm, prune=False).fit(X, y)
    assert unpruned.score(X, y) > 0.85
    io.save_libsvm_model(model, tmp_path / "m.model")
    loaded = io.load_libsvm_model(tmp_path / "m.model")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    io.save_model(model, tmp_path / "m.npz")
    native = io.load_model(tmp_path / "m.npz")
    assert type(native).__name__ == "BudgetSVC" and native.norm == norm and native.budget == 40
    np.testing.assert_array_equal(native.predict(X), model.predict(X))


def test_libsvm_official_reads_budget_model(binary_problem, tmp_path):
    svmutil = pytest.importorskip("libsvm.svmutil")
    X, y = binary_problem
    model = BudgetSVC(budget=30, C=1.0, gamma=0.2).fit(X, y)
    io.save_libsvm_model(model, tmp_path / "b.model")
    m = svmutil.svm_load_model(str(tmp_path / "b.model"))
    labels, _, _ = svmutil.svm_predict(y.tolist(), X.tolist(), m, "-q")
    np.testing.assert_array_equal(np.asarray(labels), model.predict(X))


def test_ovr_and_params(multiclass_problem):
    X, y = multiclass_problem
    model = BudgetSVC(budget=30, gamma=0.5, multiclass="ovr").fit(X, y)
    assert model.expansion_.n_outputs == 4 and model.decision_function(X).shape == (X.shape[0], 4)
    assert model.get_params()["budget"] == 30
    assert model.set_params(norm="l2").norm == "l2"


# -- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize("params, match", [
    ({"budget": 0}, "budget"), ({"budget": 2.5}, "budget"), ({"norm": "l3"}, "norm"),
    ({"n_keep": -1}, "n_keep"), ({"C": -1.0}, "C"), ({"tol": 0}, "tol"), ({"l2_solver": "x"}, "l2_solver"),
    ({"refit_bias": "x"}, "refit_bias"),
])
def test_bad_parameters(binary_problem, params, match):
    X, y = binary_problem
    with pytest.raises(ValueError, match=match):
        BudgetSVC(**params).fit(X, y)


def test_bad_data():
    X = np.random.default_rng(0).normal(size=(20, 3))
    y = np.array([0, 1] * 10)
    with pytest.raises(ValueError, match="NaN|infinity"):
        BudgetSVC().fit(np.where(X > 1.5, np.nan, X), y)
    with pytest.raises(ValueError, match="one"):
        BudgetSVC().fit(X, np.zeros(20))
    with pytest.raises(ValueError):
        BudgetSVC().fit(X, y[:5])


def test_max_iter_warns(binary_problem):
    X, y = binary_problem
    with pytest.warns(ConvergenceWarning):
        model = BudgetSVC(budget=20, gamma=0.2, max_iter=5).fit(X, y)
    assert model.fit_status_ == 1


def test_global_violation_matches_stopping_rule(binary_problem):
    X, y = binary_problem
    yb = np.where(y == 1, 1.0, -1.0)
    kernel = Kernel("rbf", 0.2)
    fit = solve_budget_smo(X, yb, 1.0, kernel, budget=20, tol=1e-4)
    G = yb * (kernel(X) @ (fit.alpha * yb)) - 1
    slack = 20.0 - fit.alpha.sum()
    slack = slack if slack > 1e-12 else 0.0
    viol, scale = violation_and_scale(fit.alpha, yb, G, np.full(yb.size, 1.0), slack)
    assert viol == max_violation(fit.alpha, yb, G, np.full(yb.size, 1.0), slack)
    assert viol <= 1e-4 * scale


# -- command line ----------------------------------------------------------------------------------
def test_cli_train_budget(binary_problem, tmp_path, capsys):
    from sklearn.datasets import dump_svmlight_file

    from leansvm import cli

    X, y = binary_problem
    data = tmp_path / "train.txt"
    dump_svmlight_file(X, np.where(y == 1, 1, -1), str(data), zero_based=False)
    model_path = tmp_path / "b.model"
    assert cli.main(["train", "--algorithm", "budget-l2", "--budget", "25", "-g", "0.2", "-q",
                     str(data), str(model_path)]) == 0
    model = io.load_libsvm_model(model_path)
    assert model.expansion_.n_support == 25
    assert cli.main(["train", "--algorithm", "budget-l1", str(data), str(model_path)]) == 2
    assert "--budget" in capsys.readouterr().err
