"""The main job: ``leansvm.fit_lean`` / ``leansvm fit``, on small data and tiny grids."""

import base64
import re

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, make_blobs, make_moons

import leansvm
from leansvm import cli, io
from leansvm.budget.landmarks import LandmarkSVC
from leansvm.job.pipeline import choose_fewest
from leansvm.job.classification import fit_lean_classification as fit_lean, format_table, save_result_model
from leansvm.job.context import JobContext
from leansvm.job.hyperparameters import select_hyperparameters
from leansvm.job.records import Candidate
from leansvm.job.report import render_report
from leansvm.job.task_rules import ClassificationTask

GRID = dict(Cs=[1.0, 10.0], gammas=[0.5, 2.0], size_fractions=(0.05, 0.2), scale=False)   # gammas in raw units


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(500, noise=0.25, random_state=0)
    return X[:350], y[:350], X[350:], y[350:]


@pytest.fixture(scope="module")
def moons_result(moons):
    """max_accuracy_drop=0.03: 0.01 puts the 5-vector compressed model one validation row (of 70)
    from the choice, where the exact model's last digits decide between it and a budget model."""
    X, y, Xt, yt = moons
    return fit_lean(X, y, X_test=Xt, y_test=yt, max_accuracy_drop=0.03, **GRID)


def test_chosen_model_is_smallest_within_the_drop(moons_result):
    r = moons_result
    validated = [c for c in r.candidates if c.kind != "refit"]
    exact = next(c for c in validated if c.kind == "exact")
    # every candidate's drop is against the exact model; the chosen one's bound is within the drop
    assert all(c.drop is not None for c in validated if c is not exact)
    assert r.chosen is exact or r.chosen.drop.upper <= 0.03 + 1e-12
    # no smaller candidate's bound is within it (on the validation part, or on the folds it was confirmed on)
    smaller = [c for c in validated if c.n_support < r.chosen.n_support]
    assert all(c.drop.upper > 0.03 for c in smaller)
    assert r.route == "exact"
    kinds = {c.kind for c in r.candidates}
    assert {"exact", "budget", "refit"} <= kinds
    # the returned model: the chosen kind and size trained again on all rows (training + validation)
    assert r.final.kind == "refit" and r.model is r.final.model and r.final is not r.chosen
    assert r.final.n_support <= r.chosen.n_support and np.isnan(r.final.validation_accuracy)
    assert any(s.stage == "refit" and "returned" in s.choice for s in r.steps)
    # both predict the test data well (moons at noise 0.25: ~95%)
    assert r.chosen.test_accuracy > 0.9 and r.final.test_accuracy > 0.9


def test_refit_trains_the_choice_again_on_all_rows(moons):
    from leansvm.job.candidates import train_exact
    from leansvm.job.records import JobLog
    from leansvm.job.refit import refit_on_all_rows

    X, y, Xt, _ = moons
    n_fit = 280
    log = JobLog(False)
    job = JobContext(X, y, [(np.arange(n_fit), np.arange(n_fit, 350))], ClassificationTask(y[n_fit:], 0.01),
                     log=log, compression_points=100)
    exact = train_exact(X[:n_fit], y[:n_fit], 10.0, 0.5)
    final = refit_on_all_rows(job, exact, exact, None)
    reference = leansvm.SVC(C=10.0, gamma=0.5, random_state=0).fit(X, y)     # the same solve on all rows
    np.testing.assert_allclose(final.model.decision_function(Xt), reference.decision_function(Xt), atol=1e-3)
    assert final.kind == "refit" and "all 350 rows" in final.name and final.n_rows == 350
    if getattr(leansvm, "compress", None) is not None:
        small = Candidate("compressed 12 SV", "compressed", None, 12, 1.0)
        final = refit_on_all_rows(job, small, exact, None)
        assert final.n_support <= 12 and final.model.expansion_.n_support == final.n_support
        assert "compressed to 12 vectors" in log.steps[-1].reason
    # a budget model: the same estimator and budget fitted on all rows
    bsgd = leansvm.BSGDClassifier(budget=10, C=1.0, gamma=0.5, random_state=0, refit=True)
    small_bsgd = Candidate("BSGD B=10", "budget", bsgd.fit(X[:n_fit], y[:n_fit]), 10, 1.0)
    final = refit_on_all_rows(job, small_bsgd, exact, None)
    again = leansvm.BSGDClassifier(budget=10, C=1.0, gamma=0.5, random_state=0, refit=True).fit(X, y)
    assert final.kind == "refit" and final.n_support <= 10 and "BSGDClassifier with budget 10" in log.steps[-1].reason
    np.testing.assert_allclose(final.model.decision_function(Xt), again.decision_function(Xt))
    # over the time left: the validated model is returned
    assert refit_on_all_rows(job, exact, exact, 1e-9) is None
    assert "no refit on all 350 rows: estimated" in log.steps[-1].reason
    # the exact model on a subsample: neither it nor its compression is refit (a budget model still is)
    sub = train_exact(X[:200], y[:200], 10.0, 0.5)
    assert refit_on_all_rows(job, sub, sub, None) is None
    assert "had 200 of the 280 fit rows" in log.steps[-1].reason
    # a refit is not refit again
    assert refit_on_all_rows(job, final, exact, None) is None


def test_without_refit_the_validated_choice_is_returned(moons):
    X, y, Xt, yt = moons
    r = fit_lean(X, y, X_test=Xt, y_test=yt, Cs=[1.0], gammas=[0.5], size_fractions=(), refit=False, scale=False,
                 libsvm_reference_model=False)
    assert r.final is r.chosen and r.model is r.chosen.model
    assert not any(c.kind == "refit" for c in r.candidates)
    assert format_table(r).endswith("(* chosen on validation rows)")


def test_compression_search_stops_at_the_first_size_within_the_drop(moons_result):
    if getattr(leansvm, "compress", None) is None:
        pytest.skip("leansvm.compress not available")
    r = moons_result
    exact = next(c for c in r.candidates if c.kind == "exact")
    compressed = [c for c in r.candidates if c.kind == "compressed"]
    assert compressed and all(c.n_support < exact.n_support for c in compressed)
    target = exact.validation_accuracy - r.max_accuracy_drop
    # the margin: every requirement is the exact model's accuracy - drop plus z standard errors (> 0)
    assert all(c.required_accuracy > target for c in compressed)
    reached = [c.n_support for c in compressed if c.drop.folds == 1 and c.drop.within(r.max_accuracy_drop)]
    if reached:  # doubling stops at the first hit: nothing tried beyond it
        assert max(c.n_support for c in compressed) == min(reached) or \
            max(c.n_support for c in compressed) <= 2 * min(reached)
        assert r.chosen.n_support <= min(reached)


def test_compression_search_respects_its_time_limit(moons_result):
    if getattr(leansvm, "compress", None) is None:
        pytest.skip("leansvm.compress not available")
    from leansvm.job.candidates import compress_models
    from leansvm.job.records import JobLog

    from dataclasses import replace

    # the job's exact model, judged on other rows than its job's validation part
    exact = replace(next(c for c in moons_result.candidates if c.kind == "exact"), validation_predictions=None)
    X, y = make_moons(300, noise=0.25, random_state=5)
    log = JobLog(False)
    job = _context(X, y, ClassificationTask(y[200:], -0.1), 200, log)        # an unreachable drop
    out = compress_models(job, exact, time_limit=1e-9)
    assert len(out) == 1                                  # one size tried, then stopped by the limit
    assert "time limit" in log.steps[-1].reason


def test_each_stage_states_its_choice_and_fallbacks_are_honest(moons_result):
    stages = [s.stage for s in moons_result.steps]
    for stage in ("data", "split", "select", "route", "train", "budget", "reduced", "compress", "choose", "refit",
                  "measure"):
        assert stage in stages
    by_stage = {s.stage: s for s in moons_result.steps}
    # a fallback is recorded exactly when the intended component is missing
    assert (by_stage["select"].fallback is not None) == (getattr(leansvm, "SVCCV", None) is None)
    assert (by_stage["screening"].fallback is not None) == (getattr(leansvm, "svm_path", None) is None)
    assert (by_stage["budget"].fallback is not None) == (getattr(leansvm, "BSGDClassifier", None) is None)
    assert (by_stage["compress"].fallback is not None) == (getattr(leansvm, "compress", None) is None)
    assert all(s.choice and s.reason for s in moons_result.steps)


def test_stage_seconds_add_up_to_the_job_and_follow_the_steps(moons_result):
    """Each step's elapsed time is the work before it; summed per stage they make the job's time."""
    stages = moons_result.stage_seconds()
    assert list(stages)[:3] == [s.stage for s in moons_result.steps][:3] and list(stages)[-1] == "finish"
    assert all(v >= 0 for v in stages.values())
    assert sum(stages.values()) == pytest.approx(moons_result.seconds, abs=1e-3)
    assert stages["select"] > 0 and stages["train"] > 0
    elapsed = [s.elapsed for s in moons_result.steps]
    assert sum(elapsed) <= moons_result.seconds + 1e-3


