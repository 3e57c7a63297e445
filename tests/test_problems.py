"""The problem layer: one dual (LIBSVM's generic form) that every exact solver solves.

C-SVC and epsilon-SVR have constructors (``c_svc``, ``epsilon_svr``: two variables per
sample, p = eps -+ z); the one-class SVM (p = 0, y'a = Delta = nu l) is built by hand from
the generic form. The solvers need nothing else: each is checked against LIBSVM's optimum
through scikit-learn.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.svm import SVR, OneClassSVM

from leansvm.core.kernels import Kernel
from leansvm.core.problems import DualProblem, c_svc, epsilon_svr
from leansvm.exact.box_cd import solve_box_cd
from leansvm.exact.irwls import solve_irwls


@pytest.fixture(scope="module")
def binary():
    X, y = make_classification(n_samples=300, n_features=5, random_state=3)
    return X, np.where(y > 0, 1.0, -1.0)


def test_c_svc_quantities_are_the_dual_of_libsvm(binary):
    X, y = binary
    kernel = Kernel("rbf", gamma=0.2)
    K = kernel(X)
    rng = np.random.default_rng(0)
    C = rng.uniform(0.5, 2.0, y.size)
    problem = c_svc(y, C)
    alpha = rng.uniform(0.0, 1.0, y.size) * C
    f = K @ (y * alpha)
    Q = np.outer(y, y) * K
    np.testing.assert_allclose(problem.gradient(f), Q @ alpha - 1.0, atol=1e-12)
    assert problem.objective(alpha, f) == pytest.approx(0.5 * alpha @ Q @ alpha - alpha.sum(), rel=1e-12)
    np.testing.assert_array_equal(problem.coef(alpha), y * alpha)
    # the stopping measure is LIBSVM's m(a) - M(a) over I_up / I_low of -y G
    s = -y * (Q @ alpha - 1.0)
    up = ((y > 0) & (alpha < C)) | ((y < 0) & (alpha > 0))
    low = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < C))
    gap, i, j = problem.kkt_violation(alpha, f)
    assert gap == pytest.approx(s[up].max() - s[low].min(), rel=1e-12)
    assert up[i] and low[j]


def test_c_svc_rejects_labels_that_are_not_plus_minus_one():
    with pytest.raises(ValueError, match=r"\+1 or -1"):
        c_svc(np.array([1.0, 0.0, -1.0]), 1.0)
    with pytest.raises(ValueError, match="shape"):
        DualProblem(np.ones(3), np.ones(2), np.ones(3))


def _svr_objective(K, coef, z, epsilon):
    """LIBSVM's epsilon-SVR dual at beta = alpha - alpha* (alpha alpha* = 0 at the optimum)."""
    return 0.5 * coef @ K @ coef + epsilon * np.abs(coef).sum() - z @ coef


@pytest.mark.parametrize("solver", ["irwls", "box_cd"])
def test_the_generic_dual_solves_epsilon_svr_as_libsvm(solver):
    X, z = make_regression(n_samples=250, n_features=4, noise=5.0, random_state=1)
    z = (z - z.mean()) / z.std()
    kernel = Kernel("rbf", gamma=0.3)
    K = kernel(X)
    C, epsilon = 3.0, 0.1
    problem = epsilon_svr(z, C, epsilon)
    if solver == "irwls":
        fit = solve_irwls(X, problem, kernel, tol=1e-6, random_state=0)
        ref = SVR(C=C, epsilon=epsilon, gamma=0.3, tol=1e-8).fit(X, z)
        ref_coef = np.zeros(z.size)
        ref_coef[ref.support_] = ref.dual_coef_[0]
        intercept, ref_intercept = fit.intercept, float(ref.intercept_[0])
    else:                                # the box QP (no bias): scipy's bounded solver as reference
        fit = solve_box_cd(X, problem, kernel, tol=1e-8, bias="none")
        ref_coef = _box_svr_reference(K, z, C, epsilon)
        intercept = ref_intercept = 0.0
    assert fit.converged
    coef = problem.coef(fit.alpha, z.size)
    ours, theirs = _svr_objective(K, coef, z, epsilon), _svr_objective(K, ref_coef, z, epsilon)
    assert ours == pytest.approx(fit.dual_objective, rel=1e-6)
    assert abs(ours - theirs) <= 1e-5 * abs(theirs)
    pred, ref_pred = K @ coef + intercept, K @ ref_coef + ref_intercept
    assert np.max(np.abs(pred - ref_pred)) <= 1e-3 * z.std()
    # a sample's two variables are never both positive (the two sides of the tube)
    assert not np.any((fit.alpha[:z.size] > 0) & (fit.alpha[z.size:] > 0))


def _box_svr_reference(K, z, C, epsilon):
    from scipy.optimize import minimize
    n = z.size

    def fun(a):
        beta = a[:n] - a[n:]
        Kb = K @ beta
        value = 0.5 * beta @ Kb + epsilon * a.sum() - z @ beta
        return value, np.r_[Kb + epsilon - z, -Kb + epsilon + z]

    res = minimize(fun, np.zeros(2 * n), jac=True, method="L-BFGS-B", bounds=[(0.0, C)] * (2 * n),
                   options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-10})
    return res.x[:n] - res.x[n:]


def test_the_generic_dual_solves_the_one_class_svm_as_libsvm():
    data, _ = make_classification(n_samples=600, n_features=4, random_state=2)
    X, X_new = data[:300], data[300:]
    kernel = Kernel("rbf", gamma=0.25)
    nu = 0.2
    n = X.shape[0]
    # LIBSVM's solve_one_class: y = 1, p = 0, 0 <= a_i <= 1, sum a = nu l
    problem = DualProblem(np.ones(n), np.zeros(n), np.ones(n), delta=nu * n, kind="one_class")
    fit = solve_irwls(X, problem, kernel, tol=1e-6, random_state=0)
    ref = OneClassSVM(nu=nu, gamma=0.25, tol=1e-8).fit(X)
    K = kernel(X)
    a_ref = np.zeros(n)
    a_ref[ref.support_] = ref.dual_coef_[0]
    assert fit.alpha.sum() == pytest.approx(nu * n, rel=1e-12)
    ours, theirs = 0.5 * fit.alpha @ K @ fit.alpha, 0.5 * a_ref @ K @ a_ref
    assert ours == pytest.approx(fit.dual_objective, rel=1e-9)
    assert abs(ours - theirs) <= 1e-5 * theirs
    # decision sum a_i k(x_i, x) - rho, rho = -intercept (LIBSVM's calculate_rho)
    scores, ref_scores = K @ fit.alpha + fit.intercept, ref.decision_function(X)
    assert np.max(np.abs(scores - ref_scores)) <= 1e-3 * np.abs(ref_scores).max()
    # labels of new points (training points include the free SVs, whose score is 0 up to tol)
    new = kernel(X_new, X) @ fit.alpha + fit.intercept
    assert np.mean(np.sign(new) == np.sign(ref.decision_function(X_new))) >= 0.995
