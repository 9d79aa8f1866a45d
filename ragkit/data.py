"""Ground truth: needle questions and out-of-domain queries, and a validator that reports every problem.

A needle is one short verbatim sentence of the corpus that answers its question. It
must occur exactly once in the whole corpus, in the document the question names, and in
prose: never in a heading, a fenced code block or a table row, where a chunker that copies
headings or a lucky table would grade itself.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ragkit.corpus import Corpus, outside_fences
from ragkit.errors import DataError
from ragkit.words import content_words

__all__ = [
    "EXPECTED",
    "MAX_SHARED",
    "NEEDLE_LENGTH",
    "OUT_OF_DOMAIN_KINDS",
    "DataProblem",
    "OutOfDomain",
    "Query",
    "Question",
    "ground_truth_summary",
    "load_out_of_domain",
    "load_questions",
    "queries",
    "read_out_of_domain",
    "read_questions",
    "shared_needle_words",
    "ticket_rule_breaches",
    "validate",
]

NEEDLE_LENGTH = (40, 250)
EXPECTED = {"questions": 32, "out_of_domain": 30, "adjacent": 21, "absurd": 9, "documents": 11}
OUT_OF_DOMAIN_KINDS = ("adjacent", "absurd")
MAX_SHARED = 2
"""The ticket rule: a phrasing may share at most this many distinctive words with its needle (exercise 3 checks it)."""


@dataclass(frozen=True)
class Question:
    """One ground truth, asked twice: in course English and as a support ticket."""

    id: str
    doc_id: str
    needle: str
    question: str
    ticket: str
    position: str = ""
    note: str = ""
    source: str = field(default="", compare=False)
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class OutOfDomain:
    """A query the corpus cannot answer: the honest reply is no answer."""

    id: str
    query: str
    kind: str
    topic: str
    note: str = ""
    source: str = field(default="", compare=False)
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class DataProblem:
    """One thing wrong with the ground truth: where, and what to fix."""

    source: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.message}" if self.line else f"{self.source}: {self.message}"


@dataclass(frozen=True)
class Query:
    """One of the 64 in-domain queries: a question id (its needle), which phrasing, and the text."""

    qid: str
    phrasing: str
    text: str

    @property
    def id(self) -> str:
        """The query's own id, e.g. ``q07/ticket``."""
        return f"{self.qid}/{self.phrasing}"


def _read(path: Path, required: tuple[str, ...], optional: tuple[str, ...], cls) -> tuple[list, list[DataProblem]]:
    records, problems = [], []
    name = str(path)
    try:
        # utf-8-sig: a byte order mark (Windows editors write one) is not part of the first line
        lines = Path(path).read_text(encoding="utf-8-sig").split("\n")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [DataProblem(name, 0, f"cannot read the file ({exc}): check the path and that it is UTF-8")]
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(
                DataProblem(name, number, f"malformed JSON ({exc.msg} at column {exc.colno}): one object per line")
            )
            continue
        except RecursionError:
            problems.append(DataProblem(name, number, "JSON nested too deeply to read: write one flat object per line"))
            continue
        if not isinstance(obj, dict):
            problems.append(DataProblem(name, number, 'not a JSON object: write {"id": ..., ...}'))
            continue
        typed = [
            f"{k} ({type(obj[k]).__name__} {_short(obj[k])})"
            for k in required
            if k in obj and not isinstance(obj[k], str)
        ]
        if typed:
            problems.append(
                DataProblem(name, number, f"field(s) {', '.join(typed)} not a string: put the value in quotes")
            )
            continue
        bad = [k for k in required if not obj.get(k, "").strip()]
        if bad:
            problems.append(DataProblem(name, number, f"missing or empty field(s) {', '.join(bad)}: fill them in"))
            continue
        values = {k: obj[k] for k in required} | {k: str(obj[k]) for k in optional if k in obj}
        records.append(cls(**values, source=name, line=number))
    repeated = _duplicates(records)
    dropped = {p.line for p in repeated}
    return [r for r in records if r.line not in dropped], problems + repeated


