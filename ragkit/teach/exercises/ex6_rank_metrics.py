"""Exercise 6's check: average precision and nDCG@10 of a ranking of one's own, computed by hand.

Each student is given a ranking of their own (``own_ranking``, from a stable hash of their name): which of its chunks
are relevant. The check computes AP and nDCG@10 with the engine's own metrics (``evaluation.Result``, which the tests
hold equal to ranx's) and compares. A wrong answer that is one of the usual slips (MRR or precision for AP, AP cut at
10, DCG left unnormalised, the ideal taken from the top 10 only, the worked example's figures) gets a hint that names
the slip, never the value.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

from ragkit.evaluation import Result
from ragkit.teach.exercises.feedback import Feedback, record
from ragkit.teach.exercises.results import current_student
from ragkit.teach.exercises.rules import EX6, RankingRules
from ragkit.teach.language import _, say
from ragkit.teach.untrusted import readable

__all__ = ["Ranking", "WorkedExample", "check_rank_metrics", "example_ranking", "own_ranking", "worked_example"]


def _engine(relevant: tuple[int, ...], metric: str) -> float:
    """One of the engine's metrics of a ranking (``evaluation.Result.per_query``, held equal to ranx's by the tests)."""
    result = Result("own", "ranking", np.array([min(relevant)]), ("q",), relevant=(relevant,))
    return float(result.per_query(metric)[0])


@dataclass(frozen=True)
class Ranking:
    """A ranking of ``length`` chunks, best first, and the ranks (from 1) of its relevant ones (gain 1, else 0)."""

    relevant: tuple[int, ...]
    length: int = EX6.length

    def marks(self) -> list[bool]:
        """Whether each rank, from 1, holds a relevant chunk."""
        return [r in self.relevant for r in range(1, self.length + 1)]

    def _repr_markdown_(self) -> str:
        ranks = " | ".join(str(r) for r in range(1, self.length + 1))
        marks = " | ".join("✓" if m else "·" for m in self.marks())
        k = EX6.cutoff
        table = f"| {_('rank')} | {ranks} |\n|{'---|' * (self.length + 1)}\n| {_('relevant')} | {marks} |\n\n"
        return table + say(
            "{relevant} relevant chunks in all, each marked above (✓); every other chunk has gain 0. The metrics "
            "you know already, for this ranking: MRR {mrr:.3f}, P@{k} {precision:.3f}, Recall@{k} {recall:.3f}.",
            relevant=len(self.relevant),
            mrr=_engine(self.relevant, "MRR"),
            k=k,
            precision=_engine(self.relevant, f"P@{k}"),
            recall=_engine(self.relevant, f"Recall@{k}"),
        )


@dataclass(frozen=True)
class WorkedExample:
    """AP and nDCG@10 of the notebook's example ranking, worked out step by step, each step shown."""

    ranking: Ranking
    cutoff: int = EX6.cutoff

    @property
    def precisions(self) -> list[float]:
        """The precision at the rank of each relevant chunk: relevant chunks so far over the rank."""
        return [(i + 1) / r for i, r in enumerate(self.ranking.relevant)]

    @property
    def ap(self) -> float:
        return sum(self.precisions) / len(self.ranking.relevant)

    @property
    def dcg(self) -> float:
        return sum(1 / math.log2(r + 1) for r in self.ranking.relevant if r <= self.cutoff)

    @property
    def ideal_dcg(self) -> float:
        """The DCG at the cutoff of the ideal ranking: every relevant chunk first, as many as fit."""
        return sum(1 / math.log2(r + 1) for r in range(1, min(len(self.ranking.relevant), self.cutoff) + 1))

    @property
    def ndcg(self) -> float:
        return self.dcg / self.ideal_dcg

    def _repr_markdown_(self) -> str:
        relevant, k = self.ranking.relevant, self.cutoff
        ideal = min(len(relevant), k)

        def gain(r: int, shown: bool) -> str:
            return say("{g:.3f}", g=1 / math.log2(r + 1)) if shown else ""

        ap_rows = [
            f"| {r} | {i + 1} | {say('{p:.3f}', p=p)} |" for i, (r, p) in enumerate(zip(relevant, self.precisions))
        ]
        dcg_rows = [
            f"| {r} | {'✓' if r in relevant else '·'} | {gain(r, r in relevant)} | {'✓' if r <= ideal else '·'} | "
            f"{gain(r, r <= ideal)} |"
            for r in range(1, k + 1)
        ]
        ap = say(
            "AP = the sum of these precisions over the number of relevant chunks = {total:.3f} / {count} = "
            "**{ap:.3f}**.",
            total=sum(self.precisions),
            count=len(relevant),
            ap=self.ap,
        )
        ndcg = say(
            "nDCG@{k} = DCG@{k} / ideal DCG@{k} = {dcg:.3f} / {ideal:.3f} = **{ndcg:.3f}** (the ideal ranking puts "
            "all {count} relevant chunks first).",
            k=k,
            dcg=self.dcg,
            ideal=self.ideal_dcg,
            ndcg=self.ndcg,
            count=len(relevant),
        )
        return "\n".join(
            [
                f"| {_('rank of a relevant chunk')} | {_('relevant chunks so far')} | {_('precision at that rank')} |",
                "|---:|---:|---:|",
                *ap_rows,
                "",
                ap,
                "",
                f"| {_('rank')} | {_('relevant')} | {_('gain / log2(rank + 1)')} | {_('ideal ranking')} | "
                f"{_('ideal gain / log2(rank + 1)')} |",
                "|---:|:---:|---:|:---:|---:|",
                *dcg_rows,
                "",
                ndcg,
            ]
        )


