import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import svm
from sklearn.exceptions import ConvergenceWarning

import leansvm
from leansvm.core.multiclass import ovo_pairs, ovo_votes
from leansvm.core.problems import c_svc

from .conftest import libsvm_dual_objectives

KERNELS = [
    dict(kernel="rbf", gamma=0.2, C=3.0),
    dict(kernel="linear", C=0.3),
    dict(kernel="poly", gamma=0.2, coef0=1.0, degree=2, C=1.0),
    dict(kernel="sigmoid", gamma=0.02, coef0=0.0, C=1.0),
]


def _assert_matches_libsvm(ours, ref, X):
    obj, ref_obj = ours.dual_objective_, libsvm_dual_objectives(ref)
    assert obj.shape == ref_obj.shape
    # never worse than LIBSVM beyond 1e-3 relative; equal within 1e-3 unless ours is lower
    assert np.all(obj <= ref_obj + 1e-3 * np.abs(ref_obj))
    np.testing.assert_allclose(obj, ref_obj, rtol=1e-3)
    assert np.mean(ours.predict(X) == ref.predict(X)) >= 0.995


@pytest.mark.parametrize("params", KERNELS, ids=lambda p: p["kernel"])
def test_binary_matches_libsvm(binary_problem, params):
    X, y = binary_problem
    ours = leansvm.SVC(**params).fit(X, y)
    ref = svm.SVC(**params).fit(X, y)
    _assert_matches_libsvm(ours, ref, X)
    assert ours.dual_coef_.shape == (1, ours.n_support_.sum())
    assert ours.decision_function(X).shape == (X.shape[0],)


@pytest.mark.parametrize("params", KERNELS[:3], ids=lambda p: p["kernel"])
def test_multiclass_ovo_matches_libsvm(multiclass_problem, params):
    X, y = multiclass_problem
    ours = leansvm.SVC(**params).fit(X, y)
    ref = svm.SVC(**params).fit(X, y)
    _assert_matches_libsvm(ours, ref, X)
    assert ours.dual_coef_.shape == (3, ours.n_support_.sum())
    assert abs(ours.n_support_.sum() - ref.n_support_.sum()) <= 0.02 * ref.n_support_.sum()
    # LIBSVM layout: support vectors grouped by class
    assert np.all(np.diff(y[ours.support_]) >= 0)
    np.testing.assert_array_equal(ours.n_support_, np.bincount(y[ours.support_]))
    ours.set_params(decision_function_shape="ovo")
    ref.set_params(decision_function_shape="ovo")
    ovo = ref.decision_function(X)
    np.testing.assert_allclose(ours.decision_function(X), ovo, atol=0.05)
    # 'ovr' adds vote counts: compare where no pairwise value is so close to 0 that
    # solver tolerance may flip a vote
    clear = np.abs(ovo).min(axis=1) > 0.05
    ours.set_params(decision_function_shape="ovr")
    ref.set_params(decision_function_shape="ovr")
    np.testing.assert_allclose(ours.decision_function(X)[clear], ref.decision_function(X)[clear], atol=0.05)


@pytest.mark.parametrize("params", KERNELS[:3], ids=lambda p: p["kernel"])
def test_kkt_conditions_and_feasibility_hold_at_tol(binary_problem, params):
    X, y = binary_problem
    C = params["C"]
    for tol in (1e-3, 1e-5):
        model = leansvm.SVC(tol=tol, **params).fit(X, y)
        f = model.decision_function(X) - model.intercept_[0]
        y_pm = np.where(y == model.classes_[1], 1.0, -1.0)
        alpha = np.zeros(len(y))
        alpha[model.support_] = np.abs(model.dual_coef_[0])
        assert np.all(alpha <= C * (1 + 1e-12))
        assert abs(np.dot(alpha, y_pm)) < 1e-8
        gap, _, _ = c_svc(y_pm, C).kkt_violation(alpha, f)
        assert gap <= tol * (1 + 1e-6)


