"""The built book as one PDF, in reading order: chromium prints every page once its figures and formulas are drawn.

Each page is printed on its own (so each notebook starts on a new sheet) and the sheets are joined, with an outline
entry per page. The figures print as they are drawn (plotly's vector graphics), the static slider at its default
cut, and the widgets' places keep their note that they need a kernel.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import io
import shutil
import tempfile
import threading
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

NAME = "course.pdf"
CONTENTS = "Contents"
CHROMIUM = Path("/usr/bin/chromium")
# an A4 sheet's printable width at 96 dpi, less its margins: plotly draws each figure to fit it
PRINT_WIDTH = 720
DRAWN_SECONDS = 60
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def only_from(port: int) -> list[str]:
    """Chromium's flags for a browser that reaches the loopback server on ``port`` and nothing else.

    Every other request goes to a proxy on a closed port and is refused at once. A playwright route would do it too,
    but routing turns chromium's cache off, and each page would compile plotly.js (3.5 MB) again.
    """
    return [*FLAGS, "--proxy-server=127.0.0.1:9", f"--proxy-bypass-list=<-loopback>;127.0.0.1:{port}"]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    """A static file server that keeps its request log to itself."""

    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def served(folder: Path) -> Iterator[tuple[str, int]]:
    """``folder`` on a loopback HTTP server of its own while the block runs: its address and port.

    chromium keeps the code it compiled for a page's scripts when they come over HTTP, not from file://: a page after
    the first loads without compiling plotly.js again.
    """
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(Path(folder).resolve()))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        yield f"http://127.0.0.1:{port}", port
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class Sheet(Protocol):
    """What the printer needs of a page of the book (``book.build.Page``): its outline entry and its file in the site.

    A protocol rather than an import of ``Page``: the builder calls the printer, so the printer must not import it.
    """

    @property
    def title(self) -> str: ...

    @property
    def href(self) -> str: ...


def chromium() -> Path | None:
    """The chromium that prints (Debian's, or the first on PATH), or None."""
    if CHROMIUM.exists():
        return CHROMIUM
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    return Path(found) if found else None


def wait_until_drawn(page) -> None:
    """Wait for every plotly figure of a playwright page to be drawn (book.js marks it) and MathJax to finish."""
    page.wait_for_function(
        "() => [...document.querySelectorAll('.book-plotly')].every(gd => gd.dataset.ready)",
        timeout=DRAWN_SECONDS * 1000,
    )
    page.wait_for_function(
        "() => !window.MathJax || !MathJax.Hub || new Promise(done => MathJax.Hub.Queue(() => done(true)))",
        timeout=DRAWN_SECONDS * 1000,
    )


@dataclass(frozen=True)
class Printout:
    """One PDF of the site: its sheets in the book's order, its title, file name, contents heading and index page."""

    pages: Sequence[Sheet]
    title: str
    name: str = NAME
    contents: str = CONTENTS
    index: str = "index.html"


def write(
    out: Path, pages: Sequence[Sheet], title: str, name: str = NAME, contents: str = CONTENTS, index: str = "index.html"
) -> Path | None:
    """Print the site in ``out`` (its ``index``, then every page in the book's order) to ``out/name``, titled ``title``
    (a translation's course: its own index page, file name and outline entry for the contents).

    Without a chromium there is no PDF (the HTML pages are complete without it): a warning says what to install.
    """
    return write_all(out, [Printout(pages, title, name, contents, index)])[0]


def write_all(out: Path, printouts: Sequence[Printout]) -> list[Path | None]:
    """Every printout of the site in ``out``, by one browser (``write`` prints one): the files written, in order."""
    browser_path = chromium()
    if browser_path is None:
        for printout in printouts:
            warnings.warn(
                f"no chromium to print the book's PDF with, so {out / printout.name} was not written: install it "
                "(`apt-get install chromium`) and run `make book` again",
                stacklevel=3,
            )
        return [None for _ in printouts]
    with browsing(out, browser_path, {"width": PRINT_WIDTH, "height": 1000}) as (browser, base):
        return [_print(browser, base, out, printout) for printout in printouts]


@contextlib.contextmanager
def browsing(folder: Path, executable: Path, viewport: dict[str, int]) -> Iterator[tuple[Any, str]]:
    """A headless chromium that reaches ``folder`` on its own loopback server and nothing else: the browser and the
    server's address, while the block runs.

    One profile with a disk cache for every page, each read over HTTP (see ``served``): chromium compiles plotly.js
    once, not once per page.
    """
    from playwright.sync_api import sync_playwright

    with (
        served(folder) as (base, port),
        sync_playwright() as p,
        tempfile.TemporaryDirectory(prefix="book-chromium-") as profile,
    ):
        browser = p.chromium.launch_persistent_context(
            profile,
            executable_path=str(executable),
            headless=True,
            args=only_from(port),
            viewport=viewport,  # type: ignore[arg-type]
        )
        try:
            yield browser, base
        finally:
            browser.close()


def _print(browser, base: str, out: Path, printout: Printout) -> Path:
    """One printout's sheets printed by ``browser`` from the server at ``base``, joined into ``out/name``."""
    from pypdf import PdfReader, PdfWriter

    names = [(printout.contents, printout.index), *((page.title, page.href) for page in printout.pages)]
    writer = PdfWriter()
    for heading, href in names:  # each sheet's heading, its file
        tab = browser.new_page()
        tab.goto(f"{base}/{quote(href)}")
        wait_until_drawn(tab)
        # paper has nothing to click: a reveal folded until a prediction is written is printed open
        tab.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
        tab.emulate_media(media="print")
        sheet = tab.pdf(
            format="A4",
            print_background=True,
            tagged=True,
            margin=dict(top="15mm", bottom="15mm", left="12mm", right="12mm"),
        )
        tab.close()
        start = len(writer.pages)
        writer.append(PdfReader(io.BytesIO(sheet)))
        writer.add_outline_item(title=heading, page_number=start)
    writer.add_metadata({"/Title": printout.title})
    target = out / printout.name
    with target.open("wb") as f:
        writer.write(f)
    return target
