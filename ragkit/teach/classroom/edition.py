"""The Dutch edition: each Dutch notebook generated from its English one and a catalogue of translated markdown cells.

Code is written once, in English notebooks; a Dutch notebook is never edited by hand. Its catalogue
(``notebooks/nl/catalogue/<name>.toml``) holds one ``[[cell]]`` per markdown cell and per code cell with comments:
the English cell's id, the first 12 hex digits of the sha256 of its source, that source (``en``, so a translator sees
what changed) and the Dutch (``nl``; for a code cell the same code with its comments in Dutch). An empty ``nl`` is a
cell not yet translated: it stays English and the check names it.
A changed English cell no longer matches its entry's hash: the entry is stale, as gettext marks a fuzzy entry,
and ``python -m ragkit edition --check`` fails until a translator updates it and runs ``make nl``.
"""

from __future__ import annotations

import ast
import copy
import difflib
import hashlib
import io
import json
import re
import tokenize
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import jupytext  # type: ignore[import-untyped]
import nbformat
from markdown_it import MarkdownIt

from ragkit.errors import InputError
from ragkit.teach.classroom.generated import Stale, toml_string
from ragkit.terminal import shown

__all__ = [
    "COURSE",
    "LANGUAGE",
    "LANGUAGE_CELL",
    "LANGUAGE_CELL_ID",
    "UPDATE",
    "CellTranslation",
    "catalogue_path",
    "cell_catalogue",
    "cell_sha",
    "check",
    "commented",
    "deeper_links",
    "dutch_notebook",
    "dutch_notebook_path",
    "language_cell",
    "link_targets",
    "same_code",
    "skeleton",
    "translate",
    "twin_path",
    "write",
]

LANGUAGE = "nl"
COURSE = (
    "00-start-here",
    "01-chunking",
    "02-dense-retrieval",
    "02b-statistics-further",
    "03-bm25-and-hybrid",
    "03b-tuning",
    "04-reranking",
    "05-distances",
    "06-thresholds",
    "07-citations",
    "08-production",
    "08b-approximate-search",
    *(
        f"{folder}/{name}"
        for folder in ("exercises", "solutions")
        for name in (
            "ex1-destroyed-needle",
            "ex2-choose-a-threshold",
            "ex3-ticket-phrasings",
            "ex4-design-a-header",
            "ex5-cite-your-own-document",
            "ex6-rank-metrics-by-hand",
            "ex7-choose-efsearch",
        )
    ),
)
"""Every notebook of the course, named relative to notebooks/: the Dutch edition translates them all."""
LANGUAGE_CELL_ID = "nl-language"
LANGUAGE_CELL = (
    "# Dit notebook spreekt Nederlands: de zinnen die ragkit voor je schrijft (uitleg, feedback, quiz)\n"
    "# komen uit de Nederlandse catalogus van ragkit.teach.language.\n"
    "from ragkit.teach import language\n\n"
    'language.use("nl")'
)
UPDATE = (
    "update the catalogue (notebooks/nl/catalogue/NAME.toml: sha, en and nl of each entry named above; for a "
    "guide docs/nl/catalogue/GUIDE/*.toml), then run `make nl` (python -m ragkit edition) and commit the "
    "regenerated notebooks and guides"
)


@dataclass(frozen=True)
class CellTranslation:
    """One translated cell (markdown, or code with comments): the English cell it translates (id, hash, source) and
    its Dutch."""

    id: str
    sha: str
    en: str
    nl: str


def _stale(name: str, message: str) -> Stale:
    """One reason the committed Dutch edition of notebook ``name`` is out of date, in words a translator can act on."""
    return Stale(name, f"{name}: {message}")


