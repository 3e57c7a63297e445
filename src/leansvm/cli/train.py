"""``leansvm train``: svm-train's options (-s, -t, -c, -g, -w...), an exact or budget model written to MODEL."""

from __future__ import annotations

import os
import sys
import time

from leansvm import io
from leansvm.core.kernels import LIBSVM_KERNEL_CODES
from leansvm.preprocessing.tabular import is_table_file
from leansvm.cli.svm_train_lines import svm_train_lines
from leansvm.cli.common import (HelpFormatter, _add_table_options, _add_zero_based, _check_integer_labels, _class_weight,
                                add_n_jobs_option, _kernel_name, _precomputed_rows, load_data, save_any_model, UsageError)


EPILOG = """examples:
  leansvm train -c 10 -g 0.1 heart_scale                 # writes heart_scale.model, as svm-train
  leansvm train -v 5 heart_scale                         # 5-fold cross-validation accuracy (svm-train -v)
  leansvm train -s 3 -p 0.1 data.txt data.model          # epsilon-SVR
  leansvm train --algorithm bsgd --budget 500 a9a a9a.model"""


def add_parser(sub):
    # add_help=False: -h is LIBSVM's shrinking option; --help is added below
    p = sub.add_parser("train", add_help=False, help="train an SVM and write a model file",
                       description="Train an SVM (LIBSVM's svm-train options) and write MODEL.",
                       epilog=EPILOG, formatter_class=HelpFormatter)
    p.add_argument("data", metavar="DATA", help="svmlight/LIBSVM data file, or a named dataset")
    p.add_argument("model", metavar="MODEL", nargs="?",
                   help="model file to write (LIBSVM format; native if *.npz); default: DATA's file name + "
                        "'.model' in the current folder, as svm-train")
    p.add_argument("-v", dest="folds", type=int, metavar="N",
                   help="N-fold cross-validation, as svm-train -v: print the accuracy (regression: mean "
                        "squared error and squared correlation); no model is written")
    p.add_argument("-s", dest="svm_type", type=int, default=0, choices=range(5), metavar="svm_type",
                   help="0 C-SVC, 1 nu-SVC, 2 one-class SVM, 3 epsilon-SVR, 4 nu-SVR")
    p.add_argument("-t", dest="kernel_type", type=int, choices=range(5), metavar="kernel_type",
                   help="0 linear, 1 polynomial, 2 rbf, 3 sigmoid, 4 precomputed kernel "
                        "(DATA rows: 0:serial 1:k(x,x_1) ... n:k(x,x_n), as LIBSVM) (default: 2, rbf)")
    p.add_argument("--kernel", choices=list(LIBSVM_KERNEL_CODES), help="kernel by name (default: rbf)")
    p.add_argument("-c", "--c", "--C", dest="C", type=float, help="cost C (default: 1, or the dataset's)")
    p.add_argument("-g", "--gamma", dest="gamma", type=float,
                   help="gamma (default: 1/num_features, or the dataset's)")
    p.add_argument("-d", "--degree", dest="degree", type=int, default=3, help="polynomial degree")
    p.add_argument("-r", "--coef0", dest="coef0", type=float, default=0.0, help="coef0")
    p.add_argument("-m", "--cache-size", dest="cache_size", type=float, default=100.0,
                   help="kernel cache in MB")
    p.add_argument("-n", "--nu", dest="nu", type=float, default=0.5, help="nu of -s 1, 2, 4")
    p.add_argument("-p", "--epsilon", dest="epsilon", type=float, default=0.1,
                   help="epsilon of the epsilon-SVR loss, -s 3")
    p.add_argument("-e", "--tol", dest="tol", type=float, default=1e-3, help="stopping tolerance")
    p.add_argument("-w", "--weight", dest="weights", nargs=2, action="append", default=[],
                   metavar=("LABEL", "WEIGHT"),
                   help="multiply C of class LABEL by WEIGHT (LIBSVM's -wLABEL WEIGHT; C-SVC); repeatable")
    p.add_argument("-b", dest="b", type=int, choices=(0, 1), default=0, metavar="0|1",
                   help="1: train probability estimates (Platt scaling)")
    p.add_argument("--probability", action="store_true", help="same as -b 1")
    p.add_argument("-h", dest="shrinking", type=int, choices=(0, 1), metavar="0|1",
                   help="shrinking heuristics, 0 or 1 (default: 1)")
    p.add_argument("--help", action="help", help="show this help message and exit")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    add_n_jobs_option(p)
    p.add_argument("--algorithm", choices=("svc", "budget-l1", "budget-l2", "bsgd"), default="svc",
                   help="svc (the exact C-SVC) or budget-l1 / budget-l2 (Dekel & Singer's SVM on "
                        "a budget, leansvm.BudgetSVC; needs --budget)")
    p.add_argument("--budget", type=int, metavar="B",
                   help="budget B of budget-l1 / budget-l2 (SVs kept per binary problem after pruning)")
    p.add_argument("--maintenance", choices=("merge", "removal", "projection"), default="merge",
                   help="bsgd: budget maintenance")
    p.add_argument("--n-merge", dest="n_merge", type=int, default=2, metavar="M",
                   help="bsgd: vectors merged per maintenance step")
    p.add_argument("--merge-solver", dest="merge_solver", choices=("golden", "lookup", "gradient"),
                   default="golden", help="bsgd: golden-section search, lookup table or gradient merge")
    p.add_argument("--epochs", type=int, default=1, help="bsgd: passes over the data")
    _add_zero_based(p)
    _add_table_options(p)
    p.set_defaults(func=run)


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


