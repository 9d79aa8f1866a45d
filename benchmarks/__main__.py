"""Run every benchmark and print figures and ratios to their targets, all measured in this one run (``make bench``)."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ragkit.chunking import STRATEGIES, chunk_corpus, chunk_document, pathologies
from ragkit.corpus import Corpus, Document, corpus_stats, fenced_lines, fences, load_corpus
from ragkit.data import load_questions, queries
from ragkit.teach import language
from ragkit.teach.classroom.run_times import END, START, RunTimes, Timed
from ragkit.teach.course import chapter
from ragkit.tokens import count_pieces

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "data" / "corpus"


def best_of(fn, repeat: int = 5) -> float:
    """Fastest wall time of several runs: the least disturbed by a shared, noisy machine."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def verdict(measured: float, target: float, lower_is_better: bool = True) -> str:
    """``2.3x under target`` / ``1.4x OVER target`` style ratio."""
    ratio = target / measured if lower_is_better else measured / target
    return f"{ratio:.2f}x {'within' if ratio >= 1 else 'MISSES'} target"


def bench_chunking(corpus) -> None:
    """Time each strategy's chunking of the whole corpus."""
    chars = sum(len(d.text) for d in corpus.documents)
    print(f"\n== chunking: {len(corpus.documents)} documents, {chars:,} characters")
    total = 0.0
    for letter, strategy in STRATEGIES.items():
        seconds = best_of(lambda letter=letter: chunk_corpus(corpus, letter))
        total += seconds
        print(f"  {letter} {strategy.name:<32} {seconds * 1000:7.1f} ms  {chars / seconds / 1e6:6.2f} M chars/s")

    def parse_fences() -> None:
        fences.cache_clear()
        fenced_lines.cache_clear()
        for d in corpus.documents:
            fenced_lines(d.text)

    # the CommonMark parse runs once per text and is cached, so the best-of times above skip it: count it once
    parse = best_of(parse_fences)
    total += parse
    print(f"  CommonMark fence parse, once per document: {parse * 1000:7.1f} ms")
    target = 0.5 * chars / 360_000
    print(f"  all six: {total:.3f} s; target {target:.3f} s at this size: {verdict(total, target)}")


