"""Shared fixtures: the bundled corpus and a helper to write small corpora."""

import os
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
