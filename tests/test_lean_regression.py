"""The main job on regression targets (leansvm.job.regression, `leansvm fit`)."""

import re

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, make_friedman1

import leansvm
from leansvm.budget.landmarks import LandmarkSVR
from leansvm.cli import main
from leansvm.job.regression import fit_lean_regression

SMALL = dict(Cs=(1.0, 10.0, 100.0), gamma_factors=(1 / 3, 1.0, 3.0), selection_size=500,
             size_fractions=(0.05, 0.2, 0.5))


@pytest.fixture(scope="module")
def friedman():
    X, z = make_friedman1(n_samples=1800, n_features=6, noise=0.5, random_state=0)
    X = X * np.array([1, 10, 100, 1, 0.1, 1000])         # raw columns of different ranges
    return X[:1500], z[:1500], X[1500:], z[1500:]


def context(X, y, n_fit=None, log=None, compression_points=None, folds=None):
    """A regression job's context over ``X, y``: the first ``n_fit`` rows (default all) fit, the rest
    validate, unless ``folds`` are given."""
    from leansvm.job.context import JobContext
    from leansvm.job.one_output import COMPRESSION_POINTS
    from leansvm.job.records import JobLog
    from leansvm.job.task_rules import RegressionTask

    n = X.shape[0]
    n_fit = n if n_fit is None else n_fit
    folds = folds or [(np.arange(n_fit), np.arange(n_fit, n))]
    return JobContext(X, y, folds, RegressionTask(y[folds[0][1]]), log=log or JobLog(False),
                      compression_points=compression_points or COMPRESSION_POINTS)


def test_returns_the_fewest_vectors_within_the_allowed_increase(friedman):
    X, z, Xt, zt = friedman
    r = fit_lean_regression(X, z, X_test=Xt, y_test=zt, max_error_increase=0.05, **SMALL)
    exact = next(c for c in r.candidates if c.kind == "exact")
    # the choice compares a one-sided 95 % bound on each candidate's RMSE (paired squared errors) with
    # 1.05 times the exact model's RMSE on the same rows: the validation part, then the five folds pooled
    within = lambda c: c.error_bound <= 1.05 * c.reference_error  # noqa: E731
    assert within(r.chosen)
    assert r.chosen.evidence_folds == 5 and "confirm" in [s.stage for s in r.steps]
    assert all(c.n_support >= r.chosen.n_support for c in r.candidates if c.kind in ("compressed", "budget") and within(c))
    assert r.chosen.n_support < exact.n_support
    # the returned model scales raw columns itself: its test RMSE is the returned record's, the chosen
    # kind and size trained again on every row
    assert np.sqrt(np.mean((r.model.predict(Xt) - zt) ** 2)) == pytest.approx(r.final.test_error, rel=1e-9)
    assert r.refit is not None and r.final is r.refit and r.refit.kind == "refit"
    assert r.refit.n_rows == X.shape[0] and r.refit.n_support <= r.chosen.n_support
    assert {c.kind for c in r.candidates} == {"exact", "compressed", "budget", "refit"}
    assert {c.name.split()[0] for c in r.candidates if c.kind == "budget"} <= {"BSGD", "Nystroem", "ReducedSVR"}
    assert {"BSGD", "Nystroem"} <= {c.name.split()[0] for c in r.candidates if c.kind == "budget"}


