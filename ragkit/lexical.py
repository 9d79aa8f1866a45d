"""BM25: exact strings that dense retrieval cannot see, scored as sparse-matrix algebra.

For query term t and chunk d: ``idf(t) * f * (k1 + 1) / (f + k1 * (1 - b + b * |d| / avgdl))``,
with ``idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))`` and tokens the case-folded runs of letters
and digits of any script (NFKC-normalised, a letter's combining marks kept with it: *geëvalueerd* is one
token, as is *हिन्दी*). A query term repeated in the query counts each time.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np
from scipy import sparse

__all__ = ["BM25", "K1", "B", "tokenize"]

K1 = 1.2
"""BM25's term-frequency saturation, the chapter's (and Lucene's) default."""
B = 0.75
"""BM25's length normalisation, the chapter's (and Lucene's) default: 0 ignores a chunk's length, 1 divides it out."""
_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Case-folded runs of letters and digits of any script, with their combining marks (NFKC-normalised)."""
    if text.isascii():
        return _TOKEN.findall(text.lower())  # the fast path, and for ASCII the same tokens as below
    folded = unicodedata.normalize("NFKC", text).casefold()
    tokens: list[str] = []
    word: list[str] = []
    for ch in folded:
        kind = unicodedata.category(ch)[0]
        if kind in "LN" or (kind == "M" and word):
            word.append(ch)
        elif word:
            tokens.append("".join(word))
            word = []
    if word:
        tokens.append("".join(word))
    return tokens


class BM25:
    """Okapi BM25 over a fixed list of texts; scores for one query or many at once."""

    def __init__(self, texts: Sequence[str], k1: float = K1, b: float = B):
        self.k1, self.b = k1, b
        docs = [tokenize(t) for t in texts]
        self.vocabulary: dict[str, int] = {}
        rows, cols = [], []
        for i, tokens in enumerate(docs):
            for tok in tokens:
                cols.append(self.vocabulary.setdefault(tok, len(self.vocabulary)))
                rows.append(i)
        n_docs = len(docs)
        tf = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_docs, len(self.vocabulary)))
        tf.sum_duplicates()
        lengths = np.array([len(t) for t in docs], dtype=np.float64)
        avgdl = lengths.mean() if n_docs and lengths.mean() > 0 else 1.0
        df = np.bincount(tf.indices, minlength=len(self.vocabulary))
        self.idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        norm = k1 * (1 - b + b * lengths / avgdl)
        f = tf.data
        row_of = np.repeat(np.arange(n_docs), np.diff(tf.indptr))
        weights = self.idf[tf.indices] * f * (k1 + 1) / (f + norm[row_of])
        # term x chunk, so that a query's scores are one sparse row times this matrix
        self.weights = sparse.csr_matrix((weights, tf.indices, tf.indptr), shape=tf.shape).T.tocsr()
        self.n_docs = n_docs

    def _query_matrix(self, queries: Sequence[str]) -> sparse.csr_matrix:
        rows, cols = [], []
        for i, q in enumerate(queries):
            for tok in tokenize(q):
                if (j := self.vocabulary.get(tok)) is not None:
                    rows.append(i)
                    cols.append(j)
        return sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(queries), len(self.vocabulary)))

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for one query (zeros when no query term is known)."""
        w = self.weights
        rows = [(w.indptr[t], w.indptr[t + 1]) for t in map(self.vocabulary.get, tokenize(query)) if t is not None]
        if not rows:
            return np.zeros(self.n_docs)
        # the query terms' rows of the term x chunk matrix, added per chunk in one pass, in the query's order
        chunks = np.concatenate([w.indices[lo:hi] for lo, hi in rows])
        weights = np.concatenate([w.data[lo:hi] for lo, hi in rows])
        return np.bincount(chunks, weights=weights, minlength=self.n_docs)

    def scores_many(self, queries: Sequence[str]) -> np.ndarray:
        """Scores for many queries at once: shape (len(queries), number of chunks)."""
        return np.asarray((self._query_matrix(queries) @ self.weights).todense())
