"""The README is the student's page: two commands first, the command line as the environment runs it, and no
developer's material (timings, CI, requirement floors), which lives in docs/developer.md."""

import re
import shlex

from markdown_it import MarkdownIt

from ragkit.__main__ import parser

from conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
DEVELOPER = (ROOT / "docs" / "developer.md").read_text(encoding="utf-8")


def blocks(text: str) -> list[str]:
    return [t.content for t in MarkdownIt("commonmark").parse(text) if t.type == "fence"]


def test_the_first_section_gives_the_two_commands_and_ci_runs_the_tests_one():
    first = README.split("\n## ", 2)[1]
    assert first.startswith("Start here"), "the student's steps come first"
    commands = [line.split("#")[0].strip() for line in blocks(first)[0].splitlines()]
    assert commands == ["make lab", "make test"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test$", ci, re.MULTILINE)
    targets = set(re.findall(r"^([a-z][a-z-]*):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.MULTILINE))
    named = set(re.findall(r"`make ([a-z-]+)", README))
    assert named <= targets, f"the README names make targets the Makefile lacks: {named - targets}"


def test_every_command_line_runs_with_the_environments_python_and_parses():
    lines = [line for block in blocks(README) for line in block.splitlines() if "-m ragkit" in line]
    assert len(lines) >= 4
    for line in lines:
        assert line.startswith(".venv/bin/python -m ragkit "), f"not as the environment runs it: {line}"
        words = shlex.split(line, comments=True)[3:]
        if words != ["--help"]:
            parser().parse_args(words)  # a command or option the README names that the parser lacks exits here
    assert "source .venv/bin/activate" in README and "`make setup`" in README


def test_timings_ci_and_requirement_floors_live_on_the_developers_page():
    for text, where in ((README, "README"), (DEVELOPER, "docs/developer.md")):
        found = {
            "a timing": re.search(r"\d+ min \d+ s", text),
            "CI": re.search(r"\.ci/run|pytest-xdist", text),
            "the floors": re.search(r"\| lower bound \|", text),
        }
        if where == "README":
            assert not any(found.values()), {k: v.group(0) for k, v in found.items() if v}
        else:
            assert all(found.values()), {k for k, v in found.items() if not v}
    assert len(README) < 16_000, f"the README is {len(README):,} characters: move what students need not read"
    assert "(docs/developer.md)" in README
