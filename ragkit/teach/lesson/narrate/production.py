"""What notebook 08-production says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

import signal
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
from IPython.display import Markdown

from ragkit.chunking import Chunk
from ragkit.corpus import Corpus
from ragkit.data import Question
from ragkit.index import IndexEntry, IndexStatus, Stamp
from ragkit.teach.course import chapter
from ragkit.teach.language import _, say
from ragkit.teach.lesson import formats

__all__ = [
    "appended_found",
    "build_time",
    "guessed_counts",
    "index_table",
    "killed_update",
    "needle_after_extraction",
    "needle_in_hits",
    "repaired",
    "stamp_differences",
    "update_summary",
    "working_copy",
]


def working_copy(folder: Path, out: Path) -> Markdown:
    """Where the throwaway copy of the corpus and its index live."""
    return Markdown(
        say("Corpus copied to `{folder}`; the index will live in `{out}`.", folder=str(folder), out=str(out))
    )


def needle_after_extraction(q: Question, clean: str, extracted: str) -> Markdown:
    """Whether a needle survives a page header that extraction put in the middle of it."""
    return Markdown(
        say(
            "Needle of **{id}** found in the clean text: **{clean}**; after a page header lands in it: "
            "**{extracted}**.",
            id=q.id,
            clean=formats.truth(q.needle in clean),
            extracted=formats.truth(q.needle in extracted),
        )
    )


def build_time(seconds: float, built: IndexStatus) -> Markdown:
    """How long building the index took here, beside what the chapter's embedding rate would cost without a cache."""
    return Markdown(
        say(
            "Built in **{seconds:.1f} s** (vectors read from the cache). For scale, the chapter embedded "
            "**{chapter_chunks:,}** chunks in **{chapter_seconds} s**; at its **{ms_per_chunk} ms** per chunk, our "
            "**{chunks:,}** chunks would take about **{estimate:.0f} s** without a cache.",
            seconds=seconds,
            chapter_chunks=chapter.CHUNKS_E,
            chapter_seconds=chapter.INDEX_SECONDS,
            ms_per_chunk=chapter.MS_PER_CHUNK,
            chunks=built.chunks,
            estimate=built.chunks * chapter.MS_PER_CHUNK / 1000,
        )
    )


def index_table(name: str, rows: Sequence[tuple]) -> Markdown:
    """The label over one table of the index: its name and how many rows it holds."""
    return Markdown(say("**{name}**: {rows}", name=name, rows=formats.count(len(rows), _("row"), _("rows"))))


def guessed_counts(counts: pd.DataFrame) -> Markdown:
    """Whether a client's guess of the chunk count, the indexer's count and the stored vectors agree."""
    guess, counted, held = (counts[c] for c in counts.columns)
    return Markdown(
        say(
            "The guess matches the indexer's count for **{guessed}** of **{documents}** documents; the "
            "recorded count matches the stored vectors for **{stored}**.",
            guessed=(guess == counted).sum(),
            documents=len(counts),
            stored=(counted == held).sum(),
        )
    )


def needle_in_hits(q: Question, hits: Sequence[tuple[Chunk, float]]) -> Markdown:
    """A question's rank of the first hit that quotes its needle, or that none of the hits does."""
    found = next((rank for rank, (c, _d) in enumerate(hits, 1) if q.needle in c.content), None)
    if found is None:
        return Markdown(
            say(
                "Query: *{question}*  The needle of **{id}** is not in the top **{k}**.",
                question=q.question,
                id=q.id,
                k=len(hits),
            )
        )
    return Markdown(
        say(
            "Query: *{question}*  The needle of **{id}** is at rank **{rank}** of the top **{k}**.",
            question=q.question,
            id=q.id,
            rank=found,
            k=len(hits),
        )
    )


def killed_update(returncode: int, unchanged: bool) -> Markdown:
    """What an update killed in the middle of its writes left behind; or that it was not killed at all."""
    if returncode != -signal.SIGKILL:
        # the demonstration failed (the child never reached its kill): say so rather than narrate a crash
        return Markdown(
            say(
                "The update process was not killed: it ended with exit status **{returncode}**, so this "
                "run shows nothing about a crash. The index holds what it held before: **{unchanged}**.",
                returncode=returncode,
                unchanged=formats.truth(unchanged),
            )
        )
    return Markdown(
        say(
            "The update process ended with signal **{signal}** (SIGKILL) in the middle of its writes. "
            "The index still holds exactly what it held before: **{unchanged}**; its status is "
            "unchanged, stale documents and all.",
            signal=-returncode,
            unchanged=formats.truth(unchanged),
        )
    )


def update_summary(
    before: IndexStatus,
    after: IndexStatus,
    old: Mapping[str, IndexEntry],
    new: Mapping[str, IndexEntry],
    corpus: Corpus,
) -> Markdown:
    """What an update re-embedded, kept and dropped, against what the status before it said it would."""
    to_embed = sorted([d for d in before.stale if d in corpus.ids] + list(before.new))
    rewritten = sorted(
        d
        for d, e in new.items()
        if e.status == "indexed"
        and (d not in old or old[d].content_hash != e.content_hash or old[d].status != "indexed")
    )
    kept = [d for d in after.current if d not in rewritten]
    return Markdown(
        say(
            "Status before the update: **{stale}** stale and **{new}** new; stale ones still in the folder, so to be "
            "embedded again: **{to_embed}** ({to_embed_ids}). The update wrote new vectors for **{rewritten}** "
            "{documents} ({rewritten_ids}) and left **{kept}** untouched. Dropped: **{dropped}**. Still failed: "
            "**{failed}**. Only the changed documents were re-embedded: **{only_changed}**.",
            stale=len(before.stale),
            new=len(before.new),
            to_embed=len(to_embed),
            to_embed_ids=", ".join(to_embed),
            rewritten=len(rewritten),
            rewritten_ids=", ".join(rewritten),
            documents=formats.noun(len(rewritten), _("document"), _("documents")),
            kept=len(kept),
            dropped=", ".join(sorted(set(old) - set(new))) or _("none"),
            failed=len(after.failed),
            only_changed=formats.truth(rewritten == to_embed),
        )
    )


def appended_found(hits: Sequence[tuple[Chunk, float]], added: str) -> Markdown:
    """Whether the top hit of a search is the paragraph just appended to a document."""
    return Markdown(
        say("The top hit is the paragraph you appended: **{found}**.", found=formats.truth(hits[0][0].content == added))
    )


def stamp_differences(entry: IndexEntry, now: Stamp) -> Markdown:
    """The fields in which one document's stamp differs from the current configuration's."""
    assert entry.stamp is not None, "an indexed document carries the stamp it was embedded under"
    return Markdown(
        say(
            "Fields in which `{id}`'s stamp differs from the current one: **{fields}**.",
            id=entry.id,
            fields=", ".join(entry.stamp.differences(now)),
        )
    )


def repaired(foreign: IndexStatus, after: IndexStatus, corpus: Corpus, searchable: bool) -> Markdown:
    """What an update did to an index another configuration had made stale, and whether it opens again."""
    return Markdown(
        say(
            "Stale before the update: **{stale}** documents, of which **{in_folder}** were still in the folder and so "
            "re-embedded; after it: **{current}** current, **{still_stale}** stale. The index opens again: "
            "**{searchable}**.",
            stale=len(foreign.stale),
            in_folder=sum(d in corpus.ids for d in foreign.stale),
            current=len(after.current),
            still_stale=len(after.stale),
            searchable=formats.truth(searchable),
        )
    )
