"""The grader's sandbox: one submitted notebook executed afresh, in a child process that can harm nothing.

Per notebook, a child process (``python -m ragkit.teach.grading.sandbox HOME``) runs the notebook with
nbclient and hands back only the values of the names the exercise declares, as JSON on a file
descriptor the grader gave it. Around it:

- a time limit (the whole run, kernel start included), after which every process of the run is killed;
- no network: the child runs in new network, mount, PID and IPC namespaces (``unshare``), and an
  audit hook in the kernel refuses every Internet socket with a reason the grade shows;
- a throwaway HOME, results file and private vector cache; the teacher's vectors offered read-only
  as a shared cache (a snapshot of the teacher's cache, made once per grading run), so nothing the
  course already embedded is embedded again; the vectors of new texts (ex4's chunks with the
  student's header) lent by the grader, which computes them once for the kernel and its own check
  (``ragkit.plumbing.service``: the kernel sends texts, never vectors);
- inside the mount namespace the grader's temporary folder, the teacher's HOME, ``/tmp``, ``/dev/shm``
  and every folder of submissions are hidden under empty tmpfs, and Python, ragkit and the snapshot
  are mounted back read-only: the notebook sees no one else's files and can change none of the
  teacher's;
- never as root: when the grader runs as root, each notebook runs as a uid of its own
  (``SANDBOX_UIDS`` upward, unused by any account, claimed machine-wide so that two graders never
  share one) with no groups and no new privileges; a teacher
  without root gets every limit but that one (``unshare --user``), and is told so.

The child's answer is read as hostile input: bounded in size, parsed as JSON, validated by the grader.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import pwd
import resource
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ragkit.plumbing import locations
from ragkit.plumbing.nbformat_import import import_nbformat_quickly
from ragkit.plumbing.service import SERVICE_ENV, Borrower, Lender, service_path
from ragkit.teach.untrusted import _NOFOLLOW

if TYPE_CHECKING:
    import numpy as np

SANDBOX_UIDS = 2_900_000_000
"""The first uid a submission runs as when the grader is root (no account uses uids this high)."""
CLAIMS = Path("/run/ragkit-sandbox-uids")
"""Where a grader running as root claims its uids (a locked file each), so that two graders never share one."""
TIMEOUT = 600.0
"""Seconds a notebook may take, kernel start included (ex4 embeds the corpus once: 1 to 4 minutes on 2 busy cores)."""
MAX_OUTPUT = 2 * 2**20
MAX_FILE = 256 * 2**20
MAX_MEMORY = 8 * 2**30
MAX_PROCESSES = 512  # threads count too: torch, zmq and the kernel start a few dozen
TMP_SIZE = "512m"
SENTINEL = "ragkit-sandbox-answers:"
# The folder holding the ragkit package, from this module's own path: ``ragkit.__file__`` is None when the grader
# runs beside a folder named ragkit (a clone in ~/ragkit) under an editable install, which imports that folder
# as a namespace package first
CHECKOUT = locations.SOURCE_ROOT
NO_NETWORK = "no network in the grader's sandbox"
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME = 1024, 2048, 1 << 21
_ST_TO_MS = {1: _MS_RDONLY, 2: _MS_NOSUID, 4: _MS_NODEV, 8: _MS_NOEXEC, 1024: _MS_NOATIME, 2048: _MS_NODIRATIME,
             4096: _MS_RELATIME}
_PR_SET_NO_NEW_PRIVS = 38

STARTUP = f'''
import socket as _socket, sys as _sys

def _ragkit_no_network(event, args):
    """Refuse every Internet socket: the grade then says why the notebook did not run."""
    if event in ("socket.connect", "socket.sendto", "socket.bind") and \\
            getattr(args[0], "family", None) in (_socket.AF_INET, _socket.AF_INET6):
        raise PermissionError("{NO_NETWORK}: {{}} {{!r}} refused".format(event, args[1]))
    if event == "socket.getaddrinfo":
        raise PermissionError("{NO_NETWORK}: looking up {{!r}} refused".format(args[0]))

_sys.addaudithook(_ragkit_no_network)
del _ragkit_no_network
from ragkit.teach.grading.sandbox import start_kernel as _start_kernel
_start_kernel()
del _start_kernel
'''
"""Every sandbox kernel's startup file: first the audit hook that refuses the network, then ``start_kernel``."""
EXTRACT = "from ragkit.teach.grading.sandbox import found_answers as _f\nprint({sentinel!r} + _f(globals(), {args}))"


