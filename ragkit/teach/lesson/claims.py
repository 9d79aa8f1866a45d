"""The chapter's claims beside ours: its own p-values under Holm, and the sentences that say what they mean."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ragkit.evaluation import Evaluation
from ragkit.report import Report, Wanted
from ragkit.statistics import (
    ALPHA,
    DIFFERENCE,
    INCONCLUSIVE,
    NEITHER,
    NO_DIFFERENCE,
    VERDICTS,
    counts_test,
    holm,
    wilson,
)
from ragkit.teach.course import chapter
from ragkit.teach.language import _, number, say
from ragkit.teach.lesson import formats, paired
from ragkit.threshold import DEFAULT_CUT, SweepRow

__all__ = [
    "beside",
    "chapter_rerank",
    "claim_kinds",
    "guessing",
    "guessing_sentence",
    "header_confronted",
    "own_holm",
    "recall20_intervals",
    "sign_tests_recomputed",
    "survivors",
    "verdict_counts",
    "verdict_words",
]


def own_holm() -> dict[Wanted, tuple[float, float]]:
    """Each chapter comparison's raw p (F vs E's from its counts) and its Holm p over the chapter's own family."""
    keys = list(chapter.FINDINGS)
    raw = [_p(key) for key in keys]
    return {key: (p, adjusted) for key, p, adjusted in zip(keys, raw, holm(raw))}


def _p(key: Wanted) -> float:
    p = chapter.FINDINGS[key].p
    assert p is not None, "every counted finding carries a p (given, or computed from its counts)"
    return p


def beside(rep: Report) -> pd.DataFrame:
    """One row per chapter comparison: its counts, raw p and Holm p, its claim, ours at both levels, the verdict."""
    corrected = own_holm()
    rows = []
    for key, (p, p_holm) in corrected.items():
        line = rep.line(*key)
        finding = chapter.FINDINGS[key]
        rows.append(
            {
                "comparison": f"{line.a} vs {line.b}",
                "metric": line.metric,
                "chapter": "+{}/-{}".format(*chapter.COMPARISONS[key][:2]),
                "chapter p": p,
                "chapter Holm p": p_holm,
                "claims": verdict_words().get(finding.claim, finding.claim),
                "ours, queries": f"+{line.query.test.wins}/-{line.query.test.losses}",
                "queries Holm p": line.query.p_holm,
                "ours, needles": f"+{line.needle.test.wins}/-{line.needle.test.losses}",
                "needles Holm p": line.needle.p_holm,
                "verdict": paired.verdict_text(line.verdict) if line.verdict else line.verdict,
            }
        )
    return formats.Frame(rows)


def survivors(alpha: float = ALPHA) -> str:
    """In words: how many of the chapter's results survive Holm over its own p-values, against its "three survive"."""
    corrected = own_holm()
    raw = [key for key, (p, _) in corrected.items() if p < alpha]
    kept = [key for key, (_, p_holm) in corrected.items() if p_holm < alpha]
    fallen = [key for key in raw if key not in kept]
    n = len(corrected)
    listed = "; ".join(say("{name}, p = {p:.3g}", name=_name(k), p=corrected[k][0]) for k in raw) or _("none")
    text = say(
        "Of the chapter's **{n}** paired comparisons, **{raw}** have a raw p below {alpha} ({listed}). ",
        n=n,
        raw=len(raw),
        alpha=alpha,
        listed=listed,
    )
    text += (
        say("Under Holm over its own {n} p-values, **{kept}** survives", n=n, kept=len(kept))
        if len(kept) == 1
        else say("Under Holm over its own {n} p-values, **{kept}** survive", n=n, kept=len(kept))
    )
    if kept:
        text += " (" + "; ".join(say("{name}, Holm p = {p:.3g}", name=_name(k), p=corrected[k][1]) for k in kept) + ")"
    if fallen:
        text += (
            ", "
            + _("and")
            + " "
            + "; ".join(say("{name} becomes Holm p = {p:.3g}", name=_name(k), p=corrected[k][1]) for k in fallen)
        )
    text += ". "
    if len(raw) < 3:
        text += say(
            "Even uncorrected, only {raw} of these {n} fall below {alpha}, so the chapter's \"three results "
            'survive" must count a result outside its listed comparisons (it does not say which). ',
            raw=len(raw),
            n=n,
            alpha=alpha,
        )
    if len(kept) >= 3:
        return text + _('The chapter\'s "three results survive" holds under its own correction.')
    if len(kept) == 1:
        return text + say(
            "Under its own correction, {kept} does: a reader who weighs all {n} comparisons at once may "
            "trust only that one. The others are not shown false, only not established.",
            kept=len(kept),
            n=n,
        )
    return text + say(
        "Under its own correction, {kept} do: a reader who weighs all {n} comparisons at once may trust "
        "only those. The others are not shown false, only not established.",
        kept=len(kept),
        n=n,
    )


