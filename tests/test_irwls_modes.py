"""solve_irwls beyond LIBSVM's problem: no-bias / augmented-bias box QPs, warm starts, fixed samples."""

import numpy as np
import pytest
import scipy.optimize
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

from leansvm.core.kernels import Kernel
from leansvm.core.problems import c_svc
from leansvm.exact.box_cd import box_start
from leansvm.exact.irwls import solve_irwls


@pytest.fixture(scope="module")
def problem():
    X, y = make_classification(n_samples=120, n_features=5, n_informative=3, flip_y=0.1,
                               random_state=3)
    return StandardScaler().fit_transform(X), np.where(y > 0, 1.0, -1.0)


def box_qp_reference(K, y, C):
    """min 1/2 a'Ha - 1'a over 0 <= a <= C by L-BFGS-B to high precision (small n only)."""
    H = (y[:, None] * y[None, :]) * K
    res = scipy.optimize.minimize(lambda a: (0.5 * a @ H @ a - a.sum(), H @ a - 1.0),
                                  np.zeros(y.size), jac=True, method="L-BFGS-B",
                                  bounds=[(0, c) for c in C],
                                  options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 20000})
    return res.x, res.fun


@pytest.mark.parametrize("bias,offset", [("augmented", 1.0), ("none", 0.0)])
def test_box_modes_match_reference_qp(problem, bias, offset):
    X, y = problem
    kernel = Kernel("rbf", gamma=0.3)
    C = np.full(y.size, 2.0)
    fit = solve_irwls(X, c_svc(y, C), kernel, tol=1e-6, bias=bias, random_state=0)
    K = kernel(X) + offset
    _, ref_obj = box_qp_reference(K, y, C)
    assert fit.converged
    assert fit.dual_objective == pytest.approx(ref_obj, rel=1e-6)
    # KKT of the box QP at the returned point, and the plain-kernel expansion reproduces f
    f = K @ (y * fit.alpha)
    gap, _, _ = c_svc(y, C).kkt_violation(fit.alpha, f, equality=False)
    assert gap <= 1e-6
    assert fit.intercept == pytest.approx(offset * float(y @ fit.alpha))
    f_plain = kernel(X) @ (y * fit.alpha) + fit.intercept
    np.testing.assert_allclose(f_plain, f, atol=1e-9)


@pytest.mark.parametrize("bias", ["equality", "augmented", "none"])
def test_fixed_samples_give_the_unscreened_optimum(problem, bias):
    X, y = problem
    kernel = Kernel("rbf", gamma=0.3)
    C = np.full(y.size, 1.0)
    full = solve_irwls(X, c_svc(y, C), kernel, tol=1e-7, bias=bias, random_state=0)
    at_zero = full.alpha == 0
    at_C = full.alpha == C
    assert at_zero.sum() > 5 and at_C.sum() > 5       # the test means something
    # fix a part of each set (as a screening rule would), solve the rest
    rng = np.random.default_rng(0)
    fixed0 = at_zero & (rng.random(y.size) < 0.7)
    fixedC = at_C & (rng.random(y.size) < 0.7)
    screened = solve_irwls(X, c_svc(y, C), kernel, tol=1e-7, bias=bias, random_state=1,
                           fixed_at_zero=fixed0, fixed_at_C=fixedC)
    assert screened.stats["n_active"] == y.size - fixed0.sum() - fixedC.sum()
    assert np.all(screened.alpha[fixed0] == 0) and np.all(screened.alpha[fixedC] == C[fixedC])
    assert screened.dual_objective == pytest.approx(full.dual_objective, rel=1e-7)
    np.testing.assert_allclose(screened.alpha, full.alpha, atol=1e-4)
    assert screened.intercept == pytest.approx(full.intercept, abs=1e-4)


@pytest.mark.parametrize("bias", ["equality", "augmented"])
def test_warm_start_reaches_the_same_optimum(problem, bias):
    X, y = problem
    kernel = Kernel("rbf", gamma=0.3)
    small = solve_irwls(X, c_svc(y, np.full(y.size, 0.5)), kernel, tol=1e-6, bias=bias, random_state=0)
    C = np.full(y.size, 2.0)
    cold = solve_irwls(X, c_svc(y, C), kernel, tol=1e-6, bias=bias, random_state=0)
    warm = solve_irwls(X, c_svc(y, C), kernel, tol=1e-6, bias=bias, random_state=0,
                       alpha_init=small.alpha)
    assert warm.converged
    assert warm.dual_objective == pytest.approx(cold.dual_objective, rel=1e-7)


