"""Execute the notebooks and turn them into pages: nbconvert's lab template, with every script shipped locally."""

from __future__ import annotations

import asyncio
import copy
import html
import itertools
import json
import os
import posixpath
import re
import shutil
import tempfile
import time
import tomllib
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast
from urllib.parse import quote, unquote

import jinja2
import nbformat
import plotly
import zmq
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.paths import jupyter_runtime_dir
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from nbconvert import HTMLExporter

from book import pdf
from book.labels import LABELS, NAMES, SOURCE, TRANSLATIONS
from ragkit.errors import RagkitError
from ragkit.teach import language
from ragkit.teach.classroom.address import UNSET, UNSET_NOTE
from ragkit.teach.lesson import plots

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NOTEBOOKS = ROOT / "notebooks"
SETTINGS = HERE / "book.toml"
SITE_TITLE = LABELS[SOURCE]["site_title"]
PLOTLY = "application/vnd.plotly.v1+json"
WIDGET = "application/vnd.jupyter.widget-view+json"
OBJECTIVES = re.compile(r"(#{1,6}\s*|\*\*)(learning objectives|objectives|what you will learn|leerdoelen)\b", re.I)
OBJECTIVES_TAG = "book-objectives"
# tqdm's text form of a progress bar ("Batches: 100%|####| 134/134 [00:05<00:00, ...]"): nothing to show on a page
PROGRESS = re.compile(r"\|\s*\d+/\d+ \[")
MATHJAX = "assets/mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
MARKDOWN = MarkdownIt("commonmark").enable("table")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
SOURCES = ROOT / "docs" / "sources.md"
"""The course's bibliography: every notebook's closing Sources cell names its works by their keys there."""
MARKER = ".ragkit-book"
"""The file that says a folder is a site this builder wrote, and lists every file in it (nothing else is deleted)."""
MARKER_FORMAT = "ragkit-book-1"


class BookError(RagkitError):
    """The book could not be built."""


@dataclass(frozen=True)
class Settings:
    """Where the course is published (book/book.toml): Binder and source links come from here."""

    repository: str
    branch: str

    @classmethod
    def load(cls, path: Path = SETTINGS) -> Settings:
        """Read the settings file."""
        data = tomllib.loads(path.read_text())
        if not re.fullmatch(r"https://github\.com/[^/]+/[^/]+", data["repository"]):
            raise BookError(
                f"repository {data['repository']!r} in {path} is not a GitHub address: "
                "write it as https://github.com/OWNER/NAME (Binder builds from GitHub)"
            )
        return cls(data["repository"].rstrip("/"), data["branch"])

    @property
    def published(self) -> bool:
        """Whether a teacher has set the address: until then Binder, Colab and the source would lead nowhere."""
        return UNSET not in self.repository

    def binder(self, rel: str) -> str:
        """The notebook opened in JupyterLab on mybinder.org: the student's copy, through ragkit's workspace link."""
        slug = self.repository.removeprefix("https://github.com/")
        return (
            f"https://mybinder.org/v2/gh/{slug}/{quote(self.branch, safe='')}"
            f"?urlpath={quote('ragkit/workspace?open=' + quote(rel, safe='/'), safe='')}"
        )

    def colab(self, rel: str) -> str:
        """The notebook opened on Google Colab, from the repository's copy at ``branch``."""
        return "https://colab.research.google.com/github/" + self.blob(f"notebooks/{rel}").removeprefix(
            "https://github.com/"
        )

    def source(self, rel: str) -> str:
        """The notebook's source in the repository."""
        return self.blob(f"notebooks/{rel}")

    def blob(self, path: str) -> str:
        """Any file of the repository, by its path from the repository's root."""
        return f"{self.repository}/blob/{quote(self.branch)}/{quote(path)}"


@dataclass(frozen=True)
class Page:
    """One notebook and the page it becomes."""

    path: Path
    rel: str
    title: str

    @property
    def language(self) -> str:
        """The notebook's language: a translation lives under notebooks/<language>/, the English one does not."""
        first = self.rel.split("/", 1)[0]
        return first if first in TRANSLATIONS and "/" in self.rel else SOURCE

    @property
    def original(self) -> str:
        """The English notebook this one translates (its own rel for an English page)."""
        if self.language == SOURCE:
            return self.rel
        # a translation is named after its original with the language before .ipynb (06-thresholds.nl.ipynb)
        return self.rel.split("/", 1)[1].replace(f".{self.language}.ipynb", ".ipynb")

    @property
    def href(self) -> str:
        """The page's file name: flat, so that every page finds assets/ beside it (``06-thresholds.nl.html``)."""
        name = Path(self.original).with_suffix(".html").name
        return name if self.language == SOURCE else name.removesuffix(".html") + f".{self.language}.html"

    @property
    def download(self) -> str:
        """Where the site keeps a copy of the notebook without outputs."""
        return "notebooks/" + self.rel


