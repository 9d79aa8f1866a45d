"""A project on documents of one's own: ground truth and a plan sealed before any retrieval, a run and a cut chosen on
the tuning half of the needles, both judged on the held-out half.

A project is a folder: ``corpus/`` (Markdown documents), ``questions.jsonl`` (needles, each asked as a question and
as a ticket), ``out_of_domain.jsonl``, and the plan ``project.toml`` (the metric that chooses, the runs it chooses
among, the baseline, the gate's prices and refusal ceiling). ``split_project`` splits the needles with the course's
one split (``tuning.halves`` at ``SPLIT_SEED``, by needle, the out-of-domain queries too) and seals every file by its
sha256 into ``split.json``: it reads ids only, and runs no retrieval. ``run_project`` then evaluates the planned runs,
lets the tuning half choose one (``tuning.tune``: ties go to the baseline) and the cheapest cut within the ceiling,
and judges both on the held-out half: the metric with its needle-level interval, the share of queries whose needle
reaches the prompt with its Wilson interval, the tuning half's finding about its challenger against the baseline
with the course's verdict rule (``Challenge``), and the gate's bluffs and refusals with their Wilson intervals. Its
``Outcome`` is what ``results.json`` holds and what a report quotes.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.chunking import STRATEGIES, chunk_corpus
from ragkit.corpus import Corpus, load_corpus
from ragkit.data import OutOfDomain, Question, load_out_of_domain, load_questions, validate
from ragkit.errors import DataError, InputError
from ragkit.evaluation import Result, compare, evaluate
from ragkit.retrieval import RETRIEVERS, Encoder, Retriever
from ragkit.statistics import ClusterInterval, SignTest, Verdict, claim_of, cluster_bootstrap, smallest_p, wilson
from ragkit.threshold import CUT_RANGE, CUT_STEP, KEEP, Sweep, SweepRow
from ragkit.tuning import SPLIT_SEED, Tuning, halves, tune

__all__ = [
    "CORPUS_FOLDER",
    "OUT_OF_DOMAIN_FILE",
    "PLAN_FILE",
    "QUESTIONS_FILE",
    "RESULTS_FILE",
    "SEALED",
    "SPLIT_FILE",
    "Challenge",
    "GateOutcome",
    "Outcome",
    "Plan",
    "Prices",
    "Split",
    "cut_grid",
    "read_plan",
    "read_split",
    "run_project",
    "seal",
    "split_project",
    "write_results",
    "write_split",
]

CORPUS_FOLDER = "corpus"
QUESTIONS_FILE = "questions.jsonl"
OUT_OF_DOMAIN_FILE = "out_of_domain.jsonl"
PLAN_FILE = "project.toml"
SPLIT_FILE = "split.json"
RESULTS_FILE = "results.json"
SEALED = (QUESTIONS_FILE, OUT_OF_DOMAIN_FILE, PLAN_FILE)
"""The files the split seals beside every document of ``corpus/``: what is decided before any retrieval."""


def cut_grid(step: float = CUT_STEP) -> list[float]:
    """The cuts the tuning half weighs, from the strictest: the course's cut range in steps of ``step``."""
    low, high = CUT_RANGE
    return np.round(np.arange(low, high + 1e-9, step), 3).tolist()


@dataclass(frozen=True)
class Prices:
    """The gate's prices of its three mistakes, and the share of answerable queries it may refuse at most."""

    bluff_cost: float = 5.0
    without_needle_cost: float = 3.0
    refusal_cost: float = 1.0
    max_refused: float = 0.25

    def cost(self, row: SweepRow) -> float:
        """The total cost of the gate at one cut: bluffs, answers without the needle and refusals at their prices."""
        return (
            row.bluffs * self.bluff_cost
            + row.answered_without_needle * self.without_needle_cost
            + row.refused * self.refusal_cost
        )

    def within(self, row: SweepRow) -> bool:
        """Whether the gate refuses at most the ceiling's share of the answerable queries at this cut."""
        return row.refused <= self.max_refused * row.in_domain


