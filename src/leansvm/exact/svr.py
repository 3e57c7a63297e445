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

* ``probability=True`` adds LIBSVM's noise model (``svm-train -b 1``): the targets are taken as
  the prediction plus Laplace noise e^(-|z|/sigma) / (2 sigma), sigma (``probA_``) the mean
  absolute 5-fold cross-validation residual, residuals beyond 5 x sqrt(2) x their mean left
  out (LIBSVM's ``svm_svr_probability``).

Model files: LIBSVM's (``epsilon_svr`` / ``nu_svr``, with ``probA``) and the native ``.npz``
(:mod:`leansvm.io`).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.utils.validation import check_is_fitted

from leansvm.core.problems import epsilon_svr, nu_svr
from leansvm.core.registry import register_estimator
from leansvm.core.validation import (check_C, check_int, check_nu, check_positive_number, check_sample_weight,
                                     fit_transaction, validate_regression_data)
from leansvm.exact.irwls import DEFAULT_WORKING_SET
from leansvm.core.classifier import ExpansionAttributes
from leansvm.exact.single_problem import solve_expansion


class _IRWLSRegressor(ExpansionAttributes, RegressorMixin, BaseEstimator):
    """Fit / predict shared by SVR and NuSVR; subclasses give the problem (``_problem``)."""

    #: scikit-learn's rule: a model fitted (by ``fit``) on dense X refuses sparse X at prediction;
    #: one read from a model file takes either
    sparse_input_needs_sparse_fit = True

    @fit_transaction
    def fit(self, X, y, sample_weight=None):
        C = check_C(self.C)
        X_given = X
        X, y = validate_regression_data(self, X, y)
        sample_weight = check_sample_weight(sample_weight, X)
        if self.probability:
            self.probA_ = np.array([laplace_sigma(self, X_given, y, sample_weight)])
        solve_expansion(self, X, C * sample_weight, lambda keep, bounds: self._problem(y[keep], bounds),
                        working_set_size=regression_working_set(self.working_set_size, X.shape[0]))
        return self

    def predict(self, X):
        return self._output(X)


#: 'auto' takes LARGE_WORKING_SET variables per chunk from this many variables (10,000 samples) on. Fewer
#: chunks of more variables: a chunk whose rows the cache does not hold returns to Python, and a
#: regression problem has twice the variables of its samples. Measured (best of 2, 2 cores; q = 128 / 512):
#: friedman1-50k 36.3 / 18.3 s (q = 256: 24.6, q = 1024: 30.8), nu-SVR on it 42.8 / 24.0 s, diamonds
#: 19.7 / 12.0 s, friedman1-10k 1.65 / 1.50 s; below, 512 loses: friedman1-5k 0.70 / 0.92 s, diabetes
#: (442 rows) 16 / 27 ms. Since the samples' rows are read in place (irwls_chunk.column), diamonds
#: at q = 256 / 384 / 512 / 768 / 1024: 17.6 / 12.9 / 10.0 / 10.3 / 12.1 s (the faster of two fits)
LARGE_PROBLEM_VARIABLES = 20_000
LARGE_WORKING_SET = 512


def regression_working_set(working_set_size, n_samples) -> int:
    """The working set of a regression problem of ``n_samples`` samples (2 n variables)."""
    if isinstance(working_set_size, str) and working_set_size == "auto":
        return LARGE_WORKING_SET if 2 * n_samples >= LARGE_PROBLEM_VARIABLES else DEFAULT_WORKING_SET
    try:
        return check_int("working_set_size", working_set_size, 2)
    except ValueError:
        raise ValueError(f"working_set_size must be 'auto' or an integer >= 2, got {working_set_size!r}") from None


def laplace_sigma(estimator, X, y, sample_weight) -> float:
    """LIBSVM's ``svm_svr_probability``: the scale sigma of Laplace noise on the targets.

    r_i = |y_i - f_{-fold(i)}(x_i)| over 5-fold cross-validation (shuffled folds); sigma is the
    mean of the r_i at most 5 sqrt(2) mean(r) (larger ones are outliers)."""
    if y.size < 2:
        raise ValueError(f"{type(estimator).__name__}: probability=True needs at least two samples")
    folds = KFold(min(5, y.size), shuffle=True, random_state=estimator.random_state)
    model = clone(estimator).set_params(probability=False)
    predicted = cross_val_predict(model, X, y, cv=folds, params={"sample_weight": sample_weight})
    residual = np.abs(y - predicted)
    inside = residual <= 5.0 * np.sqrt(2.0) * residual.mean()
    return float(residual[inside].mean())


@register_estimator
class SVR(_IRWLSRegressor):
    """Epsilon-SVR with scikit-learn's ``SVR`` parameters, solved by chunked IRWLS.

    The primal is min 1/2 ||w||^2 + sum_i C_i max(0, |z_i - f(x_i) - b| - epsilon),
    C_i = C x sample weight; its dual is LIBSVM's (same optimum, objective in
    ``dual_objective_``). ``working_set_size``, ``shrinking`` and ``random_state`` as
    :class:`leansvm.SVC`; ``probability``: fit LIBSVM's Laplace noise model (``probA_``, see
    the module docstring; five extra fits).

    Fitted attributes: ``support_``, ``support_vectors_``, ``dual_coef_``
    (alpha_i - alpha*_i, shape (1, n_SV)), ``intercept_``, ``n_support_``,
    ``expansion_``, ``dual_objective_``, ``n_iter_``, ``fit_status_``, ``probA_``.

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
    C : float, default=1.0
        Penalty of the errors (times the sample weight).
    epsilon : float, default=0.1
        Half-width of the tube inside which errors cost nothing.
    shrinking : bool, default=True
        LIBSVM's shrinking heuristic.
    cache_size : float, default=200
        Kernel row cache in MB.
    verbose : bool or int, default=False
        A progress bar (:mod:`leansvm.progress`).
    max_iter : int, default=-1
        Bound on the solver iterations (-1: none); a ``ConvergenceWarning`` when reached.
    working_set_size : int or 'auto', default='auto'
        q, the variables of one IRWLS chunk; 'auto': 128, or 512 for problems of at least
        ``LARGE_PROBLEM_VARIABLES`` variables (two per sample).
    random_state : int, RandomState or None, default=None
        Seed of the fit's random choices (the probability folds): reproducible fits.
    probability : bool, default=False
        Classifiers: Platt-scaled ``predict_proba``; regressors: LIBSVM's Laplace noise scale ``probA_``.

    Attributes
    ----------
    dual_coef_ : ndarray or sparse matrix of shape (1, n_SV)
        alpha_i - alpha*_i.
    n_support_ : ndarray of shape (1,)
        The number of support vectors.
    probA_ : ndarray
        With ``probability``: the Laplace scale of the residuals.
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
    >>> from leansvm import SVR
    >>> X = np.linspace(0, 1, 20).reshape(-1, 1)
    >>> model = SVR(C=10.0, epsilon=0.01).fit(X, 2 * X.ravel())
    >>> bool(abs(model.predict([[0.5]])[0] - 1.0) < 0.05)
    True
    """

    libsvm_svm_type = "epsilon_svr"     #: LIBSVM's svm_type (model files)

    def __init__(self, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, C=1.0, epsilon=0.1,
                 shrinking=True, cache_size=200.0, verbose=False, max_iter=-1,
                 working_set_size="auto", random_state=None, probability=False):
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
        self.probability = probability

    def _problem(self, z, C):
        return epsilon_svr(z, C, check_positive_number("epsilon", self.epsilon, allow_zero=True))


@register_estimator
class NuSVR(_IRWLSRegressor):
    """nu-SVR with scikit-learn's ``NuSVR`` parameters, solved by chunked IRWLS.

    ``nu`` in (0, 1] bounds the fraction of samples outside the tube from above and of support
    vectors from below; the tube width is found (``epsilon_``). Other parameters and fitted
    attributes as :class:`SVR`.

    Parameters
    ----------
    nu : float, default=0.5
        In (0, 1]: an upper bound on the fraction of errors and a lower bound on the fraction of support vectors.
    C : float, default=1.0
        Penalty of the errors (times the sample weight).
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'} or callable, default='rbf'
        The kernel, with LIBSVM's meanings of ``gamma``, ``degree`` and ``coef0``.
    degree : int, default=3
        Degree of the polynomial kernel.
    gamma : {'scale', 'auto'} or float, default='scale'
        Kernel coefficient; 'scale' is 1 / (n_features X.var()), as scikit-learn.
    coef0 : float, default=0.0
        Independent term of the polynomial and sigmoid kernels.
    shrinking : bool, default=True
        LIBSVM's shrinking heuristic.
    tol : float, default=1e-3
        Stopping tolerance on the maximal KKT violation (LIBSVM's eps).
    cache_size : float, default=200
        Kernel row cache in MB.
    verbose : bool or int, default=False
        A progress bar (:mod:`leansvm.progress`).
    max_iter : int, default=-1
        Bound on the solver iterations (-1: none); a ``ConvergenceWarning`` when reached.
    working_set_size : int or 'auto', default='auto'
        q, the variables of one IRWLS chunk; 'auto': 128, or 512 for problems of at least
        ``LARGE_PROBLEM_VARIABLES`` variables (two per sample).
    random_state : int, RandomState or None, default=None
        Seed of the fit's random choices (the probability folds): reproducible fits.
    probability : bool, default=False
        Classifiers: Platt-scaled ``predict_proba``; regressors: LIBSVM's Laplace noise scale ``probA_``.

    Attributes
    ----------
    epsilon_ : float
        The tube half-width the solution found.
    dual_coef_ : ndarray or sparse matrix of shape (1, n_SV)
        alpha_i - alpha*_i.
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
    >>> from leansvm import NuSVR
    >>> X = np.linspace(0, 1, 20).reshape(-1, 1)
    >>> model = NuSVR(nu=0.5, C=10.0).fit(X, 2 * X.ravel())
    >>> bool(model.epsilon_ >= 0)
    True
    """

    libsvm_svm_type = "nu_svr"     #: LIBSVM's svm_type (model files)

    def __init__(self, nu=0.5, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True,
                 tol=1e-3, cache_size=200.0, verbose=False, max_iter=-1,
                 working_set_size="auto", random_state=None, probability=False):
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
        self.probability = probability

    def _problem(self, z, C):
        return nu_svr(z, C, check_nu(self.nu, "NuSVR"))

    @property
    def epsilon_(self):
        """The tube half-width nu-SVR found (LIBSVM prints it as ``epsilon = -r``)."""
        check_is_fitted(self, "expansion_")
        return -self.solver_stats_["margin_level"]
