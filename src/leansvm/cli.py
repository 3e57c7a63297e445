"""The ``leansvm`` command: LIBSVM's ``svm-train`` / ``svm-predict`` habits, plus ``info``.

    leansvm train [options] DATA MODEL      train (svm-train's -s 0..4, -t 0..4), write MODEL
    leansvm predict [-q] DATA MODEL OUTPUT  one prediction per line; accuracy, or MSE and r^2
    leansvm info MODEL                      kernel, parameters, classes, support vectors

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
import re
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_regressor

from leansvm import interrupts, io
from leansvm.core.kernels import LIBSVM_KERNEL_CODES
from leansvm.preprocessing.tabular import is_table_file
from leansvm.core.validation import widen

_KERNEL_FROM_CODE = {code: name for name, code in LIBSVM_KERNEL_CODES.items()}


class UsageError(Exception):
    """A bad command line (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{self.prog}: error: {message} (see '{self.prog} --help')")


# -- command line ----------------------------------------------------------------------
def _expand_weight_options(argv: list[str]) -> list[str]:
    """LIBSVM's ``-w<label> <weight>`` (e.g. ``-w1 5``, ``-w-1 2``) -> ``--weight <label> <weight>``."""
    out = []
    for i, token in enumerate(argv):
        if token == "--":
            return out + argv[i:]
        match = re.fullmatch(r"-w(.+)", token)
        out += ["--weight", match.group(1)] if match else [token]
    return out


def _add_table_options(p, impute=True):
    p.add_argument("--target", metavar="COLUMN",
                   help="CSV/TSV/Parquet data: the label column (default: the last column)")
    if impute:
        p.add_argument("--impute", choices=("median", "most_frequent"),
                       help="CSV/TSV/Parquet data: fill missing values (numeric columns by the median or "
                            "most frequent value, categorical by the most frequent); default: refuse them")


def _add_zero_based(p):
    p.add_argument("--zero-based", choices=("auto", "yes", "no"), default="auto",
                   help="feature indices of svmlight data files: 0-based (scikit-learn's "
                        "dump_svmlight_file), 1-based (LIBSVM), or auto: 0-based when index 0 occurs")


def _train_parser(sub):
    # add_help=False: -h is LIBSVM's shrinking option; --help is added below
    p = sub.add_parser("train", add_help=False, help="train an SVM and write a model file",
                       description="Train an SVM (LIBSVM's svm-train options) and write MODEL.")
    p.add_argument("data", metavar="DATA", help="svmlight/LIBSVM data file, or a named dataset")
    p.add_argument("model", metavar="MODEL", help="model file to write (LIBSVM format; native if *.npz)")
    p.add_argument("-s", dest="svm_type", type=int, default=0, choices=range(5), metavar="svm_type",
                   help="0 C-SVC (default), 1 nu-SVC, 2 one-class SVM, 3 epsilon-SVR, 4 nu-SVR")
    p.add_argument("-t", dest="kernel_type", type=int, choices=range(5), metavar="kernel_type",
                   help="0 linear, 1 polynomial, 2 rbf (default), 3 sigmoid, 4 precomputed kernel "
                        "(DATA rows: 0:serial 1:k(x,x_1) ... n:k(x,x_n), as LIBSVM)")
    p.add_argument("--kernel", choices=list(LIBSVM_KERNEL_CODES), help="kernel by name (rbf)")
    p.add_argument("-c", "--C", dest="C", type=float, help="cost C (default 1, or the dataset's)")
    p.add_argument("-g", "--gamma", dest="gamma", type=float,
                   help="gamma (default 1/num_features, or the dataset's)")
    p.add_argument("-d", "--degree", dest="degree", type=int, default=3, help="polynomial degree (3)")
    p.add_argument("-r", "--coef0", dest="coef0", type=float, default=0.0, help="coef0 (0)")
    p.add_argument("-m", "--cache-size", dest="cache_size", type=float, default=100.0,
                   help="kernel cache in MB (100)")
    p.add_argument("-n", "--nu", dest="nu", type=float, default=0.5, help="nu of -s 1, 2, 4 (0.5)")
    p.add_argument("-p", "--epsilon", dest="epsilon", type=float, default=0.1,
                   help="epsilon of the epsilon-SVR loss, -s 3 (0.1)")
    p.add_argument("-e", "--tol", dest="tol", type=float, default=1e-3, help="stopping tolerance (0.001)")
    p.add_argument("-w", "--weight", dest="weights", nargs=2, action="append", default=[],
                   metavar=("LABEL", "WEIGHT"),
                   help="multiply C of class LABEL by WEIGHT (LIBSVM's -wLABEL WEIGHT; C-SVC); repeatable")
    p.add_argument("-b", dest="b", type=int, choices=(0, 1), default=0, metavar="0|1",
                   help="1: train probability estimates (Platt scaling)")
    p.add_argument("--probability", action="store_true", help="same as -b 1")
    p.add_argument("-h", dest="shrinking", type=int, choices=(0, 1), metavar="0|1",
                   help="shrinking heuristics, 0 or 1 (default 1)")
    p.add_argument("--help", action="help", help="show this help message and exit")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    p.add_argument("--algorithm", choices=("svc", "budget-l1", "budget-l2", "bsgd"), default="svc",
                   help="svc (exact C-SVC, default) or budget-l1 / budget-l2 (Dekel & Singer's SVM on "
                        "a budget, leansvm.BudgetSVC; needs --budget)")
    p.add_argument("--budget", type=int, metavar="B",
                   help="budget B of budget-l1 / budget-l2 (SVs kept per binary problem after pruning)")
    p.add_argument("--maintenance", choices=("merge", "removal", "projection"), default="merge",
                   help="bsgd: budget maintenance (merge)")
    p.add_argument("--n-merge", dest="n_merge", type=int, default=2, metavar="M",
                   help="bsgd: vectors merged per maintenance step (2; 3-5 is faster)")
    p.add_argument("--merge-solver", dest="merge_solver", choices=("golden", "lookup", "gradient"),
                   default="golden", help="bsgd: golden-section search, lookup table or gradient merge")
    p.add_argument("--epochs", type=int, default=1, help="bsgd: passes over the data (1)")
    _add_zero_based(p)
    _add_table_options(p)
    p.set_defaults(func=cmd_train)


def _predict_parser(sub):
    p = sub.add_parser("predict", help="predict labels with a model file",
                       description="Predict DATA with MODEL, write one label per line to OUTPUT "
                                   "and print the accuracy as svm-predict does. For CSV/TSV/Parquet "
                                   "data: a CSV with a 'prediction' column (and one probability column "
                                   "per class with --probability), on standard output without OUTPUT.")
    p.add_argument("data", metavar="DATA", help="svmlight/LIBSVM data file, CSV/TSV/Parquet table, or a "
                                                "named dataset (test part)")
    p.add_argument("model", metavar="MODEL", help="LIBSVM model file or leansvm .npz")
    p.add_argument("output", metavar="OUTPUT", nargs="?",
                   help="file to write the predicted labels to (optional for tables: standard output)")
    p.add_argument("-q", "--quiet", action="store_true", help="do not print the accuracy")
    p.add_argument("--probability", action="store_true",
                   help="tables: add the class probabilities (the model must have them); regression: print "
                        "the Laplace noise model")
    p.add_argument("-b", dest="b", type=int, choices=(0, 1), default=0, metavar="0|1", help="1: same as --probability")
    _add_zero_based(p)
    _add_table_options(p, impute=False)
    p.set_defaults(func=cmd_predict)


def _info_parser(sub):
    p = sub.add_parser("info", help="describe a model file", description="Describe a model file.")
    p.add_argument("model", metavar="MODEL", help="LIBSVM model file or leansvm .npz")
    p.set_defaults(func=cmd_info)


def _fit_parser(sub):
    p = sub.add_parser("fit", help="choose C and gamma, train, compress: the cheapest accurate model",
                       description="The main job (leansvm.fit_lean): select C and gamma, train (exact or "
                                   "budgeted), compress to the smallest model within --max-accuracy-drop "
                                   "of the best, write MODEL and optionally an HTML report.")
    p.add_argument("data", metavar="DATA", help="svmlight/LIBSVM data file, or a named dataset")
    p.add_argument("-o", "--output", dest="model", required=True, metavar="MODEL",
                   help="model file to write (LIBSVM format; native if *.npz or labels are not integers)")
    p.add_argument("--test", metavar="DATA", help="test data, only measured (default: a named dataset's test part)")
    p.add_argument("--max-accuracy-drop", type=float, default=0.5, metavar="POINTS",
                   help="allowed validation accuracy drop in percentage points (0.5)")
    p.add_argument("--task", choices=("auto", "classification", "regression", "novelty"), default="auto",
                   help="auto (default): regression when the targets are continuous (non-integer values), "
                        "else classification; novelty: a one-class SVM (training labels ignored)")
    p.add_argument("--max-error-increase", type=float, default=2.0, metavar="PCT",
                   help="regression: allowed validation RMSE increase in percent of the exact SVR's (2)")
    p.add_argument("--nu", type=float, default=0.05,
                   help="novelty: the share of training rows allowed outside (0.05)")
    p.add_argument("--max-disagreement", type=float, default=1.0, metavar="PCT",
                   help="novelty: allowed share of validation rows labelled otherwise than by the exact "
                        "one-class SVM, in percent (1)")
    p.add_argument("--budget-seconds", type=float, metavar="S",
                   help="when the exact fit is estimated to take longer: the exact solver on the "
                        "largest subsample fitting half of S, beside budget (BSGD) models")
    p.add_argument("--report", metavar="HTML", help="write a self-contained HTML report here")
    p.add_argument("--C-grid", type=float, nargs="+", metavar="C",
                   help="C values to search (default: the wide search, C 2^-5..2^15 and gamma 2^-12..2^6 x "
                        "'scale', extended at the edges, 5-fold CV with successive halving)")
    p.add_argument("--gamma-grid", type=float, nargs="+", metavar="G",
                   help="gamma values to search (of the scaled features; default: the wide search)")
    p.add_argument("--selection-size", type=int, default=4000,
                   help="rows of the last round of the C, gamma search (4000)")
    p.add_argument("--class-weight", choices=["balanced"], default=None,
                   help="'balanced': C_i = C n / (k n_class), as scikit-learn's class_weight='balanced'")
    p.add_argument("--no-refit", dest="refit", action="store_false",
                   help="write the model chosen on the validation part, not the same kind and size "
                        "trained again on all rows")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--no-scale", dest="scale", action="store_false",
                   help="train on the features as given (default: standardise dense data, divide sparse "
                        "data by each feature's largest absolute value; kept with the model, and as "
                        "svm-scale's range file MODEL.range beside a LIBSVM model file)")
    _add_zero_based(p)
    _add_table_options(p)
    p.set_defaults(func=cmd_fit)


