"""The threshold's figures: the shared cut axis, the distance histogram and its slider, what each cut costs,
the abstention rules' curves."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ragkit.abstention import ScoreSweep
from ragkit.errors import InputError
from ragkit.teach.language import _, say
from ragkit.teach.lesson import formats
from ragkit.teach.lesson.plots.figure import (
    IN_DOMAIN_COLOUR,
    KEPT_COLOUR,
    OKABE_ITO,
    OUT_OF_DOMAIN_COLOUR,
    Described,
    colour_word,
    described,
    share,
)
from ragkit.threshold import CHAPTER_CUTS, DEFAULT_CUT, Sweep, default_cuts

__all__ = [
    "CUT_WORDS",
    "DISTANCE_RANGE",
    "LOOSER",
    "RULE_STYLES",
    "TIGHTER",
    "abstention_curves",
    "bluffs_and_refusals",
    "distance_histogram",
    "histogram_text",
    "move_cut",
    "on_cut_axis",
    "slider_cuts",
    "threshold_slider",
]


DISTANCE_RANGE = (0.0, 1.0)
"""The x-axis of every figure of cosine distance (a cut, a query's nearest chunk): figures side by side line up.

From identical (0) to unrelated (1); a cut slider spans CUT_RANGE inside it, and data beyond it widens the axis."""
TIGHTER = "← tighter cut: refuses more"
LOOSER = "looser cut: answers more, bluffs more →"
"""What moving a cut left and right means on every cut axis and slider: right is looser (more distance allowed)."""


def on_cut_axis(fig: go.Figure, title: str | None = None) -> go.Figure:
    """``fig`` with its x-axis on the shared cut axis: DISTANCE_RANGE (widened to every x it plots), right is looser."""
    xs = [getattr(trace, "x", None) for trace in fig.data]
    finite = [
        float(x)
        for values in xs
        if values is not None
        for x in values
        if isinstance(x, (int, float, np.number)) and np.isfinite(x)
    ]
    # widened in steps of 0.05 so that a point beyond the range is shown, never clipped
    low = min(DISTANCE_RANGE[0], np.floor(min(finite, default=DISTANCE_RANGE[0]) * 20) / 20)
    high = max(DISTANCE_RANGE[1], np.ceil(max(finite, default=DISTANCE_RANGE[1]) * 20) / 20)
    title = _("cut (cosine distance)") if title is None else title
    fig.update_xaxes(
        range=[low, high],
        autorange=False,
        title_text=f"{title}<br><span style='font-size:12px'>{_(TIGHTER)}   ·   {_(LOOSER)}</span>",
    )
    return fig


CUT_WORDS = "The cut's axis runs from tighter (left) to looser (right), over the same distances in every figure."
"""The sentence every cut figure's text alternative ends with."""


def histogram_text(sweep: Sweep, cut: float | None, start: bool = False) -> str:
    """The distance histogram's text alternative at one cut (a widget's chart says it anew as its cut moves); with
    ``start``, the cut is where a slider starts the line, not where it stays."""
    row = sweep.at(cut)
    where = _("no cut (every query answered)") if cut is None else say("the cut at {cut:.3f}", cut=cut)
    line = (
        say(
            "The slider starts on {where}: there {bluffs} out-of-domain queries are answered anyway "
            "(bluffs) and {refused} answerable ones refused.",
            where=where,
            bluffs=share(row.bluffs, row.out_of_domain),
            refused=share(row.refused, row.in_domain),
        )
        if start
        else say(
            "The dashed line marks {where}: {bluffs} out-of-domain queries are answered anyway (bluffs) and {refused} "
            "answerable ones refused.",
            where=where,
            bluffs=share(row.bluffs, row.out_of_domain),
            refused=share(row.refused, row.in_domain),
        )
    )
    return say(
        "Histograms of each query's cosine distance to its nearest chunk: {n_in} in-domain "
        "queries ({in_colour}, hatched /), median {median_in:.3f}, from {low_in:.3f} "
        "to {high_in:.3f}; {n_out} out-of-domain queries ({out_colour}, "
        "hatched x), median {median_out:.3f}, from {low_out:.3f} to "
        "{high_out:.3f}. {line} {cut_words}",
        in_colour=colour_word(IN_DOMAIN_COLOUR),
        out_colour=colour_word(OUT_OF_DOMAIN_COLOUR),
        n_in=len(sweep.nearest_in),
        median_in=np.median(sweep.nearest_in),
        low_in=sweep.nearest_in.min(),
        high_in=sweep.nearest_in.max(),
        n_out=len(sweep.nearest_out),
        median_out=np.median(sweep.nearest_out),
        low_out=sweep.nearest_out.min(),
        high_out=sweep.nearest_out.max(),
        line=line,
        cut_words=_(CUT_WORDS),
    )


def distance_histogram(sweep: Sweep, cut: float | None = DEFAULT_CUT) -> Described:
    """Nearest-chunk distance of every in-domain and out-of-domain query, with the cut as a line."""
    fig = go.Figure()
    bins = dict(start=0.0, end=2.0, size=0.025)
    fig.add_trace(
        go.Histogram(
            x=sweep.nearest_in,
            xbins=bins,
            name=say("in-domain ({n})", n=len(sweep.nearest_in)),
            marker=dict(color=IN_DOMAIN_COLOUR, pattern=dict(shape="/", solidity=0.3)),
            opacity=0.65,
        )
    )
    fig.add_trace(
        go.Histogram(
            x=sweep.nearest_out,
            xbins=bins,
            name=say("out-of-domain ({n})", n=len(sweep.nearest_out)),
            marker=dict(color=OUT_OF_DOMAIN_COLOUR, pattern=dict(shape="x", solidity=0.3)),
            opacity=0.65,
        )
    )
    fig.update_layout(
        barmode="overlay",
        template="plotly_white",
        yaxis_title=_("queries"),
        title=_("Where a cut has to fall"),
        shapes=[_cut_line(cut)],
    )
    on_cut_axis(fig, _("cosine distance to the nearest chunk"))
    return described(fig, histogram_text(sweep, cut))


def _cut_line(cut: float | None) -> dict:
    x = 2.0 if cut is None else cut
    return dict(type="line", x0=x, x1=x, yref="paper", y0=0, y1=1, line=dict(color="black", dash="dash"))


def move_cut(fig: go.Figure, cut: float | None) -> None:
    """Move the cut line of a distance histogram."""
    fig.layout.shapes = [_cut_line(cut)]


def slider_cuts(cuts: Sequence[float | None] | None = None) -> list[float | None]:
    """The cuts in slider order: tightest on the left, looser to the right, no cut at all (None) at the right end."""
    return sorted(default_cuts() if cuts is None else cuts, key=lambda c: np.inf if c is None else c)


def threshold_slider(
    sweep: Sweep, cuts: Sequence[float | None] | None = None, cut: float | None = CHAPTER_CUTS[0]
) -> Described:
    """The distance histogram with a slider over the cuts: a plain figure, so it works without a kernel."""
    cuts = slider_cuts(cuts)
    if cut not in cuts:
        raise InputError(f"cut {cut!r} is not on the slider: start at one of its cuts, or pass cuts that include it")
    fig = distance_histogram(sweep, cut)
    steps: list[dict[str, Any]] = []
    for c in cuts:
        row = sweep.at(c)
        label = _("none") if c is None else say("{cut:.3f}", cut=c)
        text = say(
            "{label}: bluffs {bluffs} / {out_of_domain}, refused answerable {refused} / {in_domain}",
            label=formats.cut_named(None if c is None else label),
            bluffs=row.bluffs,
            out_of_domain=row.out_of_domain,
            refused=row.refused,
            in_domain=row.in_domain,
        )
        note = dict(
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
        steps.append(dict(method="relayout", label=label, args=[{"shapes": [_cut_line(c)], "annotations": [note]}]))
    active = cuts.index(cut)
    fig.update_layout(
        sliders=[
            dict(
                active=active,
                steps=steps,
                currentvalue=dict(prefix=_("cut: ")),
                pad=dict(t=80),
                **_under_the_axis(cuts, fig.layout.xaxis.range),
            )
        ],
        title=_("Where a cut has to fall: move the slider (no kernel needed)"),
        margin=dict(t=110),
        **steps[active]["args"][0],
    )
    numeric = [i for i, c in enumerate(cuts) if c is not None]
    slider = (
        say(
            " A slider moves the line over {positions} positions, {n} cuts from {first} on the left to {last} and then "
            "no cut at the right end, and a caption above the plot gives the bluffs and refusals at each.",
            positions=len(cuts),
            n=len(numeric),
            first=formats.cut_named(steps[numeric[0]]["label"]),
            last=formats.cut_named(steps[numeric[-1]]["label"]),
        )
        if numeric and cuts[-1] is None and len(numeric) == len(cuts) - 1
        else say(
            " A slider moves the line over {cuts} cuts (from {first} on the left to {last} on the right) and a caption "
            "above the plot gives the bluffs and refusals at each.",
            cuts=len(cuts),
            first=formats.cut_named(None if cuts[0] is None else steps[0]["label"]),
            last=formats.cut_named(None if cuts[-1] is None else steps[-1]["label"]),
        )
    )
    return described(fig, histogram_text(sweep, cut, start=True) + slider)


def _under_the_axis(cuts: Sequence[float | None], axis: Sequence[float]) -> dict[str, Any]:
    """Where a slider over evenly spaced cuts lies so that each step sits under its cut ("none" one step further)."""
    numeric = [c for c in cuts if c is not None]
    gaps = np.diff(numeric)
    if len(numeric) < 2 or not np.allclose(gaps, gaps[0]):
        return {}
    low, high = axis
    end = numeric[-1] + (gaps[0] if None in cuts else 0.0)
    return dict(x=(numeric[0] - low) / (high - low), len=(end - numeric[0]) / (high - low), xanchor="left")


def bluffs_and_refusals(sweep: Sweep) -> Described:
    """Bluffs (share of out-of-domain queries) and refused answerable questions (share of in-domain) by cut."""
    # left to right from the tightest cut to the loosest, as on every cut axis
    rows = sweep.rows(sorted(c for c in default_cuts() if c is not None))
    cuts = [row.cut for row in rows]
    n_out, n_in = len(sweep.out_of_domain), len(sweep.queries)
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=cuts,
            y=[r.bluffs / r.out_of_domain for r in rows],
            name=say("bluffs (share of {n})", n=n_out),
            mode="lines+markers",
            line=dict(color=OUT_OF_DOMAIN_COLOUR),
            marker=dict(symbol="x", size=6),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=cuts,
            y=[r.refused / r.in_domain for r in rows],
            name=say("refused answerable (share of {n})", n=n_in),
            mode="lines+markers",
            line=dict(color=IN_DOMAIN_COLOUR, dash="dash"),
            marker=dict(symbol="square", size=6),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=cuts,
            y=[r.answered_with_needle / r.in_domain for r in rows],
            name=_("answered with the needle kept"),
            line=dict(color=KEPT_COLOUR, dash="dot", width=3),
        )
    )
    fig.update_layout(template="plotly_white", yaxis_title=_("share of queries"), title=_("What each cut costs"))
    on_cut_axis(fig)
    if not rows:
        return described(fig, _("What each cut costs: no cut to show."))
    first, last = rows[0], rows[-1]
    return described(
        fig,
        say(
            "Three lines over {cuts} cuts, from {first:.3f} up to {last:.3f}: bluffs "
            "(solid, x marks) go from {bluffs_first} out-of-domain queries to "
            "{bluffs_last}; refused answerable questions (dashed, squares) from "
            "{refused_first} to {refused_last}; answered with the needle "
            "kept (dotted) from {kept_first} to {kept_last}. {cut_words}",
            cuts=len(rows),
            first=first.cut,
            last=last.cut,
            bluffs_first=share(first.bluffs, n_out),
            bluffs_last=share(last.bluffs, n_out),
            refused_first=share(first.refused, n_in),
            refused_last=share(last.refused, n_in),
            kept_first=share(first.answered_with_needle, n_in),
            kept_last=share(last.answered_with_needle, n_in),
            cut_words=_(CUT_WORDS),
        ),
    )


