"""The arrows point one way: engine <- teaching layer <- CLI, plumbing under the engine, and no import cycle.

Imports are read with ``ast`` from the source (function-level ones included), so a lazy
import inside a function counts as much as one at the top of a module.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ragkit"
CLI = "ragkit.__main__"
INTERACTIVE = ("ipywidgets", "plotly")

def _module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str) -> set[str]:
    """Every module a file imports anywhere in it, relative imports resolved to absolute names."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            # ``from ragkit import statistics`` imports the module ragkit.statistics
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of the package it imports (only those that exist as files)."""
    files = {_module_name(p, root): p for p in root.rglob("*.py")}
    return {name: {m for m in _imports(path, name) if m in files and m != name} for name, path in files.items()}


def external_imports(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> every top-level name it imports (``plotly``, ``pandas``, ``ragkit``, ...) and full ragkit names."""
    out = {}
    for path in root.rglob("*.py"):
        name = _module_name(path)
        mods = _imports(path, name)
        out[name] = {m.split(".")[0] for m in mods} | {m for m in mods if m.startswith("ragkit.")}
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (or a module importing itself): each holds a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _layer(name: str) -> str:
    if name == CLI:
        return "cli"
    if name.startswith("ragkit.teach"):
        return "teach"
    if name.startswith("ragkit.plumbing"):
        return "plumbing"
    return "engine"


def test_only_the_teaching_layer_and_the_cli_import_teach_widgets_or_plots():
    bad = {name: sorted(m for m in mods if m.startswith("ragkit.teach") or m in INTERACTIVE)
           for name, mods in external_imports().items() if _layer(name) in ("engine", "plumbing")}
    assert not {k: v for k, v in bad.items() if v}


def test_pandas_only_in_the_teaching_layer_and_the_cli():
    bad = [name for name, mods in external_imports().items()
           if "pandas" in mods and _layer(name) in ("engine", "plumbing")]
    assert not bad


def test_plumbing_imports_nothing_of_the_engine_but_its_errors():
    bad = {name: sorted(m for m in mods if m.startswith("ragkit.") and _layer(m) != "plumbing"
                        and m != "ragkit.errors")
           for name, mods in import_graph().items() if _layer(name) == "plumbing"}
    assert not {k: v for k, v in bad.items() if v}


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import(tmp_path):
    pkg = tmp_path / "ragkit"
    (pkg / "teach").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "teach" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from ragkit import b\n")
    (pkg / "b.py").write_text("def f():\n    from .teach.c import g\n")
    (pkg / "teach" / "c.py").write_text("import ragkit.a\n")
    (pkg / "d.py").write_text("import ragkit.a\n")
    assert cycles(import_graph(pkg)) == [["ragkit.a", "ragkit.b", "ragkit.teach.c"]]


def test_no_import_cycle_in_the_package():
    assert cycles(import_graph()) == []
