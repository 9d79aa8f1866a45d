r"""Documents in: a folder of Markdown files becomes canonical texts, or failed documents with reasons.

The canonical text of a document is its file decoded as UTF-8, a leading BOM removed and
line endings normalised to ``\n``. Nothing else is changed: the ``# `` title line stays in
the canonical text, so a ``#char=start,end`` fragment points into the file as a reader
opens it. Every offset in ragkit refers to this text, counted in Unicode code points (Python's
``str`` indices), not in UTF-16 units as JavaScript counts: the two differ after any character
outside the Basic Multilingual Plane (most emoji). The chunkers never put the title line into a
chunk's ``content``: it is a heading, like the ``## `` lines.

Fenced code blocks are found by a CommonMark parser (markdown-it-py), never by a hand-written
rule: a line inside a fence is code, whatever it looks like. The title is the document's first
heading line outside a fence (``# `` or ``## ``), and only when that line is a ``# `` line:
whatever comes before it (a README's HTML banner, a badge line) is the untitled introduction.
A ``# `` line after the first heading is a section heading like ``## ``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt

from ragkit.errors import CorpusError, InputError
from ragkit.plumbing.bounded import open_folder, read_beneath
from ragkit.terminal import shown

__all__ = [
    "LOADER_VERSION",
    "Corpus",
    "Document",
    "DocumentStats",
    "FailedDocument",
    "canonical_text",
    "corpus_stats",
    "document_stats",
    "fenced_lines",
    "fences",
    "heading_lines",
    "load_corpus",
    "outside_fences",
    "paragraphs",
    "read_document",
    "title_span",
]

LOADER_VERSION = "md-utf8-1"
"""Version of the extractor; part of an index's stamp (bump it when canonical texts change)."""

_BLOCKS = MarkdownIt("commonmark").disable("inline")  # fences are block structure: inline parsing is not needed
_HEADING = re.compile(r"(#|##) (.+)")


@dataclass(frozen=True)
class Document:
    """One loaded document: its id (the file stem), title, canonical text and source path."""

    id: str
    title: str
    text: str
    path: Path

    @property
    def content_hash(self) -> str:
        """sha256 of the canonical text: what an index compares to see a change."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class FailedDocument:
    """A file that could not become a document, and why."""

    id: str
    path: Path
    reason: str


@dataclass(frozen=True)
class Corpus:
    """The documents of one folder, in file-name order, plus the files that failed."""

    folder: Path
    documents: tuple[Document, ...]
    failed: tuple[FailedDocument, ...] = field(default=())

    def __getitem__(self, doc_id: str) -> Document:
        for doc in self.documents:
            if doc.id == doc_id:
                return doc
        some = ", ".join(self.ids[:5]) + (", ..." if len(self.ids) > 5 else "")
        raise InputError(f"no document {doc_id!r} in {self.folder}: use one of its ids ({some})")

    def __len__(self) -> int:
        return len(self.documents)

    def __contains__(self, doc_id: object) -> bool:
        return any(doc.id == doc_id for doc in self.documents)

    def __iter__(self) -> Iterator[str]:
        """The documents' ids, in file-name order (a corpus reads like a mapping of id to document)."""
        return iter(self.ids)

    @property
    def ids(self) -> list[str]:
        """Document ids in corpus order."""
        return [d.id for d in self.documents]


def canonical_text(raw: bytes) -> str:
    r"""Decode bytes as UTF-8 (BOM removed) with ``\n`` line endings; raises UnicodeDecodeError."""
    text = raw.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


@functools.lru_cache(maxsize=64)
def fences(text: str) -> tuple[tuple[int, int], ...]:
    """The fenced code blocks of a text as line ranges ``(first, past last)``, fence lines included (CommonMark)."""
    return tuple((token.map[0], token.map[1]) for token in _BLOCKS.parse(text) if token.type == "fence" and token.map)


