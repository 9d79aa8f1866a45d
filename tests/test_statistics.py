"""Wilson intervals and the exact sign test: checked against scipy and against the chapter's figures."""

import pytest
from scipy.stats import binomtest

from ragkit.statistics import sign_test, wilson


@pytest.mark.parametrize("n", [1, 7, 32, 64, 200])
def test_wilson_equals_scipy(n):
    for k in range(n + 1):
        expected = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        low, high = wilson(k, n)
        assert low == pytest.approx(expected.low, abs=1e-12) and high == pytest.approx(expected.high, abs=1e-12)


def test_wilson_reproduces_the_chapter():
    assert [round(x, 3) for x in wilson(38, 64)] == [0.471, 0.705]
    assert [round(x, 3) for x in wilson(53, 64)] == [0.718, 0.901]


@pytest.mark.parametrize("wins, losses", [(w, l) for w in range(0, 25, 3) for l in range(0, 25, 4)])
def test_sign_test_equals_scipy(wins, losses):
    result = sign_test([1] * wins + [0] * losses + [1] * 5, [0] * wins + [1] * losses + [1] * 5)
    assert (result.wins, result.losses) == (wins, losses)
    expected = binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else 1.0
    assert result.p == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("wins, losses, p", [(18, 3, 0.0015), (12, 2, 0.0129), (8, 6, 0.79), (9, 7, 0.80),
                                             (10, 3, 0.09), (10, 6, 0.45)])
def test_sign_test_reproduces_the_chapter(wins, losses, p):
    got = sign_test([1] * wins + [0] * losses, [0] * wins + [1] * losses).p
    assert got == pytest.approx(p, abs=0.006 if p > 0.05 else 0.0001)


def test_sign_test_needs_paired_samples():
    with pytest.raises(ValueError):
        sign_test([1, 0], [1])
