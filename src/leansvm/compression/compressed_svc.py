"""Compressed SVMs: the same predictions from a few percent of the support vectors.

``compress(model, n_sv=...)`` takes any fitted leansvm classifier (anything
with ``expansion_``, ``classes_`` and ``multiclass_``: SVC, budget trainers,
models read by ``io.load_libsvm_model``; also a fitted ``sklearn.svm.SVC``)
and returns a fitted :class:`CompressedSVC` whose expansion has at most
``n_sv`` distinct vectors, shared by all outputs. The method (Xu et al.,
arXiv:1501.06478, after Burges & Schölkopf 1997) is in
:mod:`leansvm.compression.cvm`:

1. LARS-SVM selection of ``n_sv`` of the full model's support vectors
   (eqs. 5-9; multi-class: simultaneous matching pursuit on all outputs);
2. least-squares coefficients and intercepts matching the full model's
   outputs at the fitting points (``method='lars'`` stops here);
3. gradient support vectors (eq. 10): positions, coefficients and
   intercepts optimised jointly by L-BFGS, then a closed-form coefficient
   and bias refit (``method='cvm'``, the default).

Fitting points are the full model's support vectors, or ``X`` when given
(then ``X`` is also the validation set of ``max_accuracy_drop``).

Options beyond the paper (measured by ``benchmarks/compression/bench_compression.py``):

* ``loss='squared'`` is eq. 10; ``loss='margin'`` (the default) matches the
  full model's outputs only up to its margin: where |f*(x)| >= 1 it asks for
  the same side with margin 1 (squared hinge), inside the margin for the same
  value. Vectors are not spent on reproducing large outputs far from the
  boundary, which do not change a label.
* One-vs-one, k > 2: the output of pair (i, j) is fitted only at points the
  full model assigns to i or j (those pairs decide that point's vote).
* ``learn_gamma`` (default True, rbf only): log(gamma) is optimised with
  the vectors; fewer vectors want wider kernels (letter 2 %: gamma 0.19 ->
  0.11, test accuracy 1.97 -> 1.25 points below the full model at 400
  iterations).
* ``max_iter=None`` scales the iterations to the problem (100-3000: about
  1e11 multiply-adds of gradient evaluations; letter 2 %: 285 iterations at
  3e10, 1.32 points below the full model, 952 at 1e11, 0.58 below).
* ``validation_fraction`` (default 0: off) of the fitting points is held
  out; the gradient step then returns the last iterate whose agreement with
  the full model's labels there is within one standard error of the best
  (the LARS-SVM start included) and stops early. Off by default: the held-out
  points are not fitted, and at small sizes the model underfits rather than
  overfits (satimage 2 %: 1.17-1.71 points below the full model over four
  hold-out seeds, 1.32 without; letter 2 %: 1.20 vs 0.58; satimage 10 %:
  0.47-1.09 vs 0.31). It guards large sizes of small data (page-blocks0 20 %:
  0.55 vs 1.19 below the full model).
* ``layout``: one-vs-one, k > 2. ``'libsvm'``: each vector keeps the class of
  the support vector it started from and carries only that class's k-1 pairs
  (LIBSVM's layout: n kernel values + n (k-1) products per test point).
  ``'shared'``: every vector carries every pair (n kernel values +
  n k(k-1)/2 products): the size counts each vector once, shared by all pairs. ``'auto'`` (the
  default): shared below 4 vectors per pair (then pairs must share vectors:
  letter 2 % has 160 vectors for 325 pairs, 3.50 points below the full model
  vs 21.4 in LIBSVM's layout), LIBSVM's layout from 4 on (each class has its
  own vectors, evaluation is cheaper, the file is 1:1; satimage 10 %, 10
  vectors per pair: 0.16-0.47 points below the full model vs 0.54-0.93 shared).

LIBSVM files. A compressed vector has no training label, but LIBSVM groups
support vectors by class. Binary: vector j is filed under the class its
coefficient favours (``classes_[1]`` when coef > 0, LIBSVM sums over all
vectors anyway). One-vs-one with ``layout='libsvm'``: the file holds exactly
the model's vectors. With ``layout='shared'``, ``io.save_libsvm_model`` writes
:meth:`CompressedSVC.libsvm_equivalent`: each vector once per class of a
cover of its pairs (k-1 copies), the same predictions in LIBSVM, with a
``UserWarning``; ``io.save_model`` keeps the compact form. One-vs-rest models
(k > 2) are saved in the native format only.

Storage: optimised vectors are dense in general; the expansion keeps them
dense when at least a quarter of their entries are non-zero (then X Z' is a
sparse-times-dense product for sparse test data, the cheap form), CSR
otherwise (LARS-only models of sparse data keep their sparse vectors).
"""

