"""What a Dutch student sees is Dutch: no sentence, label, title, axis or button of a Dutch run is the English run's.

Both editions of a notebook run the same code on the same corpus, so every string the Dutch run shows that the English
run shows too, word for word, was not translated. What both rightly show alike is named here, each with its reason:
the corpus and its ground truth (English texts, quoted as they are), the references' titles, formulas, the prompt and
the answers of the English-speaking generator, code a cell prints, and the terms the glossary keeps in English.
"""

from __future__ import annotations

import json
import re
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from conftest import ALL_NOTEBOOKS, NOTEBOOKS, ROOT

DUTCH = [p for p in ALL_NOTEBOOKS if p.relative_to(NOTEBOOKS).parts[0] == "nl"]

KEPT = frozenset(
    """
    dense hybrid bm25 blind boundaries overlap header headers chunk chunks chunker chunking needle needles query queries
    hit mrr map ndcg recall precision maxsim rerank reranker cross-encoder bi-encoder out-of-domain in-domain near miss
    scan per vs ms top cut gate stale embedding embeddings token tokens idf rrf faiss hnsw efsearch efconstruction
    wilson holm sign test p ok content text retrieval reranking cos onnx extractor status
    """.split()
)
"""Terms the glossary (docs/nl/teacher-guide.md, Woordenlijst) keeps in English, and words Dutch spells alike: a label
made of these alone (``E/dense vs A/dense``, ``dense scan``, ``B: blind + overlap``) is the same in both editions."""
KEPT_PHRASES = frozenset({"NO ANSWER"})
"""What the gate writes when nothing passes: the glossary keeps it, as the chapter's answer, in English."""

BOTH = (
    (r"(^|/)08-production", "index.tables(out)", "the index's own tables, columns named as the database names them"),
    (r"(^|/)07-citations", "print(result.prompt)", "the prompt is what the English-speaking generator reads"),
    (r"(^|/)07-citations", "course.opening()", "the generator's own answer, in English"),
    (r"(^|/)07-citations", "tables.invented(", "the generator's own answers, in English"),
    (r"(^|/)07-citations", "INVENTED_REFERENCES", "the titles of papers, as printed and as they are"),
    (r"(^|/)02-dense-retrieval", "inspect.getsource", "ragkit's own code, printed"),
    (r"(^|/)08-production", "narrate.appended_found(", "a document the notebook adds to the English corpus"),
    (r"solutions/ex4-", "print(my_header(", "the header the solution writes for the English corpus and its encoder"),
)
"""Cells whose output both editions rightly show alike: (notebook, a piece of the cell's code, why)."""

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")


class _Texts(HTMLParser):
    """The text a browser shows of an HTML output, one piece per element, and its titles and labels (code aside: a
    command, a model's name)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag, attrs):
        self._hidden += tag in ("script", "style", "code")
        self.found += [v for k, v in attrs if k in ("title", "aria-label", "alt", "placeholder") and v]

    def handle_endtag(self, tag):
        self._hidden -= tag in ("script", "style", "code")

    def handle_data(self, data):
        if not self._hidden and data.strip():
            self.found.append(data)


def _html(text: str) -> list[str]:
    parser = _Texts()
    parser.feed(text)
    return parser.found


def _plotly(figure: dict) -> list[str]:
    """A chart's titles, axis names, annotations, legend and hover labels."""
    found: list[str] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("text", "name", "title", "hovertemplate") and isinstance(value, str):
                    found.append(value)
                elif key not in ("x", "y", "z", "customdata"):
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(figure.get("layout", {}))
    for trace in figure.get("data", []):
        found += [trace[k] for k in ("name", "hovertemplate") if isinstance(trace.get(k), str)]
    return found


