"""Predict, then see: the answer to each kind of prediction, the reminder for an empty one, hostile values as
sentences, the notebooks' prediction cells before their reveals, the questions asked before the reveal, and nothing
of it graded."""

import math
import re
from decimal import Decimal
from fractions import Fraction

import jupytext
import numpy as np
import pytest
from IPython.display import Markdown

from ragkit.teach import language
from ragkit.teach.lesson import predict, quiz
from ragkit.teach.lesson.quiz import Option, Quiz, QuizQuestion

from conftest import ROOT

TWINS = ROOT / "notebooks" / "twins"
MAIN = sorted(TWINS.glob("0*.py"))
PENDING = ("00-",)
"""Main notebooks without a prediction: 00 (the start, which measures nothing of its own). Every other one predicts."""
PREDICTING = [p for p in MAIN if not p.name.startswith(PENDING)]
PREDICTION_CELL = f"{predict.NAME} = None"
REVEAL = f"predict.reveal({predict.NAME}"
EARLY_QUIZ = re.compile(r'Quiz\("(\d\d[a-z]?)", course, before_reveal=True\)\.widget\(\)')

COUNT, SHARE, CHOICE = predict.Count(40), predict.Share(), predict.Choice(("BM25", "dense", "the same"))


def test_a_count_is_answered_with_the_difference_in_either_direction():
    assert predict.reply(3, COUNT, 7) == (
        "You predicted **3**; the measurement says **7**: **4** more than you expected."
    )
    assert predict.reply(9, COUNT, 7) == (
        "You predicted **9**; the measurement says **7**: **2** fewer than you expected."
    )
    assert predict.reply(7, COUNT, 7) == "You predicted **7**; the measurement says **7**: exactly right."
    assert predict.reply(" 7 ", COUNT, np.int64(7)).endswith("exactly right.")  # a number typed in quotes
    assert predict.reply(np.int64(0), COUNT, 1).startswith("You predicted **0**; the measurement says **1**: **1**")
    assert "**0.5** fewer" in predict.reply(7.5, COUNT, 7)
    assert predict.reply(300, predict.Count(2000), 1500) == (
        "You predicted **300**; the measurement says **1,500**: **1,200** more than you expected."
    )
    assert predict.reply(None, predict.Count(2000), 1500) == predict.reminder()  # no answer without a guess


def test_a_share_is_read_as_a_share_or_a_percentage_and_answered_in_points():
    assert predict.reply(0.7, SHARE, 0.84375) == (
        "You predicted **0.70**; the measurement says **0.844**: **14** percentage points higher than you expected."
    )
    for same in (0.8, "80%", 80, "80", Fraction(4, 5)):
        assert "**0.80**" in predict.reply(same, SHARE, 0.5) and "**30** percentage points lower" in predict.reply(
            same, SHARE, 0.5
        ), same
    assert predict.reply(0.844, SHARE, 0.84375).endswith("within a point of it.")
    assert "**1.00**" in predict.reply(1, SHARE, 0.5)  # 1 is the whole, not one per cent


def test_a_number_typed_as_text_is_read_as_the_kernels_language_writes_it():
    from ragkit.teach import language

    assert "**1,200** more" in predict.reply("300", predict.Count(2000), 1500)
    assert "**0.80**" in predict.reply("0.8", SHARE, 0.5) and "**0.80**" not in predict.reply("0,8", SHARE, 0.5)
    assert "is not a share" in predict.reply("0,9", SHARE, 0.5)  # an English comma is no decimal mark: asked again
    assert "**1,500**" in predict.reply("1,500", predict.Count(2000), 10)
    with language.speaking("nl"):
        assert "**0,80**" in predict.reply("0,8", SHARE, 0.5)
        assert "**0,80**" in predict.reply("0.8", SHARE, 0.5)  # Python's point, as the cell's example writes it
        assert "**1.500**" in predict.reply("1.500", predict.Count(2000), 1500)


