"""The nbgrader route judges in a process of its own that the notebook cannot steer: neither its environment (set
after the kernel started) nor its working folder names another data set or another student (issue 44)."""

import os
import shutil
from pathlib import Path

import pytest

import ragkit.teach.course
from ragkit import blind_window_start, needle_windows
from ragkit.teach import exercises as ex
from ragkit.teach.grading import nbgrader_export as nbx

from conftest import ROOT


@pytest.fixture
def autograde(monkeypatch):
    """This process as nbgrader starts a kernel to autograde: NBGRADER_EXECUTION in the environment it started with."""
    started = {**os.environ, nbx.EXECUTION_ENV: "autograde"}
    monkeypatch.setattr(nbx, "starting_environment", lambda: dict(started), raising=False)
    monkeypatch.setenv(nbx.EXECUTION_ENV, "autograde")
    monkeypatch.setattr(nbx, "_named", None, raising=False)
    return started


def gamed_data(folder: Path) -> Path:
    """The course's corpus with four questions and one out-of-domain query: its tuning half has no out-of-domain
    query, so a cut that answers everything costs nothing there and ex2's `my_cut = 1.0` passes."""
    data = folder / "data"
    shutil.copytree(ROOT / "data" / "corpus", data / "corpus")
    for name, keep in (("questions.jsonl", 4), ("out_of_domain.jsonl", 1)):
        lines = (ROOT / "data" / name).read_text(encoding="utf-8").splitlines()[:keep]
        (data / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return data


@pytest.mark.slow  # a judging process loads the course
def test_a_data_set_the_notebook_points_to_does_not_judge_it(autograde, tmp_path, monkeypatch):
    gamed = gamed_data(tmp_path)
    monkeypatch.setenv("RAGKIT_DATA", str(gamed))
    assert ex.check_threshold_choice(ragkit.teach.course.load(progress=False), 1.0).passed  # the trick works here
    monkeypatch.setenv("RAGKIT_DATA", str(gamed))  # what the student's cell does: os.environ[...]
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ["PATH"])
    with pytest.raises(AssertionError, match="NOT YET"):
        nbx.autograded_check("ex2", {"my_cut": 1.0})
    assert "RAGKIT_DATA" not in nbx.judging_environment() or \
        nbx.judging_environment()["RAGKIT_DATA"] == autograde.get("RAGKIT_DATA")
    assert nbx.judging_environment()["PATH"] == nbx.SYSTEM_PATH


@pytest.mark.slow
def test_a_chdir_into_another_students_folder_names_no_one_else(autograde, tmp_path, monkeypatch):
    course = ragkit.teach.course.load(progress=False)
    ada, bob = "ada", next(n for n in ("bob", "cy", "dee", "eli") if ex.own_size(n) != ex.own_size("ada"))
    for who in (ada, bob):
        (tmp_path / "autograded" / who / "ex1-destroyed-needle").mkdir(parents=True)
    size = ex.own_size(ada)
    windows = needle_windows(course.corpus, course.questions, size=size)
    qid = next(q for q, offset, length in windows if offset + length > size)
    q = next(q for q in course.questions if q.id == qid)
    doc = course.corpus[q.doc_id]
    cut = blind_window_start(doc, doc.text.find(q.needle) + len(q.needle) - 1, size)
    monkeypatch.chdir(tmp_path / "autograded" / ada / "ex1-destroyed-needle")
    monkeypatch.delenv("RAGKIT_STUDENT", raising=False)
    nbx.name_the_student()  # the locked first cell, before any of the student's code
    assert ex.current_student() == ada and ex.own_size() == size
    os.chdir(tmp_path / "autograded" / bob / "ex1-destroyed-needle")  # the student's code
    os.environ["RAGKIT_STUDENT"] = bob
    nbx.autograded_check("ex1", {"question_id": qid, "cut_at": cut})  # judged at ada's window: passes
