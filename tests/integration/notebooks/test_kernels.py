"""Kernels that ragkit starts (the book builder, the tests' executions through it) use unix sockets, not TCP."""

import json
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
    done = subprocess.run(
        [sys.executable, "-c", TINY, str(tmp_path / "tiny.ipynb")],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        cwd=tmp_path,
    )
    assert done.stdout.strip().endswith("42"), done.stdout + done.stderr
    assert "without encryption" not in done.stderr, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runtime", "tiny.ipynb"]  # no socket file in the folder
    assert list(runtime.iterdir()) == []  # nor left behind in the runtime folder


FIRST_FIGURE = """
import json, sys
from pathlib import Path
import nbformat
from book.build import run_notebooks
path = Path(sys.argv[1])
cells = ["import plotly.graph_objects as go\\nfrom ragkit.teach.lesson import plots\\n"
         "plots.described(go.Figure(go.Bar(x=[1], y=[2])), 'One bar.')",
         "import json, sys\\nseen = {m: m in sys.modules for m in ('jsonschema', 'lark', 'rfc3987_syntax')}\\n"
         "import rfc3987_syntax\\nprint(json.dumps({**seen, 'importable': rfc3987_syntax.__name__}))"]
nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
run = run_notebooks([path], 1)[path]
print(run.error or run.notebook.cells[1].outputs[0]["text"].strip())
"""


@pytest.mark.slow
def test_a_kernels_first_ragkit_figure_imports_nbformat_without_building_the_iri_grammar(tmp_path):
    """plotly's renderer imports nbformat, and so jsonschema, which built rfc3987-syntax's grammar with lark (1.3 s of
    CPU before a student's first figure); ragkit's figures import it with that package hidden, only for that import."""
    import importlib.util

    if importlib.util.find_spec("rfc3987_syntax") is None:
        pytest.skip("rfc3987-syntax is not installed here, so there is no grammar to skip")
    env = dict(os.environ, PYTHONPATH=str(ROOT), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    done = subprocess.run(
        [sys.executable, "-c", FIRST_FIGURE, str(tmp_path / "figure.ipynb")],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"jsonschema": True, "lark": False, "rfc3987_syntax": False, "importable": "rfc3987_syntax"}, seen