def test_ovo_voting_equals_brute_force(multiclass_problem):
    X, y = multiclass_problem
    model = leansvm.SVC(C=1.0, gamma=0.5, decision_function_shape="ovo").fit(X, y)
    dec = model.decision_function(X)
    k = len(model.classes_)
    for row, pred in zip(dec, model.predict(X)):
        votes = np.zeros(k, int)
        for p, (i, j) in enumerate(ovo_pairs(k)):
            votes[i if row[p] > 0 else j] += 1
        assert pred == model.classes_[np.flatnonzero(votes == votes.max())[0]]  # ties: lowest index
    assert ovo_votes(np.zeros((1, 3)), 3).tolist() == [[0, 1, 2]]  # all ties -> j wins each pair


def test_one_vs_rest_shares_one_pool(multiclass_problem):
    X, y = multiclass_problem
    model = leansvm.SVC(C=1.0, gamma=0.5, multiclass="ovr").fit(X, y)
    assert model.expansion_.n_outputs == 4
    assert model.decision_function(X).shape == (X.shape[0], 4)
    ovo = leansvm.SVC(C=1.0, gamma=0.5).fit(X, y)
    assert model.score(X, y) >= ovo.score(X, y) - 0.1
    # every binary problem is a class-vs-rest SVM: compare with LIBSVM on that problem
    for c in range(4):
        ref = svm.SVC(C=1.0, gamma=0.5).fit(X, y == c)
        assert np.mean((model.decision_function(X)[:, c] > 0) == ref.predict(X)) >= 0.995


def test_weights_match_libsvm(binary_problem):
    X, y = binary_problem
    sw = np.random.default_rng(0).uniform(0.2, 2.0, size=len(y))
    for kw in (dict(class_weight={0: 3.0, 1: 0.5}), dict(class_weight="balanced")):
        _assert_matches_libsvm(leansvm.SVC(C=1.0, gamma=0.2, **kw).fit(X, y),
                               svm.SVC(C=1.0, gamma=0.2, **kw).fit(X, y), X)
    ours = leansvm.SVC(C=1.0, gamma=0.2).fit(X, y, sample_weight=sw)
    ref = svm.SVC(C=1.0, gamma=0.2).fit(X, y, sample_weight=sw)
    _assert_matches_libsvm(ours, ref, X)
    # zero weight: the sample is dropped, never a support vector
    sw0 = np.ones(len(y))
    sw0[:50] = 0.0
    model = leansvm.SVC(C=1.0, gamma=0.2).fit(X, y, sample_weight=sw0)
    assert np.all(model.support_ >= 50)


def test_sparse_input_with_int32_and_int64_indices(binary_problem):
    X, y = binary_problem
    X = np.where(np.abs(X) < 0.5, 0.0, X)
    dense = leansvm.SVC(C=1.0, gamma=0.2).fit(X, y)
    Xs = sp.csr_matrix(X)
    Xs64 = sp.csr_matrix((Xs.data, Xs.indices.astype(np.int64), Xs.indptr.astype(np.int64)), shape=X.shape)
    for Xin in (Xs, Xs64):
        model = leansvm.SVC(C=1.0, gamma=0.2).fit(Xin, y)
        np.testing.assert_allclose(model.dual_objective_, dense.dual_objective_, rtol=1e-6)
        np.testing.assert_array_equal(model.predict(Xin), dense.predict(X))


def test_string_labels_and_probability(multiclass_problem):
    X, y = multiclass_problem
    labels = np.array(["ant", "bee", "cat", "dog"])[y]
    model = leansvm.SVC(C=1.0, gamma=0.5, probability=True, random_state=0).fit(X, labels)
    assert set(model.predict(X)) <= set(labels)
    proba = model.predict_proba(X)
    assert proba.shape == (len(y), 4)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.mean(model.classes_[proba.argmax(1)] == model.predict(X)) > 0.95
    with pytest.raises(AttributeError):
        leansvm.SVC().fit(X, labels).predict_proba(X)


def test_max_iter_warns():
    X = np.random.default_rng(0).normal(size=(300, 3))
    y = (X[:, 0] + 0.3 * np.random.default_rng(1).normal(size=300) > 0).astype(int)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        model = leansvm.SVC(C=100.0, gamma=1.0, max_iter=1, working_set_size=8).fit(X, y)
    assert model.fit_status_ == 1
    assert np.all(np.isfinite(model.dual_coef_))


