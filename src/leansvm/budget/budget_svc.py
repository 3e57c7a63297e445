"""``BudgetSVC``: budget-L1 / budget-L2 SVM (Dekel & Singer, NIPS 2006) as a scikit-learn estimator.

The solver is :func:`leansvm.budget.budget_smo.solve_budget_smo` (the math
is in its module docstring). This module only validates, wires multi-class
problems through :mod:`leansvm.core.multiclass` and applies the pruning of the
paper's section 5 (keep the ``n_keep`` largest alpha_i of every binary
problem, refit its bias); the unpruned model stays available as
``unpruned_expansion_``.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator

from leansvm.core.classifier import KernelClassifierMixin
from leansvm.core.validation import check_int, per_sample_C, validate_training_data
from leansvm.core.registry import register_estimator
from leansvm.core.kernels import Kernel
from leansvm.core.multiclass import BinaryFit, fit_ovo, fit_ovr
from leansvm.budget.budget_smo import (DEFAULT_WORKING_SET, kkt_intercept, largest_weights, refit_intercept,
                                 solve_budget_smo)


def prune_binary_fit(fit: BinaryFit, X, y, C, kernel: Kernel, n_keep: int, budget, norm: str,
                     refit_bias: str = "kkt", max_mb: float = 64.0) -> BinaryFit:
    """Keep the ``n_keep`` largest alpha_i and refit the bias (section 5).

    ``refit_bias``: 'kkt' (default) applies the unpruned solution's bias rule
    (:func:`kkt_intercept`: LIBSVM's C-SVC rule, or the two-level rule while
    the sum constraint is active) to the gradient of the pruned alpha;
    'primal' minimises the primal loss ||xi(b)|| of the problem's own
    interpolation norm with f fixed (:func:`refit_intercept`; it drives b to
    an extreme when every pruned margin is below 1, as happens for small C);
    'none' keeps the unpruned bias, as the paper's experiment does.
    Returns a new BinaryFit (``dual_objective`` is still the unpruned
    solution's); the unpruned alpha and bias are kept in
    ``stats['unpruned_alpha']`` / ``stats['unpruned_intercept']``.
    """
    keep = largest_weights(fit.alpha, n_keep)
    stats = dict(fit.stats, unpruned_alpha=fit.alpha, unpruned_intercept=fit.intercept,
                 n_pruned=int(np.count_nonzero(fit.alpha) - keep.size))
    if keep.size == np.count_nonzero(fit.alpha) or refit_bias == "none":
        alpha = np.zeros_like(fit.alpha)
        alpha[keep] = fit.alpha[keep]
        return BinaryFit(alpha, fit.intercept, fit.dual_objective, fit.n_iter, fit.converged, stats)
    alpha = np.zeros_like(fit.alpha)
    alpha[keep] = fit.alpha[keep]
    coef = alpha[keep] * y[keep]
    f = np.zeros(y.size)
    if keep.size:
        for start, stop, K in kernel.blocks(X, X[keep], max_mb=max_mb):
            f[start:stop] = K @ coef
    if refit_bias == "primal":
        b = refit_intercept(f, y, budget, norm)
    else:
        U = np.broadcast_to(np.asarray(C, dtype=np.float64), y.shape)
        G = y * f - 1.0 + fit.stats.get("eta", 0.0) * alpha
        b = kkt_intercept(alpha, y, G, U, 0.0 if fit.stats.get("rho", 0.0) > 0 else 1.0)[0]
    return BinaryFit(alpha, b, fit.dual_objective, fit.n_iter, fit.converged, stats)


@register_estimator
class BudgetSVC(KernelClassifierMixin, BaseEstimator):
    """Support vector machine on a budget (budget-L1 or budget-L2 SVM, Dekel & Singer 2006).

    Solves the Any-Norm-SVM dual with the 1-inf interpolation norm
    (``norm='l1'``: 0 <= alpha_i <= C, sum alpha <= B C) or the 2-inf norm
    (``norm='l2'``: ||alpha||_2 <= C, sum alpha <= sqrt(B) C), plus
    y'alpha = 0 (the paper's primal has a bias), by SMO with the paper's pair
    update; with ``budget >= n`` and ``norm='l1'`` it is the ordinary C-SVC.
    ``prune=True`` then keeps the ``n_keep`` (default ``budget``) largest
    alpha_i of each binary problem and refits its bias (``refit_bias``, see
    :func:`prune_binary_fit`). Budget and pruning apply per binary problem.
    Per-sample weights are not supported (the sum constraint would need them
    too).

    Measured (``benchmarks/budget/bench_budget_svc.py``): an unpruned budget solution has several times B
    support vectors (free ones share the margin 1 - rho, so Theorem 2's
    corollary rarely applies). With the budget active budget-L1 is nu-SVC
    with nu = B/n: alpha_i = C exactly on its (at most B) margin errors, so
    pruning to s = B keeps the margin errors (budget-L2: the smallest
    margins, mu_i + eta alpha_i = 1 - rho), an expansion that can classify
    worse than chance for small B whatever the bias. A
    budget whose unpruned solution has about ``n_keep`` SVs prunes well
    (``n_keep / 5`` on the paper's digit problems; on magic at C = 10 even
    B = 100 gives 2760 SVs); ``prune=False`` gives the exact budget-SVM.

    Parameters follow ``leansvm.SVC`` where they exist; in addition
    ``budget`` (B), ``norm``, ``prune``, ``n_keep`` (s), ``relative_tol``
    (False, the default: LIBSVM's absolute KKT tol, as its nu-SVC uses for
    the same problem; True: stop at violation <= tol x margin level 1 - rho,
    exact when rho is near 1 but 8-70x more pair steps on magic for <= 0.006
    test accuracy, ``benchmarks/budget/bench_budget_svc.py``), ``shrinking``
    (LIBSVM-style active set; kernel rows beyond ``cache_size`` come from a
    float32 row cache), ``working_set_size`` (decomposition for
    ``l2_solver='paper'`` when the kernel matrix does not fit ``cache_size``) and
    ``l2_solver`` ('multiplier', exact; 'paper', the plain SMO with the chord
    (13), which can stall on the 2-norm sphere).

    Fitted attributes: ``classes_``, ``support_``, ``support_vectors_``,
    ``dual_coef_`` (y_i alpha_i, LIBSVM's layout), ``intercept_``,
    ``n_support_``, ``expansion_`` (pruned when ``prune``),
    ``unpruned_expansion_``, ``unpruned_support_``, ``unpruned_n_support_``,
    ``dual_objective_`` (per binary problem, before pruning, LIBSVM's sign),
    ``sum_multiplier_`` (rho of the sum constraint), ``n_iter_``, ``fit_status_``.

    Parameters
    ----------
    budget : int, default=100
        The most support vectors kept (per binary problem for one-vs-rest and one-vs-one).
    C : float, default=1.0
        Penalty of the errors (times the sample weight).
    norm : {'l1', 'l2'}, default='l1'
        The interpolation norm: budget-L1 (0 <= alpha <= C, sum alpha <= B C) or budget-L2 (||alpha||_2 <= C).
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'} or callable, default='rbf'
        The kernel, with LIBSVM's meanings of ``gamma``, ``degree`` and ``coef0``.
    degree : int, default=3
        Degree of the polynomial kernel.
    gamma : {'scale', 'auto'} or float, default='scale'
        Kernel coefficient; 'scale' is 1 / (n_features X.var()), as scikit-learn.
    coef0 : float, default=0.0
        Independent term of the polynomial and sigmoid kernels.
    tol : float, default=1e-3
        Stopping tolerance on the maximal KKT violation (LIBSVM's eps).
    relative_tol : bool, default=False
        Stop at violation <= tol x (1 - rho) instead of LIBSVM's absolute tol.
    max_iter : int, default=-1
        Bound on the solver iterations (-1: none); a ``ConvergenceWarning`` when reached.
    prune : bool, default=True
        Keep the ``n_keep`` largest alpha_i of each binary problem and refit its bias.
    n_keep : int, optional
        The vectors kept by pruning (default: ``budget``).
    refit_bias : {'kkt', 'primal', 'none'}, default='kkt'
        How the bias is refit after pruning (:func:`~leansvm.budget.budget_svc.prune_binary_fit`).
    cache_size : float, default=200
        Kernel row cache in MB.
    shrinking : bool, default=True
        LIBSVM's shrinking heuristic.
    working_set_size : int, default=128
        q, the samples of one IRWLS chunk.
    l2_solver : {'multiplier', 'paper'}, default='multiplier'
        budget-L2's solver: exact multiplier updates, or the paper's SMO with the chord (13).
    multiclass : {'ovr', 'ovo', 'crammer_singer'}, default='ovo'
        One problem per class, per pair, or one shared budget (BSGD only).
    decision_function_shape : {'ovr', 'ovo'}, default='ovr'
        Shape of ``decision_function`` for more than two classes, as scikit-learn.
    n_jobs : int, optional
        Binary problems in parallel threads (joblib's meaning).
    verbose : bool or int, default=False
        A progress bar (:mod:`leansvm.progress`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The model's vectors (training rows).
    dual_coef_ : ndarray
        Coefficients of the vectors, in scikit-learn's layout.
    intercept_ : ndarray
        The constants of the decision functions.
    n_support_ : ndarray of shape (n_classes,)
        Vectors per class.
    expansion_ : KernelExpansion
        The model as a kernel expansion f(x) = sum_i coef_i k(sv_i, x) + b (:mod:`leansvm.core.expansion`).
    n_features_in_ : int
        Number of features seen in ``fit``.
    support_ : ndarray of shape (n_SV,)
        Indices of the vectors in the training data.
    unpruned_n_support_ : ndarray
        Vectors per class of the budget problem's solution before it is pruned to the budget.
    dual_objective_ : float or list of float
        The budget problem's dual objective (per binary problem).
    n_iter_ : ndarray
        Solver iterations per binary problem.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from leansvm import BudgetSVC
    >>> X, y = make_moons(200, noise=0.2, random_state=0)
    >>> model = BudgetSVC(budget=200, C=1.0, gamma=2.0, prune=False).fit(X, y)
    >>> bool(model.score(X, y) > 0.9)
    True
    """

    def __init__(self, budget=100, C=1.0, norm="l1", kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 tol=1e-3, relative_tol=False, max_iter=-1, prune=True, n_keep=None, refit_bias="kkt",
                 cache_size=200.0, shrinking=True,
                 working_set_size=DEFAULT_WORKING_SET, l2_solver="multiplier", multiclass="ovo",
                 decision_function_shape="ovr", n_jobs=None, verbose=False):
        self.budget = budget
        self.C = C
        self.norm = norm
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.relative_tol = relative_tol
        self.max_iter = max_iter
        self.prune = prune
        self.n_keep = n_keep
        self.refit_bias = refit_bias
        self.cache_size = cache_size
        self.shrinking = shrinking
        self.working_set_size = working_set_size
        self.l2_solver = l2_solver
        self.multiclass = multiclass
        self.decision_function_shape = decision_function_shape
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _check_params(self):
        def positive_int(value, name):
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) \
                    or value < 1 or int(value) != value:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
            return int(value)

        budget = positive_int(self.budget, "budget")
        n_keep = budget if self.n_keep is None else positive_int(self.n_keep, "n_keep")
        if self.norm not in ("l1", "l2"):
            raise ValueError(f"norm must be 'l1' or 'l2', got {self.norm!r}")
        if self.refit_bias not in ("kkt", "primal", "none"):
            raise ValueError(f"refit_bias must be 'kkt', 'primal' or 'none', got {self.refit_bias!r}")
        if self.l2_solver not in ("multiplier", "paper"):
            raise ValueError(f"l2_solver must be 'multiplier' or 'paper', got {self.l2_solver!r}")
        if self.multiclass not in ("ovo", "ovr"):
            raise ValueError(f"multiclass must be 'ovo' or 'ovr', got {self.multiclass!r}")
        if self.decision_function_shape not in ("ovr", "ovo"):
            raise ValueError(f"decision_function_shape must be 'ovr' or 'ovo', "
                             f"got {self.decision_function_shape!r}")
        if not (isinstance(self.tol, numbers.Real) and self.tol > 0):
            raise ValueError(f"tol must be positive, got {self.tol!r}")
        if not (isinstance(self.cache_size, numbers.Real) and self.cache_size > 0):
            raise ValueError(f"cache_size must be positive, got {self.cache_size!r}")
        check_int("working_set_size", self.working_set_size, 2)
        return budget, n_keep

    def fit(self, X, y):
        budget, n_keep = self._check_params()
        X, classes, y_enc, _ = validate_training_data(self, X, y)
        C = per_sample_C(self.C, None, classes, y_enc, np.ones(y_enc.size))
        kernel = Kernel.from_params(self.kernel, self.gamma, self.degree, self.coef0, X)

        def train_binary(Xb, yb, Cb):
            fit = solve_budget_smo(Xb, yb, Cb, kernel, budget=budget, norm=self.norm, tol=self.tol,
                                   max_iter=self.max_iter, cache_size=self.cache_size,
                                   working_set_size=self.working_set_size, l2_solver=self.l2_solver,
                                   relative_tol=bool(self.relative_tol), shrinking=bool(self.shrinking),
                                   verbose=self.verbose)
            if self.prune:
                fit = prune_binary_fit(fit, Xb, yb, Cb, kernel, n_keep, budget, self.norm, self.refit_bias)
            return fit

        reduce = fit_ovr if self.multiclass == "ovr" else fit_ovo
        result = reduce(X, y_enc, classes.size, train_binary, C, kernel, self.n_jobs)
        self.classes_ = classes
        self.multiclass_ = result.strategy
        self.expansion_ = result.expansion
        self.support_ = result.support
        self.n_support_ = result.n_support.astype(np.int32)
        self.dual_objective_ = np.array([fit.dual_objective for fit in result.fits])
        self.sum_multiplier_ = np.array([fit.stats.get("rho", 0.0) for fit in result.fits])
        self.n_iter_ = np.array([fit.n_iter for fit in result.fits])
        self.fit_status_ = 0 if all(fit.converged for fit in result.fits) else 1
        self._gamma = kernel.gamma
        self._set_unpruned(X, y_enc, classes.size, result, C, kernel)
        return self

    def _set_unpruned(self, X, y_enc, n_classes, result, C, kernel):
        """The expansion before pruning, pooled the same way (no training: the stored fits are replayed)."""
        if not self.prune:
            self.unpruned_expansion_ = self.expansion_
            self.unpruned_support_ = self.support_
            self.unpruned_n_support_ = self.n_support_
            return
        unpruned = iter([BinaryFit(fit.stats["unpruned_alpha"], fit.stats["unpruned_intercept"])
                         for fit in result.fits])
        reduce = fit_ovr if result.strategy == "ovr" else fit_ovo
        full = reduce(X, y_enc, n_classes, lambda *_: next(unpruned), C, kernel, None)
        self.unpruned_expansion_ = full.expansion
        self.unpruned_support_ = full.support
        self.unpruned_n_support_ = full.n_support.astype(np.int32)
