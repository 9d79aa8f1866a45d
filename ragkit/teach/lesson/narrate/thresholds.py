"""What notebook 06-thresholds says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown

from ragkit.abstention import ScoreSweep
from ragkit.chunking import Chunk
from ragkit.data import OutOfDomain
from ragkit.retrieval import RERANK_DEPTH
from ragkit.statistics import ALPHA, sign_test
from ragkit.teach import language
from ragkit.teach.course import chapter
from ragkit.teach.language import _, say
from ragkit.teach.lesson import formats, tables
from ragkit.teach.lesson.widgets import kind_of
from ragkit.threshold import DEFAULT_CUT, KEEP, STRICT_CUT, Bluff, Sweep

__all__ = [
    "abstention_rules",
    "crossings",
    "distributions",
    "gate_kept",
    "literal_match",
    "near_miss",
    "query_line",
    "strict_cut",
    "sweep_shape",
]


def query_line(query: OutOfDomain) -> Markdown:
    """One out-of-domain query, with its kind."""
    return Markdown(say("Query: **{query}** ({kind}).", query=query.query, kind=kind_of(query.kind)))


def gate_kept(kept: Mapping[float | None, int]) -> Markdown:
    """How many chunks the gate keeps for one query at each cut (None: no cut), and how many it keeps at most."""
    cuts = ", ".join(
        say("**{n}** {where}", n=n, where=_("with no cut") if cut is None else say("at cut {cut}", cut=cut))
        for cut, n in kept.items()
    )
    return Markdown(say("The gate keeps at most **{keep}** chunks. Chunks kept: {cuts}.", keep=KEEP, cuts=cuts))


def distributions(s: Sweep) -> Markdown:
    """The worst answerable query against the closest out-of-domain one: do the two distributions overlap?"""
    worst = int(np.argmax(np.where(np.isfinite(s.best_answer), s.best_answer, -np.inf)))
    overlap = not s.separable
    verdict = (
        _("no single cut answers every answerable question and refuses every out-of-domain one, as in the chapter.")
        if overlap
        else _("here a perfect cut exists, unlike in the chapter.")
    )
    return Markdown(
        say(
            "Worst answerable query: *{query}*, its answer at **{worst:.3f}** "
            "(the chapter: **{chapter_worst}**).  \n"
            "Closest out-of-domain query: at **{best:.3f}** "
            "(the chapter: **{chapter_best}**).  \n"
            "So {relation}: {verdict}",
            query=s.queries[worst].text,
            worst=s.worst_in_domain,
            chapter_worst=chapter.THRESHOLD["worst_in_domain"],
            best=s.best_out_of_domain,
            chapter_best=chapter.THRESHOLD["best_out_of_domain"],
            relation=_("the two distributions **overlap**")
            if overlap
            else _("the two distributions **do not overlap**"),
            verdict=verdict,
        )
    )


def crossings(s: Sweep) -> Markdown:
    """How many queries of each kind sit on the wrong side of the other kind's extreme."""
    return Markdown(
        say(
            "Answerable queries whose answer is further away than the closest out-of-domain query: "
            "**{further}** of {queries}.  \n"
            "Out-of-domain queries closer to some chunk than the worst answer is to its query: "
            "**{closer}** of {out_of_domain}.",
            further=int((s.best_answer > s.best_out_of_domain).sum()),
            queries=len(s.queries),
            closer=int((s.nearest_out < s.worst_in_domain).sum()),
            out_of_domain=len(s.out_of_domain),
        )
    )


