"""What the exercises' notebooks say from their results: one narrator per cell of computed prose."""

from __future__ import annotations

import numpy as np
import pandas as pd
from IPython.display import Markdown
from pandas.io.formats.style import Styler

from ragkit.answer import Answer, NoAnswer
from ragkit.chunking import SIZE
from ragkit.corpus import Document
from ragkit.data import Question, shared_needle_words
from ragkit.evaluation import Evaluation
from ragkit.statistics import ALPHA, SignTest, verdict
from ragkit.teach import language
from ragkit.teach.course import chapter
from ragkit.teach.exercises import EX2, EX3, cost_minima, exercise_cost, refusal_ceiling
from ragkit.teach.language import _, say
from ragkit.teach.lesson import formats, plots
from ragkit.teach.untrusted import readable
from ragkit.threshold import Sweep, SweepRow
from ragkit.words import content_words, copied_share

__all__ = [
    "before_own_document",
    "cheapest_cuts",
    "conclusion",
    "cost_on_tune",
    "cost_rows",
    "cost_valleys",
    "destroyed_at_size",
    "e_against_c",
    "ex2_rules",
    "header_duel",
    "header_measured",
    "header_pieces",
    "header_room",
    "header_shares",
    "near_cheapest",
    "needle_cut",
    "out_of_domain_answer",
    "perfect_cut",
    "phrasing_hits",
    "phrasing_sign_test",
    "rates_at_cut",
    "smallest_possible_p",
    "ticket_words",
    "window_owner",
    "window_start",
]


def destroyed_at_size(carried: np.ndarray, mine: np.ndarray, size: int) -> Markdown:
    """Needles blind chunking destroys at the course's size and at the student's, beside the chapter's count."""
    return Markdown(
        say(
            "Needles destroyed by blind chunking: the chapter **{chapter_destroyed}**; this corpus "
            "**{destroyed}** of **{needles}** at {course_size} characters, **{mine}** at your {size}.",
            chapter_destroyed=chapter.DESTROYED_BLIND,
            destroyed=int((~carried).sum()),
            needles=len(carried),
            course_size=SIZE,
            mine=int((~mine).sum()),
            size=size,
        )
    )


def window_owner(size: int) -> Markdown:
    """Whose ex1 window this is: the name the grader uses too, a name given to ``student()``, or nobody's yet."""
    import os

    from ragkit.teach.exercises import current_student, login, results_path, system_student

    me, where = current_student(), results_path()
    if system_student():
        return Markdown(
            say(
                "Your blind window: **{size}** characters, assigned to **{me}**: the name your teacher's "
                "grader gives you too (your login, or your hub name). Checks record your results in `{where}`.",
                size=size,
                me=me,
                where=where,
            )
        )
    if me != login(os.getuid()):
        return Markdown(
            say(
                "Your blind window: **{size}** characters, assigned to **{me}**, the name you gave "
                "`student(...)`: it must be exactly the name on your class list. Checks record your "
                "results in `{where}`.",
                size=size,
                me=me,
                where=where,
            )
        )
    return Markdown(
        say(
            "Your blind window: **{size}** characters, assigned to **{me}**, a name this machine gives "
            "everyone (Binder, Colab): call `ragkit.teach.exercises.student('the name on your class "
            "list')` first, then run this cell again. Checks record your results in `{where}`.",
            size=size,
            me=me,
            where=where,
        )
    )


def perfect_cut(tune: Sweep) -> Markdown:
    """The worst in-domain and best out-of-domain distances of a half, beside the chapter's: is a perfect cut there?"""
    exists = tune.best_out_of_domain > tune.worst_in_domain
    return Markdown(
        say(
            "Worst in-domain distance: the chapter **{chapter_worst}**, `tune` "
            "**{worst:.3f}**. Best out-of-domain distance: the chapter "
            "**{chapter_best}**, `tune` **{best:.3f}**. A perfect cut "
            "exists only when the second is larger than the first: here it **{exists}**.",
            chapter_worst=chapter.THRESHOLD["worst_in_domain"],
            worst=tune.worst_in_domain,
            chapter_best=chapter.THRESHOLD["best_out_of_domain"],
            best=tune.best_out_of_domain,
            exists=_("does") if exists else _("does not"),
        )
    )


