"""What the exercises' notebooks say from their results: one narrator per cell of computed prose."""

from __future__ import annotations

import numpy as np
import pandas as pd
from IPython.display import Markdown
from pandas.io.formats.style import Styler

from ragkit.chunking import SIZE
from ragkit.data import Question, shared_needle_words
from ragkit.evaluation import Evaluation
from ragkit.statistics import verdict
from ragkit.teach.course import chapter
from ragkit.teach.exercises import EX2, EX3, cost_minima, exercise_cost, refusal_ceiling
from ragkit.teach.language import _, say
from ragkit.teach.lesson import formats
from ragkit.threshold import Sweep, SweepRow
from ragkit.words import content_words, copied_share


def destroyed_at_size(carried: np.ndarray, mine: np.ndarray, size: int) -> Markdown:
    """Needles blind chunking destroys at the course's size and at the student's, beside the chapter's count."""
    return Markdown(say("Needles destroyed by blind chunking: the chapter **{chapter_destroyed}**; this corpus "
                        "**{destroyed}** of **{needles}** at {course_size} characters, **{mine}** at your {size}.",
                        chapter_destroyed=chapter.DESTROYED_BLIND, destroyed=int((~carried).sum()),
                        needles=len(carried), course_size=SIZE, mine=int((~mine).sum()), size=size))


def window_owner(size: int) -> Markdown:
    """Whose ex1 window this is: the name the grader uses too, a name given to ``student()``, or nobody's yet."""
    import os

    from ragkit.teach.exercises import current_student, login, results_path, system_student

    me, where = current_student(), results_path()
    if system_student():
        return Markdown(say("Your blind window: **{size}** characters, assigned to **{me}**: the name your teacher's "
                            "grader gives you too (your login, or your hub name). Checks record your results in "
                            "`{where}`.", size=size, me=me, where=where))
    if me != login(os.getuid()):
        return Markdown(say("Your blind window: **{size}** characters, assigned to **{me}**, the name you gave "
                            "`student(...)`: it must be exactly the name on your class list. Checks record your "
                            "results in `{where}`.", size=size, me=me, where=where))
    return Markdown(say("Your blind window: **{size}** characters, assigned to **{me}**, a name this machine gives "
                        "everyone (Binder, Colab): call `ragkit.teach.exercises.student('the name on your class "
                        "list')` first, then run this cell again. Checks record your results in `{where}`.",
                        size=size, me=me, where=where))


def perfect_cut(tune: Sweep) -> Markdown:
    """The worst in-domain and best out-of-domain distances of a half, beside the chapter's: is a perfect cut there?"""
    exists = tune.best_out_of_domain > tune.worst_in_domain
    return Markdown(say(
        "Worst in-domain distance: the chapter **{chapter_worst}**, `tune` "
        "**{worst:.3f}**. Best out-of-domain distance: the chapter "
        "**{chapter_best}**, `tune` **{best:.3f}**. A perfect cut "
        "exists only when the second is larger than the first: here it **{exists}**.",
        chapter_worst=chapter.THRESHOLD["worst_in_domain"], worst=tune.worst_in_domain,
        chapter_best=chapter.THRESHOLD["best_out_of_domain"], best=tune.best_out_of_domain,
        exists=_("does") if exists else _("does not")))


def cost_valleys(costs: pd.DataFrame, tune: Sweep) -> Markdown:
    """The cheapest cut within the refusal ceiling, and the cost curve's cheapest valleys, each within or over it."""
    costs = costs[costs["cut"].notna()]  # a row without a threshold is no point of the curve
    ceiling, queries = refusal_ceiling(tune), len(tune.queries)
    minima = cost_minima(costs["cost"], costs["cut"].tolist(), n=len(costs))
    allowed = costs[costs["within ceiling"].astype(bool)]
    # every valley as cheap as the allowed answer or cheaper (each over the ceiling but it), never only the first two
    shown = minima[:2] if allowed.empty else [(c, v) for c, v in minima if v <= allowed["cost"].min()]
    valleys = "; ".join(_valley(costs, cut, cost) for cut, cost in shown)
    if allowed.empty:
        return Markdown(say(
            "On `tune`, no cut of these stays within the refusal ceiling (at most **{ceiling}** of the **{queries}** "
            "answerable queries refused). The curve's cheapest valleys: {valleys}.",
            ceiling=ceiling, queries=queries, valleys=valleys))
    best = allowed.loc[allowed["cost"].idxmin()]
    return Markdown(say(
        "On `tune`, the cheapest cut within the refusal ceiling (at most **{ceiling}** of the **{queries}** "
        "answerable queries refused) is **{cut:.3f}**: cost **{cost:g}**, **{refused}** refused. The curve's "
        "cheapest valleys: {valleys}.",
        ceiling=ceiling, queries=queries, cut=float(best["cut"]), cost=float(best["cost"]),
        refused=int(best["refused"]), valleys=valleys))


def _valley(costs: pd.DataFrame, cut: float, cost: float) -> str:
    row = costs[costs["cut"] == cut].iloc[0]
    if row["within ceiling"]:
        return say("**{cut:.3f}** (cost **{cost:g}**, {refused} refused: within the ceiling)", cut=cut, cost=cost,
                   refused=int(row["refused"]))
    return say("**{cut:.3f}** (cost **{cost:g}**, {refused} refused: over the ceiling, not an allowed answer)", cut=cut,
               cost=cost, refused=int(row["refused"]))


