"""The bibliography in the book: docs/sources.md becomes a page of its own, anchored by key, the landing page links
to it, a notebook's link to docs/sources.md leads to it, and the PDF prints it after the notebooks.

The fast tests build a book of one stand-in notebook given as already run (no kernel, no chromium); the last one
reads the real site that test_book builds once per run from the ``executed`` fixture.
"""

import json
import re

import nbformat
import pytest
from test_book import parse, reads_the_site, site  # noqa: F401  (the fixture, shared with test_book)

from book import build as book

SOURCES_CELL = (
    "## Sources\n\n- Holm (1979), A simple sequentially rejective multiple test procedure, Scandinavian "
    "Journal of Statistics [holm1979]\n\nThe full references: the course's bibliography, "
    "[docs/sources.md](../../docs/sources.md)."
)


@pytest.fixture(scope="module")
def small_site(tmp_path_factory):
    """A book of one exercise that ends with its sources, built by the real builder; and the sheets sent to print."""
    path = tmp_path_factory.mktemp("notebooks") / "exercises" / "tiny.ipynb"
    path.parent.mkdir()
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# Tiny"),
            nbformat.v4.new_code_cell("print('ran')"),
            nbformat.v4.new_markdown_cell(SOURCES_CELL),
        ]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="ran\n")]
    printed: list = []
    with pytest.MonkeyPatch.context() as patch:
        # the one English printout's sheets (a book of English pages prints no translation)
        patch.setattr(
            book.pdf, "write_all", lambda out, printouts: printed.extend(s for p in printouts for s in p.pages)
        )
        report = book.build(
            tmp_path_factory.mktemp("book") / "site",
            book=[book.Page(path, "exercises/tiny.ipynb", "Tiny")],
            executed={path: nb},
        )
    return report, printed


def test_the_bibliography_is_a_page_of_the_book_with_each_entry_anchored_by_its_key(small_site):
    report, _ = small_site
    page = report.out / book.BIBLIOGRAPHY
    keys = re.findall(r"^- \*\*\[([a-z]+[0-9]{4}[a-z]?)\]\*\* ", book.SOURCES.read_text(encoding="utf-8"), re.M)
    assert len(keys) >= 18 and parse(page).ids >= set(keys)
    text = page.read_text(encoding="utf-8")
    assert "<title>Sources</title>" in text and "Järvelin" in text and "doi.org/10.1145/1571941.1572114" in text
    assert "index.html" in {url for _, url in parse(page).links}, "the page leads back to the book's first page"
    assert book.BIBLIOGRAPHY in json.loads((report.out / book.MARKER).read_text())["files"]


def test_the_landing_page_links_to_the_bibliography(small_site):
    report, _ = small_site
    assert book.BIBLIOGRAPHY in {url for _, url in parse(report.out / "index.html").links}


def test_a_notebooks_link_to_the_bibliography_leads_to_its_page_not_to_the_repository(small_site):
    report, _ = small_site
    links = {url for _, url in parse(report.out / "tiny.html").links}
    assert book.BIBLIOGRAPHY in links
    assert not [url for url in links if "docs/sources.md" in url], links


def test_the_pdf_prints_the_bibliography_after_the_notebooks(small_site):
    _, printed = small_site
    assert [(sheet.title, sheet.href) for sheet in printed] == [("Tiny", "tiny.html"), ("Sources", book.BIBLIOGRAPHY)]


@reads_the_site
def test_the_real_book_has_the_bibliography_and_every_english_page_leads_to_it(site):  # noqa: F811
    assert (site.out / book.BIBLIOGRAPHY).is_file()
    assert book.BIBLIOGRAPHY in {url for _, url in parse(site.out / "index.html").links}
    for page in site.pages:
        links = {url for _, url in parse(site.out / page.href).links}
        assert book.BIBLIOGRAPHY in links, f"{page.href} does not lead to the bibliography"
