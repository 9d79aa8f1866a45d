"""Exercise 2's page guides instead of misleading: the cut its cost cell and its figure name passes the check, every
hint's code runs as written in the notebook's namespace, and the judging half stays out of sight until the check
has passed. The twin's code cells run in one namespace, on the course's warm cache."""

import ast
import os
import re
from pathlib import Path

import jupytext
import pytest
from IPython.display import Markdown

from ragkit.teach.exercises import check_threshold_choice, cost_table, threshold_choice_passes
from ragkit.teach.lesson import narrate, plots

ROOT = Path(__file__).resolve().parents[3]
TWINS = ROOT / "notebooks" / "twins"
EX2 = {
    "en": TWINS / "exercises" / "ex2-choose-a-threshold.py",
    "nl": TWINS / "nl" / "exercises" / "ex2-choose-a-threshold.nl.py",
}
HINTS = ("Your answer", "Try this", "Jouw antwoord", "Probeer dit")
"""The headings of the cells whose code a student is told to type: the answer's hint and the try-this list."""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The English ex2 run cell by cell in one namespace (its answer left as the student finds it: None)."""
    results = tmp_path_factory.mktemp("ex2") / "results.jsonl"
    before = os.environ.get("RAGKIT_RESULTS")
    os.environ["RAGKIT_RESULTS"] = str(results)
    namespace: dict = {"__name__": "__main__"}
    try:
        for cell in jupytext.read(EX2["en"]).cells:
            if cell.cell_type == "code":
                exec(compile(cell.source, f"{EX2['en'].name} cell", "exec"), namespace)
        yield namespace
    finally:
        if before is None:
            os.environ.pop("RAGKIT_RESULTS", None)
        else:
            os.environ["RAGKIT_RESULTS"] = before


def hint_code(twin: Path) -> list[str]:
    """Every inline code span of a hint cell that is Python (a column name such as `within ceiling` is not)."""
    spans = []
    for cell in jupytext.read(twin).cells:
        if cell.cell_type == "markdown" and any(h in cell.source.split("\n", 1)[0] for h in HINTS):
            for span in re.findall(r"`([^`]+)`", cell.source):
                try:
                    ast.parse(span)
                except SyntaxError:
                    continue
                spans.append(span)
    return spans


def passing_cut(page) -> float:
    """The cut the cost cell's sentence names as the cheapest within the refusal ceiling."""
    said = narrate.cost_valleys(page["costs"], page["tune"]).data
    found = re.search(r"the cheapest cut within the refusal ceiling \(.*?\) is \*\*([0-9.]+)\*\*", said)
    assert found, said
    return float(found.group(1))


@pytest.mark.slow
def test_the_cut_the_page_names_passes_the_check_and_the_valleys_over_the_ceiling_are_said_to_be(page):
    course, costs, tune = page["course"], page["costs"], page["tune"]
    named = passing_cut(page)
    assert check_threshold_choice(course, named).passed, f"the cost cell names {named}, which the check refuses"
    figure = plots.cost_curve(costs).description
    starred = float(re.search(r"The cheapest cut within the ceiling \(starred\): ([0-9.]+)", figure).group(1))
    assert starred == named and check_threshold_choice(course, starred).passed
    said = narrate.cost_valleys(costs, tune).data
    for cut in re.findall(r"\*\*([0-9.]+)\*\* \(cost \*\*[0-9.]+\*\*, \d+ refused: over the ceiling", said):
        assert not costs["within ceiling"][costs["cut"] == float(cut)].item()
        assert not check_threshold_choice(course, float(cut)).passed
    names = {trace.name for trace in plots.cost_curve(costs).data}
    assert not names & {"True", "False"}, names


@pytest.mark.slow
@pytest.mark.parametrize("spoken", ["en", "nl"])
def test_every_hints_code_runs_as_written_in_the_notebooks_namespace(page, spoken):
    spans = hint_code(EX2[spoken])
    assert any(s.startswith("cost_table(tune, ") for s in spans), spans  # the answer's hint is among them
    namespace = dict(page)
    namespace["my_cut"] = passing_cut(page)  # a student trying these has answered
    for span in spans:
        try:
            exec(compile(span, "hint", "exec"), namespace)
        except (NameError, AttributeError, KeyError, TypeError) as exc:
            pytest.fail(f"{EX2[spoken].name}: the hint `{span}` does not run as written: {exc!r}")


@pytest.mark.slow
def test_the_judging_half_appears_only_once_the_check_has_passed(page):
    course = page["course"]
    before = plots.judging_half(course, page["my_cut"])  # Run All, nothing answered yet
    assert isinstance(before, Markdown) and "once the check has passed" in before.data
    wrong = 0.34 if not threshold_choice_passes(course, 0.34) else 0.95
    assert isinstance(plots.judging_half(course, wrong), Markdown)
    cut = passing_cut(page)
    after = plots.judging_half(course, cut)
    assert isinstance(after, plots.Described) and {t.name for t in after.data} >= {"tune", "judge"}
    assert f"your cut, {cut:.3f}" in after.description and "judge (orange) cheapest within" in after.description
    judge = page["judge"]
    best = cost_table(judge)[lambda t: t["within ceiling"]].sort_values(["cost", "cut"]).iloc[0]
    assert f"judge (orange) cheapest within the refusal ceiling at {best.cut:.3f}" in after.description


def test_the_twin_shows_the_judging_half_through_the_check_and_never_draws_it_itself():
    code = "\n".join(c.source for c in jupytext.read(EX2["en"]).cells if c.cell_type == "code")
    assert "plots.judging_half(course, my_cut)" in code
    assert "cost_table(judge" not in code and "cost_halves" not in code
