"""The comparison report: both levels, Holm per level over what it shows, verdicts by the one rule, three forms."""

import json

import numpy as np
import pytest

import ragkit.report
from ragkit.data import Query
from ragkit.evaluation import Evaluation, Result, with_holm
from ragkit.report import Finding, report
from ragkit.statistics import verdict
from ragkit.tokens import TokenReport


@pytest.fixture(scope="module")
def ev():
    """Four runs of 8 needles asked twice, ranks drawn at random: fast, and with every kind of comparison."""
    queries = [Query(f"q{i}", p, f"text {i} {p}") for p in ("question", "ticket") for i in range(8)]
    ids, needles = tuple(q.id for q in queries), tuple(q.qid for q in queries)
    rng = np.random.default_rng(3)
    out = Evaluation(queries, n_questions=8)
    for s, low in (("A", 0), ("E", 1)):
        out.chunks[s], out.tokens[s] = 20, TokenReport(20, 900, 90, 1, 256)
        out.destroyed[s] = ("q0",) if s == "A" else ()
        for name in ("dense", "bm25"):
            ranks = rng.integers(low, 6, size=16)
            if s == "A":
                ranks[[0, 8]] = 0  # q0 is destroyed: both phrasings never found
            out.results[f"{s}/{name}"] = Result(s, name, ranks, ids, needles)
    return out


WANTED = [("E/dense", "A/dense", "R@4"), ("E/bm25", "E/dense", "R@1"), ("E/dense", "A/dense", "MRR"),
          ("Z/dense", "A/dense", "R@4")]
PUBLISHED = {("E/dense", "A/dense", "R@4"): Finding.counts(18, 3, 0.0015),
             ("E/bm25", "E/dense", "R@1"): Finding.gain(0.3, 0.2)}


def test_the_report_holds_both_levels_holm_per_level_and_the_rule_s_verdicts(ev):
    rep = report(ev, WANTED, PUBLISHED)
    assert [(x.a, x.b, x.metric) for x in rep.lines] == WANTED[:3]  # Z/dense is not in the evaluation
    expected = with_holm([ev.compare(a, b, m, level) for level in ("query", "needle") for a, b, m in WANTED[:3]])
    got = [line.query for line in rep.lines] + [line.needle for line in rep.lines]
    assert got == expected
    for line in rep.lines:
        finding = PUBLISHED.get((line.a, line.b, line.metric))
        want = None if finding is None else verdict(finding.lead, line.needle.test.wins, line.needle.test.losses,
                                                    line.needle.p_holm)
        assert line.verdict == want
    assert PUBLISHED[("E/bm25", "E/dense", "R@1")].lead == -1 and rep.judged == rep.lines[:2]


def test_every_verdict_goes_through_the_one_rule_on_the_needle_level(ev, monkeypatch):
    monkeypatch.setattr(ragkit.report, "verdict", lambda *args: args)
    rep = report(ev, WANTED, PUBLISHED)
    assert [x.verdict for x in rep.lines] == [
        (PUBLISHED[x.a, x.b, x.metric].lead, x.needle.test.wins, x.needle.test.losses, x.needle.p_holm)
        for x in rep.lines[:2]] + [None]


def test_text_html_and_json_show_the_same_figures(ev):
    rep = report(ev, WANTED, PUBLISHED)
    text, page = str(rep), rep._repr_html_()
    for line in rep.lines:
        for c in (line.query, line.needle):
            assert f"+{c.test.wins}/-{c.test.losses}" in text and f"{c.p_holm:.3g}" in page
    assert "Answers destroyed" in text and "A: 1/8  (q0)" in text and "Recall@k" in text
    data = json.loads(json.dumps(rep.to_dict()))
    assert len(data["comparisons"]) == 2 * len(rep.lines) and len(data["table"]) == 4 * 5
    assert [c["verdict"] for c in data["comparisons"] if c["level"] == "needle"] == [x.verdict for x in rep.lines]
    assert all(len(r["ranks"]) == 16 for r in data["runs"]) and data["runs"][0]["ranks"][0] is None


def test_html_escapes_every_string(ev):
    rep = report(ev, WANTED, {WANTED[0]: Finding(1, "<script>alert(1)</script>")})
    page = rep._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_runs_pick_the_figures_shown(ev):
    rep = report(ev, WANTED, PUBLISHED, runs=())
    assert not rep.runs and not rep.strategies and "Recall@k" not in str(rep) and len(rep.lines) == 3
    only = report(ev, runs=["E/dense"])
    assert [r.label for r in only.runs] == ["E/dense"] and {f.retriever for f in only.figures} == {"dense"}
    assert [s.letter for s in only.strategies] == ["E"] and not only.lines and "Paired" not in str(only)


def test_a_line_is_found_by_its_names_and_an_unknown_one_is_a_clear_error(ev):
    from ragkit.errors import InputError

    rep = report(ev, WANTED)
    assert rep.line("E/bm25", "E/dense", "R@1") is rep.lines[1] and rep.lines[1].at("needle") is rep.lines[1].needle
    with pytest.raises(InputError, match="not in this report: have E/dense vs A/dense at R@4"):
        rep.line("E/dense", "A/dense", "R@8")
    with pytest.raises(InputError, match="unknown level"):
        rep.lines[0].at("needles")
