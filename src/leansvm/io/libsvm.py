"""LIBSVM model files (``save_libsvm_model`` / ``load_libsvm_model``), both directions.

LIBSVM model files (``save_libsvm_model`` / ``load_libsvm_model``) are text::

    svm_type c_svc
    kernel_type rbf                 linear | polynomial | rbf | sigmoid | precomputed
    degree 3                        polynomial only
    gamma 0.5                       polynomial, rbf, sigmoid
    coef0 0                         polynomial, sigmoid
    nr_class 3                      k
    total_sv 120                    m
    rho r_01 r_02 r_12              k(k-1)/2 values, LIBSVM's pair order
    label 2 1 3                     k integer labels, LIBSVM's class order
    probA ...                       optional, k(k-1)/2 values (Platt sigmoids)
    probB ...
    nr_sv 40 40 40                  support vectors per class, summing to m
    SV
    c_1 .. c_{k-1} idx:val idx:val ...    one line per support vector, 1-based indices

Support vectors are grouped by class in label order; ``c_1 .. c_{k-1}`` is one
column of LIBSVM's ``sv_coef`` (see :func:`leansvm.core.multiclass.dense_from_libsvm_coef`).
A binary model's decision is ``sum sv_coef k(sv, x) - rho`` with ``> 0``
meaning ``label[0]``; leansvm's binary expansion is its negation (``> 0``
means ``classes_[1]``), so ``sv_coef = -coef`` and ``rho = intercept``. For
k > 2 column p of the expansion is pair p's decision: ``intercept = -rho``.
Numbers are written with ``%.17g`` so that files round-trip exactly.

The other svm types (``nu_svc`` as ``c_svc``; ``epsilon_svr``, ``nu_svr``, ``one_class``)
are written as LIBSVM does: regression and one-class models have ``nr_class 2``, one
``rho``, no ``label`` / ``nr_sv``, and one coefficient per support vector; their value
is ``sum sv_coef k(sv, x) - rho``, so ``sv_coef = coef`` and ``rho = -intercept``.

A precomputed kernel's support vector is ``0:serial``, its 1-based training index
(:mod:`leansvm.core.user_kernels`); a model with a kernel function cannot be written.
"""

from __future__ import annotations

import numbers
import os
import re
import warnings

import numpy as np
import scipy.sparse as sp

from leansvm.core.expansion import DENSE_FRACTION, KernelExpansion
from leansvm.core.user_kernels import check_storable, named_kernel
from leansvm.core.multiclass import dense_from_libsvm_coef, libsvm_coef_from_dense
from leansvm.io.files import _check_budget, _memory_budget, atomic_write
from leansvm.preprocessing.attached import split_preprocessing

#: Largest ``nr_class`` accepted from a LIBSVM file (the expansion holds k(k-1)/2 columns).
MAX_CLASSES = 4096
#: LIBSVM stores labels and feature indices as C ``int``.
_INT32_MAX = 2**31 - 1

_LIBSVM_KERNEL_NAME = {"linear": "linear", "poly": "polynomial", "rbf": "rbf", "sigmoid": "sigmoid",
                       "precomputed": "precomputed"}
_KERNEL_FROM_LIBSVM = {v: k for k, v in _LIBSVM_KERNEL_NAME.items()}
_LIBSVM_SVM_TYPES = ("c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr")
#: svm types with one output and no labels (LIBSVM's regression and one-class models)
_ONE_OUTPUT_TYPES = ("one_class", "epsilon_svr", "nu_svr")
#: the estimator each svm type loads as (module, class)
_ESTIMATOR_OF_TYPE = {"c_svc": ("leansvm.exact.svc", "SVC"), "nu_svc": ("leansvm.exact.nu_svc", "NuSVC"),
                      "epsilon_svr": ("leansvm.exact.svr", "SVR"), "nu_svr": ("leansvm.exact.svr", "NuSVR"),
                      "one_class": ("leansvm.exact.one_class", "OneClassSVM")}
_HEADER_KEYS = ("svm_type", "kernel_type", "degree", "gamma", "coef0", "nr_class", "total_sv",
                "rho", "label", "probA", "probB", "nr_sv")


