"""Exercise 4's check: a chunk header of the student's design, its expected direction stated before it is measured."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import EllipsisType
from typing import TYPE_CHECKING

import numpy as np

from ragkit import statistics
from ragkit.chunking import chunk_corpus
from ragkit.evaluation import Result, compare, first_hit_ranks, query_hits
from ragkit.statistics import SignTest
from ragkit.teach.exercises.feedback import Feedback, embedded, record
from ragkit.teach.exercises.rules import EX4
from ragkit.teach.language import LANGUAGES, _, say, speaking
from ragkit.teach.untrusted import readable
from ragkit.tokens import WINDOW, count_pieces
from ragkit.words import STOPWORDS, content_words, folded, words

if TYPE_CHECKING:
    from ragkit.teach.course import Course

__all__ = ["HeaderRun", "check_header", "header_run", "measure_header"]


def _template_words(chunks, headers: Sequence[str]) -> list[Counter[str]]:
    """Per chunk, the words its header adds beyond its title and section, counted (repeating a word adds it again)."""
    out = []
    for c, h in zip(chunks, headers):
        own = content_words(f"{c.doc_title} {c.section}")
        out.append(Counter(t for t in words(h) if t not in STOPWORDS and t not in own))
    return out


def _says_nothing_of_its_section(chunks, headers: Sequence[str]):
    """The first chunk whose header carries no distinctive word of its own section (or title, for an introduction)."""
    return next(
        (
            c
            for c, h in zip(chunks, headers)
            if (own := content_words(c.section or c.doc_title)) and not own & content_words(h)
        ),
        None,
    )


def _header_problems(chunks, headers: Sequence[str]) -> list[str]:
    """Why a header says nothing about its section, only fills the window, or smuggles in words per section."""
    if (silent := _says_nothing_of_its_section(chunks, headers)) is not None:
        own = sorted(content_words(silent.section or silent.doc_title))
        if silent.section:
            return [
                say(
                    "the header of '{title} > {section}' carries no word of its section ({own}): a header is "
                    "judged on what it says about its section, and one that names nothing specific to it is junk "
                    "the encoder must read",
                    title=silent.doc_title,
                    section=silent.section,
                    own=own,
                )
            ]
        return [
            say(
                "the header of '{title} > (introduction)' carries no word of its section (for an introduction: of "
                "its title) ({own}): a header is judged on what it says about its section, and one that names "
                "nothing specific to it is junk the encoder must read",
                title=silent.doc_title,
                own=own,
            )
        ]
    pieces = count_pieces(headers)
    if (longest := max(pieces)) > EX4.max_header_pieces:
        worst = chunks[pieces.index(longest)]
        return [
            say(
                "the header of '{title} > {section}' is {longest} word pieces, more than {most} (a quarter of "
                "the encoder's {window}-piece window): a header that fills the window crowds the chunk's own "
                "words out of the vector, and measures the encoder's limit, not a design",
                title=worst.doc_title,
                section=worst.section,
                longest=longest,
                most=EX4.max_header_pieces,
                window=WINDOW,
            )
        ]
    added = _template_words(chunks, headers)
    for intro in (False, True):
        group = [(c, extra) for c, extra in zip(chunks, added) if (not c.section) == intro]
        if odd := next(((c, w) for c, w in group if w != group[0][1]), None):
            return [
                say(
                    "a header is a template: beyond its own title and section it must add the same words, as "
                    "often, to every chunk, but '{title} > {section}' gets {words} where '{first_title} > "
                    "{first_section}' gets {first_words}; a header that smuggles in words chosen per section "
                    "(say, from the questions) measures the questions, not the header",
                    title=odd[0].doc_title,
                    section=odd[0].section,
                    words=sorted(odd[1].elements()),
                    first_title=group[0][0].doc_title,
                    first_section=group[0][0].section,
                    first_words=sorted(group[0][1].elements()),
                )
            ]
    return []


def _answers() -> dict[str, str]:
    """The words an expectation and a conclusion are written in, each as the kernel's language writes it."""
    return {
        "better": _("better"),
        "worse": _("worse"),
        "consistent": _("consistent"),
        "contradicts": _("contradicts"),
        "inconclusive, same direction": _("inconclusive, same direction"),
        "inconclusive, opposite direction": _("inconclusive, opposite direction"),
    }


