"""What notebook 07 says of the generator it measures: its answers, the two halves, the places in a long prompt."""

from __future__ import annotations

from collections.abc import Sequence

from IPython.display import Markdown

from ragkit import faithfulness
from ragkit.citations import RenderedAnswer
from ragkit.faithfulness import GradedAnswer, Measurement, Opening
from ragkit.generation import LOOP_TOKENS, SMOLLM2, Generation
from ragkit.statistics import ALPHA, SignTest, smallest_p
from ragkit.teach.course import chapter
from ragkit.teach.language import _, say
from ragkit.teach.lesson.formats import noun
from ragkit.threshold import DEFAULT_CUT

__all__ = [
    "calls_saved",
    "changed_prompt",
    "generated_markers",
    "generator_halves",
    "invented_ids",
    "needle_positions",
    "no_generator",
    "recall_rule",
    "small_model",
    "written_ranges",
]


def no_generator() -> Markdown:
    """What a generated section shows on a machine without the generator: what is missing and what to run."""
    return Markdown(
        say(
            "*No generator on this machine, so nothing here was generated: run {install}, then rerun this "
            "notebook. Every figure above that needs no model is still measured.*",
            install=SMOLLM2.install,
        )
    )


def generated_markers(m: Opening | Measurement | None, rendered: RenderedAnswer) -> Markdown:
    """Who wrote the opening answer, how it ended, and its [n] markers: valid ones linked by the server, invalid ones
    counted."""
    if m is None:
        return no_generator()
    found, made = m.opening_markers, m.opening_generation
    n = made.new_tokens
    if made.stopped == "end":
        ended = say("ended by itself after **{n}** tokens", n=n)
    elif made.stopped == "repeat":
        ended = say("was ended by the repetition stop, which kept its first **{n}** tokens and dropped the repeat", n=n)
    elif made.stopped == "time":
        ended = say("was stopped by the time bound after **{n}** tokens", n=n)
    else:
        ended = say("used all **{n}** new tokens it may write", n=n)
    if found.valid or found.invalid:
        markers = say(
            "Markers that name a source: **{valid}** (the server turns each into a link, as in *Turning [n] into "
            "links*); markers that name no source: **{invalid}** (counted, never linked: `render_links` flagged "
            "{flagged}).",
            valid=len(found.valid),
            invalid=len(found.invalid),
            flagged=list(rendered.unknown) or _("none"),
        )
    else:
        markers = _(
            "It wrote no [n] marker at all, although the prompt asks for one on every claim: an answer that cites "
            "nothing is a finding too, and nothing here can be checked against a source."
        )
    return Markdown(
        say(
            "Written by **{model}**, greedy, from a prompt of **{prompt_tokens}** tokens as the model's own tokenizer "
            "counts them, with at most **{tokens}** new tokens. The repetition stop ends an answer as soon as its last "
            "{loop} or more tokens repeat the stretch just before them (a stretch of {loop} or more tokens written "
            "twice in a row, or a shorter one over and over; a run of {run} identical tokens counts, such as a "
            "number's zeros), and drops the repeat. This answer {ended}. {markers}",
            model=m.model,
            prompt_tokens=m.opening.prompt_tokens,
            tokens=faithfulness.ANSWER_TOKENS,
            loop=LOOP_TOKENS,
            run=LOOP_TOKENS + 1,
            ended=ended,
            markers=markers,
        )
    )


def written_ranges(model: str, written: int) -> Markdown:
    """How many file names with a range the generator wrote when asked for its source's."""
    if written == 0:
        return Markdown(
            say(
                "Asked for its file and range, **{model}** wrote **none**: the table holds the fixed examples only.",
                model=model,
            )
        )
    return Markdown(
        say(
            "Asked for its file and range, **{model}** wrote **{written}**: the table checks each below "
            "the fixed examples.",
            model=model,
            written=written,
        )
    )


def recall_rule() -> Markdown:
    """The rule that grades an answer against its needle, with its threshold, stated before any figure."""
    return Markdown(
        say(
            "**The rule.** An answer *recalls its needle* when it contains at least **{share:.0%}** of the needle's "
            "content "
            "words that the query (question or ticket) does not already contain (lower-cased, accents folded, short "
            "function words left out). You can check it by hand: underline those words in the needle, then look for "
            "them "
            "in the answer. "
            "The threshold was written down before any answer was read, and is never tuned to the results. The "
            "rule is lexical: it counts words, so it cannot see a paraphrase (a right answer in other words counts "
            "as a miss), an answer the model knew from memory without reading its source (it counts as recalled all "
            "the same), or a wrong claim that repeats the needle's words (it counts as recalled). Whether the cited "
            "source supports the answer takes a judge of meaning: ALCE (Gao et al. 2023) scores citation recall "
            "and precision with an entailment (NLI) model.",
            share=faithfulness.RECALL_SHARE,
        )
    )


