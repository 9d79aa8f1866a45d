"""Shared fixtures: the bundled corpus and a helper to write small corpora."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ragkit.corpus import Document, canonical_text, load_corpus

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "data" / "corpus"


@pytest.fixture(scope="session")
def corpus():
    return load_corpus(CORPUS)


def make_document(text: str, doc_id: str = "doc", title: str | None = None) -> Document:
    """A Document from a string, with the loader's own canonicalisation and title rule."""
    from ragkit.corpus import title_span

    text = canonical_text(text.encode("utf-8"))
    span = title_span(text)
    return Document(doc_id, title or (span[2] if span else doc_id), text, Path(f"{doc_id}.md"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# the exercise checks append results; tests (and the notebook kernels they start) must not write into ~/.ragkit
os.environ.setdefault("RAGKIT_RESULTS", os.path.join(tempfile.mkdtemp(prefix="ragkit-results-"), "results.jsonl"))


def pytest_terminal_summary(terminalreporter):
    """After the run: how long each executed notebook took (nothing when none ran)."""
    timings = getattr(sys.modules.get("test_notebooks"), "TIMINGS", None)
    if timings:
        terminalreporter.write_sep("-", f"notebook execution ({os.environ.get('RAGKIT_CACHE', 'default cache')}): "
                                        f"{sum(timings.values()):.1f} s in all")
        for name, seconds in sorted(timings.items()):
            terminalreporter.write_line(f"{name}: {seconds:.1f} s")


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
