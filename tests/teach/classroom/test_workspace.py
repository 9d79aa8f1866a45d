"""my-notebooks/: the student's copies, made from notebooks/ and refreshed without losing a notebook the student
changed; git ignores them, their relative links lead where the tracked ones' do, and the book never reads them."""

import json
import os
import subprocess
import sys

import nbformat
import pytest

from ragkit.errors import InputError
from ragkit.teach.classroom import workspace

from conftest import ROOT


def notebook(*sources: str) -> str:
    return nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources]))


@pytest.fixture
def course(tmp_path):
    """A course folder with two tracked notebooks, one in exercises/, and a twin that is not a notebook."""
    (tmp_path / "notebooks" / "exercises").mkdir(parents=True)
    (tmp_path / "notebooks" / "twins").mkdir()
    (tmp_path / "notebooks" / "00-start.ipynb").write_text(notebook("x = 1"))
    (tmp_path / "notebooks" / "exercises" / "ex1.ipynb").write_text(notebook("answer = None"))
    (tmp_path / "notebooks" / "twins" / "00-start.py").write_text("x = 1\n")
    return tmp_path


def run(path):
    """The notebook as a student leaves it after running it: outputs and counts, cells unchanged."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        cell.execution_count, cell.outputs = 1, [nbformat.v4.new_output("stream", name="stdout", text="ran\n")]
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.write(nb, path)


def edit(path, source):
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source = source
    nbformat.write(nb, path)


def test_a_first_refresh_copies_every_notebook_and_nothing_else(course):
    done = workspace.refresh(course)
    mine = course / "my-notebooks"
    assert done.copied == ("00-start.ipynb", "exercises/ex1.ipynb")
    assert (mine / "00-start.ipynb").read_bytes() == workspace.as_opened(
        (course / "notebooks" / "00-start.ipynb").read_bytes()
    )
    assert not (mine / "twins").exists()
    assert "Your notebooks are in" in str(done) and "00-start.ipynb" in str(done)
    again = workspace.refresh(course)
    assert (again.copied, again.updated, again.kept, again.unchanged) == ((), (), (), 2)
    assert "All 2 notebooks are up to date." in str(again)


def test_a_refresh_brings_the_teachers_update_and_never_overwrites_a_students_change(course):
    workspace.refresh(course)
    mine = course / "my-notebooks"
    run(mine / "00-start.ipynb")  # only run: the teacher's new version may replace it
    edit(mine / "exercises" / "ex1.ipynb", "answer = 0.675")  # the student's work: kept
    (course / "notebooks" / "00-start.ipynb").write_text(notebook("x = 2"))
    (course / "notebooks" / "exercises" / "ex1.ipynb").write_text(notebook("answer = None  # between 0 and 1"))
    (course / "notebooks" / "01-new.ipynb").write_text(notebook("y = 1"))
    done = workspace.refresh(course)
    assert done.copied == ("01-new.ipynb",) and done.updated == ("00-start.ipynb",)
    assert done.kept == (("exercises/ex1.ipynb", "my-notebooks/exercises/ex1-updated.ipynb"),)
    assert nbformat.read(mine / "00-start.ipynb", as_version=4).cells[0].source == "x = 2"
    assert nbformat.read(mine / "exercises" / "ex1.ipynb", as_version=4).cells[0].source == "answer = 0.675"
    beside = mine / "exercises" / "ex1-updated.ipynb"
    assert beside.read_bytes() == workspace.as_opened((course / "notebooks" / "exercises" / "ex1.ipynb").read_bytes())
    assert "Kept your exercises/ex1.ipynb (you changed it)" in str(done)
    edit(beside, "answer = 0.7")  # the student works in the updated copy too: a later refresh keeps it
    (course / "notebooks" / "exercises" / "ex1.ipynb").write_text(notebook("answer = None  # third version"))
    later = workspace.refresh(course)
    assert nbformat.read(beside, as_version=4).cells[0].source == "answer = 0.7"
    assert "not written" in later.kept[0][1]


def test_an_updated_copy_the_student_left_alone_takes_the_teachers_next_version(course):
    """Defect: the updated copy was written as JupyterLab opens it (with language_info) but filed under the source's
    sha, so the next refresh took it for the student's work and refused to bring the third version."""
    workspace.refresh(course)
    mine = course / "my-notebooks"
    edit(mine / "exercises" / "ex1.ipynb", "answer = 0.675")
    source = course / "notebooks" / "exercises" / "ex1.ipynb"
    source.write_text(notebook("answer = None  # second version"))
    workspace.refresh(course)
    source.write_text(notebook("answer = None  # third version"))
    later = workspace.refresh(course)
    beside = mine / "exercises" / "ex1-updated.ipynb"
    assert later.kept == (("exercises/ex1.ipynb", "my-notebooks/exercises/ex1-updated.ipynb"),), later.kept
    assert nbformat.read(beside, as_version=4).cells[0].source == "answer = None  # third version"


