import numpy as np
import pytest
import scipy.sparse as sp

from leansvm.core.expansion import BLOCK_CALL_MULT_ADDS, KernelExpansion
from leansvm.core.kernels import Kernel
from leansvm.core.multiclass import dense_from_libsvm_coef, libsvm_coef_from_dense, ovo_pairs


def _explicit(sv, coef, intercept, kernel, X):
    """sum_j coef[j] k(sv_j, x) + b by a plain double loop: the definition."""
    out = np.tile(intercept, (X.shape[0], 1)).astype(float)
    for i, x in enumerate(X):
        for j, s in enumerate(sv):
            out[i] += coef[j] * kernel(x[None, :], s[None, :])[0, 0]
    return out


@pytest.mark.parametrize("name", ["linear", "rbf", "poly", "sigmoid"])
def test_decision_equals_explicit_kernel_sum(name):
    rng = np.random.default_rng(0)
    sv, X = rng.normal(size=(9, 4)), rng.normal(size=(13, 4))
    coef, intercept = rng.normal(size=(9, 3)), rng.normal(size=3)
    kernel = Kernel(name, 0.4, 2, 0.5)
    exp = KernelExpansion(sv, coef, intercept, kernel)
    expected = _explicit(sv, coef, intercept, kernel, X)
    np.testing.assert_allclose(exp.decision_function(X), expected, rtol=1e-10, atol=1e-10)
    # tiny memory budget: one row per block; CSR on either side; float32
    np.testing.assert_allclose(exp.decision_function(X, max_mb=1e-6), expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(exp.decision_function(sp.csr_matrix(X)), expected, rtol=1e-10, atol=1e-10)
    sparse_exp = KernelExpansion(sp.csr_matrix(sv), coef, intercept, kernel)
    np.testing.assert_allclose(sparse_exp.decision_function(X), expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(exp.decision_function(X, dtype=np.float32), expected, rtol=1e-4, atol=1e-4)


def test_block_sparse_ovo_coefficients_use_the_fast_path_and_agree():
    rng = np.random.default_rng(1)
    n_support = np.array([5, 7, 4, 6])
    m, k = n_support.sum(), len(n_support)
    sv_coef = rng.normal(size=(k - 1, m))
    coef = dense_from_libsvm_coef(sv_coef, n_support)
    np.testing.assert_array_equal(libsvm_coef_from_dense(coef, n_support), sv_coef)
    # each support vector of class c carries exactly the k-1 pairs involving c
    starts = np.concatenate(([0], np.cumsum(n_support)))
    for c in range(k):
        nz = np.flatnonzero(coef[starts[c]])
        assert [p for p, (i, j) in enumerate(ovo_pairs(k)) if c in (i, j)] == nz.tolist()
    kernel = Kernel("rbf", 0.3)
    sv = rng.normal(size=(m, 3))
    exp = KernelExpansion(sv, coef, np.zeros(coef.shape[1]), kernel)
    assert exp._blocks is not None and len(exp._blocks) == k
    # few rows take the full product (a Python call per block costs more than it saves), many the blocks
    for rows, blocked in ((1, False), (20, False), (3000, True)):
        assert (rows * exp._saved_per_row >= BLOCK_CALL_MULT_ADDS * len(exp._blocks)) is blocked
        X = rng.normal(size=(rows, 3))
        np.testing.assert_allclose(exp.decision_function(X), kernel(X, sv) @ coef, rtol=1e-10, atol=1e-12)


def test_bad_expansions_and_inputs_raise():
    kernel = Kernel("rbf", 1.0)
    with pytest.raises(ValueError, match="coefficient rows"):
        KernelExpansion(np.zeros((3, 2)), np.zeros((2, 1)), [0.0], kernel)
    with pytest.raises(ValueError, match="intercept"):
        KernelExpansion(np.zeros((3, 2)), np.zeros((3, 2)), [0.0], kernel)
    with pytest.raises(ValueError, match="finite"):
        KernelExpansion(np.zeros((1, 2)), [[np.nan]], [0.0], kernel)
    exp = KernelExpansion(np.zeros((1, 2)), [[1.0]], [0.5], kernel)
    with pytest.raises(ValueError, match="features"):
        exp.decision_function(np.zeros((4, 3)))
    empty = KernelExpansion(np.zeros((0, 2)), np.zeros((0, 1)), [0.5], kernel)
    np.testing.assert_array_equal(empty.decision_function(np.ones((3, 2))), np.full((3, 1), 0.5))
