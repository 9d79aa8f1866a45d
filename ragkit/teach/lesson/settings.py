"""How notebook 03b writes a tuned setting and its values, for its narrators, its chart and its knowledge check."""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from ragkit.teach.language import _, say

__all__ = ["setting_name", "setting_value"]


def setting_value(value: Hashable) -> str:
    """A setting's value as people read it: 1,024, 0.25, (0.9, 0.75)."""
    if isinstance(value, tuple):
        return say("({k1:g}, {b:g})", k1=value[0], b=value[1])
    if isinstance(value, int | np.integer):
        return say("{value:,}", value=value)
    return say("{value:g}", value=value)


def setting_name(setting: str) -> str:
    """A setting's name as a label or the start of a line: Chunk size, RRF k, BM25 (k1, b)."""
    names = {
        "chunk size": _("chunk size"),
        "overlap": _("overlap"),
        "RRF k": _("RRF k"),
        "dense weight": _("dense weight"),
        "BM25 (k1, b)": _("BM25 (k1, b)"),
    }
    text = names.get(setting, setting)
    return text[:1].upper() + text[1:]
