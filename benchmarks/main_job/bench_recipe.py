"""The main job's exact model against LIBSVM's own recipe and against ``SVC()`` defaults.

    python benchmarks/main_job/bench_recipe.py [--datasets wdbc digits ...] [--recipe-max-rows 6000]

LIBSVM's practical guide (Hsu, Chang & Lin) is what a LIBSVM user already does: scale every
feature linearly to [-1, 1] (``svm-scale``), choose (C, gamma) by ``grid.py`` (C = 2^-5 .. 2^15,
gamma = 2^-15 .. 2^3, steps of 2^2, 5-fold CV), train on every training row. Here, per set (its raw
columns, ``leansvm.datasets.load(name, standardize=False)``; ``digits``: scikit-learn's
``load_digits``, a stratified 70/30 split, random_state 0):

* **recipe**: svm-scale to [-1, 1] fitted on the training rows, scikit-learn's ``SVC`` (LIBSVM)
  in ``GridSearchCV`` over grid.py's 110 cells (``StratifiedKFold(5, shuffle=True,
  random_state=0)``, one job), refit on every training row; only on sets of at most
  ``--recipe-max-rows`` training rows (its time grows with the square of the rows and more);
* **SVC() defaults** (C = 1, gamma = 'scale') on the same scaled rows;
* **the job's exact model** at each of the job's scalings: its search
  (:func:`leansvm.paths.search.wide_search`, K = 5, no time limit, as ``fit_lean`` runs it without a
  budget), then ``leansvm.SVC`` at the chosen cell on every training row; and which of them
  ``fit_lean``'s default, ``scale="auto"``, takes (``leansvm.job.data.choose_scaling``: the
  search's first round under each): 'auto_choice'. The job's exact model is that scaling's.
  ``--choices-for FILE`` adds 'auto_choice' to the rows of an earlier run (the search and the
  choice depend on the data alone, not on the clock), written as a new results file.

With ``--budget-seconds S`` (the sets too large for the recipe's full grid), both sides under the same
budget instead: the recipe as its users run it on large data, grid.py's grid on a stratified subsample
doubled from 50 rows per class while the next doubling (4 times the last grid's time) and the refit
(the last subsample's refit time scaled by the rows squared) fit the budget, then the refit on the
largest subsample whose estimate fits what is left (every row where it fits); and the whole
``fit_lean`` with ``budget_seconds=S``: its exact model and its returned model. ``SVC()`` defaults
beside them at no budget (by ``leansvm.SVC`` on sets over ``--libsvm-max-rows`` rows: the same dual
problem and optimum, the accuracy the same within the solver's tolerance).

``--equal-rows-for FILE`` (a budgeted run's file): the recipe's cell trained on the job's own fit rows
(its validation part held out, as the job's exact model is; svm-scale's ranges) and tested, so the
two exact models compare at equal rows; and the job's cell trained on every training row (under the
scaling the job chose), as the recipe refits: the other way to compare at equal rows. Written as a
new results file with the rows otherwise as they were (what a row already has is not run again).

``--recipe-max-rows 0`` runs the job's side of the full table only; the report keeps the recipe's
side from each set's earlier row (LIBSVM's, which the job's code does not change) and names its file.

With ``--whole-job``, the whole ``leansvm.fit_lean`` too (its defaults, no time budget, on the raw
columns): the model it returns (kind, support vectors, test accuracy, seconds).

Each side is tested on the set's test part: accuracy, support vectors, seconds (one thread for the
recipe; the search and the fit on every core).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import finish_run  # noqa: E402

SETS = ["wdbc", "digits", "splice", "banana", "page-blocks0", "mushroom", "optdigits", "satimage", "twonorm",
        "penbased", "magic", "letter", "a9a"]
#: grid.py's default grid (its -log2c -5,15,2 and -log2g 3,-15,-2)
GRID_C = [2.0 ** k for k in range(-5, 16, 2)]
GRID_GAMMA = [2.0 ** k for k in range(3, -16, -2)]


def load(name):
    """(X_train, y_train, X_test, y_test) in the set's raw units."""
    if name == "digits":
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split

        X, y = load_digits(return_X_y=True)
        X_train, X_test, y_train, y_test = train_test_split(X.astype(float), y, test_size=0.3, stratify=y,
                                                            random_state=0)
        return X_train, y_train, X_test, y_test
    from leansvm import datasets

    d = datasets.load(name, standardize=False)
    return d.X_train, np.asarray(d.y_train), d.X_test, np.asarray(d.y_test)


