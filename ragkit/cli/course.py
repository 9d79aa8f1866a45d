"""The course's commands: corpus-stats, validate, eval, models (the optional ones eval and ask use), ask, sweep."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ragkit.cli.common import CORPUS_HELP, OOD_HELP, QUESTIONS_HELP, Subcommands, positive_seconds, print
from ragkit.errors import RagkitError
from ragkit.retrieval import RETRIEVERS
from ragkit.threshold import DEFAULT_CUT

if TYPE_CHECKING:
    from ragkit.chunking import Chunk
    from ragkit.corpus import Corpus
    from ragkit.retrieval import Reranker, Retriever

__all__ = ["add_course_commands"]


def _load_corpus(folder: Path) -> Corpus:
    """Load a corpus for a command and name every document left out, one line each on stderr."""
    from ragkit.corpus import load_corpus
    from ragkit.terminal import shown

    corpus = load_corpus(folder)
    for f in corpus.failed:
        print(f"FAILED {shown(f.path.name, None)}: {f.reason}", file=sys.stderr)
    return corpus


def _strategies(value: str) -> str:
    """The --strategies argument: one or more letters of known strategies."""
    from ragkit.chunking import STRATEGIES

    letters = value.strip().upper()
    unknown = sorted(set(letters) - set(STRATEGIES))
    if not letters or unknown:
        raise argparse.ArgumentTypeError(
            f"{value!r} names no strategy{' ' + ', '.join(unknown) if unknown else ''}: "
            f"give one or more of the letters {''.join(STRATEGIES)}, e.g. ACE"
        )
    return letters


def _corpus_stats(args: argparse.Namespace) -> int:
    from ragkit.corpus import corpus_stats, load_corpus
    from ragkit.terminal import shown

    corpus = load_corpus(args.corpus)
    rows = corpus_stats(corpus)
    cols = [
        "characters",
        "sections",
        "tables",
        "formulas",
        "code_blocks",
        "bullets",
        "paragraphs_over_512",
        "paragraphs_over_1200",
        "outside_bmp",
    ]
    width = max(len(shown(r.id, None)) for r in rows)  # as printed: an escaped name is longer than the raw one
    print(f"{'document':<{width}}  " + "  ".join(c.replace("paragraphs_", "para_") for c in cols))
    for r in rows:
        print(
            f"{shown(r.id, None):<{width}}  "
            + "  ".join(f"{getattr(r, c):>{len(c.replace('paragraphs_', 'para_'))}}" for c in cols)
        )
    print(f"{len(corpus.documents)} documents loaded, {len(corpus.failed)} failed")
    for f in corpus.failed:
        print(f"  FAILED {shown(f.path.name, None)}: {f.reason}")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from ragkit.data import (
        EXPECTED,
        MAX_SHARED,
        ground_truth_summary,
        read_out_of_domain,
        read_questions,
        ticket_rule_breaches,
    )
    from ragkit.data import validate as validate_data

    corpus = _load_corpus(args.corpus)
    questions, problems = read_questions(args.questions)
    ood, more = read_out_of_domain(args.ood)
    problems += more + validate_data(corpus, questions, ood, None if args.any_count else EXPECTED)
    print(ground_truth_summary(questions, ood))
    for qid, words in ticket_rule_breaches(questions):
        print(
            f"WARNING {qid}: its ticket shares {len(words)} distinctive words with the needle {words}, more than "
            f"the {MAX_SHARED} exercise 3 allows (the ground truth stays frozen; students should not copy it)"
        )
    if problems:
        print(f"\n{len(problems)} problem(s):")
        for problem in problems:
            print(f"  {problem}")
        return 1
    print("ground truth is valid")
    return 0


def _writable(path: Path) -> None:
    """Refuse an output file that cannot be written, before any work is done."""
    import os

    from ragkit.errors import InputError

    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise InputError(f"--json {path} is a folder: name a file, e.g. {path / 'eval.json'}")
    if not folder.is_dir():
        raise InputError(
            f"cannot write --json {path}: the folder {folder} does not exist; create it first "
            f"(mkdir -p {folder}) or name a file in an existing folder"
        )
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise InputError(f"cannot write --json {path}: no write permission; name a file in a folder you can write to")


def _eval(args: argparse.Namespace) -> int:
    import json

    from ragkit.data import load_questions
    from ragkit.evaluation import evaluate
    from ragkit.report import report
    from ragkit.rerank import LateInteractionReranker, available_reranker
    from ragkit.teach.course import chapter

    if args.json:
        _writable(args.json)
    corpus = _load_corpus(args.corpus)
    questions = load_questions(args.questions)
    rerankers: list[Reranker] = []
    if "rerank" in args.rerankers:
        found = available_reranker()
        if found:
            rerankers.append(found)
        else:
            print("note: cross-encoder not on this machine (run `make models` with internet); no rerank runs\n")
    if "maxsim" in args.rerankers:
        rerankers.append(LateInteractionReranker())
    ev = evaluate(corpus, questions, args.strategies, args.retrievers, rerankers, progress=not args.quiet)
    wanted = list(chapter.COMPARISONS) + [
        (f"E/hybrid+{r.name}", "E/dense", m) for r in rerankers for m in ("Hit@1", "MRR")
    ]
    rep = report(ev, wanted, chapter.FINDINGS | chapter.RERANK_FINDINGS)
    print(
        f"{len(corpus.documents)} documents, {sum(len(d.text) for d in corpus.documents):,} characters; "
        f"{len(questions)} questions, {len(ev.queries)} queries\n"
    )
    print(rep)
    if args.json:
        args.json.write_text(json.dumps(rep.to_dict(), indent=1))
        print(f"\nwrote {args.json}")
    return 0


def _models(args: argparse.Namespace) -> int:
    from ragkit.plumbing.models import GENERATOR, RERANKER, download, hub_model_path

    failed = 0
    for model in (RERANKER, GENERATOR):
        try:
            print(f"{model.name}: already at {hub_model_path(model)}")
            continue
        except RagkitError:
            pass
        try:
            print(f"{model.name}: downloaded to {download(model)}")
        except RagkitError as exc:
            failed += 1
            print(f"{model.name}: {exc}", file=sys.stderr)
    return 1 if failed else 0


def _rerank_offered() -> bool:
    """True when ``make models`` fetched the cross-encoder (a folder is looked for; no model is loaded)."""
    from ragkit.plumbing.models import RERANKER, hub_model_path

    try:
        hub_model_path(RERANKER)
    except RagkitError:
        return False
    return True


def _ask_retriever(value: str) -> str:
    """The --retriever argument of ask: a retriever the course built, ``rerank`` only where the cross-encoder is."""
    if value in RETRIEVERS:
        return value
    if value == "rerank":
        if _rerank_offered():
            return value
        raise argparse.ArgumentTypeError(
            "rerank: the cross-encoder is not on this machine; run `make models` on a "
            f"machine with internet, or choose one of {', '.join(RETRIEVERS)}"
        )
    offered = [*RETRIEVERS, *(["rerank"] if _rerank_offered() else [])]
    raise argparse.ArgumentTypeError(f"{value}: choose one of {', '.join(offered)}")


def _retriever_for_ask(chunks: list[Chunk], strategy: str) -> tuple[Retriever, str]:
    """The retriever over a strategy's chunks, and the one sentence that says how many the encoder truncated."""
    import warnings

    from ragkit.retrieval import Retriever
    from ragkit.tokens import TruncationWarning, token_report

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TruncationWarning)
        retriever = Retriever(chunks, strategy=strategy, progress=False)
    if not any(issubclass(w.category, TruncationWarning) for w in caught):
        return retriever, ""
    report = token_report(chunks, retriever.embedder.stamp.window, warn=False)
    return retriever, (
        f"note: {report.over_window} of {report.chunks} chunks of strategy {strategy} are longer than "
        f"the encoder's {report.window}-piece window, so their vectors stand for their beginning only "
        "(notebook 01 shows which)."
    )


