"""The main job for novelty detection (leansvm.job.novelty, `leansvm fit --task novelty`) and the
one-output HTML report."""

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import dump_svmlight_file
from sklearn.metrics import roc_auc_score

from leansvm.cli import main
from leansvm.job.novelty import fit_lean_novelty
from leansvm.job.one_output import format_one_output_table
from leansvm.job.report import render_one_output_report

SMALL = dict(size_fractions=(0.1, 0.3, 0.6))


@pytest.fixture(scope="module")
def normal_data():
    """Normal rows on raw columns of different ranges; a test part with planted outliers (-1)."""
    rng = np.random.default_rng(0)
    units = np.array([1.0, 100.0, 0.01, 10.0])
    X = rng.normal(size=(1500, 4)) * units
    outliers = rng.uniform(-5, 5, size=(150, 4)) * units
    X_test = np.vstack([rng.normal(size=(300, 4)) * units, outliers])
    return X, X_test, np.r_[np.ones(300), -np.ones(150)]


@pytest.fixture(scope="module")
def result(normal_data):
    X, X_test, y_test = normal_data
    return fit_lean_novelty(X, X_test=X_test, y_test=y_test, nu=0.05, max_disagreement=0.03, **SMALL)


def test_returns_the_fewest_vectors_that_label_as_the_exact_model(result, normal_data):
    X, X_test, y_test = normal_data
    exact = result.exact
    assert exact.validation_error == 0.0
    # the choice compares a one-sided 95 % bound on each candidate's disagreement with the limit
    assert result.chosen.validation_error <= result.chosen.error_bound <= 0.03
    # ... on the validation part, then on the five folds pooled (both models trained again without each)
    assert result.chosen.evidence_folds == 5 and "confirm" in [s.stage for s in result.steps]
    assert all(c.n_support >= result.chosen.n_support for c in result.candidates if c.error_bound <= 0.03)
    assert result.chosen.n_support < exact.n_support
    assert {c.kind for c in result.candidates} == {"exact", "compressed", "budget", "refit"}
    # the returned model scales the raw columns itself; its figures are the returned record's: the chosen
    # kind and size trained again on every row
    assert result.final is result.refit and result.refit.kind == "refit"
    pred = result.model.predict(X_test)
    reference = exact.model.predict(result.model[0].transform(X_test))
    assert np.mean(pred != reference) == pytest.approx(result.final.test_error, abs=1e-12)
    assert np.mean(pred == y_test) == pytest.approx(result.final.test_metrics["accuracy"], abs=1e-12)
    auc = roc_auc_score(y_test == 1, result.model.decision_function(X_test))
    assert auc == pytest.approx(result.final.test_metrics["AUC"], abs=1e-12)
    assert auc > 0.95
    # nu's meaning holds for the exact model on its training rows (a share nu outside)
    assert result.params["nu"] == 0.05
    assert "test AUC" in format_one_output_table(result)


def test_report_shows_the_models_and_score_distributions(result):
    page, names = render_one_output_report(result, "novelty")
    assert names == ["error-size", "scores", "cost"]
    assert page.count("data:image/png;base64,") == 3 and "<script" not in page
    assert "novelty detection (one-class SVM)" in page and re.search(r"<tr class=\"chosen\">", page)
    for c in result.candidates:
        assert c.name in page


def test_a_table_without_a_target_column_is_all_features(normal_data):
    X, _, _ = normal_data
    frame = pd.DataFrame(X[:600], columns=["a", "b", "c", "d"])
    r = fit_lean_novelty(frame, nu=0.1, **SMALL)
    assert r.summary["n_features"] == 4
    assert r.model.predict(frame).shape == (600,)


def test_bad_parameters(normal_data):
    X, _, _ = normal_data
    with pytest.raises(ValueError, match="nu"):
        fit_lean_novelty(X, nu=0.0)
    with pytest.raises(ValueError, match="max_disagreement"):
        fit_lean_novelty(X, max_disagreement=1.5)
    with pytest.raises(ValueError, match="gamma_factor"):
        fit_lean_novelty(X, gamma_factor=-1)
    with pytest.raises(ValueError, match="NaN|infinity"):
        fit_lean_novelty(np.where(np.arange(X.size).reshape(X.shape) == 5, np.nan, X))


def test_leansvm_fit_task_novelty_writes_a_one_class_model_and_report(normal_data, tmp_path, capsys):
    X, X_test, y_test = normal_data
    train, test = tmp_path / "train.txt", tmp_path / "test.txt"
    dump_svmlight_file(X[:800], np.ones(800), str(train), zero_based=False)
    dump_svmlight_file(X_test, y_test, str(test), zero_based=False)
    model, report = tmp_path / "m.model", tmp_path / "r.html"
    assert main(["fit", str(train), "--test", str(test), "--task", "novelty", "--nu", "0.1",
                 "--max-disagreement", "3%", "-o", str(model), "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert "novelty detection" in out and "test AUC" in out
    assert open(model).readline().split() == ["svm_type", "one_class"]
    assert (tmp_path / "m.model.range").exists() and report.exists()
    assert main(["predict", str(test), str(model), str(tmp_path / "p.txt")]) == 0
    predicted = np.loadtxt(tmp_path / "p.txt")
    assert set(np.unique(predicted)) <= {-1.0, 1.0} and np.mean(predicted == y_test) > 0.85
    assert main(["fit", str(train), "--task", "novelty", "--nu", "0", "-o", str(model)]) == 2


def test_a_time_budget_fits_the_exact_model_on_a_subsample(normal_data, monkeypatch):
    from leansvm.job import candidates

    X = normal_data[0]
    monkeypatch.setattr(candidates, "estimate_fit_seconds", lambda *a, **k: (1e3, 1.0, 100, 2.0))
    r = fit_lean_novelty(X, budget_seconds=10.0, **SMALL)
    n_fit = X.shape[0] - int(np.ceil(0.2 * X.shape[0]))
    assert re.fullmatch(rf"exact one-class SVM \(\d+ of {n_fit} rows\)", r.exact.name)
    with pytest.raises(ValueError, match="budget_seconds"):
        fit_lean_novelty(X, budget_seconds=-1.0)


def test_ctrl_c_after_the_choice_returns_the_chosen_model(normal_data, monkeypatch):
    """As the other jobs: a Ctrl-C during the confirming folds after a model with fewer vectors than the
    exact one was chosen returns it as validated; before the choice it stops the job."""
    from leansvm.job import one_output, pipeline

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    X, X_test, y_test = normal_data
    monkeypatch.setattr(pipeline, "confirm_on_folds", interrupted)
    r = fit_lean_novelty(X, X_test=X_test, y_test=y_test, nu=0.05, max_disagreement=0.03, **SMALL)
    exact = next(c for c in r.candidates if c.kind == "exact")
    assert isinstance(r.interrupted, KeyboardInterrupt) and r.final is r.chosen
    assert r.chosen.n_support < exact.n_support and r.steps[-1].stage == "interrupted"
    monkeypatch.setattr(one_output, "cheap_candidates", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fit_lean_novelty(X, nu=0.05, max_disagreement=0.03, **SMALL)