def svm_scale(X_train, X_test):
    """svm-scale -l -1 -u 1, fitted on the training rows (sparse rows: the same map, densified)."""
    from leansvm.preprocessing.scaling import FeatureScaler

    scaler = FeatureScaler.to_range(X_train, -1.0, 1.0)
    return scaler.transform(X_train), scaler.transform(X_test)


class _Quiet:
    """A job log that keeps nothing (the stages' own functions run outside a job here)."""
    clock = staticmethod(time.perf_counter)

    def step(self, *args, **kwargs):
        pass

    def say(self, *args, **kwargs):
        pass


def job_scaled(X_train, X_test, scaling):
    """The rows as ``fit_lean`` scales them with ``scale=scaling`` (its stage 1)."""
    from leansvm.job.data import scale_features

    X, X_test, _ = scale_features(X_train, X_test, scaling, _Quiet())
    return X, X_test


def recipe(X, y, X_test, y_test):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC

    start = time.perf_counter()
    grid = GridSearchCV(SVC(cache_size=200), {"C": GRID_C, "gamma": GRID_GAMMA},
                        cv=StratifiedKFold(5, shuffle=True, random_state=0), n_jobs=1).fit(X, y)
    model = grid.best_estimator_
    return {"recipe_C": grid.best_params_["C"], "recipe_gamma": grid.best_params_["gamma"],
            "recipe_cv": float(grid.best_score_), "recipe_test": float(model.score(X_test, y_test)),
            "recipe_n_sv": int(model.n_support_.sum()), "recipe_seconds": time.perf_counter() - start}


