"""The projects handed in (weeks 8 to 10, docs/project.md): found beside the notebooks, each graded by its check.

A project is a folder that holds ``project.toml``. Its student comes from its path by the rule that names a
notebook's (``handed_in.student_of``), and its folders are walked the same way, never through a link. No student code
runs: the project's check (``exercises.project_check``) reads the files without trust and recomputes their figures in
the grader's own process, within ``judging.JUDGING`` seconds. A grading that finds a project gives every student a
project row (``missing`` where none was found); one that finds none adds no project rows at all.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from ragkit.errors import InputError
from ragkit.project import PLAN_FILE
from ragkit.teach import language
from ragkit.teach.grading.gradebook import Grade
from ragkit.teach.grading.handed_in import LAYOUTS, Submission, found_under
from ragkit.teach.grading.judging import JUDGING
from ragkit.teach.language import say
from ragkit.teach.untrusted import readable

__all__ = ["PROJECT_KEY", "handed_in_projects", "project_grades"]

PROJECT_KEY = "project"
"""The project's key in the gradebook, beside ex1 .. ex7."""


def handed_in_projects(
    paths: Iterable[str | Path], layout: str, skipped: list[str], students: Iterable[str] | None = None
) -> list[Submission]:
    """Every project under the folders named (a folder holding ``project.toml``), with its student by the layout's
    rule; a student not on the class list is said in ``skipped``, not graded (a link on the way is not followed: the
    notebooks' walk over the same folders says it)."""
    if layout not in LAYOUTS:
        raise InputError(f"unknown layout {layout!r}: use one of {', '.join(LAYOUTS)}")
    listed = None if students is None else set(students)
    found: list[Submission] = []
    # walked as the notebooks are (through descriptors, never a link), whose walk says what it did not follow
    for handed in found_under(paths, layout, lambda name: name == PLAN_FILE):
        plan = handed.entry.path
        if listed is not None and handed.student not in listed:
            skipped.append(
                f"{readable(str(plan.parent), 400)}: names '{readable(handed.student)}', who is not on the class "
                "list: not graded"
            )
        else:
            found.append(Submission(handed.student, PROJECT_KEY, plan))
    return sorted(found, key=lambda s: (s.student, str(s.path)))


def project_grades(
    projects: list[Submission], notebooks: Iterable[Submission], listed: Iterable[str], late: list[threading.Thread]
) -> list[Grade]:
    """A project row for every student found or listed once any project was found: each project graded by its
    check, a student with two projects ``not run`` (keep one), and ``missing`` where none was handed in."""
    if not projects:
        return []
    by_student: dict[str, list[Submission]] = {}
    for s in projects:
        by_student.setdefault(s.student, []).append(s)
    rows = []
    for who, handed in sorted(by_student.items()):
        if len(handed) > 1:
            where = "; ".join(readable(str(s.path.parent), 400) for s in handed)
            rows.append(
                Grade(
                    who,
                    PROJECT_KEY,
                    "not run",
                    reason=say("{count} projects: keep one", count=len(handed)) + f"; {where}",
                )
            )
        else:
            rows.append(_graded(handed[0], late))
    everyone = {s.student for s in notebooks} | set(listed)
    rows += [
        Grade(who, PROJECT_KEY, "missing", reason=say("no project found (a folder with {plan})", plan=PLAN_FILE))
        for who in sorted(everyone - set(by_student))
    ]
    return rows


def _graded(submission: Submission, late: list[threading.Thread]) -> Grade:
    """One project's grade by its check, in a thread bounded by ``JUDGING`` (a late one joins ``late``)."""
    from ragkit.teach.exercises.project_check import check_project

    folder = submission.path.parent
    done: list = []
    spoken = submission.language

    def judge() -> None:
        with language.speaking(spoken):
            try:
                done.append(check_project(folder))
            except Exception as exc:  # a project the check cannot handle is not yet right, never a crash
                done.append(exc)

    judging = threading.Thread(target=judge, name="judging a project", daemon=True)
    judging.start()
    judging.join(JUDGING)
    with language.speaking(spoken):
        if not done:
            late.append(judging)
            reason = say("its check took longer than {seconds:g} s", seconds=JUDGING)
            return Grade(submission.student, PROJECT_KEY, "not run", reason=reason, notebook=str(folder))
        if isinstance(done[0], Exception):
            reason = say(
                "the check could not judge this answer ({error}: {message})",
                error=type(done[0]).__name__,
                message=readable(str(done[0]), 200),
            )
            return Grade(submission.student, PROJECT_KEY, "not yet", reason=reason, notebook=str(folder))
    feedback = done[0]
    return Grade(
        submission.student,
        PROJECT_KEY,
        "yes" if feedback.passed else "not yet",
        dict(feedback.numbers),
        "; ".join(feedback.notes + tuple(feedback.hints)),
        0.0,
        str(folder),
        spoken=spoken,
    )
