"""The ground truth is valid, and every rule of the validator catches a small bad fixture."""

import json

import pytest

from ragkit.__main__ import main
from ragkit.corpus import load_corpus
from ragkit.data import (
    EXPECTED,
    load_out_of_domain,
    load_questions,
    queries,
    read_out_of_domain,
    read_questions,
    validate,
)
from ragkit.errors import DataError

from conftest import ROOT

DOC = """# Small

An introduction sentence that is long enough to be a needle here.

## Section one
The first needle sentence lives in this paragraph of prose text.
A repeated sentence that appears twice in this tiny corpus.

```python
code_needle = "a sentence hidden inside a fenced code block here"
```

| col | value |
|---|---|
| row | a sentence inside a table row, which is not prose |
"""
OTHER = "# Other\n\n## Part\nA repeated sentence that appears twice in this tiny corpus.\n"


@pytest.fixture
def tiny(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.md").write_text(DOC)
    (folder / "b.md").write_text(OTHER)
    return load_corpus(folder)


def q(qid, needle, doc_id="a", **extra):
    return {"id": qid, "doc_id": doc_id, "needle": needle, "question": "what?", "ticket": "help!", **extra}


def write_jsonl(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def problems_for(tmp_path, tiny, rows, ood_rows=(), counts=None):
    qs, p1 = read_questions(write_jsonl(tmp_path / "q.jsonl", rows))
    oo, p2 = read_out_of_domain(write_jsonl(tmp_path / "o.jsonl", list(ood_rows)))
    return [str(p) for p in p1 + p2 + validate(tiny, qs, oo, counts)]


def test_bundled_ground_truth_is_valid():
    corpus = load_corpus(ROOT / "data" / "corpus")
    questions = load_questions(ROOT / "data" / "questions.jsonl")
    ood = load_out_of_domain(ROOT / "data" / "out_of_domain.jsonl")
    assert validate(corpus, questions, ood) == []
    assert len(queries(questions)) == 64
    chapter_examples = {
        "how much does prompt caching save on a long conversation",
        "what is the capital of france",
        "what is the offside rule in football",
        "how do i renew my spanish passport",
        "how do i build an agent loop with tools",
    }
    assert chapter_examples <= {o.query for o in ood}
    adjacent = {o.topic for o in ood if o.kind == "adjacent"}
    assert all(sum(o.topic == t for o in ood) >= 2 for t in adjacent) and len(adjacent) == 8
    assert any(q.question == "How many test examples do I need?" and q.doc_id.startswith("04") for q in questions)


def test_a_valid_tiny_set_has_no_problems(tmp_path, tiny):
    needle = "The first needle sentence lives in this paragraph of prose text."
    assert problems_for(tmp_path, tiny, [q("q1", needle)]) == []


def test_malformed_json_reports_its_line(tmp_path, tiny):
    out = problems_for(
        tmp_path,
        tiny,
        [q("q1", "The first needle sentence lives in this paragraph of prose text."), '{"id": "q2", "needle": '],
    )
    assert len(out) == 1 and "q.jsonl:2: malformed JSON" in out[0]


def test_missing_and_empty_fields(tmp_path, tiny):
    out = problems_for(tmp_path, tiny, [{"id": "q1", "doc_id": "a", "needle": "", "question": "x"}])
    assert "q.jsonl:1: missing or empty field(s) needle, ticket" in out[0]


def test_duplicate_ids(tmp_path, tiny):
    needle = "The first needle sentence lives in this paragraph of prose text."
    out = problems_for(tmp_path, tiny, [q("q1", needle), q("q1", needle)])
    assert any("q.jsonl:2: duplicate id 'q1' (first on line 1)" in p for p in out)


def test_needle_not_found(tmp_path, tiny):
    out = problems_for(tmp_path, tiny, [q("q1", "This sentence is nowhere in the tiny corpus at all, really.")])
    assert len(out) == 1
    assert out[0].endswith(
        "q.jsonl:1: q1: needle not found verbatim in the corpus: copy the sentence exactly (spaces and punctuation too)"
    )


def test_needle_found_twice_says_where(tmp_path, tiny):
    (problem,) = problems_for(tmp_path, tiny, [q("q1", "A repeated sentence that appears twice in this tiny corpus.")])
    assert "occurs 2 times (a at " in problem and ", b at " in problem


@pytest.mark.parametrize(
    "needle, where",
    [
        ("An introduction sentence that is long enough to be a needle here.", None),
        ("a sentence hidden inside a fenced code block here", "a fenced code block"),
        ("a sentence inside a table row, which is not prose", "a table row"),
        ("# Small\n\nAn introduction sentence that is long enough", "a heading"),
    ],
)
def test_needle_must_be_prose(tmp_path, tiny, needle, where):
    out = problems_for(tmp_path, tiny, [q("q1", needle)])
    if where is None:
        assert out == []
    else:
        assert any(f"needle lies in {where}" in p for p in out)


def test_needle_in_another_document_and_unknown_doc_id(tmp_path, tiny):
    needle = "The first needle sentence lives in this paragraph of prose text."
    out = problems_for(tmp_path, tiny, [q("q1", needle, doc_id="b"), q("q2", needle, doc_id="zzz")])
    assert any("q1: needle is not in b but in a: fix doc_id" in p for p in out)
    assert any("q2: unknown doc_id 'zzz'" in p for p in out)


def test_needle_length_bounds(tmp_path, tiny):
    out = problems_for(tmp_path, tiny, [q("q1", "Section one")])
    assert any("needle is 11 characters" in p for p in out)


def test_wrong_counts_and_kinds(tmp_path, tiny):
    needle = "The first needle sentence lives in this paragraph of prose text."
    ood = [{"id": "o1", "query": "paella?", "kind": "silly", "topic": "food"}]
    out = problems_for(tmp_path, tiny, [q("q1", needle)], ood, counts=EXPECTED)
    assert any("o1: kind 'silly' must be one of adjacent, absurd" in p for p in out)
    assert any("1 questions, expected 32" in p for p in out)
    assert any("0 adjacent out-of-domain queries, expected 21" in p for p in out)
    assert any("needles come from 1 documents, expected at least 11" in p for p in out)


def test_load_raises_with_every_problem(tmp_path):
    path = write_jsonl(tmp_path / "q.jsonl", ["not json", "[1, 2]"])
    with pytest.raises(DataError) as err:
        load_questions(path)
    assert "q.jsonl:1: malformed JSON" in str(err.value) and "q.jsonl:2: not a JSON object" in str(err.value)


def test_validate_command_exit_codes(tmp_path, tiny, capsys):
    assert main(["validate"]) == 0
    assert "ground truth is valid" in capsys.readouterr().out
    bad = write_jsonl(tmp_path / "bad.jsonl", [q("q1", "nowhere to be found in any document of this corpus")])
    ood = write_jsonl(tmp_path / "o.jsonl", [{"id": "o1", "query": "x", "kind": "absurd", "topic": "t"}])
    args = ["validate", "--corpus", str(tiny.folder), "--questions", str(bad), "--ood", str(ood), "--any-count"]
    assert main(args) == 1
    assert "needle not found" in capsys.readouterr().out


def test_a_file_with_every_id_twice_is_refused_not_counted_twice(tmp_path):
    rows = [json.loads(line) for line in (ROOT / "data" / "questions.jsonl").read_text().splitlines() if line.strip()]
    path = write_jsonl(tmp_path / "twice.jsonl", rows + rows)
    records, problems = read_questions(path)
    assert len(records) == len(rows) and len(problems) == len(rows)
    assert str(problems[0]).startswith(f"{path}:{len(rows) + 1}: duplicate id '{rows[0]['id']}' (first on line 1)")
    with pytest.raises(DataError, match="duplicate id"):
        load_questions(path)


def test_the_ticket_rule_lives_in_the_engine_and_flags_more_than_max_shared_words():
    import ragkit.teach.exercises as ex
    from ragkit.data import MAX_SHARED, Question, shared_needle_words, ticket_rule_breaches

    needle = "The vector cache stores unit embeddings keyed by sha256 of the exact text."
    base = dict(doc_id="d", needle=needle, question="where do embeddings live?")
    ok = Question(id="q1", ticket="my embeddings vanish after a restart of the cache", **base)
    copied = Question(id="q2", ticket="cache stores unit embeddings keyed by what?", **base)
    breaches = dict(ticket_rule_breaches([ok, copied]))
    assert list(breaches) == ["q2"] and len(breaches["q2"]) > MAX_SHARED
    assert ex.EX3.max_shared is MAX_SHARED
    assert shared_needle_words("cache embeddings", needle) == ["cache", "embeddings"]
