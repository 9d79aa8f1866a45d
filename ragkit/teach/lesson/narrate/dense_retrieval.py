"""What notebook 02-dense-retrieval says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from IPython.display import Markdown

from ragkit.evaluation import Evaluation
from ragkit.statistics import ALPHA, SignTest, counts_test, wilson
from ragkit.teach.course import chapter
from ragkit.teach.language import _, say
from ragkit.teach.lesson.formats import noun, truth

__all__ = [
    "batched_scan",
    "first_ranking",
    "header_alone",
    "headline",
    "interval_width",
    "metrics_disagree",
    "one_product",
    "queries_or_needles",
    "question_or_ticket",
    "room_to_win",
    "sign_test_checked",
    "sign_test_on_chapter_counts",
]


def sign_test_on_chapter_counts() -> Markdown:
    """Whether ragkit's exact sign test gives back the chapter's reported p-values from its own counts."""
    match = [
        np.isclose(counts_test(wins, losses).p, p, rtol=0.05)
        for wins, losses, p in chapter.COMPARISONS.values()
        if p is not None
    ]
    return Markdown(
        say(
            "ragkit's sign test on the chapter's own counts matches its reported p (within rounding) in "
            "**{matches} of {cases}** cases.",
            matches=sum(match),
            cases=len(match),
        )
    )


def room_to_win(ev: Evaluation) -> Markdown:
    """How many queries E could win over C at Hit@20 (those C misses), here and in the chapter."""
    n = len(ev.queries)
    room = int((ev["C/dense"].per_query("Hit@20") == 0).sum())
    t = ev.compare("E/dense", "C/dense", "Hit@20").test
    (e_hits, n_ch), (w, lost, _p) = chapter.RECALL20["E"], chapter.COMPARISONS["E/dense", "C/dense", "Hit@20"]
    missed = n_ch - e_hits + w - lost
    return Markdown(
        say(
            "This corpus: C misses **{room}** of **{queries}** queries at Hit@20, so E can win at most **{room}**; it "
            "wins **{wins}** and loses **{losses}**. The chapter: E found **{e_hits}/{chapter_queries}** and beat C "
            "**+{chapter_wins}/-{chapter_losses}**, so its C found **{c_hits}/{chapter_queries}** and missed "
            "**{missed}**: {more} room than here.",
            room=room,
            queries=n,
            wins=t.wins,
            losses=t.losses,
            e_hits=e_hits,
            chapter_queries=n_ch,
            chapter_wins=w,
            chapter_losses=lost,
            c_hits=e_hits - w + lost,
            missed=missed,
            more=_("more") if missed > room else _("no more"),
        )
    )


def interval_width(n: int) -> Markdown:
    """How wide a Wilson interval is at ``n`` queries, and whether a lead of three hits clears it."""
    low, high = wilson(n // 2, n)
    low3, high3 = wilson(n // 2 + 3, n)
    return Markdown(
        say(
            "With **{n}** queries, a hit rate of **{recall:.2f}** has the interval **[{low:.3f}, {high:.3f}]**: "
            "**{width:.3f}** wide, roughly **±{half:.3f}**. Three more hits (a lead of **{lead:.3f}**) give "
            "**[{low3:.3f}, {high3:.3f}]**; {relation}.",
            n=n,
            recall=(n // 2) / n,
            low=low,
            high=high,
            width=high - low,
            half=(high - low) / 2,
            lead=3 / n,
            low3=low3,
            high3=high3,
            relation=_("the two intervals overlap") if low3 < high else _("the two intervals do not overlap"),
        )
    )


def headline(ev: Evaluation) -> Markdown:
    """E against A at Hit@20, query by query, and how many of E's wins are needles A destroyed."""
    c = ev.compare("E/dense", "A/dense", "Hit@20")
    destroyed = sum(q.qid in ev.destroyed["A"] for q in ev.queries if q.id in c.wins)
    return Markdown(
        say(
            "E wins **{wins}** queries, A wins **{losses}**, p = **{p:.2g}**. Of E's wins, **{destroyed}** are queries "
            "whose needle A destroyed outright, so they are wins by construction, not by better ranking.",
            wins=c.test.wins,
            losses=c.test.losses,
            p=c.test.p,
            destroyed=destroyed,
        )
    )


