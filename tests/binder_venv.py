"""Binder's install step (a fresh venv, ``pip install -r binder/requirements.txt``), startable early.

``make test`` starts it in the background before its own install (``python tests/binder_venv.py build/test-binder``),
so the two pip runs share the 2 cores while the suite's install leaves one idle; ``test_binder`` then takes that venv
if it was built from the files as they are now, with this Python, and never used, and else builds its own.
"""

import hashlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INPUTS = ("binder/requirements.txt", "constraints.txt")
STATE = "state.json"


def fingerprint(python: str) -> str:
    """What the venv is built from: the requirement files and the Python version."""
    digest = hashlib.sha256(python.encode())
    for name in INPUTS:
        digest.update((ROOT / name).read_bytes())
    return digest.hexdigest()


def environment(venv: Path) -> dict[str, str]:
    """The install's environment: this venv first on PATH, nothing of the suite's own imports."""
    env = dict(
        os.environ,
        PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
        VIRTUAL_ENV=str(venv),
        # where the CPU index is unreachable (this CI), fail each lookup there at once instead of
        # retrying it for every one of ~160 packages; Binder itself reaches the index
        PIP_RETRIES="0",
    )
    env.pop("PYTHONPATH", None)
    return env


def build(venv: Path, python: str = sys.executable) -> subprocess.CompletedProcess:
    """Create ``venv`` with ``python`` and install binder/requirements.txt into it, as repo2docker does."""
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    # --no-compile: repo2docker's pip byte-compiles what it installs; here that is half of the build's CPU (about
    # 30 s) for files the test never imports, and what it does import is compiled as it goes (the venv is ours)
    return subprocess.run(
        [venv / "bin/pip", "install", "--quiet", "--no-compile", "-r", "binder/requirements.txt"],
        cwd=ROOT,
        env=environment(venv),
        capture_output=True,
        text=True,
        timeout=2400,
    )


def version(python: str) -> str:
    return subprocess.run(
        [python, "-c", "import platform; print(platform.python_version())"], capture_output=True, text=True, check=True
    ).stdout.strip()


def build_early(folder: Path) -> int:
    """The background build: ``folder/venv``, then ``folder/state.json`` saying from what and whether it worked."""
    python = getattr(sys, "_base_executable", sys.executable)
    if _running(folder):  # an earlier run's build, still going (that run was stopped): this one replaces it
        os.kill(int((folder / "pid").read_text()), signal.SIGTERM)
    for made in (folder / STATE, folder / "pid"):
        made.unlink(missing_ok=True)
    shutil.rmtree(folder / "venv", ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pid").write_text(str(os.getpid()))
    start = time.monotonic()
    done = build(folder / "venv", python)
    state = {
        "fingerprint": fingerprint(version(python)),
        "returncode": done.returncode,
        "seconds": round(time.monotonic() - start, 1),
        "stderr": done.stderr[-3000:],
    }
    (folder / ".state.tmp").write_text(json.dumps(state))
    os.replace(folder / ".state.tmp", folder / STATE)
    return done.returncode


def _running(folder: Path) -> bool:
    try:
        os.kill(int((folder / "pid").read_text()), 0)
    except (OSError, ValueError):
        return False
    return True


def take_early(folder: Path, timeout: float = 2400) -> tuple[Path | None, str]:
    """The early venv once its build ends, if it fits this run (else None), and why it was or was not taken."""
    deadline = time.monotonic() + timeout
    while not (folder / STATE).is_file() and _running(folder) and time.monotonic() < deadline:
        time.sleep(1)
    if not (folder / STATE).is_file():
        return None, f"no early build in {folder}"
    text = (folder / STATE).read_text(errors="replace")
    (folder / STATE).unlink()  # taken once: a second run builds afresh
    try:
        state = json.loads(text)
        made_from, returncode = state["fingerprint"], state["returncode"]
    except (ValueError, KeyError, TypeError):
        return None, f"the early build's {STATE} cannot be read: {text[:80]!r}"
    if made_from != fingerprint(platform.python_version()):
        return None, "the early build was made from other requirement files or another Python"
    if returncode != 0:
        raise AssertionError(f"pip install -r binder/requirements.txt failed:\n{state['stderr']}")
    return folder / "venv", f"the venv `make test` built early ({state.get('seconds', '?')} s)"


if __name__ == "__main__":
    sys.exit(build_early(Path(sys.argv[1])))
