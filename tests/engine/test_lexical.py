"""BM25 equals the chapter's formula: by hand, against rank_bm25 (with that idf) and bm25s (lucene)."""

import math

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from ragkit.chunking import chunk_corpus
from ragkit.lexical import BM25, tokenize
from ragkit.retrieval import rank

TEXTS = [
    "The Wilson interval behaves well for small samples.",
    "Cross-entropy loss; the softmax turns logits into probabilities.",
    "BM25 scores exact strings such as error code E1234 and part numbers.",
    "A paragraph about the KV cache, the KV cache and nothing else.",
    "",
]


class ChapterBM25(BM25Okapi):
    """rank_bm25 with the chapter's idf, ln(1 + (N - n + 0.5) / (n + 0.5))."""

    def _calc_idf(self, nd):
        for word, freq in nd.items():
            self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))


def by_hand(texts, query, k1=1.2, b=0.75):
    docs = [tokenize(t) for t in texts]
    n = len(docs)
    avgdl = sum(map(len, docs)) / n
    out = []
    for d in docs:
        s = 0.0
        for t in tokenize(query):
            nt = sum(t in doc for doc in docs)
            f = d.count(t)
            idf = math.log(1 + (n - nt + 0.5) / (nt + 0.5))
            s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(d) / avgdl))
        out.append(s)
    return np.array(out)


def test_tokens_are_lowercased_ascii_runs():
    assert tokenize("KV-cache: E1234, naïve") == ["kv", "cache", "e1234", "na", "ve"]


@pytest.mark.parametrize("query", ["kv cache", "KV cache cache", "error code E1234", "softmax logits wilson"])
def test_scores_equal_the_formula_by_hand(query):
    assert np.allclose(BM25(TEXTS).scores(query), by_hand(TEXTS, query), atol=1e-12, rtol=0)


def test_repeated_query_term_counts_each_time():
    bm = BM25(TEXTS)
    assert np.allclose(bm.scores("cache cache"), 2 * bm.scores("cache"))


def test_query_without_known_terms_scores_zero_and_ranks_by_chunk_order():
    scores = BM25(TEXTS).scores("paella passport")
    assert not scores.any()
    assert rank(scores).tolist() == list(range(len(TEXTS)))


def test_batched_equals_one_by_one():
    bm = BM25(TEXTS)
    queries = ["kv cache", "wilson", "nothing known", "e1234 code"]
    assert np.array_equal(bm.scores_many(queries), np.vstack([bm.scores(q) for q in queries]))


@pytest.fixture(scope="module")
def corpus_texts(corpus):
    return [c.text for c in chunk_corpus(corpus, "E")]


def test_bundled_corpus_matches_rank_bm25(corpus_texts, corpus):
    oracle = ChapterBM25([tokenize(t) for t in corpus_texts], k1=1.2, b=0.75)
    ours = BM25(corpus_texts)
    for query in ["how many test examples do I need", "kv cache memory per token", "wilson interval wilson"]:
        assert np.abs(ours.scores(query) - oracle.get_scores(tokenize(query))).max() < 1e-9


def test_bundled_corpus_matches_bm25s_lucene(corpus_texts):
    import bm25s

    oracle = bm25s.BM25(k1=1.2, b=0.75, method="lucene", dtype="float64")
    oracle.index([tokenize(t) for t in corpus_texts], show_progress=False)
    ours = BM25(corpus_texts)
    for query in ["how many test examples do i need", "kv cache memory per token"]:
        expected = oracle.get_scores(tokenize(query)) * (1.2 + 1)
        assert np.abs(ours.scores(query) - expected).max() < 1e-9
        assert np.array_equal(rank(ours.scores(query))[:20], rank(expected)[:20])
