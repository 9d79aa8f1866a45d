"""Grading a class: N students x every exercise, each notebook run in the grader's sandbox and judged.

``python -m benchmarks grading`` grades a generated class of ``GRADING_N`` students (default 60)
with ``GRADING_JOBS`` notebooks at a time (default 2), on the machine's own cache. Every student
hands in every exercise's solution notebook; ex4's header ends in a word of the student's own, so that
every header is new text, as in a real class where no two headers agree: its chunks are in no
cache, and are embedded once, by the grader, for the kernel and the check (the lending of
``ragkit.plumbing.service``). ``GRADING_LEND=0`` grades without lending (each header embedded
twice, as before it). With N below sixty the figure for sixty is extrapolated from the measured
time per student, and is labelled so.
"""

from __future__ import annotations

import os
import resource
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
TARGET_MINUTES = 30
CLASS = 60
OWN_WORD = """
_solution_header = my_header


def my_header(doc_title, section):  # the solution's header and a word of this student's own, on every chunk
    return _solution_header(doc_title, section) + " {word}"
"""


def make_class(home: Path, n: int) -> None:
    """``home/<student>/ragkit/notebooks/exercises/`` with every solution, ex4's header each student's own.

    The header ends in a word of this run and student, added to every chunk (a template, as the
    check requires): text no cache has seen. The notebook's own conclusion follows from its own
    measurement, so the verdict stays right whatever the word does to the ranks.
    """
    from ragkit.teach.grading.answers import TABLE

    run = uuid.uuid4().hex[:8]
    for i in range(n):
        folder = home / f"student{i:02d}" / "ragkit" / "notebooks" / "exercises"
        folder.mkdir(parents=True)
        for exercise in TABLE.values():
            nb = nbformat.read(ROOT / "notebooks" / "solutions" / exercise.notebook, as_version=4)
            if exercise.key == "ex4":
                cell = next(c for c in nb.cells if c.cell_type == "code" and "def my_header" in c.source)
                cell.source += OWN_WORD.format(word=f"run{run}x{i}")
            nbformat.write(nb, folder / exercise.notebook)


def _cpu() -> float:
    """Busy CPU seconds of the whole machine (/proc/stat), else of this process and the children it waited for.

    The process's own count misses the kernels: they die in the sandbox's namespace, reaped by no process of
    ours, so their CPU is never added to the grader's children.
    """
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def bench_grading(n: int | None = None, jobs: int | None = None) -> None:
    """Grade a generated class of ``n`` students and time it."""
    from ragkit.teach.grading.grader import grade
    from ragkit.teach.grading.isolation import Limits

    n = n or int(os.environ.get("GRADING_N", CLASS))
    jobs = jobs or int(os.environ.get("GRADING_JOBS", 2))
    lending = os.environ.get("GRADING_LEND", "1") != "0"
    from ragkit.teach.grading.answers import TABLE

    print(
        f"\n== grading: {n} students x {len(TABLE)} exercises, {jobs} notebooks at a time, {os.cpu_count()} cores, "
        f"{'with' if lending else 'WITHOUT'} the grader lending its vectors"
    )
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="ragkit-bench-grading-") as tmp:
        make_class(Path(tmp) / "home", n)
        t, cpu = time.perf_counter(), _cpu()
        result = grade(
            [Path(tmp) / "home"], "home", Limits(threads=max(1, (os.cpu_count() or 1) // jobs)), jobs, lending=lending
        )
        seconds, cpu = time.perf_counter() - t, _cpu() - cpu
    print(f"  {result.summary()}")
    print("  per notebook, measured (mean / max): the run in the sandbox, then the grader's own check")
    for key in sorted({g.exercise for g in result.grades}):
        rows = [g for g in result.grades if g.exercise == key]
        run, check = [g.seconds for g in rows], [g.judging for g in rows]
        print(
            f"  {key}: sandbox {statistics.mean(run):6.1f} / {max(run):6.1f} s, "
            f"check {statistics.mean(check):5.1f} / {max(check):5.1f} s  ({len(rows)} notebooks)"
        )
    print(f"  measured: {n} students in {seconds / 60:.1f} min ({seconds / n:.0f} s per student, {jobs} at a time)")
    minutes = seconds / 60 * (CLASS / n)
    how = "MEASURED" if n == CLASS else f"EXTRAPOLATED from the {n} students measured, linearly"
    print(
        f"  a class of {CLASS}: {minutes:.0f} min, {how}; target {TARGET_MINUTES} min: "
        f"{TARGET_MINUTES / minutes:.2f}x {'within' if minutes <= TARGET_MINUTES else 'MISSES'} target"
    )
    cores = os.cpu_count() or 1
    counted = "the whole machine's, /proc/stat" if Path("/proc/stat").exists() else "the grader's and its children's"
    print(
        f"  CPU used: {cpu / n:.0f} core-seconds per student ({counted}); on {cores} idle cores a "
        f"class of {CLASS} needs at least {cpu / n * CLASS / cores / 60:.0f} min (a lower bound from the CPU "
        "measured, not a measured time)"
    )
    for g in result.grades:
        if g.grade != "yes":
            print(f"  {g.student} {g.exercise}: {g.grade} ({g.reason[:200]})")
    print(
        f"  load average: {load:.1f} before the run, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores "
        "(other work on the machine slows every figure above)"
    )
    print(f"  sandbox: {result.isolation}")
