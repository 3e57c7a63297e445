"""The one-class SVM (LIBSVM ``-s 2``, scikit-learn ``OneClassSVM``; Schoelkopf et al. 2001) by IRWLS.

Its dual is :func:`leansvm.core.problems.one_class`:

    min_a 1/2 a'Ka   s.t.  0 <= a_i <= w_i,  sum_i a_i = nu sum_i w_i

(w the sample weights, 1 by default), LIBSVM's scaling of the problem; the decision function
is sum_i a_i k(x_i, x) - rho, rho from LIBSVM's ``calculate_rho``. The samples with a
negative decision are the outliers; nu in (0, 1] bounds their fraction from above and the
fraction of support vectors from below.
"""

from __future__ import annotations

from sklearn.base import BaseEstimator, OutlierMixin

from leansvm.core.problems import one_class
from leansvm.core.registry import register_estimator
from leansvm.core.validation import check_nu, check_sample_weight, fit_transaction, validate_unlabelled_data
from leansvm.exact.irwls import DEFAULT_WORKING_SET
from leansvm.core.classifier import ExpansionAttributes, OneClassPrediction
from leansvm.exact.single_problem import solve_expansion


@register_estimator
class OneClassSVM(OneClassPrediction, ExpansionAttributes, OutlierMixin, BaseEstimator):
    """One-class SVM with scikit-learn's ``OneClassSVM`` parameters, solved by chunked IRWLS.

    ``predict`` gives +1 (inlier) or -1 (outlier); ``decision_function`` = ``score_samples``
    - ``offset_``, ``score_samples`` = sum_i a_i k(x_i, x). Fitted attributes as
    :class:`leansvm.SVR` plus ``offset_`` (rho; ``intercept_`` = -rho).

    Parameters
    ----------
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'} or callable, default='rbf'
        The kernel, with LIBSVM's meanings of ``gamma``, ``degree`` and ``coef0``.
    degree : int, default=3
        Degree of the polynomial kernel.
    gamma : {'scale', 'auto'} or float, default='scale'
        Kernel coefficient; 'scale' is 1 / (n_features X.var()), as scikit-learn.
    coef0 : float, default=0.0
        Independent term of the polynomial and sigmoid kernels.
    tol : float, default=1e-3
        Stopping tolerance on the maximal KKT violation (LIBSVM's eps).
    nu : float, default=0.5
        In (0, 1]: an upper bound on the fraction of errors and a lower bound on the fraction of support vectors.
    shrinking : bool, default=True
        LIBSVM's shrinking heuristic.
    cache_size : float, default=200
        Kernel row cache in MB.
    verbose : bool or int, default=False
        A progress bar (:mod:`leansvm.progress`).
    max_iter : int, default=-1
        Bound on the solver iterations (-1: none); a ``ConvergenceWarning`` when reached.
    working_set_size : int, default=128
        q, the samples of one IRWLS chunk.
    random_state : int, RandomState or None, default=None
        Seed of the fit's random choices (the probability folds): reproducible fits.

    Attributes
    ----------
    offset_ : float
        rho: ``decision_function = score_samples - offset_``.
    dual_coef_ : ndarray or sparse matrix of shape (1, n_SV)
        The coefficients a_i.
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training data.
    support_vectors_ : ndarray or sparse matrix of shape (n_SV, n_features)
        The support vectors (CSR when fitted on sparse data).
    intercept_ : ndarray
        The constant(s) of the decision function.
    expansion_ : KernelExpansion
        The model as one kernel expansion (what files, ONNX, Dask and ``compress`` read).
    dual_objective_ : float or ndarray
        LIBSVM's dual objective at the solution.
    n_iter_ : int or ndarray
        Solver iterations.

    Examples
    --------
    >>> import numpy as np
    >>> from leansvm import OneClassSVM
    >>> X = np.random.default_rng(0).normal(size=(200, 2))
    >>> model = OneClassSVM(nu=0.1, gamma=0.5).fit(X)
    >>> model.predict([[0.0, 0.0], [6.0, 6.0]]).tolist()
    [1, -1]
    """

    #: scikit-learn's rule: a model fitted (by ``fit``) on dense X refuses sparse X at prediction;
    #: one read from a model file takes either
    sparse_input_needs_sparse_fit = True

    libsvm_svm_type = "one_class"     #: LIBSVM's svm_type (model files)

    def __init__(self, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, nu=0.5, shrinking=True,
                 cache_size=200.0, verbose=False, max_iter=-1, working_set_size=DEFAULT_WORKING_SET,
                 random_state=None):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.nu = nu
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.working_set_size = working_set_size
        self.random_state = random_state

    @fit_transaction
    def fit(self, X, y=None, sample_weight=None):
        nu = check_nu(self.nu, "OneClassSVM")
        X = validate_unlabelled_data(self, X)
        sample_weight = check_sample_weight(sample_weight, X)
        solve_expansion(self, X, sample_weight, lambda keep, bounds: one_class(nu, bounds))
        return self