@functools.lru_cache(maxsize=64)
def fenced_lines(text: str) -> frozenset[int]:
    """Numbers (from 0) of the lines that belong to a fenced code block, fence lines included (CommonMark)."""
    return frozenset(line for first, last in fences(text) for line in range(first, last))


def paragraphs(text: str, lo: int = 0, hi: int | None = None) -> Iterator[tuple[int, int]]:
    r"""Spans of the paragraphs of ``text[lo:hi]``: runs with no blank line (``\n\n``), one newline at the end kept.

    A scan with ``str.find``, linear in time and constant in memory: a regular expression with a repeated
    group costs memory per character of a match, which a 25 MB paragraph turns into gigabytes.
    """
    hi = len(text) if hi is None else hi
    pos = lo
    while pos < hi:
        while pos < hi and text[pos] == "\n":
            pos += 1
        if pos >= hi:
            return
        end = text.find("\n\n", pos, hi)
        end = hi if end == -1 else end
        yield pos, end
        pos = end


def outside_fences(text: str) -> Iterator[tuple[int, str]]:
    """Yield ``(start, line)`` for every line that is not part of a fenced code block."""
    code = fenced_lines(text)
    pos = 0
    for number, line in enumerate(text.split("\n")):
        if number not in code:
            yield pos, line
        pos += len(line) + 1


def heading_lines(text: str) -> Iterator[tuple[int, int, int, str]]:
    """Yield ``(level, start, end, title)`` for every ``# `` and ``## `` line outside fences, end past its newline."""
    for start, line in outside_fences(text):
        if m := _HEADING.fullmatch(line):
            yield len(m.group(1)), start, min(start + len(line) + 1, len(text)), m.group(2).strip()


def title_span(text: str) -> tuple[int, int, str] | None:
    """The title line ``(start, end, title)``: the first titled heading line outside fences, if it is a ``# `` line."""
    for level, start, end, title in heading_lines(text):
        if title:
            return (start, end, title) if level == 1 else None
    return None


MAX_DOCUMENT = 16 * 2**20
"""Bytes one Markdown document may take (the course's longest takes about 40 KB): a FIFO, a device or a sparse file of
gigabytes named ``*.md`` is refused, never read."""


def read_document(path: Path, folder: int | None = None) -> Document | FailedDocument:
    """Load one Markdown file; a problem becomes a FailedDocument, never an exception.

    Read through ``ragkit.plumbing.bounded``: a regular file only, at most MAX_DOCUMENT bytes, never through a link
    but one to another file of the same folder. ``folder``: the folder's descriptor (``load_corpus``), which the file
    is opened in by its name; else ``path`` is opened as named (its last part never a link).
    """
    path = Path(path)
    try:
        path.name.encode("utf-8")  # bytes that are not UTF-8 are kept by Python as lone surrogates, which fail here
    except UnicodeEncodeError:
        return FailedDocument(
            shown(path.stem, None),
            path,
            f"the file name {shown(path.name, None)} is not valid UTF-8: rename the file (a "
            "document's id is its name, and it is written into links and indexes)",
        )
    name: str | Path = path.name if folder is not None else path
    target = _linked(folder, name)
    if target is not None:  # a link: followed only to a file of the same folder, by its name there
        here = (Path("."), path.parent, Path(os.path.realpath(path.parent)))
        if Path(target).parent not in here or Path(target).name in ("", ".", ".."):
            return FailedDocument(
                path.stem,
                path,
                f"a link to {shown(target, 400)}, outside the corpus folder: not read; copy the document into the "
                "folder",
            )
        name = Path(target).name if folder is not None else path.parent / Path(target).name
    try:
        raw = read_beneath(folder, name, MAX_DOCUMENT, "a document")[0]
    except InputError as exc:
        return FailedDocument(path.stem, path, f"cannot read the file ({exc}): check it exists and is readable")
    try:
        text = canonical_text(raw)
    except UnicodeDecodeError as exc:
        return FailedDocument(
            path.stem,
            path,
            f"not valid UTF-8 at byte {exc.start}: save the file as UTF-8 and load it again",
        )
    if not text.strip():
        return FailedDocument(path.stem, path, "empty file: add text or remove it from the folder")
    span = title_span(text)
    title = span[2] if span else path.stem
    return Document(path.stem, title, text, path)