def _in_english(said: str, read: Callable[[str], str]) -> str:
    """A student's answer (``read`` as the check reads it) in the English words it compares, whichever edition's
    words it was written in: a Dutch student writes 'beter' or 'onbeslist, zelfde richting', and a teacher grading in
    English reads the same answer."""
    for spoken in LANGUAGES:
        with speaking(spoken):
            for english, shown in _answers().items():
                if said == read(shown):
                    return english
    return said


def _direction(expectation: object) -> str | None:
    """'better' or 'worse' as the student wrote it (words as the encoder reads them, in either edition's words), or
    None for anything else."""
    if not isinstance(expectation, str):
        return None
    said = _in_english(" ".join(words(expectation)), lambda text: " ".join(words(text)))
    return said if said in ("better", "worse") else None


def _verdict_said(conclusion: str) -> str:
    """A conclusion as the check compares it: folded, commas spaced one way, in English words."""

    def read(text: str) -> str:
        return " ".join(folded(text).replace(",", " , ").split()).replace(" ,", ",")

    return _in_english(read(conclusion), read)


_STATED: dict[str, str] = {}
"""ex4 in a kernel: the direction stated before the first measurement, which locks it ('': measured without one)."""


def _stated_now(expectation: object, *, measuring: bool) -> str | None:
    """This kernel's locked direction, after locking a stated one if nothing has been measured with a direction yet.

    The measuring cell run without a direction shows nothing, so a later run of it may still lock one; but the
    check then refuses until it has, as the grader does, which reads the direction in force when that cell ran.
    """
    said = _direction(expectation)
    if said is not None and not _STATED.get("ex4") and (measuring or "ex4" not in _STATED):
        _STATED["ex4"] = said
    elif measuring:
        _STATED.setdefault("ex4", "")
    return _STATED.get("ex4") or None


def _custom_headers(course: Course, make_header: object) -> tuple[list, list, list[str]]:
    """E's chunks, the student's header for each, and why those headers cannot be measured (empty: they can)."""
    chunks = chunk_corpus(course.corpus, EX4.strategy)
    if not callable(make_header):
        return (
            chunks,
            [],
            [
                say(
                    "`my_header` is a {kind}: define it as a function of (doc_title, section) that returns text",
                    kind=type(make_header).__name__,
                )
            ],
        )
    try:
        headers = [make_header(c.doc_title, c.section) for c in chunks]
    except Exception as exc:  # a student's function may fail in any way: answer it in words, never a traceback
        return (
            chunks,
            [],
            [
                say(
                    "`my_header` raised {error}: {message}; it is called with every chunk's (doc_title, "
                    "section), and section is '' for an introduction",
                    error=type(exc).__name__,
                    message=readable(str(exc)),
                )
            ],
        )
    if bad := [h for h in headers if not isinstance(h, str)]:
        return (
            chunks,
            [],
            [
                say(
                    "`my_header` returned a {kind} ({value}): it must return text",
                    kind=type(bad[0]).__name__,
                    value=readable(repr(bad[0])),
                )
            ],
        )
    if all(c.header == h.rstrip("\n") + "\n" for c, h in zip(chunks, headers)):
        return chunks, headers, [_("your header is the same as strategy E's: change something")]
    return chunks, headers, _header_problems(chunks, headers)


@dataclass(frozen=True)
class HeaderRun:
    """One measurement of a header against E: the direction stated before it, the paired test, and its notes."""

    expectation: str | None
    """The direction the check holds you to: the one stated before the first measurement (None: none stated)."""
    test: SignTest | None = None
    chunks: tuple = field(default=(), repr=False)
    ranks: np.ndarray | None = field(default=None, repr=False, compare=False)
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        head = (
            []
            if self.test is None
            else [
                say(
                    "your header vs {strategy} at {metric}, per needle: +{wins}/-{losses} needles, p = {p:.3g}",
                    strategy=EX4.strategy,
                    metric=EX4.metric,
                    wins=self.test.wins,
                    losses=self.test.losses,
                    p=self.test.p,
                )
            ]
        )
        return "\n".join(head + [f"- {n}" for n in self.notes])

    def _repr_markdown_(self) -> str:
        return "\n\n".join(str(self).splitlines())


