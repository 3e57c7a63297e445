"""Every code block of README.md and docs/ runs, as a reader would paste it.

Python blocks (```python) and command blocks (```sh) are collected alike. A block is run in a fresh process, in an empty folder. A block that uses names its page defines
in prose (``X``, ``y``, a fitted ``model``, a ``customers.csv``) says so on the line before its
fence, ``<!-- code: setup=NAME -->``, and runs after :data:`SETUPS`' code of that name: small
data, so the suite stays quick. ``<!-- code: illustration -->`` marks a block that is not run
(none is, so far; :func:`test_few_blocks_are_illustrations` keeps it so). The blocks' own
printed figures are not compared with anything: the figures of the pages are the results page's
(``tests/test_readme_figures.py``).

A command block's lines run one by one in its folder after :data:`COMMAND_FILES` wrote the small
data files the pages name (``train.txt``, ``customers.csv``, ...); ``leansvm ...`` runs in the
process (:func:`leansvm.cli.main`, exit status 0 wanted), other commands as they are written. A named
benchmark dataset (``leansvm fit banana``) is the dataset's first 300 training and 200 test rows,
so the suite stays quick. Blocks of ``make`` and ``pip install`` lines are the set-up itself (CI
runs them): their targets and extras are checked to exist. ``<!-- code: help-only ... -->`` runs
each line with ``--help`` (benchmarks that take minutes). A command written outside a fence (an
indented block) would go untested: :func:`test_commands_are_in_fences` finds it.
"""

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
FENCE = re.compile(r"(?:^<!-- code: (?P<mark>[^>]*?) -->\n)?^```(?P<lang>python|sh)\n(?P<code>.*?)^```", re.S | re.M)
COMMANDS = ("leansvm", "svm-train", "svm-predict", "svm-scale", "python", "pip", "make")

SETUPS = {
    "classification": """
import numpy as np
import leansvm
from sklearn.datasets import make_classification
X_all, y_all = make_classification(1000, n_features=8, n_informative=5, random_state=0)
X, y, X_test, y_test = X_all[:800], y_all[:800], X_all[800:], y_all[800:]
X_new, z = X_test[:5], X[:, 0] + 0.1 * X[:, 1] ** 2
""",
    "regression": """
import numpy as np
import leansvm
from sklearn.datasets import make_friedman1
X_all, y_all = make_friedman1(1200, noise=0.5, random_state=0)
X, y, X_val, y_val = X_all[:1000], y_all[:1000], X_all[1000:], y_all[1000:]
X_new, X_chunk, y_chunk = X_val[:5], X_val[:100], y_val[:100]
svr = leansvm.SVR(C=10, gamma=0.03, epsilon=0.1).fit(X, y)
""",
    "histograms": """
import numpy as np
rng = np.random.default_rng(0)
X, X_new = rng.random((300, 6)), rng.random((5, 6))
y, z = (X[:, 0] > X[:, 1]).astype(int), X.sum(axis=1)
""",
    "normal": """
import numpy as np
rng = np.random.default_rng(0)
X_normal, X_new = rng.normal(size=(400, 3)), rng.normal(size=(5, 3)) * 3
""",
    "customers": """
import numpy as np
import pandas as pd
rng = np.random.default_rng(0)
n = 400
frame = pd.DataFrame({"age": rng.integers(18, 80, n).astype(float), "spend": rng.gamma(2.0, 50.0, n),
                      "visits": rng.poisson(4, n).astype(float), "plan": rng.choice(["basic", "plus", "pro"], n),
                      "region": rng.choice(["north", "south", None], n)})
frame.loc[rng.random(n) < 0.05, "spend"] = np.nan
frame["churned"] = np.where((frame["visits"] < 3) ^ (rng.random(n) < 0.1), "yes", "no")
frame.iloc[:300].to_csv("customers.csv", index=False)
frame.iloc[300:].drop(columns="churned").to_csv("new_customers.csv", index=False)
""",
    "model": """
import leansvm
from leansvm import datasets
data = datasets.load("banana")
model = leansvm.SVC(C=data.C, gamma=data.gamma).fit(data.X_train, data.y_train)
""",
}


