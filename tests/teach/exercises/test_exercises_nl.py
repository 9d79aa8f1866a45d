"""Every exercise's check speaks Dutch in a Dutch kernel: its notes, hints and verdict words, with the English figures,
the same verdict and the same numbers recorded (issue 49). What the exercises' notebooks narrate does too."""

import ast
import itertools
import os
import re
import sys
from pathlib import Path

import pytest

import ragkit.teach.course
from ragkit.chunking import SIZE, blind_window_start, chunk_corpus
from ragkit.evaluation import needle_hits
from ragkit.statistics import SignTest
from ragkit.teach import exercises as ex
from ragkit.teach import language
from ragkit.teach.exercises import ex4_header
from ragkit.teach.exercises import results as res

from conftest import ROOT

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/teach: test_language's helpers, shared with the pilot
from test_language import assert_dutch, both

CALLS = itertools.count()
QUOTED_LINES = re.compile(r"^> .*$", re.M)
SOLUTIONS = ROOT / "notebooks" / "twins" / "solutions"


@pytest.fixture(scope="module")
def course():
    return ragkit.teach.course.load(progress=False)


@pytest.fixture(autouse=True)
def a_fresh_kernel(tmp_path, monkeypatch):
    """Each test a kernel of its own: English at first, a results file of its own, ex4's direction not yet locked."""
    monkeypatch.setenv("RAGKIT_RESULTS", str(tmp_path / "results.jsonl"))
    monkeypatch.setenv("RAGKIT_STUDENT", "tester")
    monkeypatch.setattr(res, "_student", None)
    monkeypatch.setattr(ex4_header, "_STATED", {})
    with language.speaking("en"):
        yield


def solution(name: str, variable: str) -> object:
    """The value the worked solution assigns to ``variable`` (a literal), read from its twin."""
    tree = ast.parse((SOLUTIONS / name).read_text(encoding="utf-8"))
    return next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == variable for t in node.targets)
    )


def checked(check) -> tuple[object, object]:
    """A check run in an English kernel and in a Dutch one, each with a fresh ex4 lock: (English, Dutch) feedback."""
    out = []
    for spoken in ("en", "nl"):
        ex4_header._STATED.clear()
        # a results file of its own: a check's note counts the attempts in its file
        os.environ["RAGKIT_RESULTS"] = str(Path(os.environ["RAGKIT_RESULTS"]).parent / f"{next(CALLS)}.jsonl")
        with language.speaking(spoken):
            out.append(check())
    return out[0], out[1]


def assert_check_dutch(check, name: str, passed: bool) -> None:
    """The check's feedback, its text as a student reads it included: Dutch, with the English figures and verdict."""
    english, dutch = checked(check)
    assert english.passed == dutch.passed == passed, f"{name}: {english}"
    assert english.numbers == dutch.numbers, name
    assert (len(english.notes), len(english.hints)) == (len(dutch.notes), len(dutch.hints)), name
    for a, b in zip(english.notes + english.hints, dutch.notes + dutch.hints):
        assert_dutch(a, b, name)
    with language.speaking("nl"):
        text = str(dutch)
    assert text.startswith("GESLAAGD" if passed else "NOG NIET"), text
    assert "- tip: " in text or not dutch.hints, text


def destroyed(course, size):
    hits = needle_hits(chunk_corpus(course.corpus, "A", size=size), course.questions).any(axis=1)
    for q, carried in zip(course.questions, hits):
        if not carried:
            doc = course.corpus[q.doc_id]
            start = doc.text.find(q.needle)
            return q.id, start, blind_window_start(doc, start + len(q.needle) - 1, size)
    raise AssertionError(f"no needle destroyed at {size}")


@pytest.mark.slow
def test_ex1s_check_speaks_dutch(course):
    mine = ex.own_size()
    qid, start, cut = destroyed(course, mine)
    survivor = next(
        q.id
        for q, carried in zip(
            course.questions, needle_hits(chunk_corpus(course.corpus, "A", size=mine), course.questions).any(axis=1)
        )
        if carried
    )
    cases = {
        "no answer yet": (lambda: ex.check_destroyed_needle(course, None, None), False),
        "the course's size": (lambda: ex.check_destroyed_needle(course, qid, cut, size=SIZE), False),
        "wrong types": (lambda: ex.check_destroyed_needle(course, 7, "1536"), False),
        "no such question": (lambda: ex.check_destroyed_needle(course, "q99", cut), False),
        "a needle that survives": (lambda: ex.check_destroyed_needle(course, survivor, cut), False),
        "the cut before the needle": (lambda: ex.check_destroyed_needle(course, qid, max(0, start - 1)), False),
        "the cut inside it": (lambda: ex.check_destroyed_needle(course, qid, start + 1), False),
        "right": (lambda: ex.check_destroyed_needle(course, qid, cut), True),
    }
    for name, (check, passed) in cases.items():
        assert_check_dutch(check, f"ex1 {name}", passed)
    _english, dutch = checked(lambda: ex.check_destroyed_needle(course, qid, cut))
    assert (
        dutch.notes[0].startswith(f"de needle van {qid} loopt van teken {start} tot")
        and "recall-ceiling" in dutch.notes[1]
    )


