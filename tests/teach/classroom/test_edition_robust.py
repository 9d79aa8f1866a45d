"""`edition --check` on a broken catalogue or notebook names it and checks the rest, never a traceback (issue 44)."""

import shutil

import pytest

from ragkit.errors import InputError
from ragkit.teach.classroom import edition

from conftest import ROOT


@pytest.fixture
def notebooks(tmp_path):
    folder = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    assert edition.check(folder) == []
    return folder


@pytest.mark.parametrize("broken, said", [
    ('[[cell]]\nid = 1\nsha = "x"\nen = "a"\nnl = "b"\n', "id must be text"),
    ('[[cell]]\nid = "a"\nsha = "x"\nen = "a"\nnl = ["b"]\n', "nl must be text"),
    ('[[cell]]\nid = "a"\nsha = "x"\nen = "a"\n', "has no nl"),
    ("cell = 3\n", "must be an array of tables"),
    ("cell = [1, 2]\n", "entry 1 is not a table"),
    ("[[cell]\n", "is not valid TOML"),
    (b"\xff\xfe[[cell]]\n", "could not be read"),
])
def test_a_malformed_catalogue_entry_is_a_named_problem_and_the_rest_is_checked(notebooks, broken, said):
    path = edition.catalogue_path(notebooks, "06-thresholds")
    path.write_bytes(broken if isinstance(broken, bytes) else broken.encode())
    problems = edition.check(notebooks)
    assert [p.notebook for p in problems] == ["06-thresholds"] and said in problems[0].message, problems
    with pytest.raises(InputError, match=said):
        edition.write(notebooks)


def test_a_dutch_notebook_that_is_not_utf8_and_an_english_one_that_is_not_a_notebook_are_named(notebooks):
    edition.dutch_path(notebooks, "00-start-here").write_bytes(b'{"cells": "\xff\xfe"}')
    (notebooks / "06-thresholds.ipynb").write_text("not json", encoding="utf-8")
    problems = {p.notebook: p.message for p in edition.check(notebooks)}
    assert "nl/00-start-here.ipynb is not what the generator writes" in problems["00-start-here"]
    assert "06-thresholds.ipynb is not a notebook" in problems["06-thresholds"]
    assert "exercises/ex2-choose-a-threshold" not in problems  # checked, and fine
