"""The Dutch teacher's guides: generated from the English ones and their catalogues, kept from drifting."""

import re
import shutil
import tomllib

import pytest

from ragkit.__main__ import main
from ragkit.errors import InputError
from ragkit.teach.classroom import guides
from ragkit.teach.classroom.generated import toml_string

from conftest import ROOT
from dutch import dutch_share

DOCS = ROOT / "docs"


def test_the_dutch_guides_are_current_and_whole():
    assert guides.check(ROOT) == []


@pytest.mark.parametrize("guide", guides.GUIDES)
def test_every_dutch_paragraph_is_dutch(guide):
    text = guides.dutch_guide_path(DOCS, guide).read_text(encoding="utf-8")
    found = guides.blocks(text)
    measured = guides.measured(found)  # make bench's table of run times: a measurement's output, copied as it is
    low = [
        (b.text[:80], share)
        for i, b in enumerate(found)
        if i not in measured and (share := dutch_share(_own_words(b.text))) is not None and share < 0.8
    ]
    assert not low, f"paragraphs of docs/nl/{guide}.md that read English: {low}"


ENGLISH = (
    "The cut is <!--fig:cut-->0.675<!--/fig--> here, see [grading](grading.md#x) and "
    "[the README](../README.md).\n\n- one\n- two\n\nThe held-out half is "
    "<!--fig:held-->over the ceiling<!--/fig--> "
    "(<!--fig:n-->10 of 32<!--/fig-->).\n"
)
DUTCH = {
    "The cut": "De cut is <!--fig:cut-->x<!--/fig--> hier, zie [grading](grading.md#x) en [de README](../README.md).",
    "- one": "- een\n- twee",
    "The held-out": "De achtergehouden helft is <!--fig:held-->x<!--/fig--> (<!--fig:n-->x<!--/fig-->).",
}


_REFERENCE = re.compile(r"\*\*\[[a-z0-9]+\]\*\*.*?(?=\*Gebruikt voor:\*|\*Achtergrond\*|$)", re.S)
"""A bibliography entry's reference (authors, the work's own title, where it appeared), up to the guide's own words."""


def _own_words(block: str) -> str:
    """A block without what it cites: a table's last column names notebook sections by their (English) headings, a
    bibliography entry names a work by its (English) title."""
    block = _REFERENCE.sub(" ", block)
    if not block.startswith("|"):
        return block
    return "\n".join(line.rsplit(" | ", 1)[0] for line in block.splitlines())


@pytest.fixture
def docs(tmp_path):
    """A docs/ folder with two small English guides, each with a catalogue that translates every block."""
    out = tmp_path / "docs"
    for guide in guides.GUIDES:
        (out / "nl").mkdir(parents=True, exist_ok=True)
        (out / f"{guide}.md").write_text(f"# {guide}\n\n{ENGLISH}", encoding="utf-8")
        _catalogue(out, guide)
    return out


def _catalogue(docs, guide, figures: str = "") -> None:
    """Write the catalogue of ``guide`` in ``docs``: each English block with its Dutch from DUTCH (a heading: gids)."""
    folder = guides.catalogue_folder(docs, guide)
    folder.mkdir(parents=True, exist_ok=True)
    text = ""
    for block in guides.blocks((docs / f"{guide}.md").read_text(encoding="utf-8")):
        dutch = next((nl for start, nl in DUTCH.items() if block.text.startswith(start)), "# gids")
        text += (
            f"[[block]]\nsha = '{guides.block_sha(block.text)}'\nen = {toml_string(block.text)}\n"
            f"nl = {toml_string(dutch)}\n\n"
        )
    (folder / "part-1.toml").write_text(text + figures, encoding="utf-8")


def _figures(docs, guide: str = "grading") -> None:
    """A Dutch guide that already holds its figures' Dutch values (as ``python -m teacher.guide --write`` leaves it)."""
    guides.dutch_guide_path(docs, guide).write_text(
        "<!--fig:cut-->0,675<!--/fig--> <!--fig:held-->boven het plafond<!--/fig--> <!--fig:n-->10 van 32<!--/fig-->\n",
        encoding="utf-8",
    )


def test_a_translated_guide_takes_each_figures_dutch_value_by_name_and_its_links_one_folder_deeper(docs):
    _figures(docs)
    text, todo = guides.dutch_guide(docs, "grading")
    assert "<!--fig:cut-->0,675<!--/fig--> hier, zie [grading](grading.md#x) en [de README](../../README.md)" in text
    assert "<!--fig:held-->boven het plafond<!--/fig--> (<!--fig:n-->10 van 32<!--/fig-->)" in text
    assert "- een\n- twee\n\nDe achtergehouden" in text and todo == []
    # no Dutch guide yet: every figure is named, with the tool that computes its Dutch; the English value stands in
    text, todo = guides.dutch_guide(docs, "teacher-guide")
    assert "<!--fig:held-->over the ceiling<!--/fig-->" in text
    assert {t.split(" has ")[0] for t in todo} == {"the figure cut", "the figure held", "the figure n"}
    assert all("`python -m teacher.guide --write`" in t for t in todo)


