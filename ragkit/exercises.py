"""Checks for the classroom exercises: specific feedback and hints, never the answer itself."""

from __future__ import annotations

import dataclasses
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from ragkit.chunking import SIZE, blind_window_start, chunk_corpus
from ragkit.data import Question
from ragkit.evaluation import Result, compare, first_hit_ranks, needle_hits, query_hits
from ragkit.lexical import tokenize
from ragkit.retrieval import Retriever
from ragkit.threshold import SweepRow

STOPWORDS = set("a an and are as at be by can do does for from how i in is it its my of on or so that the this to "
                "what when where which why with you your not no".split())


@dataclass(frozen=True)
class Feedback:
    """The outcome of a check: passed or not yet, and what to look at."""

    passed: bool
    notes: tuple[str, ...] = field(default=())

    def __str__(self) -> str:
        head = "PASSED" if self.passed else "NOT YET"
        return "\n".join([head] + [f"- {n}" for n in self.notes])

    def _repr_markdown_(self) -> str:
        colour = "#2e7d32" if self.passed else "#c62828"
        notes = "\n".join(f"- {n}" for n in self.notes)
        return f"<b style='color:{colour}'>{'PASSED' if self.passed else 'NOT YET'}</b>\n\n{notes}"


def _question(course, qid) -> Question | None:
    return next((q for q in course.questions if q.id == qid), None)


def check_destroyed_needle(course, question_id: str | None, cut_at: int | None) -> Feedback:
    """Exercise 1: a needle that blind chunking (A) destroys, and the offset of the cut inside it."""
    if question_id is None or cut_at is None:
        return Feedback(False, ("set `question_id` (like 'qNN') and `cut_at` (a character offset) first",
                                "hint: `ragkit.evaluation.needle_windows` tells where each needle sits in its window"))
    q = _question(course, question_id)
    if q is None:
        return Feedback(False, (f"there is no question {question_id!r}; ids run from "
                                f"{course.questions[0].id} to {course.questions[-1].id}",))
    doc = course.corpus[q.doc_id]
    start = doc.text.find(q.needle)
    end = start + len(q.needle)
    carried = needle_hits(chunk_corpus(course.corpus, "A"), [q]).any()
    if carried:
        return Feedback(False, (f"{question_id} survives blind chunking: one chunk carries its whole needle",
                                f"a needle dies when a {SIZE}-character window ends inside it: look for "
                                f"offset + length > {SIZE}"))
    cut = blind_window_start(doc, end - 1)
    if cut_at != cut:
        side = "before the needle starts" if cut_at <= start else "after it ends" if cut_at >= end else \
            "inside the needle, but not where a window ends"
        return Feedback(False, (f"right question: {question_id} is destroyed by strategy A",
                                f"but {cut_at} is {side}; windows restart right after the title line, "
                                f"every {SIZE} characters"))
    return Feedback(True, (f"{question_id}'s needle spans characters {start}-{end}; the blind window that starts "
                           f"at {cut} cuts it {cut - start} characters in", "no retriever can recover it: "
                           "its recall ceiling under A is zero"))


def check_threshold_choice(sweep, cut: float | None, bluff_cost: float = 5.0, refusal_cost: float = 1.0) -> Feedback:
    """Exercise 2: a cut for stated costs of a bluff and a refusal, against the best cut on the sweep's grid."""
    if cut is None:
        return Feedback(False, ("set `my_cut` to a cosine distance between 0.3 and 1.0",
                                "hint: total cost = bluffs x bluff cost + refusals x refusal cost"))

    def cost(row: SweepRow) -> float:
        return row.bluffs * bluff_cost + row.refused * refusal_cost

    mine = sweep.at(cut)
    grid = [sweep.at(c) for c in np.round(np.arange(0.30, 1.0001, 0.005), 3)]
    best = min(cost(r) for r in grid)
    notes = [f"at {cut:.3f}: {mine.bluffs} bluffs x {bluff_cost:g} + {mine.refused} refusals x {refusal_cost:g} "
             f"= {cost(mine):g}"]
    if cost(mine) <= best * 1.05 + 1e-9:
        return Feedback(True, tuple(notes + ["within 5% of the cheapest cut on a 0.005 grid",
                                             "ask yourself: would 64 other questions agree? (interval, not point)"]))
    lower = [r for r in grid if r.cut < cut]
    direction = "lower" if lower and min(cost(r) for r in lower) < cost(mine) else "higher"
    return Feedback(False, tuple(notes + [f"a cheaper cut exists: try a {direction} one",
                                          "plot the cost over the sweep's table to see its minimum"]))


