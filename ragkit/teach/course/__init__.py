"""The bundled course in one object: corpus, ground truth, and the experiments the notebooks share.

Notebooks start with ``course = ragkit.teach.course.load()``; every heavy result (chunks,
retrievers, the evaluation, the threshold sweep) is computed on first use and kept, and
the vectors behind them come from the on-disk cache, so a second notebook starts warm.
The course owns its warm-up stages (``STAGES``): what each computes, and which ones a result
needs; ``ragkit.plumbing.warming`` only holds the lock and the status while a warmer runs them.
"""

from __future__ import annotations

import contextlib
import functools
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ragkit import faithfulness, tuning
from ragkit.abstention import ScoreSweep, sweeps
from ragkit.chunking import Chunk, chunk_corpus
from ragkit.corpus import Corpus, load_corpus
from ragkit.data import OutOfDomain, Question, load_out_of_domain, load_questions, queries
from ragkit.evaluation import Evaluation, evaluate
from ragkit.generation import Generator, available_generator
from ragkit.phrasing import Phrasing, compare_phrasings, load_phrasings
from ragkit.plumbing import warming
from ragkit.plumbing.locations import data_dir
from ragkit.plumbing.models import WINDOW
from ragkit.retrieval import Encoder, Retriever
from ragkit.teach import language
from ragkit.threshold import Sweep
from ragkit.tokens import TruncationWarning, count_pieces, over_window

__all__ = ["LATE", "OPENING", "STAGES", "TICK_CHUNKS", "Course", "label", "load", "needs", "total", "warm"]

STAGES = ("E", "queries", "A", "B", "C", "D", "F", "evaluation", "tuning", "generation")
"""What warming computes, in order: strategy E and the queries first (06's slider needs just those), notebook 03b's
tuning sweeps next (the corpus cut three more ways, then every sweep run and stored), notebook 07's generated answers
last (the generator converted on first use, then every answer computed and stored)."""
OPENING = "How many test examples do I need?"
"""Notebook 07's opening question: the prompt it reads, and the first answer a generator writes."""
LATE = "E"
"""The strategy whose shortlists the course's rerankers rerank (``evaluate``'s ``rerank_on``): its warmer keeps the
token vectors late interaction reads (notebook 04) from the pass that embeds its chunks."""
TICK_CHUNKS = 64
"""Chunks a warmer embeds between two progress ticks (what a waiting notebook watches to know it is alive)."""


