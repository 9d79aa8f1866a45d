"""What notebook 03b-tuning says from its results: one narrator per cell of computed prose (its chart, table and
knowledge check are ``ragkit.teach.lesson.held_out``)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import cast

from IPython.display import Markdown

from ragkit.statistics import ALPHA
from ragkit.teach import language
from ragkit.teach.language import _, say
from ragkit.teach.lesson.settings import setting_name, setting_value
from ragkit.tuning import SPLIT_SEED, Study, Sweeps, Tuning, halves

__all__ = [
    "gain_shrinks",
    "halves_agree",
    "held_out_verdicts",
    "needle_halves",
    "recut_corpus",
    "second_sweep",
    "sweep_cost",
    "swept_values",
]


def _seconds(seconds: float) -> str:
    """A duration as people read it: milliseconds under a second, seconds above."""
    if seconds < 1:
        return say("{ms:,.0f} ms", ms=seconds * 1000)
    return say("{s:,.1f} s", s=seconds)


def _names(items: list[str]) -> str:
    return ", ".join(items[:-1]) + (say(" and {last}", last=items[-1]) if len(items) > 1 else items[-1])


def needle_halves(sweeps: Sweeps, seed: int = SPLIT_SEED) -> Markdown:
    """How the needles were split: how many on each side, with how many queries, and the seed."""
    needles = next(iter(sweeps.settings[0].results.values())).needle_ids
    tune_half, held = halves(needles, seed)
    return Markdown(
        say(
            "The **{needles}** needles, split with seed **{seed}**: **{tune}** on the tuning half (**{tune_queries}** "
            "queries), **{held}** held out (**{held_queries}** queries). Both phrasings of a needle sit on the same "
            "side.",
            needles=len(set(needles)),
            seed=seed,
            tune=len(tune_half),
            held=len(held),
            tune_queries=sum(n in tune_half for n in needles),
            held_queries=sum(n in held for n in needles),
        )
    )


def sweep_cost(sweeps: Sweeps) -> Markdown:
    """What the sweeps cost this time: computed (and stored, or why not), or read back from the result store."""
    if sweeps.cached:
        return Markdown(
            say(
                "Read back from the result store in **{read}**; computing them took **{seconds}** the first time (the "
                "new cuts' vectors are in the vector cache since then, too).",
                read=_seconds(sweeps.read_seconds),
                seconds=_seconds(sweeps.seconds),
            )
        )
    if sweeps.saved:
        return Markdown(
            say(
                "Computed in **{seconds}**, and not stored: {why}. The next run computes them again.",
                seconds=_seconds(sweeps.seconds),
                why=sweeps.saved,
            )
        )
    return Markdown(
        say(
            "Computed in **{seconds}** (every new cut embedded once, through the vector cache) and stored under their "
            "stamp: the next run reads them back.",
            seconds=_seconds(sweeps.seconds),
        )
    )


def second_sweep(again: Sweeps) -> Markdown:
    """The same call once more: what it took, and where the sweeps came from."""
    where = _("read back from the result store") if again.cached else _("computed again (nothing was stored)")
    return Markdown(say("The same call again: **{read}**, {where}.", read=_seconds(again.read_seconds), where=where))


def _values(values: list[Hashable]) -> str:
    """Values swept, listed; pairs as the grid they come from (k1 of ... times b of ...) when they make one."""
    pairs = [v for v in values if isinstance(v, tuple)]
    if values and len(pairs) == len(values):
        firsts, seconds = list(dict.fromkeys(v[0] for v in pairs)), list(dict.fromkeys(v[1] for v in pairs))
        if len(pairs) == len(firsts) * len(seconds):
            return say(
                "k1 of {k1s} with b of {bs}, every pair ({pairs})",
                k1s=language.listed(setting_value(v) for v in firsts),
                bs=language.listed(setting_value(v) for v in seconds),
                pairs=len(values),
            )
    return language.listed(setting_value(v) for v in values)


def swept_values(sweeps: Sweeps) -> Markdown:
    """Each setting's values, its default marked: what the sweeps tried."""
    lines = [
        say(
            "- **{setting}**: {values} (the course's value: **{default}**).",
            setting=setting_name(s.name),
            values=_values(list(s.results)),
            default=setting_value(s.default),
        )
        for s in sweeps.settings
    ]
    runs = sum(len(s.results) for s in sweeps.settings)
    return Markdown(
        say(
            "**{runs}** evaluations of the same **{queries}** queries in all:",
            runs=runs,
            queries=len(next(iter(sweeps.settings[0].results.values())).query_ids),
        )
        + "\n\n"
        + "\n".join(lines)
    )


def recut_corpus(sweeps: Sweeps) -> Markdown:
    """What each chunk size and overlap made of the corpus: chunks, chunks over the window, needles destroyed."""
    lines = []
    for setting in (sweeps["chunk size"], sweeps["overlap"]):
        name = setting.name
        for value, c in setting.chunked.items():
            lost = (
                say("destroyed **{n}** needles ({ids})", n=len(c.destroyed), ids=", ".join(c.destroyed))
                if c.destroyed
                else _("destroyed no needle")
            )
            lines.append(
                say(
                    "- {setting} **{value}**: **{chunks:,}** chunks, **{over:,}** of them over the "
                    "encoder's window; {lost}.",
                    setting=setting_name(name),
                    value=setting_value(value),
                    chunks=c.chunks,
                    over=c.over_window,
                    lost=lost,
                )
            )
    sizes = sweeps["chunk size"].chunked
    longest = max(cast("list[int]", list(sizes)))
    over = sizes[longest].over_window
    note = (
        say(
            "At **{size:,}** characters, **{over:,}** of **{chunks:,}** chunks run past the encoder's **{window}** "
            "word pieces: the model reads their beginning only, so a bigger chunk is not a bigger view.",
            size=longest,
            over=over,
            chunks=sizes[longest].chunks,
            window=sweeps.window,
        )
        if over
        else say("No chunk size tried here runs past the encoder's **{window}** word pieces.", window=sweeps.window)
    )
    return Markdown("\n".join(lines) + "\n\n" + note)


