"""A class on a real JupyterHub: the teacher's shared cache filled once, then N students at once through the hub.

``python -m benchmarks classroom`` (N = 4, 8, 16; ``CLASSROOM_N=2`` for a quick look). Per class size a
fresh hub (harness/hub.py, configured from docs/jupyterhub_config.py) on 127.0.0.1; N students are
created and their servers started through the REST API, all at once; each follows the guide's
nbgitpuller link to a ``file://`` copy of this repository, then opens 00-start-here, 06-thresholds
and exercises/ex2-choose-a-threshold one after another, each on a fresh kernel over its websocket,
leaving the earlier kernels running (as JupyterLab does), and moves 06's cut slider. Every student
has an empty private cache and reads the teacher's read-only one.

Measured per student: spawn time, the single-user server's and each kernel's RSS and PSS
(/proc/PID/smaps_rollup, with all three kernels up), their CPU seconds, the time from opening 06
until the slider answers; for the class: the hub's and the proxy's memory, the peak of everything
at once (sampled every second) and the time until every student's slider has answered.

The shared cache is seeded from your own cache (``RAGKIT_CACHE``, filled by ``python -m ragkit warm``)
and then filled by the guide's commands, which embed only what it lacks; ``CLASSROOM_SHARED=DIR``
reuses a finished one. Needs root for real users (else one user with a home per student), jupyterhub
and nbgitpuller (the test extra), and configurable-http-proxy (``make test`` installs it).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness.hub import (
    Hub,
    Student,
    follow_pull_link,
    pull_link,
    reachable_by_others,
    restore_modes,
    seed_cache,
    smaps_rollup,
    work_through,
)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = (
    "my-notebooks/00-start-here.ipynb",
    "my-notebooks/06-thresholds.ipynb",  # the students' copies
    "my-notebooks/exercises/ex2-choose-a-threshold.ipynb",
)


def vector_rows(folder: Path) -> int:
    """Rows in the cache database under ``folder`` (0 when there is none)."""
    from ragkit.plumbing.cache import CACHE_FILE

    path = folder / CACHE_FILE
    if not path.is_file():
        return 0
    db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:  # closed at once: an open reader keeps a WAL database from being finished
        return db.execute("SELECT count(*) FROM vectors").fetchone()[0]
    finally:
        db.close()


def fill_shared(folder: Path) -> tuple[float, int, int]:
    """The teacher's part, seeded from this machine's cache; (seconds, rows seeded, rows after the fill)."""
    from ragkit.plumbing.cache import CACHE_FILE, finish_shared
    from ragkit.plumbing.locations import cache_dir

    seed_cache(cache_dir(), folder, CACHE_FILE)
    seeded = vector_rows(folder)
    env = {k: v for k, v in os.environ.items() if k != "RAGKIT_SHARED_CACHE"}
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "ragkit", "warm", "--quiet", "--cache", str(folder)],
        env=env,
        check=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    finish_shared(folder)
    for p in [folder, *folder.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    return time.perf_counter() - t, seeded, vector_rows(folder)


def _memory(pids: list[int]) -> tuple[float, float]:
    rss = pss = 0.0
    for pid in pids:
        try:
            r, p = smaps_rollup(pid)
        except (OSError, KeyError, ValueError):
            continue
        rss, pss = rss + r, pss + p
    return rss, pss


def _cpu(pids: list[int]) -> float:
    import psutil

    total = 0.0
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


class Sampler(threading.Thread):
    """Every second: the RSS and PSS of every student's server and kernels, the hub and the proxy, added up."""

    def __init__(self, hub: Hub):
        super().__init__(daemon=True)
        self.hub, self.stop, self.peak_rss, self.peak_pss = hub, threading.Event(), 0.0, 0.0

    def run(self) -> None:
        while not self.stop.is_set():
            pids = [self.hub.process.pid] if self.hub.process else []
            if proxy := self.hub.proxy_pid():
                pids.append(proxy)
            for student in list(self.hub.students):
                servers, kernels = self.hub.processes(student)
                pids += servers + kernels
            rss, pss = _memory(pids)
            self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)
            self.stop.wait(1.0)