def shown(nb, exempt: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(where, text) for every piece of text a run notebook shows: its markdown, outputs, charts and widgets."""
    found: list[tuple[str, str]] = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            found += [(f"cell {i}", line) for line in cell.source.splitlines()]
            continue
        if any(piece in cell.source for piece in exempt):
            continue
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            pieces = out.get("text", "").splitlines()
            if "text/html" in data:
                pieces += _html(data["text/html"])
            elif "text/markdown" in data:
                pieces += data["text/markdown"].splitlines()
            if "application/vnd.plotly.v1+json" in data:
                pieces += _plotly(data["application/vnd.plotly.v1+json"])
            found += [(f"cell {i}", p) for p in pieces]
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    for model in state.values():
        values = model.get("state", {})
        for key in ("description", "placeholder", "tooltip", "value", "_options_labels"):
            value = values.get(key)
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, str) and (key != "value" or "<" in v):  # a text box's value is a query, typed
                    found += [("a widget", p) for p in (_html(v) if "<" in v else [v])]
    return found


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@cache
def _texts() -> str:
    """The corpus and its ground truth: what both editions quote as it is."""
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "data" / "corpus").glob("*.md"))]
    for name in ("questions.jsonl", "out_of_domain.jsonl"):
        for line in (ROOT / "data" / name).read_text(encoding="utf-8").splitlines():
            texts += [v for v in json.loads(line).values() if isinstance(v, str)]
    return " ".join(texts)


@cache
def _data() -> str:
    return _key(_texts())


def _fours(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return set(zip(words, words[1:], words[2:], words[3:], strict=False))


@cache
def _data_fours() -> frozenset[tuple[str, ...]]:
    return frozenset(_fours(_texts()))


def quoted(text: str) -> bool:
    """Whether ``text`` quotes the corpus or its ground truth: its texts, titles and headers (``[title > section]``),
    cut where a page shortens or joins them (…, ..., ✂, ›, ·, →), after a label (``q03:``, ``[2]``, ``- **b**:``) and
    a document's name."""
    text = re.sub(r"\b\d\d-[a-z]+(-[a-z]+)*\b", " ", text)
    text = re.sub(
        r"^\W*(\[\d+\]|q\d\d|ood\d\d|question|ticket|needle|query|header|\*\*\w\*\*)\W*", "", text, flags=re.I
    )
    parts = [p for p in re.split(r"✂|\.\.\.|…|›|·|→|>|\[|\]", text) if _key(p)]
    if parts and all(_key(p) in _data() for p in parts):
        return True
    fours = _fours(text)  # a chunk as a page renders it (its markdown gone): four words in five the corpus's
    return len(fours) >= 5 and len(fours & _data_fours()) >= 0.8 * len(fours)


def english(dutch_run, english_run, name: str) -> list[str]:
    """The pieces of text the Dutch run shows exactly as the English run does, that nothing above excuses."""
    exempt = tuple(code for where, code, _ in BOTH if re.search(where, name))
    theirs = {" ".join(t.split()) for _, t in shown(english_run, exempt)}
    left, seen = [], set()
    for where, text in shown(dutch_run, exempt):
        text = " ".join(text.split())
        words = [w.lower() for w in _WORD.findall(re.sub(r"<[^>]*>", " ", text))]  # a hover label's markup aside
        if text in seen or text not in theirs or not words or set(words) <= KEPT:
            continue  # a label of kept terms
        if " " not in text and (not text.isalpha() or re.fullmatch(r"(?:[A-Z][a-z]+){2,}", text)):
            continue  # one token that is not a word: a path, a locator, a hash, a document's name, a class's name
        if text.strip("# ") in KEPT_PHRASES:
            continue
        if quoted(text) or "$" in text or "\\" in text or re.match(r"^- .*\(\d{4}\).*\[\w+\]$", text):
            continue  # the corpus; a formula; a reference (its title is the paper's)
        seen.add(text)
        left.append(f"{where}: {text[:160]}")
    return left


def test_english_finds_what_was_not_translated_and_passes_what_was():
    def run(markdown: str, shown_text: str) -> nbformat.NotebookNode:
        html = f"<table><tr><th>{shown_text}</th></tr></table>"
        out = nbformat.v4.new_output("display_data", data={"text/html": html})
        return nbformat.v4.new_notebook(
            cells=[nbformat.v4.new_markdown_cell(markdown), nbformat.v4.new_code_cell(outputs=[out])]
        )

    en = run("Count the destroyed needles.", "chunk size")
    assert english(run("Tel de vernietigde needles.", "chunkgrootte"), en, "x") == []
    assert english(run("Tel de vernietigde needles.", "chunk size"), en, "x") == ["cell 1: chunk size"]
    assert english(run("Count the destroyed needles.", "chunkgrootte"), en, "x") == [
        "cell 0: Count the destroyed needles."
    ]
    # the corpus quoted, a kept label, a formula: the same in both editions
    question = "How many test examples do I need?"
    for same in (f"q10: {question}", "E/dense vs A/dense", "$k_1 + 1$"):
        assert english(run(same, "x"), run(same, "x"), "x") == []


@pytest.mark.notebooks
@pytest.mark.parametrize("ipynb", DUTCH, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_a_dutch_notebook_shows_no_english(ipynb: Path, executed):
    twin = NOTEBOOKS / ipynb.relative_to(NOTEBOOKS / "nl").with_name(ipynb.name.replace(".nl.ipynb", ".ipynb"))
    runs = executed(ipynb), executed(twin)
    for run in runs:
        if run.error:
            pytest.fail(run.error, pytrace=False)
    left = english(runs[0].notebook, runs[1].notebook, str(ipynb.relative_to(NOTEBOOKS)))
    assert not left, f"{ipynb.name} shows English its English twin shows too:\n  " + "\n  ".join(left)
