"""nu-support vector classification (LIBSVM ``-s 1``, scikit-learn ``NuSVC``) by IRWLS.

Each binary problem is :func:`leansvm.core.problems.nu_svc` (Schoelkopf et al. 2000; LIBSVM's
form, Chang & Lin 2001):

    min_a 1/2 a'Qa   s.t.  0 <= a_i <= c_i,  sum_{y=+1} a_i = sum_{y=-1} a_i = nu sum_i c_i / 2

(c_i the sample weights), solved by the same chunked IRWLS as C-SVC with one equality per
sign. As LIBSVM does, the solution is then divided by the margin level r
(:meth:`~leansvm.core.problems.DualProblem.margin_level`): a / r solves C-SVC with C = 1 / r,
and the decision function, the intercept and the objective (/ r^2) are LIBSVM's.
Multi-class, prediction, probabilities: as :class:`leansvm.SVC`.
"""

from __future__ import annotations

import warnings

import numpy as np

from leansvm.core.multiclass import BinaryFit, ovo_pairs
from leansvm.core.problems import nu_svc
from leansvm.core.registry import register_estimator
from leansvm.core.validation import check_nu
from leansvm.exact.irwls import DEFAULT_WORKING_SET, solve_irwls
from leansvm.exact.svc import SVC


#: the solve continues at tol / 10 at most this many times while r <= 10 tol (NuSVC._solve_binary)
MAX_TIGHTENINGS = 3


