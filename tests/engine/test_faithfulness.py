"""The generator's grading on hand-made answers: markers, the recall rule, the 2x2, paired verdicts, arXiv ids."""

from __future__ import annotations

import numpy as np
import pytest

from ragkit import faithfulness as f
from ragkit.chunking import Chunk
from ragkit.citations import build_context
from ragkit.data import Question, queries
from ragkit.generation import Generation
from ragkit.statistics import SignTest, smallest_p

NEEDLE = "A sign test on the discordant pairs needs at least six of them to reach p below 0.05."
QUESTION = Question("q01", "doc", NEEDLE, "How many discordant pairs does a sign test need?", "ticket")


def made(text: str = "") -> Generation:
    return Generation(text, "test-model", 10, 5, 0.5, "end")


def trial(in_prompt: bool, ok: bool, question_id: str = "q01") -> f.GradedAnswer:
    return f.GradedAnswer(
        question_id, 2 if in_prompt else 0, 4, "", 1.0 if ok else 0.0, ok, f.Markers((), ()), False, made()
    )


def chunk(content: str, doc: str = "doc", start: int = 0) -> Chunk:
    return Chunk(doc, "Doc", "Section", start, start + len(content), content)


def test_markers_sort_valid_from_invalid_in_order():
    found = f.markers("Yes [1], and [4] says so [2]; see also [0] and [12] and [1].", sources=4)
    assert found == f.Markers((1, 4, 2, 1), (0, 12))
    assert f.markers("no markers here, nor [a] or [ 1 ]", 4) == f.Markers((), ())
    assert f.markers("[1]", 0) == f.Markers((), (1,))


def test_the_needle_words_leave_out_what_the_question_gives_away():
    words = f.needle_words(NEEDLE, QUESTION.question)
    assert "discordant" not in words and "pairs" not in words and "sign" not in words
    assert {"six", "reach", "below", "least"} <= words
    assert f.needle_words("sign test", "a sign test?") == frozenset({"sign", "test"})  # all given away: all kept


def test_an_answer_recalls_its_needle_at_half_the_needle_words_and_not_below():
    wanted = sorted(f.needle_words(NEEDLE, QUESTION.question))
    half = len(wanted) // 2 + len(wanted) % 2
    assert f.RECALL_SHARE == 0.5
    assert f.recalls_needle("Alpha and beta.", "alpha beta gamma delta", "what?")  # exactly half
    assert not f.recalls_needle("Alpha and the rest.", "alpha beta gamma delta", "what?")
    assert f.recalls_needle(" ".join(wanted[:half]), NEEDLE, QUESTION.question)
    assert not f.recalls_needle(" ".join(wanted[: half - 1]), NEEDLE, QUESTION.question)
    assert f.recalled(NEEDLE, NEEDLE, QUESTION.question) == 1.0
    assert not f.recalls_needle("A sign test needs discordant pairs.", NEEDLE, QUESTION.question)  # only the question's
    assert f.recalls_needle("AT LEAST SIX, to reach p BELOW 0.05", NEEDLE, QUESTION.question)  # case does not matter


def test_the_two_by_two_counts_each_trial_once_in_its_cell():
    trials = [
        trial(True, True),
        trial(True, True),
        trial(True, False),
        trial(False, True),
        trial(False, False),
        trial(False, False),
        trial(False, False),
    ]
    h = f.count_two_halves(trials, refused=3)
    assert (h.in_prompt_recalled, h.in_prompt_not_recalled, h.missing_recalled, h.missing_not_recalled) == (2, 1, 1, 3)
    assert h.refused == 3
    assert (h.with_needle.k, h.with_needle.n, h.without_needle.k, h.without_needle.n) == (2, 3, 1, 4)
    assert 0 < h.with_needle.low < 2 / 3 < h.with_needle.high < 1
    empty = f.count_two_halves([])
    assert empty.with_needle.n == 0 and (empty.with_needle.low, empty.with_needle.high) == (0.0, 1.0)


def test_a_trial_is_graded_from_the_prompts_own_citations():
    hits = [(chunk("nothing here"), 0.3), (chunk(NEEDLE, start=100), 0.4)]
    prompt, citations = build_context(QUESTION.question, hits)

    class Fixed:
        def run(self, prompt, max_new_tokens=None):
            return made("At least six are needed to reach p below 0.05 [2], not [7].")

    t = f.grade_answer(QUESTION, QUESTION.question, prompt, citations, Fixed())  # type: ignore[arg-type]
    assert t.needle_at == 2 and t.needle_in_prompt and t.needle_recalled and t.cites_needle
    assert t.markers == f.Markers((2,), (7,))
    prompt, citations = build_context(QUESTION.question, hits[::-1])
    again = f.grade_answer(QUESTION, QUESTION.question, prompt, citations, Fixed())  # type: ignore[arg-type]
    assert again.needle_at == 1 and not again.cites_needle  # [2] is now the source without the needle