# -- labels ----------------------------------------------------------------------------
def integer_labels(classes) -> list[int]:
    """Class labels as Python ints, or ValueError when LIBSVM cannot store them (C ints)."""
    classes = np.asarray(classes)
    if classes.dtype.kind in "US":
        raise ValueError(f"LIBSVM model files store integer labels only; this model's labels are "
                         f"strings ({classes.tolist()[:5]}); use save_model (.npz) instead")
    values = classes.tolist()
    out = []
    for v in values:
        if isinstance(v, (bool, numbers.Integral)):
            out.append(int(v))
        elif isinstance(v, numbers.Real) and np.isfinite(v) and float(v).is_integer():
            out.append(int(v))
        else:
            raise ValueError(f"LIBSVM model files store integer labels only; label {v!r} is not an "
                             "integer; use save_model (.npz) instead")
    if any(abs(v) > _INT32_MAX for v in out):
        raise ValueError(f"LIBSVM labels are 32-bit integers; labels {out} do not fit")
    if len(set(out)) != len(out):
        raise ValueError(f"labels {values} are not distinct as integers")
    return out


def format_label(v) -> str:
    """One label as text: integral numbers without a decimal point, other floats with %.17g."""
    if isinstance(v, (bool, np.bool_)):
        return str(int(v))
    if isinstance(v, (numbers.Integral,)):
        return str(int(v))
    if isinstance(v, numbers.Real):
        v = float(v)
        return str(int(v)) if np.isfinite(v) and v.is_integer() else "%.17g" % v
    return str(v)


# -- LIBSVM writer ---------------------------------------------------------------------
def _n_support(estimator, m: int, n_classes: int):
    """``n_support_`` when it describes the pool (k entries summing to m), else None."""
    n_support = getattr(estimator, "n_support_", None)
    if n_support is None:
        return None
    n_support = np.asarray(n_support, dtype=np.int64).ravel()
    if n_support.size != n_classes or n_support.sum() != m or np.any(n_support < 0):
        return None
    return n_support


def _libsvm_layout(estimator):
    """(labels, n_support, sv_coef (k-1) x m, rho) of a fitted one-vs-one estimator."""
    if not hasattr(estimator, "expansion_"):
        raise ValueError(f"{type(estimator).__name__} is not fitted (no expansion_)")
    expansion = estimator.expansion_
    labels = integer_labels(estimator.classes_)
    k, m = len(labels), expansion.n_support
    if k < 2:
        raise ValueError("a LIBSVM model needs at least two classes")
    n_support = _n_support(estimator, m, k)
    if k == 2:
        if expansion.n_outputs != 1:
            raise ValueError(f"a binary model must have one output, this one has {expansion.n_outputs}")
        # LIBSVM sums over all SVs in the binary case, so any split of m is valid.
        n_support = np.array([m, 0]) if n_support is None else n_support
        return labels, n_support, -expansion.coef.T, expansion.intercept.copy()
    strategy = getattr(estimator, "multiclass_", "ovo")
    if strategy != "ovo":
        raise ValueError(f"only one-vs-one models can be written as LIBSVM files; this model is "
                         f"{strategy!r} with {k} classes (train with multiclass='ovo', or use save_model)")
    if expansion.n_outputs != k * (k - 1) // 2:
        raise ValueError(f"a one-vs-one model of {k} classes needs {k * (k - 1) // 2} outputs, "
                         f"this one has {expansion.n_outputs}")
    if n_support is None:
        raise ValueError("n_support_ must give the number of support vectors of each class "
                         "(support vectors grouped by class) to write a LIBSVM file")
    sv_coef = libsvm_coef_from_dense(expansion.coef, n_support)
    if not np.array_equal(dense_from_libsvm_coef(sv_coef, n_support), expansion.coef):
        raise ValueError("the model's coefficients do not have LIBSVM's one-vs-one pattern (a support "
                         "vector carries a pair that does not involve its class); use save_model")
    return labels, n_support, sv_coef, -expansion.intercept


def _binary_platt_from_calibrator(estimator):
    """LIBSVM's (probA, probB) from a binary sigmoid ``calibrator_``, or None.

    scikit-learn's sigmoid gives P(classes_[1]) = 1 / (1 + exp(a f + b)) with
    f = leansvm's decision; LIBSVM's P(label[0]) = 1 / (1 + exp(A dec + B))
    with dec = -f, hence A = a, B = -b.
    """
    calibrated = getattr(estimator, "calibrator_", None)
    if calibrated is None or len(estimator.classes_) != 2:
        return None
    try:
        (cal,) = calibrated.calibrated_classifiers_
        (sigmoid,) = cal.calibrators
        return np.array([float(sigmoid.a_)]), np.array([-float(sigmoid.b_)])
    except (AttributeError, ValueError, TypeError):
        return None


