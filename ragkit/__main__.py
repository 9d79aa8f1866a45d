"""Command line: ``python -m ragkit COMMAND``; every command works offline on the bundled data."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ragkit.errors import RagkitError

DATA = Path(__file__).resolve().parent.parent / "data"


def _corpus_stats(args: argparse.Namespace) -> int:
    from ragkit.corpus import corpus_stats, load_corpus

    corpus = load_corpus(args.corpus)
    rows = corpus_stats(corpus)
    cols = ["characters", "sections", "tables", "formulas", "code_blocks", "bullets",
            "paragraphs_over_512", "paragraphs_over_1200", "outside_bmp"]
    width = max(len(r.id) for r in rows)
    print(f"{'document':<{width}}  " + "  ".join(c.replace("paragraphs_", "para_") for c in cols))
    for r in rows:
        print(f"{r.id:<{width}}  " + "  ".join(f"{getattr(r, c):>{len(c.replace('paragraphs_', 'para_'))}}" for c in cols))
    print(f"{len(corpus.documents)} documents loaded, {len(corpus.failed)} failed")
    for f in corpus.failed:
        print(f"  FAILED {f.path.name}: {f.reason}")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from ragkit.corpus import load_corpus
    from ragkit.data import EXPECTED, read_out_of_domain, read_questions, summary, validate

    corpus = load_corpus(args.corpus)
    questions, problems = read_questions(args.questions)
    ood, more = read_out_of_domain(args.ood)
    problems += more + validate(corpus, questions, ood, None if args.any_count else EXPECTED)
    print(summary(questions, ood))
    if problems:
        print(f"\n{len(problems)} problem(s):")
        for problem in problems:
            print(f"  {problem}")
        return 1
    print("ground truth is valid")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run one command; a RagkitError prints its message and exits 1."""
    parser = argparse.ArgumentParser(prog="python -m ragkit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("corpus-stats", help="documents, characters, sections, tables, formulas, code blocks")
    p.add_argument("--corpus", type=Path, default=DATA / "corpus")
    p.set_defaults(run=_corpus_stats)
    p = sub.add_parser("validate", help="check the ground truth against the corpus; exit 1 with every problem")
    p.add_argument("--corpus", type=Path, default=DATA / "corpus")
    p.add_argument("--questions", type=Path, default=DATA / "questions.jsonl")
    p.add_argument("--ood", type=Path, default=DATA / "out_of_domain.jsonl")
    p.add_argument("--any-count", action="store_true", help="skip the bundled data's expected counts")
    p.set_defaults(run=_validate)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except RagkitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
