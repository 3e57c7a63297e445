"""``leansvm predict``: svm-predict's output (one prediction per line; accuracy, or MSE and r^2)."""

from __future__ import annotations

import sys
import numpy as np
from sklearn.base import is_regressor

from leansvm import io
from leansvm.preprocessing.tabular import is_table_file
from leansvm.cli.common import (HelpFormatter, _add_table_options, _add_zero_based, _equal_labels, _format_labels,
                                _precomputed_rows, _regression_scores, load_any_model, load_data,
                                match_features, UsageError)


EPILOG = """examples:
  leansvm predict test.txt train.model predictions.txt    # as svm-predict: accuracy, one label per line
  leansvm predict -b 1 test.txt train.model out.txt       # with probability estimates
  leansvm predict new.csv model.npz predictions.csv       # a table: a CSV with a 'prediction' column"""


def add_parser(sub):
    p = sub.add_parser("predict", help="predict labels with a model file",
                       description="Predict DATA with MODEL, write one label per line to OUTPUT "
                                   "and print the accuracy as svm-predict does. For CSV/TSV/Parquet "
                                   "data: a CSV with a 'prediction' column (and one probability column "
                                   "per class with --probability), on standard output without OUTPUT.",
                       epilog=EPILOG, formatter_class=HelpFormatter)
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
    p.set_defaults(func=run)


def run(args) -> int:
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
