"""Token accounting with the bundled model's tokenizer: header cost and window truncation."""

import warnings

import pytest

import ragkit.tokens
from ragkit.chunking import chunk_corpus, chunk_document
from ragkit.plumbing.models import WINDOW
from ragkit.tokens import TruncationWarning, count_pieces, token_report

from conftest import make_document


def test_pieces_are_word_pieces_without_special_tokens():
    assert count_pieces(["hello world", "unaffable"]) == [2, 3]


class Counting:
    """A tokenizer that counts the texts it is given, and has (or lacks) tokenizers' encode_batch_fast."""

    def __init__(self, real, fast: bool):
        self.real, self.seen = real, []
        if fast:
            self.encode_batch_fast = self.encode_batch

    def encode_batch(self, texts, add_special_tokens=True):
        self.seen += texts
        return self.real.encode_batch(texts, add_special_tokens=add_special_tokens)


@pytest.mark.parametrize("fast", [True, False], ids=["tokenizers 0.20+", "tokenizers 0.19"])
def test_a_process_tokenizes_each_distinct_text_once_and_forgets_past_its_limit(monkeypatch, tmp_path, fast):
    real = ragkit.tokens.tokenizer()
    counting = Counting(real, fast)
    folder = tmp_path / "model"  # a model folder of its own: the counts remembered for the bundled one do not answer
    monkeypatch.setattr(ragkit.tokens, "tokenizer", lambda model_dir=None: counting)
    texts = ["hello world", "unaffable", "hello world"]
    assert count_pieces(texts, folder) == [2, 3, 2]
    assert counting.seen == ["hello world", "unaffable"]
    assert count_pieces(["unaffable", "hello world"], folder) == [3, 2]
    assert counting.seen == ["hello world", "unaffable"], "a text counted before was tokenized again"
    monkeypatch.setattr(ragkit.tokens, "COUNTS_KEPT", 3)
    assert count_pieces(["one more", "and another"], folder) == [2, 2]  # past the limit: the memory starts again
    assert len(ragkit.tokens._counted(folder)) == 2
    assert count_pieces(["hello world"], folder) == [2] and counting.seen[-1] == "hello world"


class Words:
    """A stand-in tokenizer: one piece per word, and a count of the texts it was given."""

    def __init__(self):
        self.encoded = 0

    def encode_batch(self, texts, add_special_tokens=True):
        self.encoded += len(texts)
        return [type("Encoding", (), {"ids": t.split()})() for t in texts]


def test_a_call_that_fills_the_memory_still_counts_the_texts_it_knew_before(monkeypatch, tmp_path):
    """The memory clears when a call's new texts overflow it: the call's texts counted before must still be answered."""
    monkeypatch.setattr(ragkit.tokens, "tokenizer", lambda model_dir=None: Words())
    monkeypatch.setattr(ragkit.tokens, "COUNTS_KEPT", 3)
    folder = tmp_path / "model"
    assert count_pieces(["a b", "c"], folder) == [2, 1]
    assert count_pieces(["a b", "d e f", "g h"], folder) == [2, 3, 2]  # "a b" was known when the memory cleared


def test_the_graders_one_process_counts_a_whole_class_at_the_real_limit(monkeypatch, tmp_path):
    """About 1,000 texts per ex4 check, the course's texts shared and each student's header new, sixty students: past
    ``COUNTS_KEPT`` in one process, and every count still right."""
    words = Words()
    monkeypatch.setattr(ragkit.tokens, "tokenizer", lambda model_dir=None: words)
    folder = tmp_path / "model"
    course = [f"course chunk {i} " + "word " * (i % 7) for i in range(1_000)]
    for student in range(60):
        texts = [f"[student {student} header {i}] " + text for i, text in enumerate(course[:900])] + course[900:]
        assert count_pieces(texts, folder) == [len(t.split()) for t in texts]
    assert 60 * 900 > ragkit.tokens.COUNTS_KEPT and words.encoded < 60 * 1_000


def test_header_share_counts_only_header_pieces():
    doc = make_document("# Doc\n\n## Section name\nShort body text.\n")
    (plain,) = chunk_document(doc, "C")
    (headed,) = chunk_document(doc, "E")
    report = token_report([headed])
    body = count_pieces([plain.text])[0]
    assert report.pieces == body + report.header_pieces
    assert report.header_pieces == count_pieces(["[Doc > Section name]"])[0]
    assert 0 < report.header_share < 1


def test_chunks_over_the_window_are_counted_and_warned_about():
    long = " ".join(["tokenisation"] * 200) + "."
    doc = make_document(f"## S\n{long}\n\nshort.\n")
    chunks = chunk_document(doc, "C", size=5000)
    with pytest.warns(TruncationWarning, match=f"1 of 1 chunks are longer than the encoder's {WINDOW}-piece window"):
        report = token_report(chunks)
    assert report.over_window == 1


def test_no_warning_when_everything_fits():
    doc = make_document("## S\nA short paragraph.\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert token_report(chunk_document(doc, "E")).over_window == 0


def test_bundled_corpus_header_cost_is_reported(corpus):
    plain = token_report(chunk_corpus(corpus, "C"), warn=False)
    headed = token_report(chunk_corpus(corpus, "E"), warn=False)
    assert plain.header_pieces == 0 and headed.header_pieces > 0
    assert headed.pieces == plain.pieces + headed.header_pieces