def _slips(ranking: Ranking, rules: RankingRules = EX6) -> dict[str, tuple[float, str]]:
    """The usual wrong answers for this ranking: each value, with a hint that names the slip without the answer."""
    ranks, k = ranking.relevant, rules.cutoff
    top = [r for r in ranks if r <= k]
    precision = [(i + 1) / r for i, r in enumerate(ranks)]
    gain = [1 / math.log2(r + 1) for r in top]
    ideal_top = [1 / math.log2(i + 2) for i in range(len(top))]
    gain_all = [1 / math.log2(r + 1) for r in ranks]
    ideal_all = [1 / math.log2(i + 2) for i in range(len(ranks))]
    return {
        "MRR": (1 / ranks[0], _("that is the reciprocal rank of the first relevant chunk (MRR), not this metric")),
        "P@10": (len(top) / k, _("that is the precision at 10, the share of the top 10 that is relevant")),
        "Recall@10": (
            len(top) / len(ranks),
            _("that is the recall at 10, the share of the relevant chunks in the top 10"),
        ),
        "AP over the top 10, divided by those found": (
            sum(precision[: len(top)]) / len(top),
            _(
                "your AP counts only the relevant chunks in the top 10: AP over the whole ranking averages the "
                "precision at every relevant chunk's rank, and divides by all of them"
            ),
        ),
        "AP cut at 10": (
            sum(precision[: len(top)]) / len(ranks),
            _("your AP stops at rank 10: AP over the whole ranking counts the relevant chunk further down too"),
        ),
        "mean precision over the top 10": (
            float(np.mean([sum(m <= r for m in ranks) / r for r in range(1, k + 1)])),
            _("your AP averages the precision at every rank: AP averages it only at the ranks of relevant chunks"),
        ),
        "DCG@10": (
            sum(gain),
            _("that looks like DCG@10 left unnormalised: divide by the DCG of the ideal ranking at 10"),
        ),
        "nDCG@10 with the ideal of the top 10": (
            sum(gain) / sum(ideal_top),
            _(
                "your ideal ranking holds only the relevant chunks of the top 10: the ideal puts every relevant chunk "
                "first, as many as fit in 10"
            ),
        ),
        "nDCG over the whole ranking": (
            sum(gain_all) / sum(ideal_all),
            _("your nDCG counts the whole ranking: nDCG@10 stops at rank 10, for the ranking and for the ideal alike"),
        ),
        "nDCG with a discount of 1/rank": (
            sum(1 / r for r in top) / sum(1 / (i + 1) for i in range(min(len(ranks), k))),
            _("your discount is 1/rank: DCG discounts the gain at rank r by log2(r + 1)"),
        ),
    }


def _figures(ranking: Ranking, rules: RankingRules = EX6) -> tuple[float, float]:
    return _engine(ranking.relevant, "MAP"), _engine(ranking.relevant, f"nDCG@{rules.cutoff}")


def _apart(ranking: Ranking, rules: RankingRules = EX6) -> bool:
    """Whether AP, nDCG@10, every slip and the worked example's figures lie at least ``apart`` from each other's."""
    ap, ndcg = _figures(ranking, rules)
    others = [v for v, _hint in _slips(ranking, rules).values()] + list(_figures(example_ranking(rules), rules))
    return all(abs(a - b) >= rules.apart for a in (ap, ndcg) for b in [*others, ndcg if a == ap else ap])


