"""Inside the grader's sandbox: a new root built from a whitelist, the submission's own uid, the notebook run.

The grader starts ``python -m ragkit.teach.grading.confinement`` in new mount, PID, IPC and network
namespaces, with the run's spec (a root-owned file) on stdin and its report file on stdout. The
child reads the spec, joins the run's cgroup, and assembles a root of its own on a tmpfs: the
system's program folders, the Python the grader runs on, ragkit and its course data and the
snapshot of the teacher's cache, all bound read-only; a synthetic ``/etc`` of a few files; a fresh
``/proc`` and a ``/dev`` of five devices; HOME, ``/tmp`` and ``/dev/shm`` on tmpfs of bounded size.
Every mount is ``nosuid`` and every mount but the five devices ``nodev``; the root itself ends
read-only. After ``pivot_root`` the host's tree is detached: nothing else of the machine (other
homes, ``/var/tmp``, ``/run`` and its sockets, ``/srv``, ``/mnt``) has a path inside. The child
then becomes the run's uid (or, for a teacher without root, drops every capability), forbids new
privileges, takes its limits and runs the notebook with nbclient in a fresh kernel.
"""

from __future__ import annotations

import base64
import ctypes
import json
import os
import platform
import resource
import sys
import threading
from pathlib import Path

from ragkit.plumbing.nbformat_import import import_nbformat_quickly
from ragkit.plumbing.service import Borrower, service_path
from ragkit.teach.grading.failures import RunFailure

__all__ = [
    "DEVICES",
    "ETC",
    "EXTRACT",
    "HOME",
    "INSIDE",
    "NO_NETWORK",
    "SENTINEL",
    "STARTUP",
    "build_root",
    "drop",
    "execute",
    "found_answers",
    "main",
    "prepare_home",
    "start_kernel",
]

