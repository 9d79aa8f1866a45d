"""What notebook 08b-approximate-search says from its measurements: one narrator per cell of computed prose."""

from __future__ import annotations

from IPython.display import Markdown

from ragkit.approximate import EF_SEARCH, TradeOff
from ragkit.teach.course import chapter
from ragkit.teach.language import _, say
from ragkit.teach.lesson.formats import noun

__all__ = [
    "DEFAULT_EF",
    "WANTED_RECALL",
    "build_and_memory",
    "close_calls",
    "large_collection",
    "small_collection",
    "when_exact",
]

DEFAULT_EF = EF_SEARCH[0]
"""faiss's default efSearch, the first measured: the notebook's prediction asks about it."""
WANTED_RECALL = 0.95
"""The recall the prose asks HNSW to reach: the share of the exact top k a tuned production index usually keeps."""


def small_collection(t: TradeOff) -> Markdown:
    """At the course's size: the exact scan's time, what the graph finds at the default, and what it could save."""
    s = t.at(DEFAULT_EF)
    full = next((x for x in t.settings if x.recall >= 1.0), None)
    saved = max(0.0, t.exact_ms - s.ms)
    found = (
        say("It finds all of them from efSearch **{ef}** on (**{ms:.3f} ms**).", ef=full.ef_search, ms=full.ms)
        if full
        else say("It misses some of them at every efSearch measured, up to **{ef}**.", ef=t.settings[-1].ef_search)
    )
    return Markdown(
        say(
            "Over the course's **{vectors:,}** chunks the exact scan takes **{exact:.3f} ms** per query and is exact "
            "by construction. HNSW at faiss's default efSearch **{ef}** takes **{ms:.3f} ms** and finds "
            "**{recall:.1%}** of the exact top {k}. {found} The most the graph can save here is **{saved:.3f} ms** a "
            "query, **{share:.2%}** of the **{query_ms} ms** the chapter spends embedding the query.",
            vectors=t.vectors,
            exact=t.exact_ms,
            ef=s.ef_search,
            ms=s.ms,
            recall=s.recall,
            k=t.k,
            found=found,
            saved=saved,
            share=saved / chapter.QUERY_MS,
            query_ms=chapter.QUERY_MS,
        )
    )


def large_collection(t: TradeOff) -> Markdown:
    """At the generated size: the exact scan's time, the default's speed and recall, and the cost of 95%."""
    s = t.at(DEFAULT_EF)
    wanted = t.cheapest(WANTED_RECALL)
    if wanted is None:
        last = t.settings[-1]
        reach = say(
            "None of the efSearch values measured reaches **{wanted:.0%}**: the widest, **{ef}**, finds "
            "**{recall:.1%}** in **{ms:.3f} ms**, **{times:.1f}** times the exact scan's speed.",
            wanted=WANTED_RECALL,
            ef=last.ef_search,
            recall=last.recall,
            ms=last.ms,
            times=t.exact_ms / last.ms,
        )
    elif wanted.ef_search == s.ef_search:
        reach = say("The default already reaches **{wanted:.0%}** here.", wanted=WANTED_RECALL)
    else:
        reach = say(
            "To find **{wanted:.0%}** it needs efSearch **{ef}**: **{recall:.1%}** in **{ms:.3f} ms**, still "
            "**{times:.1f}** times the exact scan's speed.",
            wanted=WANTED_RECALL,
            ef=wanted.ef_search,
            recall=wanted.recall,
            ms=wanted.ms,
            times=t.exact_ms / wanted.ms,
        )
    return Markdown(
        say(
            "Over **{vectors:,}** generated vectors the exact scan takes **{exact:.1f} ms** per query on one thread. "
            "HNSW at efSearch **{ef}** takes **{ms:.3f} ms**, **{times:.0f}** times faster, and finds **{recall:.1%}** "
            "of the exact top {k}. {reach}",
            vectors=t.vectors,
            exact=t.exact_ms,
            ef=s.ef_search,
            ms=s.ms,
            times=t.exact_ms / s.ms,
            recall=s.recall,
            k=t.k,
            reach=reach,
        )
    )