def check_ticket_phrasings(course, tickets: dict[str, str] | None, strategy: str = "E") -> Feedback:
    """Exercise 3: five ticket rewrites of course questions, with recall@4 measured for both phrasings."""
    if not tickets:
        return Feedback(False, ("fill `my_tickets` with five {question id: your ticket text} entries",))
    notes, problems = [], []
    if len(tickets) < 5:
        problems.append(f"{len(tickets)} tickets; write five")
    questions = []
    for qid, text in tickets.items():
        q = _question(course, qid)
        if q is None:
            problems.append(f"{qid!r} is not a question id")
            continue
        shared = (set(tokenize(text)) & set(tokenize(q.needle))) - STOPWORDS
        if len(shared) > 2:
            problems.append(f"{qid}: your ticket copies the needle's words {sorted(shared)}: say it like a user would")
        if text.strip().lower() == q.question.strip().lower():
            problems.append(f"{qid}: that is the course question itself")
        questions.append((q, text))
    if problems:
        return Feedback(False, tuple(problems))
    retriever = course.retriever(strategy)
    qs = [q for q, _ in questions]
    hits = needle_hits(retriever.chunks, qs)
    course_ranks = first_hit_ranks(retriever.dense([q.question for q in qs]).ranking, hits)
    ticket_ranks = first_hit_ranks(retriever.dense([t for _, t in questions]).ranking, hits)
    ids = tuple(q.id for q in qs)
    c = compare(Result(strategy, "course", course_ranks, ids), Result(strategy, "tickets", ticket_ranks, ids), "R@4")
    notes.append(f"recall@4: course phrasing {np.mean((course_ranks > 0) & (course_ranks <= 4)):.2f}, "
                 f"your tickets {np.mean((ticket_ranks > 0) & (ticket_ranks <= 4)):.2f}")
    notes.append(f"course phrasing wins {c.test.wins}, your tickets win {c.test.losses} (p = {c.test.p:.2f} with "
                 f"{len(ids)} pairs: far too few to conclude anything; that is the point of 64)")
    return Feedback(True, tuple(notes))


def check_header(course, make_header: Callable[[str, str], str] | None, conclusion: str | None,
                 metric: str = "R@20") -> Feedback:
    """Exercise 4: a different header, tested against strategy E with the paired sign test."""
    if make_header is None or conclusion is None:
        return Feedback(False, ("define `my_header(doc_title, section)` and set `my_conclusion` to 'better', "
                                "'worse' or 'no detectable difference'",))
    chunks = chunk_corpus(course.corpus, "E")
    custom = [dataclasses.replace(c, header=make_header(c.doc_title, c.section).rstrip("\n") + "\n") for c in chunks]
    if all(a.header == b.header for a, b in zip(chunks, custom)):
        return Feedback(False, ("your header is the same as strategy E's: change something",))
    qs = course.questions
    texts = [q.text for q in course.queries]
    hits = query_hits(chunks, qs, course.queries)
    ids, needles = tuple(q.id for q in course.queries), tuple(q.qid for q in course.queries)
    base = Result("E", "dense", first_hit_ranks(course.retriever("E").dense(texts).ranking, hits), ids, needles)
    mine = Result("mine", "dense", first_hit_ranks(Retriever(custom, progress=False).dense(texts).ranking, hits),
                  ids, needles)
    c = compare(mine, base, metric, "needle")
    truth = "no detectable difference" if c.test.p >= 0.05 else ("better" if c.test.wins > c.test.losses else "worse")
    notes = [f"your header vs E at {metric}, needle by needle: +{c.test.wins}/-{c.test.losses}, p = {c.test.p:.3g}"]
    if conclusion.strip().lower() != truth:
        return Feedback(False, tuple(notes + [f"your conclusion '{conclusion}' does not follow from that test",
                                              "a point estimate is not a finding: look at p before the sign"]))
    return Feedback(True, tuple(notes + [f"'{truth}' is what the paired test supports"]))


def check_own_document(course, document: str | None, question: str | None, strategy: str = "E") -> Feedback:
    """Exercise 5: add your own document to the corpus and get it cited with a locator that verifies."""
    from ragkit.answer import NoAnswer, answer
    from ragkit.citations import verify
    from ragkit.corpus import load_corpus

    if not document or not question:
        return Feedback(False, ("write `my_document` (Markdown with a '# Title' line and '## ' sections) "
                                "and `my_question`",))
    if not re.search(r"^# \S", document, re.M) or not re.search(r"^## \S", document, re.M):
        return Feedback(False, ("give the document a '# Title' line and at least one '## ' section",))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "corpus"
        shutil.copytree(course.corpus.folder, folder)
        (folder / "99-my-document.md").write_text(document, encoding="utf-8")
        corpus = load_corpus(folder)
        retriever = Retriever(chunk_corpus(corpus, strategy), progress=False)
        result = answer(question, retriever, cut=None)
    if isinstance(result, NoAnswer):  # cannot happen without a cut; says so if it ever does
        return Feedback(False, (str(result),))
    first = result.citations[0]
    notes = [f"top source: {first.document_id} - {first.locator_label} {first.fragment} (distance "
             f"{first.cosine_distance:.3f})"]
    if first.document_id != "99-my-document":
        return Feedback(False, tuple(notes + ["your document is not the first source: make the question and the "
                                              "section about the same thing, in the words the section uses"]))
    if not verify(first, corpus):
        return Feedback(False, tuple(notes + ["the locator does not slice the quote: report this, it is a bug"]))
    return Feedback(True, tuple(notes + ["the fragment slices exactly the quoted words out of your file"]))
