"""Tables for code, shown for people: a pandas table whose columns keep the names code reads, written in the kernel's
language when a notebook shows it (headings in words, a truth as yes or no, no bare 0, 1, 2 index).

Every room reaches it: a lesson's table, and a tool an exercise hands the student (exercise 2's ``cost_table``).
"""

from __future__ import annotations

import math
import numbers
import re

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from ragkit.teach import language
from ragkit.teach.language import _

__all__ = ["Frame", "header", "positions_only", "truth", "yes_or_no"]


def truth(flag: bool | np.bool_) -> str:
    """A checked fact's truth as a sentence or a table says it: yes or no, in the kernel's language (never Python's
    True and False)."""
    return _("yes") if flag else _("no")


def yes_or_no(flag: bool | np.bool_) -> str:
    """A question's answer as a sentence of its own (``Does it verify? Yes.``): Yes or No, in the kernel's language."""
    return _("Yes") if flag else _("No")


def _words() -> dict[str, str]:
    """Headings the engine's field names stand for, where replacing the underscores would not make words of them."""
    return {
        "out_of_domain": _("out-of-domain queries"),
        "in_domain": _("answerable queries"),
        "answered_with_needle": _("answered with the needle kept"),
        "answered_without_needle": _("answered without the needle"),
        "chapter_bluffs": _("bluffs in the chapter"),
        "doc_id": _("document"),
        "outside_bmp": _("outside the BMP"),
        "outside bmp": _("outside the BMP"),
        "reaches target": _("reaches target"),  # exercise 7's efsearch_recall
    }


def header(name: object) -> object:
    """A column or index heading in words, in the notebook's language (``answered_with_needle`` reads as words)."""
    if not isinstance(name, str):
        return name
    return _words().get(name) or _measured_words().get(name) or language.word(name.replace("_", " "))


def _measured_words() -> dict[str, str]:
    """Headings of the frames notebooks 05 and 07 build themselves (their columns and, for a table whose headings
    are its rows, their row labels), in the notebook's language."""
    return {
        "this corpus": _("this corpus"),
        "the chapter": _("the chapter"),
        "normalised": _("normalised"),
        "un-normalised": _("un-normalised"),
        "word pieces": _("word pieces"),
        "norm, un-normalised": _("norm, un-normalised"),
        "norm, normalised": _("norm, normalised"),
        "L2, un-normalised": _("L2, un-normalised"),
        "query word pieces": _("query word pieces"),
        "query norm, un-normalised": _("query norm, un-normalised"),
        "nearest L2, un-normalised": _("nearest L2, un-normalised"),
        "nearest cosine distance": _("nearest cosine distance"),
        "what is wrong with it": _("what is wrong with it"),
        "first words": _("first words"),
        "the identifier": _("the identifier"),
        "written by": _("written by"),
        "document exists": _("document exists"),
        "verifies": _("verifies"),
        "type": _("type"),
        "label": _("label"),
        "claimed title": _("claimed title"),
        "actual paper": _("actual paper"),
        "prompt": _("prompt"),
        "needle recalled": _("needle recalled"),
        "needle not recalled": _("needle not recalled"),
        "needle-recall rate": _("needle-recall rate"),
        "needle placed": _("needle placed"),
        "source number": _("source number"),
        "recalled": _("recalled"),
        "asked": _("asked"),
        "against the middle": _("against the middle"),
        "retriever": _("retriever"),
    }


def positions_only(index: pd.Index) -> bool:
    """Whether an index is only positions (0, 1, 2 or what a filter left of them): nothing a reader needs."""
    return index.nlevels == 1 and pd.api.types.is_integer_dtype(index.dtype)


