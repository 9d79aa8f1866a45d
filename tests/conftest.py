"""Shared fixtures: the bundled corpus, a helper to write small corpora, and the notebooks executed once per run."""

import os
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

import pytest

from ragkit.corpus import Document, canonical_text, load_corpus
from ragkit.plumbing.models import bundled_model_dir

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "data" / "corpus"
NOTEBOOKS = ROOT / "notebooks"
ALL_NOTEBOOKS = sorted(p for p in NOTEBOOKS.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
JOBS = 2
"""Notebooks executed at once: kernel start-up and imports are single-threaded, so two share 2 cores well."""
QUICK_TEXTS = 600
"""The most texts a quick-tier test (one not marked ``slow``) may ask the embedder for, its fixtures included.

Below the smallest strategy's chunk count (738): a quick test embeds small corpora, never the course's vectors,
so ``make check`` from an empty cache embeds for seconds, not the minutes the course's six strategies take.
"""
QUICK = {"now": False, "texts": 0}

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# ranx (the field metrics' oracle) computes with numba, whose compiling took 30 s of a core on every fresh clone;
# interpreted, its code checks our few queries in about a second. Set for the whole process, before anything imports
# numba: numba rereads the setting at each compile, so a test that turned it on after another had compiled mixed
# compiled and interpreted kernels and failed (AttributeError: 'function' object has no attribute 'get_call_template')
os.environ["NUMBA_DISABLE_JIT"] = "1"
# the exercise checks append results; tests (and the notebook kernels they start) must not write into ~/.ragkit
os.environ.setdefault("RAGKIT_RESULTS", os.path.join(tempfile.mkdtemp(prefix="ragkit-results-"), "results.jsonl"))
# notebook 08b generates a collection to search (ragkit.approximate.SIZE_ENV): 200,000 vectors for a student, 20,000 in
# the tests (the kernels the executed fixture starts inherit it); make book and make bench leave it unset
os.environ.setdefault("RAGKIT_GENERATED_VECTORS", "20000")


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
    return tuple(
        (c["cell_type"], c["source"] if isinstance(c["source"], str) else "".join(c["source"])) for c in nb["cells"]
    )


class ExecutionCount:
    """Counts every execution of a project notebook in this run; the second one of the same notebook fails.

    A notebook is recognised by its cells, so an execution by any route (the book builder, nbclient called
    directly) is counted, whichever test starts it. Under pytest-xdist the workers of one run append to one
    ``log`` (in the run's own temporary folder), so an execution in another worker counts too.
    """

    def __init__(self, paths: list[Path], log: Path | None = None):
        import nbformat

        self.names = {_cells(nbformat.read(p, as_version=4)): notebook_name(p) for p in paths}
        self.count: Counter[str] = Counter()
        self.log = log

    def record(self, nb) -> None:
        name = self.names.get(_cells(nb))
        if name is None:
            return
        self.count[name] += 1
        times = self.count[name]
        if self.log is not None:
            with open(self.log, "a", encoding="utf-8") as log:  # one short line per write: appends do not interleave
                log.write(name + "\n")
            times = self.log.read_text(encoding="utf-8").splitlines().count(name)
        if times > 1:
            raise AssertionError(
                f"{name} executed {times} times in one test run: take it from the "
                "`executed` fixture (tests/conftest.py), which runs each notebook once"
            )


class Executions:
    """The notebooks executed once per run and shared by every test that reads their outputs.

    The first test that asks for one runs every notebook the selected tests need (``JOBS`` at a time), in
    ``batch`` order.
    """

    def __init__(self, items):
        self.wanted = _wanted(items)
        self.runs: dict = {}

    def __call__(self, path: Path):
        """The run of ``path`` (book.build.Execution): its executed notebook, seconds, error if it failed."""
        if path not in self.runs:
            from book.build import run_notebooks

            self.runs.update(run_notebooks(batch([path, *self.wanted], set(self.runs)), JOBS))
        return self.runs[path]


def batch(paths: list[Path], done: set[Path]) -> list[Path]:
    """The notebooks to run, each once, every English one before any Dutch one.

    A Dutch notebook runs the English one's code: after it, it reads from the cache what its twin computed (exercise 4's
    worked solution embeds about a thousand chunks, some two minutes), where the two side by side each computed it.
    """
    todo = [p for p in dict.fromkeys(paths) if p not in done]
    return sorted(todo, key=lambda p: "nl" in p.relative_to(NOTEBOOKS).parts)


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

    worker = getattr(config, "workerinput", None)  # a pytest-xdist worker: its basetemp is in the run's folder
    COUNT = ExecutionCount(
        ALL_NOTEBOOKS, Path(config.option.basetemp).parent / "notebook-executions.txt" if worker is not None else None
    )
    original = NotebookClient.async_execute

    async def counted(self, *args, **kwargs):
        COUNT.record(self.nb)
        return await original(self, *args, **kwargs)

    NotebookClient.async_execute = counted
    _guard_the_quick_tier()


def _guard_the_quick_tier() -> None:
    """Fail a quick-tier test that asks the embedder for more than ``QUICK_TEXTS`` texts (cached or not)."""
    from ragkit.embedding import Embedder

    original = Embedder._through

    def counted(self, kind, texts, compute):
        if QUICK["now"]:
            QUICK["texts"] += len(texts)
            if QUICK["texts"] > QUICK_TEXTS:
                pytest.fail(
                    f"a quick-tier test asked the embedder for {QUICK['texts']} texts (more than "
                    f"{QUICK_TEXTS}): it reads the course's vectors, which an empty cache needs tens of "
                    "seconds of model run per strategy to fill. Give it a few chapters, or mark it "
                    "@pytest.mark.slow",
                    pytrace=False,
                )
        return original(self, kind, texts, compute)

    Embedder._through = counted


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Count a quick-tier test's embedder texts (``_guard_the_quick_tier``) from its setup to its teardown."""
    QUICK.update(now=item.get_closest_marker("slow") is None, texts=0)
    try:
        return (yield)
    finally:
        QUICK.update(now=False, texts=0)


LONGEST_FIRST = (
    "notebooks",
    "test_grading",
    "test_hub",
    "test_colab",
    "test_browser",
    "test_embedding",
    "test_autosave",
    "test_binder",
    "test_book",
)
"""The xdist groups that take longest, in that order: the scheduler hands out groups in collection order."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """A test that reads executed notebooks is slow (before ``-m`` deselects); and under pytest-xdist, grouped.

    ``make test`` runs ``--dist loadgroup``: every test that reads executed notebooks goes to one worker (which
    executes each notebook once), and every other test goes with the rest of its module (whose module fixtures, a
    fresh venv or a hub, are then built once).
    """
    grouped = bool(getattr(config.option, "loadgroup", False))  # set in a pytest-xdist worker of --dist loadgroup
    groups = {}
    for item in items:
        reads = item.get_closest_marker("notebooks") is not None or "executed" in item.fixturenames
        if reads:
            item.add_marker(pytest.mark.slow)
        if grouped:
            groups[item] = "notebooks" if reads else item.path.stem
            _group(item, groups[item])
    if grouped:  # the longest groups first, the quick modules last to even out the workers' ends (Makefile)
        items.sort(
            key=lambda item: LONGEST_FIRST.index(groups[item]) if groups[item] in LONGEST_FIRST else len(LONGEST_FIRST)
        )


def _group(item, name: str) -> None:
    """Put a test in an xdist group: the ``@name`` its node id ends with is what the scheduler groups by.

    pytest-xdist 3.8 appends it by setting ``item._nodeid``, which pytest 9.2 no longer reads (its node id is a
    NodeId in ``item._id``), so every test would be scheduled alone; the suffix is set here the way pytest reads it.
    """
    from _pytest.nodeid import NodeId

    item.add_marker(pytest.mark.xdist_group(name))
    if not item.nodeid.endswith(f"@{name}"):
        item._id = NodeId.parse(f"{item.nodeid}@{name}")
    assert item.nodeid.endswith(f"@{name}"), f"{item.nodeid}: pytest ignored its xdist group; see tests/conftest.py"


@pytest.fixture(scope="session")
def executed(request) -> Executions:
    """``executed(path)``: the notebook's one run in this session (see Executions)."""
    global RUNS
    RUNS = Executions(request.session.items)
    return RUNS


def _seconds() -> dict[str, float]:
    return {notebook_name(p): run.seconds for p, run in RUNS.runs.items()} if RUNS else {}


SECONDS: dict[str, float] = {}
"""The notebooks' kernel seconds the pytest-xdist workers sent back (the controller executes none itself)."""


def pytest_sessionfinish(session):
    """A pytest-xdist worker sends its notebooks' seconds to the controller, which prints the summary."""
    out = getattr(session.config, "workeroutput", None)
    if out is not None and _seconds():
        out["notebook_seconds"] = _seconds()


STARTED = {"at": 0.0}
ENDED: dict[str, float] = {}
"""When this run started, and when each pytest-xdist worker ended (seconds since then): the workers' balance."""


def pytest_sessionstart(session):
    import time

    STARTED["at"] = time.monotonic()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    import time

    SECONDS.update(getattr(node, "workeroutput", {}).get("notebook_seconds", {}))
    ENDED[node.gateway.id] = time.monotonic() - STARTED["at"]


def pytest_terminal_summary(terminalreporter):
    """After the run: when each worker ended (written to ``RAGKIT_TEST_TIMES`` too, for .ci/run's last line), and
    how long each executed notebook took (nothing when none ran)."""
    if ENDED:
        ends = ", ".join(f"{worker} {seconds:.0f} s" for worker, seconds in sorted(ENDED.items()))
        terminalreporter.write_sep("-", f"pytest-xdist workers ended after: {ends}")
        if times := os.environ.get("RAGKIT_TEST_TIMES"):
            with open(times, "a", encoding="utf-8") as out:
                out.writelines(f"{worker} {seconds:.0f}\n" for worker, seconds in sorted(ENDED.items()))
    seconds = {**SECONDS, **_seconds()}
    if seconds:
        terminalreporter.write_sep(
            "-",
            f"notebook execution, {JOBS} at a time "
            f"({os.environ.get('RAGKIT_CACHE', 'default cache')}): "
            f"{sum(seconds.values()):.1f} s of kernel time in all",
        )
        for name, s in sorted(seconds.items()):
            terminalreporter.write_line(f"{name}: {s:.1f} s")


@pytest.fixture
def tmpfs(tmp_path):
    """Mount small tmpfs folders (root only): ``tmpfs("1m")`` returns one; all are unmounted after the test."""
    made = []

    def mount(size: str) -> Path:
        where = tmp_path / f"tmpfs{len(made)}"
        where.mkdir()
        if (
            subprocess.run(
                ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
            ).returncode
            != 0
        ):
            pytest.skip("cannot mount a tmpfs here (needs root): read-only and full-disk cases not exercised")
        made.append(where)
        return where

    yield mount
    for where in reversed(made):
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory):
    """A randomly initialised BERT cross-encoder (2 layers, width 32) with the bundled model's vocabulary."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    tokenizer = BertTokenizerFast.from_pretrained(str(bundled_model_dir()))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=1,
        max_position_embeddings=512,
    )
    BertForSequenceClassification(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
