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
    raise ``ValueError`` naming the file. ``notes``, a list, receives one line
    for each thing the reader decided (0-based indices, ignored ``qid``).
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
        raise ValueError(f"{name}: not a valid svmlight/LIBSVM data file ({exc})") from None
    X = sp.csr_matrix(X)
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
