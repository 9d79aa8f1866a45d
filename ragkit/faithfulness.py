"""Grading the generator apart from the retriever: markers, a needle-recall rule, and the needle queries.

The needle says what a right answer must contain, so a generated answer is graded by a rule a student can apply by
hand: an answer *recalls its needle* when it contains at least half (``RECALL_SHARE``) of the needle's content words
that the query does not already contain (lower-cased, accents folded, stop words out: ``ragkit.words``), so that an
answer repeating the query earns nothing. The rule is lexical: it counts words, it does not judge whether the cited
source supports the answer (ALCE, Gao et al. 2023, judges that with an entailment model). The rule was fixed before
any answer was read. Crossed with "is the needle in the prompt?" (the retriever's part) it separates the two failures
the rule can see: a prompt without the needle, and an answer that does not recall the words of the needle it was given
(it may still say the same in other words).

A generation costs seconds on a laptop CPU, so the generated measurements run on fixed, seeded samples whose sizes
are the constants below; every answer is cached by the generator, so a rerun reads them back.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from ragkit.answer import Answer, NoAnswer, answer, gated_hits
from ragkit.chunking import Chunk
from ragkit.citations import Citation, build_context, resolve_markers
from ragkit.data import OutOfDomain, Query, Question
from ragkit.data import queries as make_queries
from ragkit.errors import InputError
from ragkit.evaluation import needle_hits, quotes_needle
from ragkit.generation import Generation, Generator
from ragkit.power import (
    DROP,
    POWER,
    fisher_smallest_p,
    needles_for,
    paired_detectable,
    paired_pairs_needed,
    paired_power,
    unpaired_detectable,
    unpaired_power,
)
from ragkit.retrieval import Reranker, Retriever, Run, rank
from ragkit.statistics import (
    SignTest,
    cluster_bootstrap,
    holm,
    needle_sign_test,
    sign_test,
    wilson,
)
from ragkit.threshold import DEFAULT_CUT, KEEP, gate
from ragkit.words import content_words

RECALL_SHARE = 0.5
"""An answer recalls its needle when it holds at least this share of the needle's words the query does not give away."""
ANSWER_TOKENS = 48
"""New tokens each measured answer may write: a sentence or two, enough to state a needle."""
SAMPLE = 12
"""Needle queries (either phrasing) in the two-halves table: a fixed seeded sample, sized by the time budget."""
LOST_SAMPLE = 3
"""Needle questions in the lost-in-the-middle test, each asked three times (needle first, middle, last)."""
LOST_CHUNKS = 20
"""Sources in a lost-in-the-middle prompt: the needle's chunk and the retriever's best-ranked chunks without it."""
SAMPLE_SEED = 7
"""The samples' seed: the same needles on every machine and every run."""
TOPICS = (
    "contrastive sentence embeddings",
    "retrieval-augmented generation",
    "BM25 and sparse retrieval",
    "long-context language models",
)
"""What the model is asked for papers on, without sources."""
ASK_PAPERS = "Name three research papers on {topic}, each with its arXiv identifier."
ARXIV_ID = re.compile(r"(?<![\d.])\d{4}\.\d{4,5}(?:v\d+)?(?![\d])")
"""A well-formed arXiv identifier (new style, e.g. 1908.10084 or 2005.11401v4): well-formed is not real."""
POSITIONS = ("first", "middle", "last")

Hits = Sequence[tuple[Chunk, float]]
Sampled = TypeVar("Sampled", Question, Query)
PromptBuilder = Callable[[str, Hits], tuple[str, list[Citation]]]
"""Makes a prompt and its citations from a question and (chunk, distance) hits, like ``build_context``."""


@dataclass(frozen=True)
class Markers:
    """The [n] markers of an answer: those that name a source of the prompt, and those that name none."""

    valid: tuple[int, ...]
    invalid: tuple[int, ...]


def markers(text: str, sources: int) -> Markers:
    """Every [n] in an answer, in order, sorted into valid (1 <= n <= sources) and invalid (never linked)."""
    found = resolve_markers(text, lambda n: "" if 1 <= n <= sources else None)
    return Markers(found.valid, found.unknown)


