"""The command line on the bundled data: ask, sweep, models; errors print what to do and exit 1."""

import json
import os
import re
import shutil

import pytest

from ragkit.__main__ import main
from ragkit.data import read_questions

from conftest import ROOT


@pytest.mark.slow
def test_ask_prints_a_citation_table(capsys):
    assert main(["ask", "How many test examples do I need?"]) == 0
    out = capsys.readouterr().out
    assert "#char=" in out and "04-classification-and-evaluation" in out and "prompt:" in out


@pytest.mark.slow
def test_ask_says_no_answer_under_a_strict_cut(capsys):
    assert main(["ask", "how do i renew my spanish passport", "--cut", "0.3"]) == 0
    assert capsys.readouterr().out.startswith('NO ANSWER: nothing under cosine distance 0.3 for "how do i renew')


@pytest.mark.slow
def test_ask_rejects_an_empty_question_and_a_bad_cut(capsys):
    assert main(["ask", "  "]) == 1
    assert main(["ask", "what is a gradient", "--cut", "3"]) == 1
    err = capsys.readouterr().err
    assert "empty question" in err and "(0, 2]" in err


@pytest.mark.slow
def test_sweep_prints_the_chapter_cuts(capsys):
    assert main(["sweep"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^\s+0\.675\s+\d+/30", out, re.M) and re.search(r"^\s+0\.525\s+\d+/30", out, re.M)
    assert re.search(r"^\s+none\s+30/30\s+0/64", out, re.M)


def test_models_offline_fails_with_instructions(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGKIT_MODELS_DIR", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["models"]) == 1
    assert "this needs internet" in capsys.readouterr().err


QUESTION = {
    "id": "q1",
    "doc_id": "04-classification-and-evaluation",
    "needle": "placeholder",
    "question": "How many test examples do I need?",
    "ticket": "how big must my test set be",
}


def _jsonl(path, *records, prefix=""):
    path.write_text(
        prefix + "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n", encoding="utf-8"
    )
    return path


def _no_traceback(err):
    assert "Traceback" not in err and err.startswith("error: ")


def test_sweep_refuses_empty_questions_and_out_of_domain_files(tmp_path, capsys):
    empty = _jsonl(tmp_path / "empty.jsonl")
    assert main(["sweep", "--questions", str(empty)]) == 1
    err = capsys.readouterr().err
    _no_traceback(err)
    assert "no in-domain questions to sweep" in err
    assert main(["sweep", "--ood", str(empty)]) == 1
    assert "no out-of-domain queries to sweep" in capsys.readouterr().err


def test_sweep_refuses_a_needle_absent_from_the_corpus(tmp_path, capsys):
    questions = _jsonl(tmp_path / "q.jsonl", QUESTION | {"needle": "This sentence is in no document at all."})
    assert main(["sweep", "--questions", str(questions)]) == 1
    err = capsys.readouterr().err
    _no_traceback(err)
    assert "the needle of q1 is not in the corpus" in err


def test_deeply_nested_json_line_names_file_and_line(tmp_path, capsys):
    deep = _jsonl(tmp_path / "deep.jsonl", QUESTION, "[" * 100_000 + "]" * 100_000)
    for command, option in (("sweep", "--questions"), ("sweep", "--ood"), ("validate", "--questions")):
        args = [command, option, str(deep)]
        assert main(args) == 1
        captured = capsys.readouterr()
        assert f"{deep}:2: JSON nested too deeply" in captured.err + captured.out
        assert "Traceback" not in captured.err


def test_bom_in_jsonl_is_accepted_and_a_numeric_id_is_not_a_string(tmp_path):
    records, problems = read_questions(_jsonl(tmp_path / "bom.jsonl", QUESTION, prefix="\ufeff"))
    assert not problems and records[0].id == "q1"
    _, problems = read_questions(_jsonl(tmp_path / "num.jsonl", QUESTION | {"id": 7}))
    assert [p.message for p in problems] == ["field(s) id (int 7) not a string: put the value in quotes"]


def test_corpus_that_is_a_file_is_named_a_file(tmp_path, capsys):
    file = tmp_path / "notes.md"
    file.write_text("# Notes\n\ntext\n")
    assert main(["ask", "what?", "--corpus", str(file)]) == 1
    err = capsys.readouterr().err
    _no_traceback(err)
    assert f"{file} is a file, not a folder" in err and "does not exist" not in err


@pytest.mark.parametrize("value", ["", "  ", "XYZ"])
def test_empty_or_unknown_strategies_are_refused(value, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["eval", "--strategies", value])
    assert stop.value.code == 2
    assert "give one or more of the letters ABCDEF" in capsys.readouterr().err


def test_ask_and_sweep_name_the_failed_documents(tmp_path, capsys):
    folder = tmp_path / "corpus"
    folder.mkdir()
    source = ROOT / "data" / "corpus" / "04-classification-and-evaluation.md"
    shutil.copy(source, folder / source.name)
    (folder / "broken.md").write_bytes(b"# Broken\n\n\xff\xfe not UTF-8\n")
    assert main(["ask", "How many test examples do I need?", "--corpus", str(folder)]) == 0
    assert "FAILED broken.md: not valid UTF-8" in capsys.readouterr().err
    main(["sweep", "--corpus", str(folder), "--questions", str(_jsonl(tmp_path / "q.jsonl", QUESTION))])
    assert "FAILED broken.md: not valid UTF-8" in capsys.readouterr().err


def test_class_report_csv_into_a_missing_folder_or_onto_an_input_is_refused_before_any_work(tmp_path, capsys):
    results = tmp_path / "ana.jsonl"
    results.write_text(json.dumps({"exercise": "ex1", "student": "ana", "passed": True}) + "\n")
    before = results.read_text()
    assert main(["class-report", str(results), "--csv", str(tmp_path / "no" / "such" / "class.csv")]) == 1
    captured = capsys.readouterr()
    assert "the folder" in captured.err and "does not exist; create it first" in captured.err
    assert "student" not in captured.out  # refused before the table was printed
    assert main(["class-report", str(tmp_path), "--csv", str(results)]) == 1
    assert "is one of the results files read: name another file" in capsys.readouterr().err
    assert results.read_text() == before


def test_corpus_stats_names_a_file_whose_name_is_not_utf8(tmp_path, capsys):
    (tmp_path / "good.md").write_text("# Good\n\nBody.\n")
    (tmp_path / os.fsdecode(b"bad-\xff.md")).write_bytes(b"# Bad\n\nBody.\n")
    assert main(["corpus-stats", "--corpus", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    out.encode("utf-8")  # printable on any terminal
    assert "1 documents loaded, 1 failed" in out and "FAILED bad-\\xff.md: the file name" in out


def test_bytes_that_are_not_utf8_in_a_query_or_a_title_are_answered(tmp_path, capsys):
    from ragkit.chunking import Chunk
    from ragkit.citations import build_context

    shutil.copy(ROOT / "data" / "corpus" / "02-gradient-descent.md", tmp_path)  # one chapter: seconds, not minutes
    # how Python passes the byte 0xE9 of argv
    assert main(["ask", "what is caf\udce9 gradient descent", "--corpus", str(tmp_path)]) == 0
    assert "02-gradient-descent" in capsys.readouterr().out
    chunk = Chunk("d", "Caf\udce9 notes", "S\udcff", 0, 4, "text")
    prompt, (citation,) = build_context("why?", [(chunk, 0.2)])
    prompt.encode("utf-8")
    assert citation.document_name == "Caf\ufffd notes" and citation.locator_label == "S\ufffd"


def test_class_report_names_students_by_owner_when_asked(tmp_path, capsys):
    from ragkit.teach.exercises.results import login

    me = login(os.getuid())
    (tmp_path / "results.jsonl").write_text(json.dumps({"exercise": "ex3", "student": me, "passed": False}) + "\n")
    assert main(["class-report", str(tmp_path), "--name-by", "owner"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split() == [me, "-", "-", "not", "yet", "(1)", "-", "-", "-", "-"]


def test_no_name_heading_or_text_of_a_corpus_file_reaches_the_terminal_as_an_escape(tmp_path, capsys):
    """Issue 44: file names and headings printed raw escapes (a cleared screen, a retitled window, reversed text)."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = (ROOT / "data" / "corpus" / "02-gradient-descent.md").read_text(encoding="utf-8")
    evil = "\x1b[2J\x1b]0;pwned\x07\u202e"
    text = text.replace("\n## ", f"\n## Step size {evil} ", 1)
    (corpus / f"02-gradient{evil}.md").write_text(text, encoding="utf-8")
    (corpus / f"broken{evil}.md").write_bytes(b"# Broken\n\n\xff\xfe not UTF-8\n")
    runs = [
        ["corpus-stats", "--corpus", str(corpus)],
        ["ask", "what is the step size in gradient descent", "--corpus", str(corpus), "--show-prompt"],
        ["index", "build", "--corpus", str(corpus), "--out", str(tmp_path / "index")],
        ["index", "status", "--corpus", str(corpus), "--out", str(tmp_path / "index")],
    ]
    for argv in runs:
        main(argv)
        out, err = capsys.readouterr()
        for raw in ("\x1b", "\x07", "\u202e"):
            assert raw not in out + err, (argv, repr(raw))
        assert "\\x1b[2J" in out + err, argv  # shown, escaped, not dropped
    assert main(["corpus-stats", "--corpus", str(corpus)]) == 0
    assert "FAILED broken\\x1b[2J\\x1b]0;pwned\\x07\\u202e.md: not valid UTF-8" in capsys.readouterr().out
