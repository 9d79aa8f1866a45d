"""Embeddings: verified weights, unit vectors, ONNX = torch, and a cache that never returns a bad row."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ragkit.plumbing.models as models
import ragkit.plumbing.onnx as onnx
from ragkit.chunking import chunk_corpus
from ragkit.embedding import Embedder, default_embedder
from ragkit.errors import InputError, ModelMismatch
from ragkit.plumbing.cache import CACHE_FILE, CacheWarning, finish_shared
from ragkit.plumbing.locations import cache_dir
from ragkit.plumbing.models import WINDOW
from ragkit.plumbing.onnx import EXPORT_RECORD
from ragkit.tokens import TruncationWarning, count_pieces, truncated

TEXTS = ["How many test examples do I need?", "The KV cache grows with context.", "paella"]


def seeded(folder: Path) -> Path:
    """``folder`` as a cache holding a copy of the run's ONNX export, for the tests that are not about exporting.

    An export takes a child process seconds of one core; the run's own cache has one (the warm step made it, or
    this makes it there once), and a copy of it passes the same record check a fresh export does.
    """
    source = models.verified_embedding_dir()
    weights = models.weights_hash(source)
    export = onnx.onnx_export(source, weights, cache_dir())
    shutil.copytree(export, folder / "onnx" / weights[:16])
    return folder


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A cache that exports the model itself: its export is the one sentence-transformers here compares against
    (an export written by another sentence-transformers, as the run's cache may hold at the lowest versions, need
    not load in this one)."""
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


@pytest.mark.slow
def test_a_truncated_onnx_export_is_exported_again_not_failed_on_every_run(tmp_path):
    Embedder(cache=seeded(tmp_path)).encode(["export me"])
    (model,) = tmp_path.glob("onnx/*/onnx/model.onnx")
    model.write_bytes(model.read_bytes()[:1000])
    fresh = Embedder(cache=tmp_path)
    with pytest.warns(CacheWarning, match="does not match its record"):
        vector = fresh.encode(["a text the cache lacks"], progress=False)
    assert vector.shape == (1, 384) and model.stat().st_size > 1_000_000
    assert list(tmp_path.glob("onnx/*.damaged-*"))


