"""Numbers and tables for people: the one place that writes a count, a decimal or a table the way the prose does.

Whole numbers carry thousands separators (374,596; Dutch 374.596), a count agrees with its noun (1 bluff, 2 bluffs;
1 bluf, 2 bluffen: both forms go through the catalogue), a table shows headings in words in the notebook's language,
no bare 0, 1, 2 index, and one number of decimals per column.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from ragkit.teach import language
from ragkit.teach.language import _

__all__ = ["Frame", "count", "decimal", "formatted", "header", "noun", "styled", "whole"]


def whole(n: int) -> str:
    """A whole number with its thousands separated as the notebook's language writes them (374,596; 374.596)."""
    return language.number(int(n), ",")


def decimal(x: float, places: int) -> str:
    """``x`` with exactly ``places`` decimals and its thousands separated, as the notebook's language writes it."""
    return language.number(float(x), f",.{places}f")


def formatted(x: float, spec: str) -> str:
    """``format(x, spec)`` as the notebook's language writes numbers (``formatted(0.5, ".6f")``: 0.500000; 0,500000)."""
    return language.number(float(x), spec)


def count(n: int, one: str, many: str) -> str:
    """``n`` and its noun, agreeing: ``count(n, _("bluff"), _("bluffs"))`` writes 1 bluff, 2 bluffs, 0 bluffs
    (Dutch 1 bluf, 2 blufs). The caller passes both forms through ``_``, so that the catalogue's tests see them."""
    return f"{whole(n)} {noun(n, one, many)}"


def noun(n: int, one: str, many: str) -> str:
    """The form that agrees with ``n`` (for a template that writes the number itself, bold or otherwise)."""
    return one if n == 1 else many


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
        "recall rate": _("recall rate"),
        "needle placed": _("needle placed"),
        "source number": _("source number"),
        "recalled": _("recalled"),
        "asked": _("asked"),
        "against the middle": _("against the middle"),
        "retriever": _("retriever"),
    }


def _cell(value: Any, places: int | None, asked: bool = False) -> str:
    """One cell: a number written with the column's decimals (whole numbers with separators), a truth as yes or no,
    text as it is; where the caller ``asked`` for the column's decimals, a number written as text is written again."""
    if asked and isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return value
    if isinstance(value, (bool, np.bool_)):
        return _("yes") if value else _("no")
    if not isinstance(value, numbers.Real):
        return "–" if value is None or value is pd.NA or value is pd.NaT else str(value)
    x = float(value)
    if math.isnan(x):
        return "–"
    if places is None:
        return whole(int(x)) if x.is_integer() else decimal(x, 3)
    return decimal(x, places)


def _places(column: pd.Series, given: int | None) -> int | None:
    """The decimals of a column: as given, none for whole numbers, else three (the chapter's usual)."""
    if given is not None:
        return given
    values = [float(v) for v in column if isinstance(v, numbers.Real) and not isinstance(v, bool)]
    return None if all(v.is_integer() for v in values if not math.isnan(v)) else 3


def _bare(index: pd.Index) -> bool:
    """Whether an index is only positions (0, 1, 2 or what a filter left of them): nothing a reader needs."""
    return index.nlevels == 1 and pd.api.types.is_integer_dtype(index.dtype)


class _Styler(Styler):
    """A Styler that writes decimals the way the kernel's language does, whatever format a notebook's code gives it
    (``frame.style.format("{:.3f}")`` writes 0,425 in a Dutch kernel): a separator passed explicitly wins. In a
    Dutch kernel its headings are shown in words of the notebook's language (``header``); its data keep theirs, so
    that a notebook's ``format`` and ``hide`` still name the columns as its code does."""

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
        return super().format(formatter, subset, na_rep, precision, decimal, thousands, escape, hyperlinks)

    def _render(self, *args, **kwargs):
        data: pd.DataFrame = self.data  # type: ignore[has-type]
        if language.current() == "nl" and data.columns.nlevels == 1:
            shown = [str(header(c)) for i, c in enumerate(data.columns) if i not in self.hidden_columns]
            self.relabel_index(shown, axis="columns")
            self.data = data.rename_axis(index=[header(n) for n in data.index.names])
            truths = [c for c in data.columns if pd.api.types.is_bool_dtype(data[c])]
            if truths:  # a truth as ja or nee, as the Frame shown as a cell's result writes it
                super().format(lambda v: _("yes") if v else _("no"), subset=truths)
        return super()._render(*args, **kwargs)


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
    kernel's decimal separator, and in a Dutch kernel both the style and the frame shown as a cell's result give their
    headings in Dutch (a truth as ja or nee). English output unchanged."""

    @property
    def _constructor(self):
        return Frame

    @property
    def style(self) -> Styler:
        return _Styler(self, decimal="," if language.current() == "nl" else None)

    def _repr_html_(self) -> str | None:
        if language.current() != "nl":
            return super()._repr_html_()
        shown = pd.DataFrame(self).copy()
        truths = [c for c in shown.columns if pd.api.types.is_bool_dtype(shown[c])]
        for c in truths:  # by label, not by keyword: a column named 1 (a transposed Series) stays the column 1
            shown[c] = shown[c].map({True: _("yes"), False: _("no")})
        shown = _labelled(shown.rename(columns=header))
        return shown.to_html(
            notebook=True,
            decimal=",",
            max_rows=pd.get_option("display.max_rows"),
            max_cols=pd.get_option("display.max_columns"),
            show_dimensions=pd.get_option("display.show_dimensions"),
        )


def styled(frame: pd.DataFrame, decimals: Mapping[str, int] | None = None, index: str | None = None) -> Styler:
    """``frame`` for people: headings in words, ``index`` (a column, or the frame's named index) as the row labels
    or no index at all, and every number column with one number of decimals (``decimals`` by column, else three
    for fractions, none for whole numbers) and thousands separated.

    The frame's own index is shown when it is named or not made of integers (a bare 0, 1, 2 is hidden). A Styler,
    which JupyterLab and nbconvert show as an HTML table of class ``dataframe``; its ``data`` keeps the numbers for
    code that reads them.
    """
    decimals = dict(decimals or {})
    shown = frame.set_index(index) if index is not None and index in frame.columns else frame
    keep_index = index is not None or any(n is not None for n in shown.index.names) or not _bare(shown.index)
    if not keep_index:
        shown = shown.reset_index(drop=True)
    formats = {
        c: partial(_cell, places=_places(shown[c], decimals.get(str(c))), asked=str(c) in decimals)
        for c in shown.columns
    }
    levels = [
        partial(_cell, places=_places(pd.Series(shown.index.get_level_values(i)), decimals.get(str(n))))
        for i, n in enumerate(shown.index.names)
    ]
    shown = shown.rename(columns=header).rename_axis(index=[header(n) for n in shown.index.names])
    formats = {header(c): f for c, f in formats.items()}
    # escaped: a cell holds course text or a student's own document's (a title with "<" is text, never markup)
    styler = shown.style.format(formats, escape="html")
    for i, level in enumerate(levels):
        styler = styler.format_index(level, axis="index", level=i, escape="html")
    styler = styler.format_index(escape="html", axis="columns")
    styler = styler.set_table_attributes('class="dataframe"')
    return styler if keep_index else styler.hide(axis="index")
