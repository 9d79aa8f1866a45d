"""Retrievers over one strategy's chunks: dense, BM25, hybrid (RRF) and reranked, all queries at once.

Every ranking is a full permutation of the chunks, best first; equal scores keep chunk
order, so every result is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ragkit.chunking import Chunk
from ragkit.errors import InputError
from ragkit.fusion import rrf_many
from ragkit.lexical import BM25

if TYPE_CHECKING:
    from ragkit.embedding import ModelStamp

__all__ = [
    "RERANK_DEPTH",
    "RETRIEVERS",
    "SORT_ALL",
    "Encoder",
    "Reranker",
    "Retriever",
    "Run",
    "cosine_distance",
    "rank",
    "rerank_top",
]

RETRIEVERS = ("dense", "bm25", "hybrid")
RERANK_DEPTH = 25


class Encoder(Protocol):
    """What a retriever needs from an embedding model: unit vectors for texts, one row each, and its stamp."""

    @property
    def stamp(self) -> ModelStamp:
        """What the vectors depend on (the course reads its window to count truncated chunks)."""
        ...

    def encode(self, texts: Sequence[str], progress: bool = True) -> np.ndarray: ...


class Reranker(Protocol):
    """What reranking needs: a name for the run, and one relevance score per text (higher is better)."""

    name: str

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class Run:
    """One retriever's answer to many queries: chunk indices best first, one row per query."""

    retriever: str
    strategy: str
    ranking: np.ndarray
    distance: np.ndarray | None = None
    matched: np.ndarray | None = None
    """Which chunks the retriever actually found per query (bool); None: every chunk (dense)."""
    score: np.ndarray | None = None
    """BM25's score of every chunk per query (higher is better); None for the other runs."""

    def top(self, query: int, k: int) -> np.ndarray:
        """The first k chunk indices for one query."""
        return self.ranking[query, :k]


SORT_ALL = 4096
"""Up to this many scores, ``rank(k=...)`` sorts them all: the selection pays off on larger arrays only."""


def rank(scores: np.ndarray, higher_is_better: bool = True, k: int | None = None) -> np.ndarray:
    """Chunk indices best first per row; ties keep chunk order (stable sort). ``k``: only the first k of that ranking.

    A search that shows k chunks needs no order among the rest: the k are selected in linear time (``partition``),
    ties at the k-th key resolved by chunk order as the full sort would, then only they are sorted.
    """
    if k is not None and k < 0:
        raise InputError(f"k = {k}: ask for 0 or more chunks")
    keys = -np.asarray(scores) if higher_is_better else np.asarray(scores)
    n = keys.shape[-1]
    # below a few thousand keys one sort costs less than the selection's several passes
    if k is None or k >= n or keys.size <= SORT_ALL or np.isnan(keys).any():
        return np.argsort(keys, axis=-1, kind="stable")[..., :k]
    if k <= 0:
        return np.zeros(keys.shape[:-1] + (0,), dtype=np.intp)
    kth = np.partition(keys, k - 1, axis=-1)[..., k - 1 : k]
    below = keys < kth
    # of the keys equal to the k-th, the lowest chunk indices fill the k places the smaller keys leave
    tied = keys == kth
    taken = below | (tied & (np.cumsum(tied, axis=-1) <= k - below.sum(axis=-1, keepdims=True)))
    chosen = np.nonzero(taken)[-1].reshape(keys.shape[:-1] + (k,))  # ascending chunk order in each row
    order = np.argsort(np.take_along_axis(keys, chosen, axis=-1), axis=-1, kind="stable")
    return np.take_along_axis(chosen, order, axis=-1)


def cosine_distance(queries: np.ndarray, chunks: np.ndarray) -> np.ndarray:
    """``1 - q.c`` for unit vectors: all queries against all chunks in one product."""
    return 1.0 - queries @ chunks.T


def rerank_top(ranking: np.ndarray, scores: np.ndarray, depth: int = RERANK_DEPTH) -> np.ndarray:
    """Reorder the first ``depth`` entries by score (high first, ties keep order); the rest keeps its place."""
    head = ranking[:depth]
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    return np.concatenate([head[order], ranking[depth:]])


class Retriever:
    """The chunks of one strategy, embedded and indexed for BM25: ready for any query."""

    def __init__(
        self, chunks: Sequence[Chunk], embedder: Encoder | None = None, strategy: str = "", progress: bool = True
    ):
        if not chunks:
            raise InputError("no chunks to search: load a corpus with at least one document")
        if embedder is None:
            from ragkit.embedding import default_embedder

            embedder = default_embedder()
        self.chunks = list(chunks)
        self.strategy = strategy
        self.embedder = embedder
        self.texts = [c.text for c in self.chunks]
        self.vectors = embedder.encode(self.texts, progress=progress)
        self.lexical = BM25(self.texts)

    def embed(self, queries: Sequence[str]) -> np.ndarray:
        """Query vectors (cached by content like chunk vectors)."""
        return self.embedder.encode(list(queries), progress=False)

    def distances(self, queries: Sequence[str]) -> np.ndarray:
        """Cosine distance of every query (rows) to every chunk (columns)."""
        return cosine_distance(self.embed(queries), self.vectors)

    def dense(self, queries: Sequence[str]) -> Run:
        """Rank by cosine distance, nearest first."""
        dist = self.distances(queries)
        return Run("dense", self.strategy, rank(dist, higher_is_better=False), dist)

    def bm25(self, queries: Sequence[str]) -> Run:
        """Rank by BM25 score over the same text that is embedded."""
        scores = self.lexical.scores_many(list(queries))
        return Run("bm25", self.strategy, rank(scores), matched=scores > 0, score=scores)

    def hybrid(self, queries: Sequence[str], dense: Run | None = None, bm25: Run | None = None) -> Run:
        """Reciprocal rank fusion of the dense and BM25 rankings; BM25 credits only chunks that share a term."""
        dense = dense or self.dense(queries)
        bm25 = bm25 or self.bm25(queries)
        fused = rrf_many(dense.ranking, bm25.ranking, matched=bm25.matched)
        return Run("hybrid", self.strategy, fused, dense.distance)

    def reranked(
        self, queries: Sequence[str], reranker: Reranker, base: Run | None = None, depth: int = RERANK_DEPTH
    ) -> Run:
        """Rerank the first ``depth`` chunks of a base run (hybrid by default) with a reranker."""
        base = base or self.hybrid(queries)
        rows = []
        for i, query in enumerate(queries):
            head = base.ranking[i, :depth]
            scores = reranker.score(query, [self.texts[j] for j in head])
            rows.append(rerank_top(base.ranking[i], scores, depth))
        return Run(f"{base.retriever}+{reranker.name}", self.strategy, np.vstack(rows), base.distance)

    def run(self, retriever: str, queries: Sequence[str]) -> Run:
        """A run by name: ``dense``, ``bm25`` or ``hybrid``."""
        if retriever == "dense":
            return self.dense(queries)
        if retriever == "bm25":
            return self.bm25(queries)
        if retriever == "hybrid":
            return self.hybrid(queries)
        raise InputError(f"unknown retriever {retriever!r}: use one of {', '.join(RETRIEVERS)}")
