"""Statements issue 45 corrected stay corrected: the field's names, and no claim stronger than its measurement."""

import re

import pytest

from conftest import ROOT

ENGLISH = sorted(p for p in (ROOT / "notebooks" / "twins").rglob("*.py") if "nl" not in p.relative_to(ROOT).parts)
TEACHING = sorted((ROOT / "ragkit" / "teach" / "lesson").rglob("*.py")) + sorted(
    (ROOT / "ragkit" / "teach" / "exercises").glob("*.py")
)
DOCS = [
    ROOT / "docs" / "teacher-guide.md",
    ROOT / "docs" / "grading.md",
    ROOT / "README.md",
    ROOT / "ragkit" / "threshold.py",
]
PROSE = ENGLISH + TEACHING + DOCS
ALLOWED = re.compile(r"chapter|hoofdstuk|field")
"""A line may write recall@k where it says that the chapter calls the hit rate so, or what the field calls recall."""

WRONG = {
    r"only (part|component|place)[^.\n]{0,40}(say|can say)[^.\n]{0,20}(I don't know|no answer|no)\b": (
        "the cosine cut is one way to abstain: a reranker's or BM25's score cut and a model's own refusal are others"
    ),
    r"blind to how long": "a normalised vector loses its length, not the effect of text length on its direction",
    r"(?<!at most )one time in twenty": "an exact sign test falls below 0.05 at most one time in twenty",
    r"(?-i:\brecall@)": "the share of queries with a hit in the top k is the hit rate (Hit@k); recall@k is the "
    "share of a query's relevant chunks (a line may name the chapter's usage)",
    r"\bR@\d": "the metric is named Hit@k",
    r"four-point lead says nothing": "a lead of a few points is not yet a finding; it does not 'say nothing'",
    r"keeps that chance at 0\.05": "Holm keeps the family-wise error at or below 0.05",
    r"embarrassingly simple": "the gate's bluffs are counted in 06: simple to state, not to get right",
}


@pytest.mark.parametrize("pattern", list(WRONG))
def test_a_corrected_statement_is_not_written_again(pattern):
    found = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in PROSE
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(pattern, line, re.I) and not (pattern.startswith("(?-i:\\brecall@") and ALLOWED.search(line))
    ]
    assert not found, f"{WRONG[pattern]}: {found}"


def test_03s_try_this_fuses_with_matched_as_the_notebook_warns():
    twin = ROOT / "notebooks" / "twins" / "03-bm25-and-hybrid.py"
    tries = twin.read_text(encoding="utf-8").split("## Try this", 1)[1]
    call = re.search(r"`rrf_many\([^`]*\)`", tries)
    assert call and "k=1" in call[0] and "matched=" in call[0], call