@register_estimator
class NuSVC(SVC):
    """nu-support vector classifier with scikit-learn's ``NuSVC`` parameters, solved by chunked IRWLS.

    ``nu`` in (0, 1] bounds the fraction of margin errors from above and of support vectors
    from below. As in LIBSVM and scikit-learn, ``class_weight`` has no effect on nu-SVC (a
    warning says so); ``sample_weight`` scales each sample's bound. A ``nu`` that no point of
    the constraints can meet for some pair of classes (nu (n_1 + n_2) / 2 > min(n_1, n_2),
    n the classes' weight sums) raises LIBSVM's "specified nu is infeasible".
    Other parameters and fitted attributes as :class:`leansvm.SVC`; ``dual_objective_`` is
    LIBSVM's, of the rescaled problem.

    Parameters
    ----------
    nu : float, default=0.5
        In (0, 1]: an upper bound on the fraction of errors and a lower bound on the fraction of support vectors.
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
    cache_size : float, default=200
        Kernel row cache in MB.
    class_weight : dict or 'balanced', default=None
        Accepted for scikit-learn compatibility; nu-SVC ignores it with a warning, as LIBSVM.
    max_iter : int, default=-1
        Bound on the solver iterations (-1: none); a ``ConvergenceWarning`` when reached.
    decision_function_shape : {'ovr', 'ovo'}, default='ovr'
        Shape of ``decision_function`` for more than two classes, as scikit-learn.
    break_ties : bool, default=False
        With more than two classes and ``decision_function_shape='ovr'``: ``predict`` takes the
        class of the largest ``decision_function`` value (votes plus confidences), so that tied
        votes go to the more confident class, as scikit-learn; ``'ovo'`` with it is an error.
    probability : bool, default=False
        Classifiers: Platt-scaled ``predict_proba``; regressors: LIBSVM's Laplace noise scale ``probA_``.
    random_state : int, RandomState or None, default=None
        Seed of the fit's random choices (the probability folds): reproducible fits.
    verbose : bool or int, default=False
        A progress bar (:mod:`leansvm.progress`).
    working_set_size : int, default=128
        q, the samples of one IRWLS chunk.
    multiclass : {'ovo', 'ovr'}, default='ovo'
        One-vs-one as LIBSVM, or one-vs-rest; one shared pool of support vectors.
    n_jobs : int, default=-1
        Binary problems in parallel threads (-1: every core; 1: one thread, BLAS included).
    shrinking : bool, default=True
        LIBSVM's shrinking heuristic.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    dual_coef_ : ndarray or sparse matrix of shape (n_classes - 1, n_SV)
        Dual coefficients times labels, LIBSVM's layout.
    n_support_ : ndarray of shape (n_classes,)
        Support vectors per class.
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
    >>> from leansvm import NuSVC
    >>> X = np.array([[0.0, 0.0], [0.1, 0.2], [1.0, 1.0], [0.9, 1.1]])
    >>> NuSVC(nu=0.5, gamma=1.0).fit(X, [0, 0, 1, 1]).predict([[0.05, 0.1], [1.0, 0.9]]).tolist()
    [0, 1]
    """

    libsvm_svm_type = "nu_svc"     #: LIBSVM's svm_type (model files)

    def __init__(self, nu=0.5, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3,
                 cache_size=200.0, class_weight=None, max_iter=-1, decision_function_shape="ovr",
                 break_ties=False, probability=False, random_state=None, verbose=False,
                 working_set_size=DEFAULT_WORKING_SET, multiclass="ovo", n_jobs=-1, shrinking=True):
        self.nu = nu
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.probability = probability
        self.random_state = random_state
        self.verbose = verbose
        self.working_set_size = working_set_size
        self.multiclass = multiclass
        self.n_jobs = n_jobs
        self.shrinking = shrinking

    def _check_params(self):
        super()._check_params()
        check_nu(self.nu, "NuSVC")
        if self.multiclass != "ovo":
            raise ValueError("NuSVC: multiclass must be 'ovo' (LIBSVM's nu-SVC is one-vs-one)")

    def _sample_bounds(self, classes, y_enc, sample_weight):
        if self.class_weight is not None:
            warnings.warn("NuSVC: class_weight has no effect on nu-SVC (as in LIBSVM and scikit-learn); "
                          "use sample_weight", UserWarning, stacklevel=4)
        nu = check_nu(self.nu, "NuSVC")
        totals = np.bincount(y_enc, weights=sample_weight, minlength=classes.size)
        for i, j in ovo_pairs(classes.size):
            if nu * (totals[i] + totals[j]) / 2 > min(totals[i], totals[j]):
                raise ValueError(f"specified nu is infeasible: nu={nu} for classes {classes[i]!r} and "
                                 f"{classes[j]!r} (weights {totals[i]:g} and {totals[j]:g}) needs "
                                 f"nu <= 2 min / sum = {2 * min(totals[i], totals[j]) / (totals[i] + totals[j]):.4g}")
        return sample_weight.copy()

    def _solve_binary(self, X, y, C, kernel, callback):
        """The binary nu-SVC problem, rescaled by its margin level r. The decision values are
        those of the solution divided by r, so their error is about tol / r: while r <= 10 tol
        (nearly separable data, C = 1 / r huge) the solve continues, warm-started, at tol / 10
        (at most ``MAX_TIGHTENINGS`` times: tol / 1000). Steps of 10 cost less than one step of
        100 (magic: 70 s for 1e-3, 1e-4, 1e-5 against 76 s for 1e-3, 1e-5; a9a's first 8,000 rows
        13.4 s against 15.0 s; ``benchmarks/exact/bench_nu_svc_tolerance.py``). When a positive r more than halves between two steps, it falls
        with the tolerance (banana at nu = 0.2: r = 1.5e-5, 1.3e-6, 3.9e-8 at tol 1e-3, 1e-5,
        1e-7, the last solve 266 s): the optimum's r is 0 and no tolerance makes a / r accurate,
        so the solve stops with a warning (LIBSVM returns such a model without one). An r <= 0
        at a loose tolerance only says that solve was inexact: the solve goes on (and fails by
        name if r stays <= 0)."""
        problem = nu_svc(y, float(self.nu), C)
        # SMO on the whole Q (small problems) reaches an optimum whose r is 0 exactly where the
        # classes' reduced hulls meet; chunked IRWLS then stops, as LIBSVM, at a point of small
        # positive r, and the model is returned with the warning below, as before
        for method in ("auto", "irwls"):
            tol, fit, r_before = self.tol, None, None
            for tightening in range(MAX_TIGHTENINGS + 1):
                fit = solve_irwls(X, problem, kernel, tol=tol, working_set_size=self.working_set_size,
                                  cache_size=self.cache_size, max_iter=self.max_iter, random_state=self.random_state,
                                  verbose=int(self.verbose), shrinking=bool(self.shrinking), callback=callback,
                                  alpha_init=None if fit is None else fit.alpha, method=method)
                r = fit.stats["margin_level"]
                if r > 10 * tol:
                    break
                if r_before is not None and r_before > 0 and 0 < r < r_before / 2:   # r falls with tol
                    warnings.warn(f"NuSVC: the margin level r moves with the tolerance ({r_before:.3g} at tol "
                                  f"{10 * tol:g}, {r:.3g} at {tol:g}): at nu = {self.nu} the optimum's r is about 0 "
                                  "(nu at or below the smallest nu with a margin), so the decision values a / r carry "
                                  "an error of about tol / r; a larger nu, or SVC with a large C, is well posed",
                                  UserWarning, stacklevel=4)
                    break
                if tightening == MAX_TIGHTENINGS:
                    warnings.warn(f"NuSVC: the margin level r = {r:.3g} is still within 10 x tol = {10 * tol:g}; the "
                                  "decision values carry an error of about tol / r (pass a smaller tol)",
                                  UserWarning, stacklevel=4)
                    break
                r_before, tol = r, tol / 10
            if r > 0:
                break
        if not r > 0:
            raise ValueError(f"NuSVC: the margin level r = {r:.3g} is not positive: no margin separates "
                             "the classes in feature space (identical points with different labels?), so "
                             "LIBSVM's rescaling a / r is undefined (scikit-learn's NuSVC fails here too)")
        return BinaryFit(alpha=fit.alpha / r, intercept=fit.intercept / r, dual_objective=fit.dual_objective / r**2,
                         n_iter=fit.n_iter, converged=fit.converged, stats={**fit.stats, "C": 1.0 / r, "tol": tol})
