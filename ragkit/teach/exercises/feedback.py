"""What a check answers and records: passed or not yet, notes, numbers and hints, appended to the results file."""

from __future__ import annotations

import dataclasses
import datetime
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ragkit.data import Question
from ragkit.errors import InputError
from ragkit.retrieval import Retriever
from ragkit.teach.exercises.results import RESULTS_ENV, append_result, current_student, results_path
from ragkit.teach.exercises.rules import HINTS
from ragkit.teach.language import _, say
from ragkit.tokens import TruncationWarning

__all__ = ["Feedback", "embedded", "question_of", "record", "truncation_note", "whole_number"]

if TYPE_CHECKING:
    from ragkit.teach.course import Course


@dataclass(frozen=True)
class Feedback:
    """The outcome of a check: passed or not yet, what to look at, and the numbers behind it."""

    passed: bool
    notes: tuple[str, ...] = field(default=())
    numbers: dict = field(default_factory=dict, compare=False)
    hints: tuple[str, ...] = field(default=())
    """Where to look next: given freely at first, then only every few attempts (``HINTS``)."""

    @property
    def outcome(self) -> str:
        """PASSED or NOT YET, in the kernel's language."""
        return _("PASSED") if self.passed else _("NOT YET")

    def _lines(self) -> list[str]:
        return [f"- {n}" for n in self.notes] + [say("- hint: {hint}", hint=h) for h in self.hints]

    def __str__(self) -> str:
        return "\n".join([self.outcome] + self._lines())

    def _repr_markdown_(self) -> str:
        colour = "#2e7d32" if self.passed else "#c62828"
        notes = "\n".join(self._lines())
        return f"<b style='color:{colour}'>{self.outcome}</b>\n\n{notes}"


def record(exercise: str, feedback: Feedback) -> Feedback:
    """Append the check's outcome to the results file; if that fails, say so in the feedback instead."""
    try:
        path = results_path()
        attempt = append_result(
            path,
            {
                "exercise": exercise,
                "student": current_student(),
                "time": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                "passed": feedback.passed,
                "numbers": feedback.numbers,
            },
        )
    except OSError as exc:
        return dataclasses.replace(
            feedback,
            notes=feedback.notes
            + (
                say(
                    "your result was not recorded ({reason} for {path}): set {variable} to a file you can write",
                    reason=exc.strerror,
                    path=str(path),
                    variable=RESULTS_ENV,
                ),
            ),
        )
    except InputError as exc:
        return dataclasses.replace(
            feedback,
            notes=feedback.notes
            + (
                say(
                    "your result was not recorded ({reason}): set {variable} to a file of your own",
                    reason=str(exc),
                    variable=RESULTS_ENV,
                ),
            ),
        )
    if feedback.hints and attempt > HINTS.free and attempt % HINTS.every:
        return dataclasses.replace(
            feedback,
            hints=(),
            notes=feedback.notes
            + (
                say(
                    "attempt {attempt}: after {free} attempts a hint comes once every {every} attempts; "
                    "think about the numbers above before the next try",
                    attempt=attempt,
                    free=HINTS.free,
                    every=HINTS.every,
                ),
            ),
        )
    return feedback


def embedded(chunks) -> tuple[Retriever, tuple[str, ...]]:
    """A retriever over these chunks; a truncation warning becomes a note instead of red text on stderr."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TruncationWarning)
        retriever = Retriever(chunks, progress=False)
    return retriever, tuple(truncation_note(w.message) for w in caught if isinstance(w.message, TruncationWarning))


def truncation_note(warning: TruncationWarning) -> str:
    """A truncation warning as a note in the kernel's language, from its counts."""
    if warning.embedding:
        return say(
            "note: {over} of {texts:,} texts exceed the encoder's {window}-piece window: the encoder embeds only "
            "their beginning. Use smaller chunks or a shorter header.",
            over=warning.over,
            texts=warning.texts,
            window=warning.window,
        )
    return say(
        "note: {over} of {texts} chunks are longer than the encoder's {window}-piece window and will be truncated "
        "when embedded: use smaller chunks or a shorter header",
        over=warning.over,
        texts=warning.texts,
        window=warning.window,
    )


def question_of(course: Course, qid: str | None) -> Question | None:
    """The course question with this id, or None."""
    return next((q for q in course.questions if q.id == qid), None)


def whole_number(value: object) -> bool:
    """An integer a student may write: int or a numpy integer, never a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
