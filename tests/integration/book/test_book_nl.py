"""The book in two languages: each translated page and its English page link to each other, a Dutch page is
``lang="nl"`` with Dutch navigation and launches the Dutch notebook, and the landing page lists the Dutch pilot.

The fast tests build a small book of stand-in notebooks given as already run (no kernel); the slow one reads the
real site that test_book builds once per run from the ``executed`` fixture.
"""

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import nbformat
import pytest
from test_book import parse, reads_the_site, site  # noqa: F401  (the fixture, shared with test_book)

from book import build as book
from book.labels import LABELS, NAMES


def notebook(title: str, *sources: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell(f"# {title}"), *(nbformat.v4.new_code_cell(s) for s in sources)]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


STAND_INS = {
    "00-start-here.ipynb": "00. Start here",
    "01-chunking.ipynb": "01. Chunking",  # no translation: its page has no switch
    "06-thresholds.ipynb": "06. Thresholds",
    "exercises/ex2-choose-a-threshold.ipynb": "Exercise 2: choose a threshold",
    "nl/00-start-here.nl.ipynb": "00. Begin hier",
    "nl/06-thresholds.nl.ipynb": "06. Drempels",
    "nl/exercises/ex2-choose-a-threshold.nl.ipynb": "Oefening 2: kies een threshold",
}


# the Dutch notebooks' names before the edition added .nl (a JupyterLab tab could not tell 06 from 06): same pages
OLD_NAMES = {rel.replace(".nl.ipynb", ".ipynb"): title for rel, title in STAND_INS.items()}


PUBLISHED = book.Settings("https://github.com/a-teacher/ragkit", "main")
"""An address a teacher has set (book/book.toml's placeholder shows no launch button: test_book)."""


@pytest.fixture(scope="module")
def small_site(tmp_path_factory):
    """A book of the stand-ins, built by the real builder from outputs given (no kernel runs, no PDF printed)."""
    return small_book(tmp_path_factory, STAND_INS)


def small_book(tmp_path_factory, stand_ins: dict[str, str]) -> book.BookBuild:
    folder = tmp_path_factory.mktemp("notebooks")
    dutch_start = next(rel for rel in stand_ins if rel.startswith("nl/00-"))
    links = {
        "00-start-here.ipynb": f"[the Dutch course]({dutch_start}#top)",  # as the English 00 offers it
        dutch_start: "[English](../00-start-here.ipynb)",
    }
    for rel, title in stand_ins.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        nb = notebook(title, "print('ran')")
        if rel in links:
            nb.cells.append(nbformat.v4.new_markdown_cell(links[rel]))
        nbformat.write(nb, folder / rel)
    pages = book.pages(folder)
    executed = {}
    for page in pages:
        nb = nbformat.read(page.path, as_version=4)
        nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="ran\n")]
        executed[page.path] = nb
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(book.pdf, "write_all", lambda out, printouts: [None for _ in printouts])
        return book.build(tmp_path_factory.mktemp("book") / "site", book=pages, executed=executed, settings=PUBLISHED)


class Anchors(HTMLParser):
    """Every <a> of a page, with its attributes."""

    def __init__(self):
        super().__init__()
        self.anchors: list[dict[str, str]] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.anchors.append({k: v or "" for k, v in attrs})


def anchors(path: Path, css_class: str) -> list[dict[str, str]]:
    parser = Anchors()
    parser.feed(path.read_text())
    return [a for a in parser.anchors if css_class in a.get("class", "").split()]


def switches(path: Path) -> list[dict[str, str]]:
    """The language switches of a page: each <a class="book-language"> with its attributes."""
    return anchors(path, "book-language")


