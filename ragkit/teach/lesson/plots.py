"""Plotly figures for the notebooks (the interactive layer: the engine never imports this).

Every figure carries a sentence saying what it shows, computed from the same data (its text alternative): a
notebook shows it under the figure, the book gives it to screen readers. Colour never carries meaning alone
(dashes, markers, patterns and labels say it too), and the colours are Okabe and Ito's palette ("Color Universal
Design", 2002), chosen to stay apart under protanopia, deuteranopia and tritanopia (test_accessibility.py
simulates them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ragkit.abstention import ScoreSweep
from ragkit.chunking import SIZE, STRATEGIES
from ragkit.errors import InputError
from ragkit.evaluation import METRICS, Evaluation, with_holm
from ragkit.plumbing.nbformat_import import import_nbformat_quickly
from ragkit.statistics import wilson
from ragkit.teach import language
from ragkit.teach.exercises import EX2
from ragkit.teach.language import _, say
from ragkit.teach.lesson.formats import noun
from ragkit.threshold import CHAPTER_CUTS, DEFAULT_CUT, Sweep, default_cuts

if TYPE_CHECKING:
    from IPython.display import Markdown

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
MARKERS = {"A": "circle", "B": "square", "C": "diamond", "D": "triangle-up", "E": "x", "F": "star"}
IN_DOMAIN, OUT_OF_DOMAIN = OKABE_ITO["blue"], OKABE_ITO["vermillion"]
KEPT, DESTROYED = OKABE_ITO["black"], OKABE_ITO["vermillion"]
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


DISTANCE_RANGE = (0.0, 1.0)
"""The x-axis of every figure of cosine distance (a cut, a query's nearest chunk): figures side by side line up.

From identical (0) to unrelated (1); a cut slider spans CUT_RANGE inside it, and data beyond it widens the axis."""
TIGHTER = "← tighter cut: refuses more"
LOOSER = "looser cut: answers more, bluffs more →"
"""What moving a cut left and right means on every cut axis and slider: right is looser (more distance allowed)."""
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
    return out


def describe(fig: go.BaseFigure | dict) -> str:
    """A figure's text alternative; a figure made without one says so by its title."""
    layout = fig.get("layout", {}) if isinstance(fig, dict) else fig.to_plotly_json()["layout"]
    meta = layout.get("meta")
    if isinstance(meta, dict) and meta.get(DESCRIPTION):
        return str(meta[DESCRIPTION])
    title = layout.get("title", {})
    title = title.get("text", "") if isinstance(title, dict) else str(title or "")
    return say("A figure titled “{title}”.", title=title) if title else _("A figure without a title or description.")


def _share(k: int, n: int) -> str:
    return say("{k} of {n}", k=k, n=n)


def scatter_summary(frame: pd.DataFrame, x: str, ys: Sequence[str], what: str) -> str:
    """One sentence for a scatter of ``ys`` against ``x``: how many points, the ranges and each correlation."""
    parts = [
        say(
            "“{y}” from {low:.3g} to {high:.3g} (correlation with {x} {r:.2f})",
            y=y,
            low=frame[y].min(),
            high=frame[y].max(),
            x=x,
            r=frame[[x, y]].corr().iloc[0, 1],
        )
        for y in ys
    ]
    return say(
        "{n} {what} as points, {x} ({low:.4g} to {high:.4g}) across, {parts} up.",
        n=len(frame),
        what=language.word(what),
        x=x,
        low=frame[x].min(),
        high=frame[x].max(),
        parts="; ".join(parts),
    )


def lowest_points(frame: pd.DataFrame, x: str, ys: Sequence[str]) -> str:
    """One sentence for lines of ``ys`` against ``x``: where each is lowest."""
    parts = [
        say(
            "“{y}” lowest at {x} = {at:.3f} ({lowest:g})",
            y=y,
            x=x,
            at=frame.loc[frame[y].idxmin(), x],
            lowest=frame[y].min(),
        )
        for y in ys
    ]
    return (
        say(
            "{lines} {noun} over {values} values of {x}: ",
            lines=len(ys),
            values=len(frame),
            x=x,
            noun=noun(len(ys), _("line"), _("lines")),
        )
        + "; ".join(parts)
        + "."
    )


def recall_curves(ev: Evaluation, retriever: str = "dense", ks: Sequence[int] = range(1, 21)) -> Described:
    """Hit@k per strategy with its 95% Wilson band."""
    fig = go.Figure()
    ks = list(ks)
    found = []
    for r in ev.results.values():
        if r.retriever != retriever:
            continue
        n = len(r.ranks)
        hits = [int(((r.ranks > 0) & (r.ranks <= k)).sum()) for k in ks]
        lows, highs = zip(*(wilson(h, n) for h in hits))
        colour = COLOURS.get(r.strategy, None)
        dash = "dash" if STRATEGIES[r.strategy].overlap else "solid"
        fig.add_trace(
            go.Scatter(
                x=ks + ks[::-1],
                y=list(highs) + list(lows)[::-1],
                fill="toself",
                line=dict(width=0),
                fillcolor=colour,
                opacity=0.12,
                hoverinfo="skip",
                showlegend=False,
                legendgroup=r.strategy,
            )
        )
        fig.add_trace(
            go.Scatter(
                x=ks,
                y=[h / n for h in hits],
                mode="lines+markers",
                name=f"{r.strategy}: {STRATEGIES[r.strategy].name}",
                line=dict(color=colour, dash=dash),
                marker=dict(symbol=MARKERS.get(r.strategy, "circle"), size=7),
                legendgroup=r.strategy,
            )
        )
        found.append((r.strategy, hits[0], hits[-1], n, lows[-1], highs[-1]))
    fig.update_layout(
        title=say("Hit@k ({retriever}), 95% Wilson bands", retriever=retriever),
        xaxis_title="k",
        yaxis_title="hit@k",
        yaxis_range=[0, 1],
        template="plotly_white",
    )
    if not found:
        return described(
            fig, say("Hit@k for the {retriever} retriever: no strategy was evaluated with it.", retriever=retriever)
        )
    best = max(found, key=lambda f: f[2])
    lines = "; ".join(
        say(
            "{strategy} finds the needle for {share} queries at k = {last_k} (band {low:.2f} to "
            "{high:.2f}), {first} at k = {first_k}",
            strategy=s,
            share=_share(last, n),
            last_k=ks[-1],
            low=lo,
            high=hi,
            first=first,
            first_k=ks[0],
        )
        for s, first, last, n, lo, hi in found
    )
    return described(
        fig,
        say(
            "Hit@k of the {retriever} retriever for k = {first_k} to {last_k}, one line per "
            "chunking strategy (overlapping strategies dashed) with its 95% Wilson band: {lines}. "
            "Highest at k = {last_k}: {best}.",
            retriever=retriever,
            first_k=ks[0],
            last_k=ks[-1],
            lines=lines,
            best=best[0],
        ),
    )


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


def histogram_text(sweep: Sweep, cut: float | None) -> str:
    """The distance histogram's text alternative at one cut (a widget's chart says it anew as its cut moves)."""
    row = sweep.at(cut)
    where = _("no cut (every query answered)") if cut is None else say("the cut at {cut:.3f}", cut=cut)
    return say(
        "Histograms of each query's cosine distance to its nearest chunk: {n_in} in-domain "
        "queries ({in_colour}, hatched /), median {median_in:.3f}, from {low_in:.3f} "
        "to {high_in:.3f}; {n_out} out-of-domain queries ({out_colour}, "
        "hatched x), median {median_out:.3f}, from {low_out:.3f} to "
        "{high_out:.3f}. The dashed line marks {where}: {bluffs} "
        "out-of-domain queries are answered anyway (bluffs) and {refused} "
        "answerable ones refused. {cut_words}",
        in_colour=colour_word(IN_DOMAIN),
        out_colour=colour_word(OUT_OF_DOMAIN),
        n_in=len(sweep.nearest_in),
        median_in=np.median(sweep.nearest_in),
        low_in=sweep.nearest_in.min(),
        high_in=sweep.nearest_in.max(),
        n_out=len(sweep.nearest_out),
        median_out=np.median(sweep.nearest_out),
        low_out=sweep.nearest_out.min(),
        high_out=sweep.nearest_out.max(),
        where=where,
        bluffs=_share(row.bluffs, row.out_of_domain),
        refused=_share(row.refused, row.in_domain),
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
            marker=dict(color=IN_DOMAIN, pattern=dict(shape="/", solidity=0.3)),
            opacity=0.65,
        )
    )
    fig.add_trace(
        go.Histogram(
            x=sweep.nearest_out,
            xbins=bins,
            name=say("out-of-domain ({n})", n=len(sweep.nearest_out)),
            marker=dict(color=OUT_OF_DOMAIN, pattern=dict(shape="x", solidity=0.3)),
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
            "cut {label}: bluffs {bluffs} / {out_of_domain}, refused answerable {refused} / {in_domain}",
            label=label,
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
    return described(
        fig,
        histogram_text(sweep, cut)
        + say(
            " A slider moves the line over {cuts} cuts (from {first} on the left to {last} on the right) and a caption "
            "above the plot gives the bluffs and refusals at each.",
            cuts=len(cuts),
            first=steps[0]["label"],
            last=steps[-1]["label"],
        ),
    )


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
            line=dict(color=OUT_OF_DOMAIN),
            marker=dict(symbol="x", size=6),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=cuts,
            y=[r.refused / r.in_domain for r in rows],
            name=say("refused answerable (share of {n})", n=n_in),
            mode="lines+markers",
            line=dict(color=IN_DOMAIN, dash="dash"),
            marker=dict(symbol="square", size=6),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=cuts,
            y=[r.answered_with_needle / r.in_domain for r in rows],
            name=_("answered with the needle kept"),
            line=dict(color=KEPT, dash="dot", width=3),
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
            bluffs_first=_share(first.bluffs, n_out),
            bluffs_last=_share(last.bluffs, n_out),
            refused_first=_share(first.refused, n_in),
            refused_last=_share(last.refused, n_in),
            kept_first=_share(first.answered_with_needle, n_in),
            kept_last=_share(last.answered_with_needle, n_in),
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
    from ragkit.teach.lesson.tables import rule_label

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
        best = rule.fewest_bluffs(max_refused)
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
                bluffs=_share(best.bluffs, best.out_of_domain),
                refused=_share(best.refused, best.in_domain),
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
            "answerable "
            "queries refused: {points}.",
            ceiling=max_refused,
            points="; ".join(words),
        ),
    )


