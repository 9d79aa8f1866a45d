"""No submission ends the batch: answers checked against a strict schema, one boundary per submission, and no thread
of the grader's left running when it exits (issue 63, items 1 and 7)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from ragkit.teach import exercises as ex
from ragkit.teach.exercises.results import EXERCISES
from ragkit.teach.grading import answers as declared
from ragkit.teach.grading import grader as grading
from ragkit.teach.grading.isolation import Isolation
from ragkit.teach.grading.judging import GRADER_FAILED
from ragkit.teach.grading.sandbox import SandboxRun

from conftest import ROOT

EX2, EX4 = "ex2-choose-a-threshold.ipynb", "ex4-design-a-header.ipynb"
NO_COURSE = SimpleNamespace(chunks=lambda strategy: [])
"""A course with no header chunks: grading asks a header for no pair, and lends nothing."""


def _hand_in(home: Path, student: str, name: str) -> None:
    folder = home / student / "ragkit" / "notebooks" / "exercises"
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(), folder / name)


def _standin(answers: dict[str, str], raises: tuple[str, ...] = ()):
    """A sandbox that runs nothing: each student's run answers ``answers[student]``, or raises for ``raises``."""

    class Standin:
        def __init__(self, hidden, limits, cache=None, shared=None, lend=None):
            self.isolation = Isolation(True)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

        def run(self, notebook, student, names, functions, pairs=None, lend=True):
            if student in raises:
                raise RuntimeError(f"the grader tripped over {student}'s run")
            return SandboxRun(answers=answers[student], seconds=1.0)

    return Standin


@pytest.fixture
def passing_ex2(monkeypatch):
    passes = declared.Exercise("ex2", EX2, {"my_cut": "number"}, lambda course, student, a: ex.Feedback(True, ("ok",)))
    monkeypatch.setitem(declared.TABLE, "ex2", passes)


UNHASHABLE = {
    "my_header": {"value": [[["a title"], "a section", "a header"]]},
    "my_expectation": {"value": "better"},
    "my_conclusion": {"value": "consistent"},
    "stated_expectation": {"value": "better"},
}
"""An ex4 kernel that replaced the answer reporter: a header answered for a (title, section) pair whose title is a
list, which a dict cannot be keyed by."""


def test_an_unhashable_header_is_that_notebooks_not_yet_and_the_class_is_graded(tmp_path, monkeypatch, passing_ex2):
    home = tmp_path / "home"
    _hand_in(home, "ada", EX2)
    _hand_in(home, "eve", EX4)
    answers = {"ada": json.dumps({"my_cut": {"value": 0.5}}), "eve": json.dumps(UNHASHABLE)}
    monkeypatch.setattr(grading, "Sandbox", _standin(answers))
    result = grading.grade([home], "home", course=NO_COURSE, lending=False)  # type: ignore[arg-type]
    rows = {(g.student, g.exercise): g for g in result.grades}
    assert rows["ada", "ex2"].grade == "yes"
    assert rows["eve", "ex4"].grade == "not yet"
    assert rows["eve", "ex4"].reason == "`my_header` must be a function of (doc_title, section)"


def test_a_notebook_the_grader_fails_on_is_its_rows_not_run_and_the_class_is_graded(tmp_path, monkeypatch, passing_ex2):
    """One run the grader trips over (bob's), one check that hands back no feedback (cy's): each is that row's
    ``not run`` with the error, and ada before and dan after them are graded."""
    home = tmp_path / "home"
    for who in ("ada", "bob", "cy", "dan"):
        _hand_in(home, who, EX2)
    answer = json.dumps({"my_cut": {"value": 0.5}})
    monkeypatch.setattr(grading, "Sandbox", _standin(dict.fromkeys(("ada", "cy", "dan"), answer), raises=("bob",)))
    judge = declared.TABLE["ex2"].judge
    odd = declared.Exercise(
        "ex2", EX2, {"my_cut": "number"}, lambda course, who, a: None if who == "cy" else judge(course, who, a)
    )
    monkeypatch.setitem(declared.TABLE, "ex2", odd)
    result = grading.grade([home], "home", jobs=2, course=NO_COURSE, lending=False)  # type: ignore[arg-type]
    rows = {g.student: g for g in result.grades if g.exercise == "ex2"}
    assert rows["ada"].grade == rows["dan"].grade == "yes", rows
    assert rows["bob"].grade == "not run"
    assert rows["bob"].reason == GRADER_FAILED.format(error="RuntimeError", message="the grader tripped over bob's run")
    assert rows["cy"].grade == "not run"
    assert rows["cy"].reason == GRADER_FAILED.format(
        error="AttributeError", message="'NoneType' object has no attribute 'passed'"
    )


