"""Needle evaluation without generation: first-hit ranks, recall@k, MRR, answers destroyed, paired comparisons.

A query is answered at rank r when the r-th chunk of its ranking carries the whole needle
(``needle in chunk.carried``: the chunk's own words plus any overlap, never the header).
A needle that no chunk carries is *destroyed* by the chunker: its recall ceiling is zero,
and rank 0 marks it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from ragkit.chunking import STRATEGIES, Chunk, chunk_corpus, get_strategy
from ragkit.corpus import Corpus
from ragkit.data import Query, Question, queries as make_queries
from ragkit.errors import InputError
from ragkit.retrieval import RETRIEVERS, Retriever, Run
from ragkit.statistics import SignTest, sign_test, wilson
from ragkit.tokens import TokenReport, token_report

KS = (1, 4, 8, 20)
METRICS = tuple(f"R@{k}" for k in KS) + ("MRR",)
NEVER = 0


def needle_hits(chunks: Sequence[Chunk], questions: Sequence[Question]) -> np.ndarray:
    """Which chunk carries which needle in full: bool array (questions, chunks)."""
    hits = np.zeros((len(questions), len(chunks)), dtype=bool)
    for i, q in enumerate(questions):
        for j, c in enumerate(chunks):
            if c.doc_id == q.doc_id and q.needle in c.carried:
                hits[i, j] = True
    return hits


def first_hit_ranks(ranking: np.ndarray, hits: np.ndarray) -> np.ndarray:
    """Rank (from 1) of the first chunk carrying the needle, per query; NEVER (0) when none does."""
    ordered = np.take_along_axis(hits, ranking, axis=1)
    found = ordered.any(axis=1)
    return np.where(found, ordered.argmax(axis=1) + 1, NEVER)


@dataclass(frozen=True)
class Result:
    """The first-hit rank of every query for one strategy and retriever."""

    strategy: str
    retriever: str
    ranks: np.ndarray
    query_ids: tuple[str, ...]

    @property
    def label(self) -> str:
        """``E/dense``-style name used in comparisons."""
        return f"{self.strategy}/{self.retriever}"

    def per_query(self, metric: str) -> np.ndarray:
        """Per-query value of a metric: 1/0 for ``R@k``, the reciprocal rank for ``MRR``."""
        if metric == "MRR":
            return np.where(self.ranks > 0, 1.0 / np.maximum(self.ranks, 1), 0.0)
        if metric.startswith("R@") and metric[2:].isdigit():
            k = int(metric[2:])
            return ((self.ranks > 0) & (self.ranks <= k)).astype(float)
        raise InputError(f"unknown metric {metric!r}: use R@k (e.g. R@4) or MRR")

    def value(self, metric: str) -> float:
        """Mean of the metric over all queries."""
        return float(self.per_query(metric).mean())


@dataclass(frozen=True)
class Comparison:
    """Run A against run B on one metric, query by query."""

    a: str
    b: str
    metric: str
    test: SignTest
    wins: tuple[str, ...]
    losses: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.a} vs {self.b} at {self.metric}: {self.test}"


def compare(a: Result, b: Result, metric: str) -> Comparison:
    """Paired sign test of two results on the same queries, with the discordant queries named."""
    if a.query_ids != b.query_ids:
        raise InputError("the two results answer different queries: compare runs of one evaluation")
    va, vb = a.per_query(metric), b.per_query(metric)
    ids = np.array(a.query_ids)
    return Comparison(a.label, b.label, metric, sign_test(va, vb),
                      tuple(ids[va > vb]), tuple(ids[va < vb]))


@dataclass
class Evaluation:
    """Every run of one experiment, the answers each strategy destroyed, and the token bill."""

    queries: list[Query]
    results: dict[str, Result] = field(default_factory=dict)
    destroyed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    chunks: dict[str, int] = field(default_factory=dict)
    tokens: dict[str, TokenReport] = field(default_factory=dict)
    n_questions: int = 0

    def __getitem__(self, label: str) -> Result:
        try:
            return self.results[label]
        except KeyError:
            raise InputError(f"no run {label!r} in this evaluation: have {', '.join(self.results)}") from None

    def compare(self, a: str, b: str, metric: str) -> Comparison:
        """Paired comparison of two runs by label, e.g. ``compare("E/dense", "A/dense", "R@20")``."""
        return compare(self[a], self[b], metric)

    def table(self) -> pd.DataFrame:
        """Tidy table: one row per run and metric, every recall with its 95% Wilson interval."""
        rows = []
        for r in self.results.values():
            n = len(r.ranks)
            for metric in METRICS:
                value = r.value(metric)
                hits = int(r.per_query(metric).sum()) if metric != "MRR" else None
                low, high = wilson(hits, n) if hits is not None else (np.nan, np.nan)
                rows.append({"strategy": r.strategy, "retriever": r.retriever, "metric": metric,
                             "hits": hits, "n": n, "value": value, "low": low, "high": high})
        return pd.DataFrame(rows)

    def summary(self) -> pd.DataFrame:
        """Wide table for people: one row per run, ``value [low, high]`` per recall, MRR, destroyed."""
        rows = []
        for r in self.results.values():
            row = {"strategy": r.strategy, "retriever": r.retriever}
            for metric in METRICS[:-1]:
                hits = int(r.per_query(metric).sum())
                low, high = wilson(hits, len(r.ranks))
                row[metric] = f"{hits / len(r.ranks):.3f} [{low:.3f}, {high:.3f}]"
            row["MRR"] = f"{r.value('MRR'):.3f}"
            row["destroyed"] = f"{len(self.destroyed[r.strategy])}/{self.n_questions}"
            rows.append(row)
        return pd.DataFrame(rows)

    def to_dict(self, comparisons: Iterable[Comparison] = ()) -> dict:
        """Everything as plain JSON-able data (the ``ragkit eval --json`` structure)."""
        return {
            "queries": [{"id": f"{q.qid}/{q.phrasing}", "question": q.qid, "phrasing": q.phrasing, "text": q.text}
                        for q in self.queries],
            "strategies": {
                s: {"name": STRATEGIES[s].name, "chunks": self.chunks[s], "destroyed": list(self.destroyed[s]),
                    "tokens": {"pieces": t.pieces, "header_pieces": t.header_pieces,
                               "header_share": t.header_share, "over_window": t.over_window, "window": t.window}}
                for s, t in self.tokens.items()},
            "runs": [{"strategy": r.strategy, "retriever": r.retriever, "ranks": r.ranks.tolist(),
                      "metrics": {m: r.value(m) for m in METRICS}} for r in self.results.values()],
            "table": self.table().replace({np.nan: None}).to_dict(orient="records"),
            "comparisons": [{"a": c.a, "b": c.b, "metric": c.metric, "wins": c.test.wins, "losses": c.test.losses,
                             "p": c.test.p, "a_wins_on": list(c.wins), "b_wins_on": list(c.losses)}
                            for c in comparisons],
        }


def evaluate(corpus: Corpus, questions: Sequence[Question], strategies: Iterable[str] = "ABCDEF",
             retrievers: Iterable[str] = RETRIEVERS, rerankers: Sequence = (), rerank_on: Iterable[str] = ("E",),
             embedder=None, progress: bool = True, size: int | None = None,
             retriever_for: Callable[[str], Retriever] | None = None) -> Evaluation:
    """Run every retriever on every strategy for the 64 queries; rerankers rerank hybrid on ``rerank_on``.

    ``retriever_for(letter)`` can hand in retrievers built elsewhere (a notebook's shared ones).
    """
    questions = list(questions)
    queries = make_queries(questions)
    texts = [q.text for q in queries]
    ids = tuple(f"{q.qid}/{q.phrasing}" for q in queries)
    ev = Evaluation(queries, n_questions=len(questions))
    retrievers = list(retrievers)
    for bad in set(retrievers) - set(RETRIEVERS):
        raise InputError(f"unknown retriever {bad!r}: use one of {', '.join(RETRIEVERS)}")
    rerank_on = {get_strategy(s).letter for s in rerank_on}
    for letter in [get_strategy(s).letter for s in strategies]:
        retriever = retriever_for(letter) if retriever_for else \
            Retriever(chunk_corpus(corpus, letter, **({"size": size} if size else {})), embedder, letter, progress)
        chunks = retriever.chunks
        hits = needle_hits(chunks, questions)
        ev.chunks[letter] = len(chunks)
        ev.tokens[letter] = token_report(chunks, warn=False)
        ev.destroyed[letter] = tuple(q.id for q, h in zip(questions, hits) if not h.any())
        query_hits = np.concatenate([hits, hits])
        runs: dict[str, Run] = {}
        needed = set(retrievers) | ({"hybrid"} if rerankers and letter in rerank_on else set())
        for name in ("dense", "bm25", "hybrid"):
            if name in needed:
                runs[name] = (retriever.hybrid(texts, runs.get("dense"), runs.get("bm25"))
                              if name == "hybrid" else retriever.run(name, texts))
        if letter in rerank_on:
            for reranker in rerankers:
                run = retriever.reranked(texts, reranker, runs["hybrid"])
                runs[run.retriever] = run
        for name, run in runs.items():
            if name in retrievers or "+" in name:
                ev.results[f"{letter}/{name}"] = Result(letter, name, first_hit_ranks(run.ranking, query_hits), ids)
    return ev


def needle_windows(corpus: Corpus, questions: Sequence[Question], size: int = 512) -> list[tuple[str, int, int]]:
    """Each needle's id, offset inside its blind window, and length: offset + length > size means a cut inside it."""
    from ragkit.chunking import blind_window_start

    out = []
    for q in questions:
        doc = corpus[q.doc_id]
        at = doc.text.find(q.needle)
        out.append((q.id, at - blind_window_start(doc, at, size), len(q.needle)))
    return out
