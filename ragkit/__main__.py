"""Command line: ``python -m ragkit COMMAND``; every command works offline on the bundled data."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ragkit.errors import RagkitError
from ragkit.retrieval import RETRIEVERS
from ragkit.threshold import DEFAULT_CUT

if TYPE_CHECKING:
    from ragkit.chunking import Chunk
    from ragkit.corpus import Corpus
    from ragkit.retrieval import Reranker, Retriever

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


def _fill_data_defaults(args: argparse.Namespace) -> None:
    """Point data options left unset at the course data folder, resolved only when a command needs it."""
    from ragkit.plumbing.locations import data_dir

    for option, name in DATA_FILES.items():
        if getattr(args, option, "") is None:
            setattr(args, option, data_dir() / name)


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


_positive_seconds = _number(float, 0, above=True, give="a finite number of seconds above 0")
_seconds = _number(float, 0, give="a finite number of seconds, 0 or more")
_jobs = _number(int, 1, give="a whole number of notebooks, at least 1")
_niceness = _number(int, -20, 19, give="a whole number from -20 (the highest priority) to 19 (the lowest)")


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
    from ragkit.data import EXPECTED, MAX_SHARED, read_out_of_domain, read_questions, summary, ticket_rule_breaches
    from ragkit.data import validate as validate_data

    corpus = _load_corpus(args.corpus)
    questions, problems = read_questions(args.questions)
    ood, more = read_out_of_domain(args.ood)
    problems += more + validate_data(corpus, questions, ood, None if args.any_count else EXPECTED)
    print(summary(questions, ood))
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


def _index(args: argparse.Namespace) -> int:
    from ragkit import index
    from ragkit.corpus import load_corpus
    from ragkit.embedding import default_embedder

    corpus = load_corpus(args.corpus)
    strategy, size, overlap = index.configured(args.out, args.strategy, corpus=corpus, rebuild=args.action == "build")
    if args.action == "status":
        stamp, _entries = index.read_index(args.out, corpus)
        if stamp is None:
            print(f"no index in {args.out}: run `python -m ragkit index build --corpus {args.corpus} --out {args.out}`")
            return 1
        report = index.status(corpus, args.out, index.current_stamp(default_embedder(), strategy, size, overlap))
    else:
        run = index.build if args.action == "build" else index.update
        report = run(corpus, args.out, default_embedder(), strategy, size, overlap, wait=args.wait)
    print(f"index {args.out}: strategy {strategy}, chunk size {size}, overlap {overlap}")
    print("\n".join(report.lines()))
    return 0 if report.searchable else 1


def _cache(args: argparse.Namespace) -> int:
    import shutil

    from ragkit.embedding import cache_dir, default_embedder
    from ragkit.plumbing.cache import FILENAME, VectorCache

    root = cache_dir()
    if args.action == "clear":
        from ragkit.errors import InputError
        from ragkit.plumbing import warming

        if not root.is_dir():
            print(f"cleared {root}: nothing to clear")
            return 0
        # under the warmer's lock: clearing beneath a running warmer would leave it reporting vectors that are gone;
        # taking the lock also rewrites the status file with no stage done
        with warming.holding(root) as holder:
            if holder is None:
                pid = warming.read_status(root).pid or "?"
                raise InputError(
                    f"a warmer (pid {pid}) is filling {root}: nothing cleared. Let it finish, or stop "
                    f"it (`kill {pid}`), then clear again"
                )
            removed = [p for p in (root / FILENAME, root / "onnx") if p.exists()]
            removed += [root / f"{FILENAME}{s}" for s in ("-wal", "-shm") if (root / f"{FILENAME}{s}").exists()]
            for path in removed:
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        print(f"cleared {root}: " + (", ".join(p.name for p in removed) if removed else "nothing to clear"))
        return 0
    cache: VectorCache = default_embedder().cache
    print(f"private cache: {root} (RAGKIT_CACHE)")
    if cache.shared is not None:
        print(f"shared cache:  {cache.shared.parent} (RAGKIT_SHARED_CACHE, read-only)")
    rows = cache.summary()
    if not rows:
        print("no cached vectors yet: `python -m ragkit warm` fills the cache")
    for layer, stamp, kind, n, size in rows:
        mark = "" if stamp == cache.stamp else "  (another model or configuration)"
        print(f"  {layer:<7} {kind:<6} {n:6,d} rows {size / 1e6:7.1f} MB  {stamp}{mark}")
    return 0


def _warm(args: argparse.Namespace) -> int:
    import os

    from ragkit.errors import InputError
    from ragkit.plumbing import warming
    from ragkit.plumbing.locations import cache_dir

    if args.cache:
        os.environ["RAGKIT_CACHE"] = str(args.cache)
    if args.background:
        if args.cache:
            raise InputError("--background warms the notebooks' own cache; fill a shared one in the foreground")
        print(warming.start_background(args.background, args.nice))
        return 0
    try:
        with warming.holding() as holder:
            if holder is None:
                print(
                    f"another warmer is running (pid {warming.read_status().pid or '?'}): this one leaves it to "
                    "finish"
                    + (
                        f"; {args.cache} is not finished by this run: run this command again once that warmer has ended"
                        if args.cache
                        else ""
                    )
                )
                return 0
            # the lock is held before the heavy imports: a notebook opened meanwhile already sees a warmer to wait for
            from ragkit.teach.course import warm

            print(warm(holder, progress=not args.quiet))
            if args.cache:
                _finish_shared(args.cache)  # still under the lock: no other warmer writes into it meanwhile
    except OSError as exc:
        message = f"cache folder {cache_dir()} is not writable ({exc.strerror or exc}): nothing warmed"
        if args.cache:
            raise InputError(f"{message}; give --cache a folder you can write to") from exc
        print(f"{message}; set RAGKIT_CACHE to a writable folder to keep vectors between sessions")
    return 0


def _finish_shared(folder: Path) -> None:
    """Finish a cache this run filled for sharing, and say so only once its journal mode really changed."""
    from ragkit.embedding import default_embedder
    from ragkit.errors import InputError
    from ragkit.plumbing.cache import finish_shared

    cache = default_embedder().cache
    filled = sum(n for layer, stamp, _, n, _ in cache.summary() if layer == "private" and stamp == cache.stamp)
    cache.close()
    if not filled:
        raise InputError(
            f"nothing was written into {folder} (see the warning above): it is not finished for "
            "sharing; fix the cause and run this command again"
        )
    print(
        f"{finish_shared(folder)} is ready to share: give it to root and make it read-only "
        f"(`chown -R root: {folder}; chmod -R a-w,a+rX {folder}`), then point RAGKIT_SHARED_CACHE at {folder}"
    )


def _class_report(args: argparse.Namespace) -> int:
    from ragkit.teach.exercises.results import EXERCISES
    from ragkit.teach.grading.class_report import class_report
    from ragkit.teach.untrusted import write_csv

    report = class_report(args.paths, args.name_by, output=args.csv)
    rows = report.rows()
    columns = ["student", *EXERCISES]
    width = {c: max([len(c), *(len(r[c]) for r in rows)]) for c in columns}
    # the header goes to stderr, so the table on stdout keeps its shape for scripts that read it
    print(
        "Self-reported progress: what the students' own kernels recorded, not grades (grades: python -m ragkit grade)",
        file=sys.stderr,
    )
    print("  ".join(f"{c:<{width[c]}}" for c in columns))
    for r in rows:
        print("  ".join(f"{r[c]:<{width[c]}}" for c in columns))
    print(
        f"\n{len(rows)} students, {report.lines} results read (self-reported, not grades); 'yes (2)': passed, "
        "2 attempts; '-': not tried"
    )
    if report.skipped:
        print(f"{len(report.skipped)} line(s) skipped or file(s) not read, each with its reason:")
        for line in report.skipped:
            print(f"  {line}")
    if args.csv:
        write_csv(args.csv, columns, rows)
        print(f"wrote {args.csv}")
    return 0


def _grade(args: argparse.Namespace) -> int:
    import json

    from ragkit.teach.grading.gradebook import COLUMNS
    from ragkit.teach.grading.grader import chosen_exercises, grade
    from ragkit.teach.grading.handed_in import read_class_list, refuse_outputs
    from ragkit.teach.grading.isolation import Limits
    from ragkit.teach.untrusted import shown, write_csv, write_file

    refuse_outputs([args.csv, args.json], [*args.paths, *([args.students] if args.students else [])])
    exercises = chosen_exercises(args.exercises.split(",") if args.exercises is not None else None)
    students = read_class_list(args.students) if args.students else None
    limits = Limits(timeout=args.timeout, threads=max(1, (os.cpu_count() or 1) // args.jobs))
    print(
        f"grading with a time limit of {args.timeout:g} s per notebook, {args.jobs} at a time"
        + (f", the {len(students)} students of {shown(str(args.students), 160)}" if students else ""),
        file=sys.stderr,
    )
    result = grade(
        args.paths,
        args.layout,
        limits,
        args.jobs,
        students=students,
        exercises=exercises,
        progress=lambda g: print(f"  {shown(g.student)} {g.exercise}: {g.grade}", file=sys.stderr),
        announce=lambda isolation: print(f"sandbox: {isolation}", file=sys.stderr),
    )
    print(result)
    if args.csv:
        write_csv(args.csv, COLUMNS, [g.row() for g in result.grades])
        print(f"wrote {args.csv}")
    if args.json:
        write_file(args.json, json.dumps(result.to_json(), indent=1, allow_nan=False).encode("utf-8"))
        print(f"wrote {args.json}")
    return 0


def _nbgrader(args: argparse.Namespace) -> int:
    from ragkit.teach.grading.nbgrader_export import POINTS, write_course

    for path in write_course(args.folder, args.force):
        print(f"wrote {path}")
    print(
        f"each exercise is one assignment worth {POINTS} point (its locked check cell); next, in {args.folder}: "
        "`nbgrader generate_assignment ASSIGNMENT --create` (see docs/grading.md)"
    )
    return 0


def _edition(args: argparse.Namespace) -> int:
    from ragkit.errors import InputError
    from ragkit.plumbing.locations import checkout
    from ragkit.teach.classroom import edition, guides

    root = checkout()
    if root is None:
        raise InputError("the Dutch edition is generated in a clone of the course: run this from its checkout")
    notebooks = root / "notebooks"
    if args.skeleton:
        for name in edition.COURSE:
            print(
                f"catalogue {edition.skeleton(notebooks, name).relative_to(root)}: every cell it lacked is there, "
                "with an empty `nl` to fill"
            )
        return 0
    if not args.check:
        for path in edition.write(notebooks) + guides.write(root / "docs"):
            print(f"wrote {path.relative_to(root)}")
    problems = [str(p) for p in edition.check(notebooks)] + guides.check(root / "docs")
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem(s) in the Dutch edition: {edition.UPDATE}", file=sys.stderr)
        return 1
    return 0


def _address(args: argparse.Namespace) -> int:
    from ragkit.errors import InputError
    from ragkit.plumbing.locations import checkout
    from ragkit.teach.classroom import address

    root = checkout()
    if root is None:
        raise InputError("the course's address is written into a clone of the course: run this from its checkout")
    asked = args.repository is not None or args.branch is not None
    if args.check and asked:
        raise InputError("--check writes nothing: leave out the repository and --branch, or leave out --check")
    if not args.check:
        for path in address.write(root, address.asked(root, args.repository, args.branch) if asked else None):
            print(f"wrote {path.relative_to(root)}")
    stale = address.check(root)
    for path in stale:
        print(f"{path.relative_to(root)} does not carry the address in {address.SETTING}")
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
    from ragkit.errors import InputError
    from ragkit.plumbing.locations import checkout
    from ragkit.teach.classroom.class_repo import write

    root = checkout()
    if root is None:
        raise InputError("the class's repository is written from a clone of the course: run this from its checkout")
    print(write(root, args.out, args.repository, args.branch))
    return 0


def parser() -> argparse.ArgumentParser:
    """The command line: every command, and a help text for every argument of every command."""
    from ragkit.generation import TIME_LIMIT_S
    from ragkit.teach.grading.class_report import NAME_RULES

    parser = argparse.ArgumentParser(prog="python -m ragkit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
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
        type=_positive_seconds,
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
    p = sub.add_parser("index", help="a stamped on-disk index: build, status, update")
    p.add_argument(
        "action",
        choices=["build", "status", "update"],
        help="build: index every document from scratch; status: compare the index with the corpus "
        "(current, stale, new, failed documents); update: re-embed only what is stale, new or failed",
    )
    p.add_argument("--corpus", type=Path, help=CORPUS_HELP)
    p.add_argument("--out", type=Path, default=Path(".ragkit-index"), help="the index's folder (default .ragkit-index)")
    p.add_argument("--strategy", default=None, help="chunking strategy (default: the index's own, else E)")
    p.add_argument("--wait", type=_seconds, default=30.0, help="seconds to wait for another writer (default 30)")
    p.set_defaults(run=_index)
    p = sub.add_parser("cache", help="the vector cache: status (what it holds) or clear (the private one)")
    p.add_argument(
        "action",
        choices=["status", "clear"],
        help="status: what the cache holds; clear: remove its vectors and ONNX export (refused while a "
        "warmer fills it)",
    )
    p.set_defaults(run=_cache)
    p = sub.add_parser("warm", help="embed everything the notebooks use into the cache (`make lab` and Binder run it)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument(
        "--cache",
        type=Path,
        help="cache folder to warm (default: RAGKIT_CACHE, else the clone's .ragkit-cache/; see docs/developer.md)",
    )
    p.add_argument(
        "--background",
        type=Path,
        metavar="LOG",
        help="start the warmer detached, logging to LOG, and return once it holds its lock (`make lab`)",
    )
    p.add_argument(
        "--nice", type=_niceness, default=19, help="the background warmer's niceness (default 19, the lowest)"
    )
    p.set_defaults(run=_warm)
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
        help="write nothing but the catalogues: add an entry with an empty `nl` for each English cell a "
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
    p = sub.add_parser("class-report", help="students x exercises (passed, attempts) from collected results files")
    p.add_argument("paths", nargs="+", type=Path, help="results .jsonl files, or folders holding them")
    p.add_argument("--csv", type=Path, help="also write the table to this CSV file")
    p.add_argument(
        "--name-by",
        choices=NAME_RULES,
        default=NAME_RULES[0],
        help="who a results file belongs to: its name without .jsonl (default), or its owner's login",
    )
    p.set_defaults(run=_class_report)
    from ragkit.teach.grading.handed_in import LAYOUTS
    from ragkit.teach.grading.isolation import TIMEOUT

    p = sub.add_parser("grade", help="grade submitted exercise notebooks: each run afresh in a sandbox, judged here")
    p.add_argument("paths", nargs="+", type=Path, help="submitted .ipynb files, or folders searched for them")
    p.add_argument(
        "--layout",
        choices=LAYOUTS,
        default=LAYOUTS[0],
        help="who a notebook belongs to: home (default), the folder after the first /home/ in its path; "
        "platform, the first folder under the PATH given (<download>/<student>/<file>.ipynb); a link "
        "on the way is refused, never followed",
    )
    p.add_argument(
        "--students",
        type=Path,
        metavar="FILE",
        help="the class list, one login a line (a hub's admin page exports it): only they are graded, "
        "each gets a row per exercise, a notebook naming anyone else is listed and not graded",
    )
    p.add_argument(
        "--timeout",
        type=_positive_seconds,
        default=TIMEOUT,
        help=f"seconds a notebook may run, kernel start included (default {TIMEOUT:g})",
    )
    p.add_argument("--jobs", type=_jobs, default=1, help="notebooks run at the same time (default 1)")
    p.add_argument(
        "--exercises",
        metavar="ex2,ex4",
        help="grade only these exercises (default all five): no row, not even 'missing', for the others",
    )
    p.add_argument("--csv", type=Path, help="also write the grades to this CSV file")
    p.add_argument("--json", type=Path, help="also write the grades to this JSON file")
    p.set_defaults(run=_grade)
    p = sub.add_parser("nbgrader", help="write the five exercises as an nbgrader course (source/<assignment>/)")
    p.add_argument("folder", type=Path, help="the nbgrader course folder to write into")
    p.add_argument("--force", action="store_true", help="write the assignments again over earlier ones")
    p.set_defaults(run=_nbgrader)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run one command; a RagkitError prints its message and exits 1."""
    args = parser().parse_args(argv)
    try:
        _fill_data_defaults(args)
        return args.run(args)
    except RagkitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
