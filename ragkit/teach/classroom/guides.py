"""The Dutch teacher's guides: each generated from its English guide and a catalogue of translated blocks.

An English guide (``docs/teacher-guide.md``, ``docs/grading.md``) is cut into its top-level markdown blocks
(a paragraph, a table, a list, a heading, a fenced block). Its catalogue, ``docs/nl/catalogue/<guide>/*.toml`` (one
or more files), holds one ``[[block]]`` per block: the first 12 hex digits of the sha256 of the English block (its
computed figures, ``<!--fig:name-->value<!--/fig-->``, left empty, so that a new figure does not make it stale), that
English (``en``) and the Dutch (``nl``). A changed English block finds no entry: its Dutch is stale. A figure's
Dutch value is the one the Dutch guide already marks under its name, which the teacher's tools computed and wrote
(``WRITERS``); nothing here translates an English value.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

from ragkit.errors import InputError
from ragkit.teach.classroom.edition import link_targets
from ragkit.teach.classroom.figures import FIGURE, figure_names, marked, quoted, unvalued
from ragkit.teach.classroom.generated import Stale, toml_string
from ragkit.teach.classroom.pace import class_times
from ragkit.teach.classroom.run_times import in_every_language
from ragkit.teach.language import speaking

__all__ = [
    "GUIDES",
    "VERBATIM",
    "WRITERS",
    "Block",
    "BlockTranslation",
    "block_catalogue",
    "block_sha",
    "blocks",
    "catalogue_folder",
    "check",
    "dutch_guide",
    "dutch_guide_path",
    "measured",
    "skeleton",
    "write",
]

GUIDES = ("teacher-guide", "grading", "project", "sources", "deploy-jupyterhub")
"""The guides of docs/ that have a Dutch twin in docs/nl/."""
VERBATIM = ("<!-- run-times", "<!-- /run-times -->")
"""The markers around what ``make bench`` writes into the guide (a table of measured run times): a measurement's
output, never in a catalogue (it would be stale after every benchmark); the Dutch guide writes the same measurements
in Dutch (``run_times.in_every_language``)."""


def measured(found: list[Block]) -> set[int]:
    """The indices of the blocks ``make bench`` writes (between the VERBATIM markers, the markers included)."""
    inside, out = False, set()
    for i, block in enumerate(found):
        if block.text.startswith(VERBATIM[0]):
            inside = True
        if inside:
            out.add(i)
        if block.text.startswith(VERBATIM[1]):
            inside = False
    return out


@dataclass(frozen=True)
class Block:
    """One top-level block of an English guide: its lines (first, after the last) and its text."""

    start: int
    end: int
    text: str


def blocks(markdown: str) -> list[Block]:
    """The top-level blocks of ``markdown``, in order, each with its line range."""
    lines = markdown.splitlines()
    found: list[Block] = []
    for token in MarkdownIt("commonmark").enable("table").parse(markdown):
        if token.level == 0 and token.map is not None and token.nesting in (0, 1):
            start, end = token.map
            if found and start < found[-1].end:
                continue  # inside a block already taken whole (a list's items, a table's rows)
            while end > start + 1 and not lines[end - 1].strip():
                end -= 1  # a list's map takes the blank line after it: that belongs between the blocks
            found.append(Block(start, end, "\n".join(lines[start:end])))
    return found


def block_sha(text: str) -> str:
    """The hash that ties a translated block to its English, with the computed figures' values left out."""
    return hashlib.sha256(unvalued(text).encode("utf-8")).hexdigest()[:12]


def catalogue_folder(docs: Path, guide: str) -> Path:
    """Where the catalogue files of ``guide`` live."""
    return docs / "nl" / "catalogue" / guide


PARTS = 2
"""How many files a new catalogue is cut into, of equal size (a translator's portions)."""


def skeleton(root: Path) -> list[Path]:
    """Add an entry with an empty ``nl`` for every block each guide's catalogue lacks: a new catalogue cut in
    ``PARTS`` files where a guide has none, else the entries appended to its last part; the files written."""
    docs = root / "docs"
    return [path for guide in GUIDES for path in _skeleton_of(docs, guide)]


