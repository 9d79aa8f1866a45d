"""A real browser: JupyterLab runs the thresholds notebook, the slider moves by keyboard, the bluff count follows.

Debian's chromium, driven by Playwright (no browser download). Under CI=true a missing
browser fails the test; elsewhere it is skipped with a note.
"""

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import ragkit.teach.course

from conftest import ROOT

CHROMIUM = Path("/usr/bin/chromium")
NOTEBOOK = "06-thresholds.ipynb"
ARTIFACTS = ROOT / "test-artifacts"
PRESSES = 30


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing: .ci/run must install Debian's chromium package")
        pytest.skip("no /usr/bin/chromium here (apt-get install chromium); CI runs this test")
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    settings = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    # render every cell, even off-screen ones, so that the widget's elements have a size
    tracker = tmp_path / "settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(
        json.dumps({"windowingMode": "none", "autoStartDefaultKernel": True})
    )
    port, token = free_port(), secrets.token_hex(16)
    env = dict(
        os.environ,
        JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        HF_HUB_OFFLINE="1",
        # a results file of this server's own: the checks count a student's attempts there, and the run's
        # shared file holds every earlier test's attempts (the hint a test looks for stops after five)
        RAGKIT_RESULTS=str(tmp_path / "results.jsonl"),
    )
    log = open(tmp_path / "lab.log", "w")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            f"--port={port}",
            "--ServerApp.ip=127.0.0.1",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={tmp_path / 'notebooks'}",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        server.terminate()
        pytest.fail("JupyterLab did not start: " + (tmp_path / "lab.log").read_text()[-2000:])
    yield base, token
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
    log.close()


CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def launch(playwright):
    """Debian's chromium, headless, with nothing reaching for the network (this machine has none)."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)


@pytest.mark.slow
@pytest.mark.parametrize(
    "notebook, shot, words",
    [
        (NOTEBOOK, "threshold-slider-moved.png", ("bluffs:", "tighter cut")),
        (f"nl/{NOTEBOOK.replace('.ipynb', '.nl.ipynb')}", "nl-threshold-slider-moved.png", ("blufs:", "strengere cut")),
    ],
    ids=["en", "nl"],
)
def test_moving_the_slider_changes_the_bluff_count_to_ragkits(lab, notebook, shot, words):
    """The signature widget in each edition: the count follows the slider, and the Dutch 06 labels it in Dutch."""
    from playwright.sync_api import sync_playwright

    base, token = lab
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            cut_before, before, cut_after, after = drive(page, base, token, notebook)
            labels = (
                page.locator(".ragkit-bluffs").first.inner_text()
                + " "
                + page.locator(".ragkit-cut-direction").first.inner_text()
            )
        finally:
            page.screenshot(path=str(ARTIFACTS / shot), full_page=False)
            browser.close()
    expected = ragkit.teach.course.load(progress=False).sweep().at(cut_after).bluffs
    assert cut_after < cut_before
    assert after != before
    assert after == expected, f"the page shows {after} bluffs at {cut_after}, ragkit counts {expected}"
    assert all(word in labels for word in words), labels


@pytest.mark.slow
def test_the_dutch_exercise_answers_in_dutch_in_a_browser(lab, tmp_path, monkeypatch):
    """The Dutch ex2 with a too loose cut typed in: its check's verdict, notes and hint come out Dutch, as ragkit's."""
    import nbformat
    from playwright.sync_api import sync_playwright

    from ragkit.teach import exercises, language

    path = tmp_path / "notebooks" / "nl" / "exercises" / "ex2-choose-a-threshold.nl.ipynb"
    nb = nbformat.read(path, as_version=4)
    answer = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("my_cut = None"))
    answer.source = answer.source.replace("my_cut = None", "my_cut = 0.95", 1)
    nbformat.write(nb, path)
    # a first attempt, in a results file of its own: the run's file has every earlier test's attempts at ex2, and
    # after five a check gives its hint only every third attempt
    monkeypatch.setenv("RAGKIT_RESULTS", str(tmp_path / "expected.jsonl"))
    with language.speaking("nl"):
        expected = exercises.check_threshold_choice(ragkit.teach.course.load(progress=False), 0.95)
    assert not expected.passed and expected.hints
    base, token = lab
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            run_all(page, base, token, "nl/exercises/ex2-choose-a-threshold.nl.ipynb")
            feedback = page.locator(".jp-OutputArea-output", has_text="NOG NIET").first
            feedback.wait_for(timeout=600_000)
            feedback.scroll_into_view_if_needed()
            shown = feedback.inner_text()
            feedback.screenshot(path=str(ARTIFACTS / "nl-ex2-feedback.png"))
        finally:
            page.screenshot(path=str(ARTIFACTS / "nl-ex2-last.png"))
            browser.close()
    assert "tip:" in shown and expected.hints[0] in shown, shown
    assert all(" ".join(n.replace("`", "").split()) in " ".join(shown.split()) for n in expected.notes), shown


def run_all(page, base: str, token: str, notebook) -> None:
    """Open a notebook in JupyterLab, wait for its kernel, and run all its cells from the Run menu."""
    page.goto(f"{base}/lab/tree/{notebook}?token={token}")
    page.wait_for_selector(".jp-Notebook", timeout=120_000)
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=120_000)
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_text("Run All Cells", exact=True).click()


def drive(page, base: str, token: str, notebook: str = NOTEBOOK) -> tuple[float, int, float, int]:
    """Open the notebook, run all cells, move the slider with the keyboard; the readouts before and after."""
    run_all(page, base, token, notebook)
    count = page.locator(".ragkit-bluff-count").first
    count.wait_for(state="attached", timeout=600_000)
    count.scroll_into_view_if_needed()
    before = int(count.inner_text())
    readout = page.locator(".widget-readout").first
    cut_before = float(readout.inner_text())
    handle = page.locator(".noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.click()
    for _ in range(PRESSES):
        page.keyboard.press("ArrowLeft")
    page.wait_for_function(
        "(b) => document.querySelector('.ragkit-bluff-count').innerText != String(b)", arg=before, timeout=30_000
    )
    time.sleep(1)  # let the last key's update arrive
    count.scroll_into_view_if_needed()
    return cut_before, before, float(readout.inner_text()), int(count.inner_text())


TOUR = "widgets-tour.ipynb"
TOUR_CELLS = [
    "import ragkit.teach.course\nfrom ragkit.teach.lesson import widgets\nfrom ragkit.answer import answer\n"
    "course = ragkit.teach.course.load(progress=False)",
    "explorer = widgets.ChunkExplorer(course, strategy='A')\nexplorer.question.value = {qid!r}\n"
    "box = explorer.widget(); box.add_class('tour-explorer'); box",
    "duel = widgets.StrategyDuel(course.evaluation('ACE'), 'E/dense', 'A/dense', 'Hit@20')\n"
    "box = duel.widget(); box.add_class('tour-duel'); box",
    "playground = widgets.QueryPlayground(course)\nbox = playground.widget(); box.add_class('tour-playground'); box",
    "result = answer('How many test examples do I need?', course.retriever('E'))\n"
    "viewer = widgets.SourceViewer(result.citations, course.corpus)\n"
    "box = viewer.widget(); box.add_class('tour-viewer'); box",
    "from ragkit.teach.lesson.quiz import Quiz\nquiz = Quiz('06', course)\n"
    "box = quiz.widget(); box.add_class('tour-quiz'); box",
]
QUESTION = "what does the learning rate warmup do"


def write_tour(folder: Path, qid: str) -> None:
    """A notebook that shows the widgets side by side, for the browser to drive."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c.format(qid=qid)) for c in TOUR_CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, folder / TOUR)


def in_view(page, inner: str, box: str) -> bool:
    """True when the element lies inside its scroll box and the browser window (no scrolling needed to read it)."""
    return page.evaluate(
        """([inner, box]) => {
        const e = document.querySelector(inner).getBoundingClientRect(),
              b = document.querySelector(box).getBoundingClientRect();
        return e.height > 0 && e.top >= b.top - 1 && e.bottom <= b.bottom + 1
            && e.top >= 0 && e.bottom <= window.innerHeight;
    }""",
        [inner, box],
    )


