"""Approximate search: an HNSW graph (faiss) against the exact scan, recall traded for speed by one setting, efSearch.

The chapter's dense retrieval is one product ``Q @ C.T``: exact, and at the course's 1,068 chunks fast. A production
index holds millions of vectors and walks a graph instead (HNSW, Malkov and Yashunin 2018): it looks at a few thousand
vectors per query, not all of them, and may miss some of the true nearest. ``measure_hnsw`` builds the graph over a
collection, computes the exact top k of every query by the product (in blocks, so the collection is never scored whole)
and reports, at each efSearch, how many of the exact top k the graph found, the time per query, the build time and the
index's memory. ``generated_collection`` makes a collection as large as one asks, shaped like the course's own vectors.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from threadpoolctl import threadpool_limits

from ragkit.errors import InputError
from ragkit.plumbing.onnx import env_threads, usable_cores
from ragkit.plumbing.timing import median_ms

if TYPE_CHECKING:
    import faiss

__all__ = [
    "BLOCK",
    "COLLECTION_SEED",
    "EF_CONSTRUCTION",
    "EF_SEARCH",
    "HELD_PER_VECTOR",
    "NEIGHBOURS",
    "SIZE_ENV",
    "SMALLEST",
    "SPREAD",
    "STUDENT_SIZE",
    "TIE",
    "EfSearchPoint",
    "Exact",
    "Generated",
    "IndexMemory",
    "M",
    "TradeOff",
    "affordable",
    "build_threads",
    "collection_size",
    "exact_scan",
    "faiss_threads",
    "generated_collection",
    "hnsw_index",
    "index_memory",
    "measure_hnsw",
    "recall",
    "stored_vectors",
]

NEIGHBOURS = 20
"""How many neighbours a query asks for; recall is measured on them (the course's Hit@20 depth)."""
M = 32
"""HNSW's links per vector and layer (twice that on the bottom layer): faiss's ``HNSW32``, its index factory's usual."""
EF_CONSTRUCTION = 40
"""How wide the search for a new vector's links is while the graph is built: faiss's default."""
EF_SEARCH = (16, 32, 64, 128, 256, 512)
"""The efSearch values measured: how many candidates a query keeps while it walks the graph (faiss's default is 16)."""
SPREAD = 1.0
"""A generated vector's noise, in units of the course's own spread around its mean (see ``generated_collection``)."""
COLLECTION_SEED = 46
"""The generated collection's seed: the same size gives the same vectors on every machine."""
BLOCK = 8_192
"""Vectors generated, scored and added at a time: beyond the index, a kernel holds a few blocks at once."""
SIZE_ENV = "RAGKIT_GENERATED_VECTORS"
"""The environment variable that sets the generated collection's size (the tests and CI set a small one)."""
STUDENT_SIZE = 200_000
"""The generated collection's size when ``SIZE_ENV`` is unset: large enough for the exact scan's cost to show."""
TIE = 1e-6
"""A found vector whose score is within this of the exact k-th score counts as found: ties at the k-th place."""


SMALLEST = 20_000
"""The fewest generated vectors a machine short of memory is given (the tests' size) when ``SIZE_ENV`` is unset."""
HELD_PER_VECTOR = 384 * 4 + 2 * M * 4 + 16
"""Bytes the HNSW index holds per vector, roughly: the float32 vector (the bundled model's 384 dimensions), its
level-0 links and their bookkeeping (272 bytes measured at M = 32)."""


def affordable(wanted: int, room: int | None, share: float = 0.5) -> int:
    """The most vectors up to ``wanted`` whose index takes at most ``share`` of ``room`` bytes (never below
    ``SMALLEST``; ``room`` None: no limit known, ``wanted``)."""
    if room is None:
        return wanted
    return max(min(wanted, int(room * share) // HELD_PER_VECTOR), min(wanted, SMALLEST))


def collection_size() -> int:
    """The generated collection's size: ``RAGKIT_GENERATED_VECTORS``, else ``STUDENT_SIZE`` or as many as half the
    memory this process may still take allows (a hub's kernel with little room gets fewer vectors, down to
    ``SMALLEST``, rather than more than it can hold)."""
    value = os.environ.get(SIZE_ENV, "").strip().replace("_", "").replace(",", "")
    if not value:
        from ragkit.plumbing.memory import available

        return affordable(STUDENT_SIZE, available())
    if not value.isdigit() or int(value) < NEIGHBOURS:
        raise InputError(
            f"{SIZE_ENV} = {os.environ[SIZE_ENV]!r}: give a whole number of vectors of at least {NEIGHBOURS}, "
            f"or unset it for {STUDENT_SIZE:,}"
        )
    return int(value)


@dataclass(frozen=True, eq=False)
class Generated:
    """A generated collection: ``n`` unit float32 vectors, made block by block each time it is read.

    ``generated_collection`` makes one.
    """

    centres: np.ndarray
    n: int
    seed: int
    spread: float
    block: int

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[np.ndarray]:
        _, s, vt = np.linalg.svd(self.centres - self.centres.mean(axis=0), full_matrices=False)
        shape = ((self.spread * s / np.sqrt(len(self.centres) - 1))[:, None] * vt).astype(np.float32)
        rng = np.random.default_rng(self.seed)
        for start in range(0, self.n, self.block):
            size = min(self.block, self.n - start)
            out = self.centres[rng.integers(0, len(self.centres), size)]
            out += rng.standard_normal((size, len(s)), dtype=np.float32) @ shape
            out /= np.linalg.norm(out, axis=1, keepdims=True)
            yield out


def generated_collection(
    centres: np.ndarray, n: int, seed: int = COLLECTION_SEED, spread: float = SPREAD, block: int = BLOCK
) -> Generated:
    """``n`` unit float32 vectors in blocks: a centre drawn at random plus noise shaped like the centres' own spread.

    The noise is a Gaussian with the centres' covariance (their principal directions, scaled by ``spread``), so a
    generated vector leans the way real embeddings vary, not equally in all 384 directions. The same centres, ``n``,
    ``seed`` and ``block`` give the same vectors.
    """
    centres = np.asarray(centres, dtype=np.float32)
    if centres.ndim != 2 or len(centres) < 2:
        raise InputError(f"centres of shape {centres.shape}: pass two or more vectors as the rows of a 2-d array")
    if n < 1 or block < 1 or not spread >= 0:
        raise InputError(
            f"n = {n}, block = {block}, spread = {spread}: ask for one or more vectors in blocks of "
            "one or more, with a spread of 0 or more"
        )
    return Generated(centres, n, seed, spread, block)


@dataclass(frozen=True)
class Exact:
    """The exact top k of each query: row i holds query i's ids (best first) and their inner products."""

    ids: np.ndarray
    scores: np.ndarray


class _TopK:
    """The running exact top k of each query over blocks of a collection: each block scored by one product."""

    def __init__(self, queries: np.ndarray, k: int):
        self.queries, self.k, self.seen = queries, k, 0
        self.ids = np.empty((len(queries), 0), dtype=np.int64)
        self.scores = np.empty((len(queries), 0), dtype=np.float32)

    def add(self, block: np.ndarray) -> None:
        scores = np.concatenate([self.scores, self.queries @ block.T], axis=1)
        ids = np.concatenate(
            [self.ids, np.broadcast_to(np.arange(self.seen, self.seen + len(block)), (len(self.queries), len(block)))],
            axis=1,
        )
        if scores.shape[1] > self.k:
            keep = np.argpartition(-scores, self.k - 1, axis=1)[:, : self.k]
            scores, ids = np.take_along_axis(scores, keep, axis=1), np.take_along_axis(ids, keep, axis=1)
        self.scores, self.ids = scores, ids
        self.seen += len(block)

    def result(self) -> Exact:
        order = np.argsort(-self.scores, axis=1, kind="stable")
        return Exact(np.take_along_axis(self.ids, order, axis=1), np.take_along_axis(self.scores, order, axis=1))


def recall(found_ids: np.ndarray, found_scores: np.ndarray, exact: Exact) -> float:
    """The share of the exact top k that the approximate top k found, over every query.

    A found vector counts when it is one of the exact k, or scores as high as the exact k-th (within ``TIE``): two
    vectors tied at the k-th place are equally right (ann-benchmarks counts by distance the same way).
    """
    k = exact.ids.shape[1]
    kth = exact.scores[:, -1:] - TIE
    hits = [
        min(k, len(set(f[f >= 0]) & set(e)) + int(((s >= kth[i]) & ~np.isin(f, e) & (f >= 0)).sum()))
        for i, (f, s, e) in enumerate(zip(found_ids, found_scores, exact.ids))
    ]
    return float(np.sum(hits) / (k * len(exact.ids)))


def build_threads() -> int:
    """Threads for building the graph: ``OMP_NUM_THREADS`` (a hub or the grader sets it), else one per usable core."""
    return env_threads() or usable_cores()


@contextlib.contextmanager
def faiss_threads(n: int) -> Iterator[None]:
    """Faiss's OpenMP threads set to ``n`` inside the block, and put back after."""
    import faiss

    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(n)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


def hnsw_index(dim: int, m: int = M, ef_construction: int = EF_CONSTRUCTION) -> faiss.IndexHNSWFlat:
    """An empty HNSW index over inner products (on unit vectors: cosine), its vectors stored in full float32."""
    import faiss

    index = faiss.IndexHNSWFlat(dim, m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = ef_construction
    return index


@dataclass(frozen=True)
class IndexMemory:
    """What the HNSW index holds, in bytes: the vectors themselves and the graph's links (with their bookkeeping)."""

    vectors: int
    graph: int

    @property
    def total(self) -> int:
        return self.vectors + self.graph


def index_memory(index: faiss.IndexHNSWFlat) -> IndexMemory:
    """The bytes of the index's own arrays: stored vectors, and neighbour lists, their offsets and each vector's level.

    The exact scan needs the vectors alone; the graph is what HNSW adds. (faiss's serialized index is these arrays
    plus a header of a few hundred bytes.)
    """
    import faiss

    # faiss's stubs name the base classes only: these arrays are the flat storage's and the graph's own
    storage: Any = faiss.downcast_index(index.storage)
    h: Any = index.hnsw
    graph = (
        h.neighbors.size() * 4
        + h.offsets.size() * 8
        + h.levels.size() * 4
        + h.assign_probas.size() * 8
        + h.cum_nneighbor_per_level.size() * 4
    )
    return IndexMemory(storage.codes.size(), graph)


def _reserve(index: faiss.IndexHNSWFlat, n: int) -> None:
    """Size the index's array of stored vectors for ``n`` vectors at once.

    Added block by block, the array regrows, and each regrowth holds the old array and its copy at the same time: for
    200,000 vectors of 384 about 100 MB more at the kernel's peak. Each ``add`` then sets the array's length to the
    vectors it holds, within the room reserved here.
    """
    import faiss

    storage: Any = faiss.downcast_index(index.storage)
    storage.codes.resize(n * storage.code_size)


def stored_vectors(index: faiss.IndexHNSWFlat) -> np.ndarray:
    """The vectors an HNSW index stores, as a numpy view of its memory (no copy): what the exact scan reads."""
    import faiss

    storage: Any = faiss.downcast_index(index.storage)
    return faiss.rev_swig_ptr(storage.get_xb(), storage.ntotal * storage.d).reshape(storage.ntotal, storage.d)


def exact_scan(vectors: np.ndarray, query: np.ndarray, k: int = NEIGHBOURS) -> np.ndarray:
    """One query's exact top k: its product with every vector, the k best selected, then sorted."""
    scores = vectors @ query
    top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    return top[np.argsort(-scores[top], kind="stable")]


@dataclass(frozen=True)
class EfSearchPoint:
    """One efSearch: the share of the exact top k found, and the median time of one query, one thread."""

    ef_search: int
    recall: float
    ms: float


@dataclass(frozen=True)
class TradeOff:
    """The HNSW index against the exact scan over one collection: build, memory, and recall and time per efSearch."""

    what: str
    vectors: int
    dim: int
    queries: int
    k: int
    m: int
    ef_construction: int
    build_seconds: float
    build_threads: int
    memory: IndexMemory
    exact_ms: float
    settings: tuple[EfSearchPoint, ...]
    nearest: float
    """The median over the queries of the best exact score (inner product: cosine similarity on unit vectors)."""
    kth: float
    """The median of the k-th best exact score: how close the k-th neighbour is to the first is what a walk can miss."""

    def at(self, ef_search: int) -> EfSearchPoint:
        """The measured setting for one efSearch."""
        for s in self.settings:
            if s.ef_search == ef_search:
                return s
        raise InputError(
            f"efSearch {ef_search} was not measured: choose one of {', '.join(str(s.ef_search) for s in self.settings)}"
        )

    def cheapest(self, recall: float) -> EfSearchPoint | None:
        """The smallest efSearch that finds at least this share of the exact top k (None: none does)."""
        return next((s for s in self.settings if s.recall >= recall), None)

    def __str__(self) -> str:
        lines = [
            f"{self.what}: {self.vectors:,} vectors of {self.dim}, {self.queries} queries, top {self.k}",
            f"  HNSW (M={self.m}, efConstruction={self.ef_construction}) built in {self.build_seconds:.1f} s on "
            f"{self.build_threads} thread(s); {self.memory.total / 1e6:,.1f} MB "
            f"({self.memory.total / self.vectors:,.0f} bytes per vector: vectors {self.memory.vectors / 1e6:,.1f} "
            f"MB, graph {self.memory.graph / 1e6:,.1f} MB); the exact scan needs the vectors only",
            f"  exact scan: recall 1.000, {self.exact_ms:.3f} ms per query (1 thread); median similarity of "
            f"the nearest {self.nearest:.3f}, of the {self.k}th {self.kth:.3f}",
            "  efSearch  Recall@k   ms/query   times faster than exact",
        ]
        lines += [
            f"  {s.ef_search:>8}  {s.recall:>8.3f}  {s.ms:>9.3f}  {self.exact_ms / s.ms:>8.1f}" for s in self.settings
        ]
        return "\n".join(lines)


def measure_hnsw(
    collection: np.ndarray | Iterable[np.ndarray],
    queries: np.ndarray,
    what: str = "collection",
    ef_search: Iterable[int] = EF_SEARCH,
    k: int = NEIGHBOURS,
    m: int = M,
    ef_construction: int = EF_CONSTRUCTION,
    threads: int | None = None,
) -> TradeOff:
    """Build HNSW over a collection (an array, or blocks of one), and measure it against the exact scan.

    A collection whose size is known (an array, or ``generated_collection``'s) has the index's memory reserved for it
    at once.

    Each block is scored against every query (the exact top k, kept as the blocks pass) and added to the graph, so the
    collection exists once, inside the index. Times are per query, one query at a time on one thread, the median over
    the queries; the build runs on ``threads`` (default ``build_threads()``) and only its ``add`` calls are timed.
    """
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    if queries.ndim != 2 or not len(queries):
        raise InputError(f"queries of shape {queries.shape}: pass one or more query vectors as rows of a 2-d array")
    blocks = [collection] if isinstance(collection, np.ndarray) else collection
    size = len(collection) if isinstance(collection, np.ndarray | Generated) else None
    efs = sorted(set(ef_search))
    if not efs or efs[0] < 1 or k < 1:
        raise InputError(f"efSearch {efs} and k = {k}: measure at one or more efSearch values of 1 or more, k >= 1")
    threads = threads or build_threads()
    index = hnsw_index(queries.shape[1], m, ef_construction)
    if size:
        _reserve(index, size)
    top = _TopK(queries, k)
    seconds = 0.0
    # BLAS on one thread: its idle threads spin for a while after each product, and would slow the graph's build
    with faiss_threads(threads), threadpool_limits(1, user_api="blas"):
        for block in blocks:
            block = np.ascontiguousarray(block, dtype=np.float32)
            if block.ndim != 2 or block.shape[1] != queries.shape[1]:
                raise InputError(
                    f"a block of shape {block.shape} against queries of {queries.shape[1]} dimensions: "
                    "the collection's vectors and the queries must have the same length"
                )
            top.add(block)
            t = time.perf_counter()
            index.add(block)
            seconds += time.perf_counter() - t
    if index.ntotal < k:
        raise InputError(f"{index.ntotal} vectors for a top {k}: the collection needs at least k vectors")
    exact = top.result()
    vectors = stored_vectors(index)
    rows = [queries[i] for i in range(len(queries))]
    settings = []
    with threadpool_limits(1), faiss_threads(1):
        exact_ms = median_ms(lambda q: exact_scan(vectors, q, k), rows, warm=True)
        for ef in efs:
            index.hnsw.efSearch = ef
            found = [index.search(q[None, :], k) for q in rows]  # untimed pass: its results, and a warm cache
            ms = median_ms(lambda q: index.search(q[None, :], k), rows)
            scores, ids = np.vstack([f[0] for f in found]), np.vstack([f[1] for f in found])
            settings.append(EfSearchPoint(ef, recall(ids, scores, exact), ms))
    return TradeOff(
        what,
        int(index.ntotal),
        queries.shape[1],
        len(queries),
        k,
        m,
        ef_construction,
        seconds,
        threads,
        index_memory(index),
        exact_ms,
        tuple(settings),
        float(np.median(exact.scores[:, 0])),
        float(np.median(exact.scores[:, -1])),
    )
