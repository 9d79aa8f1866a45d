"""The comparison report: one call, one object that the CLI prints, a notebook shows and ``eval --json`` writes.

In the spirit of ranx's ``compare``: ``report(ev, wanted, published)`` runs every wanted paired
comparison at both levels (query and needle), adjusts the p-values with Holm within each level
over everything the report shows, and judges each comparison the chapter published by the one
verdict rule (``statistics.verdict``), according to what it claims: a difference or none. The
chapter's figures come in from the caller as ``Finding`` values: the engine quotes no chapter of its own.
"""

from __future__ import annotations

import html
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ragkit.chunking import STRATEGIES
from ragkit.data import Query
from ragkit.errors import InputError
from ragkit.evaluation import LEVELS, METRICS, NEVER, Comparison, Evaluation, Figure, Result, with_holm
from ragkit.statistics import DIFFERENCE, INCONCLUSIVE, NEITHER, Verdict, claim_of, counts_test
from ragkit.terminal import shown
from ragkit.tokens import TokenReport

__all__ = [
    "RULE",
    "WORDS",
    "Finding",
    "Line",
    "Report",
    "RunRow",
    "StrategySummary",
    "Wanted",
    "html_table",
    "judge",
    "report",
    "text_table",
]

Wanted = tuple[str, str, str]
"""One comparison a report shows: run A's label, run B's label, the metric, e.g. ``("E/dense", "A/dense", "Hit@4")``."""

RULE = (
    "a claimed difference (the chapter's raw p < 0.05) is consistent / contradicts when ours goes the same / "
    f"opposite way with needle-level Holm p < 0.05, otherwise inconclusive ({INCONCLUSIVE}); a claim of no "
    f"detectable difference is consistent when {NEITHER}, and differs when ours detects one"
)


@dataclass(frozen=True)
class Finding:
    """What the chapter published about one comparison: which way it went (A ahead: positive), what it claims
    (``statistics.DIFFERENCE`` or ``NO_DIFFERENCE``), its raw p (None when it has none), and the figures it gave.

    A paired count comes as ``paired`` (A's wins, its losses), with ``p_from_counts`` when the chapter gave no p and
    the exact sign test's p on its counts stands in; two point estimates come as ``estimates`` (B's figure, then A's).
    ``said`` writes them as the report does; a notebook writes the same values in its own language.
    """

    lead: int
    claim: str = DIFFERENCE
    p: float | None = None
    paired: tuple[int, int] | None = None
    p_from_counts: bool = False
    estimates: tuple[float, float] | None = None

    @classmethod
    def counts(cls, wins: int, losses: int, p: float | None = None) -> Finding:
        """A paired count as the chapter reports it: A's wins, its losses, and the p when it gave one; without
        one, the exact sign test's p on its counts stands in, and the claim follows from that p."""
        computed = p is None
        if p is None:
            p = counts_test(wins, losses).p
        return cls(wins - losses, claim_of(p), p, (wins, losses), computed)

    @classmethod
    def gain(cls, b_value: float, a_value: float) -> Finding:
        """Two point estimates as the chapter reports them, B's figure then A's: a claimed gain, with no p."""
        return cls(int(np.sign(a_value - b_value)), estimates=(b_value, a_value))

    @property
    def said(self) -> str:
        """How the chapter reported it, in the report's English (``+18/-3, p = 0.0015``, ``0.094 -> 0.312``)."""
        if self.estimates is not None:
            return f"{self.estimates[0]:.3f} -> {self.estimates[1]:.3f}"
        if self.paired is None:
            return ""
        wins, losses = self.paired
        if self.p_from_counts:
            return f"+{wins}/-{losses} (p = {self.p:.2g} from its counts)"
        return f"+{wins}/-{losses}, p = {self.p:g}"


def judge(finding: Finding, needle: Comparison) -> Verdict:
    """The verdict on a published finding: the one rule, on the needle level and its Holm p (the only call site)."""
    assert needle.p_holm is not None, "a report fills in every comparison's Holm p before judging it"
    return Verdict.of(
        finding.lead, needle.test.wins, needle.test.losses, needle.p_holm, kind=finding.claim, a=needle.a, b=needle.b
    )


