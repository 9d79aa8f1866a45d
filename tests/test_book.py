"""The course as a book: every notebook has a page with its outputs, nothing comes from the network, every link
between pages resolves; in a real browser the 06 page's static slider moves by keyboard and shows ragkit's counts.

The site is built once for the module into build/book/ (the same place as `make book`): every notebook executes.
"""

import functools
import http.server
import os
import re
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest

import ragkit.teach.course
from book import build as book
from ragkit.errors import InputError
from ragkit.teach import plots
from ragkit.threshold import CHAPTER_CUTS, default_cuts

from conftest import ROOT

SITE = ROOT / "build" / "book"
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
RAW_WIDGET = re.compile(r"\b(VBox|HBox|Box|FigureWidget|FloatSlider|IntSlider|Dropdown|Output|HTML|Label)\(")


class Links(HTMLParser):
    """Every href and src of a page, and every id it defines."""

    def __init__(self):
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for name in ("href", "src"):
            if attrs.get(name):
                self.links.append((tag, attrs[name]))


def parse(path: Path) -> Links:
    parser = Links()
    parser.feed(path.read_text())
    return parser


BUILT: list[book.Report] = []
"""The one build of a run: test_accessibility imports this fixture, and pytest would run an imported one again."""


@pytest.fixture(scope="session")
def site():
    if not BUILT:
        BUILT.append(book.build(SITE))
        print("\n" + BUILT[0].summary())
    return BUILT[0]


@pytest.fixture(scope="module")
def sweep():
    return ragkit.teach.course.load(progress=False).sweep("E", "dense")


def output_areas(html: str) -> str:
    """The text of a page's output areas only (prose may name a widget class on purpose)."""
    return "\n".join(re.findall(r'<div class="jp-OutputArea-output[^"]*"[^>]*>(.*?)</div>', html, re.S))


def test_every_notebook_and_exercise_has_a_page_with_its_outputs(site):
    expected = sorted(NB.relative_to(ROOT / "notebooks").as_posix() for NB in
                      [*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "notebooks" / "exercises").glob("*.ipynb")])
    assert sorted(p.rel for p in site.pages) == expected
    for page in site.pages:
        html = (SITE / page.href).read_text()
        assert f"<title>{page.title}</title>" in html
        code_cells = [c for c in nbformat.read(page.path, as_version=4).cells if c.cell_type == "code"]
        assert html.count("jp-Cell jp-CodeCell") == len(code_cells), f"{page.href} lost cells"
        assert "jp-OutputArea-output" in html, f"{page.href} shows no output"
        assert (SITE / page.download).is_file()


def test_no_page_shows_an_error_a_broken_widget_or_a_raw_widget_repr(site):
    for page in site.pages:
        html = (SITE / page.href).read_text()
        assert "Traceback" not in html and "jp-OutputArea-error" not in html, f"{page.href} shows an error"
        assert "Error displaying widget" not in html
        assert "application/vnd.jupyter.widget-view+json" not in html, f"{page.href} still carries a widget view"
        assert not RAW_WIDGET.search(output_areas(html)), f"{page.href} shows a raw widget repr"


def test_nothing_is_fetched_from_the_network(site):
    for path in [SITE / "index.html", *(SITE / p.href for p in site.pages)]:
        for tag, url in parse(path).links:
            if tag in ("script", "link", "img") and urlsplit(url).scheme != "data":
                assert not urlsplit(url).scheme, f"{path.name} loads {url} from the network"
                assert (SITE / unquote(urlsplit(url).path)).is_file(), f"{path.name}: {url} is not in the site"
        assert not re.search(r"(cdn|unpkg|jsdelivr)\.", path.read_text()), f"{path.name} names a CDN"


def test_every_link_between_pages_resolves(site):
    pages = {p.name: parse(p) for p in SITE.glob("*.html")}
    for name, links in pages.items():
        for _, url in links.links:
            parts = urlsplit(url)
            if parts.scheme:
                continue
            target = unquote(parts.path) or name
            assert (SITE / target).is_file(), f"{name} links to {url}, which is not in the site"
            if parts.fragment and target in pages:
                # a browser looks for the fragment as written, then percent-decoded (HTML's indicated element)
                ids = pages[target].ids
                assert parts.fragment in ids or unquote(parts.fragment) in ids, \
                    f"{name} links to a missing anchor {url}"


