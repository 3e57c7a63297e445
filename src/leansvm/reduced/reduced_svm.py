"""A small kernel model trained straight from the labels on every row: no exact SVM first.

The model is the same kernel expansion as every other leansvm model,

    f(x) = sum_j beta_j k(z_j, x) + b,       r vectors z_j chosen by the method,

with vectors, coefficients and intercepts minimising (Wu, Schölkopf & Bakır, "A Direct Method for
Building Sparse Kernel Learning Algorithms", JMLR 7, 2006; Keerthi, Chapelle & DeCoste, "Building
Support Vector Machines with Reduced Classifier Complexity", JMLR 7, 2006, with the same squared
hinge)

    L(Z, beta, b) = 1/(2 C N) ||beta||^2 + 1/N sum_i 1/2 l_i,
    l_i = max(0, 1 - y_i f(x_i))^2   (classification; one output per class, one-vs-rest, k > 2)
    l_i = (y_i - f(x_i))^2           (regression),

jointly by L-BFGS. Both losses are compression's objective (Xu et al., eq. 10:
:class:`~leansvm.compression.cvm.GradientProblem`) with the labels in place of a teacher's
outputs: the squared hinge is its 'margin' residual at targets of +-1. So the gradient is
compression's (dL/dz_j = 2 gamma sum_i H_ij (x_i - z_j), H = -R beta' / N * K) and an iteration
runs in its float32 row blocks (:mod:`leansvm.compression.rbf_objective`): about 4 N r (d + p)
flops, two N x r x d and two N x r x p products, the N x r kernel block never stored whole.
The ridge is on beta itself (not beta' K_ZZ beta): it only keeps the coefficients of nearby
vectors from growing against each other.

Classification uses the smoothed hinge: the squared hinge up to a violation of ``HUBER``, linear
beyond it (so a mislabelled row pulls as in the SVM's hinge, not quadratically).

Start: the vectors are k-means++ centres (scikit-learn's ``kmeans_plusplus``) of a sample of
``SAMPLE_PER_VECTOR`` rows per vector (classification: of the rows near a pilot model's boundary),
the coefficients the same objective's ridge fit under the squared loss for those vectors over at most
``START_ROWS`` rows (a closed form). L-BFGS then runs over growing random subsamples: half the
iterations on ``subsample`` rows, half of those left on twice as many, ..., the rest on every row
(under ``max_seconds``, the phases too short to help are dropped: ``MIN_PHASE_ITERATIONS``). The vectors
move far in the first iterations, and a
subsample shows them where at a fraction of the cost. Last, with the vectors fixed, Newton steps fit
the coefficients on every training row (:mod:`leansvm.reduced.newton`), kept where they lower the
held-out loss.

How many iterations: ``early_stopping`` (the default) holds out ``validation_fraction`` of the rows
(at most ``HELD_OUT_ROWS``), scores the held-out loss every ``CHECK_EVERY`` iterations, and keeps the
best iterate; a phase ends when ``n_iter_no_change`` iterations bring no better one. Run to the end,
more iterations both help and overfit: on synth-200k (C = 1, gamma = 0.05 to start, 2 cores, the
exact SVC 0.9305 on test) 1,000 iterations took 500 and 1,000 vectors from 0.9254 and 0.9253 (300
iterations) to 0.9368 and 0.9391; on a9a (32,561 rows, 123 features) 600 iterations took 200 and 500
vectors from 0.8514 and 0.8515 to 0.8504 and 0.8442, and without held-out rows the default stayed at
300. With them, 1,000 iterations are the default: a9a's 100-500 vectors test 0.8504-0.8517 (0.8506-0.8516
with 300 run to the end), magic's 50-200 0.8851-0.8906 (0.8856-0.8904), and on 2,000 noisy moons
with 150 vectors at C = 100 the held-out choice tests 1.1-3.2 points above the last iterate.

On a Dask cluster, ``leansvm.distributed.fit_reduced`` sums every iteration's objective over the
workers' row blocks. The main job trains it as a family (:mod:`leansvm.job.reduced`). Not here yet:
one-vs-one and the epsilon-insensitive loss.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from leansvm.budget.bsgd_refit import ridge_refit
from leansvm.compression.cvm import GradientProblem, block_dtype_for, optimise_vectors
from leansvm.compression.rbf_objective import DENSE_BLOCK_MAX_FEATURES
from leansvm.core.classifier import ExpansionAttributes, KernelClassifierMixin
from leansvm.core.expansion import KernelExpansion
from leansvm.core.kernels import Kernel, resolve_gamma
from leansvm.core.registry import register_estimator
from leansvm.core.threads import one_blas_thread
from leansvm.core.validation import (check_int, check_positive_number, fit_transaction, validate_regression_data,
                                     validate_training_data)
from leansvm.progress import Progress
from leansvm.reduced.newton import KernelRows, newton_coefficients

#: k-means++ draws the starting vectors from this many rows per vector (at most every row)
SAMPLE_PER_VECTOR = 10
#: the start (the k-means++ draws and the starting coefficients' ridge fit) works on a random sample of
#: this many rows, or of ``SAMPLE_PER_VECTOR`` per vector where that is more (:func:`start_rows`)
START_ROWS = 20000
#: classification: the starting vectors are drawn from the rows a pilot model (k-means++ centres, a
#: quarter as many, and their ridge fit) puts within this distance of its boundary, |f(x)| < BAND:
#: synth-200k, 2,000 vectors, 100 L-BFGS iterations on every row: objective 0.200 against 0.209
#: from centres of all rows (the same test accuracy, 0.916)
BAND = 0.3
#: a learned gamma stays within this factor of the fit's starting gamma (``optimise_vectors``'s
#: ``gamma_range``, the same for every phase). Unbounded, a9a's (0.008 to start) fell to 1.4e-5 with
#: 200 vectors after 600 iterations, where the kernel columns differ by float32's rounding, and the
#: model tested 0.61 with 500. A factor of 4 trapped moons (gamma 1.0, 10 vectors): L-BFGS-B's first
#: step hit the bound 0.25 and the fit stayed there (training accuracy 0.86 against 0.953 unbounded,
#: where gamma ends at 1.56); 16 gives the unbounded fit there, and where learning gamma helps it
#: moved less than 2x (synth-200k 0.05 -> 0.089, magic 0.1 -> 0.15, a9a 0.008 -> 0.0104)
GAMMA_FACTOR = 16.0
#: the smoothed hinge's quadratic zone (``LabelProblem.huber``): linear beyond a violation of 1,
#: i.e. on misclassified rows (synth-200k as above: 0.9167 against 0.9160 with the squared hinge)
HUBER = 1.0
#: with ``early_stopping``: at most this many rows are held out ...
HELD_OUT_ROWS = 10000
#: ... and none below this many (then every row trains and ``max_iter`` decides)
MIN_HELD_OUT = 100
#: the held-out score is computed every this many L-BFGS iterations
CHECK_EVERY = 10
#: Newton steps on the coefficients with the vectors fixed after L-BFGS (:mod:`leansvm.reduced.newton`)
NEWTON_STEPS = 3
#: under ``max_seconds``, the share of it kept from L-BFGS for the Newton steps
NEWTON_SHARE = 0.15
#: under ``max_seconds`` with Newton steps, a phase is run only where it is forecast (the previous phase's seconds per
#: iteration times its rows' growth) to get this many iterations in half the time left; else the phase
#: before it is the last and gets that time. Then the Newton steps fit the coefficients on every row.
#: synth-200k (2,000 vectors in 30 s, the exact SVC 0.9305): L-BFGS on the first 1, 2, 3 and all 4
#: phases (25,000 to 180,000 rows), then the steps, tested 0.9300, 0.9304, 0.9287 and 0.9276 (1,000
#: vectors: 0.9332 after 2 phases, 0.9316 after 4; no steps: 0.9252 and 0.9313); run to the end without
#: a time limit, the phases on every row helped (500 and 1,000 vectors: 0.9316 and 0.9344 after 2
#: phases and the steps, 0.9368 and 0.9391 after all 4 and none)
MIN_PHASE_ITERATIONS = 100


@dataclass
class LabelProblem(GradientProblem):
    """Compression's objective on labels: plus ``ridge`` / 2 ||B||^2 on the coefficients (the packed B
    entries) and, with ``huber`` = delta, the squared hinge made linear beyond a violation of delta
    (the smoothed hinge: 1/2 u^2 for u = max(0, 1 - y f) <= delta, delta u - delta^2 / 2 beyond), so
    that a mislabelled row pulls on the model as in the SVM's hinge, not quadratically."""

    ridge: float = 0.0
    huber: float | None = None

    def _violations(self, pred, rows, cols):
        at = (slice(None), slice(None)) if rows is None else (rows, slice(None)) if cols is None else np.ix_(rows, cols)
        sign = self.sign[at]
        return sign, np.maximum(1.0 - sign * pred, 0.0)

    def residuals(self, pred, rows=None, cols=None):
        if self.huber is None:
            return super().residuals(pred, rows, cols)
        sign, u = self._violations(pred, rows, cols)
        return sign * np.minimum(u, self.huber)

    def loss_beyond_residuals(self, pred, rows=None, cols=None) -> float:
        if self.huber is None:
            return 0.0
        _, u = self._violations(pred, rows, cols)
        return self.huber * float(np.maximum(u - self.huber, 0.0).sum())

    def objective(self, theta):
        return self.with_ridge(theta, *super().objective(theta), self.ridge)

    def with_ridge(self, theta, loss, grad, ridge):
        """(loss + ridge / 2 ||beta||^2, its gradient) over the packed coefficients beta of theta."""
        start = self.n_vectors * self.d
        stop = start + int(self.mask.sum())
        beta = theta[start:stop]
        grad[start:stop] += ridge * beta
        return loss + 0.5 * ridge * float(beta @ beta), grad


