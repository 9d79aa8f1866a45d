"""A report's paired comparisons as the notebooks show them: in English the report's own table, character for
character; in Dutch the same figures under Dutch headings, claims and verdicts, while the report keeps its English."""

import re
from html.parser import HTMLParser

import numpy as np
import pytest

from ragkit.data import Query
from ragkit.evaluation import Evaluation, Result
from ragkit.report import Finding, report
from ragkit.teach import language
from ragkit.teach.lesson import paired

SWAP = str.maketrans({".": ",", ",": "."})
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


@pytest.fixture(autouse=True)
def english_again():
    with language.speaking("en"):
        yield


@pytest.fixture(scope="module")
def rep():
    """Four comparisons of made-up runs (8 needles asked twice): a finding with its p, one with its counts only,
    a gain, and one the chapter never published."""
    queries = [Query(f"q{i}", p, f"text {i} {p}") for p in ("question", "ticket") for i in range(8)]
    ids, needles = tuple(q.id for q in queries), tuple(q.qid for q in queries)
    rng = np.random.default_rng(3)
    ev = Evaluation(queries, n_questions=8)
    for s, low in (("A", 0), ("E", 1)):
        for name in ("dense", "bm25"):
            ev.results[f"{s}/{name}"] = Result(s, name, rng.integers(low, 6, size=16), ids, needles)
    ev.results["E/dense"] = Result("E", "dense", np.array([1] * 16), ids, needles)  # E finds everything first
    wanted = [
        ("E/dense", "A/dense", "Hit@1"),
        ("E/bm25", "A/bm25", "Hit@4"),
        ("E/bm25", "E/dense", "Hit@1"),
        ("E/dense", "A/dense", "MRR"),
    ]
    published = {
        wanted[0]: Finding.counts(18, 3, 0.0015),
        wanted[1]: Finding.counts(4, 6),
        wanted[2]: Finding.gain(0.3, 0.2),
    }
    return report(ev, wanted, published, runs=())


class Visible(HTMLParser):
    """The text of each heading and cell of an HTML table, and the rest, in order."""

    def __init__(self):
        super().__init__()
        self.texts: list[str] = []

    def handle_data(self, data):
        if data.strip():
            self.texts.append(data.strip())


def visible(page: str) -> list[str]:
    parser = Visible()
    parser.feed(page)
    return parser.texts


def test_in_english_the_comparisons_are_the_reports_own_table_and_text(rep):
    shown = paired.comparisons(rep)
    assert shown._repr_html_() == rep._repr_html_()
    assert str(shown) == repr(shown) == str(rep)
    assert {str(line.verdict) for line in rep.judged} >= {"consistent: neither detects a difference"}


def test_in_dutch_the_words_are_dutch_the_figures_the_same_and_the_report_stays_english(rep):
    english_page, english_text = paired.comparisons(rep)._repr_html_(), str(paired.comparisons(rep))
    with language.speaking("nl"):
        page, text = paired.comparisons(rep)._repr_html_(), str(paired.comparisons(rep))
        assert rep._repr_html_() == english_page  # the engine's own table is the engine's: English
    cells = visible(page)
    assert cells[0].startswith("Gepaarde vergelijkingen: exacte tweezijdige sign test op de discordante paren")
    assert cells[1:12] == [
        "vergelijking",
        "metriek",
        "queries",
        "p",
        "Holm-p",
        "needles",
        "p",
        "Holm-p",
        "hoofdstuk",
        "beweert",
        "oordeel",
    ]
    assert cells[-1].startswith("Oordelen tegenover het hoofdstuk: een beweerd verschil")
    for line in rep.judged:
        assert line.verdict and (str(line.verdict) not in page or str(line.verdict) == "consistent"), line.verdict
        assert line.finding and line.finding.claim not in page
    assert "from its counts" not in page and "uit zijn tellingen" in page and "geen aantoonbaar verschil" in page
    assert "Holm p" not in text and "vergelijking" in text and "oordeel" in text
    english, dutch = NUMBER.findall(" ".join(visible(english_page))), NUMBER.findall(" ".join(cells))
    assert len(english) == len(dutch) > 20
    assert all(n in (e, e.translate(SWAP)) for e, n in zip(english, dutch)), list(zip(english, dutch))
    assert any("," in n for n in dutch) and not any("." in n for n in dutch)  # a decimal comma, never a point
    assert len(text.splitlines()) == len(english_text.splitlines())


def test_every_way_the_chapter_reports_a_finding_reads_back_as_the_engine_wrote_it_in_english():
    for finding in (
        Finding.counts(18, 3, 0.0015),
        Finding.counts(4, 6),
        Finding.gain(0.781, 0.844),
        Finding.counts(2, 6, 1e-05),
    ):
        assert paired.said(finding) == finding.said
        with language.speaking("nl"):  # a decimal point becomes a comma; a p of 1e-05 becomes 1 · 10⁻⁵
            assert (paired.said(finding) != finding.said) == ("." in finding.said or "e-" in finding.said), finding.said
    with language.speaking("nl"):
        assert paired.said(Finding.gain(0.781, 0.844)) == "0,781 -> 0,844"
        assert paired.said(Finding.counts(2, 6)) == "+2/-6 (p = 0,29 uit zijn tellingen)"


def test_the_dutch_table_is_written_from_the_findings_values_not_read_back_from_the_english(rep, monkeypatch):
    """A reworded English sentence in the engine must not leave a Dutch table half English (it did when the teaching
    layer read the chapter's figures back out of the report's English with a regular expression)."""
    monkeypatch.setattr(Finding, "said", property(lambda self: "as the chapter put it"), raising=False)
    with language.speaking("nl"):
        page = paired.comparisons(rep)._repr_html_()
    assert "uit zijn tellingen" in page and "as the chapter put it" not in page


def test_a_cell_of_one_word_never_breaks_over_two_lines():
    """03's report showed p = 1.94e-05 broken at its hyphen over two lines: a number, a count such as +23/-2, is one
    word and keeps on one line; a cell of words may wrap."""
    from ragkit.report import html_table

    page = html_table("t", ("p", "verdict"), [["1.94e-05", "consistent: neither detects a difference"], ["+23/-2", ""]])
    assert '<td style="white-space: nowrap">1.94e-05</td>' in page
    assert '<td style="white-space: nowrap">+23/-2</td>' in page
    assert "<td>consistent: neither detects a difference</td>" in page
