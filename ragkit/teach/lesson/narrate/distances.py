"""What notebook 05-distances says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown

from ragkit.chunking import Chunk
from ragkit.distances import IdentityCheck
from ragkit.teach.course import chapter
from ragkit.teach.language import _, say

__all__ = [
    "FLOAT32_STEP",
    "identity_gap",
    "identity_noise",
    "identity_pair",
    "length_and_norm",
    "length_cut",
    "length_sensitivity",
    "nearest_moved",
    "query_shown",
    "unnormalised",
]

FLOAT32_STEP = float(np.finfo(np.float32).eps)
"""The step float32 resolves near 1: the size of rounding noise in a stored unit vector."""


def identity_pair(pair: Sequence[Chunk]) -> Markdown:
    """The chunks the identity is checked on, named a and b as the table's rows name them: title, section, opening."""
    return Markdown(
        "\n".join(
            say(
                "- **{name}**: *{title}* › *{section}*: _{opening}…_",
                name=name,
                title=c.doc_title,
                section=c.section or _("(introduction)"),
                opening=c.content[:100],
            )
            for name, c in zip("ab", pair)
        )
    )


def query_shown(query: str) -> Markdown:
    """The query the next figures are measured on."""
    return Markdown(say("**Query:** {query}", query=query))


def identity_noise(check: IdentityCheck) -> Markdown:
    """The identity's two sides on one pair, here and in the chapter: rounding noise or not."""
    noise = _("rounding noise") if check.difference < 10 * FLOAT32_STEP else _("larger than rounding noise")
    return Markdown(
        say(
            "The two sides differ by **{difference:.2e}** here and by **{chapter_difference:.2e}** in the chapter. A "
            "float32 resolves steps of about **{step:.1e}** near 1, so this difference is **{noise}**.",
            difference=check.difference,
            chapter_difference=chapter.IDENTITY["diff"],
            step=FLOAT32_STEP,
            noise=noise,
        )
    )


def identity_gap(sample: Sequence[Chunk], chunks: int, documents: int, gap: float) -> Markdown:
    """How a sample of chunk vectors was drawn from ``chunks`` over ``documents``, and its worst identity gap."""
    vectors = len(sample)
    verdict = (
        _("still rounding noise")
        if gap < 100 * FLOAT32_STEP
        else _("more than rounding noise: look for a vector that is not unit length")
    )
    return Markdown(
        say(
            "The sample takes one chunk in every **{every:.1f}** of **{chunks:,}** and covers **{covered}** of the "
            "**{documents}** documents.  \n"
            "Worst gap over **{pairs:,}** distinct pairs of **{vectors}** chunk vectors: **{gap:.2e}**; the chapter, "
            "over its own 200: **{chapter_gap:.2e}**. That is **{verdict}**.",
            every=chunks / vectors,
            chunks=chunks,
            covered=len({c.doc_id for c in sample}),
            documents=documents,
            pairs=vectors * (vectors - 1) // 2,
            vectors=vectors,
            gap=gap,
            chapter_gap=chapter.IDENTITY["max_diff_200"],
            verdict=verdict,
        )
    )


def unnormalised(raw: IdentityCheck, unit: IdentityCheck, predicted: float) -> Markdown:
    """What dropping the normalisation does to the identity, to cosine, and to the general formula's prediction."""
    return Markdown(
        say(
            "Un-normalised, the two sides of the identity differ by **{raw:.4f}**, against **{unit:.2e}** on unit "
            "vectors. The cosine distance moved by only **{moved:.1e}**: cosine divides the norms out, so it never "
            "noticed. The general line above predicts L2²/2 = **{predicted:.6f}** from the norms and the cosine; "
            "measured: **{measured:.6f}**.",
            raw=raw.difference,
            unit=unit.difference,
            moved=abs(raw.cosine_distance - unit.cosine_distance),
            predicted=predicted,
            measured=raw.half_l2_squared,
        )
    )


def length_and_norm(lengths: pd.DataFrame) -> Markdown:
    """How a chunk's length goes with its un-normalised norm, and that normalised norms stay at 1."""
    corr = lengths.corr().loc["word pieces", "norm, un-normalised"]
    return Markdown(
        say(
            "Correlation between length (word pieces) and un-normalised norm over these **{chunks}** chunks: "
            "**{correlation:.2f}**, so longer chunks tend to have **{direction}** vectors. The normalised norms stay "
            "between **{lowest:.6f}** and **{highest:.6f}** whatever the length.",
            chunks=len(lengths),
            correlation=corr,
            direction=_("shorter") if corr < 0 else _("longer"),
            lowest=lengths["norm, normalised"].min(),
            highest=lengths["norm, normalised"].max(),
        )
    )


def length_sensitivity(lengths: pd.DataFrame) -> Markdown:
    """For one query: which distance follows chunk length more, un-normalised L2 or cosine."""
    corr_l2, corr_cos = lengths.corr().loc[["L2, un-normalised", "cosine distance"], "word pieces"]
    return Markdown(
        say(
            "For this query, un-normalised L2 correlates with chunk length at **{l2:.2f}**, cosine distance at "
            "**{cosine:.2f}**: of the two, the un-normalised distance is the **{more}**.",
            l2=corr_l2,
            cosine=corr_cos,
            more=_("more length-sensitive") if abs(corr_l2) > abs(corr_cos) else _("less length-sensitive"),
        )
    )


def nearest_moved(l2: np.ndarray, cosine: np.ndarray) -> Markdown:
    """For how many queries the nearest chunk differs between un-normalised L2 and cosine distance."""
    moved = int((l2.argmin(axis=1) != cosine.argmin(axis=1)).sum())
    return Markdown(
        say(
            "For **{moved}** of **{queries}** queries the nearest of these chunks is a different one under "
            "un-normalised L2 than under cosine distance. How the distance to the nearest chunk relates to the "
            "*query's* length and norm:",
            moved=moved,
            queries=len(l2),
        )
    )


def length_cut(nearest: pd.DataFrame) -> Markdown:
    """Whether a fixed cut on each distance would be a cut on the query's length."""
    r_l2, r_cos = nearest.corr().loc[["nearest L2, un-normalised", "nearest cosine distance"], "query word pieces"]
    verdict = (
        _(
            "A fixed cut on un-normalised L2 would largely be a cut on how many words the user typed; a cut on "
            "cosine distance much less so."
        )
        if abs(r_l2) >= 0.5 and abs(r_cos) < abs(r_l2) / 2
        else _("On this corpus the contrast is weaker than the algebra suggests: look at the panels.")
    )
    return Markdown(
        say(
            "Correlation with query length: nearest un-normalised L2 **{l2:.2f}**, nearest cosine "
            "distance **{cosine:.2f}**. {verdict}",
            l2=r_l2,
            cosine=r_cos,
            verdict=verdict,
        )
    )