def test_a_notebook_the_student_deleted_comes_back_and_a_stray_file_counts_as_theirs(course):
    workspace.refresh(course)
    mine = course / "my-notebooks"
    (mine / "00-start.ipynb").unlink()
    (mine / "exercises" / "ex1.ipynb").write_text("not a notebook")
    (course / "notebooks" / "exercises" / "ex1.ipynb").write_text(notebook("answer = 1"))
    done = workspace.refresh(course)
    assert done.copied == ("00-start.ipynb",)
    assert (mine / "exercises" / "ex1.ipynb").read_text() == "not a notebook"  # theirs, whatever it is
    assert done.kept[0][0] == "exercises/ex1.ipynb"


def test_a_workspace_that_is_not_a_folder_is_refused_with_what_to_do(course, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (course / "my-notebooks").symlink_to(elsewhere)
    with pytest.raises(InputError, match="move it away"):
        workspace.refresh(course)
    assert list(elsewhere.iterdir()) == []


def test_no_course_folder_says_where_to_run_it(tmp_path):
    with pytest.raises(InputError, match="run this from the course's folder"):
        workspace.project(tmp_path)


def test_the_copies_are_ignored_by_git_and_keep_their_links():
    """At the depth of notebooks/, so ``../data/corpus/x.md`` (00's link) and ``exercises/...`` resolve the same."""
    ignored = subprocess.run(["git", "check-ignore", "-q", "my-notebooks/00-start-here.ipynb"], cwd=ROOT)
    assert ignored.returncode == 0, "my-notebooks/ is not in .gitignore"
    mine = ROOT / workspace.COPIES
    assert (mine / ".." / "data" / "corpus").resolve() == (ROOT / "notebooks" / ".." / "data" / "corpus").resolve()


def test_the_book_reads_the_tracked_notebooks_only():
    from book.build import pages

    assert all(p.path.parent.is_relative_to(ROOT / "notebooks") for p in pages())
    assert not any(workspace.COPIES in p.path.parts for p in pages())


def test_the_command_says_where_the_students_work_lives(course):
    done = subprocess.run(
        [sys.executable, "-m", "ragkit", "workspace", "--project", str(course)],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert f"Your notebooks are in {course / 'my-notebooks'}" in done.stdout
    manifest = json.loads((course / "my-notebooks" / workspace.MANIFEST).read_text())
    assert sorted(manifest["copied"]) == ["00-start.ipynb", "exercises/ex1.ipynb"]


def test_the_shipped_server_settings_use_unix_sockets_and_the_workspace_link():
    """What `make lab`, Binder's postBuild and a hub install (the Makefile says why)."""
    settings = json.loads((ROOT / "binder" / "jupyter_server_config.json").read_text())
    assert settings["KernelManager"]["transport"] == "ipc"
    assert settings["ServerApp"]["jpserver_extensions"] == {"ragkit.teach.classroom.workspace": True}
    makefile = (ROOT / "Makefile").read_text()
    assert "binder/jupyter_server_config.json" in makefile and "'--LabApp.default_url=/ragkit/workspace'" in makefile
    assert "binder/jupyter_server_config.json" in (ROOT / "binder" / "postBuild").read_text()


@pytest.mark.slow  # starts JupyterLab
def test_the_link_make_lab_prints_logs_in_and_opens_the_students_copy_of_00(tmp_path):
    """Defect: `make lab` printed ``/ragkit/workspace?open=00-start-here.ipynb?token=…`` (jupyter_server appends
    ``?token=`` to the default URL), so the link in the terminal lost its token and asked for a password."""
    import re
    import shlex
    import time
    import urllib.error
    import urllib.parse
    import urllib.request

    from test_autosave import NoRedirect, free_port

    (default,) = re.findall(r"'--LabApp\.default_url=([^']*)'", (ROOT / "Makefile").read_text())
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, capture_output=True)
    config = tmp_path / "config"
    config.mkdir()
    (config / "jupyter_server_config.json").write_text((ROOT / "binder" / "jupyter_server_config.json").read_text())
    port, log = free_port(), tmp_path / "lab.log"
    argv = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        f"--port={port}",
        "--ip=127.0.0.1",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={clone}",
        f"--LabApp.default_url={default}",
        *(["--allow-root"] if os.geteuid() == 0 else []),
    ]
    env = dict(
        os.environ,
        PYTHONPATH=str(clone),
        JUPYTER_CONFIG_PATH=str(config),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTER_DATA_DIR=str(tmp_path / "data"),
    )
    with open(log, "w") as out:
        lab = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=clone)
    try:
        deadline, printed = time.monotonic() + 90, []
        while not printed:
            printed = re.findall(rf"http://127\.0\.0\.1:{port}/\S+", log.read_text())
            assert lab.poll() is None and time.monotonic() < deadline, f"{shlex.join(argv)}:\n{log.read_text()}"
            time.sleep(0.25)
        import http.cookiejar

        browser = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), NoRedirect()
        )
        with browser.open(printed[0], timeout=60) as page:  # the page that POSTs itself, as the browser runs it
            form = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', page.read().decode()))
        action = f"http://127.0.0.1:{port}/ragkit/workspace"
        try:
            browser.open(urllib.request.Request(action, urllib.parse.urlencode(form).encode()), timeout=60)
            raise AssertionError(f"{printed[0]} answered without a redirect")
        except urllib.error.HTTPError as exc:
            status, location = exc.code, exc.headers.get("Location")
    finally:
        lab.terminate()
        lab.wait(30)
    assert status == 302 and location.endswith("/lab/tree/my-notebooks/00-start-here.ipynb"), (printed[0], location)
    assert (clone / "my-notebooks" / "00-start-here.ipynb").is_file()