def _probability_params(estimator, n_pairs: int):
    """(probA, probB) arrays of n_pairs values, or None when the model has no LIBSVM sigmoids."""
    prob_a, prob_b = getattr(estimator, "probA_", None), getattr(estimator, "probB_", None)
    if prob_a is not None and prob_b is not None:
        prob_a, prob_b = np.ravel(prob_a).astype(float), np.ravel(prob_b).astype(float)
        if prob_a.size == n_pairs and prob_b.size == n_pairs:
            return prob_a, prob_b
        if prob_a.size or prob_b.size:
            raise ValueError(f"probA_/probB_ must have {n_pairs} values each")
        return None
    return _binary_platt_from_calibrator(estimator)


def _numbers(values) -> str:
    return " ".join("%.17g" % float(v) for v in values)


def svm_type_of(estimator) -> str:
    """LIBSVM's svm_type of a fitted estimator: its class's ``libsvm_svm_type``; else ``epsilon_svr`` for a
    regressor (one output, sum_j coef_j k(sv_j, x) - rho: what svm-predict computes for an epsilon-SVR;
    ReducedSVR, LandmarkSVR, SVRCV) and ``c_svc`` for the rest."""
    from sklearn.base import is_regressor

    return getattr(estimator, "libsvm_svm_type", "epsilon_svr" if is_regressor(estimator) else "c_svc")


def _one_output_layout(estimator):
    """(None, None, sv_coef 1 x m, rho) of a regression or one-class model."""
    if not hasattr(estimator, "expansion_"):
        raise ValueError(f"{type(estimator).__name__} is not fitted (no expansion_)")
    expansion = estimator.expansion_
    if expansion.n_outputs != 1:
        raise ValueError(f"a {svm_type_of(estimator)} model must have one output, this one has "
                         f"{expansion.n_outputs}")
    return None, None, expansion.coef.T, -expansion.intercept


def _libsvm_header(estimator, labels, n_support, rho) -> list[str]:
    kernel = estimator.expansion_.kernel
    lines = [f"svm_type {svm_type_of(estimator)}", f"kernel_type {_LIBSVM_KERNEL_NAME[kernel.name]}"]
    if kernel.name == "poly":
        lines.append(f"degree {int(kernel.degree)}")
    if kernel.name in ("poly", "rbf", "sigmoid"):
        lines.append("gamma %.17g" % kernel.gamma)
    if kernel.name in ("poly", "sigmoid"):
        lines.append("coef0 %.17g" % kernel.coef0)
    if labels is None:           # regression, one-class: nr_class 2, one rho, no labels (LIBSVM's layout)
        lines += ["nr_class 2", f"total_sv {estimator.expansion_.n_support}", f"rho {_numbers(rho)}"]
        sigma = getattr(estimator, "probA_", None)     # SVR's Laplace sigma (svm-train -s 3/4 -b 1)
        return lines + ([f"probA {_numbers(np.ravel(sigma))}"] if sigma is not None else []) + ["SV"]
    lines += [f"nr_class {len(labels)}", f"total_sv {int(np.sum(n_support))}",
              f"rho {_numbers(rho)}", "label " + " ".join(str(v) for v in labels)]
    prob = _probability_params(estimator, len(rho))
    if prob is not None:
        lines += [f"probA {_numbers(prob[0])}", f"probB {_numbers(prob[1])}"]
    lines += ["nr_sv " + " ".join(str(int(v)) for v in n_support), "SV"]
    return lines


def _sv_lines(support_vectors, sv_coef, first_index: int = 1):
    """Yield ``"c_1 .. c_{k-1} idx:val ..."`` per support vector (zeros omitted; column j is index
    j + first_index: 1-based features, or a precomputed kernel's ``0:serial``)."""
    sparse = sp.issparse(support_vectors)
    if sparse:
        support_vectors = sp.csr_matrix(support_vectors)
    for i in range(sv_coef.shape[1]):
        if sparse:
            lo, hi = support_vectors.indptr[i], support_vectors.indptr[i + 1]
            idx, val = support_vectors.indices[lo:hi], support_vectors.data[lo:hi]
            order = np.argsort(idx, kind="stable")
            idx, val = idx[order], val[order]
        else:
            row = support_vectors[i]
            idx = np.flatnonzero(row)
            val = row[idx]
        keep = val != 0
        features = " ".join("%d:%.17g" % (j, v) for j, v in zip((idx[keep] + first_index).tolist(), val[keep].tolist()))
        yield _numbers(sv_coef[:, i]) + (" " + features if features else "")