@dataclass
class Course:
    """Corpus, questions and out-of-domain queries, with shared experiments computed lazily."""

    corpus: Corpus
    questions: list[Question]
    out_of_domain: list[OutOfDomain]
    progress: bool = True
    embedder: Encoder | None = None
    """The embedding model (None: the bundled one, ``ragkit.embedding.default_embedder``)."""
    _retrievers: dict = field(default_factory=dict, repr=False)
    _evaluations: dict = field(default_factory=dict, repr=False)
    _sweeps: dict = field(default_factory=dict, repr=False)
    _abstention: dict = field(default_factory=dict, repr=False)
    truncated: dict = field(default_factory=dict, repr=False)
    _tuning: tuning.Sweeps | None = field(default=None, repr=False)
    _generator: list = field(default_factory=list, repr=False)
    _generation: list = field(default_factory=list, repr=False)

    @property
    def queries(self):
        """The 64 in-domain queries: 32 questions, then their 32 tickets."""
        return queries(self.questions)

    def chunks(self, strategy: str = "E") -> list[Chunk]:
        """The corpus chunked with one strategy."""
        return self.retriever(strategy).chunks if strategy in self._retrievers else chunk_corpus(self.corpus, strategy)

    def retriever(self, strategy: str = "E") -> Retriever:
        """Embedded and BM25-indexed chunks of one strategy (built once)."""
        if strategy not in self._retrievers:
            self._wait(strategy)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                r = Retriever(chunk_corpus(self.corpus, strategy), self.embedder, strategy, self.progress)
            self._retrievers[strategy] = r
            self._sort(caught, strategy, r.texts, r.embedder.stamp.window)
        return self._retrievers[strategy]

    @contextlib.contextmanager
    def recording(self, strategy: str = "E", texts: list[str] | None = None):
        """Inside the block, the encoder's TruncationWarning becomes a note, not stderr; counted over ``texts``
        (the strategy's chunk texts unless given, e.g. chunks with a header of your own design)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        window = self.embedder.stamp.window if self.embedder is not None else WINDOW
        self._sort(caught, strategy, texts if texts is not None else [c.text for c in self.chunks(strategy)], window)

    def _sort(self, caught: list[warnings.WarningMessage], strategy: str, texts: list[str], window: int) -> None:
        """Record truncation for a strategy (counted with the tokenizer); pass every other warning on."""
        for w in caught:
            if issubclass(w.category, TruncationWarning):
                self.truncated[strategy] = (over_window(count_pieces(texts), window), len(texts), window)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)

    def truncation_note(self) -> str:
        """Markdown that says, once, which chunks the encoder truncated while this notebook embedded them."""
        if not self.truncated:
            return ""
        window = next(iter(self.truncated.values()))[2]
        counts = ", ".join(
            language.say("{strategy} **{over}** of {n:,}", strategy=s, over=over, n=n)
            for s, (over, n, _window) in sorted(self.truncated.items())
        )
        return language.say(
            "> **Note: truncated chunks.** The encoder reads at most **{window}** word pieces (its two markers "
            "included) and drops the rest without a word. Chunks longer than that, per strategy: {counts}. "
            "Their vectors stand for their beginning only, yet they are returned and quoted in full. "
            "ragkit counts them with the encoder's own tokenizer so that you see what the encoder does "
            "silently; notebook 01 shows which chunks they are.",
            window=window,
            counts=counts,
        )

    def evaluation(self, strategies: str = "ABCDEF", rerankers: tuple = ()) -> Evaluation:
        """Dense, BM25 and hybrid on the given strategies, plus rerankers on E (kept per arguments)."""
        key = (strategies, tuple(r.name for r in rerankers))
        if key not in self._evaluations:
            self._wait("queries")
            self._evaluations[key] = evaluate(
                self.corpus, self.questions, strategies, rerankers=rerankers, retriever_for=self.retriever
            )
        return self._evaluations[key]

    def phrasings(
        self, strategy: str = "E", retrievers: tuple[str, ...] = ("dense", "bm25", "hybrid"), data: Path | None = None
    ) -> list[Phrasing]:
        """Each question asked in English and in Dutch (``questions_nl.jsonl`` of the course's data), per retriever."""
        dutch = load_phrasings(data_dir(data) / "questions_nl.jsonl", self.questions)
        self._wait("queries")
        return [compare_phrasings(self.retriever(strategy), self.questions, dutch, name) for name in retrievers]

    def sweep(self, strategy: str = "E", retriever: str = "dense") -> Sweep:
        """The threshold sweep (gate's candidates precomputed) for one strategy and retriever."""
        key = (strategy, retriever)
        if key not in self._sweeps:
            r = self.retriever(strategy)
            self._wait("queries")
            self._sweeps[key] = Sweep(r.chunks, self.questions, self.out_of_domain, r, retriever)
        return self._sweeps[key]

    def abstention(self, strategy: str = "E") -> dict[str, ScoreSweep]:
        """The abstention rules on one strategy (cosine distance, BM25's score, a reranker's score), swept over the
        same queries; the reranker is the chapter's cross-encoder where its weights are here, else MaxSim."""
        if strategy not in self._abstention:
            from ragkit.rerank import LateInteractionReranker, available_reranker

            r = self.retriever(strategy)
            self._wait("queries")
            reranker = available_reranker() or LateInteractionReranker()
            self._abstention[strategy] = sweeps(r, r.chunks, self.questions, self.out_of_domain, reranker)
        return self._abstention[strategy]

    def tuning_sweeps(self) -> tuning.Sweeps:
        """Notebook 03b's sweeps: read back from the result store once a warmer's stage "tuning" or a first run has
        computed them."""
        if self._tuning is None:
            self._wait("tuning")
            self._tuning = tuning.sweep_settings(self.corpus, self.questions, self.embedder, progress=self.progress)
        return self._tuning

    def generator(self) -> Generator | None:
        """The course's generator (SmolLM2-135M-Instruct, each answer at most ``faithfulness.ANSWER_TOKENS``), or None
        when its weights are not on this machine (looked for once)."""
        if not self._generator:
            self._generator.append(available_generator(max_new_tokens=faithfulness.ANSWER_TOKENS))
        return self._generator[0]

    def opening(self) -> faithfulness.Opening | None:
        """Notebook 07's opening answer alone (None without a generator): read from the full measurement once it is
        here, else computed or read back by itself, without waiting for a warmer's stage "generation" (a first look at
        07 waits for one answer, not for all of them)."""
        if self._generation:
            measured = self._generation[0]
            return None if measured is None else measured.first
        generator = self.generator()
        if generator is None:
            return None
        return faithfulness.measure_opening(self.retriever("E"), generator, OPENING)

    def generation(self, report: Callable[[int], None] | None = None) -> faithfulness.Measurement | None:
        """Notebook 07's generated measurements on strategy E at the default cut (None without a generator): read back
        from the generator's cache once a warmer's stage "generation" or a first run has computed them. ``report`` is
        called with the count after each answer computed here (a warmer's tick: its waiters see it is alive)."""
        if not self._generation:
            self._wait("generation")
            generator = self.generator()
            if generator is None:
                self._generation.append(None)
                return None
            hooks = [report] if report is not None else []
            if self.progress and report is None:  # a kernel computes them (a warmer reports by its ticks instead)
                line, began = warming.ProgressLine(), time.monotonic()
                hooks.append(
                    lambda n: line(
                        language.say(
                            "Notebook 07 is computing its generated answers with {model}: {n} done; each is stored, "
                            "so a later run reads it back",
                            model=generator.name,
                            n=n,
                        ),
                        time.monotonic() - began,
                        language.say("{seconds} s so far", seconds=round(time.monotonic() - began)),
                    )
                )

            def each(n: int) -> None:
                for hook in hooks:
                    hook(n)

            if hooks:
                generator.report = each
            try:
                measured = faithfulness.measure_generation(
                    self.retriever("E"), self.questions, self.out_of_domain, generator, OPENING
                )
            finally:
                generator.report = None
            self._generation.append(measured)
        return self._generation[0]

    def _wait(self, stage: str) -> None:
        """Let a background warmer finish ``stage`` first (a stage it does not compute is not waited for)."""
        if stage in STAGES:
            warming.wait_for(stage, needs(stage), self.progress, label)

    def _embedder(self) -> Encoder:
        if self.embedder is not None:
            return self.embedder
        from ragkit.embedding import default_embedder

        return default_embedder()

    def compute(self, stage: str, tick: Callable[[int], None] = lambda done: None) -> str:
        """Compute one of STAGES ahead of the notebooks, calling ``tick`` with the chunks embedded every TICK_CHUNKS;
        what was computed, in a few words with its counts."""
        if stage == "queries":
            keep = getattr(self._embedder(), "encode_with_tokens", None)
            if keep is not None:
                keep([q.text for q in self.queries])
            self.sweep("E")
            return f"{len(self.queries) + len(self.out_of_domain)} queries embedded"
        if stage == "generation":
            m, generator = self.generation(report=tick), self.generator()
            if m is None or generator is None:
                return "no generator on this machine: nothing generated"
            return (
                f"{len(m.generations)} answers by {m.model} ({generator.calls} computed now, "
                f"{m.model_seconds:.0f} s of model time when computed)"
            )
        if stage == "evaluation":
            ev = self.evaluation()
            return f"dense, BM25 and hybrid evaluated on {len(ev.chunks)} strategies, {len(self.queries)} queries"
        texts = (
            tuning.swept_texts(self.corpus) if stage == "tuning" else [c.text for c in chunk_corpus(self.corpus, stage)]
        )
        embedder = self._embedder()
        keep = getattr(embedder, "encode_with_tokens", None) if stage == LATE else None
        encode = keep or functools.partial(embedder.encode, progress=False)
        starts = range(0, len(texts), TICK_CHUNKS)
        if self.progress:
            from tqdm.auto import tqdm

            starts = tqdm(starts, desc=f"embedding {stage}", unit="slice")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TruncationWarning)  # counted once, by retriever() below
            for start in starts:
                encode(texts[start : start + TICK_CHUNKS])
                tick(min(start + TICK_CHUNKS, len(texts)))
        if stage == "tuning":
            swept = self.tuning_sweeps()  # its vectors from the cache now
            how = "read back from the result store" if swept.cached else "computed and stored"
            return f"{len(texts):,} chunk texts of the sweeps' cuts embedded, their runs {how}"
        self.retriever(stage)  # from the cache now
        kept = ", with the token vectors late interaction reads and the un-normalised ones notebook 05 measures"
        return f"{len(texts):,} chunks embedded" + (kept if keep else "")


