"""The course as a book: every notebook has a page with its outputs, nothing comes from the network, every link
between pages resolves; in a real browser the 06 page's static slider moves by keyboard and shows ragkit's counts.

The site is built once per run into a temporary folder, from the notebooks the ``executed`` fixture ran once
(conftest.py): the book builder renders them and executes none again.
"""

import functools
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time
import warnings
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest

import ragkit.teach.course
from book import build as book
from ragkit.errors import InputError
from ragkit.teach.classroom.address import UNSET_NOTE
from ragkit.teach.lesson import plots
from ragkit.threshold import CHAPTER_CUTS, default_cuts

from conftest import ROOT

BOOK = book.pages()
reads_the_site = pytest.mark.notebooks(*(p.path for p in BOOK))
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


BUILT: list[book.BookBuild] = []
"""The one build of a run: test_accessibility imports this fixture, and pytest would run an imported one again."""


@pytest.fixture(scope="session")
def site(executed, tmp_path_factory):
    if BUILT:
        return BUILT[0]
    runs = {p.path: executed(p.path) for p in BOOK}
    failed = [run.error for run in runs.values() if run.error]
    if failed:
        pytest.fail("the book cannot be built: " + "; ".join(failed), pytrace=False)
    report = book.build(tmp_path_factory.mktemp("book") / "site", executed={p: r.notebook for p, r in runs.items()})
    print("\n" + report.summary())
    assert not report.execute_seconds, "the book executed a notebook again"
    BUILT.append(report)
    return report


@pytest.fixture(scope="module")
def sweep():
    return ragkit.teach.course.load(progress=False).sweep("E", "dense")


def output_areas(html: str) -> str:
    """The text of a page's output areas only (prose may name a widget class on purpose)."""
    return "\n".join(re.findall(r'<div class="jp-OutputArea-output[^"]*"[^>]*>(.*?)</div>', html, re.S))


@reads_the_site
def test_every_notebook_and_exercise_has_a_page_with_its_outputs(site):
    folders = [ROOT / "notebooks", ROOT / "notebooks" / "nl"]  # the course, then its Dutch pilot
    expected = sorted(
        NB.relative_to(ROOT / "notebooks").as_posix()
        for folder in folders
        for NB in [*folder.glob("*.ipynb"), *(folder / "exercises").glob("*.ipynb")]
    )
    assert sorted(p.rel for p in site.pages) == expected
    for page in site.pages:
        html = (site.out / page.href).read_text()
        assert f"<title>{page.title}</title>" in html
        code_cells = [c for c in nbformat.read(page.path, as_version=4).cells if c.cell_type == "code"]
        assert html.count("jp-Cell jp-CodeCell") == len(code_cells), f"{page.href} lost cells"
        assert "jp-OutputArea-output" in html, f"{page.href} shows no output"
        assert (site.out / page.download).is_file()


@reads_the_site
def test_no_page_shows_an_error_a_broken_widget_or_a_raw_widget_repr(site):
    for page in site.pages:
        html = (site.out / page.href).read_text()
        assert "Traceback" not in html and "jp-OutputArea-error" not in html, f"{page.href} shows an error"
        assert "Error displaying widget" not in html
        assert "application/vnd.jupyter.widget-view+json" not in html, f"{page.href} still carries a widget view"
        assert not RAW_WIDGET.search(output_areas(html)), f"{page.href} shows a raw widget repr"


@reads_the_site
def test_nothing_is_fetched_from_the_network(site):
    for path in [site.out / "index.html", site.out / "index.nl.html", *(site.out / p.href for p in site.pages)]:
        for tag, url in parse(path).links:
            if tag in ("script", "link", "img") and urlsplit(url).scheme != "data":
                assert not urlsplit(url).scheme, f"{path.name} loads {url} from the network"
                assert (site.out / unquote(urlsplit(url).path)).is_file(), f"{path.name}: {url} is not in the site"
        assert not re.search(r"(cdn|unpkg|jsdelivr)\.", path.read_text()), f"{path.name} names a CDN"