def test_selection_surface_and_reference_measurements(moons_result):
    sel = moons_result.selection
    assert sel.accuracy.shape == (2, 2)
    i, j = list(sel.gammas).index(sel.gamma), list(sel.Cs).index(sel.C)
    assert sel.accuracy[i, j] == pytest.approx(sel.accuracy.max(), abs=1 / sel.n_samples)
    # LIBSVM's full model at the same (C, gamma) has the exact model's support vectors (same optimum)
    exact = next(c for c in moons_result.candidates if c.kind == "exact")
    assert abs(moons_result.libsvm_n_support - exact.n_support) <= max(2, exact.n_support // 50)
    assert all(c.seconds_per_1000 > 0 for c in moons_result.candidates)
    assert moons_result.libsvm_seconds_per_1000 > 0
    assert f"(* chosen on validation rows; ** returned: refit on all {moons_result.summary['n_train']} rows)" \
        in format_table(moons_result)


def test_selection_avoids_a_useless_gamma():
    X, y = make_moons(240, noise=0.2, random_state=1)
    sel = select_hyperparameters(X, y, Cs=[1.0], gammas=[1.0, 1e5], n_folds=3)
    assert sel.gamma == 1.0
    assert sel.accuracy[0, 0] > sel.accuracy[1, 0] + 0.1  # gamma = 1e5 memorises, predicts near chance


def test_screened_path_search_is_wired_in(monkeypatch):
    """With SVCCV / svm_path: the surface is SVCCV's scores in (gamma, C) layout."""
    model_selection = pytest.importorskip("leansvm.paths.model_selection")
    from leansvm.job.hyperparameters import screening_along_path

    monkeypatch.setattr(leansvm, "SVCCV", model_selection.SVCCV, raising=False)
    monkeypatch.setattr(leansvm, "svm_path", model_selection.svm_path, raising=False)
    X, y = make_moons(200, noise=0.2, random_state=2)
    Cs, gammas = [0.1, 10.0], [0.5, 3.0, 1e4]
    sel = select_hyperparameters(X, y, Cs=Cs, gammas=gammas, n_folds=3)
    assert sel.method.startswith("screened")
    ref = model_selection.SVCCV(Cs=Cs, gammas=gammas, cv=3, refit=False, random_state=0).fit(X, y)
    for params, score in zip(ref.cv_results_["params"], ref.cv_results_["mean_test_score"]):
        i, j = gammas.index(params["gamma"]), Cs.index(params["C"])
        assert sel.accuracy[i, j] == pytest.approx(score)
    assert sel.accuracy.max() == pytest.approx(ref.best_score_)
    # 10 values (C ratio 0.6): the IT screens 10-15 % on make_moons seeds 2-7; with 5 (ratio 0.32) it
    # screened 2 samples on seed 2 and none on seeds 3-7, at b715d83 as now
    Cs_path, rate = screening_along_path(X, y, 0.1, 10.0, 0.5, n_C=10)
    assert Cs_path.shape == rate.shape == (10,)
    assert np.all((rate >= 0) & (rate <= 1)) and rate[1:].max() > 0  # warm-started steps screen samples


def test_fit_time_estimate_fits_the_growth_exponent(monkeypatch):
    from leansvm.job import candidates as lean

    class Model:  # a fit whose "time" is a known power of n (no sleeping: exact on a loaded machine)
        def __init__(self, power):
            self.power = power

        def fit(self, X, y):
            return self

    def fake_timed(fn, X, y):
        return fn(X, y), 1e-6 * X.shape[0] ** fn.__self__.power

    monkeypatch.setattr(lean, "_timed", fake_timed)
    X, y = make_moons(1600, random_state=0)
    est, measured, size, p = lean.estimate_fit_seconds(lambda: Model(2.6), X, y, sample_size=400)
    assert size == 400 and p == pytest.approx(2.6)
    assert measured == pytest.approx(1e-6 * 400 ** 2.6)
    assert est == pytest.approx(1e-6 * 1600 ** 2.6)          # the extrapolation hits the true cost
    assert lean.estimate_fit_seconds(lambda: Model(1.0), X, y, sample_size=400)[3] == lean.GROWTH_MIN
    assert lean.estimate_fit_seconds(lambda: Model(4.0), X, y, sample_size=400)[3] == lean.GROWTH_MAX


def test_a_far_extrapolation_is_timed_again_at_a_middle_size(monkeypatch):
    """Small fits dominated by a fixed overhead look flat (p clipped to 1.5); far beyond them one
    two more fits at the geometric middle and half of it measure the real growth."""
    from leansvm.job import candidates as lean

    class Model:
        def fit(self, X, y):
            return self

    def cost(n):                       # 5 ms of overhead, then n^1.9
        return 0.005 + 2e-8 * n ** 1.9

    monkeypatch.setattr(lean, "_timed", lambda fn, X, y: (fn(X, y), cost(X.shape[0])))
    X = np.zeros((200_000, 2))
    y = np.arange(200_000) % 2
    est, measured, size, p = lean.estimate_fit_seconds(Model, X, y, sample_size=500)
    assert size == int(np.sqrt(500 * 200_000)) and measured == pytest.approx(cost(size))
    small_only = cost(500) * 400 ** lean.GROWTH_MIN         # what the two small fits alone would say
    assert small_only < 0.3 * cost(200_000) and est == pytest.approx(cost(200_000), rel=0.15)
    monkeypatch.setattr(lean, "MIDDLE_SECONDS", 1e9)       # not far enough: no third fit
    assert lean.estimate_fit_seconds(Model, X[:6000], y[:6000], sample_size=500)[2] == 500


def _paired(name, n, pred, y, kind="budget"):
    c = Candidate(name, kind, None, n, 0.0, validation_accuracy=float(np.mean(pred == y)))
    c.validation_predictions = pred
    return c


def choose_model(candidates, reference, y_val, max_accuracy_drop, confidence=0.95):
    """The choice's rule (:func:`choose_fewest`) by classification's paired drop on ``y_val``."""
    return choose_fewest(ClassificationTask(y_val, max_accuracy_drop, confidence), candidates, reference)


def test_choose_model_takes_the_smallest_whose_drop_bound_is_within():
    """400 rows, the exact model right on 360. 'near' is wrong on one more row: drop 0.25 points,
    SE sqrt(((1 + 2) / 402 - 0.0025^2) / 400) = 0.43 points, 95 % bound 0.96: within 1 point,
    not within 0.5. 'far' has the same accuracy but differs on 41 rows (SE 1.6 points): within
    neither. The exact model is the choice when nothing else qualifies."""
    y = np.ones(400, int)
    exact_pred = np.r_[np.ones(360, int), np.zeros(40, int)]
    near_pred = exact_pred.copy()
    near_pred[0] = 0
    far_pred = np.r_[np.zeros(21, int), np.ones(339, int), np.ones(20, int), np.zeros(20, int)]
    assert np.mean(far_pred == y) == np.mean(near_pred == y) == 359 / 400
    exact = _paired("exact", 100, exact_pred, y, kind="exact")
    near, far = _paired("near", 20, near_pred, y), _paired("far", 10, far_pred, y)
    assert choose_model([exact, near, far], exact, y, 0.01).name == "near"
    assert near.drop.mean == pytest.approx(0.0025)
    assert near.drop.se == pytest.approx(np.sqrt((3 / 402 - 0.0025 ** 2) / 400))
    assert near.drop.upper == pytest.approx(0.0025 + 1.6449 * near.drop.se, rel=1e-4)
    assert choose_model([exact, near, far], exact, y, 0.005).name == "exact"
    assert choose_model([exact, near, far], exact, y, 0.05).name == "far"
    # a lower confidence lowers the bar: 'near' within 0.5 points at 70 % (z = 0.52)
    assert choose_model([exact, near, far], exact, y, 0.005, confidence=0.7).name == "near"
    # the reference is the exact model, never a better candidate
    lucky = _paired("lucky", 50, np.ones(400, int), y)
    choose_model([exact, lucky, near], exact, y, 0.01)
    assert lucky.drop.mean == pytest.approx(-0.1) and near.drop.mean == pytest.approx(0.0025)


def test_a_candidate_surely_better_than_a_subsample_exact_model_becomes_the_reference():
    """The budget route: the exact SVC right on 340 of 400 rows; 'strong' right on 380 (every row the
    exact one has, and 40 more): its drop -10 points, bound far below 0, so it is the reference.
    'copy' labels as the exact model: within 1 point of it (bound 0.58 points), 10 points under 'strong', so it no
    longer qualifies. A candidate only slightly ahead (one row) leaves the exact model the reference."""
    from leansvm.job.choice import stronger_reference
    from leansvm.job.records import JobLog

    y = np.ones(400, int)
    task = ClassificationTask(y, 0.01)
    exact_pred = np.r_[np.ones(340, int), np.zeros(60, int)]
    exact = _paired("exact", 1000, exact_pred, y, kind="exact")
    exact.n_rows = 2000
    strong = _paired("strong", 300, np.r_[np.ones(380, int), np.zeros(20, int)], y)
    copy = _paired("copy", 20, exact_pred.copy(), y)
    assert choose_model([exact, strong, copy], exact, y, 0.01).name == "copy"
    log = JobLog(False)
    reference = stronger_reference(task, [exact, strong, copy], exact, 4000, log)
    assert reference is strong and log.steps[-1].stage == "reference" and "strong" in log.steps[-1].choice
    assert "had 2000 of the 4000 fit rows" in log.steps[-1].reason
    assert choose_model([exact, strong, copy], reference, y, 0.01).name == "strong" and strong.drop is None
    assert copy.drop.mean == pytest.approx(0.10) and exact.drop.mean == pytest.approx(0.10)
    slightly = _paired("slightly", 300, np.r_[np.ones(341, int), np.zeros(59, int)], y)
    assert stronger_reference(task, [exact, slightly, copy], exact, 4000, log) is exact
    # the table, report and plot name what the drops are against
    from leansvm.job.records import LeanResult
    result = LeanResult(None, strong, [exact, strong, copy], None, "budget", log.steps, {}, 0.01)
    assert result.reference_name() == "exact"
    result.reference = strong
    assert result.reference_name() == "strong"
    result.reference = exact
    assert result.reference_name() == "exact"


class _Lookup:
    """A 'model' of known rows: the label of each row it is asked about, except on every fifth row
    outside ``lucky_rows`` (``lucky_rows=None``: every row right)."""

    def __init__(self, X=None, y=None, lucky_rows=()):
        self.X, self.y, self.lucky_rows = X, y, lucky_rows

    def fit(self, X_fit, y_fit):
        return self

    def get_params(self, deep=True):
        return {"X": self.X, "y": self.y, "lucky_rows": self.lucky_rows}

    def set_params(self, **params):
        self.__dict__.update(params)
        return self

    def predict(self, X_part):
        rows = [int(np.flatnonzero((self.X == x).all(axis=1))[0]) for x in X_part]
        return np.array([self.y[i] if self.lucky_rows is None or i in self.lucky_rows or i % 5 else 1 - self.y[i]
                         for i in rows])


def _lucky_folds():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=1000) > 0).astype(int)
    folds = [(np.arange(200, 1000), np.arange(200)), (np.r_[0:200, 400:1000], np.arange(200, 400)),
             (np.r_[0:400, 600:1000], np.arange(400, 600))]
    return X, y, folds


