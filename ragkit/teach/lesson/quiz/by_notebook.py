"""Which questions each notebook's knowledge check asks, in a student's order."""

from __future__ import annotations

import dataclasses
import hashlib
import random
from typing import TYPE_CHECKING

from ragkit.teach.exercises.results import current_student
from ragkit.teach.lesson.quiz.answering import (
    approximate_questions,
    citations_questions,
    production_questions,
    thresholds_questions,
)
from ragkit.teach.lesson.quiz.question import QuizQuestion
from ragkit.teach.lesson.quiz.ranking import (
    distances_questions,
    rerank_questions,
    statistics_further_questions,
    tuning_questions,
)
from ragkit.teach.lesson.quiz.retrieving import (
    bm25_questions,
    chunking_questions,
    dense_questions,
    start_here_questions,
)

if TYPE_CHECKING:
    from ragkit.teach.course import Course

__all__ = ["BUILDERS", "key", "questions", "shuffled"]


BUILDERS = {
    "00": start_here_questions,
    "01": chunking_questions,
    "02": dense_questions,
    "02b": statistics_further_questions,
    "03": bm25_questions,
    "03b": tuning_questions,
    "04": rerank_questions,
    "05": distances_questions,
    "06": thresholds_questions,
    "07": citations_questions,
    "08": production_questions,
    "08b": approximate_questions,
}


def key(notebook: str) -> str:
    """A notebook's knowledge-check key: what its name starts with before the first dash ('06', '03b')."""
    return notebook.split("-", 1)[0]


def shuffled(questions: list[QuizQuestion], notebook: str, student: str) -> list[QuizQuestion]:
    """The questions with their options in this student's order: the same on every reload, another student's differs."""
    out = []
    for i, q in enumerate(questions):
        seed = hashlib.sha256(f"{student}\0{notebook}\0{i}".encode()).digest()
        options = list(q.options)
        random.Random(seed).shuffle(options)
        out.append(dataclasses.replace(q, options=tuple(options)))
    return out


def questions(notebook: str, course: Course, student: str | None = None) -> list[QuizQuestion]:
    """The knowledge check of one notebook ('00' to '08b') in a student's order (default: this kernel's
    student)."""
    try:
        build = BUILDERS[key(notebook)]
    except KeyError:
        raise KeyError(f"no knowledge check for notebook {notebook!r}: use one of {', '.join(BUILDERS)}") from None
    return shuffled(build(course), key(notebook), student or current_student())