def cost_valleys(costs: pd.DataFrame, tune: Sweep) -> Markdown:
    """The refusal ceiling, the cuts over it, and the cost curve's valleys over it that are cheaper than every cut
    within it: no answer, however cheap. Never the cheapest cut within the ceiling: finding it is the exercise."""
    costs = costs[costs["cut"].notna()]  # a row without a threshold is no point of the curve
    ceiling, queries = refusal_ceiling(tune), len(tune.queries)
    minima = cost_minima(costs["cost"], costs["cut"].tolist(), n=len(costs))
    allowed = costs[costs["within ceiling"].astype(bool)]
    if allowed.empty:
        return Markdown(
            say(
                "On `tune`, no cut of these stays within the refusal ceiling (at most **{ceiling}** of the "
                "**{queries}** answerable queries refused). The curve's cheapest valleys: {valleys}.",
                ceiling=ceiling,
                queries=queries,
                valleys="; ".join(_valley(costs, cut, cost) for cut, cost in minima[:2]),
            )
        )
    # every valley over the ceiling cheaper than the allowed cuts, never only the first two
    cheaper = [(c, v) for c, v in minima if v < allowed["cost"].min()]
    last = plots.last_over_ceiling(costs)
    said = (
        say(
            "On `tune`, the refusal ceiling allows at most **{ceiling}** of the **{queries}** answerable queries "
            "refused.",
            ceiling=ceiling,
            queries=queries,
        )
        if last is None
        else say(
            "On `tune`, the refusal ceiling allows at most **{ceiling}** of the **{queries}** answerable queries "
            "refused: every cut up to **{last:.3f}** refuses more.",
            ceiling=ceiling,
            queries=queries,
            last=last,
        )
    )
    if cheaper:
        said += " " + say(
            "The curve's valleys over the ceiling, cheaper than every cut within it and so no answer: {valleys}.",
            valleys="; ".join(_valley(costs, cut, cost) for cut, cost in cheaper),
        )
    return Markdown(
        said
        + " "
        + _(
            "Which cut within the ceiling costs least is yours to find: the table above and `cost_table(tune, "
            "[...])` give the cost of every cut you ask for."
        )
    )


def _valley(costs: pd.DataFrame, cut: float, cost: float) -> str:
    """A valley over the refusal ceiling (an allowed one is the answer, which no sentence names)."""
    row = costs[costs["cut"] == cut].iloc[0]
    return say(
        "**{cut:.3f}** (cost **{cost:g}**, {refused} refused)",
        cut=cut,
        cost=cost,
        refused=int(row["refused"]),
    )


def cost_rows(costs: pd.DataFrame) -> Styler:
    """Exercise 2's cost table for people: cuts with three decimals (no threshold named), whole counts, the refused
    share with three decimals, "yes" or "no" within the ceiling, headings in the notebook's language."""
    shown = costs[["cut", "bluffs", "answered without needle", "refused", "refused share", "cost", "within ceiling"]]
    shown = shown.assign(cut=[_("none") if np.isnan(c) else float(c) for c in costs["cut"]])
    shown["within ceiling"] = [_("yes") if w else _("no") for w in costs["within ceiling"]]
    shown = shown.set_axis(
        [
            _("cut"),
            _("bluffs"),
            _("answered without needle"),
            _("refused"),
            _("refused share"),
            _("cost"),
            _("within ceiling"),
        ],
        axis="columns",
    )
    return formats.styled(shown, decimals={_("cut"): 3, _("refused share"): 3})


def ex2_rules(tune: Sweep, judge: Sweep) -> Markdown:
    """Exercise 2's costs and refusal ceiling, and how many needles and queries each half holds."""
    return Markdown(
        say(
            "The rules: bluff cost **{bluff:g}**, answer without the needle cost **{without:g}**, refusal cost "
            "**{refusal:g}**, at most **{ceiling:.0%}** of the answerable queries refused. Tuning half: **{needles}** "
            "needles (**{queries}** queries) and "
            "**{out_of_domain}** out-of-domain queries; the judging half keeps the other **{judge_needles}** and "
            "**{judge_out_of_domain}**.",
            bluff=EX2.bluff_cost,
            without=EX2.without_needle_cost,
            refusal=EX2.refusal_cost,
            ceiling=EX2.max_refused,
            needles=len(tune.questions),
            queries=len(tune.queries),
            out_of_domain=len(tune.out_of_domain),
            judge_needles=len(judge.questions),
            judge_out_of_domain=len(judge.out_of_domain),
        )
    )


