"""The one formatting layer: numbers, counts and tables written for people, in the notebook's language."""

import math
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from ragkit.teach.language import _, speaking
from ragkit.teach.lesson import formats


class Table(HTMLParser):
    """The headings and the cells of one HTML table, row by row."""

    def __init__(self):
        super().__init__()
        self.rows: list[list[tuple[str, str]]] = []
        self.tag = ""

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th"):
            self.tag = tag
            self.rows[-1].append((tag, ""))

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tag = ""

    def handle_data(self, data):
        if self.tag:
            kind, text = self.rows[-1][-1]
            self.rows[-1][-1] = (kind, text + data)


def shown(styler) -> list[list[tuple[str, str]]]:
    return table(styler.to_html())


def table(page: str) -> list[list[tuple[str, str]]]:
    """The rows of an HTML table, each a list of (td or th, its text)."""
    parser = Table()
    parser.feed(page)
    return [[c for c in row] for row in parser.rows]


@pytest.mark.parametrize(
    "language, n, written",
    [
        ("en", 374596, "374,596"),
        ("nl", 374596, "374.596"),
        ("en", 12, "12"),
        ("en", 1234567, "1,234,567"),
        ("en", np.int64(2048), "2,048"),
    ],
)
def test_number_separates_thousands_as_the_prose_does(language, n, written):
    with speaking(language):
        assert formats.whole(n) == written


@pytest.mark.parametrize(
    "language, n, written",
    [
        ("en", 0, "0 bluffs"),
        ("en", 1, "1 bluff"),
        ("en", 2, "2 bluffs"),
        ("en", 1200, "1,200 bluffs"),
        ("nl", 1200, "1.200 bluffs"),
    ],
)
def test_count_agrees_with_its_noun(language, n, written):
    with speaking(language):
        assert formats.count(n, "bluff", "bluffs") == written


def test_count_takes_its_forms_from_the_catalogue():
    with speaking("nl"):
        assert formats.count(2, _("bluffs"), _("bluffs")) == "2 blufs"
        assert formats.noun(1, _("counted wrong"), _("bluffs")) == "fout gerekend"


@pytest.mark.parametrize(
    "language, x, places, written",
    [
        ("en", 0.18750, 3, "0.188"),
        ("nl", 0.18750, 3, "0,188"),
        ("en", 26.0, 0, "26"),
        ("en", 1234.5, 1, "1,234.5"),
        ("nl", 1234.5, 1, "1.234,5"),
        ("en", 1.0, 3, "1.000"),
    ],
)
def test_decimal_writes_exactly_its_places(language, x, places, written):
    with speaking(language):
        assert formats.decimal(x, places) == written


def test_header_makes_words_of_field_names():
    assert formats.header("answered_with_needle") == "answered with the needle kept"
    assert formats.header("needle_length") == "needle length"
    with speaking("nl"):
        assert formats.header("in_domain") == "beantwoordbare queries"
        assert formats.header("bluffs") == "blufs"
    assert formats.header(3) == 3


SWEEP = pd.DataFrame(
    {
        "cut": [None, 1.0, 0.975],
        "bluffs": [30, 1, 0],
        "out_of_domain": [30, 30, 30],
        "cost": [26.0, 0.1875, 1.5],
        "characters": [374596, 1200, 3],
    }
)


def test_a_table_has_words_for_headings_and_no_bare_index():
    rows = shown(formats.styled(SWEEP, decimals={"cut": 3}))
    assert rows[0] == [("th", h) for h in ("cut", "bluffs", "out-of-domain queries", "cost", "characters")]
    assert all(kind == "td" for row in rows[1:] for kind, _ in row), "a bare 0, 1, 2 index is shown"
    assert [row[0][1] for row in rows[1:]] == ["–", "1.000", "0.975"]
    assert [row[3][1] for row in rows[1:]] == ["26.000", "0.188", "1.500"]
    assert [row[4][1] for row in rows[1:]] == ["374,596", "1,200", "3"]
    assert 'class="dataframe"' in formats.styled(SWEEP).to_html()


def test_a_table_keeps_an_index_that_means_something():
    rows = shown(formats.styled(SWEEP.iloc[1:], index="cut", decimals={"cut": 3}))
    assert [row[0] for row in rows[2:]] == [("th", "1.000"), ("th", "0.975")]
    assert rows[1][0] == ("th", "cut")


def test_a_table_speaks_the_notebooks_language():
    with speaking("nl"):
        rows = shown(formats.styled(SWEEP, decimals={"cost": 2}))
    assert ("th", "out-of-domain queries") in rows[0] and ("th", "blufs") in rows[0]
    assert [row[3][1] for row in rows[1:]] == ["26,00", "0,19", "1,50"]
    assert [row[4][1] for row in rows[1:]] == ["374.596", "1.200", "3"]


