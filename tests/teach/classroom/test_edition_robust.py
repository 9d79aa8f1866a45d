"""`edition --check` on a broken catalogue or notebook names it and checks the rest, never a traceback (issue 44)."""

import json
import shutil

import pytest

from ragkit.errors import InputError
from ragkit.teach.classroom import edition

from conftest import ROOT


@pytest.fixture
def notebooks(tmp_path):
    folder = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    assert edition.check(tmp_path) == []
    return folder


@pytest.mark.parametrize(
    "broken, said",
    [
        ('[[cell]]\nid = 1\nsha = "x"\nen = "a"\nnl = "b"\n', "id must be text"),
        ('[[cell]]\nid = "a"\nsha = "x"\nen = "a"\nnl = ["b"]\n', "nl must be text"),
        ('[[cell]]\nid = "a"\nsha = "x"\nen = "a"\n', "has no nl"),
        ("cell = 3\n", "must be an array of tables"),
        ("cell = [1, 2]\n", "entry 1 is not a table"),
        ("[[cell]\n", "is not valid TOML"),
        (b"\xff\xfe[[cell]]\n", "could not be read"),
    ],
)
def test_a_malformed_catalogue_entry_is_a_named_problem_and_the_rest_is_checked(notebooks, broken, said):
    path = edition.catalogue_path(notebooks, "06-thresholds")
    path.write_bytes(broken if isinstance(broken, bytes) else broken.encode())
    problems = edition.check(notebooks.parent)
    assert [p.where for p in problems] == ["06-thresholds"] and said in str(problems[0]), problems
    with pytest.raises(InputError, match=said):
        edition.write(notebooks.parent)


def test_a_dutch_notebook_that_is_not_utf8_and_an_english_one_that_is_not_a_notebook_are_named(notebooks):
    edition.dutch_notebook_path(notebooks, "00-start-here").write_bytes(b'{"cells": "\xff\xfe"}')
    (notebooks / "06-thresholds.ipynb").write_text("not json", encoding="utf-8")
    problems = {p.where: str(p) for p in edition.check(notebooks.parent)}
    assert "nl/00-start-here.nl.ipynb is not what the generator writes" in problems["00-start-here"]
    assert "06-thresholds.ipynb is not a notebook" in problems["06-thresholds"]
    assert "exercises/ex2-choose-a-threshold" not in problems  # checked, and fine


def test_a_catalogue_nested_too_deep_is_a_named_problem(notebooks):
    """A 100,000-deep TOML array crashed the check with a RecursionError."""
    edition.catalogue_path(notebooks, "06-thresholds").write_text("cell = " + "[" * 100_000 + "]" * 100_000 + "\n")
    problems = edition.check(notebooks.parent)
    assert [p.where for p in problems] == ["06-thresholds"] and "nested too deep" in str(problems[0]), problems


@pytest.mark.parametrize(
    "spoil, said",
    [
        (lambda cells: [c.pop("id") for c in cells], "has no id"),
        (lambda cells: cells[0].pop("cell_type"), "is not a notebook"),
    ],
)
def test_an_english_notebook_without_cell_ids_or_kinds_is_a_named_problem(notebooks, spoil, said):
    """A notebook of nbformat 4.4 (no cell ids) or with a cell of no kind crashed the check with an AttributeError."""
    path = notebooks / "06-thresholds.ipynb"
    book = json.loads(path.read_text(encoding="utf-8"))
    book["nbformat_minor"] = 4
    spoil(book["cells"])
    path.write_text(json.dumps(book), encoding="utf-8")
    problems = edition.check(notebooks.parent)
    assert [p.where for p in problems] == ["06-thresholds"] and said in str(problems[0]), problems


def test_writing_refuses_before_it_writes_anything(notebooks):
    """A broken last notebook leaves the first notebook's Dutch edition as it was, not half a regenerated edition."""
    first = edition.dutch_notebook_path(notebooks, edition.COURSE[0])
    first.unlink()
    edition.catalogue_path(notebooks, edition.COURSE[-1]).write_text("[[cell]\n", encoding="utf-8")
    with pytest.raises(InputError, match="is not valid TOML"):
        edition.write(notebooks.parent)
    assert not first.exists()
