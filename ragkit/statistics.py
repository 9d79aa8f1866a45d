"""Intervals and paired tests: with 64 queries a lead of a few points is not yet a finding, and these show it."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import comb, sqrt
from statistics import NormalDist

import numpy as np

from ragkit.errors import InputError

__all__ = [
    "ALPHA",
    "EXACT_SUM_LIMIT",
    "INCONCLUSIVE",
    "NEITHER",
    "VERDICTS",
    "ClusterInterval",
    "Floats",
    "SignTest",
    "claim_of",
    "cluster_bootstrap",
    "counts_test",
    "holm",
    "needle_scores",
    "needle_sign_test",
    "sign_test",
    "smallest_p",
    "verdict",
    "wilson",
]

Floats = Sequence[float] | np.ndarray
"""One value per query: a list or a NumPy array."""


def wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval (95% by default) for k successes out of n: unlike the normal one, in [0, 1].

    Newcombe's formula, as scipy's ``binomtest(k, n).proportion_ci(method="wilson")`` computes it (the tests check
    they agree); written out so that a kernel does not import ``scipy.stats``, 0.6 s of every notebook's start.
    """
    if (
        isinstance(k, bool)
        or isinstance(n, bool)
        or not (isinstance(k, int | np.integer) and isinstance(n, int | np.integer))
        or not 0 <= k <= n
    ):
        raise InputError(f"a Wilson interval needs whole counts with 0 <= k <= n (got k={k!r}, n={n!r})")
    if not 0.0 <= level < 1.0:
        raise InputError(f"the confidence level must lie in [0, 1) (got {level!r}): 0.95 is a 95% interval")
    k, n = int(k), int(n)
    if n == 0:
        return 0.0, 1.0
    z = NormalDist().inv_cdf(0.5 + 0.5 * level)
    p = k / n
    center, delta = (2 * n * p + z * z) / (2 * (n + z * z)), z / (2 * (n + z * z)) * sqrt(4 * n * p * (1 - p) + z * z)
    return (0.0 if k == 0 else center - delta), (1.0 if k == n else center + delta)


@dataclass(frozen=True)
class SignTest:
    """A paired comparison: queries where A wins, where B wins, and the exact two-sided p."""

    wins: int
    losses: int
    p: float

    def __str__(self) -> str:
        if self.wins + self.losses == 0:
            return "no discordant pairs, so nothing to test: p = 1"
        return f"+{self.wins}/-{self.losses}, p = {self.p:.3g}"


def sign_test(a: Floats, b: Floats) -> SignTest:
    """Exact two-sided sign test on the discordant pairs (binomial, p = 0.5); ties are dropped."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise InputError(f"paired samples must have the same length ({len(a)} vs {len(b)}): pair each query's results")
    return counts_test(int((a > b).sum()), int((a < b).sum()))


ALPHA = 0.05
"""The level the course tests at: a p below it is a difference this data tells apart (two-sided, after Holm where a
family is corrected)."""
EXACT_SUM_LIMIT = 2_000
"""Up to this many discordant pairs the sign test sums binomial terms itself, in whole numbers, without scipy."""


def counts_test(wins: int, losses: int) -> SignTest:
    """The exact two-sided sign test on a published pair of counts (wins, losses), no per-query data needed."""
    if wins < 0 or losses < 0:
        raise InputError(f"counts must be whole numbers of pairs, not negative (got +{wins}/-{losses})")
    if wins + losses == 0:
        return SignTest(0, 0, 1.0)
    n, fewer = wins + losses, min(wins, losses)
    if n > EXACT_SUM_LIMIT:  # the sum below grows with n; scipy's binomial is quick at any n (and imported only then)
        from scipy.stats import binomtest

        return SignTest(wins, losses, float(binomtest(wins, n, 0.5).pvalue))
    tail = Fraction(sum(comb(n, i) for i in range(fewer + 1)), 2**n)  # P(X <= fewer) for X ~ Binomial(n, 1/2)
    return SignTest(wins, losses, float(min(Fraction(1), 2 * tail)))


def smallest_p(pairs: int) -> float:
    """The smallest two-sided p an exact sign test can give with this many discordant pairs: what a sample can show."""
    return min(1.0, 2 * 0.5**pairs) if pairs else 1.0


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment within one family: the i-th smallest p times (m - i), kept monotone, capped at 1."""
    p = [float(x) for x in pvalues]
    if any(not 0.0 <= x <= 1.0 for x in p):
        raise InputError(
            f"p-values must lie in [0, 1] (got {[x for x in p if not 0.0 <= x <= 1.0][:3]}): "
            "pass the raw p of each comparison of one family"
        )
    adjusted, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(sorted(range(len(p)), key=p.__getitem__)):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        adjusted[i] = running
    return adjusted


