"""A stamped index on disk: one SQLite database of documents, their chunks and vectors, under a stamp.

Inside the ``--out`` folder, ``index.sqlite`` holds four tables: ``meta`` (format, corpus,
time written), ``stamps`` (everything a vector depends on), ``documents`` (id, path,
content hash, status indexed/failed with its reason, chunk count, the stamp it was
embedded under) and ``chunks`` (offsets, section, header, overlap and the float32 vector).

``build`` and ``update`` each run in ONE transaction opened with ``BEGIN IMMEDIATE``: a
second writer waits up to a stated timeout and then stops with a clear message, and a
crash (even kill -9) at any point leaves the last committed index, because SQLite commits
all of a transaction or none of it. Readers see a consistent snapshot meanwhile. A search
refuses to run while any document is stale (embedded under another stamp, changed or
removed): vectors of two stamps are not comparable, and offsets into a changed text cite
the wrong words. ragkit never deletes a file it did not write: ``--out`` naming a non-empty
folder without an index is refused.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from ragkit.chunking import OVERLAP, SIZE, Chunk, chunk_document, get_strategy
from ragkit.corpus import LOADER_VERSION, Corpus, Document
from ragkit.embedding import ModelStamp
from ragkit.errors import CorruptIndex, IndexBusy, InputError, StaleIndex
from ragkit.plumbing.storage import BUSY_SECONDS, connect, is_busy, move_aside
from ragkit.retrieval import Encoder, cosine_distance, rank
from ragkit.terminal import shown

__all__ = [
    "INDEX_FILE",
    "INDEX_FORMAT",
    "PIPELINE_VERSION",
    "Index",
    "IndexEntry",
    "IndexStatus",
    "Stamp",
    "build",
    "configured",
    "current_stamp",
    "read_index",
    "status",
    "tables",
    "update",
]

PIPELINE_VERSION = "ragkit-1"
INDEX_FILE = "index.sqlite"
INDEX_FORMAT = "ragkit-index-2"
_OURS = {INDEX_FILE, f"{INDEX_FILE}-wal", f"{INDEX_FILE}-shm", f"{INDEX_FILE}-journal"}
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS stamps (
    id INTEGER PRIMARY KEY,
    model TEXT NOT NULL, weights TEXT NOT NULL, dimensions INTEGER NOT NULL, normalised INTEGER NOT NULL,
    window INTEGER NOT NULL, backend TEXT NOT NULL, pipeline TEXT NOT NULL, strategy TEXT NOT NULL,
    size INTEGER NOT NULL, overlap INTEGER NOT NULL, extractor TEXT NOT NULL,
    UNIQUE (model, weights, dimensions, normalised, window, backend, pipeline, strategy, size, overlap, extractor));
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, path TEXT NOT NULL, content_hash TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('indexed', 'failed')), reason TEXT NOT NULL,
    chunks INTEGER NOT NULL, stamp INTEGER REFERENCES stamps (id));
CREATE TABLE IF NOT EXISTS chunks (
    document TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE, ord INTEGER NOT NULL,
    start INTEGER NOT NULL, "end" INTEGER NOT NULL, section TEXT NOT NULL, header TEXT NOT NULL,
    overlap TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (document, ord));
"""


@dataclass(frozen=True)
class Stamp:
    """Everything a document's vectors depend on: the embedding model's stamp plus how the text was chunked."""

    embedding: ModelStamp
    pipeline: str
    strategy: str
    size: int
    overlap: int
    extractor: str

    def flat(self) -> dict[str, object]:
        """One level of named fields, as the ``stamps`` table stores them."""
        return {**asdict(self.embedding), **{f.name: getattr(self, f.name) for f in fields(self)[1:]}}

    @classmethod
    def from_flat(cls, row: dict) -> Stamp:
        """The inverse of ``flat``."""
        model = ModelStamp(**{f.name: row[f.name] for f in fields(ModelStamp)})
        model = ModelStamp(
            model.model, model.weights, int(model.dimensions), bool(model.normalised), int(model.window), model.backend
        )
        return cls(model, row["pipeline"], row["strategy"], int(row["size"]), int(row["overlap"]), row["extractor"])

    def differences(self, other: Stamp) -> list[str]:
        """Names of the fields that differ, e.g. ``['model', 'weights']``."""
        mine, theirs = self.flat(), other.flat()
        return [k for k in mine if mine[k] != theirs[k]]