def test_a_figure_table_in_a_catalogue_is_refused_with_what_to_do(docs):
    """A figure's Dutch is computed from its value, never read back from its English through a table (issue 62)."""
    (guides.catalogue_folder(docs, "project") / "figures.toml").write_text(
        "[[figure]]\nen = '# of #'\nnl = '# van #'\n", encoding="utf-8"
    )
    with pytest.raises(InputError, match=r"has a \[\[figure\]\] table.*python -m teacher.project --write"):
        guides.dutch_guide(docs, "project")


def test_a_changed_english_paragraph_marks_its_dutch_stale_and_fails_the_check(docs):
    guides.write(docs.parent)
    problems = [str(p) for p in guides.check(docs.parent)]
    assert not any("has no Dutch" in p or "no block" in p for p in problems), problems
    english = (docs / "grading.md").read_text(encoding="utf-8")
    (docs / "grading.md").write_text(english.replace("The cut is", "The chosen cut is"), encoding="utf-8")
    problems = [str(p) for p in guides.check(docs.parent)]
    assert any("has no Dutch: 'The chosen cut" in p for p in problems)
    assert any("translates no block of docs/grading.md any more" in p for p in problems)
    # a new figure value is no change of the English paragraph: its Dutch stays current
    (docs / "grading.md").write_text(english.replace(">0.675<", ">0.700<"), encoding="utf-8")
    assert not any("has no Dutch" in str(p) for p in guides.check(docs.parent))


def test_what_make_bench_writes_is_copied_not_translated(docs):
    _figures(docs)
    english = (docs / "grading.md").read_text(encoding="utf-8")
    bench = (
        "<!-- run-times: written by make bench -->\nMeasured today: 2 cores.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
        "\n<!-- /run-times -->\n"
    )
    (docs / "grading.md").write_text(english + "\n" + bench, encoding="utf-8")
    text, todo = guides.dutch_guide(docs, "grading")
    assert text.endswith(bench) and todo == []
    (docs / "grading.md").write_text(english + "\n" + bench.replace("today", "tomorrow"), encoding="utf-8")
    assert guides.dutch_guide(docs, "grading")[1] == []  # a new measurement leaves the Dutch current


def test_a_broken_catalogue_is_named_not_raised_by_the_check(docs):
    shutil.rmtree(guides.catalogue_folder(docs, "grading"))
    assert any("is missing" in str(p) for p in guides.check(docs.parent))
    with pytest.raises(InputError, match="is missing"):
        guides.dutch_guide(docs, "grading")
    guides.catalogue_folder(docs, "grading").mkdir()
    (guides.catalogue_folder(docs, "grading") / "part-1.toml").write_text("[[block]]\nsha = 'x'\n", encoding="utf-8")
    assert any("needs sha, en and nl" in str(p) for p in guides.check(docs.parent))


def test_a_catalogue_nested_too_deep_is_named_not_a_traceback(docs):
    """tomllib parses by recursion: a hostile catalogue nested thousands deep is a clear error (issue 63, item 8)."""
    deep = "x = " + "[" * 5000 + "]" * 5000 + "\n"
    (guides.catalogue_folder(docs, "grading") / "part-9.toml").write_text(deep, encoding="utf-8")
    assert any("is nested too deep to be a catalogue" in str(p) for p in guides.check(docs.parent))
    with pytest.raises(InputError, match="nested too deep"):
        guides.dutch_guide(docs, "grading")
    cells = docs / "cells.toml"  # a notebook's catalogue too
    cells.write_text(deep, encoding="utf-8")
    from ragkit.teach.classroom import edition

    with pytest.raises(InputError, match="nested too deep"):
        edition.cell_catalogue(cells)


def test_the_dutch_guide_gives_each_notebook_the_class_time_of_its_dutch_twin():
    from ragkit.teach.classroom.edition import COURSE, twin_path
    from ragkit.teach.classroom.figures import quoted
    from ragkit.teach.classroom.pace import class_minutes

    text = guides.dutch_guide_path(DOCS, "teacher-guide").read_text(encoding="utf-8")
    marked = quoted(text)
    for name in [name for name in COURSE if "/" not in name]:
        section = text[text.index(f"### {name}\n") :].split("\n### ", 1)[0]
        number = name.split("-", 1)[0]
        assert f"**Lestijd.** <!--fig:full_{number}-->" in section, f"the Dutch guide states no class time for {name}"
        twin = twin_path(ROOT / "notebooks", name)
        times = (class_minutes(twin), class_minutes(twin, core_only=True))
        assert (marked[f"full_{number}"], marked[f"core_{number}"]) == ({str(times[0])}, {str(times[1])}), name


