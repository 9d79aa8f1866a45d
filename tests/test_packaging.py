"""The conda and Binder environments list exactly the packages and pins of pyproject.toml."""

import re
import tomllib

import pytest

from conftest import ROOT


def pyproject_pins() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = project["dependencies"] + [d for group in project["optional-dependencies"].values() for d in group]
    return {d.lower().replace("_", "-") for d in deps}


def environment_pins(path) -> set[str]:
    lines = re.findall(r"^\s+- ([A-Za-z0-9_.-]+==\S+)\s*$", path.read_text(), re.M)
    return {line.lower().replace("_", "-") for line in lines}


@pytest.mark.parametrize("name", ["environment.yml", "binder/environment.yml"])
def test_environment_mirrors_pyproject(name):
    assert environment_pins(ROOT / name) == pyproject_pins()


def test_every_dependency_is_pinned_and_torch_is_the_cpu_build():
    pins = pyproject_pins()
    assert all("==" in p for p in pins)
    assert "torch==2.13.0" in pins
    for name in ["environment.yml", "binder/environment.yml"]:
        assert "whl/cpu" in (ROOT / name).read_text()
    assert "whl/cpu" in (ROOT / "Makefile").read_text()