def test_landing_page_is_the_readme_table_and_every_page_launches_on_binder_and_links_its_source(site):
    settings = book.Settings.load()
    index = (SITE / "index.html").read_text()
    hrefs = {url for _, url in parse(SITE / "index.html").links}
    assert "<table>" in index
    assert all(p.href in hrefs for p in site.pages)
    for page in site.pages:
        links = {url for _, url in parse(SITE / page.href).links}
        assert settings.binder(page.rel) in links and settings.source(page.rel) in links
        assert "urlpath=lab%2Ftree%2Fnotebooks%2F" + page.rel.replace("/", "%2F") in settings.binder(page.rel)


def test_binder_and_source_links_come_from_the_one_setting(tmp_path):
    (tmp_path / "book.toml").write_text('repository = "https://github.com/someone/course"\nbranch = "v2"\n')
    settings = book.Settings.load(tmp_path / "book.toml")
    assert settings.binder("exercises/ex1.ipynb") == (
        "https://mybinder.org/v2/gh/someone/course/v2?urlpath=lab%2Ftree%2Fnotebooks%2Fexercises%2Fex1.ipynb")
    assert settings.source("06-thresholds.ipynb") == "https://github.com/someone/course/blob/v2/notebooks/06-thresholds.ipynb"
    (tmp_path / "book.toml").write_text('repository = "gitlab.com/someone/course"\nbranch = "main"\n')
    with pytest.raises(book.BookError, match="https://github.com/OWNER/NAME"):
        book.Settings.load(tmp_path / "book.toml")


