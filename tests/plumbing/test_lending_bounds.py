"""The grader lends a run vectors within a budget of characters AND of texts: a flood of short texts is refused."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

from ragkit.plumbing import service


@pytest.fixture
def lender(tmp_path: Path):
    """A lender of four-dimension zero vectors that counts what it embedded, with room for 100 texts per run."""
    embedded: list[str] = []

    def encode(texts: list[str]) -> np.ndarray:
        embedded.extend(texts)
        return np.zeros((len(texts), 4), dtype=np.float32)

    lent = service.Lender(tmp_path / "s.sock", "model", encode, threading.Lock(), texts=100)
    yield lent, embedded
    lent.close()


def _asked(texts: list[str]) -> bytes:
    return json.dumps({"namespace": "model", "texts": texts}).encode()


def test_a_flood_of_short_texts_is_refused_past_the_runs_count_of_texts(lender):
    lent, embedded = lender
    short = [f"t{i:08d}" for i in range(1_000)]  # 10 characters each: far inside the budget of characters
    assert sum(map(len, short)) < service.BUDGET
    assert lent._answer(_asked(short)) == b"Eover budget"
    assert embedded == []
    answers = [lent._answer(_asked(short[i : i + 30])) for i in range(0, 150, 30)]
    assert [a[:1] for a in answers] == [b"V", b"V", b"V", b"E", b"E"]  # 90 lent; a fourth request of 30 is over
    assert len(embedded) == lent.lent == 90
    assert lent._answer(_asked(short[:10])).startswith(b"V")  # what is left is still lent
    assert lent._answer(_asked(short[:1])) == b"Eover budget"


def test_a_lender_nobody_sizes_still_has_a_count_of_texts(tmp_path):
    lent = service.Lender(
        tmp_path / "s.sock", "model", lambda texts: np.zeros((len(texts), 4), np.float32), threading.Lock()
    )
    try:
        assert lent.left_texts == service.MAX_TEXTS
    finally:
        lent.close()
