"""Predict, then see: a student writes a guess in ``my_prediction`` before a notebook's central result, and the
cell that reveals the result answers that guess first ("you predicted 3; the measurement says 7").

The prediction is a plain variable in a code cell, not a widget: a variable survives a re-run and a reload, is saved
in the notebook (a teacher reading a submission sees it), and reads the same in the static book. A widget's value
is lost on reload unless its state is saved, and the book shows a widget only as a note. An empty prediction (None)
never stops Run All, and never gives the answer away either: the reveal stays folded (an HTML ``<details>``, which
JupyterLab and the book both show closed) under a line that asks for the guess, and a student who opens it anyway
reads that they chose to see it without one. Nothing here is graded: the grader judges only the exercises' declared
answers, and no prediction is recorded in the results file.
"""

from __future__ import annotations

import html
import math
import numbers
import re
from collections.abc import Mapping
from dataclasses import dataclass

from IPython.display import HTML, Markdown

from ragkit.teach.language import _, current, number, say, word
from ragkit.teach.untrusted import readable

__all__ = [
    "NAME",
    "SHOWN_CHARACTERS",
    "Asked",
    "Choice",
    "Count",
    "Share",
    "ahead",
    "folded_block",
    "reminder",
    "reply",
    "reveal",
]

NAME = "my_prediction"
"""The variable every main notebook's prediction cell assigns (its cell starts ``my_prediction = None``)."""
SHOWN_CHARACTERS = 80
"""How much of a student's text a reveal repeats: a pasted essay is cut, its length said."""
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&])")


@dataclass(frozen=True)
class Count:
    """A whole number from 0 to ``most``: how many of the things the notebook counts."""

    most: int


@dataclass(frozen=True)
class Share:
    """A share from 0 to 1, as a hit rate is written; a percentage (``80`` or ``"80%"``) is read as 0.8."""


@dataclass(frozen=True)
class Choice:
    """One of a few options, written as words; the student's words match an option whatever their case."""

    options: tuple[str, ...]

    def __post_init__(self):
        if len(self.options) < 2 or len(set(map(_key, self.options))) != len(self.options):
            raise ValueError(f"a choice needs two or more distinct options, not {self.options!r}")


Asked = Count | Share | Choice


def _key(text: str) -> str:
    return " ".join(text.casefold().split())


def _literal(text: str) -> str:
    """A student's text as Markdown shows it: bounded, control characters escaped, no markup of its own."""
    cut = _MARKDOWN.sub(r"\\\1", readable(text[:SHOWN_CHARACTERS], None))
    return cut + "…" if len(text) > SHOWN_CHARACTERS else cut


def _empty(prediction: object) -> bool:
    return prediction is None or (isinstance(prediction, str) and not prediction.strip())


def _number(prediction: object) -> float | None:
    """The prediction as a finite number, or None when it is not one (a bool, a list, a word, NaN)."""
    if isinstance(prediction, bool):
        return None
    if isinstance(prediction, str):
        text = _plain_number(prediction.strip())
        if text is None:
            return None
        try:
            value = float(text) if len(text) <= 40 else math.nan
        except ValueError:
            return None
        return value if math.isfinite(value) else None
    if isinstance(prediction, numbers.Integral):
        return float(prediction) if abs(int(prediction)) <= 10**15 else math.inf
    if isinstance(prediction, numbers.Real):
        try:
            value = float(prediction)
        except (OverflowError, ValueError):
            return None
        return value if math.isfinite(value) else None
    return None


def _plain_number(text: str) -> str | None:
    """A number typed as text, as Python reads it, or None when it is ambiguous: thousands separators only before groups
    of three digits, the decimal mark the kernel's language writes or Python's point ("0,8" is 0.8 in Dutch, "1.500"
    is 1500 there, "0.8" stays 0.8; in English "0,9" is neither, and the student is asked to write it again)."""
    thousands, decimal = (".", ",") if current() == "nl" else (",", ".")
    grouped = re.fullmatch(rf"([+-]?\d{{1,3}}(?:{re.escape(thousands)}\d{{3}})+)((?:{re.escape(decimal)}\d+)?)", text)
    if grouped:
        return grouped[1].replace(thousands, "") + grouped[2].replace(decimal, ".")
    if re.fullmatch(rf"[+-]?\d*{re.escape(decimal)}\d+", text):
        return text.replace(decimal, ".")
    if re.fullmatch(r"[+-]?\d*\.\d+", text):  # Python's own decimal point, as the examples write it
        return text
    return None if thousands in text else text


