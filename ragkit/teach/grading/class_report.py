"""The teacher's class-report: a class's results files read as hostile input, each result's student from the system."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ragkit.errors import InputError
from ragkit.plumbing.bounded import open_folder, read_beneath
from ragkit.teach import language
from ragkit.teach.exercises.results import EXERCISES, login, nobody
from ragkit.teach.grading.gradebook import grade_word
from ragkit.teach.untrusted import (
    MAX_LINE,
    MAX_NESTING,
    MAX_RESULTS_FILE,
    nesting,
    readable,
    refuse_constant,
    refuse_overwrite,
    walk,
)

__all__ = ["NAME_RULES", "SKIPS_PER_FILE", "ClassReport", "class_report", "result_files", "whose"]

NAME_RULES = ("file", "owner")
"""How class-report names the student of a results file: its file name without ``.jsonl``, or its owner's login."""


SKIPS_PER_FILE = 5
"""Lines of one results file left out that are each said; the rest are counted."""


def whose(path: Path, st: os.stat_result, rule: str) -> str:
    """The student a results file belongs to by the teacher's rule: its name without ``.jsonl``, or its owner."""
    if rule == "owner":
        return login(st.st_uid)
    return path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.stem


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
        """One row per student: 'yes (2)' passed on the second attempt, 'not yet (3)', or '-' never tried.

        The grade words are the grader's (``gradebook.grade_word``), in English, as the rest of class-report is.
        """
        out = []
        with language.speaking(language.SOURCE):
            for s in self.students:
                row = {"student": readable(s)}
                for e in EXERCISES:
                    if (s, e) in self.cells:
                        passed, attempts = self.cells[s, e]
                        row[e] = f"{grade_word('yes' if passed else 'not yet')} ({attempts})"
                    else:
                        row[e] = "-"
                out.append(row)
        return out


def _where(path: Path) -> str:
    return readable(str(path), 160)


def result_files(paths: Iterable[str | Path], skipped: list[str]) -> list[tuple[Path, bytes, os.stat_result]]:
    """The results files named, or found under the folders named, each read once through a descriptor: its path,
    bytes and status as read. A file not read is said in ``skipped``; a path that is neither is an InputError."""
    files: list[tuple[Path, bytes, os.stat_result]] = []

    def read(path: Path, folder: int | None, name: str | Path) -> None:
        try:
            files.append((path, *read_beneath(folder, name, MAX_RESULTS_FILE, "a results file")))
        except InputError as exc:
            skipped.append(f"{_where(path)}: file not read ({exc})")

    for p in map(Path, paths):
        try:
            folder = open_folder(p, follow=True)  # a folder the teacher names; nothing under it through a link
        except OSError as exc:
            if not (p.exists() or p.is_symlink()):
                raise InputError(
                    f"{_where(p)} is neither a results file nor a folder: give the .jsonl files or the "
                    "folder that holds them"
                ) from None
            if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                raise InputError(f"{_where(p)}: not read ({exc.strerror or exc})") from None
            read(p, None, p)
            continue
        try:
            for entry in walk(folder, p, skipped, lambda name: name.endswith(".jsonl")):
                read(entry.path, entry.folder, entry.name)
        finally:
            os.close(folder)
    return files


def _refuse_output(output: Path, files: list[tuple[Path, bytes, os.stat_result]]) -> None:
    """Refuse an output file in a missing folder, or one that is an input, before anything is written."""
    folder = output.parent
    if not folder.is_dir():
        raise InputError(
            f"cannot write --csv {_where(output)}: the folder {_where(folder)} does not exist; create it "
            f"first (mkdir -p {_where(folder)}) or name a file in an existing folder"
        )
    if output.is_dir():
        raise InputError(f"--csv {_where(output)} is a folder: name a file, e.g. {_where(output / 'class.csv')}")
    refuse_overwrite(output)
    try:
        there = os.stat(output)
    except OSError:
        there = None
    for path, _, st in files:
        same = there is not None and (there.st_dev, there.st_ino) == (st.st_dev, st.st_ino)
        if same or output.resolve() == path.resolve():
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
        if (depth := nesting(line)) > MAX_NESTING:
            yield f"{where}:{n}: nested {depth} deep, more than the {MAX_NESTING} a result takes"
            continue
        try:
            row = json.loads(line, parse_constant=refuse_constant)
            exercise, passed = row["exercise"], row["passed"]
            if not isinstance(exercise, str) or not isinstance(passed, bool):
                raise TypeError("exercise must be a string, passed true or false")
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            yield f"{where}:{n}: " + (
                f"not valid JSON ({exc.msg} at column {exc.colno})"
                if isinstance(exc, json.JSONDecodeError)
                else f"missing field {exc}"
                if isinstance(exc, KeyError)
                else str(exc)
            )
            continue
        claimed = row.get("student", who)
        if claimed != who and not nobody(claimed):
            yield (
                f"{where}:{n}: claims to be '{readable(str(claimed))}''s, "
                f"but the file is '{readable(who)}''s: not counted"
            )
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
    for path, data, st in files:
        where = _where(path)
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
