"""The arrows point one way: plumbing under the engine, the engine under the classroom's rooms, the rooms in their
order, the CLI, the book, the teacher's tools and the benchmarks on top, and no import cycle anywhere; tests import
no benchmark.

Imports are read with ``ast`` from the source (function-level and type-only ones included), so a lazy import
inside a function or under ``if TYPE_CHECKING:`` counts as much as one at the top of a module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "ragkit"
TOOLS = ("book", "benchmarks", "harness", "teacher")
"""The folders beside the package that ship code of their own: the book, the benchmarks, the hub harness, and the
teacher's tools (which the class's repository leaves out)."""
CLI = ("ragkit.__main__", "ragkit.cli")
"""The command line: ``python -m ragkit`` and the package of its command groups."""
INTERACTIVE = ("ipywidgets", "plotly")
SHARED = (
    "ragkit.teach",
    "ragkit.teach.language",
    "ragkit.teach.untrusted",
    "ragkit.teach.moved",
    "ragkit.teach.frames",
)
"""The teaching layer's own commons: every room may reach them; they reach no room."""

MAY_IMPORT = {
    "plumbing": {"plumbing"},
    "engine": {"engine", "plumbing"},
    "teach": {"engine", "plumbing", "teach"},
    "course": {"engine", "plumbing", "teach", "course"},
    "exercises": {"engine", "plumbing", "teach", "course", "exercises"},
    "lesson": {"engine", "plumbing", "teach", "course", "exercises", "lesson"},
    "grading": {"engine", "plumbing", "teach", "course", "exercises", "grading"},
    "classroom": {"engine", "plumbing", "teach", "course", "classroom"},
    "cli": {"engine", "plumbing", "teach", "course", "exercises", "lesson", "grading", "classroom", "cli"},
    "book": {"engine", "plumbing", "teach", "course", "lesson", "classroom", "book"},  # classroom: the course's address
    "harness": {"harness"},
    # the teacher's tools compute the guide's figures (exercise 2's answer among them) and write them in the guide's
    # markers, which ragkit.teach.classroom.figures reads for the Dutch guide too: one pattern, in ragkit
    "teacher": {"engine", "plumbing", "teach", "course", "exercises", "lesson", "classroom", "teacher"},
    "benchmarks": {
        "engine",
        "plumbing",
        "teach",
        "course",
        "exercises",
        "lesson",
        "grading",
        "book",
        "harness",
        "classroom",  # the guide's run-times table: its measurements, written by classroom.run_times in both languages
        "benchmarks",
    },
}
"""What each layer or room may import. ``lesson`` reads the exercises' rules, ``grading`` runs the exercises' checks;
the exercises know neither; nothing but the CLI imports ``classroom``; nothing in ragkit imports the tools."""


def _module_name(path: Path, base: Path) -> str:
    parts = list(path.relative_to(base).with_suffix("").parts)
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


def _files(roots: tuple[Path, ...]) -> dict[str, Path]:
    return {_module_name(p, root.parent): p for root in roots for p in root.rglob("*.py")}


def import_graph(*roots: Path) -> dict[str, set[str]]:
    """Module -> the modules of these folders it imports (only those that exist as files); default: all of ours."""
    files = _files(roots or (PACKAGE, *(ROOT / t for t in TOOLS)))
    return {name: {m for m in _imports(path, name) if m in files and m != name} for name, path in files.items()}


