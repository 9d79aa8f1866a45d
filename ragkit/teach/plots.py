"""Plotly figures for the notebooks (the interactive layer: the engine never imports this)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import plotly.graph_objects as go

from ragkit.chunking import SIZE, STRATEGIES
from ragkit.errors import InputError
from ragkit.evaluation import METRICS, Evaluation, with_holm
from ragkit.statistics import wilson
from ragkit.threshold import CHAPTER_CUTS, DEFAULT_CUT, Sweep, default_cuts

COLOURS = {"A": "#9e9e9e", "B": "#616161", "C": "#64b5f6", "D": "#1565c0", "E": "#ef6c00", "F": "#b71c1c"}


def recall_curves(ev: Evaluation, retriever: str = "dense", ks: Sequence[int] = range(1, 21)) -> go.Figure:
    """Recall@k per strategy with its 95% Wilson band."""
    fig = go.Figure()
    for r in ev.results.values():
        if r.retriever != retriever:
            continue
        n = len(r.ranks)
        hits = [int(((r.ranks > 0) & (r.ranks <= k)).sum()) for k in ks]
        lows, highs = zip(*(wilson(h, n) for h in hits))
        colour = COLOURS.get(r.strategy, None)
        fig.add_trace(go.Scatter(x=list(ks) + list(ks)[::-1], y=list(highs) + list(lows)[::-1], fill="toself",
                                 line=dict(width=0), fillcolor=colour, opacity=0.12, hoverinfo="skip",
                                 showlegend=False, legendgroup=r.strategy))
        fig.add_trace(go.Scatter(x=list(ks), y=[h / n for h in hits], mode="lines+markers", name=
                                 f"{r.strategy}: {STRATEGIES[r.strategy].name}", line=dict(color=colour),
                                 legendgroup=r.strategy))
    fig.update_layout(title=f"Recall@k ({retriever}), 95% Wilson bands", xaxis_title="k", yaxis_title="recall@k",
                      yaxis_range=[0, 1], template="plotly_white")
    return fig


def distance_histogram(sweep: Sweep, cut: float | None = DEFAULT_CUT, widget: bool = False) -> go.Figure:
    """Nearest-chunk distance of every in-domain and out-of-domain query, with the cut as a line."""
    fig_cls = go.FigureWidget if widget else go.Figure
    fig = fig_cls()
    bins = dict(start=0.0, end=1.2, size=0.025)
    fig.add_trace(go.Histogram(x=sweep.nearest_in, xbins=bins, name=f"in-domain ({len(sweep.nearest_in)})",
                               marker_color="#1565c0", opacity=0.65))
    fig.add_trace(go.Histogram(x=sweep.nearest_out, xbins=bins, name=f"out-of-domain ({len(sweep.nearest_out)})",
                               marker_color="#c62828", opacity=0.65))
    fig.update_layout(barmode="overlay", template="plotly_white", xaxis_title="cosine distance to the nearest chunk",
                      yaxis_title="queries", title="Where a cut has to fall", shapes=[_cut_line(cut)])
    return fig


def _cut_line(cut: float | None) -> dict:
    x = 2.0 if cut is None else cut
    return dict(type="line", x0=x, x1=x, yref="paper", y0=0, y1=1, line=dict(color="black", dash="dash"))


def move_cut(fig: go.Figure, cut: float | None) -> None:
    """Move the cut line of a distance histogram."""
    fig.layout.shapes = [_cut_line(cut)]


def threshold_slider(sweep: Sweep, cuts: Sequence[float | None] | None = None,
                     cut: float | None = CHAPTER_CUTS[0]) -> go.Figure:
    """The distance histogram with a slider over the cuts: a plain figure, so it works without a kernel."""
    cuts = default_cuts() if cuts is None else list(cuts)
    if cut not in cuts:
        raise InputError(f"cut {cut!r} is not on the slider: start at one of its cuts, or pass cuts that include it")
    fig = distance_histogram(sweep, cut)
    fig.update_xaxes(range=[0.0, 1.2])
    steps: list[dict[str, Any]] = []
    for c in cuts:
        row = sweep.at(c)
        label = "none" if c is None else f"{c:.3f}"
        text = (f"cut {label}: bluffs {row.bluffs} / {row.out_of_domain}, "
                f"refused answerable {row.refused} / {row.in_domain}")
        note = dict(text=text, xref="paper", yref="paper", x=0.0, y=1.0, xanchor="left", yanchor="bottom",
                    showarrow=False, font=dict(size=14))
        steps.append(dict(method="relayout", label=label, args=[{"shapes": [_cut_line(c)], "annotations": [note]}]))
    active = cuts.index(cut)
    fig.update_layout(sliders=[dict(active=active, steps=steps, currentvalue=dict(prefix="cut: "), pad=dict(t=50))],
                      title="Where a cut has to fall: move the slider (no kernel needed)",
                      margin=dict(t=110), **steps[active]["args"][0])
    return fig


def bluffs_and_refusals(sweep: Sweep) -> go.Figure:
    """Bluffs (share of out-of-domain queries) and refused answerable questions (share of in-domain) by cut."""
    rows = [row for row in sweep.rows() if row.cut is not None]
    cuts = [row.cut for row in rows]
    n_out, n_in = len(sweep.out_of_domain), len(sweep.queries)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=cuts, y=[r.bluffs / r.out_of_domain for r in rows], name=f"bluffs (share of {n_out})",
                             line=dict(color="#c62828")))
    fig.add_trace(go.Scatter(x=cuts, y=[r.refused / r.in_domain for r in rows],
                             name=f"refused answerable (share of {n_in})", line=dict(color="#1565c0")))
    fig.add_trace(go.Scatter(x=cuts, y=[r.answered_with_needle / r.in_domain for r in rows],
                             name="answered with the needle kept", line=dict(color="#2e7d32", dash="dot")))
    fig.update_layout(template="plotly_white", xaxis_title="cut (cosine distance)", yaxis_title="share of queries",
                      title="What each cut costs", xaxis_autorange="reversed")
    return fig


def win_loss_matrix(ev: Evaluation, metric: str = "R@20", retriever: str = "dense", level: str = "needle") -> go.Figure:
    """Net wins (row minus column) of every pair of strategies; raw and Holm p in the hover.

    The family for Holm is the whole matrix at every metric (each unordered pair once per
    metric): that is how many looks a reader of this figure can take.
    """
    labels = [label for label, r in ev.results.items() if r.retriever == retriever]
    pairs = [(a, b) for i, a in enumerate(labels) for b in labels[i + 1:]]
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
                text[i][j] = (f"{a} vs {b} ({level}s): +{wins}/-{losses}, p = {c.test.p:.3g}, "
                              f"Holm p = {c.p_holm:.3g} over {len(family)} tests")
    unit = "needles" if level == "needle" else "queries"
    fig = go.Figure(go.Heatmap(z=net, x=labels, y=labels, text=text, hoverinfo="text", colorscale="RdBu",
                               zmid=0, texttemplate="%{z:+.0f}"))
    fig.update_layout(title=f"Row vs column at {metric}: net wins in {unit} (hover for raw and Holm p)",
                      template="plotly_white", yaxis_autorange="reversed")
    return fig


def needle_cuts(spans: Sequence[tuple[str, int, int]], size: int = SIZE) -> go.Figure:
    """Needles as (id, offset in their blind window, length): one that runs past the window's end is cut in two."""
    fig = go.Figure()
    for row, (qid, offset, length) in enumerate(spans):
        cut = offset + length > size
        fig.add_trace(go.Scatter(x=[offset, offset + length], y=[row, row], mode="lines",
                                 line=dict(width=6, color="#c62828" if cut else "#2e7d32"),
                                 name=qid, hovertext=f"{qid}: {length} characters from offset {offset}",
                                 showlegend=False))
    fig.add_vline(x=size, line_dash="dash", annotation_text="blind cut")
    fig.update_layout(template="plotly_white", title="Needles within their blind windows (red: destroyed)",
                      xaxis_title="offset within the window", yaxis=dict(tickvals=list(range(len(spans))),
                                                                        ticktext=[s[0] for s in spans]),
                      height=max(300, 18 * len(spans)))
    return fig
