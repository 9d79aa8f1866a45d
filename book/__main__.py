"""``python -m book [--out DIR] [--jobs N]``: execute every main notebook and exercise, write the site."""

import argparse
from pathlib import Path

from book.build import ROOT, build


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m book", description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "book", help="where the site goes")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks executed at once")
    args = parser.parse_args()
    report = build(args.out, jobs=args.jobs)
    print(report.summary())


if __name__ == "__main__":
    main()