@pytest.mark.slow
def test_ex3s_check_speaks_dutch(course):
    tickets = solution("ex3-ticket-phrasings.py", "my_tickets")
    assert isinstance(tickets, dict)
    first = course.questions[0]
    copied = {**dict(list(tickets.items())[:4]), first.id: first.ticket}
    cases = {
        "no tickets yet": ({}, False),
        "not a dict": (["q01", "q02"], False),
        "wrong entries": ({1: "x", "q01": 3, "q99": "my loss explodes"}, False),
        "four tickets, one a copy, one of no real words": (
            {**dict(list(copied.items())[1:4]), first.id: first.ticket},
            False,
        ),
        "a dataset ticket": (copied, False),
        "nonsense": ({q.id: "zzq xxv wwk" for q in course.questions[:5]}, False),
        "the needle's words": ({q.id: q.needle for q in course.questions[:5]}, False),
        "not asking for the needle": ({q.id: "error problem issue broken wrong" for q in course.questions[:5]}, False),
        "the solution": (tickets, True),
    }
    for name, (given, passed) in cases.items():
        assert_check_dutch(lambda given=given: ex.check_ticket_phrasings(course, given), f"ex3 {name}", passed)
    assert_dutch(*both(lambda: str(ex.EX3)), "EX3's rules")
    english, dutch = both(lambda: " | ".join(ex.ticket_measures(course, tickets).columns))
    assert "needle's rank" in english and "rang van de needle" in dutch and "needle's rank" not in dutch
    english, dutch = both(lambda: ex.ticket_measures(course, tickets)._repr_html_())
    shares = ex.ticket_measures(course, tickets).iloc[:, 1]
    assert all(f"{s:.2f}".rstrip("0") in english for s in shares if s % 1)
    assert not any(f">{s}<" in dutch for s in shares if s % 1)  # 0,25 in Dutch, never 0.25


def sentence(title, section):
    return f"This passage comes from the section {section or 'introduction'} of the chapter {title}."


def crowding(section: str):
    """A header that fills the window for one section (one without figures: its name is quoted as it is)."""
    return lambda title, s: " ".join([title, s] * (20 if s == section else 1))


