"""The sandbox's uid sweep: a run's exited processes are not swept for again."""

import os
import subprocess
import sys
import time
from pathlib import Path

from ragkit.teach.grading.uids import running


def _state(pid: int) -> str:
    line = Path(f"/proc/{pid}/stat").read_text()
    return line[line.rfind(")") + 2]


def test_an_exited_unreaped_process_is_not_running_and_a_live_one_is():
    # a killed sandbox leaves its bubblewrap child a zombie until the machine's init reaps it; each sweep that counted
    # it as alive slept 0.1 s, three sweeps in every run
    zombie = os.fork()
    if zombie == 0:
        os._exit(0)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        deadline = time.monotonic() + 10
        while _state(zombie) != "Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _state(zombie) == "Z"
        found = running(os.getuid())
        assert zombie not in found
        assert live.pid in found
    finally:
        live.kill()
        live.wait()
        os.waitpid(zombie, 0)


def test_a_process_whose_main_thread_exited_while_another_runs_is_still_running():
    """/proc shows such a process as a zombie ("Zl"): the sweep must still kill it, its other thread can run."""
    code = (
        "import ctypes, threading, time\n"
        "threading.Thread(target=time.sleep, args=(30,)).start()\n"
        "ctypes.CDLL(None).pthread_exit(None)\n"
    )
    lingering = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 10
        while _state(lingering.pid) != "Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _state(lingering.pid) == "Z"
        assert lingering.pid in running(os.getuid())
    finally:
        lingering.kill()
        lingering.wait()