def needle_scores(values: Floats, needles: Sequence[str]) -> tuple[tuple[str, ...], np.ndarray]:
    """Each needle's score: the mean of its phrasings' values (for recall, the share of its phrasings hit)."""
    values = np.asarray(values, dtype=float)
    if len(values) != len(needles):
        raise InputError(f"one needle id per query is needed ({len(values)} values, {len(needles)} ids)")
    ids = tuple(dict.fromkeys(needles))
    where = {n: i for i, n in enumerate(ids)}
    group = np.array([where[n] for n in needles], dtype=int)
    sums = np.bincount(group, weights=values, minlength=len(ids))
    return ids, sums / np.bincount(group, minlength=len(ids))


def needle_sign_test(a: Floats, b: Floats, needles: Sequence[str]) -> SignTest:
    """The sign test at the level of needles: a needle whose phrasings score differently in A and B is one pair.

    Phrasings of one needle share its chunk, so they are not independent evidence; any
    number of phrasings per needle works (one, two, three).
    """
    if len(a) != len(b):
        raise InputError(f"paired samples must have the same length ({len(a)} vs {len(b)}): pair each query's results")
    return sign_test(needle_scores(a, needles)[1], needle_scores(b, needles)[1])


@dataclass(frozen=True)
class ClusterInterval:
    """A percentile interval from resampling whole needles, its variance, and how much clustering inflates it."""

    low: float
    high: float
    design_effect: float
    variance: float = 0.0


@functools.lru_cache(maxsize=8)
def _needle_draws(needles: int, resamples: int, seed: int) -> np.ndarray:
    """How often each needle is drawn in each resample (read-only): the same for every measure over the same needles,
    so a notebook that bootstraps a hundred hit rates draws them once (the multinomial was most of each call)."""
    draws = np.random.default_rng(seed).multinomial(needles, np.full(needles, 1 / needles), size=resamples)
    draws.setflags(write=False)
    return draws


def cluster_bootstrap(
    values: Floats, needles: Sequence[str], resamples: int = 10_000, seed: int = 0, level: float = 0.95
) -> ClusterInterval:
    """Percentile interval of a mean over queries, resampling needles (with all their phrasings) with replacement.

    The design effect is the bootstrap variance over the variance the same mean would have
    if every query were independent (s^2 / n, s^2 with n - 1). Resampling G needles gives a
    variance too small by (G - 1) / G (31/32 with 32 needles), so it is scaled by G / (G - 1)
    to match. The percentile interval itself is not corrected: with a few dozen needles it
    covers somewhat less than its nominal 95%; read its edges as approximate.
    """
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        raise InputError("no queries to resample: evaluate at least one question first")
    ids, _ = needle_scores(values, needles)
    where = {n: i for i, n in enumerate(ids)}
    group = np.array([where[n] for n in needles], dtype=int)
    sums = np.bincount(group, weights=values, minlength=len(ids))
    sizes = np.bincount(group, minlength=len(ids)).astype(float)
    draws = _needle_draws(len(ids), resamples, seed)
    means = (draws @ sums) / (draws @ sizes)
    low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    g = len(ids)
    variance = float(means.var() * g / (g - 1)) if g > 1 else 0.0
    naive = values.var(ddof=1) / values.size if values.size > 1 else 0.0
    design = variance / naive if naive > 0 else 1.0
    return ClusterInterval(float(low), float(high), design, variance)


DIFFERENCE, NO_DIFFERENCE = "a difference", "no detectable difference"
"""The two kinds of claim a published paired comparison makes, fixed by its own raw p (see ``claim_of``)."""

VERDICTS = ("consistent", "contradicts", "inconclusive", "differs")
"""Every word a verdict starts with; prose, quiz and report use these and no others."""

NEITHER = "neither detects a difference"
INCONCLUSIVE = "this data cannot tell either way, so the published finding is neither confirmed nor refuted"
"""What *inconclusive* means, in the one wording the report, the notebooks and the quiz share."""


