"""Loading a folder: canonical texts, titles, and failed documents that never break the folder."""

import json
import os
import subprocess
import sys

import pytest

from ragkit.corpus import FailedDocument, canonical_text, load_corpus, read_document
from ragkit.errors import CorpusError, InputError, RagkitError

from conftest import ROOT


def write(folder, name, data: bytes):
    path = folder / name
    path.write_bytes(data)
    return path


def test_loads_sorted_md_only_with_titles(tmp_path):
    write(tmp_path, "b.md", b"# Second\n\nBody b.\n")
    write(tmp_path, "a.md", b"Intro without a title.\n\n## Part\ntext\n")
    write(tmp_path, "notes.txt", b"not markdown")
    write(tmp_path, "c.MD.bak", b"# backup")
    corpus = load_corpus(tmp_path)
    assert corpus.ids == ["a", "b"]
    assert corpus["b"].title == "Second"
    assert corpus["a"].title == "a"
    assert corpus.failed == ()


def test_canonical_text_strips_bom_and_normalises_newlines():
    assert canonical_text(b"\xef\xbb\xbf# T\r\nline\rnext\n") == "# T\nline\nnext\n"


def test_title_is_first_hash_line_outside_code(tmp_path):
    path = write(tmp_path, "x.md", b"```\n# not a title\n```\n\n# Real title\n\ntext\n")
    assert read_document(path).title == "Real title"


def test_bad_utf8_becomes_failed_with_byte_offset(tmp_path):
    write(tmp_path, "good.md", b"# Good\n\nfine\n")
    write(tmp_path, "bad.md", b"# Bad\n\nabc \xff\xfe def\n")
    corpus = load_corpus(tmp_path)
    assert corpus.ids == ["good"]
    (failed,) = corpus.failed
    assert failed.id == "bad"
    assert "not valid UTF-8 at byte 11" in failed.reason
    assert "save the file as UTF-8" in failed.reason


@pytest.mark.parametrize("data", [b"", b"  \n\r\n\t "])
def test_empty_file_becomes_failed(tmp_path, data):
    write(tmp_path, "good.md", b"text\n")
    write(tmp_path, "empty.md", data)
    corpus = load_corpus(tmp_path)
    assert corpus.ids == ["good"]
    assert [f.id for f in corpus.failed] == ["empty"]
    assert "empty file" in corpus.failed[0].reason


def test_unreadable_file_becomes_failed(tmp_path):
    write(tmp_path, "good.md", b"text\n")
    os.symlink(tmp_path / "missing-target", tmp_path / "dangling.md")
    corpus = load_corpus(tmp_path)
    assert corpus.ids == ["good"]
    (failed,) = corpus.failed
    assert isinstance(failed, FailedDocument) and "cannot read" in failed.reason


def test_missing_folder_raises(tmp_path):
    with pytest.raises(CorpusError, match="does not exist"):
        load_corpus(tmp_path / "nope")


def test_folder_without_markdown_raises(tmp_path):
    write(tmp_path, "a.txt", b"x")
    with pytest.raises(RagkitError, match=r"no \*.md files"):
        load_corpus(tmp_path)


def test_content_hash_changes_with_text(tmp_path):
    a = read_document(write(tmp_path, "a.md", b"one\n"))
    b = read_document(write(tmp_path, "b.md", b"two\n"))
    assert a.content_hash != b.content_hash and len(a.content_hash) == 64


def test_a_file_name_that_is_not_utf8_is_one_failed_document_not_a_failed_folder(tmp_path):
    write(tmp_path, "good.md", b"# Good\n\nBody.\n")
    (tmp_path / os.fsdecode(b"bad-\xff.md")).write_bytes(b"# Bad name\n\nBody.\n")
    corpus = load_corpus(tmp_path)
    assert corpus.ids == ["good"]
    (failed,) = corpus.failed
    assert failed.id == "bad-\\xff" and "not valid UTF-8: rename the file" in failed.reason
    failed.id.encode("utf-8")  # printable, storable in an index


def test_paragraph_scan_equals_the_old_pattern():
    import random
    import re

    from ragkit.corpus import paragraphs

    old = re.compile(r"[^\n]([^\n]|\n(?!\n))*")  # the pattern it replaces: memory grew with each match's length
    rng = random.Random(5)
    for _ in range(2000):
        text = "".join(rng.choice(["a", "b ", "\n", "\n\n", ".", "\n\n\n"]) for _ in range(rng.randint(0, 30)))
        assert list(paragraphs(text)) == [m.span() for m in old.finditer(text)], repr(text)
        lo, hi = sorted(rng.randint(0, len(text)) for _ in range(2))
        assert list(paragraphs(text, lo, hi)) == [m.span() for m in old.finditer(text, lo, hi)], repr(text)


