"""The main job's log (job.records.JobLog), its one unit for allowed drops (core.validation.allowed_share)
and its thread count (core.threads.at_most, ``n_jobs`` / ``--n-jobs``)."""

import inspect
import re
import threading

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, make_moons

from leansvm import cli
from leansvm.core import threads
from leansvm.core.validation import allowed_share
from leansvm.job.records import LINE_WIDTH, JobLog


class Clock:
    """A clock the test moves by hand."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def _run_steps(log, clock):
    log.say("  tried 12 vectors: accuracy 0.91")
    clock.now += 2.5
    log.step("compress", "12 SV " + "x" * 150, "a long reason " * 20, seconds=2.5)
    log.step("split", "3392 for training", "a hold-out")           # a reporting stage
    log.step("route", "exact training", "no budget", detail=True)
    log.say("said after the last step")
    log.flush()


def test_each_level_prints_what_it_should_and_every_step_keeps_its_details(capsys):
    clock, printed, logs = Clock(), [], []
    for level in (0, 1, 2):
        logs.append(JobLog(level, clock=clock))
        _run_steps(logs[-1], clock)
        printed.append(capsys.readouterr().out.splitlines())
    quiet, short, full = printed
    assert quiet == []
    assert len(short) == 1 and short[0].startswith("[compress] 12 SV") and short[0].endswith("... (2.5 s)")
    assert len(short[0]) == LINE_WIDTH
    assert full[0] == short[0] and max(map(len, full)) <= LINE_WIDTH
    assert all(line.startswith(("[", "    ")) for line in full)
    assert [line for line in full if line.startswith("[")] == [short[0], "[split] 3392 for training",
                                                               "[route] exact training"]
    assert "    tried 12 vectors: accuracy 0.91" in full and full[-1] == "    said after the last step"
    for log in logs:                                  # every level keeps the same record
        assert [s.stage for s in log.steps] == ["compress", "split", "route"]
        assert log.steps[0].elapsed == 2.5 and log.steps[1].elapsed == 0.0     # the clock handed in
        assert log.steps[0].details == ["tried 12 vectors: accuracy 0.91"]
        assert log.steps[-1].details == ["said after the last step"]


def test_a_verbosity_below_zero_is_an_error():
    with pytest.raises(ValueError, match="verbose"):
        JobLog(-1)


@pytest.mark.parametrize("value, share", [(0.005, 0.005), ("0.5%", 0.005), ("0.02", 0.02), (0, 0.0), ("12%", 0.12),
                                          (0.1, 0.1)])
def test_an_allowed_share_is_a_fraction_or_a_percentage(value, share):
    assert allowed_share("max_accuracy_drop", value) == pytest.approx(share)


@pytest.mark.parametrize("value, message", [(0.5, r"'0.5%'"), (2, r"'2%'"), ("150%", "below 100"), (-0.01, r"\[0, 1\)"),
                                            ("half", "a fraction"), (float("nan"), r"\[0, 1\)")])
def test_a_share_that_cannot_be_meant_is_refused_with_its_spellings(value, message):
    with pytest.raises(ValueError, match=message):
        allowed_share("max_accuracy_drop", value)


def test_python_and_the_command_line_read_one_unit(tmp_path):
    """max_accuracy_drop='1%' and 0.01 are one setting; --max-accuracy-drop 1% and --max-accuracy-drop-points 1
    write the same model as Python's."""
    import leansvm

    X, y = make_moons(300, noise=0.3, random_state=0)
    grid = dict(Cs=[1.0, 10.0], gammas=[0.5, 2.0], scale="none", confirm=False, refit=False,
                libsvm_reference_model=False)
    a = leansvm.fit_lean(X, y, max_accuracy_drop="1%", **grid)
    b = leansvm.fit_lean(X, y, max_accuracy_drop=0.01, **grid)
    assert a.max_accuracy_drop == b.max_accuracy_drop == 0.01 and a.final.name == b.final.name
    data = tmp_path / "moons.txt"
    dump_svmlight_file(X, y, str(data), zero_based=False)
    written = []
    for option in (["--max-accuracy-drop", "1%"], ["--max-accuracy-drop-points", "1"], ["--max-accuracy-drop", "0.01"]):
        path = tmp_path / f"m{len(written)}.model"
        assert cli.main(["fit", str(data), str(path), *option, "--c-grid", "1", "10", "--gamma-grid", "0.5", "2",
                         "--no-scale", "--no-refit", "-q", "-j", "1"]) == 0
        written.append(path.read_text())
    assert written[0] == written[1] == written[2]


def test_the_command_log_fits_its_width_and_says_more_with_v(tmp_path, capsys):
    X, y = make_moons(400, noise=0.3, random_state=1)
    data = tmp_path / "moons.txt"
    dump_svmlight_file(X, y, str(data), zero_based=False)
    args = ["fit", str(data), str(tmp_path / "m.model"), "--c-grid", "1", "10", "--gamma-grid", "0.5", "2"]
    assert cli.main(args) == 0
    default = capsys.readouterr().out.splitlines()
    assert max(map(len, default)) <= LINE_WIDTH and len(default) <= 20
    assert cli.main(args + ["-v"]) == 0
    verbose = capsys.readouterr().out.splitlines()
    def stages(lines):                # the step lines without their seconds, which differ from run to run
        return [re.sub(r" \([0-9.]+ s\)$", "", line) for line in lines if line.startswith("[")]

    assert len(verbose) > len(default) and set(stages(default)) < set(stages(verbose))
    assert any("support vectors" in line for line in default)


def test_at_most_one_thread_runs_every_job_in_the_calling_thread():
    names = []

    def job(i):
        names.append(threading.current_thread().name)
        return i

    with threads.at_most(1):
        assert threads.run_parallel([(job, (i,)) for i in range(4)], n_jobs=-1) == [0, 1, 2, 3]
        assert not threads.may_split() and threads.effective_jobs(-1) == 1
        assert threads.split_range(lambda a, b: (a, b), 1000) == [(0, 1000)]
    assert set(names) == {threading.current_thread().name}
    assert threads.effective_jobs(-1) >= 1 and threads.may_split()


def test_the_jobs_take_n_jobs_and_the_commands_refuse_zero_threads(capsys):
    from leansvm.job.classification import fit_lean_classification
    from leansvm.job.novelty import fit_lean_novelty
    from leansvm.job.regression import fit_lean_regression

    for job in (fit_lean_classification, fit_lean_regression, fit_lean_novelty):
        assert inspect.signature(job).parameters["n_jobs"].default == -1
    for command in ("fit", "train"):
        assert cli.main([command, "data.txt", "--n-jobs", "0"]) == 2
        assert "0 threads" in capsys.readouterr().err


def test_a_fit_with_one_thread_gives_the_model_of_every_core():
    import leansvm

    X, y = make_moons(300, noise=0.3, random_state=2)
    grid = dict(Cs=[1.0, 10.0], gammas=[0.5, 2.0], scale="none", confirm=False, refit=False,
                libsvm_reference_model=False)
    one, every = leansvm.fit_lean(X, y, n_jobs=1, **grid), leansvm.fit_lean(X, y, **grid)
    np.testing.assert_array_equal(one.model.decision_function(X), every.model.decision_function(X))
