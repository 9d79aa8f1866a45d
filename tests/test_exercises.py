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

import numpy as np
import pytest

import ragkit.teach.course
from ragkit import data
from ragkit.chunking import SIZE, blind_window_start, chunk_corpus
from ragkit.evaluation import needle_hits
from ragkit.teach import exercises as ex
from ragkit.teach import results as res


@pytest.fixture(scope="module")
def course():
    return ragkit.teach.course.load(progress=False)


@pytest.fixture(autouse=True)
def results(tmp_path, monkeypatch):
    path = tmp_path / "results.jsonl"
    monkeypatch.setenv("RAGKIT_RESULTS", str(path))
    monkeypatch.setenv("RAGKIT_STUDENT", "tester")
    monkeypatch.setattr(res, "_student", None)
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
    assert len(data.ticket_rule_breaches(ragkit.teach.course.load(progress=False).questions)) == out.count("WARNING")


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
    assert res.class_report([chloe]).rows() == [{"student": "chloe", "ex1": "-", "ex2": "-", "ex3": "-", "ex4": "-",
                                                 "ex5": "yes (1)"}]


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
    (folder / "ana.jsonl").write_text(line() + "[" * 8000 + "\n" + '{"a":' * 2500 + "1" + "}" * 2500 + "\n"
                                      + line(exercise="ex2") + "x" * (res.MAX_LINE + 1) + "\n")
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
            report = res.class_report([folder])
    finally:
        sys.setrecursionlimit(limit)
    text = "\n".join(report.skipped)
    assert report.rows()[0]["student"] == "ana" and report.cells["ana", "ex1"] == (True, 1)
    assert report.cells["ana", "ex2"] == (True, 1) and "deep" not in report.students
    assert "ana.jsonl:2: nested 8000 deep" in text and "ana.jsonl:3: nested 2500 deep" in text
    assert f"ana.jsonl:5: a line of {res.MAX_LINE + 1:,} bytes" in text
    assert "ben.jsonl: file not read (not a regular file" in text
    assert "sparse.jsonl: file not read (5,368,709,120 bytes, more than" in text
    assert f"more than {res.MAX_DEPTH} levels deep" in text
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
    report = res.class_report([folder])
    assert report.cells == {("ana", "ex1"): (True, 1), ("ana", "ex2"): (True, 1), ("ben", "ex1"): (False, 1)}
    text = "\n".join(report.skipped)
    assert "ana.jsonl:2: claims to be 'ben''s, but the file is 'ana''s: not counted" in text
    assert "mallory.jsonl: file not read (a symbolic link, not followed)" in text
    assert "zed.jsonl: the same file as" in text and "ana.jsonl, read once" in text
    me = res.login(os.getuid())
    (tmp_path / "results.jsonl").write_text(line(me) + line("ana"))
    owned = res.class_report([tmp_path / "results.jsonl"], name_by="owner")
    assert owned.students == [me] and owned.cells[me, "ex1"] == (True, 1)
    assert owned.skipped == (f"{tmp_path / 'results.jsonl'}:2: claims to be 'ana''s, but the file is {me!r}'s: "
                             "not counted",)


def test_names_are_escaped_and_shortened_and_csv_cells_cannot_run(tmp_path, capsys):
    from ragkit.__main__ import main

    folder = tmp_path / "class"
    folder.mkdir()
    evil = "=HYPERLINK(\"x\")\n\x1b[2J"
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
    assert res.spreadsheet_cell("-") == "-" and res.spreadsheet_cell("-1+2") == "'-1+2"
    assert res.spreadsheet_cell("+x") == "'+x" and res.spreadsheet_cell("\tx") == "'\tx"


def test_results_are_strict_json_written_and_read(course, results, tmp_path):
    feedback = ex.record("ex2", ex.Feedback(True, (), {"cut": float("nan"), "p": np.float64("inf"), "n": np.int64(3)}))
    assert feedback.notes == ()
    row = json.loads(results.read_text(), parse_constant=lambda c: pytest.fail(f"{c} written"))
    assert row["numbers"] == {"cut": None, "p": None, "n": 3}
    (tmp_path / "nan.jsonl").write_text('{"exercise": "ex1", "passed": true, "score": NaN}\n')
    assert "NaN is not JSON" in res.class_report([tmp_path / "nan.jsonl"]).skipped[0]


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
