"""What notebook 02b-statistics-further says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from IPython.display import Markdown

from ragkit.teach.language import _, say

__all__ = ["clustered_interval", "design_effects", "holm_checked", "metric_shopping"]


def clustered_interval(row: pd.Series, needles: int) -> Markdown:
    """One figure's Wilson interval beside its needle-level cluster bootstrap over ``needles`` needles (G), and the
    design effect between them."""
    wilson_width, needle_width = row.high - row.low, row.needle_high - row.needle_low
    return Markdown(
        say(
            "E dense, Hit@20 = **{value:.3f}**. Wilson ({n} independent queries): **[{low:.3f}, {high:.3f}]**, "
            "**{wilson_width:.3f}** wide. Cluster bootstrap over needles: **[{needle_low:.3f}, {needle_high:.3f}]**, "
            "**{needle_width:.3f}** wide. Design effect **{design_effect:.2f}**: the {n} queries weigh as much as "
            "about **{effective:.0f}** independent ones. The clustered interval is **{wider}** than Wilson's here.",
            value=row.value,
            n=row.n,
            low=row.low,
            high=row.high,
            wilson_width=wilson_width,
            needle_low=row.needle_low,
            needle_high=row.needle_high,
            needle_width=needle_width,
            design_effect=row.design_effect,
            effective=row.n / row.design_effect,
            wider=_("wider") if needle_width > wilson_width else _("not wider"),
        )
        + " "
        + say(
            "The bootstrap resampled G = **{needles}** needles, so its variance was scaled by G/(G - 1) = "
            "**{needles}/{fewer}**.",
            needles=needles,
            fewer=needles - 1,
        )
    )


def design_effects(deff: pd.DataFrame) -> Markdown:
    """The range of the design effects, what one below 1 means, and why the sign test's unit stays the needle."""
    low, high = deff.min().min(), deff.max().max()
    below = (
        ""
        if low >= 1
        else _(
            " Below 1, the phrasings of a needle disagree more often than two independent queries would (one finds the "
            "needle, the other does not), and the clustered interval is the narrower one."
        )
    )
    return Markdown(
        say(
            "Design effects of the dense runs range from **{low:.2f}** to **{high:.2f}**.{below} Whatever the interval "
            "does, the sign test's unit still has to be the needle: two wins that come from one chunk are one piece of "
            "evidence.",
            low=low,
            high=high,
            below=below,
        )
    )


def metric_shopping(
    shopping: pd.DataFrame, watched: Sequence[str] = ("F/dense vs E/dense", "B/dense vs A/dense")
) -> Markdown:
    """The most striking look the chapter did not choose, the watched pairs' best metric, and why that misleads."""
    unchosen = shopping[~shopping["chosen by the chapter"]]
    best = unchosen.iloc[0]
    hurts = unchosen[unchosen.comparison.isin(list(watched))].sort_values("p").groupby("comparison").head(1)
    each = " ".join(
        say(
            "{comparison} is most striking at **{metric}** (+{wins}/-{losses}, raw p = {p:.3g}, Holm p = {holm:.3g}).",
            comparison=r["comparison"],
            metric=r["metric"],
            wins=r["wins"],
            losses=r["losses"],
            p=r["p"],
            holm=r["Holm p"],
        )
        for _i, r in hurts.iterrows()
    )
    return Markdown(
        say(
            "Of **{looks}** looks, the most striking one the chapter did *not* choose is **{comparison} at {metric}**: "
            "**+{wins}/-{losses}**, raw p = **{p:.3g}**, Holm p over all {looks} = **{holm:.3g}**. {each} Picking the "
            "metric that makes a story after seeing the table turns noise into a finding: the metric has to be fixed "
            "first, and every extra look has to pay for itself in the correction.",
            looks=len(shopping),
            comparison=best.comparison,
            metric=best.metric,
            wins=best.wins,
            losses=best.losses,
            p=best.p,
            holm=best["Holm p"],
            each=each,
        )
    )


def holm_checked(
    families: Sequence[Sequence[float]], worst: float, same: bool, comparisons: int, chance: float
) -> Markdown:
    """Holm by hand against statsmodels and ragkit, and the chance of a false alarm without a correction."""
    return Markdown(
        say(
            "Largest difference from statsmodels over **{families}** random families: **{worst:.1e}**; identical to "
            "`ragkit.statistics.holm` on every one: **{same}**. Without a correction, {comparisons} independent "
            "comparisons with nothing going on would give at least one p below 0.05 with probability up to "
            "**{chance:.2f}** (up to: an exact test falls below 0.05 at most one time in twenty).",
            families=len(families),
            worst=worst,
            same=_("yes") if same else _("no"),
            comparisons=comparisons,
            chance=chance,
        )
    )