def queries_or_needles(ev: Evaluation) -> Markdown:
    """The headline comparison counted in queries and in needles: how many needles the query wins come from."""
    c = ev.compare("E/dense", "A/dense", "Hit@20")
    n_level = ev.compare("E/dense", "A/dense", "Hit@20", "needle").test
    needles = len({q.qid for q in ev.queries if q.id in c.wins})
    return Markdown(
        say(
            "Query level: **+{wins}/-{losses}**, p = **{p:.2g}**. The **{wins}** query wins come from only "
            "**{needles}** needles. Needle level: **+{needle_wins}/-{needle_losses}**, p = **{needle_p:.2g}**.",
            wins=c.test.wins,
            losses=c.test.losses,
            p=c.test.p,
            needles=needles,
            needle_wins=n_level.wins,
            needle_losses=n_level.losses,
            needle_p=n_level.p,
        )
    )


def header_alone(ev: Evaluation) -> Markdown:
    """E against A without A's destroyed needles, and E against C: what the header buys, needle by needle."""
    rest = ev.compare("E/dense", "A/dense", "Hit@20", "needle", drop=ev.destroyed["A"]).test
    alone = ev.compare("E/dense", "C/dense", "Hit@20", "needle").test
    headline = ev.compare("E/dense", "A/dense", "Hit@20", "needle").test
    return Markdown(
        say(
            "Without the needles A destroyed, E against A, needle by needle: **+{rest_wins}/-{rest_losses}**, p = "
            "**{rest_p:.2g}**. The header alone (E against C), needle by needle: **+{alone_wins}/-{alone_losses}**, p "
            "= **{alone_p:.2g}**. Of the headline's **{headline_wins}** needle wins, **{destroyed}** are needles A "
            "destroyed.",
            rest_wins=rest.wins,
            rest_losses=rest.losses,
            rest_p=rest.p,
            alone_wins=alone.wins,
            alone_losses=alone.losses,
            alone_p=alone.p,
            headline_wins=headline.wins,
            destroyed=headline.wins - rest.wins,
        )
    )


def _best(ev: Evaluation, retriever: str, metric: str) -> tuple[str, ...]:
    """The strategies (letters) with the highest value of ``metric`` for ``retriever``, ties all named."""
    values = {r.strategy: round(r.value(metric), 12) for r in ev.results.values() if r.retriever == retriever}
    top = max(values.values())
    return tuple(s for s, v in values.items() if v == top)


def metrics_disagree(ev: Evaluation, retrievers: tuple[str, ...] = ("dense", "bm25", "hybrid")) -> Markdown:
    """Which strategy each of the field's metrics crowns per retriever, and why hit rate and the rank metrics differ."""
    runs = [r for r in ev.results.values() if r.retriever in retrievers]
    several = sum(len(rel) > 1 for r in runs for rel in r.relevant)
    queries = sum(len(r.relevant) for r in runs)
    same = (
        say(
            "No query of these runs has more than one relevant chunk (**0** of **{queries:,}**, counting each query "
            "once per run): every needle sits whole in one chunk at most. With one relevant chunk, Recall@10 "
            "equals Hit@10, P@10 is Hit@10 divided by 10 and MAP equals MRR, so those pairs cannot disagree here.",
            queries=queries,
        )
        if several == 0
        else say(
            "**{several}** of **{queries}** query-runs have two or more relevant chunks (an overlap carries "
            "the needle whole twice): for them Recall@10 asks for every copy in the top 10, Hit@10 for one.",
            several=several,
            queries=queries,
        )
    )
    lines, split = [], None
    for retriever in retrievers:
        crowned = {m: _best(ev, retriever, m) for m in ("Hit@10", "MRR@10", "MRR", "nDCG@10")}
        winners = {w for ws in crowned.values() for w in ws}
        lines.append(
            say(
                "- With {retriever}, every metric crowns **{winners}**.",
                retriever=retriever,
                winners=", ".join(sorted(winners)),
            )
            if len(winners) == 1
            else say(
                "- With {retriever}, Hit@10 crowns **{hit}**; MRR@10 crowns **{mrr10}**, MRR **{mrr}** and "
                "nDCG@10 **{ndcg}**.",
                retriever=retriever,
                hit=", ".join(crowned["Hit@10"]),
                mrr10=", ".join(crowned["MRR@10"]),
                mrr=", ".join(crowned["MRR"]),
                ndcg=", ".join(crowned["nDCG@10"]),
            )
        )
        if split is None and len(winners) > 1:
            split = (retriever, crowned)
    if split is None:
        return Markdown(
            "\n\n".join(
                [
                    same,
                    "\n".join(lines),
                    _(
                        "Here the metrics agree on the winner; they still differ in how far ahead it "
                        "is, which is what the paired tests above and below weigh."
                    ),
                ]
            )
        )
    retriever, crowned = split
    b = next(w for m in ("MRR", "MRR@10", "nDCG@10") for w in crowned[m] if crowned["Hit@10"] != (w,))
    a = next(w for w in crowned["Hit@10"] if w != b)
    ra, rb = ev[f"{a}/{retriever}"].ranks, ev[f"{b}/{retriever}"].ranks
    why = say(
        "Why, for {retriever}: {a} has a relevant chunk in the top 10 for **{a_found}** queries, {b} for "
        "**{b_found}**; but where they find it, {b}'s first relevant chunk sits at rank 1 for **{b_first}** "
        "queries, {a}'s for **{a_first}**. The hit rate counts rank 9 like rank 1; MRR and nDCG pay rank 1 "
        "most. Which one to report is decided by how the chunks are used: a prompt of ten chunks needs the "
        "needle among them (Hit@10), an answer shown as one link needs it first (MRR).",
        retriever=retriever,
        a=a,
        b=b,
        a_found=int(((ra > 0) & (ra <= 10)).sum()),
        b_found=int(((rb > 0) & (rb <= 10)).sum()),
        a_first=int((ra == 1).sum()),
        b_first=int((rb == 1).sum()),
    )
    return Markdown("\n\n".join([same, "\n".join(lines), why]))


