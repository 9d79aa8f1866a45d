"""Exercise 7's check: the smallest efSearch that reaches a recall target on one collection, judged on another.

Both collections are generated from the course's strategy-E vectors (``approximate.generated_collection``) and indexed
with HNSW on one thread, so that a student's kernel and the grader build the same graph. The student chooses on the
tuning collection (``efsearch_recall``); the check finds the smallest efSearch that reaches the target there, accepts
an answer up to ``EX7.step`` above it, and then shows what the answer finds on the judging collection, another draw
with tighter clusters, which the notebook shows only after the check has passed.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragkit import approximate
from ragkit.approximate import (
    EF_CONSTRUCTION,
    Exact,
    M,
    exact_scan,
    faiss_threads,
    generated_collection,
    hnsw_index,
    recall,
    stored_vectors,
)
from ragkit.errors import InputError
from ragkit.plumbing.results import read_attachment, write_result
from ragkit.teach.exercises.feedback import Feedback, record, whole_number
from ragkit.teach.exercises.rules import EX7, EfSearchRules
from ragkit.teach.language import _, say
from ragkit.teach.untrusted import readable

if TYPE_CHECKING:
    import faiss
    import pandas as pd
    from IPython.display import Markdown

    from ragkit.teach.course import Course

__all__ = [
    "Collection",
    "check_efsearch",
    "efsearch_choice_passes",
    "efsearch_recall",
    "judging_collection",
    "seed_collections",
]


@dataclass(eq=False)
class Collection:
    """One generated collection indexed with HNSW, its queries' exact top k, and every efSearch measured so far."""

    index: faiss.IndexHNSWFlat
    queries: np.ndarray
    exact: Exact
    recalls: dict[int, float]

    def recall(self, ef_search: int) -> float:
        """The share of the exact top k the graph finds at this efSearch (faiss searches with at least k)."""
        if ef_search not in self.recalls:
            k = self.exact.ids.shape[1]
            with faiss_threads(1):
                self.index.hnsw.efSearch = int(ef_search)
                scores, ids = self.index.search(self.queries, k)
            self.recalls[ef_search] = recall(ids, scores, self.exact)
        return self.recalls[ef_search]

    def smallest(self, target: float, most: int) -> int | None:
        """The smallest efSearch whose recall reaches ``target`` (from k up, one at a time); None: none up to most."""
        k = self.exact.ids.shape[1]
        return next((ef for ef in range(k, most + 1) if self.recall(ef) >= target), None)


_built: dict[tuple, Collection] = {}
_lock = threading.Lock()


def _queries(course: Course) -> tuple[np.ndarray, np.ndarray]:
    """The collections' centres (strategy E's chunk vectors) and the queries (every course query, as 08b asks)."""
    retriever = course.retriever("E")
    texts = [q.text for q in course.queries] + [o.query for o in course.out_of_domain]
    return retriever.vectors, np.ascontiguousarray(retriever.embed(texts), dtype=np.float32)


def _collection(course: Course, judging: bool, rules: EfSearchRules = EX7) -> Collection:
    """The tuning collection (or the judging one), once per process for these vectors and rules: read where a grader
    stored it for its kernels (``seed_collections``), else built here."""
    key, centres, queries = _key(course, judging, rules)
    with _lock:
        if key not in _built:
            _built[key] = _stored(key, queries) or _build(centres, queries, key[1], key[2], rules)
        return _built[key]


def _key(course: Course, judging: bool, rules: EfSearchRules) -> tuple[tuple, np.ndarray, np.ndarray]:
    """A collection's key (the hash of its centres and queries with their shapes, seed, spread, size, k), and them."""
    centres, queries = _queries(course)
    seed, spread = (rules.judge_seed, rules.judge_spread) if judging else (rules.seed, rules.spread)
    made_of = hashlib.sha256(repr((centres.shape, queries.shape)).encode() + centres.tobytes() + queries.tobytes())
    return (made_of.hexdigest(), seed, spread, rules.vectors, rules.k), centres, queries


