"""What the ``leansvm`` commands share: option groups, reading data files, tables and named datasets, reading and writing models."""

from __future__ import annotations

import argparse
import os
import re
import sys
import numpy as np
import scipy.sparse as sp

from leansvm import io
from leansvm.core.kernels import LIBSVM_KERNEL_CODES
from leansvm.preprocessing.tabular import is_table_file
from leansvm.core.validation import widen


_KERNEL_FROM_CODE = {code: name for name, code in LIBSVM_KERNEL_CODES.items()}


class UsageError(Exception):
    """A bad command line (exit status 2)."""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Every option's default shown one way, "(default: X)": from the option's default value, or
    written in its help where the default is computed (a dataset's own, 1/num_features)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "(default:" in text or not action.option_strings or isinstance(
                action, (argparse._HelpAction, argparse._VersionAction)):
            return text
        if action.nargs == 0:                                 # a flag
            shown = "on" if action.default is True else "off"
        elif action.default is None or action.default == []:
            shown = "none"
        else:
            shown = "%(default)s"
        return f"{text} (default: {shown})"


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{self.prog}: error: {message} (see '{self.prog} --help')")

    def parse_args(self, args=None, namespace=None):
        """argparse's, but an option no command knows is reported by the command it was given to,
        pointing to that command's ``--help`` (argparse reports it at the top level)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self._command_parser(parsed).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def _command_parser(self, parsed) -> argparse.ArgumentParser:
        """The parser of the command ``parsed`` ran (this one where there is none)."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                return action.choices.get(getattr(parsed, action.dest, None), self)
        return self


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
                            "most frequent value, categorical by the most frequent) (default: none, a missing "
                            "value is an error)")


def _add_zero_based(p):
    p.add_argument("--zero-based", choices=("auto", "yes", "no"), default="auto",
                   help="feature indices of svmlight data files: 0-based (scikit-learn's "
                        "dump_svmlight_file), 1-based (LIBSVM), or auto: 0-based when index 0 occurs")


def _thread_count(text):
    """``--n-jobs``: joblib's meaning, a positive count or -1 (every core), -2 (all but one), ..."""
    n = int(text)
    if n == 0:
        raise argparse.ArgumentTypeError("0 threads: give a positive count, or -1 for every core")
    return n


def add_n_jobs_option(p):
    """``--n-jobs N``: at most N threads for everything the command runs (``leansvm.core.threads.at_most``)."""
    p.add_argument("-j", "--n-jobs", type=_thread_count, default=-1, metavar="N",
                   help="threads for the solvers, the search's folds and BLAS: a count, or -1 for every core, "
                        "-2 for all but one (joblib's meaning)")


def _in_percent(text):
    """A number in points or percent as the share text :func:`allowed_share` reads ('0.5' -> '0.5%')."""
    return f"{float(text):g}%"


_in_percent.__name__ = "number"          # argparse's "invalid number value: 'x'"


def add_share_option(p, option, default, what, unit):
    """``option`` (an allowed drop, increase or disagreement: a fraction or a percentage, as Python's
    keyword of the same name takes it) and ``option-<unit>`` (the same as a number in ``unit``,
    'points' or 'percent'), both to one destination; :func:`share_from` reads it."""
    dest = option.lstrip("-").replace("-", "_")
    p.add_argument(option, dest=dest, default=default, metavar="SHARE",
                   help=f"{what}: a fraction (0.005) or a percentage (0.5%%), as Python's {dest} takes it")
    p.add_argument(f"{option}-{unit}", dest=dest, type=_in_percent, metavar=unit.upper(),
                   help=f"the same, as a number of {unit} ({option}-{unit} 0.5 is {option} 0.5%%) "
                        f"(default: {option}'s)")


def share_from(args, option, command):
    """The fraction ``option`` (:func:`add_share_option`) gave, or None; a bad value is a usage error
    naming the option."""
    from leansvm.core.validation import allowed_share

    value = getattr(args, option.lstrip("-").replace("-", "_"))
    if value is None:
        return None
    try:
        return allowed_share(option, value)
    except ValueError as exc:
        raise UsageError(f"leansvm {command}: error: {exc}") from None


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

    if getattr(args, "command", None) not in ("fit", "train", "predict"):
        raise ValueError(f"{spec}: tables (CSV/TSV/Parquet) are read by leansvm fit, train and predict; "
                         "this command takes svmlight/LIBSVM data files")
    frame = read_table(spec)
    target = getattr(args, "target", None)
    if args.command == "predict" and (target is None or target not in frame.columns):
        return frame, None, spec, None               # predict.run finds the labels, if any, itself
    if args.command == "fit" and args.task == "novelty" and target is None:
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


def _equal_labels(pred, y):
    pred, y = np.asarray(pred), np.asarray(y)
    if (pred.dtype.kind in "US") != (y.dtype.kind in "US"):
        return pred.astype(str) == y.astype(str)
    return pred == y


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