def needle_words(needle: str, question: str) -> frozenset[str]:
    """The needle's content words the question does not contain (all of them when the question contains every one)."""
    own = content_words(needle)
    return frozenset(own - content_words(question) or own)


def recalled(text: str, needle: str, question: str) -> float:
    """The share of ``needle_words`` an answer contains."""
    wanted = needle_words(needle, question)
    return len(wanted & content_words(text)) / len(wanted) if wanted else 0.0


def recalls_needle(text: str, needle: str, question: str, share: float = RECALL_SHARE) -> bool:
    """The rule: the answer recalls at least ``share`` of the needle's words the question does not give away."""
    return recalled(text, needle, question) >= share


@dataclass(frozen=True)
class GradedAnswer:
    """One needle query's prompt and answer, graded: where the needle sat, what the model wrote, and the verdict."""

    query_id: str
    needle_at: int
    """The first source (from 1) holding the needle; 0 when the prompt lacks it."""
    sources: int
    text: str
    recalled: float
    needle_recalled: bool
    """The rule (``recalls_needle``): lexical recall of the needle's words, not support by the cited source."""
    markers: Markers
    cites_needle: bool
    """Some valid marker names a source that holds the needle (by the needle's words, not by entailment)."""
    generation: Generation

    @property
    def needle_in_prompt(self) -> bool:
        return self.needle_at > 0


def grade_answer(
    question: Question,
    asked: str,
    prompt: str,
    citations: Sequence[Citation],
    generator: Generator,
    new_tokens: int = ANSWER_TOKENS,
    query_id: str = "",
) -> GradedAnswer:
    """Generate an answer to one prompt, built for ``asked`` (a phrasing of the question), and grade it against the
    question's needle."""
    made = generator.run(prompt, new_tokens)
    holds = [quotes_needle(c.document_id, c.quote, question) for c in citations]
    found = markers(made.text, len(citations))
    at = next((i for i, held in enumerate(holds, 1) if held), 0)
    return GradedAnswer(
        query_id or question.id,
        at,
        len(citations),
        made.text,
        recalled(made.text, question.needle, asked),
        recalls_needle(made.text, question.needle, asked),
        found,
        any(holds[n - 1] for n in found.valid),
        made,
    )


@dataclass(frozen=True)
class Rate:
    """k of n with its 95% Wilson interval."""

    k: int
    n: int
    low: float = field(init=False)
    high: float = field(init=False)

    def __post_init__(self) -> None:
        low, high = wilson(self.k, self.n)
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    @property
    def share(self) -> float:
        return self.k / self.n if self.n else 0.0

    def __str__(self) -> str:
        return f"{self.k} of {self.n} [{self.low:.2f}, {self.high:.2f}]"


@dataclass(frozen=True)
class TwoHalves:
    """Needle in the prompt (the retriever's part) against needle recalled in the answer (the generator's part)."""

    in_prompt_recalled: int
    in_prompt_not_recalled: int
    missing_recalled: int
    missing_not_recalled: int
    refused: int
    """Questions the gate refused: no prompt, no answer, no call."""

    @property
    def with_needle(self) -> Rate:
        """Answers recalling the needle among prompts that hold it: the generator's part."""
        return Rate(self.in_prompt_recalled, self.in_prompt_recalled + self.in_prompt_not_recalled)

    @property
    def without_needle(self) -> Rate:
        """Answers recalling the needle among prompts without it: what the model knew, or guessed, on its own."""
        return Rate(self.missing_recalled, self.missing_recalled + self.missing_not_recalled)


def count_two_halves(trials: Sequence[GradedAnswer], refused: int = 0) -> TwoHalves:
    """Count graded trials into the 2x2 table (refused questions beside it)."""

    def count(in_prompt: bool, ok: bool) -> int:
        return sum(t.needle_in_prompt == in_prompt and t.needle_recalled == ok for t in trials)

    return TwoHalves(count(True, True), count(True, False), count(False, True), count(False, False), refused)


def sample(items: Sequence[Sampled], n: int, seed: int = SAMPLE_SEED) -> list[Sampled]:
    """A fixed sample of questions or queries: the same ids for the same seed, whatever order they come in."""
    ordered = sorted(items, key=lambda q: q.id)
    return sorted(random.Random(seed).sample(ordered, min(n, len(ordered))), key=lambda q: q.id)


