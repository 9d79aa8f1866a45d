"""Notebooks: pairs in sync, no outputs, kernelspec set; every one runs top to bottom on a fresh kernel.

Each notebook is executed once per run (the ``executed`` fixture of conftest.py); every test here and the
book's pages read that one run, and a second execution of the same notebook fails the test that started it.
"""

import json
import re
from pathlib import Path

import jupytext
import nbformat
import pytest

from ragkit.teach.language import catalogue

from conftest import ALL_NOTEBOOKS, LONGEST_FIRST, NOTEBOOKS, QUICK, QUICK_TEXTS, ROOT, ExecutionCount, batch

TWINS = NOTEBOOKS / "twins"
PAIRS = ALL_NOTEBOOKS


def name(path: Path) -> str:
    return str(path.relative_to(NOTEBOOKS))


def twin(ipynb: Path) -> Path:
    """The py:percent twin of a notebook, kept in notebooks/twins/ (see jupytext.toml)."""
    return TWINS / ipynb.relative_to(NOTEBOOKS).with_suffix(".py")


def test_there_are_notebooks_and_every_one_has_a_twin():
    assert PAIRS, "no notebooks found"
    for ipynb in PAIRS:
        assert twin(ipynb).is_file(), f"{name(ipynb)} has no py:percent twin in notebooks/twins/"
    for py in TWINS.rglob("*.py"):
        assert (NOTEBOOKS / py.relative_to(TWINS)).with_suffix(".ipynb").is_file(), f"{py} has no .ipynb twin"
    assert not [p for p in NOTEBOOKS.rglob("*.py") if TWINS not in p.parents], "a twin outside notebooks/twins/"


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
    b = jupytext.read(twin(ipynb))
    assert _cells(a) == _cells(b), f"{name(ipynb)} and its .py twin differ: run `jupytext --sync {name(ipynb)}`"


def text_of(nb) -> str:
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            out.append(o.get("text", ""))
            out.extend(str(v) for v in o.get("data", {}).values())
    return "\n".join(out)


def run_of(executed, ipynb: Path) -> nbformat.NotebookNode:
    """The notebook as its one run in this session left it; the test fails with the failing cell's error."""
    run = executed(ipynb)
    if run.error:
        pytest.fail(run.error, pytrace=False)
    return run.notebook


@pytest.mark.notebooks
@pytest.mark.parametrize("ipynb", PAIRS, ids=name)
def test_notebook_runs_on_a_fresh_kernel(ipynb, executed):
    nb = run_of(executed, ipynb)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    text = text_of(nb)
    passed, not_yet = verdict("PASSED", ipynb), verdict("NOT YET", ipynb)
    if "exercises" in ipynb.parts and "solutions" not in ipynb.parts:
        assert not_yet in text and passed not in text, "an unsolved exercise must not pass its check"
    if "solutions" in ipynb.parts:
        assert passed in text and not_yet not in text, "a solution must pass its check"


def verdict(word: str, ipynb: Path) -> str:
    """A check's verdict word in the notebook's language (the Dutch edition lives in notebooks/nl/)."""
    language = "nl" if ipynb.relative_to(NOTEBOOKS).parts[0] == "nl" else "en"
    message = catalogue(language).get(word)
    return word if message is None else message.translated


NAN_CELL = re.compile(r"<td[^>]*>\s*(NaN|nan|None|<NA>)\s*</td>")


def student_problems(nb) -> list[str]:
    """What a student must not meet in a run notebook: stderr, an error, NaN in a table."""
    problems = []
    for i, cell in enumerate(nb.cells):
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream" and o.get("name") == "stderr" and o.get("text", "").strip():
                problems.append(f"cell {i}: stderr: {o['text'].strip()[:300]}")
            if o.get("output_type") == "error":
                problems.append(f"cell {i}: error: {o.get('ename')}: {o.get('evalue', '')[:200]}")
            table = o.get("data", {}).get("text/html", "")
            if NAN_CELL.search(table):
                problems.append(f"cell {i}: a table shows {NAN_CELL.search(table).group(1)}")
    return problems


