"""Six chunking strategies from three ingredients: boundaries, header, overlap.

Every chunk keeps two texts. ``content`` is the chunk's own words, exactly
``document.text[start:end]``, and is what gets quoted. ``text`` is what gets embedded:
the header (strategies E and F), the overlap carried from the previous chunk
(B, D and F), then ``content``.

Three decisions where the chapter's reference chunker is silent or wrong:

- Text before the first ``## `` heading (a document's introduction) is a section with an
  empty title, chunked like any other; the reference drops it. The ``# `` title line is
  never chunked: like a ``## `` line it is a heading, not content.
- A ``## `` line inside a fenced code block is code, not a heading; the reference would end
  the section there. Fences are CommonMark's (``ragkit.corpus.fenced_lines``): ``~~~`` and
  ```````` fences, longer fences holding shorter ones, fences indented by up to three spaces.
- Only the first heading line can be the title (``ragkit.corpus.title_span``); a later ``# ``
  line starts a section like a ``## `` line does, where the reference would keep it as body text.

A heading on the document's last line (no newline after it) is skipped too, where the
reference would chunk it as body text. A stretch without a sentence end that is more than twice
the budget long (a log file's million short lines make one) is split into pieces of the budget, each
after its last line break or space when it has one (``split_at_budget``); the reference leaves it
whole, however long. Up to twice the budget it stays whole, as in the reference: the bundled
corpus's longest tables run to 1.5 budgets, and a table split in two loses its header row.
Everywhere else the boundaries strategies follow the reference rule chunk for chunk.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ragkit.corpus import Corpus, Document, fenced_lines, heading_lines, paragraphs, title_span
from ragkit.errors import InputError

__all__ = [
    "FLAWS",
    "OVERLAP",
    "SIZE",
    "STRATEGIES",
    "UNENDED",
    "Boundary",
    "Chunk",
    "Pathologies",
    "Section",
    "Strategy",
    "blind_window_start",
    "chunk_corpus",
    "chunk_document",
    "get_strategy",
    "pack",
    "pathologies",
    "sections",
    "split_at_budget",
    "starts_mid_sentence",
]

SIZE = 512
OVERLAP = 64
UNENDED = 2
"""A stretch without a sentence end is split once it is longer than this many budgets (see split_at_budget)."""

_SENTENCE = re.compile(r"[^.!?]*[.!?]*\s*")


@dataclass(frozen=True)
class Strategy:
    """One combination of the three ingredients."""

    letter: str
    boundaries: bool
    header: bool
    overlap: bool

    @property
    def name(self) -> str:
        """Readable name, e.g. ``boundaries + header + overlap``."""
        parts = ["boundaries" if self.boundaries else "blind"]
        parts += ["header"] * self.header + ["overlap"] * self.overlap
        return " + ".join(parts)


STRATEGIES: dict[str, Strategy] = {
    s.letter: s
    for s in (
        Strategy("A", boundaries=False, header=False, overlap=False),
        Strategy("B", boundaries=False, header=False, overlap=True),
        Strategy("C", boundaries=True, header=False, overlap=False),
        Strategy("D", boundaries=True, header=False, overlap=True),
        Strategy("E", boundaries=True, header=True, overlap=False),
        Strategy("F", boundaries=True, header=True, overlap=True),
    )
}


@dataclass(frozen=True)
class Chunk:
    """A fragment of one document: its own words plus what gets embedded with them."""

    doc_id: str
    doc_title: str
    section: str
    start: int
    end: int
    content: str
    header: str = ""
    overlap: str = ""
    overlap_contiguous: bool = False

    @property
    def text(self) -> str:
        """What is embedded: header, then the overlap carried from the previous chunk, then content."""
        return self.header + self.overlap + self.content

    @property
    def carried(self) -> str:
        """What the chunk carries to a reader of its text, header aside: overlap plus content."""
        return self.overlap + self.content

    @property
    def quoted(self) -> tuple[int, int, str]:
        """What a prompt quotes and a hit counts: (start, end, words) of one verifiable range of the document.

        The overlap is quoted with the content when it is the document's own text right before
        ``start`` (the gap was whitespace); otherwise the range is the content alone.
        """
        if self.overlap and self.overlap_contiguous:
            return self.start - len(self.overlap), self.end, self.carried
        return self.start, self.end, self.content


@dataclass(frozen=True)
class Section:
    """A section body: the text between two heading lines, as a range of the canonical text."""

    title: str
    heading_start: int
    start: int
    end: int


def get_strategy(strategy: str | Strategy) -> Strategy:
    """Look a strategy up by letter (``"A"`` to ``"F"``)."""
    if isinstance(strategy, Strategy):
        return strategy
    try:
        return STRATEGIES[str(strategy).upper()]
    except KeyError:
        raise InputError(f"unknown strategy {strategy!r}: use one of {', '.join(STRATEGIES)}") from None


def sections(text: str) -> list[Section]:
    """Split a canonical text at its heading lines (outside fences): the title line, ``## `` and later ``# `` lines."""
    title = title_span(text)
    headings = [
        (start, end, "" if title and start == title[0] else name) for _, start, end, name in heading_lines(text)
    ]
    out = []
    if not headings or headings[0][0] > 0:
        out.append(Section("", 0, 0, headings[0][0] if headings else len(text)))
    for i, (at, body_start, name) in enumerate(headings):
        end = headings[i + 1][0] if i + 1 < len(headings) else len(text)
        out.append(Section(name, at, body_start, end))
    return out


