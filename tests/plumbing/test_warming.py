"""The background warmer: never two at once, notebooks wait for its stages while it makes progress, an interrupted
one frees them, `cache clear` never runs beneath it, and `warm --cache` finishes only what it filled."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from ragkit.corpus import Corpus
from ragkit.data import OutOfDomain, Question
from ragkit.errors import InputError
from ragkit.plumbing import warming
from ragkit.plumbing.cache import CACHE_FILE, VectorCache, finish_shared
from ragkit.teach import course as course_module
from ragkit.tuning import swept_texts

from conftest import ROOT, make_document

HOLDER = """
import json, signal, sys, time
from filelock import FileLock
# a process started in the background (a CI job under `&`) inherits SIGINT ignored: this one is interrupted by it
signal.signal(signal.SIGINT, signal.default_int_handler)
folder, mode = sys.argv[1], sys.argv[2]
lock = FileLock(folder + "/warming.lock")
lock.acquire()
open(folder + "/warming.json", "w").write(json.dumps({"pid": 1, "done": []}))
if mode == "db":  # a warmer mid-fill has its database open
    from ragkit.plumbing.storage import connect
    conn = connect(folder + "/vectors.sqlite")
    conn.execute("CREATE TABLE IF NOT EXISTS t (x)")
print("held", flush=True)
time.sleep(120)
"""

TICKER = """
import sys, time
from ragkit.plumbing import warming
with warming.holding(sys.argv[1]) as holder:
    print("held", flush=True)
    while True:
        holder.tick()
        time.sleep(0.05)
"""


def env_for(folder=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if folder is not None:
        env["RAGKIT_CACHE"] = str(folder)
    return env


def hold_lock(folder, mode="lock"):
    """A stand-in warmer: a process that holds the lock and has finished no stage (mode "db": and has the db open)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder), mode], stdout=subprocess.PIPE, text=True, env=env_for()
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


def stop(proc):
    proc.kill()
    proc.wait()


def test_a_second_warmer_leaves_the_first_one_to_finish(tmp_path):
    holder = hold_lock(tmp_path)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ragkit", "warm", "--quiet", "--cache", str(tmp_path)],
            capture_output=True,
            text=True,
            env=env_for(),
            timeout=60,
        )
    finally:
        stop(holder)
    assert done.returncode == 0 and done.stderr == ""
    assert "another warmer is running" in done.stdout
    assert "ready to share" not in done.stdout and not (tmp_path / CACHE_FILE).exists()  # it filled nothing


def test_warm_cache_beside_a_warmer_that_has_the_database_open_finishes_nothing(tmp_path):
    """Defect: the finishing step ran anyway and ended in a "database is locked" traceback."""
    holder = hold_lock(tmp_path, "db")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ragkit", "warm", "--quiet", "--cache", str(tmp_path)],
            capture_output=True,
            text=True,
            env=env_for(),
            timeout=60,
        )
    finally:
        stop(holder)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "another warmer is running" in done.stdout and "is not finished by this run" in done.stdout
    assert "ready to share" not in done.stdout


