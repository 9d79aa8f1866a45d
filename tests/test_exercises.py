"""The exercise checks cannot be gamed: every shortcut a student might try answers NOT YET, and results are recorded."""

import json

import numpy as np
import pytest

import ragkit.teach.course
from ragkit.chunking import SIZE, blind_window_start, chunk_corpus
from ragkit.evaluation import needle_hits
from ragkit.teach import exercises as ex


@pytest.fixture(scope="module")
def course():
    return ragkit.teach.course.load(progress=False)


@pytest.fixture(autouse=True)
def results(tmp_path, monkeypatch):
    path = tmp_path / "results.jsonl"
    monkeypatch.setenv("RAGKIT_RESULTS", str(path))
    monkeypatch.setenv("RAGKIT_STUDENT", "tester")
    monkeypatch.setattr(ex, "_student", None)
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


# ex2 -------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sweep(course):
    return course.sweep("E", "dense")


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


@pytest.mark.slow
def test_ex2_hint_points_towards_the_cheapest_cut(sweep):
    table = ex.cost_table(sweep)
    best = table.cut[table.tune == table.tune.min()]
    below, above = round(best.min() - 0.06, 3), round(best.max() + 0.2, 3)
    for cut, direction in ((below, "higher"), (above, "lower")):
        feedback = ex.check_threshold_choice(sweep, cut)
        assert not feedback.passed and f"try a {direction} one" in str(feedback), (cut, str(feedback))


@pytest.mark.slow
def test_ex2_a_cut_tuned_on_the_judging_queries_is_not_yet(sweep):
    table = ex.cost_table(sweep)
    limit = table.tune.min() + max(ex.TOLERANCE * table.tune.min(), 1)
    for column in ("judge", "all"):
        cut = float(table.cut[table[column].idxmin()])
        assert table.tune[table.cut == cut].item() > limit, "on this corpus the shortcut would be cheap anyway"
        assert not ex.check_threshold_choice(sweep, cut).passed


@pytest.mark.slow
def test_ex2_cheapest_tuning_cut_passes_and_is_judged_on_the_other_half(sweep):
    table = ex.cost_table(sweep)
    cut = float(table.cut[table.tune.idxmin()])
    feedback = ex.check_threshold_choice(sweep, cut)
    assert feedback.passed and "held-out half" in str(feedback)
    assert feedback.numbers["judge_cost"] == table.judge[table.cut == cut].item()


# ex3 -------------------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_ex3_dataset_tickets_and_course_questions_are_copies(course):
    picked = [q for q in course.questions if len(ex.shared_needle_words(q.ticket, q.needle)) <= ex.MAX_SHARED][:5]
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


def test_validate_warns_about_dataset_tickets_that_break_the_word_rule(capsys):
    from ragkit.__main__ import main

    assert main(["validate"]) == 0
    out = capsys.readouterr().out
    assert "WARNING q04" in out and "WARNING q05" in out and "ground truth is valid" in out
    assert len(ex.ticket_rule_breaches(ragkit.teach.course.load(progress=False).questions)) == out.count("WARNING")


# ex4 -------------------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_ex4_e_header_itself_is_not_yet(course):
    def same(title: str, section: str) -> str:
        return f"[{title} > {section}]" if section else f"[{title}]"

    assert "same as strategy E" in str(ex.check_header(course, same, "better"))


@pytest.mark.slow
def test_ex4_words_smuggled_in_per_section_are_not_yet(course):
    asked = {}
    for q in course.questions:
        for c in course.chunks("E"):
            if c.doc_id == q.doc_id and q.needle in c.content:
                asked[c.section] = q.question
    def stuffed(title: str, section: str) -> str:
        return f"[{title} > {section}] {asked.get(section, '')}"

    feedback = ex.check_header(course, stuffed, "better")
    assert not feedback.passed and "template" in str(feedback)


def crowding(title, section):
    """The solution's header: title and section twenty times over, filling the encoder's window."""
    return "[" + " > ".join([title, section or title] * 20) + "]"


@pytest.mark.slow
def test_ex4_a_conclusion_the_test_does_not_support_is_not_yet(course):
    feedback = ex.check_header(course, crowding, "better")
    assert not feedback.passed and "does not follow" in str(feedback)
    assert feedback.numbers["p"] < 0.05 and feedback.numbers["losses"] > feedback.numbers["wins"]
    assert ex.check_header(course, crowding, "worse").passed


@pytest.mark.slow
def test_ex4_no_detectable_difference_is_not_yet_even_when_said(course, monkeypatch):
    monkeypatch.setattr(ex, "needle_sign_test", lambda *args: ex.SignTest(3, 2, 1.0))
    for said in ("no detectable difference", "better", "worse"):
        feedback = ex.check_header(course, crowding, said)
        assert not feedback.passed and "measurably matters" in str(feedback)


def test_needle_sign_test_counts_needles_not_queries():
    a = np.array([1, 1, 0, 5, 0, 0])
    b = np.array([0, 0, 0, 0, 1, 0])
    t = ex.needle_sign_test(a, b, ["q1", "q2", "q3", "q1", "q2", "q3"], k=4)
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


# results ---------------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_checks_record_student_attempts_and_numbers(course, results):
    ex.check_own_document(course, DOCUMENT, "Do not retry at once: wait, and double the wait")
    ex.student("Ana")
    ex.check_own_document(course, DOCUMENT, "Do not retry at once: wait, and double the wait")
    ex.check_own_document(course, DOCUMENT, "Do not retry at once: wait, and double the wait")
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert [(r["student"], r["attempt"], r["passed"]) for r in rows] == [("tester", 1, False), ("Ana", 1, False),
                                                                         ("Ana", 2, False)]
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
        path.write_text("".join(json.dumps({"exercise": e, "student": name, "passed": p, "attempt": 1}) + "\n"
                                for e, p in rows) + extra)
        return path

    write("ana", [("ex1", False), ("ex1", True), ("ex2", True)])
    write("ben", [("ex3", False), ("ex3", False)], extra='{"exercise": "ex4", "student": "ben", "pass\n')
    chloe = write("chloe", [("ex5", True)])
    out_csv = tmp_path / "out.csv"
    assert main(["class-report", str(tmp_path / "class"), "--csv", str(out_csv)]) == 0
    out = capsys.readouterr().out
    print(out)
    lines = out.splitlines()
    assert lines[0].split() == ["student", "ex1", "ex2", "ex3", "ex4", "ex5"]
    assert lines[1].split() == ["ana", "yes", "(2)", "yes", "(1)", "-", "-", "-"]
    assert lines[2].split() == ["ben", "-", "-", "not", "yet", "(2)", "-", "-"]
    assert lines[3].split() == ["chloe", "-", "-", "-", "-", "yes", "(1)"]
    assert f"{tmp_path / 'class' / 'ben.jsonl'}:3:" in out and "1 line(s) skipped" in out and "6 results read" in out
    assert out_csv.read_text().splitlines()[1] == "ana,yes (2),yes (1),-,-,-"
    assert ex.class_report([chloe]).rows() == [{"student": "chloe", "ex1": "-", "ex2": "-", "ex3": "-", "ex4": "-",
                                                 "ex5": "yes (1)"}]


def test_class_report_on_a_missing_path_says_what_to_give(tmp_path, capsys):
    from ragkit.__main__ import main

    assert main(["class-report", str(tmp_path / "nope")]) == 1
    assert "neither a results file nor a folder" in capsys.readouterr().err