def _name(key: Wanted) -> str:
    return say("{a} vs {b} at {metric}", a=key[0], b=key[1], metric=key[2])


def claim_kinds() -> dict[str, int]:
    """How many of the chapter's comparisons claim a difference, and how many claim none detectable."""
    kinds = [f.claim for f in chapter.FINDINGS.values()]
    return {kind: kinds.count(kind) for kind in dict.fromkeys([DIFFERENCE, *kinds])}


def verdict_words() -> dict[str, str]:
    """The claims and verdicts of statistics (DIFFERENCE, VERDICTS, INCONCLUSIVE) in the notebook's language."""
    return {
        DIFFERENCE: _("a difference"),
        NO_DIFFERENCE: _("no detectable difference"),
        "consistent": _("consistent"),
        "contradicts": _("contradicts"),
        "inconclusive": _("inconclusive"),
        "differs": _("differs"),
        INCONCLUSIVE: _("this data cannot tell either way, so the published finding is neither confirmed nor refuted"),
    }


def verdict_counts(rep: Report, needles: int) -> str:
    """In words: what the chapter's comparisons claim, and how many of each verdict this report gives them."""
    kinds = claim_kinds()
    words = verdict_words()
    said = [line.verdict for line in rep.judged if line.verdict is not None]
    counts = {word: sum(v.kind == word for v in said) for word in VERDICTS}
    neither = sum(v.kind == "consistent" and v.qualifier == NEITHER for v in said)
    return (
        say(
            "Of the chapter's **{judged}** comparisons judged here, **{differ}** claim {difference} and **{none}** "
            "claim {no_difference}. Here: ",
            judged=len(said),
            differ=kinds.get(DIFFERENCE, 0),
            difference=words[DIFFERENCE],
            none=kinds.get(NO_DIFFERENCE, 0),
            no_difference=words[NO_DIFFERENCE],
        )
        + ", ".join(
            say("**{n}** {verdict}", n=counts[w], verdict=words[w])
            + (
                say(" ({neither} of them because neither detects a difference)", neither=neither)
                if w == "consistent" and neither
                else ""
            )
            for w in VERDICTS
        )
        + say(
            ". *Inconclusive*, with {needles} needles, means {inconclusive}.",
            needles=needles,
            inconclusive=words[INCONCLUSIVE],
        )
    )


def guessing(rows: Sequence[SweepRow], penalty: float = 1.0) -> pd.DataFrame:
    """The 2025 argument on our own sweep: each cut's score under binary accuracy and with a wrong answer penalised.

    Every query, in-domain and out-of-domain, is one exam question. The generator is taken to be
    right exactly when the needle reached its prompt and wrong on every other answer (a bluff on
    an out-of-domain query is wrong); a refusal scores 0 under both rules. Binary accuracy gives
    a wrong answer 0 too, so answering never costs; the penalised score takes ``penalty`` off.
    """
    out = []
    for r in rows:
        n = r.in_domain + r.out_of_domain
        right, wrong = r.answered_with_needle, r.answered_without_needle + r.bluffs
        # the cut is written as the kernel's language writes it, as the table's style writes the columns beside it
        out.append(
            {
                _("cut"): _("none") if r.cut is None else number(r.cut, ".3f"),
                _("counted right (needle in prompt)"): right,
                _("counted wrong"): wrong,
                _("abstained"): n - right - wrong,
                _("binary accuracy"): right / n,
                say("score, wrong = -{penalty:g}", penalty=penalty): (right - penalty * wrong) / n,
            }
        )
    table = formats.Frame(out)
    table.attrs["penalty"] = penalty  # the sentence below reads the value, not the heading it is written into
    return table