def test_warm_cache_into_a_folder_it_cannot_write_says_so_and_finishes_nothing(tmp_path):
    """Defect: "nothing warmed", then the finishing step's "unable to open database file" traceback."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    if os.access(folder, os.W_OK):  # root writes anyway: a folder that cannot be made fails the same way
        (tmp_path / "a-file").write_text("")
        folder = tmp_path / "a-file" / "cache"
    done = subprocess.run(
        [sys.executable, "-m", "ragkit", "warm", "--quiet", "--cache", str(folder)],
        capture_output=True,
        text=True,
        env=env_for(),
        timeout=60,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "not writable" in done.stderr and "nothing warmed" in done.stderr
    assert "ready to share" not in done.stdout


def test_warm_cache_that_wrote_nothing_is_not_called_ready(tmp_path, monkeypatch, capsys):
    """The finishing step checks that this run filled the folder (here: a warm that embedded nothing)."""
    from ragkit.__main__ import main
    from ragkit.embedding import default_embedder

    monkeypatch.setattr(course_module, "warm", lambda holder, progress=False: "warmed nothing")
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path))
    default_embedder.cache_clear()  # the one the command opens is on --cache
    try:
        assert main(["warm", "--quiet", "--cache", str(tmp_path)]) == 1
    finally:
        default_embedder().cache.close()
        default_embedder.cache_clear()
    out, err = capsys.readouterr()
    assert "ready to share" not in out and "nothing was written into" in err


def small_cache(folder):
    cache = VectorCache(folder, "stamp", 4)
    cache.put("unit", [b"k" * 32], [np.ones(4, dtype=np.float32) / 2])
    cache.close()


def test_finish_shared_refuses_while_another_process_has_the_cache_open(tmp_path):
    """Defect: "ready to share" (or a traceback) with the journal mode unchanged; now checked, and said."""
    small_cache(tmp_path)
    reader = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            "c = sqlite3.connect(sys.argv[1]); c.execute('SELECT count(*) FROM vectors').fetchall()"
            "\nprint('open', flush=True); time.sleep(60)",
            str(tmp_path / CACHE_FILE),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert reader.stdout.readline().strip() == "open"
        with pytest.raises(InputError, match="not ready to share"):
            finish_shared(tmp_path)
    finally:
        stop(reader)
    assert finish_shared(tmp_path) == tmp_path / CACHE_FILE
    assert sqlite3.connect(tmp_path / CACHE_FILE).execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_finish_shared_makes_nothing_in_a_folder_without_a_cache(tmp_path):
    with pytest.raises(InputError, match="nothing to finish"):
        finish_shared(tmp_path)
    assert not (tmp_path / CACHE_FILE).exists()


def test_cache_clear_refuses_while_a_warmer_fills_the_cache(tmp_path):
    """Defect: clearing beneath a warmer left it reporting "cache warm" over an empty cache."""
    (tmp_path / CACHE_FILE).write_bytes(b"")
    holder = hold_lock(tmp_path)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ragkit", "cache", "clear"],
            capture_output=True,
            text=True,
            env=env_for(tmp_path),
            timeout=60,
        )
    finally:
        stop(holder)
    assert done.returncode == 1 and "a warmer (pid 1) is filling" in done.stderr and "kill 1" in done.stderr
    assert (tmp_path / CACHE_FILE).exists()


def test_cache_clear_forgets_the_stages_a_warmer_finished(tmp_path):
    (tmp_path / CACHE_FILE).write_bytes(b"")
    (tmp_path / "warming.json").write_text(json.dumps({"pid": 1, "done": ["E", "queries", "A"]}))
    done = subprocess.run(
        [sys.executable, "-m", "ragkit", "cache", "clear"],
        capture_output=True,
        text=True,
        env=env_for(tmp_path),
        timeout=60,
    )
    assert done.returncode == 0 and CACHE_FILE in done.stdout
    assert not (tmp_path / CACHE_FILE).exists()
    assert json.loads((tmp_path / "warming.json").read_text())["done"] == []


def test_a_notebook_waits_for_the_stage_it_needs_and_no_longer(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path))
    monkeypatch.setattr(warming, "POLL_S", 0.02)
    holder = hold_lock(tmp_path)
    try:
        assert warming.warmer_running()
        waiter = threading.Thread(target=warming.wait_for, args=("E", ("E",), False))
        waiter.start()
        waiter.join(0.5)
        assert waiter.is_alive(), "returned before the warmer had embedded E"
        (tmp_path / "warming.json").write_text(json.dumps({"pid": holder.pid, "done": ["E"]}))
        waiter.join(5)
        assert not waiter.is_alive(), "still waiting after E was done"
        t = time.perf_counter()
        warming.wait_for("E", ("E",), False)
        assert time.perf_counter() - t < 0.5
    finally:
        stop(holder)


def test_a_stopped_warmer_is_waited_for_only_until_its_progress_stalls(tmp_path, monkeypatch, capsys):
    """Defect: a SIGSTOPped warmer kept notebooks waiting with no limit; the limit counts from its last progress."""
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path))
    monkeypatch.setattr(warming, "POLL_S", 0.02)
    monkeypatch.setattr(warming, "STALL_S", 0.6)
    ticker = subprocess.Popen(
        [sys.executable, "-c", TICKER, str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env_for()
    )
    try:
        assert ticker.stdout.readline().strip() == "held"
        waiter = threading.Thread(target=warming.wait_for, args=("E", ("E",), False))
        waiter.start()
        waiter.join(1.5)
        assert waiter.is_alive(), "gave up on a warmer that was making progress"
        ticker.send_signal(signal.SIGSTOP)
        t = time.perf_counter()
        waiter.join(10)
        assert not waiter.is_alive(), "still waiting for a stopped warmer"
        assert time.perf_counter() - t < 5
        said = capsys.readouterr().out
        assert f"pid {ticker.pid}" in said and "no progress" in said and "kill -CONT" in said
        t = time.perf_counter()
        warming.wait_for("queries", ("E", "queries"), False)  # given up on: the next stage does not wait again
        assert time.perf_counter() - t < 0.3
    finally:
        ticker.send_signal(signal.SIGCONT)
        stop(ticker)


def test_an_interrupted_warmer_releases_the_notebooks(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path))
    monkeypatch.setattr(warming, "POLL_S", 0.02)
    holder = hold_lock(tmp_path)
    waiter = threading.Thread(target=warming.wait_for, args=("A", course_module.needs("A"), False))
    waiter.start()
    waiter.join(0.3)
    assert waiter.is_alive()
    holder.send_signal(2)
    holder.wait()
    waiter.join(5)
    assert not waiter.is_alive() and not warming.warmer_running()


def test_no_warmer_no_wait(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path / "fresh"))
    t = time.perf_counter()
    warming.wait_for("E", ("E",))
    assert time.perf_counter() - t < 0.1 and not (tmp_path / "fresh").exists()


SPY = """
import os, sys
from ragkit.plumbing import warming
class Spy:  # reports, at the moment the warmer imports the course (seconds of work), whether it holds its lock
    def find_spec(self, name, path=None, target=None):
        if name == "ragkit.teach.course":
            print("locked" if warming.warmer_running() else "unlocked", flush=True)
            os._exit(0)
