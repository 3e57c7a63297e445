"""The main job's stages after its data and (C, gamma) choice, written once for every task
(classification, regression, novelty detection), by the task's rules (:mod:`leansvm.job.task_rules`):

1. the task's candidates (``train_candidates``): the exact model first (on the budget route on a
   subsample), then the cheap families the task trains, each validated and judged against it;
2. the reference: the exact model, or where it had only a subsample of the fit rows the candidate
   surely better than it (:func:`~leansvm.job.choice.stronger_reference`);
3. the choice (:func:`choose_fewest`): the fewest vectors among the reference and every candidate
   the task's paired estimate puts within the allowed loss on the validation part;
4. the confirming folds (:func:`~leansvm.job.choice.confirm_on_folds`: both models trained again
   without each other fold) where the exact model had every fit row, and, where they refuted every
   model the validation part accepted, the task's ``sizes_up`` (classification: compression one
   doubling up);
5. the refit of the chosen kind and size on every row (:func:`~leansvm.job.refit.refit_on_all_rows`).

A Ctrl-C during these stages, once a model with fewer vectors than the exact one was accepted, ends
them with that model as validated (:class:`Stages` ``interrupted``); before, it stops the job.
What the entry points do before (data, tuning) and after (test figures, prediction cost, the
result) is the task's own: :mod:`leansvm.job.classification`, :mod:`leansvm.job.regression`,
:mod:`leansvm.job.novelty`.
"""

from __future__ import annotations

from dataclasses import dataclass

from leansvm.job.choice import confirm_on_folds, stronger_reference
from leansvm.job.helpers import hold_on_interrupt, keep_on_failure
from leansvm.job.records import Candidate
from leansvm.job.refit import refit_on_all_rows


@dataclass
class Stages:
    """What :func:`train_and_choose` leaves: the exact model, the reference the candidates were judged
    against (the exact model, or a better one where it had a subsample), every candidate, the chosen
    one, its refit on every row (None: not refit) and the Ctrl-C that ended the stages with the chosen
    model as validated (None: none)."""

    exact: Candidate
    reference: Candidate
    candidates: list
    chosen: Candidate
    refit: Candidate | None
    interrupted: BaseException | None


def choose_fewest(task, candidates, reference: Candidate) -> Candidate:
    """The rule of the choice: every candidate judged against ``reference`` (``task.estimate``); the
    fewest vectors among ``reference`` and the candidates ``task.within`` the allowed loss, ties to the
    smaller ``task.margin`` (the reference's counts as 0)."""
    task.estimate(candidates, reference)
    eligible = [reference] + [c for c in candidates if c is not reference and task.within(c)]
    return min(eligible, key=lambda c: (c.n_support, 0.0 if c is reference else task.margin(c, reference)))


def held_model(task, candidates, chosen=None) -> Candidate | None:
    """The model a Ctrl-C leaves the job with: ``chosen`` once the choice was made, else the candidate
    with the fewest vectors already within the allowed loss; None where it has no fewer vectors than
    the exact model, or before the exact model (then the interrupt stops the job)."""
    exact = next((c for c in candidates if c.kind == "exact"), None)
    if exact is None:
        return None
    if chosen is None:
        chosen = min((c for c in candidates if c is not exact and task.within(c)),
                     key=lambda c: c.n_support, default=exact)
    return chosen if chosen.n_support < exact.n_support else None


def confirm_then_refit(job, chosen, candidates, exact, make_exact, refit, confirm, sizes_up=None):
    """(chosen, refit): with ``confirm``, :func:`~leansvm.job.choice.confirm_on_folds` against ``exact``
    (``make_exact()``: the exact model a fold trains) and, where the folds refuted the validation part's
    choice, ``sizes_up(job, candidates, exact, make_exact, time_limit, fold_references)``; then, with
    ``refit``, :func:`~leansvm.job.refit.refit_on_all_rows` of the confirmed model (else None; the refit
    joins ``candidates``). A stage that fails keeps what the job holds (``keep_on_failure``)."""
    deadline, log = job.deadline, job.log
    confirmed = chosen
    if confirm:
        fold_references = {}
        confirmed = keep_on_failure("confirm", chosen, log, lambda: confirm_on_folds(
            job, candidates, exact, make_exact, deadline.allowance("confirm"), fold_references) or chosen)
        if sizes_up is not None and chosen is not exact and confirmed is exact:
            confirmed = keep_on_failure("confirm", confirmed, log, lambda: sizes_up(
                job, candidates, exact, make_exact, deadline.allowance("confirm"), fold_references))
    refitted = keep_on_failure("refit", None, log, lambda: refit_on_all_rows(
        job, confirmed, exact, deadline.allowance("refit"))) if refit else None
    if refitted is not None:
        candidates.append(refitted)
    return confirmed, refitted


def train_and_choose(job, make_exact, train_candidates, candidates=None, refit=True, confirm=True,
                     sizes_up=None) -> Stages:
    """The stages of the module docstring for ``job``'s task. ``train_candidates(candidates)`` appends the
    exact model and then the task's cheap models to ``candidates`` (a list the caller may hold, so that
    it sees them on an interrupt) as each family ends, validated and judged against the exact model, and
    returns the exact one; ``make_exact()``: the exact model a confirming fold trains; ``refit``,
    ``confirm``: whether those stages run (the folds only where the exact model had every fit row);
    ``sizes_up``: what the task tries where the folds refuted the choice (None: nothing).
    Returns the :class:`Stages` record."""
    task, log = job.task, job.log
    candidates = [] if candidates is None else candidates
    exact = reference = chosen = None
    try:
        exact = train_candidates(candidates)
        every_row = exact.n_rows is None or exact.n_rows >= job.n_fit
        reference = exact if every_row else stronger_reference(task, candidates, exact, job.n_fit, log)
        chosen = choose_fewest(task, candidates, reference)
        n_within = sum(1 for c in candidates if c is not reference and task.within(c))
        log.step("choose", f"{chosen.name}: {chosen.n_support} vectors, {task.describe(chosen)}",
                 f"{task.choice_reason(reference)}; {n_within} of {len(candidates) - 1} other models qualify")
        confirmed, refitted = confirm_then_refit(job, chosen, candidates, exact, make_exact, refit,
                                                 confirm and every_row, sizes_up)
        return Stages(exact, reference, candidates, confirmed, refitted, None)
    except KeyboardInterrupt as exc:
        held = held_model(task, candidates, chosen)
        hold_on_interrupt(exc, job.started, log, held)
        if held is None:
            raise
        return Stages(exact, reference or exact, candidates, held, None, exc)