WITHIN, OVER = PALETTE["green"], PALETTE["orange"]
"""Exercise 2's cost curve: green and solid where a cut stays within the refusal ceiling, orange and dotted over it."""


def _cost_title() -> str:
    return say(
        "Total cost on tune (bluff {bluff:g}, answer without the needle {without:g}, refusal {refusal:g}) "
        "against the cut",
        bluff=EX2.bluff_cost,
        without=EX2.without_needle_cost,
        refusal=EX2.refusal_cost,
    )


def _cheapest_within(costs: pd.DataFrame) -> pd.Series | None:
    """The cheapest row of a cost table within the refusal ceiling (the first of equals), or None."""
    allowed = costs[costs["within ceiling"].astype(bool)]
    return None if allowed.empty else allowed.loc[allowed["cost"].idxmin()]


def cost_curve(costs: pd.DataFrame) -> Described:
    """Exercise 2's total cost against the cut on the tuning half, within the refusal ceiling and over it: the
    cheapest cut within the ceiling starred, the curve's cheaper valleys over it ringed and labelled so."""
    from ragkit.teach.exercises import cost_minima

    costs = costs[costs["cut"].notna()]  # a row without a threshold is no point of the curve
    within = costs["within ceiling"].astype(bool).tolist()
    fig = go.Figure()
    for inside, name, colour, dash, symbol in (
        (True, _("within the refusal ceiling"), WITHIN, "solid", "circle"),
        (False, _("over the refusal ceiling"), OVER, "dot", "x"),
    ):
        fig.add_trace(
            go.Scatter(
                x=costs["cut"],
                y=[c if w == inside else None for c, w in zip(costs["cost"], within)],
                name=name,
                mode="lines+markers",
                line=dict(color=colour, dash=dash),
                marker=dict(symbol=symbol, size=6),
            )
        )
    best = _cheapest_within(costs)
    outside = [
        (cut, cost)
        for cut, cost in cost_minima(costs["cost"], costs["cut"].tolist(), n=len(costs))
        if not bool(costs["within ceiling"][costs["cut"] == cut].iloc[0]) and (best is None or cost < best["cost"])
    ]
    low, high = float(min(0.0, costs["cost"].min())), float(costs["cost"].max())
    first = float(costs["cut"].min())
    for i, (cut, cost) in enumerate(sorted(outside)):
        fig.add_trace(
            go.Scatter(
                x=[cut],
                y=[cost],
                mode="markers",
                showlegend=False,
                hoverinfo="skip",
                name=_("over the refusal ceiling"),
                marker=dict(symbol="circle-open", size=16, color=OVER, line=dict(width=2)),
            )
        )
        # valleys lie close together: their labels stand apart in the empty space above them, in cut order and in
        # three rows, each with an arrow to its ring (placed in the data's units, inside the costs' own range)
        fig.add_annotation(
            x=cut,
            y=cost,
            text=say("{cut:.3f}: over the ceiling", cut=cut),
            showarrow=True,
            axref="x",
            ayref="y",
            ax=max(0.1, first - 0.2) + 0.09 * i,
            ay=high - (high - low) * (0.05 + 0.13 * (i % 3)),
        )
    if best is not None:
        fig.add_trace(
            go.Scatter(
                x=[best["cut"]],
                y=[best["cost"]],
                mode="markers",
                name=_("cheapest within the ceiling"),
                marker=dict(symbol="star", size=16, color=WITHIN, line=dict(color=PALETTE["black"], width=1)),
            )
        )
        fig.add_annotation(
            x=best["cut"],
            y=best["cost"],
            text=say("cheapest within the ceiling: {cut:.3f}", cut=float(best["cut"])),
            showarrow=True,
            axref="x",
            ayref="y",
            ax=float(best["cut"]) + 0.15,
            ay=low + (high - low) * 0.2,
        )  # below the curve where it rises, right of the star
    fig.update_layout(
        template="plotly_white",
        title=_cost_title(),
        yaxis_title=_("cost"),
        height=520,
        legend=dict(title=_("refusals")),
    )
    fig.update_yaxes(range=[low - 0.05 * (high - low), high + 0.1 * (high - low)], autorange=False)
    on_cut_axis(fig)
    return described(fig, _cost_words(costs, best, outside))