def cost_rows(costs: pd.DataFrame) -> Styler:
    """Exercise 2's cost table for people: cuts with three decimals (no threshold named), whole counts, the refused
    share with three decimals, "yes" or "no" within the ceiling, headings in the notebook's language."""
    shown = costs[["cut", "bluffs", "answered without needle", "refused", "refused share", "cost", "within ceiling"]]
    shown = shown.assign(cut=[_("none") if np.isnan(c) else float(c) for c in costs["cut"]])
    shown["within ceiling"] = [_("yes") if w else _("no") for w in costs["within ceiling"]]
    shown = shown.set_axis([_("cut"), _("bluffs"), _("answered without needle"), _("refused"), _("refused share"),
                            _("cost"), _("within ceiling")], axis="columns")
    return formats.table(shown, decimals={_("cut"): 3, _("refused share"): 3})


def ex2_rules(tune: Sweep, judge: Sweep) -> Markdown:
    """Exercise 2's costs and refusal ceiling, and how many needles and queries each half holds."""
    return Markdown(say(
        "The rules: bluff cost **{bluff:g}**, answer without the needle cost **{without:g}**, refusal cost "
        "**{refusal:g}**, at most **{ceiling:.0%}** of the answerable queries refused. Tuning half: **{needles}** "
        "needles (**{queries}** queries) and "
        "**{out_of_domain}** out-of-domain queries; the judging half keeps the other **{judge_needles}** and "
        "**{judge_out_of_domain}**.",
        bluff=EX2.bluff_cost, without=EX2.without_needle_cost, refusal=EX2.refusal_cost, ceiling=EX2.max_refused,
        needles=len(tune.questions),
        queries=len(tune.queries), out_of_domain=len(tune.out_of_domain), judge_needles=len(judge.questions),
        judge_out_of_domain=len(judge.out_of_domain)))


def cost_on_tune(row: SweepRow) -> Markdown:
    """What one cut does on the tuning half: bluffs, refusals and exercise 2's total cost."""
    return Markdown(say(
        "At **{cut}** on `tune`: **{bluffs}** bluffs, **{without}** answers without the needle, **{refused}** of "
        "**{in_domain}** refused, cost **{cost:g}**.",
        cut=row.cut, bluffs=row.bluffs, without=row.answered_without_needle, refused=row.refused,
        in_domain=row.in_domain, cost=exercise_cost(row)))


def cheapest_cuts(table: pd.DataFrame, tune: Sweep) -> Markdown:
    """The cheapest cut of all against the cheapest within the refusal ceiling, and what no threshold costs."""
    cheapest = table.loc[table.cost.idxmin()]
    allowed = table[table["within ceiling"]]
    best, none = allowed.loc[allowed.cost.idxmin()], tune.at(None)
    return Markdown(say(
        "Cheapest cut of all: **{cut:.3f}** (cost **{cost:g}**), but it refuses **{refused}** of **{queries}** "
        "answerable queries ({share:.0%}), over the ceiling of {ceiling:.0%}. Cheapest cut within the ceiling: "
        "**{best_cut:.3f}**, with **{best_bluffs}** bluffs and **{best_refused}** refusals ({best_share:.0%}), cost "
        "**{best_cost:g}** (no threshold at all costs **{no_threshold:g}**).",
        cut=cheapest.cut, cost=cheapest.cost, refused=int(cheapest.refused), queries=len(tune.queries),
        share=cheapest["refused share"], ceiling=EX2.max_refused, best_cut=float(best.cut),
        best_bluffs=int(best.bluffs), best_refused=int(best.refused), best_share=best["refused share"],
        best_cost=best.cost, no_threshold=exercise_cost(none)))


def ticket_words(q: Question) -> Markdown:
    """One question's needle and ticket, the distinctive words they share and how much the ticket copies."""
    copied = copied_share(content_words(q.ticket), content_words(q.question))
    return Markdown(say(
        "Needle of **{id}**:\n\n> {needle}\n\nIts ticket:\n\n> {ticket}\n\nShared distinctive words: **{shared}**; "
        "copied share of the course question: **{copied:.0%}** (a copy from {copy_share:.0%} on).",
        id=q.id, needle=q.needle, ticket=q.ticket, shared=shared_needle_words(q.ticket, q.needle), copied=copied,
        copy_share=EX3.copy_share))


def header_duel(ev: Evaluation) -> Markdown:
    """E against C at Hit@20, needle by needle, beside the chapter's count and the verdict on its finding."""
    duel = ev.compare("E/dense", "C/dense", "Hit@20", "needle").test
    wins, losses, p = chapter.COMPARISONS[("E/dense", "C/dense", "Hit@20")]
    return Markdown(say(
        "E vs C at Hit@20: the chapter **+{chapter_wins}/-{chapter_losses}** queries, p = **{chapter_p}**; this "
        "corpus, needle by needle (both phrasings of a needle count once), **+{wins}/-{losses}**, p = **{p:.3g}**: "
        "**{verdict}** with the chapter's finding that the header helps.",
        chapter_wins=wins, chapter_losses=losses, chapter_p=p, wins=duel.wins, losses=duel.losses, p=duel.p,
        verdict=verdict(wins - losses, duel.wins, duel.losses, duel.p)))


def header_room(ev: Evaluation, questions: int) -> Markdown:
    """How much room there was for a header to help: Hit@20 without and with it, and the needles at stake."""
    duel = ev.compare("E/dense", "C/dense", "Hit@20", "needle").test
    return Markdown(say(
        "Hit@20 without the header (C): **{without:.3f}**; with it (E): **{with_header:.3f}**; needles where "
        "they disagree: **{disagree}** of **{questions}**.",
        without=ev["C/dense"].value("Hit@20"), with_header=ev["E/dense"].value("Hit@20"),
        disagree=duel.wins + duel.losses, questions=questions))
