"""The main job's records: what each stage decided (:class:`Step`), the hyperparameter choice
(:class:`Selection`), each trained model (:class:`Candidate`) and the whole result
(:class:`LeanResult`), with the log that prints and keeps the steps (:class:`JobLog`).

The log and the HTML report (:mod:`leansvm.job.report`) read these; nothing here computes.
"""

from __future__ import annotations

import sys
import textwrap
import time
from dataclasses import dataclass, field

import numpy as np

from leansvm import interrupts


@dataclass
class Step:
    """One stage's decision: what it chose, why, how long it took, and any fallback used.
    ``elapsed``: wall seconds since the step before (the work that led to this decision)."""

    stage: str
    choice: str
    reason: str
    seconds: float = 0.0
    fallback: str | None = None
    elapsed: float = 0.0
    details: list = field(default_factory=list)   # the lines said while it worked: models tried, measurements


@dataclass
class Selection:
    """Validation accuracy over the (gamma, C) grid and the chosen pair.

    ``accuracy[i, j]`` and ``n_support[i, j]`` belong to ``gammas[i]``, ``Cs[j]``.
    ``screening`` (or None) is ``(Cs, rate)`` along one screened path at the
    chosen gamma: the fraction of non-support vectors the safe rules removed
    before solving at each C.
    """

    Cs: np.ndarray
    gammas: np.ndarray
    accuracy: np.ndarray
    n_support: np.ndarray
    C: float
    gamma: float
    method: str
    n_samples: int
    n_folds: int
    screening: tuple | None = None   # (Cs, rate per C) along one screened path at the chosen gamma
    search: object = None            # the wide search's record (leansvm.paths.search.SearchResult), or None
    se: float = float("nan")         # standard error of the chosen cell's CV accuracy
    carried_C: float | None = None   # C carried to the exact fit's rows (job.hyperparameters.carry_C), or None

    @property
    def fit_C(self) -> float:
        """The C the job's models were trained with: the carried one, else the chosen one."""
        return self.C if self.carried_C is None else self.carried_C


@dataclass
class Candidate:
    """A trained model of any task with its size, its validation and test figures and its test-time cost.

    Classification reads ``validation_accuracy``, ``required_accuracy``, ``drop`` and ``test_accuracy``;
    regression and novelty detection read the task's error (``LeanResult.error_name``):
    ``validation_error``, ``error_bound``, ``reference_error`` and ``test_error``. The rest is common."""

    name: str
    kind: str                     # 'exact' | 'compressed' | 'budget' | 'refit'
    model: object
    n_support: int
    fit_seconds: float
    validation_accuracy: float = float("nan")
    test_accuracy: float | None = None
    seconds_per_1000: float | None = None
    note: str = ""
    #: validation accuracy it had to reach: the exact model's - drop + z SE (:mod:`leansvm.job.estimates`)
    required_accuracy: float = float("nan")
    validation_predictions: np.ndarray | None = field(default=None, repr=False)
    #: its accuracy drop against the exact model with a one-sided bound (:class:`~leansvm.job.estimates.DropEstimate`);
    #: None for the exact model itself and for a refit (it has seen every row)
    drop: object = None
    #: the one-output tasks' error (RMSE, or the share of rows labelled otherwise than by the exact model)
    validation_error: float = float("nan")
    #: a one-sided bound on the validation error (:mod:`leansvm.job.estimates`): what the choice compares
    #: with the limit; the exact model's is its own error
    error_bound: float = float("nan")
    test_error: float | None = None
    #: further test figures (one-class models against labels: accuracy, AUC)
    test_metrics: dict = field(default_factory=dict)
    #: the rows it was trained on (an exact model under a time budget may have had a subsample)
    n_rows: int | None = None
    #: the exact model's error on the rows ``validation_error`` and ``error_bound`` are over
    #: (regression: the limit is (1 + increase) times it; novelty: None)
    reference_error: float | None = None
    #: how many held-out parts the validation figures came from (1: the validation part alone)
    evidence_folds: int = 1


