"""ragkit's public face: the engine's entry points in ``ragkit.__all__``, and notebooks that import public names."""

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import ragkit

from conftest import ROOT

TWINS = sorted((ROOT / "notebooks" / "twins").rglob("*.py"))
ROOMS = ("course", "lesson", "exercises", "grading", "classroom")
SHARE_A_NAME = {"ragkit.answer": {"answer"}, "ragkit.report": {"report"}}
"""Functions named like their module: imported from it, since ``ragkit.answer`` must stay the module."""


def test_every_public_name_is_the_engines_own_and_listed_once():
    assert len(ragkit.__all__) == len(set(ragkit.__all__))
    for name in ragkit.__all__:
        value = getattr(ragkit, name)
        home = getattr(value, "__module__", None)
        assert home is None or (home.startswith("ragkit") and not home.startswith("ragkit.teach")), (name, home)


def test_the_lazy_package_imports_nothing_and_its_map_is_what_a_type_checker_sees():
    """``import ragkit`` loads no module of the engine (the grader's sandbox child imports one); each public name is
    found where ``_HOME`` says, which is where the ``TYPE_CHECKING`` block imports it from."""
    import subprocess
    import sys

    code = (
        "import sys, ragkit; print(sorted(m for m in sys.modules if m.startswith('ragkit.') and 'plumbing' not in m))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]", loaded
    source = ast.parse((ROOT / "ragkit" / "__init__.py").read_text(encoding="utf-8"))
    checked = {
        (inner.module, a.name)
        for node in source.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for inner in node.body
        if isinstance(inner, ast.ImportFrom)
        for a in inner.names
    }
    assert checked == {(module, name) for module, names in ragkit._HOME.items() for name in names}
    assert {name for _, name in checked} == set(ragkit.__all__)


def test_no_public_name_hides_a_module_of_the_engine():
    """``ragkit.answer`` must stay the module: a function of that name in __all__ would replace it on the package."""
    modules = {m.name for m in pkgutil.iter_modules(ragkit.__path__)}
    assert not modules & set(ragkit.__all__)
    for module in modules - {"__main__"}:
        imported = importlib.import_module(f"ragkit.{module}")
        assert getattr(ragkit, module) is imported


def _allowed(node: ast.stmt) -> list[str]:
    """What is not public in one import statement of a notebook (empty: all public)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.startswith("ragkit") and a.name != "ragkit.teach.course"]
    if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("ragkit"):
        return []
    names = [a.name for a in node.names]
    module = node.module or ""
    if module == "ragkit":
        public = set(ragkit.__all__) | {m.name for m in pkgutil.iter_modules(ragkit.__path__)}
        return [f"ragkit.{n}" for n in names if n not in public]
    if module in SHARE_A_NAME:
        return [f"{module}.{n}" for n in names if n not in SHARE_A_NAME[module]]
    if module == "ragkit.teach":
        return [f"{module}.{n}" for n in names if n != "language"]
    room = module.removeprefix("ragkit.teach.")
    if room in ROOMS:
        package = importlib.import_module(module)
        submodules = {m.name for m in pkgutil.iter_modules(package.__path__)}
        public = set(getattr(package, "__all__", ()))  # and what each module it lists there says in its own __all__
        public |= {n for m in public & submodules for n in importlib.import_module(f"{module}.{m}").__all__}
        return [f"{module}.{n}" for n in names if n not in submodules and n not in public]
    return [f"{module}.{n}" for n in names]


def deep_imports(source: str) -> list[str]:
    """The names a notebook's source imports past ragkit's public face."""
    return [name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.stmt) for name in _allowed(node)]


@pytest.mark.parametrize("twin", TWINS, ids=[str(t.relative_to(ROOT / "notebooks" / "twins")) for t in TWINS])
def test_a_notebook_imports_public_names_only(twin):
    assert deep_imports(twin.read_text(encoding="utf-8")) == []


def test_a_deep_import_is_found():
    source = (
        "from ragkit.evaluation import METRICS\nfrom ragkit.teach.lesson.quiz import Quiz\n"
        "from ragkit import chunk_corpus, lexical\nfrom ragkit.answer import answer, NoAnswer\n"
        "import ragkit.plumbing.locations\nfrom ragkit.teach.lesson import narrate, Quiz\n"
    )
    assert deep_imports(source) == [
        "ragkit.evaluation.METRICS",
        "ragkit.teach.lesson.quiz.Quiz",
        "ragkit.answer.NoAnswer",
        "ragkit.plumbing.locations",
    ]


def test_the_rooms_are_the_folders_of_teach():
    assert sorted(ROOMS) == sorted(
        p.name for p in (ROOT / "ragkit" / "teach").iterdir() if (p / "__init__.py").is_file()
    )
    assert Path(importlib.import_module("ragkit.teach").__file__).parent == ROOT / "ragkit" / "teach"


@pytest.mark.parametrize("package", ["ragkit.teach.lesson.narrate", "ragkit.teach.exercises"])
def test_a_package_that_re_exports_its_modules_leaves_none_of_their_public_names_out(package):
    """Notebooks and tests reach narrators and checks through the package: one left out would escape them (a module's
    ``__all__`` that forgets it, when the package imports the module's names with ``*``)."""
    import inspect

    root = importlib.import_module(package)
    missing = [
        f"{m.name}.{name}"
        for m in pkgutil.iter_modules(root.__path__)
        for name, value in vars(importlib.import_module(f"{package}.{m.name}")).items()
        if not name.startswith("_")
        and (inspect.isfunction(value) or inspect.isclass(value))
        and value.__module__ == f"{package}.{m.name}"
        and getattr(root, name, None) is not value
    ]
    assert missing == []
