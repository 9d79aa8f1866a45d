"""Per-query latency measured on this machine, stage by stage, each figure labelled with how it was measured.

A figure that mixes batching, threads or a warm cache into a per-query cost cannot stand
beside the chapter's single-threaded ones, so every timing here says what it did.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from threadpoolctl import threadpool_limits

from ragkit.embedding import Embedder
from ragkit.errors import InputError
from ragkit.fusion import rrf_many
from ragkit.plumbing.onnx import BATCH
from ragkit.plumbing.timing import median_ms
from ragkit.retrieval import RERANK_DEPTH, Retriever, cosine_distance, rank
from ragkit.teach.course import chapter
from ragkit.teach.language import _, say
from ragkit.teach.lesson.formats import count

__all__ = ["Timing", "stage_name", "time_stages", "timings_table"]


@dataclass(frozen=True)
class Timing:
    """One stage's median time per query, how it was measured, and the chapter's figure when it has one."""

    stage: str  # the stage's English name, which code reads (``t.stage in ("query embedding", "dense scan")``)
    ms: float
    how: str  # how it was measured, in the kernel's language
    chapter_ms: float | None = None


def time_stages(
    retriever: Retriever, query: str, maxsim: bool = False, depth: int = RERANK_DEPTH, repeat: int = 20
) -> list[Timing]:
    """Time one query through each stage: embedding (computed, not read from the cache), scan, BM25, fusion, MaxSim."""
    embedder = retriever.embedder
    if not isinstance(embedder, Embedder):
        raise InputError(
            "timing needs ragkit's Embedder (uncached encoding and token vectors): "
            "build the retriever with the default embedder"
        )
    cores = os.cpu_count() or 1
    threads = (
        count(embedder.threads, _("onnxruntime thread"), _("onnxruntime threads"))
        if embedder.threads
        else say("onnxruntime's default threads on {cores}", cores=count(cores, _("core"), _("cores")))
    )
    embed_ms = median_ms(
        lambda _: embedder.encode([query], progress=False, cache=False), range(max(3, repeat // 4)), warm=True
    )
    q = embedder.encode([query], progress=False)
    out = [
        Timing(
            "query embedding",
            embed_ms,
            say("one query, batch 1, computed by the model (cache bypassed), {threads}", threads=threads),
            chapter.QUERY_MS,
        )
    ]
    with threadpool_limits(1):
        dense = rank(cosine_distance(q, retriever.vectors), higher_is_better=False)
        bm25 = rank(retriever.lexical.scores_many([query]))
        out.append(
            Timing(
                "dense scan",
                median_ms(lambda _: rank(cosine_distance(q, retriever.vectors), False), range(repeat), warm=True),
                say(
                    "one query against {vectors:,} vectors, product and sort, 1 thread", vectors=len(retriever.vectors)
                ),
                chapter.SCAN_MS,
            )
        )
        out.append(
            Timing(
                "BM25",
                median_ms(lambda _: rank(retriever.lexical.scores_many([query])), range(repeat), warm=True),
                say("one query over {chunks:,} chunks, scores and sort, 1 thread", chunks=len(retriever.texts)),
                chapter.BM25_MS,
            )
        )
        out.append(
            Timing(
                "fusion (RRF)",
                median_ms(lambda _: rrf_many(dense, bm25), range(repeat), warm=True),
                _("one query's two full rankings, 1 thread"),
            )
        )
    if maxsim:
        texts = [retriever.texts[j] for j in rrf_many(dense, bm25)[0, :depth]]

        def encode(items: list[str], batch: int):
            return embedder.token_vectors(items, cache=False, batch_size=batch)

        out.append(
            Timing(
                "query token vectors",
                median_ms(lambda _: encode([query], 1), range(max(3, repeat // 4)), warm=True),
                say("one query, batch 1, computed by the model, {threads}", threads=threads),
            )
        )
        blocks = embedder.token_vectors(texts)
        qt = embedder.token_vectors([query])[0]
        with threadpool_limits(1):
            products = median_ms(lambda _: [(qt @ d.T).max(axis=1).sum() for d in blocks], range(repeat), warm=True)
            out.append(
                Timing(
                    "MaxSim products",
                    products,
                    say("{depth} chunks' token vectors already in memory, 1 thread", depth=depth),
                )
            )
        out.append(
            Timing(
                "chunk token vectors",
                median_ms(lambda _: encode(texts, BATCH), range(1), warm=True),
                say(
                    "{depth} chunks, batch {batch}, computed by the model: paid at index time when they "
                    "are stored, at query time when they are not",
                    depth=depth,
                    batch=BATCH,
                ),
                None,
            )
        )
    return out


def stage_name(stage: str) -> str:
    """A stage's name in the kernel's language (``Timing.stage`` keeps the English one, which code reads)."""
    names = {
        "query embedding": _("query embedding"),
        "dense scan": _("dense scan"),
        "BM25": "BM25",
        "fusion (RRF)": _("fusion (RRF)"),
        "query token vectors": _("query token vectors"),
        "MaxSim products": _("MaxSim products"),
        "chunk token vectors": _("chunk token vectors"),
    }
    return names.get(stage, stage)


def _headings() -> dict[str, str]:
    """The table's column names (English: the notebooks' code names them, ``decimals={"here (ms)": 3}``) and the
    headings a table for people shows for them in the kernel's language (``formats.header`` finds each there)."""
    return {"stage": _("stage"), "here (ms)": _("here (ms)"), "chapter (ms)": _("chapter (ms)"), "how": _("how")}


def timings_table(timings: list[Timing]):
    """The timings as a table for people: stage, ours in ms (three decimals), the chapter's, how ours was measured
    (the stages' names and the measurements' descriptions in the kernel's language)."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "stage": stage_name(t.stage),
                "here (ms)": f"{t.ms:.3f}",
                "chapter (ms)": "" if t.chapter_ms is None else f"{t.chapter_ms:g}",
                "how": t.how,
            }
            for t in timings
        ],
        columns=list(_headings()),
    )


def __getattr__(name: str) -> object:
    """A name an older copy of a notebook calls here that is called otherwise now (``ragkit.teach.moved``)."""
    from ragkit.teach.moved import moved_name

    return moved_name(__name__, name)