def test_the_folds_try_equal_sizes_in_the_choice_s_order():
    """Two candidates of one size, both right on every fold: the folds confirm the one the validation
    part chose (ties to the smaller bound), not the one listed first."""
    from leansvm.job.candidates import exact_svc
    from leansvm.job.choice import confirm_on_folds

    X, y, folds = _lucky_folds()
    exact = leansvm.SVC(C=1.0, gamma=0.5).fit(X[folds[0][0]], y[folds[0][0]])
    reference = _paired("exact", 300, exact.predict(X[:200]), y[:200], kind="exact")
    reference.model, reference.fit_seconds = exact, 0.1
    one_off = y[:200].copy()
    one_off[0] = 1 - one_off[0]
    first = _paired("BSGD B=10", 10, one_off, y[:200])                 # one validation row wrong
    second = _paired("Nystroem B=10", 10, y[:200].copy(), y[:200])      # none wrong: the smaller bound
    for c in (first, second):
        c.model, c.fit_seconds = _Lookup(X, y, None), 0.1
    assert choose_model([reference, first, second], reference, y[:200], 0.02) is second
    job = JobContext(X, y, folds, ClassificationTask(y[folds[0][1]], 0.02))
    assert confirm_on_folds(job, [reference, first, second], reference, lambda: exact_svc(1.0, 0.5)) is second


def test_a_smaller_near_miss_the_folds_accept_is_logged_in_place_of_the_choice():
    """A smaller candidate two validation rows short of the limit, right on every other fold: the folds
    accept it before the validation part's choice, and the step's line says it came in place of it."""
    from leansvm.job.candidates import exact_svc
    from leansvm.job.choice import confirm_on_folds
    from leansvm.job.records import JobLog

    X, y, folds = _lucky_folds()
    exact = leansvm.SVC(C=1.0, gamma=0.5).fit(X[folds[0][0]], y[folds[0][0]])
    predicted = exact.predict(X[:200])
    reference = _paired("exact", 300, predicted, y[:200], kind="exact")
    reference.model, reference.fit_seconds = exact, 0.1
    near = predicted.copy()
    right = np.flatnonzero(predicted == y[:200])[:2]
    near[right] = 1 - near[right]                                    # two rows the exact model gets right
    small = _paired("BSGD B=5", 5, near, y[:200])
    large = _paired("Nystroem B=10", 10, predicted.copy(), y[:200])   # as the exact model on validation
    for c in (small, large):
        c.model, c.fit_seconds = _Lookup(X, y, None), 0.1
    assert choose_model([reference, small, large], reference, y[:200], 0.02) is large
    log = JobLog(False)
    job = JobContext(X, y, folds, ClassificationTask(y[folds[0][1]], 0.02), log=log)
    assert confirm_on_folds(job, [reference, small, large], reference, lambda: exact_svc(1.0, 0.5)) is small
    step = log.steps[-1]
    assert step.choice == "BSGD B=5 in place of Nystroem B=10: confirmed on 2 other folds"
    assert "smaller than Nystroem B=10, it missed the target on the validation part alone" in step.reason


def test_a_candidate_lucky_on_one_hold_out_is_refused(monkeypatch):
    """The planted case: on a small hold-out a budget model looks as good as the exact one, while it is
    worse on the other folds. One hold-out accepts it; the folds pooled by confirm_on_folds refuse it."""
    from leansvm.job.candidates import exact_svc
    from leansvm.job.choice import confirm_on_folds

    X, y, folds = _lucky_folds()
    exact = leansvm.SVC(C=1.0, gamma=0.5).fit(X[folds[0][0]], y[folds[0][0]])
    reference = _paired("exact", 300, exact.predict(X[:200]), y[:200], kind="exact")
    reference.model, reference.fit_seconds = exact, 0.1
    lucky = _paired("BSGD B=10", 10, np.where(exact.predict(X[:200]) == y[:200], y[:200], 1 - y[:200]), y[:200])
    lucky.model, lucky.fit_seconds = _Lookup(X, y, frozenset(range(200))), 0.1
    lucky.validation_predictions = exact.predict(X[:200])          # as right as the exact model there
    lucky.validation_accuracy = reference.validation_accuracy
    assert choose_model([reference, lucky], reference, y[:200], 0.02).name == "BSGD B=10"
    job = JobContext(X, y, folds, ClassificationTask(y[folds[0][1]], 0.02))
    chosen = confirm_on_folds(job, [reference, lucky], reference, lambda: exact_svc(1.0, 0.5))
    assert chosen is reference and lucky.drop.folds == 3 and lucky.drop.mean > 0.02

    # a fold needs the exact model and the candidate's: when both do not fit the time limit, no exact
    # fold model is trained for nothing, and the candidate is judged on the hold-out alone
    lucky.fit_seconds, calls = 30.0, []
    choose_model([reference, lucky], reference, y[:200], 0.02)     # its estimate on the validation part again
    kept = confirm_on_folds(job, [reference, lucky], reference, lambda: calls.append(1) or pytest.fail("trained"),
                            time_limit=20.0)
    assert calls == [] and lucky.drop.folds == 1 and kept is lucky


def test_finalists_the_folds_could_not_reach_keep_their_hold_out_verdict():
    """pool_folds on a scripted clock: the smaller finalist fails on the folds and uses the time; the
    larger one, which no fold can hold any more, is judged on the validation part alone and accepted
    there (it is not left unjudged, which returned the exact model on letter); one that fails there
    is not."""
    from types import SimpleNamespace

    from leansvm.job import choice

    clock = [0.0]
    small, large = SimpleNamespace(name="small", fit_seconds=4.0), SimpleNamespace(name="large", fit_seconds=50.0)

    def candidate_on_fold(c, k, reference_model):
        clock[0] += 0.0 if k == 0 else c.fit_seconds       # a fold's model takes its fit time
        return (c.name, k)

    judged = []

    def judge(c, reference_evidence, evidence):
        assert len(reference_evidence) == len(evidence) and evidence[0] == (c.name, 0)
        judged.append((c.name, len(evidence)))
        return c is large and large_passes

    for large_passes in (True, False):
        clock[0], judged[:] = 0.0, []
        accepted, tried, out_of_time = choice.pool_folds([small, large], 5, lambda k: (f"exact {k}", k),
                                                         candidate_on_fold, judge, 0.0,
                                                         seconds_left=lambda: 10.0 - clock[0])
        # small: folds 1 and 2 end at 4 and 8 s, fold 3 would end at 12 s, past the limit
        assert judged == [("small", 3), ("large", 1)] and out_of_time
        assert tried == [(small, 3), (large, 1)]
        assert accepted is (large if large_passes else None)
    note = choice.tried_note(tried, 5, out_of_time)
    assert "small on 3 folds, large on the validation part alone" in note and "short of 5" in note


def test_a_second_confirmation_on_the_same_folds_reuses_their_exact_models():
    from leansvm.job import choice
    small, large = (Candidate(name, "compressed", None, n, 1.0) for name, n in (("small", 10), ("large", 20)))
    trained, references = [], {}

    def reference_on_fold(k):
        trained.append(k)
        return f"exact {k}", k

    for finalists in ([small], [large]):
        choice.pool_folds(finalists, 4, reference_on_fold, lambda c, k, model: (c.name, k),
                          lambda c, ref, ev: False, 0.0, references=references)
    assert trained == [0, 1, 2, 3] and sorted(references) == [0, 1, 2, 3]


def test_fit_lean_infers_the_task_as_the_command_does():
    from leansvm.job.records import LeanResult

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    regression = leansvm.fit_lean(X, X[:, 0] + 0.1 * rng.normal(size=300), Cs=[1.0], gamma_factors=[1.0],
                                  size_fractions=(0.2,))
    assert isinstance(regression, LeanResult) and regression.task == "regression"
    assert regression.model.predict(X[:3]).shape == (3,) and set(regression.params) == {"C", "gamma", "epsilon"}
    labels = (X[:, 0] > 0).astype(int)
    classification = leansvm.fit_lean(X, labels, **GRID)
    assert isinstance(classification, LeanResult) and classification.task == "classification"
    assert set(classification.params) == {"C", "gamma"}
    novelty = leansvm.fit_lean(X, task="novelty", size_fractions=(0.2,))
    assert isinstance(novelty, LeanResult) and novelty.task == "novelty"
    assert set(novelty.model.predict(X[:20])) <= {-1, 1}
    with pytest.raises(ValueError, match="task must be one of"):
        leansvm.fit_lean(X, labels, task="clustering")


def test_confidence_is_checked_by_name():
    X, y = make_moons(60, random_state=0)
    for bad in (0, 1, 1.5, -0.1, "high"):
        with pytest.raises(ValueError, match="confidence"):
            fit_lean(X, y, confidence=bad, **GRID)


def test_budget_route_when_exact_training_exceeds_the_budget(moons):
    X, y, Xt, yt = moons
    r = fit_lean(X, y, X_test=Xt, y_test=yt, budget_seconds=1e-6, **GRID)
    assert r.route == "budget"
    exact = [c for c in r.candidates if c.kind == "exact"]
    assert len(exact) == 1 and exact[0].name.startswith("exact SVC (")  # on a subsample
    # budget models on all rows: each family's first one at least, whose timing fit took every row; and
    # ReducedSVC's first size, stopped by the time left (the model as far as it got)
    assert {c.name.split()[0] for c in r.candidates if c.kind == "budget"} == {"BSGD", "Nystroem", "ReducedSVC"}
    # its sizes: fractions of the subsample's exact model and the fixed ones below the rows
    from leansvm.job.candidates import budget_route_sizes
    sizes = budget_route_sizes(exact[0].n_support, 280, GRID["size_fractions"])
    step = next(s for s in r.steps if s.stage == "budget")
    assert "fixed sizes " + ", ".join(map(str, sizes)) + ":" in step.reason
    # the choice names the sizes trained: each family's first, the rest left out for lack of time
    assert step.choice.endswith(f"B = {sizes[0]}") and "left out for lack of time" in step.reason
    assert r.libsvm_seconds_per_1000 is None
    assert any(s.stage == "route" and "over its share of the budget" in s.reason for s in r.steps)
    # a budget choice is refit on all rows on this route too (it needs no exact solve)
    if r.chosen.kind == "budget":
        assert r.final.kind == "refit" and r.final is not r.chosen
    assert r.chosen.test_accuracy > 0.85


