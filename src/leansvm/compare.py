"""Reading LIBSVM models trained through scikit-learn's ``SVC`` into leansvm's terms.

Used by tests, benchmarks and the demo to compare against the reference
solver on equal footing: the same dual objective, the same expansion.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .expansion import KernelExpansion
from .kernels import Kernel
from .multiclass import dense_from_libsvm_coef


def expansion_from_sklearn(model) -> KernelExpansion:
    """The kernel expansion of a fitted ``sklearn.svm.SVC`` (one-vs-one columns, sklearn's binary sign)."""
    kernel = Kernel.from_params(model.kernel, model._gamma, model.degree, model.coef0)
    dual_coef = model.dual_coef_.toarray() if sp.issparse(model.dual_coef_) else model.dual_coef_
    if len(model.classes_) == 2:
        coef = dual_coef.T
    else:
        coef = dense_from_libsvm_coef(dual_coef, model.n_support_)
    return KernelExpansion(model.support_vectors_, coef, model.intercept_, kernel)


def libsvm_dual_objectives(model, max_mb: float = 64.0) -> np.ndarray:
    """LIBSVM's dual objective 1/2 c'Kc - sum|c| per binary problem of a fitted ``sklearn.svm.SVC``.

    c holds y_i alpha_i of the problem's support vectors; K is formed in row
    blocks under ``max_mb`` so large models do not need an m x m matrix.
    """
    exp = expansion_from_sklearn(model)
    sv, coef = exp.support_vectors, exp.coef
    quad = np.zeros(coef.shape[1])
    for start, stop, K in exp.kernel.blocks(sv, sv, max_mb=max_mb):
        quad += np.einsum("ij,ij->j", coef[start:stop], K @ coef)
    return 0.5 * quad - np.abs(coef).sum(axis=0)
