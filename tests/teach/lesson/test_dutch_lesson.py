"""What the shared teaching layer draws and tabulates, in a Dutch kernel: headings, the ground truth's words, figure
titles, legends and text alternatives, the explorer's readout, and the decimal comma in tables and on axes; the numbers
are the English ones, and the English stays exactly as it was."""

import re
import sys
from pathlib import Path

import pandas as pd
import pytest

from ragkit.data import load_out_of_domain
from ragkit.teach import language
from ragkit.teach.lesson import claims, formats, plots, tables
from ragkit.threshold import SweepRow

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "teach"))  # test_language's helpers: both() and assert_dutch()
from test_language import assert_dutch, both  # noqa: E402


@pytest.fixture(autouse=True)
def english_again():
    """Each test starts in English and leaves the language as it found it (see test_dutch_tables_a)."""
    with language.speaking("en"):
        yield


def test_the_kinds_and_topics_of_an_out_of_domain_table_are_dutch_for_people_and_stay_english_in_the_frame():
    ood = pd.DataFrame([vars(o) for o in load_out_of_domain(ROOT / "data" / "out_of_domain.jsonl")])
    counted = ood.groupby(["kind", "topic"]).size().rename("queries").reset_index()
    with language.speaking("en"):
        english = tables.for_people(counted).data
    with language.speaking("nl"):
        dutch = tables.for_people(counted).data
        indexed = tables.for_people(counted.set_index(["kind", "topic"])).data
    assert english.equals(counted)  # English exactly as before
    assert list(dutch.columns) == ["soort", "onderwerp", "queries"] and list(dutch["queries"]) == list(counted.queries)
    assert set(dutch["soort"]) == {"aangrenzend", "absurd"}
    assert {"voetbal", "aardrijkskunde", "paspoorten", "beeldgeneratie", "vectordatabases"} <= set(dutch["onderwerp"])
    assert list(indexed.index.get_level_values("onderwerp")) == list(dutch["onderwerp"])
    assert list(counted["topic"]) == list(english["topic"])  # the frame a notebook's code reads is untouched
    # every topic of the ground truth has its Dutch (a new topic must be added to tables.ground_truth_words)
    words = tables.ground_truth_words()
    assert set(ood.topic) | set(ood.kind) <= set(words), set(ood.topic) - set(words)
    catalogue = language.catalogue("nl")
    assert all(w in catalogue for w in words), [w for w in words if w not in catalogue]


def test_a_sum_row_and_04s_wins_and_losses_are_words_of_the_notebooks_language():
    """00's corpus table ends in a row named total; 04's table says whether MaxSim won or lost each query."""
    corpus = pd.DataFrame({"id": ["01-vectors", "total"], "characters": [10, 10]}).set_index("id")
    duel = pd.DataFrame({"query": ["a", "b"], "MaxSim at Hit@1": ["wins", "loses"]})
    with language.speaking("en"):
        assert list(tables.for_people(corpus).data.index) == ["01-vectors", "total"]
        assert list(tables.for_people(duel).data["MaxSim at Hit@1"]) == ["wins", "loses"]
    with language.speaking("nl"):
        assert list(tables.for_people(corpus).data.index) == ["01-vectors", "totaal"]
        assert list(tables.for_people(duel).data.iloc[:, 1]) == ["gewonnen", "verloren"]


def test_08s_stored_tables_keep_the_databases_column_names_and_its_other_tables_speak_dutch():
    """A student queries the index by its own column names (SELECT reason ...): 08 shows them as they are."""
    stored = pd.DataFrame(
        {"strategy": ["E"], "window": ["256"], "reason": [""], "size": ["512"], "status": ["indexed"]}
    )
    states = pd.DataFrame({"document": ["01"], "status": ["indexed"]})
    stamp = pd.DataFrame({"value": ["384", "E", "True"]}, index=["dimensions", "strategy", "normalised"])
    with language.speaking("nl"):
        kept = tables.for_people(stored, stored=True).to_html()
        shown = tables.for_people(states).to_html() + tables.for_people(stamp).to_html()
    assert all(f">{c}<" in kept for c in stored.columns) and ">indexed<" in kept, kept  # WHERE status = 'indexed'

    assert ">geïndexeerd<" in shown and ">dimensies<" in shown and ">indexed<" not in shown
    assert ">ja<" in shown and ">True<" not in shown  # the stamp's truth, written as text by the notebook


