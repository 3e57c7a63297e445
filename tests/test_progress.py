"""Progress feedback: bars when asked or on a terminal, silence otherwise, clean Ctrl-C."""

import io
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, make_blobs, make_moons
from sklearn.exceptions import ConvergenceWarning

import leansvm
from leansvm.exact import irwls
from leansvm import BSGDClassifier, SVC, SVCCV, cli, compress, fit_lean, svm_path
from leansvm import progress as progress_module
from leansvm.progress import ENV_VARIABLE, Progress, default_progress, progress_enabled


@pytest.fixture(autouse=True)
def no_env(monkeypatch):
    monkeypatch.delenv(ENV_VARIABLE, raising=False)


@pytest.fixture(scope="module")
def moons():
    return make_moons(200, noise=0.2, random_state=0)


class _Terminal(io.StringIO):
    def isatty(self):
        return True


# -- the decision ----------------------------------------------------------------------
def test_explicit_choice_wins_over_environment_and_terminal(monkeypatch):
    monkeypatch.setenv(ENV_VARIABLE, "1")
    assert progress_enabled(False, _Terminal()) is False
    monkeypatch.setenv(ENV_VARIABLE, "off")
    assert progress_enabled(True, io.StringIO()) is True


def test_automatic_choice_follows_terminal_then_environment(monkeypatch):
    assert progress_enabled(None, _Terminal()) is True
    assert progress_enabled(None, io.StringIO()) is False
    monkeypatch.setenv(ENV_VARIABLE, "0")
    assert progress_enabled(None, _Terminal()) is False
    monkeypatch.setenv(ENV_VARIABLE, "on")
    assert progress_enabled(None, io.StringIO()) is True


def test_default_progress_sets_the_automatic_choice_inside_a_block():
    with default_progress(True):
        assert progress_enabled(None, io.StringIO()) is True
        with default_progress(False):
            assert progress_enabled(None, _Terminal()) is False
    assert progress_enabled(None, io.StringIO()) is False


# -- the report itself -----------------------------------------------------------------
def test_enabled_progress_draws_a_tqdm_bar():
    pytest.importorskip("tqdm")
    stream = io.StringIO()
    with Progress(4, "work", "items", enabled=True, stream=stream) as bar:
        for _ in range(4):
            bar.update()
    text = stream.getvalue()
    assert "work" in text and "/4" in text and "items" in text


def test_disabled_progress_writes_nothing():
    stream = io.StringIO()
    with Progress(4, "work", enabled=False, stream=stream) as bar:
        for _ in range(4):
            bar.update()
    assert stream.getvalue() == ""
    assert bar.n == 4


def test_without_tqdm_plain_lines_give_elapsed_and_time_left(monkeypatch):
    monkeypatch.setattr(progress_module, "_tqdm", lambda: None)
    stream = io.StringIO()
    with Progress(4, "work", "steps", enabled=True, interval=0.0, stream=stream) as bar:
        for _ in range(3):
            time.sleep(0.01)
            bar.update()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("work: 1/4 steps,") and "elapsed" in lines[0] and "left" in lines[0]
    assert bar.eta() is not None and bar.eta() > 0


def test_eta_is_the_average_step_time_times_the_steps_left(monkeypatch):
    bar = Progress(10, "x", enabled=False)
    bar.n = 4
    monkeypatch.setattr(bar, "elapsed", lambda: 8.0)
    assert bar.eta() == pytest.approx(12.0)
    assert Progress(None, "x", enabled=False).eta() is None


def test_interrupt_is_reported_once_by_the_innermost_operation():
    stream = io.StringIO()
    with pytest.raises(KeyboardInterrupt):
        with Progress(5, "outer", "parts", enabled=True, stream=stream) as outer:
            outer.update()
            with Progress(10, "inner", "steps", enabled=True, stream=stream) as inner:
                inner.update(3)
                raise KeyboardInterrupt
    text = stream.getvalue()
    assert "leansvm: inner interrupted (Ctrl-C) after 3/10 steps" in text
    assert "outer interrupted" not in text


# -- wired into the library's long operations ------------------------------------------
def test_library_operations_are_silent_when_not_on_a_terminal(moons, capsys):
    X, y = moons
    svm_path(X, y, [0.1, 1.0], gamma=1.0)
    model = SVC(C=1.0, gamma=1.0).fit(X, y)
    with pytest.warns(ConvergenceWarning):   # warnings are not progress output
        compress(model, n_sv=5, X=X, y=y, max_iter=5)
    BSGDClassifier(budget=20, epochs=2, random_state=0).fit(X, y)
    SVCCV(Cs=[1.0, 10.0], gammas=[1.0], cv=2, refit=False).fit(X, y)
    out, err = capsys.readouterr()
    assert out == "" and err == ""


