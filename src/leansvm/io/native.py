"""leansvm's native model format: one ``.npz`` archive (read with ``allow_pickle=False``)
holding the expansion's arrays and a JSON ``metadata`` string; see :func:`save_model`.
"""

from __future__ import annotations

import json
import numbers
import os
import zipfile

import numpy as np
from sklearn.base import is_classifier
import scipy.sparse as sp

from leansvm.core.expansion import KernelExpansion
from leansvm.core.user_kernels import check_storable, named_kernel
from leansvm.core.registry import registered_estimators
from leansvm.io.files import _check_budget, _memory_budget, atomic_write
from leansvm.io.libsvm import _binary_platt_from_calibrator
from leansvm.preprocessing.attached import split_preprocessing, with_preprocessing

FORMAT_NAME = "leansvm-expansion"
FORMAT_VERSION = 1


# -- native format ---------------------------------------------------------------------
_JSON_SCALARS = (type(None), bool, int, float, str)


def _json_params(estimator) -> dict:
    """Constructor parameters that JSON stores exactly (None, bool, int, float, str, and lists of
    them, e.g. ``LandmarkSVR``'s ``Cs``)."""
    out = {}
    for name, value in estimator.get_params(deep=False).items():
        if isinstance(value, (list, tuple, np.ndarray)):
            value = [v.item() if isinstance(v, np.generic) else v for v in value]
            if all(isinstance(v, _JSON_SCALARS) for v in value):
                out[name] = value
            continue
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, _JSON_SCALARS):
            out[name] = value
    return out


def _class_array(classes) -> np.ndarray:
    """Labels as a numeric, bool or unicode array (never object dtype)."""
    classes = np.asarray(classes)
    if classes.dtype.kind in "biufU":
        return classes
    values = classes.tolist()
    if all(isinstance(v, (str, bytes)) for v in values) and values:
        return np.array([v.decode() if isinstance(v, bytes) else v for v in values], dtype=str)
    if all(isinstance(v, numbers.Real) for v in values):
        return np.asarray(values)
    raise ValueError(f"labels of type {classes.dtype} ({values[:5]}) cannot be stored without pickle; "
                     "use numbers or strings")


def _native_arrays(estimator) -> tuple[dict, dict]:
    """(arrays, metadata) of a fitted expansion-based estimator."""
    if not hasattr(estimator, "expansion_"):
        raise ValueError(f"{type(estimator).__name__} is not fitted (no expansion_)")
    exp = estimator.expansion_
    # regression and one-class models have no classes: an empty array marks them
    classes = _class_array(estimator.classes_) if hasattr(estimator, "classes_") else np.empty(0)
    arrays = {"coef": exp.coef, "intercept": exp.intercept, "classes": classes}
    sv = exp.support_vectors
    if sp.issparse(sv):
        sv = sp.csr_matrix(sv)
        arrays.update(sv_data=sv.data, sv_indices=sv.indices, sv_indptr=sv.indptr)
    else:
        arrays["support_vectors"] = sv
    for attr, key in (("n_support_", "n_support"), ("support_", "support"),
                      ("probA_", "probA"), ("probB_", "probB")):
        if getattr(estimator, attr, None) is not None:
            arrays[key] = np.asarray(getattr(estimator, attr))
    platt = _binary_platt_from_calibrator(estimator)   # a binary SVC(probability=True) fitted here
    if platt is not None and "probA" not in arrays:
        arrays["probA"], arrays["probB"] = platt
    kernel = exp.kernel
    check_storable(kernel, "a native model file")
    meta = {
        "format": FORMAT_NAME, "format_version": FORMAT_VERSION,
        "estimator": type(estimator).__name__,
        "params": _json_params(estimator),
        "kernel": {"name": kernel.name, "gamma": float(kernel.gamma), "degree": int(kernel.degree),
                   "coef0": float(kernel.coef0)},
        "multiclass": getattr(estimator, "multiclass_", "ovo"),
        "n_support": None if "n_support" not in arrays else arrays["n_support"].tolist(),
        "decision_function_shape": getattr(estimator, "decision_function_shape", "ovr"),
        "n_features": int(exp.n_features), "n_features_in": int(getattr(estimator, "n_features_in_", exp.n_features)),
        "sv_shape": list(sv.shape), "sparse": bool(sp.issparse(sv)),
        "fit_status": int(getattr(estimator, "fit_status_", 0)),
    }
    return arrays, meta


