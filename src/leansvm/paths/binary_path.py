r"""Regularisation path of the binary SVM: warm start plus safe sample screening.

For C_1 < C_2 < ... the problem at C_k is solved by greedy coordinate descent
on the box QP (``solve_box_cd``, default) or IRWLS (``solve_irwls``), started
from the solution at C_{k-1}, with the samples that a rule of
:mod:`.screening` proves to be in R held at 0 and those in L held at C c_i
(``fixed_at_zero`` / ``fixed_at_C``: IRWLS's sets S2 and S3). Because the
rules are safe, the screened problem has the same optimum as the full one
(Ogawa et al. section IV-B; Algorithm 1 with a user-given grid instead of the
epsilon-path).

Formulation: the rules hold for the SVM without an unregularised bias, so
screening needs ``bias="augmented"`` (kernel + 1, the paper's eq. 1 and
liblinear's bias) or ``bias="none"``. ``bias="equality"`` (LIBSVM's
formulation) runs the warm-started path without screening.

The reference of each step is built from the previous solution
(:meth:`ScreeningReference.from_solution`, one product with the kernel
columns of its support vectors). Solutions at the path tolerance can have a
duality gap large enough to void the (gap-safeguarded) rules; with the CD
solver and ``polish_reference=True`` the reference is then re-solved, warm,
at a tighter tolerance (:func:`_reference`); with ``trivial_start`` the exact solution of
Lemma 9 serves as the first reference (and as the solution itself for every
C <= C_min), at the price of one pass over the kernel matrix.

With the CD solver a screened step needs no product over all SVs: the
reference gives the margins at the warm start (:func:`start_margins`), the
solver returns the margins of every sample, and only the free-SV product of
BT2/IT (O(n |E~|)) is paid per step.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from leansvm.core.kernels import Kernel
from leansvm.core.multiclass import BinaryFit
from leansvm.core.problems import DualProblem
from leansvm.exact.box_cd import PathKernelCache, solve_box_cd_cached
from leansvm.exact.irwls import DEFAULT_WORKING_SET, SMALL_PROBLEM_Q, solve_irwls
from leansvm.exact.irwls import SMALL_PROBLEM as IRWLS_SMALL_PROBLEM
from leansvm.exact.irwls_outputs import start_outputs
from leansvm.paths.screening import RULES, ScreeningReference, _kernel_products, gap_screen, gap_screen_from_reference, screen

BIAS_MODES = ("augmented", "none", "equality")
#: a sub-problem with at most this share of a shared cache's rows copies its block K[idx, idx] out
#: (one-vs-one pairs, and CV folds up to 10-fold: banana 5-fold SVCCV 0.82 -> 0.77 s CPU)
SUBSET_SHARE = 0.9
SOLVERS = ("auto", "cd", "irwls")
#: solver="auto"'s cost model, in microseconds of one thread (fitted to warm solves on folds of banana,
#: satimage pairs, wdbc and the whole of magic, load 5-6): a CD step costs CD_VISIT_NS per
#: active sample it visits (2.3-2.7 ns; with shrinking the active set shrinks, magic at C = 8.9: 32,852
#: steps in 0.48 s), an IRWLS chunk IRWLS_CHUNK_US + IRWLS_QN_NS per (working-set sample x active
#: sample) (q = 96, n = 1,063: 340-370 us; q = 512, n = 15,216: ~22 ms). Counts, not clocks: the
#: choice, hence the solution, is the same on every run whatever the load.
CD_VISIT_NS = 2.5
#: ... on cached rows of up to this many entries; longer rows cost proportionally more per visit (the
#: descent gathers K[i, active] from rows that no longer fit the CPU caches: magic's 15,216-entry rows,
#: 5-11 ns per visit, shrinking's scattered active set included)
CD_ROW_ENTRIES = 4096
IRWLS_CHUNK_US = 100.0
IRWLS_QN_NS = 2.5
#: IRWLS chunks assumed before any IRWLS solve of the path was seen (warm IRWLS solves took 6-100;
#: magic at C = 3.4 .. 8.9: 9-13, where a path with 20 kept CD 0.6 s CPU longer)
IRWLS_PRIOR_CHUNKS = 10
#: after an IRWLS trial lost to CD, the next trial waits for a CD solve this many times the trial's cost
TRIAL_GROWTH = 2
#: the path's CD shrinks (LIBSVM-style, ``solve_box_cd_cached(shrinking=True)``) from this many active
#: samples: magic (15,216), CPU per C at C = 2 .. 8.9: 0.29-0.99 s vs 0.84-2.60 s without (load 5);
#: below it shrinking saved nothing (3000 samples: +15 % steps; satimage pairs: 1.9 vs 2.0 s per path)
SHRINK_MIN_ACTIVE = 5000
#: from this many active samples (below SHRINK_MIN_ACTIVE) the CD shrinks on compacted copies
#: (``shrinking='compact'``: contiguous active prefix, shrinking every 300 steps, work counted as
#: without shrinking, so the solver choice is unchanged)
COMPACT_MIN_ACTIVE = 1000
#: a path whose first C is at least this (bounds C c_i) and whose start is 0 (Lemma 9's point a = C c
#: does not beat it) is solved by IRWLS from its first C: page-blocks0, 1,066 samples, gamma 2^-7 x
#: 'scale', C = 2^10: CD 244 ms, IRWLS 14 ms; 2^10 .. 2^15 over 5 folds (the main job's search, round 2):
#: 740 ms, with IRWLS from the start 300 ms. Paths that start at small C (C <= 2^-5 in the search's
#: first round, SVCCV) start with CD as before, and so do small problems (the one-vs-one pairs of
#: optdigits and penbased, 200-640 samples: with IRWLS the search's rounds 2 and 3 took 1.5-2x longer)
IRWLS_START_C = 1.0
IRWLS_START_MIN_SAMPLES = 1000
#: IRWLS working set on the path when none is given: 512 from LARGE_PROBLEM samples (magic, C = 14 .. 100:
#: 7.8 / 8.1 s CPU in two runs vs 10.5 s with 128; 256: 10.4 s, 1024: 11.3 s; load 6-7), IRWLS's default below
LARGE_PROBLEM = 10_000
LARGE_WORKING_SET = 512


@dataclass
class PathPoint:
    """One C of a binary path: the fit and what screening did for it."""

    C: float
    fit: BinaryFit
    n_screened_R: int = 0
    n_screened_L: int = 0
    n_non_sv: int = 0            # |{a_i = 0}| + |{a_i = C c_i}| at the solution
    rule_seconds: float = 0.0    # building the reference + evaluating the rule
    solve_seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def n_screened(self) -> int:
        return self.n_screened_R + self.n_screened_L


def check_grid(Cs) -> np.ndarray:
    """Ascending, positive, finite, distinct C values (ValueError otherwise)."""
    Cs = np.asarray(Cs, dtype=np.float64).ravel()
    if Cs.size == 0:
        raise ValueError("Cs must hold at least one value")
    if not np.all(np.isfinite(Cs)) or np.any(Cs <= 0):
        raise ValueError(f"every C must be positive and finite, got {Cs}")
    Cs = np.sort(Cs)
    if np.any(np.diff(Cs) <= 0):
        raise ValueError("Cs must not repeat a value")
    return Cs


#: every static rule: the paper's three, and the duality-gap ball ('gap', any bias formulation)
PATH_RULES = RULES + ("gap",)


def check_screening(screening, bias):
    if bias not in BIAS_MODES:
        raise ValueError(f"bias must be one of {BIAS_MODES}, got {bias!r}")
    if screening is not None and screening not in PATH_RULES:
        raise ValueError(f"screening must be one of {PATH_RULES} or None, got {screening!r}")
    if screening in RULES and bias == "equality":
        raise ValueError("the paper's rules hold for the SVM without an unregularised bias: "
                         "use bias='augmented' (fit_intercept=True) or 'none', screening='gap' "
                         "(the duality-gap rule covers the unregularised bias) or None")


def _check_problem(problem, screening, trivial_start, dynamic):
    """The path scales the bounds of ``problem``; its screening is the hinge's (ValueError otherwise)."""
    if not isinstance(problem, DualProblem):
        raise TypeError(f"the path takes a DualProblem (leansvm.core.problems.c_svc), got {type(problem).__name__}")
    if problem.rows is not None:
        raise ValueError("a path takes one variable per sample: pass X[problem.rows] with the rows as the cache "
                         "index (leansvm.paths.svr_path does)")
    if not problem.hinge and (screening in RULES or trivial_start):
        raise ValueError("the rules of Ogawa et al. and Lemma 9 are derived for C-SVC's hinge loss (p = -1); "
                         "use screening='gap' or None and trivial_start=False for this problem")


