"""The exact C-SVC estimator. Thin: validation, label encoding, multi-class wiring; the
IRWLS solver (:mod:`leansvm.exact.irwls`) does the work, and prediction comes from
:class:`~leansvm.core.classifier.KernelClassifierMixin`.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.exceptions import NotFittedError
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from leansvm.core.classifier import KernelClassifierMixin
from leansvm.core.user_kernels import kernel_of
from leansvm.core.problems import c_svc
from leansvm.core.registry import register_estimator
from leansvm.core.multiclass import fit_ovo, fit_ovr, n_binary_problems
from leansvm.progress import ConvergenceProgress, Progress
from leansvm.exact.irwls import DEFAULT_WORKING_SET, solve_irwls
from leansvm.core.validation import check_C, check_int, per_sample_C, validate_training_data


@register_estimator
class SVC(KernelClassifierMixin, BaseEstimator):
    """C-support vector classifier trained by IRWLS (Pérez-Cruz et al.), LIBSVM-compatible.

    The dual of LIBSVM's C-SVC, min 1/2 a'Qa - e'a subject to y'a = 0 and 0 <= a_i <= C_i,
    solved by iteratively reweighted least squares on working sets of ``working_set_size``
    samples; the same optimum as ``sklearn.svm.SVC`` to the tolerance ``tol``.

    Parameters
    ----------
    C : float, default=1.0
        Penalty of the margin errors (per class: times ``class_weight``).
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
        C of class i is C * class_weight[i].
    max_iter : int, default=-1
        Bound on the solver's iterations (-1: none); a ``ConvergenceWarning`` when reached.
    decision_function_shape : {'ovr', 'ovo'}, default='ovr'
        Shape of ``decision_function`` for more than two classes, as scikit-learn.
    break_ties : bool, default=False
        With more than two classes and ``decision_function_shape='ovr'``: ``predict`` takes the
        class of the largest ``decision_function`` value (votes plus confidences), so that tied
        votes go to the more confident class, as scikit-learn; ``'ovo'`` with it is an error.
    probability : bool, default=False
        Fit Platt-scaled probabilities (``predict_proba``) by internal cross-validation.
    random_state : int, RandomState or None, default=None
        Seed of the probability calibration's folds.
    verbose : bool or int, default=False
        A progress bar (:mod:`leansvm.progress`); 2 adds the solver's violation every 10 iterations.
    working_set_size : int, default=128
        q, the samples of one IRWLS chunk.
    multiclass : {'ovo', 'ovr'}, default='ovo'
        One-vs-one as LIBSVM, or one-vs-rest; both over one shared pool of support vectors.
    n_jobs : int, default=-1
        Binary problems solved in parallel threads (joblib's meaning; -1: every core, as
        scikit-learn-intelex; 1: one thread, BLAS included).
    shrinking : bool, default=True
        LIBSVM's shrinking, for binary problems of at least 2,000 samples.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training data.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The support vectors.
    dual_coef_ : ndarray of shape (n_classes - 1, n_SV)
        Dual coefficients times labels, in LIBSVM's layout and scikit-learn's signs.
    intercept_ : ndarray of shape (n_classes * (n_classes - 1) / 2,)
        The constants of the decision functions.
    n_support_ : ndarray of shape (n_classes,)
        Support vectors per class.
    expansion_ : KernelExpansion
        The model as one kernel expansion (what files, ONNX, Dask and ``compress`` read).
    dual_objective_ : ndarray
        1/2 a'Qa - e'a of each binary problem (LIBSVM's sign).
    n_iter_ : ndarray
        Solver iterations of each binary problem.

    Examples
    --------
    >>> import numpy as np
    >>> from leansvm import SVC
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    >>> model = SVC(C=10, gamma=1.0).fit(X, [0, 1, 1, 0])
    >>> model.predict(X).tolist()
    [0, 1, 1, 0]
    >>> int(model.n_support_.sum())
    4
    """

    #: scikit-learn's rule: a model fitted (by ``fit``) on dense X refuses sparse X at prediction;
    #: one read from a model file takes either
    sparse_input_needs_sparse_fit = True

    def __init__(self, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3,
                 cache_size=200.0, class_weight=None, max_iter=-1, decision_function_shape="ovr",
                 break_ties=False, probability=False, random_state=None, verbose=False,
                 working_set_size=DEFAULT_WORKING_SET, multiclass="ovo", n_jobs=-1,
                 shrinking=True):
        self.C = C
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
        if self.decision_function_shape not in ("ovr", "ovo"):
            raise ValueError(f"decision_function_shape must be 'ovr' or 'ovo', got {self.decision_function_shape!r}")
        if self.multiclass not in ("ovo", "ovr"):
            raise ValueError(f"multiclass must be 'ovo' or 'ovr', got {self.multiclass!r}")
        if not (self.tol > 0):
            raise ValueError(f"tol must be positive, got {self.tol!r}")
        check_int("working_set_size", self.working_set_size, 2)

    def fit(self, X, y, sample_weight=None):
        self._check_params()
        if self.probability:
            return self._fit_with_calibration(X, y, sample_weight)
        X, classes, y_enc, sample_weight = validate_training_data(self, X, y, sample_weight)
        C = self._sample_bounds(classes, y_enc, sample_weight)
        kernel = kernel_of(self, X)
        keep = np.flatnonzero(C > 0)   # zero weight: the sample cannot be a support vector
        if np.unique(y_enc[keep]).size < 2:
            raise ValueError("Invalid input - all samples with positive weights belong to the same class "
                             "(samples of zero or negative weight are left out)")

        n_problems = n_binary_problems(classes.size, self.multiclass)
        # progress (a bar on a terminal or when verbose): binary problems solved, or for one
        # problem the percent of its way from the first violation to tol
        with Progress(100 if n_problems == 1 else n_problems, "SVC fit",
                      "% converged" if n_problems == 1 else "binary problems",
                      True if self.verbose else None) as bar:
            tracker = ConvergenceProgress(bar, self.tol) if n_problems == 1 else None

            def train_binary(Xb, yb, Cb):
                fit = self._solve_binary(Xb, yb, Cb, kernel, tracker)
                if tracker is not None:
                    tracker.finish()
                else:
                    bar.update()
                return fit

            reduce = fit_ovr if self.multiclass == "ovr" else fit_ovo
            result = reduce(X[keep], y_enc[keep], classes.size, train_binary, C[keep], kernel, self.n_jobs)
        self._set_fitted(result, classes, keep)
        return self

    def _sample_bounds(self, classes, y_enc, sample_weight):
        """The upper bound of each sample's dual variable: C x class weight x sample weight."""
        return per_sample_C(check_C(self.C), self.class_weight, classes, y_enc, sample_weight)

    def _solve_binary(self, X, y, C, kernel, callback):
        """One binary problem (y = +1 / -1, bounds C) by IRWLS."""
        return solve_irwls(X, c_svc(y, C), kernel, tol=self.tol, working_set_size=self.working_set_size,
                           cache_size=self.cache_size, max_iter=self.max_iter, random_state=self.random_state,
                           verbose=int(self.verbose), shrinking=bool(self.shrinking), callback=callback)

    @classmethod
    def from_multiclass_fit(cls, result, classes, keep=None, **params) -> "SVC":
        """A fitted SVC holding a solution computed elsewhere (a path's, a ``MulticlassFit``).

        ``keep``: training indices of the samples the solution was computed on
        (default: all, in order); ``params``: SVC constructor parameters.
        """
        model = cls(**params)
        model._set_fitted(result, np.asarray(classes), None if keep is None else np.asarray(keep))
        return model

    def _set_fitted(self, result, classes, keep):
        self.classes_ = classes
        self.multiclass_ = result.strategy
        self.expansion_ = result.expansion
        self.support_ = np.asarray(result.support) if keep is None else keep[result.support]
        self.n_support_ = result.n_support.astype(np.int32)
        self.dual_objective_ = np.array([fit.dual_objective for fit in result.fits])
        self.n_iter_ = np.array([fit.n_iter for fit in result.fits])
        self.solver_stats_ = [fit.kept_stats() for fit in result.fits]
        self._gamma = result.expansion.kernel.gamma
        self.fit_status_ = 0 if all(fit.converged for fit in result.fits) else 1

    # probabilities through scikit-learn's calibration -----------------------------------
    def _fit_with_calibration(self, X, y, sample_weight):
        """Platt scaling by ``CalibratedClassifierCV`` (sigmoid), its final model kept as ours: 5-fold as
        LIBSVM, fewer folds when a class has fewer than 5 samples, and on the training rows
        themselves when one has a single sample (LIBSVM's internal cross-validation copes with any size)."""
        base = clone(self).set_params(probability=False)
        smallest = int(np.unique(np.asarray(y), return_counts=True)[1].min())
        if smallest >= 2:
            calibrated = CalibratedClassifierCV(base, method="sigmoid", cv=min(5, smallest), ensemble=False)
            calibrated.fit(X, y, sample_weight=sample_weight)
            fitted = calibrated.calibrated_classifiers_[0].estimator
        else:
            from sklearn.frozen import FrozenEstimator

            fitted = base.fit(X, y, sample_weight=sample_weight)
            rows = np.arange(len(y))         # one "fold" of every row: the frozen model's own decision values
            calibrated = CalibratedClassifierCV(FrozenEstimator(fitted), method="sigmoid", ensemble=False,
                                                cv=[(rows, rows)])
            calibrated.fit(X, y, sample_weight=sample_weight)
        for name, value in vars(fitted).items():
            if name.endswith("_") and not name.startswith("__"):
                setattr(self, name, value)
        self.calibrator_ = calibrated
        return self

    def _check_proba(self):
        if not self.probability:
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    @available_if(_check_proba)
    def predict_proba(self, X):
        """Platt-scaled class probabilities (needs probability=True at fit time).

        A loaded binary model uses its stored probA/probB by LIBSVM's rule: P(classes_[0]) =
        clip(1 / (1 + exp(A dec + B)), 1e-7, 1 - 1e-7) with LIBSVM's dec = -decision_function."""
        check_is_fitted(self, "expansion_")
        if hasattr(self, "calibrator_"):
            return self.calibrator_.predict_proba(X)
        prob_a, prob_b = getattr(self, "probA_", None), getattr(self, "probB_", None)
        if len(self.classes_) == 2 and prob_a is not None and prob_b is not None and np.size(prob_a) == 1:
            first = 1.0 / (1.0 + np.exp(float(np.ravel(prob_a)[0]) * -self.decision_function(X)
                                        + float(np.ravel(prob_b)[0])))
            first = np.clip(first, 1e-7, 1 - 1e-7)
            return np.column_stack([first, 1.0 - first])
        # NotFittedError (an AttributeError and a ValueError) with scikit-learn's message: probability
        # was switched on after a fit without it
        raise NotFittedError("predict_proba is not available when fitted with probability=False: it needs a "
                             "model trained with probability=True, or a loaded binary model with probA/probB "
                             "(multi-class LIBSVM coupling is not implemented)")

    @available_if(_check_proba)
    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))
