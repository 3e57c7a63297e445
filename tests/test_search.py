"""The main job's wide (C, gamma) search (leansvm.paths.search): planted optima are found, edges
extend, halving keeps the best cell, and every scored cell is a real K-fold accuracy."""

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.svm import SVC as LibsvmSVC

from leansvm import SVCCV
from leansvm.core.kernels import resolve_gamma
from leansvm.paths.search import choose_cell, stratified_order, wide_search


def stripes(n=800, count=12, seed=0):
    """Alternating vertical stripes on the unit square, standardised: the narrower the stripes, the
    larger the best gamma relative to 'scale' = 1 / (d Var X)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, 2))
    y = (np.floor(X[:, 0] * count) % 2).astype(int)
    return (X - X.mean(0)) / X.std(0), y


def test_stratified_order_keeps_class_shares_in_every_prefix():
    y = np.array([0] * 90 + [1] * 10)
    order = stratified_order(y, random_state=3)
    assert sorted(order) == list(range(100))
    for size in (10, 20, 50, 77):
        assert abs(np.sum(y[order[:size]] == 1) - 0.1 * size) <= 1


def test_planted_gamma_thirty_times_scale_is_found():
    """12 stripes: LIBSVM's own 5-fold CV peaks near 2^4-2^5 x 'scale' (the old 3x3 grid stopped at
    3x); the search lands within an octave of LIBSVM's best gamma, as accurate as it."""
    X, y = stripes()
    scale = resolve_gamma("scale", X)
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    libsvm = {k: max(cross_val_score(LibsvmSVC(C=C, gamma=scale * 2.0 ** k), X, y, cv=folds).mean()
                     for C in 2.0 ** np.arange(4, 11, 2)) for k in range(2, 7)}
    best_k = max(libsvm, key=libsvm.get)
    assert best_k >= 4                                    # the plant: far above 'scale'
    found = wide_search(X, y, progress=False)
    assert abs(np.log2(found.gamma / scale) - best_k) <= 1
    assert found.accuracy >= libsvm[best_k] - 0.01


def noisy_stripes(flip=0.2):
    """Two wide stripes with a fifth of the labels flipped: strong regularisation wins (best C ~ 1)."""
    X, y = stripes(count=2, seed=1)
    flipped = np.random.default_rng(1).random(y.size) < flip
    return X, np.where(flipped, 1 - y, y)


def test_planted_small_C_is_found():
    """Per-sample weights times 16 make the same problem's best C 16 times smaller (C_i = C c_i):
    a plant whose optimum lies 4 octaves lower, near 2^-4 (the old grid's smallest C was 1)."""
    X, y = noisy_stripes()
    # at LIBSVM's tolerance (1e-3) the plain optimum lies at C <= 2^1
    plain = wide_search(X, y, tol=1e-3, progress=False)
    weighted = wide_search(X, y, class_weight={0: 16.0, 1: 16.0}, tol=1e-3, progress=False)
    assert np.log2(plain.C) <= 1                          # so the weighted optimum is <= 2^-3
    assert abs(np.log2(weighted.C) - (np.log2(plain.C) - 4)) <= 1
    assert weighted.accuracy >= plain.accuracy - plain.se
    # the search's own tolerance (SEARCH_TOL) finds it too, or a cell on its small-gamma ridge (the same
    # C gamma: 1 of these 800 rows apart in CV accuracy), 4 octaves below its plain one
    plain_fast = wide_search(X, y, progress=False)
    fast = wide_search(X, y, class_weight={0: 16.0, 1: 16.0}, progress=False)
    assert abs(np.log2(fast.C * fast.gamma) - np.log2(weighted.C * weighted.gamma)) <= 1
    assert abs(np.log2(fast.C) - (np.log2(plain_fast.C) - 4)) <= 1
    assert fast.accuracy >= weighted.accuracy - weighted.se


def test_a_gamma_edge_extends_the_range():
    X, y = stripes(n=600, count=8, seed=3)
    scale = resolve_gamma("scale", X)
    narrow = wide_search(X, y, gamma_octaves=(-4.0, -2.0), progress=False)
    assert any("gamma above" in e for e in narrow.extended)
    assert np.log2(narrow.gamma / scale) >= 2
    full = wide_search(X, y, progress=False)
    assert narrow.accuracy >= full.accuracy - full.se


