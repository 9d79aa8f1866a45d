"""The sandbox contains a hostile submission: no root, nothing left behind, no host socket, no one else's file, bounds.

Each test is an attack a student could make, run for real in the grader's sandbox. Where this machine cannot
give the protection a test needs (no root, no namespaces, no cgroup), the test is skipped, and under
``CI=true`` it fails: CI's machine has them.
"""

import json
import os
import select
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import nbformat
import pytest
from unprivileged import AS_NOBODY, python_for, site_path

from ragkit.teach.grading import isolation as isolations
from ragkit.teach.grading import uids
from ragkit.teach.grading.isolation import Limits
from ragkit.teach.grading.launch import HOME
from ragkit.teach.grading.sandbox import Sandbox

from conftest import ROOT

pytestmark = pytest.mark.slow

SOLUTIONS = ROOT / "notebooks" / "solutions"
TMPFS = {str(HOME), "/tmp", "/dev/shm"}
"""The only places a run may write: its own tmpfs."""


def _notebook(*cells: str) -> bytes:
    return nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])).encode()


def _needs(what: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what}; CI's machine has it (root, user namespaces, cgroups)")
    pytest.skip(what)


@pytest.fixture(scope="module")
def isolation():
    if os.geteuid() != 0:
        _needs("the grader's containment is tested as root")
    try:
        return isolations.probe()
    except isolations.SandboxUnavailable as exc:
        _needs(f"the sandbox cannot be built here: {exc}")


def _answers(run) -> dict:
    assert run.ran, str(run.failure)
    return {k: v["value"] for k, v in json.loads(run.answers).items()}


WRITE_EVERYWHERE = """
import os, shutil, stat
marker = {marker!r}
written, setuid = [], []
for top, folders, files in os.walk('/'):
    if top.startswith(('/proc', '/sys')):
        folders[:] = []
        continue
    try:
        path = os.path.join(top, marker)
        with open(path, 'w') as f:
            f.write('left behind')
        written.append(top)
        shell = os.path.join(top, marker + '-sh')
        shutil.copy('/bin/sh', shell)
        os.chmod(shell, 0o4755)
        setuid.append(shell)
    except OSError:
        pass
me = os.getuid()
"""

FIND_THE_SPEC = """
import os
tried = {}
for path in ['/proc/1/fd/0', '/proc/self/fd/0', '/etc/shadow', '/root/.bash_history']:
    try:
        tried[path] = open(path, 'rb').read(200).decode('latin-1')
    except OSError as exc:
        tried[path] = type(exc).__name__
specs = []
for top, folders, files in os.walk('/'):
    if top.startswith(('/proc', '/sys')):
        folders[:] = []
        continue
    specs += [os.path.join(top, f) for f in files
              if f == 'spec.json' or (f.endswith('.spec') and f[:-5].isdigit())]
ids = [os.getuid(), os.geteuid(), os.getgid(), os.getegid(), os.getgroups()]
"""


def test_a_run_leaves_no_setuid_file_and_cannot_reach_its_spec(isolation, tmp_path):
    """The chain that took root: a setuid copy left where the host is writable, then the next run's spec rewritten."""
    marker = f"ragkit-left-{uuid.uuid4().hex}"
    with Sandbox([tmp_path]) as sandbox:
        first = _answers(
            sandbox.run(_notebook(WRITE_EVERYWHERE.format(marker=marker)), "mallory", ("written", "setuid", "me"))
        )
        second = _answers(sandbox.run(_notebook(FIND_THE_SPEC), "mallory", ("tried", "specs", "ids")))
        out = sandbox.root / "out"
        assert stat.S_IMODE(sandbox.root.stat().st_mode) == 0o700 and sandbox.root.stat().st_uid == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o700 and out.stat().st_uid == 0
    outside = [f for f in first["written"] if not any(f == t or f.startswith(t + "/") for t in TMPFS)]
    assert outside == [] and str(HOME) in first["written"], outside
    assert first["setuid"], "the notebook could not even copy a shell into its own HOME"
    for folder in first["written"]:  # none of what it wrote exists on the host
        assert not os.path.lexists(os.path.join(folder, marker)) and not os.path.lexists(
            os.path.join(folder, marker + "-sh")
        )
    assert uids.leftovers(first["me"]) == []
    uid, euid, gid, egid, groups = second["ids"]
    assert 0 not in (uid, euid, gid, egid) and groups == [] and uid != first["me"]  # a fresh uid each run
    assert uid >= uids.SANDBOX_UIDS
    assert second["specs"] == []
    assert second["tried"]["/proc/1/fd/0"] in ("", "PermissionError")  # the spec's descriptor was closed
    assert second["tried"]["/etc/shadow"] == "FileNotFoundError"
    assert second["tried"]["/root/.bash_history"] in ("FileNotFoundError", "PermissionError")


