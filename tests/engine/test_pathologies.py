"""Chunker pathologies: heading-only chunks, cuts inside numbers and code, chunks that start mid-sentence."""

from ragkit.chunking import chunk_corpus, chunk_document, pathologies, starts_mid_sentence
from ragkit.corpus import Corpus

from conftest import make_document

TEXT = (
    "# T\n\n## S\n\n### Only a heading\n\n"
    "The rate is 94.3 percent and it holds for every run we made here.\n\n"
    "```\nx = np.argsort(v)  # a long line of code here\n```\n\n"
    "A clean sentence. Another clean sentence follows it here.\n"
)


def small():
    doc = make_document(TEXT, "d")
    return doc, chunk_document(doc, "C", size=40), Corpus(doc.path.parent, (doc,))


def test_each_pathology_is_found_where_the_small_budget_puts_it():
    _doc, chunks, corpus = small()
    p = pathologies(chunks, corpus, "C")
    assert [c.content for c in p.heading_only] == ["### Only a heading"]
    assert [(c.before.content[-3:], c.after.content[:9]) for c in p.decimal_cuts] == [("94.", "3 percent")]
    assert [(c.before.content[-3:], c.after.content[:7]) for c in p.code_cuts] == [("np.", "argsort")]
    assert [c.content[:9] for c in p.mid_sentence] == ["3 percent", "argsort(v"]
    assert p.counts()["chunks starting mid-sentence"] == 2


def test_a_chunk_after_a_sentence_end_and_a_space_starts_cleanly():
    doc, chunks, _ = small()
    after_sentence = next(c for c in chunks if c.content.startswith("Another"))
    assert not starts_mid_sentence(after_sentence, doc.text)
    assert not starts_mid_sentence(chunks[0], doc.text)


def test_counts_on_the_bundled_corpus_are_the_same_for_every_boundaries_strategy(corpus):
    rows = [pathologies(chunk_corpus(corpus, s), corpus, s).counts() for s in "CDEF"]
    assert all(r == rows[0] for r in rows)
    assert rows[0]["heading-only chunks"] > 0 and rows[0]["cuts inside a decimal number"] > 0


def test_a_cut_inside_an_indented_or_nested_fence_is_a_cut_inside_code():
    for fence in ("  ```", "````"):
        body = "\n".join(f"value_{i} = compute_the_thing({i})" for i in range(6))
        inner = "```\n" if fence == "````" else ""
        doc = make_document(f"# T\n\n## S\n\n{fence}\n{inner}{body}\n{inner}{fence}\n\nAfter.\n", "d")
        chunks = chunk_document(doc, "A", size=60)
        p = pathologies(chunks, Corpus(doc.path.parent, (doc,)), "A")
        assert len(p.code_cuts) >= 3, fence


def test_pathologies_agree_with_a_brute_force_count():
    import random

    from ragkit.chunking import Boundary, Chunk, _Spans

    rng = random.Random(2)
    for _ in range(500):
        spans = [(a, a + rng.randint(1, 30)) for a in (rng.randint(0, 200) for _ in range(rng.randint(0, 12)))]
        before, after = sorted(rng.randint(0, 230) for _ in range(2))
        boundary = Boundary(Chunk("d", "", "", 0, before, ""), Chunk("d", "", "", after, 240, ""))
        assert _Spans(spans).split_by(boundary) == any(lo < before and after < hi for lo, hi in spans)