def _cost_words(costs: pd.DataFrame, best: pd.Series | None, outside: list[tuple[float, float]]) -> str:
    """The cost curve's text alternative: what is drawn how, the cheapest cut within the ceiling, the cheaper valleys
    over it, and from which cut on the cuts stay within it."""
    drawn = say(
        "Total cost at {n} cuts from {first:.3f} to {last:.3f}, drawn {within} and solid where a cut refuses "
        "few enough answerable queries (within the refusal ceiling), {over} and dotted where it refuses more.",
        n=len(costs),
        first=costs["cut"].min(),
        last=costs["cut"].max(),
        within=colour_word(WITHIN),
        over=colour_word(OVER),
    )
    if best is None:
        return drawn + " " + _("No cut of these stays within the refusal ceiling.")
    cheapest = say(
        " The cheapest cut within the ceiling (starred): {cut:.3f}, cost {cost:g}.",
        cut=float(best["cut"]),
        cost=float(best["cost"]),
    )
    refused = {float(c): int(r) for c, r in zip(costs["cut"], costs["refused"])}
    cheaper = "; ".join(
        say("{cut:.3f} (cost {cost:g}, {refused} refused)", cut=cut, cost=cost, refused=refused[cut])
        for cut, cost in outside
    )
    over = (
        say(" Cheaper valleys over the ceiling (ringed), which refuse too many: {valleys}.", valleys=cheaper)
        if outside
        else ""
    )
    allowed = costs["cut"][costs["within ceiling"].astype(bool)]
    return (
        drawn
        + cheapest
        + over
        + " "
        + say("Cuts from {cut:.3f} up stay within the refusal ceiling.", cut=allowed.min())
    )


