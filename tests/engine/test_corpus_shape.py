"""The bundled course text has the shape the chapter's corpus had (issue: the bundled course corpus)."""

import re

from ragkit.__main__ import main
from ragkit.corpus import corpus_stats, outside_fences

from conftest import CORPUS

OUT_OF_DOMAIN_WORDS = [
    "streaming",
    "rate limit",
    "prompt cach",
    "prefix cach",
    "json schema",
    "structured output",
    "agent",
    "tool use",
    "tool call",
    "vector database",
    "vector store",
    "prompt injection",
    "image generation",
    "diffusion",
    "paella",
    "passport",
    "refund",
]


def test_thirteen_numbered_chapters_each_with_title_and_introduction(corpus):
    names = sorted(p.name for p in CORPUS.glob("*.md"))
    assert len(names) == 13 and len(corpus.documents) == 13 and not corpus.failed
    for i, name in enumerate(names, 1):
        assert re.fullmatch(rf"{i:02d}-[a-z0-9-]+\.md", name)
    for doc in corpus.documents:
        assert doc.text.startswith("# ")
        intro = doc.text.split("\n## ", 1)[0].split("\n", 1)[1]
        assert intro.strip(), f"{doc.id} has no introduction before its first section"


def test_totals_are_in_the_chapter_corpus_range(corpus):
    total = corpus_stats(corpus)[-1]
    assert 330_000 <= total.characters <= 400_000
    assert 120 <= total.sections <= 135
    assert total.tables >= 10 and total.formulas >= 30 and total.code_blocks >= 30
    assert total.bullets > 0
    assert total.paragraphs_over_512 >= 15 and total.paragraphs_over_1200 >= 3
    assert total.outside_bmp == 0


def test_no_section_heading_inside_code_and_no_front_matter_or_links(corpus):
    for doc in corpus.documents:
        prose = {start for start, _ in outside_fences(doc.text)}
        pos = 0
        for line in doc.text.split("\n"):
            if line.startswith("## "):
                assert pos in prose, f"{doc.id}: '## ' line inside a code block at {pos}"
            pos += len(line) + 1
        assert not doc.text.startswith("---")
        assert "http://" not in doc.text and "https://" not in doc.text


def test_out_of_domain_topics_stay_out(corpus):
    for doc in corpus.documents:
        low = doc.text.lower()
        found = [w for w in OUT_OF_DOMAIN_WORDS if w in low]
        assert not found, f"{doc.id} mentions {found}"


def test_named_sections_the_chapter_relies_on(corpus):
    docs = {d.id[:2]: d for d in corpus.documents}
    assert docs["04"].title == "Classification, Cross-Entropy, and How Not to Fool Yourself"
    assert "\n## How many test examples do I need?\n" in docs["04"].text
    assert "what is the capital of france?" in docs["12"].text.lower()
    assert "all-MiniLM-L6-v2" in docs["08"].text
    low = docs["13"].text.lower()
    assert "prefill" in low and "kv cache" in low


def test_corpus_stats_command_prints_the_totals(capsys):
    assert main(["corpus-stats"]) == 0
    out = capsys.readouterr().out
    assert "13 documents loaded, 0 failed" in out
    assert re.search(r"^total\s+\d{6}\s+1[23]\d\s", out, re.M)
