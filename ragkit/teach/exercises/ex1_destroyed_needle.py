"""Exercise 1's check: a needle that blind chunking at the student's own window size destroys."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from ragkit.chunking import SIZE, blind_window_start, chunk_corpus
from ragkit.evaluation import needle_hits
from ragkit.teach.exercises.feedback import Feedback, question_of, record, whole_number
from ragkit.teach.exercises.results import current_student
from ragkit.teach.exercises.rules import EX1
from ragkit.teach.language import _, say
from ragkit.teach.untrusted import readable

if TYPE_CHECKING:
    from ragkit.teach.course import Course

__all__ = ["check_destroyed_needle", "own_size"]


def own_size(name: str | None = None) -> int:
    """The blind window size assigned to a student: a stable hash of the name, never the course's 512."""
    digest = hashlib.sha256((name or current_student()).encode("utf-8")).digest()
    return EX1.sizes[int.from_bytes(digest[:4], "big") % len(EX1.sizes)]


def check_destroyed_needle(
    course: Course, question_id: str | None, cut_at: int | None, size: int | None = None, *, student: str | None = None
) -> Feedback:
    """Exercise 1: a needle that blind chunking at your own window size destroys, and where the window cuts it.

    ``size`` is there to be read, not chosen: the window is ``own_size()``, from who you are; any other is refused.
    ``student`` is the grader's: it names whose size judges (by the grader's path rule); a kernel leaves it out.
    """
    mine = own_size(student)
    size = mine if size is None else size
    if question_id is None or cut_at is None:
        return Feedback(
            False,
            (
                say(
                    "set `question_id` (like 'qNN') and `cut_at` (a character offset) for windows of "
                    "{mine} characters first",
                    mine=mine,
                ),
                _(
                    "hint: `needle_windows(course.corpus, course.questions, size=my_size)` tells where "
                    "each needle sits in its window"
                ),
            ),
        )
    if not (whole_number(size) and int(size) == mine):
        return record(
            "ex1",
            Feedback(
                False,
                (
                    say(
                        "window size {size}: the exercise is judged at your own size, {mine} "
                        "(`own_size()`, from who you are), not {course_size} or any other",
                        size=readable(repr(size)),
                        mine=mine,
                        course_size=SIZE,
                    ),
                ),
                {"size": mine},
            ),
        )
    if not isinstance(question_id, str) or not whole_number(cut_at):
        return record(
            "ex1",
            Feedback(
                False,
                (
                    say(
                        "`question_id` is {question_id} and `cut_at` {cut_at}: give a "
                        "question id as text ('q07') and a character offset as a whole number (1536)",
                        question_id=readable(repr(question_id)),
                        cut_at=readable(repr(cut_at)),
                    ),
                ),
                {"size": size},
            ),
        )
    cut_at = int(cut_at)
    numbers = {"size": size, "question": question_id, "cut_at": cut_at}
    q = question_of(course, question_id)
    if q is None:
        return record(
            "ex1",
            Feedback(
                False,
                (
                    say(
                        "there is no question {question_id}; ids run from {first} to {last}",
                        question_id=readable(repr(question_id)),
                        first=course.questions[0].id,
                        last=course.questions[-1].id,
                    ),
                ),
                numbers,
            ),
        )
    doc = course.corpus[q.doc_id]
    start = doc.text.find(q.needle)
    end = start + len(q.needle)
    if needle_hits(chunk_corpus(course.corpus, EX1.strategy, size=size), [q]).any():
        return record(
            "ex1",
            Feedback(
                False,
                (
                    say(
                        "{question_id} survives blind chunking at {size} characters: one "
                        "chunk carries its whole needle",
                        question_id=question_id,
                        size=size,
                    ),
                    say(
                        "a needle dies when a {size}-character window ends inside it: look "
                        "for offset + length > {size}",
                        size=size,
                    ),
                ),
                numbers,
            ),
        )
    cut = blind_window_start(doc, end - 1, size)
    if cut_at != cut:
        side = (
            _("before the needle starts")
            if cut_at <= start
            else _("after it ends")
            if cut_at >= end
            else _("inside the needle, but not where a window ends")
        )
        return record(
            "ex1",
            Feedback(
                False,
                (
                    say(
                        "right question: {question_id} is destroyed by strategy A at {size}",
                        question_id=question_id,
                        size=size,
                    ),
                    say("but {cut_at} is {side}", cut_at=cut_at, side=side),
                ),
                numbers,
                hints=(say("windows restart right after the title line, every {size} characters", size=size),),
            ),
        )
    return record(
        "ex1",
        Feedback(
            True,
            (
                say(
                    "{question_id}'s needle spans characters {start}-{end}; the "
                    "{size}-character blind window that starts at {cut} cuts it {into} characters in",
                    question_id=question_id,
                    start=start,
                    end=end,
                    size=size,
                    cut=cut,
                    into=cut - start,
                ),
                _("no retriever can recover it: its recall ceiling under A is zero"),
            ),
            numbers,
        ),
    )