def close_calls(small: TradeOff, large: TradeOff) -> Markdown:
    """How near a query's k-th neighbour is to its first in both collections: margins a graph walk must get right."""
    narrower = large.nearest - large.kth < small.nearest - small.kth
    ef = large.settings[0].ef_search
    small_recall, large_recall = small.at(ef).recall, large.at(ef).recall
    recall = (
        say(
            "at efSearch {ef} the graph finds less of the larger collection's top {k}: **{large:.1%}** against "
            "**{small:.1%}**.",
            ef=ef,
            k=large.k,
            large=large_recall,
            small=small_recall,
        )
        if large_recall < small_recall
        else say(
            "yet at efSearch {ef} the graph finds as much of the larger collection's top {k} or more: "
            "**{large:.1%}** against **{small:.1%}**.",
            ef=ef,
            k=large.k,
            large=large_recall,
            small=small_recall,
        )
    )
    then = (
        say(
            "The larger collection's top {k} is decided by smaller margins (its first and {k}th nearest lie closer "
            "together), the kind of difference a walk that looks at few candidates can get wrong; {recall}",
            k=large.k,
            recall=recall,
        )
        if narrower
        else say(
            "Here the larger collection's top {k} is not decided by smaller margins than the course's, so margins "
            "do not explain a difference in recall; {recall}",
            k=large.k,
            recall=recall,
        )
    )
    return Markdown(
        say(
            "The median query's nearest chunk of the course has similarity **{small_first:.3f}** and its {k}th "
            "**{small_kth:.3f}**; in the generated collection **{large_first:.3f}** and **{large_kth:.3f}**. {then}",
            k=large.k,
            small_first=small.nearest,
            small_kth=small.kth,
            large_first=large.nearest,
            large_kth=large.kth,
            then=then,
        )
    )


def build_and_memory(t: TradeOff) -> Markdown:
    """What the graph costs before the first query: its build time, and its memory beside the vectors'."""
    return Markdown(
        say(
            "Building the graph over **{vectors:,}** vectors took **{seconds:.1f} s** on **{threads}** {thread_noun}, "
            "**{rate:,.0f}** vectors a second; the exact scan needs no build, and a new vector is one more row. The "
            "index holds **{total:,.1f} MB**: **{stored:,.1f} MB** of vectors, which the exact scan needs as well, and "
            "**{graph:,.1f} MB** of links (**{per:,.0f}** bytes per vector, **{extra:.1%}** on top of the vectors).",
            vectors=t.vectors,
            seconds=t.build_seconds,
            threads=t.build_threads,
            thread_noun=noun(t.build_threads, _("thread"), _("threads")),
            rate=t.vectors / t.build_seconds,
            total=t.memory.total / 1e6,
            stored=t.memory.vectors / 1e6,
            graph=t.memory.graph / 1e6,
            per=t.memory.graph / t.vectors,
            extra=t.memory.graph / t.memory.vectors,
        )
    )


def when_exact(small: TradeOff, large: TradeOff) -> Markdown:
    """Where the exact scan stops being the right answer on this machine: its cost per million vectors at both sizes,
    and the size at which it costs as much as embedding the query."""
    small_rate = small.exact_ms / small.vectors * 1e6
    large_rate = large.exact_ms / large.vectors * 1e6
    even = chapter.QUERY_MS / large_rate * 1e6
    return Markdown(
        say(
            "On this machine the exact scan costs **{small_rate:,.0f} ms** per query for every million vectors at the "
            "course's size, and **{large_rate:,.0f} ms** per million at **{vectors:,}** vectors, where one query takes "
            "the table's **{large_ms:.3f} ms** (one thread; a small collection fits in the "
            "processor's caches, a large one is read from memory for every query). At the larger rate it costs as much "
            "as the **{query_ms} ms** the chapter spends embedding the query at about **{even:,.0f}** vectors: below "
            "that, the search is not where a query's time goes, and the exact scan is exact, needs no build, no graph "
            "and no setting to tune. The course's **{small:,}** chunks are **{times:,.0f}** times fewer than that.",
            small_rate=small_rate,
            large_rate=large_rate,
            large_ms=large.exact_ms,
            vectors=large.vectors,
            query_ms=chapter.QUERY_MS,
            even=even,
            small=small.vectors,
            times=even / small.vectors,
        )
    )