@dataclass(frozen=True)
class Sheet:
    """A page of the site that is no notebook (the bibliography): its title and file, as the PDF's outline needs."""

    title: str
    href: str


BIBLIOGRAPHY = "sources.html"
"""The bibliography's page: docs/sources.md rendered, linked from the landing page and printed last in the PDF."""


@dataclass(frozen=True)
class BookBuild:
    """What a build did and how long it took."""

    out: Path
    pages: list[Page]
    execute_seconds: dict[str, float]
    render_seconds: float
    total_seconds: float

    def size(self) -> int:
        """Bytes on disk under the site folder."""
        return sum(p.stat().st_size for p in self.out.rglob("*") if p.is_file())

    def summary(self) -> str:
        """A few lines for people."""
        ran = "no notebook executed (all given with their outputs)"
        if self.execute_seconds:
            slowest = max(self.execute_seconds, key=lambda rel: self.execute_seconds[rel])
            ran = (
                f"executing {sum(self.execute_seconds.values()):.1f} s of notebook time "
                f"(slowest {slowest} {self.execute_seconds[slowest]:.1f} s)"
            )
        return (
            f"book: {len(self.pages)} pages in {self.out} ({self.size() / 1e6:.1f} MB) in "
            f"{self.total_seconds:.1f} s: {ran}, rendering {self.render_seconds:.1f} s"
        )


def _heading(tokens: list) -> str | None:
    """The first level-one heading of parsed markdown, or None."""
    for opening, inline in itertools.pairwise(tokens):
        if opening.type == "heading_open" and opening.tag == "h1":
            return inline.content
    return None


def title_of(nb: nbformat.NotebookNode, fallback: str) -> str:
    """The notebook's first level-one heading."""
    for cell in nb.cells:
        if cell.cell_type == "markdown" and (heading := _heading(MARKDOWN.parse(cell.source))) is not None:
            return heading
    return fallback


def pages(notebooks: Path = NOTEBOOKS) -> list[Page]:
    """Every main notebook, then every exercise, in order (solutions stay off the site); then each translation's.

    A translation is ``notebooks/<language>/`` (``nl/00-start-here.nl.ipynb``, ``nl/exercises/...``): its pages follow
    the English ones, in the same order.
    """
    folders = [notebooks, *(notebooks / language for language in TRANSLATIONS)]
    paths = [
        p for folder in folders for p in sorted(folder.glob("*.ipynb")) + sorted((folder / "exercises").glob("*.ipynb"))
    ]
    out = []
    for path in paths:
        rel = path.relative_to(notebooks).as_posix()
        out.append(Page(path, rel, title_of(nbformat.read(path, as_version=4), path.stem)))
    return out


def counterparts(page: Page, book: Sequence[Page]) -> list[dict[str, str]]:
    """The same page in the book's other languages: each as its language's code, own name and href."""
    return [
        {
            "language": other.language,
            "name": NAMES[other.language],
            "href": other.href,
            "label": LABELS[other.language]["switch"],
        }
        for other in book
        if other.original == page.original and other.language != page.language
    ]


@dataclass(frozen=True)
class Execution:
    """One notebook run top to bottom on a fresh kernel: the notebook with its outputs, or why it failed."""

    path: Path
    notebook: nbformat.NotebookNode
    seconds: float
    error: str | None = None


def _failure(path: Path, nb: nbformat.NotebookNode, exc: Exception) -> str:
    """Which cell failed and with what error, in one line a teacher can act on (no traceback)."""
    where = next(
        (
            i
            for i, c in enumerate(nb.cells, 1)
            if c.cell_type == "code" and any(o.get("output_type") == "error" for o in c.get("outputs", []))
        ),
        None,
    )
    if where is None:  # a timeout or a dead kernel leaves no error output: the last cell the kernel started is it
        started = [i for i, c in enumerate(nb.cells, 1) if c.cell_type == "code" and c.get("execution_count")]
        where = started[-1] if started else None
    if isinstance(exc, CellExecutionError):
        error = f"{exc.ename}: {exc.evalue}"
    else:
        error = f"{type(exc).__name__}: {exc}"
    error = ANSI.sub("", error).strip().splitlines()[0][:300] if error.strip() else type(exc).__name__
    cell = "" if where is None else f", cell {where} ({nb.cells[where - 1].source.strip().splitlines()[0][:60]!r})"
    return f"{_shown(path)}{cell}: {error}"


