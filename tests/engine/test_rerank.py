"""Rerankers: the real cross-encoder code path on a tiny random BERT built here, MaxSim, and missing models."""

import numpy as np
import pytest

from ragkit.chunking import chunk_document
from ragkit.errors import ModelUnavailable
from ragkit.plumbing.models import RERANKER
from ragkit.rerank import CrossEncoderReranker, LateInteractionReranker, available_reranker
from ragkit.retrieval import Retriever, rerank_top

from conftest import make_document


def test_cross_encoder_scores_pairs_deterministically(tiny_cross_encoder):
    reranker = CrossEncoderReranker(tiny_cross_encoder, batch_size=2)
    texts = ["the kv cache", "wilson interval", "a third text", "a fourth"]
    scores = reranker.score("what does the kv cache cost", texts)
    assert scores.shape == (4,) and np.isfinite(scores).all()
    assert np.array_equal(scores, reranker.score("what does the kv cache cost", texts))
    assert len(set(scores.round(6))) > 1


def test_int8_variant_runs(tiny_cross_encoder):
    import torch

    reranker = CrossEncoderReranker(tiny_cross_encoder, quantize=True)
    assert reranker.name == "rerank-int8" and reranker.score("q", ["a", "b"]).shape == (2,)
    layers = [m for m in reranker.model.model.modules() if isinstance(m, torch.ao.nn.quantized.dynamic.Linear)]
    assert layers, "no Linear layer was quantised: the int8 variant would silently be fp32"


def test_missing_cross_encoder_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGKIT_MODELS_DIR", str(tmp_path))
    monkeypatch.delenv(RERANKER.env, raising=False)
    with pytest.raises(ModelUnavailable, match=r"run `make models`.*RAGKIT_RERANKER"):
        CrossEncoderReranker()
    assert available_reranker() is None


def test_env_variable_points_at_a_local_model(tiny_cross_encoder, monkeypatch):
    monkeypatch.setenv(RERANKER.env, str(tiny_cross_encoder))
    assert available_reranker().path == tiny_cross_encoder


def test_rerank_reorders_only_the_head():
    ranking = np.arange(10)
    out = rerank_top(ranking, np.array([0.1, 0.9, 0.5, 0.9]), depth=4)
    assert out.tolist() == [1, 3, 2, 0, 4, 5, 6, 7, 8, 9]


def test_reranked_run_keeps_the_tail_and_permutes_the_head(tiny_cross_encoder):
    body = "\n\n".join(f"Paragraph {i} talks about topic number {i} at some length." for i in range(40))
    chunks = chunk_document(make_document("# D\n\n## S\n" + body), "C", size=120)
    retriever = Retriever(chunks, progress=False)
    queries = ["topic number 7", "paragraph 30"]
    base = retriever.hybrid(queries)
    run = retriever.reranked(queries, CrossEncoderReranker(tiny_cross_encoder), base, depth=5)
    assert run.retriever == "hybrid+rerank"
    for i in range(2):
        assert sorted(run.ranking[i, :5]) == sorted(base.ranking[i, :5])
        assert np.array_equal(run.ranking[i, 5:], base.ranking[i, 5:])


def test_maxsim_prefers_the_text_that_contains_the_query():
    reranker = LateInteractionReranker()
    scores = reranker.score(
        "gradient checkpointing memory", ["gradient checkpointing trades memory for compute", "paella needs saffron"]
    )
    assert scores[0] > scores[1]


def test_scores_follow_the_order_of_the_texts(tiny_cross_encoder):
    reranker = CrossEncoderReranker(tiny_cross_encoder, batch_size=2)
    texts = ["short", "a much longer text about the kv cache and its memory", "mid length text", "x"]
    scores = reranker.score("kv cache", texts)
    assert np.allclose(reranker.score("kv cache", texts[::-1]), scores[::-1], atol=1e-6)
    assert np.allclose([reranker.score("kv cache", [t])[0] for t in texts], scores, atol=1e-5)
