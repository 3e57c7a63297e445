"""``leansvm scale``: svm-scale's options (-l, -u, -s, -r): every feature mapped linearly to [lower, upper],
the ranges saved to or restored from svm-scale's range file, the scaled data on standard output."""

from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp

from leansvm.cli.common import HelpFormatter, UsageError, _add_zero_based, load_data

EPILOG = """examples:
  leansvm scale -l 0 -u 1 -s train.range train.txt > train.scaled     # as svm-scale
  leansvm scale -r train.range test.txt > test.scaled                  # the training ranges on test data"""


def add_parser(sub):
    p = sub.add_parser("scale", help="scale features to [lower, upper] (svm-scale)",
                       description="Scale every feature linearly to [lower, upper] as LIBSVM's svm-scale does "
                                   "and write the scaled data (LIBSVM format) to standard output.",
                       epilog=EPILOG, formatter_class=HelpFormatter)
    p.add_argument("data", metavar="DATA", help="svmlight/LIBSVM data file")
    p.add_argument("-l", dest="lower", type=float, default=-1.0, help="x scaling lower limit ")
    p.add_argument("-u", dest="upper", type=float, default=1.0, help="x scaling upper limit ")
    p.add_argument("-s", dest="save", metavar="FILE", help="save the scaling ranges to FILE (default: none)")
    p.add_argument("-r", dest="restore", metavar="FILE",
                   help="restore the scaling ranges from FILE, ignoring -l and -u (default: none)")
    p.add_argument("-y", dest="y_limits", nargs=2, type=float, metavar=("LOWER", "UPPER"),
                   help="target scaling: not supported (leansvm's regression job scales targets itself)")
    _add_zero_based(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from leansvm.io.files import atomic_write
    from leansvm.preprocessing.scaling import FeatureScaler

    if args.y_limits is not None:
        raise UsageError("leansvm scale: error: -y (target scaling) is not supported")
    if args.save and args.restore:
        raise UsageError("leansvm scale: error: give -s or -r, not both (as svm-scale)")
    X, y, _, _ = load_data(args.data, "train", args)
    if args.restore:
        scaler = FeatureScaler.from_range_file(args.restore, n_features=X.shape[1])
    else:
        scaler = FeatureScaler.to_range(X, args.lower, args.upper)
    if args.save:
        with atomic_write(args.save, "w", encoding="ascii") as f:
            f.write(scaler.range_file_text())
    write_scaled(X, y, scaler, sys.stdout, base=0 if args.zero_based == "yes" else 1)
    return 0


#: rows scaled and written at a time (svm-scale's output is dense whenever 0 maps to non-zero)
ROWS_PER_BLOCK = 4096


def svm_scale(X, scaler) -> np.ndarray:
    """Dense rows scaled by svm-scale's own arithmetic: lower at min, upper at max, else
    lower + (upper - lower) (x - min) / (max - min); 0 for a feature with min = max or beyond the ranges."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    d = min(X.shape[1], scaler.min_.size)
    lo, hi = scaler.min_[:d], scaler.max_[:d]
    width = np.where(hi > lo, hi - lo, 1.0)
    x = X[:, :d]
    out = scaler.lower_ + (scaler.upper_ - scaler.lower_) * (x - lo) / width
    out = np.where(x == lo, scaler.lower_, np.where(x == hi, scaler.upper_, out))
    out[:, hi <= lo] = 0.0
    return out


def write_scaled(X, y, scaler, out, base=1):
    """Rows as svm-scale writes them: the label, then 'index:value ' ("%g") for every non-zero value."""
    from leansvm.io.libsvm import format_label

    labels = np.asarray(y)
    for a in range(0, X.shape[0], ROWS_PER_BLOCK):
        block = svm_scale(X[a:a + ROWS_PER_BLOCK], scaler)
        lines = []
        for i, row in enumerate(block):
            cells = "".join(f"{j + base}:{row[j]:g} " for j in np.flatnonzero(row))
            lines.append(f"{format_label(labels[a + i].item())} {cells}\n")
        out.write("".join(lines))
