"""The exercise checks cannot be gamed: every shortcut a student might try answers NOT YET, and results are recorded."""

import contextlib
import getpass
import inspect
import json
import os
import pwd
import signal
import stat
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import ragkit.teach.course
from ragkit import data
from ragkit.chunking import SIZE, blind_window_start, chunk_corpus
from ragkit.data import MAX_SHARED, shared_needle_words
from ragkit.errors import InputError
from ragkit.evaluation import needle_hits
from ragkit.statistics import SignTest
from ragkit.teach import exercises as ex
from ragkit.teach import language, untrusted
from ragkit.teach.exercises import ex4_header
from ragkit.teach.exercises import results as res
from ragkit.teach.grading import class_report as reports

from conftest import ROOT


@pytest.fixture(scope="module")
def course():
    return ragkit.teach.course.load(progress=False)


@pytest.fixture(autouse=True)
def results(tmp_path, monkeypatch):
    path = tmp_path / "results.jsonl"
    monkeypatch.setenv("RAGKIT_RESULTS", str(path))
    monkeypatch.setenv("RAGKIT_STUDENT", "tester")
    monkeypatch.setattr(res, "_student", None)
    monkeypatch.setattr(ex4_header, "_STATED", {})  # ex4's direction, locked per kernel: each test is a fresh kernel
    return path


def destroyed(course, size):
    """(question id, cut) for every needle blind chunking at this size destroys."""
    hits = needle_hits(chunk_corpus(course.corpus, "A", size=size), course.questions).any(axis=1)
    out = []
    for q, carried in zip(course.questions, hits):
        if not carried:
            doc = course.corpus[q.doc_id]
            out.append((q.id, blind_window_start(doc, doc.text.find(q.needle) + len(q.needle) - 1, size)))
    return out


# ex1 -------------------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_ex1_every_own_size_destroys_some_needle(course):
    for size in ex.OWN_SIZES:
        assert destroyed(course, size), f"no needle destroyed at {size}: that student could not do exercise 1"


@pytest.mark.slow
def test_ex1_the_answer_printed_for_512_is_not_yet(course):
    size = ex.own_size()
    mine = set(destroyed(course, size))
    printed = [a for a in destroyed(course, SIZE) if a not in mine]
    assert printed
    for qid, cut in printed:
        assert not ex.check_destroyed_needle(course, qid, cut).passed
    qid, cut = destroyed(course, SIZE)[0]
    feedback = ex.check_destroyed_needle(course, qid, cut, size=SIZE)
    assert not feedback.passed and "own" in str(feedback)


@pytest.mark.slow
def test_ex1_own_size_answer_passes_and_sizes_differ_by_student(course):
    qid, cut = destroyed(course, ex.own_size())[0]
    assert ex.check_destroyed_needle(course, qid, cut).passed
    assert len({ex.own_size(name) for name in ("ana", "ben", "chloe", "dirk", "eva")}) > 1
    assert SIZE not in {ex.own_size(str(i)) for i in range(500)}


@pytest.mark.parametrize(
    "question_id, cut_at",
    [(7, 1536), ("q07", "1536"), ("q07", True), ("q07", 1536.0), (["q07"], None), ("q07", [1, 2])],
)
@pytest.mark.slow
def test_ex1_wrong_types_are_answered_in_words(course, question_id, cut_at):
    feedback = ex.check_destroyed_needle(course, question_id, cut_at if cut_at is not None else 0)
    assert not feedback.passed and "as a whole number" in str(feedback)


@pytest.mark.slow
def test_ex1_the_window_is_the_students_own_never_an_argument(course):
    qid, cut = destroyed(course, ex.own_size())[0]
    assert ex.check_destroyed_needle(course, qid, np.int64(cut), size=ex.own_size()).passed
    other = next(s for s in ex.OWN_SIZES if s != ex.own_size())
    for size in (other, "512", np.array([1, 2]), 512.0):
        feedback = ex.check_destroyed_needle(course, qid, cut, size=size)
        assert not feedback.passed and "your own size" in str(feedback), size


# ex2 -------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sweep(course):
    return course.sweep("E", "dense")


def test_ex2s_cost_prices_an_answer_given_without_the_needle_between_a_refusal_and_a_bluff():
    from ragkit.threshold import SweepRow

    row = SweepRow(
        cut=0.5, bluffs=2, out_of_domain=15, refused=4, answered_with_needle=20, answered_without_needle=8, in_domain=32
    )
    assert ex.EX2.refusal_cost < ex.EX2.without_needle_cost < ex.EX2.bluff_cost
    assert ex.exercise_cost(row) == 2 * ex.EX2.bluff_cost + 8 * ex.EX2.without_needle_cost + 4 * ex.EX2.refusal_cost
    assert ex.cost_table(SimpleNamespace(at=lambda cut: row), [0.5]).cost.tolist() == [ex.exercise_cost(row)]


@pytest.mark.slow
def test_ex2_halves_split_by_needle_with_both_phrasings_together(sweep):
    tune, judge = ex.threshold_halves(sweep)
    assert {q.id for q in tune.questions}.isdisjoint({q.id for q in judge.questions})
    assert len(tune.questions) + len(judge.questions) == len(sweep.questions)
    for half in (tune, judge):
        ids = {q.id for q in half.questions}
        assert {q.qid for q in half.queries} == ids and len(half.queries) == 2 * len(ids)
        assert len(half.d_in) == len(half.queries) and len(half.d_out) == len(half.out_of_domain)
    assert tune.at(0.6).bluffs + judge.at(0.6).bluffs == sweep.at(0.6).bluffs
    assert tune.at(0.6).refused + judge.at(0.6).refused == sweep.at(0.6).refused
    again, _ = ex.threshold_halves(sweep)
    assert [q.id for q in again.questions] == [q.id for q in tune.questions]


def allowed_best(half):
    """The cheapest cuts of a half within the refusal ceiling, and their cost."""
    table = ex.cost_table(half)
    allowed = table[table["within ceiling"]]
    return allowed.cut[allowed.cost == allowed.cost.min()], allowed.cost.min()


