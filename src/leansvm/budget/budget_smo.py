r"""Budget-L1 and budget-L2 SVM (Dekel & Singer, *Support Vector Machines on a Budget*, NIPS 2006).

Problem. Any-Norm-SVM (paper eq. 2) replaces the 1-norm of the slacks of the
L1-SVM by a norm ||.||; its dual (eq. 4), written as LIBSVM's minimisation
with Q_ij = y_i y_j k(x_i, x_j), is

    min_a  D(a) = 1/2 a'Qa - 1'a   s.t.  a >= 0,  y'a = 0,  ||a||_* <= C.

The paper's primal has a bias b (f(x_i) + b in the margin constraints), so the
dual **does** carry the equality constraint y'a = 0, and the SMO pair update (8)
keeps it. With Peetre's K-functional (eq. 5) of the 1-inf pair (t = B) and of
the 2-inf pair (t = sqrt(B)), the dual norm is the J-functional (eq. 6) and
the constraint ||a||_* <= C reads

    budget-L1:  a_i <= C,           1'a <= B C          (section 4)
    budget-L2:  ||a||_2 <= C,       1'a <= sqrt(B) C.

Theorem 1: ||v||_K(1,inf,B) is the sum of the B largest |v_i|, so budget-L1 only
charges the B worst hinge losses; with B >= n the sum constraint is implied by
the box and budget-L1 *is* the C-SVC. Theorem 2: if mu_(B) < 1 (mu = y(f + b)
sorted increasingly) then a_k = 0 whenever mu_k > mu_(B), hence #SV <= B when
mu_(B) != mu_(B+1).

SMO pair step (eqs. 8-12). For a pair (i, j), a_i += y_i t, a_j -= y_j t keeps
y'a = 0 (the paper's lambda is t). Along that line

    D(t) = D(0) - v t + 1/2 a_ij t^2,    v = (-y_i G_i) - (-y_j G_j),
    a_ij = K_ii + K_jj - 2 K_ij   (= -2 P of the paper),  G = Qa - 1,

so the unconstrained step is t = v / a_ij (eq. 9) and it is clipped to the
interval of (10) a >= 0, (11) a <= C, (12) the sum: 1'a changes by t (y_i - y_j),
so t <= (S - 1'a) / 2 when y_i = +1, y_j = -1 (S = B C or sqrt(B) C). For
budget-L2 the paper adds the 2-norm chord (13): ||a + t d||^2 <= C^2 with
d_i = y_i, d_j = -y_j is t^2 + beta t + gamma <= 0, beta = a_i y_i - a_j y_j,
gamma = (||a||^2 - C^2) / 2, i.e. t <= (-beta + sqrt(beta^2 - 4 gamma)) / 2.

Working-pair selection and why it converges. Feasible directions of the
linear constraints {y'd = 0, 1'd <= 0 when 1'a = S, box} split per class as
sum_{+} d = sum_{-} d <= 0, so every feasible direction is a conic
combination of pair directions: same-class transfers, opposite-class pairs
that both decrease and, while the sum constraint has slack, opposite-class
pairs that both increase (y_i = +1 in I_up, y_j = -1 in I_low). Hence "no
violating allowed pair" is exactly the KKT condition, and the maximal
violation over allowed pairs (LIBSVM's m(a) - M(a) with the (+, -) combination
removed while 1'a = S) is the stopping measure: stop when it is <= tol times
the margin level 1 - rho of the free SVs (clipped to [1e-3, 1]; 1, i.e.
LIBSVM's rule, while the sum constraint is inactive). With the budget active
the problem is a nu-SVM (nu = B/n for budget-L1) whose whole solution scales
with 1 - rho, which tends to 0 for small B C: an absolute tol of 1e-3 then
stops at a point whose violation exceeds the margin itself. The
selected pair is the second-order one of Fan, Chen & Lin (2005), max v^2/a_ij,
with i the best I_up candidate of each class and j restricted to allowed
pairs whose violation is at least ``SIGMA`` times the maximal one: a
*constant-factor violating pair*, for which Chen, Fan & Lin (IEEE TNN 2006,
"A study on SMO-type decomposition methods") prove convergence of SMO-type
methods with exact pair steps; a step blocked by the sum constraint makes it
exactly active (the slack is set to 0), like a variable reaching a bound.
With B >= n the method is LIBSVM's.

The 2-norm ball is not linear: pair directions do not generate its tangent
cone, and the paper's SMO with (13) can stop at a non-optimal point of the
sphere (e.g. three free a_i of one class with a ordered like the gradient:
every ascent pair points outwards). ``l2_solver='paper'`` runs that SMO as
written and reports a stall; the default ``'multiplier'`` keeps the ball's
Lagrange multiplier eta explicit: for fixed eta >= 0 it solves
min D(a) + eta/2 ||a||^2 under the linear constraints (the pair step (9) with
a_ij + 2 eta, clipped by (10)-(12): the convergent case above), and finds the
eta with ||a(eta)|| = C (or eta = 0 when the ball is inactive) by a
safeguarded secant (Illinois) search; ||a(eta)|| is continuous and
non-increasing in eta. The result is exactly the KKT point of the budget-L2
dual, made feasible by scaling a onto the ball at the end.

Bias ("the standard techniques used to find b in L1-SVM apply", section 2).
KKT with multipliers b (equality) and rho >= 0 (sum constraint) read
G_i + rho + b y_i = 0 for free a_i. While the sum constraint is inactive
rho = 0 and b is LIBSVM's C-SVC rule (average of -y_i G_i over free SVs); when
it is active each class gives its own level r_+ = -(rho + b), r_- = -(rho - b)
(averages over free SVs, midpoints of the bound intervals otherwise), so
b = (r_- - r_+) / 2 and rho = -(r_+ + r_-) / 2: LIBSVM's nu-SVM rule.
For budget-L2, G includes eta a.

Kernel rows and shrinking. When the n x n kernel fits in ``cache_size`` it is
computed once in BLAS blocks; otherwise rows come from the shared
:class:`~leansvm.core.kernels.KernelRowCache` in float32 (LIBSVM's precision). The
pair loop (:mod:`.budget_shrinking`) reads rows from either and shrinks the
active set as LIBSVM does, with the sum constraint's multiplier deciding which
classes couple; the gradient is reconstructed before the final check. Only the
paper's budget-L2 SMO with the chord (13) uses the plain loop below (and, when
the kernel does not fit, decomposition over working sets of
``working_set_size`` samples).

Pruning (section 5): keep the s largest a_i, zero the rest, and refit the bias
by minimising the primal loss ||xi(b)|| of the same interpolation norm with f
fixed (the primal objective's only b-dependent part), see :func:`refit_intercept`.
"""

