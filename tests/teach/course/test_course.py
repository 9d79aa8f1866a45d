"""The course object the notebooks share: truncation is recorded and shown as a note, never as a warning."""

import warnings
from types import SimpleNamespace

import numpy as np

from ragkit.corpus import Corpus
from ragkit.teach.course import Course
from ragkit.tokens import TruncationWarning

from conftest import make_document

DENSE = "x1y2z3 " * 200  # one paragraph far over 256 word pieces and over the 512-character budget


class WarningEmbedder:
    """Stands in for the encoder (handed to the Course): unit vectors, and the TruncationWarning the real one raises."""

    stamp = SimpleNamespace(window=256)

    def encode(self, texts, progress=True):
        warnings.warn(TruncationWarning(1, len(texts), 256), stacklevel=2)
        v = np.ones((len(texts), 4), dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_truncation_is_recorded_with_counts_and_nothing_reaches_stderr():
    doc = make_document(f"# T\n\n## S\n\nA short first paragraph.\n\n{DENSE}\n", "d")
    course = Course(Corpus(doc.path.parent, (doc,)), [], [], progress=False, embedder=WarningEmbedder())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = course.retriever("E")
    over, n, window = course.truncated["E"]
    assert (n, window) == (len(r.chunks), 256)
    assert 1 <= over < n
    note = course.truncation_note()
    assert f"E **{over}** of {n}" in note and "256" in note


def test_no_note_when_nothing_is_truncated():
    doc = make_document("# T\n\n## S\n\nA short paragraph.\n", "d")
    assert Course(Corpus(doc.path.parent, (doc,)), [], [], progress=False).truncation_note() == ""


def test_other_warnings_still_reach_the_student():
    class Other(WarningEmbedder):
        def encode(self, texts, progress=True):
            warnings.warn("something else", RuntimeWarning, stacklevel=2)
            return super().encode(texts, progress)

    doc = make_document("# T\n\n## S\n\nA short paragraph.\n", "d")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Course(Corpus(doc.path.parent, (doc,)), [], [], progress=False, embedder=Other()).retriever("E")
    assert [w.category for w in caught] == [RuntimeWarning]


def test_recording_turns_truncation_raised_anywhere_in_the_block_into_a_note():
    doc = make_document(f"# T\n\n## S\n\nA short first paragraph.\n\n{DENSE}\n", "d")
    course = Course(Corpus(doc.path.parent, (doc,)), [], [], progress=False, embedder=WarningEmbedder())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with course.recording("E"):
            WarningEmbedder().encode(["anything"])
    over, n, window = course.truncated["E"]
    assert n == len(course.chunks("E")) and 1 <= over < n and window == 256


def test_recording_counts_the_texts_it_is_given():
    doc = make_document("# T\n\n## S\n\nA short paragraph.\n", "d")
    course = Course(Corpus(doc.path.parent, (doc,)), [], [], progress=False, embedder=WarningEmbedder())
    with course.recording("mine", ["short", DENSE]):
        WarningEmbedder().encode(["anything"])
    assert course.truncated["mine"] == (1, 2, 256)


def test_the_course_uses_the_embedder_it_is_given_and_no_other(monkeypatch):
    import ragkit.embedding

    def refuse(backend="onnx"):
        raise AssertionError("the default embedder was loaded although the course was handed one")

    monkeypatch.setattr(ragkit.embedding, "default_embedder", refuse)
    doc = make_document("# T\n\n## S\n\nA short paragraph.\n", "d")
    embedder = WarningEmbedder()
    course = Course(Corpus(doc.path.parent, (doc,)), [], [], progress=False, embedder=embedder)
    assert course.retriever("E").embedder is embedder
