"""ReducedSVC / ReducedSVR: a small kernel model trained from the labels (leansvm.reduced)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_friedman1, make_moons

from leansvm import SVC, ReducedSVC, ReducedSVR, io
from leansvm.budget.landmarks import LandmarkSVC, LandmarkSVR
from leansvm.core.kernels import Kernel
from leansvm.reduced.reduced_svm import HUBER, LabelProblem


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(n_samples=3000, noise=0.25, random_state=0)
    return X[:2000], y[:2000], X[2000:], y[2000:]


@pytest.mark.parametrize("loss, huber", [("margin", HUBER), ("margin", None), ("squared", None)])
def test_the_objective_s_gradient_is_its_derivative(loss, huber):
    """Smoothed hinge (its linear part included), squared hinge and squared error, with the ridge on
    the coefficients and a learned gamma: central differences of the float64 row blocks' objective."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    F = np.where(rng.random((300, 1)) < 0.5, -1.0, 1.0) if loss == "margin" else rng.normal(size=(300, 1))
    problem = LabelProblem(Kernel("rbf", 0.4), X, F, [(None, np.arange(1))], 6, loss=loss, block_dtype=np.float64,
                           learn_gamma=True, ridge=0.3, huber=huber)
    theta = problem.pack(rng.normal(size=(6, 3)), 3.0 * rng.normal(size=(6, 1)), np.array([0.2]))
    _, grad = problem.objective(theta)
    h = 1e-6
    numeric = np.array([(problem.objective(theta + h * e)[0] - problem.objective(theta - h * e)[0]) / (2 * h)
                        for e in np.eye(theta.size)])
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)


def test_the_smoothed_hinge_is_linear_beyond_its_zone():
    F = np.array([[1.0], [1.0], [-1.0]])
    problem = LabelProblem(Kernel("rbf", 1.0), np.zeros((3, 1)), F, [(None, np.arange(1))], 1, loss="margin",
                           block_dtype=np.float64, huber=1.0)
    pred = np.array([[2.0], [0.5], [3.0]])             # violations u = 0, 0.5, 4
    R = problem.residuals(pred)
    np.testing.assert_allclose(R.ravel(), [0.0, 0.5, -1.0])
    # 1/2 u^2 inside the zone, u - 1/2 beyond: 0 + 0.125 + 3.5
    assert 0.5 * float((R ** 2).sum()) + problem.loss_beyond_residuals(pred) == pytest.approx(3.625)


def test_a_few_vectors_from_the_labels_match_the_exact_svm_and_beat_nystroem(moons):
    X, y, Xt, yt = moons
    exact = SVC(C=1.0, gamma=1.0).fit(X, y)
    reduced = ReducedSVC(n_vectors=6, C=1.0, gamma=1.0, random_state=0).fit(X, y)
    nystroem = LandmarkSVC(budget=6, C=1.0, gamma=1.0, random_state=0).fit(X, y)
    assert reduced.expansion_.n_support == 6 and reduced.fit_status_ == 0
    assert exact.expansion_.n_support > 300
    # 0.940 against 0.944 and 0.880 on this draw (from 8 vectors on, Nystroem's landmarks catch up)
    assert reduced.score(Xt, yt) >= exact.score(Xt, yt) - 0.01
    assert reduced.score(Xt, yt) > nystroem.score(Xt, yt) + 0.03


def test_many_classes_one_output_each_and_the_model_round_trips(tmp_path):
    X, y = make_classification(n_samples=1500, n_features=6, n_informative=4, n_classes=3, n_clusters_per_class=1,
                               random_state=3)
    model = ReducedSVC(n_vectors=20, random_state=0).fit(X[:1000], y[:1000])
    assert model.multiclass_ == "ovr" and model.decision_function(X[1000:]).shape == (500, 3)
    assert model.score(X[1000:], y[1000:]) >= SVC().fit(X[:1000], y[:1000]).score(X[1000:], y[1000:]) - 0.03
    io.save_model(model, tmp_path / "m.npz")
    np.testing.assert_array_equal(io.load_model(tmp_path / "m.npz").predict(X[1000:]), model.predict(X[1000:]))


def test_a_binary_model_is_a_libsvm_file(tmp_path, moons):
    X, y, Xt, _ = moons
    model = ReducedSVC(n_vectors=10, gamma=1.0, random_state=0).fit(X, y)
    io.save_libsvm_model(model, tmp_path / "m.model")
    np.testing.assert_array_equal(io.load_libsvm_model(tmp_path / "m.model").predict(Xt), model.predict(Xt))


