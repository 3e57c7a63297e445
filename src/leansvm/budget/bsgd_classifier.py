"""``BSGDClassifier``: kernel SVM trained by budgeted SGD with removal / projection / (multi-)merge.

Thin layer over :mod:`leansvm.budget.bsgd`: validation, labels, one binary BSGD problem per
output (binary; one-vs-rest or one-vs-one for more classes), pooling into one
:class:`~leansvm.core.expansion.KernelExpansion`, ``partial_fit`` for streams, and the optional
convex refit. Papers: Wang, Crammer & Vucetic, JMLR 13 (2012) (BSGD); Qaadan & Glasmachers,
arXiv:1806.10179 (multi-merge); Glasmachers & Qaadan, arXiv:1806.10180 (lookup table).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from leansvm.core.classifier import KernelClassifierMixin
from leansvm.core.registry import register_estimator
from leansvm.core.validation import validate_training_data
from leansvm.core.expansion import KernelExpansion
from leansvm.core.kernels import Kernel
from leansvm.core.multiclass import ovo_pairs
from leansvm.progress import Progress
from leansvm.budget import bsgd, bsgd_crammer_singer
from leansvm.budget import bsgd_refit

#: at most this many rows of a pass enter the exact bias step (a random subsample beyond)
BIAS_SAMPLE = 20000
#: at most this many rows enter the optional refit (its feature matrix is rows x budget)
REFIT_SAMPLE = 100000


@register_estimator
class BSGDClassifier(KernelClassifierMixin, BaseEstimator):
    """Kernel SVM on a budget: Pegasos SGD on the primal, at most ``budget`` support vectors.

    Objective (1) of arXiv:1806.10179: lambda/2 ||w||^2 + 1/n sum_i hinge(y_i (w'phi(x_i) + b)),
    learning rate 1 / (lambda t); ``lambda_`` given directly or ``lambda = 1 / (n C)`` (n = number
    of training samples of the binary problem; default C = 1). Every margin violator becomes a
    support vector; beyond ``budget`` vectors the budget is maintained by

    * ``maintenance='removal'``: drop the smallest |alpha|;
    * ``'projection'``: drop it and project it onto the others (O(B^2) per step);
    * ``'merge'`` (rbf only): merge ``n_merge`` = M vectors into one: the smallest |alpha| and its
      M-1 best partners by pairwise weight degradation, by a cascade of binary merges with h from
      golden-section search (``merge_solver='golden'``, Algorithm 1 MM-BSGD) or from the
      precomputed table (``'lookup'``, arXiv:1806.10180), or all at once by gradient ascent
      (``'gradient'``, Algorithm 2 MM-GD). M = 2 is the classic BSGD merge. ``merge_guard`` = tau
      > 0 (beyond the paper; 0 = off): a cascade stops before a partner whose degradation
      against the merged point exceeds tau times the first merge's (fewer than M merged then).
      ``cascade='greedy'`` (beyond the paper; 'ranked' = the paper's Algorithm 1): after the
      first partner, each next one is the candidate (of the 10(M-1) best ranked) whose merge with
      the current merged point degrades least (binary problems; golden or lookup merges).
      The default 'auto' is 'greedy' for binary, one-vs-rest and one-vs-one problems and
      'ranked' for the shared budget (``multiclass='crammer_singer'``, which has no greedy
      cascade); M = 2 is the same either way. Why multi-merge loses accuracy at small budgets:
      every unmerged vector carries the same, smallest weight 1/(lambda t), so an M-merge
      absorbs one new violator and M-2 heavier neighbours while the other new violators stay
      unmerged; ``fit_stats_['unmerged_fraction']`` and ``['merge_mass_kept']`` measure it
      (``benchmarks/budget/bench_bsgd_margin.py``).

    The unregularised bias (``fit_intercept``) is fixed during a pass and then set to its exact
    minimiser of (1) with w fixed (on at most 20,000 rows of the pass). ``refit=True`` finally
    re-solves the coefficients and bias with the support vectors held fixed: objective (1)
    restricted to w in span{phi(sv_j)} with the squared hinge (L2-SVM, exact primal Newton:
    :func:`~leansvm.budget.bsgd_refit.refit_l2svm`), a linear SVM on the features K(x, SV) K_SV^(-1/2)
    (at most 100,000 rows), same test-time cost. With ``multiclass='crammer_singer'`` the refit
    solves one such L2-SVM per class (one-vs-rest, with a bias per class) on the shared vectors.
    :meth:`refit_coefficients` applies the same refit to an already fitted model.

    Multi-class: ``multiclass='ovr'`` (one problem per class) or ``'ovo'`` (one per pair, LIBSVM
    files); ``budget`` applies to each binary problem, so the pooled expansion holds at most
    ``budget * n_problems`` vectors (``budget`` for a binary problem). ``'crammer_singer'``: one
    shared budget of ``budget`` vectors, each with a coefficient per class, trained on the
    Crammer-Singer multi-class hinge loss as in Wang et al. (Sec. 6; no bias, maintenance
    'merge' with merge_solver='golden' or 'removal'; see
    :mod:`leansvm.budget.bsgd_crammer_singer`); prediction is argmax over the per-class
    outputs (``multiclass_ == 'ovr'``).

    Streams: ``partial_fit(X, y, classes=None, n_samples_total=None)`` continues SGD (t, lambda,
    the budget vectors and coefficients are kept in ``states_``, one
    :class:`~leansvm.budget.bsgd.BudgetState` per binary problem). ``fit`` with ``epochs=1`` is
    exactly one ``partial_fit`` call on a fresh estimator with the same ``random_state``.
    Models built elsewhere (e.g. the union of models trained on separate chunks) come in
    through :meth:`from_states` and shrink to a budget with :meth:`reduce_to_budget`.

    Fitted attributes as :class:`leansvm.SVC`: ``classes_``, ``expansion_``,
    ``support_vectors_``, ``dual_coef_``, ``intercept_``, ``n_support_`` (vectors per class;
    merged vectors are assigned to the class their coefficient's sign points to), ``support_``
    (empty: merged vectors are not training points), ``multiclass_``; plus ``states_``,
    ``fit_stats_`` (time in budget maintenance vs the rest, number of maintenance steps and
    binary merges, weight degradation per maintenance step, the coefficient mass merges keep,
    the share of vectors never merged) and ``t_`` (SGD steps per problem).

    Parameters
    ----------
    budget : int, default=500
        The most support vectors kept (per binary problem for one-vs-rest and one-vs-one).
    C : float, default=1.0
        Penalty of the errors (times the sample weight).
    lambda_ : float, optional
        The regularisation lambda of the primal; default 1 / (n C).
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
    multiclass : {'ovr', 'ovo', 'crammer_singer'}, default='ovr'
        One problem per class, per pair, or one shared budget (BSGD only).
    refit : bool, default=False
        Re-solve the coefficients and bias with the support vectors fixed (a convex problem).
    merge_guard : float, default=0.0
        tau > 0: a multi-merge cascade stops before a partner degrading more than tau times the first merge (0: off).
    cascade : {'auto', 'greedy', 'ranked'}, default='auto'
        How multi-merge picks partners after the first: greedily against the merged point, or by the paper's ranking.
    random_state : int, RandomState or None, default=None
        Seed of the fit's random choices (sample order, subsets): reproducible fits.
    verbose : bool or int, default=False
        A progress bar (:mod:`leansvm.progress`).
    decision_function_shape : {'ovr', 'ovo'}, default='ovr'
        Shape of ``decision_function`` for more than two classes, as scikit-learn.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The model's vectors (merged points are not training rows).
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
    states_ : list
        The SGD state of each binary problem (vectors, coefficients, bias), as the budget left it.
    fit_stats_ : dict
        Counts of the fit: budget maintenance steps, merges, seconds spent maintaining.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from leansvm import BSGDClassifier
    >>> X, y = make_moons(400, noise=0.2, random_state=0)
    >>> model = BSGDClassifier(budget=30, C=10, gamma=2.0, refit=True, random_state=0).fit(X, y)
    >>> model.expansion_.n_support <= 30 and bool(model.score(X, y) > 0.9)
    True
    """

    def __init__(self, budget=500, C=None, lambda_=None, kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, maintenance="merge", n_merge=2, merge_solver="golden", epochs=1,
                 fit_intercept=True, multiclass="ovr", refit=False, merge_guard=0.0, cascade="auto",
                 random_state=None, verbose=False, decision_function_shape="ovr"):
        self.budget = budget
        self.C = C
        self.lambda_ = lambda_
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.maintenance = maintenance
        self.n_merge = n_merge
        self.merge_solver = merge_solver
        self.epochs = epochs
        self.fit_intercept = fit_intercept
        self.multiclass = multiclass
        self.refit = refit
        self.merge_guard = merge_guard
        self.cascade = cascade
        self.random_state = random_state
        self.verbose = verbose
        self.decision_function_shape = decision_function_shape

    def __sklearn_is_fitted__(self):
        """Fitted means an expansion exists (the parameter ``lambda_`` ends with '_' too)."""
        return hasattr(self, "expansion_")

    # -- parameters -------------------------------------------------------------------------
    def _check_params(self):
        bsgd.check_regularisation(self.C, self.lambda_)
        if not (np.isscalar(self.merge_guard) and np.isfinite(self.merge_guard) and self.merge_guard >= 0):
            raise ValueError(f"merge_guard must be a finite number >= 0, got {self.merge_guard!r}")
        if int(self.epochs) != self.epochs or self.epochs < 1:
            raise ValueError(f"epochs must be a positive integer, got {self.epochs!r}")
        if self.multiclass not in ("ovr", "ovo", "crammer_singer"):
            raise ValueError("multiclass must be 'ovr', 'ovo' or 'crammer_singer', "
                             f"got {self.multiclass!r}")
        if self.decision_function_shape not in ("ovr", "ovo"):
            raise ValueError("decision_function_shape must be 'ovr' or 'ovo', "
                             f"got {self.decision_function_shape!r}")

    def _config(self, kernel: Kernel) -> bsgd.BudgetConfig:
        cascade = self.cascade
        if isinstance(cascade, str) and cascade == "auto":
            cascade = "ranked" if self._shared_budget() else "greedy"
        return bsgd.BudgetConfig(budget=self.budget, maintenance=self.maintenance, n_merge=self.n_merge,
                                 merge_solver=self.merge_solver, kernel=kernel.name, gamma=kernel.gamma,
                                 coef0=kernel.coef0, degree=kernel.degree, merge_guard=self.merge_guard,
                                 cascade=cascade)

    def _lambda(self, n_rows: int) -> float:
        if self.lambda_ is not None:
            return float(self.lambda_)
        C = 1.0 if self.C is None else float(self.C)
        return 1.0 / (max(n_rows, 1) * C)

    # -- binary problems --------------------------------------------------------------------
    def _shared_budget(self) -> bool:
        """One Crammer-Singer problem for all classes (one state with a coefficient per class)."""
        return self.multiclass == "crammer_singer" and len(self.classes_) > 2

    def _problems(self, n_classes: int):
        """(positive classes, negative classes) per output column, in the expansion's order."""
        if n_classes == 2:
            return [((1,), (0,))]   # f > 0 means classes_[1], as scikit-learn
        if self._shared_budget():
            return [(tuple(range(n_classes)), ())]    # one problem, one output per class
        if self.multiclass_ == "ovr":
            return [((c,), tuple(k for k in range(n_classes) if k != c)) for c in range(n_classes)]
        return [((i,), (j,)) for i, j in ovo_pairs(n_classes)]

    def _rows_and_labels(self, y_enc, problem):
        pos, neg = problem
        is_pos = np.isin(y_enc, pos)
        rows = np.flatnonzero(is_pos | np.isin(y_enc, neg))
        return rows, np.where(is_pos[rows], 1.0, -1.0)

    # -- fitting ------------------------------------------------------------------------------
    def fit(self, X, y):
        """Train anew: ``epochs`` passes over (X, y), each in a fresh random order."""
        self._check_params()
        for attr in ("states_", "classes_", "_rng"):
            if hasattr(self, attr):
                delattr(self, attr)
        X, classes, y_enc, _ = validate_training_data(self, X, y)
        start = time.perf_counter()
        self._start(X, classes, X.shape[0])
        # progress: one step per binary problem and epoch; a bar on a terminal or when verbose
        with Progress(int(self.epochs) * len(self._problems(len(classes))), "BSGD", "problem passes",
                      True if self.verbose else None) as bar:
            for _ in range(int(self.epochs)):
                self._pass(X, y_enc, on_problem=bar.update)
        self._finish(X, y_enc, start)
        return self

    def partial_fit(self, X, y, classes=None, n_samples_total=None):
        """One SGD pass over a chunk, continuing from the current state.

        ``classes``: all labels of the stream (needed on the first call unless this chunk holds
        every class). ``n_samples_total``: the stream's length N, so that lambda = 1 / (N C) as in
        ``fit`` (default: the first chunk's length). The bias is re-fitted on each chunk.
        """
        first = not hasattr(self, "states_")
        if first:
            self._check_params()
            X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, order="C", reset=True)
        else:
            X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, order="C", reset=False)
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"y must be 1-D with {X.shape[0]} labels, got shape {y.shape}")
        check_classification_targets(y)
        if first:
            cls = np.unique(y) if classes is None else np.unique(np.asarray(classes))
            if cls.size < 2:
                raise ValueError(f"BSGDClassifier needs at least two classes; got {cls.tolist()!r} "
                                 "(pass classes= on the first partial_fit call)")
            if n_samples_total is not None and (int(n_samples_total) != n_samples_total
                                                or n_samples_total < 1):
                raise ValueError(f"n_samples_total must be a positive integer, got {n_samples_total!r}")
            self._start(X, cls, int(n_samples_total) if n_samples_total else X.shape[0], chunk_rows=X.shape[0])
        elif classes is not None and not np.array_equal(np.unique(np.asarray(classes)), self.classes_):
            raise ValueError(f"classes={classes!r} differ from the first call's {self.classes_.tolist()!r}")
        unknown = ~np.isin(y, self.classes_)
        if np.any(unknown):
            raise ValueError(f"labels {np.unique(y[unknown]).tolist()!r} are not in classes "
                             f"{self.classes_.tolist()!r}")
        y_enc = np.searchsorted(self.classes_, y)
        if sp.issparse(X):
            X.sort_indices()
        start = time.perf_counter()
        self._pass(X, y_enc)
        self._finish(X, y_enc, start, refit=False)
        return self

    def _start(self, X, classes, n_total, chunk_rows=None):
        """Fresh states: kernel resolved on X, lambda per problem from its share of n_total rows."""
        self.classes_ = classes
        self.multiclass_ = _output_strategy(len(classes), self.multiclass)
        self._kernel = Kernel.from_params(self.kernel, self.gamma, self.degree, self.coef0, X)
        self._gamma = self._kernel.gamma
        self._cfg = self._config(self._kernel)
        if self._shared_budget():
            bsgd.check_shared_multiclass(self._cfg)
        self._rng = check_random_state(self.random_state)
        self.states_ = []
        self._fit_time = 0.0
        # partial_fit: a problem's size is its row count in the first chunk scaled to n_total
        self._share = None if chunk_rows is None else n_total / chunk_rows

    def _pass(self, X, y_enc, on_problem=None):
        problems = self._problems(len(self.classes_))
        if not self.states_:
            self.states_ = [None] * len(problems)
        shared = self._shared_budget()
        for p, problem in enumerate(problems):
            rows, y_pm = self._rows_and_labels(y_enc, problem)
            if rows.size == 0:
                continue
            state = self.states_[p]
            if state is None:
                share = rows.size * (self._share if self._share is not None else 1.0)
                state = bsgd.BudgetState.empty(X.shape[1], self._lambda(int(round(share))),
                                               len(self.classes_) if shared else None)
            Xp = X[rows] if rows.size < X.shape[0] else X
            order = self._rng.permutation(rows.size)
            # Crammer-Singer steps take the class index; binary problems +1/-1
            state = _solver(state).sgd_pass(state, Xp, y_enc[rows] if shared else y_pm, order, self._cfg)
            if self.fit_intercept and not shared:
                state.bias = self._exact_bias(state, Xp, y_pm)
            self.states_[p] = state
            if on_problem is not None:
                on_problem()
            if self.verbose:
                print(f"[BSGD] problem {p}: t={state.t} n_sv={state.n_support} "
                      f"maintenance={int(state.stats[bsgd.ST_MAINT])} bias={state.bias:.4g}")

    def _exact_bias(self, state, Xp, y_pm):
        """b minimising (1) with w fixed, on at most BIAS_SAMPLE rows of this pass."""
        n = Xp.shape[0]
        rows = np.arange(n) if n <= BIAS_SAMPLE else np.sort(self._rng.choice(n, BIAS_SAMPLE, replace=False))
        g = self._margins(state, Xp[rows])
        return bsgd_refit.optimal_bias(g, y_pm[rows])

    def _margins(self, state, X):
        return bsgd.margins(state, self._kernel, X)

    def _finish(self, X, y_enc, start, refit=None):
        refit = self.refit if refit is None else refit
        if refit:
            self._refit(X, y_enc)
        self._fit_time += time.perf_counter() - start
        self._build_expansion()

    # -- the optional convex refit ------------------------------------------------------------
    def refit_coefficients(self, X, y):
        """Re-solve coefficients and bias of a fitted model with its support vectors held fixed
        (what ``refit=True`` does at the end of ``fit``; see the class docstring), on (X, y)."""
        check_is_fitted(self, "states_")
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, order="C", reset=False)
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"y must be 1-D with {X.shape[0]} labels, got shape {y.shape}")
        unknown = ~np.isin(y, self.classes_)
        if np.any(unknown):
            raise ValueError(f"labels {np.unique(y[unknown]).tolist()!r} are not in classes "
                             f"{self.classes_.tolist()!r}")
        start = time.perf_counter()
        self._refit(X, np.searchsorted(self.classes_, y))
        self._fit_time += time.perf_counter() - start
        self._build_expansion()
        return self

    def _refit(self, X, y_enc):
        """Coefficients and bias re-solved with the support vectors fixed (see class docstring)."""
        shared = self._shared_budget()
        for p, problem in enumerate(self._problems(len(self.classes_))):
            state = self.states_[p]
            if state is None or state.n_support == 0:
                continue
            rows, y_pm = self._rows_and_labels(y_enc, problem)
            if rows.size > REFIT_SAMPLE:
                keep = np.sort(self._rng.choice(rows.size, REFIT_SAMPLE, replace=False))
                rows, y_pm = rows[keep], y_pm[keep]
            inv_sqrt, F = self._refit_features(state.support_vectors, X[rows])
            # exact primal Newton on the squared hinge (Chapelle 2007), (B+1)-dim systems:
            # 1/2 ||v||^2 + C sum max(0, 1 - y (v'F + b))^2 with C = 1/(lambda n), as (1) with L2 loss
            C = 1.0 / (state.lam * rows.size)
            if not shared:
                v, b = self._newton(F, y_pm, C)
                state.alpha = inv_sqrt @ v
                state.bias = b
                continue
            # Crammer-Singer: one-vs-rest L2-SVMs on the shared vectors, one Gram matrix F'F for all
            G = F.T @ F
            V, b = np.empty((F.shape[1], len(self.classes_))), np.zeros(len(self.classes_))
            for k in range(len(self.classes_)):
                V[:, k], b[k] = self._newton(F, np.where(y_enc[rows] == k, 1.0, -1.0), C, gram=G)
            state.alpha = inv_sqrt @ V
            state.bias = b

    def _refit_features(self, SV, X):
        return bsgd_refit.refit_features(self._kernel, SV, X)

    def _newton(self, F, y_pm, C, gram=None):
        v, b, _, converged = bsgd_refit.refit_l2svm(F, y_pm, C, fit_intercept=self.fit_intercept, gram=gram)
        if not converged:
            warnings.warn("BSGD refit: Newton did not converge in 50 steps", ConvergenceWarning)
        return v, (b if self.fit_intercept else 0.0)

    # -- budget reduction and construction from given vectors ------------------------------------
    def reduce_to_budget(self, budget=None):
        """Apply budget maintenance (this estimator's method) to every problem until at most
        ``budget`` (default ``self.budget``) vectors remain in each; then rebuild ``expansion_``."""
        check_is_fitted(self, "states_")
        cfg = self._config(self._kernel)
        self.states_ = [None if s is None else _solver(s).reduce_to_budget(s, cfg, budget) for s in self.states_]
        self._build_expansion()
        return self

    @classmethod
    def from_states(cls, states, classes, n_features_in=None, **params):
        """A fitted estimator from given budget states (one per binary problem, in the order of
        :meth:`_problems`: one for binary, one per class for 'ovr', one per LIBSVM pair for 'ovo').

        Example (Dask-style union of chunk models, then reduction to the budget)::

            union = BudgetState(np.vstack([s.support_vectors for s in parts]),
                                np.concatenate([s.alpha for s in parts]) / len(parts),
                                bias=np.mean([s.bias for s in parts]),
                                t=sum(s.t for s in parts), lam=parts[0].lam)
            model = BSGDClassifier.from_states([union], classes, budget=B, gamma=g).reduce_to_budget()

        ``gamma`` must be numeric here (there is no training data to resolve 'scale').
        """
        est = cls(**params)
        est._check_params()
        classes = np.asarray(classes)
        if np.unique(classes).size != classes.size or classes.size < 2:
            raise ValueError(f"classes must hold at least two distinct labels, got {classes.tolist()!r}")
        est.classes_ = np.sort(classes)
        est.multiclass_ = _output_strategy(classes.size, est.multiclass)
        if isinstance(est.gamma, str):
            raise ValueError("from_states needs a numeric gamma")
        est._kernel = Kernel.from_params(est.kernel, float(est.gamma), est.degree, est.coef0)
        est._gamma = est._kernel.gamma
        est._cfg = est._config(est._kernel)
        est._rng = check_random_state(est.random_state)
        n_problems = len(est._problems(classes.size))
        states = list(states)
        if len(states) != n_problems:
            raise ValueError(f"{classes.size} classes with multiclass={est.multiclass_!r} need "
                             f"{n_problems} states, got {len(states)}")
        d = {s.support_vectors.shape[1] for s in states if s is not None}
        if len(d) != 1:
            raise ValueError(f"states disagree on the number of features: {sorted(d)}")
        est.states_ = states
        est.n_features_in_ = int(n_features_in or d.pop())
        est._fit_time = 0.0
        est._build_expansion()
        return est

    # -- the pooled expansion -----------------------------------------------------------------
    def _build_expansion(self):
        n_classes = len(self.classes_)
        problems = self._problems(n_classes)
        d = self.n_features_in_
        blocks, owners, columns = [], [], []
        for p, state in enumerate(self.states_):
            if state is None or state.n_support == 0:
                continue
            if state.shared_multiclass:     # Crammer-Singer: all outputs at once
                SV, coef = state.support_vectors, state.alpha
                owner = np.argmax(coef, axis=1)
                order = np.argsort(owner, kind="stable")
                intercept = np.broadcast_to(np.asarray(state.bias, dtype=np.float64), (n_classes,)).copy()
                self.expansion_ = KernelExpansion(SV[order], coef[order], intercept, self._kernel)
                self.n_support_ = np.bincount(owner, minlength=n_classes).astype(np.int32)
                break
            pos, neg = problems[p]
            owner = np.where(state.alpha > 0, pos[0], neg[0] if len(neg) == 1 else pos[0])
            blocks.append((state.support_vectors, state.alpha))
            owners.append(owner)
            columns.append(np.full(state.n_support, p))
        else:
            self._pool_expansion(blocks, owners, columns, problems, d, n_classes)
        self.support_ = np.empty(0, dtype=np.int32)
        self.t_ = np.array([0 if s is None else s.t for s in self.states_])
        self.fit_status_ = 0
        self._collect_stats()

    def _pool_expansion(self, blocks, owners, columns, problems, d, n_classes):
        """One expansion from the binary problems' vectors (grouped by class, LIBSVM's layout)."""
        if blocks:
            SV = np.vstack([b[0] for b in blocks])
            alpha = np.concatenate([b[1] for b in blocks])
            owner = np.concatenate(owners)
            column = np.concatenate(columns)
        else:
            SV, alpha = np.zeros((0, d)), np.zeros(0)
            owner = column = np.zeros(0, dtype=np.intp)
        order = np.lexsort((column, owner))          # grouped by class (LIBSVM layout)
        coef = np.zeros((alpha.size, len(problems)))
        coef[np.arange(alpha.size), column[order]] = alpha[order]
        intercept = np.array([0.0 if s is None else s.bias for s in self.states_])
        self.expansion_ = KernelExpansion(SV[order], coef, intercept, self._kernel)
        self.n_support_ = np.bincount(owner, minlength=n_classes).astype(np.int32)

    def _collect_stats(self):
        stats = sum((s.stats for s in self.states_ if s is not None), np.zeros(bsgd.N_STATS))
        degs = [d for s in self.states_ if s is not None for d in s.degradations]
        degs = np.concatenate(degs) if degs else np.zeros(0)
        total = self._fit_time
        maint = float(stats[bsgd.ST_MAINT_TIME])
        n_vectors = sum(s.n_support for s in self.states_ if s is not None and s.alpha.ndim == 1)
        self.fit_stats_ = {
            "fit_time_s": total,
            "maintenance_time_s": maint,
            "other_time_s": max(total - maint, 0.0),
            "maintenance_fraction": maint / total if total > 0 else float("nan"),
            "n_steps": int(stats[bsgd.ST_STEPS]),
            "n_added": int(stats[bsgd.ST_ADDED]),
            "n_maintenance": int(stats[bsgd.ST_MAINT]),
            "n_binary_merges": int(stats[bsgd.ST_MERGES]),
            "n_removals": int(stats[bsgd.ST_REMOVED]),
            "n_gradient_iterations": int(stats[bsgd.ST_GD_ITER]),
            # multi-merge diagnostics (binary problems): the share of coefficient mass a merge
            # keeps, sum |alpha_z| / sum_m |alpha_m|, and the share of budget slots holding a
            # vector never merged (weight 1 / (lambda t), the latest violators)
            "merge_mass_kept": (float(stats[bsgd.ST_MASS_OUT] / stats[bsgd.ST_MASS_IN])
                                if stats[bsgd.ST_MASS_IN] > 0 else float("nan")),
            "unmerged_fraction": (float(stats[bsgd.ST_UNMERGED]) / n_vectors if n_vectors
                                  else float("nan")),
            "degradation_total": float(degs.sum()),
            "degradation_mean": float(degs.mean()) if degs.size else 0.0,
            "degradations": degs,
        }


def _solver(state: bsgd.BudgetState):
    """The module whose ``sgd_pass`` / ``reduce_to_budget`` fit ``state``: one shared multi-class
    budget (Crammer-Singer) or a binary problem."""
    return bsgd_crammer_singer if state.shared_multiclass else bsgd


def _output_strategy(n_classes: int, multiclass: str) -> str:
    """How outputs become labels: 'ovo' for binary; Crammer-Singer has one output per class ('ovr')."""
    if n_classes == 2:
        return "ovo"
    return "ovr" if multiclass == "crammer_singer" else multiclass
