"""``BSGDRegressor``: kernel support vector regression trained by budgeted SGD.

The primal of epsilon-SVR with the Pegasos scaling,

    P(w, b) = lambda/2 ||w||^2 + 1/n sum_i max(0, |z_i - w'phi(x_i) - b| - epsilon),

by the SGD of :mod:`leansvm.budget.bsgd` with ``loss='epsilon_insensitive'``: at step t
(eta_t = 1 / (lambda t)) alpha <- (1 - 1/t) alpha, and a point outside the tube joins with
alpha = eta_t sign(z - f(x)). The step count starts at t0 = 1 / lambda (the offset of Bottou's
schedule eta = 1 / (lambda (t + t0))), so the first step moves f by 1 in the targets' units
instead of n C: plain Pegasos, whose first steps are n C = 100,000 on friedman1-10k at C = 10,
ends one pass at test RMSE 3.9 (targets of std 1), with the offset at 0.46 (``benchmarks/budget/bench_bsgd_regression.py``). Budget maintenance (removal, projection, merge, multi-merge) is
the classifier's: it only reads the coefficients and the kernel, never the loss. The bias is
held fixed during a pass and then set to its exact minimiser with w fixed
(:func:`~leansvm.budget.bsgd_refit.optimal_tube_bias`, the median of the breakpoints r_i +- epsilon).
``refit=True`` (the default) re-solves coefficients and bias with the vectors fixed, as ridge
regression on the features K(x, SV) K_SV^(-1/2) with penalty 1 / (2 C) (the squared loss:
closed form). SGD on the epsilon-insensitive primal at lambda = 1 / (n C) is far from its
optimum after a few passes (0.46 above), while the vectors it places are good: refitted, the
same model is at 0.220, 2 % above exact SVR's 0.2155.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from leansvm.budget import bsgd
from leansvm.budget import bsgd_refit
from leansvm.core.classifier import ExpansionAttributes
from leansvm.core.expansion import KernelExpansion
from leansvm.core.kernels import Kernel
from leansvm.core.registry import register_estimator
from leansvm.core.validation import (check_positive_number, fit_transaction,
                                     validate_regression_data)
from leansvm.progress import Progress

#: at most this many rows of a pass enter the exact bias step and the refit (a random subsample beyond)
BIAS_SAMPLE = 20000
REFIT_SAMPLE = 100000


@register_estimator
class BSGDRegressor(ExpansionAttributes, RegressorMixin, BaseEstimator):
    """Kernel epsilon-SVR on a budget: Pegasos SGD on the primal, at most ``budget`` vectors.

    ``lambda = 1 / (n C)`` (``C`` as :class:`leansvm.SVR`'s, default 1) or ``lambda_`` given;
    ``epsilon`` the tube half-width; ``maintenance``, ``n_merge``, ``merge_solver`` as
    :class:`leansvm.BSGDClassifier`. ``epochs`` passes in fresh random orders; ``partial_fit``
    continues SGD on a chunk (``n_samples_total``: the stream's length, for lambda; the refit,
    when on, uses the chunk). ``refit`` (default True): see the module docstring.

    Fitted attributes: ``expansion_``, ``support_vectors_``, ``dual_coef_``, ``intercept_``,
    ``n_support_``, ``support_`` (empty: merged vectors are not training points), ``state_``
    (the :class:`~leansvm.budget.bsgd.BudgetState`), ``fit_stats_``.

    Parameters
    ----------
    budget : int, default=500
        The most support vectors kept (per binary problem for one-vs-rest and one-vs-one).
    C : float, default=1.0
        Penalty of the errors (times the sample weight).
    lambda_ : float, optional
        The regularisation lambda of the primal; default 1 / (n C).
    epsilon : float, default=0.1
        Half-width of the tube inside which errors cost nothing.
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'} or callable, default='rbf'
        The kernel, with LIBSVM's meanings of ``gamma``, ``degree`` and ``coef0``.
    gamma : {'scale', 'auto'} or float, default='scale'
        Kernel coefficient; 'scale' is 1 / (n_features X.var()), as scikit-learn.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.0
        Independent term of the polynomial and sigmoid kernels.
    maintenance : {'merge', 'removal', 'projection'}, default='merge'
        How the budget is kept: merge vectors (rbf), drop the smallest |alpha|, or project it onto the others.
    n_merge : int, default=2
        M, the vectors merged into one per maintenance step (2: the classic merge; 3-5: multi-merge, faster).
    merge_solver : {'golden', 'lookup', 'gradient'}, default='golden'
        The merge point: golden-section search, a precomputed table, or gradient ascent on z (MM-GD).
    epochs : int, default=1
        Passes over the data, each in a fresh random order.
    fit_intercept : bool, default=True
        Fit the unregularised bias (set after each pass to its exact minimiser).
    refit : bool, default=True
        Re-solve the coefficients and bias with the support vectors fixed (a convex problem).
    random_state : int, RandomState or None, default=None
        Seed of the fit's random choices (sample order, subsets): reproducible fits.
    verbose : bool or int, default=False
        A progress bar (:mod:`leansvm.progress`).

    Attributes
    ----------
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The model's vectors.
    dual_coef_ : ndarray of shape (1, n_SV)
        Their coefficients.
    intercept_ : ndarray of shape (1,)
        The constant of the decision function.
    expansion_ : KernelExpansion
        The model as a kernel expansion f(x) = sum_i coef_i k(sv_i, x) + b (:mod:`leansvm.core.expansion`).
    n_features_in_ : int
        Number of features seen in ``fit``.
    state_ : object
        The SGD state (vectors, coefficients, offset), as the budget left it.
    fit_stats_ : dict
        Counts of the fit: budget maintenance steps, merges, seconds spent maintaining.

    Examples
    --------
    >>> import numpy as np
    >>> from leansvm import BSGDRegressor
    >>> X = np.linspace(0, 1, 200).reshape(-1, 1)
    >>> model = BSGDRegressor(budget=20, C=10, gamma=5.0, random_state=0).fit(X, np.sin(3 * X.ravel()))
    >>> model.expansion_.n_support <= 20
    True
    """

    libsvm_svm_type = "epsilon_svr"     #: LIBSVM files: an epsilon-SVR expansion

    def __init__(self, budget=500, C=None, lambda_=None, epsilon=0.1, kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, maintenance="merge", n_merge=2, merge_solver="golden", epochs=1, fit_intercept=True,
                 refit=True, random_state=None, verbose=False):
        self.budget = budget
        self.C = C
        self.lambda_ = lambda_
        self.epsilon = epsilon
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.maintenance = maintenance
        self.n_merge = n_merge
        self.merge_solver = merge_solver
        self.epochs = epochs
        self.fit_intercept = fit_intercept
        self.refit = refit
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_is_fitted__(self):
        return hasattr(self, "expansion_")

    def _check_params(self):
        bsgd.check_regularisation(self.C, self.lambda_)
        check_positive_number("epsilon", self.epsilon, allow_zero=True)
        if isinstance(self.epochs, bool) or int(self.epochs) != self.epochs or self.epochs < 1:
            raise ValueError(f"epochs must be a positive integer, got {self.epochs!r}")

    def _start(self, X, n_total):
        self._kernel = Kernel.from_params(self.kernel, self.gamma, self.degree, self.coef0, X)
        self._gamma = self._kernel.gamma
        self._cfg = bsgd.config_of(self, self._kernel, loss="epsilon_insensitive", epsilon=float(self.epsilon))
        lam = float(self.lambda_) if self.lambda_ is not None else 1.0 / (n_total * (1.0 if self.C is None else float(self.C)))
        self.state_ = bsgd.BudgetState.empty(X.shape[1], lam)
        self.state_.t = self._t0 = int(round(1.0 / lam))     # the schedule's offset (module docstring)
        self._rng = check_random_state(self.random_state)
        self._fit_time = 0.0

    @fit_transaction
    def fit(self, X, y):
        """Train anew: ``epochs`` passes over (X, y)."""
        self._check_params()
        X, y = validate_regression_data(self, X, y)
        start = time.perf_counter()
        self._start(X, X.shape[0])
        with Progress(int(self.epochs), "BSGD regression", "passes", True if self.verbose else None) as bar:
            for _ in range(int(self.epochs)):
                self._pass(X, y)
                bar.update()
        if self.refit:
            self._refit(X, y)
        self._finish(start)
        return self

    def partial_fit(self, X, y, n_samples_total=None):
        """One SGD pass over a chunk, continuing from the current state (the bias is re-fitted)."""
        first = not hasattr(self, "state_")
        if first:
            self._check_params()
        else:
            check_is_fitted(self, "state_")
        X, y = validate_regression_data(self, X, y, reset=first)
        if first:
            if n_samples_total is not None:
                n_samples_total = int(check_positive_number("n_samples_total", n_samples_total))
            self._start(X, n_samples_total or X.shape[0])
        start = time.perf_counter()
        self._pass(X, y)
        if self.refit:
            self._refit(X, y)
        self._finish(start)
        return self

    def _pass(self, X, y):
        state = bsgd.sgd_pass(self.state_, X, y, self._rng.permutation(X.shape[0]), self._cfg)
        if self.fit_intercept:
            rows = self._sample(X.shape[0], BIAS_SAMPLE)
            state.bias = bsgd_refit.optimal_tube_bias(self._margins(state, X[rows]), y[rows], float(self.epsilon))
        self.state_ = state
        if self.verbose:
            print(f"[BSGD regression] t={state.t} n_sv={state.n_support} bias={state.bias:.4g}")

    def _sample(self, n, limit):
        return np.arange(n) if n <= limit else np.sort(self._rng.choice(n, limit, replace=False))

    def _margins(self, state, X):
        return bsgd.margins(state, self._kernel, X)

    def _refit(self, X, y):
        """Ridge regression on F = K(X, SV) K_SV^(-1/2): min 1/2 ||v||^2 + C sum (z - F v - b)^2
        (:func:`~leansvm.budget.bsgd_refit.ridge_refit`) on at most ``REFIT_SAMPLE`` rows."""
        state = self.state_
        if state.n_support == 0:
            return
        rows = self._sample(X.shape[0], REFIT_SAMPLE)
        state.alpha, state.bias = bsgd_refit.ridge_refit(self._kernel, state.support_vectors, X[rows], y[rows],
                                                         1.0 / (state.lam * X.shape[0]), self.fit_intercept)

    def _finish(self, start):
        self._fit_time += time.perf_counter() - start
        state = self.state_
        self.expansion_ = KernelExpansion(state.support_vectors, state.alpha, [state.bias], self._kernel)
        self.n_support_ = np.array([state.n_support], dtype=np.int32)
        self.support_ = np.empty(0, dtype=np.int32)
        self.fit_stats_ = {"seconds": self._fit_time, "steps": int(state.t - self._t0),
                           "maintenance_steps": int(state.stats[bsgd.ST_MAINT]),
                           "maintenance_seconds": float(state.stats[bsgd.ST_MAINT_TIME]),
                           "added": int(state.stats[bsgd.ST_ADDED])}

    def predict(self, X):
        return self._output(X)
