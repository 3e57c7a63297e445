"""What every stage of one run of the main job shares (:class:`JobContext`): the rows and their
split, the task (:mod:`leansvm.job.tasks`), the deadline and its clock, the log and the random
state. A stage takes the context and what it alone decides on, instead of the same dozen arguments
passed from stage to stage; a test hands in a context with its own clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from leansvm.job.deadline import Deadline
from leansvm.job.records import JobLog


@dataclass
class JobContext:
    """One run's shared state. ``X``, ``y``: every training row after preprocessing (``y`` None for
    one-class models); ``folds``: (fit rows, held-out rows) index pairs over them, the first the
    validation part; ``compression_points``: the least rows a compression is fitted at (None: every
    fit row); ``started``: when the job began, on the job's clock. ``X_fit``, ``y_fit``, ``X_val``,
    ``y_val``: the first fold's parts (``y_fit``, ``y_val`` None for one-class models)."""

    X: object
    y: np.ndarray | None
    folds: list
    task: object
    deadline: Deadline = field(default_factory=lambda: Deadline(None))
    log: JobLog = field(default_factory=lambda: JobLog(False))
    random_state: int = 0
    compression_points: int | None = None
    started: float | None = None

    def __post_init__(self):
        fit, val = self.folds[0]
        self.X_fit, self.X_val = self.X[fit], self.X[val]
        self.y_fit, self.y_val = (None, None) if self.y is None else (self.y[fit], self.y[val])
        if self.started is None:
            self.started = self.clock()

    def clock(self) -> float:
        """Seconds on the job's one clock (the deadline's and the log's): every stage's time check
        and measured step reads it, so a test that hands in its own clock moves them all."""
        return self.deadline.clock()

    @property
    def n_fit(self) -> int:
        return self.X_fit.shape[0]

    def compress_to(self):
        """The task's ``compress_to(exact_model, size, X, y)`` (:mod:`leansvm.job.refit`) for this run."""
        return self.task.compress_to(self.compression_points, self.random_state)