def save_libsvm_model(estimator, path) -> None:
    """Write a fitted one-vs-one classifier, regressor or one-class model as a LIBSVM model file
    (atomically; svm_type from the estimator: c_svc, nu_svc, epsilon_svr, nu_svr, one_class).

    Raises ``ValueError`` for models LIBSVM cannot represent: one-vs-rest with
    more than two classes, non-integer labels, coefficients outside LIBSVM's
    one-vs-one pattern. A model with preprocessing (:func:`~leansvm.preprocessing.attached.with_preprocessing`) is written as its
    kernel model on the transformed features: a :class:`leansvm.preprocessing.scaling.FeatureScaler` beside it
    as ``MODEL.range``, svm-scale's range file (``svm-scale -r MODEL.range data | svm-predict``);
    a table's preprocessing cannot be, and a warning says so (:func:`save_model` keeps it).
    """
    preprocessor, estimator = split_preprocessing(estimator)
    if preprocessor is not None and not hasattr(preprocessor, "range_file_text"):
        warnings.warn(f"{os.fspath(path)} holds the kernel model on the transformed columns; the "
                      "preprocessing (imputation, one-hot encoding, scaling) is kept only in leansvm's "
                      "native .npz format, which predicts raw tables", UserWarning, stacklevel=2)
    if hasattr(estimator, "libsvm_equivalent"):   # CompressedSVC: shared vectors repeated per class
        estimator = estimator.libsvm_equivalent()
    layout = _one_output_layout if svm_type_of(estimator) in _ONE_OUTPUT_TYPES else _libsvm_layout
    labels, n_support, sv_coef, rho = layout(estimator)
    kernel = estimator.expansion_.kernel
    check_storable(kernel, "a LIBSVM model file")
    header = _libsvm_header(estimator, labels, n_support, rho)
    with atomic_write(path, "w") as f:
        f.write("\n".join(header) + "\n")
        for line in _sv_lines(estimator.expansion_.support_vectors, sv_coef, 0 if kernel.pairwise else 1):
            f.write(line + "\n")
    if preprocessor is not None and hasattr(preprocessor, "range_file_text"):   # after the model: a
        from leansvm.preprocessing.scaling import range_file_path                                    # refused model writes none
        with atomic_write(range_file_path(path)) as f:
            f.write(preprocessor.range_file_text())


# -- LIBSVM reader ---------------------------------------------------------------------
_INT_RE = re.compile(r"[+-]?[0-9]+")


class _LineError(ValueError):
    """A problem on one line; the reader adds the file name and line number."""


def _parse_int(token: str, what: str, low: int | None = None) -> int:
    if not _INT_RE.fullmatch(token):
        raise _LineError(f"{what}: {token!r} is not an integer")
    value = int(token)
    if low is not None and value < low:
        raise _LineError(f"{what} must be at least {low}, got {value}")
    if abs(value) > _INT32_MAX:
        raise _LineError(f"{what}: {value} does not fit a 32-bit integer")
    return value


def _parse_float(token: str, what: str) -> float:
    try:
        if not token.isascii() or "_" in token:
            raise ValueError
        value = float(token)
    except ValueError:
        raise _LineError(f"{what}: {token!r} is not a number") from None
    if not np.isfinite(value):
        raise _LineError(f"{what}: {token!r} is not a finite number")
    return value


def _one(values, key):
    if len(values) != 1:
        raise _LineError(f"{key!r} takes one value, got {len(values)}")
    return values[0]


