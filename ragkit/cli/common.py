"""What every command group of the command line shares: its printer, the course data's defaults, number options."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = [
    "CORPUS_HELP",
    "DATA_FILES",
    "OOD_HELP",
    "QUESTIONS_HELP",
    "Subcommands",
    "fill_data_defaults",
    "jobs",
    "niceness",
    "positive_seconds",
    "print",
    "seconds",
]

Subcommands = argparse._SubParsersAction
"""Where a command group adds its commands: the parser's ``add_subparsers()``."""
DATA_FILES = {"corpus": "corpus", "questions": "questions.jsonl", "ood": "out_of_domain.jsonl"}
"""Options that default to a file of the course data folder (ragkit.plumbing.locations.data_dir)."""
CORPUS_HELP = "a folder of Markdown documents (default: the course's chapters)"
QUESTIONS_HELP = "the course questions with their needles, JSON lines (default: the course's questions.jsonl)"
OOD_HELP = "the out-of-domain queries, JSON lines (default: the course's out_of_domain.jsonl)"


def print(*values: object, sep: str = " ", end: str = "\n", file=None, flush: bool = False) -> None:
    """Every line a command writes, through ``ragkit.terminal.shown``: a document's name or heading, a student's
    folder, a prompt or an answer cannot carry a terminal escape (newlines and tabs stay)."""
    import builtins

    from ragkit.terminal import shown

    builtins.print(shown(sep.join(map(str, values)), None, lines=True), end=end, file=file, flush=flush)


def fill_data_defaults(args: argparse.Namespace) -> None:
    """Point data options left unset at the course data folder, resolved only when a command needs it."""
    from ragkit.plumbing.locations import data_dir

    for option, name in DATA_FILES.items():
        if getattr(args, option, "") is None:
            setattr(args, option, data_dir() / name)


def _number(
    kind: type[int] | type[float], low: float, high: float = math.inf, above: bool = False, give: str = ""
) -> Callable[[str], float]:
    """An argparse type: a finite ``kind`` from ``low`` (excluded when ``above``) to ``high``.

    ``give`` says what to type instead, after the value refused: nan, an infinity or a value out of range
    would otherwise be taken and enforce nothing (``--timeout nan`` stops no notebook).
    """

    def parse(value: str) -> float:
        try:
            number = kind(value)
        except ValueError:
            number = math.nan
        if math.isfinite(number) and (low < number if above else low <= number) and number <= high:
            return number
        raise argparse.ArgumentTypeError(f"{value}: give {give}")

    return parse


positive_seconds = _number(float, 0, above=True, give="a finite number of seconds above 0")
"""A time limit: ask's --time-limit, grade's --timeout."""
seconds = _number(float, 0, give="a finite number of seconds, 0 or more")
"""A wait that may be none: index's --wait."""
jobs = _number(int, 1, give="a whole number of notebooks, at least 1")
"""How many notebooks grade runs at once: --jobs."""
niceness = _number(int, -20, 19, give="a whole number from -20 (the highest priority) to 19 (the lowest)")
"""The background warmer's priority: warm's --nice."""