def test_a_frame_styled_by_a_notebooks_own_format_writes_the_kernels_decimal_separator():
    frame = formats.Frame({"cut": ["0.675"], "binary accuracy": [0.4255319]})
    with language.speaking("en"):
        english = frame.style.format({"binary accuracy": "{:.3f}"}).hide(axis="index").to_html()
    with language.speaking("nl"):
        dutch = frame.style.format({"binary accuracy": "{:.3f}"}).hide(axis="index").to_html()
        plain = frame.style.to_html()
    assert ">0.426<" in english and ">0,426<" in dutch and ">0,425532<" in plain
    small = formats.Frame({"p": [2.46e-07, 0.0312]})
    with language.speaking("nl"):
        dutch = small.style.format({"p": "{:.3g}"}).to_html()
    assert ">2,46 · 10⁻⁷<" in dutch and ">0,0312<" in dutch and "e-07" not in dutch  # a power of ten the Dutch way
    counts = formats.Frame({"n": [1068, 3]})
    with language.speaking("nl"):  # a whole number's own format still works: "{:d}" on an int, "{:,}" separated
        assert ">1068<" in counts.style.format({"n": "{:d}"}).to_html()
        assert ">1.068<" in counts.style.format({"n": "{:,}"}).to_html()
    assert isinstance(frame[frame["binary accuracy"] > 0], pd.DataFrame)  # code computes with it as before


def test_the_guessing_table_writes_its_cuts_and_scores_with_a_decimal_comma_in_dutch():
    rows = [
        SweepRow(
            cut=c,
            bluffs=b,
            out_of_domain=30,
            refused=r,
            answered_with_needle=40 - r,
            answered_without_needle=24 - r // 2,
            in_domain=64,
        )
        for c, b, r in ((None, 30, 0), (0.675, 18, 0), (0.525, 3, 20))
    ]

    def shown():
        scores = claims.guessing(rows)
        page = scores.style.format({c: "{:.3f}" for c in scores.columns[-2:]}).hide(axis="index").to_html()
        return scores, page, claims.guessing_sentence(scores)

    with language.speaking("en"):
        english, english_page, english_sentence = shown()
    with language.speaking("nl"):
        dutch, dutch_page, dutch_sentence = shown()
    assert list(english["cut"]) == ["none", "0.675", "0.525"] and list(dutch["cut"]) == ["geen", "0,675", "0,525"]
    assert (english.iloc[:, 1:].to_numpy() == dutch.iloc[:, 1:].to_numpy()).all()  # the same numbers
    low = f"{english.iloc[0, -1]:.3f}"
    assert low in english_page and low.replace(".", ",") in dutch_page and low not in dutch_page
    assert "0.675" in english_sentence or "0.525" in english_sentence or "no cut" in english_sentence
    assert "cut geen" not in dutch_sentence and "is geen (" not in dutch_sentence  # "geen cut", never a bare "geen"
    assert "0.6" not in dutch_sentence and "0.5" not in dutch_sentence


def test_a_dutch_figure_writes_decimal_commas_on_its_axes_and_an_english_one_as_before():
    import plotly.graph_objects as go

    with language.speaking("en"):
        english = plots.described(go.Figure(), "a text")
    with language.speaking("nl"):
        dutch = plots.described(go.Figure(), "een tekst")
        untitled = plots.describe(go.Figure(layout=dict(title="Titel")))
    assert english.layout.separators is None and dutch.layout.separators == ",."
    assert untitled == 'Een figuur met de titel "Titel".'


def test_exercise_twos_halves_are_named_in_dutch_in_the_legend_and_the_text_alternative():
    both = pd.DataFrame(
        {
            "half": ["tune"] * 3 + ["judge"] * 3,
            "cut": [0.5, 0.55, 0.6] * 2,
            "cost": [40.0, 35.0, 38.0, 30.0, 28.0, 31.0],
            "within ceiling": [False, True, True] * 2,
        }
    )
    with language.speaking("en"):
        english = plots.cost_halves(both, 0.55)
    with language.speaking("nl"):
        dutch = plots.cost_halves(both, 0.55)
    assert [t.name for t in english.data] == ["tune", "tune", "judge", "judge"]
    assert [t.name for t in dutch.data] == ["afstemhelft"] * 2 + ["achtergehouden helft"] * 2
    assert dutch.layout.legend.title.text == "helft" and "afstemhelft (blauw)" in dutch.description
    assert "0,550" in dutch.description and "0.550" in english.description and "tune (blue)" in english.description