def _shown(path: Path) -> str:
    """A notebook's name as a reader finds it: from notebooks/ when it lives there."""
    try:
        return path.relative_to(NOTEBOOKS).as_posix()
    except ValueError:
        return str(path)


def local_kernel() -> AsyncKernelManager:
    """A python3 kernel spoken to over unix sockets in Jupyter's runtime folder (TCP where the system has none).

    Over TCP, ipykernel prints "Kernel is running over TCP without encryption" on stderr for every kernel: 14
    times in the terminal during a `make book`. A kernel on this machine needs no network port at all.
    """
    if not zmq.has("ipc"):
        return AsyncKernelManager(kernel_name="python3")
    runtime = Path(jupyter_runtime_dir())
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    # the socket files' prefix: short (a unix socket's path has about 100 bytes), never in the project folder
    prefix = runtime / f"ragkit-{uuid.uuid4().hex[:12]}"
    return AsyncKernelManager(kernel_name="python3", transport="ipc", ip=str(prefix))


async def _execute(path: Path, limit: asyncio.Semaphore) -> Execution:
    async with limit:
        nb = nbformat.read(path, as_version=4)
        t = time.perf_counter()
        client = NotebookClient(nb, timeout=900, km=local_kernel(), resources={"metadata": {"path": str(path.parent)}})
        try:
            # given its kernel manager, nbclient would leave the kernel running: shut it down (sockets removed)
            await client.async_execute(cleanup_kc=True)
        except (CellExecutionError, CellTimeoutError, DeadKernelError) as exc:
            return Execution(path, nb, time.perf_counter() - t, _failure(path, nb, exc))
        return Execution(path, nb, time.perf_counter() - t)


Progress = Callable[[str], None]
"""Where a build says how far it has come: one line per notebook run (``print`` in ``python -m book``)."""


def run_notebooks(paths: Sequence[Path], jobs: int = 2, progress: Progress | None = None) -> dict[Path, Execution]:
    """Run each notebook top to bottom on a fresh kernel, ``jobs`` at a time; a failure is recorded, not raised;
    ``progress`` hears of each notebook as it finishes."""
    done = 0

    async def run_one(path: Path, limit: asyncio.Semaphore) -> Execution:
        nonlocal done
        run = await _execute(path, limit)
        done += 1
        if progress is not None:
            failed = " FAILED" if run.error else ""
            progress(f"book: ran {done} of {len(paths)}, {_shown(path)} in {run.seconds:.0f} s{failed}")
        return run

    async def run_all() -> list[Execution]:
        limit = asyncio.Semaphore(jobs)
        return await asyncio.gather(*(run_one(p, limit) for p in paths))

    return {run.path: run for run in asyncio.run(run_all())}


def execute(book: list[Page], jobs: int = 2, progress: Progress | None = None) -> dict[Path, Execution]:
    """Run every page's notebook; a BookError naming each failed notebook, its cell and its error."""
    if progress is not None and book:
        progress(f"book: running {len(book)} notebooks, {jobs} at a time")
    runs = run_notebooks([p.path for p in book], jobs, progress)
    failed = [run.error for run in runs.values() if run.error]
    if failed:
        raise BookError(
            "a notebook failed while the book was executing it:\n  "
            + "\n  ".join(failed)
            + "\nRun it in JupyterLab (`make lab`), fix it, then `make book` again"
        )
    return runs


def _figure_html(figure: dict, number: int) -> str:
    """A plotly figure as a div and its JSON, captioned by its text alternative; assets/book.js draws it."""
    name = f"figure-{number}"
    data = json.dumps(figure).replace("</", "<\\/")
    text = html.escape(plots.describe(figure))
    return (
        f'<figure class="book-figure">'
        f'<div class="book-plotly" data-figure="{name}" aria-describedby="{name}-text"></div>'
        f'<figcaption class="book-figure-text" id="{name}-text">{text}</figcaption></figure>'
        f'<script type="application/json" id="{name}">{data}</script>'
    )


