"""The model being compressed, as compression sees it: its kernel expansion, classes and one-vs-one
layout (:class:`_FullModel`), the fitting points checked against it, and the first step of
compression, the selection of its vectors (LARS-SVM, matching pursuit or a random subset;
:mod:`leansvm.compression.cvm`)."""

from __future__ import annotations

import numpy as np
from sklearn.base import is_regressor

from leansvm.compression import cvm
from leansvm.core.expansion import KernelExpansion
from leansvm.core.kernels import KERNELS, dense_if_worth_it
from leansvm.core.multiclass import predict_index


class _FullModel:
    """What compression reads from a fitted model: expansion, classes, strategy, pool classes. A
    regressor or one-class model (one output, no ``classes_``) is ``one_output``: one class."""

    def __init__(self, model):
        if hasattr(model, "expansion_"):
            self.expansion = model.expansion_
            self.strategy = getattr(model, "multiclass_", "ovo")
            n_support = getattr(model, "n_support_", None)
        elif hasattr(model, "dual_coef_") and hasattr(model, "support_vectors_"):  # sklearn SVC
            from leansvm.core.sklearn_svc import expansion_from_sklearn
            self.expansion = expansion_from_sklearn(model)
            self.strategy = "ovo"
            n_support = model.n_support_
        else:
            raise ValueError(f"{type(model).__name__} is not a fitted kernel classifier "
                             "(it has no expansion_); fit it first")
        dense = dense_if_worth_it(self.expansion.support_vectors)
        if dense is not self.expansion.support_vectors:
            # narrow CSR vectors as dense rows, as the exact solver takes such rows: the selection's and the
            # outputs' kernel sums then run in the same order as for the same numbers given dense (a last-bit
            # difference reordered the selected vectors, and L-BFGS grew it to 3e-6 in 10 iterations)
            exp = self.expansion
            self.expansion = KernelExpansion(dense, exp.coef, exp.intercept, exp.kernel)
        if self.expansion.kernel.name not in KERNELS:
            raise ValueError(f"compression moves feature vectors: it needs one of the kernels {KERNELS}, "
                             f"not {self.expansion.kernel.name}")
        self.one_output = not hasattr(model, "classes_")
        self.regression = is_regressor(model)
        if self.one_output:
            if self.expansion.n_outputs != 1:
                raise ValueError(f"{type(model).__name__} has no classes_ and {self.expansion.n_outputs} outputs; "
                                 "fit it first")
            self.classes, self.n_classes, self.n_support = None, 1, None
            return
        self.classes = np.asarray(model.classes_)
        self.n_classes = self.classes.size
        if self.n_classes < 2:
            raise ValueError("the model must have at least two classes")
        if self.strategy not in ("ovo", "ovr"):
            raise ValueError(f"unknown multi-class strategy {self.strategy!r}")
        m = self.expansion.n_support
        self.n_support = None
        if n_support is not None:
            n_support = np.asarray(n_support).ravel()
            if n_support.size == self.n_classes and n_support.sum() == m:
                self.n_support = n_support.astype(np.intp)

    def decision(self, X):
        return self.expansion.decision_function(X)

    def predict_index(self, X):
        return predict_index(self.decision(X), self.n_classes, self.strategy)

    def pool_classes(self) -> np.ndarray:
        """Class index of every support vector: the ``n_support_`` grouping, else the model's prediction."""
        if self.one_output:
            return np.zeros(self.expansion.n_support, dtype=np.intp)
        if self.n_support is not None:
            return np.repeat(np.arange(self.n_classes), self.n_support)
        return self.predict_index(self.expansion.support_vectors)

    @property
    def class_restricted(self) -> bool:
        """One-vs-one with k > 2: every vector serves only its class's pairs."""
        return self.n_classes > 2 and self.strategy == "ovo"


def _validate_points(X, y, full: _FullModel):
    if X is None and y is None:
        return None, None
    if X is None or y is None:
        raise ValueError("give both X and y (fitting / validation points), or neither")
    from sklearn.utils import check_array, check_consistent_length
    X = dense_if_worth_it(check_array(X, accept_sparse="csr", dtype=np.float64, order="C"))
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional, got shape {y.shape}")
    check_consistent_length(X, y)
    if X.shape[1] != full.expansion.n_features:
        raise ValueError(f"X has {X.shape[1]} features, but the model expects {full.expansion.n_features}")
    return X, y


def _selection(full: _FullModel, n_select: int, groups, group_columns, eig_max, method, rng):
    """Indices of the selected support vectors and how they were chosen."""
    exp = full.expansion
    S = exp.support_vectors
    m = exp.n_support
    if method == "random":   # baseline: a random subset (coefficients refitted like the others)
        return np.sort(rng.choice(m, n_select, replace=False)), "random subset"
    if exp.n_outputs == 1:
        cand = cvm.lars_candidates(m, n_select, eig_max, rng)
        Ka = exp.decision_function(S[cand])[:, 0] - exp.intercept[0]   # (K a) at the candidates
        P, q = cvm.lars_problem(exp.kernel, S[cand], Ka)
        how = "lars on P = L^(1/2) V'" + ("" if cand.size == m else f" of a random {cand.size} of {m}")
        sel = cand[cvm.lars_select(P, q, n_select)]
        if sel.size < n_select:   # LARS stops at the numerical rank of K: fill up by largest |a_j|
            rest = np.setdiff1d(np.arange(m), sel)
            rest = rest[np.argsort(-np.abs(exp.coef[rest, 0]), kind="stable")][:n_select - sel.size]
            how += f", {rest.size} more by largest |a_j|"
            sel = np.concatenate([sel, rest])
        return sel, how
    KA = exp.decision_function(S) - exp.intercept     # K A: the full outputs at the pool
    return (cvm.somp_select(exp.kernel, S, KA, n_select, groups, group_columns),
            "simultaneous orthogonal matching pursuit")