@pytest.mark.slow
def test_the_widgets_in_a_browser_show_what_ragkit_computes(lab, tmp_path):
    from playwright.sync_api import sync_playwright

    from ragkit.evaluation import needle_hits

    course = ragkit.teach.course.load(progress=False)
    ids = [q.id for q in course.questions]
    carried = {s: dict(zip(ids, needle_hits(course.chunks(s), course.questions).any(axis=1))) for s in "AB"}
    qid = next(q for q, kept in carried["A"].items() if not kept)
    write_tour(tmp_path / "notebooks", qid)
    expected_b_kept = bool(carried["B"][qid])
    ev = course.evaluation("ACE")
    duel = ev.compare("E/dense", "A/dense", "Hit@1", "needle")  # the duel reads needle by needle
    r = course.retriever("E")
    bm25_top = r.bm25([QUESTION]).ranking[0, 0]
    bm25_score = f"{r.lexical.scores_many([QUESTION])[0][bm25_top]:.3f}"
    from ragkit.answer import answer

    second = answer("How many test examples do I need?", r).citations[1]
    from ragkit.teach.lesson import quiz

    asked = [q for q in quiz.questions("06", course) if not q.before_reveal]  # the questions the end's check asks
    right = next(o for o in asked[0].options if o.right)

    base, token = lab
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            run_all(page, base, token, TOUR)
            page.locator(".tour-viewer .ragkit-cited").wait_for(state="attached", timeout=600_000)

            # chunk explorer: switch A to B; the needle stays in view and B's carried overlap is drawn
            explorer = page.locator(".tour-explorer")
            explorer.locator("select").first.select_option(label="B: blind + overlap")
            page.wait_for_function(
                "() => document.querySelector('.tour-explorer .ragkit-overlap') !== null", timeout=60_000
            )
            explorer.scroll_into_view_if_needed()
            # the needle in the text (the legend above the text has marks of its own)
            page.locator(".tour-explorer .ragkit-chunk-view mark").first.scroll_into_view_if_needed()
            # the explorer's prose: the whole question first, then the verdict
            verdict = explorer.locator(".widget-html-content").nth(1).inner_text()
            assert verdict.startswith("kept" if expected_b_kept else "destroyed"), verdict
            assert in_view(page, ".tour-explorer .ragkit-chunk-view mark", ".tour-explorer .ragkit-chunk-view")
            page.screenshot(path=str(ARTIFACTS / "widget-chunk-explorer.png"))

            # strategy duel: switch the metric to Hit@1; wins and losses are ragkit's
            duel_box = page.locator(".tour-duel")
            duel_box.scroll_into_view_if_needed()
            duel_box.locator("select").nth(2).select_option(label="Hit@1")
            page.wait_for_function(
                "(w) => document.querySelector('.tour-duel').innerText.includes(w)",
                arg=f"wins {duel.test.wins}, loses {duel.test.losses}",
                timeout=60_000,
            )
            page.screenshot(path=str(ARTIFACTS / "widget-strategy-duel.png"))

            # query playground: type, click Search; the BM25 column opens with ragkit's BM25 score
            play = page.locator(".tour-playground")
            play.scroll_into_view_if_needed()
            assert "Enter" in play.locator("input[type=text]").get_attribute("placeholder")
            play.locator("input[type=text]").fill(QUESTION)
            play.get_by_role("button", name="Search").click()
            page.wait_for_function(
                "(s) => { const c = document.querySelector("
                "\".tour-playground td[data-retriever='bm25'] .ragkit-score\");"
                " return c !== null && c.innerText === s; }",
                arg=bm25_score,
                timeout=60_000,
            )
            # a second search (the text box's own submit beside the click) may still be redrawing: wait for its end
            page.wait_for_function(
                "() => document.querySelector('.tour-playground').innerText.includes('at most 4')", timeout=60_000
            )
            page.screenshot(path=str(ARTIFACTS / "widget-query-playground.png"))

            # source viewer: open source [2]; its cited range is highlighted and in view, with path and fragment
            viewer = page.locator(".tour-viewer")
            viewer.locator("select").first.select_option(index=1)
            page.wait_for_function(
                "(f) => document.querySelector('.tour-viewer .ragkit-fragment').innerText === f",
                arg=second.fragment,
                timeout=60_000,
            )
            page.locator(".tour-viewer .ragkit-cited").scroll_into_view_if_needed()
            cited = page.locator(".tour-viewer .ragkit-cited").inner_text()
            assert " ".join(cited.split()) == " ".join(second.quote.split())
            assert f"data/corpus/{second.document_id}.md" in viewer.inner_text()
            assert "verified" in viewer.inner_text()
            assert in_view(page, ".tour-viewer .ragkit-cited", ".tour-viewer .ragkit-source")
            page.screenshot(path=str(ARTIFACTS / "widget-source-viewer.png"))

            # knowledge check: answer the first question rightly, check; feedback and score are the quiz's own
            box = page.locator(".tour-quiz")
            box.scroll_into_view_if_needed()
            box.locator(".widget-radio-box").first.get_by_text(right.text, exact=True).click()
            box.get_by_role("button", name="check my answers").click()
            page.wait_for_function(
                "(s) => document.querySelector('.tour-quiz').innerText.includes(s)",
                arg=f"1 of {len(asked)} right",
                timeout=60_000,
            )
            shown = box.inner_text()
            assert "choose an option first" in shown and right.why in shown
            page.screenshot(path=str(ARTIFACTS / "widget-knowledge-check.png"))
        finally:
            page.screenshot(path=str(ARTIFACTS / "widgets-tour-last.png"))
            browser.close()


