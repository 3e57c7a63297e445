"""The main job's shared stages run for every task through its rules (leansvm.job.task_rules): the
paired estimate against a reference, the confirming folds, the reduced family and the refit on every
row, on one JobContext, with one candidate record."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_friedman1, make_moons

import leansvm
from leansvm.job.candidates import exact_svc
from leansvm.job.choice import confirm_on_folds, stronger_reference
from leansvm.job.context import JobContext
from leansvm.job.data import validation_folds
from leansvm.job.deadline import Deadline
from leansvm.job.records import Candidate, JobLog
from leansvm.job.reduced import train_reduced_models
from leansvm.job.refit import refit_on_all_rows
from leansvm.job.task_rules import ClassificationTask, NoveltyTask, RegressionTask


def _classification():
    X, y = make_moons(600, noise=0.25, random_state=0)
    folds = validation_folds(X, y, 0.2, 0)
    task = ClassificationTask(y[folds[0][1]], 0.05, n_classes=2)
    return X, y, folds, task, lambda: exact_svc(10.0, 0.5), \
        lambda: leansvm.BSGDClassifier(budget=20, C=10.0, gamma=0.5, random_state=0)


def _regression():
    X, y = make_friedman1(600, n_features=5, noise=0.5, random_state=0)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    folds = validation_folds(X, None, 0.2, 0)
    task = RegressionTask(y[folds[0][1]], 0.5)
    return X, y, folds, task, lambda: leansvm.SVR(C=10.0, gamma=0.2, epsilon=0.3), \
        lambda: leansvm.BSGDRegressor(budget=20, C=10.0, gamma=0.2, epsilon=0.3, random_state=0)


def _novelty():
    X, _ = make_blobs(600, centers=1, n_features=2, random_state=0)
    folds = validation_folds(X, None, 0.2, 0)
    task = NoveltyTask(0.2)
    return X, None, folds, task, lambda: leansvm.OneClassSVM(nu=0.1, gamma=0.5), \
        lambda: leansvm.BSGDOneClassSVM(budget=20, nu=0.1, gamma=0.5, random_state=0)


@pytest.mark.parametrize("make", [_classification, _regression, _novelty], ids=["classification", "regression",
                                                                                "novelty"])
def test_every_shared_stage_runs_for_every_task(make):
    X, y, folds, task, make_exact, make_budget = make()
    log = JobLog(False)
    job = JobContext(X, y, folds, task, Deadline(None), log, random_state=0, compression_points=100)
    y_fit = np.zeros(job.n_fit) if y is None else job.y_fit
    exact_model = make_exact().fit(job.X_fit, y_fit)
    exact = Candidate(f"exact {task.model_name}", "exact", exact_model, int(exact_model.expansion_.n_support),
                      0.1, n_rows=job.n_fit)
    budget_model = make_budget().fit(job.X_fit, job.y_fit)
    budget = Candidate("budget (20)", "budget", budget_model, int(budget_model.expansion_.n_support), 0.1)
    candidates = [exact, budget]
    for c in candidates:
        task.validate(c, job.X_val)
        assert c.validation_predictions.shape == (job.X_val.shape[0],)
    task.estimate(candidates, exact)
    assert isinstance(task.within(budget), bool) and np.isfinite(task.margin(budget, exact))
    # the exact model had every fit row: it stays the reference
    assert stronger_reference(task, candidates, exact, job.n_fit, log) is exact
    # the folds: the generous limits accept the budget model on every fold pooled, or keep the exact one
    chosen = confirm_on_folds(job, candidates, exact, make_exact)
    if chosen is not None:
        assert chosen in (exact, budget) and log.steps[-1].stage == "confirm"
        assert chosen is exact or task.within(chosen)
    # the reduced family: trained from the labels or targets, or left out with the reason said once
    reduced = train_reduced_models(job, exact, 10.0, 0.5, time_limit=5.0, below=None)
    step = log.steps[-1]
    assert step.stage == "reduced"
    if task.name == "novelty":
        assert reduced == [] and step.choice == "family left out" and "one-class" in step.reason
    else:
        assert reduced and all(type(c.model).__name__ == task.reduced_name for c in reduced)
        assert all(c.validation_predictions is not None for c in reduced)
    # the refit of the chosen kind on every row: one record, kind 'refit'
    refit = refit_on_all_rows(job, budget, exact, None)
    assert isinstance(refit, Candidate) and refit.kind == "refit" and refit.n_rows == X.shape[0]
    assert refit.model is not budget.model and refit.n_support <= budget.n_support
    assert log.steps[-1].stage == "refit" and "returned" in log.steps[-1].choice


def test_the_stages_time_checks_and_steps_read_the_jobs_clock():
    """One clock for the job (JobContext.clock, the deadline's and the log's): on a clock that moves
    1,000 s at each reading, the budget stage trains the one timing model of each family and leaves
    the other budgets out for lack of time, and its step reports seconds of that clock."""
    import itertools

    from leansvm.job.candidates import train_budget_models

    X, y, folds, task, _, _ = _classification()
    ticks = itertools.count(step=1000.0)
    clock = lambda: float(next(ticks))  # noqa: E731
    log = JobLog(False, clock=clock)
    job = JobContext(X, y, folds, task, Deadline(None, clock=clock), log, random_state=0)
    out = train_budget_models(job, 10.0, 0.5, [10, 20, 40], time_limit=500.0)
    assert sorted(c.name for c in out) == ["BSGD B=10", "Nystroem B=10"]
    step = log.steps[-1]
    assert step.stage == "budget" and "left out for lack of time" in step.reason
    assert step.choice == "2 budget model(s), B = 10"          # the sizes trained, not those left out
    assert step.seconds >= 1000.0


def test_compression_with_no_size_below_a_qualifying_model_is_left_out_and_says_why():
    """When a model of ``below`` vectors already qualifies and the first compressed size is not below
    it, no compression is tried: the step says the family is left out and why, not that no compressed
    model reached the target."""
    from leansvm.job.candidates import compress_models

    X, y, folds, task, make_exact, _ = _classification()
    log = JobLog(False)
    job = JobContext(X, y, folds, task, Deadline(None), log, random_state=0, compression_points=100)
    model = make_exact().fit(job.X_fit, job.y_fit)
    exact = Candidate("exact SVC", "exact", model, int(model.expansion_.n_support), 0.1, n_rows=job.n_fit)
    assert compress_models(job, exact, below=5) == []
    step = log.steps[-1]
    assert step.stage == "compress" and step.choice == "family left out"
    assert "below 5" in step.reason and "already qualifies" in step.reason
    # with room below the limit, sizes are tried
    assert compress_models(job, exact, below=exact.n_support // 2)
    assert log.steps[-1].choice != "family left out"


@pytest.mark.parametrize("make", [_classification, _regression, _novelty], ids=["classification", "regression",
                                                                                "novelty"])
def test_the_pipeline_chooses_confirms_and_refits_the_task_s_candidates(make):
    """train_and_choose on a task's two candidates (the exact model and one budget model): the choice is
    the fewest vectors among the reference and those the task puts within; the folds run (the exact
    model had every fit row), and the refit is the chosen kind trained on every row."""
    from leansvm.job.pipeline import choose_fewest, train_and_choose

    X, y, folds, task, make_exact, make_budget = make()
    log = JobLog(False)
    job = JobContext(X, y, folds, task, Deadline(None), log, random_state=0, compression_points=100)

    def train_candidates(candidates):
        y_fit = np.zeros(job.n_fit) if y is None else job.y_fit
        exact_model = make_exact().fit(job.X_fit, y_fit)
        candidates.append(Candidate(f"exact {task.model_name}", "exact", exact_model,
                                    int(exact_model.expansion_.n_support), 0.1, n_rows=job.n_fit))
        budget_model = make_budget().fit(job.X_fit, job.y_fit)
        candidates.append(Candidate("budget (20)", "budget", budget_model, int(budget_model.expansion_.n_support),
                                    0.1))
        for c in candidates:
            task.validate(c, job.X_val)
        task.estimate(candidates, candidates[0])
        return candidates[0]

    stages = train_and_choose(job, make_exact, train_candidates)
    exact, budget = stages.candidates[:2]
    assert stages.exact is exact and stages.reference is exact and stages.interrupted is None
    validated = next(s for s in log.steps if s.stage == "choose")
    assert validated.choice.startswith(("exact", "budget (20)"))
    if task.promising(budget, exact, len(folds)):           # the folds run where a candidate could pass them
        assert "confirm" in [s.stage for s in log.steps]
    assert stages.chosen in (exact, budget) and (stages.chosen is exact or task.within(stages.chosen))
    assert stages.refit is stages.candidates[-1] and stages.refit.kind == "refit"
    assert stages.refit.n_rows == X.shape[0]
    # the rule itself: a budget model wrong wherever the exact one is right is out of the limit
    p = exact.validation_predictions
    budget.validation_predictions = p + 100.0 if task.name == "regression" else (-p if task.name == "novelty" else 1 - p)
    assert choose_fewest(task, [exact, budget], exact) is exact and not task.within(budget)
    budget.validation_predictions = p.copy()                  # and one that predicts as it does is within
    assert choose_fewest(task, [exact, budget], exact) is budget and task.within(budget)


@pytest.mark.parametrize("task", ["classification", "regression", "novelty"])
def test_each_task_s_job_runs_through_the_one_pipeline(task, monkeypatch):
    """fit_lean on each task calls the one train_and_choose once, and returns its chosen model."""
    from leansvm import fit_lean
    from leansvm.job import classification, novelty, regression

    module = {"classification": classification, "regression": regression, "novelty": novelty}[task]
    real, calls = module.train_and_choose, []

    def recorded(*args, **kwargs):
        calls.append(real(*args, **kwargs))
        return calls[-1]

    monkeypatch.setattr(module, "train_and_choose", recorded)
    if task == "classification":
        X, y = make_moons(400, noise=0.25, random_state=0)
        result = fit_lean(X, y, Cs=[1.0, 10.0], gammas=[0.5], max_accuracy_drop=0.05)
    elif task == "regression":
        X, y = make_friedman1(500, n_features=5, noise=0.5, random_state=0)
        result = fit_lean(X, y, Cs=[10.0], gamma_factors=[1.0], selection_size=300, max_error_increase=0.1)
    else:
        X, _ = make_blobs(500, centers=1, n_features=2, random_state=0)
        result = fit_lean(X, task="novelty", max_disagreement=0.05)
    assert len(calls) == 1 and result.task == task
    assert result.chosen is calls[0].chosen and result.exact is calls[0].exact


def test_a_doubling_stopped_as_out_of_reach_tries_one_size_at_half_the_limit():
    """After doubling_out_of_reach stops compression's doubling at ``last`` vectors, one size at half
    the limit, when it is past ``last`` and its estimated seconds (``last``'s, scaled by the vectors
    and their fitting points) fit the time left."""
    from leansvm.job.candidates import _half_limit_probe

    tried = [Candidate("compressed 40 SV", "compressed", None, 40, 0.5)]
    X, never = np.zeros((3500, 10)), (lambda seconds: False)
    assert _half_limit_probe(True, 40, 253, tried, X, None, 4, never) == 126
    assert _half_limit_probe(False, 40, 253, tried, X, None, 4, never) is None     # not stopped by the rule
    assert _half_limit_probe(True, 160, 253, tried, X, None, 4, never) is None     # half the limit is not past it
    asked = []
    assert _half_limit_probe(True, 40, 253, tried, X, None, 4, lambda s: asked.append(s) or True) is None
    assert asked == [pytest.approx(126 / 40 * 0.5)]       # every row fitted at both sizes: vectors alone


def test_compression_stopped_as_out_of_reach_says_what_the_half_limit_size_did(monkeypatch):
    """The stage's reasons name the size at half the limit and whether it reached the target."""
    import leansvm.job.candidates as candidates

    monkeypatch.setattr(candidates, "doubling_out_of_reach", lambda *args: True)   # the rule, not the clock
    X, y, folds, task, make_exact, _ = _classification()
    task = ClassificationTask(task.y_val, 0.0, n_classes=2)      # no drop allowed: the first sizes miss
    log = JobLog(False)
    job = JobContext(X, y, folds, task, Deadline(None), log, random_state=0, compression_points=100)
    model = make_exact().fit(job.X_fit, job.y_fit)
    exact = Candidate("exact SVC", "exact", model, int(model.expansion_.n_support), 0.1, n_rows=job.n_fit)
    out = candidates.compress_models(job, exact)
    first, probed = out[0], out[-1]
    assert not task.within(first)                      # the first size missed: the rule stopped the doubling
    assert len(out) == 2 and probed.n_support == exact.n_support // 2
    verdict = "it reached the target" if task.within(probed) else "missed"
    assert f"one size at half of {exact.n_support} vectors, {exact.n_support // 2}" in log.steps[-1].reason
    assert log.steps[-1].reason.endswith(verdict)
