"""Words as the encoder reads them: the one normalisation every word rule of every check uses.

The encoder's tokenizer decomposes letters (NFKD), drops their accents and invisible format
characters (a zero-width space inside a word joins it back), and ignores case. A check that
compared raw characters would be fooled by a trick the encoder reads straight through.
"""

from __future__ import annotations

import unicodedata

from ragkit.lexical import tokenize

__all__ = [
    "DUTCH_STOPWORDS",
    "ENGLISH_TOO",
    "STOPWORDS",
    "STOPWORDS_BY_LANGUAGE",
    "content_words",
    "copied_share",
    "folded",
    "text_language",
    "words",
]

STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i in is it its my of on or so that the this "
    "to what when where which why with you your not no".split()
)
"""English function words: the course's corpus and questions are English."""
DUTCH_STOPWORDS = frozenset(
    "de het een en of maar dat dit deze zijn waren wordt worden werd ben bent heb hebt heeft "
    "hebben kan kun kunnen moet moeten mag wil zal zou van voor naar met op aan uit bij om tot "
    "onder als dan ook niet geen wel nog er hier daar wat wie waar waarom welke wanneer ik je "
    "jij u hij zij ze wij jullie mijn jouw uw zich ons onze hun haar mij zo te".split()
)
"""Dutch function words, for a class that brings Dutch documents or asks in Dutch ("is", "in", "was", "me", "we",
"die", "over", "door", "hoe" are left out: English text uses them as its own words)."""
ENGLISH_TOO = frozenset("of met bent van tot ben dan".split())
"""Dutch function words that English writes too ("of" is one of its own; "requirements met", "a bent pin", "Vincent
van Gogh", "Dan"): ``text_language`` counts them for neither language, so an English text never reads as Dutch."""
STOPWORDS_BY_LANGUAGE = {"en": STOPWORDS, "nl": DUTCH_STOPWORDS}


def text_language(text: str) -> str:
    """The language of ``text`` by its function words: ``nl`` where Dutch ones outnumber English ones, else ``en``.

    A word English writes too (``ENGLISH_TOO``) counts for neither.
    """
    tokens = tokenize(folded(text))
    dutch = sum(t in DUTCH_STOPWORDS and t not in ENGLISH_TOO for t in tokens)
    english = sum(t in STOPWORDS and t not in DUTCH_STOPWORDS for t in tokens)
    return "nl" if dutch > english else "en"


def folded(text: str) -> str:
    """Text as the encoder sees it: NFKD, accents and zero-width (format) characters removed, case folded."""
    kept = (
        ch
        for ch in unicodedata.normalize("NFKD", text)
        if not unicodedata.combining(ch) and unicodedata.category(ch) != "Cf"
    )
    return "".join(kept).casefold()


def words(text: str) -> list[str]:
    """The words of a text in order, after ``folded``: ragkit's BM25 tokens of what the encoder reads."""
    return tokenize(folded(text))


def content_words(text: str, language: str | None = None) -> set[str]:
    """The distinctive words of a text: its ``words`` minus the function words of its language (``text_language``
    unless given)."""
    stop = STOPWORDS_BY_LANGUAGE.get(language or text_language(text), STOPWORDS)
    return set(words(text)) - stop


def copied_share(mine: set[str], theirs: set[str]) -> float:
    """How much of the smaller word set the other holds (overlap coefficient): padding and deletion do not dilute it."""
    return len(mine & theirs) / min(len(mine), len(theirs)) if mine and theirs else 0.0