def generator_halves(m: Measurement | None, queries: int) -> Markdown:
    """The 2x2 in words: the gate's refusals, then the needle-recall rate with and without the needle in the prompt."""
    if m is None:
        return no_generator()
    h, cited = m.halves, sum(t.cites_needle for t in m.trials if t.needle_in_prompt)
    inside, outside = h.with_needle, h.without_needle
    if not inside.n:
        lesson = _("No sampled prompt held its needle, so this sample says nothing about the generator's step.")
    elif outside.n and inside.share <= outside.share:
        lesson = _(
            "Having the needle in the prompt did not make an answer that recalls its words more likely in this "
            "sample: by this rule, nothing here shows the model reading its needle rather than answering without it."
        )
    elif inside.share < 0.5:
        lesson = _(
            "Even with the needle in its prompt the model recalled the needle's words in less than half of its "
            "answers: retrieval supplied the needle, and whether the other answers use it in other words, this rule "
            "cannot tell."
        )
    else:
        lesson = _(
            "With the needle in its prompt the model recalled the needle's words in at least half of its answers; "
            "the prompts without it are where retrieval fell short."
        )
    return Markdown(
        say(
            "A fixed sample of **{n}** of the {queries} needle queries (seed {seed}, either phrasing), dense retrieval "
            "on "
            "E at cut {cut}, four sources at most, answers of at most {tokens} new tokens by **{model}**. The gate "
            "refused "
            "**{refused}**. Prompts holding the needle: **{inside_n}**, of which **{inside_k}** recalled it in the "
            "answer ({inside_low:.2f} to {inside_high:.2f}); prompts lacking it: **{outside_n}**, of which "
            "**{outside_k}** ({outside_low:.2f} to {outside_high:.2f}). Answers that cite the source holding their "
            "needle: **{cited}** of {inside_n}. {lesson} {can_show}",
            n=len(m.sample),
            queries=queries,
            seed=faithfulness.SAMPLE_SEED,
            cut=m.cut,
            tokens=faithfulness.ANSWER_TOKENS,
            model=m.model,
            refused=h.refused,
            inside_n=inside.n,
            inside_k=inside.k,
            inside_low=inside.low,
            inside_high=inside.high,
            outside_n=outside.n,
            outside_k=outside.k,
            outside_low=outside.low,
            outside_high=outside.high,
            cited=cited,
            lesson=lesson,
            can_show=_unpaired_can_show(inside.n, outside.n, outside.share),
        )
        + " "
        + _stops(m)
    )


def _stops(m: Measurement) -> str:
    """Which of the notebook's generated answers the repetition stop ended, and what that can change."""
    sampled = [t.generation for t in m.trials]
    bluffs = list(m.gate.answers)
    lost = [t.generation for p in faithfulness.POSITIONS for t in m.lost.trials[p]]
    papers = [i.generation for i in m.invented]
    opening = [m.opening_generation]

    def ended(made: list[Generation]) -> int:
        return sum(g.stopped == "repeat" for g in made)

    return say(
        "Of the **{total}** answers behind 07's generation figures, above and below, the repetition stop ended "
        "**{stopped}** (the sample here: {sampled} of {n_sampled}; out-of-domain queries the gate let through: "
        "{bluffs} of {n_bluffs}; lost in the middle: {lost} of {n_lost}; papers asked for: {papers} of {n_papers}; "
        "the opening answer: {opening} of 1). The repeat it drops holds no word the answer does not already hold, "
        "except inside a word: a number's nine zeros are cut to one, so the number kept is another; and a stopped "
        "answer never writes what might "
        "have followed its loop, so it is graded on what it kept. A count of every occurrence (markers, well-formed "
        "identifiers) also loses the repeats.",
        total=len(sampled) + len(bluffs) + len(lost) + len(papers) + 1,
        stopped=ended(sampled + bluffs + lost + papers + opening),
        sampled=ended(sampled),
        n_sampled=len(sampled),
        bluffs=ended(bluffs),
        n_bluffs=len(bluffs),
        lost=ended(lost),
        n_lost=len(lost),
        papers=ended(papers),
        n_papers=len(papers),
        opening=ended(opening),
    )


