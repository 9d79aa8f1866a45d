"""What notebook 03b-tuning shows of a tuning study besides its narration: the chart of both halves, the summary
table and the knowledge check, and the way a setting and its values are written.

They belong with the plots, the tables and the quiz; they live here until those have a place for notebook 03b.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ragkit.teach.language import _, say
from ragkit.teach.lesson import plots
from ragkit.teach.lesson.quiz import Option, Quiz, QuizQuestion
from ragkit.tuning import Study


def shown(value: Hashable) -> str:
    """A setting's value as people read it: 1,024, 0.25, (0.9, 0.75)."""
    if isinstance(value, tuple):
        return say("({k1:g}, {b:g})", k1=value[0], b=value[1])
    if isinstance(value, int | np.integer):
        return say("{value:,}", value=value)
    return say("{value:g}", value=value)


def label(setting: str) -> str:
    """A setting's name as a label or the start of a line: Chunk size, RRF k, BM25 (k1, b)."""
    names = {"chunk size": _("chunk size"), "overlap": _("overlap"), "RRF k": _("RRF k"),
             "dense weight": _("dense weight"), "BM25 (k1, b)": _("BM25 (k1, b)")}
    text = names.get(setting, setting)
    return text[:1].upper() + text[1:]


def summary(result: Study) -> pd.DataFrame:
    """One row per setting: default, chosen, held-out best, the gains on both halves, the held-out test and Holm."""
    rows = [{_("setting"): label(t.parameter), _("default"): shown(t.default), _("chosen on the tuning half"):
             shown(t.chosen), _("best on the held-out half"): shown(t.held_best),
             say("{metric} gain, tuning half", metric=result.metric): round(t.tune_gain, 3),
             say("{metric} gain, held-out half", metric=result.metric): round(t.held_gain, 3),
             _("needles won/lost"): say("+{wins}/-{losses}", wins=t.judged.test.wins, losses=t.judged.test.losses),
             _("p"): t.judged.test.p, _("Holm p"): t.judged.p_holm} for t in result.tunings]
    return pd.DataFrame(rows)


def chart(result: Study) -> plots.Described:
    """Every value's score on the tuning half and on the held-out half, one panel per setting, choices marked."""
    n = len(result.tunings)
    widths = [len(t.trials) + 2 for t in result.tunings]  # a panel as wide as its values need
    fig = make_subplots(rows=1, cols=n, subplot_titles=[label(t.parameter) for t in result.tunings],
                        column_widths=[width / sum(widths) for width in widths], horizontal_spacing=0.03)
    tune_colour, held_colour = plots.OKABE_ITO["blue"], plots.OKABE_ITO["vermillion"]
    for col, t in enumerate(result.tunings, 1):
        xs = [shown(tr.value) for tr in t.trials]
        first = col == 1
        fig.add_trace(go.Scatter(x=xs, y=[tr.tune for tr in t.trials], name=_("tuning half"), mode="lines+markers",
                                 line=dict(color=tune_colour), marker=dict(symbol="circle", size=7),
                                 showlegend=first, legendgroup="tune"), row=1, col=col)
        fig.add_trace(go.Scatter(x=xs, y=[tr.held for tr in t.trials], name=_("held-out half"), mode="lines+markers",
                                 line=dict(color=held_colour, dash="dash"), marker=dict(symbol="square", size=7),
                                 showlegend=first, legendgroup="held"), row=1, col=col)
        chosen, best = t.trial(t.chosen), t.trial(t.held_best)
        fig.add_trace(go.Scatter(x=[shown(chosen.value)], y=[chosen.tune], name=_("chosen on the tuning half"),
                                 mode="markers", marker=dict(symbol="star", size=15, color=tune_colour),
                                 showlegend=first, legendgroup="chosen"), row=1, col=col)
        fig.add_trace(go.Scatter(x=[shown(best.value)], y=[best.held], name=_("best on the held-out half"),
                                 mode="markers", marker=dict(symbol="diamond-open", size=15, color=held_colour,
                                                         line=dict(width=2)),
                                 showlegend=first, legendgroup="best"), row=1, col=col)
        fig.update_xaxes(type="category", tickangle=-60 if len(xs) > 8 else 0, row=1, col=col)
    fig.update_yaxes(title_text=result.metric, row=1, col=1)
    fig.update_layout(template="plotly_white", height=420, legend=dict(orientation="h", y=-0.35),
                      title=say("{metric} of every value on the half that chooses and on the half that judges",
                                metric=result.metric))
    parts = [say("{setting}: chosen {chosen}, held-out best {best}", setting=label(t.parameter), chosen=shown(t.chosen),
                 best=shown(t.held_best)) for t in result.tunings]
    gap = np.mean([tr.tune - tr.held for t in result.tunings for tr in t.trials])
    return plots.described(fig, say(
        "{n} panels, one per setting, each value's {metric} on the tuning half (solid line, circles) and on the "
        "held-out half (dashed line, squares); a star marks the value chosen on the tuning half, an open diamond the "
        "best on the held-out half. {parts}. On average a value scores {gap:+.3f} more on the tuning half than on the "
        "held-out half.", n=n, metric=result.metric, parts="; ".join(parts), gap=gap))


