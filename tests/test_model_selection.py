"""SVCCV: cross-validated (C, gamma) over screened paths, against GridSearchCV on the same folds."""

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from leansvm import SVCCV, svm_path

CS = [0.1, 0.5, 2.0, 8.0]
GAMMAS = [0.05, 0.5]


class ColdAugmentedSVC(ClassifierMixin, BaseEstimator):
    """The same formulation fitted cold at one C (no path, no screening): GridSearchCV's candidate."""

    def __init__(self, C=1.0, gamma=0.1):
        self.C = C
        self.gamma = gamma

    def fit(self, X, y):
        self.model_ = svm_path(X, y, [self.C], gamma=self.gamma, screening=None, tol=1e-4).models[0]
        self.classes_ = self.model_.classes_
        return self

    def predict(self, X):
        return self.model_.predict(X)


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=180, n_features=6, n_informative=4, n_classes=3,
                               n_clusters_per_class=1, flip_y=0.05, random_state=4)
    return (X - X.mean(0)) / X.std(0), y


def test_svccv_matches_grid_search_on_the_same_folds(data):
    X, y = data
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    search = SVCCV(Cs=CS, gammas=GAMMAS, cv=cv, tol=1e-4).fit(X, y)
    grid = GridSearchCV(ColdAugmentedSVC(), {"C": CS, "gamma": GAMMAS}, cv=cv).fit(X, y)
    assert [p for p in search.cv_results_["params"]] == grid.cv_results_["params"]
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], grid.cv_results_["mean_test_score"],
                               atol=0.012)   # at most one test sample of one fold may flip
    assert search.best_params_ == grid.best_params_
    assert search.best_score_ == pytest.approx(grid.best_score_, abs=0.012)
    # the refitted model is the selected one, on all data
    best = search.best_estimator_
    assert best.C == search.best_params_["C"] and best._gamma == search.best_params_["gamma"]
    np.testing.assert_array_equal(search.predict(X), best.predict(X))
    assert search.score(X, y) > 0.8
    assert search.screening_rate_.shape == (2, 3)
    assert np.all((search.screening_rate_ >= 0) & (search.screening_rate_ <= 1))


def test_parallel_workers_give_the_same_result(data):
    X, y = data
    one = SVCCV(Cs=CS[:3], gammas=[0.5], cv=3, n_jobs=1).fit(X, y)
    with parallel_config(backend="threading"):     # process start-up is too slow for a unit test
        two = SVCCV(Cs=CS[:3], gammas=[0.5], cv=3, n_jobs=2).fit(X, y)
    np.testing.assert_allclose(one.cv_results_["mean_test_score"], two.cv_results_["mean_test_score"])
    assert one.best_params_ == two.best_params_


def test_estimator_api(data):
    X, y = data
    est = SVCCV(Cs=[1.0, 4.0], gammas=[0.3], cv=2, refit=False)
    assert clone(est).get_params()["Cs"] == [1.0, 4.0]
    est.set_params(cv=3).fit(X, y)
    assert not hasattr(est, "best_estimator_") and "split2_test_score" in est.cv_results_
    with pytest.raises(Exception):   # NotFittedError: refit=False leaves no model
        est.predict(X)


def test_bad_input(data):
    X, y = data
    with pytest.raises(ValueError, match="gammas"):
        SVCCV(gammas=[]).fit(X, y)
    with pytest.raises(ValueError, match="unregularised bias"):
        SVCCV(fit_intercept="equality", screening="it").fit(X, y)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError):
        SVCCV(Cs=[1.0]).fit(Xn, y)


def test_cached_scores_equal_the_models_scores():
    """SVCCV's scores from the shared kernel rows equal scikit-learn's scorer on the path's models."""
    from leansvm.core.kernels import Kernel
    from leansvm.paths.model_selection import _cached_accuracy
    from leansvm.paths.binary_path import row_cache
    X, y = make_classification(n_samples=240, n_features=6, n_informative=4, n_classes=3, n_clusters_per_class=1,
                               random_state=1)
    test = np.arange(0, 240, 3)
    train = np.setdiff1d(np.arange(240), test)
    cache = row_cache(Kernel("rbf", gamma=0.3), X, 50.0, 1e-3)
    Cs = [0.1, 1.0, 10.0]
    path = svm_path(X[train], y[train], Cs, gamma=0.3, kernel_cache=(cache, train))
    fast = _cached_accuracy(path, cache, train, test, y)
    slow = [model.score(X[test], y[test]) for model in path.models]
    np.testing.assert_allclose(fast, slow)


