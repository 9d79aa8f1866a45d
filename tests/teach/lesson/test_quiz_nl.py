"""Every notebook's knowledge check speaks Dutch in a Dutch kernel (issue 49, part Q): its prompts, options, the
misconception distractors and every reason, with the English figures written the Dutch way, and no template of the
quiz left without its Dutch entry."""

import re
import sys
from pathlib import Path

import pytest

from ragkit.teach import language
from ragkit.teach.lesson import quiz

from dutch import dutch_share

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/teach: test_language's helpers, shared with the pilot
from test_language import QUOTED, all_templates, assert_dutch, numbers, wordless

FIELD = re.compile(r"\{[^{}]*\}")  # a field's name ({bluffs}) is code, not a word of the prose


@pytest.fixture(scope="module")
def course():
    import ragkit.teach.course

    return ragkit.teach.course.load(progress=False)


def texts(notebook: str, course) -> list[str]:
    """What a student reads of one notebook's questions: each prompt, and each option with its feedback line."""
    out = []
    for q in quiz.questions(notebook, course, student="ana"):
        out.append(q.prompt)
        out += [f"{o.text}\n{quiz.explained(o)}" for o in q.options]
    return out


def test_every_template_of_the_quiz_has_its_dutch():
    catalogue = language.catalogue("nl")
    missing = sorted(
        {
            t
            for ts in all_templates()["lesson.quiz"].values()
            for t in ts
            if isinstance(t, str) and not wordless(t) and t not in catalogue
        }
    )
    assert not missing, f"quiz templates without a Dutch entry (ragkit/teach/locale/nl/q-quiz.toml): {missing}"


@pytest.mark.slow  # the course's vectors, which an empty cache computes (conftest.QUICK_TEXTS)
@pytest.mark.parametrize("notebook", list(quiz.BUILDERS))
def test_every_knowledge_check_comes_out_dutch_with_the_english_figures(course, notebook):
    with language.speaking("en"):
        english = texts(notebook, course)
    with language.speaking("nl"):
        dutch = texts(notebook, course)
    assert len(english) == len(dutch)
    # the whole check: Dutch, with the same numbers (a decimal comma in prose, a point in a code span)
    assert_dutch("\n".join(english), "\n".join(dutch), f"quiz {notebook}")
    for en, nl in zip(english, dutch):
        assert numbers(nl, dutch=True) == numbers(en), f"quiz {notebook}: other numbers in Dutch\n{en}\n{nl}"
        share = dutch_share(QUOTED.sub(" ", nl))
        assert share is None or share >= 0.8, f"quiz {notebook}: only {share:.0%} Dutch: {nl}"
    # a word of prose left English: every prompt and reason with a letter outside quotes and names differs
    same = [
        nl
        for en, nl in zip(english, dutch)
        if en == nl and any(c.isalpha() for c in en.split("\n")[0]) and not en.startswith(("1 - cos", "'", "BM25"))
    ]
    assert not same, f"quiz {notebook}: still English in Dutch: {same}"


def test_the_dutch_quiz_keeps_to_the_glossary():
    sys.path.insert(0, str(Path(__file__).parents[1] / "classroom"))
    from test_edition import glossary, glossary_breaches

    rows, catalogue = glossary(), language.catalogue("nl")
    breaches = [
        f"{t!r}: {b}"
        for ts in all_templates()["lesson.quiz"].values()
        for t in ts
        if isinstance(t, str) and t in catalogue
        for b in glossary_breaches(*(FIELD.sub(" ", x) for x in (t, catalogue[t].translated)), rows)[1]
    ]
    assert not breaches, "\n".join(breaches)
