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

from ragkit.plumbing.locations import cache_dir

__all__ = ["FOLDER", "RESULTS_FORMAT", "canonical", "path_for", "read_result", "write_result"]

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
    payload = _read(path_for(name, stamp, folder), stamp)
    if payload is not None or folder is not None:
        return payload
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
    return _read(path, stamp)


def _read(path: Path, stamp: Any) -> Any | None:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: a file nested deeper than the parser goes
        return None
    if not isinstance(raw, dict) or raw.get("format") != RESULTS_FORMAT or raw.get("stamp") != canonical(stamp):
        return None
    return raw.get("payload")


def write_result(name: str, stamp: Any, payload: Any, folder: Path | None = None) -> str:
    """File a payload under its stamp (written aside, then renamed: a reader sees all of it or none); "" when saved,
    else why it was not."""
    path = path_for(name, stamp, folder)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(
            json.dumps({"format": RESULTS_FORMAT, "stamp": canonical(stamp), "payload": payload}), encoding="utf-8"
        )
        os.replace(tmp, path)
    except OSError as exc:
        return f"{path.parent} cannot be written ({exc.strerror or exc})"
    finally:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
    return ""
