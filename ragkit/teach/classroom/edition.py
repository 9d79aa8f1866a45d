"""The Dutch edition: each Dutch notebook generated from its English one and a catalogue of translated markdown cells.

Code is written once, in English notebooks; a Dutch notebook is never edited by hand. Its catalogue
(``notebooks/nl/catalogue/<name>.toml``) holds one ``[[cell]]`` per markdown cell: the English cell's id, the first
12 hex digits of the sha256 of its source, that source (``en``, so a translator sees what changed) and the Dutch
(``nl``). A changed English cell no longer matches its entry's hash: the entry is stale, as gettext marks a fuzzy
entry, and ``python -m ragkit edition --check`` fails until a translator updates it and runs ``make nl``.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import jupytext  # type: ignore[import-untyped]
import nbformat
from markdown_it import MarkdownIt

from ragkit.errors import InputError
from ragkit.terminal import shown

LANGUAGE = "nl"
PILOT = ("00-start-here", "06-thresholds", "exercises/ex2-choose-a-threshold")
"""The notebooks of the Dutch pilot, named relative to notebooks/."""
LANGUAGE_CELL_ID = "nl-language"
LANGUAGE_CELL = ("# Dit notebook spreekt Nederlands: de zinnen die ragkit voor je schrijft (uitleg, feedback, quiz)\n"
                 "# komen uit de Nederlandse catalogus van ragkit.teach.language.\n"
                 "from ragkit.teach import language\n"
                 "\n"
                 'language.use("nl")')
UPDATE = ("update the catalogue (notebooks/nl/catalogue/NAME.toml: sha, en and nl of each entry named above), "
          "then run `make nl` (python -m ragkit edition) and commit the regenerated notebooks")


@dataclass(frozen=True)
class Entry:
    """One translated markdown cell: the English cell it translates (id, hash, source) and its Dutch."""

    id: str
    sha: str
    en: str
    nl: str


@dataclass(frozen=True)
class Problem:
    """One reason the committed Dutch edition is out of date, in words a translator can act on."""

    notebook: str
    message: str

    def __str__(self) -> str:
        return f"{self.notebook}: {self.message}"


def cell_sha(source: str) -> str:
    """The hash that ties a translation to the English source it was made from."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]


def catalogue_path(notebooks: Path, name: str) -> Path:
    """Where the catalogue of notebook ``name`` lives."""
    return notebooks / LANGUAGE / "catalogue" / f"{name}.toml"


def read_catalogue(path: Path) -> dict[str, Entry]:
    """The entries of one catalogue, keyed by the English cell id."""
    try:
        with path.open("rb") as f:
            cells = tomllib.load(f).get("cell", [])
    except FileNotFoundError:
        raise InputError(f"{path} is missing: write one [[cell]] per markdown cell (id, sha, en, nl)") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path} is not valid TOML ({exc}): fix it, then run `make nl`") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path} could not be read ({exc}): save it as UTF-8 TOML, then run `make nl`") from None
    except RecursionError:
        raise InputError(f"{path} is nested too deep to be a catalogue: write one [[cell]] per markdown cell "
                         "(id, sha, en, nl)") from None
    if not isinstance(cells, list):
        raise InputError(f"{path}: `cell` must be an array of tables ([[cell]] entries), not {type(cells).__name__}")
    entries: dict[str, Entry] = {}
    for n, cell in enumerate(cells, 1):
        if not isinstance(cell, dict):
            raise InputError(f"{path}: entry {n} is not a table: write it as [[cell]] with id, sha, en and nl")
        missing = sorted({"id", "sha", "en", "nl"} - set(cell))
        if missing:
            raise InputError(f"{path}: the entry '{shown(str(cell.get('id', n)))}' (entry {n}) has no "
                             f"{', '.join(missing)}: add it")
        odd = sorted(k for k in ("id", "sha", "en", "nl") if not isinstance(cell[k], str))
        if odd:
            raise InputError(f"{path}: in the entry '{shown(str(cell['id']))}' (entry {n}), {', '.join(odd)} must be "
                             "text (a quoted string)")
        if cell["id"] in entries:
            raise InputError(f"{path} translates cell {cell['id']!r} twice: keep one entry")
        entries[cell["id"]] = Entry(cell["id"], cell["sha"], cell["en"], cell["nl"])
    return entries


def link_targets(markdown: str) -> list[str]:
    """The relative targets of the links and images in ``markdown`` (not web addresses, nor anchors)."""
    targets = []
    for token in _inline_tokens(MarkdownIt().parse(markdown)):
        target = token.attrGet("href") or token.attrGet("src")
        if isinstance(target, str) and _relative(target):
            targets.append(target)
    return targets


def deeper_links(markdown: str) -> str:
    """``markdown`` with every relative link and image one folder deeper (a Dutch notebook sits in notebooks/nl/)."""
    for target in set(link_targets(markdown)):
        markdown = markdown.replace(f"]({target}", f"](../{target}")
    return markdown


def _inline_tokens(tokens: list) -> Iterator:
    for token in tokens:
        yield token
        yield from _inline_tokens(token.children or [])


def _relative(target: str) -> bool:
    return not re.match(r"[a-z][a-z0-9+.-]*:|#|/", target, re.I)


def language_cell() -> nbformat.NotebookNode:
    """The cell that makes the kernel speak Dutch."""
    cell = nbformat.v4.new_code_cell(LANGUAGE_CELL)
    cell.id = LANGUAGE_CELL_ID
    return cell


