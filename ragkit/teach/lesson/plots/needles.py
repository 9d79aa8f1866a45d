"""The chunking figure: needles in their blind windows, the ones a window's end cuts in two destroyed."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from ragkit.chunking import SIZE
from ragkit.teach.language import _, say
from ragkit.teach.lesson.plots.figure import DESTROYED_COLOUR, KEPT_COLOUR, Described, colour_word, described, share

__all__ = ["needle_cuts"]


def needle_cuts(spans: Sequence[tuple[str, int, int]], size: int = SIZE) -> Described:
    """Needles as (id, offset in their blind window, length): one that runs past the window's end is cut in two."""
    fig = go.Figure()
    legend: set[bool] = set()
    for row, (qid, offset, length) in enumerate(spans):
        cut = offset + length > size
        state = "destroyed" if cut else "kept"
        shown = _("destroyed") if cut else _("kept")
        fig.add_trace(
            go.Scatter(
                x=[offset, offset + length],
                y=[row, row],
                mode="lines+markers",
                line=dict(width=6, color=DESTROYED_COLOUR if cut else KEPT_COLOUR, dash="dot" if cut else "solid"),
                marker=dict(symbol="x" if cut else "circle", size=10),
                name=_("destroyed (crosses the cut)") if cut else _("kept (inside the window)"),
                legendgroup=state,
                showlegend=cut not in legend,
                hovertext=say(
                    "{qid}: {length} characters from offset {offset}, {state}",
                    qid=qid,
                    length=length,
                    offset=offset,
                    state=shown,
                ),
            )
        )
        legend.add(cut)
    fig.add_vline(x=size, line_dash="dash", annotation_text=_("blind cut"))
    fig.update_layout(
        template="plotly_white",
        title=say(
            "Needles within their blind windows ({colour}, dotted, crossed: destroyed)",
            colour=colour_word(DESTROYED_COLOUR),
        ),
        xaxis_title=_("offset within the window"),
        yaxis=dict(tickvals=list(range(len(spans))), ticktext=[s[0] for s in spans]),
        height=max(300, 18 * len(spans)),
    )
    destroyed = [qid for qid, offset, length in spans if offset + length > size]
    kept = len(spans) - len(destroyed)
    named = ": " + ", ".join(destroyed) if destroyed else ""
    return described(
        fig,
        say(
            "{n} needles drawn as bars at their place in a blind window of {size} characters, with "
            "the cut at {size} as a dashed line: {share} run past it and are destroyed ({colour}, "
            "dotted, crossed){named}",
            n=len(spans),
            size=size,
            share=share(len(destroyed), len(spans)),
            colour=colour_word(DESTROYED_COLOUR),
            named=named,
        )
        + (
            say("; {kept} is kept whole ({colour}, solid, round ends).", kept=kept, colour=colour_word(KEPT_COLOUR))
            if kept == 1
            else say(
                "; {kept} are kept whole ({colour}, solid, round ends).", kept=kept, colour=colour_word(KEPT_COLOUR)
            )
        ),
    )