def test_a_choice_matches_the_students_words_whatever_their_case_and_spacing():
    assert predict.reply(" bm25 ", CHOICE, "BM25") == "You predicted **BM25**; this run says **BM25**: right."
    assert predict.reply("The  Same", CHOICE, "dense").startswith(
        "You predicted **the same**; this run says **dense**: not this time"
    )
    assert "dense" not in predict.reply(None, CHOICE, "dense")


def before_the_fold(shown: Markdown) -> str:
    """What a reveal shows before a reader opens anything: the Markdown outside its ``<details>``."""
    return re.sub(r"<details>.*?</details>", "", shown.data, flags=re.S)


def in_the_fold(shown: Markdown) -> str:
    """What a reveal shows only once opened (empty when nothing is folded)."""
    found = re.search(r"<details>\n<summary>[^<]*</summary>(.*?)</details>", shown.data, flags=re.S)
    return found.group(1) if found else ""


@pytest.mark.parametrize("asked, measured", [(COUNT, 7), (SHARE, 0.5), (CHOICE, "dense")])
def test_an_empty_prediction_gets_the_reminder_and_a_folded_answer_never_an_error(asked, measured):
    """Run All before a guess is written: the reminder in view, the measurement and its interpretation folded, and
    opened, they say they were chosen without a prediction."""
    for empty in (None, "", "   \n"):
        said = predict.reply(empty, asked, measured)
        assert said == predict.reminder() and "color" not in said and "Error" not in said
        shown = predict.reveal(empty, asked, measured, Markdown("The interpretation."))
        assert before_the_fold(shown).strip() == predict.reminder() and "says **" not in before_the_fold(shown)
        inside = in_the_fold(shown)
        assert inside.strip().startswith("*You chose to see this without a prediction.*")
        assert re.search(r"(The measurement|This run) says \*\*", inside) and inside.strip().endswith("interpretation.")
        assert "<details open" not in shown.data  # folded: JupyterLab and the book show it closed


def test_a_written_prediction_is_answered_in_view_and_nothing_is_folded():
    shown = predict.reveal(3, COUNT, 7, Markdown("The interpretation."))
    assert "<details>" not in shown.data and shown.data.startswith("You predicted **3**")
    assert shown.data.endswith("\n\nThe interpretation.")


HOSTILE = [
    ("seven", "the text “seven”"),
    (True, "a value of type bool"),
    (math.nan, "NaN"),
    (np.float32("nan"), "NaN"),
    (math.inf, "an infinity"),
    (-math.inf, "an infinity"),
    (10**5000, "a whole number of more than 40 digits"),
    (-1, "\\-1"),
    (41, "41"),
    ([3], "a value of type list"),
    ({"a": 1}, "a value of type dict"),
    (Decimal("3"), "a value of type Decimal"),
    (object(), "a value of type object"),
    ("x" * 1_000_000, "“" + "x" * predict.SHOWN_CHARACTERS + "…”"),
    ("<b>*7*</b>", "\\<b\\>\\*7\\*\\</b\\>"),
    ("1e400", "the text “1e400”"),
]


@pytest.mark.parametrize("value, described", HOSTILE, ids=lambda v: type(v).__name__)
def test_a_value_of_the_wrong_kind_is_a_sentence_that_says_what_to_write_not_a_traceback(value, described):
    for asked, measured, wanted in ((COUNT, 7, "is not a number from 0 to 40"), (CHOICE, "dense", "is not one of")):
        said = predict.reply(value, asked, measured)
        assert said.startswith("Your prediction, ") and wanted in said and described in said, said
        assert said.endswith("run this cell again.")  # what to write, never the answer
        assert len(said) < 600  # a pasted essay is cut
        shown = predict.reveal(value, asked, measured)
        assert before_the_fold(shown).strip() == said and f"says **{measured}**." in in_the_fold(shown)


