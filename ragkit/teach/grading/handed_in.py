"""Which submission is whose: the notebooks handed in, each with its student by the path rule, never by its content.

A notebook's student comes from its path as the teacher gave it, by a documented rule (``LAYOUTS``), checked against
the teacher's class list when there is one, never from the notebook: a path that runs through a link is refused, never
followed. Its exercise comes from its file name, its language from the cells that choose one or from its folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ragkit.errors import InputError
from ragkit.teach import language
from ragkit.teach.grading.class_report import linked, walk
from ragkit.teach.untrusted import read_regular, readable

__all__ = [
    "LAYOUTS",
    "MAX_CLASS_LIST",
    "MAX_NOTEBOOK",
    "Submission",
    "exercise_of",
    "language_by_path",
    "read_class_list",
    "read_notebook",
    "refuse_outputs",
    "refused",
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


@dataclass(frozen=True)
class Submission:
    """One notebook handed in: whose (by the path rule), which exercise, where, and the language its cells speak."""

    student: str
    exercise: str
    path: Path
    spoken: str | None = field(default=None, compare=False)
    """The language the notebook's own cells choose (``spoken_in``); None where they choose none or it was unread."""

    @property
    def language(self) -> str:
        """The notebook's language: the one its cells choose, else its folder's (``.../nl/exercises/ex2-...``)."""
        return self.spoken or language_by_path(self.path)


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


