"""After budgeted SGD: the bias by exact minimisation (a weighted median of the hinge breakpoints, or
the epsilon tube's), and the convex refit of the coefficients with the budget vectors fixed (an
L2-SVM, or ridge regression, on the features K(X, SV) K_SV^(-1/2))."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def refit_features(kernel, SV, X):
    """(K_SV^(-1/2) (pseudo-inverse square root), F = K(X, SV) K_SV^(-1/2)): the linear features in
    which a refit with the budget vectors fixed is a linear model, ||v||^2 = alpha' K_SV alpha."""
    inv_sqrt = kernel_inverse_sqrt(kernel, SV)
    return inv_sqrt, kernel.block(X, SV) @ inv_sqrt


def kernel_inverse_sqrt(kernel, SV):
    """K_SV^(-1/2), the pseudo-inverse square root (eigenvalues below 1e-10 of the largest dropped)."""
    vals, vecs = np.linalg.eigh(kernel.block(SV, SV))
    ok = vals > 1e-10 * vals.max()
    return (vecs[:, ok] / np.sqrt(vals[ok])) @ vecs[:, ok].T


def ridge_refit(kernel, SV, X, z, C, fit_intercept=True, on_coefficients=False):
    """(alpha, bias) of min_v,b 1/2 ||v||^2 + C sum_i (z_i - F_i v - b)^2 over the features
    F = K(X, SV) K_SV^(-1/2), with alpha = K_SV^(-1/2) v (the expansion's coefficients over ``SV``).
    ``z`` of shape (n, p) fits p outputs at once (alpha (B, p), bias (p,)).

    ``on_coefficients``: min 1/(2C) ||alpha||^2 + 1/2 sum_i (z_i - K_i alpha - b)^2 instead, the ridge on
    alpha itself (F = K(X, SV), I / C in the system below): where the vectors are free points close
    together, K_SV is near singular and K_SV^(-1/2) v blows alpha up (moons, 150 vectors at gamma 2 and
    C = 100: ||alpha||^2 = 7e8, beyond what float32 row blocks resolve).

    Closed form: with F and z centred (b unregularised), (Fc'Fc + I / (2C)) v = Fc'(z - mean z),
    b = mean z - mean(F) v (:func:`ridge_system`)."""
    system = ridge_system(kernel, SV, X, z, fit_intercept, on_coefficients)
    ridge = 1.0 / C if on_coefficients else 1.0 / (2.0 * C)
    v = np.linalg.solve(system.gram + ridge * np.eye(system.gram.shape[0]), system.rhs)
    return system.coefficients(v)


def ridge_gcv(kernel, SV, X, z, Cs, fit_intercept=True):
    """:func:`ridge_refit` at the C of ``Cs`` with the least generalized cross-validation score
    (Golub, Heath & Wahba, Technometrics 21, 1979): GCV(C) = n RSS(C) / (n - df(C) - 1)^2, with
    df(C) = tr Fc (Fc'Fc + I/(2C))^(-1) Fc' the ridge's effective parameters (the 1: the intercept),
    leave-one-out's squared error without each row's own leverage. One eigendecomposition Fc'Fc = U diag(s) U' gives
    every C: v = U (U'r / (s + 1/(2C))), df = sum s / (s + 1/(2C)), RSS = z'z - 2 r'v + v'Fc'Fc v.

    On friedman1-1M (1,181 landmarks, 100,000 rows; gamma 0.033) GCV's minimum is at C = 4,000 among
    62.5..1e6, where the test RMSE is least too (0.2000; C = 250, the exact SVR's C carried to its fit
    size: 0.2019; ``benchmarks/budget/bench_landmark_svr.py --gcv``). Returns (alpha, bias, the chosen C,
    {C: GCV score})."""
    system = ridge_system(kernel, SV, X, z, fit_intercept)
    s, U = np.linalg.eigh(system.gram)
    s = np.maximum(s, 0.0)
    q = U.T @ system.rhs
    s_col = s if q.ndim == 1 else s[:, None]        # one column per output
    scores = {}
    for C in map(float, Cs):
        ridge = 1.0 / (2.0 * C)
        v_rot = q / (s_col + ridge)
        rss = system.zz - 2.0 * np.sum(q * v_rot) + np.sum(s_col * v_rot * v_rot)
        df = float(np.sum(s / (s + ridge))) + (1.0 if fit_intercept else 0.0)
        scores[C] = float(system.n * max(rss, 0.0) / max(system.n - df, 1.0) ** 2)
    best = min(scores, key=scores.get)
    alpha, bias = system.coefficients(U @ (q / (s_col + 1.0 / (2.0 * best))))
    return alpha, bias, best, scores


