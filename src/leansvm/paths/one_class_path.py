r"""The one-class SVM along nu, warm-started and screened.

Why the C-path machinery carries over. LIBSVM's one-class dual (:mod:`leansvm.exact.one_class`)

    min_a 1/2 a'Ka   s.t.  0 <= a_i <= w_i,   sum_i a_i = nu W        (W = sum_i w_i)

moves the equality's right-hand side with nu, not the box. Substituting a = nu W b gives

    min_b 1/2 b'Kb   s.t.  0 <= b_i <= C c_i,   sum_i b_i = 1,        C = 1 / nu, c_i = w_i / W,

the objective scaled by (nu W)^2: the same minimisers, and a box that grows with C while the
equality stays put. So decreasing nu is an ascending C path of one fixed problem (y = 1, p = 0,
Delta = 1), solved by :func:`leansvm.paths.binary_path.iter_binary_path`, and:

- **warm starts**: the solution at nu_a is feasible at every nu_b <= nu_a (its entries are below
  the old bounds, so below the new ones, and still sum to 1);
- **safe screening**: the duality-gap rule holds for every problem of the generic form
  (:func:`leansvm.paths.screening.gap_bounds`) once its primal carries the equality's term Delta b:
  P(w, b) = ||w||^2/2 + sum_i C c_i (-w'phi_i - b)_+ + b, i.e. Schoelkopf's
  ||w||^2/2 + 1/(nu W) sum_i w_i (rho - w'phi_i)_+ - rho with rho = -b. The reference is the previous
  solution itself (scaling it would break sum b = 1), and the bias interval follows from
  sum_i b*_i = 1 with the margins' bounds. A sample proven inside (w*'phi_i > rho*) has a_i = 0,
  one proven outside has a_i = w_i (a bounded support vector, an outlier of the training set).

Ogawa et al.'s ball and intersection tests are derived for y'a = 0 and a scaled reference, which
this equality rules out; the gap ball is what carries over. Rising nu (falling C) has no feasible
reference: the path runs from the largest nu down.

The returned models are :class:`leansvm.OneClassSVM` in LIBSVM's scaling (a = nu W b, rho = nu W
rho_b): the same support vectors, decision values and file format as a fit at that nu. The
solver's tolerance is LIBSVM's on the gradient K a, i.e. tol / (nu W) on K b; the path uses the
strictest, that of the largest nu, at every step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_array
from sklearn.utils.validation import _check_sample_weight

from leansvm.core.expansion import KernelExpansion
from leansvm.core.kernels import Kernel
from leansvm.core.problems import DualProblem
from leansvm.core.validation import check_nu
from leansvm.exact.irwls import DEFAULT_WORKING_SET
from leansvm.paths.binary_path import binary_path, row_cache

__all__ = ["one_class_path", "OneClassPathPoint"]


@dataclass
class OneClassPathPoint:
    """One nu of a one-class path: the fitted :class:`leansvm.OneClassSVM` and what screening did."""

    nu: float
    model: object
    n_screened: int          # samples proven inside or outside before the solve
    n_at_bound: int          # samples at a bound (0 or w_i) in the solution
    solve_seconds: float
    rule_seconds: float


def _check_nus(nus) -> np.ndarray:
    nus = np.asarray(nus, dtype=np.float64).ravel()
    if nus.size == 0:
        raise ValueError("one_class_path needs at least one nu")
    for nu in nus:
        check_nu(float(nu), "one_class_path")
    if np.unique(nus).size != nus.size:
        raise ValueError("the nu values must be distinct")
    return np.sort(nus)[::-1]


def one_class_path(X, nus, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, sample_weight=None,
                   screening="gap", tol=1e-3, cache_size=200.0, working_set_size=DEFAULT_WORKING_SET,
                   callback=None) -> list[OneClassPathPoint]:
    """The one-class SVM (LIBSVM's, as :class:`leansvm.OneClassSVM`) at every nu of ``nus``, solved
    from the largest nu down, each warm-started from the previous one and screened by the
    duality-gap rule (``screening='gap'``; None: warm starts only). Returns one
    :class:`OneClassPathPoint` per nu, largest nu first (module docstring).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Training rows.
    nus : array-like
        The values of nu, each in (0, 1]; solved from the largest down.
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'} or callable, default='rbf'
        The kernel, with LIBSVM's meanings of ``gamma``, ``degree`` and ``coef0``.
    gamma : {'scale', 'auto'} or float, default='scale'
        Kernel coefficient; 'scale' is 1 / (n_features X.var()), as scikit-learn.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.0
        Independent term of the polynomial and sigmoid kernels.
    sample_weight : array-like, optional
        Per-sample factor of the bounds C_i.
    screening : {'gap'} or None, default='gap'
        The duality-gap rule; None: warm starts only.
    tol : float, default=1e-3
        Stopping tolerance on the maximal KKT violation (LIBSVM's eps).
    cache_size : float, default=200
        Kernel row cache in MB.
    working_set_size : int, optional, default=128
        IRWLS's working set.
    callback : callable, optional
        Called after each point of the path.

    Returns
    -------
    list of OneClassPathPoint
        One per nu, largest first, each with its fitted ``OneClassSVM``.

    Examples
    --------
    >>> import numpy as np
    >>> from leansvm import one_class_path
    >>> X = np.random.default_rng(0).normal(size=(200, 2))
    >>> points = one_class_path(X, [0.5, 0.2, 0.1], gamma=0.5)
    >>> len(points)
    3
    """
    from leansvm.exact.one_class import OneClassSVM

    X = check_array(X, accept_sparse="csr", dtype=np.float64)
    if screening not in ("gap", None):
        raise ValueError(f"one_class_path screens with the duality-gap rule: screening must be 'gap' or None, "
                         f"got {screening!r}")
    nus = _check_nus(nus)
    weights = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    keep = np.flatnonzero(weights > 0)
    if keep.size == 0:
        raise ValueError("one_class_path: every sample has zero weight")
    X_keep, total = X[keep], float(weights[keep].sum())
    kern = Kernel.from_params(kernel, gamma, degree, coef0, X)
    unit = DualProblem(np.ones(keep.size), np.zeros(keep.size), weights[keep] / total, 1.0, None, "one_class")
    points = binary_path(X_keep, unit, 1.0 / nus, kern, screening=screening, bias="equality",
                         tol=tol / (nus[0] * total), cache=row_cache(kern, X_keep, cache_size, tol),
                         index=np.arange(keep.size), callback=callback,
                         solver_options={"cache_size": cache_size, "random_state": 0,
                                         "working_set_size": int(working_set_size)})
    out = []
    for nu, point in zip(nus, points):
        scale = nu * total                                  # a = nu W b (module docstring)
        coef = scale * point.fit.alpha
        sv = np.flatnonzero(coef > 0)
        model = OneClassSVM(kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, nu=float(nu), tol=tol,
                            cache_size=cache_size, working_set_size=working_set_size)
        model.expansion_ = KernelExpansion(X_keep[sv], coef[sv, None], np.array([scale * point.fit.intercept]), kern)
        model.support_ = keep[sv].astype(np.int32)
        model.n_support_ = np.array([sv.size], dtype=np.int32)
        model.dual_objective_ = np.array([scale * scale * point.fit.dual_objective])
        model.n_iter_ = np.array([point.fit.n_iter])
        model.fit_status_ = 0 if point.fit.converged else 1
        model.n_features_in_ = X.shape[1]
        model._gamma = kern.gamma
        out.append(OneClassPathPoint(float(nu), model, point.n_screened, point.n_non_sv, point.solve_seconds,
                                     point.rule_seconds))
    return out
