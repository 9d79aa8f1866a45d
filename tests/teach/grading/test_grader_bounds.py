"""Judging is bounded (in time; ex5's document in words), lends only to ex4, leaves the teacher's cache alone."""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
import time
import uuid
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import ragkit.teach.course
from ragkit.embedding import default_embedder
from ragkit.plumbing.cache import CACHE_FILE, VectorCache
from ragkit.teach.exercises import ex5_own_document
from ragkit.teach.exercises.feedback import Feedback
from ragkit.teach.grading import answers as declared
from ragkit.teach.grading import grader as grading
from ragkit.teach.grading import handed_in, judging
from ragkit.teach.grading.isolation import Isolation
from ragkit.teach.grading.sandbox import SandboxRun, snapshot_cache
from ragkit.words import words

EX5 = "ex5-cite-your-own-document.ipynb"
DOCUMENT = (
    "# Beekeeping in a city\n\n## Where the hives stand\n\nHives on a flat roof need shade at noon, water "
    "within a short flight and shelter from the wind; a neighbour's consent saves a quarrel in June.\n"
)


@pytest.fixture(scope="module")
def course():
    return ragkit.teach.course.load(progress=False)


def _ex5(document: str, question: str = "What does a roof need before bees can live on it?") -> SandboxRun:
    return SandboxRun(
        answers=json.dumps({"my_document": {"value": document}, "my_question": {"value": question}}), seconds=1.0
    )


# Judging has a time bound; ex5's document a bound in words


def test_a_check_past_its_time_bound_is_not_run_with_the_reason(course, monkeypatch):
    started = threading.Event()

    def slow(course, student, answers):
        started.set()
        time.sleep(5)
        return Feedback(True, ("too late to count",))

    monkeypatch.setitem(declared.TABLE, "ex5", replace(declared.TABLE["ex5"], judge=slow))
    monkeypatch.setattr(judging, "JUDGING", 0.2)
    late: list[threading.Thread] = []
    g = judging.judged(handed_in.Submission("bo", "ex5", Path(EX5)), _ex5(DOCUMENT), course, late)
    assert started.is_set()
    assert (g.grade, g.reason) == ("not run", "its check took longer than 0.2 s")
    assert g.seconds == 1.0 and len(late) == 1  # the grader knows which check still runs, to wait for it at the end


def test_a_check_within_its_bound_gives_its_grade_and_its_errors_stay_not_yet(course, monkeypatch):
    def fails(course, student, answers):
        raise ValueError("cannot judge")

    monkeypatch.setitem(declared.TABLE, "ex5", replace(declared.TABLE["ex5"], judge=fails))
    g = judging.judged(handed_in.Submission("bo", "ex5", Path(EX5)), _ex5(DOCUMENT), course)
    assert g.grade == "not yet" and "ValueError: cannot judge" in g.reason


