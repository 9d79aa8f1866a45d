"""The exercises as an nbgrader course: answer cells as solution cells, each check a locked autograded cell.

``write_course(DIR)`` writes ``DIR/source/<assignment>/<notebook>.ipynb`` per exercise from the
exercise notebook and its solution: each answer cell keeps its ``None`` stubs and gets the
solution's code between nbgrader's ``### BEGIN SOLUTION`` / ``### END SOLUTION`` markers; the
check cell becomes a locked test cell worth ``POINTS`` that calls ``autograded_check``. That
function reads the answers as the grader does (plain values; a header as its strings per
pair), calls the check in a fresh Python process with the exercise's own fixed parameters,
prints the feedback when it passes and raises it when it does not, and writes nothing on
stderr (nbgrader scores a cell that does zero, whatever it printed). A locked first cell names
the student after the submission's folder while nbgrader autogrades, before the student's code
runs; the judging process takes no setting from the kernel and runs in a folder of its own.

nbgrader runs the student's code and the test cell in one kernel and scores the cell by what that
kernel reports: code run before it can replace ``autograded_check`` in ``sys.modules``, the
subprocess call or IPython's handling of the cell's exception, and no cell can detect all of that
from inside the kernel it distrusts. nbgrader's points are the kernel's word; for grades, run
``python -m ragkit grade course/submitted --layout platform`` on the same notebooks (docs/grading.md).
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ragkit.errors import InputError
from ragkit.plumbing import locations

__all__ = [
    "CONFIG",
    "EXECUTION_ENV",
    "JUDGE_SECONDS",
    "MAX_ANSWERS",
    "NAMING_CELL",
    "POINTS",
    "SYSTEM_PATH",
    "TEST_CELL",
    "autograded_check",
    "autograding",
    "judge_answers",
    "judging_environment",
    "name_the_student",
    "source_notebook",
    "starting_environment",
    "write_course",
]

if TYPE_CHECKING:
    from ragkit.teach.grading.answers import Exercise

POINTS = 1
JUDGE_SECONDS = 900
MAX_ANSWERS = 4 * 2**20
_SOURCE = str(locations.SOURCE_ROOT)  # where this ragkit is imported from
EXECUTION_ENV = "NBGRADER_EXECUTION"
"""Set to ``autograde`` by nbgrader while it autogrades; the kernel then runs in autograded/<student>/<assignment>."""
CONFIG = """c = get_config()  # noqa: F821 - nbgrader's configuration object
# written by `python -m ragkit nbgrader`: the student's version keeps the `None` stubs above each solution
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE"}
# ex4 embeds the whole corpus with the student's header (about a minute; longer on a busy machine)
c.ExecutePreprocessor.timeout = 900
"""
NAMING_CELL = """# Names you as the student when nbgrader autogrades this notebook; otherwise it does nothing. Keep it.
from ragkit.teach.grading.nbgrader_export import name_the_student
name_the_student()"""
TEST_CELL = """# Autograded, {points} point{plural}: the check with this exercise's fixed parameters (a locked cell).
from ragkit.teach.grading.nbgrader_export import autograded_check
autograded_check("{key}", globals())"""


def _notebooks() -> Path:
    from ragkit.plumbing.locations import checkout

    root = checkout()
    if root is None or not (root / "notebooks" / "solutions").is_dir():
        raise InputError(
            "the nbgrader course is built from the exercise and solution notebooks of a ragkit clone: "
            "run `python -m ragkit nbgrader DIR` from a clone (git clone, then make)"
        )
    return root / "notebooks"


def _assigned(source: str) -> set[str]:
    """The names a cell assigns or defines at its top level."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, (ast.AnnAssign, ast.AugAssign))
            else []
        )
        for t in targets:
            names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
    return names


def _calls_a_check(source: str) -> bool:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id.startswith("check_")
        for n in ast.walk(tree)
    )


def _meta(kind: str, grade_id: str) -> dict:
    solution, grade = kind == "solution", kind == "test"
    return {
        "nbgrader": {
            "grade": grade,
            "grade_id": grade_id,
            "locked": kind != "solution",
            "schema_version": 3,
            "solution": solution,
            "task": False,
            **({"points": POINTS} if grade else {}),
        }
    }


