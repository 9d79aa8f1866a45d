"""Needle evaluation without generation: the field's ranking metrics, answers destroyed, paired comparisons.

A chunk is *relevant* to a query when it quotes the whole needle (``needle in chunk.quoted``):
relevance is binary, what counts is what the model sees in its prompt, the chunk's own words
plus its overlap when that overlap is the document's contiguous text, never the header. A
chunk holding part of a needle cannot answer, so it earns nothing. An overlapping strategy
can put one needle whole in two chunks: then the query has two relevant chunks. A needle that
no chunk quotes is *destroyed* by the chunker: it has no relevant chunk, every metric scores
it 0, and first-hit rank 0 marks it.

The metrics, as the field names them (``metric`` strings; k any whole number from 1):

- ``Hit@k``: hit rate or success@k, 1 when some relevant chunk is in the top k (the chapter
  calls this recall@k; it equals recall only when a query has one relevant chunk);
- ``Recall@k``: the share of the query's relevant chunks in the top k;
- ``P@k``: precision, the share of the top k that is relevant;
- ``MRR@k`` and ``MRR``: the reciprocal rank of the first relevant chunk, 0 below rank k, or
  over the whole ranking;
- ``MAP``: mean average precision over the whole ranking;
- ``nDCG@k``: normalised discounted cumulative gain with binary gains.

Every paired comparison exists at two levels. At the *query* level each query is a pair
(the chapter's test, which reproduces its p-values). At the *needle* level each needle is
one pair, scored over all its phrasings: the two phrasings of a needle share its chunk,
so they are not two independent pieces of evidence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ragkit.chunking import SIZE, Chunk, blind_window_start, chunk_corpus, get_strategy
from ragkit.corpus import Corpus
from ragkit.data import Query, Question
from ragkit.data import queries as make_queries
from ragkit.errors import DataError, InputError
from ragkit.retrieval import RETRIEVERS, Encoder, Retriever, Run
from ragkit.statistics import SignTest, cluster_bootstrap, holm, needle_scores, needle_sign_test, sign_test, wilson
from ragkit.tokens import TokenReport, token_report

__all__ = [
    "FIELD_METRICS",
    "KS",
    "LEVELS",
    "METRICS",
    "NEVER",
    "Comparison",
    "Evaluation",
    "Figure",
    "Result",
    "compare",
    "evaluate",
    "first_hit_ranks",
    "hit_at",
    "needle_hits",
    "needle_windows",
    "query_hits",
    "quotes_needle",
    "reciprocal_rank",
    "relevant_ranks",
    "saved_by_overlap",
    "with_holm",
]

KS = (1, 4, 8, 20)
METRICS = tuple(f"Hit@{k}" for k in KS) + ("MRR",)
"""The chapter's figures: hit rates at its four depths and MRR over the whole ranking."""
FIELD_METRICS = ("Hit@10", "Recall@10", "P@10", "MRR@10", "MRR", "MAP", "nDCG@10")
"""What an IR paper reports, at the usual cutoff of 10."""
NEVER = 0
_AT_K = re.compile(r"(Hit|R|Recall|P|MRR|nDCG)@([1-9][0-9]{0,8})")
"""A metric with a cutoff: its name and k, at most nine digits (a longer one is no depth any ranking has)."""
LEVELS = ("query", "needle")


def quotes_needle(doc_id: str, quoted: str, question: Question) -> bool:
    """The one rule for a needle in a chunk: what a chunk quotes (``Chunk.quoted``, a citation's ``quote``) is of the
    needle's document and holds the whole needle."""
    return doc_id == question.doc_id and question.needle in quoted


def needle_hits(chunks: Sequence[Chunk], questions: Sequence[Question]) -> np.ndarray:
    """Which chunk quotes which needle in full: bool array (questions, chunks)."""
    hits = np.zeros((len(questions), len(chunks)), dtype=bool)
    of_document: dict[str, list[int]] = {}
    for j, c in enumerate(chunks):
        of_document.setdefault(c.doc_id, []).append(j)
    for i, q in enumerate(questions):
        for j in of_document.get(q.doc_id, ()):  # a chunk of another document never quotes the needle (the rule)
            hits[i, j] = quotes_needle(chunks[j].doc_id, chunks[j].quoted[2], q)
    return hits


