"""The memory a process may still take: its cgroup's room or the machine's MemAvailable, whichever is smaller."""

from ragkit.plumbing.memory import available


def test_the_smaller_of_the_cgroups_room_and_the_machines_available_memory(tmp_path):
    cgroup, meminfo, own = tmp_path / "cg", tmp_path / "meminfo", tmp_path / "self"
    cgroup.mkdir()
    own.write_text("0::/\n")
    meminfo.write_text("MemTotal: 8000000 kB\nMemAvailable:    4000000 kB\n")
    assert available(cgroup, meminfo, own) == 4_000_000 * 1024  # no cgroup files: the machine's figure
    (cgroup / "memory.max").write_text("2147483648\n")
    (cgroup / "memory.current").write_text("1073741824\n")
    assert available(cgroup, meminfo, own) == 1073741824  # a hub's 2 GiB with 1 GiB used: 1 GiB left
    (cgroup / "memory.max").write_text("max\n")
    assert available(cgroup, meminfo, own) == 4_000_000 * 1024  # an unlimited cgroup: the machine decides


def test_the_processs_own_cgroup_and_its_parents_are_read_not_only_the_mounts_root(tmp_path):
    cgroup, own = tmp_path / "cg", tmp_path / "self"
    kernel = cgroup / "user.slice" / "jupyter-ada.service"
    kernel.mkdir(parents=True)
    own.write_text("0::/user.slice/jupyter-ada.service\n")
    (kernel / "memory.max").write_text("max\n")
    (kernel / "memory.current").write_text("100\n")
    (kernel.parent / "memory.max").write_text("1000\n")  # the spawner's limit, one level up
    (kernel.parent / "memory.current").write_text("400\n")
    assert available(cgroup, tmp_path / "no-meminfo", own) == 600
    (kernel / "memory.max").write_text("300\n")  # a tighter one on the kernel's own cgroup wins
    assert available(cgroup, tmp_path / "no-meminfo", own) == 200


def test_nothing_readable_is_no_figure_not_an_error(tmp_path):
    (tmp_path / "meminfo").write_bytes(b"\xff\xfe not text")
    assert available(tmp_path / "no-cgroup", tmp_path / "meminfo", tmp_path / "no-self") is None
    assert available(tmp_path / "no-cgroup", tmp_path / "missing", tmp_path / "no-self") is None


def test_a_cgroup_v1_memory_limit_counts_and_its_no_limit_does_not(tmp_path):
    cgroup, own = tmp_path / "cg", tmp_path / "self"
    kernel = cgroup / "memory" / "docker" / "abc"
    kernel.mkdir(parents=True)
    own.write_text("4:memory:/docker/abc\n1:cpu:/\n0::/\n")
    (kernel / "memory.limit_in_bytes").write_text("9223372036854771712\n")  # v1's "no limit"
    (kernel / "memory.usage_in_bytes").write_text("100\n")
    assert available(cgroup, tmp_path / "no-meminfo", own) is None
    (kernel / "memory.limit_in_bytes").write_text("1000\n")
    assert available(cgroup, tmp_path / "no-meminfo", own) == 900