def current_stamp(embedder: Encoder, strategy: str = "E", size: int = SIZE, overlap: int = OVERLAP) -> Stamp:
    """The stamp that documents indexed now would get."""
    return Stamp(embedder.stamp, PIPELINE_VERSION, get_strategy(strategy).letter, size, overlap, LOADER_VERSION)


@dataclass(frozen=True)
class IndexEntry:
    """One document as the index recorded it."""

    id: str
    status: str
    content_hash: str = ""
    reason: str = ""
    chunks: int = 0
    path: str = ""
    stamp: Stamp | None = None


@dataclass(frozen=True)
class IndexStatus:
    """What an index holds compared with a corpus folder and the current configuration."""

    current: tuple[str, ...] = ()
    stale: dict[str, str] = field(default_factory=dict)
    new: tuple[str, ...] = ()
    failed: dict[str, str] = field(default_factory=dict)
    chunks: int = 0
    notes: tuple[str, ...] = ()

    @property
    def searchable(self) -> bool:
        """True when no indexed document is stale."""
        return not self.stale

    def lines(self) -> list[str]:
        """Printable report."""
        out = [f"{len(self.current):,} current documents, {self.chunks:,} chunks"]
        out += [f"  STALE  {shown(d, None)}: {why}" for d, why in sorted(self.stale.items())]
        out += [f"  NEW    {shown(d, None)}: not indexed yet" for d in self.new]
        out += [f"  FAILED {shown(d, None)}: {why}" for d, why in sorted(self.failed.items())]
        return out + [f"note: {n}" for n in self.notes]


def _advice(folder: Path, corpus: Corpus | None, action: str = "build") -> str:
    where = f" --corpus {corpus.folder}" if corpus is not None else " --corpus <your folder>"
    return f"`python -m ragkit index {action}{where} --out {folder}`"


def _open(folder: Path, corpus: Corpus | None, readonly: bool = True) -> sqlite3.Connection | None:
    """The index's database, or None when the folder holds none; an old or damaged index is a clear error."""
    folder = Path(folder)
    path = folder / INDEX_FILE
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--out {folder} is a file, not a folder: name a folder for the index")
    if not path.is_file():
        return None
    try:
        conn = connect(path, readonly=readonly)
    except sqlite3.DatabaseError as exc:
        raise CorruptIndex(f"{path} is damaged ({exc}): {_rebuild(folder, corpus)}") from exc
    try:
        if not conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0]:
            conn.close()  # an empty database: a first build that never committed
            return None
        found = conn.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
        check = conn.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise CorruptIndex(f"{path} is damaged ({check}): {_rebuild(folder, corpus)}")
        if found is None or found[0] != INDEX_FORMAT:
            raise CorruptIndex(
                f"{path} is not a ragkit index of format {INDEX_FORMAT} (found {found[0] if found else 'none'}): "
                f"this ragkit reads no other format; rebuild it with {_advice(folder, corpus)} (the old "
                "file is kept beside the new one)"
            )
    except sqlite3.DatabaseError as exc:
        conn.close()  # closed before anyone sets the file aside: it is never renamed under an open connection
        raise CorruptIndex(f"{path} is damaged ({exc}): {_rebuild(folder, corpus)}") from exc
    except CorruptIndex:
        conn.close()
        raise
    try:
        _check_tables(conn)
    except (CorruptIndex, sqlite3.DatabaseError) as exc:
        conn.close()
        raise CorruptIndex(f"{path} is damaged ({exc}): {_rebuild(folder, corpus)}") from exc
    return conn


def _rebuild(folder: Path, corpus: Corpus | None) -> str:
    """What to do about a damaged index."""
    return f"rebuild it with {_advice(folder, corpus)} (the damaged file is kept beside the new one)"


