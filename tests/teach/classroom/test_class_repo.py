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
        found[twin.name] = {
            line for line in code if len(line) > 25 and line not in {g.strip() for g in given} and line not in library
        }
    return found


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("class") / "ragkit-class"
    done = subprocess.run(
        [sys.executable, "-m", "ragkit", "class-repo", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return out, done.stdout


def test_the_class_repository_holds_no_solution_and_no_teachers_answer(written):
    out, said = written
    files = [p for p in out.rglob("*") if p.is_file() and ".git" not in p.relative_to(out).parts]
    names = {p.relative_to(out).as_posix() for p in files}
    assert not [n for n in names if "solutions/" in n], "a solution file is in the class's copy"
    assert not [n for n in names if n.startswith("teacher/")], "the teacher's tools compute exercise 2's answer"
    assert "docs/teacher-guide.md" not in names and "docs/grading.md" not in names
    answers = answer_lines()
    assert all(answers.values()), answers  # every solution has lines of its own to look for
    text = {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8", errors="replace") for p in files}
    for solution, lines in answers.items():
        leaked = [(n, line) for line in lines for n, t in text.items() if line in t]
        assert not leaked, f"{solution}'s answer is in the class's copy: {leaked[:3]}"
    for notebook in (
        "00-start-here",
        "01-chunking",
        "06-thresholds",
        "08-production",
        "exercises/ex1-destroyed-needle",
        "exercises/ex5-cite-your-own-document",
        "exercises/ex6-rank-metrics-by-hand",
        "exercises/ex7-choose-efsearch",
        "nl/exercises/ex6-rank-metrics-by-hand.nl",
        "nl/exercises/ex2-choose-a-threshold.nl",
    ):
        assert f"notebooks/{notebook}.ipynb" in names, notebook
    for needed in (
        "binder/postBuild",
        "environment.yml",
        "Makefile",
        "pyproject.toml",
        "ragkit/__main__.py",
        "ragkit/cli/__init__.py",
        "data/questions.jsonl",
        "book/build.py",
    ):
        assert needed in names, needed
    assert os.access(out / "binder" / "postBuild", os.X_OK)
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("> **This is the class's copy of the course**")
    assert "(docs/teacher-guide.md)" not in readme and "teacher's guide (in the public repository)" in readme
    assert "left out" in said and "push" in said


def test_the_class_repository_is_one_commit_a_hub_can_clone(written, tmp_path):
    out, _ = written
    assert (
        subprocess.run(["git", "status", "--porcelain"], cwd=out, capture_output=True, text=True, check=True).stdout
        == ""
    )
    assert (
        subprocess.run(
            ["git", "rev-list", "--count", "HEAD"], cwd=out, capture_output=True, text=True, check=True
        ).stdout.strip()
        == "1"
    )
    clone = tmp_path / "pulled"
    subprocess.run(["git", "clone", "--quiet", "--branch", "main", out.as_uri(), str(clone)], check=True)
    assert (clone / "notebooks" / "exercises" / "ex2-choose-a-threshold.ipynb").is_file()


def test_a_folder_in_use_or_inside_the_clone_is_refused(tmp_path):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "keep.txt").write_text("mine")
    with pytest.raises(InputError, match="not an empty folder"):
        class_repo.release(ROOT, tmp_path / "used")
    with pytest.raises(InputError, match="inside the clone"):
        class_repo.release(ROOT, ROOT / "class-copy")
    assert (tmp_path / "used" / "keep.txt").read_text() == "mine" and not (ROOT / "class-copy").exists()


def test_links_to_what_is_left_out_become_plain_text():
    text, n = class_repo._unlinked(
        "See the [guide](docs/teacher-guide.md#x) and [data](data/corpus) and "
        "[web](https://x.example/docs/grading.md).",
        class_repo.PurePosixPath("README.md"),
    )
    assert n == 1 and text == (
        "See the guide (in the public repository) and [data](data/corpus) and [web](https://x.example/docs/grading.md)."
    )
    text, n = class_repo._unlinked("[grading](grading.md)", class_repo.PurePosixPath("docs/deploy-jupyterhub.md"))
    assert n == 1


def test_the_class_repositorys_links_lead_to_the_class_not_to_the_public_solutions(tmp_path):
    from ragkit.teach.classroom import address

    done = class_repo.release(ROOT, tmp_path / "class", "https://github.com/uni-x/rag-class-2027", "spring")
    assert done.repository == "https://github.com/uni-x/rag-class-2027"
    assert address.Address.load(tmp_path / "class") == address.Address(
        "https://github.com/uni-x/rag-class-2027", "spring"
    )
    assert address.check(tmp_path / "class") == []  # every carrier written with the class's address
    assert "uni-x/rag-class-2027" in (tmp_path / "class" / "notebooks" / "00-start-here.ipynb").read_text()
    with pytest.raises(InputError, match="not a GitHub address"):
        class_repo.release(ROOT, tmp_path / "other", "evil; rm -rf ~")
    assert not (tmp_path / "other").exists()


def test_the_class_copys_make_targets_for_what_it_leaves_out_say_where_those_are(written):
    """Defect: `make test`, `make check` and `make bench` ran tests/ and benchmarks/, which the copy leaves out (they
    run the worked solutions): pytest found nothing and `make test` started tests/binder_venv.py, which is not there."""
    out, _ = written
    for target in ("test", "check", "bench"):
        done = subprocess.run(["make", "-n", target], cwd=out, capture_output=True, text=True, timeout=60)
        said = (done.stdout + done.stderr).replace(str(out), "OUT")  # under make (CI), make -n names its folder
        assert (
            "public repository" in said
            and "pytest" not in said
            and "benchmarks" not in said.replace("no tests or benchmarks", "")
        ), (target, said)
        assert "pip install" not in said, f"make {target} installs a venv first: {said}"
    lab = subprocess.run(["make", "-n", "lab"], cwd=out, capture_output=True, text=True, timeout=60)
    assert lab.returncode == 0 and "jupyter lab" in lab.stdout, lab.stdout + lab.stderr
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "make test" in readme.split("\n\n", 1)[0]  # the notice says where the tests are


def _commit(folder, message):
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "--quiet", "-am", message],
        cwd=folder,
        check=True,
    )


