"""Ctrl-C at any moment of a command: status 130, one message line, no traceback,
no file written, and a numba cache that the next run uses.

Every case runs the real command in a child process (``tests/sigint_at.py``), which sends itself
SIGINT at a named stage: the result does not depend on timing. Cold-cache cases give the child
an empty ``NUMBA_CACHE_DIR`` of their own and tell numba the CPU is a core2, below every level the
package ships code for (``leansvm.core.jit``), so that it compiles.
"""

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sklearn.datasets import dump_svmlight_file, make_blobs, make_moons

from leansvm.core import jit

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
#: a CPU that runs none of the shipped x86-64 levels: numba compiles for it
COLD_CPU = {"NUMBA_CPU_NAME": "core2", "NUMBA_CPU_FEATURES": "+cx16,+sse3,+ssse3"}

DRIVER = Path(__file__).with_name("sigint_at.py")


def _interactive():
    """In the child: SIGINT as at a terminal, also when the test run itself ignores it (a test
    run started in the background by a script inherits SIG_IGN, which the command respects)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)

#: the long-running commands, on a 600-point problem: (arguments, the file the command writes)
COMMANDS = {
    "path": (["path", "{data}", "--n-c", "5", "--gamma", "5"], None),
    "train": (["train", "-c", "10", "-g", "5", "{data}", "{out}"], "{out}"),
    "fit": (["fit", "{data}", "-o", "{out}", "--selection-size", "300"], "{out}"),
    "compress": (["compress", "{model}", "{out}", "--ratio", "0.2"], "{out}"),
    # four classes: six one-vs-one problems solved in two threads (SVC's default n_jobs=-1)
    "train-4-classes": (["train", "-c", "100", "-g", "5", "{multiclass}", "{out}"], "{out}"),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A data file and a trained model (for ``compress``); the model's run warms the default cache."""
    folder = tmp_path_factory.mktemp("sigint")
    X, y = make_moons(600, noise=0.3, random_state=0)
    data = folder / "moons.svm"
    dump_svmlight_file(X, y, str(data), zero_based=False)
    model = folder / "moons.model"
    done = subprocess.run([sys.executable, "-m", "leansvm", "train", "-q", "-c", "10", "-g", "5",
                           str(data), str(model)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    X4, y4 = make_blobs(3000, centers=4, cluster_std=3.0, random_state=0)
    multiclass = folder / "blobs.svm"
    dump_svmlight_file(X4, y4, str(multiclass), zero_based=False)
    return {"data": str(data), "model": str(model), "multiclass": str(multiclass)}


def run(stage, command, files, tmp_path, cache=None):
    """(return code, stderr, the output file or None) of ``leansvm COMMAND`` with SIGINT at STAGE."""
    args, output = COMMANDS[command]
    names = dict(files, out=str(tmp_path / f"{command}-{stage}.model"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LEANSVM_", "NUMBA_"))}
    env["LOKY_MAX_CPU_COUNT"] = "2"          # n_jobs=-1 is two threads, also on a one-core machine
    if cache is not None:
        env.update(NUMBA_CACHE_DIR=str(cache), **COLD_CPU)
    done = subprocess.run([sys.executable, str(DRIVER), stage] + [a.format(**names) for a in args],
                          capture_output=True, text=True, env=env, timeout=600, stdin=subprocess.DEVNULL,
                          preexec_fn=_interactive)
    return done.returncode, done.stderr, output and Path(output.format(**names))


def test_a_command_that_inherits_an_ignored_sigint_keeps_ignoring_it(files, tmp_path):
    """A job started with `cmd &` by a shell script ignores the terminal's Ctrl-C: so does leansvm."""
    args, _ = COMMANDS["path"]
    done = subprocess.run([sys.executable, str(DRIVER), "progress"] + [a.format(**files) for a in args],
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "interrupted" not in done.stderr


def assert_interrupted(code, err, output):
    """Status 130, the one message line last, nothing else said about it, no file written."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 130, err[-3000:]
    assert "Traceback" not in err and "leansvm: error" not in err, err[-3000:]
    assert lines[-1].startswith("leansvm: interrupted (Ctrl-C)"), err[-3000:]
    assert sum("interrupt" in line.lower() for line in lines) == 1, err[-3000:]
    if output is not None:
        assert not output.exists()
        assert not list(output.parent.glob(f".{output.name}.*")), "a temporary file was left"


@pytest.mark.parametrize("command", list(COMMANDS))
def test_ctrl_c_while_the_command_is_still_importing(command, files, tmp_path):
    assert_interrupted(*run("import", command, files, tmp_path))


@pytest.mark.skipif(jit.architecture(jit.this_machine()["triple"]) != "x86_64", reason="an x86-64 CPU model")
def test_ctrl_c_while_numba_compiles_on_a_cold_cache_then_the_same_cache_works(files, tmp_path):
    """On one cache, empty at first: each run is stopped at the first function it has to compile
    (a second Ctrl-C there, a Ctrl-C during numba's cache write, then the first compilation of
    ``path``, ``train`` and ``fit``). The first Ctrl-C waits for the compilation and its cache
    entry, a second one stops the compiler itself; either way status 130 and one line. Then ``path``
    and ``train``, whose compilations were stopped, run to their end with that cache. (``compress``
    compiles nothing; a whole ``fit`` would compile the rest of the job, about 100 s, and tell no
    more about a stopped compilation's entry.) One cache for all runs."""
    cache = tmp_path / "numba-cache"
    for stage, command in [("compile-twice", "path"), ("cache-write", "path"), ("compile", "path"),
                           ("compile", "train"), ("compile", "fit")]:
        before = set(cache.rglob("*.nbi"))
        code, err, output = run(stage, command, files, tmp_path, cache=cache)
        assert_interrupted(code, err, output)
        if stage != "compile-twice":          # the compilation finished and its entry was written
            assert set(cache.rglob("*.nbi")) > before, (stage, command)
    for command in ("path", "train"):
        code, err, output = run("none", command, files, tmp_path, cache=cache)
        assert code == 0, (command, err[-3000:])
        assert output is None or output.exists()


@pytest.mark.parametrize("command", ["path", "train", "fit", "train-4-classes"])
def test_ctrl_c_inside_a_compiled_solver_call(command, files, tmp_path):
    assert_interrupted(*run("compiled-call", command, files, tmp_path))


@pytest.mark.parametrize("command", list(COMMANDS))
def test_ctrl_c_during_a_progress_step_names_the_operation(command, files, tmp_path):
    code, err, output = run("progress", command, files, tmp_path)
    assert_interrupted(code, err, output)
    # which operation stopped, and how far it got; in threads the other worker may have finished
    # a problem between the signal and its handling in the main thread
    done = re.search(r" after (\d+)/(\d+) ", err.splitlines()[-1])
    assert done and (done[1] == "0" or command == "train-4-classes" and int(done[1]) < int(done[2])), err


@pytest.mark.parametrize("command", ["train", "fit", "compress"])
def test_ctrl_c_while_the_model_file_is_written_leaves_no_file(command, files, tmp_path):
    code, err, output = run("write", command, files, tmp_path)
    assert_interrupted(code, err, output)
    assert "not written" in err.splitlines()[-1]


def test_an_error_caused_by_a_pending_ctrl_c_is_reported_as_the_interrupt(capsys, monkeypatch, interactive_sigint):
    """Whatever a Ctrl-C breaks on its way out (here: a RuntimeError raised after it arrived, as
    numba raised for a half-built library) is reported as the interrupt."""
    from leansvm import cli, interrupts

    def broken(args):
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except KeyboardInterrupt:
            pass                                  # swallowed by some library on the way
        raise RuntimeError("no compiled object yet for <Library>")

    monkeypatch.setattr(cli.info, "run", broken)
    assert cli.main(["info", "whatever.model"]) == 130
    err = capsys.readouterr().err
    assert err == "leansvm: interrupted (Ctrl-C)\n"
    assert not interrupts.pending()


def test_a_ctrl_c_swallowed_on_the_way_still_ends_the_command_with_130(capsys, monkeypatch, interactive_sigint):
    from leansvm import cli

    def swallowing(args):
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except KeyboardInterrupt:
            pass
        return 0

    monkeypatch.setattr(cli.info, "run", swallowing)
    assert cli.main(["info", "whatever.model"]) == 130
    assert capsys.readouterr().err == "leansvm: interrupted (Ctrl-C)\n"


def test_import_leansvm_loads_nothing_heavy_and_every_public_name_resolves():
    """The command installs its handler before NumPy and numba load: ``import leansvm`` (and the
    ``interrupts`` module) must not import them; the public names load on first use."""
    code = ("import sys, leansvm, leansvm.interrupts; "
            "heavy = [m for m in ('numpy', 'scipy', 'sklearn', 'numba') if m in sys.modules]; "
            "assert not heavy, heavy; "
            "assert all(getattr(leansvm, name) for name in leansvm.__all__); print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_the_lazy_names_and_the_type_checking_imports_agree():
    """``leansvm/__init__.py`` lists its public names twice: for the lazy loader and, under
    TYPE_CHECKING, for type checkers and the API documentation. They must say the same."""
    import ast

    import leansvm

    tree = ast.parse(Path(leansvm.__file__).read_text())
    imported = {alias.name: node.module for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.level == 1 for alias in node.names}
    assert imported == leansvm._EXPORTS
