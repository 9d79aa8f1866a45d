"""The gradebook: a row per student and exercise, the class's table, CSV and JSON, in the teacher's one language.

The grade words (``GRADES``) are the grader's own keys; ``grade_word`` says each in the language being spoken, for
the grade table here and for class-report's self-reported progress alike. A reason is said in the language of the
notebook it is about (``judging``); the words and headings of the table in one language for the whole class.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ragkit.errors import InputError
from ragkit.teach import language
from ragkit.teach.language import _, say
from ragkit.teach.untrusted import as_written, shown, strict

if TYPE_CHECKING:
    from ragkit.teach.grading.isolation import Isolation

__all__ = [
    "COLUMNS",
    "GRADES",
    "NOTEBOOK_SHOWN",
    "TABLE_ENV",
    "ClassGrades",
    "Grade",
    "better",
    "grade_word",
    "heading",
    "table_language",
]

GRADES = ("yes", "not yet", "not run", "missing")
"""Best first: when a student hands in one exercise in two languages, the better of the two grades counts.

The grader's own keys: the table, CSV and JSON write them in the teacher's language (``TABLE_ENV``)."""
COLUMNS = ["student", "exercise", "grade", "numbers", "reason", "seconds", "notebook"]
TABLE_ENV = "RAGKIT_GRADES_LANGUAGE"
"""The language of the grade words and the table's headings, one for the whole class (default English). A reason
is said in the language of the notebook it is about: a Dutch notebook's reasons are Dutch (``spoken_in``)."""


@dataclass(frozen=True)
class Grade:
    """One row of the gradebook: a student's grade for one exercise, its key numbers and the reason."""

    student: str
    exercise: str
    grade: str
    numbers: dict = field(default_factory=dict)
    reason: str = ""
    seconds: float = 0.0
    notebook: str = ""
    judging: float = 0.0
    """Seconds the grader's own check took (``seconds`` is the notebook's run in the sandbox)."""
    also: tuple[Grade, ...] = ()
    """The other notebooks handed in for this exercise (another language), each with its grade: never cut."""
    table: str = language.SOURCE
    """The language of the grade word (``TABLE_ENV``); the reason is in its notebook's language already."""
    spoken: str = language.SOURCE
    """The language of the notebook graded (``Submission.language``), which its reason is in."""

    def row(self) -> dict[str, str]:
        """The row as text cells (numbers as ``key=value``), for the table and the CSV."""
        with language.speaking("en"):  # numbers as Python writes them, in every language of the table
            numbers = " ".join(
                f"{k}={language.number(v, '.4g') if isinstance(v, float) else v}" for k, v in self.numbers.items()
            )
        with language.speaking(self.table):
            others = tuple(
                say("also handed in {notebook}: {grade}", notebook=shown(g.notebook, 400), grade=grade_word(g.grade))
                + (f" ({shown(g.reason, 120)})" if g.reason else "")
                for g in self.also
            )
            word = grade_word(self.grade)
        reason = "; ".join(r for r in (shown(self.reason, 300), *others) if r)
        return {
            "student": shown(self.student),
            "exercise": self.exercise,
            "grade": word,
            "numbers": shown(numbers, 200),
            "reason": reason,
            "seconds": f"{self.seconds:.1f}",
            "notebook": as_written(self.notebook),
        }


def grade_word(grade: str) -> str:
    """One of ``GRADES`` in the language being spoken."""
    return {"yes": _("yes"), "not yet": _("not yet"), "not run": _("not run"), "missing": _("missing")}[grade]


def heading(column: str) -> str:
    """One of the table's ``COLUMNS`` in the language being spoken."""
    return {
        "student": _("student"),
        "exercise": _("exercise"),
        "grade": _("grade"),
        "numbers": _("numbers"),
        "reason": _("reason"),
        "seconds": _("seconds"),
        "notebook": _("notebook"),
    }[column]


