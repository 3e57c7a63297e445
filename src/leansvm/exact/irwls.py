r"""Exact SVM duals by iteratively re-weighted least squares (Pérez-Cruz et al., NIPS 2000, Table 1).

Problem (LIBSVM's generic dual, :class:`leansvm.core.problems.DualProblem`):

    min_a  D(a) = 1/2 a'Q a + p' a,   Q_ij = y_i y_j k(x_i, x_j),
    s.t.   0 <= a_i <= C_i,   y' a = Delta.

The paper derives IRWLS for C-SVC (p = -1, Delta = 0), written below in its
terms; every formula holds for any p with 1 replaced by -p_i (u_i below, the
right-hand side y_1 by -y_1 p_1), because each variable is the dual of a
hinge C_i max(0, -p_i - y_i (f_i + b)): epsilon-SVR's two variables per sample
(p = epsilon -+ z) give the two sides of the epsilon-insensitive loss.

IRWLS view (paper eqs. 2-8). With errors e_i = y_i - (f(x_i) + b) and
u_i = y_i e_i = 1 - y_i (f(x_i) + b), the primal hinge loss C_i max(0, u_i) is
replaced, at the current point, by the weighted square a_i/2 e_i^2 with

    a_i = 0              if u_i < 0,                                   (8)
    a_i = C_i / u_i      if u_i >= 0.

Minimising 1/2 ||w||^2 + sum_i a_i/2 e_i^2 over w = sum beta_i y_i phi(x_i) and b
gives, on the free set S1 (samples in S2 are fixed at 0, in S3 at C), the
linear system (3) of the paper; written for v = y * beta it reads

    (K_11 + D_a^{-1}) v_1 + b 1 = y_1 - K_13 v_3 - g_1
    1' v_1                      = -1' v_3 - c_out

where g and c_out are the contributions of the samples outside the working
set (the paper's G_in, G_bin). K_11 + D_a^{-1} is symmetric positive
definite, so v_1 and b come from one Cholesky factorisation and a Schur
complement for b (two triangular solves). Free support vectors have u_i -> 0,
hence a_i -> infinity; u is floored at ``delta`` so a_i <= C_i / delta.

Sets are re-ordered as in Table 1, step 4: a sample at 0 with u_i < 0 stays
in S2, a sample at C_i with u_i > 0 stays in S3 (both are then KKT-consistent),
every other sample is in S1. A solution component outside [0, C_i] is moved
to the violated bound and the system re-solved (at most a few times).

Safeguard (our addition, needed because the bound moves of Table 1 are
not a descent method by themselves): the IRWLS solution beta* is used as a
direction d = beta* - a from the current feasible point, with the exact
minimising step on the quadratic D(a + eta d) clipped to the box. The dual
objective therefore never increases. If d is not a descent direction, one
SMO step on the working set's maximal violating pair is taken instead.

Chunking (paper section 2.1 and 3): the IRWLS procedure runs on a working
set of ``q`` samples; the others contribute through g. Output f (without
bias) is kept for all samples and updated with one q-row kernel product per
chunk. The working set holds, per class, the worst violator of each of the
stopping conditions (9)-(10), the maximal violating pair of LIBSVM's rule,
then random candidates (violators and free samples; those whose kernel rows
are cached first), completed by the samples of smallest |u_i| when there are
too few candidates. W's sub-problem is solved inexactly, to a tenth of the
current violation on all samples (never below tol / 2).

Stopping rule: the maximal violation of LIBSVM (m(a) - M(a) <= tol), which is
conditions (9)-(11) with the best bias: -y_i grad_i = -y_i p_i - f_i ranges over
I_up and I_low (:meth:`DualProblem.kkt_violation`).

Bias handling (``bias=``): ``"equality"`` is the problem above (LIBSVM's).
``"augmented"`` is the SVM without an unregularized bias used by safe
screening (Ogawa et al.): the bias is a constant feature, the kernel becomes
k(x, x') + 1 and the constraint y'a = 0 disappears, leaving a box-constrained
QP; the returned intercept sum_i y_i a_i makes the plain-kernel expansion
equal to the augmented one. ``"none"``: kernel k, no bias. Without the
equality the linear system loses its bias row, the pair step becomes a
single-coordinate Newton step, and the stopping rule is liblinear's
projected-gradient gap max PG - min PG <= tol.

Screened solving: samples in ``fixed_at_zero`` / ``fixed_at_C`` are held at
their bounds (the paper's S2 / S3 known in advance). Only the others are
optimised; the fixed samples at C enter once through their contribution to
the outputs and to the equality constraint.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from leansvm.core.kernels import Kernel, KernelRowCache, SubsetRowCache, dense_if_worth_it
from leansvm.core.multiclass import BinaryFit
from leansvm.core.problems import DualProblem
from leansvm.core.threads import check_cancelled, one_blas_thread
from leansvm.core.validation import generator
from leansvm.exact import smo_full
from leansvm.exact.irwls_chunk import CONVERGED, MISSED, run_chunks, solve_chunk
from leansvm.exact.irwls_outputs import checked_shared_rows, sample_outputs, start_outputs
from leansvm.exact.irwls_subproblem import violation
from leansvm.exact.screened_start import screened_start

DEFAULT_WORKING_SET = 128      # chosen by a sweep of q (benchmarks/exact/bench_irwls.py --q 32,64,128,256)
DEFAULT_MAX_INNER = 3
DEFAULT_PAIR_STEPS = 1000
#: problems smaller than this are solved without shrinking (their few chunks do not repay
#: rebuilding the cache and reconstructing outputs) and with a working set of
#: SMALL_PROBLEM_Q * q (smaller Cholesky factors pay there). Measured on the one-vs-one
#: pairs of letter, penbased and satimage (1,200-1,500 samples): 10-30 % less CPU.
SMALL_PROBLEM = 2000
SMALL_PROBLEM_Q = 0.75
#: a burst of compiled chunks computes kernel rows of at most about this many multiply-adds
#: (rows x n x d) before it returns to Python, so that Ctrl-C and progress reports are seen
#: within milliseconds: a 50,000 x 20 problem gets 50 rows a burst (2.5 million kernel values,
#: a few ms); letter's pairs (1,200 x 16) are not cut (a burst of 50 chunks computes about 650)
BURST_FILL_WORK = 5e7
#: W is solved to max(tol / 2, INNER_RELATIVE_TOL x the current violation on all samples)
INNER_RELATIVE_TOL = 0.1


BIAS_MODES = ("equality", "augmented", "none")

#: without max_iter (scikit-learn's -1: no limit) the chunk iterations stop at SAFETY_CHUNKS x (n / q + 1)
#: + 10 SAFETY_CHUNKS, so that a solve that cannot converge ends. At a large C a solve that does converge
#: needs many: magic at C = 10,000 took 394,000 chunks (250 s; LIBSVM 248 s), where a bound of 1,000 x
#: (n / q + 1) + 10,000 (129,000) had stopped it unconverged after 96 s
SAFETY_CHUNKS = 10_000


#: up to this many samples the kernel rows are float64 at any tol: the whole float64 matrix is at
#: most 8 MB and takes about a millisecond, so float32 saves nothing, and float64 rows make a
#: precomputed Gram matrix and the kernel it came from give the same model
SMALL_PROBLEM_ROWS = 1000


def default_cache_dtype(tol, n_samples=None):
    """Kernel rows in float32 when tol >= 1e-4 (as LIBSVM's Qfloat: twice the rows per MB), float64
    for tighter tolerances, where float32 rounding of the outputs would exceed tol, and for
    problems of at most ``SMALL_PROBLEM_ROWS`` samples."""
    small = n_samples is not None and n_samples <= SMALL_PROBLEM_ROWS
    return np.float32 if tol >= 1e-4 and not small else np.float64


def _restore_equalities(alpha, problem, free):
    """Make the equality constraints of ``problem`` hold (y'a = Delta, or one per sign group).

    From a = 0 (a cold start) the sums are filled as LIBSVM does: a_i = min(C_i, what is left)
    in index order, a sparse start; the proportional fill of a warm start would make every
    variable a support vector (one-class SVM on magic's class g: 0.88 s -> 0.17 s, LIBSVM 0.34 s)."""
    if not alpha.any():
        _fill_in_order(alpha, problem, free)
    if problem.equalities == 1:
        _restore_equality(alpha, problem.y, problem.C, free, problem.delta)
        return
    for g, target in problem.equality_groups():
        a = alpha[g]
        _restore_equality(a, problem.y[g], problem.C[g], free[g], target)
        alpha[g] = a


def _fill_in_order(alpha, problem, free):
    """a_i = min(C_i, what is left) over the free variables in order, until each equality's
    target (sum of y_i a_i within a sign group) is reached: LIBSVM's start for one-class and the
    nu forms. Targets of the wrong sign for a group (none here) are left to the restore step."""
    y, C = problem.y, problem.C
    for g, target in problem.equality_groups():
        idx = np.flatnonzero(g & free & (y == (1.0 if target > 0 else -1.0)))
        left = abs(target)
        if left <= 0 or idx.size == 0:
            continue
        before = np.concatenate(([0.0], np.cumsum(C[idx])[:-1]))
        alpha[idx] = np.clip(left - before, 0.0, C[idx])


def _group_sums(values, problem):
    """sum_i values_i over each equality group of the nu forms: [y = +1, y = -1]."""
    return np.array([values[g].sum() for g, _ in problem.equality_groups()])


def _restore_equality(alpha, y, C, free, delta=0.0):
    """Make y'a = Delta by moving only the ``free`` samples (a warm start for the equality problem).

    With r = y'a - Delta > 0, first shrink the positive-class a_i proportionally, then grow the
    negative-class ones towards C_i (mirror image for r < 0). Raises if no point of the
    box satisfies the constraint with the fixed samples where they are.
    """
    r = float(y @ alpha) - delta
    scale = max(1.0, float(np.abs(alpha).sum()))
    if abs(r) <= 1e-12 * scale:
        return
    z = np.sign(r) * y
    down = free & (z > 0) & (alpha > 0)
    total = float(alpha[down].sum())
    take = min(abs(r), total)
    if take > 0:
        alpha[down] *= 1.0 - take / total
    r_left = abs(r) - take
    up = free & (z < 0) & (alpha < C)
    room = float((C[up] - alpha[up]).sum())
    if r_left > 1e-12 * scale:
        if room < r_left * (1 - 1e-12):
            raise ValueError("no feasible point: the samples fixed at C make y'alpha = Delta impossible")
        alpha[up] += (C[up] - alpha[up]) * (r_left / room)


def solve_irwls(X, problem: DualProblem, kernel: Kernel, *, tol=1e-3, working_set_size=DEFAULT_WORKING_SET,
                cache_size=200.0, max_iter=-1, max_inner=DEFAULT_MAX_INNER, random_state=None,
                verbose=False, alpha_init=None, fixed_at_zero=None, fixed_at_C=None,
                bias="equality", n_pair=None, cache_dtype=None,
                shrinking=True, kernel_cache=None, callback=None, initial_outputs=None,
                method="auto") -> BinaryFit:
    """Solve a dual problem (C-SVC: :func:`leansvm.core.problems.c_svc`) by chunked IRWLS, or a
    small one by SMO on the whole Q (:mod:`leansvm.exact.smo_full`).

    ``problem`` gives y (+1/-1), p, the per-variable upper bounds C (class and
    sample weights already folded in) and Delta; returns alpha, b and statistics. ``max_iter`` bounds the chunk iterations
    (-1: no limit other than a safety bound of ``SAFETY_CHUNKS`` (n / q + 1) + 10 ``SAFETY_CHUNKS``).
    ``alpha_init`` warm-starts (clipped to the box; for ``bias="equality"``
    moved to y'a = Delta). ``fixed_at_zero`` / ``fixed_at_C``: boolean masks of
    samples held at 0 / C_i (safe screening); only the others are solved.
    ``bias``: ``"equality"`` (LIBSVM), ``"augmented"`` (kernel + 1, no equality,
    intercept = sum y_i a_i), ``"none"``. ``dual_objective`` is that of the
    problem solved, over all samples. ``cache_dtype``: by default kernel rows are
    cached in float32 when tol >= 1e-4 (as LIBSVM's Qfloat: twice the rows per MB;
    outputs and sub-problems stay float64) and in float64 for tighter tolerances,
    where float32 rounding of the outputs would exceed tol.

    ``kernel_cache``: ``(cache, rows)``, a :class:`KernelRowCache` over a superset
    of the samples and the superset row of each sample (X must be ``cache.X[rows]``),
    or a cache over X itself. Kernel rows are then read from it (and computed into
    it when missing) instead of from the kernel: rows shared by every C of a path
    and by every fold. Its dtype replaces ``cache_dtype``. ``stats["outputs"]``
    holds the final f_i = sum_j y_j a_j (k_ij + offset) of every sample.
    ``initial_outputs``: f_i = sum_j y_j a_j (k_ij + offset) of every sample at ``alpha_init``
    (e.g. known along a path): the start-up product then runs only over the samples whose
    start differs from ``alpha_init`` (clipped, screened, moved to y'a = 0), not over every SV.
    ``callback(violation)`` is called before each chunk iteration (progress reports).
    ``verbose`` (2 or more) prints the violation every 10 chunk iterations. ``method``: ``"auto"``
    solves problems of at most ``smo_full.MAX_ROWS`` free variables with LIBSVM's bias and no shared
    row cache by SMO on the whole Q (LIBSVM's pair steps: its fixed cost per fit and its speed at
    extreme C), the others by IRWLS; ``"irwls"`` or ``"smo"`` chooses.
    """
    shared = checked_shared_rows(kernel_cache, X, kernel)
    if shared is None and type(kernel) is Kernel:
        # once for the row cache and the outputs computed outside it (start, shrinking, end):
        # a9a's outputs after shrinking took 1.2 of 6.3 s, half of it single-threaded sparse products
        X = dense_if_worth_it(X)
    if problem.rows is not None:          # every variable reads the kernel row of its sample
        X = X[problem.rows]
        shared = None if shared is None else (shared[0], shared[1][problem.rows])
    if shared is not None:
        cache_dtype = shared[0].dtype
    if cache_dtype is None:
        cache_dtype = default_cache_dtype(tol, X.shape[0])
    if bias not in BIAS_MODES:
        raise ValueError(f"bias must be one of {BIAS_MODES}, got {bias!r}")
    equality = problem.equalities if bias == "equality" else 0      # the compiled loops' mode
    offset = 1.0 if bias == "augmented" else 0.0
    y, C = problem.y, problem.C
    n = y.size
    fixed0, fixedC, alpha = screened_start(C, alpha_init, fixed_at_zero, fixed_at_C)
    active = ~(fixed0 | fixedC)
    if equality:
        _restore_equalities(alpha, problem, active)

    start = time.perf_counter()
    A = np.flatnonzero(active)
    XA, sub = X[A], problem.subset(A)
    # outputs of the active samples: fixed-at-C samples and the warm start, computed once
    if initial_outputs is None:
        nz = np.flatnonzero(alpha)
        f = sample_outputs(kernel, X, shared, A, nz, y[nz] * alpha[nz], offset)
    else:
        f = start_outputs(kernel, X, shared, A, y, alpha, alpha_init, initial_outputs, offset)
    # fixed part of y'a, minus Delta (per group)
    if equality == 2:
        c_fixed = _group_sums(np.where(fixedC, y * C, 0.0), problem) - [t for _, t in problem.equality_groups()]
    else:
        c_fixed = np.array([float(y[fixedC] @ C[fixedC]) - problem.delta, 0.0])
    if method not in ("auto", "irwls", "smo"):
        raise ValueError(f"method must be 'auto', 'irwls' or 'smo', got {method!r}")
    by_smo = method == "smo" or (method == "auto" and equality and not offset and shared is None
                                 and A.size <= smo_full.MAX_ROWS)
    if by_smo:
        aA, gap, n_iter, converged, loop_stats = smo_full.solve_small(
            XA, sub, kernel, alpha[A], f, max(equality, 1), tol, max_iter, callback,
            polish=bool(equality) and n <= SMALL_PROBLEM_ROWS)
        if not converged:
            warnings.warn(f"Solver terminated early (max_iter={n_iter}).  Consider pre-processing your data "
                          f"with StandardScaler or MinMaxScaler. (SMO stopped after {n_iter} pair steps with "
                          f"violation {gap:.3e} > tol={tol}; the solution may be inaccurate.)",
                          ConvergenceWarning, stacklevel=2)
    else:
        # one BLAS thread: the loop's products are small, and threads only wait on each other
        with one_blas_thread():
            aA, gap, n_iter, converged, loop_stats = _chunk_loop(
                XA, sub, kernel, alpha[A], f, c_fixed, offset, equality, tol, working_set_size,
                cache_size, max_iter, max_inner, random_state, verbose, start,
                DEFAULT_PAIR_STEPS if n_pair is None else n_pair, cache_dtype, shrinking,
                None if shared is None else (shared[0], shared[1][A]), callback)
    alpha[A] = aA
    if not by_smo and equality and converged and n <= SMALL_PROBLEM_ROWS and \
            _polish_free(X, kernel, problem, alpha, tol):      # SMO's own polish reads its Q instead
        nz = np.flatnonzero(alpha)
        f = sample_outputs(kernel, X, None, A, nz, y[nz] * alpha[nz], offset)

    # outputs of the samples fixed at C (needed for the objective and the intercept)
    at_C = np.flatnonzero(fixedC)
    nz = np.flatnonzero(alpha)
    f_C = sample_outputs(kernel, X, shared, at_C, nz, y[nz] * alpha[nz], offset)
    idx = np.concatenate((A, at_C))
    f_all = np.concatenate((f, f_C))
    outputs = np.empty(n)
    outputs[idx] = f_all
    at_zero = np.flatnonzero(fixed0)
    outputs[at_zero] = sample_outputs(kernel, X, shared, at_zero, nz, y[nz] * alpha[nz], offset)
    solved = problem.subset(idx)
    objective = solved.objective(alpha[idx], f_all)
    extra = {}
    if equality:
        intercept = solved.intercept(alpha[idx], f_all)
        if equality == 2:
            extra["margin_level"] = solved.margin_level(alpha[idx], f_all)
    else:
        intercept = offset * float(y @ alpha)
    return BinaryFit(
        alpha=alpha,
        intercept=intercept,
        dual_objective=objective,
        n_iter=n_iter,
        converged=converged,
        stats={"violation": gap, "n_active": int(A.size), **loop_stats, **extra, "outputs": outputs,
               "seconds": time.perf_counter() - start},
    )


def _polish_free(X, kernel, problem, alpha, tol) -> bool:
    """One exact Newton step on the free variables F (0 < a_i < C_i) of a converged small problem, in
    place: the KKT system of the dual restricted to F with the others fixed,

        [Q_FF  E_F'] [a_F]   [-p_F - Q_FB a_B         ]
        [E_F    0  ] [ b ] = [t_g - sum_{B in g} y a_B],

    solved in float64, with one row of E per equality group g that has free variables (E_gi = y_i
    for i in g: y'a = Delta, or the nu forms' two sign groups). IRWLS reaches the optimum to its
    tolerance through weighted steps; this lands on it to rounding, as SMO's closed-form pair steps
    do (the 6-point toy of scikit-learn's tests: C-SVC dual coefficients 0.25 where IRWLS left
    0.24999999999999997; nu-SVR with a zero sample weight: coef_ (1/6, 1/6) where IRWLS left
    (0.16647, 0.16705), tol 1e-3). Kept only when every a_F stays strictly inside its box and moved
    by less than ``tol`` (the active set was already right); returns whether alpha changed. Not
    for one-sign problems (one-class): their free vectors would land exactly on the decision
    boundary, where a rounding error's sign decides the label (scikit-learn's
    check_methods_subset_invariance saw two of them flip with the batch size)."""
    y, C = problem.y, problem.C
    free = np.flatnonzero((alpha > 0) & (alpha < C))
    if free.size == 0 or np.all(y > 0) or np.all(y < 0):
        return False
    bound = np.flatnonzero((alpha > 0) & (alpha >= C))
    XF = X[free]
    Q = (y[free, None] * y[None, free]) * kernel.block(XF, XF)
    rhs = -problem.p[free]
    if bound.size:
        rhs -= y[free] * (kernel.block(XF, X[bound]) @ (y[bound] * alpha[bound]))
    rows, targets = [], []
    for group, target in problem.equality_groups():
        if group[free].any():
            rows.append(np.where(group[free], y[free], 0.0))
            targets.append(target - y[bound] @ np.where(group[bound], alpha[bound], 0.0))
    m, k = free.size, len(rows)
    system = np.zeros((m + k, m + k))
    system[:m, :m], system[m:, :m] = Q, rows
    system[:m, m:] = system[m:, :m].T
    try:
        solution = np.linalg.solve(system, np.concatenate((rhs, targets)))
    except np.linalg.LinAlgError:
        return False
    new = solution[:m]
    if not (np.all(np.isfinite(new)) and np.all(new > 0) and np.all(new < C[free])
            and np.max(np.abs(new - alpha[free])) < tol):
        return False
    changed = bool(np.any(new != alpha[free]))
    alpha[free] = new
    return changed


def _shrinkable(problem, alpha, f, equality):
    """Variables firmly at a bound (LIBSVM's ``be_shrunk``; liblinear's rule without y'a = Delta).

    With y'a = Delta and m = max_{I_up} s, M = min_{I_low} s: a variable that is only in
    I_up with s_i < M, or only in I_low with s_i > m, can join no violating pair now
    (m and M within each sign group in the nu forms, LIBSVM's Solver_NU).
    Without: at 0 with G_i > max PG, or at C_i with G_i < min PG.
    """
    C = problem.C
    if equality == 2:
        firm = np.zeros(alpha.size, dtype=bool)
        for g, _ in problem.equality_groups():
            firm[g] = _shrinkable(problem.subset(np.flatnonzero(g)), alpha[g], f[g], 1)
        return firm
    if equality:
        up, low = problem.up_low(alpha)
        if not up.any() or not low.any():
            return np.zeros(alpha.size, dtype=bool)
        s = problem.libsvm_s(f)
        m, M = s[up].max(), s[low].min()
        return ((alpha <= 0) | (alpha >= C)) & ((up & ~low & (s < M)) | (low & ~up & (s > m)))
    g, pg = problem.gradient(f), problem.projected_gradient(alpha, f)
    return ((alpha <= 0) & (g > max(pg.max(), 0.0))) | ((alpha >= C) & (g < min(pg.min(), 0.0)))


class _ChunkedIRWLS:
    """The chunk iterations, optionally with shrinking (state shared across shrinking phases).

    Shrinking: every ``SHRINK_EVERY`` chunk iterations, when at least a quarter of
    the active samples are firmly at a bound, they leave the active set; the
    kernel cache is rebuilt over the active columns only (rows get shorter, as
    LIBSVM's; in the last phase's memory, or a buffer the shared cache lent), and outputs are kept for active samples only. When the active
    problem has converged, the outputs of the others are reconstructed from a
    snapshot (f_i = f_snap_i + sum_j k_ij y_j (a_j - a_snap_j) over the a_j that
    moved since) and the stopping rule is checked on all samples; if it fails,
    every sample is active again (at most ``MAX_UNSHRINK`` times, then shrinking
    stops, so the loop terminates).
    """

    SHRINK_EVERY = 10
    MAX_UNSHRINK = 3
    #: the outputs after a float32 solve are checked on this many samples against exact ones ...
    DRIFT_ROWS = 256
    #: ... and recomputed when they are off by more than this share of tol
    DRIFT_SHARE = 0.5
    #: chunks of one compiled burst at most (without shrinking)
    BURST = 50

    def __init__(self, X, problem, kernel, alpha, f, c_fixed, offset, equality, tol, q, cache_size,
                 max_inner, n_pair, cache_dtype, shrinking, rng, verbose, start, shared=None,
                 callback=None):
        self.X, self.problem, self.kernel = X, problem, kernel
        self.y, self.C = problem.y, problem.C
        self.callback = callback
        self.shared = shared                           # (parent cache, parent row of each sample)
        self.alpha, self.f = alpha, f
        self.alpha_start, self.f_start = alpha.copy(), f.copy()
        self.refined = False                           # outputs recomputed exactly at the end
        self.c_fixed, self.offset, self.equality, self.tol = c_fixed, offset, equality, tol
        self.q, self.max_inner, self.n_pair = q, max_inner, n_pair
        self.cache_dtype = np.dtype(cache_dtype)
        self.cache_mb = cache_size
        self.shrinking, self.rng, self.verbose, self.start = shrinking, rng, verbose, start
        # float32 rows: a proximal floor above their rounding keeps the systems definite
        self.mu_floor = 0.0 if self.cache_dtype.itemsize >= 8 else (
            1e-5 * float(np.mean(kernel.diagonal(X[:1000]))) + 1e-5 * offset)
        self.b, self.mu = np.zeros(2), 0.0            # b: the multiplier of each equality group
        self.delta = min(1e-2 * tol, 1e-5)
        self.counts = np.zeros(3, dtype=np.int64)     # linear solves, pair steps, ridged solves
        self.inner_total = 0
        self.n_shrink = self.n_unshrink = 0
        self.cache_hits = self.cache_misses = 0
        self.trace = []                                # dual objective after each chunk iteration
        self.snapshot = None                           # (alpha, f) when every f was last exact
        # rows read in place from the shared cache (irwls_chunk.column) where it holds a chunk's
        # rows and its samples carry two variables each: a cache of their own would copy every row twice
        self.in_place = shared is not None and shared[0].capacity >= q and \
            np.unique(shared[1]).size < shared[1].size
        self._counted = (0, 0)                         # the cache's hits and misses when activated
        self.parent_read = None                        # the shared cache, once read in place
        self._activate(np.arange(problem.n))

    def _activate(self, active):
        """Restrict the problem to ``active``; a fresh cache over its columns (or, rows read in
        place, the shared cache and the active variables' columns in it)."""
        if hasattr(self, "cache"):
            self.cache_hits += self.cache.hits - self._counted[0]
            self.cache_misses += self.cache.misses - self._counted[1]
        self.active = active
        n = active.size
        self.cols = np.zeros(0, dtype=np.int64)
        if self.in_place:
            self.cache = self.parent_read = self.shared[0]
            self.cols = self.shared[1][active].astype(np.int64)
        else:
            rows_mb = 2 * self.q * n * self.cache_dtype.itemsize / 2**20
            size = max(self.cache_mb, rows_mb)
            # the slab memory of the last phase, or of an earlier solve on the same shared rows, is reused
            last = getattr(self, "cache", None)
            buffer = last.buffer if last is not None and last is not self.parent_read else (
                None if self.shared is None else self.shared[0].lend_buffer())
            if self.shared is None:
                self.cache = KernelRowCache(self.kernel, self.X[active], size, dtype=self.cache_dtype, buffer=buffer)
            else:
                parent, rows = self.shared
                self.cache = SubsetRowCache(parent, rows[active], size, buffer=buffer)
        self._counted = (self.cache.hits, self.cache.misses)
        inactive = np.ones(self.y.size, dtype=bool)
        inactive[active] = False
        if self.equality == 2:
            c_inactive = _group_sums(np.where(inactive, self.y * self.alpha, 0.0), self.problem)
        else:
            c_inactive = np.array([float(self.y @ self.alpha - self.y[active] @ self.alpha[active]), 0.0])
        self.c_const = self.c_fixed + c_inactive     # fixed part of y'a in this phase (per group)

    def _reconstruct(self):
        """Exact outputs of the inactive samples from the snapshot and the moves since, kernel
        values in the cache's dtype as the chunks' updates (a9a: 1.8 of 7.9 s in float64)."""
        inactive = np.setdiff1d(np.arange(self.y.size), self.active, assume_unique=True)
        alpha_snap, f_snap = self.snapshot
        moved = np.flatnonzero(self.alpha != alpha_snap)
        coef = self.y[moved] * (self.alpha[moved] - alpha_snap[moved])
        self.f[inactive] = f_snap[inactive] + sample_outputs(
            self.kernel, self.X, self.shared, inactive, moved, coef, self.offset, self.cache_dtype)
        self.snapshot = None

    def run(self, limit):
        """Chunk iterations until the stopping rule holds on all samples or ``limit``; with float32
        rows, then the check on exact outputs (:meth:`_outputs_drifted`), and where they show the
        stopping rule unmet, the iterations go on from them with float64 rows."""
        gap, it, converged = self._iterate(limit, 0)
        if converged and self.cache_dtype.itemsize < 8 and self._outputs_drifted():
            self.f[:] = self._exact_outputs(np.arange(self.y.size))
            gap = violation(self.y, self.problem.p, self.f, self.alpha, self.C, self.equality)[0]
            self.refined = True
            if gap > self.tol:
                self.cache_dtype, self.mu_floor, self.shared = np.dtype(np.float64), 0.0, None
                self.in_place = False
                self._activate(np.arange(self.y.size))          # every sample active: no snapshot held
                gap, it, converged = self._iterate(limit, it)
        return gap, it, converged

    def _exact_outputs(self, rows):
        """f at ``rows`` from the start's outputs and every move since, kernel values in float64."""
        return start_outputs(self.kernel, self.X, None, rows, self.y, self.alpha, self.alpha_start,
                             self.f_start, self.offset)

    def _outputs_drifted(self) -> bool:
        """Have the outputs, updated chunk by chunk through float32 rows, drifted from the exact
        ones by more than ``DRIFT_SHARE`` x tol? Checked on ``DRIFT_ROWS`` random samples.

        Each update adds the float32 rounding of K_ij times |y_j da_j|, so the drift grows with C
        times how far the alpha travelled, not with tol: page-blocks0 (2,000 rows, range-scaled,
        gamma 2.12) at C = 16,384 stopped at a reported violation of 5e-4 while its outputs were
        0.31 off and the true violation was 0.34."""
        n = self.y.size
        rows = np.sort(self.rng.choice(n, self.DRIFT_ROWS, replace=False)) if n > self.DRIFT_ROWS \
            else np.arange(n)
        drift = np.max(np.abs(self._exact_outputs(rows) - self.f[rows]))
        return bool(drift > self.DRIFT_SHARE * self.tol)

    def _iterate(self, limit, it):
        """The chunk iterations from iteration ``it``; returns (gap, it, converged)."""
        gap = np.inf
        while it < limit:
            status, gap, it = self._phase(it, limit)
            if status == "shrink":
                continue
            if self.active.size == self.y.size:
                return gap, it, status == "converged"
            if status != "converged":           # out of iterations on the shrunk problem
                self._reconstruct()
                self._activate(np.arange(self.y.size))
                break
            self._reconstruct()                 # converged on the active set: check all
            self._activate(np.arange(self.y.size))
            self.n_unshrink += 1
            if self.n_unshrink >= self.MAX_UNSHRINK:
                self.shrinking = False
        gap = violation(self.y, self.problem.p, self.f, self.alpha, self.C, self.equality)[0]
        return gap, it, gap <= self.tol

    def _phase(self, it, limit):
        """Iterate on the active set; returns ("converged" | "shrink" | "limit", gap, it).

        The chunks run in compiled bursts (:func:`irwls_chunk.run_chunks`) that return at a
        chunk whose missing kernel rows they may not compute themselves (that chunk is then
        solved here, after the cache has computed its rows), at convergence, at the next shrinking check (every
        ``SHRINK_EVERY`` chunks) or after ``BURST`` chunks (so that a Ctrl-C and progress
        reports are seen within milliseconds)."""
        act = self.active
        sub = self.problem.subset(act)
        y, p, C = sub.y, sub.p, sub.C
        alpha, f = self.alpha[act], self.f[act]
        q = min(self.q, act.size)
        status = "limit"
        gap = np.inf
        trace = np.empty(self.BURST)
        try:
            while it < limit:
                check_cancelled()                  # a parallel run given up (Ctrl-C): stop here
                if self.shrinking and it % self.SHRINK_EVERY == 0 and it > 0:
                    gap = violation(y, p, f, alpha, C, self.equality)[0]
                    if gap <= self.tol:
                        status = "converged"
                        break
                    firm = _shrinkable(sub, alpha, f, self.equality)
                    if firm.sum() >= max(act.size // 4, 1) and act.size - firm.sum() >= 2:
                        self.alpha[act], self.f[act] = alpha, f
                        if self.snapshot is None:
                            self.snapshot = (self.alpha.copy(), self.f.copy())
                        self._activate(act[~firm])
                        self.n_shrink += 1
                        return "shrink", gap, it
                n_chunks = min(limit - it, self.BURST)
                if self.shrinking:
                    n_chunks = min(n_chunks, self.SHRINK_EVERY - it % self.SHRINK_EVERY)
                outcome, gap, done, W, self.b, self.mu, n_inner, clock, filled, hits, misses = run_chunks(
                    self.cache.slab, *self.cache.compiled_state(q), y, p, C, alpha, f, self.c_const,
                    float(self.offset), self.b, self.mu, self.delta, self.tol, self.max_inner,
                    self.equality, self.counts, self.n_pair, self.mu_floor, q,
                    int(self.rng.integers(1, 2**63 - 1)), n_chunks, trace, INNER_RELATIVE_TOL, self.cols,
                    BURST_FILL_WORK)
                self.cache.record_use(clock, filled, hits, misses)
                self.inner_total += n_inner
                self.trace.extend(trace[:done])
                if self.callback is not None:
                    self.callback(gap)
                if self.verbose >= 2 and (it + done) // 10 > it // 10:
                    print(f"[irwls] iter {it + done:5d}  violation {gap:.3e}  active {act.size}  "
                          f"SV {np.count_nonzero(self.alpha)}  {time.perf_counter() - self.start:.1f}s")
                it += done
                if outcome == CONVERGED:
                    status = "converged"
                    break
                if outcome == MISSED:              # this chunk's rows are computed here, then solved
                    check_cancelled()              # a burst may have run for milliseconds
                    self.trace.append(self._chunk_step(W, y, p, C, alpha, f, gap))
                    it += 1
        finally:
            self.alpha[act], self.f[act] = alpha, f
        return status, gap, it

    def _chunk_step(self, W, y, p, C, alpha, f, gap):
        """One chunk on the working set W: its kernel rows made resident (computed where missing,
        in row ranges over the threads when large), its IRWLS sub-problem solved, every active
        output updated.

        The sub-problem is solved only as far as the whole problem needs: to a
        violation of max(tol / 2, INNER_RELATIVE_TOL * gap), ``gap`` being the
        current violation on all samples (an inexact inner solve: early chunks
        stop after a few pair steps instead of polishing W to tol / 2).

        The outputs' update stays on one thread: split over two (row ranges on the pool) it
        gained nothing on a9a (5.38 against 5.34 s) and cost magic 0.1 s of 1.1 (interleaved runs).
        """
        if self.in_place:                            # a sample's two variables read one row
            samples, which = np.unique(self.cols[W], return_inverse=True)
            slots = self.cache.slots(samples)[which]
        else:
            slots = self.cache.slots(W)              # rows K[W, active] resident in the slab
        self.b, self.mu, n_inner, objective = solve_chunk(
            self.cache.slab, slots, W, self.cols, y, p, C, alpha, f, self.c_const, float(self.offset),
            self.b, self.mu, self.delta, max(0.5 * self.tol, INNER_RELATIVE_TOL * gap),
            self.max_inner, self.equality, self.counts, self.n_pair, self.mu_floor)
        self.inner_total += n_inner
        return objective


def _chunk_loop(X, problem, kernel, alpha, f, c_fixed, offset, equality, tol, working_set_size,
                cache_size, max_iter, max_inner, random_state, verbose, start, n_pair,
                cache_dtype, shrinking, shared=None, callback=None):
    """The chunked IRWLS iterations on the samples not fixed; alpha and f are updated in place."""
    n = problem.n
    if n == 0:
        return alpha, 0.0, 0, True, {}
    if n < SMALL_PROBLEM:                 # small problems: no shrinking, 3/4 of q
        working_set_size = int(SMALL_PROBLEM_Q * working_set_size)
        shrinking = False
    q = int(max(2, min(working_set_size, n)))
    limit = max_iter if max_iter and max_iter > 0 else SAFETY_CHUNKS * (n // q + 1) + 10 * SAFETY_CHUNKS
    solver = _ChunkedIRWLS(X, problem, kernel, alpha, f, c_fixed, offset, equality, tol, q,
                           cache_size, max_inner, n_pair, cache_dtype, shrinking,
                           # unseeded: a fixed seed, so that an unseeded fit is one solution, as LIBSVM's
                           # (scikit-learn's SVC takes random_state for its probability folds only)
                           generator(0 if random_state is None else random_state), verbose, start, shared,
                           callback)
    gap, n_iter, converged = solver.run(limit)
    if shared is not None and not solver.in_place and solver.cache.buffer.dtype == shared[0].dtype:
        shared[0].give_back_buffer(solver.cache.buffer)
    if not converged:
        # the first sentence is scikit-learn's own, so that code filtering its warning filters ours
        warnings.warn(f"Solver terminated early (max_iter={limit}).  Consider pre-processing your data "
                      f"with StandardScaler or MinMaxScaler. (IRWLS stopped after {limit} chunk iterations "
                      f"with violation {gap:.3e} > tol={tol}; the solution may be inaccurate.)",
                      ConvergenceWarning, stacklevel=3)
    # A system made singular by duplicate samples, or by both variables of a regression sample
    # in S1, is solved with a small ridge and the stopping rule still certifies the optimum;
    # only when it did not converge may an indefinite kernel be the cause worth naming.
    if solver.counts[2] and not converged:
        warnings.warn(f"{solver.counts[2]} IRWLS systems were not positive definite (indefinite "
                      "kernel?) and were solved with a ridge", RuntimeWarning, stacklevel=3)
    stats = {"inner_iterations": solver.inner_total, "pair_steps": int(solver.counts[1]),
             "ridged_solves": int(solver.counts[2]),
             "n_shrink": solver.n_shrink, "n_unshrink": solver.n_unshrink,
             "outputs_refined": solver.refined, "row_dtype": solver.cache_dtype.name,
             "rows_in_place": solver.in_place,
             "cache_hits": solver.cache_hits + solver.cache.hits - solver._counted[0],
             "cache_misses": solver.cache_misses + solver.cache.misses - solver._counted[1],
             "objective_trace": np.asarray(solver.trace)}
    return alpha, gap, n_iter, converged, stats
