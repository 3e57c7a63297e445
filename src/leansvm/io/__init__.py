"""Model and data files: LIBSVM model files, leansvm's native ``.npz`` format, svmlight data.

LIBSVM model files (``save_libsvm_model`` / ``load_libsvm_model``) are text::

    svm_type c_svc
    kernel_type rbf                 linear | polynomial | rbf | sigmoid
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

The native format (``save_model`` / ``load_model``) is one ``.npz`` archive
(read with ``allow_pickle=False``) holding the expansion's arrays and a JSON
``metadata`` string; see :func:`save_model`.

Every writer is atomic: it writes a temporary file in the target's folder and
renames it over the target, so a failed write leaves an existing file intact.

The package's modules: :mod:`~leansvm.io.files` (atomic writes, readers' memory
budget), :mod:`~leansvm.io.libsvm`, :mod:`~leansvm.io.native`,
:mod:`~leansvm.io.svmlight`, :mod:`~leansvm.io.onnx` (ONNX export).
"""

from leansvm.core.registry import ESTIMATORS, register_estimator
from leansvm.io.files import atomic_write
from leansvm.io.libsvm import load_libsvm_model, save_libsvm_model
from leansvm.io.native import is_native_model_file, load_model, save_model
from leansvm.io.onnx import save_onnx, to_onnx
from leansvm.io.svmlight import load_svmlight
from leansvm.preprocessing.attached import split_preprocessing, with_preprocessing

__all__ = [
    "save_libsvm_model", "load_libsvm_model", "save_model", "load_model", "load_svmlight",
    "with_preprocessing", "split_preprocessing",
    "atomic_write", "register_estimator", "ESTIMATORS", "is_native_model_file",
    "to_onnx", "save_onnx",
]
