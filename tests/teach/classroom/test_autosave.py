"""A student's session never dirties the clone: a Jupyter server on a fresh `git clone`, every notebook opened, run
and saved through its contents and kernel APIs as JupyterLab does, then `git status` finds nothing changed.

What the front-end does, step by step: GET the notebook from the contents API, start a session (a kernel in the
notebook's folder), take the kernel's language_info into the notebook's metadata (what marked 00 modified on open),
execute cells over the kernel's websocket and keep their outputs, PUT the notebook back (autosave). Only the first
two code cells of each notebook run (the Colab cell and the imports: real code in every kernel, in a few seconds
each); the full executions belong to the `executed` fixture, which runs each notebook once per test run. The student
also adds a cell of their own to an exercise and saves it, as in the session the issue reports (`my_cut = 0.675`).
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
import websocket

from ragkit.plumbing.locations import cache_dir

from conftest import JOBS, ROOT

pytestmark = pytest.mark.slow
TOKEN = uuid.uuid4().hex
CELLS_RUN = 2
EDITED = "exercises/ex2-choose-a-threshold.ipynb"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A jupyter_server from this venv on 127.0.0.1 with token auth, rooted at ``root``; stopped by ``stop``."""

    def __init__(self, root: Path, home: Path):
        self.port, self.root = free_port(), root
        self.base = f"http://127.0.0.1:{self.port}"
        config = home / "config"
        config.mkdir()
        shipped = root / "binder" / "jupyter_server_config.json"  # what `make lab` and Binder install, a hub too
        if shipped.exists():
            shutil.copy(shipped, config / "jupyter_server_config.json")
        # the run's own warm cache: a clone's .ragkit-cache/ is empty, and its kernels would embed the course again
        env = dict(
            os.environ,
            PYTHONPATH=str(root),
            JUPYTER_CONFIG_PATH=str(config),
            RAGKIT_CACHE=str(cache_dir()),
            JUPYTER_RUNTIME_DIR=str(home / "runtime"),
            JUPYTER_DATA_DIR=str(home / "data"),
        )
        argv = [
            sys.executable,
            "-m",
            "jupyter_server",
            "--no-browser",
            f"--port={self.port}",
            "--ip=127.0.0.1",
            f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={root}",
            "--ServerApp.port_retries=0",
        ]
        if os.geteuid() == 0:
            argv.append("--allow-root")
        self.log = home / "server.log"
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=root)
        deadline = time.monotonic() + 90
        while True:
            try:
                self.request("GET", "/api/status")
                return
            except (urllib.error.URLError, ConnectionError):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise AssertionError("the server did not start:\n" + self.log.read_text()[-3000:]) from None
                time.sleep(0.25)

    def request(self, method: str, path: str, body: dict | None = None, follow: bool = True):
        """The JSON answer (or, with ``follow=False``, the status and Location of a redirect)."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            self.base + path,
            data=data,
            method=method,
            headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"},
        )
        opener = urllib.request.build_opener(*([] if follow else [NoRedirect()]))
        try:
            with opener.open(req, timeout=120) as answer:
                raw = answer.read()
                return json.loads(raw) if raw and follow else (answer.status, answer.headers.get("Location"))
        except urllib.error.HTTPError as exc:
            if not follow:
                return exc.code, exc.headers.get("Location")
            raise

    def stop(self) -> None:
        """Stop the server (its kernels with it): SIGTERM, then SIGKILL after 20 s."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def contents_path(rel: str) -> str:
    return "/api/contents/" + urllib.parse.quote(rel)


def opened(server: Server, notebook: str) -> str:
    """Where the lab opens a notebook of notebooks/: the course's link (/ragkit/workspace) when the server has it,
    else the tracked file itself (what `make lab` opened before the workspace existed)."""
    status, location = server.request("POST", "/ragkit/workspace?open=" + urllib.parse.quote(notebook), follow=False)
    if status == 404 and location is None:
        return f"notebooks/{notebook}"
    assert status == 302 and location, (status, location)
    return urllib.parse.unquote(urllib.parse.urlsplit(location).path.split("/lab/tree/", 1)[1])


def opened_outside(server: Server) -> int:
    return server.request("POST", "/ragkit/workspace?folder=..&open=00-start-here.ipynb", follow=False)[0]


def run_cells(server: Server, kernel: str, cells: list, session: str) -> None:
    """Execute ``cells`` over the kernel's websocket as the front-end does, writing outputs and counts into them."""
    ws = websocket.create_connection(
        f"ws://127.0.0.1:{server.port}/api/kernels/{kernel}/channels?session_id={session}",
        header=[f"Authorization: token {TOKEN}"],
        timeout=300,
    )
    try:
        for cell in cells:
            msg_id = uuid.uuid4().hex
            ws.send(
                json.dumps(
                    {
                        "header": {
                            "msg_id": msg_id,
                            "username": "student",
                            "session": session,
                            "msg_type": "execute_request",
                            "version": "5.3",
                            "date": "",
                        },
                        "parent_header": {},
                        "metadata": {},
                        "channel": "shell",
                        "buffers": [],
                        "content": {
                            "code": cell.source,
                            "silent": False,
                            "store_history": True,
                            "user_expressions": {},
                            "allow_stdin": False,
                            "stop_on_error": True,
                        },
                    }
                )
            )
            cell.outputs, replied, idle = [], False, False
            while not (replied and idle):
                msg = json.loads(ws.recv())
                if msg.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                kind = msg["header"]["msg_type"]
                if msg["channel"] == "shell" and kind == "execute_reply":
                    replied = True
                    cell.execution_count = msg["content"].get("execution_count")
                    assert msg["content"]["status"] == "ok", msg["content"]
                elif kind == "status":
                    idle = msg["content"]["execution_state"] == "idle"
                elif kind in ("stream", "display_data", "execute_result", "error"):
                    cell.outputs.append(nbformat.v4.output_from_msg(msg))
    finally:
        ws.close()


