"""Nystroem landmarks + a linear model, written as a kernel expansion over the landmarks: the main
job's budget family beside BSGD (classification: ``LandmarkSVC``; regression: ``LandmarkSVR``)."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.exceptions import ConvergenceWarning

from leansvm.budget.bsgd_refit import ridge_gcv, ridge_refit
from leansvm.core.classifier import ExpansionAttributes, KernelClassifierMixin
from leansvm.core.expansion import KernelExpansion
from leansvm.core.kernels import Kernel, resolve_gamma
from leansvm.core.registry import register_estimator
from leansvm.core.validation import (check_positive_number, fit_transaction, validate_regression_data,
                                     validate_training_data)

#: LandmarkSVR solves its ridge problem on at most this many rows (a random subsample beyond): on
#: friedman1-1M with 1,309 landmarks, 50,000 rows tested RMSE 0.2018, 100,000 0.2001 (8.5 s),
#: 200,000 0.1993 (16.5 s) (benchmarks/budget/bench_landmark_svr.py; the exact SVR on 32,926 rows: 0.2030)
RIDGE_ROWS = 100000


@register_estimator
class LandmarkSVC(KernelClassifierMixin, BaseEstimator):
    """Nystroem(B landmarks) + ``LinearSVC`` written as a kernel expansion over the landmarks.

    Nystroem features are phi(x) = N k(L, x) with N = K_LL^(-1/2); a linear
    model w'phi(x) + b is therefore sum_j (N'w)_j k(l_j, x) + b: a kernel
    expansion with the B landmarks as support vectors. One-vs-rest for more
    than two classes (LinearSVC's own reduction).
    """

    def __init__(self, budget=100, C=1.0, gamma="scale", random_state=None, max_iter=2000):
        self.budget = budget
        self.C = C
        self.gamma = gamma
        self.random_state = random_state
        self.max_iter = max_iter

    def fit(self, X, y):
        from sklearn.kernel_approximation import Nystroem
        from sklearn.svm import LinearSVC

        X, classes, y_enc, _ = validate_training_data(self, X, y)
        gamma = resolve_gamma(self.gamma, X)
        budget = int(min(self.budget, X.shape[0]))
        nystroem = Nystroem(kernel="rbf", gamma=gamma, n_components=budget,
                            random_state=self.random_state).fit(X)
        features = nystroem.transform(X)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            linear = LinearSVC(C=self.C, max_iter=self.max_iter).fit(features, y_enc)
        coef = nystroem.normalization_.T @ linear.coef_.T          # (B, n_outputs)
        self.expansion_ = KernelExpansion(nystroem.components_, coef, linear.intercept_,
                                          Kernel("rbf", gamma))
        self.classes_ = classes
        self.multiclass_ = "ovr"
        self.n_features_in_ = X.shape[1]
        self.fit_status_ = 0
        return self


@register_estimator
class LandmarkSVR(ExpansionAttributes, RegressorMixin, BaseEstimator):
    """Nystroem(B landmarks) + ridge regression, written as a kernel expansion over the landmarks.

    The landmarks L are ``budget`` training rows drawn at random (scikit-learn's ``Nystroem``
    draws them so); the coefficients minimise 1/2 ||v||^2 + C sum_i (z_i - phi(x_i)'v - b)^2 over
    phi(x) = K_LL^(-1/2) k(L, x), in closed form (:func:`~leansvm.budget.bsgd_refit.ridge_refit`,
    the refit ``BSGDRegressor`` also ends with), on at most ``RIDGE_ROWS`` rows. The squared loss has
    no tube, so it has no ``epsilon``.

    ``Cs`` (as scikit-learn's ``RidgeCV`` takes its alphas): C is chosen among them by generalized
    cross-validation on the ridge's own rows (:func:`~leansvm.budget.bsgd_refit.ridge_gcv`, one
    eigendecomposition for every C), ``C`` is then not used; ``C_`` is the C fitted with. The main job
    passes its SVR's C and no ``Cs`` (:mod:`leansvm.job.regression` says why).

    Measured (friedman1-1M, C = 1000, gamma = 0.011, on the job's 800,000 fit rows,
    ``benchmarks/budget/bench_landmark_svr.py``): 654 landmarks tested RMSE 0.2079, 1,309 0.2001
    in 8.5 s. In the main job at ``--budget-seconds 600`` (C = 250, carried to the exact SVR's fit
    size) 1,181 landmarks tested 0.2018; with C by GCV among 62.5..1e6, 1,181 landmarks test 0.2000
    (the noise alone: 0.1978).
    """

    def __init__(self, budget=100, C=1.0, gamma="scale", random_state=None, Cs=None):
        self.budget = budget
        self.C = C
        self.gamma = gamma
        self.random_state = random_state
        self.Cs = Cs

    @fit_transaction
    def fit(self, X, y):
        check_positive_number("C", self.C)
        Cs = None if self.Cs is None else [check_positive_number("each value of Cs", c)
                                           for c in np.atleast_1d(np.asarray(self.Cs, dtype=object)).tolist()]
        if Cs is not None and not Cs:
            raise ValueError("Cs must hold at least one value of C, got an empty sequence")
        if isinstance(self.budget, bool) or int(self.budget) != self.budget or self.budget < 1:
            raise ValueError(f"budget must be a positive integer, got {self.budget!r}")
        X, y = validate_regression_data(self, X, y)
        rng = check_random_state(self.random_state)
        kernel = Kernel("rbf", resolve_gamma(self.gamma, X))
        picked = np.sort(rng.choice(X.shape[0], int(min(self.budget, X.shape[0])), replace=False))
        landmarks = X[picked]
        rows = np.arange(X.shape[0]) if X.shape[0] <= RIDGE_ROWS else \
            np.sort(rng.choice(X.shape[0], RIDGE_ROWS, replace=False))
        if Cs is None:
            alpha, bias = ridge_refit(kernel, landmarks, X[rows], y[rows], float(self.C))
            self.C_ = float(self.C)
        else:
            alpha, bias, self.C_, self.gcv_scores_ = ridge_gcv(kernel, landmarks, X[rows], y[rows], Cs)
        self.expansion_ = KernelExpansion(landmarks, alpha.reshape(-1, 1), [bias], kernel)
        self.n_support_ = np.array([landmarks.shape[0]], dtype=np.int32)
        self.support_ = picked.astype(np.int32)
        self.fit_status_ = 0
        return self

    def predict(self, X):
        return self._output(X)

    @staticmethod
    def fit_work(budget, n_rows) -> float:
        """The fit's work up to a constant, for time estimates: F'F over min(rows, ``RIDGE_ROWS``)
        rows of ``budget`` features, and the ``budget``^3 solve."""
        return float(min(n_rows, RIDGE_ROWS)) * budget * budget + float(budget) ** 3
