"""The exercises' rules: each exercise's fixed parameters, costs, ceilings and bounds, and how hints thin out."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ragkit.approximate import COLLECTION_SEED, NEIGHBOURS
from ragkit.chunking import SIZE
from ragkit.data import MAX_SHARED
from ragkit.statistics import ALPHA
from ragkit.teach.language import say
from ragkit.threshold import CUT_RANGE, CUT_STEP
from ragkit.tokens import WINDOW

__all__ = [
    "CUT_GRID",
    "EX1",
    "EX2",
    "EX3",
    "EX4",
    "EX5",
    "EX6",
    "EX7",
    "HINTS",
    "OWN_SIZES",
    "SHARED_RUN",
    "TOLERANCE",
    "DocumentRules",
    "EfSearchRules",
    "HeaderRules",
    "HintRules",
    "NeedleRules",
    "ProjectRules",
    "RankingRules",
    "ThresholdRules",
    "TicketRules",
]

# ex1: every student gets a blind window size of their own, so no notebook prints their answer
OWN_SIZES = tuple(s for s in range(400, 641, 8) if s != SIZE)
# ex2: the cut is tuned on half of the needles and judged on the other half (the course's SPLIT_SEED)
TOLERANCE = 0.05
CUT_GRID = tuple(np.round(np.arange(CUT_RANGE[0], CUT_RANGE[1] + 1e-4, CUT_STEP), 3).tolist())
"""The cuts exercise 2 weighs, and every position of a cut slider: the CUT_RANGE in steps of CUT_STEP (0.005)."""


@dataclass(frozen=True)
class HintRules:
    """How every check thins out its hints once the same student has tried many answers at one exercise."""

    free: int = 5
    """Attempts with every hint given."""
    every: int = 3
    """After ``free`` attempts, a hint comes only on every ``every``-th attempt: looping teaches less than thinking."""


HINTS = HintRules()


@dataclass(frozen=True)
class ThresholdRules:
    """Exercise 2's fixed judging parameters (a grader calls the check with these, never the student's)."""

    bluff_cost: float = 5.0
    refusal_cost: float = 1.0
    without_needle_cost: float = 3.0
    """An answerable question answered from chunks that lack its needle: worse than a refusal (the user is misled, not
    sent elsewhere), milder than a bluff (its sources are on the course's topic, and a reader who follows them finds
    related text)."""
    max_refused: float = 0.25
    """The refusal ceiling: at most this share of the tuning half's answerable queries may be refused."""
    tolerance: float = TOLERANCE
    strategy: str = "E"
    retriever: str = "dense"


SHARED_RUN = 5
"""ex5: a paraphrase shares no run of this many words with the document."""


@dataclass(frozen=True)
class TicketRules:
    """Exercise 3's fixed judging parameters (a grader calls the check with these, never the student's)."""

    tickets: int = 5
    strategy: str = "E"
    known_words: int = 3
    """At least this many distinctive words of a ticket occur somewhere in the course."""
    max_shared: int = MAX_SHARED
    copy_share: float = 0.5
    """A copy: this share of the shorter word set (ticket or phrasing) is in the other (``copied_share``)."""
    top_k: int = 10
    """A ticket asks for its needle: the needle's chunk in this top k, or its own course question the nearest."""

    def __str__(self) -> str:
        return say(
            "The rules (`EX3`): {tickets} tickets; at most {max_shared} distinctive words shared with the "
            "needle; at least {known_words} that occur in the course; a copy from {copy_share:.0%} on; the "
            "needle's chunk in the top {top_k} of {strategy}/dense, or the ticket's own course question the nearest.",
            tickets=self.tickets,
            max_shared=self.max_shared,
            known_words=self.known_words,
            copy_share=self.copy_share,
            top_k=self.top_k,
            strategy=self.strategy,
        )


@dataclass(frozen=True)
class DocumentRules:
    """Exercise 5's fixed judging parameters."""

    strategy: str = "E"
    run: int = SHARED_RUN
    copy_share: float = 0.5
    """A copied sentence: this share of the shorter word set (question or sentence) is in the other."""
    sentence_words: int = 4
    """Only sentences with at least this many distinctive words count (a heading's two words are fair to use)."""
    copy_distance: float = 0.2
    """A sentence reworded in form: the question's embedding this close (cosine distance) to a sentence's.

    Inflections, word order, filler and synonyms change the words, not the sentence: such rewordings land at 0.05 to
    0.18 here, while every course question that the word-bag rule does not call a copy lies at 0.27 or more from
    its needle (a test keeps the bound below that), and the solution's question at 0.43 from its nearest sentence."""
    off_course: float = 0.45
    """A topic the course lacks: the cited chunk is farther than this cosine distance from every course chunk.

    The median course chunk lies 0.455 from the nearest chunk of another chapter: the cited section must be at
    least about as far from the course as one chapter is from the others (a passing mention of a course topic
    elsewhere in the document is fair)."""

    def __str__(self) -> str:
        return say(
            "The rules (`EX5`): no run of {run} words copied; no sentence (of {sentence_words} or more "
            "distinctive words) copied from {copy_share:.0%} on, in any order, nor within cosine distance "
            "{copy_distance} of the question; the cited section farther than cosine distance {off_course} from "
            "every course chunk (strategy {strategy}).",
            run=self.run,
            sentence_words=self.sentence_words,
            copy_share=self.copy_share,
            copy_distance=self.copy_distance,
            off_course=self.off_course,
            strategy=self.strategy,
        )


