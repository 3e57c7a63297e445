"""Estimators with one dual problem (SVR, NuSVR, OneClassSVM): solve it, keep the expansion.

:func:`solve_expansion` drops zero-weight samples (they cannot be support vectors), builds
the problem over the rest, solves it by chunked IRWLS (:mod:`leansvm.exact.irwls`) on a
kernel row cache over the samples (a problem with two variables per sample reads one row
for both) and sets scikit-learn's fitted attributes from the expansion
sum_i coef_i k(x_i, x) + b, coef_i the sum of y_j a_j over sample i's variables.
"""

from __future__ import annotations

import numpy as np

from leansvm.core.expansion import KernelExpansion
from leansvm.core.kernels import KernelRowCache
from leansvm.core.user_kernels import kernel_of
from leansvm.core.validation import check_positive_number
from leansvm.exact.irwls import default_cache_dtype, solve_irwls


def solve_expansion(estimator, X, bounds, make_problem, working_set_size=None):
    """Fit ``estimator`` (its kernel and solver parameters; ``working_set_size`` in place of its own
    where given) on the problem ``make_problem(keep, bounds[keep])`` over the samples of positive
    bound; returns the solver's fit."""
    check_positive_number("tol", estimator.tol)
    name = type(estimator).__name__
    keep = np.flatnonzero(bounds > 0)
    if keep.size == 0:
        raise ValueError(f"{name}: every sample has zero weight")
    X_keep = X[keep]
    kernel = kernel_of(estimator, X)
    problem = make_problem(keep, bounds[keep])
    rows = KernelRowCache(kernel, X_keep, float(estimator.cache_size), dtype=default_cache_dtype(estimator.tol, keep.size))
    q = estimator.working_set_size if working_set_size is None else working_set_size
    fit = solve_irwls(X_keep, problem, kernel, tol=estimator.tol, working_set_size=q,
                      cache_size=estimator.cache_size, max_iter=estimator.max_iter,
                      random_state=estimator.random_state, verbose=int(estimator.verbose),
                      shrinking=bool(estimator.shrinking), kernel_cache=(rows, np.arange(keep.size)))
    coef = problem.coef(fit.alpha, keep.size)
    sv = np.flatnonzero(coef != 0)
    estimator.support_ = keep[sv].astype(np.int32)
    estimator.expansion_ = KernelExpansion(X_keep[sv], coef[sv, None], np.array([fit.intercept]), kernel)
    estimator.n_support_ = np.array([sv.size], dtype=np.int32)
    estimator.dual_objective_ = np.array([fit.dual_objective])
    estimator.n_iter_ = np.array([fit.n_iter])
    estimator.fit_status_ = 0 if fit.converged else 1
    estimator.solver_stats_ = fit.kept_stats()
    estimator._gamma = kernel.gamma
    return fit
