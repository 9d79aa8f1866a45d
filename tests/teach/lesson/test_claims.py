"""The chapter's claims, judged right: its own p-values under Holm, one wording of the verdicts everywhere."""

import re

import pytest

from ragkit.report import Finding, report
from ragkit.statistics import INCONCLUSIVE, NEITHER, NO_DIFFERENCE, VERDICTS
from ragkit.teach.course import chapter
from ragkit.teach.lesson import claims

from conftest import ROOT

TWINS = ROOT / "notebooks" / "twins"


def test_the_chapter_s_own_holm_matches_statsmodels_and_fills_in_f_vs_e():
    from statsmodels.stats.multitest import multipletests

    corrected = claims.own_holm()
    raw = [p for p, _ in corrected.values()]
    assert [h for _, h in corrected.values()] == pytest.approx(list(multipletests(raw, method="holm")[1]))
    f_vs_e = corrected["F/dense", "E/dense", "Hit@20"]
    assert f_vs_e[0] == pytest.approx(74 / 256)  # +2/-6: the chapter gives no p, its counts do
    assert chapter.FINDINGS["F/dense", "E/dense", "Hit@20"].claim == NO_DIFFERENCE
    assert corrected["E/dense", "A/dense", "Hit@20"][1] == pytest.approx(7 * 0.0015)


def test_the_survivors_sentence_says_what_the_computation_found():
    corrected = claims.own_holm()
    kept = [k for k, (_, h) in corrected.items() if h < 0.05]
    text = claims.survivors()
    assert f"**{len(kept)}** {'survives' if len(kept) == 1 else 'survive'}" in text
    for key in kept:
        assert f"{key[0]} vs {key[1]} at {key[2]}, Holm p = {corrected[key][1]:.3g}" in text
    assert "three results survive" in text


def test_a_stricter_alpha_changes_the_sentence():
    assert "**0** survive" in claims.survivors(alpha=0.01)


def _fake_report():
    """A report of two runs where A wins every needle: a claimed difference is consistent, a null one differs."""
    import numpy as np

    from ragkit.data import Query
    from ragkit.evaluation import Evaluation, Result
    from ragkit.tokens import TokenReport

    queries = [Query(f"q{i}", p, f"text {i}") for p in ("question", "ticket") for i in range(12)]
    ids, needles = tuple(q.id for q in queries), tuple(q.qid for q in queries)
    ev = Evaluation(queries, n_questions=12)
    for s, rank in (("A", 1), ("B", 0)):
        ev.chunks[s], ev.tokens[s], ev.destroyed[s] = 5, TokenReport(5, 100, 10, 0, 256), ()
        ev.results[f"{s}/dense"] = Result(s, "dense", np.full(24, rank), ids, needles)
    return report(
        ev,
        [("A/dense", "B/dense", "Hit@1"), ("A/dense", "B/dense", "Hit@4")],
        {
            ("A/dense", "B/dense", "Hit@1"): Finding.counts(9, 1, 0.02),
            ("A/dense", "B/dense", "Hit@4"): Finding.counts(5, 4, 1.0),
        },
    )


def test_verdict_counts_name_every_word_and_the_meaning_of_inconclusive():
    rep = _fake_report()
    assert [str(x.verdict) for x in rep.judged] == ["consistent", "differs: ours finds A/dense ahead"]
    text = claims.verdict_counts(rep, 12)
    assert all(f"** {word}" in text for word in VERDICTS) and INCONCLUSIVE in text
    assert "**1** consistent" in text and "**1** differs" in text


WRONG = (
    "does not reproduce",
    "failure to reproduce",
    "fails to reproduce",
    "not reproduce",
    "p below 0.05 has a one-in-twenty chance",
)


