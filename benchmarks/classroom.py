"""A class on one server: the teacher fills a shared cache once, then N students run 00, 06 and an exercise at once.

``python -m benchmarks classroom`` (N = 4, 8, 16; ``CLASSROOM_N=2`` for a quick look). Each student is
one process that opens the three notebooks one after another, each on a fresh kernel, and leaves
the earlier kernels running, as JupyterLab does when a student opens the next notebook. Every
student has its own home and an EMPTY private cache (``RAGKIT_CACHE``), and reads the teacher's
read-only cache (``RAGKIT_SHARED_CACHE``). A probe cell appended to each notebook reports the
kernel's own peak memory, CPU seconds and whether an embedding model was ever imported; a sampler
here adds up the resident memory of every kernel of the class, every 0.2 s.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ("00-start-here", "06-thresholds", "exercises/ex2-choose-a-threshold")
SLIDER_NOTEBOOK, SLIDER_CELL = "06-thresholds", "widgets.ThresholdExplorer("
MODEL_MODULES = ("sentence_transformers", "onnxruntime", "torch")
PROBE = f"""import json as _json, resource as _resource, sys as _sys
_use = _resource.getrusage(_resource.RUSAGE_SELF)
print("RAGKIT-PROBE", _json.dumps({{"peak_mb": _use.ru_maxrss / 1024, "cpu_s": _use.ru_utime + _use.ru_stime,
                                   "model_modules": [m for m in {MODEL_MODULES!r} if m in _sys.modules]}}))"""


def fill_shared(folder: Path) -> tuple[float, float]:
    """The teacher's part: ``python -m ragkit warm`` into an empty folder, finished for read-only use, chmod a-w.

    Returns wall seconds and the warm process's CPU seconds.
    """
    from ragkit.plumbing.cache import finish_shared

    env = {k: v for k, v in os.environ.items() if k != "RAGKIT_SHARED_CACHE"}
    env |= {"RAGKIT_CACHE": str(folder), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    before, t = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run([sys.executable, "-m", "ragkit", "warm", "--quiet"], env=env, check=True, cwd=ROOT,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finish_shared(folder)
    seconds, after = time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN)
    for p in [folder, *folder.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    return seconds, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def vector_rows(folder: Path) -> int:
    """Rows in the cache database under ``folder`` (0 when there is none)."""
    path = folder / "vectors.sqlite"
    if not path.is_file():
        return 0
    with sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True) as db:
        return db.execute("SELECT count(*) FROM vectors").fetchone()[0]


def idle_server_mb(work: Path) -> float:
    """Resident memory of one JupyterLab server with no kernel, 5 s after it answers (a user's part besides kernels)."""
    import secrets
    import socket
    import urllib.request

    import psutil

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    token, home = secrets.token_hex(16), work / "server-home"
    home.mkdir()
    server = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--port={port}",
                               "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
                               f"--ServerApp.root_dir={ROOT / 'notebooks'}"], env=dict(os.environ, HOME=str(home)),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2)
                break
            except OSError:
                time.sleep(0.2)
        time.sleep(5)
        return psutil.Process(server.pid).memory_info().rss / 2**20
    finally:
        server.terminate()
        server.wait(timeout=60)


# -- one student (run in its own process by ``student``) -------------------------------------------

def _open(name: str):
    """Start a kernel on one notebook (with the probe cell appended) and run every cell; the kernel stays up."""
    import jupytext
    from nbclient import NotebookClient
    from nbformat.v4 import new_code_cell

    path = ROOT / "notebooks" / f"{name}.py"
    nb = jupytext.read(path)
    nb.cells.append(new_code_cell(PROBE))
    client = NotebookClient(nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    opened = time.perf_counter()
    client.km = client.create_kernel_manager()
    client.start_new_kernel()
    client.start_new_kernel_client()
    slider = None
    for index, cell in enumerate(nb.cells):
        client.execute_cell(cell, index)
        if cell.cell_type == "code" and SLIDER_CELL in cell.source:
            slider = time.perf_counter() - opened
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("name") == "stdout")
    probe = json.loads(text.split("RAGKIT-PROBE", 1)[1])
    stderr = [" ".join(o["text"].split())[:160] for c in nb.cells for o in c.get("outputs", [])
              if o.get("name") == "stderr"]
    return client, {"notebook": name, "seconds": time.perf_counter() - opened, "slider_s": slider,
                    "stderr_cells": stderr, **probe}