def test_the_chosen_kind_and_size_is_trained_again_on_every_row(friedman, capsys):
    """A budget model: the same budget on every row; the exact SVR: itself on every row; a compressed
    one: the exact SVR on every row compressed to the same size. Past the budget, or when the exact
    model had only a subsample, the chosen model is kept, with a log line."""
    from leansvm.job.records import Candidate, JobLog
    from leansvm.job.refit import refit_on_all_rows

    X, z, _, _ = friedman
    X = (X - X.mean(axis=0)) / X.std(axis=0)            # as the job scales them
    small = leansvm.BSGDRegressor(budget=40, C=10.0, gamma=0.1, random_state=0).fit(X[:1000], z[:1000])
    svr = leansvm.SVR(C=10.0, gamma=0.1, epsilon=0.2, random_state=0).fit(X[:1000], z[:1000])
    exact = Candidate("exact SVR", "exact", svr, int(svr.n_support_[0]), fit_seconds=0.5, n_rows=1000)
    chosen = Candidate("BSGD SVR (40)", "budget", small, 40, fit_seconds=0.5)
    log = JobLog(True)
    job = context(X, z, 1000, log)
    refit = refit_on_all_rows(job, chosen, exact, None)
    assert refit.name == "BSGD SVR (40), refit on all 1500 rows" and refit.model is not small
    assert refit.model.budget == 40 and refit.n_support <= 40
    expected = leansvm.BSGDRegressor(budget=40, C=10.0, gamma=0.1, random_state=0).fit(X, z)
    np.testing.assert_allclose(refit.model.predict(X[:50]), expected.predict(X[:50]))
    assert [s.stage for s in log.steps] == ["refit"]
    # the exact model: the same SVR on every row
    again = refit_on_all_rows(job, exact, exact, None)
    full = leansvm.SVR(C=10.0, gamma=0.1, epsilon=0.2, random_state=0).fit(X, z)
    assert again.kind == "refit" and again.n_rows == 1500 and again.n_support == int(full.n_support_[0])
    np.testing.assert_allclose(again.model.predict(X[:50]), full.predict(X[:50]), atol=1e-6)
    # a compressed one: that exact SVR on every row, compressed to the same size
    compressed = Candidate("compressed SVR (30)", "compressed", svr, 30, fit_seconds=0.5)
    smaller = refit_on_all_rows(job, compressed, exact, None)
    assert smaller.kind == "refit" and smaller.n_support == 30 and smaller.n_rows == 1500
    assert np.sqrt(np.mean((smaller.model.predict(X) - full.predict(X)) ** 2)) < 0.5 * np.std(z)
    # past the budget, or after an exact fit on a subsample: kept as chosen, with a line
    slow = Candidate("BSGD SVR (40)", "budget", small, 40, fit_seconds=1000.0)
    assert refit_on_all_rows(job, slow, exact, 60) is None
    assert log.steps[-1].choice == "not refit" and "no refit on all 1500 rows: estimated" in log.steps[-1].reason
    sub = Candidate("exact SVR (800 of 1000 rows)", "exact", svr, 40, fit_seconds=0.1, n_rows=800)
    assert refit_on_all_rows(job, sub, sub, 60) is None
    assert log.steps[-1].choice == "not refit" and "had 800 of the 1000 fit rows" in log.steps[-1].reason


def test_bad_parameters(friedman):
    X, z, _, _ = friedman
    with pytest.raises(ValueError, match="max_error_increase"):
        fit_lean_regression(X, z, max_error_increase=2.0, **SMALL)
    with pytest.raises(ValueError, match="NaN or inf|NaN"):
        fit_lean_regression(X, np.where(np.arange(z.size) == 2, np.nan, z), **SMALL)


def test_leansvm_fit_detects_regression_and_writes_a_libsvm_model(friedman, tmp_path, capsys):
    X, z, _, _ = friedman
    data = tmp_path / "reg.txt"
    dump_svmlight_file(X[:600], z[:600], str(data), zero_based=False)
    model = tmp_path / "reg.model"
    assert main(["fit", str(data), "-o", str(model), "--max-error-increase", "5%", "--C-grid", "1", "10"]) == 0
    out = capsys.readouterr().out
    assert "regression" in out and re.search(r"\[select\] C = (1|10),", out)      # --C-grid is used
    loaded = leansvm.io.load_libsvm_model(model)
    assert isinstance(loaded, leansvm.SVR) and (tmp_path / "reg.model.range").exists()
    report = tmp_path / "r.html"
    assert main(["fit", str(data), "-o", str(model), "--C-grid", "10", "--report", str(report)]) == 0
    page = report.read_text()
    assert page.count('<figure class="plot"') == 5 and "regression (epsilon-SVR)" in page


