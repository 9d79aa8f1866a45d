"""Tuning judged honestly: a setting is chosen on one half of the needles and judged on the other.

A setting tuned on the very queries that judge it flatters itself: the best of many values on one set of
queries is partly the best luck. So the needles are split in two with a fixed seed (both phrasings of a needle
on the same side), every value is scored on both halves, the value that wins the tuning half is chosen, and only
the held-out half judges it against the default, needle by needle. Several settings tuned at once are several
looks, so their held-out comparisons take Holm together (``evaluation.with_holm``).

Five settings are swept (``sweep_settings``): the chunk size and the overlap (dense retrieval over the corpus chunked
again, each needle counted as the evaluation counts it, so a chunking that destroys a needle scores it 0), RRF's k, the
weight of dense against BM25 in a weighted RRF, and BM25's (k1, b). Their runs are kept in a stamped result file
(``ragkit.plumbing.results``): a second sweep of the same corpus, questions, model, grid and code reads them back.
"""

from __future__ import annotations

import hashlib
import importlib.util
import time
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, is_dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragkit import chunking, corpus, data, evaluation, fusion, lexical, retrieval
from ragkit.chunking import OVERLAP, SIZE, STRATEGIES, Strategy, chunk_corpus, get_strategy
from ragkit.corpus import Corpus
from ragkit.data import Question
from ragkit.data import queries as make_queries
from ragkit.errors import InputError
from ragkit.evaluation import (
    Comparison,
    Result,
    compare,
    first_hit_ranks,
    needle_hits,
    query_hits,
    relevant_ranks,
    with_holm,
)
from ragkit.fusion import RRF_K, rrf_many
from ragkit.lexical import BM25, K1, B
from ragkit.plumbing import results as store
from ragkit.retrieval import Encoder, Retriever, rank
from ragkit.tokens import TruncationWarning, count_pieces, over_window

__all__ = [
    "CODE",
    "GRID",
    "READ_ONLY",
    "SETTINGS",
    "SPLIT_SEED",
    "WEIGHT",
    "Chunked",
    "Chunking",
    "Grid",
    "Setting",
    "Study",
    "Sweeps",
    "Trial",
    "Tuning",
    "bm25_results",
    "halves",
    "overlap_twin",
    "rrf_results",
    "study",
    "sweep_settings",
    "sweeps_stamp",
    "swept_texts",
    "tune",
    "weighted_results",
]

SPLIT_SEED = 11
"""The seed of every held-out split in the course (exercise 2's too)."""


