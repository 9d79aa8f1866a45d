"""Where the classroom's modules and names lived before: a student's own copy of an older notebook still imports.

The workspace never overwrites a notebook a student has changed, so a copy made before a move keeps its old
imports (``from ragkit.teach import chapter, narrate``, ``from ragkit.teach.quiz import Quiz``) and its old calls
(``tables.sweep(s)``, ``overlap.measure(...)``) for a whole term. An old path resolves to the module in its room, the
same object, so nothing is computed twice; an old name to the function or value it is called now. New code uses the
rooms and the new names.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragkit.statistics import SignTest

__all__ = ["MOVED", "RENAMED", "install", "moved_name", "needle_sign_test_of_ranks"]

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

RENAMED = {
    ("ragkit.teach.course.chapter", "QWEN"): "INVENTED_REFERENCES",
    ("ragkit.teach.lesson", "measure"): "time_stages",
    ("ragkit.teach.lesson.held_out", "shown"): "setting_value",
    ("ragkit.teach.lesson.held_out", "table"): "summary_table",
    ("ragkit.teach.lesson.latency", "measure"): "time_stages",
    ("ragkit.teach.lesson.overlap", "measure"): "measure_pull",
    ("ragkit.teach.lesson.tables", "metric_shopping"): "metric_looks",
    ("ragkit.teach.lesson.tables", "sweep"): "per_cut",
    ("ragkit.teach.lesson.tables", "summary"): "hit_rates",
    ("ragkit.teach.lesson.tables", "two_halves"): "halves_table",
    ("ragkit.teach.lesson.tables", "lost_in_the_middle"): "positions_table",
    ("ragkit.teach.lesson.tables", "sign_test"): "paired_test",
    ("ragkit.teach.lesson.narrate", "two_halves"): "halves_at_cut",
    ("ragkit.teach.lesson.narrate", "four_or_twenty"): "more_chunks",
    ("ragkit.teach.lesson.narrate", "prompt_rates"): "needle_in_prompt",
    ("ragkit.teach.lesson.narrate", "gate_calls"): "calls_saved",
    ("ragkit.teach.lesson.narrate", "lost_in_the_middle"): "needle_positions",
    ("ragkit.teach.lesson.narrate", "smallest_p"): "smallest_possible_p",
}
"""(module, a name a notebook called there before it was renamed) -> the name in that module now; the module's
``__getattr__`` asks ``moved_name`` for it."""


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


def needle_sign_test_of_ranks(a_ranks: object, b_ranks: object, query_needles: Sequence[str], k: int) -> SignTest:
    """The call an older ex4 notebook makes: two runs' first-hit ranks, compared at Hit@``k`` by needle.

    The engine's own comparison does it: its hit rule (``ragkit.evaluation``) and its needle sign test
    (``ragkit.statistics``), on two runs made of the ranks.
    """
    import numpy as np

    from ragkit.evaluation import Result, compare

    ids = tuple(f"q{i}" for i in range(len(query_needles)))
    a, b = (
        Result(run, "dense", np.asarray(r), ids, tuple(query_needles)) for run, r in (("a", a_ranks), ("b", b_ranks))
    )
    return compare(a, b, f"Hit@{k}", level="needle").test


def moved_name(module: str, name: str) -> object:
    """A name an older notebook imports from ``module`` that is called otherwise or lives elsewhere now;
    AttributeError if none."""
    if (module, name) in RENAMED:
        return getattr(importlib.import_module(module), RENAMED[module, name])
    if (module, name) == ("ragkit.teach.exercises", "shared_needle_words"):
        from ragkit.data import shared_needle_words

        return shared_needle_words
    if (module, name) == ("ragkit.teach.exercises", "needle_sign_test"):
        return needle_sign_test_of_ranks
    raise AttributeError(f"module {module!r} has no attribute {name!r}")
