"""The documentation: every page of the nav exists, every public name has an API entry,
and, where mkdocs + mkdocstrings are installed (``pip install -e '.[docs]'``), ``mkdocs build --strict``
passes (no missing object, no broken link)."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

import leansvm

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _directives() -> set[str]:
    found = set()
    for page in (DOCS / "reference").glob("*.md"):
        found |= set(re.findall(r"^::: ([\w.]+)", page.read_text(), flags=re.M))
    return found


def test_every_page_in_the_nav_exists():
    pages = re.findall(r":\s*([\w/.-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), flags=re.M)
    assert len(pages) >= 15
    missing = [p for p in pages if not (DOCS / p).is_file()]
    assert not missing, missing


def test_every_public_name_has_an_api_entry():
    documented = {name.rsplit(".", 1)[-1] for name in _directives()}
    missing = sorted(set(leansvm.__all__) - documented)
    assert not missing, f"no ::: entry in docs/reference for {missing}"


def test_every_method_page_has_the_required_parts():
    for page in (DOCS / "methods").glob("*.md"):
        text = page.read_text()
        for heading in ("## What it does" if page.stem != "dask-onnx" else "## Dask",
                        "## When to use", "## Measured"):
            assert heading in text, (page.name, heading)


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None,
                    reason="mkdocs + mkdocstrings not installed (the 'docs' extra; `make docs`)")
def test_mkdocs_build_is_strict_clean(tmp_path):
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "WARNING" not in run.stderr, run.stderr[-3000:]
    html = (tmp_path / "site" / "reference" / "estimators" / "index.html").read_text()
    assert "working_set_size" in html          # rendered from SVC's docstring


STANDALONE = [ROOT / "README.md", ROOT / "BENCHMARKS.md", ROOT / "RELIABILITY.md", *sorted(DOCS.rglob("*.md"))]


@pytest.mark.parametrize("page", STANDALONE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_document_points_outside_the_repository(page):
    """A clone has no ``../shared``: no link or path may leave the repository, and every
    relative link must name a file of the repository."""
    text = page.read_text()
    assert not re.search(r"\.\./shared|/work/|\bshared/(?:papers|benchmarks\.md|DESIGN\.md)", text)
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if re.match(r"[a-z]+:", target):          # http:, https:, mailto:
            continue
        resolved = (page.parent / target).resolve()
        assert resolved.is_relative_to(ROOT) and resolved.exists(), f"{page.name}: broken link {target}"


def test_every_cited_section_of_the_results_page_exists():
    """A page or docstring that cites BENCHMARKS.md by section ('BENCHMARKS.md, "Safe screening
    rates"') names one of its current headings, and every benchmark script a page names exists:
    the results page is generated, so a section or a script that moved must not leave a dead
    pointer behind."""
    headings = re.findall(r"^#+ (.+)$", (ROOT / "BENCHMARKS.md").read_text(), flags=re.M)
    texts = {p: re.sub(r"\s+", " ", p.read_text()) for p in [ROOT / "README.md", *DOCS.rglob("*.md"),
                                                             *(ROOT / "src").rglob("*.py")]}
    cited = {(p.name, m) for p, t in texts.items() for m in re.findall(r'BENCHMARKS\.md[,;] "([^"]+)', t)}
    assert len(cited) >= 10
    dead = [(page, name) for page, name in cited if not any(h.startswith(name.rstrip(".,")) for h in headings)]
    assert not dead, dead
    scripts = {(p.name, m) for p, t in texts.items() for m in re.findall(r"benchmarks/[\w/]+\.py", t)}
    assert len(scripts) >= 20
    missing = [(page, s) for page, s in scripts if not (ROOT / s).is_file()]
    assert not missing, missing