def halves(
    needle_ids: Sequence[str], seed: int = SPLIT_SEED, others: Sequence[str] = ()
) -> tuple[frozenset[str], frozenset[str]]:
    """The needles split in two with a fixed seed, by needle: (tuning half, held-out half).

    The course's one split: the ids sorted and permuted by one generator, the first half tuning. ``others`` (exercise
    2's out-of-domain queries) are split after the needles the same way, by the same generator, into the same halves.
    """
    needles = sorted(set(needle_ids))
    if len(needles) < 2:
        raise InputError(f"{len(needles)} needle(s): a held-out half needs at least two needles to split")
    rng = np.random.default_rng(seed)
    tune: set[str] = set()
    held: set[str] = set()
    for ids in (needles, sorted(set(others))):
        order = rng.permutation(ids).tolist() if ids else []
        tune |= set(order[: len(ids) // 2])
        held |= set(order[len(ids) // 2 :])
    return frozenset(tune), frozenset(held)


@dataclass(frozen=True)
class Trial:
    """One value of a setting: its metric on the tuning half and on the held-out half."""

    value: Hashable
    tune: float
    held: float


@dataclass(frozen=True)
class Tuning:
    """One setting swept: every value on both halves, the value the tuning half chose, and its held-out judgment."""

    parameter: str
    metric: str
    default: Hashable
    trials: tuple[Trial, ...]
    chosen: Hashable
    held_best: Hashable
    judged: Comparison
    """The chosen value against the default on the held-out half, needle by needle."""

    @property
    def flattered(self) -> bool:
        """Whether the held-out half would have chosen another value: the tuning half's win did not carry over."""
        return self.chosen != self.held_best

    def trial(self, value: Hashable) -> Trial:
        """The trial of one value."""
        return next(t for t in self.trials if t.value == value)

    @property
    def tune_gain(self) -> float:
        """What the chosen value gains over the default on the tuning half (never negative: it was chosen there)."""
        return self.trial(self.chosen).tune - self.trial(self.default).tune

    @property
    def held_gain(self) -> float:
        """What the chosen value gains over the default on the held-out half: the part of the gain that was real."""
        return self.trial(self.chosen).held - self.trial(self.default).held

    @property
    def loses(self) -> bool:
        """Whether the value the tuning half chose scores below the default on the held-out half."""
        return self.held_gain < 0


def _half_mean(result: Result, metric: str, needles: frozenset[str]) -> float:
    values = result.per_query(metric)
    mask = np.isin(np.array(result.needle_ids), list(needles))
    return float(values[mask].mean())


def tune(
    parameter: str, results: Mapping[Hashable, Result], default: Hashable, metric: str = "MRR", seed: int = SPLIT_SEED
) -> Tuning:
    """Choose a value of ``parameter`` on the tuning half and judge it on the held-out half against ``default``.

    ``results`` holds one evaluation per value, all on the same queries. Ties on the tuning half go to the default,
    then to the value listed first: a change must earn its place.
    """
    if default not in results:
        raise InputError(f"the default {default!r} of {parameter} is not among the values swept: sweep it too")
    runs = list(results.values())
    if any(r.query_ids != runs[0].query_ids or r.needle_ids != runs[0].needle_ids for r in runs):
        raise InputError(f"the runs of {parameter} answer different queries: evaluate every value on the same ones")
    tune_half, held_half = halves(runs[0].needle_ids, seed)
    trials = tuple(
        Trial(v, _half_mean(r, metric, tune_half), _half_mean(r, metric, held_half)) for v, r in results.items()
    )
    order = sorted(trials, key=lambda t: (-t.tune, t.value != default))
    held_order = sorted(trials, key=lambda t: (-t.held, t.value != default))
    chosen = order[0].value
    judged = compare(results[chosen], results[default], metric, "needle", drop=tune_half)
    return Tuning(parameter, metric, default, trials, chosen, held_order[0].value, judged)


def _results(
    retriever: Retriever, questions: Sequence, queries: Sequence, rankings: Mapping[Hashable, tuple[str, np.ndarray]]
) -> dict[Hashable, Result]:
    """Each named ranking of the queries as an evaluation (first hits and every relevant chunk), keyed as given."""
    hits = query_hits(retriever.chunks, questions, queries)
    ids, needles = tuple(q.id for q in queries), tuple(q.qid for q in queries)
    return {
        key: Result(
            retriever.strategy, name, first_hit_ranks(ranking, hits), ids, needles, relevant_ranks(ranking, hits)
        )
        for key, (name, ranking) in rankings.items()
    }


def bm25_results(
    retriever: Retriever,
    questions: Sequence,
    queries: Sequence,
    k1s: Sequence[float] = (K1,),
    bs: Sequence[float] = (B,),
) -> dict[Hashable, Result]:
    """BM25 over the retriever's chunks for every (k1, b), each as an evaluation of the same queries."""
    bad = [(k1, b) for k1 in k1s for b in bs if k1 < 0 or not 0 <= b <= 1]
    if bad:
        raise InputError(f"k1 = {bad[0][0]}, b = {bad[0][1]}: BM25 takes k1 of 0 or more and b between 0 and 1")
    texts = [q.text for q in queries]
    return _results(
        retriever,
        questions,
        queries,
        {
            (k1, b): (f"bm25 k1={k1:g} b={b:g}", rank(BM25(retriever.texts, k1=k1, b=b).scores_many(texts)))
            for k1 in k1s
            for b in bs
        },
    )


def rrf_results(
    retriever: Retriever, questions: Sequence, queries: Sequence, ks: Sequence[int] = (RRF_K,)
) -> dict[Hashable, Result]:
    """Hybrid search fused with every RRF constant k, each as an evaluation of the same queries."""
    if any(k < 0 for k in ks):
        raise InputError(f"k = {min(ks)}: reciprocal rank fusion takes a constant of 0 or more")
    texts = [q.text for q in queries]
    dense, lexical = retriever.dense(texts), retriever.bm25(texts)
    return _results(
        retriever,
        questions,
        queries,
        {k: (f"hybrid k={k}", rrf_many(dense.ranking, lexical.ranking, k=k, matched=lexical.matched)) for k in ks},
    )


def weighted_results(
    retriever: Retriever, questions: Sequence, queries: Sequence, weights: Sequence[float] = (0.5,), k: int = RRF_K
) -> dict[Hashable, Result]:
    """Hybrid search fused with every weight of dense against BM25 (weighted RRF), each an evaluation of the queries.

    Still ranks, never scores: each list adds its weight times 1 / (k + rank) (``fusion.rrf_many``), so the chapter's
    reason for RRF (a cosine distance and a BM25 score are on no common scale) holds at every weight. At 0.5 it ranks
    as plain RRF; at 1 it is dense alone, at 0 BM25 with dense breaking its ties.
    """
    texts = [q.text for q in queries]
    dense, lexical = retriever.dense(texts), retriever.bm25(texts)
    return _results(
        retriever,
        questions,
        queries,
        {w: (f"hybrid w={w:g}", rrf_many(dense.ranking, lexical.ranking, k, lexical.matched, w)) for w in weights},
    )


WEIGHT = 0.5
"""Dense's weight in plain RRF: both lists count alike."""


@dataclass(frozen=True)
class Grid:
    """What is swept: the values of each setting, on the chunks of one strategy (its overlap twin for the overlap)."""

    strategy: str = "E"
    sizes: tuple[int, ...] = (256, SIZE, 1024)
    overlaps: tuple[int, ...] = (0, OVERLAP, 128)
    ks: tuple[int, ...] = (1, 10, 30, RRF_K, 100, 300)
    weights: tuple[float, ...] = (0.0, 0.25, WEIGHT, 0.75, 1.0)
    k1s: tuple[float, ...] = (0.5, 0.9, K1, 1.5, 2.0)
    bs: tuple[float, ...] = (0.3, 0.5, B, 0.9, 1.0)


GRID = Grid()
SETTINGS = ("chunk size", "overlap", "RRF k", "dense weight", "BM25 (k1, b)")
"""The settings a sweep tunes, in the order it reports them."""


@dataclass(frozen=True)
class Chunked:
    """What one way of chunking made of the corpus: its chunks, the needles it destroyed, the chunks over the window."""

    chunks: int
    destroyed: tuple[str, ...]
    over_window: int


@dataclass(frozen=True)
class Setting:
    """One setting swept: its default and one evaluation of the same queries per value (chunk facts for a chunking)."""

    name: str
    default: Hashable
    results: Mapping[Hashable, Result]
    chunked: Mapping[Hashable, Chunked] = field(default_factory=dict)


@dataclass(frozen=True)
class Sweeps:
    """Every setting swept, what computing them took, and whether they came from the result store."""

    settings: tuple[Setting, ...]
    seconds: float
    """What computing the sweeps took when they were computed (read back, the time of that first computation)."""
    cached: bool
    """Read back from the result store (True) or computed in this call."""
    saved: str = ""
    """Why the sweeps could not be stored ("" when they are in the store)."""
    read_seconds: float = 0.0
    """What this call took: the computation, or reading the store."""
    window: int = 0
    """The encoder's window in word pieces: a chunk longer than that is counted ``over_window``."""

    def __getitem__(self, name: str) -> Setting:
        for s in self.settings:
            if s.name == name:
                return s
        raise InputError(f"no setting {name!r} was swept: have {', '.join(s.name for s in self.settings)}")


def overlap_twin(strategy: str | Strategy) -> Strategy:
    """The strategy with the same boundaries and header that carries an overlap (E's is F); itself if it has one."""
    s = get_strategy(strategy)
    return next(t for t in STRATEGIES.values() if (t.boundaries, t.header, t.overlap) == (s.boundaries, s.header, True))


def _digest(parts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8") + b"\0")
    return h.hexdigest()


CODE = (chunking, corpus, data, evaluation, fusion, lexical, retrieval)
"""The modules whose code the sweeps' runs depend on (with this one): a change to any of them computes them again."""
READ_ONLY = ("ragkit.tokens", "ragkit.embedding")
"""Modules the runs also depend on (the window count, the embedder's pooling), read from disk, not imported here."""


def sweeps_stamp(
    corpus_: Corpus, questions: Sequence[Question], embedder: Encoder, grid: Grid = GRID
) -> dict[str, Any]:
    """Everything the sweeps depend on: the corpus's texts, the questions, the model's stamp, the grid and the code."""
    model = embedder.stamp
    return {
        "corpus": _digest([f"{d.id}\0{d.title}\0{d.text}" for d in corpus_.documents]),
        "questions": _digest([f"{q.id}\0{q.doc_id}\0{q.needle}\0{q.question}\0{q.ticket}" for q in questions]),
        "model": asdict(model) if is_dataclass(model) and not isinstance(model, type) else repr(model),
        "grid": asdict(grid),
        "code": _digest(
            [
                Path(path).read_text(encoding="utf-8")
                for path in (*(m.__file__ for m in CODE), *map(_origin, READ_ONLY), __file__)
                if path
            ]
        ),
    }


def _origin(module: str) -> str | None:
    """A module's source file, found without importing it."""
    spec = importlib.util.find_spec(module)
    return spec.origin if spec is not None else None


Chunking = tuple[Strategy, int, int]
"""A way of chunking the corpus: a strategy, a size and an overlap."""


def _chunkings(grid: Grid) -> tuple[dict[Hashable, Chunking], dict[Hashable, Chunking]]:
    """The chunking each chunk size and each overlap of the grid is evaluated on, the same one always written alike."""
    base, twin = get_strategy(grid.strategy), overlap_twin(grid.strategy)
    plain = next(
        t for t in STRATEGIES.values() if (t.boundaries, t.header, t.overlap) == (base.boundaries, base.header, False)
    )
    own = OVERLAP if base.overlap else 0

    def chunking(strategy: Strategy, size: int, overlap: int) -> Chunking:
        if overlap == 0:  # nothing carried: the strategy without overlap makes the same chunks, texts and all
            strategy = plain if strategy.overlap else strategy
        return strategy, size, overlap if strategy.overlap else 0

    return {v: chunking(base, v, own) for v in grid.sizes}, {v: chunking(twin, SIZE, v) for v in grid.overlaps}


def swept_texts(corpus_: Corpus, grid: Grid = GRID) -> list[str]:
    """Every distinct chunk text the sweeps embed, chunking by chunking: what a warmer embeds ahead of the sweeps."""
    sizes, overlaps = _chunkings(grid)
    texts: dict[str, None] = {}
    for strategy, size, overlap in sorted({*sizes.values(), *overlaps.values()}, key=lambda c: (c[0].letter, *c[1:])):
        texts.update(dict.fromkeys(c.text for c in chunk_corpus(corpus_, strategy, size, overlap)))
    return list(texts)


def _compute(
    corpus_: Corpus, questions: Sequence[Question], embedder: Encoder, grid: Grid, progress: bool
) -> tuple[Setting, ...]:
    """Every setting of the grid swept over the same queries."""
    queries = make_queries(questions)
    built: dict[Chunking, tuple[Retriever, Chunked]] = {}

    def built_for(key: Chunking) -> tuple[Retriever, Chunked]:
        if key not in built:
            strategy, size, overlap = key
            chunks = chunk_corpus(corpus_, strategy, size, overlap)
            with warnings.catch_warnings():  # counted below, per chunking, and reported as its fact
                warnings.simplefilter("ignore", TruncationWarning)
                r = Retriever(chunks, embedder, strategy.letter, progress)
            hits = needle_hits(chunks, questions)
            built[key] = (
                r,
                Chunked(
                    len(chunks),
                    tuple(q.id for q, h in zip(questions, hits) if not h.any()),
                    over_window(count_pieces(r.texts), embedder.stamp.window),
                ),
            )
        return built[key]

    def dense(r: Retriever, name: str) -> Result:
        return _results(r, questions, queries, {name: (name, r.dense([q.text for q in queries]).ranking)})[name]

    size_chunkings, overlap_chunkings = _chunkings(grid)
    sizes = {v: built_for(key) for v, key in size_chunkings.items()}
    overlaps = {v: built_for(key) for v, key in overlap_chunkings.items()}
    own = OVERLAP if get_strategy(grid.strategy).overlap else 0
    r = built_for(_chunkings(replace(grid, sizes=(SIZE,)))[0][SIZE])[0]
    return (
        Setting(
            "chunk size",
            SIZE,
            {v: dense(rc, f"dense size={v}") for v, (rc, _) in sizes.items()},
            {v: c for v, (_, c) in sizes.items()},
        ),
        Setting(
            "overlap",
            own,
            {v: dense(rc, f"dense overlap={v}") for v, (rc, _) in overlaps.items()},
            {v: c for v, (_, c) in overlaps.items()},
        ),
        Setting("RRF k", RRF_K, rrf_results(r, questions, queries, grid.ks)),
        Setting("dense weight", WEIGHT, weighted_results(r, questions, queries, grid.weights)),
        Setting("BM25 (k1, b)", (K1, B), bm25_results(r, questions, queries, grid.k1s, grid.bs)),
    )


def _value(raw: Any) -> Hashable:
    return tuple(raw) if isinstance(raw, list) else raw


def _to_json(settings: Sequence[Setting], seconds: float) -> dict[str, Any]:
    first = next(iter(settings[0].results.values()))
    return {
        "seconds": seconds,
        "queries": list(first.query_ids),
        "needles": list(first.needle_ids),
        "settings": [
            {
                "name": s.name,
                "default": s.default,
                "values": list(s.results),
                "runs": [
                    {
                        "strategy": r.strategy,
                        "retriever": r.retriever,
                        "ranks": r.ranks.tolist(),
                        "relevant": [list(x) for x in r.relevant],
                    }
                    for r in s.results.values()
                ],
                "chunked": [asdict(s.chunked[v]) for v in s.results] if s.chunked else [],
            }
            for s in settings
        ],
    }


def _from_json(payload: dict[str, Any]) -> tuple[tuple[Setting, ...], float]:
    ids, needles = tuple(payload["queries"]), tuple(payload["needles"])
    settings = []
    for s in payload["settings"]:
        values = [_value(v) for v in s["values"]]
        results = {
            v: Result(
                r["strategy"],
                r["retriever"],
                np.array(r["ranks"], dtype=int),
                ids,
                needles,
                tuple(tuple(x) for x in r["relevant"]),
            )
            for v, r in zip(values, s["runs"])
        }
        chunked = {
            v: Chunked(c["chunks"], tuple(c["destroyed"]), c["over_window"]) for v, c in zip(values, s["chunked"])
        }
        settings.append(Setting(s["name"], _value(s["default"]), results, chunked))
    return tuple(settings), float(payload["seconds"])


def sweep_settings(
    corpus_: Corpus,
    questions: Sequence[Question],
    embedder: Encoder | None = None,
    grid: Grid = GRID,
    cache: bool = True,
    folder: Path | None = None,
    progress: bool = False,
) -> Sweeps:
    """Every setting of ``grid`` swept over the same queries; read back from the result store when it has them.

    ``cache=False`` computes them and stores nothing; ``folder``: the store's folder (default: the vector cache's).
    The vectors of every chunking go through the embedder's own cache, so even a computation embeds only new texts.
    """
    began = time.perf_counter()
    if embedder is None:
        from ragkit.embedding import default_embedder

        embedder = default_embedder()
    key = sweeps_stamp(corpus_, questions, embedder, grid)
    payload = store.read_result("tuning", key, folder) if cache else None
    if payload is not None:
        try:
            settings, seconds = _from_json(payload)
            return Sweeps(settings, seconds, True, "", time.perf_counter() - began, embedder.stamp.window)
        except (KeyError, TypeError, ValueError, InputError):
            pass  # a file of the right stamp but the wrong shape: computed again, and replaced
    settings = _compute(corpus_, questions, embedder, grid, progress)
    seconds = time.perf_counter() - began
    saved = store.write_result("tuning", key, _to_json(settings, seconds), folder) if cache else "not asked to"
    return Sweeps(settings, seconds, False, saved, seconds, embedder.stamp.window)


@dataclass(frozen=True)
class Study:
    """Every setting chosen on the tuning half and judged on the held-out half, the judgments under one Holm."""

    metric: str
    tunings: tuple[Tuning, ...]
    """One per setting; each ``judged`` carries its Holm-adjusted p over the family of all of them."""

    def __getitem__(self, name: str) -> Tuning:
        for t in self.tunings:
            if t.parameter == name:
                return t
        raise InputError(f"no setting {name!r} was tuned: have {', '.join(t.parameter for t in self.tunings)}")

    @property
    def agreed(self) -> tuple[str, ...]:
        """The settings for which the held-out half would have chosen what the tuning half chose."""
        return tuple(t.parameter for t in self.tunings if not t.flattered)

    def rows(self) -> list[dict[str, Any]]:
        """One row per setting and value: both halves' scores, whether chosen or best held out, the setting's test."""
        out = []
        for t in self.tunings:
            for trial in t.trials:
                out.append(
                    {
                        "setting": t.parameter,
                        "value": trial.value,
                        "default": trial.value == t.default,
                        "tuning half": trial.tune,
                        "held-out half": trial.held,
                        "chosen": trial.value == t.chosen,
                        "held-out best": trial.value == t.held_best,
                        "p": t.judged.test.p,
                        "Holm p": t.judged.p_holm,
                    }
                )
        return out

    def __str__(self) -> str:
        lines = [f"{'setting':<14} {'value':<12} {'tuning':>7} {'held-out':>8}  marks"]
        for row in self.rows():
            marks = " ".join(
                m
                for m, on in (
                    ("default", row["default"]),
                    ("CHOSEN", row["chosen"]),
                    ("held-out best", row["held-out best"]),
                )
                if on
            )
            lines.append(
                f"{row['setting']:<14} {row['value']!s:<12} {row['tuning half']:7.3f} "
                f"{row['held-out half']:8.3f}  {marks}"
            )
        lines.append("")
        for t in self.tunings:
            lines.append(
                f"{t.parameter}: chose {t.chosen} (default {t.default}, held-out best {t.held_best}); {t.judged}"
            )
        return "\n".join(lines)


def study(sweeps: Sweeps, metric: str = "MRR", seed: int = SPLIT_SEED) -> Study:
    """Tune every swept setting on ``metric`` and correct their held-out judgments together with Holm."""
    tunings = [tune(s.name, s.results, s.default, metric, seed) for s in sweeps.settings]
    judged = with_holm([t.judged for t in tunings])
    return Study(metric, tuple(replace(t, judged=j) for t, j in zip(tunings, judged)))
