"""ONNX export of any leansvm classifier (anything with ``expansion_``, ``classes_``, ``multiclass_``).

The exported graph has one input ``X`` (n x d, float32 or float64) and two outputs:

* ``label`` (n,): the predicted class, int64 or string (or float / bool as ``classes_``);
* ``scores`` (n x n_outputs): the raw outputs of the kernel expansion
  f(x) = sum_j coef[j, :] k(sv_j, x) + intercept, i.e.
  ``model.expansion_.decision_function(X)`` (binary: one column, > 0 meaning
  ``classes_[1]``; one-vs-one: one column per pair in LIBSVM's order; one-vs-rest:
  one column per class).

Two ways to compute it (``method``):

``"svm_classifier"``
    The ``ai.onnx.ml.SVMClassifier`` operator (binary and one-vs-one only). It
    stores everything as float32 and evaluates pair p = (i, j) as
    ``s_p = sum coefficients * k + rho_p`` voting for i when ``s_p > 0`` (ties of
    the votes go to the lowest class index, as LIBSVM). Its ``rho`` is *added*,
    so ``rho = intercept`` for k > 2 (leansvm's column p is already LIBSVM's
    decision of pair p) and, for binary models, the signs are flipped
    (``coefficients = -coef``, ``rho = -intercept``) because the operator's
    class 0 wins when ``s > 0`` while leansvm's binary output is > 0 for class 1.
    The operator requires support vectors grouped by class with pair (i, j)'s
    coefficient of a class-i vector in row j-1 and of a class-j vector in row i
    (LIBSVM's ``sv_coef``); an expansion whose rows do not follow that pattern
    (a compressed model) is laid out by copying a row into the blocks of a
    small set of classes that covers its non-zero pairs (a greedy vertex cover).
    Its RBF kernel is a plain per-entry loop in float32.

``"matmul"``
    A graph of standard operators: for RBF
    ``K = Exp(Min(X (2 gamma SV') - gamma |x|^2 - gamma |sv|^2, 0))`` (one
    MatMul, the squared norms by a second MatMul), then the coefficient product,
    restricted to the block-sparse structure of one-vs-one models (one MatMul per
    run of support vectors sharing a column pattern, summed into the pair columns
    by Gather + Add), + intercept. Linear kernels collapse to ``X W + b``. Labels:
    binary ``f >= 0``; one-vs-rest ``ArgMax``; one-vs-one vote counts by a MatMul
    with a pair-incidence matrix and ``ArgMax`` (ties to the lowest index, as
    LIBSVM). Works for every model, in float32 or float64 (``dtype``).

``"auto"`` (default) picks ``matmul``: it supports every model and, in float64
(the default ``dtype``), reproduces leansvm's scores to ~1e-10, where any
float32 graph (the operator included) is off by up to ~1e-3 on models with
large coefficients (C = 100). ``dtype=np.float32`` is the fast graph: about 7x
faster than float64 in onnxruntime, scores to ~1e-7 of sum |coef|. See
``benchmarks/bench_onnx.py`` for both, and the operator, on the benchmark sets.

Probability outputs (``predict_proba``) are not exported.

``onnx`` is imported lazily: ``pip install leansvm[onnx]``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .multiclass import ovo_pairs

__all__ = ["to_onnx", "save_onnx", "METHODS"]

METHODS = ("auto", "matmul", "svm_classifier")
#: default opsets: ai.onnx 17 (runs on onnxruntime >= 1.13), ai.onnx.ml 1
DEFAULT_OPSET = 17
_ML_DOMAIN = "ai.onnx.ml"


def _require_onnx():
    try:
        import onnx  # noqa: F401
        from onnx import TensorProto, helper, numpy_helper  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("ONNX export needs the 'onnx' package: pip install 'leansvm[onnx]'") from exc
    return onnx


def _fitted_parts(model):
    """(expansion, classes, strategy) of a fitted leansvm classifier; ValueError otherwise."""
    expansion = getattr(model, "expansion_", None)
    classes = getattr(model, "classes_", None)
    if expansion is None or classes is None:
        raise ValueError(f"{type(model).__name__} is not a fitted leansvm classifier "
                         "(it needs expansion_ and classes_)")
    classes = np.asarray(classes)
    strategy = getattr(model, "multiclass_", "ovo")
    k = classes.size
    expected = 1 if k == 2 else (k if strategy == "ovr" else k * (k - 1) // 2)
    if k < 2 or expansion.n_outputs != expected:
        raise ValueError(f"{k} classes with multiclass={strategy!r} need {expected} expansion outputs, "
                         f"the model has {expansion.n_outputs}")
    return expansion, classes, strategy


def _label_kind(classes) -> str:
    """'int', 'str', 'float' or 'bool': how labels are stored in the graph."""
    kind = classes.dtype.kind
    if kind in "iu":
        return "int"
    if kind == "b":
        return "bool"
    if kind == "f":
        return "int" if np.all(classes == np.round(classes)) and np.all(np.abs(classes) < 2**53) else "float"
    if kind in "USO":
        values = classes.tolist()
        if all(isinstance(v, str) for v in values):
            return "str"
        if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
            return "int"
    raise ValueError(f"labels of dtype {classes.dtype} cannot be exported to ONNX; use integers or strings")


def _dense(a) -> np.ndarray:
    return a.toarray() if sp.issparse(a) else np.asarray(a)


# -- ai.onnx.ml.SVMClassifier -----------------------------------------------------------
def svm_classifier_layout(coef: np.ndarray, n_classes: int):
    """Assign expansion rows to class blocks for ``SVMClassifier``.

    Returns ``(rows, classes_of_copies, coefficients)``: ``rows`` are the
    expansion rows (a row may appear several times), sorted by the class block
    they are placed in, and ``coefficients`` the (k-1) x len(rows) matrix in
    LIBSVM's ``sv_coef`` layout. Each non-zero (row, pair) entry is placed
    exactly once, so the operator reproduces ``K @ coef`` column by column.
    """
    pairs = ovo_pairs(n_classes)
    m, n_pairs = coef.shape
    if n_pairs != len(pairs):
        raise ValueError(f"{n_classes} classes need {len(pairs)} pair columns, got {n_pairs}")
    incidence = np.zeros((n_pairs, n_classes), dtype=np.int64)
    for p, (i, j) in enumerate(pairs):
        incidence[p, i] = incidence[p, j] = 1
    nz = coef != 0
    counts = nz.astype(np.int64) @ incidence           # non-zero pairs of each row touching each class
    n_nz = nz.sum(axis=1)
    best = np.argmax(counts, axis=1)
    covered_by_one = counts[np.arange(m), best] == n_nz
    copies = []                                         # (row, class, pair columns placed there)
    for r in np.flatnonzero(covered_by_one & (n_nz > 0)).tolist():
        copies.append((r, int(best[r]), np.flatnonzero(nz[r])))
    for r in np.flatnonzero(~covered_by_one).tolist():  # greedy vertex cover of the row's pairs
        left = set(np.flatnonzero(nz[r]).tolist())
        while left:
            score = np.zeros(n_classes, dtype=np.int64)
            for p in left:
                score[pairs[p][0]] += 1
                score[pairs[p][1]] += 1
            c = int(np.argmax(score))
            mine = sorted(p for p in left if c in pairs[p])
            copies.append((r, c, np.asarray(mine)))
            left.difference_update(mine)
    copies.sort(key=lambda t: (t[1], t[0]))
    rows = np.array([r for r, _, _ in copies], dtype=np.intp)
    copy_class = np.array([c for _, c, _ in copies], dtype=np.intp)
    coefficients = np.zeros((n_classes - 1, len(copies)))
    for pos, (r, c, cols) in enumerate(copies):
        for p in cols.tolist():
            i, j = pairs[p]
            coefficients[j - 1 if c == i else i, pos] = coef[r, p]
    return rows, copy_class, coefficients


_ONNX_KERNEL = {"linear": "LINEAR", "poly": "POLY", "rbf": "RBF", "sigmoid": "SIGMOID"}


def _svm_classifier_graph(expansion, classes, strategy, kind, input_type):
    from onnx import TensorProto, helper

    k = classes.size
    if strategy == "ovr" and k > 2:
        raise ValueError("ai.onnx.ml.SVMClassifier cannot express one-vs-rest models; use method='matmul'")
    if kind not in ("int", "str"):
        raise ValueError(f"ai.onnx.ml.SVMClassifier needs integer or string labels, not {classes.dtype}; "
                         "use method='matmul'")
    coef, intercept = expansion.coef, expansion.intercept
    if k == 2:                       # operator: s > 0 -> class 0; leansvm: f > 0 -> class 1
        coef, intercept = -coef, -intercept
    rows, copy_class, coefficients = svm_classifier_layout(coef, k)
    if rows.size == 0:
        raise ValueError("the model has no support vectors with non-zero coefficients; use method='matmul'")
    sv = _dense(expansion.support_vectors)[rows]
    kern = expansion.kernel
    attrs = dict(
        kernel_type=_ONNX_KERNEL[kern.name],
        kernel_params=[float(kern.gamma), float(kern.coef0), float(kern.degree)],
        support_vectors=sv.astype(np.float32).ravel().tolist(),
        vectors_per_class=np.bincount(copy_class, minlength=k).astype(np.int64).tolist(),
        coefficients=coefficients.astype(np.float32).ravel().tolist(),
        rho=intercept.astype(np.float32).tolist(),
        post_transform="NONE",
    )
    if kind == "str":
        attrs["classlabels_strings"] = [str(c) for c in classes.tolist()]
        label_type = TensorProto.STRING
    else:
        attrs["classlabels_ints"] = [int(c) for c in classes.tolist()]
        label_type = TensorProto.INT64
    nodes = [helper.make_node("SVMClassifier", ["X"], ["label", "op_scores"], domain=_ML_DOMAIN, **attrs)]
    inits = []
    if k == 2:
        # the operator writes [-s, s] for its single pair; leansvm's output is -s
        nodes.append(helper.make_node("Slice", ["op_scores", "first_col", "second_col", "one_axis"],
                                      ["scores"]))
        inits += [_const("first_col", np.array([0], np.int64)), _const("second_col", np.array([1], np.int64)),
                  _const("one_axis", np.array([1], np.int64))]
    else:
        nodes.append(helper.make_node("Identity", ["op_scores"], ["scores"]))
    return nodes, inits, label_type, TensorProto.FLOAT


# -- standard operators -----------------------------------------------------------------
def _const(name, array):
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(array), name=name)


def _string_const(name, values):
    from onnx import TensorProto, helper

    return helper.make_tensor(name, TensorProto.STRING, [len(values)], [v.encode("utf-8") for v in values])


def _kernel_nodes(expansion, ft, nodes, inits):
    """Nodes computing K = k(X, SV) (n x m) into 'K' in dtype ``ft``."""
    from onnx import helper

    kern = expansion.kernel
    sv = _dense(expansion.support_vectors)
    g = float(kern.gamma)
    if kern.name == "rbf":
        inits += [_const("sv_t_2g", (2.0 * g * sv.T).astype(ft)),
                  _const("g_ones", np.full((sv.shape[1], 1), g, dtype=ft)),
                  _const("neg_g_sv_norms", (-g * np.einsum("ij,ij->i", sv, sv))[None, :].astype(ft)),
                  _const("zero", np.zeros((), dtype=ft))]
        nodes += [helper.make_node("MatMul", ["Xc", "sv_t_2g"], ["cross"]),
                  helper.make_node("Mul", ["Xc", "Xc"], ["Xsq"]),
                  helper.make_node("MatMul", ["Xsq", "g_ones"], ["g_x_norms"]),
                  helper.make_node("Sub", ["cross", "g_x_norms"], ["t1"]),
                  helper.make_node("Add", ["t1", "neg_g_sv_norms"], ["t2"]),
                  helper.make_node("Min", ["t2", "zero"], ["t3"]),
                  helper.make_node("Exp", ["t3"], ["K"])]
        return
    inits += [_const("sv_t_g", (g * sv.T).astype(ft)), _const("coef0", np.array(kern.coef0, dtype=ft))]
    nodes += [helper.make_node("MatMul", ["Xc", "sv_t_g"], ["gx"]),
              helper.make_node("Add", ["gx", "coef0"], ["inner"])]
    if kern.name == "poly":
        inits.append(_const("degree", np.array(float(kern.degree), dtype=ft)))
        nodes.append(helper.make_node("Pow", ["inner", "degree"], ["K"]))
    else:
        nodes.append(helper.make_node("Tanh", ["inner"], ["K"]))


def _coef_nodes(expansion, ft, nodes, inits):
    """Nodes computing 'raw' = K @ coef + intercept, using the one-vs-one block structure."""
    from onnx import helper

    from .expansion import _coef_blocks

    coef = expansion.coef
    blocks = _coef_blocks(coef)
    inits.append(_const("intercept", expansion.intercept[None, :].astype(ft)))
    if blocks is None:
        inits.append(_const("coef", coef.astype(ft)))
        nodes += [helper.make_node("MatMul", ["K", "coef"], ["Kc"]),
                  helper.make_node("Add", ["Kc", "intercept"], ["raw"])]
        return
    parts, owner = [], []            # owner[q] = output column of concatenated partial column q
    inits.append(_const("axis1", np.array([1], np.int64)))
    for b, (a, z, cols) in enumerate(blocks):
        if cols.size == 0:
            continue
        inits += [_const(f"blk{b}_start", np.array([a], np.int64)), _const(f"blk{b}_stop", np.array([z], np.int64)),
                  _const(f"blk{b}_coef", coef[a:z][:, cols].astype(ft))]
        nodes += [helper.make_node("Slice", ["K", f"blk{b}_start", f"blk{b}_stop", "axis1"], [f"blk{b}_K"]),
                  helper.make_node("MatMul", [f"blk{b}_K", f"blk{b}_coef"], [f"blk{b}_out"])]
        parts.append(f"blk{b}_out")
        owner += cols.tolist()
    # a zero column at the end, gathered where an output has fewer contributions than the most
    inits.append(_const("zero_col_w", np.zeros((expansion.n_support, 1), dtype=ft)))
    nodes.append(helper.make_node("MatMul", ["K", "zero_col_w"], ["zero_col"]))
    nodes.append(helper.make_node("Concat", parts + ["zero_col"], ["partials"], axis=1))
    owner = np.asarray(owner)
    n_out = coef.shape[1]
    where = [np.flatnonzero(owner == c) for c in range(n_out)]
    layers = max(len(w) for w in where)
    acc = "intercept_b"
    nodes.append(helper.make_node("Identity", ["intercept"], [acc]))
    for r in range(layers):
        idx = np.array([w[r] if r < len(w) else owner.size for w in where], dtype=np.int64)
        inits.append(_const(f"layer{r}_idx", idx))
        nodes += [helper.make_node("Gather", ["partials", f"layer{r}_idx"], [f"layer{r}"], axis=1),
                  helper.make_node("Add", [acc, f"layer{r}"], [f"acc{r}"])]
        acc = f"acc{r}"
    nodes.append(helper.make_node("Identity", [acc], ["raw"]))


def _label_nodes(classes, strategy, kind, ft, nodes, inits):
    """Nodes turning 'raw' into 'label' (leansvm's rules, ties as LIBSVM)."""
    from onnx import TensorProto, helper

    k = classes.size
    if k == 2:
        inits.append(_const("zero_s", np.zeros((1,), dtype=ft)))
        inits.append(_const("col0", np.array(0, np.int64)))
        nodes += [helper.make_node("Gather", ["raw", "col0"], ["raw0"], axis=1),
                  helper.make_node("GreaterOrEqual", ["raw0", "zero_s"], ["is_second"]),
                  helper.make_node("Cast", ["is_second"], ["class_index"], to=TensorProto.INT64)]
    elif strategy == "ovr":
        nodes.append(helper.make_node("ArgMax", ["raw"], ["class_index"], axis=1, keepdims=0))
    else:
        pairs = ovo_pairs(k)
        to_first = np.zeros((len(pairs), k))
        to_second = np.zeros((len(pairs), k))
        for p, (i, j) in enumerate(pairs):
            to_first[p, i] = 1.0
            to_second[p, j] = 1.0
        inits += [_const("vote_diff", (to_first - to_second).astype(np.float32)),
                  _const("vote_base", to_second.sum(axis=0)[None, :].astype(np.float32)),
                  _const("zero_v", np.zeros((1,), dtype=ft))]
        nodes += [helper.make_node("Greater", ["raw", "zero_v"], ["first_wins"]),
                  helper.make_node("Cast", ["first_wins"], ["first_wins_f"], to=TensorProto.FLOAT),
                  helper.make_node("MatMul", ["first_wins_f", "vote_diff"], ["vote_d"]),
                  helper.make_node("Add", ["vote_d", "vote_base"], ["votes"]),
                  helper.make_node("ArgMax", ["votes"], ["class_index"], axis=1, keepdims=0)]
    if kind == "str":
        inits.append(_string_const("class_labels", [str(c) for c in classes.tolist()]))
        label_type = TensorProto.STRING
    elif kind == "int":
        inits.append(_const("class_labels", np.asarray(classes).astype(np.int64)))
        label_type = TensorProto.INT64
    elif kind == "bool":
        inits.append(_const("class_labels", np.asarray(classes, dtype=bool)))
        label_type = TensorProto.BOOL
    else:
        inits.append(_const("class_labels", np.asarray(classes, dtype=np.float64)))
        label_type = TensorProto.DOUBLE
    nodes.append(helper.make_node("Gather", ["class_labels", "class_index"], ["label"], axis=0))
    return label_type


def _matmul_graph(expansion, classes, strategy, kind, input_type, dtype):
    from onnx import TensorProto, helper

    ft = np.dtype(dtype)
    onnx_ft = TensorProto.FLOAT if ft == np.float32 else TensorProto.DOUBLE
    nodes, inits = [], []
    if input_type == onnx_ft:
        nodes.append(helper.make_node("Identity", ["X"], ["Xc"]))
    else:
        nodes.append(helper.make_node("Cast", ["X"], ["Xc"], to=onnx_ft))
    kern = expansion.kernel
    if kern.name == "linear" or expansion.n_support == 0:
        # f(x) = x' (SV' coef) + b: one matrix whatever the number of support vectors
        W = (_dense(expansion.support_vectors).T @ expansion.coef) if expansion.n_support else \
            np.zeros((expansion.n_features, expansion.n_outputs))
        if kern.name != "linear":   # no support vectors: constant outputs
            W = np.zeros_like(W)
        inits += [_const("W", W.astype(ft)), _const("intercept", expansion.intercept[None, :].astype(ft))]
        nodes += [helper.make_node("MatMul", ["Xc", "W"], ["XW"]),
                  helper.make_node("Add", ["XW", "intercept"], ["raw"])]
    else:
        _kernel_nodes(expansion, ft, nodes, inits)
        _coef_nodes(expansion, ft, nodes, inits)
    label_type = _label_nodes(classes, strategy, kind, ft, nodes, inits)
    nodes.append(helper.make_node("Identity", ["raw"], ["scores"]))
    return nodes, inits, label_type, onnx_ft


def to_onnx(model, method: str = "auto", dtype=np.float64, input_dtype=None,
            opset: int = DEFAULT_OPSET, name: str | None = None):
    """An ``onnx.ModelProto`` computing ``label`` and ``scores`` of a fitted leansvm classifier.

    ``method``: 'auto', 'matmul' or 'svm_classifier' (see the module docstring).
    ``dtype``: precision of the 'matmul' graph (float64 by default, or
    float32; the SVMClassifier operator is always float32). ``input_dtype``:
    type of the input ``X`` (defaults to ``dtype``; float32 for the operator). Raises ``ValueError`` for an unfitted
    model, an unknown method, a method that cannot express the model, or labels
    that are neither numbers nor strings.
    """
    onnx = _require_onnx()
    from onnx import TensorProto, helper

    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if np.dtype(dtype) not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype!r}")
    if input_dtype is None:   # the operator computes in float32 whatever it is given
        input_dtype = np.float32 if method == "svm_classifier" else dtype
    input_dtype = np.dtype(input_dtype)
    if input_dtype not in (np.float32, np.float64):
        raise ValueError(f"input_dtype must be float32 or float64, got {input_dtype!r}")
    input_type = TensorProto.FLOAT if input_dtype == np.float32 else TensorProto.DOUBLE
    expansion, classes, strategy = _fitted_parts(model)
    kind = _label_kind(classes)
    if method == "auto":
        method = "matmul"
    if method == "svm_classifier":
        nodes, inits, label_type, score_type = _svm_classifier_graph(expansion, classes, strategy, kind,
                                                                     input_type)
    else:
        nodes, inits, label_type, score_type = _matmul_graph(expansion, classes, strategy, kind,
                                                             input_type, dtype)
    d = expansion.n_features
    graph = helper.make_graph(
        nodes, name or f"leansvm_{type(model).__name__}", [helper.make_tensor_value_info("X", input_type, [None, d])],
        [helper.make_tensor_value_info("label", label_type, [None]),
         helper.make_tensor_value_info("scores", score_type, [None, expansion.n_outputs])],
        initializer=inits)
    opsets = [helper.make_opsetid("", opset)]
    if method == "svm_classifier":
        opsets.append(helper.make_opsetid(_ML_DOMAIN, 1))
    from . import __version__

    onnx_model = helper.make_model(graph, opset_imports=opsets, producer_name="leansvm",
                                   producer_version=__version__)
    onnx_model.ir_version = min(onnx_model.ir_version, 8)   # readable by onnxruntime >= 1.13
    onnx.checker.check_model(onnx_model)
    return onnx_model


def save_onnx(model, path, **options) -> None:
    """Write ``to_onnx(model, **options)`` to ``path`` atomically."""
    from .io import atomic_write

    onnx_model = to_onnx(model, **options)
    with atomic_write(path, "wb", encoding=None) as f:
        f.write(onnx_model.SerializeToString())
