"""How much memory this process may still take: its cgroup's limit where one is set (a hub's spawner, a container),
else what the machine reports as available."""

from __future__ import annotations

from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")
MEMINFO = Path("/proc/meminfo")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None


def available(cgroup: Path = CGROUP, meminfo: Path = MEMINFO) -> int | None:
    """Bytes this process may still allocate, the smaller of its cgroup's room and the machine's MemAvailable; None
    when neither can be read (another operating system)."""
    found = []
    limit, used = _read(cgroup / "memory.max"), _read(cgroup / "memory.current")
    if limit and limit.isdigit() and used and used.isdigit():
        found.append(max(0, int(limit) - int(used)))
    for line in (_read(meminfo) or "").splitlines():
        name, _, value = line.partition(":")
        parts = value.split()
        if name == "MemAvailable" and parts and parts[0].isdigit():
            found.append(int(parts[0]) * 1024)
    return min(found) if found else None
