"""Intervals and paired tests: with 64 queries a four-point lead says nothing, and these show it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval for k successes out of n (unlike the normal one it stays in [0, 1])."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class SignTest:
    """A paired comparison: queries where A wins, where B wins, and the exact two-sided p."""

    wins: int
    losses: int
    p: float

    def __str__(self) -> str:
        return f"+{self.wins}/-{self.losses}, p = {self.p:.3g}"


def sign_test(a: Sequence[float], b: Sequence[float]) -> SignTest:
    """Exact two-sided sign test on the discordant pairs (binomial, p = 0.5); ties are dropped."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired samples must have the same length ({len(a)} vs {len(b)})")
    wins, losses = int((a > b).sum()), int((a < b).sum())
    n = wins + losses
    if n == 0:
        return SignTest(0, 0, 1.0)
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1))
    return SignTest(wins, losses, min(1.0, 2 * tail / 2 ** n))
