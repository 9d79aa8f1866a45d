"""Tuning judged honestly: chosen on one half of the needles, judged on the other, by needle."""

import numpy as np
import pytest

from ragkit.data import load_questions
from ragkit.data import queries as make_queries
from ragkit.errors import InputError
from ragkit.evaluation import Result, evaluate
from ragkit.tuning import bm25_results, halves, rrf_results, tune

from conftest import ROOT

NEEDLES = ("n1", "n1", "n2", "n2", "n3", "n3", "n4", "n4", "n5", "n5", "n6", "n6")
QUERIES = tuple(f"q{i}" for i in range(len(NEEDLES)))


def test_the_halves_split_by_needle_with_a_fixed_seed():
    tune_half, held = halves(NEEDLES)
    assert tune_half | held == set(NEEDLES) and not tune_half & held and len(tune_half) == 3
    assert halves(NEEDLES) == (tune_half, held) and halves(NEEDLES, seed=5) != (tune_half, held)
    with pytest.raises(InputError, match="at least two needles"):
        halves(("n1", "n1"))


def _result(found_on: set[str], name: str) -> Result:
    """Every query of the needles in ``found_on`` at rank 1, the others missed."""
    return Result("E", name, np.array([1 if n in found_on else 0 for n in NEEDLES]), QUERIES, NEEDLES)


def test_a_value_that_wins_the_tuning_half_is_judged_on_the_other_and_can_lose_there():
    tune_half, held = halves(NEEDLES)
    default = _result(set(held), "default")          # finds every held-out needle, no tuning one
    lucky = _result(set(tune_half), "lucky")         # the reverse: best on the tuning half only
    t = tune("k", {"default": default, "lucky": lucky}, "default", "Hit@1")
    assert t.chosen == "lucky" and t.held_best == "default" and t.flattered
    assert {tr.value: (tr.tune, tr.held) for tr in t.trials} == {"default": (0.0, 1.0), "lucky": (1.0, 0.0)}
    assert (t.judged.test.wins, t.judged.test.losses) == (0, 3)  # judged on the held-out needles only
    same = tune("k", {"default": default, "copy": _result(set(held), "copy")}, "default", "Hit@1")
    assert same.chosen == "default" and not same.flattered  # a tie goes to the default


def test_a_sweep_without_its_default_or_over_different_queries_is_refused():
    default = _result(set(), "d")
    with pytest.raises(InputError, match="not among the values"):
        tune("k", {"other": default}, "default")
    other = Result("E", "o", np.zeros(2, dtype=int), ("a", "b"))
    with pytest.raises(InputError, match="different queries"):
        tune("k", {"default": default, "other": other}, "default")


@pytest.mark.slow
def test_on_the_course_the_default_settings_reproduce_the_evaluation(corpus):
    from ragkit.chunking import chunk_corpus
    from ragkit.retrieval import Retriever

    questions = load_questions(ROOT / "data" / "questions.jsonl")
    queries = make_queries(questions)
    retriever = Retriever(chunk_corpus(corpus, "E"), strategy="E", progress=False)
    ev = evaluate(corpus, questions, "E", progress=False)
    bm25 = bm25_results(retriever, questions, queries, k1s=(0.9, 1.2), bs=(0.75,))
    assert np.array_equal(bm25[(1.2, 0.75)].ranks, ev["E/bm25"].ranks)
    assert bm25[(1.2, 0.75)].relevant == ev["E/bm25"].relevant  # every relevant chunk: the field's metrics hold too
    rrf = rrf_results(retriever, questions, queries, ks=(1, 60))
    assert np.array_equal(rrf[60].ranks, ev["E/hybrid"].ranks)
    t = tune("RRF k", rrf, 60, "MRR")
    assert t.chosen in (1, 60) and {tr.value for tr in t.trials} == {1, 60}
    assert set(t.judged.wins) | set(t.judged.losses) <= halves(rrf[60].needle_ids)[1]  # judged on held-out needles
    with pytest.raises(InputError, match="b between 0 and 1"):
        bm25_results(retriever, questions, queries, bs=(1.5,))
