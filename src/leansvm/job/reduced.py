"""Stage 6a of the main job: the reduced family, a model of a chosen size trained from the labels or
targets on every training row (:class:`~leansvm.reduced.reduced_svm.ReducedSVC`,
:class:`~leansvm.reduced.reduced_svm.ReducedSVR`; no exact teacher), at doubling sizes from the small
end until one qualifies by the task's rule (:mod:`leansvm.job.task_rules`).

It runs after the budget models and before compression, so a size it qualifies at bounds the
compression sizes still worth trying (a compressed model is only chosen with fewer vectors). Each fit
gets the time left in the stage's share as its ``max_seconds``, so the stage always ends with the
model as far as it got, and no larger size is started when the last one's time, doubled, is over
what is left. A candidate is kind 'budget': the refit on every row and the confirming folds train it
again as they do a BSGD model (no exact solve).
"""

from __future__ import annotations

from leansvm.job.candidates import doubling_out_of_reach
from leansvm.job.helpers import _QuietConvergence, _timed
from leansvm.job.records import Candidate
from leansvm.progress import default_progress

#: the first size is this share of the reference's support vectors ...
FIRST_FRACTION = 0.01
#: ... at least this many vectors (and ``PER_CLASS`` per class beyond two classes) ...
FIRST_MIN = 10
PER_CLASS = 10
#: ... and no size has more than this many (the scale goal: at most 5,000 vectors at 1M rows)
MAX_VECTORS = 5000
#: the teacher-free split trains its one size with ``max_iter`` this high (the time and the held-out
#: rows end the fit)
TEACHER_FREE_MAX_ITER = 100000


def size_limit(n_support: int, below: int | None = None) -> int:
    """The family's sizes stay under this: the reference's ``n_support``, ``below`` (the smallest
    qualifying model's size) and ``MAX_VECTORS`` + 1."""
    return min(n_support, MAX_VECTORS + 1, n_support if below is None else below)


