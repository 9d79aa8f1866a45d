"""Command line: ``python -m ragkit COMMAND``; every command works offline on the bundled data."""

from __future__ import annotations

import argparse
import sys

from ragkit.cli.classroom import add_classroom_commands
from ragkit.cli.common import fill_data_defaults, print
from ragkit.cli.course import add_course_commands
from ragkit.cli.grading import add_grading_commands
from ragkit.cli.project import add_project_commands
from ragkit.cli.vectors import add_vector_commands
from ragkit.errors import RagkitError

__all__ = ["main", "parser"]


def parser() -> argparse.ArgumentParser:
    """The command line: every command, and a help text for every argument of every command."""
    parser = argparse.ArgumentParser(prog="python -m ragkit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (
        add_course_commands,
        add_vector_commands,
        add_classroom_commands,
        add_grading_commands,
        add_project_commands,
    ):
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run one command; a RagkitError prints its message and exits 1."""
    args = parser().parse_args(argv)
    try:
        fill_data_defaults(args)
        return args.run(args)
    except RagkitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
