"""Exercise 3's check: tickets in a user's own words that still find their needle."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ragkit.data import Question, shared_needle_words
from ragkit.evaluation import first_hit_ranks, needle_hits
from ragkit.retrieval import Retriever, cosine_distance
from ragkit.teach.exercises.feedback import Feedback, question_of, record
from ragkit.teach.exercises.rules import EX3
from ragkit.teach.language import _, say
from ragkit.teach.untrusted import readable
from ragkit.words import content_words, copied_share, words

if TYPE_CHECKING:
    from ragkit.teach.course import Course

__all__ = ["TICKET_HINT", "check_ticket_phrasings", "ticket_measures"]


def _vocabulary(corpus) -> set[str]:
    return {t for doc in corpus.documents for t in words(doc.text)}


def _nearest_copy(text: str, others: Sequence[tuple[str, set[str]]]) -> tuple[str, float]:
    """The phrasing among ``others`` a text copies most, and how much (``copied_share``)."""
    mine = content_words(text)
    source, theirs = max(others, key=lambda o: copied_share(mine, o[1]))
    return source, copied_share(mine, theirs)


def _word_problems(
    course: Course, qid: object, text: object, vocabulary: set[str], others: Sequence[tuple[str, set[str]]]
) -> list[str]:
    """What the word rules find wrong with one ticket (nothing: an empty list)."""
    if not isinstance(qid, str) or not isinstance(text, str):
        return [
            say(
                "{qid}: {text}: an entry is a question id (text like 'q07') and your ticket (text)",
                qid=readable(repr(qid)),
                text=readable(repr(text)),
            )
        ]
    q = question_of(course, qid)
    if q is None:
        return [say("{qid} is not a question id", qid=readable(repr(qid)))]
    known = content_words(text) & vocabulary
    if len(known) < EX3.known_words:
        return [
            say(
                "{qid}: only {known} of your words occur anywhere in the course ({words}); a user writes real "
                "words: use at least {least}",
                qid=qid,
                known=len(known),
                words=sorted(known),
                least=EX3.known_words,
            )
        ]
    problems = []
    if len(shared := shared_needle_words(text, q.needle)) > EX3.max_shared:
        problems.append(
            say(
                "{qid}: your ticket copies the needle's words {shared}, more than the {most} distinctive "
                "words of the needle a ticket may share: say it like a user would",
                qid=qid,
                shared=shared,
                most=EX3.max_shared,
            )
        )
    source, share = _nearest_copy(text, others)
    if share >= EX3.copy_share:
        problems.append(
            say(
                "{qid}: {share:.0%} of the distinctive words of the shorter of your ticket and {source} "
                "are in the other (a copy from {copy_share:.0%} on, however much is added or left out): "
                "write a ticket of your own",
                qid=qid,
                share=share,
                source=source,
                copy_share=EX3.copy_share,
            )
        )
    return problems


def _asks_for_needle(
    course: Course, retriever: Retriever, questions: Sequence[tuple[Question, str]], ranks: np.ndarray
) -> list[str]:
    """Tickets that neither retrieve their needle in the top k nor sit nearest to their own course question."""
    ids = [q.id for q in course.questions]
    distance = cosine_distance(
        retriever.embed([t for _, t in questions]), retriever.embed([q.question for q in course.questions])
    )
    problems = []
    for row, ((q, _ticket), rank) in enumerate(zip(questions, ranks)):
        nearest = int(np.argmin(distance[row]))
        if 0 < rank <= EX3.top_k or ids[nearest] == q.id:
            continue
        where = say("at rank {rank}", rank=int(rank)) if rank > 0 else _("not found")
        problems.append(
            say(
                "{qid}: your ticket does not ask for its needle: the needle's chunk is {where} (the rule: "
                "in the top {top_k} of {strategy}/dense, or else the ticket nearest to its own course "
                "question), and the nearest course question is {nearest}'s (cosine distance "
                "{distance:.3f}; {qid}'s own is at {own:.3f})",
                qid=q.id,
                where=where,
                top_k=EX3.top_k,
                strategy=EX3.strategy,
                nearest=ids[nearest],
                distance=distance[row, nearest],
                own=distance[row, ids.index(q.id)],
            )
        )
    return problems


def ticket_measures(course: Course, tickets: dict[str, str]):
    """What exercise 3's rules measure, per ticket, to test drafts with (a pandas table, shown with the notebook's
    decimal separator)."""
    from ragkit.teach.frames import Frame

    others = _phrasings(course)
    questions = [(q, text) for qid, text in tickets.items() if (q := question_of(course, qid)) is not None]
    retriever = course.retriever(EX3.strategy)
    ranks = first_hit_ranks(
        retriever.dense([t for _, t in questions]).ranking, needle_hits(retriever.chunks, [q for q, _ in questions])
    )
    nearest = cosine_distance(
        retriever.embed([t for _, t in questions]), retriever.embed([q.question for q in course.questions])
    ).argmin(axis=1)
    return Frame(
        {
            _("shared with the needle"): [shared_needle_words(t, q.needle) for q, t in questions],
            _("largest copied share"): [round(_nearest_copy(t, others)[1], 2) for _, t in questions],
            _("needle's rank"): ranks,
            _("nearest course question"): [course.questions[i].id for i in nearest],
        },
        index=[q.id for q, _ in questions],
    )


TICKET_HINT = (
    "write what the user sees go wrong, in their words, not the course's; "
    "`ticket_measures(course, my_tickets)` shows each draft's shared needle words and largest copied share"
)


def _phrasings(course: Course) -> list[tuple[str, set[str]]]:
    """Every phrasing a ticket must not copy: the course questions and the dataset tickets."""
    return [(say("the course question of {qid}", qid=q.id), content_words(q.question)) for q in course.questions] + [
        (say("the dataset ticket of {qid}", qid=q.id), content_words(q.ticket)) for q in course.questions
    ]


def check_ticket_phrasings(course: Course, tickets: dict[str, str] | None) -> Feedback:
    """Exercise 3: five tickets of your own that ask for their needles, with hit@4 measured for both phrasings."""
    if not tickets:
        return Feedback(
            False,
            (say("fill `my_tickets` with {tickets} {{question id: your ticket text}} entries", tickets=EX3.tickets),),
        )
    if not isinstance(tickets, dict):
        return record(
            "ex3",
            Feedback(
                False,
                (
                    say(
                        "`my_tickets` is a {kind}: make it a dict of {tickets} {{question "
                        "id: your ticket text}} entries",
                        kind=type(tickets).__name__,
                        tickets=EX3.tickets,
                    ),
                ),
            ),
        )
    problems = (
        []
        if len(tickets) == EX3.tickets
        else [say("{given} tickets; write {tickets}", given=len(tickets), tickets=EX3.tickets)]
    )
    vocabulary = _vocabulary(course.corpus)
    others = _phrasings(course)
    for qid, text in tickets.items():
        problems += _word_problems(course, qid, text, vocabulary, others)
    numbers: dict[str, object] = {"tickets": len(tickets)}
    if problems:
        return record("ex3", Feedback(False, tuple(problems), numbers, hints=(_(TICKET_HINT),)))
    from ragkit.evaluation import Result, compare

    retriever = course.retriever(EX3.strategy)
    questions = [(q, text) for qid, text in tickets.items() if (q := question_of(course, qid)) is not None]
    qs = [q for q, _ in questions]
    hits = needle_hits(retriever.chunks, qs)
    ticket_ranks = first_hit_ranks(retriever.dense([t for _, t in questions]).ranking, hits)
    if problems := _asks_for_needle(course, retriever, questions, ticket_ranks):
        return record(
            "ex3",
            Feedback(
                False,
                tuple(problems),
                numbers,
                hints=(
                    _(
                        "describe the problem each needle solves, as the user meets it; `ticket_measures(course, "
                        "my_tickets)` shows the needle's rank and the nearest course question for a draft"
                    ),
                ),
            ),
        )
    course_ranks = first_hit_ranks(retriever.dense([q.question for q in qs]).ranking, hits)
    ids = tuple(q.id for q in qs)
    c = compare(
        Result(EX3.strategy, "course", course_ranks, ids), Result(EX3.strategy, "tickets", ticket_ranks, ids), "Hit@4"
    )
    course_recall = float(np.mean((course_ranks > 0) & (course_ranks <= 4)))
    ticket_recall = float(np.mean((ticket_ranks > 0) & (ticket_ranks <= 4)))
    numbers.update(
        {
            "course_recall4": course_recall,
            "ticket_recall4": ticket_recall,
            "wins": c.test.wins,
            "losses": c.test.losses,
            "p": c.test.p,
        }
    )
    return record(
        "ex3",
        Feedback(
            True,
            (
                say(
                    "every ticket asks for its needle (the needle's chunk in the top {top_k}, or its own course "
                    "question the nearest) and copies under {copy_share:.0%} of any phrasing",
                    top_k=EX3.top_k,
                    copy_share=EX3.copy_share,
                ),
                say(
                    "hit@4: course phrasing {course_recall:.2f}, your tickets {ticket_recall:.2f}",
                    course_recall=course_recall,
                    ticket_recall=ticket_recall,
                ),
                say(
                    "course phrasing wins {wins}, your tickets win {losses} (p = {p:.2f} with {pairs} pairs: far too "
                    "few to conclude anything; that is why the course measures all {queries} queries)",
                    wins=c.test.wins,
                    losses=c.test.losses,
                    p=c.test.p,
                    pairs=len(ids),
                    queries=len(course.queries),
                ),
            ),
            numbers,
        ),
    )
