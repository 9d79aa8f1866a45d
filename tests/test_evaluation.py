"""Needle metrics: hits on carried text, first-hit ranks, recall and MRR checked against ranx, the CLI report."""

import json

import numpy as np
import pytest

from ragkit.__main__ import main
from ragkit.chunking import chunk_document
from ragkit.data import Question, load_questions
from ragkit.errors import InputError
from ragkit.evaluation import Result, compare, evaluate, first_hit_ranks, needle_hits

from conftest import ROOT, make_document


def question(needle, doc_id="doc"):
    return Question("q1", doc_id, needle, "what?", "help!")


def test_first_hit_rank_is_one_based_and_zero_when_never():
    hits = np.array([[False, True, False], [False, False, False], [True, True, False]])
    ranking = np.array([[0, 2, 1], [0, 1, 2], [2, 1, 0]])
    assert first_hit_ranks(ranking, hits).tolist() == [3, 0, 2]


def test_blind_cut_destroys_and_overlap_carries_a_short_needle():
    needle = "The needle sentence sits here."
    text = "x" * 40 + " " + needle + " " + "y" * 40
    doc = make_document(text)
    cut = text.index(needle) + 10  # a window boundary inside the needle
    assert not needle_hits(chunk_document(doc, "A", size=cut), [question(needle)]).any()
    assert needle_hits(chunk_document(doc, "B", size=cut, overlap=64), [question(needle)]).any()


def test_header_text_never_counts_as_a_hit():
    doc = make_document("# Doc\n\n## The special section title here\nBody text only.\n")
    (chunk,) = chunk_document(doc, "E")
    assert "The special section title here" in chunk.text
    assert not needle_hits([chunk], [question("The special section title here")]).any()


def test_metrics_per_query():
    r = Result("E", "dense", np.array([1, 3, 0, 25]), ("a", "b", "c", "d"))
    assert r.per_query("R@1").tolist() == [1, 0, 0, 0]
    assert r.value("R@4") == 0.5 and r.value("R@20") == 0.5
    assert r.value("MRR") == pytest.approx((1 + 1 / 3 + 0 + 1 / 25) / 4)
    with pytest.raises(InputError):
        r.per_query("nDCG")


def test_compare_names_the_discordant_queries():
    a = Result("E", "dense", np.array([1, 5, 0, 2]), ("q1", "q2", "q3", "q4"))
    b = Result("A", "dense", np.array([3, 1, 0, 2]), ("q1", "q2", "q3", "q4"))
    c = compare(a, b, "R@1")
    assert (c.test.wins, c.test.losses, c.wins, c.losses) == (1, 1, ("q1",), ("q2",))
    c = compare(a, b, "MRR")
    assert (c.wins, c.losses) == (("q1",), ("q2",))


@pytest.fixture(scope="module")
def evaluation(corpus):
    questions = load_questions(ROOT / "data" / "questions.jsonl")
    return evaluate(corpus, questions, strategies="AE", progress=False), questions


def test_recall_and_mrr_equal_ranx(evaluation, corpus):
    from ranx import Qrels, Run, evaluate as ranx_evaluate

    from ragkit.chunking import chunk_corpus
    from ragkit.retrieval import Retriever

    ev, questions = evaluation
    chunks = chunk_corpus(corpus, "E")
    hits = np.concatenate([needle_hits(chunks, questions)] * 2)
    texts = [q.text for q in ev.queries]
    run = Retriever(chunks, progress=False).dense(texts)
    ids = [f"q{i}" for i in range(len(texts))]
    qrels = {qid: ({f"c{j}": 1 for j in np.flatnonzero(h)} or {"none": 1}) for qid, h in zip(ids, hits)}
    scores = {qid: {f"c{j}": float(len(row) - pos) for pos, j in enumerate(row)} for qid, row in zip(ids, run.ranking)}
    expected = ranx_evaluate(Qrels(qrels), Run(scores), ["hit_rate@1", "hit_rate@4", "hit_rate@8", "hit_rate@20", "mrr"])
    result = ev["E/dense"]
    for k in (1, 4, 8, 20):
        assert result.value(f"R@{k}") == pytest.approx(expected[f"hit_rate@{k}"], abs=1e-12)
    assert result.value("MRR") == pytest.approx(expected["mrr"], abs=1e-12)


def test_destroyed_needles_rank_zero_everywhere_and_others_are_found(evaluation):
    ev, questions = evaluation
    for label, result in ev.results.items():
        lost = set(ev.destroyed[result.strategy])
        for qid, rank in zip(result.query_ids, result.ranks):
            assert (rank == 0) == (qid.split("/")[0] in lost), (label, qid)


def test_tables_carry_wilson_intervals(evaluation):
    ev, _ = evaluation
    table = ev.table()
    recall = table[table.metric != "MRR"]
    assert ((recall.low <= recall.value) & (recall.value <= recall.high)).all()
    assert set(table.metric) == {"R@1", "R@4", "R@8", "R@20", "MRR"}
    assert len(ev.summary()) == 6


def test_unknown_run_label_is_a_clear_error(evaluation):
    ev, _ = evaluation
    with pytest.raises(InputError, match="no run 'Z/dense'"):
        ev.compare("Z/dense", "E/dense", "R@4")


def test_eval_command_prints_and_writes_json(tmp_path, capsys):
    out = tmp_path / "eval.json"
    assert main(["eval", "--strategies", "AE", "--rerankers", "--quiet", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Answers destroyed" in printed and "E/dense vs A/dense" in printed
    data = json.loads(out.read_text())
    assert {"queries", "strategies", "runs", "table", "comparisons"} <= set(data)
    assert len(data["queries"]) == 64 and all(len(r["ranks"]) == 64 for r in data["runs"])
    assert data["strategies"]["E"]["tokens"]["header_pieces"] > 0
    (cmp,) = [c for c in data["comparisons"] if (c["a"], c["b"], c["metric"]) == ("E/dense", "A/dense", "R@20")]
    assert cmp["wins"] == len(cmp["a_wins_on"]) and cmp["losses"] == len(cmp["b_wins_on"])
