"""What the exercises' notebooks say from their results: one narrator per cell of computed prose."""

from __future__ import annotations

import numpy as np
import pandas as pd
from IPython.display import Markdown

from ragkit.chunking import SIZE
from ragkit.data import Question, shared_needle_words
from ragkit.evaluation import Evaluation
from ragkit.statistics import verdict
from ragkit.teach.course import chapter
from ragkit.teach.exercises import EX2, EX3, cost_minima
from ragkit.teach.language import _, say
from ragkit.threshold import Sweep, SweepRow
from ragkit.words import content_words, copied_share


def destroyed_at_size(carried: np.ndarray, mine: np.ndarray, size: int) -> Markdown:
    """Needles blind chunking destroys at the course's size and at the student's, beside the chapter's count."""
    return Markdown(f"Needles destroyed by blind chunking: the chapter **{chapter.DESTROYED_BLIND}**; this corpus "
                    f"**{int((~carried).sum())}** of **{len(carried)}** at {SIZE} characters, **{int((~mine).sum())}** "
                    f"at your {size}.")


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
    """The cheapest valleys of a cost curve, with their refusals, and the refusal ceiling."""
    valleys = ", ".join(say("**{cut:.3f}** (cost **{cost:g}**, {refused} refused)", cut=cut, cost=cost,
                            refused=int(costs.refused[costs.cut == cut].item()))
                        for cut, cost in cost_minima(costs["cost"]))
    return Markdown(say(
        "On `tune`, the cheapest valleys: {valleys}; at most **{ceiling:g}** of the "
        "**{queries}** answerable queries may be refused.",
        valleys=valleys, ceiling=EX2.max_refused * len(tune.queries), queries=len(tune.queries)))


def ex2_rules(tune: Sweep, judge: Sweep) -> Markdown:
    """Exercise 2's costs and refusal ceiling, and how many needles and queries each half holds."""
    return Markdown(say(
        "The rules: bluff cost **{bluff:g}**, refusal cost **{refusal:g}**, at most **{ceiling:.0%}** of the "
        "answerable queries refused. Tuning half: **{needles}** needles (**{queries}** queries) and "
        "**{out_of_domain}** out-of-domain queries; the judging half keeps the other **{judge_needles}** and "
        "**{judge_out_of_domain}**.",
        bluff=EX2.bluff_cost, refusal=EX2.refusal_cost, ceiling=EX2.max_refused, needles=len(tune.questions),
        queries=len(tune.queries), out_of_domain=len(tune.out_of_domain), judge_needles=len(judge.questions),
        judge_out_of_domain=len(judge.out_of_domain)))


def cost_on_tune(row: SweepRow) -> Markdown:
    """What one cut does on the tuning half: bluffs, refusals and exercise 2's total cost."""
    return Markdown(say(
        "At **{cut}** on `tune`: **{bluffs}** bluffs, **{refused}** of **{in_domain}** refused, cost **{cost:g}**.",
        cut=row.cut, bluffs=row.bluffs, refused=row.refused, in_domain=row.in_domain,
        cost=row.bluffs * EX2.bluff_cost + row.refused * EX2.refusal_cost))


def cheapest_cuts(table: pd.DataFrame, tune: Sweep) -> Markdown:
    """The cheapest cut of all against the cheapest within the refusal ceiling, and what no threshold costs."""
    cheapest = table.loc[table.cost.idxmin()]
    allowed = table[table["within ceiling"]]
    best, none = allowed.loc[allowed.cost.idxmin()], tune.at(None)
    return Markdown(
        f"Cheapest cut of all: **{cheapest.cut:.3f}** (cost **{cheapest.cost:g}**), but it refuses "
        f"**{int(cheapest.refused)}** of **{len(tune.queries)}** answerable queries ({cheapest['refused share']:.0%}), "
        f"over the ceiling of {EX2.max_refused:.0%}. Cheapest cut within the ceiling: **{float(best.cut):.3f}**, with "
        f"**{int(best.bluffs)}** bluffs and **{int(best.refused)}** refusals ({best['refused share']:.0%}), cost "
        f"**{best.cost:g}** (no threshold at all costs "
        f"**{none.bluffs * EX2.bluff_cost + none.refused * EX2.refusal_cost:g}**).")


def ticket_words(q: Question) -> Markdown:
    """One question's needle and ticket, the distinctive words they share and how much the ticket copies."""
    copied = copied_share(content_words(q.ticket), content_words(q.question))
    return Markdown(
        f"Needle of **{q.id}**:\n\n> {q.needle}\n\nIts ticket:\n\n> {q.ticket}\n\nShared distinctive words: "
        f"**{shared_needle_words(q.ticket, q.needle)}**; copied share of the course question: **{copied:.0%}** "
        f"(a copy from {EX3.copy_share:.0%} on).")


def header_duel(ev: Evaluation) -> Markdown:
    """E against C at R@20, needle by needle, beside the chapter's count and the verdict on its finding."""
    duel = ev.compare("E/dense", "C/dense", "R@20", "needle").test
    wins, losses, p = chapter.COMPARISONS[("E/dense", "C/dense", "R@20")]
    return Markdown(
        f"E vs C at R@20: the chapter **+{wins}/-{losses}** queries, p = **{p}**; this corpus, needle by needle (both "
        f"phrasings of a needle count once), **+{duel.wins}/-{duel.losses}**, p = **{duel.p:.3g}**: "
        f"**{verdict(wins - losses, duel.wins, duel.losses, duel.p)}** with the chapter's finding that the header "
        "helps.")


def header_room(ev: Evaluation, questions: int) -> Markdown:
    """How much room there was for a header to help: recall at 20 without and with it, and the needles at stake."""
    duel = ev.compare("E/dense", "C/dense", "R@20", "needle").test
    return Markdown(
        f"Recall@20 without the header (C): **{ev['C/dense'].value('R@20'):.3f}**; with it (E): "
        f"**{ev['E/dense'].value('R@20'):.3f}**; needles where they disagree: **{duel.wins + duel.losses}** of "
        f"**{questions}**.")