def _spoken(path: Path) -> str | None:
    try:
        return spoken_in(read_notebook(path))
    except (InputError, OSError):
        return None  # its run says why it cannot be read; its folder names its language


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
    folder under ``root``, the PATH given (the notebook's own folder when the PATH is the notebook).
    """
    path = _given(notebook)
    if layout == "home":
        index = _first_home(path.parts[:-1])  # the folder after it, not the notebook itself
        return path.parts[index + 1] if index is not None else None
    base = _given(root)
    if base == path:  # a notebook named on the command line: its folder is the student's
        return path.parent.name or None
    return path.relative_to(base).parts[0] if base in path.parents and path.parent != base else None


def _student_folder(notebook: Path, root: Path, layout: str) -> Path:
    """The folder that names the notebook's student (``/home/<student>``, ``<PATH>/<student>``)."""
    path = _given(notebook)
    if layout == "home":
        index = _first_home(path.parts[:-1])
        assert index is not None, "only a notebook the layout names a student for has a student's folder"
        return Path(*path.parts[: index + 2])
    base = _given(root)
    return path.parent if base == path else base / path.relative_to(base).parts[0]


def refused(notebook: Path, root: Path, layout: str) -> str | None:
    """Why a notebook is not graded as its path's student, or None: a link on the way, or a home inside a home.

    From the student's folder down to the notebook, no part of the path may be a link: a link would hand in a file
    that lies elsewhere (another student's, or anything on the machine) under this student's name. A folder named
    ``home`` inside the student's own folder is refused too: it stands for another student's home, planted.
    """
    path, folder = _given(notebook), _student_folder(notebook, root, layout)
    for step in [
        folder,
        *(folder / Path(*path.relative_to(folder).parts[: n + 1]) for n in range(len(path.relative_to(folder).parts))),
    ]:
        if step.is_symlink():
            return (
                f"{readable(str(step), 400)} is a link ({linked(step)}): not graded, a submission is read where it "
                "lies, never through a link"
            )
    if layout == "home" and "home" in path.relative_to(folder).parts[:-1]:
        return (
            f"a folder named home inside {readable(folder.name)}'s folder: not graded as anyone's (it stands for "
            "another student's home; the student is named by the first home of the path)"
        )
    return None


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


def _linked_folder(root: Path, layout: str) -> str | None:
    """Why a folder given in the home layout is not searched: a link between the student's folder and it (a glob
    over ``/home/*/...`` meets a student's folder linked to ``/home`` or ``/``); None when there is none."""
    parts = root.parts
    index = _first_home(parts)
    if layout != "home" or index is None:
        return None
    for n in range(index + 2, len(parts) + 1):
        step = Path(*parts[:n])
        if step.is_symlink():
            return (
                f"{readable(str(step), 400)} is a link ({linked(step)}): not searched, a submission is read where "
                "it lies, never through a link"
            )
    return None


def read_class_list(path: Path) -> tuple[str, ...]:
    """The teacher's class list: one login a line (as a hub's admin page exports it); blank and ``#`` lines skipped."""
    try:
        data = read_regular(Path(path), MAX_CLASS_LIST, "a class list")[0]
    except InputError as exc:  # read_regular says why (no such file, a link, a FIFO, too large): the path and a fix
        raise InputError(
            f"class list {readable(str(path), 160)} not read ({exc}): give a text file with one login a line"
        ) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(
            f"class list {readable(str(path), 160)} is not UTF-8 text: save it as UTF-8, one login a line"
        ) from None
    names = [line.strip() for line in text.splitlines()]
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
    """Every exercise notebook named or found under the folders named, with its student by the layout's rule.

    Nothing outside the PATHs given is read: a link on the way is refused and said, and a file reached twice (the same
    file under two names) is one submission. With ``students`` (the class list), a notebook whose path names someone
    not on it is said, not graded.
    """
    if layout not in LAYOUTS:
        raise InputError(f"unknown layout {layout!r}: use one of {', '.join(LAYOUTS)}")
    listed = None if students is None else set(students)
    found: list[Submission] = []
    for root in map(_given, paths):
        if root.is_dir():
            if why := _linked_folder(root, layout):  # a student's folder linked elsewhere: not walked at all
                skipped.append(f"{readable(str(root), 400)}: {why}")
                continue
            notebooks = list(walk(root, skipped, lambda name: exercise_of(name) is not None, hidden=False))
        elif root.exists() or root.is_symlink():
            notebooks = [root]
        else:
            raise InputError(
                f"{readable(str(root), 160)} is neither a notebook nor a folder: give the submitted "
                ".ipynb files or the folders that hold them"
            )
        for nb in notebooks:
            exercise, who = exercise_of(nb.name), student_of(nb, root, layout)
            if exercise is None:
                skipped.append(f"{readable(str(nb), 400)}: not an exercise notebook (its name has no ex1..ex7)")
            elif not who:
                other = "platform" if layout == "home" else "home"
                skipped.append(
                    f"{readable(str(nb), 400)}: the {layout} layout names no student for it "
                    f"(see --layout; try --layout {other})"
                )
            elif why := refused(nb, root, layout):
                skipped.append(f"{readable(str(nb), 400)}: {why}")
            elif listed is not None and who not in listed:
                skipped.append(
                    f"{readable(str(nb), 400)}: names '{readable(who)}', who is not on the class list: not graded"
                )
            else:
                found.append(Submission(who, exercise, nb))
    return [replace(s, spoken=_spoken(s.path)) for s in _once(found, skipped)]


def _once(found: list[Submission], skipped: list[str]) -> list[Submission]:
    """Each file once: one reached under two names is one submission, its owner's when two students claim it."""
    from ragkit.teach.exercises.results import login

    by_file: dict[tuple[int, int], list[Submission]] = {}
    kept: list[Submission] = []
    for s in found:
        try:
            st = os.stat(s.path, follow_symlinks=False)
        except OSError:
            kept.append(s)  # not there any more: its run says so
            continue
        by_file.setdefault((st.st_dev, st.st_ino), []).append(s)
    for subs in by_file.values():
        whose = {s.student for s in subs}
        if len(whose) == 1:
            kept.append(subs[0])
            skipped.extend(
                f"{readable(str(s.path), 400)}: the same file as {readable(str(subs[0].path), 400)}, graded once"
                for s in subs[1:]
            )
            continue
        try:
            owner = login(os.stat(subs[0].path, follow_symlinks=False).st_uid)
        except OSError:
            owner = None
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


def read_notebook(path: Path) -> bytes:
    """A submitted notebook's bytes: a regular file (no link, FIFO or device), at most MAX_NOTEBOOK bytes."""
    return read_regular(path, MAX_NOTEBOOK, "a notebook")[0]
