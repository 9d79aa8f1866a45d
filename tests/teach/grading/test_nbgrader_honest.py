"""The nbgrader route judges in a process of its own that the notebook cannot steer: no setting of the kernel's
(now or as it started) and no working folder names another data set or another student (issue 44)."""

import json
import os
import shutil
import subprocess
import sys
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
    query, and the four are questions whose both phrasings find their needle in E/dense's top four, so a cut that
    answers everything costs nothing there (no bluff, no answer without the needle) and ex2's `my_cut = 1.0` passes."""
    data = folder / "data"
    shutil.copytree(ROOT / "data" / "corpus", data / "corpus")
    dense = ragkit.teach.course.load(progress=False).evaluation("E")["E/dense"]
    found = {n for n in dense.needle_ids if all(0 < r <= 4 for m, r in zip(dense.needle_ids, dense.ranks) if m == n)}
    lines = (ROOT / "data" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    easy = [line for line in lines if json.loads(line)["id"] in found][:4]
    assert len(easy) == 4, f"only {len(easy)} questions found in the top four by both phrasings"
    (data / "questions.jsonl").write_text("\n".join(easy) + "\n", encoding="utf-8")
    ood = (ROOT / "data" / "out_of_domain.jsonl").read_text(encoding="utf-8").splitlines()[:1]
    (data / "out_of_domain.jsonl").write_text("\n".join(ood) + "\n", encoding="utf-8")
    return data


def two_students(folder: Path) -> tuple[str, str, str, int]:
    """ada and a student whose ex1 window differs, each with nbgrader's autograded folder; ada's right ex1 answer."""
    course = ragkit.teach.course.load(progress=False)
    ada, bob = "ada", next(n for n in ("bob", "cy", "dee", "eli") if ex.own_size(n) != ex.own_size("ada"))
    for who in (ada, bob):
        (folder / "autograded" / who / "ex1-destroyed-needle").mkdir(parents=True)
    size = ex.own_size(ada)
    windows = needle_windows(course.corpus, course.questions, size=size)
    qid = next(q for q, offset, length in windows if offset + length > size)
    q = next(q for q in course.questions if q.id == qid)
    doc = course.corpus[q.doc_id]
    return ada, bob, qid, blind_window_start(doc, doc.text.find(q.needle) + len(q.needle) - 1, size)


@pytest.mark.slow  # a judging process loads the course
def test_a_data_set_the_notebook_points_to_does_not_judge_it(autograde, tmp_path, monkeypatch):
    gamed = gamed_data(tmp_path)
    works = subprocess.run(
        [
            sys.executable,
            "-c",
            "import ragkit.teach.course as c, ragkit.teach.exercises as ex; "
            "print(ex.check_threshold_choice(c.load(progress=False), 1.0).passed)",
        ],
        env={**os.environ, "RAGKIT_DATA": str(gamed), "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert works.stdout.split()[-1:] == ["True"], works.stderr[-2000:]  # the trick works when judged on that data
    monkeypatch.setenv("RAGKIT_DATA", str(gamed))  # what the student's cell does: os.environ[...]
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ["PATH"])
    with pytest.raises(AssertionError, match="NOT YET"):
        nbx.autograded_check("ex2", {"my_cut": 1.0})
    assert "RAGKIT_DATA" not in nbx.judging_environment() or nbx.judging_environment()["RAGKIT_DATA"] == autograde.get(
        "RAGKIT_DATA"
    )
    assert nbx.judging_environment()["PATH"] == nbx.SYSTEM_PATH


@pytest.mark.slow
def test_a_chdir_into_another_students_folder_names_no_one_else(autograde, tmp_path, monkeypatch):
    ada, bob, qid, cut = two_students(tmp_path)
    monkeypatch.chdir(tmp_path / "autograded" / ada / "ex1-destroyed-needle")
    monkeypatch.delenv("RAGKIT_STUDENT", raising=False)
    nbx.name_the_student()  # the locked first cell, before any of the student's code
    assert ex.current_student() == ada and ex.own_size() == ex.own_size(ada)
    os.chdir(tmp_path / "autograded" / bob / "ex1-destroyed-needle")  # the student's code
    monkeypatch.setenv("RAGKIT_STUDENT", bob)
    # bob's: NOT YET
    assert not nbx.judge_answers("ex1", bob, json.dumps({"question_id": qid, "cut_at": cut}))["passed"]
    nbx.autograded_check("ex1", {"question_id": qid, "cut_at": cut})  # judged at ada's window: passes


KERNEL_SETTINGS = (
    "RAGKIT_DATA",
    "RAGKIT_CACHE",
    "RAGKIT_SHARED_CACHE",
    "RAGKIT_MODELS_DIR",
    "RAGKIT_EMBEDDING_SERVICE",
    "RAGKIT_LANGUAGE",
    "HF_HOME",
    "HF_HUB_CACHE",
    "XDG_CACHE_HOME",
)


@pytest.mark.parametrize("graded", [True, False], ids=["autograde", "own-kernel"])
def test_the_judging_environment_takes_no_setting_from_the_kernel(graded, tmp_path, monkeypatch):
    """Neither the kernel's environment nor the one it was started with (which a cell can rewrite in place) steers
    the judge: data, cache, models, embedding service and home come from the installation and the system."""
    import pwd

    planted = {name: str(tmp_path / name) for name in KERNEL_SETTINGS}
    started = {**os.environ, **planted, **({nbx.EXECUTION_ENV: "autograde"} if graded else {})}
    monkeypatch.setattr(nbx, "starting_environment", lambda: dict(started))
    monkeypatch.setattr(nbx, "_named", "ada" if graded else None)
    for name, value in planted.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    env = nbx.judging_environment()
    assert not set(KERNEL_SETTINGS) & set(env)
    assert env["HOME"] == pwd.getpwuid(os.getuid()).pw_dir and env["PATH"] == nbx.SYSTEM_PATH
    assert not any(str(tmp_path) in value for name, value in env.items() if name != "RAGKIT_RESULTS")


def test_rewriting_the_environment_the_kernel_started_with_steers_nothing(tmp_path):
    """A cell can rewrite its process's starting environment block in place (/proc/self/mem), so that
    /proc/self/environ no longer says autograde; the judge still takes no RAGKIT_DATA from the kernel."""
    cell = f"""
import json, os
from ragkit.teach.grading import nbgrader_export as nbx
nbx.name_the_student()
fields = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
start, end = int(fields[47]), int(fields[48])
with open("/proc/self/mem", "r+b", buffering=0) as mem:
    mem.seek(start)
    at = mem.read(end - start).find(b"NBGRADER_EXECUTION=")
    mem.seek(start + at)
    mem.write(b"X")
os.environ["RAGKIT_DATA"] = {str(tmp_path)!r}
print(json.dumps([nbx.starting_environment().get(nbx.EXECUTION_ENV), nbx.judging_environment()]))
"""
    folder = tmp_path / "autograded" / "ada" / "ex2-choose-a-threshold"
    folder.mkdir(parents=True)
    env = {**os.environ, nbx.EXECUTION_ENV: "autograde", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", cell], cwd=folder, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    started_as, judging = json.loads(done.stdout.splitlines()[-1])
    assert started_as is None  # the rewrite worked: /proc/self/environ no longer says autograde
    assert "RAGKIT_DATA" not in judging and judging["RAGKIT_STUDENT"] == "ada"


@pytest.mark.slow  # a judging process loads the course
def test_a_data_set_the_notebook_points_to_does_not_judge_it_even_unseen_autograde(autograde, tmp_path, monkeypatch):
    """Where the cell has hidden autograde from the kernel's eyes, the judge still uses the installation's data."""
    monkeypatch.setattr(
        nbx, "starting_environment", lambda: {k: v for k, v in os.environ.items() if k != nbx.EXECUTION_ENV}
    )
    monkeypatch.delenv(nbx.EXECUTION_ENV)
    monkeypatch.setenv("RAGKIT_DATA", str(gamed_data(tmp_path)))
    with pytest.raises(AssertionError, match="NOT YET"):
        nbx.autograded_check("ex2", {"my_cut": 1.0})


@pytest.mark.slow
def test_the_first_cells_student_is_judged_even_when_autograde_is_hidden(autograde, tmp_path, monkeypatch):
    """After the locked first cell named ada, hiding autograde and naming bob everywhere the kernel can still judges
    ex1 at ada's window (and the same answer at bob's window is NOT YET, so the test can fail)."""
    ada, bob, qid, cut = two_students(tmp_path)
    monkeypatch.chdir(tmp_path / "autograded" / ada / "ex1-destroyed-needle")
    monkeypatch.delenv("RAGKIT_STUDENT", raising=False)
    nbx.name_the_student()  # the locked first cell
    monkeypatch.setattr(
        nbx, "starting_environment", lambda: {k: v for k, v in os.environ.items() if k != nbx.EXECUTION_ENV}
    )
    monkeypatch.delenv(nbx.EXECUTION_ENV)  # the student's code from here on
    os.chdir(tmp_path / "autograded" / bob / "ex1-destroyed-needle")
    monkeypatch.setenv("RAGKIT_STUDENT", bob)
    assert not nbx.judge_answers("ex1", bob, json.dumps({"question_id": qid, "cut_at": cut}))["passed"]
    nbx.autograded_check("ex1", {"question_id": qid, "cut_at": cut})