@dataclass(frozen=True)
class Line:
    """One comparison of the report at both levels, what the chapter found (if it did), and the verdict."""

    query: Comparison
    needle: Comparison
    finding: Finding | None = None
    verdict: Verdict | None = None

    @property
    def a(self) -> str:
        return self.query.a

    @property
    def b(self) -> str:
        return self.query.b

    @property
    def metric(self) -> str:
        return self.query.metric

    def at(self, level: str) -> Comparison:
        """The comparison at one level, ``query`` or ``needle``."""
        if level not in LEVELS:
            raise InputError(f"unknown level {level!r}: use 'query' or 'needle'")
        return self.query if level == "query" else self.needle


@dataclass(frozen=True)
class StrategySummary:
    """What one chunking strategy did before any ranking: chunks, word pieces, and the needles it destroyed."""

    letter: str
    chunks: int
    tokens: TokenReport
    destroyed: tuple[str, ...]

    @property
    def name(self) -> str:
        return STRATEGIES[self.letter].name


@dataclass(frozen=True)
class RunRow:
    """One run's row of the report's table: its hit rates with their Wilson intervals, MRR, the needles destroyed."""

    strategy: str
    retriever: str
    hits: tuple[Figure, ...]
    """One figure per hit rate of ``METRICS`` (all but MRR), in that order."""
    mrr: float
    destroyed: int
    questions: int


