"""Citations quote content, locate it exactly, and links are written by the server, never the model."""

import pytest

from ragkit.answer import NoAnswer, answer
from ragkit.chunking import chunk_corpus, chunk_document
from ragkit.citations import (CharRange, MediaRange, PdfPage, SheetRange, build_context, render_links, verify)
from ragkit.data import load_questions, queries
from ragkit.errors import InputError
from ragkit.retrieval import Retriever

from conftest import ROOT, make_document


def test_locators_render_fragment_and_label():
    assert CharRange(25873, 26272).fragment == "#char=25873,26272"
    assert PdfPage(12).fragment == "#page=12" and PdfPage(12).label == "page 12"
    assert MediaRange(132.4, 158.9).fragment == "#t=132.4,158.9"
    assert MediaRange(132.4, 158.9).label == "2:12.4-2:38.9"
    assert SheetRange("Budget", "A1:C9").fragment == "#sheet=Budget&range=A1:C9"
    assert SheetRange("Budget", "A1:C9").label == "sheet 'Budget', A1:C9"


def test_quote_is_content_not_the_embedded_text():
    doc = make_document("# Doc\n\n## Sec\nFirst paragraph. " + "x" * 600 + "\n\nSecond one.\n")
    chunks = chunk_document(doc, "F", size=512)
    prompt, citations = build_context("q?", [(c, 0.3) for c in chunks])
    for chunk, cit in zip(chunks, citations):
        assert cit.quote == chunk.content and cit.quote != chunk.text
        assert cit.fragment == f"#char={chunk.start},{chunk.end}"
    assert "SOURCES" in prompt and prompt.rstrip().endswith("QUESTION\nq?")
    assert "[2] Doc - Sec\n" in prompt and "[Doc > Sec]" not in prompt


def test_every_citation_of_every_bundled_query_verifies(corpus):
    retriever = Retriever(chunk_corpus(corpus, "F"), strategy="F", progress=False)
    texts = [q.text for q in queries(load_questions(ROOT / "data" / "questions.jsonl"))]
    run = retriever.dense(texts)
    for i in range(len(texts)):
        _, citations = build_context(texts[i], [(retriever.chunks[j], run.distance[i, j]) for j in run.top(i, 4)])
        assert all(verify(c, corpus) for c in citations)


def test_verify_catches_a_wrong_locator(corpus):
    doc = corpus.documents[0]
    (chunk, *_) = chunk_document(doc, "E")
    _, (good,) = build_context("q", [(chunk, 0.1)])
    shifted = type(good)(**{**vars(good), "locator": CharRange(chunk.start + 1, chunk.end + 1)})
    assert verify(good, corpus) and not verify(shifted, corpus)


def test_links_are_written_by_the_server_and_unknown_markers_flagged():
    doc = make_document("# Doc\n\n## Sec\nA sentence.\n")
    _, citations = build_context("q", [(c, 0.2) for c in chunk_document(doc, "E")])
    out = render_links("It is so [1], and also [3].", citations, "https://example.org/course/")
    assert '[[1]](https://example.org/course/doc.md#char=' in out.text
    assert "[3: no such source]" in out.text and out.unknown == (3,)


@pytest.fixture(scope="module")
def retriever(corpus):
    return Retriever(chunk_corpus(corpus, "E"), strategy="E", progress=False)


def test_nothing_under_the_cut_is_no_answer_without_a_model(retriever):
    class Exploding:
        name = "must not be called"

        def generate(self, prompt):
            raise AssertionError("the model was called for a refused question")

        def count(self, text):
            raise AssertionError("the model was called for a refused question")

    result = answer("how do i renew my spanish passport", retriever, cut=0.3, generator=Exploding())
    assert isinstance(result, NoAnswer)
    assert str(result) == 'NO ANSWER: nothing under cosine distance 0.3 for "how do i renew my spanish passport"'


def test_answer_returns_prompt_and_citations(retriever, corpus):
    result = answer("How many test examples do I need?", retriever, cut=0.9)
    assert 1 <= len(result.citations) <= 4 and result.text is None
    assert result.prompt_tokens > 0 and "all-MiniLM-L6-v2" in result.counted_with
    assert all(verify(c, corpus) for c in result.citations)


@pytest.mark.parametrize("question", ["", "   \n"])
def test_empty_question_is_refused(retriever, question):
    with pytest.raises(InputError, match="empty question"):
        answer(question, retriever)


def test_cut_out_of_range_is_refused(retriever):
    with pytest.raises(InputError):
        answer("what is a gradient?", retriever, cut=2.5)


def test_text_fragment_names_the_quote_by_its_first_and_last_words_percent_encoded():
    from ragkit.citations import text_fragment

    assert text_fragment("a short quote") == "#:~:text=a%20short%20quote"
    long = "Count the examples where two models disagree, then run the sign-test on them all."
    assert text_fragment(long) == "#:~:text=Count%20the%20examples%20where,sign%2Dtest%20on%20them%20all."
