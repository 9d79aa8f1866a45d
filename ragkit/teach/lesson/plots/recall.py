"""Recall and rank: Hit@k per strategy with its Wilson band, the win-loss grid, a scatter's sentence."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ragkit.chunking import STRATEGIES
from ragkit.evaluation import METRICS, Evaluation, with_holm
from ragkit.statistics import ALPHA, wilson
from ragkit.teach import language
from ragkit.teach.language import _, say
from ragkit.teach.lesson.plots.figure import COLOURS, STRATEGY_MARKERS, WINS_AND_LOSSES, Described, described, share

__all__ = ["recall_curves", "scatter_summary", "win_loss_matrix"]


def scatter_summary(frame: pd.DataFrame, x: str, ys: Sequence[str], what: str) -> str:
    """One sentence for a scatter of ``ys`` against ``x``: how many points, the ranges and each correlation."""
    parts = [
        say(
            "“{y}” from {low:.3g} to {high:.3g} (correlation with {x} {r:.2f})",
            y=language.word(y),
            low=frame[y].min(),
            high=frame[y].max(),
            x=language.word(x),
            r=frame[[x, y]].corr().iloc[0, 1],
        )
        for y in ys
    ]
    return say(
        "{n} {what} as points, {x} ({low:.4g} to {high:.4g}) across, {parts} up.",
        n=len(frame),
        what=language.word(what),
        x=language.word(x),
        low=frame[x].min(),
        high=frame[x].max(),
        parts="; ".join(parts),
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
        hits = [int(r.per_query(f"Hit@{k}").sum()) for k in ks]  # the evaluation's hit rule, not a copy of it
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
                marker=dict(symbol=STRATEGY_MARKERS.get(r.strategy, "circle"), size=7),
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
            share=share(last, n),
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
    holding = [f"{c.a} vs {c.b}" for c in shown.values() if c.p_holm is not None and c.p_holm < ALPHA]
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
        alpha=ALPHA,
    )
    return described(fig, sentence + (f": {', '.join(holding)}." if holding else "."))