def test_report_plots_the_surface_predictions_and_residuals(friedman):
    from leansvm.job.report import render_one_output_report
    X, z, Xt, zt = friedman
    r = fit_lean_regression(X[:800], z[:800], X_test=Xt, y_test=zt, **SMALL)
    page, names = render_one_output_report(r)
    assert names == ["error-size", "surface", "predicted-true", "residuals", "cost"]
    assert page.count("data:image/png;base64,") == 5 and "<script" not in page
    assert r.evaluation["part"] == "test" and r.evaluation["y"].shape == zt.shape
    np.testing.assert_allclose(r.evaluation["chosen"], r.model.predict(Xt))
    for c in r.candidates:
        assert c.name in page and c.seconds_per_1000 > 0


def test_a_time_budget_fits_the_exact_svr_on_a_subsample_and_leaves_sizes_out(friedman, monkeypatch):
    """--budget-seconds bounds regression too: an exact fit estimated over its share is made on the
    largest subsample estimated to fit it, and candidate sizes stop when the next would end past
    the limit (the log names both)."""
    from leansvm.job import candidates, one_output
    from leansvm.job.records import JobLog

    X, z, _, _ = friedman
    # the estimate says: 300 rows take 1 s and time grows as n^2, so all 1,200 training rows take 16 s
    monkeypatch.setattr(candidates, "estimate_fit_seconds", lambda *a, **k: (16.0, 1.0, 300, 2.0))
    r = fit_lean_regression(X, z, budget_seconds=10.0, **SMALL)
    exact = r.exact
    assert re.fullmatch(r"exact SVR \((\d+) of 1200 rows\)", exact.name)
    assert 300 <= int(re.search(r"\((\d+) of", exact.name).group(1)) < 1200
    assert any("over the exact stage's" in s.reason for s in r.steps)
    # the first compression always; nothing after it when the limit is already spent, but the first
    # budget model: its timing fit took every row (fewer than 5,000), so it is kept, not fitted again
    log = JobLog(False)
    said = []
    log.say = said.append
    fits = []
    real_fit = leansvm.BSGDRegressor.fit
    monkeypatch.setattr(leansvm.BSGDRegressor, "fit", lambda self, *a, **k: fits.append(self) or real_fit(self, *a, **k))
    bsgd = ("BSGD", lambda size: leansvm.BSGDRegressor(budget=size, C=10, gamma=0.1), candidates.pass_work)
    made = one_output.cheap_candidates(context(X, z, log=log), exact, [bsgd], [5, 10, 20], time_limit=0.0)
    assert [c.name for c in made] == ["compressed SVR (5)", "BSGD SVR (5)"]
    assert len(fits) == 1 and made[1].model is fits[0]
    assert said and all(f"{name} ({size})" in said[0] for name in ("compressed SVR", "BSGD SVR") for size in (10, 20))
    assert "(5)" not in said[0]
    # the cheap models are a step of the log, so that the stage times show what they cost
    assert [s.stage for s in log.steps] == ["candidates"]
    assert log.steps[0].choice == "2 cheap models" and "4 left out for lack of time" in log.steps[0].reason
    with pytest.raises(ValueError, match="budget_seconds"):
        fit_lean_regression(X, z, budget_seconds=0, **SMALL)


def test_compressed_candidates_get_fitting_points_that_grow_with_the_size(friedman, monkeypatch):
    """At least compression_points rows, 4 per vector and 3 per fitted parameter (d + 1 per vector),
    never compress's own 20,000-row cap."""
    from leansvm.job.candidates import pass_work
    from leansvm.job.records import Candidate
    from leansvm.job.one_output import cheap_candidates

    X, z = friedman[0][:600], friedman[1][:600]
    exact = Candidate("exact SVR", "exact", leansvm.SVR(C=10.0, gamma=0.1).fit(X, z), 0, 0.0)
    seen = []
    real = leansvm.compress

    def recording(model, n_sv, X, y, max_fit_points, **kw):
        seen.append((n_sv, X.shape[0], y.shape[0], max_fit_points))
        return real(model, n_sv=n_sv, X=X, y=y, max_fit_points=max_fit_points, **kw)

    monkeypatch.setattr(leansvm, "compress", recording)
    bsgd = ("BSGD", lambda size: leansvm.BSGDRegressor(budget=size, C=10.0, gamma=0.1, random_state=0), pass_work)
    cheap_candidates(context(X, z, compression_points=100), exact, [bsgd], [10, 20, 40])
    assert seen == [(10, 210, 210, None), (20, 420, 420, None), (40, 600, 600, None)]   # d = 6: 3 x 7 per vector