sys.meta_path.insert(0, Spy())
from ragkit.__main__ import main
main(["warm", "--quiet"])
"""


def test_the_warmer_holds_its_lock_before_its_heavy_imports(tmp_path):
    """A notebook opened while the warmer is still starting must already see a warmer to wait for."""
    done = subprocess.run(
        [sys.executable, "-c", SPY], capture_output=True, text=True, env=env_for(tmp_path), timeout=60
    )
    assert done.stdout.strip() == "locked", done.stderr


def test_a_background_warmer_holds_its_lock_when_start_returns(tmp_path, monkeypatch):
    """`make lab` starts JupyterLab only after this returns: by then a notebook finds the warmer to wait for."""
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path))
    message = warming.start_background(tmp_path / "warm.log", niceness=19)
    pid = json.loads((tmp_path / "warming.json").read_text())["pid"]
    try:
        assert warming.warmer_running() and f"pid {pid}" in message and "warm.log" in message
    finally:
        os.kill(pid, 15)
    deadline = time.monotonic() + 10
    while warming.warmer_running() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not warming.warmer_running()  # interrupted, it leaves no stale lock behind


def test_a_background_warmer_that_cannot_start_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path))
    holder = hold_lock(tmp_path)
    try:
        message = warming.start_background(tmp_path / "warm.log", niceness=0)
    finally:
        stop(holder)
    assert message.startswith("the warmer ended at once: another warmer is running")


class RecordingLine:
    """A stand-in for the wait's line in a notebook: remembers every sentence it was given."""

    made: list = []

    def __init__(self):
        self.said = []
        RecordingLine.made.append(self)

    def __call__(self, sentence, seconds):
        self.said.append(sentence)