def test_a_huge_ex5_document_is_refused_by_its_words_before_anything_is_embedded(course, monkeypatch, tmp_path):
    def embeds(*args, **kwargs):
        raise AssertionError("the document was embedded")

    monkeypatch.setattr(ex5_own_document, "reworded_sentence", embeds)
    monkeypatch.setattr(ex5_own_document, "embedded", embeds)
    monkeypatch.setenv("RAGKIT_RESULTS", str(tmp_path / "results.jsonl"))
    section = "Bees fan the comb at dusk and the queen lays her eggs in spring while the workers forage.\n\n"
    huge = "# Bees\n\n## Hives\n\n" + section * (ex5_own_document.MAX_WORDS // len(section.split()) + 1)
    assert len(huge) <= declared.MAX_TEXT  # a document the grader reads: the check's bound is what refuses it
    g = judging.judged(handed_in.Submission("bo", "ex5", Path(EX5)), _ex5(huge), course)
    assert g.grade == "not yet", g
    assert (
        f"the document has {len(words(huge)):,} words and {len(huge):,} characters; at most "
        f"{ex5_own_document.MAX_WORDS:,} words" in g.reason
    )
    wide = "# Bees\n\n## Hives\n\n" + "x" * (ex5_own_document.MAX_CHARACTERS + 1)  # few words, many characters
    g = judging.judged(handed_in.Submission("bo", "ex5", Path(EX5)), _ex5(wide), course)
    assert g.grade == "not yet" and f"and {ex5_own_document.MAX_CHARACTERS:,} characters are checked" in g.reason


def test_the_word_bound_lets_a_document_as_long_as_a_course_chapter_through(course):
    longest = max(course.corpus.documents, key=lambda d: len(words(d.text)))
    assert len(words(longest.text)) <= ex5_own_document.MAX_WORDS
    assert 2 * max(len(d.text) for d in course.corpus.documents) <= ex5_own_document.MAX_CHARACTERS


# Lent and judged vectors go to a throwaway cache; only ex4's runs get a lending socket


def _rows(cache: Path) -> int:
    with sqlite3.connect(f"file:{cache / CACHE_FILE}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT count(*) FROM vectors").fetchone()[0]


def _files(cache: Path) -> dict[str, tuple[int, int]]:
    """Size and mtime of the database and its WAL (the -shm file is readers' bookkeeping, touched by any reader)."""
    return {
        p.name: (p.stat().st_size, p.stat().st_mtime_ns)
        for p in cache.iterdir()
        if p.name in (CACHE_FILE, f"{CACHE_FILE}-wal")
    }


@pytest.fixture
def teacher(tmp_path, monkeypatch):
    """A teacher's cache holding the course's vectors and model (a copy of this checkout's), the bundled embedder's.

    Opened as the teacher's is (WAL and all) before the test takes its sizes and times."""
    folder = tmp_path / "teacher-cache"
    folder.mkdir()
    embedder = default_embedder()
    real = embedder.cache.private
    if real is not None and real.is_file():  # else the teacher's cache starts empty (a fresh clone's)
        with sqlite3.connect(f"file:{real}?mode=ro", uri=True) as source, sqlite3.connect(folder / CACHE_FILE) as copy:
            source.backup(copy)
    if real is not None and (real.parent / "onnx").is_dir():  # the model's export too, or it is exported again
        shutil.copytree(real.parent / "onnx", folder / "onnx")
    monkeypatch.setenv("RAGKIT_CACHE", str(folder))
    monkeypatch.delenv("RAGKIT_SHARED_CACHE", raising=False)
    monkeypatch.setattr(embedder, "cache", VectorCache(folder, embedder.stamp.namespace, embedder.stamp.dimensions))
    embedder.cache.get("unit", [b"open it as the teacher's cache is, WAL and all"])
    yield folder
    embedder.cache.close()


def test_lent_vectors_serve_the_check_and_never_reach_the_teachers_cache(teacher, tmp_path):
    rows, files = _rows(teacher), _files(teacher)
    embedder = default_embedder()
    seed = snapshot_cache(teacher, tmp_path / "seed")
    texts = [f"a header no cache has seen {uuid.uuid4().hex}: a chunk of the course"]
    lend = judging.lent_models(1, threads=1, wait=5, cache=tmp_path / "vectors", seed=seed)
    assert lend is not None
    with judging.writing_into(embedder, tmp_path / "vectors", seed):
        lent = lend.encode(texts)
        computed = embedder._compute
        embedder._compute = lambda *a: pytest.fail("the check embedded a text the kernel had borrowed")  # type: ignore
        try:
            assert np.allclose(embedder.encode(texts, progress=False), lent)
        finally:
            embedder._compute = computed  # type: ignore[method-assign]
        embedder.encode([f"a question of the check's own {uuid.uuid4().hex}"], progress=False)
    assert embedder.cache.private == teacher / CACHE_FILE  # the teacher's cache is the embedder's again afterwards
    assert (_rows(teacher), _files(teacher)) == (rows, files)


@pytest.mark.slow  # its checks read the course's vectors (from the snapshot, through the grading's own cache)
def test_grading_lends_to_ex4_only_and_leaves_the_teachers_cache_as_it_was(teacher, tmp_path, monkeypatch, course):
    """A whole grading, its sandbox a stand-in whose ex4 kernel borrows a new text: the teacher's cache is unchanged."""
    home = tmp_path / "home"
    for who, name in [("ada", "ex2-choose-a-threshold.ipynb"), ("ada", "ex4-design-a-header.ipynb"), ("ada", EX5)]:
        (home / who).mkdir(parents=True, exist_ok=True)
        (home / who / name).write_text("{}")
    asked: list[tuple[str, bool]] = []
    answers = {
        "ex2": json.dumps({"my_cut": {"value": 0.5}}),
        "ex5": _ex5(DOCUMENT.replace("June", uuid.uuid4().hex)).answers,
        "ex4": json.dumps({n: {"absent": True} for n in declared.TABLE["ex4"].answers}),
    }

    class Standin:
        """Runs nothing: an ex4 kernel borrows a text nobody has embedded, every run answers its exercise."""

        def __init__(self, hidden, limits, cache=None, shared=None, lend=None):
            self.lend, self.isolation = lend, Isolation(True)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

        def run(self, notebook, student, names, functions, pairs=None, lend=True):
            exercise = next(k for k, e in declared.TABLE.items() if tuple(e.answers) == names)
            assert said, "the grader ran a notebook before saying what its sandbox holds"
            asked.append((exercise, lend))
            if lend:
                assert self.lend is not None
                self.lend.encode([f"my header {uuid.uuid4().hex}: a chunk"])
            return SandboxRun(answers=answers[exercise], seconds=1.0)

    rows, files = _rows(teacher), _files(teacher)
    monkeypatch.setattr(grading, "Sandbox", Standin)
    said: list[Isolation] = []
    lent: list = []
    original = judging.lent_models
    monkeypatch.setattr(grading, "lent_models", lambda *a: lent.append(original(*a)) or lent[-1])
    result = grading.grade([home], "home", jobs=1, course=course, announce=said.append)
    assert said == [Isolation(True)]
    assert lent[0].texts == judging.LEND_TEXTS * len(course.chunks("E"))  # a run's count budget, from the course
    assert sorted(asked) == [("ex2", False), ("ex4", True), ("ex5", False)]
    assert {g.exercise: g.grade for g in result.grades if g.grade != "missing"} == {
        "ex2": "not yet",
        "ex4": "not yet",
        "ex5": "yes",
    }, result
    assert (_rows(teacher), _files(teacher)) == (rows, files)
    assert default_embedder().cache.private == teacher / CACHE_FILE


@pytest.mark.slow  # builds exercise 7's two graphs (a few seconds)
def test_grading_puts_exercise_sevens_graphs_in_the_snapshot_and_nothing_in_the_teachers_cache(
    teacher, tmp_path, monkeypatch, course
):
    """Every ex7 kernel reads the graphs from the snapshot the runs share, built once by the grader before any run;
    the teacher's cache is left as it was, with no results folder of the grader's."""
    from ragkit.plumbing import results
    from ragkit.teach.exercises import ex7_efsearch
    from ragkit.teach.grading.failures import RunFailure

    home = tmp_path / "home"
    (home / "ada").mkdir(parents=True)
    (home / "ada" / "ex7-choose-efsearch.ipynb").write_text("{}")
    seen: list[int] = []

    class Looking:
        def __init__(self, hidden, limits=None, cache=None, shared=None, probe=None, lend=None):
            self.isolation, self.shared = Isolation(True), shared

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def run(self, notebook, student, names, functions=(), pairs=None, lend=True) -> SandboxRun:
            seen.append(len(list((self.shared / results.FOLDER).glob(f"{ex7_efsearch.STORED}-*.bin"))))
            return SandboxRun(RunFailure("kernel died"), seconds=1.0)

    monkeypatch.setattr(grading, "Sandbox", Looking)
    rows, files = _rows(teacher), _files(teacher)
    grading.grade([home], "home", course=course, lending=False)
    assert seen == [2]
    assert (_rows(teacher), _files(teacher)) == (rows, files)
    assert not (teacher / results.FOLDER).exists()
