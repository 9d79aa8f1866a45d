"""What every figure shares: the palette and the words for its colours, and the text alternative it carries."""

from __future__ import annotations

import plotly.graph_objects as go

from ragkit.errors import InputError
from ragkit.plumbing.nbformat_import import import_nbformat_quickly
from ragkit.teach import language
from ragkit.teach.language import _, say

__all__ = [
    "COLOURS",
    "DESCRIPTION",
    "DESTROYED_COLOUR",
    "IN_DOMAIN_COLOUR",
    "KEPT_COLOUR",
    "OKABE_ITO",
    "OUT_OF_DOMAIN_COLOUR",
    "PALETTE",
    "SEEN_AS",
    "STRATEGY_MARKERS",
    "WINS_AND_LOSSES",
    "Described",
    "caption",
    "colour_word",
    "colour_words",
    "describe",
    "described",
    "share",
]


OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
}
"""The palette by Okabe and Ito's own names (the names of their paper, not the words a reader uses)."""
SEEN_AS = {
    "black": "black",
    "orange": "amber",
    "sky blue": "light blue",
    "bluish green": "green",
    "yellow": "yellow",
    "blue": "blue",
    "vermillion": "orange",
    "reddish purple": "pink",
}
"""The word a reader uses for each colour as drawn: vermillion (#D55E00) reads as orange on a screen, so it is
"orange", and Okabe and Ito's orange (#E69F00), beside it in some figures, is the yellower "amber"."""
PALETTE = {SEEN_AS[name]: code for name, code in OKABE_ITO.items()}
"""Every colour the figures draw, by the word the prose and the text alternatives use for it."""
# the strategies without overlap are solid, with overlap dashed; each has its own colour and marker as well
COLOURS = {
    "A": OKABE_ITO["black"],
    "B": OKABE_ITO["reddish purple"],
    "C": OKABE_ITO["sky blue"],
    "D": OKABE_ITO["blue"],
    "E": OKABE_ITO["orange"],
    "F": OKABE_ITO["vermillion"],
}
STRATEGY_MARKERS = {"A": "circle", "B": "square", "C": "diamond", "D": "triangle-up", "E": "x", "F": "star"}
IN_DOMAIN_COLOUR = OKABE_ITO["blue"]
OUT_OF_DOMAIN_COLOUR = OKABE_ITO["vermillion"]
KEPT_COLOUR = OKABE_ITO["black"]
DESTROYED_COLOUR = OKABE_ITO["vermillion"]
WINS_AND_LOSSES = [[0.0, PALETTE["orange"]], [0.5, "#FFFFFF"], [1.0, PALETTE["blue"]]]
"""The win-loss grid's colour scale: orange where the row loses, white at a draw, blue where it wins."""


def colour_word(code: str) -> str:
    """The word for a colour of the palette as drawn, in the notebook's language ("orange" for vermillion)."""
    words = {c.upper(): word for word, c in PALETTE.items()}
    if code.upper() not in words:
        raise InputError(f"{code} is not a colour of the palette: draw with plots.PALETTE, which names each colour")
    return colour_words()[words[code.upper()]]


def colour_words() -> dict[str, str]:
    """Each word of PALETTE in the notebook's language (the catalogue finds its templates only as literals)."""
    return {
        "black": _("black"),
        "amber": _("amber"),
        "light blue": _("light blue"),
        "green": _("green"),
        "yellow": _("yellow"),
        "blue": _("blue"),
        "orange": _("orange"),
        "pink": _("pink"),
    }


DESCRIPTION = "description"
"""The key of a figure's text alternative in ``layout.meta`` (where it survives into the notebook's JSON)."""


class Described(go.Figure):
    """A figure with its text alternative: in a notebook the sentence is shown under it."""

    @property
    def description(self) -> str:
        """What the figure shows, in one or two sentences."""
        return describe(self)

    def _ipython_display_(self) -> None:
        from IPython.display import Markdown, display

        import_nbformat_quickly()  # plotly's renderer imports nbformat at a kernel's first figure
        super()._ipython_display_()
        display(Markdown(caption(self.description)))


def caption(text: str) -> str:
    """The Markdown a notebook shows under a figure: its text alternative."""
    return say("*The figure above:* {text}", text=text)


def described(fig: go.Figure, text: str) -> Described:
    """``fig`` with ``text`` as its text alternative (kept in ``layout.meta``)."""
    out = fig if isinstance(fig, Described) else Described(fig)
    meta = out.layout.meta if isinstance(out.layout.meta, dict) else {}
    out.layout.meta = {**meta, DESCRIPTION: text}
    if language.current() == "nl":  # ticks, hover and percentages with a decimal comma, as the prose writes them
        out.layout.separators = ",."
    if language.current() != language.SOURCE:
        _in_words_of_the_kernel(out)
    return out


def _worded(text: str) -> str:
    """A chart's English text in the kernel's language, where the catalogue has it: whole, else each ``name=value``
    line of a hover label or facet title (plotly express writes a column's name there), name and plain value."""
    whole = language.word(text)
    if whole != text or "=" not in text:
        return whole
    lines = []
    for line in text.split("<br>"):
        name, said, value = line.partition("=")
        if said and "%{" not in value and "<" not in value:
            value = language.word(value)
        lines.append(f"{language.word(name)}{said}{value}" if said else line)
    return "<br>".join(lines)


def _in_words_of_the_kernel(fig: go.Figure) -> None:
    """Translate what a chart made in English code shows: its title, axis and legend titles, facet titles, trace
    names and hover labels (a column's name, as plotly express wrote it, is an English key of the catalogue)."""
    layout = fig.layout
    if layout.title.text:
        layout.title.text = _worded(layout.title.text)
    if layout.legend.title.text:
        layout.legend.title.text = _worded(layout.legend.title.text)
    fig.for_each_xaxis(lambda a: a.update(title_text=_worded(a.title.text)) if a.title.text else None)
    fig.for_each_yaxis(lambda a: a.update(title_text=_worded(a.title.text)) if a.title.text else None)
    fig.for_each_annotation(lambda a: a.update(text=_worded(a.text)) if a.text else None)
    for trace in fig.data:
        if getattr(trace, "name", None):
            trace.name = _worded(trace.name)
        if getattr(trace, "hovertemplate", None):
            trace.hovertemplate = _worded(trace.hovertemplate)


def describe(fig: go.BaseFigure | dict) -> str:
    """A figure's text alternative; a figure made without one says so by its title."""
    layout = fig.get("layout", {}) if isinstance(fig, dict) else fig.to_plotly_json()["layout"]
    meta = layout.get("meta")
    if isinstance(meta, dict) and meta.get(DESCRIPTION):
        return str(meta[DESCRIPTION])
    title = layout.get("title", {})
    title = title.get("text", "") if isinstance(title, dict) else str(title or "")
    return say("A figure titled “{title}”.", title=title) if title else _("A figure without a title or description.")


def share(k: int, n: int) -> str:
    """A part of a whole as a figure's text alternative counts it: "{k} of {n}"."""
    return say("{k} of {n}", k=k, n=n)
