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
from ragkit.teach.untrusted import as_written, readable, strict

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
    notes: tuple[str, ...] = ()
    """The check's notes the reason is made of, each as the check wrote it: the printed table says once, above the
    rows, the notes every row of an exercise shares (its rules), and in each row the student's own."""

    def row(self, shared: frozenset[str] = frozenset()) -> dict[str, str]:
        """The row as text cells (numbers as ``key=value``), for the CSV and JSON: every cell whole, control
        characters escaped. ``shared``: notes the table says once above the rows, left out of this row's reason."""
        with language.speaking("en"):  # numbers as Python writes them, in every language of the table
            numbers = " ".join(f"{k}={_number(v)}" for k, v in self.numbers.items())
        with language.speaking(self.table):
            others = tuple(
                say("also handed in {notebook}: {grade}", notebook=as_written(g.notebook), grade=grade_word(g.grade))
                + (f" ({readable(g.own(shared), None)})" if g.own(shared) else "")
                for g in self.also
            )
            word = grade_word(self.grade)
        reason = "; ".join(r for r in (readable(self.own(shared), None), *others) if r)
        return {
            "student": readable(self.student, None),
            "exercise": self.exercise,
            "grade": word,
            "numbers": readable(numbers, None),
            "reason": reason,
            "seconds": f"{self.seconds:.1f}",
            "notebook": as_written(self.notebook, None),
        }

    def own(self, shared: frozenset[str] = frozenset()) -> str:
        """The reason without the notes in ``shared``: the student's own part of it."""
        if not shared or not self.notes:
            return self.reason
        return "; ".join(n for n in self.notes if n not in shared)


def _number(value: object) -> str:
    return language.number(value, ".4g") if isinstance(value, float) else str(value)


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
            f"{TABLE_ENV}={readable(chosen, 40)}: the grade table is written in one of "
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

    def shared(self) -> dict[tuple[str, str], frozenset[str]]:
        """Per exercise and language, the notes every judged row of it shares (its rules, as the check writes them),
        where at least two rows were judged: the table says them once instead of on every row."""
        by_kind: dict[tuple[str, str], list[Grade]] = {}
        for g in self.grades:
            for one in (g, *g.also):
                if one.notes:
                    by_kind.setdefault((one.exercise, one.spoken), []).append(one)
        return {
            kind: frozenset(set(rows[0].notes).intersection(*(r.notes for r in rows[1:])))
            for kind, rows in by_kind.items()
            if len(rows) >= 2
        }

    def __str__(self) -> str:
        shared = self.shared()
        rows = [_printed(g.row(shared.get((g.exercise, g.spoken), frozenset()))) for g in self.grades]
        columns = ["student", "exercise", "grade", "numbers", "seconds", "notebook"]
        with language.speaking(self.table):
            names = {c: heading(c) for c in [*columns, "reason"]}
            sandbox = say("sandbox: {isolation}", isolation=str(self.isolation))
            left = [say("left out: {why}", why=s) for s in self.skipped]
        header = []
        for (exercise, spoken), notes in sorted(shared.items()):
            with language.speaking(spoken):  # a note is in its notebook's language; so is what introduces it
                header += [say("every {exercise} row: {note}", exercise=exercise, note=n) for n in sorted(notes)]
        width = {c: max([len(names[c]), *(len(r[c]) for r in rows)]) for c in columns}
        # every cell whole (numbers and paths were shortened by whole names), the row's own reason last and whole
        lines = ["  ".join(f"{names[c]:<{width[c]}}" for c in columns) + "  " + names["reason"]]
        lines += ["  ".join(f"{r[c]:<{width[c]}}" for c in columns) + "  " + r["reason"] for r in rows]
        lines = [*header, *([""] if header else []), *lines, "", self.summary(), sandbox, *left]
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
"""Characters of a notebook's path the printed table shows: its last folders and the file's name, each whole (the
CSV has all)."""
NUMBERS_SHOWN = 60
"""Characters of a row's numbers the printed table shows: whole ``key=value`` pairs, then "..." (the CSV has all)."""


def _printed(row: dict[str, str]) -> dict[str, str]:
    """A row's cells for the printed table: numbers and the notebook's path shortened by whole names, never mid-name."""
    return {
        **row,
        "numbers": _whole(row["numbers"].split(" "), NUMBERS_SHOWN, " ", first=True),
        "notebook": _whole(row["notebook"].split("/"), NOTEBOOK_SHOWN, "/", first=False),
    }


def _whole(parts: list[str], limit: int, joint: str, first: bool) -> str:
    """As many whole ``parts`` as fit in ``limit`` characters with "..." for the rest: the first ones (``first``) or
    the last ones; always at least one, whole."""
    if len(joint.join(parts)) <= limit:
        return joint.join(parts)
    ordered = parts if first else parts[::-1]
    kept = [ordered[0]]
    for part in ordered[1:]:
        if len(joint.join([*kept, part, "..."])) > limit:
            break
        kept.append(part)
    return joint.join([*kept, "..."]) if first else joint.join(["...", *kept[::-1]])


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
