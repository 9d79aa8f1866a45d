"""The grader and the Dutch pilot: a Dutch exercise is graded like the English one; one handed in in both
languages is run twice and the better grade counts (docs/grading.md); the grade table stays English.

The fast tests stand a fake sandbox in for the real one (it reads the answer from the notebook's one cell) and a
stand-in check for ex2's, so they exercise ``grade`` itself, its grouping and its rows, without a kernel.
"""

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from ragkit.teach import exercises as ex
from ragkit.teach import language
from ragkit.teach.grading import grader as grading
from ragkit.teach.grading.sandbox import Isolation, SandboxRun

from conftest import ROOT

EX2 = "ex2-choose-a-threshold.ipynb"
DUTCH_EX2 = ROOT / "notebooks" / "nl" / "exercises" / EX2


def test_a_dutch_exercise_is_recognised_by_its_name_and_its_folder_says_its_language(tmp_path):
    mine = Path("/home/ada/ragkit/my-notebooks")
    assert grading.exercise_of(DUTCH_EX2.name) == "ex2"
    assert grading.language_of(mine / "nl" / "exercises" / EX2) == "nl"
    assert grading.language_of(Path("download/ada/nl") / EX2) == "nl"
    assert grading.language_of(mine / "exercises" / EX2) == "en"
    assert grading.language_of(Path("/home/nl/ragkit/my-notebooks/exercises") / EX2) == "en"  # a student named nl
    (tmp_path / "ada" / "ragkit" / "my-notebooks" / "nl" / "exercises").mkdir(parents=True)
    (tmp_path / "ada" / "ragkit" / "my-notebooks" / "nl" / "exercises" / EX2).write_text("{}")
    found = grading.submissions([tmp_path], "platform", [])
    assert [(s.student, s.exercise, s.language) for s in found] == [("ada", "ex2", "nl")]


def test_the_dutch_ex2_leaves_the_answer_the_grader_reads_and_the_same_code():
    """Generated from the English notebook: the same code cells (one more, the language cell), the same answer."""
    assert DUTCH_EX2.is_file(), "the Dutch pilot's ex2 is missing (notebooks/nl/exercises/)"
    english = nbformat.read(ROOT / "notebooks" / "exercises" / EX2, as_version=4)
    dutch = nbformat.read(DUTCH_EX2, as_version=4)
    code = [c.source for c in english.cells if c.cell_type == "code"]
    dutch_code = [c.source for c in dutch.cells if c.cell_type == "code"]
    assert [c for c in dutch_code if c in code] == code
    assert all(f"{name} = None" in "\n".join(dutch_code) for name in grading.TABLE["ex2"].answers)


class FakeSandbox:
    """Stands in for the sandbox: a notebook's answer is its one cell, ``my_cut = <value>``, read, never run."""

    runs: list[str] = []

    def __init__(self, *args, **kwargs):
        self.isolation = Isolation(True, True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def run(self, notebook: bytes, student: str, names, functions=(), pairs=None, lend=True) -> SandboxRun:
        source = nbformat.reads(notebook.decode(), as_version=4).cells[0].source
        FakeSandbox.runs.append(student)
        value = json.loads(source.split("=", 1)[1].strip().replace("None", "null"))
        return SandboxRun(True, answers=json.dumps({"my_cut": {"value": value}}), seconds=1.0)


def stand_in_check(course, student, answers) -> ex.Feedback:
    """Passes 0.5 only; its note is the language the grader speaks while it judges."""
    cut = answers["my_cut"]
    return ex.Feedback(cut == 0.5, (f"judged in {language.current()}",), {"cut": cut})


@pytest.fixture
def fake_grader(monkeypatch):
    FakeSandbox.runs = []
    monkeypatch.setattr(grading, "Sandbox", FakeSandbox)
    monkeypatch.setitem(grading.TABLE, "ex2", grading.Exercise("ex2", EX2, {"my_cut": "number"}, stand_in_check))
    course = SimpleNamespace(chunks=lambda strategy: [])  # no header pairs: no exercise here asks for them
    return lambda paths: grading.grade(paths, "platform", course=course, lending=False)


def hand_in(root: Path, student: str, where: str, cut: str) -> Path:
    path = root / student / "my-notebooks" / where / EX2
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"my_cut = {cut}")]), path)
    return path


