"""Notebook 08b's table and figures: Recall@k against the time per query, and efSearch on a slider without a kernel.

Each figure is a plain plotly figure (no FigureWidget): its slider steps are computed here from the measured trade-off,
so the slider moves on the book's static page as in JupyterLab.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from ragkit.approximate import TradeOff
from ragkit.errors import InputError
from ragkit.teach.language import _, say
from ragkit.teach.lesson.plots import OKABE_ITO, Described, described

__all__ = ["DASHES", "HIGH_RECALL", "LINES", "MARKERS", "collection", "curve", "ef_slider", "table"]

LINES = (OKABE_ITO["blue"], OKABE_ITO["vermillion"], OKABE_ITO["bluish green"])
DASHES = ("solid", "dash", "dot")
MARKERS = ("circle", "square", "diamond")


def collection(t: TradeOff) -> str:
    """A collection's name in the kernel's language, read in a sentence ("For the generated collection ..."): the
    notebook's code names it in English (the course's chunks, generated); a name the catalogue does not know is shown
    as given."""
    names = {"the course's chunks": _("the course's chunks"), "generated": _("the generated collection")}
    return names.get(t.what, t.what)


def table(*trades: TradeOff) -> pd.DataFrame:
    """Every measured setting of each collection, the exact scan first: recall, time per query, speed-up."""
    rows = []
    for t in trades:
        where = say("{what} ({vectors:,})", what=collection(t), vectors=t.vectors)
        rows.append(
            {
                _("collection"): where,
                _("search"): _("exact scan"),
                say("Recall@{k}", k=t.k): say("{one:.3f}", one=1.0),
                _("ms per query"): say("{ms:.3f}", ms=t.exact_ms),
                _("times the exact scan's speed"): say("{one:.1f}", one=1.0),
            }
        )
        rows += [
            {
                _("collection"): where,
                _("search"): say("HNSW, efSearch {ef}", ef=s.ef_search),
                say("Recall@{k}", k=t.k): say("{recall:.3f}", recall=s.recall),
                _("ms per query"): say("{ms:.3f}", ms=s.ms),
                _("times the exact scan's speed"): say("{times:.1f}", times=t.exact_ms / s.ms),
            }
            for s in t.settings
        ]
    return pd.DataFrame(rows)


HIGH_RECALL = 0.94
"""From this recall up, a point's efSearch is written under it: above, it would meet the top and the stars at 1."""


def _traces(fig: go.Figure, t: TradeOff, i: int) -> None:
    colour, dash, marker = LINES[i % len(LINES)], DASHES[i % len(DASHES)], MARKERS[i % len(MARKERS)]
    name = say("{what} ({vectors:,})", what=collection(t), vectors=t.vectors)
    fig.add_trace(
        go.Scatter(
            x=[s.ms for s in t.settings],
            y=[s.recall for s in t.settings],
            mode="lines+markers+text",
            text=[str(s.ef_search) for s in t.settings],
            # near recall 1 a label above its point would leave the chart and sit on the exact scan's star
            textposition=["bottom right" if s.recall >= HIGH_RECALL else "top left" for s in t.settings],
            name=say("HNSW: {name}", name=name),
            line=dict(color=colour, dash=dash),
            marker=dict(symbol=marker, size=8),
            hovertemplate=_("efSearch %{text}: recall %{y:.3f}, %{x:.3f} ms per query") + "<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[t.exact_ms],
            y=[1.0],
            mode="markers",
            name=say("exact scan: {name}", name=name),
            marker=dict(symbol="star", size=14, color=colour, line=dict(color="black", width=1)),
            hovertemplate=_("exact scan: recall 1, %{x:.3f} ms per query") + "<extra></extra>",
        )
    )


def _layout(fig: go.Figure, k: int, title: str) -> None:
    fig.update_layout(
        template="plotly_white",
        title=title,
        height=460,
        xaxis=dict(title=_("milliseconds per query, one query on one thread (log scale)"), type="log"),
        yaxis=dict(title=say("Recall@{k}: share of the exact top {k} found", k=k), range=[0, 1.08]),
        legend=dict(orientation="h", yanchor="top", y=-0.2),
    )


