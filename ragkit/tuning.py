"""Tuning judged honestly: a setting is chosen on one half of the needles and judged on the other.

A setting tuned on the very queries that judge it flatters itself: the best of many values on one set of
queries is partly the best luck. So the needles are split in two with a fixed seed (both phrasings of a needle
on the same side), every value is scored on both halves, the value that wins the tuning half is chosen, and only
the held-out half judges it against the default, needle by needle. Several settings tuned at once are several
looks, so their held-out comparisons take Holm together (``evaluation.with_holm``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Mapping, Sequence

import numpy as np

from ragkit.errors import InputError
from ragkit.evaluation import Comparison, Result, compare, first_hit_ranks, query_hits, relevant_ranks
from ragkit.fusion import K, rrf_many
from ragkit.lexical import BM25
from ragkit.retrieval import Retriever, rank

SEED = 11
"""The seed of every held-out split in the course (exercise 2's too)."""


def halves(needle_ids: Sequence[str], seed: int = SEED) -> tuple[frozenset[str], frozenset[str]]:
    """The needles split in two with a fixed seed, by needle: (tuning half, held-out half)."""
    needles = sorted(set(needle_ids))
    if len(needles) < 2:
        raise InputError(f"{len(needles)} needle(s): a held-out half needs at least two needles to split")
    order = np.random.default_rng(seed).permutation(needles)
    cut = len(needles) // 2
    return frozenset(order[:cut].tolist()), frozenset(order[cut:].tolist())


@dataclass(frozen=True)
class Trial:
    """One value of a setting: its metric on the tuning half and on the held-out half."""

    value: Hashable
    tune: float
    held: float


@dataclass(frozen=True)
class Tuning:
    """One setting swept: every value on both halves, the value the tuning half chose, and its held-out judgment."""

    parameter: str
    metric: str
    default: Hashable
    trials: tuple[Trial, ...]
    chosen: Hashable
    held_best: Hashable
    judged: Comparison
    """The chosen value against the default on the held-out half, needle by needle."""

    @property
    def flattered(self) -> bool:
        """Whether the held-out half would have chosen another value: the tuning half's win did not carry over."""
        return self.chosen != self.held_best


def _half_mean(result: Result, metric: str, needles: frozenset[str]) -> float:
    values = result.per_query(metric)
    mask = np.isin(np.array(result.needle_ids), list(needles))
    return float(values[mask].mean())


def tune(parameter: str, results: Mapping[Hashable, Result], default: Hashable, metric: str = "MRR",
         seed: int = SEED) -> Tuning:
    """Choose a value of ``parameter`` on the tuning half and judge it on the held-out half against ``default``.

    ``results`` holds one evaluation per value, all on the same queries. Ties on the tuning half go to the default,
    then to the value listed first: a change must earn its place.
    """
    if default not in results:
        raise InputError(f"the default {default!r} of {parameter} is not among the values swept: sweep it too")
    runs = list(results.values())
    if any(r.query_ids != runs[0].query_ids or r.needle_ids != runs[0].needle_ids for r in runs):
        raise InputError(f"the runs of {parameter} answer different queries: evaluate every value on the same ones")
    tune_half, held_half = halves(runs[0].needle_ids, seed)
    trials = tuple(Trial(v, _half_mean(r, metric, tune_half), _half_mean(r, metric, held_half))
                   for v, r in results.items())
    order = sorted(trials, key=lambda t: (-t.tune, t.value != default))
    held_order = sorted(trials, key=lambda t: (-t.held, t.value != default))
    chosen = order[0].value
    judged = compare(results[chosen], results[default], metric, "needle", drop=tune_half)
    return Tuning(parameter, metric, default, trials, chosen, held_order[0].value, judged)


def _results(retriever: Retriever, questions: Sequence, queries: Sequence,
             rankings: Mapping[Hashable, tuple[str, np.ndarray]]) -> dict[Hashable, Result]:
    """Each named ranking of the queries as an evaluation (first hits and every relevant chunk), keyed as given."""
    hits = query_hits(retriever.chunks, questions, queries)
    ids, needles = tuple(q.id for q in queries), tuple(q.qid for q in queries)
    return {key: Result(retriever.strategy, name, first_hit_ranks(ranking, hits), ids, needles,
                        relevant_ranks(ranking, hits)) for key, (name, ranking) in rankings.items()}


def bm25_results(retriever: Retriever, questions: Sequence, queries: Sequence, k1s: Sequence[float] = (1.2,),
                 bs: Sequence[float] = (0.75,)) -> dict[Hashable, Result]:
    """BM25 over the retriever's chunks for every (k1, b), each as an evaluation of the same queries."""
    bad = [(k1, b) for k1 in k1s for b in bs if k1 < 0 or not 0 <= b <= 1]
    if bad:
        raise InputError(f"k1 = {bad[0][0]}, b = {bad[0][1]}: BM25 takes k1 of 0 or more and b between 0 and 1")
    texts = [q.text for q in queries]
    return _results(retriever, questions, queries, {
        (k1, b): (f"bm25 k1={k1:g} b={b:g}", rank(BM25(retriever.texts, k1=k1, b=b).scores_many(texts)))
        for k1 in k1s for b in bs})


def rrf_results(retriever: Retriever, questions: Sequence, queries: Sequence,
                ks: Sequence[int] = (K,)) -> dict[Hashable, Result]:
    """Hybrid search fused with every RRF constant k, each as an evaluation of the same queries."""
    if any(k < 0 for k in ks):
        raise InputError(f"k = {min(ks)}: reciprocal rank fusion takes a constant of 0 or more")
    texts = [q.text for q in queries]
    dense, lexical = retriever.dense(texts), retriever.bm25(texts)
    return _results(retriever, questions, queries, {
        k: (f"hybrid k={k}", rrf_many(dense.ranking, lexical.ranking, k=k, matched=lexical.matched)) for k in ks})