def test_the_needle_is_placed_first_in_the_middle_and_last():
    needle, others = (chunk("N"), 0.1), [(chunk(str(i)), 0.2) for i in range(19)]
    for position, at in (("first", 0), ("middle", 9), ("last", 19)):
        placed = f.place(needle, others, position)
        assert len(placed) == 20 and placed[at] is needle and [p for p in placed if p is not needle] == others


def position_test(first: list[bool], middle: list[bool]) -> SignTest:
    lost = f.LostInTheMiddle(
        tuple(f"q{i}" for i in range(len(first))),
        20,
        {
            "first": tuple(trial(True, ok) for ok in first),
            "middle": tuple(trial(True, ok) for ok in middle),
            "last": tuple(trial(True, False) for _ in first),
        },
    )
    return lost.test("first")


def test_the_paired_test_counts_discordant_pairs():
    test = position_test([True] * 7 + [False], [False] * 7 + [True])
    assert (test.wins, test.losses) == (7, 1) and test.p == pytest.approx(0.0703125)
    assert smallest_p(0) == 1.0 and smallest_p(1) == 1.0 and smallest_p(6) == pytest.approx(0.03125)


def test_rates_by_position_and_the_table_name_the_source_number():
    lost = f.LostInTheMiddle(
        ("q1", "q2"),
        20,
        {
            "first": (trial(True, True), trial(True, True)),
            "middle": (trial(True, False), trial(True, True)),
            "last": (trial(True, False), trial(True, False)),
        },
    )
    assert [lost.rate(p).k for p in f.POSITIONS] == [2, 1, 0]
    assert (lost.test("first").wins, lost.test("first").losses) == (1, 0)


@pytest.mark.parametrize(
    "text, ids",
    [
        ("See 1908.10084 and arXiv:2005.11401v4.", ("1908.10084", "2005.11401v4")),
        ("Version 2.3.4567, year 2020, 12345.6789, 1234.567", ()),
        ("(2104.08821) and 2104.088210", ("2104.08821",)),
    ],
)
def test_arxiv_identifiers_are_well_formed_ones_only(text, ids):
    assert f.arxiv_ids(text) == ids


def test_the_samples_are_fixed_by_their_seed_whatever_the_order():
    questions = [Question(f"q{i:02d}", "doc", f"n{i}", "?", "?") for i in range(32)]
    once = [q.id for q in f.sample(questions, 12)]
    assert once == [q.id for q in f.sample(questions[::-1], 12)] and len(set(once)) == 12
    assert once != [q.id for q in f.sample(questions, 16, seed=f.SAMPLE_SEED + 1)]
    assert len(f.sample(questions[:3], 16)) == 3
    asked = [q.id for q in f.sample(queries(questions), 12)]
    assert asked == sorted(asked) and {a.split("/")[1] for a in asked} <= {"question", "ticket"}


def test_a_query_is_graded_against_its_questions_needle_by_its_own_words():
    class Fixed:
        def run(self, prompt, max_new_tokens=None):
            return made("Discordant pairs.")

    hits = [(chunk(NEEDLE), 0.3)]
    prompt, citations = build_context("ticket words", hits)
    by_ticket = f.grade_answer(
        QUESTION,
        "why is my comparison never significant",
        prompt,
        citations,
        Fixed(),  # type: ignore[arg-type]
        query_id="q01/ticket",
    )
    assert by_ticket.query_id == "q01/ticket" and by_ticket.recalled > 0  # "discordant" is not the ticket's word
    by_question = f.grade_answer(QUESTION, QUESTION.question, prompt, citations, Fixed())  # type: ignore[arg-type]
    assert by_question.query_id == "q01" and by_question.recalled == 0  # the question gives "discordant" away


def test_a_gated_prompt_holds_the_needle_only_when_the_gate_lets_its_chunk_through():
    from ragkit.retrieval import Run

    ranking = np.array([[2, 0, 1], [0, 1, 2]])
    distance = np.array([[0.5, 0.3, 0.2], [0.2, 0.4, 0.9]])
    hits = np.array([[True, False, False], [False, False, True]])
    run = Run("dense", "E", ranking, distance)
    assert f.prompt_holds(run, distance, hits, cut=None, keep=2).tolist() == [True, False]  # chunk 2 of query 1: rank 3
    assert f.prompt_holds(run, distance, hits, cut=0.4, keep=2).tolist() == [False, False]  # chunk 0 at 0.5: gated out
    assert f.prompt_holds(run, distance, hits, cut=None, keep=3).tolist() == [True, True]


