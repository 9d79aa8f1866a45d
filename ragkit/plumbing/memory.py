"""How much memory this process may still take: its cgroup's limit where one is set (a hub's spawner, a container),
else what the machine reports as available."""

from __future__ import annotations

from pathlib import Path

__all__ = ["CGROUP", "FILES", "MEMINFO", "SELF", "UNLIMITED", "available"]

CGROUP = Path("/sys/fs/cgroup")
MEMINFO = Path("/proc/meminfo")
SELF = Path("/proc/self/cgroup")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None


UNLIMITED = 2**60
"""A cgroup v1 limit at or above this is the kernel's way of writing "no limit"."""
FILES = {2: ("memory.max", "memory.current"), 1: ("memory.limit_in_bytes", "memory.usage_in_bytes")}
"""A cgroup's memory limit and use, in cgroup v2 and in v1 (its own ``memory`` hierarchy)."""


def _own_cgroups(cgroup: Path, self_cgroup: Path) -> list[tuple[int, Path]]:
    """This process's memory cgroups (v2 from the ``0::`` line of ``/proc/self/cgroup``, v1 from its ``memory``
    line) and each of their parents up to the mount, with the version that says which files they hold."""
    found = []
    for entry in (_read(self_cgroup) or "0::/").splitlines():
        number, _, rest = entry.partition(":")
        controllers, _, path = rest.partition(":")
        if number == "0" and not controllers:
            version, base = 2, cgroup
        elif "memory" in controllers.split(","):
            version, base = 1, cgroup / "memory"
        else:
            continue
        parts = [part for part in path.split("/") if part and part not in (".", "..")]
        found += [(version, base.joinpath(*parts[:depth])) for depth in range(len(parts), -1, -1)]
    return found


def available(cgroup: Path = CGROUP, meminfo: Path = MEMINFO, self_cgroup: Path = SELF) -> int | None:
    """Bytes this process may still allocate: the least room any of its cgroups leaves (a limit may be set on a
    parent, as a hub's spawner does) and the machine's MemAvailable; None when nothing can be read."""
    found = []
    for version, folder in _own_cgroups(cgroup, self_cgroup):
        limit, used = (_read(folder / name) for name in FILES[version])
        if limit and limit.isdigit() and int(limit) < UNLIMITED and used and used.isdigit():
            found.append(max(0, int(limit) - int(used)))
    for line in (_read(meminfo) or "").splitlines():
        name, _, value = line.partition(":")
        parts = value.split()
        if name == "MemAvailable" and parts and parts[0].isdigit():
            found.append(int(parts[0]) * 1024)
    return min(found) if found else None