@dataclass(frozen=True)
class HeaderRules:
    """Exercise 4's fixed judging parameters: the metric is chosen in advance, never by the student."""

    strategy: str = "E"
    metric: str = "Hit@20"
    alpha: float = ALPHA
    max_header_pieces: int = WINDOW // 4
    """A header may take at most a quarter of the encoder's window: one that fills it crowds the chunk out."""


@dataclass(frozen=True)
class NeedleRules:
    """Exercise 1's fixed judging parameters: the strategy, and the window sizes students are assigned from."""

    strategy: str = "A"
    sizes: tuple[int, ...] = OWN_SIZES


@dataclass(frozen=True)
class RankingRules:
    """Exercise 6's fixed parameters: the rankings students are given, the depth of nDCG, how close an answer must be.

    Every student gets a ranking of their own (``ex6_rank_metrics.own_ranking``): ``length`` chunks, ``relevant``
    of them relevant (binary gains), the first never at rank 1, two or more in the top ``cutoff`` and one below it, so
    that AP, nDCG@10, MRR and the usual slips all differ by at least ``apart``.
    """

    length: int = 20
    relevant: tuple[int, ...] = (3, 4, 5)
    """How many relevant chunks a ranking may hold: each student's number is one of these."""
    cutoff: int = 10
    tolerance: float = 0.005
    """An answer within this of the engine's value is right (three decimals, rounded by hand)."""
    apart: float = 0.02
    example: tuple[int, ...] = (2, 3, 6, 14)
    """The ranks of the relevant chunks in the notebook's worked example, which no student is given."""

    def __str__(self) -> str:
        return say(
            "The rules (`EX6`): a ranking of {length} chunks, {fewest} to {most} of them relevant (gain 1, else 0); "
            "AP over the whole ranking, nDCG at {cutoff} with the ideal ranking's DCG at {cutoff}; an answer "
            "within {tolerance} of the engine's value is right.",
            length=self.length,
            fewest=min(self.relevant),
            most=max(self.relevant),
            cutoff=self.cutoff,
            tolerance=self.tolerance,
        )


@dataclass(frozen=True)
class EfSearchRules:
    """Exercise 7's fixed parameters: the target, the collection chosen on and the collection that judges.

    Both are ``approximate.generated_collection``s of the course's strategy-E vectors, built on one thread so that a
    kernel and the grader build the same graph; the judging one is another draw, with tighter clusters.
    """

    target: float = 0.95
    """The Recall@k an efSearch must reach on the collection it is chosen on."""
    k: int = NEIGHBOURS
    vectors: int = 20_000
    seed: int = COLLECTION_SEED
    spread: float = 1.0
    judge_seed: int = COLLECTION_SEED + 1
    judge_spread: float = 0.5
    step: int = 4
    """An answer may lie up to this far above the smallest efSearch that reaches the target (a scan in steps of 4)."""
    most: int = 1024
    """The largest efSearch the check measures."""

    def __str__(self) -> str:
        return say(
            "The rules (`EX7`): the smallest efSearch whose Recall@{k} reaches {target} on the collection you "
            "choose on ({vectors:,} generated vectors, seed {seed}), up to {step} above it; judged afterwards on "
            "another collection (seed {judge_seed}, spread {judge_spread}).",
            k=self.k,
            target=self.target,
            vectors=self.vectors,
            seed=self.seed,
            step=self.step,
            judge_seed=self.judge_seed,
            judge_spread=self.judge_spread,
        )


@dataclass(frozen=True)
class ProjectRules:
    """The project's rules the grader checks by machine (docs/project.md): the least a project holds, and the most.

    Sixteen needles leave eight to each half: a sign test over eight held-out needles can reach p = 0.0078 when every
    one of them goes one way, so the held-out half can show a difference at all (with six it can just reach 0.031).
    """

    documents: int = 3
    words: int = 2_000
    """Words of the documents together: a corpus of a few thousand words, as the worked example's."""
    needles: int = 16
    out_of_domain: int = 10
    report_words: tuple[int, int] = (300, 2_500)
    most_documents: int = 100
    document_bytes: int = 256 * 2**10
    corpus_bytes: int = 2 * 2**20
    file_bytes: int = 2**20
    """The most a ground-truth file, the split, the results or the report may hold."""
    tolerance: float = 0.002
    """A figure of results.json agrees with the recomputation within this (the same files on another machine)."""

    def __str__(self) -> str:
        return say(
            "The rules (`PROJECT`): at least {documents} documents of {words:,} words together, {needles} needles "
            "(each asked twice) and {out_of_domain} out-of-domain queries; the course's split, sealed before any "
            "retrieval; results.json as `python -m ragkit project run` writes it from these files; a report of "
            "{fewest} to {most} words that quotes the chosen run, its cut and its held-out figure.",
            documents=self.documents,
            words=self.words,
            needles=self.needles,
            out_of_domain=self.out_of_domain,
            fewest=self.report_words[0],
            most=self.report_words[1],
        )


EX1, EX2, EX3, EX4, EX5 = NeedleRules(), ThresholdRules(), TicketRules(), HeaderRules(), DocumentRules()
EX6, EX7 = RankingRules(), EfSearchRules()
PROJECT = ProjectRules()