@dataclass
class LeanResult:
    """Everything the main job decided and measured, for every task; ``model`` is the returned
    estimator (with its preprocessing).

    ``chosen`` is the candidate the held-out rows chose; ``final`` the model returned: ``chosen``
    trained again on every row (kind 'refit', :func:`~leansvm.job.refit.refit_on_all_rows`; it is
    among ``candidates`` too), or ``chosen`` itself when not refit.

    Classification fills ``selection``, ``route``, ``max_accuracy_drop``, ``confidence`` and the
    LIBSVM figures; regression and novelty detection ``error_name``, ``limit``, ``allowed``,
    ``evaluation`` (the arrays the report plots: the part measured, 'test' or 'validation', its
    targets or labels, the exact and returned models' outputs there) and ``cv_results`` (the
    regression tuning's ``cv_results_``). ``params``: the tuned parameters of every task."""

    model: object
    chosen: Candidate
    candidates: list[Candidate]
    selection: Selection | None
    route: str | None             # classification: 'exact' | 'budget'
    steps: list[Step]
    summary: dict
    max_accuracy_drop: float | None = None
    libsvm_seconds_per_1000: float | None = None
    libsvm_n_support: int | None = None
    libsvm_test_accuracy: float | None = None
    data_2d: tuple | None = None  # (X, y) for decision-boundary plots when d == 2
    classes: np.ndarray = field(default_factory=lambda: np.empty(0))
    seconds: float = 0.0
    final: Candidate | None = None
    preprocessing: str | None = None    # what stage 1 did (a table's columns, or the scaling); None: nothing
    confidence: float = 0.95            # of the one-sided bound on each candidate's estimate against the reference
    interrupted: BaseException | None = None   # the Ctrl-C that ended the job with the model it held
    #: the model the estimates are against: the exact one, or a candidate more accurate than an exact
    #: model that had only a subsample (:func:`~leansvm.job.choice.stronger_reference`); None: not known yet
    reference: Candidate | None = None
    task: str = "classification"        # 'classification' | 'regression' | 'novelty'
    params: dict = field(default_factory=dict)
    error_name: str | None = None       # regression: 'RMSE'; novelty: 'disagreement'
    limit: float | None = None          # the error bound the choice allowed
    allowed: str | None = None          # the limit in words, e.g. 'RMSE within 2 % of the exact model's'
    evaluation: dict = field(default_factory=dict)
    cv_results: dict | None = None

    def __post_init__(self):
        if self.final is None:
            self.final = self.chosen

    @property
    def refit(self) -> Candidate | None:
        """The chosen kind and size trained again on every row, or None where it was not."""
        return self.final if self.final is not self.chosen else None

    @property
    def exact(self) -> Candidate:
        """The job's exact model."""
        return next(c for c in self.candidates if c.kind == "exact")

    def stage_seconds(self) -> dict:
        return stage_seconds(self.steps, self.seconds)

    def reference_name(self) -> str:
        """What the drops are against: 'exact', or the name of :attr:`reference` where it is a candidate."""
        return "exact" if self.reference is None or self.reference.kind == "exact" else self.reference.name


def stage_seconds(steps, seconds: float) -> dict:
    """{stage: wall seconds} of a job that took ``seconds``: each step's ``elapsed`` summed per stage (a
    stage logs its step once it has decided, so the time before the step is its work), in the order the
    stages first ran; 'finish' is the rest (assembling the result)."""
    out: dict = {}
    for step in steps:
        out[step.stage] = out.get(step.stage, 0.0) + step.elapsed
    out["finish"] = max(seconds - sum(out.values()), 0.0)
    return out


#: the widest line the log prints at its default verbosity
LINE_WIDTH = 100
#: steps that report rather than decide: printed from verbosity 2 on, always kept for the report
DETAIL_STAGES = frozenset({"split", "screening", "bound", "reference", "candidates", "measure"})


def verbosity(verbose) -> int:
    """``verbose`` as a level: False/0 nothing, True/1 one line per stage, 2 the reasons and the models
    tried too."""
    level = int(verbose)
    if level < 0:
        raise ValueError(f"verbose must be False, True or a level 0-2, got {verbose!r}")
    return min(level, 2)


def clip(line: str, width: int = LINE_WIDTH) -> str:
    """``line`` cut to ``width`` characters, the cut marked with '...'."""
    return line if len(line) <= width else line[:width - 3].rstrip() + "..."


class JobLog:
    """The job's log: every step kept (with the lines said on the way to it) for the HTML report, and
    printed by verbosity (:func:`verbosity`):

    - 1: one line per deciding stage, what it decided and its seconds, at most ``LINE_WIDTH``
      characters;
    - 2: every step, each followed by its reason and the lines said while it worked (the models tried,
      their measurements), indented under it.

    ``clock`` gives the seconds each step took (``time.perf_counter``; a test hands in its own)."""

    def __init__(self, verbose=0, clock=time.perf_counter):
        self.level = verbosity(verbose)
        self.clock = clock
        self.steps: list[Step] = []
        self._pending: list[str] = []        # lines said since the last step: they belong to the next one
        self._last = clock()

    @staticmethod
    def _print(line):
        print(line, file=sys.stdout, flush=True)

    def say(self, message):
        """A detail of the step under way (a model tried, a measurement): kept with that step, printed
        under it from verbosity 2 on."""
        self._pending.append(message.strip())

    def step(self, stage, choice, reason, seconds=0.0, fallback=None, detail=False):
        """Record a stage's decision; ``detail``: printed from verbosity 2 on only, like the
        ``DETAIL_STAGES`` (a decision another line already states)."""
        interrupts.check()                     # between stages: a recorded Ctrl-C stops here
        now = self.clock()
        step = Step(stage, choice, reason, seconds, fallback, now - self._last, self._pending)
        self.steps.append(step)
        self._last, self._pending = now, []
        if self.level >= 2 or (self.level == 1 and stage not in DETAIL_STAGES and not detail):
            self._print(short_line(step))
        if self.level >= 2:
            for text in [reason + (f" (fallback: {fallback})" if fallback else "")] + step.details:
                self._print(textwrap.fill(text, LINE_WIDTH, initial_indent="    ", subsequent_indent="      "))

    def flush(self):
        """Lines said after the last step (a job that ended between steps): printed from verbosity 2 on."""
        if self.level >= 2:
            for text in self._pending:
                self._print("    " + text)
        if self.steps:
            self.steps[-1].details.extend(self._pending)
        self._pending = []


def short_line(step: Step) -> str:
    """A step in one line: ``[stage] choice (seconds)``, clipped to ``LINE_WIDTH``; '(fallback)' where
    an intended method was not available."""
    tail = (f" ({step.seconds:.1f} s)" if step.seconds else "") + (" (fallback)" if step.fallback else "")
    return clip(f"[{step.stage}] {step.choice}", LINE_WIDTH - len(tail)) + tail
