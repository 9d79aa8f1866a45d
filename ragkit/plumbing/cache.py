"""The vector cache: one SQLite database of vectors keyed by (model stamp, kind, sha256 of the text).

Layers: an optional shared cache (``RAGKIT_SHARED_CACHE``, filled once by a teacher with
``python -m ragkit warm --cache DIR``) is read first, then the private cache, which is the
only one ever written. The shared one is used only when nobody but root and the reader can
change it (owner and mode of the file and of every folder above it), and it is opened
immutable, so that reading it never writes anything, not even a journal. Every row carries a
checksum over its stamp, kind, key and bytes, so a row read back is the row computed for that
text or it is not used; its norm is stored beside it. Misses are inserted in batches; two processes filling the same
cache both succeed (WAL and a busy timeout). A cache is optional: a damaged private database
is moved aside and started again (so is one of an older format), a damaged, foreign, unfinished or
changeable shared one is skipped, and a read-only or full disk turns writing off; each with one
warning, never a traceback.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import warnings
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ragkit.errors import InputError
from ragkit.plumbing.storage import (
    BUSY_SECONDS,
    changeable_by_others,
    connect,
    connect_immutable,
    in_wal_mode,
    is_busy,
    is_damaged,
    move_aside,
)

__all__ = [
    "CACHE_FILE",
    "CACHE_FORMAT",
    "OLD_PACKS",
    "PAGE_SIZE",
    "VECTOR_KINDS",
    "CacheWarning",
    "VectorCache",
    "finish_shared",
    "shared_cache_dir",
    "text_key",
]

CACHE_FILE = "vectors.sqlite"
CACHE_FORMAT = "ragkit-cache-1"
VECTOR_KINDS = {"unit": np.float32, "pooled": np.float32, "tokens": np.float16}
"""What the cache holds: unit sentence vectors, un-normalised pooled vectors, per-token blocks."""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors (
    stamp TEXT NOT NULL, kind TEXT NOT NULL, key BLOB NOT NULL,
    rows INTEGER NOT NULL, dims INTEGER NOT NULL, norm REAL NOT NULL, checksum INTEGER NOT NULL,
    data BLOB NOT NULL, PRIMARY KEY (stamp, kind, key));
"""
_BATCH = 500
PAGE_SIZE = 8192
"""Five 384-dimension float32 rows fill an 8 KiB page; SQLite's default 4 KiB page holds two and wastes a fifth."""
OLD_PACKS = ("vectors", "tokens", "pooled")
"""Folders in which a ragkit before the SQLite cache kept its vectors: nothing reads them now."""
_WARNED: set[tuple[str, str]] = set()


class _Foreign(Exception):
    """A database file that SQLite reads but that is not a ragkit vector cache."""


class CacheWarning(UserWarning):
    """A cache could not be used as asked; ragkit goes on without it (the vectors are recomputed or kept in memory)."""