class Counting:
    """A generator stand-in that counts the answers it computes and the ones it is asked for, as ``Generator.calls``
    and ``Generator.requests`` do."""

    name = "counting"
    calls = requests = 0

    def count(self, text):
        return len(text.split())

    def __init__(self):
        self.seen: set[str] = set()

    def generate(self, prompt):
        return self.run(prompt).text

    def run(self, prompt, max_new_tokens=None):
        self.requests += 1
        if prompt not in self.seen:  # a prompt answered before is read back, not computed
            self.seen.add(prompt)
            self.calls += 1
        return made("an answer")


class Near:
    """A retriever stand-in: one chunk, at a distance set per query."""

    def __init__(self, distances):
        self.chunks = [chunk("the only chunk")]
        self.by_query = distances

    def distances(self, queries):
        return np.array([[self.by_query[q]] for q in queries])


def test_a_refused_query_makes_no_model_call_and_an_answered_one_does():
    from ragkit.data import OutOfDomain

    asked = [
        OutOfDomain("o1", "far away", "absurd", "x"),
        OutOfDomain("o2", "close by", "adjacent", "y"),
        OutOfDomain("o3", "farther", "absurd", "z"),
    ]
    generator = Counting()

    def through_the_gate():
        near = Near({"far away": 0.9, "close by": 0.3, "farther": 0.99})
        return f.count_gate_calls(asked, near, generator, cut=0.675)  # type: ignore[arg-type]

    calls = through_the_gate()
    assert (calls.refused, calls.answered, calls.calls_refused, calls.calls_answered) == (2, 1, 0, 1)
    assert generator.calls == 1 and len(calls.answers) == 1
    again = through_the_gate()
    # a second run reads its one answer back: the saving is still counted (the refusals asked for none)
    assert (again.calls_refused, again.calls_answered) == (0, 1) and generator.calls == 1


def test_what_a_sample_can_show_is_computed_before_any_prediction():
    """Power before prediction (issue 64): the smallest p and the smallest difference detectable with 80% power."""
    assert f.paired_pairs_needed() == 6  # 2 * 0.5**5 = 0.0625, 2 * 0.5**6 = 0.03125
    assert f.paired_detectable(5) is None  # five pairs can never reach p < 0.05
    assert f.paired_power(39, 0.2) >= 0.8 > f.paired_power(38, 0.2)  # binomial tail of >= 6 discordant pairs
    assert f.needles_for(0.2) == 39
    assert abs(f.paired_power(40, f.paired_detectable(40)) - 0.8) < 1e-6
    assert abs(f.fisher_smallest_p(7, 5) - 1 / 792) < 1e-12  # one table of C(12, 5) = 792 as extreme
    assert f.fisher_smallest_p(7, 0) == 1.0 and f.unpaired_detectable(7, 0, 0.0) is None
    gap = f.unpaired_detectable(7, 5, 0.0)
    assert gap is not None and 0.7 < gap < 0.85 and f.unpaired_power(7, 5, 0.0, gap) >= 0.8 - 1e-6


@pytest.mark.slow  # the course's vectors
def test_the_retrievers_prompt_rates_are_paired_by_needle_and_holm_adjusted():
    """A needle's two phrasings share its chunk: one pair per needle, Holm over the comparisons against dense, and an
    interval that resamples whole needles (the queries are not independent)."""
    from ragkit.statistics import cluster_bootstrap, holm, needle_sign_test
    from ragkit.teach.course import load

    course = load(progress=False)
    retriever = course.retriever("E")
    rates = f.retriever_rates(retriever, course.questions)
    asked = queries(course.questions)
    needles = [q.qid for q in asked]
    from ragkit.evaluation import query_hits

    hits = query_hits(retriever.chunks, course.questions, asked)
    texts = [q.text for q in asked]
    dense = retriever.dense(texts)
    runs = [dense, retriever.bm25(texts)]
    runs.append(retriever.hybrid(texts, dense, runs[1]))
    held = [f.prompt_holds(r, dense.distance, hits, f.DEFAULT_CUT).astype(float) for r in runs]
    tests = [needle_sign_test(h, held[0], needles) for h in held[1:]]
    assert [r.retriever for r in rates] == ["dense", "bm25", "hybrid"]
    assert [r.against_dense for r in rates[1:]] == tests and rates[0].against_dense is None
    assert [r.holm_p for r in rates[1:]] == holm([t.p for t in tests])
    interval = cluster_bootstrap(held[1], needles)
    assert (rates[1].low, rates[1].high) == (interval.low, interval.high)
    assert sum(t.wins + t.losses for t in tests) <= 2 * 32, "pairs are needles, at most 32 per comparison"