def source_notebook(exercise: Exercise):
    """The instructor's version of one exercise for nbgrader (an nbformat notebook)."""
    import nbformat

    folder = _notebooks()
    nb = nbformat.read(folder / "exercises" / exercise.notebook, as_version=4)
    solution = nbformat.read(folder / "solutions" / exercise.notebook, as_version=4)
    worked = [c.source for c in solution.cells if c.cell_type == "code"]
    answers, checks = 0, 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        names = _assigned(cell.source) & set(exercise.answers)
        if names and "# your answer" in cell.source:
            code = [s for s in worked if _assigned(s) & names]
            if not code:
                raise InputError(
                    f"the solution of {exercise.key} sets none of {sorted(names)}: fix "
                    f"notebooks/solutions/{exercise.notebook}"
                )
            answers += 1
            cell.source = cell.source.rstrip() + "\n### BEGIN SOLUTION\n" + "\n\n".join(code) + "\n### END SOLUTION"
            cell.metadata.update(_meta("solution", f"{exercise.key}-answer-{answers}"))
        elif _calls_a_check(cell.source):
            checks += 1
            cell.source = TEST_CELL.format(points=POINTS, plural="" if POINTS == 1 else "s", key=exercise.key)
            cell.metadata.update(_meta("test", f"{exercise.key}-check"))
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    naming = nbformat.v4.new_code_cell(NAMING_CELL)
    naming.metadata.update(_meta("locked", f"{exercise.key}-student"))
    nb.cells.insert(first, naming)
    if not answers or checks != 1:
        raise InputError(
            f"notebooks/exercises/{exercise.notebook}: expected answer cells and one check cell, found "
            f"{answers} and {checks}"
        )
    return nb


def write_course(folder: Path, force: bool = False) -> list[Path]:
    """Write ``source/<assignment>/<notebook>`` for the five exercises (and an nbgrader_config.py when none exists)."""
    import nbformat

    from ragkit.teach.grading.answers import TABLE

    folder = Path(folder)
    written = []
    for exercise in TABLE.values():
        target = folder / "source" / Path(exercise.notebook).stem / exercise.notebook
        if target.exists() and not force:
            raise InputError(f"{target} exists: give another folder, or --force to write the assignments again")
        nb = source_notebook(exercise)
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        written.append(target)
    config = folder / "nbgrader_config.py"
    if not config.exists():
        config.write_text(CONFIG, encoding="utf-8")
        written.append(config)
    return written


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Nothing reaches stderr, from Python (warnings, progress bars) or below it (a native library's log)."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null, warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


_named: str | None = None
"""The student named by the locked first cell, before any of the student's code ran (autograde only)."""
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def autograding() -> bool:
    """Whether nbgrader started this kernel to autograde it, by the environment it was started with.

    A cell's ``os.environ`` does not change that block, but a cell can rewrite it in place (``/proc/self/mem``): so
    once the locked first cell has named a student, that, not this, says the notebook is being graded.
    """
    return _named is not None or starting_environment().get(EXECUTION_ENV) == "autograde"


def _student() -> str:
    """Whose notebook this is: the student the locked first cell named under autograde, else this kernel's."""
    from ragkit.teach.exercises.results import current_student

    if _named is not None:
        return _named
    if autograding():
        return Path.cwd().parent.name
    return current_student()


def name_the_student() -> None:
    """Under nbgrader's autograde, name this kernel's student after the submission's folder (else do nothing).

    The locked first cell runs it before any of the student's code, so a later ``os.chdir`` names no one else; and
    ``own_size()`` in the notebook gives the student the size the check judges, not the teacher's.
    """
    global _named
    from ragkit.teach.exercises.results import STUDENT_ENV

    if autograding():
        _named = Path.cwd().parent.name
        os.environ[STUDENT_ENV] = _named  # the system's name for this kernel: the teacher's login names no student


def starting_environment() -> dict[str, str]:
    """This process's environment as it was started (``/proc/self/environ``); the current one where there is no /proc.

    It tells whether nbgrader started the kernel to autograde; the judging process takes no setting from it.
    """
    try:
        raw = Path("/proc/self/environ").read_bytes()
    except OSError:
        return dict(os.environ)
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}


