"""Warm start: one process does a long job in named stages under a lock, others wait for the stage they need.

The holder takes an exclusive lock on ``warming.lock`` in the cache folder (``filelock``: the
system releases it when the process ends, however it ends, so an interrupted holder never
leaves a stale lock) and keeps a status file, ``warming.json``, beside it: who holds the lock,
the stages it has finished, the stage it is on with how many of its items are done, and a
progress count it raises as it works. A waiter shows that, updated in place, and follows the
count: when it stops moving for ``STALL_S`` seconds (a stopped or hung holder), the wait ends
with a message. This module knows nothing about what the stages compute: the caller names them
(``ragkit.teach.course`` owns the course's stages and says what each one is called).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock, Timeout

from ragkit.plumbing.locations import cache_dir

__all__ = [
    "POLL_S",
    "STALL_S",
    "WARM_COMMAND",
    "Holder",
    "ProgressLine",
    "WarmerStatus",
    "describe_wait",
    "holding",
    "read_status",
    "start_background",
    "wait_for",
    "warmer_running",
]

LOCK_NAME, STATUS_NAME = "warming.lock", "warming.json"
POLL_S = 0.25
STALL_S = 120.0
"""How long a waiter follows a holder whose progress count does not move (the model's one-time export fits in it)."""
WARM_COMMAND = ("-m", "ragkit", "warm", "--quiet")
"""What ``start_background`` runs with this Python."""
_given_up: dict[int, int] = {}
"""Holders a wait gave up on in this process, with their progress count then: not waited for again until it moves."""


@dataclass(frozen=True)
class WarmerStatus:
    """What the status file says: the holder's pid, the stages it finished, its progress count, what it is on."""

    pid: int | None = None
    done: tuple[str, ...] = ()
    progress: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    working_on: str | None = None
    count: int = 0
    """Items of ``working_on`` done so far, of ``total`` (0: the stage does not count its items)."""
    total: int = 0
    unit: str = ""


def _paths(folder: Path | None = None) -> tuple[Path, Path]:
    root = Path(folder) if folder is not None else cache_dir()
    return root / LOCK_NAME, root / STATUS_NAME


def read_status(folder: Path | None = None) -> WarmerStatus:
    """The status file as written last (an empty WarmerStatus when there is none or it cannot be read)."""
    try:
        raw = json.loads(_paths(folder)[1].read_text())
        return WarmerStatus(
            raw.get("pid"),
            tuple(raw.get("done", ())),
            int(raw.get("progress", 0)),
            dict(raw.get("seconds", {})),
            raw.get("working_on"),
            int(raw.get("count", 0)),
            int(raw.get("total", 0)),
            str(raw.get("unit", "")),
        )
    except (OSError, ValueError, TypeError, AttributeError):
        return WarmerStatus()


def warmer_running(folder: Path | None = None) -> bool:
    """True while a process (another one, or another lock object in this one) holds the lock."""
    lock = _paths(folder)[0]
    if not lock.exists():
        return False
    probe = FileLock(lock)
    try:
        probe.acquire(blocking=False)
    except Timeout:
        return True
    except OSError:
        return False
    probe.release()
    return False


class Holder:
    """The lock, held: records progress and finished stages in the status file for waiters to follow."""

    def __init__(self, status_path: Path):
        self._path, self._start = status_path, time.perf_counter()
        self.done: list[str] = []
        self.seconds: dict[str, float] = {}
        self.progress = 0
        self.working_on: str | None = None
        self.count = self.total = 0
        self.unit = ""
        self._write()

    def _write(self) -> None:
        # written aside then renamed: a reader sees the old status or the new one, never half of one
        tmp = self._path.with_name(f"{self._path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(
                json.dumps(
                    {
                        "pid": os.getpid(),
                        "done": self.done,
                        "progress": self.progress,
                        "seconds": self.seconds,
                        "working_on": self.working_on,
                        "count": self.count,
                        "total": self.total,
                        "unit": self.unit,
                    }
                )
            )
            os.replace(tmp, self._path)
        finally:
            tmp.unlink(missing_ok=True)

    def begin(self, stage: str, total: int = 0, unit: str = "") -> None:
        """Work on ``stage`` starts (``total``: its items, e.g. 1204 chunks; 0 when it does not count them)."""
        self.working_on, self.count, self.total, self.unit = stage, 0, total, unit
        self.progress += 1
        self._write()

    def tick(self, count: int | None = None) -> None:
        """Some work was done (``count``: items of the current stage done so far): waiters keep waiting."""
        if count is not None:
            self.count = count
        self.progress += 1
        self._write()

    def finished(self, stage: str) -> None:
        """A stage is done: waiters for it go on."""
        self.done.append(stage)
        self.seconds[stage] = round(time.perf_counter() - self._start, 1)
        self.working_on, self.count, self.total, self.unit = None, 0, 0, ""
        self.progress += 1
        self._write()


@contextlib.contextmanager
def holding(folder: Path | None = None, patience_s: float = 2.0) -> Iterator[Holder | None]:
    """Yield a Holder with the lock held, or None when another process keeps it past ``patience_s``.

    Raises OSError when the folder cannot be written (no lock file can be made there).
    """
    lock_path, status_path = _paths(folder)
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    open(lock_path, "a").close()  # filelock reports an unwritable folder as a lock it waits for: say it here
    lock = FileLock(lock_path)
    try:
        lock.acquire(timeout=patience_s)
    except Timeout:
        yield None
        return
    try:
        yield Holder(status_path)
    finally:
        lock.release()


def describe_wait(stage: str, needed: Sequence[str], status: WarmerStatus, label: Callable[[str], str] = str) -> str:
    """One sentence: which stage a wait is for, which of the stages it needs the warmer has done, what it is on."""
    done = [label(s) for s in needed if s in status.done]
    said = (
        f"Waiting for the background warmer (pid {status.pid}) to finish {label(stage)}: it has done "
        f"{len(done)} of the {len(needed)} stages this needs" + (f" ({', '.join(done)})" if done else "")
    )
    if status.working_on is None:
        return said + "."
    said += f" and is on {label(status.working_on)}"
    if status.total:
        said += f", {status.count:,} of {status.total:,} {status.unit or 'items done'}"
    return said + "."


class ProgressLine:
    """One line of output a wait (or a long computation) rewrites in place: an updatable display in a notebook, stdout
    elsewhere.

    Never stderr: JupyterLab paints stderr red, and the notebooks' tests fail on any.
    """

    def __init__(self) -> None:
        from IPython import get_ipython

        shell = get_ipython()
        self._kernel = shell is not None and getattr(shell, "kernel", None) is not None
        self._handle = None
        self._printed = ""

    def __call__(self, sentence: str, seconds: float, suffix: str | None = None) -> None:
        """Show ``sentence`` with the seconds waited so far, or with ``suffix`` in their place (a computation's own
        words for them); outside a notebook only when the sentence changes."""
        if not self._kernel:
            if sentence != self._printed:
                print(sentence, flush=True)
                self._printed = sentence
            return
        from IPython.display import Markdown, display

        shown = Markdown(f"{sentence} ({suffix if suffix is not None else f'waited {seconds:.0f} s'})")
        if self._handle is None:
            self._handle = display(shown, display_id=True)
        else:
            self._handle.update(shown)


def wait_for(
    stage: str,
    needed: Sequence[str],
    progress: bool = True,
    label: Callable[[str], str] = str,
    show: Callable[[str, float], None] | None = None,
) -> None:
    """Block until a live holder has finished ``stage``; ``needed``: the stages it finishes up to it, ``stage`` last.

    While waiting, ``show`` (by default, with ``progress``: a line rewritten in place) is given a sentence saying
    what the wait is for and how far the warmer is (``label`` names a stage), and the seconds waited.
    Returns at once when no one holds the lock (or in the holder); returns with a message when the holder's
    progress stops for ``STALL_S`` seconds: the caller then computes the stage itself.
    """
    if not warmer_running():
        return
    status = _latest = read_status()
    if status.pid == os.getpid() or stage in status.done or _given_up.get(status.pid or 0) == status.progress:
        return
    if show is None and progress:
        show = ProgressLine()
    began = moved = time.monotonic()
    finished = False
    while warmer_running():
        status = read_status()
        if stage in status.done:
            finished = True
            break
        if show is not None:
            show(describe_wait(stage, needed, status, label), time.monotonic() - began)
        if (status.pid, status.progress) != (_latest.pid, _latest.progress):
            _latest, moved = status, time.monotonic()
        elif time.monotonic() - moved > STALL_S:
            _given_up[status.pid or 0] = status.progress
            print(
                f"The background warmer (pid {status.pid}) has made no progress for {STALL_S:.0f} s: it may be "
                f"stopped (`kill -CONT {status.pid}` resumes it, `kill {status.pid}` ends it). Not waiting "
                f"for it any longer: this notebook computes {label(stage)} itself."
            )
            return
        time.sleep(POLL_S)
    if show is not None:
        show(
            f"Waited for the background warmer to finish {label(stage)}: done."
            if finished
            else f"The background warmer ended before {label(stage)}: this notebook computes it itself.",
            time.monotonic() - began,
        )


def start_background(
    log: Path, niceness: int = 19, patience_s: float = 30.0, command: Sequence[str] = WARM_COMMAND
) -> str:
    """Start a detached ``python COMMAND`` at low priority and return once it holds the lock (or has ended).

    Returning only then is what makes the hand-over safe: a notebook opened a moment later finds
    a warmer to wait for instead of computing the same stages itself, at twice the cost.
    """
    log = Path(log)
    log.parent.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, *command]
    if niceness and shutil.which("nice"):
        argv = ["nice", "-n", str(niceness), *argv]
    with open(log, "w") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )  # Ctrl+C on JupyterLab does not kill it mid-write
    deadline = time.monotonic() + patience_s
    while time.monotonic() < deadline:
        if read_status().pid == proc.pid and warmer_running():  # it writes its pid once it holds the lock
            return f"warming the embedding cache in the background (pid {proc.pid}, log: {log})"
        if proc.poll() is not None:
            last = (log.read_text(errors="replace").strip().splitlines() or ["no output"])[-1]
            return f"the warmer ended at once: {last}"
        time.sleep(0.02)
    return (
        f"the warmer (pid {proc.pid}) has not started within {patience_s:.0f} s; it goes on in the background "
        f"(log: {log})"
    )