def test_a_candidate_lucky_on_one_hold_out_is_refused_on_the_pooled_folds():
    """The planted case for regression: a budget model exact on the validation part and 0.5 off
    everywhere else. The hold-out alone accepts it (its RMSE there is 0); the folds pooled by
    confirm_on_folds, with the exact SVR trained again without each, refuse it."""
    from sklearn.base import BaseEstimator

    from leansvm.job.choice import confirm_on_folds
    from leansvm.job.pipeline import choose_fewest
    from leansvm.job.records import Candidate

    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 2))
    y = X[:, 0] + 0.3 * rng.normal(size=1000)
    folds = [(np.arange(200, 1000), np.arange(200)), (np.r_[0:200, 400:1000], np.arange(200, 400)),
             (np.r_[0:400, 600:1000], np.arange(400, 600))]

    class Lucky(BaseEstimator):
        def __init__(self, offset=0.5):
            self.offset = offset

        def fit(self, X_part, y_part=None):
            return self

        def predict(self, X_part):
            rows = np.array([int(np.flatnonzero((X == x).all(axis=1))[0]) for x in X_part])
            return np.where(rows < 200, y[rows], y[rows] + self.offset)

    make_exact = lambda: leansvm.SVR(C=1.0, gamma=0.5, epsilon=0.1)  # noqa: E731
    model = make_exact().fit(X[folds[0][0]], y[folds[0][0]])
    exact = Candidate("exact SVR", "exact", model, int(model.n_support_[0]), 0.1)
    lucky = Candidate("BSGD SVR (10)", "budget", Lucky(), 10, 0.1)
    job = context(X, y, folds=folds)                   # the limit: 2 % above the exact SVR's RMSE
    for c in (exact, lucky):
        job.task.validate(c, job.X_val)
    job.task.estimate([exact, lucky], exact)
    assert choose_fewest(job.task, [exact, lucky], exact) is lucky
    chosen = confirm_on_folds(job, [exact, lucky], exact, make_exact)
    assert chosen is exact and lucky.evidence_folds == 3
    assert job.log.steps[-1].stage == "confirm" and "none confirmed" in job.log.steps[-1].choice
    assert lucky.error_bound > 1.02 * lucky.reference_error and lucky.validation_error > 0.35


def test_each_family_is_left_out_by_its_own_time_estimate(friedman, monkeypatch):
    """Under a time limit a slow budget family (its subsample fit scaled to every row past the
    limit) is left out at every size while the fast one goes on: at scale BSGD's pass over all
    rows is what does not fit, and the Nystroem models still do."""
    from leansvm.job import candidates, one_output
    from leansvm.job.records import Candidate
    from leansvm.job.records import JobLog

    X, z = friedman[0][:600], friedman[1][:600]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    exact = Candidate("exact SVR", "exact", leansvm.SVR(C=10.0, gamma=0.1).fit(X, z), 0, 0.0)
    real = candidates._timed_subsample

    def timed(estimator, X, y, random_state):      # BSGD: 1,000 s on 10 rows, i.e. far past the limit
        if isinstance(estimator, leansvm.BSGDRegressor):
            return estimator.budget, 1000.0, 10, None
        return real(estimator, X, y, random_state)

    monkeypatch.setattr(candidates, "_timed_subsample", timed)
    log, said = JobLog(False), []
    log.say = said.append
    families = [("BSGD", lambda size: leansvm.BSGDRegressor(budget=size, C=10.0, gamma=0.1), candidates.pass_work),
                ("Nystroem", lambda size: LandmarkSVR(budget=size, C=10.0, gamma=0.1, random_state=0),
                 LandmarkSVR.fit_work)]
    made = one_output.cheap_candidates(context(X, z, log=log, compression_points=100), exact, families, [10, 20],
                                       time_limit=600.0)
    assert [c.name for c in made] == ["compressed SVR (10)", "Nystroem SVR (10)", "compressed SVR (20)",
                                      "Nystroem SVR (20)"]
    assert "BSGD SVR (10)" in said[0] and "BSGD SVR (20)" in said[0]


