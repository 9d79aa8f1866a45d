"""Abstention beyond the cosine cut: any score a pipeline computes can gate it, and each is swept the same way.

A gate keeps at most ``keep`` candidates and, of those, only the ones whose score passes a cut; when none
passes, the pipeline abstains (NO ANSWER). The course's gate reads cosine distance (lower passes); the same
rule on BM25's score or a reranker's score (higher passes) is the common alternative. Each is swept over the
same in-domain and out-of-domain queries, counting what ``threshold.Sweep`` counts: bluffs, refusals, answers
with and without the needle. Scores on different scales meet on one curve: the share of out-of-domain queries
that bluff against the share of answerable ones refused, one point per cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragkit.chunking import Chunk
from ragkit.data import OutOfDomain, Question
from ragkit.data import queries as make_queries
from ragkit.errors import InputError
from ragkit.evaluation import query_hits
from ragkit.retrieval import RERANK_DEPTH, Reranker, Retriever
from ragkit.threshold import KEEP, SweepRow, check_both_kinds

__all__ = ["AbstentionPoint", "ScoreSweep", "sweeps"]


@dataclass(frozen=True)
class AbstentionPoint:
    """One cut of one abstention rule: the share of answerable queries refused and of out-of-domain ones bluffing."""

    cut: float
    refused_share: float
    bluff_share: float


class ScoreSweep:
    """A gate on one score (its candidates' scores per query computed once); any cut is then a comparison."""

    def __init__(
        self, name: str, scores_in: np.ndarray, needle_in: np.ndarray, scores_out: np.ndarray, higher_is_better: bool
    ):
        """Rows are queries, columns the gate's candidates best first: their scores and (in-domain) their needles."""
        scores_in, scores_out = np.asarray(scores_in, dtype=float), np.asarray(scores_out, dtype=float)
        if scores_in.ndim != 2 or scores_out.ndim != 2 or np.shape(needle_in) != scores_in.shape:
            raise InputError("give one row of candidate scores per query, and the needle flags in the same shape")
        if not len(scores_in) or not len(scores_out):
            raise InputError("an abstention rule is judged on both kinds of query: give in-domain and out-of-domain")
        if np.isnan(scores_in).any() or np.isnan(scores_out).any():
            raise InputError(f"the {name} scores hold NaN: a score that compares with nothing cannot gate")
        self.name, self.higher_is_better = name, higher_is_better
        self.scores_in, self.scores_out = scores_in, scores_out
        self.needle_in = np.asarray(needle_in, dtype=bool)

    def _passes(self, scores: np.ndarray, cut: float | None) -> np.ndarray:
        if cut is None:
            return np.ones(scores.shape, dtype=bool)
        return scores > cut if self.higher_is_better else scores < cut

    def at(self, cut: float | None) -> SweepRow:
        """Bluffs, refusals and answers at one cut (None: no cut, every candidate passes)."""
        kept_in, kept_out = self._passes(self.scores_in, cut), self._passes(self.scores_out, cut)
        answered = kept_in.any(axis=1)
        with_needle = (kept_in & self.needle_in).any(axis=1)
        return SweepRow(
            cut,
            int(kept_out.any(axis=1).sum()),
            len(self.scores_out),
            int((~answered).sum()),
            int(with_needle.sum()),
            int((answered & ~with_needle).sum()),
            len(self.scores_in),
        )

    def bluffing(self, cut: float | None) -> np.ndarray:
        """Per out-of-domain query, in order: does anything pass the gate at ``cut`` (a bluff)?"""
        return np.asarray(self._passes(self.scores_out, cut).any(axis=1))

    def cuts(self) -> np.ndarray:
        """Every cut where some query changes side, loosest first: one that lets every candidate through, then each
        query's best score (a cut at a score refuses it: the comparison is strict), the last refusing everything."""
        best_in = self.scores_in.max(axis=1) if self.higher_is_better else self.scores_in.min(axis=1)
        best_out = self.scores_out.max(axis=1) if self.higher_is_better else self.scores_out.min(axis=1)
        edges = np.unique(np.concatenate([best_in, best_out]))
        if self.higher_is_better:
            return np.concatenate([[edges.min() - 1.0], edges])
        return np.concatenate([[edges.max() + 1.0], edges[::-1]])

    def curve(self) -> list[AbstentionPoint]:
        """The rule's whole trade-off, loosest cut first: refused and bluffing shares at every cut that moves one."""
        out = []
        for cut in self.cuts():
            row = self.at(float(cut))
            out.append(AbstentionPoint(float(cut), row.refused / row.in_domain, row.bluffs / row.out_of_domain))
        return out

    def fewest_bluffs(self, max_refused: float, cuts: Sequence[float | None] | None = None) -> SweepRow:
        """The cut with the fewest bluffs among those refusing at most ``max_refused`` of the answerable queries: of
        every cut that moves a query (``cuts()``), or only of ``cuts`` (the positions a slider can reach)."""
        if not 0 <= max_refused <= 1:
            raise InputError(f"max_refused = {max_refused}: give a share between 0 and 1")
        if cuts is not None:
            rows = [self.at(None if c is None else float(c)) for c in cuts]
        else:  # the loosest cut lets all through: no cut
            rows = [self.at(None)] + [self.at(float(c)) for c in self.cuts()[1:]]
        allowed = [r for r in rows if r.refused <= max_refused * r.in_domain]
        return min(allowed, key=lambda r: (r.bluffs, r.refused))


def _candidates(order: np.ndarray, scores: np.ndarray | None, keep: int) -> tuple[np.ndarray, np.ndarray]:
    """The gate's candidates per query (the first ``keep`` of the ranking) and their scores."""
    if scores is None:
        raise InputError("this run carries no scores to gate on: use a dense run (distances) or a BM25 run (scores)")
    top = order[:, :keep]
    return top, np.take_along_axis(scores, top, axis=1)


def sweeps(
    retriever: Retriever,
    chunks: Sequence[Chunk],
    questions: Sequence[Question],
    out_of_domain: Sequence[OutOfDomain],
    reranker: Reranker | None = None,
    keep: int = KEEP,
    depth: int = RERANK_DEPTH,
) -> dict[str, ScoreSweep]:
    """The abstention rules on the same queries: cosine distance (dense), BM25's score, and a reranker's score
    on the hybrid top ``depth`` when one is given."""
    questions, out_of_domain = list(questions), list(out_of_domain)
    check_both_kinds(questions, out_of_domain)
    queries = make_queries(questions)
    texts_in, texts_out = [q.text for q in queries], [o.query for o in out_of_domain]
    hits = query_hits(chunks, questions, queries)
    out: dict[str, ScoreSweep] = {}

    dense_in, dense_out = retriever.dense(texts_in), retriever.dense(texts_out)
    top_in, d_in = _candidates(dense_in.ranking, dense_in.distance, keep)
    _, d_out = _candidates(dense_out.ranking, dense_out.distance, keep)
    out["cosine distance"] = ScoreSweep(
        "cosine distance", d_in, np.take_along_axis(hits, top_in, axis=1), d_out, higher_is_better=False
    )

    bm25_in, bm25_out = retriever.bm25(texts_in), retriever.bm25(texts_out)
    top_in, s_in = _candidates(bm25_in.ranking, bm25_in.score, keep)
    _, s_out = _candidates(bm25_out.ranking, bm25_out.score, keep)
    out["BM25 score"] = ScoreSweep(
        "BM25 score", s_in, np.take_along_axis(hits, top_in, axis=1), s_out, higher_is_better=True
    )

    if reranker is not None:

        def reranked(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
            base = retriever.hybrid(texts)
            tops, scores = [], []
            for i, text in enumerate(texts):
                head = base.ranking[i, :depth]
                s = np.asarray(reranker.score(text, [retriever.texts[j] for j in head]), dtype=float)
                order = np.argsort(-s, kind="stable")[:keep]
                tops.append(head[order])
                scores.append(s[order])
            return np.vstack(tops), np.vstack(scores)

        top_in, r_in = reranked(texts_in)
        _, r_out = reranked(texts_out)
        name = f"{reranker.name} score"
        out[name] = ScoreSweep(name, r_in, np.take_along_axis(hits, top_in, axis=1), r_out, higher_is_better=True)
    return out