def _as_share(prediction: object) -> float | None:
    """A share from 0 to 1: a percentage ("80%", or 80 written without its sign) divided by 100; None otherwise."""
    percent = isinstance(prediction, str) and prediction.strip().endswith("%")
    guess = _number(str(prediction).strip()[:-1] if percent else prediction)
    if guess is not None and (percent or 1 < guess <= 100):
        guess = guess / 100
    return guess if guess is not None and 0 <= guess <= 1 else None


def _described(prediction: object) -> str:
    """What a prediction that cannot be read is, without calling its own ``repr`` (a student's object may lie)."""
    if isinstance(prediction, str):
        return say("the text “{text}”", text=_literal(prediction))
    if isinstance(prediction, numbers.Real) and not isinstance(prediction, bool):
        return _literal(_safe_number(prediction))
    return say("a value of type {kind}", kind=_literal(type(prediction).__name__))


def _safe_number(value: numbers.Real) -> str:
    if isinstance(value, numbers.Integral):
        return str(int(value)) if abs(int(value)) < 10**40 else _("a whole number of more than 40 digits")
    try:
        real = float(value)
    except (OverflowError, ValueError):
        return _("a number too large to write")
    if math.isnan(real):
        return _("NaN")
    return number(real, "g") if math.isfinite(real) else _("an infinity")


def _unread(prediction: object, asked: Asked) -> str:
    """What to write instead of a prediction that cannot be read as the kind asked."""
    what = _described(prediction)
    if isinstance(asked, Count):
        return say(
            "Your prediction, {what}, is not a number from 0 to {most}: write one there (a whole number, "
            "no quotes needed) and run this cell again.",
            what=what,
            most=asked.most,
        )
    if isinstance(asked, Share):
        return say(
            "Your prediction, {what}, is not a share from 0 to 1 (or a percentage): write one there, e.g. "
            '0.5 or "50%", and run this cell again.',
            what=what,
        )
    return say(
        "Your prediction, {what}, is not one of the options ({options}): copy one of them there and run this cell "
        "again.",
        what=what,
        options=", ".join(say("“{option}”", option=word(o)) for o in asked.options),
    )


def _count(prediction: object, asked: Count, measured: int) -> str | None:
    guess = _number(prediction)
    if guess is None or not 0 <= guess <= asked.most:
        return None
    gap = measured - guess
    if gap == 0:
        return say(
            "You predicted **{guess}**; the measurement says **{measured}**: exactly right.",
            guess=_counted(guess),
            measured=_counted(measured),
        )
    return say(
        "You predicted **{guess}**; the measurement says **{measured}**: **{gap}** {direction} than you expected.",
        guess=_counted(guess),
        measured=_counted(measured),
        gap=_counted(abs(gap)),
        direction=_("more") if gap > 0 else _("fewer"),
    )


def _counted(value: float) -> str:
    """A count as people write it: whole numbers without decimals, a half-guess with one."""
    return number(value, ",.0f") if value == int(value) else number(value, ",.1f")


def _share(prediction: object, measured: float) -> str | None:
    guess = _as_share(prediction)
    if guess is None:
        return None
    points = round(100 * (measured - guess))
    if points == 0:
        return say(
            "You predicted **{guess:.2f}**; the measurement says **{measured:.3f}**: within a point of it.",
            guess=guess,
            measured=measured,
        )
    return say(
        "You predicted **{guess:.2f}**; the measurement says **{measured:.3f}**: **{points}** percentage "
        "points {direction} than you expected.",
        guess=guess,
        measured=measured,
        points=abs(points),
        direction=_("higher") if points > 0 else _("lower"),
    )