def _trivial_fit(ref: ScreeningReference, C: float, augmented: bool, y) -> BinaryFit:
    """Lemma 9: a = C c is the exact solution for C <= C_min."""
    alpha = C * ref.weights
    g = (C / ref.C) * ref.margins
    objective = float(alpha @ (g / 2 - 1.0))
    intercept = float(y @ alpha) if augmented else 0.0
    return BinaryFit(alpha=alpha, intercept=intercept, dual_objective=objective, n_iter=0,
                     converged=True, stats={"violation": 0.0, "lemma9": True, "seconds": 0.0})


def _products(X, kernel, shared, columns, coef, offset) -> np.ndarray:
    """sum_j coef_j (k(x_i, x_columns[j]) + offset) for every sample i of the binary problem.

    ``shared`` = (PathKernelCache, global row index of each sample) reads cached
    rows (computed once for the whole path); None computes the kernel from X.
    """
    if shared is not None:
        cache, index = shared
        return cache.outputs(index[columns], coef, index, offset)
    return _kernel_products(kernel, X, columns, np.asarray(coef)[:, None], offset)[:, 0]


def start_margins(ref: ScreeningReference, C, alpha_start, X, y, kernel, augmented, shared=None) -> np.ndarray:
    """y_i f(x_i) at the path's warm start from the reference, without a product over all SVs.

    The warm start moves the reference SVs at their bound from C~ c_i to
    C c_i, i.e. adds (rho - 1) C~ v with C~ z_i'v = g_i - z_i'u, so the margins
    there are g + (rho - 1)(g - z'u); samples whose start differs from that
    (screened ones held at a bound) are corrected with their own columns.
    """
    rho = C / ref.C
    margins = ref.margins + (rho - 1.0) * (ref.margins - ref.free_margins)
    planned = np.where(ref.at_upper, C * ref.weights, ref.alpha)
    diff = np.flatnonzero(alpha_start != planned)
    if diff.size:
        coef = y[diff] * (alpha_start[diff] - planned[diff])
        margins = margins + y * _products(X, kernel, shared, diff, coef, 1.0 if augmented else 0.0)
    return margins