def label_targets(y, classes) -> np.ndarray:
    """The fitted outputs, N x p: +-1 per class (one column for two classes: +1 for ``classes[1]``), or the
    regression targets themselves (``classes`` None)."""
    y = np.asarray(y)
    if classes is None:
        return np.asarray(y, dtype=np.float64)[:, None]
    if len(classes) == 2:
        return np.where(y == classes[1], 1.0, -1.0)[:, None]
    return np.where(y[:, None] == np.asarray(classes)[None, :], 1.0, -1.0)


def label_problem(X, F, *, kernel, n_vectors, loss, block_dtype, learn_gamma, huber, ridge=0.0):
    """The objective over rows X and their fitted outputs F (:func:`label_targets`): one fit's phase, or
    one row block's on a Dask worker (``leansvm.distributed.fit_reduced`` adds the ridge once)."""
    return LabelProblem(kernel, X, F, [(None, np.arange(F.shape[1]))], n_vectors, loss=loss, block_dtype=block_dtype,
                        learn_gamma=learn_gamma, ridge=ridge, huber=huber)


def _dense(X):
    """Rows of X as a dense float64 array where the row blocks would make them dense anyway (at most
    ``DENSE_BLOCK_MAX_FEATURES`` features): the start is then the same for sparse and dense data."""
    return X.toarray() if sp.issparse(X) and X.shape[1] <= DENSE_BLOCK_MAX_FEATURES else X


