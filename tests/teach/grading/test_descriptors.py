"""Every student file through descriptors, once: a folder swapped for a link while the class is graded hands in
nothing of anyone else's (issue 63, item 2)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from ragkit.teach.grading import grader as grading
from ragkit.teach.grading import handed_in
from ragkit.teach.grading.isolation import Isolation
from ragkit.teach.grading.sandbox import SandboxRun

EX2 = "ex2-choose-a-threshold.ipynb"
NO_COURSE = SimpleNamespace(chunks=lambda strategy: [])
RACE_SECONDS = 4.0
"""How long the student's loop swaps her folder while the class is graded again and again."""

SWAP = """
import os, sys
mine, theirs = sys.argv[1], sys.argv[2]
real, link = mine + ".real", mine + ".link"
os.symlink(theirs, link)
while True:  # her exercises/ becomes a link to the classmate's, and back, as fast as the machine goes
    os.rename(mine, real)
    os.rename(link, mine)
    os.rename(mine, link)
    os.rename(real, mine)
"""


def _notebook(folder: Path, words: str) -> bytes:
    folder.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(words)])
    nbformat.write(nb, folder / EX2)
    return (folder / EX2).read_bytes()


def test_a_folder_swapped_for_a_link_during_grading_never_hands_in_a_classmates_work(tmp_path, monkeypatch):
    """A root loop stands in for eve: her exercises/ folder swapped for a link to ada's (0700: she cannot read it)
    and back, while the class is graded over and over; eve's runs only ever get eve's bytes, ada's only ada's."""
    home = tmp_path / "home"
    ada_folder = home / "ada" / "ragkit" / "notebooks" / "exercises"
    eve_folder = home / "eve" / "ragkit" / "notebooks" / "exercises"
    ada, eve = _notebook(ada_folder, "ada's own work"), _notebook(eve_folder, "eve's own work")
    (home / "ada").chmod(0o700)
    ran: list[tuple[str, bytes]] = []

    class Recording:
        def __init__(self, hidden, limits, cache=None, shared=None, lend=None):
            self.isolation = Isolation(True)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

        def run(self, notebook, student, names, functions, pairs=None, lend=True):
            ran.append((student, notebook))
            return SandboxRun(answers='{"my_cut": {"value": null}}', seconds=0.1)

    monkeypatch.setattr(grading, "Sandbox", Recording)
    monkeypatch.setattr(grading, "snapshot_cache", lambda *a: None)  # no cache copied for runs that run nothing
    monkeypatch.setattr(grading, "writing_into", lambda *a: contextlib.nullcontext())
    student = subprocess.Popen([sys.executable, "-c", SWAP, str(eve_folder), str(ada_folder)])
    gradings = 0
    try:
        began = time.monotonic()
        while time.monotonic() - began < RACE_SECONDS:
            grading.grade([home], "home", course=NO_COURSE, lending=False)  # type: ignore[arg-type]
            gradings += 1
    finally:
        student.kill()
        student.wait()
    assert gradings >= 10 and any(who == "eve" for who, _ in ran)
    assert {notebook for who, notebook in ran if who == "eve"} == {eve}, "eve was graded on ada's work"
    assert {notebook for who, notebook in ran if who == "ada"} == {ada}


def test_a_notebook_is_read_once_when_it_is_found(tmp_path):
    """The bytes kept are those read when the notebook was found: replaced afterwards by a link, it is not read."""
    folder = tmp_path / "home" / "eve" / "exercises"
    mine = _notebook(folder, "eve's own work")
    other = _notebook(tmp_path / "home" / "ada", "ada's own work")
    (found,) = handed_in.submissions([tmp_path / "home" / "eve"], "home", [])
    (folder / EX2).unlink()
    (folder / EX2).symlink_to(tmp_path / "home" / "ada" / EX2)
    assert found.notebook() == mine != other


