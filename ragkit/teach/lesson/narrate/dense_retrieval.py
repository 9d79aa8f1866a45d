"""What notebook 02-dense-retrieval says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

import numpy as np
from IPython.display import Markdown

from ragkit.evaluation import Evaluation
from ragkit.statistics import counts_test, wilson
from ragkit.teach.course import chapter


def sign_test_on_chapter_counts() -> Markdown:
    """Whether ragkit's exact sign test gives back the chapter's reported p-values from its own counts."""
    match = [np.isclose(counts_test(wins, losses).p, p, rtol=0.05) for wins, losses, p in chapter.COMPARISONS.values()
             if p is not None]
    return Markdown(f"ragkit's sign test on the chapter's own counts matches its reported p (within rounding) in "
                    f"**{sum(match)} of {len(match)}** cases.")


def room_to_win(ev: Evaluation) -> Markdown:
    """How many queries E could win over C at R@20 (those C misses), here and in the chapter."""
    n = len(ev.queries)
    room = int((ev["C/dense"].per_query("R@20") == 0).sum())
    t = ev.compare("E/dense", "C/dense", "R@20").test
    (e_hits, n_ch), (w, lost, _) = chapter.RECALL20["E"], chapter.COMPARISONS["E/dense", "C/dense", "R@20"]
    missed = n_ch - e_hits + w - lost
    return Markdown(
        f"This corpus: C misses **{room}** of **{n}** queries at R@20, so E can win at most **{room}**; it wins "
        f"**{t.wins}** and loses **{t.losses}**. The chapter: E found **{e_hits}/{n_ch}** and beat C "
        f"**+{w}/-{lost}**, so its C found **{e_hits - w + lost}/{n_ch}** and missed **{missed}**: "
        f"{'more' if missed > room else 'no more'} room than here.")


def interval_width(n: int) -> Markdown:
    """How wide a Wilson interval is at ``n`` queries, and whether a lead of three hits clears it."""
    low, high = wilson(n // 2, n)
    low3, high3 = wilson(n // 2 + 3, n)
    return Markdown(
        f"With **{n}** queries, a recall of **{(n // 2) / n:.2f}** has the interval **[{low:.3f}, {high:.3f}]**: "
        f"**{high - low:.3f}** wide, roughly **±{(high - low) / 2:.3f}**. Three more hits (a lead of **{3 / n:.3f}**) "
        f"give **[{low3:.3f}, {high3:.3f}]**; the two intervals {'overlap' if low3 < high else 'do not overlap'}.")


def headline(ev: Evaluation) -> Markdown:
    """E against A at R@20, query by query, and how many of E's wins are needles A destroyed."""
    c = ev.compare("E/dense", "A/dense", "R@20")
    destroyed = sum(q.qid in ev.destroyed["A"] for q in ev.queries if q.id in c.wins)
    return Markdown(
        f"E wins **{c.test.wins}** queries, A wins **{c.test.losses}**, p = **{c.test.p:.2g}**. Of E's wins, "
        f"**{destroyed}** are queries whose needle A destroyed outright, so they are wins by construction, not by "
        "better ranking.")


def queries_or_needles(ev: Evaluation) -> Markdown:
    """The headline comparison counted in queries and in needles: how many needles the query wins come from."""
    c = ev.compare("E/dense", "A/dense", "R@20")
    n_level = ev.compare("E/dense", "A/dense", "R@20", "needle").test
    needles = len({q.qid for q in ev.queries if q.id in c.wins})
    return Markdown(
        f"Query level: **+{c.test.wins}/-{c.test.losses}**, p = **{c.test.p:.2g}**. The **{c.test.wins}** query wins "
        f"come from only **{needles}** needles. Needle level: **+{n_level.wins}/-{n_level.losses}**, p = "
        f"**{n_level.p:.2g}**.")


def header_alone(ev: Evaluation) -> Markdown:
    """E against A without A's destroyed needles, and E against C: what the header buys, needle by needle."""
    rest = ev.compare("E/dense", "A/dense", "R@20", "needle", drop=ev.destroyed["A"]).test
    alone = ev.compare("E/dense", "C/dense", "R@20", "needle").test
    headline = ev.compare("E/dense", "A/dense", "R@20", "needle").test
    return Markdown(
        f"Without the needles A destroyed, E against A, needle by needle: **+{rest.wins}/-{rest.losses}**, p = "
        f"**{rest.p:.2g}**. The header alone (E against C), needle by needle: **+{alone.wins}/-{alone.losses}**, p = "
        f"**{alone.p:.2g}**. Of the headline's **{headline.wins}** needle wins, **{headline.wins - rest.wins}** are "
        "needles A destroyed.")