class _Styler(Styler):
    """A Styler that writes decimals the way the kernel's language does, whatever format a notebook's code gives it
    (``frame.style.format("{:.3f}")`` writes 0,425 in a Dutch kernel): a separator passed explicitly wins. Its
    headings are shown in words of the notebook's language (``header``) and a truth as yes or no; its data keep
    theirs, so that a notebook's ``format`` and ``hide`` still name the columns as its code does."""

    def format(
        self,
        formatter=None,
        subset=None,
        na_rep=None,
        precision=None,
        decimal=None,
        thousands=None,
        escape=None,
        hyperlinks=None,
    ):
        if decimal is None:
            decimal = "," if language.current() == "nl" else "."
            worded = _in_words(formatter) if decimal == "," else None
            if worded is not None:  # written by the language itself (2,46 · 10⁻⁷, 1.068): pandas swaps nothing more
                formatter, decimal = worded, "."
        return super().format(formatter, subset, na_rep, precision, decimal, thousands, escape, hyperlinks)

    def _render(self, *args, **kwargs):
        data: pd.DataFrame = self.data  # type: ignore[has-type]
        if data.columns.nlevels == 1:
            shown = [str(header(c)) for i, c in enumerate(data.columns) if i not in self.hidden_columns]
            self.relabel_index(shown, axis="columns")
            self.data = data.rename_axis(index=[header(n) for n in data.index.names])
            truths = [c for c in data.columns if pd.api.types.is_bool_dtype(data[c])]
            if truths:  # a truth as yes or no, as the Frame shown as a cell's result writes it
                super().format(truth, subset=truths)
        return super()._render(*args, **kwargs)


_ONE_FIELD = re.compile(r"\{:([^{}]*)\}")


def _in_words(formatter):
    """A notebook's format strings ("{:.3g}", alone or per column) as functions that write each number as the
    language does; None when any is something else (a function, a longer template): pandas then swaps the decimals."""
    if isinstance(formatter, dict):
        worded = {column: _in_words(f) for column, f in formatter.items()}
        return None if any(f is None for f in worded.values()) else worded
    field = _ONE_FIELD.fullmatch(formatter) if isinstance(formatter, str) else None
    if field is None:
        return None
    spec = field[1]

    def written(value):
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return language.number(int(value), spec)  # "{:d}" stays a whole number's format
        if isinstance(value, numbers.Real) and not math.isnan(value):
            return language.number(float(value), spec)
        return formatter.format(value)

    return written


def _labelled(shown: pd.DataFrame) -> pd.DataFrame:
    """``shown`` with the names of its axes in words of the notebook's language, and the row labels of a table whose
    rows are its headings (an unnamed index of words: a transposed table, a table by phrasing) in the same words; the
    labels of a named index are data (a strategy, a document) and stay as they are."""
    shown = shown.rename_axis(
        index=[header(n) for n in shown.index.names], columns=[header(n) for n in shown.columns.names]
    )
    if shown.index.nlevels == 1 and shown.index.name is None:
        shown = shown.rename(index=header)
    return shown


class Frame(pd.DataFrame):
    """A DataFrame for code like any other (what is computed from it is a Frame too; its columns keep the names code
    reads), shown for people in the kernel's language: its ``style`` (what a notebook formats and shows) writes the
    kernel's decimal separator, and both the style and the frame shown as a cell's result give their headings in words
    and a truth as yes or no (ja or nee in Dutch); the frame shown as a cell's result hides a bare 0, 1, 2 index."""

    @property
    def _constructor(self):
        return Frame

    @property
    def style(self) -> Styler:
        return _Styler(self, decimal="," if language.current() == "nl" else None)

    def _repr_html_(self) -> str | None:
        shown = pd.DataFrame(self).copy()
        truths = [c for c in shown.columns if pd.api.types.is_bool_dtype(shown[c])]
        for c in truths:  # by label, not by keyword: a column named 1 (a transposed Series) stays the column 1
            shown[c] = shown[c].map({True: truth(True), False: truth(False)})
        shown = _labelled(shown.rename(columns=header))
        return shown.to_html(
            notebook=True,
            index=not positions_only(shown.index),
            na_rep="–",
            decimal="," if language.current() == "nl" else ".",
            max_rows=pd.get_option("display.max_rows"),
            max_cols=pd.get_option("display.max_columns"),
            show_dimensions=pd.get_option("display.show_dimensions"),
        )
