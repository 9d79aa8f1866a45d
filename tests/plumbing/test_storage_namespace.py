"""A shared file seen from a user namespace: owned by root outside (the overflow uid inside) and on a read-only mount,
nobody inside can change it; on a writable mount it is still refused (the grader's sandbox, issue 63)."""

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from unprivileged import AS_NOBODY, python_for, site_path

from conftest import ROOT

CHECK = (
    "import json, sys\nfrom pathlib import Path\nfrom ragkit.plumbing.storage import changeable_by_others\n"
    "print(json.dumps({p: changeable_by_others(Path(p)) for p in sys.argv[1:]}))"
)


def test_a_root_file_bound_read_only_into_a_user_namespace_is_trusted_and_a_writable_one_is_not(request):
    bwrap = shutil.which("bwrap")
    if bwrap is None or os.geteuid() != 0:
        pytest.skip("needs bwrap and root (to own the files and run the check as nobody)")
    python = python_for(AS_NOBODY)
    base = Path(tempfile.mkdtemp(prefix="ragkit-userns-"))  # not under pytest's 0700 folder
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    base.chmod(0o755)
    for name in ("ro", "rw"):
        (base / name).mkdir(mode=0o755)
        (base / name / "vectors.sqlite").write_bytes(b"root's")
        (base / name / "vectors.sqlite").chmod(0o644)
    out = subprocess.run(
        [*AS_NOBODY, bwrap, "--unshare-user", "--uid", "1000", "--gid", "1000", "--ro-bind", "/", "/"]
        + ["--bind", str(base / "rw"), str(base / "rw"), "--proc", "/proc", "--dev", "/dev", python, "-c", CHECK]
        + [str(base / "ro" / "vectors.sqlite"), str(base / "rw" / "vectors.sqlite")],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{ROOT}{os.pathsep}{site_path()}"},
        timeout=120,
    )
    if out.returncode != 0 and "setting up uid map" in out.stderr:
        pytest.skip(f"no unprivileged user namespaces here: {out.stderr}")
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    assert found[str(base / "ro" / "vectors.sqlite")] is None
    assert "who could change it" in found[str(base / "rw" / "vectors.sqlite")]
