"""`python -m ragkit --help` and every command's --help describe every argument; under a Python without ragkit's
dependencies, `python -m ragkit` says in one sentence which Python to use instead of a traceback."""

import argparse
import os
import subprocess
import sys

import pytest

from ragkit.__main__ import parser

from conftest import ROOT


def commands(top: argparse.ArgumentParser) -> argparse._SubParsersAction:
    return next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))


def test_every_command_and_every_argument_of_every_command_has_a_help_text():
    sub = commands(parser())
    described = {a.dest: a.help for a in sub._choices_actions}
    assert set(described) == set(sub.choices), "a command missing from `python -m ragkit --help`"
    silent = [name for name, words in described.items() if not (words or "").strip()]
    silent += [
        f"{name} {'/'.join(a.option_strings) or a.dest}"
        for name, command in sub.choices.items()
        for a in command._actions
        if not (a.help or "").strip() and a.help != argparse.SUPPRESS
    ]
    assert not silent, f"arguments `--help` leaves without a word: {silent}"


def test_asks_help_describes_strategy_corpus_and_show_prompt(capsys):
    with pytest.raises(SystemExit):
        parser().parse_args(["ask", "--help"])
    lines = capsys.readouterr().out.splitlines()
    for option in ("--strategy STRATEGY", "--corpus CORPUS", "--show-prompt"):
        line = next(line for line in lines if line.strip().startswith(option))
        assert len(line.strip()) > len(option) + 5, f"{option} has no help: {line!r}"


def test_python_dash_m_ragkit_under_a_python_without_the_dependencies_says_which_python_to_use():
    # -S: no site-packages, as the system's Python run from the clone, which ended in "No module named 'markdown_it'"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run(
        [sys.executable, "-S", "-m", "ragkit", "ask", "what is a needle"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1 and run.stdout == "", run
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert run.stderr.startswith("error: this Python") and "`.venv/bin/python -m ragkit ...`" in run.stderr
    assert "`make setup`" in run.stderr and "numpy" in run.stderr
    script = subprocess.run(
        [sys.executable, "-S", "-c", "import ragkit"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert script.returncode == 1 and "ModuleNotFoundError: this Python" in script.stderr  # a script gets the same


def test_a_loaded_module_without_a_spec_counts_as_found(monkeypatch):
    """find_spec raises ValueError for a module in sys.modules whose __spec__ is None (a stub a test put there)."""
    import sys
    import types

    from ragkit.plumbing import environment

    stub = types.ModuleType("numpy")
    stub.__spec__ = None
    monkeypatch.setitem(sys.modules, "numpy", stub)
    assert environment.missing() == []