@pytest.mark.slow
def test_students_read_the_shared_cache_and_its_export_and_write_only_their_own(tmp_path, monkeypatch):
    teacher = seeded(tmp_path / "shared")
    filler = Embedder(cache=teacher)
    filler.encode(TEXTS)
    filler.cache.close()
    finish_shared(teacher)
    for p in [teacher, *teacher.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    monkeypatch.setenv("RAGKIT_SHARED_CACHE", str(teacher))
    student = Embedder(cache=tmp_path / "student")
    monkeypatch.setattr(student, "_compute", lambda *a, **k: pytest.fail("computed a vector the shared cache has"))
    assert np.allclose(np.linalg.norm(student.encode(TEXTS), axis=1), 1, atol=1e-5)
    monkeypatch.undo()
    monkeypatch.setenv("RAGKIT_SHARED_CACHE", str(teacher))
    before = sorted((p.relative_to(teacher), p.stat().st_mtime_ns) for p in teacher.rglob("*"))
    student.encode(["a question only this student asked"], progress=False)
    assert sorted((p.relative_to(teacher), p.stat().st_mtime_ns) for p in teacher.rglob("*")) == before
    assert (tmp_path / "student" / CACHE_FILE).is_file() and not (tmp_path / "student" / "onnx").exists()
    for p in [teacher, *teacher.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)


@pytest.mark.slow
def test_onnx_and_torch_agree_on_the_bundled_corpus(corpus):
    # every chunk the window truncates and every eighth of the rest: torch embeds without a cache, so the whole
    # corpus would cost minutes of the run for no case the sample lacks
    chunks = [c.text for c in chunk_corpus(corpus, "E")]
    long = {i for i, n in enumerate(count_pieces(chunks)) if truncated(n, WINDOW)}
    texts = [t for i, t in enumerate(chunks) if i in long or i % 8 == 0]
    assert long and len(texts) > 100
    onnx = default_embedder().encode(texts, progress=False)
    torch = Embedder(backend="torch").encode(texts, progress=False, cache=False)
    assert np.abs(onnx - torch).max() < 1e-5


def test_token_vectors_are_unit_rows_and_cached(embedder, cache):
    (tokens,) = embedder.token_vectors(["hello world"])
    assert tokens.shape == (4, 384) and np.allclose(np.linalg.norm(tokens, axis=1), 1.0, atol=2e-3)
    again = Embedder(cache=cache)
    assert np.array_equal(again.token_vectors(["hello world"])[0], tokens)
    assert again._model is None


@pytest.mark.slow
def test_a_warm_cache_never_loads_the_model(tmp_path):
    cold = Embedder(cache=seeded(tmp_path))
    cold.encode(TEXTS)
    warm = Embedder(cache=tmp_path)
    warm.encode(TEXTS)
    assert cold._model is not None and warm._model is None and warm.stamp == cold.stamp


@pytest.mark.slow
def test_truncation_is_reported_even_when_vectors_come_from_the_cache(tmp_path):
    long = "tokenisation " * 300
    Embedder(cache=seeded(tmp_path)).encode([long, "short"])
    warm = Embedder(cache=tmp_path)
    with pytest.warns(TruncationWarning, match="1 of 2 texts exceed"):
        warm.encode([long, "short"])
    assert warm._model is None


def test_a_truncation_warning_carries_its_counts_and_says_them_in_english():
    import pickle

    from ragkit.tokens import TruncationWarning

    embedding, counted = TruncationWarning(3, 10, 256), TruncationWarning(2, 7, 128, embedding=False)
    assert (embedding.over, embedding.texts, embedding.window, embedding.embedding) == (3, 10, 256, True)
    assert str(embedding) == (
        "3 of 10 texts exceed the encoder's 256-piece window: the encoder embeds only their beginning. "
        "Use smaller chunks or a shorter header."
    )
    assert str(counted) == (
        "2 of 7 chunks are longer than the encoder's 128-piece window and will be truncated when embedded: "
        "use smaller chunks or a shorter header"
    )
    again = pickle.loads(pickle.dumps(counted))
    assert (again.over, again.texts, again.window, again.embedding, str(again)) == (2, 7, 128, False, str(counted))


@pytest.mark.slow
def test_the_onnx_encoder_computes_what_sentence_transformers_computes(embedder, cache):
    from ragkit.plumbing.onnx import OnnxEncoder, quiet_load

    embedder.encode(["load the model"], progress=False)
    assert isinstance(embedder.model, OnnxEncoder)
    (export,) = cache.glob("onnx/*")
    reference = quiet_load(str(export), "onnx")
    reference.max_seq_length = 256
    texts = TEXTS + ["tokenisation " * 300, "a"]  # one past the window: both must cut it at the same piece
    ours = embedder.model.encode(texts)
    theirs = reference.encode(texts, batch_size=8, normalize_embeddings=True, convert_to_numpy=True)
    assert np.abs(ours - theirs).max() < 1e-5
    for mine, ref in zip(
        embedder.model.token_embeddings(texts),
        reference.encode(texts, output_value="token_embeddings", convert_to_numpy=False),
    ):
        assert mine.shape == tuple(ref.shape) and np.abs(mine - ref.numpy()).max() < 1e-4
    assert len(embedder.model.token_embeddings([texts[3]])[0]) == embedder.stamp.window


@pytest.mark.slow
def test_a_kernel_that_embeds_never_imports_torch(tmp_path):
    code = (
        "import sys; from ragkit.embedding import Embedder; Embedder(cache=sys.argv[1]).encode(['x'], "
        "progress=False); Embedder(cache=sys.argv[1]).token_vectors(['y']); print('torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert done.stdout.strip() == "False", done.stderr[-2000:]
    assert list(tmp_path.glob("onnx/*/onnx/model.onnx"))  # exported (by a child process), then used


def test_an_export_another_process_finished_first_is_used_not_an_error(embedder, cache, tmp_path, monkeypatch):
    embedder.encode(["load the model"], progress=False)
    (done,) = cache.glob("onnx/*")
    target = tmp_path / "onnx" / done.name

    def racing(source, into):  # the warmer's export lands while this one is still writing
        shutil.copytree(done, target)
        shutil.copytree(done, into, dirs_exist_ok=True)

    monkeypatch.setattr(onnx, "export_in_child", racing)
    assert onnx.onnx_export(models.verified_embedding_dir(), embedder.stamp.weights, tmp_path) == target
    assert not list(target.parent.glob(".export-*"))


@pytest.mark.slow
def test_a_failed_export_says_what_failed(tmp_path):
    from ragkit.plumbing.onnx import export_in_child

    (tmp_path / "broken").mkdir()
    with pytest.raises(OSError, match=r"exporting .*broken to ONNX failed: .+"):
        export_in_child(tmp_path / "broken", tmp_path / "out")


def test_only_a_mean_pooled_model_runs_without_sentence_transformers(tmp_path):
    import json
    import shutil

    from ragkit.plumbing.onnx import mean_pooled

    source = models.verified_embedding_dir()
    assert mean_pooled(source)
    copy = tmp_path / "cls"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("*.safetensors"))
    config = json.loads((copy / "1_Pooling" / "config.json").read_text())
    config.update(pooling_mode_cls_token=True, pooling_mode_mean_tokens=False)
    (copy / "1_Pooling" / "config.json").write_text(json.dumps(config))
    assert not mean_pooled(copy) and not mean_pooled(tmp_path / "nothing")


def test_token_vectors_own_their_memory_not_a_view_of_their_whole_batch(embedder):
    """A view would keep each batch's full output alive: 0.4 GB for the corpus's chunks, in a student's kernel."""
    embedder.encode(["load the model"], progress=False)
    texts = ["short", "a somewhat longer text with more pieces in it", "mid size"]
    blocks = embedder.model.token_embeddings(texts)
    assert all(b.flags.owndata for b in blocks)
    assert [len(b) for b in blocks] == [n + 2 for n in count_pieces(texts)]  # its own tokens and two markers each


def test_one_pass_caches_the_unit_pooled_and_token_vectors_three_passes_compute(embedder, tmp_path, monkeypatch):
    """A warmer's pass for strategy E: the vectors ``encode``, ``pooled`` and ``token_vectors`` give, all cached,
    from one run of the model; what was cached already is not computed again."""
    texts = ["a warmer embeds this chunk", "and this one, which is a little longer than the first", "paella"]
    both = Embedder(cache=seeded(tmp_path))
    runs = []
    real = onnx.OnnxEncoder._batches
    monkeypatch.setattr(onnx.OnnxEncoder, "_batches", lambda self, *a: runs.append(a[0]) or real(self, *a))
    both.encode_with_tokens(texts[:1])
    both.encode_with_tokens(texts + texts[:1])
    assert runs == [texts[:1], texts[1:]], "a text was run through the model twice, or once per kind"
    monkeypatch.setattr(Embedder, "model", property(lambda self: pytest.fail("the cached vectors were computed")))
    units, pooled, tokens = both.encode(texts), both.pooled(texts), both.token_vectors(texts)
    monkeypatch.undo()
    assert np.abs(units - embedder.encode(texts, cache=False)).max() < 1e-5
    alone = np.stack([t.mean(axis=0) for t in embedder.model.token_embeddings(texts)])
    assert np.abs(pooled - alone).max() < 1e-5 and abs(np.linalg.norm(pooled[0]) - 1) > 0.01  # not normalised
    for got, want in zip(tokens, embedder.token_vectors(texts, cache=False)):
        assert got.shape == want.shape and np.abs(got - want).max() < 2e-3  # both stored as float16


# -- every file of an export is checked, and a shared one only used when nobody else can change it (issue 21) -----


def good_export(embedder, cache) -> Path:
    """The module's own verified export (made once, by the first test that computed a vector)."""
    assert embedder.model is not None
    (export,) = cache.glob("onnx/*")
    return export


@pytest.fixture
def teacher(embedder, cache, tmp_path):
    """A shared cache as a teacher leaves it: TEXTS' vectors and the export, finished, root's, mode a-w."""
    folder = tmp_path / "shared"
    shutil.copytree(good_export(embedder, cache).parent, folder / "onnx")
    filler = Embedder(cache=folder)
    filler.encode(TEXTS, progress=False)
    filler.cache.close()
    finish_shared(folder)
    for p in [folder, *folder.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    yield folder
    for p in [folder, *folder.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)


def student_with_export(embedder, cache, where: Path) -> Path:
    """A student's private cache that already holds a verified export, so no test here waits for one."""
    export = good_export(embedder, cache)
    shutil.copytree(export, where / "onnx" / export.name)
    return where


def test_a_rewritten_shared_tokenizer_is_not_used_and_no_vector_from_it_is_kept(
    teacher, embedder, cache, tmp_path, monkeypatch
):
    """Only model.onnx was checked: a changed tokenizer gave a student wrong query vectors, kept in their cache."""
    (tokenizer,) = teacher.glob("onnx/*/tokenizer.json")
    tokenizer.chmod(0o644)
    config = json.loads(tokenizer.read_text(encoding="utf-8"))
    config["normalizer"]["lowercase"] = False  # every capital becomes a different (or unknown) piece
    tokenizer.write_text(json.dumps(config), encoding="utf-8")
    tokenizer.chmod(0o444)
    query = "What Does The KV Cache Hold While Decoding?"
    expected = embedder.encode([query], progress=False, cache=False)
    student = student_with_export(embedder, cache, tmp_path / "student")
    monkeypatch.setenv("RAGKIT_SHARED_CACHE", str(teacher))
    with pytest.warns(CacheWarning, match=r"shared ONNX export .* not used \(tokenizer.json is not the file"):
        got = Embedder(cache=student).encode([query], progress=False)
    assert np.abs(got - expected).max() < 1e-5
    monkeypatch.delenv("RAGKIT_SHARED_CACHE")
    kept = Embedder(cache=student)
    monkeypatch.setattr(kept, "_compute", lambda *a, **k: pytest.fail("the student's query was not kept"))
    assert np.abs(kept.encode([query], progress=False) - expected).max() < 1e-5


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the export to another user (os.chown)")
def test_a_shared_export_another_user_owns_is_not_used(teacher, embedder, cache, tmp_path):
    """Its checksums prove nothing when the one who could change the files could also rewrite the record."""
    (export,) = teacher.glob("onnx/*")
    for p in [export, *export.rglob("*")]:
        os.chown(p, 4242, 4242)
    student = student_with_export(embedder, cache, tmp_path / "student")
    with pytest.warns(CacheWarning, match=r"shared ONNX export .* not used \(.* belongs to uid 4242"):
        used = onnx.onnx_export(models.verified_embedding_dir(), embedder.stamp.weights, student, teacher)
    assert used == student / "onnx" / export.name


def test_a_damaged_tokenizer_in_a_private_export_is_exported_again_with_a_message(
    embedder, cache, tmp_path, monkeypatch
):
    """It ended in the tokenizers library's raw parser error; now its checksum sends it aside, like a bad graph."""
    export = good_export(embedder, cache)
    mine = student_with_export(embedder, cache, tmp_path / "mine") / "onnx" / export.name
    (mine / "tokenizer.json").write_text('{"version": "1.0", "truncat', encoding="utf-8")
    exported = []

    def export_again(source, into):  # what the child process writes, without waiting for torch
        exported.append(into)
        shutil.copytree(export, into, dirs_exist_ok=True, ignore=shutil.ignore_patterns(EXPORT_RECORD))

    monkeypatch.setattr(onnx, "export_in_child", export_again)
    with pytest.warns(CacheWarning, match=r"does not match its record \(tokenizer.json is not .*moved aside"):
        vector = Embedder(cache=tmp_path / "mine").encode(["a text nobody embedded yet"], progress=False)
    assert vector.shape == (1, 384) and len(exported) == 1
    assert list(mine.parent.glob(f"{export.name}.damaged-*")) and onnx.export_problem(mine) is None


def test_a_file_added_to_an_export_or_an_older_record_is_not_trusted(embedder, cache, tmp_path):
    copy = tmp_path / "export"
    shutil.copytree(good_export(embedder, cache), copy)
    assert onnx.export_problem(copy) is None
    (copy / "onnx" / "model_O4.onnx").write_bytes(b"a graph a loader might prefer")
    assert "not in its record: onnx/model_O4.onnx" in onnx.export_problem(copy)
    (copy / "onnx" / "model_O4.onnx").unlink()
    (copy / EXPORT_RECORD).write_text(json.dumps({"size": 1, "sha256": "0" * 64}), encoding="utf-8")
    assert "older ragkit" in onnx.export_problem(copy)


def test_the_onnx_session_takes_the_threads_it_is_given_or_omp_num_threads(embedder, monkeypatch):
    """onnxruntime ignores OMP_NUM_THREADS: the grader's sandbox sets it, so the encoder must pass it on itself."""
    from ragkit.plumbing.onnx import OnnxEncoder, usable_cores

    embedder.encode(["load the model"], progress=False, cache=False)
    assert isinstance(embedder.model, OnnxEncoder)
    folder = onnx.onnx_export(models.verified_embedding_dir(), embedder.stamp.weights, embedder._root)

    def threads(**kwargs) -> int:
        return OnnxEncoder(folder, WINDOW, **kwargs).session.get_session_options().intra_op_num_threads

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert threads() == 1
    assert threads(threads=3) == 3  # an explicit number wins over the variable
    for unusable in ("", "0", "-2", "two"):  # unset or nonsense: onnxruntime's own default (0, one per core)
        monkeypatch.setenv("OMP_NUM_THREADS", unusable)
        assert threads() == 0
    assert embedder.threads is None  # what a timing says it ran on (ragkit.teach.lesson.latency)
    for too_many in ("100000", "9" * 30):  # a typo must not start a hundred thousand threads (it hung)
        monkeypatch.setenv("OMP_NUM_THREADS", too_many)
        assert threads() == usable_cores() == embedder.threads
    one = Embedder(cache=embedder._root, threads=1)
    assert one.threads == 1 and one.model.session.get_session_options().intra_op_num_threads == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert embedder.threads == 2


# Lending: an embedder asks the grader for vectors only when it is given a borrower (the grader's sandbox gives one)


class Grader:
    """A borrower that answers with ``answer(texts, dimensions)`` and remembers what it was asked."""

    def __init__(self, answer):
        self.answer, self.asked = answer, []

    def borrowed(self, texts, namespace, dimensions):
        self.asked.append(list(texts))
        return self.answer(texts, dimensions)


def test_an_embedder_asks_its_borrower_first_and_computes_what_it_refuses(embedder, cache):
    new = f"a text only the grader embeds {os.getpid()} {id(cache)}"
    lent = Embedder(cache=cache, borrower=Grader(lambda texts, d: np.eye(d, dtype=np.float32)[: len(texts)]))
    assert np.array_equal(lent.encode([new], cache=False)[0], np.eye(384, dtype=np.float32)[0])
    assert lent.borrower.asked == [[new]] and lent._model is None  # the model never loaded
    refused = Embedder(cache=cache, borrower=Grader(lambda texts, d: None))
    assert np.allclose(refused.encode(TEXTS, cache=False), embedder.encode(TEXTS), atol=1e-6)
    assert refused.borrower.asked == [TEXTS]


def test_an_embedder_nobody_lends_to_asks_no_service(tmp_path):
    """Defect: every embedding looked the grader's service up (its variable, then its socket), in every process; now
    an embedder asks only the borrower it was given, and only a kernel in the grader's sandbox is given one."""
    import contextlib
    import socket
    import threading
    import uuid

    from ragkit.plumbing.service import SERVICE_ENV

    asked: list[bool] = []
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "s.sock"))
        server.listen(1)

        def serve() -> None:
            try:
                conn, _ = server.accept()
            except OSError:  # closed at the end of the test: nobody asked
                return
            asked.append(True)
            conn.close()

        waiter = threading.Thread(target=serve, daemon=True)
        waiter.start()
        code = (
            "import sys; from ragkit.embedding import Embedder; "
            "Embedder(cache=sys.argv[1]).encode([sys.argv[2]], progress=False)"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, str(seeded(tmp_path / "cache")), f"new {uuid.uuid4().hex}"],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, SERVICE_ENV: str(tmp_path / "s.sock")},
        )
        assert done.returncode == 0, done.stderr[-2000:]
        with contextlib.suppress(OSError):
            server.shutdown(socket.SHUT_RDWR)  # wakes the accept that waits in vain
    waiter.join(timeout=30)  # a connection the child made is counted before the verdict
    assert not waiter.is_alive() and asked == []