def _skeleton_of(docs: Path, guide: str) -> list[Path]:
    """The catalogue of one guide with an entry for each of its blocks; the files written."""
    english = blocks((docs / f"{guide}.md").read_text(encoding="utf-8"))
    skipped = measured(english)
    unique = list({block_sha(b.text): b for i, b in enumerate(english) if i not in skipped}.values())
    folder = catalogue_folder(docs, guide)
    if folder.is_dir():
        have = block_catalogue(docs, guide)
        lacking = [b for b in unique if block_sha(b.text) not in have]
        if not lacking:
            return []
        parts = sorted(folder.glob("part-*.toml"), key=lambda p: (len(p.name), p.name))  # part-10 after part-9
        path = parts[-1] if parts else folder / "part-1.toml"
        text = path.read_text(encoding="utf-8") if path.is_file() else _heading(guide, 1, 1)
        path.write_text(text + "".join(_empty(b) for b in lacking), encoding="utf-8")
        return [path]
    size = -(-len(unique) // PARTS)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for k in range(PARTS):
        path = folder / f"part-{k + 1}.toml"
        path.write_text(
            _heading(guide, k + 1, PARTS) + "".join(_empty(b) for b in unique[k * size : (k + 1) * size]),
            encoding="utf-8",
        )
        written.append(path)
    return written


def _heading(guide: str, part: int, parts: int) -> str:
    return (
        f"# The Dutch of docs/{guide}.md, part {part} of {parts}: one [[block]] per top-level markdown "
        "block of the\n# English guide: sha (12 hex, figures left out), its English (en) and the Dutch (nl).\n"
    )


def _empty(block: Block) -> str:
    """A catalogue entry for ``block`` with its Dutch still to write."""
    return f"\n[[block]]\nsha = {json.dumps(block_sha(block.text))}\nen = {toml_string(block.text)}\nnl = ''\n"


@dataclass(frozen=True)
class BlockTranslation:
    """One translated block: the hash and English it was made from, and its Dutch."""

    sha: str
    en: str
    nl: str


WRITERS = {"teacher-guide": "python -m teacher.guide --write", "project": "python -m teacher.project --write"}
"""The teacher's tool that computes a guide's figures and writes them into both languages' pages."""


def block_catalogue(docs: Path, guide: str) -> dict[str, BlockTranslation]:
    """Every file of a guide's catalogue, merged; an InputError that names the file and entry when one is broken."""
    folder = catalogue_folder(docs, guide)
    if not folder.is_dir():
        raise InputError(f"{folder} is missing: run `python -m ragkit edition --skeleton` to start a catalogue")
    found: dict[str, BlockTranslation] = {}
    for path in sorted(folder.glob("*.toml")):
        try:
            with path.open("rb") as f:
                data = tomllib.load(f)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise InputError(f"{path} cannot be read ({exc}): fix it, then run `make nl`") from None
        except RecursionError:  # tomllib parses nested arrays and tables by recursion
            raise InputError(
                f"{path} is nested too deep to be a catalogue: write one [[block]] per block (sha, en, nl)"
            ) from None
        for n, entry in enumerate(data.get("block", []), 1):
            if not (isinstance(entry, dict) and all(isinstance(entry.get(k), str) for k in ("sha", "en", "nl"))):
                raise InputError(f"{path}: block {n} needs sha, en and nl, each a string: add what is missing")
            if entry["sha"] in found:
                raise InputError(
                    f"{path}: block {entry['sha']} is translated twice (here and in another entry): keep one"
                )
            found[entry["sha"]] = BlockTranslation(entry["sha"], entry["en"], entry["nl"])
        if "figure" in data:
            raise InputError(
                f"{path} has a [[figure]] table: a figure's Dutch is computed now, not translated from its English; "
                f"delete the table and run `{WRITERS.get(guide, 'make nl')}`"
            )
    return found


def _linked(markdown: str) -> str:
    """Links one folder deeper (docs/nl/), except to a guide that has its Dutch twin beside it."""
    for target in set(link_targets(markdown)):
        if target.split("#", 1)[0].removesuffix(".md") not in GUIDES:
            markdown = markdown.replace(f"]({target}", f"](../{target}")
    return markdown


def dutch_guide(docs: Path, guide: str) -> tuple[str, list[str]]:
    """The Dutch guide's text, and why any part of it is not Dutch or not current (a translator's to-do list)."""
    english = (docs / f"{guide}.md").read_text(encoding="utf-8")
    translated = block_catalogue(docs, guide)
    existing = dutch_guide_path(docs, guide)
    dutch_values = quoted(existing.read_text(encoding="utf-8")) if existing.is_file() else {}
    lines = english.splitlines()
    out: list[str] = []
    todo: list[str] = []
    at = 0
    found = blocks(english)
    skipped = measured(found)
    notebooks = docs.parent / "notebooks"
    times = class_times(notebooks, "nl") if notebooks.is_dir() else {}
    for i, block in enumerate(found):
        out += lines[at : block.start]
        at = block.end
        if i in skipped:
            out += block.text.splitlines()
            continue
        sha = block_sha(block.text)
        entry = translated.get(sha)
        if entry is None or not entry.nl.strip():
            todo.append(f"block {sha} (line {block.start + 1}) has no Dutch: {block.text[:70]!r}")
            out += block.text.splitlines()
            continue
        values = {m.group(1): m.group(2) for m in FIGURE.finditer(block.text)}
        if sorted(figure_names(entry.nl)) != sorted(figure_names(block.text)):
            todo.append(f"block {sha} (line {block.start + 1}): its Dutch marks other figures than its English")

        def figure(m: re.Match, values: dict[str, str] = values) -> str:
            name = m.group(1)
            if name in times:  # a class time: the Dutch twin's own minutes
                return marked(name, times[name])
            dutch = dutch_values.get(name, set())
            if len(dutch) != 1:  # a new figure, or one the Dutch guide writes two ways
                todo.append(
                    f"the figure {name} has no one Dutch value in {existing.name}: run "
                    f"`{WRITERS.get(guide, 'make nl')}`, then `make nl`"
                )
                return marked(name, values.get(name, m.group(2)))
            return marked(name, next(iter(dutch)))

        out += _linked(FIGURE.sub(figure, entry.nl.strip("\n"))).splitlines()
    out += lines[at:]
    wanted = {block_sha(b.text) for i, b in enumerate(found) if i not in skipped}
    with speaking("nl"):  # make bench's table, from the measurements it carries: the same figures, in Dutch
        text = in_every_language("\n".join(out) + "\n")
    todo += [
        f"the entry {sha} translates no block of docs/{guide}.md any more (its English changed or went): "
        "update its sha, en and nl, or delete it"
        for sha in sorted(set(translated) - wanted)
    ]
    return text, todo


def dutch_guide_path(docs: Path, guide: str) -> Path:
    """Where the Dutch guide is written."""
    return docs / "nl" / f"{guide}.md"


def write(root: Path) -> list[Path]:
    """Write every Dutch guide; the paths written."""
    docs = root / "docs"
    written = []
    for guide in GUIDES:
        path = dutch_guide_path(docs, guide)
        path.write_text(dutch_guide(docs, guide)[0], encoding="utf-8")
        written.append(path)
    return written


def check(root: Path) -> list[Stale]:
    """Every stale, missing or orphaned block of the Dutch guides, and every committed guide that is not current."""
    docs = root / "docs"
    problems = []
    for guide in GUIDES:
        where = f"docs/nl/{guide}.md"
        try:
            text, todo = dutch_guide(docs, guide)
        except InputError as exc:
            problems.append(Stale(where, f"{where}: {exc}"))
            continue
        problems += [Stale(where, f"{where}: {t}") for t in todo]
        path = dutch_guide_path(docs, guide)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            problems.append(Stale(where, f"{where} is not what the generator writes: run `make nl`"))
    return problems
