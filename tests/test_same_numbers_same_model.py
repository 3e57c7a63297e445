"""The same numbers as a NumPy array, a sparse matrix, a LIBSVM file (0-based, as scikit-learn's
``dump_svmlight_file`` writes it) and a table give the main job the same preprocessing and the
same model, to the bit: the rows are made dense or sparse by their numbers before they are
scaled (:func:`leansvm.job.data.working_form`), and every later stage computes from the same
numbers the same way."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_digits

from leansvm import fit_lean
from leansvm.io import load_svmlight


@pytest.fixture(scope="module")
def pixels():
    """scikit-learn's digits (pixel counts 0..16, many zeros), 5 classes, no constant column (a
    table drops those, a matrix keeps them as zero columns)."""
    X, y = load_digits(n_class=5, return_X_y=True)
    X, y = X[:400], y[:400]
    X = X[:, X[:300].std(axis=0) > 0]
    return X[:300], y[:300], X[300:], y[300:]


def _fit(X, y):
    return fit_lean(X, y, Cs=[1.0, 10.0], gammas=None, size_fractions=(), libsvm_reference_model=False,
                    random_state=0)


def test_an_array_a_sparse_matrix_a_libsvm_file_and_a_table_give_the_same_model(pixels, tmp_path):
    X, y, X_test, _ = pixels
    path = tmp_path / "digits.txt"
    dump_svmlight_file(X, y, str(path), zero_based=True)
    from_file, y_file = load_svmlight(path, n_features=X.shape[1])
    assert sp.issparse(from_file) and np.array_equal(from_file.toarray(), X)
    columns = [f"pixel{i}" for i in range(X.shape[1])]
    forms = {"array": (X, y), "csr": (sp.csr_matrix(X), y), "file": (from_file, y_file.astype(y.dtype)),
             "table": (pd.DataFrame(X, columns=columns), y)}
    results = {name: _fit(*data) for name, data in forms.items()}
    reference = results["array"]
    scaler = reference.model[0]
    assert scaler.kind_ == "range"
    for name, result in results.items():
        prep = result.model[0]
        fitted = prep.scaler_ if name == "table" else prep
        np.testing.assert_array_equal(fitted.min_, scaler.min_, err_msg=name)
        np.testing.assert_array_equal(fitted.max_, scaler.max_, err_msg=name)
        assert (result.selection.C, result.selection.gamma) == (reference.selection.C, reference.selection.gamma), name
        assert [(c.name, c.n_support, c.validation_accuracy) for c in result.candidates] == \
            [(c.name, c.n_support, c.validation_accuracy) for c in reference.candidates], name
        test_rows = pd.DataFrame(X_test, columns=columns) if name == "table" else X_test
        np.testing.assert_array_equal(result.model.decision_function(test_rows),
                                      reference.model.decision_function(X_test), err_msg=name)
