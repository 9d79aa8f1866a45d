"""Checks for the classroom exercises: specific feedback and hints, never the answer itself.

Every check also appends one JSON line to a results file a teacher can collect
(``RAGKIT_RESULTS``, else ``~/.ragkit/results.jsonl``); ``python -m ragkit class-report``
reads many students' files. Who the student is, and how the files are written and read,
is ``ragkit.teach.results``.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import math
import re
import shutil
import tempfile
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import EllipsisType
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ragkit import statistics
from ragkit.chunking import SIZE, blind_window_start, chunk_corpus
from ragkit.data import MAX_SHARED, Question, shared_needle_words
from ragkit.errors import InputError
from ragkit.evaluation import first_hit_ranks, needle_hits, query_hits
from ragkit.retrieval import Retriever, cosine_distance
from ragkit.statistics import SignTest
from ragkit.teach.language import _, say
from ragkit.teach.results import RESULTS_ENV, append_result, current_student, results_path, shown
from ragkit.teach.results import student as student
from ragkit.threshold import CUT_RANGE
from ragkit.tokens import WINDOW, TruncationWarning, count_pieces
from ragkit.words import STOPWORDS as STOPWORDS
from ragkit.words import content_words, copied_share, plain, words

if TYPE_CHECKING:
    from ragkit.teach.course import Course


# ex1: every student gets a blind window size of their own, so no notebook prints their answer
OWN_SIZES = tuple(s for s in range(400, 641, 8) if s != SIZE)
# ex2: the cut is tuned on half of the needles and judged on the other half
SPLIT_SEED = 11
TOLERANCE = 0.05
GRID = tuple(np.round(np.arange(CUT_RANGE[0], CUT_RANGE[1] + 1e-4, 0.005), 3).tolist())


@dataclass(frozen=True)
class HintRules:
    """How every check thins out its hints once the same student has tried many answers at one exercise."""

    free: int = 5
    """Attempts with every hint given."""
    every: int = 3
    """After ``free`` attempts, a hint comes only on every ``every``-th attempt: looping teaches less than thinking."""


HINTS = HintRules()


@dataclass(frozen=True)
class ThresholdRules:
    """Exercise 2's fixed judging parameters (a grader calls the check with these, never the student's)."""

    bluff_cost: float = 5.0
    refusal_cost: float = 1.0
    max_refused: float = 0.25
    """The refusal ceiling: at most this share of the tuning half's answerable queries may be refused."""
    tolerance: float = TOLERANCE
    strategy: str = "E"
    retriever: str = "dense"


RUN = 5
"""ex5: a paraphrase shares no run of this many words with the document."""


@dataclass(frozen=True)
class TicketRules:
    """Exercise 3's fixed judging parameters (a grader calls the check with these, never the student's)."""

    tickets: int = 5
    strategy: str = "E"
    known_words: int = 3
    """At least this many distinctive words of a ticket occur somewhere in the course."""
    max_shared: int = MAX_SHARED
    copy_share: float = 0.5
    """A copy: this share of the shorter word set (ticket or phrasing) is in the other (``copied_share``)."""
    top_k: int = 10
    """A ticket asks for its needle: the needle's chunk in this top k, or its own course question the nearest."""

    def __str__(self) -> str:
        return (f"The rules (`EX3`): {self.tickets} tickets; at most {self.max_shared} distinctive words shared with "
                f"the needle; at least {self.known_words} that occur in the course; a copy from {self.copy_share:.0%} "
                f"on; the needle's chunk in the top {self.top_k} of {self.strategy}/dense, or the ticket's own course "
                "question the nearest.")


@dataclass(frozen=True)
class DocumentRules:
    """Exercise 5's fixed judging parameters."""

    strategy: str = "E"
    run: int = RUN
    copy_share: float = 0.5
    """A copied sentence: this share of the shorter word set (question or sentence) is in the other."""
    sentence_words: int = 4
    """Only sentences with at least this many distinctive words count (a heading's two words are fair to use)."""
    copy_distance: float = 0.2
    """A sentence reworded in form: the question's embedding this close (cosine distance) to a sentence's.

    Inflections, word order, filler and synonyms change the words, not the sentence: such rewordings land at 0.05 to
    0.18 here, while every course question that the word-bag rule does not call a copy lies at 0.27 or more from
    its needle (a test keeps the bound below that), and the solution's question at 0.43 from its nearest sentence."""
    off_course: float = 0.45
    """A topic the course lacks: the cited chunk is farther than this cosine distance from every course chunk.

    The median course chunk lies 0.455 from the nearest chunk of another chapter: the cited section must be at
    least about as far from the course as one chapter is from the others (a passing mention of a course topic
    elsewhere in the document is fair)."""

    def __str__(self) -> str:
        return (f"The rules (`EX5`): no run of {self.run} words copied; no sentence (of {self.sentence_words} or more "
                f"distinctive words) copied from {self.copy_share:.0%} on, in any order, nor within cosine distance "
                f"{self.copy_distance} of the question; the cited section farther "
                f"than cosine distance {self.off_course} from every course chunk (strategy {self.strategy}).")


@dataclass(frozen=True)
class HeaderRules:
    """Exercise 4's fixed judging parameters: the metric is chosen in advance, never by the student."""

    strategy: str = "E"
    metric: str = "R@20"
    k: int = 20
    alpha: float = 0.05
    max_header_pieces: int = WINDOW // 4
    """A header may take at most a quarter of the encoder's window: one that fills it crowds the chunk out."""