def cell_sha(source: str) -> str:
    """The hash that ties a translation to the English source it was made from."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]


def catalogue_path(notebooks: Path, name: str) -> Path:
    """Where the catalogue of notebook ``name`` lives."""
    return notebooks / LANGUAGE / "catalogue" / f"{name}.toml"


def cell_catalogue(path: Path) -> dict[str, CellTranslation]:
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
        raise InputError(
            f"{path} is nested too deep to be a catalogue: write one [[cell]] per markdown cell (id, sha, en, nl)"
        ) from None
    if not isinstance(cells, list):
        raise InputError(f"{path}: `cell` must be an array of tables ([[cell]] entries), not {type(cells).__name__}")
    entries: dict[str, CellTranslation] = {}
    for n, cell in enumerate(cells, 1):
        if not isinstance(cell, dict):
            raise InputError(f"{path}: entry {n} is not a table: write it as [[cell]] with id, sha, en and nl")
        missing = sorted({"id", "sha", "en", "nl"} - set(cell))
        if missing:
            raise InputError(
                f"{path}: the entry '{shown(str(cell.get('id', n)))}' (entry {n}) has no {', '.join(missing)}: add it"
            )
        odd = sorted(k for k in ("id", "sha", "en", "nl") if not isinstance(cell[k], str))
        if odd:
            raise InputError(
                f"{path}: in the entry '{shown(str(cell['id']))}' (entry {n}), {', '.join(odd)} must be "
                "text (a quoted string)"
            )
        if cell["id"] in entries:
            raise InputError(f"{path} translates cell {cell['id']!r} twice: keep one entry")
        entries[cell["id"]] = CellTranslation(cell["id"], cell["sha"], cell["en"], cell["nl"])
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


def commented(source: str) -> bool:
    """Whether a code cell has a comment, or a sentence for people, a Dutch reader should read in Dutch."""
    return bool(_comments(source)[1]) or bool(_sentences(source))


def _sentences(source: str) -> list[tuple[int, int, int, int, str]]:
    """Where ``source`` has a string written for people: a docstring, an assert's message, a print's first argument.

    Each as (first line, first column, last line, end column), ast's positions, with an f-string's expressions; none
    in code ast cannot parse (a magic). A Dutch cell may say these in Dutch (the Colab cell prints before ragkit,
    and its ``say``, is installed).
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr):
                found.append(first.value)
        elif isinstance(node, ast.Assert) and node.msg is not None:
            found.append(node.msg)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print" and node.args:
            found.append(node.args[0])
    spans = []
    for expr in found:
        if isinstance(expr, ast.JoinedStr) or (isinstance(expr, ast.Constant) and isinstance(expr.value, str)):
            assert expr.end_lineno is not None and expr.end_col_offset is not None
            # an f-string's words may change, never the code it runs: its expressions, in order, stay in the code
            code = [ast.unparse(v) for v in getattr(expr, "values", []) if isinstance(v, ast.FormattedValue)]
            spans.append((expr.lineno, expr.col_offset, expr.end_lineno, expr.end_col_offset, repr(code)))
    return spans


def _unsaid(source: str) -> str:
    """``source`` with each string for people (``_sentences``) replaced by a placeholder, so that only code compares."""
    lines = source.splitlines(keepends=True)
    for first, start, last, end, code in sorted(_sentences(source), reverse=True):
        # ast's columns count UTF-8 bytes
        head = lines[first - 1].encode()[:start].decode()
        tail = lines[last - 1].encode()[end:].decode()
        lines[first - 1 : last] = [f"{head}SAID{code}{tail}"]
    return "".join(lines)


def _comments(source: str) -> tuple[list[str], list[str]]:
    """The code of ``source`` without its comments (each line's code, stripped; strings for people as one placeholder,
    see ``_sentences``) and its comments."""
    code: list[str] = []
    comments: list[str] = []
    source = _unsaid(source)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):  # a magic or shell line: comments are whole lines
        for line in source.splitlines():
            (comments if line.lstrip().startswith("#") else code).append(line.strip())
        return [c for c in code if c], comments
    lines = source.splitlines()
    dropped: dict[int, int] = {}
    for token in tokens:
        if token.type == tokenize.COMMENT:
            comments.append(token.string)
            dropped[token.start[0]] = token.start[1]
    for number, line in enumerate(lines, 1):
        kept = line[: dropped[number]] if number in dropped else line
        if kept.strip():
            code.append(kept.rstrip())
    return code, comments


def same_code(english: str, dutch: str) -> bool:
    """Whether ``dutch`` is ``english`` with other comments only: the same lines of code, in the same order."""
    return _comments(english)[0] == _comments(dutch)[0]


def _imports_ragkit(cell: nbformat.NotebookNode) -> bool:
    return cell.cell_type == "code" and re.search(r"^\s*(from|import) ragkit\b", cell.source, re.M) is not None


def translate(english: nbformat.NotebookNode, entries: dict[str, CellTranslation]) -> nbformat.NotebookNode:
    """The Dutch notebook: translated markdown, code verbatim, the language cell before the first ragkit import."""
    dutch = copy.deepcopy(english)
    for cell in dutch.cells:
        entry = entries.get(cell.id)
        # a stale entry still gives the reader Dutch (the check fails until it is updated); a missing one, English
        if entry is None or not entry.nl.strip():
            continue
        if cell.cell_type == "markdown":
            cell.source = deeper_links(entry.nl)
        elif cell.cell_type == "code" and same_code(cell.source, entry.nl):
            cell.source = entry.nl  # only its comments differ: a code entry never changes what runs
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
        raise InputError(
            f"{path}: cell {unnamed[0]} has no id (a catalogue names cells by id): open and save the "
            "notebook in Jupyter, which gives every cell one (nbformat 4.5)"
        )
    return notebook


def dutch_notebook_path(notebooks: Path, name: str) -> Path:
    """The Dutch notebook of ``name``: ``nl/06-thresholds.nl.ipynb``, so that a tab tells it from the English one."""
    return notebooks / LANGUAGE / f"{name}.{LANGUAGE}.ipynb"


def twin_path(notebooks: Path, name: str) -> Path:
    """The py:percent twin of the Dutch notebook of ``name`` (jupytext.toml pairs notebooks/ with notebooks/twins/)."""
    return notebooks / "twins" / LANGUAGE / f"{name}.{LANGUAGE}.py"