def reduced_sizes(n_support: int, n_classes: int, below: int | None = None) -> list[int]:
    """Doubling sizes from ``FIRST_FRACTION`` of ``n_support`` (at least ``FIRST_MIN``, ``PER_CLASS`` per
    class beyond two, at most a quarter of ``MAX_VECTORS``) while under ``n_support``, ``below`` (the
    smallest qualifying model's size: a larger one could not be chosen) and ``MAX_VECTORS``."""
    limit = size_limit(n_support, below)
    size = min(max(FIRST_MIN, int(round(FIRST_FRACTION * n_support)), PER_CLASS * n_classes if n_classes > 2 else 0),
               MAX_VECTORS // 4)
    sizes = []
    while size < limit:
        sizes.append(size)
        size *= 2
    return sizes


def teacher_free_size(reference: Candidate, n_classes: int, below: int | None = None) -> dict | None:
    """Under the teacher-free split of the budget (:meth:`~leansvm.job.deadline.Deadline.teacher_free`):
    :func:`train_reduced_models`' arguments for one size, the first of :func:`reduced_sizes`, trained for
    the whole share (``max_iter`` out of the way: the held-out rows and the time end it); None where no
    size is below ``below``. Where the rows are too many for the exact fit, a ReducedSVC fit is bound
    by its iterations, not by its size, and fewer vectors run more of them. synth-1M (980,000 rows,
    C = 1, gamma 0.2 to start, 2 cores, 340 s each): 625 vectors ran 4,555 iterations (test 0.9460),
    900 vectors 3,289 (0.9462), 1,250 vectors 2,934 (0.9454) and 2,500 vectors 1,818 (0.9433); 2,500
    vectors needed 560 s for 0.9461."""
    sizes = reduced_sizes(reference.n_support, n_classes, below)
    if not sizes:
        return None
    return dict(sizes=sizes[:1], max_iter=TEACHER_FREE_MAX_ITER,
                why="one size for the whole share: the exact fit on every row is out of the budget's reach")


def train_reduced_models(job, reference: Candidate, C, gamma, time_limit=None, below=None,
                         plan=None) -> list[Candidate]:
    """The task's reduced model (``job.task.reduced_model``: ReducedSVC, ReducedSVR) at the sizes of
    ``plan`` (default :func:`reduced_sizes` of ``reference``, the exact model, doubling from the small
    end), each validated and judged against ``reference`` by the task's rule, until one qualifies, the
    next size (the last one's seconds, doubled) would pass ``time_limit`` seconds, the misses shrink too
    slowly for a size under the reference's to qualify (:func:`out_of_reach`), or the sizes end; the
    first size always starts, stopped at ``time_limit`` as it stands. ``plan``: a dict of ``sizes``,
    ``why`` (the log's words for them) and ``max_iter`` (:func:`teacher_free_size`). Returns the models
    trained; the log says what was tried (and why) and why it stopped, or why the family was left out."""
    task, log, plan = job.task, job.log, plan or {}
    name, why = task.reduced_name, plan.get("why", "doubling from the small end until one qualifies")
    left_out = task.reduced_left_out()
    if left_out:
        log.step("reduced", "family left out", left_out)
        return []
    sizes = reduced_sizes(reference.n_support, task.n_classes, below) if plan.get("sizes") is None else plan["sizes"]
    if not sizes:
        log.step("reduced", "family left out", f"no size from {FIRST_MIN} vectors on is below "
                                               f"{min(reference.n_support, below or reference.n_support)}, "
                                               "the smallest model that already qualifies")
        return []
    start, out, stop = job.clock(), [], None
    limit = size_limit(reference.n_support, below)
    for size in sizes:
        if out_of_reach(task, out, limit):
            stop = f"stopped before {size} vectors: the smallest miss of the target, " \
                   f"{task.describe_miss(min(out, key=task.miss))}, shrank too slowly over the last two " \
                   f"doublings to close below {limit} vectors"
            break
        left = None if time_limit is None else time_limit - (job.clock() - start)
        if left is not None and out and next_size_seconds(task, out) > left:
            stop = f"stopped before {size} vectors: {describe_next_size(task, out)} is over " \
                   f"the {max(left, 0):.0f} s left of {time_limit:.0f} s"
            break
        # out of time already: the fit returns its start (k-means++ centres and their ridge fit)
        estimator = task.reduced_model(size, C, gamma, max_seconds=None if left is None else max(left, 1e-3),
                                       progress=False, random_state=job.random_state,
                                       **({} if plan.get("max_iter") is None else dict(max_iter=plan["max_iter"])))
        with default_progress(False), _QuietConvergence():
            model, seconds = _timed(estimator.fit, job.X_fit, job.y_fit)
        c = _judged(job, Candidate(f"{name} B={size}", "budget", model, model.expansion_.n_support, seconds),
                    reference)
        out.append(c)
        log.say(f"  {name} with {size} vectors ({model.n_iter_} iterations"
                f"{', stopped by the time limit' if model.fit_status_ else ''}): {task.against_target(c)} "
                f"[{seconds:.1f} s]")
        if task.within(c):
            break
    reached = [c for c in out if task.within(c)]
    log.step("reduced", (f"{name} reaches the target at {reached[0].n_support} vectors" if reached
                         else f"no {name} model reached the target"),
             f"trained from the {task.labels_word} on every training row (no teacher), sizes tried "
             f"{', '.join(str(c.n_support) for c in out)} ({why})"
             + (f"; {stop}" if stop else "")
             + (f"; no size from {below} on: a model of {below} SV already qualifies"
                if below is not None and below < size_limit(reference.n_support) else ""),
             job.clock() - start)
    return out


def _judged(job, c: Candidate, reference: Candidate) -> Candidate:
    """``c`` validated on the job's validation part and judged against ``reference`` by the task's rule."""
    job.task.validate(c, job.X_val)
    job.task.estimate([c], reference)
    return c


def out_of_reach(task, tried: list[Candidate], limit: int) -> bool:
    """Whether the family's doubling sizes ``tried`` (none qualified) miss the target by margins that
    shrink too slowly for a size under ``limit`` to reach it (compression's rule,
    :func:`~leansvm.job.candidates.doubling_out_of_reach`; the task says each miss and the miss of a
    model that predicts by chance). splice (2,041 rows, 287 features, 1,882 exact vectors): 30, 60,
    120 and 240 vectors missed by 1.87, 1.18, 1.49 and 2.66 points; 480 and 960 vectors, which also
    missed, took 15 of the job's 38 s."""
    if len(tried) < 3:
        return False
    return doubling_out_of_reach([c.n_support for c in tried], [task.miss(c) for c in tried], limit,
                                 task.chance_miss(tried[-1]))


#: a family's last miss counts as within reach of the target (:func:`within_reach`) up to this share of
#: the miss of a model that predicts by chance (classification: the majority class; regression: the mean)
REACH_OF_CHANCE = 0.02


def within_reach(task, tried: list[Candidate]) -> bool:
    """Whether the family's sizes ``tried`` (the last the largest) came within reach of the target
    without reaching it: the last size's miss is at most what its doubling gained (one more doubling
    at that gain reaches it), or at most ``REACH_OF_CHANCE`` of the miss of chance. Then the family's
    next size comes before anything else (:func:`next_size_seconds`), since a fit stops at its time
    limit with the model as far as it got: synth-200k at 300 s, ReducedSVC at 379 vectors missed by
    0.07 points, and the doubling was refused because twice its 31 s was over the 28 s left; the
    same command's other runs returned ReducedSVC at 712 and 758 vectors, and one the exact SVC with
    39,526 vectors."""
    if not tried or task.within(tried[-1]):
        return False
    miss = task.miss(tried[-1])
    if len(tried) >= 2 and miss <= task.miss(tried[-2]) - miss:
        return True
    return miss <= REACH_OF_CHANCE * task.chance_miss(tried[-1])


def next_size_seconds(task, tried: list[Candidate]) -> float:
    """The least time for which the family's next doubling is started: twice the last size's fit time
    (twice the work per iteration), or the last size's time alone when the family came
    :func:`within_reach` (the next size gets at least half its iterations and stops at its limit;
    a few percent of timing noise at the threshold turned a cheap model into the exact one)."""
    return (1 if within_reach(task, tried) else 2) * tried[-1].fit_seconds


def describe_next_size(task, tried: list[Candidate]) -> str:
    if within_reach(task, tried):
        return f"the last size's {tried[-1].fit_seconds:.0f} s (it came within reach of the target)"
    return f"twice the last size's {tried[-1].fit_seconds:.0f} s"


def continue_in_the_time_left(job, last: Candidate | None, reference: Candidate, time_left) -> list[Candidate]:
    """[``last``, the family's last model, trained on from where it stopped for ``time_left`` seconds]
    where its time limit stopped it (its held-out loss still falling) and at least a tenth of its fit
    time is left; every iteration on every row (its last phase's rows), the held-out rows as before
    (the same draw); judged against ``reference``. The teacher-free split's one size does not double:
    synth-1M, 600 s, 2,500 vectors stopped by the time at 0.03 points under the target, and the job
    ended 84 s early. The copy's parameters are set back to one fit of the whole time, which a refit
    repeats."""
    import copy

    if last is None or not getattr(last.model, "fit_status_", 0) or time_left is None \
            or time_left < max(0.1 * last.fit_seconds, 1.0):
        return []
    model = copy.deepcopy(last.model)
    first = model.get_params()
    model.set_params(warm_start=True, subsample=None, max_seconds=time_left)
    with default_progress(False), _QuietConvergence():
        model, seconds = _timed(model.fit, job.X_fit, job.y_fit)
    model.set_params(warm_start=False, subsample=first["subsample"],
                     max_seconds=(first["max_seconds"] or last.fit_seconds) + seconds)
    c = _judged(job, Candidate(f"{last.name}, trained on", "budget", model, model.expansion_.n_support,
                               last.fit_seconds + seconds), reference)
    job.log.step("reduced", f"{type(model).__name__} with {c.n_support} vectors trained on for {seconds:.0f} s: "
                            f"{job.task.against_target(c)}",
                 f"the time the budget had left, where nothing qualified and its last fit stopped at its time "
                 f"limit ({model.n_iter_} more iterations on every row)", seconds)
    return [c]


def reduced_family(candidates: list[Candidate]) -> list[Candidate]:
    """The reduced models (ReducedSVC, ReducedSVR) among ``candidates``, in the order they were trained."""
    from leansvm import ReducedSVC, ReducedSVR
    return [c for c in candidates if isinstance(c.model, (ReducedSVC, ReducedSVR))]


def next_size_in_the_time_left(task, tried: list[Candidate], reference: Candidate, time_left) -> list[int]:
    """[the next doubling size] of the reduced family (``tried``: its models, the last the largest) after
    its stage and compression both stopped short of the target for lack of time, where ``time_left``
    (seconds) remains and is at least the last size's fit time (so the next size, twice the work per
    iteration, gets at least half its iterations): a ReducedSVC fit stops at its time limit with the
    model as far as it got, so the time is spent on the family's next size rather than left unused
    (synth-200k at 120 s: 329 vectors missed the target by 0.03 points, the stages' own shares were
    spent, and the job ended after 76 s). [] where there is nothing to try, or where the family's misses
    put every size under the reference's out of reach (:func:`out_of_reach`, by ``task``'s rule)."""
    if not tried or time_left is None or time_left <= 0 or time_left < tried[-1].fit_seconds:
        return []
    limit = size_limit(reference.n_support)
    if out_of_reach(task, tried, limit):
        return []
    size = 2 * tried[-1].n_support
    return [size] if size < limit else []
