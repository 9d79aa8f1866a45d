"""Answering: retrieve, gate, and only then (maybe) generate; when nothing passes, no model is ever called."""

from __future__ import annotations

from dataclasses import dataclass

from ragkit.citations import Citation, build_context, well_formed
from ragkit.errors import InputError
from ragkit.generation import Generator, available_generator
from ragkit.retrieval import Retriever, rank
from ragkit.threshold import DEFAULT_CUT, KEEP, check_cut, gate


@dataclass(frozen=True)
class NoAnswer:
    """The gate let nothing through: the refusal is a comparison of two numbers, not a model's judgement."""

    question: str
    cut: float | None

    def __str__(self) -> str:
        if self.cut is None:  # no gate at all: only an empty retrieval (no chunks, or keep=0) leaves nothing
            return f'NO ANSWER: no cut, and no chunk was retrieved for "{self.question}"'
        return f'NO ANSWER: nothing under cosine distance {self.cut:g} for "{self.question}"'


@dataclass(frozen=True)
class Answer:
    """The prompt, the citations the model never sees, and the model's text when a generator ran."""

    question: str
    prompt: str
    citations: tuple[Citation, ...]
    prompt_tokens: int
    counted_with: str
    text: str | None = None
    generator: str | None = None


def count_prompt_tokens(prompt: str, generator: Generator | None = None) -> tuple[int, str]:
    """Prompt length in tokens, and which tokenizer counted (the generator's when there is one)."""
    if generator is not None:
        return generator.count(prompt), f"{generator.name} tokenizer"
    from ragkit.tokens import count_pieces

    return (count_pieces([prompt])[0],
            "all-MiniLM-L6-v2 word pieces (no generator installed; its tokenizer would differ)")


def answer(question: str, retriever: Retriever, cut: float | None = DEFAULT_CUT, keep: int = KEEP,
           generator: Generator | None = None) -> Answer | NoAnswer:
    """Retrieve (dense), gate at the cut, and build the prompt; generate only when a generator is given."""
    if not isinstance(question, str) or not question.strip():
        raise InputError("empty question: type what you want to know")
    question = well_formed(question)  # bytes that are not UTF-8 (a terminal in another encoding) are answered
    cut = check_cut(cut)
    distance = retriever.distances([question])[0]
    kept = gate(rank(distance, higher_is_better=False, k=keep), distance, cut, keep)
    if len(kept) == 0:
        return NoAnswer(question, cut)
    prompt, citations = build_context(question, [(retriever.chunks[i], distance[i]) for i in kept])
    tokens, counted_with = count_prompt_tokens(prompt, generator)
    text = generator.generate(prompt) if generator is not None else None
    return Answer(question, prompt, tuple(citations), tokens, counted_with, text,
                  generator.name if generator is not None else None)
