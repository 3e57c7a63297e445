"""``leansvm compress``: a model compressed to fewer support vectors (Xu et al.'s CVM)."""

from __future__ import annotations

import time
import numpy as np
from sklearn.base import is_regressor

from leansvm import io
from leansvm.cli.common import (HelpFormatter, _add_zero_based, _equal_labels, load_any_model, load_data, match_features,
                                add_share_option, save_any_model, share_from, UsageError)


EPILOG = """examples:
  leansvm compress train.model small.model --ratio 0.05 --data train.txt
  leansvm compress model.npz small.npz --n-sv 100"""


def add_parser(sub):
    p = sub.add_parser("compress", help="compress a model to fewer support vectors (Xu et al. CVM)",
                       description="Compress MODEL (LIBSVM file or .npz) to at most N learned support "
                                   "vectors and write OUT (LIBSVM format; native if *.npz).",
                       epilog=EPILOG, formatter_class=HelpFormatter)
    p.add_argument("model", metavar="MODEL", help="LIBSVM model file or leansvm .npz")
    p.add_argument("output", metavar="OUT", help="compressed model file to write")
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--n-sv", type=int, metavar="N", help="number of support vectors to keep")
    size.add_argument("--ratio", type=float, metavar="R", help="fraction of the support vectors to keep")
    add_share_option(size, "--max-accuracy-drop", None, "the smallest model within this accuracy drop of the full "
                     "model's on --data (classifiers, one-class models)", "points")
    add_share_option(size, "--max-error-increase", None, "regression: the smallest model whose RMSE on --data is at "
                     "most this much above the full model's", "percent")
    p.add_argument("--data", "--validation", dest="data", metavar="DATA",
                   help="validation/fitting data (svmlight file or dataset name, test part)")
    p.add_argument("--method", choices=("cvm", "lars"), default="cvm",
                   help="cvm: LARS-SVM + gradient support vectors; lars: selection only")
    p.add_argument("--max-iter", type=int, default=None,
                   help="L-BFGS iterations (default: 100-3000, fewer for larger problems)")
    p.add_argument("--layout", choices=("shared", "libsvm"), default=None,
                   help="multi-class one-vs-one: every vector serves every pair (shared) or only its "
                        "class's pairs (libsvm) (default: libsvm for LIBSVM files, shared for *.npz)")
    p.add_argument("--loss", choices=("margin", "squared"), default="margin",
                   help="gradient step: outputs matched up to the margin (margin) or exactly (squared)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    _add_zero_based(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from leansvm.compression.compressed_svc import compress

    drop, increase = share_from(args, "--max-accuracy-drop", "compress"), share_from(args, "--max-error-increase",
                                                                                    "compress")
    if (drop is not None or increase is not None) and args.data is None:
        option = "--max-accuracy-drop" if drop is not None else "--max-error-increase"
        raise UsageError(f"leansvm compress: error: {option} needs --data")
    preprocessor, model = io.split_preprocessing(load_any_model(args.model))   # compress the kernel model
    X = y = None
    if args.data is not None:
        X, y, _, _ = load_data(args.data, "test", args)
        model, X = match_features(model, X if preprocessor is None else preprocessor.transform(X))
    start = time.perf_counter()
    layout = args.layout or ("shared" if str(args.output).endswith(".npz") else "libsvm")
    small = compress(model, n_sv=args.n_sv, ratio=args.ratio, max_accuracy_drop=drop, max_error_increase=increase,
                     X=X, y=y, method=args.method, max_iter=args.max_iter, random_state=0, layout=layout,
                     loss=args.loss)
    elapsed = time.perf_counter() - start
    save_any_model(small if preprocessor is None else io.with_preprocessing(preprocessor, small), args.output)
    if not args.quiet:
        print(f"compressed {small.full_n_support_} -> {small.expansion_.n_support} support vectors "
              f"({args.method}, {elapsed:.2f} s)")
        if X is not None and is_regressor(model):
            rmse = [float(np.sqrt(np.mean((m.predict(X) - y) ** 2))) for m in (model, small)]
            print("RMSE on %s: full %.4g, compressed %.4g" % (args.data, *rmse))
        elif X is not None:      # classifiers; one-class models against +1 / -1 labels
            accuracy = [float(np.mean(_equal_labels(m.predict(X), y))) for m in (model, small)]
            print("accuracy on %s: full %.4f, compressed %.4f" % (args.data, *accuracy))
        print(f"model written to {args.output}")
    return 0