def test_prose_quiz_and_report_use_one_wording_for_the_verdicts():
    """The quiz, the notebooks and the report say *inconclusive* the same way, and never "does not reproduce"."""
    quiz = "".join(p.read_text() for p in sorted((ROOT / "ragkit" / "teach" / "lesson" / "quiz").glob("*.py")))
    texts = {"quiz": quiz, "report": (ROOT / "ragkit" / "report.py").read_text()}
    texts |= {p.name: p.read_text() for p in TWINS.glob("0*.py")}
    for name, text in texts.items():
        flat = " ".join(text.replace("#", " ").split())
        for phrase in WRONG:
            assert phrase not in flat, f"{name} says {phrase!r}: use the verdict words of ragkit.statistics"
    assert "inconclusive, {INCONCLUSIVE}" in quiz  # the quiz's verdict question says what the report says
    rendered = str(_fake_report())
    assert INCONCLUSIVE in rendered and NEITHER in rendered
    # every verdict word a notebook puts in italics is one of the rule's words
    for p in TWINS.glob("0*.py"):
        for word in re.findall(r"\*(consistent|contradicts|inconclusive|differs|reproduces?)[*:]", p.read_text()):
            assert word in VERDICTS, f"{p.name} uses *{word}*, not a verdict of ragkit.statistics.verdict"


def test_overlap_pull_measures_the_move_toward_the_previous_section():
    import numpy as np

    from ragkit.chunking import Chunk
    from ragkit.teach.lesson import overlap

    sections = ["s1", "s1", "s1", "s2", "s2", "s2"]
    plain = [Chunk("d", "D", sec, 10 * i, 10 * i + 9, f"c{i} needle{i}") for i, sec in enumerate(sections)]
    lapped = [
        Chunk("d", "D", sec, 10 * i, 10 * i + 9, f"c{i} needle{i}", overlap="tail" if i else "")
        for i, sec in enumerate(sections)
    ]
    topic1, topic2, noise = np.eye(4)[0], np.eye(4)[1], np.eye(4)[2]

    def unit(v):
        return v / np.linalg.norm(v)

    before = np.array(
        [unit(topic1 + 0.1 * k * noise) for k in range(3)] + [unit(topic2 + 0.1 * k * noise) for k in range(3)]
    )
    after = before.copy()
    after[3] = unit(topic2 + 0.5 * topic1)  # the first chunk of s2 drawn toward s1 by its overlap
    m = overlap.measure_pull(("E", plain, before), ("F", lapped, after), [("q3", "needle3"), ("q1", "needle1")])
    assert [p.index for p in m.pulls] == [3]  # the only chunk whose overlap comes from another section
    pull = m.pulls[0]
    assert pull.neighbour_after > pull.neighbour_before and pull.own_after < pull.own_before and pull.toward > 0
    assert m.share_toward == 1.0
    assert [(x.needle, x.index) for x in m.lost] == [("q3", 3), ("q1", 1)]
    assert m.lost[0].pull is pull and m.lost[0].percentile == 5 / 6 and m.lost[1].moved == pytest.approx(0.0)
    text = overlap.sentence(m)
    assert "mechanism is there" in text and f"{pull.toward:+.4f}" in text and "**2** needles F loses" in text
    still = overlap.measure_pull(("E", plain, before), ("F", lapped, before))
    assert still.mean("toward") == 0
    assert "does not show" in overlap.sentence(still) and "loses no needle" in overlap.sentence(still)


def test_overlap_pull_refuses_strategies_that_cut_differently():
    import numpy as np

    from ragkit.chunking import Chunk
    from ragkit.errors import InputError
    from ragkit.teach.lesson import overlap

    a = [Chunk("d", "D", "s", 0, 5, "abcde")]
    b = [Chunk("d", "D", "s", 0, 6, "abcdef")]
    with pytest.raises(InputError, match="do not cut alike"):
        overlap.measure_pull(("E", a, np.ones((1, 2))), ("F", b, np.ones((1, 2))))
    with pytest.raises(InputError, match="one vector per chunk"):
        overlap.measure_pull(("E", a, np.ones((2, 2))), ("F", a, np.ones((1, 2))))