def _rescaled_margins(margins, alpha, at_upper, rho, upper, alpha_start, X, y, kernel, augmented, shared):
    """Margins at ``alpha_start`` from a solution (``margins`` at ``alpha``) whose samples at their
    bound (``at_upper``) move to the new bound ``upper`` = rho x the old one: that part of every
    margin scales by rho, g' = g + (rho - 1)(g - g_F) with g_F the free SVs' part, so the product
    runs over the free SVs only (banana folds: ~20 instead of ~1,500 columns), then over the samples
    whose start differs from that plan (screened ones). :func:`start_margins` without a reference."""
    free = np.flatnonzero((alpha > 0) & ~at_upper)
    offset = 1.0 if augmented else 0.0
    g_free = y * _products(X, kernel, shared, free, y[free] * alpha[free], offset) if free.size else 0.0
    planned = np.where(at_upper, upper, alpha)
    return _moved_margins(margins + (rho - 1.0) * (margins - g_free), planned, alpha_start, X, y, kernel,
                          augmented, shared)


def _moved_margins(margins, alpha_from, alpha_to, X, y, kernel, augmented, shared) -> np.ndarray:
    """Margins after the dual point moves from ``alpha_from`` to ``alpha_to``: IRWLS's warm-start
    update of the outputs f = y g (:func:`.irwls_outputs.start_outputs`, columns that changed only)."""
    outputs = start_outputs(kernel, X, shared, np.arange(y.size), y, alpha_to, alpha_from, y * margins,
                             1.0 if augmented else 0.0)
    return y * outputs


def _reference_from_fit(X, y, C, fit, kernel, weights, augmented, shared=None, z_norms=None):
    margins = fit.stats.get("margins")
    if shared is not None and margins is not None:
        # every margin is known: only the free-SV product of BT2/IT remains, from cached rows
        start = time.perf_counter()
        upper = C * weights
        free = np.flatnonzero((fit.alpha > 0) & (fit.alpha < upper))
        free_margins = y * _products(X, kernel, shared, free, y[free] * fit.alpha[free],
                                     1.0 if augmented else 0.0)
        ref = ScreeningReference.from_margins(X, y, C, fit.alpha, kernel, margins, free_margins,
                                              augmented=augmented, weights=weights, z_norms=z_norms)
        # the margins come from the cached (float32) rows: every g_i is off by <= entry error x sum a~
        # (x 2: the float64 accumulation along the path), z_i'u by the same over the free SVs
        entry = 2.0 * shared[0].entry_error
        ref.margin_error = entry * float(fit.alpha.sum())
        ref.free_error = entry * float(fit.alpha[free].sum())
        ref.seconds = time.perf_counter() - start
        return ref
    if margins is None and "active_margins" in fit.stats:   # the CD solver keeps y_i f_i of its active set
        margins = np.full(y.size, np.nan)
        margins[fit.stats["active"]] = fit.stats["active_margins"]
    return ScreeningReference.from_solution(X, y, C, fit.alpha, kernel, augmented=augmented,
                                            weights=weights, margins=margins)


def _reference(X, problem, C, next_C, fit, kernel, augmented, solve, tol, fixed0, fixedC, bias,
               options, polish, rule="it", max_polish=3, share=0.05, min_gain=0.01, shared=None,
               z_norms=None):
    """The screening reference of the next step, polished until its gap is small enough to use.

    The safeguarded BT1 radius grows by about eps = sqrt(2 G) (screening
    module); when eps exceeds ``share`` of the exact-reference radius
    |rho - 1|/2 ||w~|| of the next step, the solution is re-solved warm with a
    10x smaller tolerance (at most ``max_polish`` times; the screened sets are
    kept, they are safe). Polishing is skipped when even an exact reference
    (the rule evaluated with G = 0, O(n)) would screen under ``min_gain`` of
    the samples. Returns (fit, reference, extra solve seconds, potential),
    potential being that exact-reference screened fraction. ``problem``: the C-SVC problem at
    unit C (its bounds are the per-sample factors c_i).
    """
    y, weights = problem.y, problem.C
    ref = _reference_from_fit(X, y, C, fit, kernel, weights, augmented, shared, z_norms)
    potential = screen(replace(ref, gap=0.0), next_C, rule).n_screened / max(y.size, 1)
    target = 0.5 * (share * abs(next_C / C - 1) / 2) ** 2 * ref.w_norm2
    extra = 0.0
    sub_tol = tol
    for _ in range(max_polish if polish else 0):
        if ref.gap <= target or potential < min_gain:
            break
        sub_tol /= 10
        t0 = time.perf_counter()
        warm = {"initial_margins": fit.stats["margins"]} if "margins" in fit.stats else {}
        fit = solve(X, problem.with_bounds(C * weights), kernel, tol=sub_tol, alpha_init=fit.alpha, fixed_at_zero=fixed0,
                    fixed_at_C=fixedC, bias=bias, **options, **warm)
        extra += time.perf_counter() - t0
        seconds = ref.seconds
        ref = _reference_from_fit(X, y, C, fit, kernel, weights, augmented, shared, z_norms)
        ref.seconds += seconds
    return fit, ref, extra, potential