def starting_vectors(X, n_vectors: int, rng) -> np.ndarray:
    """k-means++ centres (dense) of a sample of ``SAMPLE_PER_VECTOR`` rows per vector."""
    from sklearn.cluster import kmeans_plusplus
    n = X.shape[0]
    rows = np.sort(rng.choice(n, min(n, SAMPLE_PER_VECTOR * n_vectors), replace=False))
    centres, _ = kmeans_plusplus(_dense(X[rows]), n_vectors, random_state=rng.randint(2**31 - 1))
    return centres.toarray() if sp.issparse(centres) else np.asarray(centres, dtype=np.float64)


def start_rows(n_vectors: int) -> int:
    """Rows of the start's sample (at most every row): ``START_ROWS``, or ``SAMPLE_PER_VECTOR`` per vector."""
    return max(START_ROWS, SAMPLE_PER_VECTOR * n_vectors)


def random_rows(n: int, most: int, rng) -> np.ndarray:
    """``most`` of n row indices drawn at random, sorted (every row when n <= most: no draw)."""
    return np.arange(n) if n <= most else np.sort(rng.choice(n, most, replace=False))


def in_row_blocks(X, F, Z, B, kernel, huber):
    """sums(B, c, system) for :func:`~leansvm.reduced.newton.newton_coefficients` over rows X with fitted
    outputs F, the vectors Z and the RBF ``kernel`` fixed, in row blocks of
    :func:`~leansvm.compression.cvm.block_dtype_for`'s dtype for coefficients like B."""
    rows = KernelRows(X, F, huber, block_dtype_for(B))
    return lambda B, c, system: rows.sums(Z, B, c, kernel.gamma, system)


