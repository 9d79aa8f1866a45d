"""The stamped index: stale documents named, only they re-embedded, failures kept, writes atomic, bad files clear."""

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from ragkit import index
from ragkit.__main__ import main
from ragkit.corpus import load_corpus
from ragkit.embedding import default_embedder
from ragkit.errors import CorruptIndex, IndexBusy, InputError, StaleIndex
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
    _folder, out = built
    config, entries = index.read_index(out)
    model = config.embedding
    assert model.model == "sentence-transformers/all-MiniLM-L6-v2" and model.weights.startswith("53aa5117")
    assert (model.dimensions, model.normalised, model.window, config.strategy) == (384, True, 256, "E")
    assert config.pipeline == index.PIPELINE_VERSION and config.extractor
    tables = {name: rows for name, _, rows in index.tables(out)}
    assert set(tables) == {"meta", "stamps", "documents", "chunks"} and len(tables["stamps"]) == 1
    for e in entries.values():
        assert e.status == "indexed" and e.stamp == config and len(e.content_hash) == 64
        assert e.chunks == sum(r[0] == e.id for r in tables["chunks"]) > 0
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith("index.sqlite-")) == ["index.sqlite"]


def test_search_returns_chunks_whose_offsets_slice_the_document(built):
    folder, out = built
    corpus = load_corpus(folder)
    ix = index.Index(corpus, out, default_embedder())
    hits = ix.search("How many test examples do I need?")
    assert len(hits) == 4 and hits[0][0].doc_id.startswith("04")
    assert all(corpus[c.doc_id].text[c.start : c.end] == c.content for c, _ in hits)
    with pytest.raises(InputError):
        ix.search("  ")


def test_changed_and_removed_documents_are_stale_and_update_re_embeds_only_them(built):
    folder, out = built
    (folder / "12-reasoning.md").write_text((folder / "12-reasoning.md").read_text() + "\nOne more line.\n")
    (folder / "01-vectors-and-similarity.md").unlink()
    corpus = load_corpus(folder)
    report = index.status(corpus, out, index.current_stamp(default_embedder()))
    assert report.stale == {
        "12-reasoning": "changed since it was indexed",
        "01-vectors-and-similarity": "removed from the folder (or it no longer loads)",
    }
    with pytest.raises(StaleIndex, match=r"12-reasoning.*python -m ragkit index update"):
        index.Index(corpus, out, default_embedder())
    counting = CountingEmbedder()
    report = index.update(corpus, out, counting)
    from ragkit.chunking import chunk_document

    assert counting.texts == len(chunk_document(corpus["12-reasoning"], "E"))
    assert report.searchable and report.current == ("04-classification-and-evaluation", "12-reasoning")
    assert sorted(e for e in index.read_index(out)[1]) == ["04-classification-and-evaluation", "12-reasoning"]