def calls_saved(m: Measurement | None, out_of_domain: int) -> Markdown:
    """The answers refused and answered out-of-domain queries asked the generator for, from its own counter."""
    if m is None:
        return no_generator()
    g = m.gate
    return Markdown(
        say(
            "All **{n}** out-of-domain queries through `answer()` at cut {cut}, with the generator: **{refused}** "
            "refused, and the generator's count of the answers it was asked for (`generator.requests`, read before and "
            "after each query) went up **{calls_refused}** times for them. That count is the gate's saving, counted by "
            "the code (a refusal returns before any prompt is built). The **{answered}** the gate let through (bluffs) "
            "asked for **{calls_answered}** answers; an answer already in the generator's cache is read back, not "
            "computed again, but it is still asked for and counted.",
            n=out_of_domain,
            cut=DEFAULT_CUT,
            refused=g.refused,
            calls_refused=g.calls_refused,
            answered=g.answered,
            calls_answered=g.calls_answered,
        )
    )


def needle_positions(m: Measurement | None) -> Markdown:
    """Needles recalled by their place in a long prompt, the two paired tests, and a verdict no stronger."""
    if m is None:
        return no_generator()
    lost, model = m.lost, m.model
    rates = {p: lost.rate(p) for p in faithfulness.POSITIONS}
    verdict = _paired_can_show(len(lost.question_ids))
    if not any(r.k for r in rates.values()):
        verdict += " " + _(
            "No answer recalled its needle at any place, so where the needle sits cannot show here: without "
            "a recalled needle there is no discordant pair to test."
        )
    return Markdown(
        say(
            "**{n}** needle questions (a fixed sample, seed {seed}), each asked three times by **{model}** with the "
            "same "
            "{chunks} sources: the needle's chunk and the {others} chunks dense retrieval ranks highest without the "
            "needle, in rank order, no gate. Needles recalled: first **{first}** of {n}, middle **{middle}**, last "
            "**{last}**. First against the middle: {first_test}. Last against the middle: {last_test}. {verdict}",
            n=len(lost.question_ids),
            seed=faithfulness.SAMPLE_SEED,
            model=model,
            chunks=lost.chunks,
            others=lost.chunks - 1,
            first=rates["first"].k,
            middle=rates["middle"].k,
            last=rates["last"].k,
            first_test=_position(lost.test("first"), _("first")),
            last_test=_position(lost.test("last"), _("last")),
            verdict=verdict,
        )
    )


def _paired_can_show(needles: int) -> str:
    """What a paired sign test on this many needles can show, computed: its smallest p and the smallest difference
    it detects with 80% power, or that it detects none and how many needles a 20-point drop would take."""
    share = faithfulness.paired_detectable(needles)
    if share is None:
        return say(
            "With **{n}** needles the sign test can reach p no smaller than **{smallest:.3g}**, not below {alpha}: "
            "this sample cannot detect a difference of any size, so it demonstrates the method and shows nothing "
            "about where the needle sits. Detecting a drop of {drop} percentage points with {power:.0%} power would "
            "take at least **{needed}** needles, even if every discordant pair went the same way.",
            n=needles,
            smallest=smallest_p(needles),
            alpha=ALPHA,
            drop=round(faithfulness.DROP * 100),
            power=faithfulness.POWER,
            needed=faithfulness.needles_for(),
        )
    return say(
        "With **{n}** needles the sign test can reach p no smaller than **{smallest:.3g}**; with {power:.0%} power "
        "it detects only a difference of at least **{points}** points of the needles (every discordant pair the "
        "same way). No detected difference is not the same as no difference.",
        n=needles,
        smallest=smallest_p(needles),
        power=faithfulness.POWER,
        points=round(share * 100),
    )


def _unpaired_can_show(with_needle: int, without: int, base: float) -> str:
    """What comparing two rates on groups of these sizes can show, computed: Fisher's exact test's smallest p and
    the smallest gap above ``base`` it detects with 80% power."""
    gap = faithfulness.unpaired_detectable(with_needle, without, base)
    smallest = faithfulness.fisher_smallest_p(with_needle, without)
    if gap is None:
        return say(
            "What this sample can show: Fisher's exact test on groups of {a} and {b} prompts can reach p no smaller "
            "than **{smallest:.3g}**, and no gap between the two rates is detected with {power:.0%} power.",
            a=with_needle,
            b=without,
            smallest=smallest,
            power=faithfulness.POWER,
        )
    return say(
        "What this sample can show: Fisher's exact test on groups of {a} and {b} prompts can reach p no smaller than "
        "**{smallest:.3g}**, and with {power:.0%} power detects only a rate **{points}** percentage points or more "
        "above the rate without the needle.",
        a=with_needle,
        b=without,
        smallest=smallest,
        power=faithfulness.POWER,
        points=round(gap * 100),
    )


