"""The grade report, for a teacher (issue 67, item 9): the CSV and JSON carry the whole reason; the printed table
says each exercise's rules once, above the rows, and each row the student's own reason first; ``--exercises`` grades
only those; no column cuts a word or a number's name."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from ragkit.errors import InputError
from ragkit.teach.grading import grader as grading
from ragkit.teach.grading.gradebook import COLUMNS, ClassGrades, Grade
from ragkit.teach.grading.isolation import Isolation
from ragkit.teach.grading.sandbox import SandboxRun
from ragkit.teach.untrusted import write_csv

RULES = (
    "the rules: bluff cost 5, answer without the needle cost 3, refusal cost 1, at most 25% of the answerable "
    "queries refused"
)
NUMBERS = {
    "cut": 0.54,
    "tune_cost": 57,
    "tune_refused": 7,
    "tune_best": 57,
    "judge_cost": 61,
    "judge_refused": 6,
    "judge_best": 55,
}


def _row(student: str, own: str, **kwargs) -> Grade:
    notes = (RULES, own)
    return Grade(
        student,
        "ex2",
        "not yet",
        dict(NUMBERS),
        "; ".join(notes),
        3.0,
        f"/home/{student}/ex2.ipynb",
        notes=notes,
        **kwargs,
    )


def _class(*grades: Grade) -> ClassGrades:
    return ClassGrades(tuple(grades), (), Isolation(True), 10.0)


def test_the_csv_and_json_carry_the_whole_reason(tmp_path):
    own = "a cheaper cut within the refusal ceiling exists; " + "look at the tuning half's costs again " * 20
    result = _class(_row("ada", own), _row("bob", "at 0.600 the cost is 64"))
    write_csv(tmp_path / "g.csv", COLUMNS, [g.row() for g in result.grades])
    (ada,) = [r for r in csv.DictReader((tmp_path / "g.csv").open(encoding="utf-8")) if r["student"] == "ada"]
    assert ada["reason"] == f"{RULES}; {own}" and len(ada["reason"]) > 800
    assert ada["numbers"].endswith("judge_cost=61 judge_refused=6 judge_best=55")
    rows = {g["student"]: g for g in json.loads(json.dumps(result.to_json()))["grades"]}
    assert rows["ada"]["reason"] == f"{RULES}; {own}"


def test_the_table_says_the_rules_once_and_each_students_own_reason_first():
    result = _class(
        _row("ada", "a cheaper cut within the refusal ceiling exists"), _row("bob", "at 0.600 the cost is 64")
    )
    printed = str(result)
    assert printed.count(RULES) == 1
    assert printed.startswith(f"every ex2 row: {RULES}\n\nstudent")
    ada = next(line for line in printed.splitlines() if line.startswith("ada "))
    assert ada.endswith("  a cheaper cut within the refusal ceiling exists")


def test_one_row_of_an_exercise_keeps_its_whole_reason():
    printed = str(_class(_row("ada", "a cheaper cut within the refusal ceiling exists")))
    assert "every ex2 row" not in printed and printed.count(RULES) == 1


def test_no_column_cuts_a_word_or_a_numbers_name():
    deep = "/home/ada/" + "/".join(f"folder{n}" for n in range(12)) + "/ex2-choose-a-threshold.ipynb"
    printed = str(_class(Grade("ada", "ex2", "yes", dict(NUMBERS), "ok", 3.0, deep)))
    line = next(line for line in printed.splitlines() if line.startswith("ada "))
    cells = line.split()
    pairs = [c for c in cells if "=" in c]
    assert pairs and all(c.split("=")[0] in NUMBERS for c in pairs), pairs  # whole names, never "judge_cos"
    path = next(c for c in cells if c.endswith(".ipynb"))
    assert path.startswith(".../folder") and "/ex2-choose-a-threshold.ipynb" in path  # whole folder names


class Standin:
    def __init__(self, hidden, limits, cache=None, shared=None, lend=None):
        self.isolation = Isolation(True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def run(self, notebook, student, names, functions, pairs=None, lend=True):
        return SandboxRun(answers=json.dumps({n: {"absent": True} for n in names}), seconds=0.1)


def test_only_the_exercises_asked_for_are_graded_and_none_other_is_missing(tmp_path, monkeypatch):
    home = tmp_path / "home"
    for name in ("ex1-destroyed-needle.ipynb", "ex2-choose-a-threshold.ipynb", "ex4-design-a-header.ipynb"):
        (home / "ada").mkdir(parents=True, exist_ok=True)
        nbformat.write(nbformat.v4.new_notebook(), home / "ada" / name)
    monkeypatch.setattr(grading, "Sandbox", Standin)
    course = SimpleNamespace(chunks=lambda strategy: [])
    result = grading.grade(
        [home], "home", course=course, lending=False, students=["ada", "bo"], exercises=["ex4", "ex2"]
    )  # type: ignore[arg-type]
    assert sorted((g.student, g.exercise, g.grade) for g in result.grades) == [
        ("ada", "ex2", "not yet"),
        ("ada", "ex4", "not yet"),
        ("bo", "ex2", "missing"),
        ("bo", "ex4", "missing"),
    ]
    with pytest.raises(InputError, match="ex9 is not an exercise"):
        grading.grade([home], exercises=["ex2", "ex9"], lending=False)


def test_the_cli_refuses_an_unknown_exercise_before_anything_runs(tmp_path, capsys):
    from ragkit.__main__ import main

    assert main(["grade", str(tmp_path), "--exercises", "ex2,ex9"]) == 1
    said = capsys.readouterr().err
    assert "--exercises: ex9 is not an exercise" in said and "grading with" not in said
    assert not Path(tmp_path / "g.csv").exists()
