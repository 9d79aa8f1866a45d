"""A report's paired comparisons as a notebook shows them, in the kernel's language.

``ragkit.report`` writes its headings, claims and verdicts in English: the CLI prints them and ``eval --json`` writes
them. A notebook shows ``paired.comparisons(report)`` instead of the report itself: the same table from the same values
(a ``Finding``, a ``Verdict``), its words through the catalogue and its numbers written as the language writes them. In
English it is the report's own table, character for character.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from ragkit.report import RULE, Finding, Line, Report, html_table, text_table
from ragkit.statistics import DIFFERENCE, NEITHER, NO_DIFFERENCE, Verdict
from ragkit.teach.language import _, number, say

__all__ = ["Comparisons", "claim", "comparisons", "headings", "row", "said", "verdict_text"]


def said(finding: Finding) -> str:
    """How the chapter reported a comparison (``report.Finding.said``), its numbers as the language writes them."""
    if finding.estimates is not None:
        before, after = finding.estimates
        return say("{before:.3f} -> {after:.3f}", before=before, after=after)
    if finding.paired is None:
        return ""
    wins, losses = finding.paired
    if finding.p_from_counts:
        return say("+{wins}/-{losses} (p = {p:.2g} from its counts)", wins=wins, losses=losses, p=finding.p)
    return say("+{wins}/-{losses}, p = {p:g}", wins=wins, losses=losses, p=finding.p)


def verdict_text(value: Verdict) -> str:
    """A verdict of the one rule (``statistics.Verdict``) in the kernel's language."""
    if value.kind == "differs":
        return say("differs: ours finds {run} ahead", run=value.ahead)
    return {
        ("consistent", ""): _("consistent"),
        ("contradicts", ""): _("contradicts"),
        ("consistent", NEITHER): _("consistent: neither detects a difference"),
        ("inconclusive", "same direction"): _("inconclusive, same direction"),
        ("inconclusive", "opposite direction"): _("inconclusive, opposite direction"),
        ("inconclusive", "no lead either way"): _("inconclusive, no lead either way"),
        ("inconclusive", "the chapter shows no lead"): _("inconclusive, the chapter shows no lead"),
    }[value.kind, value.qualifier]


def claim(text: str) -> str:
    """What a finding claims (``statistics.DIFFERENCE`` or ``NO_DIFFERENCE``) in the kernel's language."""
    return {DIFFERENCE: _(DIFFERENCE), NO_DIFFERENCE: _(NO_DIFFERENCE)}.get(text, text)


def headings() -> tuple[str, ...]:
    """``Report.COMPARISON_COLUMNS`` in the kernel's language."""
    words = {
        "comparison": _("comparison"),
        "metric": _("metric"),
        "queries": _("queries"),
        "Holm p": _("Holm p"),
        "needles": _("needles"),
        "chapter": _("chapter"),
        "claims": _("claims"),
        "verdict": _("verdict"),
    }
    return tuple(words.get(h, h) for h in Report.COMPARISON_COLUMNS)


def row(line: Line) -> list[str]:
    """One comparison as ``Report.comparison_rows`` writes it, its words and numbers in the kernel's language."""
    cells = [f"{line.a} vs {line.b}", line.metric]
    for c in (line.query, line.needle):
        assert c.p_holm is not None, "a report fills in every comparison's Holm p"
        cells += [f"+{c.test.wins}/-{c.test.losses}", number(c.test.p, ".3g"), number(c.p_holm, ".3g")]
    return cells + [
        said(line.finding) if line.finding else "",
        claim(line.finding.claim) if line.finding else "",
        verdict_text(line.verdict) if line.verdict else "",
    ]


@dataclass(frozen=True)
class Comparisons:
    """A report's paired comparisons and, when the chapter's findings are judged, the rule behind the verdicts."""

    report: Report

    def title(self) -> str:
        """The table's caption: the test, and the family Holm runs over."""
        return say(
            "Paired comparisons: exact two-sided sign test on the discordant pairs, Holm within the {n} "
            "comparisons of this report at each level (query level: a query is a pair; needle level: a needle "
            "is a pair, its phrasings scored together)",
            n=len(self.report.lines),
        )

    def rule(self) -> str:
        """The verdict rule, below the table when the report judges the chapter's findings."""
        return say("Verdicts against the chapter: {rule}.", rule=_(RULE))

    def __str__(self) -> str:
        rows = [row(line) for line in self.report.lines]
        out = [self.title() + ":", *text_table(headings(), rows, words=_words())]
        return "\n".join(out + [self.rule()] if self.report.judged else out)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        parts = [html_table(self.title(), headings(), [row(line) for line in self.report.lines])]
        if self.report.judged:
            parts.append(f"<p><small>{html.escape(self.rule())}</small></p>")
        return "\n".join(parts)


def _words() -> set[str]:
    """The headings of columns of words (aligned left in text), in the kernel's language."""
    return {_("comparison"), _("chapter"), _("claims"), _("verdict")}


def comparisons(rep: Report) -> Comparisons:
    """The paired comparisons of ``rep`` to show in a notebook, in the kernel's language (its other tables, strategies
    and runs, are the notebooks' ``tables`` to show)."""
    return Comparisons(rep)
