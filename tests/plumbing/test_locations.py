"""Where data, cache and hub models are found: argument, environment, checkout, installed package."""

import pytest

from ragkit.__main__ import main
from ragkit.errors import DataError
from ragkit.plumbing import locations
from ragkit.teach.course import load

from conftest import ROOT


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """ragkit as pip installs it: no checkout beside the package, the course packaged in ragkit/_data."""
    packaged = tmp_path / "site-packages" / "ragkit" / "_data"
    (packaged / "corpus").mkdir(parents=True)
    (packaged / "questions.jsonl").write_text("")
    monkeypatch.setattr(locations, "SOURCE_ROOT", tmp_path / "site-packages")
    monkeypatch.setattr(locations, "PACKAGED_DATA", packaged)
    for name in (locations.DATA_ENV, locations.CACHE_ENV, locations.MODELS_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    return packaged


def a_course(folder):
    (folder / "corpus").mkdir(parents=True)
    (folder / "questions.jsonl").write_text("")
    return folder


def test_a_checkout_uses_its_own_data_cache_and_models(monkeypatch):
    for name in (locations.DATA_ENV, locations.CACHE_ENV, locations.MODELS_ENV):
        monkeypatch.delenv(name, raising=False)
    assert locations.checkout() == ROOT
    assert locations.data_dir() == ROOT / "data"
    assert locations.cache_dir() == ROOT / ".ragkit-cache"
    assert locations.models_dir() == ROOT / "models"


def test_an_installed_ragkit_reads_its_packaged_course_and_writes_to_the_user_cache(installed, tmp_path):
    assert locations.checkout() is None
    assert locations.data_dir() == installed
    assert locations.cache_dir() == tmp_path / "xdg-cache" / "ragkit"
    assert locations.models_dir() == tmp_path / "xdg-data" / "ragkit" / "models"
    assert "site-packages" not in str(locations.cache_dir())


def test_order_argument_then_environment_then_checkout(tmp_path, monkeypatch):
    env, arg = a_course(tmp_path / "env"), a_course(tmp_path / "arg")
    monkeypatch.setenv("RAGKIT_DATA", str(env))
    assert locations.data_dir() == env
    assert locations.data_dir(arg) == arg
    monkeypatch.setenv("RAGKIT_DATA", "")
    assert locations.data_dir() == ROOT / "data"


def test_environment_beats_the_checkout_for_cache_and_models(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path / "c"))
    monkeypatch.setenv("RAGKIT_MODELS_DIR", str(tmp_path / "m"))
    assert locations.cache_dir() == tmp_path / "c"
    assert locations.models_dir() == tmp_path / "m"


def _no_questions(p):
    (p / "corpus").mkdir(parents=True)


def _no_corpus(p):
    p.mkdir()
    (p / "questions.jsonl").write_text("")


@pytest.mark.parametrize(
    "make, says",
    [
        (lambda p: None, "does not exist or is not a folder"),
        (lambda p: p.mkdir(), "is empty"),
        (_no_questions, "has no questions.jsonl"),
        (_no_corpus, "has no corpus/ folder"),
    ],
)
def test_a_bad_ragkit_data_names_the_variable_and_says_what_to_do(tmp_path, monkeypatch, make, says):
    folder = tmp_path / "course"
    make(folder)
    monkeypatch.setenv("RAGKIT_DATA", str(folder))
    with pytest.raises(DataError, match=rf"RAGKIT_DATA = .*{says}: point RAGKIT_DATA at a folder"):
        locations.data_dir()


def test_the_command_line_reports_a_bad_ragkit_data_without_a_traceback(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGKIT_DATA", str(tmp_path / "nowhere"))
    assert main(["corpus-stats"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: RAGKIT_DATA = ") and "Traceback" not in err


def test_an_explicit_option_still_wins_on_the_command_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGKIT_DATA", str(tmp_path / "nowhere"))
    assert main(["corpus-stats", "--corpus", str(ROOT / "data" / "corpus")]) == 0
    assert "13 documents loaded" in capsys.readouterr().out


def test_course_load_follows_ragkit_data(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGKIT_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(DataError, match="RAGKIT_DATA"):
        load.__wrapped__()
