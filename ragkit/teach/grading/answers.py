"""The declared answers: each exercise's, read from a run's report as plain values, validated, handed to its check.

The sandbox hands back only the values of the names each exercise declares (``TABLE``); they are read here as any
hostile input (bounded in size and depth, of the kind declared), never run, and the check receives them with the
exercise's fixed parameters and the student's own, derived from the student's name.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragkit.teach.exercises.results import EXERCISES
from ragkit.teach.language import _, say
from ragkit.teach.untrusted import MAX_NESTING, readable

if TYPE_CHECKING:
    from ragkit.teach.course import Course
    from ragkit.teach.exercises import Feedback

__all__ = ["LARGEST", "MAX_ITEMS", "MAX_TEXT", "TABLE", "Exercise", "answers_of", "header_pairs"]

MAX_ITEMS = 20_000
"""Values the answers of one notebook may hold, all nested ones counted."""
MAX_TEXT = 200_000
"""Characters one text of an answer may hold."""
LARGEST = 2**63
"""A whole-number answer lies strictly between minus this and this (a check's arrays hold 64-bit numbers)."""


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


def _ex6(course: Course, student: str, a: dict) -> Feedback:
    from ragkit.teach.exercises import check_rank_metrics

    return check_rank_metrics(a["my_ap"], a["my_ndcg"], student=student)  # the student's own ranking, from the name


def _ex7(course: Course, student: str, a: dict) -> Feedback:
    from ragkit.teach.exercises import check_efsearch

    return check_efsearch(course, a["my_ef"])  # the exercise's own target and collections (EX7)


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
        Exercise("ex6", "ex6-rank-metrics-by-hand.ipynb", {"my_ap": "number", "my_ndcg": "number"}, _ex6),
        Exercise("ex7", "ex7-choose-efsearch.ipynb", {"my_ef": "int"}, _ex7),
    )
}
assert tuple(TABLE) == EXERCISES


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


def _kind(name: str, value: object, kind: str, pairs: list[tuple[str, str]] | None = None) -> tuple[object, str | None]:
    """The value a check receives for an answer of this kind, or why the answer is not of that kind.

    The schema is strict, so that nothing a check receives can crash the grader: a whole number within 64 bits, a
    finite number, texts for tickets, and a header's answer as [title, section, header] texts, one for each pair it
    was asked for (``pairs``, where the grader knows them) and for no other.
    """
    if value is None:
        return None, None
    if kind == "str" and not isinstance(value, str):
        return None, say("`{name}` must be a string, not {value}", name=name, value=_described(value))
    if kind == "int" and (isinstance(value, bool) or not isinstance(value, int) or not -LARGEST < value < LARGEST):
        return None, say("`{name}` must be a whole number, not {value}", name=name, value=_described(value))
    if kind == "number" and (
        isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
    ):
        return None, say("`{name}` must be a number, not {value}", name=name, value=_described(value))
    if kind == "tickets" and not (
        isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
    ):
        return None, say(
            "`{name}` must map question ids to ticket texts, not {value}", name=name, value=_described(value)
        )
    if kind == "header":
        if not (isinstance(value, list) and all(_triple(r) for r in value)):
            return None, say("`{name}` must be a function of (doc_title, section)", name=name)
        if odd := next((r for r in value if not isinstance(r[2], str)), None):
            return None, say(
                "`{call}` returned {value}, not a string",
                call=f"{name}({readable(repr(odd[0]), 80)}, {readable(repr(odd[1]), 80)})",
                value=_described(odd[2]),
            )
        headers = {(t, s): h for t, s, h in value}
        if len(headers) != len(value) or (pairs is not None and set(headers) != set(pairs)):
            return None, say(
                "`{name}` did not answer for exactly the (doc_title, section) pairs it was called with", name=name
            )
        return headers, None
    return value, None


def _triple(row: object) -> bool:
    """Whether a header's answer row is [title, section, header] with a text title and section."""
    return isinstance(row, list) and len(row) == 3 and isinstance(row[0], str) and isinstance(row[1], str)


def _described(value: object) -> str:
    if type(value) in (dict, list, bool):
        return {dict: _("a dict"), list: _("a list"), bool: _("true/false")}[type(value)]
    return f"{type(value).__name__} {readable(repr(value), 40)}"


def answers_of(
    reported: str, exercise: Exercise, pairs: list[tuple[str, str]] | None = None
) -> tuple[dict, str | None]:
    """The declared answers from a run's report (its JSON text), validated and typed; or why they cannot be judged.

    ``pairs``: the (title, section) pairs a header was called with, which its answer must cover exactly.
    """
    if len(reported) > MAX_TEXT * 10:
        return {}, _("the answers are too large to judge")
    try:
        raw = json.loads(reported)  # NaN and the infinities are read, and refused where a number is asked
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
            return {}, say("`{name}` could not be read: {error}", name=name, error=readable(str(entry["error"]), 200))
        value, why = _kind(name, entry.get("value"), kind, pairs)
        if why:
            return {}, why
        answers[name] = value
    return answers, None


def header_pairs(course: Course) -> list[tuple[str, str]]:
    """Every (document title, section) pair a header is asked for: those of strategy E's chunks, in order."""
    return list(dict.fromkeys((c.doc_title, c.section) for c in course.chunks("E")))
