"""The Dutch teacher's guides: each generated from its English guide and a catalogue of translated blocks.

An English guide (``docs/teacher-guide.md``, ``docs/grading.md``) is cut into its top-level markdown blocks
(a paragraph, a table, a list, a heading, a fenced block). Its catalogue, ``docs/nl/catalogue/<guide>/*.toml`` (one
or more files), holds one ``[[block]]`` per block: the first 12 hex digits of the sha256 of the English block (its
computed figures, ``<!--fig:name-->value<!--/fig-->``, left empty, so that a new figure does not make it stale), that
English (``en``) and the Dutch (``nl``). A changed English block finds no entry: its Dutch is stale.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

GUIDES = ("teacher-guide", "grading")
"""The guides of docs/ that have a Dutch twin in docs/nl/."""
FIGURE = re.compile(r"(<!--fig:\w+-->)(.*?)(<!--/fig-->)")


@dataclass(frozen=True)
class Block:
    """One top-level block of an English guide: its lines (first, after the last) and its text."""

    start: int
    end: int
    text: str


def blocks(markdown: str) -> list[Block]:
    """The top-level blocks of ``markdown``, in order, each with its line range."""
    lines = markdown.splitlines()
    found = []
    for token in MarkdownIt("commonmark").enable("table").parse(markdown):
        if token.level == 0 and token.map is not None and token.nesting in (0, 1):
            start, end = token.map
            if found and start < found[-1].end:
                continue  # inside a block already taken whole (a list's items, a table's rows)
            found.append(Block(start, end, "\n".join(lines[start:end]).rstrip("\n")))
    return found


def block_sha(text: str) -> str:
    """The hash that ties a translated block to its English, with the computed figures' values left out."""
    return hashlib.sha256(FIGURE.sub(r"\1\3", text).encode("utf-8")).hexdigest()[:12]


def catalogue_folder(docs: Path, guide: str) -> Path:
    """Where the catalogue files of ``guide`` live."""
    return docs / "nl" / "catalogue" / guide


def skeleton(docs: Path, guide: str, parts: int = 2) -> list[Path]:
    """Write a catalogue with an empty ``nl`` for every block of ``guide``, cut in ``parts`` files of equal size."""
    english = blocks((docs / f"{guide}.md").read_text(encoding="utf-8"))
    unique = list({block_sha(b.text): b for b in english}.values())
    size = -(-len(unique) // parts)
    folder = catalogue_folder(docs, guide)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for k in range(parts):
        text = (f"# The Dutch of docs/{guide}.md, part {k + 1} of {parts}: one [[block]] per top-level markdown "
                "block of the\n# English guide: sha (12 hex, figures left out), its English (en) and the Dutch "
                "(nl).\n")
        for block in unique[k * size:(k + 1) * size]:
            text += (f"\n[[block]]\nsha = {json.dumps(block_sha(block.text))}\n"
                     f"en = {_toml(block.text)}\nnl = ''\n")
        path = folder / f"part-{k + 1}.toml"
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def _toml(text: str) -> str:
    """``text`` as a TOML string: a literal multi-line string where it can be one, else a basic string."""
    if "'''" not in text and not text.endswith("'") and "\r" not in text:
        return "'''\n" + text + "'''"
    return json.dumps(text, ensure_ascii=False)
