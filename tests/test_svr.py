"""leansvm.SVR (epsilon-SVR on the problem layer) against LIBSVM through scikit-learn's SVR.

The estimator, its optimum and scikit-learn conformance; files, the command line, ONNX, Dask and
precomputed kernels are tested in test_libsvm_files_all_types, test_cli, test_onnx,
test_distributed and test_user_kernels.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.svm
from sklearn.datasets import make_friedman1
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVR as LibsvmSVR
from sklearn.utils.estimator_checks import parametrize_with_checks

import leansvm
from leansvm import SVR


def _objective(model, X, y, epsilon, gamma):
    """LIBSVM's epsilon-SVR dual 1/2 b'Kb + eps |b|_1 - z'b at a model's coefficients b."""
    coef = np.zeros(y.size)
    coef[model.support_] = model.dual_coef_[0]
    K = leansvm.Kernel("rbf", gamma=gamma)(X)
    return 0.5 * coef @ K @ coef + epsilon * np.abs(coef).sum() - y @ coef


@pytest.mark.parametrize("C, epsilon", [(1.0, 0.1), (10.0, 0.5), (100.0, 0.05)])
def test_svr_reaches_libsvms_optimum(C, epsilon):
    X, y = make_friedman1(n_samples=600, noise=1.0, random_state=0)
    ours = SVR(C=C, epsilon=epsilon, gamma=0.1, tol=1e-4, random_state=0).fit(X, y)
    ref = LibsvmSVR(C=C, epsilon=epsilon, gamma=0.1, tol=1e-6).fit(X, y)
    a, b = _objective(ours, X, y, epsilon, 0.1), _objective(ref, X, y, epsilon, 0.1)
    assert abs(a - b) <= 1e-3 * abs(b)
    assert ours.dual_objective_[0] == pytest.approx(a, rel=1e-5)     # float32 kernel rows at tol 1e-4
    X_new, _ = make_friedman1(n_samples=300, noise=1.0, random_state=1)
    assert np.max(np.abs(ours.predict(X_new) - ref.predict(X_new))) <= 1e-2 * y.std()
    assert abs(int(ours.n_support_[0]) - int(ref.n_support_[0])) <= 0.02 * ref.n_support_[0]


def test_svr_sparse_input_and_sample_weight():
    X, y = make_friedman1(n_samples=300, noise=0.5, random_state=2)
    w = np.random.default_rng(0).uniform(0.0, 2.0, y.size)
    w[:20] = 0.0
    dense = SVR(C=5.0, gamma=0.2, tol=1e-5, random_state=0).fit(X, y, sample_weight=w)
    sparse = SVR(C=5.0, gamma=0.2, tol=1e-5, random_state=0).fit(sp.csr_matrix(X), y, sample_weight=w)
    ref = LibsvmSVR(C=5.0, gamma=0.2, tol=1e-7).fit(X, y, sample_weight=w)
    assert not np.isin(np.arange(20), dense.support_).any()        # zero weight: never a support vector
    np.testing.assert_allclose(sparse.predict(X), dense.predict(X), atol=1e-8)
    assert np.max(np.abs(dense.predict(X) - ref.predict(X))) <= 1e-2 * y.std()


@pytest.mark.parametrize("bad, message", [
    (dict(y=[0.0, np.nan, 1.0, 2.0]), "NaN|nan|infinity"),
    (dict(y=["a", "b", "c", "d"]), "numeric|convert|could not"),
    (dict(epsilon=-0.1), "epsilon"),
    (dict(C=0.0), "C must"),
])
def test_svr_bad_input_is_named(bad, message):
    X = np.arange(8.0).reshape(4, 2)
    y = bad.get("y", [0.0, 1.0, 2.0, 3.0])
    params = {k: v for k, v in bad.items() if k != "y"}
    with pytest.raises(ValueError, match=message):
        SVR(**params).fit(X, y)


@parametrize_with_checks([SVR(random_state=0)], expected_failed_checks=lambda est: {
    "check_sample_weight_equivalence_on_dense_data":
        "decision values agree to the solver tolerance tol, not to rtol=1e-7 (as sklearn.svm.SVR)",
    "check_sample_weight_equivalence_on_sparse_data":
        "decision values agree to the solver tolerance tol, not to rtol=1e-7 (as sklearn.svm.SVR)",
})
def test_svr_sklearn_conformance(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_the_regression_working_set_grows_with_the_problem():
    """'auto': 128 variables per chunk, 512 from 20,000 variables (10,000 samples) on, where fewer and
    larger chunks halve friedman1-50k's fit; an explicit size is kept, a bad one named."""
    from leansvm.exact.svr import LARGE_WORKING_SET, regression_working_set
    from leansvm.exact.irwls import DEFAULT_WORKING_SET
    assert SVR().working_set_size == "auto" and leansvm.NuSVR().working_set_size == "auto"
    assert regression_working_set("auto", 9_999) == DEFAULT_WORKING_SET
    assert regression_working_set("auto", 10_000) == LARGE_WORKING_SET
    assert regression_working_set(64, 50_000) == 64
    for bad in ("large", 1):
        with pytest.raises(ValueError, match="working_set_size must be 'auto' or an integer"):
            SVR(working_set_size=bad).fit(np.zeros((4, 1)), np.arange(4.0))
    X, y = make_friedman1(10_000, noise=1.0, random_state=0)
    auto = SVR(C=10, gamma=0.03).fit(X, y)
    explicit = SVR(C=10, gamma=0.03, working_set_size=LARGE_WORKING_SET).fit(X, y)
    assert auto.n_iter_[0] == explicit.n_iter_[0] and auto.dual_objective_[0] == explicit.dual_objective_[0]


@pytest.mark.parametrize("Model, params", [(SVR, dict(epsilon=0.1)), (leansvm.NuSVR, dict(nu=0.5))])
def test_rows_read_in_place_reach_the_optimum_of_copied_rows(Model, params):
    """A sample's two variables read its row of the samples' cache in place (``irwls_chunk.column``)
    when that cache holds a chunk's rows: in the compiled bursts where it holds every row, from
    Python where it does not; a cache too small for a chunk gives each solve a cache of variable
    rows copied from it. All reach LIBSVM's optimum, and the same predictions."""
    X, y = make_friedman1(n_samples=3000, noise=1.0, random_state=3)
    X_new, _ = make_friedman1(n_samples=500, noise=1.0, random_state=4)
    fit = lambda cache_size: Model(C=10, gamma=0.1, tol=1e-4, cache_size=cache_size, **params).fit(X, y)
    every_row, some_rows, copied = fit(200.0), fit(3.0), fit(0.3)     # rows of 12 kB; 128 a chunk
    assert [m.solver_stats_["rows_in_place"] for m in (every_row, some_rows, copied)] == [True, True, False]
    ref = getattr(sklearn.svm, Model.__name__)(C=10, gamma=0.1, tol=1e-6, **params).fit(X, y)
    for ours in (every_row, some_rows, copied):
        assert np.max(np.abs(ours.predict(X_new) - ref.predict(X_new))) <= 1e-2 * y.std()
        assert ours.dual_objective_[0] == pytest.approx(copied.dual_objective_[0], rel=1e-4)