def saved_by_overlap(chunks: Sequence[Chunk], questions: Sequence[Question]) -> tuple[str, ...]:
    """Ids of needles that some chunk quotes whole only thanks to its overlap: no chunk's content alone holds them."""
    quoted = np.asarray(needle_hits(chunks, questions).any(axis=1))
    own = [any(c.doc_id == q.doc_id and q.needle in c.content for c in chunks) for q in questions]
    return tuple(q.id for q, hit, alone in zip(questions, quoted, own) if hit and not alone)


def query_hits(chunks: Sequence[Chunk], questions: Sequence[Question], queries: Sequence[Query]) -> np.ndarray:
    """Which chunk quotes each query's needle: bool array (queries, chunks), found by the query's question id."""
    row = {q.id: i for i, q in enumerate(questions)}
    missing = sorted({q.qid for q in queries} - set(row))
    if missing:
        raise InputError(f"queries of unknown question(s) {', '.join(missing)}: pass the questions they come from")
    return needle_hits(chunks, questions)[[row[q.qid] for q in queries]].reshape(len(queries), len(chunks))


def hit_at(ranks: np.ndarray, k: int) -> np.ndarray:
    """Hit@k per query from first-hit ranks: 1.0 when the first relevant chunk is in the top k, else 0.0 (NEVER: 0)."""
    ranks = np.asarray(ranks, dtype=float)
    return ((ranks > 0) & (ranks <= k)).astype(float)


def reciprocal_rank(ranks: np.ndarray, k: int | None = None) -> np.ndarray:
    """The reciprocal rank per query from first-hit ranks: 1 / rank, 0 when none is relevant (or, with ``k``, when
    the first relevant chunk lies below rank k): the mean is MRR (MRR@k)."""
    ranks = np.asarray(ranks, dtype=float)
    found = (ranks > 0) if k is None else (ranks > 0) & (ranks <= k)
    return np.where(found, 1.0 / np.maximum(ranks, 1), 0.0)


def first_hit_ranks(ranking: np.ndarray, hits: np.ndarray) -> np.ndarray:
    """Rank (from 1) of the first chunk carrying the needle, per query; NEVER (0) when none does."""
    ordered = np.take_along_axis(hits, ranking, axis=1)
    found = ordered.any(axis=1)
    return np.where(found, ordered.argmax(axis=1) + 1, NEVER)


def relevant_ranks(ranking: np.ndarray, hits: np.ndarray) -> tuple[tuple[int, ...], ...]:
    """Ranks (from 1, ascending) of every chunk carrying the needle, per query; empty when none does."""
    ordered = np.take_along_axis(hits, ranking, axis=1)
    return tuple(tuple(int(r) + 1 for r in np.flatnonzero(row)) for row in ordered)


@dataclass(frozen=True)
class Result:
    """The first-hit rank of every query for one strategy and retriever, and the needle each query asks for.

    ``relevant``: the ranks of every relevant chunk per query; left out, each query has one relevant chunk, at its
    first-hit rank (none when that rank is 0).
    """

    strategy: str
    retriever: str
    ranks: np.ndarray
    query_ids: tuple[str, ...]
    needle_ids: tuple[str, ...] = ()
    relevant: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self) -> None:
        if not self.needle_ids:  # one phrasing per needle: each query is its own needle
            object.__setattr__(self, "needle_ids", tuple(self.query_ids))
        if len(self.needle_ids) != len(self.query_ids):
            raise InputError(f"{len(self.query_ids)} queries but {len(self.needle_ids)} needle ids: give one per query")
        if not self.relevant:
            object.__setattr__(self, "relevant", tuple((int(r),) if r > 0 else () for r in self.ranks))
        if len(self.relevant) != len(self.ranks) or any(
            (min(rel) if rel else NEVER) != r for rel, r in zip(self.relevant, self.ranks)
        ):
            raise InputError("the relevant chunks' ranks disagree with the first-hit ranks: give both from one run")

    @property
    def label(self) -> str:
        """``E/dense``-style name used in comparisons."""
        return f"{self.strategy}/{self.retriever}"

    def per_query(self, metric: str) -> np.ndarray:
        """Per-query value of a metric (the module's list): 1/0 for ``Hit@k``, a share or a gain for the others."""
        first = self.ranks.astype(float)
        if metric == "MRR":
            return reciprocal_rank(first)
        if metric == "MAP":
            return np.array(
                [sum(i / r for i, r in enumerate(rel, 1)) / len(rel) if rel else 0.0 for rel in self.relevant]
            )
        at_k = _AT_K.fullmatch(metric)
        if at_k is None:
            shown = metric if len(metric) <= 40 else metric[:40] + "..."
            raise InputError(
                f"unknown metric {shown!r}: use Hit@k, Recall@k, P@k, MRR@k, nDCG@k (k from 1 to "
                "999999999, e.g. Hit@4), MRR or MAP"
            )
        name, k = at_k.group(1), int(at_k.group(2))
        if name in ("Hit", "R"):  # R@k: this course's earlier name for the hit rate, kept for older notebooks
            return hit_at(first, k)
        if name in ("Recall", "P"):
            within = np.array([sum(r <= k for r in rel) for rel in self.relevant], dtype=float)
            if name == "P":
                return within / k
            return np.array([w / len(rel) if rel else 0.0 for w, rel in zip(within, self.relevant)])
        if name == "MRR":
            return reciprocal_rank(first, k)
        return np.array(
            [
                sum(1 / np.log2(r + 1) for r in rel if r <= k)
                / sum(1 / np.log2(i + 1) for i in range(1, min(len(rel), k) + 1))
                if rel
                else 0.0
                for rel in self.relevant
            ]
        )

    def value(self, metric: str) -> float:
        """Mean of the metric over all queries."""
        if len(self.ranks) == 0:
            raise InputError(f"run {self.label} has no queries: evaluate at least one question")
        return float(self.per_query(metric).mean())

    def per_needle(self, metric: str) -> tuple[tuple[str, ...], np.ndarray]:
        """Needle ids and each needle's mean of the metric over its phrasings."""
        return needle_scores(self.per_query(metric), self.needle_ids)