def _columns(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """Each table's column names, as a database holds them."""
    names = [n for (n,) in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")]
    return {n: [row[1] for row in conn.execute(f'PRAGMA table_info("{n}")')] for n in names}


def _schema_columns() -> dict[str, list[str]]:
    """The tables and columns ``_SCHEMA`` makes, read from an empty database made with it."""
    empty = sqlite3.connect(":memory:")
    try:
        empty.executescript(_SCHEMA)
        return _columns(empty)
    finally:
        empty.close()


def _check_tables(conn: sqlite3.Connection) -> None:
    """Raise CorruptIndex when a table or column of the schema is missing, or a stamp row cannot be read."""
    found = _columns(conn)
    for table, columns in _EXPECTED.items():
        if found.get(table) != columns:
            raise CorruptIndex(
                f"table {table} is missing"
                if table not in found
                else f"table {table} has columns {', '.join(found[table])}, not {', '.join(columns)}"
            )
    cur = conn.execute("SELECT * FROM stamps")
    names = [c[0] for c in cur.description]
    for row in cur:
        _stamp_from(dict(zip(names, row)))
    config = conn.execute("SELECT value FROM meta WHERE name = 'stamp'").fetchone()
    if config is not None and not str(config[0]).isdigit():
        raise CorruptIndex(f"the configuration names stamp {str(config[0])[:40]!r}, not a stamp's number")


def _stamp_from(row: dict) -> Stamp:
    """A stamps row as a Stamp; a malformed row (a text where a number belongs, a NULL) is CorruptIndex."""
    try:
        stamp = Stamp.from_flat(row)
        values = stamp.flat()
    except (KeyError, TypeError, ValueError) as exc:
        raise CorruptIndex(f"stamp {row.get('id')} cannot be read ({exc})") from None
    if not all(isinstance(v, (str, int)) for v in values.values()):
        raise CorruptIndex(f"stamp {row.get('id')} holds a value of the wrong type")
    return stamp


def _stamp_row(conn: sqlite3.Connection, stamp_id: int | None) -> Stamp | None:
    if stamp_id is None:
        return None
    cur = conn.execute("SELECT * FROM stamps WHERE id = ?", (stamp_id,))
    row = cur.fetchone()
    return _stamp_from(dict(zip([c[0] for c in cur.description], row))) if row else None


def _read(conn: sqlite3.Connection) -> tuple[Stamp | None, dict[str, IndexEntry], dict[str, tuple[int, int]]]:
    """The configuration stamp, the entries, and per document (chunk rows, well-formed vectors)."""
    config = conn.execute("SELECT value FROM meta WHERE name = 'stamp'").fetchone()
    stamps: dict[int, Stamp | None] = {}
    entries = {}
    for doc_id, path, content_hash, status_, reason, chunks, stamp_id in conn.execute(
        "SELECT id, path, content_hash, status, reason, chunks, stamp FROM documents ORDER BY id"
    ):
        if stamp_id not in stamps:
            stamps[stamp_id] = _stamp_row(conn, stamp_id)
        entries[doc_id] = IndexEntry(doc_id, status_, content_hash, reason, chunks, path, stamps[stamp_id])
    stamp = _stamp_row(conn, int(config[0])) if config else None
    width = stamp.embedding.dimensions * 4 if stamp else 0
    rows = {
        d: (n, good)
        for d, n, good in conn.execute(
            "SELECT document, count(*), sum(length(vector) = ?) FROM chunks GROUP BY document", (width,)
        )
    }
    return stamp, entries, rows


def read_index(folder: Path, corpus: Corpus | None = None) -> tuple[Stamp | None, dict[str, IndexEntry]]:
    """The index's configuration stamp and its entries (None and {} where there is no index)."""
    conn = _open(folder, corpus)
    if conn is None:
        return None, {}
    try:
        stamp, entries, _ = _read(conn)
    finally:
        conn.close()
    return stamp, entries


def _status(
    corpus: Corpus, stamp: Stamp, entries: dict[str, IndexEntry], rows: dict[str, tuple[int, int]]
) -> IndexStatus:
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
            stale[doc_id] = (
                f"no longer loads: {failed[doc_id]}"
                if doc_id in failed
                else "removed from the folder (or it no longer loads)"
            )
        elif entry.stamp != stamp:
            stale[doc_id] = (
                "embedded under another stamp (differs in "
                + ", ".join(entry.stamp.differences(stamp) if entry.stamp else ["everything"])
                + ")"
            )
        elif entry.content_hash != doc.content_hash:
            stale[doc_id] = "changed since it was indexed"
        elif rows.get(doc_id, (0, 0)) != (entry.chunks, entry.chunks):
            stale[doc_id] = f"damaged: {entry.chunks} vectors recorded, {rows.get(doc_id, (0, 0))[1]} found"
        else:
            current.append(doc_id)
            chunks += entry.chunks
    new += [d for d in docs if d not in entries]
    return IndexStatus(tuple(sorted(current)), stale, tuple(sorted(new)), failed, chunks)


def status(corpus: Corpus, folder: Path, stamp: Stamp) -> IndexStatus:
    """Compare an index with a corpus and a stamp: current, stale (with why), new and failed documents."""
    conn = _open(folder, corpus)
    if conn is None:
        return IndexStatus(new=tuple(sorted(corpus.ids)), failed={f.id: f.reason for f in corpus.failed})
    try:
        _, entries, rows = _read(conn)
    finally:
        conn.close()
    return _status(corpus, stamp, entries, rows)


def configured(
    folder: Path,
    strategy: str | None = None,
    size: int | None = None,
    overlap: int | None = None,
    corpus: Corpus | None = None,
    rebuild: bool = False,
) -> tuple[str, int, int]:
    """Strategy, size and overlap to use: what was asked, else what the index was built with, else the defaults.

    A damaged index raises CorruptIndex, unless it is about to be rebuilt (and set aside): then the defaults.
    """
    try:
        stamp, _ = read_index(folder, corpus) if (Path(folder) / INDEX_FILE).is_file() else (None, {})
    except CorruptIndex:
        if not rebuild:
            raise
        stamp = None
    return (
        strategy or (stamp.strategy if stamp else "E"),
        size if size is not None else (stamp.size if stamp else SIZE),
        overlap if overlap is not None else (stamp.overlap if stamp else OVERLAP),
    )


def _prepare_folder(folder: Path, corpus: Corpus) -> None:
    """Create ``--out`` when missing; refuse a non-empty folder that holds no ragkit index, touching nothing."""
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--out {folder} is a file, not a folder: name a new or empty folder for the index")
    folder.mkdir(parents=True, exist_ok=True)
    if (folder / INDEX_FILE).exists():
        return
    foreign = sorted(p.name for p in folder.iterdir() if p.name not in _OURS)
    if foreign:
        some = ", ".join(shown(name) for name in foreign[:3]) + (" ..." if len(foreign) > 3 else "")
        raise InputError(
            f"--out {folder} is not empty ({some}) and holds no ragkit index: name a new or empty "
            "folder (ragkit never deletes files it did not write)"
        )


def _stamp_id(conn: sqlite3.Connection, stamp: Stamp) -> int:
    flat = stamp.flat()
    names = ", ".join(flat)
    conn.execute(f"INSERT OR IGNORE INTO stamps ({names}) VALUES ({', '.join('?' * len(flat))})", tuple(flat.values()))
    where = " AND ".join(f"{k} = ?" for k in flat)
    return int(conn.execute(f"SELECT id FROM stamps WHERE {where}", tuple(flat.values())).fetchone()[0])


def _write_document(conn: sqlite3.Connection, doc: Document, stamp: Stamp, stamp_id: int, embedder: Encoder) -> None:
    """Chunk and embed one document and replace its rows (inside the caller's transaction)."""
    chunks = chunk_document(doc, stamp.strategy, stamp.size, stamp.overlap)
    vectors = (
        embedder.encode([c.text for c in chunks], progress=False)
        if chunks
        else np.zeros((0, stamp.embedding.dimensions), dtype=np.float32)
    )
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    conn.execute("DELETE FROM chunks WHERE document = ?", (doc.id,))
    conn.execute(
        "INSERT OR REPLACE INTO documents VALUES (?, ?, ?, 'indexed', '', ?, ?)",
        (doc.id, shown(str(doc.path), None), doc.content_hash, len(chunks), stamp_id),
    )
    conn.executemany(
        "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (doc.id, i, c.start, c.end, c.section, c.header, c.overlap, v.tobytes())
            for i, (c, v) in enumerate(zip(chunks, vectors))
        ],
    )


def _commit(conn: sqlite3.Connection) -> None:
    """Make the transaction durable: before this returns, nothing of it is visible; after it, all of it is."""
    conn.execute("COMMIT")


def _set_aside_if_damaged(folder: Path, corpus: Corpus) -> tuple[str, ...]:
    """Before a build: a damaged index file is renamed out of the way (kept, never deleted)."""
    path = folder / INDEX_FILE
    if not path.exists():
        return ()
    try:
        conn = _open(folder, corpus)
    except CorruptIndex as exc:
        aside = move_aside(path)
        return (f"{path.name} was damaged ({exc.__cause__ or 'it failed its check'}); kept as {aside.name}",)
    if conn is not None:
        conn.close()
    return ()


def _writer(folder: Path, corpus: Corpus, wait: float) -> sqlite3.Connection:
    """The index's database opened for writing, its write lock taken (BEGIN IMMEDIATE)."""
    path = folder / INDEX_FILE
    if path.exists():
        conn = _open(folder, corpus)  # a damaged or foreign file stops here with what to do
        if conn is not None:
            conn.close()
    try:
        conn = connect(path, timeout=wait)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("BEGIN IMMEDIATE")
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)  # inside the transaction: a first build killed early leaves an empty file
    except sqlite3.OperationalError as exc:
        if is_busy(exc):
            raise IndexBusy(
                f"another ragkit is writing the index {folder} (waited {wait:.0f} s): let it finish, "
                "then run the command again"
            ) from exc
        raise InputError(
            f"cannot write the index in {folder} ({exc}): check the folder is writable and the disk has space"
        ) from exc
    return conn