def _kernel_note(binder: str | None, language: str = SOURCE) -> str:
    """What stands where a widget was: run it on Binder (where the course is published) or with ``make lab``."""
    words = LABELS[language]
    launch = html.escape(words["kernel_run"])
    if binder:
        launch = f'<a href="{html.escape(binder)}">{html.escape(words["kernel_launch"])}</a> ' + html.escape(
            words["kernel_local"]
        )
    return f'<div class="book-needs-kernel">{html.escape(words["kernel_note"])} {launch} <code>make lab</code>.</div>'


def prepare(nb: nbformat.NotebookNode, page: Page, settings: Settings) -> nbformat.NotebookNode:
    """A copy for the page: figures drawn by local plotly.js, widgets replaced by a note, objectives on top,
    the input of a cell whose input the lab collapses (``jupyter.source_hidden``) left out.

    Progress bars (tqdm widgets, shown when vectors were computed) are dropped: they report work, not content.
    """
    nb = copy.deepcopy(nb)
    figures = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if cell.metadata.get("jupyter", {}).get("source_hidden"):
            # a narrating cell: collapsed in the lab, and on the page only the prose it writes (nbconvert's own flag)
            cell.metadata.setdefault("transient", {})["remove_source"] = True
        cell.outputs = [
            o
            for o in cell.outputs
            if not (WIDGET in o.get("data", {}) and PROGRESS.search(o.data.get("text/plain", "")))
        ]
        # the sentence a notebook prints under a figure is the page's caption of it: shown once (written, as the
        # notebook's kernel wrote it, in the page's language, not the builder's)
        with language.speaking(page.language):
            captions = {
                plots.caption(plots.describe(o.data[PLOTLY])) for o in cell.outputs if PLOTLY in o.get("data", {})
            }
        cell.outputs = [o for o in cell.outputs if o.get("data", {}).get("text/markdown") not in captions]
        for output in cell.outputs:
            data = output.get("data", {})
            if PLOTLY in data:
                figures += 1
                output["data"] = {"text/html": _figure_html(data[PLOTLY], figures)}
            elif WIDGET in data:
                binder = settings.binder(page.rel) if settings.published else None
                output["data"] = {"text/html": _kernel_note(binder, page.language)}
    found = [i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and OBJECTIVES.match(c.source.lstrip())]
    if found:
        cell = nb.cells.pop(found[0])
        cell.metadata.setdefault("tags", []).append(OBJECTIVES_TAG)
        titled = [i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and c.source.lstrip().startswith("# ")]
        nb.cells.insert(titled[0] + 1 if titled else 0, cell)
    nb.metadata["title"] = page.title
    nb.metadata.pop("widgets", None)  # saved widget state: megabytes that nothing on a static page can use
    return nb


def _exporter(language: str = SOURCE) -> HTMLExporter:
    """Nbconvert's exporter for the pages of one language (``<html lang>`` is the exporter's own setting)."""
    return HTMLExporter(
        template_name="ragkit", extra_template_basedirs=[str(HERE / "templates")], language_code=language
    )


def render(
    nb: nbformat.NotebookNode, book: list[Page], index: int, settings: Settings, exporter: HTMLExporter | None = None
) -> str:
    """One page of HTML, with links to the home page, its neighbours, Binder and the source, and a switch to the
    same page in each other language; its neighbours are the pages of its own language, its words in that language.
    """
    page = book[index]
    same = [p for p in book if p.language == page.language]
    here = same.index(page)

    def neighbour(i: int) -> dict[str, str] | None:
        """The link to page ``i`` of the page's language, or None past either end of the book."""
        return {"href": same[i].href, "title": same[i].title} if 0 <= i < len(same) else None

    home = LABELS[page.language]["index"]
    resources = {
        "book": {
            "site_title": LABELS[page.language]["site_title"],
            "mathjax": MATHJAX,
            "home": home,
            "labels": LABELS[page.language],
            # no button that leads to the placeholder's repository, which does not exist
            "binder": settings.binder(page.rel) if settings.published else None,
            "colab": settings.colab(page.rel) if settings.published else None,
            "languages": counterparts(page, book),
            "source": settings.source(page.rel) if settings.published else None,
            "download": page.download,
            "previous": neighbour(here - 1),
            "next": neighbour(here + 1),
        }
    }
    body, _ = (exporter or _exporter(page.language)).from_notebook_node(
        prepare(nb, page, settings), resources=resources
    )
    return _project_links(_page_links(body, page, book), page, settings)


