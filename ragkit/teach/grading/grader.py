"""``ragkit grade``: a class's notebooks, each run afresh in the sandbox and judged by the grader's own checks.

``grade`` only orchestrates the grading room's jobs: which notebook is whose (``handed_in``), each run contained
(``sandbox``), its declared answers read (``answers``) and judged in a bounded thread (``judging``), and the rows of
the gradebook (``gradebook``). What a student's kernel printed, recorded or redefined never reaches a grade.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ragkit.errors import InputError
from ragkit.teach import language
from ragkit.teach.exercises import ex7_efsearch
from ragkit.teach.exercises.results import EXERCISES
from ragkit.teach.grading.answers import TABLE, header_pairs
from ragkit.teach.grading.failures import RunFailure
from ragkit.teach.grading.gradebook import ClassGrades, Grade, better, table_language
from ragkit.teach.grading.handed_in import Submission, submissions
from ragkit.teach.grading.isolation import Isolation, Limits
from ragkit.teach.grading.judging import LEND_SHARE, LEND_TEXTS, judged, lent_models, not_graded, writing_into
from ragkit.teach.grading.projects import handed_in_projects, project_grades
from ragkit.teach.grading.sandbox import Sandbox, SandboxRun, snapshot_cache
from ragkit.teach.language import say
from ragkit.teach.untrusted import as_written, readable

if TYPE_CHECKING:
    from ragkit.teach.course import Course

__all__ = ["chosen_exercises", "grade"]


def grade(
    paths: Iterable[str | Path],
    layout: str = "home",
    limits: Limits | None = None,
    jobs: int = 1,
    course: Course | None = None,
    progress: Callable[[Grade], None] | None = None,
    lending: bool = True,
    announce: Callable[[Isolation], None] | None = None,
    students: Iterable[str] | None = None,
    table: str | None = None,
    exercises: Iterable[str] | None = None,
    note: Callable[[str], None] | None = None,
) -> ClassGrades:
    """Grade every exercise notebook under ``paths``: each run in the sandbox, ``jobs`` at a time, judged here.

    Every student found gets a row for each exercise, or for each of ``exercises`` where the teacher names some
    (``--exercises ex2,ex4``: notebooks of the others are not graded), "missing" when no notebook was found, and a
    project row once any project was found (``projects``; none when the teacher names exercises); the checks' own
    results file is a throwaway one, so grading records nothing.
    With ``lending``, an ex4 kernel's new texts are embedded by the grader, whose check then finds
    them in the grading's cache (``ragkit.plumbing.service``): each is embedded once, not twice.
    That cache is removed with the grading: nothing a grading embeds reaches the teacher's.
    ``announce`` hears what the sandbox holds on this machine (and what it cannot) before any notebook runs; ``note``
    hears a sentence when exercise 7's graphs could not be built for the runs (each ex7 kernel then builds its own).
    ``students`` is the teacher's class list: only they are graded, each gets a row per exercise (``missing`` when
    nothing was handed in), and a notebook naming anyone else is listed under "left out".
    ``table`` is the language of the grade words and headings (else ``RAGKIT_GRADES_LANGUAGE``, else English); each
    reason is in the language of the notebook it is about. Each run gets the cores divided by ``jobs``
    (``Limits.cores``, where the machine's cgroup has a cpu controller): a run's hundred busy processes starve no other.
    """
    import tempfile
    import time

    from ragkit.embedding import default_embedder
    from ragkit.plumbing.cache import shared_cache_dir
    from ragkit.plumbing.locations import cache_dir
    from ragkit.teach import course as courses

    if jobs < 1:
        raise InputError(f"--jobs {jobs}: give at least 1")
    asked = chosen_exercises(exercises)
    table = table_language(table)
    limits = limits or Limits()  # a Limits refuses a time limit that is not a finite number of seconds above 0
    if limits.cores is None:  # each run its share of the cores, all its processes together: none starves another
        limits = replace(limits, cores=len(os.sched_getaffinity(0)) / jobs)
    start = time.monotonic()
    roots = [Path(p) for p in paths]
    skipped: list[str] = []
    listed = None if students is None else tuple(students)
    found = [s for s in submissions(roots, layout, skipped, listed) if s.exercise in asked]
    projects = handed_in_projects(roots, layout, skipped, listed) if exercises is None else []
    course = course if course is not None else courses.load(progress=False)
    runnable, grades = _one_per_language(found)
    hidden = [Path(os.path.realpath(p if p.is_dir() else p.parent)) for p in roots]  # the folders, wherever they lie
    ran: dict[tuple[str, str], list[Grade]] = {}
    late: list[threading.Thread] = []
    with tempfile.TemporaryDirectory(prefix="ragkit-grader-") as throwaway:
        # the grader's own embedders read what the kernels read (the teacher's shared cache, else a snapshot of the
        # teacher's cache) and write into a cache of this grading's own
        vectors = Path(throwaway) / "vectors"
        fill = functools.partial(_seeded, course, vectors, note) if any(s.exercise == "ex7" for s in runnable) else None
        seed = shared_cache_dir() or snapshot_cache(cache_dir(), Path(throwaway) / "seed", fill)
        lend = (
            lent_models(
                jobs, limits.threads, limits.timeout / LEND_SHARE, vectors, seed, LEND_TEXTS * len(course.chunks("E"))
            )
            if lending
            else None
        )
        with (
            Sandbox(hidden, limits, shared=seed, lend=lend) as sandbox,
            writing_into(default_embedder(), vectors, seed),
            _recording_into(Path(throwaway) / "results.jsonl"),  # the grader's own checks record nothing
        ):
            if announce is not None:  # what the sandbox holds here, and what it cannot, before anything runs
                announce(sandbox.isolation)
            execute = _runner(sandbox, header_pairs(course))
            try:
                with ThreadPoolExecutor(max_workers=jobs) as pool, _stopped_as_a_whole(sandbox, pool):
                    for s, run in zip(runnable, pool.map(execute, runnable)):
                        began = time.monotonic()
                        try:  # one boundary per submission: whatever it makes the grader do wrong is its row's
                            g = judged(s, run, course, late)
                        except Exception as exc:
                            g = not_graded(s, exc, run.seconds)
                        g = replace(g, judging=time.monotonic() - began)
                        ran.setdefault((g.student, g.exercise), []).append(g)
                        if progress is not None:
                            progress(g)
                # a project runs no student code: its check reads the files and recomputes them here
                for g in project_grades(projects, found, listed or (), late):
                    grades.append(g)
                    if progress is not None:
                        progress(g)
            finally:
                for judging in late:  # a check past its bound still writes into this grading's cache and results
                    judging.join()
                if lend is not None:  # no text still being embedded when the grader exits
                    lend.stop()
            isolation = sandbox.isolation
    grades += [better(rows) for rows in ran.values()] + _missing(found, listed or (), asked)
    grades = sorted((replace(g, table=table) for g in grades), key=lambda g: (g.student, g.exercise))
    return ClassGrades(tuple(grades), tuple(skipped), isolation, time.monotonic() - start, table)


@contextlib.contextmanager
def _stopped_as_a_whole(sandbox: Sandbox, pool: ThreadPoolExecutor) -> Iterator[None]:
    """Ctrl-C or SIGTERM inside: no notebook starts any more, the running ones are killed, and the ``with`` blocks
    around then remove the grading's folders and cgroups (the pool would otherwise run every queued notebook first)."""
    try:
        yield
    except BaseException:
        sandbox.stop()
        pool.shutdown(wait=True, cancel_futures=True)
        raise


def _seeded(course: Course, vectors: Path, note: Callable[[str], None] | None, snapshot: Path) -> None:
    """Exercise 7's graphs built once, here, into the snapshot every run reads (no kernel builds them then); where
    that fails, each ex7 kernel builds its own, as a student's does, the grading goes on and ``note`` says why. What
    the graphs embed (the course's queries) is read from the snapshot and written into the grading's own cache."""
    from ragkit.embedding import default_embedder

    try:
        with writing_into(default_embedder(), vectors, snapshot):
            why = ex7_efsearch.seed_collections(course, snapshot)
    except Exception as exc:  # whatever it is, the ex7 kernels build the graphs themselves, and the checks say more
        why = f"{type(exc).__name__}: {exc}"
    if why and note is not None:
        note(
            say(
                "exercise 7's graphs could not be prepared for the runs ({why}): each ex7 notebook builds its own, "
                "a few seconds more each",
                why=readable(why[:300]),
            )
        )


def _one_per_language(found: list[Submission]) -> tuple[list[Submission], list[Grade]]:
    """The notebooks to run, and a ``not run`` row for each exercise a student handed in twice in one language.

    One notebook of an exercise, or one per language, is run (the better grade counts: ``better``); two of one
    language are not: which of them is the work is not the grader's to guess.
    """
    by_cell: dict[tuple[str, str], list[Submission]] = {}
    for s in found:
        by_cell.setdefault((s.student, s.exercise), []).append(s)
    runnable: list[Submission] = []
    grades: list[Grade] = []
    for (who, ex), subs in by_cell.items():
        languages = [s.language for s in subs]
        if len(set(languages)) == len(languages):
            runnable += subs
            continue
        with language.speaking(max(languages, key=languages.count)):
            kept = say(
                "{notebooks} notebooks for {exercise} in one language: keep one", notebooks=len(subs), exercise=ex
            )
            handed = "; ".join(say("handed in {notebook}", notebook=as_written(str(s.path))) for s in subs)
        grades.append(Grade(who, ex, "not run", reason=f"{kept}; {handed}"))
    return runnable, grades


def _runner(sandbox: Sandbox, pairs: list[tuple[str, str]]) -> Callable[[Submission], SandboxRun]:
    """What runs one submission: its notebook read as hostile input, then run in the sandbox for its answers."""

    def execute(s: Submission) -> SandboxRun:
        try:
            notebook = s.notebook()  # the bytes read when it was found: nothing is looked up by its path again
        except InputError as exc:
            return SandboxRun(RunFailure("not read", reason=str(exc)))
        exercise = TABLE[s.exercise]
        try:  # one boundary per submission: whatever its run makes the grader do wrong is its row's
            # only an exercise whose answer runs in the sandbox (ex4's header) embeds texts the check needs too
            return sandbox.run(
                notebook,
                s.student,
                tuple(exercise.answers),
                exercise.functions,
                pairs if exercise.functions else None,
                lend=bool(exercise.functions),
            )
        except Exception as exc:
            return SandboxRun(RunFailure("sandbox", text=not_graded(s, exc).reason))

    return execute


@contextlib.contextmanager
def _recording_into(results: Path) -> Iterator[None]:
    """Inside the block, the checks record into ``results`` (a throwaway), not into the teacher's results file."""
    from ragkit.teach.exercises.results import RESULTS_ENV

    previous = os.environ.get(RESULTS_ENV)
    os.environ[RESULTS_ENV] = str(results)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(RESULTS_ENV, None)
        else:
            os.environ[RESULTS_ENV] = previous


def chosen_exercises(exercises: Iterable[str] | None) -> tuple[str, ...]:
    """The exercises to grade, in their order: those named (``--exercises ex2,ex4``), else all five."""
    if exercises is None:
        return EXERCISES
    named = [e.strip().lower() for e in exercises if e.strip()]
    if unknown := [e for e in named if e not in EXERCISES]:
        raise InputError(
            f"--exercises: {', '.join(readable(e, 40) for e in unknown)} is not an exercise: name some of "
            f"{', '.join(EXERCISES)}, separated by commas"
        )
    if not named:
        raise InputError(f"--exercises names no exercise: name some of {', '.join(EXERCISES)}, separated by commas")
    return tuple(e for e in EXERCISES if e in named)


def _missing(found: list[Submission], listed: Iterable[str], asked: tuple[str, ...] = EXERCISES) -> list[Grade]:
    """A ``missing`` row for every exercise asked for that a student found or listed handed in no notebook for."""
    handed = {(s.student, s.exercise) for s in found}
    rows = []
    for who in {s.student for s in found} | set(listed):
        with language.speaking(_language_of_student(who, found)):
            rows += [
                Grade(who, ex, "missing", reason=say("no notebook for {exercise} found", exercise=ex))
                for ex in asked
                if (who, ex) not in handed
            ]
    return rows


def _language_of_student(who: str, found: Iterable[Submission]) -> str:
    """The language a student's missing exercises are said in: the one all their notebooks speak, else English."""
    spoken = {s.language for s in found if s.student == who}
    return spoken.pop() if len(spoken) == 1 else language.SOURCE