def seed_collections(course: Course, folder: Path) -> str:
    """Store the tuning and the judging collection in ``folder`` (a snapshot of the teacher's cache, before it is made
    read-only), where every kernel the grader runs reads them instead of building them; "" when stored, else why not.

    Only the grader stores them, and only there: a student's kernel builds its collections (a few seconds) and keeps
    nothing, and a grading writes nothing into the teacher's cache.
    """
    import faiss

    for judging in (False, True):
        collection = _collection(course, judging)
        key = _key(course, judging, EX7)[0]
        why = write_result(
            STORED,
            _stamp(key),
            {"ids": collection.exact.ids.tolist(), "scores": collection.exact.scores.tolist()},
            folder,
            attachment=faiss.serialize_index(collection.index).tobytes(),
        )
        if why:
            return why
    return ""


STORED = "ex7-collection"
"""The name an exercise-7 collection's graph and exact top k are stored under (``ragkit.plumbing.results``)."""

GRAPH_CODE = (approximate.__file__, __file__)
"""The source files whose code makes a collection: a change to either is a new stamp, so no graph of older code is
read."""


def _stamp(key: tuple) -> dict[str, Any]:
    """Everything a stored collection is made from: the key, the graph's settings, the libraries and the code."""
    import faiss

    sources = [Path(path).read_bytes() for path in GRAPH_CODE if path]
    return {
        "key": list(key),
        "m": M,
        "ef_construction": EF_CONSTRUCTION,
        "faiss": faiss.__version__,
        "numpy": np.__version__,
        "threads": 1,
        "code": hashlib.sha256(b"\0".join(sources)).hexdigest(),
    }


def _stored(key: tuple, queries: np.ndarray) -> Collection | None:
    """The collection stored under this key's stamp, or None (none, another stamp, or its graph fails its checksum)."""
    import faiss

    found = read_attachment(STORED, _stamp(key))
    if found is None:
        return None
    payload, graph = found
    try:
        index = faiss.deserialize_index(np.frombuffer(graph, dtype=np.uint8))
        ids = np.asarray(payload["ids"], dtype=np.int64)
        scores = np.asarray(payload["scores"], dtype=np.float32)
    except (KeyError, TypeError, ValueError, RuntimeError):
        return None
    if (
        not isinstance(index, faiss.IndexHNSWFlat)
        or index.d != queries.shape[1]
        or index.ntotal != key[3]
        or index.metric_type != faiss.METRIC_INNER_PRODUCT
        or ids.shape != (len(queries), key[4])
        or ids.shape != scores.shape
    ):
        return None
    return Collection(index, queries, Exact(ids, scores), {})


def _build(centres: np.ndarray, queries: np.ndarray, seed: int, spread: float, rules: EfSearchRules) -> Collection:
    """The collection built on one thread: the same graph in every kernel and in the grader."""
    index = hnsw_index(centres.shape[1])
    with faiss_threads(1):
        for block in generated_collection(centres, rules.vectors, seed, spread):
            index.add(np.ascontiguousarray(block))
    vectors = stored_vectors(index)
    ids = np.array([exact_scan(vectors, q, rules.k) for q in queries])
    scores = np.take_along_axis(queries @ vectors.T, ids, axis=1)
    return Collection(index, queries, Exact(ids, scores), {})


def efsearch_recall(course: Course, ef_search: Any, rules: EfSearchRules = EX7) -> pd.DataFrame:
    """Recall@k on the tuning collection at each efSearch given, and whether it reaches the target (a table).

    The judging collection is not shown here: it is the check's, shown once the check has passed
    (``judging_collection``). The first call builds the tuning collection's graph (a few seconds to half a minute).
    """
    from ragkit.teach.frames import Frame

    given: list[Any] = [ef_search] if np.isscalar(ef_search) else list(ef_search)
    values = [int(e) for e in given if whole_number(e)]
    if not given or len(values) != len(given) or not all(1 <= e <= rules.most for e in values):
        raise InputError(
            say(
                "efSearch values are whole numbers from 1 to {most}, such as range(20, 129, 4)",
                most=rules.most,
            )
        )
    tuning = _collection(course, judging=False, rules=rules)
    found = [tuning.recall(e) for e in values]
    return Frame(
        {
            "efSearch": values,
            f"Recall@{rules.k}": [round(r, 3) for r in found],
            "reaches target": [r >= rules.target for r in found],
        }
    )


def check_efsearch(course: Course, my_ef: object) -> Feedback:
    """Exercise 7: the smallest efSearch that reaches the target on the tuning collection, judged on another.

    The target, the collections and the tolerance are the exercise's own (``EX7``): nothing a student passes changes
    them.
    """
    feedback, recorded = _efsearch_feedback(course, my_ef)
    return record("ex7", feedback) if recorded else feedback


