"""Words as the encoder reads them: the one normalisation every word rule of every check uses.

The encoder's tokenizer decomposes letters (NFKD), drops their accents and invisible format
characters (a zero-width space inside a word joins it back), and ignores case. A check that
compared raw characters would be fooled by a trick the encoder reads straight through.
"""

from __future__ import annotations

import unicodedata

from ragkit.lexical import tokenize

STOPWORDS = frozenset("a an and are as at be by can do does for from how i in is it its my of on or so that the this "
                      "to what when where which why with you your not no".split())


def plain(text: str) -> str:
    """Text as the encoder sees it: NFKD, accents and zero-width (format) characters removed, case folded."""
    kept = (ch for ch in unicodedata.normalize("NFKD", text)
            if not unicodedata.combining(ch) and unicodedata.category(ch) != "Cf")
    return "".join(kept).casefold()


def words(text: str) -> list[str]:
    """The words of a text in order, after ``plain``: ragkit's BM25 tokens of what the encoder reads."""
    return tokenize(plain(text))


def content_words(text: str) -> set[str]:
    """The distinctive words of a text: its ``words`` minus short function words."""
    return set(words(text)) - STOPWORDS


def copied_share(mine: set[str], theirs: set[str]) -> float:
    """How much of the smaller word set the other holds (overlap coefficient): padding and deletion do not dilute it."""
    return len(mine & theirs) / min(len(mine), len(theirs)) if mine and theirs else 0.0
