"""Running a Python as another, unprivileged user (the grader without root), where this machine allows it."""

import os
import subprocess
import sys

import pytest

AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def python_for(user: list[str]) -> str:
    """This interpreter, or the system's of the same version where this one sits in a folder ``user`` cannot enter."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for python in (sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        probe = [*user, "unshare", "--user", "--map-current-user", python, "-c", "pass"]
        if os.path.exists(python) and subprocess.run(probe, capture_output=True).returncode == 0:
            return python
    pytest.skip(f"no {version} that uid 65534 can run here ({sys.executable} sits in a folder it cannot enter)")


def site_path() -> str:
    """A PYTHONPATH of this interpreter's site-packages, for another interpreter of the same version."""
    return os.pathsep.join(p for p in sys.path if p.endswith("site-packages"))
