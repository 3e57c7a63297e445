"""Reading LIBSVM models trained through scikit-learn's ``SVC`` into leansvm's terms.

Used by tests, benchmarks and the demo to compare against the reference
solver on equal footing: the same dual objective, the same expansion.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from leansvm.core.expansion import KernelExpansion
from leansvm.core.kernels import Kernel
from leansvm.core.multiclass import dense_from_libsvm_coef


def expansion_from_sklearn(model) -> KernelExpansion:
    """The kernel expansion of a fitted ``sklearn.svm.SVC`` (one-vs-one columns, sklearn's binary sign)."""
    kernel = Kernel.from_params(model.kernel, model._gamma, model.degree, model.coef0)
    dual_coef = model.dual_coef_.toarray() if sp.issparse(model.dual_coef_) else model.dual_coef_
    if len(model.classes_) == 2:
        coef = dual_coef.T
    else:
        coef = dense_from_libsvm_coef(dual_coef, model.n_support_)
    return KernelExpansion(model.support_vectors_, coef, model.intercept_, kernel)


def dual_objectives(expansion: KernelExpansion, max_mb: float = 64.0) -> np.ndarray:
    """LIBSVM's dual objective 1/2 c'Kc - sum|c| of every output column of an expansion.

    c holds y_i alpha_i of each problem's support vectors; K is formed in row
    blocks under ``max_mb``, once for all problems, so no m x m matrix is needed.
    """
    sv, coef = expansion.support_vectors, expansion.coef
    if sp.issparse(sv) and sv.shape[0] * sv.shape[1] * 8 <= 512 * 2**20:
        sv = sv.toarray()          # dense blocks are much faster than sparse x sparse
    quad = np.zeros(coef.shape[1])
    for start, stop, K in expansion.kernel.blocks(sv, sv, max_mb=max_mb):
        quad += np.einsum("ij,ij->j", coef[start:stop], K @ coef)
    return 0.5 * quad - np.abs(coef).sum(axis=0)


def libsvm_dual_objectives(model, max_mb: float = 64.0) -> np.ndarray:
    """LIBSVM's dual objective per binary problem of a fitted ``sklearn.svm.SVC``."""
    return dual_objectives(expansion_from_sklearn(model), max_mb)