def cmd_fit(args) -> int:
    from leansvm.lean import fit_lean, format_table, save_result_model
    from leansvm.progress import progress_enabled

    if not 0 <= args.max_accuracy_drop < 100:
        raise UsageError(f"leansvm fit: error: --max-accuracy-drop is in percentage points, "
                         f"got {args.max_accuracy_drop}")
    X, y, described, ds = load_data(args.data, "train", args)
    X_test = y_test = None
    if args.test is not None:
        X_test, y_test, _, _ = load_data(args.test, "test", args)
    elif ds is not None:
        X_test, y_test = ds.X_test, np.asarray(ds.y_test)
    if args.test is not None and is_table_file(args.test) != is_table_file(args.data):
        raise ValueError(f"{args.data} and {args.test} must both be tables or both svmlight files")
    if X_test is not None and not is_table_file(args.data) and X_test.shape[1] != X.shape[1]:
        d = max(X.shape[1], X_test.shape[1])
        X, X_test = widen(X, d), widen(X_test, d)
    if not args.quiet:
        print(f"leansvm fit: {described}")
    if args.task == "novelty":
        return _fit_novelty(args, X, X_test, y_test, described)
    if _is_regression(args.task, y):
        return _fit_regression(args, X, y, X_test, y_test, described)
    result = fit_lean(X, y, X_test=X_test, y_test=y_test, impute=args.impute, scale=args.scale,
                      max_accuracy_drop=args.max_accuracy_drop / 100,
                      budget_seconds=args.budget_seconds, Cs=args.C_grid, gammas=args.gamma_grid,
                      selection_size=args.selection_size, class_weight=args.class_weight, refit=args.refit,
                      verbose=not args.quiet,
                      progress=False if args.quiet else progress_enabled(None))   # bars on a terminal
    path = save_result_model(result, args.model)
    if args.report:
        from leansvm.report import write_report
        write_report(result, args.report, title=f"leansvm fit: {described}")
    if not args.quiet:
        print("\n" + format_table(result))
        print(f"\nmodel written to {path}")
        if args.report:
            print(f"report written to {args.report}")
    return 0