def test_a_C_edge_extends_the_range():
    X, y = noisy_stripes()
    narrow = wide_search(X, y, C_octaves=(-5.0, -3.0), progress=False)
    assert any("C above" in e for e in narrow.extended)
    full = wide_search(X, y, progress=False)
    assert np.log2(narrow.C) > -3
    assert narrow.accuracy >= full.accuracy - full.se


def test_halving_keeps_the_best_cell():
    """Successive halving over 150 -> 450 -> 1350 rows ends on the same rows and folds as one round
    over all 1350: its choice is the one-round search's best gamma (within an octave) and as
    accurate within one standard error."""
    X, y = stripes(n=1350, count=12, seed=2)
    one_round = wide_search(X, y, min_rows=1350, progress=False)
    halving = wide_search(X, y, min_rows=150, progress=False)
    assert [r["rows"] for r in halving.rounds] == [150, 450, 1350] and len(one_round.rounds) == 1
    best = choose_cell(one_round.final_cells())
    assert best.log2_gamma in halving.rounds[-1]["gammas"]
    assert halving.accuracy >= best.accuracy - best.se
    assert abs(np.log2(halving.gamma) - np.log2(one_round.gamma)) <= 1


def test_cells_are_the_k_fold_accuracies_of_the_path_models():
    """A scored cell is the mean accuracy over the folds of the screened path's models at that C:
    SVCCV (the same formulation, rows and folds) gives the same number."""
    X, y = stripes(n=400, count=3, seed=4)
    found = wide_search(X, y, progress=False)
    cell = choose_cell(found.final_cells())
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    check = SVCCV(Cs=[2.0 ** cell.log2_C], gammas=[found.gamma], cv=folds, refit=False).fit(X, y)
    assert check.cv_results_["mean_test_score"][0] == pytest.approx(cell.accuracy, abs=1.5 / len(y))


def test_one_se_rule_takes_fewer_support_vectors_within_one_standard_error():
    X, y = stripes(n=600, count=4, seed=5)
    found = wide_search(X, y, progress=False)
    cells = found.final_cells()
    best, cheap = choose_cell(cells), choose_cell(cells, one_se=1.0)
    assert cheap.accuracy >= best.accuracy - best.se
    assert cheap.n_support <= best.n_support


def test_a_time_limit_stops_halving_after_a_round():
    X, y = stripes(n=1350, count=6, seed=2)
    stopped = wide_search(X, y, min_rows=150, time_limit=1e-3, progress=False)
    assert len(stopped.rounds) == 1 and stopped.rounds[0]["rows"] == 150
    classes = np.unique(y).size
    assert f"halving stopped after 150 rows ({150 // classes} per class), short of the " in stopped.stopped
    assert all(c.rows == 150 for c in stopped.final_cells())
    assert 0.0 in {c.log2_gamma for c in stopped.final_cells()}       # SVC()'s gamma = 'scale' among them


def test_a_search_a_time_limit_stops_keeps_svcs_default_gamma_in_the_race():
    """A range that leaves gamma = 'scale' out: the round the limit ends at scores it as well."""
    X, y = stripes(n=1350, count=6, seed=2)
    stopped = wide_search(X, y, min_rows=150, time_limit=1e-3, gamma_octaves=(3.0, 6.0), progress=False)
    default = [c for c in stopped.final_cells() if c.log2_gamma == 0.0]
    assert [c.log2_C for c in default][:1] == [-2.0] and 0.0 in [c.log2_C for c in default]
    assert all(c.rows == 150 for c in default) and "gamma = 'scale' (SVC()'s default) scored" in stopped.stopped
    unlimited = wide_search(X, y, min_rows=150, max_rows=150, gamma_octaves=(3.0, 6.0), progress=False,
                            race=False)
    assert 0.0 not in {c.log2_gamma for c in unlimited.final_cells()}   # a search that was not stopped: its range


