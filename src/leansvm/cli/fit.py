"""``leansvm fit``: the main job (:mod:`leansvm.job`) from the command line, with its report."""

from __future__ import annotations

import os

import numpy as np

from leansvm import interrupts
from leansvm.preprocessing.tabular import is_table_file
from leansvm.core.validation import widen
from leansvm.cli.common import (HelpFormatter, UsageError, _add_table_options, _add_zero_based, add_n_jobs_option,
                                add_share_option, load_data, share_from)


EPILOG = """examples:
  leansvm fit train.txt model.txt --test test.txt --report report.html
  leansvm fit customers.csv model.npz --target churned --impute median
  leansvm fit magic magic.npz --max-accuracy-drop 1% --budget-seconds 120"""


def add_parser(sub):
    p = sub.add_parser("fit", help="choose C and gamma, train, compress: the cheapest accurate model",
                       description="The main job (leansvm.fit_lean): select C and gamma, train the exact model "
                                   "and cheaper ones (budgeted, compressed), return the smallest whose "
                                   "accuracy drop against the exact model is within the allowed drop, "
                                   "write MODEL and optionally an HTML report.",
                       epilog=EPILOG, formatter_class=HelpFormatter)
    p.add_argument("data", metavar="DATA", help="svmlight/LIBSVM data file, or a named dataset")
    p.add_argument("model_path", metavar="MODEL", nargs="?",
                   help="model file to write (LIBSVM format; native if *.npz or labels are not integers) "
                        "(default: DATA's file name + '.model' in the current folder, as svm-train)")
    p.add_argument("-o", "--output", dest="model", metavar="MODEL",
                   help="the model file, given as an option (the same as MODEL)")
    p.add_argument("--test", metavar="DATA", help="test data, only measured (default: a named dataset's test part)")
    add_share_option(p, "--max-accuracy-drop", "0.5%", "allowed accuracy drop against the exact model", "points")
    p.add_argument("--confidence", type=float, default=0.95, metavar="P",
                   help="a cheaper model is taken when the one-sided P bound of its accuracy drop, paired "
                        "row by row with the exact model on held-out rows, is within the allowed drop")
    p.add_argument("--task", choices=("auto", "classification", "regression", "novelty"), default="auto",
                   help="auto: regression when the targets are continuous (non-integer values), "
                        "else classification; novelty: a one-class SVM (training labels ignored)")
    add_share_option(p, "--max-error-increase", "2%", "regression: allowed validation RMSE increase over the "
                     "exact SVR's", "percent")
    p.add_argument("--nu", type=float, default=0.05,
                   help="novelty: the share of training rows allowed outside")
    add_share_option(p, "--max-disagreement", "1%", "novelty: allowed share of validation rows labelled otherwise "
                     "than by the exact one-class SVM", "percent")
    p.add_argument("--budget-seconds", type=float, metavar="S",
                   help="bound the whole command to about S seconds: every stage gets a share and does "
                        "less to fit it (the log says what was left out) (default: none; the budget models, "
                        "compression and confirming folds then take at most 20 times the exact fit or 3 times "
                        "the time until it, at least 300 s)")
    p.add_argument("--report", metavar="HTML", help="write a self-contained HTML report here "
                                                    "(default: none, no report)")
    p.add_argument("--c-grid", "--C-grid", dest="C_grid", type=float, nargs="+", metavar="C",
                   help="C values to search (default: the wide search, C 2^-5..2^15 and gamma 2^-12..2^6 x "
                        "'scale', extended at the edges, 5-fold CV with successive halving)")
    p.add_argument("--gamma-grid", type=float, nargs="+", metavar="G",
                   help="gamma values to search, of the scaled features (default: the wide search)")
    p.add_argument("--selection-size", type=int, default=4000, metavar="ROWS",
                   help="rows of the last halving round of the C, gamma search (its closing race of the "
                        "best cells and SVC()'s default gamma: twice as many)")
    p.add_argument("--class-weight", choices=["balanced"], default=None,
                   help="'balanced': C_i = C n / (k n_class), as scikit-learn's class_weight='balanced' "
                        "(default: none, every class weighs 1)")
    p.add_argument("--no-refit", dest="refit", action="store_false",
                   help="write the model chosen on the validation part, not the same kind and size "
                        "trained again on all rows")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="under each stage's line, its reasons and the models it tried (the HTML report holds "
                        "them either way)")
    add_n_jobs_option(p)
    p.add_argument("--scale", choices=["auto", "range", "standard", "max-abs", "none"], default="auto",
                   help="how each feature is scaled before training, fitted on the training rows and kept with "
                        "the model (and as svm-scale's range file MODEL.range beside a LIBSVM model file): "
                        "auto (default): range or standard, whichever the search's first round scores higher "
                        "(range where they tie, unless its round costs over 3 times as much; range for "
                        "regression and novelty detection); range: svm-scale -l -1 -u 1 (sparse rows shifted so "
                        "that zeros stay zeros); standard: z-scores; max-abs: divided by its largest absolute "
                        "value; none: as given. The same numbers as a LIBSVM file, an array or a table get the "
                        "same scaling")
    p.add_argument("--no-scale", dest="scale", action="store_const", const="none",
                   help="the same as --scale none")
    _add_zero_based(p)
    _add_table_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from leansvm.job.classification import fit_lean_classification as fit_lean
    from leansvm.job.tasks import infer_task
    from leansvm.progress import progress_enabled

    if args.model is not None and args.model_path is not None and args.model != args.model_path:
        raise UsageError("leansvm fit: error: give the model file once, as MODEL or as -o MODEL")
    args.model = args.model or args.model_path or os.path.basename(os.path.normpath(args.data)) + ".model"
    drop, increase, disagreement = (share_from(args, option, "fit") for option in
                                    ("--max-accuracy-drop", "--max-error-increase", "--max-disagreement"))
    if not 0 < args.confidence < 1:
        raise UsageError(f"leansvm fit: error: --confidence must be in (0, 1) (0.95: a one-sided 95 % bound), "
                         f"got {args.confidence}")
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
    task = infer_task(args.task, y)                 # as leansvm.fit_lean infers it
    common = dict(X_test=X_test, y_test=y_test, impute=args.impute, scale=args.scale, confidence=args.confidence,
                  budget_seconds=args.budget_seconds, refit=args.refit, verbose=_verbosity(args))
    # --n-jobs: cli.main runs the whole command under threads.at_most(args.n_jobs)
    if task == "novelty":
        return _fit_novelty(args, X, common, disagreement, described)
    if task == "regression":
        return _fit_regression(args, X, y, common, increase, described)
    result = fit_lean(X, y, max_accuracy_drop=drop, Cs=args.C_grid, gammas=args.gamma_grid,
                      selection_size=args.selection_size, class_weight=args.class_weight,
                      progress=False if args.quiet else progress_enabled(None), **common)   # bars on a terminal
    return _finish(args, result, described)


