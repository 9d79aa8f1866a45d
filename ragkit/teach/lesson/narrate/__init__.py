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
from ragkit.teach.lesson.narrate.citations import (
    changed_prompt,
    chapter_identifiers,
    citations_verified,
    four_or_twenty,
    gate_calls,
    gate_reply,
    generated_markers,
    generator_halves,
    identifier_checks,
    invented_ids,
    lost_in_the_middle,
    no_generator,
    prompt_flaws,
    prompt_length,
    prompt_rates,
    quote_or_text,
    retrieval_bill,
    shifted_range,
    small_model,
    supported_rule,
    two_halves,
    two_locators,
    unknown_markers,
    what_figures_say,
    written_ranges,
)
from ragkit.teach.lesson.narrate.dense_retrieval import *
from ragkit.teach.lesson.narrate.distances import *
from ragkit.teach.lesson.narrate.exercises import *
from ragkit.teach.lesson.narrate.phrasing import *
from ragkit.teach.lesson.narrate.production import *
from ragkit.teach.lesson.narrate.reranking import *
from ragkit.teach.lesson.narrate.start_here import *
from ragkit.teach.lesson.narrate.statistics_further import *
from ragkit.teach.lesson.narrate.thresholds import *
from ragkit.teach.lesson.narrate.tuning import *

# citations lists no __all__ of its own yet: its narrators are named here with the modules
__all__ = [
    "approximate",
    "bm25_and_hybrid",
    "changed_prompt",
    "chapter_identifiers",
    "chunking",
    "citations",
    "citations_verified",
    "dense_retrieval",
    "distances",
    "exercises",
    "four_or_twenty",
    "gate_calls",
    "gate_reply",
    "generated_markers",
    "generator_halves",
    "identifier_checks",
    "invented_ids",
    "lost_in_the_middle",
    "no_generator",
    "phrasing",
    "production",
    "prompt_flaws",
    "prompt_length",
    "prompt_rates",
    "quote_or_text",
    "reranking",
    "retrieval_bill",
    "shifted_range",
    "small_model",
    "start_here",
    "statistics_further",
    "supported_rule",
    "thresholds",
    "tuning",
    "two_halves",
    "two_locators",
    "unknown_markers",
    "what_figures_say",
    "written_ranges",
]
