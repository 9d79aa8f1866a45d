"""The command line on the bundled data: ask, sweep, models; errors print what to do and exit 1."""

import re

from ragkit.__main__ import main


def test_ask_prints_a_citation_table(capsys):
    assert main(["ask", "How many test examples do I need?"]) == 0
    out = capsys.readouterr().out
    assert "#char=" in out and "04-classification-and-evaluation" in out and "prompt:" in out


def test_ask_says_no_answer_under_a_strict_cut(capsys):
    assert main(["ask", "how do i renew my spanish passport", "--cut", "0.3"]) == 0
    assert capsys.readouterr().out.startswith('NO ANSWER: nothing under cosine distance 0.3 for "how do i renew')


def test_ask_rejects_an_empty_question_and_a_bad_cut(capsys):
    assert main(["ask", "  "]) == 1
    assert main(["ask", "what is a gradient", "--cut", "3"]) == 1
    err = capsys.readouterr().err
    assert "empty question" in err and "(0, 2]" in err


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
