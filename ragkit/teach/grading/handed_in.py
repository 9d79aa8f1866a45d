"""Which submission is whose: the notebooks handed in, each with its student by the path rule, never by its content.

A notebook's student comes from its path as the teacher gave it, by a documented rule (``LAYOUTS``), checked against
the teacher's class list when there is one, never from the notebook: a path that runs through a link is refused, never
followed. Its exercise comes from its file name, its language from the cells that choose one or from its folder.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ragkit.errors import InputError
from ragkit.plumbing.bounded import open_folder, read_beneath, read_regular
from ragkit.teach import language
from ragkit.teach.untrusted import FoundFile, linked, readable, refuse_overwrite, walk

__all__ = [
    "LAYOUTS",
    "MAX_CLASS_LIST",
    "MAX_NOTEBOOK",
    "HandedIn",
    "Kept",
    "Spool",
    "Submission",
    "exercise_of",
    "found_under",
    "language_by_path",
    "read_class_list",
    "refuse_outputs",
    "spoken_in",
    "student_of",
    "submissions",
]

LAYOUTS = ("home", "platform")
"""How a notebook's path names its student: ``home``, the folder after the first ``home`` of the path as given
(``/home/<student>/...``, a hub); ``platform``, the first folder under the PATH given
(``<download>/<student>/.../<file>.ipynb``, a learning platform's download). Neither resolves a link."""
MAX_CLASS_LIST = 2**20
"""Bytes a class list may take: a login a line, tens of thousands of them."""
MAX_NOTEBOOK = 32 * 2**20
"""Bytes a notebook handed in may take."""
_EXERCISE_NAME = re.compile(r"(?<![a-z0-9])ex([1-7])(?![0-9])")
_CHOSEN = re.compile(
    r"""["']id["']\s*:\s*["']([a-z]{2})-language["']"""
    r"""|\blanguage\.use\(\s*(?:\\"|')([a-z]{2})(?:\\"|')\s*\)"""
)
"""In a notebook's JSON text: a translation's language cell (``"id": "nl-language"``, as the edition writes it), or a
call ``language.use("nl")`` in a cell's source (its quotes escaped in JSON)."""


class Spool:
    """The notebooks handed in, as read when they were found, kept in one unnamed temporary file: not in memory (a
    class's notebooks may take gigabytes), and not under any name a student could reach or replace."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="ragkit-handed-in-")
        self._lock = threading.Lock()
        self._end = 0

    def keep(self, data: bytes) -> Kept:
        """Keep ``data``; where it is kept."""
        with self._lock:
            offset, self._end = self._end, self._end + len(data)
            written = 0
            while written < len(data):
                written += os.pwrite(self._file.fileno(), data[written:], offset + written)
        return Kept(self, offset, len(data))

    def read(self, offset: int, size: int) -> bytes:
        """The ``size`` bytes kept at ``offset``."""
        data = b""
        while len(data) < size and (block := os.pread(self._file.fileno(), size - len(data), offset + len(data))):
            data += block
        return data


@dataclass(frozen=True)
class Kept:
    """Where a notebook's bytes are kept in the spool."""

    spool: Spool
    offset: int
    size: int

    def read(self) -> bytes:
        """The notebook's bytes, as they were read when it was found."""
        return self.spool.read(self.offset, self.size)


@dataclass(frozen=True)
class Submission:
    """One notebook handed in: whose (by the path rule), which exercise, where, and the language its cells speak."""

    student: str
    exercise: str
    path: Path
    spoken: str | None = field(default=None, compare=False)
    """The language the notebook's own cells choose (``spoken_in``); None where they choose none or it was unread."""
    kept: Kept | None = field(default=None, compare=False, repr=False)
    """Its bytes as read through a descriptor when it was found; None where they could not be read (``unread``)."""
    unread: str = field(default="", compare=False)
    """Why its bytes could not be read (a FIFO, too large, a permission): its row is ``not run`` with it."""

    @property
    def language(self) -> str:
        """The notebook's language: the one its cells choose, else its folder's (``.../nl/exercises/ex2-...``)."""
        return self.spoken or language_by_path(self.path)

    def notebook(self) -> bytes:
        """The bytes handed in, as read when the notebook was found (never looked up by its path again)."""
        if self.kept is None:
            raise InputError(self.unread or "not read when it was found")
        return self.kept.read()


def language_by_path(path: Path) -> str:
    """The language a notebook's path says: a translation's exercise sits in a folder named after its language, or in
    that folder's exercises/, or is named after it (``ex2-choose-a-threshold.nl.ipynb``); else English."""
    folders, name = Path(path).parent.parts[-2:], Path(path).name.lower()
    return next(
        (
            lang
            for lang in language.LANGUAGES
            if lang != language.SOURCE and (lang in folders or name.endswith(f".{lang}.ipynb"))
        ),
        language.SOURCE,
    )


def spoken_in(notebook: bytes) -> str | None:
    """The language a notebook chooses: a translation's language cell (id ``nl-language``, as the edition writes it)
    or a call ``language.use("nl")``; None when it chooses none.

    Scanned as text, never parsed, let alone run: a hostile file costs the grader's own process no more than its
    bytes (the sandbox parses and runs it). The scan chooses only the language of the reasons, never what is judged,
    so a mention of the call elsewhere (a markdown cell, an output) at worst gives Dutch reasons to an English one.
    """
    text = notebook.decode("utf-8", "replace")
    for found in _CHOSEN.finditer(text):
        chosen = found.group(1) or found.group(2)
        if chosen in language.LANGUAGES and chosen != language.SOURCE:
            return chosen
    return None


def exercise_of(name: str) -> str | None:
    """The exercise a notebook's file name is for (``ex1-destroyed-needle.ipynb``, ``alice ex3.ipynb``), or None."""
    found = _EXERCISE_NAME.search(name.lower())
    return f"ex{found.group(1)}" if found and name.lower().endswith(".ipynb") else None


def _given(path: str | Path) -> Path:
    """A path as the teacher gave it, absolute and without ``.``/``..``, no link resolved (links are refused)."""
    return Path(os.path.abspath(path))


def _first_home(parts: tuple[str, ...]) -> int | None:
    """Where the first ``home`` of a path is, when a folder follows it: the home layout's student is that folder."""
    return next((i for i, p in enumerate(parts[:-1]) if p == "home"), None)


def student_of(notebook: Path, root: Path, layout: str) -> str | None:
    """The student a notebook belongs to by the layout's rule, from its path as given; None when the rule names nobody.

    ``home``: the folder after the first ``home`` of the path (``/home/<student>/...``); ``platform``: the first
    folder under ``root``, the PATH given (the notebook's own folder when the PATH is the notebook). The name is
    compared and shown composed (NFC), however the folder's name is written.
    """
    path = _given(notebook)
    if layout == "home":
        index = _first_home(path.parts[:-1])  # the folder after it, not the notebook itself
        return _composed(path.parts[index + 1]) if index is not None else None
    base = _given(root)
    if base == path:  # a notebook named on the command line: its folder is the student's
        return _composed(path.parent.name) or None
    return _composed(path.relative_to(base).parts[0]) if base in path.parents and path.parent != base else None


def _composed(name: str) -> str:
    """A name in Unicode's composed form (NFC): "josé" as macOS zips write it (NFD) is the same student as "josé"."""
    return unicodedata.normalize("NFC", name)


def refuse_outputs(outputs: Iterable[Path | None], inputs: Iterable[str | Path]) -> None:
    """Refuse, before anything runs, an output whose folder is missing, that is a folder, the same file as another
    output or as an input, or that lies inside a folder read: grades never overwrite a submission or land where the
    next grading reads them."""
    given = [_given(p) for p in inputs]
    written: list[Path] = []
    for out in (Path(o) for o in outputs if o is not None):
        where, path = readable(str(out), 160), _given(out)
        if not path.parent.is_dir():
            raise InputError(f"cannot write {where}: its folder does not exist; create it first or name another file")
        if path.is_dir():
            raise InputError(f"{where} is a folder: name a file in it, e.g. {readable(str(path / 'grades.csv'), 160)}")
        refuse_overwrite(path)  # a link or a file of other names there: the grades would be written into another file
        for other in [*given, *written]:
            same = path == other or (path.exists() and other.exists() and os.path.samefile(path, other))
            inside = other.is_dir() and (
                other in path.parents or Path(os.path.realpath(other)) in Path(os.path.realpath(path)).parents
            )
            if same or inside:
                raise InputError(
                    f"{where} is {'one of the files given' if same else 'inside a folder graded'} "
                    f"({readable(str(other), 160)}): name a file elsewhere, so nothing handed in is "
                    "overwritten or read as a submission next time"
                )
        written.append(path)


def read_class_list(path: Path) -> tuple[str, ...]:
    """The teacher's class list: one login a line (as a hub's admin page exports it); blank and ``#`` lines skipped.

    Saved "UTF-8 with BOM" or not; every login composed (NFC), as the students' folders are (``student_of``)."""
    try:
        data = read_regular(Path(path), MAX_CLASS_LIST, "a class list")[0]
    except InputError as exc:  # read_regular says why (no such file, a link, a FIFO, too large): the path and a fix
        raise InputError(
            f"class list {readable(str(path), 160)} not read ({exc}): give a text file with one login a line"
        ) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(
            f"class list {readable(str(path), 160)} is not UTF-8 text: save it as UTF-8, one login a line"
        ) from None
    names = [_composed(line.strip()) for line in text.splitlines()]
    names = [n for n in names if n and not n.startswith("#")]
    if odd := next((n for n in names if "/" in n or not n.isprintable() or n in (".", "..")), None):
        raise InputError(
            f"class list {readable(str(path), 160)}: '{readable(odd)}' is not a login (a login has no '/' "
            "and no control characters): fix that line"
        )
    if not names:
        raise InputError(f"class list {readable(str(path), 160)} names no student: one login a line")
    return tuple(dict.fromkeys(names))


def submissions(
    paths: Iterable[str | Path], layout: str, skipped: list[str], students: Iterable[str] | None = None
) -> list[Submission]:
    """Every exercise notebook named or found under the folders named, with its student by the layout's rule, its
    bytes read once, through a descriptor, when it is found.

    Nothing outside the PATHs given is read: from the student's folder down, every folder is opened through its
    parent's descriptor and never through a link, a link on the way is refused and said, and the bytes kept are those
    of the file opened then, never looked up by path again (a folder swapped for a link meanwhile changes nothing). A
    file reached twice (the same file under two names) is one submission. With ``students`` (the class list), a
    notebook whose path names someone not on it is said, not graded.
    """
    if layout not in LAYOUTS:
        raise InputError(f"unknown layout {layout!r}: use one of {', '.join(LAYOUTS)}")
    listed = None if students is None else set(students)
    spool = Spool()
    found: list[tuple[Submission, os.stat_result | None]] = []
    for root in map(_given, paths):
        try:
            folder, name = _open_root(root, layout)
        except _Refused as why:
            skipped.append(f"{readable(str(root), 400)}: {why}")
            continue
        try:
            candidates: Iterable[FoundFile] = (
                [FoundFile(root, folder, name)]  # a notebook named on the command line
                if name is not None
                else walk(folder, root, skipped, lambda n: exercise_of(n) is not None, hidden=False)
            )
            for entry in candidates:
                if (taken := _taken(entry, root, layout, skipped, listed, spool)) is not None:
                    found.append(taken)
        finally:
            os.close(folder)
    return _once(found, skipped)


def found_under(paths: Iterable[str | Path], layout: str, wanted: Callable[[str], bool]) -> Iterator[HandedIn]:
    """The files under the folders given whose name ``wanted`` accepts, each with its student by the layout's rule,
    walked as ``submissions`` walks them (through descriptors, never a link); what that walk says, this one does not
    say again. A file that is a link, or lies in a home inside a student's home, is not yielded."""
    for root in map(_given, paths):
        try:
            folder, name = _open_root(root, layout)
        except (_Refused, InputError):
            continue
        try:
            if name is not None:
                continue  # a notebook named on the command line
            for entry in walk(folder, root, [], wanted, hidden=False):
                who = student_of(entry.path, root, layout)
                if who and not _is_link(entry) and not (layout == "home" and "home" in _inside_student(entry.path)):
                    yield HandedIn(who, entry)
        finally:
            os.close(folder)


@dataclass(frozen=True)
class HandedIn:
    """A file found under a student's folder: whose it is, and where (its folder open while the walk stands there)."""

    student: str
    entry: FoundFile


class _Refused(Exception):
    """Why a PATH given is not searched, or a notebook named is not graded (a link on the way)."""


def _open_root(root: Path, layout: str) -> tuple[int, str | None]:
    """The folder a PATH given is, open, and None; or, for a notebook named, its folder open and its name.

    The folders above the student's (``/home``, a platform's download folder) are the teacher's and opened as named;
    from the student's folder down every part is opened through its parent's descriptor, never through a link.
    """
    parts, folder_given = root.parts, os.path.isdir(root)
    if layout == "home" and (first := _first_home(parts)) is not None:
        trusted = first + 1  # /home: the student's folder and all below it are opened part by part
    elif folder_given:
        trusted = len(parts)  # the teacher's folder (a platform's download, a folder above /home)
    else:
        trusted = len(parts) - (2 if layout == "platform" else 1)  # a notebook named: its student's folder below
    try:
        folder = open_folder(Path(*parts[: max(1, trusted)]), follow=True)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            raise _missing(root) from None
        raise InputError(f"{readable(str(root), 160)}: not read ({exc.strerror or exc})") from None
    try:
        for n, part in enumerate(parts[max(1, trusted) :], max(1, trusted) + 1):
            try:
                st = os.stat(part, dir_fd=folder, follow_symlinks=False)
            except OSError:
                raise _missing(root) from None
            if stat.S_ISLNK(st.st_mode):
                raise _Refused(
                    f"{readable(str(Path(*parts[:n])), 400)} is a link ({linked(part, folder)}): not "
                    f"{'searched' if folder_given else 'graded'}, a submission is read where it lies, never through "
                    "a link"
                )
            if n == len(parts) and not stat.S_ISDIR(st.st_mode):
                return folder, part
            inner = open_folder(part, folder)
            os.close(folder)
            folder = inner
    except BaseException:
        os.close(folder)
        raise
    return folder, None


def _missing(root: Path) -> InputError:
    return InputError(
        f"{readable(str(root), 160)} is neither a notebook nor a folder: give the submitted "
        ".ipynb files or the folders that hold them"
    )


def _taken(
    entry: FoundFile, root: Path, layout: str, skipped: list[str], listed: set[str] | None, spool: Spool
) -> tuple[Submission, os.stat_result | None] | None:
    """A notebook found, read through its folder's descriptor if its path makes it a submission; else said, None."""
    nb = entry.path
    exercise, who = exercise_of(entry.name), student_of(nb, root, layout)
    if exercise is None:
        skipped.append(f"{readable(str(nb), 400)}: not an exercise notebook (its name has no ex1..ex7)")
    elif not who:
        other = "platform" if layout == "home" else "home"
        skipped.append(
            f"{readable(str(nb), 400)}: the {layout} layout names no student for it "
            f"(see --layout; try --layout {other})"
        )
    elif _is_link(entry):
        skipped.append(
            f"{readable(str(nb), 400)}: {readable(str(nb), 400)} is a link ({linked(entry.name, entry.folder)}): not "
            "graded, a submission is read where it lies, never through a link"
        )
    elif layout == "home" and "home" in _inside_student(nb):
        skipped.append(
            f"{readable(str(nb), 400)}: a folder named home inside {readable(who)}'s folder: not graded as anyone's "
            "(it stands for another student's home; the student is named by the first home of the path)"
        )
    elif listed is not None and who not in listed:
        skipped.append(f"{readable(str(nb), 400)}: names '{readable(who)}', who is not on the class list: not graded")
    else:
        try:  # opened without following a link, whatever the name became since it was listed
            data, st = read_beneath(entry.folder, entry.name, MAX_NOTEBOOK, "a notebook")
        except InputError as exc:
            return Submission(who, exercise, nb, unread=str(exc)), None
        return Submission(who, exercise, nb, spoken_in(data), spool.keep(data)), st
    return None


def _is_link(entry: FoundFile) -> bool:
    try:
        return stat.S_ISLNK(os.stat(entry.name, dir_fd=entry.folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _inside_student(notebook: Path) -> tuple[str, ...]:
    """The folders between the home layout's student folder and the notebook."""
    parts = notebook.parts
    first = _first_home(parts[:-1])
    return parts[first + 2 : -1] if first is not None else ()


def _once(found: list[tuple[Submission, os.stat_result | None]], skipped: list[str]) -> list[Submission]:
    """Each file once: one reached under two names is one submission, its owner's when two students claim it."""
    from ragkit.teach.exercises.results import login

    by_file: dict[tuple[int, int], list[tuple[Submission, os.stat_result]]] = {}
    kept: list[Submission] = []
    for s, st in found:
        if st is None:
            kept.append(s)  # not read: its row says why
            continue
        by_file.setdefault((st.st_dev, st.st_ino), []).append((s, st))
    for claims in by_file.values():
        subs = [s for s, _ in claims]
        whose = {s.student for s in subs}
        if len(whose) == 1:
            kept.append(subs[0])
            skipped.extend(
                f"{readable(str(s.path), 400)}: the same file as {readable(str(subs[0].path), 400)}, graded once"
                for s in subs[1:]
            )
            continue
        owner = login(claims[0][1].st_uid)
        mine = next((s for s in subs if s.student == owner), None)
        if mine is not None:
            kept.append(mine)
        names = ", ".join(f"'{readable(w)}'" for w in sorted(whose))
        for s in subs:
            if s is not mine:
                skipped.append(
                    f"{readable(str(s.path), 400)}: one file handed in by {len(whose)} students ({names}) "
                    "under several names; "
                    + (
                        f"graded once, as its owner '{readable(str(owner))}''s"
                        if mine
                        else "its owner is none of them: not graded"
                    )
                )
    return sorted(kept, key=lambda s: (s.student, s.exercise, str(s.path)))
