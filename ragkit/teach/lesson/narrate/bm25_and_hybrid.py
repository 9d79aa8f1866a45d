"""What notebook 03-bm25-and-hybrid says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown

from ragkit.evaluation import Evaluation
from ragkit.fusion import K, rrf
from ragkit.report import Line, Report
from ragkit.retrieval import Retriever, Run
from ragkit.teach.course import chapter


def _rank(run: Run, chunk: int) -> int:
    """Where a chunk sits in a run's first ranking, counted from 1."""
    return int(np.where(run.ranking[0] == chunk)[0][0]) + 1


def constant_ranks(r: Retriever, token: str, runs: Mapping[str, Run]) -> Markdown:
    """Which chunks hold a rare token, and where each retriever ranks the first of them."""
    holders = [i for i, c in enumerate(r.chunks) if token in c.content]
    holder = r.chunks[holders[0]]
    ranks = ", ".join(f"{name} **{_rank(run, holders[0])}**" for name, run in runs.items())
    return Markdown(
        f"Chunks containing `{token}`: **{len(holders)}**, in *{holder.doc_id}*, section *{holder.section}*. Its rank "
        f"among **{len(r.chunks)}** chunks: {ranks}.")


def dense_first_choice(r: Retriever, dense: Run, holder: int) -> Markdown:
    """Where dense retrieval looked instead of the chunk that holds the token, and how far each is."""
    best, dist = dense.ranking[0, 0], dense.distance[0] if dense.distance is not None else None
    assert dist is not None, "a dense run carries its distances"
    return Markdown(
        f"Dense's first choice: *{r.chunks[best].doc_id}*, section *{r.chunks[best].section}*, distance "
        f"**{dist[best]:.3f}**. The chunk that holds the constant: distance **{dist[holder]:.3f}**.\n\n"
        f"> {r.chunks[best].content[:300]}...")


def bm25_against_dense(ev: Evaluation, curve: pd.DataFrame) -> Markdown:
    """The chapter's three claims on BM25 (doubles top-1, falls behind around rank 8, fails elsewhere), checked."""
    d1, b1, ch1 = ev["E/dense"].value("R@1"), ev["E/bm25"].value("R@1"), chapter.RERANK["R@1"][0]
    ahead = [k for k in curve.index if curve.loc[k, "E/bm25"] > curve.loc[k, "E/dense"]]
    t1 = ev.compare("E/bm25", "E/dense", "R@1", "needle").test
    t8 = ev.compare("E/bm25", "E/dense", "R@8", "needle").test
    q8 = ev.compare("E/bm25", "E/dense", "R@8").test
    side = "behind" if t8.losses > t8.wins else "ahead" if t8.wins > t8.losses else "level"
    told = "a difference this data can tell apart" if t8.p < 0.05 else "but not distinguishably"
    return Markdown(
        f"- **Top-1**: BM25 **{b1:.3f}**, dense **{d1:.3f}** (ratio **{b1 / d1:.2f}**; the chapter's dense top-1 was "
        f"**{ch1}**, so its BM25 top-1 exceeded **{2 * ch1:.3f}**). Needle by needle at R@1: BM25 wins "
        f"**{t1.wins}**, dense **{t1.losses}**, p = **{t1.p:.2g}**. BM25 more than doubles dense here: "
        f"**{'yes' if b1 > 2 * d1 else 'no'}**.\n"
        f"- **Where BM25 leads**: {'at k = ' + ', '.join(map(str, ahead)) if ahead else 'at no k from 1 to 20'}.\n"
        f"- **Around rank 8**, needle by needle: BM25 wins **{t8.wins}**, dense **{t8.losses}**, p = **{t8.p:.2g}**: "
        f"BM25 is **{side}**, {told}. They fail on different queries: **{q8.wins + q8.losses}** queries are found by "
        "one and not the other.")