def test_a_model_better_than_a_subsampled_exact_svr_becomes_the_reference():
    """Under a time budget the exact SVR may have had a subsample only; a candidate trained on every
    row that is below it with confidence becomes the reference, and the limit tightens: a candidate
    within 2 % of the weaker exact model but 9 % above the stronger one is refused. Without such a
    candidate nothing changes."""
    from leansvm.job.choice import stronger_reference
    from leansvm.job.pipeline import choose_fewest
    from leansvm.job.records import Candidate, JobLog
    from leansvm.job.task_rules import RegressionTask

    rng = np.random.default_rng(0)
    base = rng.normal(size=20000)
    task = RegressionTask(np.zeros(base.size), confidence=0.95)      # targets 0: the predictions are the errors
    exact = Candidate("exact SVR (2000 of 16000 rows)", "exact", None, 5000, 1.0, n_rows=2000)
    strong = Candidate("Nystroem SVR (1000)", "budget", None, 1000, 1.0)
    small = Candidate("BSGD SVR (100)", "budget", None, 100, 1.0)
    exact.validation_predictions = 1.2 * base
    strong.validation_predictions = 1.0 * base + 0.05 * rng.normal(size=base.size)
    small.validation_predictions = 1.09 * base + 0.05 * rng.normal(size=base.size)
    candidates = [exact, strong, small]
    task.estimate(candidates, exact)
    assert exact.error_bound == exact.validation_error
    assert choose_fewest(task, candidates, exact) is small      # against the subsample's SVR
    log = JobLog(False)
    reference = stronger_reference(task, candidates, exact, 16000, log)
    assert reference is strong and log.steps[-1].stage == "reference"
    assert "had 2000 of the 16000 fit rows" in log.steps[-1].reason
    assert small.reference_error == pytest.approx(strong.validation_error)
    assert choose_fewest(task, candidates, reference) is strong
    # no candidate below the exact model: it stays the reference
    exact_again = Candidate("exact SVR", "exact", None, 5000, 1.0, n_rows=2000)
    exact_again.validation_predictions = strong.validation_predictions
    assert stronger_reference(task, [exact_again, small], exact_again, 16000, log) is exact_again


def test_ctrl_c_after_the_choice_returns_the_chosen_model_and_the_command_writes_it(friedman, monkeypatch, tmp_path,
                                                                                   capsys):
    """A Ctrl-C during the confirming folds, once the validation part chose a model with fewer vectors
    than the exact SVR: the job returns that model as validated (``interrupted`` set, a log step), and
    `leansvm fit` writes it and exits with 130 on one message line. Before the choice it stops the job."""
    from leansvm.job import one_output, pipeline

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    X, z, Xt, zt = friedman
    monkeypatch.setattr(pipeline, "confirm_on_folds", interrupted)
    r = fit_lean_regression(X, z, X_test=Xt, y_test=zt, max_error_increase=0.05, **SMALL)
    exact = next(c for c in r.candidates if c.kind == "exact")
    assert isinstance(r.interrupted, KeyboardInterrupt) and r.refit is None and r.final is r.chosen
    assert r.chosen.n_support < exact.n_support and r.chosen.error_bound <= 1.05 * r.chosen.reference_error
    assert r.steps[-1].stage == "interrupted" and r.chosen.name in r.steps[-1].choice
    assert r.model.named_steps["svm"] is r.chosen.model                  # the raw columns' scaling, then it
    assert "returning " + r.chosen.name in capsys.readouterr().err
    data, model = tmp_path / "reg.txt", tmp_path / "reg.model"
    dump_svmlight_file(X[:600], z[:600], str(data), zero_based=False)
    assert main(["fit", str(data), "-o", str(model), "--max-error-increase", "5%", "--C-grid", "1", "10",
                 "--quiet"]) == 130
    line = [s for s in capsys.readouterr().err.splitlines() if s.startswith("leansvm: interrupted (Ctrl-C)")]
    assert len(line) == 1 and f"to {model}" in line[0] and "the cheapest model accepted before it" in line[0]
    assert isinstance(leansvm.io.load_libsvm_model(model), leansvm.SVR)
    monkeypatch.setattr(one_output, "cheap_candidates", interrupted)           # before the choice
    with pytest.raises(KeyboardInterrupt):
        fit_lean_regression(X, z, max_error_increase=0.05, **SMALL)