def _parse_header_line(key: str, values: list[str]):
    """The parsed value of one header line."""
    if key == "svm_type":
        name = _one(values, key)
        if name not in _LIBSVM_SVM_TYPES:
            raise _LineError(f"unknown svm_type {name!r}; expected one of {', '.join(_LIBSVM_SVM_TYPES)}")
        return name
    if key == "kernel_type":
        name = _one(values, key)
        if name not in _KERNEL_FROM_LIBSVM:
            raise _LineError(f"unknown or unsupported kernel_type {name!r}; expected one of "
                             f"{', '.join(_KERNEL_FROM_LIBSVM)}")
        return _KERNEL_FROM_LIBSVM[name]
    if key == "degree":
        return _parse_int(_one(values, key), "degree", 0)
    if key in ("gamma", "coef0"):
        return _parse_float(_one(values, key), key)
    if key == "nr_class":
        k = _parse_int(_one(values, key), "nr_class", 2)
        if k > MAX_CLASSES:
            raise _LineError(f"nr_class {k} exceeds the supported maximum of {MAX_CLASSES}")
        return k
    if key == "total_sv":
        return _parse_int(_one(values, key), "total_sv", 0)
    if key in ("rho", "probA", "probB"):
        return np.array([_parse_float(v, f"{key} value {i + 1}") for i, v in enumerate(values)])
    if key == "label":
        return [_parse_int(v, f"label {i + 1}") for i, v in enumerate(values)]
    if key == "nr_sv":
        return [_parse_int(v, f"nr_sv value {i + 1}", 0) for i, v in enumerate(values)]
    raise AssertionError(key)


def _read_header(lines, path):
    """Parse up to the ``SV`` line: (header dict, {key: line number}, SV line number)."""
    header, where = {}, {}
    lineno = 0
    for lineno, line in lines:
        tokens = line.split()
        if not tokens:
            continue
        key, values = tokens[0], tokens[1:]
        if key == "SV":
            if values:
                raise _fail(path, lineno, "unexpected text after 'SV'")
            return header, where, lineno
        if key not in _HEADER_KEYS:
            raise _fail(path, lineno, f"unknown header key {key!r} (not a LIBSVM model file?)")
        if key in header:
            raise _fail(path, lineno, f"header key {key!r} appears twice")
        try:
            header[key] = _parse_header_line(key, values)
        except _LineError as exc:
            raise _fail(path, lineno, str(exc)) from None
        where[key] = lineno
    what = "file is empty" if not header else "file ends before the 'SV' line (truncated header)"
    raise _fail(path, lineno + 1, what)


def _check_header(header, where, sv_line, path):
    """Required keys present and per-class / per-pair counts consistent; returns (k, n_pairs)."""
    required = ["svm_type", "kernel_type", "nr_class", "total_sv", "rho"]
    one_output = header.get("svm_type") in _ONE_OUTPUT_TYPES
    if not one_output:
        required += ["label", "nr_sv"]
    kernel = header.get("kernel_type")
    required += {"poly": ["degree", "gamma", "coef0"], "rbf": ["gamma"],
                 "sigmoid": ["gamma", "coef0"]}.get(kernel, [])
    for key in required:
        if key not in header:
            raise _fail(path, sv_line, f"header lacks {key!r} before the 'SV' line")
    k = header["nr_class"]
    n_pairs = k * (k - 1) // 2
    if one_output:
        if k != 2:
            raise _fail(path, where["nr_class"], f"a {header['svm_type']} model has nr_class 2, got {k}")
        for key in ("label", "nr_sv"):
            if key in header:
                raise _fail(path, where[key], f"a {header['svm_type']} model has no {key!r}")
    for key, count in (("rho", n_pairs), ("probA", n_pairs), ("probB", n_pairs),
                       ("label", k), ("nr_sv", k)):
        if key in header and len(header[key]) != count:
            raise _fail(path, where[key], f"{key!r} needs {count} values for nr_class {k}, "
                                          f"got {len(header[key])}")
    if one_output and "probB" in header:
        raise _fail(path, where["probB"], f"a {header['svm_type']} model has no 'probB'")
    if ("probA" in header) != ("probB" in header) and not one_output:
        key = "probA" if "probA" in header else "probB"
        raise _fail(path, where[key], "probA and probB must be given together")
    if one_output:
        return k, n_pairs
    if len(set(header["label"])) != k:
        raise _fail(path, where["label"], f"labels are not distinct: {header['label']}")
    if sum(header["nr_sv"]) != header["total_sv"]:
        raise _fail(path, where["nr_sv"], f"nr_sv values sum to {sum(header['nr_sv'])}, "
                                          f"but total_sv is {header['total_sv']}")
    return k, n_pairs


