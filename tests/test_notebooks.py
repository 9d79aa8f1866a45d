"""Notebooks: pairs in sync, no outputs, kernelspec set; every one runs top to bottom on a fresh kernel."""

import json
import time
from pathlib import Path

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient

from conftest import ROOT

NOTEBOOKS = ROOT / "notebooks"
PAIRS = sorted(p for p in NOTEBOOKS.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
TIMINGS: dict[str, float] = {}
"""Seconds per executed notebook; conftest.py prints them after the run (a report, not a test)."""


def name(path: Path) -> str:
    return str(path.relative_to(NOTEBOOKS))


def test_there_are_notebooks_and_every_one_has_a_twin():
    assert PAIRS, "no notebooks found"
    for ipynb in PAIRS:
        assert ipynb.with_suffix(".py").is_file(), f"{name(ipynb)} has no py:percent twin"
    for py in NOTEBOOKS.rglob("*.py"):
        assert py.with_suffix(".ipynb").is_file(), f"{name(py)} has no .ipynb twin"


def _cells(notebook) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source.strip()) for c in notebook.cells]


@pytest.mark.parametrize("ipynb", PAIRS, ids=name)
def test_pair_in_sync_without_outputs_and_with_kernelspec(ipynb):
    nb = json.loads(ipynb.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3", "kernelspec missing: JupyterLab would ask for a kernel"
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert not cell["outputs"] and cell["execution_count"] is None, f"{name(ipynb)} carries outputs"
    a = jupytext.read(ipynb)
    b = jupytext.read(ipynb.with_suffix(".py"))
    assert _cells(a) == _cells(b), f"{name(ipynb)} and its .py twin differ: run `jupytext --sync {name(ipynb)}`"


def execute(path: Path) -> nbformat.NotebookNode:
    nb = jupytext.read(path.with_suffix(".py"))
    client = NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    t = time.perf_counter()
    client.execute()
    TIMINGS[name(path)] = time.perf_counter() - t
    return nb


def text_of(nb) -> str:
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            out.append(o.get("text", ""))
            out.extend(str(v) for v in o.get("data", {}).values())
    return "\n".join(out)


@pytest.mark.parametrize("ipynb", PAIRS, ids=name)
def test_notebook_runs_on_a_fresh_kernel(ipynb):
    nb = execute(ipynb)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    text = text_of(nb)
    if "exercises" in ipynb.parts and "solutions" not in ipynb.parts:
        assert "NOT YET" in text and "PASSED" not in text, "an unsolved exercise must not pass its check"
    if "solutions" in ipynb.parts:
        assert "PASSED" in text and "NOT YET" not in text, "a solution must pass its check"

