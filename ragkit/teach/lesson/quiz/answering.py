"""The knowledge checks of notebooks 06 to 08b: thresholds, citations, production, approximate search."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragkit.answer import DEFAULT_CUT
from ragkit.faithfulness import needle_words, recalled, recalls_needle
from ragkit.teach.course import chapter
from ragkit.teach.language import _, say
from ragkit.teach.lesson.quiz.question import Option, QuizQuestion, applied, asked_before_reveal, yes_no

if TYPE_CHECKING:
    from ragkit.teach.course import Course

__all__ = ["approximate_questions", "citations_questions", "production_questions", "thresholds_questions"]


def _at_the_cut(course: Course) -> QuizQuestion:
    s = course.sweep()
    i = int(np.argmin(np.abs(s.nearest_out - DEFAULT_CUT)))
    d, query = float(s.nearest_out[i]), s.out_of_domain[i].query
    bluffs = d < DEFAULT_CUT
    side = _("under") if bluffs else _("over")
    why = say("{d:.3f} is {side} the cut {cut}", d=d, side=side, cut=DEFAULT_CUT)
    return applied(
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
    return applied(
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


def _denied_needle(course: Course) -> QuizQuestion:
    """An answer that repeats a needle's words to deny it, graded by 07's rule (the needle's words recalled)."""
    q = min(course.questions, key=lambda q: (len(needle_words(q.needle, q.question)) < 3, len(q.needle)))
    denial = say("No: it is not true that ‘{needle}’.", needle=q.needle.rstrip("."))
    counted = recalls_needle(denial, q.needle, q.question)
    words = needle_words(q.needle, q.question)
    found = round(recalled(denial, q.needle, q.question) * len(words))
    return applied(
        say(
            "This notebook grades an answer by the share of the needle's words it recalls (the needle's content "
            'words that the question does not already contain). The question is "{question}" and its needle '
            '"{needle}". The answer: *{denial}* What does the rule say?',
            question=q.question,
            needle=q.needle,
            denial=denial,
        ),
        (
            Option(
                _("recalled, although the answer denies the needle"),
                counted,
                say(
                    "{found} of the needle's {words} words are in it: the rule counts words, not what the answer "
                    "claims with them",
                    found=found,
                    words=len(words),
                ),
            ),
            Option(
                _("not recalled: the rule sees that the answer contradicts the needle"),
                not counted,
                _("the rule has no notion of negation; telling a denial from a claim takes an entailment model")
                if counted
                else say("only {found} of the needle's {words} words are in it", found=found, words=len(words)),
            ),
            Option(
                _("recalled, so the cited source supports the answer"),
                False,
                _(
                    "the rule never reads the cited source; whether a source supports a statement is what ALCE's "
                    "citation metrics judge, with an entailment model"
                ),
            ),
        ),
    )


def _unreadable(course: Course) -> QuizQuestion:
    n = len(course.corpus.documents)
    return applied(
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


def thresholds_questions(course: Course) -> list[QuizQuestion]:
    """Notebook 06's knowledge check: the bluffs at the default cut, who chooses the cut, a query at the cut."""
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
        asked_before_reveal(
            yes_no(
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


def citations_questions(course: Course) -> list[QuizQuestion]:
    """Notebook 07's knowledge check: who links [n], the gate, a quote's length, which answers grade the generator,
    and what the needle's words recalled can and cannot say."""
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
        QuizQuestion(
            _("Which answers of 07's two-halves table tell you how well the generator uses its sources?"),
            (
                Option(
                    _("those whose prompt held the needle: only there could the generator have used it"),
                    True,
                    _("a prompt without the needle is the retriever's failure, whatever the answer says"),
                ),
                Option(
                    _("every sampled answer: the generator wrote each of them"),
                    False,
                    _(
                        "an answer whose prompt lacked the needle grades the retriever first: the generator never "
                        "had it"
                    ),
                ),
                Option(
                    _("those that recall the needle's words"),
                    False,
                    _(
                        "that picks answers by their outcome; the generator's rate is counted over every prompt that "
                        "held the needle, recalled or not"
                    ),
                ),
            ),
        ),
        _denied_needle(course),
    ]


def production_questions(course: Course) -> list[QuizQuestion]:
    """Notebook 08's knowledge check: the stamp, a document that cannot be read, what notices a stray header."""
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


def approximate_questions(course: Course) -> list[QuizQuestion]:
    """Notebook 08b's knowledge check: efSearch, the exact scan's memory, when it is right, what HNSW misses."""
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
        applied(
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
                        "and a setting to tune"
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
                        "the index you deploy"
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