def _header_test(course: Course, chunks, headers: Sequence[str]) -> tuple[list, np.ndarray, SignTest, tuple[str, ...]]:
    """The custom chunks, their first-hit ranks, the test against E per needle at EX4's metric, truncation notes."""
    custom = [dataclasses.replace(c, header=h.rstrip("\n") + "\n") for c, h in zip(chunks, headers)]
    texts = [q.text for q in course.queries]
    ids, needles = tuple(q.id for q in course.queries), tuple(q.qid for q in course.queries)
    hits = query_hits(chunks, course.questions, course.queries)
    base = Result(
        EX4.strategy, "dense", first_hit_ranks(course.retriever(EX4.strategy).dense(texts).ranking, hits), ids, needles
    )
    retriever, truncated = embedded(custom)
    mine = Result("yours", "dense", first_hit_ranks(retriever.dense(texts).ranking, hits), ids, needles)
    return custom, mine.ranks, compare(mine, base, EX4.metric, level="needle").test, truncated


def measure_header(course: Course, make_header: Callable[[str, str], str] | None, expectation: str | None) -> HeaderRun:
    """Exercise 4's experiment: your header against E, run only once a direction is stated, which it then locks.

    The first measurement in a kernel locks the direction stated before it; the check holds you to it.
    """
    stated = _stated_now(expectation, measuring=True)
    if stated is None:
        return HeaderRun(
            None,
            notes=(
                say(
                    "{expectation} is no expectation: set `my_expectation` to 'better' or "
                    "'worse' before you measure; the measurement runs only then",
                    expectation=readable(repr(expectation)),
                ),
            ),
        )
    notes = (
        []
        if _direction(expectation) == stated
        else [
            say(
                "you stated '{stated}' before your first measurement; {expectation} now is not taken: a direction "
                "chosen after seeing the counts always agrees with them",
                stated=stated,
                expectation=readable(repr(expectation)),
            )
        ]
    )
    return header_run(course, make_header, stated, tuple(notes))


def header_run(
    course: Course, make_header: Callable[[str, str], str] | None, stated: str | None, notes: tuple[str, ...] = ()
) -> HeaderRun:
    """A header against E, holding it to ``stated``: the measurement alone, no kernel's lock (``measure_header``
    locks the direction first; the teacher's guide measures the solution's header with this)."""
    chunks, headers, problems = _custom_headers(course, make_header)
    if problems:
        return HeaderRun(stated, notes=notes + tuple(problems))
    custom, ranks, test, truncated = _header_test(course, chunks, headers)
    return HeaderRun(stated, test, tuple(custom), ranks, notes + truncated)


