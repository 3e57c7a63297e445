"""``--budget-seconds`` as a bound on the whole main job: each stage's share of the time.

The stages run in order; each gets what is left of the budget minus the shares reserved for the
stages after it, so that time an early stage did not use passes on, and one that overran squeezes
the later ones rather than the total. Each stage scales down what it does to fit (the search's
halving rounds, the exact model's rows, the budget models and compressed sizes tried, the folds
that confirm a choice, the refit) and its log line says what it left out. Without a budget the
job sets one itself once the exact model is fitted (:meth:`Deadline.bound_after_exact`).
"""

from __future__ import annotations

import time

#: each stage's share of the budget, in the order the stages run
SHARES = {"search": 0.10, "exact": 0.25, "budget": 0.10, "reduced": 0.10, "compress": 0.15, "confirm": 0.10,
          "refit": 0.15, "measure": 0.05}


#: the shares where the exact fit on every training row is estimated at over ``TEACHER_FREE_FROM`` of
#: the budget (:meth:`Deadline.teacher_free`): the exact model, now the reference for the promise on a
#: subsample, gets less, and the reduced family, trained on every row without a teacher, most. On
#: synth-1M with 600 s the exact SVC on 442,142 of 800,000 rows took 207 s, and ReducedSVC then had
#: 17 s (1,219 vectors, validation 0.9284) and 172 s left after compression (2,438 vectors, 0.9425
#: against a target of 0.9459); alone, 2,500 vectors reach 0.9435 on test in 250 s and 0.9461 in 560 s.
#: No confirming folds on this route, and a refit on every row does not fit: their shares are the
#: family's (with 0.05 and 0.10 of them held back for compression, 2,500 vectors had 232 s and missed the
#: target by 0.03 points, 0.9439 against 0.9442, and the job ended after 516 s). With 0.15 for the exact
#: model and 0.55 for the family it had 284 s and qualified (validation 0.9452 against 0.9445; test
#: 0.9424); with 0.10 and 0.60 and the refit's share passed to it, 340 s (validation 0.9458 against the
#: exact model's 0.9482 on 306,495 rows, test 0.9428), the job 608 s. With the exact stage held to its
#: share (the search's unused time goes on to the family) and the family's one size at 591 vectors
#: (:func:`~leansvm.job.reduced.teacher_free_size`): 408 s, validation 0.9492 against the exact model's
#: 0.9441 on 169,488 rows, test 0.9474 against 0.9496 for the exact SVC on 707,421 rows; the job 548 s
TEACHER_FREE_SHARES = {"search": 0.10, "exact": 0.10, "budget": 0.05, "reduced": 0.60, "compress": 0.05,
                       "confirm": 0.00, "refit": 0.05, "measure": 0.05}
#: ... from this share of the budget for the exact fit on every training row: synth-1M at 600 s (515-562 s
#: estimated) and checker-1M (19,774 s) take it; synth-200k at 120 s (42 s) keeps the usual shares,
#: under which it already returns ReducedSVC (706 vectors, 0.09 points below the exact model)
TEACHER_FREE_FROM = 0.5

#: stages that take at most their own share, even when earlier stages left time: what the exact
#: stage did not use goes on to compression instead. On synth-200k with 600 s the budget models
#: took 146 s of it (BSGD at 7,937 vectors tests 0.80 points below the exact model there), while
#: compression stopped before 1,580 vectors for lack of time (0.24 points below it on test).
CAPPED = {"budget"}

#: :func:`lend_to_the_search`: the exact stage keeps this many times the exact fit's estimate (the
#: estimate is at C = 1 and gamma = 'scale', before the search chose its cell, which costs more where
#: C or gamma is larger: on pixels-60k the chosen cell's fit was estimated past twice that, and with
#: twice kept the job fell to a subsample and budget models) ...
EXACT_MARGIN = 3.0
#: ... and the search may grow to this share of the budget at most: its own and the exact stage's
#: whole share, all the exact stage can spare. On pixels-60k (48,000 x 784, 10 classes) with 600 s the
#: exact fit took 35 s of its 150-s share, while the search's 60 s (12 of them spent choosing the
#: scaling) stopped its halving at 1,333 rows, 133 per class; on letter (26 classes, the exact fit
#: 1 s) a search share of 25 % stopped at 444 rows, 17 per class, after the scaling choice's 59 s
SEARCH_SHARE_MAX = 0.35