def check_switches(out: Path, pages: list[book.Page]) -> int:
    """Every page with a counterpart links to it by its language's name, and the counterpart links straight back."""
    by_href = {p.href: p for p in pages}
    checked = 0
    for page in pages:
        others = [p for p in pages if p.original == page.original and p is not page]
        found = switches(out / page.href)
        assert [s["href"] for s in found] == [p.href for p in others], f"{page.href}: switches {found}"
        for switch, other in zip(found, others, strict=True):
            assert (out / unquote(switch["href"])).is_file(), f"{page.href} switches to a missing page {switch}"
            assert switch["hreflang"] == switch["lang"] == other.language
            assert f">{NAMES[other.language]}</a>" in (out / page.href).read_text()
            back = [s["href"] for s in switches(out / switch["href"])]
            assert page.href in back, f"{other.href} does not switch back to {page.href}"
            assert by_href[switch["href"]].original == page.original
            checked += 1
    return checked


def test_each_translated_page_and_its_english_page_switch_to_each_other(small_site):
    pages = small_site.pages
    assert check_switches(small_site.out, pages) == 6  # three pairs, both ways
    assert switches(small_site.out / "01-chunking.html") == []
    assert {p.href for p in pages if p.language == "nl"} == {
        "00-start-here.nl.html",
        "06-thresholds.nl.html",
        "ex2-choose-a-threshold.nl.html",
    }


def launch_links(path: Path) -> dict[str, str]:
    """The page's launch buttons by kind (binder, colab, source, download), their addresses percent-decoded once."""
    return {
        kind: unquote(a["href"])
        for kind in ("binder", "colab", "source", "download")
        for a in anchors(path, f"book-{kind}")
    }


def test_a_dutch_page_is_lang_nl_in_dutch_words_and_launches_the_dutch_notebook(small_site):
    settings = PUBLISHED
    for page in small_site.pages:
        text = (small_site.out / page.href).read_text()
        assert f'<html lang="{page.language}">' in text, page.href
        words = LABELS[page.language]
        for label in ("binder", "colab", "source"):
            assert f">{words[label]}</a>" in text, (page.href, label)
        links = launch_links(small_site.out / page.href)
        if page.language == "nl":
            assert "Launch on Binder" not in text and "Open in Colab" not in text
            assert links["binder"].endswith("workspace?open=" + page.rel)
            assert links["colab"].endswith("/notebooks/" + page.rel)
            assert links["source"] == unquote(settings.source(page.rel))
            assert links["download"] == "notebooks/" + page.rel
        else:
            assert "/nl/" not in "".join(links.values()), page.href
        copy = small_site.out / links["download"]
        assert copy.read_bytes() == page.path.read_bytes()


def test_a_dutch_pages_neighbours_are_dutch_pages_and_its_home_is_the_dutch_section_of_the_index(small_site):
    out = small_site.out
    start = (out / "00-start-here.nl.html").read_text()
    assert re.search(r'href="06-thresholds\.nl\.html" rel="next">06\. Drempels', start)
    assert 'rel="prev"' not in start
    english = (out / "06-thresholds.html").read_text()
    assert 'href="01-chunking.html" rel="prev"' in english
    assert 'href="ex2-choose-a-threshold.html" rel="next"' in english
    home = re.search(r'<nav class="book-nav">\s*<a href="([^"]+)">([^<]+)</a>', start)
    assert home.group(2) == LABELS["nl"]["site_title"]
    assert home.group(1) == LABELS["nl"]["index"] and (out / home.group(1)).is_file()  # the Dutch index


def test_the_index_lists_the_dutch_pilot_in_a_dutch_section(small_site):
    index = (small_site.out / "index.html").read_text()
    section = re.search(r'<section id="pilot-nl" lang="nl">(.*?)</section>', index, re.S)
    assert section, "the index has no Dutch section"
    listed = re.findall(r'<li><a href="([^"]+)">', section.group(1))
    assert listed == [p.href for p in small_site.pages if p.language == "nl"]
    assert "In het Nederlands" in section.group(1)
    assert 'href="index.nl.html"' in section.group(1) and 'href="course.nl.pdf"' in section.group(1)
    assert [(s["href"], s["lang"]) for s in switches(small_site.out / "index.html")] == [("index.nl.html", "nl")]
    assert f'title="{LABELS["nl"]["site_switch"]}">{NAMES["nl"]}</a>' in index  # the switch says where it leads