def graded(
    build: PromptBuilder,
    retriever: Retriever,
    questions: Sequence[Question],
    queries: Sequence[Query],
    generator: Generator,
    cut: float | None = DEFAULT_CUT,
    keep: int = KEEP,
) -> tuple[list[GradedAnswer], int]:
    """Every query's gated prompt, made by ``build``, answered and graded against its question's needle; and how many
    queries the gate refused."""
    needle_of = {q.id: q for q in questions}
    trials, refused = [], 0
    for query in queries:
        hits = gated_hits(query.text, retriever, cut, keep)
        if not hits:
            refused += 1
            continue
        prompt, citations = build(query.text, hits)
        trials.append(grade_answer(needle_of[query.qid], query.text, prompt, citations, generator, query_id=query.id))
    return trials, refused


@dataclass(frozen=True)
class PromptRate:
    """How often one retriever's gated prompt holds the needle, paired against dense's by needle (a needle's
    phrasings share its chunk: one pair each), Holm-adjusted over the comparisons against dense, with a 95% interval
    that resamples whole needles (``cluster_bootstrap``; Wilson's in ``rate`` takes the queries as independent)."""

    retriever: str
    rate: Rate
    against_dense: SignTest | None
    holm_p: float | None = None
    low: float = 0.0
    high: float = 1.0


def prompt_holds(run: Run, distance: np.ndarray, hits: np.ndarray, cut: float | None, keep: int = KEEP) -> np.ndarray:
    """Per query: does the gated prompt (the run's first ``keep``, under the cut by cosine distance) hold the needle?"""
    return np.array([bool(hits[i, gate(run.ranking[i], distance[i], cut, keep)].any()) for i in range(len(hits))])


def retriever_rates(
    retriever: Retriever,
    questions: Sequence[Question],
    cut: float | None = DEFAULT_CUT,
    keep: int = KEEP,
    reranker: Reranker | None = None,
) -> list[PromptRate]:
    """Needle-in-prompt rates of dense, BM25, hybrid (and hybrid reranked, when given) on every in-domain query."""
    from ragkit.evaluation import query_hits

    asked = make_queries(questions)
    texts = [q.text for q in asked]
    hits = query_hits(retriever.chunks, questions, asked)
    dense = retriever.dense(texts)
    distance = retriever.distances(texts) if dense.distance is None else dense.distance
    runs = [dense, retriever.bm25(texts)]
    runs.append(retriever.hybrid(texts, dense, runs[1]))
    if reranker is not None:
        runs.append(retriever.reranked(texts, reranker, runs[2]))
    held = [prompt_holds(r, distance, hits, cut, keep).astype(float) for r in runs]
    needles = [q.qid for q in asked]
    tests = [needle_sign_test(h, held[0], needles) for h in held[1:]]
    adjusted = holm([t.p for t in tests])
    rates = []
    for i, (r, h) in enumerate(zip(runs, held)):
        interval = cluster_bootstrap(h, needles)
        rates.append(
            PromptRate(
                r.retriever,
                Rate(int(h.sum()), len(h)),
                tests[i - 1] if i else None,
                adjusted[i - 1] if i else None,
                interval.low,
                interval.high,
            )
        )
    return rates


@dataclass(frozen=True)
class GateCalls:
    """Out-of-domain queries through ``answer()`` with a generator: refused or answered, and the answers each kind
    asked the generator for (read back from its cache or computed)."""

    refused: int
    answered: int
    calls_refused: int
    calls_answered: int
    answers: tuple[Generation, ...] = ()


def count_gate_calls(
    out_of_domain: Sequence[OutOfDomain],
    retriever: Retriever,
    generator: Generator,
    cut: float | None = DEFAULT_CUT,
    keep: int = KEEP,
) -> GateCalls:
    """Count, from the generator's own counter of answers asked for (read back or computed), the model calls that
    refused and answered queries made."""
    refused = answered = calls_refused = calls_answered = 0
    made = []
    for o in out_of_domain:
        before = generator.requests
        reply = answer(o.query, retriever, cut, keep, generator)
        spent = generator.requests - before
        if isinstance(reply, NoAnswer):
            refused, calls_refused = refused + 1, calls_refused + spent
        else:
            answered, calls_answered = answered + 1, calls_answered + spent
            made.append(generator.run(reply.prompt))  # read back: its seconds, no second call
    return GateCalls(refused, answered, calls_refused, calls_answered, tuple(made))


