"""The exact 2 x 2 box QP step shared by the box coordinate descent and IRWLS's working-set descent."""

import numpy as np
from scipy.optimize import minimize

from leansvm.exact.irwls_subproblem import box_pair_step


def _objective(d, g, Q):
    return 0.5 * d @ Q @ d + g @ d


def _random_case(rng, collinear):
    a = rng.normal(size=(2, 3))
    Q = a @ a.T + 1e-3 * np.eye(2)
    if collinear:                    # nearly collinear columns, as the augmented bias makes them
        Q += 50.0 * np.ones((2, 2))
    upper = rng.uniform(0.1, 10.0, size=2)
    alpha = np.where(rng.random(2) < 0.3, 0.0, np.where(rng.random(2) < 0.4, upper, rng.uniform(0, 1, 2) * upper))
    g = rng.normal(scale=rng.choice([0.1, 1.0, 30.0]), size=2)
    return alpha, upper, g, Q


def test_box_pair_step_is_the_exact_box_minimiser():
    rng = np.random.default_rng(0)
    for case in range(200):
        alpha, upper, g, Q = _random_case(rng, collinear=case % 2 == 1)
        di, dj = box_pair_step(alpha[0], upper[0], g[0], Q[0, 0], alpha[1], upper[1], g[1], Q[1, 1], Q[0, 1])
        d = np.array([di, dj])
        # feasible
        assert np.all(alpha + d >= -1e-12 * upper) and np.all(alpha + d <= upper * (1 + 1e-12))
        # no feasible point is better: a bounded reference solver and a grid both do no better
        bounds = [(-alpha[0], upper[0] - alpha[0]), (-alpha[1], upper[1] - alpha[1])]
        ref = minimize(_objective, np.zeros(2), args=(g, Q), jac=lambda d, g, Q: Q @ d + g,
                       bounds=bounds, method="L-BFGS-B", options={"ftol": 1e-15, "gtol": 1e-12})
        grid = np.stack(np.meshgrid(np.linspace(*bounds[0], 41), np.linspace(*bounds[1], 41)), -1).reshape(-1, 2)
        best_grid = float(np.min(0.5 * np.einsum('ij,jk,ik->i', grid, Q, grid) + grid @ g))
        value = _objective(d, g, Q)
        scale = 1.0 + abs(value)
        assert value <= ref.fun + 1e-9 * scale, case
        assert value <= best_grid + 1e-9 * scale, case
        # KKT of the box problem: the projected gradient vanishes
        grad = Q @ d + g
        new = alpha + d
        for k in range(2):
            if new[k] <= 1e-12 * upper[k]:
                assert grad[k] >= -1e-7 * (1 + abs(g[k]) + abs(Q[k]).sum() * upper.max())
            elif new[k] >= upper[k] * (1 - 1e-12):
                assert grad[k] <= 1e-7 * (1 + abs(g[k]) + abs(Q[k]).sum() * upper.max())
            else:
                assert abs(grad[k]) <= 1e-7 * (1 + abs(g[k]) + abs(Q[k]).sum() * upper.max())


def test_box_pair_step_interior_newton_step():
    Q = np.array([[2.0, 0.5], [0.5, 1.0]])
    g = np.array([0.1, -0.2])
    di, dj = box_pair_step(5.0, 10.0, g[0], Q[0, 0], 5.0, 10.0, g[1], Q[1, 1], Q[0, 1])
    np.testing.assert_allclose([di, dj], -np.linalg.solve(Q, g), rtol=1e-12)
