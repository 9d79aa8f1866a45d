"""Reminders of words a notebook uses that another notebook explains: the strategy letters and word pieces.

Each notebook that uses them shows the reminder near the top, built from the definitions themselves, so a
student who opens notebook 06 first still knows what "strategy E" and "256 word pieces" mean.
"""

from __future__ import annotations

from ragkit.chunking import OVERLAP, SIZE, STRATEGIES
from ragkit.teach.language import say
from ragkit.tokens import WINDOW

__all__ = ["strategy_letters", "word_pieces"]


def strategy_letters() -> str:
    """The six strategies A-F in one sentence (Markdown), from ragkit's own table."""
    letters = "; ".join(f"**{s.letter}** {s.name}" for s in STRATEGIES.values())
    return say(
        "*The strategy letters (built in 01-chunking):* {letters}. Blind cuts every {size} characters; "
        "boundaries packs whole paragraphs up to {size}; the header is `[title > section]`; overlap carries "
        "the previous chunk's last {overlap} characters.",
        letters=letters,
        size=SIZE,
        overlap=OVERLAP,
    )


def word_pieces() -> str:
    """What a word piece is, in one sentence (Markdown)."""
    return say(
        '*Word pieces:* the units the encoder reads, whole words or fragments of rarer ones ("tokenisation" '
        'may become "token" + "##isation"); it embeds at most {window} of them per text (its window), and '
        "ignores the rest.",
        window=WINDOW,
    )