def recipe_within(X, y, X_test, y_test, budget):
    """The recipe under ``budget`` seconds (module docstring): grid.py's grid on doubling stratified
    subsamples, then the refit on as many rows as the time left is estimated to allow."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC

    from leansvm.job.helpers import _subsample

    start, n = time.perf_counter(), X.shape[0]
    rows = min(n, 50 * np.unique(y).size)
    while True:
        t0 = time.perf_counter()
        X_s, y_s = _subsample(X, y, rows, 0)
        grid = GridSearchCV(SVC(cache_size=200), {"C": GRID_C, "gamma": GRID_GAMMA},
                            cv=StratifiedKFold(5, shuffle=True, random_state=0), n_jobs=1).fit(X_s, y_s)
        grid_seconds, fit_seconds = time.perf_counter() - t0, grid.refit_time_
        refit_estimate = fit_seconds * (n / rows) ** 2
        if 2 * rows > n or time.perf_counter() - start + 4 * grid_seconds + 4 * fit_seconds + min(
                refit_estimate, budget / 2) > budget:
            break
        rows *= 2
    left = budget - (time.perf_counter() - start)
    fit_rows = int(min(n, rows * np.sqrt(max(left, 0.0) / max(fit_seconds, 1e-9))))
    X_f, y_f = _subsample(X, y, fit_rows, 0)
    model = SVC(cache_size=200, **grid.best_params_).fit(X_f, y_f)
    return {"recipe_C": grid.best_params_["C"], "recipe_gamma": grid.best_params_["gamma"],
            "recipe_cv": float(grid.best_score_), "recipe_test": float(model.score(X_test, y_test)),
            "recipe_n_sv": int(model.n_support_.sum()), "recipe_seconds": time.perf_counter() - start,
            "recipe_grid_rows": int(rows), "recipe_fit_rows": int(X_f.shape[0]), "recipe_budget": budget}


def defaults(X, y, X_test, y_test, libsvm_max_rows=None):
    from sklearn.svm import SVC

    by = "LIBSVM"
    if libsvm_max_rows is not None and X.shape[0] > libsvm_max_rows:
        from leansvm import SVC
        by = "leansvm.SVC"
    start = time.perf_counter()
    model = SVC(C=1.0, gamma="scale").fit(X, y)
    right = model.predict(X_test) == y_test
    return {"defaults_test": float(right.mean()), "defaults_n_sv": int(model.n_support_.sum()),
            "defaults_seconds": time.perf_counter() - start, "defaults_by": by, "defaults_right": right}


def paired(right, other) -> dict:
    """The test accuracy difference of two models on the same rows and its paired standard error."""
    diff = np.asarray(right, float) - np.asarray(other, float)
    return {"vs_defaults": float(diff.mean()), "vs_defaults_se": float(diff.std(ddof=1) / np.sqrt(diff.size))}


def job_exact(X, y, X_test, y_test, scaling):
    from leansvm import SVC
    from leansvm.paths.search import wide_search

    start = time.perf_counter()
    found = wide_search(X, y, n_folds=5, progress=False)
    search = time.perf_counter() - start
    model = SVC(C=found.C, gamma=found.gamma).fit(X, y)
    right = model.predict(X_test) == y_test
    return {f"{scaling}_C": found.C, f"{scaling}_gamma": found.gamma, f"{scaling}_cv": found.accuracy,
            f"{scaling}_test": float(right.mean()), f"{scaling}_n_sv": int(model.n_support_.sum()),
            f"{scaling}_right": right,
            f"{scaling}_search_seconds": search, f"{scaling}_seconds": time.perf_counter() - start}


def whole_job(X, y, X_test, y_test, budget=None):
    from leansvm import fit_lean

    start = time.perf_counter()
    result = fit_lean(X, y, X_test=X_test, y_test=y_test, verbose=False, budget_seconds=budget)
    final, exact = result.final or result.chosen, result.exact
    row = {"job_returned": final.name, "job_returned_n_sv": int(final.n_support),
           "job_returned_test": float(np.mean(result.model.predict(X_test) == y_test)),
           "job_seconds": time.perf_counter() - start, "job_budget": budget,
           "job_C": result.params.get("C"), "job_gamma": result.params.get("gamma"),
           "job_search_rows": None if result.selection is None else int(result.selection.n_samples),
           "job_steps": [(s.stage, s.choice, round(s.seconds, 1)) for s in result.steps]}
    if exact is not None:
        row.update(job_exact_name=exact.name, job_exact_n_sv=int(exact.n_support),
                   job_exact_test=None if exact.test_accuracy is None else float(exact.test_accuracy))
    return row


def auto_choice(X_train, y_train):
    from leansvm.job.data import choose_scaling, working_form
    from leansvm.preprocessing.scaling import FeatureScaler

    X = working_form(X_train)
    return choose_scaling(lambda name: FeatureScaler(name).fit_transform(X), y_train, _Quiet())


def one_within(name, budget, libsvm_max_rows, recipe_from=None):
    """Both sides under ``budget`` seconds, SVC() defaults beside them (module docstring). ``recipe_from``:
    an earlier budgeted run's file whose row of this set and budget gives the recipe's and the defaults'
    side (LIBSVM's, which the job's code does not change; the same machine), so only the job runs."""
    X_train, y_train, X_test, y_test = load(name)
    row = {"dataset": name, "n_train": int(X_train.shape[0]), "n_features": int(X_train.shape[1]),
           "classes": int(np.unique(y_train).size), "budget_seconds": budget}
    row.update(whole_job(X_train, y_train, X_test, y_test, budget))
    print({k: v for k, v in row.items() if k != "job_steps"}, flush=True)
    if recipe_from is not None:
        import json
        earlier = [r for r in json.loads(Path(recipe_from).read_text())["rows"]
                   if r["dataset"] == name and r["budget_seconds"] == budget]
        if not earlier:
            raise SystemExit(f"{recipe_from} has no row of {name} at {budget:g} s")
        row.update({k: v for k, v in earlier[-1].items() if k.startswith(("recipe", "defaults"))},
                   recipe_from=Path(recipe_from).name)
        return row
    Xs, Xs_test = svm_scale(X_train, X_test)
    if sp.issparse(Xs):
        Xs, Xs_test = Xs.toarray(), Xs_test.toarray()
    row.update(defaults(Xs, y_train, Xs_test, y_test, libsvm_max_rows))
    row.pop("defaults_right")
    print({k: v for k, v in row.items() if k.startswith("defaults")}, flush=True)
    row.update(recipe_within(Xs, y_train, Xs_test, y_test, budget))
    print({k: v for k, v in row.items() if k.startswith("recipe")}, flush=True)
    return row


def recipe_cell_on_job_rows(row) -> float:
    """Test accuracy of ``leansvm.SVC`` at the recipe's (C, gamma) on svm-scale's ranges, trained on the
    rows the job's exact model was trained on (``fit_lean``'s defaults: validation fraction 0.2,
    random_state 0; ``leansvm.SVC``: the same dual problem as LIBSVM's, at every core)."""
    from leansvm import SVC
    from leansvm.job.data import validation_folds

    X_train, y_train, X_test, y_test = load(row["dataset"])
    Xs, Xs_test = svm_scale(X_train, X_test)
    fit, _ = validation_folds(Xs, y_train, 0.2, 0)[0]
    model = SVC(C=row["recipe_C"], gamma=row["recipe_gamma"]).fit(Xs[fit], y_train[fit])
    return float(np.mean(model.predict(Xs_test) == y_test))


