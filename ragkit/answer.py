"""Answering: retrieve, gate, and only then (maybe) generate; when nothing passes, no model is ever called.

Any retriever the course builds may choose the sources: dense, BM25, hybrid (RRF), or one of them reranked. The gate
is the same for all of them, the one the threshold sweep measures (``threshold.Sweep``): the first ``keep`` chunks of
the chosen ranking, and only those whose *dense* cosine distance to the question is under the cut. BM25 scores and RRF
sums have no scale a cut could be set on (a BM25 score grows with the query's length; an RRF sum is a function of
ranks alone), so the refusal stays a comparison with the one number the cut was chosen on, whichever retriever ranked.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from ragkit.chunking import Chunk
from ragkit.citations import Citation, build_context, resolve_markers, well_formed
from ragkit.errors import InputError
from ragkit.generation import Generation
from ragkit.retrieval import RERANK_DEPTH, RETRIEVERS, Reranker, Retriever, Run, rank
from ragkit.threshold import DEFAULT_CUT, KEEP, check_cut, gate

__all__ = [
    "WORD_PIECES",
    "Answer",
    "Cited",
    "NoAnswer",
    "TokenCounter",
    "Writer",
    "answer",
    "count_prompt_tokens",
    "gated_hits",
]

WORD_PIECES = "all-MiniLM-L6-v2 word pieces (the encoder's tokenizer; a generator's own count differs)"
"""Who counted a prompt's tokens when no generator did, in English (``TokenCounter``)."""


@dataclass(frozen=True)
class TokenCounter:
    """Which tokenizer counted a prompt: a generator's (by its name), or, with None, the encoder's word pieces.

    ``str()`` is the engine's English; a notebook renders the same value in its own language.
    """

    generator: str | None = None

    def __str__(self) -> str:
        return WORD_PIECES if self.generator is None else f"{self.generator} tokenizer"


class Writer(Protocol):
    """What answering needs from a generator: its name, its token count, and a generation for a prompt."""

    name: str

    def count(self, text: str) -> int: ...

    def run(self, prompt: str) -> Generation: ...


@dataclass(frozen=True)
class NoAnswer:
    """The gate let nothing through: the refusal is a comparison of two numbers, not a model's judgement."""

    question: str
    cut: float | None
    retriever: str = "dense"

    def __str__(self) -> str:
        if self.cut is None:  # no gate at all: only an empty retrieval (no chunks, or keep=0) leaves nothing
            return f'NO ANSWER: no cut, and no chunk was retrieved for "{self.question}"'
        return f'NO ANSWER: nothing under cosine distance {self.cut:g} for "{self.question}"'


@dataclass(frozen=True)
class Cited:
    """A model's answer with each valid [n] followed by its source's locator; markers naming no source, listed."""

    text: str
    unknown: tuple[int, ...]

    @property
    def unknown_note(self) -> str:
        """One sentence about the markers that name no source ("" when there are none)."""
        if not self.unknown:
            return ""
        numbers = ", ".join(f"[{n}]" for n in self.unknown)
        if len(self.unknown) == 1:
            return (
                f"1 marker in the answer names no source ({numbers}): the model wrote a number the server never "
                "gave it, so it links nowhere."
            )
        return (
            f"{len(self.unknown)} markers in the answer name no source ({numbers}): the model wrote numbers the "
            "server never gave it, so they link nowhere."
        )


@dataclass(frozen=True)
class Answer:
    """The prompt, the citations the model never sees, and the model's text when a generator ran."""

    question: str
    prompt: str
    citations: tuple[Citation, ...]
    prompt_tokens: int
    counted_with: TokenCounter
    text: str | None = None
    generator: str | None = None
    retriever: str = "dense"
    """Which ranking chose the sources: ``dense``, ``bm25``, ``hybrid``, or one of them ``+`` a reranker's name."""
    generation: Generation | None = None
    """The generator's whole run (tokens, seconds, why it stopped), when one wrote ``text``."""

    def written_by(self, generator: Writer) -> Answer:
        """This answer with the generator's text, its prompt counted again with the generator's own tokenizer."""
        tokens, counted_with = count_prompt_tokens(self.prompt, generator)
        generation = generator.run(self.prompt)
        return replace(
            self,
            prompt_tokens=tokens,
            counted_with=counted_with,
            text=generation.text,
            generator=generator.name,
            generation=generation,
        )

    def cited(self) -> Cited | None:
        """The model's text with each valid [n] followed by its locator (``[1] (doc#char=10,250)``); None: no text."""
        if self.text is None:
            return None
        by_index = {c.index: c for c in self.citations}
        located = resolve_markers(
            self.text, lambda n: f"[{n}] ({by_index[n].document_id}{by_index[n].fragment})" if n in by_index else None
        )
        return Cited(located.text, located.unknown)

    @property
    def stop_note(self) -> str:
        """One sentence when the generation was cut short (time bound, repetition stop or new-token limit), else ""."""
        g = self.generation
        if g is None or g.stopped == "end":
            return ""
        if g.stopped == "time":
            return (
                f"The generator hit its time bound and was stopped after {g.seconds:.1f} s, {g.new_tokens} tokens "
                "into its answer: the answer is cut short."
            )
        if g.stopped == "repeat":
            return (
                "The generator repeated the stretch just before it (the repetition stop: 8 or more tokens "
                f"repeated) and was stopped there: the answer kept its first {g.new_tokens} tokens and leaves the "
                "repeat out, so it may end mid-sentence."
            )
        return f"The generator used all {g.new_tokens} new tokens it may write: the answer may be cut short."


