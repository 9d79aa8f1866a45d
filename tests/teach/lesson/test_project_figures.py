"""The project page quotes no figure by hand: every marked figure of docs/project.md is recomputed and must agree."""

import pytest

from ragkit import project
from teacher import project as page

from conftest import ROOT

PAGE = ROOT / page.PAGE
EXAMPLE = ROOT / "data" / "example"


def test_the_page_marks_its_figures_once_each_way():
    from ragkit.teach.classroom.figures import quoted

    marked = quoted(PAGE.read_text(encoding="utf-8"))
    assert {"ex_chosen", "ex_verdict", "ex_cut", "ex_metric", "rules_needles", "run_e_dense_held"} <= set(marked)
    assert all(len(values) == 1 for values in marked.values()), {n: v for n, v in marked.items() if len(v) > 1}


@pytest.mark.slow  # runs the worked example's project: embeds its documents
def test_every_figure_the_project_page_quotes_is_the_computations_in_both_languages():
    from ragkit.teach.classroom.figures import quoted
    from teacher.rendering import written

    computed = page.figures(project.run_project(EXAMPLE), EXAMPLE)
    for language, path in page.PAGES.items():
        marked = quoted((ROOT / path).read_text(encoding="utf-8"))
        values = written(computed, language)
        assert set(marked) <= set(values), set(marked) - set(values)
        drift = {n: (marked[n], values[n]) for n in marked if marked[n] != {values[n]}}
        assert not drift, f"{path} ({language}) drifted (page, computed); `python -m teacher.project --write`: {drift}"


@pytest.mark.slow  # runs the worked example's project
def test_the_worked_examples_words_still_say_what_its_run_shows():
    """The page's words that no figure marks: the tuning half kept the baseline, the held-out half would have chosen
    another run, the verdict is one of no detectable difference, no needle is destroyed, and the cost rose held out."""
    outcome = project.run_project(EXAMPLE)
    assert outcome.chosen == outcome.plan.baseline and outcome.tuning.flattered
    assert outcome.challenge.verdict.kind == "consistent" and outcome.challenge.tuning.p >= 0.05
    assert not outcome.destroyed and outcome.cut is not None
    assert outcome.held_gate.cost > outcome.tuned_gate.cost
    assert outcome.tuned_gate.row.refused == outcome.plan.prices.max_refused * outcome.tuned_gate.row.in_domain
