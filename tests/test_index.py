"""The stamped index: stale documents named, only they re-embedded, failures kept, writes atomic, bad files clear."""

import json
import shutil

import numpy as np
import pytest

from ragkit import index
from ragkit.__main__ import main
from ragkit.corpus import load_corpus
from ragkit.embedding import default_embedder
from ragkit.errors import CorruptIndex, InputError, StaleIndex
from ragkit.tokens import TruncationWarning

from conftest import CORPUS


class CountingEmbedder:
    """The default embedder, counting the texts it is asked to embed."""

    def __init__(self):
        self.inner = default_embedder()
        self.stamp = self.inner.stamp
        self.texts = 0

    def encode(self, texts, progress=False):
        self.texts += len(texts)
        return self.inner.encode(texts, progress=False)


@pytest.fixture
def folder(tmp_path):
    src = tmp_path / "corpus"
    src.mkdir()
    for name in ["01-vectors-and-similarity.md", "04-classification-and-evaluation.md", "12-reasoning.md"]:
        shutil.copy(CORPUS / name, src / name)
    return src


@pytest.fixture
def built(folder, tmp_path):
    out = tmp_path / "index"
    report = index.build(load_corpus(folder), out, default_embedder())
    assert report.searchable and len(report.current) == 3
    return folder, out


def test_build_records_stamp_hash_status_and_chunks_counted_by_the_indexer(built):
    folder, out = built
    config, entries = index.read_manifest(out)
    assert config.model == "sentence-transformers/all-MiniLM-L6-v2" and config.weights.startswith("53aa5117")
    assert (config.dimensions, config.normalised, config.window, config.strategy) == (384, True, 256, "E")
    assert config.pipeline == index.PIPELINE_VERSION and config.extractor
    for e in entries.values():
        assert e.status == "indexed" and e.stamp == config and len(e.content_hash) == 64
        assert e.chunks == len(np.load(out / e.file)["vectors"]) > 0


def test_search_returns_chunks_whose_offsets_slice_the_document(built):
    folder, out = built
    corpus = load_corpus(folder)
    ix = index.Index(corpus, out, default_embedder())
    hits = ix.search("How many test examples do I need?")
    assert len(hits) == 4 and hits[0][0].doc_id.startswith("04")
    assert all(corpus[c.doc_id].text[c.start:c.end] == c.content for c, _ in hits)
    with pytest.raises(InputError):
        ix.search("  ")


def test_changed_and_removed_documents_are_stale_and_update_re_embeds_only_them(built):
    folder, out = built
    (folder / "12-reasoning.md").write_text((folder / "12-reasoning.md").read_text() + "\nOne more line.\n")
    (folder / "01-vectors-and-similarity.md").unlink()
    corpus = load_corpus(folder)
    report = index.status(corpus, out, index.current_stamp(default_embedder()))
    assert report.stale == {"12-reasoning": "changed since it was indexed",
                            "01-vectors-and-similarity": "removed from the folder (or it no longer loads)"}
    with pytest.raises(StaleIndex, match=r"12-reasoning.*python -m ragkit index update"):
        index.Index(corpus, out, default_embedder())
    counting = CountingEmbedder()
    report = index.update(corpus, out, counting)
    from ragkit.chunking import chunk_document

    assert counting.texts == len(chunk_document(corpus["12-reasoning"], "E"))
    assert report.searchable and report.current == ("04-classification-and-evaluation", "12-reasoning")
    assert len(list((out / "docs").glob("*.npz"))) == 2


def test_an_index_built_with_another_model_refuses_to_search(built):
    folder, out = built
    manifest = json.loads((out / "manifest.json").read_text())
    for entry in manifest["documents"].values():
        entry["stamp"]["model"] = "some-org/another-embedder"
        entry["stamp"]["weights"] = "f" * 64
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(StaleIndex, match=r"another stamp \(differs in model, weights\)"):
        index.Index(load_corpus(folder), out, default_embedder())


