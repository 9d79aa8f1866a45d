"""A student's working copy of the notebooks: ``my-notebooks/``, ignored by git, beside the tracked ``notebooks/``.

A student opens, runs, edits and saves only the copies, so the clone stays as the teacher
published it: ``git pull`` (or nbgitpuller on a hub) never meets a student's change, and
``make book`` builds from the tracked notebooks. The copies sit at the same depth as
``notebooks/``, so a notebook's relative links (``../data/corpus/...``, ``exercises/...``)
lead where they led. A refresh copies what is new or changed in ``notebooks/`` and never
overwrites a notebook the student changed: the teacher's new version of it goes beside it.
``.ragkit-workspace.json`` records what was copied, so a refresh tells the student's changes
from the teacher's. ``python -m ragkit workspace`` runs it; so does ``/ragkit/workspace`` on
a Jupyter server with this module enabled as an extension (``make lab``, Binder, a hub).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ragkit.errors import InputError
from ragkit.teach import language
from ragkit.teach.classroom.quiet import OURS
from ragkit.teach.untrusted import MAX_NESTING, nesting

__all__ = [
    "CHOICE_ENV",
    "COPIES",
    "MANIFEST",
    "MANIFEST_FORMAT",
    "MAX_BYTES",
    "OPENING_PAGE",
    "SOCKET_PATH_MAX",
    "SOLUTIONS",
    "STARTS",
    "TRACKED",
    "UPDATED",
    "Refresh",
    "as_opened",
    "project",
    "refresh",
    "start",
]

TRACKED = "notebooks"
"""The notebooks as the teacher published them: tracked by git, never edited by a student."""
COPIES = "my-notebooks"
"""The student's copies, beside them: ignored by git."""
MANIFEST = ".ragkit-workspace.json"
SOLUTIONS = "solutions"
"""The folder of worked solutions: never copied into a student's workspace (self-study opens notebooks/solutions/)."""
MANIFEST_FORMAT = "ragkit-workspace-1"
UPDATED = "-updated"
"""Suffix of the teacher's new version of a notebook the student changed, written beside it."""
MAX_BYTES = 50_000_000
"""A copy larger than this is not read (and counts as changed): a student's file is read as hostile."""
CHOICE_ENV = "RAGKIT_COURSE_LANGUAGE"
"""The course's language a server opens by default (``make lab-nl`` sets ``nl``): not RAGKIT_LANGUAGE, which a kernel
reads, so an English notebook opened beside it still speaks English."""
STARTS = {"en": "00-start-here.ipynb", "nl": "nl/00-start-here.nl.ipynb"}
"""Where each language's course starts, under my-notebooks/."""


def start() -> str:
    """The notebook the course's link opens when it names none: the chosen language's 00 (English by default)."""
    return STARTS.get(os.environ.get(CHOICE_ENV, "en"), STARTS["en"])


@dataclass(frozen=True)
class Refresh:
    """What a refresh did, notebook by notebook (paths relative to the copies' folder); prints itself."""

    folder: Path
    copied: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    kept: tuple[tuple[str, str], ...] = ()
    """Notebooks the student changed whose tracked version changed too: (notebook, where the new version went)."""
    unchanged: int = 0
    translated: tuple[str, ...] = ()
    """The notebooks in a language folder (``nl/00-start-here.nl.ipynb``): a translated edition."""

    def __str__(self) -> str:
        lines = [
            f"Your notebooks are in {self.folder}: work there. They are yours; git ignores them, so updating "
            f"the course (`git pull`, or the hub's link) never touches them."
        ]
        if self.copied:
            lines.append(f"Copied from {TRACKED}/: {', '.join(self.copied)}.")
        if self.updated:
            lines.append(f"Updated to the teacher's new version (you had not changed them): {', '.join(self.updated)}.")
        for name, beside in self.kept:
            lines.append(f"Kept your {name} (you changed it); the teacher's new version is {beside}.")
        if not (self.copied or self.updated or self.kept):
            lines.append(f"All {self.unchanged} notebooks are up to date.")
        if any(rel.startswith("nl/") for rel in self.translated):  # each language's start, the Dutch said in Dutch
            lines.append(
                f"The course in English: {COPIES}/, starting with {STARTS['en']}. In het Nederlands: "
                f"{COPIES}/nl/, begin met {STARTS['nl'].removeprefix('nl/')} (`make lab-nl` opent het "
                "voortaan)."
            )
        return "\n".join(lines)


def project(start: Path | None = None) -> Path:
    """The project folder: ``start`` (default: the current folder) or the clone ragkit runs from, with notebooks/."""
    from ragkit.plumbing.locations import checkout

    for candidate in [Path(start)] if start is not None else [Path.cwd(), checkout()]:
        if candidate is not None and (candidate / TRACKED).is_dir():
            return candidate.resolve()
    raise InputError(
        f"no {TRACKED}/ folder in {start or Path.cwd()}: run this from the course's folder "
        "(the clone), or give it with --project"
    )