from __future__ import annotations

import copy
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from leansvm.core.classifier import KernelClassifierMixin
from leansvm.core.expansion import KernelExpansion
from leansvm.core.expansion import DENSE_FRACTION
from leansvm.core.registry import register_estimator
from leansvm.core.multiclass import ovo_pairs, predict_index
from leansvm.progress import Progress
from leansvm.compression import cvm
from leansvm.compression import rbf_objective
from leansvm.compression.full_model import _FullModel, _selection, _validate_points
from leansvm.core.threads import one_blas_thread
from leansvm.core.validation import allowed_share

METHODS = ("cvm", "lars", "random")
LAYOUTS = ("auto", "shared", "libsvm")
#: sizes tried by ``max_accuracy_drop`` grow by this factor
SIZE_GROWTH = 1.25
#: layout='auto' (one-vs-one, k > 2): shared vectors below this many vectors per pair, LIBSVM's layout from it
SHARED_VECTORS_PER_PAIR = 4
#: share of the fitting points held out to choose the gradient step's iterate (``validation_fraction``;
#: 0: off, every fitting point is fitted, see the module doc)
VALIDATION_FRACTION = 0.0
#: no hold-out when either part would have fewer points than this
MIN_VALIDATION_POINTS = 50
#: ``max_iter=None``: about this many multiply-adds of gradient evaluations, within ITERATION_RANGE
ITERATION_WORK = 1e11
#: ... counted this many times cheaper where the RBF objective runs in float32 row blocks
#: (compression/rbf_objective.py: one iteration at synth-50k's shape 0.78 -> 0.061 s, at 3,000 x 40 4.5x).
#: Row blocks in float64 (coefficients too large for float32, ``cvm.block_dtype_for``) take 1.4-2.2x
#: the float32 time (benchmarks/compression/bench_compression_speed.py) and count the same: the
#: iterations, and so the fit, do not depend on the coefficients' size, at up to twice the time
BLOCKED_WORK_FACTOR = 8.0
ITERATION_RANGE = (100, 3000)
#: held-out checks every this many iterations; stop after PATIENCE_SHARE of max_iter (at least
#: MIN_PATIENCE) iterations without a better held-out agreement
CHECK_EVERY = 10
PATIENCE_SHARE = 0.5
MIN_PATIENCE = 100


# -- compression ---------------------------------------------------------------------
#: kept where none of n_sv, ratio, max_accuracy_drop is given: on 2,000 noisy moons and digits (SVC(), 75/25)
#: 10 % tests as the full SVC; max_accuracy_drop=0.005 on the training rows lost 1.6 and 0.45 points
DEFAULT_RATIO = 0.1


def _check_size(n_sv, ratio, max_accuracy_drop, X, m):
    if n_sv is None and ratio is None and max_accuracy_drop is None:
        ratio = DEFAULT_RATIO
    if sum(v is not None for v in (n_sv, ratio, max_accuracy_drop)) != 1:
        raise ValueError("give at most one of n_sv, ratio and max_accuracy_drop")
    if n_sv is not None:
        if isinstance(n_sv, bool) or int(n_sv) != n_sv or n_sv < 1:
            raise ValueError(f"n_sv must be a positive integer, got {n_sv!r}")
        return int(n_sv)
    if ratio is not None:
        if not (np.isfinite(ratio) and 0 < ratio <= 1):
            raise ValueError(f"ratio must be in (0, 1], got {ratio!r}")
        return max(1, int(round(ratio * m)))
    allowed_share("max_accuracy_drop", max_accuracy_drop)
    if X is None:
        raise ValueError("max_accuracy_drop needs validation data X, y")
    return None


def _iteration_range(bounds):
    """(lo, hi) of the automatic iteration count: ``bounds``, or ITERATION_RANGE for None."""
    if bounds is None:
        return ITERATION_RANGE
    try:
        lo, hi = (int(b) for b in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"iteration_range must be None or (lo, hi) integers, got {bounds!r}") from None
    if not 1 <= lo <= hi:
        raise ValueError(f"iteration_range must satisfy 1 <= lo <= hi, got {bounds!r}")
    return lo, hi


def _resolve_layout(layout):
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    return layout


def _check_method(method):
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")


