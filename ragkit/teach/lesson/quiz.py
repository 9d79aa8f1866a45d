"""Knowledge checks: a few multiple-choice questions at the end of each notebook, with feedback on every option.

Where the right option depends on this corpus's numbers, it is computed from the course, never typed in; every
notebook's check has at least one question that applies its idea to a new case (a cut, a chunk boundary, a pair
of win/loss counts). Options are shuffled per student, with a seed from the student's name, so a reload shows the
same order and clicking the same position everywhere scores chance. The questions are plain data
(``questions(notebook, course)``); ``Quiz`` shows them as ipywidgets and records each score in the student's
results file, like the exercises' checks. A question that tests the notebook's prediction (``before_reveal``) is
asked where the prediction is made, before the result that answers it (``ragkit.teach.lesson.predict``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

import ipywidgets as w
import numpy as np
from markdown_it import MarkdownIt

from ragkit.answer import DEFAULT_CUT
from ragkit.chunking import OVERLAP, SIZE, blind_window_start
from ragkit.lexical import tokenize
from ragkit.retrieval import RERANK_DEPTH
from ragkit.statistics import INCONCLUSIVE
from ragkit.teach.course import chapter
from ragkit.teach.exercises import Feedback, record
from ragkit.teach.exercises.results import current_student
from ragkit.teach.language import _, say
from ragkit.teach.lesson.settings import label, shown
from ragkit.tuning import Study
from ragkit.words import STOPWORDS

if TYPE_CHECKING:
    from ragkit.teach.course import Course


@dataclass(frozen=True)
class Option:
    """One answer to choose, whether it is right, and why: the reason alone, which the feedback puts after its verdict.

    ``text`` and ``why`` are inline Markdown (a `code span`), as a question's prompt is.
    """

    text: str
    right: bool
    why: str


@dataclass(frozen=True)
class QuizQuestion:
    """A multiple-choice question with exactly one right option."""

    prompt: str
    options: tuple[Option, ...]
    applies: bool = False
    """The question applies the idea to a new case (its right option computed from the course), not recall."""
    before_reveal: bool = False
    """The question tests the notebook's prediction, so it is asked before the result that answers it
    (``Quiz(notebook, course, before_reveal=True)``), not in the knowledge check at the end."""

    def __post_init__(self):
        if sum(o.right for o in self.options) != 1:
            raise ValueError(f"{self.prompt!r} needs exactly one right option")


def _yes_no(prompt: str, yes: bool, why_yes: str, why_no: str) -> QuizQuestion:
    """A yes-or-no question; both options explain with the reason of the answer that is right."""
    why = why_yes if yes else why_no
    return QuizQuestion(prompt, (Option(_("yes"), yes, why), Option(_("no"), not yes, why)))


def _before_reveal(question: QuizQuestion) -> QuizQuestion:
    """The same question, asked where the notebook's prediction is made, before the result gives its answer away."""
    return dataclasses.replace(question, before_reveal=True)


def _applied(prompt: str, options: tuple[Option, ...]) -> QuizQuestion:
    """A question that applies the notebook's idea to a new case, its right option computed from the course."""
    return QuizQuestion(prompt, options, applies=True)


