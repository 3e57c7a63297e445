r"""The dual problem every exact solver, path and screening rule works on (LIBSVM's generic form).

    min_a  D(a) = 1/2 a'Qa + p'a,   Q_ij = y_i y_j k(x_{r_i}, x_{r_j}),
    s.t.   0 <= a_i <= C_i,   y'a = Delta   (the equality only with LIBSVM's bias)

(Chang & Lin, "LIBSVM: a library for support vector machines", ACM TIST 2011,
eq. (11) and sections 2-4.) Variable i belongs to sample r_i (``rows``; the
identity unless a problem type doubles its variables, as epsilon-SVR does with
a = [alpha; alpha*]). With the outputs f_i = sum_j y_j a_j k(x_{r_i}, x_{r_j})
(no bias) the solvers need only

    gradient       G_i = (Qa + p)_i = y_i f_i + p_i
    LIBSVM's       s_i = -y_i G_i   = -y_i p_i - f_i      (I_up / I_low, the intercept)
    loss           C_i max(0, u_i),  u_i = -p_i - y_i (f_i + b)   (IRWLS's weights, eq. 8)

so a solver written for this form solves every problem type, and a new type
(a new loss) is one constructor that fills y, p, C, Delta and rows. For
C-SVC p = -1, so -y_i p_i = y_i, u_i = 1 - y_i (f_i + b) is the hinge's and
G_i = y_i f_i - 1: the same numbers, bit for bit, as the C-SVC formulas
(x + (-1) and x - 1 round alike).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DualProblem", "c_svc", "epsilon_svr"]


def _vector(values, n, name) -> np.ndarray:
    out = np.ascontiguousarray(values, dtype=np.float64)
    if out.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {out.shape}")
    return out


@dataclass(frozen=True, eq=False)
class DualProblem:
    """y (+1 / -1), p (linear term), C (upper bounds), Delta (y'a = Delta) and rows (sample of each variable)."""

    y: np.ndarray
    p: np.ndarray
    C: np.ndarray
    delta: float = 0.0
    rows: np.ndarray | None = None     # None: variable i is sample i
    kind: str = "c_svc"

    def __post_init__(self):
        y = np.ascontiguousarray(self.y, dtype=np.float64)
        if y.ndim != 1:
            raise ValueError(f"y must be one-dimensional, got shape {y.shape}")
        n = y.size
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "p", _vector(self.p, n, "p"))
        object.__setattr__(self, "C", _vector(self.C, n, "C"))
        object.__setattr__(self, "delta", float(self.delta))
        if self.rows is not None:
            object.__setattr__(self, "rows", np.asarray(self.rows, dtype=np.intp).reshape(n))

    @property
    def n(self) -> int:
        """Number of dual variables."""
        return self.y.size

    @property
    def hinge(self) -> bool:
        """C-SVC's hinge loss (p = -1, one variable per sample): the loss the screening rules of
        Ogawa et al. are derived for."""
        return self.rows is None and bool(np.all(self.p == -1.0))

    def with_bounds(self, C) -> "DualProblem":
        """The same problem with upper bounds ``C`` (a point of a regularisation path: C_i = C c_i)."""
        return DualProblem(self.y, self.p, C, self.delta, self.rows, self.kind)

    def subset(self, idx) -> "DualProblem":
        """The problem restricted to the variables ``idx`` (the others held at 0 by the caller)."""
        idx = np.asarray(idx, dtype=np.intp)
        rows = None if self.rows is None else self.rows[idx]
        return DualProblem(self.y[idx], self.p[idx], self.C[idx], self.delta, rows, self.kind)

    def gradient(self, f) -> np.ndarray:
        """G = Qa + p = y f + p from the outputs f."""
        return self.y * f + self.p

    def libsvm_s(self, f) -> np.ndarray:
        """s = -y G = -y p - f: LIBSVM's -y_i grad_i (maximised over I_up, minimised over I_low)."""
        return -self.y * self.p - f

    def objective(self, alpha, f) -> float:
        """D(a) = 1/2 a'Qa + p'a = sum_i a_i (y_i f_i / 2 + p_i)."""
        return float(np.dot(alpha, self.y * f / 2.0 + self.p))

    def up_low(self, alpha):
        """LIBSVM's index sets I_up (y_i a_i can increase) and I_low (it can decrease)."""
        below = alpha < self.C
        above = alpha > 0
        pos = self.y > 0
        return (pos & below) | (~pos & above), (pos & above) | (~pos & below)

    def projected_gradient(self, alpha, f) -> np.ndarray:
        """PG of the box: G_i, cut to min(G_i, 0) at 0 and max(G_i, 0) at C_i (all zero: KKT point)."""
        g = self.gradient(f)
        return np.where(alpha <= 0, np.minimum(g, 0.0), np.where(alpha >= self.C, np.maximum(g, 0.0), g))

    def kkt_violation(self, alpha, f, equality=True):
        """The stopping measure of the solvers and its most violating pair (i, j).

        With y'a = Delta: LIBSVM's m(a) - M(a), s = -y G maximised over I_up (i), minimised over
        I_low (j). Without the equality: the projected-gradient gap max(PG, 0) - min(PG, 0)
        (liblinear's, two-sided; i has the most negative PG, j the most positive).
        """
        if not equality:
            pg = self.projected_gradient(alpha, f)
            i, j = int(np.argmin(pg)), int(np.argmax(pg))
            return float(max(pg[j], 0.0) - min(pg[i], 0.0)), i, j
        up, low = self.up_low(alpha)
        if not up.any() or not low.any():
            return 0.0, -1, -1
        s = self.libsvm_s(f)
        su = np.where(up, s, -np.inf)
        sl = np.where(low, s, np.inf)
        i, j = int(np.argmax(su)), int(np.argmin(sl))
        return float(su[i] - sl[j]), i, j

    def intercept(self, alpha, f) -> float:
        """b = -rho as LIBSVM's ``calculate_rho``: the mean of s over free variables, else the
        middle of the range the bounded ones leave."""
        s = self.libsvm_s(f)
        free = (alpha > 0) & (alpha < self.C)
        if free.any():
            return float(np.mean(s[free]))
        # yG = -s; LIBSVM takes ub/lb over bounded variables of yG, rho = (ub + lb) / 2
        yG = -s
        at_upper = alpha >= self.C
        pos = self.y > 0
        ub_mask = (at_upper & ~pos) | (~at_upper & pos)
        lb_mask = ~ub_mask
        ub = yG[ub_mask].min() if ub_mask.any() else np.inf
        lb = yG[lb_mask].max() if lb_mask.any() else -np.inf
        if not np.isfinite(ub) or not np.isfinite(lb):
            rho = ub if np.isfinite(ub) else (lb if np.isfinite(lb) else 0.0)
        else:
            rho = (ub + lb) / 2
        return float(-rho)

    def coef(self, alpha, n_samples=None) -> np.ndarray:
        """Expansion coefficients per sample: sum of y_i a_i over the variables of each sample."""
        if self.rows is None:
            return self.y * alpha
        return np.bincount(self.rows, self.y * alpha, minlength=n_samples or 0)


