"""What notebook 03-bm25-and-hybrid says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown

from ragkit.evaluation import Evaluation
from ragkit.fusion import RRF_K, rrf
from ragkit.report import Line, Report
from ragkit.retrieval import Retriever, Run
from ragkit.statistics import ALPHA
from ragkit.teach.course import chapter
from ragkit.teach.language import _, say
from ragkit.teach.lesson import paired

__all__ = [
    "ahead_of_both",
    "bm25_against_dense",
    "bm25_checked",
    "chapter_verdicts",
    "constant_ranks",
    "dense_first_choice",
    "fused_ranks",
    "needle_tests",
    "playground_columns",
    "rrf_checked",
    "rrf_weights",
    "two_scales",
]


def _rank(run: Run, chunk: int) -> int:
    """Where a chunk sits in a run's first ranking, counted from 1."""
    return int(np.where(run.ranking[0] == chunk)[0][0]) + 1


def constant_ranks(r: Retriever, token: str, runs: Mapping[str, Run]) -> Markdown:
    """Which chunks hold a rare token, and where each retriever ranks the first of them."""
    holders = [i for i, c in enumerate(r.chunks) if token in c.content]
    holder = r.chunks[holders[0]]
    ranks = ", ".join(
        say("{retriever} **{rank}**", retriever=name, rank=_rank(run, holders[0])) for name, run in runs.items()
    )
    return Markdown(
        say(
            "Chunks containing `{token}`: **{holders}**, in *{doc_id}*, section *{section}*. Its rank among "
            "**{chunks:,}** chunks: {ranks}.",
            token=token,
            holders=len(holders),
            doc_id=holder.doc_id,
            section=holder.section,
            chunks=len(r.chunks),
            ranks=ranks,
        )
    )


def dense_first_choice(r: Retriever, dense: Run, holder: int) -> Markdown:
    """Where dense retrieval looked instead of the chunk that holds the token, and how far each is."""
    best, dist = dense.ranking[0, 0], dense.distance[0] if dense.distance is not None else None
    assert dist is not None, "a dense run carries its distances"
    return Markdown(
        say(
            "Dense's first choice: *{doc_id}*, section *{section}*, distance **{distance:.3f}**. The chunk that holds "
            "the constant: distance **{holder_distance:.3f}**.\n\n> {content}...",
            doc_id=r.chunks[best].doc_id,
            section=r.chunks[best].section,
            distance=dist[best],
            holder_distance=dist[holder],
            content=r.chunks[best].content[:300],
        )
    )


def bm25_against_dense(ev: Evaluation, curve: pd.DataFrame) -> Markdown:
    """The chapter's three claims on BM25 (doubles top-1, falls behind around rank 8, fails elsewhere), checked."""
    d1, b1, ch1 = ev["E/dense"].value("Hit@1"), ev["E/bm25"].value("Hit@1"), chapter.RERANK["Hit@1"][0]
    ahead = [k for k in curve.index if curve.loc[k, "E/bm25"] > curve.loc[k, "E/dense"]]
    t1 = ev.compare("E/bm25", "E/dense", "Hit@1", "needle").test
    t8 = ev.compare("E/bm25", "E/dense", "Hit@8", "needle").test
    q8 = ev.compare("E/bm25", "E/dense", "Hit@8").test
    side = _("behind") if t8.losses > t8.wins else _("ahead") if t8.wins > t8.losses else _("tied")
    told = _("a difference this data can tell apart") if t8.p < ALPHA else _("but not distinguishably")
    leads = say("at k = {ks}", ks=", ".join(map(str, ahead))) if ahead else _("at no k from 1 to 20")
    return Markdown(
        say(
            "- **Top-1**: BM25 **{bm25:.3f}**, dense **{dense:.3f}** (ratio **{ratio:.2f}**; the chapter's dense top-1 "
            "was **{chapter_dense}**, so its BM25 top-1 exceeded **{chapter_double:.3f}**). Needle by needle at Hit@1: "
            "BM25 wins **{wins_1}**, dense **{losses_1}**, p = **{p_1:.2g}**. BM25 more than doubles dense here: "
            "**{doubles}**.\n- **Where BM25 leads**: {leads}.\n- **Around rank 8**, needle by needle: BM25 wins "
            "**{wins_8}**, dense **{losses_8}**, p = **{p_8:.2g}**: BM25 is **{side}**, {told}. They fail on different "
            "queries: **{apart}** queries are found by one and not the other.",
            bm25=b1,
            dense=d1,
            ratio=b1 / d1,
            chapter_dense=ch1,
            chapter_double=2 * ch1,
            wins_1=t1.wins,
            losses_1=t1.losses,
            p_1=t1.p,
            doubles=_("yes") if b1 > 2 * d1 else _("no"),
            leads=leads,
            wins_8=t8.wins,
            losses_8=t8.losses,
            p_8=t8.p,
            side=side,
            told=told,
            apart=q8.wins + q8.losses,
        )
    )