@dataclass(frozen=True)
class Plan:
    """What a project decides before any retrieval: the metric that chooses, the runs, the baseline, the gate."""

    title: str
    metric: str
    candidates: tuple[str, ...]
    baseline: str
    prices: Prices


def _label(label: object, path: Path) -> str:
    """A run of a plan: a strategy letter and a retriever (``E/dense``), checked."""
    parts = label.split("/") if isinstance(label, str) else []
    if len(parts) != 2 or parts[0] not in STRATEGIES or parts[1] not in RETRIEVERS:
        raise InputError(
            f"{path}: {label!r} is not a run: write a strategy letter ({''.join(STRATEGIES)}) and a retriever "
            f'({", ".join(RETRIEVERS)}), such as "E/dense"'
        )
    return str(label)


def read_plan(path: str | Path) -> Plan:
    """A project's plan from its ``project.toml``; an InputError that names the field and the fix when it is wrong."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path} is missing: write the plan first (see docs/project.md)") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
        raise InputError(f"{path} cannot be read as TOML ({exc}): fix it (see docs/project.md)") from None
    title, metric = raw.get("title", ""), raw.get("metric")
    if not isinstance(title, str) or not isinstance(metric, str):
        raise InputError(f'{path}: title and metric must be text, such as metric = "MRR@10"')
    Result("A", "dense", np.array([1]), ("q",)).per_query(metric)  # an unknown metric is an InputError that says so
    candidates = raw.get("candidates")
    if not isinstance(candidates, list) or not candidates:
        raise InputError(f'{path}: candidates must list the runs to choose among, such as ["E/dense", "E/hybrid"]')
    runs = tuple(dict.fromkeys(_label(c, path) for c in candidates))
    if len(runs) < 2:
        raise InputError(f"{path}: list at least two candidates, the baseline and a run to judge against it")
    baseline = _label(raw.get("baseline"), path)
    if baseline not in runs:
        raise InputError(f"{path}: the baseline {baseline} is not among the candidates: list it there too")
    gate = raw.get("gate", {})
    if not isinstance(gate, dict):
        raise InputError(f"{path}: [gate] must be a table of prices")
    unknown = sorted(set(gate) - set(Prices.__dataclass_fields__))
    if unknown:
        raise InputError(
            f"{path}: [gate] has no field {', '.join(unknown)}: use {', '.join(Prices.__dataclass_fields__)}"
        )
    values = {k: v for k, v in gate.items()}
    if any(isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v < float("inf") for v in values.values()):
        raise InputError(f"{path}: every price in [gate] is a number of 0 or more")
    prices = Prices(**{k: float(v) for k, v in values.items()})
    if prices.max_refused > 1:
        raise InputError(f"{path}: max_refused is a share of the answerable queries, between 0 and 1")
    return Plan(title, metric, runs, baseline, prices)


def _files(folder: Path) -> dict[str, Path]:
    """Every file a split seals, by its name relative to the project: the documents, the ground truth, the plan."""
    found = {f"{CORPUS_FOLDER}/{p.name}": p for p in sorted((folder / CORPUS_FOLDER).glob("*.md"))}
    if not found:
        raise DataError(f"{folder / CORPUS_FOLDER} holds no Markdown documents: put the project's documents there")
    for name in SEALED:
        if not (folder / name).is_file():
            raise DataError(f"{folder / name} is missing: a project needs {', '.join(SEALED)} beside {CORPUS_FOLDER}/")
        found[name] = folder / name
    return found


def seal(folder: str | Path) -> dict[str, str]:
    """The sha256 of every file the split seals, by name: the state of the project when its split was made."""
    return {name: hashlib.sha256(path.read_bytes()).hexdigest() for name, path in _files(Path(folder)).items()}


@dataclass(frozen=True)
class Split:
    """The course's one split of a project's needles and out-of-domain queries, and the files it was made on."""

    tuning: frozenset[str]
    """Needle ids and out-of-domain ids of the tuning half."""
    held_out: frozenset[str]
    needles: frozenset[str]
    """Every needle id (the others are out-of-domain queries)."""
    sealed: Mapping[str, str]
    seed: int = SPLIT_SEED

    def counts(self, half: frozenset[str]) -> tuple[int, int]:
        """How many needles and out-of-domain queries one half holds."""
        return len(half & self.needles), len(half - self.needles)

    def to_dict(self, questions: list[Question], out_of_domain: list[OutOfDomain]) -> dict[str, Any]:
        """The split as ``split.json`` holds it: each half's needles and out-of-domain queries, and the seal."""

        def half(ids: frozenset[str]) -> dict[str, list[str]]:
            return {
                "needles": [q.id for q in questions if q.id in ids],
                "out_of_domain": [o.id for o in out_of_domain if o.id in ids],
            }

        return {
            "seed": self.seed,
            "tuning": half(self.tuning),
            "held_out": half(self.held_out),
            "sealed": dict(sorted(self.sealed.items())),
        }


