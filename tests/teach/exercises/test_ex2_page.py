"""Exercise 2's page guides without answering: it shows the costs to reason with and names no cut that passes, a
student who only copies what the page and the feedback print never passes, every hint's code runs as written in the
notebook's namespace, and the judging half stays out of sight until the check has passed. The twin's code cells run
in one namespace, on the course's warm cache, and what each shows is kept as the student would see it."""

import ast
import os
import re
from pathlib import Path

import IPython.display
import jupytext
import numpy as np
import pytest
from IPython.display import Markdown

from ragkit.teach import exercises
from ragkit.teach.exercises import CUT_GRID, check_threshold_choice, cost_table, passed_here
from ragkit.teach.exercises.feedback import Feedback
from ragkit.teach.lesson import narrate, plots
from ragkit.threshold import CUT_RANGE

ROOT = Path(__file__).resolve().parents[3]
TWINS = ROOT / "notebooks" / "twins"
EX2 = {
    "en": TWINS / "exercises" / "ex2-choose-a-threshold.py",
    "nl": TWINS / "nl" / "exercises" / "ex2-choose-a-threshold.nl.py",
}
HINTS = ("Your answer", "Try this", "Jouw antwoord", "Probeer dit")
"""The headings of the cells whose code a student is told to type: the answer's hint and the try-this list."""
CUT = re.compile(r"(?<![\w.])\d*\.\d+(?![\w.])")
"""A number written with a decimal point, as a student would copy it into ``my_cut``."""


