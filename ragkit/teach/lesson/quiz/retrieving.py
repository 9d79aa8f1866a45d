"""The knowledge checks of notebooks 00 to 03: the evaluation, chunking, dense retrieval, BM25 and hybrid."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragkit.chunking import OVERLAP, SIZE, blind_window_start
from ragkit.lexical import tokenize
from ragkit.statistics import ALPHA, INCONCLUSIVE
from ragkit.teach.course import chapter
from ragkit.teach.language import _, say
from ragkit.teach.lesson.quiz.question import Option, QuizQuestion, applied, asked_before_reveal, yes_no
from ragkit.words import STOPWORDS

if TYPE_CHECKING:
    from ragkit.teach.course import Course

__all__ = ["bm25_questions", "chunking_questions", "dense_questions", "start_here_questions"]


def _found_at_four(course: Course) -> QuizQuestion:
    ranks = course.evaluation("E")["E/dense"].ranks
    i = next((i for i, r in enumerate(ranks) if 4 < r <= 12), int(np.argmax(ranks)))
    rank, query = int(ranks[i]), course.queries[i]
    found = 0 < rank <= 4
    where = say("at rank {rank}", rank=rank) if rank else _("nowhere in the ranking")
    why = say("correct means the whole needle in one of the first 4 chunks, and here it arrives {where}", where=where)
    return applied(
        say(
            'For the query "{query}", the course\'s retriever returns the first chunk that contains its whole needle '
            "{where}, and the prompt gets the first 4 chunks it returns. Does this retrieval count as correct?",
            query=query.text,
            where=where,
        ),
        (
            Option(_("yes"), found, why),
            Option(_("no"), not found, why),
            Option(
                _("yes, if a chunk of the needle's document is among the first 4"),
                False,
                _("too loose: a chunk from the right document may not hold the sentence that answers"),
            ),
        ),
    )


def _boundary(course: Course) -> QuizQuestion:
    lost = set(course.evaluation().destroyed["A"])
    q = next((q for q in course.questions if q.id in lost), course.questions[0])
    doc = course.corpus[q.doc_id]
    start = doc.text.find(q.needle)
    end = start + len(q.needle)
    window = blind_window_start(doc, start, SIZE)
    cut = blind_window_start(doc, end - 1, SIZE) != window
    why = (
        say("the window ends at {edge}, before the needle's end at {end}", edge=window + SIZE, end=end)
        if cut
        else say("the window ends at {edge}, after the needle's end at {end}", edge=window + SIZE, end=end)
    )
    return applied(
        say(
            "A needle spans characters {start} to {end} of its document. Blind chunking (A) puts its "
            "first character in the {size}-character window that starts at {window}. What happens to the needle?",
            start=start,
            end=end,
            size=SIZE,
            window=window,
        ),
        (
            Option(_("it is destroyed: that window ends inside it"), cut, why),
            Option(_("one chunk carries it whole"), not cut, why),
            Option(
                _("that depends on the embedding model"),
                False,
                _("chunking happens before any model sees the text: the offsets alone decide"),
            ),
        ),
    )


def _pair(course: Course) -> QuizQuestion:
    c = course.evaluation().compare("D/dense", "E/dense", "Hit@4").test
    detected = c.p < ALPHA
    why = say("+{wins}/-{losses} gives p = {p:.3g}", wins=c.wins, losses=c.losses, p=c.p)
    return applied(
        say(
            "Two strategies answer the same queries. The first finds the needle where the second misses "
            "it {wins} times; the second where the first misses {losses} times; on every other query "
            "they agree. What does the exact sign test say at the {level}% level?",
            wins=c.wins,
            losses=c.losses,
            level=5,
        ),
        (
            Option(_("a difference the test detects"), detected, why),
            Option(_("no difference the test can detect"), not detected, why),
            Option(
                _("nothing without the number of queries where they agree"),
                False,
                _("the sign test drops the ties: only the discordant pairs count"),
            ),
        ),
    )


def _weighs_most(course: Course) -> QuizQuestion:
    bm25 = course.retriever("E").lexical
    q = course.questions[0]
    known = sorted(
        {t for t in tokenize(q.question) if t in bm25.vocabulary and t not in STOPWORDS},
        key=lambda t: (bm25.idf[bm25.vocabulary[t]], t),
    )
    common, rare = known[0], known[-1]
    return applied(
        say(
            'In the query "{query}", which word weighs most in a chunk\'s BM25 score when the chunk '
            "contains each of them once?",
            query=q.question,
        ),
        (
            Option(
                f"'{rare}'",
                True,
                say(
                    "it occurs in the fewest chunks, so its idf is the largest ({idf:.2f})",
                    idf=bm25.idf[bm25.vocabulary[rare]],
                ),
            ),
            Option(
                f"'{common}'",
                False,
                say(
                    "it occurs in the most chunks, so its idf is the smallest ({idf:.2f})",
                    idf=bm25.idf[bm25.vocabulary[common]],
                ),
            ),
            Option(
                _("every word weighs the same"), False, _("that ignores idf: a rare word tells more than a common one")
            ),
        ),
    )


def start_here_questions(course: Course) -> list[QuizQuestion]:
    """Notebook 00's knowledge check: what counts as found, why two phrasings, what an out-of-domain query gets."""
    return [
        QuizQuestion(
            _("A retrieval counts as correct when ..."),
            (
                Option(
                    _("a returned chunk contains the whole needle"),
                    True,
                    _("the generator can only quote what arrived, so the needle must arrive in full"),
                ),
                Option(
                    _("a returned chunk comes from the right document"),
                    False,
                    _("too loose: a chunk from the right chapter may not hold the sentence that answers"),
                ),
                Option(
                    _("the top chunk is about the same topic as the question"),
                    False,
                    _("topic is what embeddings measure anyway; the test must be stricter than the thing it tests"),
                ),
            ),
        ),
        QuizQuestion(
            _("Why is every needle asked twice, as a course question and as a ticket?"),
            (
                Option(
                    _("users describe symptoms in their own words, and an evaluation should include that"),
                    True,
                    _("course questions borrow the corpus's vocabulary and flatter the retriever"),
                ),
                Option(
                    _("to double the number of queries so that the p-values get smaller"),
                    False,
                    _("the two phrasings of a needle are not independent; the point is the phrasing, not the count"),
                ),
                Option(
                    _("because one of the two phrasings is always wrong"),
                    False,
                    _("both ask for the same needle; only the words differ"),
                ),
            ),
        ),
        QuizQuestion(
            _("What should the assistant do with an out-of-domain query?"),
            (
                Option(
                    _("answer NO ANSWER: the corpus does not cover it"),
                    True,
                    _("anything else is a bluff with real-looking citations"),
                ),
                Option(
                    _("answer from the nearest chunks anyway"), False, _("that is exactly the bluff notebook 06 counts")
                ),
                Option(
                    _("let the language model decide whether the sources fit"),
                    False,
                    _("the gate is a comparison of two numbers; a model asked to judge can itself bluff"),
                ),
            ),
        ),
        _found_at_four(course),
    ]


