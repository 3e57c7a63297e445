"""Property tests (hypothesis): invariants over random small problems, models and files.

* the exact solver's KKT conditions hold at ``tol`` (LIBSVM's maximal-violation rule);
* a kernel expansion's decision function equals the explicit kernel sum;
* one-vs-one voting equals a brute-force vote with LIBSVM's tie rule;
* LIBSVM and native model files round-trip exactly.

Examples are few and small (``max_examples`` <= 25, ``deadline=None``) and
derandomized so the file runs in seconds and the same way every time;
``LEANSVM_EXPLORE=N`` searches N random examples per property instead.
"""

import itertools
import os
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.exceptions import ConvergenceWarning

from leansvm import SVC, Kernel, KernelExpansion, io
from leansvm.core.multiclass import dense_from_libsvm_coef, ovo_pairs, predict_index

#: Deterministic in the test suite (the same examples every run, no flaky CI); set
#: LEANSVM_EXPLORE=500 to search 500 fresh random examples per property instead.
_EXPLORE = int(os.environ.get("LEANSVM_EXPLORE", "0"))
FEW = settings(max_examples=_EXPLORE or 25, deadline=None, derandomize=not _EXPLORE,
               suppress_health_check=[HealthCheck.too_slow])

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)


def _explicit_kernel(name, gamma, degree, coef0, u, v):
    """k(u, v) straight from the definitions (LIBSVM's kernel_type meanings)."""
    if name == "linear":
        return float(u @ v)
    if name == "poly":
        return float((gamma * (u @ v) + coef0) ** degree)
    if name == "rbf":
        return float(np.exp(-gamma * np.sum((u - v) ** 2)))
    return float(np.tanh(gamma * (u @ v) + coef0))


@st.composite
def binary_problems(draw):
    n = draw(st.integers(4, 30))
    d = draw(st.integers(1, 4))
    X = draw(arrays(np.float64, (n, d), elements=st.floats(-3, 3, width=64)))
    y = np.array(draw(st.lists(st.sampled_from([0, 1]), min_size=n, max_size=n)))
    y[: 2] = [0, 1]                                  # both classes present
    C = draw(st.sampled_from([0.01, 0.1, 1.0, 10.0, 100.0]))
    gamma = draw(st.sampled_from([0.05, 0.5, 2.0]))
    kernel = draw(st.sampled_from(["rbf", "linear", "poly"]))
    return X, y, C, gamma, kernel


# -- exact solver: KKT at tol ----------------------------------------------------------------------
@FEW
@given(binary_problems(), st.sampled_from([1e-3, 1e-5]))
def test_exact_solver_satisfies_kkt_at_tol(problem, tol):
    """0 <= a <= C, y'a = 0, and max_{I_up} y_i s_i ... LIBSVM's gap m(a) - M(a) <= tol, from K itself."""
    X, y, C, gamma, kernel = problem
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)   # a tiny problem must converge
        warnings.simplefilter("ignore", RuntimeWarning)
        est = SVC(C=C, gamma=gamma, kernel=kernel, degree=2, coef0=1.0, tol=tol).fit(X, y)
    n = y.size
    ypm = np.where(y == est.classes_[1], 1.0, -1.0)
    alpha = np.zeros(n)
    alpha[est.support_] = est.dual_coef_[0] * ypm[est.support_]   # dual_coef_ = y_i a_i
    assert np.all(alpha >= 0) and np.all(alpha <= C * (1 + 1e-12))
    assert abs(ypm @ alpha) <= 1e-8 * max(1.0, C * n)
    K = np.array([[_explicit_kernel(kernel, gamma, 2, 1.0, a, b) for b in X] for a in X])
    grad = ypm * (K @ (ypm * alpha)) - 1.0                # gradient of 1/2 a'Qa - e'a
    up = ((ypm > 0) & (alpha < C)) | ((ypm < 0) & (alpha > 0))
    low = ((ypm > 0) & (alpha > 0)) | ((ypm < 0) & (alpha < C))
    gap = np.max(-ypm[up] * grad[up]) - np.min(-ypm[low] * grad[low])
    assert gap <= tol + 1e-9 * max(1.0, np.abs(K).max() * C * n)


