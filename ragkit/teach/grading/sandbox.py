"""The grader's sandbox: one submitted notebook executed afresh, in a child process that can harm nothing.

Per notebook, a child process (``python -m ragkit.teach.grading.confinement``, its side) runs the notebook
with nbclient and hands back only the values of the names the exercise declares, as JSON on a file
descriptor the grader gave it. The containment is a whitelist, not a list of things to hide:

- a root of its own, assembled from read-only binds of the system's program folders, the Python the
  grader runs on, ragkit, its course data and a snapshot of the teacher's cache, and tmpfs of bounded
  size for HOME, ``/tmp`` and ``/dev/shm``; every mount ``nosuid`` (and ``nodev``, but five devices),
  the root read-only; nothing else of the machine has a path inside (``confinement.build_root``);
- new network, mount, PID and IPC namespaces (``unshare``): no network, no host socket, no other
  process; an audit hook in the kernel names the missing network in the grade;
- as root, a uid of its own per run, drawn at random from a billion unused ones and claimed
  machine-wide, with no groups and no new privileges; every process of that uid is killed after the
  run and every file it left where the host is writable is removed and reported;
- limits for the whole run: time (kernel start included), memory and processes in a cgroup where the
  machine has one (``cgroup``), file size, answer size;
- the run's spec and notebook reach the child on an inherited descriptor of a root-owned file, never
  through a folder the run's uid can write; its report comes back the same way, read as hostile input;
- the vectors of new texts (ex4's chunks with the student's header) lent by the grader, which
  computes them once for the kernel and its own check (``ragkit.plumbing.service``: the kernel sends
  texts, never vectors), through one socket bound into that run alone.

A teacher without root gets the same root and namespaces inside a user namespace (every capability
dropped before the notebook runs), as their own uid, without a cgroup; where ``unshare`` fails, the run
has only the time limit, the audit hook and per-process limits. ``isolation`` says which, in words,
before anything runs.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import pwd
import secrets
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from math import isfinite
from pathlib import Path
from typing import TYPE_CHECKING

from ragkit.errors import InputError
from ragkit.plumbing import locations
from ragkit.plumbing.service import MAX_TEXTS, SERVICE_ENV, Lender
from ragkit.teach.grading import cgroup
from ragkit.teach.grading.confinement import HOME, INSIDE, found_answers, start_kernel
from ragkit.teach.untrusted import _NOFOLLOW

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "Isolation",
    "Lending",
    "Limits",
    "Sandbox",
    "SandboxRun",
    "found_answers",
    "isolation",
    "leftovers",
    "snapshot_cache",
    "start_kernel",
]

SANDBOX_UIDS = 2_900_000_000
"""The lowest uid a submission runs as when the grader is root (no account uses uids this high)."""
UID_SPAN = 2**30
"""How many uids from ``SANDBOX_UIDS`` a run's uid is drawn from, at random: no student can count on one."""
CLAIMS = Path("/run/ragkit-sandbox-uids")
"""Where a grader running as root claims its uids (a locked file each), so that two graders never share one."""
TIMEOUT = 600.0
"""Seconds a notebook may take, kernel start included (ex4 embeds the corpus once: 1 to 4 minutes on 2 busy cores)."""
MAX_OUTPUT = 2 * 2**20
MAX_FILE = 256 * 2**20
MAX_MEMORY = 8 * 2**30
MAX_PROCESSES = 512  # threads count too: torch, zmq and the kernel start a few dozen
HOME_SIZE = 512 * 2**20
TMP_SIZE = 512 * 2**20
SHM_SIZE = 64 * 2**20
SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
"""The system's program folders, bound read-only (or, where they are links into /usr, linked the same way)."""
WRITABLE = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path("/run/lock"), Path("/dev/mqueue"))
"""Where any uid may write on a host: swept after every run for what the run's uid left (a failed containment)."""
# The folder holding the ragkit package, from this module's own path: ``ragkit.__file__`` is None when the grader
# runs beside a folder named ragkit (a clone in ~/ragkit) under an editable install, which imports that folder
# as a namespace package first
CHECKOUT = locations.SOURCE_ROOT