def efsearch_choice_passes(course: Course, my_ef: object) -> bool:
    """Whether exercise 7's check passes ``my_ef`` (without recording an attempt): the judging collection is shown only
    then."""
    return _efsearch_feedback(course, my_ef)[0].passed


def judging_collection(course: Course, my_ef: object) -> pd.DataFrame | Markdown:
    """After the check has passed ``my_ef``: Recall@k at it on both collections, and each one's own smallest efSearch.

    Before, a sentence that says why the judging collection is not shown yet.
    """
    from IPython.display import Markdown

    from ragkit.teach.frames import Frame

    if not efsearch_choice_passes(course, my_ef):
        return Markdown(_("The judging collection is shown once the check has passed your efSearch."))
    ef = int(my_ef)  # type: ignore[call-overload]
    rows = []
    for judging in (False, True):
        c = _collection(course, judging)
        rows.append(
            {
                _("collection"): _("judging") if judging else _("tuning"),
                say("Recall@{k} at efSearch {ef}", k=EX7.k, ef=ef): round(c.recall(ef), 3),
                _("smallest efSearch that reaches the target"): c.smallest(EX7.target, EX7.most),
            }
        )
    return Frame(rows).set_index(_("collection"))


def _efsearch_feedback(course: Course, my_ef: object) -> tuple[Feedback, bool]:
    """The check's feedback, and whether it is an attempt to record (not a missing answer or argument)."""
    if my_ef is None:
        return Feedback(False, (_("set `my_ef` to a whole number: the efSearch you choose"), str(EX7))), False
    if not callable(getattr(course, "retriever", None)):
        return Feedback(
            False,
            (
                say(
                    "the first argument is a {kind}: pass the course, `check_efsearch(course, my_ef)`",
                    kind=type(course).__name__,
                ),
            ),
        ), False
    if not whole_number(my_ef) or not 1 <= my_ef <= EX7.most:  # type: ignore[operator]
        return Feedback(
            False,
            (
                say(
                    "{value} is not an efSearch: give a whole number from 1 to {most}, such as 64",
                    value=readable(repr(my_ef)),
                    most=EX7.most,
                ),
            ),
            {"ef": None},
        ), True
    ef = int(my_ef)  # type: ignore[call-overload]
    tuning = _collection(course, judging=False)
    found = tuning.recall(ef)
    smallest = tuning.smallest(EX7.target, EX7.most)
    numbers: dict[str, Any] = {"ef": ef, "recall": found}
    notes = [
        say(
            "Recall@{k} at efSearch {ef} on the tuning collection: {recall:.3f} (the target: {target})",
            k=EX7.k,
            ef=ef,
            recall=found,
            target=EX7.target,
        )
    ]
    if ef < EX7.k:
        notes.append(
            say(
                "faiss searches with at least k = {k} candidates, so every efSearch below {k} searches as {k}",
                k=EX7.k,
            )
        )
    if found < EX7.target:
        return Feedback(False, tuple(notes), numbers, hints=(_("try a larger efSearch"),)), True
    if smallest is not None and ef > smallest + EX7.step:
        notes.append(
            say(
                "it reaches the target, and so does a smaller efSearch: the check accepts up to {step} above the "
                "smallest that does",
                step=EX7.step,
            )
        )
        return Feedback(
            False,
            tuple(notes),
            numbers,
            hints=(_("try a smaller efSearch: scan a finer grid with `efsearch_recall(course, range(20, 129, 4))`"),),
        ), True
    judging = _collection(course, judging=True)
    held, own = judging.recall(ef), judging.smallest(EX7.target, EX7.most)
    numbers["judged_recall"] = held
    notes.append(
        say(
            "judged on another collection (tighter clusters): Recall@{k} {recall:.3f} at efSearch {ef}; the "
            "smallest efSearch that reaches {target} there is {own}",
            k=EX7.k,
            recall=held,
            ef=ef,
            target=EX7.target,
            own=own if own is not None else _("none up to the largest measured"),
        )
    )
    if held < EX7.target:
        notes.append(
            _(
                "there your efSearch falls short of the target: a setting chosen on one collection is a guess on "
                "the next, so measure recall on your own vectors before you ship it"
            )
        )
    return Feedback(True, tuple(notes), numbers), True