def job_cell_on_every_row(row) -> float:
    """Test accuracy of ``leansvm.SVC`` at the job's (C, gamma), under the scaling the job chose
    (``scale='auto'``), trained on every training row: the job's exact model as the recipe's is, refit
    on everything (what the job returns where the exact model is its choice)."""
    from leansvm import SVC

    X_train, y_train, X_test, y_test = load(row["dataset"])
    X, X_t = job_scaled(X_train, X_test, auto_choice(X_train, y_train))
    model = SVC(C=row["job_C"], gamma=row["job_gamma"]).fit(X, y_train)
    return float(np.mean(model.predict(X_t) == y_test))


def one(name, scalings, recipe_max_rows, whole):
    from leansvm.job.data import DEFAULT_SCALING

    X_train, y_train, X_test, y_test = load(name)
    row = {"dataset": name, "n_train": int(X_train.shape[0]), "n_features": int(X_train.shape[1]),
           "classes": int(np.unique(y_train).size), "job_scaling": DEFAULT_SCALING,
           "auto_choice": auto_choice(X_train, y_train)}
    Xs, Xs_test = svm_scale(X_train, X_test)
    if sp.issparse(Xs):
        Xs, Xs_test = Xs.toarray(), Xs_test.toarray()
    row.update(defaults(Xs, y_train, Xs_test, y_test))
    if X_train.shape[0] <= recipe_max_rows:
        row.update(recipe(Xs, y_train, Xs_test, y_test))
    for scaling in scalings:
        Xj, Xj_test = job_scaled(X_train, X_test, scaling)
        row.update(job_exact(Xj, y_train, Xj_test, y_test, scaling))
    if whole:
        row.update(whole_job(X_train, y_train, X_test, y_test))
    if f"{row['auto_choice']}_right" in row:        # the job's exact model against SVC() defaults, row by row
        row.update(paired(row[f"{row['auto_choice']}_right"], row["defaults_right"]))
    row = {k: v for k, v in row.items() if not k.endswith("_right")}
    print(row, flush=True)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=SETS)
    parser.add_argument("--scalings", nargs="+", default=["range", "standard"])
    parser.add_argument("--recipe-max-rows", type=int, default=6000,
                        help="run the recipe's grid only on sets of at most this many training rows")
    parser.add_argument("--whole-job", action="store_true", help="run the whole fit_lean too (no budget)")
    parser.add_argument("--budget-seconds", type=float,
                        help="both sides under this budget: the recipe on the subsample it can afford, the whole job")
    parser.add_argument("--libsvm-max-rows", type=int, default=20000,
                        help="with --budget-seconds: SVC() defaults by LIBSVM up to this many rows, leansvm.SVC above")
    parser.add_argument("--choices-for", metavar="FILE", help="add scale='auto''s choice to an earlier run's rows")
    parser.add_argument("--recipe-from", metavar="FILE",
                        help="with --budget-seconds: the recipe's and SVC()'s side from an earlier run's row of the "
                             "same set and budget (same machine); only the job runs")
    parser.add_argument("--equal-rows-for", metavar="FILE",
                        help="add the recipe's cell trained on the job's fit rows, and the job's cell trained on "
                             "every row, to a budgeted run's rows (what they lack)")
    args = parser.parse_args()
    if args.equal_rows_for:
        import json
        rows = json.loads(Path(args.equal_rows_for).read_text())["rows"]
        for row in rows:
            if "recipe_on_job_rows_test" not in row:
                row.update(recipe_on_job_rows_test=recipe_cell_on_job_rows(row),
                           equal_rows_added_to=Path(args.equal_rows_for).name)
            if "job_cell_on_every_row_test" not in row:
                row.update(job_cell_on_every_row_test=job_cell_on_every_row(row),
                           every_row_added_to=Path(args.equal_rows_for).name)
            print(row["dataset"], row["recipe_on_job_rows_test"], row["job_exact_test"],
                  row["job_cell_on_every_row_test"], flush=True)
        finish_run(rows, [("dataset", "set", "s"), ("recipe_on_job_rows_test", "recipe cell, job rows", ".4f"),
                          ("job_exact_test", "job exact", ".4f"),
                          ("job_cell_on_every_row_test", "job cell, every row", ".4f")], "budgeted-recipe")
        return
    if args.choices_for:
        import json
        rows = json.loads(Path(args.choices_for).read_text())["rows"]
        for row in rows:
            X_train, y_train, _, _ = load(row["dataset"])
            from leansvm.job.data import DEFAULT_SCALING
            row.update(auto_choice=auto_choice(X_train, y_train), job_scaling=DEFAULT_SCALING,
                       choice_added_to=Path(args.choices_for).name)
            print(row["dataset"], row["auto_choice"], flush=True)
        finish_run(rows, [("dataset", "set", "s"), ("auto_choice", "auto", "s")], "recipe")
        return
    if args.budget_seconds:
        rows = [one_within(name, args.budget_seconds, args.libsvm_max_rows, args.recipe_from)
                for name in args.datasets]
        finish_run(rows, [("dataset", "set", "s"), ("budget_seconds", "budget s", ".0f"),
                          ("job_exact_test", "job exact test", ".4f"), ("job_returned_test", "returned test", ".4f"),
                          ("job_returned_n_sv", "#SV", "d"), ("recipe_test", "recipe test", ".4f"),
                          ("recipe_grid_rows", "grid rows", "d"), ("recipe_fit_rows", "fit rows", "d"),
                          ("defaults_test", "SVC() test", ".4f")], "budgeted-recipe")
        return
    rows = [one(name, args.scalings, args.recipe_max_rows, args.whole_job) for name in args.datasets]
    columns = [("dataset", "set", "s"), ("n_train", "rows", "d"), ("n_features", "d", "d"),
               ("classes", "classes", "d"), ("recipe_test", "recipe test", ".4f"), ("recipe_n_sv", "#SV", "d"),
               ("recipe_seconds", "s", ".1f"), ("defaults_test", "SVC() test", ".4f")]
    for scaling in args.scalings:
        columns += [(f"{scaling}_test", f"{scaling} test", ".4f"), (f"{scaling}_n_sv", "#SV", "d"),
                    (f"{scaling}_seconds", "s", ".1f")]
    finish_run(rows, columns, "recipe")


if __name__ == "__main__":
    main()
