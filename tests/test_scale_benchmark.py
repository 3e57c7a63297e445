"""The scale benchmark's Nystroem peer works in the job's feature units: it reads the job's scaling
from the job's log, in either form the job writes it."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from leansvm.preprocessing.scaling import FeatureScaler

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "main_job" / "bench_main_job_scale.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_main_job_scale", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("kind", ["range", "standard", "max-abs"])
def test_the_peer_reads_the_one_output_tasks_scale_line(bench, kind):
    described = FeatureScaler(kind).fit(np.random.default_rng(0).normal(size=(20, 3))).describe()
    row = {"steps": ["[data] 20 samples x 3 features, regression -- ...", f"[scale] {described} -- as svm-scale"]}
    assert bench.job_scaling(row) == kind


def test_the_peer_reads_the_classification_choice_and_nothing_else(bench):
    assert bench.job_scaling({"steps": ["[scale] standard: CV accuracy standard 0.83 against range 0.84"]}) == "standard"
    assert bench.job_scaling({"steps": ["[data] 20 samples x 3 features"]}) is None
    assert bench.job_scaling({}) is None