def _is_regression(task, y) -> bool:
    if task != "auto":
        return task == "regression"
    from sklearn.utils.multiclass import type_of_target
    return type_of_target(np.asarray(y)) == "continuous"


def _fit_regression(args, X, y, X_test, y_test, described) -> int:
    """``leansvm fit`` on regression targets: :func:`leansvm.lean_regression.fit_lean_regression`."""
    from leansvm.lean_regression import fit_lean_regression

    if not 0 <= args.max_error_increase < 100:
        raise UsageError(f"leansvm fit: error: --max-error-increase is in percent, got {args.max_error_increase}")
    result = fit_lean_regression(X, y, X_test=X_test, y_test=y_test, impute=args.impute,
                                 scale=args.scale, max_error_increase=args.max_error_increase / 100,
                                 Cs=args.C_grid, verbose=not args.quiet)
    return _finish_one_output(args, result, described)


def _fit_novelty(args, X, X_test, y_test, described) -> int:
    """``leansvm fit --task novelty``: :func:`leansvm.lean_novelty.fit_lean_novelty`."""
    from leansvm.lean_novelty import fit_lean_novelty

    if not 0 <= args.max_disagreement < 100:
        raise UsageError(f"leansvm fit: error: --max-disagreement is in percent, got {args.max_disagreement}")
    if not 0 < args.nu <= 1:
        raise UsageError(f"leansvm fit: error: --nu is the share of training rows allowed outside, in (0, 1]; "
                         f"got {args.nu}")
    result = fit_lean_novelty(X, X_test=X_test, y_test=y_test, impute=args.impute, scale=args.scale, nu=args.nu,
                              max_disagreement=args.max_disagreement / 100, verbose=not args.quiet)
    return _finish_one_output(args, result, described)


def _finish_one_output(args, result, described) -> int:
    """Write a one-output job's model (and report), print its table."""
    from leansvm.lean_one_output import format_one_output_table

    save_any_model(result.model, args.model)
    if args.report:
        from leansvm.report_one_output import write_one_output_report
        write_one_output_report(result, args.report, title=f"leansvm fit: {described}")
    if not args.quiet:
        print("\n" + format_one_output_table(result))
        print(f"\nmodel written to {args.model}")
        if args.report:
            print(f"report written to {args.report}")
    return 0


def _compress_parser(sub):
    p = sub.add_parser("compress", help="compress a model to fewer support vectors (Xu et al. CVM)",
                       description="Compress MODEL (LIBSVM file or .npz) to at most N learned support "
                                   "vectors and write OUT (LIBSVM format; native if *.npz).")
    p.add_argument("model", metavar="MODEL", help="LIBSVM model file or leansvm .npz")
    p.add_argument("output", metavar="OUT", help="compressed model file to write")
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--n-sv", type=int, metavar="N", help="number of support vectors to keep")
    size.add_argument("--ratio", type=float, metavar="R", help="fraction of the support vectors to keep")
    size.add_argument("--max-accuracy-drop", type=float, metavar="PP",
                      help="smallest model within PP percentage points of the full model's accuracy "
                           "on --data (classifiers, one-class models)")
    size.add_argument("--max-error-increase", type=float, metavar="PCT",
                      help="regression: smallest model whose RMSE on --data is at most PCT percent above "
                           "the full model's")
    p.add_argument("--data", "--validation", dest="data", metavar="DATA",
                   help="validation/fitting data (svmlight file or dataset name, test part)")
    p.add_argument("--method", choices=("cvm", "lars"), default="cvm",
                   help="cvm: LARS-SVM + gradient support vectors (default); lars: selection only")
    p.add_argument("--max-iter", type=int, default=None,
                   help="L-BFGS iterations (default: 100-3000, fewer for larger problems)")
    p.add_argument("--layout", choices=("shared", "libsvm"), default=None,
                   help="multi-class one-vs-one: every vector serves every pair (shared) or only its "
                        "class's pairs (libsvm); default libsvm for LIBSVM files, shared for *.npz")
    p.add_argument("--loss", choices=("margin", "squared"), default="margin",
                   help="gradient step: outputs matched up to the margin (margin, default) or exactly")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    _add_zero_based(p)
    p.set_defaults(func=cmd_compress)


