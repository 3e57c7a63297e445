"""scikit-learn conformance of every estimator in ``estimators_under_test.CASES``.

Each expected failure is listed, with its reason, in ``estimators_under_test``
(scikit-learn's ``expected_failed_checks`` mechanism; strict xfail, so a
check that starts passing must be taken off the list).
"""

import warnings

from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from .estimators_under_test import estimators, expected_failed_checks


@parametrize_with_checks(estimators(), expected_failed_checks=expected_failed_checks, xfail_strict=True)
def test_sklearn_conformance(estimator, check):
    with warnings.catch_warnings():
        # the checks fit tiny, sometimes random-label problems with small iteration budgets
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)