def test_a_table_keeps_the_numbers_for_code():
    styler = formats.styled(SWEEP)
    assert math.isclose(styler.data.iloc[1]["cost"], 0.1875)


def test_a_filtered_bare_index_stays_hidden_and_a_named_one_shows():
    assert all(kind == "td" for row in shown(formats.styled(SWEEP.iloc[[2, 0]]))[1:] for kind, _ in row)
    named = shown(formats.styled(SWEEP.set_index("characters")))
    assert named[1][0] == ("th", "characters") and named[2][0] == ("th", "374,596")


def test_a_column_given_its_decimals_writes_numbers_that_came_as_text_again():
    frame = pd.DataFrame({"stage": ["embedding", "scan"], "chapter (ms)": ["13", "0.3"], "how": ["1.5 ms", ""]})
    rows = shown(formats.styled(frame, decimals={"chapter (ms)": 1}))
    assert [row[1][1] for row in rows[1:]] == ["13.0", "0.3"]
    assert [row[2][1] for row in rows[1:]] == ["1.5 ms", ""]
    assert [row[1][1] for row in shown(formats.styled(frame))[1:]] == ["13", "0.3"]  # not asked: text stays


def test_a_truth_reads_yes_or_no_in_the_notebooks_language():
    import numpy as np

    frame = pd.DataFrame(
        {"identifier": ["a", "b"], "verifies": [True, False], "document exists": np.array([False, True])}
    )
    assert [r[1:] for r in shown(formats.styled(frame, index="identifier"))[2:]] == [
        [("td", "yes"), ("td", "no")],
        [("td", "no"), ("td", "yes")],
    ]
    with speaking("nl"):
        assert shown(formats.styled(frame, index="identifier"))[2][1:] == [("td", "ja"), ("td", "nee")]


def test_a_table_shows_text_as_text_never_as_markup():
    """Defect: a Styler does not escape, so a cell or heading with "<" (a student's own document's title) was HTML."""
    frame = pd.DataFrame(
        {"title <b>": ["<script>alert(1)</script>", pd.NA]}, index=pd.Index(["<i>row</i>", "b"], name="doc")
    )
    page = formats.styled(frame).to_html()
    assert "<script>" not in page and "<i>row" not in page and "<b>" not in page and "<NA>" not in page
    assert "&lt;script&gt;" in page and "&lt;i&gt;row&lt;/i&gt;" in page and "title &lt;b&gt;" in page


def test_a_table_a_tool_hands_the_student_reads_as_the_tables_for_people_in_both_languages():
    """Values, not code, through one writer in English and Dutch: exercise 2's ``cost_table`` (what its hint has a
    student type), 03's idf table sorted out of its positions, 01's truth columns and 07's verified row show no bare
    0, 1, 2 index and no True or False, and their data keep what code reads."""
    from types import SimpleNamespace

    from ragkit.teach.exercises import cost_table

    def row(cut):
        refused = 0 if cut is None else int(cut * 10)
        return SimpleNamespace(bluffs=3, answered_without_needle=1, refused=refused, in_domain=32)

    half = SimpleNamespace(at=row)
    costs = cost_table(half, [None, 0.45, 0.5, 0.6])
    idf = formats.Frame({"term": ["the", "constant"], "idf": [0.165, 4.372]}).sort_values("idf", ascending=False)
    truths = formats.Frame({"strategy": ["A", "E"], "header": [False, True]}).set_index("strategy")
    verified = formats.Frame(pd.Series({1: True, 2: False}, name="verified").to_frame().T)
    for words in (("en", "yes", "no", "within ceiling"), ("nl", "ja", "nee", "binnen het plafond")):
        spoken, yes, no, heading = words
        with speaking(spoken):
            pages = [table(t._repr_html_()) for t in (costs, idf, truths, verified)]
        (cost_rows, idf_rows, truth_rows, verified_rows) = pages
        assert ("th", heading) in cost_rows[0], cost_rows[0]
        assert [c for _, c in cost_rows[1]][-1] == yes and cost_rows[1][0] == ("td", "–")  # no threshold, no index
        assert idf_rows[1] == [("td", "constant"), ("td", "4.372" if spoken == "en" else "4,372")]
        assert truth_rows[-1][-1] == ("td", yes) and truth_rows[-2][-1] == ("td", no)
        assert [c for kind, c in verified_rows[-1] if kind == "td"] == [yes, no]
        every = " ".join(c for page in pages for r in page for _, c in r)
        assert "True" not in every and "False" not in every
    assert costs["within ceiling"].dtype == bool and list(idf.index) == [1, 0]  # the data stay what code reads