def _imports_ragkit(cell: nbformat.NotebookNode) -> bool:
    return cell.cell_type == "code" and re.search(r"^\s*(from|import) ragkit\b", cell.source, re.M) is not None


def translate(english: nbformat.NotebookNode, entries: dict[str, Entry]) -> nbformat.NotebookNode:
    """The Dutch notebook: translated markdown, code verbatim, the language cell before the first ragkit import."""
    dutch = copy.deepcopy(english)
    for cell in dutch.cells:
        entry = entries.get(cell.id)
        # a stale entry still gives the reader Dutch (the check fails until it is updated); a missing one, English
        if cell.cell_type == "markdown" and entry is not None:
            cell.source = deeper_links(entry.nl)
    dutch.cells.insert(_language_cell_at(dutch.cells), language_cell())
    return dutch


def _language_cell_at(cells: list[nbformat.NotebookNode]) -> int:
    """Right after the code cell before the first that imports ragkit (the Colab cell, which installs it)."""
    first = next((i for i, c in enumerate(cells) if _imports_ragkit(c)), None)
    if first is None:
        raise InputError("the notebook never imports ragkit: it has nothing to say in Dutch")
    before = [i for i, c in enumerate(cells[:first]) if c.cell_type == "code"]
    return before[-1] + 1 if before else first


def _read(path: Path) -> nbformat.NotebookNode:
    """A valid notebook whose cells all have ids, or an InputError that names it: missing, not UTF-8, not a notebook."""
    try:
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)  # read only warns: a cell of no kind would fail later, far from its cause
    except FileNotFoundError:
        raise InputError(f"{path} is missing") from None
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text: a notebook is JSON in UTF-8") from None
    except Exception as exc:  # nbformat raises its own NotJSONError, ValidationError and others
        raise InputError(f"{path} is not a notebook ({type(exc).__name__}: {shown(str(exc), 200)})") from None
    if unnamed := [n for n, cell in enumerate(notebook.cells, 1) if not isinstance(cell.get("id"), str)]:
        raise InputError(f"{path}: cell {unnamed[0]} has no id (a catalogue names cells by id): open and save the "
                         "notebook in Jupyter, which gives every cell one (nbformat 4.5)")
    return notebook


def dutch_path(notebooks: Path, name: str) -> Path:
    """The Dutch notebook of ``name``."""
    return notebooks / LANGUAGE / f"{name}.ipynb"


def twin_path(notebooks: Path, name: str) -> Path:
    """The py:percent twin of the Dutch notebook of ``name`` (jupytext.toml pairs notebooks/ with notebooks/twins/)."""
    return notebooks / "twins" / LANGUAGE / f"{name}.py"


def generated(notebooks: Path, name: str) -> tuple[str, str]:
    """The text of the Dutch notebook of ``name`` and of its twin, as the generator writes them."""
    dutch = translate(_read(notebooks / f"{name}.ipynb"), read_catalogue(catalogue_path(notebooks, name)))
    return nbformat.writes(dutch) + "\n", jupytext.writes(dutch, fmt="py:percent")


def write(notebooks: Path, names: tuple[str, ...] = PILOT) -> list[Path]:
    """Write every Dutch notebook and twin of ``names``; the paths written. Nothing is written if one cannot be made."""
    texts = {name: generated(notebooks, name) for name in names}
    written = []
    for name, generated_texts in texts.items():
        for path, text in zip((dutch_path(notebooks, name), twin_path(notebooks, name)), generated_texts):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def _diff(old: str, new: str) -> str:
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), "catalogue en", "English notebook", lineterm="")
    return "\n".join("    " + line for line in lines)


def check(notebooks: Path, names: tuple[str, ...] = PILOT) -> list[Problem]:
    """Every stale, missing and orphaned entry, and every committed Dutch file the generator would write otherwise."""
    problems = []
    for name in names:
        try:
            problems += _check_one(notebooks, name)
        except InputError as exc:  # a broken catalogue or notebook is this notebook's problem; the others are checked
            problems.append(Problem(name, str(exc)))
    return problems


def _check_one(notebooks: Path, name: str) -> list[Problem]:
    """The problems of one notebook's translation; an InputError when its catalogue or notebook cannot be read."""
    problems = []
    english = _read(notebooks / f"{name}.ipynb")
    entries = read_catalogue(catalogue_path(notebooks, name))
    markdown = {c.id: c.source for c in english.cells if c.cell_type == "markdown"}
    for cell_id, source in markdown.items():
        entry = entries.get(cell_id)
        if entry is None:
            problems.append(Problem(name, f"markdown cell {cell_id} has no translation (sha {cell_sha(source)})"))
        elif entry.sha != cell_sha(source):
            problems.append(Problem(name, f"cell {cell_id} is stale: its English changed (new sha "
                                          f"{cell_sha(source)}, the entry has {entry.sha}):\n"
                                          + _diff(entry.en, source)))
    for cell_id in sorted(set(entries) - set(markdown)):
        problems.append(Problem(name, f"the entry {cell_id} translates no markdown cell of the English notebook "
                                      "(removed, or no longer markdown): delete it"))
    for path, text in zip((dutch_path(notebooks, name), twin_path(notebooks, name)), generated(notebooks, name)):
        if not path.is_file() or path.read_bytes() != text.encode("utf-8"):
            problems.append(Problem(name, f"{PurePosixPath(path.relative_to(notebooks))} is not what the "
                                          "generator writes"))
    return problems