def _ask(args: argparse.Namespace) -> int:
    from ragkit.answer import NoAnswer, answer
    from ragkit.chunking import chunk_corpus
    from ragkit.citations import citation_table
    from ragkit.terminal import shown
    from ragkit.threshold import KEEP, check_cut

    cut = None if args.cut == 0 else check_cut(args.cut)  # before any work: nan, an infinity or 3 is refused at once
    corpus = _load_corpus(args.corpus)
    retriever, truncation = _retriever_for_ask(chunk_corpus(corpus, args.strategy), args.strategy)
    reranker = None
    if args.retriever == "rerank":
        from ragkit.rerank import CrossEncoderReranker

        reranker = CrossEncoderReranker()
    ranked_by = "hybrid" if args.retriever == "rerank" else args.retriever
    result = answer(args.question, retriever, cut, ranked_by=ranked_by, reranker=reranker)
    if isinstance(result, NoAnswer):  # refused by the gate: no generator is loaded, no model is called
        print(f"{result}  ({result.retriever} on strategy {args.strategy})")
        return 0
    if args.generate:  # loaded only now that the gate let a chunk through
        from ragkit.generation import Generator

        result = result.written_by(Generator(time_limit_s=args.time_limit))
    gated = "no cut" if cut is None else f"{len(result.citations)} of the first {KEEP} under the cut {cut:g}"
    print(f"sources: {result.retriever} on strategy {args.strategy}, {gated}")
    print(f"{'#':>2}  {'document':<36} {'section':<44} {'fragment':<20} distance")
    for r in citation_table(result.citations):  # the names escaped before they are padded, so the columns align
        print(
            f"{r['index']:>2}  {shown(r['document'], None):<36} {shown(r['section'], 44)[:44]:<44} "
            f"{r['fragment']:<20} {r['distance']:.3f}"
        )
    if truncation:
        print(truncation)
    print(f"\nprompt: {result.prompt_tokens} tokens ({result.counted_with})")
    if args.show_prompt:
        print("\n" + result.prompt)
    cited = result.cited()
    if cited is not None and result.generation is not None:
        g = result.generation
        print(
            f"\n{result.generator} (greedy, {g.new_tokens} new tokens, "
            + ("read back from the cache" if g.cached else f"{g.seconds:.1f} s")
            + "):"
        )
        print(cited.text or "(no text)")
        for note in (cited.unknown_note, result.stop_note):
            if note:
                print(f"note: {note}")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from ragkit.data import load_out_of_domain, load_questions
    from ragkit.threshold import sweep

    s = sweep(
        _load_corpus(args.corpus),
        load_questions(args.questions),
        load_out_of_domain(args.ood),
        args.strategy,
        args.retriever,
        progress=False,
    )
    print(f"gate: keep at most {s.keep} chunks under the cut; {args.retriever} on strategy {args.strategy}")
    print(f"{'cut':>8}  {'bluffs':>7}  {'refused':>8}  {'with needle':>11}  {'without':>7}")
    for row in s.rows():
        cut = "none" if row.cut is None else f"{row.cut:.3f}"
        print(
            f"{cut:>8}  {row.bluffs:>4}/{row.out_of_domain}  {row.refused:>5}/{row.in_domain}  "
            f"{row.answered_with_needle:>11}  {row.answered_without_needle:>7}"
        )
    print(
        f"\nworst in-domain best-answer distance {s.worst_in_domain:.3f}; "
        f"best out-of-domain distance {s.best_out_of_domain:.3f}"
        + ("  (they overlap: no cut gets both right)" if s.best_out_of_domain < s.worst_in_domain else "")
    )
    return 0


