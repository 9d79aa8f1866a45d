"""Results files: whose a result is, writing one safely, and reading a whole class's without trusting any of them.

In a student's kernel the checks append one JSON line per attempt to a results file
(``RAGKIT_RESULTS``, else ``~/.ragkit/results.jsonl``). The teacher's ``class-report`` reads
many such files as hostile input: it opens only regular files (never a link, a FIFO or a
device), reads each file once, bounds file size, line length, nesting and folder depth,
and takes a result's student from the system (the file's name or its owner), never from
the line. Every file or line it leaves out is listed with the reason.
"""

from __future__ import annotations

import csv
import json
import math
import os
import pwd
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ragkit.errors import InputError

RESULTS_ENV, STUDENT_ENV, HUB_USER_ENV = "RAGKIT_RESULTS", "RAGKIT_STUDENT", "JUPYTERHUB_USER"
SHARED_LOGINS = frozenset({"jovyan"})
"""Logins every user of a hub shares (the Jupyter docker-stacks images): the hub's user name names the student."""
EXERCISES = ("ex1", "ex2", "ex3", "ex4", "ex5")
NAME_RULES = ("file", "owner")
"""How class-report names the student of a results file: its file name without ``.jsonl``, or its owner's login."""
MAX_FILE = 4 * 2**20  # a check writes ~300 bytes: thousands of attempts fit, a sparse multi-GB file does not
MAX_LINE = 16 * 2**10
MAX_NESTING = 8
MAX_DEPTH = 8
SHOWN = 60
SKIPS_PER_FILE = 5
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)

_student: str | None = None


def login(uid: int) -> str:
    """The login name of a uid, or ``uid N`` when the system has no passwd entry for it (``docker run --user``)."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def student(name: str) -> str:
    """Name the student whose results the checks record (wins over every default)."""
    global _student
    if not isinstance(name, str) or not name.strip():
        raise InputError("a student needs a name: call student('your name')")
    _student = name.strip()
    return _student


def current_student() -> str:
    """The student of this kernel: ``student()``, else RAGKIT_STUDENT, else the login name.

    Where the login names nobody (``jovyan`` on a Zero to JupyterHub image, or a uid without a
    passwd entry), the hub's user name ``JUPYTERHUB_USER`` names the student instead.
    """
    if _student:
        return _student
    if named := os.environ.get(STUDENT_ENV, "").strip():
        return named
    name = login(os.getuid())
    hub = os.environ.get(HUB_USER_ENV, "").strip()
    return hub if hub and (name in SHARED_LOGINS or name.startswith("uid ")) else name


def results_path() -> Path:
    """Where the checks append their results: RAGKIT_RESULTS, else ~/.ragkit/results.jsonl."""
    env = os.environ.get(RESULTS_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    try:
        return Path.home() / ".ragkit" / "results.jsonl"
    except RuntimeError:
        raise InputError(f"this account has no home folder: set {RESULTS_ENV} to a file you can write") from None


def shown(text: str, limit: int = SHOWN) -> str:
    """Text safe to print on a terminal or in a table: control characters escaped, at most ``limit`` characters kept."""
    kept = "".join(ch if ch.isprintable() else ch.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for ch in text[:limit])
    return kept + (f"... ({len(text):,} characters)" if len(text) > limit else "")


def spreadsheet_cell(text: str) -> str:
    """A CSV cell a spreadsheet cannot run: text that would start a formula gets a leading apostrophe."""
    return "'" + text if len(text) > 1 and text.startswith(_FORMULA_STARTS) else text


def write_csv(path: Path, columns: list[str], rows: Iterable[dict[str, str]]) -> None:
    """Every CSV ragkit writes: a header and rows, each cell neutralised for spreadsheets."""
    with Path(path).open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows({c: spreadsheet_cell(str(r[c])) for c in columns} for r in rows)


def strict(value: object) -> object:
    """A value JSON can hold as it is: NaN and infinities become null (strict JSON has neither)."""
    if isinstance(value, dict):
        return {str(k): strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(v) for v in value]
    if isinstance(value, (bool, int, str)) or value is None:
        return value
    number = float(value)  # type: ignore[arg-type]  # numpy scalars and other numbers
    return number if math.isfinite(number) else None


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def _nesting(line: str) -> int:
    """How deep brackets nest in a JSON line, strings aside (a scan, no recursion)."""
    depth = deepest = 0
    for ch in _STRING.sub("", line):
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _read_regular(path: Path, flags: int = os.O_RDONLY) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file, opened without following a link or blocking on a FIFO; OSError or InputError."""
    fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError("not a regular file (a FIFO, device or socket)")
        if st.st_size > MAX_FILE:
            raise InputError(f"{st.st_size:,} bytes, more than the {MAX_FILE:,} a results file may hold")
        data = b""
        while len(data) <= MAX_FILE and (block := os.read(fd, MAX_FILE + 1 - len(data))):
            data += block
        if len(data) > MAX_FILE:
            raise InputError(f"grew past the {MAX_FILE:,} bytes a results file may hold while it was read")
        return data, st
    finally:
        os.close(fd)