def text_key(text: str) -> bytes:
    """sha256 of a text: the cache's key (the model stamp is a separate column)."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def _checksum(stamp: str, kind: str, key: bytes, data: bytes) -> int:
    return zlib.crc32(data, zlib.crc32(key, zlib.crc32(f"{stamp}\0{kind}\0".encode())))


def _norm(array: np.ndarray) -> float:
    return float(np.linalg.norm(array.astype(np.float32)))


class VectorCache:
    """Vectors of one model stamp, read from the shared layer then the private one, written to the private one."""

    def __init__(self, private: Path | None, stamp: str, dimensions: int, shared: Path | None = None):
        self.stamp, self.dimensions = stamp, dimensions
        self.private = Path(private) / CACHE_FILE if private else None
        self.shared = Path(shared) / CACHE_FILE if shared else None
        self._conns: dict[Path, sqlite3.Connection | None] = {}
        self._writable = self.private is not None

    def _warn(self, topic: str, message: str) -> None:
        """One warning per problem and cache file in a process, however many embedders open it."""
        key = (topic, str(self.shared if topic.startswith("shared") else self.private))
        if key not in _WARNED:
            _WARNED.add(key)
            warnings.warn(message, CacheWarning, stacklevel=4)

    # -- opening ---------------------------------------------------------------------------
    def _open_shared(self) -> sqlite3.Connection | None:
        path = self.shared
        assert path is not None
        where = f"the shared cache {path.parent} (RAGKIT_SHARED_CACHE)"
        if not path.parent.is_dir():
            self._warn("shared", f"{where} does not exist: using the private cache only")
            return None
        if not path.is_file():
            self._warn(
                "shared",
                f"{where} holds no {CACHE_FILE}: fill it with `python -m ragkit warm --cache "
                f"{path.parent}`; using the private cache only",
            )
            return None
        real = path.resolve()  # resolved once; checked and opened by that path, so a link swapped later is not followed
        why = changeable_by_others(real)
        if why:
            self._warn(
                "shared",
                f"{where} could be changed by someone other than root or you ({why}): a shared "
                f"cache must belong to root and be writable by nobody else (`sudo chown -R root: {path.parent}"
                f" && sudo chmod -R go-w {path.parent}`); not using it",
            )
            return None
        try:
            if in_wal_mode(real):
                self._warn(
                    "shared",
                    f"{where} is not finished (its database is still in WAL mode, so part of it is "
                    f"in a -wal file): finish it with `python -m ragkit warm --cache {path.parent}`; not "
                    "using it",
                )
                return None
            conn = connect_immutable(real)
            found = conn.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
            stamps = {s for (s,) in conn.execute("SELECT DISTINCT stamp FROM vectors")}
        except (OSError, sqlite3.DatabaseError) as exc:
            self._warn("shared", f"{where} cannot be read ({exc}): using the private cache only")
            return None
        if found is None or found[0] != CACHE_FORMAT:
            self._warn(
                "shared",
                f"{where} is of another format ({found[0] if found else 'none'}, not {CACHE_FORMAT}): "
                f"fill it again with `python -m ragkit warm --cache {path.parent}`; using the private cache "
                "only",
            )
            conn.close()
            return None
        if stamps and self.stamp not in stamps:
            self._warn(
                "shared",
                f"{where} holds vectors of another model or configuration "
                f"({', '.join(sorted(stamps))}), not of {self.stamp}: using the private cache only",
            )
            conn.close()
            return None
        return conn

    def _open_private(self) -> sqlite3.Connection | None:
        path = self.private
        assert path is not None
        if path.parent.exists() and not path.parent.is_dir():
            raise InputError(
                f"the cache location {path.parent} is a file, not a folder: point RAGKIT_CACHE at a "
                "folder (or unset it to use the default)"
            )
        conn = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = connect(path, timeout=BUSY_SECONDS, page_size=PAGE_SIZE)
            # one write transaction taken up front (SQLite waits for it): a statement that read the schema and
            # then wrote could be refused without waiting when another process created the tables in between
            conn.execute("BEGIN IMMEDIATE")
            for statement in filter(str.strip, _SCHEMA.split(";")):
                conn.execute(statement)
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (CACHE_FORMAT,))
            conn.execute("COMMIT")
            found = conn.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()[0]
            if found == CACHE_FORMAT:
                self._note_old_packs()
                return conn
            exc: BaseException = _Foreign(f"it holds format {found!r}, not {CACHE_FORMAT!r}")
        except sqlite3.DatabaseError as err:
            exc = err
        except OSError as err:
            exc = err
        if conn is not None:
            conn.close()  # also ends a transaction the error left open, so no lock is kept
        if isinstance(exc, OSError):
            return self._read_only_private(exc)
        if is_busy(exc):
            self._writable = False
            self._warn(
                "busy",
                f"the vector cache {path} stayed locked by another process for {BUSY_SECONDS:g} s: "
                "reading it, but not saving new vectors in this session",
            )
            return self._reader()
        if is_damaged(exc) or isinstance(exc, _Foreign):
            aside = move_aside(path)
            what = "is of another ragkit's format" if isinstance(exc, _Foreign) else "was damaged"
            self._warn(
                "damaged",
                f"the vector cache {path} {what} ({exc}); moved aside to {aside.name} "
                "and started again: its vectors will be recomputed",
            )
            return self._open_private()
        return self._read_only_private(exc)

    def _note_old_packs(self) -> None:
        """Say once that a ragkit before the SQLite cache left its folders here: they are not read, not migrated."""
        assert self.private is not None
        old = [name for name in OLD_PACKS if (self.private.parent / name).is_dir()]
        if old:
            self._warn(
                "old",
                f"{', '.join(f'{n}/' for n in old)} in {self.private.parent} hold an older ragkit's "
                f"vectors, in a format nothing reads now: they are computed again into {CACHE_FILE}; delete "
                "those folders to free their space",
            )

    def _read_only_private(self, why: BaseException) -> sqlite3.Connection | None:
        """The private cache cannot be written here: read what it has, write nothing."""
        self._writable = False
        path = self.private
        assert path is not None
        self._warn(
            "readonly",
            f"cannot write the vector cache {path.parent} ({why}): running without saving "
            "new vectors (set RAGKIT_CACHE to a writable folder to keep them)",
        )
        return self._reader()

    def _reader(self) -> sqlite3.Connection | None:
        """The private cache opened read-only, or None when it has nothing to read."""
        path = self.private
        assert path is not None
        if not path.is_file():
            return None
        try:
            conn = connect(path, readonly=True)
            if conn.execute("SELECT 1 FROM sqlite_schema WHERE name = 'vectors'").fetchone():
                return conn
            conn.close()  # created but never filled (the disk was full): nothing to read
        except sqlite3.DatabaseError:
            pass
        return None

    def _conn(self, layer: Path) -> sqlite3.Connection | None:
        if layer not in self._conns:
            self._conns[layer] = self._open_shared() if layer == self.shared else self._open_private()
        return self._conns[layer]

    def layers(self) -> list[Path]:
        """The databases read, in order (shared first)."""
        return [p for p in (self.shared, self.private) if p is not None]

    # -- reading and writing ----------------------------------------------------------------
    def _verified(
        self, kind: str, key: bytes, rows: int, dims: int, norm: float, checksum: int, data: bytes
    ) -> np.ndarray | None:
        dtype = VECTOR_KINDS[kind]
        if dims != self.dimensions or len(data) != rows * dims * np.dtype(dtype).itemsize:
            return None
        if _checksum(self.stamp, kind, key, data) != checksum:
            return None
        array = np.frombuffer(data, dtype=dtype).reshape(rows, dims)
        if kind != "tokens":
            array = array[0]
        if abs(_norm(array) - norm) > 1e-3 * max(1.0, norm) or (kind == "unit" and abs(norm - 1) > 1e-3):
            return None
        return array

    def _read(self, layer: Path, kind: str, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        conn = self._conn(layer)
        if conn is None:
            return {}
        found, bad = {}, 0
        try:
            for i in range(0, len(keys), _BATCH):
                part = keys[i : i + _BATCH]
                marks = ",".join("?" * len(part))
                rows = conn.execute(
                    f"SELECT key, rows, dims, norm, checksum, data FROM vectors "
                    f"WHERE stamp = ? AND kind = ? AND key IN ({marks})",
                    (self.stamp, kind, *part),
                )
                for key, n, dims, norm, checksum, data in rows:
                    array = self._verified(kind, key, n, dims, norm, checksum, data)
                    if array is None:
                        bad += 1
                    else:
                        found[key] = array
        except sqlite3.DatabaseError as exc:
            self._drop(layer, exc)
            return {}
        if bad:
            self._warn(
                f"bad-{layer}",
                f"{bad} cached vector(s) in {layer} do not check out (damaged or not computed "
                "for their text): ignored and recomputed",
            )
        return found

    def _drop(self, layer: Path, exc: BaseException) -> None:
        """A layer failed mid-read: a shared one is skipped from now on; a damaged private one is set aside."""
        conn = self._conns.pop(layer, None)
        if conn is not None:
            conn.close()
        if layer == self.shared:
            self._conns[layer] = None
            self._warn(
                "shared-read", f"the shared cache {layer} failed while reading ({exc}): using the private cache only"
            )
        elif is_damaged(exc) and self._writable:
            aside = move_aside(layer)
            self._warn(
                "damaged",
                f"the vector cache {layer} was damaged ({exc}); moved aside to {aside.name} and "
                "started again: its vectors will be recomputed",
            )
        else:
            self._conns[layer] = None
            self._warn("private-read", f"the vector cache {layer} cannot be read ({exc}): running without it")

    def get(self, kind: str, keys: Sequence[bytes]) -> list[np.ndarray | None]:
        """Arrays for keys, None where no layer has a row that checks out."""
        found: dict[bytes, np.ndarray] = {}
        wanted = list(dict.fromkeys(keys))
        for layer in self.layers():
            missing = [k for k in wanted if k not in found]
            if not missing:
                break
            found.update(self._read(layer, kind, missing))
        return [found.get(k) for k in keys]

    def put(self, kind: str, keys: Sequence[bytes], arrays: Sequence[np.ndarray]) -> None:
        """Insert rows into the private cache in one transaction; a cache that cannot be written is skipped."""
        if not keys or self.private is None:
            return
        conn = self._conn(self.private)
        if conn is None or not self._writable:
            return
        dtype = VECTOR_KINDS[kind]
        rows = []
        for key, array in zip(keys, arrays):
            array = np.ascontiguousarray(array, dtype=dtype)
            block = array.reshape(-1, self.dimensions)
            data = block.tobytes()
            rows.append(
                (
                    self.stamp,
                    kind,
                    key,
                    len(block),
                    self.dimensions,
                    _norm(array),
                    _checksum(self.stamp, kind, key, data),
                    data,
                )
            )
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
        except (sqlite3.DatabaseError, OSError) as exc:
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.DatabaseError:
                    pass
            self._writable = False
            self._warn(
                "write",
                f"cannot write the vector cache {self.private} ({exc}): running without saving "
                "new vectors (free some space or set RAGKIT_CACHE to a writable folder)",
            )

    def summary(self) -> list[tuple[str, str, str, int, int]]:
        """Rows per (layer, stamp, kind) with their bytes, for ``python -m ragkit cache status``."""
        out = []
        for layer in self.layers():
            conn = self._conn(layer)
            if conn is None:
                continue
            name = "shared" if layer == self.shared else "private"
            try:
                for stamp, kind, n, size in conn.execute(
                    "SELECT stamp, kind, count(*), sum(length(data)) FROM vectors GROUP BY stamp, kind"
                ):
                    out.append((name, stamp, kind, n, size))
            except sqlite3.DatabaseError as exc:
                self._drop(layer, exc)
        return out

    def close(self) -> None:
        """Close every open connection."""
        for conn in self._conns.values():
            if conn is not None:
                conn.close()
        self._conns.clear()


def finish_shared(folder: Path) -> Path:
    """Make a filled cache ready to be shared read-only: fold the WAL in and switch to a rollback journal."""
    path = Path(folder) / CACHE_FILE
    if not path.is_file():
        raise InputError(
            f"{folder} holds no {CACHE_FILE}: nothing to finish; fill it first with "
            f"`python -m ragkit warm --cache {folder}`"
        )
    try:
        conn = connect(path)
        try:
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            mode = "wal" if busy else conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
        finally:
            conn.close()
        why = f"it is still in journal mode {mode}"  # SQLite answers the mode it kept when it cannot switch
    except sqlite3.DatabaseError as exc:
        mode, why = "", f"it could not be switched out of WAL ({exc})"
    if mode.lower() != "delete":
        raise InputError(
            f"{path} is not ready to share: {why}. Another process may have it open (a notebook, "
            "`python -m ragkit cache status`, a warmer): close it and run "
            f"`python -m ragkit warm --cache {folder}` again (nothing is embedded twice)"
        )
    return path


def shared_cache_dir() -> Path | None:
    """The teacher's read-only cache named by ``RAGKIT_SHARED_CACHE``, if set."""
    value = os.environ.get("RAGKIT_SHARED_CACHE", "").strip()
    return Path(value) if value else None