CHARTS = """() => [...document.querySelectorAll('.jp-Notebook .jp-RenderedPlotly, .jp-Notebook .js-plotly-plot')]
    .filter(r => r.classList.contains('jp-RenderedPlotly') || !r.closest('.jp-RenderedPlotly')).map(r => {
    const img = r.querySelector('img');
    return {widget: r.closest('.jupyter-widgets') !== null,
            traces: r.querySelectorAll('.trace').length,
            image: img !== null && img.src.startsWith('data:image/png') && img.naturalWidth > 0
                   && getComputedStyle(img).display !== 'none'};
})"""
"""Every plotly chart on the page (an output or a FigureWidget): inside a widget or not, the traces it draws, or the
saved picture it shows.

A saved notebook's plain figure comes back as the picture plotly saved with it until it is drawn anew."""


def ran(page) -> None:
    """Wait until every code cell has run (a hidden input shows no prompt) and the kernel is idle."""
    page.wait_for_function(
        "() => { const p = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(e => e.innerText);"
        " return p.length > 0 && p.filter(t => t).every(t => /\\[\\d+\\]/.test(t)); }",
        timeout=600_000,
    )
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=120_000)


@pytest.mark.slow
@pytest.mark.parametrize("notebook", [NOTEBOOK, "exercises/ex2-choose-a-threshold.ipynb"], ids=["06", "ex2"])
def test_every_chart_is_drawn_again_after_a_reload(lab, notebook):
    """Run all, save, reload the page: each chart comes back with its data, the explorer's histogram among them."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    base, token = lab
    ARTIFACTS.mkdir(exist_ok=True)
    failed: list[str] = []
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("console", lambda m: failed.append(m.text) if "Failed to initialize" in m.text else None)
        stem = Path(notebook).stem
        try:
            run_all(page, base, token, notebook)
            ran(page)
            page.locator(".ragkit-bluff-count").first.wait_for(state="attached", timeout=60_000)
            time.sleep(2)  # let the last charts draw
            before = page.evaluate(CHARTS)
            page.locator(".jp-Notebook").first.click()
            page.keyboard.press("Control+s")
            page.wait_for_function("() => !document.querySelector('.jp-mod-dirty')", timeout=30_000)
            page.reload()
            page.wait_for_selector(".jp-Notebook", timeout=120_000)
            page.locator(".ragkit-bluff-count").first.wait_for(state="attached", timeout=120_000)
            drawn = f"() => ({CHARTS})().filter(c => c.traces > 0 || c.image).length >= {len(before)}"
            with contextlib.suppress(PlaywrightTimeout):  # the widgets' views come back from the kernel's models
                page.wait_for_function(drawn, timeout=60_000)
            after = page.evaluate(CHARTS)
            page.locator(".ragkit-bluff-count").first.scroll_into_view_if_needed()
            page.screenshot(path=str(ARTIFACTS / f"reloaded-{stem}.png"))
        finally:
            browser.close()
    assert any(c["widget"] for c in before), f"{notebook} shows no chart inside a widget: {before}"
    assert all(c["traces"] for c in before), f"{notebook} drew an empty chart before the reload: {before}"
    assert len(after) == len(before), f"{notebook} shows {len(after)} charts after the reload, {len(before)} before"
    empty = [n for n, c in enumerate(after, 1) if not (c["traces"] or c["image"])]
    assert not empty, f"after the reload {notebook}'s charts {empty} (of {len(after)}) are empty plots: {after}"
    assert [c["traces"] for c in after if c["widget"]] == [c["traces"] for c in before if c["widget"]], after
    assert not failed, failed
