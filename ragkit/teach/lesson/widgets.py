"""Interactive widgets for the notebooks: ipywidgets 8 with plain plotly figures (the engine never imports this).

Each widget keeps its logic in plain methods (``update``, ``show``), so tests drive them
headlessly: set a control's value, read the labels, compare with ragkit's own numbers.

A chart inside a widget is a plain figure held in an Output widget's state, never a plotly FigureWidget: the kernel
holds what is drawn, so a page reloaded or a notebook reopened while its kernel runs draws it again (a FigureWidget
comes back as an empty plot after a reload: "[anywidget] Failed to initialize model").
"""

from __future__ import annotations

import html
import itertools
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

import ipywidgets as w
import plotly.io as pio

from ragkit.chunking import STRATEGIES, Chunk, chunk_corpus
from ragkit.citations import verify
from ragkit.evaluation import LEVELS, METRICS, Comparison, Evaluation, with_holm
from ragkit.plumbing import locations
from ragkit.statistics import ALPHA
from ragkit.teach import language
from ragkit.teach.language import _, say
from ragkit.teach.lesson import plots
from ragkit.teach.lesson.formats import count, noun
from ragkit.teach.lesson.tables import first_words
from ragkit.threshold import CUT_RANGE, CUT_STEP, DEFAULT_CUT, KEEP, Sweep, gate

if TYPE_CHECKING:
    from ragkit.teach.course import Course

__all__ = [
    "CHART_HEIGHT",
    "SLIDER_WIDTH",
    "ChunkExplorer",
    "QueryPlayground",
    "SourceViewer",
    "StrategyDuel",
    "ThresholdExplorer",
    "cut_direction",
    "cut_slider",
    "drawn",
    "kind_of",
    "project_path",
    "whole_words",
    "with_readout",
]


SLIDER_WIDTH = "480px"
CHART_HEIGHT = 450
"""The height of a chart inside a widget, kept while it is redrawn so that the page below it does not jump."""


def drawn(fig: plots.Described) -> dict:
    """``fig`` as one output of an Output widget: plotly's own JSON, its text alternative where it cannot be drawn."""
    return {
        "output_type": "display_data",
        "metadata": {},
        "data": {
            "application/vnd.plotly.v1+json": {
                **json.loads(pio.to_json(fig, validate=False)),
                "config": {"responsive": True},
            },
            "text/plain": fig.description,
        },
    }


def kind_of(kind: str) -> str:
    """An out-of-domain query's kind (the ground truth's English word) in the kernel's language."""
    return {"adjacent": _("adjacent"), "absurd": _("absurd")}.get(kind, kind)


def cut_slider(cut: float = DEFAULT_CUT) -> w.FloatSlider:
    """A slider over CUT_RANGE, as every cut slider of the course: left is tighter, right is looser."""
    return w.FloatSlider(
        value=cut,
        min=CUT_RANGE[0],
        max=CUT_RANGE[1],
        step=CUT_STEP,
        readout_format=".3f",
        description=_("cut"),
        continuous_update=True,
        layout=w.Layout(width=SLIDER_WIDTH),
    )


def with_readout(slider: w.FloatSlider) -> w.Widget:
    """A cut slider with its value written as the kernel's language writes numbers: the slider's own readout in
    English (0.675), in Dutch a label beside it (0,675), since the browser's readout knows only the decimal point."""
    if language.current() != "nl":
        return slider
    slider.readout = False
    readout = w.HTML(layout=w.Layout(margin="0 0 0 .5em"))

    def write(value: float) -> None:
        with language.speaking("nl"):  # the slider's language, whatever the kernel speaks when it moves
            readout.value = f"<span class='ragkit-cut-readout'>{language.number(value, '.3f')}</span>"

    slider.observe(lambda change: write(change["new"]), names="value")
    write(slider.value)
    return w.HBox([slider, readout])


def cut_direction() -> w.HTML:
    """What left and right mean, written under a cut slider's two ends."""
    return w.HTML(
        f"<small class='ragkit-cut-direction' style='display:flex;justify-content:space-between;"
        f"width:{SLIDER_WIDTH};padding-left:90px;box-sizing:border-box;white-space:nowrap;gap:1em'>"
        f"<span>{html.escape(_(plots.TIGHTER))}</span><span>{html.escape(_(plots.LOOSER))}</span></small>"
    )