def check_header(
    course: Course,
    make_header: Callable[[str, str], str] | None,
    expectation: str | None,
    conclusion: str | None,
    *,
    stated: str | EllipsisType | None = ...,
) -> Feedback:
    """Exercise 4: a header that says what its section is about, an expected direction, and the test's verdict.

    The metric, the baseline and the level are the exercise's own (``EX4``). A null result passes when the
    conclusion says so in the verdict words of ``ragkit.statistics.verdict``. ``stated`` is the direction stated
    before the first measurement: in a kernel (``...``) the one ``measure_header`` locked (or this check, when it
    runs first); the grader passes the notebook's ``stated_expectation`` from its fresh run.
    """
    # the verdicts are the words a conclusion is written in (``statistics.verdict``'s), in every language
    verdicts = _("'consistent', 'contradicts', 'inconclusive, same direction' or 'inconclusive, opposite direction'")
    if make_header is None or expectation is None or conclusion is None:
        return Feedback(
            False,
            (
                say(
                    "define `my_header(doc_title, section)`, set `my_expectation` to 'better' or "
                    "'worse' before you measure, and `my_conclusion` to the verdict: {verdicts}",
                    verdicts=verdicts,
                ),
            ),
        )
    if not callable(make_header) or not isinstance(conclusion, str) or not isinstance(expectation, str):
        return record(
            "ex4",
            Feedback(
                False,
                (
                    say(
                        "`my_header` is a {header}, `my_expectation` a {expectation} and "
                        "`my_conclusion` a {conclusion}: define `my_header` as a function "
                        "of (doc_title, section) that returns text, and write the "
                        "expectation and the conclusion as text",
                        header=type(make_header).__name__,
                        expectation=type(expectation).__name__,
                        conclusion=type(conclusion).__name__,
                    ),
                ),
            ),
        )
    expected = _direction(expectation)
    if expected is None:
        return record(
            "ex4",
            Feedback(
                False,
                (
                    say(
                        "your expectation {expectation}: say 'better' or 'worse', the "
                        "direction you expect before you measure",
                        expectation=readable(repr(expectation)),
                    ),
                ),
            ),
        )
    before = _stated_now(expected, measuring=False) if stated is ... else _direction(stated)
    if before is None:
        return record(
            "ex4",
            Feedback(
                False,
                (
                    _(
                        "no expectation was stated before your first measurement (`stated_expectation` is empty: "
                        "`my_expectation` was not 'better' or 'worse' when the measuring cell ran): state it above "
                        "that cell, then run that cell again"
                    ),
                ),
                {"expected": expected},
            ),
        )
    if before != expected:
        return record(
            "ex4",
            Feedback(
                False,
                (
                    say(
                        "you stated '{before}' before your first measurement and now say '{expected}': a direction "
                        "chosen after seeing the counts always agrees with them, so the check holds you to the one "
                        "stated first (a new experiment starts in a fresh kernel, with its expectation written before "
                        "it runs)",
                        before=before,
                        expected=expected,
                    ),
                ),
                {"expected": expected, "stated": before},
            ),
        )
    chunks, headers, problems = _custom_headers(course, make_header)
    if problems:
        return record("ex4", Feedback(False, tuple(problems)))
    *_measured, t, truncated = _header_test(course, chunks, headers)
    found = statistics.Verdict.of(1 if expected == "better" else -1, t.wins, t.losses, t.p, EX4.alpha)
    truth = str(found)
    said = _verdict_said(conclusion)
    numbers = {
        "metric": EX4.metric,
        "wins": t.wins,
        "losses": t.losses,
        "p": t.p,
        "expected": expected,
        "verdict": truth,
        "conclusion": readable(conclusion),
    }
    notes = [
        say(
            "you expected '{expected}'; your header vs E at {metric}, per needle: +{wins}/-{losses} needles, p = "
            "{p:.3g}",
            expected=_answers().get(expected, expected),
            metric=EX4.metric,
            wins=t.wins,
            losses=t.losses,
            p=t.p,
        ),
        *truncated,
    ]
    if said != truth:
        return record(
            "ex4",
            Feedback(
                False,
                tuple(
                    notes
                    + [
                        say(
                            "your conclusion '{conclusion}' does not follow from that test: the verdict is one of "
                            "{verdicts}, from your expected direction, who wins more needles, and whether p < {alpha}",
                            conclusion=readable(conclusion),
                            verdicts=verdicts,
                            alpha=EX4.alpha,
                        )
                    ]
                ),
                numbers,
                hints=(
                    _(
                        "'consistent' and 'contradicts' need p below the level; anything else is inconclusive, "
                        "with the direction said"
                    ),
                ),
            ),
        )
    return record(
        "ex4",
        Feedback(
            True,
            tuple(
                notes
                + [
                    say(
                        "'{truth}' is what the paired test supports: a null result, stated as one, is a finding",
                        truth=_answers().get(truth, truth),
                    )
                    if found.kind == "inconclusive"
                    else say("'{truth}' is what the paired test supports", truth=_answers().get(truth, truth))
                ]
            ),
            numbers,
        ),
    )
