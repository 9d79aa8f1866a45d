"""Honest citations: the model writes [n]; the server, which knows each fragment's offsets, writes the links.

A citation quotes the chunk's own ``content`` (never the embedded ``text``, whose header
and overlap are not where the citation says they are) and carries a locator that points at
exactly that range: ``#char=start,end`` into the canonical text (RFC 5147). Other media
have locators of their own: a PDF page (``#page=``), a media time range (``#t=``, W3C
Media Fragments), a spreadsheet sheet and A1 range.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass
from typing import Sequence

from ragkit.chunking import Chunk
from ragkit.corpus import Corpus

INSTRUCTION = ("Use only the numbered sources below to answer. Mark every claim with the number of its source, "
               "like [1]. If the sources do not answer the question, say so and write nothing else.")


@dataclass(frozen=True)
class CharRange:
    """Characters ``start`` to ``end`` of a text document's canonical text."""

    start: int
    end: int

    @property
    def fragment(self) -> str:
        return f"#char={self.start},{self.end}"

    @property
    def label(self) -> str:
        return f"characters {self.start:,}-{self.end:,}"


@dataclass(frozen=True)
class PdfPage:
    """One page of a PDF (PDF Open Parameters)."""

    page: int

    @property
    def fragment(self) -> str:
        return f"#page={self.page}"

    @property
    def label(self) -> str:
        return f"page {self.page}"


@dataclass(frozen=True)
class MediaRange:
    """A time range of audio or video, in seconds (W3C Media Fragments)."""

    start: float
    end: float

    @property
    def fragment(self) -> str:
        return f"#t={self.start:g},{self.end:g}"

    @property
    def label(self) -> str:
        return f"{_clock(self.start)}-{_clock(self.end)}"


@dataclass(frozen=True)
class SheetRange:
    """A range of one spreadsheet sheet in A1 notation (ragkit's fragment: no standard exists)."""

    sheet: str
    cells: str

    @property
    def fragment(self) -> str:
        return f"#sheet={self.sheet}&range={self.cells}"

    @property
    def label(self) -> str:
        return f"sheet '{self.sheet}', {self.cells}"


def _clock(seconds: float) -> str:
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}:{rest:04.1f}"


Locator = CharRange | PdfPage | MediaRange | SheetRange


@dataclass(frozen=True)
class Citation:
    """One numbered source as the server knows it."""

    index: int
    document_id: str
    document_name: str
    locator_label: str
    locator: Locator
    quote: str
    cosine_distance: float

    @property
    def fragment(self) -> str:
        """The locator's URL fragment, e.g. ``#char=25873,26272``."""
        return self.locator.fragment

    def to_dict(self) -> dict:
        """The chapter's citation fields, camelCase, for JSON."""
        return {"index": self.index, "documentId": self.document_id, "documentName": self.document_name,
                "locatorLabel": self.locator_label, "fragment": self.fragment, "quote": self.quote,
                "cosineDistance": self.cosine_distance}


def cite(index: int, chunk: Chunk, distance: float) -> Citation:
    """The citation for a retrieved chunk: its own content and its exact character range."""
    return Citation(index, chunk.doc_id, chunk.doc_title, chunk.section or "introduction",
                    CharRange(chunk.start, chunk.end), chunk.content, float(distance))


def build_context(question: str, hits: Sequence[tuple[Chunk, float]]) -> tuple[str, list[Citation]]:
    """The prompt the model sees and the citations it never sees, for (chunk, distance) hits in order."""
    citations = [cite(i, chunk, d) for i, (chunk, d) in enumerate(hits, 1)]
    sources = "\n\n".join(f"[{c.index}] {c.document_name} - {c.locator_label}\n{c.quote}" for c in citations)
    prompt = f"{INSTRUCTION}\n\nSOURCES\n\n{sources}\n\nQUESTION\n{question.strip()}"
    return prompt, citations


def verify(citation: Citation, corpus: Corpus) -> bool:
    """True when the locator slices the quote out of the document's canonical text exactly."""
    if not isinstance(citation.locator, CharRange):
        return False
    try:
        text = corpus[citation.document_id].text
    except KeyError:
        return False
    return text[citation.locator.start:citation.locator.end] == citation.quote


@dataclass(frozen=True)
class RenderedAnswer:
    """An answer with [n] markers turned into links; markers naming no source are listed, not linked."""

    text: str
    unknown: tuple[int, ...]


def render_links(answer_text: str, citations: Sequence[Citation], base_url: str) -> RenderedAnswer:
    """Replace each [n] by a Markdown link to its fragment; flag [n] with no such source."""
    by_index = {c.index: c for c in citations}
    unknown: list[int] = []

    def link(match: re.Match[str]) -> str:
        n = int(match.group(1))
        c = by_index.get(n)
        if c is None:
            unknown.append(n)
            return f"[{n}: no such source]"
        return f"[[{n}]]({base_url.rstrip('/')}/{c.document_id}.md{c.fragment} \"{c.document_name} - {c.locator_label}\")"

    text = re.sub(r"\[(\d+)\]", link, answer_text)
    return RenderedAnswer(text, tuple(unknown))


def text_fragment(quote: str, words: int = 4) -> str:
    """The text-fragment form (``#:~:text=start,end``) that browsers follow to scroll to a quote in an HTML page."""
    tokens = quote.split()
    encode = lambda ws: urllib.parse.quote(" ".join(ws), safe="").replace("-", "%2D")
    if len(tokens) <= 2 * words:
        return f"#:~:text={encode(tokens)}"
    return f"#:~:text={encode(tokens[:words])},{encode(tokens[-words:])}"


def citation_table(citations: Sequence[Citation]) -> list[dict]:
    """Rows for people: index, document, section, fragment, distance."""
    return [{"index": c.index, "document": c.document_id, "section": c.locator_label, "fragment": c.fragment,
             "distance": round(c.cosine_distance, 3)} for c in citations]


__all__ = ["CharRange", "Citation", "MediaRange", "PdfPage", "RenderedAnswer", "SheetRange",
           "build_context", "citation_table", "cite", "render_links", "text_fragment", "verify"]