@pytest.mark.parametrize("value", ["seven", True, math.nan, math.inf, -1, -0.5, 150, "150%", [3], object(), "x" * 9**6])
def test_a_share_out_of_range_or_of_the_wrong_kind_is_a_sentence(value):
    said = predict.reply(value, SHARE, 0.5)
    assert said.startswith("Your prediction, ") and "is not a share from 0 to 1" in said
    assert "0.500" not in said and "The measurement says **0.500**." in in_the_fold(predict.reveal(value, SHARE, 0.5))


def test_a_students_text_cannot_write_markup_into_the_reveal():
    said = predict.reply("**bold** [link](http://x) `code` <script>alert(1)</script>\x1b[31m", COUNT, 1)
    assert "**bold**" not in said and "<script>" not in said and "](" not in said and "\x1b" not in said


def test_ahead_names_the_larger_or_the_tie():
    assert predict.ahead({"BM25": 0.4, "dense": 0.3}, "the same") == "BM25"
    assert predict.ahead({"BM25": 0.3, "dense": 0.4}, "the same") == "dense"
    assert predict.ahead({"BM25": 0.3, "dense": 0.3}, "the same") == "the same"
    with pytest.raises(ValueError):
        predict.ahead({}, "the same")


def test_the_notebooks_mistakes_are_errors_for_the_author_not_sentences_for_the_student():
    with pytest.raises(ValueError, match="not one of the options"):
        predict.reply("dense", CHOICE, "hybrid")
    with pytest.raises(TypeError):
        predict.reply(3, "a count", 3)
    with pytest.raises(ValueError):
        predict.Choice(("yes", "Yes"))


# The notebooks: a prediction cell before the reveal, the questions that test it in between


def cells(path):
    return [(c.cell_type, c.source, c.metadata) for c in jupytext.read(path).cells]


def test_every_main_notebook_but_the_pending_ones_predicts():
    assert {p.stem[:3].rstrip("-") for p in PREDICTING} >= {"01", "02", "02b", "03", "04", "05", "06", "07", "08"}


@pytest.mark.parametrize("path", PREDICTING, ids=lambda p: p.stem)
def test_the_prediction_cell_comes_before_the_reveal_that_answers_it(path):
    nb = cells(path)
    code = [(i, source, meta) for i, (kind, source, meta) in enumerate(nb) if kind == "code"]
    made = [i for i, source, _ in code if source.startswith(PREDICTION_CELL)]
    revealed = [i for i, source, _ in code if REVEAL in source]
    assert len(made) == 1 and len(revealed) == 1, (path.stem, made, revealed)
    (at,), (reveal,) = made, revealed
    assert at < reveal
    assert "# your guess" in nb[at][1] and "# your answer" not in nb[at][1]  # nbgrader_export's mark of graded cells
    assert nb[reveal][2].get("jupyter", {}).get("source_hidden"), "the reveal is a narrating cell, input collapsed"
    assert "Predict first" in nb[at - 1][1] and predict.NAME in nb[at - 1][1], "the prose before it asks the question"
    others = [i for i, source, _ in code if i != at and re.search(rf"^\s*{predict.NAME}\s*=", source, re.M)]
    assert not others, f"{path.stem}: only the prediction cell assigns {predict.NAME}"
    early = [i for i, source, _ in code if EARLY_QUIZ.search(source)]
    assert all(at < i < reveal for i in early), "questions that test the prediction come before its reveal"
    final = [i for i, source, _ in code if "course).widget()" in source and "Quiz(" in source]
    assert final and final[-1] > reveal


@pytest.fixture()
def two_part_quiz(monkeypatch, tmp_path):
    monkeypatch.setenv("RAGKIT_RESULTS", str(tmp_path / "results.jsonl"))
    monkeypatch.setenv("RAGKIT_STUDENT", "tester")
    asked = [
        quiz.asked_before_reveal(QuizQuestion("Before?", (Option("a", True, "right"), Option("b", False, "no")))),
        QuizQuestion("After?", (Option("c", True, "right"), Option("d", False, "no"))),
        QuizQuestion("Also after?", (Option("e", True, "right"), Option("f", False, "no"))),
    ]
    monkeypatch.setitem(quiz.BUILDERS, "98", lambda course: asked)
    monkeypatch.setitem(quiz.BUILDERS, "97", lambda course: asked[1:])
    return tmp_path / "results.jsonl"


