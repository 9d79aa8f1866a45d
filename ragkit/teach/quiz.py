"""Knowledge checks: a few multiple-choice questions at the end of each notebook, with feedback on every option.

Where the right option depends on this corpus's numbers, it is computed from the course, never typed in.
The questions are plain data (``questions(notebook, course)``); ``Quiz`` shows them as ipywidgets.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING

import ipywidgets as w

from ragkit.answer import DEFAULT_CUT
from ragkit.chunking import OVERLAP, SIZE
from ragkit.statistics import INCONCLUSIVE
from ragkit.teach import chapter

if TYPE_CHECKING:
    from ragkit.teach.course import Course


@dataclass(frozen=True)
class Option:
    """One answer to choose, whether it is right, and why."""

    text: str
    right: bool
    why: str


@dataclass(frozen=True)
class Question:
    """A multiple-choice question with exactly one right option."""

    prompt: str
    options: tuple[Option, ...]

    def __post_init__(self):
        if sum(o.right for o in self.options) != 1:
            raise ValueError(f"{self.prompt!r} needs exactly one right option")


def _yes_no(prompt: str, yes: bool, why_yes: str, why_no: str) -> Question:
    return Question(prompt, (Option("yes", yes, why_yes if yes else why_no),
                             Option("no", not yes, why_no if not yes else why_yes)))


def _start(course: Course) -> list[Question]:
    return [
        Question("A retrieval counts as correct when ...", (
            Option("a returned chunk contains the whole needle", True,
                   "right: the generator can only quote what arrived, so the needle must arrive in full"),
            Option("a returned chunk comes from the right document", False,
                   "too loose: a chunk from the right chapter may not hold the sentence that answers"),
            Option("the top chunk is about the same topic as the question", False,
                   "topic is what embeddings measure anyway; the test must be stricter than the thing it tests"))),
        Question("Why is every needle asked twice, as a course question and as a ticket?", (
            Option("users describe symptoms in their own words, and an evaluation should include that", True,
                   "right: course questions borrow the corpus's vocabulary and flatter the retriever"),
            Option("to double the number of queries so that the p-values get smaller", False,
                   "the two phrasings of a needle are not independent; the point is the phrasing, not the count"),
            Option("because one of the two phrasings is always wrong", False,
                   "both ask for the same needle; only the words differ"))),
        Question("What should the assistant do with an out-of-domain query?", (
            Option("answer NO ANSWER: the corpus does not cover it", True,
                   "right: anything else is a bluff with real-looking citations"),
            Option("answer from the nearest chunks anyway", False,
                   "that is exactly the bluff notebook 06 counts"),
            Option("let the language model decide whether the sources fit", False,
                   "the gate is a comparison of two numbers; a model asked to judge can itself bluff"))),
    ]


def _chunking(course: Course) -> list[Question]:
    ev = course.evaluation()
    lost_a, lost_b = len(ev.destroyed["A"]), len(ev.destroyed["B"])
    counts = sorted({lost_a, chapter.DESTROYED_BLIND, 0, lost_a + 5} - {None})
    return [
        Question(f"How many of the {ev.n_questions} needles does blind chunking (A) destroy on this corpus?",
                 tuple(Option(str(n), n == lost_a,
                              f"right: {lost_a} needles run past a {SIZE}-character window edge here" if n == lost_a
                              else f"the chapter's corpus lost {chapter.DESTROYED_BLIND}; ours has longer needles"
                              if n == chapter.DESTROYED_BLIND else
                              "count the red bars of the needle plot: a needle dies when a window ends inside it")
                       for n in counts)),
        _yes_no("Does overlap (B) save every needle that A destroys on this corpus?", lost_b == 0,
                f"yes: every destroyed needle is rescued by the {OVERLAP} carried characters",
                f"no: {lost_b} stay destroyed, because the carried {OVERLAP} characters only rescue a needle cut in "
                f"its first {OVERLAP} characters"),
        Question("Which of a chunk's two texts is quoted back to the user?", (
            Option("content: the chunk's own words", True,
                   "right: its offsets slice it out of the document exactly, so the citation can be checked"),
            Option("text: header, overlap and content", False,
                   "text is what gets embedded; the header is not in the document, so a quote of it would not verify"),
            Option("both, one after the other", False, "a citation quotes one range of the document, no more"))),
    ]


def _dense(course: Course) -> list[Question]:
    ev = course.evaluation()
    c = ev.compare("E/dense", "C/dense", "R@20").test
    significant = c.p < 0.05
    return [
        Question("Two runs on the same 64 queries: 0.62 against 0.58 recall. What can you conclude?", (
            Option("nothing yet: run a paired test on the queries where they disagree", True,
                   "right: a four-point gap on 64 queries is well inside the noise"),
            Option("the first is better, by four points", False, "a point estimate is not a finding"),
            Option("they are equal", False, "no test said that either: not detected is not the same as equal"))),
        Question("What does the sign test count?", (
            Option("the queries where exactly one of the two runs finds the needle", True,
                   "right: ties tell nothing about which run is better"),
            Option("every query, with the recall difference as weight", False,
                   "that is a different test; the sign test throws the ties away"),
            Option("the chunks both runs return", False, "it works per query, not per chunk"))),
        _yes_no("Does the header's gain (E against C at R@20) reach significance on this corpus?", significant,
                f"yes: +{c.wins}/-{c.losses}, p = {c.p:.3g}",
                f"no: +{c.wins}/-{c.losses}, p = {c.p:.3g} here, against the chapter's "
                f"+{chapter.COMPARISONS[('E/dense', 'C/dense', 'R@20')][0]}/"
                f"-{chapter.COMPARISONS[('E/dense', 'C/dense', 'R@20')][1]}: inconclusive, {INCONCLUSIVE}"),
    ]


def _bm25(course: Course) -> list[Question]:
    ev = course.evaluation("E")
    dense, bm25 = ev["E/dense"].value("R@1"), ev["E/bm25"].value("R@1")
    return [
        Question("Why does reciprocal rank fusion add 1 / (k + rank) instead of adding the two scores?", (
            Option("cosine distances and BM25 scores are not on one scale", True,
                   "right: ranks are comparable, raw scores are not; nothing needs calibrating"),
            Option("because it is faster", False, "both are cheap; the reason is scale, not speed"),
            Option("because BM25 scores can be negative", False,
                   "with this idf they are never negative; the problem is their unbounded scale")),),
        _yes_no("On this corpus, does BM25 beat dense retrieval at recall@1 (strategy E)?", bm25 > dense,
                f"yes: {bm25:.3f} against {dense:.3f}",
                f"no: {bm25:.3f} against {dense:.3f}; the chapter found the opposite, so say so"),
        Question("A query names an exact function from a code block. Which retriever should find it?", (
            Option("BM25: it matches the exact string", True,
                   "right: a rare identifier gets a high idf, while an embedding blurs it into its neighbours"),
            Option("dense: it understands meaning", False, "the meaning of an identifier is mostly its spelling"),
            Option("neither can", False, "BM25 finds exact strings well; that is why hybrid keeps it"))),
    ]


def _rerank(course: Course) -> list[Question]:
    return [
        Question("Why can a cross-encoder not be precomputed like the chunk vectors?", (
            Option("it reads query and chunk together, so every pair is new work at query time", True,
                   "right: that joint reading is what makes it precise and slow"),
            Option("its weights are too large to store", False, "storage is not the issue; the pairing is"),
            Option("it can, with a larger cache", False, "no cache holds pairs with queries nobody has asked yet"))),
        Question("The reranker sees the hybrid top 25. A needle missing from those 25 ...", (
            Option("can never be fixed by the reranker", True,
                   "right: a reranker reorders a shortlist; the shortlist sets its ceiling"),
            Option("is found if the reranker is good enough", False, "it never sees that chunk"),
            Option("moves into the top 25 after reranking", False, "reranking only reorders"))),
        Question("Late interaction (MaxSim) keeps one vector per ...", (
            Option("word piece", True, "right: each query piece takes its best match among a chunk's pieces"),
            Option("chunk", False, "that is the bi-encoder of notebook 02"),
            Option("document", False, "far too coarse: a document holds many topics"))),
    ]


def _distances(course: Course) -> list[Question]:
    return [
        Question("For unit-length vectors, how are the L2 distance d and the cosine distance related?", (
            Option("1 - cos = d² / 2", True, "right: expand |a - b|² with |a| = |b| = 1"),
            Option("1 - cos = d", False, "the square is missing: check it on two real chunks"),
            Option("they are unrelated", False, "on normalised vectors they rank every pair the same way"))),
        Question("Without normalisation, what does a vector's norm track?", (
            Option("largely the length of the text", True,
                   "right: a mean-pooled vector's norm grows and shrinks with the text, not only its meaning"),
            Option("how relevant the chunk is", False, "relevance is a relation to a query; a norm has no query"),
            Option("nothing: all norms are 1", False, "only after normalisation"))),
        Question("Why does a fixed threshold need normalised vectors?", (
            Option("so that one cut means the same closeness for every chunk and query", True,
                   "right: otherwise a long chunk and a short one would need different cuts"),
            Option("because the database requires it", False, "the reason is the meaning of the number"),
            Option("it does not", False, "see the un-normalised distances above: they drift with length"))),
    ]


def _thresholds(course: Course) -> list[Question]:
    s = course.sweep()
    row = s.at(DEFAULT_CUT)
    overlap = s.best_out_of_domain < s.worst_in_domain
    counts = sorted({row.bluffs, chapter.THRESHOLD["bluffs"][DEFAULT_CUT], row.out_of_domain, 0})
    return [
        Question(f"How many of the {row.out_of_domain} out-of-domain queries bluff at the default cut "
                 f"{DEFAULT_CUT} here?",
                 tuple(Option(str(n), n == row.bluffs,
                              f"right: {row.bluffs} still get chunks under {DEFAULT_CUT}" if n == row.bluffs else
                              "that is the chapter's count; this corpus and its queries differ"
                              if n == chapter.THRESHOLD["bluffs"][DEFAULT_CUT] else
                              "read it off the sweep table or the slider at the default cut")
                       for n in counts)),
        _yes_no("Is there a cut that refuses every out-of-domain query and answers every in-domain one here?",
                not overlap,
                "yes: the best out-of-domain distance lies beyond the worst in-domain one",
                f"no: the worst in-domain distance {s.worst_in_domain:.3f} is beyond the best out-of-domain "
                f"{s.best_out_of_domain:.3f}; the distributions overlap, so every cut trades one mistake for the "
                "other"),
        Question("Who should choose the cut?", (
            Option("whoever knows what a bluff and a refusal cost: it is a product decision", True,
                   "right: exercise 2 turns stated costs into a cut"),
            Option("the embedding model", False, "the model gives distances, not costs"),
            Option("always 0.5, the middle", False, "a round number is a guess, not a decision"))),
    ]


def _citations(course: Course) -> list[Question]:
    return [
        Question("The model writes [2]. Who turns that into a link?", (
            Option("the server, from the citation table the model never sees", True,
                   "right: a model that writes links can invent them; one that writes numbers cannot point anywhere"),
            Option("the model, by copying the URL from the prompt", False,
                   "a small model copies identifiers badly, as the chapter's invented papers show"),
            Option("the user", False, "the user should get a link that works"))),
        Question("What does a `#char=from,to` locator promise?", (
            Option("slicing the document's canonical text there gives exactly the quoted words", True,
                   "right: `verify()` checks just that"),
            Option("the answer is somewhere in the document", False, "that is a document name, not a locator"),
            Option("the chunk's text, header included, starts there", False, "the header is not in the document"))),
        Question("When nothing passes the cut, what does the pipeline send to the language model?", (
            Option("nothing: it answers NO ANSWER without calling the model", True,
                   "right: the refusal costs one comparison and cannot be talked out of"),
            Option("the question, with an instruction to say it does not know", False,
                   "an instruction can be ignored; a gate cannot"),
            Option("the four nearest chunks anyway", False, "that is the bluff"))),
    ]


def _production(course: Course) -> list[Question]:
    return [
        Question("Why is every document in the index stamped with the model that embedded it?", (
            Option("vectors from two models are not comparable, so mixing them must be refused", True,
                   "right: the distances would be meaningless, and nothing would look wrong"),
            Option("for the licence", False, "the stamp is a safety check, not paperwork"),
            Option("to make the index smaller", False, "it adds a few bytes"))),
        Question("One document of the folder cannot be read. What should indexing do?", (
            Option("index the others, and report the failed one with its reason", True,
                   "right: one bad file must not break the folder, and the count must say what happened"),
            Option("stop with an error", False, "then one stray file blocks every update"),
            Option("skip it silently", False, "a silent skip is a hole nobody will find"))),
        Question("A PDF's page headers ended up in the middle of a paragraph. What notices it?", (
            Option("an evaluation whose needles must arrive in full", True,
                   "right: a needle cut by a page header no longer matches, and recall drops"),
            Option("the embedding model", False, "it embeds whatever text it gets"),
            Option("the threshold", False, "the distances may barely move"))),
    ]


BUILDERS = {"00": _start, "01": _chunking, "02": _dense, "03": _bm25, "04": _rerank, "05": _distances,
            "06": _thresholds, "07": _citations, "08": _production}


def questions(notebook: str, course: Course) -> list[Question]:
    """The knowledge check of one notebook ('00' to '08'), right options computed from the course where needed."""
    try:
        return BUILDERS[notebook[:2]](course)
    except KeyError:
        raise KeyError(f"no knowledge check for notebook {notebook!r}: use one of {', '.join(BUILDERS)}") from None


class Quiz:
    """Radio buttons per question and one button; the feedback explains every option, right and wrong."""

    def __init__(self, notebook: str, course: Course):
        self.questions = questions(notebook, course)
        self.choices = [w.RadioButtons(options=[o.text for o in q.options], value=None, layout=w.Layout(width="auto"))
                        for q in self.questions]
        self.feedback = [w.HTML() for _ in self.questions]
        self.button = w.Button(description="check my answers", button_style="primary")
        self.score = w.HTML()
        self.button.on_click(lambda _: self.check())

    def check(self) -> int:
        """Show the feedback for every question; return how many were answered right."""
        right = 0
        for q, choice, out in zip(self.questions, self.choices, self.feedback):
            if choice.value is None:
                out.value = "<i>choose an option first</i>"
                continue
            picked = next(o for o in q.options if o.text == choice.value)
            right += picked.right
            verdict = "<b style='color:#2e7d32'>right</b>" if picked.right else "<b style='color:#c62828'>not quite</b>"
            items = "".join(f"<li>{'&#10003;' if o.right else '&#10007;'} <b>{html.escape(o.text)}</b>: "
                            f"{html.escape(o.why)}</li>" for o in q.options)
            out.value = f"{verdict}<ul>{items}</ul>"
        self.score.value = f"<b>{right} of {len(self.questions)} right</b>"
        return right

    def widget(self) -> w.Widget:
        """The assembled quiz to display."""
        rows = []
        for i, (q, choice, out) in enumerate(zip(self.questions, self.choices, self.feedback), 1):
            rows += [w.HTML(f"<b>{i}. {html.escape(q.prompt)}</b>"), choice, out]
        return w.VBox(rows + [w.HBox([self.button, self.score])])