class _Compressor:
    """Everything that does not depend on the size: fitting points, targets, classes."""

    def __init__(self, full: _FullModel, X, y, method, max_iter, max_fit_points, eig_max, random_state,
                 layout="auto", loss="margin", own_pairs=True, validation_fraction=VALIDATION_FRACTION,
                 learn_gamma=True, iteration_range=ITERATION_RANGE):
        self.full = full
        self.method = method
        self.max_iter = None if max_iter is None else int(max_iter)
        self.iteration_range = iteration_range
        self.eig_max = eig_max
        self.loss = loss
        self.learn_gamma = learn_gamma and full.expansion.kernel.name == "rbf"
        self.layout = _resolve_layout(layout)
        rng = check_random_state(random_state)
        self.rng = rng
        exp = full.expansion
        self.pool_classes = full.pool_classes()
        if X is None:
            Xf = exp.support_vectors
        else:
            Xf = X
        if max_fit_points is not None and Xf.shape[0] > max_fit_points:
            Xf = Xf[np.sort(rng.choice(Xf.shape[0], int(max_fit_points), replace=False))]
        if sp.issparse(Xf):
            # canonical (sorted, no duplicates) on a copy: the float32 objective then sees the same
            # numbers, summed in the same order, whatever order the caller's CSR keeps its entries in
            self.X_fit = sp.csr_matrix(Xf, dtype=np.float64, copy=True)
            self.X_fit.sum_duplicates()
        else:
            self.X_fit = np.ascontiguousarray(Xf, dtype=np.float64)
        self.F = exp.decision_function(self.X_fit)
        self.X_val = self.F_val = None
        if method == "cvm":
            self._hold_out(validation_fraction, rng)
        self.group_columns = cvm.ovo_pair_columns(full.n_classes) if full.class_restricted else None
        self.own_pairs = own_pairs and full.n_classes > 2 and full.strategy == "ovo"
        self.point_blocks = self._point_blocks(self.F)
        N = self.X_fit.shape[0]
        d_eff = self.X_fit.nnz / max(N, 1) if sp.issparse(self.X_fit) else self.X_fit.shape[1]
        p_eff = (exp.n_outputs if self.point_blocks is None else
                 sum(r.size * c.size for r, c in self.point_blocks) / max(N, 1))
        #: multiply-adds of one gradient evaluation per compressed vector: N (d' + p')
        self.work_per_vector = N * (d_eff + p_eff)

    def _hold_out(self, fraction, rng):
        """Move a random ``fraction`` of the fitting points to (X_val, F_val), when both parts stay large enough."""
        N = self.X_fit.shape[0]
        n_val = int(round(fraction * N))
        if fraction <= 0 or min(n_val, N - n_val) < MIN_VALIDATION_POINTS:
            return
        perm = rng.permutation(N)
        val, fit = np.sort(perm[:n_val]), np.sort(perm[n_val:])
        self.X_val, self.F_val = self.X_fit[val], self.F[val]
        self.X_fit, self.F = self.X_fit[fit], self.F[fit]

    def _point_blocks(self, F):
        if not self.own_pairs:
            return None
        return cvm.own_pair_blocks(predict_index(F, self.full.n_classes, "ovo"), self.full.n_classes)

    def restricted(self, n_sv: int) -> bool:
        """One-vs-one, k > 2: does each of n_sv vectors serve only its class's pairs (LIBSVM's layout)?

        'auto': from SHARED_VECTORS_PER_PAIR vectors per pair on (see the module doc).
        """
        if not self.full.class_restricted or self.layout == "shared":
            return False
        n_pairs = self.full.n_classes * (self.full.n_classes - 1) // 2
        return self.layout == "libsvm" or n_sv >= SHARED_VECTORS_PER_PAIR * n_pairs

    def iterations(self, n_sv: int) -> int:
        """``max_iter``, or with None about ITERATION_WORK multiply-adds of evaluations, within
        ``iteration_range`` (default ITERATION_RANGE)."""
        if self.max_iter is not None:
            return self.max_iter
        lo, hi = self.iteration_range
        blocked = rbf_objective.applies(self.full.expansion.kernel, self.X_fit)   # float32 row blocks
        work = self.work_per_vector * n_sv / (BLOCKED_WORK_FACTOR if blocked else 1.0)
        return int(np.clip(ITERATION_WORK / max(work, 1.0), lo, hi))

    def _monitor(self, blocks, n_vectors):
        """Agreement of an iterate with the full model's labels on the held-out points."""
        full = self.full
        val = cvm.GradientProblem(full.expansion.kernel, self.X_val, self.F_val, blocks, n_vectors, loss=self.loss,
                                  point_blocks=self._point_blocks(self.F_val))
        labels = predict_index(self.F_val, full.n_classes, full.strategy)

        def score(Z, B, c, kernel):
            pred = cvm.blocked_apply(val.kernel_matrix(Z, kernel), B, blocks, val.p) + c
            return float(np.mean(predict_index(pred, full.n_classes, full.strategy) == labels))
        return score

    def compress(self, n_sv: int, callback=None) -> tuple[KernelExpansion, np.ndarray, dict]:
        """(expansion, class index per vector, statistics) with at most n_sv vectors."""
        exp, full = self.full.expansion, self.full
        stats = {"n_sv_requested": n_sv}
        if n_sv >= exp.n_support:
            stats.update(selection="none (n_sv >= full size)", n_iter=0)
            return exp, self.pool_classes.copy(), stats
        t0 = time.perf_counter()
        restricted = self.restricted(n_sv)
        sel, how = _selection(full, n_sv, self.pool_classes if restricted else None, self.group_columns,
                              self.eig_max, self.method, self.rng)
        stats.update(selection=how, selection_s=time.perf_counter() - t0)
        if full.class_restricted:
            stats["layout"] = "libsvm" if restricted else "shared"
        sel_classes = self.pool_classes[sel]
        order = np.argsort(sel_classes, kind="stable") if restricted else np.arange(sel.size)
        sel, sel_classes = sel[order], sel_classes[order]
        groups = sel_classes if restricted else None
        blocks = cvm.output_blocks(groups, self.group_columns, exp.n_outputs)
        Z = exp.support_vectors[sel]
        Z = Z.toarray() if sp.issparse(Z) else np.array(Z)
        problem = cvm.GradientProblem(exp.kernel, self.X_fit, self.F, blocks, sel.size, loss=self.loss,
                                      point_blocks=self.point_blocks,
                                      learn_gamma=self.learn_gamma and self.method == "cvm")
        t0 = time.perf_counter()
        B, c = cvm.refit_coefficients(problem.kernel_matrix(Z), self.F, blocks)
        stats["refit_s"] = time.perf_counter() - t0
        problem.block_dtype = cvm.block_dtype_for(B)   # float32 unless its rounding of K B would be too coarse
        stats["block_dtype"] = np.dtype(problem.block_dtype).name
        stats["loss_lars"] = problem.objective(problem.pack(Z, B, c))[0]
        if self.method == "cvm":
            t0 = time.perf_counter()
            max_iter = self.iterations(sel.size)
            monitor = None if self.X_val is None else self._monitor(blocks, sel.size)
            patience = max(MIN_PATIENCE, int(PATIENCE_SHARE * max_iter))
            # one BLAS thread: the products are skinny (r columns) and threads cost more than they give on
            # a loaded machine (letter 2 %, 100 iterations: 238 s with threads at load 10, 14 s with one)
            with one_blas_thread():
                Z, B, c, res = cvm.optimise_vectors(problem, Z, B, c, max_iter=max_iter, callback=callback,
                                                    monitor=monitor, check_every=CHECK_EVERY, patience=patience,
                                                    n_validation=0 if self.X_val is None else self.X_val.shape[0])
            kernel = res.kernel
            if self.point_blocks is None and self.loss == "squared":   # closed-form final refit (LS in B, c)
                B, c = cvm.refit_coefficients(problem.kernel_matrix(Z, kernel), self.F, blocks)
            stats.update(n_iter=int(res.nit), max_iter=max_iter, best_iteration=int(res.best_iteration),
                         n_fit_points=self.X_fit.shape[0],
                         n_validation_points=0 if self.X_val is None else self.X_val.shape[0],
                         gradient_s=time.perf_counter() - t0,
                         loss_cvm=problem.objective(problem.pack(Z, B, c, kernel))[0], gamma=kernel.gamma)
            if monitor is not None:
                stats["validation_agreement"] = res.best_score
        else:
            stats["n_iter"] = 0
            kernel = exp.kernel
        vectors = _storage(Z)
        return KernelExpansion(vectors, B, c, kernel), sel_classes, stats


