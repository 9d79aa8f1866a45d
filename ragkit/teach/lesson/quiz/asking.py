"""The knowledge check as ipywidgets: radio buttons per question, and feedback that explains every option."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import ipywidgets as w
from markdown_it import MarkdownIt

from ragkit.teach.exercises import Feedback, record
from ragkit.teach.language import _, say
from ragkit.teach.lesson.quiz.by_notebook import key, questions
from ragkit.teach.lesson.quiz.question import Option, QuizQuestion

if TYPE_CHECKING:
    from ragkit.teach.course import Course

__all__ = ["Quiz", "as_sentence", "explained", "markdown", "unmarked"]


_MARKDOWN = MarkdownIt("commonmark", {"html": False})


def markdown(text: str) -> str:
    """``text``'s inline Markdown as HTML (a `code span` becomes <code>), every other character escaped."""
    return _MARKDOWN.renderInline(text)


def unmarked(text: str) -> str:
    """``text`` as a radio button can show it: the words of its inline Markdown without the marks."""
    tokens = _MARKDOWN.parseInline(text)[0].children or []
    return "".join(
        t.content if t.type in ("text", "code_inline") else " " if t.type.endswith("break") else "" for t in tokens
    )


def as_sentence(reason: str) -> str:
    """A reason written as a sentence of its own: a capital first letter (unless it starts a name such as
    efSearch or a code span) and a full stop."""
    first = reason.split(" ", 1)[0]
    if first.isalpha() and first.islower():
        reason = reason[0].upper() + reason[1:]
    return reason if reason.endswith((".", "?", "!")) else reason + "."


def explained(option: Option) -> str:
    """An option's feedback as two sentences, its verdict and its reason: "✓ “no” is right. The worst ..." (HTML)."""
    mark, verdict = (
        ("&#10003;", say("“{option}” is right.", option=markdown(option.text)))
        if option.right
        else ("&#10007;", say("“{option}” is wrong.", option=markdown(option.text)))
    )
    return f"{mark} {verdict} {markdown(as_sentence(option.why))}"


class Quiz:
    """Radio buttons per question and one button; the feedback explains every option, right and wrong.

    The knowledge check at a notebook's end asks every question but those that test its prediction; with
    ``before_reveal`` the quiz asks only those, where the prediction is made, and records its score apart.
    """

    def __init__(self, notebook: str, course: Course, student: str | None = None, before_reveal: bool = False):
        asked = [q for q in questions(notebook, course, student) if q.before_reveal == before_reveal]
        if not asked:
            raise ValueError(
                f"notebook {notebook!r} has no question {'before' if before_reveal else 'after'} its "
                "reveal: drop before_reveal=True, or mark a question with asked_before_reveal"
            )
        self._ask(key(notebook), asked, before_reveal)

    def _ask(self, notebook: str, asked: list[QuizQuestion], before_reveal: bool) -> None:
        self.notebook, self.before_reveal, self.questions = notebook, before_reveal, asked
        # a radio button shows plain text: its label is the option without Markdown's marks, its value the option
        self.choices = [
            w.RadioButtons(
                options=[(unmarked(o.text), o.text) for o in q.options], value=None, layout=w.Layout(width="auto")
            )
            for q in self.questions
        ]
        self.feedback = [w.HTML() for _ in self.questions]
        # a button is 148 px wide by default and cuts a longer label ("controleer mijn a..."): as wide as its label
        self.button = w.Button(
            description=_("check my answers"),
            button_style="primary",
            layout=w.Layout(width="auto", min_width="max-content"),
        )
        self.score = w.HTML()
        self.button.on_click(lambda _: self.check())

    def check(self) -> int:
        """Show the feedback for every question, record the score in the results file; return how many were right."""
        right = answered = 0
        for q, choice, out in zip(self.questions, self.choices, self.feedback):
            if choice.value is None:
                out.value = _("<i>choose an option first</i>")
                continue
            answered += 1
            picked = next(o for o in q.options if o.text == choice.value)
            right += picked.right
            verdict = (
                _("<b style='color:#2e7d32'>right</b>") if picked.right else _("<b style='color:#c62828'>not quite</b>")
            )
            items = "".join(f"<li>{explained(o)}</li>" for o in q.options)
            out.value = f"{verdict}<ul>{items}</ul>"
        name = f"quiz {self.notebook}" + (" before the reveal" if self.before_reveal else "")
        recorded = record(
            name,
            Feedback(
                right == len(self.questions),
                (),
                {"right": right, "answered": answered, "questions": len(self.questions)},
            ),
        )
        notes = "".join(f"<br><i>{html.escape(n)}</i>" for n in recorded.notes)
        self.score.value = (
            say("<b>{right} of {questions} right</b>", right=right, questions=len(self.questions)) + notes
        )
        return right

    def widget(self) -> w.Widget:
        """The assembled quiz to display."""
        rows = []
        for i, (q, choice, out) in enumerate(zip(self.questions, self.choices, self.feedback), 1):
            rows += [w.HTML(f"<b>{i}. {markdown(q.prompt)}</b>"), choice, out]
        return w.VBox(rows + [w.HBox([self.button, self.score])])