def append_result(path: Path, row: dict) -> int:
    """Append one result line (its ``attempt`` counted from the file) to a results file of one's own.

    The file is created without following a link, and refused when it is not a regular file
    or belongs to someone else: a file planted in a shared folder can neither block the check
    (a FIFO) nor take this student's results. Returns the attempt number written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno == getattr(os, "ELOOP", None) or path.is_symlink():
            raise InputError(f"{path} is a symbolic link: ragkit does not follow it") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{path} is not a regular file (a FIFO, device or socket)")
        if st.st_uid != os.getuid():
            raise InputError(f"{path} belongs to {login(st.st_uid)}, not to you")
        data = os.pread(fd, MAX_FILE, 0)
        attempts = sum(1 for line in data.decode("utf-8", "replace").splitlines()
                       if _is_row(line, row["student"], row["exercise"]))
        row = {**row, "attempt": attempts + 1}
        os.write(fd, (json.dumps(strict(row), allow_nan=False) + "\n").encode("utf-8"))
        return attempts + 1
    finally:
        os.close(fd)


def _is_row(line: str, who: str, exercise: str) -> bool:
    try:
        row = json.loads(line) if len(line) <= MAX_LINE and _nesting(line) <= MAX_NESTING else None
    except ValueError:
        return False
    return isinstance(row, dict) and row.get("student") == who and row.get("exercise") == exercise


def whose(path: Path, st: os.stat_result, rule: str) -> str:
    """The student a results file belongs to by the teacher's rule: its name without ``.jsonl``, or its owner."""
    if rule == "owner":
        return login(st.st_uid)
    return path.name[:-len(".jsonl")] if path.name.endswith(".jsonl") else path.stem


@dataclass(frozen=True)
class ClassReport:
    """Per student and exercise: passed or not, and how many attempts; plus every file and line left out, and why."""

    cells: dict  # (student, exercise) -> (passed, attempts)
    skipped: tuple[str, ...]
    lines: int

    @property
    def students(self) -> list[str]:
        """Every student seen, sorted."""
        return sorted({s for s, _ in self.cells})

    def rows(self) -> list[dict[str, str]]:
        """One row per student: 'yes (2)' passed on the second attempt, 'not yet (3)', or '-' never tried."""
        out = []
        for s in self.students:
            row = {"student": shown(s)}
            for e in EXERCISES:
                if (s, e) in self.cells:
                    passed, attempts = self.cells[s, e]
                    row[e] = f"{'yes' if passed else 'not yet'} ({attempts})"
                else:
                    row[e] = "-"
            out.append(row)
        return out


def _where(path: Path) -> str:
    return shown(str(path), 160)


def walk(folder: Path, skipped: list[str], wanted: Callable[[str], bool], hidden: bool = True) -> Iterator[Path]:
    """Entries under a folder whose name ``wanted`` accepts, in name order: never into a linked folder, never
    more than MAX_DEPTH levels deep (a deeper folder is skipped and said), and with ``hidden=False`` never into
    a dot entry (JupyterLab's checkpoints)."""
    stack = [(folder, 0)]
    while stack:
        here, depth = stack.pop()
        try:
            entries = sorted(os.scandir(here), key=lambda e: e.name)
        except OSError as exc:
            skipped.append(f"{_where(here)}: folder not read ({exc.strerror or exc})")
            continue
        folders = []
        for entry in entries:
            if not hidden and entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                if depth < MAX_DEPTH:
                    folders.append((Path(entry.path), depth + 1))
                else:
                    skipped.append(f"{_where(Path(entry.path))}: folder not read (more than {MAX_DEPTH} levels deep)")
            elif wanted(entry.name):
                yield Path(entry.path)
        stack.extend(reversed(folders))


