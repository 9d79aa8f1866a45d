"""Text that reaches a terminal: every name a student or a corpus file controls goes through ``shown`` first."""

from __future__ import annotations

__all__ = ["SHOWN", "shown"]

SHOWN = 60
"""Characters of a name kept by default: enough to tell two apart, short enough for a table's column."""
_KEPT_IN_LINES = "\n\t"
_UNDECODED = range(0xDC80, 0xDD00)
"""Where Python keeps a file name's bytes that are not UTF-8 (surrogateescape): shown as the byte, ``\\xff``."""


def shown(text: str, limit: int | None = SHOWN, *, lines: bool = False) -> str:
    """Text safe to print on a terminal or in a table: control and invisible formatting characters escaped.

    Escaped are C0 and C1 controls (ESC starts every terminal sequence), DEL, the bidirectional overrides and
    isolates, zero-width characters and lone surrogates (a file name's bytes that are not UTF-8, shown as those
    bytes). With ``lines``, newlines and tabs stay (a prompt, an answer); ``limit`` keeps at most that many
    characters (None: all).
    """
    text = str(text)
    head = text if limit is None else text[:limit]
    kept = "".join(ch if ch.isprintable() or (lines and ch in _KEPT_IN_LINES) else _escaped(ch) for ch in head)
    return kept + (f"... ({len(text):,} characters)" if limit is not None and len(text) > limit else "")


def _escaped(ch: str) -> str:
    if ord(ch) in _UNDECODED:
        return f"\\x{ord(ch) - 0xDC00:02x}"
    return ch.encode("unicode_escape").decode("ascii")