def test_regression_on_the_squared_error_beats_nystroem_ridge_at_the_same_size():
    X, z = make_friedman1(n_samples=3000, noise=0.3, random_state=0)
    reduced = ReducedSVR(n_vectors=30, C=100.0, gamma=0.1, random_state=0).fit(X[:2000], z[:2000])
    ridge = LandmarkSVR(budget=30, C=100.0, gamma=0.1, random_state=0).fit(X[:2000], z[:2000])
    assert reduced.score(X[2000:], z[2000:]) > max(ridge.score(X[2000:], z[2000:]), 0.85)


def test_phases_double_the_rows():
    assert ReducedSVC(subsample=25000)._phase_rows(200000) == [25000, 50000, 100000, 200000]
    assert ReducedSVC(subsample=25000)._phase_rows(20000) == [20000]
    assert ReducedSVC(subsample=None)._phase_rows(10**6) == [10**6]


@pytest.mark.parametrize("huber", [1.0, None])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_newton_sums_are_the_kernel_s_over_the_quadratic_zone(huber, dtype):
    from leansvm.reduced.newton import KernelRows
    rng = np.random.RandomState(0)
    X, Z = rng.randn(3000, 5), rng.randn(40, 5)
    F = np.sign(rng.randn(3000, 3)) if huber else rng.randn(3000, 1)
    B, c = 0.3 * rng.randn(40, F.shape[1]), 0.1 * rng.randn(F.shape[1])
    sums = KernelRows(sp.csr_matrix(X) if dtype == np.float32 else X, F, huber, dtype).sums(Z, B, c, 0.3)
    K = Kernel("rbf", 0.3)(X, Z)
    O = K @ B + c
    U = 1 - F * O if huber else F - O
    quad = (U > 0) & (U <= 1) if huber else np.ones(U.shape, dtype=bool)
    beyond = U > 1 if huber else ~quad
    loss = np.where(quad, 0.5 * U ** 2, 0) + np.where(beyond, U - 0.5, 0)
    tol = dict(rtol=1e-5, atol=1e-3) if dtype == np.float32 else dict(rtol=1e-10)
    np.testing.assert_allclose(sums.loss, loss.sum(axis=0), **tol)
    np.testing.assert_array_equal(sums.active, quad.sum(axis=0))
    for j in range(F.shape[1]):
        KA = K[quad[:, j]]
        np.testing.assert_allclose(sums.gram[j], KA.T @ KA, **tol)
        np.testing.assert_allclose(sums.ones[j], KA.sum(axis=0), **tol)
        np.testing.assert_allclose(sums.rhs[j], K.T @ (F[:, j] * (quad[:, j] + beyond[:, j])), **tol)