def notebook(*cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nb


@pytest.mark.parametrize("objectives_first", [True, False])
def test_learning_objectives_go_to_the_top_of_the_page_marked(objectives_first):
    title = nbformat.v4.new_markdown_cell("# 09. Something\n\nIntro.")
    objectives = nbformat.v4.new_markdown_cell("## Learning objectives\n\n- read a cut")
    code = nbformat.v4.new_code_cell("1 + 1")
    cells = [objectives, title, code] if objectives_first else [title, code, objectives]
    page = book.Page(Path("09-something.ipynb"), "09-something.ipynb", "09. Something")
    out = book.prepare(notebook(*cells), page, book.Settings.load())
    assert [c.source for c in out.cells] == [title.source, objectives.source, code.source]
    assert book.OBJECTIVES_TAG in out.cells[1].metadata["tags"]


def test_widgets_become_a_kernel_note_progress_bars_go_and_figures_are_drawn_locally():
    code = nbformat.v4.new_code_cell("explorer.widget()")
    widget = {"model_id": "abc", "version_major": 2, "version_minor": 0}
    code.outputs = [
        nbformat.v4.new_output("display_data",
                               {book.WIDGET: widget, "text/plain": "Batches: 100%|####| 134/134 [00:05<00:00]"}),
        nbformat.v4.new_output("execute_result",
                               {book.WIDGET: widget, "text/plain": "VBox(children=(FloatSlider(...),))"}),
        nbformat.v4.new_output("display_data",
                               {book.PLOTLY: {"data": [], "layout": {"title": {"text": "a </script>"}}}}),
    ]
    page = book.Page(Path("x.ipynb"), "x.ipynb", "x")
    out = book.prepare(notebook(code), page, book.Settings.load()).cells[0].outputs
    assert len(out) == 2
    assert "needs a running Python kernel" in out[0].data["text/html"] and "VBox" not in str(out[0])
    assert 'class="book-plotly"' in out[1].data["text/html"] and "a </script>" not in out[1].data["text/html"]


def slider_counts(text: str) -> tuple[int, int]:
    found = re.search(r"bluffs (\d+) / \d+, refused answerable (\d+) / \d+", text)
    return int(found.group(1)), int(found.group(2))


def test_static_slider_counts_equal_the_sweep_at_every_step(sweep):
    fig = plots.threshold_slider(sweep)
    slider = fig.layout.sliders[0]
    cuts = default_cuts()
    assert len(slider.steps) == len(cuts)
    assert cuts[slider.active] == CHAPTER_CUTS[0]
    assert slider_counts(fig.layout.annotations[0].text) == (sweep.at(CHAPTER_CUTS[0]).bluffs,
                                                             sweep.at(CHAPTER_CUTS[0]).refused)
    for cut, step in zip(cuts, slider.steps, strict=True):
        row = sweep.at(cut)
        layout = step.args[0]
        assert slider_counts(layout["annotations"][0]["text"]) == (row.bluffs, row.refused)
        assert layout["shapes"][0]["x0"] == pytest.approx(2.0 if cut is None else cut)
    with pytest.raises(InputError, match="not on the slider"):
        plots.threshold_slider(sweep, cuts=[0.9, 0.5], cut=0.675)


class Quiet(http.server.SimpleHTTPRequestHandler):
    """A static file server that keeps its request log to itself."""

    def log_message(self, *args):
        pass


@pytest.fixture
def served(site):
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing: .ci/run must install Debian's chromium package")
        pytest.skip("no /usr/bin/chromium here (apt-get install chromium); CI runs this test")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(SITE)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def offline_page(browser, served: str, outside: list[str], problems: list[str]):
    """A browser tab that may load only from the local server (anything else is recorded and refused)."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)

    def only_local(route):
        if route.request.url.startswith(served):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_local)
    return page


def test_static_slider_moves_by_keyboard_without_a_kernel_and_shows_ragkits_counts(served, sweep):
    from playwright.sync_api import sync_playwright

    presses = 6
    outside: list[str] = []
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM))
        page = offline_page(browser, served, outside, problems)
        page.goto(f"{served}/06-thresholds.html")
        slider = page.locator(".book-plotly[role='slider']")
        slider.wait_for(timeout=30_000)
        slider.scroll_into_view_if_needed()
        start = int(slider.get_attribute("aria-valuenow"))
        slider.focus()
        for _ in range(presses):
            page.keyboard.press("ArrowRight")
        cuts = default_cuts()
        cut = cuts[start + presses]
        label = "none" if cut is None else f"{cut:.3f}"
        page.wait_for_function("(el) => el.getAttribute('aria-valuenow') === '%d'" % (start + presses),
                               arg=slider.element_handle(), timeout=10_000)
        shown = slider.locator(".annotation-text").first
        page.wait_for_function("([el, label]) => el.textContent.startsWith('cut ' + label + ':')",
                               arg=[shown.element_handle(), label], timeout=10_000)
        line = slider.evaluate("(gd) => gd.layout.shapes[0].x0")
        ARTIFACTS.mkdir(exist_ok=True)
        slider.screenshot(path=str(ARTIFACTS / "book-threshold-slider.png"))
        text = shown.text_content()
        browser.close()
    row = sweep.at(cut)
    assert cuts[start] == CHAPTER_CUTS[0]
    assert slider_counts(text) == (row.bluffs, row.refused), text
    assert line == pytest.approx(cut)
    assert not outside, f"the page asked the network for {outside}"
    assert not problems, problems


def test_formulas_render_offline_with_the_shipped_mathjax(served):
    from playwright.sync_api import sync_playwright

    outside: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM))
        page = offline_page(browser, served, outside, [])
        page.goto(f"{served}/03-bm25-and-hybrid.html")
        page.locator(".MathJax_Display").first.wait_for(timeout=30_000)
        browser.close()
    assert not [u for u in outside if u.startswith("http")], f"the page asked the network for {outside}"


def test_links_to_project_files_point_at_the_repository():
    """A link to ../data/corpus/x.md opens the file in JupyterLab; on a static page it goes to the repository."""
    settings = book.Settings("https://github.com/someone/course", "v2")
    body = ('<a href="../data/corpus/04-a.md#char=1,9" title="t">[1]</a> <a href="02-dense-retrieval.html">next</a>'
            '<a href="assets/book.css">')
    page = book.Page(Path("07-citations.ipynb"), "07-citations.ipynb", "07")
    out = book._project_links(body, page, settings)
    assert 'href="https://github.com/someone/course/blob/v2/data/corpus/04-a.md#char=1,9"' in out
    assert 'href="02-dense-retrieval.html"' in out and 'href="assets/book.css"' in out
    nested = book.Page(Path("exercises/ex5.ipynb"), "exercises/ex5.ipynb", "ex5")
    assert "blob/v2/data/corpus/x.md" in book._project_links('<a href="../../data/corpus/x.md">', nested, settings)