def test_libsvms_dual_on_paths_scores_grid_search_of_libsvm_itself(data):
    """With LIBSVM's bias (``fit_intercept='equality'``), no screening and LIBSVM's tolerance, SVCCV
    scores every cell as ``GridSearchCV(sklearn.svm.SVC)`` on the same folds, over a range of C wide
    enough to reach bounded and free solutions: what ``benchmarks/main_job/bench_grid_oracle.py`` relies on to
    stand in for grid.py where grid.py takes hours."""
    from sklearn.svm import SVC as LibSVC
    X, y = data
    Cs, gammas = 2.0 ** np.arange(-5, 16, 4), [2.0 ** -7, 2.0 ** -3, 2.0]
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    search = SVCCV(Cs=Cs, gammas=gammas, cv=cv, fit_intercept="equality", screening=None, tol=1e-3,
                   refit=False).fit(X, y)
    grid = GridSearchCV(LibSVC(), {"C": Cs, "gamma": gammas}, cv=cv).fit(X, y)
    assert search.cv_results_["params"] == grid.cv_results_["params"]
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], grid.cv_results_["mean_test_score"],
                               atol=0.012)   # at most one test sample of one fold may flip
    assert search.best_params_ == grid.best_params_


def _grid_oracle():
    import importlib
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "main_job"))
    try:
        return importlib.import_module("bench_grid_oracle")
    finally:
        sys.path.pop(0)


def test_the_grid_oracles_resumable_paths_score_as_svccv(data, tmp_path):
    """``benchmarks/main_job/bench_grid_oracle.py`` runs SVCCV's path (LIBSVM's dual) C by C, saving each C's
    solution: its cells equal SVCCV's on the same fold, also when the path is stopped after four C
    and goes on from the saved solution."""
    oracle = _grid_oracle()
    X, y = data
    gamma, fold = 2.0 ** -3, 2
    split = list(oracle.grid_folds().split(X, y))[fold]
    reference = SVCCV(Cs=oracle.GRID_C, gammas=[gamma], cv=[split], fit_intercept="equality", screening=None,
                      tol=1e-3, refit=False).fit(X, y).cv_results_["split0_test_score"]
    cells = []

    class Stop(Exception):
        pass

    def stop_after_four(C, accuracy, seconds):
        cells.append((C, accuracy))
        if len(cells) == 4:
            raise Stop

    checkpoint = tmp_path / "path.npz"
    with pytest.raises(Stop):
        oracle.fold_cells(X, y, gamma, fold, on_cell=stop_after_four, checkpoint=checkpoint)
    record = lambda C, a, s: cells.append((C, a))            # noqa: E731
    oracle.fold_cells(X, y, gamma, fold, on_cell=record, checkpoint=checkpoint, max_C=oracle.GRID_C[6])
    assert len(cells) == 7                         # went on from the 4th C, stopped at max_C
    oracle.fold_cells(X, y, gamma, fold, on_cell=record, checkpoint=checkpoint)
    assert [C for C, _ in cells] == oracle.GRID_C.tolist()
    np.testing.assert_array_equal([a for _, a in cells], reference)
    assert len(set(reference)) > 2                 # the accuracy moves along the path: a real comparison


def test_an_incomplete_grid_oracle_says_which_cells_could_still_win(tmp_path, monkeypatch):
    """``open_cells``: a cell that cannot reach the leader's mean even at 100 % on its missing folds is
    'bounded'; one below the leader on its folds by more than whole cells' paired spread is 'paired';
    one above it, or never run, stays 'open'."""
    import json
    oracle = _grid_oracle()
    for name in ("cells_file", "folds_file", "oracle_file"):
        monkeypatch.setattr(oracle, name, lambda _, name=name: tmp_path / f"{name}.jsonl")
    rows = {(2.0, 0.125): [0.90, 0.91, 0.91, 0.92, 0.91],      # the leader, mean 0.91
            (8.0, 0.125): [0.89, 0.90, 0.90, 0.91, 0.90],      # whole: the same fold pattern, 1 point lower
            (2.0, 8.0): [0.50], (2.0, 0.5): [0.88], (8.0, 0.5): [0.905]}
    cells = tmp_path / "cells_file.jsonl"
    cells.write_text("".join(json.dumps({"dataset": "t", "gamma": g, "fold": f, "C": C, "accuracy": a, "seconds": 1.0})
                             + "\n" for (C, g), accs in rows.items() for f, a in enumerate(accs)))
    leader, top, status = oracle.open_cells("t")
    assert leader == (2.0, 0.125) and top == pytest.approx(0.91)
    assert status[8.0, 0.125] == ("done", pytest.approx(0.90))
    assert status[2.0, 8.0] == ("bounded", None)           # (0.50 + 4) / 5 = 0.90 < 0.91
    assert status[2.0, 0.5] == ("paired", pytest.approx(0.89))    # fold 0: 2 points below, spread 0
    assert status[8.0, 0.5] == ("open", pytest.approx(0.915))
    assert status[32.0, 0.125] == ("open", None)
    assert sum(kind == "open" for kind, _ in status.values()) == 110 - 4     # all but two done, one bounded, one paired


def test_the_grid_oracle_rejects_a_max_C_below_its_grid(monkeypatch, capsys):
    """``--max-C`` below grid.py's smallest C would run nothing and call every path done: an error."""
    oracle = _grid_oracle()
    monkeypatch.setattr("sys.argv", ["bench_grid_oracle.py", "--dataset", "wdbc", "--max-C", "0.01"])
    with pytest.raises(SystemExit):
        oracle.main()
    assert "--max-C 0.01 is below grid.py's smallest C" in capsys.readouterr().err