# -- expansion == explicit kernel sum ----------------------------------------------------------------
@st.composite
def expansions(draw):
    m = draw(st.integers(0, 8))
    d = draw(st.integers(1, 5))
    k = draw(st.integers(1, 4))
    sv = draw(arrays(np.float64, (m, d), elements=st.floats(-2, 2, width=64)))
    coef = draw(arrays(np.float64, (m, k), elements=finite))
    intercept = draw(arrays(np.float64, (k,), elements=finite))
    name = draw(st.sampled_from(["linear", "poly", "rbf", "sigmoid"]))
    gamma = draw(st.sampled_from([0.01, 0.3, 1.7]))
    degree = draw(st.integers(1, 3))
    coef0 = draw(st.sampled_from([0.0, 0.5, -1.0]))
    X = draw(arrays(np.float64, (draw(st.integers(1, 6)), d), elements=st.floats(-2, 2, width=64)))
    sparse = draw(st.booleans())
    return sv, coef, intercept, (name, gamma, degree, coef0), X, sparse


@FEW
@given(expansions())
def test_expansion_equals_explicit_kernel_sum(case):
    sv, coef, intercept, (name, gamma, degree, coef0), X, sparse = case
    kernel = Kernel(name, gamma, degree, coef0)
    exp = KernelExpansion(sp.csr_matrix(sv) if sparse else sv, coef, intercept, kernel)
    got = exp.decision_function(sp.csr_matrix(X) if sparse else X)
    want = np.array([[intercept[c] + sum(coef[j, c] * _explicit_kernel(name, gamma, degree, coef0, sv[j], x)
                                         for j in range(sv.shape[0]))
                      for c in range(coef.shape[1])] for x in X])
    scale = 1.0 + np.abs(coef).sum() * 10.0 ** degree
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10 * scale)


# -- one-vs-one voting == brute force ----------------------------------------------------------------
def _brute_force_vote(decision_row, n_classes):
    """LIBSVM's svm_predict_values: pair (i, j) votes i if dec > 0 else j; ties to the lowest index."""
    votes = [0] * n_classes
    for p, (i, j) in enumerate(itertools.combinations(range(n_classes), 2)):
        votes[i if decision_row[p] > 0 else j] += 1
    return max(range(n_classes), key=lambda c: (votes[c], -c))


@FEW
@given(st.integers(3, 6).flatmap(lambda k: st.tuples(
    st.just(k), arrays(np.float64, st.tuples(st.integers(1, 20), st.just(k * (k - 1) // 2)),
                       elements=st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0])))))
def test_ovo_voting_equals_brute_force(case):
    """Decision values from {-1, -.5, 0, .5, 1}: many exact zeros and vote ties."""
    k, decision = case
    want = [_brute_force_vote(row, k) for row in decision]
    np.testing.assert_array_equal(predict_index(decision, k, "ovo"), want)


@settings(FEW, max_examples=_EXPLORE or 10)
@given(st.integers(0, 2**16), st.integers(3, 5))
def test_fitted_ovo_predictions_equal_brute_force_vote(seed, k):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(15 * k, 3))
    y = rng.permutation(np.arange(15 * k) % k) * 3 - 4           # labels -4, -1, 2, ... (sorted order != index)
    est = SVC(C=1.0, gamma=0.5, decision_function_shape="ovo").fit(X, y)
    Xt = rng.normal(size=(30, 3))
    dec = est.decision_function(Xt)
    assert dec.shape == (30, len(ovo_pairs(k)))
    want = est.classes_[[_brute_force_vote(row, k) for row in dec]]
    np.testing.assert_array_equal(est.predict(Xt), want)


# -- file round trips ---------------------------------------------------------------------------------
awkward = st.one_of(finite, st.sampled_from([0.0, -0.0, 1e-300, -5e-324, 1e300, 0.1, 1 / 3, -2.5e-8]))


