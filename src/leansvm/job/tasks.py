"""``leansvm.fit_lean``: the main job for the task the targets call for, as ``leansvm fit`` infers it.

    task = 'classification'  -> :func:`leansvm.job.classification.fit_lean_classification`
    task = 'regression'      -> :func:`leansvm.job.regression.fit_lean_regression`
    task = 'novelty'         -> :func:`leansvm.job.novelty.fit_lean_novelty`
    task = 'auto'            -> regression when the targets are continuous (scikit-learn's
                                ``type_of_target``: non-integer values), else classification

Novelty detection is never inferred: one-class training ignores labels, so it is asked for by name.
"""

from __future__ import annotations

import numpy as np

TASKS = ("auto", "classification", "regression", "novelty")


def infer_task(task, y) -> str:
    """The task ``fit_lean`` runs: ``task`` unless 'auto', then regression for continuous ``y``."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(TASKS)}; got {task!r}")
    if task != "auto":
        return task
    from sklearn.utils.multiclass import type_of_target

    if y is None:
        return "classification"
    return "regression" if type_of_target(np.asarray(y)) == "continuous" else "classification"


def _labels(X, y, target):
    """The labels the job will use: ``y``, else a DataFrame's ``target`` column (default: its last)."""
    if y is not None or not hasattr(X, "columns"):
        return y
    return X[target if target is not None else X.columns[-1]]


def fit_lean(X, y=None, *, task="auto", **options):
    """The main job for ``task`` (module docstring); ``options`` go to that task's function.

    Parameters
    ----------
    X : array-like, sparse matrix or pandas DataFrame
        Training rows (a DataFrame may hold the labels as its ``target`` column).
    y : array-like, optional
        Labels or targets.
    task : {'auto', 'classification', 'regression', 'novelty'}
        'auto' infers classification or regression from the targets, as ``leansvm fit`` does.
    **options
        Keyword arguments of the task's function (for classification
        :func:`~leansvm.job.classification.fit_lean_classification`).

    Returns
    -------
    LeanResult
        The job's result (:class:`~leansvm.job.records.LeanResult`); ``result.model`` is the returned
        estimator, ``result.final`` its record.

    Examples
    --------
    >>> import numpy as np, leansvm
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2))
    >>> result = leansvm.fit_lean(X, X[:, 0] + 0.1 * rng.normal(size=300), Cs=[1.0], gamma_factors=[1.0])
    >>> type(result.model[-1]).__name__ in ("SVR", "BSGDRegressor", "CompressedSVR")
    True
    """
    chosen = infer_task(task, _labels(X, y, options.get("target")))
    if chosen == "regression":
        from leansvm.job.regression import fit_lean_regression
        return fit_lean_regression(X, y, **options)
    if chosen == "novelty":
        from leansvm.job.novelty import fit_lean_novelty
        return fit_lean_novelty(X, y, **options)
    from leansvm.job.classification import fit_lean_classification
    return fit_lean_classification(X, y, **options)
