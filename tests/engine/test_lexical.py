"""BM25 equals the chapter's formula: by hand, against rank_bm25 (with that idf) and bm25s (lucene)."""

import math
import re

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


def test_tokens_are_case_folded_runs_of_letters_and_digits_of_any_script():
    assert tokenize("KV-cache: E1234, naïve") == ["kv", "cache", "e1234", "naïve"]
    assert tokenize("Het model wordt geëvalueerd op ÉÉN set") == [
        "het",
        "model",
        "wordt",
        "geëvalueerd",
        "op",
        "één",
        "set",
    ]
    assert tokenize("हिन्दी Straße ① snake_case") == ["हिन्दी", "strasse", "1", "snake", "case"]  # marks stay
    # NFKC: a decomposed e + diaeresis is the same token as the composed letter
    assert tokenize("gee\u0308valueerd") == tokenize("geëvalueerd")


@pytest.mark.parametrize("text", ["KV-cache: E1234", "a_b c--d 42x", "  ", "How do I STREAM tokens?", "x\ty\nz"])
def test_ascii_text_gives_the_tokens_it_always_gave(text):
    assert tokenize(text) == re.findall(r"[a-z0-9]+", text.lower())


def test_bm25_finds_a_dutch_word_whole():
    texts = [
        "Het model wordt geëvalueerd op recall en MRR.",
        "De generatie valueert geen bronnen.",
        "Ge kunt de index opnieuw bouwen.",
    ]
    bm = BM25(texts)
    assert "geëvalueerd" in bm.vocabulary and "valueerd" not in bm.vocabulary
    scores = bm.scores("Hoe wordt het model geëvalueerd?")
    assert scores.argmax() == 0 and scores[2] == 0  # "ge" of the third text no longer matches half a word


@pytest.mark.slow
def test_the_course_ranks_every_needle_where_the_ascii_tokenizer_did(monkeypatch):
    """The chapter's parity on the English corpus: a handful of chunks hold accented or non-Latin words, and no
    needle's rank in any BM25 or hybrid run moves."""
    import ragkit.lexical
    import ragkit.teach.course
    from ragkit.evaluation import evaluate

    course = ragkit.teach.course.load(progress=False)
    now = evaluate(course.corpus, course.questions, "ABCDEF", retriever_for=course.retriever)
    monkeypatch.setattr(ragkit.lexical, "tokenize", lambda t: re.findall(r"[a-z0-9]+", t.lower()))
    before = evaluate(course.corpus, course.questions, "ABCDEF", retriever_for=course.retriever)
    assert [k for k in now.results if "bm25" in k or "hybrid" in k]
    for key, result in now.results.items():
        assert list(result.ranks) == list(before.results[key].ranks), key


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