def run_page(path: Path, namespace: dict) -> list[object]:
    """Run a twin's code cells in ``namespace`` as a kernel would, and return what they show, in order: each
    ``display``ed object and each cell's last expression."""
    shown: list[object] = []
    real = IPython.display.display
    IPython.display.display = lambda *objects, **_: shown.extend(objects)
    try:
        for cell in jupytext.read(path).cells:
            if cell.cell_type != "code":
                continue
            tree = ast.parse(cell.source)
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, f"{path.name} cell", "exec"), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), f"{path.name} cell", "eval"), namespace)
                if value is not None:
                    shown.append(value)
    finally:
        IPython.display.display = real
    return shown


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The English ex2 run cell by cell in one namespace (its answer left as the student finds it: None), and what
    it shows under ``"shown"``."""
    results = tmp_path_factory.mktemp("ex2") / "results.jsonl"
    before = os.environ.get("RAGKIT_RESULTS")
    os.environ["RAGKIT_RESULTS"] = str(results)
    namespace: dict = {"__name__": "__main__"}
    try:
        shown = run_page(EX2["en"], namespace)
        yield {**namespace, "shown": shown}
    finally:
        if before is None:
            os.environ.pop("RAGKIT_RESULTS", None)
        else:
            os.environ["RAGKIT_RESULTS"] = before


def printed(thing: object) -> str:
    """What a student reads of one thing a cell shows: a sentence, a figure's words (its text alternative, labels and
    legend), a check's feedback. A table's rows are the costs to reason with, not a sentence to copy: finding the
    cheapest row within the ceiling is the exercise itself, so tables (and widgets: they need a kernel) are left out."""
    if isinstance(thing, Markdown):
        return thing.data
    if isinstance(thing, plots.Described):
        labels = [a.text for a in thing.layout.annotations or ()] + [t.name or "" for t in thing.data]
        return " ".join([thing.description, str(thing.layout.title.text or ""), *labels])
    if isinstance(thing, Feedback):
        return str(thing)
    return ""


def copied_cuts(text: str) -> set[float]:
    """Every number in ``text`` a student could paste as a cut (a decimal within the exercise's range)."""
    low, high = CUT_RANGE
    return {float(n) for n in CUT.findall(text) if low <= float(n) <= high}


def passing_cut(page) -> float:
    """A cut the check passes: the cheapest within the refusal ceiling on the check's grid, as the solution finds it."""
    table = cost_table(page["tune"])
    allowed = table[table["within ceiling"]]
    return float(allowed.cut[allowed.cost.idxmin()])


@pytest.mark.slow
def test_a_student_who_only_copies_what_the_page_and_the_feedback_print_never_passes(page):
    """The copy-paste student: every cut the page's sentences, figures and prose cells print, then every cut each
    answer's feedback prints, tried in turn. None passes: the page shows costs, the feedback a direction."""
    course = page["course"]
    prose = " ".join(c.source for c in jupytext.read(EX2["en"]).cells if c.cell_type == "markdown")
    words = " ".join(printed(thing) for thing in page["shown"])
    assert "cost_table(tune, [" in prose and words, "the page printed nothing to copy from"
    to_try = sorted(copied_cuts(prose + " " + words) | copied_cuts(str(check_threshold_choice(course, None))))
    tried: set[float] = set()
    while to_try:
        cut = to_try.pop()
        tried.add(cut)
        feedback = check_threshold_choice(course, cut)
        assert not feedback.passed, f"{cut}, copied from the page or its feedback, passes: {feedback}"
        to_try = sorted((set(to_try) | copied_cuts(str(feedback))) - tried)
    assert len(tried) >= 5, tried  # the page gave the student something to copy, and it led nowhere
    assert check_threshold_choice(course, passing_cut(page)).passed  # the cheapest cut within the ceiling does pass


@pytest.mark.slow
def test_the_page_shows_the_costs_and_the_ceiling_and_rings_the_valleys_over_it(page):
    course, costs, tune = page["course"], page["costs"], page["tune"]
    said = narrate.cost_valleys(costs, tune).data
    over = [float(c) for c in re.findall(r"\*\*([0-9.]+)\*\* \(cost \*\*[0-9.]+\*\*, \d+ refused\)", said)]
    assert over, said
    for cut in over:
        assert not costs["within ceiling"][costs["cut"] == cut].item()
        assert not check_threshold_choice(course, cut).passed
    last = float(re.search(r"every cut up to \*\*([0-9.]+)\*\* refuses more", said).group(1))
    assert last == float(costs.cut[~costs["within ceiling"]].max()) and not check_threshold_choice(course, last).passed
    figure = plots.cost_curve(costs)
    names = {trace.name for trace in figure.data}
    assert not names & {"True", "False"}, names
    assert not any(trace.marker.symbol == "star" for trace in figure.data), "the figure stars no cut"
    assert str(passing_cut(page))[:5] not in figure.description


@pytest.mark.slow
def test_wrong_answers_hear_which_way_to_go_and_never_where_the_pass_line_lies(page, monkeypatch, tmp_path):
    monkeypatch.setenv("RAGKIT_RESULTS", str(tmp_path / "results.jsonl"))  # a first attempt: its hint is given
    course = page["course"]
    best = passing_cut(page)
    for cut, hint in ((round(best + 0.1, 3), "try a lower cut"), (round(best - 0.1, 3), "higher")):
        said = str(check_threshold_choice(course, cut))
        assert "NOT YET" in said and hint in said, said
        assert "at most" not in said.split("refused", 2)[-1] and "cost at most" not in said, said


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
def test_the_judging_half_appears_only_once_the_check_has_passed(page, monkeypatch):
    monkeypatch.setattr(exercises.ex2_threshold, "_passed", set())  # a kernel where the check has passed nothing
    course = page["course"]
    before = plots.judging_half(course, page["my_cut"])  # Run All, nothing answered yet
    assert isinstance(before, Markdown) and "once the check has passed" in before.data
    cut = passing_cut(page)
    assert not passed_here(cut) and isinstance(plots.judging_half(course, cut), Markdown)  # never asked to judge it
    wrong = round(cut + 0.1, 3)
    assert not check_threshold_choice(course, wrong).passed
    assert isinstance(plots.judging_half(course, wrong), Markdown)
    assert check_threshold_choice(course, np.float64(cut)).passed and passed_here(cut)
    after = plots.judging_half(course, cut)
    assert isinstance(after, plots.Described) and {t.name for t in after.data} >= {"tune", "judge"}
    assert f"your cut, {cut:.3f}" in after.description and "judge (orange) cheapest within" in after.description
    judge = page["judge"]
    best = cost_table(judge)[lambda t: t["within ceiling"]].sort_values(["cost", "cut"]).iloc[0]
    assert f"judge (orange) cheapest within the refusal ceiling at {best.cut:.3f}" in after.description


def test_no_public_name_says_whether_a_cut_would_pass_without_the_check_recording_it(monkeypatch):
    """The judging half waits for the check's own pass in this kernel; nothing answers for a cut it has not judged."""
    monkeypatch.setattr(exercises.ex2_threshold, "_passed", set())
    assert not hasattr(exercises, "threshold_choice_passes") and not hasattr(
        exercises.ex2_threshold, "threshold_choice_passes"
    )
    assert not any(passed_here(c) for c in CUT_GRID)


def test_the_twin_shows_the_judging_half_through_the_check_and_never_draws_it_itself():
    code = "\n".join(c.source for c in jupytext.read(EX2["en"]).cells if c.cell_type == "code")
    assert "plots.judging_half(course, my_cut)" in code
    assert "cost_table(judge" not in code and "cost_halves" not in code
