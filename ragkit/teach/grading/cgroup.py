"""Limits for a whole sandbox run, not per process: a cgroup holding every process of the run, memory, count and CPU
bounded.

A per-process limit (``RLIMIT_AS``) lets three children of 3 GiB hold 9 GiB; a cgroup counts them together. CPU the
same: 300 busy children, each in a session of its own, share the run's quota of the cores and starve no other run.
Where the machine has cgroup v2 with the memory and pids controllers delegated, a run's group is made under
the nearest ancestor of the grader's own cgroup that hands them out (and the cpu controller, where it does too); on a
cgroup v1 machine (memory and pids hierarchies mounted writable, and cpu's where there is one), under the grader's
own group in each. Where neither can be written (no root, no delegation), ``hierarchy`` says why and the run keeps
only the per-process bounds.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CONTROLLERS", "CPU_PERIOD", "ROOT", "Hierarchy", "RunGroup", "hierarchy"]

ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids")
"""The controllers a run's group needs; ``cpu`` is taken too where the machine hands it out."""
CPU_PERIOD = 100_000
"""Microseconds of the CPU controller's period: a run may use its cores' share of each."""


@dataclass(frozen=True)
class Hierarchy:
    """Where run groups are made: one parent folder (v2) or one per controller (v1)."""

    version: int
    parents: tuple[Path, ...]
    cpu: bool = False
    """Whether a run's CPU is bounded too (v2: the cpu controller delegated; v1: the last parent is cpu's)."""

    def __str__(self) -> str:
        return f"cgroup v{self.version}"

    def create(self, name: str, memory: int, processes: int, cores: float | None = None) -> RunGroup:
        """A new group for one run, its memory (swap included), process count and (with ``cores``) CPU bounded."""
        folders = tuple(parent / name for parent in self.parents)
        made: list[Path] = []
        try:
            for folder in folders:
                folder.mkdir(mode=0o755)
                made.append(folder)
            quota = max(1000, round(CPU_PERIOD * cores)) if cores is not None and self.cpu else None
            if self.version == 2:
                _write(folders[0] / "memory.max", memory)
                _write(folders[0] / "memory.swap.max", 0, optional=True)
                _write(folders[0] / "pids.max", processes)
                if quota is not None:
                    (folders[0] / "cpu.max").write_text(f"{quota} {CPU_PERIOD}")
            else:
                for folder in folders:
                    if (folder / "memory.limit_in_bytes").exists():
                        _write(folder / "memory.limit_in_bytes", memory)
                        _write(folder / "memory.memsw.limit_in_bytes", memory, optional=True)
                    if (folder / "pids.max").exists():
                        _write(folder / "pids.max", processes)
                    if quota is not None and (folder / "cpu.cfs_quota_us").exists():
                        _write(folder / "cpu.cfs_period_us", CPU_PERIOD)
                        _write(folder / "cpu.cfs_quota_us", quota)
        except OSError:
            RunGroup(self.version, tuple(made)).remove()
            raise
        return RunGroup(self.version, folders)


def _write(path: Path, value: int, optional: bool = False) -> None:
    try:
        path.write_text(str(value))
    except FileNotFoundError:
        if not optional:
            raise


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


@dataclass(frozen=True)
class RunGroup:
    """One run's group (one folder per v1 hierarchy): joined by the run's first process, emptied and removed after."""

    version: int
    folders: tuple[Path, ...]

    @property
    def procs(self) -> list[str]:
        """The files a process writes ``0`` into to join the group (every process it starts then belongs to it)."""
        return [str(f / "cgroup.procs") for f in self.folders]

    def peak(self) -> int | None:
        """The most memory the run held at once, in bytes (None where the kernel does not say)."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        for folder in self.folders:
            text = _read(folder / name).strip()
            if text.isdigit():
                return int(text)
        return None

    def out_of_memory(self) -> bool:
        """Whether the memory bound stopped a process of the run."""
        for folder in self.folders:
            events = _read(folder / ("memory.events" if self.version == 2 else "memory.oom_control"))
            counts = dict(line.split()[:2] for line in events.splitlines() if len(line.split()) >= 2)
            if int(counts.get("oom_kill", "0") or 0) > 0:
                return True
        return False

    def pids(self) -> list[int]:
        """The processes in the group now."""
        return sorted({int(p) for f in self.folders for p in _read(f / "cgroup.procs").split() if p.isdigit()})

    def kill(self) -> None:
        """Kill every process of the run, repeatedly while one forks."""
        if self.version == 2 and (self.folders[0] / "cgroup.kill").exists():
            _write(self.folders[0] / "cgroup.kill", 1)
        for _ in range(50):
            alive = self.pids()
            if not alive:
                return
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)

    def remove(self) -> None:
        """Remove the group's folders once its processes are gone (a dying process takes a moment)."""
        for folder in self.folders:
            for _ in range(100):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _own(controller: str | None) -> str | None:
    """The grader's own cgroup path in the hierarchy of ``controller`` (None: the v2 hierarchy)."""
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        number, names, path = line.split(":", 2)
        if (controller is None and number == "0" and names == "") or (controller in names.split(",")):
            return path
    return None


def _mounts() -> list[tuple[str, Path, str, set[str]]]:
    """(root inside the hierarchy, mount point, type, options) of every cgroup mount."""
    found = []
    for line in _read(Path("/proc/self/mountinfo")).splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            found.append((fields[3], Path(fields[4]), tail[0], set(tail[2].split(","))))
    return found


def _inside(mount_root: str, mountpoint: Path, path: str) -> Path | None:
    relative = os.path.relpath(path, mount_root)
    return None if relative.startswith("..") else (mountpoint / relative).resolve()


def _v2() -> tuple[Hierarchy | None, str]:
    mount = next((m for m in _mounts() if m[2] == "cgroup2"), None)
    own = _own(None)
    if mount is None or own is None:
        return None, "no cgroup v2 hierarchy"
    folder = _inside(mount[0], mount[1], own)
    while folder is not None and folder.is_relative_to(mount[1]):
        handed = set(_read(folder / "cgroup.subtree_control").split())
        if set(CONTROLLERS) <= handed and os.access(folder, os.W_OK):
            return Hierarchy(2, (folder,), "cpu" in handed), ""
        folder = folder.parent if folder != mount[1] else None
    return None, "cgroup v2 here hands out no memory and pids controllers the grader may use (no delegation)"


def _v1() -> tuple[Hierarchy | None, str]:
    parents: list[Path] = []
    for controller in (*CONTROLLERS, "cpu"):
        mount = next((m for m in _mounts() if m[2] == "cgroup" and controller in m[3]), None)
        own = _own(controller)
        folder = _inside(mount[0], mount[1], own) if mount is not None and own is not None else None
        if folder is None or not os.access(folder, os.W_OK):
            if controller == "cpu":  # optional: the run keeps its memory and process bounds
                return Hierarchy(1, tuple(parents)), ""
            return None, f"no writable cgroup v1 {controller} hierarchy"
        if folder not in parents:  # cpu may share a mount with another controller
            parents.append(folder)
    return Hierarchy(1, tuple(parents), True), ""


def hierarchy() -> tuple[Hierarchy | None, str]:
    """Where this grader can bound whole runs (cgroup v2 first, then v1), or None and why not, in words."""
    if os.geteuid() != 0:
        return None, "the grader is not root, so it cannot make a cgroup for each run"
    found, why2 = _v2()
    if found is not None:
        return found, ""
    found, why1 = _v1()
    return (found, "") if found is not None else (None, f"{why2}; {why1}")