def claim_of(p: float, alpha: float = ALPHA) -> str:
    """What a published comparison claims, by its own raw p: *a difference* below alpha, else *no detectable
    difference* (whatever words the publication put on it: a p of 0.29 found nothing)."""
    if not 0.0 <= p <= 1.0:
        raise InputError(f"a p-value must lie in [0, 1] (got {p}): pass the publication's raw sign-test p")
    return DIFFERENCE if p < alpha else NO_DIFFERENCE


QUALIFIERS = (
    NEITHER,
    "same direction",
    "opposite direction",
    "no lead either way",
    "the chapter shows no lead",
)
"""What follows a verdict's word when it needs one: *consistent: neither ...*, or *inconclusive, ...*."""


@dataclass(frozen=True)
class Verdict:
    """The one rule's outcome on a published finding: its word, what qualifies it, and the counts behind it.

    ``kind`` is one of ``VERDICTS``; ``qualifier`` one of ``QUALIFIERS`` or empty; ``ahead`` names the run ours finds
    ahead in a *differs*. ``wins``, ``losses`` and ``p`` are ours (needle level, Holm-adjusted). ``str()`` is the
    verdict in the report's English; a notebook renders the same value in its own language.
    """

    kind: str
    qualifier: str = ""
    ahead: str | None = None
    wins: int = 0
    losses: int = 0
    p: float = 1.0

    def __str__(self) -> str:
        if self.kind == "differs":
            return f"differs: ours finds {self.ahead} ahead"
        if self.kind == "consistent" and self.qualifier:
            return f"consistent: {self.qualifier}"
        return f"{self.kind}, {self.qualifier}" if self.qualifier else self.kind

    @classmethod
    def of(
        cls,
        lead: int,
        wins: int,
        losses: int,
        p_holm: float,
        alpha: float = ALPHA,
        *,
        kind: str = DIFFERENCE,
        a: str = "the first",
        b: str = "the second",
    ) -> Verdict:
        """The one rule against a published finding: what it claims, our direction, and our needle-level Holm p.

        ``lead`` is the published wins minus losses (A ahead: positive) and ``kind`` what it claims
        (``DIFFERENCE`` or ``NO_DIFFERENCE``, see ``claim_of``); ``wins``/``losses``/``p_holm`` are
        ours; ``a`` and ``b`` name the two runs in the words of a *differs*. Every outcome:

        ========================  ===============================  =====================================
        the publication claims    ours                             verdict
        ========================  ===============================  =====================================
        a difference              same direction, p_holm < alpha   consistent
        a difference              opposite, p_holm < alpha         contradicts
        a difference              p_holm >= alpha                  inconclusive, same / opposite
                                                                   direction (or no lead either way)
        a difference, no lead     anything                         inconclusive, the chapter shows no lead
        no detectable difference  p_holm >= alpha                  consistent: neither detects a difference
        no detectable difference  p_holm < alpha                   differs: ours finds A (or B) ahead
        ========================  ===============================  =====================================

        *Inconclusive*: ``INCONCLUSIVE``.
        """
        if kind not in (DIFFERENCE, NO_DIFFERENCE):
            raise InputError(f"unknown claim {kind!r}: use statistics.DIFFERENCE or statistics.NO_DIFFERENCE")
        ours = int(np.sign(wins - losses))
        if kind == NO_DIFFERENCE:
            if p_holm < alpha and ours != 0:
                return cls("differs", ahead=a if ours > 0 else b, wins=wins, losses=losses, p=p_holm)
            return cls("consistent", NEITHER, wins=wins, losses=losses, p=p_holm)
        theirs = int(np.sign(lead))
        if theirs == 0:
            return cls("inconclusive", "the chapter shows no lead", wins=wins, losses=losses, p=p_holm)
        if ours == 0:
            return cls("inconclusive", "no lead either way", wins=wins, losses=losses, p=p_holm)
        same = ours == theirs
        if p_holm < alpha:
            return cls("consistent" if same else "contradicts", wins=wins, losses=losses, p=p_holm)
        return cls(
            "inconclusive", "same direction" if same else "opposite direction", wins=wins, losses=losses, p=p_holm
        )


def verdict(
    lead: int,
    wins: int,
    losses: int,
    p_holm: float,
    alpha: float = ALPHA,
    *,
    kind: str = DIFFERENCE,
    a: str = "the first",
    b: str = "the second",
) -> str:
    """The verdict of ``Verdict.of`` (the one rule) in its words, as a student writes it and the exercise checks it."""
    return str(Verdict.of(lead, wins, losses, p_holm, alpha, kind=kind, a=a, b=b))
