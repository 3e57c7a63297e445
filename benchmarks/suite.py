"""The benchmark suite: one entry point for every capability's benchmark, and the results page.

    python benchmarks/suite.py list                       # capabilities, their scripts and results
    python benchmarks/suite.py run exact-training         # one capability (its full command)
    python benchmarks/suite.py run --quick headline       # the headline group, small versions
    python benchmarks/suite.py run --dry-run all          # print the commands only
    python benchmarks/suite.py report                     # BENCHMARKS.md and README's blocks

Each capability is a script in its capability's folder (exact/, screening/, budget/,
compression/, main_job/, deploy/; shared loading in ``leansvm.datasets`` and ``common.py``, shared
timing, tables and result files in ``common.py``) with the command line that produced the
figures BENCHMARKS.md quotes; ``--quick`` runs a smaller version where the script has one
(a smoke test: its files go to a temporary folder, never to the page). Every run writes a JSON file under
``benchmarks/results/`` (named by the script's ``--name`` or its own prefix), and ``report``
regenerates BENCHMARKS.md and README's generated blocks from those files
(``benchmarks/report.py``). Groups: ``headline`` (the sections of BENCHMARKS.md),
``methods`` (each method's page under docs/methods), ``studies`` (ablations and oracle
bounds behind a design choice) and ``all``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Capability:
    name: str
    group: str                  # headline, methods or studies
    what: str
    args: tuple                 # script and arguments of the full run
    quick: tuple = ()           # script and arguments of a small version (empty: the script has none)
    results: str = ""           # prefix of its files under benchmarks/results/

    def command(self, quick: bool) -> list[str]:
        args = self.quick if quick and self.quick else self.args
        return [sys.executable, str(HERE / args[0]), *args[1:]]


_IRWLS = ("exact/bench_irwls.py", "--q", "128", "--shrinking", "1")
CAPABILITIES = [
    Capability("exact-training", "headline", "leansvm.SVC against LIBSVM and scikit-learn-intelex, 1 and 2 threads",
               _IRWLS + ("--datasets", "wdbc,banana,page-blocks0,twonorm,satimage,magic,letter,a9a",
                         "--n-jobs", "1,-1", "--cache-size", "200", "--intelex", "--repeat", "5", "--name", "irwls-final"),
               _IRWLS + ("--datasets", "wdbc,banana", "--n-jobs", "1"), "irwls-final"),
    Capability("kernel-cache-200", "headline", "SVC at the default 200 MB kernel cache (beside kernel-cache-1000)",
               _IRWLS + ("--datasets", "magic,letter,a9a", "--n-jobs", "1,2", "--no-libsvm", "--repeat", "2",
                         "--cache-size", "200", "--name", "irwls-cache200"), (), "irwls-cache200"),
    Capability("kernel-cache-1000", "headline", "SVC at a 1000 MB kernel cache",
               _IRWLS + ("--datasets", "magic,letter,a9a", "--n-jobs", "1,2", "--no-libsvm", "--repeat", "2",
                         "--cache-size", "1000", "--name", "irwls-cache1000"), (), "irwls-cache1000"),
    Capability("main-job-promise", "headline", "leansvm fit's promised drop against the realised test drop",
               ("main_job/bench_main_job.py",), ("main_job/bench_main_job.py", "--datasets", "banana", "--seeds", "1"), "main-job"),
    Capability("main-job-scale", "headline", "leansvm fit at 200k-1M rows under a time budget beside Nystroem",
               ("main_job/bench_main_job_scale.py",), ("main_job/bench_main_job_scale.py", "--datasets", "synth-200k",
                                              "--budget-seconds", "300"), "main-job-scale"),
    Capability("compression-speed", "headline", "one L-BFGS iteration of compression against the GEMM rate",
               ("compression/bench_compression_speed.py",), ("compression/bench_compression_speed.py", "--shapes", "15216x10x156",
                                                 "--repeats", "2"), "compression-speed"),
    Capability("prediction", "headline", "one-row latency and batch throughput of every family against LIBSVM, "
               "ONNX Runtime, skl2onnx and the GEMM floor; a new process's first fit",
               ("deploy/bench_predict.py",), ("deploy/bench_predict.py", "--sets", "iris", "--families", "--calls", "200",
                                              "--starts", "1"), "prediction"),
    Capability("predict-engine", "methods", "prediction on LIBSVM's own model: leansvm's engine against LIBSVM's",
               ("exact/bench_libsvm_side_by_side.py", "--predict-only"), ("exact/bench_libsvm_side_by_side.py", "--predict-only",
                                                                   "--datasets", "banana"), "predict-only"),
    Capability("compression", "methods", "compressed SVMs: accuracy against size, test-time cost",
               ("compression/bench_compression.py",), (), "compression"),
    Capability("bsgd", "methods", "budgeted SGD with multi-merge: the paper's table and figures, peers",
               ("budget/bench_bsgd.py",), ("budget/bench_bsgd.py", "--quick"), "bsgd"),
    Capability("bsgd-regression", "methods", "BSGDRegressor against exact SVR, Nystroem + Ridge and LinearSVR",
               ("budget/bench_bsgd_regression.py", "--sets", "friedman1-10k", "friedman1-50k"),
               ("budget/bench_bsgd_regression.py", "--sets", "friedman1-10k"), "bsgd-regression"),
    Capability("bsgd-one-class", "methods", "BSGDOneClassSVM against the exact one-class SVM and Nystroem + SGDOneClassSVM",
               ("budget/bench_bsgd_one_class.py",), ("budget/bench_bsgd_one_class.py", "--sets", "satimage"), "bsgd-one-class"),
    Capability("budget-svm", "methods", "budget-L1/L2 SVM (Dekel & Singer): the paper's experiment",
               ("budget/bench_budget_svc.py",), ("budget/bench_budget_svc.py", "--problems", "5"), "budget-svc"),
    Capability("screening-paths", "methods", "safe screening, C paths and SVCCV against LIBSVM",
               ("screening/bench_path.py",), ("screening/bench_path.py", "--parts", "cv"), "path"),
    Capability("regression-novelty", "methods", "SVR, NuSVR, OneClassSVM, NuSVC against LIBSVM and intelex",
               ("exact/bench_regression.py",), (), "regression"),
    Capability("main-job-recipe", "headline", "the main job's exact model against LIBSVM's recipe and SVC() defaults",
               ("main_job/bench_recipe.py",), ("main_job/bench_recipe.py", "--datasets", "wdbc", "digits"), "recipe"),
    Capability("wide-cheap-models", "methods", "cheap models on wide, many-class rows: the objective's cost by width "
               "and classes, the families at 1/5 of the exact model", ("reduced/bench_wide.py",),
               ("reduced/bench_wide.py", "--parts", "objective"), "wide"),
    Capability("main-job-recipe-budget", "headline", "the main job under a time budget against LIBSVM's recipe under it",
               ("main_job/bench_recipe.py", "--datasets", "pixels-60k", "--budget-seconds", "600"),
               ("main_job/bench_recipe.py", "--datasets", "pixels-2k", "--budget-seconds", "60"), "budgeted-recipe"),
    Capability("model-selection", "methods", "the main job's (C, gamma) choice against grid.py",
               ("main_job/bench_model_selection.py",), (), "model-selection"),
    Capability("dask", "methods", "Dask prediction, budget training and model selection",
               ("deploy/bench_distributed.py",), ("deploy/bench_distributed.py", "--rows", "1000000"), "distributed"),
    Capability("onnx", "methods", "ONNX export: onnxruntime against leansvm and scikit-learn", ("deploy/bench_onnx.py",),
               (), "onnx"),
    Capability("memory", "methods", "peak memory of the exact solver against LIBSVM", ("exact/bench_memory.py", "--peer"),
               ("exact/bench_memory.py", "--n", "20k"), "memory"),
    Capability("tables", "methods", "leansvm fit on tables with raw scales, categories, missing values",
               ("main_job/bench_tabular.py",), (), "tabular"),
    Capability("reduced", "methods", "ReducedSVC against the exact SVC and Nystroem + LinearSVC of its size",
               ("reduced/bench_reduced.py",), ("reduced/bench_reduced.py", "--sets", "magic:50"), "reduced"),
    Capability("reduced-dask", "methods", "ReducedSVC over Dask workers against the same fit in memory",
               ("deploy/bench_reduced_dask.py",), ("deploy/bench_reduced_dask.py", "--set", "synth-20k"), "reduced-dask"),
    Capability("first-run", "methods", "a new user's install and first fits, with the shipped machine code",
               ("exact/bench_first_run.py",), (), "first-run"),
    Capability("small-grid", "headline", "the gallery's iris grid (169 cells): LIBSVM against leansvm, one thread",
               ("exact/bench_small_grid.py",), ("exact/bench_small_grid.py", "--repeat", "1"), "small-grid"),
    Capability("exact-wide", "methods", "leansvm.SVC on wide dense rows (pixels-10k, 784 columns) against LIBSVM and "
               "scikit-learn-intelex, 1 and 2 threads",
               (*_IRWLS, "--datasets", "pixels-10k", "--n-jobs", "1,-1", "--cache-size", "200", "--intelex", "--repeat", "2",
                "--name", "exact-wide"),
               (*_IRWLS, "--datasets", "pixels-2k", "--n-jobs", "1,-1", "--intelex", "--name", "exact-wide"), "exact-wide"),
    Capability("compiled-targets", "methods", "the shipped baseline machine code against native code, per hot loop",
               ("exact/bench_compiled_targets.py",),
               ("exact/bench_compiled_targets.py", "--sets", "wdbc,banana", "--rounds", "1"), "compiled-targets"),
]
STUDIES = ["budget/bench_bsgd_oracle.py", "screening/bench_screening_oracle.py", "main_job/bench_grid_oracle.py", "main_job/bench_choice_noise.py",
           "main_job/bench_fit_points.py", "budget/bench_budget_refit.py", "exact/bench_irwls_threads.py", "compression/bench_compression_threads.py",
           "budget/bench_bsgd_margin.py", "exact/bench_nu_svc_tolerance.py", "exact/bench_scaling.py", "main_job/bench_search.py",
           "exact/bench_thundersvm.py", "main_job/bench_fit.py", "main_job/bench_fit_regression.py", "main_job/bench_carry_regression.py",
           "main_job/bench_svr_search.py", "main_job/bench_fit_novelty.py",
           "compression/bench_compression_regression.py",
           "screening/bench_svr_path.py", "screening/bench_one_class_path.py", "screening/bench_linear_screening.py",
           "compression/bench_compression_start.py", "budget/bench_landmark_svr.py", "deploy/bench_dask_worker_env.py"]
CAPABILITIES += [Capability(Path(s).stem.removeprefix("bench_").replace("_", "-"), "studies",
                            "an ablation or oracle bound (see its docstring)", (s,)) for s in STUDIES]
GROUPS = ("headline", "methods", "studies", "all")


def select(names) -> list[Capability]:
    """The capabilities named (or of the groups named), in the registry's order."""
    by_name = {c.name: c for c in CAPABILITIES}
    unknown = [n for n in names if n not in by_name and n not in GROUPS]
    if unknown:
        raise SystemExit(f"unknown capability or group: {', '.join(unknown)} (see: python benchmarks/suite.py list)")
    return [c for c in CAPABILITIES if c.name in names or c.group in names or "all" in names]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("list", help="the capabilities, their groups and commands")
    run = sub.add_parser("run", help="run capabilities or groups, then regenerate the results page")
    run.add_argument("names", nargs="+", help=f"capability names or groups ({', '.join(GROUPS)})")
    run.add_argument("--quick", action="store_true", help="the small version where a script has one")
    run.add_argument("--dry-run", action="store_true", help="print the commands only")
    sub.add_parser("report", help="regenerate BENCHMARKS.md and README's generated blocks")
    args = parser.parse_args(argv)
    if args.action == "list":
        for c in CAPABILITIES:
            print(f"{c.name:22} {c.group:9} {c.what}\n{'':32} {shlex.join(['python', 'benchmarks/' + c.args[0], *c.args[1:]])}")
        return 0
    if args.action == "run":
        env = dict(os.environ)
        if args.quick:              # a smoke run: its files go elsewhere and the page is left as it is
            env["LEANSVM_BENCH_RESULTS"] = tempfile.mkdtemp(prefix="leansvm-bench-quick-")
            print(f"quick runs write their results to {env['LEANSVM_BENCH_RESULTS']}")
        failed = []
        for c in select(args.names):
            command = c.command(args.quick)
            print(f"== {c.name}: {shlex.join(command)}", flush=True)
            if not args.dry_run and subprocess.run(command, cwd=HERE.parent, env=env).returncode != 0:
                failed.append(c.name)
        if failed:
            print(f"failed: {', '.join(failed)}", file=sys.stderr)
            return 1
        if args.dry_run or args.quick:
            return 0
    sys.path.insert(0, str(HERE))
    import report

    return report.main([])


if __name__ == "__main__":
    raise SystemExit(main())
