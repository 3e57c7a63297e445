"""Shared fixtures and reference helpers (LIBSVM through scikit-learn's SVC)."""

import signal
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

from leansvm.core.sklearn_svc import libsvm_dual_objectives  # noqa: F401  (re-exported for the tests)

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


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


@pytest.fixture
def interactive_sigint():
    """SIGINT as at a terminal for the test (Python's KeyboardInterrupt handler), also when the test
    run itself ignores it (a run started in the background by a script inherits SIG_IGN, which
    Python and the ``leansvm`` command respect). Its value, given to ``subprocess`` as
    ``preexec_fn``, does the same in a child process."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGINT, previous)


@pytest.fixture(autouse=True)
def _repeatable_global_seed():
    """Every test starts from ``np.random.seed(0)``: a fit without ``random_state`` draws its seed
    from NumPy's global RandomState (scikit-learn's convention), so each test sees the same random
    working sets in every run and in any order. A CI run once failed on an unseeded NuSVR whose
    chunking seed moved a compressed model's error past its bound."""
    np.random.seed(0)