COMMAND_FILES = """
import dataclasses
import numpy as np
import leansvm
from leansvm import datasets, io
import pandas as pd
from sklearn.datasets import dump_svmlight_file, make_classification, make_friedman1
from sklearn.metrics.pairwise import rbf_kernel


def dump(X, y, path):
    dump_svmlight_file(X, y, path, zero_based=False)


X, y = make_classification(400, n_features=6, n_informative=4, random_state=0)
for train, test in (("train.txt", "test.txt"), ("a9a.txt", "a9a.t"), ("data.txt", None)):
    dump(X[:300], y[:300], train)
    if test:
        dump(X[300:], y[300:], test)
Xr, yr = make_friedman1(300, noise=0.5, random_state=0)
dump(Xr, yr, "prices.txt")
pd.DataFrame(Xr, columns=[f"x{j}" for j in range(Xr.shape[1])]).assign(price=yr).to_csv("prices.csv", index=False)
rng = np.random.default_rng(0)
dump(rng.normal(size=(300, 3)), np.ones(300), "normal.txt")
dump(np.vstack([rng.normal(size=(90, 3)), 4 + rng.normal(size=(10, 3))]), np.r_[np.ones(90), -np.ones(10)],
     "mixed.txt")
for name, rows in (("kernel-train.txt", slice(0, 300)), ("kernel.txt", slice(0, 300)), ("kernel-test.txt", slice(300, 400))):
    K = rbf_kernel(X[rows], X[:300], gamma=0.1)
    with open(name, "w") as out:
        for i, (label, k) in enumerate(zip(y[rows], K)):
            out.write(f"{label} 0:{i + 1} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(k)) + "\\n")
model = leansvm.SVC(C=10, gamma=0.1, probability=True, random_state=0).fit(X[:300], y[:300])
io.save_model(model, "model.npz")
io.save_libsvm_model(model, "model.txt")
""" + SETUPS["customers"] + """
_load = datasets.load
def _first_rows(name, *args, **kwargs):
    ds = _load(name, *args, **kwargs)
    return dataclasses.replace(ds, X_train=ds.X_train[:300], y_train=ds.y_train[:300],
                               X_test=ds.X_test[:200], y_test=ds.y_test[:200])
datasets.load = _first_rows
"""

RUN_COMMANDS = """
import shlex, subprocess, sys
from leansvm import cli
for argv in COMMANDS_TO_RUN:
    if argv[0] == "leansvm":
        status = cli.main(argv[1:])
    else:
        status = subprocess.run([sys.executable] + argv[1:] if argv[0] == "python" else argv).returncode
    if status != 0:
        sys.exit(f"{shlex.join(argv)!r} exited with {status}")
"""


def commands(code):
    """The block's commands as argument lists, comments dropped (a line ending in a backslash goes on
    on the next)."""
    return [argv for line in code.replace("\\\n", " ").splitlines() if (argv := shlex.split(line, comments=True))]


def blocks(unique=True):
    """One parameter per block (the same block on two pages: once, named by its first)."""
    found, seen = [], set()
    for page in PAGES:
        text = page.read_text()
        for match in FENCE.finditer(text):
            line = text[:match.start("code")].count("\n") + 1
            key = (match["lang"], match["mark"], match["code"])
            if unique and key in seen:
                continue
            seen.add(key)
            found.append(pytest.param(*key, id=f"{page.relative_to(ROOT)}:{line}"))
    return found


def test_every_page_block_is_found():
    """The pattern sees every fence (a block it missed would go untested)."""
    fences = sum(page.read_text().count("```python") + page.read_text().count("```sh") for page in PAGES)
    assert len(blocks(unique=False)) == fences and fences >= 30


def test_commands_are_in_fences():
    """An indented block that starts with a command would not run here: commands go in ```sh fences;
    what stays indented is a synopsis (DATA, MODEL, [options]) or printed output."""
    for page in PAGES:
        text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
        for block in re.findall(r"(?:^ {4}.*\n)+", text, flags=re.M):
            first = block.split()[0]
            synopsis = re.search(r"\b(DATA|MODEL|OUT)\b|\[", block)
            assert first not in COMMANDS or synopsis, f"{page.name}: a command outside a ```sh fence: {block!r}"


def test_few_blocks_are_illustrations():
    marks = [b.values[1] for b in blocks()]
    assert sum(m is not None and m.startswith(("illustration", "help-only")) for m in marks) <= 2
    unknown = [m for m in marks if m is not None and not m.startswith(("illustration", "help-only"))
               and m.removeprefix("setup=") not in SETUPS]
    assert not unknown, unknown


def _check_set_up(argvs):
    """``make TARGET`` and ``pip install ".[EXTRAS]"``: the Makefile has the target, pyproject the extras."""
    import tomllib

    targets = re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), flags=re.M)
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for argv in argvs:
        if argv[0] == "make":
            assert set(argv[1:]) <= set(targets), argv
        else:
            named = re.fullmatch(r"\.(?:\[(.*)\])?", argv[-1])
            assert argv[:2] == ["pip", "install"] and named, argv
            assert set(filter(None, (named[1] or "").split(","))) <= set(extras), argv


@pytest.mark.parametrize("lang, mark, code", blocks())
def test_the_block_runs(lang, mark, code, tmp_path):
    if mark is not None and mark.startswith("illustration"):
        pytest.skip(mark)
    if lang == "sh":
        argvs = commands(code)
        words = {argv[0] for argv in argvs}
        if words <= {"make", "pip"}:
            return _check_set_up(argvs)
        if mark is not None and mark.startswith("help-only"):
            for argv in argvs:
                done = subprocess.run([sys.executable] + argv[1:] + ["--help"], cwd=ROOT, capture_output=True, text=True)
                assert done.returncode == 0 and "usage" in done.stdout, (argv, done.stderr[-2000:])
            return
        missing = [word for word in words - {"leansvm", "python"} if shutil.which(word) is None]
        if missing:
            pytest.skip(f"not on PATH: {', '.join(missing)} (LIBSVM's tools: Debian's libsvm-tools)")
        code = COMMAND_FILES + f"COMMANDS_TO_RUN = {argvs!r}\n" + RUN_COMMANDS
    else:
        code = (SETUPS[mark.removeprefix("setup=")] if mark else "") + "\n" + code
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-4000:]