def save_model(estimator, path) -> None:
    """Write a fitted estimator as leansvm's native ``.npz`` (atomically, no pickle).

    Arrays: ``coef`` (m x n_outputs), ``intercept``, ``classes`` (numeric or
    unicode), support vectors as ``support_vectors`` (dense) or ``sv_data``,
    ``sv_indices``, ``sv_indptr`` (CSR), and when present ``n_support``,
    ``support``, ``probA``, ``probB``. ``metadata`` is a JSON string with
    ``format`` ("leansvm-expansion"), ``format_version`` (1), ``estimator``
    (class name), ``params`` (constructor parameters JSON stores exactly;
    others, such as a ``class_weight`` dict, load as their defaults),
    ``kernel`` (name, gamma, degree, coef0), ``multiclass``, ``n_support``,
    ``decision_function_shape``, ``n_features`` (support-vector width), ``n_features_in`` (the
    estimator's input width; a precomputed kernel's n_train), ``sv_shape``, ``sparse``,
    ``fit_status`` and, for a model with preprocessing (:func:`~leansvm.preprocessing.attached.with_preprocessing`),
    ``preprocessing``: a table's columns, imputed values, means, scales and categories
    (``TablePreprocessor.to_json``) or a feature scaling (``FeatureScaler.to_json``).
    """
    preprocessor, estimator = split_preprocessing(estimator)
    preprocessing = None if preprocessor is None else preprocessor.to_json()
    arrays, meta = _native_arrays(estimator)
    if preprocessing is not None:
        meta["preprocessing"] = preprocessing
    arrays["metadata"] = np.array(json.dumps(meta))
    with atomic_write(path, "wb") as f:
        np.savez_compressed(f, **arrays)


def is_native_model_file(path) -> bool:
    """True when ``path`` starts like a zip archive (a native ``.npz`` model)."""
    with open(path, "rb") as f:
        return f.read(4) == b"PK\x03\x04"


_REQUIRED_META = ("format", "format_version", "estimator", "kernel", "multiclass", "n_features",
                  "sv_shape", "sparse")


def _npy_header(zf, info):
    """(shape, dtype, header length) of one ``.npy`` member, read without reading its data."""
    with zf.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(member)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(member)
        else:
            raise ValueError(f"entry {info.filename!r} has unsupported .npy version {version}")
        return shape, dtype, member.tell()


def _check_npz_sizes(path, budget: int):
    """Every member's declared shape must fit its declared size, and all sizes the budget.

    ``zipfile`` never inflates a member past its declared ``file_size``, and
    numpy allocates what the ``.npy`` header declares; checking both before
    ``np.load`` bounds the memory of any file, truncated, bombed or forged.
    """
    with zipfile.ZipFile(path) as zf:
        infos = zf.infolist()
        if len(infos) > 64:
            raise ValueError(f"{len(infos)} entries; a leansvm model has at most a dozen")
        _check_budget(path, "the archive's entries", sum(info.file_size for info in infos), budget)
        for info in infos:
            if not info.filename.endswith(".npy"):
                raise ValueError(f"unexpected entry {info.filename!r}")
            shape, dtype, offset = _npy_header(zf, info)
            if dtype.hasobject:
                raise ValueError(f"entry {info.filename!r} holds Python objects")
            n_bytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
            if n_bytes > info.file_size - offset:
                raise ValueError(f"entry {info.filename!r} declares shape {shape} ({n_bytes} bytes) but "
                                 f"holds {info.file_size - offset} bytes")


