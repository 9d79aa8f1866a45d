"""Reciprocal rank fusion: ranks not scores, k = 60, ties in first-seen order."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ragkit.fusion import rrf, rrf_many


def test_rrf_by_hand():
    fused = rrf([[1, 2, 3], [3, 1, 4]])
    # 1: 1/61 + 1/62; 3: 1/63 + 1/61; 2: 1/62; 4: 1/63
    assert fused.tolist() == [1, 3, 2, 4]


def test_ties_keep_first_seen_order():
    assert rrf([[7, 8], [8, 7]]).tolist() == [7, 8]
    assert rrf([[8, 7], [7, 8]]).tolist() == [8, 7]
    assert rrf([[5], [6]]).tolist() == [5, 6]


def test_k_changes_the_weights():
    # X = 0 is ranked 1st and 10th, Y = 9 is 5th twice: a small k lets the top rank dominate
    lists = [[0, 1, 2, 3, 9, 4, 5, 6, 7, 8], [1, 2, 3, 4, 9, 5, 6, 7, 8, 0]]
    before = lambda fused: fused.tolist().index(0) < fused.tolist().index(9)
    assert before(rrf(lists, k=0))
    assert not before(rrf(lists, k=60))


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 40), st.integers(1, 5), st.randoms(use_true_random=False))
def test_vectorised_equals_row_by_row(n, q, rnd):
    first = np.array([rnd.sample(range(n), n) for _ in range(q)])
    second = np.array([rnd.sample(range(n), n) for _ in range(q)])
    fused = rrf_many(first, second)
    for i in range(q):
        assert fused[i].tolist() == rrf([first[i], second[i]]).tolist()