def label(stage: str) -> str:
    """A stage as a waiting notebook names it: "strategy A", "the queries", "the evaluation", "the tuning sweeps",
    "the generated answers"."""
    if stage == "tuning":
        return "the tuning sweeps"
    if stage == "generation":
        return "the generated answers"
    return f"the {stage}" if stage in ("queries", "evaluation") else f"strategy {stage}"


def total(course: Course, stage: str) -> tuple[int, str]:
    """The items a stage counts as it goes, and what they are: a strategy's chunks, the sweeps' chunk texts (other
    stages count none)."""
    if stage == "tuning":
        return len(tuning.swept_texts(course.corpus)), "chunk texts embedded"
    return (
        (len(course.chunks(stage)), "chunks embedded")
        if stage not in ("queries", "evaluation", "generation")
        else (0, "")
    )


def needs(stage: str) -> tuple[str, ...]:
    """The stages a warmer finishes up to ``stage``, in its order: what a wait for it counts."""
    return STAGES[: STAGES.index(stage) + 1]


@functools.lru_cache(maxsize=2)
def load(data: Path | None = None, progress: bool = True) -> Course:
    """The bundled course (or another data folder with ``corpus/``, ``questions.jsonl``, ``out_of_domain.jsonl``)."""
    data = data_dir(data)
    return Course(
        load_corpus(data / "corpus"),
        load_questions(data / "questions.jsonl"),
        load_out_of_domain(data / "out_of_domain.jsonl"),
        progress,
    )


