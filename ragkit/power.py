"""What a sample can show before anyone predicts from it: the smallest p a test can reach, and the smallest difference
it detects with 80% power (paired sign tests on needles, Fisher's exact test on two groups of answers)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ragkit.statistics import ALPHA, smallest_p

__all__ = [
    "DROP",
    "POWER",
    "fisher_smallest_p",
    "needles_for",
    "paired_detectable",
    "paired_pairs_needed",
    "paired_power",
    "unpaired_detectable",
    "unpaired_power",
]

POWER = 0.8
"""The chance of detecting a difference that a sample's "smallest detectable difference" is computed for."""
DROP = 0.2
"""The drop lost in the middle should be able to detect: twenty points of needles recalled."""


def _least(power: Callable[[float], float], target: float = POWER) -> float | None:
    """The smallest share in (0, 1] whose power reaches ``target`` (power grows with the share), by bisection."""
    if power(1.0) < target:
        return None
    low, high = 0.0, 1.0
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (low, middle) if power(middle) >= target else (middle, high)
    return high


def paired_pairs_needed(alpha: float = ALPHA) -> int:
    """The fewest discordant pairs whose smallest two-sided sign-test p is below ``alpha`` (6 at 0.05)."""
    return next(k for k in range(1, 64) if smallest_p(k) < alpha)


def paired_power(needles: int, share: float, alpha: float = ALPHA) -> float:
    """The chance a sign test on ``needles`` pairs detects a difference when each needle is, independently with
    probability ``share``, recalled at one place and not at the other, always the same way: the best case."""
    from scipy.stats import binom  # scipy.stats takes a second to import: only a kernel that measures power pays it

    return float(binom.sf(paired_pairs_needed(alpha) - 1, needles, share))


def paired_detectable(needles: int, power: float = POWER, alpha: float = ALPHA) -> float | None:
    """The smallest difference (a share of needles) a paired sign test on ``needles`` pairs detects with ``power``,
    in the best case that every discordant pair goes the same way; None when no difference of any size can be."""
    return _least(lambda share: paired_power(needles, share, alpha), power)


def needles_for(drop: float = DROP, power: float = POWER, alpha: float = ALPHA) -> int:
    """The fewest needles whose paired sign test detects a drop of ``drop`` with ``power``, in the best case."""
    return next(n for n in range(1, 10_000) if paired_power(n, drop, alpha) >= power)


def fisher_smallest_p(n1: int, n2: int) -> float:
    """The smallest two-sided p Fisher's exact test can give two groups of these sizes (every answer of one group
    right, none of the other): what the 2x2 can show."""
    if not n1 or not n2:
        return 1.0
    from scipy.stats import fisher_exact

    return float(fisher_exact([[n1, 0], [0, n2]]).pvalue)


def unpaired_power(n1: int, n2: int, base: float, gap: float, alpha: float = ALPHA) -> float:
    """The chance Fisher's exact test detects rates ``base + gap`` (n1 answers) against ``base`` (n2 answers)."""
    from scipy.stats import binom, fisher_exact

    high = min(1.0, base + gap)
    one, two = binom.pmf(np.arange(n1 + 1), n1, high), binom.pmf(np.arange(n2 + 1), n2, base)
    return float(
        sum(
            one[a] * two[b]
            for a in range(n1 + 1)
            for b in range(n2 + 1)
            if one[a] * two[b] > 1e-12 and fisher_exact([[a, n1 - a], [b, n2 - b]]).pvalue < alpha
        )
    )


def unpaired_detectable(n1: int, n2: int, base: float, power: float = POWER, alpha: float = ALPHA) -> float | None:
    """The smallest gap above ``base`` Fisher's exact test on groups of n1 and n2 detects with ``power``; None when
    no gap up to a rate of 1 can be."""
    if not n1 or not n2:
        return None
    room = 1.0 - base
    share = _least(lambda x: unpaired_power(n1, n2, base, x * room, alpha), power)
    return None if share is None else share * room