class ThresholdExplorer:
    """The cut as a slider: bluffs, refusals, the cut on the distance plot and the bluffing queries, live."""

    def __init__(self, sweep: Sweep, cut: float = DEFAULT_CUT):
        self.sweep = sweep
        self.slider = cut_slider(cut)
        self.control = with_readout(self.slider)
        self.direction = cut_direction()
        self.bluffs = w.HTML(layout=w.Layout(margin="0 1em"))
        self.refused = w.HTML(layout=w.Layout(margin="0 1em"))
        self.answered = w.HTML(layout=w.Layout(margin="0 1em"))
        self.bluff_list = w.HTML()
        self.figure = plots.distance_histogram(sweep, cut)
        self.figure.update_layout(height=CHART_HEIGHT)
        self.chart = w.Output(layout=w.Layout(min_height=f"{CHART_HEIGHT}px"))
        self.last_update_ms = 0.0
        self.slider.observe(lambda change: self.update(change["new"]), names="value")
        self.update(cut)

    def update(self, cut: float) -> None:
        """Recompute everything shown for one cut."""
        t = time.perf_counter()
        row = self.sweep.at(cut)
        self.bluffs.value = say(
            "<b class='ragkit-bluffs'>bluffs: <span class='ragkit-bluff-count'>{bluffs}</span> / {out_of_domain}</b>",
            bluffs=row.bluffs,
            out_of_domain=row.out_of_domain,
        )
        self.refused.value = say(
            "<b class='ragkit-refused'>refused answerable: "
            "<span class='ragkit-refused-count'>{refused}</span> / {in_domain}</b>",
            refused=row.refused,
            in_domain=row.in_domain,
        )
        self.answered.value = say(
            "answered with the needle kept: {kept}, without it: {without}",
            kept=row.answered_with_needle,
            without=row.answered_without_needle,
        )
        items = "".join(
            say(
                "<li><code>{distance:.3f}</code> {query} <i>({kind})</i> &rarr; {doc_id}, {section}</li>",
                distance=b.distance,
                query=html.escape(b.query.query),
                kind=html.escape(kind_of(b.query.kind)),
                doc_id=html.escape(b.chunk.doc_id),
                section=html.escape(b.chunk.section or _("introduction")),
            )
            for b in self.sweep.bluffs(cut)
        )
        self.bluff_list.value = (
            f"<div style='max-height:16em;overflow:auto'><ol>{items}</ol></div>"
            if items
            else _("<i>no out-of-domain query gets a chunk at this cut</i>")
        )
        plots.move_cut(self.figure, cut)
        plots.described(self.figure, plots.histogram_text(self.sweep, cut))
        self.chart.outputs = (drawn(self.figure),)
        self.last_update_ms = 1000 * (time.perf_counter() - t)

    def widget(self) -> w.Widget:
        """The assembled widget to display."""
        return w.VBox(
            [
                self.control,
                self.direction,
                w.HBox([self.bluffs, self.refused]),
                self.answered,
                self.chart,
                w.HTML(_("<b>Bluffing queries and the nearest chunk they would get:</b>")),
                self.bluff_list,
            ]
        )


