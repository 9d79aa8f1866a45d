"""Inside the grader's sandbox: the notebook written into the run's HOME and run in a fresh kernel, its answers read.

bwrap runs ``python -m ragkit.teach.grading.confinement`` inside the root the launcher had it build (``launch``), with
what it needs of the run's spec on stdin and the report's file on stdout. It refuses to go on as root outside its
user namespace, writes the notebook and the startup file that refuses the network into HOME, and runs the notebook
with nbclient in a fresh kernel, then hands back the declared names' values (``found_answers``): one JSON report.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import threading
from pathlib import Path

from ragkit.plumbing.nbformat_import import import_nbformat_quickly
from ragkit.plumbing.service import Borrower, service_path
from ragkit.teach.grading.failures import RunFailure
from ragkit.teach.grading.launch import SPEC

__all__ = [
    "EXTRACT",
    "NO_NETWORK",
    "SENTINEL",
    "STARTUP",
    "execute",
    "found_answers",
    "main",
    "prepare_home",
    "start_kernel",
]

SENTINEL = "ragkit-sandbox-answers:"
NO_NETWORK = "no network in the grader's sandbox"

STARTUP = f'''
import socket as _socket, sys as _sys

def _ragkit_no_network(event, args):
    """Refuse every Internet socket: the grade then says why the notebook did not run."""
    if event in ("socket.connect", "socket.sendto", "socket.bind") and \\
            getattr(args[0], "family", None) in (_socket.AF_INET, _socket.AF_INET6):
        raise PermissionError("{NO_NETWORK}: {{}} {{!r}} refused".format(event, args[1]))
    if event == "socket.getaddrinfo":
        raise PermissionError("{NO_NETWORK}: looking up {{!r}} refused".format(args[0]))

_sys.addaudithook(_ragkit_no_network)
del _ragkit_no_network
from ragkit.teach.grading.confinement import start_kernel as _start_kernel
_start_kernel()
del _start_kernel
'''
"""Every sandbox kernel's startup file: the audit hook that names the missing network, then ``start_kernel``."""
EXTRACT = (
    "from ragkit.teach.grading.confinement import found_answers as _f\nprint({sentinel!r} + _f(globals(), {args}))"
)


