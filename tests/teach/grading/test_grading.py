"""Grades come from the submitted notebooks, run afresh in the sandbox, never from what a student reports."""

import csv
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import nbformat
import pytest
from unprivileged import AS_NOBODY, python_for, site_path

import ragkit.teach.course
from ragkit.errors import InputError
from ragkit.teach import exercises as ex
from ragkit.teach.exercises.results import EXERCISES as EXERCISE_KEYS
from ragkit.teach.grading import answers as declared
from ragkit.teach.grading import gradebook, handed_in, judging
from ragkit.teach.grading import grader as grading
from ragkit.teach.grading.failures import RunFailure
from ragkit.teach.grading.isolation import Limits
from ragkit.teach.grading.sandbox import SandboxRun

from conftest import ROOT

EXERCISES = ROOT / "notebooks" / "exercises"
SOLUTIONS = ROOT / "notebooks" / "solutions"
EX1, EX2 = "ex1-destroyed-needle.ipynb", "ex2-choose-a-threshold.ipynb"
# the sleeper costs this much, and the class about as much in all (the rest run beside it): every honest notebook of
# the class runs in 1 to 3 s here when the class is graded alone, and a full run makes that a few times longer
CLASS_TIMEOUT = 40.0

SOLVE_EX1 = """
windows = needle_windows(course.corpus, course.questions, size={size})
question_id = next(qid for qid, offset, length in windows if offset + length > {size})
q = next(q for q in course.questions if q.id == question_id)
doc = course.corpus[q.doc_id]
cut_at = blind_window_start(doc, doc.text.find(q.needle) + len(q.needle) - 1, {size})
"""


@pytest.fixture(scope="module")
def course():
    return ragkit.teach.course.load(progress=False)


def edited(
    source: Path, answer: str | None = None, check: str | None = None, first: str | None = None, last: str | None = None
) -> nbformat.NotebookNode:
    """An exercise notebook with its answer cell, its check cell, a cell before all and one after all replaced."""
    nb = nbformat.read(source, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    if answer is not None:
        next(c for c in code if "# your answer" in c.source).source = answer
    if check is not None:
        next(c for c in code if c.source.lstrip().startswith(("check_", "with course.recording"))).source = check
    if first is not None:
        nb.cells.insert(0, nbformat.v4.new_code_cell(first))
    if last is not None:
        nb.cells.append(nbformat.v4.new_code_cell(last))
    return nb


def hand_in(home: Path, student: str, name: str, nb: nbformat.NotebookNode) -> Path:
    """Save a notebook where a hub keeps it: <home>/<student>/ragkit/notebooks/exercises/<name>."""
    folder = home / student / "ragkit" / "notebooks" / "exercises"
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / name)
    return folder / name


def grades_by_cell(result):
    return {(g.student, g.exercise): g for g in result.grades}


# The rules: whose a notebook is, which exercise, what an answer may be


def test_the_exercise_comes_from_the_file_name():
    assert handed_in.exercise_of("ex1-destroyed-needle.ipynb") == "ex1"
    assert handed_in.exercise_of("Alice EX3 (1).ipynb") == "ex3"
    assert handed_in.exercise_of("alice_ex2.ipynb") == "ex2"
    assert handed_in.exercise_of("apex1.ipynb") is None  # part of a word
    assert handed_in.exercise_of("ex12.ipynb") is None
    assert handed_in.exercise_of("ex1-destroyed-needle.py") is None


def test_the_student_comes_from_the_path_never_the_notebook(tmp_path):
    nb = tmp_path / "home" / "alice" / "ragkit" / "notebooks" / "exercises" / EX1
    nb.parent.mkdir(parents=True)
    nb.write_text("{}")
    assert handed_in.student_of(nb, tmp_path / "home", "home") == "alice"
    assert handed_in.student_of(nb, tmp_path / "home", "platform") == "alice"
    assert handed_in.student_of(nb, nb, "platform") == "exercises"
    download = tmp_path / "download"
    (download / "bob smith").mkdir(parents=True)
    (download / "bob smith" / "ex2.ipynb").write_text("{}")
    (download / "ex3.ipynb").write_text("{}")
    assert handed_in.student_of(download / "bob smith" / "ex2.ipynb", download, "platform") == "bob smith"
    assert handed_in.student_of(download / "bob smith" / "ex2.ipynb", download, "home") is None
    skipped: list[str] = []
    found = handed_in.submissions([download], "platform", skipped)
    assert [(s.student, s.exercise) for s in found] == [("bob smith", "ex2")]
    assert any("names no student" in s for s in skipped)


def test_a_link_on_the_way_is_refused_and_named_never_followed(tmp_path):
    """A student who links their folder to another's hands in nothing: the link is said, the file is graded once."""
    real = tmp_path / "home" / "bob" / "ex"
    real.mkdir(parents=True)
    (real / EX1).write_text("{}")
    (tmp_path / "home" / "mallory").mkdir()
    (tmp_path / "home" / "mallory" / "ex").symlink_to(real)
    assert handed_in.student_of(tmp_path / "home" / "mallory" / "ex" / EX1, tmp_path / "home", "home") == "mallory"
    skipped: list[str] = []
    found = handed_in.submissions([tmp_path / "home"], "home", skipped)
    assert [(s.student, s.path.parent.name) for s in found] == [("bob", "ex")]  # the linked folder is not entered
    assert skipped == [
        f"{tmp_path}/home/mallory/ex: a link to a folder (to {real}), not followed: only what lies in "
        "the folders given is read"
    ]
    skipped = []
    found = handed_in.submissions([tmp_path / "home" / "mallory" / "ex" / EX1, real / EX1], "home", skipped)
    assert [s.student for s in found] == ["bob"]
    assert skipped[0].startswith(f"{tmp_path}/home/mallory/ex/{EX1}: {tmp_path}/home/mallory/ex is a link (to ")


def test_checkpoints_and_hidden_folders_are_not_submissions(tmp_path):
    folder = tmp_path / "home" / "alice"
    (folder / ".ipynb_checkpoints").mkdir(parents=True)
    (folder / ".ipynb_checkpoints" / "ex1-destroyed-needle-checkpoint.ipynb").write_text("{}")
    (folder / EX1).write_text("{}")
    found = handed_in.submissions([tmp_path / "home"], "home", [])
    assert [s.path.name for s in found] == [EX1]


def test_a_notebook_is_read_only_as_a_bounded_regular_file(tmp_path):
    """Read once, through its folder's descriptor, when it is found: a FIFO, a file too large or unreadable is that
    notebook's reason (its row is "not run"); a link is not read at all."""
    folder = tmp_path / "home" / "ada"
    folder.mkdir(parents=True)
    os.mkfifo(folder / EX1)
    (folder / EX2).symlink_to("/etc/passwd")
    huge = folder / "ex3.ipynb"
    with huge.open("wb") as f:  # sparse: refused by its size, never read
        f.truncate(handed_in.MAX_NOTEBOOK + 1)
    locked = folder / "ex4.ipynb"
    locked.write_text("{}")
    os.chmod(locked, 0)
    skipped: list[str] = []
    found = {s.exercise: s for s in handed_in.submissions([tmp_path / "home"], "home", skipped)}
    assert skipped == [
        f"{folder / EX2}: {folder / EX2} is a link (to /etc/passwd): not graded, a submission is read "
        "where it lies, never through a link"
    ]
    with pytest.raises(InputError, match="not a regular file"):
        found["ex1"].notebook()
    with pytest.raises(
        InputError,
        match=f"{handed_in.MAX_NOTEBOOK + 1:,} bytes, more than the {handed_in.MAX_NOTEBOOK:,} a notebook may hold",
    ):
        found["ex3"].notebook()
    if os.access(locked, os.R_OK):  # root reads it anyway
        assert found["ex4"].notebook() == b"{}"
    else:
        with pytest.raises(InputError, match="Permission denied"):
            found["ex4"].notebook()


@pytest.mark.parametrize(
    "value, kind, why",
    [
        ("q01", "int", "whole number"),
        (True, "int", "whole number"),
        ([1], "number", "number"),
        (True, "number", "number"),
        (3, "str", "string"),
        ({"q01": 3}, "tickets", "question ids"),
        ([["T", "S", 7]], "header", "returned int"),
        ("x", "header", "function"),
    ],
)
def test_an_answer_of_the_wrong_kind_is_named(value, kind, why):
    assert why in declared._kind("answer", value, kind)[1]


