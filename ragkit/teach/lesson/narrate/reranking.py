"""What notebook 04-reranking says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from IPython.display import HTML, Markdown

from ragkit.evaluation import Evaluation
from ragkit.report import Report
from ragkit.retrieval import RERANK_DEPTH
from ragkit.statistics import ALPHA
from ragkit.teach.course import chapter
from ragkit.teach.language import _, say
from ragkit.teach.lesson.formats import noun
from ragkit.teach.lesson.latency import Timing

if TYPE_CHECKING:
    from ragkit.rerank import CrossEncoderReranker

__all__ = [
    "chapter_latencies",
    "chapter_rerank_time",
    "cross_encoder_here",
    "maxsim_gains",
    "maxsim_query_time",
    "maxsim_wall_time",
    "no_cross_encoder",
    "rerank_skipped",
    "shortlist_ceiling",
]


def no_cross_encoder() -> HTML:
    """The boxed warning shown when the chapter's cross-encoder is not installed: what is missing and what to do."""
    return HTML(
        _(
            "<div style='border:2px solid #ef6c00;background:#fff3e0;padding:.6em 1em;border-radius:4px'><b>No "
            "cross-encoder on this machine.</b> The chapter's reranker, "
            "<code>cross-encoder/ms-marco-MiniLM-L-6-v2</code>, is not installed here, so this notebook cannot measure "
            "its gain. Below you get the chapter's own figures, labelled as such, and an offline reranker (MaxSim) "
            "that runs without it. <b>MaxSim is not a stand-in for the cross-encoder's gain</b>: it is a different, "
            "untrained method, and whatever it scores tells you nothing about what the cross-encoder would do on this "
            "corpus. To measure the real thing, run <code>make models</code> on a machine with internet, then rerun "
            "this notebook.</div>"
        )
    )


def chapter_rerank_time() -> Markdown:
    """What the chapter's cross-encoder cost per query."""
    return Markdown(
        say("The chapter's cross-encoder over its top 25 took **{ms} ms** per query on its CPU.", ms=chapter.RERANK_MS)
    )


def shortlist_ceiling(ev: Evaluation) -> Markdown:
    """How deep the shortlist a reranker reorders is, and the share of queries whose needle it holds at all."""
    return Markdown(
        say(
            "Shortlist depth in ragkit: the hybrid top **{depth}**, out of **{chunks:,}** chunks in strategy E. A "
            "reranker can only promote what is already in that shortlist: the hybrid top {depth} holds the needle for "
            "**{ceiling:.3f}** of the queries, the ceiling for any reranker here.",
            depth=RERANK_DEPTH,
            chunks=ev.chunks["E"],
            ceiling=ev["E/hybrid"].value(f"Hit@{RERANK_DEPTH}"),
        )
    )


def cross_encoder_here(reranker: CrossEncoderReranker | None) -> Markdown:
    """Where the cross-encoder was found, or what to do to get it and what the notebook does without it."""
    if reranker is None:
        return Markdown(
            _(
                "**No cross-encoder on this machine.** Run `make models` on a machine with internet access (or set "
                "`RAGKIT_RERANKER` to a folder holding the model), then restart the kernel. The next two cells skip "
                "themselves; the late-interaction part further down runs without it."
            )
        )
    return Markdown(say("Cross-encoder found in `{path}`: the next two cells use it.", path=str(reranker.path)))


def rerank_skipped(first: bool = False) -> Markdown:
    """The line a cell shows instead of its cross-encoder result; the first one points at how to get the model."""
    if first:
        return Markdown(_("*Skipped: no cross-encoder (see above for how to get it).*"))
    return Markdown(_("*Skipped: no cross-encoder.*"))


def maxsim_wall_time(seconds: float, queries: int) -> Markdown:
    """How long the MaxSim evaluation took in this kernel, and why that is not a per-query cost."""
    return Markdown(
        say(
            "MaxSim over the hybrid top **{depth}** for **{queries}** queries took **{seconds:.1f} s** on this machine "
            "in this kernel (a repeat run reuses the result). That is wall time for the whole evaluation, with "
            "whatever token vectors the cache already held read from disk, so it is not a per-query cost: the timings "
            "at the end of this notebook are.",
            depth=RERANK_DEPTH,
            queries=queries,
            seconds=seconds,
        )
    )


def maxsim_gains(rep: Report, ev: Evaluation, metrics: Sequence[str]) -> Markdown:
    """MaxSim's gains and losses that survive Holm at the needle level, and where its point estimates lead hybrid."""
    needles = [x.needle for x in rep.lines]
    held = [c for c in needles if c.p_holm is not None and c.p_holm < ALPHA]
    gains = [say("{metric} vs {against}", metric=c.metric, against=c.b) for c in held if c.test.wins > c.test.losses]
    losses = [say("{metric} vs {against}", metric=c.metric, against=c.b) for c in held if c.test.wins < c.test.losses]
    ahead = [m for m in metrics if ev["E/hybrid+maxsim"].value(m) > ev["E/hybrid"].value(m)]
    return Markdown(
        say(
            "Gains for MaxSim that survive Holm at the needle level (p < 0.05): **{gains}**. Losses: **{losses}**. On "
            "point estimates alone MaxSim is ahead of plain hybrid on **{ahead} of {metrics}** {metrics_noun} "
            "(**{which}**).",
            gains=", ".join(gains) or _("none"),
            losses=", ".join(losses) or _("none"),
            ahead=len(ahead),
            metrics=len(metrics),
            metrics_noun=noun(len(metrics), _("metric"), _("metrics")),
            which=", ".join(ahead) or _("none"),
        )
    )


def chapter_latencies() -> Markdown:
    """The chapter's time per query for each stage, and how many times BM25 and the scan the cross-encoder costs."""
    return Markdown(
        say(
            "The chapter, per query: cross-encoder over the top 25 **{rerank} ms**, BM25 **{bm25} ms**, the dense "
            "vector scan **{scan} ms**. The cross-encoder costs about **{over_bm25:,.0f}×** BM25 and "
            "**{over_scan:,.0f}×** the scan: it is the stage that decides your latency.",
            rerank=chapter.RERANK_MS,
            bm25=chapter.BM25_MS,
            scan=chapter.SCAN_MS,
            # two significant figures: the scan's 0.3 ms has one, so 1,897× would claim a precision it lacks
            over_bm25=float(f"{chapter.RERANK_MS / chapter.BM25_MS:.2g}"),
            over_scan=float(f"{chapter.RERANK_MS / chapter.SCAN_MS:.2g}"),
        )
    )


def maxsim_query_time(timings: Sequence[Timing], ev: Evaluation) -> Markdown:
    """What MaxSim costs at query time with stored token vectors and without, and what storing them takes."""
    by_stage = {t.stage: t.ms for t in timings}
    return Markdown(
        say(
            "MaxSim at query time here: query token vectors **{query_vectors:.1f} ms** plus the products "
            "**{products:.1f} ms**. Without stored token vectors, add **{chunk_vectors:,.0f} ms** for the shortlist. "
            "Storage: **{per_chunk:.0f}** word-piece vectors per chunk on average instead of one.",
            query_vectors=by_stage["query token vectors"],
            products=by_stage["MaxSim products"],
            chunk_vectors=by_stage["chunk token vectors"],
            per_chunk=ev.tokens["E"].pieces / ev.chunks["E"],
        )
    )
