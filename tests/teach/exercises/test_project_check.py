"""The project's machine check: a project run as documented passes; doctored figures, a split redrawn or files changed
after it, a report that does not quote its figures, too small a project and hostile files are NOT YET, in words."""

import json
import os
import shutil
from dataclasses import replace

import pytest

from ragkit import project
from ragkit.statistics import smallest_p
from ragkit.teach import language
from ragkit.teach.exercises import feedback
from ragkit.teach.exercises import results as res
from ragkit.teach.exercises.project_check import REPORT_FILE, check_project, differences, quoted_figures
from ragkit.teach.exercises.rules import PROJECT

from conftest import ROOT

EXAMPLE = ROOT / "data" / "example"


@pytest.fixture(autouse=True)
def results(tmp_path, monkeypatch):
    path = tmp_path / "results.jsonl"
    monkeypatch.setenv("RAGKIT_RESULTS", str(path))
    monkeypatch.setenv("RAGKIT_STUDENT", "tester")
    monkeypatch.setattr(res, "_student", None)
    monkeypatch.setattr(feedback, "HINTS", replace(feedback.HINTS, free=10_000))
    return path


@pytest.fixture(scope="module")
def outcome():
    return project.run_project(EXAMPLE)


def report_text(outcome, words: int = 400) -> str:
    chosen, cut, metric = quoted_figures(outcome)
    filler = " ".join(["because"] * words)
    return f"# Report\n\nThe tuning half chose {chosen} and the cut {cut}; held out, {metric}.\n\n{filler}\n"


def handed_in(tmp_path, outcome, name: str = "project"):
    """The worked example as a student hands it in: split, run with results.json written, and a report."""
    folder = tmp_path / name
    shutil.copytree(EXAMPLE, folder)
    project.write_results(folder, outcome)
    (folder / REPORT_FILE).write_text(report_text(outcome), encoding="utf-8")
    return folder


@pytest.mark.slow  # recomputes the project: embeds its documents
def test_the_worked_example_handed_in_as_documented_passes(tmp_path, outcome, results):
    judged = check_project(handed_in(tmp_path, outcome))
    assert judged.passed, str(judged)
    assert judged.numbers == {
        "chosen": outcome.chosen,
        "cut": outcome.cut,
        "held_metric": round(outcome.held_metric, 4),
        "verdict": str(outcome.challenge.verdict),
    }
    row = json.loads(results.read_text(encoding="utf-8").splitlines()[-1])
    assert row["exercise"] == "project" and row["passed"]