def test_the_child_refuses_to_run_a_notebook_as_root(isolation):
    """A spec that names no uid, met by a child that is root, is refused: no rewrite of a spec can make a run root."""
    spec = isolations._probe_spec(True)
    spec["uid"] = None
    spec["probe"] = False
    out = isolations._child(spec)
    report = json.loads(out.stdout)
    failure = report["failure"]
    assert report["ran"] is False and failure["cause"] == "sandbox", report  # the machine's fault: the teacher's text
    assert "as root without a uid of its own is refused" in failure["text"]


def test_host_unix_sockets_are_unreachable(isolation, tmp_path):
    """A 0666 socket in /run, in /tmp and in /var/tmp, and an abstract one: the notebook reaches none of them."""
    name = uuid.uuid4().hex
    paths = [Path(f"/run/ragkit-test-{name}.sock"), tmp_path / "planted.sock", Path(f"/var/tmp/ragkit-{name}.sock")]
    servers, accepted = [], []
    try:
        for path in paths:
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(str(path))
            os.chmod(path, 0o666)
            servers.append(server)
        abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        abstract.bind(f"\0ragkit-test-{name}")
        servers.append(abstract)
        for server in servers:
            server.listen(1)

        done = threading.Event()

        def listen():  # until the run has ended, and once more after
            while True:
                last = done.is_set()
                for server in select.select(servers, [], [], 0.2)[0]:
                    accepted.append(server.accept())
                if last:
                    return

        listener = threading.Thread(target=listen)
        listener.start()
        targets = [str(p) for p in paths] + [f"\0ragkit-test-{name}"]
        cell = (
            "import socket\nreached = {}\n"
            f"for target in {targets!r}:\n"
            "    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
            "    try:\n        s.connect(target)\n        reached[target] = 'connected'\n"
            "    except OSError as exc:\n        reached[target] = type(exc).__name__\n"
        )
        with Sandbox([tmp_path]) as sandbox:
            reached = _answers(sandbox.run(_notebook(cell), "mallory", ("reached",)))["reached"]
        done.set()
        listener.join()
    finally:
        for server in servers:
            server.close()
        for path in paths:
            path.unlink(missing_ok=True)
    assert not accepted
    assert "connected" not in reached.values(), reached