def _ground_truth(folder: Path) -> tuple[Corpus, list[Question], list[OutOfDomain]]:
    """The project's documents and ground truth, valid; a DataError with every problem otherwise."""
    corpus = load_corpus(folder / CORPUS_FOLDER)
    questions = load_questions(folder / QUESTIONS_FILE)
    out_of_domain = load_out_of_domain(folder / OUT_OF_DOMAIN_FILE)
    problems = [f"{f.path.name} could not be read: {f.reason}" for f in corpus.failed]
    problems += [str(p) for p in validate(corpus, questions, out_of_domain, None)]
    if len(questions) < 4 or len(out_of_domain) < 2:
        problems.append(
            f"{len(questions)} needles and {len(out_of_domain)} out-of-domain queries: each half needs needles "
            "and out-of-domain queries of its own (see docs/project.md for how many a report needs)"
        )
    if problems:
        raise DataError("the project's ground truth is not valid:\n" + "\n".join(f"  {p}" for p in problems))
    return corpus, questions, out_of_domain


def split_project(folder: str | Path) -> Split:
    """The course's split of a project (by needle, at ``SPLIT_SEED``) and its seal; the ground truth checked first.

    No retrieval runs: the split reads the ids, and the seal the files' bytes.
    """
    folder = Path(folder)
    _, questions, out_of_domain = _ground_truth(folder)
    read_plan(folder / PLAN_FILE)
    needles = [q.id for q in questions]
    tuning, held = halves(needles, SPLIT_SEED, [o.id for o in out_of_domain])
    return Split(tuning, held, frozenset(needles), seal(folder))


def write_split(folder: str | Path) -> Path:
    """Split a project and write its ``split.json``; the path written."""
    folder = Path(folder)
    made = split_project(folder)
    questions = load_questions(folder / QUESTIONS_FILE)
    out_of_domain = load_out_of_domain(folder / OUT_OF_DOMAIN_FILE)
    path = folder / SPLIT_FILE
    path.write_text(json.dumps(made.to_dict(questions, out_of_domain), indent=1) + "\n", encoding="utf-8")
    return path