def _storage(Z):
    """Dense when at least DENSE_FRACTION of the entries are non-zero, else CSR (see module doc)."""
    Z = np.asarray(Z, dtype=np.float64)
    if Z.size and np.count_nonzero(Z) < DENSE_FRACTION * Z.size:
        return sp.csr_matrix(Z)
    return Z


def _accuracy(expansion, X, y, classes, strategy):
    pred = classes[predict_index(expansion.decision_function(X), classes.size, strategy)]
    return float(np.mean(pred == y))


def _quality(full: _FullModel, X, y):
    """How good an expansion is on (X, y): label accuracy; for a one-class model the accuracy of its
    +1 / -1 labels; for a regressor minus the RMSE."""
    if full.regression:
        return lambda expansion: -float(np.sqrt(np.mean((expansion.decision_function(X)[:, 0] - y) ** 2)))
    if full.one_output:
        return lambda expansion: float(np.mean(np.where(expansion.decision_function(X)[:, 0] > 0, 1, -1) == y))
    return lambda expansion: _accuracy(expansion, X, y, full.classes, full.strategy)


def _search_size(compressor: _Compressor, X, y, max_drop: float, on_size=None):
    """Smallest size on a geometric grid (x1.25) whose quality on (X, y) is within ``max_drop`` of the
    full model's: accuracy points, or for a regressor a relative RMSE increase."""
    full = compressor.full
    quality = _quality(full, X, y)
    best = quality(full.expansion)
    target = best * (1 + max_drop) if full.regression else best - max_drop
    m = full.expansion.n_support
    tried = []
    size = max(1, min(m, full.n_classes if compressor.layout == "libsvm" and full.class_restricted else 1))
    while True:
        result = compressor.compress(size)
        acc = quality(result[0])
        tried.append((size, acc))
        if on_size is not None:
            on_size()
        if acc >= target - 1e-12 or size >= m:
            result[2].update(size_search=tried, target_accuracy=target)
            return result
        size = min(m, max(size + 1, int(np.ceil(size * SIZE_GROWTH))))