@reads_the_site
def test_every_link_between_pages_resolves(site):
    pages = {p.name: parse(p) for p in site.out.glob("*.html")}
    for name, links in pages.items():
        for _, url in links.links:
            parts = urlsplit(url)
            if parts.scheme:
                continue
            target = unquote(parts.path) or name
            assert (site.out / target).is_file(), f"{name} links to {url}, which is not in the site"
            if parts.fragment and target in pages:
                # a browser looks for the fragment as written, then percent-decoded (HTML's indicated element)
                ids = pages[target].ids
                assert parts.fragment in ids or unquote(parts.fragment) in ids, (
                    f"{name} links to a missing anchor {url}"
                )


@reads_the_site
def test_landing_page_is_the_readme_table_and_every_page_launches_on_binder_and_links_its_source(site):
    settings = book.Settings.load()
    index = (site.out / "index.html").read_text()
    hrefs = {url for _, url in parse(site.out / "index.html").links}
    assert "<table>" in index
    assert all(p.href in hrefs for p in site.pages)
    for page in site.pages:
        links = {url for _, url in parse(site.out / page.href).links}
        if not settings.published:  # the placeholder: no button leads to a repository that does not exist
            assert not [u for u in links if "OWNER" in u or "mybinder" in u or "colab" in u], page.rel
            continue
        assert settings.binder(page.rel) in links and settings.source(page.rel) in links
        assert "urlpath=ragkit%2Fworkspace%3Fopen%3D" + page.rel.replace("/", "%2F") in settings.binder(page.rel)


def test_binder_and_source_links_come_from_the_one_setting(tmp_path):
    (tmp_path / "book.toml").write_text('repository = "https://github.com/someone/course"\nbranch = "v2"\n')
    settings = book.Settings.load(tmp_path / "book.toml")
    assert settings.binder("exercises/ex1.ipynb") == (
        "https://mybinder.org/v2/gh/someone/course/v2?urlpath=ragkit%2Fworkspace%3Fopen%3Dexercises%2Fex1.ipynb"
    )
    assert (
        settings.source("06-thresholds.ipynb")
        == "https://github.com/someone/course/blob/v2/notebooks/06-thresholds.ipynb"
    )
    (tmp_path / "book.toml").write_text('repository = "gitlab.com/someone/course"\nbranch = "main"\n')
    with pytest.raises(book.BookError, match=r"https://github.com/OWNER/NAME"):
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


def test_a_narrating_cell_shows_its_prose_and_not_its_input_while_a_computing_cell_shows_both():
    title = nbformat.v4.new_markdown_cell("# 09. Something")
    narrating = nbformat.v4.new_code_cell("narrate.figures_of(ev)", metadata={"jupyter": {"source_hidden": True}})
    narrating.outputs = [
        nbformat.v4.new_output(
            "execute_result",
            {"text/markdown": "The prose it writes, **12**.", "text/plain": "<IPython.core.display.Markdown>"},
        )
    ]
    computing = nbformat.v4.new_code_cell("computed = 1 + 1")
    page = book.Page(Path("09-something.ipynb"), "09-something.ipynb", "09. Something")
    html = book.render(notebook(title, narrating, computing), [page], 0, book.Settings.load())
    assert "figures_of" not in html and "The prose it writes" in html
    assert "computed" in html and html.count("jp-Cell jp-CodeCell") == 2


def test_a_reveal_without_a_prediction_stays_folded_on_the_page():
    """The book runs every notebook with ``my_prediction = None``: each answer to a prediction is on the page folded
    (a closed ``<details>``) under the line asking for a guess, never in view under the question."""
    from ragkit.teach.lesson import predict

    shown = predict.reveal(None, predict.Count(32), 10, "The chapter lost **4**.")
    reveal = nbformat.v4.new_code_cell(
        "predict.reveal(my_prediction, ...)", metadata={"jupyter": {"source_hidden": True}}
    )
    reveal.outputs = [
        nbformat.v4.new_output("execute_result", {"text/markdown": shown.data, "text/plain": "<Markdown>"})
    ]
    page = book.Page(Path("09-something.ipynb"), "09-something.ipynb", "09. Something")
    html = book.render(
        notebook(nbformat.v4.new_markdown_cell("# 09. Something"), reveal), [page], 0, book.Settings.load()
    )
    folded = re.search(r"<details>\s*<summary>([^<]+)</summary>(.*?)</details>", html, re.S)
    assert folded, "the reveal is not folded on the page"
    before = html[: folded.start()]
    assert "No prediction yet" in before and "says <strong>10</strong>" not in before and "lost" not in before
    assert "says <strong>10</strong>" in folded.group(2) and "The chapter lost" in folded.group(2)
    assert "without a prediction" in folded.group(1) and "without a prediction" in folded.group(2)