def strict_cut(s: Sweep) -> Markdown:
    """The strict cut's refusals for the bluffs it stops, and the default cut's bluffs, beside the chapter's."""
    ours, theirs, default = s.at(STRICT_CUT), chapter.THRESHOLD, s.at(DEFAULT_CUT)
    verdict = (
        _("the default cut is more forgiving to bluffs here than there.")
        if default.bluffs > theirs["bluffs"][DEFAULT_CUT]
        else _("the default cut does at least as well here.")
    )
    return Markdown(
        say(
            "At {strict} this corpus refuses **{refused}** of {in_domain} answerable queries "
            "(the chapter: **{chapter_refused}**) to bring bluffs down to **{bluffs}** of "
            "{out_of_domain} (the chapter: **{chapter_bluffs}**).  \n"
            "At {default} we bluff **{default_bluffs}** {times} against the chapter's "
            "**{chapter_default_bluffs}**: {verdict}",
            strict=STRICT_CUT,
            refused=ours.refused,
            in_domain=ours.in_domain,
            chapter_refused=theirs["refused_at_0.525"],
            bluffs=ours.bluffs,
            out_of_domain=ours.out_of_domain,
            chapter_bluffs=theirs["bluffs"][STRICT_CUT],
            default=DEFAULT_CUT,
            default_bluffs=default.bluffs,
            times=formats.noun(default.bluffs, _("time"), _("times")),
            chapter_default_bluffs=theirs["bluffs"][DEFAULT_CUT],
            verdict=verdict,
        )
    )


def sweep_shape(s: Sweep) -> Markdown:
    """Whether the sweep trades bluffs for refusals monotonically, and which kinds bluff at the default cut."""
    grid = tables.per_cut(s)
    shape = bool(grid.bluffs.is_monotonic_decreasing and grid.refused.is_monotonic_increasing)
    kinds = pd.Series([b.query.kind for b in s.bluffs(DEFAULT_CUT)]).value_counts()
    by_kind = ", ".join(say("**{n}** {kind}", n=n, kind=kind_of(k)) for k, n in kinds.items()) or _("none")
    return Markdown(
        say(
            "Bluffs never rise and refusals never fall as the cut tightens: **{shape}** "
            "({same} trade-off as the chapter's).  \n"
            "Bluffs at {cut} by kind: {by_kind}.",
            shape=formats.truth(shape),
            same=_("the same") if shape else _("not the same"),
            cut=DEFAULT_CUT,
            by_kind=by_kind,
        )
    )


def _quoted(chunk: Chunk) -> str:
    return say("\n\n```text\n{content}\n```", content=chunk.content)


def near_miss(s: Sweep, near: Bluff) -> Markdown:
    """Where the nearest out-of-domain query lands, and how many true answers are further away; then the chunk."""
    further = int((s.best_answer > near.distance).sum())
    verdict = (
        _("most of them.")
        if further > len(s.queries) / 2
        else _("not most of them, but a cut that stops it refuses those.")
    )
    return Markdown(
        say(
            "The nearest out-of-domain query, *{query}* ({kind}, {topic}), lands on "
            "**{doc_id} > {section}** at **{distance:.3f}** "
            "(the chapter's near miss: **{chapter_best}**).  \n"
            "That is closer than the true answer of **{further}** of {queries} answerable queries: {verdict}",
            query=near.query.query,
            kind=kind_of(near.query.kind),
            topic=language.word(near.query.topic),
            doc_id=near.chunk.doc_id,
            section=near.chunk.section,
            distance=near.distance,
            chapter_best=chapter.THRESHOLD["best_out_of_domain"],
            further=further,
            queries=len(s.queries),
            verdict=verdict,
        )
        + _quoted(near.chunk)
    )


def literal_match(s: Sweep, bluff: Bluff, cuts: Sequence[float] = (DEFAULT_CUT, STRICT_CUT)) -> Markdown:
    """Where an out-of-domain query lands, what each cut does with it, and whether the chunk holds *Paris*."""
    bluffs = {c: any(b.query == bluff.query for b in s.bluffs(c)) for c in cuts}
    fate = "; ".join(
        say("at cut {cut} it **bluffs**", cut=c) if p else say("at cut {cut} it **is refused**", cut=c)
        for c, p in bluffs.items()
    )
    return Markdown(
        say(
            "Nearest chunk: **{doc_id} > {section}** at **{distance:.3f}**. "
            "{fate}. Does that chunk contain the word *Paris*? **{paris}**.",
            doc_id=bluff.chunk.doc_id,
            section=bluff.chunk.section,
            distance=bluff.distance,
            fate=fate[0].upper() + fate[1:],
            paris=formats.yes_or_no(re.search(r"\bParis\b", bluff.chunk.content) is not None),
        )
        + _quoted(bluff.chunk)
    )


