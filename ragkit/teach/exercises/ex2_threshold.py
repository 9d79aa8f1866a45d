"""Exercise 2's check: a cut tuned on one half of the needles and judged on the other."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ragkit.teach.exercises.feedback import Feedback, record
from ragkit.teach.exercises.rules import CUT_GRID, EX2, ThresholdRules
from ragkit.teach.language import _, say
from ragkit.teach.untrusted import readable
from ragkit.threshold import CUT_RANGE, DEFAULT_CUT
from ragkit.tuning import SPLIT_SEED, halves

if TYPE_CHECKING:
    from ragkit.teach.course import Course

__all__ = [
    "accepted_cuts",
    "cheapest_passing_cuts",
    "check_threshold_choice",
    "cost_minima",
    "cost_table",
    "exercise_cost",
    "passed_here",
    "refusal_ceiling",
    "threshold_halves",
]

_passed: set[float] = set()
"""The cuts the check has passed in this kernel: what the judging half waits for (never computed for another cut)."""


def exercise_cost(row, rules: ThresholdRules = EX2) -> float:
    """Exercise 2's total cost of one sweep row: bluffs, answers without the needle and refusals at their prices."""
    return (
        row.bluffs * rules.bluff_cost
        + row.answered_without_needle * rules.without_needle_cost
        + row.refused * rules.refusal_cost
    )


def _too_many_refused(row, rules: ThresholdRules = EX2) -> bool:
    return row.refused > rules.max_refused * row.in_domain


def accepted_cuts(
    half, cuts: Sequence[float] = CUT_GRID, rules: ThresholdRules = EX2
) -> tuple[float, float, list[float]]:
    """On one half: the cheapest cost within the refusal ceiling, the most a passing cut may cost (that plus the
    tolerance, or one refusal), and the cuts that pass, in the order given."""
    allowed = [(c, exercise_cost(half.at(c), rules)) for c in cuts if not _too_many_refused(half.at(c), rules)]
    best = min(cost for _, cost in allowed)
    limit = best + max(rules.tolerance * best, rules.refusal_cost)
    return best, limit, [c for c, cost in allowed if cost <= limit]


def cheapest_passing_cuts(half, rules: ThresholdRules = EX2) -> list[float]:
    """The passing cuts that cost least on one half, in the grid's order (the first is the one a solution takes)."""
    best, _limit, passing = accepted_cuts(half, rules=rules)
    return [c for c in passing if exercise_cost(half.at(c), rules) == best]


def threshold_halves(sweep, seed: int = SPLIT_SEED):
    """The sweep split in two, by needle and by out-of-domain query, with the course's one split: (tune, judge)."""
    tune, judge = halves([q.id for q in sweep.questions], seed, [o.id for o in sweep.out_of_domain])
    return sweep.subset(tune), sweep.subset(judge)


def cost_table(half, cuts: Sequence[float | None] = CUT_GRID):
    """Bluffs, refusals and total cost at every cut of one half, under exercise 2's costs (a pandas table, shown for
    people: headings in words, within the ceiling as yes or no, no bare 0, 1, 2 index).

    Give it ``tune`` to choose; the judging half is the check's evidence, shown after the check. A cut of None is no
    threshold at all (its ``cut`` is NaN). Cuts keep three decimals, counts are whole numbers, the refused share three
    decimals, the cost a whole number when every cost is one: what the table shows is what it holds.
    """
    from ragkit.teach.frames import Frame

    rows = [half.at(c) for c in cuts]
    costs = [exercise_cost(r) for r in rows]
    whole = all(float(c).is_integer() for c in costs)
    return Frame(
        {
            "cut": [np.nan if c is None else round(float(c), 3) for c in cuts],
            "bluffs": [int(r.bluffs) for r in rows],
            "answered without needle": [int(r.answered_without_needle) for r in rows],
            "refused": [int(r.refused) for r in rows],
            "refused share": [round(r.refused / r.in_domain, 3) for r in rows],
            "cost": [int(c) for c in costs] if whole else costs,
            "within ceiling": [not _too_many_refused(r) for r in rows],
        }
    )


def refusal_ceiling(half, rules: ThresholdRules = EX2) -> int:
    """The most answerable queries of one half a cut may refuse and stay within the ceiling."""
    return math.floor(rules.max_refused * len(half.queries))


def _as_cut(cut: object) -> float | None:
    """A cut a student may write (a Python or numpy number, not a bool), or None when it is no number at all."""
    if isinstance(cut, (bool, np.bool_)) or not isinstance(cut, (int, float, np.integer, np.floating)):
        return None
    return float(cut)


def check_threshold_choice(course: Course, cut: float | None) -> Feedback:
    """Exercise 2: the cheapest cut under the exercise's costs and refusal ceiling, chosen on `tune`, judged on `judge`.

    The costs, the ceiling and the split are the exercise's own (``EX2``): nothing a student passes changes them.
    """
    feedback, recorded = _threshold_feedback(course, cut)
    if feedback.passed and (value := _as_cut(cut)) is not None:
        _passed.add(value)
    return record("ex2", feedback) if recorded else feedback


def passed_here(cut: object) -> bool:
    """Whether exercise 2's check has passed ``cut`` in this kernel: the judging half waits for that.

    It answers only for a cut the check itself has judged, so it is no way to ask whether a cut would pass.
    """
    value = _as_cut(cut)
    return value is not None and value in _passed