def test_eight_needles_a_half_can_show_a_difference():
    assert smallest_p(PROJECT.needles // 2) < 0.05 <= smallest_p(PROJECT.needles // 2 - 3)


@pytest.mark.slow  # recomputes the project: embeds its documents
def test_doctored_figures_are_named_field_by_field(tmp_path, outcome):
    folder = handed_in(tmp_path, outcome)
    path = folder / project.RESULTS_FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    data["held_out"]["metric"] += 0.05
    data["held_out"]["gate"]["bluffs"] -= 1
    data["chosen"] = "E/hybrid"
    path.write_text(json.dumps(data), encoding="utf-8")
    judged = check_project(folder)
    assert not judged.passed
    text = str(judged)
    assert "held_out.metric" in text and "held_out.gate.bluffs" in text and "chosen" in text
    assert "project run" in " ".join(judged.hints)


@pytest.mark.slow  # recomputes the project: embeds its documents
def test_figures_within_the_tolerance_of_another_machine_pass(tmp_path, outcome):
    folder = handed_in(tmp_path, outcome)
    path = folder / project.RESULTS_FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    data["held_out"]["metric"] += PROJECT.tolerance / 2
    path.write_text(json.dumps(data), encoding="utf-8")
    assert check_project(folder).passed


@pytest.mark.slow  # recomputes the project: embeds its documents
def test_a_needle_changed_after_the_split_breaks_the_seal(tmp_path, outcome):
    folder = handed_in(tmp_path, outcome)
    questions = folder / project.QUESTIONS_FILE
    questions.write_text(questions.read_text(encoding="utf-8").replace("boat gets damaged", "boat is damaged"), "utf-8")
    judged = check_project(folder)
    assert not judged.passed and "changed since the split was made: questions.jsonl" in str(judged)


@pytest.mark.slow  # recomputes the project: embeds its documents
def test_a_split_redrawn_is_not_the_courses(tmp_path, outcome):
    folder = handed_in(tmp_path, outcome)
    path = folder / project.SPLIT_FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    data["tuning"]["needles"], data["held_out"]["needles"] = data["held_out"]["needles"], data["tuning"]["needles"]
    path.write_text(json.dumps(data), encoding="utf-8")
    judged = check_project(folder)
    assert not judged.passed and "other halves than the course's split" in str(judged)


@pytest.mark.parametrize(
    ("report", "said"),
    [
        (lambda o: report_text(o).replace(quoted_figures(o)[1], "the cut I chose"), "does not quote"),
        (lambda o: report_text(o, words=10), "words (from 300"),
        (lambda o: report_text(o, words=5_000), "words (from 300"),
    ],
)
@pytest.mark.slow  # recomputes the project: embeds its documents
def test_a_report_must_quote_its_figures_and_be_of_a_readable_length(tmp_path, outcome, report, said):
    folder = handed_in(tmp_path, outcome)
    (folder / REPORT_FILE).write_text(report(outcome), encoding="utf-8")
    judged = check_project(folder)
    assert not judged.passed and said in str(judged)


@pytest.mark.slow  # recomputes the project: embeds its documents
def test_a_report_in_dutch_may_write_a_decimal_comma(tmp_path, outcome):
    folder = handed_in(tmp_path, outcome)
    comma = report_text(outcome).replace(quoted_figures(outcome)[2], quoted_figures(outcome)[2].replace(".", ","))
    (folder / REPORT_FILE).write_text(comma, encoding="utf-8")
    assert check_project(folder).passed


@pytest.mark.slow  # recomputes the project: embeds its documents
def test_too_small_a_project_is_not_yet_before_anything_is_recomputed(tmp_path, outcome, monkeypatch):
    folder = handed_in(tmp_path, outcome)
    monkeypatch.setattr(project, "run_project", lambda *a, **k: pytest.fail("a too small project was recomputed"))
    judged = check_project(folder, replace(PROJECT, needles=30))
    assert not judged.passed and "20 needles" in str(judged) and "at least 3 documents" in str(judged)
    judged = check_project(folder, replace(PROJECT, out_of_domain=20))
    assert not judged.passed and "14 out-of-domain queries" in str(judged)


@pytest.mark.parametrize("missing", [REPORT_FILE, project.RESULTS_FILE, project.SPLIT_FILE, project.PLAN_FILE])
@pytest.mark.slow  # recomputes the project: embeds its documents
def test_a_missing_file_is_named(tmp_path, outcome, missing):
    folder = handed_in(tmp_path, outcome)
    (folder / missing).unlink()
    judged = check_project(folder)
    assert not judged.passed and f"{missing} is missing" in str(judged)


@pytest.mark.slow  # recomputes the project: embeds its documents
def test_hostile_files_are_refused_unread_and_never_block(tmp_path, outcome):
    folder = handed_in(tmp_path, outcome)
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nNot the student's.\n", encoding="utf-8")
    (folder / "corpus" / "linked.md").symlink_to(secret)
    (folder / REPORT_FILE).unlink()
    os.mkfifo(folder / REPORT_FILE)
    (folder / project.RESULTS_FILE).write_bytes(b" " * (PROJECT.file_bytes + 1))
    judged = check_project(folder)
    text = str(judged)
    assert not judged.passed
    assert "linked.md not read: a symbolic link" in text
    assert "report.md not read: not a regular file" in text
    assert "results.json not read" in text and "more than the" in text
    link = tmp_path / "linked-project"
    link.symlink_to(folder)
    assert not check_project(link).passed and "is not a folder" in str(check_project(link))


@pytest.mark.slow  # recomputes the project: embeds its documents
def test_a_results_file_that_is_no_json_is_said(tmp_path, outcome):
    folder = handed_in(tmp_path, outcome)
    for text in ("[1, 2]", "{", "[" * 200 + "]" * 200):
        (folder / project.RESULTS_FILE).write_text(text, encoding="utf-8")
        judged = check_project(folder)
        assert not judged.passed and "results.json is not the JSON" in str(judged)


def test_differences_walk_numbers_texts_keys_and_lengths():
    a = {"x": 1.0, "y": [1, 2], "z": "E/dense", "w": {"k": 3}}
    assert differences(a, json.loads(json.dumps(a)), 0.001) == []
    b = {"x": 1.01, "y": [1], "z": "E/bm25", "w": {"k": 3, "extra": 1}}
    assert differences(a, b, 0.001) == ["w.extra", "x", "y", "z"]
    assert differences({"p": True}, {"p": 1}, 0.5) == ["p"]


@pytest.mark.slow  # recomputes the project: embeds its documents
def test_the_check_speaks_dutch(tmp_path, outcome):
    folder = handed_in(tmp_path, outcome)
    (folder / REPORT_FILE).unlink()
    with language.speaking("nl"):
        text = str(check_project(folder))
    assert "NOG NIET" in text and "ontbreekt" in text
