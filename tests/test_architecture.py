"""The package's import graph: no circle, and imports go down the layers (docs/architecture.md).

Every ``import`` / ``from ... import`` statement of every module counts, at module level or
inside a function (a lazy import is still a dependency); only ``if TYPE_CHECKING:`` blocks
are left out (they never run).
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "leansvm"

#: layer of each subpackage / top-level module: a module may import only from its own layer or below
LAYERS = {
    "interrupts": 0, "core": 1, "progress": 1,
    "exact": 2, "paths": 3, "budget": 3, "compression": 3, "reduced": 3, "preprocessing": 3,
    "io": 4, "datasets": 4, "distributed": 5, "job": 6, "demo": 7, "cli": 7, "precompile": 7, "patch": 7,
    "command": 8, "__main__": 9,
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules) -> set[str]:
    tree = ast.parse(path.read_text())
    skip = {id(n) for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for n in ast.walk(node)}
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules and t != name)
    return found


@pytest.fixture(scope="module")
def graph():
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _cycle(graph):
    """One import circle as a list of modules, or None (depth-first search)."""
    state, stack = {}, []

    def visit(v):
        state[v] = "open"
        stack.append(v)
        for w in sorted(graph[v]):
            if state.get(w) == "open":
                return stack[stack.index(w):] + [w]
            if w not in state and (found := visit(w)):
                return found
        stack.pop()
        state[v] = "done"
        return None

    for v in sorted(graph):
        if v not in state and (found := visit(v)):
            return found
    return None


def test_no_import_circle(graph):
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_cycle_finder_finds_a_planted_circle(graph):
    planted = {k: set(v) for k, v in graph.items()}
    planted["leansvm.core.kernels"].add("leansvm.exact.irwls")       # irwls imports kernels already
    assert _cycle(planted) is not None


def _layer(module: str):
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


def test_imports_go_down_the_layers(graph):
    upward = [f"{a} -> {b}" for a, targets in graph.items() for b in targets
              if _layer(a) is not None and _layer(b) is not None and _layer(b) > _layer(a)]
    assert upward == []


def test_every_module_has_a_layer(graph):
    assert [m for m in graph if m != "leansvm" and _layer(m) is None] == []


def _benchmark_modules():
    """Every benchmark module by the name other scripts import it as: ``common``, ``suite`` and
    ``report`` at the top of benchmarks/, each capability's scripts in their folder."""
    folder = PACKAGE.parents[1] / "benchmarks"
    return folder, {p.stem: p for p in [*folder.glob("*.py"), *folder.glob("*/*.py")]}


def test_no_import_circle_in_the_benchmarks():
    """The benchmark scripts import each other by file name (``from common import ...``): no circle."""
    _, scripts = _benchmark_modules()
    graph = {}
    for name, path in scripts.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
        graph[name] = {m for m in found if m in scripts and m != name}
    assert graph and _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_benchmarks_are_one_folder_per_capability():
    """benchmarks/ holds the runner, the report and the shared helpers; every benchmark script lives in
    its capability's folder, imports across folders only through ``common``, and no two scripts share
    a name."""
    folder, scripts = _benchmark_modules()
    assert sorted(p.name for p in folder.glob("*.py")) == ["common.py", "model_snapshot.py", "report.py", "suite.py"]
    nested = [p for p in folder.glob("*/*.py")]
    assert len({p.stem for p in nested}) == len(nested)
    for path in nested:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module in scripts and node.module != "common":
                assert scripts[node.module].parent == path.parent, f"{path.name} imports {node.module} across folders"


def test_the_benchmark_suite_runs_every_benchmark_script():
    """``benchmarks/suite.py`` is the one entry point: every bench_*.py is one of its capabilities,
    every capability's script exists, and a dry run of all of them names each command."""
    import subprocess
    import sys

    folder, _ = _benchmark_modules()
    sys.path.insert(0, str(folder))
    try:
        import suite
    finally:
        sys.path.remove(str(folder))
    registered = {c.args[0] for c in suite.CAPABILITIES} | {c.quick[0] for c in suite.CAPABILITIES if c.quick}
    scripts = {str(p.relative_to(folder)) for p in folder.glob("*/bench_*.py")}
    assert scripts and scripts <= registered, sorted(scripts - registered)
    assert all((folder / s).exists() for s in registered)
    out = subprocess.run([sys.executable, str(folder / "suite.py"), "run", "--dry-run", "all"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("== ") == len(suite.CAPABILITIES)
    for capability in suite.CAPABILITIES:        # the full and the small command each name their script once
        for quick in (False, True):
            command = capability.command(quick)
            assert [a for a in command[1:] if a.endswith(".py")] == [str(folder / (capability.quick or capability.args)[0]
                                                                         if quick else folder / capability.args[0])]


def test_no_module_is_over_700_lines():
    """Small modules that show the architecture: none of the package's is longer than 700 lines."""
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 700}
    assert not long, long


#: the main job's public entry points: they take every option of `leansvm fit` (scikit-learn's style)
JOB_ENTRY_POINTS = {"fit_lean_classification", "fit_lean_regression", "fit_lean_novelty"}


def _parameter_counts(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs] + [x.arg for x in (a.vararg, a.kwarg) if x]
            yield node.name, len([n for n in names if n not in ("self", "cls")])


def test_the_main_job_s_stages_take_at_most_8_parameters():
    """A stage of the main job takes the job's context and what is its own, not 15-25 arguments."""
    wide = {f"{path.stem}.{name}": n for path in (PACKAGE / "job").glob("*.py")
            for name, n in _parameter_counts(ast.parse(path.read_text(encoding="utf-8")))
            if n > 8 and name not in JOB_ENTRY_POINTS}
    assert not wide, wide
    planted = ast.parse("def stage(a, b, c, d, e, f, g, h, i):\n    pass\n")
    assert dict(_parameter_counts(planted)) == {"stage": 9}
