"""Stamped results on disk: a computation's output kept as JSON beside the vectors, read back only under its stamp.

A result is filed under a name and a stamp (everything it depends on, as JSON: the corpus, the model, the settings,
the code). A file whose stamp is not the one asked for is never read: it is computed again and replaced, so two
stamps' results are never mixed. Like the vector cache, the store is optional: a file that cannot be read is a
miss, one that cannot be written is skipped, and the caller is told why (``write_result`` returns it) instead of a
warning.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ragkit.errors import InputError
from ragkit.plumbing.locations import cache_dir

__all__ = [
    "ATTACHMENT_LIMIT",
    "FOLDER",
    "RESULTS_FORMAT",
    "canonical",
    "path_for",
    "read_attachment",
    "read_result",
    "write_result",
]

FOLDER = "results"
RESULTS_FORMAT = "ragkit-results-1"


def canonical(stamp: Any) -> str:
    """A stamp as the one JSON text that stands for it (sorted keys, no spaces): what is compared and hashed."""
    return json.dumps(stamp, sort_keys=True, separators=(",", ":"))


def path_for(name: str, stamp: Any, folder: Path | None = None) -> Path:
    """Where a result of ``name`` under ``stamp`` lives: one file per stamp, named by its hash."""
    digest = hashlib.sha256(canonical(stamp).encode("utf-8")).hexdigest()[:16]
    return (Path(folder) if folder is not None else cache_dir()) / FOLDER / f"{name}-{digest}.json"


def read_result(name: str, stamp: Any, folder: Path | None = None) -> Any | None:
    """The payload filed under exactly this stamp, or None (none there, unreadable, or filed under another stamp).

    Without a ``folder``, the private cache is read first, then the teacher's shared one (``RAGKIT_SHARED_CACHE``,
    filled by ``python -m ragkit warm --cache``), trusted only when nobody but root and the reader can change its file:
    a class on a hub reads the teacher's stored results instead of each student computing them again.
    """
    found = _found(name, stamp, folder)
    return found[1].get("payload") if found is not None else None


ATTACHMENT_LIMIT = 256 * 2**20
"""Bytes an attachment may have (exercise 7's graphs are about 36 MB each): a larger file is a miss, never read."""


def read_attachment(name: str, stamp: Any, folder: Path | None = None) -> tuple[Any, bytes] | None:
    """A result filed with ``write_result(..., attachment=...)``: its payload and the bytes beside it, or None.

    The bytes are read (a regular file, never through a link, at most ``ATTACHMENT_LIMIT``) from the folder the
    payload was found in, under the same trust (in a shared cache, a file others could change is not read), and
    returned only when their sha256 is the one the payload's record holds: a file cut short, swapped or changed is a
    miss, and is computed again. The checksum proves the bytes whole, not who wrote them: trust comes from the folder.
    """
    from ragkit.plumbing.bounded import read_regular
    from ragkit.plumbing.storage import changeable_by_others

    found = _found(name, stamp, folder)
    if found is None:
        return None
    path, record, shared = found
    beside = _attachment(path)
    try:
        if shared and changeable_by_others(beside) is not None:
            return None
        data, _ = read_regular(beside, ATTACHMENT_LIMIT, "an attachment")
    except (OSError, InputError):
        return None
    digest = record.get("attachment")
    if not isinstance(digest, str) or hashlib.sha256(data).hexdigest() != digest:
        return None
    return record.get("payload"), data


def _attachment(path: Path) -> Path:
    return path.with_suffix(".bin")


def _found(name: str, stamp: Any, folder: Path | None) -> tuple[Path, dict[str, Any], bool] | None:
    """Where the record filed under this stamp was read (private cache first, then a trusted shared one), it, and
    whether that was the shared cache."""
    path = path_for(name, stamp, folder)
    record = _read(path, stamp)
    if record is not None:
        return path, record, False
    if folder is not None:
        return None
    from ragkit.plumbing.cache import shared_cache_dir
    from ragkit.plumbing.storage import changeable_by_others

    shared = shared_cache_dir()
    if shared is None:
        return None
    path = path_for(name, stamp, shared)
    try:
        if not path.is_file() or changeable_by_others(path) is not None:
            return None
    except OSError:
        return None
    record = _read(path, stamp)
    return (path, record, True) if record is not None else None


def _read(path: Path, stamp: Any) -> dict[str, Any] | None:
    """The whole record filed at ``path`` under exactly this stamp (read once), or None."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: a file nested deeper than the parser goes
        return None
    if not isinstance(raw, dict) or raw.get("format") != RESULTS_FORMAT or raw.get("stamp") != canonical(stamp):
        return None
    return raw if raw.get("payload") is not None else None


def write_result(name: str, stamp: Any, payload: Any, folder: Path | None = None, attachment: bytes = b"") -> str:
    """File a payload under its stamp (written aside, then renamed: a reader sees all of it or none); "" when saved,
    else why it was not. ``attachment``: bytes kept beside it (a built index), written first, their sha256 recorded
    in the payload's file (``read_attachment``)."""
    path = path_for(name, stamp, folder)
    record: dict[str, Any] = {"format": RESULTS_FORMAT, "stamp": canonical(stamp), "payload": payload}
    written = [(_attachment(path), attachment)] if attachment else []
    if attachment:
        record["attachment"] = hashlib.sha256(attachment).hexdigest()
    written.append((path, json.dumps(record).encode("utf-8")))
    for target, data in written:
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(data)
            os.replace(tmp, target)
        except OSError as exc:
            return f"{target.parent} cannot be written ({exc.strerror or exc})"
        finally:
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass
    return ""
