"""Regularisation paths: screened + warm-started solutions equal unscreened ones."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from leansvm import svm_path
from leansvm.core.kernels import Kernel
from leansvm.core.problems import c_svc
from leansvm.paths.binary_path import binary_path

from .test_screening import exact_box_qp, gram

CS = np.logspace(-0.6, 0.6, 7)           # C ratio 0.63 between neighbours
_PLAIN = {}


@pytest.fixture(scope="module")
def binary():
    X, y = make_classification(n_samples=160, n_features=5, n_informative=3, flip_y=0.05,
                               random_state=3)
    return (X - X.mean(0)) / X.std(0), np.where(y == 1, 1.0, -1.0)


@pytest.mark.parametrize("kernel,screening", [(Kernel("linear"), "it"), (Kernel("rbf", gamma=0.4), "it"),
                                              (Kernel("rbf", gamma=0.4), "bt1"), (Kernel("rbf", gamma=0.4), "bt2")],
                         ids=["linear-it", "rbf-it", "rbf-bt1", "rbf-bt2"])
def test_screened_path_equals_exact_optima(binary, kernel, screening):
    X, y = binary
    Q = gram(X, y, kernel)
    points = binary_path(X, c_svc(y, 1.0), CS, kernel, screening=screening, tol=1e-6,
                         solver_options={"random_state": 0})
    if kernel.name not in _PLAIN:
        _PLAIN[kernel.name] = binary_path(X, c_svc(y, 1.0), CS, kernel, screening=None, warm_start=False, tol=1e-6,
                                          solver_options={"random_state": 0})
    plain = _PLAIN[kernel.name]
    screened_any = 0
    for p, q in zip(points, plain):
        a = exact_box_qp(Q, np.full(y.size, p.C))
        exact = 0.5 * a @ Q @ a - a.sum()
        assert p.fit.dual_objective == pytest.approx(exact, rel=1e-6)
        assert p.fit.dual_objective == pytest.approx(q.fit.dual_objective, rel=1e-6)
        assert p.n_screened <= p.n_non_sv + 1          # a rate above 1 would mean a wrong screen
        screened_any += p.n_screened
    assert points[0].n_screened == 0                    # no reference for the first C
    if screening != "bt2":
        assert screened_any > 0


def test_trivial_start_uses_lemma9(binary):
    X, y = binary
    kernel = Kernel("rbf", gamma=0.4)
    points = binary_path(X, c_svc(y, 1.0), [1e-4, 1e-3, 0.1, 1.0], kernel, trivial_start=True, tol=1e-6)
    assert points[0].extra.get("lemma9")
    np.testing.assert_allclose(points[0].fit.alpha, 1e-4)
    Q = gram(X, y, kernel)
    for p in points:
        a = exact_box_qp(Q, np.full(y.size, p.C))
        assert p.fit.dual_objective == pytest.approx(0.5 * a @ Q @ a - a.sum(), rel=1e-6)


def test_multiclass_path_matches_unscreened_models(multiclass_problem):
    X, y = multiclass_problem
    Cs = [0.8, 0.9, 1.0]
    screened = svm_path(X, y, Cs, gamma=0.5, screening="it", tol=1e-5)
    plain = svm_path(X, y, Cs, gamma=0.5, screening=None, tol=1e-5)
    assert len(screened.models) == 3 and screened.models[0].classes_.size == 4
    for a, b, oa, ob in zip(screened.models, plain.models, screened.dual_objectives, plain.dual_objectives):
        assert oa.shape == (6,)                           # one dual objective per pair
        np.testing.assert_allclose(oa, ob, rtol=1e-5)
        assert np.mean(a.predict(X) == b.predict(X)) > 0.99
        assert a.score(X, y) > 0.8
    assert np.all(screened.screening_rate[1:] > 0) and screened.screening_rate[0] == 0
    assert np.all(screened.screening_rate <= 1.0)
    assert screened.rule_seconds.shape == screened.solve_seconds.shape == (3,)
    assert [row["C"] for row in screened.table()] == Cs


def test_equality_bias_runs_without_screening(binary):
    X, y = binary
    from leansvm import SVC
    path = svm_path(X, y, [0.5, 2.0], gamma=0.4, fit_intercept="equality", screening=None, tol=1e-5)
    ref = SVC(C=2.0, gamma=0.4, tol=1e-5).fit(X, y)
    assert path.dual_objectives[1][0] == pytest.approx(ref.dual_objective_[0], rel=1e-5)
    with pytest.raises(ValueError, match="unregularised bias"):
        svm_path(X, y, [0.5, 2.0], fit_intercept="equality", screening="it")      # the paper's rules: no


def test_bad_arguments(binary):
    X, y = binary
    with pytest.raises(ValueError, match="positive"):
        svm_path(X, y, [0.0, 1.0])
    with pytest.raises(ValueError, match="repeat"):
        svm_path(X, y, [1.0, 1.0])
    with pytest.raises(ValueError, match="screening"):
        svm_path(X, y, [1.0], screening="dome")
    with pytest.raises(ValueError, match="fit_intercept"):
        svm_path(X, y, [1.0], fit_intercept="maybe")
    with pytest.raises(ValueError):
        svm_path(X, np.zeros(y.size), [1.0])              # one class


@pytest.mark.parametrize("bias", ["augmented", "none"])
def test_box_cd_solver_reaches_the_exact_optimum(binary, bias):
    from leansvm.exact.box_cd import solve_box_cd
    X, y = binary
    kernel = Kernel("rbf", gamma=0.4)
    Q = gram(X, y, kernel, augmented=bias == "augmented")
    C = np.where(np.arange(y.size) % 3 == 0, 2.0, 1.0)        # per-sample bounds
    a = exact_box_qp(Q, C)
    exact = 0.5 * a @ Q @ a - a.sum()
    cold = solve_box_cd(X, c_svc(y, C), kernel, tol=1e-7, bias=bias)
    assert cold.converged and cold.dual_objective == pytest.approx(exact, rel=1e-7)
    # warm start and samples held at their (known) bounds give the same optimum
    held0 = (a == 0) & (np.arange(y.size) % 2 == 0)
    heldC = (a == C) & (np.arange(y.size) % 2 == 0)
    warm = solve_box_cd(X, c_svc(y, C), kernel, tol=1e-7, bias=bias, alpha_init=0.5 * a,
                        fixed_at_zero=held0, fixed_at_C=heldC)
    assert warm.dual_objective == pytest.approx(exact, rel=1e-7)
    assert warm.stats["n_active"] == y.size - held0.sum() - heldC.sum()
    expected_b = float(y @ warm.alpha) if bias == "augmented" else 0.0
    assert warm.intercept == pytest.approx(expected_b)
    with pytest.raises(ValueError, match="box QP"):
        solve_box_cd(X, c_svc(y, C), kernel, bias="equality")


def test_reference_from_solver_margins_equals_recomputed(binary):
    from leansvm.exact.box_cd import solve_box_cd
    from leansvm.paths.screening import ScreeningReference
    X, y = binary
    kernel = Kernel("rbf", gamma=0.4)
    fixed = np.arange(y.size) < 20
    fit = solve_box_cd(X, c_svc(y, np.ones(y.size)), kernel, fixed_at_zero=fixed)
    margins = np.full(y.size, np.nan)
    margins[fit.stats["active"]] = fit.stats["active_margins"]
    a = ScreeningReference.from_solution(X, y, 1.0, fit.alpha, kernel, margins=margins)
    b = ScreeningReference.from_solution(X, y, 1.0, fit.alpha, kernel)
    np.testing.assert_allclose(a.margins, b.margins, rtol=1e-9, atol=1e-9)
    assert a.gap == pytest.approx(b.gap, rel=1e-6, abs=1e-9)


def test_path_command_prints_the_per_C_table(binary, tmp_path, capsys):
    from sklearn.datasets import dump_svmlight_file
    from leansvm.cli import main
    X, y = binary
    dump_svmlight_file(X[:120], y[:120], str(tmp_path / "train.txt"), zero_based=False)
    dump_svmlight_file(X[120:], y[120:], str(tmp_path / "test.txt"), zero_based=False)
    status = main(["path", str(tmp_path / "train.txt"), "--test", str(tmp_path / "test.txt"),
                   "--gamma", "0.4", "--c-min", "0.5", "--c-max", "2", "--n-c", "3"])
    out = capsys.readouterr().out.splitlines()
    assert status == 0
    assert out[1].split() == ["C", "#SV", "screened", "rule", "s", "solve", "s", "accuracy"]
    rows = [line.split() for line in out[2:]]
    assert [float(r[0]) for r in rows] == pytest.approx([0.5, 1.0, 2.0], rel=1e-3)
    assert all(0.5 <= float(r[-1]) <= 1.0 for r in rows)
    assert main(["path", str(tmp_path / "train.txt"), "--c-min", "-1"]) == 2


def test_start_margins_from_the_reference_are_exact(binary):
    from leansvm.exact.box_cd import solve_box_cd
    from leansvm.paths.binary_path import start_margins
    from leansvm.paths.screening import ScreeningReference
    X, y = binary
    kernel = Kernel("rbf", gamma=0.4)
    fit = solve_box_cd(X, c_svc(y, np.full(y.size, 0.5)), kernel)
    ref = ScreeningReference.from_solution(X, y, 0.5, fit.alpha, kernel)
    start = np.where(ref.at_upper, 0.8, ref.alpha)
    start[:5] = 0.0                                        # screened samples held at a bound
    start[5:8] = 0.8
    Q = gram(X, y, kernel)
    np.testing.assert_allclose(start_margins(ref, 0.8, start, X, y, kernel, True), Q @ start,
                               rtol=1e-10, atol=1e-10)


def test_rescaled_margins_without_a_reference_are_exact(binary):
    """The warm start's margins when no screening reference was built: the bounded SVs' part scales
    with C (product over the free SVs only), then the screened samples' columns."""
    from leansvm.exact.box_cd import solve_box_cd
    from leansvm.paths.binary_path import _rescaled_margins
    X, y = binary
    kernel = Kernel("rbf", gamma=0.4)
    fit = solve_box_cd(X, c_svc(y, np.full(y.size, 0.5)), kernel, tol=1e-6)
    at_upper = fit.alpha >= 0.5
    assert at_upper.sum() >= 5 and np.sum((fit.alpha > 0) & ~at_upper) >= 5
    start = np.where(at_upper, 0.8, fit.alpha)
    start[:5] = 0.0                                        # screened samples held at a bound
    start[5:8] = 0.8
    Q = gram(X, y, kernel)
    got = _rescaled_margins(fit.stats["margins"], fit.alpha, at_upper, 0.8 / 0.5, np.full(y.size, 0.8), start,
                            X, y, kernel, True, None)
    np.testing.assert_allclose(got, Q @ start, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("cache_mb,shrinking", [(50.0, False), (0.02, False), (50.0, True), (50.0, "compact"),
                                              (0.02, "compact")],
                         ids=["whole-cache", "tiny-cache", "shrinking", "compact", "compact-tiny-cache"])
def test_cached_solver_on_a_subset_of_shared_rows(binary, cache_mb, shrinking):
    """The descent on a shared row cache (rows over a larger set, the problem a subset of them)
    reaches the exact optimum, with rows evicted and fetched again (tiny cache) or shrinking."""
    from leansvm.exact.box_cd import PathKernelCache, solve_box_cd_cached
    X, y = binary
    kernel = Kernel("rbf", gamma=0.4)
    rng = np.random.default_rng(0)
    extra = rng.normal(size=(40, X.shape[1]))              # rows of the cache not in the problem
    X_all = np.vstack([extra, X])
    index = np.arange(40, 40 + y.size)
    cache = PathKernelCache(kernel, X_all, cache_mb, np.float64)
    if cache_mb < 1:
        assert cache.capacity < y.size                     # the test really evicts rows
    C = np.where(np.arange(y.size) % 3 == 0, 2.0, 1.0)
    Q = gram(X, y, kernel)
    a = exact_box_qp(Q, C)
    exact = 0.5 * a @ Q @ a - a.sum()
    fit = solve_box_cd_cached(cache, index, c_svc(y, C), tol=1e-7, shrinking=shrinking)
    assert fit.converged and fit.dual_objective == pytest.approx(exact, rel=1e-7)
    if shrinking:
        assert fit.stats["n_restore"] > 0                  # samples were shrunk and brought back
    if shrinking == "compact":                             # work counted as without shrinking (solver choice)
        assert fit.stats["visits"] == fit.n_iter * y.size
    if cache_mb < 1:
        assert fit.stats["row_fetches"] > 0
    np.testing.assert_allclose(fit.stats["margins"], Q @ fit.alpha, rtol=1e-8, atol=1e-8)
    held0 = (a == 0) & (np.arange(y.size) % 2 == 0)
    warm = solve_box_cd_cached(cache, index, c_svc(y, C), tol=1e-7, alpha_init=0.5 * a, fixed_at_zero=held0,
                               shrinking=shrinking)
    assert warm.dual_objective == pytest.approx(exact, rel=1e-7)
    np.testing.assert_allclose(warm.stats["margins"], Q @ warm.alpha, rtol=1e-8, atol=1e-8)


def test_compact_shrinking_out_of_steps_warns_and_stays_feasible(binary):
    """max_iter reached while samples are shrunk: ConvergenceWarning, a point in the box, and exact
    margins (the shrunk gradients restored)."""
    from sklearn.exceptions import ConvergenceWarning

    from leansvm.exact.box_cd import PathKernelCache, solve_box_cd_cached
    X, y = binary
    kernel = Kernel("rbf", gamma=0.4)
    cache = PathKernelCache(kernel, X, 50.0, np.float64)
    C = np.full(y.size, 50.0)
    with pytest.warns(ConvergenceWarning) as caught:
        fit = solve_box_cd_cached(cache, np.arange(y.size), c_svc(y, C), tol=1e-9, shrinking="compact", max_iter=200)
    message = next(str(w.message) for w in caught if "coordinate descent" in str(w.message))
    assert "violation inf" not in message and np.isfinite(fit.stats["violation"])   # measured, not left at inf
    assert not fit.converged and fit.n_iter == 200 and fit.stats["n_restore"] > 0   # stopped while shrunk
    assert np.all(fit.alpha >= 0) and np.all(fit.alpha <= C)
    np.testing.assert_allclose(fit.stats["margins"], gram(X, y, kernel) @ fit.alpha, rtol=1e-8, atol=1e-8)
    with pytest.raises(ValueError, match="shrinking"):
        solve_box_cd_cached(cache, np.arange(y.size), c_svc(y, C), shrinking="sometimes")


def test_pairs_share_one_row_cache_with_the_same_optima():
    """svm_path's shared cache (one for all pairs, float32 rows) gives the optima of separate paths."""
    X, y = make_classification(n_samples=150, n_features=5, n_informative=3, n_classes=3,
                               n_clusters_per_class=1, random_state=1)
    shared = svm_path(X, y, [0.5, 2.0], gamma=0.3, tol=1e-3)
    separate = svm_path(X, y, [0.5, 2.0], gamma=0.3, tol=1e-3, n_jobs=2)
    for a, b in zip(shared.dual_objectives, separate.dual_objectives):
        np.testing.assert_allclose(a, b, rtol=1e-3)


@pytest.mark.parametrize("cd_visit_ns,shrink_min,kept", [(1e6, 5000, True), (1e6, 0, True), (1e-6, 5000, False)],
                         ids=["irwls-kept", "shrinking", "back-to-cd"])
def test_auto_solver_hands_over_to_irwls_with_the_same_optima(binary, monkeypatch, cd_visit_ns, shrink_min, kept):
    """solver='auto' tries IRWLS once its cost model says a CD solve cost more than IRWLS would
    (forced here from the second C; with CD shrinking at every C in the second case). A trial that
    costs less than the last CD solve keeps IRWLS for every later C; one that costs more (CD
    made nearly free) goes back to CD for good, as no later CD solve costs more than the trial.
    The optima, the margins the next screening reference reads, and the screening stay exact."""
    import leansvm.paths.binary_path as path_module
    monkeypatch.setattr(path_module, "IRWLS_PRIOR_CHUNKS", 0)
    monkeypatch.setattr(path_module, "CD_VISIT_NS", cd_visit_ns)
    monkeypatch.setattr(path_module, "SHRINK_MIN_ACTIVE", shrink_min)
    X, y = binary
    kernel = Kernel("rbf", gamma=0.4)
    Q = gram(X, y, kernel)
    points = binary_path(X, c_svc(y, 1.0), CS, kernel, screening="it", tol=1e-6, solver="auto",
                         solver_options={"random_state": 0, "cache_size": 10.0})
    solvers = [p.fit.stats.get("solver", "cd") for p in points]
    assert solvers[:3] == ["cd", "cd", "irwls"]          # the first, cold, CD solve decides nothing
    if kept:
        assert all(s == "irwls" for s in solvers[2:])
    else:
        assert solvers[3:] == ["cd"] * (len(CS) - 3)
    for p in points:
        a = exact_box_qp(Q, np.full(y.size, p.C))
        assert p.fit.dual_objective == pytest.approx(0.5 * a @ Q @ a - a.sum(), rel=1e-6)
        if p.fit.stats.get("solver") == "irwls":
            np.testing.assert_allclose(p.fit.stats["margins"], Q @ p.fit.alpha, rtol=1e-9, atol=1e-9)


def test_large_problems_get_the_large_irwls_working_set_unless_one_is_given(binary, monkeypatch):
    import leansvm.paths.binary_path as path_module
    seen = []
    real = path_module.solve_irwls

    def spy(*args, **kwargs):
        seen.append(kwargs.get("working_set_size"))
        return real(*args, **kwargs)

    monkeypatch.setattr(path_module, "solve_irwls", spy)
    monkeypatch.setattr(path_module, "LARGE_PROBLEM", 10)
    X, y = binary
    kernel = Kernel("rbf", gamma=0.4)
    for given, expected in ((None, path_module.LARGE_WORKING_SET), (64, 64)):
        seen.clear()
        binary_path(X, c_svc(y, 1.0), CS[:2], kernel, solver="irwls", tol=1e-4,
                    solver_options={"working_set_size": given, "cache_size": 10.0})
        assert seen and set(seen) == {expected}


def test_gap_rule_and_dynamic_screening_with_the_unregularised_bias(binary):
    """LIBSVM's formulation: a path screened by the gap rule, statically and during each solve,
    reaches LIBSVM's dual objective at every C."""
    X, y = binary
    from leansvm import SVC
    Cs = [0.3, 0.5, 1.0, 2.0]
    path = svm_path(X, y, Cs, gamma=0.4, fit_intercept="equality", screening="gap", dynamic=True, tol=1e-6)
    assert path.n_screened.sum() + sum(pt.extra["dynamic"] for pt in path.binary_points[0]) > 0
    for k, C in enumerate(Cs):
        ref = SVC(C=C, gamma=0.4, tol=1e-7).fit(X, y)
        assert path.dual_objectives[k][0] == pytest.approx(ref.dual_objective_[0], rel=1e-6)


@pytest.mark.parametrize("screening", ["it", "gap"])
def test_dynamic_screening_keeps_the_exact_optima(binary, screening):
    X, y = binary
    kernel = Kernel("rbf", gamma=0.4)
    Q = gram(X, y, kernel)
    points = binary_path(X, c_svc(y, 1.0), CS, kernel, screening=screening, dynamic=True, tol=1e-6)
    dynamic = 0
    for p in points:
        a = exact_box_qp(Q, np.full(y.size, p.C))
        assert p.fit.dual_objective == pytest.approx(0.5 * a @ Q @ a - a.sum(), rel=1e-6)
        dynamic += p.extra["dynamic"]
    assert dynamic > 0


@pytest.mark.parametrize("cache_mb", [50.0, 0.02], ids=["whole-cache", "tiny-cache"])
def test_whole_row_outputs_equal_the_gathered_ones(binary, cache_mb):
    """KernelRowCache.outputs over every column in order (no column gather) gives exactly what
    the gathered sum gives (two halves of the columns), with rows evicted between batches too
    (tiny cache)."""
    from leansvm.exact.box_cd import PathKernelCache
    X, y = binary
    kernel = Kernel("rbf", gamma=0.4)
    rng = np.random.default_rng(0)
    rows = rng.permutation(y.size)[: y.size // 2 + 3]
    coef = rng.normal(size=rows.size)
    cols = np.arange(y.size)
    fast = PathKernelCache(kernel, X, cache_mb, np.float32)
    plain = PathKernelCache(kernel, X, cache_mb, np.float32)
    got = fast.outputs(rows, coef, cols, 1.0)
    half = y.size // 2
    want = np.concatenate([plain.outputs(rows, coef, cols[:half], 1.0), plain.outputs(rows, coef, cols[half:], 1.0)])
    np.testing.assert_array_equal(got, want)
    K = kernel(X) + 1.0
    np.testing.assert_allclose(got, K[rows].T @ coef, rtol=1e-5, atol=1e-5 * np.abs(coef).sum())


def test_cold_start_on_a_kernel_larger_than_the_cache_uses_irwls(binary):
    """A path whose rows do not all fit the cache solves its first (cold) C with IRWLS, then goes on
    with the 'auto' choice; every C reaches the optimum of the path with the whole kernel cached."""
    X, y = binary
    kernel = Kernel("rbf", gamma=0.4)
    small_mb = 0.5 * y.size * y.size * 8 / 2**20            # about half the rows (float64 rows at tol < 1e-4)
    small = binary_path(X, c_svc(y, 1.0), CS, kernel, screening="it", tol=1e-5, solver_options={"cache_size": small_mb})
    whole = binary_path(X, c_svc(y, 1.0), CS, kernel, screening="it", tol=1e-5, solver_options={"cache_size": 100.0})
    assert small[0].fit.stats.get("solver") == "irwls"
    assert whole[0].fit.stats.get("solver", "cd") == "cd"
    assert small[1].fit.stats.get("solver", "cd") == "cd"     # the warm-started C are CD's again
    for a, b in zip(small, whole):
        assert a.fit.dual_objective == pytest.approx(b.fit.dual_objective, rel=1e-6)


def test_every_computed_reference_screens_the_next_step(binary, monkeypatch):
    """The adaptive skip of useless rules must not waste a reference already paid for: along coarse
    C steps (the IT rule's potential is small, so most references are skipped) every step that
    holds a reference computed for its C screens with it."""
    from leansvm.paths.binary_path import _PathRun
    X, y = binary
    steps = []                                       # (a reference was there, a rule screened)
    real = _PathRun._screen

    def spy(self, C, *args, **kwargs):
        result = real(self, C, *args, **kwargs)
        steps.append((self.ref is not None, result[0] is not None))
        return result

    monkeypatch.setattr(_PathRun, "_screen", spy)
    svm_path(X, y, np.logspace(-1, 4, 9), gamma=0.5, screening="it")
    held = [screened for had_reference, screened in steps if had_reference]
    assert 0 < len(held) < len(steps)                # some references were skipped
    assert all(held)


def test_a_resumed_path_reaches_the_optima_of_the_uninterrupted_one(binary):
    """``start=``: a path that goes on from an earlier part's last point (the main job's search
    resumes its pilot paths and extends windows so) reaches the same optima, warm from there."""
    X, y = binary
    kernel = Kernel("rbf", gamma=0.4)
    whole = binary_path(X, c_svc(y, 1.0), CS, kernel, screening=None, tol=1e-6)
    first = binary_path(X, c_svc(y, 1.0), CS[:3], kernel, screening=None, tol=1e-6)
    rest = binary_path(X, c_svc(y, 1.0), CS[3:], kernel, screening=None, tol=1e-6, start=first[-1])
    Q = gram(X, y, kernel)
    for p, q in zip(first + rest, whole):
        a = exact_box_qp(Q, np.full(y.size, p.C))
        assert p.fit.dual_objective == pytest.approx(0.5 * a @ Q @ a - a.sum(), rel=1e-6)
        assert p.fit.dual_objective == pytest.approx(q.fit.dual_objective, rel=1e-6)
    cold = binary_path(X, c_svc(y, 1.0), CS[3:4], kernel, screening=None, tol=1e-6)
    assert rest[0].fit.n_iter == whole[3].fit.n_iter < cold[0].fit.n_iter   # warm, as if never stopped
    with pytest.raises(ValueError, match="above its last C"):
        binary_path(X, c_svc(y, 1.0), CS[2:], kernel, start=first[-1])
    with pytest.raises(ValueError, match="this problem's path"):              # a point of another problem
        binary_path(X[:100], c_svc(y[:100], 1.0), CS[3:], kernel, start=first[-1])


def test_a_resumed_path_makes_the_irwls_trial_its_last_cd_solve_called_for(binary, monkeypatch):
    """Split right after the CD solve that calls for an IRWLS trial, the resumed part makes that
    trial at its first C, as the uninterrupted path does (before, the decision was lost with the
    solver and the resumed part went on with CD)."""
    import leansvm.paths.binary_path as path_module
    X, y = binary
    kernel = Kernel("rbf", gamma=0.4)
    monkeypatch.setattr(path_module, "IRWLS_PRIOR_CHUNKS", 0.01)    # IRWLS expected cheap: a trial soon

    def solvers(points):
        return [p.fit.stats.get("solver", "cd") for p in points]
    whole = binary_path(X, c_svc(y, 1.0), CS, kernel, screening=None, tol=1e-6)
    k = solvers(whole).index("irwls")
    assert k >= 2 and "irwls_trial_against" in whole[k - 1].fit.stats
    first = binary_path(X, c_svc(y, 1.0), CS[:k], kernel, screening=None, tol=1e-6)
    rest = binary_path(X, c_svc(y, 1.0), CS[k:], kernel, screening=None, tol=1e-6, start=first[-1])
    assert solvers(first + rest) == solvers(whole)
    for p, q in zip(rest, whole[k:]):
        assert p.fit.dual_objective == pytest.approx(q.fit.dual_objective, rel=1e-6)


def test_a_path_starting_from_zero_at_a_large_C_starts_with_irwls(monkeypatch):
    """A path whose first C is large (Lemma 9's a = C c does not beat 0) on a problem of
    IRWLS_START_MIN_SAMPLES or more solves with IRWLS from its first C; the optima are CD's."""
    import leansvm.paths.binary_path as path_module
    X, y = make_classification(n_samples=300, n_features=5, n_informative=3, flip_y=0.05, random_state=3)
    X, y = (X - X.mean(0)) / X.std(0), np.where(y == 1, 1.0, -1.0)
    kernel, Cs = Kernel("rbf", gamma=0.05), [64.0, 128.0]
    options = {"random_state": 0, "cache_size": 50.0}
    monkeypatch.setattr(path_module, "IRWLS_START_MIN_SAMPLES", 200)
    started = binary_path(X, c_svc(y, 1.0), Cs, kernel, screening=None, tol=1e-6, solver_options=options)
    monkeypatch.setattr(path_module, "IRWLS_START_MIN_SAMPLES", 400)
    small = binary_path(X, c_svc(y, 1.0), Cs, kernel, screening=None, tol=1e-6, solver_options=options)
    assert [p.fit.stats.get("solver", "cd") for p in started] == ["irwls", "irwls"]
    assert small[0].fit.stats.get("solver", "cd") == "cd"
    for a, b in zip(started, small):
        assert a.fit.dual_objective == pytest.approx(b.fit.dual_objective, rel=1e-6)
