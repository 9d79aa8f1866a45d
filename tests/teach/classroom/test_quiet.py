"""`make lab`'s terminal: the link, every real warning and error, ragkit's lines; not jupyter_server's chatter."""

import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from ragkit.teach.classroom.quiet import OURS, Quiet

from conftest import ROOT

NOISE = [
    (logging.INFO, "jupyter_lsp | extension was successfully linked."),
    (logging.INFO, "Skipped non-installed server(s): basedpyright, bash-language-server, pyright"),
    (logging.INFO, "Adapting from protocol version 5.3 (kernel 1) to 5.4 (client)."),
    (logging.WARNING, "Notebook my-notebooks/00-start-here.ipynb is not trusted"),
    (
        logging.WARNING,
        "The websocket_ping_timeout (90000) cannot be longer than the websocket_ping_interval "
        "(30000).\nSetting websocket_ping_timeout=30000",
    ),
]
SHOWN = [
    (logging.INFO, "Jupyter Server 2.21.1 is running at:"),
    (logging.INFO, "http://localhost:8888/ragkit/workspace?token=..."),
    (logging.INFO, "Use Control-C to stop this server and shut down all kernels (twice to skip confirmation)."),
    (logging.INFO, "Kernel started: 40f3a7d6"),
    (logging.WARNING, "404 GET /api/contents/missing.ipynb (127.0.0.1): No such file or directory"),
    (logging.WARNING, "Notebook validation failed: 'cells' is a required property"),
    (logging.ERROR, "Uncaught exception GET /api/kernels"),
    (logging.CRITICAL, "To access the server, copy and paste one of these URLs:\n    http://localhost:8888/lab"),
]


def record(level: int, message: str) -> logging.LogRecord:
    return logging.LogRecord("ServerApp", level, __file__, 1, message, None, None)


def test_the_filter_drops_the_chatter_and_the_two_empty_warnings_and_keeps_the_rest():
    quiet = Quiet()
    assert [m for level, m in NOISE if quiet.filter(record(level, m))] == []
    assert [m for level, m in SHOWN if not quiet.filter(record(level, m))] == []


def test_ragkits_own_lines_are_kept_by_their_mark_whatever_their_words():
    """The workspace's lines reach the terminal because ragkit marks them, not because a pattern reads their words
    (a reworded line was dropped when the filter looked for 'ragkit' at its start)."""
    quiet = Quiet()
    for said in ("ragkit workspace: Your notebooks are in /x/my-notebooks: work there.", "Your notebooks are in /x"):
        ours = record(logging.INFO, said)
        ours.__dict__.update(OURS)
        assert quiet.filter(ours), said
    assert not quiet.filter(record(logging.INFO, "ragkit-looking chatter from another extension"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # starts a jupyter server
def test_a_server_with_the_labs_terminal_settings_prints_its_link_and_real_warnings_only(tmp_path):
    config = tmp_path / "config"
    config.mkdir()
    shutil.copy(ROOT / "binder" / "jupyter_server_config.json", config / "jupyter_server_config.json")
    shutil.copy(ROOT / "binder" / "lab_terminal.json", config / "jupyter_config.json")  # as `make lab` installs it
    notebooks = tmp_path / "root"
    notebooks.mkdir()
    shutil.copy(ROOT / "notebooks" / "00-start-here.ipynb", notebooks)
    port, token = free_port(), "quiet"
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(config),
        JUPYTER_CONFIG_PATH=str(config),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTER_DATA_DIR=str(tmp_path / "data"),
    )
    argv = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        f"--port={port}",
        "--ServerApp.ip=127.0.0.1",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={notebooks}",
        "--ServerApp.port_retries=0",
    ]
    if os.geteuid() == 0:
        argv.append("--allow-root")
    log = tmp_path / "terminal.log"
    with open(log, "w") as out:
        server = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"

    def get(path: str) -> int:
        try:
            with urllib.request.urlopen(f"{base}{path}{'&' if '?' in path else '?'}token={token}", timeout=60) as r:
                return r.status
        except urllib.error.HTTPError as exc:
            return exc.code

    try:
        for _ in range(240):
            try:
                get("/api/status")
                break
            except OSError:
                time.sleep(0.25)
        assert get("/api/contents/00-start-here.ipynb?content=1") == 200  # an untrusted notebook opened
        assert get("/api/contents/missing.ipynb") == 404  # a real warning
        time.sleep(1)
    finally:
        server.terminate()
        server.wait(30)
    said = log.read_text()
    assert f"http://127.0.0.1:{port}/lab?token=..." in said and "Control-C" in said
    assert "404 GET /api/contents/missing.ipynb" in said
    for noise in (
        "is not trusted",
        "extension was successfully",
        "Skipped non-installed",
        "JupyterLab extension loaded",
        "logging_config' is found",
    ):
        assert noise not in said, f"{noise!r} reaches the terminal:\n{said}"
    assert len(said.splitlines()) <= 12, said
    assert json.loads((ROOT / "binder" / "lab_terminal.json").read_text())["ServerApp"]["logging_config"]
