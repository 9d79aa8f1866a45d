"""The comparison report: both levels, Holm per level over what it shows, verdicts by the one rule, three forms."""

import copy
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


WANTED = [
    ("E/dense", "A/dense", "Hit@4"),
    ("E/bm25", "E/dense", "Hit@1"),
    ("E/dense", "A/dense", "MRR"),
    ("Z/dense", "A/dense", "Hit@4"),
]
PUBLISHED = {
    ("E/dense", "A/dense", "Hit@4"): Finding.counts(18, 3, 0.0015),
    ("E/bm25", "E/dense", "Hit@1"): Finding.gain(0.3, 0.2),
}


def test_the_report_holds_both_levels_holm_per_level_and_the_rule_s_verdicts(ev):
    rep = report(ev, WANTED, PUBLISHED)
    assert [(x.a, x.b, x.metric) for x in rep.lines] == WANTED[:3]  # Z/dense is not in the evaluation
    expected = with_holm([ev.compare(a, b, m, level) for level in ("query", "needle") for a, b, m in WANTED[:3]])
    got = [line.query for line in rep.lines] + [line.needle for line in rep.lines]
    assert got == expected
    for line in rep.lines:
        finding = PUBLISHED.get((line.a, line.b, line.metric))
        want = (
            None
            if finding is None
            else verdict(
                finding.lead,
                line.needle.test.wins,
                line.needle.test.losses,
                line.needle.p_holm,
                kind=finding.claim,
                a=line.a,
                b=line.b,
            )
        )
        assert (str(line.verdict) if line.verdict else None) == want
    assert PUBLISHED[("E/bm25", "E/dense", "Hit@1")].lead == -1 and rep.judged == rep.lines[:2]


def test_every_verdict_goes_through_the_one_rule_on_the_needle_level(ev, monkeypatch):
    monkeypatch.setattr(ragkit.report.Verdict, "of", lambda *args, **kwargs: (args, kwargs["kind"]))
    rep = report(ev, WANTED, PUBLISHED)
    assert [x.verdict for x in rep.lines] == [
        (
            (PUBLISHED[x.a, x.b, x.metric].lead, x.needle.test.wins, x.needle.test.losses, x.needle.p_holm),
            PUBLISHED[x.a, x.b, x.metric].claim,
        )
        for x in rep.lines[:2]
    ] + [None]


def test_text_html_and_json_show_the_same_figures(ev):
    rep = report(ev, WANTED, PUBLISHED)
    text, page = str(rep), rep._repr_html_()
    for line in rep.lines:
        for c in (line.query, line.needle):
            assert f"+{c.test.wins}/-{c.test.losses}" in text and f"{c.p_holm:.3g}" in page
    assert "Answers destroyed" in text and "A: 1/8  (q0)" in text and "Hit@k" in text
    data = json.loads(json.dumps(rep.to_dict()))
    assert len(data["comparisons"]) == 2 * len(rep.lines) and len(data["table"]) == 4 * 5
    assert [c["verdict"] for c in data["comparisons"] if c["level"] == "needle"] == [
        str(x.verdict) if x.verdict else None for x in rep.lines
    ]
    assert all(len(r["ranks"]) == 16 for r in data["runs"]) and data["runs"][0]["ranks"][0] is None


def test_html_escapes_every_string(ev):
    hostile, dense = copy.copy(ev), ev.results["E/dense"]
    script = Result("<script>alert(1)</script>", "dense", dense.ranks, dense.query_ids, dense.needle_ids)
    hostile.results = {**ev.results, script.label: script}
    rep = report(hostile, [(script.label, "A/dense", "Hit@4")], {}, runs=())
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
    assert rep.line("E/bm25", "E/dense", "Hit@1") is rep.lines[1] and rep.lines[1].at("needle") is rep.lines[1].needle
    with pytest.raises(InputError, match="not in this report: have E/dense vs A/dense at Hit@4"):
        rep.line("E/dense", "A/dense", "Hit@8")
    with pytest.raises(InputError, match="unknown level"):
        rep.lines[0].at("needles")


def test_a_finding_records_what_it_claims_by_its_own_p():
    from ragkit.statistics import DIFFERENCE, NO_DIFFERENCE

    assert Finding.counts(18, 3, 0.0015).claim == DIFFERENCE
    computed = Finding.counts(2, 6)  # the chapter's F vs E: no p given, +2/-6 says p = 0.29
    assert computed.claim == NO_DIFFERENCE and computed.p == pytest.approx(74 / 256)
    assert "from its counts" in computed.said
    assert Finding.counts(10, 3, 0.09).claim == NO_DIFFERENCE  # whatever the chapter's words say of it
    assert Finding.gain(0.094, 0.312).claim == DIFFERENCE and Finding.gain(0.094, 0.312).p is None


def test_json_carries_each_finding_s_claim_and_p(ev):
    data = report(ev, WANTED, PUBLISHED).to_dict()
    needle = [c for c in data["comparisons"] if c["level"] == "needle"]
    assert [c["claim"] for c in needle] == ["a difference", "a difference", None]
    assert [c["chapter_p"] for c in needle] == [0.0015, None, None]
    assert "claims" in str(report(ev, WANTED, PUBLISHED))


def test_text_escapes_the_names_a_data_file_controls(ev):
    """Issue 44: a query id from a questions file reaches the terminal escaped, as every name does."""
    import dataclasses

    rep = report(ev, WANTED)
    evil = dataclasses.replace(rep.strategies[0], destroyed=("q0\x1b[2J\u202e",))
    text = str(dataclasses.replace(rep, strategies=(evil, *rep.strategies[1:])))
    assert "\x1b" not in text and "\u202e" not in text and "(q0\\x1b[2J\\u202e)" in text
