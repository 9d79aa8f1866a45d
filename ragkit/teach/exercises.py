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
import re
import shutil
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ragkit import statistics
from ragkit.chunking import SIZE, blind_window_start, chunk_corpus
from ragkit.data import MAX_SHARED, Question, content_words, shared_needle_words
from ragkit.errors import InputError
from ragkit.evaluation import first_hit_ranks, needle_hits, query_hits
from ragkit.lexical import tokenize
from ragkit.retrieval import Retriever
from ragkit.statistics import SignTest
from ragkit.teach.results import RESULTS_ENV, append_result, current_student, results_path
from ragkit.teach.results import student as student
from ragkit.threshold import CUT_RANGE
from ragkit.tokens import TruncationWarning

if TYPE_CHECKING:
    from ragkit.teach.course import Course

# ex1: every student gets a blind window size of their own, so no notebook prints their answer
OWN_SIZES = tuple(s for s in range(400, 641, 8) if s != SIZE)
# ex2: the cut is tuned on half of the needles and judged on the other half
SPLIT_SEED = 11
TOLERANCE = 0.05
GRID = tuple(np.round(np.arange(CUT_RANGE[0], CUT_RANGE[1] + 1e-4, 0.005), 3).tolist())
# ex3: a ticket is a copy when this share of its content words is another phrasing's; it must use real words
COPY_OVERLAP = 0.6
KNOWN_WORDS = 3
# ex5: a paraphrase shares no run of this many words with the document
RUN = 5

@dataclass(frozen=True)
class Feedback:
    """The outcome of a check: passed or not yet, what to look at, and the numbers behind it."""

    passed: bool
    notes: tuple[str, ...] = field(default=())
    numbers: dict = field(default_factory=dict, compare=False)

    def __str__(self) -> str:
        head = "PASSED" if self.passed else "NOT YET"
        return "\n".join([head] + [f"- {n}" for n in self.notes])

    def _repr_markdown_(self) -> str:
        colour = "#2e7d32" if self.passed else "#c62828"
        notes = "\n".join(f"- {n}" for n in self.notes)
        return f"<b style='color:{colour}'>{'PASSED' if self.passed else 'NOT YET'}</b>\n\n{notes}"


