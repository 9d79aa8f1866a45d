"""Tables and numbers for people (issue 48), over every executed notebook, English and Dutch: no snake_case heading,
one number of decimals per column, whole numbers with their thousands separated as the prose writes them, and no
count of 1 before a plural noun ("1 bluffs", "1 lijnen")."""

import re
from html.parser import HTMLParser

import pytest

from ragkit.teach.lesson import plots

from conftest import ALL_NOTEBOOKS, NOTEBOOKS

SNAKE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)+$")
PLURALS = {
    "en": (
        "lines bluffs queries chunks needles documents sections characters times answers sources tokens vectors "
        "cuts settings questions pieces identifiers topics prompts cases metrics evaluations comparisons words "
        "refusals tables formulas bullets paragraphs tickets runs strategies retrievers points pairs wins losses "
        "splits families looks rules seconds bytes steps rows columns phrasings kinds errors problems files "
        "citations locators links threads needles"
    ),
    "nl": (
        "lijnen blufs bluffen queries chunks needles documenten secties tekens antwoorden bronnen tokens vectoren "
        "cuts instellingen vragen stukken identifiers onderwerpen prompts gevallen metrics evaluaties "
        "vergelijkingen woorden weigeringen tabellen formules opsommingen alinea's tickets strategieën retrievers "
        "punten paren regels seconden bytes stappen rijen kolommen formuleringen soorten fouten bestanden "
        "citaties locators links threads"
    ),
}
NUMBER = {
    "en": re.compile(r"^-?([1-9]\d{0,2}(,\d{3})+|\d+)(\.(\d+))?$"),
    "nl": re.compile(r"^-?([1-9]\d{0,2}(\.\d{3})+|\d+)(,(\d+))?$"),
}
"""A number cell as the language writes it: thousands grouped (or not), then its decimals (group 4)."""


def language_of(path) -> str:
    return "nl" if "nl" in path.relative_to(NOTEBOOKS).parts else "en"


def one_before_a_plural(text: str, language: str) -> list[str]:
    """Every "1 <plural>" in ``text`` (bold marks between them allowed), for the nouns the narrators count."""
    nouns = "|".join(re.escape(n) for n in PLURALS[language].split())
    return [m.group(0) for m in re.finditer(rf"(?<![\w@.,/=-])1(\*\*|</b>|</strong>)? +(\*\*)?({nouns})\b", text)]


class Tables(HTMLParser):
    """The HTML tables of an output: per table, its heading cells and its body rows (each a list of (tag, text))."""

    def __init__(self):
        super().__init__()
        self.tables: list[dict] = []
        self.part = ""
        self.cell: str | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":  # a database's own table (08, shown as stored) keeps the names its SQL uses
            stored = STORED in (dict(attrs).get("class") or "").split()
            self.tables.append({"head": [], "rows": [], "stored": stored})
        elif tag in ("thead", "tbody"):
            self.part = tag
        elif tag == "tr" and self.tables and self.part == "tbody":
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th") and self.tables:
            self.cell = tag
            if self.part == "thead":
                self.tables[-1]["head"].append("")
            elif self.tables[-1]["rows"]:
                self.tables[-1]["rows"][-1].append((tag, ""))

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.cell = None
        elif tag in ("thead", "tbody"):
            self.part = ""

    def handle_data(self, data):
        if self.cell is None or not self.tables:
            return
        if self.part == "thead":
            self.tables[-1]["head"][-1] += data
        elif self.tables[-1]["rows"] and self.tables[-1]["rows"][-1]:
            tag, text = self.tables[-1]["rows"][-1][-1]
            self.tables[-1]["rows"][-1][-1] = (tag, text + data)


STORED = "ragkit-stored"
"""The class of a table shown with a database's own column names (``tables.for_people(..., stored=True)``)."""


def tables_of(page: str) -> list[dict]:
    parser = Tables()
    parser.feed(page)
    return parser.tables


def decimals(cell: str, language: str) -> int | None:
    """How many decimals a number cell writes (None for a cell that is not one number)."""
    m = NUMBER[language].match(cell.strip())
    return None if m is None else len(m.group(4) or "")


def unseparated(cell: str) -> bool:
    """A whole number of five or more digits written without its thousands separated (374596)."""
    return re.fullmatch(r"-?[1-9]\d{4,}", cell.strip()) is not None  # not a token such as 044715


def columns(table: dict) -> dict[tuple[str, int], list[str]]:
    """A table's body cells by column: data cells counted from the right, row headings from the right of their own
    group (a row of a multi-level index leaves out the levels it shares with the row above)."""
    found: dict[tuple[str, int], list[str]] = {}
    for row in table["rows"]:
        for tag in ("td", "th"):
            cells = [text for t, text in row if t == tag]
            for i, text in enumerate(reversed(cells)):
                found.setdefault((tag, i), []).append(text)
    return found


def bare_index(table: dict) -> bool:
    """Whether a table's row headings are only positions, 0, 1, 2 and on (an index that means nothing to a reader)."""
    rows = [[text.strip() for tag, text in row if tag == "th"] for row in table["rows"]]
    return bool(rows) and all(len(r) == 1 for r in rows) and [r[0] for r in rows] == [str(i) for i in range(len(rows))]


