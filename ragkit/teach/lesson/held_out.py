"""What notebook 03b-tuning shows of a tuning study besides its narration: the chart of both halves and the summary
table (the words for a setting and its values are ``settings``'s).

They belong with the plots and the tables; they live here until those have a place for notebook 03b.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from pandas.io.formats.style import Styler
from plotly.subplots import make_subplots

from ragkit.teach import language
from ragkit.teach.language import _, say
from ragkit.teach.lesson import plots
from ragkit.teach.lesson.settings import setting_name, setting_value
from ragkit.tuning import Study

__all__ = ["chart", "setting_value", "summary_table"]  # setting_value: 03b writes its table's values with it


def _frame(result: Study) -> pd.DataFrame:
    """One row per setting: default, chosen, held-out best, the gains on both halves, the held-out test and Holm."""
    rows = [
        {
            _("setting"): setting_name(t.parameter),
            _("default"): setting_value(t.default),
            _("chosen on the tuning half"): setting_value(t.chosen),
            _("best on the held-out half"): setting_value(t.held_best),
            say("{metric} gain, tuning half", metric=result.metric): round(t.tune_gain, 3),
            say("{metric} gain, held-out half", metric=result.metric): round(t.held_gain, 3),
            _("needles won/lost"): say("+{wins}/-{losses}", wins=t.judged.test.wins, losses=t.judged.test.losses),
            _("p"): t.judged.test.p,
            _("Holm p"): t.judged.p_holm,
        }
        for t in result.tunings
    ]
    return pd.DataFrame(rows)


def summary_table(result: Study) -> Styler:
    """One row per setting: default, chosen, held-out best, the gains on both halves, the held-out test and Holm, as
    the notebook shows it: p-values to three significant digits, gains signed to three decimals,
    decimal commas in a Dutch kernel (the headings it formats are the kernel's, so it finds them in either language)."""
    frame = _frame(result)
    gains = [
        say("{metric} gain, tuning half", metric=result.metric),
        say("{metric} gain, held-out half", metric=result.metric),
    ]
    formats = {_("p"): "{:.3g}", _("Holm p"): "{:.3g}"} | {c: "{:+.3f}" for c in gains}
    dutch = language.current() == "nl"
    return frame.style.format(formats, decimal="," if dutch else ".").hide(axis="index")


def chart(result: Study) -> plots.Described:
    """Every value's score on the tuning half and on the held-out half, one panel per setting, choices marked."""
    n = len(result.tunings)
    widths = [len(t.trials) + 2 for t in result.tunings]  # a panel as wide as its values need
    fig = make_subplots(
        rows=1,
        cols=n,
        subplot_titles=[setting_name(t.parameter) for t in result.tunings],
        column_widths=[width / sum(widths) for width in widths],
        horizontal_spacing=0.03,
    )
    tune_colour, held_colour = plots.OKABE_ITO["blue"], plots.OKABE_ITO["vermillion"]
    for col, t in enumerate(result.tunings, 1):
        xs = [setting_value(tr.value) for tr in t.trials]
        first = col == 1
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=[tr.tune for tr in t.trials],
                name=_("tuning half"),
                mode="lines+markers",
                line=dict(color=tune_colour),
                marker=dict(symbol="circle", size=7),
                showlegend=first,
                legendgroup="tune",
            ),
            row=1,
            col=col,
        )
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=[tr.held for tr in t.trials],
                name=_("held-out half"),
                mode="lines+markers",
                line=dict(color=held_colour, dash="dash"),
                marker=dict(symbol="square", size=7),
                showlegend=first,
                legendgroup="held",
            ),
            row=1,
            col=col,
        )
        chosen, best = t.trial(t.chosen), t.trial(t.held_best)
        fig.add_trace(
            go.Scatter(
                x=[setting_value(chosen.value)],
                y=[chosen.tune],
                name=_("chosen on the tuning half"),
                mode="markers",
                marker=dict(symbol="star", size=15, color=tune_colour),
                showlegend=first,
                legendgroup="chosen",
            ),
            row=1,
            col=col,
        )
        fig.add_trace(
            go.Scatter(
                x=[setting_value(best.value)],
                y=[best.held],
                name=_("best on the held-out half"),
                mode="markers",
                marker=dict(symbol="diamond-open", size=15, color=held_colour, line=dict(width=2)),
                showlegend=first,
                legendgroup="best",
            ),
            row=1,
            col=col,
        )
        fig.update_xaxes(type="category", tickangle=-60 if len(xs) > 8 else 0, row=1, col=col)
    fig.update_yaxes(title_text=result.metric, row=1, col=1)
    fig.update_layout(
        template="plotly_white",
        height=420,
        legend=dict(orientation="h", y=-0.35),
        title=say("{metric} of every value on the half that chooses and on the half that judges", metric=result.metric),
    )
    parts = [
        say(
            "{setting}: chosen {chosen}, held-out best {best}",
            setting=setting_name(t.parameter),
            chosen=setting_value(t.chosen),
            best=setting_value(t.held_best),
        )
        for t in result.tunings
    ]
    gap = np.mean([tr.tune - tr.held for t in result.tunings for tr in t.trials])
    return plots.described(
        fig,
        say(
            "{n} panels, one per setting, each value's {metric} on the tuning half (solid line, circles) and on the "
            "held-out half (dashed line, squares); a star marks the value chosen on the tuning half, an open diamond "
            "the best on the held-out half. {parts}. On average a value scores {gap:+.3f} more on the tuning half than "
            "on the held-out half.",
            n=n,
            metric=result.metric,
            parts="; ".join(parts),
            gap=gap,
        ),
    )


def __getattr__(name: str) -> object:
    """A name an older copy of a notebook calls here that is called otherwise now (``ragkit.teach.moved``)."""
    from ragkit.teach.moved import moved_name

    return moved_name(__name__, name)