def _first_start(X, problem, C, kernel, augmented, shared):
    """Start of the first C: a = C c (every sample at its bound, Lemma 9's point) when its dual
    objective C^2/2 c'Qc + C p'c beats a = 0, with its margins C (Qc)_i; else (None, None).

    At the small C where paths start nearly every sample ends at its bound, so
    the descent then moves only the few that do not, instead of every sample
    once. Qc costs one pass over the kernel rows (which the first solve reads anyway).
    """
    y, weights = problem.y, problem.C
    Qc = y * _products(X, kernel, shared, np.arange(y.size), y * weights, 1.0 if augmented else 0.0)
    if 0.5 * C * C * float(weights @ Qc) + C * float(np.sum(problem.p * weights)) >= 0:
        return None, None
    return C * weights, C * Qc


def _cd_cost(fit, row_entries) -> float:
    """Modelled CPU microseconds of a CD solve: :data:`CD_VISIT_NS` per active sample per step,
    scaled up for cached rows longer than :data:`CD_ROW_ENTRIES`."""
    return fit.stats["visits"] * CD_VISIT_NS * max(1.0, row_entries / CD_ROW_ENTRIES) / 1000.0


def _irwls_cost(n_chunks, n_active, working_set) -> float:
    """Modelled CPU microseconds of an IRWLS solve of ``n_chunks`` chunks (:data:`IRWLS_CHUNK_US`,
    :data:`IRWLS_QN_NS`); the working set as IRWLS sizes it (3/4 of it on small problems)."""
    q = min(working_set * (SMALL_PROBLEM_Q if n_active < IRWLS_SMALL_PROBLEM else 1.0), n_active)
    return n_chunks * (IRWLS_CHUNK_US + IRWLS_QN_NS * q * n_active / 1000.0)