def external_imports(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> every top-level name it imports (``plotly``, ``pandas``, ``ragkit``, ...) and full ragkit names."""
    out = {}
    for name, path in _files((root,)).items():
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


def layer(name: str) -> str:
    """The layer or room a module belongs to (the keys of MAY_IMPORT)."""
    top, *rest = name.split(".")
    if top != "ragkit":
        return top
    if name in CLI or name.startswith(f"{CLI[1]}."):
        return "cli"
    if rest[:1] == ["plumbing"]:
        return "plumbing"
    if rest[:1] != ["teach"]:
        return "engine"
    if name in SHARED:
        return "teach"
    return rest[1]


def wrong_arrows(graph: dict[str, set[str]]) -> dict[str, list[str]]:
    """Module -> what it imports against MAY_IMPORT (``ragkit.errors`` is every layer's, plumbing's too)."""
    bad = {
        name: sorted(m for m in mods if m != "ragkit.errors" and layer(m) not in MAY_IMPORT[layer(name)])
        for name, mods in graph.items()
    }
    return {k: v for k, v in bad.items() if v}


def test_every_module_belongs_to_a_known_layer_or_room():
    assert not {name: layer(name) for name in import_graph() if layer(name) not in MAY_IMPORT}


def test_every_import_points_the_allowed_way():
    assert wrong_arrows(import_graph()) == {}


@pytest.mark.parametrize(
    "where, planted, arrow",
    [
        ("ragkit/retrieval.py", "from ragkit.teach.lesson import plots", "engine -> lesson"),
        ("ragkit/teach/exercises/rules.py", "from ragkit.teach.grading import grader", "exercises -> grading"),
        (
            "ragkit/teach/exercises/feedback.py",
            "if TYPE_CHECKING:\n    from ragkit.teach.lesson.quiz import Quiz",
            "exercises -> lesson, type-only",
        ),
        (
            "ragkit/teach/lesson/quiz/asking.py",
            "def f():\n    from ragkit.teach.classroom import edition",
            "lesson -> classroom",
        ),
        ("ragkit/teach/grading/grader.py", "import ragkit.teach.lesson.plots", "grading -> lesson"),
        ("ragkit/teach/course/chapter.py", "from ragkit.teach.exercises import rules", "course -> exercises"),
        ("ragkit/plumbing/cache.py", "from ragkit import chunking", "plumbing -> engine"),
        ("ragkit/corpus.py", "import book.build", "engine -> book"),
        ("ragkit/retrieval.py", "from ragkit.cli.common import print", "engine -> cli"),
        ("ragkit/teach/lesson/widgets.py", "from ragkit.cli import main", "lesson -> cli"),
        ("book/pdf.py", "from ragkit.teach.grading import sandbox", "book -> grading"),
        ("ragkit/teach/classroom/pace.py", "import teacher.guide", "classroom -> teacher"),
        ("teacher/guide.py", "from benchmarks import grading", "teacher -> benchmarks"),
    ],
)
def test_a_planted_wrong_import_is_found(tmp_path, where, planted, arrow):
    """The rule on a copy of the tree with one wrong import added: it must be the one reported."""
    copy = {}
    for top in ("ragkit", *TOOLS):
        for p in (ROOT / top).rglob("*.py"):
            target = tmp_path / p.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            text = p.read_text(encoding="utf-8")
            copy[target] = text + ("\n" + planted + "\n" if p == ROOT / where else "")
            target.write_text(copy[target], encoding="utf-8")
    graph = import_graph(*(tmp_path / top for top in ("ragkit", *TOOLS) if (tmp_path / top).is_dir()))
    found = wrong_arrows(graph)
    planted_in = _module_name(tmp_path / where, tmp_path)
    assert list(found) == [planted_in], arrow


def test_only_the_teaching_layer_and_the_cli_import_widgets_or_plots():
    bad = {
        name: sorted(m for m in mods if m.startswith("ragkit.teach") or m in INTERACTIVE)
        for name, mods in external_imports().items()
        if layer(name) in ("engine", "plumbing")
    }
    assert not {k: v for k, v in bad.items() if v}


def test_pandas_only_in_the_teaching_layer_and_the_cli():
    bad = [
        name for name, mods in external_imports().items() if "pandas" in mods and layer(name) in ("engine", "plumbing")
    ]
    assert not bad


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


def test_no_import_cycle_in_the_package_the_book_or_the_benchmarks():
    assert cycles(import_graph()) == []


def test_no_test_imports_the_benchmarks():
    """A test imports what it tests from where it lives (ragkit, book, teacher, harness); the benchmarks measure."""
    tests = ROOT / "tests"
    found = {
        name: sorted(m for m in _imports(path, name) if m.split(".")[0] == "benchmarks")
        for name, path in _files((tests,)).items()
    }
    assert not {name: mods for name, mods in found.items() if mods}


def test_the_engine_raises_its_own_errors_never_a_bare_value_error():
    """What a user typed is an InputError (a ValueError too, so ``except ValueError`` still catches it)."""
    bare = [
        f"{name}:{node.lineno}"
        for name, path in _files((PACKAGE,)).items()
        if layer(name) in ("engine", "plumbing")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Raise)
        and isinstance(node.exc, ast.Call)
        and isinstance(node.exc.func, ast.Name)
        and node.exc.func.id == "ValueError"
    ]
    assert bare == []


def test_a_lessons_first_cell_imports_no_scipy_stats_and_no_torch():
    """scipy.stats takes about a second to import and torch much longer: a kernel's imports leave both to the cells
    that need them (issue 65: every notebook, every graded submission and every hub kernel starts that much sooner)."""
    import subprocess
    import sys

    modules = "ragkit.teach.course, ragkit.teach.lesson.narrate, ragkit.teach.lesson.plots, ragkit.teach.exercises"
    code = f"import sys, {modules}; print(sorted(m for m in ('scipy.stats', 'torch') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT / "notebooks")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]", f"imported by the lessons' first cell: {done.stdout.strip()}"