@pytest.mark.slow
def test_ex2_hint_points_towards_the_cheapest_cut(course, sweep):
    tune, _ = ex.threshold_halves(sweep)
    best, _ = allowed_best(tune)
    below, above = round(best.min() - 0.06, 3), round(best.max() + 0.2, 3)
    for cut, hint in ((below, "higher"), (above, "try a lower cut")):
        feedback = ex.check_threshold_choice(course, cut)
        assert not feedback.passed and hint in " ".join(feedback.hints), (cut, str(feedback))


@pytest.mark.slow
def test_ex2_a_cut_tuned_on_the_judging_queries_is_not_yet(course, sweep):
    tune, judge = ex.threshold_halves(sweep)
    _best, cost = allowed_best(tune)
    limit = cost + max(ex.TOLERANCE * cost, 1)
    for half in (judge, sweep):  # the cheapest cut of the queries that judge, as a student who peeks would take it
        table = ex.cost_table(half)
        cut = float(table.cut[table.cost.idxmin()])
        row = ex.cost_table(tune, [cut]).iloc[0]
        assert row.cost > limit or not row["within ceiling"], "on this corpus the shortcut would pass anyway"
        assert not ex.check_threshold_choice(course, cut).passed


@pytest.mark.slow
def test_ex2_cheapest_tuning_cut_passes_and_is_judged_on_the_other_half(course, sweep):
    tune, judge = ex.threshold_halves(sweep)
    cut = float(allowed_best(tune)[0].iloc[0])
    feedback = ex.check_threshold_choice(course, cut)
    assert feedback.passed and "held-out half" in str(feedback)
    assert feedback.numbers["judge_cost"] == ex.cost_table(judge, [cut]).cost.item()
    assert all(ex.check_threshold_choice(course, kind(cut)).passed for kind in (np.float32, np.float64))


@pytest.mark.slow
def test_ex2_a_passing_cut_that_refuses_too_many_on_the_held_out_half_is_told_so(course, sweep):
    """The ceiling binds on the half a student chose on; where the held-out half goes over it, the feedback says so."""
    tune, judge = ex.threshold_halves(sweep)
    passing = [float(c) for c in ex.cost_table(tune).cut if ex.check_threshold_choice(course, float(c)).passed]
    over = {c: ex.cost_table(judge, [c])["within ceiling"].item() is False for c in passing}
    assert any(over.values()), "on this corpus every passing cut stays within the ceiling on the held-out half"
    for cut, went_over in over.items():
        said = str(ex.check_threshold_choice(course, cut))
        assert ("over the ceiling of" in said) == went_over, (cut, said)
    with language.speaking("nl"):
        said = str(ex.check_threshold_choice(course, next(c for c, went_over in over.items() if went_over)))
    assert f"boven het plafond van {ex.EX2.max_refused:.0%}" in said, said


@pytest.mark.slow
def test_ex2_the_cheapest_cut_that_refuses_most_answerable_questions_is_not_yet(course, sweep):
    tune, _ = ex.threshold_halves(sweep)
    table = ex.cost_table(tune)
    cheapest = table.loc[table.cost.idxmin()]
    assert not cheapest["within ceiling"], "on this corpus the ceiling would not bind"
    feedback = ex.check_threshold_choice(course, float(cheapest.cut))
    assert not feedback.passed and f"more than {ex.EX2.max_refused:.0%} of the answerable queries" in str(feedback)


@pytest.mark.slow
def test_ex2_the_costs_are_the_exercises_own(course):
    assert {"bluff_cost", "refusal_cost"}.isdisjoint(inspect.signature(ex.check_threshold_choice).parameters)
    with pytest.raises(TypeError):
        ex.check_threshold_choice(course, 1.0, bluff_cost=0)
    assert not ex.check_threshold_choice(course, 1.0).passed
    feedback = ex.check_threshold_choice(course.sweep("E", "dense"), 0.545)  # a doctored sweep cannot be the judge
    assert not feedback.passed and "pass the course" in str(feedback)


@pytest.mark.parametrize("cut", [float("nan"), float("inf"), np.float32("nan"), "0.55", True, [0.55], 1.5])
@pytest.mark.slow
def test_ex2_a_cut_that_is_no_distance_is_answered_in_words(course, cut):
    feedback = ex.check_threshold_choice(course, cut)
    assert not feedback.passed and "is not a cosine distance" in str(feedback)


# ex3 -------------------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_ex3_dataset_tickets_and_course_questions_are_copies(course):
    picked = [q for q in course.questions if len(shared_needle_words(q.ticket, q.needle)) <= MAX_SHARED][:5]
    for field in ("ticket", "question"):
        feedback = ex.check_ticket_phrasings(course, {q.id: getattr(q, field) for q in picked})
        assert not feedback.passed and "a copy" in str(feedback), field
    # pasted under another question's id, and lightly edited: still a copy
    shifted = {b.id: a.ticket + " thanks" for a, b in zip(picked, picked[1:] + picked[:1])}
    assert not ex.check_ticket_phrasings(course, shifted).passed


@pytest.mark.slow
def test_ex3_gibberish_is_not_yet(course):
    feedback = ex.check_ticket_phrasings(course, {q.id: "zzz qqq" for q in course.questions[:5]})
    assert not feedback.passed and "occur anywhere in the course" in str(feedback)


@pytest.mark.slow
def test_ex3_copying_the_needle_is_not_yet(course):
    feedback = ex.check_ticket_phrasings(course, {q.id: "help: " + q.needle for q in course.questions[:5]})
    assert not feedback.passed and "copies the needle's words" in str(feedback)
    assert f"more than the {ex.EX3.max_shared} distinctive words of the needle" in str(feedback)


def padded(text):
    """Fifteen filler words added."""
    return text + (
        " honestly really truly just simply basically literally actually quite rather very totally fully wholly utterly"
    )


def deleted(text):
    """About 40% of the words left out: every second and fourth of five."""
    return " ".join(w for i, w in enumerate(text.split()) if i % 5 not in (1, 3))


