"""What the shared stages ask of a task (:class:`ClassificationTask`, :class:`RegressionTask`,
:class:`NoveltyTask`): how a candidate is judged against a reference model on the validation rows
(``estimate``: the paired accuracy drop, RMSE bound or disagreement bound of
:mod:`leansvm.job.estimates`; ``margin``: that bound's excess over the reference, below 0 where the
candidate is surely better), how it is described in the log, and how an exact model is compressed to
a size (``compress_to``, for :mod:`leansvm.job.refit`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from leansvm.job.estimates import DEFAULT_CONFIDENCE, set_rmse_estimate, share_bound


@dataclass
class ClassificationTask:
    """Candidates judged by their accuracy drop against the reference, with a one-sided bound from
    predictions paired row by row (:func:`~leansvm.job.estimates.paired_drop`); ``y_val``: the
    validation labels."""

    y_val: np.ndarray
    max_accuracy_drop: float
    confidence: float = DEFAULT_CONFIDENCE
    name = "classification"
    model_name = "SVC"

    def estimate(self, candidates, reference):
        from leansvm.job.choice import estimate_drops

        estimate_drops(candidates, reference, self.y_val, self.max_accuracy_drop, self.confidence)

    @staticmethod
    def margin(c, reference) -> float:
        return float("inf") if c.drop is None else c.drop.upper

    @staticmethod
    def describe(c) -> str:
        return f"validation accuracy {c.validation_accuracy:.4f}"

    @staticmethod
    def compress_to(min_points, random_state):
        from leansvm.job.candidates import compress_at_rows

        return partial(compress_at_rows, min_points=min_points, random_state=random_state)


@dataclass
class RegressionTask:
    """Candidates judged by a one-sided bound on their validation RMSE, from squared errors paired row
    by row with the reference's (:func:`~leansvm.job.estimates.rmse_bound`)."""

    y_val: np.ndarray
    confidence: float = DEFAULT_CONFIDENCE
    name = "regression"
    model_name = "SVR"

    def estimate(self, candidates, reference):
        reference_errors = reference.validation_predictions - self.y_val
        for c in candidates:
            set_rmse_estimate(c, reference_errors, c.validation_predictions - self.y_val, self.confidence)
        reference.error_bound = reference.validation_error      # the reference's is its own error

    @staticmethod
    def margin(c, reference) -> float:
        return c.error_bound - reference.validation_error

    def describe(self, c) -> str:
        return f"validation RMSE {c.validation_error:.4g} (its {100 * self.confidence:g} % bound {c.error_bound:.4g})"

    @staticmethod
    def compress_to(min_points, random_state):
        from leansvm.job.one_output import COMPRESSION_POINTS, compressor

        return compressor(random_state, COMPRESSION_POINTS if min_points is None else min_points)


@dataclass
class NoveltyTask:
    """One-class candidates judged by a one-sided bound on the share of validation rows they label
    otherwise than the reference (:func:`~leansvm.job.estimates.share_bound`)."""

    confidence: float = DEFAULT_CONFIDENCE
    name = "novelty"
    model_name = "one-class SVM"

    def estimate(self, candidates, reference):
        for c in candidates:
            differ = c.validation_predictions != reference.validation_predictions
            c.validation_error = float(np.mean(differ))
            c.error_bound = c.validation_error if c is reference else share_bound(differ, self.confidence)

    @staticmethod
    def margin(c, reference) -> float:
        return c.error_bound            # a disagreement is never below the reference's own 0

    def describe(self, c) -> str:
        return (f"labels {100 * c.validation_error:.2f} % of the validation rows otherwise than the exact model "
                f"({100 * self.confidence:g} % bound {100 * c.error_bound:.2f} %)")

    compress_to = staticmethod(RegressionTask.compress_to)