class ChunkExplorer:
    """Pick a strategy and a question: a window around the needle, chunk boundaries and carried overlap drawn."""

    NEEDLE = "background:#fff176"
    OVERLAP = "background:#bbdefb;text-decoration:underline dotted #1565c0"

    def __init__(self, course: Course, strategy: str = "A", margin: int = 400):
        self.course, self.margin = course, margin
        self.strategy = w.Dropdown(
            options=[(f"{k}: {s.name}", k) for k, s in STRATEGIES.items()], value=strategy, description=_("strategy")
        )
        self.question = w.Dropdown(
            options=[(f"{q.id}: {first_words(q.question, 70)}", q.id) for q in course.questions],
            description=_("question"),
            layout=w.Layout(width="640px"),
        )
        self.asked = w.HTML()  # the whole question, wrapped as prose: a list entry has room for its first words only
        self.verdict = w.HTML()
        self.view = w.HTML()
        self._chunks: dict[str, list[Chunk]] = {}
        for control in (self.strategy, self.question):
            control.observe(lambda _: self.update(), names="value")
        self.update()

    def chunks(self, strategy: str):
        """The corpus chunked with one strategy (kept once computed)."""
        if strategy not in self._chunks:
            self._chunks[strategy] = chunk_corpus(self.course.corpus, strategy)
        return self._chunks[strategy]

    def update(self) -> None:
        """Redraw for the selected strategy and question: the needle always sits inside the shown window."""
        q = next(q for q in self.course.questions if q.id == self.question.value)
        self.asked.value = f"<p class='ragkit-asked'><b>{html.escape(q.id)}</b>: {html.escape(q.question)}</p>"
        doc = self.course.corpus[q.doc_id]
        chunks = [c for c in self.chunks(self.strategy.value) if c.doc_id == q.doc_id]
        start = doc.text.find(q.needle)
        end = start + len(q.needle)
        carriers = [i for i, c in enumerate(chunks) if q.needle in c.carried]
        inside = [c for c in chunks if c.start < end and c.end > start]
        if carriers:
            c = chunks[carriers[0]]
            how = _("inside its own words") if q.needle in c.content else _("thanks to the overlap it carries")
            self.verdict.value = say(
                "<b style='color:#2e7d32'>kept</b>: chunk {chunk} of {chunks} in this document "
                "carries the whole needle ({how}).",
                chunk=carriers[0] + 1,
                chunks=len(chunks),
                how=how,
            )
        else:
            cuts = sorted(
                {c.end for c in inside if start < c.end < end} | {c.start for c in inside if start < c.start < end}
            )
            self.verdict.value = say(
                "<b style='color:#c62828'>destroyed</b>: the needle (characters {start}-{end}) "
                "is split by {where} {cuts}; no chunk carries it whole.",
                start=start,
                end=end,
                where=noun(len(cuts), _("a cut at"), _("cuts at")),
                cuts=", ".join(map(str, cuts)) or _("a chunk edge"),
            )
        lo, hi = whole_words(doc.text, max(0, start - self.margin), min(len(doc.text), end + self.margin), start, end)
        overlaps = [
            (max(lo, c.start - len(c.overlap)), min(hi, c.start))
            for c in chunks
            if c.overlap and c.start - len(c.overlap) < hi and c.start > lo
        ]
        marks = sorted({c.start for c in chunks if lo < c.start < hi} | {c.end for c in chunks if lo < c.end < hi})
        pieces, pos = [], lo
        for m in marks + [hi]:
            pieces.append(
                self._segment(
                    doc.text, pos, m, [(start, end, self.NEEDLE)] + [(a, b, self.OVERLAP) for a, b in overlaps]
                )
            )
            if m != hi:
                pieces.append("<span class='ragkit-cut' style='color:#ef6c00;font-weight:bold'>&#9474;</span>")
            pos = m
        above = say("<i>&hellip; {n:,} characters above</i>", n=lo) + "\n" if lo else ""
        below = "\n" + say("<i>&hellip; {n:,} characters below</i>", n=len(doc.text) - hi) if hi < len(doc.text) else ""
        legend = say(
            "<small><span style='color:#ef6c00;font-weight:bold'>&#9474;</span> a cut &nbsp; "
            "<mark>the needle</mark> &nbsp; <span style='{overlap}'>overlap: words the next chunk carries "
            "again</span> &nbsp; <span style='{overlap}'><mark>needle in an overlap</mark></span></small>",
            overlap=self.OVERLAP,
        )
        self.view.value = (
            f"{legend}<div class='ragkit-chunk-view' style='font-family:monospace;white-space:pre-wrap;"
            f"border:1px solid #ddd;padding:.5em'>{above}{''.join(pieces)}{below}</div>"
        )

    @staticmethod
    def _segment(text: str, a: int, b: int, spans: list[tuple[int, int, str]]) -> str:
        """Text a..b as HTML, each character styled by the spans covering it (needle, overlap)."""
        points = sorted({a, b} | {p for lo, hi, _ in spans for p in (lo, hi) if a < p < b})
        out = []
        for x, y in itertools.pairwise(points):
            piece = html.escape(text[x:y])
            styles = [style for lo, hi, style in spans if lo <= x and y <= hi]
            needle = any(style == ChunkExplorer.NEEDLE for style in styles)
            overlap = any(style == ChunkExplorer.OVERLAP for style in styles)
            # the needle is drawn over the overlap, never under it: its yellow inside, the overlap's underline kept
            if needle:
                piece = f"<mark>{piece}</mark>"
            if overlap:
                piece = f"<span class='ragkit-overlap' style='{ChunkExplorer.OVERLAP}'>{piece}</span>"
            out.append(piece)
        return "".join(out)

    def widget(self) -> w.Widget:
        """The assembled widget to display."""
        return w.VBox([w.HBox([self.strategy, self.question]), self.asked, self.verdict, self.view])


