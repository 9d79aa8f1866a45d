"""Kernels that ragkit starts (the book builder, the tests' executions through it) use unix sockets, not TCP."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT

TINY = """
import sys
from pathlib import Path
import nbformat
from book.build import run_notebooks
path = Path(sys.argv[1])
nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")]), path)
run = run_notebooks([path], 1)[path]
print(run.error or run.notebook.cells[0].outputs[0]["text"].strip())
"""


@pytest.mark.slow
def test_the_book_builders_kernels_print_no_tcp_warning_and_leave_no_socket(tmp_path):
    """Defect: "Kernel is running over TCP without encryption" on the terminal for every kernel (14 in a `make
    book`); now the kernels speak over unix sockets in Jupyter's runtime folder, removed when they end."""
    runtime = tmp_path / "runtime"
    env = dict(os.environ, PYTHONPATH=str(ROOT), JUPYTER_RUNTIME_DIR=str(runtime))
    done = subprocess.run([sys.executable, "-c", TINY, str(tmp_path / "tiny.ipynb")], capture_output=True, text=True,
                          env=env, timeout=180, cwd=tmp_path)
    assert done.stdout.strip().endswith("42"), done.stdout + done.stderr
    assert "without encryption" not in done.stderr, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runtime", "tiny.ipynb"]  # no socket file in the folder
    assert list(runtime.iterdir()) == []  # nor left behind in the runtime folder
