"""Tables that show their point: no cell of a notebook's table is cut short where the lesson is (pandas' "...")."""

import re
from html.parser import HTMLParser

import pytest

from conftest import NOTEBOOKS

SHOWN = [NOTEBOOKS / "03-bm25-and-hybrid.ipynb", NOTEBOOKS / "07-citations.ipynb"]


class Cells(HTMLParser):
    """The text of every cell of the HTML tables in an output."""

    def __init__(self):
        super().__init__()
        self.cells: list[str] = []
        self.inside = False

    def handle_starttag(self, tag, attrs):
        if tag in ("td", "th"):
            self.inside = True
            self.cells.append("")

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.inside = False

    def handle_data(self, data):
        if self.inside:
            self.cells[-1] += data


def table_cells(nb) -> list[str]:
    """Every cell of every DataFrame a notebook shows."""
    found = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            page = output.get("data", {}).get("text/html", "")
            if "dataframe" in page:
                parser = Cells()
                parser.feed(page)
                found += parser.cells
    return found


def test_cells_finds_a_truncated_cell():
    parser = Cells()
    parser.feed("<table class='dataframe'><tr><td>04-a.md#char=28704...</td><td>1</td></tr></table>")
    assert parser.cells == ["04-a.md#char=28704...", "1"]


@pytest.mark.notebooks(*SHOWN)
@pytest.mark.parametrize("ipynb", SHOWN, ids=lambda p: p.stem)
def test_no_table_cell_is_cut_short(ipynb, executed):
    run = executed(ipynb)
    assert not run.error, run.error
    cells = table_cells(run.notebook)
    assert cells, f"{ipynb.name} shows no table"
    cut = [c for c in cells if c.rstrip().endswith("...")]
    assert not cut, f"{ipynb.name} cuts these cells short: {cut}"


@pytest.mark.notebooks(NOTEBOOKS / "07-citations.ipynb")
def test_the_invented_identifiers_show_their_whole_range(executed):
    run = executed(NOTEBOOKS / "07-citations.ipynb")
    cells = table_cells(run.notebook)
    ranges = [c for c in cells if "#char=" in c]
    assert ranges and all(re.search(r"#char=\d+,\d+$", c) for c in ranges), ranges