from __future__ import annotations

import math
import time
import warnings

import numba
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from leansvm.core.jit import njit
from leansvm.core.kernels import Kernel, KernelRowCache
from leansvm.core.multiclass import BinaryFit
from leansvm.budget.smo_steps import (_TAU, CONVERGED, DEFAULT_WORKING_SET, MARGIN_FLOOR, MAX_ITER, SIGMA,
                                      STALLED, _apply_pair, _bound_masks, _low_partner, _pair_limit,
                                      _scan_set, max_violation)



def budget_bound(norm: str, budget: float, C: float) -> float:
    """S of the sum constraint 1'a <= S: B C (1-inf norm) or sqrt(B) C (2-inf norm)."""
    return budget * C if norm == "l1" else math.sqrt(budget) * C


# -- the compiled pair loop ---------------------------------------------------------------
@njit(cache=True)
def _smo_block(K, y, alpha, G, U, slack, eta, ball_sq, sumsq, tol, max_iter, floor):
    """SMO with the pair update (9) clipped by (10)-(12) (and (13) when ``ball_sq`` is finite).

    K: kernel block of the working set (q x q); y, alpha, G, U: its labels,
    dual variables, gradient of D(a) + eta/2 ||a||^2 and upper bounds (updated
    in place); slack = S - 1'a and sumsq = ||a||^2 are global. Returns
    (iterations, slack, sumsq, final maximal violation, status).
    """
    q = y.shape[0]
    everyone = np.arange(q)
    n_iter = 0
    while True:
        viol, scale, up_arg0, up_arg1, _, _, _, _ = _scan_set(alpha, y, G, U, slack, floor, everyone, q)
        sum_active = slack <= 0.0
        if viol <= tol * scale:
            return n_iter, slack, sumsq, viol, CONVERGED
        if n_iter >= max_iter:
            return n_iter, slack, sumsq, viol, MAX_ITER
        threshold = SIGMA * viol
        # -- second-order choice among constant-factor violating allowed pairs
        best = -1.0
        bi = -1
        bj = -1
        for ci in range(2):
            i = up_arg0 if ci == 0 else up_arg1
            if i < 0:
                continue
            vi = -y[i] * G[i]
            Kii = K[i, i]
            for t in range(q):
                if not _low_partner(alpha, y, U, t, ci == 0 and sum_active):
                    continue
                b = vi + y[t] * G[t]
                if b <= 0.0 or (b < threshold and ball_sq == np.inf):
                    continue
                a = Kii + K[t, t] - 2.0 * K[i, t] + 2.0 * eta
                if a <= 0.0:
                    a = _TAU
                if ball_sq < np.inf:
                    # the chord (13) may block a pair: score the clipped step's decrease
                    t_max = _pair_limit(alpha, y, U, i, t, slack, ball_sq, sumsq)
                    if t_max <= 0.0:
                        continue
                    st = min(b / a, t_max)
                    gain = b * st - 0.5 * a * st * st
                else:
                    gain = b * b / a
                if gain > best:
                    best = gain
                    bi = i
                    bj = t
        i = bi
        j = bj
        if i < 0:  # cannot happen when viol > tol; guards against NaN gradients
            return n_iter, slack, sumsq, viol, STALLED
        a = K[i, i] + K[j, j] - 2.0 * K[i, j] + 2.0 * eta
        if a <= 0.0:
            a = _TAU
        step = (-y[i] * G[i] + y[j] * G[j]) / a          # (9)
        t_max = _pair_limit(alpha, y, U, i, j, slack, ball_sq, sumsq)
        if step > t_max:
            step = t_max
        if step <= 0.0:
            return n_iter, slack, sumsq, viol, STALLED
        old_i = alpha[i]
        old_j = alpha[j]
        d_i, d_j, slack = _apply_pair(alpha, y, U, i, j, step, slack)
        sumsq += (alpha[i] * alpha[i] - old_i * old_i) + (alpha[j] * alpha[j] - old_j * old_j)
        ci = y[i] * d_i
        cj = y[j] * d_j
        for t in range(q):
            G[t] += y[t] * (K[i, t] * ci + K[j, t] * cj)
        G[i] += eta * d_i
        G[j] += eta * d_j
        n_iter += 1




