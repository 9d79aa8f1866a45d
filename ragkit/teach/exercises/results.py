"""The student's results file: who the student of a kernel is, and a check's line appended to a file of their own."""

from __future__ import annotations

import json
import os
import pwd
import stat
from pathlib import Path

from ragkit.errors import InputError
from ragkit.plumbing.bounded import O_NOFOLLOW, O_NONBLOCK
from ragkit.teach.language import _, say
from ragkit.teach.untrusted import MAX_LINE, MAX_NESTING, MAX_RESULTS_FILE, nesting, strict

__all__ = [
    "EXERCISES",
    "HUB_USER_ENV",
    "NOBODY",
    "RESULTS_ENV",
    "SHARED_LOGINS",
    "STUDENT_ENV",
    "append_result",
    "current_student",
    "login",
    "nobody",
    "results_path",
    "student",
    "system_student",
]

RESULTS_ENV, STUDENT_ENV, HUB_USER_ENV = "RAGKIT_RESULTS", "RAGKIT_STUDENT", "JUPYTERHUB_USER"
SHARED_LOGINS = frozenset({"jovyan"})
"""Logins every user of a hub shares (the Jupyter docker-stacks images): the hub's user name names the student."""
EXERCISES = ("ex1", "ex2", "ex3", "ex4", "ex5", "ex6", "ex7")


_student: str | None = None


def login(uid: int) -> str:
    """The login name of a uid, or ``uid N`` when the system has no passwd entry for it (``docker run --user``)."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"{UNNAMED}{uid}"


NOBODY = frozenset({"root"})
"""Logins that name no student either: a machine of one's own run as root (Colab)."""
UNNAMED = "uid "
"""How ``login`` begins the label of a uid the system has no name for."""


def nobody(name: object) -> bool:
    """A login or a results line's name that names no student: shared (``jovyan``), root (Colab), or a bare uid."""
    return isinstance(name, str) and (name in SHARED_LOGINS or name in NOBODY or name.startswith(UNNAMED))


def system_student() -> str | None:
    """The student the system names, or None where it names nobody.

    RAGKIT_STUDENT (set by the grader for the notebook it runs, or by a deployment), else the login, else, where
    the login is shared (``jovyan``), root (Colab) or has no passwd entry, the hub's user name ``JUPYTERHUB_USER``.
    """
    if named := os.environ.get(STUDENT_ENV, "").strip():
        return named
    name = login(os.getuid())
    if not nobody(name):
        return name
    return os.environ.get(HUB_USER_ENV, "").strip() or None


def student(name: str) -> str:
    """Name the student where the system names nobody (Binder, Colab); where it does, agree with it or refuse.

    One identity everywhere: the checks, the results file, the quiz's shuffle and the grader name a student the
    same way. A name that disagrees with the system's would give the student another's exercise 1 window and
    results lines the teacher's report does not count, so it is an error that says which name is in force.
    """
    global _student
    if not isinstance(name, str) or not name.strip():
        raise InputError(_("a student needs a name: call student('your name')"))
    named = system_student()
    if named is not None and name.strip() != named:
        where = (
            STUDENT_ENV
            if os.environ.get(STUDENT_ENV, "").strip()
            else _("this hub's user name")
            if named == os.environ.get(HUB_USER_ENV, "").strip()
            else _("your login")
        )
        raise InputError(
            say(
                "this machine already names you {named} ({where}), and the teacher's grader uses that "
                "name: leave out student({name}); the checks record your results as {named}",
                named=repr(named),
                where=where,
                name=repr(name.strip()),
            )
        )
    _student = name.strip()
    return _student


def current_student() -> str:
    """The student of this kernel: the one the system names (``system_student``), else ``student()``'s, else the login.

    The login is the last resort where nothing names the student (``jovyan`` on Binder, ``root`` on Colab).
    """
    return system_student() or _student or login(os.getuid())


def results_path() -> Path:
    """Where the checks append their results: RAGKIT_RESULTS, else ~/.ragkit/results.jsonl."""
    env = os.environ.get(RESULTS_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    try:
        return Path.home() / ".ragkit" / "results.jsonl"
    except RuntimeError:
        raise InputError(
            say("this account has no home folder: set {variable} to a file you can write", variable=RESULTS_ENV)
        ) from None


def append_result(path: Path, row: dict) -> int:
    """Append one result line (its ``attempt`` counted from the file) to a results file of one's own.

    The file is created without following a link, and refused when it is not a regular file
    or belongs to someone else: a file planted in a shared folder can neither block the check
    (a FIFO) nor take this student's results. Returns the attempt number written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | O_NOFOLLOW | O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno == getattr(os, "ELOOP", None) or path.is_symlink():
            raise InputError(say("{path} is a symbolic link: ragkit does not follow it", path=str(path))) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(say("{path} is not a regular file (a FIFO, device or socket)", path=str(path)))
        if st.st_uid != os.getuid():
            raise InputError(say("{path} belongs to {owner}, not to you", path=str(path), owner=login(st.st_uid)))
        data = os.pread(fd, MAX_RESULTS_FILE, 0)
        attempts = sum(
            1 for line in data.decode("utf-8", "replace").splitlines() if _is_row(line, row["student"], row["exercise"])
        )
        row = {**row, "attempt": attempts + 1}
        os.write(fd, (json.dumps(strict(row), allow_nan=False) + "\n").encode("utf-8"))
        return attempts + 1
    finally:
        os.close(fd)


def _is_row(line: str, who: str, exercise: str) -> bool:
    try:
        row = json.loads(line) if len(line) <= MAX_LINE and nesting(line) <= MAX_NESTING else None
    except ValueError:
        return False
    return isinstance(row, dict) and row.get("student") == who and row.get("exercise") == exercise