@reads_the_site
def test_no_page_shows_the_input_of_a_cell_the_lab_collapses(site):
    for page in site.pages:
        html = (site.out / page.href).read_text()
        hidden = [
            c
            for c in nbformat.read(page.path, as_version=4).cells
            if c.cell_type == "code" and c.metadata.get("jupyter", {}).get("source_hidden")
        ]
        text = unescape(re.sub(r"<[^>]+>", "", html))  # highlighted code is split into spans: compare the text
        for cell in hidden:
            assert cell.source.strip() not in text, f"{page.href} shows the input of {cell.source.strip()[:60]!r}"


def test_widgets_become_a_kernel_note_progress_bars_go_and_figures_are_drawn_locally():
    code = nbformat.v4.new_code_cell("explorer.widget()")
    widget = {"model_id": "abc", "version_major": 2, "version_minor": 0}
    code.outputs = [
        nbformat.v4.new_output(
            "display_data", {book.WIDGET: widget, "text/plain": "Batches: 100%|####| 134/134 [00:05<00:00]"}
        ),
        nbformat.v4.new_output(
            "execute_result", {book.WIDGET: widget, "text/plain": "VBox(children=(FloatSlider(...),))"}
        ),
        nbformat.v4.new_output(
            "display_data", {book.PLOTLY: {"data": [], "layout": {"title": {"text": "a </script>"}}}}
        ),
    ]
    page = book.Page(Path("x.ipynb"), "x.ipynb", "x")
    out = book.prepare(notebook(code), page, book.Settings.load()).cells[0].outputs
    assert len(out) == 2
    assert "needs a running Python kernel" in out[0].data["text/html"] and "VBox" not in str(out[0])
    assert 'class="book-plotly"' in out[1].data["text/html"] and "a </script>" not in out[1].data["text/html"]


def slider_counts(text: str) -> tuple[int, int]:
    found = re.search(r"bluffs (\d+) / \d+, refused answerable (\d+) / \d+", text)
    return int(found.group(1)), int(found.group(2))


@pytest.mark.slow
def test_static_slider_counts_equal_the_sweep_at_every_step(sweep):
    fig = plots.threshold_slider(sweep)
    slider = fig.layout.sliders[0]
    cuts = plots.slider_cuts()
    assert sorted(cuts, key=lambda c: 2.0 if c is None else c) == cuts and set(cuts) == set(default_cuts())
    assert len(slider.steps) == len(cuts)
    assert cuts[slider.active] == CHAPTER_CUTS[0]
    assert slider_counts(fig.layout.annotations[0].text) == (
        sweep.at(CHAPTER_CUTS[0]).bluffs,
        sweep.at(CHAPTER_CUTS[0]).refused,
    )
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
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site.out)))
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


@reads_the_site
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
        cuts = plots.slider_cuts()
        cut = cuts[start + presses]
        label = "none" if cut is None else f"{cut:.3f}"
        page.wait_for_function(
            f"(el) => el.getAttribute('aria-valuenow') === '{start + presses}'",
            arg=slider.element_handle(),
            timeout=10_000,
        )
        shown = slider.locator(".annotation-text").first
        page.wait_for_function(
            "([el, label]) => el.textContent.startsWith('cut ' + label + ':')",
            arg=[shown.element_handle(), label],
            timeout=10_000,
        )
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