HALVES = {"tune": (PALETTE["blue"], "solid", "circle"), "judge": (PALETTE["orange"], "dash", "square")}
"""Colour, dash and marker of exercise 2's two halves."""


def half_name(half: str) -> str:
    """One of exercise 2's halves as a legend and a sentence name it, in the notebook's language."""
    return {"tune": _("tune"), "judge": _("judge")}.get(half, half)


def cost_halves(both: pd.DataFrame, cut: float | None = None) -> Described:
    """Exercise 2's total cost against the cut on the half it was chosen on and the half that judged it, each half's
    cheapest cut within the refusal ceiling starred, and ``cut`` (the student's) as a dashed line."""
    fig = go.Figure()
    words = []
    for half, (colour, dash, symbol) in HALVES.items():
        part = both[both["half"] == half]
        if part.empty:
            continue
        fig.add_trace(
            go.Scatter(
                x=part["cut"],
                y=part["cost"],
                name=half_name(half),
                mode="lines+markers",
                line=dict(color=colour, dash=dash),
                marker=dict(symbol=symbol, size=5),
            )
        )
        best = _cheapest_within(part)
        if best is None:
            words.append(
                say(
                    "{half} ({colour}): no cut within the refusal ceiling",
                    half=half_name(half),
                    colour=colour_word(colour),
                )
            )
            continue
        fig.add_trace(
            go.Scatter(
                x=[best["cut"]],
                y=[best["cost"]],
                mode="markers",
                showlegend=False,
                name=half_name(half),
                hoverinfo="skip",
                marker=dict(symbol="star", size=15, color=colour),
            )
        )
        words.append(
            say(
                "{half} ({colour}) cheapest within the refusal ceiling at {cut:.3f} (cost {cost:g})",
                half=half_name(half),
                colour=colour_word(colour),
                cut=float(best["cut"]),
                cost=float(best["cost"]),
            )
        )
    fig.update_layout(
        template="plotly_white",
        yaxis_title=_("cost"),
        legend=dict(title=_("half")),
        title=_("Total cost on the half chosen on (tune) and the half judged on (judge)"),
    )
    if cut is not None:
        fig.add_vline(
            x=cut, line=dict(color=PALETTE["black"], dash="dash"), annotation_text=say("your cut: {cut:.3f}", cut=cut)
        )
    on_cut_axis(fig)
    text = say(
        "Total cost against the cut on each half, starred at its cheapest cut within the refusal ceiling: {halves}.",
        halves="; ".join(words),
    )
    if cut is not None:
        text += " " + say("The dashed line marks your cut, {cut:.3f}.", cut=cut)
    return described(fig, text)