def two_scales(distances: np.ndarray, scores: np.ndarray) -> Markdown:
    """The ranges and directions of dense distances and BM25 scores for one query."""
    d, b = distances, scores
    return Markdown(
        f"Dense distances run from **{d.min():.3f}** (best) to **{d.max():.3f}**: lower is better. BM25 scores run "
        f"from **{b.max():.2f}** (best) down to **{b.min():.2f}**: higher is better, and **{int((b == 0).sum())}** of "
        f"**{len(b)}** chunks score exactly zero.")


def rrf_weights(k: int = K) -> Markdown:
    """Reciprocal rank fusion on a small example, and how much rank 1 outweighs rank 10 at ``k`` and at 0."""
    return Markdown(
        f"`rrf([[7, 3, 5], [5, 7, 9]])` → **{rrf([[7, 3, 5], [5, 7, 9]], k).tolist()}**. With k = {k}, rank 1 is "
        f"worth **{(k + 10) / (k + 1):.2f}** times rank 10; with k = 0 it would be worth **{10 / 1:.0f}** times.")


def fused_ranks(runs: Mapping[str, Run], token: str, holder: int, k: int = K) -> Markdown:
    """The token's chunk and hybrid's first chunk: their ranks in each list and their fused scores."""
    top = int(runs["hybrid"].ranking[0, 0])

    def fused(i: int) -> float:
        return sum(1 / (k + _rank(runs[n], i)) for n in ("dense", "bm25"))

    return Markdown(
        f"The `{token}` chunk: dense rank **{_rank(runs['dense'], holder)}**, BM25 rank "
        f"**{_rank(runs['bm25'], holder)}**, fused score **{fused(holder):.4f}**, hybrid rank "
        f"**{_rank(runs['hybrid'], holder)}**.\n\n"
        f"Hybrid's first chunk: dense rank **{_rank(runs['dense'], top)}**, BM25 rank **{_rank(runs['bm25'], top)}**, "
        f"fused score **{fused(top):.4f}**.")


def chapter_verdicts(lines: Sequence[Line], family: int) -> Markdown:
    """Each chapter comparison in a list: what the chapter said, ours at both levels, the claim and the verdict."""
    items = []
    for x in lines:
        assert x.finding is not None and x.needle.p_holm is not None, "a chapter line carries its finding and Holm p"
        items.append(
            f"- **{x.a} vs {x.b} at {x.metric}**: the chapter {x.finding.said}; here +{x.query.test.wins}/"
            f"-{x.query.test.losses} queries (p = {x.query.test.p:.2g}), +{x.needle.test.wins}/-{x.needle.test.losses} "
            f"needles (p = {x.needle.test.p:.2g}, Holm p over {family} = {x.needle.p_holm:.2g}); the chapter claims "
            f"{x.finding.claim}: **{x.verdict}**.")
    return Markdown("\n".join(items))


def ahead_of_both(table: pd.DataFrame) -> Markdown:
    """Whether hybrid is ahead of both parents on every metric's point estimate, and where it is not."""
    behind = [m for m in table.index if not table.loc[m, "hybrid ahead of both"]]
    return Markdown(
        f"Hybrid ahead of both parents on every metric's point estimate here: **{'yes' if not behind else 'no'}**"
        + (f" (not ahead of both at {', '.join(behind)})." if behind else "."))


def needle_tests(rep: Report, against: str = "dense") -> Markdown:
    """A report's comparisons at the needle level, one line each: wins, losses, p, Holm p and what it means."""
    items = []
    for c in (x.needle for x in rep.lines):
        assert c.p_holm is not None, "a report fills in every comparison's Holm p"
        sig = "significant" if c.p_holm < 0.05 else "not significant"
        items.append(f"- **{c.metric}**: hybrid +{c.test.wins}/-{c.test.losses} needles against {against}, "
                     f"p = **{c.test.p:.2g}**, Holm p = **{c.p_holm:.2g}** ({sig} after correction).")
    return Markdown("\n".join(items))