def test_the_next_version_is_the_next_commit_so_the_class_pulls_it(tmp_path):
    """Defect: the guide said to write the class's repository again into a new folder and push it: a new history,
    which the class's repository refuses without --force and which nbgitpuller cannot merge into a student's clone
    ("refusing to merge unrelated histories"). Written into the folder it wrote before, the next version is one
    commit more, its address kept, and a student's clone fast-forwards to it."""
    source = tmp_path / "source"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(source)], check=True)
    first = class_repo.release(source, tmp_path / "class", "https://github.com/uni-x/rag-class-2027")
    assert first.earlier is None
    served = tmp_path / "served.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(tmp_path / "class"), str(served)], check=True)
    student = tmp_path / "student"
    subprocess.run(["git", "clone", "--quiet", served.as_uri(), str(student)], check=True)

    ex2 = source / "notebooks" / "exercises" / "ex2-choose-a-threshold.ipynb"
    ex2.write_text(ex2.read_text(encoding="utf-8").replace("Exercise 2.", "Exercise 2 (revised)."), encoding="utf-8")
    solution = source / "notebooks" / "solutions" / "ex2-choose-a-threshold.ipynb"
    solution.write_text(
        solution.read_text(encoding="utf-8").replace("Exercise 2", "Exercise 2 NEW ANSWER"), encoding="utf-8"
    )
    _commit(source, "ex2 revised")
    second = class_repo.release(source, tmp_path / "class")
    assert second.earlier == first.head and second.changed, second
    assert "next commit" in str(second)
    log = subprocess.run(
        ["git", "log", "--format=%s"], cwd=tmp_path / "class", capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert len(log) == 2, log
    from ragkit.teach.classroom import address

    assert address.Address.load(tmp_path / "class").repository == "https://github.com/uni-x/rag-class-2027"
    assert address.check(tmp_path / "class") == []
    subprocess.run(["git", "push", "--quiet", served.as_uri(), "main"], cwd=tmp_path / "class", check=True)
    subprocess.run(["git", "pull", "--quiet", "--ff-only"], cwd=student, check=True)
    pulled = (student / "notebooks" / "exercises" / "ex2-choose-a-threshold.ipynb").read_text(encoding="utf-8")
    assert "Exercise 2 (revised)." in pulled and "uni-x/rag-class-2027" in pulled
    assert not (student / "notebooks" / "solutions").exists()
    assert "NEW ANSWER" not in "".join(
        p.read_text(errors="replace") for p in student.rglob("*") if p.is_file() and ".git" not in p.parts
    )

    third = class_repo.release(source, tmp_path / "class")
    assert not third.changed and "nothing changed" in str(third)
    (tmp_path / "class" / "notes.txt").write_text("the teacher's own file")
    with pytest.raises(InputError, match="commit or remove"):
        class_repo.release(source, tmp_path / "class")
    assert (tmp_path / "class" / "notes.txt").is_file()


def test_the_notice_names_the_source_without_the_credentials_in_its_address(tmp_path):
    """Defect: the class's README named the clone's origin as git had it, and a teacher who cloned with a token in the
    URL (https://USER:TOKEN@host/...) handed the token to the class."""
    source = tmp_path / "source"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(source)], check=True)
    subprocess.run(
        ["git", "remote", "set-url", "origin", "https://user-ruth:ghp_s3cret@github.com/uni-x/ragkit.git"],
        cwd=source,
        check=True,
    )
    class_repo.release(source, tmp_path / "class")
    notice = (tmp_path / "class" / "README.md").read_text(encoding="utf-8").split("\n\n", 1)[0]
    assert "https://github.com/uni-x/ragkit.git" in notice and "s3cret" not in notice and "ruth" not in notice