def test_binary_accuracy_rewards_always_answering_and_a_penalty_rewards_abstaining():
    from ragkit.threshold import SweepRow

    rows = [
        SweepRow(
            None,
            bluffs=30,
            out_of_domain=30,
            refused=0,
            answered_with_needle=50,
            answered_without_needle=14,
            in_domain=64,
        ),
        SweepRow(
            0.6,
            bluffs=5,
            out_of_domain=30,
            refused=10,
            answered_with_needle=47,
            answered_without_needle=7,
            in_domain=64,
        ),
    ]
    table = claims.guessing(rows)
    assert list(table["binary accuracy"]) == pytest.approx([50 / 94, 47 / 94])
    assert list(table["score, wrong = -1"]) == pytest.approx([(50 - 44) / 94, (47 - 12) / 94])
    assert list(table["abstained"]) == [0, 35]
    text = claims.guessing_sentence(table)
    assert "rewards the system that always answers" in text and "best setting is **cut 0.600**" in text
    assert "abstaining pays" in text and "ties it" not in text and "best (" not in text
    # a cut that refuses only needle-less prompts ties answering everything: said as a tie, never as "no cut is best"
    import dataclasses

    tie = claims.guessing_sentence(claims.guessing([rows[0], dataclasses.replace(rows[1], answered_with_needle=50)]))
    assert "no tighter cut scores more (cut 0.600 ties it: it refuses only queries whose prompt lacked" in tie
    loose = dataclasses.replace(rows[1], cut=0.9, answered_with_needle=50)
    default = dataclasses.replace(rows[1], cut=0.675, answered_with_needle=50)
    both = claims.guessing_sentence(claims.guessing([rows[0], loose, default]))
    assert "(**2** cuts tie it, cut 0.675 among them:" in both  # the default cut named, wherever it sits
    even = claims.guessing_sentence(claims.guessing(rows, penalty=0.01))
    assert "even then answering everything comes out best" in even
    assert "Take 0.01 point off" in even and "Take 1 point off" in text
    # the penalty is the table's value, never read back out of its heading (issue 62): a reworded heading keeps it
    reworded = table.rename(columns={"score, wrong = -1": "penalised score"})
    assert claims.guessing_sentence(reworded) == text


def test_every_claim_in_the_guide_points_at_a_section_that_exists():
    guide = (ROOT / "docs" / "teacher-guide.md").read_text()
    table = guide.split("## The chapter's claims, and where the companion meets them", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in table.splitlines() if r.startswith("| ") and not r.startswith("| the chapter claims")]
    assert len(rows) >= 25
    for row in rows:
        where = row.strip("| ").rsplit(" | ", 1)[1]
        for place in where.split("; "):
            notebook, heading = place.split(": ", 1)
            twin = TWINS / f"{notebook}.py"
            assert twin.is_file(), f"{row}: no notebook {notebook}"
            headings = {
                line.lstrip("# ").strip().removesuffix(" (optional)")
                for line in twin.read_text().splitlines()
                if re.match(r"^# #{2,4} ", line)
            }  # "(optional)" marks a section for short sessions
            assert heading.removesuffix(" (optional)") in headings, f"{row}: {notebook} has no section {heading!r}"


def test_the_json_of_the_chapter_s_report_carries_each_claim_and_our_verdict():
    """What ``ragkit eval --json`` writes for the chapter: each claim kind, by its own p, and our verdict."""
    import json

    import numpy as np

    from ragkit.data import Query
    from ragkit.evaluation import Evaluation, Result
    from ragkit.statistics import claim_of, verdict

    queries = [Query(f"q{i}", p, f"text {i}") for p in ("question", "ticket") for i in range(16)]
    ids, needles = tuple(q.id for q in queries), tuple(q.qid for q in queries)
    ev = Evaluation(queries, n_questions=16)
    rng = np.random.default_rng(5)
    for label in {x for key in chapter.COMPARISONS for x in key[:2]}:
        s, name = label.split("/")
        ev.results[label] = Result(s, name, rng.integers(0, 25, size=32), ids, needles)
    data = json.loads(json.dumps(report(ev, chapter.COMPARISONS, chapter.FINDINGS, runs=()).to_dict()))
    needle = [c for c in data["comparisons"] if c["level"] == "needle"]
    assert len(needle) == len(chapter.COMPARISONS)
    for c in needle:
        finding = chapter.FINDINGS[c["a"], c["b"], c["metric"]]
        assert c["claim"] == claim_of(c["chapter_p"]) == finding.claim
        assert c["verdict"] == verdict(
            finding.lead, c["wins"], c["losses"], c["p_holm"], kind=finding.claim, a=c["a"], b=c["b"]
        )
    assert sorted(c["claim"] for c in needle).count(NO_DIFFERENCE) == 5
