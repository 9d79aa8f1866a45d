"""The grader and the Dutch edition: a Dutch exercise is graded like the English one; one handed in in both
languages is run twice and the better grade counts (docs/grading.md); a Dutch notebook's reasons are Dutch, while
the grade words and the table stay in the one language the teacher chooses (English by default).

The fast tests stand a fake sandbox in for the real one (it reads the answer from the notebook's one cell) and a
stand-in check for ex2's, so they exercise ``grade`` itself, its grouping and its rows, without a kernel.
"""

import json
import re
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from ragkit.errors import InputError
from ragkit.teach import exercises as ex
from ragkit.teach import language
from ragkit.teach.exercises.results import EXERCISES
from ragkit.teach.grading import answers as declared
from ragkit.teach.grading import gradebook, handed_in, judging
from ragkit.teach.grading import grader as grading
from ragkit.teach.grading.failures import CAUSES, RunFailure
from ragkit.teach.grading.isolation import Isolation
from ragkit.teach.grading.sandbox import SandboxRun

from conftest import ROOT
from dutch import dutch_share

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/teach: test_language's helpers, shared with the pilot
from test_language import numbers

EX2 = "ex2-choose-a-threshold.ipynb"
DUTCH_EX2 = ROOT / "notebooks" / "nl" / "exercises" / EX2.replace(".ipynb", ".nl.ipynb")


def test_a_dutch_exercise_is_recognised_by_its_name_and_its_folder_says_its_language(tmp_path):
    mine = Path("/home/ada/ragkit/my-notebooks")
    assert handed_in.exercise_of(DUTCH_EX2.name) == "ex2"
    assert handed_in.language_by_path(mine / "nl" / "exercises" / EX2) == "nl"
    assert handed_in.language_by_path(Path("download/ada/nl") / EX2) == "nl"
    assert handed_in.language_by_path(mine / "exercises" / EX2) == "en"
    assert handed_in.language_by_path(Path("/home/nl/ragkit/my-notebooks/exercises") / EX2) == "en"  # student nl
    assert handed_in.language_by_path(mine / "ex2-choose-a-threshold.nl.ipynb") == "nl"  # a Dutch name tells its tab
    assert handed_in.exercise_of("ex2-choose-a-threshold.nl.ipynb") == "ex2"
    (tmp_path / "ada" / "ragkit" / "my-notebooks" / "nl" / "exercises").mkdir(parents=True)
    (tmp_path / "ada" / "ragkit" / "my-notebooks" / "nl" / "exercises" / EX2).write_text("{}")
    found = handed_in.submissions([tmp_path], "platform", [])
    assert [(s.student, s.exercise, s.language) for s in found] == [("ada", "ex2", "nl")]


def test_the_dutch_ex2_leaves_the_answer_the_grader_reads_and_the_same_code():
    """Generated from the English notebook: the same code cells (one more, the language cell), the same answer."""
    assert DUTCH_EX2.is_file(), "the Dutch pilot's ex2 is missing (notebooks/nl/exercises/)"
    english = nbformat.read(ROOT / "notebooks" / "exercises" / EX2, as_version=4)
    dutch = nbformat.read(DUTCH_EX2, as_version=4)
    from ragkit.teach.classroom.edition import LANGUAGE_CELL_ID, same_code

    code = [c.source for c in english.cells if c.cell_type == "code"]
    dutch_code = [c.source for c in dutch.cells if c.cell_type == "code" and c.id != LANGUAGE_CELL_ID]
    assert len(dutch_code) == len(code) and all(same_code(e, d) for e, d in zip(code, dutch_code))  # comments aside
    assert all(f"{name} = None" in "\n".join(dutch_code) for name in declared.TABLE["ex2"].answers)


