"""The threshold: where the course's pipeline says no, a cut on cosine distance.

The gate keeps at most four chunks, and only those whose cosine distance to the query is
under the cut. A sweep counts, per cut, the *bluffs* (out-of-domain queries that still get
chunks) and the answerable questions refused, from distances computed once: moving a
slider re-evaluates a cut in microseconds.
"""

from __future__ import annotations

import copy
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ragkit.chunking import Chunk, chunk_corpus
from ragkit.corpus import Corpus
from ragkit.data import OutOfDomain, Question
from ragkit.data import queries as make_queries
from ragkit.errors import DataError, InputError
from ragkit.evaluation import query_hits
from ragkit.retrieval import Encoder, Retriever

__all__ = [
    "CHAPTER_CUTS",
    "CUT_RANGE",
    "CUT_STEP",
    "DEFAULT_CUT",
    "KEEP",
    "STRICT_CUT",
    "Bluff",
    "Sweep",
    "SweepRow",
    "check_both_kinds",
    "check_cut",
    "default_cuts",
    "gate",
    "sweep",
]

KEEP = 4
"""The gate's keep: at most this many chunks pass it, the chapter's four sources."""
DEFAULT_CUT = 0.675
"""The chapter's default cut (cosine distance): every default in ragkit and the notebooks uses this one."""
STRICT_CUT = 0.525
"""The chapter's strict cut."""
CHAPTER_CUTS = (DEFAULT_CUT, STRICT_CUT)
CUT_RANGE = (0.30, 1.00)
"""The cuts worth trying (cosine distance): the sweep's grid, the sliders and exercise 2 all span this range."""
CUT_STEP = 0.005
"""The finest step between two cuts the course offers: the cut sliders move by it, exercise 2 weighs its grid."""


def check_cut(cut: float | None) -> float | None:
    """A cut is a cosine distance in (0, 2] (any real number, numpy's included; not a bool), or None for none."""
    if cut is None:
        return None
    if isinstance(cut, (bool, np.bool_)) or not isinstance(cut, numbers.Real) or not 0 < cut <= 2:
        raise InputError(
            f"cut {cut!r} is not a cosine distance in (0, 2]: try {DEFAULT_CUT} "
            "(no cut at all: None, or 0 on the command line)"
        )
    return float(cut)


def gate(ranking: np.ndarray, distance: np.ndarray, cut: float | None, keep: int = KEEP) -> np.ndarray:
    """Chunk indices that pass: the first ``keep`` of the ranking, and only those under the cut."""
    top = ranking[:keep]
    cut = check_cut(cut)
    return top if cut is None else top[distance[top] < cut]


@dataclass(frozen=True)
class SweepRow:
    """What the gate does at one cut."""

    cut: float | None
    bluffs: int
    out_of_domain: int
    refused: int
    answered_with_needle: int
    answered_without_needle: int
    in_domain: int


@dataclass(frozen=True)
class Bluff:
    """An out-of-domain query that still got chunks, and the nearest one."""

    query: OutOfDomain
    chunk: Chunk
    distance: float


