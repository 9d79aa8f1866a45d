"""One question, two languages: what the English-only encoder finds for a Dutch phrasing against the English one.

all-MiniLM-L6-v2 was trained on English. A Dutch class asks the English corpus in Dutch; this module ranks the
chunks for each course question in both phrasings (``data/questions_nl.jsonl``, written before any retrieval) and
keeps the first rank of a chunk carrying the needle, so that the two can be compared question by question.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragkit.data import Question
from ragkit.errors import DataError, InputError
from ragkit.evaluation import first_hit_ranks, hit_at, needle_hits, reciprocal_rank
from ragkit.retrieval import Retriever
from ragkit.statistics import SignTest, sign_test, wilson

__all__ = ["Phrasing", "compare_phrasings", "load_phrasings"]


@dataclass(frozen=True)
class Phrasing:
    """The first rank of a needle-carrying chunk per question, asked in English and in Dutch (0: not ranked)."""

    strategy: str
    retriever: str
    ids: tuple[str, ...]
    english: tuple[int, ...]
    dutch: tuple[int, ...]

    def ranks(self, language: str) -> np.ndarray:
        """The first-hit ranks of ``language``'s phrasing (``en`` or ``nl``), one per question."""
        return np.asarray(self.english if language == "en" else self.dutch)

    def hits(self, language: str, k: int) -> int:
        """How many questions of ``language`` (``en`` or ``nl``) find their needle in the top ``k``."""
        return int(hit_at(self.ranks(language), k).sum())

    def interval(self, language: str, k: int) -> tuple[float, float]:
        """The 95% Wilson interval of that hit rate."""
        return wilson(self.hits(language, k), len(self.ids))

    def test(self, k: int) -> SignTest:
        """The paired sign test, English against Dutch: wins are questions only the English phrasing finds."""
        return sign_test(hit_at(self.ranks("en"), k), hit_at(self.ranks("nl"), k))

    def mrr(self, language: str) -> float:
        """The mean reciprocal rank of the needle (0 for a question that does not find it)."""
        return float(reciprocal_rank(self.ranks(language)).mean())


def load_phrasings(path: str | Path, questions: Sequence[Question]) -> dict[str, str]:
    """The other language's phrasing of each question, by id: one JSON line ``{"id": ..., "question": ...}`` each."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DataError(
            f"{path} is missing: it holds one question per line, "
            '{"id": "q01", "question": "..."}, for every course question'
        ) from None
    known = {q.id for q in questions}
    found: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(
                f'{path}, line {number} is not JSON ({exc.msg}): write it as {{"id": "q01", "question": "..."}}'
            ) from None
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("id"), str)
            and isinstance(entry.get("question"), str)
            and entry["question"].strip()
        ):
            raise DataError(f'{path}, line {number} needs an "id" and a non-empty "question", both text')
        if entry["id"] not in known:
            raise DataError(
                f"{path}, line {number} phrases {entry['id']!r}, which is no course question: "
                "use the id of questions.jsonl"
            )
        if entry["id"] in found:
            raise DataError(f"{path} phrases {entry['id']!r} twice (line {number}): keep one")
        found[entry["id"]] = entry["question"]
    if missing := sorted(known - set(found)):
        raise DataError(
            f"{path} lacks {', '.join(missing)}: phrase every question, so that the two languages are "
            "compared on the same needles"
        )
    return found


def compare_phrasings(
    retriever: Retriever, questions: Sequence[Question], other: Mapping[str, str], name: str = "dense"
) -> Phrasing:
    """Rank the chunks for each question in its English and in ``other``'s phrasing, with one retriever."""
    questions = list(questions)
    if missing := [q.id for q in questions if q.id not in other]:
        raise InputError(f"no other phrasing for {', '.join(missing)}: give one for every question")
    hits = needle_hits(retriever.chunks, questions)
    ranks = [
        first_hit_ranks(retriever.run(name, texts).ranking, hits)
        for texts in ([q.question for q in questions], [other[q.id] for q in questions])
    ]
    return Phrasing(
        retriever.strategy,
        name,
        tuple(q.id for q in questions),
        tuple(int(r) for r in ranks[0]),
        tuple(int(r) for r in ranks[1]),
    )