def _say(line: str) -> None:
    print(line, flush=True)  # at once: a background warmer's stdout is a log file, read while it runs


def warm(holder: warming.Holder, progress: bool = False, say: Callable[[str], None] = _say) -> str:
    """Compute every stage of the bundled course in order, reporting to a held warming lock; a line saying so.

    Each stage, as it finishes, is also said (``say``: a flushed line on stdout) with its counts and seconds.
    """
    t = time.perf_counter()
    course = load(progress=progress)
    for i, stage in enumerate(STAGES, 1):
        began = time.perf_counter()
        holder.begin(stage, *total(course, stage))
        what = course.compute(stage, holder.tick)
        holder.finished(stage)
        say(
            f"warm: stage {i} of {len(STAGES)}, {label(stage)}: {what} in {time.perf_counter() - began:.1f} s "
            f"({time.perf_counter() - t:.0f} s so far)"
        )
    ev = course.evaluation()
    return (
        f"cache warm: {sum(ev.chunks.values()):,} chunks of {len(ev.chunks)} strategies, "
        f"{len(tuning.swept_texts(course.corpus)):,} chunk texts of the tuning sweeps' cuts and "
        f"{len(course.queries) + len(course.out_of_domain)} queries embedded in {time.perf_counter() - t:.0f} s"
    )