def update(
    corpus: Corpus,
    folder: Path,
    embedder: Encoder,
    strategy: str = "E",
    size: int = SIZE,
    overlap: int = OVERLAP,
    rebuild: bool = False,
    wait: float = BUSY_SECONDS,
) -> IndexStatus:
    """Re-embed only what is stale, new, failed or damaged and drop removed documents, in one transaction."""
    folder = Path(folder)
    _prepare_folder(folder, corpus)
    stamp = current_stamp(embedder, strategy, size, overlap)
    notes = _set_aside_if_damaged(folder, corpus) if rebuild else ()
    conn = _writer(folder, corpus, wait)
    try:
        if rebuild:
            conn.execute("DELETE FROM chunks")
            conn.execute("DELETE FROM documents")
        _, entries, rows = _read(conn)
        before = _status(corpus, stamp, entries, rows)
        stamp_id = _stamp_id(conn, stamp)
        keep = set(before.current)
        for doc_id in entries:
            if doc_id not in keep:
                conn.execute("DELETE FROM chunks WHERE document = ?", (doc_id,))
                conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
        for doc in corpus.documents:
            if doc.id not in keep:
                _write_document(conn, doc, stamp, stamp_id, embedder)
        conn.executemany(
            "INSERT OR REPLACE INTO documents VALUES (?, ?, '', 'failed', ?, 0, NULL)",
            [(f.id, shown(str(f.path), None), f.reason) for f in corpus.failed],
        )
        written = datetime.now(UTC).isoformat(timespec="seconds")
        conn.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            [
                ("format", INDEX_FORMAT),
                ("stamp", str(stamp_id)),
                ("corpus", shown(str(corpus.folder), None)),
                ("written", written),
            ],
        )
        conn.execute(
            "DELETE FROM stamps WHERE id NOT IN (SELECT stamp FROM documents WHERE stamp IS NOT NULL) AND id != ?",
            (stamp_id,),
        )
        _, entries, rows = _read(conn)
        _commit(conn)
    except sqlite3.OperationalError as exc:
        raise InputError(
            f"cannot write the index in {folder} ({exc}): check the folder is writable and the disk "
            "has space; the previous index is unchanged"
        ) from exc
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()
    report = _status(corpus, stamp, entries, rows)
    return IndexStatus(report.current, report.stale, report.new, report.failed, report.chunks, notes)


