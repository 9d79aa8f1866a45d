"""Warm start: one process does a long job in named stages under a lock, others wait for the stage they need.

The holder takes an exclusive lock on ``warming.lock`` in the cache folder (``filelock``: the
system releases it when the process ends, however it ends, so an interrupted holder never
leaves a stale lock) and keeps a status file, ``warming.json``, beside it: who holds the lock,
the stages it has finished and a progress count it raises as it works. A waiter follows that
count: when it stops moving for ``STALL_S`` seconds (a stopped or hung holder), the wait ends
with a message. This module knows nothing about what the stages compute: the caller names them
(``ragkit.teach.course`` owns the course's stages).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from filelock import FileLock, Timeout

from ragkit.plumbing.locations import cache_dir

LOCK_NAME, STATUS_NAME = "warming.lock", "warming.json"
POLL_S = 0.25
STALL_S = 120.0
"""How long a waiter follows a holder whose progress count does not move (the model's one-time export fits in it)."""
WARM_COMMAND = ("-m", "ragkit", "warm", "--quiet")
"""What ``start_background`` runs with this Python."""
_given_up: dict[int, int] = {}
"""Holders a wait gave up on in this process, with their progress count then: not waited for again until it moves."""


@dataclass(frozen=True)
class Status:
    """What the status file says: the holder's pid, the stages it finished, its progress count."""

    pid: int | None = None
    done: tuple[str, ...] = ()
    progress: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


def _paths(folder: Path | None = None) -> tuple[Path, Path]:
    root = Path(folder) if folder is not None else cache_dir()
    return root / LOCK_NAME, root / STATUS_NAME


def read_status(folder: Path | None = None) -> Status:
    """The status file as written last (an empty Status when there is none or it cannot be read)."""
    try:
        raw = json.loads(_paths(folder)[1].read_text())
        return Status(raw.get("pid"), tuple(raw.get("done", ())), int(raw.get("progress", 0)),
                      dict(raw.get("seconds", {})))
    except (OSError, ValueError, TypeError, AttributeError):
        return Status()


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
        self._write()

    def _write(self) -> None:
        # written aside then renamed: a reader sees the old status or the new one, never half of one
        tmp = self._path.with_name(f"{self._path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps({"pid": os.getpid(), "done": self.done, "progress": self.progress,
                                       "seconds": self.seconds}))
            os.replace(tmp, self._path)
        finally:
            tmp.unlink(missing_ok=True)

    def tick(self) -> None:
        """Some work was done: waiters keep waiting."""
        self.progress += 1
        self._write()

    def finished(self, stage: str) -> None:
        """A stage is done: waiters for it go on."""
        self.done.append(stage)
        self.seconds[stage] = round(time.perf_counter() - self._start, 1)
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


def wait_for(stage: str, needed: Sequence[str], progress: bool = True) -> None:
    """Block until a live holder has finished ``stage``; ``needed``: the stages it finishes up to it, ``stage`` last.

    Returns at once when no one holds the lock (or in the holder); returns with a message when the holder's
    progress stops for ``STALL_S`` seconds: the caller then computes the stage itself.
    """
    if not warmer_running():
        return
    status = _latest = read_status()
    if status.pid == os.getpid() or stage in status.done or _given_up.get(status.pid or 0) == status.progress:
        return
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(needed), desc=f"waiting for the background warmer: {stage}", unit="stage",
                   bar_format="{desc}: {n}/{total} stages {bar} {elapsed}")
    finished, moved = False, time.monotonic()
    try:
        while warmer_running():
            status = read_status()
            if bar is not None:
                bar.n = sum(s in status.done for s in needed)
                bar.refresh()
            if stage in status.done:
                finished = True
                break
            if (status.pid, status.progress) != (_latest.pid, _latest.progress):
                _latest, moved = status, time.monotonic()
            elif time.monotonic() - moved > STALL_S:
                _given_up[status.pid or 0] = status.progress
                print(f"The background warmer (pid {status.pid}) has made no progress for {STALL_S:.0f} s: it may be "
                      f"stopped (`kill -CONT {status.pid}` resumes it, `kill {status.pid}` ends it). Not waiting "
                      f"for it any longer: this notebook computes {stage} itself.")
                break
            time.sleep(POLL_S)
    finally:
        if bar is not None:
            if not finished:  # the warmer stopped (or the wait was interrupted): the notebook computes it itself
                bar.leave = False
            bar.close()


def start_background(log: Path, niceness: int = 19, patience_s: float = 30.0,
                     command: Sequence[str] = WARM_COMMAND) -> str:
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
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)  # Ctrl+C on JupyterLab does not kill it mid-write
    deadline = time.monotonic() + patience_s
    while time.monotonic() < deadline:
        if read_status().pid == proc.pid and warmer_running():  # it writes its pid once it holds the lock
            return f"warming the embedding cache in the background (pid {proc.pid}, log: {log})"
        if proc.poll() is not None:
            last = (log.read_text(errors="replace").strip().splitlines() or ["no output"])[-1]
            return f"the warmer ended at once: {last}"
        time.sleep(0.02)
    return f"the warmer (pid {proc.pid}) has not started within {patience_s:.0f} s; it goes on in the background " \
           f"(log: {log})"