def test_the_reduced_family_is_a_candidate_of_the_regression_job(friedman):
    """ReducedSVR, trained from the targets on every fit row, at doubling sizes from the small end
    below the smallest model that already qualifies, judged against the exact SVR by the same paired
    RMSE bound as every candidate; without a model that qualifies the sizes go up to the exact one's
    (at most MAX_VECTORS), stopping at the first that qualifies."""
    from leansvm.job.reduced import train_reduced_models

    X, z, Xt, zt = friedman
    r = fit_lean_regression(X, z, X_test=Xt, y_test=zt, max_error_increase=0.05, **SMALL)
    step = next(s for s in r.steps if s.stage == "reduced")
    reduced = [c for c in r.candidates if c.name.startswith("ReducedSVR")]
    others = [c for c in r.candidates if c.kind in ("compressed", "budget") and c not in reduced]
    qualified = min((c.n_support for c in others if c.error_bound <= 1.05 * c.reference_error), default=None)
    assert "sizes tried" in step.reason and "from the targets" in step.reason
    if qualified is not None and qualified <= 10:
        assert reduced == []
    else:
        assert reduced and all(isinstance(c.model, leansvm.ReducedSVR) for c in reduced)
        # judged against the exact SVR on the validation part (those the folds tried: on the folds pooled)
        assert all(c.kind == "budget" and np.isfinite(c.error_bound) for c in reduced)
        assert all(c.evidence_folds > 1 or c.reference_error == pytest.approx(r.exact.validation_error)
                   for c in reduced)
        assert all(qualified is None or c.n_support < qualified for c in reduced)
        sizes = [c.n_support for c in reduced]
        assert sizes == sorted(sizes) and all(b == 2 * a for a, b in zip(sizes, sizes[1:]))
        assert all(c.error_bound > 1.05 * c.reference_error for c in reduced[:-1])   # it stops at the first within
    # on its own: the first size qualifies with a generous limit, so the family stops there
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    exact_svr = leansvm.SVR(C=10.0, gamma=0.2, epsilon=0.2).fit(X[:1200], z[:1200])
    from leansvm.job.records import Candidate

    exact = Candidate("exact SVR", "exact", exact_svr, int(exact_svr.n_support_[0]), 0.1)
    job = context(X, z, 1200)
    job.task.max_error_increase = 1.0                  # twice the exact RMSE: easily within
    job.task.validate(exact, job.X_val)
    job.task.estimate([exact], exact)
    [first] = train_reduced_models(job, exact, 10.0, 0.2)
    assert isinstance(first.model, leansvm.ReducedSVR) and first.n_support == 10 and job.task.within(first)
    assert "ReducedSVR reaches the target at 10 vectors" in job.log.steps[-1].choice


def test_the_tuned_c_is_carried_to_the_fit_s_size_as_classification_carries_it(friedman):
    """SVRCV tunes on 100 rows here; with 1,200 fit rows the exact SVR at 1/4..2 times that C is fitted on
    400 rows (4 times the search's, below half the fit rows) and scored by squared error on the validation
    rows; the exact model and every refit use the C carried."""
    from leansvm.job.hyperparameters import CARRY_FACTORS

    X, z, Xt, zt = friedman
    r = fit_lean_regression(X, z, max_error_increase=0.05, **{**SMALL, "selection_size": 100})
    tuned = float(re.search(r"C = ([0-9.e+-]+),", next(s.choice for s in r.steps if s.stage == "select")).group(1))
    carry = next(s for s in r.steps if s.stage == "carry")
    assert "400 rows" in carry.reason and "squared error" in carry.reason and "RMSE" in carry.reason
    assert any(np.isclose(r.params["C"], tuned * f) for f in CARRY_FACTORS)
    assert r.exact.model.C == r.params["C"]