def accented(text):
    return text.replace("e", "\u00e9").replace("a", "\u00e0")


def zero_width(text):
    return " ".join(w[:2] + "\u200b" + w[2:] for w in text.split())


def test_words_are_compared_as_the_encoder_reads_them():
    from ragkit.words import content_words, copied_share, folded, words

    assert folded("Ne\u200bedle \u00c9T\u00c9 \ufb01le Stra\u00dfe") == "needle ete file strasse"
    assert words(accented("needle cache")) == words(zero_width("needle cache")) == ["needle", "cache"]
    assert content_words("The CAF\u00c9 is open") == {"cafe", "open"}
    ticket = content_words("my gpu runs out of memory")
    assert copied_share(ticket | set("abcdefghijklmno"), ticket) == copied_share(ticket - {"gpu"}, ticket) == 1.0


@pytest.mark.parametrize("disguise", [padded, deleted, zero_width, lambda t: deleted(padded(t)).upper()])
@pytest.mark.slow
def test_ex3_a_dataset_ticket_padded_cut_or_disguised_is_a_copy(course, disguise):
    picked = [q for q in course.questions if len(shared_needle_words(q.ticket, q.needle)) <= MAX_SHARED][:5]
    feedback = ex.check_ticket_phrasings(course, {q.id: disguise(q.ticket) for q in picked})
    assert not feedback.passed and all("a copy from 50%" in n for n in feedback.notes), str(feedback)
    if disguise in (padded, deleted):
        assert all(n.startswith(f"{q.id}: 100% of") for q, n in zip(picked, feedback.notes)), str(feedback)


@pytest.mark.slow
def test_ex3_the_needle_in_accents_or_zero_width_characters_still_copies_it(course):
    for disguise in (accented, zero_width):
        feedback = ex.check_ticket_phrasings(
            course, {q.id: disguise(q.needle) + " please help me" for q in course.questions[:5]}
        )
        assert not feedback.passed and "copies the needle's words" in str(feedback)


@pytest.mark.parametrize("ticket", ["7 8 9", "error problem issue broken wrong"])
@pytest.mark.slow
def test_ex3_a_ticket_that_does_not_ask_for_its_needle_is_not_yet(course, ticket):
    feedback = ex.check_ticket_phrasings(course, {q.id: ticket for q in course.questions[:5]})
    assert not feedback.passed
    if ticket != "7 8 9":  # digits shared with a dataset ticket already make it a copy
        assert f"top {ex.EX3.top_k} of E/dense" in str(feedback) and "nearest course question" in str(feedback)


@pytest.mark.parametrize("tickets", [["q01", "q02"], {1: "x", "q01": 3, "q02": None}, "q01: help"])
@pytest.mark.slow
def test_ex3_wrong_types_are_answered_in_words(course, tickets):
    feedback = ex.check_ticket_phrasings(course, tickets)
    assert not feedback.passed and ("make it a dict" in str(feedback) or "an entry is a question id" in str(feedback))


def test_validate_warns_about_dataset_tickets_that_break_the_word_rule(capsys):
    from ragkit.__main__ import main

    assert main(["validate"]) == 0
    out = capsys.readouterr().out
    assert "WARNING q04" in out and "WARNING q05" in out and "ground truth is valid" in out
    assert len(data.ticket_rule_breaches(ragkit.teach.course.load(progress=False).questions)) == out.count("WARNING")


# ex4 -------------------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_ex4_e_header_itself_is_not_yet(course):
    def same(title: str, section: str) -> str:
        return f"[{title} > {section}]" if section else f"[{title}]"

    assert "same as strategy E" in str(ex.check_header(course, same, "better", "consistent"))


def sections_asked(course):
    asked = {}
    for q in course.questions:
        for c in course.chunks("E"):
            if c.doc_id == q.doc_id and q.needle in c.content:
                asked[c.section] = q.question
    return asked


@pytest.mark.slow
def test_ex4_words_smuggled_in_per_section_are_not_yet(course):
    asked = sections_asked(course)

    def stuffed(title: str, section: str) -> str:
        return f"[{title} > {section}] {asked.get(section, '')}"

    feedback = ex.check_header(course, stuffed, "better", "consistent")
    assert not feedback.passed and "template" in str(feedback)


@pytest.mark.parametrize("disguise", [lambda w, n: " ".join([w] * n), lambda w, n: accented(" ".join([w] * n))])
@pytest.mark.slow
def test_ex4_the_same_words_repeated_differently_per_section_are_not_yet(course, disguise):
    asked = sections_asked(course)

    def repeated(title: str, section: str) -> str:
        return f"[{title} > {section}] " + disguise("important", 3 if section in asked else 1)

    feedback = ex.check_header(course, repeated, "better", "consistent")
    assert not feedback.passed and "as often, to every chunk" in str(feedback)


def crowding(title, section):
    """The old solution's header: title and section twenty times over, filling the encoder's window."""
    return "[" + " > ".join([title, section or title] * 20) + "]"


@pytest.mark.slow
def test_ex4_a_header_that_only_fills_the_window_is_refused_and_told_why(course):
    for header in (crowding, lambda t, s: f"[{t} > {s}] " + "filler " * 200):
        feedback = ex.check_header(course, header, "worse", "consistent")
        assert not feedback.passed and f"more than {ex.EX4.max_header_pieces}" in str(feedback)
        assert "crowds the chunk's own words out" in str(feedback) and "wins" not in feedback.numbers


@pytest.mark.parametrize(
    "header", [lambda t, s: "[document]", lambda t, s: "7 8 9 " * 5, lambda t, s: f"[{t}]" if s else "[introduction]"]
)
@pytest.mark.slow
def test_ex4_a_header_with_no_words_of_its_section_is_refused_and_told_why(course, header):
    feedback = ex.check_header(course, header, "better", "consistent")
    assert not feedback.passed and "carries no word of its section" in str(feedback)


def sentence(title, section):
    """The solution's header: a sentence that says where the passage comes from."""
    return (
        f"This passage is from the chapter {title}, section {section}."
        if section
        else f"This passage introduces the chapter {title}."
    )