def student(out: Path) -> None:
    """Open the three notebooks in order, keep their kernels until the last one is done, write what each reported."""
    started = time.perf_counter()
    clients, kernels = [], []
    try:
        for name in NOTEBOOKS:
            client, report = _open(name)
            clients.append(client)
            kernels.append(report | {"opened_after_s": time.perf_counter() - started - report["seconds"]})
    finally:
        for client in clients:
            client.kc.stop_channels()
            client.km.shutdown_kernel(now=True)
    use = resource.getrusage(resource.RUSAGE_SELF)
    out.write_text(json.dumps({"kernels": kernels, "seconds": time.perf_counter() - started,
                               "driver_cpu_s": use.ru_utime + use.ru_stime}))


# -- the class -------------------------------------------------------------------------------------

class Sampler(threading.Thread):
    """Adds up the resident memory of every student's kernels (a student process's descendants) every 0.2 s."""

    def __init__(self, pids: list[int]):
        super().__init__(daemon=True)
        self.pids, self.stop, self.class_peak = pids, threading.Event(), 0
        self.student_peak = [0] * len(pids)

    def run(self) -> None:
        import psutil

        while not self.stop.is_set():
            total = 0
            for i, pid in enumerate(self.pids):
                rss = 0
                try:
                    for child in psutil.Process(pid).children(recursive=True):
                        try:
                            rss += child.memory_info().rss
                        except psutil.Error:
                            pass
                except psutil.Error:
                    pass
                self.student_peak[i] = max(self.student_peak[i], rss)
                total += rss
            self.class_peak = max(self.class_peak, total)
            self.stop.wait(0.2)