SENTINEL = "ragkit-sandbox-answers:"
NO_NETWORK = "no network in the grader's sandbox"
HOME = Path("/home/submission")
"""The submission's HOME inside the sandbox (a tmpfs)."""
INSIDE = Path("/run/ragkit")
"""Where the snapshot of the teacher's cache (``seed``) and the lending socket (``embed.sock``) appear inside."""
DEVICES = ("null", "zero", "full", "random", "urandom")
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "nsswitch.conf")
"""The host's /etc entries a kernel reads (the loader's cache, the time zone); passwd, group and hosts are written."""
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME = 1024, 2048, 1 << 21
_ST_TO_MS = {
    1: _MS_RDONLY,
    2: _MS_NOSUID,
    4: _MS_NODEV,
    8: _MS_NOEXEC,
    1024: _MS_NOATIME,
    2048: _MS_NODIRATIME,
    4096: _MS_RELATIME,
}
_MNT_DETACH = 2
_PR_SET_NO_NEW_PRIVS, _PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 38, 24, 47, 4
_PIVOT_ROOT = {
    "x86_64": 155,
    "amd64": 155,
    "aarch64": 41,
    "arm64": 41,
    "riscv64": 41,
    "ppc64le": 203,
    "s390x": 217,
    "i686": 217,
    "i386": 217,
    "armv7l": 218,
}
"""pivot_root's system call number per machine (glibc has no wrapper)."""

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
from ragkit.teach.grading.confinement import start_kernel as _start_kernel
_start_kernel()
del _start_kernel
'''
"""Every sandbox kernel's startup file: the audit hook that names the missing network, then ``start_kernel``."""
EXTRACT = (
    "from ragkit.teach.grading.confinement import found_answers as _f\nprint({sentinel!r} + _f(globals(), {args}))"
)


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


def start_kernel() -> None:
    """In a sandbox's kernel, before its first cell: first in line for the OOM killer, nbformat, the lending taken.

    The kernel (and what it starts) is what a memory bound should stop, never the child that reports why. Every
    exercise notebook shows figures, and its first one imports nbformat (plotly's renderer): importing it here
    costs a kernel nothing more. The kernel's embedder borrows from the grader because it is given the socket
    here (``plumbing.service``); outside a sandbox no embedder asks.
    """
    try:
        Path("/proc/self/oom_score_adj").write_text("1000")
    except OSError:
        pass
    import_nbformat_quickly()
    path = service_path()
    if path is not None:
        from ragkit.embedding import default_embedder

        default_embedder().borrower = Borrower(path)


# Building the new root (as root in the run's namespaces)


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source: str | None, target: str | Path, fstype: str | None, flags: int, data: str | None = None) -> None:
    arg = [None if s is None else str(s).encode() for s in (source, target, fstype, data)]
    _check(_libc().mount(arg[0], arg[1], arg[2], ctypes.c_ulong(flags), arg[3]), f"mount {source} on {target}")


def _tmpfs(target: Path, size: str, mode: str, flags: int = _MS_NOSUID | _MS_NODEV) -> None:
    target.mkdir(parents=True, exist_ok=True)
    _mount("tmpfs", target, "tmpfs", flags, f"size={size},mode={mode},nr_inodes=65536")


def _bind(fd: int, target: Path, directory: bool, readonly: bool = True, flags: int = _MS_NOSUID | _MS_NODEV) -> None:
    """Mount what ``fd`` holds open on ``target``, then remount it with ``flags`` (and the flags the kernel locks)."""
    if directory:
        target.mkdir(parents=True, exist_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()
    _mount(f"/proc/self/fd/{fd}", target, None, _MS_BIND | _MS_REC)
    st = os.statvfs(target)
    kept = sum(ms for st_flag, ms in _ST_TO_MS.items() if st.f_flag & st_flag)
    _mount(None, target, None, _MS_REMOUNT | _MS_BIND | kept | flags | (_MS_RDONLY if readonly else 0))


def _pivot(new: Path) -> None:
    """Make ``new`` the root and detach the old one (``pivot_root(".", ".")``, then unmount what lies beneath)."""
    number = _PIVOT_ROOT.get(platform.machine().lower())
    if number is None:
        raise OSError(f"pivot_root's system call number is not known for {platform.machine()}")
    os.chdir(new)
    _check(_libc().syscall(number, b".", b"."), "pivot_root")
    _check(_libc().umount2(b".", _MNT_DETACH), "unmount the old root")
    os.chdir("/")


def _etc(new: Path, uid: int, gid: int, fds: dict[str, int]) -> None:
    """The few host files a kernel reads, bound read-only, and passwd, group and hosts written for this run."""
    etc = new / "etc"
    etc.mkdir(mode=0o755)
    for name, fd in fds.items():
        host = Path("/proc/self/fd") / str(fd)
        if os.path.islink(f"/etc/{name}"):
            os.symlink(os.readlink(f"/etc/{name}"), etc / name)
        else:
            _bind(fd, etc / name, directory=host.is_dir())
    (etc / "passwd").write_text(
        f"root:x:0:0:root:/root:/usr/sbin/nologin\nsubmission:x:{uid}:{gid}:a submission:{HOME}:/usr/sbin/nologin\n"
    )
    (etc / "group").write_text(f"root:x:0:\nsubmission:x:{gid}:\n")
    (etc / "hosts").write_text("127.0.0.1 localhost\n::1 localhost\n")


def build_root(spec: dict) -> None:
    """Assemble the run's root on a tmpfs and pivot into it: only what the spec whitelists has a path inside."""
    keep = [(Path(src), Path(dst)) for src, dst in spec["readonly"]]
    # every source is held open first: once /tmp is covered and the root moves, no path leads to them
    opened = [(os.open(src, os.O_PATH | os.O_CLOEXEC), dst, src.is_dir()) for src, dst in keep]
    etc = {
        name: os.open(f"/etc/{name}", os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
        for name in ETC
        if os.path.lexists(f"/etc/{name}")
    }
    devices = {name: os.open(f"/dev/{name}", os.O_PATH | os.O_CLOEXEC) for name in DEVICES}
    socket = os.open(spec["socket"], os.O_PATH | os.O_CLOEXEC) if spec.get("socket") else None
    links = [(Path(p), os.readlink(p)) for p in spec["links"]]
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    new = Path("/tmp")
    _tmpfs(new, "8m", "755")
    for path, target in links:  # /bin -> usr/bin on a merged /usr
        os.symlink(target, new / path.relative_to("/"))
    _etc(new, spec["uid"] if spec["uid"] is not None else os.getuid(), spec["gid"], etc)
    limits = spec["limits"]
    _tmpfs(new / "tmp", limits["tmp"], "1777")
    _tmpfs(new / HOME.relative_to("/"), limits["home"], "700")
    (new / "proc").mkdir()
    _mount("proc", new / "proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    _tmpfs(new / "dev", "64k", "755", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    for name, fd in devices.items():  # a device works only on a mount without nodev: these five, nothing else
        _bind(fd, new / "dev" / name, directory=False, readonly=False, flags=_MS_NOSUID | _MS_NOEXEC)
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, new / "dev" / name)
    _tmpfs(new / "dev" / "shm", limits["shm"], "1777", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    for fd, dst, directory in sorted(opened, key=lambda o: len(o[1].parts)):
        _bind(fd, new / dst.relative_to("/"), directory)
    for path in spec["masked"]:  # a submissions folder inside a whitelisted one: covered by an empty, closed tmpfs
        _tmpfs(new / Path(path).relative_to("/"), "4k", "000", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_RDONLY)
    if socket is not None:
        _bind(socket, new / (INSIDE / "embed.sock").relative_to("/"), directory=False, readonly=False)
    for fd in [*(o[0] for o in opened), *etc.values(), *devices.values(), *([socket] if socket is not None else [])]:
        os.close(fd)
    _pivot(new)


def prepare_home(spec: dict) -> None:
    """The run's HOME: the kernel's folders, the startup file that refuses the network, the notebook; the run's own."""
    home = Path(spec["env"]["HOME"])
    for folder in ("tmp", "cache", ".ipython/profile_default/startup", "runtime", ".jupyter", "data", "mpl"):
        (home / folder).mkdir(parents=True)
    (home / ".ipython/profile_default/startup/00-ragkit-sandbox.py").write_text(STARTUP, encoding="utf-8")
    (home / "submission.ipynb").write_bytes(base64.b64decode(spec["notebook"]))
    if spec["uid"] is not None:
        for p in [home, *home.rglob("*")]:
            os.lchown(p, spec["uid"], spec["gid"])


# Becoming nobody in particular


def _capabilities() -> dict[str, int]:
    """This process's capability sets, from /proc/self/status."""
    status = Path("/proc/self/status").read_text()
    return {line.split(":")[0]: int(line.split()[1], 16) for line in status.splitlines() if line.startswith("Cap")}


def drop(spec: dict) -> None:
    """Become the run's uid with no groups (or, as a teacher's own uid, drop every capability); no new privileges."""
    libc = _libc()
    limits = spec["limits"]
    if spec["uid"] is not None:
        os.setgroups([])
        os.setresgid(spec["gid"], spec["gid"], spec["gid"])
        os.setresuid(spec["uid"], spec["uid"], spec["uid"])
        resource.setrlimit(resource.RLIMIT_NPROC, (limits["processes"],) * 2)
    else:  # a user namespace's capabilities (needed to build the root) are given up before any notebook code runs
        for cap in range(64):
            libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
        libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
        data = (ctypes.c_uint32 * 6)()
        _check(libc.capset(header, data), "capset (drop every capability)")
    _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(no new privileges)")
    left = {k: v for k, v in _capabilities().items() if k in ("CapInh", "CapPrm", "CapEff", "CapAmb") and v}
    if left:
        raise PermissionError(f"capabilities left after dropping them ({left}): the notebook is not run")
    resource.setrlimit(resource.RLIMIT_AS, (limits["memory"],) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_size"],) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


# Running the notebook


def failed(failure: RunFailure) -> dict:
    """The report of a run that did not finish: the failure as a value, never a sentence."""
    return {"ran": False, "failure": failure.to_json()}


def _send(fd: int, report: dict) -> None:
    os.write(fd, json.dumps(report).encode("utf-8"))
    os.close(fd)


def _watch(km, done: threading.Event, report_fd: int) -> None:
    """End the run when the kernel process is gone before the last cell (nbclient would wait for the time limit)."""
    while not done.wait(1.0):
        if km.has_kernel and not km.is_alive() and not done.is_set():
            _send(report_fd, failed(RunFailure("kernel died")))
            os._exit(0)


def execute(spec: dict, report_fd: int) -> dict:
    """Run the notebook in a fresh kernel, then print the declared names' values; the report to send back."""
    import_nbformat_quickly()
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, DeadKernelError

    home = Path(spec["env"]["HOME"])
    try:
        nb = nbformat.read(home / "submission.ipynb", as_version=4)
    except Exception as exc:  # any unreadable notebook is a reason, not a crash
        return failed(RunFailure("not readable", error=type(exc).__name__, message=str(exc)[:200]))
    nb.cells = [c for c in nb.cells if c.get("cell_type") in ("code", "markdown", "raw")]
    args = f"{spec['names']!r}, {spec['functions']!r}, {[tuple(p) for p in spec['pairs']]!r}"
    nb.cells.append(nbformat.v4.new_code_cell(EXTRACT.format(sentinel=SENTINEL, args=args)))
    km = KernelManager(kernel_name="python3", transport="ipc", ip=str(home / "runtime" / "kernel"))
    # no time limit per cell: the grader's limit covers the whole run, kernel start included
    client = NotebookClient(
        nb, km=km, timeout=None, allow_errors=False, record_timing=False, resources={"metadata": {"path": str(home)}}
    )
    done, last = threading.Event(), len(nb.cells) - 1
    client.on_cell_error = lambda **_: done.set()
    client.on_cell_executed = lambda cell_index, **_: done.set() if cell_index == last else None
    threading.Thread(target=_watch, args=(km, done, report_fd), daemon=True).start()
    try:
        client.execute()
    except DeadKernelError:
        return failed(RunFailure("kernel died"))
    except CellExecutionError as exc:
        index = next(
            (
                i
                for i, c in enumerate(nb.cells)
                if c.get("cell_type") == "code" and any(o.get("output_type") == "error" for o in c.get("outputs", []))
            ),
            None,
        )
        number = index + 1 if index is not None else None
        return failed(RunFailure("cell raised", number=number, error=exc.ename, message=str(exc.evalue)[:300]))
    except Exception as exc:  # the kernel could not start or talk: the machine's fault, said to the teacher
        return failed(
            RunFailure("sandbox", text=f"the notebook could not be run ({type(exc).__name__}: {str(exc)[:300]})")
        )
    printed = "".join(o.get("text", "") for o in nb.cells[-1].get("outputs", []) if o.get("name") == "stdout")
    answers = next((line[len(SENTINEL) :] for line in reversed(printed.splitlines()) if line.startswith(SENTINEL)), "")
    return {"ran": True, "answers": answers}


def main() -> int:  # the ``python -m`` protocol's entry point: one name, in every module run with ``-m``
    """The child: read the spec, join the cgroup, build the root, drop privileges, run; one JSON report on stdout."""
    report_fd = os.dup(1)
    spec = json.loads(sys.stdin.buffer.read())
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)  # the spec's file is not the notebook's to read again
    os.close(null)
    try:
        if os.getuid() == 0 and spec["uid"] is None:
            raise PermissionError("a run as root without a uid of its own is refused")
        for procs in spec["cgroup"]:  # before anything forks: every process of the run is in the run's cgroup
            Path(procs).write_text("0")
        if spec["namespaces"]:
            build_root(spec)
        prepare_home(spec)
        if spec["namespaces"]:
            _mount(None, "/", None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
        drop(spec)
        if spec.get("probe"):
            _send(report_fd, {"ran": True})
            return 0
        log = os.open(Path(spec["env"]["HOME"]) / "kernel.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.environ.clear()
        os.environ.update(spec["env"])
        os.chdir(spec["env"]["HOME"])
        report = execute(spec, report_fd)
    except Exception as exc:  # whatever stops the sandbox is the reason it did not run: the machine's, the teacher's
        report = failed(
            RunFailure("sandbox", text=f"the sandbox could not run the notebook ({type(exc).__name__}: {exc})")
        )
    _send(report_fd, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