@pytest.mark.slow
def test_the_explorers_readout_writes_the_cut_with_a_decimal_comma_in_dutch():
    import ragkit.teach.course
    from ragkit.teach.lesson import widgets

    sweep = ragkit.teach.course.load(progress=False).sweep("E", "dense")
    with language.speaking("en"):
        english = widgets.ThresholdExplorer(sweep, 0.675)
        assert english.widget().children[0] is english.slider and english.slider.readout
    with language.speaking("nl"):
        dutch = widgets.ThresholdExplorer(sweep, 0.675)
        control = dutch.widget().children[0]
    assert not dutch.slider.readout and control.children[0] is dutch.slider
    assert "0,675" in control.children[1].value
    dutch.slider.value = 0.6
    assert "0,600" in control.children[1].value and "0.6" not in control.children[1].value


def figure_text(fig) -> str:
    """What a student reads of a figure: title, axes, legend, hover texts, annotations and its text alternative."""
    layout = fig.layout
    return "\n".join(
        [
            str(layout.title.text),
            str(layout.xaxis.title.text),
            str(layout.yaxis.title.text),
            " / ".join(str(t.name) for t in fig.data if t.name),
            " / ".join(str(t.hovertext) for t in fig.data if getattr(t, "hovertext", None)),
            " / ".join(str(a.text) for a in layout.annotations),
            fig.description,
        ]
    )


def test_the_needle_cuts_figure_and_the_word_pieces_reminder_come_out_dutch():
    from ragkit.teach.lesson import reminders

    spans = [("q01", 100, 50), ("q02", 480, 60), ("q03", 10, 20)]
    english, dutch = both(lambda: figure_text(plots.needle_cuts(spans)))
    assert_dutch(english, dutch, "needle_cuts")
    assert "vernietigd (loopt over de knip)" in dutch and "positie binnen het venster" in dutch
    assert "2 are kept whole" in english and "2 blijven heel" in dutch
    assert_dutch(*both(lambda: figure_text(plots.needle_cuts(spans[:2]))), "needle_cuts, one kept")
    assert_dutch(*both(reminders.word_pieces), "word_pieces")


@pytest.mark.slow
def test_the_figures_widgets_and_claims_of_the_other_notebooks_come_out_dutch():
    import ragkit.teach.course
    from ragkit.report import report
    from ragkit.teach.lesson import widgets

    course = ragkit.teach.course.load(progress=False)
    ev = course.evaluation("ACE")

    def chunk_explorer(question):
        def render():
            e = widgets.ChunkExplorer(course, "A")
            e.question.value = question
            return "\n".join([e.strategy.description, e.question.description, e.verdict.value, e.view.value[:400]])

        return render

    def duel():
        d = widgets.StrategyDuel(ev)
        # the needles' phrasings under <details> are the course's queries: English in both editions
        return d.metric.description + "\n" + re.sub(r"<small>.*?</small>", "", d.result.value)

    def playground(cut):
        def render():
            p = widgets.QueryPlayground(course, cut=cut)
            chunks = re.sub(r"<br><small>.*?</small></li>", "</li>", p.table.value, flags=re.S)  # corpus text
            return "\n".join([p.text.description, p.text.placeholder, p.search.description, p.gate.value, chunks])

        return render

    destroyed = ev.destroyed["A"]
    kept = next(q.id for q in course.questions if q.id not in destroyed)
    cases = {
        "recall_curves": lambda: figure_text(plots.recall_curves(ev, "dense")),
        "win_loss_matrix": lambda: figure_text(plots.win_loss_matrix(ev)),
        "ChunkExplorer, destroyed": chunk_explorer(destroyed[0]),
        "ChunkExplorer, kept": chunk_explorer(kept),
        "StrategyDuel": duel,
        "QueryPlayground": playground(0.675),
        "QueryPlayground, NO ANSWER": playground(0.3),
        "survivors": claims.survivors,
        "verdict_counts": lambda: claims.verdict_counts(report(course.evaluation("ABCDEF")), 32),
    }
    for name, render in cases.items():
        english, dutch = both(render)
        assert_dutch(english, dutch, name)
    english, dutch = both(playground(0.3))
    assert "NO ANSWER" in english and "NO ANSWER" in dutch and "geen chunk ligt onder cosine-afstand 0,300" in dutch


