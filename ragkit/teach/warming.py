"""Warm start: one background process embeds the course while the student reads, notebooks wait for it.

The warmer holds an exclusive ``flock`` on ``warming.lock`` in the cache folder (the kernel
releases it when the process ends, however it ends, so an interrupted warmer never leaves a
stale lock) and records the stages it has finished in ``warming.json`` beside it. A notebook
about to embed a stage that a live warmer has not finished waits for it with a progress
bar, then reads the vectors from the cache instead of computing them a second time. Only
the public surface is used (``ragkit.teach.course``), never the cache's storage format.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ragkit.plumbing.locations import cache_dir

STAGES = ("E", "queries", "A", "B", "C", "D", "F", "evaluation")
"""What the warmer embeds, in order: strategy E and the queries first (06's slider needs just those)."""
LOCK_NAME, STATUS_NAME = "warming.lock", "warming.json"
POLL_S = 0.25


def _paths() -> tuple[Path, Path]:
    root = cache_dir()
    return root / LOCK_NAME, root / STATUS_NAME


def _status() -> dict:
    try:
        return json.loads(_paths()[1].read_text())
    except (OSError, ValueError):
        return {}


def _write_status(status: dict) -> None:
    # a plain write: a reader that catches it half-written sees {} and polls again a moment later
    _paths()[1].write_text(json.dumps(status))


def warmer_running() -> bool:
    """True while another process holds the warmer's lock."""
    lock = _paths()[0]
    if not lock.exists():
        return False
    try:
        with open(lock, "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fh, fcntl.LOCK_UN)
        return False
    except BlockingIOError:
        return True
    except OSError:
        return False


@contextlib.contextmanager
def _exclusive(patience_s: float = 2.0):
    """Yield True with the warmer's lock held, False when another warmer keeps it (waiters only peek)."""
    lock = _paths()[0]
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as fh:
        deadline = time.monotonic() + patience_s
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    yield False
                    return
                time.sleep(0.05)
        try:
            yield True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def wait_for(stage: str, progress: bool = True) -> None:
    """Block until a live warmer has finished ``stage``; return at once when no warmer runs (or in the warmer)."""
    if stage not in STAGES or not warmer_running():
        return
    status = _status()
    if status.get("pid") == os.getpid() or stage in status.get("done", []):
        return
    needed = STAGES[:STAGES.index(stage) + 1]  # the warmer embeds in order: these stages come first
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(needed), desc=f"waiting for the background warmer to embed {stage}", unit="stage",
                   bar_format="{desc}: {n}/{total} stages {bar} {elapsed}")
    finished = False
    try:
        while warmer_running():
            done = _status().get("done", [])
            if bar is not None:
                bar.n = sum(s in done for s in needed)
                bar.refresh()
            if stage in done:
                finished = True
                break
            time.sleep(POLL_S)
    finally:
        if bar is not None:
            if not finished:  # the warmer stopped (or the wait was interrupted): the notebook embeds it itself
                bar.leave = False
            bar.close()


def warm(progress: bool = False) -> str:
    """Embed every stage into the cache under the warmer's lock; a line saying what happened."""
    t = time.perf_counter()
    try:
        return _warm_stages(t, progress)
    except OSError as exc:
        return (f"cache folder {cache_dir()} is not writable ({exc.strerror or exc}): nothing warmed; "
                "set RAGKIT_CACHE to a writable folder to keep vectors between sessions")


def _warm_stages(t: float, progress: bool) -> str:
    with _exclusive() as held:
        if not held:
            return f"another warmer is running (pid {_status().get('pid', '?')}): this one leaves it to finish"
        done: list[str] = []
        seconds: dict[str, float] = {}
        status = {"pid": os.getpid(), "done": done, "seconds": seconds}
        _write_status(status)
        # locked before the heavy imports: a notebook opened in the meantime already sees a warmer to wait for
        import ragkit.teach.course

        course = ragkit.teach.course.load(progress=progress)
        for stage in STAGES:
            if stage == "queries":
                course.sweep("E")
            elif stage == "evaluation":
                ev = course.evaluation()
            else:
                course.retriever(stage)
            done.append(stage)
            seconds[stage] = round(time.perf_counter() - t, 1)
            _write_status(status)
    return (f"cache warm: {sum(ev.chunks.values()):,} chunks of {len(ev.chunks)} strategies and "
            f"{len(course.queries) + len(course.out_of_domain)} queries embedded in {time.perf_counter() - t:.0f} s")


def start_background(log: Path, niceness: int = 19, patience_s: float = 30.0) -> str:
    """Start a detached warmer at low priority and return once it holds its lock (or has already finished).

    Returning only then is what makes the hand-over safe: a notebook opened a moment later finds
    a warmer to wait for instead of embedding the same chunks itself, at twice the cost.
    """
    log = Path(log)
    log.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "ragkit", "warm", "--quiet"]
    if niceness and shutil.which("nice"):
        command = ["nice", "-n", str(niceness), *command]
    with open(log, "w") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)  # Ctrl+C on JupyterLab does not kill it mid-write
    deadline = time.monotonic() + patience_s
    while time.monotonic() < deadline:
        if _status().get("pid") == proc.pid and warmer_running():  # it writes its pid once it holds the lock
            return f"warming the embedding cache in the background (pid {proc.pid}, log: {log})"
        if proc.poll() is not None:
            last = (log.read_text(errors="replace").strip().splitlines() or ["no output"])[-1]
            return f"the warmer ended at once: {last}"
        time.sleep(0.02)
    return f"the warmer (pid {proc.pid}) has not started within {patience_s:.0f} s; it goes on in the background " \
           f"(log: {log})"
