"""Exercise 1's check: a needle that blind chunking at the student's own window size destroys."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from ragkit.chunking import SIZE, blind_window_start, chunk_corpus
from ragkit.evaluation import needle_hits
from ragkit.teach.exercises.feedback import Feedback, _question, _whole, record
from ragkit.teach.exercises.results import current_student
from ragkit.teach.exercises.rules import EX1
from ragkit.teach.untrusted import shown

if TYPE_CHECKING:
    from ragkit.teach.course import Course


def own_size(name: str | None = None) -> int:
    """The blind window size assigned to a student: a stable hash of the name, never the course's 512."""
    digest = hashlib.sha256((name or current_student()).encode("utf-8")).digest()
    return EX1.sizes[int.from_bytes(digest[:4], "big") % len(EX1.sizes)]


def check_destroyed_needle(course: Course, question_id: str | None, cut_at: int | None,
                           size: int | None = None, *, student: str | None = None) -> Feedback:
    """Exercise 1: a needle that blind chunking at your own window size destroys, and where the window cuts it.

    ``size`` is there to be read, not chosen: the window is ``own_size()``, from who you are; any other is refused.
    ``student`` is the grader's: it names whose size judges (by the grader's path rule); a kernel leaves it out.
    """
    mine = own_size(student)
    size = mine if size is None else size
    if question_id is None or cut_at is None:
        return Feedback(False, (f"set `question_id` (like 'qNN') and `cut_at` (a character offset) for windows of "
                                f"{mine} characters first",
                                "hint: `needle_windows(course.corpus, course.questions, size=my_size)` tells where "
                                "each needle sits in its window"))
    if not (_whole(size) and int(size) == mine):
        return record("ex1", Feedback(False, (f"window size {shown(repr(size))}: the exercise is judged at your own "
                                              f"size, {mine} (`own_size()`, from who you are), not {SIZE} or any "
                                              "other",), {"size": mine}))
    if not isinstance(question_id, str) or not _whole(cut_at):
        return record("ex1", Feedback(False, (f"`question_id` is {shown(repr(question_id))} and `cut_at` "
                                              f"{shown(repr(cut_at))}: give a question id as text ('q07') and a "
                                              "character offset as a whole number (1536)",), {"size": size}))
    cut_at = int(cut_at)
    numbers = {"size": size, "question": question_id, "cut_at": cut_at}
    q = _question(course, question_id)
    if q is None:
        return record("ex1", Feedback(False, (f"there is no question {shown(repr(question_id))}; ids run from "
                                              f"{course.questions[0].id} to {course.questions[-1].id}",), numbers))
    doc = course.corpus[q.doc_id]
    start = doc.text.find(q.needle)
    end = start + len(q.needle)
    if needle_hits(chunk_corpus(course.corpus, EX1.strategy, size=size), [q]).any():
        return record("ex1", Feedback(False, (f"{question_id} survives blind chunking at {size} characters: one chunk "
                                              "carries its whole needle",
                                              f"a needle dies when a {size}-character window ends inside it: look "
                                              f"for offset + length > {size}"), numbers))
    cut = blind_window_start(doc, end - 1, size)
    if cut_at != cut:
        side = "before the needle starts" if cut_at <= start else "after it ends" if cut_at >= end else \
            "inside the needle, but not where a window ends"
        return record("ex1", Feedback(False, (f"right question: {question_id} is destroyed by strategy A at {size}",
                                              f"but {cut_at} is {side}"), numbers,
                                      hints=(f"windows restart right after the title line, every {size} characters",)))
    return record("ex1", Feedback(True, (f"{question_id}'s needle spans characters {start}-{end}; the {size}-character "
                                         f"blind window that starts at {cut} cuts it {cut - start} characters in",
                                         "no retriever can recover it: its recall ceiling under A is zero"), numbers))
