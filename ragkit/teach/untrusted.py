"""What a student wrote, read without trusting it: folders walked through descriptors, never through a link; bounded
sizes and nesting; text safe to show."""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import math
import os
import re
import secrets
import stat
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ragkit.errors import InputError
from ragkit.plumbing.bounded import O_NOFOLLOW, open_folder
from ragkit.teach.language import say
from ragkit.terminal import SHOWN
from ragkit.terminal import shown as _shown

__all__ = [
    "MAX_DEPTH",
    "MAX_LINE",
    "MAX_NESTING",
    "MAX_RESULTS_FILE",
    "FoundFile",
    "as_written",
    "linked",
    "nesting",
    "readable",
    "refuse_constant",
    "refuse_overwrite",
    "spreadsheet_cell",
    "strict",
    "walk",
    "write_csv",
    "write_file",
]

MAX_RESULTS_FILE = 4 * 2**20
"""Bytes a results file may hold: a check writes ~300, so thousands of attempts fit, a sparse multi-GB file does not."""
MAX_LINE = 16 * 2**10
"""Bytes one line of a results file may hold."""
MAX_NESTING = 8
"""How deep anything a student wrote may nest, once parsed: a line of a results file, a notebook's answers."""
MAX_DEPTH = 8
"""Folders deep a walk goes under a folder given."""


def readable(text: object, limit: int | None = SHOWN, *, lines: bool = False) -> str:
    """``ragkit.terminal.shown`` for a student's cell: the note on a text cut short in the kernel's language."""
    text = str(text)
    if limit is None or len(text) <= limit:
        return _shown(text, limit, lines=lines)
    return _shown(text[:limit], None, lines=lines) + say("... ({n:,} characters)", n=len(text))


def as_written(text: str, limit: int | None = 400) -> str:
    """``shown``, and where the text is not in Unicode's composed form (NFC), its combining marks escaped: two names
    that differ only in form ("josé" from a macOS zip and "josé") then look different."""
    if unicodedata.is_normalized("NFC", text):
        return readable(text, limit)
    return readable("".join(f"\\u{ord(c):04x}" if unicodedata.combining(c) else c for c in text), limit)


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def spreadsheet_cell(text: str) -> str:
    """A CSV cell a spreadsheet cannot run: text that would start a formula gets a leading apostrophe."""
    return "'" + text if len(text) > 1 and text.startswith(_FORMULA_STARTS) else text


def write_csv(path: Path, columns: list[str], rows: Iterable[dict[str, str]]) -> None:
    """Every CSV ragkit writes: a header and rows, each cell neutralised for spreadsheets (``write_file``)."""
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=columns)
    writer.writeheader()
    writer.writerows({c: spreadsheet_cell(str(r[c])) for c in columns} for r in rows)
    write_file(Path(path), text.getvalue().encode("utf-8"))


def refuse_overwrite(path: Path) -> None:
    """Refuse to write over a link or over a file that has other names (hard links): writing there would change what
    the link leads to, or another file, perhaps a student's or one only root may write."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return
    where = readable(str(path), 160)
    if stat.S_ISLNK(st.st_mode):
        raise InputError(f"{where} is a link ({linked(path)}): not written through; remove it or name another file")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{where} is not a regular file: name another file")
    if st.st_nlink > 1:
        raise InputError(
            f"{where} has more than one name (a hard link): not overwritten, that would change the file under its "
            "other name too; remove it or name another file"
        )


def write_file(path: Path, data: bytes) -> None:
    """Write ``data`` as ``path``, all of it or nothing: into an exclusive temporary file in its folder (mode 0600),
    renamed over it. An existing link or a file with other hard links there is refused (``refuse_overwrite``); one
    planted after that check is replaced by the rename, never written through."""
    path = Path(path)
    refuse_overwrite(path)
    folder = open_folder(path.parent, follow=True)  # the folder named; the file in it through its descriptor
    try:
        for _ in range(100):
            temporary = f".{path.name[:200]}.{secrets.token_hex(8)}.tmp"
            try:
                fd = os.open(
                    temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder
                )
                break
            except FileExistsError:
                continue
        else:
            raise InputError(f"no temporary file could be made beside {readable(str(path), 160)}")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=folder)
            raise
    finally:
        os.close(folder)


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


@dataclass(frozen=True)
class FoundFile:
    """A file a walk found: its path as shown, and its name in the folder the walk holds open while it stands there."""

    path: Path
    folder: int
    """The descriptor of the file's folder: valid while the walk has not moved on (read the file through it)."""
    name: str


def linked(name: str | Path, folder: int | None = None) -> str:
    """Where a link leads, as text safe to show (a link's target is whatever its maker wrote)."""
    try:
        return _leads_to(os.readlink(name, dir_fd=folder))
    except OSError as exc:
        return f"its target not read: {exc.strerror or exc}"


def _leads_to(target: str) -> str:
    return "to " + readable(target, 400)


def walk(
    folder: int, where: Path, skipped: list[str], wanted: Callable[[str], bool], hidden: bool = True, depth: int = 0
) -> Iterator[FoundFile]:
    """The files under the folder open as ``folder`` (shown as ``where``) whose name ``wanted`` accepts, in name order.

    Every folder is opened through its parent's descriptor, never through a link: a link to a folder is said (with
    where it leads) and not entered, a folder more than MAX_DEPTH levels deep is skipped and said, and with
    ``hidden=False`` no dot entry is looked at (JupyterLab's checkpoints). A file is yielded by name in its folder's
    descriptor, so that it is opened there (``ragkit.plumbing.bounded.read_beneath``), not looked up again by path.
    """
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        skipped.append(f"{_where(where)}: folder not read ({exc.strerror or exc})")
        return
    folders = []
    for name in names:
        if not hidden and name.startswith("."):
            continue
        try:
            st = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except OSError:
            continue  # gone since it was listed
        if stat.S_ISLNK(st.st_mode) and _leads_to_folder(folder, name):
            skipped.append(_not_followed(where / name, linked(name, folder)))
        elif stat.S_ISDIR(st.st_mode):
            if depth < MAX_DEPTH:
                folders.append(name)
            else:
                skipped.append(f"{_where(where / name)}: folder not read (more than {MAX_DEPTH} levels deep)")
        elif wanted(name):
            yield FoundFile(where / name, folder, name)
    for name in folders:
        try:
            inner = open_folder(name, folder)
        except OSError as exc:  # made a link, or removed, since it was listed
            target = None
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # made a link: say where it leads, when that can be read
                with contextlib.suppress(OSError):
                    target = os.readlink(name, dir_fd=folder)
            skipped.append(
                _not_followed(where / name, _leads_to(target))
                if target is not None
                else f"{_where(where / name)}: folder not read ({exc.strerror or exc})"
            )
            continue
        try:
            yield from walk(inner, where / name, skipped, wanted, hidden, depth + 1)
        finally:
            os.close(inner)


def _where(path: Path) -> str:
    return readable(str(path), 160)


def _not_followed(path: Path, said: str) -> str:
    return f"{_where(path)}: a link to a folder ({said}), not followed: only what lies in the folders given is read"


def _leads_to_folder(folder: int, name: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=folder).st_mode)
    except OSError:
        return False