def read_split(folder: str | Path) -> Split:
    """A project's ``split.json``, held to the course's split of its ids and to the files it sealed.

    A split of other halves, or files changed after the split, is a DataError that says which: the held-out half is
    only held out when nothing was decided after it was drawn.
    """
    folder = Path(folder)
    path = folder / SPLIT_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        tuning = {*raw["tuning"]["needles"], *raw["tuning"]["out_of_domain"]}
        held = {*raw["held_out"]["needles"], *raw["held_out"]["out_of_domain"]}
        sealed = {str(k): str(v) for k, v in raw["sealed"].items()}
        seed = raw["seed"]
    except FileNotFoundError:
        raise DataError(
            f"{path} is missing: run `python -m ragkit project split {folder}` before any retrieval"
        ) from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError, KeyError, TypeError, AttributeError) as exc:
        raise DataError(
            f"{path} is not a split ragkit wrote ({type(exc).__name__}): write it again with "
            f"`python -m ragkit project split {folder}`"
        ) from None
    made = split_project(folder)
    if seed != SPLIT_SEED or tuning != made.tuning or held != made.held_out:
        raise DataError(
            f"{path} holds other halves than the course's split of these needles (seed {SPLIT_SEED}): a project is "
            "judged on the one split, never on one chosen after looking"
        )
    changed = sorted(n for n in set(sealed) | set(made.sealed) if sealed.get(n) != made.sealed.get(n))
    if changed:
        raise DataError(
            f"changed since the split was made: {', '.join(changed)}. The split seals what was decided before any "
            "retrieval; a change after it needs a new split, and the report must say why"
        )
    return made


@dataclass(frozen=True)
class GateOutcome:
    """What the gate does at one cut on one half: its counts, their Wilson intervals and the total cost."""

    row: SweepRow
    cost: float

    @property
    def bluff_interval(self) -> tuple[float, float]:
        """The 95% Wilson interval of the bluff rate (out-of-domain queries that got sources)."""
        return wilson(self.row.bluffs, self.row.out_of_domain)

    @property
    def refusal_interval(self) -> tuple[float, float]:
        """The 95% Wilson interval of the refusal rate (answerable queries turned away)."""
        return wilson(self.row.refused, self.row.in_domain)

    def to_dict(self) -> dict[str, Any]:
        r = self.row
        return {
            "bluffs": r.bluffs,
            "out_of_domain": r.out_of_domain,
            "bluff_interval": list(self.bluff_interval),
            "refused": r.refused,
            "in_domain": r.in_domain,
            "refusal_interval": list(self.refusal_interval),
            "answered_with_needle": r.answered_with_needle,
            "answered_without_needle": r.answered_without_needle,
            "cost": self.cost,
        }


@dataclass(frozen=True)
class Challenge:
    """The tuning half's finding about one challenger against the baseline, and what the held-out half makes of it.

    The challenger is the run the tuning half chose, or, when it kept the baseline, the best of the others there.
    The finding is that half's needle-level sign test, and what it claims follows from its own raw p
    (``statistics.claim_of``), as with every finding the course judges; the held-out half's needle-level test judges
    it by the course's one verdict rule (``statistics.Verdict``).
    """

    challenger: str
    baseline: str
    tuning: SignTest
    held_out: SignTest
    verdict: Verdict

    def to_dict(self) -> dict[str, Any]:
        def test(t: SignTest) -> dict[str, Any]:
            return {"wins": t.wins, "losses": t.losses, "p": t.p}

        return {
            "challenger": self.challenger,
            "baseline": self.baseline,
            "tuning": {**test(self.tuning), "claim": claim_of(self.tuning.p)},
            "held_out": test(self.held_out),
            "verdict": str(self.verdict),
        }