def served_folder(folder: Path):
    """A static server of one folder, stopped on exit."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.mark.slow  # the course's vectors and a browser
def test_static_slider_takes_the_arrow_keys_after_a_click_and_after_a_drag(sweep, tmp_path):
    """A page of the book's own HTML and script with 06's static slider: click or drag it, then the keys move it."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium here (apt-get install chromium); CI runs this test")
    fig = plots.threshold_slider(sweep)
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "plots.threshold_slider(s)",
                outputs=[nbformat.v4.new_output("display_data", data={book.PLOTLY: fig.to_plotly_json()})],
            )
        ]
    )
    page = book.Page(ROOT / "notebooks" / "06-thresholds.ipynb", "06-thresholds.ipynb", "06")
    book.copy_assets(tmp_path)
    (tmp_path / page.href).write_text(book.render(nb, [page], 0, book.Settings.load()))
    cuts = plots.slider_cuts()
    server = served_folder(tmp_path)
    served = f"http://127.0.0.1:{server.server_address[1]}"
    outside: list[str] = []
    problems: list[str] = []
    seen = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM))
            tab = offline_page(browser, served, outside, problems)
            tab.goto(f"{served}/{page.href}")
            slider = tab.locator(".book-plotly[role='slider']")
            slider.wait_for(timeout=30_000)
            slider.scroll_into_view_if_needed()

            def at(other_than: int) -> int:
                """The slider's position once it has left ``other_than`` (a loaded machine redraws late), or that."""
                try:
                    tab.wait_for_function(
                        "([el, i]) => el.getAttribute('aria-valuenow') !== String(i)",
                        arg=[slider.element_handle(), other_than],
                        timeout=10_000,
                    )
                except PlaywrightTimeout:
                    pass  # it did not move: the assertion after the call says so
                return int(slider.get_attribute("aria-valuenow"))

            def settle(index: int) -> tuple[int, str]:
                tab.wait_for_function(
                    "([el, i]) => el.getAttribute('aria-valuenow') === String(i)",
                    arg=[slider.element_handle(), index],
                    timeout=10_000,
                )
                label = "none" if cuts[index] is None else f"{cuts[index]:.3f}"
                shown = slider.locator(".annotation-text").first
                tab.wait_for_function(
                    "([el, label]) => el.textContent.startsWith('cut ' + label + ':')",
                    arg=[shown.element_handle(), label],
                    timeout=10_000,
                )
                return index, shown.text_content()

            rail = slider.locator(".slider-rail-rect").bounding_box()
            start = int(slider.get_attribute("aria-valuenow"))
            tab.mouse.click(rail["x"] + rail["width"] * 0.2, rail["y"] + rail["height"] / 2)  # a click on the rail
            clicked = at(start)
            assert clicked != cuts.index(CHAPTER_CUTS[0]), "the click on the rail did not move the slider"
            for _ in range(3):
                tab.keyboard.press("ArrowRight")
            seen.append(settle(clicked + 3))
            grip = slider.locator(".slider-grip-rect").bounding_box()
            tab.mouse.move(grip["x"] + grip["width"] / 2, grip["y"] + grip["height"] / 2)
            tab.mouse.down()
            tab.mouse.move(rail["x"] + rail["width"] * 0.7, grip["y"] + grip["height"] / 2, steps=8)
            tab.mouse.up()
            dragged = at(clicked + 3)
            assert dragged > clicked + 3, "the drag did not move the slider to the right"
            for _ in range(2):
                tab.keyboard.press("ArrowLeft")
            seen.append(settle(dragged - 2))
            ARTIFACTS.mkdir(exist_ok=True)
            slider.screenshot(path=str(ARTIFACTS / "book-threshold-slider-after-drag.png"))
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    for index, text in seen:
        row = sweep.at(cuts[index])
        assert slider_counts(text) == (row.bluffs, row.refused), text
    assert not outside, f"the page asked the network for {outside}"
    assert not problems, problems