def test_a_finished_wait_says_so_and_an_interrupted_one_says_the_notebook_computes_it(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path))
    monkeypatch.setattr(warming, "POLL_S", 0.02)
    monkeypatch.setattr(warming, "ProgressLine", RecordingLine)
    RecordingLine.made = []
    course = course_module.Course(Corpus(tmp_path, ()), [], [])  # its stages decide what a wait counts
    holder = hold_lock(tmp_path)
    try:
        (tmp_path / "warming.json").write_text(json.dumps({"pid": holder.pid, "done": []}))
        waiter = threading.Thread(target=course._wait, args=("queries",))
        waiter.start()
        time.sleep(0.2)
        (tmp_path / "warming.json").write_text(json.dumps({"pid": holder.pid, "done": ["E", "queries"]}))
        waiter.join(5)
        waiter = threading.Thread(target=course._wait, args=("A",))
        waiter.start()
        time.sleep(0.2)
    finally:
        stop(holder)
    waiter.join(5)
    stages = course_module.STAGES
    upto = {stage: stages.index(stage) + 1 for stage in ("queries", "A")}  # stages embedded up to it
    first, second = RecordingLine.made
    assert f"0 of the {upto['queries']} stages" in first.said[0] and first.said[-1].endswith("the queries: done.")
    assert f"{upto['queries']} of the {upto['A']} stages" in second.said[0]
    assert second.said[-1] == "The background warmer ended before strategy A: this notebook computes it itself."


def test_the_wait_says_which_stage_it_waits_for_and_how_far_the_warmer_is(tmp_path, monkeypatch):
    """Defect: a notebook waited 45 s with no word (the cells showed [*]); now the wait names the stage it waits for,
    the stages done, the one the warmer is on and its count, rewritten as the warmer goes."""
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path))
    monkeypatch.setattr(warming, "POLL_S", 0.02)
    holder = hold_lock(tmp_path)
    said = []
    status = {
        "pid": holder.pid,
        "done": ["E", "queries"],
        "progress": 3,
        "working_on": "A",
        "count": 128,
        "total": 1204,
        "unit": "chunks embedded",
    }
    try:
        (tmp_path / "warming.json").write_text(json.dumps(status))
        waiter = threading.Thread(
            target=warming.wait_for,
            args=(
                "B",
                course_module.needs("B"),
                True,
                course_module.label,
                lambda sentence, seconds: said.append(sentence),
            ),
        )
        waiter.start()
        time.sleep(0.2)
        (tmp_path / "warming.json").write_text(json.dumps(dict(status, count=192, progress=4)))
        time.sleep(0.2)
        (tmp_path / "warming.json").write_text(json.dumps(dict(status, done=["E", "queries", "A", "B"])))
        waiter.join(5)
        assert not waiter.is_alive()
    finally:
        stop(holder)
    assert said[0] == (
        f"Waiting for the background warmer (pid {holder.pid}) to finish strategy B: it has done 2 of "
        "the 4 stages this needs (strategy E, the queries) and is on strategy A, 128 of 1,204 chunks "
        "embedded."
    )
    assert any("192 of 1,204" in s for s in said), "the sentence did not follow the warmer"
    assert said[-1] == "Waited for the background warmer to finish strategy B: done."


def test_outside_a_notebook_the_wait_prints_each_new_sentence_once_on_stdout(capsys):
    line = warming.ProgressLine()
    for seconds in range(3):
        line("Waiting for strategy A.", seconds)
    line("Waiting for strategy B.", 3)
    out, err = capsys.readouterr()
    assert out == "Waiting for strategy A.\nWaiting for strategy B.\n" and err == ""