def pack(body: str, size: int = SIZE) -> list[tuple[int, int]]:
    """The boundaries rule on one section body: greedy paragraphs, sentences for a huge one."""
    ranges: list[tuple[int, int]] = []
    open_: tuple[int, int] | None = None
    for pf, pt in paragraphs(body):
        if pt - pf > size:
            if open_:
                ranges.append(open_)
                open_ = None
            cur: tuple[int, int] | None = None
            for sm in _SENTENCE.finditer(body, pf, pt):
                sf, st = sm.span()
                if sf == st:
                    continue
                if cur and st - cur[0] > size:
                    ranges.append(cur)
                    cur = None
                cur = (cur[0], st) if cur else (sf, st)
            if cur:
                ranges.append(cur)
            continue
        if open_ and pt - open_[0] > size:
            ranges.append(open_)
            open_ = None
        open_ = (open_[0], pt) if open_ else (pf, pt)
    if open_:
        ranges.append(open_)
    return ranges


def split_at_budget(body: str, start: int, end: int, size: int = SIZE) -> list[tuple[int, int]]:
    """A range without a sentence end and over ``UNENDED`` budgets, split into pieces of at most ``size``; others whole.

    Each piece ends after the last line break inside the budget, else after the last space, else at the budget.
    """
    if end - start <= UNENDED * size or any(mark in body[start:end] for mark in ".!?"):
        return [(start, end)]
    pieces = []
    while end - start > size:
        limit = start + size
        at = body.rfind("\n", start + 1, limit)
        at = body.rfind(" ", start + 1, limit) if at == -1 else at
        at = limit if at == -1 else at + 1
        pieces.append((start, at))
        start = at
    return pieces + [(start, end)]


