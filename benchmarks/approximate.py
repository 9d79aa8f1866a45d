"""HNSW against the exact scan at one million generated vectors: Recall@20, time per query, build time and memory.

``python -m benchmarks approximate`` (part of ``make bench``); BENCH_APPROXIMATE_SIZE sets another size.
"""

from __future__ import annotations

import os
import resource
import time

from ragkit.approximate import EF_SEARCH, NEIGHBOURS, SPREAD, generated_collection, measure_hnsw

SIZE = 1_000_000
EF_WIDER = (1024, 2048)
"""efSearch values beyond the notebook's: at a million vectors the notebook's widest may not reach the target."""
RECALL_TARGET = 0.95
"""The Recall@20 a production index is usually tuned to reach; the speed-up is read at the cheapest such efSearch."""
SPEEDUP_TARGET = 10.0
"""What HNSW must buy at that recall to be worth its graph: ten times the exact scan's speed."""


def bench_approximate(size: int | None = None) -> None:
    """Time HNSW against the exact scan on the course's chunks and a generated collection."""
    import ragkit.teach.course

    size = size or int(os.environ.get("BENCH_APPROXIMATE_SIZE", SIZE))
    course = ragkit.teach.course.load(progress=False)
    retriever = course.retriever("E")
    queries = retriever.embed([q.text for q in course.queries] + [o.query for o in course.out_of_domain])
    print(
        f"\n== approximate search: HNSW (faiss) against the exact scan over {size:,} generated vectors (the course's "
        f"{len(retriever.vectors):,} chunk vectors of E as centres, noise of spread {SPREAD:g}), the course's "
        f"{len(queries)} queries, top {NEIGHBOURS}"
    )
    t = time.perf_counter()
    trade = measure_hnsw(
        generated_collection(retriever.vectors, size),
        queries,
        f"{size:,} generated vectors",
        ef_search=EF_SEARCH + EF_WIDER,
    )
    seconds = time.perf_counter() - t
    print("  " + str(trade).replace("\n", "\n  "))
    chosen = trade.cheapest(RECALL_TARGET)
    if chosen is None:
        print(f"  no efSearch measured reaches recall {RECALL_TARGET}: MISSES target")
    else:
        speedup = trade.exact_ms / chosen.ms
        print(
            f"  cheapest efSearch at recall >= {RECALL_TARGET}: {chosen.ef_search} (recall {chosen.recall:.3f}), "
            f"{speedup:.1f}x the exact scan's speed (target {SPEEDUP_TARGET:g}x: "
            f"{speedup / SPEEDUP_TARGET:.2f}x {'within' if speedup >= SPEEDUP_TARGET else 'MISSES'} target)"
        )
    print(
        f"  graph over vectors: {trade.memory.graph / trade.memory.vectors:.1%} more memory than the exact scan's "
        f"{trade.memory.vectors / 1e9:.2f} GB"
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"  generate + exact top {NEIGHBOURS} + build + measure: {seconds:.0f} s; "
        f"this process's peak memory {peak:,.0f} MB; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores when it ended"
    )


if __name__ == "__main__":
    bench_approximate()
