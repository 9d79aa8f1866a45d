"""A class on one hub: with the teacher's shared cache filled, a student's course computes no vector at all."""

import hashlib
import importlib.util
import json
import os
import secrets
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jupytext
import pandas as pd
import pytest

import ragkit.teach.course
from harness.hub import (
    Hub,
    HubUnavailable,
    follow_pull_link,
    pull_link,
    reachable_by_others,
    restore_modes,
    seed_cache,
    work_through,
)
from ragkit.embedding import Embedder, default_embedder
from ragkit.plumbing.cache import CACHE_FILE, CacheWarning, finish_shared
from ragkit.plumbing.locations import cache_dir
from ragkit.teach.classroom import class_repo, workspace
from ragkit.teach.lesson import tables

from conftest import ROOT

ROOT_DIR = ROOT
DATA = ROOT_DIR / "data"
DOC = "02-gradient-descent"
STRATEGIES = "AE"


@pytest.fixture
def small_course(tmp_path):
    """One bundled document with its own questions and every out-of-domain query: the student's path, small."""
    data = tmp_path / "data"
    (data / "corpus").mkdir(parents=True)
    shutil.copy(DATA / "corpus" / f"{DOC}.md", data / "corpus")
    lines = (DATA / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    mine = [line for line in lines if line.strip() and json.loads(line)["doc_id"] == DOC]
    assert mine, f"no bundled question is about {DOC}"
    (data / "questions.jsonl").write_text("\n".join(mine) + "\n", encoding="utf-8")
    shutil.copy(DATA / "out_of_domain.jsonl", data)
    return data


def _fresh_process(monkeypatch, **env: Path | None) -> None:
    """What a new kernel sees: these cache variables, and no course or embedder loaded yet."""
    for name, value in env.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, str(value))
    ragkit.teach.course.load.cache_clear()
    default_embedder.cache_clear()


