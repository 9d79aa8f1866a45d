"""The tables notebooks 01 to 04 build in their own cells, in a Dutch kernel: Dutch headings, axis names and row
labels, ja/nee and decimal commas, the chapter's verdicts in Dutch; in English exactly what pandas (or the report)
showed before."""

import ast
import re
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from ragkit import STRATEGIES
from ragkit.statistics import Verdict
from ragkit.teach import language
from ragkit.teach.course import chapter
from ragkit.teach.lesson import claims, formats, tables

ROOT = Path(__file__).resolve().parents[3]
TWINS = ROOT / "notebooks" / "twins"
NL = ROOT / "notebooks" / "nl"


@pytest.fixture(autouse=True)
def english_again():
    """Each test starts in English and leaves the language as it found it (a use() left behind made later tests of
    the same worker, which read RAGKIT_LANGUAGE, speak English)."""
    with language.speaking("en"):
        yield


def both(frame: pd.DataFrame) -> tuple[str, str]:
    with language.speaking("en"):
        english = frame._repr_html_()
    with language.speaking("nl"):
        dutch = frame._repr_html_()
    assert not re.search(r">(True|False)<", english)  # English reads as the Dutch does: yes or no
    return english, dutch


def test_01s_strategies_destroyed_and_cuts_tables_have_dutch_headings_and_truths():
    strategies = formats.Frame(
        [
            {
                "strategy": k,
                "boundaries": s.boundaries,
                "header": s.header,
                "overlap": s.overlap,
                "name": s.name,
                "chunks": 738,
            }
            for k, s in STRATEGIES.items()
        ]
    ).set_index("strategy")
    _, dutch = both(strategies)
    assert "<th>naam</th>" in dutch and "<th>strategie</th>" in dutch and ">ja<" in dutch and ">False<" not in dutch
    assert ">boundaries + header<" in dutch  # the strategies' names are the chapter's, in both editions
    destroyed = formats.Frame(
        [{"strategy": "A", "name": "blind", "answers destroyed": 10, "of": 32, "which": "q03, q04"}]
    ).set_index("strategy")
    english, dutch = both(destroyed)
    assert "<th>answers destroyed</th>" in english
    assert all(f"<th>{h}</th>" in dutch for h in ("antwoorden vernietigd", "van", "welke"))
    cuts = formats.Frame([{"question": "q03", "needle length": 167, "before the cut": 98, "after the cut": 69}])
    cuts = cuts.set_index("question")
    cuts["cut in first 64?"] = cuts["before the cut"] <= 64
    cuts["saved by B?"] = [True]
    _, dutch = both(cuts)
    assert all(
        f"<th>{h}</th>" in dutch
        for h in (
            "vraag",
            "lengte van de needle",
            "voor de knip",
            "na de knip",
            "knip in de eerste 64?",
            "gered door B?",
        )
    )
    assert ">nee<" in dutch and ">ja<" in dutch and ">q03<" in dutch


def test_a_transposed_frame_shows_its_axis_name_and_its_row_labels_in_dutch_and_a_named_index_keeps_its_data():
    saturation = formats.Frame({"occurrences": [1, 2], "factor": [1.0, 1.375]}).set_index("occurrences").T
    english, dutch = both(saturation)
    assert ">occurrences<" in english and ">aantal keer<" in dutch and ">1,375<" in dutch
    phrasing = formats.Frame({"Hit@1": {"question": 0.469, "ticket": 0.094}})
    english, dutch = both(phrasing)
    assert ">question<" in english and ">vraag<" in dutch and ">supportticket<" in dutch and ">0,469<" in dutch
    deff = formats.Frame({"strategy": ["A", "E"], "metric": ["Hit@1", "Hit@1"], "design_effect": [0.99, 0.94]})
    deff = formats.Frame(deff.pivot(index="strategy", columns="metric", values="design_effect"))
    _, dutch = both(deff)
    assert ">metriek<" in dutch and ">strategie<" in dutch and ">0,99<" in dutch
    named = formats.Frame({"which": ["x"]}, index=pd.Index(["question"], name="id"))
    _, dutch = both(named)
    assert ">question<" in dutch  # a named index holds data: its labels stay as they are