@dataclass(frozen=True)
class Report:
    """An evaluation's figures and paired comparisons (Holm per level, verdicts): print, show or ``to_dict()`` it."""

    queries: tuple[Query, ...]
    n_questions: int
    strategies: tuple[StrategySummary, ...]
    runs: tuple[Result, ...]
    figures: tuple[Figure, ...]
    lines: tuple[Line, ...]

    def line(self, a: str, b: str, metric: str) -> Line:
        """The report's comparison of ``a`` with ``b`` at ``metric``."""
        for line in self.lines:
            if (line.a, line.b, line.metric) == (a, b, metric):
                return line
        raise InputError(
            f"{a} vs {b} at {metric} is not in this report: have "
            + ", ".join(f"{x.a} vs {x.b} at {x.metric}" for x in self.lines)
        )

    @property
    def judged(self) -> tuple[Line, ...]:
        """The lines the chapter published, each with its verdict."""
        return tuple(line for line in self.lines if line.verdict is not None)

    def run_rows(self) -> tuple[RunRow, ...]:
        """One row per run, as values: its hit rates with their Wilson intervals, MRR, and the needles destroyed."""
        by = {(f.strategy, f.retriever, f.metric): f for f in self.figures}
        destroyed = {s.letter: len(s.destroyed) for s in self.strategies}
        return tuple(
            RunRow(
                r.strategy,
                r.retriever,
                tuple(by[r.strategy, r.retriever, m] for m in METRICS[:-1]),
                by[r.strategy, r.retriever, "MRR"].value,
                destroyed[r.strategy],
                self.n_questions,
            )
            for r in self.runs
        )

    def recall_rows(self) -> list[list[str]]:
        """The run rows in the report's English: each hit rate as ``value [low, high]``, MRR, destroyed ``k/n``."""
        return [
            [
                row.strategy,
                row.retriever,
                *(f"{f.value:.3f} [{f.low:.3f}, {f.high:.3f}]" for f in row.hits),
                f"{row.mrr:.3f}",
                f"{row.destroyed}/{row.questions}",
            ]
            for row in self.run_rows()
        ]

    def comparison_rows(self) -> list[list[str]]:
        """One row per comparison: both levels' wins/losses, raw and Holm p, then the chapter and the verdict."""
        rows = []
        for line in self.lines:
            cells = [f"{line.a} vs {line.b}", line.metric]
            for c in (line.query, line.needle):
                cells += [f"+{c.test.wins}/-{c.test.losses}", f"{c.test.p:.3g}", f"{c.p_holm:.3g}"]
            cells += [
                line.finding.said if line.finding else "",
                line.finding.claim if line.finding else "",
                str(line.verdict or ""),
            ]
            rows.append(cells)
        return rows

    RECALL_COLUMNS = ("strategy", "retriever", *METRICS[:-1], "MRR", "destroyed")
    COMPARISON_COLUMNS = (
        "comparison",
        "metric",
        "queries",
        "p",
        "Holm p",
        "needles",
        "p",
        "Holm p",
        "chapter",
        "claims",
        "verdict",
    )

    def _comparisons_title(self) -> str:
        return (
            f"Paired comparisons: exact two-sided sign test on the discordant pairs, Holm within the "
            f"{len(self.lines)} comparisons of this report at each level (query level: a query is a pair; "
            "needle level: a needle is a pair, its phrasings scored together)"
        )

    def __str__(self) -> str:
        out: list[str] = []
        if self.strategies:
            window = self.strategies[0].tokens.window
            out.append(f"Token accounting (bundled model's word pieces; window {window} incl. special tokens):")
            out += [
                f"  {s.letter}: {s.chunks:5d} chunks, {s.tokens.pieces:7,d} pieces, header "
                f"{s.tokens.header_pieces:6,d} ({s.tokens.header_share:.1%}), {s.tokens.over_window:3d} over "
                "the window"
                for s in self.strategies
            ]
            out.append("\nAnswers destroyed (no chunk carries the needle):")
            out += [
                f"  {s.letter}: {len(s.destroyed)}/{self.n_questions}"
                + (f"  ({', '.join(shown(q, None) for q in s.destroyed)})" if s.destroyed else "")
                for s in self.strategies
            ]
        if self.runs:
            out.append("\nHit@k with 95% Wilson intervals, MRR:")
            out += text_table(self.RECALL_COLUMNS, self.recall_rows())
        if self.lines:
            out.append("\n" + self._comparisons_title() + ":")
            out += text_table(self.COMPARISON_COLUMNS, self.comparison_rows())
            if self.judged:
                out.append(f"Verdicts against the chapter: {RULE}.")
        return "\n".join(out).strip("\n")

    def _repr_html_(self) -> str:
        parts: list[str] = []
        if self.strategies:
            parts.append(
                html_table(
                    "Strategies: chunks, word pieces (header share), chunks over the window, answers destroyed",
                    ("strategy", "chunks", "pieces", "header", "over the window", "destroyed"),
                    [
                        [
                            f"{s.letter} ({s.name})",
                            f"{s.chunks:,}",
                            f"{s.tokens.pieces:,}",
                            f"{s.tokens.header_pieces:,} ({s.tokens.header_share:.1%})",
                            str(s.tokens.over_window),
                            f"{len(s.destroyed)}/{self.n_questions}",
                        ]
                        for s in self.strategies
                    ],
                )
            )
        if self.runs:
            parts.append(html_table("Hit@k with 95% Wilson intervals, MRR", self.RECALL_COLUMNS, self.recall_rows()))
        if self.lines:
            parts.append(html_table(self._comparisons_title(), self.COMPARISON_COLUMNS, self.comparison_rows()))
            if self.judged:
                parts.append(f"<p><small>Verdicts against the chapter: {html.escape(RULE)}.</small></p>")
        return "\n".join(parts)

    def to_dict(self) -> dict:
        """Every figure as plain JSON-able data (what ``ragkit eval --json`` writes)."""
        return {
            "queries": [{"id": q.id, "question": q.qid, "phrasing": q.phrasing, "text": q.text} for q in self.queries],
            "strategies": {
                s.letter: {
                    "name": s.name,
                    "chunks": s.chunks,
                    "destroyed": list(s.destroyed),
                    "tokens": {
                        "pieces": s.tokens.pieces,
                        "header_pieces": s.tokens.header_pieces,
                        "header_share": s.tokens.header_share,
                        "over_window": s.tokens.over_window,
                        "window": s.tokens.window,
                    },
                }
                for s in self.strategies
            },
            "runs": [
                {
                    "strategy": r.strategy,
                    "retriever": r.retriever,
                    "ranks": [int(x) if x != NEVER else None for x in r.ranks],
                    "metrics": {m: r.value(m) for m in METRICS},
                }
                for r in self.runs
            ],
            "table": [vars(f) for f in self.figures],
            "comparisons": [
                {
                    "a": c.a,
                    "b": c.b,
                    "metric": c.metric,
                    "level": c.level,
                    "wins": c.test.wins,
                    "losses": c.test.losses,
                    "p": c.test.p,
                    "p_holm": c.p_holm,
                    "a_wins_on": list(c.wins),
                    "b_wins_on": list(c.losses),
                    "chapter": line.finding.said if line.finding else None,
                    "chapter_p": line.finding.p if line.finding else None,
                    "claim": line.finding.claim if line.finding else None,
                    "verdict": str(line.verdict) if line.verdict else None,
                }
                for level in LEVELS
                for line in self.lines
                for c in (line.at(level),)
            ],
        }