def _duplicates(records: Iterable[Question | OutOfDomain]) -> list[DataProblem]:
    """One problem per record whose id an earlier record already has: a repeated id would be counted twice."""
    problems: list[DataProblem] = []
    seen: dict[str, int] = {}
    for r in records:
        if r.id in seen:
            problems.append(
                DataProblem(
                    r.source,
                    r.line,
                    f"duplicate id {r.id!r} (first on line {seen[r.id]}): make ids "
                    "unique (a repeated question would be counted twice)",
                )
            )
        seen.setdefault(r.id, r.line)
    return problems


def _short(value: object) -> str:
    """A JSON value for a message, cut to 40 characters (a hostile value can be long or deeply nested)."""
    try:
        text = json.dumps(value)
    except (RecursionError, ValueError):
        text = "..."
    return text if len(text) <= 40 else text[:37] + "..."


def read_questions(path: str | Path) -> tuple[list[Question], list[DataProblem]]:
    """Questions and the problems met while reading them."""
    return _read(Path(path), ("id", "doc_id", "needle", "question", "ticket"), ("position", "note"), Question)


def read_out_of_domain(path: str | Path) -> tuple[list[OutOfDomain], list[DataProblem]]:
    """Out-of-domain queries and the problems met while reading them."""
    return _read(Path(path), ("id", "query", "kind", "topic"), ("note",), OutOfDomain)


def load_questions(path: str | Path) -> list[Question]:
    """Read questions; raise a DataError listing every unreadable line."""
    records, problems = read_questions(path)
    if problems:
        raise DataError("\n".join(map(str, problems)))
    return records


def load_out_of_domain(path: str | Path) -> list[OutOfDomain]:
    """Read out-of-domain queries; raise a DataError listing every unreadable line."""
    records, problems = read_out_of_domain(path)
    if problems:
        raise DataError("\n".join(map(str, problems)))
    return records


def queries(questions: Iterable[Question]) -> list[Query]:
    """The in-domain queries: every question in course English, then every ticket."""
    questions = list(questions)
    return [Query(q.id, "question", q.question) for q in questions] + [
        Query(q.id, "ticket", q.ticket) for q in questions
    ]


def _occurrences(corpus: Corpus, needle: str) -> list[tuple[str, int]]:
    found = []
    for doc in corpus.documents:
        at = doc.text.find(needle)
        while at != -1:
            found.append((doc.id, at))
            at = doc.text.find(needle, at + 1)
    return found


def _where(text: str, start: int, end: int) -> str | None:
    """Why a range is not prose: it touches a heading, a code block or a table row; else None."""
    prose = {pos: line for pos, line in outside_fences(text)}
    line_start = text.rfind("\n", 0, start) + 1
    pos = line_start
    while pos <= end and pos < len(text):
        line_end = text.find("\n", pos)
        line_end = len(text) if line_end == -1 else line_end
        if pos not in prose:
            return "a fenced code block"
        line = prose[pos]
        if line.lstrip().startswith("#"):
            return "a heading"
        if line.lstrip().startswith("|"):
            return "a table row"
        pos = line_end + 1
    return None