def _parse_sv_line(line: str, n_coef: int, first_index: int = 1):
    """(coefficients, column indices, values) of one SV line; index ``first_index`` is column 0."""
    tokens = line.split()
    if len(tokens) < n_coef:
        raise _LineError(f"expected {n_coef} coefficient(s) and index:value pairs, "
                         f"found {len(tokens)} token(s)")
    fast = _parse_sv_tokens_fast(line, tokens, n_coef, first_index)
    if fast is not None:
        return fast
    coef = [_parse_float(t, f"coefficient {i + 1}") for i, t in enumerate(tokens[:n_coef])]
    pairs = tokens[n_coef:]
    for t in pairs:
        if t.count(":") != 1:
            raise _LineError(f"expected index:value, got {t!r}")
    parts = ":".join(pairs).split(":")
    idx = np.array([_parse_int(t, "feature index", first_index) for t in parts[0::2]], dtype=np.int64)
    val = np.array([_parse_float(t, f"value of feature {j}") for t, j in zip(parts[1::2], parts[0::2])])
    _check_indices(idx)
    return coef, idx - first_index, val


def _check_indices(idx):
    if idx.size > 1 and np.any(np.diff(idx) <= 0):
        bad = int(np.flatnonzero(np.diff(idx) <= 0)[0])
        raise _LineError(f"feature indices must increase: {idx[bad]} is followed by {idx[bad + 1]}")


def _parse_sv_tokens_fast(line, tokens, n_coef, first_index):
    """Vectorised parse of a well-formed line, or None (the slow path then names the error)."""
    pairs = tokens[n_coef:]
    if not line.isascii() or "_" in line or not all(t.count(":") == 1 for t in pairs):
        return None
    parts = ":".join(pairs).split(":") if pairs else []
    try:
        coef = np.array(tokens[:n_coef], dtype=np.float64)
        idx = np.array(parts[0::2], dtype=np.int64)
        val = np.array(parts[1::2], dtype=np.float64)
    except (ValueError, OverflowError):
        return None
    if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(val))):
        return None
    if idx.size and (idx.min() < first_index or idx.max() > _INT32_MAX):
        return None
    _check_indices(idx)
    return coef.tolist(), idx - first_index, val


def _read_support_vectors(lines, path, total_sv: int, n_coef: int, sv_line: int, first_index: int = 1):
    """Parse SV lines one by one (never trusting ``total_sv`` for allocation): (coef, CSR parts)."""
    coefs, indices, values, lengths = [], [], [], []
    lineno = sv_line
    for lineno, line in lines:
        if len(coefs) == total_sv:
            if line.strip():
                raise _fail(path, lineno, f"more support vector lines than total_sv = {total_sv}")
            continue
        if not line.strip():
            raise _fail(path, lineno, f"empty line where support vector {len(coefs) + 1} "
                                      f"of {total_sv} was expected")
        try:
            coef, idx, val = _parse_sv_line(line, n_coef, first_index)
            if first_index == 0 and not (idx.size == 1 and idx[0] == 0 and val[0] >= 1 and val[0] == int(val[0])):
                raise _LineError("a precomputed kernel's support vector is 0:serial, its training sample's "
                                 "number (an integer >= 1)")
        except _LineError as exc:
            raise _fail(path, lineno, str(exc)) from None
        coefs.append(coef)
        indices.append(idx)
        values.append(val)
        lengths.append(idx.size)
    if len(coefs) < total_sv:
        raise _fail(path, lineno + 1, f"file ends after {len(coefs)} of total_sv = {total_sv} "
                                      "support vector lines (truncated file?)")
    coef = np.array(coefs, dtype=np.float64).reshape(total_sv, n_coef)
    indptr = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    indices = np.concatenate(indices) if indices else np.empty(0, np.int64)
    values = np.concatenate(values) if values else np.empty(0)
    return coef, indices, values, indptr


def _fail(path, lineno: int, message: str) -> ValueError:
    return ValueError(f"{os.fspath(path)}: line {lineno}: {message}")


def _numbered_lines(f, path):
    """(line number, text) of a binary file, decoding each line so errors know their line."""
    for lineno, raw in enumerate(f, 1):
        try:
            yield lineno, raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _fail(path, lineno, "not a text file (undecodable bytes)") from None