def halves_agree(result: Study) -> Markdown:
    """For how many settings the held-out half would have chosen what the tuning half chose, and which."""
    agreed = [setting_name(name) for name in result.agreed]
    return Markdown(
        say(
            "The held-out half picks the same value as the tuning half for **{agreed}** of the **{n}** "
            "settings{which}.",
            agreed=len(agreed),
            n=len(result.tunings),
            which=say(" ({names})", names=_names(agreed)) if agreed else "",
        )
    )


def held_out_verdicts(result: Study) -> Markdown:
    """Per setting: what the tuning half chose, what the held-out half would have, and the held-out test with Holm."""
    lines = []
    for t in result.tunings:
        chosen, default = setting_value(t.chosen), setting_value(t.default)
        if t.chosen == t.default:
            choice = say("the tuning half kept the default **{default}**", default=default)
        else:
            choice = say(
                "the tuning half chose **{chosen}** over the default **{default}**", chosen=chosen, default=default
            )
        agrees = (
            _("the held-out half agrees")
            if not t.flattered
            else say("the held-out half would have chosen **{best}**", best=setting_value(t.held_best))
        )
        test = t.judged.test
        if t.chosen == t.default:
            judged = _("nothing to judge: the default against itself")
        else:
            judged = say(
                "on the held-out needles **{chosen}** against **{default}**: **+{wins}/-{losses}**, p = "
                "**{p:.3g}**, Holm p = **{holm:.3g}**",
                chosen=chosen,
                default=default,
                wins=test.wins,
                losses=test.losses,
                p=test.p,
                holm=t.judged.p_holm,
            )
        lines.append(
            say(
                "- **{setting}**: {choice}; {held}; {judged}.",
                setting=setting_name(t.parameter),
                choice=choice,
                held=agrees,
                judged=judged,
            )
        )
    losers = [t.parameter for t in result.tunings if t.loses]
    changed = [t for t in result.tunings if t.chosen != t.default]
    holding = [t for t in result.tunings if t.judged.p_holm is not None and t.judged.p_holm < ALPHA]
    better = [setting_name(t.parameter) for t in holding if t.judged.test.wins > t.judged.test.losses]
    worse = [setting_name(t.parameter) for t in holding if t.judged.test.wins < t.judged.test.losses]
    if losers:
        lose = say(
            "The tuning half's winner scores **below the default** on the held-out half for {names}: its win "
            "on the tuning half did not carry over.",
            names=_names(
                [
                    say(
                        "**{setting}** ({gain:+.3f} {metric})",
                        setting=setting_name(t.parameter),
                        gain=t.held_gain,
                        metric=result.metric,
                    )
                    for t in result.tunings
                    if t.loses
                ]
            ),
        )
    else:
        lose = say(
            "For none of the **{n}** settings does the tuning half's winner score below the default on the "
            "held-out half: this time the tuning did not backfire, though the held-out half disagreed on the "
            "best value for **{flattered}** of them.",
            n=len(result.tunings),
            flattered=sum(t.flattered for t in result.tunings),
        )
    holds = (
        say(
            "After Holm over the **{n}** held-out comparisons, **{found}** hold as a gain over the default: {names}.",
            n=len(result.tunings),
            found=len(better),
            names=_names(better),
        )
        if better
        else say(
            "After Holm over the **{n}** held-out comparisons, none holds as a gain: no setting changed on the "
            "tuning half is shown better than its default on the held-out half ({changed} of them changed at all).",
            n=len(result.tunings),
            changed=len(changed),
        )
    )
    if worse:
        holds += " " + say("Worse than the default beyond chance, after Holm: {names}.", names=_names(worse))
    return Markdown("\n".join(lines) + "\n\n" + lose + " " + holds)


def gain_shrinks(result: Study) -> Markdown:
    """What the chosen values gained over the defaults on the tuning half, and what is left of it held out."""
    changed = [t for t in result.tunings if t.chosen != t.default]
    if not changed:
        return Markdown(say("The tuning half kept every default, so there is no gain to check on the held-out half."))
    each = "; ".join(
        say(
            "{setting} **{tune:+.3f}** on the half that chose it, **{held:+.3f}** on the other ({fate})",
            setting=setting_name(t.parameter),
            tune=t.tune_gain,
            held=t.held_gain,
            fate=_fate(t),
        )
        for t in changed
    )
    return Markdown(
        say(
            "{metric} gained over the default by each of the **{n}** changed settings (each in its own pipeline, so "
            "the gains do not add up): {each}. A score reported on the queries a setting was chosen on includes the "
            "luck of choosing it.",
            metric=result.metric,
            n=len(changed),
            each=each,
        )
    )


def _fate(t: Tuning) -> str:
    """What became of a setting's tuning-half gain on the held-out half, in a few words."""
    if t.held_gain <= 0:
        return _("gone held out")
    return _("it shrank held out") if t.held_gain < t.tune_gain else _("as large or larger held out")