def found_answers(namespace: dict, names: list[str], functions: list[str], pairs: list[tuple[str, str]]) -> str:
    """The declared names' values in a kernel, as JSON: plain values as they are, a function's strings per pair.

    It runs in the student's kernel, so everything it returns is the student's to choose: the
    grader validates it as any hostile input, and judges it with checks the kernel never touched.
    """

    def plain(value):
        if hasattr(value, "item"):  # a numpy number is a number
            return value.item()
        raise TypeError(f"a {type(value).__name__} is not a plain value (str, int, float, list or dict)")

    found: dict[str, dict] = {}
    for name in names:
        if name not in namespace:
            found[name] = {"absent": True}
            continue
        value = namespace[name]
        try:
            if name in functions and value is not None:
                found[name] = {"value": [[t, s, value(t, s)] for t, s in pairs]}
            else:
                found[name] = {"value": json.loads(json.dumps(value, default=plain, allow_nan=False))}
        except Exception as exc:  # an answer that cannot be read is reported, with why
            found[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    return json.dumps(found, default=str)


def start_kernel() -> None:
    """In a sandbox's kernel, before its first cell: first in line for the OOM killer, nbformat, the lending taken.

    The kernel (and what it starts) is what a memory bound should stop, never the child that reports why. Every
    exercise notebook shows figures, and its first one imports nbformat (plotly's renderer): importing it here
    costs a kernel nothing more. The kernel's embedder borrows from the grader because it is given the socket
    here (``plumbing.service``); outside a sandbox no embedder asks.
    """
    try:
        Path("/proc/self/oom_score_adj").write_text("1000")
    except OSError:
        pass
    import_nbformat_quickly()
    path = service_path()
    if path is not None:
        from ragkit.embedding import default_embedder

        default_embedder().borrower = Borrower(path)


# Outside: the run's cgroup, its limits and uid, then bubblewrap


def _outside_uid() -> int | None:
    """The uid this process has outside its user namespace (``/proc/self/uid_map``), or None where it cannot tell."""
    try:
        fields = Path("/proc/self/uid_map").read_text().split()
        inside, outside, _count = (int(f) for f in fields[:3])
    except (OSError, ValueError):
        return None
    return outside + os.getuid() - inside


def prepare_home(spec: dict) -> None:
    """The run's HOME: the kernel's folders, the startup file that refuses the network, the notebook; the run's own."""
    home = Path(spec["env"]["HOME"])
    for folder in ("tmp", "cache", ".ipython/profile_default/startup", "runtime", ".jupyter", "data", "mpl"):
        (home / folder).mkdir(parents=True)
    (home / ".ipython/profile_default/startup/00-ragkit-sandbox.py").write_text(STARTUP, encoding="utf-8")
    (home / "submission.ipynb").write_bytes(base64.b64decode(spec["notebook"]))


# Running the notebook


def failed(failure: RunFailure) -> dict:
    """The report of a run that did not finish: the failure as a value, never a sentence."""
    return {"ran": False, "failure": failure.to_json()}


def _send(fd: int, report: dict) -> None:
    os.write(fd, json.dumps(report).encode("utf-8"))
    os.close(fd)


def _watch(km, done: threading.Event, report_fd: int) -> None:
    """End the run when the kernel process is gone before the last cell (nbclient would wait for the time limit)."""
    while not done.wait(1.0):
        if km.has_kernel and not km.is_alive() and not done.is_set():
            _send(report_fd, failed(RunFailure("kernel died")))
            os._exit(0)


def execute(spec: dict, report_fd: int) -> dict:
    """Run the notebook in a fresh kernel, then print the declared names' values; the report to send back."""
    import_nbformat_quickly()
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, DeadKernelError

    home = Path(spec["env"]["HOME"])
    try:
        nb = nbformat.read(home / "submission.ipynb", as_version=4)
    except Exception as exc:  # any unreadable notebook is a reason, not a crash
        return failed(RunFailure("not readable", error=type(exc).__name__, message=str(exc)[:200]))
    nb.cells = [c for c in nb.cells if c.get("cell_type") in ("code", "markdown", "raw")]
    args = f"{spec['names']!r}, {spec['functions']!r}, {[tuple(p) for p in spec['pairs']]!r}"
    nb.cells.append(nbformat.v4.new_code_cell(EXTRACT.format(sentinel=SENTINEL, args=args)))
    km = KernelManager(kernel_name="python3", transport="ipc", ip=str(home / "runtime" / "kernel"))
    # no time limit per cell: the grader's limit covers the whole run, kernel start included
    client = NotebookClient(
        nb, km=km, timeout=None, allow_errors=False, record_timing=False, resources={"metadata": {"path": str(home)}}
    )
    done, last = threading.Event(), len(nb.cells) - 1
    client.on_cell_error = lambda **_: done.set()
    client.on_cell_executed = lambda cell_index, **_: done.set() if cell_index == last else None
    threading.Thread(target=_watch, args=(km, done, report_fd), daemon=True).start()
    try:
        client.execute()
    except DeadKernelError:
        return failed(RunFailure("kernel died"))
    except CellExecutionError as exc:
        index = next(
            (
                i
                for i, c in enumerate(nb.cells)
                if c.get("cell_type") == "code" and any(o.get("output_type") == "error" for o in c.get("outputs", []))
            ),
            None,
        )
        number = index + 1 if index is not None else None
        return failed(RunFailure("cell raised", number=number, error=exc.ename, message=str(exc.evalue)[:300]))
    except Exception as exc:  # the kernel could not start or talk: the machine's fault, said to the teacher
        return failed(
            RunFailure("sandbox", text=f"the notebook could not be run ({type(exc).__name__}: {str(exc)[:300]})")
        )
    printed = "".join(o.get("text", "") for o in nb.cells[-1].get("outputs", []) if o.get("name") == "stdout")
    answers = next((line[len(SENTINEL) :] for line in reversed(printed.splitlines()) if line.startswith(SENTINEL)), "")
    return {"ran": True, "answers": answers}


def _spec() -> dict:
    """What the launcher left of the run's spec in HOME, read once and removed (the notebook never finds it)."""
    try:
        return json.loads(SPEC.read_bytes())
    finally:
        SPEC.unlink(missing_ok=True)


def main() -> int:  # the ``python -m`` protocol's entry point: one name, in every module run with ``-m``
    """Inside bwrap's sandbox: write the notebook into HOME, run it, and report on stdout (or, probing, only report)."""
    report_fd = os.dup(1)
    try:
        spec = _spec()
        if _outside_uid() == 0:
            raise PermissionError("a run as root outside the sandbox is refused")
        prepare_home(spec)
        if spec.get("probe"):
            _send(report_fd, {"ran": True})
            return 0
        log = os.open(Path(spec["env"]["HOME"]) / "kernel.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.environ.clear()
        os.environ.update(spec["env"])
        os.chdir(spec["env"]["HOME"])
        report = execute(spec, report_fd)
    except Exception as exc:  # whatever stops the sandbox is the reason it did not run: the machine's, the teacher's
        report = failed(
            RunFailure("sandbox", text=f"the sandbox could not run the notebook ({type(exc).__name__}: {exc})")
        )
    _send(report_fd, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
