"""The repository a class pulls: the course as committed, with no worked solution and no teacher's answer in it."""

import os
import subprocess
import sys

import jupytext
import pytest

from ragkit.errors import InputError
from ragkit.teach.classroom import class_repo

from conftest import ROOT


def answer_lines() -> dict[str, set[str]]:
    """Per solution: its code lines that neither the exercise nor ragkit's own code has (the answer), long enough to
    be its own (a library call the package itself makes is not an answer)."""
    library = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "ragkit").rglob("*.py"))
    found = {}
    for twin in sorted((ROOT / "notebooks" / "twins" / "solutions").glob("*.py")):
        exercise = ROOT / "notebooks" / "twins" / "exercises" / twin.name
        given = set(exercise.read_text(encoding="utf-8").splitlines())
        solved = jupytext.read(twin)
        code = {line.strip() for c in solved.cells if c.cell_type == "code" for line in c.source.splitlines()}
        found[twin.name] = {line for line in code if len(line) > 25 and line not in {g.strip() for g in given}
                            and line not in library}
    return found


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("class") / "ragkit-class"
    done = subprocess.run([sys.executable, "-m", "ragkit", "class-repo", str(out)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    return out, done.stdout


def test_the_class_repository_holds_no_solution_and_no_teachers_answer(written):
    out, said = written
    files = [p for p in out.rglob("*") if p.is_file() and ".git" not in p.relative_to(out).parts]
    names = {p.relative_to(out).as_posix() for p in files}
    assert not [n for n in names if "solutions/" in n], "a solution file is in the class's copy"
    assert "docs/teacher-guide.md" not in names and "docs/grading.md" not in names
    answers = answer_lines()
    assert all(answers.values()), answers  # every solution has lines of its own to look for
    text = {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8", errors="replace") for p in files}
    for solution, lines in answers.items():
        leaked = [(n, line) for line in lines for n, t in text.items() if line in t]
        assert not leaked, f"{solution}'s answer is in the class's copy: {leaked[:3]}"
    for notebook in ("00-start-here", "01-chunking", "06-thresholds", "08-production", "exercises/ex1-destroyed-needle",
                     "exercises/ex5-cite-your-own-document", "nl/exercises/ex2-choose-a-threshold"):
        assert f"notebooks/{notebook}.ipynb" in names, notebook
    for needed in ("binder/postBuild", "environment.yml", "Makefile", "pyproject.toml", "ragkit/__main__.py",
                   "data/questions.jsonl", "book/build.py"):
        assert needed in names, needed
    assert os.access(out / "binder" / "postBuild", os.X_OK)
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("> **This is the class's copy of the course**")
    assert "(docs/teacher-guide.md)" not in readme and "teacher's guide (in the public repository)" in readme
    assert "left out" in said and "push" in said


def test_the_class_repository_is_one_commit_a_hub_can_clone(written, tmp_path):
    out, _ = written
    assert subprocess.run(["git", "status", "--porcelain"], cwd=out, capture_output=True, text=True,
                          check=True).stdout == ""
    assert subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=out, capture_output=True, text=True,
                          check=True).stdout.strip() == "1"
    clone = tmp_path / "pulled"
    subprocess.run(["git", "clone", "--quiet", "--branch", "main", out.as_uri(), str(clone)], check=True)
    assert (clone / "notebooks" / "exercises" / "ex2-choose-a-threshold.ipynb").is_file()


def test_a_folder_in_use_or_inside_the_clone_is_refused(tmp_path):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "keep.txt").write_text("mine")
    with pytest.raises(InputError, match="not an empty folder"):
        class_repo.write(ROOT, tmp_path / "used")
    with pytest.raises(InputError, match="inside the clone"):
        class_repo.write(ROOT, ROOT / "class-copy")
    assert (tmp_path / "used" / "keep.txt").read_text() == "mine" and not (ROOT / "class-copy").exists()


def test_links_to_what_is_left_out_become_plain_text():
    text, n = class_repo._unlinked("See the [guide](docs/teacher-guide.md#x) and [data](data/corpus) and "
                                   "[web](https://x.example/docs/grading.md).", class_repo.PurePosixPath("README.md"))
    assert n == 1 and text == ("See the guide (in the public repository) and [data](data/corpus) and "
                               "[web](https://x.example/docs/grading.md).")
    text, n = class_repo._unlinked("[grading](grading.md)", class_repo.PurePosixPath("docs/deploy-jupyterhub.md"))
    assert n == 1


def test_the_class_repositorys_links_lead_to_the_class_not_to_the_public_solutions(tmp_path):
    from ragkit.teach.classroom import address

    done = class_repo.write(ROOT, tmp_path / "class", "https://github.com/uni-x/rag-class-2027", "spring")
    assert done.repository == "https://github.com/uni-x/rag-class-2027"
    assert address.Address.load(tmp_path / "class") == address.Address("https://github.com/uni-x/rag-class-2027",
                                                                       "spring")
    assert address.check(tmp_path / "class") == []  # every carrier written with the class's address
    assert "uni-x/rag-class-2027" in (tmp_path / "class" / "notebooks" / "00-start-here.ipynb").read_text()
    with pytest.raises(InputError, match="not a GitHub address"):
        class_repo.write(ROOT, tmp_path / "other", "evil; rm -rf ~")
    assert not (tmp_path / "other").exists()
