"""The identity on unit vectors, the gate, and a sweep that equals the gate applied query by query."""

import numpy as np
import pytest

from ragkit.chunking import chunk_corpus
from ragkit.data import load_out_of_domain, load_questions
from ragkit.distances import identity_check, max_identity_gap
from ragkit.embedding import default_embedder
from ragkit.errors import InputError
from ragkit.evaluation import query_hits
from ragkit.retrieval import Retriever
from ragkit.threshold import DEFAULT_CUT, STRICT_CUT, Sweep, check_cut, default_cuts, gate

from conftest import ROOT


@pytest.fixture(scope="module")
def chunk_texts(corpus):
    return [c.text for c in chunk_corpus(corpus, "E")][:200]


def test_identity_holds_on_unit_vectors_and_fails_without_normalisation(chunk_texts):
    emb = default_embedder()
    unit = emb.encode(chunk_texts[:2], progress=False)
    check = identity_check(unit[0], unit[1])
    assert check.norm_a == pytest.approx(1, abs=1e-6) and check.difference < 1e-6
    raw = emb.pooled(chunk_texts[:2])
    assert np.allclose(raw / np.linalg.norm(raw, axis=1, keepdims=True), unit, atol=1e-5)
    broken = identity_check(raw[0], raw[1])
    assert broken.norm_a != pytest.approx(1, abs=0.05) and broken.difference > 0.01


@pytest.mark.slow
def test_max_gap_over_200_chunks(chunk_texts):
    emb = default_embedder()
    assert max_identity_gap(emb.encode(chunk_texts, progress=False)) < 1e-5
    assert max_identity_gap(emb.pooled(chunk_texts[:50])) > 0.01


@pytest.mark.parametrize("cut", [0, -0.1, 2.5, float("nan"), "0.5", True, np.True_, np.float64(2.5)])
def test_cut_outside_zero_two_is_refused(cut):
    with pytest.raises(InputError, match=r"\(0, 2\]"):
        check_cut(cut)


def test_gate_keeps_at_most_four_under_the_cut():
    ranking = np.array([5, 1, 2, 0, 3, 4])
    distance = np.array([0.2, 0.3, 0.9, 0.1, 0.1, 0.4])
    assert gate(ranking, distance, None).tolist() == [5, 1, 2, 0]
    assert gate(ranking, distance, 0.35).tolist() == [1, 0]
    assert gate(ranking, distance, 0.05).tolist() == []


@pytest.fixture(scope="module")
def bundled_sweep(corpus):
    questions = load_questions(ROOT / "data" / "questions.jsonl")
    ood = load_out_of_domain(ROOT / "data" / "out_of_domain.jsonl")
    chunks = chunk_corpus(corpus, "E")
    retriever = Retriever(chunks, strategy="E", progress=False)
    return Sweep(chunks, questions, ood, retriever), retriever, questions, ood, chunks


@pytest.mark.slow
def test_sweep_equals_the_gate_query_by_query(bundled_sweep):
    s, retriever, questions, ood, chunks = bundled_sweep
    in_run = retriever.dense([q.text for q in s.queries])
    out_run = retriever.dense([o.query for o in ood])
    hits = query_hits(chunks, questions, s.queries)
    for cut in [None, 0.9, DEFAULT_CUT, 0.6, STRICT_CUT, 0.4]:
        kept_in = [gate(in_run.ranking[i], in_run.distance[i], cut) for i in range(len(s.queries))]
        kept_out = [gate(out_run.ranking[i], out_run.distance[i], cut) for i in range(len(ood))]
        row = s.at(cut)
        assert row.bluffs == sum(len(k) > 0 for k in kept_out)
        assert row.refused == sum(len(k) == 0 for k in kept_in)
        assert row.answered_with_needle == sum(hits[i, k].any() for i, k in enumerate(kept_in))
        assert row.refused + row.answered_with_needle + row.answered_without_needle == 64
        assert len(s.bluffs(cut)) == row.bluffs


@pytest.mark.slow
def test_sweep_table_is_monotone_and_has_the_chapter_cuts(bundled_sweep):
    from ragkit.teach.lesson import tables

    s = bundled_sweep[0]
    table = tables.per_cut(s)
    assert table.cut.iloc[0] is None or np.isnan(table.cut.iloc[0])
    assert {DEFAULT_CUT, STRICT_CUT} <= set(table.cut.dropna())
    assert table.bluffs.iloc[0] == 30 and table.refused.iloc[0] == 0
    assert (np.diff(table.bluffs.to_numpy()) <= 0).all() and (np.diff(table.refused.to_numpy()) >= 0).all()