def judging_half(course: Any, cut: object) -> Described | Markdown:
    """Exercise 2's evidence, once the check passes ``cut``: the cost on the half that judged it beside the half it
    was chosen on. Before that, a sentence saying so: the judging half is the one a student must not look at."""
    from IPython.display import Markdown

    from ragkit.teach.exercises import cost_table, threshold_choice_passes, threshold_halves

    if not threshold_choice_passes(course, cut):
        return Markdown(
            _(
                "*The judging half appears here once the check has passed your cut*: until then it stays "
                "out of sight, because a cut chosen while looking at it would flatter itself. Run this cell "
                "again after a passing check."
            )
        )
    tune, judge = threshold_halves(course.sweep(EX2.strategy, EX2.retriever))
    both = pd.concat([cost_table(tune).assign(half="tune"), cost_table(judge).assign(half="judge")])
    return cost_halves(both, float(cut))  # type: ignore[arg-type]


def win_loss_matrix(
    ev: Evaluation, metric: str = "Hit@20", retriever: str = "dense", level: str = "needle"
) -> Described:
    """Net wins (row minus column) of every pair of strategies; raw and Holm p in the hover.

    The family for Holm is the whole matrix at every metric (each unordered pair once per
    metric): that is how many looks a reader of this figure can take.
    """
    labels = [label for label, r in ev.results.items() if r.retriever == retriever]
    pairs = [(a, b) for i, a in enumerate(labels) for b in labels[i + 1 :]]
    family = with_holm([ev.compare(a, b, m, level) for a, b in pairs for m in METRICS])
    shown = {(c.a, c.b): c for c in family if c.metric == metric}
    net = np.zeros((len(labels), len(labels)))
    text = [["" for _ in labels] for _ in labels]
    for i, a in enumerate(labels):
        for j, b in enumerate(labels):
            if i != j:
                c = shown.get((a, b)) or shown[b, a]
                wins, losses = (c.test.wins, c.test.losses) if c.a == a else (c.test.losses, c.test.wins)
                net[i, j] = wins - losses
                text[i][j] = say(
                    "{a} vs {b} ({unit}): +{wins}/-{losses}, p = {p:.3g}, Holm p = {holm:.3g} over {tests} tests",
                    a=a,
                    b=b,
                    unit=_("needles") if level == "needle" else _("queries"),
                    wins=wins,
                    losses=losses,
                    p=c.test.p,
                    holm=c.p_holm,
                    tests=len(family),
                )
    unit = _("needles") if level == "needle" else _("queries")
    # the signed number in every cell says what the colour says (blue: the row wins, orange: it loses)
    fig = go.Figure(
        go.Heatmap(
            z=net,
            x=labels,
            y=labels,
            text=text,
            hoverinfo="text",
            colorscale=WINS_AND_LOSSES,
            zmid=0,
            texttemplate="%{z:+.0f}",
        )
    )
    fig.update_layout(
        title=say("Row vs column at {metric}: net wins in {unit} (hover for raw and Holm p)", metric=metric, unit=unit),
        template="plotly_white",
        yaxis_autorange="reversed",
    )
    if len(labels) < 2:
        return described(fig, say("Net wins at {metric}: fewer than two strategies to compare.", metric=metric))
    i, j = (int(v) for v in np.unravel_index(int(np.argmax(net)), net.shape))
    best = shown.get((labels[i], labels[j])) or shown[labels[j], labels[i]]
    holding = [f"{c.a} vs {c.b}" for c in shown.values() if c.p_holm is not None and c.p_holm < 0.05]
    sentence = say(
        "A {n} by {n} grid of net wins in {unit} at {metric} ({retriever}), row strategy minus column "
        "strategy, the signed number written in each cell: the largest is {row} over {column}, {net:+.0f} "
        "(Holm p = {holm:.3g}). {holding} of {pairs} pairs hold after Holm's correction at {alpha}",
        n=len(labels),
        unit=unit,
        metric=metric,
        retriever=retriever,
        row=labels[i],
        column=labels[j],
        net=net[i, j],
        holm=best.p_holm,
        holding=len(holding),
        pairs=len(shown),
        alpha=0.05,
    )
    return described(fig, sentence + (f": {', '.join(holding)}." if holding else "."))


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
                line=dict(width=6, color=DESTROYED if cut else KEPT, dash="dot" if cut else "solid"),
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
            "Needles within their blind windows ({colour}, dotted, crossed: destroyed)", colour=colour_word(DESTROYED)
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
            share=_share(len(destroyed), len(spans)),
            colour=colour_word(DESTROYED),
            named=named,
        )
        + (
            say("; {kept} is kept whole ({colour}, solid, round ends).", kept=kept, colour=colour_word(KEPT))
            if kept == 1
            else say("; {kept} are kept whole ({colour}, solid, round ends).", kept=kept, colour=colour_word(KEPT))
        ),
    )
