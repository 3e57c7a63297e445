"""Compressed regressors and one-class models: the original estimator, fewer vectors.

:func:`leansvm.compress` on an ``SVR``, ``NuSVR`` or ``OneClassSVM`` (one output, no classes)
fits the full model's outputs by least squares (Xu et al.'s eq. 10: LARS-SVM selection, then
gradient support vectors) and returns, through :func:`with_expansion`, a fitted copy of the
model whose expansion is the compressed one: predictions, ``score_samples``, LIBSVM and native
files, ONNX and Dask work as for the full model.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from leansvm.core.expansion import KernelExpansion


def with_expansion(model, expansion: KernelExpansion, stats: dict):
    """A fitted copy of ``model`` (same class and parameters) holding ``expansion``.

    The compressed vectors are not training samples: ``support_`` is empty, ``n_support_`` is
    the number of vectors; ``full_n_support_`` and ``compression_`` say what was compressed and
    how. The full model's solver statistics (objective, iterations) and SVR's Laplace sigma
    (``probA_``, fitted to the full model's residuals) are not carried over.
    """
    small = clone(model)
    small.expansion_ = expansion
    small.support_ = np.empty(0, dtype=np.int32)
    small.n_support_ = np.array([expansion.n_support], dtype=np.int32)
    small.n_features_in_ = getattr(model, "n_features_in_", expansion.n_features)
    if hasattr(model, "feature_names_in_"):
        small.feature_names_in_ = model.feature_names_in_
    small.fit_status_ = 0
    small._gamma = expansion.kernel.gamma
    small.full_n_support_ = model.expansion_.n_support
    small.compression_ = stats
    small.n_iter_ = np.array([int(stats.get("n_iter", 0))])
    return small
