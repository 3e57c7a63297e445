"""``BSGDOneClassSVM``: the one-class SVM on a budget, by budgeted SGD.

The kernelised counterpart of scikit-learn's ``SGDOneClassSVM`` (which is linear and, for
kernels, is combined with a Nystroem feature map). Schoelkopf et al.'s one-class primal, scaled
by nu,

    P(w, rho) = nu/2 ||w||^2 + 1/n sum_i max(0, rho - w'phi(x_i)) - nu rho,

by the SGD of :mod:`leansvm.budget.bsgd` with ``loss='one_class'`` (lambda = nu): at step t
(eta_t = 1 / (nu t)) alpha <- (1 - 1/t) alpha, a point with w'phi(x) < rho joins with
alpha = eta_t, and rho <- rho - eta_t ([w'phi(x) < rho] - nu). The step count starts at
t0 = 1 / nu (Bottou's offset, as :class:`leansvm.BSGDRegressor`'s), so the first steps move rho by
at most 1: from t = 1 the first point's alpha = 1/nu pushed rho to about -1/nu, and with nu = 0.05
no second point joined in 10,000 steps (a one-vector model at any budget). After each pass rho is set to its
exact minimiser with w fixed: the nu-quantile of the scores w'phi(x_i) (the objective's slope in
rho is #{scores < rho} / n - nu). At the optimum about a fraction nu of the training points
lies outside (Schoelkopf's nu-property, as for :class:`leansvm.OneClassSVM`). Budget maintenance
(removal, projection, merge) is the classifier's.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator, OutlierMixin
from sklearn.utils import check_random_state

from leansvm.budget import bsgd
from leansvm.core.classifier import ExpansionAttributes, OneClassPrediction
from leansvm.core.expansion import KernelExpansion
from leansvm.core.kernels import Kernel
from leansvm.core.registry import register_estimator
from leansvm.core.validation import check_nu, fit_transaction, validate_unlabelled_data
from leansvm.progress import Progress

#: at most this many rows of a pass enter the exact rho step (a random subsample beyond)
OFFSET_SAMPLE = 20000


@register_estimator
class BSGDOneClassSVM(OneClassPrediction, ExpansionAttributes, OutlierMixin, BaseEstimator):
    """Novelty detection on a budget: one-class SVM by Pegasos SGD, at most ``budget`` vectors.

    ``nu`` in (0, 1]: the fraction of training points left outside; ``maintenance``,
    ``n_merge``, ``merge_solver``, ``epochs`` as :class:`leansvm.BSGDClassifier`. ``predict``:
    +1 inlier where ``decision_function`` > 0, else -1; ``score_samples`` = w'phi(x),
    ``decision_function`` = ``score_samples`` - ``offset_`` (rho), as :class:`leansvm.OneClassSVM`.

    Parameters
    ----------
    budget : int, default=500
        The most support vectors kept (per binary problem for one-vs-rest and one-vs-one).
    nu : float, default=0.5
        In (0, 1]: an upper bound on the fraction of errors and a lower bound on the fraction of support vectors.
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
        Minus ``offset_``: ``decision_function(x) = sum_i coef_i k(sv_i, x) + intercept_``.
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
    >>> from leansvm import BSGDOneClassSVM
    >>> X = np.random.default_rng(0).normal(size=(300, 2))
    >>> model = BSGDOneClassSVM(budget=30, nu=0.1, gamma=0.5, random_state=0).fit(X)
    >>> model.predict([[0.0, 0.0], [6.0, 6.0]]).tolist()
    [1, -1]
    """

    libsvm_svm_type = "one_class"     #: LIBSVM files: a one-class expansion

    def __init__(self, budget=500, nu=0.5, kernel="rbf", gamma="scale", degree=3, coef0=0.0, maintenance="merge",
                 n_merge=2, merge_solver="golden", epochs=1, random_state=None, verbose=False):
        self.budget = budget
        self.nu = nu
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.maintenance = maintenance
        self.n_merge = n_merge
        self.merge_solver = merge_solver
        self.epochs = epochs
        self.random_state = random_state
        self.verbose = verbose

    @fit_transaction
    def fit(self, X, y=None):
        """``epochs`` passes over X in fresh random orders (``y`` is ignored)."""
        nu = check_nu(self.nu, "BSGDOneClassSVM")
        if isinstance(self.epochs, bool) or int(self.epochs) != self.epochs or self.epochs < 1:
            raise ValueError(f"epochs must be a positive integer, got {self.epochs!r}")
        X = validate_unlabelled_data(self, X)
        start = time.perf_counter()
        self._kernel = Kernel.from_params(self.kernel, self.gamma, self.degree, self.coef0, X)
        self._gamma = self._kernel.gamma
        config = bsgd.config_of(self, self._kernel, loss="one_class")
        rng = check_random_state(self.random_state)
        state = bsgd.BudgetState.empty(X.shape[1], nu)
        state.t = t0 = int(round(1.0 / nu))        # the schedule's offset (module docstring)
        with Progress(int(self.epochs), "BSGD one-class", "passes", True if self.verbose else None) as bar:
            for _ in range(int(self.epochs)):
                state = bsgd.sgd_pass(state, X, np.zeros(X.shape[0]), rng.permutation(X.shape[0]), config)
                rows = np.arange(X.shape[0]) if X.shape[0] <= OFFSET_SAMPLE else \
                    np.sort(rng.choice(X.shape[0], OFFSET_SAMPLE, replace=False))
                state.bias = -float(np.quantile(bsgd.margins(state, self._kernel, X[rows]), nu))   # bias = -rho
                bar.update()
        self.state_ = state
        self.expansion_ = KernelExpansion(state.support_vectors, state.alpha, [state.bias], self._kernel)
        self.n_support_ = np.array([state.n_support], dtype=np.int32)
        self.support_ = np.empty(0, dtype=np.int32)
        self.fit_stats_ = {"seconds": time.perf_counter() - start, "steps": int(state.t - t0),
                           "maintenance_steps": int(state.stats[bsgd.ST_MAINT])}
        return self
