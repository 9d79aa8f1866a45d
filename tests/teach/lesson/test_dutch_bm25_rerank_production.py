"""Notebooks 03, 04 and 08 in Dutch: what their narrators fill in from run time (a yes/no, a chapter's finding, a
verdict) is written in the kernel's language, and the English stays exactly what it was."""

from types import SimpleNamespace

import pytest

from ragkit import statistics
from ragkit.report import Finding
from ragkit.teach import language
from ragkit.teach.course import chapter
from ragkit.teach.lesson import narrate, paired


@pytest.fixture(autouse=True)
def english_again():
    with language.speaking("en"):
        yield


def _line(finding: Finding, wins: int, losses: int, p_holm: float) -> SimpleNamespace:
    test = SimpleNamespace(wins=wins, losses=losses, p=p_holm / 2)
    verdict = statistics.Verdict.of(finding.lead, wins, losses, p_holm, kind=finding.claim, a="E/hybrid", b="E/dense")
    return SimpleNamespace(
        a="E/hybrid",
        b="E/dense",
        metric="Hit@4",
        finding=finding,
        verdict=verdict,
        query=SimpleNamespace(test=test),
        needle=SimpleNamespace(test=test, p_holm=p_holm),
    )


def test_a_chapter_verdict_is_dutch_in_a_dutch_kernel_and_unchanged_in_english():
    lines = [_line(Finding.counts(10, 6, 0.45), 12, 2, 0.01), _line(Finding.counts(10, 3), 5, 5, 0.9)]
    english = narrate.chapter_verdicts(lines, 7).data
    assert "the chapter +10/-6, p = 0.45;" in english and "claims no detectable difference" in english
    assert "**differs: ours finds E/hybrid ahead**" in english and "from its counts" in english
    assert "**consistent: neither detects a difference**" in english
    language.use("nl")
    dutch = narrate.chapter_verdicts(lines, 7).data
    assert "het hoofdstuk +10/-6, p = 0,45;" in dutch
    assert "wat het hoofdstuk beweert: geen aantoonbaar verschil" in dutch
    assert "**verschilt: op dit corpus ligt E/hybrid voor**" in dutch and "uit zijn tellingen" in dutch
    assert "**consistent: geen van beide vindt een verschil**" in dutch
    assert "differs" not in dutch and "neither" not in dutch and "0.45" not in dutch


def test_every_finding_and_verdict_of_the_chapter_reads_back_as_the_engine_wrote_it_in_english():
    for finding in chapter.FINDINGS.values():
        assert paired.said(finding) == finding.said
        assert paired.claim(finding.claim) == finding.claim
    for lead, wins, losses, p, kind in [
        (1, 5, 1, 0.01, statistics.DIFFERENCE),
        (1, 1, 5, 0.01, statistics.DIFFERENCE),
        (1, 5, 1, 0.5, statistics.DIFFERENCE),
        (1, 1, 5, 0.5, statistics.DIFFERENCE),
        (0, 5, 1, 0.5, statistics.DIFFERENCE),
        (1, 3, 3, 0.5, statistics.DIFFERENCE),
        (0, 5, 1, 0.5, statistics.NO_DIFFERENCE),
        (0, 1, 5, 0.01, statistics.NO_DIFFERENCE),
    ]:
        v = statistics.Verdict.of(lead, wins, losses, p, kind=kind, a="A/x", b="B/y")
        assert (
            paired.verdict_text(v) == str(v) == statistics.verdict(lead, wins, losses, p, kind=kind, a="A/x", b="B/y")
        )
        with language.speaking("nl"):
            assert paired.verdict_text(v) != str(v) or str(v) == "consistent", v


def test_production_says_yes_and_no_in_either_language():
    q = SimpleNamespace(id="q01", needle="a b", question="Why?")
    assert (
        "clean text: **yes**; after a page header lands in it: **no**."
        in narrate.needle_after_extraction(q, "a b c", "a X b c").data
    )
    assert "index holds what it held before: **yes**" in narrate.killed_update(0, True).data
    language.use("nl")
    assert (
        "schone tekst: **ja**; nadat er een paginakop in belandt: **nee**."
        in narrate.needle_after_extraction(q, "a b c", "a X b c").data
    )
    assert "**nee**" in narrate.killed_update(0, False).data
    assert "**ja**" in narrate.appended_found([(SimpleNamespace(content="new"), 0.1)], "new").data
    everything = (
        narrate.killed_update(-9, True).data
        + narrate.repaired(
            SimpleNamespace(stale={"d": 1}),
            SimpleNamespace(current=("d",), stale={}),
            SimpleNamespace(ids=("d",)),
            False,
        ).data
    )
    assert "True" not in everything and "False" not in everything and "**nee**" in everything