LANDING_SECTION = "pilot-"
"""The landing page's section of a translation's pages: ``index.html#pilot-nl``."""
_RELATIVE_HREF = re.compile(r'href="(\.\./[^"#]*)(#[^"]*)?"')


_NOTEBOOK_HREF = re.compile(r'href="(?![A-Za-z][A-Za-z0-9+.-]*:|/|#)([^"#]*\.ipynb)(#[^"]*)?"')


def _page_links(body: str, page: Page, book: Sequence[Page]) -> str:
    """A notebook's link to another notebook of the book (the English 00's ``nl/00-start-here.nl.ipynb``, a Dutch
    page's ``../00-start-here.ipynb``) leads to that notebook's page; a link to any other notebook stays as written."""
    hrefs = {p.rel: p.href for p in book}

    def to_page(match: re.Match) -> str:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page.rel), unquote(html.unescape(match.group(1)))))
        return f'href="{hrefs[target]}{match.group(2) or ""}"' if target in hrefs else match.group(0)

    return _NOTEBOOK_HREF.sub(to_page, body)


def _project_links(body: str, page: Page, settings: Settings) -> str:
    """A notebook's links to project files (``../data/corpus/x.md#char=...``) point at the repository on a page,
    except a link to the bibliography (``../docs/sources.md``, or its Dutch ``docs/nl/sources.md``), which the book
    has as a page of its own; until a
    teacher sets the repository's address, such a link keeps its words and leads nowhere."""
    folder = posixpath.join("notebooks", posixpath.dirname(page.rel))
    sources = SOURCES.relative_to(ROOT).as_posix()
    dutch = posixpath.join(posixpath.dirname(sources), "nl", posixpath.basename(sources))  # the same works, in Dutch

    def repository(match: re.Match) -> str:
        target = posixpath.normpath(posixpath.join(folder, unquote(html.unescape(match.group(1)))))
        if target in (sources, dutch):
            return f'href="{BIBLIOGRAPHY}{match.group(2) or ""}"'
        if not settings.published:  # the placeholder repository does not exist: the words stay, the link goes
            return f'data-file="{html.escape(target)}"'
        return f'href="{html.escape(settings.blob(target))}{match.group(2) or ""}"'

    return _RELATIVE_HREF.sub(repository, body)


def _readme_section(md: MarkdownIt, heading: str) -> tuple[str, str]:
    """The README's opening paragraph, and the first table under ``## heading``, as HTML."""
    tokens = md.parse((ROOT / "README.md").read_text())
    first = next(i for i, t in enumerate(tokens) if t.type == "paragraph_open")
    intro = tokens[first : first + 3]
    start = next(
        i for i, t in enumerate(tokens) if t.type == "inline" and t.content == heading and tokens[i - 1].tag == "h2"
    )
    opening = next(i for i in range(start, len(tokens)) if tokens[i].type == "table_open")
    closing = next(i for i in range(opening, len(tokens)) if tokens[i].type == "table_close")
    return (
        md.renderer.render(intro, md.options, {}),
        md.renderer.render(tokens[opening : closing + 1], md.options, {}),
    )


def landing(book: list[Page], settings: Settings) -> str:
    """index.html: the README's table of notebooks, each name a link to its page, then the exercises, then a section
    of each translation's pages (``#pilot-nl``), in its language."""
    hrefs = {Path(p.rel).stem: p.href for p in book if p.language == SOURCE}  # the README's table is English
    md = MarkdownIt("commonmark").enable("table")
    default = cast(RendererHTML, md.renderer).rules["code_inline"]  # MarkdownIt types it as the protocol; it is HTML

    def code_inline(renderer, tokens, idx, options, env):
        code = default(tokens, idx, options, env)
        href = hrefs.get(tokens[idx].content)
        return f'<a href="{href}">{code}</a>' if href else code

    md.add_render_rule("code_inline", code_inline)
    intro, table = _readme_section(md, "The notebooks")
    missing = [p.rel for p in book if "/" not in p.rel and f'href="{p.href}"' not in table]
    if missing:
        raise BookError(
            f"the README's notebook table does not list {missing}: add a row for each, "
            "the landing page is built from that table"
        )
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True)
    translations = [
        {
            "language": language,
            "id": LANDING_SECTION + language,
            "name": NAMES[language],
            "pages": [p for p in book if p.language == language],
        }
        for language in TRANSLATIONS
    ]
    return env.get_template("landing.html.j2").render(
        site_title=SITE_TITLE,
        intro=intro,
        table=table,
        binder=settings.binder(book[0].rel) if settings.published else None,
        exercises=[p for p in book if p.rel.startswith("exercises/")],
        translations=[t for t in translations if t["pages"]],
        bibliography=BIBLIOGRAPHY,
        labels=LABELS,
    )


