"""The course's sources: every English notebook ends with the works it relies on, each named by its key in
docs/sources.md, the bibliography; every entry there has a year and a venue, and a notebook cites it or it says it
is background. The Dutch pilot ends with the same keys under its own heading."""

import re
import unicodedata
from pathlib import Path

import jupytext
import pytest

from ragkit.teach.classroom import edition

from conftest import ROOT

NOTEBOOKS = ROOT / "notebooks"
TWINS = NOTEBOOKS / "twins"
ENGLISH = [
    *sorted(TWINS.glob("0*.py")),
    *sorted((TWINS / "exercises").glob("*.py")),
    *sorted((TWINS / "solutions").glob("*.py")),
]
BIBLIOGRAPHY = ROOT / "docs" / "sources.md"
KEY = r"[a-z]+[0-9]{4}[a-z]?"
CITED = re.compile(rf"\[({KEY})\]$")
ENTRY = re.compile(rf"^- \*\*\[({KEY})\]\*\* ", re.M)
USE, BACKGROUND = "*Used for:*", "*Background:*"


def twin_id(path: Path) -> str:
    return path.relative_to(TWINS).as_posix()


def entries(text: str) -> dict[str, str]:
    """The bibliography's entries by key: each list item that opens with a bold key, up to the next item or heading."""
    found: dict[str, str] = {}
    for match in ENTRY.finditer(text):
        body = re.split(r"\n(?=- |#|\n)", text[match.end() :], maxsplit=1)[0]
        assert match[1] not in found, f"the key {match[1]} opens two entries"
        found[match[1]] = " ".join(body.split())
    return found


def sources_cell(path: Path, heading: str = "## Sources") -> str:
    """The source of a twin's last cell, which must be a markdown cell opening with ``heading``."""
    last = jupytext.read(path).cells[-1]
    assert last.cell_type == "markdown" and last.source.startswith(heading + "\n"), (
        f"{twin_id(path)} does not end with a `{heading}` cell"
    )
    return last.source


def cited(source: str) -> list[str]:
    """The keys a Sources cell names: one at the end of each item of its list."""
    items = [line for line in source.splitlines() if line.startswith("- ")]
    keys = [match[1] for line in items if (match := CITED.search(line))]
    assert len(keys) == len(items), f"an item names no key at its end: {items}"
    return keys


def every_citation() -> dict[str, list[str]]:
    return {twin_id(path): cited(sources_cell(path)) for path in ENGLISH}


def test_the_english_notebooks_are_the_twelve_main_ones_and_seven_exercises_with_their_solutions():
    names = [twin_id(path) for path in ENGLISH]
    assert len([n for n in names if "/" not in n]) == 12 and "02b-statistics-further.py" in names
    assert {n.split("/")[0] for n in names if "/" in n} == {"exercises", "solutions"}
    assert [n for n in names if n.startswith("exercises/")] == [
        n.replace("solutions/", "exercises/") for n in names if n.startswith("solutions/")
    ]
    assert len(names) == 26


@pytest.mark.parametrize("path", ENGLISH, ids=twin_id)
def test_every_english_notebook_ends_with_its_sources_and_points_to_the_bibliography(path):
    source = sources_cell(path)
    assert cited(source), f"{twin_id(path)} names no source"
    assert len(set(cited(source))) == len(cited(source)), f"{twin_id(path)} names a source twice"
    targets = edition.link_targets(source)
    assert len(targets) == 1 and targets[0].endswith("docs/sources.md"), targets
    # relative to the notebook students open (notebooks/<rel>.ipynb), not to the twin
    notebook = NOTEBOOKS / path.relative_to(TWINS).with_suffix(".ipynb")
    assert (notebook.parent / targets[0]).resolve() == BIBLIOGRAPHY.resolve()


def test_every_key_a_notebook_names_is_in_the_bibliography():
    known = entries(BIBLIOGRAPHY.read_text(encoding="utf-8"))
    unknown = {name: [k for k in keys if k not in known] for name, keys in every_citation().items()}
    assert not any(unknown.values()), {name: keys for name, keys in unknown.items() if keys}


def test_every_entry_is_cited_by_a_notebook_or_marked_background():
    used = {key for keys in every_citation().values() for key in keys}
    for key, entry in entries(BIBLIOGRAPHY.read_text(encoding="utf-8")).items():
        if BACKGROUND in entry:
            assert key not in used, f"{key} is marked background, yet a notebook cites it: say what it is used for"
        else:
            assert key in used, f"no notebook cites {key}: cite it where the course relies on it, or mark it background"


def ascii_surname(reference: str) -> str:
    """The first author's surname, without accents and lower-cased, as a key spells it (Järvelin: jarvelin)."""
    surname = reference.split(",", 1)[0]
    return unicodedata.normalize("NFKD", surname).encode("ascii", "ignore").decode().lower()


def entry_problems(key: str, entry: str) -> list[str]:
    """What an entry lacks: its year after the authors, a key of the first author's surname and that year, a venue
    (in italics after the title), and one sentence saying what the course uses it for or that it is background."""
    parts = re.split(r"(\*Used for:\*|\*Background:\*)", entry, maxsplit=1)
    if len(parts) != 3:
        return [f"{key}: says neither {USE} nor {BACKGROUND}"]
    reference, _, use = parts
    problems = []
    year = YEAR.search(reference)
    if year is None:
        problems.append(f"{key}: no year after the authors")
    elif key != ascii_surname(reference) + year[1]:
        problems.append(f"{key}: the key is not the first author's surname and the year")
    if not VENUE.search(reference):
        problems.append(f"{key}: no venue in italics after the title")
    if not use.strip().endswith(".") or ". " in use.strip():
        problems.append(f"{key}: its use is not one sentence")
    return problems


YEAR = re.compile(r"^[^()]+ \((\d{4})\)\. ")
VENUE = re.compile(r"\)\. [^*]+?\. \*[^*]{4,}\*")


def test_every_entry_has_a_year_a_venue_and_one_sentence_on_its_use():
    found = entries(BIBLIOGRAPHY.read_text(encoding="utf-8"))
    assert len(found) >= 18
    problems = [problem for key, entry in found.items() for problem in entry_problems(key, entry)]
    assert not problems, "\n".join(problems)


GOOD = (
    "- **[holm1979]** Holm, S. (1979). A Simple Sequentially Rejective Multiple Test Procedure. "
    "*Scandinavian Journal of Statistics* 6(2), 65–70.\n  *Used for:* the step-down correction.\n"
)


@pytest.mark.parametrize(
    "broken, said",
    [
        (GOOD.replace(" (1979)", ""), "no year"),
        (GOOD.replace("holm1979", "holm1980"), "not the first author's surname"),
        (GOOD.replace("*Scandinavian Journal of Statistics*", "Scandinavian Journal of Statistics"), "no venue"),
        (GOOD.replace("correction.", "correction. Twice."), "not one sentence"),
        (GOOD.replace("*Used for:* ", ""), "says neither"),
    ],
)
def test_a_broken_entry_is_named_with_what_it_lacks(broken, said):
    assert [entry_problems(key, entry) for key, entry in entries(GOOD).items()] == [[]]
    ((key, entry),) = entries(broken).items()
    assert any(said in problem for problem in entry_problems(key, entry)), entry_problems(key, entry)


@pytest.mark.parametrize("name", edition.COURSE)
def test_the_dutch_pilot_ends_with_the_same_sources_under_its_own_heading(name):
    english = TWINS / f"{name}.py"
    dutch = edition.twin_path(NOTEBOOKS, name)
    assert cited(sources_cell(dutch, "## Bronnen")) == cited(sources_cell(english))
