"""The Dutch pilot's class times: the teacher's guide plans a Dutch notebook at its English twin's time, which holds
while the pace (ragkit/teach/classroom/pace.py) computes at most a minute more for it, in full and core alike; and in
either language a notebook's closing list of sources takes no class time."""

import re

import pytest

from ragkit.teach.classroom.pace import class_minutes, notebook_sections

from conftest import ROOT

TWINS = ROOT / "notebooks" / "twins"
DUTCH = sorted((TWINS / "nl").rglob("*.py"))
GUIDE = ROOT / "docs" / "teacher-guide.md"
MORE = 1
"""The minutes a Dutch notebook may take beyond its English twin's (the guide's note says so)."""


def test_the_pilot_has_dutch_twins():
    assert {p.relative_to(TWINS / "nl").as_posix() for p in DUTCH} >= {
        "00-start-here.nl.py",
        "06-thresholds.nl.py",
        "exercises/ex2-choose-a-threshold.nl.py",
    }


@pytest.mark.parametrize("dutch", DUTCH, ids=lambda p: p.relative_to(TWINS).as_posix())
def test_a_dutch_notebook_has_its_english_twins_sections_and_class_time(dutch):
    english = TWINS / dutch.relative_to(TWINS / "nl").with_name(dutch.name.replace(".nl.py", ".py"))
    assert [optional for _, optional, _, _ in notebook_sections(dutch)] == [
        optional for _, optional, _, _ in notebook_sections(english)
    ], "the Dutch sections are not the English ones"
    if dutch.parent.name == "exercises":
        assert 0 <= class_minutes(dutch) - class_minutes(english) <= MORE  # the work itself: the same in both
        return
    for core_only in (False, True):
        extra = class_minutes(dutch, core_only) - class_minutes(english, core_only)
        assert 0 <= extra <= MORE, (dutch.name, core_only, extra)


def test_the_guide_says_the_dutch_notebooks_take_their_english_twins_time():
    text = GUIDE.read_text(encoding="utf-8")
    section = text[text.index("## The Dutch edition") :].split("\n## ", 1)[0]
    assert re.search(r"English twin.s class time or at most a minute\s+more", section, re.S)


def twin(folder, name: str, closing: str = ""):
    """A py:percent twin: a taught section with a code cell, then ``closing`` (markdown) and one more code cell."""
    path = folder / f"{name}.py"
    text = "# %% [markdown]\n# ## Taught\n#\n# " + "word " * 50 + "\n\n# %%\nx = 1\n"
    path.write_text(text + (f"\n# %% [markdown]\n{closing}\n\n# %%\ny = 2\n" if closing else ""), encoding="utf-8")
    return path


@pytest.mark.parametrize("heading", ["Sources", "Bronnen"])
def test_a_notebooks_sources_take_no_class_time_in_either_language(tmp_path, heading):
    references = "\n".join(
        f"# - Author {n} (2009), A long title of a work about ranking, a venue [key{n}]" for n in range(40)
    )
    listed = twin(tmp_path, "listed", f"# ## {heading}\n#\n{references}")
    assert [name for name, *_ in notebook_sections(listed)] == ["(opening)", "Taught"]
    assert class_minutes(listed) == class_minutes(twin(tmp_path, "bare"))
    # only the exact heading: a taught section whose name begins with the word is class time
    taught = twin(tmp_path, "taught", f"# ## {heading} of error\n#\n{references}")
    assert [name for name, *_ in notebook_sections(taught)] == ["(opening)", "Taught", f"{heading} of error"]
    assert class_minutes(taught) > class_minutes(listed)
