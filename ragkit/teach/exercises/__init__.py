"""The exercises: their rules, the feedback a check gives and records, a module per exercise's check, the results file.

Every check appends one JSON line to the student's results file (``RAGKIT_RESULTS``, else
``~/.ragkit/results.jsonl``), written by ``results``; the teacher's side (grading, class-report) is
``ragkit.teach.grading``, which may import this room, never the other way round.
"""

from ragkit.teach.exercises import (
    ex1_destroyed_needle,
    ex2_threshold,
    ex3_tickets,
    ex4_header,
    ex5_own_document,
    ex6_rank_metrics,
    ex7_efsearch,
    feedback,
    project_check,
    results,
    rules,
)
from ragkit.teach.exercises.ex1_destroyed_needle import *
from ragkit.teach.exercises.ex2_threshold import *
from ragkit.teach.exercises.ex3_tickets import *
from ragkit.teach.exercises.ex4_header import *
from ragkit.teach.exercises.ex5_own_document import *
from ragkit.teach.exercises.ex6_rank_metrics import *
from ragkit.teach.exercises.ex7_efsearch import *
from ragkit.teach.exercises.feedback import *
from ragkit.teach.exercises.project_check import *
from ragkit.teach.exercises.results import *
from ragkit.teach.exercises.rules import *

__all__ = [
    "ex1_destroyed_needle",
    "ex2_threshold",
    "ex3_tickets",
    "ex4_header",
    "ex5_own_document",
    "ex6_rank_metrics",
    "ex7_efsearch",
    "feedback",
    "project_check",
    "results",
    "rules",
]


def __getattr__(name: str) -> object:
    """Names an older copy of an exercise notebook imports from here (``ragkit.teach.moved``)."""
    from ragkit.teach.moved import moved_name

    return moved_name(__name__, name)
