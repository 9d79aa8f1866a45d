"""Shared fixtures: the bundled corpus, a helper to write small corpora, and the notebooks executed once per run."""

import os
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

import pytest

from ragkit.corpus import Document, canonical_text, load_corpus

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "data" / "corpus"
NOTEBOOKS = ROOT / "notebooks"
ALL_NOTEBOOKS = sorted(p for p in NOTEBOOKS.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
JOBS = 2
"""Notebooks executed at once: kernel start-up and imports are single-threaded, so two share 2 cores well."""

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# the exercise checks append results; tests (and the notebook kernels they start) must not write into ~/.ragkit
os.environ.setdefault("RAGKIT_RESULTS", os.path.join(tempfile.mkdtemp(prefix="ragkit-results-"), "results.jsonl"))


@pytest.fixture(scope="session")
def corpus():
    return load_corpus(CORPUS)


def make_document(text: str, doc_id: str = "doc", title: str | None = None) -> Document:
    """A Document from a string, with the loader's own canonicalisation and title rule."""
    from ragkit.corpus import title_span

    text = canonical_text(text.encode("utf-8"))
    span = title_span(text)
    return Document(doc_id, title or (span[2] if span else doc_id), text, Path(f"{doc_id}.md"))


def notebook_name(path: Path) -> str:
    return path.relative_to(NOTEBOOKS).as_posix()


def _cells(nb) -> tuple:
    return tuple((c["cell_type"], c["source"] if isinstance(c["source"], str) else "".join(c["source"]))
                 for c in nb["cells"])


class ExecutionCount:
    """Counts every execution of a project notebook in this process; the second one of the same notebook fails.

    A notebook is recognised by its cells, so an execution by any route (the book builder, nbclient called
    directly) is counted, whichever test starts it.
    """

    def __init__(self, paths: list[Path]):
        import nbformat

        self.names = {_cells(nbformat.read(p, as_version=4)): notebook_name(p) for p in paths}
        self.count: Counter[str] = Counter()

    def record(self, nb) -> None:
        name = self.names.get(_cells(nb))
        if name is None:
            return
        self.count[name] += 1
        if self.count[name] > 1:
            raise AssertionError(f"{name} executed {self.count[name]} times in one test run: take it from the "
                                 "`executed` fixture (tests/conftest.py), which runs each notebook once")


class Executions:
    """The notebooks executed once per run and shared by every test that reads their outputs.

    The first test that asks for one runs every notebook the selected tests need (``JOBS`` at a time).
    """

    def __init__(self, items):
        self.wanted = _wanted(items)
        self.runs: dict = {}

    def __call__(self, path: Path):
        """The run of ``path`` (book.build.Execution): its executed notebook, seconds, error if it failed."""
        if path not in self.runs:
            from book.build import run_notebooks

            batch = [path] + [p for p in self.wanted if p not in self.runs and p != path]
            self.runs.update(run_notebooks(batch, JOBS))
        return self.runs[path]


def _wanted(items) -> list[Path]:
    """The notebooks the selected tests read, in order: a ``notebooks`` marker's paths, else the ``ipynb`` parameter."""
    wanted: dict[Path, None] = {}
    for item in items:
        marker = item.get_closest_marker("notebooks")
        if marker is None:
            continue
        params = getattr(item, "callspec", None)
        paths = marker.args or ([params.params["ipynb"]] if params and "ipynb" in params.params else ALL_NOTEBOOKS)
        wanted.update(dict.fromkeys(paths))
    return list(wanted)


COUNT: ExecutionCount | None = None
RUNS: Executions | None = None


def pytest_configure(config):
    """Count executions from the start of the run: wrap nbclient's execute once for the whole session."""
    global COUNT
    from nbclient import NotebookClient

    COUNT = ExecutionCount(ALL_NOTEBOOKS)
    original = NotebookClient.async_execute

    async def counted(self, *args, **kwargs):
        COUNT.record(self.nb)
        return await original(self, *args, **kwargs)

    NotebookClient.async_execute = counted


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """A test that reads executed notebooks is slow (before ``-m`` deselects)."""
    for item in items:
        if item.get_closest_marker("notebooks"):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def executed(request) -> Executions:
    """``executed(path)``: the notebook's one run in this session (see Executions)."""
    global RUNS
    RUNS = Executions(request.session.items)
    return RUNS


def pytest_terminal_summary(terminalreporter):
    """After the run: how long each executed notebook took (nothing when none ran)."""
    if RUNS and RUNS.runs:
        seconds = {notebook_name(p): run.seconds for p, run in RUNS.runs.items()}
        terminalreporter.write_sep("-", f"notebook execution, {JOBS} at a time "
                                        f"({os.environ.get('RAGKIT_CACHE', 'default cache')}): "
                                        f"{sum(seconds.values()):.1f} s of kernel time in all")
        for name, s in sorted(seconds.items()):
            terminalreporter.write_line(f"{name}: {s:.1f} s")


@pytest.fixture
def tmpfs(tmp_path):
    """Mount small tmpfs folders (root only): ``tmpfs("1m")`` returns one; all are unmounted after the test."""
    made = []

    def mount(size: str) -> Path:
        where = tmp_path / f"tmpfs{len(made)}"
        where.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True).returncode != 0:
            pytest.skip("cannot mount a tmpfs here (needs root): read-only and full-disk cases not exercised")
        made.append(where)
        return where

    yield mount
    for where in reversed(made):
        subprocess.run(["umount", "-l", str(where)], capture_output=True)