@dataclass
class RidgeSystem:
    """The centred normal equations of a ridge fit over F = K(X, SV) N (N = K_SV^(-1/2) or I):
    ``gram`` = Fc'Fc, ``rhs`` = Fc'(z - mean z), ``zz`` = sum (z - mean z)^2 over every output."""

    inv_sqrt: np.ndarray
    gram: np.ndarray
    rhs: np.ndarray
    mean_f: np.ndarray
    mean_z: np.ndarray
    zz: float
    n: int

    def coefficients(self, v):
        """(alpha, bias) of the solution ``v`` in F's coordinates: alpha = N v, b = mean z - mean(F) v."""
        bias = self.mean_z - self.mean_f @ v
        return self.inv_sqrt @ v, (float(bias) if np.ndim(bias) == 0 else bias)


def ridge_system(kernel, SV, X, z, fit_intercept=True, on_coefficients=False) -> RidgeSystem:
    """F'F, F'1 and F'z summed over row blocks of X (:meth:`~leansvm.core.kernels.Kernel.blocks`),
    so memory stays at one block and the B x B system whatever the rows; then centred (b unregularised)."""
    inv_sqrt = np.eye(SV.shape[0]) if on_coefficients else kernel_inverse_sqrt(kernel, SV)
    B = inv_sqrt.shape[0]
    z = np.asarray(z, dtype=np.float64)
    gram, f_sum, f_z = np.zeros((B, B)), np.zeros(B), np.zeros((B,) + z.shape[1:])
    for start, stop, K in kernel.blocks(X, SV):
        F = K @ inv_sqrt
        gram += _gram(F)
        f_sum += F.sum(axis=0)
        f_z += F.T @ z[start:stop]
    n = X.shape[0]
    mean_f, mean_z = (f_sum / n, z.mean(axis=0)) if fit_intercept else (np.zeros(B), np.zeros(z.shape[1:]))
    gram -= n * np.outer(mean_f, mean_f)
    rhs = f_z - n * np.multiply.outer(mean_f, mean_z)
    zz = float(np.sum((z - mean_z) ** 2))
    return RidgeSystem(inv_sqrt, gram, rhs, mean_f, mean_z, zz, n)


def optimal_tube_bias(margins, targets, epsilon) -> float:
    """argmin_b sum_i max(0, |z_i - g_i - b| - epsilon) for fixed g = ``margins`` (exact).

    With r_i = z_i - g_i the objective is convex piecewise linear; its slope at b is
    #{i: b > r_i + epsilon} - #{i: b < r_i - epsilon} = #{breakpoints r_i +- epsilon below b} - n,
    zero at the median of the 2n breakpoints."""
    r = np.asarray(targets, dtype=np.float64) - np.asarray(margins, dtype=np.float64)
    if r.size == 0:
        return 0.0
    return float(np.median(np.concatenate([r - epsilon, r + epsilon])))