def test_a_timing_fit_on_every_row_is_kept_not_repeated(moons, monkeypatch):
    """Under a time limit each family's first model is timed on a subsample beforehand; on fewer
    than 5,000 rows that subsample is every row, so the timed fit is the model itself: one fit per
    family, kept even when the limit is already spent, and the next budget left out."""
    from leansvm.job.candidates import train_budget_models
    from leansvm.job.records import JobLog

    X, y = moons[0], moons[1]
    fits = []
    for cls in (leansvm.BSGDClassifier, LandmarkSVC):
        monkeypatch.setattr(cls, "fit", lambda self, *a, _real=cls.fit, **k: fits.append(self) or _real(self, *a, **k))
    log = JobLog(False)
    made = train_budget_models(_context(X, y, ClassificationTask(y[:0], 0.01), X.shape[0], log), 1.0, 0.5, [10, 20],
                               time_limit=0.0)
    assert [c.name for c in made] == ["BSGD B=10", "Nystroem B=10"]
    assert len(fits) == 2 and [c.model for c in made] == fits
    assert "left out for lack of time" in log.steps[-1].reason and "B=20" in log.steps[-1].reason


def test_landmark_model_is_the_nystroem_pipeline_as_an_expansion():
    from sklearn.kernel_approximation import Nystroem
    from sklearn.svm import LinearSVC

    X, y = make_blobs(300, centers=3, n_features=4, cluster_std=2.0, random_state=0)
    model = LandmarkSVC(budget=25, C=1.0, gamma=0.2, random_state=0).fit(X, y)
    nys = Nystroem(gamma=0.2, n_components=25, random_state=0).fit(X)
    lin = LinearSVC(C=1.0, max_iter=2000).fit(nys.transform(X), y)
    np.testing.assert_allclose(model.decision_function(X), lin.decision_function(nys.transform(X)),
                               rtol=1e-6, atol=1e-6)
    assert model.expansion_.n_support == 25


def test_string_labels_are_saved_natively_and_round_trip(tmp_path, capsys):
    X, y = make_blobs(240, centers=3, n_features=3, random_state=3)
    labels = np.array(["ant", "bee", "cat"])[y]
    r = fit_lean(X, labels, Cs=[1.0], gammas=[0.3], size_fractions=(), libsvm_reference_model=False)
    capsys.readouterr()
    path = save_result_model(r, tmp_path / "model.txt")
    assert path.endswith(".npz")
    note = capsys.readouterr().err         # says where the model went and why, in lines a terminal holds
    joined = note.replace("\n  ", " ")
    assert joined.startswith("note: wrote leansvm's native format to ") and "model.txt.npz" in joined
    assert "a LIBSVM model file cannot hold this model" in joined
    assert max(len(line) for line in note.splitlines()) <= 100
    loaded = io.load_model(path)
    np.testing.assert_array_equal(loaded.predict(X), r.model.predict(X))


@pytest.mark.parametrize("kwargs, message", [
    (dict(max_accuracy_drop=5.0), "fraction"),
    (dict(budget_seconds=0), "budget_seconds"),
    (dict(validation_fraction=1.5), "validation_fraction"),
])
def test_bad_parameters(moons, kwargs, message):
    X, y, _, _ = moons
    with pytest.raises(ValueError, match=message):
        fit_lean(X, y, **GRID, **kwargs)


def test_bad_data():
    X, y = make_moons(60, random_state=0)
    X_nan = X.copy()
    X_nan[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fit_lean(X_nan, y, **GRID)
    with pytest.raises(ValueError, match="two classes"):
        fit_lean(X, np.zeros(60), **GRID)
    with pytest.raises(ValueError, match="regression targets .* leansvm.fit_lean"):
        fit_lean(X, X[:, 0] * 1.7 + 0.01, **GRID)


def test_report_embeds_every_plot_as_png(moons_result):
    page, names = render_report(moons_result)
    assert {"surface", "accuracy-size", "cost", "boundaries"} <= set(names)
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == len(names)
    for data in images:
        assert base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n"
    assert "http://" not in page and "https://" not in page  # self-contained
    for step in moons_result.steps:
        if step.fallback:
            assert "fallback: " in page


def test_cli_fit_writes_a_libsvm_model_and_a_report(tmp_path, moons, capsys):
    X, y, Xt, yt = moons
    train, test = tmp_path / "train.svm", tmp_path / "test.svm"
    dump_svmlight_file(X, 2 * y - 1, str(train), zero_based=False)
    dump_svmlight_file(Xt, 2 * yt - 1, str(test), zero_based=False)
    model, report = tmp_path / "m.model", tmp_path / "r.html"
    status = cli.main(["fit", str(train), "--test", str(test), "-o", str(model), "--report", str(report),
                       "--max-accuracy-drop", "1%", "--C-grid", "1", "10", "--gamma-grid", "0.5", "2", "-v"])
    out = capsys.readouterr().out
    assert status == 0
    assert "[select]" in out and "[choose]" in out and "model written to" in out
    # percentage points on the command line (the log wraps its reasons: compared without the line breaks)
    assert "within 1 points at 95 % confidence" in " ".join(out.split())
    assert "[scale]" in out
    # the kernel model is on scaled features; svm-scale's range file beside it says how
    lines = (tmp_path / "m.model.range").read_text().split("\n")
    assert lines[0] == "x" and lines[1].split() == ["-1", "1"]
    feature = {int(i): (float(lo), float(hi)) for i, lo, hi in (line.split() for line in lines[2:] if line)}

    def svm_scale(rows):        # svm-scale -r, written from its documented formula, not leansvm's code
        return [{i: -1 + 2 * (v - feature[i][0]) / (feature[i][1] - feature[i][0])
                 for i, v in enumerate(row, 1) if i in feature} for row in rows.tolist()]

    loaded = io.load_libsvm_model(model)
    scaled = np.array([[r[i] for i in sorted(r)] for r in svm_scale(Xt)])
    assert (loaded.predict(scaled) == 2 * yt - 1).mean() > 0.85
    assert "1 percentage points" in report.read_text()
    # `leansvm predict` applies the range file by itself
    assert cli.main(["predict", str(test), str(model), str(tmp_path / "p.txt")]) == 0
    assert "scaling the data by" in capsys.readouterr().err
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "p.txt"), loaded.predict(scaled))
    # LIBSVM itself reads the file and, on svm-scale'd data, predicts the same labels
    svmutil = pytest.importorskip("libsvm.svmutil")
    m = svmutil.svm_load_model(str(model))
    pred, _, _ = svmutil.svm_predict(list(2 * yt - 1), svm_scale(Xt), m, "-q")
    np.testing.assert_array_equal(np.array(pred), loaded.predict(scaled))


def test_cli_fit_refuses_a_bare_drop_that_reads_as_points(tmp_path, capsys):
    """--max-accuracy-drop takes Python's unit: 0.5 would be 50 points, so it is refused naming '0.5%'."""
    assert cli.main(["fit", "whatever", "-o", str(tmp_path / "m"), "--max-accuracy-drop", "0.5"]) == 2
    err = capsys.readouterr().err
    assert "--max-accuracy-drop" in err and "'0.5%'" in err
    assert cli.main(["fit", "whatever", "-o", str(tmp_path / "m"), "--max-accuracy-drop", "150%"]) == 2


def test_size_search_reuses_one_eigendecomposition_and_gets_the_same_models(moons, monkeypatch):
    """compress at two sizes inside reuse_eigendecompositions: one eigh of K_SS instead of two, same models."""
    import scipy.linalg

    from leansvm import SVC, compress
    from leansvm.compression import cvm

    X, y, _, _ = moons
    full = SVC(C=10.0, gamma=2.0).fit(X, y)
    calls = []
    real = scipy.linalg.eigh

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(scipy.linalg, "eigh", counting)
    plain = [compress(full, n_sv=n, max_iter=5, random_state=0) for n in (5, 10)]
    assert len(calls) == 2
    calls.clear()
    with cvm.reuse_eigendecompositions():
        reused = [compress(full, n_sv=n, max_iter=5, random_state=0) for n in (5, 10)]
    assert len(calls) == 1
    assert cvm._EIGH_MEMO is None                      # released after the block
    for a, b in zip(plain, reused):
        np.testing.assert_array_equal(a.expansion_.support_vectors, b.expansion_.support_vectors)
        np.testing.assert_array_equal(a.expansion_.coef, b.expansion_.coef)


def test_default_search_is_the_wide_search_with_balanced_class_weights(tmp_path):
    """No grid given: the wide search (leansvm.paths.search) picks (C, gamma) on every training row; with
    class_weight='balanced' the search, the exact models and LIBSVM's reference weigh C per class;
    the report draws the searched cells; the CLI takes --class-weight balanced."""
    X, y = make_blobs([300, 40], centers=[[0, 0], [1.5, 1.5]], cluster_std=1.0, random_state=1)
    r = fit_lean(X, y, class_weight="balanced", size_fractions=(0.2,), max_accuracy_drop=0.01)
    sel = r.selection
    assert sel.search is not None and sel.method.startswith("wide search")
    assert (sel.C, sel.gamma) == (sel.search.C, sel.search.gamma)
    assert sel.n_samples == X.shape[0] and sel.n_folds == 5 and sel.se > 0
    # the best cell (default): the highest mean CV accuracy of the last round
    assert sel.search.accuracy == max(c.accuracy for c in sel.search.final_cells()) == np.nanmax(sel.accuracy)
    exact = next(c for c in r.candidates if c.kind == "exact")
    assert exact.model.class_weight == "balanced"
    html, names = render_report(r)
    assert "surface" in names and "wide search" in html
    data = tmp_path / "blobs.txt"
    dump_svmlight_file(X, y.astype(int), str(data), zero_based=False)
    assert cli.main(["fit", str(data), "-o", str(tmp_path / "m.txt"), "--class-weight", "balanced", "-q"]) == 0
    assert (tmp_path / "m.txt").exists()


def test_the_reduced_family_doubles_from_the_small_end_and_bounds_compression(moons_result):
    """ReducedSVC from the labels at doubling sizes, stopping at the first that qualifies; compression
    then tries only sizes below the smallest qualifying model."""
    r = moons_result
    reduced = [c for c in r.candidates if c.name.startswith("ReducedSVC")]
    assert reduced and all(c.kind == "budget" and c.drop is not None for c in reduced)
    sizes = [c.n_support for c in reduced]
    assert sizes == [sizes[0] * 2 ** i for i in range(len(sizes))]
    assert not any(c.drop.within(r.max_accuracy_drop) for c in reduced[:-1])
    qualified = [c.n_support for c in r.candidates if c.kind in ("budget", "compressed") and c.drop is not None
                 and c.drop.folds == 1 and c.drop.within(r.max_accuracy_drop)]
    step = next(s for s in r.steps if s.stage == "reduced")
    assert "sizes tried " + ", ".join(map(str, sizes)) in step.reason
    compressed = [c.n_support for c in r.candidates if c.kind == "compressed"]
    assert all(n < min(qualified) for n in compressed if reduced[-1].drop.within(r.max_accuracy_drop))