def found_answers(namespace: dict, names: list[str], functions: list[str], pairs: list[tuple[str, str]]) -> str:
    """The declared names' values in a kernel, as JSON: plain values as they are, a function's strings per pair.

    It runs in the student's kernel, so everything it returns is the student's to choose: the
    grader validates it as any hostile input, and judges it with checks the kernel never touched.
    """
    def plain(value):
        if hasattr(value, "item"):  # a numpy number is a number
            return value.item()
        raise TypeError(f"a {type(value).__name__} is not a plain value (str, int, float, list or dict)")

    found: dict[str, dict] = {}
    for name in names:
        if name not in namespace:
            found[name] = {"absent": True}
            continue
        value = namespace[name]
        try:
            if name in functions and value is not None:
                found[name] = {"value": [[t, s, value(t, s)] for t, s in pairs]}
            else:
                found[name] = {"value": json.loads(json.dumps(value, default=plain, allow_nan=False))}
        except Exception as exc:  # an answer that cannot be read is reported, with why
            found[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    return json.dumps(found, default=str)


@dataclass(frozen=True)
class Limits:
    """What one notebook may use: seconds, bytes of memory and per file, processes, answer bytes."""

    timeout: float = TIMEOUT
    memory: int = MAX_MEMORY
    file_size: int = MAX_FILE
    processes: int = MAX_PROCESSES
    output: int = MAX_OUTPUT
    threads: int = 1


@dataclass(frozen=True)
class Lending:
    """What the grader lends each run: its model's cache namespace, the call that embeds, and the turns it takes."""

    namespace: str
    encode: Callable[[list[str]], np.ndarray]
    lock: threading.Lock | threading.Semaphore
    """Held while ``encode`` runs: a lock for one encoder, a semaphore for as many as it counts."""
    wait: float = 0.0
    """Seconds a run's request waits for a turn (other runs hold them all) before its kernel computes."""


@dataclass(frozen=True)
class SandboxRun:
    """What came back from one notebook: ran or not (and why not), and the raw answer text the kernel printed."""

    ran: bool
    reason: str = ""
    answers: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class Isolation:
    """What this machine lets the grader do: namespaces (no network, hidden files), a change of user; in words."""

    namespaces: bool
    change_user: bool
    notes: tuple[str, ...] = field(default=())

    def __str__(self) -> str:
        held = ["a time limit", "a throwaway HOME, results file and cache"]
        if self.namespaces:
            held[:0] = ["no network", "your files, /tmp and the other submissions hidden", "Python read-only"]
        if self.change_user:
            held.append("a uid of its own")
        return "each notebook runs with " + ", ".join(held) + "".join(f"\n{n}" for n in self.notes)


def _unshare(root: bool) -> list[str]:
    flags = ["--net", "--mount", "--pid", "--fork", "--kill-child", "--ipc", "--mount-proc"]
    return ["unshare", *([] if root else ["--user", "--map-root-user"]), *flags]


def isolation() -> Isolation:
    """Probe what this machine allows (unshare, root), and say in words what the submissions will run without."""
    root = os.geteuid() == 0
    notes = []
    try:
        # the probe runs this Python, as the sandbox will: an interpreter under a private folder may not start there
        probe = subprocess.run([*_unshare(root), sys.executable, "-c", "pass"], capture_output=True, timeout=60)
        namespaces, why = probe.returncode == 0, probe.stderr.decode("utf-8", "replace").strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        namespaces, why = False, str(exc)
    if not namespaces:
        notes.append(f"`unshare` failed here ({why or 'no reason given'}): submissions run WITHOUT network "
                     "isolation and see the machine's files as their user would (an audit hook still refuses "
                     "Internet sockets; the time limit and the throwaway HOME still hold); grade on a machine "
                     "where `unshare --net --mount` works (root, or unprivileged user namespaces enabled)")
    if not root:
        notes.append(f"not root: every submission runs as you ({pwd.getpwuid(os.getuid()).pw_name}), not as a user "
                     "of its own; " + ("your files are hidden and read-only for it, " if namespaces else "")
                     + "run the grader as root to give each submission an unprivileged uid")
    return Isolation(namespaces, root, tuple(notes))


def _free_uids(start: int):
    """Uids from ``start`` up that no account on this machine has."""
    uid = start
    while True:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            yield uid
        uid += 1


def _claimed_uids(start: int, held: list[int]):
    """Free uids that no other grader on this machine holds, each claimed by a lock on a file in ``CLAIMS``.

    Two graders at once (two teachers, a test beside a real run) would otherwise both start at
    ``start``: one run's end would kill the other's processes, and their limits would add up. The
    lock goes with its descriptor (``held``), so a grader that dies leaves no claim behind.
    """
    CLAIMS.mkdir(mode=0o700, exist_ok=True)
    for uid in _free_uids(start):
        fd = os.open(CLAIMS / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | _NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        held.append(fd)
        yield uid


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
    """What a kernel needs to read: the interpreter's prefixes, site-packages and the folder ragkit comes from."""
    import site

    found = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), *map(Path, site.getsitepackages()),
             CHECKOUT]
    return _outermost([Path(os.path.realpath(p)) for p in found if Path(p).is_dir()])