class StrategyDuel:
    """Two runs: wins, losses, exact p at every metric and both levels, Holm over what is shown, and who disagrees."""

    def __init__(self, ev: Evaluation, a: str = "E/dense", b: str = "A/dense", metric: str = "Hit@20"):
        labels = list(ev.results)
        self.ev = ev
        self.a = w.Dropdown(options=labels, value=a if a in labels else labels[0], description="A")
        self.b = w.Dropdown(options=labels, value=b if b in labels else labels[-1], description="B")
        self.metric = w.Dropdown(options=list(METRICS), value=metric, description=_("metric"))
        self.result = w.HTML()
        for control in (self.a, self.b, self.metric):
            control.observe(lambda _: self.update(), names="value")
        self.update()

    def update(self) -> None:
        a, b, chosen = self.a.value, self.b.value, self.metric.value
        if a == b:
            self.result.value = _("<p>Pick two different runs: a run never disagrees with itself.</p>")
            return
        shown = with_holm([self.ev.compare(a, b, m, level) for level in LEVELS for m in METRICS])
        by = {(c.metric, c.level): c for c in shown}

        def cell(c: Comparison) -> str:
            """One table cell: wins, losses, raw and Holm p (or why there is nothing to test)."""
            return (
                say(
                    "+{wins}/-{losses}, p = {p:.3g}, Holm p = {holm:.3g}",
                    wins=c.test.wins,
                    losses=c.test.losses,
                    p=c.test.p,
                    holm=c.p_holm,
                )
                if c.test.wins + c.test.losses
                else _("no discordant pairs: p = 1")
            )

        marked = " style='font-weight:bold;background:#fff3e0'"
        rows = "".join(
            f"<tr{marked if m == chosen else ''}><td>{m}</td>"
            f"<td>{cell(by[m, 'query'])}</td><td>{cell(by[m, 'needle'])}</td></tr>"
            for m in METRICS
        )
        c = by[chosen, "needle"]
        assert c.p_holm is not None, "with_holm fills in every comparison's Holm p"
        verdict = (
            _("a difference this data can tell apart")
            if c.p_holm < ALPHA
            else say("not distinguishable with {n} needles", n=self.ev.n_questions)
        )
        texts = {q.id: q.text for q in self.ev.queries}

        def asked(needle: str) -> str:
            """The needle's phrasings, each with its text, as small lines."""
            return "".join(
                f"<br><small>{html.escape(q.phrasing)}: {html.escape(texts[q.id])}</small>"
                for q in self.ev.queries
                if q.qid == needle
            )

        def row(ids: tuple[str, ...]) -> str:
            """List items for needle ids, with their phrasings (or "none")."""
            return "".join(f"<li><code>{html.escape(i)}</code>{asked(i)}</li>" for i in ids) or _("<li>none</li>")

        self.result.value = (
            say(
                "<p>At <b>{metric}</b>, needle by needle, <b>{a}</b> wins <b>{wins}</b>, loses <b>{losses}</b>; exact "
                "two-sided sign test p = <b>{p:.3g}</b>, Holm p = <b>{holm:.3g}</b> over the {tests} tests below "
                "({verdict}).</p>",
                metric=chosen,
                a=html.escape(a),
                wins=c.test.wins,
                losses=c.test.losses,
                p=c.test.p,
                holm=c.p_holm,
                tests=sum(x.level == c.level for x in shown),  # Holm's family: one level's metrics
                verdict=verdict,
            )
            + _("<table><tr><th>metric</th><th>queries as pairs</th><th>needles as pairs</th></tr>")
            + f"{rows}</table>"
            + say("<details><summary>needles where {run} wins at {metric}</summary>", run=html.escape(a), metric=chosen)
            + f"<ul>{row(c.wins)}</ul></details>"
            + say("<details><summary>needles where {run} wins at {metric}</summary>", run=html.escape(b), metric=chosen)
            + f"<ul>{row(c.losses)}</ul></details>"
        )

    def widget(self) -> w.Widget:
        return w.VBox([w.HBox([self.a, self.b, self.metric]), self.result])


