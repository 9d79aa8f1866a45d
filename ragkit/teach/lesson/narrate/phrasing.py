"""What notebook 02 says of the course's questions asked in Dutch: the English-only encoder against both phrasings."""

from __future__ import annotations

from collections.abc import Sequence

from IPython.display import Markdown

from ragkit.phrasing import Phrasing
from ragkit.statistics import ALPHA
from ragkit.teach.language import _, say
from ragkit.threshold import KEEP

__all__ = ["dutch_phrasing"]


def dutch_phrasing(runs: Sequence[Phrasing], k: int = KEEP) -> Markdown:
    """Each retriever's needles found in the top ``k`` (the gate's four sources, notebook 06) for the English and the
    Dutch phrasing, with the sign test, and what that means for a Dutch class (only as strong as the test)."""
    lines = []
    for p in runs:
        (en_lo, en_hi), (nl_lo, nl_hi), t = p.interval("en", k), p.interval("nl", k), p.test(k)
        lines.append(
            say(
                "- **{retriever}** on {strategy}: asked in English, **{en}** of {n} find their needle [{en_lo:.2f}, "
                "{en_hi:.2f}]; asked in Dutch, **{nl}** of {n} [{nl_lo:.2f}, {nl_hi:.2f}]. Only the English phrasing "
                "finds it for **{wins}** questions, only the Dutch for **{losses}** (sign test p = **{p:.2g}**); MRR "
                "{en_mrr:.3f} against {nl_mrr:.3f}.",
                retriever=_name(p.retriever),
                strategy=p.strategy,
                en=p.hits("en", k),
                nl=p.hits("nl", k),
                n=len(p.ids),
                en_lo=en_lo,
                en_hi=en_hi,
                nl_lo=nl_lo,
                nl_hi=nl_hi,
                wins=t.wins,
                losses=t.losses,
                p=t.p,
                en_mrr=p.mrr("en"),
                nl_mrr=p.mrr("nl"),
            )
        )
    dense = next((p for p in runs if p.retriever == "dense"), runs[0])
    t = dense.test(k)
    if t.p < ALPHA and t.wins > t.losses:
        verdict = say(
            "Dense retrieval finds the needle in the top {k} for **{lost}** fewer questions when they are asked in "
            "Dutch, a loss the sign test does not put down to chance. The encoder learned English: a Dutch question "
            "lands far from the English chunk that answers it. For a Dutch class on an English corpus: ask in "
            "English, or measure a multilingual encoder on these same questions before trusting it.",
            k=k,
            lost=dense.hits("en", k) - dense.hits("nl", k),
        )
        bm25 = next((p for p in runs if p.retriever == "bm25"), None)
        if bm25 is not None and bm25.hits("nl", k) > dense.hits("nl", k):
            verdict += " " + say(
                "Asked in Dutch, BM25 keeps more needles than dense retrieval ({bm25} against {dense}): it matches "
                "the words a Dutch question shares with the chunk, such as the field's English terms.",
                bm25=bm25.hits("nl", k),
                dense=dense.hits("nl", k),
            )
    elif t.p < ALPHA:
        verdict = say(
            "Here the Dutch phrasing finds more needles in the top {k}, and the sign test says that is not "
            "chance: an unexpected result worth reading question by question.",
            k=k,
        )
    else:
        verdict = say(
            "On these {n} questions the two phrasings differ by no more than chance allows at the top {k}: "
            "that is no evidence that they retrieve alike, only that this sample cannot tell them apart.",
            n=len(dense.ids),
            k=k,
        )
    return Markdown(
        say("Needles found in the top {k}, each question asked in English and in Dutch (95% Wilson intervals):", k=k)
        + "\n\n"
        + "\n".join(lines)
        + "\n\n"
        + verdict
    )


def _name(retriever: str) -> str:
    """A retriever as the sentence names it."""
    if retriever == "bm25":
        return _("BM25")
    if retriever == "hybrid":
        return _("Hybrid")
    return _("Dense") if retriever == "dense" else retriever