@dataclass(frozen=True)
class Comparison:
    """Run A against run B on one metric, pair by pair: queries or needles (``level``), discordant ones named."""

    a: str
    b: str
    metric: str
    test: SignTest
    wins: tuple[str, ...]
    losses: tuple[str, ...]
    level: str = "query"
    p_holm: float | None = None

    def __str__(self) -> str:
        holm_p = "" if self.p_holm is None else f", Holm p = {self.p_holm:.3g}"
        return f"{self.a} vs {self.b} at {self.metric} ({self.level} level): {self.test}{holm_p}"


def compare(a: Result, b: Result, metric: str, level: str = "query", drop: Iterable[str] = ()) -> Comparison:
    """Paired sign test of two results on the same queries, by query or by needle; ``drop`` leaves needles out."""
    if level not in LEVELS:
        raise InputError(f"unknown level {level!r}: use 'query' or 'needle'")
    if a.query_ids != b.query_ids or a.needle_ids != b.needle_ids:
        raise InputError("the two results answer different queries: compare runs of one evaluation")
    keep = ~np.isin(np.array(a.needle_ids), list(drop))
    if not keep.any():
        raise InputError(f"no queries left to compare {a.label} with {b.label}: drop fewer needles")
    va, vb = a.per_query(metric)[keep], b.per_query(metric)[keep]
    needles = tuple(np.array(a.needle_ids)[keep])
    if level == "query":
        ids = np.array(a.query_ids)[keep]
        return Comparison(a.label, b.label, metric, sign_test(va, vb), tuple(ids[va > vb]), tuple(ids[va < vb]))
    needle_ids, sa = needle_scores(va, needles)
    sb = needle_scores(vb, needles)[1]
    ids_n = np.array(needle_ids)
    return Comparison(
        a.label,
        b.label,
        metric,
        needle_sign_test(va, vb, needles),
        tuple(ids_n[sa > sb]),
        tuple(ids_n[sa < sb]),
        "needle",
    )


def with_holm(comparisons: Sequence[Comparison]) -> list[Comparison]:
    """The comparisons with Holm-adjusted p filled in: one family per level, everything passed in shown together."""
    out = list(comparisons)
    for level in LEVELS:
        at = [i for i, c in enumerate(out) if c.level == level]
        for i, p in zip(at, holm([out[i].test.p for i in at])):
            out[i] = replace(out[i], p_holm=p)
    return out