def test_infeasible_warm_start_is_restored_to_the_equality(problem):
    X, y = problem
    kernel = Kernel("rbf", gamma=0.3)
    C = np.full(y.size, 1.0)
    ref = solve_irwls(X, c_svc(y, C), kernel, tol=1e-6, random_state=0)
    start = np.where(y > 0, 0.9, 0.1)               # y'a far from 0
    fit = solve_irwls(X, c_svc(y, C), kernel, tol=1e-6, random_state=0, alpha_init=start)
    assert abs(float(y @ fit.alpha)) < 1e-8
    assert fit.dual_objective == pytest.approx(ref.dual_objective, rel=1e-7)


@pytest.mark.parametrize("bias,offset", [("equality", 0.0), ("augmented", 1.0)])
def test_known_start_outputs_give_the_same_optimum(problem, bias, offset):
    """initial_outputs (f at alpha_init) replaces the start-up product; samples whose start moves
    (screened to a bound, clipped, shifted to y'a = 0) are corrected with their own columns."""
    X, y = problem
    kernel = Kernel("rbf", gamma=0.3)
    C = np.full(y.size, 2.0)
    full = solve_irwls(X, c_svc(y, C), kernel, tol=1e-7, bias=bias, random_state=0)
    fixed0 = (full.alpha == 0) & (np.arange(y.size) % 2 == 0)
    fixedC = (full.alpha == C) & (np.arange(y.size) % 2 == 0)
    assert fixed0.sum() > 5 and fixedC.sum() > 5
    start = np.where(y > 0, 0.9, 0.3) * np.random.default_rng(0).random(y.size) * 3.0   # some above C
    f0 = (kernel(X) + offset) @ (y * start)
    args = dict(tol=1e-7, bias=bias, random_state=0, alpha_init=start, fixed_at_zero=fixed0, fixed_at_C=fixedC)
    plain = solve_irwls(X, c_svc(y, C), kernel, **args)
    known = solve_irwls(X, c_svc(y, C), kernel, initial_outputs=f0, **args)
    assert known.converged
    assert known.dual_objective == pytest.approx(plain.dual_objective, rel=1e-8)
    assert known.dual_objective == pytest.approx(full.dual_objective, rel=1e-7)
    np.testing.assert_allclose(known.alpha, plain.alpha, atol=1e-6)
    np.testing.assert_allclose(known.stats["outputs"], (kernel(X) + offset) @ (y * known.alpha), atol=1e-8)
    # the given outputs are what the solve starts from (not recomputed): shifted ones move the solution
    shifted = solve_irwls(X, c_svc(y, C), kernel, initial_outputs=f0 + 0.5 * y, **args)
    assert np.abs(shifted.alpha - plain.alpha).max() > 1e-3
    with pytest.raises(ValueError, match="alpha_init"):
        solve_irwls(X, c_svc(y, C), kernel, bias=bias, initial_outputs=f0)
    with pytest.raises(ValueError, match="initial_outputs"):
        solve_irwls(X, c_svc(y, C), kernel, bias=bias, alpha_init=start, initial_outputs=f0[:-1])


def test_bad_arguments_are_named(problem):
    X, y = problem
    kernel = Kernel("rbf", gamma=0.3)
    C = np.ones(y.size)
    with pytest.raises(ValueError, match="bias"):
        solve_irwls(X, c_svc(y, C), kernel, bias="free")
    with pytest.raises(ValueError, match="fixed_at_zero"):
        solve_irwls(X, c_svc(y, C), kernel, fixed_at_zero=np.ones(3, bool))
    both = np.zeros(y.size, bool)
    both[0] = True
    with pytest.raises(ValueError, match="both"):
        solve_irwls(X, c_svc(y, C), kernel, fixed_at_zero=both, fixed_at_C=both)
    with pytest.raises(ValueError, match="alpha_init"):
        solve_irwls(X, c_svc(y, C), kernel, alpha_init=np.full(y.size, np.nan))
    # every positive sample held at C: y'a = 0 cannot hold
    with pytest.raises(ValueError, match="feasible"):
        solve_irwls(X, c_svc(y, C), kernel, fixed_at_C=y > 0, fixed_at_zero=y < 0)


def test_box_solvers_share_the_screened_start_checks():
    """box_start (coordinate descent, linear screening) names the same bad inputs as IRWLS."""
    C = np.ones(5)
    both = np.array([True, False, False, False, False])
    with pytest.raises(ValueError, match="fixed_at_C must be a boolean mask of length 5"):
        box_start(C, fixed_at_C=np.ones(4, bool))
    with pytest.raises(ValueError, match="both"):
        box_start(C, fixed_at_zero=both, fixed_at_C=both)
    with pytest.raises(ValueError, match="alpha_init"):
        box_start(C, alpha_init=np.ones(4))
    active, alpha = box_start(C, alpha_init=np.full(5, 2.0), fixed_at_zero=both,
                              fixed_at_C=np.roll(both, 1))
    np.testing.assert_array_equal(active, [False, False, True, True, True])
    np.testing.assert_array_equal(alpha, [0.0, 1.0, 1.0, 1.0, 1.0])     # fixed, then clipped to C
