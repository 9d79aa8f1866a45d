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
from ragkit.teach.frames import Frame as Frame
from ragkit.teach.frames import header as header
from ragkit.teach.frames import positions_only, truth, yes_or_no

__all__ = ["Frame", "count", "decimal", "formatted", "header", "noun", "styled", "truth", "whole", "yes_or_no"]


def whole(n: int) -> str:
    """A whole number with its thousands separated as the notebook's language writes them (374,596; 374.596)."""
    return language.number(int(n), ",")


def decimal(x: float, places: int) -> str:
    """``x`` with exactly ``places`` decimals and its thousands separated, as the notebook's language writes it."""
    return language.number(float(x), f",.{places}f")


def formatted(x: float, spec: str) -> str:
    """``format(x, spec)`` as the notebook's language writes numbers (``formatted(0.5, ".6f")``: 0.500000; 0,500000)."""
    return language.number(float(x), spec)


def cut_named(cut: float | str | None) -> str:
    """A cut as a sentence names it: "cut 0.675", or "no cut" for none (None, or a table's label for no cut)."""
    if cut is None or cut == language._("none"):
        return language._("no cut")
    return language.say("cut {cut}", cut=cut)


def count(n: int, one: str, many: str) -> str:
    """``n`` and its noun, agreeing: ``count(n, _("bluff"), _("bluffs"))`` writes 1 bluff, 2 bluffs, 0 bluffs
    (Dutch 1 bluf, 2 blufs). The caller passes both forms through ``_``, so that the catalogue's tests see them."""
    return f"{whole(n)} {noun(n, one, many)}"


def noun(n: int, one: str, many: str) -> str:
    """The form that agrees with ``n`` (for a template that writes the number itself, bold or otherwise)."""
    return one if n == 1 else many


def _cell(value: Any, places: int | None, asked: bool = False) -> str:
    """One cell: a number written with the column's decimals (whole numbers with separators), a truth as yes or no,
    text as it is; where the caller ``asked`` for the column's decimals, a number written as text is written again."""
    if asked and isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return value
    if isinstance(value, (bool, np.bool_)):
        return truth(value)
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


def styled(
    frame: pd.DataFrame, decimals: Mapping[str, int] | None = None, index: str | None = None, stored: bool = False
) -> Styler:
    """``frame`` for people: headings in words, ``index`` (a column, or the frame's named index) as the row labels
    or no index at all, and every number column with one number of decimals (``decimals`` by column, else three
    for fractions, none for whole numbers) and thousands separated.

    The frame's own index is shown when it is named or not made of integers (a bare 0, 1, 2 is hidden). A Styler,
    which JupyterLab and nbconvert show as an HTML table of class ``dataframe``; its ``data`` keeps the numbers for
    code that reads them. ``stored``: the headings are a database's own column names, kept as they are.
    """
    decimals = dict(decimals or {})
    shown = frame.set_index(index) if index is not None and index in frame.columns else frame
    keep_index = index is not None or any(n is not None for n in shown.index.names) or not positions_only(shown.index)
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
    named = (lambda c: c) if stored else header
    shown = shown.rename(columns=named).rename_axis(index=[named(n) for n in shown.index.names])
    formats = {named(c): f for c, f in formats.items()}
    # escaped: a cell holds course text or a student's own document's (a title with "<" is text, never markup)
    styler = shown.style.format(formats, escape="html")
    for i, level in enumerate(levels):
        styler = styler.format_index(level, axis="index", level=i, escape="html")
    styler = styler.format_index(escape="html", axis="columns")
    # a database's own table says so: its snake_case names are what a student's SQL uses (tests read the class)
    styler = styler.set_table_attributes('class="dataframe ragkit-stored"' if stored else 'class="dataframe"')
    return styler if keep_index else styler.hide(axis="index")