class FakeSandbox:
    """Stands in for the sandbox: a notebook's answer is its one cell, ``my_cut = <value>``, read, never run."""

    runs: list[str] = []

    def __init__(self, *args, **kwargs):
        self.isolation = Isolation(True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def run(self, notebook: bytes, student: str, names, functions=(), pairs=None, lend=True) -> SandboxRun:
        source = nbformat.reads(notebook.decode(), as_version=4).cells[0].source
        FakeSandbox.runs.append(student)
        value = json.loads(source.split("=", 1)[1].strip().replace("None", "null"))
        return SandboxRun(answers=json.dumps({"my_cut": {"value": value}}), seconds=1.0)


def stand_in_check(course, student, answers) -> ex.Feedback:
    """Passes 0.5 only; its note is the language the grader speaks while it judges."""
    cut = answers["my_cut"]
    return ex.Feedback(cut == 0.5, (f"judged in {language.current()}",), {"cut": cut})


@pytest.fixture
def fake_grader(monkeypatch):
    FakeSandbox.runs = []
    monkeypatch.setattr(grading, "Sandbox", FakeSandbox)
    monkeypatch.setitem(declared.TABLE, "ex2", declared.Exercise("ex2", EX2, {"my_cut": "number"}, stand_in_check))
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
    assert rows["dee", "ex2"].grade == "yes" and rows["dee", "ex2"].reason == "judged in nl"  # her notebook's
    assert rows["eve", "ex2"].grade == "not run" and "3 notebooks for ex2" in rows["eve", "ex2"].reason
    assert "eve" not in FakeSandbox.runs and sorted(FakeSandbox.runs) == ["ada", "ada", "bob", "bob", "cy", "cy", "dee"]
    assert result.counts() == {
        "yes": 3,
        "not yet": 1,
        "not run": 1,
        "missing": 5 * (len(EXERCISES) - 1),
    }  # five students, each with one of seven exercises handed in


def test_the_grade_table_stays_english_whatever_language_the_teacher_speaks(tmp_path, fake_grader, monkeypatch):
    monkeypatch.setenv("RAGKIT_LANGUAGE", "nl")
    hand_in(tmp_path, "dee", "nl/exercises", "0.5")
    hand_in(tmp_path, "eli", "exercises", "0.5")
    result = fake_grader([tmp_path])
    ex2 = {g.student: g for g in result.grades if g.exercise == "ex2"}
    assert ex2["dee"].reason == "judged in nl" and ex2["dee"].grade == "yes"  # the reason is her notebook's language
    assert ex2["eli"].reason == "judged in en"
    assert str(result).splitlines()[0].split() == [
        "student",
        "exercise",
        "grade",
        "numbers",
        "seconds",
        "notebook",
        "reason",
    ]
    assert language.current() == "nl", "the teacher's own language was not given back"


def test_the_grade_tables_numbers_are_written_in_english_whatever_language_the_teacher_speaks(monkeypatch):
    monkeypatch.setenv("RAGKIT_LANGUAGE", "nl")
    row = gradebook.Grade("ada", "ex2", "yes", {"cut": 0.123456, "wins": 1234, "verdict": "consistent"}).row()
    assert row["numbers"] == "cut=0.1235 wins=1234 verdict=consistent"
    assert language.current() == "nl"


@pytest.mark.slow  # two notebooks run in the real sandbox, the course's vectors
def test_a_students_dutch_ex2_and_her_untouched_english_copy_are_graded_yes_in_the_sandbox(tmp_path):
    import ragkit.teach.course
    from ragkit.teach.grading.isolation import Limits

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
    # the Dutch notebook spoke Dutch in its sandboxed kernel, and the grader's reason is the check's, in Dutch
    with language.speaking("nl"):
        assert ex2.reason.startswith("; ".join(ex.check_threshold_choice(course, right).notes[:2]))
    assert ex2.reason.startswith("de regels: ")
    assert [g.exercise for g in result.grades if g.grade != "missing"] == ["ex2"]


# The language of a notebook, and the reasons said in it


def notebook_bytes(*cells) -> bytes:
    return nbformat.writes(nbformat.v4.new_notebook(cells=list(cells))).encode()


def test_a_notebook_is_dutch_by_its_language_cell_or_its_call_and_is_only_scanned_never_parsed():
    from ragkit.teach.classroom.edition import LANGUAGE_CELL, LANGUAGE_CELL_ID

    for path in sorted((ROOT / "notebooks" / "nl" / "exercises").glob("*.ipynb")):
        assert handed_in.spoken_in(path.read_bytes()) == "nl", path
    for path in sorted((ROOT / "notebooks" / "exercises").glob("*.ipynb")):
        assert handed_in.spoken_in(path.read_bytes()) is None, path
    cell = nbformat.v4.new_code_cell(LANGUAGE_CELL)
    cell.id = LANGUAGE_CELL_ID
    assert handed_in.spoken_in(notebook_bytes(cell)) == "nl"
    assert (
        handed_in.spoken_in(
            notebook_bytes(nbformat.v4.new_code_cell("from ragkit.teach import language\nlanguage.use( 'nl' )"))
        )
        == "nl"
    )
    assert handed_in.spoken_in(notebook_bytes(nbformat.v4.new_code_cell('language.use("fr")'))) is None
    assert handed_in.spoken_in(notebook_bytes(nbformat.v4.new_code_cell('language.use("en")'))) is None
    assert handed_in.spoken_in(notebook_bytes(nbformat.v4.new_code_cell("uselanguage.use(nl)"))) is None
    for odd in (
        b"",
        b"{}",
        b"[]",
        b'{"cells": 3}',
        b'{"cells": [3, {"source": ["language.use(", 7]}]}',
        b"\xff\xfe",
        b"[" * 100_000,
    ):
        assert handed_in.spoken_in(odd) is None, odd[:20]
    # a file no parser could read in bounded memory is scanned in one pass, its Dutch cell found all the same
    hostile = b"[" * 20_000_000 + notebook_bytes(cell)
    started = time.monotonic()
    assert handed_in.spoken_in(hostile) == "nl" and time.monotonic() - started < 10


def test_a_dutch_notebook_handed_in_outside_an_nl_folder_is_still_dutch(tmp_path, fake_grader):
    """A learning platform's download keeps no folders: the cells say the language, so her Dutch ex2 and her
    untouched English one are one per language, both run, the better grade counting (before: two "English" ones,
    neither run)."""
    dutch = nbformat.read(DUTCH_EX2, as_version=4)
    english = nbformat.read(ROOT / "notebooks" / "exercises" / EX2, as_version=4)
    folder = tmp_path / "download" / "ada"
    folder.mkdir(parents=True)
    for name, nb, cut in (("ex2.ipynb", dutch, "0.5"), ("ex2 (1).ipynb", english, "None")):
        nb.cells.insert(0, nbformat.v4.new_code_cell(f"my_cut = {cut}"))
        nbformat.write(nb, folder / name)
    found = handed_in.submissions([tmp_path / "download"], "platform", [])
    assert {s.path.name: s.language for s in found} == {"ex2.ipynb": "nl", "ex2 (1).ipynb": "en"}
    ex2 = next(g for g in fake_grader([tmp_path / "download"]).grades if g.exercise == "ex2")
    assert ex2.grade == "yes" and ex2.notebook == str(folder / "ex2.ipynb") and ex2.reason == "judged in nl"
    assert f"also handed in {folder / 'ex2 (1).ipynb'}: not yet (judged in en)" in ex2.row()["reason"]


def test_the_grade_words_and_headings_are_in_the_language_the_teacher_chooses(tmp_path, fake_grader, monkeypatch):
    hand_in(tmp_path, "ada", "exercises", "None")
    hand_in(tmp_path, "ada", "nl/exercises", "0.5")
    hand_in(tmp_path, "eli", "exercises", "0.9")
    english = fake_grader([tmp_path])
    monkeypatch.setenv("RAGKIT_GRADES_LANGUAGE", "nl")
    dutch = fake_grader([tmp_path])
    assert [(g.student, g.exercise, g.grade, g.reason) for g in english.grades] == [
        (g.student, g.exercise, g.grade, g.reason) for g in dutch.grades
    ]  # the same grades, the same reasons
    rows = {(r["student"], r["exercise"]): r for r in (g.row() for g in dutch.grades)}
    assert rows["ada", "ex2"]["grade"] == "ja" and "ook ingeleverd" in rows["ada", "ex2"]["reason"]
    assert rows["ada", "ex2"]["reason"].startswith("judged in nl")
    assert rows["eli", "ex2"]["grade"] == "nog niet" and rows["eli", "ex2"]["reason"] == "judged in en"
    assert rows["eli", "ex1"]["grade"] == "ontbreekt" and rows["eli", "ex1"]["reason"] == "no notebook for ex1 found"
    assert rows["ada", "ex1"]["reason"] == "no notebook for ex1 found"  # she handed in both languages: English
    text = str(dutch)
    heads = [line for line in text.splitlines() if line.startswith("student")]  # below the notes rows share
    assert heads[0].split() == [
        "student",
        "oefening",
        "beoordeling",
        "getallen",
        "seconden",
        "notebook",
        "reden",
    ]
    assert (
        f"2 studenten, {2 * len(EXERCISES)} beoordelingen: 1 ja, 1 nog niet, 0 niet gedraaid, "
        f"{2 * len(EXERCISES) - 2} ontbreekt" in text
    )
    assert dutch.to_json()["counts"] == {
        "ja": 1,
        "nog niet": 1,
        "niet gedraaid": 0,
        "ontbreekt": 2 * len(EXERCISES) - 2,
    }
    assert next(line for line in str(english).splitlines() if line.startswith("student")).split()[:3] == [
        "student",
        "exercise",
        "grade",
    ]
    monkeypatch.setenv("RAGKIT_GRADES_LANGUAGE", "fr")
    with pytest.raises(InputError, match="RAGKIT_GRADES_LANGUAGE=fr"):
        fake_grader([tmp_path])


def test_a_student_who_hands_in_only_dutch_reads_her_missing_exercises_in_dutch(tmp_path, fake_grader):
    hand_in(tmp_path, "dee", "nl/exercises", "0.5")
    rows = {g.exercise: g for g in fake_grader([tmp_path]).grades}
    assert rows["ex1"].reason == "geen notebook voor ex1 gevonden" and rows["ex1"].grade == "missing"


def test_two_dutch_notebooks_of_one_exercise_are_told_to_keep_one_in_dutch(tmp_path, fake_grader):
    hand_in(tmp_path, "dee", "nl/exercises", "0.5")
    hand_in(tmp_path, "dee", "nl/copy", "0.5")
    ex2 = next(g for g in fake_grader([tmp_path]).grades if g.exercise == "ex2")
    assert ex2.grade == "not run" and ex2.reason.startswith("2 notebooks voor ex2 in één taal: houd er één")


def unquoted(text: str) -> str:
    """A reason without what it quotes of the student's notebook (a value as Python wrote it, an error's text)."""
    return re.sub(r"'[^'\n]*'", " ", text)


def dutch_submission(tmp_path) -> handed_in.Submission:
    path = tmp_path / "nl" / "exercises" / EX2
    path.parent.mkdir(parents=True)
    path.write_bytes(DUTCH_EX2.read_bytes())
    return handed_in.Submission("dee", "ex2", path, spoken="nl")


@pytest.mark.parametrize(
    "answers, english",
    [
        ("", "the notebook ran but its answers could not be read"),
        ("[1]", "the answers are not plain values (not a mapping)"),
        (json.dumps({}), "`my_cut` was not reported"),
        (json.dumps({"my_cut": {"absent": True}}), "`my_cut` is not defined at the end of the notebook"),
        (json.dumps({"my_cut": {"error": "boom"}}), "`my_cut` could not be read: boom"),
        (json.dumps({"my_cut": {"value": "0.5"}}), "`my_cut` must be a number, not str '0.5'"),
        (json.dumps({"my_cut": {"value": [0.5]}}), "`my_cut` must be a number, not a list"),
        (json.dumps({"my_cut": {"value": "x" * 200_001}}), "the answers are not plain values (a text of 200,001"),
    ],
)
def test_the_graders_reasons_about_a_dutch_notebooks_answers_are_dutch(tmp_path, answers, english):
    mine = dutch_submission(tmp_path)
    run = SandboxRun(answers=answers)
    theirs = judging.judged(replace(mine, spoken="en"), run, None)  # type: ignore[arg-type]
    dutch = judging.judged(mine, run, None)  # type: ignore[arg-type]
    assert theirs.grade == dutch.grade == "not yet" and theirs.reason.startswith(english), theirs.reason
    assert dutch.reason != theirs.reason and dutch.spoken == "nl"
    assert numbers(unquoted(dutch.reason), dutch=True) == numbers(unquoted(theirs.reason)), (
        theirs.reason,
        dutch.reason,
    )
    assert language.current() == "en"


def test_a_check_that_fails_or_takes_too_long_is_said_in_the_notebooks_language(tmp_path, monkeypatch):
    mine = dutch_submission(tmp_path)
    run = SandboxRun(answers=json.dumps({"my_cut": {"value": 0.5}}))

    def fails(course, student, answers):
        raise ValueError("no sweep")

    monkeypatch.setitem(declared.TABLE, "ex2", declared.Exercise("ex2", EX2, {"my_cut": "number"}, fails))
    assert judging.judged(mine, run, None).reason == "de check kon dit antwoord niet beoordelen (ValueError: no sweep)"
    monkeypatch.setattr(judging, "JUDGING", 0.01)
    monkeypatch.setitem(
        declared.TABLE, "ex2", declared.Exercise("ex2", EX2, {"my_cut": "number"}, lambda *a: time.sleep(0.5))
    )
    slow = judging.judged(mine, run, None)
    assert slow.grade == "not run" and slow.reason == "de check duurde langer dan 0,01 s"


KERNEL_DIED = "the kernel died (it exited, crashed or ran out of memory)"

RUN_FAILURES = [
    (
        RunFailure("timed out", seconds=600.0),
        "still running after the time limit of 600 s (a loop, a wait, or too slow): stopped",
    ),
    (
        RunFailure("kernel died", memory_bound=5 * 2**29),
        f"{KERNEL_DIED} (the run reached its memory bound of 2.5 GiB, all its processes together)",
    ),
    (
        RunFailure("cell raised", number=4, error="MemoryError", memory_bound=5 * 2**29),
        "cell 4 raised MemoryError:  (the run reached its memory bound of 2.5 GiB, all its processes together)",
    ),
    (RunFailure("no report"), "the sandbox ended without a report (killed: memory, a signal, os._exit)"),
    (
        RunFailure("no report", last="Killed"),
        "the sandbox ended without a report (killed: memory, a signal, os._exit): Killed",
    ),
    (RunFailure("too large", limit=1_048_576), "the notebook's answers exceed 1,048,576 bytes"),
    (RunFailure("kernel died"), KERNEL_DIED),
    (
        RunFailure("cell raised", number=12, error="NameError", message="name 'my_cutt' is not defined"),
        "cell 12 raised NameError: name 'my_cutt' is not defined",
    ),
    (RunFailure("cell raised", error="KeyError", message="'q07: 3.5'"), "a cell raised KeyError: 'q07: 3.5'"),
    (
        RunFailure("not readable", error="NotJSONError", message="Notebook does not appear to be JSON: '{'"),
        "not a readable notebook (NotJSONError: Notebook does not appear to be JSON: '{')",
    ),
    (
        RunFailure("not read", reason="a notebook is larger than 33554432 bytes"),
        "notebook not read (a notebook is larger than 33554432 bytes)",
    ),
]
"""Every cause a run stops for, and the English the sandbox wrote for it before its reasons were values."""


@pytest.mark.parametrize("failure, english", RUN_FAILURES)
def test_why_a_dutch_notebook_did_not_run_is_said_in_dutch_and_an_english_one_as_the_sandbox_wrote_it(
    tmp_path, failure, english
):
    run = SandboxRun(failure)
    mine = dutch_submission(tmp_path)
    assert judging.judged(replace(mine, spoken="en"), run, None).reason == english  # type: ignore[arg-type]
    dutch = judging.judged(mine, run, None)  # type: ignore[arg-type]
    assert dutch.grade == "not run" and dutch.reason != english
    assert numbers(unquoted(dutch.reason), dutch=True) == numbers(unquoted(english)), (english, dutch.reason)
    assert dutch_share(dutch.reason) is None or dutch_share(dutch.reason) >= 0.8, dutch.reason


def test_every_cause_a_run_stops_for_is_said():
    """A new cause needs its sentence: every one but the machine's own is in the table above, said in Dutch."""
    assert {f.cause for f, _ in RUN_FAILURES} == set(CAUSES) - {"sandbox"}


def test_the_machines_fault_is_left_as_the_sandbox_wrote_it_in_every_language():
    """The sandbox could not start, or failed to contain a run: the teacher's to read, never translated."""
    machine = RunFailure("sandbox", text="the sandbox could not start (EPERM: bwrap)")
    with language.speaking("nl"):
        assert str(machine) == "the sandbox could not start (EPERM: bwrap)"
        assert str(replace(machine, memory_bound=2**31)).startswith(
            "the sandbox could not start (EPERM: bwrap) (de run"
        )


# The grader's route: the documented command finds both languages


def workspace_of(home: Path, student: str) -> Path:
    """A student's clone on a hub, with the copies ``python -m ragkit workspace`` makes: ``my-notebooks/``."""
    from ragkit.teach.classroom import workspace

    clone = home / student / "ragkit"
    clone.mkdir(parents=True)
    (clone / "notebooks").symlink_to(ROOT / "notebooks")
    workspace.refresh(clone)
    return clone / "my-notebooks"


HUB_PATHS = "/home/*/ragkit/my-notebooks"
"""The hub command's PATH as docs/grading.md and the teacher's guide should give it (issue 49): every student's
workspace, where the exercises of both languages are (``exercises/`` and ``nl/exercises/``)."""


def test_the_hub_commands_path_finds_every_exercise_in_both_languages_and_nothing_else(tmp_path):
    home = tmp_path / "home"
    for student in ("ada", "bob"):
        workspace_of(home, student)
    given = sorted(home.glob(HUB_PATHS.removeprefix("/home/")))
    assert len(given) == 2
    found = handed_in.submissions(given, "home", skipped := [])
    assert not skipped, skipped
    assert sorted((s.student, s.exercise, s.language) for s in found) == sorted(
        (student, ex, spoken) for student in ("ada", "bob") for ex in EXERCISES for spoken in ("en", "nl")
    )
    # the old command's path, .../my-notebooks/exercises, finds the English half only
    old = handed_in.submissions(sorted(home.glob("*/ragkit/my-notebooks/exercises")), "home", [])
    assert {s.language for s in old} == {"en"} and len(old) == 2 * len(EXERCISES)


def test_a_workspace_graded_whole_gives_one_row_per_exercise_never_a_keep_one(tmp_path, monkeypatch):
    """Every exercise in both languages, none answered: each is run in both languages and counted once."""
    runs: list[str] = []

    class Dead(FakeSandbox):
        def run(self, notebook: bytes, student: str, names, functions=(), pairs=None, lend=True) -> SandboxRun:
            runs.append(student)
            return SandboxRun(RunFailure("kernel died"), seconds=1.0)

    monkeypatch.setattr(grading, "Sandbox", Dead)
    # a stand-in course, with no vectors: exercise 7's graphs cannot be built for the kernels; the grading goes on,
    # and says so
    mine = workspace_of(tmp_path / "home", "ada")
    course = SimpleNamespace(chunks=lambda strategy: [])
    notes: list[str] = []
    result = grading.grade([mine], "home", course=course, lending=False, note=notes.append)
    assert [n.split(" (")[0] for n in notes] == ["exercise 7's graphs could not be prepared for the runs"]
    assert len(runs) == 2 * len(EXERCISES)
    assert [(g.exercise, g.grade) for g in result.grades] == [(ex, "not run") for ex in EXERCISES]
    for g in result.grades:
        assert g.reason == KERNEL_DIED and "/nl/" not in g.notebook  # a tie: the English one
        assert g.row()["reason"].endswith("(de kernel is gestopt (hij sloot af, crashte of had te weinig geheugen))")
