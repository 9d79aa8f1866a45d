"""The exercises: their rules, the feedback a check gives and records, a module per exercise's check, the results file.

Every check appends one JSON line to the student's results file (``RAGKIT_RESULTS``, else
``~/.ragkit/results.jsonl``), written by ``results``; the teacher's side (grading, class-report) is
``ragkit.teach.grading``, which may import this room, never the other way round.
"""

from ragkit.teach.exercises.ex1_destroyed_needle import (
    check_destroyed_needle as check_destroyed_needle,
)
from ragkit.teach.exercises.ex1_destroyed_needle import (
    own_size as own_size,
)
from ragkit.teach.exercises.ex2_threshold import (
    check_threshold_choice as check_threshold_choice,
)
from ragkit.teach.exercises.ex2_threshold import (
    cost_minima as cost_minima,
)
from ragkit.teach.exercises.ex2_threshold import (
    cost_table as cost_table,
)
from ragkit.teach.exercises.ex2_threshold import (
    exercise_cost as exercise_cost,
)
from ragkit.teach.exercises.ex2_threshold import (
    passed_here as passed_here,
)
from ragkit.teach.exercises.ex2_threshold import (
    refusal_ceiling as refusal_ceiling,
)
from ragkit.teach.exercises.ex2_threshold import (
    threshold_halves as threshold_halves,
)
from ragkit.teach.exercises.ex3_tickets import (
    TICKET_HINT as TICKET_HINT,
)
from ragkit.teach.exercises.ex3_tickets import (
    check_ticket_phrasings as check_ticket_phrasings,
)
from ragkit.teach.exercises.ex3_tickets import (
    ticket_measures as ticket_measures,
)
from ragkit.teach.exercises.ex4_header import (
    HeaderRun as HeaderRun,
)
from ragkit.teach.exercises.ex4_header import (
    check_header as check_header,
)
from ragkit.teach.exercises.ex4_header import (
    measure_header as measure_header,
)
from ragkit.teach.exercises.ex5_own_document import (
    PARAPHRASE_HINT as PARAPHRASE_HINT,
)
from ragkit.teach.exercises.ex5_own_document import (
    check_own_document as check_own_document,
)
from ragkit.teach.exercises.ex5_own_document import (
    copied_sentence as copied_sentence,
)
from ragkit.teach.exercises.ex5_own_document import (
    reworded_sentence as reworded_sentence,
)
from ragkit.teach.exercises.ex5_own_document import (
    sentences as sentences,
)
from ragkit.teach.exercises.ex5_own_document import (
    shared_runs as shared_runs,
)
from ragkit.teach.exercises.feedback import (
    Feedback as Feedback,
)
from ragkit.teach.exercises.feedback import (
    embedded as embedded,
)
from ragkit.teach.exercises.feedback import (
    question_of as question_of,
)
from ragkit.teach.exercises.feedback import (
    record as record,
)
from ragkit.teach.exercises.feedback import (
    truncation_note as truncation_note,
)
from ragkit.teach.exercises.feedback import (
    whole_number as whole_number,
)
from ragkit.teach.exercises.results import (
    EXERCISES as EXERCISES,
)
from ragkit.teach.exercises.results import (
    HUB_USER_ENV as HUB_USER_ENV,
)
from ragkit.teach.exercises.results import (
    NOBODY as NOBODY,
)
from ragkit.teach.exercises.results import (
    RESULTS_ENV as RESULTS_ENV,
)
from ragkit.teach.exercises.results import (
    SHARED_LOGINS as SHARED_LOGINS,
)
from ragkit.teach.exercises.results import (
    STUDENT_ENV as STUDENT_ENV,
)
from ragkit.teach.exercises.results import (
    append_result as append_result,
)
from ragkit.teach.exercises.results import (
    current_student as current_student,
)
from ragkit.teach.exercises.results import (
    login as login,
)
from ragkit.teach.exercises.results import (
    results_path as results_path,
)
from ragkit.teach.exercises.results import (
    student as student,
)
from ragkit.teach.exercises.results import (
    system_student as system_student,
)
from ragkit.teach.exercises.rules import (
    CUT_GRID as CUT_GRID,
)
from ragkit.teach.exercises.rules import (
    EX1 as EX1,
)
from ragkit.teach.exercises.rules import (
    EX2 as EX2,
)
from ragkit.teach.exercises.rules import (
    EX3 as EX3,
)
from ragkit.teach.exercises.rules import (
    EX4 as EX4,
)
from ragkit.teach.exercises.rules import (
    EX5 as EX5,
)
from ragkit.teach.exercises.rules import (
    HINTS as HINTS,
)
from ragkit.teach.exercises.rules import (
    OWN_SIZES as OWN_SIZES,
)
from ragkit.teach.exercises.rules import (
    RUN as RUN,
)
from ragkit.teach.exercises.rules import (
    TOLERANCE as TOLERANCE,
)
from ragkit.teach.exercises.rules import (
    DocumentRules as DocumentRules,
)
from ragkit.teach.exercises.rules import (
    HeaderRules as HeaderRules,
)
from ragkit.teach.exercises.rules import (
    HintRules as HintRules,
)
from ragkit.teach.exercises.rules import (
    NeedleRules as NeedleRules,
)
from ragkit.teach.exercises.rules import (
    ThresholdRules as ThresholdRules,
)
from ragkit.teach.exercises.rules import (
    TicketRules as TicketRules,
)

__all__ = [
    "CUT_GRID",
    "EX1",
    "EX2",
    "EX3",
    "EX4",
    "EX5",
    "EXERCISES",
    "HINTS",
    "HUB_USER_ENV",
    "NOBODY",
    "OWN_SIZES",
    "PARAPHRASE_HINT",
    "RESULTS_ENV",
    "RUN",
    "SHARED_LOGINS",
    "STUDENT_ENV",
    "TICKET_HINT",
    "TOLERANCE",
    "DocumentRules",
    "Feedback",
    "HeaderRules",
    "HeaderRun",
    "HintRules",
    "NeedleRules",
    "ThresholdRules",
    "TicketRules",
    "append_result",
    "check_destroyed_needle",
    "check_header",
    "check_own_document",
    "check_threshold_choice",
    "check_ticket_phrasings",
    "copied_sentence",
    "cost_minima",
    "cost_table",
    "current_student",
    "embedded",
    "exercise_cost",
    "login",
    "measure_header",
    "own_size",
    "passed_here",
    "question_of",
    "record",
    "refusal_ceiling",
    "results_path",
    "reworded_sentence",
    "sentences",
    "shared_runs",
    "student",
    "system_student",
    "threshold_halves",
    "ticket_measures",
    "truncation_note",
    "whole_number",
]


def __getattr__(name: str) -> object:
    """Names an older copy of an exercise notebook imports from here (``ragkit.teach.moved``)."""
    from ragkit.teach.moved import moved_name

    return moved_name(__name__, name)