def test_the_questions_before_the_reveal_are_asked_there_and_not_again_at_the_end(two_part_quiz):
    early, end = Quiz("98", None, before_reveal=True), Quiz("98", None)
    assert [q.prompt for q in early.questions] == ["Before?"]
    assert sorted(q.prompt for q in end.questions) == ["After?", "Also after?"]
    early.choices[0].value = next(o.text for o in early.questions[0].options if o.right)
    assert early.check() == 1 and end.check() == 0
    recorded = two_part_quiz.read_text()
    assert '"exercise": "quiz 98 before the reveal"' in recorded and '"exercise": "quiz 98"' in recorded
    with pytest.raises(ValueError, match="no question before"):
        Quiz("97", None, before_reveal=True)


# Nothing a prediction does reaches a grade


def test_no_prediction_is_graded_or_recorded(two_part_quiz):
    from ragkit.teach.exercises.results import EXERCISES
    from ragkit.teach.grading.answers import TABLE
    from ragkit.teach.grading.handed_in import exercise_of

    assert all(exercise_of(p.with_suffix(".ipynb").name) is None for p in MAIN), "a main notebook is never graded"
    assert all(predict.NAME not in e.answers for e in TABLE.values()), "no exercise reads a prediction"
    assert not any(name.startswith("quiz") for name in EXERCISES)  # the class report's columns: exercises only
    predict.reveal(None, COUNT, 3, "Shown.")
    predict.reveal("x" * 10_000, CHOICE, "dense")
    assert not two_part_quiz.exists(), "a reveal records nothing in the results file"


@pytest.mark.slow  # the course's evaluation
def test_each_notebook_that_asks_questions_before_its_reveal_has_them_and_its_twin_shows_them():
    import ragkit.teach.course

    course = ragkit.teach.course.load(progress=False)
    flagged = {nb for nb, build in quiz.BUILDERS.items() if any(q.before_reveal for q in build(course))}
    shown = {m.group(1) for p in PREDICTING for m in EARLY_QUIZ.finditer(p.read_text())}
    assert flagged == shown and flagged >= {"01", "02", "03", "04", "05", "06"}
    for nb in flagged:
        before, after = Quiz(nb, course, "x", before_reveal=True), Quiz(nb, course, "x")
        assert len(before.questions) + len(after.questions) == len(quiz.questions(nb, course, "x"))


@pytest.mark.parametrize(
    ("notebook", "options", "typed"),
    [
        ("03-bm25-and-hybrid", ("BM25", "dense", "neither"), "geen van beide"),
        ("05-distances", ("longer", "shorter"), "langere"),
        ("06-thresholds", ("yes", "no"), "nee"),
        ("08-production", ("yes", "no"), "ja"),
    ],
)
def test_the_word_a_dutch_prediction_asks_for_is_one_its_choice_reads(notebook, options, typed):
    """Each Dutch 'Voorspel eerst' quotes a word to type; its Choice reads it in a Dutch kernel (the English too)."""
    from ragkit.teach.classroom.edition import catalogue_path, cell_catalogue

    asked = "\n".join(
        e.nl for e in cell_catalogue(catalogue_path(ROOT / "notebooks", notebook)).values() if "Voorspel eerst" in e.nl
    )
    assert f'"{typed}"' in asked, f"{notebook}'s Dutch prediction no longer asks for {typed!r}"
    with language.speaking("nl"):
        said = predict.reply(typed, predict.Choice(options), options[0])
    assert "Je voorspelde" in said, said
    assert predict.reply(options[-1], predict.Choice(options), options[0]).startswith("You predicted")
