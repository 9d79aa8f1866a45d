"""The ranking every retriever shares: best first, ties in chunk order, and its first k found without a full sort."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ragkit import retrieval
from ragkit.retrieval import rank

SCORES = st.integers(1, 4).flatmap(
    lambda rows: st.integers(1, 30).flatmap(
        lambda n: arrays(
            np.float64, st.sampled_from([(n,), (rows, n)]), elements=st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0, 3.25])
        )
    )
)


@settings(max_examples=300, deadline=None)
@given(scores=SCORES, k=st.integers(0, 32), higher=st.booleans())
def test_the_first_k_are_the_full_rankings_first_k_ties_included(scores, k, higher):
    """Scores drawn from six values, so ties at the k-th place are the rule: chunk order must still decide them."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(retrieval, "SORT_ALL", 0)  # the selection, even on these small arrays
        assert np.array_equal(rank(scores, higher, k=k), rank(scores, higher)[..., :k])


def test_a_large_array_takes_the_selection_and_gives_the_same_first_k():
    scores = np.random.default_rng(1).integers(0, 50, size=(3, 5000)).astype(np.float32)
    assert scores.size > retrieval.SORT_ALL
    for k in (1, 4, 20, 4999):
        assert np.array_equal(rank(scores, k=k), rank(scores)[:, :k])


def test_ties_keep_chunk_order_and_the_best_comes_first():
    scores = np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [0.0, 0.0, 0.0, 0.0, 0.0]])
    assert rank(scores, k=2).tolist() == [[1, 2], [0, 1]]
    assert rank(scores, higher_is_better=False, k=3).tolist() == [[0, 3, 1], [0, 1, 2]]
    assert rank(np.array([2.0, np.nan, 1.0]), k=2).tolist() == rank(np.array([2.0, np.nan, 1.0]))[:2].tolist()


def test_a_negative_k_is_refused_whatever_the_size():
    from ragkit.errors import InputError

    for n in (10, retrieval.SORT_ALL + 1):
        with pytest.raises(InputError, match="0 or more"):
            rank(np.zeros(n), k=-1)