def chunking_questions(course: Course) -> list[QuizQuestion]:
    """Notebook 01's knowledge check: the needles blind chunking destroys, a chunk's two texts, a boundary."""
    ev = course.evaluation()
    lost_a, lost_b = len(ev.destroyed["A"]), len(ev.destroyed["B"])
    counts = sorted({lost_a, chapter.DESTROYED_BLIND, 0, lost_a + 5} - {None})
    return [
        asked_before_reveal(
            QuizQuestion(
                say("How many of the {n} needles does blind chunking (A) destroy on this corpus?", n=ev.n_questions),
                tuple(
                    Option(
                        str(n),
                        n == lost_a,
                        say("{lost} needles run past a {size}-character window edge here", lost=lost_a, size=SIZE)
                        if n == lost_a
                        else say(
                            "the chapter's corpus lost {lost}; this corpus and its needles differ",
                            lost=chapter.DESTROYED_BLIND,
                        )
                        if n == chapter.DESTROYED_BLIND
                        else _("a needle dies when a window edge lands inside it; the table below counts them"),
                    )
                    for n in counts
                ),
            )
        ),
        asked_before_reveal(
            yes_no(
                _("Does overlap (B) save every needle that A destroys on this corpus?"),
                lost_b == 0,
                say("every destroyed needle is rescued by the {overlap} carried characters", overlap=OVERLAP),
                say(
                    "{lost} stay destroyed, because the carried {overlap} characters only rescue a "
                    "needle cut in its first {overlap} characters",
                    lost=lost_b,
                    overlap=OVERLAP,
                ),
            )
        ),
        QuizQuestion(
            _("Which of a chunk's two texts is quoted back to the user?"),
            (
                Option(
                    _("content: the chunk's own words"),
                    True,
                    _("its offsets slice it out of the document exactly, so the citation can be checked"),
                ),
                Option(
                    _("text: header, overlap and content"),
                    False,
                    _(
                        "text is what gets embedded; the header is not in the document, so a quote of it would not "
                        "verify"
                    ),
                ),
                Option(
                    _("both, one after the other"), False, _("a citation quotes one range of the document, no more")
                ),
            ),
        ),
        _boundary(course),
    ]


