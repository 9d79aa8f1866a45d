"""Class time of a notebook at a stated pace, in full or its core sections only.

The pace: a class reads prose at about ``WORDS_PER_MINUTE`` (on screen, with code beside it), spends
``MINUTES_PER_CELL`` on each code cell (run it, look at the output), and ``DISCUSSION`` minutes per
notebook on talk and the knowledge check. A section whose ``## `` heading ends in ``(optional)`` (in a Dutch
notebook ``(optioneel)``) can be skipped in a short session; everything else is core. A notebook's closing list of
sources (``## Sources``, in Dutch ``## Bronnen``) is read after class, so it takes no class time.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import jupytext  # type: ignore[import-untyped]

__all__ = [
    "DISCUSSION",
    "EXERCISE_WORK",
    "MINUTES_PER_CELL",
    "OPTIONAL",
    "UNTIMED",
    "WORDS_PER_MINUTE",
    "class_minutes",
    "class_times",
    "notebook_sections",
]

WORDS_PER_MINUTE = 100
MINUTES_PER_CELL = 0.5
DISCUSSION = 5
OPTIONAL = ("(optional)", "(optioneel)")
"""How a heading marks its section optional, in English and in the Dutch edition."""
UNTIMED = ("Sources", "Bronnen")
"""The headings of a section that is no class time (the notebook's references), in English and in Dutch."""


def notebook_sections(path: Path) -> list[tuple[str, bool, int, int]]:
    """Per section of a notebook twin: (heading, optional, prose words, code cells); the opening cells first.

    A section starts at a ``## `` line, also one in the middle of a markdown cell. A section headed exactly as
    ``UNTIMED`` names is left out: its words and cells are no class time.
    """
    out: list[tuple[str, bool, int, int]] = [("(opening)", False, 0, 0)]
    for cell in jupytext.read(path).cells:
        if cell.cell_type != "markdown":
            name, optional, words, cells = out[-1]
            out[-1] = (name, optional, words, cells + 1)
            continue
        for line in cell.source.splitlines():
            if line.startswith("## "):
                heading = line[3:].strip()
                out.append((heading, heading.endswith(OPTIONAL), 0, 0))
            name, optional, words, cells = out[-1]
            out[-1] = (name, optional, words + len(re.findall(r"\w+", line)), cells)
    return [section for section in out if section[0] not in UNTIMED]


def class_minutes(path: Path, core_only: bool = False) -> int:
    """Minutes a class needs for a notebook at the stated pace, rounded up."""
    kept = [s for s in notebook_sections(path) if not (core_only and s[1])]
    words = sum(s[2] for s in kept)
    cells = sum(s[3] for s in kept)
    return math.ceil(words / WORDS_PER_MINUTE + cells * MINUTES_PER_CELL + DISCUSSION)


def class_times(notebooks: Path, language: str = "en") -> dict[str, str]:
    """The teacher's guide's class-time figures of every lesson, from its twin in ``language``: ``full_NN`` and
    ``core_NN`` (minutes in full and of its core sections; NN is the lesson's number, ``02b``), and ``minutes_exN``
    (an exercise's class time plus ``EXERCISE_WORK``), as the guide's ``<!--fig:...-->`` markers name them."""
    twins = notebooks / "twins" if language == "en" else notebooks / "twins" / language
    suffix = ".py" if language == "en" else f".{language}.py"
    out = {}
    for twin in sorted(twins.glob(f"0*{suffix}")):
        name = twin.name.split("-", 1)[0]
        out[f"full_{name}"], out[f"core_{name}"] = str(class_minutes(twin)), str(class_minutes(twin, True))
    for twin in sorted((twins / "exercises").glob(f"ex*{suffix}")):
        out[f"minutes_{twin.name.split('-', 1)[0]}"] = str(class_minutes(twin) + EXERCISE_WORK)
    return out


EXERCISE_WORK = 15
"""Minutes of a student's own work on an exercise, on top of reading and running it at the pace above."""