def translated_landing(book: list[Page], settings: Settings, language: str) -> str:
    """A translation's own index page (``index.nl.html``): its notebooks, then its exercises, in its language, with
    the switch to the English index and its own PDF."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True)
    pages = [p for p in book if p.language == language]
    start = next((p for p in pages if p.original == book[0].rel), pages[0])
    return env.get_template(f"landing.{language}.html.j2").render(
        labels=LABELS[language],
        english=LABELS[SOURCE],
        english_name=NAMES[SOURCE],
        binder=settings.binder(start.rel) if settings.published else None,
        notebooks=[p for p in pages if "/" not in p.original],
        exercises=[p for p in pages if p.original.startswith("exercises/")],
        bibliography=BIBLIOGRAPHY,
    )


_ENTRY = re.compile(r"<li><strong>\[([a-z0-9]+)\]</strong>")


def bibliography(source: Path = SOURCES) -> tuple[Sheet, str]:
    """The bibliography's page: docs/sources.md as HTML, titled by its first heading, each entry anchored by its key
    (``sources.html#robertson2009``)."""
    tokens = MARKDOWN.parse(source.read_text(encoding="utf-8"))
    title = _heading(tokens) or source.stem
    body = _ENTRY.sub(r'<li id="\1"><strong>[\1]</strong>', MARKDOWN.renderer.render(tokens, MARKDOWN.options, {}))
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True)
    return Sheet(title, BIBLIOGRAPHY), env.get_template("sources.html.j2").render(
        site_title=SITE_TITLE, title=title, body=body
    )


def copy_assets(out: Path) -> None:
    """plotly.js, MathJax and the book's own style and script: everything a page loads, shipped beside it."""
    import jupyter_server_mathjax

    assets = out / "assets"
    shutil.copytree(HERE / "assets", assets, dirs_exist_ok=True)
    shutil.copy2(Path(plotly.__file__).parent / "package_data" / "plotly.min.js", assets / "plotly.min.js")
    shutil.copytree(Path(jupyter_server_mathjax.__file__).parent / "static", assets / "mathjax", dirs_exist_ok=True)


def _listing(out: Path) -> list[str]:
    """Every file, link and folder under ``out``, as paths relative to it (links are listed, never followed)."""
    found = []
    for folder, dirs, files in os.walk(out):
        here = Path(folder).relative_to(out)
        found += [(here / name).as_posix() for name in dirs + files]
    return found