def test_a_class_time_is_the_twins_of_its_language_by_its_figures_name(tmp_path):
    from ragkit.teach.classroom.edition import twin_path
    from ragkit.teach.classroom.pace import class_times

    notebooks = tmp_path / "notebooks"
    for twin, word in ((twin_path(notebooks, "09-new"), "woord "), (notebooks / "twins" / "09-new.py", "word ")):
        twin.parent.mkdir(parents=True, exist_ok=True)
        twin.write_text("# %% [markdown]\n# ## Taught\n#\n# " + word * 300 + "\n\n# %%\nx = 1\n", encoding="utf-8")
    (notebooks / "twins" / "nl" / "09-new.nl.py").write_text(
        "# %% [markdown]\n# ## Taught\n#\n# " + "woord " * 500 + "\n", encoding="utf-8"
    )
    assert class_times(notebooks) == {"full_09": "9", "core_09": "9"}  # 301 words / 100 + one cell's 0.5 + 5, up
    assert class_times(notebooks, "nl") == {"full_09": "11", "core_09": "11"}  # 501 / 100 + 5, rounded up


def _entries(folder) -> dict[str, str]:
    """Every [[block]] of the catalogue files in ``folder``: its sha and its Dutch."""
    found = {}
    for path in sorted(folder.glob("*.toml")):
        found |= {b["sha"]: b["nl"] for b in tomllib.loads(path.read_text(encoding="utf-8")).get("block", [])}
    return found


def test_edition_skeleton_starts_a_guides_catalogue_and_adds_what_one_lacks(tmp_path, monkeypatch, capsys):
    """Defect: a guide without a catalogue said "run `python -m ragkit edition --skeleton` to start a catalogue",
    and --skeleton wrote the notebooks' catalogues only."""
    root = tmp_path / "course"
    shutil.copytree(ROOT / "notebooks", root / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copytree(ROOT / "docs", root / "docs")
    docs = root / "docs"
    shutil.rmtree(guides.catalogue_folder(docs, "grading"))
    teacher = docs / "teacher-guide.md"
    kept = _entries(guides.catalogue_folder(docs, "teacher-guide"))
    teacher.write_text(teacher.read_text(encoding="utf-8") + "\nA paragraph nobody translated yet.\n", "utf-8")
    monkeypatch.setattr("ragkit.plumbing.locations.checkout", lambda: root)

    assert main(["edition", "--skeleton"]) == 0

    for guide in guides.GUIDES:
        english = guides.blocks((docs / f"{guide}.md").read_text(encoding="utf-8"))
        measured = guides.measured(english)
        wanted = {guides.block_sha(b.text) for i, b in enumerate(english) if i not in measured}
        assert wanted <= set(_entries(guides.catalogue_folder(docs, guide))), guide
    found = _entries(guides.catalogue_folder(docs, "teacher-guide"))
    assert {sha: found[sha] for sha in kept} == kept, "a translation was lost"
    assert found[guides.block_sha("A paragraph nobody translated yet.")] == ""
    said = capsys.readouterr().out
    assert "catalogue docs/nl/catalogue/grading/part-1.toml: every block it lacked is there" in said
    assert "catalogue notebooks/nl/catalogue/00-start-here.toml: every cell it lacked is there" in said


def test_no_line_of_a_guide_starts_with_a_figure_marker():
    """A line that starts with ``<!--`` starts an HTML block in CommonMark, which cuts a paragraph or a list item in
    two where GitHub renders it: a marked figure never opens a line."""
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted(DOCS.rglob("*.md"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if line.lstrip().startswith("<!--fig:")
    ]
    assert not found, found


def test_the_run_times_table_is_written_in_dutch_from_the_measurements_it_carries():
    """make bench writes English and its measurements; the Dutch guide writes the same measurements in Dutch."""
    from ragkit.teach import language
    from ragkit.teach.classroom.run_times import END, START, RunTimes, Timed

    english = (DOCS / "teacher-guide.md").read_text(encoding="utf-8")
    dutch = guides.dutch_guide_path(DOCS, "teacher-guide").read_text(encoding="utf-8")
    times = RunTimes.found(english)
    assert times is not None and RunTimes.found(dutch) == times
    with language.speaking("en"):
        assert times.block() in english  # the English table is the one its data writes
    table = dutch[dutch.index(START) : dutch.index(END)]
    assert "Gemeten door `make bench` op" in table and "| notebook | warm | koud |" in table
    assert "Measured" not in table and "not measured" not in table and "one after another" not in table
    with language.speaking("nl"):
        assert f"load average {language.number(times.load, '.1f')} bij de start" in table
    busy = RunTimes("2026-01-02 03:04", 2, "x86_64", "3.12.1", 3.5, (Timed("a.ipynb", 1.4, None),), 1.4)
    with language.speaking("nl"):
        block = busy.block()
    assert (
        "2 januari 2026, 03:04 UTC" in block
        and "boven het aantal cores" in block
        and "| a.ipynb | 1 s | niet gemeten |" in block
    )
    assert RunTimes.found(block) == busy and RunTimes.found("no table here") is None