def dense_questions(course: Course) -> list[QuizQuestion]:
    """Notebook 02's knowledge check: two runs' figures, the sign test, the header's gain, a pair of win/loss counts."""
    ev = course.evaluation()
    c = ev.compare("E/dense", "C/dense", "Hit@20").test
    significant = c.p < ALPHA
    return [
        QuizQuestion(
            _(
                "Two runs on the same 64 queries find the needle in the top 20 for 40 and 37 of them (Hit@20 "
                "0.625 against 0.578). What can you conclude?"
            ),
            (
                Option(
                    _("nothing yet: run a paired test on the queries where they disagree"),
                    True,
                    _(
                        "three queries out of 64 sit well inside either run's Wilson interval; only the paired "
                        "test on the discordant queries can tell"
                    ),
                ),
                Option(_("the first is better, by three queries"), False, _("a point estimate is not a finding")),
                Option(
                    _("they are equal"), False, _("no test said that either: not detected is not the same as equal")
                ),
            ),
        ),
        QuizQuestion(
            _("What does the sign test count?"),
            (
                Option(
                    _("the queries where exactly one of the two runs finds the needle"),
                    True,
                    _("ties tell nothing about which run is better"),
                ),
                Option(
                    _("every query, weighted by how far apart the two runs rank its needle"),
                    False,
                    _("that is a different test; the sign test throws the ties away"),
                ),
                Option(
                    _("the queries where both runs find the needle"),
                    False,
                    _("those agree, so they say nothing about which run is better: the test drops them"),
                ),
            ),
        ),
        asked_before_reveal(
            yes_no(
                _("Does the header's gain (E against C at Hit@20) reach significance on this corpus?"),
                significant,
                say("the sign test gives p = {p:.3g} for +{wins}/-{losses}", p=c.p, wins=c.wins, losses=c.losses),
                say(
                    "the sign test gives p = {p:.3g} for +{wins}/-{losses} here, against the chapter's "
                    "+{chapter_wins}/-{chapter_losses}: inconclusive, {INCONCLUSIVE}",
                    p=c.p,
                    wins=c.wins,
                    losses=c.losses,
                    chapter_wins=chapter.COMPARISONS[("E/dense", "C/dense", "Hit@20")][0],
                    chapter_losses=chapter.COMPARISONS[("E/dense", "C/dense", "Hit@20")][1],
                    INCONCLUSIVE=_(INCONCLUSIVE),
                ),
            )
        ),
        _pair(course),
    ]


def bm25_questions(course: Course) -> list[QuizQuestion]:
    """Notebook 03's knowledge check: fusion, an exact string, BM25 against dense, the word that weighs most."""
    ev = course.evaluation("E")
    dense, bm25 = ev["E/dense"].value("Hit@1"), ev["E/bm25"].value("Hit@1")
    return [
        QuizQuestion(
            _("Why does reciprocal rank fusion add 1 / (k + rank) instead of adding the two scores?"),
            (
                Option(
                    _("cosine distances and BM25 scores are not on one scale"),
                    True,
                    _("ranks are comparable, raw scores are not; nothing needs calibrating"),
                ),
                Option(
                    _("because the best chunk of each list should win"),
                    False,
                    _("that is taking the maximum; summing 1 / (k + rank) rewards chunks both lists rank well"),
                ),
                Option(
                    _("because BM25 scores can be negative"),
                    False,
                    _("with this idf they are never negative; the problem is their unbounded scale"),
                ),
            ),
        ),
        asked_before_reveal(
            yes_no(
                _("On this corpus, is BM25's Hit@1 point estimate above dense retrieval's (strategy E)?"),
                bm25 > dense,
                say(
                    "{bm25:.3f} against {dense:.3f}; whether that is more than noise, the paired test says",
                    bm25=bm25,
                    dense=dense,
                ),
                say(
                    "{bm25:.3f} against {dense:.3f}; the chapter found the opposite, so say so", bm25=bm25, dense=dense
                ),
            )
        ),
        QuizQuestion(
            _("A query names an exact function from a code block. Which retriever should find it?"),
            (
                Option(
                    _("BM25: it matches the exact string"),
                    True,
                    _("a rare identifier gets a high idf, while an embedding blurs it into its neighbours"),
                ),
                Option(
                    _("dense: it understands meaning"), False, _("the meaning of an identifier is mostly its spelling")
                ),
                Option(
                    _("a reranker, since it reads query and chunk word by word"),
                    False,
                    _("a reranker only reorders a shortlist: a chunk neither retriever returns never reaches it"),
                ),
            ),
        ),
        _weighs_most(course),
    ]