def test_worked_solutions_are_never_copied_into_a_students_workspace(course):
    (course / "notebooks" / "solutions").mkdir()
    (course / "notebooks" / "solutions" / "ex1.ipynb").write_text(notebook("answer = 42"))
    (course / "notebooks" / "nl" / "solutions").mkdir(parents=True)
    (course / "notebooks" / "nl" / "solutions" / "ex2.ipynb").write_text(notebook("answer = 43"))
    done = workspace.refresh(course)
    assert done.copied == ("00-start.ipynb", "exercises/ex1.ipynb")
    assert not (course / "my-notebooks" / "solutions").exists()
    assert not (course / "my-notebooks" / "nl" / "solutions").exists()


def test_a_manifest_nested_100000_deep_is_no_manifest_not_a_crash(course):
    workspace.refresh(course)
    (course / "my-notebooks" / workspace.MANIFEST).write_text("[" * 100_000 + "]" * 100_000)
    edit(course / "notebooks" / "00-start.ipynb", "x = 2")  # the teacher's update meets a manifest that is none
    done = workspace.refresh(course)
    assert done.kept and done.kept[0][0] == "00-start.ipynb"  # unknown history: the copy is kept, the update beside it
    out = subprocess.run(
        [sys.executable, "-m", "ragkit", "workspace", "--project", str(course)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr


@pytest.mark.slow  # a Jupyter server
def test_the_course_link_changes_files_only_on_a_post_another_site_cannot_forge(course, tmp_path_factory):
    """Defect: a GET rewrote files, so a page on another site could make a logged-in student's browser recreate a
    notebook. A GET now answers with a page that POSTs itself with Jupyter's XSRF token; only that POST writes."""
    import http.cookiejar
    import re
    import shutil
    import urllib.error
    import urllib.parse
    import urllib.request

    from test_autosave import TOKEN, NoRedirect, Server

    shutil.copytree(ROOT / "binder", course / "binder")
    server = Server(course, tmp_path_factory.mktemp("jupyter"))
    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect())
    link = server.base + "/ragkit/workspace?open=exercises%2Fex1.ipynb"

    def send(method, url, data=None, origin=None):
        req = urllib.request.Request(url, data=data, method=method, headers={"Origin": origin} if origin else {})
        try:
            with browser.open(req, timeout=60) as answer:
                return answer.status, answer.read().decode(), answer.headers.get("Location")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors="replace"), exc.headers.get("Location")

    try:
        send("GET", server.base + f"/api/status?token={TOKEN}")  # logs the browser in: the student's cookie
        assert any("login" in c.name or c.name.startswith("username") for c in jar), [c.name for c in jar]
        status, page, _ = send("GET", link, origin="http://evil.example")  # what another site's <img> or link sends
        assert status == 200 and not (course / "my-notebooks").exists(), status
        assert 'method="post"' in page and 'name="_xsrf"' in page and "document.forms[0].submit()" in page
        with browser.open(link, timeout=60) as answer:  # nor can another site run the page hidden in its own frame
            assert "frame-ancestors 'self'" in answer.headers.get("Content-Security-Policy", ""), answer.headers
        assert not (course / "my-notebooks").exists()
        form = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', page))
        forged = urllib.parse.urlencode({"open": form["open"], "folder": form["folder"]}).encode()
        status, _, _ = send("POST", server.base + "/ragkit/workspace", forged, origin="http://evil.example")
        assert status == 404 and not (course / "my-notebooks").exists(), status  # another site's: refused (origin)
        status, _, _ = send("POST", server.base + "/ragkit/workspace", forged)
        assert status == 403 and not (course / "my-notebooks").exists(), status  # no XSRF token: refused
        status, _, location = send("POST", server.base + "/ragkit/workspace", urllib.parse.urlencode(form).encode())
        assert status == 302 and location.endswith("/lab/tree/my-notebooks/exercises/ex1.ipynb"), (status, location)
        assert (course / "my-notebooks" / "exercises" / "ex1.ipynb").is_file()
    finally:
        server.stop()


def test_a_copy_carries_the_language_info_its_kernel_reports_so_it_opens_saved():
    """Defect: 00 showed as unsaved the moment it opened: JupyterLab writes the kernel's language_info into a notebook
    that lacks it (the tracked notebooks do: it names the Python of whoever saved them)."""
    from ipykernel.ipkernel import IPythonKernel

    tracked = (ROOT / "notebooks" / "00-start-here.ipynb").read_bytes()
    copy = workspace.as_opened(tracked)
    assert json.loads(copy)["metadata"]["language_info"] == IPythonKernel.language_info
    assert json.loads(copy)["cells"] == json.loads(tracked)["cells"]
    assert workspace.as_opened(copy) == copy and workspace.as_opened(b"not a notebook") == b"not a notebook"