def _run(data: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    course = ragkit.teach.course.load(data, progress=False)
    sweep = course.sweep("E", "dense")
    evaluation = course.evaluation(STRATEGIES)
    return tables.per_cut(sweep), tables.figures(evaluation)


def _forget(monkeypatch) -> None:
    default_embedder().cache.close()
    ragkit.teach.course.load.cache_clear()
    default_embedder.cache_clear()


@pytest.mark.slow
def test_a_student_with_the_shared_cache_filled_computes_no_vector(small_course, tmp_path, monkeypatch):
    teacher, student = tmp_path / "shared", tmp_path / "student"
    _fresh_process(monkeypatch, RAGKIT_CACHE=teacher, RAGKIT_SHARED_CACHE=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the teacher's fill may warn about long chunks; not under test
        expected = _run(small_course)
    _forget(monkeypatch)
    finish_shared(teacher)
    for p in [teacher, *teacher.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        _fresh_process(monkeypatch, RAGKIT_CACHE=student, RAGKIT_SHARED_CACHE=teacher)
        loaded = property(lambda self: pytest.fail("a student's kernel loaded the model"))
        monkeypatch.setattr(Embedder, "model", loaded)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            got = _run(small_course)
        assert not [w for w in seen if issubclass(w.category, CacheWarning)]
        pd.testing.assert_frame_equal(got[0], expected[0])
        pd.testing.assert_frame_equal(got[1], expected[1])
        # the private cache was never even created: every lookup was answered by the shared layer
        assert not (student / CACHE_FILE).exists()
    finally:
        _forget(monkeypatch)
        for p in [teacher, *teacher.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)


# -- a class on a real JupyterHub ------------------------------------------------------------------------------

GUIDE = ROOT_DIR / "docs" / "deploy-jupyterhub.md"
EX2_NB = "notebooks/exercises/ex2-choose-a-threshold.ipynb"
MY_EX2 = "my-notebooks/exercises/ex2-choose-a-threshold.ipynb"  # the student's copy (classroom/workspace.py)
MY_EX2_UPDATED = "my-notebooks/exercises/ex2-choose-a-threshold-updated.ipynb"
TEACHER_TITLE = (
    "Exercise 2. Choose a threshold when a bluff costs five refusals",
    "Exercise 2. Choose a threshold when a bluff costs five refusals (revised by your teacher)",
)


def _needs(what: str) -> None:
    """Skip where this machine lacks something the hub needs; CI must have it, so there it is a failure."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what}; CI provisions it (.ci/run, make test)")
    pytest.skip(f"{what}; CI runs this test")


def _guide_fill_commands(shared: Path) -> list[str]:
    """The guide's section-2 commands that fill the shared cache, `sudo` dropped and the paths substituted."""
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("## 2.", 1)[1].split("\n## ", 1)[0]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    commands = []
    for line in block.splitlines():
        line = line.replace("sudo -E ", "").replace("sudo ", "")
        line = line.replace("/srv/ragkit-shared", str(shared)).replace("/opt/tljh/user/bin/python", sys.executable)
        commands.append(line)
    assert any("ragkit warm" in c for c in commands) and any("finish_shared" in c for c in commands), block
    return commands


def _seed(suite_cache: Path, shared: Path) -> int:
    """Copy the suite's own vectors and ONNX export into the (empty) shared folder: the fill then embeds nothing."""
    seed_cache(suite_cache, shared, CACHE_FILE)
    return _rows(shared)


def _rows(cache: Path) -> int:
    if not (cache / CACHE_FILE).is_file():
        return 0
    db = sqlite3.connect(f"file:{cache / CACHE_FILE}?mode=ro", uri=True)
    try:  # closed at once: a reader left open would keep the teacher's finish from leaving WAL mode
        return db.execute("SELECT count(*) FROM vectors").fetchone()[0]
    finally:
        db.close()


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(folder.rglob("*"))
    }


def _git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def _clean(checkout: Path) -> None:
    """The student's clone is as the teacher published it: nothing modified, nothing untracked that git would see."""
    # --no-optional-locks: status must not refresh the student's .git/index as root (a file of root's in their home)
    status = _git(
        "--no-optional-locks",
        "-c",
        f"safe.directory={checkout}",
        "status",
        "--porcelain",
        "--untracked-files=all",
        cwd=checkout,
    )
    assert status == "", f"{checkout} is dirty:\n{status}"


def _files_of(uids: set[int], folders: list[Path], since: float) -> list[tuple[int, Path]]:
    """Every file or folder under these folders that belongs to one of these uids and changed since ``since`` (a
    time.time()), links not followed: a uid is reused once its user is deleted, so older files are a former user's."""
    found = []
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder):
            for name in dirnames + filenames:
                p = Path(dirpath) / name
                try:
                    st = p.lstat()
                except OSError:
                    continue
                uid = st.st_uid
                if uid in uids and st.st_ctime >= since:
                    found.append((uid, p))
    return found


@pytest.mark.slow
def test_a_class_on_a_real_jupyterhub_pulls_works_offline_and_is_graded():
    """A real hub on 127.0.0.1 from docs/jupyterhub_config.py: four students pull, work, pull again, are graded.

    As root (CI, this machine) the students are real system users, each with a uid and a home
    (LocalProcessSpawner); otherwise they share the runner's uid, each with a home of their own.
    """

    if importlib.util.find_spec("jupyterhub") is None or importlib.util.find_spec("nbgitpuller") is None:
        _needs("jupyterhub or nbgitpuller is not installed (the test extra)")
    if shutil.which("git") is None:
        _needs("no git here")
    started, since = time.monotonic(), time.time()
    real = os.geteuid() == 0
    print(f"\nstudents are {'real system users (root here)' if real else 'homes of one user (not root here)'}")
    work = Path(tempfile.mkdtemp(prefix="ragkit-hub-"))
    work.chmod(0o755)
    shared = work / "ragkit-shared"
    # the students' uids must start this Python and import ragkit from this checkout
    opened = (
        reachable_by_others(
            [Path(sys.executable), Path(sys.prefix), ROOT_DIR, *[Path(p) for p in sys.path if p and Path(p).exists()]]
        )
        if real
        else []
    )
    if opened:
        print("made traversable (x only) for the students' uids, put back afterwards:", [str(p) for p, _ in opened])
    # git refuses a repository owned by another user ("dubious ownership") unless told it is safe: a file://
    # repository of root's needs this for the students' git, one from https:// (the guide's link) does not
    bare = work / "teacher" / "ragkit"
    safe = work / "gitconfig"
    safe.write_text(f"[safe]\n\tdirectory = {bare}\n")
    hub = Hub(work, shared, real_users=real, environment={"GIT_CONFIG_GLOBAL": str(safe)})
    kernel_dirs: set[Path] = set()
    try:
        # the class's repository (the guide's section 0: no solutions, no teacher's guide), served as file://
        # (nbgitpuller clones and pulls it)
        checkout = work / "teacher" / "checkout"
        bare.parent.mkdir()
        _git("init", "--quiet", "--bare", str(bare))
        written = subprocess.run(
            [sys.executable, "-m", "ragkit", "class-repo", str(work / "teacher" / "class")],
            cwd=ROOT_DIR,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert written.returncode == 0, written.stderr
        _git("push", "--quiet", bare.as_uri(), "HEAD:refs/heads/main", cwd=work / "teacher" / "class")
        _git("symbolic-ref", "HEAD", "refs/heads/main", cwd=bare)
        # the teacher fills the shared cache with the guide's commands, seeded from the suite's own cache
        seeded = _seed(cache_dir(), shared)
        env = {k: v for k, v in os.environ.items() if k != "RAGKIT_SHARED_CACHE"}
        for command in _guide_fill_commands(shared):
            done = subprocess.run(
                ["bash", "-c", command], env=env, cwd=ROOT_DIR, capture_output=True, text=True, timeout=900
            )
            assert done.returncode == 0, (command, done.stdout[-1000:], done.stderr[-2000:])
        assert _rows(shared) == seeded, "the fill embedded what the suite's cache already held"
        assert not os.stat(shared).st_mode & 0o222
        before = _digest(shared)

        try:
            hub.start()
        except HubUnavailable as exc:
            _needs(str(exc))
        tag = secrets.token_hex(2)
        students = [hub.add_student(f"rk{tag}s{i}") for i in range(4)]
        link = pull_link(bare.as_uri(), "main")  # the guide's link (section 6): the workspace opens 00
        for s in students:
            hub.spawn(s)
            _, landed = follow_pull_link(hub, s, link)
            assert landed == f"/user/{s.name}/lab/tree/ragkit/my-notebooks/00-start-here.ipynb", landed
            assert (s.home / "ragkit" / "notebooks" / "06-thresholds.ipynb").is_file()
            assert (s.home / "ragkit" / "my-notebooks" / "06-thresholds.ipynb").is_file()
            pulled = [
                p
                for p in (s.home / "ragkit").rglob("*")
                if "solutions" in p.name or p.name in ("teacher-guide.md", "grading.md")
            ]
            assert not pulled, f"the class pulled answers: {pulled[:3]}"
        print("spawn seconds:", [round(s.spawn_s, 1) for s in students], f"({time.monotonic() - started:.0f} s in)")

        solution = jupytext.read(ROOT_DIR / "notebooks" / "twins" / "solutions" / "ex2-choose-a-threshold.py")
        right = next(c.source for c in solution.cells if c.cell_type == "code" and "my_cut = " in c.source)
        answers = [right, "my_cut = 1.0  # your answer", None, None]

        def one(i: int) -> tuple[dict, dict]:
            return (
                work_through(hub, students[i], "my-notebooks/06-thresholds.ipynb")[1],
                work_through(hub, students[i], MY_EX2, answers[i])[1],
            )

        with ThreadPoolExecutor(len(students)) as pool:
            reports = list(pool.map(one, range(len(students))))
        for s, (r06, rex) in zip(students, reports):
            for r in (r06, rex):
                assert not r["errors"], (s.name, r["errors"])
                assert r["models"] == [], f"{s.name}'s kernel imported an embedding model: {r['models']}"
                assert (r["uid"], r["home"]) == (s.uid, str(s.home))
            assert r06["slider_s"] < 60
            # no student computed a vector: the private cache was not even created
            assert _rows(s.home / ".ragkit-cache") == 0
            # run and saved with outputs, in the copies only: the clone is as the teacher published it
            assert '"output_type"' in (s.home / "ragkit" / MY_EX2).read_text(encoding="utf-8")
            _clean(s.home / "ragkit")
        print(
            "06 opened to slider answered (s):",
            [round(r[0]["slider_s"], 1) for r in reports],
            f"({time.monotonic() - started:.0f} s into the test)",
        )
        assert _digest(shared) == before, "the shared cache changed"
        if real:
            uids = {s.uid: s for s in students}
            for uid, p in _files_of(set(uids), [Path("/tmp"), Path("/dev/shm"), Path("/var/tmp"), ROOT_DIR], since):
                home = uids[uid].home
                if p == home or home in p.parents:
                    continue
                # the one exception: the kernels' unix sockets, in a private folder when the home's path is too
                # long for a socket (ragkit.teach.classroom.workspace._short_sockets), removed when the server stops
                sockets = next((q for q in [p, *p.parents] if q.parent == Path("/tmp")), p)
                assert (
                    sockets.name.startswith("ragkit-kernels-")
                    and sockets.lstat().st_uid == uid
                    and sockets.lstat().st_mode & 0o777 == 0o700
                ), f"{uids[uid].name} left {p} outside their home"
                kernel_dirs.add(sockets)
            for s in students:
                strangers = [p for p in s.home.rglob("*") if p.lstat().st_uid != s.uid]
                assert not strangers, f"in {s.name}'s home, files of someone else: {strangers[:3]}"

        # the teacher revises ex2 in their clone of the course and writes the class's repository again, into the
        # folder it wrote before (the guide's section 0): the next commit, pushed as a fast-forward; the student who
        # answered ex2 wrong follows the link again
        _git("clone", "--quiet", str(ROOT_DIR), str(checkout))
        revised = checkout / EX2_NB
        revised.write_text(revised.read_text(encoding="utf-8").replace(*TEACHER_TITLE), encoding="utf-8")
        _git(
            "-c",
            "user.name=teacher",
            "-c",
            "user.email=teacher@example.org",
            "commit",
            "--quiet",
            "-am",
            "ex2: a revised title",
            cwd=checkout,
        )
        again = class_repo.release(checkout, work / "teacher" / "class")
        assert again.earlier is not None and again.changed, again
        _git("push", "--quiet", bare.as_uri(), "HEAD:refs/heads/main", cwd=work / "teacher" / "class")
        events, landed = follow_pull_link(hub, students[1], link)
        clone = students[1].home / "ragkit"
        assert landed == f"/user/{students[1].name}/lab/tree/ragkit/my-notebooks/00-start-here.ipynb", landed
        # the pull succeeded as a fast-forward: the student's clone is the teacher's commit, no merge, no WIP commit
        pushed = again.head
        assert _git("-c", f"safe.directory={clone}", "rev-parse", "HEAD", cwd=clone).strip() == pushed, events[-5:]
        assert TEACHER_TITLE[1] in (clone / EX2_NB).read_text(encoding="utf-8"), "the teacher's change did not arrive"
        _clean(clone)
        # the student's edited copy is kept as it was; the teacher's new version is beside it (workspace.UPDATED)
        mine = (clone / MY_EX2).read_text(encoding="utf-8")
        assert "my_cut = 1.0  # your answer" in mine, "the student's answer was lost"
        assert '"output_type"' in mine, "the student's outputs were lost"
        assert TEACHER_TITLE[1] not in mine, "the student's copy was overwritten"
        # as JupyterLab opens it (workspace.as_opened: with the kernel's language_info), so it opens saved
        assert (clone / MY_EX2_UPDATED).read_bytes() == workspace.as_opened((clone / EX2_NB).read_bytes()), (
            "no teacher's version beside it"
        )

        # the teacher grades ex2 over the students' homes
        out = work / "teacher" / "grades.json"
        # not work/teacher: its bare repository is a folder named ragkit, which `python -m ragkit` run from there
        # imports as a namespace package (an editable install's finder comes after the current folder)
        grading = work / "grading"
        grading.mkdir()
        notebooks = sorted(str(s.home / "ragkit" / MY_EX2) for s in students)
        done = subprocess.run(
            [sys.executable, "-m", "ragkit", "grade", *notebooks, "--jobs", "2", "--json", str(out)],
            env={**env, "RAGKIT_SHARED_CACHE": str(shared)},
            capture_output=True,
            text=True,
            timeout=900,
            cwd=grading,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        print(done.stdout)
        table = json.loads(out.read_text())["grades"]
        grades = {g["student"]: g for g in table if g["exercise"] == "ex2"}
        assert set(grades) == {s.name for s in students}
        assert grades[students[0].name]["grade"] == "yes", grades[students[0].name]
        assert grades[students[1].name]["grade"] == "not yet" and grades[students[1].name]["numbers"]["cut"] == 1.0
        for s in students[2:]:
            assert grades[s.name]["grade"] == "not yet" and "set `my_cut`" in grades[s.name]["reason"]
        # only ex2 was handed to the grader: every other exercise of every student is missing, none was run
        assert {g["grade"] for g in table if g["exercise"] != "ex2"} == {"missing"}
        assert _digest(shared) == before
    except BaseException:
        print(hub.tail())
        raise
    finally:
        hub.stop()
        left = sorted(d for d in kernel_dirs if d.exists())
        for d in left:
            shutil.rmtree(d, ignore_errors=True)
        restore_modes(opened)
        for p in [work, *work.rglob("*")]:
            if p.is_dir() and not p.is_symlink():
                p.chmod(0o755)
        shutil.rmtree(work, ignore_errors=True)
        print(f"hub test: {time.monotonic() - started:.0f} s")
    print("kernel socket folders outside the homes (removed when the servers stopped):", sorted(map(str, kernel_dirs)))
    assert not left, f"a stopped server left its kernel socket folder behind: {left}"


def test_the_guide_shows_the_hub_configuration_the_hub_test_starts_from():
    """One file: the guide's section 3 shows docs/jupyterhub_config.py verbatim, and the harness loads that path."""
    from harness.hub import CONFIG

    config = (ROOT_DIR / "docs" / "jupyterhub_config.py").read_text(encoding="utf-8")
    assert CONFIG == ROOT_DIR / "docs" / "jupyterhub_config.py"
    section = GUIDE.read_text(encoding="utf-8").split("## 3.", 1)[1].split("\n## ", 1)[0]
    assert f"```python\n{config.rstrip()}\n```" in section
    assert "c.Spawner.environment" in config and '"RAGKIT_CACHE": "~/.ragkit-cache"' in config


def test_the_guide_links_to_the_workspace_and_its_servers_load_the_settings_that_serve_it():
    """Section 6's link is the one the hub test follows, and the config's settings folder enables the workspace."""
    from harness.hub import pull_link

    guide = GUIDE.read_text(encoding="utf-8")
    section = guide.split("## 6.", 1)[1].split("\n## ", 1)[0]
    link = pull_link("https://github.com/OWNER/REPO", "main").replace("OWNER", "<owner>").replace("REPO", "<repo>")
    assert f"https://<your hub>{link}\n" in section, link
    assert "urlpath=ragkit%2Fworkspace%3Ffolder%3D<repo>%26open%3D00-start-here.ipynb" in link
    assert "lab%2Ftree" not in guide, "a link that opens the tracked notebooks"
    config = _guide_config()
    folder = config.Spawner.environment["JUPYTER_CONFIG_PATH"]
    assert folder == "/srv/ragkit/binder" and "git clone https://github.com/<owner>/<repo> /srv/ragkit\n" in guide
    settings = json.loads(
        (ROOT_DIR / Path(folder).relative_to("/srv/ragkit") / "jupyter_server_config.json").read_text(encoding="utf-8")
    )
    assert settings["ServerApp"]["jpserver_extensions"]["ragkit.teach.classroom.workspace"] is True
    assert settings["KernelManager"]["transport"] == "ipc"


def _guide_config():
    """docs/jupyterhub_config.py run as JupyterHub runs it (``get_config`` given); the config it builds."""
    from traitlets.config import Config

    config = Config()
    namespace = {"get_config": lambda: config}
    exec(
        compile(
            (ROOT_DIR / "docs" / "jupyterhub_config.py").read_text(encoding="utf-8"), "jupyterhub_config.py", "exec"
        ),
        namespace,
    )
    return config


@pytest.mark.slow
def test_a_single_user_server_run_as_root_starts_only_with_allow_root(tmp_path):
    """The guide's root case: as root with a spawner that keeps root, the spawn fails without --allow-root."""
    if os.geteuid() != 0:
        pytest.skip("needs root: only a server started as root refuses to start")
    if importlib.util.find_spec("jupyterhub") is None:
        _needs("jupyterhub is not installed (the test extra)")
    work = Path(tempfile.mkdtemp(prefix="ragkit-hub-root-"))
    try:
        for allow, expected in ((False, "fails"), (True, "starts")):
            hub = Hub(work / str(allow), work / "no-shared-cache", real_users=False, allow_root=allow)
            hub.work.mkdir()
            try:
                try:
                    hub.start()
                except HubUnavailable as exc:
                    _needs(str(exc))
                student = hub.add_student("rootcase")
                try:
                    hub.spawn(student, timeout=120)
                    got = "starts"
                except (RuntimeError, OSError):
                    got = "fails"
                assert got == expected, (allow, hub.tail())
                if not allow:
                    log = hub.tail(10**7)
                    assert "Use --allow-root to bypass" in log, "the server's own refusal is in the hub's log"
                    assert "InvalidStateError: Exception is not set" in log, "all the hub itself says (the guide)"
                else:
                    assert hub.processes(student)[0], "the server runs, as root, in the student's home"
            finally:
                hub.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
