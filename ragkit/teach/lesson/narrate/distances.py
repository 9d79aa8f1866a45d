"""What notebook 05-distances says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown

from ragkit.chunking import Chunk
from ragkit.distances import IdentityCheck
from ragkit.teach.course import chapter

FLOAT32_STEP = float(np.finfo(np.float32).eps)
"""The step float32 resolves near 1: the size of rounding noise in a stored unit vector."""


def identity_noise(check: IdentityCheck) -> Markdown:
    """The identity's two sides on one pair, here and in the chapter: rounding noise or not."""
    noise = "rounding noise" if check.difference < 10 * FLOAT32_STEP else "larger than rounding noise"
    return Markdown(
        f"The two sides differ by **{check.difference:.2e}** here and by **{chapter.IDENTITY['diff']:.2e}** in the "
        f"chapter. A float32 resolves steps of about **{FLOAT32_STEP:.1e}** near 1, so this difference is "
        f"**{noise}**.")


def identity_gap(sample: Sequence[Chunk], chunks: int, documents: int, gap: float) -> Markdown:
    """How a sample of chunk vectors was drawn from ``chunks`` over ``documents``, and its worst identity gap."""
    vectors = len(sample)
    verdict = ("still rounding noise" if gap < 100 * FLOAT32_STEP
               else "more than rounding noise: look for a vector that is not unit length")
    return Markdown(
        f"The sample takes every **{chunks / vectors:.1f}**th chunk of **{chunks}** and covers "
        f"**{len({c.doc_id for c in sample})}** of the **{documents}** documents.  \n"
        f"Worst gap over **{vectors * (vectors - 1) // 2}** distinct pairs of **{vectors}** chunk vectors: "
        f"**{gap:.2e}**; the chapter, over its own 200: **{chapter.IDENTITY['max_diff_200']:.2e}**. That is "
        f"**{verdict}**.")


def unnormalised(raw: IdentityCheck, unit: IdentityCheck, predicted: float) -> Markdown:
    """What dropping the normalisation does to the identity, to cosine, and to the general formula's prediction."""
    return Markdown(
        f"Un-normalised, the two sides of the identity differ by **{raw.difference:.4f}**, against "
        f"**{unit.difference:.2e}** on unit vectors. The cosine distance moved by only "
        f"**{abs(raw.cosine_distance - unit.cosine_distance):.1e}**: cosine divides the norms out, so it never "
        f"noticed. The general line above predicts L2²/2 = **{predicted:.6f}** from the norms and the cosine; "
        f"measured: **{raw.half_l2_squared:.6f}**.")


def length_and_norm(lengths: pd.DataFrame) -> Markdown:
    """How a chunk's length goes with its un-normalised norm, and that normalised norms stay at 1."""
    corr = lengths.corr().loc["word pieces", "norm, un-normalised"]
    return Markdown(
        f"Correlation between length (word pieces) and un-normalised norm over these **{len(lengths)}** chunks: "
        f"**{corr:.2f}**, so longer chunks tend to have **{'shorter' if corr < 0 else 'longer'}** vectors. The "
        f"normalised norms stay between **{lengths['norm, normalised'].min():.6f}** and "
        f"**{lengths['norm, normalised'].max():.6f}** whatever the length.")


def length_sensitivity(lengths: pd.DataFrame) -> Markdown:
    """For one query: which distance follows chunk length more, un-normalised L2 or cosine."""
    corr_l2, corr_cos = lengths.corr().loc[["L2, un-normalised", "cosine distance"], "word pieces"]
    return Markdown(
        f"For this query, un-normalised L2 correlates with chunk length at **{corr_l2:.2f}**, cosine distance at "
        f"**{corr_cos:.2f}**: the un-normalised distance is the "
        f"**{'more' if abs(corr_l2) > abs(corr_cos) else 'less'}** length-sensitive of the two.")


def nearest_moved(l2: np.ndarray, cosine: np.ndarray) -> Markdown:
    """For how many queries the nearest chunk differs between un-normalised L2 and cosine distance."""
    moved = int((l2.argmin(axis=1) != cosine.argmin(axis=1)).sum())
    return Markdown(
        f"For **{moved}** of **{len(l2)}** queries the nearest of these chunks is a different one under "
        "un-normalised L2 than under cosine distance. How the distance to the nearest chunk relates to the *query's* "
        "length and norm:")


def length_cut(nearest: pd.DataFrame) -> Markdown:
    """Whether a fixed cut on each distance would be a cut on the query's length."""
    r_l2, r_cos = nearest.corr().loc[["nearest L2, un-normalised", "nearest cosine distance"], "query word pieces"]
    verdict = ("A fixed cut on un-normalised L2 would largely be a cut on how many words the user typed; a cut on "
               "cosine distance is not." if abs(r_l2) >= 0.5 and abs(r_cos) < abs(r_l2) / 2
               else "On this corpus the contrast is weaker than the algebra suggests: look at the panels.")
    return Markdown(f"Correlation with query length: nearest un-normalised L2 **{r_l2:.2f}**, nearest cosine distance "
                    f"**{r_cos:.2f}**. {verdict}")
