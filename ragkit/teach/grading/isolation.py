"""What a sandboxed run is held to, and what this machine can hold it to: the limits, the whitelist, the probe.

A run sees a root of its own built by bubblewrap (``bwrap``) from a whitelist (``whitelist``: the system's program
folders, the Python the grader runs on, ragkit and its course data, a snapshot of the teacher's cache, all read-only)
inside new user, network, mount, PID, IPC, UTS and cgroup namespaces, within ``Limits``. Before anything runs,
``probe`` builds that root and drops privileges once, exactly as a run will, and ``Isolation`` says in words what
held; a machine that cannot build it (no bwrap, no user namespaces) is told what to install or change
(``SandboxUnavailable``), and nothing runs.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from math import isfinite
from pathlib import Path

from ragkit.errors import InputError, RagkitError
from ragkit.plumbing import locations
from ragkit.teach.grading import cgroup, launch
from ragkit.teach.grading.launch import HOME, INSIDE
from ragkit.teach.grading.uids import SANDBOX_UIDS

__all__ = [
    "CHECKOUT",
    "CHILD",
    "HOME_SIZE",
    "INSTALL",
    "MAX_FILE_SIZE",
    "MAX_MEMORY",
    "MAX_OUTPUT",
    "MAX_PROCESSES",
    "SHM_SIZE",
    "SYSTEM",
    "TIMEOUT",
    "TMP_SIZE",
    "Isolation",
    "Limits",
    "SandboxUnavailable",
    "bwrap",
    "child_command",
    "inside",
    "inside_command",
    "interpreter",
    "outermost",
    "probe",
    "python_folders",
    "python_path",
    "system_folders",
    "whitelist",
]

TIMEOUT = 600.0
"""Seconds a notebook may take, kernel start included (ex4 embeds the corpus once: 1 to 4 minutes on 2 busy cores)."""
MAX_OUTPUT = 2 * 2**20
"""Bytes a run's report (its answers, as JSON) may take."""
MAX_FILE_SIZE = 256 * 2**20
"""Bytes the largest file a run writes may take (``RLIMIT_FSIZE``)."""
MAX_MEMORY = 8 * 2**30
"""Bytes of memory a run may hold, all its processes together where a cgroup counts them."""
MAX_PROCESSES = 512
"""Processes a run may have at once; threads count too: torch, zmq and the kernel start a few dozen."""
HOME_SIZE = 512 * 2**20
"""Bytes of the tmpfs a run's HOME is."""
TMP_SIZE = 512 * 2**20
"""Bytes of the tmpfs a run's /tmp is."""
SHM_SIZE = 64 * 2**20
"""Bytes of the tmpfs a run's /dev/shm is."""
SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
"""The system's program folders, bound read-only (or, where they are links into /usr, linked the same way)."""
# The folder holding the ragkit package, from this module's own path: ``ragkit.__file__`` is None when the grader
# runs beside a folder named ragkit (a clone in ~/ragkit) under an editable install, which imports that folder
# as a namespace package first
CHECKOUT = locations.SOURCE_ROOT
CHILD = "ragkit.teach.grading.confinement"
"""The module bwrap runs inside a run's sandbox (``python -m``): it runs the notebook and reports."""
INSTALL = (
    "install bubblewrap, the sandbox the grader runs every notebook in (Debian, Ubuntu: sudo apt-get install "
    "bubblewrap; Fedora: sudo dnf install bubblewrap), then grade again"
)
"""What a teacher whose machine has no ``bwrap`` is told to do."""


class SandboxUnavailable(RagkitError):
    """This machine cannot build the grader's sandbox (no bubblewrap, no user namespaces): nothing is run."""


