"""ONNX export of any leansvm model: classifiers (anything with ``expansion_``, ``classes_``,
``multiclass_``), regressors and one-class models (``expansion_`` with one output).

The exported graph of a classifier has one input ``X`` (n x d, float32 or float64) and two outputs:

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
``benchmarks/deploy/bench_onnx.py`` for both, and the operator, on the benchmark sets.

Which method meets leansvm's scores to 1e-4: the float64 ``matmul`` graph
everywhere (max |diff| <= 2e-10 on the 11 keel sets and a9a). The
``svm_classifier`` operator stores support vectors and coefficients as
float32 (the ONNX-ML spec), so on models with large coefficients or many
support vectors its scores are off by more than 1e-4 (banana, C = 100:
2.7e-4; a9a, 11,383 SVs: 2.3e-4; labels still identical there), and the
float32 graph by up to 1.7e-2 (banana). Use them for speed, not for exactness.

Regressors (SVR, NuSVR) and one-class models: outputs ``scores`` (n x 1, the expansion:
``predict`` of a regressor, ``decision_function`` of a one-class model) and ``prediction``
(n,: the regression value) or ``label`` (n,: +1 inlier where the score is > 0, else -1), by
the standard operators or by ``method="svm_regressor"``: the ``ai.onnx.ml.SVMRegressor``
operator (float32, value = sum coefficients k(sv, x) + rho, so ``rho = intercept``).

A precomputed kernel's graph takes the kernel values against the training samples as ``X``
(n x n_train, scikit-learn's input) and gathers the support vectors' columns; a model with a
kernel function (Python code) cannot be exported.

Probabilities: a third output ``probabilities`` (n x n_classes) reproduces
``model.predict_proba`` for ``leansvm.SVC(probability=True)`` (scikit-learn's
sigmoid calibration on the decision function, binary and multi-class: within
1e-10 in float64) and for binary models read from LIBSVM files with probA/probB
(LIBSVM's sigmoid, clamped to [1e-7, 1 - 1e-7]). Multi-class LIBSVM probabilities
(pairwise coupling, an iterative solve per row) are refused with a ValueError;
see :func:`probability_parameters`.

``onnx`` is imported lazily: ``pip install leansvm[onnx]``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from leansvm.core.multiclass import ovo_pairs
from leansvm.core.user_kernels import check_storable
from leansvm.preprocessing.attached import split_preprocessing

__all__ = ["to_onnx", "save_onnx", "probability_parameters", "METHODS"]

METHODS = ("auto", "matmul", "svm_classifier", "svm_regressor")
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


def _feature_scaling(model):
    """(FeatureScaler or None, kernel model) of a model with preprocessing; a table's
    preprocessing (text categories, imputation) is refused."""
    preprocessor, model = split_preprocessing(model)
    if preprocessor is not None and not hasattr(preprocessor, "affine"):
        raise ValueError("the preprocessing of a table (imputation, one-hot encoding of text columns) is not "
                         "exported to ONNX; export the kernel model (model[-1]) and transform the columns "
                         "first (model[0].transform)")
    return preprocessor, model


def _fitted_parts(model):
    """(expansion, classes, strategy) of a fitted leansvm model (classes None for a regressor or
    one-class model); ValueError otherwise."""
    expansion = getattr(model, "expansion_", None)
    classes = getattr(model, "classes_", None)
    if expansion is None:
        raise ValueError(f"{type(model).__name__} is not a fitted leansvm model (it needs expansion_)")
    check_storable(expansion.kernel, "ONNX")
    if classes is None:
        if expansion.n_outputs != 1:
            raise ValueError(f"a {type(model).__name__} without classes_ must have one output, this one has "
                             f"{expansion.n_outputs}")
        return expansion, None, None
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
    _operator_kernel(expansion)
    rows, copy_class, coefficients = svm_classifier_layout(coef, k)
    if rows.size == 0:
        raise ValueError("the model has no support vectors with non-zero coefficients; use method='matmul'")
    sv = _dense(expansion.support_vectors)[rows]
    kern = expansion.kernel
    attrs = dict(
        kernel_type=_operator_kernel(expansion),
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


def _operator_kernel(expansion) -> str:
    """The ONNX-ML operators' name of the model's kernel; they have no precomputed kernel."""
    if expansion.kernel.name not in _ONNX_KERNEL:
        raise ValueError(f"the ai.onnx.ml SVM operators have no {expansion.kernel.name} kernel; use method='matmul'")
    return _ONNX_KERNEL[expansion.kernel.name]


def _kernel_nodes(expansion, ft, nodes, inits):
    """Nodes computing K = k(X, SV) (n x m) into 'K' in dtype ``ft``."""
    from onnx import helper

    kern = expansion.kernel
    sv = _dense(expansion.support_vectors)
    g = float(kern.gamma)
    if kern.pairwise:   # precomputed: X holds k(x, x_j) in column j - 1 of training sample j
        inits.append(_const("sv_columns", kern.serials(sv) - 1))
        nodes.append(helper.make_node("Gather", ["Xc", "sv_columns"], ["K"], axis=1))
        return
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

    from leansvm.core.expansion import _coef_blocks

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
    for b, (a, z, cols, block_coef) in enumerate(blocks):
        if cols.size == 0:
            continue
        inits += [_const(f"blk{b}_start", np.array([a], np.int64)), _const(f"blk{b}_stop", np.array([z], np.int64)),
                  _const(f"blk{b}_coef", block_coef.astype(ft))]
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


# -- probabilities -------------------------------------------------------------------------
#: LIBSVM clamps each pairwise sigmoid to [MIN_PROB, 1 - MIN_PROB] (svm.cpp, svm_predict_probability)
LIBSVM_MIN_PROB = 1e-7


def probability_parameters(model, classes, strategy):
    """How ``model`` turns scores into probabilities, as ``(rule, a, b)``; ValueError if not exportable.

    * ``'sigmoid'``: leansvm's ``SVC(probability=True)``: scikit-learn's
      ``CalibratedClassifierCV(method='sigmoid', ensemble=False)`` over the model's
      ``decision_function``: P_c = 1 / (1 + exp(a_c D_c + b_c)) per class column D_c (binary:
      one sigmoid for ``classes_[1]``, P_0 = 1 - P_1; more classes: normalised by their sum,
      one-vs-one scores first mapped to scikit-learn's one-vs-rest shape, votes + confidences);
    * ``'libsvm'``: a binary model read from a LIBSVM file with probA/probB: P(classes_[0]) =
      clip(1 / (1 + exp(A dec + B)), 1e-7, 1 - 1e-7) with dec = -f (LIBSVM's rule).

    Multi-class LIBSVM probabilities (probA/probB of k > 2 classes) combine the pairwise
    sigmoids by LIBSVM's pairwise coupling, an iterative linear solve per row (up to 100
    iterations of Wu, Lin & Weng's method 2): not expressed in the graph.
    """
    k = classes.size
    calibrated = getattr(model, "calibrator_", None)
    if calibrated is not None:
        cals = getattr(calibrated, "calibrated_classifiers_", [])
        if getattr(calibrated, "method", None) != "sigmoid" or len(cals) != 1:
            raise ValueError("only a single sigmoid calibration (leansvm.SVC(probability=True)) can be exported")
        sigmoids = cals[0].calibrators
        a = np.array([float(c.a_) for c in sigmoids])
        b = np.array([float(c.b_) for c in sigmoids])
        if a.size != (1 if k == 2 else k):
            raise ValueError(f"the calibration holds {a.size} sigmoids for {k} classes")
        if k > 2 and strategy == "ovo" and getattr(model, "decision_function_shape", "ovr") != "ovr":
            raise ValueError("probabilities of decision_function_shape='ovo' models cannot be exported")
        return "sigmoid", a, b
    prob_a, prob_b = getattr(model, "probA_", None), getattr(model, "probB_", None)
    if prob_a is not None and prob_b is not None and np.size(prob_a):
        if k == 2:
            return "libsvm", np.ravel(prob_a).astype(float), np.ravel(prob_b).astype(float)
        raise ValueError("multi-class LIBSVM probabilities (probA/probB) are combined by LIBSVM's pairwise "
                         "coupling, an iterative solve per row that the ONNX export does not express; "
                         "export without probabilities (probabilities=False) and couple them outside")
    raise ValueError(f"{type(model).__name__} has no probabilities: fit leansvm.SVC(probability=True)")


def _probability_nodes(rule, a, b, source, n_classes, strategy, ft, nodes, inits):
    """Nodes turning the scores tensor ``source`` (n x outputs, dtype ``ft``) into 'probabilities'."""
    from onnx import TensorProto, helper

    onnx_ft = TensorProto.FLOAT if np.dtype(ft) == np.float32 else TensorProto.DOUBLE
    inits.append(_const("proba_one", np.ones((1,), dtype=ft)))
    if n_classes == 2:
        inits.append(_const("proba_idx0", np.array([0], np.int64)))
        nodes.append(helper.make_node("Gather", [source, "proba_idx0"], ["proba_f"], axis=1))   # n x 1
        if rule == "libsvm":     # P(classes_[0]) = sigmoid(-(A dec + B)) = sigmoid(A f - B), clamped
            inits += [_const("proba_scale", np.array([a[0]], dtype=ft)), _const("proba_shift", np.array([-b[0]], dtype=ft)),
                      _const("proba_lo", np.array(LIBSVM_MIN_PROB, dtype=ft)),
                      _const("proba_hi", np.array(1.0 - LIBSVM_MIN_PROB, dtype=ft))]
            first = "proba_first"
            nodes += [helper.make_node("Mul", ["proba_f", "proba_scale"], ["proba_z0"]),
                      helper.make_node("Add", ["proba_z0", "proba_shift"], ["proba_z"]),
                      helper.make_node("Sigmoid", ["proba_z"], ["proba_s"]),
                      helper.make_node("Clip", ["proba_s", "proba_lo", "proba_hi"], [first]),
                      helper.make_node("Sub", ["proba_one", first], ["proba_second"])]
        else:                    # P(classes_[1]) = sigmoid(-(a f + b)), P(classes_[0]) = 1 - P(classes_[1])
            inits += [_const("proba_scale", np.array([-a[0]], dtype=ft)), _const("proba_shift", np.array([-b[0]], dtype=ft))]
            nodes += [helper.make_node("Mul", ["proba_f", "proba_scale"], ["proba_z0"]),
                      helper.make_node("Add", ["proba_z0", "proba_shift"], ["proba_z"]),
                      helper.make_node("Sigmoid", ["proba_z"], ["proba_second"]),
                      helper.make_node("Sub", ["proba_one", "proba_second"], ["proba_first"])]
        nodes.append(helper.make_node("Concat", ["proba_first", "proba_second"], ["probabilities"], axis=1))
        return
    D = source
    if strategy == "ovo":        # scikit-learn's _ovr_decision_function(raw < 0, -raw, k)
        pairs = ovo_pairs(n_classes)
        to_first, to_second = np.zeros((len(pairs), n_classes)), np.zeros((len(pairs), n_classes))
        for p, (i, j) in enumerate(pairs):
            to_first[p, i] = to_second[p, j] = 1.0
        inits += [_const("proba_pair_sign", (to_first - to_second).astype(ft)),
                  _const("proba_vote_base", to_second.sum(axis=0)[None, :].astype(ft)),
                  _const("proba_zero", np.zeros((1,), dtype=ft)), _const("proba_three", np.array(3.0, dtype=ft))]
        nodes += [helper.make_node("GreaterOrEqual", [source, "proba_zero"], ["proba_ge"]),   # vote for i
                  helper.make_node("Cast", ["proba_ge"], ["proba_ge_f"], to=onnx_ft),
                  helper.make_node("MatMul", ["proba_ge_f", "proba_pair_sign"], ["proba_vd"]),
                  helper.make_node("Add", ["proba_vd", "proba_vote_base"], ["proba_votes"]),
                  helper.make_node("MatMul", [source, "proba_pair_sign"], ["proba_conf"]),   # sum of confidences
                  helper.make_node("Abs", ["proba_conf"], ["proba_abs"]),
                  helper.make_node("Add", ["proba_abs", "proba_one"], ["proba_abs1"]),
                  helper.make_node("Mul", ["proba_abs1", "proba_three"], ["proba_den3"]),
                  helper.make_node("Div", ["proba_conf", "proba_den3"], ["proba_tconf"]),
                  helper.make_node("Add", ["proba_votes", "proba_tconf"], ["proba_D"])]
        D = "proba_D"
    inits += [_const("proba_scale", (-a)[None, :].astype(ft)), _const("proba_shift", (-b)[None, :].astype(ft)),
              _const("proba_axis1", np.array([1], np.int64)), _const("proba_zero_s", np.zeros((1,), dtype=ft)),
              _const("proba_uniform", np.full((1, n_classes), 1.0 / n_classes, dtype=ft))]
    nodes += [helper.make_node("Mul", [D, "proba_scale"], ["proba_z0"]),
              helper.make_node("Add", ["proba_z0", "proba_shift"], ["proba_z"]),
              helper.make_node("Sigmoid", ["proba_z"], ["proba_s"]),
              helper.make_node("ReduceSum", ["proba_s", "proba_axis1"], ["proba_sum"], keepdims=1),
              helper.make_node("Div", ["proba_s", "proba_sum"], ["proba_norm"]),
              helper.make_node("Equal", ["proba_sum", "proba_zero_s"], ["proba_all_zero"]),
              helper.make_node("Where", ["proba_all_zero", "proba_uniform", "proba_norm"], ["proba_w"]),
              helper.make_node("Min", ["proba_w", "proba_one"], ["probabilities"])]


def _matmul_graph(expansion, classes, strategy, kind, input_type, dtype):
    nodes, inits, onnx_ft = _raw_nodes(expansion, input_type, dtype)
    label_type = _label_nodes(classes, strategy, kind, np.dtype(dtype), nodes, inits)
    return nodes, inits, label_type, onnx_ft


def _raw_nodes(expansion, input_type, dtype):
    """Nodes computing the expansion's outputs 'raw' (n x n_outputs) from 'X' in ``dtype``."""
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
    nodes.append(helper.make_node("Identity", ["raw"], ["scores"]))
    return nodes, inits, onnx_ft


def _one_output_graph(model, expansion, method, input_type, dtype):
    """Nodes of a regressor ('prediction') or one-class model ('label', +1 where score > 0, else -1),
    both with 'scores' (n x 1): standard operators, or the SVMRegressor operator (float32)."""
    from onnx import TensorProto, helper

    if method == "svm_regressor":
        nodes, inits = [], []
        sv = _dense(expansion.support_vectors)
        nodes.append(helper.make_node(
            "SVMRegressor", ["X"], ["scores"], domain=_ML_DOMAIN, kernel_type=_operator_kernel(expansion),
            kernel_params=[float(expansion.kernel.gamma), float(expansion.kernel.coef0),
                           float(expansion.kernel.degree)],
            support_vectors=sv.astype(np.float32).ravel().tolist(), n_supports=int(expansion.n_support),
            coefficients=expansion.coef[:, 0].astype(np.float32).tolist(),
            rho=expansion.intercept.astype(np.float32).tolist(), one_class=0, post_transform="NONE"))
        score_type, ft = TensorProto.FLOAT, np.float32
    else:
        nodes, inits, score_type = _raw_nodes(expansion, input_type, dtype)
        ft = np.dtype(dtype)
    inits.append(_const("flat_shape", np.array([-1], np.int64)))
    if getattr(model, "libsvm_svm_type", "") == "one_class":
        inits += [_const("zero_score", np.zeros((1,), dtype=ft)), _const("inlier", np.array([1], np.int64)),
                  _const("outlier", np.array([-1], np.int64))]
        nodes += [helper.make_node("Reshape", ["scores", "flat_shape"], ["flat_scores"]),
                  helper.make_node("Greater", ["flat_scores", "zero_score"], ["is_inlier"]),
                  helper.make_node("Where", ["is_inlier", "inlier", "outlier"], ["label"])]
        first = helper.make_tensor_value_info("label", TensorProto.INT64, [None])
    else:
        nodes.append(helper.make_node("Reshape", ["scores", "flat_shape"], ["prediction"]))
        first = helper.make_tensor_value_info("prediction", score_type, [None])
    return nodes, inits, [first, helper.make_tensor_value_info("scores", score_type, [None, 1])]


def _input_width(model, expansion) -> int:
    """Columns of X: the features, or a precomputed kernel's training samples."""
    if not expansion.kernel.pairwise:
        return expansion.n_features
    serials = expansion.kernel.serials(_dense(expansion.support_vectors))
    return int(getattr(model, "n_features_in_", serials.max() if serials.size else 0))


def _probability_choice(model, classes, strategy, probabilities):
    """``probability_parameters`` when probabilities are to be exported, else None."""
    if probabilities not in (None, True, False):
        raise ValueError(f"probabilities must be True, False or None, got {probabilities!r}")
    if probabilities is False:
        return None
    try:
        return probability_parameters(model, classes, strategy)
    except ValueError as exc:
        if probabilities:
            raise
        has_some = getattr(model, "calibrator_", None) is not None or getattr(model, "probA_", None) is not None
        if has_some and np.size(getattr(model, "probA_", [1])):
            import warnings
            warnings.warn(f"exporting without probabilities: {exc}", UserWarning, stacklevel=3)
        return None


def to_onnx(model, method: str = "auto", dtype=np.float64, input_dtype=None,
            opset: int = DEFAULT_OPSET, name: str | None = None, probabilities=None):
    """An ``onnx.ModelProto`` computing ``label`` and ``scores`` of a fitted leansvm classifier.

    ``method``: 'auto', 'matmul' or 'svm_classifier' (see the module docstring).
    ``dtype``: precision of the 'matmul' graph (float64 by default, or
    float32; the SVMClassifier operator is always float32, so its scores can be
    off by more than 1e-4 on models with large coefficients: 2.7e-4 on banana,
    2.3e-4 on a9a; the float64 graph is within ~1e-10 everywhere). ``input_dtype``:
    type of the input ``X`` (defaults to ``dtype``; float32 for the operator).
    ``probabilities``: add a third output ``probabilities`` (n x n_classes) equal to
    ``model.predict_proba`` (see :func:`probability_parameters`): True (ValueError if the
    model's probabilities cannot be exported), False, or None (default: when they can be;
    a warning says why not when the model has probabilities that cannot be exported).
    Raises ``ValueError`` for an unfitted model, an unknown method, a method that cannot
    express the model, or labels that are neither numbers nor strings.
    """
    onnx = _require_onnx()
    from onnx import TensorProto, helper

    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if np.dtype(dtype) not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype!r}")
    if input_dtype is None:   # the operator computes in float32 whatever it is given
        input_dtype = np.float32 if method in ("svm_classifier", "svm_regressor") else dtype
    input_dtype = np.dtype(input_dtype)
    if input_dtype not in (np.float32, np.float64):
        raise ValueError(f"input_dtype must be float32 or float64, got {input_dtype!r}")
    input_type = TensorProto.FLOAT if input_dtype == np.float32 else TensorProto.DOUBLE
    scaler, model = _feature_scaling(model)
    expansion, classes, strategy = _fitted_parts(model)
    if method == "auto":
        method = "matmul"
    if (method == "svm_regressor") != (classes is None) and method != "matmul":
        raise ValueError(f"method={method!r} exports {'regressors and one-class models' if method == 'svm_regressor' else 'classifiers'}; "
                         f"{type(model).__name__} is {'a classifier' if classes is not None else 'not'}: use 'matmul'")
    proba = None
    if classes is None:
        if probabilities:
            raise ValueError(f"{type(model).__name__} has no class probabilities to export")
        nodes, inits, outputs = _one_output_graph(model, expansion, method, input_type, dtype)
    else:
        kind = _label_kind(classes)
        proba = _probability_choice(model, classes, strategy, probabilities)
        if method == "svm_classifier":
            nodes, inits, label_type, score_type = _svm_classifier_graph(expansion, classes, strategy, kind,
                                                                         input_type)
        else:
            nodes, inits, label_type, score_type = _matmul_graph(expansion, classes, strategy, kind,
                                                                 input_type, dtype)
        outputs = [helper.make_tensor_value_info("label", label_type, [None]),
                   helper.make_tensor_value_info("scores", score_type, [None, expansion.n_outputs])]
    d = _input_width(model, expansion)
    if scaler is not None:                    # x' = offset + factor * x, then the graph as before
        offset, factor = scaler.affine()
        if factor.size != d:
            raise ValueError(f"the scaling has {factor.size} features, the kernel model {d}")
        ft = np.float32 if input_type == TensorProto.FLOAT else np.float64
        for node in nodes:
            node.input[:] = ["X_scaled" if i == "X" else i for i in node.input]
        inits += [_const("scale_factor", factor.astype(ft)), _const("scale_offset", offset.astype(ft))]
        nodes[:0] = [helper.make_node("Mul", ["X", "scale_factor"], ["X_mul"]),
                     helper.make_node("Add", ["X_mul", "scale_offset"], ["X_scaled"])]
    if proba is not None:
        ft = np.float32 if score_type == TensorProto.FLOAT else np.float64
        _probability_nodes(*proba, "scores", classes.size, strategy, ft, nodes, inits)
        outputs.append(helper.make_tensor_value_info("probabilities", score_type, [None, classes.size]))
    graph = helper.make_graph(
        nodes, name or f"leansvm_{type(model).__name__}", [helper.make_tensor_value_info("X", input_type, [None, d])],
        outputs, initializer=inits)
    opsets = [helper.make_opsetid("", opset)]
    if method in ("svm_classifier", "svm_regressor"):
        opsets.append(helper.make_opsetid(_ML_DOMAIN, 1))
    from leansvm import __version__

    onnx_model = helper.make_model(graph, opset_imports=opsets, producer_name="leansvm",
                                   producer_version=__version__)
    onnx_model.ir_version = min(onnx_model.ir_version, 8)   # readable by onnxruntime >= 1.13
    onnx.checker.check_model(onnx_model)
    return onnx_model


def save_onnx(model, path, **options) -> None:
    """Write ``to_onnx(model, **options)`` to ``path`` atomically."""
    from leansvm.io.files import atomic_write

    onnx_model = to_onnx(model, **options)
    with atomic_write(path, "wb", encoding=None) as f:
        f.write(onnx_model.SerializeToString())