class _CachedSolver:
    """``solve_box_cd``'s call signature on the rows ``index`` of a shared :class:`PathKernelCache`.

    With ``irwls_options`` (solver='auto') it tries IRWLS (chunked, on the
    same rows) on the next C once a CD solve cost more than an IRWLS solve is
    expected to (cost model of :func:`_cd_cost` / :func:`_irwls_cost` on the
    CD steps' active-set sizes and IRWLS's chunks and working set;
    :data:`IRWLS_PRIOR_CHUNKS` chunks until one IRWLS solve was seen). If that trial IRWLS solve cost no more than the last CD
    solve, IRWLS is kept for the rest of the path (C only grows, and CD's cost
    grows faster: an earlier rule that went back to CD later fired on magic at
    C = 61.6, a 5.6 s CPU CD solve between IRWLS solves of 1.8 and 3.2 s);
    otherwise CD goes on, and IRWLS is tried again once a CD solve costs
    :data:`TRIAL_GROWTH` times what that trial did. The path's first (cold) CD solve decides nothing. Greedy CD moves two samples a step, so on data with
    many bounded SVs it needs steps where IRWLS moves whole chunks: banana
    folds (1,600 samples, ~20 free SVs) at C = 12.9 took 5,031 CD steps (34 ms)
    against 12 ms for IRWLS; on small problems (wdbc folds, 364 samples)
    IRWLS's per-chunk overhead loses and CD stays. The IRWLS solution's
    margins (which the references and warm starts need) are read from the
    shared cache (one product over its SVs).
    """

    def __init__(self, cache, index, irwls_options=None, irwls_only=False):
        self.cache, self.index = cache, index
        self.irwls_options = irwls_options
        self.irwls_only = irwls_only           # bias='equality': IRWLS on the shared rows at every C
        self.use_irwls = irwls_only
        self.irwls_chunks = IRWLS_PRIOR_CHUNKS  # expected chunks of an IRWLS solve (the last trial's)
        self.trial_against = None              # modelled cost of the CD solve an IRWLS trial must beat
        self.cd_solves = 0
        # the first (cold) solve by IRWLS when the problem's rows do not all fit the cache: its chunks
        # reuse their rows, while each greedy CD step wants another one (full a9a at C = 0.01, 7.6k of
        # 32.6k rows cached: IRWLS 7.8 s, CD 152 s, LIBSVM 45 s); the next C go on as 'auto' says
        self.irwls_first = irwls_options is not None and cache.capacity < index.size

    def resume(self, fit):
        """Go on as the solver of a path whose last solution is ``fit``: its next solve is warm (it
        decides), IRWLS stays when that solution was IRWLS's, and an IRWLS trial that CD solve
        called for is made: the solvers are those of the uninterrupted path (before, the call was
        lost with the solver of the earlier part, and the resumed part went on with CD)."""
        self.cd_solves = max(self.cd_solves, 1)
        self.irwls_first = False
        if self.irwls_options is None:
            return
        if fit.stats.get("solver") == "irwls":
            self.use_irwls = True
            self.irwls_chunks = max(fit.n_iter, 1)
        elif "irwls_trial_against" in fit.stats:
            self.use_irwls = True
            self.trial_against = fit.stats["irwls_trial_against"]

    def start_from_zero(self, largest_bound, n):
        """The path's first solve starts from a = 0 (Lemma 9's point a = C c does not beat it): with
        bounds up to ``largest_bound`` >= :data:`IRWLS_START_C` on :data:`IRWLS_START_MIN_SAMPLES` or
        more samples, IRWLS solves it and the path's next C (greedy CD would move every SV two at a
        time, and the path goes on where CD is slow), until a trial says otherwise."""
        if self.irwls_options is not None and largest_bound >= IRWLS_START_C and n >= IRWLS_START_MIN_SAMPLES:
            self.use_irwls = True

    def _irwls_cost(self, n_chunks, n_active):
        return _irwls_cost(n_chunks, max(n_active, 1), self.irwls_options.get("working_set_size", DEFAULT_WORKING_SET))

    def __call__(self, X, problem, kernel, *, tol, alpha_init=None, fixed_at_zero=None, fixed_at_C=None,
                 bias="augmented", initial_margins=None, max_iter=-1, dynamic=False, **_):
        cold_irwls, self.irwls_first = self.irwls_first, False
        if not self.use_irwls and not cold_irwls:
            n_free = problem.n - sum(int(np.count_nonzero(m)) for m in (fixed_at_zero, fixed_at_C) if m is not None)
            fit = solve_box_cd_cached(self.cache, self.index, problem, tol=tol, bias=bias, alpha_init=alpha_init,
                                      fixed_at_zero=fixed_at_zero, fixed_at_C=fixed_at_C,
                                      initial_margins=initial_margins, max_iter=max_iter, dynamic=dynamic,
                                      shrinking=True if n_free >= SHRINK_MIN_ACTIVE else
                                      "compact" if n_free >= COMPACT_MIN_ACTIVE else False)
            cost = _cd_cost(fit, self.cache.n)
            fit.stats["modelled_us"] = cost
            self.cd_solves += 1                # the first solve starts cold (magic: 5,367 steps, the next 666)
            if self.irwls_options is not None and self.cd_solves > 1 and \
                    cost > self._irwls_cost(self.irwls_chunks, fit.stats["n_active"]):
                self.use_irwls = True
                self.trial_against = cost
                fit.stats["irwls_trial_against"] = cost     # the decision, for a path resumed from this fit
            return fit
        # outputs at the warm start from the path's margins (free SVs and moved samples only)
        y = problem.y
        start = None if initial_margins is None or alpha_init is None else y * initial_margins
        fit = solve_irwls(X, problem, kernel, tol=tol, alpha_init=alpha_init, fixed_at_zero=fixed_at_zero,
                          fixed_at_C=fixed_at_C, bias=bias, kernel_cache=(self.cache, self.index),
                          initial_outputs=start,
                          **{"max_iter": max_iter, **self.irwls_options})
        # y_i f_i without the unregularised bias (with the augmented one, f includes it)
        fit.stats["margins"] = y * fit.stats["outputs"]
        fit.stats["solver"] = "irwls"
        fit.stats["modelled_us"] = self._irwls_cost(max(fit.n_iter, 1), fit.stats["n_active"])
        if self.trial_against is not None:     # the first IRWLS solve after CD: keep IRWLS if it paid
            # (at least one chunk: the set-up of a solve that found the start optimal costs too)
            if fit.stats["modelled_us"] > self.trial_against:
                self.use_irwls = False
                # IRWLS's chunks grow along the path too: without the factor, satimage pairs alternated
                # CD / IRWLS trial at every C from C ~ 20 on (trials of 39, 80, 150 chunks, each lost)
                self.irwls_chunks = TRIAL_GROWTH * max(fit.n_iter, 1)
            self.trial_against = None
        return fit


#: dynamic screening: tolerance factors of the stages before the final solve at tol
DYNAMIC_STAGES = (100.0, 10.0)