def cost_on_tune(row: SweepRow) -> Markdown:
    """What one cut does on the tuning half: bluffs, refusals and exercise 2's total cost."""
    return Markdown(
        say(
            "At **{cut}** on `tune`: **{bluffs}** bluffs, **{without}** answers without the needle, **{refused}** of "
            "**{in_domain}** refused, cost **{cost:g}**.",
            cut=row.cut,
            bluffs=row.bluffs,
            without=row.answered_without_needle,
            refused=row.refused,
            in_domain=row.in_domain,
            cost=exercise_cost(row),
        )
    )


def cheapest_cuts(table: pd.DataFrame, tune: Sweep) -> Markdown:
    """The cheapest cut of all against the cheapest within the refusal ceiling, and what no threshold costs."""
    cheapest = table.loc[table.cost.idxmin()]
    allowed = table[table["within ceiling"]]
    best, none = allowed.loc[allowed.cost.idxmin()], tune.at(None)
    return Markdown(
        say(
            "Cheapest cut of all: **{cut:.3f}** (cost **{cost:g}**), but it refuses **{refused}** of **{queries}** "
            "answerable queries ({share:.0%}), over the ceiling of {ceiling:.0%}. Cheapest cut within the ceiling: "
            "**{best_cut:.3f}**, with **{best_bluffs}** bluffs and **{best_refused}** refusals ({best_share:.0%}), "
            "cost **{best_cost:g}** (no threshold at all costs **{no_threshold:g}**).",
            cut=cheapest.cut,
            cost=cheapest.cost,
            refused=int(cheapest.refused),
            queries=len(tune.queries),
            share=cheapest["refused share"],
            ceiling=EX2.max_refused,
            best_cut=float(best.cut),
            best_bluffs=int(best.bluffs),
            best_refused=int(best.refused),
            best_share=best["refused share"],
            best_cost=best.cost,
            no_threshold=exercise_cost(none),
        )
    )


def ticket_words(q: Question) -> Markdown:
    """One question's needle and ticket, the distinctive words they share and how much the ticket copies."""
    copied = copied_share(content_words(q.ticket), content_words(q.question))
    return Markdown(
        say(
            "Needle of **{id}**:\n\n> {needle}\n\nIts ticket:\n\n> {ticket}\n\nShared distinctive words: **{shared}**; "
            "copied share of the course question: **{copied:.0%}** (a copy from {copy_share:.0%} on).",
            id=q.id,
            needle=q.needle,
            ticket=q.ticket,
            shared=shared_needle_words(q.ticket, q.needle),
            copied=copied,
            copy_share=EX3.copy_share,
        )
    )


def header_duel(ev: Evaluation) -> Markdown:
    """E against C at Hit@20, needle by needle, beside the chapter's count and the verdict on its finding."""
    duel = ev.compare("E/dense", "C/dense", "Hit@20", "needle").test
    wins, losses, p = chapter.COMPARISONS[("E/dense", "C/dense", "Hit@20")]
    return Markdown(
        say(
            "E vs C at Hit@20: the chapter **+{chapter_wins}/-{chapter_losses}** queries, p = **{chapter_p}**; this "
            "corpus, needle by needle (both phrasings of a needle count once), **+{wins}/-{losses}**, p = **{p:.3g}**: "
            "**{verdict}** with the chapter's finding that the header helps.",
            chapter_wins=wins,
            chapter_losses=losses,
            chapter_p=p,
            wins=duel.wins,
            losses=duel.losses,
            p=duel.p,
            verdict=language.word(verdict(wins - losses, duel.wins, duel.losses, duel.p)),
        )
    )


def header_room(ev: Evaluation, questions: int) -> Markdown:
    """How much room there was for a header to help: Hit@20 without and with it, and the needles at stake."""
    duel = ev.compare("E/dense", "C/dense", "Hit@20", "needle").test
    return Markdown(
        say(
            "Hit@20 without the header (C): **{without:.3f}**; with it (E): **{with_header:.3f}**; needles where "
            "they disagree: **{disagree}** of **{questions}**.",
            without=ev["C/dense"].value("Hit@20"),
            with_header=ev["E/dense"].value("Hit@20"),
            disagree=duel.wins + duel.losses,
            questions=questions,
        )
    )


