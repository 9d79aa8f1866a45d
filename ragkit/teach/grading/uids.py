"""A uid of its own for each run: drawn at random, claimed machine-wide, and everything it left killed and swept.

When the grader runs as root, each notebook runs as a uid no account uses, drawn afresh for the run (no student can
count on one) and claimed by a lock, so that two graders at once never share one. After the run, every process of
that uid is killed and every file it left where the host is writable is removed (and reported: a failed containment).
"""

from __future__ import annotations

import fcntl
import os
import pwd
import secrets
import shutil
import signal
import stat
import time
from pathlib import Path

from ragkit.plumbing.bounded import O_NOFOLLOW

__all__ = ["CLAIMS", "SANDBOX_UIDS", "UID_SPAN", "WRITABLE", "UidClaim", "kill_uid", "leftovers", "remove", "running"]

SANDBOX_UIDS = 0x70000000
"""The lowest uid a submission runs as when the grader is root: 1,879,048,192, above the container ranges systemd
hands out (up to 0x6FFFFFFF) and below 2**31, the largest uid bwrap maps (it writes uids as C ints)."""
UID_SPAN = 2**27
"""How many uids from ``SANDBOX_UIDS`` a run's uid is drawn from, at random: no student can count on one."""
CLAIMS = Path("/run/ragkit-sandbox-uids")
"""Where a grader running as root claims its uids (a locked file each), so that two graders never share one."""
WRITABLE = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path("/run/lock"), Path("/dev/mqueue"))
"""Where any uid may write on a host: swept after every run for what the run's uid left (a failed containment)."""


class UidClaim:
    """A uid drawn at random for one run and claimed machine-wide by a lock on a file in ``CLAIMS``.

    Two graders at once (two teachers, a test beside a real run) never share one: one run's end would
    kill the other's processes. The lock goes with its descriptor, so a grader that dies leaves no claim;
    ``release`` removes the file while still holding the lock.
    """

    def __init__(self) -> None:
        CLAIMS.mkdir(mode=0o700, exist_ok=True)
        for _ in range(1000):
            uid = SANDBOX_UIDS + secrets.randbelow(UID_SPAN)
            try:
                pwd.getpwuid(uid)
                continue  # an account has it
            except KeyError:
                pass
            path = CLAIMS / str(uid)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if os.fstat(fd).st_ino != os.stat(path, follow_symlinks=False).st_ino:
                    raise OSError("claimed and released by another grader meanwhile")
            except OSError:
                os.close(fd)
                continue
            self.uid, self._fd, self._path = uid, fd, path
            return
        raise OSError("no free sandbox uid found in 1000 draws")

    def release(self) -> None:
        """Give the uid back: its claim file removed under the lock, then the lock."""
        self._path.unlink(missing_ok=True)
        os.close(self._fd)


def leftovers(uid: int, places: tuple[Path, ...] = WRITABLE) -> list[Path]:
    """Every file or folder ``uid`` owns in the host's writable places (and in world-writable folders below them)."""
    found: list[Path] = []

    def look(folder: Path, depth: int) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_uid == uid:
                found.append(Path(entry.path))
            elif stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_IWOTH and depth < 3:
                look(Path(entry.path), depth + 1)

    for place in places:
        if place.is_dir() and not place.is_symlink():
            look(place, 0)
    return found


def remove(paths: list[Path]) -> None:
    """Remove what a run left behind: files and links unlinked, folders with what they hold."""
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def running(uid: int) -> list[int]:
    """The pids of ``uid``'s processes that can still run: one whose every thread has exited (a zombie, not yet
    reaped) is not one; one whose main thread exited while another runs is, and so is one whose threads cannot be
    read (a thread that ended while it was looked at hides no other)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid != uid:
                    continue
                tasks = list((entry / "task").iterdir())
            except OSError:  # gone, or never ours
                continue
            if any(_state(task) not in ("Z", "X") for task in tasks):
                alive.append(int(entry.name))
    return alive


def _state(task: Path) -> str:
    """A thread's state letter (``/proc/<pid>/task/<tid>/stat``, after the command's closing parenthesis); "X" for a
    thread that is gone (it can run nothing)."""
    try:
        line = (task / "stat").read_text()
    except OSError:
        return "X"
    return line[line.rfind(")") + 2 : line.rfind(")") + 3]


def kill_uid(uid: int) -> None:
    """Kill every process of ``uid``, sweeping a few times (a fork bomb may fork while it is killed).

    A killed sandbox leaves its bubblewrap child as a zombie that the machine's init reaps when it will: it has
    exited, so it is not swept for again (each sweep that found one waited 0.1 s, 0.3 s of every run).
    """
    for _ in range(3):
        alive = running(uid)
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if not alive:
            return
        time.sleep(0.1)
