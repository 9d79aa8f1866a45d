"""Abstention beyond the cosine cut: any score gates the same way, swept over the same queries."""

import numpy as np
import pytest

from ragkit.abstention import ScoreSweep, sweeps
from ragkit.chunking import chunk_corpus
from ragkit.data import load_out_of_domain, load_questions
from ragkit.errors import InputError
from ragkit.retrieval import Retriever
from ragkit.threshold import Sweep

from conftest import ROOT

# two answerable queries (candidates best first; the first query's needle in its second candidate) and two others
IN = np.array([[0.9, 0.6], [0.4, 0.2]])
NEEDLE = np.array([[False, True], [False, False]])
OUT = np.array([[0.7, 0.1], [0.3, 0.2]])


def test_a_score_gate_counts_what_the_cosine_gate_counts_in_either_direction():
    high = ScoreSweep("score", IN, NEEDLE, OUT, higher_is_better=True)
    row = high.at(0.5)  # passes: 0.9 and 0.6 (the needle) for the first, nothing for the second; 0.7 bluffs
    assert (row.bluffs, row.refused, row.answered_with_needle, row.answered_without_needle) == (1, 1, 1, 0)
    assert high.at(0.65).answered_without_needle == 1 and high.at(None).bluffs == 2
    low = ScoreSweep("distance", -IN, NEEDLE, -OUT, higher_is_better=False)
    assert vars(low.at(-0.5)) == {**vars(row), "cut": -0.5}  # the same gate on negated scores, kept below the cut


def test_the_curve_runs_from_answering_everything_to_refusing_everything():
    for sweep in (ScoreSweep("s", IN, NEEDLE, OUT, True), ScoreSweep("d", -IN, NEEDLE, -OUT, False)):
        curve = sweep.curve()
        assert (curve[0].refused_share, curve[0].bluff_share) == (0, 1)
        assert (curve[-1].refused_share, curve[-1].bluff_share) == (1, 0)
        refused = [p.refused_share for p in curve]
        bluffs = [p.bluff_share for p in curve]
        assert refused == sorted(refused) and bluffs == sorted(bluffs, reverse=True)


def test_the_fewest_bluffs_under_a_refusal_ceiling():
    sweep = ScoreSweep("s", IN, NEEDLE, OUT, True)
    half = sweep.fewest_bluffs(0.5)  # 0.7: the first query keeps 0.9 (not its needle), the second is refused
    assert (half.cut, half.bluffs, half.refused, half.answered_without_needle) == (0.7, 0, 1, 1)
    none = sweep.fewest_bluffs(0.0)  # refusing nothing: the cut must stay under 0.4, so 0.7 bluffs
    assert (none.bluffs, none.refused) == (1, 0)
    everything = ScoreSweep("s", IN, NEEDLE, np.array([[5.0], [5.0]]), True).fewest_bluffs(0.0)
    assert everything.cut is None and everything.bluffs == 2  # nothing refused: no cut, not a made-up one
    with pytest.raises(InputError, match="between 0 and 1"):
        sweep.fewest_bluffs(1.5)


def test_the_bluffing_queries_are_the_ones_the_bluff_count_counts():
    sweep = ScoreSweep("s", IN, NEEDLE, OUT, True)
    assert sweep.bluffing(0.5).tolist() == [True, False] and sweep.bluffing(None).tolist() == [True, True]
    for cut in sweep.cuts():
        assert int(sweep.bluffing(float(cut)).sum()) == sweep.at(float(cut)).bluffs


@pytest.mark.parametrize(
    "scores_in, needle, scores_out, says",
    [
        (IN, NEEDLE[:, :1], OUT, "same shape"),
        (IN[:0], NEEDLE[:0], OUT, "both kinds"),
        (np.array([[np.nan, 0.1], [0.2, 0.3]]), NEEDLE, OUT, "NaN"),
    ],
)
def test_bad_scores_are_refused_with_a_reason(scores_in, needle, scores_out, says):
    with pytest.raises(InputError, match=says):
        ScoreSweep("s", scores_in, needle, scores_out, True)


@pytest.mark.slow
def test_on_the_course_the_cosine_rule_is_the_gate_and_every_rule_trades_the_same_way(corpus):
    from ragkit.rerank import LateInteractionReranker

    questions = load_questions(ROOT / "data" / "questions.jsonl")
    out_of_domain = load_out_of_domain(ROOT / "data" / "out_of_domain.jsonl")
    chunks = chunk_corpus(corpus, "E")
    retriever = Retriever(chunks, progress=False)
    rules = sweeps(retriever, chunks, questions, out_of_domain, reranker=LateInteractionReranker(), depth=8)
    assert list(rules) == ["cosine distance", "BM25 score", "maxsim score"]
    gate = Sweep(chunks, questions, out_of_domain, retriever)
    for cut in (None, 0.3, 0.525, 0.675, 0.8):
        assert vars(rules["cosine distance"].at(cut)) == vars(gate.at(cut)), cut
    for rule in rules.values():
        curve = rule.curve()
        assert (curve[0].refused_share, curve[-1].refused_share, curve[-1].bluff_share) == (0, 1, 0), rule.name


def test_the_cross_encoders_code_path_gates_on_a_tiny_model(tiny_cross_encoder, tmp_path):
    """The cross-encoder's cut, on a random tiny BERT (its scores mean nothing; its path is the real one)."""
    from ragkit.corpus import load_corpus
    from ragkit.data import OutOfDomain, Question
    from ragkit.rerank import CrossEncoderReranker

    (tmp_path / "a.md").write_text("# Caching\n\nThe kv cache keeps keys and values. It grows with the context.\n")
    (tmp_path / "b.md").write_text("# Grading\n\nA Wilson interval bounds a share. It never leaves zero to one.\n")
    corpus = load_corpus(tmp_path)
    chunks = chunk_corpus(corpus, "E")
    questions = [
        Question("q1", "a", "keeps keys and values", "what does the kv cache keep", "cache ticket"),
        Question("q2", "b", "bounds a share", "what does a wilson interval bound", "interval ticket"),
    ]
    out = [OutOfDomain("o1", "how do I cook paella", "absurd", "cooking")]
    reranker = CrossEncoderReranker(tiny_cross_encoder, batch_size=2)
    rules = sweeps(Retriever(chunks, progress=False), chunks, questions, out, reranker=reranker, keep=2, depth=3)
    rule = rules["rerank score"]
    assert rule.higher_is_better and rule.scores_in.shape[0] == 4 and np.isfinite(rule.scores_in).all()
    assert rule.at(None).bluffs == 1 and rule.curve()[-1].refused_share == 1
