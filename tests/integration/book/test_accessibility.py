"""Accessibility: axe-core finds nothing serious on any page of the book, every figure says in words what it shows,
colour never carries meaning alone, the palette stays apart under colour-vision deficiencies, and the course prints
to one PDF in reading order.

The pages come from test_book's ``site`` fixture: the book is built once per run, from the notebooks executed once.
"""

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import threading
import unicodedata
from pathlib import Path

import nbformat
import numpy as np
import pytest
from test_book import reads_the_site, site  # noqa: F401  (the fixture, shared with test_book)
from test_browser import CHROMIUM

import ragkit.teach.course
from book import build, pdf
from book.labels import LABELS
from ragkit.teach.lesson import plots
from ragkit.threshold import CHAPTER_CUTS

from conftest import ROOT

AXE_VERSION = "4.10.3"
AXE_DIR = ROOT / "build" / "node"
AXE = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
# The rules axe runs: every WCAG 2.0, 2.1 and 2.2 level A and AA rule it has (axe's own tags for them).
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
FORBIDDEN = {"serious", "critical"}


def install_axe() -> Path:
    """axe-core at the pinned version in build/node (ignored by git), installed by npm the first time."""
    installed = AXE_DIR / "node_modules" / "axe-core" / "package.json"
    if installed.is_file() and json.loads(installed.read_text())["version"] == AXE_VERSION:
        return AXE
    if shutil.which("npm") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("npm is missing: .ci/run must install Debian's npm package (it installs axe-core)")
        pytest.skip("no npm here (apt-get install npm): axe-core cannot be installed; CI runs this test")
    AXE_DIR.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["npm", "install", "--prefix", str(AXE_DIR), "--no-audit", "--no-fund", "--no-save", f"axe-core@{AXE_VERSION}"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        pytest.fail(f"npm could not install axe-core@{AXE_VERSION}: {done.stderr[-1000:]}")
    return AXE


def axe_pages(folder: Path, axe: Path) -> dict[str, list[dict]]:
    """axe-core's violations on every page of a built book, by file name, each page drawn first (figures, formulas)."""

    results: dict[str, list[dict]] = {}
    # book.pdf's browser: the pages over HTTP from the one server it may reach (not a playwright route, which turns
    # the cache off), so chromium compiles plotly.js once
    with pdf.browsing(folder, CHROMIUM, {"width": 1200, "height": 900}) as (browser, base):
        for name in sorted(f.name for f in folder.glob("*.html")):
            page = browser.new_page()
            page.goto(f"{base}/{name}")
            pdf.wait_until_drawn(page)
            page.add_script_tag(path=str(axe))
            found = page.evaluate(
                "(tags) => axe.run(document, {runOnly: {type: 'tag', values: tags}, "
                "resultTypes: ['violations']}).then(r => r.violations.map(v => ({id: v.id, "
                "impact: v.impact, nodes: v.nodes.length, "
                "where: v.nodes.slice(0, 3).map(n => n.target.join(' '))})))",
                AXE_TAGS,
            )
            results[name] = found
            page.close()
    return results


def summary(results: dict[str, list[dict]]) -> str:
    """One line per page: each violated rule, its impact and how many elements."""
    return "\n".join(
        f"{name}: " + (", ".join(f"{v['id']} ({v['impact']}, {v['nodes']})" for v in found) or "none")
        for name, found in results.items()
    )


@pytest.fixture(scope="module")
def browser_ready():
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing: .ci/run must install Debian's chromium package")
        pytest.skip("no /usr/bin/chromium here (apt-get install chromium); CI runs this test")


@reads_the_site
def test_axe_finds_no_serious_or_critical_violation_on_any_page(site, browser_ready):  # noqa: F811
    results = axe_pages(site.out, install_axe())
    print("\naxe-core " + AXE_VERSION + ", tags " + ", ".join(AXE_TAGS) + ":\n" + summary(results))
    indexes = {LABELS[language]["index"] for language in {p.language for p in site.pages}}  # index.nl.html too
    assert set(results) == {*indexes, build.BIBLIOGRAPHY, *(p.href for p in site.pages)}
    bad = {name: [v for v in found if v["impact"] in FORBIDDEN] for name, found in results.items()}
    assert not any(bad.values()), summary({k: v for k, v in bad.items() if v})


# every figure says what it shows


def test_a_page_captions_each_figure_with_its_text_once():
    import nbformat

    from book import build as book

    fig = plots.needle_cuts([("q1", 10, 50), ("q2", 480, 60)], size=512)
    code = nbformat.v4.new_code_cell("plots.needle_cuts(windows)")
    code.outputs = [
        nbformat.v4.new_output("display_data", {book.PLOTLY: fig.to_plotly_json()}),
        nbformat.v4.new_output(
            "display_data", {"text/markdown": plots.caption(fig.description), "text/plain": "<Markdown>"}
        ),
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [code]
    page = book.Page(Path("x.ipynb"), "x.ipynb", "x")
    outputs = book.prepare(nb, page, book.Settings.load()).cells[0].outputs
    assert len(outputs) == 1, "the figure's sentence is shown twice"
    shown = outputs[0].data["text/html"].split("<script")[0]  # the figure's JSON carries its text for book.js
    assert shown.count("1 of 2 run past it") == 1 and 'aria-describedby="figure-1-text"' in shown
    assert '<figcaption class="book-figure-text" id="figure-1-text">' in shown


@pytest.fixture(scope="module")
def course():
    return ragkit.teach.course.load(progress=False)


@pytest.fixture(scope="module")
def sweep(course):
    return course.sweep("E", "dense")


def numbers(text: str) -> list[str]:
    return re.findall(r"\d+(?:\.\d+)?", text)


@pytest.mark.slow  # the course's vectors
def test_the_histograms_text_gives_the_counts_ragkit_computes_at_the_cut(sweep):
    fig = plots.distance_histogram(sweep, CHAPTER_CUTS[0])
    row = sweep.at(CHAPTER_CUTS[0])
    text = fig.description
    assert f"{row.bluffs} of {row.out_of_domain} out-of-domain" in text
    assert f"{row.refused} of {row.in_domain} answerable" in text
    assert f"{CHAPTER_CUTS[0]:.3f}" in text and f"{np.median(sweep.nearest_out):.3f}" in text
    slider = plots.threshold_slider(sweep)
    # the slider's text says where its line starts (it moves), with the same counts as the still figure's
    assert slider.description.startswith(plots.thresholds.histogram_text(sweep, CHAPTER_CUTS[0], start=True))
    assert "The slider starts on the cut at" in slider.description and "The dashed line marks" in text
    assert f"{row.bluffs} of {row.out_of_domain} out-of-domain" in slider.description
    assert plots.describe(slider.to_plotly_json()) == slider.description  # it survives into the notebook's JSON


@pytest.mark.slow  # the course's vectors
def test_the_bluff_curves_text_follows_the_sweep(sweep):
    rows = sorted((r for r in sweep.rows() if r.cut is not None), key=lambda r: r.cut)  # left to right: looser
    text = plots.bluffs_and_refusals(sweep).description
    assert f"{rows[0].bluffs} of {rows[0].out_of_domain} out-of-domain queries to {rows[-1].bluffs}" in text
    assert f"from {rows[0].refused} of {rows[0].in_domain} to {rows[-1].refused}" in text


def test_the_needle_figures_text_counts_the_destroyed_ones():
    spans = [("q1", 10, 50), ("q2", 480, 60), ("q3", 0, 512), ("q4", 500, 13)]
    fig = plots.needle_cuts(spans, size=512)
    assert "2 of 4 run past it" in fig.description and "q2, q4" in fig.description
    assert "2 are kept whole" in fig.description
    kinds = {t.legendgroup: (t.line.dash, t.marker.symbol) for t in fig.data}
    assert kinds["destroyed"] != kinds["kept"], "kept and destroyed differ by colour only"


@pytest.mark.slow  # the course's vectors
def test_the_recall_and_win_loss_texts_give_ragkits_numbers(course):
    ev = course.evaluation()
    text = plots.recall_curves(ev, "dense").description
    for r in ev.results.values():
        if r.retriever == "dense":
            hits = int(((r.ranks > 0) & (r.ranks <= 20)).sum())
            assert f"{r.strategy} finds the needle for {hits} of {len(r.ranks)} queries at k = 20" in text
    matrix = plots.win_loss_matrix(ev, "Hit@20", "dense")
    net = np.array(matrix.data[0].z)
    assert f"{net.max():+.0f}" in matrix.description and "Holm" in matrix.description


def test_a_figure_without_a_description_is_named_by_its_title():
    import plotly.graph_objects as go

    assert plots.describe(go.Figure(layout=dict(title="Some plot"))) == "A figure titled “Some plot”."
    assert plots.describe(plots.described(go.Figure(), "Two dots.")) == "Two dots."


@pytest.mark.slow  # the course's vectors
def test_lines_and_bars_differ_by_more_than_colour(sweep, course):
    hist = plots.distance_histogram(sweep)
    assert len({t.marker.pattern.shape for t in hist.data}) == len(hist.data), "the histograms differ by colour only"
    curves = plots.bluffs_and_refusals(sweep)
    assert len({(t.line.dash, t.marker.symbol) for t in curves.data}) == len(curves.data)
    recall = [t for t in plots.recall_curves(course.evaluation(), "dense").data if t.mode == "lines+markers"]
    assert len({t.marker.symbol for t in recall}) == len(recall), "two strategies share a marker"


# the palette under colour-vision deficiencies: Machado, Oliveira and Fernandes (2009), severity 1, on linear RGB

MACHADO = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}
MIN_DELTA_E = 20.0
"""The smallest CIE76 distance allowed between two colours of one figure, for normal vision and each deficiency."""
MIN_DELTA_E_MARKED = 15.0
"""The same for the recall curves: six lines that also differ by marker and dash (tested above)."""


def linear(hex_colour: str) -> np.ndarray:
    srgb = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def lab(rgb_linear: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of a linear sRGB colour."""
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ rgb_linear
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def seen(hex_colour: str, deficiency: str | None) -> np.ndarray:
    rgb = linear(hex_colour)
    if deficiency:
        rgb = np.clip(np.array(MACHADO[deficiency]) @ rgb, 0, 1)
    return lab(rgb)


def closest_pair(colours: list[str], deficiency: str | None) -> tuple[float, str, str]:
    return min(
        (float(np.linalg.norm(seen(a, deficiency) - seen(b, deficiency))), a, b)
        for i, a in enumerate(colours)
        for b in colours[i + 1 :]
    )


FIGURE_PALETTES = {
    "recall curves": (list(plots.COLOURS.values()), MIN_DELTA_E_MARKED),
    "distance histogram": ([plots.IN_DOMAIN_COLOUR, plots.OUT_OF_DOMAIN_COLOUR], MIN_DELTA_E),
    "bluffs and refusals": ([plots.OUT_OF_DOMAIN_COLOUR, plots.IN_DOMAIN_COLOUR, plots.KEPT_COLOUR], MIN_DELTA_E),
    "needle cuts": ([plots.KEPT_COLOUR, plots.DESTROYED_COLOUR], MIN_DELTA_E),
}


@pytest.mark.parametrize("deficiency", [None, *MACHADO])
@pytest.mark.parametrize("figure", FIGURE_PALETTES)
def test_each_figures_colours_stay_apart_under_colour_vision_deficiencies(figure, deficiency):
    colours, least = FIGURE_PALETTES[figure]
    distance, a, b = closest_pair(colours, deficiency)
    assert distance >= least, f"{figure}: {a} and {b} are {distance:.1f} apart under {deficiency or 'normal'}"


def test_the_simulation_is_machados():
    """Their matrices keep white white, and deuteranopia folds red and green (the known confusion) together."""
    for matrix in MACHADO.values():
        assert np.allclose(np.array(matrix) @ np.ones(3), 1, atol=1e-3)
    normal = np.linalg.norm(seen("#FF0000", None) - seen("#00A000", None))
    assert np.linalg.norm(seen("#FF0000", "deuteranopia") - seen("#00A000", "deuteranopia")) < normal / 3


# the course on paper


@reads_the_site
def test_the_book_prints_to_one_pdf_in_reading_order_with_every_title(site):  # noqa: F811
    from pypdf import PdfReader

    path = site.out / pdf.NAME
    if pdf.chromium() is None and os.environ.get("CI") != "true":
        pytest.skip("no chromium here (apt-get install chromium), so the book has no PDF; CI runs this test")
    assert path.is_file(), "the book wrote no PDF"
    reader = PdfReader(path)
    outline = [(item.title, reader.get_destination_page_number(item)) for item in reader.outline]
    english = [p for p in site.pages if p.language == "en"]  # the PDF is the English course; the Dutch pilot is online
    sources = build.bibliography()[0].title  # the bibliography's page, printed last
    assert [title for title, _ in outline] == [pdf.CONTENTS, *(p.title for p in english), sources]
    starts = [page for _, page in outline]
    assert starts == sorted(starts) and len(set(starts)) == len(starts), "the pages are not in reading order"
    assert len(reader.pages) > starts[-1] >= len(english), f"{len(reader.pages)} pages for {len(english)}"
    flat = lambda text: re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text))  # noqa: E731  (ligatures: ﬀ is ff)
    for (title, start), end in zip(outline[1:], [*starts[2:], len(reader.pages)], strict=True):
        assert flat(title) in flat(reader.pages[start].extract_text()), f"{title} does not open page {start + 1}"
        if "06" in title:
            text = flat(" ".join(reader.pages[i].extract_text() for i in range(start, end)))
            row = ragkit.teach.course.load(progress=False).sweep("E", "dense").at(CHAPTER_CUTS[0])
            assert f"cut {CHAPTER_CUTS[0]:.3f}: bluffs {row.bluffs} / {row.out_of_domain}" in text, (
                "the static slider is not printed at its default cut"
            )
            assert "needs a running Python kernel" in text, "a widget's place does not say it needs a kernel"
            assert "cosine distance to the nearest chunk" in text, "06's figures are not drawn in the PDF"
            assert "Histograms of each query's cosine distance" in text, "06's figures are printed without their text"
    print(f"\n{path}: {len(reader.pages)} pages, {path.stat().st_size / 1e6:.1f} MB")


@reads_the_site
def test_the_dutch_course_prints_to_its_own_pdf_in_dutch(site):  # noqa: F811
    from pypdf import PdfReader

    from dutch import dutch_share

    path = site.out / LABELS["nl"]["pdf"]
    if pdf.chromium() is None and os.environ.get("CI") != "true":
        pytest.skip("no chromium here (apt-get install chromium), so the book has no PDF; CI runs this test")
    assert path.is_file(), "the book wrote no Dutch PDF"
    reader = PdfReader(path)
    outline = [(item.title, reader.get_destination_page_number(item)) for item in reader.outline]
    dutch = [p for p in site.pages if p.language == "nl"]
    assert [title for title, _ in outline] == [
        LABELS["nl"]["contents"],
        *(p.title for p in dutch),
        build.bibliography()[0].title,
    ]
    assert reader.metadata.title == LABELS["nl"]["site_title"]
    starts = [page for _, page in outline]
    assert starts == sorted(starts) and len(set(starts)) == len(starts), "the pages are not in reading order"
    first = reader.pages[0].extract_text()  # the Dutch index: Dutch headings, not the English index
    assert "De notebooks" in first and "Oefeningen" in first and "The notebooks" not in first
    english_pages = []
    for page, (title, start), end in zip(dutch, outline[1:-1], starts[2:], strict=True):
        code = "\n".join(c.source for c in nbformat.read(page.path, as_version=4).cells if c.cell_type == "code")
        text = " ".join(reader.pages[i].extract_text() for i in range(start, end))
        share = dutch_share(unquoted(text, code))
        if share is not None and share < 0.8:
            english_pages.append(f"{title}: {share:.0%}")
    assert not english_pages, f"pages of the Dutch PDF whose function words are not 80% Dutch: {english_pages}"


QUOTED_RUN = 5
"""Words in a row that a page shares with English written to stay English, read as quoted: not the page's prose."""


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9à-ÿ]+", unicodedata.normalize("NFKC", text).lower())  # NFKC: the PDF's ﬁ is fi


def _runs(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + QUOTED_RUN]) for i in range(len(words) - QUOTED_RUN + 1)}


