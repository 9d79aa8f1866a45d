"""Widget callbacks, headless: move a control, read what the widget shows, compare with ragkit's own numbers."""

import html
import re
from html.parser import HTMLParser

import pytest

import ragkit.teach.course
from ragkit.teach.lesson import widgets
from ragkit.threshold import DEFAULT_CUT, STRICT_CUT


@pytest.fixture(scope="module")
def course():
    return ragkit.teach.course.load(progress=False)


def shown(html: str) -> int:
    return int(re.search(r"count'>(\d+)<", html).group(1))


@pytest.mark.slow
def test_threshold_slider_updates_bluffs_refusals_cut_line_and_list(course):
    sweep = course.sweep()
    explorer = widgets.ThresholdExplorer(sweep)
    for cut in (0.9, DEFAULT_CUT, 0.6, STRICT_CUT, 0.45, 0.3):
        explorer.slider.value = cut
        row = sweep.at(cut)
        assert shown(explorer.bluffs.value) == row.bluffs
        assert shown(explorer.refused.value) == row.refused
        assert explorer.figure.layout.shapes[0].x0 == pytest.approx(cut)
        assert explorer.bluff_list.value.count("<li>") == row.bluffs


@pytest.mark.slow
def test_chunk_explorer_marks_destroyed_and_kept_needles(course):
    explorer = widgets.ChunkExplorer(course, strategy="A")
    destroyed = set(course.evaluation("A").destroyed["A"])
    for q in course.questions[:12]:
        explorer.question.value = q.id
        assert ("destroyed" in explorer.verdict.value) == (q.id in destroyed)
        assert "<mark>" in explorer.view.value
    explorer.strategy.value = "C"
    assert "kept" in explorer.verdict.value


@pytest.mark.slow
def test_strategy_duel_shows_the_sign_test(course):
    ev = course.evaluation("ACE")
    from ragkit.evaluation import with_holm
    from ragkit.statistics import holm

    duel = widgets.StrategyDuel(ev, "E/dense", "A/dense", "Hit@20")
    c = ev.compare("E/dense", "A/dense", "Hit@20", "needle")
    assert f"wins <b>{c.test.wins}</b>, loses <b>{c.test.losses}</b>" in duel.result.value
    duel.metric.value = "Hit@1"
    family = [ev.compare("E/dense", "A/dense", m, "needle") for m in ("Hit@1", "Hit@4", "Hit@8", "Hit@20", "MRR")]
    c = family[0]
    assert f"p = <b>{c.test.p:.3g}</b>, Holm p = <b>{holm([x.test.p for x in family])[0]:.3g}</b>" in duel.result.value
    assert f"over the {len(family)} tests below" in duel.result.value  # Holm's family is one level's, not all shown
    q = with_holm([ev.compare("E/dense", "A/dense", "Hit@1", "query")])[0]
    assert f"+{q.test.wins}/-{q.test.losses}, p = {q.test.p:.3g}" in duel.result.value


@pytest.mark.slow
def test_query_playground_gate_decision(course):
    playground = widgets.QueryPlayground(course)
    playground.text.value = "how do i renew my spanish passport"
    playground.cut.value = 0.3
    assert "NO ANSWER" in playground.gate.value
    playground.cut.value = 1.0
    assert "4 chunks pass" in playground.gate.value
    assert (playground.cut.min, playground.cut.max) == widgets.CUT_RANGE  # the same slider as 06's
    assert playground.direction in playground.widget().children
    assert playground.table.value.count("<ol>") == 3


@pytest.mark.slow
def test_win_loss_matrix_shows_needle_wins_and_holm_over_the_whole_matrix(course):
    from ragkit.evaluation import METRICS
    from ragkit.statistics import holm
    from ragkit.teach.lesson.plots import win_loss_matrix

    ev = course.evaluation("ACE")
    fig = win_loss_matrix(ev, "Hit@20", "dense")
    labels = list(fig.data[0].x)
    pairs = [(a, b) for i, a in enumerate(labels) for b in labels[i + 1 :]]
    raw = [ev.compare(a, b, m, "needle").test.p for a, b in pairs for m in METRICS]
    adjusted = holm(raw)
    at = [(a, b, m) for a, b in pairs for m in METRICS].index(("A/dense", "E/dense", "Hit@20"))
    c = ev.compare("E/dense", "A/dense", "Hit@20", "needle")
    i, j = labels.index("E/dense"), labels.index("A/dense")
    assert fig.data[0].z[i][j] == c.test.wins - c.test.losses
    assert f"Holm p = {adjusted[at]:.3g} over {len(raw)} tests" in fig.data[0].text[i][j]


HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.mark.slow
def test_threshold_explorer_escapes_every_string(course):
    from dataclasses import replace

    from ragkit.threshold import Sweep

    r = course.retriever("E")
    ood = [replace(o, kind=HOSTILE, topic=HOSTILE) for o in course.out_of_domain[:3]]
    explorer = widgets.ThresholdExplorer(Sweep(r.chunks, course.questions, ood, r))
    explorer.slider.value = 1.0
    shown_html = explorer.bluff_list.value
    assert shown_html.count("<li>") == 3
    assert "<img" not in shown_html and "&lt;img src=x onerror=alert(1)&gt;" in shown_html


@pytest.mark.slow
def test_plot_legends_count_the_queries_of_the_sweep(course):
    from ragkit.teach.lesson import plots
    from ragkit.threshold import Sweep

    r = course.retriever("E")
    sweep = Sweep(r.chunks, course.questions[:5], course.out_of_domain[:3], r)
    names = [trace.name for trace in plots.bluffs_and_refusals(sweep).data]
    assert "bluffs (share of 3)" in names and "refused answerable (share of 10)" in names


@pytest.mark.slow
def test_chunk_explorer_shows_the_needle_without_scrolling_and_draws_overlap_only_for_b_d_f(course):
    explorer = widgets.ChunkExplorer(course, strategy="A")
    for letter in "ABCDEF":
        explorer.strategy.value = letter
        for q in course.questions[:6]:
            explorer.question.value = q.id
            view = explorer.view.value
            assert "max-height" not in view and "overflow" not in view, "the needle must not hide in a scroll box"
            assert "<mark>" in view
            assert ("class='ragkit-overlap'" in view) == (letter in "BDF"), letter


@pytest.mark.slow
def test_query_playground_columns_show_their_own_scores_and_search_clears(course):
    playground = widgets.QueryPlayground(course)
    assert "Enter" in playground.text.placeholder and playground.search.description == "Search"
    question = "what does the learning rate warmup do"
    playground.text.value = question
    r = playground.retriever
    top_bm25 = r.bm25([question]).ranking[0, : playground.k]
    scores = r.lexical.scores_many([question])[0]
    columns = dict(re.findall(r"data-retriever='(\w+)'(.*?)</td>", playground.table.value, re.S))
    shown_bm25 = [float(x) for x in re.findall(r"ragkit-score'>([\d.]+)<", columns["bm25"])]
    assert shown_bm25 == pytest.approx([round(float(scores[i]), 3) for i in top_bm25], abs=1e-9)
    dense = r.dense([question])
    shown_dense = [float(x) for x in re.findall(r"ragkit-score'>([\d.]+)<", columns["dense"])]
    assert shown_dense == pytest.approx([round(float(dense.distance[0, i]), 3) for i in dense.ranking[0, :5]], abs=1e-9)
    assert "BM25 score" in columns["bm25"] and "cosine distance" in columns["dense"]
    # the hybrid column names its two ranks: "#4 + #3" read as a sum
    dense_rank = {int(i): n for n, i in enumerate(dense.ranking[0], 1)}
    bm25_rank = {int(i): n for n, i in enumerate(r.bm25([question]).ranking[0], 1)}
    fused = r.hybrid([question]).ranking[0, : playground.k]
    shown_hybrid = re.findall(r"ragkit-score'>([^<]+)<", columns["hybrid"])
    assert shown_hybrid == [f"dense #{dense_rank[int(i)]}, BM25 #{bm25_rank[int(i)]}" for i in fused]
    assert "+" not in "".join(shown_hybrid) and "rank by dense" in columns["hybrid"]
    assert f"at most <b>{widgets.KEEP}</b>" in playground.gate.value
    playground.table.value = "stale"
    playground.search.click()
    assert playground.table.value.count("<ol>") == 3


@pytest.mark.slow
def test_source_viewer_highlights_the_cited_range_with_path_and_fragment(course):
    import dataclasses
    import html as h

    from ragkit.answer import answer
    from ragkit.citations import CharRange

    result = answer("How many test examples do I need?", course.retriever("E"))
    viewer = widgets.SourceViewer(result.citations, course.corpus)
    for c in result.citations:
        viewer.pick.value = c.index
        assert f"<mark class='ragkit-cited'>{h.escape(c.quote)}</mark>" in viewer.view.value
        assert f"data/corpus/{c.document_id}.md" in viewer.view.value and c.fragment in viewer.view.value
        assert "verified</b>" in viewer.view.value
    c = result.citations[0]
    moved = dataclasses.replace(c, locator=CharRange(c.locator.start + 1, c.locator.end + 1))
    assert "does not verify" in widgets.SourceViewer([moved], course.corpus).view.value


@pytest.mark.slow  # the course's vectors, which an empty cache computes (conftest.QUICK_TEXTS)
def test_query_playground_scores_bm25_once_per_search(course, monkeypatch):
    playground = widgets.QueryPlayground(course)
    lexical = playground.retriever.lexical
    calls = []
    original = lexical.scores_many
    monkeypatch.setattr(lexical, "scores_many", lambda queries: calls.append(queries) or original(queries))
    playground.text.value = "how warm is the cache after a restart"
    assert len(calls) == 1 and "<ol>" in playground.table.value


