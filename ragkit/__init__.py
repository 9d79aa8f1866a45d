"""ragkit: the engine behind the companion notebooks to "RAG in production".

The chapter's pipeline in the order it teaches it: a corpus, its chunks, the ground truth, embeddings and BM25,
fusion and reranking, the evaluation and its statistics, distances, the threshold's gate, citations and answers.
Each name below lives in the module named after its idea (``ragkit.chunking``, ``ragkit.threshold``, ...); these are
the entry points a notebook or a script imports. ``answer()`` and ``report()`` share their modules' names, so they
are imported from ``ragkit.answer`` and ``ragkit.report``; the classroom layer is ``ragkit.teach``.
"""

import ragkit.plumbing.environment  # noqa: F401 - first: another Python than .venv's gets one sentence
from ragkit.answer import Answer, NoAnswer
from ragkit.chunking import (
    OVERLAP,
    SIZE,
    STRATEGIES,
    Chunk,
    blind_window_start,
    chunk_corpus,
    chunk_document,
    pathologies,
    sections,
)
from ragkit.citations import (
    CharRange,
    Citation,
    MediaRange,
    PdfPage,
    SheetRange,
    citation_table,
    render_links,
    text_fragment,
    verify,
)
from ragkit.corpus import Corpus, Document, FailedDocument, corpus_stats, load_corpus
from ragkit.data import (
    OutOfDomain,
    Question,
    load_out_of_domain,
    load_questions,
    queries,
    shared_needle_words,
    validate,
)
from ragkit.distances import identity_check, max_identity_gap
from ragkit.embedding import Embedder, default_embedder
from ragkit.errors import DataError, IndexBusy, InputError, ModelUnavailable, RagkitError, StaleIndex
from ragkit.evaluation import METRICS, Evaluation, Result, evaluate, needle_hits, needle_windows, saved_by_overlap
from ragkit.fusion import RRF_K, rrf, rrf_many
from ragkit.generation import available_generator
from ragkit.lexical import BM25, tokenize
from ragkit.plumbing.models import GENERATOR, RERANKER
from ragkit.report import Report
from ragkit.rerank import LateInteractionReranker, available_reranker
from ragkit.retrieval import RERANK_DEPTH, RETRIEVERS, Retriever, Run
from ragkit.statistics import counts_test, holm, needle_sign_test, sign_test, verdict, wilson
from ragkit.threshold import DEFAULT_CUT, KEEP, STRICT_CUT, Sweep, default_cuts, gate, sweep
from ragkit.tokens import TruncationWarning, count_pieces, token_report
from ragkit.words import STOPWORDS, content_words, copied_share

__version__ = "0.1.0"

__all__ = [
    "BM25",
    "DEFAULT_CUT",
    "GENERATOR",
    "KEEP",
    "METRICS",
    "OVERLAP",
    "RERANKER",
    "RERANK_DEPTH",
    "RETRIEVERS",
    "RRF_K",
    "SIZE",
    "STOPWORDS",
    "STRATEGIES",
    "STRICT_CUT",
    "Answer",
    "CharRange",
    "Chunk",
    "Citation",
    "Corpus",
    "DataError",
    "Document",
    "Embedder",
    "Evaluation",
    "FailedDocument",
    "IndexBusy",
    "InputError",
    "LateInteractionReranker",
    "MediaRange",
    "ModelUnavailable",
    "NoAnswer",
    "OutOfDomain",
    "PdfPage",
    "Question",
    "RagkitError",
    "Report",
    "Result",
    "Retriever",
    "Run",
    "SheetRange",
    "StaleIndex",
    "Sweep",
    "TruncationWarning",
    "available_generator",
    "available_reranker",
    "blind_window_start",
    "chunk_corpus",
    "chunk_document",
    "citation_table",
    "content_words",
    "copied_share",
    "corpus_stats",
    "count_pieces",
    "counts_test",
    "default_cuts",
    "default_embedder",
    "evaluate",
    "gate",
    "holm",
    "identity_check",
    "load_corpus",
    "load_out_of_domain",
    "load_questions",
    "max_identity_gap",
    "needle_hits",
    "needle_sign_test",
    "needle_windows",
    "pathologies",
    "queries",
    "render_links",
    "rrf",
    "rrf_many",
    "saved_by_overlap",
    "sections",
    "shared_needle_words",
    "sign_test",
    "sweep",
    "text_fragment",
    "token_report",
    "tokenize",
    "validate",
    "verdict",
    "verify",
    "wilson",
]