def test_newton_steps_reach_the_minimiser_of_the_coefficients_with_the_vectors_fixed():
    """From zero, the steps land where the gradient of 1/(2C)||beta||^2 + sum_i h(u_i) is zero, and the
    objective falls at every step; L-BFGS-B on the same objective agrees."""
    from scipy.optimize import minimize

    from leansvm.reduced.newton import KernelRows, newton_coefficients
    X, y = make_moons(n_samples=800, noise=0.3, random_state=1)
    F = np.where(y == 1, 1.0, -1.0)[:, None]
    Z, C, kernel = X[::40], 10.0, Kernel("rbf", 1.0)
    rows = KernelRows(X, F, 1.0, np.float64)
    sums = lambda B, c, system: rows.sums(Z, B, c, kernel.gamma, system)  # noqa: E731
    B, c, steps = newton_coefficients(sums, np.zeros((20, 1)), np.zeros(1), C, 30, tol=1e-12)
    K = kernel(X, Z)

    def objective(w):
        u = 1 - F[:, 0] * (K @ w[:-1] + w[-1])
        h = np.where(u > 1, u - 0.5, np.where(u > 0, 0.5 * u ** 2, 0))
        g = np.where(u > 1, 1.0, np.maximum(u, 0)) * -F[:, 0]
        return h.sum() + 0.5 / C * w[:-1] @ w[:-1], np.append(K.T @ g + w[:-1] / C, g.sum())

    w = np.append(B[:, 0], c)
    assert 1 < steps < 30
    assert np.abs(objective(w)[1]).max() < 1e-6
    best = minimize(objective, np.zeros(21), jac=True, method="L-BFGS-B", options=dict(maxiter=5000, gtol=1e-10))
    assert objective(w)[0] <= best.fun + 1e-9


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_newton_steps_are_kept_only_where_they_lower_the_held_out_loss(monkeypatch, moons):
    """After L-BFGS the steps fit the coefficients on every row; the held-out loss decides: kept where it
    falls (5 iterations at C = 0.1: the steps lower the training objective from 621 to 597), dropped where
    the iterate L-BFGS chose on it was better (moons at C = 1, 1,000 iterations)."""
    import leansvm.reduced.reduced_svm as module
    real, seen = module._ReducedSVM._newton, []

    def recorded(self, *args):
        before = self.validation_score_
        out = real(self, *args)
        seen.append((before, self.validation_score_, self.newton_steps_))
        return out

    monkeypatch.setattr(module._ReducedSVM, "_newton", recorded)
    X, y = make_moons(n_samples=5000, noise=0.3, random_state=2)
    ReducedSVC(n_vectors=30, gamma=1.0, C=0.1, subsample=500, max_iter=5, random_state=0,
               progress=False).fit(X, y)
    Xm, ym = moons[:2]
    ReducedSVC(n_vectors=20, gamma=1.0, random_state=0, progress=False).fit(Xm, ym)
    (before, after, steps), (before_m, after_m, steps_m) = seen
    assert steps >= 1 and after > before
    assert steps_m == 0 and after_m == before_m


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_each_phase_gets_half_the_iterations_left_and_passes_on_what_it_leaves(monkeypatch):
    """A phase that stops early (held-out loss, tol) leaves its iterations to the phases after it."""
    import leansvm.reduced.reduced_svm as module
    real, given = module.optimise_vectors, []

    def recorded(*args, max_iter, **kwargs):
        given.append(max_iter)
        return real(*args, max_iter=min(max_iter, 5), **kwargs)      # every phase stops after 5

    monkeypatch.setattr(module, "optimise_vectors", recorded)
    X, y = make_moons(n_samples=4000, noise=0.25, random_state=0)
    model = ReducedSVC(n_vectors=6, gamma=1.0, max_iter=100, subsample=1000, early_stopping=False,
                       newton_steps=0, random_state=0).fit(X, y)
    assert given == [50, 47, 90]                      # 1,000, 2,000, 4,000 rows: half of 100 - 5 k, then the rest
    assert model.n_iter_ == 15


@pytest.mark.parametrize("newton_steps", [0, 3])
def test_under_a_time_limit_every_phase_runs_or_is_dropped_before_the_newton_steps(monkeypatch, newton_steps):
    """Each phase but the last stops at half the time left, so the last phases (the most rows) are
    reached; before, the first phase ran until the time was spent. With Newton steps to follow, a phase
    forecast to run fewer than MIN_PHASE_ITERATIONS iterations is dropped (here: 10 ms an iteration on
    1,000 rows, so 40 ms on 4,000, 4 s for 100 of them) and the phase before it gets its time."""
    import time as clock
    from types import SimpleNamespace

    import leansvm.reduced.reduced_svm as module
    phases = []

    def slow(problem, Z, B, c, max_iter, callback, **kwargs):    # an iteration of 10 ms until told to stop
        phases.append(problem.N)
        res = SimpleNamespace(kernel=Kernel("rbf", 1.0), nit=0, best_score=None, status=0, fun=0.0)
        try:
            while res.nit < max_iter:
                clock.sleep(0.01)
                res.nit += 1
                callback(None)
        except StopIteration:
            pass
        return Z, B, c, res

    monkeypatch.setattr(module, "optimise_vectors", slow)
    X, y = make_moons(n_samples=4000, noise=0.25, random_state=0)
    model = ReducedSVC(n_vectors=6, gamma=1.0, max_iter=10**6, subsample=1000, early_stopping=False,
                       max_seconds=0.6, newton_steps=newton_steps, random_state=0).fit(X, y)
    assert phases == ([1000, 2000, 4000] if newton_steps == 0 else [1000, 2000]) and model.fit_status_ == 1


