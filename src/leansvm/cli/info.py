"""``leansvm info``: a model file described (kernel, parameters, classes, support vectors)."""

from __future__ import annotations

from leansvm.cli.common import HelpFormatter

import scipy.sparse as sp

from leansvm import io


EPILOG = """examples:
  leansvm info train.model
  leansvm info model.npz"""


def add_parser(sub):
    p = sub.add_parser("info", help="describe a model file", description="Describe a model file.",
                       epilog=EPILOG, formatter_class=HelpFormatter)
    p.add_argument("model", metavar="MODEL", help="LIBSVM model file or leansvm .npz")
    p.set_defaults(func=run)


def run(args) -> int:
    native = io.is_native_model_file(args.model)
    model = io.load_model(args.model) if native else io.load_libsvm_model(args.model)
    prep, model = io.split_preprocessing(model)      # a table's columns or a scaling, then the kernel model
    kernel = model.expansion_.kernel
    params = {"rbf": ["gamma"], "poly": ["gamma", "degree", "coef0"],
              "sigmoid": ["gamma", "coef0"]}.get(kernel.name, [])
    described = ", ".join(f"{p} = {getattr(kernel, p):.17g}" for p in params)
    classes = model.classes_.tolist() if hasattr(model, "classes_") else None
    n_support = getattr(model, "n_support_", None) if classes is not None else None
    print(f"model: {args.model} ({'leansvm native' if native else 'LIBSVM'} format, "
          f"{type(model).__name__}{' with preprocessing' if prep is not None else ''})")
    if hasattr(prep, "feature_names_in_"):
        print(f"input columns: {', '.join(map(str, prep.feature_names_in_))}")
    if prep is not None:
        print(f"preprocessing: {prep.describe()}")
    print(f"svm type: {io.libsvm.svm_type_of(model)}")
    print(f"kernel: {kernel.name}" + (f" ({described})" if described else ""))
    if classes is not None:
        print(f"classes: {len(classes)} ({' '.join(io.libsvm.format_label(c) for c in classes)})")
        print(f"multi-class: {model.multiclass_}, {model.expansion_.n_outputs} output(s)")
    line = f"support vectors: {model.expansion_.n_support}"
    if n_support is not None:
        line += " (" + ", ".join(f"{io.libsvm.format_label(c)}: {n}" for c, n in zip(classes, n_support.tolist())) + ")"
    print(line)
    print(f"n_features: {getattr(model, 'n_features_in_', 'not stored (precomputed kernel)')}")
    sparse = sp.issparse(model.expansion_.support_vectors)
    print(f"support vector storage: {'sparse (CSR)' if sparse else 'dense'}")
    print(f"probability estimates: {'yes' if getattr(model, 'probA_', None) is not None else 'no'}")
    return 0