def run(args) -> int:
    if args.kernel_type == 4 or args.kernel == "precomputed":
        args.zero_based = "yes"                     # 0:serial is column 0
    if args.folds is not None and args.folds < 2:
        raise UsageError(f"leansvm train: error: -v needs at least 2 folds, got {args.folds}")
    if args.model is None:
        args.model = os.path.basename(os.path.normpath(args.data)) + ".model"
    X, y, described, ds = load_data(args.data, "train", args)
    params = _train_options(args, y, ds)
    if args.svm_type in (0, 1) and args.folds is None:
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
    if args.folds is not None:
        return _cross_validate(args, model, X, y)
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
        fitted, svm_name = io.split_preprocessing(model)[1], _SVM_TYPES[args.svm_type][0]
        if args.algorithm == "svc":                   # svm-train's own lines first, for scripts that parse them
            print("\n".join(svm_train_lines(fitted, y, svm_name)))
        _print_train_summary(fitted, X, described, elapsed, args.model, svm_name)
    return 0


def _cross_validate(args, model, X, y) -> int:
    """svm-train -v N: each fold's rows predicted by a model trained without them, on the folds
    svm-train draws (:mod:`leansvm.cli.libsvm_folds`), scored as svm-train prints the scores."""
    import numpy as np
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline
    from sklearn.utils import _safe_indexing as rows_of          # arrays, sparse matrices and DataFrames

    from leansvm.cli.libsvm_folds import libsvm_folds

    if is_table_file(args.data):
        from leansvm.preprocessing.tabular import TablePreprocessor
        model = make_pipeline(TablePreprocessor(impute=args.impute), model)
    y = np.asarray(y)
    regression, one_class = args.svm_type in (3, 4), args.svm_type == 2
    predicted = np.empty(len(y), dtype=float if regression or one_class else y.dtype)
    for held_out in libsvm_folds(y, args.folds, stratified=args.svm_type in (0, 1)):
        train = np.setdiff1d(np.arange(len(y)), held_out)
        fitted = clone(model).fit(rows_of(X, train)) if one_class else clone(model).fit(rows_of(X, train), y[train])
        predicted[held_out] = fitted.predict(rows_of(X, held_out))
    if regression:
        mse = float(np.mean((predicted - y) ** 2))
        r2 = float(np.corrcoef(predicted, y)[0, 1] ** 2) if np.std(predicted) > 0 and np.std(y) > 0 else 0.0
        print(f"Cross Validation Mean squared error = {mse:g}")
        print(f"Cross Validation Squared correlation coefficient = {r2:g}")
    else:
        print(f"Cross Validation Accuracy = {100 * float(np.mean(predicted == y)):g}%")
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