def validate(
    corpus: Corpus,
    questions: list[Question],
    out_of_domain: list[OutOfDomain],
    counts: dict[str, int] | None = EXPECTED,
) -> list[DataProblem]:
    """Every problem with the ground truth against a corpus (empty list: valid)."""
    problems: list[DataProblem] = []
    doc_ids = set(corpus.ids)
    for records in (questions, out_of_domain):
        problems += _duplicates(records)
    for q in questions:

        def p(msg: str, q: Question = q) -> None:
            problems.append(DataProblem(q.source, q.line, f"{q.id}: {msg}"))

        lo, hi = NEEDLE_LENGTH
        if not lo <= len(q.needle) <= hi:
            p(f"needle is {len(q.needle)} characters: pick one sentence of {lo} to {hi}")
        if q.doc_id not in doc_ids:
            p(f"unknown doc_id {q.doc_id!r}: use a file stem of the corpus ({', '.join(sorted(doc_ids)[:3])}, ...)")
        found = _occurrences(corpus, q.needle)
        if not found:
            p("needle not found verbatim in the corpus: copy the sentence exactly (spaces and punctuation too)")
            continue
        if len(found) > 1:
            where = ", ".join(f"{d} at {at}" for d, at in found)
            p(f"needle occurs {len(found)} times ({where}): choose a sentence that occurs once")
        if q.doc_id in doc_ids and all(d != q.doc_id for d, _ in found):
            p(f"needle is not in {q.doc_id} but in {found[0][0]}: fix doc_id")
        for d, at in found:
            if reason := _where(corpus[d].text, at, at + len(q.needle)):
                p(f"needle lies in {reason} of {d} at {at}: needles must be prose")
    for o in out_of_domain:
        if o.kind not in OUT_OF_DOMAIN_KINDS:
            problems.append(
                DataProblem(
                    o.source, o.line, f"{o.id}: kind {o.kind!r} must be one of {', '.join(OUT_OF_DOMAIN_KINDS)}"
                )
            )
    if counts:
        src_q = questions[0].source if questions else "questions"
        src_o = out_of_domain[0].source if out_of_domain else "out_of_domain"
        kinds = Counter(o.kind for o in out_of_domain)
        checks = [
            (src_q, len(questions), counts["questions"], "questions"),
            (src_o, len(out_of_domain), counts["out_of_domain"], "out-of-domain queries"),
            (src_o, kinds["adjacent"], counts["adjacent"], "adjacent out-of-domain queries"),
            (src_o, kinds["absurd"], counts["absurd"], "absurd out-of-domain queries"),
        ]
        for source, got, want, what in checks:
            if got != want:
                problems.append(DataProblem(source, 0, f"{got} {what}, expected {want}"))
        spread = len({q.doc_id for q in questions})
        if spread < counts["documents"]:
            problems.append(
                DataProblem(src_q, 0, f"needles come from {spread} documents, expected at least {counts['documents']}")
            )
    return problems


def ground_truth_summary(questions: list[Question], out_of_domain: list[OutOfDomain]) -> str:
    """Counts per document, needle lengths and out-of-domain kinds, as printable text."""
    per_doc = Counter(q.doc_id for q in questions)
    lengths = sorted(len(q.needle) for q in questions)
    kinds = Counter(o.kind for o in out_of_domain)
    topics = Counter(o.topic for o in out_of_domain)
    lines = [f"{len(questions)} questions ({2 * len(questions)} queries) over {len(per_doc)} documents:"]
    lines += [f"  {doc}: {n}" for doc, n in sorted(per_doc.items())]
    if lengths:
        lines.append(
            f"needle lengths: min {lengths[0]}, median {lengths[len(lengths) // 2]}, max {lengths[-1]} characters"
        )
    lines.append(
        f"{len(out_of_domain)} out-of-domain queries: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
    )
    lines.append("  topics: " + ", ".join(f"{t} {n}" for t, n in sorted(topics.items())))
    return "\n".join(lines)


def shared_needle_words(text: str, needle: str) -> list[str]:
    """Distinctive words a phrasing shares with its needle (the ticket rule allows at most MAX_SHARED)."""
    return sorted(content_words(text) & content_words(needle))


def ticket_rule_breaches(questions: Iterable[Question]) -> list[tuple[str, list[str]]]:
    """Dataset tickets that share more than MAX_SHARED distinctive words with their needle (validate warns)."""
    return [(q.id, words) for q in questions if len(words := shared_needle_words(q.ticket, q.needle)) > MAX_SHARED]
