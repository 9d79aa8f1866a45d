"""What a student wrote, read without trusting it: regular files only, bounded sizes and nesting, text safe to show."""

from __future__ import annotations

import csv
import math
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from ragkit.errors import InputError
from ragkit.teach.language import say
from ragkit.terminal import SHOWN
from ragkit.terminal import shown as _shown

__all__ = [
    "MAX_LINE",
    "MAX_NESTING",
    "MAX_RESULTS_FILE",
    "O_NOFOLLOW",
    "O_NONBLOCK",
    "nesting",
    "read_regular",
    "readable",
    "refuse_constant",
    "spreadsheet_cell",
    "strict",
    "write_csv",
]

MAX_RESULTS_FILE = 4 * 2**20
"""Bytes a results file may hold: a check writes ~300, so thousands of attempts fit, a sparse multi-GB file does not."""
MAX_LINE = 16 * 2**10
"""Bytes one line of a results file may hold."""
MAX_NESTING = 8
"""How deep anything a student wrote may nest, once parsed: a line of a results file, a notebook's answers."""


def readable(text: object, limit: int | None = SHOWN, *, lines: bool = False) -> str:
    """``ragkit.terminal.shown`` for a student's cell: the note on a text cut short in the kernel's language."""
    text = str(text)
    if limit is None or len(text) <= limit:
        return _shown(text, limit, lines=lines)
    return _shown(text[:limit], None, lines=lines) + say("... ({n:,} characters)", n=len(text))


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
"""``os.open``'s flag that refuses a link as the last part of a path (0 where the system has none)."""
O_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
"""``os.open``'s flag that never waits on a FIFO a student left in place of a file (0 where the system has none)."""


def spreadsheet_cell(text: str) -> str:
    """A CSV cell a spreadsheet cannot run: text that would start a formula gets a leading apostrophe."""
    return "'" + text if len(text) > 1 and text.startswith(_FORMULA_STARTS) else text


def write_csv(path: Path, columns: list[str], rows: Iterable[dict[str, str]]) -> None:
    """Every CSV ragkit writes: a header and rows, each cell neutralised for spreadsheets."""
    with Path(path).open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows({c: spreadsheet_cell(str(r[c])) for c in columns} for r in rows)


def strict(value: object) -> object:
    """A value JSON can hold as it is: NaN and infinities become null (strict JSON has neither)."""
    if isinstance(value, dict):
        return {str(k): strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(v) for v in value]
    if isinstance(value, (bool, int, str)) or value is None:
        return value
    number = float(value)  # type: ignore[arg-type]  # numpy scalars and other numbers
    return number if math.isfinite(number) else None


def refuse_constant(constant: str) -> None:
    """For ``json.loads(parse_constant=...)``: NaN and the infinities are not JSON, so a line holding one is refused."""
    raise ValueError(f"{constant} is not JSON")


def nesting(line: str) -> int:
    """How deep brackets nest in a JSON line, strings aside (a scan, no recursion)."""
    depth = deepest = 0
    for ch in _STRING.sub("", line):
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def read_regular(path: Path, limit: int, called: str) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file, opened without following a link or blocking on a FIFO, at most ``limit`` of them.

    Anything else is an InputError saying why, for a teacher to read: ``called`` names the file in it.
    """
    try:
        fd = os.open(path, os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        why = "a symbolic link, not followed" if Path(path).is_symlink() else exc.strerror or str(exc)
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