def load_corpus(folder: str | Path) -> Corpus:
    """Load every ``*.md`` file of a folder, sorted by file name; one bad file never breaks the folder."""
    folder = Path(folder)
    if folder.is_file():
        raise CorpusError(
            f"{folder} is a file, not a folder: pass the folder that holds the Markdown (*.md) files "
            f"(for this file: {folder.parent})"
        )
    if not folder.is_dir():
        raise CorpusError(f"corpus folder {folder} does not exist: pass a folder of Markdown (*.md) files")
    fd = open_folder(folder, follow=True)  # the folder named; every document opened in it, by name
    try:
        names = sorted(n for n in os.listdir(fd) if n.endswith(".md") and not _is_folder(fd, n))
        if not names:
            raise CorpusError(f"corpus folder {folder} has no *.md files: add Markdown documents to it")
        documents: list[Document] = []
        failed: list[FailedDocument] = []
        for name in names:
            result = read_document(folder / name, fd)
            if isinstance(result, Document):
                documents.append(result)
            else:
                failed.append(result)
    finally:
        os.close(fd)
    return Corpus(folder, tuple(documents), tuple(failed))


def _linked(folder: int | None, name: str | Path) -> str | None:
    """Where ``name`` leads if it is a link, else None."""
    try:
        return os.readlink(name, dir_fd=folder)
    except OSError:
        return None


def _is_folder(folder: int, name: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=folder).st_mode)
    except OSError:
        return False


@dataclass(frozen=True)
class DocumentStats:
    """The shape of one document: what a chunker will meet in it."""

    id: str
    characters: int
    sections: int
    tables: int
    formulas: int
    code_blocks: int
    bullets: int
    paragraphs_over_512: int
    paragraphs_over_1200: int
    outside_bmp: int

    def __add__(self, other: DocumentStats) -> DocumentStats:
        values = [getattr(self, f) + getattr(other, f) for f in _COUNTS]
        return DocumentStats("total", *values)


_COUNTS = (
    "characters",
    "sections",
    "tables",
    "formulas",
    "code_blocks",
    "bullets",
    "paragraphs_over_512",
    "paragraphs_over_1200",
    "outside_bmp",
)
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*\|")
_FORMULA = re.compile(r"\$\$.+?\$\$|(?<![$\\])\$(?!\$)[^$\n]+?(?<![$\\])\$(?!\$)", re.S)
_OUTSIDE_BMP = re.compile("[\U00010000-\U0010ffff]")


def document_stats(doc: Document) -> DocumentStats:
    """Count sections, tables, formulas, code blocks, bullets and long paragraphs of one document."""
    prose_lines = list(outside_fences(doc.text))
    prose = "\n".join(line for _, line in prose_lines)
    lengths = [end - start for start, end in paragraphs(doc.text)]
    return DocumentStats(
        id=doc.id,
        characters=len(doc.text),
        sections=sum(line.startswith("## ") and bool(line[3:].strip()) for _, line in prose_lines),
        tables=sum(bool(_TABLE_RULE.match(line)) for _, line in prose_lines),
        formulas=len(_FORMULA.findall(prose)),
        code_blocks=len(fences(doc.text)),
        bullets=sum(line.lstrip().startswith(("- ", "* ")) for _, line in prose_lines),
        paragraphs_over_512=sum(n > 512 for n in lengths),
        paragraphs_over_1200=sum(n > 1200 for n in lengths),
        outside_bmp=len(_OUTSIDE_BMP.findall(doc.text)),
    )


def corpus_stats(corpus: Corpus) -> list[DocumentStats]:
    """One row per document, then the total."""
    rows = [document_stats(d) for d in corpus.documents]
    total = DocumentStats("total", *([0] * len(_COUNTS)))
    for row in rows:
        total = total + row
    return rows + [total]