def test_the_reduced_family_is_left_out_with_class_weights_and_says_why(moons):
    from leansvm.job.candidates import train_exact
    from leansvm.job.records import JobLog
    from leansvm.job.reduced import reduced_sizes, train_reduced_models

    X, y, Xt, yt = moons
    exact = train_exact(X, y, 10.0, 0.5)
    log = JobLog(False)
    job = _context(X, y, ClassificationTask(y[280:], 0.01, class_weight="balanced"), 280, log)
    assert train_reduced_models(job, exact, 10.0, 0.5) == []
    assert log.steps[-1].stage == "reduced" and "class weights" in log.steps[-1].reason
    assert reduced_sizes(1000, 2) == [10, 20, 40, 80, 160, 320, 640]
    assert reduced_sizes(40000, 2, below=1000) == [400, 800]
    assert reduced_sizes(10**6, 2) == [1250, 2500, 5000]              # a quarter of MAX_VECTORS at most to start
    assert reduced_sizes(100000, 26) == [1000, 2000, 4000]          # at most MAX_VECTORS
    assert reduced_sizes(8, 2) == []


def test_a_reduced_model_stopped_by_its_time_limit_is_trained_on_in_the_time_left():
    """The teacher-free split's one size: where the time stopped it and time is left, the same model is
    trained on from where it stopped (no new start), validated as a candidate of its own, and its
    parameters are those of one fit of the whole time (what a refit repeats)."""
    from leansvm import SVC, ReducedSVC
    from leansvm.job.helpers import _validate
    from leansvm.job.records import JobLog
    from leansvm.job.reduced import continue_in_the_time_left

    X, y = make_moons(3000, noise=0.25, random_state=0)
    X_fit, y_fit, X_val, y_val = X[:2400], y[:2400], X[2400:], y[2400:]
    short = ReducedSVC(n_vectors=12, gamma=1.0, max_seconds=1e-9, subsample=500, random_state=0).fit(X_fit, y_fit)
    assert short.fit_status_ == 1                                       # stopped at its start
    last = Candidate("ReducedSVC B=12", "budget", short, 12, 0.05)
    reference = _validate(Candidate("exact SVC", "exact", SVC(gamma=1.0).fit(X_fit, y_fit), 0, 1.0), X_val, y_val)
    log = JobLog(False)
    job = _context(X, y, ClassificationTask(y_val, 0.005, 0.95), 2400, log)
    [more] = continue_in_the_time_left(job, last, reference, 2.0)
    assert more.model is not short and more.n_support == 12 and more.model.n_iter_ > 0
    assert not np.allclose(more.model.expansion_.support_vectors, short.expansion_.support_vectors)
    assert more.validation_accuracy >= short.score(X_val, y_val) - 0.01
    assert more.model.get_params()["warm_start"] is False and more.model.get_params()["subsample"] == 500
    assert more.model.get_params()["max_seconds"] == pytest.approx(1e-9 + more.fit_seconds - 0.05)
    assert log.steps[-1].stage == "reduced" and "trained on" in log.steps[-1].choice
    finished = Candidate("ReducedSVC B=12", "budget", ReducedSVC(n_vectors=12).fit(X_fit[:300], y_fit[:300]), 12, 1.0)
    assert continue_in_the_time_left(job, finished, reference, 2.0) == []   # it ended on its own: nothing to go on with
    assert continue_in_the_time_left(job, last, reference, 0.5) == []       # under a second left


def test_time_left_when_nothing_qualified_goes_to_the_next_reduced_size():
    from leansvm.job.reduced import MAX_VECTORS, next_size_in_the_time_left

    task = _majority_task(0.5)

    tried = [Candidate("ReducedSVC B=329", "budget", None, 329, 16.0)]
    exact = Candidate("exact SVC", "exact", None, 32856, 23.0)
    assert next_size_in_the_time_left(task, tried, exact, 38.0) == [658]
    assert next_size_in_the_time_left(task, tried, exact, 0.0) == []
    assert next_size_in_the_time_left(task, [], exact, 38.0) == []
    assert next_size_in_the_time_left(task, tried, exact, 10.0) == []       # under the last size's 16 s
    assert next_size_in_the_time_left(task, tried, Candidate("exact SVC", "exact", None, 600, 1.0), 38.0) == []
    big = [Candidate("ReducedSVC B=2600", "budget", None, 2600, 16.0)]
    assert next_size_in_the_time_left(task, big, exact, 38.0) == ([5200] if 5200 <= MAX_VECTORS else [])


def test_a_reduced_family_within_reach_of_the_target_gets_its_next_size_on_the_last_sizes_time():
    """synth-200k at 300 s: 379 vectors missed by 0.07 points after 31 s with 28 s left. Within reach
    (the miss under what the last doubling gained, or under 2 % of the miss of chance) the next size
    starts on the last size's time, not twice it; a family far from the target still needs twice."""
    from leansvm.job.reduced import REACH_OF_CHANCE, next_size_seconds, within_reach

    task = _majority_task(0.5)                      # chance misses the target by 0.965 - 0.5
    near = _missed([190, 379], [0.0040, 0.0007], required=0.965)
    far = _missed([190, 379], [0.0300, 0.0200], required=0.965)
    for c, seconds in zip(near + far, (15.0, 31.0, 15.0, 31.0)):
        c.fit_seconds = seconds
    assert within_reach(task, near) and next_size_seconds(task, near) == 31.0
    assert not within_reach(task, far) and next_size_seconds(task, far) == 62.0
    one = _missed([379], [0.5 * REACH_OF_CHANCE * (0.965 - 0.5)], required=0.965)
    assert within_reach(task, one)                  # one size: judged against the miss of chance
    assert not within_reach(task, _missed([379], [2 * REACH_OF_CHANCE * (0.965 - 0.5)], required=0.965))
    assert not within_reach(task, [])


def _context(X, y, task, n_fit, log=None):
    """A classification job's context: the first ``n_fit`` rows fit, the rest validate."""
    from leansvm.job.records import JobLog

    folds = [(np.arange(n_fit), np.arange(n_fit, X.shape[0]))]
    return JobContext(X, y, folds, task, log=log or JobLog(False))


def _majority_task(share):
    """A classification task whose validation part's majority class has ``share`` of 100 rows."""
    k = int(round(100 * share))
    return ClassificationTask(np.r_[np.zeros(k, int), np.ones(100 - k, int)], 0.005)


def _missed(sizes, misses, required=0.97):
    return [Candidate(f"ReducedSVC B={n}", "budget", None, n, 1.0, validation_accuracy=required - m,
                      required_accuracy=required) for n, m in zip(sizes, misses)]


def test_the_reduced_family_stops_doubling_where_its_misses_shrink_too_slowly():
    """splice's measured misses (points) at 30-240 vectors against a 1,882-vector exact model: out of
    reach, so neither the stage nor the time left trains 480; a curve still closing fast, or one
    still near the majority class's accuracy, goes on."""
    from leansvm.job.reduced import next_size_in_the_time_left, out_of_reach

    splice = _missed([30, 60, 120, 240], [0.0187, 0.0118, 0.0149, 0.0266])
    exact = Candidate("exact SVC", "exact", None, 1882, 0.1)
    assert out_of_reach(_majority_task(0.52), splice, 1882)
    assert next_size_in_the_time_left(_majority_task(0.52), splice, exact, 200.0) == []
    assert not out_of_reach(_majority_task(0.52), splice[:2], 1882)                      # two sizes: no rate yet
    closing = _missed([30, 60, 120, 240], [0.04, 0.03, 0.02, 0.01])
    assert not out_of_reach(_majority_task(0.52), closing, 1882)
    assert next_size_in_the_time_left(_majority_task(0.52), closing, exact, 200.0) == [480]
    assert not out_of_reach(_majority_task(0.96), splice, 1882)                          # near chance: not yet rising


def test_compression_tries_no_size_at_or_above_a_model_that_already_qualifies(moons):
    """``below``: sizes stop under the #SV of the smallest qualifying model (a larger compressed model
    could not be chosen); an unreachable target shows it."""
    from leansvm.job.candidates import compress_models, train_exact

    if getattr(leansvm, "compress", None) is None:
        pytest.skip("leansvm.compress not available")
    X, y, Xt, yt = moons
    exact = train_exact(X[:280], y[:280], 10.0, 0.5)
    job = _context(X, y, ClassificationTask(y[280:], -0.1), 280)
    out = compress_models(job, exact, below=12)
    assert out and max(c.n_support for c in out) < 12
    unbounded = compress_models(job, exact)
    assert max(c.n_support for c in unbounded) >= 12


def test_the_size_search_runs_fewer_iterations_than_the_refit(moons):
    """Each compression of the size search stops within SEARCH_ITERATION_RANGE (a cheap point of the
    accuracy-against-size curve); compress's own count, used by the refit, may run up to 3000."""
    from leansvm.compression.compressed_svc import ITERATION_RANGE
    from leansvm.job.candidates import SEARCH_ITERATION_RANGE, compress_models, train_exact

    if getattr(leansvm, "compress", None) is None:
        pytest.skip("leansvm.compress not available")
    X, y, Xt, yt = moons
    exact = train_exact(X[:280], y[:280], 10.0, 0.5)
    out = compress_models(_context(X, y, ClassificationTask(y[280:], -0.1), 280), exact, below=12)
    lo, hi = SEARCH_ITERATION_RANGE
    assert out and all(lo <= c.model.compression_["max_iter"] <= hi for c in out)
    full = leansvm.compress(exact.model, n_sv=out[0].n_support, X=X[:280], y=y[:280], random_state=0)
    assert full.compression_["max_iter"] > hi and full.compression_["max_iter"] <= ITERATION_RANGE[1]