@dataclass(frozen=True)
class Limits:
    """What one run may use: seconds, memory (the whole run in a cgroup), file and tmpfs sizes, processes."""

    timeout: float = TIMEOUT
    memory: int = MAX_MEMORY
    file_size: int = MAX_FILE
    processes: int = MAX_PROCESSES
    output: int = MAX_OUTPUT
    threads: int = 1
    home: int = HOME_SIZE
    tmp: int = TMP_SIZE
    shm: int = SHM_SIZE

    def __post_init__(self) -> None:
        if (
            isinstance(self.timeout, bool)
            or not isinstance(self.timeout, (int, float))
            or not isfinite(self.timeout)
            or self.timeout <= 0
        ):
            raise InputError(
                f"--timeout {self.timeout}: give a number of seconds above 0 (a finite number, such as {TIMEOUT:g})"
            )
        for name in ("memory", "file_size", "processes", "output", "threads", "home", "tmp", "shm"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise InputError(f"a sandbox limit `{name}` of {value!r}: give a whole number above 0")


@dataclass(frozen=True)
class Lending:
    """What the grader lends each run: its model's cache namespace, the call that embeds, and the turns it takes."""

    namespace: str
    encode: Callable[[list[str]], np.ndarray]
    lock: threading.Lock | threading.Semaphore
    """Held while ``encode`` runs: a lock for one encoder, a semaphore for as many as it counts."""
    wait: float = 0.0
    """Seconds a run's request waits for a turn (other runs hold them all) before its kernel computes."""
    texts: int = MAX_TEXTS
    """Texts one run may have embedded by the grader (the grader sizes it from ex4's header chunks)."""


TIMED_OUT = "still running after the time limit of {seconds:g} s (a loop, a wait, or too slow): stopped"
MEMORY_BOUND = "{reason} (the run reached its memory bound of {gib:.3g} GiB, all its processes together)"
NO_REPORT = "the sandbox ended without a report (killed: memory, a signal, os._exit)"
NO_REPORT_SAYING = "the sandbox ended without a report (killed: memory, a signal, os._exit): {last}"
TOO_LARGE = "the notebook's answers exceed {limit:,} bytes"
"""Why a run did not finish (English, written in the run's thread): the grader says it again in the notebook's
language (``grader.run_reason``)."""


@dataclass(frozen=True)
class SandboxRun:
    """What came back from one notebook: ran or not (and why not), the raw answer text, and what the run used."""

    ran: bool
    reason: str = ""
    answers: str = ""
    seconds: float = 0.0
    memory: int | None = None
    """The most memory the run held at once, in bytes, where a cgroup measured it."""


@dataclass(frozen=True)
class Isolation:
    """What this machine lets the grader do: a root of its own, a uid per run, run-wide limits; in words."""

    namespaces: bool
    change_user: bool
    notes: tuple[str, ...] = field(default=())
    run_limits: str = ""
    """The cgroup that bounds whole runs (``cgroup v2``, ``cgroup v1``), or empty where only processes are bounded."""

    def __str__(self) -> str:
        held = ["a time limit", "a throwaway HOME, results file and cache"]
        if self.namespaces:
            held[:0] = [
                "no network",
                "a read-only root of its own (the system, Python, ragkit, the course: no one "
                "else's files, no host socket)",
                "HOME and /tmp on bounded tmpfs",
            ]
        if self.change_user:
            held.append("a uid of its own")
        held.append(
            f"memory and processes bounded for the whole run ({self.run_limits})"
            if self.run_limits
            else "memory bounded per process only"
        )
        return "each notebook runs with " + ", ".join(held) + "".join(f"\n{n}" for n in self.notes)


def _unshare(root: bool) -> list[str]:
    """The namespaces of a run; a teacher without root gets them in a user namespace, as their own uid, with the
    capabilities the child needs to build its root (it drops them all before the notebook runs)."""
    flags = ["--net", "--mount", "--pid", "--fork", "--kill-child", "--ipc", "--mount-proc"]
    return ["unshare", *([] if root else ["--user", "--map-current-user", "--keep-caps"]), *flags]


def _system() -> tuple[list[tuple[Path, Path]], list[Path]]:
    """The system's program folders: (folder, folder) pairs to bind read-only, and the top-level links to copy."""
    binds, links = [], []
    for name in SYSTEM:
        path = Path("/") / name
        if path.is_symlink():
            links.append(path)
        elif path.is_dir():
            binds.append((path, path))
    return binds, links


def _course_files() -> list[Path]:
    """What ragkit needs of its checkout: the package, the course data and pyproject.toml (how it knows a checkout)."""
    return [p for p in (CHECKOUT / "ragkit", CHECKOUT / "data", CHECKOUT / "pyproject.toml") if p.exists()]


def whitelist(seed: Path | None = None) -> list[tuple[Path, Path]]:
    """Every (host path, path inside) a run sees, all read-only: the system, Python, ragkit, the course, the seed."""
    system, _ = _system()
    mine = _outermost([Path(os.path.realpath(p)) for p in [*_python_folders(), *_course_files()]])
    pairs = [*system, *((p, p) for p in mine if not any(_inside(p, [s]) for s, _ in system))]
    if seed is not None:
        pairs.append((Path(os.path.realpath(seed)), INSIDE / "seed"))
    return pairs


def _probe_spec(change_user: bool, namespaces: bool) -> dict:
    """A spec that builds the run's root and drops privileges, then reports: what ``isolation`` tries first."""
    _, links = _system()
    uid = SANDBOX_UIDS if change_user else None
    limits = Limits()
    return {
        "uid": uid,
        "gid": uid if change_user else os.getgid(),
        "namespaces": namespaces,
        "cgroup": [],
        "readonly": [[str(a), str(b)] for a, b in whitelist()],
        "links": [str(p) for p in links],
        "masked": [],
        "socket": None,
        "notebook": "",
        "probe": True,
        "env": {"HOME": str(HOME)},
        "limits": {
            "memory": limits.memory,
            "file_size": limits.file_size,
            "processes": limits.processes,
            "home": "1m",
            "tmp": "1m",
            "shm": "1m",
        },
    }


def _child(spec: dict, root: bool, namespaces: bool, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run the confinement child once with ``spec`` on stdin (the probe)."""
    command = [sys.executable, "-m", "ragkit.teach.grading.confinement"]
    with tempfile.TemporaryFile() as spec_file:
        spec_file.write(json.dumps(spec).encode())
        spec_file.seek(0)
        return subprocess.run(
            [*(_unshare(root) if namespaces else []), *command],
            stdin=spec_file,
            capture_output=True,
            timeout=timeout,
            cwd="/",
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(map(str, _python_path())), "LANG": "C.UTF-8"},
        )


def isolation() -> Isolation:
    """Probe what this machine allows (a root built in namespaces, root, a cgroup), and say in words what is missing."""
    root = os.geteuid() == 0
    notes = []
    try:
        # the probe builds the run's root and drops privileges exactly as a run will, then reports
        probe = _child(_probe_spec(root, True), root, True)
        report = probe.stdout.decode("utf-8", "replace")
        namespaces = probe.returncode == 0 and '"ran": true' in report
        why = (report + probe.stderr.decode("utf-8", "replace")).strip().splitlines()
    except (OSError, subprocess.TimeoutExpired) as exc:
        namespaces, why = False, [str(exc)]
    if not namespaces:
        notes.append(
            f"the sandbox's own root could not be built here ({why[-1][-300:] if why else 'no reason given'}):"
            " submissions run WITHOUT network isolation and see the machine's files as their user would "
            "(an audit hook still refuses Internet sockets; the time limit, per-process limits and the "
            "throwaway HOME still hold); grade on a machine where `unshare --net --mount --pid` works "
            "(root, or unprivileged user namespaces enabled)"
        )
    if not root:
        notes.append(
            f"not root: every submission runs as you ({pwd.getpwuid(os.getuid()).pw_name}), not as a user "
            "of its own"
            + (", in its own root with no capability" if namespaces else "")
            + "; run the grader as root to give each submission an unprivileged uid"
        )
    found, why_not = cgroup.hierarchy()
    if found is None:
        notes.append(
            f"memory is bounded per process only, not for the whole run ({why_not}): a run's processes "
            "together may hold more than the bound"
        )
    return Isolation(namespaces, root, tuple(notes), str(found) if found is not None else "")


class _Uid:
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
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | _NOFOLLOW, 0o600)
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


def _remove(paths: list[Path]) -> None:
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def snapshot_cache(cache: Path, into: Path) -> Path | None:
    """A read-only copy of the teacher's vectors and ONNX export, shaped like a shared cache; None with no cache.

    The copy is taken with SQLite's backup (consistent while a warmer writes) and switched to a
    rollback journal, as a shared cache must be; the ONNX export is copied, so that a notebook
    needs neither the teacher's folder nor a fresh export.
    """
    source = cache / "vectors.sqlite"
    if not source.is_file():
        return None
    into.mkdir(mode=0o755)
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    dst = sqlite3.connect(into / "vectors.sqlite")
    try:
        src.backup(dst)
        dst.execute("PRAGMA journal_mode=DELETE").fetchone()
    finally:
        src.close()
        dst.close()
    if (cache / "onnx").is_dir():
        shutil.copytree(cache / "onnx", into / "onnx", symlinks=False)
    for p in [into, *into.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o444)
    into.chmod(0o555)
    return into


def _inside(path: Path, folders: list[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)


def _outermost(paths: list[Path]) -> list[Path]:
    """The paths that lie inside no other path of the list, sorted."""
    kept = sorted(set(paths), key=lambda p: len(p.parts))
    return sorted(p for i, p in enumerate(kept) if not _inside(p, kept[:i]))


def _python_folders() -> list[Path]:
    """What a kernel needs of Python: the interpreter's prefixes, its site-packages and the grader's own path."""
    import site

    found = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), *map(Path, site.getsitepackages())]
    return _outermost([Path(os.path.realpath(p)) for p in found if Path(p).is_dir()] + _python_path()[1:])


def _python_path() -> list[Path]:
    """A kernel's PYTHONPATH: the checkout, then the site-packages the grader finds beyond its interpreter's own
    (on its PYTHONPATH, a ``pip install --user``), which a kernel with another HOME and environment would miss.
    Only folders named site-packages or dist-packages: a PYTHONPATH of the teacher's HOME is not a whitelist."""
    own = [Path(os.path.realpath(p)) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)]
    found = [Path(os.path.realpath(p)) for p in sys.path[1:] if p and os.path.isdir(p)]
    extra = [p for p in found if p.name in ("site-packages", "dist-packages") and not _inside(p, own)]
    return [CHECKOUT, *dict.fromkeys(extra)]


class Sandbox:
    """Runs submitted notebooks one by one (or a few at a time), each in a child process of its own."""

    def __init__(
        self,
        hidden: list[Path],
        limits: Limits | None = None,
        cache: Path | None = None,
        shared: Path | None = None,
        probe: Isolation | None = None,
        lend: Lending | None = None,
    ):
        self.limits = limits or Limits()
        self.lend = lend
        self.isolation = probe or isolation()
        self.root = Path(tempfile.mkdtemp(prefix="ragkit-grade-"))  # 0700: no run's uid can enter it
        (self.root / "out").mkdir(mode=0o700)
        if not self.isolation.namespaces:  # no root of its own: each run's HOME is a host folder in here
            self.root.chmod(0o711)
            (self.root / "homes").mkdir(mode=0o711)
        self.seed = (
            shared if shared is not None else (snapshot_cache(cache, self.root / "seed") if cache is not None else None)
        )
        self.readonly = whitelist(self.seed)
        _, self.links = _system()
        # a folder of submissions, the grader's own or the teacher's HOME may lie inside a whitelisted folder (a class
        # handed in under the checkout): an empty, closed tmpfs covers it there
        home = Path(os.path.realpath(Path.home())) if Path.home().is_dir() else None
        private = [
            Path(os.path.realpath(p)) for p in [self.root, *([home] if home else []), *hidden] if Path(p).exists()
        ]
        self.masked = _outermost(
            [p for p in private for src, dst in self.readonly if src == dst and _inside(p, [src]) and p != src]
        )
        self.hierarchy = cgroup.hierarchy()[0] if self.isolation.change_user else None
        self._count = 0
        self._lock = threading.Lock()  # grading runs a few notebooks at once, each with a uid and a cgroup of its own

    def close(self) -> None:
        """Remove the grader's temporary folder (the snapshot, made writable again to be removed)."""
        for p in [self.root, *self.root.rglob("*")]:
            if p.is_dir() and not p.is_symlink() and p.stat().st_uid == os.getuid():
                p.chmod(0o700)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _spec(
        self,
        n: int,
        uid: int | None,
        gid: int,
        env: dict,
        socket: Path | None,
        run: list[str],
        notebook: bytes,
        names: tuple[str, ...],
        functions: tuple[str, ...],
        pairs: list[tuple[str, str]] | None,
    ) -> dict:
        limits = self.limits
        return {
            "uid": uid,
            "gid": gid,
            "env": env,
            "namespaces": self.isolation.namespaces,
            "cgroup": run,
            "readonly": [[str(a), str(b)] for a, b in self.readonly],
            "links": [str(p) for p in self.links],
            "masked": [str(p) for p in self.masked],
            "socket": str(socket) if socket else None,
            "notebook": base64.b64encode(notebook).decode("ascii"),
            "limits": {
                "memory": limits.memory,
                "file_size": limits.file_size,
                "processes": limits.processes,
                "home": str(limits.home),
                "tmp": str(limits.tmp),
                "shm": str(limits.shm),
            },
            "names": list(names),
            "functions": list(functions),
            "pairs": pairs or [],
        }

    def run(
        self,
        notebook: bytes,
        student: str,
        names: tuple[str, ...],
        functions: tuple[str, ...] = (),
        pairs: list[tuple[str, str]] | None = None,
        lend: bool = True,
    ) -> SandboxRun:
        """Execute one notebook afresh as ``student`` and return the answers it holds at the end, or why not.

        ``lend``: whether this run may ask the grader for vectors (only an exercise that embeds new texts needs to).
        """
        with self._lock:
            self._count += 1
            n = self._count
        change = self.isolation.change_user
        claim = _Uid() if change else None
        uid = claim.uid if claim is not None else os.getuid()
        gid = uid if change else os.getgid()
        out, err, spec_path = (self.root / "out" / f"{n}.{kind}" for kind in ("json", "err", "spec"))
        socket = self.root / "out" / f"{n}.sock" if self.lend is not None and lend else None
        seed: Path | None
        if self.isolation.namespaces:
            home, seed, service = HOME, INSIDE / "seed" if self.seed is not None else None, INSIDE / "embed.sock"
        else:  # no root of its own: a host folder, the host's paths (what ``isolation`` warned of)
            home, seed, service = self.root / "homes" / str(n), self.seed, None
            home.mkdir(mode=0o700)
            if socket is not None:
                socket = service = home / "embed.sock"
        env = {
            "HOME": str(home),
            "PATH": os.path.dirname(sys.executable) + ":/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "TMPDIR": str(home / "tmp"),
            "RAGKIT_RESULTS": str(home / "results.jsonl"),
            "RAGKIT_CACHE": str(home / "cache"),
            "RAGKIT_STUDENT": student,
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "IPYTHONDIR": str(home / ".ipython"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
            "JUPYTER_DATA_DIR": str(home / "data"),
            "MPLCONFIGDIR": str(home / "mpl"),
            "PYTHONPATH": os.pathsep.join(map(str, _python_path())),
            **{v: str(self.limits.threads) for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")},
        }
        if seed is not None:
            env["RAGKIT_SHARED_CACHE"] = str(seed)
        if socket is not None:
            env[SERVICE_ENV] = str(service)
        command = [sys.executable, "-m", "ragkit.teach.grading.confinement"]
        if self.isolation.namespaces:
            command = [*_unshare(change), *command]
        start = time.monotonic()
        lender, group = None, None
        try:
            if self.hierarchy is not None:
                group = self.hierarchy.create(f"ragkit-sandbox-{uid}", self.limits.memory, self.limits.processes)
            fd = os.open(spec_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | _NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(
                    json.dumps(
                        self._spec(
                            n,
                            uid if change else None,
                            gid,
                            env,
                            socket,
                            group.procs if group is not None else [],
                            notebook,
                            names,
                            functions,
                            pairs,
                        )
                    ).encode("utf-8")
                )
            if socket is not None and self.lend is not None:
                lender = Lender(
                    socket,
                    self.lend.namespace,
                    self.lend.encode,
                    self.lend.lock,
                    (uid, gid),
                    self.lend.wait,
                    texts=self.lend.texts,
                )
            result = self._start(command, env, spec_path, out, err, uid, start, group)
        except OSError as exc:
            result = SandboxRun(False, f"the sandbox could not start ({exc.strerror or exc}: {command[0][-120:]})")
        finally:
            if lender is not None:
                lender.close()
            if group is not None:
                group.kill()
                group.remove()
            left = leftovers(uid) if claim is not None else []
            _remove(left)
            if claim is not None:
                claim.release()
            if not self.isolation.namespaces:
                shutil.rmtree(home, ignore_errors=True)
            for path in (out, err, spec_path):
                path.unlink(missing_ok=True)
        if left:
            where = ", ".join(sorted({str(p.parent) for p in left}))
            return SandboxRun(
                False,
                f"the run left {len(left)} files where the machine is writable ({where}): removed;"
                " the sandbox failed to contain it, so it is not graded (please report this)",
                seconds=result.seconds,
                memory=result.memory,
            )
        return result

    def _start(
        self,
        command: list[str],
        env: dict,
        spec: Path,
        out: Path,
        err: Path,
        uid: int,
        start: float,
        group: cgroup.RunGroup | None,
    ) -> SandboxRun:
        """Start the child, wait for it within the time limit, kill what is left, read its report."""
        with spec.open("rb") as given, out.open("wb") as sink, err.open("wb") as errors:
            child = subprocess.Popen(
                command,
                stdin=given,
                stdout=sink,
                stderr=errors,
                env={**env, "HOME": "/"},
                cwd="/",
                start_new_session=True,
            )
            try:
                child.wait(timeout=self.limits.timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                _kill(child, uid if self.isolation.change_user else None)
        seconds = time.monotonic() - start
        memory = group.peak() if group is not None else None
        if timed_out:
            return SandboxRun(False, TIMED_OUT.format(seconds=self.limits.timeout), seconds=seconds, memory=memory)
        result = _read_result(out, err, self.limits.output, seconds)
        if not result.ran and group is not None and group.out_of_memory():
            reason = MEMORY_BOUND.format(reason=result.reason, gib=self.limits.memory / 2**30)
            return SandboxRun(False, reason, seconds=seconds, memory=memory)
        return SandboxRun(result.ran, result.reason, result.answers, seconds, memory)


def _kill(child: subprocess.Popen, uid: int | None) -> None:
    """Stop a run: its process group, and (when it ran as a uid of its own) every process left with that uid."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    child.wait()
    if uid is None:
        return
    for _ in range(3):  # a fork bomb may fork while we kill: sweep a few times
        alive = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if entry.stat().st_uid == uid:
                        alive.append(int(entry.name))
                except OSError:
                    continue
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if not alive:
            return
        time.sleep(0.1)


def _read_result(out: Path, err: Path, limit: int, seconds: float) -> SandboxRun:
    """The child's report, read as hostile: at most ``limit`` bytes of one JSON object; else its last error line."""
    with out.open("rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        return SandboxRun(False, TOO_LARGE.format(limit=limit), seconds=seconds)
    try:
        report = json.loads(data.decode("utf-8"))
        ran, reason, answers = report["ran"], report.get("reason", ""), report.get("answers", "")
        if not isinstance(ran, bool) or not isinstance(reason, str) or not isinstance(answers, str):
            raise TypeError
    except (ValueError, KeyError, TypeError, RecursionError, AttributeError):
        with err.open("rb") as f:
            f.seek(max(0, err.stat().st_size - 4096))
            last = next(reversed(f.read().decode("utf-8", "replace").strip().splitlines() or [""]))
        return SandboxRun(False, NO_REPORT_SAYING.format(last=last[:300]) if last else NO_REPORT, seconds=seconds)
    return SandboxRun(ran, reason[:500], answers, seconds)
