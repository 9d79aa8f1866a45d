"""What a notebook shows of ``ragkit.teach``: the functions its code cells use, and every helper those use in turn.

Read from the source with ``ast``, not listed by hand: a notebook's cells name teaching functions through the modules
and classes they import (``narrate.near_miss``, ``plots.cost_curve``, ``Quiz``, ``check_threshold_choice``) or through
an object one of those returned (``course.truncation_note``, ``explorer.widget``); a function then uses helpers by
name, through a module (``tables.per_cut``) or through ``self``. A class that is used brings all its methods (its
widget's callbacks and its display hook are called by Jupyter, not by the cell).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import textwrap
import typing
from dataclasses import dataclass
from pathlib import Path
from types import FunctionType, ModuleType

import jupytext

TEACH = "ragkit.teach"
DISPATCH = {("ragkit.teach.lesson.quiz.asking", "Quiz"): ("ragkit.teach.lesson.quiz.by_notebook", "BUILDERS")}
"""Classes whose first argument picks their content from a module-level table (module, name): ``Quiz("06", ...)``
asks the questions ``BUILDERS["06"]`` builds, and no other notebook's."""


@dataclass(frozen=True)
class Instance:
    """An object of a teaching class that a notebook holds in a variable (``course``, ``explorer``)."""

    cls: type


def _teaching(obj: object) -> bool:
    return (isinstance(obj, FunctionType) or inspect.isclass(obj)) and getattr(obj, "__module__", "").startswith(TEACH)


def _returned(function: object) -> Instance | None:
    """The teaching class a function's return annotation names (``load() -> Course``), if any."""
    try:
        hint = typing.get_type_hints(function).get("return")
    except Exception:
        return None
    return Instance(hint) if inspect.isclass(hint) and _teaching(hint) else None


class _Cells:
    """The names a notebook's cells bind, in order: imported modules and objects, and variables holding instances."""

    def __init__(self) -> None:
        self.names: dict[str, object] = {}

    def bind(self, statement: ast.stmt) -> None:
        if isinstance(statement, ast.Import | ast.ImportFrom):
            module = statement.module if isinstance(statement, ast.ImportFrom) else statement.names[0].name
            if module and module.split(".")[0] == "ragkit":
                exec(compile(ast.Module([statement], []), "<notebook>", "exec"), self.names)
        elif (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            value = self.resolve(statement.value)
            if isinstance(value, Instance):
                self.names[statement.targets[0].id] = value

    def resolve(self, node: ast.expr) -> object:
        """What an expression of a cell stands for, as far as names, attributes and calls tell."""
        if isinstance(node, ast.Name):
            return _plain(self.names.get(node.id))
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if isinstance(base, Instance):
                return _member(base.cls, node.attr)
            if isinstance(base, ModuleType) or inspect.isclass(base):
                return _plain(getattr(base, node.attr, None))
            return None
        if isinstance(node, ast.Call):
            called = self.resolve(node.func)
            if inspect.isclass(called) and _teaching(called):
                return Instance(called)
            return _returned(called) if isinstance(called, FunctionType) else None
        return None


def _plain(obj: object) -> object:
    """A function without its decorators (``functools.cache`` wraps ``course.load``)."""
    return inspect.unwrap(obj) if isinstance(obj, FunctionType) or hasattr(obj, "__wrapped__") else obj  # type: ignore[arg-type]


def _member(cls: type, name: str) -> object:
    """A class's attribute as the function behind it (a property's getter, a static method's function)."""
    raw = inspect.getattr_static(cls, name, None)
    if isinstance(raw, property):
        return raw.fget
    if isinstance(raw, staticmethod | classmethod):
        return raw.__func__
    return _plain(raw)


def used_by_notebook(twin: Path) -> set[object]:
    """The teaching functions and classes a notebook's code cells use directly."""
    cells = _Cells()
    used: set[object] = set()
    for cell in jupytext.read(twin).cells:
        if cell.cell_type != "code":
            continue
        for statement in ast.parse(cell.source).body:
            for node in ast.walk(statement):
                if isinstance(node, ast.Name | ast.Attribute):
                    found = cells.resolve(node)
                    if _teaching(found):
                        used.add(found)
                if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                    called = cells.resolve(node.func)
                    table = DISPATCH.get((getattr(called, "__module__", ""), getattr(called, "__name__", "")))
                    if table:
                        module, name = table
                        used.add(getattr(importlib.import_module(module), name)[node.args[0].value])
            cells.bind(statement)
    return used


def _owner(function: FunctionType) -> type | None:
    """The class a method is defined in (from its qualified name), else None."""
    outer = function.__qualname__.split(".<locals>")[0].split(".")[:-1]
    obj: object = inspect.getmodule(function)
    for part in outer:
        obj = getattr(obj, part, None)
    return obj if inspect.isclass(obj) else None


def helpers(obj: object) -> set[object]:
    """What one teaching function uses of ``ragkit.teach`` (by name, through a module or a class, or through self);
    for a class, its methods."""
    if inspect.isclass(obj):
        return {m for m in (_member(obj, name) for name in vars(obj)) if isinstance(m, FunctionType)}
    function = _plain(obj)
    assert isinstance(function, FunctionType)
    if not Path(function.__code__.co_filename).is_file():
        return set()  # written by a decorator (a dataclass's __init__, __eq__): no sentence of ours
    scope, owner = function.__globals__, _owner(function)
    found: set[object] = set()
    for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(function)))):
        target: object = None
        if isinstance(node, ast.Name):
            target = _plain(scope.get(node.id))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            base = owner if node.value.id in ("self", "cls") else scope.get(node.value.id)
            if isinstance(base, ModuleType):
                target = _plain(getattr(base, node.attr, None))
            elif inspect.isclass(base):
                target = _member(base, node.attr)
        if _teaching(target):
            found.add(target)
    return found


def reached(twin: Path) -> set[object]:
    """Every teaching function and class a notebook shows the sentences of: what it uses, and what those use."""
    todo, seen = list(used_by_notebook(twin)), set()
    while todo:
        obj = todo.pop()
        if obj not in seen:
            seen.add(obj)
            todo.extend(helpers(obj) - seen)
    return seen


def qualified(obj: object) -> tuple[str, str]:
    """(module from ``ragkit.teach`` on, qualified name): how test_language's template index names a function."""
    return obj.__module__.removeprefix(TEACH + "."), obj.__qualname__  # type: ignore[attr-defined]
