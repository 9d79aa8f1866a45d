"""The course's address is one setting (book/book.toml), written everywhere by ragkit.teach.classroom.address.

The committed notebooks, twins, README and docs are what the generator writes from the committed setting; setting
an address writes it into every Colab cell and link and nothing else, and putting the placeholder back gives the
committed files byte for byte.
"""

import shutil
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import jupytext
import pytest

import book.build as book
from ragkit.__main__ import main
from ragkit.errors import InputError
from ragkit.teach.classroom import address
from ragkit.teach.classroom.address import PLACEHOLDER, Address
from ragkit.teach.classroom.edition import same_code

from conftest import ROOT

PUBLISHED = Address.parse("https://github.com/someone/course", "v2")


def first_code_cell(path: Path) -> str:
    nb = jupytext.read(path)
    return next(c for c in nb.cells if c.cell_type == "code").source


def other_cells(path: Path) -> list[tuple[str, str]]:
    nb = jupytext.read(path)
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    return [(c.cell_type, c.source) for i, c in enumerate(nb.cells) if i != first]


@pytest.fixture
def course(tmp_path) -> Path:
    """A copy of every file the address is written into, and of the setting."""
    root = tmp_path / "course"
    shutil.copytree(ROOT / "notebooks", root / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copytree(ROOT / "docs", root / "docs")
    (root / "book").mkdir()
    shutil.copy(ROOT / address.SETTING, root / address.SETTING)
    shutil.copy(ROOT / "README.md", root / "README.md")
    return root


def test_the_committed_files_carry_the_committed_address():
    assert address.check(ROOT) == [], "run `make address` and commit what it wrote"
    assert main(["address", "--check"]) == 0


def test_the_address_is_the_one_the_book_reads_and_its_links_are_the_books(tmp_path):
    settings = book.Settings.load()
    assert (Address.load(ROOT).repository, Address.load(ROOT).branch) == (settings.repository, settings.branch)
    (tmp_path / "book.toml").write_text(address.setting_text(PUBLISHED))
    published = book.Settings.load(tmp_path / "book.toml")
    assert (published.repository, published.branch) == (PUBLISHED.repository, PUBLISHED.branch)
    for page in book.pages():
        assert PUBLISHED.colab(page.rel) == published.colab(page.rel)
        workspace = quote("ragkit/workspace?open=" + quote(page.rel, safe="/"), safe="")
        assert PUBLISHED.binder(workspace) == published.binder(page.rel)


def test_setting_the_address_writes_it_into_every_colab_cell_and_link_and_nothing_else(course):
    carriers = address.carriers(course)
    before = {path: path.read_text(encoding="utf-8") for path in carriers}
    notebooks = [p for p in carriers if p.suffix in (".ipynb", ".py")]
    assert len(notebooks) == 2 * len(list((course / "notebooks").rglob("*.ipynb"))) >= 46
    kept = {path: other_cells(path) for path in notebooks}

    written = address.write(course, PUBLISHED)

    assert Address.load(course) == PUBLISHED and course / address.SETTING in written
    cell = address.colab_cell(PUBLISHED)
    assert '"ragkit @ git+https://github.com/someone/course@v2"' in cell
    for path in notebooks:
        written_cell = first_code_cell(path)
        if "nl" in path.relative_to(course).parts:  # a translated notebook keeps its comment and sentences, in Dutch
            assert same_code(cell, written_cell) and written_cell.startswith("# "), path
            assert cell.splitlines()[8] in written_cell.splitlines(), path  # the address's line is the new one
        else:
            assert written_cell == cell, path
        assert other_cells(path) == kept[path], f"{path}: a cell other than the Colab cell changed"
    texts = {path: path.read_text(encoding="utf-8") for path in carriers}
    for path, text in texts.items():
        assert "OWNER/ragkit" not in text, path  # the cell's own test for the placeholder names no repository
        assert "github.com/<owner>" not in text and "%2F<owner>" not in text, path
    settings = book.Settings.load(course / address.SETTING)
    readme = texts[course / "README.md"]
    for page in book.pages():
        if "/" not in page.rel:
            assert f"({settings.colab(page.rel)})" in readme
    assert f"({settings.colab('nl/06-thresholds.nl.ipynb')})" in readme
    assert (
        "`https://mybinder.org/v2/gh/someone/course/v2?urlpath=ragkit%2Fworkspace%3Fopen%3D00-start-here.ipynb`"
        in readme
    )
    guide = texts[course / "docs" / "deploy-jupyterhub.md"]
    assert "sudo git clone https://github.com/someone/course /srv/ragkit\n" in guide
    link = guide.split("https://<your hub>", 1)[1].split("\n", 1)[0]
    query = parse_qs(urlsplit(link).query)
    assert (query["repo"], query["branch"]) == (["https://github.com/someone/course"], ["v2"])
    assert parse_qs(urlsplit(query["urlpath"][0]).query) == {"folder": ["course"], "open": ["00-start-here.ipynb"]}
    assert address.check(course) == []
    assert address.write(course) == [], "a second run writes nothing"

    back = address.write(course, Address(PLACEHOLDER, "main"))
    assert {path: path.read_text(encoding="utf-8") for path in carriers} == before
    assert set(back) == {course / address.SETTING} | {p for p in carriers if texts[p] != before[p]}


def test_the_unset_address_keeps_the_guides_pattern_and_the_books_colab_links():
    unset = Address(PLACEHOLDER)
    assert not unset.is_set and PUBLISHED.is_set
    assert unset.shown().repository == "https://github.com/<owner>/<repo>"
    assert unset.pull("00-start-here.ipynb") == (
        "/hub/user-redirect/git-pull?repo=https%3A%2F%2Fgithub.com%2FOWNER"
        "%2Fragkit&branch=main&urlpath=ragkit%2Fworkspace%3Ffolder%3Dragkit"
        "%26open%3D00-start-here.ipynb"
    )
    assert unset.shown().pull("00-start-here.ipynb") == (
        "/hub/user-redirect/git-pull?repo=https%3A%2F%2Fgithub.com%2F<owner>%2F<repo>&branch=main"
        "&urlpath=ragkit%2Fworkspace%3Ffolder%3D<repo>%26open%3D00-start-here.ipynb"
    )


def test_a_file_edited_by_hand_is_named(course):
    twin = course / "notebooks" / "twins" / "06-thresholds.py"
    twin.write_text(
        twin.read_text(encoding="utf-8").replace("OWNER/ragkit@main", "someone/else@main"), encoding="utf-8"
    )
    readme = course / "README.md"
    readme.write_text(
        readme.read_text(encoding="utf-8").replace(
            "github/OWNER/ragkit/blob/main/notebooks/01-chunking", "github/me/fork/blob/main/notebooks/01-chunking"
        ),
        encoding="utf-8",
    )
    assert [stale.where for stale in address.check(course)] == ["notebooks/twins/06-thresholds.py", "README.md"]
    assert set(address.write(course)) == {readme, twin} and address.check(course) == []


def test_a_notebook_whose_first_code_cell_is_not_the_colab_cell_is_refused(course):
    twin = course / "notebooks" / "twins" / "05-distances.py"
    twin.write_text(
        twin.read_text(encoding="utf-8").replace('if "google.colab" in sys.modules:', "if False:"), encoding="utf-8"
    )
    with pytest.raises(InputError, match=r"05-distances.py: the first code cell is not the Colab cell"):
        address.check(course)


@pytest.mark.parametrize(
    "repository, branch, fault",
    [
        ("https://gitlab.com/someone/course", "main", "not a GitHub address"),
        ('https://github.com/someone/course"; import os #', "main", "not a GitHub address"),
        ("https://github.com/someone", "main", "not a GitHub address"),
        ("https://github.com/someone/course/tree/main", "main", "not a GitHub address"),
        ("https://github.com/someone/course", "v2 --upgrade", "not a branch or tag name"),
        ("https://github.com/someone/course", "../x", "not a branch or tag name"),
        ("https://github.com/someone/course", "", "not a branch or tag name"),
    ],
)
def test_an_address_that_would_break_a_cell_or_a_link_is_refused(repository, branch, fault):
    with pytest.raises(InputError, match=fault):
        Address.parse(repository, branch)


def test_a_broken_setting_names_its_file(course):
    setting = course / address.SETTING
    setting.write_text('repository = "https://github.com/someone/course"\nbranch = "main\n')
    with pytest.raises(InputError, match=r"book.toml is not valid TOML"):
        Address.load(course)
    setting.write_text('branch = "main"\n')
    with pytest.raises(InputError, match=r"book.toml needs repository"):
        Address.load(course)
    setting.write_text('repository = "git@github.com:someone/course.git"\n')
    with pytest.raises(InputError, match=r"book.toml: repository .* is not a GitHub address"):
        Address.load(course)
    setting.unlink()
    with pytest.raises(InputError, match=r"book.toml is missing"):
        Address.load(course)


def test_check_refuses_an_address_and_writes_nothing(capsys):
    setting = (ROOT / address.SETTING).read_text(encoding="utf-8")
    assert main(["address", "--check", "https://github.com/someone/course"]) == 1
    assert "--check writes nothing" in capsys.readouterr().err
    assert (ROOT / address.SETTING).read_text(encoding="utf-8") == setting


def test_every_colab_cell_is_folded_away_from_a_reader_and_still_runs():
    """Issue 67, item 6: each notebook opened with a 15-line Colab cell showing github.com/OWNER/ragkit."""
    notebooks = [p for p in address.carriers(ROOT) if p.suffix in (".ipynb", ".py")]
    assert len(notebooks) > 20
    for path in notebooks:
        nb = jupytext.read(path)
        cell = next(c for c in nb.cells if c.cell_type == "code")
        assert cell.metadata.get("jupyter", {}).get("source_hidden") is True, f"{path.name}: its Colab cell is open"
        assert "tags" not in cell.metadata or "skip-execution" not in cell.metadata["tags"]