def _verbosity(args) -> int:
    """The job log's level (:class:`leansvm.job.records.JobLog`): 0 with -q, 2 with -v, else 1."""
    return 0 if args.quiet else 2 if args.verbose else 1


def _fit_regression(args, X, y, common, increase, described) -> int:
    """``leansvm fit`` on regression targets: :func:`leansvm.job.regression.fit_lean_regression`."""
    from leansvm.job.regression import fit_lean_regression

    result = fit_lean_regression(X, y, max_error_increase=increase, Cs=args.C_grid, **common)
    return _finish(args, result, described)


def _fit_novelty(args, X, common, disagreement, described) -> int:
    """``leansvm fit --task novelty``: :func:`leansvm.job.novelty.fit_lean_novelty`."""
    from leansvm.job.novelty import fit_lean_novelty

    if not 0 < args.nu <= 1:
        raise UsageError(f"leansvm fit: error: --nu is the share of training rows allowed outside, in (0, 1]; "
                         f"got {args.nu}")
    result = fit_lean_novelty(X, nu=args.nu, max_disagreement=disagreement, **common)
    return _finish(args, result, described)


def _finish(args, result, described) -> int:
    """Write the job's model (LIBSVM's format where it holds it, else native) and report, print its table."""
    from leansvm.job.classification import format_table, save_result_model
    from leansvm.job.report import write_report

    path = save_result_model(result, args.model)
    if result.interrupted is not None:   # Ctrl-C after a cheap model was accepted: that model, status 130
        interrupts.add_context(result.interrupted, f"wrote {result.final.name} ({result.final.n_support} vectors), "
                                                   f"the cheapest model accepted before it, to {path}")
        raise result.interrupted
    if args.report:
        write_report(result, args.report, title=f"leansvm fit: {described}")
    if not args.quiet:
        print("\n" + format_table(result, every_model=args.verbose))
        print(f"model written to {path}")
        if args.report:
            print(f"report written to {args.report}")
    return 0