class Sandbox:
    """Runs submitted notebooks one by one (or a few at a time), each in a child process of its own."""

    def __init__(self, hidden: list[Path], limits: Limits | None = None, cache: Path | None = None,
                 shared: Path | None = None, probe: Isolation | None = None, lend: Lending | None = None):
        self.limits = limits or Limits()
        self.lend = lend
        self.isolation = probe or isolation()
        self.root = Path(tempfile.mkdtemp(prefix="ragkit-grade-"))
        self.root.chmod(0o711)  # submissions may pass through to their own home, never list the others
        (self.root / "homes").mkdir(mode=0o711)
        (self.root / "out").mkdir(mode=0o700)
        self.seed = shared if shared is not None else (
            snapshot_cache(cache, self.root / "seed") if cache is not None else None)
        home = Path(os.path.realpath(Path.home())) if Path.home().is_dir() else None
        self.hidden = _outermost([Path(os.path.realpath(p)) for p in
                                  [Path("/tmp"), Path("/dev/shm"), self.root, *([home] if home else []), *hidden]
                                  if Path(p).exists()])
        self.readonly = _python_folders() + ([Path(os.path.realpath(self.seed))] if self.seed else [])
        # a folder only its owner may enter (Python under /root) is hidden too: its mounted-back copy can be entered;
        # and every home above one (/root, /home/<teacher>) is hidden whatever its mode now, since its owner may
        # close it while the class is graded (seen: /root went from 701 to 700 and a run lost the standard library)
        closed = [a for p in self.readonly for a in p.parents
                  if not os.stat(a).st_mode & stat.S_IXOTH or a == Path("/root") or a.parent == Path("/home")]
        self.hidden = _outermost(self.hidden + closed)
        self._claims: list[int] = []
        self._uids = _claimed_uids(SANDBOX_UIDS, self._claims)
        self._count = 0
        self._lock = threading.Lock()  # grading runs a few notebooks at once, each with a home and uid of its own

    def close(self) -> None:
        """Remove the grader's temporary folder (every home, the snapshot, made writable again to be removed)."""
        for p in [self.root, *self.root.rglob("*")]:
            if p.is_dir() and not p.is_symlink() and p.stat().st_uid == os.getuid():
                p.chmod(0o700)
        shutil.rmtree(self.root, ignore_errors=True)
        for fd in self._claims:  # every process of those uids was killed when its run ended
            os.close(fd)
        self._claims.clear()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def run(self, notebook: bytes, student: str, names: tuple[str, ...], functions: tuple[str, ...] = (),
            pairs: list[tuple[str, str]] | None = None) -> SandboxRun:
        """Execute one notebook afresh as ``student`` and return the answers it holds at the end, or why not."""
        with self._lock:
            self._count += 1
            n = self._count
            uid = next(self._uids) if self.isolation.change_user else os.getuid()
        home = self.root / "homes" / str(n)
        home.mkdir(mode=0o700)
        gid = uid if self.isolation.change_user else os.getgid()
        (home / "submission.ipynb").write_bytes(notebook)
        env = {"HOME": str(home), "PATH": os.path.dirname(sys.executable) + ":/usr/bin:/bin",
               "LANG": "C.UTF-8", "TMPDIR": str(home / "tmp"), "RAGKIT_RESULTS": str(home / "results.jsonl"),
               "RAGKIT_CACHE": str(home / "cache"), "RAGKIT_STUDENT": student, "HF_HUB_OFFLINE": "1",
               "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "IPYTHONDIR": str(home / ".ipython"),
               "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
               "JUPYTER_DATA_DIR": str(home / "data"), "MPLCONFIGDIR": str(home / "mpl"),
               "PYTHONPATH": str(CHECKOUT),
               **{v: str(self.limits.threads) for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}}
        if self.seed is not None:
            env["RAGKIT_SHARED_CACHE"] = str(self.seed)
        if self.lend is not None:  # the grader lends the vectors of the texts its own check will embed too
            env[SERVICE_ENV] = str(home / "embed.sock")
        for folder in ("tmp", "cache", ".ipython/profile_default/startup", "runtime", ".jupyter", "data", "mpl"):
            (home / folder).mkdir(parents=True)
        (home / ".ipython/profile_default/startup/00-ragkit-sandbox.py").write_text(STARTUP, encoding="utf-8")
        spec = {"uid": uid if self.isolation.change_user else None, "gid": gid, "env": env,
                "namespaces": self.isolation.namespaces, "hidden": [str(p) for p in self.hidden],
                "readonly": [str(p) for p in self.readonly], "home": str(home),
                "limits": {"memory": self.limits.memory, "file_size": self.limits.file_size,
                           "processes": self.limits.processes, "timeout": self.limits.timeout},
                "names": list(names), "functions": list(functions), "pairs": pairs or []}
        (home / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
        for p in [home, *home.rglob("*")]:
            os.lchown(p, uid, gid)
        out, err = self.root / "out" / f"{n}.json", self.root / "out" / f"{n}.err"
        command = [sys.executable, "-m", "ragkit.teach.grading.sandbox", str(home)]
        if self.isolation.namespaces:
            command = [*_unshare(self.isolation.change_user), *command]
        start = time.monotonic()
        lender = None
        try:
            if self.lend is not None:
                lender = Lender(home / "embed.sock", self.lend.namespace, self.lend.encode, self.lend.lock, (uid, gid),
                                self.lend.wait)
            return self._start(command, env, out, err, uid, start)
        except OSError as exc:
            return SandboxRun(False, f"the sandbox could not start ({exc.strerror or exc}: {command[0][-120:]})")
        finally:
            if lender is not None:
                lender.close()
            shutil.rmtree(home, ignore_errors=True)
            out.unlink(missing_ok=True)
            err.unlink(missing_ok=True)

    def _start(self, command: list[str], env: dict, out: Path, err: Path, uid: int, start: float) -> SandboxRun:
        """Start the child, wait for it within the time limit, kill what is left, read its report."""
        with out.open("wb") as sink, err.open("wb") as errors:
            child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=sink, stderr=errors,
                                     env={**env, "HOME": "/"}, cwd="/", start_new_session=True)
            try:
                child.wait(timeout=self.limits.timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                _kill(child, uid if self.isolation.change_user else None)
        seconds = time.monotonic() - start
        if timed_out:
            return SandboxRun(False, f"still running after the time limit of {self.limits.timeout:g} s (a loop, "
                              "a wait, or too slow): stopped", seconds=seconds)
        return _read_result(out, err, self.limits.output, seconds)


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
        return SandboxRun(False, f"the notebook's answers exceed {limit:,} bytes", seconds=seconds)
    try:
        report = json.loads(data.decode("utf-8"))
        ran, reason, answers = report["ran"], report.get("reason", ""), report.get("answers", "")
        if not isinstance(ran, bool) or not isinstance(reason, str) or not isinstance(answers, str):
            raise TypeError
    except (ValueError, KeyError, TypeError, RecursionError, AttributeError):
        with err.open("rb") as f:
            f.seek(max(0, err.stat().st_size - 4096))
            last = next(reversed(f.read().decode("utf-8", "replace").strip().splitlines() or [""]))
        return SandboxRun(False, "the sandbox ended without a report (killed: memory, a signal, os._exit)"
                          + (f": {last[:300]}" if last else ""), seconds=seconds)
    return SandboxRun(ran, reason[:500], answers, seconds)


# The child side: everything below runs in the sandbox's own process.

def start_kernel() -> None:
    """In a sandbox's kernel, before its first cell: nbformat imported quickly, and the grader's lending taken.

    Every exercise notebook shows figures, and its first one imports nbformat (plotly's renderer): importing it here
    costs a kernel nothing more, and a student's own figure gets the quick import too. The kernel's embedder borrows
    from the grader because it is given the socket here (``plumbing.service``); outside a sandbox no embedder asks.
    """
    import_nbformat_quickly()
    path = service_path()
    if path is not None:
        from ragkit.embedding import default_embedder

        default_embedder().borrower = Borrower(path)


def _libc_mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    arg = [None if s is None else s.encode() for s in (source, target, fstype, data)]
    if libc.mount(arg[0], arg[1], arg[2], ctypes.c_ulong(flags), arg[3]) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {source} on {target}: {os.strerror(errno)}")


def _bind(fd: int, target: Path, readonly: bool) -> None:
    """Mount the folder open as ``fd`` on ``target``, read-only if asked (keeping the flags the kernel locks)."""
    target.mkdir(parents=True, exist_ok=True)
    _libc_mount(f"/proc/self/fd/{fd}", str(target), None, _MS_BIND | _MS_REC)
    if readonly:
        st = os.statvfs(target)
        kept = sum(ms for st_flag, ms in _ST_TO_MS.items() if st.f_flag & st_flag)
        _libc_mount(None, str(target), None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | kept)


def _confine(spec: dict) -> None:
    """Hide the grader's, the teacher's and the other students' folders; mount back Python and ragkit read-only."""
    home = Path(spec["home"])
    keep = [(Path(p), True) for p in spec["readonly"]] + [(home, False)]
    fds = [(os.open(p, os.O_PATH | os.O_DIRECTORY), p, ro) for p, ro in keep]
    _libc_mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    for folder in spec["hidden"]:
        mode = "1777" if folder == "/tmp" else "755"
        _libc_mount("tmpfs", folder, "tmpfs", _MS_NOSUID | _MS_NODEV, f"size={TMP_SIZE},mode={mode}")
    for fd, path, readonly in sorted(fds, key=lambda k: len(k[1].parts)):
        _bind(fd, path, readonly)
        os.close(fd)


def _drop(spec: dict) -> None:
    """Become the submission's own uid (no groups), never regain privileges, and take the limits."""
    if spec["uid"] is not None:
        os.setgroups([])
        os.setresgid(spec["gid"], spec["gid"], spec["gid"])
        os.setresuid(spec["uid"], spec["uid"], spec["uid"])
        resource.setrlimit(resource.RLIMIT_NPROC, (spec["limits"]["processes"],) * 2)
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    resource.setrlimit(resource.RLIMIT_AS, (spec["limits"]["memory"],) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (spec["limits"]["file_size"],) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _send(fd: int, report: dict) -> None:
    os.write(fd, json.dumps(report).encode("utf-8"))
    os.close(fd)


def _watch(km, done: threading.Event, report_fd: int) -> None:
    """End the run when the kernel process is gone before the last cell (nbclient would wait for the time limit)."""
    while not done.wait(1.0):
        if km.has_kernel and not km.is_alive() and not done.is_set():
            _send(report_fd, {"ran": False, "reason": "the kernel died (it exited, crashed or ran out of memory)"})
            os._exit(0)


def _execute(spec: dict, report_fd: int) -> dict:
    """Run the notebook in a fresh kernel, then print the declared names' values; the report to send back."""
    import_nbformat_quickly()
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, DeadKernelError

    home = Path(spec["home"])
    try:
        nb = nbformat.read(home / "submission.ipynb", as_version=4)
    except Exception as exc:  # any unreadable notebook is a reason, not a crash
        return {"ran": False, "reason": f"not a readable notebook ({type(exc).__name__}: {str(exc)[:200]})"}
    nb.cells = [c for c in nb.cells if c.get("cell_type") in ("code", "markdown", "raw")]
    args = f"{spec['names']!r}, {spec['functions']!r}, {[tuple(p) for p in spec['pairs']]!r}"
    nb.cells.append(nbformat.v4.new_code_cell(EXTRACT.format(sentinel=SENTINEL, args=args)))
    km = KernelManager(kernel_name="python3", transport="ipc", ip=str(home / "runtime" / "kernel"))
    # no time limit per cell: the grader's limit covers the whole run, kernel start included
    client = NotebookClient(nb, km=km, timeout=None, allow_errors=False, record_timing=False,
                            resources={"metadata": {"path": str(home)}})
    done, last = threading.Event(), len(nb.cells) - 1
    client.on_cell_error = lambda **_: done.set()
    client.on_cell_executed = lambda cell_index, **_: done.set() if cell_index == last else None
    threading.Thread(target=_watch, args=(km, done, report_fd), daemon=True).start()
    try:
        client.execute()
    except DeadKernelError:
        return {"ran": False, "reason": "the kernel died (it exited, crashed or ran out of memory)"}
    except CellExecutionError as exc:
        index = next((i for i, c in enumerate(nb.cells) if c.get("cell_type") == "code" and any(
            o.get("output_type") == "error" for o in c.get("outputs", []))), None)
        where = f"cell {index + 1}" if index is not None else "a cell"
        return {"ran": False, "reason": f"{where} raised {exc.ename}: {str(exc.evalue)[:300]}"}
    except Exception as exc:  # the kernel could not start or talk: say so
        return {"ran": False, "reason": f"the notebook could not be run ({type(exc).__name__}: {str(exc)[:300]})"}
    printed = "".join(o.get("text", "") for o in nb.cells[-1].get("outputs", []) if o.get("name") == "stdout")
    answers = next((line[len(SENTINEL):] for line in reversed(printed.splitlines()) if line.startswith(SENTINEL)), "")
    return {"ran": True, "answers": answers}


def main(home: str) -> int:
    """The child: confine, drop privileges, execute, and write one JSON report on the descriptor given as stdout."""
    report_fd = os.dup(1)
    with open(Path(home) / "spec.json", encoding="utf-8") as f:
        spec = json.load(f)
    try:
        if spec["namespaces"]:
            _confine(spec)
        _drop(spec)
        log = os.open(Path(home) / "kernel.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.environ.clear()
        os.environ.update(spec["env"])
        os.chdir(home)
        report = _execute(spec, report_fd)
    except Exception as exc:  # whatever stops the sandbox is the reason it did not run
        report = {"ran": False, "reason": f"the sandbox could not run the notebook ({type(exc).__name__}: {exc})"}
    _send(report_fd, report)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