WARM_LOGGER = """
import sys, time
from types import SimpleNamespace
from ragkit.teach import course
from ragkit.plumbing import warming
def log():
    with open(sys.argv[1]) as f:
        return f.read()
seen = []
def compute(self, stage, tick=lambda done: None):
    seen.append(log().count("warm: stage"))  # lines in the log when this stage starts
    time.sleep(0.05)
    return f"{stage} computed"
course.Course.compute = compute
course.Course.evaluation = lambda self, *args, **kwargs: SimpleNamespace(chunks={"E": 1})
course.Course.chunks = lambda self, strategy="E": [None] * 3
with warming.holding() as holder:
    print(course.warm(holder))
print("seen", *seen)
"""


def test_the_warmer_logs_each_stage_as_it_finishes(tmp_path):
    """Defect: warm.log stayed empty for the warmer's whole run (433 s) and got one line at the end; now each stage
    writes its line, flushed, before the next one starts, naming the stage with its counts and seconds."""
    log = tmp_path / "warm.log"
    log.write_text("")
    env = env_for(tmp_path / "cache")
    env.pop("PYTHONUNBUFFERED", None)  # as a student's shell starts it: stdout to a file is buffered
    with open(log, "a") as out:  # as `--background` runs it: stdout is the log file, not a terminal
        done = subprocess.run(
            [sys.executable, "-c", WARM_LOGGER, str(log)],
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
        )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    lines = log.read_text().splitlines()
    stages = course_module.STAGES
    assert lines[-1] == "seen " + " ".join(str(i) for i in range(len(stages)))
    for i, (stage, line) in enumerate(zip(stages, lines, strict=False), 1):
        assert line.startswith(f"warm: stage {i} of {len(stages)}, {course_module.label(stage)}: {stage} computed in ")
        assert line.endswith(" s so far)")