def window_start(doc_id: str, position: int, size: int, start: int, naive: int) -> Markdown:
    """Where the blind window holding one character begins, beside the naive guess that forgets the title line."""
    return Markdown(
        say(
            "Character **{position}** of `{doc}`: its {size}-character blind window starts at **{start}**; "
            "a naive `position // {size} * {size}` says **{naive}**.",
            position=position,
            doc=doc_id,
            size=size,
            start=start,
            naive=naive,
        )
    )


def needle_cut(question_id: object, doc: Document, start: int, end: int, cut_at: object) -> Markdown:
    """A needle split where its blind window ends: its characters, the cut, whether the cut falls inside, both parts."""
    inside = isinstance(cut_at, int | np.integer) and start < cut_at < end
    at = int(cut_at) if inside else end  # type: ignore[call-overload]
    before, after = (" ".join(doc.text[a:b].split()) for a, b in ((start, at), (at, end)))
    return Markdown(
        say(
            "Needle of **{question}** in `{doc}`, characters {start}-{end}; cut at **{cut}** (inside the "
            "needle: **{inside}**):\n\n> {before} **‖** {after}",
            question=readable(question_id),
            doc=doc.id,
            start=start,
            end=end,
            cut=readable(cut_at),
            inside=_("yes") if inside else _("no"),
            before=before,
            after=after,
        )
    )


def near_cheapest(limit: float, near: pd.DataFrame) -> Markdown:
    """How many allowed cuts of the grid cost at most ``limit``, and the range of cuts they span."""
    return Markdown(
        say(
            "Allowed cuts on the grid that cost at most **{limit:g}**: **{n}**, from **{low:.3f}** to **{high:.3f}**.",
            limit=float(limit),
            n=len(near),
            low=float(near["cut"].min()),
            high=float(near["cut"].max()),
        )
    )


def rates_at_cut(
    cut: float,
    bluff_rate: float,
    bluff_interval: tuple[float, float],
    refusal_rate: float,
    refusal_interval: tuple[float, float],
) -> Markdown:
    """The bluff and refusal rates of one cut on the tuning half, each with its Wilson interval."""
    return Markdown(
        say(
            "At **{cut:.3f}**: bluff rate **{bluffs:.3f}** [{bluff_low:.3f}, {bluff_high:.3f}], refusal "
            "rate **{refused:.3f}** [{refused_low:.3f}, {refused_high:.3f}].",
            cut=float(cut),
            bluffs=float(bluff_rate),
            bluff_low=bluff_interval[0],
            bluff_high=bluff_interval[1],
            refused=float(refusal_rate),
            refused_low=refusal_interval[0],
            refused_high=refusal_interval[1],
        )
    )


def phrasing_hits(phrasing: str, k: int, n: int, low: float, high: float) -> Markdown:
    """E/dense's hit@4 for one phrasing of the queries (question or ticket), with its Wilson interval."""
    if phrasing == "ticket":
        return Markdown(
            say(
                "E/dense, ticket phrasing: hit@4 **{rate:.3f}** [{low:.3f}, {high:.3f}] ({k} of {n}).",
                rate=k / n,
                low=low,
                high=high,
                k=k,
                n=n,
            )
        )
    return Markdown(
        say(
            "E/dense, question phrasing: hit@4 **{rate:.3f}** [{low:.3f}, {high:.3f}] ({k} of {n}).",
            rate=k / n,
            low=low,
            high=high,
            k=k,
            n=n,
        )
    )


def phrasing_sign_test(test: SignTest, alpha: float = ALPHA) -> Markdown:
    """The sign test of the course phrasing against the ticket phrasing, and whether it is significant."""
    if test.p < alpha:
        return Markdown(
            say(
                "Course phrasing wins **{wins}**, ticket wins **{losses}**, p = **{p:.3g}**: the "
                "difference is **significant** at the {alpha:.0%} level.",
                wins=test.wins,
                losses=test.losses,
                p=test.p,
                alpha=alpha,
            )
        )
    return Markdown(
        say(
            "Course phrasing wins **{wins}**, ticket wins **{losses}**, p = **{p:.3g}**: the difference is "
            "**not significant** at the {alpha:.0%} level.",
            wins=test.wins,
            losses=test.losses,
            p=test.p,
            alpha=alpha,
        )
    )


