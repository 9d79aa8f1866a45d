"""Reciprocal rank fusion: ranks not scores, k = 60, ties in first-seen order."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ragkit.fusion import rrf, rrf_many


def test_rrf_by_hand():
    fused = rrf([[1, 2, 3], [3, 1, 4]])
    # 1: 1/61 + 1/62; 3: 1/63 + 1/61; 2: 1/62; 4: 1/63
    assert fused.tolist() == [1, 3, 2, 4]


def test_ties_keep_first_seen_order():
    assert rrf([[7, 8], [8, 7]]).tolist() == [7, 8]
    assert rrf([[8, 7], [7, 8]]).tolist() == [8, 7]
    assert rrf([[5], [6]]).tolist() == [5, 6]


def test_k_changes_the_weights():
    # X = 0 is ranked 1st and 10th, Y = 9 is 5th twice: a small k lets the top rank dominate
    lists = [[0, 1, 2, 3, 9, 4, 5, 6, 7, 8], [1, 2, 3, 4, 9, 5, 6, 7, 8, 0]]

    def before(fused):
        return fused.tolist().index(0) < fused.tolist().index(9)

    assert before(rrf(lists, k=0))
    assert not before(rrf(lists, k=60))


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 40), st.integers(1, 5), st.randoms(use_true_random=False))
def test_vectorised_equals_row_by_row(n, q, rnd):
    first = np.array([rnd.sample(range(n), n) for _ in range(q)])
    second = np.array([rnd.sample(range(n), n) for _ in range(q)])
    fused = rrf_many(first, second)
    # a retriever's matches lead its ranking (BM25: every positive score ranks above every zero)
    matched = np.zeros((q, n), dtype=bool)
    for i in range(q):
        matched[i, second[i, : rnd.randint(0, n)]] = True
    partial = rrf_many(first, second, matched=matched)
    for i in range(q):
        assert fused[i].tolist() == rrf([first[i], second[i]]).tolist()
        found = [item for item in second[i] if matched[i, item]]
        assert partial[i].tolist() == rrf([first[i], found]).tolist()


class _FixedEmbedder:
    """Vectors from a lookup table: dense ranking is known in advance, no model needed."""

    def __init__(self, table):
        self.table = table

    def encode(self, texts, progress=False):
        vectors = np.array([self.table[t] for t in texts], dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_hybrid_ignores_zero_score_bm25():
    from ragkit.chunking import Chunk
    from ragkit.retrieval import Retriever

    contents = ["alpha beta", "gamma delta", "epsilon zeta", "eta theta", "iota kappa", "lambda mu"]
    chunks = [Chunk("d", "D", "", 10 * i, 10 * i + len(t), t) for i, t in enumerate(contents)]
    query = "nothing shared here"
    # dense prefers the LAST chunks; BM25 scores every chunk zero, so its ranking is plain corpus order
    table = {t: [1.0, float(i)] for i, t in enumerate(contents)} | {query: [0.0, 1.0], "gamma nothing": [0.0, 1.0]}
    r = Retriever(chunks, _FixedEmbedder(table), progress=False)
    assert not r.lexical.scores(query).any()
    dense, hybrid = r.dense([query]), r.hybrid([query])
    assert hybrid.ranking[0].tolist() == dense.ranking[0].tolist()
    # a shared term still counts: the one chunk holding "gamma" is lifted above its dense rank
    both = r.hybrid(["gamma nothing"])
    assert both.ranking[0].tolist().index(1) < r.dense(["gamma nothing"]).ranking[0].tolist().index(1)


def _lead(k: int, both_at: int) -> str:
    """Who wins: chunk 0 at rank 1 in the first list only, or chunk 1 at rank ``both_at`` in both lists."""
    filler = list(range(2, 200))
    first = [0] + filler[: both_at - 2] + [1] + filler[both_at - 2 :]
    second = filler[: both_at - 1] + [1] + filler[both_at - 1 :] + [0]  # 0 last, unmatched: the second list lacks it
    matched = np.arange(200) != 0
    fused = rrf_many(np.array([first]), np.array([second]), k=k, matched=matched[None, :]).tolist()[0]
    return "alone" if fused.index(0) < fused.index(1) else "both"


def test_the_guides_k_equals_one_arithmetic():
    # the teacher's guide, 03's third try-this: k = 1, rank 2 in both (2/3) beats rank 1 alone (1/2), rank 4 in both
    # (2/5) does not; k = 60, any rank up to 61 in both (2/121 > 1/61) beats it, rank 62 (2/122 = 1/61) ties and
    # loses on first-seen order
    assert _lead(1, 2) == "both" and _lead(1, 4) == "alone"
    assert _lead(60, 61) == "both" and _lead(60, 62) == "alone"
