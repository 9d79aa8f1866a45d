"""``python -m book [--out DIR] [--jobs N]``: execute every main notebook and exercise, write the site.

``--out`` is replaced only when it is empty or holds a site this command wrote (its ``.ragkit-book`` file lists
every file it wrote); anything else is refused before a notebook runs.
"""

import argparse
from pathlib import Path

from book.build import ROOT, build
from ragkit.errors import RagkitError


def main(argv: list[str] | None = None) -> None:
    """Build the book into ``--out``."""
    parser = argparse.ArgumentParser(
        prog="python -m book", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "book", help="where the site goes")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks executed at once")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be 1 or more")
    try:
        report = build(args.out, jobs=args.jobs, progress=lambda line: print(line, flush=True))
    except RagkitError as exc:
        parser.exit(1, f"python -m book: {exc}\n")
    print(report.summary())


if __name__ == "__main__":
    main()
