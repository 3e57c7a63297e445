"""Model and data files: LIBSVM model files, leansvm's native ``.npz`` format, svmlight data, ONNX.

One module per format, all re-exported here: :mod:`~leansvm.io.libsvm`
(``save_libsvm_model`` / ``load_libsvm_model``: the text format, documented in
that module), :mod:`~leansvm.io.native` (``save_model`` / ``load_model``: one
``.npz`` archive, read with ``allow_pickle=False``), :mod:`~leansvm.io.svmlight`
(``load_svmlight``: 0-based or 1-based data files), :mod:`~leansvm.io.onnx`
(``to_onnx`` / ``save_onnx``) and :mod:`~leansvm.io.files` (atomic writes, the
readers' memory budget).

Every writer is atomic: it writes a temporary file in the target's folder and
renames it over the target, so a failed write leaves an existing file intact.
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