def one_product(queries: np.ndarray, distances: np.ndarray, chunks: int, same: bool) -> Markdown:
    """The shapes of the one product behind dense retrieval, the query vectors' lengths, and whether sorting by hand
    ranks as ragkit does."""
    norms = np.linalg.norm(queries, axis=1)
    return Markdown(
        say(
            "Queries: **{queries}** vectors of **{dimensions}** dimensions; chunks of strategy E: **{chunks:,}**. "
            "Distance matrix: **{rows} × {cols:,}**. Query vector lengths run from **{low:.6f}** to **{high:.6f}**. "
            "Sorting the rows by hand gives the same rankings as `r.dense(...)`: **{same}**.",
            queries=queries.shape[0],
            dimensions=queries.shape[1],
            chunks=chunks,
            rows=distances.shape[0],
            cols=distances.shape[1],
            low=float(norms.min()),
            high=float(norms.max()),
            same=truth(same),
        )
    )


def first_ranking(phrasing: str, text: str, needle: str, top: np.ndarray, everything: np.ndarray) -> Markdown:
    """One query, its needle, and how far apart its top five lie against all chunks."""
    return Markdown(
        say(
            "**Query** ({phrasing}): {text}\n\n**Needle**: {needle}\n\nThe top five span **{low:.3f}** to "
            "**{high:.3f}**; all chunks span **{all_low:.3f}** to **{all_high:.3f}**.",
            phrasing=_("question") if phrasing == "question" else _("ticket"),
            text=text,
            needle=needle,
            low=float(top.min()),
            high=float(top.max()),
            all_low=float(everything.min()),
            all_high=float(everything.max()),
        )
    )


def batched_scan(queries: int, chunks: int, ms: float) -> Markdown:
    """The one product timed for all queries at once and divided, and why it is not the chapter's figure."""
    return Markdown(
        say(
            "Batched: all **{queries}** queries against **{chunks:,}** chunks at once, numpy's default threads, "
            "divided by {queries}: **{ms:.4f} ms** per query. This is *not* comparable with the chapter's "
            "single-threaded one-query figure; the table below is.",
            queries=queries,
            chunks=chunks,
            ms=ms,
        )
    )


def question_or_ticket(metric: str, test: SignTest) -> Markdown:
    """One metric's paired sign test of the question phrasing against the ticket phrasing, needle by needle."""
    return Markdown(
        say(
            "At {metric}, the question finds the needle and the ticket does not for **{wins}** {needles}; the reverse "
            "for **{losses}**; p = **{p:.2g}** ({significance}).",
            metric=metric,
            wins=test.wins,
            needles=noun(test.wins, _("needle"), _("needles")),
            losses=test.losses,
            p=test.p,
            significance=_("significant") if test.p < ALPHA else _("not significant"),
        )
    )


def sign_test_checked(
    splits: Sequence[tuple[int, int]], worst: float, agree: int, tests: Sequence[SignTest]
) -> Markdown:
    """The sign test by hand against scipy on every split, and against ragkit on the chapter's comparisons."""
    return Markdown(
        say(
            "Largest difference from scipy over **{splits}** splits: **{worst:.1e}**. Agreement with `ragkit` on the "
            "chapter's comparisons: **{agree}** of **{tests}**.",
            splits=len(splits),
            worst=worst,
            agree=agree,
            tests=len(tests),
        )
    )
