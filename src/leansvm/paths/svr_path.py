r"""Regularisation paths of epsilon-SVR with safe screening, and ``SVRCV``.

``svr_path(X, y, Cs, gamma=..., epsilon=...)`` solves LIBSVM's epsilon-SVR (``leansvm.SVR``,
the bias as LIBSVM's: y'a = 0) for every C of an ascending grid, each C warm-started from the
previous solution, and screened by the duality-gap rule.

Why the rule carries over. In the generic dual of :mod:`leansvm.core.problems` epsilon-SVR has
two variables per sample, a = [alpha; alpha*] with y = [1; -1] and p = [epsilon - z; epsilon + z],
and variable i is the dual of the hinge C_i max(0, -p_i - y_i (w'phi_i + b)): for alpha_i that
is max(0, z_i - f(x_i) - epsilon), the loss above the tube; for alpha*_i, max(0, f(x_i) - z_i -
epsilon), below it. The primal 1/2 ||w||^2 + sum of these hinges is 1-strongly convex in w, so
any primal-dual pair with duality gap G puts w* in the ball of radius sqrt(2 G) around the
primal point (the GAP safe construction; Ogawa et al.'s ball tests are its special case for
p = -1), and the bias b* in an interval computed from the same ball
(:func:`leansvm.paths.screening.gap_bounds`). For each variable:

    lower bound of y_i (w*'phi_i + b*) > -p_i   =>  a_i = 0      (inside the tube on that side)
    upper bound                      < -p_i   =>  a_i = C_i    (outside the tube on that side)

i.e. a sample provably inside the tube has alpha = alpha* = 0, one provably above (below) it
has alpha_i = C_i (alpha*_i = C_i). :func:`leansvm.paths.screening.gap_screen_from_reference`
evaluates this at the next C from the previous C's solution scaled to its best feasible
multiple, with no kernel evaluation. Screened variables are held at their bound; the solver
(IRWLS, the equality needs it) works on the rest.

One-class along nu: scaled to sum b = 1, decreasing nu is an ascending C path of one problem,
screened by the same rule with the equality's term in the primal (:mod:`leansvm.paths.one_class_path`).

Kernel rows: one :class:`~leansvm.exact.box_cd.PathKernelCache` over the samples; both variables
of a sample read its row (``index`` = the sample of each variable), so a row is computed once
for the whole path.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils.validation import _check_sample_weight, check_X_y

from leansvm.core.classifier import ExpansionAttributes
from leansvm.core.expansion import KernelExpansion
from leansvm.core.kernels import Kernel
from leansvm.core.problems import DualProblem, epsilon_svr
from leansvm.core.validation import (check_positive_number, fit_transaction,
                                     validate_regression_data)
from leansvm.exact.irwls import DEFAULT_WORKING_SET
from leansvm.paths.binary_path import binary_path, check_grid, row_cache
from leansvm.paths.model_selection import cv_results, default_C_grid
from leansvm.progress import Progress

__all__ = ["svr_path", "SVRPathPoint", "SVRCV"]


@dataclass
class SVRPathPoint:
    """One C of an SVR path: the fitted :class:`leansvm.SVR` and what screening did."""

    C: float
    model: object
    n_screened: int          # variables proven at a bound before the solve (of 2 n)
    n_at_bound: int          # variables at a bound in the solution
    solve_seconds: float
    rule_seconds: float


def svr_path(X, y, Cs, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, epsilon=0.1, sample_weight=None,
             screening="gap", tol=1e-3, cache_size=200.0, working_set_size=DEFAULT_WORKING_SET, callback=None):
    """Epsilon-SVR (LIBSVM's, as :class:`leansvm.SVR`) at every C of ``Cs`` (sorted ascending),
    screened by the duality-gap rule (``screening='gap'``; None: warm starts only). Returns a list
    of :class:`SVRPathPoint`, one per C, each holding a fitted ``SVR``. ``working_set_size``: IRWLS's
    q, by default ``SVR``'s (the classifier paths' larger q for 10,000+ variables is slower here:
    diamonds 10k rows, C = 100, 8.4 s at q = 128 against 14.9 s at 512, one thread).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Training rows.
    y : array-like of shape (n_samples,)
        The regression targets.
    Cs : array-like
        The values of C, ascending.
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'} or callable, default='rbf'
        The kernel, with LIBSVM's meanings of ``gamma``, ``degree`` and ``coef0``.
    gamma : {'scale', 'auto'} or float, default='scale'
        Kernel coefficient; 'scale' is 1 / (n_features X.var()), as scikit-learn.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.0
        Independent term of the polynomial and sigmoid kernels.
    epsilon : float, default=0.1
        Half-width of the tube.
    sample_weight : array-like, optional
        Per-sample factor of the bounds C_i.
    screening : {'gap'} or None, default='gap'
        The duality-gap rule; None: warm starts only.
    tol : float, default=1e-3
        Stopping tolerance on the maximal KKT violation (LIBSVM's eps).
    cache_size : float, default=200
        Kernel row cache in MB.
    working_set_size : int, optional, default=128
        IRWLS's working set.
    callback : callable, optional
        Called after each point of the path.

    Returns
    -------
    list of SVRPathPoint
        One per C, each with its fitted ``SVR`` and what screening did.

    Examples
    --------
    >>> import numpy as np
    >>> from leansvm import svr_path
    >>> X = np.linspace(0, 1, 100).reshape(-1, 1)
    >>> points = svr_path(X, np.sin(4 * X.ravel()), [1.0, 10.0], gamma=5.0)
    >>> len(points)
    2
    """
    from leansvm.exact.svr import SVR

    X, y = check_X_y(X, y, accept_sparse="csr", dtype=np.float64, y_numeric=True)
    if not np.all(np.isfinite(y)):
        raise ValueError("svr_path: the targets y hold NaN or inf")
    epsilon = check_positive_number("epsilon", epsilon, allow_zero=True)
    if screening not in ("gap", None):
        raise ValueError(f"svr_path screens with the duality-gap rule: screening must be 'gap' or None, "
                         f"got {screening!r}")
    Cs = check_grid(Cs)
    weights = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    kern = Kernel.from_params(kernel, gamma, degree, coef0, X)
    unit = epsilon_svr(y, weights, epsilon)                        # bounds c_i: C_i = C c_i
    flat = DualProblem(unit.y, unit.p, unit.C, unit.delta, None, unit.kind)
    cache = row_cache(kern, X, cache_size, tol)
    points = binary_path(X[unit.rows], flat, Cs, kern, screening=screening, bias="equality", tol=tol,
                         cache=cache, index=unit.rows, callback=callback,
                         solver_options={"cache_size": cache_size, "random_state": 0,
                                         "working_set_size": int(working_set_size)})
    out = []
    for point in points:
        coef = unit.coef(point.fit.alpha, X.shape[0])
        sv = np.flatnonzero(coef != 0)
        model = SVR(kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, C=point.C, epsilon=epsilon, tol=tol,
                    cache_size=cache_size)
        model.expansion_ = KernelExpansion(X[sv], coef[sv, None], np.array([point.fit.intercept]), kern)
        model.support_ = sv.astype(np.int32)
        model.n_support_ = np.array([sv.size], dtype=np.int32)
        model.dual_objective_ = np.array([point.fit.dual_objective])
        model.n_iter_ = np.array([point.fit.n_iter])
        model.fit_status_ = 0 if point.fit.converged else 1
        model.n_features_in_ = X.shape[1]
        model._gamma = kern.gamma
        out.append(SVRPathPoint(point.C, model, point.n_screened, point.n_non_sv, point.solve_seconds,
                                point.rule_seconds))
    return out


class SVRCV(ExpansionAttributes, RegressorMixin, BaseEstimator):
    """Cross-validated epsilon-SVR: (C, gamma) chosen by K-fold CV over warm-started SVR paths.

    For every gamma in ``gammas`` and every fold, one :func:`svr_path` over ``Cs`` (default:
    :func:`leansvm.paths.model_selection.default_C_grid`) is fitted on the training part and
    scored at every C on the held-out part (``scoring``: scikit-learn's, default R^2 as
    ``SVR.score``). The best mean score (ties: the first candidate, C outer, gamma inner, as
    ``GridSearchCV``) is refitted on all data as a :class:`leansvm.SVR`. ``epsilon`` may be a
    list: then every (epsilon, gamma) gets its paths, and ``best_params_`` / ``cv_results_`` hold
    epsilon too (ParameterGrid's order: C, epsilon, gamma).

    Attributes: ``best_params_``, ``best_score_``, ``best_index_``, ``best_estimator_``,
    ``cv_results_`` (``GridSearchCV``'s keys), and the refitted model's expansion (``predict``).

    Parameters
    ----------
    Cs : array-like, optional
        The values of C, ascending (default: a log-spaced grid, :func:`~leansvm.paths.model_selection.default_C_grid`).
    gammas : sequence of float or 'scale', default=('scale',)
        The kernel widths searched; the folds of one gamma share one kernel row cache.
    epsilon : float or list of float, default=0.1
        Half-width of the tube; a list searches it too.
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'} or callable, default='rbf'
        The kernel, with LIBSVM's meanings of ``gamma``, ``degree`` and ``coef0``.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.0
        Independent term of the polynomial and sigmoid kernels.
    cv : int or cross-validation generator, default=5
        The folds, as scikit-learn.
    scoring : str or callable, optional
        The held-out score (default: R^2, as ``SVR.score``), as scikit-learn's.
    screening : {'gap'} or None, default='gap'
        The safe rule of the SVR paths: the duality-gap ball (:func:`leansvm.paths.screening.gap_bounds`), or none.
    tol : float, default=1e-3
        Stopping tolerance on the maximal KKT violation (LIBSVM's eps).
    cache_size : float, default=200
        Kernel row cache in MB.
    refit : bool, default=True
        Refit the best (C, gamma) on all data.
    verbose : int, default=0
        A progress bar (:mod:`leansvm.progress`).

    Attributes
    ----------
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The model's support vectors (training rows).
    dual_coef_ : ndarray of shape (1, n_SV)
        Their coefficients.
    intercept_ : ndarray of shape (1,)
        The constant of the decision function.
    expansion_ : KernelExpansion
        The model as a kernel expansion f(x) = sum_i coef_i k(sv_i, x) + b (:mod:`leansvm.core.expansion`).
    n_features_in_ : int
        Number of features seen in ``fit``.
    best_params_ : dict
        The chosen ``C``, ``gamma`` (and ``epsilon``).
    best_score_ : float
        Their mean cross-validated score.
    cv_results_ : dict of ndarray
        Per parameter cell: mean and standard deviation of the folds' scores, as ``GridSearchCV``'s.
    best_estimator_ : SVR
        The model refit on all rows at ``best_params_``.

    Examples
    --------
    >>> import numpy as np
    >>> from leansvm import SVRCV
    >>> X = np.linspace(0, 1, 120).reshape(-1, 1)
    >>> search = SVRCV(Cs=[1, 10], gammas=[1.0, 10.0], cv=3).fit(X, np.sin(4 * X.ravel()))
    >>> sorted(search.best_params_)
    ['C', 'gamma']
    """

    def __init__(self, Cs=None, gammas=("scale",), epsilon=0.1, kernel="rbf", degree=3, coef0=0.0, cv=5,
                 scoring=None, screening="gap", tol=1e-3, cache_size=200.0, refit=True, verbose=0):
        self.Cs = Cs
        self.gammas = gammas
        self.epsilon = epsilon
        self.kernel = kernel
        self.degree = degree
        self.coef0 = coef0
        self.cv = cv
        self.scoring = scoring
        self.screening = screening
        self.tol = tol
        self.cache_size = cache_size
        self.refit = refit
        self.verbose = verbose

    @fit_transaction
    def fit(self, X, y):
        from leansvm.exact.svr import SVR

        Cs = default_C_grid() if self.Cs is None else check_grid(self.Cs)
        gammas = list(self.gammas) if not isinstance(self.gammas, (str, float, int)) else [self.gammas]
        if not gammas:
            raise ValueError("gammas must hold at least one value")
        grid = np.ndim(self.epsilon) > 0                        # a list of epsilon: searched too
        epsilons = [check_positive_number("epsilon", e, allow_zero=True) for e in np.atleast_1d(self.epsilon)]
        if not epsilons:
            raise ValueError("epsilon must hold at least one value")
        inner = [{"epsilon": e, "gamma": g} if grid else {"gamma": g} for e in epsilons for g in gammas]
        X, y = validate_regression_data(self, X, y)
        folds = list(check_cv(self.cv, y, classifier=False).split(X, y))
        scorer = check_scoring(SVR(), scoring=self.scoring)
        options = dict(kernel=self.kernel, degree=self.degree, coef0=self.coef0,
                       screening=self.screening, tol=self.tol, cache_size=self.cache_size)
        scores = np.empty((Cs.size, len(inner), len(folds)))
        seconds = np.empty((len(inner), len(folds)))
        with Progress(len(inner) * len(folds), "SVRCV", "paths", True if self.verbose else None) as bar:
            for g, cell in enumerate(inner):
                epsilon = cell.get("epsilon", epsilons[0])
                for f, (train, test) in enumerate(folds):
                    start = time.perf_counter()
                    points = svr_path(X[train], y[train], Cs, gamma=cell["gamma"], epsilon=epsilon, **options)
                    seconds[g, f] = time.perf_counter() - start
                    scores[:, g, f] = [scorer(p.model, X[test], y[test]) for p in points]
                    bar.update()
        self.cv_results_, self.best_index_, self.best_params_, self.best_score_ = cv_results(
            Cs, gammas, scores, seconds, inner)
        if self.refit:
            best_epsilon = self.best_params_.get("epsilon", epsilons[0])
            best = SVR(C=self.best_params_["C"], gamma=self.best_params_["gamma"], epsilon=best_epsilon,
                       kernel=self.kernel, degree=self.degree, coef0=self.coef0, tol=self.tol,
                       cache_size=self.cache_size, random_state=0).fit(X, y)
            self.best_estimator_ = best
            for name in ("expansion_", "support_", "n_support_", "dual_objective_", "n_iter_", "fit_status_",
                         "_gamma"):
                setattr(self, name, getattr(best, name))
        return self

    def predict(self, X):
        return self._output(X)