@dataclass(frozen=True)
class Limits:
    """What one run may use: seconds, memory (the whole run in a cgroup), file and tmpfs sizes, processes."""

    timeout: float = TIMEOUT
    memory: int = MAX_MEMORY
    file_size: int = MAX_FILE_SIZE
    processes: int = MAX_PROCESSES
    output: int = MAX_OUTPUT
    threads: int = 1
    cores: float | None = None
    """Cores one run may use at once, all its processes together (a cgroup's CPU quota); None: the machine's."""
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
        if self.cores is not None and (
            isinstance(self.cores, bool)
            or not isinstance(self.cores, (int, float))
            or not isfinite(self.cores)
            or self.cores <= 0
        ):
            raise InputError(f"a sandbox limit `cores` of {self.cores!r}: give a number of cores above 0")
        for name in ("memory", "file_size", "processes", "output", "threads", "home", "tmp", "shm"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise InputError(f"a sandbox limit `{name}` of {value!r}: give a whole number above 0")


@dataclass(frozen=True)
class Isolation:
    """What this machine lets the grader do beyond the sandbox every run gets: a uid per run, run-wide limits."""

    change_user: bool
    notes: tuple[str, ...] = field(default=())
    run_limits: str = ""
    """The cgroup that bounds whole runs (``cgroup v2``, ``cgroup v1``), or empty where only processes are bounded."""
    cpu: bool = False
    """Whether that cgroup bounds a run's CPU too (its share of the cores, which no process of the run escapes)."""

    def __str__(self) -> str:
        held = [
            "no network",
            "a read-only root of its own (the system, Python, ragkit, the course: no one else's files, no host socket)",
            "HOME and /tmp on bounded tmpfs",
            "its own user, UTS and cgroup namespaces (no further user namespace inside)",
            "a time limit",
            "a throwaway HOME, results file and cache",
        ]
        if self.change_user:
            held.append("a uid of its own")
        bounded = "memory, processes and CPU" if self.cpu else "memory and processes"
        held.append(
            f"{bounded} bounded for the whole run ({self.run_limits})"
            if self.run_limits
            else "memory bounded per process only"
        )
        return "each notebook runs with " + ", ".join(held) + "".join(f"\n{n}" for n in self.notes)


def bwrap() -> str:
    """The bubblewrap program the sandbox is built with; ``SandboxUnavailable`` (what to install) where it lacks."""
    found = shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin")
    if found is None:
        raise SandboxUnavailable(f"this machine has no bwrap: {INSTALL}")
    return found


def system_folders() -> tuple[list[tuple[Path, Path]], list[Path]]:
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
    system, _ = system_folders()
    mine = outermost([Path(os.path.realpath(p)) for p in [*python_folders(), *_course_files()]])
    pairs = [*system, *((p, p) for p in mine if not any(inside(p, [s]) for s, _ in system))]
    if seed is not None:
        pairs.append((Path(os.path.realpath(seed)), INSIDE / "seed"))
    return pairs


def interpreter() -> Path:
    """The Python the grader runs on, by the real path of its folder (a ``.venv`` that is a link to a virtual
    environment elsewhere is bound in where it really lies) and its own name (which is how a virtual environment's
    Python finds its ``pyvenv.cfg``)."""
    executable = Path(sys.executable)
    return Path(os.path.realpath(executable.parent)) / executable.name


def child_command() -> list[str]:
    """The command that starts a run's launcher: by its path, with no site and no environment (``launch``)."""
    return [str(interpreter()), "-I", "-S", str(Path(launch.__file__).resolve())]


def inside_command() -> list[str]:
    """The command bwrap runs inside the sandbox (``CHILD``), with the Python the grader runs on."""
    return [str(interpreter()), "-m", CHILD]


def _probe_spec(change_user: bool) -> dict:
    """A spec that builds the run's root and drops privileges, then reports: what ``isolation`` tries first."""
    _, links = system_folders()
    uid = SANDBOX_UIDS if change_user else None
    limits = Limits()
    return {
        "uid": uid,
        "gid": uid if change_user else os.getgid(),
        "bwrap": bwrap(),
        "inside": inside_command(),
        "view": tempfile.gettempdir(),  # the probe's sources are bound over the temporary folder, in its namespace
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
            "home": 2**20,
            "tmp": 2**20,
            "shm": 2**20,
        },
    }