def test_multiclass_compressions_get_the_shorter_iteration_bounds():
    """search_iterations: 300-1000 L-BFGS iterations for a binary RBF model, 100-300 for a one-vs-one
    model of three classes (letter's measurement, candidates.MULTICLASS_ITERATION_RANGE) and for a
    kernel whose objective runs on the whole matrix."""
    from leansvm.job.candidates import (MULTICLASS_ITERATION_RANGE, SEARCH_ITERATION_RANGE,
                                        WHOLE_MATRIX_ITERATION_RANGE, search_iterations)

    X, y = make_blobs(150, centers=3, random_state=0)
    assert search_iterations(leansvm.SVC(gamma=0.5).fit(X, y)) == MULTICLASS_ITERATION_RANGE
    assert search_iterations(leansvm.SVC(gamma=0.5).fit(X, y == 0)) == SEARCH_ITERATION_RANGE
    assert search_iterations(leansvm.SVC(kernel="poly").fit(X, y == 0)) == WHOLE_MATRIX_ITERATION_RANGE


def test_the_size_search_stops_when_its_misses_stop_shrinking():
    """doubling_out_of_reach on sequences measured by ``leansvm fit``: magic's misses (required minus
    validation accuracy) stayed about a point over 39, 78, 156 vectors, with 389 the largest size: the
    search stops; page-blocks0's dipped at 20 vectors (one poor compression) and reached the target at 160:
    it goes on at every size; a curve still at chance level goes on however flat."""
    from leansvm.job.candidates import doubling_out_of_reach as out_of_reach

    magic = ([39, 78, 156], [0.877 - 0.8663, 0.8767 - 0.8673, 0.8768 - 0.8656])
    assert not out_of_reach(magic[0][:2], magic[1][:2], 389, 0.877 - 0.65)      # two sizes: no trend yet
    assert out_of_reach(*magic, 389, 0.877 - 0.65)
    assert not out_of_reach(*magic, 389 * 2 ** 20, 0.877 - 0.65)             # a rate > 0 closes it in time
    blocks = ([5, 10, 20, 40, 80], [0.9764 - 0.9669, 0.9760 - 0.9703, 0.9770 - 0.9612, 0.9746 - 0.9737,
                                    0.9740 - 0.9726])
    assert not any(out_of_reach(blocks[0][:k], blocks[1][:k], 286, 0.976 - 0.898) for k in range(1, 6))
    assert not out_of_reach([5, 10, 20], [0.45, 0.45, 0.45], 1000, 0.45)    # flat at the majority share


