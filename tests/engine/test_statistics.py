"""Wilson intervals and the exact sign test: checked against scipy and against the chapter's figures."""

import numpy as np
import pytest
from scipy.stats import binomtest

from ragkit.statistics import sign_test, wilson


@pytest.mark.parametrize("n", [1, 7, 32, 64, 200])
def test_wilson_equals_scipy(n):
    for k in range(n + 1):
        expected = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        low, high = wilson(k, n)
        assert low == pytest.approx(expected.low, abs=1e-12) and high == pytest.approx(expected.high, abs=1e-12)


@pytest.mark.parametrize("args", [(5, 3), (-1, 3), (3, -1), (1.5, 3), (True, 3), (1, 3, 1.5), (1, 3, 1.0)])
def test_wilson_refuses_counts_or_levels_that_are_not_an_interval_in_words(args):
    from ragkit.errors import InputError

    with pytest.raises(InputError, match=r"Wilson interval needs whole counts|confidence level must lie"):
        wilson(*args)


def test_wilson_reproduces_the_chapter():
    assert [round(x, 3) for x in wilson(38, 64)] == [0.471, 0.705]
    assert [round(x, 3) for x in wilson(53, 64)] == [0.718, 0.901]


@pytest.mark.parametrize("wins, losses", [(w, lost) for w in range(0, 25, 3) for lost in range(0, 25, 4)])
def test_sign_test_equals_scipy(wins, losses):
    result = sign_test([1] * wins + [0] * losses + [1] * 5, [0] * wins + [1] * losses + [1] * 5)
    assert (result.wins, result.losses) == (wins, losses)
    expected = binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else 1.0
    assert result.p == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("wins, losses", [(990, 1_010), (1_100, 900), (1_300, 700), (1_100, 901), (26_000, 24_000)])
