"""The grader's sandbox: one submitted notebook executed afresh, in a child process that can harm nothing.

Per notebook, a child process (``python -m ragkit.teach.grading.confinement``, its side) runs the notebook
with nbclient and hands back only the values of the names the exercise declares, as JSON on a file
descriptor the grader gave it. The containment is bubblewrap's (``bwrap``), and a whitelist, not a list of things
to hide:

- a root of its own, assembled from read-only binds of the system's program folders, the Python the
  grader runs on, ragkit, its course data and a snapshot of the teacher's cache, and tmpfs of bounded
  size for HOME, ``/tmp`` and ``/dev/shm``; every mount ``nosuid`` (and ``nodev``, but five devices),
  the root read-only; nothing else of the machine has a path inside (``isolation.whitelist``,
  ``confinement.arguments``);
- new user, network, mount, PID, IPC, UTS and cgroup namespaces: no network, no host socket, no other
  process, no capability, no further user namespace, and the keyrings and other kernel state a run makes die
  with it; an audit hook in the kernel names the missing network in the grade;
- as root, a uid of its own per run, drawn at random from 134 million unused ones and claimed
  machine-wide, with no groups and no new privileges; every process of that uid is killed after the
  run and every file it left where the host is writable is removed and reported (``uids``);
- limits for the whole run: time (kernel start included), memory, processes and its share of the cores in a cgroup
  where the machine has one (``cgroup``), file size, answer size;
- the run's spec and notebook reach the child on an inherited descriptor of a root-owned file, never
  through a folder the run's uid can write; its report comes back the same way, read as hostile input;
- the vectors of new texts (ex4's chunks with the student's header) lent by the grader, which
  computes them once for the kernel and its own check (``ragkit.plumbing.service``: the kernel sends
  texts, never vectors), through one socket bound into that run alone.

A teacher without root gets the same root and namespaces, as their own uid, without a cgroup. A machine where bwrap
is missing or cannot make its namespaces grades nothing: ``isolation.probe`` says what to install or change, and
otherwise, in words, what the sandbox holds, before anything runs. A run that did not finish says why with a value
(``failures.RunFailure``), never a sentence.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ragkit.plumbing.bounded import O_NOFOLLOW
from ragkit.plumbing.service import MAX_TEXTS, SERVICE_ENV, Lender
from ragkit.teach.grading import cgroup
from ragkit.teach.grading.failures import RunFailure
from ragkit.teach.grading.isolation import (
    Isolation,
    Limits,
    bwrap,
    child_command,
    inside,
    inside_command,
    interpreter,
    outermost,
    python_path,
    system_folders,
    whitelist,
)
from ragkit.teach.grading.isolation import probe as probe_isolation
from ragkit.teach.grading.launch import HOME, INSIDE
from ragkit.teach.grading.uids import UidClaim, kill_uid, leftovers, remove

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Lending", "Sandbox", "SandboxRun", "snapshot_cache"]


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
    stop: Callable[[], None] = lambda: None
    """Ends the lending: refuses new texts and returns once no text is being embedded."""


@dataclass(frozen=True)
class SandboxRun:
    """What came back from one notebook: why it did not finish (None: it did), the raw answer text, what it used."""

    failure: RunFailure | None = None
    answers: str = ""
    seconds: float = 0.0
    memory: int | None = None
    """The most memory the run held at once, in bytes, where a cgroup measured it."""

    @property
    def ran(self) -> bool:
        """Whether the notebook ran to its end (its answers are then in ``answers``)."""
        return self.failure is None


def snapshot_cache(cache: Path, into: Path, fill: Callable[[Path], None] | None = None) -> Path | None:
    """A read-only copy of the teacher's vectors and ONNX export, shaped like a shared cache; None with no cache.

    The copy is taken with SQLite's backup (consistent while a warmer writes) and switched to a
    rollback journal, as a shared cache must be; the ONNX export is copied, so that a notebook
    needs neither the teacher's folder nor a fresh export. ``fill`` writes into the copy before it is made
    read-only: what every run should read rather than compute (the grader's exercise-7 graphs).
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
    if fill is not None:
        fill(into)
    for p in [into, *into.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o444)
    into.chmod(0o555)
    return into


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
        self.bwrap = bwrap()  # what to install, where it is missing: before anything else
        self.isolation = probe or probe_isolation()
        self.root = Path(tempfile.mkdtemp(prefix="ragkit-grade-"))  # 0700: no run's uid can enter it
        (self.root / "out").mkdir(mode=0o700)
        self.seed = (
            shared if shared is not None else (snapshot_cache(cache, self.root / "seed") if cache is not None else None)
        )
        self.readonly = whitelist(self.seed)
        _, self.links = system_folders()
        # a folder of submissions, the grader's own or the teacher's HOME may lie inside a whitelisted folder (a class
        # handed in under the checkout): an empty, closed tmpfs covers it there
        home = Path(os.path.realpath(Path.home())) if Path.home().is_dir() else None
        private = [
            Path(os.path.realpath(p)) for p in [self.root, *([home] if home else []), *hidden] if Path(p).exists()
        ]
        self.masked = outermost(
            [p for p in private for src, dst in self.readonly if src == dst and inside(p, [src]) and p != src]
        )
        self.hierarchy = cgroup.hierarchy()[0] if self.isolation.change_user else None
        self._count = 0
        self._lock = threading.Lock()  # grading runs a few notebooks at once, each with a uid and a cgroup of its own
        self._stopping = threading.Event()

    def stop(self) -> None:
        """End the grading early (Ctrl-C, SIGTERM): every running notebook is killed now and none starts after; each
        run then gives back its uid and cgroup as a finished one does."""
        self._stopping.set()

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
            "bwrap": self.bwrap,
            "inside": inside_command(),
            "view": str(self.root),
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
                "home": limits.home,
                "tmp": limits.tmp,
                "shm": limits.shm,
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
        out, err, spec_path = (self.root / "out" / f"{n}.{kind}" for kind in ("json", "err", "spec"))
        command = child_command()
        start = time.monotonic()
        claim: UidClaim | None = None
        lender, group, left = None, None, []
        try:  # whatever fails to start is this run's "not run", and what it took is given back below
            claim = UidClaim() if change else None
            uid = claim.uid if claim is not None else os.getuid()
            gid = uid if change else os.getgid()
            socket = self.root / "out" / f"{n}.sock" if self.lend is not None and lend else None
            seed = INSIDE / "seed" if self.seed is not None else None
            env = self._environment(HOME, student, seed, INSIDE / "embed.sock" if socket is not None else None)
            if self.hierarchy is not None:
                group = self.hierarchy.create(
                    f"ragkit-sandbox-{uid}",
                    self.limits.memory,
                    self.limits.processes,
                    self.limits.cores if self.limits.cores is not None else float(len(os.sched_getaffinity(0))),
                )
            fd = os.open(spec_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | O_NOFOLLOW, 0o600)
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
            # what could not be started or made (a command not found names itself: ``unshare``), else what failed
            why = f"{exc.strerror or exc}: {str(exc.filename)[-120:]}" if exc.filename is not None else str(exc)
            result = SandboxRun(RunFailure("sandbox", text=f"the sandbox could not start ({why})"))
        finally:
            if lender is not None:
                lender.close()
            if group is not None:
                group.kill()
                group.remove()
            if claim is not None:
                left = leftovers(claim.uid)
                remove(left)
                claim.release()
            for path in (out, err, spec_path):
                path.unlink(missing_ok=True)
        if left:
            where = ", ".join(sorted({str(p.parent) for p in left}))
            return SandboxRun(
                RunFailure(
                    "sandbox",
                    text=f"the run left {len(left)} files where the machine is writable ({where}): removed;"
                    " the sandbox failed to contain it, so it is not graded (please report this)",
                ),
                seconds=result.seconds,
                memory=result.memory,
            )
        return result

    def _environment(self, home: Path, student: str, seed: Path | None, service: Path | None) -> dict[str, str]:
        """A run's environment: its HOME and what lies in it, offline, the seed of vectors and the lending socket."""
        env = {
            "HOME": str(home),
            "PATH": f"{interpreter().parent}:/usr/bin:/bin",
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
            "PYTHONPATH": os.pathsep.join(map(str, python_path())),
            **{v: str(self.limits.threads) for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")},
        }
        if seed is not None:
            env["RAGKIT_SHARED_CACHE"] = str(seed)
        if service is not None:
            env[SERVICE_ENV] = str(service)
        return env

    def _waited(self, child: subprocess.Popen, deadline: float) -> bool:
        """Whether the child ended before ``deadline`` (``time.monotonic``) and before the grading was stopped."""
        while not self._stopping.is_set():
            try:
                child.wait(timeout=max(0.0, min(STOP_POLL_S, deadline - time.monotonic())))
                return True
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    return False
        return False

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
        if self._stopping.is_set():
            raise OSError("the grading was stopped before this notebook started")
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
                timed_out = not self._waited(child, start + self.limits.timeout)
            finally:
                _kill(child, uid if self.isolation.change_user else None)
        seconds = time.monotonic() - start
        memory = group.peak() if group is not None else None
        if timed_out:
            return SandboxRun(
                RunFailure("timed out", seconds=float(self.limits.timeout)), seconds=seconds, memory=memory
            )
        result = _read_result(out, err, self.limits.output, seconds)
        if result.failure is not None and group is not None and group.out_of_memory():
            failure = replace(result.failure, memory_bound=self.limits.memory)
            return SandboxRun(failure, seconds=seconds, memory=memory)
        return replace(result, seconds=seconds, memory=memory)


STOP_POLL_S = 0.2
"""How often a run's wait looks whether the grading was stopped (``Sandbox.stop``)."""


def _kill(child: subprocess.Popen, uid: int | None) -> None:
    """Stop a run: its process group, and (when it ran as a uid of its own) every process left with that uid."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    child.wait()
    if uid is not None:
        kill_uid(uid)


def _read_result(out: Path, err: Path, limit: int, seconds: float) -> SandboxRun:
    """The child's report, read as hostile: at most ``limit`` bytes of one JSON object; else its last error line."""
    with out.open("rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        return SandboxRun(RunFailure("too large", limit=limit), seconds=seconds)
    try:
        report = json.loads(data.decode("utf-8"))
        ran, answers = report["ran"], report.get("answers", "")
        if not isinstance(ran, bool) or not isinstance(answers, str):
            raise TypeError
        failure = None if ran else RunFailure.from_json(report["failure"])
    except (ValueError, KeyError, TypeError, RecursionError, AttributeError):
        with err.open("rb") as f:
            f.seek(max(0, err.stat().st_size - 4096))
            last = next(reversed(f.read().decode("utf-8", "replace").strip().splitlines() or [""]))
        return SandboxRun(RunFailure("no report", last=last[:300]), seconds=seconds)
    return SandboxRun(failure, answers if ran else "", seconds)
