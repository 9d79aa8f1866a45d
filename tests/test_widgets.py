"""Widget callbacks, headless: move a control, read what the widget shows, compare with ragkit's own numbers."""

import re

import pytest

import ragkit.course
from ragkit import widgets
from ragkit.threshold import DEFAULT_CUT, STRICT_CUT


@pytest.fixture(scope="module")
def course():
    return ragkit.course.load(progress=False)


def shown(html: str) -> int:
    return int(re.search(r"count'>(\d+)<", html).group(1))


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


def test_chunk_explorer_marks_destroyed_and_kept_needles(course):
    explorer = widgets.ChunkExplorer(course, strategy="A")
    destroyed = set(course.evaluation("A").destroyed["A"])
    for q in course.questions[:12]:
        explorer.question.value = q.id
        assert ("destroyed" in explorer.verdict.value) == (q.id in destroyed)
        assert "<mark>" in explorer.view.value
    explorer.strategy.value = "C"
    assert "kept" in explorer.verdict.value


def test_strategy_duel_shows_the_sign_test(course):
    ev = course.evaluation("ACE")
    from ragkit.evaluation import with_holm
    from ragkit.statistics import holm

    duel = widgets.StrategyDuel(ev, "E/dense", "A/dense", "R@20")
    c = ev.compare("E/dense", "A/dense", "R@20", "needle")
    assert f"wins <b>{c.test.wins}</b>, loses <b>{c.test.losses}</b>" in duel.result.value
    duel.metric.value = "R@1"
    family = [ev.compare("E/dense", "A/dense", m, "needle") for m in ("R@1", "R@4", "R@8", "R@20", "MRR")]
    c = family[0]
    assert f"p = <b>{c.test.p:.3g}</b>, Holm p = <b>{holm([x.test.p for x in family])[0]:.3g}</b>" in duel.result.value
    q = with_holm([ev.compare("E/dense", "A/dense", "R@1", "query")])[0]
    assert f"+{q.test.wins}/-{q.test.losses}, p = {q.test.p:.3g}" in duel.result.value


def test_query_playground_gate_decision(course):
    playground = widgets.QueryPlayground(course)
    playground.text.value = "how do i renew my spanish passport"
    playground.cut.value = 0.3
    assert "NO ANSWER" in playground.gate.value
    playground.cut.value = 1.0
    assert "4 chunk(s) pass" in playground.gate.value
    assert playground.table.value.count("<ol>") == 3


def test_win_loss_matrix_shows_needle_wins_and_holm_over_the_whole_matrix(course):
    from ragkit.evaluation import METRICS
    from ragkit.plots import win_loss_matrix
    from ragkit.statistics import holm

    ev = course.evaluation("ACE")
    fig = win_loss_matrix(ev, "R@20", "dense")
    labels = list(fig.data[0].x)
    pairs = [(a, b) for i, a in enumerate(labels) for b in labels[i + 1:]]
    raw = [ev.compare(a, b, m, "needle").test.p for a, b in pairs for m in METRICS]
    adjusted = holm(raw)
    at = [(a, b, m) for a, b in pairs for m in METRICS].index(("A/dense", "E/dense", "R@20"))
    c = ev.compare("E/dense", "A/dense", "R@20", "needle")
    i, j = labels.index("E/dense"), labels.index("A/dense")
    assert fig.data[0].z[i][j] == c.test.wins - c.test.losses
    assert f"Holm p = {adjusted[at]:.3g} over {len(raw)} tests" in fig.data[0].text[i][j]


HOSTILE = "<img src=x onerror=alert(1)>"


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


def test_plot_legends_count_the_queries_of_the_sweep(course):
    from ragkit import plots
    from ragkit.threshold import Sweep

    r = course.retriever("E")
    sweep = Sweep(r.chunks, course.questions[:5], course.out_of_domain[:3], r)
    names = [trace.name for trace in plots.bluffs_and_refusals(sweep).data]
    assert "bluffs (share of 3)" in names and "refused answerable (share of 10)" in names