def test_the_closing_race_scores_the_best_cells_and_the_default_gamma_on_twice_the_rows():
    """After the last round (150 rows of 1,350), its two best cells at their C and gamma = 'scale' over
    C 2^-2..2^5 on 300 rows, as one more round; the choice is the race's best cell."""
    X, y = stripes(n=1350, count=6, seed=2)
    plain = wide_search(X, y, min_rows=150, max_rows=150, gamma_octaves=(3.0, 6.0), progress=False, race=False)
    raced = wide_search(X, y, min_rows=150, max_rows=150, gamma_octaves=(3.0, 6.0), progress=False)
    assert [r["rows"] for r in raced.rounds] == [150, 300] and raced.rounds[-1]["race"]
    assert raced.rounds[0] == {**plain.rounds[0], "seconds": raced.rounds[0]["seconds"],
                               "paths": raced.rounds[0]["paths"]}             # the same search before it
    last = plain.final_cells()
    second = sorted(c.accuracy for c in last)[-2]
    race = raced.final_cells()
    assert all(c.rows == 300 for c in race)
    carried = {(c.log2_gamma, c.log2_C) for c in race if c.log2_gamma != 0.0}
    assert len(carried) == 2 and carried <= {(c.log2_gamma, c.log2_C) for c in last if c.accuracy >= second}
    assert [c.log2_C for c in race if c.log2_gamma == 0.0][:1] == [-2.0]
    best = choose_cell(race)
    assert (raced.C, raced.gamma) == (2.0 ** best.log2_C, raced.scale * 2.0 ** best.log2_gamma)
    assert raced.race.startswith("closing race on 300 rows")


def test_where_the_last_round_had_every_row_the_default_gamma_joins_it():
    X, y = stripes(n=300, count=6, seed=2)
    found = wide_search(X, y, min_rows=300, gamma_octaves=(3.0, 6.0), progress=False)
    assert len(found.rounds) == 1 and "race" not in found.rounds[0]
    assert 0.0 in {c.log2_gamma for c in found.final_cells()} and "gamma = 'scale'" in found.race


def test_the_closing_race_is_left_out_when_its_estimate_is_past_the_time_left(monkeypatch):
    """A time limit the halving kept within but the race's estimate would pass: no race; and none
    after a search the limit stopped."""
    import leansvm.paths.search as search

    X, y = stripes(n=1350, count=6, seed=2)
    clock = iter(range(0, 10 ** 9, 10 ** 4))
    monkeypatch.setattr(search, "work_time", lambda: float(next(clock)))   # the round's work: 10^4 s
    found = wide_search(X, y, min_rows=150, max_rows=150, time_limit=60.0, progress=False)
    assert found.race is None and len(found.rounds) == 1
    stopped = wide_search(X, y, min_rows=150, time_limit=1e-3, progress=False)
    assert stopped.race is None and "race" not in stopped.rounds[-1]


@pytest.mark.parametrize("make, message", [
    (lambda X, y: (X, np.zeros_like(y)), "at least two classes"),
    (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 3, np.nan, X), y), "NaN"),
    (lambda X, y: (X, np.r_[y[:-2], 2, 2]), "fewer than the 5 folds"),
    (lambda X, y: (X[:-1], y), "inconsistent"),
])
def test_bad_input_gets_a_clear_error(make, message):
    X, y = stripes(n=60, count=2)
    with pytest.raises(ValueError, match=message):
        wide_search(*make(X, y), progress=False)


def test_folds_in_parallel_threads_score_the_same_cells():
    """n_jobs=-1 solves the folds of each C step in threads over the shared, fully cached kernel rows:
    the same paths, so the same cells and choice as one thread (above PARALLEL_MIN_ROWS, where it applies),
    the 'cost' rule included: it counts modelled work, not wall seconds (on a loaded machine the
    earlier wall-time rule cut a path in one run and not in the other)."""
    from leansvm.paths.search import PARALLEL_MIN_ROWS

    X, y = stripes(n=PARALLEL_MIN_ROWS + 200, count=6, seed=7)
    y = y + (X[:, 1] > 1.0)            # three classes: one-vs-one pairs are jobs too
    one = wide_search(X, y, progress=False, n_jobs=1, max_rows=1200)
    two = wide_search(X, y, progress=False, n_jobs=-1, max_rows=1200)
    assert [(c.round, c.log2_gamma, c.log2_C, c.accuracy, c.n_support) for c in one.cells] == \
        [(c.round, c.log2_gamma, c.log2_C, c.accuracy, c.n_support) for c in two.cells]
    assert (one.C, one.gamma) == (two.C, two.gamma)