def add_course_commands(sub: Subcommands) -> None:
    """The course's commands and their arguments, in the order ``--help`` lists them."""
    from ragkit.generation import TIME_LIMIT_S

    p = sub.add_parser("corpus-stats", help="documents, characters, sections, tables, formulas, code blocks")
    p.add_argument("--corpus", type=Path, help=CORPUS_HELP)
    p.set_defaults(run=_corpus_stats)
    p = sub.add_parser("validate", help="check the ground truth against the corpus; exit 1 with every problem")
    p.add_argument("--corpus", type=Path, help=CORPUS_HELP)
    p.add_argument("--questions", type=Path, help=QUESTIONS_HELP)
    p.add_argument("--ood", type=Path, help=OOD_HELP)
    p.add_argument("--any-count", action="store_true", help="skip the bundled data's expected counts")
    p.set_defaults(run=_validate)
    p = sub.add_parser("eval", help="hit@k, MRR, destroyed answers and paired comparisons")
    p.add_argument("--corpus", type=Path, help=CORPUS_HELP)
    p.add_argument("--questions", type=Path, help=QUESTIONS_HELP)
    p.add_argument(
        "--strategies",
        type=_strategies,
        default="ABCDEF",
        help="chunking strategies to evaluate, letters of ABCDEF, e.g. ACE (default all six)",
    )
    p.add_argument(
        "--retrievers",
        nargs="+",
        default=list(RETRIEVERS),
        choices=RETRIEVERS,
        help=f"retrievers to evaluate on each strategy (default all: {' '.join(RETRIEVERS)})",
    )
    p.add_argument(
        "--rerankers",
        nargs="*",
        default=["rerank"],
        choices=["rerank", "maxsim"],
        help="rerank the hybrid top 25 of strategy E (rerank: cross-encoder, when installed)",
    )
    p.add_argument("--json", type=Path, help="write every figure and per-query rank to this file")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(run=_eval)
    p = sub.add_parser("models", help="download the optional hub-only models at pinned revisions (needs internet)")
    p.set_defaults(run=_models)
    p = sub.add_parser(
        "ask",
        help="retrieve, gate and cite (NO ANSWER when nothing passes the cut); with "
        "--generate, a small model writes the answer from the sources",
    )
    p.add_argument("question", help="what you want to know, in quotes")
    p.add_argument(
        "--cut",
        type=float,
        default=DEFAULT_CUT,
        help=f"cosine distance cut in (0, 2]; 0 for no threshold (default {DEFAULT_CUT})",
    )
    p.add_argument("--strategy", default="E", help="chunking strategy, one letter of ABCDEF (default E)")
    p.add_argument("--corpus", type=Path, help=CORPUS_HELP)
    p.add_argument(
        "--retriever",
        type=_ask_retriever,
        default="dense",
        metavar="{" + ",".join(RETRIEVERS) + "[,rerank]}",
        help="which ranking chooses the sources (default dense); rerank: the hybrid top 25 reordered by "
        "the cross-encoder, offered where `make models` fetched it. Whichever ranks, the cut is on "
        "the dense cosine distance",
    )
    p.add_argument("--show-prompt", action="store_true", help="print the prompt the generator would read")
    p.add_argument(
        "--generate",
        action="store_true",
        help="let the generator (SmolLM2-135M-Instruct, greedy) write the answer; loaded only when the "
        "gate lets a chunk through",
    )
    p.add_argument(
        "--time-limit",
        type=positive_seconds,
        default=TIME_LIMIT_S,
        metavar="SECONDS",
        help=f"seconds the generator may write before it is stopped (default {TIME_LIMIT_S:g})",
    )
    p.set_defaults(run=_ask)
    p = sub.add_parser("sweep", help="bluffs and refusals against the cut")
    p.add_argument("--corpus", type=Path, help=CORPUS_HELP)
    p.add_argument("--questions", type=Path, help=QUESTIONS_HELP)
    p.add_argument("--ood", type=Path, help=OOD_HELP)
    p.add_argument("--strategy", default="E", help="chunking strategy, one letter of ABCDEF (default E)")
    p.add_argument(
        "--retriever",
        default="dense",
        choices=RETRIEVERS,
        help="which ranking chooses the chunks (default dense); the cut is on the dense cosine distance",
    )
    p.set_defaults(run=_sweep)
