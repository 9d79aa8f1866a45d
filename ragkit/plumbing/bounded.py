"""Files someone else controls, read through descriptors: regular files only, never through a link, within a bound.

A path is looked up once: a folder is opened one component at a time (``O_NOFOLLOW | O_DIRECTORY``), a file relative
to the folder's descriptor, and what the reader keeps is what it opened then. A link is refused where it stands, a
FIFO never waited on, a sparse file of many gigabytes refused by its size before a byte is read. Anything it refuses
is an ``InputError`` that says why, for a person to read.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ragkit.errors import InputError

__all__ = [
    "LINK",
    "O_NOFOLLOW",
    "O_NONBLOCK",
    "open_folder",
    "read_beneath",
    "read_regular",
]

O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
"""``os.open``'s flag that refuses a link as the last part of a path (0 where the system has none)."""
O_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
"""``os.open``'s flag that never waits on a FIFO left in place of a file (0 where the system has none)."""
O_DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)
LINK = "a symbolic link, not followed"
"""Why a file that is a link is not read (the reader's words, which a caller may put in a sentence of its own)."""


def open_folder(name: str | Path, folder: int | None = None, follow: bool = False) -> int:
    """A descriptor of the folder ``name`` (relative to the descriptor ``folder``, if given), never through a link
    unless ``follow``; the caller closes it. An ``OSError`` says why not (``ELOOP``/``ENOTDIR``: a link or a file)."""
    flags = os.O_RDONLY | O_DIRECTORY | os.O_CLOEXEC | (0 if follow else O_NOFOLLOW)
    return os.open(name, flags, dir_fd=folder)


def read_beneath(folder: int | None, name: str | Path, limit: int, called: str) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file ``name`` in the folder open as ``folder`` (None: ``name`` is a path), opened
    without following a link or blocking on a FIFO, at most ``limit`` of them, and its status as opened.

    Anything else is an InputError saying why, for a person to read: ``called`` names the file in it.
    """
    try:
        fd = os.open(name, os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    except OSError as exc:
        why = LINK if exc.errno == errno.ELOOP or _is_link(folder, name) else exc.strerror or str(exc)
        raise InputError(why) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError("not a regular file (a FIFO, device or socket)")
        if st.st_size > limit:  # a sparse file of many gigabytes is refused unread
            raise InputError(f"{st.st_size:,} bytes, more than the {limit:,} {called} may hold")
        data = b""
        while len(data) <= limit and (block := os.read(fd, limit + 1 - len(data))):
            data += block
        if len(data) > limit:
            raise InputError(f"grew past the {limit:,} bytes {called} may hold while it was read")
        return data, st
    except OSError as exc:
        raise InputError(exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


def read_regular(path: Path, limit: int, called: str) -> tuple[bytes, os.stat_result]:
    """``read_beneath`` for a path: its last part is never a link (the folders on the way are the caller's)."""
    return read_beneath(None, path, limit, called)


def _is_link(folder: int | None, name: str | Path) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False