def test_sign_test_equals_scipy_on_either_side_of_the_exact_sum_limit(wins, losses):
    """2,000 pairs are summed exactly (the limit), 2,001 and 50,000 go to scipy: both agree with scipy."""
    from ragkit.statistics import counts_test

    expected = binomtest(wins, wins + losses, 0.5).pvalue
    assert counts_test(wins, losses).p == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_above_the_exact_sum_limit_no_binomial_term_is_summed(monkeypatch):
    """The sum of comb(n, i) grows without bound (0.56 s at 5,000 pairs): past the limit it is never started."""
    import ragkit.statistics as statistics

    monkeypatch.setattr(statistics, "comb", lambda *a: pytest.fail("summed binomial terms past the limit"))
    n = statistics.EXACT_SUM_LIMIT + 1
    assert statistics.counts_test(n // 2, n - n // 2).p == pytest.approx(binomtest(n // 2, n, 0.5).pvalue, rel=1e-9)


@pytest.mark.parametrize(
    "wins, losses, p", [(18, 3, 0.0015), (12, 2, 0.0129), (8, 6, 0.79), (9, 7, 0.80), (10, 3, 0.09), (10, 6, 0.45)]
)
def test_sign_test_reproduces_the_chapter(wins, losses, p):
    got = sign_test([1] * wins + [0] * losses, [0] * wins + [1] * losses).p
    assert got == pytest.approx(p, abs=0.006 if p > 0.05 else 0.0001)


def test_sign_test_needs_paired_samples():
    with pytest.raises(ValueError):
        sign_test([1, 0], [1])


def test_holm_equals_statsmodels():
    from statsmodels.stats.multitest import multipletests

    from ragkit.statistics import holm

    rng = np.random.default_rng(7)
    families = [rng.uniform(0, 0.2, size=m).tolist() for m in (2, 5, 7, 15, 75)]
    families += [[0.01, 0.01, 0.04], [1.0, 1.0], [0.0, 0.5, 1.0], [0.03, 0.2, 0.015, 0.9]]
    for ps in families:
        expected = multipletests(ps, method="holm")[1]
        assert holm(ps) == pytest.approx(expected.tolist(), abs=1e-15)


def test_holm_of_one_is_raw_and_empty_is_empty_and_bad_p_is_refused():
    from ragkit.errors import InputError
    from ragkit.statistics import holm

    assert holm([0.037]) == [0.037] and holm([1.0]) == [1.0] and holm([]) == []
    with pytest.raises(InputError, match="must lie in"):
        holm([0.2, float("nan")])


def test_needle_sign_test_counts_needles_not_queries():
    from ragkit.statistics import needle_sign_test

    # three needles asked twice: A wins both phrasings of n1 and n2, B wins one phrasing of n3
    needles = ["n1", "n2", "n3", "n1", "n2", "n3"]
    a, b = [1, 1, 0, 1, 1, 1], [0, 0, 1, 0, 0, 1]
    assert (sign_test(a, b).wins, sign_test(a, b).losses) == (4, 1)
    t = needle_sign_test(a, b, needles)
    assert (t.wins, t.losses) == (2, 1)
    assert t.p == pytest.approx(binomtest(2, 3, 0.5).pvalue)


def test_needle_sign_test_with_one_or_three_phrasings_per_needle():
    from ragkit.statistics import needle_scores, needle_sign_test

    needles = ["n1", "n2", "n2", "n2", "n3"]
    a, b = [1, 1, 1, 0, 0], [0, 1, 0, 0, 0]
    ids, scores = needle_scores(a, needles)
    assert ids == ("n1", "n2", "n3") and scores.tolist() == pytest.approx([1, 2 / 3, 0])
    t = needle_sign_test(a, b, needles)
    assert (t.wins, t.losses) == (2, 0)


def test_no_discordant_needle_is_p_one_said_plainly():
    from ragkit.statistics import needle_sign_test

    t = needle_sign_test([1, 0, 1, 0], [1, 0, 1, 0], ["a", "b", "a", "b"])
    assert (t.wins, t.losses, t.p) == (0, 0, 1.0)
    assert str(t) == "no discordant pairs, so nothing to test: p = 1"


def test_cluster_bootstrap_is_wider_when_phrasings_agree_and_equals_iid_for_singletons():
    from ragkit.statistics import cluster_bootstrap

    rng = np.random.default_rng(3)
    hit = (rng.uniform(size=32) < 0.6).astype(float)
    twice = np.concatenate([hit, hit])  # both phrasings of a needle always agree
    ids = [f"n{i}" for i in range(32)] * 2
    clustered = cluster_bootstrap(twice, ids)
    singles = cluster_bootstrap(twice, [f"q{i}" for i in range(64)])
    assert clustered.low <= twice.mean() <= clustered.high
    assert clustered.high - clustered.low > 1.25 * (singles.high - singles.low)
    assert clustered.design_effect == pytest.approx(2.0, rel=0.15)  # m = 2 identical phrasings: deff = 2
    assert singles.design_effect == pytest.approx(1.0, rel=0.1)
    again = cluster_bootstrap(twice, ids)
    assert (again.low, again.high) == (clustered.low, clustered.high)  # fixed seed


def test_cluster_bootstrap_draws_once_per_needle_count_and_gives_the_fresh_draws_interval():
    """A notebook bootstraps a hundred measures over the same 32 needles: the resamples are drawn once (they were most
    of each call) and shared read-only, and every interval is the one a fresh draw with the same seed gives."""
    from ragkit import statistics

    rng = np.random.default_rng(5)
    ids = [f"n{i}" for i in range(32)] * 2
    before = statistics._needle_draws.cache_info()
    for _ in range(3):
        values = rng.uniform(size=64)
        got = statistics.cluster_bootstrap(values, ids, seed=17)
        draws = np.random.default_rng(17).multinomial(32, np.full(32, 1 / 32), size=10_000)
        names, _ = statistics.needle_scores(values, ids)
        group = np.array([names.index(n) for n in ids])
        sums, sizes = np.bincount(group, weights=values), np.bincount(group).astype(float)
        means = (draws @ sums) / (draws @ sizes)
        assert (got.low, got.high) == tuple(np.quantile(means, [(1 - 0.95) / 2, (1 + 0.95) / 2]))
    after = statistics._needle_draws.cache_info()
    assert after.misses - before.misses <= 1 and after.hits - before.hits >= 2
    with pytest.raises(ValueError):
        statistics._needle_draws(32, 10_000, 17)[0, 0] = 99  # shared: no caller may change them


def test_cluster_bootstrap_variance_is_unbiased_for_few_clusters():
    """Eight needles of two correlated phrasings: the true variance of the mean is known, (1 + 1/2) / 8."""
    from ragkit.statistics import cluster_bootstrap

    rng = np.random.default_rng(11)
    ids = [f"n{i}" for i in range(8)] * 2
    found = []
    for _ in range(1000):
        shared = rng.normal(size=8)
        values = np.concatenate([shared, shared]) + rng.normal(size=16)
        found.append(cluster_bootstrap(values, ids, resamples=400, seed=int(rng.integers(1 << 30))).variance)
    # uncorrected, the bootstrap would find 7/8 of the true variance: 12.5% low, outside this tolerance
    assert np.mean(found) == pytest.approx(1.5 / 8, rel=0.06)


def test_cluster_bootstrap_refuses_an_empty_run():
    from ragkit.errors import InputError
    from ragkit.statistics import cluster_bootstrap

    with pytest.raises(InputError, match="no queries"):
        cluster_bootstrap([], [])


@pytest.mark.parametrize(
    "lead, wins, losses, p_holm, expected",
    [
        (15, 14, 2, 0.01, "consistent"),
        (15, 2, 14, 0.01, "contradicts"),
        (-4, 1, 2, 0.9, "inconclusive, same direction"),
        (-4, 2, 1, 0.9, "inconclusive, opposite direction"),
        (10, 8, 1, 0.06, "inconclusive, same direction"),
        (10, 3, 3, 1.0, "inconclusive, no lead either way"),
        (0, 8, 1, 0.01, "inconclusive, the chapter shows no lead"),
    ],
)
def test_verdict_rule(lead, wins, losses, p_holm, expected):
    from ragkit.statistics import DIFFERENCE, verdict

    assert verdict(lead, wins, losses, p_holm) == expected
    assert verdict(lead, wins, losses, p_holm, kind=DIFFERENCE) == expected  # a difference is the default claim


@pytest.mark.parametrize(
    "lead, wins, losses, p_holm, expected",
    [
        (2, 6, 6, 1.0, "consistent: neither detects a difference"),
        (-4, 1, 2, 0.9, "consistent: neither detects a difference"),  # the chapter's lean does not matter
        (7, 11, 1, 0.06, "consistent: neither detects a difference"),  # significant raw, not after Holm
        (7, 11, 1, 0.038, "differs: ours finds E/hybrid ahead"),  # hybrid vs BM25 on this corpus
        (-4, 1, 12, 0.01, "differs: ours finds E/dense ahead"),
    ],
)
def test_verdict_rule_for_a_claim_of_no_detectable_difference(lead, wins, losses, p_holm, expected):
    from ragkit.statistics import NO_DIFFERENCE, verdict

    assert verdict(lead, wins, losses, p_holm, kind=NO_DIFFERENCE, a="E/hybrid", b="E/dense") == expected


def test_every_verdict_starts_with_one_of_the_four_words():
    from ragkit.statistics import DIFFERENCE, NO_DIFFERENCE, VERDICTS, verdict

    said = {
        verdict(lead, wins, losses, p, kind=kind).split(",")[0].split(":")[0]
        for kind in (DIFFERENCE, NO_DIFFERENCE)
        for lead in (-3, 0, 3)
        for wins, losses in ((5, 1), (1, 5), (2, 2))
        for p in (0.01, 0.5)
    }
    assert said == set(VERDICTS)


def test_a_verdict_is_a_value_whose_words_are_the_rules():
    """The rule hands the teaching layer a value: its word, its qualifier, the run ahead and our counts; str() is the
    English the report prints, and nothing reads that English back."""
    from ragkit.statistics import NEITHER, NO_DIFFERENCE, QUALIFIERS, VERDICTS, Verdict

    differs = Verdict.of(-4, 1, 12, 0.01, kind=NO_DIFFERENCE, a="E/hybrid", b="E/dense")
    assert (differs.kind, differs.qualifier, differs.ahead) == ("differs", "", "E/dense")
    assert (differs.wins, differs.losses, differs.p) == (1, 12, 0.01)
    assert str(differs) == "differs: ours finds E/dense ahead"
    neither = Verdict.of(2, 6, 6, 1.0, kind=NO_DIFFERENCE)
    assert (neither.kind, neither.qualifier, str(neither)) == ("consistent", NEITHER, f"consistent: {NEITHER}")
    every = {
        Verdict.of(lead, wins, losses, p, kind=k)
        for lead in (-3, 0, 3)
        for wins, losses in ((5, 1), (1, 5), (2, 2))
        for p in (0.01, 0.5)
        for k in ("a difference", NO_DIFFERENCE)
    }
    assert {v.kind for v in every} == set(VERDICTS)
    assert {v.qualifier for v in every} - {""} == set(QUALIFIERS)


def test_an_unknown_claim_is_a_clear_error():
    from ragkit.errors import InputError
    from ragkit.statistics import verdict

    with pytest.raises(InputError, match="unknown claim"):
        verdict(3, 5, 1, 0.01, kind="a big difference")


@pytest.mark.parametrize(
    "p, expected",
    [
        (0.0015, "a difference"),
        (0.0499, "a difference"),
        (0.05, "no detectable difference"),
        (0.289, "no detectable difference"),
    ],
)
def test_a_claim_is_what_its_own_raw_p_says(p, expected):
    from ragkit.statistics import claim_of

    assert claim_of(p) == expected


def test_counts_test_is_the_sign_test_on_published_counts():
    from ragkit.errors import InputError
    from ragkit.statistics import counts_test, sign_test

    assert counts_test(2, 6) == sign_test([1, 1] + [0] * 6, [0, 0] + [1] * 6)
    assert counts_test(2, 6).p == pytest.approx(74 / 256)  # 2 * (C(8,0) + C(8,1) + C(8,2)) / 2^8
    assert counts_test(0, 0).p == 1.0
    with pytest.raises(InputError, match="not negative"):
        counts_test(-1, 3)


def test_the_exact_sign_test_falls_below_005_at_most_one_time_in_twenty():
    # 02's words: under no difference a p below 0.05 happens at most one time in twenty (an exact test on whole counts)
    from math import comb

    from ragkit.statistics import counts_test

    sizes = [sum(comb(n, k) for k in range(n + 1) if counts_test(k, n - k).p < 0.05) / 2**n for n in range(1, 61)]
    assert max(sizes) <= 0.05 and min(sizes) == 0 and max(sizes) > 0.03