def one_student(hub: Hub, student: Student, link: str, start: float) -> dict:
    """Spawn, pull, open the three notebooks keeping their kernels; memory and CPU measured with all three up."""
    hub.spawn(student)
    t = time.perf_counter()
    follow_pull_link(hub, student, link)
    pulled = time.perf_counter() - t
    kernels, reports = [], []
    try:
        for notebook in NOTEBOOKS:
            kernel, report = work_through(hub, student, notebook, keep_open=True)
            assert kernel is not None, "work_through returns the kernel it keeps open"
            kernels.append(kernel)
            reports.append(report)
        servers, pids = hub.processes(student)
        server_rss, server_pss = _memory(servers)
        each = [smaps_rollup(pid) for pid in pids]
        cpu = _cpu(servers + pids)
    finally:
        for kernel in kernels:
            kernel.close()
    slider = next(r for r in reports if "slider_s" in r)
    return {
        "name": student.name,
        "spawn_s": student.spawn_s,
        "pull_s": pulled,
        "server_rss": server_rss,
        "server_pss": server_pss,
        "kernels_rss": sum(r for r, _ in each),
        "kernels_pss": sum(p for _, p in each),
        "kernel_peaks": [r["peak_mb"] for r in reports],
        "cpu_s": cpu,
        "slider_s": slider["slider_s"],
        "slider_move_s": slider["slider_move_s"],
        "slider_at": slider["slider_at"] - start,
        "errors": [e for r in reports for e in r["errors"]],
        "models": sorted({m for r in reports for m in r["models"]}),
        "private_rows": vector_rows(student.home / ".ragkit-cache"),
    }


def one_class(n: int, shared: Path, repo: Path, work: Path) -> dict:
    """A fresh hub, N students at once; what each used and what the class used."""
    hub = Hub(work / f"n{n}", shared, environment={"GIT_CONFIG_GLOBAL": str(work / "gitconfig")})
    hub.work.mkdir()
    hub.work.chmod(0o755)
    try:
        hub.start()
        time.sleep(3)
        idle_hub = _memory([hub.process.pid] if hub.process else []), _memory([hub.proxy_pid() or 0])
        tag = os.urandom(2).hex()
        students = [hub.add_student(f"rkb{tag}s{i:02d}") for i in range(n)]
        link = pull_link(repo.as_uri(), "main")  # the workspace link opens my-notebooks/00-start-here
        sampler = Sampler(hub)
        sampler.start()
        start = time.perf_counter()
        with ThreadPoolExecutor(n) as pool:
            futures = [pool.submit(one_student, hub, s, link, start) for s in students]
            results, failures = [], []
            for s, f in zip(students, futures):
                try:
                    results.append(f.result())
                except Exception as exc:  # whatever failed, one student's failure is reported, the class goes on
                    failures.append(f"{s.name}: {type(exc).__name__}: {str(exc)[-300:]}")
        wall = time.perf_counter() - start
        busy_hub = _memory([hub.process.pid] if hub.process else []), _memory([hub.proxy_pid() or 0])
        sampler.stop.set()
        sampler.join()
        return {
            "n": n,
            "wall_s": wall,
            "students": results,
            "failures": failures,
            "hub_idle": idle_hub,
            "hub_busy": busy_hub,
            "class_peak": (sampler.peak_rss, sampler.peak_pss),
            "load": os.getloadavg(),
        }
    finally:
        hub.stop()


def _spread(values: list[float], fmt: str = "{:.0f}") -> str:
    if not values:
        return "-"
    return " / ".join(fmt.format(v) for v in (min(values), statistics.median(values), max(values)))