def build(
    corpus: Corpus,
    folder: Path,
    embedder: Encoder,
    strategy: str = "E",
    size: int = SIZE,
    overlap: int = OVERLAP,
    wait: float = BUSY_SECONDS,
) -> IndexStatus:
    """Index every document from scratch (the previous index stays usable until the transaction commits)."""
    return update(corpus, folder, embedder, strategy, size, overlap, rebuild=True, wait=wait)


def tables(folder: Path) -> Iterator[tuple[str, list[str], list[tuple]]]:
    """Each table of the index with its column names and rows (vectors shown by size), for teaching."""
    conn = _open(folder, None)
    if conn is None:
        return
    try:
        for (name,) in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY rowid").fetchall():
            cur = conn.execute(f'SELECT * FROM "{name}"')
            cols = [c[0] for c in cur.description]
            rows = [tuple(f"<{len(v)} bytes>" if isinstance(v, bytes) else v for v in r) for r in cur.fetchall()]
            yield name, cols, rows
    finally:
        conn.close()


_EXPECTED = _schema_columns()


class Index:
    """A searchable index: every document current under one stamp, or it refuses to open."""

    def __init__(self, corpus: Corpus, folder: Path, embedder: Encoder):
        folder = Path(folder)
        conn = _open(folder, corpus)
        if conn is None:
            raise StaleIndex(f"no index in {folder}: build one with {_advice(folder, corpus)}")
        try:
            conn.execute("BEGIN")  # one snapshot for everything read below, whatever a writer does meanwhile
            config, entries, rows = _read(conn)
            if config is None:
                raise StaleIndex(f"no index in {folder}: build one with {_advice(folder, corpus)}")
            self.stamp = current_stamp(embedder, config.strategy, config.size, config.overlap)
            report = _status(corpus, self.stamp, entries, rows)
            if not report.searchable:
                names = ", ".join(f"{d} ({why})" for d, why in sorted(report.stale.items()))
                raise StaleIndex(f"index {folder} is stale for: {names}. Run {_advice(folder, corpus, 'update')}")
            self.embedder, self.status = embedder, report
            self.chunks: list[Chunk] = []
            blocks = []
            for doc_id in report.current:
                stored = conn.execute(
                    'SELECT start, "end", vector FROM chunks WHERE document = ? ORDER BY ord', (doc_id,)
                ).fetchall()
                chunks = chunk_document(corpus[doc_id], config.strategy, config.size, config.overlap)
                if [(c.start, c.end) for c in chunks] != [(s, e) for s, e, _ in stored]:
                    raise StaleIndex(
                        f"{doc_id}: the chunker no longer cuts it where it was indexed: run "
                        f"{_advice(folder, corpus, 'build')}"
                    )
                self.chunks += chunks
                blocks += [np.frombuffer(v, dtype=np.float32) for _, _, v in stored]
            conn.execute("COMMIT")
        finally:
            conn.close()
        dims = self.stamp.embedding.dimensions
        self.vectors = np.vstack(blocks) if blocks else np.zeros((0, dims), dtype=np.float32)

    def search(self, query: str, k: int = 4) -> list[tuple[Chunk, float]]:
        """The k nearest chunks with their cosine distances."""
        if not query.strip():
            raise InputError("empty query: type what you are looking for")
        dist = cosine_distance(self.embedder.encode([query], progress=False), self.vectors)[0]
        return [(self.chunks[i], float(dist[i])) for i in rank(dist, higher_is_better=False, k=k)]