class Sweep:
    """Distances of the gate's candidates for every query, computed once; any cut is then a comparison."""

    PER_QUERY = ("top_in", "d_in", "needle_in_top", "best_answer", "nearest_in")
    """Arrays with one row per in-domain query."""
    PER_OUT_OF_DOMAIN = ("top_out", "d_out", "nearest_out")
    """Arrays with one row per out-of-domain query."""

    def __init__(
        self,
        chunks: Sequence[Chunk],
        questions: Sequence[Question],
        out_of_domain: Sequence[OutOfDomain],
        ranker: Retriever,
        retriever: str = "dense",
        keep: int = KEEP,
    ):
        """``ranker`` ranks the chunks; ``retriever`` names which of its rankings the gate reads (RETRIEVERS)."""
        self.chunks, self.questions, self.out_of_domain = list(chunks), list(questions), list(out_of_domain)
        check_both_kinds(self.questions, self.out_of_domain)
        self.queries = make_queries(questions)
        self.keep = keep
        texts_in, texts_out = [q.text for q in self.queries], [o.query for o in self.out_of_domain]
        run_in, run_out = ranker.run(retriever, texts_in), ranker.run(retriever, texts_out)
        # the gate compares cosine distances, whichever retriever ranked the candidates
        dist_in = ranker.distances(texts_in) if run_in.distance is None else run_in.distance
        dist_out = ranker.distances(texts_out) if run_out.distance is None else run_out.distance
        self.top_in = run_in.ranking[:, :keep]
        self.top_out = run_out.ranking[:, :keep]
        self.d_in = np.take_along_axis(dist_in, self.top_in, axis=1)
        self.d_out = np.take_along_axis(dist_out, self.top_out, axis=1)
        hits = query_hits(self.chunks, self.questions, self.queries)
        self.needle_in_top = np.take_along_axis(hits, self.top_in, axis=1)
        # the best answer: nearest chunk that carries the needle, anywhere in the corpus
        self.best_answer = np.where(hits, dist_in, np.inf).min(axis=1)
        self.nearest_out = dist_out.min(axis=1)
        self.nearest_in = dist_in.min(axis=1)

    @property
    def worst_in_domain(self) -> float:
        """The in-domain query furthest from its answer: a cut under this refuses it."""
        found = self.best_answer[np.isfinite(self.best_answer)]
        if not len(found):
            raise DataError(
                "no chunk carries any question's needle, so no query has an answer to reach: "
                "check the questions against this corpus with `python -m ragkit validate`"
            )
        return float(found.max())

    @property
    def best_out_of_domain(self) -> float:
        """The out-of-domain query closest to some chunk: a cut above this lets it bluff."""
        return float(self.nearest_out.min())

    @property
    def separable(self) -> bool:
        """Does some cut answer every answerable query and refuse every out-of-domain one? Only when the worst answer
        lies strictly nearer than the nearest out-of-domain query: the gate keeps a chunk below the cut, not at it."""
        return self.worst_in_domain < self.best_out_of_domain

    def at(self, cut: float | None) -> SweepRow:
        """Bluffs, refusals and answers at one cut (None: no threshold)."""
        cut = check_cut(cut)
        limit = np.inf if cut is None else cut
        kept_in = self.d_in < limit
        kept_out = self.d_out < limit
        answered = kept_in.any(axis=1)
        with_needle = (kept_in & self.needle_in_top).any(axis=1)
        return SweepRow(
            cut,
            int(kept_out.any(axis=1).sum()),
            len(self.out_of_domain),
            int((~answered).sum()),
            int(with_needle.sum()),
            int((answered & ~with_needle).sum()),
            len(self.queries),
        )

    def rows(self, cuts: Iterable[float | None] | None = None) -> list[SweepRow]:
        """What the gate does at each cut (default: ``default_cuts()``, 'no threshold' first)."""
        return [self.at(c) for c in (default_cuts() if cuts is None else cuts)]

    def subset(self, ids: Iterable[str]) -> Sweep:
        """The same sweep on some questions (with all their phrasings) and some out-of-domain queries, by id."""
        ids = set(ids)
        unknown = ids - {q.id for q in self.questions} - {o.id for o in self.out_of_domain}
        if unknown:
            raise InputError(
                f"no question or out-of-domain query {', '.join(sorted(unknown))} in this sweep: "
                "pick ids of its own queries (sweep.questions, sweep.out_of_domain)"
            )
        keep = {
            "in": np.array([q.qid in ids for q in self.queries], dtype=bool),
            "out": np.array([o.id in ids for o in self.out_of_domain], dtype=bool),
        }
        part = copy.copy(self)
        part.questions = [q for q in self.questions if q.id in ids]
        part.queries = [q for q in self.queries if q.qid in ids]
        part.out_of_domain = [o for o in self.out_of_domain if o.id in ids]
        for name, value in vars(self).items():
            if isinstance(value, np.ndarray):
                # every array must say which queries its rows are: one left out would silently stay full size
                rows = "in" if name in self.PER_QUERY else "out" if name in self.PER_OUT_OF_DOMAIN else None
                if rows is None:
                    raise TypeError(f"Sweep.{name} is in neither PER_QUERY nor PER_OUT_OF_DOMAIN: name its rows")
                setattr(part, name, value[keep[rows]])
        return part

    def bluffs(self, cut: float | None) -> list[Bluff]:
        """The out-of-domain queries that get chunks at this cut, nearest chunk first, closest query first."""
        cut = check_cut(cut)
        limit = np.inf if cut is None else cut
        out = []
        for i, o in enumerate(self.out_of_domain):
            kept = self.top_out[i][self.d_out[i] < limit]
            if len(kept):
                j = int(np.argmin(self.d_out[i][self.d_out[i] < limit]))
                out.append(Bluff(o, self.chunks[kept[j]], float(self.d_out[i][self.d_out[i] < limit][j])))
        return sorted(out, key=lambda b: b.distance)


def check_both_kinds(questions: Sequence[Question], out_of_domain: Sequence[OutOfDomain]) -> None:
    """Refuse a sweep without in-domain questions or without out-of-domain queries."""
    if not questions or not out_of_domain:
        missing = "in-domain questions" if not questions else "out-of-domain queries"
        raise DataError(
            f"no {missing} to sweep: a cut is judged on both kinds, so give at least one "
            "question and one out-of-domain query (the bundled files have 32 and 30)"
        )


def default_cuts() -> list[float | None]:
    """No threshold, then the CUT_RANGE in steps of 0.025 (the chapter's two cuts among them)."""
    low, high = CUT_RANGE
    grid = sorted(set(np.round(np.arange(low, high + 1e-4, 0.025), 3).tolist()) | set(CHAPTER_CUTS), reverse=True)
    return [None, *grid]


def sweep(
    corpus: Corpus,
    questions: Sequence[Question],
    out_of_domain: Sequence[OutOfDomain],
    strategy: str = "E",
    retriever: str = "dense",
    embedder: Encoder | None = None,
    progress: bool = True,
) -> Sweep:
    """Precompute the gate's candidates for the in-domain and out-of-domain queries (default: dense on E)."""
    check_both_kinds(questions, out_of_domain)
    absent = [q.id for q in questions if not any(q.needle in d.text for d in corpus.documents)]
    if absent:
        raise DataError(
            f"the needle of {', '.join(absent)} is not in the corpus {corpus.folder}: these questions "
            "cannot be answered from it; check them with `python -m ragkit validate --corpus ...`"
        )
    chunks = chunk_corpus(corpus, strategy)
    return Sweep(chunks, questions, out_of_domain, Retriever(chunks, embedder, strategy, progress), retriever)