RULE_STYLES = (
    ("blue", "solid", "circle"),
    ("orange", "dash", "square"),
    ("bluish green", "dot", "diamond"),
    ("reddish purple", "dashdot", "triangle-up"),
)
"""Colour, dash and marker of the abstention rules' curves, in the order the rules come."""


def abstention_curves(rules: dict[str, ScoreSweep], max_refused: float) -> Described:
    """Every abstention rule's trade-off on one chart: share of out-of-domain queries bluffing against share of
    answerable ones refused, one point per cut; each rule's fewest bluffs within the refusal ceiling marked."""
    from ragkit.teach.lesson.tables import chosen_cut, rule_label

    fig = go.Figure()
    words = []
    for (name, rule), (colour, dash, marker) in zip(rules.items(), RULE_STYLES):
        label = rule_label(name)
        curve = rule.curve()
        fig.add_trace(
            go.Scatter(
                x=[p.refused_share for p in curve],
                y=[p.bluff_share for p in curve],
                name=label,
                mode="lines+markers",
                line=dict(color=OKABE_ITO[colour], dash=dash, shape="hv"),
                marker=dict(symbol=marker, size=5),
            )
        )
        best = chosen_cut(name, rule, max_refused)
        fig.add_trace(
            go.Scatter(
                x=[best.refused / best.in_domain],
                y=[best.bluffs / best.out_of_domain],
                mode="markers",
                showlegend=False,
                hoverinfo="skip",
                marker=dict(symbol=marker, size=14, color="rgba(0,0,0,0)", line=dict(color=OKABE_ITO[colour], width=2)),
            )
        )
        words.append(
            say(
                "{rule}: {bluffs} bluffing with {refused} refused",
                rule=label,
                bluffs=share(best.bluffs, best.out_of_domain),
                refused=share(best.refused, best.in_domain),
            )
        )
    fig.add_vline(
        x=max_refused,
        line=dict(color=OKABE_ITO["black"], dash="dot", width=1),
        annotation_text=say("refusal ceiling {ceiling:.0%}", ceiling=max_refused),
        annotation_position="top right",
    )
    fig.update_layout(
        template="plotly_white",
        title=_("Refusing to bluff: every rule's trade-off"),
        xaxis=dict(title=_("share of answerable queries refused"), range=[-0.02, 1.02], tickformat=".0%"),
        yaxis=dict(title=_("share of out-of-domain queries that bluff"), range=[-0.02, 1.02], tickformat=".0%"),
        legend=dict(title=_("the score the cut reads")),
    )
    return described(
        fig,
        say(
            "One curve per rule, from answering everything (top left) to refusing everything (bottom right); lower "
            "and further left is better. Ringed, each rule's fewest bluffs with at most {ceiling:.0%} of the "
            "answerable queries refused: {points}.",
            ceiling=max_refused,
            points="; ".join(words),
        ),
    )
