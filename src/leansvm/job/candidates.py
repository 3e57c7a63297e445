"""Stages 4-6 of the main job: the exact fit's time estimated, the exact model and the budget
models trained, and the compression size search (``leansvm.compress`` of the exact model)."""

from __future__ import annotations


import numpy as np

from leansvm.budget.landmarks import LandmarkSVC
from leansvm.compression.cvm import reuse_eigendecompositions
from leansvm.exact.svc import SVC
from leansvm.job.helpers import _QuietConvergence, _int32_indices, _optional, _subsample, _timed
from leansvm.job.records import Candidate
from leansvm.progress import Progress, default_progress


#: Compression fitting points: at least this many training rows per compressed vector (see compress_models) ...
POINTS_PER_VECTOR = 4
#: ... and this many per fitted parameter (a vector has d + outputs): synth-50k's 868 vectors x 21 reach
#: 0.9098 on test fitted on all 50,000 rows, 0.9004 on 20,000 (18,000 parameters), the exact model 0.9130
POINTS_PER_PARAMETER = 3


#: The compression size search starts with at least this many vectors per class (more than two classes).
VECTORS_PER_CLASS = 20


#: L-BFGS iterations of each compression in the size search and of the refit of the chosen size
#: (compress's automatic count, within these bounds instead of its 100-3000): the refit trains the
#: configuration that was validated. 300 and 3,000 iterations label validation rows alike at the
#: chosen sizes (page-blocks0, optdigits, banana: docs/fit.md) and test rows alike on page-blocks0
#: (40 / 80 vectors: 0.9735 / 0.9726 against 0.9726 / 0.9735) and banana (12 / 24: 0.9066 both), at
#: a seventh to an eighth of the time (page-blocks0's refit 14.4 -> 1.8 s); magic gives up 0.34 /
#: 0.21 test points at 40 / 226 vectors for 7.2 against 32.6 s and 21.9 against 155 s
#: (``benchmarks/main_job/bench_fit_points.py``). The lower bound keeps the count from falling as the fitting points grow: synth-50k's
#: 868 vectors on 50,000 rows test 0.8911 after 109 iterations and 0.9098 after 1,000. With the float32
#: row-block objective (compression/rbf_objective.py) 1,000 iterations there take about a minute.
SEARCH_ITERATION_RANGE = (300, 1000)
#: ... where the objective does not run in float32 row blocks (kernels other than RBF): the earlier
#: bounds, since an iteration on the whole float64 matrix costs about ten times more (satimage,
#: 6 classes, before its one-vs-one layouts ran in blocks: one run of the main job took 790 s with
#: 300-1000 on every size) ...
WHOLE_MATRIX_ITERATION_RANGE = (100, 300)
#: ... and for more than two classes, whatever the kernel: letter (26 classes, 5 split seeds of
#: ``benchmarks/main_job/bench_main_job.py``, the same code otherwise) returned compressed models on 3
#: seeds with these bounds (520, 520, 735 vectors; realised drops 0.43, -0.03, 0.35 points) and on 2
#: with 300-1000 (520, 520; 0.53, -0.08): each size took about three times longer, so fewer sizes and
#: confirming folds fitted in the job's time
MULTICLASS_ITERATION_RANGE = WHOLE_MATRIX_ITERATION_RANGE


def search_iterations(model) -> tuple[int, int]:
    """The size search's L-BFGS bounds for compressing ``model``: MULTICLASS_ITERATION_RANGE for more
    than two classes, else SEARCH_ITERATION_RANGE when its objective runs in float32 row blocks (the
    RBF kernel), else WHOLE_MATRIX_ITERATION_RANGE."""
    if len(getattr(model, "classes_", ())) > 2:
        return MULTICLASS_ITERATION_RANGE
    return SEARCH_ITERATION_RANGE if model.expansion_.kernel.name == "rbf" else WHOLE_MATRIX_ITERATION_RANGE


#: Budget models as fractions of the exact model's support vectors.
DEFAULT_SIZE_FRACTIONS = (0.02, 0.05, 0.1, 0.2)


