"""Measurements the main job never chooses by: prediction cost per 1000 rows, and LIBSVM's full
model (scikit-learn ``SVC``) at the same (C, gamma) for comparison."""

from __future__ import annotations

import numpy as np

from leansvm.job.helpers import _int32_indices, _timed


def seconds_per_1000(predict, X, repeats=5) -> float:
    """Best-of-``repeats`` wall time of ``predict(X)``, per 1000 rows."""
    best = np.inf
    for _ in range(repeats):
        _, seconds = _timed(predict, X)
        best = min(best, seconds)
    return 1000.0 * best / X.shape[0]


#: under a time budget LIBSVM's full model is trained only where this many times its estimate fits the
#: time left: the estimate extrapolates small fits, and LIBSVM's large fits outgrow them (its cache
#: holds a shrinking share of the rows): on pixels-60k (48,000 x 717, C = 4) the estimate said 111 s and
#: the fit took 259 s, the job 699 s of its 600
REFERENCE_MARGIN = 3.0


def libsvm_reference(X, y, C, gamma, class_weight=None):
    """LIBSVM's full model (scikit-learn ``SVC``, the same C, gamma and class weights)."""
    from sklearn.svm import SVC as LibsvmSVC

    X = _int32_indices(X)
    return LibsvmSVC(C=C, gamma=gamma, cache_size=500, class_weight=class_weight).fit(X, y), X


#: prediction costs are timed on at most this many rows of the measured part
TIMING_ROWS = 5000


def measure_prediction_cost(candidates, X, reference=None, repeats=5):
    """Fill ``seconds_per_1000`` of every candidate; return LIBSVM's (or None)."""
    for c in candidates:
        c.seconds_per_1000 = seconds_per_1000(c.model.predict, X, repeats)
    if reference is None:
        return None
    return seconds_per_1000(reference.predict, _int32_indices(X), repeats)