class CountingEmbedder:
    """Unit vectors, counting how many texts it was asked for."""

    stamp = type("Stamp", (), {"window": 256})()
    texts = 0

    def encode(self, texts, progress=True):
        self.texts += len(texts)
        v = np.ones((len(texts), 4), dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_a_warmer_ticks_as_it_embeds_a_stage(tmp_path):
    """What a waiter follows: the progress count rises every TICK_CHUNKS chunks, not once per stage."""
    paragraphs = "\n\n".join(
        f"Paragraph {i} about topic {i}, long enough to stand alone as a chunk. " * 6 for i in range(150)
    )
    doc = make_document(f"# T\n\n## S\n\n{paragraphs}\n", "d")
    embedder = CountingEmbedder()
    course = course_module.Course(Corpus(doc.path.parent, (doc,)), [], [], progress=False, embedder=embedder)
    ticks = []
    course.compute("E", ticks.append)
    n = len(course.chunks("E"))
    assert n > 2 * course_module.TICK_CHUNKS and len(ticks) == -(-n // course_module.TICK_CHUNKS)
    assert ticks == sorted(ticks) and ticks[-1] == n  # each tick says how many chunks are embedded so far
    assert embedder.texts >= n


def test_the_tuning_stage_embeds_the_sweeps_cuts_in_ticked_slices_and_stores_the_sweeps(tmp_path, monkeypatch):
    """Notebook 03b's sweeps cut the corpus three more ways (minutes of embedding, cold): the warmer embeds those
    texts in slices a waiter can follow, then computes the sweeps into the result store, which 03b reads back."""
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path))
    paragraphs = "\n\n".join(
        f"Paragraph {i} about topic {i}, long enough to stand alone as a chunk. " * 6 for i in range(60)
    )
    doc = make_document(f"# T\n\n## S\n\n{paragraphs}\n", "d")
    questions = [
        Question(
            f"q{i:02d}",
            "d",
            needle=f"Paragraph {i} about topic {i}",
            question=f"Topic {i}?",
            ticket=f"What about topic {i}?",
        )
        for i in (3, 30)
    ]
    course = course_module.Course(
        Corpus(doc.path.parent, (doc,)), questions, [], progress=False, embedder=CountingEmbedder()
    )
    ticks = []
    said = course.compute("tuning", ticks.append)
    n = len(swept_texts(course.corpus))
    assert n > 2 * course_module.TICK_CHUNKS and ticks == sorted(ticks) and ticks[-1] == n
    assert len(ticks) == -(-n // course_module.TICK_CHUNKS) and "computed and stored" in said
    assert course_module.total(course, "tuning") == (n, "chunk texts embedded")
    assert course_module.label("tuning") == "the tuning sweeps"
    later = course_module.Course(course.corpus, questions, [], progress=False, embedder=CountingEmbedder())
    assert later.tuning_sweeps().cached  # what 03b's first cell finds after the warmer


class KeepingEmbedder(CountingEmbedder):
    """Also keeps token vectors in the pass that embeds, as the bundled Embedder does; records which texts."""

    def __init__(self):
        self.kept: list[str] = []

    def encode_with_tokens(self, texts):
        self.kept += texts


def test_a_warmer_keeps_token_vectors_for_the_reranked_strategy_and_its_queries_only(tmp_path):
    """Notebook 04's MaxSim reads token vectors of E's shortlists and of the queries: the warmer keeps them from the
    pass that embeds E; the other strategies are embedded as before, without token vectors."""
    doc = make_document("# T\n\n## S\n\nA paragraph long enough to stand alone as a chunk of its own here.\n", "d")
    question = Question(
        "q01", "d", needle="long enough to stand alone", question="What stands alone?", ticket="Where does it stand?"
    )
    embedder = KeepingEmbedder()
    away = OutOfDomain("o01", "How do I bake bread?", "unrelated", "baking")
    course = course_module.Course(
        Corpus(doc.path.parent, (doc,)), [question], [away], progress=False, embedder=embedder
    )
    for stage in ("E", "A", "C"):
        course.compute(stage)
    assert embedder.kept == [c.text for c in course.chunks("E")]  # what evaluate reranks unless told otherwise
    course.compute("queries")
    assert embedder.kept[-2:] == ["What stands alone?", "Where does it stand?"]


def test_status_is_written_whole(tmp_path):
    with warming.holding(tmp_path) as holder:
        assert holder is not None
        holder.tick()
        holder.finished("E")
        status = warming.read_status(tmp_path)
        assert (status.pid, status.done, status.progress) == (os.getpid(), ("E",), 2)
        assert warming.warmer_running(tmp_path)
    assert not warming.warmer_running(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["warming.json", "warming.lock"]  # no temp file left


def test_in_a_notebook_the_wait_is_one_output_rewritten_in_place(monkeypatch, capsys):
    """One display, then updates of it (no new line per poll, nothing on stderr)."""
    import IPython
    import IPython.display

    shown = []

    class Handle:
        def update(self, obj):
            shown.append(("update", obj.data))

    def display(obj, display_id=False):
        shown.append(("display", obj.data))
        return Handle()

    monkeypatch.setattr(IPython, "get_ipython", lambda: type("Shell", (), {"kernel": object()})())
    monkeypatch.setattr(IPython.display, "display", display)
    line = warming.ProgressLine()
    line("Waiting for strategy A.", 0.4)
    line("Waiting for strategy A.", 1.6)
    assert shown == [
        ("display", "Waiting for strategy A. (waited 0 s)"),
        ("update", "Waiting for strategy A. (waited 2 s)"),
    ]
    assert capsys.readouterr() == ("", "")


def test_the_generation_stage_comes_last_and_says_when_there_is_no_generator(tmp_path, monkeypatch):
    """Notebook 07's generated answers are the warmer's last stage (minutes of model time, cold); without the
    generator's weights it says so instead of failing, and counts no items."""
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path))
    assert course_module.STAGES[-1] == "generation"
    assert course_module.label("generation") == "the generated answers"
    doc = make_document("# T\n\n## S\n\nOne paragraph.\n", "d")
    course = course_module.Course(Corpus(doc.path.parent, (doc,)), [], [], progress=False, embedder=CountingEmbedder())
    assert course_module.total(course, "generation") == (0, "")
    monkeypatch.setattr(course_module.Course, "generator", lambda self: None)
    assert course.generation() is None
    assert course.compute("generation") == "no generator on this machine: nothing generated"


