"""ragkit: the engine behind the companion notebooks to "RAG in production".

The chapter's pipeline in the order it teaches it: a corpus, its chunks, the ground truth, embeddings and BM25,
fusion and reranking, the evaluation and its statistics, distances, the threshold's gate, citations and answers.
Each name below lives in the module named after its idea (``ragkit.chunking``, ``ragkit.threshold``, ...); these are
the entry points the notebooks and the documented commands import (anything else: from its module). ``answer()`` and
``report()`` share their modules' names, so they are imported from ``ragkit.answer`` and ``ragkit.report``; the
classroom layer is ``ragkit.teach``.
"""

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

import ragkit.plumbing.environment  # noqa: F401 - first: another Python than .venv's gets one sentence

if TYPE_CHECKING:  # what a type checker and an editor see; at run time each name is imported when first used
    from ragkit.answer import NoAnswer
    from ragkit.chunking import OVERLAP, SIZE, STRATEGIES, blind_window_start, chunk_corpus, pathologies, sections
    from ragkit.citations import CharRange, MediaRange, PdfPage, SheetRange, citation_table, render_links, verify
    from ragkit.corpus import corpus_stats, load_corpus
    from ragkit.data import shared_needle_words, validate
    from ragkit.distances import identity_check, max_identity_gap
    from ragkit.embedding import default_embedder
    from ragkit.errors import IndexBusy, StaleIndex
    from ragkit.evaluation import METRICS, Result, needle_hits, needle_windows, saved_by_overlap
    from ragkit.fusion import RRF_K
    from ragkit.lexical import tokenize
    from ragkit.plumbing.models import GENERATOR, RERANKER
    from ragkit.rerank import LateInteractionReranker, available_reranker
    from ragkit.retrieval import RERANK_DEPTH
    from ragkit.statistics import holm, sign_test, verdict, wilson
    from ragkit.threshold import DEFAULT_CUT, KEEP, STRICT_CUT, default_cuts, gate
    from ragkit.tokens import TruncationWarning, count_pieces, token_report
    from ragkit.words import STOPWORDS, content_words, copied_share

_HOME = {
    "ragkit.answer": ("NoAnswer",),
    "ragkit.chunking": (
        "OVERLAP",
        "SIZE",
        "STRATEGIES",
        "blind_window_start",
        "chunk_corpus",
        "pathologies",
        "sections",
    ),
    "ragkit.citations": (
        "CharRange",
        "MediaRange",
        "PdfPage",
        "SheetRange",
        "citation_table",
        "render_links",
        "verify",
    ),
    "ragkit.corpus": ("corpus_stats", "load_corpus"),
    "ragkit.data": ("shared_needle_words", "validate"),
    "ragkit.distances": ("identity_check", "max_identity_gap"),
    "ragkit.embedding": ("default_embedder",),
    "ragkit.errors": ("IndexBusy", "StaleIndex"),
    "ragkit.evaluation": ("METRICS", "Result", "needle_hits", "needle_windows", "saved_by_overlap"),
    "ragkit.fusion": ("RRF_K",),
    "ragkit.lexical": ("tokenize",),
    "ragkit.plumbing.models": ("GENERATOR", "RERANKER"),
    "ragkit.rerank": ("LateInteractionReranker", "available_reranker"),
    "ragkit.retrieval": ("RERANK_DEPTH",),
    "ragkit.statistics": ("holm", "sign_test", "verdict", "wilson"),
    "ragkit.threshold": ("DEFAULT_CUT", "KEEP", "STRICT_CUT", "default_cuts", "gate"),
    "ragkit.tokens": ("TruncationWarning", "count_pieces", "token_report"),
    "ragkit.words": ("STOPWORDS", "content_words", "copied_share"),
}
"""Where each public name lives: ``import ragkit`` (and so every ``ragkit.x`` module's import) loads none of them until
one is used, so a process that needs one module (the grader's sandbox child) does not pay for the whole engine."""

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_CUT",
    "GENERATOR",
    "KEEP",
    "METRICS",
    "OVERLAP",
    "RERANKER",
    "RERANK_DEPTH",
    "RRF_K",
    "SIZE",
    "STOPWORDS",
    "STRATEGIES",
    "STRICT_CUT",
    "CharRange",
    "IndexBusy",
    "LateInteractionReranker",
    "MediaRange",
    "NoAnswer",
    "PdfPage",
    "Result",
    "SheetRange",
    "StaleIndex",
    "TruncationWarning",
    "available_reranker",
    "blind_window_start",
    "chunk_corpus",
    "citation_table",
    "content_words",
    "copied_share",
    "corpus_stats",
    "count_pieces",
    "default_cuts",
    "default_embedder",
    "gate",
    "holm",
    "identity_check",
    "load_corpus",
    "max_identity_gap",
    "needle_hits",
    "needle_windows",
    "pathologies",
    "render_links",
    "saved_by_overlap",
    "sections",
    "shared_needle_words",
    "sign_test",
    "token_report",
    "tokenize",
    "validate",
    "verdict",
    "verify",
    "wilson",
]


if not TYPE_CHECKING:  # a type checker sees the names above, so that a misspelt one is an error there

    def __getattr__(name: str) -> Any:
        """A public name, or a module of the engine, imported on first use (PEP 562)."""
        module = next((m for m, names in _HOME.items() if name in names), None)
        if module is not None:
            value = getattr(importlib.import_module(module), name)
        elif not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
            value = importlib.import_module(f"{__name__}.{name}")
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