def test_the_headings_01_to_03_build_have_their_dutch_and_those_for_people_shows_too():
    with language.speaking("nl"):
        headings = tables._lesson_headings()
    same = [en for en, nl in headings.items() if en == nl]
    assert not same, f"headings still English in a Dutch kernel: {same}"
    tokens = pd.DataFrame({"chunks": [738], "word pieces embedded": [103466], "over the window": [2]}, index=["A"])
    with language.speaking("nl"):
        shown = tables.for_people(tokens).to_html()
    assert ">geëmbedde word-pieces<" in shown and ">boven het venster<" in shown and ">103.466<" in shown


def line(verdict: Verdict) -> SimpleNamespace:
    test = SimpleNamespace(wins=12, losses=1)
    count = SimpleNamespace(test=test, p_holm=0.02)
    return SimpleNamespace(a="E/hybrid", b="E/bm25", metric="Hit@4", query=count, needle=count, verdict=verdict)


def test_the_chapters_claims_beside_ours_give_a_differs_verdict_in_dutch():
    rep = SimpleNamespace(line=lambda a, b, m: line(Verdict("differs", ahead="E/hybrid", wins=12, losses=1, p=0.02)))
    with language.speaking("en"):
        english = claims.beside(rep)  # type: ignore[arg-type]
    with language.speaking("nl"):
        dutch = claims.beside(rep)  # type: ignore[arg-type]
    assert len(english) == len(chapter.FINDINGS)
    assert set(english["verdict"]) == {"differs: ours finds E/hybrid ahead"}
    assert set(dutch["verdict"]) == {"verschilt: op dit corpus ligt E/hybrid voor"}
    rep = SimpleNamespace(
        line=lambda a, b, m: line(Verdict("inconclusive", "same direction", wins=12, losses=1, p=0.2))
    )
    with language.speaking("nl"):
        assert set(claims.beside(rep)["verdict"]) == {"onbeslist, zelfde richting"}  # type: ignore[arg-type]


def reports_shown_bare(source: str) -> list[str]:
    """The lines of a twin that show a ``report(...)`` as a cell's result or through display(), not through
    ``paired.comparisons`` (the report's own table is English whatever the kernel speaks)."""
    tree = ast.parse(source)
    names = {
        t.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "report"
        for t in node.targets
        if isinstance(t, ast.Name)
    }

    def a_report(node: ast.AST) -> bool:
        return (isinstance(node, ast.Name) and node.id in names) or (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "report"
        )

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr):
            value = node.value
            shown = [value] if a_report(value) else []
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "display":
                shown += [a for a in value.args if a_report(a)]
            found += [ast.unparse(node) for _ in shown]
    return found


def test_reports_shown_bare_finds_a_display_and_a_cells_last_name():
    source = "r = report(ev)\nr\ndisplay(report(ev))\npaired.comparisons(r)\ndisplay(paired.comparisons(r))\n"
    assert reports_shown_bare(source) == ["r", "display(report(ev))"]


@pytest.mark.parametrize("name", ["02-dense-retrieval", "02b-statistics-further", "03-bm25-and-hybrid", "04-reranking"])
def test_no_notebook_shows_a_report_in_english_in_a_dutch_kernel(name):
    assert not reports_shown_bare((TWINS / f"{name}.py").read_text(encoding="utf-8"))


DUTCH = {
    "01-chunking": [
        "<th>naam</th>",
        "<th>antwoorden vernietigd</th>",
        "<th>gered door B?</th>",
        "<th>knippen in code</th>",
        ">geëmbedde word-pieces<",
        ">begint met<",
    ],
    "02-dense-retrieval": [">bevat de needle<", "<th>supportticket</th>"],
    "02b-statistics-further": ["<th>metriek</th>", "verschilt: op dit corpus ligt E/hybrid voor"],
    "03-bm25-and-hybrid": [
        "<th>chunks waarin hij voorkomt</th>",
        "<th>aantal keer</th>",
        "<th>aandeel querywoorden in de needle</th>",
        "<th>hybrid beter dan beide</th>",
    ],
    "04-reranking": [">vergelijking<", ">dit corpus: E/hybrid+maxsim<"],
}