@pytest.mark.slow
def test_ex4s_check_speaks_dutch(course, monkeypatch):
    """The measurement is stood in for (the needle-level test is given): what is said about it is what is tested."""
    test = SignTest(9, 3, 0.146)
    monkeypatch.setattr(ex4_header, "_header_test", lambda course, chunks, headers: ([], None, test, ()))
    truth = "inconclusive, same direction"
    plain = next(c.section for c in course.chunks("E") if c.section and not re.search(r"\d", c.section + c.doc_title))
    pieces = lambda title, section: f"{title} {section} {'alpha' if 'a' in section else 'beta'}"  # noqa: E731
    cases = {
        "nothing yet": (lambda: ex.check_header(course, None, None, None), False),
        "wrong types": (lambda: ex.check_header(course, "header", 3, "consistent"), False),
        "no direction": (lambda: ex.check_header(course, sentence, "higher", truth), False),
        "none stated first": (lambda: ex.check_header(course, sentence, "better", truth, stated=""), False),
        "another stated first": (lambda: ex.check_header(course, sentence, "better", truth, stated="worse"), False),
        "not a function": (lambda: ex.check_header(course, "header", "better", truth), False),
        "raises": (lambda: ex.check_header(course, lambda t, s: 1 / 0, "better", truth), False),
        "returns no text": (lambda: ex.check_header(course, lambda t, s: 42, "better", truth), False),
        "E's own": (
            lambda: ex.check_header(course, lambda t, s: f"[{t} > {s}]\n" if s else f"[{t}]\n", "better", truth),
            False,
        ),
        "says nothing of its section": (
            lambda: ex.check_header(course, lambda t, s: "a passage", "better", truth),
            False,
        ),
        "fills the window": (lambda: ex.check_header(course, crowding(plain), "better", truth), False),
        "words per section": (lambda: ex.check_header(course, pieces, "better", truth), False),
        "the wrong verdict": (lambda: ex.check_header(course, sentence, "better", "consistent"), False),
        "the right verdict": (lambda: ex.check_header(course, sentence, "better", truth), True),
    }
    for name, (check, passed) in cases.items():
        assert_check_dutch(check, f"ex4 {name}", passed)
    english, dutch = checked(lambda: ex.check_header(course, sentence, "better", truth))
    assert "nulresultaat" in dutch.notes[-1] and "'onbeslist, zelfde richting'" in dutch.notes[-1]
    assert f"'{truth}'" in english.notes[-1] and "'inconclusive" not in " ".join(dutch.notes)  # the verdict in Dutch
    assert "'better'" in english.notes[0] and "je verwachtte 'beter'" in dutch.notes[0]
    from ragkit.teach.lesson import narrate

    shown = both(
        lambda: narrate.conclusion(truth).data + narrate.header_measured(test, "hit@20", 0.5, 0.5, "better", truth).data
    )
    assert "inconclusive, same direction" in shown[0] and "'better'" in shown[0]
    assert "onbeslist, zelfde richting" in shown[1] and "'beter'" in shown[1] and "inconclusive" not in shown[1]
    run = ex.HeaderRun("better", test, notes=("a note",))
    assert_dutch(*both(lambda: str(run).splitlines()[0]), "HeaderRun")
    english, dutch = checked(lambda: ex.measure_header(course, sentence, "higher"))
    assert_dutch(english.notes[0], dutch.notes[0], "measure_header without a direction")


@pytest.mark.slow
def test_ex5s_check_speaks_dutch(course):
    document = solution("ex5-cite-your-own-document.py", "my_document")
    question = solution("ex5-cite-your-own-document.py", "my_question")
    assert isinstance(document, str) and isinstance(question, str)
    body = [line for line in document.splitlines() if len(line.split()) > 12]
    copied = " ".join(body[0].split()[:8])
    about_the_course = (
        "# Notes on text pieces\n\n## Splitting words\n\nA tokenizer splits text into pieces from a "
        "fixed vocabulary. Byte pair encoding merges the most frequent pair of symbols again and again "
        "until the vocabulary reaches its planned size, so rare words end up as several pieces.\n"
    )
    rate_limits = (
        "# Rate Limits for Hosted Model APIs\n\n## Reacting to a 429 response\n\nA request over the limit "
        "is rejected with HTTP status 429. Do not retry at once: wait, and double the wait after every "
        "further rejection, up to a ceiling of about a minute.\n"
    )
    cases = {
        "nothing yet": (None, None, False),
        "wrong types": (["# Title"], 3, False),
        "too long": ("# T\n\n## S\n\n" + "word " * 6_001, "a question", False),
        "no title": ("no title here", "a question about it", False),
        "five words copied": (document, copied, False),
        "refused by the cut": (document, "how do i renew my spanish passport", False),
        "a sentence with filler": (
            rate_limits,
            "Do not retry at really once: wait, and really double the wait after really every further rejection",
            False,
        ),
        "a sentence reworded": (
            rate_limits,
            "Don't retry right away: pause, and double the pause after each "
            "additional refusal, up to a maximum of around a minute",
            False,
        ),
        "a course topic": (about_the_course, "why is an uncommon name chopped into many bits by the tokenizer?", False),
        "the solution": (document, question, True),
    }
    for name, (doc, asked, passed) in cases.items():
        assert_check_dutch(
            lambda doc=doc, asked=asked: ex.check_own_document(course, doc, asked), f"ex5 {name}", passed
        )
    assert_dutch(*both(lambda: str(ex.EX5)), "EX5's rules")
    english, dutch = checked(lambda: ex.check_own_document(course, document, question))
    truncated = [(a, b) for a, b in zip(english.notes, dutch.notes) if "texts exceed the encoder" in a]
    assert truncated, "the solution's corpus has chunks over the window: the note that says so is gone"
    assert all(b.startswith("let op: ") and "van de" in b and "exceed" not in b for _a, b in truncated), truncated


