"""The teacher's guide quotes no figure of the corpus by hand: every marked figure is recomputed and must agree."""

import pytest

import ragkit.teach.course
from ragkit.errors import DataError
from ragkit.teach.classroom.figures import quoted, render
from teacher import guide
from teacher.rendering import written

from conftest import NOTEBOOKS, ROOT

GUIDE = ROOT / "docs" / "teacher-guide.md"
PAGES = {language: ROOT / path for language, path in guide.PAGES.items()}
SOLUTIONS = ROOT / "notebooks" / "twins" / "solutions"
EX4 = ROOT / "notebooks" / "solutions" / "ex4-design-a-header.ipynb"


def test_markers_are_read_and_written_and_an_unknown_name_is_an_error():
    text = "cut <!--fig:a-->0.5<!--/fig--> and <!--fig:b-->3<!--/fig-->, again <!--fig:a-->0.6<!--/fig-->"
    assert quoted(text) == {"a": {"0.5", "0.6"}, "b": {"3"}}
    assert quoted(render(text, {"a": "0.7", "b": "4"})) == {"a": {"0.7"}, "b": {"4"}}
    with pytest.raises(DataError, match="nothing computes: b"):
        render(text, {"a": "0.7"})


@pytest.mark.parametrize("language", guide.PAGES)
def test_the_guide_marks_its_corpus_figures_once_each_way(language):
    marked = quoted(PAGES[language].read_text(encoding="utf-8"))
    assert {"ex2_cut", "ex2_cost", "ex3_ranks", "ex4_split", "ex5_median"} <= set(marked)
    assert all(len(values) == 1 for values in marked.values()), {n: v for n, v in marked.items() if len(v) > 1}


@pytest.mark.slow
def test_every_figure_the_guide_quotes_is_the_computations_in_both_languages():
    """Computed once, written in each language: the Dutch guide's figures are the computation's Dutch, by name."""
    computed = guide.figures(ragkit.teach.course.load(progress=False), SOLUTIONS)
    for language, page in PAGES.items():
        marked = quoted(page.read_text(encoding="utf-8"))
        values = guide.in_language(computed, NOTEBOOKS, language)
        assert set(marked) == set(values) | set(guide.EXECUTED), set(marked) ^ (set(values) | set(guide.EXECUTED))
        drift = {n: (marked[n], v) for n, v in values.items() if marked[n] != {v}}
        assert not drift, f"{page} drifted (guide, computed); `python -m teacher.guide --write`: {drift}"


def test_a_figure_is_written_in_each_language_from_one_value():
    from ragkit.statistics import Verdict
    from teacher.rendering import figure, listing, series, term, verbatim

    figures = {
        "cut": figure("{value:.3f}", value=0.5),
        "words": figure("{value:,}", value=4204),
        "of": figure("{k} of {n}", k=3, n=20),
        "ceiling": figure("over the ceiling"),
        "pair": figure("({k1:g}, {b:g})", k1=0.9, b=0.75),
        "ranks": listing([verbatim(2), verbatim(8), verbatim(58)], figure("none")),
        "none": listing([], figure("none")),
        "names": series([term("RRF k"), term("dense weight")]),
        "label": verbatim("E/dense"),
        "verdict": figure("{verdict}", verdict=Verdict("consistent", qualifier="neither detects a difference")),
    }
    assert written(figures, "en") == {
        "cut": "0.500",
        "words": "4,204",
        "of": "3 of 20",
        "ceiling": "over the ceiling",
        "pair": "(0.9, 0.75)",
        "ranks": "2, 8 and 58",
        "none": "none",
        "names": "RRF k, dense weight",
        "label": "E/dense",
        "verdict": "consistent: neither detects a difference",
    }
    assert written(figures, "nl") == {
        "cut": "0,500",
        "words": "4.204",
        "of": "3 van 20",
        "ceiling": "boven het plafond",
        "pair": "(0,9; 0,75)",
        "ranks": "2, 8 en 58",
        "none": "geen",
        "names": "RRF k, dense-gewicht",
        "label": "E/dense",
        "verdict": "consistent: geen van beide vindt een verschil",
    }


@pytest.mark.notebooks(EX4)
def test_the_guides_ex4_figures_are_the_solutions_header_measured_and_what_its_run_printed(executed):
    """Computed from the solution's header (after its run, which cached the vectors), and the run printed the same."""
    run = executed(EX4)
    assert not run.error, run.error
    printed = "\n".join(
        str(o.get("data", {}).get("text/markdown", "")) for c in run.notebook.cells for o in c.get("outputs", [])
    )
    measured = guide.ex4(ragkit.teach.course.load(progress=False), SOLUTIONS)
    computed = written(measured, "en")
    assert set(computed) == set(guide.EXECUTED)
    for language, page in PAGES.items():
        marked = quoted(page.read_text(encoding="utf-8"))
        assert {n: marked[n] for n in guide.EXECUTED} == {n: {v} for n, v in written(measured, language).items()}
    assert f"per needle: **{computed['ex4_split']}**, p = **{computed['ex4_p']}**" in printed
    assert f"the verdict: **{computed['ex4_verdict']}**" in printed


def test_a_twins_function_is_compiled_alone(tmp_path):
    twin = tmp_path / "twin.py"
    twin.write_text("raise SystemExit('ran')\n\ndef my_header(title, section):\n    return title.upper()\n")
    assert guide.defined(twin, "my_header")("a", "b") == "A"
    with pytest.raises(DataError, match="defines no function other"):
        guide.defined(twin, "other")


def test_checking_names_a_marked_figure_nothing_computes_and_writing_keeps_what_is_measured_elsewhere(tmp_path, capsys):
    from teacher.rendering import check_or_write

    pages = {"en": tmp_path / "en.md", "nl": tmp_path / "nl.md"}
    pages["en"].write_text("<!--fig:a-->1<!--/fig--> <!--fig:gone-->2<!--/fig-->\n", encoding="utf-8")
    pages["nl"].write_text("<!--fig:a-->1<!--/fig--> <!--fig:ex-->3<!--/fig-->\n", encoding="utf-8")
    values = {"en": {"a": "1"}, "nl": {"a": "1"}}
    assert check_or_write(pages, values, False, tmp_path, measured_elsewhere=("ex",)) == 1
    assert "en.md marks figures nothing computes: gone" in capsys.readouterr().out
    before = {language: page.read_text(encoding="utf-8") for language, page in pages.items()}
    assert check_or_write(pages, {"en": {"a": "9"}, "nl": {"a": "9"}}, True, tmp_path, ("ex",)) == 1
    assert {language: page.read_text(encoding="utf-8") for language, page in pages.items()} == before
    pages["en"].write_text("<!--fig:a-->1<!--/fig-->\n", encoding="utf-8")
    assert check_or_write(pages, values, False, tmp_path, measured_elsewhere=("ex",)) == 0
    assert check_or_write(pages, {"en": {"a": "1.5"}, "nl": {"a": "1,5"}}, True, tmp_path, ("ex",)) == 0
    assert pages["nl"].read_text(encoding="utf-8") == "<!--fig:a-->1,5<!--/fig--> <!--fig:ex-->3<!--/fig-->\n"