def abstention_rules(rules: dict[str, ScoreSweep], max_refused: float, reference: str = "cosine distance") -> Markdown:
    """Which rule bluffs least within the refusal ceiling, against the cosine cut query by query, and at what price
    in needles; which reranker scored; and why every figure here is optimistic."""
    base = rules[reference]
    best_rows = {name: tables.chosen_cut(name, rule, max_refused) for name, rule in rules.items()}
    order = list(rules)
    winner = min(order, key=lambda n: (best_rows[n].bluffs, best_rows[n].refused, order.index(n)))
    ref, win = best_rows[reference], best_rows[winner]
    if winner == reference:
        verdict = say(
            "No rule bluffs less than the {rule} cut within the ceiling here: it lets **{bluffs}** of "
            "{n} out-of-domain queries through.",
            rule=tables.rule_label(reference),
            bluffs=ref.bluffs,
            n=ref.out_of_domain,
        )
    else:
        test = sign_test(base.bluffing(ref.cut).astype(float), rules[winner].bluffing(win.cut).astype(float))
        significant = test.p < ALPHA
        verdict = say(
            "Fewest bluffs: the **{rule}** cut, **{bluffs}** of {n} out-of-domain queries against the {reference} "
            "cut's **{ref_bluffs}**, refusing **{refused}** {answerable} against **{ref_refused}**. Query by "
            "query, the {reference} cut bluffs where it does not **{wins}** {wins_times} and the reverse "
            "**{losses}** {losses_times} (exact sign test, p = {p:.3g}): {claim}",
            rule=tables.rule_label(winner),
            bluffs=win.bluffs,
            n=win.out_of_domain,
            reference=tables.rule_label(reference),
            ref_bluffs=ref.bluffs,
            refused=win.refused,
            ref_refused=ref.refused,
            wins=test.wins,
            answerable=formats.noun(win.refused, _("answerable query"), _("answerable queries")),
            wins_times=formats.noun(test.wins, _("time"), _("times")),
            losses=test.losses,
            losses_times=formats.noun(test.losses, _("time"), _("times")),
            p=test.p,
            claim=(
                _("a difference these queries can show.")
                if significant
                else _("with this few out-of-domain queries, not a difference the test can show.")
            ),
        )
        if win.answered_with_needle != ref.answered_with_needle:
            verdict += " " + say(
                "Its answers keep the needle for **{kept}** of {n} answerable queries, against **{ref_kept}**: "
                "{meaning}",
                kept=win.answered_with_needle,
                n=win.in_domain,
                ref_kept=ref.answered_with_needle,
                meaning=(
                    _("fewer bluffs bought with fewer useful answers.")
                    if win.answered_with_needle < ref.answered_with_needle
                    else _("fewer bluffs and more useful answers at once.")
                ),
            )
        verdict += "".join(
            " "
            + say(
                "The {rule} cut bluffs as little, refusing **{refused}** and keeping the needle for **{kept}**.",
                rule=tables.rule_label(n),
                refused=best_rows[n].refused,
                kept=best_rows[n].answered_with_needle,
            )
            for n in order
            if n != winner and best_rows[n].bluffs == win.bluffs
        )
    rerankers = [n for n in rules if n not in ("cosine distance", "BM25 score")]
    which = ""
    if "maxsim score" in rerankers:
        which = say(
            "The reranker's rule reads MaxSim (notebook 04) over the hybrid top {depth}, since the chapter's "
            "cross-encoder is not on this machine (`make models` fetches it): a different method's score, "
            "not the cross-encoder's.",
            depth=RERANK_DEPTH,
        )
    elif rerankers:
        which = say(
            "The reranker's rule reads the chapter's cross-encoder over the hybrid top {depth}.", depth=RERANK_DEPTH
        )
    caveat = _(
        "Each cut was chosen on the very queries it is scored on, so every figure in this table is "
        "optimistic; exercise 2 chooses on one half and judges on the other."
    )
    return Markdown(" ".join(part for part in (verdict, which, caveat) if part))