def _sentence(t: TradeOff) -> str:
    first, last = t.settings[0], t.settings[-1]
    return say(
        "For {what} ({vectors:,} vectors), efSearch from {ef_first} to {ef_last} takes Recall@{k} from "
        "{recall_first:.3f} to {recall_last:.3f} and the time per query from {ms_first:.3f} to {ms_last:.3f} "
        "ms; the exact scan (a star at recall 1) takes {exact:.3f} ms.",
        what=collection(t),
        vectors=t.vectors,
        ef_first=first.ef_search,
        ef_last=last.ef_search,
        k=t.k,
        recall_first=first.recall,
        recall_last=last.recall,
        ms_first=first.ms,
        ms_last=last.ms,
        exact=t.exact_ms,
    )


def curve(*trades: TradeOff) -> Described:
    """Recall against time per query, one line per collection labelled by efSearch, each exact scan as a star."""
    if not trades or any(not t.settings for t in trades):
        raise InputError("curve needs one or more trade-offs, each measured at one or more efSearch values")
    fig = go.Figure()
    for i, t in enumerate(trades):
        _traces(fig, t, i)
    _layout(fig, trades[0].k, _("What HNSW trades: recall against time per query, labelled by efSearch"))
    return described(
        fig,
        say(
            "One line per collection, each point an efSearch (its value written beside it), with "
            "the exact scan as a star. "
        )
        + " ".join(_sentence(t) for t in trades),
    )


def _note(t: TradeOff, ef: int) -> dict[str, Any]:
    s = t.at(ef)
    text = say(
        "efSearch {ef}: Recall@{k} {recall:.3f}, {ms:.3f} ms per query, {times:.1f} times the exact scan's speed",
        ef=ef,
        k=t.k,
        recall=s.recall,
        ms=s.ms,
        times=t.exact_ms / s.ms,
    )
    return dict(
        text=text,
        xref="paper",
        yref="paper",
        x=0.0,
        y=1.0,
        xanchor="left",
        yanchor="bottom",
        showarrow=False,
        font=dict(size=14),
    )


def ef_slider(t: TradeOff, ef: int | None = None) -> Described:
    """One collection's curve with a slider over efSearch: a ring marks the chosen point, a caption gives its figures.

    A plain figure whose steps were computed from the measurement: it moves without a kernel, on the book's page too.
    """
    if not t.settings:
        raise InputError("ef_slider needs a trade-off measured at one or more efSearch values")
    ef = t.settings[0].ef_search if ef is None else ef
    start = t.at(ef)
    fig = go.Figure()
    _traces(fig, t, 0)
    fig.add_trace(
        go.Scatter(
            x=[start.ms],
            y=[start.recall],
            mode="markers",
            name=_("the chosen efSearch"),
            marker=dict(symbol="circle-open", size=24, color="black", line=dict(width=3)),
            hoverinfo="skip",
        )
    )
    ring = len(fig.data) - 1
    steps = [
        dict(
            method="update",
            label=str(s.ef_search),
            args=[{"x": [[s.ms]], "y": [[s.recall]]}, {"annotations": [_note(t, s.ef_search)]}, [ring]],
        )
        for s in t.settings
    ]
    active = [s.ef_search for s in t.settings].index(ef)
    _layout(fig, t.k, _("Move efSearch: the ring shows what it buys and costs (no kernel needed)"))
    fig.update_layout(
        sliders=[
            dict(active=active, steps=steps, currentvalue=dict(prefix=_("efSearch: ")), pad=dict(t=110))
        ],  # below the legend, which sits under the axis
        annotations=[_note(t, ef)],
        margin=dict(t=110),
        height=620,
    )
    return described(
        fig,
        _sentence(t)
        + " "
        + say(
            "A slider moves a ring along the line over {steps} values of efSearch, from {first} to {last}, and a "
            "caption above the plot gives the recall, the time per query and the speed against the exact scan at each.",
            steps=len(steps),
            first=t.settings[0].ef_search,
            last=t.settings[-1].ef_search,
        ),
    )