def c_svc(y, C) -> DualProblem:
    """C-SVC (LIBSVM ``solve_c_svc``): y the labels (+1 / -1), p = -1, C_i = C c_i, Delta = 0."""
    y = np.asarray(y, dtype=np.float64)
    if y.size and not np.all(np.abs(y) == 1.0):
        raise ValueError("C-SVC labels must be +1 or -1")
    return DualProblem(y, np.full(y.size, -1.0), np.broadcast_to(np.asarray(C, dtype=np.float64), y.shape))


def epsilon_svr(z, C, epsilon) -> DualProblem:
    """epsilon-SVR (LIBSVM ``solve_epsilon_svr``): a = [alpha; alpha*] on the samples' rows twice,
    y = [+1; -1], p = [epsilon - z; epsilon + z], C_i = C c_i on both halves, Delta = 0. Variable i
    of the first half is the dual of C_i max(0, z_i - f_i - b - epsilon), of the second half of
    C_i max(0, f_i + b - z_i - epsilon): the two sides of the epsilon-insensitive loss. The
    expansion's coefficient of sample i is alpha_i - alpha*_i (:meth:`DualProblem.coef`)."""
    z = np.asarray(z, dtype=np.float64).ravel()
    n = z.size
    C = np.broadcast_to(np.asarray(C, dtype=np.float64), (n,))
    rows = np.arange(n)
    return DualProblem(np.r_[np.ones(n), -np.ones(n)], np.r_[epsilon - z, epsilon + z], np.r_[C, C],
                       rows=np.r_[rows, rows], kind="epsilon_svr")