def table_language(chosen: str | None = None) -> str:
    """The language of the grade table: ``chosen``, else ``RAGKIT_GRADES_LANGUAGE``, else English."""
    chosen = chosen if chosen is not None else (os.environ.get(TABLE_ENV, "").strip() or language.SOURCE)
    if chosen not in language.LANGUAGES:
        raise InputError(
            f"{TABLE_ENV}={shown(chosen, 40)}: the grade table is written in one of "
            f"{', '.join(language.LANGUAGES)}; set it to one of those (default {language.SOURCE})"
        )
    return chosen


@dataclass(frozen=True)
class ClassGrades:
    """Every student's grade per exercise, what was left out and why, and what the sandbox could not enforce."""

    grades: tuple[Grade, ...]
    skipped: tuple[str, ...]
    isolation: Isolation
    seconds: float
    table: str = language.SOURCE
    """The language of the grade words and headings (``TABLE_ENV``), one for the whole class."""

    def counts(self) -> dict[str, int]:
        """How many rows have each grade, by its word in the table's language."""
        with language.speaking(self.table):
            return {grade_word(g): sum(1 for r in self.grades if r.grade == g) for g in GRADES}

    def summary(self) -> str:
        """One line: students, rows and the count of each grade, and the time taken."""
        students = len({g.student for g in self.grades})
        counts = ", ".join(f"{n} {g}" for g, n in self.counts().items())
        with language.speaking(self.table):
            return say(
                "{students} students, {rows} grades: {counts} ({seconds:.0f} s)",
                students=students,
                rows=len(self.grades),
                counts=counts,
                seconds=self.seconds,
            )

    def __str__(self) -> str:
        rows = [{**g.row(), "notebook": _tail(g.row()["notebook"], NOTEBOOK_SHOWN)} for g in self.grades]
        columns = ["student", "exercise", "grade", "numbers", "seconds", "notebook"]
        with language.speaking(self.table):
            names = {c: heading(c) for c in [*columns, "reason"]}
            sandbox = say("sandbox: {isolation}", isolation=str(self.isolation))
            left = [say("left out: {why}", why=s) for s in self.skipped]
        width = {c: min(60, max([len(names[c]), *(len(r[c]) for r in rows)])) for c in columns}
        # the reason comes last and whole: where it says another notebook was handed in, nothing of that is cut
        lines = ["  ".join(f"{names[c]:<{width[c]}}" for c in columns) + "  " + names["reason"]]
        lines += ["  ".join(f"{r[c][: width[c]]:<{width[c]}}" for c in columns) + "  " + r["reason"] for r in rows]
        lines += ["", self.summary(), sandbox, *left]
        return "\n".join(lines)

    def to_json(self) -> dict:
        """The grades as JSON-ready data: rows with their numbers as numbers, the counts, the notes."""
        return strict(
            {
                "grades": [
                    {**g.row(), "numbers": g.numbers, "seconds": round(g.seconds, 1), "judging": round(g.judging, 1)}
                    for g in self.grades
                ],
                "language": self.table,
                "counts": self.counts(),
                "skipped": list(self.skipped),
                "sandbox": str(self.isolation).splitlines(),
                "seconds": round(self.seconds, 1),
            }
        )  # type: ignore


NOTEBOOK_SHOWN = 60
"""Characters of a notebook's path the printed table shows: its end, where the file's name is (the CSV has all)."""


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "..." + text[-(limit - 3) :]


def better(rows: list[Grade]) -> Grade:
    """One row for an exercise handed in once per language: the best grade (English first on a tie), the others named.

    The two notebooks are one exercise with one check, in two languages: a student who solved it in either has
    solved it. Each was run and judged on its own; what the other one got is kept in ``also``, which the table and
    CSV show whole.
    """
    ordered = sorted(rows, key=lambda g: (GRADES.index(g.grade), g.spoken != language.SOURCE))
    best, others = ordered[0], ordered[1:]
    if not others:
        return best
    return replace(best, also=tuple(others))
