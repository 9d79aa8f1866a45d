"""Every numeric option of `python -m ragkit` refuses nan, infinities and values outside its range, saying why."""

from __future__ import annotations

import argparse

import pytest

from ragkit.__main__ import main
from ragkit.errors import InputError
from ragkit.teach.grading.isolation import Limits

# (command line before the option, option, values refused, values accepted, words the refusal says)
OPTIONS = [
    (
        ["grade", "submissions"],
        "--timeout",
        ["nan", "inf", "-inf", "0", "-1", "1e400", "ten"],
        ["0.5", "600"],
        "seconds above 0",
    ),
    (["grade", "submissions"], "--jobs", ["nan", "inf", "-inf", "0", "-1", "1.5"], ["1", "4"], "at least 1"),
    (["index", "status"], "--wait", ["nan", "inf", "-inf", "-1", "-0.5"], ["0", "2.5"], "seconds, 0 or more"),
    (["warm"], "--nice", ["nan", "inf", "-inf", "20", "-21", "1.5"], ["-20", "0", "19"], "from -20"),
]


def _parsed(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> dict:
    """The options ``main`` parsed for a command line; the command itself does not run."""
    parse = argparse.ArgumentParser.parse_args
    seen: dict = {}

    def kept(self, args=None, namespace=None):
        parsed = parse(self, args, namespace)
        parsed.run = lambda parsed: seen.update(vars(parsed)) or 0
        return parsed

    with monkeypatch.context() as patch:
        patch.setattr(argparse.ArgumentParser, "parse_args", kept)
        assert main(argv) == 0
    return seen


@pytest.mark.parametrize(("before", "option", "bad", "good", "says"), OPTIONS, ids=[o[1] for o in OPTIONS])
def test_a_numeric_option_refuses_what_makes_no_sense_and_says_what_to_give(
    before, option, bad, good, says, capsys, monkeypatch
):
    for value in bad:
        with pytest.raises(SystemExit) as exited:
            main([*before, f"{option}={value}"])
        assert exited.value.code != 0
        err = capsys.readouterr().err
        assert f"argument {option}: {value}: give" in err and says in err, (value, err)
    for value in good:
        assert _parsed([*before, f"{option}={value}"], monkeypatch)[option.lstrip("-")] == float(value)


def test_a_cut_is_a_cosine_distance_or_0_for_none_refused_before_any_work(capsys, monkeypatch):
    """``ask --cut`` takes the library's own rule (``check_cut``): exit 1 with its message, before the corpus loads."""
    import ragkit.cli.course as course

    monkeypatch.setattr(course, "_load_corpus", lambda folder: pytest.fail("the corpus was loaded for a bad cut"))
    for value in ("nan", "inf", "-inf", "-1", "-0.1", "2.01"):
        assert main(["ask", "what is BM25?", f"--cut={value}"]) == 1
        assert "is not a cosine distance in (0, 2]" in capsys.readouterr().err, value
    for value in ("0", "0.35", "2"):
        assert _parsed(["ask", "what is BM25?", f"--cut={value}"], monkeypatch)["cut"] == float(value)


def test_the_graders_time_limit_refuses_nan_and_infinities_where_it_is_built():
    for seconds in (float("nan"), float("inf"), float("-inf"), 0, -1):
        with pytest.raises(InputError, match="--timeout"):
            Limits(timeout=seconds)
