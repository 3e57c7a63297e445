"""``leansvm export``: a model file as ONNX."""

from __future__ import annotations

import numpy as np

from leansvm import io
from leansvm.cli.common import HelpFormatter, load_any_model


EPILOG = """examples:
  leansvm export train.model model.onnx
  leansvm export model.npz model.onnx --float32"""


def add_parser(sub):
    p = sub.add_parser("export", help="export a model file to ONNX (needs leansvm[onnx])",
                       description="Write MODEL as an ONNX graph (input X; outputs label, scores and, for a "
                                   "binary model with LIBSVM probA/probB, probabilities). The default float64 "
                                   "matmul graph reproduces leansvm's scores to ~1e-10; the SVMClassifier "
                                   "operator and --float32 store float32 and can be off by more than 1e-4 "
                                   "(banana: 2.7e-4 operator, 1.7e-2 float32 graph).",
                       epilog=EPILOG, formatter_class=HelpFormatter)
    p.add_argument("model", metavar="MODEL", help="LIBSVM model file or leansvm .npz")
    p.add_argument("output", metavar="OUTPUT", help="ONNX file to write (e.g. model.onnx)")
    p.add_argument("--method", choices=("auto", "matmul", "svm_classifier", "svm_regressor"), default="auto",
                   help="standard operators (matmul, the default: float64, exact to ~1e-10), "
                        "ai.onnx.ml.SVMClassifier (binary / one-vs-one; float32 storage: scores off by up to "
                        "~3e-4 on large-C models such as banana and a9a) or ai.onnx.ml.SVMRegressor "
                        "(regression and one-class models, float32)")
    p.add_argument("--float32", action="store_true",
                   help="float32 matmul graph (fastest; scores off by up to ~1e-2 on large-C models)")
    p.add_argument("--no-probabilities", action="store_true", help="leave out the probabilities output")
    p.set_defaults(func=run)


def run(args) -> int:
    """``leansvm export MODEL OUTPUT``: see :mod:`leansvm.io.onnx`."""
    model = load_any_model(args.model)
    io.save_onnx(model, args.output, method=args.method, dtype=np.float32 if args.float32 else np.float64,
                 probabilities=False if args.no_probabilities else None)
    print(f"ONNX model ({args.method}) written to {args.output}")
    return 0
