"""The teacher's guide quotes no figure of the corpus by hand: every marked figure is recomputed and must agree."""

import pytest

import ragkit.teach.course
from ragkit.errors import DataError
from teacher import guide

from conftest import ROOT

GUIDE = ROOT / "docs" / "teacher-guide.md"
SOLUTIONS = ROOT / "notebooks" / "twins" / "solutions"
EX4 = ROOT / "notebooks" / "solutions" / "ex4-design-a-header.ipynb"


def test_markers_are_read_and_written_and_an_unknown_name_is_an_error():
    text = "cut <!--fig:a-->0.5<!--/fig--> and <!--fig:b-->3<!--/fig-->, again <!--fig:a-->0.6<!--/fig-->"
    assert guide.quoted(text) == {"a": {"0.5", "0.6"}, "b": {"3"}}
    assert guide.quoted(guide.render(text, {"a": "0.7", "b": "4"})) == {"a": {"0.7"}, "b": {"4"}}
    with pytest.raises(DataError, match="nothing computes: b"):
        guide.render(text, {"a": "0.7"})


def test_the_guide_marks_its_corpus_figures_once_each_way():
    marked = guide.quoted(GUIDE.read_text(encoding="utf-8"))
    assert {"ex2_cut", "ex2_cost", "ex3_ranks", "ex4_split", "ex5_median"} <= set(marked)
    assert all(len(values) == 1 for values in marked.values()), {n: v for n, v in marked.items() if len(v) > 1}


@pytest.mark.slow
def test_every_figure_the_guide_quotes_is_the_computations():
    marked = guide.quoted(GUIDE.read_text(encoding="utf-8"))
    values = guide.figures(ragkit.teach.course.load(progress=False), SOLUTIONS)
    assert set(marked) == set(values) | set(guide.EXECUTED), set(marked) ^ (set(values) | set(guide.EXECUTED))
    drift = {n: (marked[n], v) for n, v in values.items() if marked[n] != {v}}
    assert not drift, f"the guide's figures drifted (guide, computed); `python -m teacher.guide --write`: {drift}"


@pytest.mark.notebooks(EX4)
def test_the_guides_ex4_figures_are_the_solutions_header_measured_and_what_its_run_printed(executed):
    """Computed from the solution's header (after its run, which cached the vectors), and the run printed the same."""
    run = executed(EX4)
    assert not run.error, run.error
    printed = "\n".join(
        str(o.get("data", {}).get("text/markdown", "")) for c in run.notebook.cells for o in c.get("outputs", [])
    )
    marked = guide.quoted(GUIDE.read_text(encoding="utf-8"))
    computed = guide.ex4(ragkit.teach.course.load(progress=False), SOLUTIONS)
    assert set(computed) == set(guide.EXECUTED)
    assert {n: marked[n] for n in guide.EXECUTED} == {n: {v} for n, v in computed.items()}
    assert f"per needle: **{computed['ex4_split']}**, p = **{computed['ex4_p']}**" in printed
    assert f"the verdict: **{computed['ex4_verdict']}**" in printed


def test_a_twins_function_is_compiled_alone(tmp_path):
    twin = tmp_path / "twin.py"
    twin.write_text("raise SystemExit('ran')\n\ndef my_header(title, section):\n    return title.upper()\n")
    assert guide.defined(twin, "my_header")("a", "b") == "A"
    with pytest.raises(DataError, match="defines no function other"):
        guide.defined(twin, "other")