def test_an_index_built_with_another_model_refuses_to_search(built):
    folder, out = built
    with sqlite3.connect(out / "index.sqlite") as db:
        db.execute("UPDATE stamps SET model = 'some-org/another-embedder', weights = ?", ("f" * 64,))
    with pytest.raises(StaleIndex, match=r"another stamp \(differs in model, weights\)"):
        index.Index(load_corpus(folder), out, default_embedder())


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_database_is_a_clear_error_and_build_keeps_it_aside(built, damage):
    folder, out = built
    path = out / "index.sqlite"
    raw = path.read_bytes()
    path.write_bytes(b"garbage " * 2000 if damage == "garbage" else raw[: len(raw) // 3])
    corpus = load_corpus(folder)
    advice = rf"damaged.*python -m ragkit index build --corpus {folder} --out {out}"
    with pytest.raises(CorruptIndex, match=advice):
        index.Index(corpus, out, default_embedder())
    with pytest.raises(CorruptIndex, match=advice):
        index.update(corpus, out, default_embedder())
    report = index.build(corpus, out, default_embedder())
    assert report.searchable and any("kept as index.sqlite.damaged-" in n for n in report.notes)
    assert len([p for p in out.glob("index.sqlite.damaged-*") if not p.name.endswith(("-wal", "-shm"))]) == 1
    assert index.Index(corpus, out, default_embedder()).search("chain of thought")


@pytest.mark.parametrize("damage", ["garbage", "truncated", "older format"])
def test_a_damaged_index_is_closed_before_it_is_set_aside(built, damage, monkeypatch):
    """Every connection opening the index made is closed when it raises CorruptIndex: the file is renamed after."""
    folder, out = built
    path = out / "index.sqlite"
    if damage == "older format":
        with sqlite3.connect(path) as db:
            db.execute("UPDATE meta SET value = 'ragkit-index-1' WHERE name = 'format'")
    else:
        raw = path.read_bytes()
        path.write_bytes(b"garbage " * 2000 if damage == "garbage" else raw[: len(raw) // 3])
    opened = []
    real_connect, real_move_aside = sqlite3.connect, index.move_aside

    def connect(*args, **kwargs):
        opened.append(real_connect(*args, **kwargs))
        return opened[-1]

    def still_open(conn):
        try:
            conn.execute("SELECT 1")
        except sqlite3.ProgrammingError:
            return False
        return True

    def move_aside(target):
        assert not any(map(still_open, opened)), "the damaged index was renamed while still open"
        return real_move_aside(target)

    monkeypatch.setattr(sqlite3, "connect", connect)
    monkeypatch.setattr(index, "move_aside", move_aside)
    with pytest.raises(CorruptIndex):
        index.read_index(out)
    assert opened and not any(map(still_open, opened))
    report = index.build(load_corpus(folder), out, default_embedder())
    assert report.searchable and any("kept as index.sqlite.damaged-" in n for n in report.notes)


def test_missing_vectors_make_a_document_stale_and_update_repairs_it(built):
    folder, out = built
    with sqlite3.connect(out / "index.sqlite") as db:
        db.execute("DELETE FROM chunks WHERE document = '12-reasoning' AND ord > 2")
    corpus = load_corpus(folder)
    with pytest.raises(StaleIndex, match=r"12-reasoning \(damaged: \d+ vectors recorded, 3 found"):
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
    _, entries = index.read_index(out)
    assert entries["20-bad"].status == "failed" and entries["20-bad"].chunks == 0
    assert index.Index(corpus, out, default_embedder()).search("what is the capital of france")
    (folder / "20-bad.md").write_text("# Fixed\n\n## Now\nThis document loads after the fix.\n")
    report = index.update(load_corpus(folder), out, default_embedder())
    assert "20-bad" in report.current and "20-bad" not in report.failed


def test_very_large_single_line_document_is_indexed_with_a_truncation_warning(tmp_path):
    src = tmp_path / "corpus"
    src.mkdir()
    # one sentence with an end: kept whole, as the reference keeps it (one without an end is cut at the budget)
    (src / "huge.md").write_text("# Huge\n\n## One line\n" + "word " * 60_000 + "end.\n")
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


def test_the_cli_keeps_the_index_own_strategy_unless_told(folder, tmp_path, capsys):
    """Defect 3: `index status`/`update` without --strategy use the index's strategy, not E."""
    out = tmp_path / "c-index"
    assert main(["index", "build", "--corpus", str(folder), "--out", str(out), "--strategy", "C"]) == 0
    assert main(["index", "status", "--corpus", str(folder), "--out", str(out)]) == 0
    assert main(["index", "update", "--corpus", str(folder), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "STALE" not in printed and "strategy C" in printed
    assert index.read_index(out)[0].strategy == "C"


def test_a_foreign_out_folder_is_refused_and_left_untouched(folder, tmp_path):
    """Defect 2: --out naming a non-empty folder that holds no ragkit index is never cleaned."""
    out = tmp_path / "not-an-index"
    (out / "docs").mkdir(parents=True)
    (out / "manifest.json").write_text('{"name": "my web app", "version": 3}')
    (out / "docs" / "notes.npz").write_bytes(b"precious")
    before = sorted((p.relative_to(out), p.read_bytes()) for p in out.rglob("*") if p.is_file())
    with pytest.raises(InputError, match=r"not empty.*holds no ragkit index"):
        index.build(load_corpus(folder), out, default_embedder())
    assert main(["index", "build", "--corpus", str(folder), "--out", str(out)]) == 1
    assert sorted((p.relative_to(out), p.read_bytes()) for p in out.rglob("*") if p.is_file()) == before


def test_a_folder_of_the_file_based_ragkit_is_refused_untouched_not_migrated(folder, tmp_path, capsys):
    out = tmp_path / "old"
    (out / "docs").mkdir(parents=True)
    (out / "manifest.json").write_text(json.dumps({"format": 1, "config": {}, "documents": {}}))
    corpus = load_corpus(folder)
    with pytest.raises(StaleIndex, match=rf"no index in {out}: build one"):
        index.Index(corpus, out, default_embedder())
    with pytest.raises(InputError, match=r"not empty \(docs, manifest.json\) and holds no ragkit index: name a new"):
        index.build(corpus, out, default_embedder())
    assert sorted(p.name for p in out.iterdir()) == ["docs", "manifest.json"]


def test_an_index_of_an_older_format_is_refused_with_what_to_do_and_build_sets_it_aside(built):
    folder, out = built
    with sqlite3.connect(out / "index.sqlite") as db:
        db.execute("UPDATE meta SET value = 'ragkit-index-1' WHERE name = 'format'")
    corpus = load_corpus(folder)
    advice = rf"found ragkit-index-1\): this ragkit reads no other format; rebuild it with .*--out {out}"
    for call in (
        lambda: index.Index(corpus, out, default_embedder()),
        lambda: index.read_index(out),
        lambda: index.update(corpus, out, default_embedder()),
    ):
        with pytest.raises(CorruptIndex, match=advice):
            call()
    report = index.build(corpus, out, default_embedder())
    assert report.searchable and any("kept as index.sqlite.damaged-" in n for n in report.notes)


DAMAGE = {
    "chunks table dropped": "DROP TABLE chunks",
    "a stamp's dimensions not a number": "UPDATE stamps SET dimensions = 'many'",
    "a stamp's size not a number": "UPDATE stamps SET size = 'x'",
    "configuration stamp not a number": "UPDATE meta SET value = 'one' WHERE name = 'stamp'",
    "a column dropped": "ALTER TABLE documents DROP COLUMN reason",
}


@pytest.mark.parametrize("sql", DAMAGE.values(), ids=DAMAGE.keys())
def test_damaged_tables_are_set_aside_like_a_damaged_file(built, sql, capsys):
    folder, out = built
    with sqlite3.connect(out / "index.sqlite") as db:
        db.execute(sql)
    for action in ("status", "update"):
        assert main(["index", action, "--corpus", str(folder), "--out", str(out)]) == 1
        err = capsys.readouterr().err
        assert "is damaged" in err and f"index build --corpus {folder} --out {out}" in err, err
    assert main(["index", "build", "--corpus", str(folder), "--out", str(out)]) == 0
    assert "kept as index.sqlite.damaged-" in capsys.readouterr().out
    assert index.Index(load_corpus(folder), out, default_embedder()).search("chain of thought")


def test_a_second_writer_waits_then_stops_with_a_clear_message(built):
    folder, out = built
    holder = sqlite3.connect(out / "index.sqlite", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        t = time.perf_counter()
        with pytest.raises(IndexBusy, match=r"another ragkit is writing the index .* \(waited 1 s\)"):
            index.update(load_corpus(folder), out, default_embedder(), wait=1.0)
        assert time.perf_counter() - t >= 0.9
        assert index.Index(load_corpus(folder), out, default_embedder()).search("chain of thought")  # readers go on
    finally:
        holder.execute("ROLLBACK")
        holder.close()


KILLER = textwrap.dedent("""
    import os, signal, sys
    from ragkit import index
    from ragkit.corpus import load_corpus
    from ragkit.embedding import default_embedder
    corpus, out, action, point, n = sys.argv[1:6]
    real, calls = getattr(index, point), []
    def die(*args, **kwargs):
        calls.append(1)
        if len(calls) == int(n):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    setattr(index, point, die)
    getattr(index, action)(load_corpus(corpus), out, default_embedder())
""")


def kill_during(corpus, out, action, point, n):
    done = subprocess.run(
        [sys.executable, "-c", KILLER, str(corpus), str(out), action, point, str(n)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr


@pytest.mark.parametrize(
    "action,point,n",
    [
        ("update", "_write_document", 1),
        ("update", "_write_document", 2),
        ("update", "_commit", 1),
        ("build", "_write_document", 3),
        ("build", "_commit", 1),
    ],
)
def test_kill_9_at_any_point_leaves_the_last_committed_index(built, action, point, n):
    folder, out = built
    before = index.read_index(out)
    (folder / "12-reasoning.md").write_text("# Reasoning\n\n## Replaced\nEntirely new text.\n")
    (folder / "30-new.md").write_text("# New\n\n## Part\nA new document about learning rates.\n")
    kill_during(folder, out, action, point, n)
    assert index.read_index(out) == before
    (folder / "30-new.md").unlink()
    shutil.copy(CORPUS / "12-reasoning.md", folder / "12-reasoning.md")
    corpus = load_corpus(folder)
    assert index.status(corpus, out, index.current_stamp(default_embedder())).searchable
    assert index.Index(corpus, out, default_embedder()).search("chain of thought")


def test_kill_9_during_a_first_build_leaves_no_index(folder, tmp_path):
    out = tmp_path / "first"
    kill_during(folder, out, "build", "_write_document", 2)
    assert index.read_index(out) == (None, {})
    assert index.build(load_corpus(folder), out, default_embedder()).searchable


def test_two_concurrent_updates_leave_an_index_current_for_one_corpus(built, tmp_path):
    """Defect 1: with the lock, one writer waits for the other; the index is whole for whichever ran last."""
    folder, out = built
    other = tmp_path / "other"
    other.mkdir()
    for name in ["02-gradient-descent.md", "03-backpropagation.md"]:
        shutil.copy(CORPUS / name, other / name)
    cmd = [sys.executable, "-m", "ragkit", "index", "update", "--out", str(out), "--corpus"]
    procs = [
        subprocess.Popen(
            cmd + [str(c)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
        for c in (folder, other)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    codes = [p.returncode for p in procs]
    assert all(c == 0 or "another ragkit is writing" in o[1] for c, o in zip(codes, outs)), outs
    _, entries = index.read_index(out)
    current = [c for c in (folder, other) if sorted(entries) == sorted(load_corpus(c).ids)]
    assert len(current) == 1
    assert index.Index(load_corpus(current[0]), out, default_embedder()).search("gradient descent")


def test_a_read_only_index_folder_searches_and_refuses_to_update_clearly(folder, tmpfs):
    out = tmpfs("8m")
    corpus = load_corpus(folder)
    index.build(corpus, out, default_embedder())
    subprocess.run(["mount", "-o", "remount,ro", str(out)], check=True)
    assert index.Index(corpus, out, default_embedder()).search("chain of thought")
    (folder / "12-reasoning.md").write_text("# Reasoning\n\n## Replaced\nEntirely new text.\n")
    with pytest.raises(InputError, match=r"cannot write the index .*writable"):
        index.update(load_corpus(folder), out, default_embedder())


def test_a_full_disk_during_build_keeps_the_previous_index(folder, tmpfs):
    out = tmpfs("600k")
    small = folder.parent / "small"
    small.mkdir()
    shutil.copy(folder / "12-reasoning.md", small)
    index.build(load_corpus(small), out, default_embedder())
    before = index.read_index(out)
    bigger = folder.parent / "bigger"  # four chapters, about 750 kB of index: more than the 400 kB left
    bigger.mkdir()
    for name in ("01-vectors-and-similarity.md", "02-gradient-descent.md", "03-backpropagation.md", "12-reasoning.md"):
        shutil.copy(CORPUS / name, bigger)
    with pytest.raises(InputError, match="disk has space; the previous index is unchanged"):
        index.build(load_corpus(bigger), out, default_embedder())
    assert index.read_index(out) == before
    assert index.Index(load_corpus(small), out, default_embedder()).search("chain of thought")


def test_a_file_name_that_is_not_utf8_is_one_failed_document_and_the_folder_builds(folder, tmp_path, capsys):
    (folder / os.fsdecode(b"99-caf\xe9.md")).write_bytes(b"# Latin-1 name\n\nBody.\n")
    out = tmp_path / "index"
    assert main(["index", "build", "--corpus", str(folder), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "3 current documents" in text
    assert "FAILED 99-caf\\xe9: the file name 99-caf\\xe9.md is not valid UTF-8" in text