def two_scales(distances: np.ndarray, scores: np.ndarray) -> Markdown:
    """The ranges and directions of dense distances and BM25 scores for one query."""
    d, b = distances, scores
    return Markdown(
        say(
            "Dense distances run from **{nearest:.3f}** (best) to **{farthest:.3f}**: lower is better. BM25 scores run "
            "from **{highest:.2f}** (best) down to **{lowest:.2f}**: higher is better, and **{zeros}** of "
            "**{chunks:,}** chunks score exactly zero.",
            nearest=d.min(),
            farthest=d.max(),
            highest=b.max(),
            lowest=b.min(),
            zeros=int((b == 0).sum()),
            chunks=len(b),
        )
    )


def rrf_weights(k: int = RRF_K) -> Markdown:
    """Reciprocal rank fusion on a small example, and how much rank 1 outweighs rank 10 at ``k`` and at 0."""
    return Markdown(
        say(
            "`rrf([[7, 3, 5], [5, 7, 9]])` → **{fused}**. With k = {k}, rank 1 is worth **{ratio:.2f}** times rank 10; "
            "with k = 0 it would be worth **{ratio_at_0:.0f}** times.",
            fused=rrf([[7, 3, 5], [5, 7, 9]], k).tolist(),
            k=k,
            ratio=(k + 10) / (k + 1),
            ratio_at_0=10 / 1,
        )
    )


def fused_ranks(runs: Mapping[str, Run], token: str, holder: int, k: int = RRF_K) -> Markdown:
    """The token's chunk and hybrid's first chunk: their ranks in each list and their fused scores."""
    top = int(runs["hybrid"].ranking[0, 0])

    def fused(i: int) -> float:
        return sum(1 / (k + _rank(runs[n], i)) for n in ("dense", "bm25"))

    return Markdown(
        say(
            "The `{token}` chunk: dense rank **{dense}**, BM25 rank **{bm25}**, fused score **{fused:.4f}**, hybrid "
            "rank **{hybrid}**.\n\n"
            "Hybrid's first chunk: dense rank **{top_dense}**, BM25 rank **{top_bm25}**, fused score "
            "**{top_fused:.4f}**.",
            token=token,
            dense=_rank(runs["dense"], holder),
            bm25=_rank(runs["bm25"], holder),
            fused=fused(holder),
            hybrid=_rank(runs["hybrid"], holder),
            top_dense=_rank(runs["dense"], top),
            top_bm25=_rank(runs["bm25"], top),
            top_fused=fused(top),
        )
    )


def chapter_verdicts(lines: Sequence[Line], family: int) -> Markdown:
    """Each chapter comparison in a list: what the chapter said, ours at both levels, the claim and the verdict."""
    items = []
    for x in lines:
        assert x.finding is not None and x.needle.p_holm is not None, "a chapter line carries its finding and Holm p"
        items.append(
            say(
                "- **{a} vs {b} at {metric}**: the chapter {said}; here +{query_wins}/-{query_losses} queries "
                "(p = {query_p:.2g}), +{needle_wins}/-{needle_losses} needles (p = {needle_p:.2g}, Holm p over "
                "{family} = {holm:.2g}); the chapter claims {claim}: **{verdict}**.",
                a=x.a,
                b=x.b,
                metric=x.metric,
                said=paired.said(x.finding),
                query_wins=x.query.test.wins,
                query_losses=x.query.test.losses,
                query_p=x.query.test.p,
                needle_wins=x.needle.test.wins,
                needle_losses=x.needle.test.losses,
                needle_p=x.needle.test.p,
                family=family,
                holm=x.needle.p_holm,
                claim=paired.claim(x.finding.claim),
                verdict=paired.verdict_text(x.verdict) if x.verdict else "",
            )
        )
    return Markdown("\n".join(items))


