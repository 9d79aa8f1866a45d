"""Tuning judged honestly: chosen on one half of the needles, judged on the other, by needle."""

from dataclasses import replace

import numpy as np
import pytest

from ragkit.corpus import Corpus
from ragkit.data import load_questions
from ragkit.data import queries as make_queries
from ragkit.embedding import ModelStamp
from ragkit.errors import InputError
from ragkit.evaluation import Result, evaluate
from ragkit.fusion import rrf_many
from ragkit.plumbing import results as store
from ragkit.statistics import holm
from ragkit.tuning import (
    GRID,
    SETTINGS,
    Grid,
    bm25_results,
    halves,
    rrf_results,
    study,
    sweep_settings,
    sweeps_stamp,
    swept_texts,
    tune,
)

from conftest import ROOT

NEEDLES = ("n1", "n1", "n2", "n2", "n3", "n3", "n4", "n4", "n5", "n5", "n6", "n6")
QUERIES = tuple(f"q{i}" for i in range(len(NEEDLES)))


def test_the_halves_split_by_needle_with_a_fixed_seed():
    tune_half, held = halves(NEEDLES)
    assert tune_half | held == set(NEEDLES) and not tune_half & held and len(tune_half) == 3
    assert halves(NEEDLES) == (tune_half, held) and halves(NEEDLES, seed=5) != (tune_half, held)
    with pytest.raises(InputError, match="at least two needles"):
        halves(("n1", "n1"))


def test_the_out_of_domain_queries_split_after_the_needles_as_exercise_2_always_split_them():
    """One split rule for 03b and exercise 2: the needles' permutation, then the others', from one generator (the ids
    exercise 2's own split gave before it called this one)."""
    needles, others = [f"q{i:02d}" for i in range(8, 0, -1)], [f"o{i:02d}" for i in range(1, 7)]
    tune_half, held = halves(needles, 11, others)
    assert sorted(tune_half) == ["o01", "o03", "o06", "q02", "q04", "q06", "q08"]
    assert held == set(needles + others) - tune_half
    assert halves(needles, 11) == (tune_half - set(others), held - set(others))  # the needles' split is unchanged


def _result(found_on: set[str], name: str) -> Result:
    """Every query of the needles in ``found_on`` at rank 1, the others missed."""
    return Result("E", name, np.array([1 if n in found_on else 0 for n in NEEDLES]), QUERIES, NEEDLES)


def test_a_value_that_wins_the_tuning_half_is_judged_on_the_other_and_can_lose_there():
    tune_half, held = halves(NEEDLES)
    default = _result(set(held), "default")  # finds every held-out needle, no tuning one
    lucky = _result(set(tune_half), "lucky")  # the reverse: best on the tuning half only
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


# -- the five settings swept, stored under their stamp ---------------------------------------------------------------


def test_weighted_rrf_at_one_half_is_rrf_and_at_the_ends_one_list():
    rnd = np.random.default_rng(3)
    first = np.array([rnd.permutation(30) for _ in range(12)])
    second = np.array([rnd.permutation(30) for _ in range(12)])
    matched = rnd.random((12, 30)) < 0.4
    for m in (None, matched):
        assert np.array_equal(rrf_many(first, second, matched=m, weight=0.5), rrf_many(first, second, matched=m))
        assert np.array_equal(
            rrf_many(first, second, k=7, matched=m, weight=0.5), rrf_many(first, second, k=7, matched=m)
        )
    assert np.array_equal(rrf_many(first, second, matched=matched, weight=1.0), first)
    only = rrf_many(first, second, matched=matched, weight=0.0)
    for row, sec, hit in zip(only, second, matched):  # BM25's found chunks first, in its order; dense orders the rest
        found = [c for c in sec if hit[c]]
        assert row[: len(found)].tolist() == found
    leaning = rrf_many(first, second, weight=0.9)
    assert (leaning[:, 0] == first[:, 0]).mean() > (rrf_many(first, second)[:, 0] == first[:, 0]).mean()
    with pytest.raises(InputError, match="between 0 and 1"):
        rrf_many(first, second, weight=1.5)