def test_the_dutch_index_lists_every_dutch_page_in_dutch_with_the_switch_and_its_pdf(small_site):
    index = (small_site.out / "index.nl.html").read_text()
    assert '<html lang="nl">' in index and "<h2>De notebooks</h2>" in index and "<h2>Oefeningen</h2>" in index
    listed = re.findall(r'<li><a href="([^"]+)">', index)
    assert listed == [p.href for p in small_site.pages if p.language == "nl"]
    assert 'href="index.html" lang="en"' in index and 'href="course.nl.pdf"' in index
    assert "open%3Dnl%2F00-start-here.nl.ipynb" in index  # its Binder button opens the Dutch course
    assert [(s["href"], s["lang"]) for s in switches(small_site.out / "index.nl.html")] == [("index.html", "en")]
    assert f'title="{LABELS["en"]["site_switch"]}">{NAMES["en"]}</a>' in index


def test_a_widget_on_a_dutch_page_says_in_dutch_that_it_needs_a_kernel():
    code = nbformat.v4.new_code_cell("explorer.widget()")
    code.outputs = [nbformat.v4.new_output("execute_result", {book.WIDGET: {"model_id": "x"}, "text/plain": "VBox()"})]
    nb = nbformat.v4.new_notebook(cells=[code])
    page = book.Page(Path("nl/06-thresholds.nl.ipynb"), "nl/06-thresholds.nl.ipynb", "06")
    note = book.prepare(nb, page, PUBLISHED).cells[0].outputs[0].data["text/html"]
    assert LABELS["nl"]["kernel_note"] in note and "open%3Dnl%2F06-thresholds.nl.ipynb" in note
    assert "needs a running Python kernel" not in note


def test_a_dutch_page_captions_each_figure_once_as_its_dutch_notebook_wrote_the_caption():
    """The builder speaks English; the Dutch kernel wrote the sentence under the figure in Dutch: still shown once."""
    from ragkit.teach import language
    from ragkit.teach.lesson import plots

    fig = plots.needle_cuts([("q1", 10, 50), ("q2", 480, 60)], size=512)
    with language.speaking("nl"):
        dutch_caption = plots.caption(fig.description)
    assert dutch_caption != plots.caption(fig.description)  # the caption's frame is translated
    code = nbformat.v4.new_code_cell("plots.needle_cuts(windows)")
    code.outputs = [
        nbformat.v4.new_output("display_data", {book.PLOTLY: fig.to_plotly_json()}),
        nbformat.v4.new_output("display_data", {"text/markdown": dutch_caption, "text/plain": "<Markdown>"}),
    ]
    page = book.Page(Path("nl/06-thresholds.nl.ipynb"), "nl/06-thresholds.nl.ipynb", "06")
    outputs = book.prepare(nbformat.v4.new_notebook(cells=[code]), page, PUBLISHED).cells[0].outputs
    assert len(outputs) == 1, "the figure's sentence is shown twice on the Dutch page"


def test_a_dutch_pages_learning_objectives_are_the_pages_objectives():
    cells = [
        nbformat.v4.new_markdown_cell("# 06. Drempels"),
        nbformat.v4.new_markdown_cell("Een inleiding."),
        nbformat.v4.new_markdown_cell("**Leerdoelen.** Na dit notebook kun je:\n\n- een cut kiezen"),
    ]
    page = book.Page(Path("nl/06-thresholds.nl.ipynb"), "nl/06-thresholds.nl.ipynb", "06")
    prepared = book.prepare(nbformat.v4.new_notebook(cells=cells), page, PUBLISHED).cells
    assert book.OBJECTIVES_TAG in prepared[1].metadata.get("tags", []), [c.source for c in prepared]
    assert prepared[1].source.startswith("**Leerdoelen.**")