def dutch_notebook(notebooks: Path, name: str) -> tuple[str, str]:
    """The text of the Dutch notebook of ``name`` and of its twin, as the generator writes them."""
    dutch = translate(_read(notebooks / f"{name}.ipynb"), cell_catalogue(catalogue_path(notebooks, name)))
    return nbformat.writes(dutch) + "\n", jupytext.writes(dutch, fmt="py:percent")


def skeleton(root: Path) -> list[Path]:
    """Add an entry with an empty ``nl`` for every cell each notebook's catalogue lacks (a new catalogue if none);
    the catalogues, one per notebook of the course."""
    return [_skeleton_of(root / "notebooks", name) for name in COURSE]


def _skeleton_of(notebooks: Path, name: str) -> Path:
    """Add an entry with an empty ``nl`` for every cell of ``name`` its catalogue lacks (a new catalogue if none)."""
    path = catalogue_path(notebooks, name)
    english = _read(notebooks / f"{name}.ipynb")
    have = cell_catalogue(path) if path.is_file() else {}
    text = (
        path.read_text(encoding="utf-8")
        if path.is_file()
        else (
            f"# The Dutch of {name}.ipynb, one [[cell]] per markdown cell and per code cell with comments: id and sha "
            "(first 12 hex of\n# the sha256) of the English cell, its English source (en) as translated, and the Dutch "
            "(nl; for code, the same code\n# with Dutch comments). After an English edit, `python -m ragkit edition "
            "--check` lists the stale entries.\n"
        )
    )
    for cell in english.cells:
        wanted = cell.cell_type == "markdown" or (cell.cell_type == "code" and commented(cell.source))
        if wanted and cell.id not in have:
            text += (
                f"\n[[cell]]\nid = {json.dumps(cell.id)}\nsha = {json.dumps(cell_sha(cell.source))}\n"
                f"en = {toml_string(cell.source)}\nnl = ''\n"
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def write(root: Path) -> list[Path]:
    """Write every Dutch notebook and twin of the course; the paths written. Nothing is written if one can't be made."""
    notebooks = root / "notebooks"
    texts = {name: dutch_notebook(notebooks, name) for name in COURSE}
    written = []
    for name, generated_texts in texts.items():
        for path, text in zip((dutch_notebook_path(notebooks, name), twin_path(notebooks, name)), generated_texts):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def _diff(old: str, new: str) -> str:
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), "catalogue en", "English notebook", lineterm="")
    return "\n".join("    " + line for line in lines)


def check(root: Path) -> list[Stale]:
    """Every stale, missing and orphaned entry, and every committed Dutch file the generator would write otherwise."""
    notebooks = root / "notebooks"
    problems = []
    for name in COURSE:
        try:
            problems += _check_one(notebooks, name)
        except InputError as exc:  # a broken catalogue or notebook is this notebook's problem; the others are checked
            problems.append(_stale(name, str(exc)))
    return problems


def _check_one(notebooks: Path, name: str) -> list[Stale]:
    """The problems of one notebook's translation; an InputError when its catalogue or notebook cannot be read."""
    problems = []
    english = _read(notebooks / f"{name}.ipynb")
    entries = cell_catalogue(catalogue_path(notebooks, name))
    markdown = {c.id: c.source for c in english.cells if c.cell_type == "markdown"}
    code = {c.id: c.source for c in english.cells if c.cell_type == "code" and commented(c.source)}
    for cell_id, source in (markdown | code).items():
        entry = entries.get(cell_id)
        kind = "markdown cell" if cell_id in markdown else "code cell (its comments)"
        if entry is None:
            problems.append(_stale(name, f"{kind} {cell_id} has no translation (sha {cell_sha(source)})"))
        elif not entry.nl.strip():
            problems.append(_stale(name, f"{kind} {cell_id} is not translated yet: its `nl` is empty"))
        elif cell_id in code and not same_code(source, entry.nl):
            problems.append(
                _stale(
                    name,
                    f"the Dutch of code cell {cell_id} changes its code, not only its "
                    "comments: copy the English code and translate the comments only",
                )
            )
        elif entry.sha != cell_sha(source):
            problems.append(
                _stale(
                    name,
                    f"cell {cell_id} is stale: its English changed (new sha "
                    f"{cell_sha(source)}, the entry has {entry.sha}):\n" + _diff(entry.en, source),
                )
            )
    for cell_id in sorted(set(entries) - set(markdown) - set(code)):
        problems.append(
            _stale(
                name,
                f"the entry {cell_id} translates no markdown cell and no commented code cell "
                "of the English notebook (removed, or of another kind now): delete it",
            )
        )
    paths = (dutch_notebook_path(notebooks, name), twin_path(notebooks, name))
    for path, text in zip(paths, dutch_notebook(notebooks, name)):
        if not path.is_file() or path.read_bytes() != text.encode("utf-8"):
            problems.append(
                _stale(name, f"{PurePosixPath(path.relative_to(notebooks))} is not what the generator writes")
            )
    return problems