EX4_SOLUTION = ROOT / "notebooks" / "solutions" / "ex4-design-a-header.ipynb"


def finding(test: SignTest):
    """A stand-in for the engine's comparison in ex4's check: whatever the header, the needle-level test is ``test``."""
    from ragkit.evaluation import Comparison

    def compare(a, b, metric, level):
        assert (metric, level) == (ex.EX4.metric, "needle"), "ex4 judges at the metric chosen in advance, per needle"
        return Comparison(a.label, b.label, metric, test, (), (), level)

    return compare


@pytest.fixture
def solved(executed):
    """The ex4 solution's one run: it embeds the chunks with ``sentence`` as their header into the run's cache.

    The tests that measure ``sentence`` take it, so they read those vectors instead of embedding the 1,068 chunks
    a second time; asking for ``executed`` puts them on the notebooks' pytest-xdist worker, after that run.
    """
    run = executed(EX4_SOLUTION)
    assert run.error is None, run.error
    return run


@pytest.mark.slow
def test_ex4_the_conclusion_must_be_the_verdict_of_the_paired_test(course, solved):
    from ragkit.statistics import verdict

    first = ex.check_header(course, sentence, "better", "consistent")
    n = first.numbers
    truth = verdict(1, n["wins"], n["losses"], n["p"])
    assert first.passed == (truth == "consistent") and n["metric"] == "Hit@20"
    assert ex.check_header(course, sentence, "better", truth.upper()).passed
    wrong = next(v for v in ("consistent", "contradicts", "inconclusive, same direction") if v != truth)
    feedback = ex.check_header(course, sentence, "better", wrong)
    assert not feedback.passed and "does not follow" in str(feedback)


@pytest.mark.slow
def test_ex4_a_well_argued_null_result_passes(course, solved, monkeypatch):
    monkeypatch.setattr(ex4_header, "compare", finding(SignTest(3, 2, 1.0)))
    assert ex.check_header(course, sentence, "better", "inconclusive, same direction").passed
    assert ex.check_header(course, sentence, "worse", "Inconclusive, opposite direction", stated="worse").passed
    for said in ("consistent", "better", "no detectable difference"):
        feedback = ex.check_header(course, sentence, "better", said)
        assert not feedback.passed and "does not follow" in str(feedback)
    monkeypatch.setattr(ex4_header, "compare", finding(SignTest(1, 12, 0.003)))
    assert ex.check_header(course, sentence, "better", "contradicts").passed
    assert ex.check_header(course, sentence, "worse", "consistent", stated="worse").passed


@pytest.mark.slow
def test_ex4_the_metric_is_the_exercises_own_and_an_expectation_is_a_direction(course, solved):
    assert "metric" not in inspect.signature(ex.check_header).parameters
    for expectation in ("maybe", "no detectable difference", ""):
        feedback = ex.check_header(course, sentence, expectation or "  ", "consistent")
        assert not feedback.passed and "the direction you expect before you measure" in str(feedback)


@pytest.mark.slow
def test_ex4_the_measurement_waits_for_a_stated_direction(course, solved, monkeypatch):
    monkeypatch.setattr(ex4_header, "compare", finding(SignTest(3, 2, 1.0)))
    for expectation in (None, "maybe"):
        run = ex.measure_header(course, sentence, expectation)
        assert run.expectation is None and run.test is None and "before you measure" in str(run)
    feedback = ex.check_header(course, sentence, "better", "inconclusive, same direction")
    assert not feedback.passed and "no expectation was stated before your first measurement" in str(feedback)
    run = ex.measure_header(course, sentence, "better")  # nothing was measured yet: this run may lock it
    assert run.expectation == "better" and run.test == SignTest(3, 2, 1.0)
    assert ex.check_header(course, sentence, "better", "inconclusive, same direction").passed


@pytest.mark.slow
def test_ex4_a_direction_changed_after_the_first_measurement_is_not_yet(course, solved):
    from ragkit.statistics import verdict

    first = ex.measure_header(course, sentence, "better")
    assert first.expectation == "better" and first.test is not None
    again = ex.measure_header(course, sentence, "Worse")
    assert again.expectation == "better" and "'Worse' now is not taken" in str(again)
    truth = verdict(-1, first.test.wins, first.test.losses, first.test.p)
    feedback = ex.check_header(course, sentence, "worse", truth)
    assert not feedback.passed and "you stated 'better' before your first measurement" in str(feedback)
    assert feedback.numbers == {"expected": "worse", "stated": "better"}


@pytest.mark.slow
def test_ex4_the_check_run_first_locks_the_direction_itself(course, solved, monkeypatch):
    monkeypatch.setattr(ex4_header, "compare", finding(SignTest(3, 2, 1.0)))
    assert ex.check_header(course, sentence, "better", "inconclusive, same direction").passed
    feedback = ex.check_header(course, sentence, "worse", "inconclusive, opposite direction")
    assert not feedback.passed and "holds you to the one stated first" in str(feedback)


@pytest.mark.parametrize(
    "stated, says",
    [
        (None, "no expectation was stated before your first measurement"),
        ("worse", "you stated 'worse' before your first measurement"),
    ],
)
def test_ex4_the_grader_holds_a_fresh_run_to_the_direction_in_force_when_it_measured(course, stated, says):
    from ragkit.teach.grading.answers import header_pairs
    from ragkit.teach.grading.handed_in import Submission
    from ragkit.teach.grading.judging import judged
    from ragkit.teach.grading.sandbox import SandboxRun

    pairs = header_pairs(course)
    answers = {
        "my_header": {"value": [[t, s, sentence(t, s)] for t, s in pairs]},
        "my_expectation": {"value": "better"},
        "my_conclusion": {"value": "inconclusive, same direction"},
        "stated_expectation": {"value": stated},
    }
    g = judged(Submission("ana", "ex4", Path("ex4.ipynb")), SandboxRun(answers=json.dumps(answers)), course)
    assert g.grade == "not yet" and says in g.reason, g
    assert ex4_header._STATED == {}  # the grader's process locks nothing of its own


