"""`ragkit grade` finds the projects beside the notebooks and grades each by its machine check, in its own process."""

import json
import os
import shutil
import threading
from dataclasses import replace

import pytest

import ragkit.teach.course
from ragkit import project
from ragkit.teach.exercises import feedback
from ragkit.teach.exercises.project_check import REPORT_FILE, quoted_figures
from ragkit.teach.grading import answers as declared
from ragkit.teach.grading import grader as grading
from ragkit.teach.grading.handed_in import Submission
from ragkit.teach.grading.isolation import Isolation
from ragkit.teach.grading.projects import PROJECT_KEY, handed_in_projects, project_grades
from ragkit.teach.grading.sandbox import SandboxRun

from conftest import ROOT

EXAMPLE = ROOT / "data" / "example"


@pytest.fixture(autouse=True)
def hints(monkeypatch):
    monkeypatch.setattr(feedback, "HINTS", replace(feedback.HINTS, free=10_000))


def hand_in(home, who: str, outcome=None, where: str = "ragkit/my-project"):
    folder = home / who / where
    shutil.copytree(EXAMPLE, folder)
    if outcome is not None:
        project.write_results(folder, outcome)
        chosen, cut, metric = quoted_figures(outcome)
        words = " ".join(["measured"] * 400)
        (folder / REPORT_FILE).write_text(f"# Report\n\n{chosen}, cut {cut}, held out {metric}.\n\n{words}\n", "utf-8")
    return folder


def test_projects_are_found_by_their_plan_and_named_by_the_path_rule(tmp_path):
    home = tmp_path / "home"
    hand_in(home, "ada")
    hand_in(home, "eve")
    hand_in(home, "eve", where="other/copy")
    (home / "mallory").mkdir()
    (home / "mallory" / "ragkit").symlink_to(home / "ada" / "ragkit")  # ada's project under mallory's name
    (home / "bob" / "ragkit").mkdir(parents=True)
    (home / "bob" / "ragkit" / "project.toml").symlink_to(home / "ada" / "ragkit" / "project.toml")  # a plan linked
    os.mkfifo(home / "bob" / "ragkit" / "notes.toml")  # a FIFO beside it: never opened by the walk
    (home / "zed").mkdir()
    skipped: list[str] = []
    found = handed_in_projects([home], "home", skipped)
    assert [(s.student, s.exercise) for s in found] == [
        ("ada", PROJECT_KEY),
        ("eve", PROJECT_KEY),
        ("eve", PROJECT_KEY),
    ]
    assert not [s for s in found if s.student in ("mallory", "bob")]  # never through a link (notebooks' walk says so)
    listed = handed_in_projects([home], "home", skipped, students=["ada"])
    assert [s.student for s in listed] == ["ada"] and any("not on the class list" in s for s in skipped)


def test_two_projects_are_not_run_and_a_student_without_one_is_missing(tmp_path):
    home = tmp_path / "home"
    two = [Submission("eve", PROJECT_KEY, hand_in(home, "eve", where=w) / project.PLAN_FILE) for w in ("a", "b")]
    late: list[threading.Thread] = []
    rows = project_grades(two, [Submission("bob", "ex1", home / "bob" / "ex1.ipynb")], ["carl"], late)
    assert [(g.student, g.grade) for g in rows] == [("eve", "not run"), ("bob", "missing"), ("carl", "missing")]
    assert "2 projects: keep one" in rows[0].reason
    assert project_grades([], [], ["carl"], late) == []  # no project found: no project rows at all


@pytest.mark.slow  # recomputes the example project: embeds its documents
def test_a_project_is_graded_by_its_check_and_doctored_figures_are_not_yet(tmp_path):
    outcome = project.run_project(EXAMPLE)
    home = tmp_path / "home"
    good = hand_in(home, "ada", outcome)
    bad = hand_in(home, "bob", outcome)
    data = json.loads((bad / project.RESULTS_FILE).read_text(encoding="utf-8"))
    data["held_out"]["metric"] = 0.99
    (bad / project.RESULTS_FILE).write_text(json.dumps(data), encoding="utf-8")
    found = handed_in_projects([home], "home", [])
    rows = {g.student: g for g in project_grades(found, [], [], [])}
    assert rows["ada"].grade == "yes" and rows["ada"].numbers["chosen"] == outcome.chosen
    assert rows["ada"].notebook == str(good)
    assert rows["bob"].grade == "not yet" and "held_out.metric" in rows["bob"].reason


@pytest.mark.slow  # a whole grading: the ex2 check reads the course's sweep
def test_grade_gives_the_project_a_row_beside_the_exercises(tmp_path, monkeypatch):
    course = ragkit.teach.course.load(progress=False)
    outcome = project.run_project(EXAMPLE)
    home = tmp_path / "home"
    hand_in(home, "ada", outcome)
    (home / "bob").mkdir(parents=True)
    (home / "bob" / "ex2-choose-a-threshold.ipynb").write_text("{}")

    class Standin:
        """Runs nothing: every notebook answers its exercise's declared names with a wrong cut."""

        def __init__(self, hidden, limits, cache=None, shared=None, lend=None):
            self.isolation = Isolation(True, True)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

        def run(self, notebook, student, names, functions, pairs=None, lend=True):
            assert tuple(declared.TABLE["ex2"].answers) == names
            return SandboxRun(answers=json.dumps({"my_cut": {"value": 1.0}}), seconds=1.0)

    monkeypatch.setattr(grading, "Sandbox", Standin)
    result = grading.grade([home], "home", course=course, lending=False)
    rows = {(g.student, g.exercise): g.grade for g in result.grades}
    assert rows[("ada", PROJECT_KEY)] == "yes" and rows[("bob", PROJECT_KEY)] == "missing"
    assert rows[("bob", "ex2")] == "not yet"
    assert all(rows[("bob", ex)] == "missing" for ex in ("ex1", "ex6", "ex7"))


def test_the_grader_knows_exercises_6_and_7_by_their_file_names(tmp_path):
    from ragkit.teach.grading.handed_in import exercise_of, submissions

    assert [exercise_of(n) for n in ("ex6-rank-metrics-by-hand.ipynb", "alice ex7.ipynb", "ex8.ipynb")] == [
        "ex6",
        "ex7",
        None,
    ]
    for name in ("ex6-rank-metrics-by-hand.ipynb", "ex7-choose-efsearch.ipynb"):
        (tmp_path / "home" / "ada").mkdir(parents=True, exist_ok=True)
        (tmp_path / "home" / "ada" / name).write_text("{}")
    found = submissions([tmp_path / "home"], "home", [])
    assert sorted(s.exercise for s in found) == ["ex6", "ex7"]
    assert all(declared.TABLE[s.exercise].notebook == s.path.name for s in found)