def example_ranking(rules: RankingRules = EX6) -> Ranking:
    """The notebook's example: a ranking no student is given."""
    return Ranking(rules.example, rules.length)


def worked_example(rules: RankingRules = EX6) -> WorkedExample:
    """AP and nDCG@10 of the example ranking, step by step (for that ranking only: yours is yours to work out)."""
    return WorkedExample(example_ranking(rules), rules.cutoff)


def own_ranking(name: str | None = None, rules: RankingRules = EX6) -> Ranking:
    """The ranking a student is given: a stable hash of the name draws how many chunks are relevant and where.

    The first relevant chunk is never at rank 1, at least two lie in the top ``cutoff`` and one below it, and the
    draw is repeated until every figure the check tells apart lies ``apart`` from the others (``_apart``).
    """
    digest = hashlib.sha256(("ex6:" + (name or current_student())).encode("utf-8")).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
    while True:
        count = int(rng.choice(rules.relevant))
        ranks = tuple(sorted(int(r) for r in rng.choice(np.arange(2, rules.length + 1), count, replace=False)))
        ranking = Ranking(ranks, rules.length)
        top = sum(r <= rules.cutoff for r in ranks)
        if ranks != rules.example and 2 <= top < count and _apart(ranking, rules):
            return ranking


def _as_share(value: object) -> float | None:
    """A number a student may write (a Python or numpy number, not a bool), or None when it is no number."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    return float(value)


def check_rank_metrics(my_ap: object, my_ndcg: object, *, student: str | None = None) -> Feedback:
    """Exercise 6: the AP and nDCG@10 of your own ranking (``own_ranking()``), computed by hand.

    ``student`` is the grader's: it names whose ranking judges (by the grader's path rule); a kernel leaves it out.
    """
    if my_ap is None or my_ndcg is None:
        return Feedback(
            False,
            (
                _("set `my_ap` and `my_ndcg` to the AP and the nDCG@10 of your own ranking, as numbers such as 0.512"),
                str(EX6),
            ),
        )
    ranking = own_ranking(student)
    truth = dict(zip(("AP", "nDCG@10"), _figures(ranking)))
    given = {"AP": _as_share(my_ap), "nDCG@10": _as_share(my_ndcg)}
    odd = [name for name, v in given.items() if v is None or not math.isfinite(v) or not 0 < v <= 1]
    if odd:
        return record(
            "ex6",
            Feedback(
                False,
                tuple(
                    say(
                        "{metric} = {value}: give a number above 0 and at most 1 (a ranking with a relevant chunk "
                        "has both metrics above 0; 1 means every relevant chunk ranks first)",
                        metric=name,
                        value=readable(repr(my_ap if name == "AP" else my_ndcg)),
                    )
                    for name in odd
                ),
                {"ap": given["AP"], "ndcg": given["nDCG@10"]},
            ),
        )
    slips = _slips(ranking)
    example = dict(zip(("AP", "nDCG@10"), _figures(example_ranking())))
    notes, hints, right = [], [], {}
    for name, value in given.items():
        assert value is not None  # refused above
        other = "nDCG@10" if name == "AP" else "AP"
        right[name] = abs(value - truth[name]) <= EX6.tolerance
        if right[name]:
            notes.append(say("{metric} {value:.3f}: right", metric=name, value=value))
            continue
        notes.append(say("{metric} {value:.3f}: not yet", metric=name, value=value))
        slip = next((hint for v, hint in slips.values() if abs(value - v) <= EX6.tolerance), None)
        if abs(value - example[name]) <= EX6.tolerance:
            hints.append(_("that is the worked example's figure: compute it for your own ranking"))
        elif abs(value - truth[other]) <= EX6.tolerance:
            hints.append(say("that is your ranking's {other}: the two answers are swapped", other=other))
        elif slip is not None:
            hints.append(slip)
        elif name == "AP":
            hints.append(
                _("AP: the precision at the rank of each relevant chunk, summed, divided by how many are relevant")
            )
        else:
            hints.append(
                _(
                    "nDCG@10: the sum of 1/log2(rank + 1) over the relevant chunks in the top 10, divided by "
                    "the same sum for the ideal ranking at 10"
                )
            )
    numbers = {"ap": given["AP"], "ndcg": given["nDCG@10"], "ap_right": right["AP"], "ndcg_right": right["nDCG@10"]}
    passed = all(right.values())
    if passed:
        notes.append(_("both agree with the engine's AP and nDCG@10, which the course's tests hold equal to ranx's"))
    return record("ex6", Feedback(passed, tuple(notes), numbers, hints=tuple(dict.fromkeys(hints))))