def test_answers_are_plain_bounded_values():
    exercise = declared.TABLE["ex2"]
    assert declared.answers_of('{"my_cut": {"value": 0.4}}', exercise) == ({"my_cut": 0.4}, None)
    assert declared.answers_of('{"my_cut": {"value": null}}', exercise) == ({"my_cut": None}, None)
    deep = '{"my_cut": {"value": ' + "[" * 20 + "]" * 20 + "}}"
    for text, why in [
        ("not json", "could not be read"),
        ("[1]", "not a mapping"),
        (deep, "nested"),
        ('{"my_cut": {"absent": true}}', "not defined"),
        ('{"my_cut": {"value": "0.4"}}', "must be a number"),
        ("{}", "not reported"),
        ('{"my_cut": {"error": "ValueError: no"}}', "could not be read: ValueError"),
        ("[" * 100_000 + "]" * 100_000, ""),
    ]:
        answers, reason = declared.answers_of(text, exercise)
        assert answers == {} and reason is not None and why in reason


def test_a_header_reaches_the_check_as_strings_per_pair(course):
    pairs = declared.header_pairs(course)
    assert len(pairs) == len(set(pairs)) and ("", "") not in pairs
    answers = {
        "my_header": {"value": [[t, s, f"[{t} > {s}]"] for t, s in pairs]},
        "my_expectation": {"value": "better"},
        "my_conclusion": {"value": "x"},
        "stated_expectation": {"value": "better"},
    }
    typed, why = declared.answers_of(json.dumps(answers), declared.TABLE["ex4"])
    assert why is None and typed["my_header"][pairs[0]] == f"[{pairs[0][0]} > {pairs[0][1]}]"


def test_a_check_that_cannot_judge_an_answer_is_not_yet_never_a_crash(course, monkeypatch):
    def fails(course, student, answers):
        raise TypeError("'<=' not supported")

    monkeypatch.setitem(declared.TABLE, "ex2", declared.Exercise("ex2", EX2, {"my_cut": "number"}, fails))
    run = SandboxRun(answers='{"my_cut": {"value": 1}}')
    g = judging.judged(handed_in.Submission("alice", "ex2", Path(EX2)), run, course)
    assert g.grade == "not yet" and "could not judge" in g.reason and "TypeError" in g.reason


def test_every_exercise_declares_the_names_its_notebook_leaves_for_answers():
    """The adapter's names are the ones the exercise notebooks set to None for the student to fill."""
    for key, exercise in declared.TABLE.items():
        nb = nbformat.read(EXERCISES / exercise.notebook, as_version=4)
        sources = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        for name in exercise.answers:
            assert f"{name} = None" in sources or f"{name} = {{}}" in sources, (key, name)


# The sandbox on its own: one notebook each, the hostile ones graded "not run" with the reason


def _notebook(*cells: str) -> bytes:
    return nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])).encode()


@pytest.mark.slow
def test_the_sandbox_runs_as_nobody_without_network_or_the_teachers_files(tmp_path, monkeypatch):
    from ragkit.teach.grading.sandbox import Sandbox

    teacher = tmp_path / "teacher"
    teacher.mkdir()
    (teacher / "canary.txt").write_text("the teacher's")
    monkeypatch.setenv("HOME", str(teacher))
    marker = f"/tmp/ragkit-left-behind-{uuid.uuid4().hex}"
    with Sandbox([tmp_path], Limits(timeout=60)) as sandbox:
        probe = sandbox.isolation
        plain = sandbox.run(
            _notebook(
                "import os, socket\nx = [os.getuid(), os.getgroups()]\n"
                f"open({marker!r}, 'w').write('x')\n"
                "try:\n    socket.create_connection(('10.1.2.3', 80), timeout=2)\n"
                "    y = 'connected'\nexcept OSError as exc:\n    y = str(exc)"
            ),
            "alice",
            ("x", "y"),
        )
        socket = sandbox.run(_notebook("import socket\nsocket.socket().connect(('93.184.216.34', 80))"), "a", ("x",))
        teacher_file = sandbox.run(_notebook(f"x = open({str(teacher / 'canary.txt')!r}).read()"), "a", ("x",))
        deleted = sandbox.run(_notebook(f"import os\nos.remove({str(teacher / 'canary.txt')!r})"), "a", ("x",))
        checks = ROOT / "ragkit" / "teach" / "exercises" / "__init__.py"
        source = sandbox.run(_notebook(f"open({str(checks)!r}, 'a')"), "a", ())
        dead = sandbox.run(_notebook("import os\nos.kill(os.getpid(), 9)"), "a", ())
    assert (teacher / "canary.txt").read_text() == "the teacher's"
    assert not os.path.exists(marker)
    answers = json.loads(plain.answers)
    assert "no network" in answers["y"]["value"]
    if probe.change_user:
        assert answers["x"]["value"][0] != 0 and answers["x"]["value"][1] == []
    for run in (socket, teacher_file, deleted, source):
        assert run.failure is not None and run.failure.cause == "cell raised" and run.failure.number == 1, run
    assert "no network" in socket.failure.message and socket.failure.error == "PermissionError"
    assert teacher_file.failure.error == deleted.failure.error == "FileNotFoundError"
    assert "No such file" in str(teacher_file.failure) and "No such file" in str(deleted.failure)
    assert "Read-only" in str(source.failure) or "Permission" in str(source.failure)
    assert dead.failure is not None and dead.failure.cause == "kernel died"
    assert str(dead.failure) == "the kernel died (it exited, crashed or ran out of memory)"