@pytest.mark.parametrize("bad,match", [
    (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 3, np.nan, X), y), "NaN"),
    (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 3, np.inf, X), y), "infinity"),
    (lambda X, y: (X, np.zeros_like(y)), "two classes"),
    (lambda X, y: (X[:0], y[:0]), "0 sample"),
    (lambda X, y: (X, y[:-1]), "inconsistent"),
])
def test_bad_training_input_raises_clear_errors(binary_problem, bad, match):
    X, y = bad(*binary_problem)
    with pytest.raises(ValueError, match=match):
        leansvm.SVC().fit(X, y)


def test_bad_predict_input_and_params(binary_problem):
    X, y = binary_problem
    model = leansvm.SVC().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :3])
    with pytest.raises(ValueError, match="NaN"):
        model.predict(np.full((2, X.shape[1]), np.nan))
    with pytest.raises(ValueError, match="zero or negative weights"):          # every sample left out
        leansvm.SVC().fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="C must be"):
        leansvm.SVC(C=-1).fit(X, y)
    with pytest.raises(ValueError, match="kernel"):
        leansvm.SVC(kernel="cubic").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        leansvm.SVC(gamma="auto").fit(X, y)


def test_unseeded_fits_are_one_solution_as_libsvms(binary_problem):
    """random_state=None: the IRWLS chunking is seeded with 0, so an unseeded fit is the same
    whatever NumPy's global state (LIBSVM's and scikit-learn's SVMs are deterministic; scikit-learn
    takes random_state for its probability folds only); an int seed chooses another chunking."""
    X, y = binary_problem

    def dual(seed, **kw):
        np.random.seed(seed)
        return leansvm.SVR(C=10.0, gamma=0.5, tol=1e-2, **kw).fit(X, y.astype(float)).dual_coef_

    np.testing.assert_array_equal(dual(1), dual(2))
    np.testing.assert_array_equal(dual(1), dual(1, random_state=0))
    np.testing.assert_array_equal(dual(1, random_state=5), dual(2, random_state=5))


def test_arrays_that_need_no_conversion_give_the_model_and_bookkeeping_of_the_checked_path(multiclass_problem):
    """A float64 C-order array with integer labels skips scikit-learn's checks (the fixed cost of a small
    fit); the same numbers as a list, a Fortran-order array or float labels take the checked path. Both
    give the same model, set ``n_features_in_``, and drop an earlier fit's ``feature_names_in_``."""
    import pandas as pd
    X, y = multiclass_problem
    X = np.ascontiguousarray(X, dtype=np.float64)
    fast = leansvm.SVC(C=1.0, gamma=0.5).fit(pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]), y)
    assert hasattr(fast, "feature_names_in_")
    fast.fit(X, y.astype(np.int64))
    assert not hasattr(fast, "feature_names_in_") and fast.n_features_in_ == X.shape[1]
    checked = leansvm.SVC(C=1.0, gamma=0.5).fit(np.asfortranarray(X).tolist(), y.astype(float).tolist())
    np.testing.assert_array_equal(fast.support_, checked.support_)
    np.testing.assert_allclose(fast.decision_function(X), checked.decision_function(X), rtol=1e-12, atol=1e-12)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        leansvm.SVC().fit(bad, y)
    with pytest.raises(ValueError, match="Unknown label type"):
        leansvm.SVC().fit(X, y + 0.5)


def test_a_fitted_model_keeps_no_per_sample_outputs_of_its_solver():
    """``solver_stats_`` holds the solver's statistics, not the training rows' outputs (which a path
    or a screening rule reads during the fit): a pickled model does not grow with the training rows."""
    from sklearn.datasets import make_classification

    import leansvm
    X, y = make_classification(n_samples=600, n_features=6, n_classes=3, n_informative=4, random_state=0)
    svc = leansvm.SVC().fit(X, y)
    assert len(svc.solver_stats_) == 3 and all("outputs" not in s and "violation" in s for s in svc.solver_stats_)
    svr = leansvm.SVR().fit(X, X[:, 0])
    assert "outputs" not in svr.solver_stats_ and "violation" in svr.solver_stats_
