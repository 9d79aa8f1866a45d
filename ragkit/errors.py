"""One small hierarchy of errors; every message says what went wrong and what to do."""

__all__ = [
    "CorpusError",
    "CorruptIndex",
    "DataError",
    "IndexBusy",
    "InputError",
    "ModelMismatch",
    "ModelUnavailable",
    "RagkitError",
    "StaleIndex",
]


class RagkitError(Exception):
    """Root of every error ragkit raises on purpose."""


class CorpusError(RagkitError):
    """A corpus folder that cannot be used at all (missing, empty, no Markdown)."""


class ModelUnavailable(RagkitError):
    """A model's weights are not on this machine (and cannot be fetched offline)."""


class ModelMismatch(RagkitError):
    """Weights on disk are not the ones ragkit expects (wrong hash)."""


class DataError(RagkitError):
    """Ground-truth files that cannot be read or do not pass validation."""


class InputError(RagkitError, ValueError):
    """A bad argument from the user (empty question, cut out of range, unknown strategy)."""


class CorruptIndex(RagkitError):
    """An index database on disk that fails its check (damaged, truncated, or not an index at all)."""


class StaleIndex(RagkitError):
    """An index whose documents were embedded under another stamp, or have changed since."""


class IndexBusy(RagkitError):
    """Another process holds the index's write lock longer than we were willing to wait."""