@pytest.mark.slow
def test_a_teacher_without_root_is_told_and_still_sandboxed(tmp_path):
    """Run the grader itself as an unprivileged user: every limit holds but the change of user, and it says so."""
    if os.geteuid() != 0:
        pytest.skip("needs root to start the grader as another user")
    python = python_for(AS_NOBODY)
    base = Path(tempfile.mkdtemp(prefix="ragkit-grade-nonroot-"))
    try:
        base.chmod(0o755)
        nb = hand_in(
            base / "home",
            "carol",
            EX1,
            nbformat.v4.new_notebook(
                cells=[
                    nbformat.v4.new_code_cell(
                        "import os\nquestion_id = 'q01'\ncut_at = os.getuid()\nopen(os.path.expanduser('~') + '/x', "
                        "'w')"
                    )
                ]
            ),
        )
        teacher = base / "teacher"
        teacher.mkdir()
        for p in [base, *base.rglob("*")]:
            os.chown(p, 65534, 65534)
        env = {
            "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "HOME": str(teacher),
            "RAGKIT_CACHE": str(teacher / "cache"),
            "PYTHONPATH": f"{ROOT}{os.pathsep}{site_path()}",
        }
        out = subprocess.run(
            [
                *AS_NOBODY,
                python,
                "-m",
                "ragkit",
                "grade",
                str(base / "home"),
                "--timeout",
                "60",
                "--json",
                str(teacher / "g.json"),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert out.returncode == 0, out.stderr
        assert "not root: every submission runs as you" in out.stdout
        rows = {g["exercise"]: g for g in json.loads((teacher / "g.json").read_text())["grades"]}
        assert "could not be built" not in out.stdout, out.stdout  # the sandbox's own root, in a user namespace
        assert rows["ex1"]["grade"] == "not yet", rows["ex1"]
        assert rows["ex1"]["numbers"]["cut_at"] == 65534  # the teacher's own uid, mapped to itself
        assert nb.exists()
    finally:
        subprocess.run(["rm", "-rf", str(base)])


# The class: right, gamed with every trick, forged, hanging, snooping, vandal, monkeypatching


@pytest.fixture(scope="module")
def graded_class(course, tmp_path_factory):
    """Ten notebooks of nine students on a fake hub, graded two at a time; (result, seconds, names, teacher)."""
    base = tmp_path_factory.mktemp("hub")
    home, teacher = base / "home", base / "teacher"
    teacher.mkdir()
    (teacher / "canary.txt").write_text("keep me")
    names = {
        "right": "ada",
        "forger": "fay",
        "costs": "cole",
        "sizer": "sid",
        "impostor": "ivan",
        "sleeper": "sam",
        "snoop": "sno",
        "vandal": "val",
        "patcher": "pat",
    }
    assert ex.own_size("ivan") != ex.own_size("ada")  # the impostor solves for ada's size, is judged at his own
    right = hand_in(home, names["right"], EX1, nbformat.read(SOLUTIONS / EX1, as_version=4))
    hand_in(home, names["right"], EX2, nbformat.read(SOLUTIONS / EX2, as_version=4))
    hand_in(
        home,
        names["forger"],
        EX1,
        edited(
            EXERCISES / EX1,
            last=(
                "import json, os\nfrom ragkit.teach.exercises.results import results_path\n"
                "for path in (results_path(), os.path.expanduser('~/.ragkit/results.jsonl')):\n"
                "    os.makedirs(os.path.dirname(path), exist_ok=True)\n"
                "    open(path, 'a').write(json.dumps({'exercise': 'ex1', 'student': 'fay', 'passed': True}) + '\\n')"
            ),
        ),
    )
    hand_in(
        home,
        names["costs"],
        EX2,
        edited(EXERCISES / EX2, answer="my_cut = 1.0", check="check_threshold_choice(course, my_cut)"),
    )
    hand_in(
        home,
        names["sizer"],
        EX1,
        edited(
            EXERCISES / EX1,
            answer=SOLVE_EX1.format(size=1000),
            check="check_destroyed_needle(course, question_id, cut_at, size=1000)",
        ),
    )
    hand_in(
        home,
        names["impostor"],
        EX1,
        edited(
            SOLUTIONS / EX1,
            first=(
                "import os\nos.environ['RAGKIT_STUDENT'] = 'ada'  # student('ada') refuses: the sandbox names him ivan"
            ),
        ),
    )
    hand_in(home, names["sleeper"], EX2, edited(SOLUTIONS / EX2, first="import time\ntime.sleep(10**6)"))
    hand_in(home, names["snoop"], EX1, edited(SOLUTIONS / EX1, first=f"theirs = open({str(right)!r}).read()"))
    hand_in(
        home,
        names["vandal"],
        EX2,
        edited(SOLUTIONS / EX2, first=(f"import os\nos.remove({str(teacher / 'canary.txt')!r})")),
    )
    hand_in(
        home,
        names["patcher"],
        EX1,
        edited(
            EXERCISES / EX1,
            answer="question_id, cut_at = 'q01', 0",
            first=(
                "import ragkit.teach.exercises as ex\n"
                "passed = ex.Feedback(True, ('PASSED',))\n"
                "ex.check_destroyed_needle = lambda *a, **k: passed\n"
                "ex.own_size = lambda *a, **k: 1000\n"
                "try:\n    open(ex.__file__, 'a').write('\\ncheck_destroyed_needle = lambda *a, **k: "
                "Feedback(True)\\n')\n"
                "except OSError:\n    pass"
            ),
            check="check_destroyed_needle(course, question_id, cut_at)",
        ),
    )
    previous = os.environ.get("HOME")
    os.environ["HOME"] = str(teacher)
    try:
        start = time.monotonic()
        result = grading.grade([home], "home", Limits(timeout=CLASS_TIMEOUT, threads=1), jobs=2, course=course)
        seconds = time.monotonic() - start
    finally:
        os.environ["HOME"] = previous or ""
    print(f"\n{result}\nclass graded in {seconds:.0f} s")
    return result, seconds, names, teacher


@pytest.mark.slow
def test_the_class_is_graded_from_its_notebooks(graded_class, course):
    result, seconds, names, teacher = graded_class
    cells = grades_by_cell(result)
    grade = {
        k: next(g for g in result.grades if g.student == who and g.grade != "missing")
        for k, who in names.items()
        if k != "right"
    }
    assert cells["ada", "ex1"].grade == "yes" and cells["ada", "ex2"].grade == "yes"
    assert cells["ada", "ex1"].numbers["size"] == ex.own_size("ada")
    for trick in ("forger", "costs", "sizer", "impostor", "patcher"):
        assert grade[trick].grade == "not yet", (trick, grade[trick])
    for hostile in ("sleeper", "snoop", "vandal"):
        assert grade[hostile].grade == "not run", (hostile, grade[hostile])
    assert "time limit" in grade["sleeper"].reason
    assert "No such file" in grade["snoop"].reason and "No such file" in grade["vandal"].reason
    assert (teacher / "canary.txt").read_text() == "keep me"
    assert cells["sid", "ex1"].numbers["size"] == ex.own_size("sid") != 1000
    assert cells["ivan", "ex1"].numbers["size"] == ex.own_size("ivan") != ex.own_size("ada")
    assert cells["cole", "ex2"].numbers["cut"] == 1.0
    assert cells["ada", "ex3"].grade == "missing" and cells["fay", "ex2"].grade == "missing"
    assert result.counts() == {"yes": 2, "not yet": 5, "not run": 3, "missing": 9 * len(EXERCISE_KEYS) - 10}
    assert "ragkit" in (ROOT / "ragkit" / "teach" / "exercises" / "__init__.py").read_text()
    assert "Feedback(True)\n" not in (ROOT / "ragkit" / "teach" / "exercises" / "__init__.py").read_text()[-200:]
    assert seconds < 600


@pytest.mark.slow
def test_the_checks_themselves_take_no_judging_parameter_from_the_student(course):
    """The parameter tricks the class plays: the checks (issue 24) refuse them before the grader has to."""
    with pytest.raises(TypeError):
        ex.check_threshold_choice(course, 1.0, bluff_cost=0)  # type: ignore[call-arg]
    with pytest.raises(TypeError):  # ex4's metric is chosen in advance: no metric to try until one is significant
        ex.check_header(course, lambda t, s: f"[{t} > {s}]", "better", "consistent", metric="Hit@4")  # type: ignore
    assert not ex.check_threshold_choice(course, 1.0).passed
    windows = __import__("ragkit.evaluation", fromlist=["x"]).needle_windows(course.corpus, course.questions, size=1000)
    qid = next(qid for qid, offset, length in windows if offset + length > 1000)
    q = next(q for q in course.questions if q.id == qid)
    doc = course.corpus[q.doc_id]
    from ragkit.chunking import blind_window_start

    cut = blind_window_start(doc, doc.text.find(q.needle) + len(q.needle) - 1, 1000)
    assert not ex.check_destroyed_needle(course, qid, cut, size=1000).passed
    assert not ex.check_destroyed_needle(course, qid, cut, size=ex.own_size("sid"), student="sid").passed


@pytest.mark.slow
def test_the_grades_are_written_as_csv_and_json(graded_class, tmp_path):
    result, *_ = graded_class
    from ragkit.teach.untrusted import write_csv

    write_csv(tmp_path / "g.csv", gradebook.COLUMNS, [g.row() for g in result.grades])
    rows = list(csv.DictReader((tmp_path / "g.csv").open(encoding="utf-8")))
    assert len(rows) == len(result.grades) and {r["grade"] for r in rows} == set(gradebook.GRADES)
    data = json.loads(json.dumps(result.to_json(), allow_nan=False))
    assert data["counts"] == result.counts()
    assert f"2 yes, 5 not yet, 3 not run, {9 * len(EXERCISE_KEYS) - 10} missing" in result.summary()


def test_a_formula_in_a_students_folder_name_is_neutralised_in_the_csv(tmp_path):
    """The platform layout names the student from the folder: a formula there is a cell, never a formula."""
    download = tmp_path / "download"
    folder = download / '=HYPERLINK("http:x.example","click")+cmd|" calc"!A0'
    folder.mkdir(parents=True)
    (folder / EX1).write_text("not a notebook")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragkit",
            "grade",
            str(download),
            "--layout",
            "platform",
            "--timeout",
            "60",
            "--csv",
            str(tmp_path / "g.csv"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader((tmp_path / "g.csv").open(encoding="utf-8")))
    students = {r["student"] for r in rows}
    assert students == {"'" + folder.name}
    ex1 = next(r for r in rows if r["exercise"] == "ex1")
    assert ex1["grade"] == "not run" and "not a readable notebook" in ex1["reason"]
    assert f"{len(EXERCISE_KEYS)} grades: 0 yes, 0 not yet, 1 not run, {len(EXERCISE_KEYS) - 1} missing" in out.stdout


def test_class_report_says_it_is_self_reported(tmp_path):
    (tmp_path / "alice.jsonl").write_text('{"exercise": "ex1", "student": "alice", "passed": true}\n')
    out = subprocess.run(
        [sys.executable, "-m", "ragkit", "class-report", str(tmp_path)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.stderr.startswith("Self-reported progress") and "(self-reported, not grades)" in out.stdout


def test_class_report_writes_the_graders_grade_words_in_english_whatever_the_kernel_speaks(tmp_path):
    """One definition of the grade words (``gradebook.GRADES``), one renderer (``grade_word``): the class report's
    'yes' and 'not yet' are the grader's, and stay English, as the rest of class-report does."""
    from ragkit.teach import language
    from ragkit.teach.grading.class_report import class_report

    lines = [
        {"exercise": "ex1", "passed": False},
        {"exercise": "ex1", "passed": True},
        {"exercise": "ex2", "passed": False},
    ]
    (tmp_path / "ada.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    with language.speaking("nl"):
        rows = class_report([tmp_path]).rows()
        assert gradebook.grade_word("not yet") == "nog niet"  # the table's words in Dutch, where the teacher asks
    assert rows == [
        {
            "student": "ada",
            "ex1": "yes (2)",
            "ex2": "not yet (1)",
            "ex3": "-",
            "ex4": "-",
            "ex5": "-",
            "ex6": "-",
            "ex7": "-",
        }
    ]
    with language.speaking("en"):
        english = {gradebook.grade_word(g) for g in gradebook.GRADES}
    assert {cell.rsplit(" (", 1)[0] for row in rows for cell in row.values()} - {"ada", "-"} <= english


# nbgrader: the exercises as a course, autograded offline


def test_the_nbgrader_course_has_solution_cells_and_one_locked_check_each(tmp_path):
    from ragkit.teach.grading import nbgrader_export as nbgrading

    written = nbgrading.write_course(tmp_path)
    assert (tmp_path / "nbgrader_config.py") in written
    for exercise in declared.TABLE.values():
        nb = nbformat.read(tmp_path / "source" / Path(exercise.notebook).stem / exercise.notebook, as_version=4)
        marked = [c for c in nb.cells if "nbgrader" in c.metadata]
        tests = [c for c in marked if c.metadata.nbgrader["grade"]]
        solutions = [c for c in marked if c.metadata.nbgrader["solution"]]
        assert len(tests) == 1 and tests[0].metadata.nbgrader["locked"] and tests[0].metadata.nbgrader["points"] == 1
        assert f'autograded_check("{exercise.key}", globals())' in tests[0].source
        assert solutions and all("### BEGIN SOLUTION" in c.source and "# your answer" in c.source for c in solutions)
        assert not any(
            "check_" in c.source and c not in tests
            for c in nb.cells
            if c.cell_type == "code" and "import" not in c.source and "nbgrader" not in c.metadata
        )
    with pytest.raises(InputError, match="exists"):
        nbgrading.write_course(tmp_path)


@pytest.mark.slow  # the course's vectors, which an empty cache computes (conftest.QUICK_TEXTS)
def test_the_autograded_check_raises_the_feedback_and_writes_no_stderr(course, capfd):
    from ragkit.teach.grading.nbgrader_export import autograded_check

    with pytest.raises(AssertionError, match="NOT YET"):
        autograded_check("ex2", {"my_cut": 1.0})
    cut = next(c for c in ex.CUT_GRID if ex.check_threshold_choice(course, c).passed)
    original = ex.check_threshold_choice
    ex.check_threshold_choice = lambda *a, **k: ex.Feedback(True)  # a kernel's monkeypatch: not the judge's check
    try:
        with pytest.raises(AssertionError, match="NOT YET"):
            autograded_check("ex2", {"my_cut": 1.0})
    finally:
        ex.check_threshold_choice = original
    autograded_check("ex2", {"my_cut": cut})
    out, err = capfd.readouterr()
    assert out.startswith("PASSED") and err == ""


@pytest.mark.slow
def test_nbgrader_autogrades_a_right_and_a_gamed_submission_offline(tmp_path):
    """nbgrader installed afresh; the right student scores every point, the gamed one none."""
    import site

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pth = next((venv / "lib").glob("python3*/site-packages")) / "ragkit-env.pth"
    pth.write_text("\n".join(site.getsitepackages()) + "\n")  # ragkit's own dependencies, as installed
    # --no-compile: nbgrader runs as this user, who compiles what it imports; the rest need not be (CPU of the run)
    pip = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "--no-compile", "nbgrader>=0.9.6"], capture_output=True, text=True
    )
    if pip.returncode != 0:
        pytest.skip(f"nbgrader could not be installed (PyPI unreachable?): {pip.stderr[-300:]}")
    course_dir = tmp_path / "course"
    # nbgrader runs `alembic` by name, with nbgrader importable: where the .pth already offers alembic (jupyterhub
    # in the test extra), pip writes no script for it here, so write the console script pip would have written
    alembic = venv / "bin" / "alembic"
    if not alembic.exists():
        alembic.write_text(
            f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom alembic.config import main\nsys.exit(main())\n"
        )
        alembic.chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}
    subprocess.run([sys.executable, "-m", "ragkit", "nbgrader", str(course_dir)], check=True, env=env)

    def nbgrader(*args):
        done = subprocess.run(
            [str(venv / "bin" / "nbgrader"), *args],
            cwd=course_dir,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]

    right, gamed = "ivan", "mal"
    assert ex.own_size(right) != ex.own_size(os.environ.get("USER") or "root")  # the naming cell matters
    assignments = [Path(EX1).stem, Path(EX2).stem]
    for a in assignments:
        nbgrader("generate_assignment", a, "--create")
        (course_dir / "submitted" / right / a).mkdir(parents=True)
        nbformat.write(
            nbformat.read(course_dir / "source" / a / f"{a}.ipynb", as_version=4),
            course_dir / "submitted" / right / a / f"{a}.ipynb",
        )
        nb = nbformat.read(course_dir / "release" / a / f"{a}.ipynb", as_version=4)
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("solution"):
                cell.source = SOLVE_EX1.format(size=1000) if a == assignments[0] else "my_cut = 1.0"
            elif meta.get("grade"):
                cell.source = "print('PASSED')"  # a locked cell edited: nbgrader puts the original back
        nb.cells.append(
            nbformat.v4.new_code_cell(  # the student's own call with judging parameters of their choice
                "check_destroyed_needle(course, question_id, cut_at, size=1000)"
                if a == assignments[0]
                else "check_threshold_choice(course, my_cut)"
            )
        )
        nb.cells.insert(
            2,
            nbformat.v4.new_code_cell(
                "import ragkit.teach.exercises as ex\n"
                "ex.check_threshold_choice = ex.check_destroyed_needle = lambda *a, **k: ex.Feedback(True)"
            ),
        )
        (course_dir / "submitted" / gamed / a).mkdir(parents=True)
        nbformat.write(nb, course_dir / "submitted" / gamed / a / f"{a}.ipynb")
        nbgrader("autograde", a, "--create")
    nbgrader("export", "--to", str(tmp_path / "grades.csv"))
    scores = {
        (r["student_id"], r["assignment"]): float(r["score"]) for r in csv.DictReader((tmp_path / "grades.csv").open())
    }
    print(scores)
    assert scores == {(s, a): (1.0 if s == right else 0.0) for s in (right, gamed) for a in assignments}
    for a in assignments:
        graded = nbformat.read(course_dir / "autograded" / right / a / f"{a}.ipynb", as_version=4)
        check = next(c for c in graded.cells if c.metadata.get("nbgrader", {}).get("grade"))
        assert not any(o.get("name") == "stderr" for o in check.outputs) and "PASSED" in check.outputs[0]["text"]


def test_a_time_limit_and_jobs_must_be_positive(tmp_path):
    with pytest.raises(InputError, match="--timeout"):
        grading.grade([tmp_path], limits=Limits(timeout=0))
    with pytest.raises(InputError, match="--jobs"):
        grading.grade([tmp_path], jobs=0)


def test_the_sandbox_says_what_it_holds_and_what_it_cannot():
    from ragkit.teach.grading.isolation import Isolation

    full = str(Isolation(True, (), "cgroup v1", cpu=True))
    assert "no network" in full and "a uid of its own" in full
    assert "its own user, UTS and cgroup namespaces (no further user namespace inside)" in full
    assert full.endswith("memory, processes and CPU bounded for the whole run (cgroup v1)")
    bare = str(Isolation(False, ("not root: every submission runs as you",)))
    assert "no network" in bare and "a uid of its own" not in bare and "not root" in bare
    assert "memory bounded per process only" in bare


def test_a_machine_without_bubblewrap_is_told_what_to_install_and_nothing_runs(tmp_path, monkeypatch, capsys):
    from ragkit.__main__ import main
    from ragkit.teach.grading import isolation

    monkeypatch.setattr(isolation.shutil, "which", lambda *a, **k: None)
    hand_in(tmp_path / "home", "ada", EX2, nbformat.v4.new_notebook())
    with pytest.raises(isolation.SandboxUnavailable, match="sudo apt-get install bubblewrap"):
        grading.grade([tmp_path / "home"], lending=False)
    assert main(["grade", str(tmp_path / "home")]) == 1
    said = capsys.readouterr().err
    assert f"error: this machine has no bwrap: {isolation.INSTALL}" in said


# The grader lends its vectors: a new text is embedded once, by the grader, for the kernel and the check


def test_the_grader_lends_vectors_for_texts_and_refuses_what_it_should(tmp_path):
    """A kernel sends texts and gets the grader's own vectors; busy, another model, over budget or garbage: refused."""
    import socket
    import threading

    import numpy as np

    from ragkit.embedding import default_embedder
    from ragkit.plumbing import service

    embedder = default_embedder()
    asked: list[list[str]] = []

    def encode(texts):
        asked.append(texts)
        return embedder.encode(texts, progress=False, cache=False)

    lock = threading.Lock()
    lender = service.Lender(tmp_path / "s.sock", embedder.stamp.namespace, encode, lock, budget=10_000)
    kernel = (
        "import sys, json\nfrom ragkit.embedding import default_embedder\nfrom ragkit.plumbing import service\n"
        "e = default_embedder()\ntexts = json.loads(sys.argv[1])\n"
        "v = service.Borrower(service.service_path()).borrowed(texts, sys.argv[2] or e.stamp.namespace, "
        "e.stamp.dimensions)\n"
        "print(json.dumps(None if v is None else v.tolist()))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), service.SERVICE_ENV: str(tmp_path / "s.sock")}

    def borrow(texts, namespace=""):
        out = subprocess.run(
            [sys.executable, "-c", kernel, json.dumps(texts), namespace],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    try:
        texts = ["a chunk with a header of its own", f"a text no cache has seen {uuid.uuid4().hex}"]
        lent = borrow(texts)
        assert asked == [texts]
        assert np.allclose(lent, embedder.encode(texts, progress=False, cache=False), atol=1e-6)
        assert borrow(["another model"], namespace="not-this-model") is None
        assert borrow(["x" * 20_000]) is None  # over the run's budget
        with lock:  # the grader's model is busy with another run: the kernel computes itself
            assert borrow(["busy"]) is None
        with socket.socket(socket.AF_UNIX) as raw:  # a length far beyond MAX_REQUEST is refused unread
            raw.connect(str(tmp_path / "s.sock"))
            raw.sendall((2**62).to_bytes(8, "big") + b"[")
        with socket.socket(socket.AF_UNIX) as raw:
            raw.connect(str(tmp_path / "s.sock"))
            raw.sendall((5).to_bytes(8, "big") + b"[1, 2")
        assert borrow(["still lending"]) is not None and len(asked) == 2
    finally:
        lender.close()
    assert not (tmp_path / "s.sock").exists()
    assert borrow(["no lender"]) is None


@pytest.mark.slow
def test_a_sandboxed_kernel_borrows_its_new_texts_from_the_grader(tmp_path, monkeypatch):
    """The kernel's new texts reach the grader's encoder (through the namespaces, as the sandbox's uid)."""
    import threading

    from ragkit.embedding import default_embedder
    from ragkit.teach.grading.sandbox import Lending, Sandbox

    monkeypatch.setenv("HOME", str(tmp_path))
    embedder, asked = default_embedder(), []

    def encode(texts):
        asked.extend(texts)
        return embedder.encode(texts, progress=False)

    new = f"a header no one has written {uuid.uuid4().hex}"
    lend = Lending(embedder.stamp.namespace, encode, threading.Lock(), wait=5)
    with Sandbox([tmp_path], Limits(timeout=120), lend=lend) as sandbox:
        run = sandbox.run(
            _notebook(
                f"from ragkit.embedding import default_embedder\n"
                f"x = default_embedder().encode([{new!r}], progress=False)[0].tolist()"
            ),
            "a",
            ("x",),
        )
    assert run.ran, run.failure
    assert asked == [new]
    assert json.loads(run.answers)["x"]["value"] == pytest.approx(embedder.encode([new])[0].tolist(), abs=1e-6)


def test_nbgraders_submitted_folder_is_the_platform_layout(tmp_path):
    """docs/grading.md: `ragkit grade course/submitted --layout platform` names the students nbgrader collected."""
    submitted = tmp_path / "course" / "submitted"
    for who in ("ivan", "mal"):
        for name in (EX1, EX2):
            (submitted / who / Path(name).stem).mkdir(parents=True, exist_ok=True)
            (submitted / who / Path(name).stem / name).write_text("{}")
    skipped: list[str] = []
    found = handed_in.submissions([submitted], "platform", skipped)
    assert sorted((s.student, s.exercise) for s in found) == [(w, e) for w in ("ivan", "mal") for e in ("ex1", "ex2")]
    assert skipped == []


def test_a_run_whose_sandbox_cannot_start_is_not_run_its_uid_released_and_the_class_graded_on(tmp_path, monkeypatch):
    """One run's start fails after its uid was claimed (its cgroup cannot be made): that notebook is "not run" with the
    reason, its claim is given back, and the notebooks before and after it are graded."""
    import errno
    from types import SimpleNamespace

    from ragkit.teach.grading import cgroup, uids
    from ragkit.teach.grading import sandbox as sandboxes
    from ragkit.teach.grading.isolation import Isolation

    made: list[str] = []

    class Refusing:
        """A cgroup hierarchy whose second run's group is already there."""

        def create(self, name, memory, processes, cores=None):
            made.append(name)
            if len(made) == 2:
                raise FileExistsError(errno.EEXIST, "File exists", f"/sys/fs/cgroup/memory/{name}")
            return SimpleNamespace(procs=[], kill=lambda: None, remove=lambda: None)

    monkeypatch.setattr(uids, "CLAIMS", tmp_path / "claims")
    monkeypatch.setattr(cgroup, "hierarchy", lambda: (Refusing(), ""))
    claimed: list[int] = []

    class Recorded(uids.UidClaim):
        def __init__(self) -> None:
            super().__init__()
            claimed.append(self.uid)

    def started(self, command, env, spec, out, err, uid, start, group) -> SandboxRun:
        return SandboxRun(answers=json.dumps({"my_cut": {"value": 0.5}}), seconds=1.0)

    class Crowded(sandboxes.Sandbox):
        """A sandbox as root, where the second run's cgroup cannot be made."""

        def __init__(self, hidden, limits, cache=None, shared=None, lend=None):
            super().__init__(hidden, limits, probe=Isolation(True))

    monkeypatch.setattr(sandboxes, "UidClaim", Recorded)
    monkeypatch.setattr(sandboxes.Sandbox, "_start", started)
    monkeypatch.setattr(grading, "Sandbox", Crowded)
    passes = declared.Exercise("ex2", EX2, {"my_cut": "number"}, lambda course, student, a: ex.Feedback(True, ("ok",)))
    monkeypatch.setitem(declared.TABLE, "ex2", passes)
    for who in ("ada", "bob", "cy"):
        hand_in(tmp_path / "home", who, EX2, nbformat.v4.new_notebook())
    course = SimpleNamespace(chunks=lambda strategy: [])
    result = grading.grade([tmp_path / "home"], "home", course=course, lending=False)  # type: ignore[arg-type]
    rows = {g.student: g for g in result.grades if g.exercise == "ex2"}
    assert rows["ada"].grade == rows["cy"].grade == "yes", rows
    assert rows["bob"].grade == "not run" and rows["bob"].reason.startswith(
        "the sandbox could not start (File exists: "
    )
    assert rows["bob"].reason.endswith(f"/sys/fs/cgroup/memory/{made[1]})"), rows["bob"].reason  # what, not the command
    assert len(claimed) == 3 and list((tmp_path / "claims").iterdir()) == []  # every claim given back, bob's too


def test_a_command_the_sandbox_cannot_start_names_itself(tmp_path, monkeypatch):
    from ragkit.teach.grading import sandbox as sandboxes
    from ragkit.teach.grading.isolation import Isolation

    monkeypatch.setattr(sandboxes, "child_command", lambda: ["ragkit-no-such-command"])
    with sandboxes.Sandbox([tmp_path], probe=Isolation(False)) as sandbox:
        run = sandbox.run(_notebook("x = 1"), "ada", ("x",))
    assert run.failure == RunFailure(
        "sandbox", text="the sandbox could not start (No such file or directory: ragkit-no-such-command)"
    )


def test_a_childs_report_is_read_as_hostile_input(tmp_path):
    """The failure a child reports is a value of a known cause with fields of their types, its texts bounded;
    anything else is no report at all, said with the child's last error line."""
    from ragkit.teach.grading import sandbox as sandboxes

    out, err = tmp_path / "out.json", tmp_path / "err"
    err.write_text("Traceback (most recent call last):\n  ...\nKilled\n")

    def read(report: object) -> SandboxRun:
        out.write_text(report if isinstance(report, str) else json.dumps(report))
        return sandboxes._read_result(out, err, 4000, 1.5)

    raised = {"cause": "cell raised", "number": 3, "error": "NameError", "message": "name 'x' is not defined"}
    assert read({"ran": False, "failure": raised}) == SandboxRun(RunFailure(**raised), seconds=1.5)
    assert read({"ran": True, "answers": "{}"}) == SandboxRun(answers="{}", seconds=1.5)
    assert read({"ran": False, "failure": {"cause": "kernel died"}, "answers": "{}"}).answers == ""
    no_report = RunFailure("no report", last="Killed")
    for hostile in [
        {"ran": False, "failure": {"cause": "exploded"}},
        {"ran": False, "failure": {"cause": "timed out"}},  # a cause without its number
        {"ran": False, "failure": {"cause": "too large", "limit": "9"}},
        {"ran": False, "failure": {"cause": "cell raised", "number": True}},
        {"ran": False, "failure": {"cause": "cell raised", "number": 10**30}},
        {"ran": False, "failure": {"cause": "kernel died", "cell": 1}},
        {"ran": False, "failure": "the kernel died"},  # a sentence is not a failure
        {"ran": False, "reason": "the kernel died (it exited, crashed or ran out of memory)"},
        {"ran": "yes"},
        "not json",
    ]:
        assert read(hostile) == SandboxRun(no_report, seconds=1.5), hostile
    long = read({"ran": False, "failure": {"cause": "cell raised", "error": "E" * 999, "message": "m" * 999}}).failure
    assert long is not None and (len(long.error), len(long.message)) == (200, 300)
    assert read("x" * 4001) == SandboxRun(RunFailure("too large", limit=4000), seconds=1.5)
    err.write_text("")
    assert str(read("").failure) == "the sandbox ended without a report (killed: memory, a signal, os._exit)"


def test_a_failure_crosses_from_the_child_as_it_was_sent():
    for failure in [
        RunFailure("timed out", seconds=600.0),
        RunFailure("cell raised", number=4, error="MemoryError", memory_bound=5 * 2**29),
        RunFailure("cell raised", error="KeyError", message="'q07'"),
        RunFailure("not readable", error="NotJSONError", message="{"),
        RunFailure("sandbox", text="the sandbox could not run the notebook (PermissionError: no)"),
    ]:
        sent = json.loads(json.dumps(failure.to_json()))
        assert RunFailure.from_json(sent) == failure and sent["cause"] == failure.cause
    assert RunFailure("kernel died").to_json() == {"cause": "kernel died"}
    with pytest.raises(ValueError, match="not a cause"):
        RunFailure("exploded")  # type: ignore[arg-type]


def test_two_graders_at_once_never_share_a_uid(tmp_path, monkeypatch):
    """Two graders as root (a test beside a real run): the end of one run must not kill the other's processes."""
    from ragkit.teach.grading import uids

    monkeypatch.setattr(uids, "CLAIMS", tmp_path / "claims")
    draws = iter([5, 5, 7, 5])  # the second grader draws the first's uid, and must draw again
    monkeypatch.setattr(uids.secrets, "randbelow", lambda n: next(draws))
    one = uids.UidClaim()
    other = uids.UidClaim()
    assert one.uid == uids.SANDBOX_UIDS + 5 and other.uid == uids.SANDBOX_UIDS + 7
    one.release()
    again = uids.UidClaim()  # a released uid may be drawn again, and its claim file is gone until then
    assert again.uid == one.uid
    again.release()
    other.release()
    assert list((tmp_path / "claims").iterdir()) == []


def test_uids_are_drawn_afresh_so_no_student_keeps_one(tmp_path, monkeypatch):
    """A uid is drawn at random per run from a large span: the same student does not get the same uid next week."""
    from ragkit.teach.grading import uids

    monkeypatch.setattr(uids, "CLAIMS", tmp_path / "claims")
    drawn = set()
    for _ in range(20):
        claim = uids.UidClaim()
        drawn.add(claim.uid)
        claim.release()
    assert len(drawn) == 20 and all(uids.SANDBOX_UIDS <= u < uids.SANDBOX_UIDS + uids.UID_SPAN for u in drawn)


def test_a_run_that_ends_stops_the_graders_work_for_it(tmp_path):
    """The grader embeds a run's texts a slice at a time, and stops when the run ends (a time limit, a crash)."""
    import socket
    import threading

    import numpy as np

    from ragkit.plumbing import service

    calls: list[int] = []

    def slow(texts):
        calls.append(len(texts))
        time.sleep(0.3)
        return np.zeros((len(texts), 4), dtype=np.float32)

    lender = service.Lender(tmp_path / "s.sock", "model", slow, threading.Lock())
    request = json.dumps({"namespace": "model", "texts": ["t"] * 1280}).encode()  # ten slices of 128
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(str(tmp_path / "s.sock"))
        conn.sendall(len(request).to_bytes(8, "big") + request)
        time.sleep(0.5)
        began = time.monotonic()
        lender.close()
    assert time.monotonic() - began < 2
    assert calls and sum(calls) < 1280, calls  # a slice or two, not the whole request


def test_the_grader_embeds_as_many_runs_at_once_as_it_has_jobs_each_on_one_thread(tmp_path, monkeypatch):
    """Two ex4 runs asking at once are embedded at once, by two one-thread encoders, not one after the other."""
    import threading

    import numpy as np

    import ragkit.embedding
    from ragkit.plumbing import service

    made: list[dict] = []
    busy, most = [0], [0]
    count = threading.Lock()

    class Slow:
        """An encoder that takes its time and counts how many of it compute at once."""

        stamp = type("Stamp", (), {"namespace": "model"})

        def __init__(self, **kwargs):
            made.append(kwargs)

        def encode(self, texts, progress=False, warn=True):
            with count:
                busy[0] += 1
                most[0] = max(most[0], busy[0])
            time.sleep(0.5)
            with count:
                busy[0] -= 1
            return np.zeros((len(texts), 4), dtype=np.float32)

    monkeypatch.setattr(ragkit.embedding, "Embedder", Slow)
    lend = judging.lent_models(2, threads=1, wait=5)
    assert lend is not None and made == [{"threads": 1}, {"threads": 1}]
    lenders = [
        service.Lender(tmp_path / f"{i}.sock", "model", lend.encode, lend.lock, wait=lend.wait) for i in range(3)
    ]
    request = json.dumps({"namespace": "model", "texts": ["a header", "a chunk"]}).encode()
    answers: list[bytes] = []
    try:
        asking = [
            threading.Thread(target=lambda lender=lender: answers.append(lender._answer(request))) for lender in lenders
        ]
        for thread in asking:
            thread.start()
        for thread in asking:
            thread.join(timeout=30)
    finally:
        for lender in lenders:
            lender.close()
    assert len(answers) == 3 and all(a.startswith(b"V") for a in answers), answers  # the third waited its turn
    assert most[0] == 2  # two at once, never three


def test_a_lent_embedding_leaves_the_warnings_of_the_graders_other_threads_alone(monkeypatch):
    """The lending thread embeds while the grader's main thread records a check's truncation warning: the process's
    warning filters are one global, so the lending thread must not save and restore them around its embedding."""
    import threading
    import warnings

    import numpy as np

    import ragkit.embedding
    from ragkit.tokens import TruncationWarning

    inside, go = threading.Event(), threading.Event()

    class Waiting:
        """An encoder that holds its embedding until the main thread has started recording."""

        stamp = type("Stamp", (), {"namespace": "model"})

        def __init__(self, **kwargs):
            pass

        def encode(self, texts, progress=False, warn=True):
            inside.set()
            go.wait(10)
            return np.zeros((len(texts), 4), dtype=np.float32)

    monkeypatch.setattr(ragkit.embedding, "Embedder", Waiting)
    lend = judging.lent_models(1, threads=1, wait=5)
    assert lend is not None
    filters = list(warnings.filters)
    lending = threading.Thread(target=lend.encode, args=(["a chunk"],))
    lending.start()
    assert inside.wait(10)
    with warnings.catch_warnings(record=True) as caught:  # what feedback.embedded does for a check
        warnings.simplefilter("always", TruncationWarning)
        go.set()
        lending.join(10)
        warnings.warn(TruncationWarning(3, 10, 256), stacklevel=1)
    lend.stop()
    assert [type(w.message) for w in caught] == [TruncationWarning], "the lending thread undid the check's recording"
    assert list(warnings.filters) == filters


def test_a_sandbox_kernel_borrows_from_the_grader_only_when_the_sandbox_names_a_socket(tmp_path):
    """The kernel's startup gives its embedder the grader's socket; without one the embedder asks no one."""
    from ragkit.plumbing import service

    probe = (
        "from ragkit.teach.grading.confinement import start_kernel\nfrom ragkit.embedding import default_embedder\n"
        "start_kernel()\nprint(default_embedder().borrower)"
    )
    env = {k: v for k, v in os.environ.items() if k != service.SERVICE_ENV}

    def borrower(**more: str) -> str:
        out = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, env={**env, **more}, timeout=120
        )
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    assert borrower() == "None"
    assert borrower(**{service.SERVICE_ENV: str(tmp_path / "s.sock")}) == repr(service.Borrower(tmp_path / "s.sock"))


def test_the_sandbox_child_reads_notebooks_without_building_jsonschemas_iri_grammar():
    """nbformat still validates in the child, and lark (rfc3987-syntax's grammar, 1.3 s per child) is never loaded."""
    import importlib.util

    if importlib.util.find_spec("rfc3987_syntax") is None:
        pytest.skip("rfc3987-syntax is not installed here, so there is no grammar to skip")
    probe = (
        "import sys\n{skip}import nbformat\nnb = nbformat.v4.new_notebook()\nnbformat.validate(nb)\n"
        "nbformat.reads(nbformat.writes(nb), as_version=4)\nprint('lark' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def lark_loaded(skip: str) -> str:
        out = subprocess.run([sys.executable, "-c", probe.format(skip=skip)], capture_output=True, text=True, env=env)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    assert lark_loaded("") == "True"  # what the child paid before
    assert (
        lark_loaded("from ragkit.plumbing.nbformat_import import import_nbformat_quickly\nimport_nbformat_quickly()\n")
        == "False"
    )


@pytest.mark.slow
def test_a_sandbox_kernels_first_figure_imports_jsonschema_without_its_iri_grammar(tmp_path):
    """A kernel's first plotly figure imports nbformat (so jsonschema): its startup file keeps lark out, 1.3 s a run."""
    import importlib.util

    from ragkit.teach.grading.sandbox import Sandbox

    if importlib.util.find_spec("rfc3987_syntax") is None:
        pytest.skip("rfc3987-syntax is not installed here, so there is no grammar to skip")
    with Sandbox([tmp_path], Limits(timeout=120)) as sandbox:
        run = sandbox.run(
            _notebook(
                "import sys\nimport plotly.graph_objects as go\n"
                "from IPython.display import display\ndisplay(go.Figure(go.Bar(x=[1], y=[2])))\n"
                "imported = 'jsonschema' in sys.modules\nlark = 'lark' in sys.modules\n"
                "try:\n    import rfc3987_syntax\n    mine = True\nexcept ImportError:\n"
                "    mine = False"
            ),
            "a",
            ("imported", "lark", "mine"),
        )
    assert run.ran, run.failure
    answers = json.loads(run.answers)
    assert answers["imported"]["value"] is True  # the figure took the path that builds the grammar
    assert answers["lark"]["value"] is False
    assert answers["mine"]["value"] is True  # hidden only while nbformat was imported: the student may import it


def test_a_grader_inside_a_whitelisted_folder_is_covered(tmp_path, monkeypatch):
    """A class handed in under the checkout, or a teacher's HOME above Python, lies inside a whitelisted folder:
    an empty tmpfs covers it there, so a run sees the folder's Python and ragkit but not the class."""
    from ragkit.teach.grading import isolation
    from ragkit.teach.grading.sandbox import Sandbox

    python = tmp_path / "home" / "teacher" / "venv"
    python.mkdir(parents=True)
    monkeypatch.setattr(isolation, "python_folders", lambda: [tmp_path / "home"])
    monkeypatch.setenv("HOME", str(tmp_path / "home" / "teacher"))
    handed = tmp_path / "home" / "class"
    handed.mkdir()
    with Sandbox([handed], probe=isolation.Isolation(True)) as sandbox:
        assert (tmp_path / "home", tmp_path / "home") in [(Path(a), Path(b)) for a, b in sandbox.readonly]
        assert tmp_path / "home" / "teacher" in sandbox.masked and handed in sandbox.masked


def test_a_kernels_python_path_whitelists_site_packages_only(tmp_path, monkeypatch):
    """The grader's PYTHONPATH reaches a kernel only as folders named site-packages: a teacher's HOME there is not
    a way into the whitelist."""
    from ragkit.teach.grading import isolation

    site = tmp_path / "user" / "lib" / "python3" / "site-packages"
    site.mkdir(parents=True)
    home = tmp_path / "teacher"
    home.mkdir()
    monkeypatch.setattr(sys, "path", [sys.path[0], str(home), str(site), *sys.path[1:]])
    path = isolation.python_path()
    assert path[0] == isolation.CHECKOUT and site in path and home not in path
    assert not any(p == home or home in p.parents for p in isolation.python_folders())


def test_the_sandbox_finds_ragkit_from_a_folder_holding_a_folder_named_ragkit(tmp_path):
    """A teacher grading from ~ with the clone in ~/ragkit: under an editable install, ``python -m ragkit`` there
    imports that folder as a namespace package (``ragkit.__file__`` is None), and the sandbox must still find ragkit."""
    (tmp_path / "ragkit").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = (
        "import ragkit; from ragkit.teach.grading import isolation; "
        "print(ragkit.__file__ is None); print(isolation.__file__); "
        "print(*[a for a, _ in isolation.whitelist()], sep='\\n')"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    shadowed, module, *folders = out.stdout.splitlines()
    if shadowed != "True":
        pytest.skip("ragkit is not an editable install here, so a folder named ragkit does not shadow it")
    checkout = Path(module).resolve().parents[3]  # ragkit/teach/grading/isolation.py: the checkout it came from
    assert (checkout / "ragkit" / "teach" / "grading" / "sandbox.py").is_file()
    assert any((checkout / "ragkit").is_relative_to(f) for f in folders), (checkout, folders)


def hostile_class(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    """ada and bob hand in ex2 honestly; eve plants a nested home for each, links a folder to the homes, her ex2 to
    ada's, and a folder to the machine's root. Returns (home, the planted paths by name)."""
    home = tmp_path / "home"
    ada = hand_in(home, "ada", EX2, nbformat.read(SOLUTIONS / EX2, as_version=4))
    hand_in(home, "bob", EX2, nbformat.read(EXERCISES / EX2, as_version=4))
    eve = home / "eve" / "ragkit" / "my-notebooks" / "exercises"
    eve.mkdir(parents=True)
    planted = {
        "for ada": eve / "home" / "ada" / "ragkit" / "my-notebooks" / "exercises" / EX2,
        "for bob": eve / "home" / "bob" / "ragkit" / "my-notebooks" / "nl" / "exercises" / EX2,
    }
    for path in planted.values():
        path.parent.mkdir(parents=True)
    nbformat.write(edited(SOLUTIONS / EX2, first="raise SystemExit('ada fails')"), planted["for ada"])
    nbformat.write(nbformat.read(SOLUTIONS / EX2, as_version=4), planted["for bob"])
    (eve / "homes").symlink_to(home)
    (eve / "root").symlink_to("/")
    (eve / EX2).symlink_to(ada)
    planted.update(homes=eve / "homes", root=eve / "root", file=eve / EX2)
    return home, planted


def test_a_planted_home_and_links_grade_no_one_and_are_each_reported(tmp_path):
    """Issue 44's class: only ada's and bob's own notebooks are submissions; everything eve planted is said."""
    home, planted = hostile_class(tmp_path)
    for paths in (
        [home],
        sorted(home.glob("*/ragkit/my-notebooks/exercises/" + EX2))
        + sorted(home.glob("*/ragkit/notebooks/exercises/" + EX2)),
    ):
        skipped: list[str] = []
        found = handed_in.submissions(paths, "home", skipped)
        assert [(s.student, s.path) for s in found] == [
            ("ada", home / "ada" / "ragkit" / "notebooks" / "exercises" / EX2),
            ("bob", home / "bob" / "ragkit" / "notebooks" / "exercises" / EX2),
        ], skipped
        said = "\n".join(skipped)
        if paths == [home]:  # walked: the folder links are not entered, the nested homes lie too deep
            assert f"{planted['for ada'].parent}: folder not read (more than 8 levels deep)" in said
            assert f"{planted['for bob'].parents[1]}: folder not read (more than 8 levels deep)" in said
            assert f"{planted['homes']}: a link to a folder (to {home})" in said
            assert f"{planted['root']}: a link to a folder (to /)" in said
        assert f"{planted['file']}: {planted['file']} is a link (to " in said  # named on the command line: refused
        assert len(skipped) == (5 if paths == [home] else 1)
    skipped = []
    assert handed_in.submissions([planted["file"].parent], "home", skipped) == []  # walked from there: homes found
    assert f"{planted['for ada']}: a folder named home inside eve's folder" in "\n".join(skipped)
    assert f"{planted['for bob']}: a folder named home inside eve's folder" in "\n".join(skipped)
    skipped = []
    assert handed_in.submissions([planted["homes"], planted["root"]], "home", skipped) == []  # linked PATHs (a glob)
    assert skipped == [
        f"{planted[k]}: {planted[k]} is a link (to {'/' if k == 'root' else home}): not searched, a "
        "submission is read where it lies, never through a link"
        for k in ("homes", "root")
    ]
    skipped = []
    found = handed_in.submissions([home], "home", skipped, students=["ada", "zed"])
    assert [s.student for s in found] == ["ada"]
    assert (
        f"{home / 'bob' / 'ragkit' / 'notebooks' / 'exercises' / EX2}: names 'bob', who is not on the class list"
        in "\n".join(skipped)
    )


def test_the_first_home_names_the_student_not_the_last(tmp_path):
    nb = tmp_path / "home" / "eve" / "x" / "home" / "ada" / EX2
    assert handed_in.student_of(nb, tmp_path, "home") == "eve"
    assert handed_in.student_of(Path("/home/ada/../eve/ragkit") / EX2, Path("/"), "home") == "eve"  # as given, no ..


def test_the_class_list_is_read_as_hostile_input(tmp_path):
    good = tmp_path / "class.txt"
    good.write_text("# exported from the hub\nada\n\n bob \nada\n", encoding="utf-8")
    assert handed_in.read_class_list(good) == ("ada", "bob")
    for text, why in (
        (b"ada\n../bob\n", "is not a login"),
        (b"ada\n\x1b[2Jzed\n", "is not a login"),
        (b"# nobody\n", "names no student"),
        (b"\xff\xfe", "not UTF-8"),
    ):
        good.write_bytes(text)
        with pytest.raises(InputError, match=why):
            handed_in.read_class_list(good)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(InputError, match="not a regular file"):
        handed_in.read_class_list(tmp_path / "fifo")


def test_a_class_list_that_is_not_there_is_named_with_what_to_do(tmp_path):
    """Not only "No such file or directory": the path given, and what a class list is."""
    missing = tmp_path / "missing.txt"
    with pytest.raises(InputError) as raised:
        handed_in.read_class_list(missing)
    assert str(raised.value) == (
        f"class list {missing} not read (No such file or directory): give a text file with one login a line"
    )
    (tmp_path / "link.txt").symlink_to(tmp_path / "class.txt")
    with pytest.raises(InputError, match=r"class list .*link\.txt not read \(a symbolic link, not followed\)"):
        handed_in.read_class_list(tmp_path / "link.txt")
    out = subprocess.run(
        [sys.executable, "-m", "ragkit", "grade", str(tmp_path), "--students", str(missing)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert out.returncode != 0 and f"class list {missing} not read (No such file or directory)" in out.stderr, out


def test_one_file_under_two_students_is_graded_once_as_its_owners(tmp_path):
    home = tmp_path / "home"
    ada = hand_in(home, "ada", EX2, nbformat.read(EXERCISES / EX2, as_version=4))
    (home / "eve" / "w").mkdir(parents=True)
    os.link(ada, home / "eve" / "w" / EX2)  # a hard link: no link on the path, the same file
    skipped: list[str] = []
    found = handed_in.submissions([home], "home", skipped)
    me = __import__("ragkit.teach.exercises.results", fromlist=["login"]).login(os.getuid())
    assert len(found) == (1 if me in ("ada", "eve") else 0)
    assert "one file handed in by 2 students ('ada', 'eve') under several names" in skipped[-1]
    assert "its owner is none of them: not graded" in "\n".join(skipped) or me in ("ada", "eve")
    found = handed_in.submissions([ada, ada], "home", skipped := [])
    assert len(found) == 1 and "the same file as" in skipped[0]


def test_the_grades_never_overwrite_what_was_handed_in(tmp_path):
    """`grade --csv` pointed at a submission, the class list or a folder graded is refused before anything runs."""
    home = tmp_path / "home"
    ada = hand_in(home, "ada", EX2, nbformat.read(EXERCISES / EX2, as_version=4))
    before = ada.read_bytes()
    listed = tmp_path / "class.txt"
    listed.write_text("ada\n")
    for args, why in (
        ([str(ada), "--csv", str(ada)], "is one of the files given"),
        ([str(home), "--csv", str(home / "ada" / "grades.csv")], "is inside a folder graded"),
        ([str(ada), "--students", str(listed), "--json", str(listed)], "is one of the files given"),
        ([str(ada), "--csv", str(tmp_path / "g"), "--json", str(tmp_path / "g")], "is one of the files"),
        ([str(ada), "--csv", str(tmp_path)], "is a folder"),
    ):
        out = subprocess.run(
            [sys.executable, "-m", "ragkit", "grade", *args],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=120,
        )
        assert out.returncode == 1 and why in out.stderr and "grading with" not in out.stderr, (args, out.stderr)
    assert ada.read_bytes() == before and listed.read_text() == "ada\n" and not (home / "ada" / "grades.csv").exists()


@pytest.mark.slow
def test_issue_44s_class_grades_exactly_the_honest_grades_and_reports_what_was_planted(tmp_path):
    """Run as a teacher would: the honest grades, eve's plants listed, a name with escapes printed escaped."""
    home, planted = hostile_class(tmp_path)
    zed = "zed\x1b[2J\x1b[H"
    hand_in(home, zed, EX2, nbformat.read(EXERCISES / EX2, as_version=4))
    listed = tmp_path / "class.txt"
    listed.write_text(f"ada\nbob\neve\n{zed}\n".replace("\x1b", "") + "\n")  # the list has no escapes: zed is not on it
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragkit",
            "grade",
            str(home),
            "--jobs",
            "2",
            "--timeout",
            "90",
            "--csv",
            str(tmp_path / "g.csv"),
            "--students",
            str(listed),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=900,
    )
    assert out.returncode == 0, out.stderr
    assert "\x1b" not in out.stdout + out.stderr
    rows = {(r["student"], r["exercise"]): r for r in csv.DictReader((tmp_path / "g.csv").open(encoding="utf-8"))}
    assert {k: r["grade"] for k, r in rows.items() if r["grade"] != "missing"} == {
        ("ada", "ex2"): "yes",
        ("bob", "ex2"): "not yet",
    }
    assert {s for s, _ in rows} == {"ada", "bob", "eve", "zed[2J[H"}  # everyone listed has a row, eve all missing
    assert rows["ada", "ex2"]["notebook"] == str(home / "ada" / "ragkit" / "notebooks" / "exercises" / EX2)
    said = out.stdout
    assert f"left out: {planted['file']}: {planted['file']} is a link (to " in said
    assert f"left out: {planted['root']}: a link to a folder (to /)" in said
    assert "'zed\\x1b[2J\\x1b[H', who is not on the class list: not graded" in said
    ada = next(line for line in said.splitlines() if line.startswith("ada       ex2"))
    assert "ragkit/notebooks/exercises/ex2-choose-a-threshold.ipynb" in ada  # the notebook column


def _run_groups() -> set[str]:
    """The grader's run groups (cgroups) on this machine: a grading leaves none behind when it ends."""
    from ragkit.teach.grading import cgroup

    found = cgroup.hierarchy()[0]
    return {f"{p}/{c.name}" for p in (found.parents if found else ()) for c in p.glob("ragkit-sandbox-*")}


@pytest.mark.slow
@pytest.mark.parametrize("signum", [15, 1], ids=["SIGTERM", "SIGHUP"])
def test_a_grading_stopped_by_a_signal_kills_its_notebook_and_leaves_nothing_behind(tmp_path, signum):
    """`timeout`, systemd or a closed terminal end a grading mid-run: its temporary folders and run groups go too."""
    import signal

    home = tmp_path / "home"
    nb = nbformat.read(EXERCISES / EX1, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell("import time\ntime.sleep(600)"))
    hand_in(home, "ada", EX1, nb)
    # the grading's TMPDIR: under /tmp, where a run's uid may pass (pytest's tmp_path is root's alone)
    scratch, log = Path(tempfile.mkdtemp(prefix="ragkit-test-stop-")), tmp_path / "stderr"
    scratch.chmod(0o711)
    groups = _run_groups()
    with log.open("wb") as err:
        grader = subprocess.Popen(
            [sys.executable, "-m", "ragkit", "grade", str(home), "--timeout", "900"],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(scratch)},
        )
        deadline = time.monotonic() + 300
        while not list(scratch.glob("ragkit-grade-*/out/1.err")) and grader.poll() is None:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        time.sleep(3)  # the notebook is running (its kernel asleep in the first cell)
        began = time.monotonic()
        grader.send_signal(signum)
        code = grader.wait(timeout=120)
    said, left = log.read_text(), sorted(p.name for p in scratch.iterdir())
    scratch.rmdir() if not left else None
    assert code == 128 + signum, said
    assert f"grading stopped by {signal.Signals(signum).name}: no grades written" in said
    assert time.monotonic() - began < 60, "the running notebook was waited for, not killed"
    assert not left, f"left behind in the grading's TMPDIR {scratch}: {left}"
    assert _run_groups() <= groups, f"run groups left behind: {_run_groups() - groups}"