def test_the_result_store_reads_a_payload_only_under_its_own_stamp(tmp_path):
    assert store.write_result("t", {"a": 1}, {"x": [1, 2]}, tmp_path) == ""
    assert store.read_result("t", {"a": 1}, tmp_path) == {"x": [1, 2]}
    assert store.read_result("t", {"a": 2}, tmp_path) is None
    path = store.path_for("t", {"a": 1}, tmp_path)
    other = store.path_for("t", {"a": 2}, tmp_path)
    other.write_text(path.read_text())  # a file of another stamp in this stamp's place: never read
    assert store.read_result("t", {"a": 2}, tmp_path) is None
    path.write_text("{not json")
    assert store.read_result("t", {"a": 1}, tmp_path) is None
    path.write_text("[" * 200_000 + "]" * 200_000)  # a hostile file in a shared cache: nested past the parser
    assert store.read_result("t", {"a": 1}, tmp_path) is None
    path.write_bytes(b"\xff\xfe{}")
    assert store.read_result("t", {"a": 1}, tmp_path) is None
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert "cannot be written" in store.write_result("t", {"a": 1}, {}, blocked)


class HashEmbedder:
    """Unit vectors from each text's hash: no model, a fixed answer per text, and a count of what it was asked."""

    stamp = ModelStamp("hash", "0" * 64, 16, True, 256, "none")

    def __init__(self):
        self.texts = 0

    def encode(self, texts, progress=False):
        self.texts += len(texts)
        rows = [np.random.default_rng(abs(hash(t)) % 2**32).standard_normal(16) for t in texts]
        vectors = np.array(rows, dtype=np.float32).reshape(len(texts), 16)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture
def small(corpus):
    """Three chapters of the course and the questions whose needles are in them."""
    docs = corpus.documents[:3]
    questions = [q for q in load_questions(ROOT / "data" / "questions.jsonl") if q.doc_id in {d.id for d in docs}]
    return Corpus(corpus.folder, docs), questions


TINY = Grid(
    strategy="A", sizes=(64, 512), overlaps=(0, 64), ks=(1, 60), weights=(0.0, 0.5, 1.0), k1s=(1.2,), bs=(0.5, 0.75)
)


def test_a_sweep_is_stored_under_its_stamp_and_read_back_whole(small, tmp_path):
    docs, questions = small
    embedder = HashEmbedder()
    first = sweep_settings(docs, questions, embedder, TINY, folder=tmp_path)
    assert not first.cached and first.saved == "" and [s.name for s in first.settings] == list(SETTINGS)
    asked = embedder.texts
    again = sweep_settings(docs, questions, embedder, TINY, folder=tmp_path)
    assert again.cached and embedder.texts == asked and again.seconds == first.seconds
    for a, b in zip(first.settings, again.settings):
        assert (a.name, a.default, list(a.results), a.chunked) == (b.name, b.default, list(b.results), b.chunked)
        for va in a.results:
            ra, rb = a.results[va], b.results[va]
            assert np.array_equal(ra.ranks, rb.ranks) and ra.relevant == rb.relevant and ra.label == rb.label
            assert (ra.query_ids, ra.needle_ids) == (rb.query_ids, rb.needle_ids)
    assert str(study(first)) == str(study(again))
    # another grid, other questions or another model is another stamp: computed again, never mixed
    assert not sweep_settings(docs, questions, embedder, replace(TINY, ks=(1, 30, 60)), folder=tmp_path).cached
    assert not sweep_settings(docs, questions[:-1], embedder, TINY, folder=tmp_path).cached
    other = HashEmbedder()
    other.stamp = replace(HashEmbedder.stamp, weights="1" * 64)
    assert sweeps_stamp(docs, questions, other, TINY) != sweeps_stamp(docs, questions, embedder, TINY)
    assert not sweep_settings(docs, questions, embedder, TINY, cache=False).cached


