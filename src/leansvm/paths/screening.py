r"""Safe sample screening for the SVM (Ogawa, Suzuki, Suzumura & Takeuchi, arXiv:1401.6740).

Problem (the paper's eq. 1 and 2; the bias, if any, is an augmented constant
feature, i.e. kernel k'(x, x') = k(x, x') + 1, as liblinear's regularised bias):

    primal  min_w  P_C(w) = 1/2 ||w||^2 + C sum_i c_i max(0, 1 - z_i'w),   z_i = y_i phi(x_i)
    dual    max_a  D_C(a) = 1'a - 1/2 a'Qa,   0 <= a_i <= C c_i,   Q_ij = y_i y_j k'(x_i, x_j)

with per-sample weights c_i (class/sample weights; 1 in the paper) and
w = sum_i a_i z_i. The optimum w*_C is unique (P is 1-strongly convex), and
the optimality conditions (4) are

    z_i'w* > 1  =>  a_i = 0     (set R)        z_i'w* < 1  =>  a_i = C c_i   (set L).

A rule bounds z_i'w* over a region Theta that contains w* (eq. 7-9):
min_{w in Theta} z_i'w > 1 proves i in R, max_{w in Theta} z_i'w < 1 proves
i in L. For a ball B(m, r) the bounds are z_i'm -/+ r ||z_i|| (Lemma 1).

Reference solution (section IV): a dual point a~ at C~ (usually the previous
point of a path, C~ < C), w~ = sum_j a~_j z_j, margins g_i = z_i'w~ = y_i f~(x_i),
rho = C / C~. Writing l(w) = sum_i c_i max(0, 1 - z_i'w):

* **BT1** (Theorem 6 with the feasible point and the reference both w~;
  equivalent to DVI of Wang et al.): NC1 (the variational inequality at C
  against the feasible (w~, l(w~))) and NC2 (the one at C~ against w*) give
  the ball  m1 = (1 + rho)/2 w~,  r1 = |rho - 1|/2 ||w~||.
* **BT2** (Theorem 7): NC1 and NC3 (xi >= sum_i s_i c_i (1 - z_i'w) for a
  binary s) give  m2 = (w~ + C v)/2,  r2^2 = 1/4 ||w~ - C v||^2 + C (l(w~) - sum_i s_i c_i (1 - g_i)),
  v = sum_i s_i c_i z_i. We take s_i = 1 where a~_i = C~ c_i (the paper's
  L~ at an exact reference), so C~ v = w~ - u with u = sum over the free
  a~_j of a~_j z_j, and every product needs kernel columns of the free
  reference SVs only. BT2 uses no optimality: it is safe for any a~.
* **IT** (Theorem 8): the bounds over B1 intersected with B2, in closed
  form (the minimiser lies on one sphere inside the other ball, or on the
  circle where the spheres meet; :func:`_intersection_min`). Never weaker
  than BT1 or BT2.

Safeguard for inexact references (our addition). NC2 holds for the exact
optimum w° at C~, but solvers stop at a tolerance. The duality gap of a~ at C~,

    G = P_C~(w~) - D_C~(a~) = sum_i (C~ c_i - a~_i)(1 - g_i)_+ + a~_i (g_i - 1)_+   (>= 0),

bounds ||w~ - w°|| <= eps = sqrt(2 G) (strong convexity). Redoing NC1+NC2
with w° = w~ + delta, ||delta|| <= eps, and C~ (l(w~) - l(w°)) <= G + w~'delta + ||delta||^2 / 2
gives the ball of centre (1 + rho)/2 w~ and radius

    R1 = sqrt( ((rho-1)/2)^2 ||w~||^2 + rho |rho-1|/2 ||w~|| eps + max(rho^2/4 - rho/2, 0) eps^2 + rho G ) + rho eps / 2,

which contains w* and equals r1 when G = 0. BT2 needs no safeguard, so IT
intersects the safeguarded B1 with the exact B2. Finally a sample is screened
only when its bound clears 1 by a rounding slack (``slack``, relative).

Lemma 9 (trivial reference): a = C c is optimal for every C <= C_min = 1 / max_i (Q c)_i
(all samples in L or E). Computing Q c costs one pass over the kernel matrix.

Cost (Table I): given the margins g (outputs of the reference model on the
training set) BT1 is O(n); BT2 and IT need z_i'u, one product with the kernel
columns of the free reference SVs (O(n |E~|) kernel values), computed once per
reference in :class:`ScreeningReference` and shared by all three rules and by
every target C screened from that reference.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from leansvm.core.kernels import DEFAULT_BLOCK_MB, Kernel
from leansvm.core.problems import DualProblem

RULES = ("bt1", "bt2", "it")
#: relative rounding slack a bound must clear before a sample is screened
DEFAULT_SLACK = 1e-9


def _kernel_products(kernel: Kernel, X, columns, weights_by_column, offset, max_mb=DEFAULT_BLOCK_MB,
                     rows=None):
    """(k(X[rows], X[columns]) + offset) @ weights_by_column, in row blocks; weights (m, p) -> (n, p)."""
    Xr = X if rows is None else X[rows]
    n = Xr.shape[0]
    out = np.zeros((n, weights_by_column.shape[1]))
    if columns.size == 0 or n == 0:
        return out
    Xc = X[columns]
    if sp.issparse(Xc) and Xc.shape[0] * Xc.shape[1] * 8 <= 256 * 2**20:
        Xc = Xc.toarray()
    for start, stop, K in kernel.blocks(Xr, Xc, max_mb=max_mb):
        if offset:
            K += offset
        out[start:stop] = K @ weights_by_column
    return out


@dataclass
class ScreeningReference:
    """What the rules need from a reference dual point a~ at C~ (all O(n) vectors).

    ``margins`` g_i = z_i'w~, ``free_margins`` z_i'u (u: the part of w~ over
    free SVs), ``z_norms`` ||z_i|| = sqrt(k'(x_i, x_i)), ``at_upper`` the
    binary s of BT2, ``gap`` the duality gap G at C~ (0 for Lemma 9's exact
    reference).
    """

    C: float
    alpha: np.ndarray
    weights: np.ndarray
    margins: np.ndarray
    free_margins: np.ndarray
    z_norms: np.ndarray
    at_upper: np.ndarray
    w_norm2: float
    u_norm2: float
    wu: float
    gap: float
    seconds: float = 0.0
    #: bounds on |error| of every computed g_i and z_i'u (e.g. float32 kernel rows: entry error x sum a~);
    #: the rules then widen every bound by what the errors can move it (:func:`bounds`)
    margin_error: float = 0.0
    free_error: float = 0.0

    @classmethod
    def from_solution(cls, X, y, C, alpha, kernel: Kernel, *, augmented=True, weights=None,
                      margins=None, max_mb=DEFAULT_BLOCK_MB) -> "ScreeningReference":
        """Reference from any box-feasible dual point (0 <= a_i <= C c_i) of the no-equality SVM.

        One blocked kernel product with the reference SVs gives the margins and
        the free-SV part together (O(n * #SV) kernel values). ``margins``
        (y_i f~(x_i), NaN where unknown), e.g. kept by the solver for its
        active samples, restricts the margin product to the unknown rows; the
        free-SV product (O(n * #free SVs)) is always computed.
        """
        start = time.perf_counter()
        y, alpha, weights, C = _check_reference_inputs(y, alpha, weights, C)
        offset = 1.0 if augmented else 0.0
        upper = C * weights
        at_upper = (alpha >= upper) & (alpha > 0)
        sv = np.flatnonzero(alpha > 0)
        free = sv[~at_upper[sv]]
        free_margins = y * _kernel_products(kernel, X, free, (y[free] * alpha[free])[:, None], offset,
                                            max_mb)[:, 0]
        if margins is None:
            margins = y * _kernel_products(kernel, X, sv, (y[sv] * alpha[sv])[:, None], offset, max_mb)[:, 0]
        else:
            margins = np.array(margins, dtype=np.float64)
            if margins.shape != y.shape:
                raise ValueError(f"margins must have shape {y.shape}")
            unknown = np.flatnonzero(np.isnan(margins))
            if unknown.size:
                # only the columns at the upper bound are missing from free_margins
                bound = sv[at_upper[sv]]
                part = _kernel_products(kernel, X, bound, (y[bound] * alpha[bound])[:, None],
                                        offset, max_mb, rows=unknown)[:, 0]
                margins[unknown] = free_margins[unknown] + y[unknown] * part
        return cls._assemble(C, alpha, weights, margins, free_margins,
                             _z_norms(kernel, X, augmented), at_upper, start)

    @classmethod
    def from_margins(cls, X, y, C, alpha, kernel: Kernel, margins, free_margins, *, augmented=True,
                     weights=None, z_norms=None) -> "ScreeningReference":
        """Reference from a dual point whose margins g_i and free-SV margins z_i'u are already known
        (e.g. read from a path's shared kernel row cache): O(n), no kernel evaluation
        (``z_norms`` given) or one diagonal pass."""
        start = time.perf_counter()
        y, alpha, weights, C = _check_reference_inputs(y, alpha, weights, C)
        margins = np.asarray(margins, dtype=np.float64)
        free_margins = np.asarray(free_margins, dtype=np.float64)
        if margins.shape != y.shape or free_margins.shape != y.shape:
            raise ValueError(f"margins and free_margins must have shape {y.shape}")
        at_upper = (alpha >= C * weights) & (alpha > 0)
        if z_norms is None:
            z_norms = _z_norms(kernel, X, augmented)
        return cls._assemble(C, alpha, weights, margins, free_margins, z_norms, at_upper, start)

    @classmethod
    def _assemble(cls, C, alpha, weights, margins, free_margins, z_norms, at_upper, start):
        free = (alpha > 0) & ~at_upper
        w_norm2 = max(float(alpha @ margins), 0.0)
        u_norm2 = max(float(alpha[free] @ free_margins[free]), 0.0)
        wu = float(alpha[free] @ margins[free])
        gap = float(np.sum((C * weights - alpha) * np.maximum(1.0 - margins, 0.0))
                    + np.sum(alpha * np.maximum(margins - 1.0, 0.0)))
        return cls(C=float(C), alpha=alpha, weights=weights, margins=margins,
                   free_margins=free_margins, z_norms=z_norms, at_upper=at_upper,
                   w_norm2=w_norm2, u_norm2=u_norm2, wu=wu, gap=max(gap, 0.0),
                   seconds=time.perf_counter() - start)

    @classmethod
    def trivial(cls, X, y, kernel: Kernel, *, augmented=True, weights=None,
                max_mb=DEFAULT_BLOCK_MB) -> "ScreeningReference":
        """Lemma 9: the exact solution a = C_min c at C_min = 1 / max_i (Q c)_i.

        For any C <= C_min, a = C c is optimal. Costs one blocked pass over the
        n x n kernel matrix (never stored).
        """
        start = time.perf_counter()
        y = np.asarray(y, dtype=np.float64)
        n = y.size
        weights = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
        Qc = y * _kernel_products(kernel, X, np.arange(n), (y * weights)[:, None],
                                  1.0 if augmented else 0.0, max_mb)[:, 0]
        top = float(Qc.max())
        if not top > 0:
            raise ValueError("Lemma 9 needs max_i (Q c)_i > 0; the kernel matrix is degenerate")
        C_min = 1.0 / top
        alpha = C_min * weights
        at_upper = alpha > 0
        return cls._assemble(C_min, alpha, weights, C_min * Qc, np.zeros(n),
                             _z_norms(kernel, X, augmented), at_upper, start)

    @property
    def w_norm(self) -> float:
        return float(np.sqrt(self.w_norm2))


def _check_reference_inputs(y, alpha, weights, C):
    y = np.asarray(y, dtype=np.float64)
    alpha = np.asarray(alpha, dtype=np.float64)
    n = y.size
    weights = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    C = float(C)
    if alpha.shape != (n,) or weights.shape != (n,):
        raise ValueError(f"alpha and weights must have shape ({n},)")
    if not (C > 0 and np.isfinite(C)):
        raise ValueError(f"reference C must be positive and finite, got {C!r}")
    if np.any(alpha < 0) or np.any(alpha > C * weights * (1 + 1e-12)):
        raise ValueError("the reference alpha is not feasible: 0 <= alpha_i <= C c_i must hold")
    return y, np.minimum(alpha, C * weights), weights, C


def _z_norms(kernel: Kernel, X, augmented) -> np.ndarray:
    diag = kernel.diagonal(X) + (1.0 if augmented else 0.0)
    return np.sqrt(np.maximum(diag, 0.0))


@dataclass
class ScreeningResult:
    """Samples proven in R (a*_i = 0) and in L (a*_i = C c_i), with the bounds on z_i'w*."""

    rule: str
    C: float
    in_R: np.ndarray
    in_L: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    seconds: float

    @property
    def n_screened(self) -> int:
        return int(self.in_R.sum() + self.in_L.sum())


# -- the two balls ---------------------------------------------------------------------------
def ball1(ref: ScreeningReference, C: float):
    """BT1: (z_i'm1 for all i, R1): the safeguarded ball of NC1 + NC2 (module docstring).

    With ``ref.margin_error`` e > 0 the radius is that of the worst ||w~||^2 and G the errors allow
    (R1 grows with both; |error| of a'g <= e sum a~, of G <= e sum C~ c_i)."""
    rho = C / ref.C
    e = ref.margin_error
    w_norm2 = ref.w_norm2 + e * float(ref.alpha.sum())
    gap = ref.gap + e * ref.C * float(ref.weights.sum())
    w = np.sqrt(w_norm2)
    eps = np.sqrt(2.0 * gap)
    r2 = ((rho - 1) / 2) ** 2 * w_norm2 + rho * abs(rho - 1) / 2 * w * eps \
        + max(rho * rho / 4 - rho / 2, 0.0) * eps * eps + rho * gap
    radius = np.sqrt(max(r2, 0.0)) + rho * eps / 2
    return (1 + rho) / 2 * ref.margins, radius


def ball2(ref: ScreeningReference, C: float):
    """BT2: (z_i'm2 for all i, r2): the ball of NC1 + NC3 with s = {a~_i = C~ c_i}.

    With margin errors (e on g, e_F on z'u) the radius is the largest the errors allow: each of
    ||w~||^2, w~'u, ||u||^2 and the excess moves by at most e or e_F times a sum of a~ or c."""
    rho = C / ref.C
    s, c, g = ref.at_upper, ref.weights, ref.margins
    zv = (g - ref.free_margins) / ref.C                  # z_i'v, v = (w~ - u) / C~
    centre = (g + C * zv) / 2
    e, e_free = ref.margin_error, ref.free_error
    sum_free = float(ref.alpha[(ref.alpha > 0) & ~s].sum()) if e or e_free else 0.0
    # ||w~ - C v||^2 = ||(1 - rho) w~ + rho u||^2
    diff2 = (1 - rho) ** 2 * (ref.w_norm2 + e * float(ref.alpha.sum())) \
        + 2 * rho * (1 - rho) * ref.wu + 2 * rho * abs(1 - rho) * e * sum_free \
        + rho * rho * (ref.u_norm2 + e_free * sum_free)
    excess = float(np.sum(np.where(s, c * np.maximum(g - 1, 0.0), c * np.maximum(1 - g, 0.0)))) \
        + e * float(c.sum())
    radius = np.sqrt(max(diff2 / 4 + C * excess, 0.0))
    return centre, radius


def _intersection_min(a, b, nz, r1, r2, D, p):
    """min z'w over B(m1, r1) n B(m2, r2), per sample (Theorem 8, by geometry).

    a = z'm1, b = z'm2, nz = ||z||, D = ||m2 - m1||, p = z'(m2 - m1)/D.
    Case 1: the minimiser of B1, m1 - r1 z/||z||, lies in B2; case 2: that of
    B2 lies in B1; otherwise it lies on the circle where both spheres meet
    (centre m1 + t e, radius sqrt(r1^2 - t^2), in the hyperplane normal to e).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        safe_nz = np.where(nz > 0, nz, 1.0)
        in2 = D * D + 2 * r1 * D * p / safe_nz + r1 * r1 <= r2 * r2
        in1 = D * D - 2 * r2 * D * p / safe_nz + r2 * r2 <= r1 * r1
        if D > 0:
            t = (D * D + r1 * r1 - r2 * r2) / (2 * D)
            circle = np.sqrt(max(r1 * r1 - t * t, 0.0))
            both = a + t * p - circle * np.sqrt(np.maximum(nz * nz - p * p, 0.0))
        else:
            both = np.maximum(a - r1 * nz, b - r2 * nz)
    return np.where(in2, a - r1 * nz, np.where(in1, b - r2 * nz, both))


def bounds(ref: ScreeningReference, C: float, rule: str = "it"):
    """(lower, upper) bounds of z_i'w*_C for every sample under ``rule``."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    nz = ref.z_norms
    rho = C / ref.C
    # |error| of the computed centres z_i'm1 = (1 + rho)/2 g_i and z_i'm2 = ((1 + rho) g_i - rho z_i'u)/2
    err1 = (1 + rho) / 2 * ref.margin_error
    err2 = ((1 + rho) * ref.margin_error + rho * ref.free_error) / 2
    if rule in ("bt1", "it"):
        a, r1 = ball1(ref, C)
        if rule == "bt1":
            return a - r1 * nz - err1, a + r1 * nz + err1
    b, r2 = ball2(ref, C)
    if rule == "bt2":
        return b - r2 * nz - err2, b + r2 * nz + err2
    if err1 or err2:
        # inexact centres: the bounds of each ball, widened; w* lies in both, so the tighter of the
        # two is safe (the closed form on the circle is not evaluated with perturbed inputs)
        return (np.maximum(a - r1 * nz - err1, b - r2 * nz - err2),
                np.minimum(a + r1 * nz + err1, b + r2 * nz + err2))
    # m2 - m1 = -(rho / 2) u, so D = rho ||u|| / 2 and z'(m2 - m1)/D = -z'u / ||u||
    u = np.sqrt(ref.u_norm2)
    D = rho * u / 2
    p = -ref.free_margins / u if u > 0 else np.zeros_like(nz)
    lower = _intersection_min(a, b, nz, r1, r2, D, p)
    upper = -_intersection_min(-a, -b, nz, r1, r2, D, -p)
    # IT is the intersection: never looser than either ball (guards case selection at ties)
    lower = np.maximum(lower, np.maximum(a - r1 * nz, b - r2 * nz))
    upper = np.minimum(upper, np.minimum(a + r1 * nz, b + r2 * nz))
    return lower, upper


def screen(ref: ScreeningReference, C: float, rule: str = "it", slack: float = DEFAULT_SLACK) -> ScreeningResult:
    """Samples proven in R (lower bound > 1) and in L (upper bound < 1) at ``C``.

    ``slack``: a bound must clear 1 by ``slack * (1 + |g_i| rho + radius ||z_i||)``
    so that rounding in the margins cannot screen a sample on the margin.
    """
    start = time.perf_counter()
    C = float(C)
    if not (C > 0 and np.isfinite(C)):
        raise ValueError(f"C must be positive and finite, got {C!r}")
    lower, upper = bounds(ref, C, rule)
    tol = slack * (1.0 + np.abs(ref.margins) * (C / ref.C) + (upper - lower))
    in_R = lower > 1.0 + tol
    in_L = upper < 1.0 - tol
    return ScreeningResult(rule, C, in_R, in_L, lower, upper, time.perf_counter() - start)


# -- beyond the paper: a duality-gap ball, valid for any feasible pair, with or without an unregularised bias ---
# GAP-safe rule (our addition to the paper's rules).
#
# For any primal point (w, b) and any dual feasible a (0 <= a_i <= C_i, and
# y'a = 0 when the bias b is unregularised, LIBSVM's formulation), the primal
# P(w, b) = 1/2 ||w||^2 + sum_i C_i (1 - y_i (w'phi_i + b))_+ is 1-strongly
# convex in w and P* >= D(a) = 1'a - 1/2 ||Z'a||^2, so
#
#     1/2 ||w - w*||^2 <= P(w, b) - P* <= P(w, b) - D(a) = G      =>   w* in B(w, sqrt(2 G)),
#
# hence y_i w*'phi_i in [lo_i, hi_i] = g_i -/+ sqrt(2 G) ||phi_i||, g_i = y_i w'phi_i.
# Without a bias (or with the augmented one, part of w) that is the rule: lo_i > 1
# proves a*_i = 0, hi_i < 1 proves a*_i = C_i.
#
# With an unregularised bias the margin is y_i w*'phi_i + y_i b*, and b* is
# unknown. It is bounded by y'a* = 0 and the KKT conditions: at b* = beta every
# positive i with lo_i + beta > 1 has a*_i = 0 and every negative j with
# hi_j - beta < 1 has a*_j = C_j, so
#
#     sum_{pos: lo_i + beta <= 1} C_i  >=  sum_pos a*_i  =  sum_neg a*_j  >=  sum_{neg: hi_j - beta < 1} C_j,
#
# whose left side falls and right side grows with beta: b* <= b_max, the
# largest beta where it holds (a breakpoint, found by sorting; b_min likewise
# with the classes' roles swapped). Then positives have margin in
# [lo_i + b_min, hi_i + b_max] and negatives in [lo_j - b_max, hi_j - b_min].
# The best b of the primal point (the minimiser of the hinge sum, also a
# breakpoint) keeps G small.



def _hinge_min_over_b(g, y, upper, p, delta=0.0):
    """min_b [sum_i C_i (-p_i - g_i - y_i b)_+ + Delta b] and its minimiser (a breakpoint
    b = y_i (-p_i - g_i)); the hinge's 1 - g_i - y_i b for p = -1. The term Delta b is the primal's
    side of the equality y'a = Delta (one-class: Delta = 1 in the scaling of
    :mod:`leansvm.paths.one_class_path`, the objective's -rho)."""
    pos, neg = y > 0, y < 0
    t, wt = -p[pos] - g[pos], upper[pos]         # positive terms (t_i - b)_+ C_i
    s, ws = g[neg] + p[neg], upper[neg]          # negative terms (b - s_j)_+ C_j
    cand = np.concatenate((t, s))
    if cand.size == 0:
        return 0.0, 0.0
    order_t = np.argsort(t)
    t_sorted, wt_sorted = t[order_t], wt[order_t]
    ct_w = np.concatenate(([0.0], np.cumsum(wt_sorted)))
    ct_wt = np.concatenate(([0.0], np.cumsum(wt_sorted * t_sorted)))
    order_s = np.argsort(s)
    s_sorted, ws_sorted = s[order_s], ws[order_s]
    cs_w = np.concatenate(([0.0], np.cumsum(ws_sorted)))
    cs_ws = np.concatenate(([0.0], np.cumsum(ws_sorted * s_sorted)))
    k = np.searchsorted(t_sorted, cand, side="right")          # t_i <= b: inactive
    above_w, above_wt = ct_w[-1] - ct_w[k], ct_wt[-1] - ct_wt[k]
    m = np.searchsorted(s_sorted, cand, side="left")           # s_j < b: active
    value = (above_wt - cand * above_w) + (cand * cs_w[m] - cs_ws[m]) + delta * cand
    best = int(np.argmin(value))
    return float(value[best] if delta else max(value[best], 0.0)), float(cand[best])


def _bias_upper_bound(lo_pos, c_pos, t_pos, hi_neg, c_neg, t_neg, delta=0.0):
    """b_max = sup{beta : W_pos{lo_i + beta <= t_i} >= Delta + W_neg{hi_j - beta < t_j}} (comment above,
    with the margin thresholds t = -p in place of 1 and y'a* = Delta: sum_pos a* = Delta + sum_neg a*)."""
    t = t_pos - lo_pos                           # positive i counts while beta <= t_i
    s = hi_neg - t_neg                           # negative j counts once beta > s_j
    cand = np.sort(np.concatenate((t, s)))
    if cand.size == 0:
        return np.inf
    t_sorted = np.sort(t)
    ct = np.concatenate(([0.0], np.cumsum(c_pos[np.argsort(t)])))
    order_s = np.argsort(s)
    s_sorted = s[order_s]
    cs = np.concatenate(([0.0], np.cumsum(c_neg[order_s])))
    upos = ct[-1] - ct[np.searchsorted(t_sorted, cand, side="left")]     # W{t_i >= beta}
    lneg = cs[np.searchsorted(s_sorted, cand, side="left")]              # W{s_j < beta}
    ok = np.flatnonzero(upos >= lneg + delta)
    return float(cand[ok[-1]]) if ok.size else -np.inf


def gap_bounds(margins, w_norm2, dual_value, problem: DualProblem, phi_norms, *, equality=False, margin_error=0.0):
    """(lower, upper, G, (b_min, b_max)) bounds on the optimal margins from the gap ball.

    ``problem`` (:class:`leansvm.core.problems.DualProblem`, the bounds C_i of the C screened at)
    gives the primal loss sum_i C_i (-p_i - y_i (w'phi_i + b))_+ (C-SVC's hinge for p = -1: the
    ball argument holds for every problem of that form). ``margins`` g_i = y_i w'phi_i of the
    primal centre w (no bias), ``w_norm2`` = ||w||^2, ``dual_value`` -D(a) = -p'a - ||w_a||^2 / 2
    of a dual feasible point (for ``equality`` a must satisfy y'a = Delta, and the primal has the
    term Delta b: P(w, b) = ||w||^2 / 2 + sum_i C_i (-p_i - y_i (w'phi_i + b))_+ + Delta b, whose
    dual is min a'Qa / 2 + p'a, y'a = Delta, 0 <= a <= C), ``phi_norms`` ||phi_i||
    (with the +1 of an augmented bias included). With ``equality`` the primal point takes
    its best bias, and the bounds include the b* interval. ``margin_error``:
    a bound on |error| of every g_i (e.g. float32 kernel rows); the gap grows by
    (sum C_i) of it and every interval by it, so the rule stays safe.
    """
    g = np.asarray(margins, dtype=np.float64)
    y, upper, p = problem.y, problem.C, problem.p
    delta = float(problem.delta) if equality else 0.0
    if equality and problem.sign_sums is not None:
        raise ValueError("the gap rule's bias interval is derived for one equality y'a = Delta, not the nu forms' two")
    if equality:
        hinge, _ = _hinge_min_over_b(g, y, upper, p, delta)
    else:
        hinge = float(upper @ np.maximum(-p - g, 0.0))
    gap = max(0.5 * w_norm2 + hinge - dual_value, 0.0) + 2.0 * margin_error * float(upper.sum())
    r = np.sqrt(2.0 * gap)
    lo, hi = g - r * phi_norms - margin_error, g + r * phi_norms + margin_error
    if not equality:
        return lo, hi, gap, (0.0, 0.0)
    pos, neg = y > 0, y < 0
    b_max = _bias_upper_bound(lo[pos], upper[pos], -p[pos], hi[neg], upper[neg], -p[neg], delta)
    b_min = -_bias_upper_bound(lo[neg], upper[neg], -p[neg], hi[pos], upper[pos], -p[pos], -delta)
    lower = np.where(pos, lo + b_min, lo - b_max)
    upper_m = np.where(pos, hi + b_max, hi - b_min)
    return lower, upper_m, gap, (b_min, b_max)


def gap_screen(margins, w_norm2, dual_value, problem: DualProblem, phi_norms, *, equality=False,
               slack=DEFAULT_SLACK, C=np.nan, margin_error=0.0) -> ScreeningResult:
    """Variables proven in R (a_i = 0: margin above -p_i) / L (a_i = C_i: below) by the gap ball
    (:func:`gap_bounds`); rule name 'gap'."""
    start = time.perf_counter()
    lower, upper_m, gap, _ = gap_bounds(margins, w_norm2, dual_value, problem, phi_norms, equality=equality,
                                        margin_error=margin_error)
    finite = np.isfinite(lower) & np.isfinite(upper_m)
    tol = slack * (1.0 + np.abs(margins) + np.where(finite, upper_m - lower, 0.0))
    threshold = -problem.p
    in_R = finite & (lower > threshold + tol)
    in_L = finite & (upper_m < threshold - tol)
    return ScreeningResult("gap", float(C), in_R, in_L, lower, upper_m, time.perf_counter() - start)


def gap_screen_from_reference(alpha_ref, margins_ref, C_ref, C, problem: DualProblem, phi_norms, *,
                              equality=False, slack=DEFAULT_SLACK, margin_error=0.0) -> ScreeningResult:
    """The gap rule at ``C`` from a solution (alpha~, margins g~ = y_i w~'phi_i) at C_ref <= C.

    ``problem``: the dual at unit C (bounds c_i; screened at C c_i). Dual point t a~ (feasible
    at C for 0 <= t <= C / C_ref; keeps y'a = 0), t = -p'a~ / ||w~||^2 clipped (the best such t);
    primal centre t' w~ with t' the best of {1, t, C / C_ref}. With an equality y'a = Delta != 0
    (one-class along nu) only t = 1 keeps it: a~ itself, feasible at C >= C_ref since the box
    only grows. O(n log n), no kernel evaluation.
    """
    alpha_ref = np.asarray(alpha_ref, dtype=np.float64)
    g = np.asarray(margins_ref, dtype=np.float64)
    rho = C / C_ref
    w2 = max(float(alpha_ref @ g), 0.0)
    s1 = float(np.sum(-problem.p * alpha_ref))
    if equality and problem.delta != 0.0:          # only t = 1 keeps y'a = Delta
        if rho < 1.0:
            raise ValueError("with y'a = Delta != 0 the reference must come from a C at or below the one screened")
        t, scales = 1.0, {1.0}
    else:
        t = min(max(s1 / w2, 0.0), rho) if w2 > 0 else rho
        scales = {1.0, t, rho}
    dual = t * s1 - 0.5 * t * t * w2
    at_C = problem.with_bounds(C * problem.C)
    best = None
    for scale in sorted(scales):
        if scale <= 0:
            continue
        res = gap_screen(scale * g, scale * scale * w2, dual, at_C, phi_norms, equality=equality,
                         slack=slack, C=C, margin_error=scale * margin_error)
        if best is None or res.n_screened > best.n_screened:
            best = res
    return best