def report(
    ev: Evaluation,
    wanted: Iterable[Wanted] = (),
    published: Mapping[Wanted, Finding] | None = None,
    runs: Iterable[str] | None = None,
) -> Report:
    """The report of an evaluation: every wanted comparison whose two runs it holds, at both levels, Holm-adjusted
    within each level, each published one judged; ``runs`` picks the runs whose figures it shows (default all)."""
    published = published or {}
    present = [w for w in dict.fromkeys(wanted) if w[0] in ev.results and w[1] in ev.results]
    adjusted = with_holm([ev.compare(a, b, m, level) for level in LEVELS for a, b, m in present])
    query, needle = adjusted[: len(present)], adjusted[len(present) :]
    lines = []
    for w, q, n in zip(present, query, needle):
        finding = published.get(w)
        lines.append(Line(q, n, finding, judge(finding, n) if finding else None))
    shown = [ev[label] for label in (ev.results if runs is None else runs)]
    letters = list(dict.fromkeys(r.strategy for r in shown))
    return Report(
        queries=tuple(ev.queries),
        n_questions=ev.n_questions,
        strategies=tuple(StrategySummary(s, ev.chunks[s], ev.tokens[s], ev.destroyed[s]) for s in letters),
        runs=tuple(shown),
        figures=tuple(ev.figures([r.label for r in shown])),
        lines=tuple(lines),
    )


WORDS = {"strategy", "retriever", "comparison", "chapter", "claims", "verdict"}
"""Columns of words, aligned left in a text table; figures align right."""


def text_table(head: Sequence[str], rows: Sequence[Sequence[str]], words: Collection[str] = WORDS) -> list[str]:
    """A plain-text table, two spaces between columns: words (the columns headed by one of ``words``) aligned left,
    figures right."""
    width = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]

    def row(cells: Sequence[str]) -> str:
        return (
            "  " + "  ".join(c.ljust(w) if h in words else c.rjust(w) for c, w, h in zip(cells, width, head)).rstrip()
        )

    return [row(head), *(row(r) for r in rows)]


def html_table(caption: str, head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """An HTML table with every string escaped; a cell of one word (a number such as 1.94e-05, a count such as +23/-2)
    never breaks over two lines."""

    def cell(text: str) -> str:
        nowrap = "" if " " in text.strip() else ' style="white-space: nowrap"'
        return f"<td{nowrap}>{html.escape(text)}</td>"

    cells = "".join("<tr>" + "".join(cell(c) for c in r) + "</tr>" for r in rows)
    return (
        f"<table><caption>{html.escape(caption)}</caption><thead><tr>"
        + "".join(f"<th>{html.escape(h)}</th>" for h in head)
        + f"</tr></thead><tbody>{cells}</tbody></table>"
    )
