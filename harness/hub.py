"""A class on a real JupyterHub on 127.0.0.1: the hub, its proxy, one single-user server per student, kernels.

Used by tests/integration/hub/test_hub.py and ``python -m benchmarks classroom``; it imports nothing of ragkit. The
hub is configured from docs/jupyterhub_config.py (the file the guide shows) plus this harness's ports, proxy and
users. As root, each student is a real system user (``useradd``, LocalProcessSpawner: a uid and a home of their
own); otherwise every student's server runs as the one user running this, each in a home of its own
(SimpleLocalProcessSpawner). Students and the teacher talk to the hub only over HTTP through the proxy, as a browser
would: the REST API, the nbgitpuller link, the contents API, and kernels over their websocket.
"""

from __future__ import annotations

import html
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import requests

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "docs" / "jupyterhub_config.py"
CHP_VERSION = "5.3.0"
# what a student's server inherits from the hub's process (JupyterHub 5+ passes none of it by default)
ENV_KEEP = ("PATH", "PYTHONPATH", "HF_HUB_OFFLINE", "TOKENIZERS_PARALLELISM", "LANG")


class HubUnavailable(Exception):
    """Something the hub needs is missing here (the message says what); a test skips on it."""


def proxy_command() -> Path | None:
    """configurable-http-proxy: ``RAGKIT_CHP``, else the one `make` installs beside the venv, else PATH."""
    for candidate in (
        os.environ.get("RAGKIT_CHP"),
        Path(sys.prefix) / "node" / "node_modules" / ".bin" / "configurable-http-proxy",
        shutil.which("configurable-http-proxy"),
    ):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def reachable_by_others(paths: list[Path]) -> list[tuple[Path, int]]:
    """Give every folder above these paths the traverse bit for others, where it lacks it; (folder, old mode) each.

    A student's uid must start this Python and import ragkit; a venv under /root (mode 700) is out of
    its reach. Only the search bit (x) is added, never read: a student can reach the named paths
    but still cannot list /root. The caller puts the modes back (``restore_modes``).
    """
    changed: list[tuple[Path, int]] = []
    seen: set[Path] = set()
    for path in paths:
        for folder in [*reversed(Path(path).resolve().parents), Path(path).resolve()]:
            if folder in seen or not folder.is_dir():
                continue
            seen.add(folder)
            mode = folder.stat().st_mode
            if not mode & stat.S_IXOTH:
                folder.chmod(stat.S_IMODE(mode) | stat.S_IXOTH)
                changed.append((folder, stat.S_IMODE(mode)))
    return changed


def restore_modes(changed: list[tuple[Path, int]]) -> None:
    """Give folders back the modes ``reachable_by_others`` changed."""
    for folder, mode in reversed(changed):
        folder.chmod(mode)


@dataclass
class Student:
    """A student of the harness's hub: a login, a home and a uid."""

    name: str
    home: Path
    uid: int
    token: str = ""
    spawn_s: float = 0.0
    browser: requests.Session | None = None  # holds the student's login cookies (Hub.add_student logs in)


