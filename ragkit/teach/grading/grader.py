"""Grades from submitted notebooks: each one run afresh in the sandbox, its answers judged by the grader's own checks.

What a student's kernel printed, recorded in a results file or redefined never reaches a grade:
the sandbox (``ragkit.teach.grading.sandbox``) hands back only the values of the names each exercise
declares, the grader validates them as plain values, and calls the check itself, in its own
process, with the exercise's fixed parameters and the per-student ones derived from the
student's name. That name comes from the notebook's path as the teacher gave it, by a documented rule
(``LAYOUTS``), checked against the teacher's class list when there is one, never from the notebook: a path
that runs through a link is refused, never followed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ragkit.errors import InputError
from ragkit.plumbing.service import MAX_TEXTS
from ragkit.teach import language
from ragkit.teach.exercises.results import EXERCISES
from ragkit.teach.grading.class_report import linked, walk
from ragkit.teach.grading.confinement import A_CELL_RAISED, CELL_RAISED, KERNEL_DIED, NOT_READABLE
from ragkit.teach.grading.sandbox import (
    MEMORY_BOUND,
    NO_REPORT,
    NO_REPORT_SAYING,
    TIMED_OUT,
    TOO_LARGE,
    Isolation,
    Lending,
    Limits,
    Sandbox,
    SandboxRun,
    snapshot_cache,
)
from ragkit.teach.language import _, say
from ragkit.teach.untrusted import MAX_NESTING, read_regular, shown, strict

if TYPE_CHECKING:
    import numpy as np

    from ragkit.embedding import Embedder
    from ragkit.teach.course import Course
    from ragkit.teach.exercises import Feedback

LAYOUTS = ("home", "platform")
"""How a notebook's path names its student: ``home``, the folder after the first ``home`` of the path as given
(``/home/<student>/...``, a hub); ``platform``, the first folder under the PATH given
(``<download>/<student>/.../<file>.ipynb``, a learning platform's download). Neither resolves a link."""
MAX_CLASS_LIST = 2**20
"""Bytes a class list may take: a login a line, tens of thousands of them."""
GRADES = ("yes", "not yet", "not run", "missing")
"""Best first: when a student hands in one exercise in two languages, the better of the two grades counts.

The grader's own keys: the table, CSV and JSON write them in the teacher's language (``TABLE_ENV``)."""
COLUMNS = ["student", "exercise", "grade", "numbers", "reason", "seconds", "notebook"]
TABLE_ENV = "RAGKIT_GRADES_LANGUAGE"
"""The language of the grade words and the table's headings, one for the whole class (default English). A reason
is said in the language of the notebook it is about: a Dutch notebook's reasons are Dutch (``spoken_in``)."""
NOT_READ = "notebook not read ({reason})"
MAX_NOTEBOOK = 32 * 2**20
MAX_ITEMS = 20_000
MAX_TEXT = 200_000
LEND_SHARE = 3
"""A kernel's request for vectors waits for the grader's model (busy with another run) a third of the time limit.

Waiting costs less than computing: a kernel refused computes its vectors, and the check then
computes them again; one that waits has them computed once."""
LEND_TEXTS = 2
"""A run may have the grader embed this many times the course's header (strategy E) chunks: its own header's,
and one more try (a header changed and measured again); a flood of short texts stops there."""
JUDGING = 300.0
"""Seconds the grader waits for one check; a check past it is graded "not run", with that reason.

The slowest honest check is ex4's when its kernel borrowed nothing: it embeds the course's header chunks, as the
notebook did within its own time limit. The others embed a few texts (ex5's document is bounded in words)."""
_EXERCISE_NAME = re.compile(r"(?<![a-z0-9])ex([1-5])(?![0-9])")
_CHOSEN = re.compile(
    r"""["']id["']\s*:\s*["']([a-z]{2})-language["']"""
    r"""|\blanguage\.use\(\s*(?:\\"|')([a-z]{2})(?:\\"|')\s*\)"""
)
"""In a notebook's JSON text: a translation's language cell (``"id": "nl-language"``, as the edition writes it), or a
call ``language.use("nl")`` in a cell's source (its quotes escaped in JSON)."""


def _ex1(course: Course, student: str, a: dict) -> Feedback:
    from ragkit.teach.exercises import check_destroyed_needle, own_size

    return check_destroyed_needle(course, a["question_id"], a["cut_at"], size=own_size(student), student=student)


def _ex2(course: Course, student: str, a: dict) -> Feedback:
    from ragkit.teach.exercises import check_threshold_choice

    return check_threshold_choice(course, a["my_cut"])  # the exercise's own costs and ceiling (EX2)


def _ex3(course: Course, student: str, a: dict) -> Feedback:
    from ragkit.teach.exercises import check_ticket_phrasings

    return check_ticket_phrasings(course, a["my_tickets"])


def _ex4(course: Course, student: str, a: dict) -> Feedback:
    from ragkit.teach.exercises import check_header

    headers = a["my_header"]
    make = None if headers is None else (lambda title, section: headers[title, section])
    return check_header(
        course,
        make,
        a["my_expectation"],
        a["my_conclusion"],  # metric fixed in EX4
        stated=a["stated_expectation"],
    )  # the direction locked when the measuring cell ran


def _ex5(course: Course, student: str, a: dict) -> Feedback:
    from ragkit.teach.exercises import check_own_document

    return check_own_document(course, a["my_document"], a["my_question"])


@dataclass(frozen=True)
class Exercise:
    """How to grade one exercise: its notebook, the answers to read and their kinds, and the call to its check.

    ``answers`` maps each declared name to its kind: ``str``, ``int``, ``number``, ``tickets``
    ({question id: text}) or ``header`` (a function of (title, section), run in the sandbox over
    every pair; the check receives the strings). ``judge`` calls the check with the exercise's
    fixed parameters and the student's own (the only place that knows the checks' signatures).
    """

    key: str
    notebook: str
    answers: dict[str, str]
    judge: Callable[[Course, str, dict], Feedback]

    @property
    def functions(self) -> tuple[str, ...]:
        """The answers that are functions, run inside the sandbox."""
        return tuple(n for n, kind in self.answers.items() if kind == "header")


TABLE = {
    e.key: e
    for e in (
        Exercise("ex1", "ex1-destroyed-needle.ipynb", {"question_id": "str", "cut_at": "int"}, _ex1),
        Exercise("ex2", "ex2-choose-a-threshold.ipynb", {"my_cut": "number"}, _ex2),
        Exercise("ex3", "ex3-ticket-phrasings.ipynb", {"my_tickets": "tickets"}, _ex3),
        Exercise(
            "ex4",
            "ex4-design-a-header.ipynb",
            {"my_header": "header", "my_expectation": "str", "my_conclusion": "str", "stated_expectation": "str"},
            _ex4,
        ),
        Exercise("ex5", "ex5-cite-your-own-document.ipynb", {"my_document": "str", "my_question": "str"}, _ex5),
    )
}
assert tuple(TABLE) == EXERCISES


@dataclass(frozen=True)
class Submission:
    """One notebook handed in: whose (by the path rule), which exercise, where, and the language its cells speak."""

    student: str
    exercise: str
    path: Path
    spoken: str | None = field(default=None, compare=False)
    """The language the notebook's own cells choose (``spoken_in``); None where they choose none or it was unread."""

    @property
    def language(self) -> str:
        """The notebook's language: the one its cells choose, else its folder's (``.../nl/exercises/ex2-...``)."""
        return self.spoken or language_of(self.path)


def language_of(path: Path) -> str:
    """A translation's exercise sits in a folder named after its language, or in that folder's exercises/, or is named
    after it (``ex2-choose-a-threshold.nl.ipynb``)."""
    folders, name = Path(path).parent.parts[-2:], Path(path).name.lower()
    return next(
        (
            lang
            for lang in language.LANGUAGES
            if lang != language.SOURCE and (lang in folders or name.endswith(f".{lang}.ipynb"))
        ),
        language.SOURCE,
    )


def spoken_in(notebook: bytes) -> str | None:
    """The language a notebook chooses: a translation's language cell (id ``nl-language``, as the edition writes it)
    or a call ``language.use("nl")``; None when it chooses none.

    Scanned as text, never parsed, let alone run: a hostile file costs the grader's own process no more than its
    bytes (the sandbox parses and runs it). The scan chooses only the language of the reasons, never what is judged,
    so a mention of the call elsewhere (a markdown cell, an output) at worst gives Dutch reasons to an English one.
    """
    text = notebook.decode("utf-8", "replace")
    for found in _CHOSEN.finditer(text):
        chosen = found.group(1) or found.group(2)
        if chosen in language.LANGUAGES and chosen != language.SOURCE:
            return chosen
    return None


def _spoken(path: Path) -> str | None:
    try:
        return spoken_in(read_notebook(path))
    except (InputError, OSError):
        return None  # its run says why it cannot be read; its folder names its language


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
            "notebook": shown(self.notebook, 400),
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


def exercise_of(name: str) -> str | None:
    """The exercise a notebook's file name is for (``ex1-destroyed-needle.ipynb``, ``alice ex3.ipynb``), or None."""
    found = _EXERCISE_NAME.search(name.lower())
    return f"ex{found.group(1)}" if found and name.lower().endswith(".ipynb") else None


def _given(path: str | Path) -> Path:
    """A path as the teacher gave it, absolute and without ``.``/``..``, no link resolved (links are refused)."""
    return Path(os.path.abspath(path))


def _first_home(parts: tuple[str, ...]) -> int | None:
    """Where the first ``home`` of a path is, when a folder follows it: the home layout's student is that folder."""
    return next((i for i, p in enumerate(parts[:-1]) if p == "home"), None)


def student_of(notebook: Path, root: Path, layout: str) -> str | None:
    """The student a notebook belongs to by the layout's rule, from its path as given; None when the rule names nobody.

    ``home``: the folder after the first ``home`` of the path (``/home/<student>/...``); ``platform``: the first
    folder under ``root``, the PATH given (the notebook's own folder when the PATH is the notebook).
    """
    path = _given(notebook)
    if layout == "home":
        index = _first_home(path.parts[:-1])  # the folder after it, not the notebook itself
        return path.parts[index + 1] if index is not None else None
    base = _given(root)
    if base == path:  # a notebook named on the command line: its folder is the student's
        return path.parent.name or None
    return path.relative_to(base).parts[0] if base in path.parents and path.parent != base else None


def _student_folder(notebook: Path, root: Path, layout: str) -> Path:
    """The folder that names the notebook's student (``/home/<student>``, ``<PATH>/<student>``)."""
    path = _given(notebook)
    if layout == "home":
        index = _first_home(path.parts[:-1])
        assert index is not None, "only a notebook the layout names a student for has a student's folder"
        return Path(*path.parts[: index + 2])
    base = _given(root)
    return path.parent if base == path else base / path.relative_to(base).parts[0]


def refused(notebook: Path, root: Path, layout: str) -> str | None:
    """Why a notebook is not graded as its path's student, or None: a link on the way, or a home inside a home.

    From the student's folder down to the notebook, no part of the path may be a link: a link would hand in a file
    that lies elsewhere (another student's, or anything on the machine) under this student's name. A folder named
    ``home`` inside the student's own folder is refused too: it stands for another student's home, planted.
    """
    path, folder = _given(notebook), _student_folder(notebook, root, layout)
    for step in [
        folder,
        *(folder / Path(*path.relative_to(folder).parts[: n + 1]) for n in range(len(path.relative_to(folder).parts))),
    ]:
        if step.is_symlink():
            return (
                f"{shown(str(step), 400)} is a link ({linked(step)}): not graded, a submission is read where it "
                "lies, never through a link"
            )
    if layout == "home" and "home" in path.relative_to(folder).parts[:-1]:
        return (
            f"a folder named home inside {shown(folder.name)}'s folder: not graded as anyone's (it stands for "
            "another student's home; the student is named by the first home of the path)"
        )
    return None


def refuse_outputs(outputs: Iterable[Path | None], inputs: Iterable[str | Path]) -> None:
    """Refuse, before anything runs, an output whose folder is missing, that is a folder, the same file as another
    output or as an input, or that lies inside a folder read: grades never overwrite a submission or land where the
    next grading reads them."""
    given = [_given(p) for p in inputs]
    written: list[Path] = []
    for out in (Path(o) for o in outputs if o is not None):
        where, path = shown(str(out), 160), _given(out)
        if not path.parent.is_dir():
            raise InputError(f"cannot write {where}: its folder does not exist; create it first or name another file")
        if path.is_dir():
            raise InputError(f"{where} is a folder: name a file in it, e.g. {shown(str(path / 'grades.csv'), 160)}")
        for other in [*given, *written]:
            same = path == other or (path.exists() and other.exists() and os.path.samefile(path, other))
            inside = other.is_dir() and (
                other in path.parents or Path(os.path.realpath(other)) in Path(os.path.realpath(path)).parents
            )
            if same or inside:
                raise InputError(
                    f"{where} is {'one of the files given' if same else 'inside a folder graded'} "
                    f"({shown(str(other), 160)}): name a file elsewhere, so nothing handed in is "
                    "overwritten or read as a submission next time"
                )
        written.append(path)


def _linked_folder(root: Path, layout: str) -> str | None:
    """Why a folder given in the home layout is not searched: a link between the student's folder and it (a glob
    over ``/home/*/...`` meets a student's folder linked to ``/home`` or ``/``); None when there is none."""
    parts = root.parts
    index = _first_home(parts)
    if layout != "home" or index is None:
        return None
    for n in range(index + 2, len(parts) + 1):
        step = Path(*parts[:n])
        if step.is_symlink():
            return (
                f"{shown(str(step), 400)} is a link ({linked(step)}): not searched, a submission is read where "
                "it lies, never through a link"
            )
    return None


def read_class_list(path: Path) -> tuple[str, ...]:
    """The teacher's class list: one login a line (as a hub's admin page exports it); blank and ``#`` lines skipped."""
    try:
        data = read_regular(Path(path), MAX_CLASS_LIST, "a class list")[0]
    except OSError as exc:
        raise InputError(
            f"class list {shown(str(path), 160)} not read ({exc.strerror or exc}): give a text file "
            "with one login a line"
        ) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(
            f"class list {shown(str(path), 160)} is not UTF-8 text: save it as UTF-8, one login a line"
        ) from None
    names = [line.strip() for line in text.splitlines()]
    names = [n for n in names if n and not n.startswith("#")]
    if odd := next((n for n in names if "/" in n or not n.isprintable() or n in (".", "..")), None):
        raise InputError(
            f"class list {shown(str(path), 160)}: '{shown(odd)}' is not a login (a login has no '/' "
            "and no control characters): fix that line"
        )
    if not names:
        raise InputError(f"class list {shown(str(path), 160)} names no student: one login a line")
    return tuple(dict.fromkeys(names))


def submissions(
    paths: Iterable[str | Path], layout: str, skipped: list[str], students: Iterable[str] | None = None
) -> list[Submission]:
    """Every exercise notebook named or found under the folders named, with its student by the layout's rule.

    Nothing outside the PATHs given is read: a link on the way is refused and said, and a file reached twice (the same
    file under two names) is one submission. With ``students`` (the class list), a notebook whose path names someone
    not on it is said, not graded.
    """
    if layout not in LAYOUTS:
        raise InputError(f"unknown layout {layout!r}: use one of {', '.join(LAYOUTS)}")
    listed = None if students is None else set(students)
    found: list[Submission] = []
    for root in map(_given, paths):
        if root.is_dir():
            if why := _linked_folder(root, layout):  # a student's folder linked elsewhere: not walked at all
                skipped.append(f"{shown(str(root), 400)}: {why}")
                continue
            notebooks = list(walk(root, skipped, lambda name: exercise_of(name) is not None, hidden=False))
        elif root.exists() or root.is_symlink():
            notebooks = [root]
        else:
            raise InputError(
                f"{shown(str(root), 160)} is neither a notebook nor a folder: give the submitted "
                ".ipynb files or the folders that hold them"
            )
        for nb in notebooks:
            exercise, who = exercise_of(nb.name), student_of(nb, root, layout)
            if exercise is None:
                skipped.append(f"{shown(str(nb), 400)}: not an exercise notebook (its name has no ex1..ex5)")
            elif not who:
                other = "platform" if layout == "home" else "home"
                skipped.append(
                    f"{shown(str(nb), 400)}: the {layout} layout names no student for it "
                    f"(see --layout; try --layout {other})"
                )
            elif why := refused(nb, root, layout):
                skipped.append(f"{shown(str(nb), 400)}: {why}")
            elif listed is not None and who not in listed:
                skipped.append(f"{shown(str(nb), 400)}: names '{shown(who)}', who is not on the class list: not graded")
            else:
                found.append(Submission(who, exercise, nb))
    return [replace(s, spoken=_spoken(s.path)) for s in _once(found, skipped)]


def _once(found: list[Submission], skipped: list[str]) -> list[Submission]:
    """Each file once: one reached under two names is one submission, its owner's when two students claim it."""
    from ragkit.teach.exercises.results import login

    by_file: dict[tuple[int, int], list[Submission]] = {}
    kept: list[Submission] = []
    for s in found:
        try:
            st = os.stat(s.path, follow_symlinks=False)
        except OSError:
            kept.append(s)  # not there any more: its run says so
            continue
        by_file.setdefault((st.st_dev, st.st_ino), []).append(s)
    for subs in by_file.values():
        whose = {s.student for s in subs}
        if len(whose) == 1:
            kept.append(subs[0])
            skipped.extend(
                f"{shown(str(s.path), 400)}: the same file as {shown(str(subs[0].path), 400)}, graded once"
                for s in subs[1:]
            )
            continue
        try:
            owner = login(os.stat(subs[0].path, follow_symlinks=False).st_uid)
        except OSError:
            owner = None
        mine = next((s for s in subs if s.student == owner), None)
        if mine is not None:
            kept.append(mine)
        names = ", ".join(f"'{shown(w)}'" for w in sorted(whose))
        for s in subs:
            if s is not mine:
                skipped.append(
                    f"{shown(str(s.path), 400)}: one file handed in by {len(whose)} students ({names}) "
                    "under several names; "
                    + (
                        f"graded once, as its owner '{shown(str(owner))}''s"
                        if mine
                        else "its owner is none of them: not graded"
                    )
                )
    return sorted(kept, key=lambda s: (s.student, s.exercise, str(s.path)))


def read_notebook(path: Path) -> bytes:
    """A submitted notebook's bytes: a regular file (no link, FIFO or device), at most MAX_NOTEBOOK bytes."""
    return read_regular(path, MAX_NOTEBOOK, "a notebook")[0]


def _plain(value: object, depth: int = 0, budget: list[int] | None = None) -> str | None:
    """Why a parsed JSON value is not a plain answer (too deep, too big), or None when it is one."""
    budget = budget if budget is not None else [MAX_ITEMS]
    budget[0] -= 1
    if budget[0] < 0:
        return say("more than {items:,} values", items=MAX_ITEMS)
    if depth > MAX_NESTING:
        return say("nested more than {nesting} deep", nesting=MAX_NESTING)
    if isinstance(value, str):
        return (
            say("a text of {characters:,} characters (at most {most:,})", characters=len(value), most=MAX_TEXT)
            if len(value) > MAX_TEXT
            else None
        )
    if value is None or isinstance(value, (bool, int, float)):
        return None
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
    if items is None:
        return f"a {type(value).__name__}"
    return next((why for v in items if (why := _plain(v, depth + 1, budget))), None)


def _kind(name: str, value: object, kind: str) -> tuple[object, str | None]:
    """The value a check receives for an answer of this kind, or why the answer is not of that kind."""
    if value is None:
        return None, None
    if kind == "str" and not isinstance(value, str):
        return None, say("`{name}` must be a string, not {value}", name=name, value=_described(value))
    if kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
        return None, say("`{name}` must be a whole number, not {value}", name=name, value=_described(value))
    if kind == "number" and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return None, say("`{name}` must be a number, not {value}", name=name, value=_described(value))
    if kind == "tickets" and not (isinstance(value, dict) and all(isinstance(v, str) for v in value.values())):
        return None, say(
            "`{name}` must map question ids to ticket texts, not {value}", name=name, value=_described(value)
        )
    if kind == "header":
        if not (isinstance(value, list) and all(isinstance(r, list) and len(r) == 3 for r in value)):
            return None, say("`{name}` must be a function of (doc_title, section)", name=name)
        if odd := next((r for r in value if not isinstance(r[2], str)), None):
            return None, say(
                "`{call}` returned {value}, not a string",
                call=f"{name}({odd[0]!r}, {odd[1]!r})",
                value=_described(odd[2]),
            )
        return {(t, s): h for t, s, h in value}, None
    return value, None


def _described(value: object) -> str:
    if type(value) in (dict, list, bool):
        return {dict: _("a dict"), list: _("a list"), bool: _("true/false")}[type(value)]
    return f"{type(value).__name__} {shown(repr(value), 40)}"


def answers_of(run: SandboxRun, exercise: Exercise) -> tuple[dict, str | None]:
    """The declared answers from a run's report, validated and typed; or the reason they cannot be judged."""
    if len(run.answers) > MAX_TEXT * 10:
        return {}, _("the answers are too large to judge")
    try:
        raw = json.loads(run.answers)
    except (ValueError, RecursionError):
        return {}, _("the notebook ran but its answers could not be read (was the last cell's output replaced?)")
    if not isinstance(raw, dict):
        return {}, _("the answers are not plain values (not a mapping)")
    if why := _plain(raw):
        return {}, say("the answers are not plain values ({why})", why=why)
    answers = {}
    for name, kind in exercise.answers.items():
        entry = raw.get(name)
        if not isinstance(entry, dict):
            return {}, say("`{name}` was not reported", name=name)
        if entry.get("absent"):
            return {}, say("`{name}` is not defined at the end of the notebook", name=name)
        if "error" in entry:
            return {}, say("`{name}` could not be read: {error}", name=name, error=shown(str(entry["error"]), 200))
        value, why = _kind(name, entry.get("value"), kind)
        if why:
            return {}, why
        answers[name] = value
    return answers, None


def judged(
    submission: Submission, run: SandboxRun, course: Course, late: list[threading.Thread] | None = None
) -> Grade:
    """A submission's grade from its run: not run (and why), or yes / not yet by the grader's own check.

    Every reason is said in the notebook's language (``Submission.language``): the check runs speaking it, as the
    student's kernel did; the grade itself and the numbers are the same in every language.
    The check gets ``JUDGING`` seconds; one that takes longer is not run, and its thread, still running, joins ``late``
    (the grader waits for it before it removes the cache that check writes into).
    """
    with language.speaking(submission.language):
        return replace(_judged(submission, run, course, late), spoken=submission.language)


def _judged(submission: Submission, run: SandboxRun, course: Course, late: list[threading.Thread] | None) -> Grade:
    where = str(submission.path)
    if not run.ran:
        return Grade(
            submission.student,
            submission.exercise,
            "not run",
            reason=run_reason(run.reason),
            seconds=run.seconds,
            notebook=where,
        )
    exercise = TABLE[submission.exercise]
    answers, why = answers_of(run, exercise)
    if why:
        return Grade(
            submission.student, submission.exercise, "not yet", reason=why, seconds=run.seconds, notebook=where
        )
    done: list[Feedback | BaseException] = []

    def judge() -> None:
        try:
            done.append(exercise.judge(course, submission.student, answers))
        except BaseException as exc:  # handed to the grader's thread, which decides as if the check had run there
            done.append(exc)

    # a thread, not a call: a check past its bound is left behind (Python cannot stop a thread) and the grading goes on;
    # it speaks the language ``judged`` chose, the notebook's
    judging = threading.Thread(target=judge, name=f"judging {submission.exercise}", daemon=True)
    judging.start()
    judging.join(JUDGING)
    if not done:
        if late is not None:
            late.append(judging)
        return Grade(
            submission.student,
            submission.exercise,
            "not run",
            reason=say("its check took longer than {seconds:g} s", seconds=JUDGING),
            seconds=run.seconds,
            notebook=where,
        )
    feedback = done[0]
    if isinstance(feedback, BaseException) and not isinstance(feedback, Exception):
        raise feedback
    if isinstance(feedback, Exception):  # an answer the check cannot handle is not yet right, never a crash
        return Grade(
            submission.student,
            submission.exercise,
            "not yet",
            reason=say(
                "the check could not judge this answer ({error}: {message})",
                error=type(feedback).__name__,
                message=shown(str(feedback), 200),
            ),
            seconds=run.seconds,
            notebook=where,
        )
    return Grade(
        submission.student,
        submission.exercise,
        "yes" if feedback.passed else "not yet",
        dict(feedback.numbers),
        "; ".join(feedback.notes),
        run.seconds,
        where,
    )


def run_reason(reason: str) -> str:
    """Why a run did not finish, said again in the language being spoken: the sandbox writes its reasons in English
    (in a run's thread, or in the confined child), from the templates of ``sandbox`` and ``confinement``."""
    if fields := _filled(MEMORY_BOUND, reason):
        return say(MEMORY_BOUND, reason=run_reason(str(fields["reason"])), gib=fields["gib"])
    if fields := _filled(TIMED_OUT, reason):
        return say(TIMED_OUT, **fields)
    if fields := _filled(NO_REPORT_SAYING, reason):
        return say(NO_REPORT_SAYING, **fields)
    if fields := _filled(TOO_LARGE, reason):
        return say(TOO_LARGE, **fields)
    if fields := _filled(CELL_RAISED, reason):
        return say(CELL_RAISED, **fields)
    if fields := _filled(A_CELL_RAISED, reason):
        return say(A_CELL_RAISED, **fields)
    if fields := _filled(NOT_READABLE, reason):
        return say(NOT_READABLE, **fields)
    if fields := _filled(NOT_READ, reason):
        return say(NOT_READ, **fields)
    if reason in (KERNEL_DIED, NO_REPORT):
        return _(KERNEL_DIED) if reason == KERNEL_DIED else _(NO_REPORT)
    return reason  # a machine's fault (the sandbox could not start, files left behind): the teacher's to read


def _filled(template: str, text: str) -> dict[str, object] | None:
    """The fields that fill ``template`` to give ``text`` (numbers as numbers where the template formats them), or
    None where it does not."""
    import string

    pattern, names = "", []
    for literal, name, spec, _conversion in string.Formatter().parse(template):
        pattern += re.escape(literal)
        if name is not None:
            pattern += f"(?P<{name}>.*?)"
            names.append((name, spec))
    found = re.fullmatch(pattern, text, re.S)
    if found is None:
        return None
    fields: dict[str, object] = {}
    for name, spec in names:
        value = found.group(name)
        if spec and spec[-1] in "gfd,":
            try:
                number = float(value.replace(",", ""))
            except ValueError:
                return None
            value = int(number) if spec[-1] in "d," else number
        fields[name] = value
    return fields


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


def header_pairs(course: Course) -> list[tuple[str, str]]:
    """Every (document title, section) pair a header is asked for: those of strategy E's chunks, in order."""
    return list(dict.fromkeys((c.doc_title, c.section) for c in course.chunks("E")))


def _lending(
    jobs: int, threads: int, wait: float, cache: Path | None = None, seed: Path | None = None, texts: int | None = None
) -> Lending | None:
    """The grader's models lent to the kernels, one per job with a kernel's threads; None where none can load.

    With ``cache``, the lent vectors are kept there, over the teacher's vectors in ``seed`` (see ``_writing_into``).
    """
    import queue

    from ragkit.embedding import Embedder
    from ragkit.errors import RagkitError
    from ragkit.plumbing.cache import VectorCache
    from ragkit.tokens import TruncationWarning

    try:
        # an encoder of its own for each run waiting, each with its own cache connection, so that ``jobs`` ex4 runs
        # are embedded at once, each on the threads its kernel has (its share of the cores); the checks keep the
        # default encoder
        embedders = [Embedder(threads=threads) for _ in range(jobs)]
    except (RagkitError, OSError):
        return None
    if cache is not None:
        for embedder in embedders:
            embedder.cache = VectorCache(cache, embedder.stamp.namespace, embedder.stamp.dimensions, shared=seed)
    free: queue.SimpleQueue[Embedder] = queue.SimpleQueue()
    for embedder in embedders:
        free.put(embedder)

    def encode(texts: list[str]) -> np.ndarray:
        embedder = free.get()  # never waits: the Lender holds one of ``jobs`` turns of the semaphore
        try:
            with warnings.catch_warnings():  # the kernel warns of truncation itself; the grader's log stays the grades'
                warnings.simplefilter("ignore", TruncationWarning)
                return embedder.encode(texts, progress=False)
        finally:
            free.put(embedder)

    return Lending(
        embedders[0].stamp.namespace,
        encode,
        threading.BoundedSemaphore(jobs),
        wait,
        texts if texts is not None else MAX_TEXTS,
    )


@contextlib.contextmanager
def _writing_into(embedder: Embedder, cache: Path, seed: Path | None) -> Iterator[None]:
    """Inside the block, the embedder reads the teacher's vectors in ``seed`` and writes only into ``cache``.

    What a grading embeds (a kernel's borrowed texts, a student's document, tickets and headers) is the students', not
    the course's: it goes to a cache thrown away with the grading, never into the teacher's, while the course's
    vectors are still read from the snapshot. The checks embed with the default embedder, so it is that one's cache
    that is swapped for the block.
    """
    from ragkit.plumbing.cache import VectorCache

    kept = embedder.cache
    embedder.cache = VectorCache(cache, kept.stamp, kept.dimensions, shared=seed)
    try:
        yield
    finally:
        embedder.cache.close()
        embedder.cache = kept


def grade(
    paths: Iterable[str | Path],
    layout: str = "home",
    limits: Limits | None = None,
    jobs: int = 1,
    course: Course | None = None,
    progress: Callable[[Grade], None] | None = None,
    lending: bool = True,
    announce: Callable[[Isolation], None] | None = None,
    students: Iterable[str] | None = None,
    table: str | None = None,
) -> ClassGrades:
    """Grade every exercise notebook under ``paths``: each run in the sandbox, ``jobs`` at a time, judged here.

    Every student found gets a row for each of the five exercises ("missing" when no notebook
    was found); the checks' own results file is a throwaway one, so grading records nothing.
    With ``lending``, an ex4 kernel's new texts are embedded by the grader, whose check then finds
    them in the grading's cache (``ragkit.plumbing.service``): each is embedded once, not twice.
    That cache is removed with the grading: nothing a grading embeds reaches the teacher's.
    ``announce`` hears what the sandbox holds on this machine (and what it cannot) before any notebook runs.
    ``students`` is the teacher's class list: only they are graded, each gets a row per exercise (``missing`` when
    nothing was handed in), and a notebook naming anyone else is listed under "left out".
    ``table`` is the language of the grade words and headings (else ``RAGKIT_GRADES_LANGUAGE``, else English); each
    reason is in the language of the notebook it is about.
    """
    import tempfile
    import time

    from ragkit.embedding import default_embedder
    from ragkit.plumbing.cache import shared_cache_dir
    from ragkit.plumbing.locations import cache_dir
    from ragkit.teach import course as courses
    from ragkit.teach.exercises.results import RESULTS_ENV

    if jobs < 1:
        raise InputError(f"--jobs {jobs}: give at least 1")
    table = table_language(table)
    limits = limits or Limits()  # a Limits refuses a time limit that is not a finite number of seconds above 0
    start = time.monotonic()
    roots = [Path(p) for p in paths]
    skipped: list[str] = []
    listed = None if students is None else tuple(students)
    found = submissions(roots, layout, skipped, listed)
    course = course if course is not None else courses.load(progress=False)
    pairs = header_pairs(course)
    by_cell: dict[tuple[str, str], list[Submission]] = {}
    for s in found:
        by_cell.setdefault((s.student, s.exercise), []).append(s)
    grades: list[Grade] = []
    runnable = []
    for (who, ex), subs in by_cell.items():
        languages = [s.language for s in subs]
        if len(set(languages)) < len(languages):  # two of one language: which one is the work is not ours to guess
            with language.speaking(max(languages, key=languages.count)):
                kept = say(
                    "{notebooks} notebooks for {exercise} in one language: keep one", notebooks=len(subs), exercise=ex
                )
                handed = "; ".join(say("handed in {notebook}", notebook=shown(str(s.path), 400)) for s in subs)
            grades.append(Grade(who, ex, "not run", reason=f"{kept}; {handed}"))
        else:
            runnable += subs  # one, or one per language: each is run, and the better grade counts (``better``)
    hidden = [Path(os.path.realpath(p if p.is_dir() else p.parent)) for p in roots]  # the folders, wherever they lie
    previous = os.environ.get(RESULTS_ENV)
    ran: dict[tuple[str, str], list[Grade]] = {}
    late: list[threading.Thread] = []
    with tempfile.TemporaryDirectory(prefix="ragkit-grader-") as throwaway:
        # the grader's own embedders read what the kernels read (the teacher's shared cache, else a snapshot of the
        # teacher's cache) and write into a cache of this grading's own
        vectors = Path(throwaway) / "vectors"
        seed = shared_cache_dir() or snapshot_cache(cache_dir(), Path(throwaway) / "seed")
        lend = (
            _lending(
                jobs, limits.threads, limits.timeout / LEND_SHARE, vectors, seed, LEND_TEXTS * len(course.chunks("E"))
            )
            if lending
            else None
        )
        with (
            Sandbox(hidden, limits, cache=cache_dir(), shared=shared_cache_dir(), lend=lend) as sandbox,
            _writing_into(default_embedder(), vectors, seed),
        ):
            os.environ[RESULTS_ENV] = str(Path(throwaway) / "results.jsonl")  # the grader's own checks record nothing
            if announce is not None:  # what the sandbox holds here, and what it cannot, before anything runs
                announce(sandbox.isolation)

            def execute(s: Submission) -> SandboxRun:
                try:
                    notebook = read_notebook(s.path)
                except InputError as exc:
                    return SandboxRun(False, NOT_READ.format(reason=exc))
                exercise = TABLE[s.exercise]
                # only an exercise whose answer runs in the sandbox (ex4's header) embeds texts the check needs too
                return sandbox.run(
                    notebook,
                    s.student,
                    tuple(exercise.answers),
                    exercise.functions,
                    pairs if exercise.functions else None,
                    lend=bool(exercise.functions),
                )

            try:
                with ThreadPoolExecutor(max_workers=jobs) as pool:
                    for s, run in zip(runnable, pool.map(execute, runnable)):
                        began = time.monotonic()
                        g = replace(judged(s, run, course, late), judging=time.monotonic() - began)
                        ran.setdefault((g.student, g.exercise), []).append(g)
                        if progress is not None:
                            progress(g)
            finally:
                for judging in late:  # a check past its bound still writes into this grading's cache and results
                    judging.join()
                if previous is None:
                    os.environ.pop(RESULTS_ENV, None)
                else:
                    os.environ[RESULTS_ENV] = previous
            isolation = sandbox.isolation
    grades += [better(rows) for rows in ran.values()]
    for who in {s.student for s in found} | set(listed or ()):
        with language.speaking(_language_of_student(who, found)):
            for ex in EXERCISES:
                if (who, ex) not in by_cell:
                    grades.append(
                        Grade(who, ex, "missing", reason=say("no notebook for {exercise} found", exercise=ex))
                    )
    grades = sorted((replace(g, table=table) for g in grades), key=lambda g: (g.student, g.exercise))
    return ClassGrades(tuple(grades), tuple(skipped), isolation, time.monotonic() - start, table)


def _language_of_student(who: str, found: Iterable[Submission]) -> str:
    """The language a student's missing exercises are said in: the one all their notebooks speak, else English."""
    spoken = {s.language for s in found if s.student == who}
    return spoken.pop() if len(spoken) == 1 else language.SOURCE