def _written(out: Path) -> list[str]:
    """The files the builder wrote into ``out`` (its marker lists them); a BookError when anything else is there."""
    entries = _listing(out)
    if not entries:
        return []
    marker = out / MARKER
    listed: list[str] = []
    if marker.is_file() and not marker.is_symlink():
        try:
            data = json.loads(marker.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("format") == MARKER_FORMAT and isinstance(data.get("files"), list):
                listed = [f for f in data["files"] if isinstance(f, str)]
        except (OSError, UnicodeDecodeError, ValueError):
            listed = []
    ours = set(listed) | {MARKER} | {parent.as_posix() for f in listed for parent in Path(f).parents}
    foreign = [e for e in entries if e not in ours or (out / e).is_symlink()]
    if foreign:
        shown = ", ".join(sorted(foreign)[:3]) + (" ..." if len(foreign) > 3 else "")
        what = "holds files the book builder did not write" if marker.is_file() else "is not empty and is not a book"
        raise BookError(
            f"--out {out} {what} ({shown}): name a new or empty folder for the site, or move those "
            "files away (the builder replaces only a site it wrote, and never deletes anything else)"
        )
    present = set(entries)
    return [f for f in listed if f in present and (out / f).is_file()]


def check_out(out: Path) -> None:
    """Refuse at once an ``--out`` the builder may not replace: a link, a file, a folder it did not write, no access."""
    if out.is_symlink():
        raise BookError(f"--out {out} is a symbolic link: name the folder itself")
    if out.exists() and not out.is_dir():
        raise BookError(f"--out {out} is a file, not a folder: name a new or empty folder for the site")
    if out.is_dir():
        _written(out)
        where = out.absolute().parent
    else:
        where = next(p for p in out.absolute().parents if p.exists())
        if not where.is_dir():
            raise BookError(f"--out {out} cannot be created: {where} is a file, not a folder")
    if not os.access(where, os.W_OK | os.X_OK) or (out.is_dir() and not os.access(out, os.W_OK | os.X_OK)):
        raise BookError(f"--out {out} is not writable here: name a folder you can write to")


def _replace(out: Path, new: Path) -> None:
    """Remove the site the builder wrote in ``out`` (only its listed files), then move the new site there."""
    if out.is_dir():
        old = _written(out)  # again: minutes have passed while the notebooks ran
        for rel in old:
            (out / rel).unlink()
        (out / MARKER).unlink(missing_ok=True)
        folders = {parent for rel in old for parent in Path(rel).parents if parent != Path(".")}
        for folder in sorted(folders, key=lambda f: len(f.parts), reverse=True):
            (out / folder).rmdir()
    new.replace(out)  # rename(2) onto the now empty folder: the new site appears whole, in one step


def _write_site(site: Path, book: list[Page], notebooks: list[nbformat.NotebookNode], settings: Settings) -> None:
    copy_assets(site)
    exporters = {language: _exporter(language) for language in LABELS}
    for i, (page, nb) in enumerate(zip(book, notebooks, strict=True)):
        (site / page.href).write_text(render(nb, book, i, settings, exporters[page.language]))
        (site / page.download).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(page.path, site / page.download)
    (site / "index.html").write_text(landing(book, settings))
    for translation in TRANSLATIONS:
        if any(p.language == translation for p in book):
            (site / LABELS[translation]["index"]).write_text(translated_landing(book, settings, translation))
    sheet, text = bibliography()
    (site / sheet.href).write_text(text, encoding="utf-8")
    # the course on paper: the English one, its bibliography last, then each translation's, its own index first
    printouts = [pdf.Printout([*(p for p in book if p.language == SOURCE), sheet], SITE_TITLE)]
    for translation in TRANSLATIONS:
        if any(p.language == translation for p in book):
            words = LABELS[translation]
            printouts.append(
                pdf.Printout(
                    [*(p for p in book if p.language == translation), sheet],
                    words["site_title"],
                    name=words["pdf"],
                    contents=words["contents"],
                    index=words["index"],
                )
            )
    pdf.write_all(site, printouts)
    files = sorted(e for e in _listing(site) if (site / e).is_file())
    (site / MARKER).write_text(json.dumps({"format": MARKER_FORMAT, "files": files}, indent=0) + "\n")


def build(
    out: Path,
    jobs: int = 2,
    book: list[Page] | None = None,
    executed: Mapping[Path, nbformat.NotebookNode] | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> BookBuild:
    """Write the site to ``out``: a notebook found in ``executed`` is rendered as it is, the others are run first.

    ``out`` is checked before anything runs, and replaced only when it is empty or holds a site this builder wrote.
    """
    t = time.perf_counter()
    out = Path(out)
    check_out(out)
    settings = Settings.load() if settings is None else settings
    if progress is not None and not settings.published:
        progress(f"book: {UNSET_NOTE}")
    book = pages() if book is None else book
    executed = dict(executed or {})
    runs = execute([p for p in book if p.path not in executed], jobs, progress)
    notebooks = [executed[p.path] if p.path in executed else runs[p.path].notebook for p in book]
    seconds = {_shown(path): run.seconds for path, run in runs.items()}
    rendering = time.perf_counter()
    out.absolute().parent.mkdir(parents=True, exist_ok=True)
    site = Path(tempfile.mkdtemp(prefix=f".{out.absolute().name}.", dir=out.absolute().parent))
    try:
        mask = os.umask(0)
        os.umask(mask)
        site.chmod(0o777 & ~mask)  # a web server reads the site; mkdtemp made it private
        _write_site(site, book, notebooks, settings)
        _replace(out, site)
    finally:
        if site.exists():
            shutil.rmtree(site)  # a half-written site of ours, never moved into place
    done = time.perf_counter()
    return BookBuild(out, book, seconds, done - rendering, done - t)