@dataclass(frozen=True)
class Outcome:
    """A project judged: the run and the cut the tuning half chose, and everything the held-out half says of them."""

    plan: Plan
    split: Split
    tuning: Tuning
    """Every planned run on both halves, the run the tuning half chose and the one the held-out half would have."""
    challenge: Challenge
    held_needles: int
    held_metric: float
    held_interval: ClusterInterval
    in_prompt: tuple[int, int]
    """Held-out queries whose needle is in the chosen run's top ``KEEP`` (what the gate may pass on), and all."""
    destroyed: tuple[str, ...]
    """Needles no chunk of the chosen strategy quotes whole: every run of that strategy misses them."""
    cut: float | None
    """The cheapest cut within the ceiling on the tuning half (None: no cut stays within it, so no threshold)."""
    tuned_gate: GateOutcome
    held_gate: GateOutcome

    @property
    def chosen(self) -> str:
        return str(self.tuning.chosen)

    @property
    def smallest_p(self) -> float:
        """The smallest two-sided p a sign test over the held-out needles can reach: what this half can show."""
        return smallest_p(self.held_needles)

    @property
    def in_prompt_interval(self) -> tuple[float, float]:
        return wilson(*self.in_prompt)

    def to_dict(self) -> dict[str, Any]:
        """Every figure as ``results.json`` holds it (plain JSON values)."""
        return {
            "title": self.plan.title,
            "metric": self.plan.metric,
            "baseline": self.plan.baseline,
            "chosen": self.chosen,
            "held_out_best": str(self.tuning.held_best),
            "runs": [{"run": str(x.value), "tuning": x.tune, "held_out": x.held} for x in self.tuning.trials],
            "challenge": self.challenge.to_dict(),
            "held_out": {
                "needles": self.held_needles,
                "smallest_p": self.smallest_p,
                "metric": self.held_metric,
                "interval": [self.held_interval.low, self.held_interval.high],
                "design_effect": self.held_interval.design_effect,
                "in_prompt": list(self.in_prompt),
                "in_prompt_interval": list(self.in_prompt_interval),
                "gate": self.held_gate.to_dict(),
            },
            "tuning": {"cut": self.cut, "gate": self.tuned_gate.to_dict()},
            "destroyed": list(self.destroyed),
        }

    def __str__(self) -> str:
        t, f, held = self.tuning, self.challenge, self.held_gate
        (tn, to), (hn, ho) = self.split.counts(self.split.tuning), self.split.counts(self.split.held_out)
        lines = [
            f"{self.plan.title}: {self.plan.metric} of each planned run on the tuning half ({tn} needles, {to} "
            f"out-of-domain queries) and on the held-out half ({hn} needles, {ho} out-of-domain queries)"
        ]
        lines += [
            f"  {x.value!s:<10} tuning {x.tune:.3f}  held-out {x.held:.3f}"
            + ("  CHOSEN" if x.value == t.chosen else "")
            + ("  baseline" if x.value == self.plan.baseline else "")
            + ("  held-out best" if t.flattered and x.value == t.held_best else "")
            for x in t.trials
        ]
        iv = self.held_interval
        lines.append(
            f"held-out {self.plan.metric} of {self.chosen}: {self.held_metric:.3f} (95% needle-level bootstrap "
            f"{iv.low:.3f} to {iv.high:.3f}, design effect {iv.design_effect:.2f}, {self.held_needles} needles)"
        )
        low, high = self.in_prompt_interval
        lines.append(
            f"held-out queries whose needle is in the top {KEEP}: {self.in_prompt[0]} of {self.in_prompt[1]} "
            f"(95% Wilson {low:.3f} to {high:.3f})"
        )
        lines.append(
            f"{f.challenger} against {f.baseline}, needle by needle: tuning half {f.tuning} "
            f"({claim_of(f.tuning.p)}); held-out half {f.held_out} (the smallest p {self.held_needles} needles can "
            f"reach: {self.smallest_p:.2g}); verdict: {f.verdict}"
        )
        cut = "no threshold (no cut stays within the ceiling)" if self.cut is None else f"cut {self.cut:.3f}"
        r, bl, rl = held.row, held.bluff_interval, held.refusal_interval
        lines.append(
            f"gate, {cut} chosen on the tuning half (cost {self.tuned_gate.cost:g}); on the held-out half: bluffs "
            f"{r.bluffs} of {r.out_of_domain} (95% Wilson {bl[0]:.3f} to {bl[1]:.3f}), refused {r.refused} of "
            f"{r.in_domain} ({rl[0]:.3f} to {rl[1]:.3f}), answered without the needle {r.answered_without_needle}, "
            f"cost {held.cost:g}"
        )
        if self.destroyed:
            lines.append(f"destroyed by the chunker of {self.chosen}: {', '.join(self.destroyed)}")
        return "\n".join(lines)