def test_other_peoples_readable_files_are_not_there(isolation, tmp_path):
    """World-readable files outside every folder given (another student's, a teacher's gradebook): not even a path."""
    name = uuid.uuid4().hex
    planted = [
        Path(f"/srv/ragkit-{name}/grades-week1.csv"),
        Path(f"/var/tmp/ragkit-{name}/ex2.ipynb"),
        Path(f"/home/ragkit-{name}/notebooks/nl/ex2.ipynb"),
        Path(f"/opt/ragkit-{name}/results.jsonl"),
    ]
    try:
        for path in planted:
            path.parent.mkdir(parents=True, mode=0o755)
            path.write_text("someone else's")
            path.chmod(0o644)
        cell = (
            "import os\nread = {}\n"
            f"for path in {[str(p) for p in planted]!r}:\n"
            "    try:\n        read[path] = open(path).read()\n"
            "    except OSError as exc:\n        read[path] = type(exc).__name__\n"
            "top = sorted(os.listdir('/'))\nhomes = sorted(os.listdir('/home'))"
        )
        with Sandbox([tmp_path]) as sandbox:
            found = _answers(sandbox.run(_notebook(cell), "mallory", ("read", "top", "homes")))
            whitelisted = {Path(dst).parts[1] for _, dst in sandbox.readonly}
    finally:
        for path in planted:
            subprocess.run(["rm", "-rf", str(path.parent.parent if "home" in path.parts else path.parent)])
    assert set(found["read"].values()) == {"FileNotFoundError"}, found["read"]
    assert (
        set(found["top"])
        <= {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "dev", "etc", "home", "proc", "run", "tmp"} | whitelisted
    ), found["top"]
    assert found["homes"] == [HOME.name] or set(found["homes"]) <= {HOME.name} | whitelisted


def test_memory_is_bounded_for_the_whole_run_not_per_process(isolation, tmp_path):
    """Three children of 700 MB each under a bound of 1.5 GiB: they cannot all hold their memory at once."""
    if not isolation.run_limits:
        _needs(f"no cgroup for whole runs here: {isolation.notes}")
    cell = (
        "import subprocess, sys\n"
        "hold = 'import time; x = bytearray(700 * 2**20); x[::4096] = b\"x\" * len(x[::4096]); time.sleep(4)'\n"
        "children = [subprocess.Popen([sys.executable, '-c', hold]) for _ in range(3)]\n"
        "codes = [c.wait() for c in children]"
    )
    bound = 3 * 2**29
    with Sandbox([tmp_path], Limits(memory=bound, timeout=120)) as sandbox:
        run = sandbox.run(_notebook(cell), "mallory", ("codes",))
    assert run.memory is not None and run.memory <= bound
    if run.ran:
        codes = _answers(run)["codes"]
        assert codes.count(0) < 3, codes  # the bound killed at least one
    else:
        assert run.failure is not None and run.failure.memory_bound == bound, run
        assert str(run.failure).endswith("(the run reached its memory bound of 1.5 GiB, all its processes together)")


def test_processes_and_tmpfs_are_bounded(isolation, tmp_path):
    """A fork flood stops at the run's process bound; /tmp and HOME fill up at their sizes, the host's disk never."""
    cell = (
        "import os, subprocess\nstarted = 0\nchildren = []\n"
        "for _ in range(200):\n"
        "    try:\n        children.append(subprocess.Popen(['sleep', '30']))\n        started += 1\n"
        "    except OSError:\n        break\n"
        "for c in children:\n    c.kill()\n"
        "full = {}\n"
        "for folder in ('/tmp', os.path.expanduser('~'), '/dev/shm'):\n"
        "    try:\n        with open(os.path.join(folder, 'big'), 'wb') as f:\n"
        "            for _ in range(64):\n                f.write(b'x' * 2**20)\n"
        "        full[folder] = 'wrote 64 MiB'\n"
        "    except OSError as exc:\n        full[folder] = type(exc).__name__\n"
        "    finally:\n        big = os.path.join(folder, 'big')\n        os.path.exists(big) and os.remove(big)"
    )
    limits = Limits(processes=120, tmp=16 * 2**20, home=16 * 2**20, shm=16 * 2**20, timeout=120)
    with Sandbox([tmp_path], limits) as sandbox:
        found = _answers(sandbox.run(_notebook(cell), "mallory", ("started", "full")))
    assert found["started"] < 120, found
    assert set(found["full"].values()) == {"OSError"}, found["full"]


