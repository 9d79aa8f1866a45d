"""Grading a class: N students x the five exercises, each notebook run in the grader's sandbox and judged.

``python -m benchmarks grading`` grades a generated class of ``GRADING_N`` students (default 60)
with ``GRADING_JOBS`` notebooks at a time (default 2), on the machine's own cache. Every student
hands in the five solution notebooks; ex4's header ends in a word of the student's own, so that
every header is new text: each sandbox embeds the corpus with it, and
the grader embeds it again to judge it, as with a real class where no two headers agree. With a
small N, the figure for sixty is extrapolated from the time per student, and says so.
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
TARGET_MINUTES = 30
CLASS = 60


def make_class(home: Path, n: int) -> None:
    """``home/<student>/ragkit/notebooks/exercises/`` with the five solutions, ex4's header each student's own.

    The header ends in a word of this run and student (after the encoder's window, so the verdict
    stays the solution's): text no cache has seen, as a real class's headers would be.
    """
    from ragkit.teach.grading import TABLE

    run = uuid.uuid4().hex[:8]
    for i in range(n):
        folder = home / f"student{i:02d}" / "ragkit" / "notebooks" / "exercises"
        folder.mkdir(parents=True)
        for exercise in TABLE.values():
            nb = nbformat.read(ROOT / "notebooks" / "solutions" / exercise.notebook, as_version=4)
            for cell in nb.cells:
                if exercise.key == "ex4" and "def my_header" in cell.source:
                    cell.source = cell.source.replace('* 20) + "]"', f'* 20) + "] run{run}x{i}"')
            nbformat.write(nb, folder / exercise.notebook)


def bench_grading(n: int | None = None, jobs: int | None = None) -> None:
    from ragkit.teach.grading import grade
    from ragkit.teach.sandbox import Limits

    n = n or int(os.environ.get("GRADING_N", CLASS))
    jobs = jobs or int(os.environ.get("GRADING_JOBS", 2))
    print(f"\n== grading: {n} students x 5 exercises, {jobs} notebooks at a time, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="ragkit-bench-grading-") as tmp:
        make_class(Path(tmp) / "home", n)
        t = time.perf_counter()
        result = grade([Path(tmp) / "home"], "home", Limits(threads=max(1, (os.cpu_count() or 1) // jobs)), jobs)
        seconds = time.perf_counter() - t
    print(f"  {result.summary()}")
    per_exercise = {}
    for g in result.grades:
        per_exercise.setdefault(g.exercise, []).append(g.seconds)
    for key, times in sorted(per_exercise.items()):
        print(f"  {key}: {sum(times) / len(times):6.1f} s per notebook in the sandbox (mean of {len(times)})")
    minutes = seconds / 60 * (CLASS / n)
    how = "measured" if n == CLASS else f"extrapolated from {n} students ({seconds / 60:.1f} min)"
    ratio = TARGET_MINUTES / minutes
    print(f"  a class of {CLASS}: {minutes:.0f} min, {how}; target {TARGET_MINUTES} min: "
          f"{ratio:.2f}x {'within' if ratio >= 1 else 'MISSES'} target")
    for g in result.grades:
        if g.grade != "yes":
            print(f"  {g.student} {g.exercise}: {g.grade} ({g.reason[:200]})")
    print(f"  load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"  sandbox: {result.isolation}")
