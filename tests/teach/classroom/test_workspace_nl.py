"""The student's workspace offers the Dutch pilot: ``my-notebooks/nl/...`` is copied and refreshed like the rest,
the command says where it is (in Dutch), and the course's link ``/ragkit/workspace?open=nl/...`` opens the copy."""

import shutil
import urllib.parse

import nbformat
import pytest

from ragkit.teach.classroom import workspace

from conftest import ROOT

PILOT = ("nl/00-start-here.nl.ipynb", "nl/06-thresholds.nl.ipynb", "nl/exercises/ex2-choose-a-threshold.nl.ipynb")


@pytest.fixture
def course(tmp_path):
    """A course folder with an English notebook, the pilot's three Dutch ones and a Dutch catalogue (not a notebook)."""
    for rel in ("00-start-here.ipynb", *PILOT):
        path = tmp_path / "notebooks" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"# {rel}")]), path)
    (tmp_path / "notebooks" / "nl" / "catalogue").mkdir()
    (tmp_path / "notebooks" / "nl" / "catalogue" / "00-start-here.toml").write_text("[[cell]]\n")
    return tmp_path


def test_the_dutch_notebooks_are_copied_into_my_notebooks_nl_and_the_command_says_so_in_dutch(course):
    done = workspace.refresh(course)
    mine = course / workspace.COPIES
    assert set(PILOT) <= set(done.copied)
    for rel in PILOT:
        assert (mine / rel).read_bytes() == workspace.as_opened((course / "notebooks" / rel).read_bytes())
    assert not (mine / "nl" / "catalogue").exists(), "a catalogue is not a notebook"
    said = str(done)
    assert (
        "The course in English: my-notebooks/, starting with 00-start-here.ipynb. In het Nederlands: "
        "my-notebooks/nl/, begin met 00-start-here.nl.ipynb (`make lab-nl` opent het voortaan)."
    ) in said
    edited = nbformat.read(mine / PILOT[2], as_version=4)
    edited.cells[0].source = "my_cut = 0.675"  # the student's work in the Dutch ex2 is kept on the next refresh
    nbformat.write(edited, mine / PILOT[2])
    teachers = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("# new")])
    nbformat.write(teachers, course / "notebooks" / PILOT[2])
    again = workspace.refresh(course)
    assert again.kept == ((PILOT[2], f"my-notebooks/{PILOT[2].removesuffix('.ipynb')}-updated.ipynb"),)
    assert nbformat.read(mine / PILOT[2], as_version=4).cells[0].source == "my_cut = 0.675"
    assert "In het Nederlands" in str(again)


def test_an_english_only_course_says_nothing_in_dutch(course):
    shutil.rmtree(course / "notebooks" / "nl")
    assert "Nederlands" not in str(workspace.refresh(course))


def test_the_dutch_copies_links_lead_where_the_tracked_ones_do(course):
    """Each copy sits as deep under my-notebooks/ as its notebook under notebooks/: a link climbing to the project
    folder (the Dutch 00's ``../../data/corpus/...``) opens the same file from either."""
    (course / "data" / "corpus").mkdir(parents=True)
    done = workspace.refresh(course)
    for rel in PILOT:
        assert rel in done.copied
        up = "/".join([".."] * rel.count("/")) + "/../data/corpus"
        tracked, mine = course / "notebooks" / rel, course / workspace.COPIES / rel
        assert mine.is_file(), f"refresh did not copy {rel} to {mine}"
        project_data = (course / "data" / "corpus").resolve()
        assert (mine.parent / up).resolve() == (tracked.parent / up).resolve() == project_data, rel


@pytest.mark.slow  # a Jupyter server
def test_the_course_link_opens_the_students_copy_of_a_dutch_notebook(course, tmp_path_factory):
    from test_autosave import Server

    shutil.copytree(ROOT / "binder", course / "binder")  # the server settings that enable the workspace link
    server = Server(course, tmp_path_factory.mktemp("jupyter"))
    try:
        for rel in PILOT:
            status, location = server.request("POST", "/ragkit/workspace?open=" + urllib.parse.quote(rel), follow=False)
            assert status == 302, (status, location, server.log.read_text()[-2000:])
            assert urllib.parse.unquote(urllib.parse.urlsplit(location).path).endswith(f"/lab/tree/my-notebooks/{rel}")
            assert (course / workspace.COPIES / rel).is_file()
    finally:
        server.stop()


def test_the_course_link_opens_the_chosen_languages_start_and_make_lab_nl_keeps_the_choice(monkeypatch):
    from ragkit.teach.classroom import workspace

    monkeypatch.delenv(workspace.CHOICE_ENV, raising=False)
    assert workspace.start() == "00-start-here.ipynb"
    monkeypatch.setenv(workspace.CHOICE_ENV, "nl")
    assert workspace.start() == "nl/00-start-here.nl.ipynb"
    monkeypatch.setenv(workspace.CHOICE_ENV, "klingon")  # a choice nobody offers is the English course, not an error
    assert workspace.start() == "00-start-here.ipynb"
    assert workspace.CHOICE_ENV != "RAGKIT_LANGUAGE"  # a kernel's language: an English notebook must stay English
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    # make lab-nl writes the choice beside the venv and runs lab, which reads it and hands it to the server
    assert "lab-nl: $(STAMP)\n\t@echo nl > $(LANGUAGE_CHOICE)" in makefile
    assert "lab-en: $(STAMP)\n\t@echo en > $(LANGUAGE_CHOICE)" in makefile
    assert 'cat $(LANGUAGE_CHOICE) 2>/dev/null)" = nl ]; then language=nl' in makefile
    assert "RAGKIT_COURSE_LANGUAGE=$$language $(BIN)/jupyter lab" in makefile