def test_path_shows_a_bar_with_time_left_when_asked(moons, capsys, monkeypatch):
    X, y = moons
    monkeypatch.setattr(progress_module, "_tqdm", lambda: None)   # plain lines: deterministic text
    monkeypatch.setattr(progress_module, "LINE_INTERVAL", 0.0)     # a line per step
    svm_path(X, y, [0.1, 1.0, 10.0], gamma=1.0, progress=True)
    err = capsys.readouterr().err
    assert "svm path: 1/3 fits" in err and "left" in err


def test_path_compress_bsgd_and_svccv_draw_bars_on_stderr(moons, capsys):
    pytest.importorskip("tqdm")
    X, y = moons
    svm_path(X, y, [0.1, 1.0], gamma=1.0, progress=True)
    model = SVC(C=1.0, gamma=1.0).fit(X, y)
    with pytest.warns(ConvergenceWarning):
        compress(model, n_sv=5, X=X, y=y, max_iter=5, progress=True)
    BSGDClassifier(budget=20, epochs=2, random_state=0, verbose=True).fit(X, y)
    SVCCV(Cs=[1.0], gammas=[1.0], cv=2, refit=False, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    for name in ("svm path", "compress", "L-BFGS iterations", "BSGD", "SVCCV"):
        assert name in err, name


def test_compress_size_search_counts_sizes(moons, capsys):
    pytest.importorskip("tqdm")
    X, y = moons
    model = SVC(C=1.0, gamma=1.0).fit(X, y)
    compress(model, max_accuracy_drop=0.02, X=X, y=y, max_iter=5, progress=True)
    assert "compress: size search" in capsys.readouterr().err


def test_fit_lean_is_silent_unless_asked_and_passes_its_choice_down(moons, capsys):
    X, y = moons
    options = dict(Cs=[1.0, 10.0], gammas=[1.0], size_fractions=(0.1,), libsvm_reference_model=False)
    fit_lean(X, y, **options)
    out, err = capsys.readouterr()
    assert out == "" and err == ""
    pytest.importorskip("tqdm")
    fit_lean(X, y, progress=True, **options)
    out, err = capsys.readouterr()
    assert out == ""                      # steps are printed only when verbose
    assert "SVCCV" in err and "svm path" in err and "budget models" in err


# -- Ctrl-C ------------------------------------------------------------------------------
@pytest.fixture
def data_file(tmp_path):
    X, y = make_blobs(300, centers=2, cluster_std=3.0, random_state=0)
    path = tmp_path / "blobs.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    return path


def test_cli_path_interrupted_gives_message_and_status_130(data_file, capsys, monkeypatch):
    import leansvm.paths.model_selection as model_selection

    real = model_selection.binary_path

    def interrupted_after_two(*args, callback=None, **kwargs):
        done = []

        def step(C):
            callback(C)
            done.append(C)
            if len(done) == 2:
                raise KeyboardInterrupt
        return real(*args, callback=step, **kwargs)

    monkeypatch.setattr(model_selection, "binary_path", interrupted_after_two)
    monkeypatch.setenv(ENV_VARIABLE, "1")
    status = cli.main(["path", str(data_file), "--n-c", "5"])
    err = capsys.readouterr().err
    assert status == 130
    assert err.strip().splitlines()[-1].startswith("leansvm: interrupted (Ctrl-C): svm path after 2/5 fits")
    assert err.count("interrupted") == 1                  # one message line


def test_cli_fit_interrupted_names_the_last_step_and_writes_no_model(data_file, tmp_path, capsys, monkeypatch):
    import leansvm.job.classification as lean

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(lean, "train_exact", interrupted)
    model = tmp_path / "out.model"
    status = cli.main(["fit", str(data_file), "-o", str(model), "--C-grid", "1", "--gamma-grid", "0.1"])
    err = capsys.readouterr().err
    assert status == 130
    last = err.strip().splitlines()[-1]
    assert last.startswith("leansvm: interrupted (Ctrl-C): leansvm fit after") and "last finished step: route" in last
    assert err.count("interrupted") == 1
    assert not model.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
def test_a_real_ctrl_c_stops_the_command_cleanly(tmp_path, interactive_sigint):
    """SIGINT to ``python -m leansvm path`` while its progress line is showing: message and status 130."""
    pytest.importorskip("tqdm")   # the plain lines (no tqdm) start only after LINE_INTERVAL seconds
    X, y = make_moons(2000, noise=0.3, random_state=0)
    data = tmp_path / "moons.svm"
    dump_svmlight_file(X, y, str(data), zero_based=False)
    env = dict(os.environ, **{ENV_VARIABLE: "1"})
    # 2,000 C values: several seconds of path (400 took 1 s once the solver got faster, and a
    # signal sent 0.5 s after the first render then arrived after the path had ended)
    proc = subprocess.Popen([sys.executable, "-m", "leansvm", "path", str(data), "--n-c", "2000",
                             "--c-max", "1e4", "--gamma", "5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, preexec_fn=interactive_sigint)
    try:
        first = b""
        while b"fits" not in first:           # the bar's first render: the path has started
            chunk = proc.stderr.read1(256)
            assert chunk, f"no progress output before the command ended: {first!r}"
            first += chunk
        proc.send_signal(signal.SIGINT)
        _, rest = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = (first + rest).decode(errors="replace")
    assert proc.returncode == 130, err[-2000:]
    assert "leansvm: interrupted (Ctrl-C): svm path after" in err
    assert err.count("interrupted") == 1
    assert "Traceback" not in err


def test_svc_fit_reports_binary_problems_or_percent_converged(capsys, monkeypatch):
    monkeypatch.setattr(progress_module, "_tqdm", lambda: None)   # plain lines: deterministic text
    monkeypatch.setattr(progress_module, "LINE_INTERVAL", 0.0)
    X, y = make_blobs(300, centers=3, cluster_std=3.0, random_state=0)
    SVC(C=10.0, gamma=1.0, verbose=True).fit(X, y)
    err = capsys.readouterr().err
    assert "SVC fit: 3/3 binary problems" in err
    Xb, yb = make_moons(400, noise=0.3, random_state=0)
    # a report per compiled burst of chunks; this problem converges within one burst of 50
    monkeypatch.setattr(irwls._ChunkedIRWLS, "BURST", 2)
    SVC(C=100.0, gamma=1.0, verbose=True).fit(Xb, yb)
    lines = [line for line in capsys.readouterr().err.splitlines() if "% converged" in line]
    assert lines and "SVC fit: 100/100 % converged" in lines[-1]
    done = [int(line.split(": ")[1].split("/")[0]) for line in lines]
    assert done == sorted(done) and len(done) >= 2          # intermediate reports, never back
    SVC(C=100.0, gamma=1.0).fit(Xb, yb)                       # not a terminal, not verbose: silent
    assert capsys.readouterr().err == ""


def test_convergence_progress_is_monotone_and_log_scaled():
    bar = Progress(100, "solve", "%", enabled=False)
    tracker = progress_module.ConvergenceProgress(bar, tol=1e-3)
    for v in (1.0, 1e-1, 1e-2, 0.5, 1e-3):     # geometric progress, then a shrinking restart
        tracker(v)
    assert bar.n == 99                          # 1e-3 = tol is held at 99 until finish
    tracker.finish()
    assert bar.n == 100
    bar = Progress(100, "solve", "%", enabled=False)
    tracker = progress_module.ConvergenceProgress(bar, tol=1e-3)
    tracker(1.0)
    tracker(1e-1)
    assert bar.n == 33                          # a third of the way in log scale


def test_a_ctrl_c_dropped_in_a_c_callback_stops_at_the_next_progress_step(capsys, interactive_sigint):
    """Python cannot raise a KeyboardInterrupt out of a callback from C: it reports it as
    unraisable and the work goes on. Inside ``interrupts.handled`` (the ``leansvm`` command) the
    Ctrl-C is recorded first: nothing is printed, and the next progress step raises it."""
    import ctypes

    from leansvm import interrupts

    @ctypes.CFUNCTYPE(None)
    def callback():
        os.kill(os.getpid(), signal.SIGINT)     # a real Ctrl-C, landing inside the callback

    with interrupts.handled():
        with Progress(total=3, enabled=False) as bar:
            bar.update()
            callback()                          # dropped by Python: nothing raised here
            assert interrupts.pending()
            with pytest.raises(KeyboardInterrupt):
                bar.update()
    assert "Traceback" not in capsys.readouterr().err
    assert not interrupts.pending() and not interrupts.active()   # the block leaves nothing behind
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_ctrl_c_at_the_bars_first_render_says_where_it_stopped(monkeypatch):
    """A Ctrl-C that lands while tqdm draws the bar for the first time (inside ``Progress.__enter__``,
    before the ``with`` block starts) still names the operation: a loaded machine put the signal of
    ``test_a_real_ctrl_c_stops_the_command_cleanly`` there in 1 of 6 runs."""
    from leansvm import interrupts

    def first_render_interrupted(**kwargs):
        kwargs["file"].write("\rsvm path:   0%|          | 0/5 [00:00<?, ?fits/s]")
        raise KeyboardInterrupt

    monkeypatch.setattr(progress_module, "_tqdm", lambda: first_render_interrupted)
    with interrupts.handled():
        with pytest.raises(KeyboardInterrupt) as caught:
            with progress_module.Progress(5, "svm path", "fits", enabled=True, stream=io.StringIO()):
                pass
    assert interrupts.message(caught.value).startswith("leansvm: interrupted (Ctrl-C): svm path after 0/5 fits")