def _trimmed(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The range without surrounding whitespace, or None when nothing is left."""
    raw = text[start:end]
    content = raw.strip()
    if not content:
        return None
    lead = len(raw) - len(raw.lstrip())
    return start + lead, start + lead + len(content)


def _boundaries(text: str, size: int) -> Iterable[tuple[str, int, int]]:
    for sec in sections(text):
        body = text[sec.start : sec.end]
        # the budget is the chunk's: whitespace around a packed range is trimmed away, so it never forces a boundary
        for range_ in filter(None, (_trimmed(body, *packed) for packed in pack(body, size))):
            for f, t in split_at_budget(body, *range_, size):
                if span := _trimmed(text, sec.start + f, sec.start + t):
                    yield sec.title, *span


def _blind(text: str, size: int) -> Iterable[tuple[str, int, int]]:
    secs = sections(text)
    starts = [s.heading_start for s in secs]
    title = title_span(text)
    stretches = [(0, len(text))] if not title else [(0, title[0]), (title[1], len(text))]
    for lo, hi in stretches:
        for at in range(lo, hi, size):
            if span := _trimmed(text, at, min(at + size, hi)):
                owner = bisect.bisect_right(starts, span[0]) - 1
                yield (secs[owner].title if owner >= 0 else ""), *span


def blind_window_start(document: Document, position: int, size: int = SIZE) -> int:
    """Where the blind window holding a character starts (windows restart after the title line)."""
    title = title_span(document.text)
    lo = title[1] if title and position >= title[1] else 0
    return lo + (position - lo) // size * size


def chunk_document(
    document: Document, strategy: str | Strategy = "E", size: int = SIZE, overlap: int = OVERLAP
) -> list[Chunk]:
    """Chunk one document with one strategy; ``document.text[c.start:c.end] == c.content`` always."""
    strat = get_strategy(strategy)
    if size < 1 or overlap < 0:
        raise InputError(f"size must be at least 1 and overlap at least 0 (got {size}, {overlap})")
    text = document.text
    spans = _boundaries(text, size) if strat.boundaries else _blind(text, size)
    chunks: list[Chunk] = []
    for section, start, end in spans:
        header = ""
        if strat.header:
            header = f"[{document.title} > {section}]\n" if section else f"[{document.title}]\n"
        carried = ""
        if strat.overlap and chunks and overlap:
            prev = chunks[-1]
            gap = text[prev.end : start]
            carried = prev.content[-overlap:] + (gap if not gap.strip() else "\n")
        chunks.append(
            Chunk(
                document.id,
                document.title,
                section,
                start,
                end,
                text[start:end],
                header,
                carried,
                text[start - len(carried) : start] == carried,
            )
        )
    return chunks


def chunk_corpus(
    corpus: Corpus, strategy: str | Strategy = "E", size: int = SIZE, overlap: int = OVERLAP
) -> list[Chunk]:
    """Chunk every loaded document of a corpus, in corpus order."""
    return [c for doc in corpus.documents for c in chunk_document(doc, strategy, size, overlap)]


_DECIMAL = re.compile(r"\d+\.\d+")
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_HEADING_LINE = re.compile(r"#{1,6} \S.*")
_CLOSERS = ")]\"'*_"


@dataclass(frozen=True)
class Boundary:
    """The boundary between two neighbouring chunks of one document."""

    before: Chunk
    after: Chunk


FLAWS = (
    "only a heading",
    "ends inside a number",
    "starts inside a number",
    "ends inside code",
    "starts inside code",
    "starts mid-sentence",
)
"""What one chunk can show of the pathologies, as ``Pathologies.of`` names them (in this order)."""


@dataclass(frozen=True)
class Pathologies:
    """What the reference rule costs: chunks and boundaries a reader would call broken, found in one strategy.

    The chapter calls a boundary inside a number or code a cut inside it (``decimal_cuts``, ``code_cuts``).
    """

    strategy: str
    chunks: int
    heading_only: tuple[Chunk, ...]
    decimal_cuts: tuple[Boundary, ...]
    code_cuts: tuple[Boundary, ...]
    mid_sentence: tuple[Chunk, ...]

    def counts(self) -> dict[str, int]:
        """One row for a table: the count of each pathology."""
        return {
            "chunks": self.chunks,
            "heading-only chunks": len(self.heading_only),
            "cuts inside a decimal number": len(self.decimal_cuts),
            "cuts inside code": len(self.code_cuts),
            "chunks starting mid-sentence": len(self.mid_sentence),
        }

    def of(self, doc_id: str, start: int) -> tuple[str, ...]:
        """The flaws of the chunk of ``doc_id`` starting at ``start``: names from ``FLAWS``, in its order (none: ())."""

        def here(chunk: Chunk) -> bool:
            return chunk.doc_id == doc_id and chunk.start == start

        shown = {
            "only a heading": any(map(here, self.heading_only)),
            "ends inside a number": any(here(b.before) for b in self.decimal_cuts),
            "starts inside a number": any(here(b.after) for b in self.decimal_cuts),
            "ends inside code": any(here(b.before) for b in self.code_cuts),
            "starts inside code": any(here(b.after) for b in self.code_cuts),
            "starts mid-sentence": any(map(here, self.mid_sentence)),
        }
        return tuple(flaw for flaw in FLAWS if shown[flaw])


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Inline code spans and every line of a fenced block, fence lines included (CommonMark's fences)."""
    spans = [m.span() for m in _INLINE_CODE.finditer(text)]
    code, pos = fenced_lines(text), 0
    for number, line in enumerate(text.split("\n")):
        if number in code:
            spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return spans


class _Spans:
    """Ranges of a text, asked whether one has characters on both sides of a boundary (a log-time look-up)."""

    def __init__(self, spans: Iterable[tuple[int, int]]):
        ordered = sorted(spans)
        self.starts = [lo for lo, _ in ordered]
        self.reach, furthest = [], -1  # reach[i]: the furthest end among the first i + 1 spans
        for _, hi in ordered:
            furthest = max(furthest, hi)
            self.reach.append(furthest)

    def split_by(self, boundary: Boundary) -> bool:
        """True when one span starts before the first chunk ends and ends after the second starts."""
        n = bisect.bisect_left(self.starts, boundary.before.end)
        return n > 0 and self.reach[n - 1] > boundary.after.start


def starts_mid_sentence(chunk: Chunk, text: str) -> bool:
    """True unless the chunk opens a line, or follows a sentence end (``.!?``) and a space."""
    at = chunk.start  # walk back from the chunk: copying the text before it would make pathologies quadratic
    while at > 0 and text[at - 1] in " \t":
        at -= 1
    if at == 0 or text[at - 1] == "\n":
        return False
    if at == chunk.start:
        return True
    while at > 0 and text[at - 1] in _CLOSERS:
        at -= 1
    return text[at - 1 : at] not in (".", "!", "?")


def pathologies(chunks: Sequence[Chunk], corpus: Corpus, strategy: str = "") -> Pathologies:
    """Count heading-only chunks, cuts inside a decimal number or code, and chunks starting mid-sentence."""
    heading_only, decimal_cuts, code_cuts, mid_sentence = [], [], [], []
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    for doc_id, own in by_doc.items():
        text = corpus[doc_id].text
        decimals = _Spans(m.span() for m in _DECIMAL.finditer(text))
        code = _Spans(_code_spans(text))
        for c in own:
            lines = [line for line in c.content.split("\n") if line.strip()]
            if all(_HEADING_LINE.fullmatch(line.strip()) for line in lines):
                heading_only.append(c)
            if starts_mid_sentence(c, text):
                mid_sentence.append(c)
        for before, after in itertools.pairwise(own):
            boundary = Boundary(before, after)
            if decimals.split_by(boundary):
                decimal_cuts.append(boundary)
            if code.split_by(boundary):
                code_cuts.append(boundary)
    return Pathologies(
        strategy, len(chunks), tuple(heading_only), tuple(decimal_cuts), tuple(code_cuts), tuple(mid_sentence)
    )