def test_an_unreachable_target_stops_the_size_search_after_three_sizes(moons):
    """Every size misses a target 10 points above the exact model, by as much at 20 vectors as at 5: the doubling stops
    before 40 (the reference has 67 SV), one size at half the reference's is tried, and the log says why."""
    from leansvm.job.candidates import compress_models, train_exact
    from leansvm.job.records import JobLog

    if getattr(leansvm, "compress", None) is None:
        pytest.skip("leansvm.compress not available")
    X, y, Xt, yt = moons
    exact = train_exact(X[:280], y[:280], 10.0, 0.5)
    log = JobLog(False)
    out = compress_models(_context(X, y, ClassificationTask(y[280:], -0.1), 280, log), exact)
    assert [c.n_support for c in out] == [5, 10, 20, exact.n_support // 2] and exact.n_support > 40
    assert "shrank too slowly" in log.steps[-1].reason
    assert log.steps[-1].reason.endswith(f"one size at half of {exact.n_support} vectors, {exact.n_support // 2}, "
                                         "where a compressed model nears its reference: missed")


def test_the_size_search_rule_needs_sizes_that_grew():
    """Compressed models can come back smaller than asked (vectors that merge): without growth over the
    last two sizes there is no rate to extrapolate, and the search goes on."""
    from leansvm.job.candidates import doubling_out_of_reach as out_of_reach

    assert not out_of_reach([20, 20, 20], [0.01, 0.01, 0.01], 1000, 0.4)
    assert out_of_reach([20, 40, 80], [0.01, 0.01, 0.01], 1000, 0.4)


def test_the_budget_is_shared_out_among_the_stages():
    """Each stage may use what is left minus the later stages' shares: unused time passes on, an overrun
    squeezes the later stages (never below a tenth of their own share), and no budget means no limits."""
    from leansvm.job import deadline as module

    now = [100.0]
    clock = lambda: now[0]                                    # noqa: E731 (the clock the test moves)
    d = module.Deadline(1000, clock=clock)
    later_than_search = sum(module.SHARES.values()) - module.SHARES["search"]
    assert d.allowance("search") == pytest.approx(1000 * (1 - later_than_search))
    now[0] += 20                                              # the search used 20 of its 100 s
    assert d.allowance("exact") == pytest.approx(980 - 1000 * (1 - 0.10 - 0.25))
    assert d.allowance("budget") == pytest.approx(1000 * module.SHARES["budget"])  # capped: the rest goes on
    now[0] += 900                                             # the exact fit overran
    assert d.allowance("compress") == pytest.approx(0.1 * module.SHARES["compress"] * 1000)
    assert d.remaining() == pytest.approx(80)
    unbounded = module.Deadline(None, clock=clock)
    assert unbounded.allowance("compress") is None and unbounded.remaining() is None
    assert sum(module.SHARES.values()) == pytest.approx(1.0)
    skipping = module.Deadline(1000, clock=clock)
    skipping.skip("confirm")                                 # a stage that will not run holds nothing back
    assert skipping.allowance("exact") == pytest.approx(1000 * (0.10 + 0.25))  # ... its share is compression's,
    assert skipping.allowance("compress") == pytest.approx(1000 * (1 - module.SHARES["refit"] - module.SHARES["measure"]))


def test_the_teacher_free_split_gives_the_reduced_family_most_of_the_budget():
    """Where the exact fit on every row is out of the budget's reach, the exact stage gets less and the
    reduced family most, for one size trained until the time or the held-out rows end it."""
    from leansvm.job import deadline as module
    from leansvm.job.reduced import FIRST_FRACTION, MAX_VECTORS, reduced_sizes, teacher_free_size

    usual, free = module.Deadline(600), module.Deadline(600)
    free.teacher_free()
    assert free.without_teacher and not usual.without_teacher
    assert sum(free.shares.values()) == pytest.approx(1.0) and list(free.shares) == list(module.SHARES)
    assert free.allowance("exact") < usual.allowance("exact")
    assert free.shares["reduced"] > max(v for k, v in free.shares.items() if k != "reduced")
    # the search took none of its share: the exact stage still gets only its own
    assert free.allowance("exact") == pytest.approx(600 * free.shares["exact"])
    free.skip("refit")                # a skipped share goes to the family, not to compression
    assert free.allowance("reduced") == pytest.approx(free.remaining() - 600 * (free.shares["compress"]
                                                                              + free.shares["measure"]))
    assert free.allowance("compress") == pytest.approx(free.remaining() - 600 * free.shares["measure"])
    reference = Candidate("exact", "exact", None, 75000, 90.0)
    one = teacher_free_size(reference, 2)          # the first doubling size, for the whole share
    assert one["sizes"] == [round(FIRST_FRACTION * 75000)] == reduced_sizes(75000, 2)[:1] and one["max_iter"] > 10000
    assert teacher_free_size(reference, 2, below=750) is None      # a model that small qualified
    assert teacher_free_size(Candidate("exact", "exact", None, 900000, 1.0), 2)["sizes"] == [MAX_VECTORS // 4]
    assert teacher_free_size(Candidate("exact", "exact", None, 800, 1.0), 5)["sizes"] == [50]   # 10 per class


def test_the_route_takes_the_teacher_free_split_where_the_exact_fit_is_far_out_of_reach(monkeypatch, moons):
    """Over half the budget for the exact fit on every row: the teacher-free shares, said in the log; less:
    the usual ones; with class weights (the reduced family has none): the usual ones."""
    from leansvm.job import classification as module
    from leansvm.job.deadline import Deadline
    from leansvm.job.records import JobLog

    X, y, _, _ = moons
    for estimate, route, free, weights in ((400.0, "budget", True, None), (250.0, "budget", False, None),
                                           (100.0, "exact", False, None), (400.0, "budget", False, "balanced")):
        monkeypatch.setattr(module, "estimate_exact_seconds", lambda *a, e=estimate, **k: (e, 1.0, 1000, 1.7))
        deadline, log = Deadline(600), JobLog(False)
        job = JobContext(X, y, [(np.arange(len(y)), np.arange(0))], ClassificationTask(y[:0], 0.01, class_weight=weights),
                         deadline, log)
        assert module._choose_route(job, 1.0, 0.5)[0] == route
        assert deadline.without_teacher is free
        assert ("without a teacher" in log.steps[-1].reason) is free


def test_the_search_s_share_follows_what_the_exact_fit_will_cost():
    """A cheap exact fit lends the search what its share holds beyond twice the estimate, up to the
    search's cap; an exact fit near its share lends nothing; the shares still add up to the budget, and
    what the search leaves passes on to the exact stage."""
    from leansvm.job import deadline as module
    from leansvm.job.records import JobLog

    now = [0.0]
    clock = lambda: now[0]                                    # noqa: E731 (the clock the test moves)
    cheap, dear, log = module.Deadline(600, clock=clock), module.Deadline(600, clock=clock), JobLog(False)
    lent = module.lend_to_the_search(cheap, 10.0, log)
    assert lent == pytest.approx(600 * module.SHARES["exact"] - module.EXACT_MARGIN * 10.0)     # the spare
    assert cheap.allowance("search") == pytest.approx(600 * module.SHARES["search"] + lent)
    assert cheap.shares["exact"] * 600 == pytest.approx(module.EXACT_MARGIN * 10.0)
    free = module.Deadline(600, clock=clock)
    assert module.lend_to_the_search(free, 0.0, log) == pytest.approx(
        600 * min(module.SHARES["exact"], module.SEARCH_SHARE_MAX - module.SHARES["search"]))  # capped
    assert module.lend_to_the_search(dear, 80.0, log) == 0.0 and dear.shares == module.SHARES
    middling = module.Deadline(600, clock=clock)
    assert module.lend_to_the_search(middling, 40.0, log) == pytest.approx(150 - module.EXACT_MARGIN * 40.0)
    assert sum(cheap.shares.values()) == pytest.approx(1.0) and sum(middling.shares.values()) == pytest.approx(1.0)
    now[0] += 30                                              # the search used 30 of its 150 s
    assert cheap.allowance("exact") == pytest.approx(570 - 600 * (1 - cheap.shares["search"] - cheap.shares["exact"]))
    assert f"the search's share grows by {lent:.0f} s to {60 + lent:.0f} s" in " ".join(log._pending)
    assert module.lend_to_the_search(module.Deadline(None), 1.0, log) == 0.0


def test_shares_a_stage_cannot_use_pass_to_compression():
    """One exact fit over the confirming share, or an exact refit on all rows over the refit share:
    those shares are no longer held back, so compression may use them; a fast exact fit keeps both."""
    from leansvm.job.deadline import Deadline, release_unaffordable_shares
    from leansvm.job.records import JobLog

    slow, fast = Deadline(100), Deadline(100)
    release_unaffordable_shares(slow, 20.0, 28.0, "the exact SVC on all rows", JobLog(False))
    release_unaffordable_shares(fast, 1.0, 1.4, "the exact SVC on all rows", JobLog(False))
    assert slow.skipped == {"confirm", "refit"} and fast.skipped == set()
    assert slow.allowance("compress") > fast.allowance("compress")


def test_a_budget_too_small_for_any_stage_still_returns_a_model(moons):
    X, y, Xt, yt = moons
    with pytest.warns(RuntimeWarning, match="over the budget of 0.001 s"):
        r = fit_lean(X, y, X_test=Xt, y_test=yt, budget_seconds=1e-3, **GRID)
    assert r.model.predict(Xt).shape == yt.shape and r.final.test_accuracy > 0.8
    assert any("left out for lack of time" in s.reason or "time limit" in s.reason or "over the limit" in s.reason
               for s in r.steps)


def test_regression_and_novelty_bounds_are_one_sided_and_paired():
    from leansvm.job.estimates import rmse_bound, share_bound

    rng = np.random.default_rng(0)
    exact = rng.normal(size=500)
    assert rmse_bound(exact, exact) == pytest.approx(np.sqrt(np.mean(exact ** 2)))   # no difference: no margin
    worse = exact * 1.1 + 0.05 * rng.normal(size=500)
    bound = rmse_bound(exact, worse)
    assert bound > np.sqrt(np.mean(worse ** 2)) > np.sqrt(np.mean(exact ** 2))
    assert rmse_bound(exact, worse, confidence=0.99) > bound > rmse_bound(exact, worse, confidence=0.6)
    # heavy tails: ten rows in 20,000 where the reference missed by 3 and the candidate did not. Their
    # paired differences alone put a candidate 5 % worse on every other row 4 % below the reference; the
    # bound takes no evidence from them, and a 2 % rule refuses it
    typical = 0.1 * rng.normal(size=20000)
    reference, candidate = np.r_[typical, np.full(10, 3.0)], np.r_[1.05 * typical, np.zeros(10)]
    d = candidate ** 2 - reference ** 2
    raw = np.sqrt(np.mean(reference ** 2) + d.mean() + 1.645 * np.std(d, ddof=1) / np.sqrt(d.size))
    rmse = np.sqrt(np.mean(reference ** 2))
    assert raw < 0.97 * rmse and rmse_bound(reference, candidate) > 1.04 * rmse
    # no disagreement on 400 rows is not a certainty of none
    assert share_bound(np.zeros(400, bool)) == pytest.approx(1.6449 * np.sqrt((1 / 402) * (401 / 402) / 400), rel=1e-3)
    assert share_bound(np.r_[np.ones(8, bool), np.zeros(392, bool)]) > 0.02


def test_without_a_budget_the_stages_after_the_exact_fit_share_a_multiple_of_it():
    """No budget: after the exact fit, the budget models, compression and confirming folds get
    NO_BUDGET_MULTIPLE times its time or NO_BUDGET_BEFORE_MULTIPLE times the job's time until then,
    whichever is more (at least NO_BUDGET_FLOOR), shared as a budget's shares are; the refit and the
    measurements stay unbounded; a given budget is left as it is."""
    from leansvm.job import deadline as module

    now = [100.0]
    clock = lambda: now[0]                                    # noqa: E731 (the clock the test moves)
    d = module.Deadline(None, clock=clock)
    now[0] += 150                                             # search and exact fit (100 s): 150 s
    assert d.bound_after_exact(100.0) == pytest.approx(module.NO_BUDGET_MULTIPLE * 100.0)
    assert d.remaining() == pytest.approx(module.NO_BUDGET_MULTIPLE * 100.0)
    assert d.allowance("budget") == pytest.approx(d.seconds * module.SHARES["budget"])
    # the refit's and the measurements' shares are compression's; only the confirming folds' is held
    assert d.allowance("compress") == pytest.approx(d.remaining() - module.SHARES["confirm"] * d.seconds)
    assert d.allowance("refit") is None and d.allowance("measure") is None
    long_search = module.Deadline(None, clock=clock)
    now[0] += 500                                             # a search of 500 s: the bound follows it
    assert long_search.bound_after_exact(1.0) == pytest.approx(module.NO_BUDGET_BEFORE_MULTIPLE * 500)
    assert module.Deadline(None, clock=clock).bound_after_exact(0.001) == pytest.approx(module.NO_BUDGET_FLOOR)
    budget = module.Deadline(300, clock=clock)
    assert budget.bound_after_exact(100.0) is None and budget.seconds == 300 and not budget.unbounded


def test_without_a_budget_a_slow_compression_stops_at_the_bound(moons, monkeypatch):
    """A compression that takes 1,000 s (planted) is the last size tried when no budget is given:
    the next would end past the bound of the stages after the exact fit, and the log says so."""
    from leansvm.job import candidates, deadline

    monkeypatch.setattr(deadline, "NO_BUDGET_FLOOR", 1.0)
    real = candidates._timed

    def slow_compression(fn, *args, **kwargs):
        out, seconds = real(fn, *args, **kwargs)
        return out, seconds + (1000.0 if "n_sv" in kwargs else 0.0)

    monkeypatch.setattr(candidates, "_timed", slow_compression)
    X, y, Xt, yt = moons
    r = fit_lean(X, y, X_test=Xt, y_test=yt, max_accuracy_drop=0.0, **GRID)
    bound = [s for s in r.steps if s.stage == "bound"]
    assert len(bound) == 1 and "no time budget" in bound[0].reason
    compress = [s for s in r.steps if s.stage == "compress"][-1]
    assert "stopped before size" in compress.reason and "time limit" in compress.reason
    assert sum(c.kind == "compressed" for c in r.candidates) == 1
    assert r.model.predict(Xt).shape == yt.shape


def test_the_budget_route_sizes_reach_below_and_past_its_exact_model():
    from leansvm.job.candidates import budget_route_sizes

    # checker-1M's exact model on its subsample: 126 vectors
    assert budget_route_sizes(126, 800000) == [10, 13, 25, 50, 100, 200, 500]
    assert budget_route_sizes(126, 120, size_fractions=(0.05, 0.2)) == [10, 25, 50, 100]
    assert budget_route_sizes(2000, 800000, size_fractions=(0.05,)) == [50, 100, 200, 500]


def _planted_budget(name, model, upper):
    """A budget candidate whose drop bound is planted at ``upper`` (a fraction)."""
    from leansvm.job.estimates import DropEstimate

    c = Candidate(name, "budget", model, model.expansion_.n_support, 1.0)
    c.drop = DropEstimate(upper, 0.0, 100, 0.95)
    return c


def test_a_budget_size_between_a_miss_and_the_smallest_hit_is_tried_once(moons):
    """The refinement trains the hit's family at the geometric mean of the two budgets, validates it
    against the reference and sets its drop; the other family's sizes do not bracket it."""
    from leansvm.job.candidates import refine_budget_size
    from leansvm.job.records import JobLog

    X, y, Xv, yv = moons
    fitted = {b: leansvm.BSGDClassifier(budget=b, C=1.0, gamma=0.5, random_state=0).fit(X, y) for b in (10, 40)}
    landmark = LandmarkSVC(budget=20, C=1.0, gamma=0.5, random_state=0).fit(X, y)
    candidates = [_planted_budget("BSGD B=10", fitted[10], 0.05), _planted_budget("Nystroem B=20", landmark, 0.05),
                  _planted_budget("BSGD B=40", fitted[40], 0.0)]
    svc = leansvm.SVC(C=1.0, gamma=0.5).fit(X, y)
    reference = Candidate("exact SVC", "exact", svc, 0, 1.0, validation_predictions=svc.predict(Xv))
    log = JobLog(False)
    job = _context(np.vstack([X, Xv]), np.r_[y, yv], ClassificationTask(yv, 0.01), X.shape[0], log)
    refined = refine_budget_size(job, candidates, reference)
    assert refined.name == "BSGD B=20" and refined.model.budget == 20 and refined.kind == "budget"
    assert refined.validation_predictions.shape == yv.shape and refined.drop.n == yv.size
    assert log.steps[-1].stage == "refine" and "BSGD B=10 (missed)" in log.steps[-1].reason
    # no miss below the smallest hit of its family: nothing to refine
    assert refine_budget_size(job, candidates[1:], reference) is None
    # no time for it: not trained, and the log says so
    job.log = log = JobLog(False)
    assert refine_budget_size(job, candidates, reference, time_limit=0.1) is None
    assert "not trained" in log.steps[-1].choice and "over the time left" in log.steps[-1].reason


def test_a_stage_that_fails_after_the_choice_leaves_the_model_the_job_holds(moons, monkeypatch):
    """The confirming folds and the refit fail (an error, not Ctrl-C): the job returns the model the
    validation part accepted, and the log names each failed stage and its error."""
    from leansvm.job import pipeline

    def fails(*args, **kwargs):
        raise MemoryError("no room for the folds' kernel rows")

    X, y, Xt, yt = moons        # a drop of 10 points: the validation part accepts a compressed model
    expected = fit_lean(X, y, X_test=Xt, y_test=yt, max_accuracy_drop=0.1, confirm=False, refit=False, **GRID)
    monkeypatch.setattr(pipeline, "confirm_on_folds", fails)
    monkeypatch.setattr(pipeline, "refit_on_all_rows", fails)
    result = fit_lean(X, y, X_test=Xt, y_test=yt, max_accuracy_drop=0.1, **GRID)
    assert result.final is result.chosen and result.chosen.kind != "exact"
    assert (result.chosen.name, result.chosen.n_support) == (expected.chosen.name, expected.chosen.n_support)
    failed = {s.stage: s for s in result.steps if s.choice.startswith("failed")}
    assert set(failed) == {"confirm", "refit"}
    assert "no room for the folds' kernel rows" in failed["confirm"].reason
    assert f"keeps {result.chosen.name}" in failed["confirm"].reason
    assert result.model.predict(Xt).shape == yt.shape


def test_ctrl_c_after_a_cheap_model_was_accepted_returns_it_and_before_stops_the_job(moons, monkeypatch, capsys):
    """Ctrl-C is no failure that the job keeps going past: before any model cheaper than the exact one
    was accepted it stops the job (``KeyboardInterrupt``); after, the job returns the cheapest model
    accepted so far, as validated, with the interrupt on the result and a log step."""
    from leansvm.job import classification, pipeline

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    X, y, Xt, yt = moons
    expected = fit_lean(X, y, max_accuracy_drop=0.1, progress=False, verbose=False, confirm=False, refit=False,
                        **GRID)
    monkeypatch.setattr(pipeline, "confirm_on_folds", interrupted)
    held = fit_lean(X, y, max_accuracy_drop=0.1, progress=False, verbose=False, **GRID)
    assert isinstance(held.interrupted, KeyboardInterrupt) and held.final is held.chosen
    assert (held.chosen.name, held.chosen.n_support) == (expected.chosen.name, expected.chosen.n_support)
    assert held.chosen.kind != "exact" and held.chosen.drop.within(0.1)
    assert held.steps[-1].stage == "interrupted" and held.chosen.name in held.steps[-1].choice
    assert "returning " + held.chosen.name in capsys.readouterr().err
    np.testing.assert_array_equal(held.model.predict(Xt), held.chosen.model.predict(Xt))
    monkeypatch.setattr(classification, "train_budget_models", interrupted)      # during the exact route's stage 5
    with pytest.raises(KeyboardInterrupt):
        fit_lean(X, y, max_accuracy_drop=0.1, progress=False, verbose=False, **GRID)


def test_c_is_carried_to_the_fit_s_rows_by_the_smallest_c_within_one_se_at_growing_sizes():
    """carry_C: at 4 and 16 times the search's rows (below half the fit rows) the exact SVC at 1/4..2
    times the C so far, scored on validation rows; the smallest C within one standard error of the best
    is carried, the log says which. No size, no time: the search's C, no log step."""
    from leansvm.job.hyperparameters import CARRY_FACTORS, carry_C
    from leansvm.job.records import JobLog

    X, y = make_moons(4000, noise=0.3, random_state=1)
    X_fit, y_fit, X_val, y_val = X[:3400], y[:3400], X[3400:], y[3400:]
    log = JobLog(False)
    make = lambda C: leansvm.SVC(C=C, gamma=2.0, random_state=0)  # noqa: E731
    C = carry_C(_context(X, y, ClassificationTask(y_val, 0.01), 3400, log), make, 10.0, search_rows=100,
                time_limit=None)
    step = log.steps[-1]
    assert step.stage == "carry" and "400 rows" in step.reason and "1600 rows" in step.reason
    # each size multiplies C by one of the factors
    ratio = np.log(C / 10.0)
    assert any(np.isclose(ratio, np.log(a) + np.log(b)) for a in CARRY_FACTORS for b in CARRY_FACTORS)
    # the choice at the last size, redone by hand: the smallest factor within one SE of the best
    from leansvm import SVC
    from leansvm.job.helpers import _subsample
    before = float(re.search(r"400 rows: C = ([0-9.e+]+)", step.reason).group(1))
    X_s, y_s = _subsample(X_fit, y_fit, 1600, 0)
    right = [np.asarray(SVC(C=before * f, gamma=2.0, random_state=0).fit(X_s, y_s).predict(X_val) == y_val, float)
             for f in CARRY_FACTORS]
    best = int(np.argmax([r.mean() for r in right]))
    within = [k for k, r in enumerate(right) if r.mean() >= right[best].mean() - np.std(right[best] - r) / np.sqrt(600)]
    assert C == pytest.approx(before * CARRY_FACTORS[min(within)])
    # a search on nearly every row, or no time left: nothing to carry
    quiet = JobLog(False)
    job = _context(X, y, ClassificationTask(y_val, 0.01), 3400, quiet)
    assert carry_C(job, make, 8.0, 1000, None) == 8.0
    assert carry_C(job, make, 8.0, 100, 0.0) == 8.0 and not quiet.steps


def test_the_command_writes_the_held_model_on_ctrl_c_and_exits_130(moons, monkeypatch, tmp_path, capsys):
    """`leansvm fit` interrupted after a cheap model was accepted: the whole model file of that model
    (written atomically, as always), one message line naming it, status 130."""
    from leansvm.cli import main
    from leansvm.job import pipeline

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    X, y, _, _ = moons
    data, model = tmp_path / "moons.txt", tmp_path / "moons.model"
    dump_svmlight_file(X, y, str(data), zero_based=False)
    monkeypatch.setattr(pipeline, "confirm_on_folds", interrupted)
    status = main(["fit", str(data), "-o", str(model), "--max-accuracy-drop-points", "10", "--c-grid", "1", "10",
                   "--gamma-grid", "0.5", "2", "--no-scale", "--quiet"])
    err = capsys.readouterr().err
    assert status == 130
    line = [s for s in err.splitlines() if s.startswith("leansvm: interrupted (Ctrl-C)")]
    assert len(line) == 1 and f"to {model}" in line[0] and "the cheapest model accepted before it" in line[0]
    written = leansvm.io.load_libsvm_model(model)
    assert written.predict(X).shape == y.shape and written.expansion_.n_support < 100


def test_the_search_says_when_it_found_no_signal_beyond_the_class_shares():
    """Labels drawn independently of the features (about 70 / 30): the wide search's best CV accuracy is the
    majority share within its standard error, and the log says so; on moons it does not."""
    from leansvm.job.hyperparameters import search_hyperparameters
    from leansvm.job.records import JobLog

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(600, 3)), (rng.uniform(size=600) < 0.3).astype(int)
    log = JobLog(False)
    search_hyperparameters(_context(X, y, ClassificationTask(y[:0], 0.01), 600, log), max_rows=600)
    share = max(np.mean(y), 1 - np.mean(y))
    assert f"no better than predicting the majority class ({share:.4f}" in log.steps[-1].reason
    X, y = make_moons(600, noise=0.2, random_state=0)
    search_hyperparameters(_context(X, y, ClassificationTask(y[:0], 0.01), 600, log), max_rows=600)
    assert "majority class" not in log.steps[-1].reason


def test_after_the_folds_refute_every_accepted_model_compression_is_tried_one_size_up(monkeypatch):
    """The confirming folds refute (here: made to, once) every model the validation part accepted; the job
    then compresses the exact model at twice the largest compressed size tried and confirms that model
    alone (here the real folds: accepted, or refuted and the next size up)."""
    import leansvm.job.classification as job
    from leansvm.job import pipeline
    real, calls = job.confirm_on_folds, []

    def refute_first(context, candidates, reference, *args):
        calls.append(list(candidates))
        return reference if len(calls) == 1 else real(context, candidates, reference, *args)

    monkeypatch.setattr(job, "confirm_on_folds", refute_first)          # compression one size up
    monkeypatch.setattr(pipeline, "confirm_on_folds", refute_first)     # the first confirmation
    X, y = make_moons(n_samples=1500, noise=0.2, random_state=3)
    result = fit_lean(X, y, Cs=[1.0], gammas=[1.0], max_accuracy_drop=0.02, random_state=0)
    assert len(calls) >= 2
    tried = [c for c in calls[0] if c.kind == "compressed"]
    (new,) = calls[1]
    assert tried and new.kind == "compressed"
    assert new.n_support == 2 * max(c.n_support for c in tried)
    assert result.chosen in [c for (c,) in calls[1:]] + [result.reference]
    assert sum(step.stage == "compress" for step in result.steps) == len(calls)


def test_the_libsvm_reference_s_predictions_stay_within_the_measure_stage_s_time():
    """LIBSVM's full model is tested and timed only on the rows its measured prediction speed allows in
    the time left: all of them without a budget, fewer timing rows and no test with too little."""
    import time as clock_module
    from leansvm.job.classification import _libsvm_rows

    class Slow:                                     # 0.2 ms per row
        def predict(self, X):
            clock_module.sleep(2e-4 * X.shape[0])
            return np.zeros(X.shape[0])

    X_timing, X_test = np.zeros((1000, 3)), np.zeros((2000, 3))
    rows, tested = _libsvm_rows(Slow(), X_timing, X_test, None)
    assert rows.shape[0] == 1000 and tested
    rows, tested = _libsvm_rows(Slow(), X_timing, X_test, 60.0)           # 0.4 s + 5 x 0.2 s: all of it
    assert rows.shape[0] == 1000 and tested
    rows, tested = _libsvm_rows(Slow(), X_timing, X_test, 0.5)            # no test; 0.5 s of timing runs
    assert not tested and 200 <= rows.shape[0] < 1000
    rows, tested = _libsvm_rows(Slow(), X_timing, None, -3.0)             # out of time: one probe's rows
    assert rows.shape[0] == 200 and not tested


def test_the_libsvm_reference_is_trained_only_where_three_times_its_estimate_fits(moons, monkeypatch):
    """LIBSVM's full model is a measurement: under a budget it is trained only where REFERENCE_MARGIN
    times its estimate fits the time left (small fits underrate its large ones: pixels-60k took 259 s
    against 111 estimated), so an estimate within the time left but not three times within is skipped."""
    from leansvm.job import classification
    from leansvm.job.measure import REFERENCE_MARGIN

    real = classification.estimate_fit_seconds
    asked = []

    def estimate(make_estimator, X, y, **kwargs):
        if type(make_estimator()).__module__.startswith("sklearn") and kwargs.get("enough"):
            allowed = REFERENCE_MARGIN * kwargs["enough"]
            asked.append(allowed)
            return 0.5 * allowed, 0.01, 100, 2.0            # within the time left, not thrice within it
        return real(make_estimator, X, y, **kwargs)

    monkeypatch.setattr(classification, "estimate_fit_seconds", estimate)
    X, y, Xt, yt = moons
    r = fit_lean(X, y, X_test=Xt, y_test=yt, Cs=[1.0], gammas=[0.5], size_fractions=(), budget_seconds=120)
    (step,) = [s for s in r.steps if s.stage == "reference"]
    assert asked and step.choice == "LIBSVM full model not trained"
    assert f"{REFERENCE_MARGIN:g} times its estimated training time" in step.reason