@reads_the_site
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
    body = (
        '<a href="../data/corpus/04-a.md#char=1,9" title="t">[1]</a> <a href="02-dense-retrieval.html">next</a>'
        '<a href="assets/book.css">'
    )
    page = book.Page(Path("07-citations.ipynb"), "07-citations.ipynb", "07")
    out = book._project_links(body, page, settings)
    assert 'href="https://github.com/someone/course/blob/v2/data/corpus/04-a.md#char=1,9"' in out
    assert 'href="02-dense-retrieval.html"' in out and 'href="assets/book.css"' in out
    nested = book.Page(Path("exercises/ex5.ipynb"), "exercises/ex5.ipynb", "ex5")
    assert "blob/v2/data/corpus/x.md" in book._project_links('<a href="../../data/corpus/x.md">', nested, settings)
    placeholder = book.Settings("https://github.com/OWNER/ragkit", "main")  # no teacher has set the address yet
    shown = book._project_links(body, page, placeholder)
    assert shown.startswith('<a data-file="data/corpus/04-a.md" title="t">[1]</a>') and "OWNER" not in shown


# ragkit deletes only what it made: `--out` is replaced only when it holds a site the builder wrote


def tiny_book(folder: Path, *sources: str) -> list[book.Page]:
    """A one-page book (an exercise, so the README's table need not list it) whose code cells are ``sources``."""
    nb = notebook(nbformat.v4.new_markdown_cell("# Tiny"), *(nbformat.v4.new_code_cell(c) for c in sources))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "exercises" / "tiny.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return [book.Page(path, "exercises/tiny.ipynb", "Tiny")]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _thesis(out: Path) -> None:
    out.mkdir()
    (out / "thesis.tex").write_text("four years of work")
    (out / "figures").mkdir()
    (out / "figures" / "f1.pdf").write_bytes(b"%PDF")


def _home(out: Path) -> None:
    out.mkdir()
    (out / ".bashrc").write_text("export PATH")
    (out / "index.html").write_text("my own page")  # a name the book also writes


def _file(out: Path) -> None:
    out.write_text("not a folder")


def _link(out: Path) -> None:
    (out.parent / "elsewhere").mkdir()
    out.symlink_to(out.parent / "elsewhere")


@pytest.mark.parametrize("make", [_thesis, _home, _file, _link], ids=["thesis-folder", "home-folder", "file", "link"])
def test_an_out_the_builder_did_not_write_is_refused_before_any_notebook_runs(tmp_path, make):
    ran = tmp_path / "ran"
    pages = tiny_book(tmp_path / "src", f"open({str(ran)!r}, 'w').close()")
    out = tmp_path / "out"
    make(out)
    before = snapshot(tmp_path)
    with pytest.raises(book.BookError, match="--out"):
        book.build(out, book=pages)
    assert not ran.exists(), "a notebook ran before --out was checked"
    assert snapshot(tmp_path) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")], "a temporary site was left behind"


def _executed(pages: list[book.Page]) -> dict[Path, nbformat.NotebookNode]:
    """The pages' notebooks with an output each, as if run: the builder renders them without a kernel."""
    done = {}
    for page in pages:
        nb = nbformat.read(page.path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ran\n")]
        done[page.path] = nb
    return done


@pytest.fixture
def no_printer(monkeypatch):
    """A test about the site, not its PDF: no chromium prints (the printer's own tests and the course's PDFs do)."""
    from book import pdf

    monkeypatch.setattr(pdf, "chromium", lambda: None)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "no chromium to print")
        yield


@pytest.mark.usefixtures("no_printer")
def test_a_site_the_builder_wrote_is_replaced_and_a_file_added_to_it_is_kept(tmp_path):
    pages = tiny_book(tmp_path / "src", "print('ran')")
    out = tmp_path / "out"
    out.mkdir()  # an empty folder is fine
    report = book.build(out, book=pages, executed=_executed(pages))
    assert report.execute_seconds == {}
    assert "no notebook executed" in report.summary()
    marker = json.loads((out / book.MARKER).read_text())
    assert sorted(marker["files"]) == sorted(snapshot(out).keys() - {book.MARKER})
    (out / "tiny.html").write_text("stale")
    book.build(out, book=pages, executed=_executed(pages))
    assert "stale" not in (out / "tiny.html").read_text()
    (out / "notes.txt").write_text("mine")
    before = snapshot(out)
    with pytest.raises(book.BookError, match=r"did not write.*notes.txt"):
        book.build(out, book=pages, executed=_executed(pages))
    assert snapshot(out) == before


