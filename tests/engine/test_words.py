"""Words as the checks count them: the stop words follow the text's language, and the English course stays English."""

import pytest

from ragkit.words import DUTCH_STOPWORDS, ENGLISH_TOO, STOPWORDS, content_words, text_language

from conftest import ROOT


def test_a_dutch_text_loses_its_dutch_function_words_and_keeps_its_terms():
    text = "Hoe wordt het model geëvalueerd op de vragen van de cursus?"
    assert text_language(text) == "nl"
    assert content_words(text) == {"hoe", "model", "geevalueerd", "vragen", "cursus"}  # "hoe" is an English word too
    assert content_words("How is the model evaluated on the course's questions?") == {
        "model",
        "evaluated",
        "course",
        "s",
        "questions",
    }


def test_no_dutch_stop_word_is_an_english_word_a_text_could_use():
    """An English text never reads as Dutch because of a word both languages write."""
    assert not DUTCH_STOPWORDS & {"is", "in", "was", "me", "we", "die", "over", "door", "hoe", "an", "as"}
    assert DUTCH_STOPWORDS & STOPWORDS == {"of"}  # a Dutch function word too, so removed from Dutch text's words
    assert text_language("help me, we die over the door") == "en"
    assert text_language("") == "en" and text_language("Wilson intervals") == "en"


@pytest.mark.parametrize(
    "text", ["Requirements met", "Dan met Ben", "A bent pin", "The van of the tot", "of of of", "Vincent van Gogh"]
)
def test_a_short_english_text_with_a_word_dutch_also_writes_reads_as_english(text):
    """The Dutch function words English writes too (``of``, ``met``, ``van`` ...) never count as Dutch."""
    assert text_language(text) == "en"


def test_every_dutch_function_word_that_counts_as_dutch_is_no_english_word():
    assert not (DUTCH_STOPWORDS - ENGLISH_TOO) & (STOPWORDS | {"met", "bent", "van", "tot", "ben", "dan"})
    assert text_language("Werkt het model met de vragen van de cursus?") == "nl"


@pytest.mark.parametrize("language", ["en", "nl"])
def test_the_stop_words_can_be_named_instead_of_guessed(language):
    words = content_words("de cut is the cut", language)
    assert words == ({"de", "cut"} if language == "en" else {"is", "the", "cut"})


def test_every_text_of_the_english_course_reads_as_english(corpus):
    """So every check that counts content words counts them as before the Dutch stop words existed."""
    from ragkit.data import load_out_of_domain, load_questions

    questions = load_questions(ROOT / "data" / "questions.jsonl")
    texts = [q.question for q in questions] + [q.needle for q in questions] + [q.ticket for q in questions]
    texts += [o.query for o in load_out_of_domain(ROOT / "data" / "out_of_domain.jsonl")]
    texts += [d.text for d in corpus.documents]
    assert [t[:60] for t in texts if text_language(t) != "en"] == []
