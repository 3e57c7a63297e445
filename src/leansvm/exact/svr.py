"""Support vector regression by IRWLS: epsilon-SVR (LIBSVM ``-s 3``, scikit-learn ``SVR``) and
nu-SVR (``-s 4``, ``NuSVR``).

The estimators are thin: each builds its problem of :mod:`leansvm.core.problems` (two
variables per sample, the two sides of the epsilon-insensitive loss) and
:func:`leansvm.exact.single_problem.solve_expansion` solves it with the same chunked IRWLS
as C-SVC, both variables of a sample reading one cached kernel row. The model is a
:class:`~leansvm.core.expansion.KernelExpansion` with coefficients alpha_i - alpha*_i, so
prediction is the classifiers' blocked kernel product.

* epsilon-SVR (:func:`~leansvm.core.problems.epsilon_svr`): the primal is
  min 1/2 ||w||^2 + sum_i C_i max(0, |z_i - f(x_i) - b| - epsilon), C_i = C x sample weight.
* nu-SVR (:func:`~leansvm.core.problems.nu_svr`, Schoelkopf et al. 2000): epsilon becomes a
  variable, priced by C nu; sum alpha = sum alpha* = C nu sum_i w_i / 2 (LIBSVM's two
  equalities). The tube width found is ``epsilon_`` (-r at the optimum).

Model files: LIBSVM's (``epsilon_svr`` / ``nu_svr``) and the native ``.npz``
(:mod:`leansvm.io`). Partial (issue 21): no ONNX export, command-line ``-s 3/4`` or
precomputed kernels for regression yet.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from leansvm.core.problems import epsilon_svr, nu_svr
from leansvm.core.registry import register_estimator
from leansvm.core.validation import (check_nu, check_positive_number, fit_transaction, validate_predict_data,
                                     validate_regression_data)
from leansvm.exact.irwls import DEFAULT_WORKING_SET
from leansvm.exact.single_problem import ExpansionAttributes, solve_expansion


class _IRWLSRegressor(ExpansionAttributes, RegressorMixin, BaseEstimator):
    """Fit / predict shared by SVR and NuSVR; subclasses give the problem (``_problem``)."""

    @fit_transaction
    def fit(self, X, y, sample_weight=None):
        C = check_positive_number("C", self.C)
        X, y = validate_regression_data(self, X, y)
        sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        solve_expansion(self, X, C * sample_weight, lambda keep, bounds: self._problem(y[keep], bounds))
        return self

    def predict(self, X):
        X = validate_predict_data(self, X)
        return self.expansion_.decision_function(X)[:, 0]


@register_estimator
class SVR(_IRWLSRegressor):
    """Epsilon-SVR with scikit-learn's ``SVR`` parameters, solved by chunked IRWLS.

    The primal is min 1/2 ||w||^2 + sum_i C_i max(0, |z_i - f(x_i) - b| - epsilon),
    C_i = C x sample weight; its dual is LIBSVM's (same optimum, objective in
    ``dual_objective_``). ``working_set_size``, ``shrinking`` and ``random_state`` as
    :class:`leansvm.SVC`.

    Fitted attributes: ``support_``, ``support_vectors_``, ``dual_coef_``
    (alpha_i - alpha*_i, shape (1, n_SV)), ``intercept_``, ``n_support_``,
    ``expansion_``, ``dual_objective_``, ``n_iter_``, ``fit_status_``.
    """

    libsvm_svm_type = "epsilon_svr"     #: LIBSVM's svm_type (model files)

    def __init__(self, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, C=1.0, epsilon=0.1,
                 shrinking=True, cache_size=200.0, verbose=False, max_iter=-1,
                 working_set_size=DEFAULT_WORKING_SET, random_state=None):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.C = C
        self.epsilon = epsilon
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.working_set_size = working_set_size
        self.random_state = random_state

    def _problem(self, z, C):
        return epsilon_svr(z, C, check_positive_number("epsilon", self.epsilon, allow_zero=True))


@register_estimator
class NuSVR(_IRWLSRegressor):
    """nu-SVR with scikit-learn's ``NuSVR`` parameters, solved by chunked IRWLS.

    ``nu`` in (0, 1] bounds the fraction of samples outside the tube from above and of support
    vectors from below; the tube width is found (``epsilon_``). Other parameters and fitted
    attributes as :class:`SVR`.
    """

    libsvm_svm_type = "nu_svr"     #: LIBSVM's svm_type (model files)

    def __init__(self, nu=0.5, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True,
                 tol=1e-3, cache_size=200.0, verbose=False, max_iter=-1,
                 working_set_size=DEFAULT_WORKING_SET, random_state=None):
        self.nu = nu
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.tol = tol
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.working_set_size = working_set_size
        self.random_state = random_state

    def _problem(self, z, C):
        return nu_svr(z, C, check_nu(self.nu, "NuSVR"))

    @property
    def epsilon_(self):
        """The tube half-width nu-SVR found (LIBSVM prints it as ``epsilon = -r``)."""
        check_is_fitted(self, "expansion_")
        return -self.solver_stats_["margin_level"]
