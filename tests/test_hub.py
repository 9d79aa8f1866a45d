"""A class on one hub: with the teacher's shared cache filled, a student's course computes no vector at all."""

import json
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

import ragkit.teach.course
from ragkit.embedding import Embedder, default_embedder
from ragkit.plumbing.cache import FILENAME, CacheWarning, finish_shared
from ragkit.teach import tables

DATA = Path(__file__).resolve().parent.parent / "data"
DOC = "02-gradient-descent"
STRATEGIES = "AE"


@pytest.fixture
def small_course(tmp_path):
    """One bundled document with its own questions and every out-of-domain query: the student's path, small."""
    data = tmp_path / "data"
    (data / "corpus").mkdir(parents=True)
    shutil.copy(DATA / "corpus" / f"{DOC}.md", data / "corpus")
    lines = (DATA / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    mine = [line for line in lines if line.strip() and json.loads(line)["doc_id"] == DOC]
    assert mine, f"no bundled question is about {DOC}"
    (data / "questions.jsonl").write_text("\n".join(mine) + "\n", encoding="utf-8")
    shutil.copy(DATA / "out_of_domain.jsonl", data)
    return data


def _fresh_process(monkeypatch, **env: Path | None) -> None:
    """What a new kernel sees: these cache variables, and no course or embedder loaded yet."""
    for name, value in env.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, str(value))
    ragkit.teach.course.load.cache_clear()
    default_embedder.cache_clear()


def _run(data: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    course = ragkit.teach.course.load(data, progress=False)
    sweep = course.sweep("E", "dense")
    evaluation = course.evaluation(STRATEGIES)
    return tables.sweep(sweep), tables.figures(evaluation)


def _forget(monkeypatch) -> None:
    default_embedder().cache.close()
    ragkit.teach.course.load.cache_clear()
    default_embedder.cache_clear()


@pytest.mark.slow
def test_a_student_with_the_shared_cache_filled_computes_no_vector(small_course, tmp_path, monkeypatch):
    teacher, student = tmp_path / "shared", tmp_path / "student"
    _fresh_process(monkeypatch, RAGKIT_CACHE=teacher, RAGKIT_SHARED_CACHE=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the teacher's fill may warn about long chunks; not under test
        expected = _run(small_course)
    _forget(monkeypatch)
    finish_shared(teacher)
    for p in [teacher, *teacher.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        _fresh_process(monkeypatch, RAGKIT_CACHE=student, RAGKIT_SHARED_CACHE=teacher)
        loaded = property(lambda self: pytest.fail("a student's kernel loaded the model"))
        monkeypatch.setattr(Embedder, "model", loaded)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            got = _run(small_course)
        assert not [w for w in seen if issubclass(w.category, CacheWarning)]
        pd.testing.assert_frame_equal(got[0], expected[0])
        pd.testing.assert_frame_equal(got[1], expected[1])
        # the private cache was never even created: every lookup was answered by the shared layer
        assert not (student / FILENAME).exists()
    finally:
        _forget(monkeypatch)
        for p in [teacher, *teacher.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