def place(needle: tuple[Chunk, float], others: Hits, position: str) -> list[tuple[Chunk, float]]:
    """The needle's chunk first, in the middle (source n/2 of n) or last among the others, in their order."""
    n = len(others) + 1
    at = {"first": 0, "middle": n // 2 - 1, "last": n - 1}[position]
    return [*others[:at], needle, *others[at:]]


@dataclass(frozen=True)
class LostInTheMiddle:
    """One needle chunk at three places of a long prompt: needles recalled by place, and the paired tests."""

    question_ids: tuple[str, ...]
    chunks: int
    trials: dict[str, tuple[GradedAnswer, ...]]

    def rate(self, position: str) -> Rate:
        """Answers recalling the needle with it at one place."""
        return Rate(sum(t.needle_recalled for t in self.trials[position]), len(self.trials[position]))

    def test(self, position: str) -> SignTest:
        """The exact paired sign test of one place against the middle (a win: recalled there, not in the middle)."""
        return sign_test(
            [t.needle_recalled for t in self.trials[position]], [t.needle_recalled for t in self.trials["middle"]]
        )


def measure_lost_in_the_middle(
    retriever: Retriever,
    questions: Sequence[Question],
    generator: Generator,
    chunks: int = LOST_CHUNKS,
    build: PromptBuilder = build_context,
) -> LostInTheMiddle:
    """Each question's needle chunk (its best-ranked one) placed first, middle and last among ``chunks - 1`` others:
    the retriever's best-ranked chunks that do not hold the needle, in rank order, with no gate."""
    trials: dict[str, list[GradedAnswer]] = {p: [] for p in POSITIONS}
    asked = []
    for q in questions:
        hits = needle_hits(retriever.chunks, [q])[0]
        if not hits.any():
            continue  # a destroyed needle has no chunk to place
        distance = retriever.distances([q.question])[0]
        order = rank(distance, False)
        needle = int(next(i for i in order if hits[i]))
        others = [(retriever.chunks[i], float(distance[i])) for i in order if not hits[i]][: chunks - 1]
        asked.append(q.id)
        for position in POSITIONS:
            placed = place((retriever.chunks[needle], float(distance[needle])), others, position)
            prompt, citations = build(q.question, placed)
            trials[position].append(grade_answer(q, q.question, prompt, citations, generator))
    return LostInTheMiddle(tuple(asked), chunks, {p: tuple(t) for p, t in trials.items()})


@dataclass(frozen=True)
class Invented:
    """What the model wrote, without sources, when asked for papers with identifiers: the well-formed ids in it."""

    topic: str
    text: str
    identifiers: tuple[str, ...]
    generation: Generation


def arxiv_ids(text: str) -> tuple[str, ...]:
    """The well-formed arXiv identifiers in a text, in order (whether they exist is another question)."""
    return tuple(m.group(0) for m in ARXIV_ID.finditer(text))


def invented_identifiers(
    generator: Generator, topics: Sequence[str] = TOPICS, new_tokens: int = 96
) -> tuple[Invented, ...]:
    """Ask for papers with arXiv identifiers, no sources given, on each topic; the identifiers it writes."""
    made = [(t, generator.run(ASK_PAPERS.format(topic=t), new_tokens)) for t in topics]
    return tuple(Invented(t, g.text, arxiv_ids(g.text), g) for t, g in made)


@dataclass(frozen=True)
class Opening:
    """Notebook 07's opening answer alone: what its first generation cell shows, computed before the others."""

    model: str
    opening: Answer
    opening_generation: Generation
    opening_markers: Markers


@dataclass(frozen=True)
class Measurement:
    """Notebook 07's generated measurements on one retriever, with the model time they took when computed."""

    first: Opening
    """The opening answer (what ``measure_opening`` gives alone)."""
    sample: tuple[str, ...]
    trials: tuple[GradedAnswer, ...]
    halves: TwoHalves
    gate: GateCalls
    lost: LostInTheMiddle
    invented: tuple[Invented, ...]
    cut: float | None
    keep: int

    @property
    def model(self) -> str:
        """The generator's name."""
        return self.first.model

    @property
    def opening(self) -> Answer:
        """The opening question's answer."""
        return self.first.opening

    @property
    def opening_generation(self) -> Generation:
        """How the opening answer was made: tokens, seconds, why it stopped."""
        return self.first.opening_generation

    @property
    def opening_markers(self) -> Markers:
        """The opening answer's [n] markers, valid and invalid."""
        return self.first.opening_markers

    @property
    def generations(self) -> list[Generation]:
        """Every answer measured here (the opening one is read back for its seconds)."""
        lost = [t.generation for p in POSITIONS for t in self.lost.trials[p]]
        return [
            self.opening_generation,
            *(t.generation for t in self.trials),
            *self.gate.answers,
            *lost,
            *(i.generation for i in self.invented),
        ]

    @property
    def model_seconds(self) -> float:
        """Seconds the model spent on these answers when each was first computed (stored with the answer)."""
        return sum(g.seconds for g in self.generations)

    @property
    def well_formed(self) -> int:
        """Well-formed arXiv identifiers the model wrote in all its sourceless answers."""
        return sum(len(i.identifiers) for i in self.invented)


def measure_opening(
    retriever: Retriever, generator: Generator, opening: str, cut: float | None = DEFAULT_CUT, keep: int = KEEP
) -> Opening:
    """The opening question's answer by ``generator``, how it ended and its markers (one answer; cached)."""
    first = answer(opening, retriever, cut, keep, generator)
    if isinstance(first, NoAnswer):
        raise InputError(f"the opening question {opening!r} is refused at cut {cut}: choose one the corpus answers")
    return Opening(generator.name, first, generator.run(first.prompt), markers(first.text or "", len(first.citations)))


def measure_generation(
    retriever: Retriever,
    questions: Sequence[Question],
    out_of_domain: Sequence[OutOfDomain],
    generator: Generator,
    opening: str,
    cut: float | None = DEFAULT_CUT,
    keep: int = KEEP,
) -> Measurement:
    """The opening answer, the two-halves table on a seeded sample, the gate's calls, lost in the middle and the
    invented identifiers: every answer by ``generator`` (cached, so a second run calls no model)."""
    first = measure_opening(retriever, generator, opening, cut, keep)
    chosen = sample(make_queries(questions), SAMPLE)
    trials, refused = graded(build_context, retriever, questions, chosen, generator, cut, keep)
    eligible = [q for q in questions if needle_hits(retriever.chunks, [q]).any()]
    lost = measure_lost_in_the_middle(retriever, sample(eligible, LOST_SAMPLE), generator)
    calls = count_gate_calls(out_of_domain, retriever, generator, cut, keep)
    return Measurement(
        first,
        tuple(q.id for q in chosen),
        tuple(trials),
        count_two_halves(trials, refused),
        calls,
        lost,
        invented_identifiers(generator),
        cut,
        keep,
    )


__all__ = [
    "ANSWER_TOKENS",
    "ARXIV_ID",
    "DROP",
    "LOST_CHUNKS",
    "LOST_SAMPLE",
    "POSITIONS",
    "POWER",
    "RECALL_SHARE",
    "SAMPLE",
    "SAMPLE_SEED",
    "TOPICS",
    "GateCalls",
    "GradedAnswer",
    "Invented",
    "LostInTheMiddle",
    "Markers",
    "Measurement",
    "Opening",
    "PromptRate",
    "Rate",
    "TwoHalves",
    "arxiv_ids",
    "count_gate_calls",
    "count_two_halves",
    "fisher_smallest_p",
    "grade_answer",
    "graded",
    "invented_identifiers",
    "markers",
    "measure_generation",
    "measure_lost_in_the_middle",
    "measure_opening",
    "needle_words",
    "needles_for",
    "paired_detectable",
    "paired_pairs_needed",
    "paired_power",
    "place",
    "prompt_holds",
    "recalled",
    "recalls_needle",
    "retriever_rates",
    "sample",
    "unpaired_detectable",
    "unpaired_power",
]