def ahead_of_both(table: pd.DataFrame) -> Markdown:
    """Whether hybrid is ahead of both parents on every metric's point estimate, and where it is not."""
    behind = [m for m in table.index if not table.loc[m, "hybrid ahead of both"]]
    if behind:
        return Markdown(
            say(
                "Hybrid ahead of both parents on every metric's point estimate here: **no** (not ahead "
                "of both at {metrics}).",
                metrics=", ".join(behind),
            )
        )
    return Markdown(_("Hybrid ahead of both parents on every metric's point estimate here: **yes**."))


def needle_tests(rep: Report, against: str = "dense") -> Markdown:
    """A report's comparisons at the needle level, one line each: wins, losses, p, Holm p and what it means."""
    items = []
    for c in (x.needle for x in rep.lines):
        assert c.p_holm is not None, "a report fills in every comparison's Holm p"
        sig = _("significant") if c.p_holm < ALPHA else _("not significant")
        items.append(
            say(
                "- **{metric}**: hybrid +{wins}/-{losses} needles against {against}, p = **{p:.2g}**, "
                "Holm p = **{holm:.2g}** ({significance} after correction).",
                metric=c.metric,
                wins=c.test.wins,
                losses=c.test.losses,
                against=against,
                p=c.test.p,
                holm=c.p_holm,
                significance=sig,
            )
        )
    return Markdown("\n".join(items))


def playground_columns(reranker: object) -> Markdown:
    """How many columns the playground shows: a fourth, the cross-encoder's, where it is installed."""
    if reranker:
        return Markdown(_("The cross-encoder is installed: a fourth column shows its reranking of the hybrid top 25."))
    return Markdown(
        _(
            "The cross-encoder is **not installed** on this machine, so the playground shows three columns. "
            "To add it, run `make models` on a machine with internet, then rerun this cell."
        )
    )


def bm25_checked(
    queries: int,
    chunks: int,
    diff_hand: float,
    diff_library: float,
    seconds_ragkit: float,
    seconds_hand: float,
    seconds_library: float,
) -> Markdown:
    """BM25 by hand and rank_bm25 against ragkit: the largest score difference, and each one's time per query."""
    return Markdown(
        say(
            "Largest score difference over **{queries}** queries × **{chunks:,}** chunks: by hand **{diff_hand:.1e}**, "
            "`rank_bm25` **{diff_library:.1e}**. Per query: `ragkit` **{ms_ragkit:.2f} ms**, by hand **{ms_hand:.1f} "
            "ms** (**{hand_slower:.0f}×** slower), `rank_bm25` **{ms_library:.1f} ms** (**{library_slower:.0f}×** "
            "slower).",
            queries=queries,
            chunks=chunks,
            diff_hand=diff_hand,
            diff_library=diff_library,
            ms_ragkit=seconds_ragkit * 1000,
            ms_hand=seconds_hand * 1000,
            hand_slower=seconds_hand / seconds_ragkit,
            ms_library=seconds_library * 1000,
            library_slower=seconds_library / seconds_ragkit,
        )
    )


def rrf_checked(same: int, queries: int, chunks: int) -> Markdown:
    """RRF by hand against ragkit's hybrid: on how many queries the two fused rankings are identical."""
    return Markdown(
        say(
            "Fused rankings identical to `ragkit`'s hybrid, all {chunks:,} chunks deep: **{same}** of "
            "**{queries}** queries.",
            chunks=chunks,
            same=same,
            queries=queries,
        )
    )
