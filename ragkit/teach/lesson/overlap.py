"""Overlap's mechanism measured: how far a chunk's vector moves toward its neighbour's section when overlap is added.

The chapter's reason why overlap on top of the header hurts (F against E) is mechanical: a
chunk's vector is an average over its tokens, so 64 characters of the previous chunk pull it
toward the neighbour's topic. Here that pull is measured on the bundled corpus: the cosine
of each chunk's vector to its own section's centroid and to the previous section's centroid,
without the overlap and with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ragkit.chunking import Chunk
from ragkit.errors import InputError
from ragkit.teach.language import _, number, say

__all__ = ["Moved", "OverlapPull", "Pull", "measure_pull", "sentence"]


@dataclass(frozen=True)
class Pull:
    """One chunk whose overlap comes from another section: its cosines to both sections, before and after."""

    index: int
    own_before: float
    own_after: float
    neighbour_before: float
    neighbour_after: float

    @property
    def toward(self) -> float:
        """How much closer to the neighbour's section than to its own the overlap brought it (cosine points)."""
        return (self.neighbour_after - self.neighbour_before) - (self.own_after - self.own_before)


@dataclass(frozen=True)
class Moved:
    """A needle the overlapped run loses: the chunk that carries it, how far its vector moved, and its pull."""

    needle: str
    index: int
    moved: float
    percentile: float
    pull: Pull | None


@dataclass(frozen=True)
class OverlapPull:
    """The pull over every chunk that crosses into a new section, and where the lost needles' chunks stand."""

    plain: str
    overlapped: str
    chunks: int
    pulls: tuple[Pull, ...]
    moved: np.ndarray
    lost: tuple[Moved, ...]

    @property
    def share_toward(self) -> float:
        """Share of section-crossing chunks that end up relatively closer to the neighbour's section."""
        return float(np.mean([p.toward > 0 for p in self.pulls])) if self.pulls else 0.0

    def mean(self, field: str) -> float:
        """Mean over the section-crossing chunks of one of Pull's cosines, or of ``toward``."""
        return float(np.mean([getattr(p, field) for p in self.pulls])) if self.pulls else 0.0


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x)


def measure_pull(
    plain: tuple[str, Sequence[Chunk], np.ndarray],
    overlapped: tuple[str, Sequence[Chunk], np.ndarray],
    lost: Iterable[tuple[str, str]] = (),
) -> OverlapPull:
    """The pull of overlap: ``plain`` and ``overlapped`` are (letter, chunks, unit vectors) of two strategies that
    cut alike (E and F, A and B); ``lost`` names (needle id, needle sentence) pairs the overlapped run loses."""
    (a, chunks, before), (b, chunks_o, after) = plain, overlapped
    if [(c.doc_id, c.start, c.end) for c in chunks] != [(c.doc_id, c.start, c.end) for c in chunks_o]:
        raise InputError(f"{a} and {b} do not cut alike: compare a strategy with its overlapped twin (A/B, C/D, E/F)")
    if len(before) != len(chunks) or len(after) != len(chunks):
        raise InputError("one vector per chunk is needed: pass each retriever's chunks with its vectors")
    keys = [(c.doc_id, c.section) for c in chunks]
    sums: dict[tuple[str, str], np.ndarray] = {}
    sizes: dict[tuple[str, str], int] = {}
    for key, v in zip(keys, before):
        sums[key] = sums.get(key, 0) + v
        sizes[key] = sizes.get(key, 0) + 1
    pulls = []
    for i in range(1, len(chunks)):
        own, neighbour = keys[i], keys[i - 1]
        if not chunks_o[i].overlap or own == neighbour or own[0] != neighbour[0] or sizes[own] < 2:
            continue
        # the own centroid leaves the chunk itself out, or it would be pulled toward its own vector
        c_own, c_nb = _unit(sums[own] - before[i]), _unit(sums[neighbour])
        pulls.append(
            Pull(i, float(before[i] @ c_own), float(after[i] @ c_own), float(before[i] @ c_nb), float(after[i] @ c_nb))
        )
    moved = 1.0 - np.einsum("ij,ij->i", before, after)
    by_index = {p.index: p for p in pulls}
    out = []
    for needle_id, sentence in lost:
        where = [i for i, c in enumerate(chunks) if sentence in c.carried]
        if not where:
            continue  # destroyed in the plain run: nothing moved, it was never there
        i = where[0]
        out.append(Moved(needle_id, i, float(moved[i]), float((moved < moved[i]).mean()), by_index.get(i)))
    return OverlapPull(a, b, len(chunks), tuple(pulls), moved, tuple(out))


