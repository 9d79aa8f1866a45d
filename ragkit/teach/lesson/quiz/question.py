"""A knowledge-check question as plain data: its options, which one is right and why, and what kind it is."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ragkit.teach.language import _

__all__ = ["Option", "QuizQuestion", "applied", "asked_before_reveal", "yes_no"]


@dataclass(frozen=True)
class Option:
    """One answer to choose, whether it is right, and why: the reason alone, which the feedback puts after its verdict.

    ``text`` and ``why`` are inline Markdown (a `code span`), as a question's prompt is.
    """

    text: str
    right: bool
    why: str


@dataclass(frozen=True)
class QuizQuestion:
    """A multiple-choice question with exactly one right option."""

    prompt: str
    options: tuple[Option, ...]
    applies: bool = False
    """The question applies the idea to a new case (its right option computed from the course), not recall."""
    before_reveal: bool = False
    """The question tests the notebook's prediction, so it is asked before the result that answers it
    (``Quiz(notebook, course, before_reveal=True)``), not in the knowledge check at the end."""

    def __post_init__(self):
        if sum(o.right for o in self.options) != 1:
            raise ValueError(f"{self.prompt!r} needs exactly one right option")


def yes_no(prompt: str, yes: bool, why_yes: str, why_no: str) -> QuizQuestion:
    """A yes-or-no question; both options explain with the reason of the answer that is right."""
    why = why_yes if yes else why_no
    return QuizQuestion(prompt, (Option(_("yes"), yes, why), Option(_("no"), not yes, why)))


def asked_before_reveal(question: QuizQuestion) -> QuizQuestion:
    """The same question, asked where the notebook's prediction is made, before the result gives its answer away."""
    return dataclasses.replace(question, before_reveal=True)


def applied(prompt: str, options: tuple[Option, ...]) -> QuizQuestion:
    """A question that applies the notebook's idea to a new case, its right option computed from the course."""
    return QuizQuestion(prompt, options, applies=True)
