"""The teacher's grading: class-report (self-reported progress), grade (in a sandbox), nbgrader (an export)."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

from ragkit.cli.common import Subcommands, jobs, positive_seconds, print

__all__ = ["add_grading_commands"]


def _class_report(args: argparse.Namespace) -> int:
    from ragkit.teach.exercises.results import EXERCISES
    from ragkit.teach.grading.class_report import class_report
    from ragkit.teach.untrusted import write_csv

    report = class_report(args.paths, args.name_by, output=args.csv)
    rows = report.rows()
    columns = ["student", *EXERCISES]
    width = {c: max([len(c), *(len(r[c]) for r in rows)]) for c in columns}
    # the header goes to stderr, so the table on stdout keeps its shape for scripts that read it
    print(
        "Self-reported progress: what the students' own kernels recorded, not grades (grades: python -m ragkit grade)",
        file=sys.stderr,
    )
    print("  ".join(f"{c:<{width[c]}}" for c in columns))
    for r in rows:
        print("  ".join(f"{r[c]:<{width[c]}}" for c in columns))
    print(
        f"\n{len(rows)} students, {report.lines} results read (self-reported, not grades); 'yes (2)': passed, "
        "2 attempts; '-': not tried"
    )
    if report.skipped:
        print(f"{len(report.skipped)} line(s) skipped or file(s) not read, each with its reason:")
        for line in report.skipped:
            print(f"  {line}")
    if args.csv:
        write_csv(args.csv, columns, rows)
        print(f"wrote {args.csv}")
    return 0


class _Stopped(KeyboardInterrupt):
    """A signal that ends a grading as Ctrl-C does (a KeyboardInterrupt, which no ``except Exception`` swallows)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _stopped_by_signals(signals: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGHUP)) -> Iterator[None]:
    """Inside, SIGTERM or SIGHUP raises ``_Stopped``: the grading unwinds, and its folders, uids and cgroups go."""

    def stop(signum: int, _frame: object) -> None:
        raise _Stopped(signum)

    before = {s: signal.signal(s, stop) for s in signals}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def _grade(args: argparse.Namespace) -> int:
    import json

    from ragkit.teach.grading.gradebook import COLUMNS
    from ragkit.teach.grading.grader import chosen_exercises, grade
    from ragkit.teach.grading.handed_in import read_class_list, refuse_outputs
    from ragkit.teach.grading.isolation import Limits
    from ragkit.teach.untrusted import readable, write_csv, write_file

    refuse_outputs([args.csv, args.json], [*args.paths, *([args.students] if args.students else [])])
    exercises = chosen_exercises(args.exercises.split(",") if args.exercises is not None else None)
    students = read_class_list(args.students) if args.students else None
    limits = Limits(timeout=args.timeout, threads=max(1, (os.cpu_count() or 1) // args.jobs))
    print(
        f"grading with a time limit of {args.timeout:g} s per notebook, {args.jobs} at a time"
        + (f", the {len(students)} students of {readable(str(args.students), 160)}" if students else ""),
        file=sys.stderr,
    )
    try:
        with _stopped_by_signals():
            result = grade(
                args.paths,
                args.layout,
                limits,
                args.jobs,
                students=students,
                exercises=exercises,
                progress=lambda g: print(f"  {readable(g.student)} {g.exercise}: {g.grade}", file=sys.stderr),
                announce=lambda isolation: print(f"sandbox: {isolation}", file=sys.stderr),
                note=lambda line: print(line, file=sys.stderr),
            )
    except _Stopped as stopped:
        name = signal.Signals(stopped.signum).name
        print(
            f"grading stopped by {name}: no grades written; its running notebooks were killed and its temporary "
            "folders and cgroups removed. Run the same command again to grade the class",
            file=sys.stderr,
        )
        return 128 + stopped.signum
    print(result)
    if args.csv:
        write_csv(args.csv, COLUMNS, [g.row() for g in result.grades])
        print(f"wrote {args.csv}")
    if args.json:
        write_file(args.json, json.dumps(result.to_json(), indent=1, allow_nan=False).encode("utf-8"))
        print(f"wrote {args.json}")
    return 0


def _nbgrader(args: argparse.Namespace) -> int:
    from ragkit.teach.grading.nbgrader_export import POINTS, write_course

    for path in write_course(args.folder, args.force):
        print(f"wrote {path}")
    print(
        f"each exercise is one assignment worth {POINTS} point (its locked check cell); next, in {args.folder}: "
        "`nbgrader generate_assignment ASSIGNMENT --create` (see docs/grading.md)"
    )
    return 0


def add_grading_commands(sub: Subcommands) -> None:
    """The grading commands and their arguments."""
    from ragkit.teach.grading.class_report import NAME_RULES

    p = sub.add_parser("class-report", help="students x exercises (passed, attempts) from collected results files")
    p.add_argument("paths", nargs="+", type=Path, help="results .jsonl files, or folders holding them")
    p.add_argument("--csv", type=Path, help="also write the table to this CSV file")
    p.add_argument(
        "--name-by",
        choices=NAME_RULES,
        default=NAME_RULES[0],
        help="who a results file belongs to: its name without .jsonl (default), or its owner's login",
    )
    p.set_defaults(run=_class_report)
    from ragkit.teach.grading.handed_in import LAYOUTS
    from ragkit.teach.grading.isolation import TIMEOUT

    p = sub.add_parser("grade", help="grade submitted exercise notebooks: each run afresh in a sandbox, judged here")
    p.add_argument("paths", nargs="+", type=Path, help="submitted .ipynb files, or folders searched for them")
    p.add_argument(
        "--layout",
        choices=LAYOUTS,
        default=LAYOUTS[0],
        help="who a notebook belongs to: home (default), the folder after the first /home/ in its path; "
        "platform, the first folder under the PATH given (<download>/<student>/<file>.ipynb); a link "
        "on the way is refused, never followed",
    )
    p.add_argument(
        "--students",
        type=Path,
        metavar="FILE",
        help="the class list, one login a line (a hub's admin page exports it): only they are graded, "
        "each gets a row per exercise, a notebook naming anyone else is listed and not graded",
    )
    p.add_argument(
        "--timeout",
        type=positive_seconds,
        default=TIMEOUT,
        help=f"seconds a notebook may run, kernel start included (default {TIMEOUT:g})",
    )
    p.add_argument("--jobs", type=jobs, default=1, help="notebooks run at the same time (default 1)")
    p.add_argument(
        "--exercises",
        metavar="ex2,ex4",
        help="grade only these exercises (default all of them): no row, not even 'missing', for the others",
    )
    p.add_argument("--csv", type=Path, help="also write the grades to this CSV file")
    p.add_argument("--json", type=Path, help="also write the grades to this JSON file")
    p.set_defaults(run=_grade)
    p = sub.add_parser("nbgrader", help="write the exercises as an nbgrader course (source/<assignment>/)")
    p.add_argument("folder", type=Path, help="the nbgrader course folder to write into")
    p.add_argument("--force", action="store_true", help="write the assignments again over earlier ones")
    p.set_defaults(run=_nbgrader)