def test_an_exercise_handed_in_in_both_languages_is_run_twice_and_the_better_grade_counts(tmp_path, fake_grader):
    hand_in(tmp_path, "ada", "exercises", "None")  # the English copy the workspace made, left as it was
    dutch = hand_in(tmp_path, "ada", "nl/exercises", "0.5")  # her work, in Dutch
    hand_in(tmp_path, "bob", "exercises", "0.5")
    hand_in(tmp_path, "bob", "nl/exercises", "0.5")
    hand_in(tmp_path, "cy", "exercises", "0.9")
    hand_in(tmp_path, "cy", "nl/exercises", "0.8")
    hand_in(tmp_path, "dee", "nl/exercises", "0.5")
    hand_in(tmp_path, "eve", "exercises", "0.5")
    hand_in(tmp_path, "eve", "exercises/copy", "0.5")  # two English ex2: which is her work is not the grader's guess
    hand_in(tmp_path, "eve", "nl/exercises", "0.5")
    result = fake_grader([tmp_path])
    rows = {(g.student, g.exercise): g for g in result.grades}
    assert len(rows) == len(result.grades), "an exercise got two rows"
    ada = rows["ada", "ex2"]
    assert ada.grade == "yes" and ada.notebook == str(dutch)
    assert f"also handed in {tmp_path / 'ada' / 'my-notebooks' / 'exercises' / EX2}: not yet" in ada.row()["reason"]
    assert rows["bob", "ex2"].grade == "yes" and "/nl/" not in rows["bob", "ex2"].notebook  # a tie: the English one
    assert rows["cy", "ex2"].grade == "not yet" and "also handed in" in rows["cy", "ex2"].row()["reason"]
    assert rows["dee", "ex2"].grade == "yes" and rows["dee", "ex2"].reason == "judged in en"
    assert rows["eve", "ex2"].grade == "not run" and "3 notebooks for ex2" in rows["eve", "ex2"].reason
    assert "eve" not in FakeSandbox.runs and sorted(FakeSandbox.runs) == ["ada", "ada", "bob", "bob", "cy", "cy", "dee"]
    assert result.counts() == {"yes": 3, "not yet": 1, "not run": 1, "missing": 5 * 4}


def test_the_grade_table_stays_english_whatever_language_the_teacher_speaks(tmp_path, fake_grader, monkeypatch):
    monkeypatch.setenv("RAGKIT_LANGUAGE", "nl")
    hand_in(tmp_path, "dee", "nl/exercises", "0.5")
    result = fake_grader([tmp_path])
    ex2 = next(g for g in result.grades if g.exercise == "ex2")
    assert ex2.reason == "judged in en" and ex2.grade == "yes"
    assert str(result).splitlines()[0].split() == ["student", "exercise", "grade", "numbers", "seconds",
                                                  "notebook", "reason"]
    assert language.current() == "nl", "the teacher's own language was not given back"


def test_the_grade_tables_numbers_are_written_in_english_whatever_language_the_teacher_speaks(monkeypatch):
    monkeypatch.setenv("RAGKIT_LANGUAGE", "nl")
    row = grading.Grade("ada", "ex2", "yes", {"cut": 0.123456, "wins": 1234, "verdict": "consistent"}).row()
    assert row["numbers"] == "cut=0.1235 wins=1234 verdict=consistent"
    assert language.current() == "nl"


@pytest.mark.slow  # two notebooks run in the real sandbox, the course's vectors
def test_a_students_dutch_ex2_and_her_untouched_english_copy_are_graded_yes_in_the_sandbox(tmp_path):
    import ragkit.teach.course
    from ragkit.teach.grading.sandbox import Limits

    course = ragkit.teach.course.load(progress=False)
    grid = [round(0.30 + 0.005 * i, 3) for i in range(141)]
    right = next(cut for cut in grid if ex.check_threshold_choice(course, cut).passed)
    mine = tmp_path / "home" / "ada" / "ragkit" / "my-notebooks"
    (mine / "exercises").mkdir(parents=True)
    (mine / "nl" / "exercises").mkdir(parents=True)
    shutil.copy(ROOT / "notebooks" / "exercises" / EX2, mine / "exercises" / EX2)  # the copy she never opened
    nb = nbformat.read(DUTCH_EX2, as_version=4)
    answer = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("my_cut = None"))
    answer.source = f"my_cut = {right}"
    nbformat.write(nb, mine / "nl" / "exercises" / EX2)
    result = grading.grade([tmp_path / "home"], "home", Limits(timeout=300, threads=1), jobs=2, course=course)
    print(f"\n{result}")
    ex2 = next(g for g in result.grades if g.exercise == "ex2")
    assert ex2.grade == "yes" and ex2.notebook == str(mine / "nl" / "exercises" / EX2), ex2
    assert ex2.numbers["cut"] == right
    assert f"also handed in {mine / 'exercises' / EX2}: not yet" in ex2.row()["reason"]
    # the Dutch notebook spoke Dutch in its sandboxed kernel; the grader's reason is the English check's
    with language.speaking("en"):
        assert ex2.reason.startswith("; ".join(ex.check_threshold_choice(course, right).notes[:2]))
    assert [g.exercise for g in result.grades if g.grade != "missing"] == ["ex2"]
