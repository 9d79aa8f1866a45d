"""The memory a process may still take: its cgroup's room or the machine's MemAvailable, whichever is smaller."""

from ragkit.plumbing.memory import available


def test_the_smaller_of_the_cgroups_room_and_the_machines_available_memory(tmp_path):
    cgroup, meminfo = tmp_path / "cg", tmp_path / "meminfo"
    cgroup.mkdir()
    meminfo.write_text("MemTotal: 8000000 kB\nMemAvailable:    4000000 kB\n")
    assert available(cgroup, meminfo) == 4_000_000 * 1024  # no cgroup files: the machine's figure
    (cgroup / "memory.max").write_text("2147483648\n")
    (cgroup / "memory.current").write_text("1073741824\n")
    assert available(cgroup, meminfo) == 1073741824  # a hub's 2 GiB with 1 GiB used: 1 GiB left
    (cgroup / "memory.max").write_text("max\n")
    assert available(cgroup, meminfo) == 4_000_000 * 1024  # an unlimited cgroup: the machine decides


def test_nothing_readable_is_no_figure_not_an_error(tmp_path):
    (tmp_path / "meminfo").write_bytes(b"\xff\xfe not text")
    assert available(tmp_path / "no-cgroup", tmp_path / "meminfo") is None
    assert available(tmp_path / "no-cgroup", tmp_path / "missing") is None