def count_prompt_tokens(prompt: str, generator: Writer | None = None) -> tuple[int, TokenCounter]:
    """Prompt length in tokens, and which tokenizer counted (the generator's when there is one)."""
    if generator is not None:
        return generator.count(prompt), TokenCounter(generator.name)
    from ragkit.tokens import count_pieces

    return count_pieces([prompt])[0], TokenCounter()


def _ranked(retriever: Retriever, question: str, ranked_by: str, reranker: Reranker | None) -> tuple[Run | None, str]:
    """The run that ranks the candidates (None: dense, ranked here for the first ``keep`` only) and its name."""
    if ranked_by not in RETRIEVERS:
        raise InputError(f"unknown retriever {ranked_by!r}: use one of {', '.join(RETRIEVERS)}")
    if reranker is None:
        return (None, "dense") if ranked_by == "dense" else (retriever.run(ranked_by, [question]), ranked_by)
    run = retriever.reranked([question], reranker, base=retriever.run(ranked_by, [question]), depth=RERANK_DEPTH)
    return run, run.retriever


def gated_hits(
    question: str, retriever: Retriever, cut: float | None = DEFAULT_CUT, keep: int = KEEP, run: Run | None = None
) -> list[tuple[Chunk, float]]:
    """The (chunk, cosine distance) pairs the gate lets through for one question, best first: the one gate of
    ``answer()`` and of every generated measurement.

    The first ``keep`` of ``run``'s ranking (None: dense, ranked here for those ``keep`` only), and of those only the
    ones whose dense cosine distance is under the cut (``threshold.gate``).
    """
    distance = run.distance[0] if run is not None and run.distance is not None else retriever.distances([question])[0]
    ranking = rank(distance, higher_is_better=False, k=keep) if run is None else run.ranking[0]
    return [(retriever.chunks[i], float(distance[i])) for i in gate(ranking, distance, cut, keep)]


def answer(
    question: str,
    retriever: Retriever,
    cut: float | None = DEFAULT_CUT,
    keep: int = KEEP,
    generator: Writer | None = None,
    ranked_by: str = "dense",
    reranker: Reranker | None = None,
) -> Answer | NoAnswer:
    """Retrieve, gate at the cut, and build the prompt; generate only when a generator is given.

    ``ranked_by`` names the ranking that chooses the candidates (``dense``, ``bm25`` or ``hybrid``), and ``reranker``
    reorders its first ``RERANK_DEPTH``; the gate keeps the first ``keep`` of that ranking whose dense cosine distance
    is under ``cut`` (see the module's docstring for why the cut stays on the dense distance). A caller that wants to
    load a generator only for a question the gate answers calls ``answer()`` without one, then
    ``Answer.written_by(generator)``.
    """
    if not isinstance(question, str) or not question.strip():
        raise InputError("empty question: type what you want to know")
    question = well_formed(question)  # bytes that are not UTF-8 (a terminal in another encoding) are answered
    cut = check_cut(cut)
    run, name = _ranked(retriever, question, ranked_by, reranker)
    hits = gated_hits(question, retriever, cut, keep, run)
    if not hits:
        return NoAnswer(question, cut, name)
    prompt, citations = build_context(question, hits)
    if generator is not None:
        return Answer(question, prompt, tuple(citations), 0, TokenCounter(), retriever=name).written_by(generator)
    return Answer(question, prompt, tuple(citations), *count_prompt_tokens(prompt), retriever=name)