def smallest_possible_p(p: float, pairs: int, alpha: float = ALPHA) -> Markdown:
    """The smallest p the sign test can give with so many discordant pairs, below or above the level."""
    if p < alpha:
        return Markdown(
            say(
                "Smallest possible p with {pairs} discordant pairs: **{p:.4f}**, which is **below** {alpha:g}.",
                pairs=pairs,
                p=p,
                alpha=alpha,
            )
        )
    return Markdown(
        say(
            "Smallest possible p with {pairs} discordant pairs: **{p:.4f}**, which is **above** {alpha:g}.",
            pairs=pairs,
            p=p,
            alpha=alpha,
        )
    )


def e_against_c(test: SignTest, metric: str) -> Markdown:
    """E against C per needle: its wins and losses, and the sign test's p."""
    return Markdown(
        say(
            "E vs C at {metric}, per needle: **+{wins}/-{losses}** needles, p = **{p:.3g}**.",
            metric=metric,
            wins=test.wins,
            losses=test.losses,
            p=test.p,
        )
    )


def header_pieces(chapter_share: float, corpus_share: float) -> Markdown:
    """The share of embedded word pieces E spends on its header, in the chapter and on this corpus."""
    return Markdown(
        say(
            "Share of embedded word pieces spent on E's header: the chapter **{chapter:.1%}**, this corpus "
            "**{corpus:.1%}**.",
            chapter=float(chapter_share),
            corpus=float(corpus_share),
        )
    )


def header_measured(test: SignTest, metric: str, mine: float, e: float, expectation: object, found: str) -> Markdown:
    """A header against E per needle, both figures at the metric, and the verdict against the stated expectation."""
    return Markdown(
        say(
            "Sentence header vs E at {metric}, per needle: **+{wins}/-{losses}**, p = **{p:.3g}**; "
            "{metric} **{mine:.3f}** against E's **{e:.3f}**; against the expectation '{expectation}', "
            "the verdict: **{verdict}**.",
            metric=metric,
            wins=test.wins,
            losses=test.losses,
            p=test.p,
            mine=float(mine),
            e=float(e),
            expectation=readable(language.word(expectation) if isinstance(expectation, str) else expectation),
            verdict=language.word(found),
        )
    )


def header_shares(mine: float, e: float) -> Markdown:
    """The share of embedded word pieces a header takes: the sentence header's beside E's."""
    return Markdown(
        say(
            "Header share of embedded word pieces: sentence header **{mine:.1%}**, E **{e:.1%}**.",
            mine=float(mine),
            e=float(e),
        )
    )


def conclusion(found: object) -> Markdown:
    """Exercise 4's conclusion as written, a verdict of ``statistics.verdict`` in the notebook's words (the words its
    prose quotes and its student may type; the check reads either edition's)."""
    return Markdown(
        say("Conclusion: **{verdict}**.", verdict=readable(language.word(found) if isinstance(found, str) else found))
    )


def out_of_domain_answer(query: str, result: Answer | NoAnswer) -> Markdown:
    """What the system does with a question the course cannot answer: a refusal, or a bluff and its nearest source."""
    if isinstance(result, NoAnswer) and result.cut is None:
        return Markdown(say("*{query}*: NO ANSWER, no cut, and no chunk was retrieved.", query=query))
    if isinstance(result, NoAnswer):
        return Markdown(
            say("*{query}*: NO ANSWER, nothing is under cosine distance {cut:g}.", query=query, cut=result.cut)
        )
    sources = len(result.citations)
    return Markdown(
        say(
            "*{query}*: a bluff, citing **{n}** {sources}; the nearest is from `{doc}`.",
            query=query,
            n=sources,
            sources=formats.noun(sources, _("source"), _("sources")),
            doc=result.citations[0].document_id,
        )
    )


def before_own_document(result: Answer | NoAnswer) -> Markdown:
    """What the system does with your question before your document joins: a refusal, or a bluff and its source."""
    if isinstance(result, NoAnswer) and result.cut is None:
        return Markdown(_("Without the new document: NO ANSWER, no cut, and no chunk was retrieved."))
    if isinstance(result, NoAnswer):
        return Markdown(
            say("Without the new document: NO ANSWER, nothing is under cosine distance {cut:g}.", cut=result.cut)
        )
    nearest = result.citations[0]
    return Markdown(
        say(
            "Without the new document: a bluff, the nearest source `{doc}` ({locator}) at distance **{distance:.3f}**.",
            doc=nearest.document_id,
            locator=nearest.locator_label,
            distance=float(nearest.cosine_distance),
        )
    )
