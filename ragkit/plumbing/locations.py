"""Where ragkit finds its course data, keeps its cache and looks for hub models.

Data, first match wins: an explicit argument, ``RAGKIT_DATA``, the checkout's ``data/``
(when ragkit runs from a clone), the copy packaged inside the installed wheel.
Cache: ``RAGKIT_CACHE``, else the checkout's ``.ragkit-cache/``, else the user cache
directory (platformdirs). Hub models: ``RAGKIT_MODELS_DIR``, else the checkout's
``models/``, else ``models/`` in the user data directory. An installed ragkit therefore
never writes into site-packages.
"""

from __future__ import annotations

import os
from pathlib import Path

from ragkit.errors import DataError

__all__ = [
    "CACHE_ENV",
    "DATA_ENV",
    "MODELS_ENV",
    "PACKAGED_DATA",
    "SOURCE_ROOT",
    "cache_dir",
    "checkout",
    "data_dir",
    "models_dir",
]

DATA_ENV = "RAGKIT_DATA"
CACHE_ENV = "RAGKIT_CACHE"
MODELS_ENV = "RAGKIT_MODELS_DIR"
PACKAGED_DATA = Path(__file__).resolve().parent.parent / "_data"
"""Where the wheel carries ``data/`` (pyproject.toml maps it there at build time)."""
SOURCE_ROOT = Path(__file__).resolve().parent.parent.parent
"""The folder holding the ragkit package (a clone, or site-packages): every module finds the checkout from here."""


def checkout() -> Path | None:
    """The clone ragkit runs from (pyproject.toml and data/ beside the package), or None when installed."""
    root = SOURCE_ROOT
    if (root / "pyproject.toml").is_file() and (root / "data" / "questions.jsonl").is_file():
        return root
    return None


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def _check_data(folder: Path, named: str) -> Path:
    """``folder`` when it holds a course (corpus/ and questions.jsonl); a DataError naming ``named`` otherwise."""
    fix = f"point {named} at a folder with corpus/, questions.jsonl and out_of_domain.jsonl" + (
        f", or unset {named} to use the bundled course" if named == DATA_ENV else ""
    )
    if not folder.is_dir():
        raise DataError(f"{named} = {folder} does not exist or is not a folder: {fix}")
    if not any(folder.iterdir()):
        raise DataError(f"{named} = {folder} is empty: {fix}")
    if not (folder / "questions.jsonl").is_file():
        raise DataError(f"{named} = {folder} has no questions.jsonl: {fix}")
    if not (folder / "corpus").is_dir():
        raise DataError(f"{named} = {folder} has no corpus/ folder: {fix}")
    return folder


def data_dir(explicit: str | Path | None = None) -> Path:
    """The course data folder: ``explicit``, ``RAGKIT_DATA``, the checkout's data/, or the packaged copy."""
    if explicit is not None:
        return _check_data(Path(explicit).expanduser(), "the data argument")
    if (env := _env(DATA_ENV)) is not None:
        return _check_data(Path(env).expanduser(), DATA_ENV)
    if (root := checkout()) is not None:
        return root / "data"
    if (PACKAGED_DATA / "questions.jsonl").is_file():
        return PACKAGED_DATA
    raise DataError(
        f"this ragkit has no course data (neither a checkout's data/ nor {PACKAGED_DATA}): "
        f"reinstall it with `pip install ragkit` from a wheel or a clone, or set {DATA_ENV}"
    )


def cache_dir() -> Path:
    """Vectors and exported models: ``RAGKIT_CACHE``, the checkout's .ragkit-cache/, or the user cache folder."""
    if (env := _env(CACHE_ENV)) is not None:
        return Path(env).expanduser()
    if (root := checkout()) is not None:
        return root / ".ragkit-cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir("ragkit", appauthor=False))


def models_dir() -> Path:
    """Downloaded hub models: ``RAGKIT_MODELS_DIR``, the checkout's models/, or the user data folder."""
    if (env := _env(MODELS_ENV)) is not None:
        return Path(env).expanduser()
    if (root := checkout()) is not None:
        return root / "models"
    import platformdirs

    return Path(platformdirs.user_data_dir("ragkit", appauthor=False)) / "models"