def _choice(prediction: object, asked: Choice, measured: str) -> str | None:
    options = {_key(o): o for o in asked.options} | {_key(word(o)): o for o in asked.options}
    picked = options.get(_key(prediction)) if isinstance(prediction, str) and len(prediction) <= 200 else None
    if picked is None:
        return None
    if picked == measured:
        return say(
            "You predicted **{guess}**; this run says **{measured}**: right.",
            guess=word(picked),
            measured=word(measured),
        )
    return say(
        "You predicted **{guess}**; this run says **{measured}**: not this time, and the reasons below are "
        "worth a second look.",
        guess=word(picked),
        measured=word(measured),
    )


def _measurement(asked: Asked, measured: object) -> str:
    """The measurement alone, for a reveal that has no prediction to answer."""
    if isinstance(asked, Share):
        return say("The measurement says **{measured:.3f}**.", measured=measured)
    if isinstance(asked, Count):
        return say("The measurement says **{measured}**.", measured=_counted(measured))  # type: ignore[arg-type]
    return say("This run says **{measured}**.", measured=word(str(measured)))


def reply(prediction: object, asked: Asked, measured: object) -> str:
    """The sentence that answers a prediction with the measurement (Markdown); never raises on what a student wrote.

    An empty prediction gets the reminder, a value of the wrong kind (a word for a count, NaN, a list, an essay) a
    sentence that says what to write instead: neither gives the measurement, which ``reveal`` keeps folded for them.
    """
    said = _answered(prediction, asked, measured)
    if said is not None:
        return said
    return reminder() if _empty(prediction) else _unread(prediction, asked)


def _answered(prediction: object, asked: Asked, measured: object) -> str | None:
    """The sentence that answers a prediction it can read, or None for an empty or unreadable one."""
    if isinstance(asked, Count):
        return _count(prediction, asked, int(measured))  # type: ignore[call-overload]
    if isinstance(asked, Share):
        return _share(prediction, float(measured))  # type: ignore[arg-type]
    if isinstance(asked, Choice):
        if not isinstance(measured, str) or measured not in asked.options:
            raise ValueError(f"the measurement {measured!r} is not one of the options {asked.options!r}")
        return _choice(prediction, asked, measured)
    raise TypeError(f"asked must be a Count, a Share or a Choice, not {type(asked).__name__}")


def ahead(values: Mapping[str, float], tie: str) -> str:
    """The name whose value is largest, or ``tie`` when the largest is shared: the measurement of a Choice."""
    if not values:
        raise ValueError("ahead needs at least one value")
    top = max(values.values())
    leaders = [name for name, value in values.items() if value == top]
    return leaders[0] if len(leaders) == 1 else tie


def reminder() -> str:
    """The line shown above a folded reveal when ``my_prediction`` is empty: italic, a suggestion, never an error."""
    return say(
        "*No prediction yet: write your guess in `{name}` above and run this cell again. A guess written down "
        "before the measurement, even a rough one, is the quickest way to find out what you expected and why.*",
        name=NAME,
    )


def folded_block(summary: str, body: str) -> str:
    """Markdown shown folded in JupyterLab and in the book: ``summary`` (plain text) on a line that opens it, ``body``
    (Markdown) inside."""
    return say(
        "<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>", summary=html.escape(summary), body=body
    )


def reveal(
    prediction: object, asked: Asked, measured: object, interpretation: Markdown | HTML | str | None = None
) -> Markdown:
    """The answer to the prediction, then the notebook's interpretation of the result (if any): one Markdown output.

    Without a prediction it can read (Run All before a guess was written), what to write stays in view and the
    measurement and its interpretation stay folded; opened, they say that they were seen without a prediction.
    """
    said = "" if interpretation is None else interpretation if isinstance(interpretation, str) else interpretation.data
    answered = _answered(prediction, asked, measured)
    if answered is not None:
        return Markdown(answered + ("\n\n" + said if said else ""))
    body = _("*You chose to see this without a prediction.*") + " " + _measurement(asked, measured)
    return Markdown(
        reply(prediction, asked, measured)
        + "\n\n"
        + folded_block(_("Open this to see the answer without a prediction."), body + ("\n\n" + said if said else ""))
    )