def _position(test: SignTest, place: str, alpha: float = ALPHA) -> str:
    """What one paired test of a place against the middle says, no stronger than it is, in the kernel's language."""
    pairs = test.wins + test.losses
    if pairs == 0:
        return say(
            "no needle was recalled {place} and not in the middle or the other way round, so this sample "
            "cannot tell the two apart",
            place=place,
        )
    if test.p < alpha:
        ahead = place if test.wins > test.losses else _("the middle")
        return say(
            "{ahead} ahead (+{wins}/-{losses}, p = {p:.3g}): a difference this sample detects",
            ahead=ahead,
            wins=test.wins,
            losses=test.losses,
            p=test.p,
        )
    return say(
        "no difference detected (+{wins}/-{losses}, p = {p:.3g}); {pairs} discordant {pairs_noun} can give a "
        "p no smaller than {smallest:.3g}",
        wins=test.wins,
        losses=test.losses,
        p=test.p,
        pairs=pairs,
        pairs_noun=_("pair") if pairs == 1 else _("pairs"),
        smallest=smallest_p(pairs),
    )


def invented_ids(m: Measurement | None) -> Markdown:
    """The well-formed arXiv identifiers the model wrote without sources, and why well-formed is not real."""
    if m is None:
        return no_generator()
    distinct = {i for x in m.invented for i in x.identifiers}
    return Markdown(
        say(
            "Asked, with no sources, for three papers with their arXiv identifiers on each of **{topics}** "
            "{topics_noun}, **{model}** wrote **{ids}** well-formed {ids_noun} (**{distinct}** distinct) in its "
            "**{topics}** {answers_noun}. Well-formed is not real, and real is not right: whether any of them exists, "
            "and is the paper claimed, needs the arXiv API, which this offline notebook never calls. Either way "
            "nothing in the answer tells you which kind you have, which is why the model writes `[n]` and the server "
            "writes the link.",
            topics=len(m.invented),
            topics_noun=noun(len(m.invented), _("topic"), _("topics")),
            model=m.model,
            ids=m.well_formed,
            ids_noun=noun(m.well_formed, _("identifier"), _("identifiers")),
            distinct=len(distinct),
            answers_noun=noun(len(m.invented), _("answer"), _("answers")),
        )
    )


def small_model(m: Measurement | None) -> Markdown:
    """What a 135M generator can and cannot show here, and what the chapter reports of its Qwen2.5-0.5B."""
    if m is None:
        return no_generator()
    q = chapter.INVENTED_REFERENCES
    return Markdown(
        say(
            "The generator here, **{model}**, is there to show what a generator does with its sources, not to answer "
            "well: "
            "the figures above are this model's, measured, and say nothing about what RAG does with a stronger one. "
            "The "
            "chapter's generator, {chapter_model}, is reported on two things only: a **{tokens}**-token opening "
            "prompt, "
            "and **{well_formed}** well-formed identifiers of which **{real}** were real papers and **{right}** the "
            "paper "
            "claimed. The chapter gives no needle-recall rate and no lost-in-the-middle figure for it, so none is "
            "shown here; with it installed (`make models`), "
            '`ragkit.generation.Generator("Qwen2.5-0.5B-Instruct")` runs the same measurements.',
            model=m.model,
            chapter_model=q["model"],
            tokens=chapter.PROMPT_TOKENS,
            well_formed=q["well_formed"],
            real=q["real"],
            right=q["right"],
        )
    )


def changed_prompt(mine: Sequence[GradedAnswer], refused: int, base: Measurement) -> Markdown:
    """Your prompt's 2x2 figures beside the chapter's prompt's, judged by the same rule on the same queries."""
    yours, theirs = faithfulness.count_two_halves(mine, refused), base.halves
    if [t.text for t in mine] == [t.text for t in base.trials]:
        verdict = _(
            "The same answers: as given, the cell builds the chapter's prompts, so its answers were read back "
            "from the cache. Change the order or the instruction and run it again."
        )
    elif yours == theirs:
        verdict = _(
            "The answers changed, the counts did not: by this rule your prompt did neither better nor worse on this "
            "sample."
        )
    else:
        verdict = _(
            "The figures moved: the same queries, the same rule, another prompt. On a sample this small, a "
            "move of one or two answers is within the noise."
        )
    return Markdown(
        say(
            "Your prompt: needle recalled **{mine_in}** of {mine_in_n} with the needle in the prompt and "
            "**{mine_out}** of {mine_out_n} without it; the chapter's prompt: **{base_in}** of {base_in_n} and "
            "**{base_out}** of {base_out_n}. {verdict}",
            mine_in=yours.with_needle.k,
            mine_in_n=yours.with_needle.n,
            mine_out=yours.without_needle.k,
            mine_out_n=yours.without_needle.n,
            base_in=theirs.with_needle.k,
            base_in_n=theirs.with_needle.n,
            base_out=theirs.without_needle.k,
            base_out_n=theirs.without_needle.n,
            verdict=verdict,
        )
    )