@pytest.mark.usefixtures("no_printer")
def test_a_forged_marker_deletes_nothing_outside_the_site(tmp_path):
    pages = tiny_book(tmp_path / "src", "print('ran')")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / book.MARKER).write_text(json.dumps({"format": book.MARKER_FORMAT, "files": ["../victim.txt"]}))
    book.build(out, book=pages, executed=_executed(pages))
    assert victim.read_text() == "keep me"
    assert (out / "tiny.html").is_file()


def test_a_failing_notebook_is_named_with_its_cell_and_error_not_a_traceback(tmp_path):
    pages = tiny_book(tmp_path / "src", "x = 1", "1 / 0", "print('never')")
    out = tmp_path / "out"
    with pytest.raises(book.BookError) as failed:
        book.build(out, book=pages)
    message = str(failed.value)
    assert "tiny.ipynb, cell 3 ('1 / 0'): ZeroDivisionError: division by zero" in message
    assert "Traceback" not in message and "\x1b[" not in message and "make lab" in message
    assert not out.exists()


def test_python_m_book_refuses_a_file_or_a_full_folder_at_once_and_without_a_traceback(tmp_path):
    target = tmp_path / "site.html"
    target.write_text("a file")
    _thesis(tmp_path / "mine")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for out, cwd, says in ((target, ROOT, "is a file"), (Path("."), tmp_path / "mine", "is not a book")):
        t = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "book", "--out", str(out)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 1 and says in done.stderr, done.stderr[-2000:]
        assert "Traceback" not in done.stderr
        assert time.perf_counter() - t < 60, "python -m book ran notebooks before checking --out"
    assert target.read_text() == "a file"
    assert (tmp_path / "mine" / "thesis.tex").read_text() == "four years of work"


@pytest.mark.usefixtures("no_printer")
def test_an_unset_address_shows_no_launch_button_and_is_said_once(tmp_path):
    """Issue 67, item 6: the book's Binder and Colab buttons led to github.com/OWNER/ragkit, without a word."""
    pages = tiny_book(tmp_path / "src", "print('ran')")
    lines: list[str] = []
    unset = book.Settings("https://github.com/OWNER/ragkit", "main")
    book.build(tmp_path / "out", book=pages, executed=_executed(pages), settings=unset, progress=lines.append)
    page = (tmp_path / "out" / "tiny.html").read_text()
    index = (tmp_path / "out" / "index.html").read_text()
    assert "OWNER" not in page and "mybinder.org" not in page and "colab.research" not in page
    assert "mybinder.org" not in index and "make lab" in index
    assert [line for line in lines if "make address" in line] == [f"book: {UNSET_NOTE}"]
    published = book.Settings("https://github.com/someone/course", "main")
    book.build(tmp_path / "out", book=pages, executed=_executed(pages), settings=published, progress=lines.append)
    page = (tmp_path / "out" / "tiny.html").read_text()
    assert published.binder("exercises/tiny.ipynb") in unescape(page) and "colab.research" in page
    assert len([line for line in lines if "make address" in line]) == 1
    assert "Run it with" in book._kernel_note(None) and "mybinder" not in book._kernel_note(None)


def test_the_book_says_how_far_it_has_come_notebook_by_notebook(tmp_path):
    """Issue 67, item 7: `make book` printed one line, then nothing for five minutes."""
    pages = tiny_book(tmp_path / "src", "print('ran')")
    lines: list[str] = []
    book.execute(pages, jobs=1, progress=lines.append)
    assert lines[0] == "book: running 1 notebooks, 1 at a time"
    assert re.fullmatch(r"book: ran 1 of 1, .*tiny\.ipynb in \d+ s", lines[1]), lines
