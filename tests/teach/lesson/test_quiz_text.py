"""What a student reads in a knowledge check: Markdown rendered (no raw backtick), feedback in sentences, in English
and in Dutch, and a check button as wide as its label."""

import html
import re

import pytest

from ragkit.teach import language
from ragkit.teach.lesson import quiz
from ragkit.teach.lesson.quiz import Option, Quiz, QuizQuestion

VERDICT = {
    "en": re.compile(r"^(?P<mark>✓|✗) “[^”]+” is (?P<verdict>right|wrong)\. (?P<reason>.+)$"),
    "nl": re.compile(
        r"^(?P<mark>✓|✗) \"[^\"]+\" klopt(?P<verdict> niet)?\. (?P<reason>.+)$"
    ),  # straight quotes: the glossary's
}
# a reason that starts with a verdict of its own stacks two ("✗ ja: nee: de slechtste ...", "no: the worst ...")
STACKED = re.compile(r"^(yes|no|right|wrong|ja|nee|juist|goed|fout)\b[:,]", re.IGNORECASE)


def text(fragment: str) -> str:
    """What a browser shows of an HTML fragment: the tags dropped, the entities read."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def shown(q: Quiz) -> list[str]:
    """Every string the quiz puts on the page: each prompt, each radio button's label, the feedback, the button."""
    box = q.widget()
    prompts = [child.value for child in box.children if child.__class__.__name__ == "HTML"]
    labels = [label for choice in q.choices for label in choice._options_labels]
    return prompts + labels + [f.value for f in q.feedback] + [q.button.description]


def answered(q: Quiz, right: bool = False) -> Quiz:
    """The quiz with one option picked in every question (a wrong one by default) and checked: all feedback shown."""
    for question, choice in zip(q.questions, q.choices):
        choice.value = next(o.text for o in question.options if o.right == right)
    q.check()
    return q


def assert_sentences(q: Quiz, spoken: str, where: str) -> None:
    """Each option's feedback is a verdict on the option, then its reason as a sentence of its own."""
    for question, feedback in zip(q.questions, q.feedback):
        items = re.findall(r"<li>(.*?)</li>", feedback.value)
        assert len(items) == len(question.options), (where, feedback.value)
        for item, option in zip(items, question.options):
            line = text(item)
            found = VERDICT[spoken].match(line)
            assert found, f"{where}: {line!r} does not read 'mark, option, verdict. Reason.'"
            reason = found["reason"]
            assert (found["mark"] == "✓") == option.right == (found["verdict"] in ("right", None)), (where, line)
            assert not STACKED.match(reason), f"{where}: {line!r} stacks a second verdict"
            first = reason.split()[0]
            assert not (first.isalpha() and first.islower()), f"{where}: {line!r}: its reason starts in lower case"
            assert reason.endswith((".", "?", "!")), (where, line)


MADE_UP = [
    QuizQuestion(
        "What does a `#char=from,to` locator promise?",
        (
            Option("that slicing at `from` gives the quote", True, "right: `verify()` checks just that"),
            Option("*nothing*", False, "no: a locator is a promise"),
        ),
    ),
    QuizQuestion("Is 1 < 2?", (Option("yes", True, "one is less than two"), Option("no", False, "it is"))),
]


@pytest.fixture
def made_up(monkeypatch):
    """A knowledge check ("99") that asks MADE_UP, the course not needed to build it."""
    monkeypatch.setitem(quiz.BUILDERS, "99", lambda course: MADE_UP)
    return lambda: Quiz("99", None, student="ana")  # type: ignore[arg-type]


def test_markdown_in_prompts_options_and_reasons_renders_and_html_stays_escaped(tmp_path, monkeypatch, made_up):
    monkeypatch.setenv("RAGKIT_RESULTS", str(tmp_path / "results.jsonl"))
    q = answered(made_up())
    everything = " ".join(shown(q))
    assert "`" not in everything and "*nothing*" not in everything
    assert "<code>#char=from,to</code>" in everything and "<code>verify()</code>" in everything
    assert "1 &lt; 2" in everything and "<em>nothing</em>" in everything
    assert "that slicing at from gives the quote" in q.choices[0]._options_labels + q.choices[1]._options_labels
    assert [o.text for o in q.questions[0].options] == list(q.choices[0].options[i][1] for i in range(2))


def test_a_reason_becomes_a_sentence_and_a_name_keeps_its_case():
    assert quiz.as_sentence("the gate compares two numbers") == "The gate compares two numbers."
    assert quiz.as_sentence("efSearch is set at query time") == "efSearch is set at query time."
    assert quiz.as_sentence("`verify()` checks it.") == "`verify()` checks it."
    assert quiz.as_sentence("0.672 is under the cut 0.675") == "0.672 is under the cut 0.675."


@pytest.mark.parametrize("spoken", ["en", "nl"])
def test_the_check_button_is_as_wide_as_its_label(spoken, made_up):
    with language.speaking(spoken):
        q = made_up()
    # ipywidgets' default is a fixed 148 px, which cut "controleer mijn antwoorden" to "controleer mijn a..."
    assert q.button.layout.width == "auto" and q.button.layout.min_width == "max-content"


@pytest.fixture(scope="module")
def course():
    import ragkit.teach.course

    return ragkit.teach.course.load(progress=False)


@pytest.mark.slow  # the course's vectors, which an empty cache computes (conftest.QUICK_TEXTS)
@pytest.mark.parametrize("spoken", ["en", "nl"])
def test_every_knowledge_check_renders_its_markdown_and_explains_in_sentences(course, spoken, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGKIT_RESULTS", str(tmp_path / "results.jsonl"))
    notebooks = quiz.BUILDERS  # every notebook with a check has its Dutch edition
    with language.speaking(spoken):
        for notebook in notebooks:
            for before_reveal in (False, True):
                try:
                    q = Quiz(notebook, course, student="ana", before_reveal=before_reveal)
                except ValueError:  # no question before its reveal
                    continue
                for right in (False, True):
                    answered(q, right)
                    raw = [s for s in shown(q) if "`" in s]
                    assert not raw, f"quiz {notebook} ({spoken}) shows a raw backtick: {raw}"
                    assert_sentences(q, spoken, f"quiz {notebook} ({spoken})")


def test_00s_check_asks_in_words_00_has_introduced():
    """Issue 67, item 8: 00's check asked about "E/dense" and "hit@4", which 00 never introduces (02 does)."""
    from pathlib import Path
    from types import SimpleNamespace

    import numpy as np

    ranks = SimpleNamespace(ranks=np.array([7]))
    course = SimpleNamespace(evaluation=lambda *_: {"E/dense": ranks}, queries=[SimpleNamespace(text="a query")])
    asked = " ".join(
        " ".join([q.prompt, *(o.text + " " + o.why for o in q.options)]) for q in quiz.start_here_questions(course)
    )
    twin = Path(__file__).parents[3] / "notebooks" / "twins" / "00-start-here.py"
    before = twin.read_text(encoding="utf-8").split("## Knowledge check")[0]
    for term in ("E/dense", "hit@", "MRR", "nDCG", "BM25", "MaxSim", "strategy E"):
        assert term not in asked or term in before, f"00's check asks about {term!r} before 00 introduces it"
    assert "at rank 7" in asked and "first 4" in asked