@pytest.mark.parametrize(
    "reported, why",
    [
        ('{"my_cut": {"value": NaN}}', "`my_cut` must be a number"),
        ('{"my_cut": {"value": -Infinity}}', "`my_cut` must be a number"),
    ],
)
def test_a_number_that_is_not_finite_is_no_answer(reported, why):
    answers, reason = declared.answers_of(reported, declared.TABLE["ex2"])
    assert answers == {} and reason is not None and reason.startswith(why), reason


@pytest.mark.parametrize(
    "value, kind, why",
    [
        (2**70, "int", "whole number"),
        ([[["T"], "S", "H"]], "header", "must be a function"),
        ([["T", {"s": 1}, "H"]], "header", "must be a function"),
        ([["T", "S", "H"], ["T", "S", "I"]], "header", "exactly the (doc_title, section) pairs"),
        ([["T", "S", "H"], ["U", "S", "H"]], "header", "exactly the (doc_title, section) pairs"),  # a pair not asked
        ([["T", "S", "H"]], "header", "exactly the (doc_title, section) pairs"),  # one asked for left out
        ({"q01": "a ticket", "q02": None}, "tickets", "question ids"),
    ],
)
def test_the_schema_of_each_kind_is_strict(value, kind, why):
    answer, reason = declared._kind("answer", value, kind, [("T", "S"), ("T", "R")])
    assert answer is None and reason is not None and why in reason, reason


def test_a_header_for_exactly_the_pairs_asked_is_read():
    assert declared._kind("my_header", [["T", "S", "H"], ["T", "R", "I"]], "header", [("T", "R"), ("T", "S")]) == (
        {("T", "S"): "H", ("T", "R"): "I"},
        None,
    )


LENDING_AT_THE_END = """
import sys, threading, time, uuid
from pathlib import Path
from types import SimpleNamespace

from ragkit.teach.grading import grader
from ragkit.teach.grading.isolation import Isolation
from ragkit.teach.grading.sandbox import SandboxRun

ABSENT = '{"my_header": {"absent": true}}'


class Standin:
    # an ex4 run whose kernel asked for vectors and ended (its time limit) while the grader still embeds them
    def __init__(self, hidden, limits, cache=None, shared=None, lend=None):
        self.isolation, self.lend = Isolation(True), lend

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def run(self, notebook, student, names, functions, pairs=None, lend=True):
        started = threading.Event()

        def ask():
            started.set()
            self.lend.encode([f"a header no cache has seen {uuid.uuid4().hex}, chunk {i}" for i in range(600)])

        threading.Thread(target=ask, daemon=True).start()
        started.wait()
        time.sleep(1.0)
        return SandboxRun(answers=ABSENT, seconds=1.0)


grader.Sandbox = Standin
course = SimpleNamespace(chunks=lambda strategy: [])
result = grader.grade([Path(sys.argv[1])], "home", course=course)
print(result.summary(), flush=True)
"""


@pytest.mark.slow  # the grader's model embeds 600 texts
def test_the_grader_exits_cleanly_while_a_lending_request_is_still_being_embedded(tmp_path):
    """The table is written, then no onnxruntime abort ("terminate called", exit 134): the grader waits for the
    texts under way before it exits."""
    home = tmp_path / "home"
    _hand_in(home, "ada", EX4)
    script = tmp_path / "grade.py"
    script.write_text(textwrap.dedent(LENDING_AT_THE_END))
    out = subprocess.run(
        [sys.executable, str(script), str(home)], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert "terminate called" not in out.stderr
    assert out.stdout.startswith(f"1 students, {len(EXERCISES)} grades:"), out.stdout