def language_info(server: Server, kernel: str, session: str) -> dict:
    """The kernel's language_info, asked over the websocket (JupyterLab writes it into the notebook's metadata)."""
    ws = websocket.create_connection(
        f"ws://127.0.0.1:{server.port}/api/kernels/{kernel}/channels?session_id={session}",
        header=[f"Authorization: token {TOKEN}"],
        timeout=120,
    )
    try:
        msg_id = uuid.uuid4().hex
        ws.send(
            json.dumps(
                {
                    "header": {
                        "msg_id": msg_id,
                        "username": "student",
                        "session": session,
                        "msg_type": "kernel_info_request",
                        "version": "5.3",
                        "date": "",
                    },
                    "parent_header": {},
                    "metadata": {},
                    "content": {},
                    "channel": "shell",
                    "buffers": [],
                }
            )
        )
        while True:
            msg = json.loads(ws.recv())
            reply = msg["header"]["msg_type"] == "kernel_info_reply"
            if reply and msg.get("parent_header", {}).get("msg_id") == msg_id:
                return msg["content"]["language_info"]
    finally:
        ws.close()


def session_of(server: Server, path: str, edit: bool) -> str:
    """Open, run and save one notebook the way JupyterLab does; the path it saved."""
    model = server.request("GET", contents_path(path) + "?type=notebook&content=1")
    nb = nbformat.from_dict(model["content"])
    session = server.request(
        "POST",
        "/api/sessions",
        {"path": path, "type": "notebook", "name": Path(path).name, "kernel": {"name": "python3"}},
    )
    kernel, client = session["kernel"]["id"], uuid.uuid4().hex
    try:
        nb.metadata["language_info"] = language_info(server, kernel, client)
        cells = [c for c in nb.cells if c.cell_type == "code"][:CELLS_RUN]
        if edit:
            nb.cells.append(nbformat.v4.new_code_cell("my_cut = 0.675\nprint(f'my cut: {my_cut}')"))
            cells.append(nb.cells[-1])
        run_cells(server, kernel, cells, client)
        server.request("PUT", contents_path(path), {"type": "notebook", "format": "json", "content": nb})
    finally:
        server.request("DELETE", f"/api/sessions/{session['id']}")
    return path


def test_a_students_session_through_the_server_leaves_the_clone_clean(tmp_path):
    """Defect: opening 00 marked it modified and autosave wrote outputs (and a student's edit) into the tracked
    notebooks and their twins, so `git pull` conflicted and `make book` published the edit."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, capture_output=True)
    tracked = sorted(
        p.relative_to(clone / "notebooks").as_posix()
        for p in (clone / "notebooks").rglob("*.ipynb")
        if "solutions" not in p.parts
    )  # a solution opens where it is tracked, to be read (below)
    assert len(tracked) >= 15
    server = Server(clone, tmp_path)
    try:
        with ThreadPoolExecutor(JOBS) as pool:  # two notebooks open at once, as a student with two tabs
            saved = list(pool.map(lambda rel: session_of(server, opened(server, rel), rel == EDITED), tracked))
        edited = server.request("GET", contents_path(saved[tracked.index(EDITED)]))["content"]
        if (clone / "binder" / "jupyter_server_config.json").exists():  # the link opens nothing outside the course
            assert opened_outside(server) == 400
            solution = "solutions/ex1-destroyed-needle.ipynb"  # not copied: opened where it is tracked, to be read
            assert opened(server, solution) == f"notebooks/{solution}"
            assert not (clone / "my-notebooks" / "solutions").exists()
    finally:
        server.stop()
    log = server.log.read_text()
    ran = [nbformat.read(clone / path, as_version=4) for path in saved]
    counts = [[c.execution_count for c in nb.cells if c.cell_type == "code"][:CELLS_RUN] for nb in ran]
    assert all(n == list(range(1, CELLS_RUN + 1)) for n in counts), f"not saved as run: {counts}"
    mine = edited["cells"][-1]  # the student's cell was saved, with its output, wherever the student's work lives
    assert "my_cut = 0.675" in mine["source"] and "my cut: 0.675" in mine["outputs"][0]["text"]
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout
    assert status == "", f"the session dirtied the clone:\n{status}"
    assert "without encryption" not in log, "a kernel ran over TCP (its warning reaches the terminal of `make lab`)"
    moved = re.search(r"ragkit: kernel sockets in (\S+)", log)  # this runtime folder's path is too long for sockets
    assert moved is None or not Path(moved.group(1)).exists(), "the short sockets folder was left behind"