def test_a_cut_that_destroys_a_needle_scores_it_zero_and_says_which(small, tmp_path):
    docs, questions = small
    sweeps = sweep_settings(docs, questions, HashEmbedder(), TINY, cache=False)
    size = sweeps["chunk size"]
    lost = size.chunked[64].destroyed
    assert (lost and not size.chunked[512].destroyed) or set(size.chunked[512].destroyed) < set(lost)
    run = size.results[64]
    for qid, rank in zip(run.needle_ids, run.ranks):
        assert (rank == 0) >= (qid in lost)  # a destroyed needle is never found
    assert all(run.ranks[np.isin(run.needle_ids, lost)] == 0)
    assert size.chunked[64].chunks > size.chunked[512].chunks
    # the overlap is swept on the overlapping twin (A's is B); overlap 0 is the plain strategy's own cut
    overlap = sweeps["overlap"]
    assert overlap.default == 0 and overlap.chunked[0] == size.chunked[512]
    assert np.array_equal(overlap.results[0].ranks, size.results[512].ranks)
    assert overlap.results[64].strategy == "B" and overlap.results[0].strategy == "A"


class RecordingEmbedder(HashEmbedder):
    """Also keeps every text it was asked for."""

    def __init__(self):
        super().__init__()
        self.asked: set[str] = set()

    def encode(self, texts, progress=False):
        self.asked.update(texts)
        return super().encode(texts, progress)


def test_the_texts_a_warmer_embeds_ahead_are_every_chunk_text_the_sweeps_embed(small):
    docs, questions = small
    embedder = RecordingEmbedder()
    sweep_settings(docs, questions, embedder, TINY, cache=False)
    texts = swept_texts(docs, TINY)
    asked = embedder.asked - {q.text for q in make_queries(questions)}
    assert set(texts) == asked and len(texts) == len(set(texts))
    assert len(swept_texts(docs, replace(TINY, sizes=(512,)))) < len(texts)  # no chunks of 64 characters


def test_the_held_out_judgments_of_every_setting_share_one_holm(small):
    docs, questions = small
    sweeps = sweep_settings(docs, questions, HashEmbedder(), TINY, cache=False)
    s = study(sweeps, "MRR")
    raw = [t.judged.test.p for t in s.tunings]
    assert [t.judged.p_holm for t in s.tunings] == holm(raw)
    _tune_half, held = halves(next(iter(sweeps["RRF k"].results.values())).needle_ids)
    for t in s.tunings:
        assert set(t.judged.wins) | set(t.judged.losses) <= held
        assert t.tune_gain >= 0 and t.loses == (t.held_gain < 0)
    rows = s.rows()
    assert len(rows) == sum(len(x.results) for x in sweeps.settings)
    assert sum(r["chosen"] for r in rows) == len(SETTINGS) == sum(r["held-out best"] for r in rows)
    with pytest.raises(InputError, match="no setting"):
        s["chunk overlap"]
    with pytest.raises(InputError, match="no setting"):
        sweeps["chunk overlap"]


def test_the_grid_holds_each_default_it_is_judged_against():
    assert 512 in GRID.sizes and 0 in GRID.overlaps and 60 in GRID.ks and 0.5 in GRID.weights
    assert 1.2 in GRID.k1s and 0.75 in GRID.bs


@pytest.mark.slow
def test_on_the_course_every_sweep_holds_the_evaluations_own_run_at_its_default(corpus, tmp_path):
    questions = load_questions(ROOT / "data" / "questions.jsonl")
    ev = evaluate(corpus, questions, "EF", progress=False)
    sweeps = sweep_settings(corpus, questions, folder=tmp_path)
    pairs = [
        ("chunk size", 512, "E/dense"),
        ("overlap", 0, "E/dense"),
        ("overlap", 64, "F/dense"),
        ("RRF k", 60, "E/hybrid"),
        ("dense weight", 0.5, "E/hybrid"),
        ("dense weight", 1.0, "E/dense"),
        ("BM25 (k1, b)", (1.2, 0.75), "E/bm25"),
    ]
    for name, value, label in pairs:
        run = sweeps[name].results[value]
        assert np.array_equal(run.ranks, ev[label].ranks), (name, value, label)
        assert run.relevant == ev[label].relevant
    assert sweeps["chunk size"].chunked[512].chunks == ev.chunks["E"]
    assert sweeps["chunk size"].chunked[512].over_window == ev.tokens["E"].over_window
    assert sweeps["overlap"].chunked[64].over_window == ev.tokens["F"].over_window