def result_files(paths: Iterable[str | Path], skipped: list[str]) -> list[Path]:
    """The results files named, or found under the folders named; a path that is neither is an InputError."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(walk(p, skipped, lambda name: name.endswith(".jsonl")))
        elif p.exists() or p.is_symlink():
            files.append(p)
        else:
            raise InputError(f"{_where(p)} is neither a results file nor a folder: give the .jsonl files or the "
                             "folder that holds them")
    return files


def _refuse_output(output: Path, files: list[Path]) -> None:
    """Refuse an output file in a missing folder, or one that is an input, before anything is read."""
    folder = output.parent
    if not folder.is_dir():
        raise InputError(f"cannot write --csv {_where(output)}: the folder {_where(folder)} does not exist; create it "
                         f"first (mkdir -p {_where(folder)}) or name a file in an existing folder")
    if output.is_dir():
        raise InputError(f"--csv {_where(output)} is a folder: name a file, e.g. {_where(output / 'class.csv')}")
    for f in files:
        if output.resolve() == f.resolve() or (output.exists() and f.exists() and os.path.samefile(output, f)):
            raise InputError(f"--csv {_where(output)} is one of the results files read: name another file")


def _rows(data: bytes, where: str, who: str) -> Iterator[tuple[str, bool] | str]:
    """Per non-empty line: (exercise, passed), or the reason it is left out."""
    for n, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        if len(raw) > MAX_LINE:
            yield f"{where}:{n}: a line of {len(raw):,} bytes, longer than the {MAX_LINE:,} a result takes"
            continue
        line = raw.decode("utf-8", "replace")
        if (depth := _nesting(line)) > MAX_NESTING:
            yield f"{where}:{n}: nested {depth} deep, more than the {MAX_NESTING} a result takes"
            continue
        try:
            row = json.loads(line, parse_constant=_not_json)
            exercise, passed = row["exercise"], row["passed"]
            if not isinstance(exercise, str) or not isinstance(passed, bool):
                raise TypeError("exercise must be a string, passed true or false")
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            yield f"{where}:{n}: " + (f"not valid JSON ({exc.msg} at column {exc.colno})"
                                      if isinstance(exc, json.JSONDecodeError)
                                      else f"missing field {exc}" if isinstance(exc, KeyError) else str(exc))
            continue
        claimed = row.get("student", who)
        if claimed != who:
            yield (f"{where}:{n}: claims to be {shown(str(claimed))!r}'s, but the file is {shown(who)!r}'s: "
                   "not counted")
            continue
        yield exercise, passed


def class_report(paths: Iterable[str | Path], name_by: str = "file", output: Path | None = None) -> ClassReport:
    """Read many students' results files (or folders of them); every file or line left out is listed with its reason.

    ``name_by`` is the rule that names a file's student (``NAME_RULES``); ``output`` is a file
    about to be written, refused when it is one of the inputs or its folder is missing.
    """
    if name_by not in NAME_RULES:
        raise InputError(f"unknown rule {name_by!r} to name students: use one of {', '.join(NAME_RULES)}")
    cells: dict = {}
    skipped: list[str] = []
    files = result_files(paths, skipped)
    if output is not None:
        _refuse_output(Path(output), files)
    seen: dict[tuple[int, int], Path] = {}
    count = 0
    for path in files:
        where = _where(path)
        try:
            data, st = _read_regular(path)
        except InputError as exc:
            skipped.append(f"{where}: file not read ({exc})")
            continue
        except OSError as exc:
            reason = "a symbolic link, not followed" if path.is_symlink() else exc.strerror or str(exc)
            skipped.append(f"{where}: file not read ({reason})")
            continue
        if (st.st_dev, st.st_ino) in seen:
            skipped.append(f"{where}: the same file as {_where(seen[st.st_dev, st.st_ino])}, read once")
            continue
        seen[st.st_dev, st.st_ino] = path
        who, left_out = whose(path, st, name_by), 0
        for result in _rows(data, where, who):
            if isinstance(result, str):
                left_out += 1
                if left_out <= SKIPS_PER_FILE:
                    skipped.append(result)
                continue
            count += 1
            exercise, passed = result
            was_passed, attempts = cells.get((who, exercise), (False, 0))
            cells[who, exercise] = (was_passed or passed, attempts + 1)
        if left_out > SKIPS_PER_FILE:
            skipped.append(f"{where}: {left_out - SKIPS_PER_FILE:,} more line(s) of this file left out")
    return ClassReport(cells, tuple(skipped), count)
