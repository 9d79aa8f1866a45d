"""Narration, a module per notebook: the sentences a notebook writes from its results, so a cell of prose is one call.

Each narrator takes the result objects a cell has computed and returns the Markdown the notebook displays; the
figures in it are always the computation's (the corpus can change, the prose must not lie). Each module lists its
narrators in ``__all__`` and the package imports them all, so a notebook writes ``narrate.near_miss(...)``; a
narrator's name is unique across the modules (tests/teach/lesson/test_narration.py holds that).
"""

from ragkit.teach.lesson.narrate import (
    approximate,
    bm25_and_hybrid,
    chunking,
    citations,
    dense_retrieval,
    distances,
    exercises,
    generation,
    phrasing,
    production,
    reranking,
    start_here,
    statistics_further,
    thresholds,
    tuning,
)
from ragkit.teach.lesson.narrate.approximate import *
from ragkit.teach.lesson.narrate.bm25_and_hybrid import *
from ragkit.teach.lesson.narrate.chunking import *
from ragkit.teach.lesson.narrate.citations import *
from ragkit.teach.lesson.narrate.dense_retrieval import *
from ragkit.teach.lesson.narrate.distances import *
from ragkit.teach.lesson.narrate.exercises import *
from ragkit.teach.lesson.narrate.generation import *
from ragkit.teach.lesson.narrate.phrasing import *
from ragkit.teach.lesson.narrate.production import *
from ragkit.teach.lesson.narrate.reranking import *
from ragkit.teach.lesson.narrate.start_here import *
from ragkit.teach.lesson.narrate.statistics_further import *
from ragkit.teach.lesson.narrate.thresholds import *
from ragkit.teach.lesson.narrate.tuning import *

__all__ = [
    "approximate",
    "bm25_and_hybrid",
    "chunking",
    "citations",
    "dense_retrieval",
    "distances",
    "exercises",
    "generation",
    "phrasing",
    "production",
    "reranking",
    "start_here",
    "statistics_further",
    "thresholds",
    "tuning",
]


def __getattr__(name: str) -> object:
    """A narrator an older copy of a notebook calls by the name it had before (``ragkit.teach.moved``)."""
    from ragkit.teach.moved import moved_name

    return moved_name(__name__, name)
