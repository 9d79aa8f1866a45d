"""Overlap's measured pull speaks the kernel's language: Dutch in a Dutch notebook, English unchanged."""

import numpy as np

from ragkit.chunking import Chunk
from ragkit.teach import language
from ragkit.teach.lesson import overlap


def _measured(lost):
    sections = ["s1", "s1", "s1", "s2", "s2", "s2"]
    plain = [Chunk("d", "D", sec, 10 * i, 10 * i + 9, f"c{i} needle{i}") for i, sec in enumerate(sections)]
    lapped = [
        Chunk("d", "D", sec, 10 * i, 10 * i + 9, f"c{i} needle{i}", overlap="tail" if i else "")
        for i, sec in enumerate(sections)
    ]
    eye = np.eye(4)

    def unit(v):
        return v / np.linalg.norm(v)

    before = np.array(
        [unit(eye[0] + 0.1 * k * eye[2]) for k in range(3)] + [unit(eye[1] + 0.1 * k * eye[2]) for k in range(3)]
    )
    after = before.copy()
    after[3] = unit(eye[1] + 0.5 * eye[0])
    return overlap.measure_pull(("E", plain, before), ("F", lapped, after), lost)


def test_overlap_sentence_is_dutch_in_a_dutch_kernel():
    for lost in ([("q3", "needle3"), ("q1", "needle1")], [("q3", "needle3")], []):
        m = _measured(lost)
        with language.speaking("nl"):
            text = overlap.sentence(m)
        assert "**F tegen E**" in text and "sectie" in text
        for english in ("start a new section", "loses to", "on average", "of them", "nothing more to check", "moved"):
            assert english not in text, (english, text)
        assert f"{m.mean('toward'):+.4f}".replace(".", ",") in text  # Dutch decimal comma


def test_overlap_sentence_english_unchanged():
    text = overlap.sentence(_measured([("q3", "needle3")]))
    assert text.startswith(
        "**F against E**: of **6** chunks, **1** start a new section and carry an overlap from the one before."
    )
    assert "The one needle F loses to E sits in a chunk whose vector moved more than 83% of all chunks' did: " in text
    assert text.endswith(
        "; it starts a new section, so the pull toward the previous section is part of the story. One needle is an "
        "anecdote, not a pattern."
    )


def test_one_lost_needle_is_one_in_both_languages():
    """One needle is "it" and "its chunk", never "of them", "they" or "**1** ervan beginnen"."""
    for lost in ([("q3", "needle3")], [("q1", "needle1")]):
        m = _measured(lost)
        english = overlap.sentence(m)
        with language.speaking("nl"):
            dutch = overlap.sentence(m)
        assert "The one needle" in english and "De enige needle" in dutch
        english, dutch = english.split("The one needle")[1], dutch.split("De enige needle")[1]  # the lost needle's part
        assert "of them" not in english and " them:" not in english and "their overlap" not in english, english
        assert "ervan" not in dutch and " ze " not in dutch and "hun overlap" not in dutch, dutch
