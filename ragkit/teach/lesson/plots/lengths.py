"""Norms and distances against text length (notebook 05): what un-normalised vectors do with length, and cosine not."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd
import plotly.express as px

from ragkit.teach import language
from ragkit.teach.language import _
from ragkit.teach.lesson.plots.figure import Described, described
from ragkit.teach.lesson.plots.recall import scatter_summary

__all__ = ["nearest_against_length", "norm_against_length"]


def _labels(columns: Iterable[str]) -> dict[str, str]:
    """Each column's name as a chart shows it, in the notebook's language (the frame keeps its English names)."""
    return {c: language.word(c) for c in columns}


def norm_against_length(lengths: pd.DataFrame) -> Described:
    """Each chunk's un-normalised norm against its length in word pieces (its characters on hover)."""
    fig = px.scatter(
        lengths,
        x="word pieces",
        y="norm, un-normalised",
        hover_data=["characters"],
        title=_("Un-normalised chunk vectors: norm against length"),
        height=380,
        labels=_labels(lengths.columns),
    )
    return described(fig, scatter_summary(lengths, "word pieces", ["norm, un-normalised"], _("chunks")))


def nearest_against_length(nearest: pd.DataFrame, distances: Sequence[str]) -> Described:
    """Each query's distance to its nearest chunk against the query's length, one panel per distance."""
    fig = px.scatter(
        nearest,
        x="query word pieces",
        y=list(distances),
        facet_col="variable",
        height=380,
        title=_("Distance to the nearest chunk against query length"),
        labels={**_labels(nearest.columns), "variable": _("which distance"), "value": _("distance")},
    )
    fig.update_yaxes(matches=None, showticklabels=True)
    what = _("queries, one panel per distance,")
    return described(fig, scatter_summary(nearest, "query word pieces", distances, what))