@functools.cache
def _english_by_design() -> frozenset[tuple[str, ...]]:
    """Every run of words of what stays English in the Dutch course: the corpus, its queries, needles and tickets,
    the prompt the engine writes for a model, and the bibliography's titles."""
    files = [
        *sorted((ROOT / "data" / "corpus").glob("*.md")),
        ROOT / "data" / "questions.jsonl",
        ROOT / "data" / "out_of_domain.jsonl",
        ROOT / "ragkit" / "citations.py",
        ROOT / "docs" / "sources.md",
    ]
    return frozenset(_runs(_words("\n".join(f.read_text(encoding="utf-8") for f in files))))


def unquoted(text: str, code: str) -> str:
    """``text``'s words less every run of QUOTED_RUN that the corpus, the prompt, the titles or the page's ``code``
    (English by design) also has: what is left is the page's own prose (its narration, tables' words, feedback)."""
    words = _words(text)
    quoted = _english_by_design() | _runs(_words(code))
    keep = [True] * len(words)
    for i in range(len(words) - QUOTED_RUN + 1):
        if tuple(words[i : i + QUOTED_RUN]) in quoted:
            keep[i : i + QUOTED_RUN] = [False] * QUOTED_RUN
    return " ".join(w for w, k in zip(words, keep) if k)


