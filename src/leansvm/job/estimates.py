"""How much accuracy a candidate gives up against the exact model, with a one-sided confidence bound.

Every candidate is compared with the *exact* model (never with the best candidate: a candidate that
beats the exact model on held-out rows does so by chance, and taking it as the reference moves the
bar). On the same n rows, the paired difference of the two models' correctness,

    d_i = 1[exact right on row i] - 1[candidate right on row i],      drop = mean(d),

has standard error SE = sd(d) / sqrt(n) (the paired view of McNemar's test: rows where both are
right or both wrong add nothing but n; the variance counts one discordant row each way more, so
that two models that agreed on every held-out row still get a bound above their mean). A candidate is accepted when the one-sided upper bound

    upper = drop + z_confidence * SE  <=  max_accuracy_drop,

z_confidence the standard normal quantile (1.645 at the default 95 %). The bound is over all the
rows the estimate pools: the validation part and, where the main job could afford them, the
other cross-validation folds with both models trained again without them
(:func:`leansvm.job.choice.confirm_on_folds`), so that a candidate that was lucky on one small
hold-out is not taken on that luck alone (the winner's curse of choosing among many).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from leansvm.job.helpers import _same_labels

#: the default confidence of the one-sided bound on a candidate's accuracy drop
DEFAULT_CONFIDENCE = 0.95


def check_confidence(confidence) -> float:
    """``confidence`` as a float in (0, 1), or a ValueError naming it."""
    try:
        value = float(confidence)
    except (TypeError, ValueError):
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}") from None
    if not 0.0 < value < 1.0:
        raise ValueError(f"confidence must be in (0, 1) (0.95: a one-sided 95 % bound), got {confidence!r}")
    return value


def z_value(confidence) -> float:
    """The one-sided standard normal quantile of ``confidence`` (0.95 -> 1.645)."""
    return float(norm.ppf(check_confidence(confidence)))


@dataclass
class DropEstimate:
    """A candidate's accuracy drop against the exact model, from paired differences on ``n`` rows.

    ``mean``: exact accuracy minus candidate accuracy (a fraction; negative when the candidate
    was more accurate); ``se``: the standard error of that paired difference; ``upper``: the
    one-sided ``confidence`` bound mean + z se; ``folds``: how many held-out parts the rows
    came from (1: the validation part alone)."""

    mean: float
    se: float
    n: int
    confidence: float
    folds: int = 1

    @property
    def upper(self) -> float:
        return self.mean + z_value(self.confidence) * self.se

    def within(self, max_accuracy_drop) -> bool:
        return bool(self.upper <= max_accuracy_drop + 1e-12)

    def describe(self, rows=True) -> str:
        """'0.31 +- 0.22 points (95 % bound 0.67) on 865 rows' (points: percentage points; ``rows``
        False: without where it was measured)."""
        where = f" on {self.n} rows" + (f" of {self.folds} folds" if self.folds > 1 else "")
        return (f"{100 * self.mean:.2f} +- {100 * self.se:.2f} points "
                f"({100 * self.confidence:g} % bound {100 * self.upper:.2f})" + (where if rows else ""))


def correct(predictions, y) -> np.ndarray:
    """Whether each prediction equals its label (labels compared as strings when one side is)."""
    return np.asarray(_same_labels(predictions, y), dtype=bool)


def paired_drop(reference_correct, candidate_correct, confidence=DEFAULT_CONFIDENCE, folds=1) -> DropEstimate:
    """:class:`DropEstimate` of the candidate against the reference from their correctness on the
    same rows (boolean arrays of equal length)."""
    ref = np.asarray(reference_correct, dtype=float)
    cand = np.asarray(candidate_correct, dtype=float)
    if ref.shape != cand.shape or ref.ndim != 1 or ref.size == 0:
        raise ValueError(f"paired correctness needs two equal, non-empty vectors; got {ref.shape} and {cand.shape}")
    d = ref - cand
    n, mean = d.size, float(d.mean())
    # the variance with one discordant row each way added (mean unchanged): rows where the two models
    # agree on every row would otherwise give SE 0, a certainty that 400 rows cannot give
    variance = max((float(np.sum(d * d)) + 2.0) / (n + 2) - mean * mean, 0.0)
    return DropEstimate(mean, float(np.sqrt(variance / n)), int(n), check_confidence(confidence), folds)


def required_accuracy(reference_accuracy, estimate: DropEstimate, max_accuracy_drop) -> float:
    """The accuracy the candidate had to reach on the same rows: reference - drop + z se
    (shown in the log and the report beside the candidate's accuracy)."""
    return reference_accuracy - max_accuracy_drop + (estimate.upper - estimate.mean)


def against_target(candidate) -> str:
    """``candidate``'s validation accuracy beside the accuracy it had to reach, for the log. Where that is
    above 1 no model of this size's spread can qualify on these rows (its drop's bound is wider than the
    allowed drop plus the reference's errors), and the text says so instead of naming a target no
    accuracy can meet."""
    accuracy, needed = candidate.validation_accuracy, candidate.required_accuracy
    if needed > 1:
        return (f"validation accuracy {accuracy:.4f}; cannot qualify: its drop's bound needs {needed:.4f}, "
                f"above 1, on these {candidate.drop.n} rows")
    return f"validation accuracy {accuracy:.4f} (target {needed:.4f})"


def set_drop(candidate, reference_correct, y_val, max_accuracy_drop, confidence=DEFAULT_CONFIDENCE):
    """Set ``candidate.drop`` (its :class:`DropEstimate` from its validation predictions, paired with
    the reference's correctness on the same rows) and ``candidate.required_accuracy``."""
    candidate.drop = paired_drop(reference_correct, correct(candidate.validation_predictions, y_val), confidence)
    candidate.required_accuracy = required_accuracy(float(np.mean(reference_correct)), candidate.drop,
                                                    max_accuracy_drop)


#: the share of rows at one end of each tail that gives the RMSE rule no evidence (:func:`rmse_bound`)
RMSE_TAIL = 0.001


def rmse_bound(reference_errors, candidate_errors, confidence=DEFAULT_CONFIDENCE, folds=1) -> float:
    """A one-sided ``confidence`` bound on the candidate's RMSE, from paired squared errors on the
    same rows, as a multiple of the reference's RMSE there: with d_i = e_cand,i^2 - e_ref,i^2, the
    candidate's MSE is at most MSE_ref + mean(d) + z sd(d) / sqrt(n); the bound returned is
    RMSE_ref sqrt(1 + (mean(d) + z sd(d) / sqrt(n)) / MSE_ref), so that it is within (1 + increase)
    RMSE_ref exactly when the candidate's bound is within that increase.

    Squared errors are heavy-tailed, and a few rows can carry the whole difference. On diamonds (log
    prices) two of 8,631 validation rows where the exact SVR missed by 3 gave a 251-vector BSGD model
    an RMSE 7 % below it, with a bound 2.4 % below over five folds; on the test rows, where no such
    row fell, it was 3.3 % above. So the rule takes no evidence from the rarest rows that favour the
    candidate: d_i is raised to its ``RMSE_TAIL`` quantile (no credit for the largest gains), and
    MSE_ref is taken over the reference's squared errors lowered to their 1 - ``RMSE_TAIL`` quantile
    (no looser limit from its largest misses). Both only make the bound larger: rows where the
    candidate is much worse count in full.

    ``folds`` > 1: the bound that many folds as large would give if they kept these rows' mean and
    spread (n x folds rows), which decides whether pooling folds is worth trying."""
    ref = np.asarray(reference_errors, dtype=float) ** 2
    d = np.asarray(candidate_errors, dtype=float) ** 2 - ref
    if d.size < 2:
        return float("inf")
    d = np.maximum(d, np.quantile(d, RMSE_TAIL))
    base = float(np.minimum(ref, np.quantile(ref, 1.0 - RMSE_TAIL)).mean())
    excess = float(d.mean() + z_value(confidence) * np.std(d, ddof=1) / np.sqrt(d.size * folds))
    if base <= 0.0:                     # a reference without error: the candidate's own bound
        return float(np.sqrt(max(excess, 0.0)))
    return float(np.sqrt(ref.mean()) * np.sqrt(max(1.0 + excess / base, 0.0)))


def set_rmse_estimate(c, exact_errors, errors, confidence, folds=1):
    """``c``'s RMSE, its one-sided bound and the exact model's RMSE on the same rows (``folds``: how
    many held-out parts they came from)."""
    c.validation_error = float(np.sqrt(np.mean(errors ** 2)))
    c.error_bound = rmse_bound(exact_errors, errors, confidence)
    c.reference_error, c.evidence_folds = float(np.sqrt(np.mean(exact_errors ** 2))), folds


def share_bound(flags, confidence=DEFAULT_CONFIDENCE, folds=1) -> float:
    """A one-sided ``confidence`` bound on the share of rows where ``flags`` is set (a one-class
    candidate labelling a row otherwise than the exact model): p + z sqrt(p~ (1 - p~) / n) with
    p~ = (k + 1) / (n + 2), so that no disagreement on n rows still bounds the share above 0.
    ``folds`` > 1: as :func:`rmse_bound`, the bound on n x folds rows with the same share."""
    flags = np.asarray(flags, dtype=bool)
    n, k = flags.size, int(flags.sum())
    smoothed = (k + 1) / (n + 2)
    return k / n + z_value(confidence) * float(np.sqrt(smoothed * (1 - smoothed) / (n * folds)))