@pytest.mark.slow
def test_ex4_a_fresh_run_of_the_notebook_holds_the_order_too(course, solved, tmp_path, monkeypatch):
    """The grader runs the notebook from the top: a direction set after the measuring cell is refused there."""
    import nbformat

    from ragkit.teach.grading import grader as grading
    from ragkit.teach.grading.isolation import Limits

    notebooks = ROOT / "notebooks"
    for student in ("ada", "tom", "lea"):
        nb = nbformat.read(
            notebooks / ("exercises" if student == "lea" else "solutions") / "ex4-design-a-header.ipynb", as_version=4
        )
        if student == "tom":  # the direction turned after seeing the counts, with the verdict to match
            check = next(i for i, c in enumerate(nb.cells) if "check_header(" in c.source)
            nb.cells.insert(
                check,
                nbformat.v4.new_code_cell(
                    'my_expectation = "worse"\nmy_conclusion = verdict(-1, test.wins, test.losses, test.p)'
                ),
            )
        if student == "lea":  # nothing stated when the measuring cell runs; the direction written in afterwards
            answers = [c for c in nb.cells if "# your answer" in c.source]
            answers[0].source = inspect.getsource(sentence).replace(
                "def sentence(title, section):", "def my_header(title, section):"
            )
            answers[2].source = 'my_expectation = "better"\nmy_conclusion = "inconclusive, same direction"'
        folder = tmp_path / "home" / student / "ex"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / "ex4-design-a-header.ipynb")
    monkeypatch.setenv("HOME", str(tmp_path / "teacher"))
    result = grading.grade([tmp_path / "home"], "home", Limits(timeout=300), jobs=2, course=course)
    got = {g.student: g for g in result.grades if g.exercise == "ex4"}
    assert got["ada"].grade == "yes", got["ada"]
    tom = got["tom"]
    assert tom.grade == "not yet" and "you stated 'better' before your first measurement" in tom.reason, tom
    assert got["lea"].grade == "not yet" and "no expectation was stated" in got["lea"].reason, got["lea"]


def broken(title, section):
    raise KeyError(section)


@pytest.mark.parametrize(
    "header, conclusion, says",
    [
        ("[title]", "worse", "define `my_header` as a function"),
        (crowding, 3, "write the expectation and the conclusion"),
        (broken, "worse", "`my_header` raised KeyError"),
        (lambda t, s: None, "worse", "it must return text"),
    ],
)
@pytest.mark.slow
def test_ex4_wrong_types_and_failing_functions_are_answered_in_words_at_once(course, header, conclusion, says):
    feedback = ex.check_header(course, header, "worse", conclusion)
    assert not feedback.passed and says in str(feedback)


def test_needle_sign_test_counts_needles_not_queries():
    """ex4's check compares first-hit ranks with the engine's needle-level test (evaluation.compare)."""
    from ragkit.evaluation import Result, compare

    a = np.array([1, 1, 0, 5, 0, 0])
    b = np.array([0, 0, 0, 0, 1, 0])
    needles = ("q1", "q2", "q3", "q1", "q2", "q3")
    ids = tuple(f"{n}/{i}" for i, n in enumerate(needles))
    t = compare(Result("A", "dense", a, ids, needles), Result("B", "dense", b, ids, needles), "Hit@4", "needle").test
    # per needle, phrasings found: a = (1, 1, 0), b = (0, 1, 0)
    assert (t.wins, t.losses) == (1, 0)


# ex5 -------------------------------------------------------------------------------------------------------------

DOCUMENT = """# Rate Limits for Hosted Model APIs

## Reacting to a 429 response

A request over the limit is rejected with HTTP status 429. Do not retry at once: wait, and double the wait after
every further rejection, up to a ceiling of about a minute.
"""


@pytest.mark.slow
def test_ex5_a_verbatim_sentence_is_not_yet(course):
    feedback = ex.check_own_document(course, DOCUMENT, "Do not retry at once: wait, and double the wait")
    assert not feedback.passed and "5 words in a row" in str(feedback)


@pytest.mark.slow
def test_ex5_a_question_refused_by_the_default_cut_is_not_yet(course):
    feedback = ex.check_own_document(course, DOCUMENT, "how do i renew my spanish passport")
    assert not feedback.passed and "nothing is under the default cut 0.675" in str(feedback)


SENTENCE = "Do not retry at once: wait, and double the wait after every further rejection, up to a ceiling of about"


def filler(text):
    return " ".join(w + (" really" if i % 4 == 3 else "") for i, w in enumerate(text.split()))


def shuffled(text):
    words = text.split()
    return " ".join(words[1::2] + words[::2])


@pytest.mark.parametrize("disguise", [filler, shuffled, accented, zero_width, lambda t: deleted(t).upper()])
@pytest.mark.slow
def test_ex5_a_copied_sentence_with_filler_shuffled_or_disguised_is_not_yet(course, disguise):
    feedback = ex.check_own_document(course, DOCUMENT, disguise(SENTENCE))
    assert not feedback.passed and "in other words" in str(feedback), str(feedback)
    if "copied_share" in feedback.numbers:
        assert f"(of {ex.EX5.sentence_words} or more distinctive words)" in str(feedback)


REWORDED = [
    "Don't retrying at once: waiting, and doubling the waiting after every furthers rejections, up to ceilings "
    "of about minutes",
    "Retrying at once? Don't: waits, doubled after each further rejections, ceilinged at about one minute",
    "Don't retry right away: pause, and double the pause after each additional refusal, up to a maximum of "
    "around a minute",
]


@pytest.mark.parametrize("question", REWORDED)
@pytest.mark.slow
def test_ex5_a_sentence_reworded_in_form_that_the_word_bag_misses_is_not_yet(course, question):
    assert ex.copied_sentence(question, DOCUMENT) is None and not ex.shared_runs(question, DOCUMENT)
    feedback = ex.check_own_document(course, DOCUMENT, question)
    assert not feedback.passed and f"closer than {ex.EX5.copy_distance}" in str(feedback), str(feedback)
    assert feedback.numbers["sentence_distance"] < ex.EX5.copy_distance