def mixed_decimals(table: dict, language: str) -> list[list[str]]:
    """The columns of ``table`` whose numbers do not all have the same number of decimals (the row labels of a
    multi-level index aside: under one setting's name they are that setting's values, 256 beside 0.25 by right)."""
    found = []
    grouped = any(sum(tag == "th" for tag, _ in row) > 1 for row in table["rows"])
    for (tag, _), cells in columns(table).items():
        if grouped and tag == "th":
            continue
        places = {decimals(c, language) for c in cells} - {None}
        if len(places) > 1:
            found.append([c for c in cells if decimals(c, language) is not None])
    return found


def shown(nb) -> tuple[list[str], list[dict]]:
    """Every text a notebook's outputs show (streams, Markdown, HTML, figures' text alternatives), and its tables."""
    texts, found = [], []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if "text" in output:
                texts.append(output["text"])
            data = output.get("data", {})
            for kind in ("text/markdown", "text/html"):
                if kind in data:
                    texts.append(re.sub(r"<[^>]+>", " ", data[kind]) if kind == "text/html" else data[kind])
            if "text/html" in data and "dataframe" in data["text/html"]:
                found += tables_of(data["text/html"])
            if "application/vnd.plotly.v1+json" in data:
                texts.append(plots.describe(data["application/vnd.plotly.v1+json"]))
    return texts, found


def test_the_checks_find_what_they_look_for():
    assert one_before_a_plural("we bluff **1** times; 1 bluffs; cut 1 lines, **1 queries**", "en") == [
        "1** times",
        "1 bluffs",
        "1 lines",
        "1 queries",
    ]
    assert one_before_a_plural("1 lijnen over 3 waarden; **1** blufs", "nl") == ["1 lijnen", "1** blufs"]
    assert not one_before_a_plural("1 bluff, 11 bluffs, Hit@1 queries, 0.1 lines, 2 chunks of 1", "en")
    page = (
        "<table class='dataframe'><thead><tr><th></th><th>answered_with_needle</th><th>cut</th></tr>"
        "<tr><th>rule</th><th></th><th></th></tr></thead><tbody>"
        "<tr><th>a</th><td>374596</td><td>1.0</td></tr><tr><th>b</th><td>1,200</td><td>0.975</td></tr></tbody>"
        "</table>"
    )
    [table] = tables_of(page)
    assert [h for h in table["head"] if SNAKE.match(h)] == ["answered_with_needle"] and not table["stored"]
    assert tables_of(page.replace("'dataframe'", f"'dataframe {STORED}'"))[0]["stored"]
    assert mixed_decimals(table, "en") == [["1.0", "0.975"]]
    assert [c for cells in columns(table).values() for c in cells if unseparated(c)] == ["374596"]
    assert not bare_index(table) and bare_index(tables_of(page.replace(">a<", ">0<").replace(">b<", ">1<"))[0])
    assert decimals("1.234,50", "nl") == 2 and decimals("0.975", "nl") is None and decimals("12 ms", "en") is None


@pytest.mark.notebooks
@pytest.mark.parametrize("ipynb", ALL_NOTEBOOKS, ids=lambda p: str(p.relative_to(NOTEBOOKS).with_suffix("")))
def test_tables_and_numbers_are_written_for_people(ipynb, executed):
    run = executed(ipynb)
    assert not run.error, run.error
    language = language_of(ipynb)
    texts, found = shown(run.notebook)
    ones = [o for text in texts for o in one_before_a_plural(text, language)]
    snake = [h for t in found if not t["stored"] for h in t["head"] if SNAKE.match(h.strip())]
    mixed = [m for t in found for m in mixed_decimals(t, language)]
    bare = [c for t in found for cells in columns(t).values() for c in cells if unseparated(c)]
    positions = [t["head"] for t in found if bare_index(t)]
    assert not (ones or snake or mixed or bare or positions), (
        f"{ipynb.name}: counts of 1 before a plural {ones}; snake_case headings {snake}; columns with mixed decimals "
        f"{mixed}; whole numbers without their thousands separated {bare}; tables with a bare 0, 1, 2 index (their "
        f"headings) {positions}"
    )


def test_the_corpus_sentence_separates_thousands_as_its_table_does():
    from types import SimpleNamespace

    from ragkit.teach.lesson import narrate

    corpus = type("Corpus", (), {"__len__": lambda self: 13, "failed": []})()
    total = SimpleNamespace(characters=374596, sections=1127, tables=2028, formulas=1297, code_blocks=1079)
    text = narrate.corpus_loaded(corpus, total).data
    assert all(n in text for n in ("374,596", "1,127", "2,028", "1,297", "1,079")), text


def test_prose_names_a_column_as_its_table_heads_it():
    """A table shows ``answered_without_needle`` as words: prose that sends the reader to `answered_without_needle`
    in the table points at a heading that is not there (code such as ``row.answered_without_needle`` is fine)."""
    from ragkit.teach import frames

    fields = [f for f in frames._words() if "_" in f]
    found = []
    for twin in sorted((NOTEBOOKS / "twins").rglob("*.py")):
        prose = "\n".join(line for line in twin.read_text(encoding="utf-8").splitlines() if line.startswith("#"))
        found += [f"{twin.name}: `{f}`" for f in fields if re.search(rf"`{f}`", prose)]
    assert not found, found