def sentence(m: OverlapPull) -> str:
    """In words: what this corpus shows about the pull, and whether the needles the overlapped run loses moved."""
    toward, share = m.mean("toward"), m.share_toward
    text = say(
        "**{overlapped} against {plain}**: of **{chunks:,}** chunks, **{starts}** start a new section and carry "
        "an overlap from the one before. Adding the overlap changes their cosine to their own section's "
        "centroid by **{own:+.4f}** on average and to the previous section's by **{neighbour:+.4f}**: "
        "a net pull toward the neighbour of **{toward:+.4f}**, in **{share:.0%}** of them. ",
        overlapped=m.overlapped,
        plain=m.plain,
        chunks=m.chunks,
        starts=len(m.pulls),
        own=m.mean("own_after") - m.mean("own_before"),
        neighbour=m.mean("neighbour_after") - m.mean("neighbour_before"),
        toward=toward,
        share=share,
    )
    text += (
        _("So the chapter's mechanism is there: the overlap pulls a chunk toward the section before it")
        if toward > 0 and share > 0.5
        else _("So on this corpus the chapter's mechanism does not show as a pull toward the section before")
    )
    text += say(
        " (for scale: such a chunk's cosine to its own section's centroid is {own_before:.3f} on average). "
        "Over all chunks, the median vector moves by **{median:.4f}** (1 - cosine). ",
        own_before=m.mean("own_before"),
        median=float(np.median(m.moved)),
    )
    if not m.lost:
        return text + say(
            "{overlapped} loses no needle that {plain} carries, so there is nothing more to check.",
            overlapped=m.overlapped,
            plain=m.plain,
        )
    crossing = sum(x.pull is not None for x in m.lost)
    high = float(np.median([x.percentile for x in m.lost])) >= 0.75
    percentiles = ", ".join(number(x.percentile, ".0%") for x in m.lost)
    if len(m.lost) == 1:
        text += say(
            "The one needle {overlapped} loses to {plain} sits in a chunk whose vector moved more than "
            "{percentiles} of all chunks' did: ",
            overlapped=m.overlapped,
            plain=m.plain,
            percentiles=percentiles,
        )
    else:
        text += say(
            "The **{n}** needles {overlapped} loses to {plain} sit in chunks whose vector moved more than "
            "{percentiles} of all chunks' did: ",
            n=len(m.lost),
            overlapped=m.overlapped,
            plain=m.plain,
            percentiles=percentiles,
        )
    if len(m.lost) == 1:  # one needle: its chunk, and "it", not "of them" and "they"; and an anecdote, said so
        text += _("among the chunks that moved most") if high else _("not among the chunks that moved most")
        text += (
            _("; it starts a new section, so the pull toward the previous section is part of the story.")
            if crossing
            else _(
                "; it starts no new section: its overlap comes from its own section, so what the overlap changes is "
                "the mix within that section, not a pull toward the previous one."
            )
        )
        return text + _(" One needle is an anecdote, not a pattern.")
    text += _("among the chunks that moved most") if high else _("not, as a group, the chunks that moved most")
    if crossing == 1:
        text += say("; **{crossing}** of them starts a new section, so ", crossing=crossing)
    else:
        text += say("; **{crossing}** of them start a new section, so ", crossing=crossing)
    if crossing:
        text += _("the pull toward the previous section is part of the story.")
    else:
        text += _(
            "the pull toward the previous section is not what moved them: their overlap comes from their own "
            "section, and what it changes is the mix within it."
        )
    return text


def __getattr__(name: str) -> object:
    """A name an older copy of a notebook calls here that is called otherwise now (``ragkit.teach.moved``)."""
    from ragkit.teach.moved import moved_name

    return moved_name(__name__, name)