def _child(spec: dict, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run the confinement child once with ``spec`` on stdin (the probe)."""
    with tempfile.TemporaryFile() as spec_file:
        spec_file.write(json.dumps(spec).encode())
        spec_file.seek(0)
        return subprocess.run(
            child_command(),
            stdin=spec_file,
            capture_output=True,
            timeout=timeout,
            cwd="/",
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(map(str, python_path())), "LANG": "C.UTF-8"},
        )


def probe() -> Isolation:
    """Build a run's root once, as a run will, and say in words what this machine holds and what it cannot; a machine
    where it cannot be built at all is a ``SandboxUnavailable`` that says what to install or change."""
    root = os.geteuid() == 0
    try:
        probe = _child(_probe_spec(root))
        report = probe.stdout.decode("utf-8", "replace")
        built = probe.returncode == 0 and '"ran": true' in report
        why = (report + probe.stderr.decode("utf-8", "replace")).strip().splitlines()
    except (OSError, subprocess.TimeoutExpired) as exc:
        built, why = False, [str(exc)]
    if not built:
        raise SandboxUnavailable(
            f"the grader's sandbox could not be built here ({why[-1][-300:] if why else 'no reason given'}): nothing "
            "was run. bwrap makes each run's namespaces as the run's own uid, even when the grader is root: allow "
            "unprivileged user namespaces (Debian: sysctl kernel.unprivileged_userns_clone=1; Ubuntu 24.04: the "
            "AppArmor profile bwrap-userns-restrict, or sysctl kernel.apparmor_restrict_unprivileged_userns=0); "
            "in a container, allow namespaces (docker run --security-opt seccomp=unconfined)"
        )
    notes = []
    if not root:
        notes.append(
            f"not root: every submission runs as you ({pwd.getpwuid(os.getuid()).pw_name}), not as a user of its "
            "own, in its own root with no capability; run the grader as root to give each submission an "
            "unprivileged uid"
        )
    found, why_not = cgroup.hierarchy()
    if found is None:
        notes.append(
            f"memory is bounded per process only, not for the whole run ({why_not}): a run's processes "
            "together may hold more than the bound, and its CPU is bounded only by its time limit"
        )
    elif not found.cpu:
        notes.append(
            f"{found} here hands out no cpu controller: a run's CPU is bounded only by its time limit (with --jobs, "
            "one run's processes may starve another's)"
        )
    return Isolation(root, tuple(notes), str(found) if found is not None else "", found is not None and found.cpu)


def inside(path: Path, folders: list[Path]) -> bool:
    """Whether ``path`` is one of ``folders`` or lies inside one."""
    return any(path == f or f in path.parents for f in folders)


def outermost(paths: list[Path]) -> list[Path]:
    """The paths that lie inside no other path of the list, sorted."""
    kept = sorted(set(paths), key=lambda p: len(p.parts))
    return sorted(p for i, p in enumerate(kept) if not inside(p, kept[:i]))


def python_folders() -> list[Path]:
    """What a kernel needs of Python: the interpreter's prefixes, its site-packages and the grader's own path."""
    import site

    found = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), *map(Path, site.getsitepackages())]
    return outermost([Path(os.path.realpath(p)) for p in found if Path(p).is_dir()] + python_path()[1:])


def python_path() -> list[Path]:
    """A kernel's PYTHONPATH: the checkout, then the site-packages the grader finds beyond its interpreter's own
    (on its PYTHONPATH, a ``pip install --user``), which a kernel with another HOME and environment would miss.
    Only folders named site-packages or dist-packages: a PYTHONPATH of the teacher's HOME is not a whitelist."""
    own = [Path(os.path.realpath(p)) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)]
    found = [Path(os.path.realpath(p)) for p in sys.path[1:] if p and os.path.isdir(p)]
    extra = [p for p in found if p.name in ("site-packages", "dist-packages") and not inside(p, own)]
    return [CHECKOUT, *dict.fromkeys(extra)]