def _support_vector_matrix(indices, values, indptr, n_features):
    """CSR when fewer than ``DENSE_FRACTION`` of the entries are non-zero, dense otherwise."""
    m = indptr.size - 1
    csr = sp.csr_matrix((values, indices, indptr), shape=(m, n_features))
    if m and n_features and np.count_nonzero(values) >= DENSE_FRACTION * m * n_features:
        return csr.toarray()
    return csr


def load_libsvm_model(path, n_features: int | None = None, max_bytes: int | None = None):
    """Read a LIBSVM model file as the fitted estimator of its svm_type: :class:`leansvm.SVC`,
    :class:`leansvm.NuSVC`, :class:`leansvm.SVR`, :class:`leansvm.NuSVR` or
    :class:`leansvm.OneClassSVM` (regression and one-class: predictions and decision values
    equal ``svm-predict``'s).

    ``classes_`` keeps LIBSVM's label order, so predictions equal LIBSVM's.
    ``n_features_in_`` is the largest feature index in the file, or
    ``n_features`` when given (it must not be smaller). ``support_`` (training
    indices) is unknown and left as an empty array. ``probA_``/``probB_`` are
    set when the file has them. A malformed file raises ``ValueError`` naming
    the file, the line and the problem. Support vectors are read line by line
    (``total_sv`` is never trusted for allocation); the dense m x k(k-1)/2
    coefficient matrix must fit the memory budget (see ``MIN_MODEL_BYTES``;
    ``max_bytes`` overrides it).
    """
    budget = _memory_budget(path, max_bytes)
    with open(path, "rb") as f:
        lines = _numbered_lines(f, path)
        header, where, sv_line = _read_header(lines, path)
        k, n_pairs = _check_header(header, where, sv_line, path)
        sv_coef, indices, values, indptr = _read_support_vectors(
            lines, path, header["total_sv"], k - 1, sv_line, 0 if header["kernel_type"] == "precomputed" else 1)
    _check_budget(path, f"the dense coefficient matrix of {header['total_sv']} support vectors x "
                        f"{n_pairs} class pairs", 8 * header["total_sv"] * n_pairs, budget)
    max_index = int(indices.max()) + 1 if indices.size else 0
    if n_features is None:
        n_features = max_index
    elif int(n_features) < max_index:
        raise ValueError(f"{os.fspath(path)}: support vectors use feature {max_index}, "
                         f"more than n_features = {n_features}")
    support_vectors = _support_vector_matrix(indices, values, indptr, int(n_features))
    rho = header["rho"]
    if header["svm_type"] in _ONE_OUTPUT_TYPES:
        n_support = np.array([header["total_sv"]], dtype=np.int32)
        coef, intercept = sv_coef.copy(), -rho
    elif k == 2:
        n_support = np.array(header["nr_sv"], dtype=np.int32)
        coef, intercept = -sv_coef, rho.copy()
    else:
        n_support = np.array(header["nr_sv"], dtype=np.int32)
        coef, intercept = dense_from_libsvm_coef(sv_coef.T, n_support), -rho
    kernel = named_kernel(header["kernel_type"], header.get("gamma", 1.0), header.get("degree", 3),
                          header.get("coef0", 0.0))
    return _libsvm_estimator(header, kernel, KernelExpansion(support_vectors, coef, intercept, kernel),
                             n_support)


def _libsvm_estimator(header, kernel, expansion, n_support):
    import importlib

    module, name = _ESTIMATOR_OF_TYPE[header["svm_type"]]
    cls = getattr(importlib.import_module(module), name)
    gamma = kernel.gamma if "gamma" in header else "scale"
    est = cls(kernel=kernel.name, gamma=gamma, degree=kernel.degree, coef0=kernel.coef0)
    if header["svm_type"] not in _ONE_OUTPUT_TYPES:
        est.set_params(decision_function_shape="ovr")
        est.classes_ = np.array(header["label"], dtype=np.int64)
        est.multiclass_ = "ovo"
    est.expansion_ = expansion
    est.n_support_ = n_support
    est.support_ = np.empty(0, dtype=np.int32)
    if not kernel.pairwise:        # a precomputed kernel's n_train is not in the file
        est.n_features_in_ = expansion.n_features
    est._gamma = kernel.gamma
    est.fit_status_ = 0
    if "probA" in header:
        est.probA_ = header["probA"]
    if "probB" in header:
        est.probB_ = header["probB"]
    return est