def held_out_score(X, F, classification: bool):
    """score(Z, B, c, kernel): minus the fit's mean loss on rows X with fitted outputs F
    (:func:`label_targets`): the smoothed hinge (classification) or the squared error. The loss, not
    the share labelled right: on magic's 1,521 held-out rows the share moved within its own noise
    (0.861-0.870) over 670 iterations, and its best came first."""
    def score(Z, B, c, kernel):
        out = KernelExpansion(Z, B, c, kernel).decision_function(X)     # in row blocks of bounded size
        if not classification:
            return -0.5 * float(np.mean((F - out) ** 2))
        u = np.maximum(1.0 - F * out, 0.0)
        return -float(np.mean(np.where(u <= HUBER, 0.5 * u ** 2, HUBER * u - 0.5 * HUBER ** 2)))
    return score


class _ReducedSVM:
    """What the classifier and the regressor share: the parameters, the start, the phases of L-BFGS, the
    expansion."""

    def __init__(self, n_vectors=500, C=1.0, gamma="scale", learn_gamma=True, max_iter=1000, tol=1e-7,
                 early_stopping=True, validation_fraction=0.1, n_iter_no_change=100,
                 subsample=25000, newton_steps=NEWTON_STEPS, max_seconds=None, warm_start=False, progress=None,
                 random_state=None):
        self.n_vectors = n_vectors
        self.C = C
        self.gamma = gamma
        self.learn_gamma = learn_gamma
        self.max_iter = max_iter
        self.tol = tol
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.subsample = subsample
        self.newton_steps = newton_steps
        self.max_seconds = max_seconds
        self.warm_start = warm_start
        self.progress = progress
        self.random_state = random_state

    def _check_parameters(self, n_rows):
        check_positive_number("C", self.C)
        check_positive_number("tol", self.tol)
        if not isinstance(self.learn_gamma, (bool, np.bool_)):
            raise ValueError(f"learn_gamma must be True or False, got {self.learn_gamma!r}")
        n_vectors = check_int("n_vectors", self.n_vectors, 1)
        check_int("max_iter", self.max_iter, 1)
        check_int("newton_steps", self.newton_steps, 0)
        if self.subsample is not None:
            check_int("subsample", self.subsample, 1)
        if self.max_seconds is not None:
            check_positive_number("max_seconds", self.max_seconds)
        if not isinstance(self.early_stopping, (bool, np.bool_)):
            raise ValueError(f"early_stopping must be True or False, got {self.early_stopping!r}")
        if not (isinstance(self.validation_fraction, (int, float)) and 0 < self.validation_fraction < 1):
            raise ValueError(f"validation_fraction must be in (0, 1), got {self.validation_fraction!r}")
        check_int("n_iter_no_change", self.n_iter_no_change, 1)
        return min(n_vectors, n_rows)

    def _start(self, X, F, kernel, n_vectors, rng, near_boundary):
        """(Z, B, c, kernel) to start from: the previous fit's (``warm_start``, more vectors added as
        k-means++ centres with zero coefficients), else, on a sample of :func:`start_rows` rows, k-means++
        centres (``near_boundary``: of the rows a pilot model puts within ``BAND`` of its boundary) and
        their ridge fit. Given that sample alone, it returns the same (``fit_reduced`` does so)."""
        previous = getattr(self, "expansion_", None) if self.warm_start else None
        if previous is not None and previous.coef.shape[1] == F.shape[1] \
                and previous.support_vectors.shape[1] == X.shape[1]:
            Z = np.asarray(previous.support_vectors.toarray() if sp.issparse(previous.support_vectors)
                           else previous.support_vectors, dtype=np.float64)[:n_vectors]
            B, c = previous.coef[:n_vectors].copy(), np.asarray(previous.intercept, dtype=np.float64).copy()
            if Z.shape[0] < n_vectors:
                extra = starting_vectors(X, n_vectors - Z.shape[0], rng)
                Z, B = np.vstack([Z, extra]), np.vstack([B, np.zeros((extra.shape[0], B.shape[1]))])
            return Z, B, c, previous.kernel
        rows = random_rows(X.shape[0], start_rows(n_vectors), rng)
        X_start, F_start = _dense(X[rows]), F[rows]
        pool = X_start
        if near_boundary and n_vectors >= 8:
            pilot = starting_vectors(X_start, n_vectors // 4, rng)
            B, c = ridge_refit(kernel, pilot, X_start, F_start, float(self.C), on_coefficients=True)
            near = np.abs(kernel.block(X_start, pilot) @ B + c).min(axis=1) < BAND
            if near.sum() >= 2 * n_vectors:
                pool = X_start[near]
        Z = starting_vectors(pool, n_vectors, rng)
        B, c = ridge_refit(kernel, Z, X_start, F_start, float(self.C), on_coefficients=True)
        return Z, B, np.atleast_1d(c), kernel

    def _phase_rows(self, n) -> list[int]:
        """Rows of each phase: ``subsample``, then twice as many each phase up to every row (n)."""
        if self.subsample is None or n <= self.subsample:
            return [n]
        sizes, size = [], int(self.subsample)
        while size < n:
            sizes.append(size)
            size *= 2
        return sizes + [n]

    def _settings(self, kernel, loss, B) -> dict:
        """:func:`label_problem`'s arguments for coefficients like ``B`` (their float32 rounding decides
        the row blocks' dtype)."""
        return dict(kernel=kernel, n_vectors=B.shape[0], loss=loss, block_dtype=block_dtype_for(B),
                    learn_gamma=self.learn_gamma, huber=HUBER if loss == "margin" else None)

    def _phase_problems(self, X, F, loss, kernel, rng):
        """([problem(B, kernel) of each phase of :meth:`_phase_rows`], those rows); each phase's rows are
        drawn when it starts."""
        n, sizes = X.shape[0], self._phase_rows(X.shape[0])

        def make(rows_wanted):
            def problem(B, kernel):
                rows = random_rows(n, rows_wanted, rng)
                return label_problem(X[rows] if rows_wanted < n else X, F[rows], **self._settings(kernel, loss, B),
                                     ridge=1.0 / (float(self.C) * len(rows)))
            return problem

        return [make(rows_wanted) for rows_wanted in sizes], sizes

    def _held_out(self, n, rng):
        """(training rows, held-out rows) of n: with ``early_stopping`` a random ``validation_fraction`` of
        them, at most ``HELD_OUT_ROWS``, held out to choose the iterate; else (every row, None)."""
        n_held = min(int(self.validation_fraction * n), HELD_OUT_ROWS) if self.early_stopping else 0
        if n_held < MIN_HELD_OUT:
            return np.arange(n), None
        held = np.zeros(n, dtype=bool)
        held[rng.choice(n, n_held, replace=False)] = True
        return np.flatnonzero(~held), np.flatnonzero(held)

    def _split_off(self, X, F, rng, classification):
        """(training rows of X, their outputs, monitor for :meth:`_optimise` or None): :meth:`_held_out`'s
        rows scored by :func:`held_out_score` (the best iterate: no slack)."""
        train, held = self._held_out(X.shape[0], rng)
        self.validation_score_ = None
        if held is None:
            return X, F, None
        score = held_out_score(_dense(X[held]), F[held], classification)
        return X[train], F[train], (score, held.size, 0.0)

    def _optimise(self, phases, kernel, Z, B, c, desc, monitor=None, started=None, phase_rows=None):
        """L-BFGS over ``phases`` [problem(B, kernel)], each phase given half the iterations of
        ``max_iter`` not yet run (the last all of them: what a phase left unused passes on), a learned
        gamma kept within ``GAMMA_FACTOR`` of ``kernel``'s; returns (Z, B, c, kernel, iterations, stopped
        early). ``phase_rows``: each phase's rows, for ``max_seconds`` to drop the phases that would run
        fewer than ``MIN_PHASE_ITERATIONS`` iterations.

        ``monitor`` = (score(Z, B, c, kernel), held-out rows, slack or None): each phase returns its
        iterate chosen on the held-out score (``optimise_vectors``: checked every ``CHECK_EVERY``
        iterations, the last within one standard error of the best; ``n_iter_no_change`` iterations
        without a better score end the phase), and the next phase starts from it. ``started``: the fit's
        start on ``time.perf_counter``'s clock, which ``max_seconds`` counts from (the start's k-means++
        and ridge fit included: 3.7 s of a 30-s fit with 2,000 vectors on synth-200k)."""
        started = time.perf_counter() if started is None else started
        gamma_range = (kernel.gamma / GAMMA_FACTOR, kernel.gamma * GAMMA_FACTOR)
        done, stopped = 0, False
        watch = {} if monitor is None else dict(monitor=monitor[0], n_validation=monitor[1], slack=monitor[2],
                                                check_every=CHECK_EVERY, patience=int(self.n_iter_no_change))
        with Progress(total=self.max_iter, desc=desc, unit="iteration", enabled=self.progress) as bar:
            per_iteration = None
            for i, make_problem in enumerate(phases):
                left = max(int(self.max_iter) - done, 1)
                last = i == len(phases) - 1 or self._next_phase_too_short(started, per_iteration, phase_rows, i)
                iterations = left if last else max(left // 2, 1)
                ends = self._phase_end(started, last)
                problem = make_problem(B, kernel)
                ftol = self._relative_tol(problem, Z, B, c)

                def step(theta):
                    bar.update()
                    if ends is not None and time.perf_counter() > ends:
                        raise StopIteration

                # the row blocks are split over leansvm's threads, each running one BLAS thread;
                # a phase ends at its share of max_iter by design (the warning below is the fit's)
                phase_started = time.perf_counter()
                with warnings.catch_warnings(), one_blas_thread():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    Z, B, c, res = optimise_vectors(problem, Z, B, c, max_iter=iterations, tol=ftol,
                                                    callback=step, gamma_range=gamma_range, **watch)
                kernel = res.kernel
                done += int(res.nit)
                per_iteration = (time.perf_counter() - phase_started) / max(int(res.nit), 1)
                self.validation_score_ = res.best_score
                if self.max_seconds is not None and time.perf_counter() - started > self._lbfgs_seconds():
                    stopped = True
                    break
                if last:
                    break
        if not stopped and res.status == 1:
            warnings.warn(f"{desc}: L-BFGS used all max_iter={self.max_iter} iterations (objective {res.fun:.4g} "
                          f"on every row); raise max_iter for a closer fit", ConvergenceWarning, stacklevel=4)
        return Z, B, c, kernel, done, stopped

    def _next_phase_too_short(self, started, per_iteration, phase_rows, i) -> bool:
        """Under ``max_seconds`` and with Newton steps to follow: whether phase i + 1 is forecast to run
        fewer than ``MIN_PHASE_ITERATIONS`` iterations in half the L-BFGS time left (its seconds per
        iteration: phase i - 1's, ``per_iteration``, times the growth of the rows), so that phase i is the
        last."""
        if not self.newton_steps or self.max_seconds is None or per_iteration is None or phase_rows is None \
                or i + 1 >= len(phase_rows):
            return False
        forecast = per_iteration * phase_rows[i + 1] / phase_rows[i - 1]
        left = started + self._lbfgs_seconds() - time.perf_counter()
        return forecast * MIN_PHASE_ITERATIONS > 0.5 * left

    def _relative_tol(self, problem, Z, B, c) -> float:
        """L-BFGS-B's ``ftol`` for ``tol`` as a relative decrease: scipy tests (f_k - f_k+1) /
        max(|f_k|, |f_k+1|, 1), an absolute decrease where the mean loss is below 1, as it is here. So
        ``tol`` is scaled by the phase's starting objective (one evaluation). Unscaled, friedman1-10k at
        C = 1000, gamma 0.0111 (the regression job's choice), 510 vectors, stopped after 7 iterations
        where it started (test RMSE 0.3299; scaled: 0.2167 in 1,000 iterations), and mortgages at
        C = 128 ran 36 iterations with 889 vectors."""
        with one_blas_thread():
            start = float(problem.objective(problem.pack(Z, B, c))[0])
        return float(self.tol) * min(1.0, abs(start)) if np.isfinite(start) and start != 0 else float(self.tol)

    def _phase_end(self, started, last):
        """The clock time the current phase stops at under ``max_seconds`` (None: no limit): half the
        time left, all of it for the last phase, as the iterations are shared. Before, a phase ran until
        the time was spent: synth-200k, 2,000 vectors in 35 s, the fit never reached its last two
        phases (50,000 rows of 180,000 at most) and tested 0.9253, against 0.9273 with this split
        (0.9270 with equal shares; 1,000 vectors: 0.9339-0.9340 either way)."""
        if self.max_seconds is None:
            return None
        left = started + self._lbfgs_seconds() - time.perf_counter()
        return time.perf_counter() + (left if last else 0.5 * left)

    def _lbfgs_seconds(self) -> float:
        """The part of ``max_seconds`` that L-BFGS runs in: all but ``NEWTON_SHARE`` where Newton steps follow."""
        return float(self.max_seconds) * (1.0 - NEWTON_SHARE if self.newton_steps else 1.0)

    def _newton(self, sums, Z, B, c, kernel, monitor, started):
        """(B, c) after ``newton_steps`` Newton steps on the coefficients over every training row with the
        vectors fixed (:mod:`leansvm.reduced.newton`; ``sums(B, c, system)`` sums over those rows), within
        ``max_seconds``: the first system's seconds are forecast from one pass of the loss (its Gram's flops
        against that pass's) and the steps are skipped where it would end past the limit. With held-out
        rows the steps are kept only where they lower the held-out loss. Sets ``newton_steps_``."""
        self.newton_steps_ = 0
        if not self.newton_steps:
            return B, c
        ends = None if self.max_seconds is None else started + float(self.max_seconds)
        if ends is not None:
            tick = time.perf_counter()
            now = sums(B, c, False)
            pass_seconds = time.perf_counter() - tick
            r, width = Z.shape[0], Z.shape[1] + B.shape[1]
            forecast = pass_seconds * (1.0 + float(now.active.sum()) * r / max(now.rows * width, 1))
            if time.perf_counter() + forecast > ends:
                return B, c
        B_new, c_new, steps = newton_coefficients(sums, B, c, float(self.C), int(self.newton_steps), ends=ends)
        if monitor is not None:
            score = monitor[0](Z, B_new, c_new, kernel)
            if self.validation_score_ is not None and score < self.validation_score_:
                return B, c
            self.validation_score_ = score
        self.newton_steps_ = steps
        return B_new, c_new

    def _finish(self, Z, B, c, kernel, iterations, stopped):
        self.expansion_ = KernelExpansion(Z, B, np.asarray(c, dtype=np.float64), kernel)
        self.n_iter_ = iterations
        self.fit_status_ = 1 if stopped else 0
        return self


@register_estimator
class ReducedSVC(_ReducedSVM, KernelClassifierMixin, BaseEstimator):
    """A kernel classifier of ``n_vectors`` vectors learned from the labels on every row (module docstring).

    Parameters
    ----------
    n_vectors : int, default=500
        r, the model's size: its vectors are free points, not training rows.
    C : float, default=1.0
        The squared hinge's weight against the ridge on the coefficients, as an SVM's C.
    gamma : {'scale', 'auto'} or float, default='scale'
        The RBF kernel's width to start from (choose it as for ``SVC``).
    learn_gamma : bool, default=True
        Optimise log(gamma) with the vectors (within ``GAMMA_FACTOR``, 16, of the start): fewer vectors want
        other widths (synth-200k, 2,000 vectors, 100 iterations: gamma 0.05 -> 0.071, test accuracy
        0.909 -> 0.916).
    max_iter : int, default=1000
        L-BFGS iterations in all, over phases of growing subsamples: half of them on ``subsample``
        rows, half of those left on twice as many, and so on up to every row.
    tol : float, default=1e-7
        A phase stops when the objective's relative decrease falls below it (relative also where the
        objective is below 1, unlike L-BFGS-B's own ``ftol``).
    early_stopping : bool, default=True
        Hold out ``validation_fraction`` of the rows (at most 10,000; none below 100) and return the
        iterate with the lowest loss on them (module docstring): more iterations where they help, fewer
        where they overfit.
    validation_fraction : float, default=0.1
        The share of rows held out with ``early_stopping``; they are not trained on.
    n_iter_no_change : int, default=100
        With ``early_stopping``, a phase ends after this many iterations without a lower held-out loss.
    subsample : int or None, default=25000
        Rows of the first phase (None: every row throughout).
    newton_steps : int, default=3
        Newton steps on the coefficients over every training row after L-BFGS, the vectors fixed
        (:mod:`leansvm.reduced.newton`); kept only where they lower the held-out loss. 0: none.
    max_seconds : float or None, default=None
        Stop after about this many seconds (then ``fit_status_`` is 1); the model as it stands is kept.
        Each phase but the last stops at half the time left, so that every phase runs.
    warm_start : bool, default=False
        Start from the previous fit's vectors and coefficients (a larger ``n_vectors`` adds vectors).
    progress : bool or None, default=None
        A progress bar over the iterations (None: on a terminal).
    random_state : int, RandomState or None
        The starting vectors' sample and k-means++ draws, and the subsample.

    Attributes
    ----------
    expansion_ : KernelExpansion
        The model (also as scikit-learn's ``support_vectors_``, ``dual_coef_``, ``intercept_``).
    classes_ : ndarray
        The class labels; ``multiclass_`` is 'ovr' (one output per class for more than two).
    n_iter_ : int
        L-BFGS iterations run.
    newton_steps_ : int
        Newton steps kept (0 where none ran or the held-out loss rejected them).
    validation_score_ : float or None
        Minus the held-out rows' mean loss at the returned iterate (None without ``early_stopping``).
    fit_status_ : int
        0, or 1 when ``max_seconds`` stopped the fit.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from leansvm import ReducedSVC
    >>> X, y = make_moons(n_samples=1000, noise=0.2, random_state=0)
    >>> model = ReducedSVC(n_vectors=10, gamma=1.0, random_state=0).fit(X, y)
    >>> model.expansion_.n_support, model.score(X, y) > 0.95
    (10, True)
    """

    @fit_transaction
    def fit(self, X, y):
        started = time.perf_counter()
        X, classes, y_enc, _ = validate_training_data(self, X, y)
        n_vectors = self._check_parameters(X.shape[0])
        rng = check_random_state(self.random_state)
        kernel = Kernel("rbf", resolve_gamma(self.gamma, X))
        F = label_targets(y_enc, np.arange(len(classes)))
        X, F, monitor = self._split_off(X, F, rng, classification=True)
        n_vectors = min(n_vectors, X.shape[0])
        Z, B, c, kernel = self._start(X, F, kernel, n_vectors, rng, near_boundary=True)
        phases, phase_rows = self._phase_problems(X, F, "margin", kernel, rng)
        Z, B, c, kernel, iterations, stopped = self._optimise(phases, kernel, Z, B, c, "ReducedSVC", monitor, started,
                                                              phase_rows)
        B, c = self._newton(in_row_blocks(X, F, Z, B, kernel, HUBER), Z, B, c, kernel, monitor, started)
        self.classes_ = classes
        self.multiclass_ = "ovr"
        return self._finish(Z, B, c, kernel, iterations, stopped)


@register_estimator
class ReducedSVR(_ReducedSVM, ExpansionAttributes, RegressorMixin, BaseEstimator):
    """A kernel regressor of ``n_vectors`` vectors learned from the targets on every row, on the
    squared error (module docstring).

    Parameters
    ----------
    n_vectors, C, gamma, learn_gamma, max_iter, tol, subsample, newton_steps, max_seconds, warm_start, progress, random_state
        As :class:`ReducedSVC`'s; C weighs the squared error against the ridge on the coefficients (with
        the vectors fixed, one Newton step is the exact ridge solution).
    early_stopping, validation_fraction, n_iter_no_change
        As :class:`ReducedSVC`'s; the held-out loss is the squared error.

    Attributes
    ----------
    expansion_ : KernelExpansion
        The model (also as scikit-learn's ``support_vectors_``, ``dual_coef_``, ``intercept_``).
    n_iter_ : int
        L-BFGS iterations run.
    newton_steps_ : int
        As :class:`ReducedSVC`'s.
    validation_score_ : float or None
        Minus half the held-out rows' mean squared error at the returned iterate (None without
        ``early_stopping``).
    fit_status_ : int
        0, or 1 when ``max_seconds`` stopped the fit.

    Examples
    --------
    >>> import numpy as np
    >>> from leansvm import ReducedSVR
    >>> X = np.linspace(0, 1, 500).reshape(-1, 1)
    >>> model = ReducedSVR(n_vectors=8, C=100.0, gamma=5.0, random_state=0).fit(X, np.sin(6 * X.ravel()))
    >>> model.score(X, np.sin(6 * X.ravel())) > 0.99
    True
    """

    @fit_transaction
    def fit(self, X, y):
        started = time.perf_counter()
        X, y = validate_regression_data(self, X, y)
        n_vectors = self._check_parameters(X.shape[0])
        rng = check_random_state(self.random_state)
        kernel = Kernel("rbf", resolve_gamma(self.gamma, X))
        F = label_targets(y, None)
        X, F, monitor = self._split_off(X, F, rng, classification=False)
        n_vectors = min(n_vectors, X.shape[0])
        Z, B, c, kernel = self._start(X, F, kernel, n_vectors, rng, near_boundary=False)
        phases, phase_rows = self._phase_problems(X, F, "squared", kernel, rng)
        Z, B, c, kernel, iterations, stopped = self._optimise(phases, kernel, Z, B, c, "ReducedSVR", monitor, started,
                                                              phase_rows)
        B, c = self._newton(in_row_blocks(X, F, Z, B, kernel, None), Z, B, c, kernel, monitor, started)
        return self._finish(Z, B, c, kernel, iterations, stopped)

    def predict(self, X):
        return self._output(X)