@pytest.mark.notebooks(*[NL / f"{n}.nl.ipynb" for n in DUTCH])
@pytest.mark.parametrize("name", list(DUTCH))
def test_the_dutch_notebooks_show_these_tables_in_dutch(name, executed):
    run = executed(NL / f"{name}.nl.ipynb")
    assert not run.error, run.error
    pages = [o.get("data", {}).get("text/html", "") for c in run.notebook.cells for o in c.get("outputs", [])]
    page = "\n".join(pages)
    missing = [w for w in DUTCH[name] if w not in page]
    assert not missing, f"{name}: not shown in Dutch: {missing}"
    english = [
        h
        for h in (
            "<th>answers destroyed</th>",
            ">carries the needle<",
            "<th>metric</th>",
            "differs: ours finds",
            "<th>hybrid ahead of both</th>",
            ">comparison<",
        )
        if h in page
    ]
    assert not english, f"{name} still shows {english}"
    assert not re.search(r"<td[^>]*>(True|False)</td>", page), f"{name} shows a truth as True/False"


def test_a_truth_in_a_frames_own_style_reads_ja_or_nee_in_dutch_and_yes_or_no_in_english():
    """02b's metric-shopping table: its column 'chosen by the chapter' through the notebook's own style."""
    shopping = formats.Frame({"comparison": ["E/dense vs A/dense"], "chosen by the chapter": [False], "p": [0.000519]})

    def shown():
        return shopping.style.format({"p": "{:.3g}"}).hide(axis="index").to_html()

    with language.speaking("en"):
        english = shown()
    with language.speaking("nl"):
        dutch = shown()
    assert ">no<" in english and ">False<" not in english and ">0.000519<" in english
    assert ">nee<" in dutch and ">False<" not in dutch and ">0,000519<" in dutch
    assert ">gekozen door het hoofdstuk<" in dutch


def test_04s_tables_name_the_chapters_figures_and_ours_in_dutch_and_keep_the_runs_names():
    chapter_and_ours = pd.DataFrame(
        {
            "Hit@1": {
                "the chapter: dense": 0.094,
                "the chapter: hybrid + rerank": 0.312,
                "ours: E/dense": 0.281,
                "ours: E/hybrid+rerank": 0.4,
            }
        }
    ).T
    with language.speaking("nl"):
        shown = tables.for_people(chapter_and_ours, decimals=dict.fromkeys(chapter_and_ours.columns, 3)).to_html()
    assert all(
        f">{h}<" in shown
        for h in (
            "het hoofdstuk: dense",
            "het hoofdstuk: hybrid + rerank",
            "dit corpus: E/dense",
            "dit corpus: E/hybrid+rerank",
        )
    ), shown
    # the MaxSim table: its figures written as text ("–" where the chapter gives none), its rows by run
    rows = pd.DataFrame(
        {
            "Hit@1": {"ours: E/hybrid+maxsim": "0.328", "the chapter: hybrid + cross-encoder": "0.312"},
            "Hit@4": {"ours: E/hybrid+maxsim": "0.641", "the chapter: hybrid + cross-encoder": "–"},
        }
    )
    with language.speaking("en"):
        english = tables.for_people(rows, decimals={"Hit@1": 3, "Hit@4": 3}).data
    with language.speaking("nl"):
        dutch = tables.for_people(rows, decimals={"Hit@1": 3, "Hit@4": 3}).to_html()
    assert english.equals(rows)
    assert ">dit corpus: E/hybrid+maxsim<" in dutch and ">het hoofdstuk: hybrid + cross-encoder<" in dutch
    assert ">0,328<" in dutch and ">–<" in dutch and "0.328" not in dutch
    moved = pd.DataFrame([{"query": "a query", "MaxSim at Hit@1": "wins", "hybrid rank": 2, "MaxSim rank": 1}])
    with language.speaking("nl"):
        dutch = tables.for_people(moved).to_html()
    assert all(f">{h}<" in dutch for h in ("MaxSim bij Hit@1", "rang bij hybrid", "rang bij MaxSim"))
