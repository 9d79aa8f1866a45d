"""Where the classroom's modules lived before the rooms: a student's own copy of an older notebook still imports.

The workspace never overwrites a notebook a student has changed, so a copy made before the move keeps its old
imports (``from ragkit.teach import chapter, narrate``, ``from ragkit.teach.quiz import Quiz``) for a whole term. An
old path resolves to the module in its room, the same object, so nothing is computed twice. New code uses the rooms.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

MOVED = {
    "ragkit.teach.chapter": "ragkit.teach.course.chapter",
    "ragkit.teach.warming": "ragkit.plumbing.warming",
    **{
        f"ragkit.teach.{name}": f"ragkit.teach.lesson.{name}"
        for name in ("narrate", "plots", "widgets", "tables", "quiz", "claims", "overlap", "latency", "reminders")
    },
    "ragkit.teach.results": "ragkit.teach.exercises.results",
    "ragkit.teach.workspace": "ragkit.teach.classroom.workspace",
    "ragkit.teach.edition": "ragkit.teach.classroom.edition",
    "ragkit.teach.pace": "ragkit.teach.classroom.pace",
}
"""Old module path -> its module now (the teacher's grader became the package ``ragkit.teach.grading`` itself)."""


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old path and hands back the module that lives in a room now."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(name, self) if name in MOVED else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        """The module was executed where it lives."""


def install() -> None:
    """Let the old paths import (once per process)."""
    if not any(isinstance(finder, _Moved) for finder in sys.meta_path):
        sys.meta_path.append(_Moved())


def needle_sign_test(a_ranks: object, b_ranks: object, query_needles: object, k: int) -> object:
    """The call an older ex4 notebook makes: first-hit ranks to hits at ``k``, then the engine's needle sign test."""
    import numpy as np

    from ragkit.statistics import needle_sign_test as on_hits

    def found(ranks: object) -> np.ndarray:
        ranks = np.asarray(ranks)
        return ((ranks > 0) & (ranks <= k)).astype(float)

    return on_hits(found(a_ranks), found(b_ranks), list(query_needles))  # type: ignore[call-overload]


def moved_name(module: str, name: str) -> object:
    """A name an older notebook imports from ``module`` that lives elsewhere now; AttributeError if none."""
    if (module, name) == ("ragkit.teach.exercises", "shared_needle_words"):
        from ragkit.data import shared_needle_words

        return shared_needle_words
    if (module, name) == ("ragkit.teach.exercises", "needle_sign_test"):
        return needle_sign_test
    raise AttributeError(f"module {module!r} has no attribute {name!r}")