def test_a_kept_gamma_with_a_far_larger_best_C_runs_last_in_the_next_round():
    """Kept gammas go on in rank order, each before its neighbours, except one whose best C is
    COSTLY_OCTAVES or more above the others' (its solves are the costly ones): it goes after them,
    so that a cheap path leads the next round's stop rules. Windows: ``margin`` octaves around the
    nearest kept gammas' best C."""
    from types import SimpleNamespace
    from leansvm.paths.search import COSTLY_OCTAVES, _Round
    surface = {-7.0: [(14.0, 0.868, 0.005, 900), (16.0, 0.870, 0.005, 900)],
               -2.0: [(6.0, 0.866, 0.005, 800), (8.0, 0.867, 0.005, 800)],
               -3.0: [(8.0, 0.865, 0.005, 800), (10.0, 0.866, 0.005, 800)]}
    assert 16.0 - 8.0 >= COSTLY_OCTAVES > 10.0 - 8.0
    round_ = SimpleNamespace(surface=surface)
    windows, priority = _Round.next_windows(round_, [-7.0, -3.0, -2.0], 0.5, 3.0)
    order = sorted(windows, key=lambda g: (-priority[g], g))
    assert order[0] == -3.0 and order.index(-3.0) < order.index(-2.0) < order.index(-7.0)
    assert order.index(-1.5) < order.index(-7.0) < order.index(-7.5)
    assert windows[-2.0] == (5.0, 11.0) and windows[-7.0] == (13.0, 19.0)
    windows, priority = _Round.next_windows(round_, [-2.0, -3.0], 0.5, 3.0)   # none far: rank order
    order = sorted(windows, key=lambda g: (-priority[g], g))
    assert order[0] == -2.0 and order.index(-2.0) < order.index(-3.0)


def test_a_path_that_repeats_a_larger_gammas_shifted_along_C_stops_as_ridge():
    """The 'ridge' rule (search.Mirror): a small gamma's path that repeats, 2 octaves of C later, the
    path of the gamma 2 octaves above it stops once three informative cells and every one before
    agree; cells at the majority rate, or one that differs, do not count as repeats."""
    from leansvm.paths.search import Leader, Mirror, _stop_reason
    above = {-5.0: 0.60, -4.0: 0.60, -3.0: 0.70, -2.0: 0.80, -1.0: 0.85, 0.0: 0.86, 1.0: 0.84}
    mirror = Mirror(above, 2.0, 0.60, 0.004)
    Cs = [-5.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0]
    same = [0.60, 0.60, 0.60, 0.60, 0.70, 0.80, 0.852]
    assert mirror.repeated(Cs, same)
    assert not mirror.repeated(Cs[:6], same[:6])                   # two informative cells only
    assert not mirror.repeated(Cs, same[:4] + [0.75, 0.80, 0.852])  # one informative cell differs
    assert not Mirror(above, 2.0, 0.60, 0.001).repeated(Cs, same)    # beyond the tolerance
    leader = Leader(0.86, 0.01, 0.0, 0.0, 1.0)
    assert _stop_reason(same, Cs, -2.0, 0.1, leader, mirror) == "ridge"
    assert _stop_reason(same, Cs, -2.0, 0.1, leader, None) is None


