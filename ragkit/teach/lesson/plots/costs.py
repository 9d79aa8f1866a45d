"""Exercise 2's cost charts: the total cost against the cut, within the refusal ceiling and over it, on either half."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd
import plotly.graph_objects as go

from ragkit.teach.exercises import EX2, cost_minima
from ragkit.teach.language import _, say
from ragkit.teach.lesson.plots.figure import PALETTE, Described, colour_word, described
from ragkit.teach.lesson.plots.thresholds import on_cut_axis

if TYPE_CHECKING:
    from IPython.display import Markdown

__all__ = ["HALVES", "OVER", "WITHIN", "cost_curve", "cost_halves", "half_name", "judging_half", "last_over_ceiling"]


WITHIN = PALETTE["green"]
OVER = PALETTE["orange"]
"""Exercise 2's cost curve: green and solid where a cut stays within the refusal ceiling, orange and dotted over it."""


def _cost_title() -> str:
    return say(
        "Total cost on tune (bluff {bluff:g}, answer without the needle {without:g}, refusal {refusal:g}) against the "
        "cut",
        bluff=EX2.bluff_cost,
        without=EX2.without_needle_cost,
        refusal=EX2.refusal_cost,
    )


def _cheapest_within(costs: pd.DataFrame) -> pd.Series | None:
    """The cheapest row of a cost table within the refusal ceiling (the first of equals), or None."""
    allowed = costs[costs["within ceiling"].astype(bool)]
    return None if allowed.empty else allowed.loc[allowed["cost"].idxmin()]


def cost_curve(costs: pd.DataFrame) -> Described:
    """Exercise 2's total cost against the cut on the tuning half, within the refusal ceiling and over it: the curve's
    valleys over the ceiling that are cheaper than every cut within it ringed and labelled so. The cheapest cut within
    the ceiling is the student's to find, so nothing marks it."""
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
    outside = _cheaper_over_ceiling(costs)
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
    fig.update_layout(
        template="plotly_white",
        title=_cost_title(),
        yaxis_title=_("cost"),
        height=520,
        legend=dict(title=_("refusals")),
    )
    fig.update_yaxes(range=[low - 0.05 * (high - low), high + 0.1 * (high - low)], autorange=False)
    on_cut_axis(fig)
    return described(fig, _cost_words(costs, outside))


def _cheaper_over_ceiling(costs: pd.DataFrame) -> list[tuple[float, float]]:
    """The cost curve's valleys over the refusal ceiling that cost less than every cut within it, as (cut, cost)."""
    best = _cheapest_within(costs)
    return [
        (cut, cost)
        for cut, cost in cost_minima(costs["cost"], costs["cut"].tolist(), n=len(costs))
        if not bool(costs["within ceiling"][costs["cut"] == cut].iloc[0]) and (best is None or cost < best["cost"])
    ]


def last_over_ceiling(costs: pd.DataFrame) -> float | None:
    """The loosest cut of a cost table that refuses too many (over the refusal ceiling), or None when none does."""
    over = costs["cut"][costs["cut"].notna() & ~costs["within ceiling"].astype(bool)]
    return None if over.empty else float(over.max())


def _cost_words(costs: pd.DataFrame, outside: list[tuple[float, float]]) -> str:
    """The cost curve's text alternative: what is drawn how, the cheaper valleys over the ceiling, and up to which cut
    the cuts refuse too many (never the cheapest cut within it: that is the exercise)."""
    drawn = say(
        "Total cost at {n} cuts from {first:.3f} to {last:.3f}, drawn {within} and solid where a cut refuses "
        "few enough answerable queries (within the refusal ceiling), {over} and dotted where it refuses more.",
        n=len(costs),
        first=costs["cut"].min(),
        last=costs["cut"].max(),
        within=colour_word(WITHIN),
        over=colour_word(OVER),
    )
    if not costs["within ceiling"].astype(bool).any():
        return drawn + " " + _("No cut of these stays within the refusal ceiling.")
    refused = {float(c): int(r) for c, r in zip(costs["cut"], costs["refused"])}
    cheaper = "; ".join(
        say("{cut:.3f} (cost {cost:g}, {refused} refused)", cut=cut, cost=cost, refused=refused[cut])
        for cut, cost in outside
    )
    over = (
        " " + say("Cheaper valleys over the ceiling (ringed), which refuse too many: {valleys}.", valleys=cheaper)
        if outside
        else ""
    )
    last = last_over_ceiling(costs)
    bound = (
        _("Every cut stays within the refusal ceiling.")
        if last is None
        else say("Cuts up to {cut:.3f} refuse too many: they are over the refusal ceiling.", cut=last)
    )
    return drawn + over + " " + bound


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

    from ragkit.teach.exercises import cost_table, passed_here, threshold_halves

    if not passed_here(cut):
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