def violation_and_scale(alpha, y, G, U, slack, floor=MARGIN_FLOOR):
    """(maximal violation, margin scale): the solver stops when violation <= tol * scale."""
    viol, scale = _scan_set(alpha, y, G, U, float(slack), float(floor), np.arange(y.size), y.size)[:2]
    return float(viol), float(scale)


def _select_working_set(alpha, y, G, U, q):
    """The q/4 most violating samples of each (class, direction) list: I_up / I_low per class."""
    v = -y * G
    pos, up, low = _bound_masks(alpha, y, U)
    chosen = []
    share = max(1, q // 4)
    for mask, sign in ((up & pos, -1), (up & ~pos, -1), (low & pos, 1), (low & ~pos, 1)):
        idx = np.flatnonzero(mask)
        if idx.size > share:
            idx = idx[np.argpartition(sign * v[idx], share - 1)[:share]]
        chosen.append(idx)
    W = np.unique(np.concatenate(chosen))
    if W.size < min(q, y.size):  # fill with free samples of smallest |violation| ... then anything
        rest = np.setdiff1d(np.arange(y.size), W, assume_unique=True)
        free = rest[(alpha[rest] > 0) & (alpha[rest] < U[rest])]
        extra = np.concatenate([free, np.setdiff1d(rest, free, assume_unique=True)])
        W = np.union1d(W, extra[: min(q, y.size) - W.size])
    return W


def kkt_intercept(alpha, y, G, U, slack):
    """(b, rho): bias and sum-constraint multiplier from the KKT conditions (module docstring)."""
    yG = y * G
    at_upper = alpha >= U
    at_lower = alpha <= 0
    free = ~(at_upper | at_lower)
    if slack > 0:
        if free.any():
            r = yG[free].mean()
        else:
            ub = np.min(yG[(at_upper & (y < 0)) | (at_lower & (y > 0))], initial=np.inf)
            lb = np.max(yG[(at_upper & (y > 0)) | (at_lower & (y < 0))], initial=-np.inf)
            r = _midpoint(lb, ub)
        return -float(r), 0.0
    levels = []
    for cls in (1.0, -1.0):
        in_cls = y == cls
        f = free & in_cls
        if f.any():
            levels.append(G[f].mean())
        else:
            ub = np.min(G[at_lower & in_cls], initial=np.inf)
            lb = np.max(G[at_upper & in_cls], initial=-np.inf)
            levels.append(_midpoint(lb, ub))
    r_pos, r_neg = levels
    rho = -(r_pos + r_neg) / 2
    if rho < 0:  # the sum constraint carries no force: C-SVC rule
        return kkt_intercept(alpha, y, G, U, 1.0)[0], 0.0
    return float((r_neg - r_pos) / 2), float(rho)


def _midpoint(lb, ub):
    if np.isfinite(lb) and np.isfinite(ub):
        return (lb + ub) / 2
    if np.isfinite(lb):
        return lb
    if np.isfinite(ub):
        return ub
    return 0.0


# -- one solve at fixed eta ---------------------------------------------------------------
class _Problem:
    """Kernel access for one binary problem: the full matrix when it fits, else a row cache.

    The cache holds rows in ``kernel_dtype`` (float32 by default, as LIBSVM) and
    at least ``MIN_CACHE_ROWS`` of them; ``diag`` is k(x_i, x_i).
    """

    MIN_CACHE_ROWS = 64

    def __init__(self, X, kernel: Kernel, cache_size: float, working_set_size: int, gram=None,
                 shrinking=True, kernel_dtype=np.float32):
        self.n = X.shape[0]
        self.q = int(working_set_size)
        self.shrinking = bool(shrinking)
        full_bytes = self.n * self.n * 8
        self.full = None
        self.cache = None
        if gram is not None:
            gram = np.ascontiguousarray(gram, dtype=np.float64)
            if gram.shape != (self.n, self.n):
                raise ValueError(f"gram must be {self.n} x {self.n}, got {gram.shape}")
            self.full = gram
        elif full_bytes <= cache_size * 2**20 or self.n <= self.q:
            self.full = np.empty((self.n, self.n))
            for start, stop, block in kernel.blocks(X, X):
                self.full[start:stop] = block
        else:
            row_mb = self.n * np.dtype(kernel_dtype).itemsize / 2**20
            self.cache = KernelRowCache(kernel, X, cache_size=max(cache_size, self.MIN_CACHE_ROWS * row_mb),
                                        dtype=kernel_dtype)
        self.info = {}
        self.diag = np.ascontiguousarray(np.diag(self.full)) if self.full is not None else \
            np.asarray(kernel.diagonal(X), dtype=np.float64)


def _solve_fixed_eta(prob: _Problem, y, alpha, G, U, slack, eta, ball_sq, tol, max_iter, floor=MARGIN_FLOOR):
    """Run SMO with shrinking (:mod:`.budget_shrinking`) until violation <= tol x scale.

    The paper's budget-L2 SMO with the chord (13) (finite ``ball_sq``) runs the
    plain loop on the whole matrix, or decomposition + SMO on sub-problems.

    alpha and G are updated in place; returns (iterations, slack, violation, status).
    """
    if ball_sq == np.inf:                      # linear constraints only: SMO with shrinking
        from leansvm.budget.budget_shrinking import solve_shrinking
        n_iter, slack, viol, status, info = solve_shrinking(prob.full, prob.cache, y, alpha, G, U, slack, eta,
                                                            tol, max_iter, floor, prob.diag, prob.shrinking)
        for key, value in info.items():
            prob.info[key] = prob.info.get(key, 0) + value if key != "min_active" else \
                min(prob.info.get(key, value), value)
        return n_iter, slack, viol, status
    sumsq = float(alpha @ alpha)
    if prob.full is not None:
        n_iter, slack, sumsq, viol, status = _smo_block(prob.full, y, alpha, G, U, slack, eta,
                                                        ball_sq, sumsq, tol, max_iter, floor)
        return n_iter, slack, viol, status
    total = 0
    while True:
        viol, scale = violation_and_scale(alpha, y, G, U, slack, floor)
        if viol <= tol * scale:
            return total, slack, viol, CONVERGED
        if total >= max_iter:
            return total, slack, viol, MAX_ITER
        W = _select_working_set(alpha, y, G, U, prob.q)
        rows = prob.cache.rows(W)
        aW, GW = alpha[W].copy(), G[W].copy()
        inner = min(max_iter - total, 20 * W.size)
        n_iter, slack, sumsq, _, status = _smo_block(np.ascontiguousarray(rows[:, W]), y[W], aW, GW,
                                                     U[W], slack, eta, ball_sq, sumsq, tol, inner, floor)
        total += max(n_iter, 1)
        d = aW - alpha[W]
        alpha[W] = aW
        changed = np.flatnonzero(d)
        if changed.size:
            G += y * (rows[changed].T @ (y[W][changed] * d[changed]))
            G[W] += eta * d
        if status == STALLED:
            return total, slack, max_violation(alpha, y, G, U, slack), STALLED


def _dual_objective(alpha, G, eta):
    """D(a) = 1/2 a'Qa - 1'a from the gradient G = Qa + eta a - 1 of the penalised problem."""
    Qa = G + 1.0 - eta * alpha
    return float(0.5 * alpha @ Qa - alpha.sum())


# -- the entry point -------------------------------------------------------------------------
def solve_budget_smo(X, y, C, kernel: Kernel, *, budget, norm="l1", tol=1e-3, max_iter=-1,
                     cache_size=200.0, working_set_size=DEFAULT_WORKING_SET, l2_solver="multiplier",
                     gram=None, alpha0=None, eta0=None, relative_tol=True, shrinking=True,
                     kernel_dtype=np.float32, verbose=False) -> BinaryFit:
    """Solve the budget-L1 / budget-L2 dual (eq. 4 with the 1-inf / 2-inf interpolation norm).

    ``y`` is +1/-1, ``C`` a scalar or per-sample box (the budget uses its
    maximum: S = B max(C) or sqrt(B) max(C)), ``budget`` B > 0. Returns a
    :class:`BinaryFit` with f(x) = sum_i alpha_i y_i k(x_i, x) + intercept;
    ``stats`` holds the sum-constraint multiplier ``rho``, the ball multiplier
    ``eta`` (L2), the final ``max_violation`` and, for L2, ``certified_gap``
    (an upper bound on D(alpha) - D*, from the multiplier search).
    ``gram`` optionally passes the precomputed n x n kernel matrix (benchmarks
    that solve many problems on one training set). ``alpha0`` warm-starts
    from a feasible point (e.g. the solution for a neighbouring B scaled by
    C_new / C_old) and ``eta0`` is a first guess of the ball multiplier (L2).
    ``relative_tol``: stop at violation <= tol x margin level 1 - rho (clipped
    to [MARGIN_FLOOR, 1]); False: LIBSVM's absolute rule, violation <= tol
    (5-50x fewer pair steps on degenerate problems with rho near 1, whose
    margin it may leave unresolved). ``shrinking``: LIBSVM-style removal of
    samples at bounds that cannot move (:mod:`.budget_shrinking`; same
    solution, far fewer operations per pair step). ``kernel_dtype``: the row
    cache's precision when the kernel matrix does not fit ``cache_size``
    (float32, as LIBSVM; the gradient is accumulated in float64).
    """
    if norm not in ("l1", "l2"):
        raise ValueError(f"norm must be 'l1' or 'l2', got {norm!r}")
    if l2_solver not in ("multiplier", "paper"):
        raise ValueError(f"l2_solver must be 'multiplier' or 'paper', got {l2_solver!r}")
    if not (np.isfinite(budget) and budget > 0):
        raise ValueError(f"budget must be a positive number, got {budget!r}")
    y = np.asarray(y, dtype=np.float64)
    n = y.size
    U = np.broadcast_to(np.asarray(C, dtype=np.float64), (n,)).copy()
    c_scalar = float(U.max())
    S = budget_bound(norm, budget, c_scalar)
    max_iter = max(10_000_000, 100 * n) if max_iter is None or max_iter < 0 else int(max_iter)
    start = time.perf_counter()
    prob = _Problem(X, kernel, cache_size, working_set_size, gram, shrinking, kernel_dtype)
    alpha, G = _start(prob, X, kernel, y, U, S, norm, c_scalar, alpha0)
    floor = MARGIN_FLOOR if relative_tol else 1.0
    stats = {"budget_bound": S}
    if norm == "l1" or l2_solver == "paper":
        ball_sq = np.inf if norm == "l1" else c_scalar**2
        n_iter, slack, viol, status = _solve_fixed_eta(prob, y, alpha, G, U, max(S - alpha.sum(), 0.0), 0.0,
                                                       ball_sq, tol, max_iter, floor)
        eta = 0.0
    else:
        n_iter, slack, viol, status, eta, gap = _solve_l2_multiplier(prob, y, alpha, G, U, S, c_scalar,
                                                                     tol, max_iter, eta0=eta0, floor=floor)
        stats["certified_gap"] = gap
    converged = status == CONVERGED
    if status == MAX_ITER:
        warnings.warn(f"budget SMO reached max_iter={max_iter} with KKT violation {viol:.3g} > tol={tol}",
                      ConvergenceWarning, stacklevel=2)
    elif status == STALLED:
        what = ("the 2-norm chord (13) blocks every violating pair (use l2_solver='multiplier')"
                if l2_solver == "paper" and norm == "l2" else "no violating pair can move")
        warnings.warn(f"budget SMO stopped: {what}; KKT violation {viol:.3g} > tol={tol}",
                      ConvergenceWarning, stacklevel=2)
    b, rho = kkt_intercept(alpha, y, G, U, slack)
    stats.update(rho=rho, eta=eta, max_violation=viol, sum_alpha=float(alpha.sum()),
                 time=time.perf_counter() - start, status=status,
                 kernel_mode="full" if prob.full is not None else "cache", **prob.info)
    if verbose:
        print(f"budget-{norm}: {n_iter} pair steps, violation {viol:.3g}, sum a = {alpha.sum():.6g} "
              f"(bound {S:.6g}), rho = {rho:.3g}, eta = {eta:.3g}, b = {b:.6g}")
    return BinaryFit(alpha=alpha, intercept=b, dual_objective=_dual_objective(alpha, G, eta),
                     n_iter=int(n_iter), converged=converged, stats=stats)


def _start(prob, X, kernel, y, U, S, norm, C, alpha0):
    """Initial (alpha, G = Qa - 1): zero, or the warm start ``alpha0`` after a feasibility check."""
    n = y.size
    if alpha0 is None:
        return np.zeros(n), -np.ones(n)
    alpha = np.array(alpha0, dtype=np.float64).reshape(-1)
    if alpha.shape != (n,) or not np.all(np.isfinite(alpha)):
        raise ValueError(f"alpha0 must be {n} finite values")
    scale = max(1.0, float(np.abs(alpha).sum()))
    alpha = np.clip(alpha, 0.0, U)
    if abs(y @ alpha) > 1e-9 * scale or alpha.sum() > S * (1 + 1e-9) or \
            (norm == "l2" and alpha @ alpha > C * C * (1 + 1e-9)):
        raise ValueError("alpha0 is not feasible (y'a = 0, 0 <= a <= C, sum a <= S, and ||a|| <= C for l2)")
    sv = np.flatnonzero(alpha)
    G = -np.ones(n)
    if sv.size:
        coef = alpha[sv] * y[sv]
        if prob.full is not None:
            G += y * (prob.full[:, sv] @ coef)
        else:
            for start, stop, block in kernel.blocks(X, X[sv]):
                G[start:stop] += y[start:stop] * (block @ coef)
    return alpha, G


def _solve_l2_multiplier(prob, y, alpha, G, U, S, C, tol, max_iter, max_outer=60, eta0=None, floor=MARGIN_FLOOR):
    """Budget-L2 through the ball's multiplier eta (module docstring).

    For each eta the penalised problem is solved to ``tol`` (warm start:
    G = Qa + eta a - 1 moves by (eta' - eta) a). Lagrangian duality certifies
    D(a_eta) - D* <= eta (C^2 - ||a_eta||^2) / 2 for a solution inside the
    ball, so the search (bracketing by factors of 4, then Illinois regula
    falsi on ||a(eta)|| / C - 1) keeps the best solution inside the ball and
    stops when that bound is below ``0.1 tol S``. Returns (iterations, slack,
    violation, status, eta, certified gap).
    """
    total = 0
    state = {"eta": 0.0, "slack": max(S - alpha.sum(), 0.0)}

    def solve(eta):
        nonlocal total
        G[:] += (eta - state["eta"]) * alpha
        n_iter, slack, viol, status = _solve_fixed_eta(prob, y, alpha, G, U, state["slack"], eta, np.inf,
                                                       tol, max(1, max_iter - total), floor)
        total += n_iter
        state.update(eta=eta, slack=slack)
        return float(np.linalg.norm(alpha) / C - 1.0), viol, status

    g, viol, status = solve(0.0)
    if g <= 0 or status != CONVERGED:
        return total, state["slack"], viol, status, 0.0, 0.0
    gap_tol = 0.1 * tol * S
    best = None

    def keep(eta, g, viol, status):
        nonlocal best
        cert = 0.5 * eta * C * C * (1.0 - (1.0 + g) ** 2)
        if best is None or cert < best[0]:
            best = (cert, eta, alpha.copy(), G.copy(), state["slack"], viol, status)
        return cert

    lo, g_lo = 0.0, g
    diag = float(np.mean(np.diag(prob.full))) if prob.full is not None else 1.0
    trial = eta0 if eta0 is not None and eta0 > 0 else max(diag, 1e-12) * g
    for _ in range(200):                                   # bracket the root
        g, viol, status = solve(trial)
        if status != CONVERGED or g <= 0:
            break
        lo, g_lo = trial, g
        trial *= 4.0
    hi, g_hi = trial, g
    if status == CONVERGED:
        cert = keep(hi, g, viol, status)
        side = 0
        for _ in range(max_outer):                         # Illinois regula falsi
            if cert <= gap_tol or hi - lo <= 1e-14 * hi:
                break
            trial = hi - g_hi * (hi - lo) / (g_hi - g_lo)
            if not lo < trial < hi:
                trial = 0.5 * (lo + hi)
            g, viol, status = solve(trial)
            if status != CONVERGED:
                break
            if g > 0:
                lo, g_lo = trial, g
                if side == -1:
                    g_hi *= 0.5
                side = -1
            else:
                hi, g_hi = trial, g
                cert = keep(trial, g, viol, status)
                if side == 1:
                    g_lo *= 0.5
                side = 1
    if best is None:                                       # nothing inside the ball: report as is
        return total, state["slack"], viol, status, state["eta"], float("nan")
    cert, eta, a_best, G_best, slack, viol, status = best
    alpha[:] = a_best
    G[:] = G_best
    return total, slack, viol, status, eta, cert


# -- interpolation norms, pruning, bias refit (section 5) --------------------------------
def interpolation_norm(xi, budget, norm="l1") -> float:
    """Peetre's K-functional of |xi|: 1-inf with t = B (Theorem 1: sum of the B largest) or 2-inf with t = sqrt(B).

    ||v||_K(2,inf,t) = min_{phi >= 0} ||(|v| - phi)_+||_2 + t phi (the split w + z with
    |z| <= phi); the minimiser is found exactly per segment between sorted values.
    """
    v = np.sort(np.abs(np.asarray(xi, dtype=np.float64)))[::-1]
    if norm == "l1":
        k = int(math.floor(budget))
        frac = budget - k
        return float(v[:k].sum() + (frac * v[k] if frac and k < v.size else 0.0))
    t = math.sqrt(budget)
    return float(_k2inf_sorted(v, t))


@njit(cache=True)
def _k2inf_sorted(v, t):
    """min_phi ||(v - phi)_+||_2 + t phi for v sorted decreasingly (v >= 0)."""
    n = v.shape[0]
    best = t * v[0] if n else 0.0            # phi = max: w = 0
    s1 = 0.0
    s2 = 0.0
    for k in range(1, n + 1):                # k values above phi, phi in [v[k], v[k-1]]
        s1 += v[k - 1]
        s2 += v[k - 1] * v[k - 1]
        lo = v[k] if k < n else 0.0
        hi = v[k - 1]
        # stationary point of h(phi) = sqrt(s2 - 2 phi s1 + k phi^2) + t phi
        cands = [lo, hi]
        var = s2 - s1 * s1 / k               # k * variance of the top k
        if t * t < k and var > 0:
            phi = s1 / k - t * math.sqrt(var / (k * (k - t * t)))
            if lo < phi < hi:
                cands.append(phi)
        for phi in cands:
            h = s2 - 2.0 * phi * s1 + k * phi * phi
            val = math.sqrt(max(h, 0.0)) + t * phi
            if val < best:
                best = val
    return best


def largest_weights(alpha, s) -> np.ndarray:
    """Indices of the s largest alpha_i (ties to the lower index), only among alpha_i > 0."""
    alpha = np.asarray(alpha)
    nz = np.flatnonzero(alpha > 0)
    if nz.size <= s:
        return nz
    order = np.lexsort((nz, -alpha[nz]))
    return np.sort(nz[order[: int(s)]])


def primal_loss(margins_f, y, b, budget, norm="l1") -> float:
    """||xi(b)|| with xi_i = max(0, 1 - y_i (f_i + b)) in the budget's interpolation norm."""
    xi = np.maximum(0.0, 1.0 - y * (margins_f + b))
    return interpolation_norm(xi, budget, norm)


def refit_intercept(f, y, budget, norm="l1") -> float:
    """argmin_b ||xi(b)||: the primal objective over b with f fixed (f = outputs without bias).

    Convex in b; its minimiser lies between the breakpoints y_i - f_i. For the
    1-inf norm, ||xi||_K = min_{phi>=0} sum (u_i - y_i b - phi)_+ + B phi with
    u = 1 - y f; with p = b + phi and q = phi - b it separates into two
    one-class problems coupled only by p + q >= 0, solved exactly by order
    statistics. For the 2-inf norm a bounded scalar search (Brent) is used.
    """
    f = np.asarray(f, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if norm == "l1":
        return _refit_l1(1.0 - y * f, y, budget)
    from scipy.optimize import minimize_scalar

    breaks = y - f
    lo, hi = float(breaks.min()), float(breaks.max())
    if hi - lo <= 0:
        return lo
    res = minimize_scalar(lambda b: primal_loss(f, y, b, budget, norm), bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-9 * max(1.0, hi - lo)})
    return float(res.x)


def _refit_l1(u, y, budget):
    """Exact minimiser over b of the top-B sum of (u_i - y_i b)_+ (see :func:`refit_intercept`)."""
    half = budget / 2.0
    pos, neg = np.sort(u[y > 0])[::-1], np.sort(u[y < 0])[::-1]

    def argmin_one(values):
        # minimise sum (v_i - p)_+ + half p over p: the ceil(half)-th largest value
        k = int(math.ceil(half))
        if k > values.size:
            return -np.inf
        if k == half and k < values.size:      # flat between the k-th and k+1-th largest
            return 0.5 * (values[k - 1] + values[k])
        return values[k - 1]

    p, q = argmin_one(pos), argmin_one(neg)
    if p + q >= 0:
        return float((p - q) / 2)
    # on p + q = 0 (phi = 0): the plain hinge sum sum (u_i - y_i b)_+ over b
    return _refit_hinge(u, y)


def _refit_hinge(u, y):
    """argmin_b sum_i (u_i - y_i b)_+ (subgradient count: #(+ active) = #(- active))."""
    # +: active while b < u_i (slope -1);  -: active while b > -u_i (slope +1)
    breaks = np.concatenate([u[y > 0], -u[y < 0]])
    slopes_change = np.concatenate([np.ones(int((y > 0).sum())), np.ones(int((y < 0).sum()))])
    order = np.argsort(breaks, kind="stable")
    b_sorted = breaks[order]
    # slope at b just below the smallest break: -(#positives), rises by 1 at every break
    slope = -float((y > 0).sum()) + np.cumsum(slopes_change[order])
    k = int(np.searchsorted(slope, 0.0))       # first break where the slope becomes >= 0
    k = min(k, b_sorted.size - 1)
    if slope[k] == 0.0 and k + 1 < b_sorted.size:
        return float(0.5 * (b_sorted[k] + b_sorted[k + 1]))
    return float(b_sorted[k])
