"""Nystroem landmarks + a linear SVM, written as a kernel expansion: the main job's honest budget fallback."""

from __future__ import annotations

import warnings

from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning

from leansvm.core.classifier import KernelClassifierMixin
from leansvm.core.expansion import KernelExpansion
from leansvm.core.kernels import Kernel, resolve_gamma
from leansvm.core.registry import register_estimator
from leansvm.core.validation import validate_training_data


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
