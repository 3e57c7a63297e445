"""``--budget-seconds`` as a bound on the whole main job: each stage's share of the time.

The stages run in order; each gets what is left of the budget minus the shares reserved for the
stages after it, so that time an early stage did not use passes on, and one that overran squeezes
the later ones rather than the total. Each stage scales down what it does to fit (the search's
halving rounds, the exact model's rows, the budget models and compressed sizes tried, the folds
that confirm a choice, the refit) and its log line says what it left out.
"""

from __future__ import annotations

import time

#: each stage's share of the budget, in the order the stages run
SHARES = {"search": 0.10, "exact": 0.25, "budget": 0.10, "compress": 0.25, "confirm": 0.10, "refit": 0.15,
          "measure": 0.05}


#: stages that take at most their own share, even when earlier stages left time: what the exact
#: stage did not use goes on to compression instead. On synth-200k with 600 s the budget models
#: took 146 s of it (BSGD at 7,937 vectors tests 0.80 points below the exact model there), while
#: compression stopped before 1,580 vectors for lack of time (0.24 points below it on test).
CAPPED = {"budget"}


class Deadline:
    """The job's start time and budget (``seconds`` None: no budget, every allowance None)."""

    def __init__(self, seconds=None):
        if seconds is not None and not seconds > 0:
            raise ValueError(f"budget_seconds must be positive, got {seconds!r}")
        self.seconds = seconds
        self.start = time.perf_counter()
        self.skipped = set()

    def skip(self, stage) -> None:
        """``stage`` will not run: its share goes to compression (the budget route has no
        confirming folds, so compression gets their tenth of the budget); the stages before
        compression still hold it back."""
        self.skipped.add(stage)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def remaining(self) -> float | None:
        return None if self.seconds is None else max(0.0, self.seconds - self.elapsed())

    def allowance(self, stage) -> float | None:
        """Seconds ``stage`` may take: what is left minus the shares of the stages after it (at
        least a tenth of its own share, so that a stage never gets nothing at all; at most its own
        share for the CAPPED stages); None without a budget."""
        if self.seconds is None:
            return None
        stages = list(SHARES)
        after = stages[stages.index(stage) + 1:]
        # a skipped stage's share goes to compression, not to whichever stage asks first (synth-1M:
        # the confirming folds' minute went to the exact fit on a larger subsample, 294 s)
        held = sum(SHARES[s] for s in after if s not in self.skipped or "compress" in after)
        later = held * self.seconds
        allowed = max(self.remaining() - later, 0.1 * SHARES[stage] * self.seconds)
        return min(allowed, SHARES[stage] * self.seconds) if stage in CAPPED else allowed