def test_a_teacher_without_root_gets_the_same_root_and_no_capability(isolation, request):
    """The grader run as an unprivileged user: the same whitelist root, inside a user namespace, no capability left."""
    as_nobody = AS_NOBODY
    python = python_for(as_nobody)
    base = Path(tempfile.mkdtemp(prefix="ragkit-nobody-"))  # not under pytest's 0700 folder
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    base.chmod(0o755)
    os.chown(base, 65534, 65534)
    probe = (
        "import json, sys\nfrom pathlib import Path\nimport nbformat\n"
        "from ragkit.teach.grading.sandbox import Sandbox\nfrom ragkit.teach.grading.isolation import Limits\n"
        "cell = ('import os\\nstatus = open(\"/proc/self/status\").read()\\n'\n"
        "        'caps = [l.split()[1] for l in status.splitlines()\\n'\n"
        '        \'        if l.startswith(("CapEff", "CapPrm"))]\\n\'\n'
        "        'top = sorted(os.listdir(\"/\"))\\nme = os.getuid()')\n"
        "nb = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])).encode()\n"
        "from ragkit.teach.grading.isolation import SandboxUnavailable\n"
        "try:\n"
        "    with Sandbox([Path(sys.argv[1])], Limits(timeout=60)) as sandbox:\n"
        "        run = sandbox.run(nb, 'carol', ('caps', 'top', 'me'))\n"
        "        print(json.dumps({'iso': str(sandbox.isolation), 'ran': run.ran, 'reason': str(run.failure),\n"
        "                          'answers': run.answers}))\n"
        "except SandboxUnavailable as exc:\n"
        "    print(json.dumps({'unavailable': str(exc)}))\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(base),
        "PYTHONPATH": f"{isolations.CHECKOUT}{os.pathsep}{site_path()}",
        "RAGKIT_CACHE": str(base / "cache"),
        "TMPDIR": str(base),
    }
    out = subprocess.run(
        [*as_nobody, python, "-c", probe, str(base)], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.splitlines()[-1])
    if "unavailable" in report:
        _needs(f"unprivileged user namespaces are off here: {report['unavailable']}")
    assert "not root" in report["iso"] and report["ran"], report
    answers = {k: v["value"] for k, v in json.loads(report["answers"]).items()}
    assert answers["caps"] == ["0000000000000000"] * 2 and answers["me"] == 65534
    allowed = {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "dev", "etc", "home", "proc", "run", "tmp"}
    assert set(answers["top"]) <= allowed | {Path(dst).parts[1] for _, dst in isolations.whitelist()}, answers["top"]


KERNEL_STATE = r"""
import ctypes, os, platform, socket, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
def add(description, keyring):
    made = libc.syscall(ADD_KEY, b"user", description, b"secret", 6, ctypes.c_int32(keyring))
    return made if made >= 0 else -ctypes.get_errno()
keys = {"user": add(b"ragkit-test-user", -4), "session": add(b"ragkit-test-session", -3)}
persistent = libc.syscall(KEYCTL, 22, ctypes.c_int32(-1), ctypes.c_int32(-2))  # KEYCTL_GET_PERSISTENT
keys["persistent"] = add(b"ragkit-test-persistent", persistent) if persistent > 0 else -ctypes.get_errno()
me = os.getuid()
hostname = socket.gethostname()
cgroups = open("/proc/self/cgroup").read().splitlines()
userns = subprocess.run(  # in a process of one thread, as unshare(2) asks
    [sys.executable, "-c", "import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
     "print(libc.unshare(0x10000000) or 'made', ctypes.get_errno())"], capture_output=True, text=True
).stdout.split()
"""


