"""Save every kind of model on fixed data, and compare two such snapshots bit for bit.

A refactoring that must not change behaviour (the problem layer and
the package layout, for example) is checked by running ``save`` on the old and on the new
code and ``compare`` on the two folders:

    python benchmarks/model_snapshot.py save /tmp/before      # old checkout
    python benchmarks/model_snapshot.py save /tmp/after       # new checkout
    python benchmarks/model_snapshot.py compare /tmp/before /tmp/after

Models (public API only, so that the script runs on both sides): ``SVC``,
``svm_path`` (both bias modes), ``SVCCV``, ``BSGDClassifier``, ``BudgetSVC``
and ``compress`` on banana, satimage (6 classes) and the first 3,000 rows of
a9a (sparse; skipped, and said so, when its file is not found). Each model is
written with :func:`leansvm.io.save_model`, and its decision values on the
test rows beside it; ``compare`` requires every array to be identical.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

import leansvm
from leansvm import datasets
from leansvm.io import save_model

A9A_ROWS = 3000


def _sets():
    sets = {name: datasets.load(name) for name in ("banana", "satimage")}
    try:
        a9a = datasets.load("a9a")
    except FileNotFoundError as exc:
        print(f"a9a skipped: {exc}", file=sys.stderr)
    else:
        sets["a9a-3k"] = datasets.Dataset("a9a-3k", a9a.X_train[:A9A_ROWS], a9a.y_train[:A9A_ROWS],
                                          a9a.X_test[:A9A_ROWS], a9a.y_test[:A9A_ROWS], a9a.C, a9a.gamma)
    return sets


def _models(ds):
    """(name, fitted model) for every trainer on one dataset."""
    X, y, C, gamma = ds.X_train, ds.y_train, ds.C, ds.gamma
    svc = leansvm.SVC(C=C, gamma=gamma, random_state=0).fit(X, y)
    yield "svc", svc
    for bias in (True, "equality"):
        screening = "it" if bias is True else "gap"
        path = leansvm.svm_path(X, y, [C / 8, C / 2, C], gamma=gamma, fit_intercept=bias, screening=screening)
        for k, model in enumerate(path.models):
            yield f"path-{screening}-{k}", model
    cv = leansvm.SVCCV(Cs=[C / 4, C], gammas=[gamma / 2, gamma], cv=3).fit(X, y)
    yield "svccv", cv.best_estimator_
    yield "bsgd", leansvm.BSGDClassifier(budget=100, C=C, gamma=gamma, random_state=0).fit(X, y)
    yield "budget-svc", leansvm.BudgetSVC(budget=50, C=C, gamma=gamma).fit(X, y)
    n_sv = max(10, svc.expansion_.n_support // 10)
    yield "compressed", leansvm.compress(svc, n_sv=n_sv, X=X, y=y, random_state=0)


def save(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, ds in _sets().items():
        for kind, model in _models(ds):
            stem = folder / f"{name}.{kind}"
            save_model(model, f"{stem}.npz")
            np.save(f"{stem}.decision.npy", np.asarray(model.decision_function(ds.X_test)))
            print(f"saved {stem.name}", flush=True)


def _arrays(path: Path) -> dict:
    if path.suffix == ".npy":
        return {"values": np.load(path)}
    with np.load(path, allow_pickle=False) as z:
        return {key: z[key] for key in z.files}


def compare(before: Path, after: Path) -> int:
    names = sorted(p.name for p in before.iterdir())
    missing = sorted(set(names) ^ {p.name for p in after.iterdir()})
    differ = []
    for name in names:
        if name in missing:
            continue
        a, b = _arrays(before / name), _arrays(after / name)
        if a.keys() != b.keys():
            differ.append(f"{name}: keys {sorted(a)} vs {sorted(b)}")
            continue
        for key in a:
            if a[key].dtype != b[key].dtype or a[key].shape != b[key].shape or a[key].tobytes() != b[key].tobytes():
                differ.append(f"{name}[{key}]")
    print(json.dumps({"files": len(names), "missing": missing, "differ": differ}, indent=1))
    return 1 if missing or differ else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("save").add_argument("folder", type=Path)
    cmp = sub.add_parser("compare")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "save":
        save(args.folder)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