def _tracked(root: Path) -> list[str]:
    """The notebooks a student works in, as paths under notebooks/: no checkpoints, no worked solutions."""
    found = []
    for path in sorted((root / TRACKED).rglob("*.ipynb")):
        rel = path.relative_to(root / TRACKED)
        if not ({".ipynb_checkpoints", SOLUTIONS} & set(rel.parts)) and path.is_file() and not path.is_symlink():
            found.append(rel.as_posix())
    return found


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _cells(data: bytes) -> str | None:
    """What a student can change in a notebook, hashed: its cells' types and sources (None: not a notebook)."""
    try:
        cells = json.loads(data)["cells"]
        return _sha(
            json.dumps(
                [(c["cell_type"], c["source"] if isinstance(c["source"], str) else "".join(c["source"])) for c in cells]
            ).encode()
        )
    except (ValueError, KeyError, TypeError):
        return None


def _read(path: Path) -> bytes | None:
    """A student's file, if it is a regular file of a sane size (anything else counts as changed)."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        return path.read_bytes()
    except OSError:
        return None


def _write(path: Path, data: bytes) -> None:
    """Write aside, then rename: an open JupyterLab never reads half a notebook."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def as_opened(data: bytes) -> bytes:
    """A notebook as JupyterLab leaves it once its kernel has started: with the ``language_info`` that kernel reports
    (this Python's ipykernel). JupyterLab writes it into a notebook that lacks it, which then opens as unsaved."""
    from ipykernel.ipkernel import IPythonKernel

    try:
        nb = json.loads(data)
        if nb["metadata"].get("language_info") == IPythonKernel.language_info:
            return data
        nb["metadata"]["language_info"] = IPythonKernel.language_info
    except (ValueError, KeyError, TypeError, AttributeError):
        return data  # not a notebook: copied as it is
    return (json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def _manifest(folder: Path) -> dict[str, dict[str, str]]:
    """What the last refresh copied; a manifest that is not one (edited, too deep, not JSON) counts as none."""
    raw = _read(folder / MANIFEST)
    try:
        if raw is not None and nesting(raw.decode("utf-8", "replace")) > MAX_NESTING:
            return {}  # the student's file, read as hostile: deep nesting would exhaust the parser's recursion
        data = json.loads(raw) if raw is not None else {}
        return (
            {str(k): dict(v) for k, v in data.get("copied", {}).items()}
            if data.get("format") == MANIFEST_FORMAT
            else {}
        )
    except (ValueError, TypeError, AttributeError, RecursionError):
        return {}


def refresh(root: Path) -> Refresh:
    """Create or refresh ``root/my-notebooks/`` from ``root/notebooks/``; a notebook the student changed is kept."""
    folder = root / COPIES
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise InputError(f"{folder} is not a folder: move it away, then run `python -m ragkit workspace` again")
    manifest = _manifest(folder)
    copied, updated, kept, unchanged = [], [], [], 0
    tracked = _tracked(root)
    for rel in tracked:
        source = (root / TRACKED / rel).read_bytes()
        record = {"sha": _sha(source), "cells": _cells(source) or ""}
        mine = folder / rel
        theirs = _read(mine)
        before = manifest.get(rel)
        if not mine.exists() and not mine.is_symlink():
            _write(mine, as_opened(source))
            copied.append(rel)
        elif before is not None and before.get("sha") == record["sha"]:
            unchanged += 1
            continue
        elif theirs is not None and _cells(theirs) == record["cells"]:
            unchanged += 1  # the copy already has these cells (maybe with outputs): nothing to bring
        elif theirs is not None and before is not None and _cells(theirs) == before.get("cells"):
            _write(mine, as_opened(source))  # only run (outputs) or not touched: the teacher's new version replaces it
            updated.append(rel)
        else:
            beside = PurePosixPath(rel).with_name(PurePosixPath(rel).stem + UPDATED + ".ipynb").as_posix()
            target = folder / beside
            if target.is_symlink() or (
                target.exists()
                and _cells(_read(target) or b"") != _cells(source)
                and _sha(_read(target) or b"") != manifest.get(beside, {}).get("sha")
            ):
                kept.append((rel, f"not written: {beside} is there and you changed it too (rename it, then refresh)"))
                continue
            written = as_opened(source)
            _write(target, written)
            manifest[beside] = {"sha": _sha(written), "cells": record["cells"]}  # as written: untouched is untouched
            kept.append((rel, f"{COPIES}/{beside}"))
            continue
        manifest[rel] = record
    _write(folder / MANIFEST, json.dumps({"format": MANIFEST_FORMAT, "copied": manifest}, indent=1).encode())
    translations = set(language.LANGUAGES) - {language.SOURCE}
    translated = tuple(rel for rel in tracked if "/" in rel and rel.split("/", 1)[0] in translations)
    return Refresh(folder, tuple(copied), tuple(updated), tuple(kept), unchanged, translated)


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """This module is a Jupyter server extension (enabled in binder/jupyter_server_config.json)."""
    return [{"module": "ragkit.teach.classroom.workspace"}]


OPENING_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Opening the course</title></head>
<body><form method="post" action="{action}">{xsrf}
<input type="hidden" name="folder" value="{folder}"><input type="hidden" name="open" value="{open}">
<p>Copying the course's notebooks into your {copies}/ and opening {open}.</p>
<button type="submit">Open the course</button></form>
<script>document.forms[0].submit()</script></body></html>
"""
"""The page ``GET /ragkit/workspace`` answers: a form that POSTs itself, carrying the server's XSRF token. A GET changes
nothing (another site can make a student's browser send one); the POST, which another site cannot forge without the
token, refreshes the copies. The student still clicks once: the page sends itself."""


def _load_jupyter_server_extension(server_app) -> None:
    """``/ragkit/workspace?open=NOTEBOOK&folder=PROJECT``: refresh the student's copies, then open one in JupyterLab.

    ``folder`` is the project's folder under the server's root (nbgitpuller's target on a hub; empty when the
    server runs in the project, as ``make lab`` and Binder do): one link that works the same everywhere. A GET only
    answers with a page that POSTs the same request with Jupyter's XSRF token (``OPENING_PAGE``); the POST does the
    work.
    """
    from html import escape

    from jupyter_server.auth.decorator import authorized
    from jupyter_server.base.handlers import JupyterHandler
    from jupyter_server.utils import url_escape, url_path_join
    from tornado import web

    root = Path(server_app.root_dir).resolve()

    class Open(JupyterHandler):
        auth_resource = "contents"

        def _where(self) -> tuple[Path, Path]:
            where = (root / self.get_argument("folder", "")).resolve()
            target = (where / COPIES / self.get_argument("open", start())).resolve()
            if not (where.is_relative_to(root) and target.is_relative_to(where / COPIES)):
                raise web.HTTPError(400, "folder and open must name paths inside the server's folder")
            return where, target

        @web.authenticated
        @authorized(action="read", resource="contents")  # it writes nothing: the page asks the browser to POST
        def get(self) -> None:
            _where, _target = self._where()
            self.set_header("Content-Type", "text/html; charset=utf-8")
            self.set_header("Cache-Control", "no-store")
            self.finish(
                OPENING_PAGE.format(
                    action=escape(url_path_join(self.base_url, "ragkit", "workspace")),
                    xsrf=self.xsrf_form_html(),
                    folder=escape(self.get_argument("folder", "")),
                    open=escape(self.get_argument("open", start())),
                    copies=COPIES,
                )
            )

        @web.authenticated
        @authorized(action="write", resource="contents")  # it writes the copies; Jupyter checks the XSRF token
        def post(self) -> None:
            where, target = self._where()
            try:
                said = refresh(project(where))
            except InputError as exc:
                raise web.HTTPError(404, str(exc)) from exc
            self.log.info("ragkit workspace: %s", said, extra=OURS)
            tracked = (where / TRACKED / target.relative_to(where / COPIES)).resolve()
            if not target.exists() and tracked.is_relative_to(where / TRACKED) and tracked.is_file():
                target = tracked  # a worked solution is never copied: it opens where it is tracked, to be read
            self.redirect(url_path_join(self.base_url, "lab", "tree", url_escape(target.relative_to(root).as_posix())))

    _short_sockets(server_app)
    web_app = server_app.web_app
    web_app.add_handlers(".*$", [(url_path_join(web_app.settings["base_url"], "ragkit", "workspace"), Open)])


SOCKET_PATH_MAX = 100
"""Bytes a unix socket's path may take, with a margin (the system's limit is 104 on macOS, 108 on Linux)."""


def _short_sockets(server_app) -> None:
    """Kernels on unix sockets (binder/jupyter_server_config.json) name them after their connection file: under a
    long home folder that path is too long for a socket and the kernel cannot start, so use a short private one."""
    import atexit
    import shutil
    import tempfile

    manager = server_app.kernel_manager
    longest = os.path.join(manager.connection_dir, f"kernel-{'0' * 36}-ipc-99")  # a kernel id is a uuid
    if len(os.fsencode(longest)) > SOCKET_PATH_MAX:
        manager.connection_dir = tempfile.mkdtemp(prefix="ragkit-kernels-")  # mode 0700: this user's only
        atexit.register(shutil.rmtree, manager.connection_dir, ignore_errors=True)  # made here, removed here
        server_app.log.info(
            "ragkit: kernel sockets in %s (%s is too long a path for them)",
            manager.connection_dir,
            longest,
            extra=OURS,
        )