def _dynamic_solve(solve, X, problem, kernel, tol, alpha_init, fixed0, fixedC, bias, options, extra, phi_norms,
                   row_error, shared, pass_margins):
    """Solve with dynamic gap screening (the duality-gap rule of the dynamic screening): stop at 100 tol and 10 tol; after each
    stage the gap ball of the current (feasible) dual point a and its primal w = Z'a
    (:func:`.screening.gap_screen`, any bias) holds the samples it proves in R at 0 and in L at C_i
    for the rest of the solve. Safe: the optimum is unchanged. ``problem`` has the bounds of the
    C solved. Returns (fit, counts)."""
    y, upper = problem.y, problem.C
    n = y.size
    fixed0 = np.zeros(n, bool) if fixed0 is None else fixed0.copy()
    fixedC = np.zeros(n, bool) if fixedC is None else fixedC.copy()
    counts = {"dynamic": 0, "dynamic_R": 0, "dynamic_L": 0, "dynamic_seconds": 0.0}
    for factor in DYNAMIC_STAGES:
        fit = solve(X, problem, kernel, tol=tol * factor, alpha_init=alpha_init, fixed_at_zero=fixed0,
                    fixed_at_C=fixedC, bias=bias, **options, **extra)
        start = time.perf_counter()
        g, a = fit.stats["margins"], fit.alpha
        w2 = max(float(a @ g), 0.0)
        res = gap_screen(g, w2, float(np.sum(-problem.p * a)) - 0.5 * w2, problem, phi_norms, equality=bias == "equality",
                         margin_error=row_error * float(a.sum()))
        new_R = res.in_R & ~fixed0 & ~fixedC
        new_L = res.in_L & ~fixed0 & ~fixedC
        fixed0 |= new_R
        fixedC |= new_L
        counts["dynamic_R"] += int(new_R.sum())
        counts["dynamic_L"] += int(new_L.sum())
        counts["dynamic"] += int(new_R.sum() + new_L.sum())
        alpha_init = np.where(fixed0, 0.0, np.where(fixedC, upper, a))
        extra = {}
        if pass_margins:
            extra["initial_margins"] = _moved_margins(g, a, alpha_init, X, y, kernel, bias == "augmented", shared)
        counts["dynamic_seconds"] += time.perf_counter() - start
    fit = solve(X, problem, kernel, tol=tol, alpha_init=alpha_init, fixed_at_zero=fixed0, fixed_at_C=fixedC,
                bias=bias, **options, **extra)
    return fit, counts


def row_cache(kernel: Kernel, X, cache_size=200.0, tol=1e-3) -> PathKernelCache:
    """The kernel row cache a path shares over all its C values (float32 rows when tol >= 1e-4, as IRWLS)."""
    dtype = np.float32 if tol >= 1e-4 else np.float64
    if sp.issparse(X) and X.nnz >= PathKernelCache.DENSE_MIN_DENSITY * X.shape[0] * X.shape[1] \
            and X.shape[0] * X.shape[1] * 4 <= PathKernelCache.DENSE_MAX_MB * 2**20:
        X = X.toarray()                        # as the cache would, but before the dtype choice below
    if dtype == np.float32 and not sp.issparse(X):
        X = np.asarray(X, dtype=np.float32)    # float32 GEMM: twice the speed, rows are stored in float32 anyway
    return PathKernelCache(kernel, X, max(cache_size, 1e-6), dtype)


def binary_path(X, problem, Cs, kernel: Kernel, **options) -> list[PathPoint]:
    """Solve the binary SVM for every C of an ascending grid: :func:`iter_binary_path` run to its end."""
    return list(iter_binary_path(X, problem, Cs, kernel, **options))


def iter_binary_path(X, problem: DualProblem, Cs, kernel: Kernel, *, screening="it", bias="augmented",
                     tol=1e-3, trivial_start=False, warm_start=True, solver="auto", adaptive=True,
                     polish_reference=False, solver_options=None, callback=None, cache=None,
                     index=None, dynamic=False, start=None):
    """Solve the binary SVM for every C of an ascending grid (see the module docstring), yielding
    each C's :class:`PathPoint` as it is solved: a caller may stop early (the search of
    :mod:`leansvm.paths.search` stops a path once its accuracy has peaked).

    ``problem`` is the dual at unit C: its bounds are the per-sample factors c_i (C_i = C c_i;
    :func:`leansvm.core.problems.c_svc` with ``C`` = the sample and class weights). The
    screening rules and Lemma 9's start are derived for C-SVC's hinge loss (other losses have their own paths: svr_path, one_class_path).
    ``solver``: 'cd' (greedy coordinate descent on the box QP,
    :mod:`.box_cd`; not for bias='equality'), 'irwls' (``solve_irwls``) or
    'auto' (CD, then IRWLS from the first C where CD gets slow: :class:`_CachedSolver`).
    ``solver_options`` go to the solver (cache_size, max_iter; for IRWLS also
    working_set_size (None or absent: :data:`LARGE_WORKING_SET` from
    :data:`LARGE_PROBLEM` samples, IRWLS's default below), random_state, ...). ``adaptive``: when the last
    reference could not screen 1 % of the samples even if it were exact (C
    steps too large for the rules), the next references are skipped, except
    every 4th step, which probes again (the rules' cost is then not paid for
    nothing; safety is unaffected: fewer samples are screened). The gap rule
    (``screening='gap'``) is skipped the same way after a step where it proved
    under 1 % of the samples.
    ``polish_reference``: re-solve references (CD only) to a tighter tolerance
    when their duality gap voids the safeguarded rules (:func:`_reference`);
    off by default because on nearly separable data (mushroom) the tight
    re-solves cost more than the screening saves. ``callback(C)``, if given, is
    called after each C is solved (progress reports, :mod:`leansvm.progress`).

    Kernel reuse (CD solver): every kernel row the path needs is computed once
    into ``cache`` (a :class:`PathKernelCache` over a larger training set
    whose rows ``index`` are this problem's samples, shared with other pairs
    and folds), or into a cache of ``solver_options["cache_size"]`` MB built
    here; references, warm-start margins and the solves all read it. IRWLS
    (solver 'irwls', 'auto' at large C, and bias='equality') reads the same rows
    (``solve_irwls(kernel_cache=...)``).

    ``screening='gap'``: the duality-gap rule (:func:`.screening.gap_screen_from_reference`),
    valid for every ``bias`` including 'equality'. ``dynamic``: screening during each solve
    with the gap rule at the current C: inside the CD loop
    (``solve_box_cd_cached(dynamic=True)``, every max(50, n / 8) steps), and for
    IRWLS between stages stopped at 100 tol and 10 tol (:func:`_dynamic_solve`);
    the samples it proves leave the problem; ``PathPoint.extra["dynamic"]`` counts them.

    ``start``: the :class:`PathPoint` a path of this problem ended at (its fit with the margins), below
    every C of ``Cs``: the path goes on from there, warm, as if it had never stopped (the main job's
    search resumes paths): the solver goes on as it was (:meth:`_CachedSolver.resume`: IRWLS stays
    IRWLS); the screening reference starts afresh.
    """
    Cs = check_grid(Cs)
    check_screening(screening, bias)
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    if solver == "cd" and bias == "equality":
        solver = "irwls"          # the equality constraint needs pair steps: IRWLS
    _check_problem(problem, screening, trivial_start, dynamic)
    run = _PathRun(X, problem, kernel, screening=screening, bias=bias, tol=tol, solver=solver,
                   solver_options=solver_options, cache=cache, index=index)
    if trivial_start and bias != "equality":
        run.ref = run.lemma9 = ScreeningReference.trivial(X, problem.y, kernel, augmented=run.augmented,
                                                          weights=problem.C)
        run.pending = run.ref.seconds                      # reference cost not yet charged
    if start is not None:
        if not Cs[0] > start.C:
            raise ValueError(f"a resumed path goes on above its last C ({start.C:g}); Cs start at {Cs[0]:g}")
        if start.fit.alpha.shape != (problem.n,) or "margins" not in start.fit.stats:
            raise ValueError("start must be a PathPoint of this problem's path (its fit with the margins)")
        run.prev, run.prev_C = start.fit, float(start.C)
        run.solve.resume(start.fit)
    for k, C in enumerate(Cs):
        if run.lemma9 is not None and C <= run.lemma9.C:
            point = run.lemma9_point(C)
        else:
            next_C = Cs[k + 1] if k + 1 < Cs.size else None
            probe = not adaptive or run.useful or k % 4 == 0
            point = run.step(C, next_C if probe else None, warm_start, dynamic, polish_reference, gap_rule=probe)
        if callback is not None:
            callback(C)
        yield point