def questions(result: Study) -> list[QuizQuestion]:
    """Notebook 03b's questions, the applied ones computed from the study."""
    changed = next((t for t in result.tunings if t.chosen != t.default), result.tunings[0])
    trial = changed.trial(changed.chosen)
    lost = next((t for t in result.tunings if t.loses), None)
    judged = lost or changed
    below = judged.loses
    return [
        QuizQuestion(say("The tuning half chose {value} for {setting}. Which figure estimates how it will do on "
                         "questions nobody has asked yet?", value=shown(changed.chosen),
                         setting=label(changed.parameter)), (
            Option(say("its score on the held-out half, {held:.3f}", held=trial.held), True,
                   _("right: the held-out needles played no part in choosing it, so their score carries no luck of "
                     "the choice")),
            Option(say("its score on the tuning half, {tune:.3f}", tune=trial.tune), False,
                   _("that score is why it was chosen: the best of several noisy scores is partly the luckiest")),
            Option(say("the mean of the two, {mean:.3f}", mean=(trial.tune + trial.held) / 2), False,
                   _("half of that mean is still the score the value was chosen on"))), applies=True),
        QuizQuestion(say("On the held-out half, does {setting}'s value chosen on the tuning half ({chosen}) score "
                         "below the default ({default})?", setting=label(judged.parameter), chosen=shown(judged.chosen),
                         default=shown(judged.default)), (
            Option(_("yes"), below, say("{verdict}: {held:.3f} against {default:.3f} held out",
                                        verdict=_("right") if below else _("no"),
                                        held=judged.trial(judged.chosen).held,
                                        default=judged.trial(judged.default).held)),
            Option(_("no"), not below, say("{verdict}: {held:.3f} against {default:.3f} held out",
                                           verdict=_("no") if below else _("right"),
                                           held=judged.trial(judged.chosen).held,
                                           default=judged.trial(judged.default).held))), applies=True),
        QuizQuestion(_("Why do both phrasings of a needle go to the same half?"), (
            Option(_("they look for the same sentence in the same chunk: split them and the tuning half has seen "
                     "half of every held-out answer"), True,
                   _("right: the held-out half must hold needles the choice never saw")),
            Option(_("so that each half has the same number of queries"), False,
                   _("splitting by query would balance the counts too; the reason is what the halves must not share")),
            Option(_("because the ticket phrasing is harder"), False,
                   _("both halves get both phrasings of their needles; difficulty is not the reason")))),
        QuizQuestion(_("Five settings were each judged on the held-out half. Why do their p-values take Holm's "
                       "correction together?"), (
            Option(_("five looks give five chances for one p below 0.05 by luck alone"), True,
                   _("right: Holm keeps the chance of any false finding among the five at 0.05 or below")),
            Option(_("because the held-out half is smaller than the whole"), False,
                   _("a smaller sample widens each test, it does not multiply the looks")),
            Option(_("because the settings were chosen on the tuning half"), False,
                   _("the held-out half already takes care of that; Holm is for the number of comparisons"))))]


def knowledge_check(result: Study, student: str | None = None) -> Quiz:
    """Notebook 03b's knowledge check on a study of one's own (the notebook's is ``Quiz("03b", course)``)."""
    return Quiz.asking("03b", questions(result), student)
