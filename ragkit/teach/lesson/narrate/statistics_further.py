"""What notebook 02b-statistics-further says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from IPython.display import Markdown


def clustered_interval(row: pd.Series) -> Markdown:
    """One figure's Wilson interval beside its needle-level cluster bootstrap, and the design effect between them."""
    wilson_width, needle_width = row.high - row.low, row.needle_high - row.needle_low
    return Markdown(
        f"E dense, R@20 = **{row.value:.3f}**. Wilson ({row.n} independent queries): **[{row.low:.3f}, "
        f"{row.high:.3f}]**, **{wilson_width:.3f}** wide. Cluster bootstrap over needles: **[{row.needle_low:.3f}, "
        f"{row.needle_high:.3f}]**, **{needle_width:.3f}** wide. Design effect **{row.design_effect:.2f}**: the "
        f"{row.n} queries weigh as much as about **{row.n / row.design_effect:.0f}** independent ones. The clustered "
        f"interval is **{'wider' if needle_width > wilson_width else 'not wider'}** than Wilson's here.")


def design_effects(deff: pd.DataFrame) -> Markdown:
    """The range of the design effects, what one below 1 means, and why the sign test's unit stays the needle."""
    low, high = deff.min().min(), deff.max().max()
    below = "" if low >= 1 else (
        " Below 1, the phrasings of a needle disagree more often than two independent queries would (one finds the "
        "needle, the other does not), and the clustered interval is the narrower one.")
    return Markdown(
        f"Design effects of the dense runs range from **{low:.2f}** to **{high:.2f}**.{below} Whatever the interval "
        "does, the sign test's unit still has to be the needle: two wins that come from one chunk are one piece of "
        "evidence.")


def metric_shopping(shopping: pd.DataFrame, watched: Sequence[str] = ("F/dense vs E/dense", "B/dense vs A/dense")
                    ) -> Markdown:
    """The most striking look the chapter did not choose, the watched pairs' best metric, and why that misleads."""
    unchosen = shopping[~shopping["chosen by the chapter"]]
    best = unchosen.iloc[0]
    hurts = unchosen[unchosen.comparison.isin(list(watched))].sort_values("p").groupby("comparison").head(1)
    each = " ".join(f"{r['comparison']} is most striking at **{r['metric']}** (+{r['wins']}/-{r['losses']}, raw p = "
                    f"{r['p']:.3g}, Holm p = {r['Holm p']:.3g})." for _, r in hurts.iterrows())
    return Markdown(
        f"Of **{len(shopping)}** looks, the most striking one the chapter did *not* choose is **{best.comparison} at "
        f"{best.metric}**: **+{best.wins}/-{best.losses}**, raw p = **{best.p:.3g}**, Holm p over all {len(shopping)} "
        f"= **{best['Holm p']:.3g}**. {each} Picking the metric that makes a story after seeing the table turns noise "
        "into a finding: the metric has to be fixed first, and every extra look has to pay for itself in the "
        "correction.")