@pytest.mark.slow
def test_sweep_extremes_match_distances_recomputed_from_the_vectors(bundled_sweep):
    s, retriever, questions, ood, chunks = bundled_sweep
    out = 1.0 - retriever.embed([o.query for o in ood]) @ retriever.vectors.T
    assert s.best_out_of_domain == pytest.approx(float(out.min()), abs=1e-6)
    by_id = {q.id: q for q in questions}
    inside = 1.0 - retriever.embed([q.text for q in s.queries]) @ retriever.vectors.T
    best = [
        min(
            inside[i, j]
            for j, c in enumerate(chunks)
            if c.doc_id == by_id[q.qid].doc_id and by_id[q.qid].needle in c.carried
        )
        for i, q in enumerate(s.queries)
    ]
    assert s.worst_in_domain == pytest.approx(float(max(best)), abs=1e-6)
    assert s.best_out_of_domain < 2 and s.worst_in_domain > s.nearest_in.min()


@pytest.mark.slow
@pytest.mark.slow
def test_a_cut_separates_the_two_kinds_only_when_the_worst_answer_is_strictly_nearer(bundled_sweep):
    import copy

    s = copy.copy(bundled_sweep[0])
    worst = s.worst_in_domain
    for nearest_out, separable in ((worst + 0.01, True), (worst, False), (worst - 0.01, False)):
        s.nearest_out = np.full_like(s.nearest_out, nearest_out)
        assert s.separable is separable, nearest_out  # at a tie, no cut keeps the one and refuses the other


@pytest.mark.slow  # the sweep's fixture embeds the course's strategy E: alone in the quick tier, the guard fails it
def test_check_cut_takes_numpy_floats_from_a_run(bundled_sweep):
    s, retriever, *_ = bundled_sweep
    run = retriever.dense(["How many test examples do I need?"])
    cut = run.distance[0, run.ranking[0, 3]]
    assert isinstance(cut, np.floating) and check_cut(cut) == float(cut)
    assert s.at(cut).cut == float(cut) and check_cut(np.float32(0.5)) == pytest.approx(0.5)


def test_default_cuts_are_descending_after_no_threshold():
    cuts = default_cuts()
    assert cuts[0] is None and cuts[1:] == sorted(cuts[1:], reverse=True)


@pytest.mark.slow  # the course's vectors, which an empty cache computes (conftest.QUICK_TEXTS)
def test_subset_keeps_every_array_of_the_queries_it_keeps(bundled_sweep):
    s = bundled_sweep[0]
    ids = {q.id for q in s.questions[::3]} | {o.id for o in s.out_of_domain[::2]}
    part = s.subset(ids)
    keep_in = [i for i, q in enumerate(s.queries) if q.qid in ids]
    keep_out = [i for i, o in enumerate(s.out_of_domain) if o.id in ids]
    assert [q.qid for q in part.queries] == [s.queries[i].qid for i in keep_in]
    for name in Sweep.PER_QUERY:
        assert np.array_equal(getattr(part, name), getattr(s, name)[keep_in]), name
    for name in Sweep.PER_OUT_OF_DOMAIN:
        assert np.array_equal(getattr(part, name), getattr(s, name)[keep_out]), name
    arrays = {k for k, v in vars(s).items() if isinstance(v, np.ndarray)}
    assert arrays == set(Sweep.PER_QUERY) | set(Sweep.PER_OUT_OF_DOMAIN)
    row = part.at(DEFAULT_CUT)
    assert (row.in_domain, row.out_of_domain) == (len(keep_in), len(keep_out))
    assert row.bluffs == int((s.d_out[keep_out] < DEFAULT_CUT).any(axis=1).sum())


@pytest.mark.slow  # the course's vectors, which an empty cache computes (conftest.QUICK_TEXTS)
def test_subset_refuses_an_array_whose_rows_it_cannot_name_and_an_unknown_id(bundled_sweep):
    import copy

    s = copy.copy(bundled_sweep[0])
    s.new_scores = np.zeros(len(s.queries))  # a field added later: it must not silently stay full size
    with pytest.raises(TypeError, match="new_scores"):
        s.subset({s.questions[0].id})
    with pytest.raises(InputError, match="q999"):
        bundled_sweep[0].subset({"q999"})