def cmd_compress(args) -> int:
    from leansvm.compression.compressed_svc import compress

    for option, value in (("--max-accuracy-drop", args.max_accuracy_drop),
                          ("--max-error-increase", args.max_error_increase)):
        if value is None:
            continue
        if not 0 <= value < 100:
            raise UsageError(f"leansvm compress: error: {option} is in percent, got {value}")
        if args.data is None:
            raise UsageError(f"leansvm compress: error: {option} needs --data")
    preprocessor, model = io.split_preprocessing(load_any_model(args.model))   # compress the kernel model
    X = y = None
    if args.data is not None:
        X, y, _, _ = load_data(args.data, "test", args)
        model, X = match_features(model, X if preprocessor is None else preprocessor.transform(X))
    drop = None if args.max_accuracy_drop is None else args.max_accuracy_drop / 100
    increase = None if args.max_error_increase is None else args.max_error_increase / 100
    start = time.perf_counter()
    layout = args.layout or ("shared" if str(args.output).endswith(".npz") else "libsvm")
    small = compress(model, n_sv=args.n_sv, ratio=args.ratio, max_accuracy_drop=drop, max_error_increase=increase,
                     X=X, y=y, method=args.method, max_iter=args.max_iter, random_state=0, layout=layout,
                     loss=args.loss)
    elapsed = time.perf_counter() - start
    save_any_model(small if preprocessor is None else io.with_preprocessing(preprocessor, small), args.output)
    if not args.quiet:
        print(f"compressed {small.full_n_support_} -> {small.expansion_.n_support} support vectors "
              f"({args.method}, {elapsed:.2f} s)")
        if X is not None and is_regressor(model):
            rmse = [float(np.sqrt(np.mean((m.predict(X) - y) ** 2))) for m in (model, small)]
            print("RMSE on %s: full %.4g, compressed %.4g" % (args.data, *rmse))
        elif X is not None:      # classifiers; one-class models against +1 / -1 labels
            accuracy = [float(np.mean(_equal_labels(m.predict(X), y))) for m in (model, small)]
            print("accuracy on %s: full %.4f, compressed %.4f" % (args.data, *accuracy))
        print(f"model written to {args.output}")
    return 0


def _export_parser(sub):
    p = sub.add_parser("export", help="export a model file to ONNX (needs leansvm[onnx])",
                       description="Write MODEL as an ONNX graph (input X; outputs label, scores and, for a "
                                   "binary model with LIBSVM probA/probB, probabilities). The default float64 "
                                   "matmul graph reproduces leansvm's scores to ~1e-10; the SVMClassifier "
                                   "operator and --float32 store float32 and can be off by more than 1e-4 "
                                   "(banana: 2.7e-4 operator, 1.7e-2 float32 graph).")
    p.add_argument("model", metavar="MODEL", help="LIBSVM model file or leansvm .npz")
    p.add_argument("output", metavar="OUTPUT", help="ONNX file to write (e.g. model.onnx)")
    p.add_argument("--method", choices=("auto", "matmul", "svm_classifier", "svm_regressor"), default="auto",
                   help="standard operators (matmul, the default: float64, exact to ~1e-10), "
                        "ai.onnx.ml.SVMClassifier (binary / one-vs-one; float32 storage: scores off by up to "
                        "~3e-4 on large-C models such as banana and a9a) or ai.onnx.ml.SVMRegressor "
                        "(regression and one-class models, float32)")
    p.add_argument("--float32", action="store_true",
                   help="float32 matmul graph (fastest; scores off by up to ~1e-2 on large-C models)")
    p.add_argument("--no-probabilities", action="store_true", help="leave out the probabilities output")
    p.set_defaults(func=cmd_export)


