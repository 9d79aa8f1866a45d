"""The teacher's guide's computed figures as the guide marks them: ``<!--fig:name-->value<!--/fig-->``.

The markers do not render. The teacher's tools (``python -m teacher.guide``) compute every named figure and write
it in, in the English page and in the Dutch one, each in its language; the Dutch guide (``guides``) takes each
figure's Dutch value by name, and leaves the values out of a block's hash, so that a new value does not make a
translation stale. One pattern, read here.
"""

from __future__ import annotations

import re

from ragkit.errors import DataError

__all__ = ["FIGURE", "figure_names", "marked", "quoted", "render", "unvalued"]

FIGURE = re.compile(r"<!--fig:(\w+)-->(.*?)<!--/fig-->")
"""A marked figure: its name (group 1) and its value (group 2)."""


def marked(name: str, value: str) -> str:
    """``value`` marked as the figure ``name``."""
    return f"<!--fig:{name}-->{value}<!--/fig-->"


def figure_names(text: str) -> list[str]:
    """The names of the figures a text marks, in order, each as often as it is marked."""
    return [m.group(1) for m in FIGURE.finditer(text)]


def quoted(text: str) -> dict[str, set[str]]:
    """Every marked figure in a text: its name and the values written for it (one, when the text is consistent)."""
    out: dict[str, set[str]] = {}
    for m in FIGURE.finditer(text):
        out.setdefault(m.group(1), set()).add(m.group(2))
    return out


def unvalued(text: str) -> str:
    """The text with every figure's value left out, its markers kept."""
    return FIGURE.sub(lambda m: marked(m.group(1), ""), text)


def render(text: str, values: dict[str, str]) -> str:
    """The text with every marked figure set to its computed value; a name without one is an error that says so."""
    unknown = sorted(set(quoted(text)) - set(values))
    if unknown:
        raise DataError(
            f"the page marks figures nothing computes: {', '.join(unknown)}; add them to the figures of its "
            "teacher's tool (teacher.guide for the teacher's guide, teacher.project for the project page) or remove "
            "the markers"
        )
    return FIGURE.sub(lambda m: marked(m.group(1), values[m.group(1)]), text)
