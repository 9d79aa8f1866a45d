"""Binder's postBuild runs here, offline from the hub: installs, ships settings, says models are missing, warms."""

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_postbuild_steps_offline(tmp_path):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               RAGKIT_JUPYTER_PREFIX=str(tmp_path / "prefix"), RAGKIT_MODELS_DIR=str(tmp_path / "models"),
               HF_HUB_OFFLINE="1")
    done = subprocess.run(["bash", "binder/postBuild"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=1800)
    assert done.returncode == 0, done.stdout + done.stderr
    settings = json.loads((tmp_path / "prefix/share/jupyter/lab/settings/overrides.json").read_text())
    assert settings["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    assert "hub models NOT downloaded" in done.stdout and "needs internet" in done.stderr
    assert "cache warm:" in done.stdout


def test_shipped_settings_silence_the_news_prompt_and_start_the_notebook_kernel():
    settings = json.loads((ROOT / "binder" / "overrides.json").read_text())
    assert settings["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    assert settings["@jupyterlab/notebook-extension:tracker"]["autoStartDefaultKernel"] is True
    assert os.access(ROOT / "binder" / "postBuild", os.X_OK)
    assert "binder/overrides.json" in (ROOT / "Makefile").read_text()