def cmd_export(args) -> int:
    """``leansvm export MODEL OUTPUT``: see :mod:`leansvm.io.onnx`."""
    model = load_any_model(args.model)
    io.save_onnx(model, args.output, method=args.method, dtype=np.float32 if args.float32 else np.float64,
                 probabilities=False if args.no_probabilities else None)
    print(f"ONNX model ({args.method}) written to {args.output}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="leansvm", description="Kernel SVMs, LIBSVM-compatible command line.")
    from leansvm import __version__
    parser.add_argument("--version", action="version", version=f"leansvm {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _train_parser(sub)
    _predict_parser(sub)
    _info_parser(sub)
    _fit_parser(sub)
    _compress_parser(sub)
    _export_parser(sub)
    _path_parser(sub)
    return parser


def _path_parser(sub):
    p = sub.add_parser("path", help="regularisation path over C with safe sample screening",
                       description="Fit one model per C (log-spaced, smallest first) with warm start and "
                                   "safe screening (Ogawa et al.); print C, #SV, screening rate, times "
                                   "and, with a test set, accuracy.")
    p.add_argument("data", metavar="DATA", help="svmlight/LIBSVM data file, or a named dataset")
    p.add_argument("--test", metavar="TEST", help="test data (default: a named dataset's test part)")
    p.add_argument("--kernel", choices=("linear", "poly", "rbf", "sigmoid"), default="rbf")
    p.add_argument("--gamma", default=None, help="kernel gamma (default: the dataset's, else 'scale')")
    p.add_argument("--c-min", type=float, default=1e-2)
    p.add_argument("--c-max", type=float, default=1e2)
    p.add_argument("--n-c", type=int, default=20, help="number of C values (20)")
    p.add_argument("--screening", choices=("it", "bt1", "bt2", "gap", "none"), default="it")
    p.add_argument("--dynamic", action="store_true", help="also screen during each solve (duality-gap rule)")
    p.add_argument("--tol", type=float, default=1e-3)
    _add_zero_based(p)
    p.set_defaults(func=cmd_path)


def cmd_path(args) -> int:
    from leansvm.paths.model_selection import default_C_grid, svm_path

    if not (0 < args.c_min <= args.c_max) or args.n_c < 1:
        raise UsageError("leansvm path: error: need 0 < --c-min <= --c-max and --n-c >= 1")
    X, y, description, ds = load_data(args.data, "train", args)
    test = load_data(args.test, "test", args)[:2] if args.test else (
        (ds.X_test, np.asarray(ds.y_test)) if ds is not None else None)
    gamma = args.gamma if args.gamma is not None else (ds.gamma if ds is not None else "scale")
    gamma = gamma if gamma in ("scale", "auto") else float(gamma)
    Cs = default_C_grid(args.n_c, args.c_min, args.c_max) if args.n_c > 1 else [args.c_min]
    screening = None if args.screening == "none" else args.screening
    start = time.perf_counter()
    path = svm_path(X, y, Cs, kernel=args.kernel, gamma=gamma, screening=screening, tol=args.tol,
                    dynamic=args.dynamic)
    print(f"{description}: {X.shape[0]} samples, kernel {args.kernel}, gamma {path.models[0]._gamma:g}, "
          f"screening {args.screening}, {time.perf_counter() - start:.2f} s in all")
    print(f"{'C':>10} {'#SV':>7} {'screened':>9} {'rule s':>8} {'solve s':>8}" + ("  accuracy" if test else ""))
    for model, C, m, rate, t_rule, t_solve in zip(path.models, path.Cs, path.n_support, path.screening_rate,
                                                 path.rule_seconds, path.solve_seconds):
        acc = f"  {model.score(*test):8.4f}" if test else ""
        print(f"{C:10.4g} {m:7d} {rate:9.1%} {t_rule:8.3f} {t_solve:8.3f}{acc}")
    return 0


# -- data and models -------------------------------------------------------------------
def load_data(spec: str, part: str, args=None):
    """(X, y, description, dataset or None): a data file, else a named dataset's train/test part.

    ``args.zero_based`` is ``--zero-based`` (auto, yes, no); what the reader decided is said on
    stderr. A file that "auto" read as 0-based sets it to "yes" for the command's later files: a
    test file is read as its training file was, even when its own first column has no entry."""
    if os.path.exists(spec) and is_table_file(spec):
        return _load_table(spec, args)
    if os.path.exists(spec):
        notes = []
        choice = getattr(args, "zero_based", "auto")
        X, y = io.load_svmlight(spec, zero_based={"yes": True, "no": False}.get(choice, "auto"), notes=notes)
        for note in notes:
            print(f"leansvm: note: {note}", file=sys.stderr)
            if io.svmlight.ZERO_BASED_NOTE in note and args is not None:
                args.zero_based = "yes"
        return X, y, spec, None
    try:
        from leansvm import datasets
    except ImportError:
        datasets = None
    if datasets is None:
        raise FileNotFoundError(f"{spec}: no such data file")
    try:
        ds = datasets.load(spec)
    except ValueError as exc:
        if str(exc).startswith("unknown dataset"):
            raise FileNotFoundError(f"{spec}: no such data file, and not a dataset name "
                                    f"(known: {', '.join(datasets.NAMES)})") from None
        raise
    if part == "train":
        return ds.X_train, np.asarray(ds.y_train), f"dataset {ds.name} (training part)", ds
    return ds.X_test, np.asarray(ds.y_test), f"dataset {ds.name} (test part)", ds


def _load_table(spec, args):
    """(features DataFrame, labels or None, description, None) of a CSV/TSV/Parquet file."""
    from leansvm.preprocessing.tabular import read_table, split_target

    if getattr(args, "func", None) not in (cmd_fit, cmd_train, cmd_predict):
        raise ValueError(f"{spec}: tables (CSV/TSV/Parquet) are read by leansvm fit, train and predict; "
                         "this command takes svmlight/LIBSVM data files")
    frame = read_table(spec)
    target = getattr(args, "target", None)
    if args.func is cmd_predict and (target is None or target not in frame.columns):
        return frame, None, spec, None               # cmd_predict finds the labels, if any, itself
    if args.func is cmd_fit and args.task == "novelty" and target is None:
        return frame, None, f"{spec} (every column a feature)", None    # novelty: labels only by --target
    features, labels = split_target(frame, target)
    return features, labels, f"{spec} (target column {target or frame.columns[-1]!r})", None


def load_any_model(path):
    """A LIBSVM model file or a native ``.npz``, told apart by the file's first bytes. A LIBSVM
    model with svm-scale's range file beside it (``MODEL.range``, written by ``leansvm fit``)
    comes with that scaling: the data is scaled as it was for training."""
    if io.is_native_model_file(path):
        return io.load_model(path)
    from leansvm.preprocessing.scaling import FeatureScaler, range_file_path

    model = io.load_libsvm_model(path)
    if not os.path.exists(range_file_path(path)):
        return model
    print(f"leansvm: note: scaling the data by {range_file_path(path)} (svm-scale's range file)", file=sys.stderr)
    scaler = FeatureScaler.from_range_file(range_file_path(path), n_features=model.n_features_in_)
    if scaler.n_features_in_ > model.n_features_in_:
        model, _ = match_features(model, sp.csr_matrix((0, scaler.n_features_in_)))
    return io.with_preprocessing(scaler, model)


def save_any_model(model, path):
    """Native format for ``*.npz`` names, LIBSVM format otherwise."""
    if os.fspath(path).lower().endswith(".npz"):
        io.save_model(model, path)
    else:
        io.save_libsvm_model(model, path)


def match_features(model, X):
    """Make X and the model agree on the number of features, as LIBSVM's sparse vectors do.

    Missing columns of X are zeros; columns beyond the model's support
    vectors meet zero entries in them (they still count in RBF distances).
    """
    d_model, d_data = model.n_features_in_, X.shape[1]
    if d_data < d_model:
        X = widen(X, d_model)
    elif d_data > d_model:
        from leansvm.core.expansion import KernelExpansion
        exp = model.expansion_
        model.expansion_ = KernelExpansion(widen(exp.support_vectors, d_data), exp.coef, exp.intercept, exp.kernel)
        model.n_features_in_ = d_data
    return model, X


def _check_integer_labels(y, model_path):
    if os.fspath(model_path).lower().endswith(".npz"):
        return
    io.libsvm.integer_labels(np.unique(y))  # raises a clear ValueError for string/fractional labels


def _format_labels(labels) -> str:
    return "".join(io.libsvm.format_label(v) + "\n" for v in np.asarray(labels).tolist())


# -- commands --------------------------------------------------------------------------
def _kernel_name(args) -> str:
    by_code = _KERNEL_FROM_CODE[args.kernel_type] if args.kernel_type is not None else None
    if by_code and args.kernel and by_code != args.kernel:
        raise UsageError(f"leansvm train: error: -t {args.kernel_type} ({by_code}) contradicts "
                         f"--kernel {args.kernel}")
    return by_code or args.kernel or "rbf"


def _class_weight(weights, y):
    """``{label: weight}`` for labels present in y; LIBSVM warns about and ignores the others."""
    if not weights:
        return None
    classes = np.unique(y)
    out = {}
    for label, weight in weights:
        try:
            w = float(weight)
        except ValueError:
            raise UsageError(f"leansvm train: error: weight {weight!r} for label {label} "
                             "is not a number") from None
        match = [c for c in classes.tolist() if io.libsvm.format_label(c) == label or str(c) == label]
        if not match:
            try:
                match = [c for c in classes.tolist() if isinstance(c, (int, float)) and c == float(label)]
            except ValueError:
                match = []
        if not match:
            print(f"WARNING: class label {label} specified in weight is not found", file=sys.stderr)
            continue
        out[match[0]] = w
    return out or None


#: LIBSVM's svm_type codes (-s): name, and the estimator (module, class) that trains it
_SVM_TYPES = {0: ("C-SVC", "leansvm.exact.svc", "SVC"), 1: ("nu-SVC", "leansvm.exact.nu_svc", "NuSVC"),
              2: ("one-class SVM", "leansvm.exact.one_class", "OneClassSVM"),
              3: ("epsilon-SVR", "leansvm.exact.svr", "SVR"), 4: ("nu-SVR", "leansvm.exact.svr", "NuSVR")}


def _svm_type_class(code: int):
    import importlib

    _, module, name = _SVM_TYPES[code]
    return getattr(importlib.import_module(module), name)


def _train_options(args, y, ds):
    """Every estimator parameter the command line sets; :func:`_exact_model` keeps those its
    svm type takes (as svm-train ignores -p for a classifier)."""
    kernel = _kernel_name(args)
    C = args.C if args.C is not None else (ds.C if ds is not None else 1.0)
    gamma = args.gamma if args.gamma is not None else (ds.gamma if ds is not None else "auto")
    for name, value in (("C", C), ("tol", args.tol), ("cache size", args.cache_size)):
        if not value > 0:
            raise UsageError(f"leansvm train: error: {name} must be positive, got {value}")
    if args.svm_type in (1, 2, 4) and not 0 < args.nu <= 1:
        raise UsageError(f"leansvm train: error: nu must be in (0, 1], got {args.nu}")
    if args.svm_type == 3 and not args.epsilon >= 0:
        raise UsageError(f"leansvm train: error: epsilon (-p) must be non-negative, got {args.epsilon}")
    probability = bool(args.b or args.probability)
    if probability and args.svm_type == 2:
        raise UsageError("leansvm train: error: probability estimates (-b 1) are not implemented for the "
                         "one-class SVM (-s 2)")
    if args.algorithm != "svc" and args.svm_type != 0:
        raise UsageError(f"leansvm train: error: --algorithm {args.algorithm} trains a C-SVC (-s 0), "
                         f"not -s {args.svm_type}")
    return dict(C=C, nu=args.nu, epsilon=args.epsilon, kernel=kernel, gamma=gamma, degree=args.degree,
                coef0=args.coef0, tol=args.tol, cache_size=args.cache_size,
                class_weight=_class_weight(args.weights, y) if args.svm_type in (0, 1) else None,
                probability=probability, shrinking=args.shrinking is None or bool(args.shrinking))


def _exact_model(svm_type: int, params):
    """The exact estimator of LIBSVM's svm type, with the parameters it takes."""
    cls = _svm_type_class(svm_type)
    accepted = cls().get_params()
    return cls(random_state=0, **{k: v for k, v in params.items() if k in accepted})  # reproducible


def _precomputed_rows(X, training: bool, needed: int = 0):
    """A precomputed-kernel data file (``0:serial 1:k(x,x_1) ...``, read 0-based) as scikit-learn's
    kernel matrix: training rows must carry serials 1..n in order (the matrix is then square)."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    if training:
        n = X.shape[0]
        serial = X[:, 0] if X.shape[1] else np.zeros(n)
        if not np.array_equal(serial, np.arange(1, n + 1)):
            bad = int(np.flatnonzero(serial != np.arange(1, n + 1))[0])
            raise ValueError(f"precomputed kernel (-t 4): training row {bad + 1} has 0:{serial[bad]:g}; the "
                             "rows must be numbered 0:1, 0:2, ... in order")
        needed = n
    K = X[:, 1:]
    if K.shape[1] > needed and training:
        raise ValueError(f"precomputed kernel (-t 4): rows hold {K.shape[1]} kernel values for {needed} "
                         "training samples")
    return widen(K, needed)


def cmd_train(args) -> int:
    if args.kernel_type == 4 or args.kernel == "precomputed":
        args.zero_based = "yes"                     # 0:serial is column 0
    X, y, described, ds = load_data(args.data, "train", args)
    params = _train_options(args, y, ds)
    if args.svm_type in (0, 1):
        _check_integer_labels(y, args.model)
    if params["kernel"] == "precomputed":
        if is_table_file(args.data):
            raise UsageError("leansvm train: error: a precomputed kernel (-t 4) is read from svmlight data, "
                             "not from a table")
        X = _precomputed_rows(X, training=True)
    start = time.perf_counter()
    if args.algorithm in ("budget-l1", "budget-l2"):
        model = _budget_model(args, params)
    elif args.algorithm == "bsgd":
        model = _bsgd_model(args, params)
    else:
        model = _exact_model(args.svm_type, params)
    fit_args = (y,) if args.svm_type != 2 else ()   # one-class: labels are ignored, as by svm-train
    if is_table_file(args.data):              # impute, one-hot encode, scale: kept with the model
        from leansvm.preprocessing.tabular import TablePreprocessor
        preprocessor = TablePreprocessor(impute=args.impute).fit(X)
        model = io.with_preprocessing(preprocessor, model.fit(preprocessor.transform(X), *fit_args))
        if not args.quiet:
            print(f"preprocessing: {preprocessor.describe()}")
    else:
        model = model.fit(X, *fit_args)
    elapsed = time.perf_counter() - start
    save_any_model(model, args.model)
    if not args.quiet:
        _print_train_summary(io.split_preprocessing(model)[1], X, described, elapsed, args.model,
                             _SVM_TYPES[args.svm_type][0])
    return 0


def _budget_model(args, params):
    """leansvm.BudgetSVC for ``--algorithm budget-l1|budget-l2 --budget B``."""
    from leansvm.budget.budget_svc import BudgetSVC

    if args.budget is None or args.budget < 1:
        raise UsageError(f"leansvm train: error: --algorithm {args.algorithm} needs --budget B (a positive integer)")
    if params["class_weight"] is not None or params["probability"]:
        raise UsageError(f"leansvm train: error: --algorithm {args.algorithm} supports neither class weights "
                         "nor probability estimates")
    keep = ("C", "kernel", "gamma", "degree", "coef0", "tol", "cache_size")
    return BudgetSVC(budget=args.budget, norm=args.algorithm[-2:], **{k: params[k] for k in keep})


def _bsgd_model(args, params):
    """leansvm.BSGDClassifier for ``--algorithm bsgd --budget B`` (one-vs-one: LIBSVM files)."""
    from leansvm.budget.bsgd_classifier import BSGDClassifier

    if args.budget is None or args.budget < 1:
        raise UsageError("leansvm train: error: --algorithm bsgd needs --budget B (a positive integer)")
    if params["class_weight"] is not None or params["probability"]:
        raise UsageError("leansvm train: error: --algorithm bsgd supports neither class weights "
                         "nor probability estimates")
    return BSGDClassifier(budget=args.budget, C=params["C"], kernel=params["kernel"], gamma=params["gamma"],
                          degree=params["degree"], coef0=params["coef0"], maintenance=args.maintenance,
                          n_merge=args.n_merge, merge_solver=args.merge_solver, epochs=args.epochs,
                          multiclass="ovo", random_state=0)


def _print_train_summary(model, X, described, elapsed, path, svm_name):
    kernel = model.expansion_.kernel
    print(f"trained {svm_name} on {described}: {X.shape[0]} samples x {X.shape[1]} "
          + ("kernel columns" if kernel.pairwise else "features"))
    params = model.get_params()
    shown = ", ".join(f"{k} = {params[k]:g}" for k in ("C", "nu", "epsilon") if k in params)
    print(f"kernel {kernel.name}, {shown}" + (f", gamma = {kernel.gamma:g}" if kernel.name not in (
          "linear", "precomputed") else "")
          + (f", degree {kernel.degree}" if kernel.name == "poly" else "")
          + (f", coef0 = {kernel.coef0:g}" if kernel.name in ("poly", "sigmoid") else ""))
    if hasattr(model, "classes_"):
        per_class = ", ".join(f"{io.libsvm.format_label(c)}: {n}" for c, n in zip(model.classes_.tolist(),
                                                                              model.n_support_.tolist()))
        print(f"classes: {' '.join(io.libsvm.format_label(c) for c in model.classes_.tolist())}")
        print(f"support vectors: {model.expansion_.n_support} ({per_class})")
    else:
        print(f"support vectors: {model.expansion_.n_support}")
    if hasattr(model, "epsilon_"):
        print(f"epsilon (tube half-width found): {model.epsilon_:g}")
    print(f"time: {elapsed:.3f} s")
    if model.fit_status_ != 0:
        print("WARNING: the solver stopped before reaching the tolerance", file=sys.stderr)
    if getattr(model, "probability", False) and len(model.classes_) > 2 and not os.fspath(path).endswith(".npz"):
        print("WARNING: multi-class probability estimates are not stored in LIBSVM files",
              file=sys.stderr)
    print(f"model written to {path}")


def cmd_predict(args) -> int:
    args.probability = bool(args.probability or args.b)
    model = load_any_model(args.model)
    kernel_model = io.split_preprocessing(model)[1]
    precomputed = kernel_model.expansion_.kernel.pairwise
    if precomputed:
        args.zero_based = "yes"                     # 0:serial is column 0
    X, y, _, _ = load_data(args.data, "test", args)
    table = is_table_file(args.data)
    if table != hasattr(io.split_preprocessing(model)[0], "feature_names_out_"):
        raise ValueError(f"{args.model} was trained on {'a table' if not table else 'svmlight data'}; "
                         f"{args.data} is {'a table' if table else 'svmlight data'}: give data of the same kind")
    if table:
        X, y = _table_labels(X, y, model)
    else:
        if args.output is None:
            raise UsageError("leansvm predict: error: OUTPUT is required for svmlight data")
        if precomputed:
            needed = getattr(kernel_model, "n_features_in_", None) or _largest_serial(kernel_model)
            X = _precomputed_rows(X, training=False, needed=needed)
        elif io.split_preprocessing(model)[0] is None:     # a scaling matches the features itself
            model, X = match_features(model, X)
    pred = model.predict(X)
    regression = is_regressor(kernel_model)
    if table:
        _write_predictions_csv(model, X, pred, args)
    else:
        with io.atomic_write(args.output, "w", encoding="utf-8") as f:
            f.write("".join("%.17g\n" % v for v in pred.tolist()) if regression else _format_labels(pred))
    if not args.quiet and y is not None:
        out = sys.stdout if args.output else sys.stderr
        sigma = getattr(kernel_model, "probA_", None) if regression and args.probability else None
        if sigma is not None:
            print("Prob. model for test data: target value = predicted value + z,\nz: Laplace distribution "
                  "e^(-|z|/sigma)/(2sigma),sigma=%g" % float(np.ravel(sigma)[0]), file=out)
        if regression:
            print("Mean squared error = %g (regression)\nSquared correlation coefficient = %g (regression)"
                  % _regression_scores(pred, y), file=out)
        else:
            total = len(y)
            correct = int(np.sum(_equal_labels(pred, y)))
            accuracy = 100.0 * correct / total if total else 0.0
            print("Accuracy = %g%% (%d/%d) (classification)" % (accuracy, correct, total), file=out)
    return 0


def _largest_serial(model) -> int:
    """The largest training serial among a precomputed-kernel model's support vectors."""
    serials = model.expansion_.kernel.serials(model.expansion_.support_vectors)
    return int(serials.max()) if serials.size else 0


def _regression_scores(pred, y):
    """svm-predict's (mean squared error, squared correlation coefficient); r^2 is nan when the
    predictions or the targets are constant, as LIBSVM's 0/0."""
    pred, y = np.asarray(pred, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n = y.size
    mse = float(np.mean((pred - y) ** 2)) if n else float("nan")
    sv, sy = pred.sum(), y.sum()
    numerator = (n * np.dot(pred, y) - sv * sy) ** 2
    denominator = (n * np.dot(pred, pred) - sv * sv) * (n * np.dot(y, y) - sy * sy)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = float(np.float64(numerator) / np.float64(denominator))
    return mse, r2


def _table_labels(frame, y, model):
    """(features, labels or None): without --target, the one column the model does not take,
    if there is one, holds the labels (only measured)."""
    if y is not None:
        return frame, y
    extra = [c for c in frame.columns if c not in set(model[0].feature_names_in_)]
    if len(extra) == 1:
        return frame.drop(columns=extra), frame[extra[0]].to_numpy()
    return frame, None


def _write_predictions_csv(model, X, pred, args):
    """A CSV with a ``prediction`` column (and ``probability_<class>`` columns) to OUTPUT or stdout."""
    import pandas as pd

    columns = {"prediction": pred}
    if args.probability:
        try:
            probabilities = model.predict_proba(X)
        except AttributeError as exc:
            raise ValueError(f"{args.model}: no probability estimates ({exc}); train it with -b 1") from None
        for label, column in zip(model.classes_, probabilities.T):
            columns[f"probability_{label}"] = column
    text = pd.DataFrame(columns).to_csv(index=False)
    if args.output is None:
        sys.stdout.write(text)
        return
    with io.atomic_write(args.output, "w", encoding="utf-8") as f:
        f.write(text)


def _equal_labels(pred, y):
    pred, y = np.asarray(pred), np.asarray(y)
    if (pred.dtype.kind in "US") != (y.dtype.kind in "US"):
        return pred.astype(str) == y.astype(str)
    return pred == y


def cmd_info(args) -> int:
    native = io.is_native_model_file(args.model)
    model = io.load_model(args.model) if native else io.load_libsvm_model(args.model)
    prep, model = io.split_preprocessing(model)      # a table's columns or a scaling, then the kernel model
    kernel = model.expansion_.kernel
    params = {"rbf": ["gamma"], "poly": ["gamma", "degree", "coef0"],
              "sigmoid": ["gamma", "coef0"]}.get(kernel.name, [])
    described = ", ".join(f"{p} = {getattr(kernel, p):.17g}" for p in params)
    classes = model.classes_.tolist() if hasattr(model, "classes_") else None
    n_support = getattr(model, "n_support_", None) if classes is not None else None
    print(f"model: {args.model} ({'leansvm native' if native else 'LIBSVM'} format, "
          f"{type(model).__name__}{' with preprocessing' if prep is not None else ''})")
    if hasattr(prep, "feature_names_in_"):
        print(f"input columns: {', '.join(map(str, prep.feature_names_in_))}")
    if prep is not None:
        print(f"preprocessing: {prep.describe()}")
    print(f"svm type: {io.libsvm.svm_type_of(model)}")
    print(f"kernel: {kernel.name}" + (f" ({described})" if described else ""))
    if classes is not None:
        print(f"classes: {len(classes)} ({' '.join(io.libsvm.format_label(c) for c in classes)})")
        print(f"multi-class: {model.multiclass_}, {model.expansion_.n_outputs} output(s)")
    line = f"support vectors: {model.expansion_.n_support}"
    if n_support is not None:
        line += " (" + ", ".join(f"{io.libsvm.format_label(c)}: {n}" for c, n in zip(classes, n_support.tolist())) + ")"
    print(line)
    print(f"n_features: {getattr(model, 'n_features_in_', 'not stored (precomputed kernel)')}")
    sparse = sp.issparse(model.expansion_.support_vectors)
    print(f"support vector storage: {'sparse (CSR)' if sparse else 'dense'}")
    print(f"probability estimates: {'yes' if getattr(model, 'probA_', None) is not None else 'no'}")
    return 0


# -- entry point -----------------------------------------------------------------------
def main(argv=None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 error, 2 bad command line, 130
    interrupted). Ctrl-C is handled by :mod:`leansvm.interrupts`: one message line, status 130,
    also when the interrupt surfaced as another error or was dropped on the way."""
    argv = list(sys.argv[1:] if argv is None else argv)
    with interrupts.handled(), warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            args = build_parser().parse_args(_expand_weight_options(argv))
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
