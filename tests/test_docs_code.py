"""Every Python block of README.md and docs/ runs, as a reader would paste it.

A block is run in a fresh process, in an empty folder. A block that uses names its page defines
in prose (``X``, ``y``, a fitted ``model``, a ``customers.csv``) says so on the line before its
fence, ``<!-- code: setup=NAME -->``, and runs after :data:`SETUPS`' code of that name: small
data, so the suite stays quick. ``<!-- code: illustration -->`` marks a block that is not run
(none is, so far; :func:`test_few_blocks_are_illustrations` keeps it so). The blocks' own
printed figures are not compared with anything: the figures of the pages are the results page's
(``tests/test_readme_figures.py``).
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
FENCE = re.compile(r"(?:^<!-- code: (?P<mark>[^>]*?) -->\n)?^```python\n(?P<code>.*?)^```", re.S | re.M)

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


def blocks(unique=True):
    """One parameter per block (the same block on two pages: once, named by its first)."""
    found, seen = [], set()
    for page in PAGES:
        text = page.read_text()
        for match in FENCE.finditer(text):
            line = text[:match.start("code")].count("\n") + 1
            if unique and (match["mark"], match["code"]) in seen:
                continue
            seen.add((match["mark"], match["code"]))
            found.append(pytest.param(match["mark"], match["code"], id=f"{page.relative_to(ROOT)}:{line}"))
    return found


def test_every_page_block_is_found():
    """The pattern sees every fence (a block it missed would go untested)."""
    fences = sum(page.read_text().count("```python") for page in PAGES)
    assert len(blocks(unique=False)) == fences and fences >= 15


def test_few_blocks_are_illustrations():
    marks = [b.values[0] for b in blocks()]
    assert sum(m is not None and m.startswith("illustration") for m in marks) <= 2
    unknown = [m for m in marks if m is not None and not m.startswith("illustration")
               and m.removeprefix("setup=") not in SETUPS]
    assert not unknown, unknown


@pytest.mark.parametrize("mark, code", blocks())
def test_the_block_runs(mark, code, tmp_path):
    if mark is not None and mark.startswith("illustration"):
        pytest.skip(mark)
    setup = SETUPS[mark.removeprefix("setup=")] if mark else ""
    done = subprocess.run([sys.executable, "-c", setup + "\n" + code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-4000:]