def _threshold_feedback(course: Course, cut: object) -> tuple[Feedback, bool]:
    """The check's feedback on ``cut``, and whether it is an attempt to record (not a missing answer or argument)."""
    low, high = CUT_RANGE
    rules = say(
        "bluff cost {bluff:g}, answer without the needle cost {without:g}, refusal cost {refusal:g}, at most "
        "{ceiling:.0%} of the answerable queries refused",
        bluff=EX2.bluff_cost,
        without=EX2.without_needle_cost,
        refusal=EX2.refusal_cost,
        ceiling=EX2.max_refused,
    )
    if cut is None:
        # the bounds are what a student types into Python, so they keep the decimal point in every language
        return Feedback(
            False,
            (
                say(
                    "set `my_cut` to a cosine distance between {low} and {high}, chosen on `tune` only",
                    low=str(low),
                    high=str(high),
                ),
                say(
                    "the rules: {rules}; total cost = bluffs x bluff cost + answers without the needle "
                    "x their cost + refusals x refusal cost",
                    rules=rules,
                ),
            ),
        ), False
    if not callable(getattr(course, "sweep", None)):
        return Feedback(
            False,
            (
                say(
                    "the first argument is a {kind}: pass the course, "
                    "`check_threshold_choice(course, my_cut)`; the check builds its own sweep",
                    kind=type(course).__name__,
                ),
            ),
        ), False
    value = _as_cut(cut)
    if value is None or not math.isfinite(value) or not low <= value <= high:
        return Feedback(
            False,
            (
                say(
                    "{cut} is not a cosine distance between {low} and {high}: give a number such as {example}",
                    cut=readable(repr(cut)),
                    low=str(low),
                    high=str(high),
                    example=str(DEFAULT_CUT),
                ),
            ),
            {"cut": value},
        ), True
    tune, judge = threshold_halves(course.sweep(EX2.strategy, EX2.retriever))
    best, limit = accepted_cuts(tune)[:2]
    cheapest = cheapest_passing_cuts(tune)
    row, held = tune.at(value), judge.at(value)
    mine, judged = exercise_cost(row), exercise_cost(held)
    judge_best = accepted_cuts(judge)[0]
    numbers = {
        "cut": value,
        "tune_cost": mine,
        "tune_refused": row.refused,
        "tune_best": best,
        "judge_cost": judged,
        "judge_refused": held.refused,
        "judge_best": judge_best,
    }
    notes = [
        say("the rules: {rules}", rules=rules),
        say(
            "on the tuning half at {cut:.3f}: bluffs {bluffs} x {bluff:g} + answers without the needle {without} "
            "x {without_cost:g} + refusals {refused} x {refusal:g} = {cost:g}; {refused} of {in_domain} "
            "answerable queries refused ({share:.0%})",
            cut=value,
            bluffs=row.bluffs,
            bluff=EX2.bluff_cost,
            without=row.answered_without_needle,
            without_cost=EX2.without_needle_cost,
            refused=row.refused,
            refusal=EX2.refusal_cost,
            cost=mine,
            in_domain=row.in_domain,
            share=row.refused / row.in_domain,
        ),
    ]
    if _too_many_refused(row):
        return Feedback(
            False,
            tuple(
                notes
                + [
                    say(
                        "more than {ceiling:.0%} of the answerable queries refused: no product team ships a gate that "
                        "turns away that many questions it could answer",
                        ceiling=EX2.max_refused,
                    )
                ]
            ),
            numbers,
            hints=(_("a looser (higher) cut refuses fewer"),),
        ), True
    if mine > limit:
        # which way to go, never where to stop: the pass line and the cheapest cost stay the check's own
        nearest = min(cheapest, key=lambda c: abs(c - value))
        return Feedback(
            False,
            tuple(notes + [_("a cheaper cut within the ceiling exists on the tuning half")]),
            numbers,
            hints=(_("try a higher cut") if nearest > value else _("try a lower cut"),),
        ), True
    notes += [
        say(
            "within the ceiling and the tolerance (cost at most {limit:g}: the cheapest allowed cost {best:g} plus "
            "{tolerance:.0%}, or one refusal)",
            limit=limit,
            best=best,
            tolerance=EX2.tolerance,
        ),
        say(
            "judged on the held-out half: bluffs {bluffs}, answers without the needle {without}, refused {refused} "
            "of {in_domain}, cost {cost:g} (the best any cut within the ceiling could have done there: {judge_best:g})",
            bluffs=held.bluffs,
            without=held.answered_without_needle,
            refused=held.refused,
            in_domain=held.in_domain,
            cost=judged,
            judge_best=judge_best,
        ),
    ]
    if _too_many_refused(held):
        notes.append(
            say(
                "there your cut refuses {share:.0%} of the answerable queries, over the ceiling of "
                "{ceiling:.0%}: the check holds you to the ceiling on the half you chose on, and this is "
                "what a cut tuned on some queries can do on the next ones",
                share=held.refused / held.in_domain,
                ceiling=EX2.max_refused,
            )
        )
    return Feedback(True, tuple(notes), numbers), True


def cost_minima(costs: Sequence[float], cuts: Sequence[float] = CUT_GRID, n: int = 2) -> list[tuple[float, float]]:
    """The n cheapest local minima of a cost curve as (cut, cost), a flat bottom reported at its middle cut."""
    costs = list(costs)
    found, i = [], 0
    while i < len(costs):
        j = i
        while j + 1 < len(costs) and costs[j + 1] == costs[i]:
            j += 1
        left = costs[i - 1] if i > 0 else np.inf
        right = costs[j + 1] if j + 1 < len(costs) else np.inf
        if costs[i] < left and costs[i] < right:
            found.append((float(cuts[(i + j) // 2]), float(costs[i])))
        i = j + 1
    return sorted(found, key=lambda m: m[1])[:n]