@dataclass(frozen=True)
class NeedleRules:
    """Exercise 1's fixed judging parameters: the strategy, and the window sizes students are assigned from."""

    strategy: str = "A"
    sizes: tuple[int, ...] = OWN_SIZES


EX1, EX2, EX3, EX4, EX5 = NeedleRules(), ThresholdRules(), TicketRules(), HeaderRules(), DocumentRules()

@dataclass(frozen=True)
class Feedback:
    """The outcome of a check: passed or not yet, what to look at, and the numbers behind it."""

    passed: bool
    notes: tuple[str, ...] = field(default=())
    numbers: dict = field(default_factory=dict, compare=False)
    hints: tuple[str, ...] = field(default=())
    """Where to look next: given freely at first, then only every few attempts (``HINTS``)."""

    @property
    def verdict(self) -> str:
        """PASSED or NOT YET, in the kernel's language."""
        return _("PASSED") if self.passed else _("NOT YET")

    def _lines(self) -> list[str]:
        return [f"- {n}" for n in self.notes] + [say("- hint: {hint}", hint=h) for h in self.hints]

    def __str__(self) -> str:
        return "\n".join([self.verdict] + self._lines())

    def _repr_markdown_(self) -> str:
        colour = "#2e7d32" if self.passed else "#c62828"
        notes = "\n".join(self._lines())
        return f"<b style='color:{colour}'>{self.verdict}</b>\n\n{notes}"


