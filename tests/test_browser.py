"""A real browser: JupyterLab runs the thresholds notebook, the slider moves by keyboard, the bluff count follows.

Debian's chromium, driven by Playwright (no browser download). Under CI=true a missing
browser fails the test; elsewhere it is skipped with a note.
"""

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import ragkit.course

from conftest import ROOT

CHROMIUM = Path("/usr/bin/chromium")
NOTEBOOK = "06-thresholds.ipynb"
ARTIFACTS = ROOT / "test-artifacts"
PRESSES = 30


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing: .ci/run must install Debian's chromium package")
        pytest.skip("no /usr/bin/chromium here (apt-get install chromium); CI runs this test")
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    settings = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false",
                                                                          "checkForUpdates": False}))
    # render every cell, even off-screen ones, so that the widget's elements have a size
    tracker = tmp_path / "settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none",
                                                                    "autoStartDefaultKernel": True}))
    port, token = free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               HF_HUB_OFFLINE="1")
    log = open(tmp_path / "lab.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--port={port}",
         "--ServerApp.ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path / 'notebooks'}"],
        env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        server.terminate()
        pytest.fail("JupyterLab did not start: " + (tmp_path / "lab.log").read_text()[-2000:])
    yield base, token
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
    log.close()


def test_moving_the_slider_changes_the_bluff_count_to_ragkits(lab):
    from playwright.sync_api import sync_playwright

    base, token = lab
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            cut_before, before, cut_after, after = drive(page, base, token)
        finally:
            page.screenshot(path=str(ARTIFACTS / "threshold-slider-moved.png"), full_page=False)
            browser.close()
    expected = ragkit.course.load(progress=False).sweep().at(cut_after).bluffs
    assert cut_after < cut_before
    assert after != before
    assert after == expected, f"the page shows {after} bluffs at {cut_after}, ragkit counts {expected}"


def drive(page, base: str, token: str) -> tuple[float, int, float, int]:
    """Open the notebook, run all cells, move the slider with the keyboard; the readouts before and after."""
    page.goto(f"{base}/lab/tree/{NOTEBOOK}?token={token}")
    page.wait_for_selector(".jp-Notebook", timeout=120_000)
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=120_000)
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_text("Run All Cells", exact=True).click()
    count = page.locator(".ragkit-bluff-count").first
    count.wait_for(state="attached", timeout=600_000)
    count.scroll_into_view_if_needed()
    before = int(count.inner_text())
    readout = page.locator(".widget-readout").first
    cut_before = float(readout.inner_text())
    handle = page.locator(".noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.click()
    for _ in range(PRESSES):
        page.keyboard.press("ArrowLeft")
    page.wait_for_function("(b) => document.querySelector('.ragkit-bluff-count').innerText != String(b)",
                           arg=before, timeout=30_000)
    time.sleep(1)  # let the last key's update arrive
    count.scroll_into_view_if_needed()
    return cut_before, before, float(readout.inner_text()), int(count.inner_text())
