"""Judging: a run's declared answers handed to the exercise's own check, in the grader's process, in a bounded thread.

What a student's kernel printed, recorded in a results file or redefined never reaches a grade: the grader validates
the answers the sandbox handed back (``answers``) and calls the check itself, speaking the notebook's language. The
grader also lends its models to the kernels (``lent_models``): a text a kernel embeds is embedded once, and its
check finds it in the grading's own cache (``writing_into``), never in the teacher's.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ragkit.plumbing.service import MAX_TEXTS
from ragkit.teach import language
from ragkit.teach.grading.answers import TABLE, answers_of, header_pairs
from ragkit.teach.grading.gradebook import Grade
from ragkit.teach.grading.handed_in import Submission
from ragkit.teach.grading.sandbox import Lending, SandboxRun
from ragkit.teach.language import say
from ragkit.teach.untrusted import readable

if TYPE_CHECKING:
    import numpy as np

    from ragkit.embedding import Embedder
    from ragkit.teach.course import Course
    from ragkit.teach.exercises import Feedback

__all__ = [
    "GRADER_FAILED",
    "JUDGING",
    "LEND_SHARE",
    "LEND_TEXTS",
    "judged",
    "lent_models",
    "not_graded",
    "writing_into",
]

LEND_SHARE = 3
"""A kernel's request for vectors waits for the grader's model (busy with another run) a third of the time limit.

Waiting costs less than computing: a kernel refused computes its vectors, and the check then
computes them again; one that waits has them computed once."""
LEND_TEXTS = 2
"""A run may have the grader embed this many times the course's header (strategy E) chunks: its own header's,
and one more try (a header changed and measured again); a flood of short texts stops there."""
GRADER_FAILED = (
    "the grader failed on this notebook ({error}: {message}): not graded, the rest of the class was; please report this"
)
"""The reason of a row the grader itself failed on (``not_graded``): the machine's fault, in English, as a sandbox's."""
JUDGING = 300.0
"""Seconds the grader waits for one check; a check past it is graded "not run", with that reason.