class QueryPlayground:
    """Type a question: dense, BM25, hybrid (and a reranker) side by side, each with its own score, and the gate."""

    def __init__(self, course: Course, strategy: str = "E", cut: float = DEFAULT_CUT, reranker=None, k: int = 5):
        self.course, self.k, self.reranker = course, k, reranker
        self.retriever = course.retriever(strategy)
        self.text = w.Text(
            value="How many test examples do I need?",
            description=_("question"),
            placeholder=_("type a question, then press Enter or click Search"),
            layout=w.Layout(width="560px"),
            continuous_update=False,
        )
        self.search = w.Button(description=_("Search"), button_style="primary", icon="search")
        self.cut = cut_slider(cut)
        self.control = with_readout(self.cut)
        self.direction = cut_direction()
        self.gate = w.HTML()
        self.table = w.HTML()
        for control in (self.text, self.cut):
            control.observe(lambda _: self.update(), names="value")
        self.search.on_click(lambda _: self.update())
        self.update()

    def update(self) -> None:
        """Clear the old results at once, then search for the question in the box."""
        self.gate.value, self.table.value = _("<i>searching&hellip;</i>"), ""
        query = self.text.value.strip()
        if not query:
            self.gate.value = "<i>" + _("type a question, then press Enter or click Search") + "</i>"
            return
        r = self.retriever
        dense = r.dense([query])
        bm25 = r.bm25([query])
        assert bm25.score is not None, "a BM25 run carries its scores"
        bm25_scores = bm25.score[0]
        runs = {"dense": dense, "bm25": bm25, "hybrid": r.hybrid([query], dense, bm25)}
        if self.reranker is not None:
            runs[self.reranker.name] = r.reranked([query], self.reranker, runs["hybrid"])
        assert dense.distance is not None  # a dense run always carries its distances
        distance = dense.distance[0]
        under = int((distance < self.cut.value).sum())
        kept = gate(dense.ranking[0], distance, self.cut.value, KEEP)
        rule = say(
            "the gate keeps at most <b>{keep}</b> chunks: the first {keep} of the dense ranking, and of those "
            "only the ones under the cut",
            keep=KEEP,
        )
        if len(kept):
            self.gate.value = say(
                "<b>gate</b> at {cut:.3f}: <span class='ragkit-gate'>{kept}</span>; "
                "in all, {under} under the cut, and {rule}. The prompt would be built "
                "from these.",
                cut=self.cut.value,
                kept=count(len(kept), _("chunk passes"), _("chunks pass")),
                under=count(under, _("chunk lies"), _("chunks lie")),
                rule=rule,
            )
        else:
            self.gate.value = say(
                "<b>gate</b> at {cut:.3f}: <b class='ragkit-gate' style='color:#c62828'>NO ANSWER</b>"
                ": no chunk is under cosine distance {cut:.3f} ({rule}).",
                cut=self.cut.value,
                rule=rule,
            )
        dense_rank = {int(i): n for n, i in enumerate(dense.ranking[0], 1)}
        bm25_rank = {int(i): n for n, i in enumerate(bm25.ranking[0], 1)}
        labels = {
            "dense": _("cosine distance (lower is nearer)"),
            "bm25": _("BM25 score (higher is better)"),
            "hybrid": _("RRF fuses two ranks: the chunk's rank by dense and its rank by BM25"),
        }
        cols = []
        for name, run in runs.items():
            top = run.ranking[0, : self.k]
            if name == "dense":
                scores = [say("{score:.3f}", score=distance[i]) for i in top]
            elif name == "bm25":
                scores = [say("{score:.3f}", score=bm25_scores[i]) for i in top]
            elif name == "hybrid":
                scores = [f"dense #{dense_rank[int(i)]}, BM25 #{bm25_rank[int(i)]}" for i in top]
            else:
                labels[name] = say("{name} score (higher is better)", name=name)
                scores = [say("{score:.3f}", score=s) for s in self.reranker.score(query, [r.texts[i] for i in top])]
            items = "".join(
                f"<li><code class='ragkit-score'>{score}</code> {html.escape(r.chunks[i].doc_id)} &middot; "
                f"{html.escape(r.chunks[i].section or _('introduction'))}<br><small>"
                f"{html.escape(r.chunks[i].content[:140])}...</small></li>"
                for i, score in zip(top, scores)
            )
            cols.append(
                f"<td class='ragkit-column' data-retriever='{html.escape(name)}' style='vertical-align:top;"
                f"width:25%'><b>{html.escape(name)}</b><br><small>{labels[name]}</small><ol>{items}</ol></td>"
            )
        self.table.value = f"<table><tr>{''.join(cols)}</tr></table>"

    def widget(self) -> w.Widget:
        """The assembled widget to display."""
        return w.VBox([w.HBox([self.text, self.search]), self.control, self.direction, self.gate, self.table])


