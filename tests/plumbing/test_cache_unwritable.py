"""A read-only or full cache folder: ragkit warns once, naming the folder, and runs on without the cache.

Tested through the public surface only (``Embedder.encode`` in a child process), so the
storage behind it can change. The cache folder is a tmpfs in a private mount namespace (root
ignores file modes): mounted read-only, or filled to the last byte.
"""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

SCRIPT = """
import numpy as np
from ragkit.embedding import Embedder
texts = ["a read-only cache", "still answers"]
vectors = Embedder(backend="torch").encode(texts, progress=False)
again = Embedder(backend="torch").encode(texts, progress=False)
print("OK", vectors.shape, bool(np.allclose(vectors, again, atol=1e-6)))
"""


def check(done, folder):
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "OK (2, 384) True" in done.stdout
    assert done.stderr.count(str(folder)) == 1, f"expected one warning naming {folder}:\n{done.stderr}"


def run_on(tmp_path, prepare: str):
    """SCRIPT in a private mount namespace whose cache folder is a tmpfs set up by ``prepare``."""
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode:
        pytest.skip("needs unshare and user namespaces to mount a read-only or full folder")
    folder = tmp_path / "cache"
    folder.mkdir()
    script = tmp_path / "embed.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(ROOT), RAGKIT_CACHE=str(folder), HF_HUB_OFFLINE="1")
    command = f"{prepare.format(f=folder)} && exec '{sys.executable}' '{script}'"
    done = subprocess.run(["unshare", "-rm", "sh", "-c", command], capture_output=True, text=True, env=env, timeout=600)
    return done, folder


@pytest.mark.slow
def test_a_read_only_cache_folder_warns_once_and_runs(tmp_path):
    check(*run_on(tmp_path, "mount -t tmpfs -o ro,size=1m tmpfs '{f}'"))


@pytest.mark.slow
def test_a_full_cache_folder_warns_once_and_runs(tmp_path):
    fill = "(dd if=/dev/zero of='{f}/.fill' bs=4k 2>/dev/null || true)"
    check(*run_on(tmp_path, f"mount -t tmpfs -o size=64k tmpfs '{{f}}' && {fill}"))
