"""Run every benchmark and print figures and ratios (``make bench``)."""

from __future__ import annotations

import time
from pathlib import Path

from ragkit.chunking import STRATEGIES, chunk_corpus
from ragkit.corpus import load_corpus

CORPUS = Path(__file__).resolve().parent.parent / "data" / "corpus"


def best_of(fn, repeat: int = 5) -> float:
    """Fastest wall time of several runs: the least disturbed by a shared, noisy machine."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bench_chunking() -> None:
    corpus = load_corpus(CORPUS)
    chars = sum(len(d.text) for d in corpus.documents)
    print(f"chunking: {len(corpus.documents)} documents, {chars:,} characters")
    total = 0.0
    for letter, strategy in STRATEGIES.items():
        seconds = best_of(lambda: chunk_corpus(corpus, letter))
        total += seconds
        print(f"  {letter} {strategy.name:<32} {seconds * 1000:7.1f} ms  {chars / seconds / 1e6:6.2f} M chars/s")
    target = 0.5 * chars / 360_000
    print(f"  all six: {total:.3f} s (target {target:.3f} s for this size: {target / total:.1f}x under budget)"
          if total <= target else f"  all six: {total:.3f} s: OVER the {target:.3f} s target ({total / target:.1f}x)")


def main() -> None:
    bench_chunking()


if __name__ == "__main__":
    main()