def test_the_students_name_and_the_results_file_answer_in_dutch(tmp_path, monkeypatch):
    from ragkit.errors import InputError

    def refused(call) -> str:
        try:
            call()
        except InputError as exc:
            return str(exc)
        raise AssertionError("not refused")

    english, dutch = both(lambda: refused(lambda: ex.student("someone else")))
    assert english.startswith("this machine already names you 'tester' (RAGKIT_STUDENT)")
    assert dutch.startswith("deze machine noemt je al 'tester' (RAGKIT_STUDENT)")
    assert_dutch(*both(lambda: refused(lambda: ex.student(" "))), "student without a name")
    (tmp_path / "elsewhere.jsonl").write_text("")
    os.symlink(tmp_path / "elsewhere.jsonl", tmp_path / "linked.jsonl")
    monkeypatch.setenv("RAGKIT_RESULTS", str(tmp_path / "linked.jsonl"))
    english, dutch = both(lambda: ex.record("ex1", ex.Feedback(False)).notes[-1])
    assert "is a symbolic link" in english and "is een symbolische link" in dutch


@pytest.mark.slow
def test_the_exercises_narrators_speak_dutch(course, monkeypatch):
    from ragkit.teach.exercises import cost_table, threshold_halves
    from ragkit.teach.lesson.narrate import exercises as narrate

    mine = ex.own_size()
    carried = needle_hits(chunk_corpus(course.corpus, "A"), course.questions).any(axis=1)
    at_mine = needle_hits(chunk_corpus(course.corpus, "A", size=mine), course.questions).any(axis=1)
    tune, _judge = threshold_halves(course.sweep("E", "dense"))
    ev = course.evaluation("CE")
    cases = {
        "destroyed_at_size": lambda: narrate.destroyed_at_size(carried, at_mine, mine),
        "window_owner, named by the system": lambda: narrate.window_owner(mine),
        "cheapest_cuts": lambda: narrate.cheapest_cuts(cost_table(tune), tune),
        "header_duel": lambda: narrate.header_duel(ev),
        "header_room": lambda: narrate.header_room(ev, len(course.questions)),
    }
    for name, render in cases.items():
        assert_dutch(*both(render), name)
    # the needle and the ticket are the corpus's words, quoted as they are: the sentence around them is Dutch
    english, dutch = (QUOTED_LINES.sub("", text) for text in both(lambda: narrate.ticket_words(course.questions[0])))
    assert_dutch(english, dutch, "ticket_words")
    monkeypatch.delenv("RAGKIT_STUDENT")
    monkeypatch.setattr(res, "system_student", lambda: None)
    assert_dutch(*both(lambda: narrate.window_owner(mine)), "window_owner, named by nobody")
    monkeypatch.setattr(res, "_student", "ada")
    assert_dutch(*both(lambda: narrate.window_owner(mine)), "window_owner, named by student()")


def test_a_truncation_counted_before_embedding_is_a_dutch_note_whole():
    """Both kinds of the encoder's truncation warning become a note in the kernel's language from their counts (the
    kind counted before embedding came out as a Dutch 'let op:' before an English sentence)."""
    from ragkit.teach.exercises.feedback import truncation_note
    from ragkit.tokens import TruncationWarning

    with language.speaking("nl"):
        notes = [truncation_note(TruncationWarning(3, 10, 256, embedding=e)) for e in (True, False)]
    for note in notes:
        assert note.startswith("let op: 3 van de 10 ") and "256 word-pieces" in note, note
        assert not any(word in note for word in ("longer", "exceed", "window", "chunks are")), note
    with language.speaking("en"):
        counted = truncation_note(TruncationWarning(3, 10, 256, embedding=False))
    assert counted == "note: " + str(TruncationWarning(3, 10, 256, embedding=False))


def test_ex4_reads_the_dutch_editions_words_whatever_the_kernel_speaks():
    """A Dutch student writes 'beter' and 'onbeslist, zelfde richting'; a teacher grading in English reads the same."""
    from ragkit.teach import language
    from ragkit.teach.exercises import ex4_header as ex4

    for spoken in language.LANGUAGES:
        with language.speaking(spoken):
            assert ex4._direction("Beter") == "better" and ex4._direction("slechter") == "worse"
            assert ex4._direction("better") == "better" and ex4._direction("misschien") is None
            assert ex4._verdict_said("Onbeslist,  zelfde richting") == "inconclusive, same direction"
            assert ex4._verdict_said("in tegenspraak") == "contradicts"
            assert ex4._verdict_said("inconclusive ,same direction") == "inconclusive, same direction"