class _PathRun:
    """The state a path carries from one C to the next (previous solution, screening reference)
    and its three stages per C: screen (:meth:`_screen`), start (:meth:`_start`), solve (:meth:`step`)."""

    def __init__(self, X, problem, kernel, *, screening, bias, tol, solver, solver_options, cache, index):
        self.X, self.problem, self.kernel = X, problem, kernel
        self.screening, self.bias, self.tol = screening, bias, tol
        n = problem.n
        options = dict(solver_options or {})
        if options.get("working_set_size") is None:
            options.pop("working_set_size", None)
            if n >= LARGE_PROBLEM:
                options["working_set_size"] = LARGE_WORKING_SET
        self.augmented = bias == "augmented"
        self.irwls_only = solver == "irwls" or bias == "equality"
        if cache is None:
            cache, index = row_cache(kernel, X, options.get("cache_size", 200.0), tol), np.arange(n)
        elif index is None or np.shape(index) != (n,):
            raise ValueError(f"index must give the {n} rows of this problem in the shared cache")
        elif n <= SUBSET_SHARE * cache.n and n * n * cache.dtype.itemsize <= cache.capacity * cache.row_bytes:
            cache, index = cache.subset(index), np.arange(n)    # short contiguous rows for this pair
        self.shared = (cache, np.asarray(index, dtype=np.intp))
        self.z_norms = np.sqrt(np.maximum(cache.row_diagonal[self.shared[1]] + (1.0 if self.augmented else 0.0), 0.0))
        irwls_options = {k: v for k, v in options.items() if k != "max_iter"} if solver != "cd" else None
        self.options = {k: v for k, v in options.items() if k == "max_iter"}
        self.solve = _CachedSolver(*self.shared, irwls_options, self.irwls_only)
        # |error| of a margin read from the cached rows, per unit of sum a (PathKernelCache.entry_error: float32
        # rows are off by far more than 2^-23 k, e.g. 7.7e-6 on satimage's RBF rows; x 2 for the accumulation)
        self.row_error = 2.0 * cache.entry_error
        self.ref = self.lemma9 = self.prev = None
        self.prev_C = 0.0
        self.useful = True
        self.pending = 0.0

    def lemma9_point(self, C) -> PathPoint:
        """C <= C_min: Lemma 9's exact solution a = C c, no solve."""
        fit = _trivial_fit(self.lemma9, C, self.augmented, self.problem.y)
        point = PathPoint(C, fit, 0, 0, self.problem.n, self.pending, 0.0, {"lemma9": True})
        self.pending = 0.0
        self.prev, self.prev_C = fit, C
        return point

    def _screen(self, C, gap_rule=True):
        """Masks of the samples a safe rule proves at 0 / at C c_i (None, None: no rule this step).
        ``gap_rule=False``: the gap rule is skipped this step (the reference rules screen whenever
        the last step computed their reference)."""
        prev = self.prev
        if self.screening == "gap" and gap_rule and prev is not None and "margins" in prev.stats:
            result = gap_screen_from_reference(prev.alpha, prev.stats["margins"], self.prev_C, C, self.problem,
                                               self.z_norms, equality=self.bias == "equality",
                                               margin_error=self.row_error * float(prev.alpha.sum()))
            return result.in_R, result.in_L
        if self.screening is not None and self.ref is not None:
            result = screen(self.ref, C, self.screening)
            return result.in_R, result.in_L
        return None, None

    def _start(self, C, fixed0, fixedC, warm_start):
        """The warm start at C (alpha_init, solver keywords with the margins there when known): the
        previous solution with its bounded samples moved to the new bound, screened samples at
        theirs; at the first C Lemma 9's point a = C c when it beats 0 (:func:`_first_start`)."""
        X, y, kernel, prev, ref = self.X, self.problem.y, self.kernel, self.prev, self.ref
        upper = C * self.problem.C
        alpha_init, extra = None, {}
        if not self.irwls_only and warm_start and prev is None and not (fixed0 is not None and fixed0.any()):
            alpha_init, margins = _first_start(X, self.problem, C, kernel, self.augmented, self.shared)
            if alpha_init is not None:
                extra["initial_margins"] = margins
            else:
                self.solve.start_from_zero(float(np.max(upper)), self.problem.n)
        if not (warm_start and prev is not None):
            return alpha_init, extra
        prev_upper = self.prev_C * self.problem.C
        at_bound = (prev.alpha >= prev_upper) & (prev.alpha > 0)
        alpha_start = np.where(at_bound, upper, prev.alpha)
        if fixed0 is not None:
            alpha_start[fixed0] = 0.0
            alpha_start[fixedC] = upper[fixedC]
        if ref is not None:
            extra["initial_margins"] = start_margins(ref, C, alpha_start, X, y, kernel, self.augmented, self.shared)
        elif "margins" in prev.stats:
            extra["initial_margins"] = _rescaled_margins(prev.stats["margins"], prev.alpha, at_bound, C / self.prev_C,
                                                         upper, alpha_start, X, y, kernel, self.augmented,
                                                         self.shared)
        return alpha_start, extra                # the solvers hold screened samples there anyway

    def step(self, C, next_C, warm_start, dynamic, polish, gap_rule=True) -> PathPoint:
        """Screen, start and solve at C; then the reference for ``next_C`` (None: no reference).
        ``gap_rule=False`` skips the gap rule at this C; its own usefulness (1 % of the samples
        proved) decides whether the next steps apply it, as the reference rules' potential does."""
        t0 = time.perf_counter()
        fixed0, fixedC = self._screen(C, gap_rule)
        n_R, n_L = (0, 0) if fixed0 is None else (int(fixed0.sum()), int(fixedC.sum()))
        if self.screening == "gap" and fixed0 is not None:
            self.useful = n_R + n_L >= 0.01 * self.problem.n
        rule_seconds = time.perf_counter() - t0 + self.pending
        self.pending = 0.0
        t0 = time.perf_counter()
        alpha_init, extra = self._start(C, fixed0, fixedC, warm_start)
        at_C = self.problem.with_bounds(C * self.problem.C)
        solve, options = self.solve, self.options
        args = dict(tol=self.tol, alpha_init=alpha_init, fixed_at_zero=fixed0, fixed_at_C=fixedC, bias=self.bias)
        if dynamic and not solve.use_irwls:    # CD: gap screening inside the descent
            fit = solve(self.X, at_C, self.kernel, dynamic=True, **args, **options, **extra)
            dyn = {"dynamic": fit.stats.get("dynamic_screened", 0)}   # 0: a cold IRWLS solve
        elif dynamic:                          # IRWLS: gap screening between tolerance stages
            fit, dyn = _dynamic_solve(solve, self.X, at_C, self.kernel, self.tol, alpha_init, fixed0, fixedC,
                                      self.bias, options, extra, self.z_norms, self.row_error, self.shared,
                                      not self.irwls_only)
        else:
            fit = solve(self.X, at_C, self.kernel, **args, **options, **extra)
            dyn = {}
        solve_seconds = time.perf_counter() - t0
        self.ref = None
        if self.screening in RULES and next_C is not None:
            fit, self.ref, polish_seconds, potential = _reference(
                self.X, self.problem, C, next_C, fit, self.kernel, self.augmented, solve, self.tol, fixed0, fixedC,
                self.bias, options, polish=polish, rule=self.screening, shared=self.shared, z_norms=self.z_norms)
            self.useful = potential >= 0.01
            solve_seconds += polish_seconds
            self.pending = self.ref.seconds
        n_non_sv = int(np.count_nonzero((fit.alpha <= 0) | (fit.alpha >= at_C.C)))
        self.prev, self.prev_C = fit, C
        return PathPoint(C, fit, n_R, n_L, n_non_sv, rule_seconds, solve_seconds, dyn)
