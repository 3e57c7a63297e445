"""Shared fixtures and reference helpers (LIBSVM through scikit-learn's SVC)."""

from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

from leansvm.kernels import Kernel
from leansvm.multiclass import dense_from_libsvm_coef

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def libsvm_dual_objectives(sk_model) -> np.ndarray:
    """LIBSVM's dual objective 1/2 c'Kc - sum|c| per binary problem of a fitted ``sklearn.svm.SVC``."""
    kernel = Kernel.from_params(sk_model.kernel, sk_model._gamma, sk_model.degree, sk_model.coef0)
    K = kernel(sk_model.support_vectors_)
    if len(sk_model.classes_) == 2:
        coef = sk_model.dual_coef_.T
    else:
        coef = dense_from_libsvm_coef(sk_model.dual_coef_, sk_model.n_support_)
    return np.array([0.5 * c @ K @ c - np.abs(c).sum() for c in coef.T])


@pytest.fixture(scope="session")
def binary_problem():
    X, y = make_classification(n_samples=400, n_features=8, n_informative=5, flip_y=0.05,
                               random_state=1)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="session")
def multiclass_problem():
    X, y = make_classification(n_samples=450, n_features=6, n_informative=4, n_classes=4,
                               n_clusters_per_class=1, random_state=2)
    return StandardScaler().fit_transform(X), y