def record(exercise: str, feedback: Feedback) -> Feedback:
    """Append the check's outcome to the results file; if that fails, say so in the feedback instead."""
    try:
        path = results_path()
        append_result(path, {"exercise": exercise, "student": current_student(),
                             "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                             "passed": feedback.passed, "numbers": feedback.numbers})
    except OSError as exc:
        return dataclasses.replace(feedback, notes=feedback.notes + (
            f"your result was not recorded ({exc.strerror} for {path}): set {RESULTS_ENV} to a file you can write",))
    except InputError as exc:
        return dataclasses.replace(feedback, notes=feedback.notes + (
            f"your result was not recorded ({exc}): set {RESULTS_ENV} to a file of your own",))
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
    return OWN_SIZES[int.from_bytes(digest[:4], "big") % len(OWN_SIZES)]


def check_destroyed_needle(course: Course, question_id: str | None, cut_at: int | None,
                           size: int | None = None) -> Feedback:
    """Exercise 1: a needle that blind chunking at your own window size destroys, and where the window cuts it."""
    size = own_size() if size is None else size
    if question_id is None or cut_at is None:
        return Feedback(False, (f"set `question_id` (like 'qNN') and `cut_at` (a character offset) for windows of "
                                f"{size} characters first",
                                "hint: `needle_windows(course.corpus, course.questions, size=my_size)` tells where "
                                "each needle sits in its window"))
    if not isinstance(size, int) or size == SIZE or not 200 <= size <= 1000:
        return record("ex1", Feedback(False, (f"window size {size!r}: use a size of your own between 200 and 1000, "
                                              f"not {SIZE}, whose destroyed needles notebook 01 already shows "
                                              "(`own_size()` gives you one)",), {"size": size}))
    numbers = {"size": size, "question": question_id, "cut_at": cut_at}
    q = _question(course, question_id)
    if q is None:
        return record("ex1", Feedback(False, (f"there is no question {question_id!r}; ids run from "
                                              f"{course.questions[0].id} to {course.questions[-1].id}",), numbers))
    doc = course.corpus[q.doc_id]
    start = doc.text.find(q.needle)
    end = start + len(q.needle)
    if needle_hits(chunk_corpus(course.corpus, "A", size=size), [q]).any():
        return record("ex1", Feedback(False, (f"{question_id} survives blind chunking at {size} characters: one chunk "
                                              "carries its whole needle",
                                              f"a needle dies when a {size}-character window ends inside it: look "
                                              f"for offset + length > {size}"), numbers))
    cut = blind_window_start(doc, end - 1, size)
    if cut_at != cut:
        side = "before the needle starts" if cut_at <= start else "after it ends" if cut_at >= end else \
            "inside the needle, but not where a window ends"
        return record("ex1", Feedback(False, (f"right question: {question_id} is destroyed by strategy A at {size}",
                                              f"but {cut_at} is {side}; windows restart right after the title line, "
                                              f"every {size} characters"), numbers))
    return record("ex1", Feedback(True, (f"{question_id}'s needle spans characters {start}-{end}; the {size}-character "
                                         f"blind window that starts at {cut} cuts it {cut - start} characters in",
                                         "no retriever can recover it: its recall ceiling under A is zero"), numbers))


def _cost(row, bluff_cost: float, refusal_cost: float) -> float:
    return row.bluffs * bluff_cost + row.refused * refusal_cost


def threshold_halves(sweep, seed: int = SPLIT_SEED):
    """The sweep split in two, by needle and by out-of-domain query, with a fixed seed: (tune, judge)."""
    rng = np.random.default_rng(seed)
    qids = sorted(q.id for q in sweep.questions)
    oods = sorted(o.id for o in sweep.out_of_domain)
    tune_q = set(rng.permutation(qids)[: len(qids) // 2].tolist())
    tune_o = set(rng.permutation(oods)[: len(oods) // 2].tolist())
    return sweep.subset(tune_q | tune_o), sweep.subset((set(qids) - tune_q) | (set(oods) - tune_o))


def cost_table(sweep, bluff_cost: float = 5.0, refusal_cost: float = 1.0, cuts: Sequence[float] = GRID):
    """Total cost at every cut on the tuning half, the judging half and all queries (a pandas table)."""
    import pandas as pd

    tune, judge = threshold_halves(sweep)
    return pd.DataFrame({"cut": list(cuts),
                         "tune": [_cost(tune.at(c), bluff_cost, refusal_cost) for c in cuts],
                         "judge": [_cost(judge.at(c), bluff_cost, refusal_cost) for c in cuts],
                         "all": [_cost(sweep.at(c), bluff_cost, refusal_cost) for c in cuts]})


def check_threshold_choice(sweep, cut: float | None, bluff_cost: float = 5.0, refusal_cost: float = 1.0) -> Feedback:
    """Exercise 2: a cut chosen on the tuning half for stated costs, then judged on the held-out half."""
    low, high = CUT_RANGE
    if cut is None:
        return Feedback(False, (f"set `my_cut` to a cosine distance between {low} and {high}, chosen on `tune` only",
                                "hint: total cost = bluffs x bluff cost + refusals x refusal cost"))
    if not isinstance(cut, (int, float)) or not low <= cut <= high:
        return record("ex2", Feedback(False, (f"{cut!r} is not a cosine distance between {low} and {high}",),
                                      {"cut": cut}))
    tune, judge = threshold_halves(sweep)
    costs = np.array([_cost(tune.at(c), bluff_cost, refusal_cost) for c in GRID])
    best = float(costs.min())
    cheapest = [c for c, x in zip(GRID, costs) if x == best]
    mine, held = _cost(tune.at(cut), bluff_cost, refusal_cost), judge.at(cut)
    judged = _cost(held, bluff_cost, refusal_cost)
    judge_best = min(_cost(judge.at(c), bluff_cost, refusal_cost) for c in GRID)
    limit = best + max(TOLERANCE * best, refusal_cost)
    numbers = {"cut": float(cut), "tune_cost": mine, "tune_best": best, "judge_cost": judged, "judge_best": judge_best}
    notes = [f"on the tuning half at {cut:.3f}: {tune.at(cut).bluffs} bluffs x {bluff_cost:g} + "
             f"{tune.at(cut).refused} refusals x {refusal_cost:g} = {mine:g}; the cheapest cost there is {best:g}"]
    if mine > limit:
        nearest = min(cheapest, key=lambda c: abs(c - cut))
        direction = "higher" if nearest > cut else "lower"
        return record("ex2", Feedback(False, tuple(notes + [
            f"a cheaper cut exists on the tuning half: try a {direction} one",
            f"a cut passes when its cost is at most {limit:g} (the cheapest plus {TOLERANCE:.0%}, or one refusal)"]),
            numbers))
    return record("ex2", Feedback(True, tuple(notes + [
        f"within the tolerance (at most {limit:g}: the cheapest plus {TOLERANCE:.0%}, or one refusal)",
        f"judged on the held-out half: {held.bluffs} bluffs, {held.refused} refusals, cost {judged:g} "
        f"(the best any cut could have done there: {judge_best:g})"]), numbers))


def _vocabulary(corpus) -> set[str]:
    return {t for doc in corpus.documents for t in tokenize(doc.text)}


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def check_ticket_phrasings(course: Course, tickets: dict[str, str] | None, strategy: str = "E") -> Feedback:
    """Exercise 3: five tickets of your own, with recall@4 measured for both phrasings."""
    if not tickets:
        return Feedback(False, ("fill `my_tickets` with five {question id: your ticket text} entries",))
    problems = []
    if len(tickets) < 5:
        problems.append(f"{len(tickets)} tickets; write five")
    vocabulary = _vocabulary(course.corpus)
    others = [(f"the course question of {q.id}", content_words(q.question)) for q in course.questions] + \
             [(f"the dataset ticket of {q.id}", content_words(q.ticket)) for q in course.questions]
    questions = []
    for qid, text in tickets.items():
        q = _question(course, qid)
        if q is None:
            problems.append(f"{qid!r} is not a question id")
            continue
        words = content_words(text)
        known = words & vocabulary
        if len(known) < KNOWN_WORDS:
            problems.append(f"{qid}: only {len(known)} of your words occur anywhere in the course "
                            f"({sorted(known)}); a user writes real words: use at least {KNOWN_WORDS}")
            continue
        if len(shared := shared_needle_words(text, q.needle)) > MAX_SHARED:
            problems.append(f"{qid}: your ticket copies the needle's words {shared}: say it like a user would")
        source, other = max(others, key=lambda o: _overlap(words, o[1]))
        if (share := _overlap(words, other)) >= COPY_OVERLAP:
            problems.append(f"{qid}: {share:.0%} of your distinctive words are those of {source} (a copy from "
                            f"{COPY_OVERLAP:.0%} on): write a ticket of your own")
        questions.append((q, text))
    numbers: dict[str, object] = {"tickets": len(tickets)}
    if problems:
        return record("ex3", Feedback(False, tuple(problems), numbers))
    from ragkit.evaluation import Result, compare

    retriever = course.retriever(strategy)
    qs = [q for q, _ in questions]
    hits = needle_hits(retriever.chunks, qs)
    course_ranks = first_hit_ranks(retriever.dense([q.question for q in qs]).ranking, hits)
    ticket_ranks = first_hit_ranks(retriever.dense([t for _, t in questions]).ranking, hits)
    ids = tuple(q.id for q in qs)
    c = compare(Result(strategy, "course", course_ranks, ids), Result(strategy, "tickets", ticket_ranks, ids), "R@4")
    course_recall = float(np.mean((course_ranks > 0) & (course_ranks <= 4)))
    ticket_recall = float(np.mean((ticket_ranks > 0) & (ticket_ranks <= 4)))
    numbers.update({"course_recall4": course_recall, "ticket_recall4": ticket_recall,
                    "wins": c.test.wins, "losses": c.test.losses, "p": c.test.p})
    return record("ex3", Feedback(True, (
        f"recall@4: course phrasing {course_recall:.2f}, your tickets {ticket_recall:.2f}",
        f"course phrasing wins {c.test.wins}, your tickets win {c.test.losses} (p = {c.test.p:.2f} with "
        f"{len(ids)} pairs: far too few to conclude anything; that is the point of 64)"), numbers))


def needle_sign_test(a_ranks: np.ndarray, b_ranks: np.ndarray, query_needles: Sequence[str], k: int) -> SignTest:
    """Paired sign test at needle level on first-hit ranks: a hit is a rank in 1..k (see statistics)."""
    def found(ranks: np.ndarray) -> np.ndarray:
        ranks = np.asarray(ranks)
        return ((ranks > 0) & (ranks <= k)).astype(float)

    return statistics.needle_sign_test(found(a_ranks), found(b_ranks), list(query_needles))


def _template_words(chunks, make_header) -> list[set[str]]:
    """Per chunk, the words its header adds beyond its own document title and section (introductions may differ)."""
    return [content_words(make_header(c.doc_title, c.section)) - content_words(f"{c.doc_title} {c.section}")
            for c in chunks]


def check_header(course: Course, make_header: Callable[[str, str], str] | None, conclusion: str | None,
                 metric: str = "R@20") -> Feedback:
    """Exercise 4: a header that measurably changes retrieval, judged against E by the paired test at needle level."""
    if make_header is None or conclusion is None:
        return Feedback(False, ("define `my_header(doc_title, section)` and set `my_conclusion` to 'better' or "
                                "'worse'",))
    if not re.fullmatch(r"R@\d+", metric):
        return Feedback(False, (f"metric {metric!r}: use recall at some depth, such as 'R@4' or 'R@20'",))
    k = int(metric[2:])
    chunks = chunk_corpus(course.corpus, "E")
    custom = [dataclasses.replace(c, header=make_header(c.doc_title, c.section).rstrip("\n") + "\n") for c in chunks]
    if all(a.header == b.header for a, b in zip(chunks, custom)):
        return record("ex4", Feedback(False, ("your header is the same as strategy E's: change something",)))
    added = _template_words(chunks, make_header)
    for intro in (False, True):
        group = [(c, words) for c, words in zip(chunks, added) if (not c.section) == intro]
        if odd := next(((c, w) for c, w in group if w != group[0][1]), None):
            return record("ex4", Feedback(False, (
                "a header is a template: beyond its own title and section it must add the same words to every "
                f"chunk, but '{odd[0].doc_title} > {odd[0].section}' gets {sorted(odd[1])} where "
                f"'{group[0][0].doc_title} > {group[0][0].section}' gets {sorted(group[0][1])}",
                "a header that smuggles in words chosen per section (say, from the questions) measures the "
                "questions, not the header")))
    texts = [q.text for q in course.queries]
    needles = [q.qid for q in course.queries]
    hits = query_hits(chunks, course.questions, course.queries)
    base = first_hit_ranks(course.retriever("E").dense(texts).ranking, hits)
    retriever, truncated = _embedded(custom)
    mine = first_hit_ranks(retriever.dense(texts).ranking, hits)
    t = needle_sign_test(mine, base, needles, k)
    truth = "no detectable difference" if t.p >= 0.05 else ("better" if t.wins > t.losses else "worse")
    numbers = {"metric": metric, "wins": t.wins, "losses": t.losses, "p": t.p, "conclusion": conclusion}
    notes = [f"your header vs E at {metric}, per needle: +{t.wins}/-{t.losses} needles, p = {t.p:.3g}", *truncated]
    said = conclusion.strip().lower()
    if truth == "no detectable difference":
        return record("ex4", Feedback(False, tuple(notes + [
            "the test cannot tell your header from E's: this exercise asks for a header that measurably matters",
            "a header is embedded with every chunk: think of what it could hide, crowd out or mislead"]), numbers))
    if said != truth:
        return record("ex4", Feedback(False, tuple(notes + [
            f"your conclusion '{conclusion}' does not follow from that test: look at who wins more needles"]),
            numbers))
    return record("ex4", Feedback(True, tuple(notes + [f"'{truth}' is what the paired test supports"]), numbers))


def shared_runs(question: str, document: str, n: int = RUN) -> list[str]:
    """Runs of n words the question copies from the document (a paraphrase has none)."""
    q, d = tokenize(question), tokenize(document)
    seen = {tuple(d[i:i + n]) for i in range(len(d) - n + 1)}
    return [" ".join(q[i:i + n]) for i in range(len(q) - n + 1) if tuple(q[i:i + n]) in seen]


def check_own_document(course: Course, document: str | None, question: str | None,
                       strategy: str = "E") -> Feedback:
    """Exercise 5: your own document cited first, under the default cut, for a question that paraphrases it."""
    from ragkit.answer import DEFAULT_CUT, NoAnswer, answer
    from ragkit.citations import verify
    from ragkit.corpus import load_corpus

    if not document or not question:
        return Feedback(False, ("write `my_document` (Markdown with a '# Title' line and '## ' sections) "
                                "and `my_question`",))
    if not re.search(r"^# \S", document, re.M) or not re.search(r"^## \S", document, re.M):
        return record("ex5", Feedback(False, ("give the document a '# Title' line and at least one '## ' section",)))
    if copied := shared_runs(question, document):
        return record("ex5", Feedback(False, (f"your question copies {RUN} words in a row from your document "
                                              f"('{copied[0]}'): ask it in other words, as a reader would",),
                                      {"copied_runs": len(copied)}))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "corpus"
        shutil.copytree(course.corpus.folder, folder)
        (folder / "99-my-document.md").write_text(document, encoding="utf-8")
        corpus = load_corpus(folder)
        retriever, truncated = _embedded(chunk_corpus(corpus, strategy))
        result = answer(question, retriever, cut=DEFAULT_CUT)
    if isinstance(result, NoAnswer):
        return record("ex5", Feedback(False, (f"nothing is under the default cut {DEFAULT_CUT}: the gate refuses your "
                                              "question, so nothing gets cited",
                                              "make the question and one section about the same thing"),
                                      {"answered": False}))
    first = result.citations[0]
    numbers = {"answered": True, "top_document": first.document_id, "distance": float(first.cosine_distance)}
    notes = [f"top source: {first.document_id} - {first.locator_label} {first.fragment} (distance "
             f"{first.cosine_distance:.3f}, under the default cut {DEFAULT_CUT})", *truncated]
    if first.document_id != "99-my-document":
        return record("ex5", Feedback(False, tuple(notes + [
            "your document is not the first source: make the question and the section about the same thing"]),
            numbers))
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