@dataclass
class Hub:
    """One JupyterHub with its proxy, started by ``start`` and stopped, with everything it started, by ``stop``."""

    work: Path
    shared: Path
    real_users: bool = field(default_factory=lambda: os.geteuid() == 0)
    port: int = 0
    process: subprocess.Popen | None = None
    token: str = field(default_factory=lambda: secrets.token_hex(32))
    password: str = field(default_factory=lambda: secrets.token_hex(16))
    students: list[Student] = field(default_factory=list)
    log: Path | None = None
    environment: dict[str, str] = field(default_factory=dict)  # more variables for every student's server
    allow_root: bool = True  # servers that run as root get --allow-root (the guide's root case); False to see why

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def homes(self) -> Path:
        return self.work / "home"

    def _config(self, ports: tuple[int, int, int], chp: Path) -> Path:
        public, api, hub = ports
        spawner = (
            "jupyterhub.spawner.LocalProcessSpawner"
            if self.real_users
            else "jupyterhub.spawner.SimpleLocalProcessSpawner"
        )
        lines = [
            "import os",
            "c = get_config()  # noqa: F821",
            f"load_subconfig({str(CONFIG)!r})  # noqa: F821 (the guide's file)",
            "# the harness's own: ports on 127.0.0.1, the proxy, the database, a service token for the teacher",
            f"c.JupyterHub.bind_url = 'http://127.0.0.1:{public}'",
            f"c.JupyterHub.hub_bind_url = 'http://127.0.0.1:{hub}'",
            f"c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:{api}'",
            f"c.ConfigurableHTTPProxy.command = [{str(chp)!r}]",
            f"c.JupyterHub.db_url = 'sqlite:///{self.work / 'hub' / 'jupyterhub.sqlite'}'",
            f"c.JupyterHub.cookie_secret_file = {str(self.work / 'hub' / 'cookie_secret')!r}",
            f"c.JupyterHub.spawner_class = {spawner!r}",
            f"c.Spawner.cmd = [{sys.executable!r}, '-m', 'jupyterhub.singleuser']",
            f"c.Spawner.env_keep = {list(ENV_KEEP)!r}",
            f"c.Spawner.environment['RAGKIT_SHARED_CACHE'] = {str(self.shared)!r}  # in place of /srv/ragkit-shared",
            # the guide's server settings from this checkout (in place of /srv/ragkit), then any config folder this
            # machine's hub needs beside them (where jupyterhub and nbgitpuller were installed outside the venv)
            f"c.Spawner.environment['JUPYTER_CONFIG_PATH'] = os.pathsep.join(["
            f"c.Spawner.environment['JUPYTER_CONFIG_PATH'].replace('/srv/ragkit', {str(ROOT)!r}), "
            f"*{[p for p in os.environ.get('JUPYTER_CONFIG_PATH', '').split(os.pathsep) if p]!r}])",
            f"c.Spawner.environment.update({self.environment!r})",
            "c.Spawner.start_timeout = 120",
            "c.Spawner.http_timeout = 120",
            f"c.JupyterHub.services = [{{'name': 'teacher', 'api_token': {self.token!r}}}]",
            "c.JupyterHub.load_roles = [{'name': 'teacher', 'services': ['teacher'], 'scopes': "
            "['admin:users', 'admin:servers', 'tokens', 'list:users', 'read:users']}]",
            # students log in with a form, as in a browser; a real hub has its own authenticator (PAM on TLJH, OAuth)
            "c.JupyterHub.authenticator_class = 'dummy'",
            f"c.DummyAuthenticator.password = {self.password!r}",
            "c.Authenticator.allow_all = True",
        ]
        if not self.real_users:
            lines.append(f"c.SimpleLocalProcessSpawner.home_dir_template = {str(self.homes / '{username}')!r}")
            if os.geteuid() == 0 and self.allow_root:  # the guide's root case: servers run as root need the flag
                lines.append("c.Spawner.args = ['--allow-root']")
        path = self.work / "hub" / "jupyterhub_config.py"
        path.write_text("\n".join(lines) + "\n")
        return path

    def start(self, attempts: int = 3) -> None:
        """Start the hub and wait until its API answers; a port taken meanwhile is a retry on new ports."""
        chp = proxy_command()
        if chp is None:
            raise HubUnavailable(
                f"no configurable-http-proxy: `npm install --prefix {sys.prefix}/node "
                f"configurable-http-proxy@{CHP_VERSION}` (what `make test` does), or set RAGKIT_CHP"
            )
        try:
            import jupyterhub  # noqa: F401
            import nbgitpuller  # noqa: F401
        except ImportError as exc:
            raise HubUnavailable(f"{exc.name} is not installed: pip install -c constraints.txt -e '.[test]'") from exc
        (self.work / "hub").mkdir(parents=True, exist_ok=True)
        self.homes.mkdir(exist_ok=True)
        self.homes.chmod(0o755)
        self.log = self.work / "hub" / "hub.log"
        for _ in range(attempts):
            ports = (free_port(), free_port(), free_port())
            self.port = ports[0]
            config = self._config(ports, chp)
            with open(self.log, "ab") as log:
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "jupyterhub", "-f", str(config)],
                    cwd=self.work / "hub",
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and self.process.poll() is None:
                try:
                    self.api("GET", "/hub/api/")
                    return
                except OSError:
                    time.sleep(0.3)
            self._kill_hub()
            if "address already in use" not in self.log.read_text(errors="replace").lower():
                break
        raise HubUnavailable(f"the hub did not start ({attempts} tries at most): {self.tail()}")

    def tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log and self.log.exists() else ""

    def request(self, method: str, path: str, token: str, body: object = None, raw: bool = False, timeout: float = 120):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as response:
            text = response.read()
        if raw:
            return text
        return json.loads(text) if text.strip() else None

    def api(self, method: str, path: str, body: object = None):
        """The teacher's REST call (the service token)."""
        return self.request(method, path, self.token, body)

    # -- students --------------------------------------------------------------------------------

    def add_student(self, name: str) -> Student:
        """A system user with a home under ``work/home`` (as root), the hub user, and a token for the student."""
        home = self.homes / name
        if self.real_users:
            subprocess.run(
                ["useradd", "--create-home", "--home-dir", str(home), "--shell", "/bin/sh", "--user-group", name],
                check=True,
                capture_output=True,
            )
            uid = pwd.getpwnam(name).pw_uid
        else:
            home.mkdir()
            uid = os.geteuid()
        student = Student(name, home, uid)
        self.students.append(student)
        self.api("POST", f"/hub/api/users/{name}")
        student.token = self.api(
            "POST", f"/hub/api/users/{name}/tokens", {"note": "the student's browser", "expires_in": 7200}
        )["token"]
        student.browser = self.login(name)
        return student

    def login(self, name: str):
        """A browser session logged in through the hub's login form (its cookies, its XSRF token)."""
        import requests

        browser = requests.Session()
        browser.get(f"{self.url}/hub/login", timeout=60).raise_for_status()
        xsrf = browser.cookies.get("_xsrf", "")
        done = browser.post(
            f"{self.url}/hub/login",
            timeout=60,
            allow_redirects=False,
            data={"username": name, "password": self.password, "_xsrf": xsrf},
        )
        if done.status_code != 302:
            raise RuntimeError(f"{name} could not log in: {done.status_code} {done.text[:300]}")
        return browser

    def spawn(self, student: Student, timeout: float = 180) -> float:
        """Start the student's server through the REST API; seconds until the hub says it is ready."""
        t = time.perf_counter()
        try:
            self.api("POST", f"/hub/api/users/{student.name}/server")
        except urllib.error.HTTPError as exc:
            if exc.code != 202:
                raise
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            model = self.api("GET", f"/hub/api/users/{student.name}")
            server = model.get("servers", {}).get("")
            if server and server.get("ready"):
                student.spawn_s = time.perf_counter() - t
                return student.spawn_s
            if not model.get("pending") and not server:
                raise RuntimeError(f"{student.name}'s server did not start: {self.tail()}")
            time.sleep(0.25)
        raise RuntimeError(f"{student.name}'s server not ready after {timeout:.0f} s: {self.tail()}")

    def processes(self, student: Student) -> tuple[list[int], list[int]]:
        """The student's single-user server's pids and their kernels' (by uid, or by HOME where all share one)."""
        import psutil

        servers, kernels = [], []
        for p in psutil.process_iter(["pid", "uids", "cmdline", "environ"]):
            try:
                if p.info["uids"] is None or p.info["uids"].real != student.uid:
                    continue
                if not self.real_users and (p.info["environ"] or {}).get("HOME") != str(student.home):
                    continue
                cmd = " ".join(p.info["cmdline"] or [])
            except psutil.Error:
                continue
            if "jupyterhub.singleuser" in cmd:
                servers.append(p.info["pid"])
            elif "ipykernel_launcher" in cmd:
                kernels.append(p.info["pid"])
        return servers, kernels

    def proxy_pid(self) -> int | None:
        import psutil

        if self.process is None:
            return None
        for child in psutil.Process(self.process.pid).children(recursive=True):
            try:
                if "configurable-http-proxy" in " ".join(child.cmdline()):
                    return child.pid
            except psutil.Error:
                pass
        return None

    # -- stopping ----------------------------------------------------------------------------------

    def _kill_hub(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        """Stop every server, the hub and its proxy, whatever the students left running; remove the users."""
        import psutil

        if self.process is not None and self.process.poll() is None:
            for student in self.students:
                try:
                    self.api("DELETE", f"/hub/api/users/{student.name}/server")
                except (OSError, ValueError):
                    pass
        self._kill_hub()
        # the proxy runs in the hub's session; so did every server this hub spawned (LocalProcessSpawner
        # starts them in new sessions of their own: found by uid or HOME instead)
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for student in self.students:
            servers, kernels = self.processes(student)
            for pid in servers + kernels:
                try:
                    psutil.Process(pid).kill()
                except psutil.Error:
                    pass
        if self.real_users:
            for student in self.students:
                for _ in range(20):  # userdel refuses while a process of the user lives
                    done = subprocess.run(["userdel", "--remove", student.name], capture_output=True)
                    if done.returncode in (0, 6):  # 6: no such user
                        break
                    time.sleep(0.5)


# -- a student's browser: notebooks through the contents API, kernels over their websocket -----------------------


@dataclass
class Kernel:
    """One notebook's kernel, as JupyterLab opens it: a session, then the kernel's websocket through the proxy."""

    hub: Hub
    student: Student
    path: str
    kernel_id: str = ""
    session: str = field(default_factory=lambda: uuid.uuid4().hex)
    comms: dict[str, dict] = field(default_factory=dict)
    opened: float = 0.0  # perf_counter when the student opened the notebook

    def __post_init__(self) -> None:
        import websocket

        self.opened = time.perf_counter()
        base = f"/user/{self.student.name}"
        model = self.hub.request(
            "POST",
            f"{base}/api/sessions",
            self.student.token,
            {"path": self.path, "name": Path(self.path).name, "type": "notebook", "kernel": {"name": "python3"}},
        )
        self.kernel_id = model["kernel"]["id"]
        url = f"ws://127.0.0.1:{self.hub.port}{base}/api/kernels/{self.kernel_id}/channels?session_id={self.session}"
        self.ws = websocket.create_connection(url, header=[f"Authorization: token {self.student.token}"], timeout=900)

    def _send(self, channel: str, msg_type: str, content: dict) -> str:
        msg_id = uuid.uuid4().hex
        header = {
            "msg_id": msg_id,
            "msg_type": msg_type,
            "username": self.student.name,
            "session": self.session,
            "date": "",
            "version": "5.3",
        }
        self.ws.send(
            json.dumps(
                {
                    "header": header,
                    "parent_header": {},
                    "metadata": {},
                    "content": content,
                    "channel": channel,
                    "buffers": [],
                }
            )
        )
        return msg_id

    def _recv(self) -> dict:
        """One message; a binary frame (a message with buffers: widgets, plotly) is offsets, then JSON, then buffers."""
        frame = self.ws.recv()
        if isinstance(frame, str):
            return json.loads(frame)
        count = int.from_bytes(frame[:4], "big")
        offsets = [int.from_bytes(frame[4 + 4 * i : 8 + 4 * i], "big") for i in range(count)]
        end = offsets[1] if count > 1 else len(frame)
        return json.loads(frame[offsets[0] : end].decode())

    def run(self, code: str) -> tuple[list[dict], dict | None]:
        """Execute one cell; its outputs as nbformat outputs, and the error's content if it raised."""
        msg_id = self._send(
            "shell",
            "execute_request",
            {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": True,
            },
        )
        outputs: list[dict] = []
        error = None
        idle = replied = False
        while not (idle and replied):
            msg = self._recv()
            kind, content = msg["header"]["msg_type"], msg["content"]
            if kind == "comm_open":
                self.comms[content["comm_id"]] = content["data"].get("state", {})
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["channel"] == "shell" and kind == "execute_reply":
                replied = True
            elif kind == "status" and content["execution_state"] == "idle":
                idle = True
            elif kind == "stream":
                outputs.append({"output_type": "stream", "name": content["name"], "text": content["text"]})
            elif kind in ("display_data", "execute_result"):
                out = {"output_type": kind, "data": content["data"], "metadata": content.get("metadata", {})}
                if kind == "execute_result":
                    out["execution_count"] = content["execution_count"]
                outputs.append(out)
            elif kind == "error":
                error = content
                outputs.append(
                    {
                        "output_type": "error",
                        "ename": content["ename"],
                        "evalue": content["evalue"],
                        "traceback": content["traceback"],
                    }
                )
        return outputs, error

    def move_slider(self, description: str, value: float, answer: str) -> float:
        """Move the last slider named ``description`` as a browser would; seconds until a widget shows ``answer``."""
        comm_id = next(
            i
            for i, s in reversed(self.comms.items())
            if s.get("_model_name") == "FloatSliderModel" and s.get("description") == description
        )
        t = time.perf_counter()
        self._send(
            "shell",
            "comm_msg",
            {"comm_id": comm_id, "data": {"method": "update", "state": {"value": value}, "buffer_paths": []}},
        )
        while True:
            msg = self._recv()
            if (
                msg["header"]["msg_type"] == "comm_msg"
                and msg["content"]["comm_id"] != comm_id
                and answer in json.dumps(msg["content"]["data"].get("state", {}))
            ):
                return time.perf_counter() - t

    def close(self) -> None:
        self.ws.close()
        self.hub.request("DELETE", f"/user/{self.student.name}/api/kernels/{self.kernel_id}", self.student.token)


def pull_link(repo: str, branch: str, notebook: str = "00-start-here.ipynb") -> str:
    """The guide's nbgitpuller link (section 6): pull, then ragkit's workspace link opens the student's copy of
    ``notebook`` (a path under my-notebooks/); the folder is nbgitpuller's default, the repository's last part."""
    folder = repo.rstrip("/").split("/")[-1]
    urlpath = "ragkit/workspace?" + urllib.parse.urlencode({"folder": folder, "open": notebook})
    query = urllib.parse.urlencode({"repo": repo, "branch": branch, "urlpath": urlpath})
    return f"/hub/user-redirect/git-pull?{query}"


def _page_data(html: str, key: str) -> str:
    """A ``data-KEY="..."`` value of nbgitpuller's page, decoded as its script decodes it."""
    found = re.search(rf'data-{re.escape(key)}="([^"]*)"', html)
    if found is None:
        raise RuntimeError(f"nbgitpuller's page has no data-{key}: {html[:300]}")
    return urllib.parse.unquote(found.group(1))


def follow_pull_link(hub: Hub, student: Student, link: str) -> tuple[list[dict], str]:
    """Follow the link in the student's logged-in browser: the hub sends it to the student's own server (OAuth
    redirects included), whose nbgitpuller page runs the pull as the event stream its script opens, then sends
    the browser on to the link's ``urlpath``; nbgitpuller's events, and the path the browser lands on."""
    browser = student.browser
    assert browser is not None, f"{student.name} has not logged in: add students with Hub.add_student"
    page = browser.get(hub.url + link, timeout=120)
    page.raise_for_status()
    target = urllib.parse.urlsplit(page.url)
    if target.path != f"/user/{student.name}/git-pull":
        raise RuntimeError(f"the link led to {page.url}, not to {student.name}'s nbgitpuller page")
    stream = browser.get(f"{hub.url}{target.path}/api?{target.query}", timeout=600)
    stream.raise_for_status()
    text = stream.text
    events = [json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: ")]
    if not events or events[-1].get("phase") != "finished":
        raise RuntimeError(f"nbgitpuller did not finish: {events[-3:]}")
    # what the page's script does once the pull has finished: window.location = its base url + its path
    then = browser.get(hub.url + _page_data(page.text, "base-url") + _page_data(page.text, "path"), timeout=120)
    then.raise_for_status()
    form = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', then.text))
    if "_xsrf" in form:  # ragkit's workspace page, which POSTs itself with the server's XSRF token: as its script does
        action = re.search(r'<form method="post" action="([^"]+)"', then.text)
        assert action is not None, then.text[:300]
        fields = {k: html.unescape(v) for k, v in form.items()}
        then = browser.post(hub.url + html.unescape(action.group(1)), data=fields, timeout=120)
        then.raise_for_status()
    return events, urllib.parse.urlsplit(then.url).path


def smaps_rollup(pid: int) -> tuple[float, float]:
    """RSS and PSS of one process in MiB, from /proc/PID/smaps_rollup."""
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, value, *_ = line.split()
        fields[name.rstrip(":")] = int(value)
    return fields["Rss"] / 1024, fields["Pss"] / 1024


PROBE = """import json as _j, os as _o, resource as _r, sys as _s
_u = _r.getrusage(_r.RUSAGE_SELF)
print("RAGKIT-PROBE", _j.dumps({"uid": _o.getuid(), "home": _o.path.expanduser("~"), "peak_mb": _u.ru_maxrss / 1024,
      "cpu_s": _u.ru_utime + _u.ru_stime,
      "models": [m for m in ("torch", "onnxruntime", "sentence_transformers") if m in _s.modules]}))"""
SLIDER_CELL = "widgets.ThresholdExplorer("


def work_through(
    hub: Hub, student: Student, notebook: str, answer: str | None = None, keep_open: bool = False
) -> tuple[Kernel | None, dict]:
    """Open a notebook under the student's pulled folder (``ragkit/<notebook>``: ``my-notebooks/...``, the student's
    copies), optionally type an answer into its answer cell, Run All over the kernel's websocket (moving the cut
    slider where there is one), save it with its outputs as JupyterLab does; the kernel (if kept open) and what the
    probe cell reported."""
    path = f"ragkit/{notebook}"
    nb = hub.request("GET", f"/user/{student.name}/api/contents/{path}?content=1", student.token)["content"]
    if answer is not None:
        cell = next(c for c in nb["cells"] if c["cell_type"] == "code" and "# your answer" in "".join(c["source"]))
        cell["source"] = answer
    kernel = Kernel(hub, student, path)
    report: dict = {"notebook": notebook, "errors": []}
    try:
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            outputs, error = kernel.run("".join(cell["source"]))
            cell["outputs"] = outputs
            if error:
                report["errors"].append(f"{error['ename']}: {error['evalue']}")
                break
            if SLIDER_CELL in "".join(cell["source"]):
                report["slider_move_s"] = kernel.move_slider("cut", 0.6, "ragkit-bluffs")
                report["slider_s"] = time.perf_counter() - kernel.opened
                report["slider_at"] = time.perf_counter()
        outputs, _ = kernel.run(PROBE)
        text = "".join(o.get("text", "") for o in outputs if o.get("name") == "stdout")
        report |= json.loads(text.split("RAGKIT-PROBE", 1)[1])
        report["seconds"] = time.perf_counter() - kernel.opened
    finally:
        if not keep_open:
            kernel.close()
    hub.request(
        "PUT",
        f"/user/{student.name}/api/contents/{path}",
        student.token,
        {"type": "notebook", "format": "json", "content": nb},
    )
    return (kernel if keep_open else None), report


def seed_cache(source: Path, folder: Path, database: str) -> None:
    """Copy a cache's vectors (SQLite's backup), ONNX exports and stored results into ``folder``: a fill there computes
    nothing.

    ``database`` is the cache's file name (``ragkit.plumbing.cache.CACHE_FILE``), passed in so that the harness imports
    nothing of the package it deploys.
    """
    folder.mkdir(parents=True, exist_ok=True)
    if not (source / database).is_file():
        return
    src = sqlite3.connect(f"file:{source / database}?mode=ro", uri=True)
    dst = sqlite3.connect(folder / database)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    # the embedding model's export, the generator's, and the stored results (03b's sweeps, 07's answers)
    for kind in ("onnx", "generator", "results"):
        if (source / kind).is_dir():
            shutil.copytree(source / kind, folder / kind, ignore=shutil.ignore_patterns(".*"))