@pytest.mark.notebooks
@pytest.mark.parametrize("ipynb", PAIRS, ids=name)
def test_a_student_sees_no_stderr_no_error_and_no_nan(ipynb, executed):
    problems = student_problems(run_of(executed, ipynb))
    assert not problems, f"{name(ipynb)}:\n" + "\n".join(problems)


def test_student_problems_finds_each_kind():
    bad = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                outputs=[
                    nbformat.v4.new_output("stream", name="stderr", text="TruncationWarning: 3 of 9 texts"),
                    nbformat.v4.new_output("error", ename="KeyError", evalue="x", traceback=[]),
                    nbformat.v4.new_output("display_data", data={"text/html": "<td>NaN</td>"}),
                ]
            )
        ]
    )
    found = "\n".join(student_problems(bad))
    for what in ("stderr", "KeyError", "NaN"):
        assert what in found
    good = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                outputs=[
                    nbformat.v4.new_output("stream", name="stdout", text="fine"),
                    nbformat.v4.new_output("display_data", data={"text/html": "<td>0.790</td><td>-</td>"}),
                ]
            )
        ]
    )
    assert student_problems(good) == []


def test_a_notebook_executed_twice_in_one_run_fails():
    count = ExecutionCount(PAIRS[:2])
    first, second = (nbformat.read(p, as_version=4) for p in PAIRS[:2])
    count.record(first)
    count.record(second)
    count.record(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")]))  # not a project notebook
    count.record(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")]))
    with pytest.raises(AssertionError, match=f"{name(PAIRS[0])} executed 2 times in one test run"):
        count.record(nbformat.read(PAIRS[0], as_version=4))


def test_every_english_notebook_runs_before_any_dutch_one_and_each_once():
    """A Dutch twin beside its English notebook would compute what the English run then caches (conftest.batch)."""
    nl = NOTEBOOKS / "nl" / "solutions" / "ex4-design-a-header.nl.ipynb"
    en = NOTEBOOKS / "solutions" / "ex4-design-a-header.ipynb"
    first, done = NOTEBOOKS / "00-start-here.ipynb", NOTEBOOKS / "01-chunking.ipynb"
    assert batch([nl, en, first, nl, done], {done}) == [en, first, nl]
    everything = batch(list(reversed(ALL_NOTEBOOKS)), set())
    english = [p for p in everything if "nl" not in p.relative_to(NOTEBOOKS).parts]
    assert everything[: len(english)] == english and sorted(everything) == ALL_NOTEBOOKS


def test_the_groups_handed_out_first_are_the_notebooks_and_modules_that_exist():
    """A module renamed or gone from conftest's LONGEST_FIRST would go back to the end of the queue unnoticed."""
    modules = {p.stem for p in (ROOT / "tests").rglob("test_*.py")}
    assert LONGEST_FIRST[0] == "notebooks" and set(LONGEST_FIRST[1:]) <= modules, set(LONGEST_FIRST[1:]) - modules
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)


def test_a_quick_test_that_asks_for_more_texts_than_the_tier_allows_fails_before_embedding(monkeypatch):
    """The guard make check's budget rests on (conftest.py): it counts this test's texts, and refuses the 601st."""
    from ragkit.embedding import default_embedder

    assert QUICK["now"], "this test is in the quick tier, so the guard counts its texts"
    monkeypatch.setitem(QUICK, "texts", QUICK_TEXTS)
    with pytest.raises(pytest.fail.Exception, match=f"{QUICK_TEXTS + 1} texts .* mark it @pytest.mark.slow"):
        default_embedder().encode(["one text too many"], progress=False)


def test_a_notebook_executed_by_two_workers_of_one_run_fails(tmp_path):
    """Under pytest-xdist each worker counts in its own process: the run's shared log catches the second one."""
    log = tmp_path / "notebook-executions.txt"
    one, other = ExecutionCount(PAIRS[:2], log), ExecutionCount(PAIRS[:2], log)  # two workers of one run
    one.record(nbformat.read(PAIRS[0], as_version=4))
    other.record(nbformat.read(PAIRS[1], as_version=4))
    with pytest.raises(AssertionError, match=f"{name(PAIRS[0])} executed 2 times in one test run"):
        other.record(nbformat.read(PAIRS[0], as_version=4))