def _read_npz(path, max_bytes=None) -> tuple[dict, dict]:
    """All arrays and the parsed metadata of a native file; ValueError when it is not one."""
    name = os.fspath(path)
    budget = _memory_budget(path, max_bytes)
    try:
        _check_npz_sizes(path, budget)
        with np.load(path, allow_pickle=False) as npz:
            arrays = {key: npz[key] for key in npz.files}
    except (ValueError, zipfile.BadZipFile, EOFError, KeyError, OSError, NotImplementedError,
            RuntimeError, UnicodeDecodeError, SyntaxError, TypeError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        if str(exc).startswith(name):
            raise
        raise ValueError(f"{name}: not a readable leansvm model file ({exc})") from None
    if "metadata" not in arrays:
        raise ValueError(f"{name}: not a leansvm model file (no 'metadata' entry)")
    try:
        meta = json.loads(str(arrays.pop("metadata")))
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{name}: metadata is not valid JSON ({type(exc).__name__}: {exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        raise ValueError(f"{name}: not a {FORMAT_NAME} file")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{name}: format_version {meta.get('format_version')!r} is not supported "
                         f"(this leansvm reads version {FORMAT_VERSION})")
    missing = [key for key in _REQUIRED_META if key not in meta]
    missing += [key for key in ("coef", "intercept", "classes") if key not in arrays]
    if missing:
        raise ValueError(f"{name}: missing entries {missing}")
    try:
        _check_native_types(arrays, meta)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None
    return arrays, meta


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


#: metadata key -> predicate its value must satisfy
_META_TYPES = {
    "estimator": lambda v: isinstance(v, str),
    "kernel": lambda v: isinstance(v, dict) and {"name", "gamma", "degree", "coef0"} <= set(v),
    "multiclass": lambda v: v in ("ovo", "ovr"),
    "n_features": lambda v: _is_int(v) and 0 <= v <= 2**62,
    "sv_shape": lambda v: isinstance(v, list) and len(v) == 2 and all(_is_int(x) and 0 <= x <= 2**62 for x in v),
    "sparse": lambda v: isinstance(v, bool),
    "params": lambda v: isinstance(v, dict),
    "n_support": lambda v: v is None or isinstance(v, list),
    "decision_function_shape": lambda v: v in ("ovo", "ovr"),
    "fit_status": lambda v: _is_int(v),
}


#: array -> allowed numbers of dimensions
_NATIVE_NDIM = {"coef": (1, 2), "intercept": (1,), "classes": (1,), "support_vectors": (2,), "sv_data": (1,),
                "sv_indices": (1,), "sv_indptr": (1,), "n_support": (1,), "support": (1,), "probA": (1,),
                "probB": (1,)}


def _check_native_types(arrays, meta):
    """Metadata of the documented types, numeric arrays real and finite, labels storable."""
    bad = [key for key, ok in _META_TYPES.items() if key in meta and not ok(meta[key])]
    if bad:
        raise ValueError(f"metadata entries {bad} have the wrong type or value: "
                         f"{ {key: meta[key] for key in bad} }"[:300])
    if meta["sv_shape"][1] != meta["n_features"]:
        raise ValueError(f"sv_shape {meta['sv_shape']} disagrees with n_features {meta['n_features']}")
    for key, value in arrays.items():
        ndim = _NATIVE_NDIM.get(key)
        if ndim is not None and value.ndim not in ndim:
            raise ValueError(f"array {key!r} must have {' or '.join(map(str, ndim))} dimension(s), "
                             f"got shape {value.shape}")
    for key in ("coef", "intercept", "support_vectors", "sv_data", "probA", "probB"):
        if key in arrays:
            if arrays[key].dtype.kind not in "fiu":
                raise ValueError(f"array {key!r} must be real numbers, got dtype {arrays[key].dtype}")
            if not np.all(np.isfinite(arrays[key])):
                raise ValueError(f"array {key!r} holds NaN or infinite values (not finite)")
    for key in ("sv_indices", "sv_indptr", "n_support", "support"):
        if key in arrays and arrays[key].dtype.kind not in "iu":
            raise ValueError(f"array {key!r} must hold integers, got dtype {arrays[key].dtype}")
    classes = arrays["classes"]
    if classes.dtype.kind not in "biufU" or np.unique(classes).size != classes.size or classes.size == 1:
        raise ValueError(f"classes must be at least two distinct numbers or strings (none for a regression "
                         f"or one-class model), got {classes[:5]!r}")
    if classes.dtype.kind == "f" and not np.all(np.isfinite(classes)):
        raise ValueError("classes must be finite")


def _native_support_vectors(arrays, meta):
    shape = tuple(int(v) for v in meta["sv_shape"])
    if meta["sparse"]:
        sv = sp.csr_matrix((arrays["sv_data"], arrays["sv_indices"], arrays["sv_indptr"]), shape=shape)
        sv.check_format(full_check=True)
        return sv
    sv = arrays["support_vectors"]
    if sv.shape != shape:
        raise ValueError(f"support vectors have shape {sv.shape}, metadata says {shape}")
    return sv


def _check_outputs(n_classes: int, strategy: str, n_outputs: int):
    if n_classes == 0:                    # regression or one-class: one output
        if n_outputs != 1:
            raise ValueError(f"a model without classes has one output, the file has {n_outputs}")
        return
    expected = 1 if n_classes == 2 else (n_classes if strategy == "ovr" else n_classes * (n_classes - 1) // 2)
    if strategy not in ("ovo", "ovr") or n_outputs != expected:
        raise ValueError(f"{n_classes} classes with multiclass={strategy!r} need {expected} outputs, "
                         f"the file has {n_outputs}")


def load_model(path, max_bytes: int | None = None):
    """Read a model written by :func:`save_model`: a fitted estimator of the saved class.

    Anything else (truncated, garbled, forged counts, zip bombs) raises
    ``ValueError`` naming the file; declared array sizes are checked against
    the archive and the memory budget before anything is inflated (see
    ``MIN_MODEL_BYTES``; ``max_bytes`` overrides it).
    """
    name = os.fspath(path)
    arrays, meta = _read_npz(path, max_bytes)
    cls = registered_estimators().get(meta["estimator"])
    if cls is None:
        raise ValueError(f"{name}: unknown estimator class {meta['estimator']!r}; "
                         f"known: {', '.join(sorted(registered_estimators()))}")
    try:
        k = meta["kernel"]
        kernel = named_kernel(k["name"], k["gamma"], k["degree"], k["coef0"])
        expansion = KernelExpansion(_native_support_vectors(arrays, meta), arrays["coef"],
                                    arrays["intercept"], kernel)
        _check_outputs(arrays["classes"].size, meta["multiclass"], expansion.n_outputs)
        n_features_in = _n_features_in(meta, expansion)
        valid = cls().get_params(deep=False)
        params = {key: value for key, value in meta.get("params", {}).items() if key in valid}
        est = cls(**params)
    except (KeyError, TypeError, ValueError, OverflowError, AttributeError, IndexError) as exc:
        raise ValueError(f"{name}: inconsistent model file ({exc})") from None
    if bool(arrays["classes"].size) != is_classifier(est):
        raise ValueError(f"{name}: a {meta['estimator']} model {'needs' if is_classifier(est) else 'has no'} classes")
    if arrays["classes"].size:
        est.classes_ = arrays["classes"]
        est.multiclass_ = meta["multiclass"]
    est.expansion_ = expansion
    if "n_support" in arrays:
        est.n_support_ = arrays["n_support"].astype(np.int32)
    est.support_ = arrays.get("support", np.empty(0, dtype=np.int32))
    est.n_features_in_ = n_features_in
    est._gamma = kernel.gamma
    est.fit_status_ = int(meta.get("fit_status", 0))
    if "probA" in arrays and ("probB" in arrays or not is_classifier(est)):   # regression: probA only
        est.probA_ = arrays["probA"]
    if "probB" in arrays and "probA" in arrays:
        est.probB_ = arrays["probB"]
    if "preprocessing" in meta:
        try:
            prep = _preprocessor_from_json(meta["preprocessing"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"{name}: inconsistent preprocessing in the model file ({exc})") from None
        made = len(getattr(prep, "feature_names_out_", ())) or prep.n_features_in_
        if made != est.n_features_in_:
            raise ValueError(f"{name}: the preprocessing makes {made} columns, the model takes {est.n_features_in_}")
        return with_preprocessing(prep, est)
    return est


def _n_features_in(meta, expansion) -> int:
    """The estimator's input width: the support vectors' (files written before it was stored, or
    any named kernel) or, for a precomputed kernel, the number of training samples."""
    n = meta.get("n_features_in", expansion.n_features)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n_features_in must be a non-negative integer, got {n!r}")
    if n != expansion.n_features and not expansion.kernel.pairwise:
        raise ValueError(f"n_features_in {n} differs from the support vectors' {expansion.n_features} columns")
    return n


def _preprocessor_from_json(state):
    if state.get("kind", "table") == "table":
        from leansvm.preprocessing.tabular import TablePreprocessor
        return TablePreprocessor.from_json(state)
    if state["kind"] == "scaler":
        from leansvm.preprocessing.scaling import FeatureScaler
        return FeatureScaler.from_json(state)
    raise ValueError(f"unknown preprocessing kind {state['kind']!r}")
