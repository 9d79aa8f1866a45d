"""The timings table (notebooks 02, 03, 04) in the kernel's language: stages, headings and how each was measured;
the stage names code reads stay English, and so does an English kernel's table."""

import re

from ragkit.teach import language
from ragkit.teach.lesson import tables
from ragkit.teach.lesson.latency import Timing, timings_table

DECIMALS = {"here (ms)": 3, "chapter (ms)": 1}  # as the notebooks' code names the columns


def shown(timings: list[Timing]) -> list[str]:
    return re.sub(r"<[^>]+>", " ", tables.for_people(timings_table(timings), decimals=DECIMALS).to_html()).split()


def timings() -> list[Timing]:
    how = language.say("one query over {chunks:,} chunks, scores and sort, 1 thread", chunks=2345)
    return [Timing("query embedding", 3.14159, how, 5.0), Timing("fusion (RRF)", 0.5, how)]


def test_an_english_kernel_shows_the_table_as_before():
    with language.speaking("en"):
        words = shown(timings())
        frame = timings_table(timings())
    assert list(frame.columns) == ["stage", "here (ms)", "chapter (ms)", "how"]
    assert words[:6] == ["stage", "here", "(ms)", "chapter", "(ms)", "how"]
    assert words[6:11] == ["query", "embedding", "3.142", "5.0", "one"] and "2,345" in words


def test_a_dutch_kernel_shows_dutch_stages_headings_and_measurements_with_the_same_figures():
    with language.speaking("nl"):
        made = timings()
        words = " ".join(shown(made))
        frame = timings_table(made)
    assert [t.stage for t in made] == ["query embedding", "fusion (RRF)"]  # what the notebooks' code filters on
    assert list(frame.columns) == ["stage", "here (ms)", "chapter (ms)", "how"]  # what their code names
    assert words.startswith("stap hier (ms) hoofdstuk (ms) hoe gemeten embedding van de query 3,142 5,0 één query")
    assert "2.345 chunks, scores en sortering" in words and "fuseren (RRF) 0,500" in words
    assert not re.search(r"\b(stage|here|how|fusion|sort)\b", words)
