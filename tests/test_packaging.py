"""Ranges in pyproject.toml, exact pins in constraints.txt, and the conda and Binder files agree."""

import re
import subprocess
import sys
import tomllib
import zipfile

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from conftest import ROOT

TEACHER_ONLY = ("grading",)
"""Extras for the teacher's machine (nbgrader), left out of the students' conda and Binder environments."""
HUB_SIDE = ("jupyterhub", "nbgitpuller")
"""Test tools that belong to the hub, left out too: a hub puts them in its user environment at its own hub's
version (repo2docker already ships jupyterhub-singleuser matching mybinder.org's hub, which a pin here would
replace), and a laptop needs neither."""


def pyproject_requirements(students: bool = False) -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = project["dependencies"] + [d for name, group in project["optional-dependencies"].items()
                                      if not (students and name in TEACHER_ONLY) for d in group]
    requirements = [Requirement(d) for d in deps]
    return [r for r in requirements if not (students and canonicalize_name(r.name) in HUB_SIDE)]


def constraint_pins() -> dict[str, str]:
    pins = re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)\s*$", (ROOT / "constraints.txt").read_text(), re.M)
    return {canonicalize_name(name): version for name, version in pins}


def environment_pins(path) -> dict[str, str]:
    pins = re.findall(r"^\s+- ([A-Za-z0-9_.-]+)==(\S+)\s*$", path.read_text(), re.M)
    return {canonicalize_name(name): version for name, version in pins}


def test_every_pinned_version_satisfies_the_pyproject_range():
    pins = constraint_pins()
    for req in pyproject_requirements():
        name = canonicalize_name(req.name)
        assert name in pins, f"{name} has no exact pin in constraints.txt"
        assert req.specifier.contains(pins[name], prereleases=True), f"{name}=={pins[name]} outside {req.specifier}"


def test_ranges_have_a_lower_bound_no_cap_and_python_is_not_capped():
    """A lower bound each (tests/test_colab.py installs them all and runs on them); no upper bound, no pin."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11"
    for req in pyproject_requirements():
        assert [s.operator for s in req.specifier] == [">="], f"{req}: a range is one lower bound, nothing else"


def test_runtime_ranges_are_ranges_below_the_pins():
    """numpy, pandas and torch must not force an upgrade of what a hosted notebook already has."""
    pins = constraint_pins()
    lower = {canonicalize_name(r.name): next(s.version for s in r.specifier) for r in pyproject_requirements()}
    for name in ["numpy", "pandas", "torch", "scipy", "transformers", "sentence-transformers"]:
        assert Version(lower[name]) < Version(pins[name]), f"{name}>={lower[name]} is its pin {pins[name]}"
    assert Version(lower["numpy"]).major == 2 and Version(lower["pandas"]).major == 2


def test_conda_environment_pins_what_constraints_pin():
    conda = environment_pins(ROOT / "environment.yml")
    pins = constraint_pins()
    assert set(conda) == {canonicalize_name(r.name) for r in pyproject_requirements(students=True)}
    assert {name: pins[name] for name in conda} == conda


def test_binder_takes_the_pip_route_with_the_constraints():
    assert not (ROOT / "binder" / "environment.yml").exists(), "repo2docker would prefer it over requirements.txt"
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"
    lines = [line.strip() for line in (ROOT / "binder" / "requirements.txt").read_text().splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    assert "-c ../constraints.txt" in lines
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in lines
    names = {canonicalize_name(line) for line in lines if not line.startswith("-")}
    assert names == {canonicalize_name(r.name) for r in pyproject_requirements(students=True)}


def test_torch_is_the_cpu_build_everywhere():
    assert constraint_pins()["torch"] == "2.13.0"
    for name in ["environment.yml", "binder/requirements.txt", "Makefile"]:
        assert "whl/cpu" in (ROOT / name).read_text()


def test_the_wheel_carries_the_course_data(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path)], check=True, capture_output=True, timeout=300)
    (wheel,) = tmp_path.glob("ragkit-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {f"ragkit/_data/{p.relative_to(ROOT / 'data').as_posix()}"
              for p in (ROOT / "data").rglob("*") if p.is_file()}
    assert wanted and wanted <= names
    assert not any(n.startswith("data/") for n in names)
