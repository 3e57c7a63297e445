"""Epsilon-support vector regression (LIBSVM ``-s 3``, scikit-learn ``SVR``) by IRWLS.

The estimator is thin: it builds :func:`leansvm.core.problems.epsilon_svr`
(two variables per sample, the two sides of the epsilon-insensitive loss) and
hands it to the same chunked IRWLS solver as C-SVC (:mod:`leansvm.exact.irwls`);
both variables of a sample read one kernel row, computed once into a row cache
over the samples. The model is a :class:`~leansvm.core.expansion.KernelExpansion`
with coefficients alpha_i - alpha*_i, so prediction is the classifiers' blocked
kernel product.

Partial (issue 21): no LIBSVM / native model files, ONNX export or command-line
``-s 3`` for SVR yet; NuSVR, NuSVC and the one-class SVM are not built yet.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from leansvm.core.expansion import KernelExpansion
from leansvm.core.kernels import Kernel, KernelRowCache
from leansvm.core.problems import epsilon_svr
from leansvm.core.validation import (check_positive_number, fit_transaction, validate_predict_data,
                                     validate_regression_data)
from leansvm.exact.irwls import DEFAULT_WORKING_SET, solve_irwls


class SVR(RegressorMixin, BaseEstimator):
    """Epsilon-SVR with scikit-learn's ``SVR`` parameters, solved by chunked IRWLS.

    The primal is min 1/2 ||w||^2 + sum_i C_i max(0, |z_i - f(x_i) - b| - epsilon),
    C_i = C x sample weight; its dual is LIBSVM's (same optimum, objective in
    ``dual_objective_``). ``working_set_size``, ``shrinking`` and ``random_state`` as
    :class:`leansvm.SVC`.

    Fitted attributes: ``support_``, ``support_vectors_``, ``dual_coef_``
    (alpha_i - alpha*_i, shape (1, n_SV)), ``intercept_``, ``n_support_``,
    ``expansion_``, ``dual_objective_``, ``n_iter_``, ``fit_status_``.
    """

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

    @fit_transaction
    def fit(self, X, y, sample_weight=None):
        C = check_positive_number("C", self.C)
        epsilon = check_positive_number("epsilon", self.epsilon, allow_zero=True)
        check_positive_number("tol", self.tol)
        X, y = validate_regression_data(self, X, y)
        sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        C_i = C * sample_weight
        keep = np.flatnonzero(C_i > 0)      # zero weight: the sample cannot be a support vector
        if keep.size == 0:
            raise ValueError("SVR: every sample has zero weight")
        X_keep = X[keep]
        kernel = Kernel.from_params(self.kernel, self.gamma, self.degree, self.coef0, X)
        problem = epsilon_svr(y[keep], C_i[keep], epsilon)
        dtype = np.float32 if self.tol >= 1e-4 else np.float64
        rows = KernelRowCache(kernel, X_keep, float(self.cache_size), dtype=dtype)
        fit = solve_irwls(X_keep, problem, kernel, tol=self.tol, working_set_size=self.working_set_size,
                          cache_size=self.cache_size, max_iter=self.max_iter, random_state=self.random_state,
                          verbose=int(self.verbose), shrinking=bool(self.shrinking),
                          kernel_cache=(rows, np.arange(keep.size)))
        coef = problem.coef(fit.alpha, keep.size)
        sv = np.flatnonzero(coef != 0)
        self.support_ = keep[sv].astype(np.int32)
        self.expansion_ = KernelExpansion(X_keep[sv], coef[sv, None], np.array([fit.intercept]), kernel)
        self.n_support_ = np.array([sv.size], dtype=np.int32)
        self.dual_objective_ = np.array([fit.dual_objective])
        self.n_iter_ = np.array([fit.n_iter])
        self.fit_status_ = 0 if fit.converged else 1
        self._gamma = kernel.gamma
        return self

    def predict(self, X):
        X = validate_predict_data(self, X)
        return self.expansion_.decision_function(X)[:, 0]

    @property
    def support_vectors_(self):
        check_is_fitted(self, "expansion_")
        return self.expansion_.support_vectors

    @property
    def dual_coef_(self):
        check_is_fitted(self, "expansion_")
        return self.expansion_.coef.T.copy()

    @property
    def intercept_(self):
        check_is_fitted(self, "expansion_")
        return self.expansion_.intercept

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