def _half_values(result: Result, metric: str, needles: frozenset[str]) -> tuple[np.ndarray, list[str]]:
    keep = np.isin(np.array(result.needle_ids), list(needles))
    return result.per_query(metric)[keep], [n for n, k in zip(result.needle_ids, keep) if k]


def _challenge(tuned: Tuning, results: Mapping[Hashable, Result], plan: Plan, held: frozenset[str]) -> Challenge:
    """The tuning half's finding about its challenger against the baseline, judged on the held-out half."""
    others = [x for x in tuned.trials if x.value != plan.baseline]
    challenger = str(tuned.chosen) if tuned.chosen != plan.baseline else str(max(others, key=lambda x: x.tune).value)
    needles = set(results[plan.baseline].needle_ids)
    a, b = results[challenger], results[plan.baseline]
    on_tuning = compare(a, b, plan.metric, "needle", drop=held).test
    on_held = compare(a, b, plan.metric, "needle", drop=needles - held).test
    verdict = Verdict.of(
        on_tuning.wins - on_tuning.losses,
        on_held.wins,
        on_held.losses,
        on_held.p,  # one comparison, one family: Holm leaves its p as it is
        kind=claim_of(on_tuning.p),
        a=challenger,
        b=plan.baseline,
    )
    return Challenge(challenger, plan.baseline, on_tuning, on_held, verdict)


def run_project(folder: str | Path, embedder: Encoder | None = None, progress: bool = False) -> Outcome:
    """Judge a project: its planned runs evaluated, one chosen with a cut on the tuning half, both judged held out.

    The split must be the course's and the sealed files unchanged (``read_split``).
    """
    folder = Path(folder)
    corpus, questions, out_of_domain = _ground_truth(folder)
    plan = read_plan(folder / PLAN_FILE)
    split = read_split(folder)
    letters = sorted({c.split("/")[0] for c in plan.candidates})
    names = sorted({c.split("/")[1] for c in plan.candidates})
    built = {s: Retriever(chunk_corpus(corpus, s), embedder, s, progress) for s in letters}
    ev = evaluate(
        corpus, questions, letters, names, embedder=embedder, progress=progress, retriever_for=built.__getitem__
    )
    results: dict[Hashable, Result] = {c: ev[c] for c in plan.candidates}
    tuned = tune("run", results, plan.baseline, plan.metric, SPLIT_SEED)
    chosen = ev[str(tuned.chosen)]
    held_needles = split.needles & split.held_out
    values, needles = _half_values(chosen, plan.metric, held_needles)
    hits = _half_values(chosen, f"Hit@{KEEP}", held_needles)[0]
    letter, name = str(tuned.chosen).split("/")
    sweep = Sweep(built[letter].chunks, questions, out_of_domain, built[letter], name)
    tune_half, held_half = sweep.subset(split.tuning), sweep.subset(split.held_out)
    rows = [(c, tune_half.at(c)) for c in cut_grid()]
    allowed = [(c, row) for c, row in rows if plan.prices.within(row)]
    cut, row = min(allowed, key=lambda a: plan.prices.cost(a[1])) if allowed else (None, tune_half.at(None))
    return Outcome(
        plan,
        split,
        tuned,
        _challenge(tuned, results, plan, held_needles),
        len(held_needles),
        float(values.mean()),
        cluster_bootstrap(values, needles),
        (int(hits.sum()), len(hits)),
        ev.destroyed[letter],
        cut,
        GateOutcome(row, plan.prices.cost(row)),
        GateOutcome(held_half.at(cut), plan.prices.cost(held_half.at(cut))),
    )


def write_results(folder: str | Path, outcome: Outcome) -> Path:
    """Write a project's ``results.json`` (every figure of ``outcome``); the path written."""
    path = Path(folder) / RESULTS_FILE
    path.write_text(json.dumps(outcome.to_dict(), indent=1, allow_nan=False) + "\n", encoding="utf-8")
    return path