def bench_hostile_inputs() -> None:
    """Time on inputs a user can write, at growing sizes: a linear cost keeps the time per MB flat."""
    print(
        "\n== hostile inputs: one paragraph of short log lines with decimals and code, no sentence end (a cost "
        "linear in size keeps ms per MB flat)"
    )
    line = "took 1.5 s and 2.25 ms at 3.75 GB for `x` run\n"  # each decimal and code span once cost a scan per cut
    rows = []
    for mb in (1, 2, 4):
        text = "# Log\n\n" + line * (mb * 1_000_000 // len(line))
        doc = Document("log", "Log", text, Path("log.md"))
        corpus = Corpus(Path("."), (doc,))
        fences.cache_clear()
        fenced_lines.cache_clear()
        stats = best_of(lambda corpus=corpus: corpus_stats(corpus), repeat=1)
        chunk = best_of(lambda doc=doc: chunk_document(doc, "C"), repeat=1)
        chunks = chunk_document(doc, "C")
        patho = best_of(lambda chunks=chunks, corpus=corpus: pathologies(chunks, corpus, "C"), repeat=1)
        rows.append((mb, stats, chunk, patho, max(len(c.content) for c in chunks)))
    print("    MB  corpus_stats ms/MB  chunk C ms/MB  pathologies ms/MB  longest chunk")
    for mb, stats, chunk, patho, longest in rows:
        print(
            f"  {mb:>4}  {stats / mb * 1000:>18.0f}  {chunk / mb * 1000:>13.0f}  {patho / mb * 1000:>17.0f}  "
            f"{longest:>13}"
        )
    growth = rows[-1][3] / rows[-1][0] / (rows[0][3] / rows[0][0])
    print(f"  pathologies per MB at 4 MB / at 1 MB: {growth:.2f} (1 is linear; a quadratic cost gives 4)")


def matmul_gflops() -> float:
    """This machine's fp32 matrix-multiply rate through numpy (its BLAS, all its threads)."""
    a = np.random.default_rng(0).random((2048, 2048), dtype=np.float32)
    seconds = best_of(lambda: a @ a, repeat=5)
    return 2 * 2048**3 / seconds / 1e9


def encoder_flops(pieces: int, lengths: list[int], layers: int = 6, d: int = 384, ff: int = 1536) -> float:
    """Forward FLOPs: 2 x layer weights x tokens, plus attention's two n x n x d products per layer."""
    per_layer = 4 * d * d + 2 * d * ff
    attention = sum(4 * n * n * d for n in lengths)
    return 2 * per_layer * layers * pieces + layers * attention


def bench_embedding(corpus) -> None:
    """Time the encoder on strategy E's chunks against the machine's matrix-multiply speed."""
    from ragkit.embedding import Embedder

    peak = matmul_gflops()
    chunks = chunk_corpus(corpus, "E")
    texts = [c.text for c in chunks]
    lengths = [min(n + 2, 256) for n in count_pieces(texts)]
    pieces = sum(lengths)
    flops = encoder_flops(pieces, lengths)
    print(f"\n== indexing strategy E: {len(texts)} chunks, {pieces:,} word pieces (special tokens, window applied)")
    print(f"  numpy fp32 matmul peak on this machine: {peak:.1f} GFLOP/s")
    seconds = {}
    with tempfile.TemporaryDirectory() as cache:
        for backend in ("onnx", "torch"):
            emb = Embedder(backend=backend, cache=Path(cache))
            emb.encode(texts[:16], cache=False, progress=False)
            t = time.perf_counter()
            emb.encode(texts, cache=False, progress=False)
            seconds[backend] = time.perf_counter() - t
            gflops = flops / seconds[backend] / 1e9
            print(
                f"  {backend:>5}: {seconds[backend]:6.1f} s, {1000 * seconds[backend] / len(texts):5.1f} ms/chunk, "
                f"{pieces / seconds[backend]:7.0f} pieces/s, {gflops:5.1f} GFLOP/s = {gflops / peak:.0%} of peak "
                f"(target 60%: {verdict(gflops / peak, 0.6, lower_is_better=False)})"
            )
        print(
            f"  onnx vs torch: {seconds['torch'] / seconds['onnx']:.2f}x faster (target 1.5x: "
            f"{verdict(seconds['torch'] / seconds['onnx'], 1.5, lower_is_better=False)})"
        )
        print(
            f"  chapter: {chapter.INDEX_SECONDS} s for {chapter.CHUNKS_E} chunks ({chapter.MS_PER_CHUNK} ms/chunk, "
            "single-threaded, its CPU)"
        )
        emb = Embedder(cache=Path(cache))
        one = best_of(lambda: emb.encode(["how many test examples do I need?"], cache=False, progress=False), 20)
        print(
            f"  one query embedded: {one * 1000:.2f} ms (target 5 ms: {verdict(one, 0.005)}; "
            f"chapter {chapter.QUERY_MS} ms)"
        )


def bench_search(corpus) -> None:
    """Time BM25 and the dense scan per query, ours beside rank_bm25's."""
    from rank_bm25 import BM25Okapi

    from ragkit.lexical import BM25, tokenize
    from ragkit.retrieval import cosine_distance

    chunks = chunk_corpus(corpus, "E")
    texts = [c.text for c in chunks]
    qs = [q.text for q in queries(load_questions(ROOT / "data" / "questions.jsonl"))]
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((len(texts), 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    qv = vecs[:64].copy()
    print(f"\n== search over {len(texts)} chunks")
    scan = best_of(lambda: cosine_distance(qv, vecs), 50)
    print(
        f"  dense scan, 64 queries: {scan * 1000:.3f} ms (target 1 ms: {verdict(scan, 0.001)}; "
        f"chapter {chapter.SCAN_MS} ms per query)"
    )
    bm = BM25(texts)
    many = best_of(lambda: bm.scores_many(qs), 20)
    print(f"  BM25, 64 queries at once: {many * 1000:.3f} ms (target 2 ms: {verdict(many, 0.002)})")
    one = best_of(lambda: bm.scores(qs[0]), 50)
    oracle = BM25Okapi([tokenize(t) for t in texts], k1=1.2, b=0.75)
    theirs = best_of(lambda: oracle.get_scores(tokenize(qs[0])), 10)
    print(
        f"  BM25, one query: {one * 1000:.3f} ms; rank_bm25 {theirs * 1000:.3f} ms: "
        f"{theirs / one:.0f}x faster (target 20x: {verdict(theirs / one, 20, lower_is_better=False)}; "
        f"chapter {chapter.BM25_MS} ms)"
    )
    bench_bm25s(bm, texts, qs)


def bench_bm25s(bm, texts: list[str], qs: list[str], k: int = 20) -> None:
    """Ragkit's BM25 against bm25s, the peer it must beat: the same tokens and scores, top k with the selection."""
    import bm25s

    from ragkit.lexical import tokenize
    from ragkit.retrieval import rank

    batches = {"one query": qs[:1], f"{len(qs)} queries": qs}
    ours = {
        "one query": best_of(lambda: rank(bm.scores(qs[0]), k=k), 50),
        f"{len(qs)} queries": best_of(lambda: rank(bm.scores_many(qs), k=k), 50),
    }
    print(
        f"  BM25 against bm25s {bm25s.__version__}, top {k} with the selection (ragkit's rank(k={k}), the first k of "
        "its stable ranking;\n    bm25s's top-k, method lucene, our k1 and b, fed ragkit's tokens: both compute the "
        "same scores)"
    )
    for backend in ("numpy", "numba"):  # numpy is bm25s's default, numba its fast path (compiled before the timing)
        peer = bm25s.BM25(k1=bm.k1, b=bm.b, method="lucene", backend=backend)
        peer.index([tokenize(t) for t in texts], show_progress=False)
        for label, batch in batches.items():

            def retrieve(peer=peer, batch=batch):
                return peer.retrieve([tokenize(q) for q in batch], k=k, show_progress=False)

            retrieve()
            seconds = best_of(retrieve, 50)
            ratio = seconds / ours[label]
            target = f" (target 4x: {verdict(ratio, 4, lower_is_better=False)})" if backend == "numpy" else ""
            print(
                f"    {label:>10}: ragkit {ours[label] * 1000:.3f} ms, bm25s {backend:<5} {seconds * 1000:.3f} ms: "
                f"ragkit {ratio:.2f}x as fast{target}"
            )


def bench_cross_encoder(corpus) -> None:
    """Time a cross-encoder of the reranker's shape (random weights) on the rerank depth."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    from ragkit.plumbing.models import bundled_model_dir
    from ragkit.rerank import CrossEncoderReranker
    from ragkit.retrieval import Retriever

    torch.manual_seed(0)
    query = "how many test examples do I need?"
    chunks = chunk_corpus(corpus, "E")
    retriever = Retriever(chunks, progress=False)
    passages = [chunks[i].text for i in retriever.hybrid([query]).top(0, 25)]
    with tempfile.TemporaryDirectory() as folder:
        tok = BertTokenizerFast.from_pretrained(str(bundled_model_dir()))
        config = BertConfig(
            vocab_size=tok.vocab_size,
            hidden_size=384,
            num_hidden_layers=6,
            num_attention_heads=12,
            intermediate_size=1536,
            num_labels=1,
        )
        BertForSequenceClassification(config).eval().save_pretrained(folder)
        tok.save_pretrained(folder)
        print(
            "\n== cross-encoder on the hybrid top 25 of strategy E for the opening question "
            f"({sum(count_pieces(passages)):,} word pieces), random weights of the real architecture"
        )
        scores = {}
        for quantize in (False, True):
            reranker = CrossEncoderReranker(folder, quantize=quantize)
            reranker.score(query, passages[:4])
            seconds = best_of(lambda reranker=reranker: reranker.score(query, passages), 5)
            scores[quantize] = reranker.score(query, passages)
            print(
                f"  {reranker.name:>11}: {seconds * 1000:6.1f} ms per query "
                f"(chapter {chapter.RERANK_MS} ms: {verdict(seconds, chapter.RERANK_MS / 1000)})"
            )
        same = np.array_equal(np.argsort(-scores[False], kind="stable"), np.argsort(-scores[True], kind="stable"))
        print(
            f"  int8 ranking of the 25 equals fp32: {same}; max score change "
            f"{np.abs(scores[False] - scores[True]).max():.4f} (random weights: the real model may differ)"
        )


def bench_eval() -> None:
    """Time ``python -m ragkit eval`` as a subprocess, warm and on an empty cache."""
    print("\n== python -m ragkit eval (subprocess: start-up included)")
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    command = [sys.executable, "-m", "ragkit", "eval", "--quiet"]
    for label, extra in (("warm", {}), ("cold", {"RAGKIT_CACHE": tempfile.mkdtemp(prefix="ragkit-cold-")})):
        t = time.perf_counter()
        subprocess.run(
            command, env=env | extra, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT
        )
        seconds = time.perf_counter() - t
        target = f" (target 15 s: {verdict(seconds, 15)})" if label == "warm" else ""
        print(f"  {label}: {seconds:.1f} s{target}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"  peak memory of the largest run: {peak:.0f} MB (target 1,500 MB: {verdict(peak, 1500)})")


def bench_threshold() -> None:
    """Time the sweep and one move of the threshold slider."""
    import ragkit.teach.course
    from ragkit.teach.lesson.widgets import ThresholdExplorer

    course = ragkit.teach.course.load(progress=False)
    t = time.perf_counter()
    sweep = course.sweep()
    built = time.perf_counter() - t
    one = best_of(lambda: sweep.at(0.6), 200)
    explorer = ThresholdExplorer(sweep)
    cuts = iter(np.tile(np.round(np.arange(0.30, 1.0, 0.005), 3), 3))
    slider = best_of(lambda: explorer.update(float(next(cuts))), 100)
    print(f"\n== threshold: sweep precomputed in {built:.2f} s (vectors cached)")
    print(f"  one new cut: {one * 1e6:.0f} us (target 10 ms: {verdict(one, 0.010)})")
    print(
        f"  slider update (counts, cut line, bluff list): {slider * 1000:.2f} ms "
        f"(target 50 ms: {verdict(slider, 0.050)})"
    )


PEAK_CELL = (
    "import resource; print('KERNEL-PEAK-KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
    "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


CHILD_MB = 100


def run_notebook(path: Path):
    """Execute one notebook on a fresh kernel; (seconds, kernel peak MB, peak MB of its largest child process).

    A child is reported, not hidden: the one-time ONNX export (torch), which ragkit runs outside the kernel, or a
    process the notebook starts itself (08 kills an index build in one).
    """
    import jupytext  # type: ignore[import-untyped]
    import nbformat
    from nbclient import NotebookClient

    nb = jupytext.read(path)
    nb.cells.append(nbformat.v4.new_code_cell(PEAK_CELL))
    start = time.perf_counter()
    resources = {"metadata": {"path": str(path.parent)}}
    NotebookClient(nb, timeout=1200, kernel_name="python3", resources=resources).execute()
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    own, child = text.split()[-2:]
    return time.perf_counter() - start, int(own) / 1024, int(child) / 1024


def bench_notebooks() -> None:
    """Every notebook, exercise and solution on fresh kernels, empty cache then warm: time and kernel peak memory."""
    paths = sorted(p for p in (ROOT / "notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    # BENCH_PASSES=warm measures only the warm pass, on the cache RAGKIT_CACHE names (no cold embedding)
    passes = [p for p in (("cold", 360), ("warm", 120)) if p[0] in os.environ.get("BENCH_PASSES", "cold,warm")]
    print(f"\n== notebooks: {len(paths)} executed one after another, fresh kernel each")
    cache = tempfile.mkdtemp(prefix="ragkit-nb-cold-") if passes[0][0] == "cold" else os.environ["RAGKIT_CACHE"]
    peaks: dict[str, dict[Path, float]] = {}
    children: dict[Path, tuple[float, str]] = {}
    for label, target in passes:
        os.environ["RAGKIT_CACHE"] = cache
        t = time.perf_counter()
        slowest, peaks[label] = [], {}
        for path in paths:
            exported = any(Path(cache).glob("onnx/*/ragkit-export.json"))
            seconds, peak, child = run_notebook(path)
            name = path.relative_to(ROOT / "notebooks")
            slowest.append((seconds, name))
            peaks[label][name] = peak
            if child > children.get(name, (CHILD_MB, ""))[0]:
                what = (
                    "the one-time ONNX export (torch)"
                    if not exported and any(Path(cache).glob("onnx/*/ragkit-export.json"))
                    else "a process the notebook starts"
                )
                children[name] = (child, what)
        seconds = time.perf_counter() - t
        top = ", ".join(f"{p} {s:.0f} s" for s, p in sorted(slowest, reverse=True)[:3])
        what = "cold (empty embedding cache)" if label == "cold" else "warm"
        print(f"  {what}: {seconds:.0f} s (target {target} s: {verdict(seconds, target)}); slowest: {top}")
    print(
        "  kernel peak memory, MB (targets: cold 1,000, warm 500; cold = first pass over an empty cache in this"
        " order, so a notebook computes only what the ones before it did not)"
    )
    for name in paths:
        name = name.relative_to(ROOT / "notebooks")
        cells = [
            f"{label} {peaks[label][name]:6,.0f} {'ok' if peaks[label][name] < limit else 'OVER'}"
            for label, limit in (("cold", 1000), ("warm", 500))
            if label in peaks
        ]
        print(f"    {name!s:<40} " + "   ".join(cells))
    print(
        f"  child processes over {CHILD_MB} MB (outside the kernel's figure; smaller ones are the kernel's own "
        "helpers):"
    )
    for name, (child, what) in children.items():
        print(f"    {name!s:<40} {child:6,.0f}  {what}")


def _peak_mb(pid: int) -> float:
    """A running process's own peak resident memory (VmHWM), in MB; 0 when it has already ended."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cell_finished(path: Path, marker: str) -> tuple[float, float]:
    """Execute a notebook on a fresh kernel: (seconds until the first code cell holding ``marker`` finished, seconds
    until the whole notebook did)."""
    import jupytext
    from nbclient import NotebookClient

    nb = jupytext.read(path)
    watched = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code" and marker in c.source), None)
    if watched is None:
        raise SystemExit(f"no code cell of {path.name} holds `{marker}`: the benchmark's marker is out of date")
    start, done = time.perf_counter(), dict[int, float]()

    def executed(cell, cell_index, execute_reply):
        done.setdefault(cell_index, time.perf_counter() - start)

    resources = {"metadata": {"path": str(path.parent)}}
    NotebookClient(nb, timeout=1200, kernel_name="python3", resources=resources, on_cell_executed=executed).execute()
    return done[watched], time.perf_counter() - start


def bench_cold_start(notebook: str = "06-thresholds", target: float = 60, marker: str | None = None) -> None:
    """A `make lab`-like launch on an empty cache (warmer at nice 19, JupyterLab) to ``notebook`` answering (or, with
    ``marker``, to the first cell holding it showing its output)."""
    import socket

    cache = tempfile.mkdtemp(prefix="ragkit-cold-start-")
    env = dict(os.environ, RAGKIT_CACHE=cache)
    niceness = os.environ.get("WARM_NICE", "19")  # as `make lab`; 0 shows the pipeline on a machine others load
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    print(
        f"\n== cold start: empty cache, `make lab`-like launch (warmer at nice {niceness}), then {notebook}"
        " executed on a fresh kernel"
    )
    t0 = time.perf_counter()
    os.environ["RAGKIT_CACHE"] = cache
    from ragkit.plumbing import warming

    print(
        f"  {warming.start_background(Path(cache) / 'warm.log', int(niceness))} "
        f"({time.perf_counter() - t0:.1f} s after launch)"
    )
    warmer_pid = json.loads((Path(cache) / "warming.json").read_text())["pid"]
    lab = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            f"--port={port}",
            "--allow-root",
            "--ServerApp.token=bench",
        ],
        cwd=ROOT / "notebooks",
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        if marker is None:
            seconds, peak, _ = run_notebook(ROOT / "notebooks" / f"{notebook}.ipynb")
            answered = time.perf_counter() - t0
        else:
            cell, seconds = cell_finished(ROOT / "notebooks" / f"{notebook}.ipynb", marker)
            answered = time.perf_counter() - t0 - seconds + cell
        stages = json.loads((Path(cache) / "warming.json").read_text()).get("seconds", {})
        warmer_mb = _peak_mb(warmer_pid)
    finally:
        lab.terminate()
        lab.wait()
        with contextlib.suppress(ProcessLookupError):
            os.kill(warmer_pid, signal.SIGTERM)
    name = notebook.split("-")[0]
    if marker is None:
        print(
            f"  {name} answered {answered:.0f} s after launch (target {target:.0f} s: {verdict(answered, target)}); "
            f"{name} itself {seconds:.0f} s, kernel peak {peak:,.0f} MB; the warmer's peak so far {warmer_mb:,.0f} MB"
        )
    else:
        print(
            f"  {name}'s cell `{marker}` finished {answered:.0f} s after launch (target {target:.0f} s: "
            f"{verdict(answered, target)}); the whole of {name} took {seconds:.0f} s on its kernel; the warmer's peak "
            f"so far {warmer_mb:,.0f} MB"
        )
    print("  warmer stages done at (s after its start): " + ", ".join(f"{k} {v:.0f}" for k, v in stages.items()))
    if marker is None:
        print(f'  ("answering" = {name} executed top to bottom; no browser involved)')
    else:
        print('  ("finished" = the cell executed on a fresh kernel; no browser involved)')


def bench_book() -> None:
    """Time ``make book``: a first build and a second on the warm cache."""
    from book.build import build

    out = Path(tempfile.mkdtemp(prefix="ragkit-book-")) / "book"
    print(f"\n== book: every main notebook and exercise executed (2 at a time) and rendered to {out}")
    first = build(out)
    print(f"  first build (fills the embedding cache if it was empty): {first.total_seconds:.0f} s")
    warm = build(out)
    print(f"  warm: {warm.summary()}")
    print(f"  warm build {warm.total_seconds:.0f} s (target 120 s: {verdict(warm.total_seconds, 120)})")


GUIDE = ROOT / "docs" / "teacher-guide.md"
GUIDE_START, GUIDE_END = START, END


def time_notebook(path: Path, cache: str) -> float:
    """Seconds to execute one notebook top to bottom on a fresh kernel with this embedding cache."""
    import jupytext
    from nbclient import NotebookClient

    env = os.environ.get("RAGKIT_CACHE")
    os.environ["RAGKIT_CACHE"] = cache
    # the solutions' checks append results: keep them out of the user's ~/.ragkit
    os.environ.setdefault("RAGKIT_RESULTS", str(Path(tempfile.mkdtemp(prefix="ragkit-bench-")) / "results.jsonl"))
    try:
        nb = jupytext.read(path)
        t = time.perf_counter()
        NotebookClient(
            nb, timeout=3600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
        ).execute()
        return time.perf_counter() - t
    finally:
        if env is None:
            os.environ.pop("RAGKIT_CACHE")
        else:
            os.environ["RAGKIT_CACHE"] = env


def bench_guide() -> None:
    """Each notebook warm (the current cache) and cold (its own empty cache); the table goes into the teacher's guide.

    A cold run embeds everything a notebook needs, minutes on a small machine: RAGKIT_BENCH_COLD limits it to some
    notebooks (comma-separated names such as ``00-start-here,ex1-destroyed-needle``; empty: none) and the table says
    which were not measured.
    """
    import platform

    folder = ROOT / "notebooks"
    paths = (
        sorted(folder.glob("0*.ipynb"))
        + sorted((folder / "exercises").glob("*.ipynb"))
        + sorted((folder / "solutions").glob("*.ipynb"))
    )
    wanted = os.environ.get("RAGKIT_BENCH_COLD")
    cold_names = None if wanted is None else {n.strip() for n in wanted.split(",") if n.strip()}
    warm_cache = os.environ.get("RAGKIT_CACHE", str(ROOT / ".ragkit-cache"))
    load = os.getloadavg()[0]
    print("\n== notebooks one by one for the teacher's guide: warm, and cold where asked")
    rows = []
    for path in paths:
        name = str(path.relative_to(ROOT / "notebooks"))
        warm = time_notebook(path, warm_cache)
        cold = None
        if cold_names is None or path.stem in cold_names:
            cold = time_notebook(path, tempfile.mkdtemp(prefix="ragkit-nb-cold-"))
        rows.append((name, warm, cold))
        print(f"  {name}: warm {warm:.0f} s" + (f", cold {cold:.0f} s" if cold is not None else ""))

    measured = RunTimes(
        time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        os.cpu_count() or 1,
        platform.machine(),
        platform.python_version(),
        round(load, 2),
        tuple(Timed(name, warm, cold) for name, warm, cold in rows),
        sum(w for _, w, _ in rows),
    )
    with language.speaking("en"):  # the English guide; the Dutch one writes the same data in Dutch (make nl)
        table = [measured.block()]
    text = GUIDE.read_text(encoding="utf-8")
    head, _, rest = text.partition(GUIDE_START)
    _, found, tail = rest.partition(GUIDE_END)
    if not found:
        raise SystemExit(f"{GUIDE} lacks the markers {GUIDE_START} ... {GUIDE_END}: put them back where the table goes")
    GUIDE.write_text(head + "\n".join(table) + tail, encoding="utf-8")
    print(f"  table written into {GUIDE.relative_to(ROOT)}")


def bench_newest() -> None:
    """test_colab.py's slow tests on the newest versions PyPI offers: a new release breaks this, not CI."""
    print(
        "\n== newest versions: the lowest-versions run of test_colab.py (unit subset, 00 and 06 on a Colab "
        "stand-in) on uv's highest resolution; torch stays at its pin (PyPI's newest is the multi-GB CUDA build)"
    )
    t = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/integration/colab/test_colab.py",
            "-q",
            "-s",
            "-p",
            "no:cacheprovider",
            "-k",
            "not lower_bounds",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=dict(os.environ, RAGKIT_TEST_RESOLUTION="highest"),
    )
    lines = done.stdout.splitlines()
    for line in lines:
        if line.startswith("highest versions"):
            print(f"  {line}")
    print(f"  {lines[-1] if lines else done.stderr[-300:]} ({time.perf_counter() - t:.0f} s in all)")
    if done.returncode != 0:
        print("  FAILED on the newest versions: " + "\n  ".join(lines[-40:]))


def main(argv: list[str]) -> None:
    """Run the benchmarks named in ``argv`` (all of them when none is named)."""
    corpus = load_corpus(CORPUS)
    wanted = set(argv) or {
        "chunking",
        "embedding",
        "search",
        "rerank",
        "eval",
        "threshold",
        "notebooks",
        "coldstart",
        "coldstart07",
        "book",
        "guide",
        "classroom",
        "hostile",
        "newest",
        "grading",
        "approximate",
        "conversion",
        "generation",
    }
    if "eval" in wanted:
        bench_eval()  # first: its warm run fills the cache the way a user's second run finds it
    if "chunking" in wanted:
        bench_chunking(corpus)
    if "hostile" in wanted:
        bench_hostile_inputs()
    if "search" in wanted:
        bench_search(corpus)
    if "rerank" in wanted:
        bench_cross_encoder(corpus)
    if "threshold" in wanted:
        bench_threshold()
    if "approximate" in wanted:
        from benchmarks.approximate import bench_approximate

        bench_approximate()
    if "conversion" in wanted:
        from benchmarks.generation import bench_conversion

        bench_conversion()
    if "generation" in wanted:
        from benchmarks.generation import bench_generation

        bench_generation()
    if "embedding" in wanted:
        bench_embedding(corpus)
    if "notebooks" in wanted:
        bench_notebooks()
    if "coldstart" in wanted:
        bench_cold_start()
    if "coldstart07" in wanted:  # 07's first generated answer, the generator converted on the way (issue 64)
        bench_cold_start("07-citations", 90, "course.opening()")
    if "book" in wanted:
        bench_book()
    if "guide" in wanted:
        bench_guide()
    if "classroom" in wanted:
        from benchmarks.classroom import bench_classroom

        bench_classroom()
    if "newest" in wanted:
        bench_newest()
    if "grading" in wanted:
        from benchmarks.grading import bench_grading

        bench_grading()


if __name__ == "__main__":
    main(sys.argv[1:])