def test_a_frame_shown_as_a_cells_result_has_dutch_headings_and_decimal_commas_and_the_same_english():
    frame = formats.Frame({"strategy": ["A", "E"], "destroyed": [True, False], "Holm p": [0.0123, 0.5]})
    plain = pd.DataFrame(frame)
    with language.speaking("en"):
        english = frame._repr_html_()
    # English reads as the Dutch does: a truth as yes or no, no bare 0, 1 index; else as pandas shows it
    assert english == plain.replace({True: "yes", False: "no"}).to_html(notebook=True, index=False, na_rep="–")
    with language.speaking("nl"):
        dutch = frame._repr_html_()
        styled = frame.style.format({"Holm p": "{:.3g}"}).to_html()
    assert "<th>strategie</th>" in dutch and "<th>vernietigd</th>" in dutch and ">ja<" in dutch and ">nee<" in dutch
    assert "0,0123" in dutch and "0.0123" not in dutch
    assert ">strategie<" in styled and ">0,0123<" in styled  # a notebook's own style names the columns as before
    assert list(frame.columns) == ["strategy", "destroyed", "Holm p"]  # the data keep their names
    assert type(frame.query("strategy == 'E'")) is formats.Frame


@pytest.mark.slow
def test_the_tables_of_the_other_notebooks_have_dutch_headings_and_intervals_with_decimal_commas():
    import ragkit.teach.course

    ev = ragkit.teach.course.load(progress=False).evaluation("ACE")
    with language.speaking("en"):
        english = tables.hit_rates(ev)
        intervals = claims.recall20_intervals(ev)
        confronted = claims.header_confronted(ev)
    with language.speaking("nl"):
        dutch = tables.hit_rates(ev)
        shown = dutch._repr_html_()
        dutch_intervals = claims.recall20_intervals(ev)
        dutch_confronted = tables.for_people(claims.header_confronted(ev), decimals={"p": 3}).to_html()
        rerank = claims.chapter_rerank()._repr_html_()
    assert list(dutch.columns) == list(english.columns)  # code reads the same columns
    first = english.loc[0, "Hit@20"]  # 0.516 [0.396, 0.634]
    assert dutch.loc[0, "Hit@20"] == first.replace(", ", "; ").replace(".", ",")
    assert "<th>strategie</th>" in shown and "<th>vernietigd</th>" in shown
    assert dutch_intervals.loc[0, "ours"] == intervals.loc[0, "ours"].replace(", ", "; ").replace(".", ",")
    assert "E tegen C: alleen de header" in dutch_confronted and ">gewonnen<" in dutch_confronted
    assert f">{float(confronted.loc[0, 'p']):.3f}<".replace(".", ",") in dutch_confronted
    assert "het hoofdstuk: dense" in rerank and "0,094" in rerank


def test_overlap_the_setting_is_a_noun_and_overlap_the_relation_a_verb_in_dutch():
    """03b's setting is 'Overlap' (it read 'Overlappen **0**'); 02's intervals and 06's distributions overlappen."""
    from types import SimpleNamespace

    import numpy as np

    from ragkit.teach.lesson import narrate, settings

    queries = [SimpleNamespace(text="a query")]
    sweep = SimpleNamespace(
        best_answer=np.array([0.4]), separable=False, queries=queries, worst_in_domain=0.6, best_out_of_domain=0.5
    )
    with language.speaking("nl"):
        assert settings.setting_name("overlap") == "Overlap"
        assert "; de twee intervallen overlappen." in narrate.interval_width(32).data
        assert "Dus **overlappen** de twee verdelingen: " in narrate.distributions(sweep).data
    with language.speaking("en"):
        assert "; the two intervals overlap." in narrate.interval_width(32).data
        assert "So the two distributions **overlap**: " in narrate.distributions(sweep).data