def optimal_bias(margins, y_pm, weights=None) -> float:
    """argmin_b sum_i w_i max(0, 1 - y_i (g_i + b)) for fixed g = ``margins`` (exact).

    The objective is convex piecewise linear with breakpoints b_i = y_i - g_i; its slope is
    -W_+ left of all of them and grows by w_i at each, so the minimum is at the breakpoint
    where the cumulative weight reaches W_+ = sum of positive-class weights (a weighted median).
    """
    g = np.asarray(margins, dtype=np.float64)
    y = np.asarray(y_pm, dtype=np.float64)
    w = np.ones_like(g) if weights is None else np.asarray(weights, dtype=np.float64)
    if g.size == 0:
        return 0.0
    breaks = y - g
    order = np.argsort(breaks, kind="stable")
    cum = np.cumsum(w[order])
    target = w[y > 0].sum()
    k = int(np.searchsorted(cum, target - 1e-12 * max(cum[-1], 1.0)))
    if k >= breaks.size - 1:
        return float(breaks[order[-1]])
    if abs(cum[k] - target) <= 1e-12 * max(cum[-1], 1.0):
        return float(0.5 * (breaks[order[k]] + breaks[order[k + 1]]))  # flat stretch: its middle
    return float(breaks[order[k]])


# -- the optional convex refit (L2-SVM with the budget vectors fixed) ----------------------
def _gram(A):
    """A'A (one operand object: BLAS syrk, half the flops of a general product)."""
    return A.T @ A


def refit_l2svm(F, y_pm, C, fit_intercept=True, max_iter=50, tol=1e-8, gram=None):
    """Primal Newton for min_v,b 1/2 ||v||^2 + C sum_i max(0, 1 - y_i (F_i v + b))^2 (b unregularised).

    The loss is piecewise quadratic, so with the active set A = {i : y_i o_i < 1} fixed each
    Newton step solves the (B+1) x (B+1) system (Chapelle, Neural Computation 19(5), 2007, eq. 11)

        [I + 2C F_A'F_A    2C F_A'1 ] [v]   [2C F_A'y_A]
        [2C 1'F_A          2C |A|   ] [b] = [2C sum y_A]

    followed by a backtracking line search on the objective; it stops when A no longer
    changes (then the point is the exact optimum) or the relative decrease is below ``tol``.
    The Gram part G = F_A'F_A is updated by the rows entering and leaving A only, so after
    the first step (all rows active at v = 0) a step costs (changed rows) B^2 (BLAS).
    ``gram`` = F'F may be passed in (it is the first step's G: every row is active at v = 0),
    e.g. to share it between the one-vs-rest problems of one feature matrix.
    Returns (v, b, iterations, converged).
    """
    F = np.asarray(F, dtype=np.float64)
    y = np.asarray(y_pm, dtype=np.float64)
    n, B = F.shape
    v = np.zeros(B)
    b = 0.0

    def objective(v, b):
        xi = np.maximum(0.0, 1.0 - y * (F @ v + b))
        return 0.5 * v @ v + C * (xi @ xi), xi

    obj, xi = objective(v, b)
    active = xi > 0
    G = gram.copy() if gram is not None and active.all() else _gram(F[active])
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        a = active.astype(np.float64)
        H = np.eye(B + 1)
        H[:B, :B] += 2.0 * C * G
        rhs = np.empty(B + 1)
        rhs[:B] = 2.0 * C * (F.T @ (a * y))
        if fit_intercept:
            s = F.T @ a
            H[:B, B] = H[B, :B] = 2.0 * C * s
            H[B, B] = 2.0 * C * active.sum() + 1e-12
            rhs[B] = 2.0 * C * y[active].sum()
        else:
            rhs[B] = 0.0
        try:
            sol = np.linalg.solve(H, rhs)
        except np.linalg.LinAlgError:
            sol = np.linalg.lstsq(H, rhs, rcond=None)[0]
        dv, db = sol[:B] - v, (sol[B] if fit_intercept else 0.0) - b
        step = 1.0
        for _ in range(30):
            new_obj, new_xi = objective(v + step * dv, b + step * db)
            if new_obj <= obj:
                break
            step *= 0.5
        else:
            converged = True          # no descent along the Newton direction: at the optimum
            break
        v, b = v + step * dv, b + step * db
        new_active = new_xi > 0
        decrease = (obj - new_obj) / max(abs(obj), 1e-300)
        obj = new_obj
        if step == 1.0 and np.array_equal(new_active, active) or decrease < tol:
            converged = True
            break
        enter, leave = new_active & ~active, active & ~new_active
        G += _gram(F[enter]) - _gram(F[leave])
        active = new_active
    return v, float(b), it, converged