def test_kernel_state_a_run_makes_dies_with_it_and_it_makes_no_user_namespace(isolation, tmp_path):
    """Keys added to the run's user, session and persistent keyrings are gone after it; its hostname and cgroups are
    its own; no further user namespace can be made inside (issue 63, item 6)."""
    with Sandbox([tmp_path]) as sandbox:
        found = _answers(
            sandbox.run(_notebook(KERNEL_STATE), "mallory", ("keys", "me", "hostname", "cgroups", "userns"))
        )
    assert all(serial > 0 for serial in found["keys"].values()), found["keys"]  # the keys were made
    deadline, left = time.monotonic() + 10, ["not looked at yet"]
    while left and time.monotonic() < deadline:  # the kernel collects a dead namespace's keys in the background
        users = Path("/proc/key-users").read_text().splitlines()
        left = [line for line in users if line.split(":")[0].strip() == str(found["me"])]
        time.sleep(0.2)
    assert left == [], left
    assert found["hostname"] != socket.gethostname()
    assert not any("ragkit-sandbox" in line for line in found["cgroups"]), found["cgroups"]
    assert found["userns"][0] != "made", found["userns"]


FLOOD = """
import os, time
for _ in range(300):  # busy children, each in a session of its own
    if os.fork() == 0:
        os.setsid()
        while True:
            pass
time.sleep(3600)
"""


def test_a_cpu_flood_starves_no_classmate(isolation, tmp_path):
    """With --jobs 2, eve's notebook forks 300 busy children, each in a session of its own; ada's honest ex2 beside it
    still passes within --timeout 30 (each run holds its share of the cores, issue 63, item 3)."""
    if not isolation.cpu:
        _needs(f"no cpu controller for whole runs here: {isolation.notes}")
    from ragkit.teach.grading import grader

    home = tmp_path / "home"
    for who, name, nb in (
        ("ada", "ex2-choose-a-threshold.ipynb", nbformat.read(SOLUTIONS / "ex2-choose-a-threshold.ipynb", 4)),
        ("eve", "ex1-destroyed-needle.ipynb", nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(FLOOD)])),
    ):
        (home / who).mkdir(parents=True)
        nbformat.write(nb, home / who / name)
    result = grader.grade([home], "home", Limits(timeout=30), jobs=2, lending=False)
    rows = {(g.student, g.exercise): g for g in result.grades}
    assert rows["eve", "ex1"].grade == "not run" and "time limit of 30 s" in rows["eve", "ex1"].reason
    assert rows["ada", "ex2"].grade == "yes", rows["ada", "ex2"]
    # half the limit at most: a run drifting towards it fails here, clearly, before it flakes at the limit
    assert rows["ada", "ex2"].seconds < 15, f"ada's ex2 took {rows['ada', 'ex2'].seconds:.1f} s beside the flood"


def test_a_grader_whose_python_is_reached_through_a_link_runs_notebooks(isolation, tmp_path):
    """A .venv that is a link to a virtual environment elsewhere: the sandbox binds it where it really lies and starts
    the kernel from there, so the run finds its packages (it was "No module named 'nbformat'", issue 63, item 10)."""
    venv = Path(sys.prefix)
    if venv == Path(sys.base_prefix):
        pytest.skip("the tests run outside a virtual environment")
    linked = tmp_path / "linked-venv"
    linked.symlink_to(venv)
    script = (
        "import json, sys\nfrom pathlib import Path\nimport nbformat\n"
        "from ragkit.teach.grading.sandbox import Sandbox\nfrom ragkit.teach.grading.isolation import Limits\n"
        "cell = 'import nbformat, ragkit\\nx = nbformat.__name__'\n"
        "nb = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])).encode()\n"
        "with Sandbox([Path(sys.argv[1])], Limits(timeout=120)) as sandbox:\n"
        "    run = sandbox.run(nb, 'ada', ('x',))\n"
        "print(json.dumps({'ran': run.ran, 'why': str(run.failure), 'answers': run.answers}))\n"
    )
    out = subprocess.run(
        [str(linked / "bin" / Path(sys.executable).name), "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.splitlines()[-1])
    assert report["ran"], report["why"]
    assert json.loads(report["answers"])["x"]["value"] == "nbformat"
