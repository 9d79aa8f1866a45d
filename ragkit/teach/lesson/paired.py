"""A report's paired comparisons as a notebook shows them, in the kernel's language.

``ragkit.report`` keeps its headings, claims and verdicts English: the CLI prints them, ``eval --json`` writes them and
code reads them (``line.verdict.startswith("consistent")``). A notebook shows ``paired.comparisons(report)`` instead of
the report itself: the same table from the same figures, its words through the catalogue and its numbers written as
the language writes them. In English it is the report's own table, character for character.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from ragkit.report import RULE, Line, Report, html_table, text_table
from ragkit.statistics import DIFFERENCE, NO_DIFFERENCE
from ragkit.teach.language import _, number, say


def said(text: str) -> str:
    """How the chapter reported a comparison (``report.Finding.said``), its numbers as the language writes them."""
    counted = re.fullmatch(r"\+(\d+)/-(\d+) \(p = (\S+) from its counts\)", text)
    if counted:
        return say(
            "+{wins}/-{losses} (p = {p:g} from its counts)",
            wins=int(counted[1]),
            losses=int(counted[2]),
            p=float(counted[3]),
        )
    given = re.fullmatch(r"\+(\d+)/-(\d+), p = (\S+)", text)
    if given:
        return say("+{wins}/-{losses}, p = {p:g}", wins=int(given[1]), losses=int(given[2]), p=float(given[3]))
    gain = re.fullmatch(r"(\d+\.\d{3}) -> (\d+\.\d{3})", text)
    if gain:
        return say("{before:.3f} -> {after:.3f}", before=float(gain[1]), after=float(gain[2]))
    return text


def verdict(text: str) -> str:
    """A verdict of ``statistics.verdict`` in the kernel's language (as given when it is none of the rule's)."""
    differs = re.fullmatch(r"differs: ours finds (\S+) ahead", text)
    if differs:
        return say("differs: ours finds {run} ahead", run=differs[1])
    return next(
        (
            shown
            for en, shown in (
                ("consistent", _("consistent")),
                ("contradicts", _("contradicts")),
                ("consistent: neither detects a difference", _("consistent: neither detects a difference")),
                ("inconclusive, same direction", _("inconclusive, same direction")),
                ("inconclusive, opposite direction", _("inconclusive, opposite direction")),
                ("inconclusive, no lead either way", _("inconclusive, no lead either way")),
                ("inconclusive, the chapter shows no lead", _("inconclusive, the chapter shows no lead")),
            )
            if en == text
        ),
        text,
    )


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
        said(line.finding.said) if line.finding else "",
        claim(line.finding.claim) if line.finding else "",
        verdict(line.verdict) if line.verdict else "",
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