def record(exercise: str, feedback: Feedback) -> Feedback:
    """Append the check's outcome to the results file; if that fails, say so in the feedback instead."""
    try:
        path = results_path()
        attempt = append_result(path, {"exercise": exercise, "student": current_student(),
                             "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                             "passed": feedback.passed, "numbers": feedback.numbers})
    except OSError as exc:
        return dataclasses.replace(feedback, notes=feedback.notes + (
            say("your result was not recorded ({reason} for {path}): set {variable} to a file you can write",
                reason=exc.strerror, path=str(path), variable=RESULTS_ENV),))
    except InputError as exc:
        return dataclasses.replace(feedback, notes=feedback.notes + (
            say("your result was not recorded ({reason}): set {variable} to a file of your own", reason=str(exc),
                variable=RESULTS_ENV),))
    if feedback.hints and attempt > HINTS.free and attempt % HINTS.every:
        return dataclasses.replace(feedback, hints=(), notes=feedback.notes + (
            say("attempt {attempt}: after {free} attempts a hint comes once every {every} attempts; "
                "think about the numbers above before the next try", attempt=attempt, free=HINTS.free,
                every=HINTS.every),))
    return feedback


def _embedded(chunks) -> tuple[Retriever, tuple[str, ...]]:
    """A retriever over these chunks; a truncation warning becomes a note instead of red text on stderr."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TruncationWarning)
        retriever = Retriever(chunks, progress=False)
    return retriever, tuple(f"note: {w.message}" for w in caught if issubclass(w.category, TruncationWarning))


def _question(course: Course, qid: str | None) -> Question | None:
    return next((q for q in course.questions if q.id == qid), None)


def own_size(name: str | None = None) -> int:
    """The blind window size assigned to a student: a stable hash of the name, never the course's 512."""
    digest = hashlib.sha256((name or current_student()).encode("utf-8")).digest()
    return EX1.sizes[int.from_bytes(digest[:4], "big") % len(EX1.sizes)]


def _whole(value: object) -> bool:
    """An integer a student may write: int or a numpy integer, never a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_destroyed_needle(course: Course, question_id: str | None, cut_at: int | None,
                           size: int | None = None, *, student: str | None = None) -> Feedback:
    """Exercise 1: a needle that blind chunking at your own window size destroys, and where the window cuts it.

    ``size`` is there to be read, not chosen: the window is ``own_size()``, from who you are; any other is refused.
    ``student`` is the grader's: it names whose size judges (by the grader's path rule); a kernel leaves it out.
    """
    mine = own_size(student)
    size = mine if size is None else size
    if question_id is None or cut_at is None:
        return Feedback(False, (f"set `question_id` (like 'qNN') and `cut_at` (a character offset) for windows of "
                                f"{mine} characters first",
                                "hint: `needle_windows(course.corpus, course.questions, size=my_size)` tells where "
                                "each needle sits in its window"))
    if not (_whole(size) and int(size) == mine):
        return record("ex1", Feedback(False, (f"window size {shown(repr(size))}: the exercise is judged at your own "
                                              f"size, {mine} (`own_size()`, from who you are), not {SIZE} or any "
                                              "other",), {"size": mine}))
    if not isinstance(question_id, str) or not _whole(cut_at):
        return record("ex1", Feedback(False, (f"`question_id` is {shown(repr(question_id))} and `cut_at` "
                                              f"{shown(repr(cut_at))}: give a question id as text ('q07') and a "
                                              "character offset as a whole number (1536)",), {"size": size}))
    cut_at = int(cut_at)
    numbers = {"size": size, "question": question_id, "cut_at": cut_at}
    q = _question(course, question_id)
    if q is None:
        return record("ex1", Feedback(False, (f"there is no question {shown(repr(question_id))}; ids run from "
                                              f"{course.questions[0].id} to {course.questions[-1].id}",), numbers))
    doc = course.corpus[q.doc_id]
    start = doc.text.find(q.needle)
    end = start + len(q.needle)
    if needle_hits(chunk_corpus(course.corpus, EX1.strategy, size=size), [q]).any():
        return record("ex1", Feedback(False, (f"{question_id} survives blind chunking at {size} characters: one chunk "
                                              "carries its whole needle",
                                              f"a needle dies when a {size}-character window ends inside it: look "
                                              f"for offset + length > {size}"), numbers))
    cut = blind_window_start(doc, end - 1, size)
    if cut_at != cut:
        side = "before the needle starts" if cut_at <= start else "after it ends" if cut_at >= end else \
            "inside the needle, but not where a window ends"
        return record("ex1", Feedback(False, (f"right question: {question_id} is destroyed by strategy A at {size}",
                                              f"but {cut_at} is {side}"), numbers,
                                      hints=(f"windows restart right after the title line, every {size} characters",)))
    return record("ex1", Feedback(True, (f"{question_id}'s needle spans characters {start}-{end}; the {size}-character "
                                         f"blind window that starts at {cut} cuts it {cut - start} characters in",
                                         "no retriever can recover it: its recall ceiling under A is zero"), numbers))


def _cost(row) -> float:
    return row.bluffs * EX2.bluff_cost + row.refused * EX2.refusal_cost


def _too_many_refused(row) -> bool:
    return row.refused > EX2.max_refused * row.in_domain


def threshold_halves(sweep, seed: int = SPLIT_SEED):
    """The sweep split in two, by needle and by out-of-domain query, with a fixed seed: (tune, judge)."""
    rng = np.random.default_rng(seed)
    qids = sorted(q.id for q in sweep.questions)
    oods = sorted(o.id for o in sweep.out_of_domain)
    tune_q = set(rng.permutation(qids)[: len(qids) // 2].tolist())
    tune_o = set(rng.permutation(oods)[: len(oods) // 2].tolist())
    return sweep.subset(tune_q | tune_o), sweep.subset((set(qids) - tune_q) | (set(oods) - tune_o))


def cost_table(half, cuts: Sequence[float] = GRID):
    """Bluffs, refusals and total cost at every cut of one half, under exercise 2's costs (a pandas table).

    Give it ``tune`` to choose; the judging half is the check's evidence, shown after the check.
    """
    import pandas as pd

    rows = [half.at(c) for c in cuts]
    return pd.DataFrame({"cut": list(cuts), "bluffs": [r.bluffs for r in rows], "refused": [r.refused for r in rows],
                         "refused share": [r.refused / r.in_domain for r in rows],
                         "cost": [_cost(r) for r in rows],
                         "within ceiling": [not _too_many_refused(r) for r in rows]})


def _as_cut(cut: object) -> float | None:
    """A cut a student may write (a Python or numpy number, not a bool), or None when it is no number at all."""
    if isinstance(cut, (bool, np.bool_)) or not isinstance(cut, (int, float, np.integer, np.floating)):
        return None
    return float(cut)


def check_threshold_choice(course: Course, cut: float | None) -> Feedback:
    """Exercise 2: the cheapest cut under the exercise's costs and refusal ceiling, chosen on `tune`, judged on `judge`.

    The costs, the ceiling and the split are the exercise's own (``EX2``): nothing a student passes changes them.
    """
    low, high = CUT_RANGE
    rules = say("bluff cost {bluff:g}, refusal cost {refusal:g}, at most {ceiling:.0%} of "
                "the answerable queries refused", bluff=EX2.bluff_cost, refusal=EX2.refusal_cost,
                ceiling=EX2.max_refused)
    if cut is None:
        return Feedback(False, (say("set `my_cut` to a cosine distance between {low} and {high}, chosen on `tune` only",
                                    low=low, high=high),
                                say("the rules: {rules}; total cost = bluffs x bluff cost + refusals x refusal cost",
                                    rules=rules)))
    if not callable(getattr(course, "sweep", None)):
        return Feedback(False, (say("the first argument is a {kind}: pass the course, "
                                    "`check_threshold_choice(course, my_cut)`; the check builds its own sweep",
                                    kind=type(course).__name__),))
    value = _as_cut(cut)
    if value is None or not math.isfinite(value) or not low <= value <= high:
        return record("ex2", Feedback(False, (say("{cut} is not a cosine distance between {low} and {high}: "
                                                  "give a number such as {example}", cut=shown(repr(cut)), low=low,
                                                  high=high, example=0.55),), {"cut": value}))
    tune, judge = threshold_halves(course.sweep(EX2.strategy, EX2.retriever))
    allowed = [c for c in GRID if not _too_many_refused(tune.at(c))]
    best = min(_cost(tune.at(c)) for c in allowed)
    cheapest = [c for c in allowed if _cost(tune.at(c)) == best]
    row, held = tune.at(value), judge.at(value)
    mine, judged = _cost(row), _cost(held)
    judge_best = min(_cost(judge.at(c)) for c in GRID if not _too_many_refused(judge.at(c)))
    limit = best + max(EX2.tolerance * best, EX2.refusal_cost)
    numbers = {"cut": value, "tune_cost": mine, "tune_refused": row.refused, "tune_best": best,
               "judge_cost": judged, "judge_refused": held.refused, "judge_best": judge_best}
    notes = [say("the rules: {rules}", rules=rules),
             say("on the tuning half at {cut:.3f}: {bluffs} bluffs x {bluff:g} + {refused} refusals x "
                 "{refusal:g} = {cost:g}; {refused} of {in_domain} answerable queries refused ({share:.0%})",
                 cut=value, bluffs=row.bluffs, bluff=EX2.bluff_cost, refused=row.refused, refusal=EX2.refusal_cost,
                 cost=mine, in_domain=row.in_domain, share=row.refused / row.in_domain)]
    if _too_many_refused(row):
        return record("ex2", Feedback(False, tuple(notes + [
            say("more than {ceiling:.0%} of the answerable queries refused: no product team ships a gate that "
                "turns away that many questions it could answer", ceiling=EX2.max_refused)]), numbers,
            hints=(_("a looser (higher) cut refuses fewer"),)))
    if mine > limit:
        nearest = min(cheapest, key=lambda c: abs(c - value))
        return record("ex2", Feedback(False, tuple(notes + [
            say("a cheaper cut within the ceiling exists on the tuning half (a cut passes when its cost is at most "
                "{limit:g}: the cheapest plus {tolerance:.0%}, or one refusal)", limit=limit,
                tolerance=EX2.tolerance)]), numbers,
            hints=(_("try a higher one") if nearest > value else _("try a lower one"),)))
    return record("ex2", Feedback(True, tuple(notes + [
        say("within the ceiling and the tolerance (cost at most {limit:g}: the cheapest allowed cost {best:g} plus "
            "{tolerance:.0%}, or one refusal)", limit=limit, best=best, tolerance=EX2.tolerance),
        say("judged on the held-out half: {bluffs} bluffs, {refused} of {in_domain} refused, cost "
            "{cost:g} (the best any cut within the ceiling could have done there: {judge_best:g})",
            bluffs=held.bluffs, refused=held.refused, in_domain=held.in_domain, cost=judged,
            judge_best=judge_best)]), numbers))


def _vocabulary(corpus) -> set[str]:
    return {t for doc in corpus.documents for t in words(doc.text)}


def _nearest_copy(text: str, others: Sequence[tuple[str, set[str]]]) -> tuple[str, float]:
    """The phrasing among ``others`` a text copies most, and how much (``copied_share``)."""
    mine = content_words(text)
    source, theirs = max(others, key=lambda o: copied_share(mine, o[1]))
    return source, copied_share(mine, theirs)


def _word_problems(course: Course, qid: object, text: object, vocabulary: set[str],
                   others: Sequence[tuple[str, set[str]]]) -> list[str]:
    """What the word rules find wrong with one ticket (nothing: an empty list)."""
    if not isinstance(qid, str) or not isinstance(text, str):
        return [f"{shown(repr(qid))}: {shown(repr(text))}: an entry is a question id (text like 'q07') and your "
                "ticket (text)"]
    q = _question(course, qid)
    if q is None:
        return [f"{shown(repr(qid))} is not a question id"]
    known = content_words(text) & vocabulary
    if len(known) < EX3.known_words:
        return [f"{qid}: only {len(known)} of your words occur anywhere in the course ({sorted(known)}); a user "
                f"writes real words: use at least {EX3.known_words}"]
    problems = []
    if len(shared := shared_needle_words(text, q.needle)) > EX3.max_shared:
        problems.append(f"{qid}: your ticket copies the needle's words {shared}, more than the {EX3.max_shared} "
                        "distinctive words of the needle a ticket may share: say it like a user would")
    source, share = _nearest_copy(text, others)
    if share >= EX3.copy_share:
        problems.append(f"{qid}: {share:.0%} of the distinctive words of the shorter of your ticket and {source} "
                        f"are in the other (a copy from {EX3.copy_share:.0%} on, however much is added or left out): "
                        "write a ticket of your own")
    return problems


def _asks_for_needle(course: Course, retriever: Retriever, questions: Sequence[tuple[Question, str]],
                     ranks: np.ndarray) -> list[str]:
    """Tickets that neither retrieve their needle in the top k nor sit nearest to their own course question."""
    ids = [q.id for q in course.questions]
    distance = cosine_distance(retriever.embed([t for _, t in questions]),
                               retriever.embed([q.question for q in course.questions]))
    problems = []
    for row, ((q, _ticket), rank) in enumerate(zip(questions, ranks)):
        nearest = int(np.argmin(distance[row]))
        if 0 < rank <= EX3.top_k or ids[nearest] == q.id:
            continue
        where = f"at rank {rank}" if rank > 0 else "not found"
        problems.append(f"{q.id}: your ticket does not ask for its needle: the needle's chunk is {where} (the rule: "
                        f"in the top {EX3.top_k} of {EX3.strategy}/dense, or else the ticket nearest to its own "
                        f"course question), and the nearest course question is {ids[nearest]}'s (cosine distance "
                        f"{distance[row, nearest]:.3f}; {q.id}'s own is at {distance[row, ids.index(q.id)]:.3f})")
    return problems


def ticket_measures(course: Course, tickets: dict[str, str]):
    """What exercise 3's rules measure, per ticket, to test drafts with (a pandas table)."""
    import pandas as pd

    others = _phrasings(course)
    questions = [(q, text) for qid, text in tickets.items() if (q := _question(course, qid)) is not None]
    retriever = course.retriever(EX3.strategy)
    ranks = first_hit_ranks(retriever.dense([t for _, t in questions]).ranking,
                            needle_hits(retriever.chunks, [q for q, _ in questions]))
    nearest = cosine_distance(retriever.embed([t for _, t in questions]),
                              retriever.embed([q.question for q in course.questions])).argmin(axis=1)
    return pd.DataFrame({"shared with the needle": [shared_needle_words(t, q.needle) for q, t in questions],
                         "largest copied share": [round(_nearest_copy(t, others)[1], 2) for _, t in questions],
                         "needle's rank": ranks,
                         "nearest course question": [course.questions[i].id for i in nearest]},
                        index=[q.id for q, _ in questions])


TICKET_HINT = ("write what the user sees go wrong, in their words, not the course's; `ticket_measures(course, "
               "my_tickets)` shows each draft's shared needle words and largest copied share")


def _phrasings(course: Course) -> list[tuple[str, set[str]]]:
    """Every phrasing a ticket must not copy: the course questions and the dataset tickets."""
    return [(f"the course question of {q.id}", content_words(q.question)) for q in course.questions] + \
           [(f"the dataset ticket of {q.id}", content_words(q.ticket)) for q in course.questions]


def check_ticket_phrasings(course: Course, tickets: dict[str, str] | None) -> Feedback:
    """Exercise 3: five tickets of your own that ask for their needles, with recall@4 measured for both phrasings."""
    if not tickets:
        return Feedback(False, (f"fill `my_tickets` with {EX3.tickets} {{question id: your ticket text}} entries",))
    if not isinstance(tickets, dict):
        return record("ex3", Feedback(False, (f"`my_tickets` is a {type(tickets).__name__}: make it a dict of "
                                              f"{EX3.tickets} {{question id: your ticket text}} entries",)))
    problems = [] if len(tickets) == EX3.tickets else [f"{len(tickets)} tickets; write {EX3.tickets}"]
    vocabulary = _vocabulary(course.corpus)
    others = _phrasings(course)
    for qid, text in tickets.items():
        problems += _word_problems(course, qid, text, vocabulary, others)
    numbers: dict[str, object] = {"tickets": len(tickets)}
    if problems:
        return record("ex3", Feedback(False, tuple(problems), numbers, hints=(TICKET_HINT,)))
    from ragkit.evaluation import Result, compare

    retriever = course.retriever(EX3.strategy)
    questions = [(q, text) for qid, text in tickets.items() if (q := _question(course, qid)) is not None]
    qs = [q for q, _ in questions]
    hits = needle_hits(retriever.chunks, qs)
    ticket_ranks = first_hit_ranks(retriever.dense([t for _, t in questions]).ranking, hits)
    if problems := _asks_for_needle(course, retriever, questions, ticket_ranks):
        return record("ex3", Feedback(False, tuple(problems), numbers, hints=(
            "describe the problem each needle solves, as the user meets it; `ticket_measures(course, my_tickets)` "
            "shows the needle's rank and the nearest course question for a draft",)))
    course_ranks = first_hit_ranks(retriever.dense([q.question for q in qs]).ranking, hits)
    ids = tuple(q.id for q in qs)
    c = compare(Result(EX3.strategy, "course", course_ranks, ids),
                Result(EX3.strategy, "tickets", ticket_ranks, ids), "R@4")
    course_recall = float(np.mean((course_ranks > 0) & (course_ranks <= 4)))
    ticket_recall = float(np.mean((ticket_ranks > 0) & (ticket_ranks <= 4)))
    numbers.update({"course_recall4": course_recall, "ticket_recall4": ticket_recall,
                    "wins": c.test.wins, "losses": c.test.losses, "p": c.test.p})
    return record("ex3", Feedback(True, (
        f"every ticket asks for its needle (the needle's chunk in the top {EX3.top_k}, or its own course question "
        f"the nearest) and copies under {EX3.copy_share:.0%} of any phrasing",
        f"recall@4: course phrasing {course_recall:.2f}, your tickets {ticket_recall:.2f}",
        f"course phrasing wins {c.test.wins}, your tickets win {c.test.losses} (p = {c.test.p:.2f} with "
        f"{len(ids)} pairs: far too few to conclude anything; that is the point of 64)"), numbers))


def needle_sign_test(a_ranks: np.ndarray, b_ranks: np.ndarray, query_needles: Sequence[str], k: int) -> SignTest:
    """Paired sign test at needle level on first-hit ranks: a hit is a rank in 1..k (see statistics)."""
    def found(ranks: np.ndarray) -> np.ndarray:
        ranks = np.asarray(ranks)
        return ((ranks > 0) & (ranks <= k)).astype(float)

    return statistics.needle_sign_test(found(a_ranks), found(b_ranks), list(query_needles))


def _template_words(chunks, headers: Sequence[str]) -> list[Counter[str]]:
    """Per chunk, the words its header adds beyond its title and section, counted (repeating a word adds it again)."""
    out = []
    for c, h in zip(chunks, headers):
        own = content_words(f"{c.doc_title} {c.section}")
        out.append(Counter(t for t in words(h) if t not in STOPWORDS and t not in own))
    return out


def _says_nothing_of_its_section(chunks, headers: Sequence[str]):
    """The first chunk whose header carries no distinctive word of its own section (or title, for an introduction)."""
    return next((c for c, h in zip(chunks, headers)
                 if (own := content_words(c.section or c.doc_title)) and not own & content_words(h)), None)


def _header_problems(chunks, headers: Sequence[str]) -> list[str]:
    """Why a header says nothing about its section, only fills the window, or smuggles in words per section."""
    if (silent := _says_nothing_of_its_section(chunks, headers)) is not None:
        return [f"the header of '{silent.doc_title} > {silent.section or '(introduction)'}' carries no word of its "
                f"section{'' if silent.section else ' (for an introduction: of its title)'} "
                f"({sorted(content_words(silent.section or silent.doc_title))}): a header is judged on what it "
                "says about its section, and one that names nothing specific to it is junk the encoder must read"]
    pieces = count_pieces(headers)
    if (longest := max(pieces)) > EX4.max_header_pieces:
        worst = chunks[pieces.index(longest)]
        return [f"the header of '{worst.doc_title} > {worst.section}' is {longest} word pieces, more than "
                f"{EX4.max_header_pieces} (a quarter of the encoder's {WINDOW}-piece window): a header that fills "
                "the window crowds the chunk's own words out of the vector, and measures the encoder's limit, "
                "not a design"]
    added = _template_words(chunks, headers)
    for intro in (False, True):
        group = [(c, extra) for c, extra in zip(chunks, added) if (not c.section) == intro]
        if odd := next(((c, w) for c, w in group if w != group[0][1]), None):
            return ["a header is a template: beyond its own title and section it must add the same words, as "
                    f"often, to every chunk, but '{odd[0].doc_title} > {odd[0].section}' gets "
                    f"{sorted(odd[1].elements())} where '{group[0][0].doc_title} > {group[0][0].section}' gets "
                    f"{sorted(group[0][1].elements())}; a header that smuggles in words chosen per section (say, "
                    "from the questions) measures the questions, not the header"]
    return []


def _direction(expectation: object) -> str | None:
    """'better' or 'worse' as the student wrote it (words as the encoder reads them), or None for anything else."""
    said = " ".join(words(expectation)) if isinstance(expectation, str) else None
    return said if said in ("better", "worse") else None


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
        return chunks, [], [f"`my_header` is a {type(make_header).__name__}: define it as a function of "
                            "(doc_title, section) that returns text"]
    try:
        headers = [make_header(c.doc_title, c.section) for c in chunks]
    except Exception as exc:  # a student's function may fail in any way: answer it in words, never a traceback
        return chunks, [], [f"`my_header` raised {type(exc).__name__}: {shown(str(exc))}; it is called with every "
                            "chunk's (doc_title, section), and section is '' for an introduction"]
    if bad := [h for h in headers if not isinstance(h, str)]:
        return chunks, [], [f"`my_header` returned a {type(bad[0]).__name__} ({shown(repr(bad[0]))}): it must "
                            "return text"]
    if all(c.header == h.rstrip("\n") + "\n" for c, h in zip(chunks, headers)):
        return chunks, headers, ["your header is the same as strategy E's: change something"]
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
        head = ([] if self.test is None else
                [f"your header vs {EX4.strategy} at {EX4.metric}, per needle: +{self.test.wins}/-{self.test.losses} "
                 f"needles, p = {self.test.p:.3g}"])
        return "\n".join(head + [f"- {n}" for n in self.notes])

    def _repr_markdown_(self) -> str:
        return "\n\n".join(str(self).splitlines())


def _header_test(course: Course, chunks, headers: Sequence[str]) -> tuple[list, np.ndarray, SignTest, tuple[str, ...]]:
    """The custom chunks, their first-hit ranks, the paired test against E at EX4's metric, and truncation notes."""
    custom = [dataclasses.replace(c, header=h.rstrip("\n") + "\n") for c, h in zip(chunks, headers)]
    texts = [q.text for q in course.queries]
    hits = query_hits(chunks, course.questions, course.queries)
    base = first_hit_ranks(course.retriever(EX4.strategy).dense(texts).ranking, hits)
    retriever, truncated = _embedded(custom)
    mine = first_hit_ranks(retriever.dense(texts).ranking, hits)
    return custom, mine, needle_sign_test(mine, base, [q.qid for q in course.queries], EX4.k), truncated


def measure_header(course: Course, make_header: Callable[[str, str], str] | None,
                   expectation: str | None) -> HeaderRun:
    """Exercise 4's experiment: your header against E, run only once a direction is stated, which it then locks.

    The first measurement in a kernel locks the direction stated before it; the check holds you to it.
    """
    stated = _stated_now(expectation, measuring=True)
    if stated is None:
        return HeaderRun(None, notes=(f"{shown(repr(expectation))} is no expectation: set `my_expectation` to "
                                      "'better' or 'worse' before you measure; the measurement runs only then",))
    notes = [] if _direction(expectation) == stated else [
        f"you stated '{stated}' before your first measurement; {shown(repr(expectation))} now is not taken: "
        "a direction chosen after seeing the counts always agrees with them"]
    chunks, headers, problems = _custom_headers(course, make_header)
    if problems:
        return HeaderRun(stated, notes=tuple(notes + problems))
    custom, ranks, test, truncated = _header_test(course, chunks, headers)
    return HeaderRun(stated, test, tuple(custom), ranks, tuple(notes) + truncated)


def check_header(course: Course, make_header: Callable[[str, str], str] | None, expectation: str | None,
                 conclusion: str | None, *, stated: str | None | EllipsisType = ...) -> Feedback:
    """Exercise 4: a header that says what its section is about, an expected direction, and the test's verdict.

    The metric, the baseline and the level are the exercise's own (``EX4``). A null result passes when the
    conclusion says so in the verdict words of ``ragkit.statistics.verdict``. ``stated`` is the direction stated
    before the first measurement: in a kernel (``...``) the one ``measure_header`` locked (or this check, when it
    runs first); the grader passes the notebook's ``stated_expectation`` from its fresh run.
    """
    verdicts = "'consistent', 'contradicts', 'inconclusive, same direction' or 'inconclusive, opposite direction'"
    if make_header is None or expectation is None or conclusion is None:
        return Feedback(False, ("define `my_header(doc_title, section)`, set `my_expectation` to 'better' or "
                                f"'worse' before you measure, and `my_conclusion` to the verdict: {verdicts}",))
    if not callable(make_header) or not isinstance(conclusion, str) or not isinstance(expectation, str):
        return record("ex4", Feedback(False, (f"`my_header` is a {type(make_header).__name__}, `my_expectation` a "
                                              f"{type(expectation).__name__} and `my_conclusion` a "
                                              f"{type(conclusion).__name__}: define `my_header` as a function of "
                                              "(doc_title, section) that returns text, and write the expectation "
                                              "and the conclusion as text",)))
    expected = _direction(expectation)
    if expected is None:
        return record("ex4", Feedback(False, (f"your expectation {shown(repr(expectation))}: say 'better' or "
                                              "'worse', the direction you expect before you measure",)))
    before = _stated_now(expected, measuring=False) if stated is ... else _direction(stated)
    if before is None:
        return record("ex4", Feedback(False, (
            "no expectation was stated before your first measurement (`stated_expectation` is empty: `my_expectation` "
            "was not 'better' or 'worse' when the measuring cell ran): state it above that cell, then run that cell "
            "again",),
            {"expected": expected}))
    if before != expected:
        return record("ex4", Feedback(False, (
            f"you stated '{before}' before your first measurement and now say '{expected}': a direction chosen "
            "after seeing the counts always agrees with them, so the check holds you to the one stated first "
            "(a new experiment starts in a fresh kernel, with its expectation written before it runs)",),
            {"expected": expected, "stated": before}))
    chunks, headers, problems = _custom_headers(course, make_header)
    if problems:
        return record("ex4", Feedback(False, tuple(problems)))
    _, _, t, truncated = _header_test(course, chunks, headers)
    truth = statistics.verdict(1 if expected == "better" else -1, t.wins, t.losses, t.p, EX4.alpha)
    said = " ".join(plain(conclusion).replace(",", " , ").split()).replace(" ,", ",")
    numbers = {"metric": EX4.metric, "wins": t.wins, "losses": t.losses, "p": t.p, "expected": expected,
               "verdict": truth, "conclusion": shown(conclusion)}
    notes = [f"you expected '{expected}'; your header vs E at {EX4.metric}, per needle: +{t.wins}/-{t.losses} "
             f"needles, p = {t.p:.3g}", *truncated]
    if said != truth:
        return record("ex4", Feedback(False, tuple(notes + [
            f"your conclusion '{shown(conclusion)}' does not follow from that test: the verdict is one of "
            f"{verdicts}, from your expected direction, who wins more needles, and whether p < {EX4.alpha}"]),
            numbers, hints=("'consistent' and 'contradicts' need p below the level; anything else is inconclusive, "
                            "with the direction said",)))
    return record("ex4", Feedback(True, tuple(notes + [
        f"'{truth}' is what the paired test supports"
        + (": a null result, stated as one, is a finding" if truth.startswith("inconclusive") else "")]), numbers))


def shared_runs(question: str, document: str, n: int = RUN) -> list[str]:
    """Runs of n words the question copies from the document, compared as words (a paraphrase has none)."""
    q, d = words(question), words(document)
    seen = {tuple(d[i:i + n]) for i in range(len(d) - n + 1)}
    return [" ".join(q[i:i + n]) for i in range(len(q) - n + 1) if tuple(q[i:i + n]) in seen]


def sentences(document: str) -> list[str]:
    """The sentences and heading lines of a document (split at . ! ? followed by space, and at line breaks)."""
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n\s*\n|\n(?=#)", document) if s.strip()]


def copied_sentence(question: str, document: str) -> tuple[str, float] | None:
    """The document sentence a question copies as a bag of words (order and filler aside), and how much; or None."""
    mine = content_words(question)
    scored = [(s, copied_share(mine, theirs)) for s in sentences(document)
              if len(theirs := content_words(s)) >= EX5.sentence_words]
    best = max(scored, key=lambda x: x[1], default=None)
    return best if best is not None and best[1] >= EX5.copy_share else None


def reworded_sentence(course: Course, question: str, document: str) -> tuple[str, float] | None:
    """The document sentence whose embedding lies nearest the question's, and their cosine distance (None: none)."""
    counted = [s for s in sentences(document) if len(content_words(s)) >= EX5.sentence_words]
    if not counted:
        return None
    retriever = course.retriever(EX5.strategy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        distance = cosine_distance(retriever.embed([question]), retriever.embed(counted))[0]
    return counted[int(np.argmin(distance))], float(np.min(distance))


def _off_course(course: Course, chunks) -> tuple[float, str]:
    """How near the document gets to the course: the smallest cosine distance from its chunks to a course chunk."""
    retriever = course.retriever(EX5.strategy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        distance = cosine_distance(retriever.embed([c.text for c in chunks]), retriever.vectors)
    row, col = np.unravel_index(int(np.argmin(distance)), distance.shape)
    near = retriever.chunks[int(col)]
    return float(distance[row, col]), f"{near.doc_id} > {near.section or near.doc_title}"


PARAPHRASE_HINT = "ask what a reader who has not seen the section would ask, in the words they would use"


def check_own_document(course: Course, document: str | None, question: str | None) -> Feedback:
    """Exercise 5: your document, on a topic the course lacks, cited first under the default cut for a paraphrase."""
    from ragkit.answer import DEFAULT_CUT, NoAnswer, answer
    from ragkit.citations import verify
    from ragkit.corpus import load_corpus

    if not document or not question:
        return Feedback(False, ("write `my_document` (Markdown with a '# Title' line and '## ' sections) "
                                "and `my_question`",))
    if not isinstance(document, str) or not isinstance(question, str):
        return record("ex5", Feedback(False, (f"`my_document` is a {type(document).__name__} and `my_question` a "
                                              f"{type(question).__name__}: make both text (str)",)))
    if not re.search(r"^# \S", document, re.M) or not re.search(r"^## \S", document, re.M):
        return record("ex5", Feedback(False, ("give the document a '# Title' line and at least one '## ' section",)))
    if copied := shared_runs(question, document):
        return record("ex5", Feedback(False, (f"your question copies {RUN} words in a row from your document "
                                              f"('{copied[0]}'): ask it in other words, as a reader would",),
                                      {"copied_runs": len(copied)}, hints=(PARAPHRASE_HINT,)))
    if bag := copied_sentence(question, document):
        return record("ex5", Feedback(False, (
            f"{bag[1]:.0%} of the distinctive words of the shorter of your question and the sentence (of "
            f"{EX5.sentence_words} or more distinctive words) "
            f"'{shown(' '.join(bag[0].split()), 80)}' are in the other (a copy from {EX5.copy_share:.0%} on, "
            "whatever the word order or the words added): ask it in other words, as a reader would",),
            {"copied_share": bag[1]}, hints=(PARAPHRASE_HINT,)))
    if (near := reworded_sentence(course, question, document)) and near[1] < EX5.copy_distance:
        return record("ex5", Feedback(False, (
            f"your question lies at cosine distance {near[1]:.3f} from the sentence "
            f"'{shown(' '.join(near[0].split()), 80)}', closer than {EX5.copy_distance}: that sentence reworded in "
            "form (inflections, word order, filler or synonyms change its words, not the sentence); ask it in other "
            "words, as a reader would",), {"sentence_distance": near[1]}, hints=(PARAPHRASE_HINT,)))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "corpus"
        shutil.copytree(course.corpus.folder, folder)
        (folder / "99-my-document.md").write_text(document, encoding="utf-8")
        corpus = load_corpus(folder)
        chunks = chunk_corpus(corpus, EX5.strategy)
        retriever, truncated = _embedded(chunks)
        result = answer(question, retriever, cut=DEFAULT_CUT)
    if isinstance(result, NoAnswer):
        return record("ex5", Feedback(False, (f"nothing is under the default cut {DEFAULT_CUT}: the gate refuses your "
                                              "question, so nothing gets cited",), {"answered": False},
                                      hints=("make the question and one section about the same thing",)))
    first = result.citations[0]
    numbers = {"answered": True, "top_document": first.document_id, "distance": float(first.cosine_distance)}
    notes = [f"top source: {first.document_id} - {first.locator_label} {first.fragment} (distance "
             f"{first.cosine_distance:.3f}, under the default cut {DEFAULT_CUT})", *truncated]
    if first.document_id != "99-my-document":
        return record("ex5", Feedback(False, tuple(notes + ["your document is not the first source"]), numbers,
                                      hints=("make the question and the section about the same thing",)))
    cited = [c for c in chunks if c.doc_id == first.document_id and c.content == first.quote]
    nearest, where = _off_course(course, cited or [c for c in chunks if c.doc_id == first.document_id])
    numbers["nearest_course"] = nearest
    if nearest <= EX5.off_course:
        return record("ex5", Feedback(False, tuple(notes + [
            f"the cited section comes within cosine distance {nearest:.3f} of the course ({where}); a topic the "
            f"course lacks stays farther than {EX5.off_course} from every course chunk (about as far as one course "
            "chapter is from the others)"]), numbers, hints=("write about something the course does not cover",)))
    notes.append(f"the cited section's nearest course chunk is at cosine distance {nearest:.3f} ({where}), farther "
                 f"than {EX5.off_course}: a topic the course lacks")
    if not verify(first, corpus):
        return record("ex5", Feedback(False, tuple(notes + [
            "the locator does not slice the quote: report this, it is a bug"]), numbers))
    return record("ex5", Feedback(True, tuple(notes + [
        "the fragment slices exactly the quoted words out of your file"]), numbers))


def cost_minima(costs: Sequence[float], cuts: Sequence[float] = GRID, n: int = 2) -> list[tuple[float, float]]:
    """The n cheapest local minima of a cost curve as (cut, cost), a flat bottom reported at its middle cut."""
    costs = list(costs)
    found, i = [], 0
    while i < len(costs):
        j = i
        while j + 1 < len(costs) and costs[j + 1] == costs[i]:
            j += 1
        left = costs[i - 1] if i > 0 else np.inf
        right = costs[j + 1] if j + 1 < len(costs) else np.inf
        if costs[i] < left and costs[i] < right:
            found.append((float(cuts[(i + j) // 2]), float(costs[i])))
        i = j + 1
    return sorted(found, key=lambda m: m[1])[:n]