def compress(model, n_sv=None, ratio=None, max_accuracy_drop=None, X=None, y=None, method="cvm",
             random_state=None, max_iter=None, max_fit_points=20000, eig_max=cvm.EIG_MAX, progress=None,
             layout="auto", loss="margin", validation_fraction=VALIDATION_FRACTION, learn_gamma=True,
             max_error_increase=None, iteration_range=None):
    """A smaller model approximating ``model``: LARS-SVM selection and gradient support vectors (Xu et al.).

    The compressed model minimises eq. 10 of Xu et al., the squared mismatch of its outputs with
    the full model's at the fitting points, over the vectors (started at a LARS-SVM selection of
    the full model's support vectors), their coefficients and, for an RBF kernel, its width. See
    :mod:`leansvm.compression.cvm`; the objective runs in float32 row blocks through BLAS
    (:mod:`leansvm.compression.rbf_objective`).

    Parameters
    ----------
    model : fitted SVC, NuSVC, SVR, NuSVR, OneClassSVM or any leansvm classifier
        The full model.
    n_sv : int, optional
        Number of vectors to keep. At most one of ``n_sv``, ``ratio``, ``max_accuracy_drop``
        (``max_error_increase`` for a regressor) sets the size; none: ``ratio`` = 0.1 (``DEFAULT_RATIO``).
    ratio : float, optional
        Fraction of the full model's support vectors to keep.
    max_accuracy_drop : float or str, optional
        The smallest size whose accuracy on ``X, y`` is within this fraction of the full model's
        (0.005 = half a percentage point; or a percentage, '0.5%'); sizes grow by 1.25. One-class models: against +1 / -1 labels.
    X, y : array-like, optional
        Fitting points (default: the full model's support vectors) and the labels that judge a size.
        Give a regressor its training rows (its support vectors lie on or outside the tube: diamonds
        at 10 %, RMSE +1.8 % fitted at the training rows, +2.9 % at the support vectors).
    method : {'cvm', 'lars', 'random'}, default='cvm'
        'cvm' adds the gradient step (eq. 10) to the selection; 'lars' stops after the selection and
        the coefficient refit; 'random' refits a random subset (a baseline).
    random_state : int or None, default=None
        Seed of the subsampling and of 'random'.
    max_iter : int, optional
        L-BFGS iterations (None: about ``ITERATION_WORK`` multiply-adds, within ``iteration_range``).
    max_fit_points : int or None, default=20000
        At most this many fitting points (a random subset beyond; None: all).
    eig_max : int
        The largest kernel matrix eigendecomposed for the LARS-SVM selection.
    progress : bool or None, default=None
        A bar with the time left; None shows it on a terminal (:mod:`leansvm.progress`).
    layout : {'auto', 'shared', 'libsvm'}, default='auto'
        One-vs-one models: every vector serves every pair ('shared'), or only its class's pairs.
    loss : {'margin', 'squared'}, default='margin'
        'squared' is eq. 10; 'margin' matches outputs only up to the full model's margin.
        Regressors and one-class models always use 'squared'.
    validation_fraction : float, default=0
        Share of the fitting points held out to choose the iterate (the last one within one
        standard error of the best agreement with the full model's labels).
    learn_gamma : bool, default=True
        RBF kernels: the width is one more parameter (the paper's section 4 suggests tuning it).
    max_error_increase : float or str, optional
        Regressors: the smallest size whose RMSE on ``X, y`` is at most this fraction ('2%') above the full's.
    iteration_range : (int, int), optional
        Bounds of the automatic iteration count (default 100-3000).

    Returns
    -------
    CompressedSVC, or a fitted copy of ``model`` for a regressor or one-class model
        The compressed model; ``expansion_.n_support`` vectors. A regressor or one-class model
        keeps its class (:func:`leansvm.compression.one_output.with_expansion`), so it predicts,
        saves and exports as the original.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> import leansvm
    >>> X, y = make_moons(300, noise=0.2, random_state=0)
    >>> full = leansvm.SVC(C=10, gamma=1.0).fit(X, y)
    >>> small = leansvm.compress(full, n_sv=8, X=X, y=y, random_state=0, progress=False)
    >>> small.expansion_.n_support <= 8 < full.expansion_.n_support
    True
    >>> bool(small.score(X, y) > 0.9)
    True
    """
    max_error_increase = None if max_error_increase is None else allowed_share("max_error_increase",
                                                                               max_error_increase)
    est = CompressedSVC(estimator=model, n_sv=n_sv, ratio=ratio, max_accuracy_drop=max_accuracy_drop,
                        method=method, max_iter=max_iter, max_fit_points=max_fit_points,
                        random_state=random_state, eig_max=eig_max, layout=layout, loss=loss,
                        validation_fraction=validation_fraction, learn_gamma=learn_gamma,
                        iteration_range=iteration_range)
    full = _FullModel(model)
    if not full.one_output:
        if max_error_increase is not None:
            raise ValueError("max_error_increase is for regressors; a classifier's size is chosen by "
                             "max_accuracy_drop")
        return est._compress(model, X, y, progress=progress)
    from leansvm.compression.one_output import with_expansion
    if max_error_increase is not None and not full.regression:
        raise ValueError("max_error_increase is for regressors; a one-class model's size is chosen by "
                         "max_accuracy_drop against +1 / -1 labels")
    if max_error_increase is not None and X is None:
        raise ValueError("max_error_increase needs validation data X, y")
    if max_accuracy_drop is not None and full.regression:
        raise ValueError("a regressor's size is chosen by max_error_increase (relative RMSE), not max_accuracy_drop")
    if validation_fraction:
        raise ValueError("validation_fraction holds out points to compare labels: classifiers only")
    if X is not None and y is None and not full.regression:
        y = model.predict(X)          # a one-class model's fitting points need no labels: its own
    est.set_params(loss="squared", max_accuracy_drop=max_error_increase if full.regression else max_accuracy_drop)
    expansion, _, stats = est._run(full, X, y, progress)
    return with_expansion(model, expansion, stats)