@pytest.mark.slow
def test_ex5_the_reworded_bound_lies_below_every_written_paraphrase_of_the_course(course):
    from ragkit.retrieval import cosine_distance

    retriever = course.retriever("E")
    kept = [q for q in course.questions if ex.copied_sentence(q.question, q.needle) is None]
    distance = np.diag(
        cosine_distance(retriever.embed([q.question for q in kept]), retriever.embed([q.needle for q in kept]))
    )
    assert len(kept) > 20 and distance.min() > ex.EX5.copy_distance + 0.05, distance.min()


@pytest.mark.slow
def test_ex5_a_document_about_a_course_topic_is_not_yet(course):
    document = (
        "# Notes on text pieces\n\n## Splitting words\n\nA tokenizer splits text into pieces from a fixed "
        "vocabulary. Byte pair encoding merges the most frequent pair of symbols again and again until the "
        "vocabulary reaches its planned size, so rare words end up as several pieces.\n"
    )
    question = "why is an uncommon name chopped into many bits by the tokenizer?"
    feedback = ex.check_own_document(course, document, question)
    assert not feedback.passed and feedback.numbers["top_document"] == "99-my-document"
    assert feedback.numbers["nearest_course"] <= ex.EX5.off_course
    assert f"farther than {ex.EX5.off_course}" in str(feedback)


@pytest.mark.slow
def test_ex5_the_off_course_bound_is_about_as_far_as_one_chapter_is_from_the_others(course):
    from ragkit.retrieval import cosine_distance

    retriever = course.retriever("E")
    distance = cosine_distance(retriever.vectors, retriever.vectors)
    docs = np.array([c.doc_id for c in retriever.chunks])
    distance[docs[:, None] == docs[None, :]] = np.inf
    assert abs(np.median(distance.min(axis=1)) - ex.EX5.off_course) < 0.02


@pytest.mark.parametrize("document, question", [(3, "why?"), (DOCUMENT, ["why"]), (b"# T\n## S\n", "why?")])
@pytest.mark.slow
def test_ex5_wrong_types_are_answered_in_words(course, document, question):
    feedback = ex.check_own_document(course, document, question)
    assert not feedback.passed and "make both text" in str(feedback)


# results ---------------------------------------------------------------------------------------------------------

VERBATIM = "Do not retry at once: wait, and double the wait"


def wrong_cut(course):
    qid, cut = destroyed(course, ex.own_size())[0]
    return qid, cut + 1


TRIED = {
    "ex1": lambda course: ex.check_destroyed_needle(course, *wrong_cut(course)),
    "ex2": lambda course: ex.check_threshold_choice(course, 1.0),
    "ex3": lambda course: ex.check_ticket_phrasings(course, {q.id: "zzz qqq" for q in course.questions[:5]}),
    "ex5": lambda course: ex.check_own_document(course, DOCUMENT, VERBATIM),
}


@pytest.mark.parametrize("exercise", TRIED)
@pytest.mark.slow
def test_hints_thin_out_after_many_attempts_in_every_check(course, results, exercise):
    seen = [bool(TRIED[exercise](course).hints) for _ in range(10)]
    assert seen == [True] * 5 + [True, False, False, True, False]
    assert seen == [i <= ex.HINTS.free or i % ex.HINTS.every == 0 for i in range(1, 11)]
    assert "a hint comes once every 3 attempts" in str(TRIED[exercise](course))


@pytest.mark.slow
def test_checks_record_student_attempts_and_numbers(course, results):
    ex.check_own_document(course, DOCUMENT, "Do not retry at once: wait, and double the wait")
    ex.check_own_document(course, DOCUMENT, "Do not retry at once: wait, and double the wait")
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert [(r["student"], r["attempt"], r["passed"]) for r in rows] == [("tester", 1, False), ("tester", 2, False)]
    assert rows[0]["exercise"] == "ex5" and rows[0]["numbers"] == {"copied_runs": 6} and "T" in rows[0]["time"]


@pytest.mark.slow
def test_an_unset_answer_is_not_recorded(course, results):
    ex.check_destroyed_needle(course, None, None)
    assert not results.exists()


