"""The one protocol of the classroom's file generators: write, check, and a translation's skeleton.

Three modules write files into a clone of the course from what it holds, and check that what is committed there is
what they would write: ``edition`` (the Dutch notebooks, from the English ones and a catalogue of translated cells),
``guides`` (the Dutch teacher's guides, from the English ones and a catalogue of translated blocks) and ``address``
(the course's address, from its one setting, into every file that carries it). Each is a module with the verbs below,
so ``python -m ragkit edition`` drives the notebooks' and the guides' generators the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

__all__ = ["FileGenerator", "Stale", "TranslationGenerator", "toml_string"]


@dataclass(frozen=True)
class Stale:
    """One reason a committed file is not what its generator writes: what it concerns (a notebook, a guide, a file
    of the clone) and the line that says so, in words its author can act on."""

    where: str
    line: str

    def __str__(self) -> str:
        return self.line


class FileGenerator(Protocol):
    """Files written into a clone of the course from what it holds, and checked against what is committed there."""

    def write(self, root: Path) -> list[Path]:
        """Write the files into the clone at ``root``; the paths written."""
        ...

    def check(self, root: Path) -> list[Stale]:
        """Write nothing: every reason a committed file is not what ``write`` would make of it."""
        ...


class TranslationGenerator(FileGenerator, Protocol):
    """A generator of a translation, whose catalogue holds what a translator wrote: one entry per English piece."""

    def skeleton(self, root: Path) -> list[Path]:
        """Add to the catalogue an entry with an empty ``nl`` for each English piece it lacks; the files written."""
        ...


def toml_string(text: str) -> str:
    """``text`` as a TOML string: a literal multi-line string where it can be one, else a basic string."""
    if "'''" not in text and not text.endswith("'") and "\r" not in text:
        return "'''\n" + text + "'''"
    return json.dumps(text, ensure_ascii=False)