def _system_home() -> str:
    """This user's home folder as the password database has it (``HOME`` is the kernel's to change)."""
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_dir or "/"
    except KeyError:
        return "/"


def judging_environment() -> dict[str, str]:
    """What the judging process runs with, built from nothing the kernel can change.

    No ``RAGKIT_*`` or ``HF_*`` setting of the kernel's, now or as it was started: the judge uses this installation's
    data, cache and models (``ragkit.plumbing.locations`` without settings), the home folder of the system's user
    record, the system's PATH, this ragkit on PYTHONPATH, offline. Under autograde the student is the one the locked
    first cell named and the results file a throwaway (``judge_answers``); in a student's own kernel, where nothing
    is graded, the check records in the kernel's results file under the kernel's student, as every other check does.
    """
    from ragkit.teach.exercises.results import RESULTS_ENV, STUDENT_ENV, results_path

    env = {
        "PATH": SYSTEM_PATH,
        "HOME": _system_home(),
        "LANG": "C.UTF-8",
        "PYTHONPATH": _SOURCE,
        "TOKENIZERS_PARALLELISM": "false",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        STUDENT_ENV: _student(),
    }
    if autograding():
        env[EXECUTION_ENV] = "autograde"
    else:
        with contextlib.suppress(InputError):
            env[RESULTS_ENV] = str(results_path())
    return env


def autograded_check(key: str, namespace: dict) -> None:
    """The autograded cell: judge the answers in ``namespace`` as the grader does; raise the feedback on NOT YET.

    The check runs in a fresh Python process (``judge_answers``), so a check or a ragkit function the
    notebook replaced is not the one that judges; that process takes no setting from the kernel
    (``judging_environment``) and runs in a folder of its own, so a notebook that points
    ``RAGKIT_DATA`` at another data set or changes folder judges nothing differently. It
    returns nothing: a cell whose value is an object gets nbgrader's full marks, passed or not.
    """
    import json
    import subprocess
    import sys

    from ragkit.teach import course as courses
    from ragkit.teach.grading.answers import TABLE, header_pairs
    from ragkit.teach.grading.confinement import found_answers

    exercise = TABLE[key]
    with _quiet():
        pairs = header_pairs(courses.load(progress=False)) if exercise.functions else []
        raw = found_answers(namespace, list(exercise.answers), list(exercise.functions), pairs)
        with tempfile.TemporaryDirectory(prefix="ragkit-judge-") as fixed:  # a working folder no notebook chose
            done = subprocess.run(
                [sys.executable, "-m", "ragkit.teach.grading.nbgrader_export", key, _student()],
                input=raw,
                capture_output=True,
                text=True,
                env=judging_environment(),
                cwd=fixed,
                timeout=JUDGE_SECONDS,
            )
    try:
        report = json.loads(done.stdout.strip().splitlines()[-1])
        passed, text = bool(report["passed"]), str(report["text"])
    except (ValueError, IndexError, KeyError, TypeError):
        raise AssertionError(f"NOT YET\n- the check could not run (exit {done.returncode}): ask your teacher") from None
    if not passed:
        raise AssertionError(text)
    print(text)


def judge_answers(key: str, student: str, raw: str) -> dict:
    """The check on answers read as the grader reads them: {"passed": ..., "text": the feedback}."""
    from ragkit.teach import course as courses
    from ragkit.teach.exercises.results import RESULTS_ENV
    from ragkit.teach.grading.answers import TABLE, answers_of

    exercise = TABLE[key]
    answers, why = answers_of(raw, exercise)
    if why:
        return {"passed": False, "text": f"NOT YET\n- {why}"}
    with _quiet(), tempfile.TemporaryDirectory() as tmp:
        if os.environ.get(EXECUTION_ENV) == "autograde":  # the teacher's autograding records nothing
            os.environ[RESULTS_ENV] = str(Path(tmp) / "results.jsonl")
        feedback = exercise.judge(courses.load(progress=False), student, answers)
    return {"passed": feedback.passed, "text": str(feedback)}


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(judge_answers(sys.argv[1], sys.argv[2], sys.stdin.read(MAX_ANSWERS)), default=str))