def test_the_ridge_rule_keeps_the_choice_and_cuts_small_gamma_paths(monkeypatch):
    """On a problem whose small gammas lie on the linear ridge, the search with the 'ridge' rule
    chooses the same cell as without it, and stops some paths by it; the first gamma it stops in
    round 0's pilot (largest first) is the smallest that round scores."""
    from sklearn.datasets import make_classification
    from leansvm.paths import search
    X, y = make_classification(n_samples=500, n_features=8, n_informative=4, n_redundant=0, flip_y=0.05,
                               random_state=1)       # a linear boundary: the small gammas on their ridge
    X = (X - X.mean(0)) / X.std(0)
    with_rule = wide_search(X, y, progress=False)
    reasons = [why for r in with_rule.rounds for _, _, _, why in r["paths"]]
    assert "ridge" in reasons
    first = with_rule.rounds[0]
    assert (min(first["gammas"]), "ridge") in {(g, why) for g, _, _, why in first["paths"]}
    monkeypatch.setattr(search._Round, "_mirror", lambda self, g, last, scored: None)
    without = wide_search(X, y, progress=False)
    assert (with_rule.C, with_rule.gamma) == (without.C, without.gamma)
    assert with_rule.n_fits < without.n_fits
    assert min(without.rounds[0]["gammas"]) < min(first["gammas"])     # the smaller gammas it left out


def test_a_search_stopped_by_time_passes_over_a_costly_corner_within_noise():
    """When a time limit ends the halving early, a best cell on a costly gamma (best C 4 or more
    octaves above the others') within one standard error of the others' best is passed over; one
    ahead by more than that is kept."""
    from leansvm.paths.search import Cell, _cheap_unless_ahead
    cheap = [Cell(-2.0, c, a, 0.005, 100, 1333, 1) for c, a in ((6.0, 0.862), (7.0, 0.8672), (8.0, 0.864))]
    corner = [Cell(-7.0, c, a, 0.005, 80, 1333, 1) for c, a in ((14.0, 0.860), (16.0, 0.8680))]
    chosen = _cheap_unless_ahead(cheap + corner, corner[1])
    assert (chosen.log2_gamma, chosen.log2_C) == (-2.0, 7.0)
    ahead = [Cell(-7.0, 16.0, 0.8800, 0.005, 80, 1333, 1)]
    assert _cheap_unless_ahead(cheap + ahead, ahead[0]) is ahead[0]
    assert _cheap_unless_ahead(cheap + corner, cheap[1]) is cheap[1]


def test_the_search_does_not_depend_on_wall_time(monkeypatch):
    """Without a time limit the search decides by accuracies and modelled work only: with a clock
    that jumps at random at every reading (a loaded machine: any path may seem slow) it scores the
    same cells and chooses the same cell. Before, a path's wall seconds could reorder the gammas of
    the next round and cut a path ('cost')."""
    import types

    from leansvm.paths import search

    X, y = stripes(n=800, count=6, seed=7)
    y = y + (X[:, 1] > 1.0)
    calm = wide_search(X, y, progress=False)
    jumps = np.random.default_rng(0).exponential(10.0, size=100_000).cumsum()
    clock = iter(jumps)
    monkeypatch.setattr(search, "time", types.SimpleNamespace(perf_counter=lambda: next(clock)))
    loaded = wide_search(X, y, progress=False)
    assert [(c.round, c.log2_gamma, c.log2_C, c.accuracy) for c in calm.cells] == \
        [(c.round, c.log2_gamma, c.log2_C, c.accuracy) for c in loaded.cells]
    assert (calm.C, calm.gamma) == (loaded.C, loaded.gamma)
    assert loaded.seconds > calm.seconds          # the clock did jump


def test_the_next_round_is_estimated_per_cell_over_its_windows():
    """Under a time limit the next round's estimate is the last round's seconds per (gamma, C) cell
    scored, times factor^1.5 for factor times the rows, times every C of the next round's windows:
    a round that scored 40 cells in 20 s, before a round of 2 gammas over 7 C each, is estimated at
    0.5 x 3^1.5 x 14 s; the round's seconds x 3^1.5 alone would have said 104 s for its 14 cells."""
    from types import SimpleNamespace

    from leansvm.paths.search import _next_round_seconds
    rnd = SimpleNamespace(surface={-2.0: [None] * 25, 0.0: [None] * 15})
    windows = {0.0: (1.0, 7.0), 1.0: (-2.0, 4.0)}
    assert _next_round_seconds(20.0, rnd, windows.items(), 1.0, 3) == pytest.approx(20.0 / 40 * 3 ** 1.5 * 14)
