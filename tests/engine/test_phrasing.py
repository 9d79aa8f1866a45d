"""One question, two languages: the needle's rank for each phrasing, compared question by question."""

import json

import numpy as np
import pytest

from ragkit.chunking import chunk_corpus
from ragkit.corpus import Corpus
from ragkit.data import Question, load_questions
from ragkit.errors import DataError, InputError
from ragkit.phrasing import Phrasing, compare_phrasings, load_phrasings
from ragkit.retrieval import Retriever

from conftest import ROOT, make_document

QUESTIONS = ROOT / "data" / "questions.jsonl"


class Unit:
    """One fixed vector for every text: no model, and every chunk at the same distance."""

    def encode(self, texts, progress=False):
        return np.ones((len(texts), 4), dtype=np.float32) / 2


def test_the_ranks_of_each_phrasing_are_where_its_needle_is():
    docs = [
        make_document("# Cache\n\nThe KV cache holds keys and values per token.", "kv"),
        make_document("# Wilson\n\nA Wilson interval bounds a hit rate.", "wilson"),
    ]
    chunks = chunk_corpus(Corpus(ROOT, docs), "E")
    questions = [
        Question("a", "kv", "The KV cache holds keys and values per token.", "what does the kv cache hold", "t"),
        Question("b", "wilson", "A Wilson interval bounds a hit rate.", "what bounds a hit rate", "t"),
    ]
    other = {"a": "wat bewaart de kv cache", "b": "wat begrenst een trefkans"}
    found = compare_phrasings(Retriever(chunks, Unit(), "E", progress=False), questions, other, "bm25")
    # the Dutch of b shares no word with any chunk: BM25 leaves the chunks in their order, the KV chunk first
    assert found.english == (1, 1) and found.dutch == (1, 2)
    assert found.hits("en", 1) == 2 and found.hits("nl", 1) == 1 and found.hits("nl", 2) == 2
    assert (found.test(1).wins, found.test(1).losses) == (1, 0) and found.mrr("nl") == pytest.approx(0.75)
    with pytest.raises(InputError, match="no other phrasing for b"):
        compare_phrasings(Retriever(chunks, Unit(), "E", progress=False), questions, {"a": "x"}, "bm25")


def test_a_question_that_never_finds_its_needle_counts_as_a_miss_in_every_measure():
    p = Phrasing("E", "dense", ("a", "b"), (1, 0), (0, 0))
    assert p.hits("en", 20) == 1 and p.hits("nl", 20) == 0 and p.mrr("nl") == 0.0 and p.mrr("en") == 0.5
    assert p.interval("nl", 20)[0] == 0.0 and p.test(20).wins == 1


def test_the_course_has_a_dutch_phrasing_of_every_question():
    questions = load_questions(QUESTIONS)
    dutch = load_phrasings(ROOT / "data" / "questions_nl.jsonl", questions)
    assert set(dutch) == {q.id for q in questions}
    assert all(dutch[q.id] != q.question for q in questions)


@pytest.mark.parametrize(
    "lines, message",
    [
        (None, "is missing"),
        (["not json"], "is not JSON"),
        ([{"id": "q01"}], 'needs an "id" and a non-empty'),
        ([{"id": "zz", "question": "x"}], "which is no course question"),
        ([{"id": "q01", "question": "x"}, {"id": "q01", "question": "y"}], "twice"),
        ([{"id": "q01", "question": "x"}], "lacks q02"),
    ],
)
def test_a_broken_phrasings_file_says_what_to_fix(tmp_path, lines, message):
    path = tmp_path / "questions_nl.jsonl"
    if lines is not None:
        path.write_text(
            "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n", encoding="utf-8"
        )
    with pytest.raises(DataError, match=message):
        load_phrasings(path, load_questions(QUESTIONS))
