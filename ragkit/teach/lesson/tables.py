"""Tables for people: the engine's results as pandas DataFrames, for notebooks to filter, pivot and show."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd
from pandas.io.formats.style import Styler

from ragkit.abstention import ScoreSweep
from ragkit.chunking import SIZE
from ragkit.evaluation import FIELD_METRICS, METRICS, Evaluation, with_holm
from ragkit.faithfulness import POSITIONS, Measurement, PromptRate
from ragkit.report import report
from ragkit.statistics import SignTest
from ragkit.teach import language
from ragkit.teach.exercises import CUT_GRID
from ragkit.teach.language import _, say
from ragkit.teach.lesson import formats
from ragkit.threshold import Sweep, SweepRow

__all__ = [
    "SLIDER_RULE",
    "WORD_COLUMNS",
    "abstention",
    "chosen_cut",
    "field_metrics",
    "figures",
    "first_words",
    "flaws_here",
    "for_people",
    "four_or_twenty",
    "ground_truth_words",
    "halves_table",
    "hit_rates",
    "interval",
    "invented",
    "metric_looks",
    "no_cut",
    "paired_test",
    "per_cut",
    "place_name",
    "positions_table",
    "prompt_rates",
    "rule_label",
]


def first_words(text: str, width: int = 60) -> str:
    """At most ``width`` characters of ``text``, cut between words (an ellipsis says so), never inside one."""
    return textwrap.shorten(text, width, placeholder=" …", break_on_hyphens=False)  # all-MiniLM is one word


def figures(ev: Evaluation) -> pd.DataFrame:
    """Tidy table: one row per run and metric, each hit rate with its 95% Wilson interval (``low``, ``high``) and every
    metric with its needle-level cluster-bootstrap interval (``needle_low``, ``needle_high``, ``design_effect``)."""
    return formats.Frame([vars(f) for f in ev.figures()])


def hit_rates(ev: Evaluation) -> pd.DataFrame:
    """Wide table: one row per run, ``value [low, high]`` per hit rate (Wilson: a hit rate is a proportion), MRR with
    its cluster-bootstrap interval over needles (a mean of reciprocal ranks is no proportion), destroyed (the report's
    run rows, their numbers written as the kernel's language writes them)."""
    rep = report(ev)
    mrr = {(f.strategy, f.retriever): f for f in rep.figures if f.metric == "MRR"}
    rows = [
        [
            row.strategy,
            row.retriever,
            *(interval(f.value, f.low, f.high) for f in row.hits),
            interval(
                row.mrr, mrr[row.strategy, row.retriever].needle_low, mrr[row.strategy, row.retriever].needle_high
            ),
            f"{row.destroyed}/{row.questions}",
        ]
        for row in rep.run_rows()
    ]
    return formats.Frame(rows, columns=list(rep.RECALL_COLUMNS))


def interval(value: float, low: float | None, high: float | None) -> str:
    """A figure with its interval, ``0.188 [0.111, 0.300]`` (Dutch ``0,188 [0,111; 0,300]``)."""
    return say("{value:.3f} [{low:.3f}, {high:.3f}]", value=value, low=low, high=high)


def _headings() -> dict[str, str]:
    """The column headings of the pilot notebooks' tables for people, each in the notebook's language."""
    return {
        "characters": _("characters"),
        "content hash": _("content hash"),
        "stamp equals the configuration": _("stamp equals the configuration"),
        f"guessed by a client (characters / {SIZE})": say("guessed by a client (characters / {size})", size=SIZE),
        "counted by the indexer": _("counted by the indexer"),
        "vectors stored": _("vectors stored"),
        "offset in window": _("offset in window"),
        "length": _("length"),
        "rank as question": _("rank as question"),
        "rank as ticket": _("rank as ticket"),
        "held-out best": _("held-out best"),
        "chosen": _("chosen"),
        "sections": _("sections"),
        "tables": _("tables"),
        "formulas": _("formulas"),
        "code blocks": _("code blocks"),
        "bullets": _("bullets"),
        "paragraphs over 512": _("paragraphs over 512"),
        "paragraphs over 1200": _("paragraphs over 1200"),
        "outside the BMP": _("outside the BMP"),
        "needles": _("needles"),
        "shortest": _("shortest"),
        "longest": _("longest"),
        "question": _("question"),
        "ticket": _("ticket"),
        "needle": _("needle"),
        "kind": _("kind"),
        "topic": _("topic"),
        "weights": _("weights"),
        "dimensions": _("dimensions"),
        "size": _("size"),
        "queries": _("queries"),
        "example": _("example"),
        "document": _("document"),
        "section": _("section"),
        "cosine distance": _("cosine distance"),
        "rank": _("rank"),
        **_more_headings(),
        **_lesson_headings(),
    }


def _more_headings() -> dict[str, str]:
    """The headings of the other tables the notebooks show (tables.*, claims.*, the notebooks' own frames)."""
    return {
        "strategy": _("strategy"),
        "destroyed": _("destroyed"),
        "comparison": _("comparison"),
        "metric": _("metric"),
        "chosen by the chapter": _("chosen by the chapter"),
        "wins": _("wins"),
        "losses": _("losses"),
        "queries with two or more relevant chunks": _("queries with two or more relevant chunks"),
        "prompts holding the needle": _("prompts holding the needle"),
        "95% interval": _("95% interval"),
        "against dense, by needle": _("against dense, by needle"),
        "95% interval, needles resampled": _("95% interval, needles resampled"),
        "well-formed identifiers": _("well-formed identifiers"),
        "the answer begins": _("the answer begins"),
        "chapter hits": _("chapter hits"),
        "chapter's interval": _("chapter's interval"),
        "wilson on the chapter's counts": _("wilson on the chapter's counts"),
        "ours": _("ours"),
        "chapter": _("chapter"),
        "chapter p": _("chapter p"),
        "chapter p reported": _("chapter p reported"),
        "recomputed": _("recomputed"),
        "chapter Holm p": _("chapter Holm p"),
        "claims": _("claims"),
        "ours, queries": _("ours, queries"),
        "queries Holm p": _("queries Holm p"),
        "ours, needles": _("ours, needles"),
        "needles Holm p": _("needles Holm p"),
        "verdict": _("verdict"),
        "distance": _("distance"),
        "title": _("title"),
        "verified": _("verified"),
        "value": _("value"),
        "header share": _("header share"),
        "characters per piece": _("characters per piece"),
        "level": _("level"),
    }


def _lesson_headings() -> dict[str, str]:
    """The headings of the frames notebooks 01 to 03 build themselves (01's strategies, destroyed needles, blind cuts,
    the reference rule's costs and word pieces; 02's top five; 03's idf, saturation and hybrid tables)."""
    return {
        "name": _("name"),
        "answers destroyed": _("answers destroyed"),
        "of": _("of"),
        "which": _("which"),
        "needle length": _("needle length"),
        "before the cut": _("before the cut"),
        "after the cut": _("after the cut"),
        "cut in first 64?": _("cut in first 64?"),
        "saved by B?": _("saved by B?"),
        "heading-only chunks": _("heading-only chunks"),
        "cuts inside a decimal number": _("cuts inside a decimal number"),
        "cuts inside code": _("cuts inside code"),
        "chunks starting mid-sentence": _("chunks starting mid-sentence"),
        "word pieces embedded": _("word pieces embedded"),
        "header pieces": _("header pieces"),
        "over the window": _("over the window"),
        "pieces": _("pieces"),
        "starts with": _("starts with"),
        "carries the needle": _("carries the needle"),
        "chunks containing it": _("chunks containing it"),
        "occurrences": _("occurrences"),
        "share of query words in the needle": _("share of query words in the needle"),
        "hybrid ahead of both": _("hybrid ahead of both"),
        **_reranking_headings(),
    }


def _reranking_headings() -> dict[str, str]:
    """The headings and row labels of 04's own tables: the chapter's figures and ours, by run."""
    return {
        "the chapter: dense": _("the chapter: dense"),
        "the chapter: hybrid + cross-encoder": _("the chapter: hybrid + cross-encoder"),
        "the chapter: hybrid + rerank": _("the chapter: hybrid + rerank"),
        "ours: E/dense": _("ours: E/dense"),
        "ours: E/hybrid": _("ours: E/hybrid"),
        "ours: E/hybrid+rerank": _("ours: E/hybrid+rerank"),
        "ours: E/hybrid+maxsim": _("ours: E/hybrid+maxsim"),
        "MaxSim at Hit@1": _("MaxSim at Hit@1"),
        "hybrid rank": _("hybrid rank"),
        "MaxSim rank": _("MaxSim rank"),
    }


def for_people(
    frame: pd.DataFrame, decimals: Mapping[str, int] | None = None, index: str | None = None, stored: bool = False
) -> Styler:
    """``frame`` shown for people (``formats.styled``): headings in words in the notebook's language, no bare 0, 1, 2
    index, ``decimals`` per column (by the frame's own column names), thousands separated. ``stored``: the headings
    are a database's own column names (08's index tables, which a student queries by those names): kept as they are.

    Only a table that is shown: code reading a column keeps the frame (its ``data`` holds the headings shown).
    """
    named = _headings()

    def heading(name: str) -> str:
        # a heading of the course's tables, else anything the catalogue or the engine's templates translate
        if stored or not isinstance(name, str):
            return name
        return named.get(name) or language.translated(name)

    shown = frame if stored else _words_shown(frame)  # a database's rows are its own values (status 'indexed')
    if not stored:  # a truth a notebook wrote as text (08's stamp, astype(str)) reads as yes or no, like any other
        shown = shown.replace({"True": formats.truth(True), "False": formats.truth(False)})
    shown = shown.rename(columns=heading)
    shown = shown.rename_axis(index=[heading(n) if isinstance(n, str) else n for n in shown.index.names])
    if shown.index.nlevels == 1 and shown.index.name is None:  # a transposed table: its headings are the rows
        shown = shown.rename(index=heading)
    return formats.styled(
        shown,
        {heading(c): d for c, d in (decimals or {}).items()},
        None if index is None else heading(index),
        stored,
    )


WORD_COLUMNS = ("kind", "topic", "written by", "setting", "label", "MaxSim at Hit@1", "status")
"""Columns whose values are words (an out-of-domain query's kind and topic, who wrote notebook 07's identifiers,
03b's settings, 07's locators, 04's wins and losses, 08's document states): a table for people shows them in the
notebook's language; the frame a notebook's code reads keeps the English."""


TOTAL = "total"
"""The label of a table's sum row (``corpus.DocumentStats``'s): shown in the notebook's language."""


def ground_truth_words() -> dict[str, str]:
    """The kinds and topics of the out-of-domain queries (data/out_of_domain.jsonl) in the notebook's language."""
    return {
        "adjacent": _("adjacent"),
        "absurd": _("absurd"),
        "football": _("football"),
        "geography": _("geography"),
        "paella": _("paella"),
        "passports": _("passports"),
        "refund policies": _("refund policies"),
        "sport": _("sport"),
        "agent loops": _("agent loops"),
        "image generation": _("image generation"),
        "json schemas": _("json schemas"),
        "prompt caching": _("prompt caching"),
        "prompt injection": _("prompt injection"),
        "rate limits": _("rate limits"),
        "streaming": _("streaming"),
        "vector databases": _("vector databases"),
    }


def _words_shown(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the words of its WORD_COLUMNS (columns or index levels) in the notebook's language."""
    words = {
        **ground_truth_words(),
        "a fixed example": _("a fixed example"),
        "wins": _("wins"),
        "loses": _("loses"),
        "indexed": _("indexed"),
        TOTAL: _("total"),
    }

    def shown(value: object) -> object:
        return words.get(value, language.translated(value)) if isinstance(value, str) else value

    columns = [c for c in frame.columns if c in WORD_COLUMNS]
    out = frame.assign(**{c: frame[c].map(shown) for c in columns}) if columns else frame
    levels = [i for i, n in enumerate(out.index.names) if n in WORD_COLUMNS]
    if levels:
        out = out.copy()
        if out.index.nlevels == 1:
            out.index = out.index.map(shown)
        else:
            out.index = out.index.set_levels([out.index.levels[i].map(shown) for i in levels], level=levels)
    if out.index.nlevels == 1 and TOTAL in out.index:  # a table's sum row (00's corpus) is named in words too
        out = out.rename(index={TOTAL: _("total")})
    return out


def no_cut() -> str:
    """The label of a table's row without a threshold, in the notebook's language."""
    return _("none")


def per_cut(s: Sweep, cuts: Iterable[float | None] | None = None) -> pd.DataFrame:
    """One row per cut (default: every cut of ``default_cuts``, 'no threshold' first): bluffs, refusals, answers."""
    return pd.DataFrame([vars(row) for row in s.rows(cuts)])


def metric_looks(
    ev: Evaluation, pairs: Iterable[tuple[str, str]], chosen: Iterable[tuple[str, str, str]] = (), level: str = "needle"
) -> pd.DataFrame:
    """Every pair at every metric, Holm over all of them: what looking at five metrics after the fact finds."""
    chosen = set(chosen)
    cs = with_holm([ev.compare(a, b, m, level) for a, b in pairs for m in METRICS])
    return formats.Frame(
        [
            {
                "comparison": f"{c.a} vs {c.b}",
                "metric": c.metric,
                "chosen by the chapter": (c.a, c.b, c.metric) in chosen,
                "level": c.level,
                "wins": c.test.wins,
                "losses": c.test.losses,
                "p": c.test.p,
                "Holm p": c.p_holm,
            }
            for c in cs
        ]
    )


def field_metrics(ev: Evaluation, retriever: str = "dense") -> pd.DataFrame:
    """One row per strategy: the field's metrics at cutoff 10 and uncut, and how many relevant chunks a query has."""
    rows = {}
    for r in ev.results.values():
        if r.retriever == retriever:
            row = {m: round(r.value(m), 3) for m in FIELD_METRICS}
            row["queries with two or more relevant chunks"] = sum(len(rel) > 1 for rel in r.relevant)
            rows[r.strategy] = row
    return formats.Frame(pd.DataFrame.from_dict(rows, orient="index").rename_axis(index="strategy"))


SLIDER_RULE = "cosine distance"
"""The abstention rule whose cut 06's explorer moves: its cut is chosen among the explorer's positions."""


def chosen_cut(name: str, rule: ScoreSweep, max_refused: float) -> SweepRow:
    """The cut a rule is shown at in 06's table, chart and sentence: the fewest bluffs while refusing at most
    ``max_refused`` of the answerable queries, the cosine cut among the positions the explorer can reach (0.550,
    never a 0.551 between two of its steps)."""
    reachable = [None, *reversed(CUT_GRID)]  # loosest first, as ``cuts()``: of two cuts alike, the looser is shown
    return rule.fewest_bluffs(max_refused, reachable if name == SLIDER_RULE else None)


def abstention(rules: dict[str, ScoreSweep], max_refused: float) -> pd.DataFrame:
    """Per rule, the cut that bluffs least while refusing at most ``max_refused`` of the answerable queries."""
    rows = []
    for name, rule in rules.items():
        row = chosen_cut(name, rule, max_refused)
        rows.append(
            {
                _("rule"): rule_label(name),
                _("cut"): round(float(row.cut), 3) if row.cut is not None else no_cut(),
                _("bluffs"): row.bluffs,
                _("refused"): row.refused,
                _("answered with the needle kept"): row.answered_with_needle,
                _("answered without the needle"): row.answered_without_needle,
            }
        )
    return pd.DataFrame(rows).set_index(_("rule"))


def rule_label(name: str) -> str:
    """An abstention rule as a reader names it, in the notebook's language (an unknown reranker's as it came)."""
    labels = {
        "cosine distance": _("cosine distance"),
        "BM25 score": _("BM25 score"),
        "maxsim score": _("MaxSim score"),
        "rerank score": _("cross-encoder score"),
        "rerank-int8 score": _("cross-encoder score (int8)"),
    }
    return labels.get(name, name)


def halves_table(m: Measurement | None) -> pd.DataFrame:
    """Notebook 07's 2x2: per kind of prompt, needles recalled and not, the rate and its 95% interval (the rows of
    ``TwoHalves.rows``, their words and numbers in the kernel's language)."""
    if not m:
        return _none()
    kinds = (_("holds the needle"), m.halves.with_needle), (_("lacks the needle"), m.halves.without_needle)
    return formats.Frame(
        [
            {
                "prompt": label,
                "needle recalled": rate.k,
                "needle not recalled": rate.n - rate.k,
                "needle-recall rate": say("{share:.2f}", share=rate.share),
                "95% interval": say("{low:.2f} to {high:.2f}", low=rate.low, high=rate.high),
            }
            for label, rate in kinds
        ]
    ).set_index("prompt")


def paired_test(test: SignTest) -> str:
    """A paired sign test as ``str(SignTest)`` writes it (``+4/-18, p = 0.00434``), in the kernel's language."""
    if test.wins + test.losses == 0:
        return _("no discordant pairs, so nothing to test: p = 1")
    return say("+{wins}/-{losses}, p = {p:.3g}", wins=test.wins, losses=test.losses, p=test.p)


def place_name(position: str) -> str:
    """Where a needle sits in a long prompt (``faithfulness.POSITIONS``), in the kernel's language."""
    return {"first": _("first"), "middle": _("middle"), "last": _("last")}.get(position, position)


def prompt_rates(rates: Iterable[PromptRate]) -> pd.DataFrame:
    """Needle-in-prompt rate per retriever, with its 95% interval (needles resampled) and the paired test against
    dense (by needle, with its Holm-adjusted p)."""
    return formats.Frame(
        [
            {
                "retriever": r.retriever,
                "prompts holding the needle": r.rate.k,
                "queries": r.rate.n,
                "95% interval, needles resampled": say("{low:.2f} to {high:.2f}", low=r.low, high=r.high),
                "against dense, by needle": say(
                    "{test}, Holm p = {holm:.3g}", test=paired_test(r.against_dense), holm=r.holm_p
                )
                if r.against_dense and r.holm_p is not None
                else "",
            }
            for r in rates
        ]
    ).set_index("retriever")


def positions_table(m: Measurement | None) -> pd.DataFrame:
    """Needles recalled with the needle first, in the middle and last of a long prompt, with the paired tests (the
    rows of ``LostInTheMiddle.rows``, their words and numbers in the kernel's language)."""
    if not m:
        return _none()
    rows = []
    for position in POSITIONS:
        rate, trials = m.lost.rate(position), m.lost.trials[position]
        rows.append(
            {
                "needle placed": place_name(position),
                "source number": trials[0].needle_at if trials else 0,
                "recalled": rate.k,
                "asked": rate.n,
                "95% interval": say("{low:.2f} to {high:.2f}", low=rate.low, high=rate.high),
                "against the middle": "" if position == "middle" else paired_test(m.lost.test(position)),
            }
        )
    return formats.Frame(rows).set_index("needle placed")


def flaws_here(found_here: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Notebook 07's sources of one prompt with what is wrong with each (``Pathologies.of``'s flaws, a tuple), in
    words of the kernel's language."""
    words = {
        "only a heading": _("only a heading"),
        "ends inside a number": _("ends inside a number"),
        "starts inside a number": _("starts inside a number"),
        "ends inside code": _("ends inside code"),
        "starts inside code": _("starts inside code"),
        "starts mid-sentence": _("starts mid-sentence"),
        "nothing we count": _("nothing we count"),
    }
    frame = formats.Frame(list(found_here))
    column = "what is wrong with it"
    if column in frame.columns:
        frame[column] = ["; ".join(words[w] for w in flaws) or words["nothing we count"] for flaws in frame[column]]
    return frame.set_index("source")


def four_or_twenty(facts: Mapping[int, pd.DataFrame]) -> pd.DataFrame:
    """Notebook 07's prompts with few or many chunks kept, side by side: how many were built, their length in tokens,
    and where the needle sits (one column per number of chunks, the figures written in the kernel's language)."""

    def column(f: pd.DataFrame) -> dict[str, str]:
        held = f["needle at"]
        return {
            _("prompts built"): say("{built} of {n}", built=int((f.sources > 0).sum()), n=len(f)),
            _("median prompt length (tokens)"): say("{tokens:,.0f}", tokens=f.tokens.median()),
            _("longest prompt (tokens)"): say("{tokens:,.0f}", tokens=f.tokens.max()),
            _("prompts holding the needle"): f"{int(held.notna().sum())}",
            _("median position of the needle"): say("{at:.0f}", at=held.median()) if held.notna().any() else "–",
            _("needle past source 4"): f"{int((held > 4).sum())}",
        }

    return formats.Frame({say("{k} chunks", k=k): column(f) for k, f in facts.items()})


def invented(m: Measurement | None) -> pd.DataFrame:
    """Per topic, the well-formed arXiv identifiers the model wrote without sources, and how its answer begins."""
    if not m:
        return _none()
    return formats.Frame(
        [
            {
                "topic": i.topic,
                "well-formed identifiers": ", ".join(i.identifiers) or _("none"),
                "the answer begins": first_words(i.text, 120),
            }
            for i in m.invented
        ]
    ).set_index("topic")


def _none() -> pd.DataFrame:
    """The table shown where nothing was generated (no generator on this machine)."""
    return pd.DataFrame({_("generated"): [_("nothing: no generator on this machine")]})


def __getattr__(name: str) -> object:
    """A name an older copy of a notebook calls here that is called otherwise now (``ragkit.teach.moved``)."""
    from ragkit.teach.moved import moved_name

    return moved_name(__name__, name)