#: Without a budget, the stages after the exact fit (budget models, compression, confirming folds)
#: take at most this many times the exact fit ...
NO_BUDGET_MULTIPLE = 20
#: ... or this many times the job's time until then (the search and the exact fit), whichever is
#: more: on small sets the search takes longer than the exact fit (letter, 12,800 rows: 82 s against
#: 1.1 s on one core), and one compression at the first size already takes 49 s there ...
NO_BUDGET_BEFORE_MULTIPLE = 3
#: ... and at least this many seconds: with 60, optdigits (10 classes) lost the compressed models that
#: 280 s found on two of four split seeds (400 and 566 vectors, exact model returned instead); no run
#: of the quick promise sets took more than 280 s unbounded, so this floor leaves them as they were
NO_BUDGET_FLOOR = 300.0


class Deadline:
    """The job's start time and budget (``seconds`` None: no budget, every allowance None), on
    ``clock`` (seconds; ``time.perf_counter``, the job log's too: a test hands in one it moves)."""

    def __init__(self, seconds=None, clock=time.perf_counter):
        if seconds is not None and not seconds > 0:
            raise ValueError(f"budget_seconds must be positive, got {seconds!r}")
        self.seconds = seconds
        self.clock = clock
        self.start = clock()
        self.shares = dict(SHARES)
        self.without_teacher = False      # teacher_free() was called
        self.skipped = set()
        self.heir = "compress"            # the stage a skipped stage's share goes to
        self.capped = set(CAPPED)
        self.unbounded = frozenset()   # stages outside the bound that bound_after_exact sets

    def skip(self, stage) -> None:
        """``stage`` will not run: its share goes to ``heir``, compression (the budget route has no
        confirming folds, so compression gets their tenth of the budget), or the reduced family under
        the teacher-free split; the stages before the heir still hold it back."""
        self.skipped.add(stage)

    def teacher_free(self) -> None:
        """The exact fit on every row does not fit the budget by far: :data:`TEACHER_FREE_SHARES` from now;
        the shares of stages that will not run, and the time the search left, go to the reduced family,
        the route to a small model, not to the exact model on a larger subsample."""
        self.shares = dict(TEACHER_FREE_SHARES)
        self.without_teacher = True
        self.heir = "reduced"
        self.capped.add("exact")

    def lend(self, lender, borrower, seconds) -> float:
        """Move up to ``seconds`` of ``lender``'s share to ``borrower`` (an earlier stage: what it does
        not use passes on as any unused time does); returns the seconds moved."""
        moved = min(max(seconds, 0.0), self.shares[lender] * self.seconds)
        self.shares[lender] -= moved / self.seconds
        self.shares[borrower] += moved / self.seconds
        return moved

    def bound_after_exact(self, exact_seconds: float) -> float | None:
        """Without a budget: the budget models, compression and confirming folds get
        ``NO_BUDGET_MULTIPLE`` times the exact fit's ``exact_seconds`` or ``NO_BUDGET_BEFORE_MULTIPLE``
        times the job's time so far, whichever is more (at least ``NO_BUDGET_FLOOR``), shared among them
        as a budget's shares are, as if the stages before had used exactly theirs. The refit of the
        chosen model and the measurements stay unbounded: the refit costs about one exact fit on every
        row and one compression at a size that already fitted the bound. Returns the bound in seconds
        (None when a budget was given).

        Without it the size search had no limit: letter (26 classes, one-vs-one) compressed at 520,
        1,040 and 2,080 vectors, each size two to three times the last one's time, and one run did
        not end in 58 minutes on one core where the exact fit takes 1.1 s."""
        if self.seconds is not None:
            return None
        rest = max(NO_BUDGET_MULTIPLE * exact_seconds, NO_BUDGET_BEFORE_MULTIPLE * self.elapsed(),
                   NO_BUDGET_FLOOR)
        stages = list(self.shares)
        self.seconds = rest / sum(self.shares[s] for s in stages[stages.index("exact") + 1:])
        self.start = self.clock() - (self.seconds - rest)
        self.unbounded = frozenset({"refit", "measure"})
        for stage in self.unbounded:     # their shares go to compression
            self.skip(stage)
        return rest

    def elapsed(self) -> float:
        return self.clock() - self.start

    def remaining(self) -> float | None:
        return None if self.seconds is None else max(0.0, self.seconds - self.elapsed())

    def allowance(self, stage) -> float | None:
        """Seconds ``stage`` may take: what is left minus the shares of the stages after it (at
        least a tenth of its own share, so that a stage never gets nothing at all; at most its own
        share for the ``capped`` stages); None without a budget, and for the refit and the measurements
        under the bound a job sets itself (:meth:`bound_after_exact`)."""
        if self.seconds is None or stage in self.unbounded:
            return None
        shares = self.shares
        stages = list(shares)
        after = stages[stages.index(stage) + 1:]
        # a skipped stage's share goes to the heir, not to whichever stage asks first (synth-1M: the
        # confirming folds' minute went to the exact fit on a larger subsample, 294 s)
        held = sum(shares[s] for s in after if s not in self.skipped or self.heir in after)
        later = held * self.seconds
        allowed = max(self.remaining() - later, 0.1 * shares[stage] * self.seconds)
        return min(allowed, shares[stage] * self.seconds) if stage in self.capped else allowed


