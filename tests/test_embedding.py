"""Embeddings: verified weights, unit vectors, ONNX = torch, and a cache that never returns a bad row."""


import numpy as np
import pytest

import ragkit.models as models
from ragkit.chunking import chunk_corpus
from ragkit.embedding import Embedder, TokenCache, VectorCache, _pack_keys, default_embedder
from ragkit.errors import InputError, ModelMismatch
from ragkit.tokens import TruncationWarning

TEXTS = ["How many test examples do I need?", "The KV cache grows with context.", "paella"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def embedder(cache):
    return Embedder(cache=cache)


def test_vectors_are_384_dimensional_unit_vectors(embedder):
    v = embedder.encode(TEXTS)
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert embedder.stamp.model == "sentence-transformers/all-MiniLM-L6-v2"
    assert embedder.stamp.weights.startswith("53aa5117") and embedder.stamp.window == 256


def test_onnx_export_lives_in_the_cache_not_site_packages(embedder, cache):
    assert list(cache.glob("onnx/*/onnx/model.onnx"))
    assert not list(models.bundled_model_dir().rglob("*.onnx"))


def test_weights_with_another_hash_are_refused(monkeypatch):
    monkeypatch.setattr(models, "EMBEDDING_SHA256", "0" * 64)
    with pytest.raises(ModelMismatch, match="reinstall"):
        models.verified_embedding_dir()


def test_unknown_backend_is_an_input_error():
    with pytest.raises(InputError, match="onnx, torch"):
        Embedder(backend="tpu")


def test_second_call_computes_nothing(embedder, monkeypatch):
    first = embedder.encode(TEXTS)
    monkeypatch.setattr(embedder, "_compute", lambda *a, **k: pytest.fail("recomputed a cached text"))
    assert np.array_equal(embedder.encode(TEXTS), first)


def test_cache_survives_a_restart(embedder, cache, monkeypatch):
    first = embedder.encode(TEXTS)
    again = Embedder(cache=cache)
    monkeypatch.setattr(again, "_compute", lambda *a, **k: pytest.fail("recomputed after restart"))
    assert np.array_equal(again.encode(TEXTS), first)


def test_duplicates_in_one_call_are_computed_once(cache):
    fresh = Embedder(cache=cache)
    calls = []
    real = fresh._compute
    fresh._compute = lambda texts, progress: calls.append(list(texts)) or real(texts, progress)
    v = fresh.encode(["twice unique text", "twice unique text", "once more"])
    assert np.array_equal(v[0], v[1]) and sorted(calls[0]) == ["once more", "twice unique text"]


def test_corrupt_pack_is_detected_and_recomputed(cache):
    emb = Embedder(cache=cache)
    expected = emb.encode(["a text to corrupt"])
    for pack in emb.cache.folder.glob("pack-*.npz"):
        pack.write_bytes(pack.read_bytes()[:40])  # torn file
    fresh = Embedder(cache=cache)
    assert np.allclose(fresh.encode(["a text to corrupt"]), expected, atol=1e-6)


def test_foreign_or_flipped_rows_are_never_returned(cache):
    emb = Embedder(cache=cache)
    good = emb.encode(["foreign row test"])
    key = emb.key("foreign row test")
    # a pack whose row for this key holds another vector, with a checksum that does not match it
    bad = np.roll(good, 1, axis=1)
    np.savez(emb.cache.folder / "pack-zzzz-foreign.npz", keys=_pack_keys([key]), vectors=bad,
             crc=np.array([123], dtype=np.uint32))
    # and a pack of another dimensionality
    np.savez(emb.cache.folder / "pack-zzzz-dims.npz", keys=_pack_keys([key]),
             vectors=np.ones((1, 8), dtype=np.float32), crc=np.array([0], dtype=np.uint32))
    fresh = Embedder(cache=cache)
    assert np.allclose(fresh.encode(["foreign row test"]), good, atol=1e-6)


def test_interrupted_write_leaves_no_visible_pack(cache):
    emb = Embedder(cache=cache)
    (emb.cache.folder / ".pack-interrupted.npz").write_bytes(b"half a file")
    assert all(p.name.startswith("pack-") for p in emb.cache.folder.glob("pack-*.npz"))
    assert emb.encode(["after an interruption"]).shape == (1, 384)


def test_onnx_and_torch_agree_on_the_bundled_corpus(corpus):
    texts = [c.text for c in chunk_corpus(corpus, "E")]
    onnx = default_embedder().encode(texts, progress=False)
    torch = Embedder(backend="torch").encode(texts, progress=False, cache=False)
    assert np.abs(onnx - torch).max() < 1e-5


def test_token_vectors_are_unit_rows_and_cached(embedder, cache):
    (tokens,) = embedder.token_vectors(["hello world"])
    assert tokens.shape == (4, 384) and np.allclose(np.linalg.norm(tokens, axis=1), 1.0, atol=2e-3)
    again = Embedder(cache=cache)
    assert np.array_equal(again.token_vectors(["hello world"])[0], tokens)
    assert again._model is None


def test_a_warm_cache_never_loads_the_model(tmp_path):
    cold = Embedder(cache=tmp_path)
    cold.encode(TEXTS)
    warm = Embedder(cache=tmp_path)
    warm.encode(TEXTS)
    assert cold._model is not None and warm._model is None and warm.stamp == cold.stamp


def test_keys_ending_in_zero_bytes_survive_the_disk(tmp_path):
    keys = [b"\x01" * 31 + b"\x00", b"\x02" + b"\x00" * 31]
    vectors = np.eye(2, 384, dtype=np.float32)
    VectorCache(tmp_path / "v", 384).put(keys, vectors)
    assert all(v is not None for v in VectorCache(tmp_path / "v", 384).get(keys))
    TokenCache(tmp_path / "t", 384).put(keys, [vectors.astype(np.float16), vectors[:1].astype(np.float16)])
    assert all(v is not None for v in TokenCache(tmp_path / "t", 384).get(keys))


def test_truncation_is_reported_even_when_vectors_come_from_the_cache(tmp_path):
    long = "tokenisation " * 300
    Embedder(cache=tmp_path).encode([long, "short"])
    warm = Embedder(cache=tmp_path)
    with pytest.warns(TruncationWarning, match="1 of 2 texts exceed"):
        warm.encode([long, "short"])
    assert warm._model is None
