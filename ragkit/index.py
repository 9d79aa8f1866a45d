"""A stamped index on disk: every document carries the stamp it was embedded under, and its state.

Layout of an index folder::

    manifest.json            configuration stamp + one entry per document (status, hash, chunks, file)
    docs/<id>-<key>.npz      that document's vectors, chunk offsets and a checksum

A build or update writes new document files first and swaps ``manifest.json`` last, with
an atomic rename: interrupted at any point, the previous manifest and the files it names
are untouched. A search refuses to run while any document is stale (embedded under
another stamp, changed, removed or damaged): vectors of two stamps are not comparable,
and offsets into a changed text cite the wrong words.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zlib
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ragkit.chunking import OVERLAP, SIZE, Chunk, chunk_document, get_strategy
from ragkit.corpus import LOADER_VERSION, Corpus, Document
from ragkit.errors import CorruptIndex, InputError, StaleIndex
from ragkit.retrieval import cosine_distance, rank

PIPELINE_VERSION = "ragkit-1"
FORMAT = 1


@dataclass(frozen=True)
class Stamp:
    """Everything a document's vectors depend on; two different stamps never share a search."""

    model: str
    weights: str
    dimensions: int
    normalised: bool
    window: int
    backend: str
    pipeline: str
    strategy: str
    size: int
    overlap: int
    extractor: str

    def differences(self, other: "Stamp") -> list[str]:
        """Names of the fields that differ, e.g. ``['model', 'weights']``."""
        return [k for k, v in asdict(self).items() if getattr(other, k) != v]


def current_stamp(embedder, strategy: str = "E", size: int = SIZE, overlap: int = OVERLAP) -> Stamp:
    """The stamp that documents indexed now would get."""
    s = embedder.stamp
    return Stamp(s.model, s.weights, s.dimensions, s.normalised, s.window, s.backend, PIPELINE_VERSION,
                 get_strategy(strategy).letter, size, overlap, LOADER_VERSION)


@dataclass(frozen=True)
class Entry:
    """One document as the index recorded it."""

    id: str
    status: str
    content_hash: str = ""
    reason: str = ""
    chunks: int = 0
    file: str = ""
    stamp: Stamp | None = None


@dataclass(frozen=True)
class Status:
    """What an index holds compared with a corpus folder and the current configuration."""

    current: tuple[str, ...] = ()
    stale: dict[str, str] = field(default_factory=dict)
    new: tuple[str, ...] = ()
    failed: dict[str, str] = field(default_factory=dict)
    chunks: int = 0

    @property
    def searchable(self) -> bool:
        """True when no indexed document is stale."""
        return not self.stale

    def lines(self) -> list[str]:
        """Printable report."""
        out = [f"{len(self.current)} current documents, {self.chunks} chunks"]
        out += [f"  STALE  {d}: {why}" for d, why in sorted(self.stale.items())]
        out += [f"  NEW    {d}: not indexed yet" for d in self.new]
        out += [f"  FAILED {d}: {why}" for d, why in sorted(self.failed.items())]
        return out


def _manifest_path(folder: Path) -> Path:
    return Path(folder) / "manifest.json"


def read_manifest(folder: Path) -> tuple[Stamp | None, dict[str, Entry]]:
    """The index's configuration and entries; an unreadable manifest is a CorruptIndex with what to do."""
    path = _manifest_path(folder)
    if not path.is_file():
        return None, {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        config = Stamp(**data["config"])
        entries = {}
        for doc_id, e in data["documents"].items():
            stamp = e.pop("stamp", None)
            entries[doc_id] = Entry(**e, stamp=Stamp(**stamp) if stamp else None)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CorruptIndex(f"{path} is damaged ({type(exc).__name__}: {exc}): "
                           f"rebuild it with `python -m ragkit index build --out {folder}`") from exc
    return config, entries


def _write_manifest(folder: Path, config: Stamp, entries: dict[str, Entry], corpus: Corpus) -> None:
    data = {"format": FORMAT, "written": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "corpus": str(corpus.folder), "config": asdict(config),
            "documents": {d: {**asdict(e), "stamp": asdict(e.stamp) if e.stamp else None}
                          for d, e in sorted(entries.items())}}
    fd, tmp = tempfile.mkstemp(prefix=".manifest-", dir=folder)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, _manifest_path(folder))


def _load_vectors(folder: Path, entry: Entry) -> dict[str, np.ndarray]:
    path = Path(folder) / entry.file
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in ("vectors", "starts", "ends", "crc")}
    except Exception as exc:
        raise CorruptIndex(f"{path} (document {entry.id}) cannot be read ({type(exc).__name__}): "
                           "run `python -m ragkit index update` to re-embed it") from exc
    if len(arrays["vectors"]) != entry.chunks or zlib.crc32(arrays["vectors"].tobytes()) != int(arrays["crc"]):
        raise CorruptIndex(f"{path} (document {entry.id}) does not hold the {entry.chunks} vectors the manifest "
                           "records: run `python -m ragkit index update` to re-embed it")
    return arrays


