"""The project's commands (weeks 8 to 10, docs/project.md): example, split, run and check, one folder each."""

from __future__ import annotations

import argparse
from pathlib import Path

from ragkit.cli.common import Subcommands, print

__all__ = ["add_project_commands"]


def _example(args: argparse.Namespace) -> int:
    import shutil

    from ragkit.errors import InputError
    from ragkit.plumbing.locations import data_dir
    from ragkit.project import CORPUS_FOLDER, SEALED, SPLIT_FILE

    source, target = data_dir() / "example", Path(args.folder)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InputError(f"{target} exists and is not an empty folder: name a new folder for the copy")
    shutil.copytree(source / CORPUS_FOLDER, target / CORPUS_FOLDER)
    for name in (*SEALED, SPLIT_FILE):
        shutil.copy2(source / name, target / name)
    print(f"copied the worked example's project to {target}: run `python -m ragkit project run {target}` to judge it")
    return 0


def _split(args: argparse.Namespace) -> int:
    from ragkit.project import write_split

    path = write_split(args.folder)
    print(
        f"wrote {path}: the course's split of the needles, and the sha256 of every document, the ground truth and "
        "the plan. Commit it now, before any retrieval: the held-out half is judged only on what was sealed here."
    )
    return 0


def _run(args: argparse.Namespace) -> int:
    from ragkit.project import run_project, write_results

    outcome = run_project(args.folder, progress=not args.quiet)
    print(outcome)
    if not args.no_write:
        print(f"\nwrote {write_results(args.folder, outcome)}: quote its figures in your report")
    return 0


def _check(args: argparse.Namespace) -> int:
    from ragkit.teach.exercises.project_check import check_project

    feedback = check_project(args.folder)
    print(feedback)
    return 0 if feedback.passed else 1


def add_project_commands(sub: Subcommands) -> None:
    """The project's command and its four actions."""
    p = sub.add_parser("project", help="a project on documents of your own: example, split, run, check")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION", help="what to do with the folder")
    a = actions.add_parser("example", help="copy the worked example's project (docs/project.md) into a new folder")
    a.add_argument("folder", type=Path, help="a new or empty folder")
    a.set_defaults(run=_example)
    a = actions.add_parser(
        "split", help="split the needles (the course's one split) and seal the files, before any retrieval"
    )
    a.add_argument(
        "folder", type=Path, help="the project's folder: corpus/, questions.jsonl, out_of_domain.jsonl, project.toml"
    )
    a.set_defaults(run=_split)
    a = actions.add_parser(
        "run", help="choose a run and a cut on the tuning half, judge both on the held-out half; write results.json"
    )
    a.add_argument("folder", type=Path, help="the project's folder, split and sealed")
    a.add_argument("--no-write", action="store_true", help="print the figures only; leave results.json as it is")
    a.add_argument("--quiet", action="store_true", help="no progress bars")
    a.set_defaults(run=_run)
    a = actions.add_parser(
        "check", help="what the grader checks by machine: the split respected, the figures recomputed from the files"
    )
    a.add_argument("folder", type=Path, help="the project's folder as you hand it in")
    a.set_defaults(run=_check)