class SourceViewer:
    """A citation opened: its document with the cited range highlighted and in view, its path and fragment."""

    def __init__(self, citations, corpus, context: int = 300, root=None):
        self.citations, self.corpus, self.context, self.root = list(citations), corpus, context, root
        self.pick = w.Dropdown(
            options=[(f"[{c.index}] {c.document_id} - {c.locator_label}", c.index) for c in self.citations],
            description=_("source"),
            layout=w.Layout(width="640px"),
        )
        self.view = w.HTML()
        self.pick.observe(lambda _: self.update(), names="value")
        self.update()

    def update(self) -> None:
        """Show the selected citation."""
        c = next(c for c in self.citations if c.index == self.pick.value)
        doc = self.corpus[c.document_id]
        ok = verify(c, self.corpus)
        start, end = c.locator.start, c.locator.end
        text = doc.text
        lo, hi = whole_words(text, max(0, start - self.context), min(len(text), end + self.context), start, end)

        def fold(a: int, b: int, where: str) -> str:
            """The text between a and b folded away under a summary, or nothing when the range is empty."""
            return (f"<details><summary>{where}</summary>{html.escape(text[a:b])}</details>") if b > a else ""

        path = project_path(doc.path, self.root)
        status = (
            _("<b class='ragkit-verified' style='color:#2e7d32'>verified</b>: the range slices the quote exactly")
            if ok
            else _(
                "<b class='ragkit-verified' style='color:#c62828'>does not verify</b>: the range does "
                "not give back the quote"
            )
        )
        self.view.value = (
            f"<div><code class='ragkit-path'>{html.escape(path)}</code><code class='ragkit-fragment'>"
            f"{html.escape(c.fragment)}</code> &middot; {html.escape(c.document_name)} &middot; "
            f"{html.escape(c.locator_label)} &middot; {status}</div>"
            "<div class='ragkit-source' style='font-family:monospace;white-space:pre-wrap;border:1px solid #ddd;"
            f"padding:.5em'>{fold(0, lo, say('{n:,} characters above', n=lo))}{html.escape(text[lo:start])}"
            f"<mark class='ragkit-cited'>{html.escape(text[start:end])}</mark>{html.escape(text[end:hi])}"
            f"{fold(hi, len(text), say('{n:,} characters below', n=len(text) - hi))}</div>"
        )

    def widget(self) -> w.Widget:
        """The assembled widget to display."""
        return w.VBox([self.pick, self.view])


def whole_words(text: str, lo: int, hi: int, start: int, end: int) -> tuple[int, int]:
    """The window lo..hi of ``text`` narrowed to whole words (never past start..end, which it keeps whole).

    A window edge cuts a word only between two letters or digits: "examples." ends whole at its full stop."""
    if 0 < lo < start and text[lo - 1].isalnum() and text[lo].isalnum():
        gap = next((i for i in range(lo, start) if text[i].isspace()), None)
        lo = start if gap is None else gap + 1
    if end < hi < len(text) and text[hi - 1].isalnum() and text[hi].isalnum():
        gap = next((i for i in range(hi - 1, end - 1, -1) if text[i].isspace()), None)
        hi = end if gap is None else gap
    return lo, hi


def project_path(path, root=None) -> str:
    """A document's path relative to the project (or to ``root``), as JupyterLab's file browser shows it."""
    root = Path(root) if root else locations.SOURCE_ROOT
    path = Path(path).resolve()
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
