"""Timing a step: the median wall time of one call, how the course times anything (08's stages, 08b's search)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["median_ms"]


def median_ms(work: Callable[[Any], object], items: Iterable[Any], warm: bool = False) -> float:
    """The median wall time of ``work(item)`` over the items, in milliseconds.

    ``warm``: one untimed call on the first item first, so a first call's loading is not what is timed.
    """
    items = list(items)
    if warm and items:
        work(items[0])
    times = []
    for item in items:
        t = time.perf_counter()
        work(item)
        times.append(time.perf_counter() - t)
    return 1000 * statistics.median(times)