def test_unquoted_keeps_the_prose_and_drops_quoted_corpus_text_and_code():
    question = json.loads((ROOT / "data" / "questions.jsonl").read_text().splitlines()[0])["question"]
    text = f"De vraag {question} vindt zijn needle. In [3]: print(result.prompt) and then we go home"
    left = unquoted(text, "print(result.prompt)")  # three words of code: too few to be read as quoted
    assert left == "de vraag vindt zijn needle in 3 print result prompt and then we go home"
    assert unquoted("the one rule against what it claims", "") == "the one rule against what it claims"


def test_without_chromium_the_book_warns_and_writes_no_pdf(tmp_path, monkeypatch):
    monkeypatch.setattr(pdf, "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.setattr(pdf.shutil, "which", lambda name: None)
    with pytest.warns(UserWarning, match="apt-get install chromium"):
        assert pdf.write(tmp_path, [], "a book") is None
    assert not (tmp_path / pdf.NAME).exists()


@pytest.mark.slow
def test_a_pdf_is_written_under_the_name_asked_for_with_its_outline(tmp_path, browser_ready):
    """The printer's outline titles are not its file name (the last page's title, "Sources", once named both PDFs)."""
    (tmp_path / "index.nl.html").write_text('<html lang="nl"><body><h1>Inhoud</h1></body></html>')
    (tmp_path / "a.nl.html").write_text('<html lang="nl"><body><h1>Bronnen</h1></body></html>')
    sheet = build.Sheet("Bronnen", "a.nl.html")
    target = pdf.write(tmp_path, [sheet], "Titel", name="course.nl.pdf", contents="Inhoud", index="index.nl.html")
    from pypdf import PdfReader

    assert target == tmp_path / "course.nl.pdf" and target.is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.nl.html", "course.nl.pdf", "index.nl.html"]
    reader = PdfReader(target)
    assert [item.title for item in reader.outline] == ["Inhoud", "Bronnen"] and reader.metadata.title == "Titel"


@pytest.mark.slow
def test_the_printer_reaches_only_the_books_own_server(tmp_path, browser_ready):
    """The sheets come over HTTP from the printer's own server; a page's request anywhere else (another loopback port
    included) is refused, and the sheet is printed all the same."""
    asked: list[str] = []

    class Recording(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    secret = tmp_path.parent / "teachers-secret.txt"  # a file beside the site: a page may not print it
    secret.write_text("CANARY-7731")
    elsewhere = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recording)
    threading.Thread(target=elsewhere.serve_forever, daemon=True).start()
    try:
        outside = f"http://127.0.0.1:{elsewhere.server_address[1]}"
        (tmp_path / "index.html").write_text(
            f'<html lang="en"><body><h1>Contents</h1><img src="{outside}/img.png" alt="x">'
            f'<script src="{outside}/x.js"></script><script src="https://example.org/y.js"></script>'
            f'<iframe src="{secret.as_uri()}"></iframe></body></html>'
        )
        target = pdf.write(tmp_path, [], "a book")
    finally:
        elsewhere.shutdown()
        elsewhere.server_close()
    assert target is not None and target.is_file()
    assert asked == [], f"the printer reached another server: {asked}"
    from pypdf import PdfReader

    assert "CANARY" not in "".join(page.extract_text() for page in PdfReader(target).pages)
