"""svmlight / LIBSVM data files, read with scikit-learn's reader (0-based or 1-based indices)."""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from leansvm.core.validation import widen


# -- svmlight data ---------------------------------------------------------------------
#: what :func:`load_svmlight` notes when "auto" reads a file as 0-based
ZERO_BASED_NOTE = "indices read as 0-based"


def load_svmlight(path, n_features: int | None = None, zero_based="auto", notes=None):
    """(X, y) of an svmlight / LIBSVM data file, X float64 CSR.

    ``zero_based``: True when index ``0`` is the first column (scikit-learn's
    ``dump_svmlight_file`` writes that by default), False for LIBSVM's 1-based
    files, ``"auto"`` (default, as scikit-learn's ``load_svmlight_file``):
    0-based when some index 0 occurs in the file, 1-based otherwise. (LIBSVM's
    ``svm-train`` reads index 0 as one more feature.) A 0-based file whose
    first column happens to be all zeros is read as 1-based by ``"auto"``: pass
    ``zero_based=True`` for it. ``qid:`` fields (ranking data) are ignored.
    ``n_features`` fixes the number of columns (it must cover the file's
    largest index). Comments (``#``) and blank lines are skipped. Parse errors
    raise ``ValueError`` naming the file and line (``file:line: ...``), as does a
    NaN or infinite value. ``notes``, a list, receives one line for each thing
    the reader decided (0-based indices, ignored ``qid``).
    """
    from sklearn.datasets import load_svmlight_file

    if zero_based not in ("auto", True, False):
        raise ValueError(f"zero_based must be 'auto', True or False, got {zero_based!r}")
    name = os.fspath(path)
    try:
        X, y, qid = load_svmlight_file(name, dtype=np.float64, zero_based=zero_based is not False,
                                       query_id=True)
    except (ValueError, UnicodeDecodeError) as exc:
        if zero_based is False and "Invalid index 0" in str(exc):
            raise ValueError(f"{name}: feature index 0 in a file read as 1-based (zero_based=False); "
                             "read it as 0-based or 'auto'") from None
        line, what = _first_bad_line(name, zero_based)
        if line is None:
            raise ValueError(f"{name}: not a valid svmlight/LIBSVM data file ({exc})") from None
        raise ValueError(f"{name}:{line}: not a valid svmlight/LIBSVM data file: {what}") from None
    X = sp.csr_matrix(X)
    _check_finite(name, X, y)
    if zero_based is not False and X.nnz and (zero_based is True or X.indices.min() == 0):
        if notes is not None and zero_based == "auto":
            notes.append(f"{name}: feature index 0 found: {ZERO_BASED_NOTE} (index 0 is the first column)")
    elif X.shape[1] > 0 and zero_based == "auto":   # 1-based after all: index i is column i - 1
        X = sp.csr_matrix((X.data, X.indices - 1, X.indptr), shape=(X.shape[0], X.shape[1] - 1))
    if np.size(qid) and notes is not None:
        notes.append(f"{name}: qid (query id) fields ignored")
    if n_features is not None:
        if n_features < X.shape[1]:
            raise ValueError(f"{name}: n_features={n_features} is smaller than the file's "
                             f"{X.shape[1]} columns")
        X = widen(X, n_features)
    return X, y


# -- where a file is wrong: the lines are read again only after the fast reader refused the file ---
def _data_lines(name):
    """(line number, the line's bytes without its comment, stripped) of every line holding a row."""
    with open(name, "rb") as f:
        for number, raw in enumerate(f, 1):
            line = raw.split(b"#", 1)[0].strip()
            if line:
                yield number, line


def _first_bad_line(name, zero_based) -> tuple[int | None, str | None]:
    """(line number, what is wrong) of the first row the svmlight format refuses: a label that is no
    number, a field not ``index:value``, an index that is no integer, negative, 0 in a 1-based file or
    not above the one before it, a value that is no number. (None, None) where each line parses alone
    (the fast reader's complaint is then about the file as a whole)."""
    for number, line in _data_lines(name):
        try:
            fields = line.decode("ascii").split()
        except UnicodeDecodeError:
            return number, "a byte that is not ASCII text"
        label, previous = fields[0], -1
        try:
            [float(part) for part in label.split(",")]
        except ValueError:
            return number, f"the label {label!r} is not a number"
        for field in fields[1:]:
            index, sep, value = field.partition(":")
            if index == "qid":
                continue
            if not sep:
                return number, f"{field!r} is not index:value"
            try:
                index = int(index)
            except ValueError:
                return number, f"the index in {field!r} is not an integer"
            if index < 0 or (index == 0 and zero_based is False):
                return number, f"the index in {field!r} is out of range"
            if index <= previous:
                return number, f"the index in {field!r} is not above the one before it"
            previous = index
            try:
                float(value)
            except ValueError:
                return number, f"the value in {field!r} is not a number"
    return None, None


def _line_of_row(name, row: int) -> int | None:
    """The line number of data row ``row`` (0-based; comments and blank lines are not rows)."""
    for i, (number, _) in enumerate(_data_lines(name)):
        if i == row:
            return number
    return None


def _check_finite(name, X, y):
    """A NaN or infinite label or value is an error naming its line: no kernel of it means anything."""
    bad_values = np.flatnonzero(~np.isfinite(X.data))
    bad_labels = np.flatnonzero(~np.isfinite(np.asarray(y, dtype=np.float64)))
    if not bad_values.size and not bad_labels.size:
        return
    value_row = int(np.searchsorted(X.indptr, bad_values[0], side="right") - 1) if bad_values.size else None
    if bad_labels.size and (value_row is None or bad_labels[0] <= value_row):
        row = int(bad_labels[0])
        what = f"the label is {y[row]}"
    else:
        row, entry = value_row, int(bad_values[0])
        what = f"the value of index {int(X.indices[entry])} is {X.data[entry]}"
    line = _line_of_row(name, row)
    raise ValueError(f"{name}:{line}: {what}; NaN and infinite values cannot be "
                     "trained on or predicted (remove the row or impute the value)")