GROWTH_MIN, GROWTH_MAX = 1.5, 3.0     # bounds of the fitted exponent of fit time in n
#: a fit estimated from small subsamples over this many times their size ...
MIDDLE_FACTOR = 16
#: ... and over this many seconds is timed once more at a middle size (at most this long by the small fits)
MIDDLE_SECONDS = 10.0
#: the least growth exponent beyond the middle size: IRWLS's growth rises with n (synth-1M at C = 1,
#: gamma = 0.2: below 1.5 from 20,000 to 40,000 rows, 1.62 to 80,000, 1.65 to 160,000: 6.9, 21.1, 66.1 s)
FAR_GROWTH_MIN = 1.65


def estimate_fit_seconds(make_estimator, X, y, sample_size=2000, random_state=0,
                         enough=None) -> tuple[float, float, int, float]:
    """(estimated seconds to fit all of X, measured seconds, subsample size, growth exponent p).

    Times ``make_estimator().fit`` on stratified subsamples of s/2 and s =
    ``sample_size`` rows and extrapolates t(n) = t(s) (n / s)^p, with p fitted
    to the two timings and clipped to [GROWTH_MIN, GROWTH_MAX]: LIBSVM grows about
    as n^2.2 on the synthetic sets, leansvm's IRWLS with shrinking as n^1.4-1.7
    from 5k to 160k; small subsamples time overheads, hence the clip. Far beyond them
    (``MIDDLE_FACTOR``) two more fits, at the geometric middle m of s and n and at m/2, set p (at
    least ``FAR_GROWTH_MIN``) and t, unless the small fits' estimate (optimistic there) is already over
    ``enough`` seconds: a caller that asks only whether the fit is cheap has its answer.
    """
    Xs, ys = _subsample(X, y, sample_size, random_state)
    if Xs.shape[0] == X.shape[0]:
        _, seconds = _timed(make_estimator().fit, _int32_indices(Xs), ys)
        return seconds, seconds, Xs.shape[0], GROWTH_MIN
    Xh, yh = _subsample(Xs, ys, Xs.shape[0] // 2, random_state)
    _, half = _timed(make_estimator().fit, _int32_indices(Xh), yh)
    _, seconds = _timed(make_estimator().fit, _int32_indices(Xs), ys)
    p = _growth(half, Xh.shape[0], seconds, Xs.shape[0])
    n, s = X.shape[0], Xs.shape[0]
    if enough is not None and seconds * (n / s) ** p > enough:
        return seconds * (n / s) ** p, seconds, s, p
    if n > MIDDLE_FACTOR * s and seconds * (n / s) ** p > MIDDLE_SECONDS:
        # far extrapolation from small fits, which overheads dominate, is optimistic: on synth-1M, 2,000
        # rows in 0.03 s scaled as n^1.5 gave 274 s for 800,000 rows, while 160,000 alone take 77 s
        # (n^1.68); the subsample sized by it would have taken three times its share. Two more fits at
        # the geometric middle and half of it (their growth, not the small fits' overheads), the
        # larger at most MIDDLE_SECONDS by the small fits' estimate.
        n_mid = int(min(np.sqrt(s * n), s * (MIDDLE_SECONDS / max(seconds, 1e-9)) ** (1 / p)))
        if n_mid >= 4 * s:
            Xm, ym = _subsample(X, y, n_mid, random_state)
            Xq, yq = _subsample(Xm, ym, Xm.shape[0] // 2, random_state)
            _, quarter = _timed(make_estimator().fit, _int32_indices(Xq), yq)
            _, middle = _timed(make_estimator().fit, _int32_indices(Xm), ym)
            p = max(_growth(quarter, Xq.shape[0], middle, Xm.shape[0]), FAR_GROWTH_MIN)
            return middle * (n / Xm.shape[0]) ** p, middle, Xm.shape[0], p
    return seconds * (n / s) ** p, seconds, s, p


def rows_within(seconds, measured, size, power, n) -> int:
    """The most rows (at least ``size``, at most ``n``) whose fit, ``measured`` seconds on ``size`` rows
    growing as n^``power``, is estimated to take ``seconds``."""
    return int(min(n, max(size, size * (seconds / max(measured, 1e-9)) ** (1 / power))))


def _growth(t_small, n_small, t_large, n_large) -> float:
    """The exponent p of t ~ n^p through two timings, clipped to [GROWTH_MIN, GROWTH_MAX]."""
    return float(np.clip(np.log(max(t_large, 1e-9) / max(t_small, 1e-9)) / np.log(n_large / n_small),
                         GROWTH_MIN, GROWTH_MAX))


def scaled_fit_seconds(seconds, n_to, n_from, power=GROWTH_MIN) -> float:
    """A fit of ``seconds`` on ``n_from`` rows, scaled to ``n_to`` rows as n^``power`` (the refit's
    estimate: the chosen model again on all rows; 1 for the one-output jobs' budget models, whose
    SGD pass is linear in the rows)."""
    return seconds * (n_to / max(n_from, 1)) ** power


def estimate_exact_seconds(X, y, C, gamma, sample_size=2000, random_state=0,
                           enough=None) -> tuple[float, float, int, float]:
    """:func:`estimate_fit_seconds` of ``leansvm.SVC`` at (C, gamma)."""
    return estimate_fit_seconds(lambda: SVC(C=C, gamma=gamma, random_state=random_state), X, y,
                                sample_size, random_state, enough)


def exact_svc(C, gamma, random_state=0, class_weight=None) -> SVC:
    """The job's exact C-SVC (``leansvm.SVC``, IRWLS) at (C, gamma), unfitted."""
    return SVC(C=C, gamma=gamma, random_state=random_state, cache_size=500, class_weight=class_weight)


def train_exact(X, y, C, gamma, random_state=0, class_weight=None) -> Candidate:
    """The exact C-SVC (:func:`exact_svc`) at (C, gamma) trained on ``X, y``."""
    model, seconds = _timed(exact_svc(C, gamma, random_state, class_weight).fit, X, y)
    return Candidate("exact SVC", "exact", model, model.expansion_.n_support, seconds, n_rows=X.shape[0])


def compress_at_rows(exact_model, size, X, y, min_points=None, random_state=0):
    """Classification's ``compress_to`` (:mod:`leansvm.job.refit`): ``compress`` of ``exact_model``
    to ``size`` vectors, fitted at a stratified subsample of ``X`` (at least ``min_points`` rows,
    ``POINTS_PER_VECTOR`` per vector: :func:`_n_fitting_points`) within :func:`search_iterations`'
    bounds, as the size search compressed."""
    compress = _optional("compress")
    X_pts, y_pts = _fitting_points(X, y, size, min_points, POINTS_PER_VECTOR, random_state)
    return compress(exact_model, n_sv=size, X=X_pts, y=y_pts, max_iter=None, max_fit_points=None,
                    random_state=random_state, iteration_range=search_iterations(exact_model))


def _timed_subsample(estimator, X, y, random_state):
    """(budget, seconds, rows, model) of ``estimator`` fitted on a stratified subsample of 10 rows
    per budget vector (at least 5,000): the first model of a family is timed small before it is
    trained on every row (synth-200k: BSGD B = 790 took 100 s unchecked, against a 30-s share).
    ``model``: the fitted copy when the subsample is every row (the fit on every row itself, which
    the caller keeps instead of repeating it), else None."""
    from sklearn.base import clone

    rows = int(min(X.shape[0], max(5000, 10 * estimator.budget)))
    X_sub, y_sub = _subsample(X, y, rows, random_state)
    with default_progress(False):
        model, seconds = _timed(clone(estimator).fit, X_sub, y_sub)
    return estimator.budget, seconds, X_sub.shape[0], model if X_sub.shape[0] == X.shape[0] else None


def pass_work(budget, rows) -> float:
    """A budget model's fit work up to a constant: a pass computes ``budget`` kernel values per row."""
    return float(budget) * rows


def train_budget_models(job, C, gamma, budgets, time_limit=None, landmarks=True):
    """Budget models at each budget: ``leansvm.BSGDClassifier`` (with its convex refit) and, with
    ``landmarks``, Nystroem landmarks + LinearSVC (:class:`~leansvm.budget.landmarks.LandmarkSVC`),
    the family ahead of plain BSGD at equal size on magic and a9a (BENCHMARKS.md, "Budgeted SGD
    against LIBSVM and Nystroem": 500 vectors, magic 0.8867 against 0.8575, a9a 0.8497 against 0.8398).

    Trained on the job's fit rows, with a bar over the budgets (on a terminal, :mod:`leansvm.progress`).
    ``time_limit`` (seconds): no model is started when the one before it, scaled by the budgets'
    ratio, would end past it; the log names the budgets left out."""
    X, y, random_state, log = job.X_fit, job.y_fit, job.random_state, job.log
    bsgd = _optional("BSGDClassifier")
    fallback = None
    if bsgd is None:
        fallback = ("leansvm.BSGDClassifier is not available; Nystroem landmarks + "
                    "LinearSVC (scikit-learn), written as a kernel expansion over the landmarks")
    out = []
    start = job.clock()
    plan = []
    for budget in budgets:
        if bsgd is not None:
            # the convex refit: +1.8..+4.3 test points at 0.1-3.3x the time on banana and magic at
            # the main job's budgets (BENCHMARKS.md, "Budget models: the convex refit")
            plan.append((f"BSGD B={int(budget)}",
                         bsgd(budget=int(budget), C=C, gamma=gamma, random_state=random_state, refit=True)))
        if landmarks or bsgd is None:
            plan.append((f"Nystroem B={int(budget)}",
                         LandmarkSVC(budget=int(budget), C=C, gamma=gamma, random_state=random_state)))
    left_out, last, trained = [], {}, set()   # last: the last model of each family, its budget and seconds
    with Progress(len(plan), "budget models", "models") as bar:
        for name, estimator in plan:
            family, model = type(estimator).__name__, None
            if time_limit is not None and family not in last:
                *last[family], model = _timed_subsample(estimator, X, y, random_state)
            if time_limit is not None and model is None:
                budget, seconds, rows = last[family]
                expected = seconds * pass_work(estimator.budget, X.shape[0]) / pass_work(max(budget, 1), rows)
                if job.clock() - start + expected > time_limit:
                    left_out.append(name)
                    continue
            if model is None:
                with default_progress(False):   # this bar counts the models; none inside each fit
                    model, seconds = _timed(estimator.fit, X, y)
            else:
                seconds = last[family][1]
            last[family] = (estimator.budget, seconds, X.shape[0])
            out.append(Candidate(name, "budget", model, model.expansion_.n_support, seconds))
            trained.add(int(estimator.budget))
            bar.update()
    families = (["BSGDClassifier with its convex refit"] if bsgd is not None else []) + \
        (["Nystroem + LinearSVC"] if landmarks or bsgd is None else [])
    log.step("budget", f"{len(out)} budget model(s)"
             + (f", B = {', '.join(str(b) for b in sorted(trained))}" if trained else ""),
             f"budgeted training at fixed sizes {', '.join(str(int(b)) for b in budgets)}: " + " and ".join(families)
             + (f"; left out for lack of time ({time_limit:.0f} s): {', '.join(left_out)}" if left_out else ""),
             job.clock() - start, fallback)
    return out


#: The budget route's fixed budget sizes, beside fractions of its exact model (fitted on a subsample)
BUDGET_ROUTE_SIZES = (50, 100, 200, 500)


def budget_route_sizes(n_support, n_rows, size_fractions=DEFAULT_SIZE_FRACTIONS) -> list[int]:
    """Budget sizes on the budget route: ``size_fractions`` of the exact model's ``n_support`` (at
    least 10, as on the exact route) and ``BUDGET_ROUTE_SIZES``, below ``n_rows``. That exact model
    saw only a subsample, so its fractions are the small end; the fixed sizes reach past it
    (checker-1M: 107 vectors on 27,869 rows, where BSGD on all 800,000 rows qualified at 32)."""
    fractions = {max(10, int(round(f * n_support))) for f in size_fractions}
    return sorted(b for b in fractions | set(BUDGET_ROUTE_SIZES) if b < n_rows)


def refine_budget_size(job, candidates, reference: Candidate, time_limit=None) -> Candidate | None:
    """One more budget size, as :func:`compress_models` refines its doubling: the geometric mean of
    the smallest qualifying budget model's budget and its family's largest budget below it that
    missed, trained on the job's fit rows and judged against ``reference`` on the validation part
    by the task's rule. None where there is no such pair, or where the model,
    estimated from the qualifying one's time scaled by the budgets' ratio, would take longer than
    ``time_limit`` seconds. checker-1M with 600 s: B = 21 missed, 50 qualified, and the 32 between
    them qualified (test 0.9974, the 10-minute exact SVC 0.9996)."""
    from sklearn.base import clone

    task, X, y, log = job.task, job.X_fit, job.y_fit, job.log
    made = [c for c in candidates if c.kind == "budget" and c.drop is not None]
    hits = [c for c in made if task.within(c)]
    if not hits:
        return None
    hit = min(hits, key=lambda c: (c.model.budget, c.drop.upper))
    family = type(hit.model)
    misses = [c for c in made if type(c.model) is family and c.model.budget < hit.model.budget
              and not task.within(c)]
    if not misses:
        return None
    miss = max(misses, key=lambda c: c.model.budget)
    middle = int(round(np.sqrt(miss.model.budget * hit.model.budget)))
    if not miss.model.budget < middle < hit.model.budget:
        return None
    name = f"{hit.name.rsplit(' B=', 1)[0]} B={middle}"
    why = f"between {miss.name} (missed) and {hit.name} (qualifies), their geometric mean"
    expected = hit.fit_seconds * pass_work(middle, X.shape[0]) / pass_work(hit.model.budget, X.shape[0])
    if time_limit is not None and expected > time_limit:
        log.step("refine", f"{name} not trained", f"{why}; estimated at {expected:.0f} s, over the time left for "
                                                  f"it ({time_limit:.0f} s)")
        return None
    with default_progress(False):
        model, seconds = _timed(clone(hit.model).set_params(budget=middle).fit, X, y)
    c = Candidate(name, "budget", model, model.expansion_.n_support, seconds)
    task.validate(c, job.X_val)
    task.estimate([c], reference)
    log.step("refine", f"{name}: {'qualifies' if task.within(c) else 'misses'}, "
                       f"validation accuracy {c.validation_accuracy:.4f}", why, seconds)
    return c


def doubling_out_of_reach(sizes, misses, limit, chance_miss) -> bool:
    """Whether a doubling size search (compression's, the reduced family's) stops short: no size under
    ``limit`` is expected to reach the target.

    ``misses``: required minus validation accuracy of each size tried (``sizes``, doubling), all > 0.
    With m_k the smallest miss up to size s_k, the last two doublings closed it by
    r = (m_{k-2} - m_k) / log2(s_k / s_{k-2}) per doubling; the search stops when m_k > r log2(limit / s_k),
    the miss left after every doubling up to ``limit`` at that rate (linear in log-size: compressed
    accuracy grows ever more slowly as the size nears the reference's, so the rate is optimistic).
    The running minimum keeps one poor compression from looking like a plateau (page-blocks0: 5, 10, 20
    vectors missed by 0.95, 0.57, 1.58 points, then 160 vectors reached it). Only once the misses are
    within half of ``chance_miss`` (the miss of predicting the majority class): a curve still near chance
    may not have started to rise. Measured on magic (39, 78, 156 vectors: misses 1.07, 0.94, 1.12 points,
    389 the largest size): it stops, and 312 vectors, which also missed (0.52), are not tried.
    """
    if len(sizes) < 3 or not sizes[-1] > sizes[-3]:
        return False
    smallest = np.minimum.accumulate(np.asarray(misses, dtype=float))
    if smallest[-1] > chance_miss / 2:
        return False
    rate = (smallest[-3] - smallest[-1]) / np.log2(sizes[-1] / sizes[-3])
    return bool(smallest[-1] > rate * np.log2(limit / sizes[-1]))


def compress_models(job, reference: Candidate, first_fraction=0.01, time_limit=None, below=None):
    """Compressed models of ``reference`` (``leansvm.compress``), searching the smallest size that
    qualifies on the job's validation part by the task's rule (classification: the accuracy drop
    against ``reference``, paired row by row, has a one-sided bound within the allowed drop,
    :mod:`leansvm.job.estimates`).

    Sizes double from ``first_fraction`` of the reference's #SV until one
    reaches the target, or until the misses shrink too slowly for any size under
    the limit to reach it (:func:`doubling_out_of_reach`; then one size at half the limit,
    :func:`_half_limit_probe`); after a hit one more size,
    the geometric mean of the last miss and the hit, refines it. Every compressed model is fitted to the
    reference's outputs on the job's training points (never on the validation
    part, which only measures), so each tried size is an honest point of the
    accuracy-against-#SV curve. The L-BFGS iterations of the gradient support
    vectors are compress's own choice scaled to the problem, within
    :func:`search_iterations`' bounds (letter at 1,040 vectors: 0.9745 on test
    against 0.9720 with 50 iterations, the full model 0.9768): fewer than
    compress's default, as in the refit of the chosen size
    (:func:`~leansvm.job.refit.refit_on_all_rows`).
    ``time_limit`` (seconds): no new size is tried when the next one (about
    twice the last one's time, times the growth of
    its fitting points) would end past it. Cost: about 2.5 times the compression at the
    final size (``compress(max_accuracy_drop=...)`` grows sizes by 1.25 and
    pays about 5 times). Fitting points: a stratified subsample of the fit rows
    with at least the job's ``compression_points`` (None: all) and ``POINTS_PER_VECTOR``
    rows per compressed vector, so that larger models are not fitted to too few
    points (each vector has d + outputs parameters). The first size has at
    least ``VECTORS_PER_CLASS`` vectors per class. ``below``: no size at or above it is tried
    (the #SV of the smallest model that already qualifies: a larger compressed one
    could not be chosen; on magic with BSGD's refit, B = 199 qualified and sizes of 312
    and more were tried for nothing).
    """
    task, X_fit, y_fit, log, random_state = job.task, job.X_fit, job.y_fit, job.log, job.random_state
    min_points, points_per_vector = job.compression_points, POINTS_PER_VECTOR
    compress = _optional("compress")
    if compress is None:
        log.step("compress", "no compression",
                 "compression is not available in this build", 0.0,
                 "leansvm.compress is not available; the exact and budget models are the candidates")
        return []
    m = reference.n_support
    out, start, n_unconverged = [], job.clock(), 0
    # L-BFGS bounds; a larger size never gets fewer iterations than the size before it: with a fixed
    # amount of work they fell as points x vectors grew (synth-200k: 790 vectors 970 iterations,
    # validation 0.9364; 1,580 vectors 300 iterations, 0.9309; 1,580 at 970, 0.9383)
    bounds = list(search_iterations(reference.model))
    if reference.validation_predictions is None:      # what every size is judged against
        task.validate(reference, job.X_val)

    def attempt(size):
        nonlocal n_unconverged
        X_pts, y_pts = _fitting_points(X_fit, y_fit, size, min_points, points_per_vector, random_state)
        try:
            with _QuietConvergence() as quiet:
                model, seconds = _timed(compress, reference.model, n_sv=int(size), X=X_pts, y=y_pts,
                                        max_iter=None, max_fit_points=None, random_state=random_state,
                                        iteration_range=tuple(bounds))
        except Exception as exc:
            log.step("compress", f"size {size} failed", f"{type(exc).__name__}: {exc}")
            return None
        n_unconverged += quiet.count
        used = int(getattr(model, "compression_", {}).get("max_iter") or 0)
        bounds[0], bounds[1] = max(bounds[0], used), max(bounds[1], used)
        n_sv = model.expansion_.n_support
        c = Candidate(f"compressed {n_sv} SV", "compressed", model, n_sv, seconds)
        task.validate(c, job.X_val)
        task.estimate([c], reference)
        out.append(c)
        log.say(f"  compressed to {n_sv} SV (fitted on {X_pts.shape[0]} points): "
                f"{task.against_target(c)} [{seconds:.1f} s]")
        return c

    def out_of_time(next_cost):
        return time_limit is not None and job.clock() - start + next_cost > time_limit

    n_classes = task.n_classes
    size = max(5, int(round(first_fraction * m)), VECTORS_PER_CLASS * n_classes if n_classes > 2 else 0)
    miss, hit, stopped, out_of_reach = None, None, False, False
    missed = []                          # (candidate, the task's miss) of each doubling
    limit = m if below is None else min(m, below)
    if size >= limit:
        log.step("compress", "family left out",
                 f"no size from {size} vectors on is below {limit}, "
                 + (f"the {reference.name}'s {m} SV" if limit == m else
                    "the smallest model that already qualifies"), job.clock() - start)
        return []
    with reuse_eigendecompositions():   # one K_SS eigendecomposition for all sizes (same candidates)
        while size < limit:
            c = attempt(size)
            if c is not None and task.within(c):
                hit = size
                break
            if c is not None:
                missed.append((c, task.miss(c)))
            miss, size = size, 2 * size
            growth = _work_growth(X_fit, miss, size, min_points, points_per_vector)
            if size < limit and out_of_time(growth * (c.fit_seconds if c is not None else 0.0)):
                stopped = True
                break
            if size < limit and c is not None and doubling_out_of_reach(
                    [m.n_support for m, _ in missed], [g for _, g in missed], limit, task.chance_miss(c)):
                out_of_reach = True
                break
        if hit is not None and miss is not None:
            middle = int(round(np.sqrt(miss * hit)))
            if miss < middle < hit and not out_of_time(out[-1].fit_seconds):
                attempt(middle)
        probe = _half_limit_probe(out_of_reach, miss, limit, out, X_fit, min_points, points_per_vector, out_of_time)
        probed = None if probe is None else attempt(probe)
    out.sort(key=lambda c: c.n_support)
    reached = [c for c in out if task.within(c)]
    log.step("compress", (f"smallest compressed model reaching the target: {min(c.n_support for c in reached)} SV"
                          if reached else "no compressed model reached the target"),
             f"sizes tried {', '.join(str(c.n_support) for c in out)} (doubling, then one refinement) "
             f"for {reference.name} ({m} SV), fitted to its outputs on training points "
             f"(at least {min_points or X_fit.shape[0]}, {points_per_vector} per vector, {POINTS_PER_PARAMETER} per parameter)"
             + (f"; {n_unconverged} optimisation(s) stopped at max_iter" if n_unconverged else "")
             + (f"; stopped before size {size}: the next size would pass the time limit of {time_limit:g} s"
                if stopped else "")
             + (f"; stopped before size {size}: the smallest miss of the target, "
                f"{task.describe_miss(min(missed, key=lambda pair: pair[1])[0])}, shrank too slowly over the "
                f"last two doublings to close below {limit} vectors" if out_of_reach else "")
             + (f"; then one size at half of {limit} vectors, {probe}, where a compressed model nears its "
                f"reference: {'it reached the target' if probed is not None and task.within(probed) else 'missed'}"
                if probe is not None else "")
             + (f"; no size from {below} on: a model of {below} SV already qualifies"
                if below is not None and below < m and not stopped and not out_of_reach and hit is None else ""),
             job.clock() - start)
    return out


def _half_limit_probe(out_of_reach, last, limit, out, X_fit, min_points, points_per_vector, out_of_time):
    """The one size tried after :func:`doubling_out_of_reach` stopped the doubling at ``last`` vectors:
    half the ``limit`` (a model of half the reference's vectors halves its prediction cost), where its
    estimated seconds (``last``'s, scaled by the vectors and their fitting points) fit the time left;
    None when there is none to try. The misses extrapolate linearly in log-size, while a compressed
    model's curve flattens and then closes fast near the reference's size: page-blocks0 (253 vectors),
    5 to 40 vectors missed by 1.50, 1.25, 0.89 and 0.98 points and the doubling stopped, while 120 and
    160 vectors had bounds of 0.53 and 0.44 points (0.5 allowed); with no stop at all the promise
    benchmark returned compressed models of 160 (page-blocks0 seed 4, of 330) and 960 vectors (splice
    seed 2, of 2,230), and splice's jobs took 2 to 6 times as long."""
    probe = limit // 2
    if not out_of_reach or last is None or not out or probe <= last:
        return None
    growth = _work_growth(X_fit, last, probe, min_points, points_per_vector)
    return None if out_of_time(growth * out[-1].fit_seconds) else probe


def _work_growth(X, n_from, n_to, min_points, points_per_vector) -> float:
    """How many times the work of a compression to ``n_from`` vectors one to ``n_to`` vectors takes: an
    L-BFGS iteration costs N r (d + 1), so the vectors' ratio times that of their fitting points."""
    return n_to / n_from * _n_fitting_points(X, n_to, min_points, points_per_vector) / \
        _n_fitting_points(X, n_from, min_points, points_per_vector)


def _n_fitting_points(X, n_sv, min_points, points_per_vector) -> int:
    """How many rows a compression to ``n_sv`` vectors is fitted on: all of ``X`` (``min_points``
    None), else at least ``min_points``, ``points_per_vector`` per vector and
    ``POINTS_PER_PARAMETER`` per parameter (n_sv (d + 1)); never more than X has."""
    if min_points is None:
        return X.shape[0]
    return min(X.shape[0], max(min_points, points_per_vector * int(n_sv),
                               POINTS_PER_PARAMETER * int(n_sv) * (X.shape[1] + 1)))


def _fitting_points(X, y, n_sv, min_points, points_per_vector, random_state):
    """A stratified subsample of :func:`_n_fitting_points` rows of ``X`` for ``n_sv`` vectors."""
    return _subsample(X, y, _n_fitting_points(X, n_sv, min_points, points_per_vector), random_state)