def one_class(n: int, shared: Path, work: Path) -> dict:
    """N students at once; what each kernel reported, the class's memory peak, CPU seconds and cache misses."""
    procs, outs, privates = [], [], []
    t = time.perf_counter()
    for i in range(n):
        home, private = work / f"n{n}-s{i:02d}" / "home", work / f"n{n}-s{i:02d}" / "cache"
        home.mkdir(parents=True)
        private.mkdir()
        env = dict(os.environ, HOME=str(home), RAGKIT_CACHE=str(private), RAGKIT_SHARED_CACHE=str(shared),
                   HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", PYTHONPATH=str(ROOT))
        out = home.parent / "report.json"
        procs.append(subprocess.Popen([sys.executable, "-m", "benchmarks.classroom", "student", str(out)],
                                      env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        outs.append(out)
        privates.append(private)
    sampler = Sampler([p.pid for p in procs])
    sampler.start()
    failures = []
    for i, p in enumerate(procs):
        _, err = p.communicate()
        if p.returncode:
            failures.append(f"student {i}: exit {p.returncode}: {err.decode(errors='replace').strip()[-400:]}")
    wall = time.perf_counter() - t
    sampler.stop.set()
    sampler.join()
    students = [json.loads(o.read_text()) for o in outs if o.is_file()]
    return {"n": n, "wall_s": wall, "students": students, "failures": failures,
            "student_peak_mb": [b / 2**20 for b in sampler.student_peak], "class_peak_mb": sampler.class_peak / 2**20,
            "private_rows": [vector_rows(p) for p in privates],
            "private_files": sorted({f.name for p in privates for f in p.iterdir()}),
            "load": os.getloadavg()}


def _spread(values: list[float], fmt: str = "{:.0f}") -> str:
    if not values:
        return "-"
    return "/".join(fmt.format(v) for v in (min(values), statistics.median(values), max(values)))


def report(result: dict) -> None:
    """One block per class size: per-student lines, then the totals."""
    n, students = result["n"], result["students"]
    print(f"\n  N = {n}: {len(students)} of {n} students finished in {result['wall_s']:.0f} s wall; "
          f"load average {', '.join(f'{x:.1f}' for x in result['load'])} at the end")
    print("    student  kernels' peak MB (00 / 06 / ex2)  all kernels at once MB  06 slider after opening s  "
          "CPU s  vectors in private cache  model imported")
    for i, s in enumerate(students):
        ks = s["kernels"]
        slider = next(k["slider_s"] for k in ks if k["notebook"] == SLIDER_NOTEBOOK)
        loaded = sorted({m for k in ks for m in k["model_modules"]}) or ["no"]
        peaks = " / ".join(f"{k['peak_mb']:.0f}" for k in ks)
        print(f"    s{i:02d}     {peaks:<34} "
              f"{result['student_peak_mb'][i]:>22.0f}  {slider:>25.1f}  {sum(k['cpu_s'] for k in ks):5.1f}  "
              f"{result['private_rows'][i]:>24}  {', '.join(loaded)}")
    kernels = [k for s in students for k in s["kernels"]]
    sliders = [k["slider_s"] for k in kernels if k["notebook"] == SLIDER_NOTEBOOK]
    cpu_kernels = sum(k["cpu_s"] for k in kernels)
    cpu_all = cpu_kernels + sum(s["driver_cpu_s"] for s in students)
    stderr = sorted({line for k in kernels for line in k["stderr_cells"]})
    print(f"    one kernel's peak (min/median/max): {_spread([k['peak_mb'] for k in kernels])} MB; one student's "
          f"kernels at once: {_spread(result['student_peak_mb'])} MB; whole class at once: "
          f"{result['class_peak_mb']:.0f} MB")
    print(f"    slider usable after opening 06 (min/median/max): {_spread(sliders, '{:.1f}')} s")
    print(f"    CPU: kernels {cpu_kernels:.0f} s ({cpu_kernels / max(len(students), 1):.1f} s per student), "
          f"with the notebook drivers {cpu_all:.0f} s, over {result['wall_s']:.0f} s wall = "
          f"{cpu_all / result['wall_s']:.2f} cores busy on average")
    print(f"    vectors computed by students: {sum(result['private_rows'])} rows in {n} private caches "
          f"(files there: {', '.join(result['private_files']) or 'none'}); kernels that imported a model: "
          f"{sum(bool(k['model_modules']) for k in kernels)} of {len(kernels)}")
    if stderr:
        print(f"    stderr (red in JupyterLab), {len(stderr)} distinct: {stderr}")
    for failure in result["failures"]:
        print(f"    FAILED {failure}")


def bench_classroom(sizes: list[int] | None = None) -> None:
    """Fill the shared cache once (or reuse ``CLASSROOM_SHARED``), then one class per size."""
    sizes = sizes or [int(x) for x in os.environ.get("CLASSROOM_N", "4,8,16").split(",")]
    work = Path(tempfile.mkdtemp(prefix="ragkit-classroom-"))
    reuse = os.environ.get("CLASSROOM_SHARED")
    try:
        print(f"\n== classroom: N = {', '.join(map(str, sizes))} students on {os.cpu_count()} cores; load average "
              f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} at the start")
        if reuse:
            shared = Path(reuse)
            print(f"  shared cache reused from {shared} (CLASSROOM_SHARED; fill not timed)")
        else:
            shared = work / "shared"
            seconds, cpu = fill_shared(shared)
            vectors = (shared / "vectors.sqlite").stat().st_size
            size = sum(p.stat().st_size for p in shared.rglob("*") if p.is_file())
            print(f"  teacher's fill into an empty shared cache (`ragkit warm`): {seconds:.0f} s wall, "
                  f"{cpu:.0f} s CPU; "
                  f"{vector_rows(shared):,} vectors in {vectors / 2**20:.1f} MB, {size / 2**20:.0f} MB with the ONNX "
                  "export; finished read-only (rollback journal) and chmod a-w")
        print(f"  one JupyterLab server, idle, no kernel: {idle_server_mb(work):.0f} MB resident")
        for n in sizes:
            result = one_class(n, shared, work)
            report(result)
            json.dump(result, open(work / f"class-{n}.json", "w"))
        print(f"  raw figures: {work}/class-N.json")
    finally:
        for p in [work, *work.rglob("*")]:
            if p.is_dir():
                p.chmod(0o755)
        for p in work.iterdir():
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["student"]:
        student(Path(sys.argv[2]))
    else:
        bench_classroom([int(x) for x in sys.argv[1:]] or None)