def test_a_book_of_dutch_notebooks_named_without_nl_has_the_same_pages_index_and_switches(tmp_path_factory, small_site):
    old = small_book(tmp_path_factory, OLD_NAMES)
    assert "nl/06-thresholds.ipynb" in [p.rel for p in old.pages]
    assert [(p.href, p.original, p.title) for p in old.pages] == [
        (p.href, p.original, p.title) for p in small_site.pages
    ]
    assert not list(old.out.glob("*.nl.nl.html"))
    assert check_switches(old.out, old.pages) == 6
    index = (old.out / "index.nl.html").read_text()
    assert re.findall(r'<li><a href="([^"]+)">', index) == [p.href for p in old.pages if p.language == "nl"]
    links = launch_links(old.out / "06-thresholds.nl.html")
    assert links["colab"].endswith("/notebooks/nl/06-thresholds.ipynb")
    assert links["download"] == "notebooks/nl/06-thresholds.ipynb" and (old.out / links["download"]).is_file()


def test_a_notebooks_link_to_another_notebook_of_the_book_leads_to_its_page(tmp_path_factory, small_site):
    for built in (small_site, small_book(tmp_path_factory, OLD_NAMES)):
        english = parse(built.out / "00-start-here.html").links
        assert ("a", "00-start-here.nl.html#top") in english, english
        assert ("a", "00-start-here.html") in parse(built.out / "00-start-here.nl.html").links


def test_a_page_knows_its_language_from_its_folder():
    assert book.Page(Path("x"), "nl/exercises/ex2.ipynb", "t").language == "nl"
    assert book.Page(Path("x"), "exercises/ex2.ipynb", "t").language == "en"
    assert book.Page(Path("x"), "nl.ipynb", "t").language == "en"  # a notebook named nl is not a folder
    assert book.Page(Path("x"), "nl/exercises/ex2.ipynb", "t").original == "exercises/ex2.ipynb"
    named = book.Page(Path("x"), "nl/06-thresholds.nl.ipynb", "t")  # the edition's names: a tab tells them apart
    assert named.original == "06-thresholds.ipynb" and named.href == "06-thresholds.nl.html"


@reads_the_site
def test_the_real_books_dutch_pages_switch_both_ways_and_launch_the_dutch_notebooks(site):  # noqa: F811
    dutch = [p for p in site.pages if p.language == "nl"]
    assert dutch, "the book has no Dutch page (notebooks/nl/ is empty)"
    assert check_switches(site.out, site.pages) == 2 * len(dutch)
    for page in dutch:
        text = (site.out / page.href).read_text()
        assert '<html lang="nl">' in text
        links = launch_links(site.out / page.href)
        if book.Settings.load().published:
            assert links["colab"].endswith("/notebooks/" + page.rel) and links["binder"].endswith("open=" + page.rel)
        else:  # book/book.toml's placeholder: no button that leads nowhere (the small site has an address set)
            assert not {"colab", "binder", "source"} & set(links), links
        assert links["download"] == "notebooks/" + page.rel and (site.out / links["download"]).is_file()
        assert f'<a href="{LABELS["nl"]["index"]}">' in text, f"{page.href}: its home is not the Dutch index"
    # the whole course is translated: every English page has its Dutch twin
    assert sorted(p.original for p in dutch) == sorted(p.rel for p in site.pages if p.language == "en")
    index = (site.out / "index.html").read_text()
    assert all(f'href="{p.href}"' in index for p in dutch)
    assert f'href="{LABELS["nl"]["index"]}"' in index and f'href="{LABELS["nl"]["pdf"]}"' in index
    dutch_index = (site.out / LABELS["nl"]["index"]).read_text()
    assert re.findall(r'<li><a href="([^"]+)">', dutch_index) == [p.href for p in dutch]
    assert '<html lang="nl">' in dutch_index and 'href="index.html" lang="en"' in dutch_index
    assert f'href="{LABELS["nl"]["pdf"]}"' in dutch_index and f'href="{LABELS["en"]["pdf"]}"' in index
