"""``leansvm path``: a regularisation path over C with safe sample screening (Ogawa et al.)."""

from __future__ import annotations

import time
import numpy as np

from leansvm.cli.common import HelpFormatter, UsageError, _add_zero_based, load_data


EPILOG = """examples:
  leansvm path heart_scale --c-min 0.01 --c-max 100 --n-c 20
  leansvm path banana --screening gap --dynamic"""


def add_parser(sub):
    p = sub.add_parser("path", help="regularisation path over C with safe sample screening",
                       description="Fit one model per C (log-spaced, smallest first) with warm start and "
                                   "safe screening (Ogawa et al.); print C, #SV, screening rate, times "
                                   "and, with a test set, accuracy.",
                       epilog=EPILOG, formatter_class=HelpFormatter)
    p.add_argument("data", metavar="DATA", help="svmlight/LIBSVM data file, or a named dataset")
    p.add_argument("--test", metavar="TEST", help="test data (default: a named dataset's test part)")
    p.add_argument("--kernel", choices=("linear", "poly", "rbf", "sigmoid"), default="rbf")
    p.add_argument("--gamma", default=None, help="kernel gamma (default: the dataset's, else 'scale')")
    p.add_argument("--c-min", type=float, default=1e-2)
    p.add_argument("--c-max", type=float, default=1e2)
    p.add_argument("--n-c", type=int, default=20, help="number of C values")
    p.add_argument("--screening", choices=("it", "bt1", "bt2", "gap", "none"), default="it")
    p.add_argument("--dynamic", action="store_true", help="also screen during each solve (duality-gap rule)")
    p.add_argument("--tol", type=float, default=1e-3)
    _add_zero_based(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from leansvm.paths.model_selection import default_C_grid, svm_path

    if not (0 < args.c_min <= args.c_max) or args.n_c < 1:
        raise UsageError("leansvm path: error: need 0 < --c-min <= --c-max and --n-c >= 1")
    X, y, description, ds = load_data(args.data, "train", args)
    test = load_data(args.test, "test", args)[:2] if args.test else (
        (ds.X_test, np.asarray(ds.y_test)) if ds is not None else None)
    gamma = args.gamma if args.gamma is not None else (ds.gamma if ds is not None else "scale")
    gamma = gamma if gamma in ("scale", "auto") else float(gamma)
    Cs = default_C_grid(args.n_c, args.c_min, args.c_max) if args.n_c > 1 else [args.c_min]
    screening = None if args.screening == "none" else args.screening
    start = time.perf_counter()
    path = svm_path(X, y, Cs, kernel=args.kernel, gamma=gamma, screening=screening, tol=args.tol,
                    dynamic=args.dynamic)
    print(f"{description}: {X.shape[0]} samples, kernel {args.kernel}, gamma {path.models[0]._gamma:g}, "
          f"screening {args.screening}, {time.perf_counter() - start:.2f} s in all")
    print(f"{'C':>10} {'#SV':>7} {'screened':>9} {'rule s':>8} {'solve s':>8}" + ("  accuracy" if test else ""))
    for model, C, m, rate, t_rule, t_solve in zip(path.models, path.Cs, path.n_support, path.screening_rate,
                                                 path.rule_seconds, path.solve_seconds):
        acc = f"  {model.score(*test):8.4f}" if test else ""
        print(f"{C:10.4g} {m:7d} {rate:9.1%} {t_rule:8.3f} {t_solve:8.3f}{acc}")
    return 0
