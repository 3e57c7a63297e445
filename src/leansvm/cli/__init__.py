"""The ``leansvm`` command: LIBSVM's ``svm-train`` / ``svm-predict`` habits, plus the main job.

    leansvm train [options] DATA MODEL      train (svm-train's -s 0..4, -t 0..4), write MODEL
    leansvm predict [-q] DATA MODEL OUTPUT  one prediction per line; accuracy, or MSE and r^2
    leansvm info MODEL                      kernel, parameters, classes, support vectors
    leansvm fit DATA -o MODEL               the main job: the cheapest accurate model, with a report
    leansvm compress MODEL DATA OUTPUT      a model compressed to fewer support vectors
    leansvm export MODEL OUTPUT             a model as ONNX
    leansvm path DATA                       a regularisation path over C with safe screening
    leansvm scale [-l -u -s -r] DATA        features scaled to [lower, upper], as svm-scale

One module per command holds its options (``add_parser``) and its work (``run``);
:mod:`leansvm.cli.common` holds what they share (reading data and models, option groups).

DATA is an svmlight/LIBSVM data file (0- or 1-based indices, ``--zero-based``),
for ``fit``, ``train`` and ``predict`` also a CSV/TSV/Parquet table
(``--target``, ``--impute``; :mod:`leansvm.preprocessing.tabular`), or, when no such file
exists, a named benchmark dataset (``leansvm.datasets.NAMES``: train uses its
training part, predict its test part). MODEL is a LIBSVM model file (real LIBSVM reads it),
or leansvm's native format when its name ends in ``.npz`` (needed for
string labels). Every output file is written atomically.

Errors print one line to stderr: exit status 2 for a bad command line, 1 for
anything else (missing file, corrupt model, ...). ``LEANSVM_DEBUG=1`` shows
the traceback instead. Ctrl-C: one line (``leansvm: interrupted (Ctrl-C): ...``
saying where it stopped), exit status 130, no file written
(:mod:`leansvm.interrupts`).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from leansvm import interrupts
from leansvm.cli import compress, export, fit, info, path, predict, scale, train
from leansvm.cli.common import UsageError, _Parser, _expand_weight_options
from leansvm.core.threads import at_most


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="leansvm", description="Kernel SVMs, LIBSVM-compatible command line.")
    from leansvm import __version__
    parser.add_argument("--version", action="version", version=f"leansvm {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    train.add_parser(sub)
    predict.add_parser(sub)
    info.add_parser(sub)
    fit.add_parser(sub)
    compress.add_parser(sub)
    export.add_parser(sub)
    path.add_parser(sub)
    scale.add_parser(sub)
    return parser


def main(argv=None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 error, 2 bad command line, 130
    interrupted). Ctrl-C is handled by :mod:`leansvm.interrupts`: one message line, status 130,
    also when the interrupt surfaced as another error or was dropped on the way."""
    argv = list(sys.argv[1:] if argv is None else argv)
    with interrupts.handled(), warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            args = build_parser().parse_args(_expand_weight_options(argv))
            with at_most(getattr(args, "n_jobs", -1)):        # --n-jobs of the commands that train
                status = args.func(args)
            interrupts.check()                # a Ctrl-C that was dropped on the way still counts
            return status
        except UsageError as exc:
            print(exc, file=sys.stderr)
            return 2
        except SystemExit as exc:  # --help, --version
            return exc.code if isinstance(exc.code, int) else 0
        except KeyboardInterrupt as exc:
            return interrupts.report(exc)
        except Exception as exc:
            if interrupts.pending():          # the error a Ctrl-C caused, not the user's problem
                return interrupts.report()
            if os.environ.get("LEANSVM_DEBUG"):
                raise
            print(f"leansvm: error: {_one_line(exc)}", file=sys.stderr)
            return 1


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """A warning on the command line: one line, ``leansvm: warning: ...`` (no source location)."""
    print(f"leansvm: warning: {' '.join(str(message).split())}", file=sys.stderr if file is None else file)


def _one_line(exc: BaseException) -> str:
    message = str(exc) or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        message = f"{exc.filename}: {exc.strerror}"
    elif not isinstance(exc, (ValueError, OSError)):
        message = f"{type(exc).__name__}: {message}"
    return " ".join(message.split())