@pytest.mark.parametrize("given", ["the folder", "the notebook"])
def test_a_path_given_below_a_students_folder_is_opened_part_by_part(tmp_path, given):
    """/home/eve/ragkit/... given as the teacher's glob found it: eve's ragkit/ a link to ada's is refused."""
    home = tmp_path / "home"
    _notebook(home / "ada" / "ragkit" / "exercises", "ada's own work")
    (home / "eve").mkdir()
    (home / "eve" / "ragkit").symlink_to(home / "ada" / "ragkit")
    path = home / "eve" / "ragkit" / "exercises"
    skipped: list[str] = []
    found = handed_in.submissions([path if given == "the folder" else path / EX2], "home", skipped)
    assert found == []
    kind = "searched" if given == "the folder" else "graded"
    assert skipped == [
        f"{path if given == 'the folder' else path / EX2}: {home / 'eve' / 'ragkit'} is a link (to "
        f"{home / 'ada' / 'ragkit'}): not {kind}, a submission is read where it lies, never through a link"
    ]


def test_the_spool_keeps_what_was_read(tmp_path):
    spool = handed_in.Spool()
    kept = [spool.keep(bytes([n]) * (1000 * n + 1)) for n in range(5)]
    assert [k.read() for k in kept] == [bytes([n]) * (1000 * n + 1) for n in range(5)]
    assert os.listdir(tmp_path) == []  # nothing of it under a name


# The grades are written through no link and over no file of another name


def _grade(*args: str) -> subprocess.CompletedProcess:
    from conftest import ROOT

    return subprocess.run(
        [sys.executable, "-m", "ragkit", "grade", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )


def test_grades_are_never_written_through_a_planted_link_or_over_a_hard_link(tmp_path):
    """eve's link where the teacher writes (/tmp/grades.csv) to a root-only file, and a hard link to a submission
    outside the folder graded: both refused before anything runs, and neither file changes."""
    home = tmp_path / "home"
    _notebook(home / "ada" / "exercises", "ada's own work")
    secret = tmp_path / "root-only.txt"
    secret.write_text("only root may write this\n")
    secret.chmod(0o600)
    planted = tmp_path / "grades.csv"
    planted.symlink_to(secret)
    elsewhere = _notebook(tmp_path / "elsewhere" / "bob", "bob's work, not graded today")
    hard = tmp_path / "grades.json"
    os.link(tmp_path / "elsewhere" / "bob" / EX2, hard)
    for args, why in (
        (["--csv", str(planted)], f"{planted} is a link (to {secret}): not written through"),
        (["--json", str(hard)], f"{hard} has more than one name (a hard link): not overwritten"),
    ):
        out = _grade(str(home), "--timeout", "5", *args)
        assert out.returncode == 1 and why in out.stderr and "grading with" not in out.stderr, out.stderr
    assert secret.read_text() == "only root may write this\n" and planted.is_symlink()
    assert (tmp_path / "elsewhere" / "bob" / EX2).read_bytes() == elsewhere


def test_a_file_is_written_whole_through_an_exclusive_temporary_file_and_a_rename(tmp_path):
    from ragkit.errors import InputError
    from ragkit.teach.untrusted import write_file

    out = tmp_path / "grades.json"
    write_file(out, b"first")
    write_file(out, b"second")  # over its own earlier file: a regular file of one name
    assert out.read_bytes() == b"second" and sorted(os.listdir(tmp_path)) == ["grades.json"]
    assert oct(out.stat().st_mode & 0o777) == oct(0o600)
    target = tmp_path / "target"
    target.write_bytes(b"kept")
    (tmp_path / "link.json").symlink_to(target)
    with pytest.raises(InputError, match="is a link"):
        write_file(tmp_path / "link.json", b"x")
    os.link(target, tmp_path / "other.json")
    with pytest.raises(InputError, match="more than one name"):
        write_file(tmp_path / "other.json", b"x")
    assert target.read_bytes() == b"kept" and not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