@register_estimator
class CompressedSVC(KernelClassifierMixin, BaseEstimator):
    """A compressed kernel classifier (Xu et al. 2015): few learned vectors matching a full SVM.

    ``fit(X, y)`` trains a clone of ``estimator`` (default ``leansvm.SVC()``)
    and compresses it with the training data as fitting points, as the
    paper's eq. 10 (``max_accuracy_drop`` then measures the drop on them);
    :func:`compress` compresses an already fitted model.

    Fitted attributes: ``expansion_``, ``classes_``, ``multiclass_``,
    ``n_support_`` (vectors filed per class, LIBSVM's grouping),
    ``support_vectors_``, ``dual_coef_``, ``intercept_``,
    ``full_n_support_`` (size of the model compressed), ``compression_``
    (statistics: selection method, losses, iterations, timings).

    Parameters
    ----------
    estimator : estimator, optional
        The full model to train and compress (default ``leansvm.SVC()``).
    n_sv : int, optional
        Number of vectors to keep (at most one of ``n_sv``, ``ratio``, ``max_accuracy_drop``; none:
        ``ratio`` = 0.1, ``DEFAULT_RATIO``).
    ratio : float, optional
        Fraction of the full model's support vectors to keep.
    max_accuracy_drop : float or str, optional
        The smallest size within this fraction (or '0.5%') of the full accuracy on the training rows.
    method : {'cvm', 'lars', 'random'}, default='cvm'
        Selection plus the gradient step, selection only, or a random subset (a baseline).
    max_iter : int, default=-1
        Bound on the solver iterations (-1: none); a ``ConvergenceWarning`` when reached.
    max_fit_points : int or None, default=20000
        At most this many fitting points.
    random_state : int, RandomState or None, default=None
        Seed of the fit's random choices (sample order, subsets): reproducible fits.
    eig_max : int, default=3000
        The largest kernel matrix eigendecomposed for the selection.
    decision_function_shape : {'ovr', 'ovo'}, default='ovr'
        Shape of ``decision_function`` for more than two classes, as scikit-learn.
    layout : {'auto', 'shared', 'libsvm'}, default='auto'
        One-vs-one: every vector serves every pair, or only its class's pairs.
    loss : {'margin', 'squared'}, default='margin'
        The gradient step's loss: outputs matched up to the margin, or exactly (eq. 10).
    validation_fraction : float, default=0
        Share of the fitting points held out to choose the iterate.
    learn_gamma : bool, default=True
        RBF: the kernel width is one more parameter of the gradient step.
    iteration_range : (int, int), optional
        Bounds of the automatic L-BFGS iteration count (default 100-3000).

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
    full_n_support_ : int
        Support vectors of the model it was compressed from.
    compression_ : dict
        How it was compressed: ``selection``, fitting points (``n_fit_points``), L-BFGS iterations
        (``n_iter`` of at most ``max_iter``), the learned ``gamma``, seconds per step.
    n_iter_ : int
        L-BFGS iterations the gradient support vectors took.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from leansvm import CompressedSVC
    >>> X, y = make_moons(300, noise=0.2, random_state=0)
    >>> model = CompressedSVC(n_sv=8, random_state=0).fit(X, y)
    >>> model.expansion_.n_support <= 8 < model.full_n_support_
    True
    """

    def __init__(self, estimator=None, n_sv=None, ratio=None, max_accuracy_drop=None, method="cvm",
                 max_iter=None, max_fit_points=20000, random_state=None, eig_max=cvm.EIG_MAX,
                 decision_function_shape="ovr", layout="auto", loss="margin",
                 validation_fraction=VALIDATION_FRACTION, learn_gamma=True, iteration_range=None):
        self.estimator = estimator
        self.n_sv = n_sv
        self.ratio = ratio
        self.max_accuracy_drop = max_accuracy_drop
        self.method = method
        self.max_iter = max_iter
        self.max_fit_points = max_fit_points
        self.random_state = random_state
        self.eig_max = eig_max
        self.decision_function_shape = decision_function_shape
        self.layout = layout
        self.loss = loss
        self.validation_fraction = validation_fraction
        self.learn_gamma = learn_gamma
        self.iteration_range = iteration_range

    def fit(self, X, y):
        from leansvm.exact.svc import SVC

        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, order="C")
        base = clone(self.estimator) if self.estimator is not None else SVC()
        base.fit(X, y)
        return self._compress(base, X, y)

    def _compress(self, model, X, y, progress=None):
        _check_method(self.method)
        _resolve_layout(self.layout)
        if self.loss not in cvm.LOSSES:
            raise ValueError(f"loss must be one of {cvm.LOSSES}, got {self.loss!r}")
        if self.decision_function_shape not in ("ovr", "ovo"):
            raise ValueError(f"decision_function_shape must be 'ovr' or 'ovo', got "
                             f"{self.decision_function_shape!r}")
        if self.max_iter is not None and not (int(self.max_iter) == self.max_iter and self.max_iter >= 0):
            raise ValueError(f"max_iter must be None or a non-negative integer, got {self.max_iter!r}")
        if not (np.isfinite(self.validation_fraction) and 0 <= self.validation_fraction < 1):
            raise ValueError(f"validation_fraction must be in [0, 1), got {self.validation_fraction!r}")
        full = _FullModel(model)
        expansion, vec_classes, stats = self._run(full, X, y, progress)
        self._set_fitted(full, expansion, vec_classes, stats)
        return self

    def _run(self, full: _FullModel, X, y, progress):
        """(expansion, class of each vector, statistics) of the compressed model."""
        X, y = _validate_points(X, y, full)
        m = full.expansion.n_support
        n_sv = _check_size(self.n_sv, self.ratio, self.max_accuracy_drop, X, m)
        start = time.perf_counter()
        compressor = _Compressor(full, X, y, self.method, self.max_iter,
                                 self.max_fit_points, self.eig_max, self.random_state,
                                 layout=self.layout, loss=self.loss,
                                 validation_fraction=self.validation_fraction,
                                 learn_gamma=bool(self.learn_gamma),
                                 iteration_range=_iteration_range(self.iteration_range))
        if n_sv is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                # progress: sizes tried, out of the whole x1.25 grid (the search usually stops earlier)
                with Progress(1 + int(np.ceil(np.log(max(m, 2)) / np.log(SIZE_GROWTH))), "compress: size search",
                              "sizes", progress) as bar:
                    with cvm.reuse_eigendecompositions():   # one K_SS eigendecomposition for every size
                        expansion, vec_classes, stats = _search_size(compressor, X, y, allowed_share("max_accuracy_drop", self.max_accuracy_drop),
                                                                     on_size=bar.update)
        else:
            # progress: L-BFGS iterations out of max_iter (it may converge earlier)
            with Progress(compressor.iterations(n_sv) if self.method == "cvm" else None, "compress", "L-BFGS iterations",
                          progress) as bar:
                expansion, vec_classes, stats = compressor.compress(n_sv, callback=lambda *_: bar.update())
        stats["total_s"] = time.perf_counter() - start
        return expansion, vec_classes, stats

    def _set_fitted(self, full: _FullModel, expansion, vec_classes, stats):
        k = full.n_classes
        if k == 2:   # file each vector under the class its coefficient favours (coef > 0: classes_[1])
            vec_classes = (expansion.coef[:, 0] > 0).astype(np.intp)
        order = np.argsort(vec_classes, kind="stable")
        if not np.array_equal(order, np.arange(order.size)):
            expansion = expansion.subset(order)
            vec_classes = vec_classes[order]
        self.expansion_ = expansion
        self.classes_ = full.classes
        self.multiclass_ = full.strategy
        self.n_support_ = np.bincount(vec_classes, minlength=k).astype(np.int32)
        self.n_features_in_ = expansion.n_features
        self.full_n_support_ = full.expansion.n_support
        self.compression_ = stats
        self.n_iter_ = int(stats.get("n_iter", 0))   # L-BFGS iterations of the gradient step
        self.fit_status_ = 0

    def libsvm_equivalent(self) -> "CompressedSVC":
        """The same model in LIBSVM's one-vs-one layout (what ``io.save_libsvm_model`` writes).

        LIBSVM files file every vector under one class c, carrying only the
        pairs (c, j). A shared vector with coefficients for a set of pairs is
        written once for each class of a vertex cover of those pairs (greedy:
        the class covering most uncovered pairs first; k-1 copies for a vector
        serving all k(k-1)/2 pairs), each copy carrying the pairs assigned to
        its class. Predictions are identical; LIBSVM then evaluates the kernel
        once per copy, so the native format (``io.save_model``) is the compact
        one. Models already in LIBSVM's layout (binary, ``layout='libsvm'``)
        are returned unchanged.
        """
        check_is_fitted(self, "expansion_")
        k = self.classes_.size
        exp = self.expansion_
        if k <= 2 or self.multiclass_ != "ovo" or exp.n_outputs != k * (k - 1) // 2:
            return self
        classes = np.repeat(np.arange(k), self.n_support_)
        pairs = np.array(ovo_pairs(k))
        rows, cls, coef = [], [], []
        for v in range(exp.n_support):
            uncovered = exp.coef[v] != 0
            while uncovered.any():
                counts = 2 * np.bincount(pairs[uncovered].ravel(), minlength=k)
                if counts[classes[v]]:
                    counts[classes[v]] += 1    # ties: the vector's own class first
                c = int(np.argmax(counts))     # covers at least one uncovered pair
                serve = uncovered & ((pairs[:, 0] == c) | (pairs[:, 1] == c))
                rows.append(v)
                cls.append(c)
                coef.append(np.where(serve, exp.coef[v], 0.0))
                uncovered &= ~serve
        rows, cls = np.asarray(rows, dtype=np.intp), np.asarray(cls, dtype=np.intp)
        if rows.size == exp.n_support and np.array_equal(cls, classes):
            return self
        order = np.argsort(cls, kind="stable")
        if rows.size > exp.n_support:
            warnings.warn(f"LIBSVM layout: the {exp.n_support} shared vectors are written as {rows.size} "
                          f"(each once per class of the pairs it serves); io.save_model keeps the compact "
                          f"form", UserWarning, stacklevel=2)
        twin = copy.copy(self)
        twin.expansion_ = KernelExpansion(exp.support_vectors[rows[order]], np.asarray(coef)[order],
                                          exp.intercept.copy(), exp.kernel)
        twin.n_support_ = np.bincount(cls, minlength=k).astype(np.int32)
        return twin
