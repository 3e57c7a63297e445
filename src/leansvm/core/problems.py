r"""The dual problem every exact solver, path and screening rule works on (LIBSVM's generic form).

    min_a  D(a) = 1/2 a'Qa + p'a,   Q_ij = y_i y_j k(x_{r_i}, x_{r_j}),
    s.t.   0 <= a_i <= C_i,   y'a = Delta   (the equality only with LIBSVM's bias)

or, in the nu forms (LIBSVM's Solver_NU: nu-SVC, nu-SVR), one equality per sign,

           sum_{y_i = +1} a_i = Delta_+,   sum_{y_i = -1} a_i = Delta_-   (``sign_sums``)

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

With one equality per sign each sign group g has its own multiplier: at the
optimum G_i = r_g for the free variables of group g (LIBSVM's r1, r2); the
intercept is b = -rho = -(r_+ - r_-)/2 and r = (r_+ + r_-)/2 is the margin
level nu-SVC divides by (and -epsilon in nu-SVR).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DualProblem", "c_svc", "epsilon_svr", "nu_svc", "nu_svr", "one_class"]


def _vector(values, n, name) -> np.ndarray:
    out = np.ascontiguousarray(values, dtype=np.float64)
    if out.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {out.shape}")
    return out


@dataclass(frozen=True, eq=False)
class DualProblem:
    """y (+1 / -1), p (linear term), C (upper bounds), Delta (y'a = Delta), rows (sample of each
    variable) and, for the nu forms, sign_sums = (Delta_+, Delta_-) in place of y'a = Delta."""

    y: np.ndarray
    p: np.ndarray
    C: np.ndarray
    delta: float = 0.0
    rows: np.ndarray | None = None     # None: variable i is sample i
    kind: str = "c_svc"
    sign_sums: tuple | None = None     # (Delta_+, Delta_-): one equality per sign (nu forms)

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
        if self.sign_sums is not None:
            object.__setattr__(self, "sign_sums", tuple(float(v) for v in self.sign_sums))
            object.__setattr__(self, "delta", self.sign_sums[0] - self.sign_sums[1])   # y'a

    @property
    def equalities(self) -> int:
        """1 (y'a = Delta) or 2 (one per sign, the nu forms): the solvers' equality mode."""
        return 1 if self.sign_sums is None else 2

    def equality_groups(self):
        """(mask, target) per equality constraint, the constraint being sum_{mask} y_i a_i = target:
        all variables and Delta, or in the nu forms (y = +1, Delta_+) and (y = -1, -Delta_-)."""
        if self.sign_sums is None:
            return [(np.ones(self.n, dtype=bool), self.delta)]
        return [(self.y > 0, self.sign_sums[0]), (self.y < 0, -self.sign_sums[1])]

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
        return DualProblem(self.y, self.p, C, self.delta, self.rows, self.kind, self.sign_sums)

    def subset(self, idx) -> "DualProblem":
        """The problem restricted to the variables ``idx`` (the others held at 0 by the caller)."""
        idx = np.asarray(idx, dtype=np.intp)
        rows = None if self.rows is None else self.rows[idx]
        return DualProblem(self.y[idx], self.p[idx], self.C[idx], self.delta, rows, self.kind, self.sign_sums)

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
        I_low (j); with one equality per sign, the larger of the two groups' m - M. Without the
        equality: the projected-gradient gap max(PG, 0) - min(PG, 0) (liblinear's, two-sided;
        i has the most negative PG, j the most positive).
        """
        if not equality:
            pg = self.projected_gradient(alpha, f)
            i, j = int(np.argmin(pg)), int(np.argmax(pg))
            return float(max(pg[j], 0.0) - min(pg[i], 0.0)), i, j
        return max((self._group_violation(alpha, f, group) for group, _ in self.equality_groups()),
                   key=lambda t: t[0])

    def _group_violation(self, alpha, f, group):
        """m - M over the variables ``group`` and its pair."""
        up, low = self.up_low(alpha)
        up, low = up & group, low & group
        if not up.any() or not low.any():
            return 0.0, -1, -1
        s = self.libsvm_s(f)
        su = np.where(up, s, -np.inf)
        sl = np.where(low, s, np.inf)
        i, j = int(np.argmax(su)), int(np.argmin(sl))
        return float(su[i] - sl[j]), i, j

    def intercept(self, alpha, f) -> float:
        """b = -rho as LIBSVM's ``calculate_rho``: the mean of s over free variables, else the
        middle of the range the bounded ones leave. Nu forms: -(r_+ - r_-)/2 (Solver_NU)."""
        if self.equalities == 2:
            r_pos, r_neg = self._sign_levels(alpha, f)
            return -(r_pos - r_neg) / 2
        return self._intercept_one(alpha, f)

    def margin_level(self, alpha, f) -> float:
        """Nu forms: r = (r_+ + r_-)/2 (LIBSVM's ``si->r``), r_g the gradient level of group g."""
        r_pos, r_neg = self._sign_levels(alpha, f)
        return (r_pos + r_neg) / 2

    def _sign_levels(self, alpha, f):
        """(r_+, r_-): per sign group, the mean gradient G over free variables, else the middle
        of the range the bounded ones leave (LIBSVM's ``Solver_NU::calculate_rho``)."""
        G = self.gradient(f)
        levels = []
        for g, _ in self.equality_groups():
            free = g & (alpha > 0) & (alpha < self.C)
            if free.any():
                levels.append(float(G[free].mean()))
                continue
            at_upper, at_lower = g & (alpha >= self.C), g & (alpha <= 0)
            lb = G[at_upper].max() if at_upper.any() else -np.inf
            ub = G[at_lower].min() if at_lower.any() else np.inf
            finite = [v for v in (ub, lb) if np.isfinite(v)]
            levels.append(float(sum(finite) / len(finite)) if finite else 0.0)
        return levels

    def _intercept_one(self, alpha, f) -> float:
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


def nu_svc(y, nu, C=1.0) -> DualProblem:
    """nu-SVC (LIBSVM ``solve_nu_svc``): p = 0, 0 <= a_i <= C_i (the sample weights, 1 by default),
    sum_{y=+1} a_i = sum_{y=-1} a_i = nu sum_i C_i / 2. Its solution divided by the margin level r
    (:meth:`DualProblem.margin_level`) is a C-SVC solution with C = 1 / r (Chang & Lin 2001)."""
    y = np.asarray(y, dtype=np.float64)
    C = np.broadcast_to(np.asarray(C, dtype=np.float64), y.shape)
    half = nu * float(C.sum()) / 2
    return DualProblem(y, np.zeros(y.size), C, kind="nu_svc", sign_sums=(half, half))


def nu_svr(z, C, nu) -> DualProblem:
    """nu-SVR (LIBSVM ``solve_nu_svr``): a = [alpha; alpha*] as :func:`epsilon_svr` with p = [-z; z]
    (epsilon becomes a variable, -r at the optimum) and sum alpha = sum alpha* = nu sum_i C_i / 2."""
    z = np.asarray(z, dtype=np.float64).ravel()
    n = z.size
    C = np.broadcast_to(np.asarray(C, dtype=np.float64), (n,))
    half = nu * float(C.sum()) / 2
    rows = np.arange(n)
    return DualProblem(np.r_[np.ones(n), -np.ones(n)], np.r_[-z, z], np.r_[C, C], rows=np.r_[rows, rows],
                       kind="nu_svr", sign_sums=(half, half))


def one_class(nu, C) -> DualProblem:
    """One-class SVM (LIBSVM ``solve_one_class``, Schoelkopf et al. 2001): y = 1, p = 0,
    0 <= a_i <= C_i (the sample weights), sum a_i = nu sum_i C_i; the intercept is -rho."""
    C = np.ascontiguousarray(C, dtype=np.float64).ravel()
    return DualProblem(np.ones(C.size), np.zeros(C.size), C, delta=nu * float(C.sum()), kind="one_class")