@pytest.mark.slow  # the course's vectors (strategy E)
def test_07s_opening_answer_waits_for_strategy_e_only_and_costs_one_model_call(monkeypatch):
    """A student who opens 07 first, while a warmer embeds the other strategies, sees its first generated answer after
    one model call, not after the warmer's last stage and its 44 (issue 64: an answer within 90 s of a cold start)."""
    from ragkit.generation import Generation

    class OneByOne:
        """A generator stand-in that counts the prompts it answers."""

        name = "stand-in"

        def __init__(self):
            self.prompts: list[str] = []

        def count(self, text):
            return len(text.split())

        def run(self, prompt, max_new_tokens=None):
            self.prompts.append(prompt)
            return Generation("It depends on the effect [1].", self.name, 9, 8, 0.1, "end")

    waited: list[str] = []
    monkeypatch.setattr(warming, "wait_for", lambda stage, *args, **kwargs: waited.append(stage))
    loaded = course_module.load(progress=False)
    course = course_module.Course(loaded.corpus, loaded.questions, loaded.out_of_domain, progress=False)
    generator = OneByOne()
    monkeypatch.setattr(course_module.Course, "generator", lambda self: generator)
    first = course.opening()
    assert waited == ["E"], "the opening answer waited for more than its retriever"
    assert len(set(generator.prompts)) == 1 and course_module.OPENING in generator.prompts[0]
    assert first is not None and first.opening_generation.stopped == "end" and first.model == "stand-in"
    assert first.opening_markers.valid == (1,)


@pytest.mark.slow  # the course's vectors (strategy E)
def test_07s_answers_computed_in_a_kernel_say_how_far_they_are_in_one_line(monkeypatch):
    """With no warmer to wait for, a cold 07 computes its answers in the kernel for minutes: one line, rewritten in
    place, says how many are done; the generator stops reporting afterwards."""
    from ragkit.generation import Generation

    class Reporting:
        """A generator stand-in that computes each prompt once and reports it, as ``Generator.run`` does."""

        name = "stand-in"

        def __init__(self):
            self.calls, self.requests, self.report, self.seen = 0, 0, None, set()

        def count(self, text):
            return len(text.split())

        def generate(self, prompt):
            return self.run(prompt).text

        def run(self, prompt, max_new_tokens=None):
            self.requests += 1
            if prompt not in self.seen:
                self.seen.add(prompt)
                self.calls += 1
                if self.report is not None:
                    self.report(self.calls)
            return Generation("It depends [1].", self.name, 9, 4, 0.1, "end")

    shown: list[str] = []

    class RecordingLine:
        def __call__(self, sentence, seconds, suffix=None):
            shown.append(sentence)
            assert suffix is not None and suffix.endswith(" s so far"), "a computation says how long, not 'waited'"

    monkeypatch.setattr(warming, "ProgressLine", RecordingLine)
    loaded = course_module.load(progress=False)
    course = course_module.Course(loaded.corpus, loaded.questions, loaded.out_of_domain, progress=True)
    generator = Reporting()
    monkeypatch.setattr(course_module.Course, "generator", lambda self: generator)
    measured = course.generation()
    assert measured is not None and generator.calls == len(shown) > 1
    assert shown[-1] == (
        f"Notebook 07 is computing its generated answers with stand-in: {generator.calls} done; each is stored, so a "
        "later run reads it back"
    )
    assert generator.report is None
    ticks: list[int] = []
    shown.clear()
    course._generation.clear()
    generator.seen.clear()
    generator.calls = 0
    course.generation(report=ticks.append)  # as a warmer's stage: its ticks, no line of its own in its log
    assert ticks == list(range(1, generator.calls + 1)) and shown == []