The slowest honest check is ex4's when its kernel borrowed nothing: it embeds the course's header chunks, as the
notebook did within its own time limit. The others embed a few texts (ex5's document is bounded in words)."""


def judged(
    submission: Submission, run: SandboxRun, course: Course, late: list[threading.Thread] | None = None
) -> Grade:
    """A submission's grade from its run: not run (and why), or yes / not yet by the grader's own check.

    Every reason is said in the notebook's language (``Submission.language``): the check runs speaking it, as the
    student's kernel did; the grade itself and the numbers are the same in every language.
    The check gets ``JUDGING`` seconds; one that takes longer is not run, and its thread, still running, joins ``late``
    (the grader waits for it before it removes the cache that check writes into).
    """
    with language.speaking(submission.language):
        return replace(_judged(submission, run, course, late), spoken=submission.language)


def not_graded(submission: Submission, exc: BaseException, seconds: float = 0.0) -> Grade:
    """The row of a submission the grader itself failed on: ``not run``, with the error, for the teacher to report.

    Whatever one notebook makes the grader do wrong stays that notebook's row: the class is graded on.
    """
    return Grade(
        submission.student,
        submission.exercise,
        "not run",
        reason=GRADER_FAILED.format(error=type(exc).__name__, message=readable(str(exc), 200)),
        seconds=seconds,
        notebook=str(submission.path),
        spoken=submission.language,
    )


def _judged(submission: Submission, run: SandboxRun, course: Course, late: list[threading.Thread] | None) -> Grade:
    where = str(submission.path)
    if not run.ran:
        return Grade(
            submission.student,
            submission.exercise,
            "not run",
            reason=str(run.failure),
            seconds=run.seconds,
            notebook=where,
        )
    exercise = TABLE[submission.exercise]
    answers, why = answers_of(run.answers, exercise, header_pairs(course) if exercise.functions else None)
    if why:
        return Grade(
            submission.student, submission.exercise, "not yet", reason=why, seconds=run.seconds, notebook=where
        )
    done: list[Feedback | BaseException] = []

    def judge() -> None:
        try:
            done.append(exercise.judge(course, submission.student, answers))
        except BaseException as exc:  # handed to the grader's thread, which decides as if the check had run there
            done.append(exc)

    # a thread, not a call: a check past its bound is left behind (Python cannot stop a thread) and the grading goes on;
    # it speaks the language ``judged`` chose, the notebook's
    judging = threading.Thread(target=judge, name=f"judging {submission.exercise}", daemon=True)
    judging.start()
    judging.join(JUDGING)
    if not done:
        if late is not None:
            late.append(judging)
        return Grade(
            submission.student,
            submission.exercise,
            "not run",
            reason=say("its check took longer than {seconds:g} s", seconds=JUDGING),
            seconds=run.seconds,
            notebook=where,
        )
    feedback = done[0]
    if isinstance(feedback, KeyboardInterrupt):  # the teacher's, not the check's
        raise feedback
    if isinstance(feedback, BaseException):  # an answer the check cannot handle is not yet right, never a crash
        return Grade(
            submission.student,
            submission.exercise,
            "not yet",
            reason=say(
                "the check could not judge this answer ({error}: {message})",
                error=type(feedback).__name__,
                message=readable(str(feedback), 200),
            ),
            seconds=run.seconds,
            notebook=where,
        )
    return Grade(
        submission.student,
        submission.exercise,
        "yes" if feedback.passed else "not yet",
        dict(feedback.numbers),
        "; ".join(feedback.notes),
        run.seconds,
        where,
        notes=tuple(feedback.notes),
    )


def lent_models(
    jobs: int, threads: int, wait: float, cache: Path | None = None, seed: Path | None = None, texts: int | None = None
) -> Lending | None:
    """The grader's models lent to the kernels, one per job with a kernel's threads; None where none can load.

    With ``cache``, the lent vectors are kept there, over the teacher's vectors in ``seed`` (see ``writing_into``).
    """
    import queue

    from ragkit.embedding import Embedder
    from ragkit.errors import RagkitError
    from ragkit.plumbing.cache import VectorCache

    try:
        # an encoder of its own for each run waiting, each with its own cache connection, so that ``jobs`` ex4 runs
        # are embedded at once, each on the threads its kernel has (its share of the cores); the checks keep the
        # default encoder
        embedders = [Embedder(threads=threads) for _ in range(jobs)]
    except (RagkitError, OSError):
        return None
    if cache is not None:
        for embedder in embedders:
            embedder.cache = VectorCache(cache, embedder.stamp.namespace, embedder.stamp.dimensions, shared=seed)
    free: queue.SimpleQueue[Embedder] = queue.SimpleQueue()
    for embedder in embedders:
        free.put(embedder)
    ended = threading.Event()

    def encode(texts: list[str]) -> np.ndarray:
        if ended.is_set():  # the grading is over: the kernel (if any is left) computes its own
            raise RuntimeError("the grading has ended")
        embedder = free.get()  # never waits: the Lender holds one of ``jobs`` turns of the semaphore
        try:
            # the kernel warns of truncation itself, and the grader's log stays the grades': no warning here, and no
            # catch_warnings, whose filters are the process's (another thread's recording would be undone)
            return embedder.encode(texts, progress=False, warn=False)
        finally:
            free.put(embedder)

    def stop() -> None:
        """Refuse new texts, and wait for every embedding under way: no encoder is left running when the grader exits
        (onnxruntime aborts the process, "terminate called", when the interpreter ends under a running session)."""
        ended.set()
        for _ in embedders:
            free.get()

    return Lending(
        embedders[0].stamp.namespace,
        encode,
        threading.BoundedSemaphore(jobs),
        wait,
        texts if texts is not None else MAX_TEXTS,
        stop,
    )


@contextlib.contextmanager
def writing_into(embedder: Embedder, cache: Path, seed: Path | None) -> Iterator[None]:
    """Inside the block, the embedder reads the teacher's vectors in ``seed`` and writes only into ``cache``.

    What a grading embeds (a kernel's borrowed texts, a student's document, tickets and headers) is the students', not
    the course's: it goes to a cache thrown away with the grading, never into the teacher's, while the course's
    vectors are still read from the snapshot. The checks embed with the default embedder, so it is that one's cache
    that is swapped for the block.
    """
    from ragkit.plumbing.cache import VectorCache

    kept = embedder.cache
    embedder.cache = VectorCache(cache, kept.stamp, kept.dimensions, shared=seed)
    try:
        yield
    finally:
        embedder.cache.close()
        embedder.cache = kept