class Painted(HTMLParser):
    """Each piece of text of a chunk view with the elements around it, outermost first."""

    def __init__(self):
        super().__init__()
        self.stack: list[tuple[str, str]] = []
        self.pieces: list[tuple[str, list[tuple[str, str]]]] = []

    def handle_starttag(self, tag, attrs):
        self.stack.append((tag, dict(attrs).get("style") or ""))

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop()[0] != tag:
            pass

    def handle_data(self, data):
        self.pieces.append((data, list(self.stack)))


@pytest.fixture(scope="module")
def bundled():
    """The bundled corpus and questions, as much of a course as the chunk explorer reads (no vectors)."""
    from types import SimpleNamespace

    from ragkit.corpus import load_corpus
    from ragkit.data import load_questions
    from ragkit.plumbing.locations import data_dir

    return SimpleNamespace(
        corpus=load_corpus(data_dir() / "corpus"), questions=load_questions(data_dir() / "questions.jsonl")
    )


def test_chunk_explorer_draws_the_needle_over_the_overlap(bundled):
    explorer = widgets.ChunkExplorer(bundled, strategy="B")
    explorer.question.value = "q24"  # its needle starts in the overlap the next chunk carries
    parser = Painted()
    parser.feed(explorer.view.value.split("ragkit-chunk-view", 1)[1])
    needle = [(text, around) for text, around in parser.pieces if any(tag == "mark" for tag, _ in around)]
    assert "".join(text for text, _ in needle) == next(q.needle for q in bundled.questions if q.id == "q24")
    shared = [around for _, around in needle if any("background" in style for tag, style in around if tag == "span")]
    assert shared, "q24's needle no longer meets the overlap: pick a question whose needle does"
    for around in shared:
        inner = around[[tag for tag, _ in around].index("mark") + 1 :]
        assert not any("background" in style for _, style in inner), "the overlap's shading covers the needle"


def test_chunk_explorer_lists_questions_cut_between_words_and_shows_the_whole_one(bundled):
    explorer = widgets.ChunkExplorer(bundled, strategy="A")
    for (label, qid), q in zip(explorer.question.options, bundled.questions, strict=True):
        shown = label.removeprefix(f"{qid}: ")
        whole = " ".join(q.question.split())
        assert shown == whole or (
            shown.endswith(" …") and whole.startswith(shown[:-2]) and whole[len(shown) - 2] == " "
        ), f"{qid} is cut inside a word: {shown!r}"
    long = next(q for q in bundled.questions if len(q.question) > 70)
    explorer.question.value = long.id
    assert html.escape(long.question) in explorer.asked.value and explorer.asked in explorer.widget().children


def test_a_context_window_cuts_between_words_and_keeps_the_cited_range_whole():
    text = "the endpoint range holds the cited words and discordant examples after it"
    start, end = text.index("holds"), text.index(" and")
    lo, hi = widgets.whole_words(text, text.index("point"), text.index("ples"), start, end)
    assert text[lo:hi] == "range holds the cited words and discordant"
    assert widgets.whole_words(text, 0, len(text), start, end) == (0, len(text))  # the whole text: nothing to cut
    inside = text.index("cited") + 2  # a window no wider than the range itself is the range
    assert widgets.whole_words(text, inside, inside + 3, inside, inside + 3) == (inside, inside + 3)
    said = "(the cited words) and more examples."
    start, end = said.index("cited"), said.index(" words")
    assert widgets.whole_words(said, 1, said.index("."), start, end) == (1, said.index("."))  # no word cut: kept
    word = "unbroken" * 20
    assert widgets.whole_words(word, 5, 150, 60, 70) == (60, 70)  # no space to cut at: the range alone


@pytest.mark.slow
def test_the_source_viewer_shows_whole_words_around_the_cited_range(course):
    from ragkit.answer import answer

    results = [answer(q.question, course.retriever("E")) for q in course.questions[:6]]
    answered = [r for r in results if hasattr(r, "citations")]
    assert answered, "none of the first questions is answered"
    for result in answered:
        viewer = widgets.SourceViewer(result.citations, course.corpus, context=97)
        for c in result.citations:
            viewer.pick.value = c.index
            text = course.corpus[c.document_id].text
            shown = html.unescape(
                re.sub(
                    r"<details>.*?</details>|<[^>]+>",
                    "",
                    viewer.view.value.split("ragkit-source", 1)[1].split(">", 1)[1],
                    flags=re.S,
                )
            )
            lo = text.index(shown)
            hi = lo + len(shown)
            assert lo == 0 or not (text[lo - 1].isalnum() and text[lo].isalnum()) or lo == c.locator.start, shown[:40]
            assert hi == len(text) or not (text[hi - 1].isalnum() and text[hi].isalnum()) or hi == c.locator.end, shown[
                -40:
            ]