def report(r: dict) -> None:
    """Print one class size's figures, a row per student."""
    n, students = r["n"], r["students"]
    print(
        f"\n  N = {n}: {len(students)} of {n} students done, {r['wall_s']:.0f} s wall; load average "
        f"{', '.join(f'{x:.1f}' for x in r['load'])} at the end"
    )
    print(
        "    student  spawn s  pull s  server RSS/PSS MiB  3 kernels RSS/PSS MiB  kernel peaks 00/06/ex2  "
        "CPU s  slider after opening 06 s  private vectors  models"
    )
    for s in students:
        print(
            f"    {s['name'][-3:]:<7}  {s['spawn_s']:7.1f}  {s['pull_s']:6.1f}  {s['server_rss']:8.0f} / "
            f"{s['server_pss']:<6.0f}  {s['kernels_rss']:11.0f} / {s['kernels_pss']:<7.0f}  "
            f"{' / '.join(f'{p:.0f}' for p in s['kernel_peaks']):<22}  {s['cpu_s']:5.1f}  {s['slider_s']:25.1f}  "
            f"{s['private_rows']:15}  {', '.join(s['models']) or 'none'}"
        )
    (hub_rss, hub_pss), (proxy_rss, proxy_pss) = r["hub_busy"]
    (ihub_rss, _), (iproxy_rss, _) = r["hub_idle"]
    per = [s["server_rss"] + s["kernels_rss"] for s in students]
    per_pss = [s["server_pss"] + s["kernels_pss"] for s in students]
    print(
        f"    min / median / max: spawn {_spread([s['spawn_s'] for s in students], '{:.1f}')} s; server RSS "
        f"{_spread([s['server_rss'] for s in students])} MiB; server + 3 kernels RSS {_spread(per)} MiB, PSS "
        f"{_spread(per_pss)} MiB; CPU {_spread([s['cpu_s'] for s in students], '{:.1f}')} s; slider after "
        f"opening 06 {_spread([s['slider_s'] for s in students], '{:.1f}')} s (a slider move answered in "
        f"{_spread([1000 * s['slider_move_s'] for s in students])} ms)"
    )
    last = max((s["slider_at"] for s in students), default=float("nan"))
    print(
        f"    class: every student's slider answered {last:.0f} s after the class started; hub RSS/PSS "
        f"{hub_rss:.0f}/{hub_pss:.0f} MiB (idle {ihub_rss:.0f}), proxy {proxy_rss:.0f}/{proxy_pss:.0f} MiB "
        f"(idle {iproxy_rss:.0f}); everything at once, peak RSS {r['class_peak'][0]:.0f} MiB, PSS "
        f"{r['class_peak'][1]:.0f} MiB"
    )
    print(
        f"    vectors computed by students: {sum(s['private_rows'] for s in students)}; students whose kernels "
        f"imported a model: {sum(bool(s['models']) for s in students)}; cell errors: "
        f"{sorted({e for s in students for e in s['errors']}) or 'none'}"
    )
    for failure in r["failures"]:
        print(f"    FAILED {failure}")


def bench_classroom(sizes: list[int] | None = None) -> None:
    """Fill the shared cache once (or reuse ``CLASSROOM_SHARED``), then one class per size, each on a fresh hub."""
    sizes = sizes or [int(x) for x in os.environ.get("CLASSROOM_N", "4,8,16").split(",")]
    work = Path(tempfile.mkdtemp(prefix="ragkit-classroom-"))
    work.chmod(0o755)
    opened = (
        reachable_by_others(
            [Path(sys.executable), Path(sys.prefix), ROOT, *[Path(p) for p in sys.path if p and Path(p).exists()]]
        )
        if os.geteuid() == 0
        else []
    )
    try:
        print(
            f"\n== classroom through a JupyterHub: N = {', '.join(map(str, sizes))} students on {os.cpu_count()} "
            f"cores; load average {', '.join(f'{x:.1f}' for x in os.getloadavg())} at the start; students are "
            f"{'real system users' if os.geteuid() == 0 else 'homes of one user'}"
        )
        if opened:
            print(f"  made traversable for the students (x only, put back afterwards): {[str(p) for p, _ in opened]}")
        repo = work / "ragkit"
        subprocess.run(["git", "init", "--quiet", "--bare", str(repo)], check=True)
        subprocess.run(["git", "push", "--quiet", repo.as_uri(), "HEAD:refs/heads/main"], cwd=ROOT, check=True)
        subprocess.run(["git", "symbolic-ref", "HEAD", "refs/heads/main"], cwd=repo, check=True)
        (work / "gitconfig").write_text(f"[safe]\n\tdirectory = {repo}\n")
        if reuse := os.environ.get("CLASSROOM_SHARED"):
            shared = Path(reuse)
            print(f"  shared cache reused from {shared} (CLASSROOM_SHARED)")
        else:
            shared = work / "shared"
            seconds, seeded, rows = fill_shared(shared)
            print(
                f"  shared cache: {seeded:,} vectors seeded from {os.environ.get('RAGKIT_CACHE', 'the cache')}, "
                f"{rows - seeded:,} more embedded by `ragkit warm --cache` ({seconds:.0f} s with the finish)"
            )
        for n in sizes:
            result = one_class(n, shared, repo, work)
            report(result)
            (work / f"class-{n}.json").write_text(json.dumps(result))
        print(f"  raw figures: {work}/class-N.json")
    finally:
        restore_modes(opened)
        for p in [work, *work.rglob("*")]:
            if p.is_dir() and not p.is_symlink():
                p.chmod(0o755)
        for p in work.iterdir():
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)


if __name__ == "__main__":
    bench_classroom([int(x) for x in sys.argv[1:]] or None)