def test_held_out_rows_stop_a_fit_that_would_overfit():
    """150 free vectors on 1,800 noisy rows at C = 100: L-BFGS run to its end fits the noise; the iterate
    chosen on the held-out rows' loss tests better (3 points on this draw, 1.1-3.2 over four draws)."""
    X, y = make_moons(n_samples=3000, noise=0.35, random_state=0)
    make = lambda stop: ReducedSVC(n_vectors=150, C=100.0, gamma=2.0, max_iter=1500, early_stopping=stop,  # noqa: E731
                                   random_state=0).fit(X[:2000], y[:2000])
    stopped, ran = make(True), make(False)
    assert stopped.n_iter_ < ran.n_iter_ and stopped.validation_score_ is not None and ran.validation_score_ is None
    assert stopped.score(X[2000:], y[2000:]) > ran.score(X[2000:], y[2000:]) + 0.015


def test_the_start_s_ridge_is_on_the_coefficients():
    """ridge_refit(on_coefficients=True) minimises 1/(2C) ||a||^2 + 1/2 sum (z - K a - b)^2: its normal
    equations hold, and a stays small where the vectors nearly coincide (K_SV near singular)."""
    from leansvm.budget.bsgd_refit import ridge_refit
    rng = np.random.default_rng(1)
    X, Z = rng.normal(size=(400, 2)), rng.normal(scale=0.05, size=(30, 2))
    z = np.sin(X[:, :1])
    kernel, C = Kernel("rbf", 2.0), 100.0
    a, b = ridge_refit(kernel, Z, X, z, C, on_coefficients=True)
    K = kernel.block(X, Z)
    r = z - K @ a - b
    np.testing.assert_allclose(K.T @ r, a / C, atol=1e-8)           # d/da = 0
    np.testing.assert_allclose(r.sum(axis=0), 0.0, atol=1e-8)        # d/db = 0
    assert np.abs(a).max() < 1e3 < np.abs(ridge_refit(kernel, Z, X, z, C)[0]).max()


def test_a_time_limit_keeps_the_model_as_it_stands_and_says_so(moons):
    X, y, Xt, yt = moons
    model = ReducedSVC(n_vectors=10, gamma=1.0, max_seconds=1e-9, random_state=0).fit(X, y)
    assert model.fit_status_ == 1 and model.n_iter_ <= 1
    assert model.score(Xt, yt) > 0.8                 # the start: k-means++ centres and their ridge fit


def test_a_warm_start_grows_the_previous_model(moons):
    X, y, Xt, yt = moons
    model = ReducedSVC(n_vectors=8, gamma=1.0, random_state=0).fit(X, y)
    small = model.expansion_
    model.set_params(n_vectors=16, warm_start=True, max_iter=1)
    model.fit(X, y)
    assert model.expansion_.n_support == 16
    # one iteration from the previous vectors (new ones at zero coefficients) keeps its accuracy
    first = np.asarray(model.expansion_.support_vectors[:8])
    assert np.abs(first - np.asarray(small.support_vectors)).max() < 0.5
    assert model.score(Xt, yt) > 0.9


@pytest.mark.parametrize("params, message", [(dict(n_vectors=0), "n_vectors"), (dict(C=-1.0), "C"),
                                             (dict(learn_gamma="yes"), "learn_gamma"),
                                             (dict(max_seconds=0), "max_seconds"),
                                             (dict(early_stopping=1), "early_stopping"),
                                             (dict(validation_fraction=1.0), "validation_fraction"),
                                             (dict(n_iter_no_change=0), "n_iter_no_change"),
                                             (dict(newton_steps=-1), "newton_steps")])
def test_bad_parameters_are_named(moons, params, message):
    X, y, _, _ = moons
    with pytest.raises(ValueError, match=message):
        ReducedSVC(**params).fit(X, y)


def test_bad_data_is_named(moons):
    X, y, _, _ = moons
    holed = X.copy()
    holed[3, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ReducedSVC(n_vectors=5).fit(holed, y)
    with pytest.raises(ValueError, match="class"):
        ReducedSVC(n_vectors=5).fit(X[:50], np.zeros(50))


def test_a_learned_gamma_stays_within_its_factor_of_the_start():
    """Data a linear model separates pulls gamma towards 0 (a nearly linear kernel, whose columns then
    differ by float32's rounding): it stops at the start's gamma / GAMMA_FACTOR."""
    from leansvm.reduced.reduced_svm import GAMMA_FACTOR
    X, y = make_classification(n_samples=1500, n_features=20, n_informative=20, n_redundant=0, class_sep=4.0,
                               random_state=0)
    model = ReducedSVC(n_vectors=20, gamma=0.05, max_iter=600, random_state=0).fit(X, y)
    assert model.expansion_.kernel.gamma == pytest.approx(0.05 / GAMMA_FACTOR, rel=1e-9)     # at the bound
