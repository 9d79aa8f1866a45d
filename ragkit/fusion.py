"""Reciprocal rank fusion: combine rankings by rank, never by score (distances and BM25 are not on one scale)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragkit.errors import InputError

__all__ = ["RRF_K", "rrf", "rrf_many"]

RRF_K = 60
"""The RRF constant k: each ranking adds 1 / (k + rank), so at 60 a first place outweighs a tenth only a little."""


def rrf(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> np.ndarray:
    """Fuse rankings (ids best first): each adds 1 / (k + rank), rank from 1; ties keep first-seen order."""
    score: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, 1):
            score[int(item)] = score.get(int(item), 0.0) + 1.0 / (k + rank)
    order = list(score)  # insertion order is first-seen order; sorted() is stable
    return np.array(sorted(order, key=lambda item: -score[item]), dtype=np.int64)


def rrf_many(
    first: np.ndarray, second: np.ndarray, k: int = RRF_K, matched: np.ndarray | None = None, weight: float = 0.5
) -> np.ndarray:
    """RRF of two full rankings per query (rows are queries), vectorised; same result as ``rrf`` row by row.

    ``matched`` (bool, queries x items) says which items the second retriever actually found;
    they lead its ranking; the rest sit there only to make it a permutation and earn no credit (a BM25 chunk
    that shares no term with the query scores zero: its rank is corpus order, not relevance). ``weight`` is the first
    list's share of the credit and ``1 - weight`` the second's: at 0.5 (every sum halved) it ranks as plain RRF.
    """
    if not 0 <= weight <= 1:
        raise InputError(f"weight = {weight}: a weight of the first list lies between 0 and 1")
    n_queries, n_items = first.shape
    ranks = np.arange(1, n_items + 1, dtype=np.float64)
    score = np.zeros((n_queries, n_items))
    rows = np.arange(n_queries)[:, None]
    score[rows, first] += weight * (1.0 / (k + ranks))
    credit = np.broadcast_to((1 - weight) * (1.0 / (k + ranks)), second.shape)
    if matched is not None:
        credit = np.where(np.take_along_axis(matched, second, axis=1), credit, 0.0)
    score[rows, second] += credit
    # first-seen order of a full ranking pair is the first ranking's order
    seen = np.empty_like(first)
    seen[rows, first] = np.arange(n_items)
    return np.lexsort((seen, -score), axis=1)
