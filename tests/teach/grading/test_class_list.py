"""A class list saved with a BOM is read; names are compared composed (NFC), and shown escaped where two differ only in
form (issue 63, item 9)."""

from __future__ import annotations

import unicodedata
from types import SimpleNamespace

import nbformat

from ragkit.teach.grading import grader as grading
from ragkit.teach.grading import handed_in
from ragkit.teach.grading.isolation import Isolation

EX1, EX2 = "ex1-destroyed-needle.ipynb", "ex2-choose-a-threshold.ipynb"
COMPOSED = unicodedata.normalize("NFC", "josé")
DECOMPOSED = unicodedata.normalize("NFD", "josé")  # as a macOS zip writes a folder's name


def test_a_class_list_saved_utf8_with_bom_is_read(tmp_path):
    listed = tmp_path / "class.txt"
    listed.write_bytes("ada\nbob\n".encode("utf-8-sig"))
    assert handed_in.read_class_list(listed) == ("ada", "bob")


def test_a_name_in_either_form_is_one_student_on_the_class_list(tmp_path):
    download = tmp_path / "download"
    for folder, name in ((COMPOSED, EX1), (DECOMPOSED, EX2)):
        (download / folder).mkdir(parents=True)
        nbformat.write(nbformat.v4.new_notebook(), download / folder / name)
    listed = tmp_path / "class.txt"
    listed.write_text(f"{DECOMPOSED}\n", encoding="utf-8")  # the list may be written either way too
    skipped: list[str] = []
    found = handed_in.submissions([download], "platform", skipped, handed_in.read_class_list(listed))
    assert [(s.student, s.exercise) for s in found] == [(COMPOSED, "ex1"), (COMPOSED, "ex2")]
    assert skipped == []


def test_two_notebooks_whose_paths_differ_only_in_form_are_shown_apart(tmp_path, monkeypatch):
    download = tmp_path / "download"
    for folder in (COMPOSED, DECOMPOSED):
        (download / folder).mkdir(parents=True)
        nbformat.write(nbformat.v4.new_notebook(), download / folder / EX2)

    class Standin:
        def __init__(self, hidden, limits, cache=None, shared=None, lend=None):
            self.isolation = Isolation(True)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

    monkeypatch.setattr(grading, "Sandbox", Standin)
    course = SimpleNamespace(chunks=lambda strategy: [])
    result = grading.grade([download], "platform", course=course, lending=False)  # type: ignore[arg-type]
    (row,) = [g for g in result.grades if g.exercise == "ex2"]
    assert row.student == COMPOSED and row.grade == "not run"
    assert row.reason == (  # in the order of their paths: "e" and a combining accent before "é"
        f"2 notebooks for ex2 in one language: keep one; handed in {download / 'jose'}\\u0301/{EX2}; "
        f"handed in {download / COMPOSED / EX2}"
    )
