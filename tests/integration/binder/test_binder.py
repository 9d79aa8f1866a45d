"""Binder's pip route, reproduced in a fresh venv: install binder/requirements.txt, run postBuild
offline from the hub, then execute 06 with nbclient in that venv's own kernel.

06 is the one notebook run there: it loads the course and draws the widgets and the plotly figures, where one
environment differs from another; 00's own checks (data, hub models) run in the suite's kernel with every other
notebook. postBuild's warm step shares the run's cache, so after `make test`'s warm step it embeds nothing new.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import binder_venv
import pytest

from conftest import ROOT

EXECUTE = """
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": sys.argv[2]}}).execute()
bad = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
kernel = [o["text"] for c in nb.cells for o in c.get("outputs", []) if "KERNEL-PREFIX" in o.get("text", "")]
print(len(bad), kernel, bad[:1])
"""


EARLY = ROOT / "build" / "test-binder"
"""Where `make test` builds the venv in the background before its own install (tests/binder_venv.py)."""


@pytest.fixture(scope="module")
def binder(tmp_path_factory):
    """A fresh venv built the way repo2docker builds Binder's: pip install -r binder/requirements.txt, postBuild."""
    root = tmp_path_factory.mktemp("binder")
    venv, how = binder_venv.take_early(EARLY)
    if venv is None:
        venv, how = root / "venv", f"built by this test ({how})"
        done = binder_venv.build(venv, sys._base_executable)
        assert done.returncode == 0, f"pip install -r binder/requirements.txt failed:\n{done.stderr[-3000:]}"
    print(f"\nthe Binder venv: {how}")
    env = dict(binder_venv.environment(venv), RAGKIT_MODELS_DIR=str(root / "models"), HF_HUB_OFFLINE="1")
    post = subprocess.run(["bash", "binder/postBuild"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    yield venv, env, post
    if venv.parent == EARLY:
        shutil.rmtree(venv)  # the early build is used once; the next `make test` builds it again


@pytest.mark.slow
def test_postbuild_runs_offline_ships_the_settings_and_warms(binder):
    venv, _, post = binder
    assert post.returncode == 0, post.stdout + post.stderr
    settings = json.loads((venv / "share/jupyter/lab/settings/overrides.json").read_text())
    assert settings["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    assert "hub models NOT downloaded" in post.stdout and "needs internet" in post.stderr
    assert "cache warm:" in post.stdout or "another warmer is running" in post.stdout


@pytest.mark.slow
def test_06_runs_in_the_binder_venv(binder, tmp_path):
    notebook = "06-thresholds"
    venv, env, post = binder
    assert post.returncode == 0
    nb = json.loads((ROOT / "notebooks" / f"{notebook}.ipynb").read_text())
    nb["cells"].append(
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": "import sys; print('KERNEL-PREFIX', sys.prefix)",
        }
    )
    copy = tmp_path / f"{notebook}.ipynb"
    copy.write_text(json.dumps(nb))
    done = subprocess.run(
        [venv / "bin/python", "-c", EXECUTE, str(copy), str(ROOT / "notebooks")],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("0 "), done.stdout
    assert f"KERNEL-PREFIX {venv}" in done.stdout, "the notebook ran in another environment's kernel"


def test_shipped_settings_silence_the_news_prompt_and_start_the_notebook_kernel():
    settings = json.loads((ROOT / "binder" / "overrides.json").read_text())
    assert settings["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    assert settings["@jupyterlab/notebook-extension:tracker"]["autoStartDefaultKernel"] is True
    assert os.access(ROOT / "binder" / "postBuild", os.X_OK)
    assert "binder/overrides.json" in (ROOT / "Makefile").read_text()
    assert not Path(ROOT / "binder" / "environment.yml").exists()


def _early(folder: Path, **state) -> Path:
    import platform

    (folder / "venv").mkdir(parents=True)
    state = {
        "fingerprint": binder_venv.fingerprint(platform.python_version()),
        "returncode": 0,
        "seconds": 1.0,
        "stderr": "",
        **state,
    }
    (folder / binder_venv.STATE).write_text(json.dumps(state))
    return folder


def test_the_early_venv_is_taken_once_and_only_if_built_from_these_files_with_this_python(tmp_path):
    assert binder_venv.take_early(tmp_path / "none", timeout=1)[0] is None  # `pytest` alone: the test builds one
    early = _early(tmp_path / "early")
    venv, how = binder_venv.take_early(early, timeout=1)
    assert venv == early / "venv" and "built early" in how
    assert binder_venv.take_early(early, timeout=1)[0] is None, "a used venv is not fresh: it is taken once"
    stale = _early(tmp_path / "stale", fingerprint="0" * 64)  # requirements edited since, or another Python
    assert binder_venv.take_early(stale, timeout=1) == (
        None,
        "the early build was made from other requirement files or another Python",
    )
    for garbage in ("{not json", "[1, 2]", '{"returncode": 0}', "\udcff"):  # a damaged or hand-written state file
        broken = tmp_path / f"broken-{len(garbage)}"
        broken.mkdir()
        (broken / binder_venv.STATE).write_text(garbage, errors="surrogateescape")
        venv, how = binder_venv.take_early(broken, timeout=1)
        assert venv is None and "cannot be read" in how and not (broken / binder_venv.STATE).exists()
    failed = _early(tmp_path / "failed", returncode=1, stderr="ERROR: No matching distribution found for numpy")
    with pytest.raises(AssertionError, match="No matching distribution found for numpy"):
        binder_venv.take_early(failed, timeout=1)


def test_make_test_starts_the_binder_venv_before_its_own_install_where_the_test_looks_for_it():
    make = (ROOT / "Makefile").read_text()
    assert "test: binder-early $(STAMP)" in make and "tests/binder_venv.py $(BINDER_EARLY)" in make
    assert "BINDER_EARLY := build/test-binder" in make and EARLY == ROOT / "build" / "test-binder"