def guessing_sentence(table: pd.DataFrame) -> str:
    """In words: which policy binary accuracy rewards, and which one a penalty for wrong answers rewards (``table`` is
    ``guessing``'s: its last column the penalised score, its penalty kept with it)."""
    penalised, binary, cut = table.columns[-1], _("binary accuracy"), _("cut")
    best_binary = table.loc[table[binary].idxmax()]
    best_penalised = table.loc[table[penalised].idxmax()]
    always = table.iloc[0]
    # a tighter cut ties answering everything when it refuses only queries whose prompt lacked the needle
    tied = [c for c, s in zip(table[cut].iloc[1:], table[binary].iloc[1:]) if abs(s - always[binary]) < 1e-12]
    # the default cut, where it ties, is the one a reader knows: named first
    tied.sort(key=lambda c: c != number(DEFAULT_CUT, ".3f"))

    if always[binary] >= best_binary[binary] - 1e-12:
        text = say(
            "Under binary accuracy, answering everything ({always}) scores **{score:.3f}**, and no tighter cut scores "
            "more",
            always=formats.cut_named(always[cut]),
            score=always[binary],
        )
        if len(tied) == 1:
            text += say(
                " ({first} ties it: it refuses only queries whose prompt lacked the needle)",
                first=formats.cut_named(tied[0]),
            )
        elif tied:
            text += say(
                " (**{tied}** cuts tie it, {first} among them: they refuse only queries whose prompt lacked the "
                "needle)",
                tied=len(tied),
                first=formats.cut_named(tied[0]),
            )
        text += _(
            ". Abstaining never earns a point and a wrong answer never loses one, so the rule rewards the system "
            "that always answers, as it must under this scoring: the chapter's 2025 argument, on our own numbers, "
            "which show how large the gap is, not whether there is one. "
        )
    else:  # out of reach while a cut only takes answers away: kept for a scoring that changes
        text = say(
            "Under binary accuracy, answering everything ({always}) scores **{score:.3f}**, and **{best}** scores "
            "more ({best_score:.3f}): here a tighter cut does better even under binary accuracy. ",
            always=formats.cut_named(always[cut]),
            score=always[binary],
            best=formats.cut_named(best_binary[cut]),
            best_score=best_binary[binary],
        )
    text += say(
        "Take {penalty:g} point off per wrong answer and the best setting is **{best}** "
        "({best_score:.3f} against {always_score:.3f} for answering everything): ",
        penalty=table.attrs["penalty"],
        best=formats.cut_named(best_penalised[cut]),
        best_score=best_penalised[penalised],
        always_score=always[penalised],
    ) + (
        _("once a bluff costs something, abstaining pays.")
        if best_penalised[cut] != always[cut]
        else _("even then answering everything comes out best on this corpus.")
    )
    return text


def recall20_intervals(ev: Evaluation) -> pd.DataFrame:
    """The chapter's Hit@20 counts and printed Wilson intervals, Wilson recomputed on its counts, and ours (dense)."""
    ours = {f.strategy: f for f in ev.figures() if f.retriever == "dense" and f.metric == "Hit@20"}
    from ragkit.teach.lesson.tables import interval

    def bounds(low: float, high: float) -> str:
        return say("[{low:.3f}, {high:.3f}]", low=low, high=high)

    return formats.Frame(
        [
            {
                "strategy": x,
                "chapter hits": "{}/{}".format(*chapter.RECALL20[x]),
                "chapter's interval": bounds(*chapter.WILSON20[x]),
                "wilson on the chapter's counts": bounds(*wilson(*chapter.RECALL20[x])),
                "ours": interval(ours[x].value, ours[x].low, ours[x].high),
            }
            for x in chapter.WILSON20
        ]
    )


def sign_tests_recomputed() -> pd.DataFrame:
    """Each chapter comparison's counts, its p (reported, or recomputed where it gave none) and ours on its counts."""
    rows = []
    for (a, b, m), (w, lost, p) in chapter.COMPARISONS.items():
        recomputed = counts_test(w, lost).p
        rows.append(
            {
                "comparison": f"{a} vs {b}",
                "metric": m,
                "chapter": f"+{w}/-{lost}",
                "chapter p": f"{p if p is not None else recomputed:.3g}",
                "chapter p reported": p is not None,
                "recomputed": f"{recomputed:.3g}",
            }
        )
    return formats.Frame(rows)


def header_confronted(ev: Evaluation) -> pd.DataFrame:
    """E against A without A's destroyed needles, and E against C (the header alone), at Hit@20 and both levels."""
    looks = [
        (
            _("E vs A, A's destroyed needles left out"),
            ev.compare("E/dense", "A/dense", "Hit@20", level, drop=ev.destroyed["A"]),
        )
        for level in ("query", "needle")
    ]
    looks += [
        (_("E vs C: the header alone"), ev.compare("E/dense", "C/dense", "Hit@20", level))
        for level in ("query", "needle")
    ]
    levels = {"query": _("query"), "needle": _("needle")}
    return formats.Frame(
        [
            {
                "comparison": name,
                "level": levels[c.level],
                "wins": c.test.wins,
                "losses": c.test.losses,
                "p": f"{c.test.p:.3g}",
            }
            for name, c in looks
        ]
    )


def chapter_rerank() -> pd.DataFrame:
    """The chapter's reranking figures (its corpus, not measured here): dense, and hybrid with its cross-encoder."""
    return formats.Frame(
        {
            m: {
                _("the chapter: dense"): number(chapter.RERANK[m][0], ".3f"),
                _("the chapter: hybrid + cross-encoder"): number(chapter.RERANK[m][1], ".3f"),
            }
            for m in chapter.RERANK
        }
    ).rename_axis(_("the chapter's figures (its corpus; not measured here)"))
