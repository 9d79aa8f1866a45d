"""The background warmer: never two at once, notebooks wait for its stages, an interrupted one frees them."""

import json
import os
import subprocess
import sys
import threading
import time

from ragkit.teach import warming

from conftest import ROOT

HOLDER = """
import fcntl, json, sys, time
lock = open(sys.argv[1] + "/warming.lock", "a")
fcntl.flock(lock, fcntl.LOCK_EX)
open(sys.argv[1] + "/warming.json", "w").write(json.dumps({"pid": 1, "done": []}))
print("held", flush=True)
time.sleep(120)
"""


def hold_lock(folder):
    """A stand-in warmer: a process that holds the lock and has finished no stage."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_warmer_leaves_the_first_one_to_finish(tmp_path):
    holder = hold_lock(tmp_path)
    try:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        done = subprocess.run([sys.executable, "-m", "ragkit", "warm", "--quiet", "--cache", str(tmp_path)],
                              capture_output=True, text=True, env=env, timeout=60)
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 0 and done.stderr == ""
    assert "another warmer is running" in done.stdout


def test_a_notebook_waits_for_the_stage_it_needs_and_no_longer(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path))
    monkeypatch.setattr(warming, "POLL_S", 0.02)
    holder = hold_lock(tmp_path)
    try:
        assert warming.warmer_running()
        waiter = threading.Thread(target=warming.wait_for, args=("E", False))
        waiter.start()
        waiter.join(0.5)
        assert waiter.is_alive(), "returned before the warmer had embedded E"
        (tmp_path / "warming.json").write_text(json.dumps({"pid": holder.pid, "done": ["E"]}))
        waiter.join(5)
        assert not waiter.is_alive(), "still waiting after E was done"
        t = time.perf_counter()
        warming.wait_for("E", False)
        assert time.perf_counter() - t < 0.5
    finally:
        holder.kill()
        holder.wait()


def test_an_interrupted_warmer_releases_the_notebooks(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path))
    monkeypatch.setattr(warming, "POLL_S", 0.02)
    holder = hold_lock(tmp_path)
    waiter = threading.Thread(target=warming.wait_for, args=("A", False))
    waiter.start()
    waiter.join(0.3)
    assert waiter.is_alive()
    holder.send_signal(2)
    holder.wait()
    waiter.join(5)
    assert not waiter.is_alive() and not warming.warmer_running()


def test_no_warmer_no_wait(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path / "fresh"))
    t = time.perf_counter()
    warming.wait_for("E")
    assert time.perf_counter() - t < 0.1 and not (tmp_path / "fresh").exists()


SPY = """
import os, sys
from ragkit.teach import warming
class Spy:  # reports, at the moment the warmer imports the course (seconds of work), whether it holds its lock
    def find_spec(self, name, path=None, target=None):
        if name == "ragkit.teach.course":
            print("locked" if warming.warmer_running() else "unlocked", flush=True)
            os._exit(0)
sys.meta_path.insert(0, Spy())
warming.warm()
"""


def test_the_warmer_holds_its_lock_before_its_heavy_imports(tmp_path):
    """A notebook opened while the warmer is still starting must already see a warmer to wait for."""
    env = dict(os.environ, RAGKIT_CACHE=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", SPY], capture_output=True, text=True, env=env, timeout=60)
    assert done.stdout.strip() == "locked", done.stderr


def test_a_background_warmer_holds_its_lock_when_start_returns(tmp_path, monkeypatch):
    """`make lab` starts JupyterLab only after this returns: by then a notebook finds the warmer to wait for."""
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path))
    message = warming.start_background(tmp_path / "warm.log", niceness=19)
    pid = json.loads((tmp_path / "warming.json").read_text())["pid"]
    try:
        assert warming.warmer_running() and f"pid {pid}" in message and "warm.log" in message
    finally:
        os.kill(pid, 15)
    deadline = time.monotonic() + 10
    while warming.warmer_running() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not warming.warmer_running()  # interrupted, it leaves no stale lock behind


def test_a_background_warmer_that_cannot_start_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path))
    holder = hold_lock(tmp_path)
    try:
        message = warming.start_background(tmp_path / "warm.log", niceness=0)
    finally:
        holder.kill()
        holder.wait()
    assert message.startswith("the warmer ended at once: another warmer is running")


class RecordingBar:
    """A stand-in for tqdm that remembers how it was left (a bar closed short of its total is drawn red)."""

    closed: list = []

    def __init__(self, total, **kwargs):
        self.total, self.n, self.leave = total, 0, True

    def refresh(self):
        pass

    def close(self):
        RecordingBar.closed.append((self.n, self.total, self.leave))


def test_a_finished_wait_leaves_a_full_bar_and_an_interrupted_one_no_bar(tmp_path, monkeypatch):
    import tqdm.auto

    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path))
    monkeypatch.setattr(warming, "POLL_S", 0.02)
    monkeypatch.setattr(tqdm.auto, "tqdm", RecordingBar)
    RecordingBar.closed = []
    holder = hold_lock(tmp_path)
    try:
        (tmp_path / "warming.json").write_text(json.dumps({"pid": holder.pid, "done": []}))
        waiter = threading.Thread(target=warming.wait_for, args=("queries", True))
        waiter.start()
        time.sleep(0.2)
        (tmp_path / "warming.json").write_text(json.dumps({"pid": holder.pid, "done": ["E", "queries"]}))
        waiter.join(5)
        waiter = threading.Thread(target=warming.wait_for, args=("A", True))
        waiter.start()
        time.sleep(0.2)
    finally:
        holder.kill()
        holder.wait()
    waiter.join(5)
    upto = {stage: warming.STAGES.index(stage) + 1 for stage in ("queries", "A")}  # stages embedded up to it
    assert RecordingBar.closed == [(upto["queries"], upto["queries"], True), (upto["queries"], upto["A"], False)]