def say_bound_after_exact(deadline: Deadline, exact_seconds: float, log) -> None:
    """:meth:`Deadline.bound_after_exact`, and a log step ('bound') with the bound when one was set."""
    rest = deadline.bound_after_exact(exact_seconds)
    if rest is not None:
        log.step("bound", f"{rest:.0f} s for the budget models, compression and confirming folds",
                 f"no time budget: {NO_BUDGET_MULTIPLE} times the exact fit's {exact_seconds:.1f} s or "
                 f"{NO_BUDGET_BEFORE_MULTIPLE} times the job's time until then, whichever is more (at least "
                 f"{NO_BUDGET_FLOOR:g} s); the refit on every row and the measurements follow")


def exact_share_without_margin(deadline: Deadline) -> float:
    """The longest exact fit whose stage would still have a share to lend (:func:`lend_to_the_search`)."""
    return deadline.shares["exact"] * deadline.seconds / EXACT_MARGIN


def lend_to_the_search(deadline: Deadline, exact_estimate: float, log) -> float:
    """The search's share follows what the exact fit will cost: the part of the exact stage's share
    beyond :data:`EXACT_MARGIN` times ``exact_estimate`` (seconds, on every fit row) goes to the search,
    up to :data:`SEARCH_SHARE_MAX` of the budget. A cheap exact fit leaves time for a search on
    more rows; an exact fit near its share leaves the shares as they were. Returns the seconds lent."""
    if deadline.seconds is None:
        return 0.0
    spare = deadline.shares["exact"] * deadline.seconds - EXACT_MARGIN * exact_estimate
    room = (SEARCH_SHARE_MAX - deadline.shares["search"]) * deadline.seconds
    lent = deadline.lend("exact", "search", min(spare, room))
    if lent > 0:
        search, exact = deadline.shares["search"] * deadline.seconds, deadline.shares["exact"] * deadline.seconds
        log.say(f"  the search's share grows by {lent:.0f} s to {search:.0f} s: the exact fit is estimated at "
                f"{exact_estimate:.0f} s (at C = 1, gamma = 'scale') of its {exact + lent:.0f}-s share")
    return lent


def release_unaffordable_shares(deadline: Deadline, exact_seconds: float, refit_seconds: float | None, refit_what,
                                log) -> None:
    """Shares held back for stages that could not use them go to the deadline's heir (compression, or the
    reduced family under the teacher-free split): the confirming folds' when one exact fit (``exact_seconds``) is over their share, the refit's when its estimate
    ``refit_seconds`` (of ``refit_what``; None: not estimated) is. On synth-200k with 300 s the
    exact fit took 73 s against a confirming share of 30 s, and compression stopped before its
    second size while 75 s stayed held back for those two stages. The stages still run if time is
    left when they come."""
    if deadline.seconds is None:
        return
    released = []
    if "confirm" not in deadline.skipped and exact_seconds > deadline.shares["confirm"] * deadline.seconds:
        deadline.skip("confirm")
        released.append(f"confirming folds (one exact fit took {exact_seconds:.0f} s)")
    if "refit" not in deadline.skipped and refit_seconds is not None and \
            refit_seconds > deadline.shares["refit"] * deadline.seconds:
        deadline.skip("refit")
        released.append(f"refit ({refit_what} is estimated at {refit_seconds:.0f} s)")
    if released:
        heir = "compression" if deadline.heir == "compress" else "the reduced family"
        log.say(f"  shares passed to {heir}, over their own share of {deadline.seconds:g} s: "
                + "; ".join(released))