def test_corrupt_manifest_is_a_clear_error(built):
    folder, out = built
    (out / "manifest.json").write_text('{"format": 1, "config": ')
    with pytest.raises(CorruptIndex, match="damaged.*python -m ragkit index build"):
        index.Index(load_corpus(folder), out, default_embedder())


def test_truncated_vector_file_is_named_and_update_repairs_it(built):
    folder, out = built
    _, entries = index.read_manifest(out)
    victim = out / entries["12-reasoning"].file
    victim.write_bytes(victim.read_bytes()[:100])
    corpus = load_corpus(folder)
    with pytest.raises(StaleIndex, match=r"12-reasoning \(damaged vector file"):
        index.Index(corpus, out, default_embedder())
    assert index.update(corpus, out, default_embedder()).searchable
    assert index.Index(corpus, out, default_embedder()).search("chain of thought")


def test_broken_documents_are_failed_with_reason_and_retried(built):
    folder, out = built
    (folder / "20-bad.md").write_bytes(b"# Bad\n\n\xff\xfe oops\n")
    (folder / "21-empty.md").write_bytes(b"")
    corpus = load_corpus(folder)
    report = index.update(corpus, out, default_embedder())
    assert report.searchable and len(report.current) == 3
    assert "not valid UTF-8 at byte 7" in report.failed["20-bad"] and "empty" in report.failed["21-empty"]
    _, entries = index.read_manifest(out)
    assert entries["20-bad"].status == "failed" and entries["20-bad"].chunks == 0
    assert index.Index(corpus, out, default_embedder()).search("what is the capital of france")
    (folder / "20-bad.md").write_text("# Fixed\n\n## Now\nThis document loads after the fix.\n")
    report = index.update(load_corpus(folder), out, default_embedder())
    assert "20-bad" in report.current and "20-bad" not in report.failed


def test_interrupted_update_leaves_the_previous_index_usable(built, monkeypatch):
    folder, out = built
    before = (out / "manifest.json").read_text()
    (folder / "12-reasoning.md").write_text("# Reasoning\n\n## Replaced\nEntirely new text.\n")

    def crash(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(index, "_write_manifest", crash)
    with pytest.raises(KeyboardInterrupt):
        index.update(load_corpus(folder), out, default_embedder())
    assert (out / "manifest.json").read_text() == before
    shutil.copy(CORPUS / "12-reasoning.md", folder / "12-reasoning.md")
    assert index.Index(load_corpus(folder), out, default_embedder()).search("chain of thought")


def test_very_large_single_line_document_is_indexed_with_a_truncation_warning(tmp_path):
    src = tmp_path / "corpus"
    src.mkdir()
    (src / "huge.md").write_text("# Huge\n\n## One line\n" + "word " * 60_000 + "\n")
    (src / "small.md").write_text("# Small\n\n## Part\nA short and ordinary paragraph about gradients.\n")
    with pytest.warns(TruncationWarning, match="exceed the encoder's 256-piece window"):
        report = index.build(load_corpus(src), tmp_path / "index", default_embedder())
    assert report.searchable and len(report.current) == 2
    ix = index.Index(load_corpus(src), tmp_path / "index", default_embedder())
    assert {c.doc_id for c, _ in ix.search("gradients", k=2)} == {"huge", "small"}


def test_index_command_build_status_update(folder, tmp_path, capsys):
    out = tmp_path / "cli-index"
    assert main(["index", "build", "--corpus", str(folder), "--out", str(out)]) == 0
    assert main(["index", "status", "--corpus", str(folder), "--out", str(out)]) == 0
    (folder / "12-reasoning.md").write_text("# R\n\n## S\nchanged\n")
    assert main(["index", "status", "--corpus", str(folder), "--out", str(out)]) == 1
    assert "STALE  12-reasoning: changed since it was indexed" in capsys.readouterr().out
    assert main(["index", "update", "--corpus", str(folder), "--out", str(out)]) == 0