def _found_at_four(course: Course) -> QuizQuestion:
    ranks = course.evaluation("E")["E/dense"].ranks
    i = next((i for i, r in enumerate(ranks) if 4 < r <= 12), int(np.argmax(ranks)))
    rank, query = int(ranks[i]), course.queries[i]
    found = 0 < rank <= 4
    where = say("at rank {rank}", rank=rank) if rank else _("nowhere in the ranking")
    why = say("a hit is the whole needle in one of the first 4 chunks, and here it arrives {where}", where=where)
    return _applied(
        say(
            'For the query "{query}", E/dense returns the first chunk carrying its needle {where}. '
            "Does the query count as found for hit@4?",
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
    return _applied(
        say(
            "A needle spans characters {start} to {end} of its document. Blind chunking (A) puts its "
            "first character in the {size}-character window that starts at {window}. What happens to "
            "the needle?",
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
    detected = c.p < 0.05
    why = say("+{wins}/-{losses} gives p = {p:.3g}", wins=c.wins, losses=c.losses, p=c.p)
    return _applied(
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
    return _applied(
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


def _shortlist(course: Course) -> QuizQuestion:
    ranks = course.evaluation("E")["E/hybrid"].ranks
    i = next((i for i, r in enumerate(ranks) if r > RERANK_DEPTH or r == 0), int(np.argmax(ranks)))
    rank, query = int(ranks[i]), course.queries[i]
    reachable = 0 < rank <= RERANK_DEPTH
    where = say("at rank {rank}", rank=rank) if rank else _("nowhere")
    why = say("the reranker sees only the top {depth}, and the chunk is {where}", depth=RERANK_DEPTH, where=where)
    return _applied(
        say(
            'For the query "{query}", E/hybrid ranks the first chunk carrying its needle {where}. '
            "The reranker rereads the hybrid top {depth}. Can it put that chunk first?",
            query=query.text,
            where=where,
            depth=RERANK_DEPTH,
        ),
        (
            Option(_("no"), not reachable, why),
            Option(_("yes"), reachable, why),
            Option(
                _("yes, because a cross-encoder reads every chunk of the corpus"),
                False,
                _("it reads query-chunk pairs, which is why it only rereads a shortlist"),
            ),
        ),
    )


def _l2_to_cosine(course: Course) -> QuizQuestion:
    vectors = course.retriever("E").vectors
    similarity = vectors[1:] @ vectors[0]
    a, b = vectors[0], vectors[1 + int(np.argmax(similarity))]  # a near pair: d, d² and d²/2 read apart
    d = float(np.linalg.norm(a - b))
    return _applied(
        say(
            "Two normalised chunk vectors of this course lie at L2 distance {d:.3f}. What is their cosine distance?",
            d=d,
        ),
        (
            Option(say("{x:.3f}", x=d * d / 2), True, say("1 - cos = d² / 2 = {d:.3f}² / 2", d=d)),
            Option(
                say("{x:.3f}", x=d),
                False,
                _("the square is missing: the two distances rank pairs alike but are not equal"),
            ),
            Option(say("{x:.3f}", x=d * d), False, _("half of that: expand |a - b|² = 2 - 2 cos for unit vectors")),
        ),
    )


def _at_the_cut(course: Course) -> QuizQuestion:
    s = course.sweep()
    i = int(np.argmin(np.abs(s.nearest_out - DEFAULT_CUT)))
    d, query = float(s.nearest_out[i]), s.out_of_domain[i].query
    bluffs = d < DEFAULT_CUT
    side = _("under") if bluffs else _("over")
    why = say("{d:.3f} is {side} the cut {cut}", d=d, side=side, cut=DEFAULT_CUT)
    return _applied(
        say(
            'The out-of-domain query "{query}" has its nearest chunk at cosine distance {d:.3f}. What '
            "does the gate do with it at the default cut {cut}?",
            query=query,
            d=d,
            cut=DEFAULT_CUT,
        ),
        (
            Option(_("it bluffs: chunks pass the cut and come back as sources"), bluffs, why),
            Option(_("NO ANSWER: nothing passes the cut"), not bluffs, why),
            Option(
                _("it asks the language model whether the chunks fit"),
                False,
                _("the gate compares two numbers and nothing else"),
            ),
        ),
    )


def _quote_length(course: Course) -> QuizQuestion:
    c = next(c for c in course.chunks("E") if c.header and len(c.text) != len(c.content))
    n = c.end - c.start
    return _applied(
        say(
            "A citation's locator is #char={start},{end}, and the chunk it cites was embedded as "
            "{length} characters of text. How many characters does the quote have?",
            start=c.start,
            end=c.end,
            length=len(c.text),
        ),
        (
            Option(str(n), True, _("the quote is the chunk's content, the document sliced from start to end")),
            Option(
                str(len(c.text)),
                False,
                _(
                    "that is the embedded text, header included: the header is not in the "
                    "document, so it is never quoted"
                ),
            ),
            Option(str(n + 1), False, _("the end is exclusive, as in a Python slice")),
        ),
    )


def _unreadable(course: Course) -> QuizQuestion:
    n = len(course.corpus.documents)
    return _applied(
        say(
            "A folder holds this course's {n} documents, and one of them cannot be read. How many "
            "documents does indexing put in the index?",
            n=n,
        ),
        (
            Option(str(n - 1), True, _("the others are indexed, and the failed one is reported with its reason")),
            Option(str(n), False, _("the unreadable one has no text to embed; it is reported, not indexed")),
            Option("0", False, _("stopping would let one stray file block every update")),
        ),
    )


def _start(course: Course) -> list[QuizQuestion]:
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


def _chunking(course: Course) -> list[QuizQuestion]:
    ev = course.evaluation()
    lost_a, lost_b = len(ev.destroyed["A"]), len(ev.destroyed["B"])
    counts = sorted({lost_a, chapter.DESTROYED_BLIND, 0, lost_a + 5} - {None})
    return [
        _before_reveal(
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
        _before_reveal(
            _yes_no(
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
                        "text is what gets embedded; the header is not in the document, so a quote of it would "
                        "not verify"
                    ),
                ),
                Option(
                    _("both, one after the other"), False, _("a citation quotes one range of the document, no more")
                ),
            ),
        ),
        _boundary(course),
    ]


def _dense(course: Course) -> list[QuizQuestion]:
    ev = course.evaluation()
    c = ev.compare("E/dense", "C/dense", "Hit@20").test
    significant = c.p < 0.05
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
        _before_reveal(
            _yes_no(
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


def _bm25(course: Course) -> list[QuizQuestion]:
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
        _before_reveal(
            _yes_no(
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


def _rerank(course: Course) -> list[QuizQuestion]:
    return [
        QuizQuestion(
            _("Why can a cross-encoder not be precomputed like the chunk vectors?"),
            (
                Option(
                    _("it reads query and chunk together, so every pair is new work at query time"),
                    True,
                    _("that joint reading is what makes it precise and slow"),
                ),
                Option(
                    _("it is a bi-encoder with a larger model, so its vectors are too big to store"),
                    False,
                    _("a cross-encoder makes no chunk vector at all: it scores each (query, chunk) pair"),
                ),
                Option(
                    _("it can, with a larger cache"), False, _("no cache holds pairs with queries nobody has asked yet")
                ),
            ),
        ),
        _before_reveal(
            QuizQuestion(
                _("The reranker sees the hybrid top 25. A needle missing from those 25 ..."),
                (
                    Option(
                        _("can never be fixed by the reranker"),
                        True,
                        _("a reranker reorders a shortlist; the shortlist sets its ceiling"),
                    ),
                    Option(_("is found if the reranker is good enough"), False, _("it never sees that chunk")),
                    Option(_("moves into the top 25 after reranking"), False, _("reranking only reorders")),
                ),
            )
        ),
        QuizQuestion(
            _("Late interaction (MaxSim) keeps one vector per ..."),
            (
                Option(_("word piece"), True, _("each query piece takes its best match among a chunk's pieces")),
                Option(_("chunk"), False, _("that is the bi-encoder of notebook 02")),
                Option(
                    _("query, matched against every piece of the chunk"),
                    False,
                    _("the query keeps one vector per piece too: each query piece takes its own best match"),
                ),
            ),
        ),
        _shortlist(course),
    ]


def _distances(course: Course) -> list[QuizQuestion]:
    return [
        QuizQuestion(
            _("For unit-length vectors, how are the L2 distance d and the cosine distance related?"),
            (
                Option(_("1 - cos = d² / 2"), True, _("expand |a - b|² with |a| = |b| = 1")),
                Option(_("1 - cos = d"), False, _("the square is missing: check it on two real chunks")),
                Option(_("1 - cos = d²"), False, _("half of that: |a - b|² = 2 - 2 cos for unit vectors")),
            ),
        ),
        _before_reveal(
            QuizQuestion(
                _("Without normalisation, what does a vector's norm track?"),
                (
                    Option(
                        _("largely the length of the text"),
                        True,
                        _("a mean-pooled vector's norm grows and shrinks with the text, not only its meaning"),
                    ),
                    Option(
                        _("how relevant the chunk is"),
                        False,
                        _("relevance is a relation to a query; a norm has no query"),
                    ),
                    Option(_("nothing: all norms are 1"), False, _("only after normalisation")),
                ),
            )
        ),
        QuizQuestion(
            _("Why does a fixed threshold need normalised vectors?"),
            (
                Option(
                    _("so that a vector's length, which tracks the text's length, no longer adds to the distance"),
                    True,
                    _(
                        "without it a long chunk and a short one would need different cuts; length still moves "
                        "the mean-pooled direction, so check a cut on short and long queries alike"
                    ),
                ),
                Option(
                    _("so that distances lie between 0 and 1"),
                    False,
                    _(
                        "the cosine distance of unit vectors still runs from 0 to 2; the point is one closeness "
                        "per number"
                    ),
                ),
                Option(
                    _("it does not"), False, _("see the un-normalised distances above: they drift with length far more")
                ),
            ),
        ),
        _l2_to_cosine(course),
    ]


def _thresholds(course: Course) -> list[QuizQuestion]:
    s = course.sweep()
    row = s.at(DEFAULT_CUT)
    overlap = not s.separable
    counts = sorted({row.bluffs, chapter.THRESHOLD["bluffs"][DEFAULT_CUT], row.out_of_domain, 0})
    return [
        QuizQuestion(
            say(
                "How many of the {out_of_domain} out-of-domain queries bluff at the default cut {cut} here?",
                out_of_domain=row.out_of_domain,
                cut=DEFAULT_CUT,
            ),
            tuple(
                Option(
                    str(n),
                    n == row.bluffs,
                    say("{bluffs} still get chunks under {cut}", bluffs=row.bluffs, cut=DEFAULT_CUT)
                    if n == row.bluffs
                    else _("that is the chapter's count; this corpus and its queries differ")
                    if n == chapter.THRESHOLD["bluffs"][DEFAULT_CUT]
                    else _("read it off the sweep table or the slider at the default cut"),
                )
                for n in counts
            ),
        ),
        _before_reveal(
            _yes_no(
                _("Is there a cut that refuses every out-of-domain query and answers every in-domain one here?"),
                not overlap,
                _("the best out-of-domain distance lies beyond the worst in-domain one"),
                say(
                    "the worst in-domain distance {worst:.3f} is beyond the best out-of-domain "
                    "{best:.3f}; the distributions overlap, so every cut trades one mistake for the other",
                    worst=s.worst_in_domain,
                    best=s.best_out_of_domain,
                ),
            )
        ),
        QuizQuestion(
            _("Who should choose the cut?"),
            (
                Option(
                    _("whoever knows what a bluff and a refusal cost: it is a product decision"),
                    True,
                    _("exercise 2 turns stated costs into a cut"),
                ),
                Option(_("the embedding model"), False, _("the model gives distances, not costs")),
                Option(
                    _("the cut with the fewest bluffs"),
                    False,
                    _("fewest bluffs means refusing most answerable questions: exercise 2's cut without its ceiling"),
                ),
            ),
        ),
        _at_the_cut(course),
    ]


def _citations(course: Course) -> list[QuizQuestion]:
    return [
        QuizQuestion(
            _("The model writes [2]. Who turns that into a link?"),
            (
                Option(
                    _("the server, from the citation table the model never sees"),
                    True,
                    _("a model that writes links can invent them; one that writes numbers cannot point anywhere"),
                ),
                Option(
                    _("the model, by copying the URL from the prompt"),
                    False,
                    _("a small model copies identifiers badly, as the chapter's invented papers show"),
                ),
                Option(
                    _("the model, in a citation table it writes at the end of its answer"),
                    False,
                    _("a table the model writes can name sources that were never retrieved; the server builds it"),
                ),
            ),
        ),
        QuizQuestion(
            _("What does a `#char=from,to` locator promise?"),
            (
                Option(
                    _("slicing the document's canonical text there gives exactly the quoted words"),
                    True,
                    _("`verify()` checks just that"),
                ),
                Option(
                    _("the answer is somewhere in the document"), False, _("that is a document name, not a locator")
                ),
                Option(
                    _("the chunk's text, header included, starts there"), False, _("the header is not in the document")
                ),
            ),
        ),
        QuizQuestion(
            _("When nothing passes the cut, what does the pipeline send to the language model?"),
            (
                Option(
                    _("nothing: it answers NO ANSWER without calling the model"),
                    True,
                    _("the refusal costs one comparison and cannot be talked out of"),
                ),
                Option(
                    _("the question, with an instruction to say it does not know"),
                    False,
                    _("an instruction can be ignored; a gate cannot"),
                ),
                Option(_("the four nearest chunks anyway"), False, _("that is the bluff")),
            ),
        ),
        _quote_length(course),
    ]


def _production(course: Course) -> list[QuizQuestion]:
    return [
        QuizQuestion(
            _("Why is every document in the index stamped with the model that embedded it?"),
            (
                Option(
                    _("vectors from two models are not comparable, so mixing them must be refused"),
                    True,
                    _("the distances would be meaningless, and nothing would look wrong"),
                ),
                Option(
                    _("so that queries can be filtered by model"),
                    False,
                    _("a query is embedded with one model; the stamp is there to refuse an index of another"),
                ),
                Option(
                    _("so that an old index keeps working when the model is upgraded"),
                    False,
                    _("the opposite: the stamp makes the index refuse queries of another model; an upgrade re-embeds"),
                ),
            ),
        ),
        QuizQuestion(
            _("One document of the folder cannot be read. What should indexing do?"),
            (
                Option(
                    _("index the others, and report the failed one with its reason"),
                    True,
                    _("one bad file must not break the folder, and the count must say what happened"),
                ),
                Option(_("stop with an error"), False, _("then one stray file blocks every update")),
                Option(_("skip it silently"), False, _("a silent skip is a hole nobody will find")),
            ),
        ),
        QuizQuestion(
            _("A PDF's page headers ended up in the middle of a paragraph. What notices it?"),
            (
                Option(
                    _("an evaluation whose needles must arrive in full"),
                    True,
                    _("a needle cut by a page header no longer matches, and the hit rate drops"),
                ),
                Option(_("the embedding model"), False, _("it embeds whatever text it gets")),
                Option(_("the threshold"), False, _("the distances may barely move")),
            ),
        ),
        _unreadable(course),
    ]


def tuning_questions(result: Study) -> list[QuizQuestion]:
    """Notebook 03b's questions, the applied ones computed from the study."""
    changed = next((t for t in result.tunings if t.chosen != t.default), result.tunings[0])
    trial = changed.trial(changed.chosen)
    lost = next((t for t in result.tunings if t.loses), None)
    judged = lost or changed
    below = judged.loses
    scores = say(
        "{held:.3f} against {default:.3f} held out",
        held=judged.trial(judged.chosen).held,
        default=judged.trial(judged.default).held,
    )
    return [
        QuizQuestion(
            say(
                "The tuning half chose {value} for {setting}. Which figure estimates how it will do on "
                "questions nobody has asked yet?",
                value=shown(changed.chosen),
                setting=label(changed.parameter),
            ),
            (
                Option(
                    say("its score on the held-out half, {held:.3f}", held=trial.held),
                    True,
                    _(
                        "the held-out needles played no part in choosing it, so their score carries no luck of "
                        "the choice"
                    ),
                ),
                Option(
                    say("its score on the tuning half, {tune:.3f}", tune=trial.tune),
                    False,
                    _("that score is why it was chosen: the best of several noisy scores is partly the luckiest"),
                ),
                Option(
                    say("the mean of the two, {mean:.3f}", mean=(trial.tune + trial.held) / 2),
                    False,
                    _("half of that mean is still the score the value was chosen on"),
                ),
            ),
            applies=True,
        ),
        QuizQuestion(
            say(
                "On the held-out half, does {setting}'s value chosen on the tuning half, {chosen}, score "
                "below the default, {default}?",
                setting=label(judged.parameter),
                chosen=shown(judged.chosen),
                default=shown(judged.default),
            ),
            (Option(_("yes"), below, scores), Option(_("no"), not below, scores)),
            applies=True,
        ),
        QuizQuestion(
            _("Why do both phrasings of a needle go to the same half?"),
            (
                Option(
                    _(
                        "they look for the same sentence in the same chunk: split them and the tuning half has seen "
                        "half of every held-out answer"
                    ),
                    True,
                    _("the held-out half must hold needles the choice never saw"),
                ),
                Option(
                    _("so that each half has the same number of queries"),
                    False,
                    _("splitting by query would balance the counts too; the reason is what the halves must not share"),
                ),
                Option(
                    _("because the ticket phrasing is harder"),
                    False,
                    _("both halves get both phrasings of their needles; difficulty is not the reason"),
                ),
            ),
        ),
        QuizQuestion(
            _(
                "Five settings were each judged on the held-out half. Why do their p-values take Holm's "
                "correction together?"
            ),
            (
                Option(
                    _("five looks give five chances for one p below 0.05 by luck alone"),
                    True,
                    _("Holm keeps the chance of any false finding among the five at 0.05 or below"),
                ),
                Option(
                    _("because the held-out half is smaller than the whole"),
                    False,
                    _("a smaller sample widens each test, it does not multiply the looks"),
                ),
                Option(
                    _("because the settings were chosen on the tuning half"),
                    False,
                    _("the held-out half already takes care of that; Holm is for the number of comparisons"),
                ),
            ),
        ),
    ]


def _tuning(course: Course) -> list[QuizQuestion]:
    from ragkit.tuning import study

    return tuning_questions(study(course.tuning_sweeps(), "MRR"))


def _approximate(course: Course) -> list[QuizQuestion]:
    n, d = course.retriever("E").vectors.shape
    per_query = n * d * 4  # float32: every query of the exact scan reads every stored number once

    def size(count: int) -> str:
        return say("{count:,} bytes", count=count)

    return [
        QuizQuestion(
            _("What does a larger efSearch buy, and what does it cost?"),
            (
                Option(
                    _("more of the true nearest found, for more time per query"),
                    True,
                    _("the walk keeps more candidates and explores more of the graph before it stops"),
                ),
                Option(
                    _("a smaller index, for a longer build"),
                    False,
                    _(
                        "efSearch is set at query time and changes neither the index nor its build: those are M and "
                        "efConstruction"
                    ),
                ),
                Option(
                    _("exact results, at no cost"),
                    False,
                    _("recall rises towards 1 but every step costs time per query, as the slider shows"),
                ),
            ),
        ),
        _applied(
            say(
                "Strategy E's {n:,} chunk vectors hold {d} float32 numbers each. How much memory does the exact "
                "scan read for every query?",
                n=n,
                d=d,
            ),
            (
                Option(
                    size(per_query),
                    True,
                    say(
                        "{n:,} x {d} x 4 bytes; the exact scan reads every vector "
                        "for every query, so its time grows with the collection",
                        n=n,
                        d=d,
                    ),
                ),
                Option(size(n * d), False, _("a float32 number takes 4 bytes, not 1")),
                Option(size(n * 4), False, say("each vector holds {d} numbers, not one", d=d)),
            ),
        ),
        QuizQuestion(
            _("When is the exact scan the right answer?"),
            (
                Option(
                    _("when its scan costs less than the stages around it, or every answer must be the true nearest"),
                    True,
                    _(
                        "at the course's size it is exact, needs no build, no graph and no setting, and costs a "
                        "fraction of the query's embedding"
                    ),
                ),
                Option(
                    _("never in production: an index is always faster"),
                    False,
                    _(
                        "at the course's size the graph saves a fraction of a millisecond and costs a build, memory "
                        "and a "
                        "setting to tune"
                    ),
                ),
                Option(
                    _("only when the vectors are normalised"),
                    False,
                    _("normalising decides what a distance means; exact or approximate is a separate choice"),
                ),
            ),
        ),
        QuizQuestion(
            _("An HNSW index finds 95% of the exact top 20. What does the missing 5% mean for a RAG pipeline?"),
            (
                Option(
                    _(
                        "some queries lose chunks they would have had, a needle among them: measure the hit rate with "
                        "the "
                        "index you deploy"
                    ),
                    True,
                    _(
                        "the evaluation of notebooks 02 to 04 ran on the exact scan; an index that misses chunks "
                        "changes its figures"
                    ),
                ),
                Option(
                    _("nothing: the graph misses only the least similar of the 20"),
                    False,
                    _("a walk can miss any of the 20, the nearest included"),
                ),
                Option(
                    _("the answers get 5% shorter"),
                    False,
                    _("the prompt still holds the chunks the index found; some are other chunks than the exact scan's"),
                ),
            ),
        ),
    ]


BUILDERS = {
    "00": _start,
    "01": _chunking,
    "02": _dense,
    "03": _bm25,
    "03b": _tuning,
    "04": _rerank,
    "05": _distances,
    "06": _thresholds,
    "07": _citations,
    "08": _production,
    "08b": _approximate,
}


def key(notebook: str) -> str:
    """A notebook's knowledge-check key: what its name starts with before the first dash ('06', '03b')."""
    return notebook.split("-", 1)[0]


def shuffled(questions: list[QuizQuestion], notebook: str, student: str) -> list[QuizQuestion]:
    """The questions with their options in this student's order: the same on every reload, another student's differs."""
    out = []
    for i, q in enumerate(questions):
        seed = hashlib.sha256(f"{student}\0{notebook}\0{i}".encode()).digest()
        options = list(q.options)
        random.Random(seed).shuffle(options)
        out.append(dataclasses.replace(q, options=tuple(options)))
    return out


def questions(notebook: str, course: Course, student: str | None = None) -> list[QuizQuestion]:
    """The knowledge check of one notebook ('00' to '08', '03b') in a student's order (default: this kernel's
    student)."""
    try:
        build = BUILDERS[key(notebook)]
    except KeyError:
        raise KeyError(f"no knowledge check for notebook {notebook!r}: use one of {', '.join(BUILDERS)}") from None
    return shuffled(build(course), key(notebook), student or current_student())


_MARKDOWN = MarkdownIt("commonmark", {"html": False})


def markdown(text: str) -> str:
    """``text``'s inline Markdown as HTML (a `code span` becomes <code>), every other character escaped."""
    return _MARKDOWN.renderInline(text)


def plain(text: str) -> str:
    """``text`` as a radio button can show it: the words of its inline Markdown without the marks."""
    tokens = _MARKDOWN.parseInline(text)[0].children or []
    return "".join(
        t.content if t.type in ("text", "code_inline") else " " if t.type.endswith("break") else "" for t in tokens
    )


def sentence(reason: str) -> str:
    """A reason written as a sentence of its own: a capital first letter (unless it starts a name such as
    efSearch or a code span) and a full stop."""
    first = reason.split(" ", 1)[0]
    if first.isalpha() and first.islower():
        reason = reason[0].upper() + reason[1:]
    return reason if reason.endswith((".", "?", "!")) else reason + "."


def explained(option: Option) -> str:
    """An option's feedback as two sentences, its verdict and its reason: "✓ “no” is right. The worst ..." (HTML)."""
    mark, verdict = (
        ("&#10003;", say("“{option}” is right.", option=markdown(option.text)))
        if option.right
        else ("&#10007;", say("“{option}” is wrong.", option=markdown(option.text)))
    )
    return f"{mark} {verdict} {markdown(sentence(option.why))}"


class Quiz:
    """Radio buttons per question and one button; the feedback explains every option, right and wrong.

    The knowledge check at a notebook's end asks every question but those that test its prediction; with
    ``before_reveal`` the quiz asks only those, where the prediction is made, and records its score apart.
    """

    def __init__(self, notebook: str, course: Course, student: str | None = None, before_reveal: bool = False):
        asked = [q for q in questions(notebook, course, student) if q.before_reveal == before_reveal]
        if not asked:
            raise ValueError(
                f"notebook {notebook!r} has no question {'before' if before_reveal else 'after'} its "
                "reveal: drop before_reveal=True, or mark a question with _before_reveal"
            )
        self._ask(key(notebook), asked, before_reveal)

    @classmethod
    def asking(cls, notebook: str, asked: list[QuizQuestion], student: str | None = None) -> Quiz:
        """A knowledge check over questions built from a result the notebook computed, in this student's order."""
        quiz = cls.__new__(cls)
        quiz._ask(key(notebook), shuffled(asked, key(notebook), student or current_student()), False)
        return quiz

    def _ask(self, notebook: str, asked: list[QuizQuestion], before_reveal: bool) -> None:
        self.notebook, self.before_reveal, self.questions = notebook, before_reveal, asked
        # a radio button shows plain text: its label is the option without Markdown's marks, its value the option
        self.choices = [
            w.RadioButtons(
                options=[(plain(o.text), o.text) for o in q.options], value=None, layout=w.Layout(width="auto")
            )
            for q in self.questions
        ]
        self.feedback = [w.HTML() for _ in self.questions]
        # a button is 148 px wide by default and cuts a longer label ("controleer mijn a..."): as wide as its label
        self.button = w.Button(
            description=_("check my answers"),
            button_style="primary",
            layout=w.Layout(width="auto", min_width="max-content"),
        )
        self.score = w.HTML()
        self.button.on_click(lambda _: self.check())

    def check(self) -> int:
        """Show the feedback for every question, record the score in the results file; return how many were right."""
        right = answered = 0
        for q, choice, out in zip(self.questions, self.choices, self.feedback):
            if choice.value is None:
                out.value = _("<i>choose an option first</i>")
                continue
            answered += 1
            picked = next(o for o in q.options if o.text == choice.value)
            right += picked.right
            verdict = (
                _("<b style='color:#2e7d32'>right</b>") if picked.right else _("<b style='color:#c62828'>not quite</b>")
            )
            items = "".join(f"<li>{explained(o)}</li>" for o in q.options)
            out.value = f"{verdict}<ul>{items}</ul>"
        name = f"quiz {self.notebook}" + (" before the reveal" if self.before_reveal else "")
        recorded = record(
            name,
            Feedback(
                right == len(self.questions),
                (),
                {"right": right, "answered": answered, "questions": len(self.questions)},
            ),
        )
        notes = "".join(f"<br><i>{html.escape(n)}</i>" for n in recorded.notes)
        self.score.value = (
            say("<b>{right} of {questions} right</b>", right=right, questions=len(self.questions)) + notes
        )
        return right

    def widget(self) -> w.Widget:
        """The assembled quiz to display."""
        rows = []
        for i, (q, choice, out) in enumerate(zip(self.questions, self.choices, self.feedback), 1):
            rows += [w.HTML(f"<b>{i}. {markdown(q.prompt)}</b>"), choice, out]
        return w.VBox(rows + [w.HBox([self.button, self.score])])
