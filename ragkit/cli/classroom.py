"""The classroom's commands: workspace, class-repo, edition, address (the only importer of ragkit.teach.classroom)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ragkit.cli.common import Subcommands, print

__all__ = ["add_classroom_commands"]


def _clone(what: str) -> Path:
    """The clone of the course ragkit runs from; an InputError saying ``what`` needs one when it runs installed."""
    from ragkit.errors import InputError
    from ragkit.plumbing.locations import checkout

    root = checkout()
    if root is None:
        raise InputError(f"{what}: run this from its checkout")
    return root


def _edition(args: argparse.Namespace) -> int:
    from ragkit.teach.classroom import edition, guides
    from ragkit.teach.classroom.generated import TranslationGenerator

    root = _clone("the Dutch edition is generated in a clone of the course")
    # the notebooks' and the guides' translations, each driven the same way; what one entry of its catalogue holds
    translations: tuple[tuple[TranslationGenerator, str], ...] = ((edition, "cell"), (guides, "block"))
    if args.skeleton:
        for generator, piece in translations:
            for path in generator.skeleton(root):
                print(
                    f"catalogue {path.relative_to(root)}: every {piece} it lacked is there, with an empty `nl` to fill"
                )
        return 0
    if not args.check:
        for path in [path for generator, _ in translations for path in generator.write(root)]:
            print(f"wrote {path.relative_to(root)}")
    problems = [problem for generator, _ in translations for problem in generator.check(root)]
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem(s) in the Dutch edition: {edition.UPDATE}", file=sys.stderr)
        return 1
    return 0


def _address(args: argparse.Namespace) -> int:
    from ragkit.errors import InputError
    from ragkit.teach.classroom import address
    from ragkit.teach.classroom.generated import FileGenerator

    root = _clone("the course's address is written into a clone of the course")
    carriers: FileGenerator = address  # one of the classroom's generators, as the Dutch edition's two are
    asked = args.repository is not None or args.branch is not None
    if args.check and asked:
        raise InputError("--check writes nothing: leave out the repository and --branch, or leave out --check")
    if not args.check:
        for path in address.write(root, address.asked(root, args.repository, args.branch) if asked else None):
            print(f"wrote {path.relative_to(root)}")
    stale = carriers.check(root)
    for problem in stale:
        print(problem)
    if not address.Address.load(root).is_set:
        print(address.UNSET_NOTE)
    if stale:
        print(
            f"{len(stale)} file(s) disagree with {address.SETTING}: run `make address` and commit them", file=sys.stderr
        )
        return 1
    return 0


def _workspace(args: argparse.Namespace) -> int:
    from ragkit.teach.classroom.workspace import project, refresh

    print(refresh(project(args.project)))
    return 0


def _class_repo(args: argparse.Namespace) -> int:
    from ragkit.teach.classroom.class_repo import release

    root = _clone("the class's repository is written from a clone of the course")
    print(release(root, args.out, args.repository, args.branch))
    return 0


def add_classroom_commands(sub: Subcommands) -> None:
    """The classroom's commands and their arguments."""
    p = sub.add_parser(
        "workspace",
        help="copy the notebooks into my-notebooks/ (yours, ignored by git), or bring "
        "the teacher's updates there without touching a notebook you changed",
    )
    p.add_argument("--project", type=Path, help="the course's folder (default: the current one, else this clone)")
    p.set_defaults(run=_workspace)
    p = sub.add_parser(
        "class-repo",
        help="write the repository a class pulls: the course without its worked solutions and the teacher's guide",
    )
    p.add_argument(
        "out",
        type=Path,
        help="a new or empty folder outside this clone, or the class's repository "
        "written there before (a clone of it): the next version, its next commit",
    )
    p.add_argument(
        "--repository",
        help="the class's repository (https://github.com/OWNER/REPO): the copy's Colab, "
        "Binder and hub links lead there, not to the public repository",
    )
    p.add_argument("--branch", help="its branch (default main)")
    p.set_defaults(run=_class_repo)
    p = sub.add_parser(
        "edition",
        help="write the Dutch notebooks and guides from the English ones and their "
        "catalogues (notebooks/nl/catalogue/, docs/nl/catalogue/)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 naming every stale, missing or orphaned translation and every "
        "Dutch notebook that differs from what would be written",
    )
    p.add_argument(
        "--skeleton",
        action="store_true",
        help="write nothing but the catalogues: add an entry with an empty `nl` for each English cell or block a "
        "catalogue lacks (a translator's starting point)",
    )
    p.set_defaults(run=_edition)
    p = sub.add_parser(
        "address",
        help="set the course's address (book/book.toml) and write it into every notebook's "
        "Colab cell and the README's and docs' links",
    )
    p.add_argument("repository", nargs="?", help="https://github.com/OWNER/NAME (default: book/book.toml's)")
    p.add_argument("--branch", help="the branch or tag students install and open (default: book/book.toml's)")
    p.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 naming every file that does not carry book/book.toml's address",
    )
    p.set_defaults(run=_address)