FENCED = {
    "four backticks holding three": "# T\n\n````\n```\nx\n```\n````\n\nText.\n",
    "an indented fence": "# T\n\n  ```\nx = 1\n  ```\n\nText.\n",
    "an unclosed fence runs to the end": "# T\n\nText.\n\n~~~\nx\n",
}


@pytest.mark.parametrize("text", FENCED.values(), ids=FENCED.keys())
def test_corpus_stats_counts_the_fences_markdown_it_finds(text):
    from ragkit.corpus import document_stats

    from conftest import make_document

    assert document_stats(make_document(text)).code_blocks == 1


def test_the_bundled_ground_truth_is_the_one_its_numbers_were_computed_on():
    """The corpus, the questions and the out-of-domain queries are ground truth: no tool may rewrite them (a formatter
    once reflowed the corpus's code blocks and every figure moved). data/ground-truth.sha256 records each file; a
    deliberate change of the ground truth updates it in the same commit (``sha256sum`` in data/)."""
    import hashlib

    from conftest import ROOT

    data = ROOT / "data"
    recorded = dict(
        reversed(line.split(maxsplit=1))
        for line in (data / "ground-truth.sha256").read_text(encoding="utf-8").splitlines()
    )
    kept = ["corpus/*.md", "*.jsonl", "example/corpus/*.md", "example/*.jsonl", "example/*.toml", "example/*.json"]
    present = {p.relative_to(data).as_posix() for pattern in kept for p in data.glob(pattern)}
    assert set(recorded) == present, "a ground-truth file is added or gone: record it in data/ground-truth.sha256"
    changed = [name for name, sha in recorded.items() if hashlib.sha256((data / name).read_bytes()).hexdigest() != sha]
    assert not changed, f"ground truth rewritten: {changed}"


def test_a_document_the_corpus_lacks_is_an_input_error_that_names_it_and_the_ids_there_are(tmp_path):
    (tmp_path / "a.md").write_text("# A\n\nSome text.\n", encoding="utf-8")
    corpus = load_corpus(tmp_path)
    assert corpus["a"].title == "A"
    with pytest.raises(InputError, match=rf"no document 'b' in {tmp_path}: use one of its ids \(a\)"):
        corpus["b"]


def test_a_corpus_reads_like_a_mapping_of_id_to_document(tmp_path):
    """``id in corpus`` and ``list(corpus)`` work (Python fell back to corpus[0], which raised an InputError)."""
    (tmp_path / "a.md").write_text("# A\n\nSome text.\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("# B\n\nMore text.\n", encoding="utf-8")
    corpus = load_corpus(tmp_path)
    assert "a" in corpus and "c" not in corpus and 0 not in corpus
    assert list(corpus) == ["a", "b"] and [corpus[i].title for i in corpus] == ["A", "B"]


HOSTILE = """
import json, sys
from ragkit.corpus import load_corpus
corpus = load_corpus(sys.argv[1])
print(json.dumps({"ids": corpus.ids, "failed": {f.id: f.reason for f in corpus.failed}}))
"""


def test_a_hostile_corpus_folder_is_read_in_bounded_time_and_memory(tmp_path):
    """`ragkit ask --corpus` on a folder a student made: a FIFO named a.md never waited on, a link to /dev/zero and a
    2 GB sparse file never read, a link to a root-only file elsewhere not read as a document; a link to a document
    of the same folder is read (issue 63, item 5). Run apart, with a time limit: on the old reader the FIFO hangs."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    write(folder, "good.md", b"# Good\n\nBody.\n")
    os.mkfifo(folder / "a.md")
    (folder / "b.md").symlink_to("/dev/zero")
    with (folder / "c.md").open("wb") as f:
        f.truncate(2 * 2**30)
    secret = tmp_path / "root-only.txt"
    secret.write_text("# Root only\n\nNot for the corpus.\n")
    secret.chmod(0o600)
    (folder / "d.md").symlink_to(secret)
    (folder / "e.md").symlink_to("good.md")  # another name of a document of the same folder
    out = subprocess.run(
        [sys.executable, "-c", HOSTILE, str(folder)], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr[-2000:]
    found = json.loads(out.stdout)
    assert found["ids"] == ["e", "good"]
    assert found["failed"]["a"].startswith("cannot read the file (not a regular file")
    assert (
        found["failed"]["b"]
        == "a link to /dev/zero, outside the corpus folder: not read; copy the document into the folder"
    )
    assert found["failed"]["c"].startswith(f"cannot read the file ({2 * 2**30:,} bytes, more than the")
    assert found["failed"]["d"].startswith(f"a link to {secret}, outside the corpus folder: not read")