@dataclass(frozen=True)
class Figure:
    """One run at one metric: its value, hits of n with the Wilson interval (recall only), the needle-level interval."""

    strategy: str
    retriever: str
    metric: str
    hits: int | None
    n: int
    value: float
    low: float | None
    high: float | None
    needle_low: float
    needle_high: float
    design_effect: float


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

    def compare(self, a: str, b: str, metric: str, level: str = "query", drop: Iterable[str] = ()) -> Comparison:
        """Paired comparison of two runs by label, e.g. ``compare("E/dense", "A/dense", "R@20", "needle")``."""
        return compare(self[a], self[b], metric, level, drop)

    def figures(self, labels: Iterable[str] | None = None) -> list[Figure]:
        """Every run (or the runs labelled) at every metric: recall with its 95% Wilson interval (queries as
        independent), every metric with its needle-level cluster-bootstrap interval."""
        out = []
        for r in self.results.values() if labels is None else [self[label] for label in labels]:
            n = len(r.ranks)
            for metric in METRICS:
                values = r.per_query(metric)
                hits = int(values.sum()) if metric != "MRR" else None
                low, high = wilson(hits, n) if hits is not None else (None, None)
                cluster = cluster_bootstrap(values, r.needle_ids)
                out.append(
                    Figure(
                        r.strategy,
                        r.retriever,
                        metric,
                        hits,
                        n,
                        r.value(metric),
                        low,
                        high,
                        cluster.low,
                        cluster.high,
                        cluster.design_effect,
                    )
                )
        return out


def evaluate(
    corpus: Corpus,
    questions: Sequence[Question],
    strategies: Iterable[str] = "ABCDEF",
    retrievers: Iterable[str] = RETRIEVERS,
    rerankers: Sequence = (),
    rerank_on: Iterable[str] = ("E",),
    embedder: Encoder | None = None,
    progress: bool = True,
    size: int | None = None,
    retriever_for: Callable[[str], Retriever] | None = None,
) -> Evaluation:
    """Run every retriever on every strategy for the 64 queries; rerankers rerank hybrid on ``rerank_on``.

    ``retriever_for(letter)`` can hand in retrievers built elsewhere (a notebook's shared ones).
    """
    questions = list(questions)
    if not questions:
        raise DataError(
            "the questions file holds no questions: add at least one line "
            '{"id": ..., "doc_id": ..., "needle": ..., "question": ..., "ticket": ...}'
        )
    absent = [q.id for q in questions if q.doc_id not in corpus.ids or q.needle not in corpus[q.doc_id].text]
    if absent:
        raise DataError(
            f"the needle of {', '.join(absent)} is not in its document: no chunker could keep it, so it "
            "would count as destroyed. Fix those questions (python -m ragkit validate names the problem) "
            "or pass the corpus they were written for (--corpus)"
        )
    queries = make_queries(questions)
    texts = [q.text for q in queries]
    ids, needles = tuple(q.id for q in queries), tuple(q.qid for q in queries)
    ev = Evaluation(queries, n_questions=len(questions))
    retrievers = list(retrievers)
    for bad in set(retrievers) - set(RETRIEVERS):
        raise InputError(f"unknown retriever {bad!r}: use one of {', '.join(RETRIEVERS)}")
    rerank_on = {get_strategy(s).letter for s in rerank_on}
    for letter in [get_strategy(s).letter for s in strategies]:
        retriever = (
            retriever_for(letter)
            if retriever_for
            else Retriever(chunk_corpus(corpus, letter, **({"size": size} if size else {})), embedder, letter, progress)
        )
        chunks = retriever.chunks
        hits = needle_hits(chunks, questions)
        ev.chunks[letter] = len(chunks)
        ev.tokens[letter] = token_report(chunks, warn=False)
        ev.destroyed[letter] = tuple(q.id for q, h in zip(questions, hits) if not h.any())
        hits_per_query = query_hits(chunks, questions, queries)
        runs: dict[str, Run] = {}
        needed = set(retrievers) | ({"hybrid"} if rerankers and letter in rerank_on else set())
        for name in ("dense", "bm25", "hybrid"):
            if name in needed:
                runs[name] = (
                    retriever.hybrid(texts, runs.get("dense"), runs.get("bm25"))
                    if name == "hybrid"
                    else retriever.run(name, texts)
                )
        if letter in rerank_on:
            for reranker in rerankers:
                run = retriever.reranked(texts, reranker, runs["hybrid"])
                runs[run.retriever] = run
        for name, run in runs.items():
            if name in retrievers or "+" in name:
                ev.results[f"{letter}/{name}"] = Result(
                    letter,
                    name,
                    first_hit_ranks(run.ranking, hits_per_query),
                    ids,
                    needles,
                    relevant_ranks(run.ranking, hits_per_query),
                )
    return ev


def needle_windows(corpus: Corpus, questions: Sequence[Question], size: int = SIZE) -> list[tuple[str, int, int]]:
    """Each needle's id, offset inside its blind window, and length: offset + length > size puts a window end in it."""
    out = []
    for q in questions:
        doc = corpus[q.doc_id]
        at = doc.text.find(q.needle)
        out.append((q.id, at - blind_window_start(doc, at, size), len(q.needle)))
    return out
