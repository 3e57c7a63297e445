"""Prediction shared by every model whose fitted state is a kernel expansion.

Every model ends up with ``expansion_`` (a :class:`~leansvm.core.expansion.KernelExpansion`);
a classifier also with ``classes_`` and ``multiclass_`` ('ovo' or 'ovr'). Prediction, scores,
files, compression and Dask only read those. :class:`ExpansionAttributes` gives scikit-learn's
attribute names over the expansion (every model); :class:`KernelClassifierMixin` holds the
classifiers' prediction side, so a new trainer only writes ``fit``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from leansvm.core.multiclass import libsvm_coef_from_dense, predict_index, shape_decision
from leansvm.core.user_kernels import is_precomputed, names_precomputed
from leansvm.core.validation import fit_transaction, validate_predict_data


def _like_vectors(expansion, coef):
    """``coef`` as CSR when the support vectors are (a model fitted on sparse data), as scikit-learn
    keeps ``dual_coef_``; dense otherwise."""
    return sp.csr_matrix(coef) if sp.issparse(expansion.support_vectors) else coef


class ExpansionAttributes:
    """scikit-learn's attribute names over ``expansion_``: support vectors, dual coefficients,
    intercept; sparse input accepted; a precomputed kernel is pairwise input (scikit-learn's
    cross-validation then slices K by rows and columns) and keeps no support vectors (scikit-learn
    shows an empty (0, 0) array; ``support_`` names the training samples)."""

    @property
    def support_vectors_(self):
        check_is_fitted(self, "expansion_")
        return np.empty((0, 0)) if is_precomputed(self) else self.expansion_.support_vectors

    @property
    def dual_coef_(self):
        check_is_fitted(self, "expansion_")
        return _like_vectors(self.expansion_, self.expansion_.coef.T.copy())

    @property
    def intercept_(self):
        check_is_fitted(self, "expansion_")
        return self.expansion_.intercept

    @property
    def coef_(self):
        """Linear kernel only: the primal weights w = sum_j coef_j sv_j, one row per output
        (binary: (1, n_features); one-vs-one: one per pair, LIBSVM's order), read-only as
        scikit-learn's."""
        check_is_fitted(self, "expansion_")
        if self.expansion_.kernel.name != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        vectors = self.expansion_.support_vectors
        coef = np.asarray((vectors.T @ self.expansion_.coef).T) if sp.issparse(vectors) else \
            self.expansion_.coef.T @ vectors
        coef = _like_vectors(self.expansion_, coef)
        if sp.issparse(coef):
            coef.data.flags.writeable = False
        else:
            coef.flags.writeable = False
        return coef

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = names_precomputed(getattr(self, "kernel", None))
        return tags

    def _output(self, X):
        """The expansion's single output on checked X: a regressor's prediction, a one-class
        model's decision function."""
        X = validate_predict_data(self, X)
        return self.expansion_.decision_function(X)[:, 0]


class OneClassPrediction:
    """Prediction of a one-class model whose expansion is sum_i a_i k(x_i, x) - rho:
    ``decision_function`` (the expansion), ``score_samples`` (without -rho), ``offset_`` (rho),
    ``predict`` (+1 where the decision function is positive, -1 elsewhere: LIBSVM's rule)."""

    @property
    def offset_(self):
        """rho: ``decision_function = score_samples - offset_``."""
        check_is_fitted(self, "expansion_")
        return -self.expansion_.intercept

    def decision_function(self, X):
        return self._output(X)

    def score_samples(self, X):
        return self.decision_function(X) + self.offset_

    def predict(self, X):
        """+1 where the decision function is positive, -1 elsewhere (LIBSVM's rule)."""
        return np.where(self.decision_function(X) > 0, 1, -1)


class KernelClassifierMixin(ExpansionAttributes, ClassifierMixin):
    """Prediction for any classifier whose fitted state is a kernel expansion.

    A new trainer writes only ``fit``, which sets the attributes below; ``decision_function``,
    ``predict``, ``score`` and scikit-learn's attribute names (``support_vectors_``,
    ``dual_coef_``, ``intercept_``, ``coef_`` for a linear kernel) come from here, and the
    ``fit`` is made all-or-nothing (a failed fit leaves no fitted attribute behind).

    Attributes
    ----------
    expansion_ : KernelExpansion
        The fitted model, one output column per binary problem.
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    multiclass_ : {'ovo', 'ovr'}
        How the columns of ``expansion_`` combine: one per pair of classes or one per class.

    Examples
    --------
    A classifier with a fixed expansion (as a trainer's ``fit`` would leave it):

    >>> import numpy as np
    >>> from sklearn.base import BaseEstimator
    >>> from leansvm.core.classifier import KernelClassifierMixin
    >>> from leansvm.core.expansion import KernelExpansion
    >>> from leansvm.core.kernels import Kernel
    >>> class TwoPoints(KernelClassifierMixin, BaseEstimator):
    ...     def fit(self, X, y):
    ...         self.classes_, self.multiclass_ = np.unique(y), "ovo"
    ...         self.n_features_in_ = 2
    ...         self.expansion_ = KernelExpansion(np.asarray(X, float), [-1.0, 1.0], 0.0, Kernel("linear"))
    ...         return self
    >>> TwoPoints().fit([[-1.0, 0.0], [1.0, 0.0]], ["a", "b"]).predict([[-2.0, 0.0], [3.0, 1.0]])
    array(['a', 'b'], dtype='<U1')
    """

    def __init_subclass__(cls, **kwargs):
        """Every ``fit`` defined by a subclass is all-or-nothing (see ``validation.fit_transaction``)."""
        super().__init_subclass__(**kwargs)
        fit = cls.__dict__.get("fit")
        if fit is not None and not getattr(fit, "__leansvm_transaction__", False):
            cls.fit = fit_transaction(fit)

    def _validate_for_predict(self, X):
        return validate_predict_data(self, X)

    def _raw_decision(self, X):
        X = self._validate_for_predict(X)   # NotFittedError before any fitted attribute is read
        return self.expansion_.decision_function(X)

    def decision_function(self, X):
        """Decision values: (n,) for binary problems, else per pair ('ovo') or per class ('ovr')."""
        return shape_decision(self._raw_decision(X), len(self.classes_), self.multiclass_,
                              getattr(self, "decision_function_shape", "ovr"))

    def predict(self, X):
        """The class of each row: one-vs-one votes (ties to the lower class, as LIBSVM), or with
        ``break_ties`` and more than two classes the largest 'ovr' decision value, as scikit-learn."""
        break_ties = getattr(self, "break_ties", False)
        if break_ties and getattr(self, "decision_function_shape", "ovr") == "ovo":
            raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")
        if break_ties and len(self.classes_) > 2:
            return self.classes_[np.argmax(self.decision_function(X), axis=1)]
        raw = self._raw_decision(X)
        return self.classes_[predict_index(raw, len(self.classes_), self.multiclass_)]

    @property
    def n_support_vectors_(self) -> int:
        return self.expansion_.n_support

    @property
    def dual_coef_(self):
        """y_i alpha_i: (1, n_SV) binary; (n_classes - 1, n_SV) in LIBSVM's layout for one-vs-one
        (needs ``n_support_``); (n_classes, n_SV) for one-vs-rest."""
        check_is_fitted(self, "expansion_")
        if len(self.classes_) == 2 or self.multiclass_ == "ovr":
            return _like_vectors(self.expansion_, self.expansion_.coef.T.copy())
        return _like_vectors(self.expansion_, libsvm_coef_from_dense(self.expansion_.coef, self.n_support_))
