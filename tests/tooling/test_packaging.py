"""Ranges in pyproject.toml, exact pins in constraints.txt, and the conda and Binder files agree."""

import re
import shutil
import subprocess
import sys
import tomllib
import zipfile

import pytest
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
    deps = project["dependencies"] + [
        d
        for name, group in project["optional-dependencies"].items()
        if not (students and name in TEACHER_ONLY)
        for d in group
    ]
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
    """A lower bound each (test_colab.py installs them all and runs on them); no upper bound, no pin."""
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


BUILD_INPUTS = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "ragkit", "data")
"""What the build reads: copied apart, because setuptools packs whatever a checkout's build/lib holds from older builds
(a module since moved would ship again), and other runs in this checkout may be building at the same time."""


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory) -> set[str]:
    """The file names in a wheel built from this checkout's sources (without build isolation: offline)."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in BUILD_INPUTS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-q", "-w", str(out)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = out.glob("ragkit-*.whl")
    return set(zipfile.ZipFile(wheel).namelist())


def test_the_wheel_carries_the_course_data(wheel_names):
    wanted = {
        f"ragkit/_data/{p.relative_to(ROOT / 'data').as_posix()}" for p in (ROOT / "data").rglob("*") if p.is_file()
    }
    assert wanted and wanted <= wheel_names
    assert not any(n.startswith("data/") for n in wheel_names)


def test_the_wheel_carries_every_package_and_file_of_the_source_tree(wheel_names):
    """Packages are found, not listed: a new subpackage (a folder with an __init__.py) is never left out."""
    packages = [p.parent for p in (ROOT / "ragkit").rglob("__init__.py")]
    assert {"teach", "lesson", "narrate", "grading"} <= {p.name for p in packages}
    for package in packages:
        assert f"{package.relative_to(ROOT).as_posix()}/__init__.py" in wheel_names, f"{package} is not in the wheel"
    files = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "ragkit").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert "ragkit/teach/locale/nl.toml" in files
    assert sorted(files - wheel_names) == []
