"""The successive-halving search for SVR's (C, gamma) that the search benchmark measures against the
regression job's fixed grid (benchmarks/main_job/bench_svr_search.py): its rounds, its edges and its
time limit do what the benchmark's page says."""

import importlib.util
import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

from leansvm.job.regression import _one_standard_error

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "main_job" / "bench_svr_search.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_svr_search", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module             # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def _sine(n, frequency, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, 1))
    y = np.sin(frequency * x[:, 0]) + 0.05 * rng.standard_normal(n)
    return (x - x.mean()) / x.std(), y


def test_rounds_triple_the_rows_up_to_the_cap(bench):
    assert bench._round_sizes(10000, 500, 4000, 3) == [500, 1500, 4000]
    assert bench._round_sizes(1200, 500, 4000, 3) == [500, 1200]
    assert bench._round_sizes(300, 500, 4000, 3) == [300]


def test_each_round_keeps_the_best_widths_at_a_finer_step_on_more_rows(bench):
    X, y = _sine(1200, 3.0)
    found = bench.halving_svr_search(X, y, 0.05, min_rows=200, max_rows=1200, factor=3)
    rows = [r["rows"] for r in found.rounds]
    assert rows == [200, 600, 1200]
    first, second = found.rounds[0]["log2_gamma_factors"], found.rounds[1]["log2_gamma_factors"]
    assert np.allclose(np.diff(first), 2.0)                       # round 0: steps of 2^2
    assert np.min(np.diff(second)) == pytest.approx(1.0)          # round 1: half the step
    assert found.rounds[0]["best_log2_gamma_factor"] in second    # the best width is kept
    assert len(second) <= 6                                      # the best two, each with its neighbours
    # the chosen model fits the sine far better than the mean does
    assert found.score > 0.9


def test_a_best_width_on_the_range_s_edge_extends_it(bench):
    # sin(40 x) on standardised x needs gamma far above 'scale' x 2^4 (= 16 here)
    X, y = _sine(800, 40.0)
    found = bench.halving_svr_search(X, y, 0.05, min_rows=400, max_rows=800)
    assert any(e.startswith("gamma to scale x 2^6") for e in found.extended)
    assert found.gamma > 16.0


def test_no_round_starts_that_would_end_past_the_time_limit(bench):
    X, y = _sine(4000, 3.0)
    ticks = itertools.count(step=1.0)                  # every reading of the clock 1 s later
    # round 0 "takes" 1 s and ends at 3 s; round 1 (3 x the rows, at least 2 of its 49 cells) is estimated at
    # 9 x 2 / 49 = 0.37 s or more: past a 3.3 s limit, though within it were the estimate left out
    found = bench.halving_svr_search(X, y, 0.05, min_rows=500, max_rows=4000, factor=3, time_limit=3.3,
                                     clock=lambda: next(ticks))
    assert [r["rows"] for r in found.rounds] == [500]
    assert "stopped before 1500 rows" in found.stopped


def test_the_job_s_one_standard_error_rule_takes_the_smallest_C_near_the_best():
    results = {"params": [{"C": 1.0, "gamma": 0.1}, {"C": 10.0, "gamma": 0.1}, {"C": 100.0, "gamma": 0.1},
                          {"C": 1.0, "gamma": 1.0}],
               "mean_test_score": np.array([0.50, 0.79, 0.80, 0.60]),
               "std_test_score": np.array([0.01, 0.01, 0.03, 0.01])}
    # best 0.80 +- 0.03 / sqrt(3) = 0.0173: C = 10 (0.79) is within, C = 1 (0.60 at best) is not
    assert _one_standard_error(results, 3) == (10.0, 0.1, 0.79)