def status(corpus: Corpus, folder: Path, stamp: Stamp) -> Status:
    """Compare an index with a corpus and a stamp: current, stale (with why), new and failed documents."""
    _, entries = read_manifest(folder)
    docs = {d.id: d for d in corpus.documents}
    current, stale, new, chunks = [], {}, [], 0
    failed = {f.id: f.reason for f in corpus.failed}
    for doc_id, entry in entries.items():
        if entry.status == "failed":
            if doc_id in docs:
                new.append(doc_id)  # it loads now: an update will index it
            continue
        doc = docs.get(doc_id)
        if doc is None:
            stale[doc_id] = "removed from the folder (or it no longer loads)" if doc_id not in failed else \
                f"no longer loads: {failed[doc_id]}"
        elif entry.stamp != stamp:
            stale[doc_id] = "embedded under another stamp (differs in " + \
                ", ".join(entry.stamp.differences(stamp) if entry.stamp else ["everything"]) + ")"
        elif entry.content_hash != doc.content_hash:
            stale[doc_id] = "changed since it was indexed"
        else:
            try:
                _load_vectors(folder, entry)
            except CorruptIndex:
                stale[doc_id] = f"damaged vector file ({Path(entry.file).name})"
                continue
            current.append(doc_id)
            chunks += entry.chunks
    new += [d for d in docs if d not in entries]
    return Status(tuple(sorted(current)), stale, tuple(sorted(new)), failed, chunks)


def _embed_document(doc: Document, stamp: Stamp, embedder, folder: Path) -> Entry:
    chunks = chunk_document(doc, stamp.strategy, stamp.size, stamp.overlap)
    vectors = embedder.encode([c.text for c in chunks], progress=False) if chunks else \
        np.zeros((0, stamp.dimensions), dtype=np.float32)
    key = hashlib.sha256(f"{asdict(stamp)}{doc.content_hash}".encode()).hexdigest()[:12]
    name = f"docs/{doc.id}-{key}.npz"
    (folder / "docs").mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".doc-", suffix=".npz", dir=folder / "docs")
    with os.fdopen(fd, "wb") as fh:
        np.savez(fh, vectors=vectors, starts=np.array([c.start for c in chunks], dtype=np.int64),
                 ends=np.array([c.end for c in chunks], dtype=np.int64),
                 crc=np.array(zlib.crc32(np.ascontiguousarray(vectors).tobytes()), dtype=np.uint64))
    os.replace(tmp, folder / name)
    return Entry(doc.id, "indexed", doc.content_hash, "", len(vectors), name, stamp)


def update(corpus: Corpus, folder: Path, embedder, strategy: str = "E", size: int = SIZE,
           overlap: int = OVERLAP, rebuild: bool = False) -> Status:
    """Re-embed only what is stale, new, failed or damaged; drop removed documents; swap the manifest last."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = current_stamp(embedder, strategy, size, overlap)
    before = Status() if rebuild else status(corpus, folder, stamp)
    _, old = ({}, {}) if rebuild else read_manifest(folder)
    entries = {d: old[d] for d in before.current}
    for doc in corpus.documents:
        if doc.id not in entries:
            entries[doc.id] = _embed_document(doc, stamp, embedder, folder)
    for failed in corpus.failed:
        entries[failed.id] = Entry(failed.id, "failed", reason=failed.reason)
    _write_manifest(folder, stamp, entries, corpus)
    keep = {e.file for e in entries.values() if e.file}
    for path in (folder / "docs").glob("*.npz"):
        if f"docs/{path.name}" not in keep:
            path.unlink(missing_ok=True)
    return status(corpus, folder, stamp)


def build(corpus: Corpus, folder: Path, embedder, strategy: str = "E", size: int = SIZE,
          overlap: int = OVERLAP) -> Status:
    """Index every document from scratch (the previous index stays usable until the manifest is swapped)."""
    return update(corpus, folder, embedder, strategy, size, overlap, rebuild=True)


class Index:
    """A searchable index: every document current under one stamp, or it refuses to open."""

    def __init__(self, corpus: Corpus, folder: Path, embedder):
        folder = Path(folder)
        config, entries = read_manifest(folder)
        if config is None:
            raise StaleIndex(f"no index in {folder}: build one with `python -m ragkit index build --out {folder}`")
        self.stamp = current_stamp(embedder, config.strategy, config.size, config.overlap)
        report = status(corpus, folder, self.stamp)
        if not report.searchable:
            names = ", ".join(f"{d} ({why})" for d, why in sorted(report.stale.items()))
            raise StaleIndex(f"index {folder} is stale for: {names}. Run "
                             f"`python -m ragkit index update --corpus {corpus.folder} --out {folder}`")
        self.embedder, self.status = embedder, report
        self.chunks: list[Chunk] = []
        blocks = []
        for doc_id in report.current:
            entry = entries[doc_id]
            arrays = _load_vectors(folder, entry)
            chunks = chunk_document(corpus[doc_id], config.strategy, config.size, config.overlap)
            if [(c.start, c.end) for c in chunks] != list(zip(arrays["starts"].tolist(), arrays["ends"].tolist())):
                raise StaleIndex(f"{doc_id}: the chunker no longer cuts it where it was indexed: run "
                                 f"`python -m ragkit index update --corpus {corpus.folder} --out {folder}`")
            self.chunks += chunks
            blocks.append(arrays["vectors"])
        self.vectors = np.vstack(blocks) if blocks else np.zeros((0, self.stamp.dimensions), dtype=np.float32)

    def search(self, query: str, k: int = 4) -> list[tuple[Chunk, float]]:
        """The k nearest chunks with their cosine distances."""
        if not query.strip():
            raise InputError("empty query: type what you are looking for")
        dist = cosine_distance(self.embedder.encode([query], progress=False), self.vectors)[0]
        return [(self.chunks[i], float(dist[i])) for i in rank(dist, higher_is_better=False)[:k]]