@pytest.mark.slow
def test_an_unwritable_results_file_is_a_note_not_a_crash(course, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("RAGKIT_RESULTS", str(blocker / "results.jsonl"))
    feedback = ex.check_own_document(course, DOCUMENT, "Do not retry at once: wait, and double the wait")
    assert "was not recorded" in str(feedback) and "RAGKIT_RESULTS" in str(feedback)


def test_default_results_file_is_in_the_home_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("RAGKIT_RESULTS")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert ex.results_path() == tmp_path / ".ragkit" / "results.jsonl"


def test_class_report_three_students_one_corrupt_line(tmp_path, capsys):
    from ragkit.__main__ import main

    def write(name, rows, extra=""):
        path = tmp_path / "class" / f"{name}.jsonl"
        path.parent.mkdir(exist_ok=True)
        path.write_text(
            "".join(json.dumps({"exercise": e, "student": name, "passed": p, "attempt": 1}) + "\n" for e, p in rows)
            + extra
        )
        return path

    write("ana", [("ex1", False), ("ex1", True), ("ex2", True)])
    write("ben", [("ex3", False), ("ex3", False)], extra='{"exercise": "ex4", "student": "ben", "pass\n')
    chloe = write("chloe", [("ex5", True)])
    out_csv = tmp_path / "out.csv"
    assert main(["class-report", str(tmp_path / "class"), "--csv", str(out_csv)]) == 0
    out = capsys.readouterr().out
    print(out)
    lines = out.splitlines()
    assert lines[0].split() == ["student", "ex1", "ex2", "ex3", "ex4", "ex5", "ex6", "ex7"]
    assert lines[1].split() == ["ana", "yes", "(2)", "yes", "(1)", "-", "-", "-", "-", "-"]
    assert lines[2].split() == ["ben", "-", "-", "not", "yet", "(2)", "-", "-", "-", "-"]
    assert lines[3].split() == ["chloe", "-", "-", "-", "-", "yes", "(1)", "-", "-"]
    assert f"{tmp_path / 'class' / 'ben.jsonl'}:3:" in out and "1 line(s) skipped" in out and "6 results read" in out
    assert out_csv.read_text().splitlines()[1] == "ana,yes (2),yes (1),-,-,-,-,-"
    assert reports.class_report([chloe]).rows() == [
        {"student": "chloe", "ex1": "-", "ex2": "-", "ex3": "-", "ex4": "-", "ex5": "yes (1)", "ex6": "-", "ex7": "-"}
    ]


def test_class_report_on_a_missing_path_says_what_to_give(tmp_path, capsys):
    from ragkit.__main__ import main

    assert main(["class-report", str(tmp_path / "nope")]) == 1
    assert "neither a results file nor a folder" in capsys.readouterr().err


# hostile results files: class-report and the checks read and write what students control ---------------------

ROOT_USER = os.geteuid() == 0


@contextlib.contextmanager
def deadline(seconds=30):
    """Fail instead of hanging (a FIFO read blocks forever)."""

    def stop(*_):
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def line(student="ana", exercise="ex1", passed=True, **more):
    return json.dumps({"exercise": exercise, "student": student, "passed": passed, **more}) + "\n"


def test_class_report_survives_nesting_fifos_devices_sparse_and_unreadable_files(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ana.jsonl").write_text(
        line()
        + "[" * 8000
        + "\n"
        + '{"a":' * 2500
        + "1"
        + "}" * 2500
        + "\n"
        + line(exercise="ex2")
        + "x" * (untrusted.MAX_LINE + 1)
        + "\n"
    )
    os.mkfifo(folder / "ben.jsonl")
    with open(folder / "sparse.jsonl", "wb") as f:
        f.truncate(5 * 2**30)  # a 5 GB file of holes: no disk used, and not read either
    (folder / "locked.jsonl").write_text(line("locked"))
    (folder / "locked.jsonl").chmod(0)
    if ROOT_USER:
        os.mknod(folder / "device.jsonl", stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero's numbers
    deep = folder.joinpath(*["d"] * 300)
    deep.mkdir(parents=True)
    (deep / "deep.jsonl").write_text(line("deep"))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 150)  # the tree is deeper than the stack has room for
    try:
        with deadline():
            report = reports.class_report([folder])
    finally:
        sys.setrecursionlimit(limit)
    text = "\n".join(report.skipped)
    assert report.rows()[0]["student"] == "ana" and report.cells["ana", "ex1"] == (True, 1)
    assert report.cells["ana", "ex2"] == (True, 1) and "deep" not in report.students
    assert "ana.jsonl:2: nested 8000 deep" in text and "ana.jsonl:3: nested 2500 deep" in text
    assert f"ana.jsonl:5: a line of {untrusted.MAX_LINE + 1:,} bytes" in text
    assert "ben.jsonl: file not read (not a regular file" in text
    assert "sparse.jsonl: file not read (5,368,709,120 bytes, more than" in text
    assert f"more than {untrusted.MAX_DEPTH} levels deep" in text
    if ROOT_USER:
        assert "device.jsonl: file not read (not a regular file" in text
    else:
        assert "locked.jsonl: file not read (Permission denied)" in text


def test_class_report_counts_by_file_or_owner_never_by_the_line(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ana.jsonl").write_text(line("ana") + line("ben", passed=True) + line("ana", exercise="ex2"))
    (folder / "ben.jsonl").write_text(line("ben", passed=False))
    (folder / "mallory.jsonl").symlink_to(folder / "ben.jsonl")  # ben's attempts twice, or as mallory's
    os.link(folder / "ana.jsonl", folder / "zed.jsonl")  # the same file under a second name
    report = reports.class_report([folder])
    assert report.cells == {("ana", "ex1"): (True, 1), ("ana", "ex2"): (True, 1), ("ben", "ex1"): (False, 1)}
    text = "\n".join(report.skipped)
    assert "ana.jsonl:2: claims to be 'ben''s, but the file is 'ana''s: not counted" in text
    assert "mallory.jsonl: file not read (a symbolic link, not followed)" in text
    assert "zed.jsonl: the same file as" in text and "ana.jsonl, read once" in text
    me = res.login(os.getuid())
    (tmp_path / "results.jsonl").write_text(line(me) + line("ana"))
    owned = reports.class_report([tmp_path / "results.jsonl"], name_by="owner")
    assert owned.students == [me] and owned.cells[me, "ex1"] == (True, 1)
    assert owned.skipped == (
        f"{tmp_path / 'results.jsonl'}:2: claims to be 'ana''s, but the file is {me!r}'s: not counted",
    )


def test_a_line_from_a_kernel_the_system_named_nobody_counts_for_its_files_student(tmp_path):
    """Binder's jovyan, Colab's root, a bare uid: one identity, so such a line is the file's student's, not dropped."""
    for n, nobody in enumerate(("jovyan", "root", "uid 1000")):
        (tmp_path / f"s{n}.jsonl").write_text(line(nobody) + line("ana", exercise="ex2"))
    report = reports.class_report([tmp_path])
    assert report.cells == {(f"s{n}", "ex1"): (True, 1) for n in range(3)}
    assert all("claims to be 'ana''s" in s for s in report.skipped) and len(report.skipped) == 3


def test_names_are_escaped_and_shortened_and_csv_cells_cannot_run(tmp_path, capsys):
    from ragkit.__main__ import main

    folder = tmp_path / "class"
    folder.mkdir()
    evil = '=HYPERLINK("x")\n\x1b[2J'
    (folder / f"{evil}.jsonl").write_text(line(evil))
    (folder / "ana.jsonl").write_text(line("M" * 10_000) + line("M" * 2_000_000))
    (folder / "@sum.jsonl").write_text(line("@sum"))
    out_csv = tmp_path / "out.csv"
    assert main(["class-report", str(folder), "--csv", str(out_csv)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b[2J" in out and '=HYPERLINK("x")\\n' in out
    assert "M" * 100 not in out and "(10,000 characters)" in out and "ana.jsonl:2: a line of 2,000,0" in out
    rows = out_csv.read_text().splitlines()
    assert rows[2].startswith("'@sum,") and rows[1].startswith('"\'=HYPERLINK(""x"")\\n')
    assert untrusted.spreadsheet_cell("-") == "-" and untrusted.spreadsheet_cell("-1+2") == "'-1+2"
    assert untrusted.spreadsheet_cell("+x") == "'+x" and untrusted.spreadsheet_cell("\tx") == "'\tx"


@pytest.mark.slow
def test_results_are_strict_json_written_and_read(course, results, tmp_path):
    feedback = ex.record("ex2", ex.Feedback(True, (), {"cut": float("nan"), "p": np.float64("inf"), "n": np.int64(3)}))
    assert feedback.notes == ()
    row = json.loads(results.read_text(), parse_constant=lambda c: pytest.fail(f"{c} written"))
    assert row["numbers"] == {"cut": None, "p": None, "n": 3}
    (tmp_path / "nan.jsonl").write_text('{"exercise": "ex1", "passed": true, "score": NaN}\n')
    assert "NaN is not JSON" in reports.class_report([tmp_path / "nan.jsonl"]).skipped[0]


@pytest.mark.slow
def test_kernel_names_a_jovyan_student_by_the_hub_and_a_uid_without_passwd_still_works(course, results, monkeypatch):
    monkeypatch.delenv("RAGKIT_STUDENT")
    monkeypatch.setattr(res, "login", lambda uid: "jovyan")
    monkeypatch.setenv("JUPYTERHUB_USER", "ana")
    ana = (ex.current_student(), ex.own_size())
    monkeypatch.setenv("JUPYTERHUB_USER", "ben")
    assert ana[0] == "ana" and ex.current_student() == "ben" and ex.own_size() == ex.own_size("ben")
    assert ex.own_size("ana") == ana[1]
    monkeypatch.undo()
    monkeypatch.setenv("RAGKIT_RESULTS", str(results))
    monkeypatch.delenv("RAGKIT_STUDENT", raising=False)
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    monkeypatch.setattr(res, "_student", None)

    def no_entry(uid):
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    monkeypatch.setattr(getpass, "getuser", lambda: no_entry(os.getuid()))
    assert ex.current_student() == f"uid {os.getuid()}"
    ex.check_own_document(course, DOCUMENT, "Do not retry at once: wait, and double the wait")
    assert json.loads(results.read_text())["student"] == f"uid {os.getuid()}"
    monkeypatch.setenv("JUPYTERHUB_USER", "chloe")
    assert ex.current_student() == "chloe"


@pytest.mark.slow
def test_a_planted_fifo_link_or_someone_elses_file_is_refused_not_written(course, tmp_path, monkeypatch):
    target = tmp_path / "shared" / "tester.jsonl"
    target.parent.mkdir()
    monkeypatch.setenv("RAGKIT_RESULTS", str(target))
    os.mkfifo(target)
    with deadline():
        feedback = ex.check_own_document(course, DOCUMENT, "Do not retry at once: wait, and double the wait")
    assert "was not recorded" in str(feedback) and "not a regular file" in str(feedback)
    target.unlink()
    (tmp_path / "elsewhere.jsonl").write_text("")
    target.symlink_to(tmp_path / "elsewhere.jsonl")
    feedback = ex.check_own_document(course, DOCUMENT, "Do not retry at once: wait, and double the wait")
    assert "symbolic link" in str(feedback) and (tmp_path / "elsewhere.jsonl").read_text() == ""
    if ROOT_USER:
        target.unlink()
        target.write_text(line("tester", exercise="ex5"))
        os.chown(target, 12345, 12345)
        feedback = ex.check_own_document(course, DOCUMENT, "Do not retry at once: wait, and double the wait")
        assert "belongs to uid 12345, not to you" in str(feedback) and len(target.read_text().splitlines()) == 1


def test_one_identity_student_can_only_agree_with_the_name_the_system_gives(monkeypatch):
    """Where the system names the student (the grader's RAGKIT_STUDENT, a login, a hub user), student() agrees or
    refuses: a typed name would give another's ex1 window and results lines the teacher's report drops."""
    assert ex.student("tester") == "tester" and ex.current_student() == "tester"  # RAGKIT_STUDENT, set by the fixture
    with pytest.raises(InputError, match=r"already names you 'tester' .RAGKIT_STUDENT."):
        ex.student("ada")
    assert ex.current_student() == "tester" and ex.own_size() == ex.own_size("tester")
    monkeypatch.delenv("RAGKIT_STUDENT")
    monkeypatch.setattr(res, "login", lambda uid: "bob")  # a login on a shared server (/home/bob)
    with pytest.raises(InputError, match=r"already names you 'bob' .your login."):
        ex.student("ada")
    assert ex.current_student() == "bob"
    monkeypatch.setattr(res, "login", lambda uid: "jovyan")  # a hub's shared login: the hub's user name names
    monkeypatch.setenv("JUPYTERHUB_USER", "chloe")
    with pytest.raises(InputError, match="this hub's user name"):
        ex.student("ada")
    for nobody in ("jovyan", "root", f"uid {os.getuid()}"):  # Binder, Colab, a container's uid: nothing names anyone
        monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
        monkeypatch.setattr(res, "_student", None)
        monkeypatch.setattr(res, "login", lambda uid, name=nobody: name)
        assert ex.current_student() == nobody
        assert ex.student(" dana ") == "dana" and ex.current_student() == "dana"
        assert ex.own_size() == ex.own_size("dana")
        monkeypatch.setenv("RAGKIT_STUDENT", "erin")  # the grader's name for the notebook wins over the typed one
        assert ex.current_student() == "erin"
        monkeypatch.delenv("RAGKIT_STUDENT")
