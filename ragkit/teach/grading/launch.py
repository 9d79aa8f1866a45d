"""The sandbox's launcher: a run's cgroup joined, its sources staged, its limits and uid taken, then bubblewrap.

The grader starts it by its path, as ``python -I -S .../launch.py``, with the run's spec (a root-owned file) on stdin
and the report's file on stdout: it imports nothing but the standard library (no site, no ragkit), so that a run pays
for one Python start-up of ragkit, the one inside. It joins the run's cgroup before anything forks, binds (as root)
every source where the run's uid can reach it (``staged``), takes the run's limits, becomes the run's uid with no
groups and no new privileges, and becomes ``bwrap`` (``arguments``), which builds the run's root in new user, mount,
PID, IPC, network, UTS and cgroup namespaces and runs ``ragkit.teach.grading.confinement`` there: the system's program
folders, the Python the grader runs on, ragkit and its course data and the snapshot of the teacher's cache, all bound
read-only; a written ``/etc`` beside a few of the host's; a fresh ``/proc`` and a ``/dev`` of five devices; HOME,
``/tmp`` and ``/dev/shm`` on tmpfs of bounded size; every mount ``nosuid`` and ``nodev`` but the devices, the root
read-only. Nothing else of the machine (other homes, ``/var/tmp``, ``/run`` and its sockets, ``/srv``, ``/mnt``) has
a path inside, no capability is left, no further user namespace can be made, and the keyrings and other kernel state
a run makes die with its user namespace.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import stat
import sys
from pathlib import Path

__all__ = ["DEVICES", "ETC", "HOME", "INSIDE", "SPEC", "arguments", "drop", "main", "staged"]

HOME = Path("/home/submission")
"""The submission's HOME inside the sandbox (a tmpfs)."""
SPEC = HOME / ".ragkit-spec.json"
"""Where the inside finds what it needs of the run's spec (and removes it, once read)."""
INSIDE = Path("/run/ragkit")
"""Where the snapshot of the teacher's cache (``seed``) and the lending socket (``embed.sock``) appear inside."""
DEVICES = ("null", "zero", "full", "random", "urandom")
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "nsswitch.conf")
"""The host's /etc entries a kernel reads (the loader's cache, the time zone); passwd, group and hosts are written."""
_PR_SET_NO_NEW_PRIVS = 38
_CLONE_NEWNS = 0x00020000
_MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18
_INNER = ("env", "notebook", "names", "functions", "pairs", "probe")
"""What of the spec the inside of the sandbox reads."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source: str | None, target: str | Path, fstype: str | None, flags: int, data: str | None = None) -> None:
    arg = [None if s is None else str(s).encode() for s in (source, target, fstype, data)]
    _check(_libc().mount(arg[0], arg[1], arg[2], ctypes.c_ulong(flags), arg[3]), f"mount {source} on {target}")


def staged(spec: dict) -> dict[str, str]:
    """As root: every source a run binds, bound again where the run's uid reaches it; {source: where bwrap finds it}.

    bwrap resolves each source's path as the run's uid, and the snapshot lies in a folder only root may enter (the
    grader's Python may lie in root's home too). So each is opened here, as root, and bound through its descriptor
    onto a tmpfs laid over the grader's own folder (``spec["view"]``) in a mount namespace of this process's own, which
    no one else sees and which ends with the run.
    """
    _check(_libc().unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)  # nothing mounted here reaches the host
    sources = [src for src, _ in spec["readonly"]] + ([spec["socket"]] if spec.get("socket") else [])
    opened = [(src, os.open(src, os.O_PATH | os.O_CLOEXEC)) for src in sources]  # before the view covers any
    view = Path(spec["view"])
    _mount("tmpfs", view, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755,size=64k")
    found = {}
    for n, (src, fd) in enumerate(opened):
        target = view / str(n)
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            target.mkdir()
        else:
            target.touch()
        _mount(f"/proc/self/fd/{fd}", target, None, _MS_BIND | _MS_REC)
        os.close(fd)
        found[src] = str(target)
    return found


def _data(text: str) -> str:
    """A descriptor holding ``text`` (an unnamed file in memory) for bwrap to copy into the sandbox."""
    fd = os.memfd_create("ragkit-sandbox-data", 0)
    os.write(fd, text.encode("utf-8"))
    os.lseek(fd, 0, os.SEEK_SET)
    os.set_inheritable(fd, True)
    return str(fd)


def arguments(spec: dict, sources: dict[str, str] | None = None) -> list[str]:
    """Bwrap's command line for a run: its namespaces, the whitelisted root and the inner child (``spec["inside"]``).

    The run's uid is the same inside and out (as root, the run's own; else the teacher's), so that what it leaves is
    found by it on the host. ``sources`` says where bwrap finds a source the run's uid could not reach (``staged``).
    """
    sources = sources or {}
    uid, gid = (spec["uid"], spec["gid"]) if spec["uid"] is not None else (os.getuid(), os.getgid())
    limits = spec["limits"]
    args = [spec["bwrap"], "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session"]
    args += ["--uid", str(uid), "--gid", str(gid), "--hostname", "sandbox"]
    args += [a for link in spec["links"] for a in ("--symlink", os.readlink(link), link)]  # /bin -> usr/bin
    for src, dst in sorted(spec["readonly"], key=lambda pair: len(Path(pair[1]).parts)):
        args += ["--ro-bind", sources.get(src, src), dst]
    for name in ETC:
        host = f"/etc/{name}"
        if os.path.islink(host):
            args += ["--symlink", os.readlink(host), host]
        elif os.path.lexists(host):
            args += ["--ro-bind", host, host]
    passwd = (
        f"root:x:0:0:root:/root:/usr/sbin/nologin\nsubmission:x:{uid}:{gid}:a submission:{HOME}:/usr/sbin/nologin\n"
    )
    args += ["--ro-bind-data", _data(passwd), "/etc/passwd"]
    args += ["--ro-bind-data", _data(f"root:x:0:\nsubmission:x:{gid}:\n"), "/etc/group"]
    args += ["--ro-bind-data", _data("127.0.0.1 localhost\n::1 localhost\n"), "/etc/hosts"]
    args += ["--proc", "/proc", "--perms", "0755", "--size", str(2**16), "--tmpfs", "/dev"]
    for name in DEVICES:  # a device works only on a mount without nodev: these five, nothing else
        args += ["--dev-bind", f"/dev/{name}", f"/dev/{name}"]
    for name, target in (("fd", "/proc/self/fd"), *((n, f"/proc/self/fd/{i}") for i, n in enumerate(_STANDARD))):
        args += ["--symlink", target, f"/dev/{name}"]
    args += ["--perms", "1777", "--size", str(limits["shm"]), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    args += ["--perms", "1777", "--size", str(limits["tmp"]), "--tmpfs", "/tmp"]
    args += ["--perms", "0700", "--size", str(limits["home"]), "--tmpfs", str(HOME)]
    inner = json.dumps({k: spec[k] for k in _INNER if k in spec})  # what the inside needs, read once and removed
    args += ["--perms", "0600", "--file", _data(inner), str(SPEC)]
    for path in spec["masked"]:  # a submissions folder inside a whitelisted one: covered by an empty, closed tmpfs
        args += ["--perms", "0000", "--size", "4096", "--tmpfs", path, "--remount-ro", path]
    if spec.get("socket"):
        args += ["--bind", sources.get(spec["socket"], spec["socket"]), str(INSIDE / "embed.sock")]
    return [*args, "--remount-ro", "/", "--chdir", "/", "--", *spec["inside"]]


_STANDARD = ("stdin", "stdout", "stderr")


def drop(spec: dict) -> None:
    """Take the run's limits, and (as root) become the run's uid with no groups; no new privileges either way."""
    limits = spec["limits"]
    resource.setrlimit(resource.RLIMIT_AS, (limits["memory"],) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_size"],) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if spec["uid"] is not None:
        os.setgroups([])
        os.setresgid(spec["gid"], spec["gid"], spec["gid"])
        os.setresuid(spec["uid"], spec["uid"], spec["uid"])
        resource.setrlimit(resource.RLIMIT_NPROC, (limits["processes"],) * 2)
    _check(_libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(no new privileges)")


def _failed(text: str) -> dict:
    """The report of a run the sandbox could not start: ``failures.RunFailure("sandbox", text=...)`` as JSON."""
    return {"ran": False, "failure": {"cause": "sandbox", "text": text[:500]}}


def main() -> int:
    """Read the spec, join the cgroup, stage the sources, take the limits and the uid, become bwrap."""
    spec = json.loads(sys.stdin.buffer.read())
    try:
        if os.getuid() == 0 and spec["uid"] is None:
            raise PermissionError("a run as root without a uid of its own is refused")
        for procs in spec["cgroup"]:  # before anything forks: every process of the run is in the run's cgroup
            Path(procs).write_text("0")
        command = arguments(spec, staged(spec) if spec["uid"] is not None else None)
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)  # the spec's file is not the run's to read
        drop(spec)
        os.execv(command[0], command)  # stdout stays the report's file, stderr the errors'
    except Exception as exc:  # whatever stops the sandbox is the reason it did not run: the machine's, the teacher's
        os.write(
            1, json.dumps(_failed(f"the sandbox could not run the notebook ({type(exc).__name__}: {exc})")).encode()
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