@st.composite
def ovo_models(draw):
    """A fitted SVC-shaped model with LIBSVM's one-vs-one coefficient pattern."""
    k = draw(st.integers(2, 4))
    n_support = np.array(draw(st.lists(st.integers(0, 3), min_size=k, max_size=k)))
    m = int(n_support.sum())
    d = draw(st.integers(1, 6))
    density = draw(st.sampled_from([0.0, 0.3, 1.0]))
    values = draw(arrays(np.float64, (m, d), elements=awkward))
    mask = draw(arrays(np.float64, (m, d), elements=st.floats(0, 1))) < density
    sv = np.where(mask, values, 0.0)
    sv_coef = draw(arrays(np.float64, (k - 1, m), elements=awkward))
    n_pairs = k * (k - 1) // 2
    intercept = draw(arrays(np.float64, (n_pairs,), elements=awkward))
    if k == 2:
        coef = sv_coef.T.copy()
    else:
        coef = dense_from_libsvm_coef(sv_coef, n_support)
    name = draw(st.sampled_from(["linear", "poly", "rbf", "sigmoid"]))
    kernel = Kernel(name, draw(st.sampled_from([1e-7, 0.1, 1 / 3, 250.0])), draw(st.integers(1, 5)),
                    draw(st.sampled_from([0.0, -1.5, 1 / 7])))
    labels = np.array(draw(st.lists(st.integers(-2**31 + 1, 2**31 - 1), min_size=k, max_size=k, unique=True)))
    est = SVC(kernel=name, gamma=kernel.gamma, degree=kernel.degree, coef0=kernel.coef0)
    est.classes_ = labels
    est.multiclass_ = "ovo"
    est.expansion_ = KernelExpansion(sp.csr_matrix(sv) if draw(st.booleans()) else sv, coef, intercept, kernel)
    est.n_support_ = n_support.astype(np.int32)
    est.support_ = np.arange(m, dtype=np.int32)
    est.n_features_in_ = d
    return est


def _dense(a):
    return a.toarray() if sp.issparse(a) else np.asarray(a)


def _assert_same_model(a, b):
    ea, eb = a.expansion_, b.expansion_
    assert _dense(ea.support_vectors).tobytes() == _dense(eb.support_vectors).tobytes()
    assert ea.coef.tobytes() == eb.coef.tobytes()
    assert ea.intercept.tobytes() == eb.intercept.tobytes()
    np.testing.assert_array_equal(a.classes_, b.classes_)
    assert (ea.kernel.name, ea.kernel.degree) == (eb.kernel.name, eb.kernel.degree)
    if ea.kernel.name != "linear":
        assert ea.kernel.gamma == eb.kernel.gamma
    if ea.kernel.name in ("poly", "sigmoid"):
        assert ea.kernel.coef0 == eb.kernel.coef0


@FEW
@given(ovo_models())
def test_libsvm_file_round_trip_is_exact(tmp_path_factory, est):
    path = tmp_path_factory.mktemp("rt") / "model.txt"
    io.save_libsvm_model(est, path)
    back = io.load_libsvm_model(path, n_features=est.n_features_in_)
    ea, eb = est.expansion_, back.expansion_
    # zero SV entries are not written, so -0.0 comes back as 0.0: SVs compare by value (which,
    # for non-zero floats, is bit equality); coefficients and intercepts keep every bit
    np.testing.assert_array_equal(_dense(ea.support_vectors), _dense(eb.support_vectors))
    assert ea.coef.tobytes() == eb.coef.tobytes()
    assert ea.intercept.tobytes() == eb.intercept.tobytes()
    np.testing.assert_array_equal(est.classes_, back.classes_)
    io.save_libsvm_model(back, path.with_suffix(".again"))
    assert path.read_bytes() == path.with_suffix(".again").read_bytes()


@FEW
@given(ovo_models(), st.booleans())
def test_native_file_round_trip_is_bit_exact(tmp_path_factory, est, string_labels):
    if string_labels:
        est.classes_ = np.array([f"class {v}" for v in est.classes_])
    path = tmp_path_factory.mktemp("rt") / "model.npz"
    io.save_model(est, path)
    back = io.load_model(path)
    _assert_same_model(est, back)
    assert sp.issparse(back.expansion_.support_vectors) == sp.issparse(est.expansion_.support_vectors)
    assert back.classes_.dtype == est.classes_.dtype
    np.testing.assert_array_equal(back.n_support_, est.n_support_)
    X = np.linspace(-1, 1, 4 * est.n_features_in_).reshape(4, -1)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(back.expansion_.decision_function(X), est.expansion_.decision_function(X))
