"""What notebook 07-citations says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, cast

import pandas as pd
from IPython.display import Markdown

from ragkit import faithfulness
from ragkit.answer import WORD_PIECES, Answer, NoAnswer, TokenCounter
from ragkit.chunking import Chunk, Pathologies
from ragkit.citations import Citation, RenderedAnswer, text_fragment, verify
from ragkit.corpus import Corpus
from ragkit.statistics import ALPHA
from ragkit.teach.course import chapter
from ragkit.teach.language import _, say
from ragkit.teach.lesson import formats
from ragkit.teach.lesson.formats import noun
from ragkit.teach.lesson.tables import paired_test
from ragkit.teach.lesson.widgets import project_path
from ragkit.threshold import DEFAULT_CUT, SweepRow

__all__ = [
    "chapter_identifiers",
    "citations_verified",
    "gate_reply",
    "halves_at_cut",
    "identifier_checks",
    "more_chunks",
    "needle_in_prompt",
    "prompt_flaws",
    "prompt_length",
    "quote_or_text",
    "retrieval_bill",
    "shifted_range",
    "two_locators",
    "unknown_markers",
    "what_figures_say",
]


def prompt_flaws(found_here: Sequence[Mapping[str, Any]], flaws: Pathologies) -> Markdown:
    """How many of a prompt's sources show a flaw of the reference rule (``Pathologies.of``'s flaws, a tuple per
    source), beside the counts over the whole strategy."""
    bad = [row["source"] for row in found_here if row["what is wrong with it"]]
    return Markdown(
        say(
            "**{bad}** of the **{sources}** {sources_noun} in this prompt {show} a pathology ({which}). Across all of "
            "{strategy}: **{heading_only}** {heading_only_noun}, **{decimal_cuts}** {decimal_cuts_noun}, "
            "**{code_cuts}** inside code, **{mid_sentence}** {mid_sentence_noun}. A heading-only source takes one of "
            "the gate's slots and says nothing; half a number in a source is a number the model may quote wrong.",
            bad=len(bad),
            sources=len(found_here),
            sources_noun=noun(len(found_here), _("source"), _("sources")),
            show=noun(len(bad), _("shows"), _("show")),
            which=", ".join(bad) or _("none"),
            strategy=flaws.strategy,
            heading_only_noun=noun(len(flaws.heading_only), _("heading-only chunk"), _("heading-only chunks")),
            decimal_cuts_noun=noun(
                len(flaws.decimal_cuts), _("cut inside a decimal number"), _("cuts inside a decimal number")
            ),
            mid_sentence_noun=noun(
                len(flaws.mid_sentence), _("chunk starting mid-sentence"), _("chunks starting mid-sentence")
            ),
            heading_only=len(flaws.heading_only),
            decimal_cuts=len(flaws.decimal_cuts),
            code_cuts=len(flaws.code_cuts),
            mid_sentence=len(flaws.mid_sentence),
        )
    )


def quote_or_text(corpus: Corpus, citation: Citation, f: Chunk) -> Markdown:
    """What slicing the document says about an F chunk's header, overlap, ``content`` and ``text`` as a quote."""
    doc = corpus[f.doc_id].text
    quoting_text = verify(dataclasses.replace(citation, quote=f.text), corpus)
    return Markdown(
        say(
            "Header: `{header}`.  \nOverlap carried from the previous chunk: `{overlap}`.\n\n"
            "Is `content` found at its range in the document? **{content_found}**.  \n"
            "Does `text` occur anywhere in the document? **{text_found}**.  \n"
            "Does the overlap sit right before the content? **{overlap_before}**.  \n"
            "Would a citation quoting `text` verify? **{quoting_text}**.",
            header=f.header.strip(),
            overlap=f.overlap,
            content_found=formats.yes_or_no(doc[f.start : f.end] == f.content),
            text_found=formats.yes_or_no(f.text in doc),
            overlap_before=formats.yes_or_no(doc[f.start - len(f.overlap) : f.start] == f.overlap),
            quoting_text=formats.yes_or_no(quoting_text),
        )
    )


def two_locators(corpus: Corpus, citation: Citation) -> Markdown:
    """One citation's path, the locator the server verifies and the text fragment a browser follows."""
    return Markdown(
        say(
            "- Path in this project: `{path}`.\n"
            "- Locator the server verifies (RFC 5147): `{fragment}`: verifies **{verifies}**.\n"
            "- Text fragment a browser follows on an HTML page: `{text_fragment}`.",
            path=project_path(corpus[citation.document_id].path),
            fragment=citation.fragment,
            verifies=formats.truth(verify(citation, corpus)),
            text_fragment=text_fragment(citation.quote),
        )
    )


def citations_verified(checks: pd.Series) -> Markdown:
    """Whether every citation of an answer verifies against the corpus, and how many do."""
    return Markdown(
        say(
            "Every citation verifies: **{every}** ({verified} of {citations}).",
            every=_("yes") if checks.all() else _("no"),
            verified=int(checks.sum()),
            citations=len(checks),
        )
    )


def shifted_range(original: bool, shifted: bool) -> Markdown:
    """Whether a citation verifies at its own range and at the range shifted by one character."""
    return Markdown(
        say(
            "Original range verifies: **{original}**; shifted by one: **{shifted}**.",
            original=_("yes") if original else _("no"),
            shifted=_("yes") if shifted else _("no"),
        )
    )


def gate_reply(question: str, reply: Answer | NoAnswer) -> str:
    """One line for what the gate did with a question: the refusal (``NoAnswer``) or how many sources were kept."""
    if isinstance(reply, NoAnswer) and reply.cut is None:
        return say('NO ANSWER: no cut, and no chunk was retrieved for "{question}"', question=reply.question)
    if isinstance(reply, NoAnswer):
        return say(
            'NO ANSWER: nothing under cosine distance {cut:g} for "{question}"', cut=reply.cut, question=reply.question
        )
    n = len(reply.citations)
    return say(
        "ANSWERED with {n} {sources}: {question}", n=n, sources=noun(n, _("source"), _("sources")), question=question
    )


def _refusal_words() -> tuple[str, ...]:
    """The options of notebook 07's prediction (which question the gate refuses: both, only the first, only the
    second, neither; its reveal cell's ``refusals``) in the kernel's language. These are the catalogue's entries that
    ``predict`` finds through ``language.word``: the reveal shows them in Dutch, and a student may type them in
    Dutch."""
    return _("both"), _("only the first"), _("only the second"), _("neither")


def prompt_length(result: Answer) -> Markdown:
    """How long a prompt is, in tokens (and by whose count), sources and characters, beside the chapter's."""
    return Markdown(
        say(
            "This prompt: **{tokens}** tokens, counted with *{counted_with}*; **{sources}** sources, "
            "**{characters:,}** characters.  \nThe chapter's opening prompt: **{chapter_tokens}** tokens, counted with "
            "Qwen2.5's tokenizer.",
            tokens=result.prompt_tokens,
            counted_with=_counted_with(result.counted_with),
            sources=len(result.citations),
            characters=len(result.prompt),
            chapter_tokens=chapter.PROMPT_TOKENS,
        )
    )


def _counted_with(counted: TokenCounter) -> str:
    """Which tokenizer counted a prompt (``Answer.counted_with``) in the kernel's language."""
    if counted.generator is None:
        return _(WORD_PIECES)
    return say("{generator} tokenizer", generator=counted.generator)


def unknown_markers(rendered: RenderedAnswer) -> Markdown:
    """The markers of an answer that name no source."""
    return Markdown(say("Markers that name no source: **{markers}**.", markers=list(rendered.unknown)))


def chapter_identifiers() -> Markdown:
    """The chapter's invented references, in numbers, introducing the ones it prints."""
    q = chapter.INVENTED_REFERENCES
    return Markdown(
        say(
            "Asked for **{asked}** papers on contrastive sentence embeddings with identifiers, **{model}** wrote "
            "**{well_formed}** well-formed identifiers; **{real}** resolve to real arXiv papers; **{right}** are the "
            "paper claimed. The chapter prints **{printed}** of them:",
            asked=q["asked"],
            model=q["model"],
            well_formed=q["well_formed"],
            real=q["real"],
            right=q["right"],
            printed=len(cast(tuple, q["printed"])),
        )
    )


def identifier_checks(rows: Sequence[Mapping[str, object]]) -> Markdown:
    """The two checks (does it exist, does it point at what is claimed) on identifiers, beside the chapter's."""
    q = chapter.INVENTED_REFERENCES
    exists, ok = sum(bool(r["document exists"]) for r in rows), sum(bool(r["verifies"]) for r in rows)
    return Markdown(
        say(
            "Back to this notebook's identifiers, in the table before the chapter's: *does it exist* passes "
            "**{exists}** of **{rows}**; *does it point at what is claimed* passes **{ok}** of **{rows}**. The "
            "chapter's {asked} identifiers would pass the "
            "first check {real} times out of {asked} and the second {right} times: for the chapter's identifiers "
            "the failure was in the association, not in the format.",
            exists=exists,
            rows=len(rows),
            ok=ok,
            asked=q["asked"],
            real=q["real"],
            right=q["right"],
        )
    )


def halves_at_cut(row: SweepRow) -> Markdown:
    """Which in-domain queries are the generator's to get wrong, and which the retriever's, at one cut."""
    return Markdown(
        say(
            "All **{in_domain}** in-domain queries at the default cut ({cut}), dense retrieval on E:\n\n"
            "- **{with_needle}** reach a prompt that holds the needle: here retrieval did its part, and a wrong "
            "answer arises at the generator's step or in the rest of the prompt;\n"
            "- **{without_needle}** reach a prompt without the needle: retrieval did not supply the answer, so a right "
            "answer could only come from elsewhere (the model's own memory, or a passage saying it in other words);\n"
            "- **{refused}** are refused by the gate: the threshold's cost from notebook 06.\n\n"
            "So at most **{with_needle}** of {in_domain} answers can rest on their needle, measured without "
            "generating anything.",
            in_domain=row.in_domain,
            cut=row.cut,
            with_needle=row.answered_with_needle,
            without_needle=row.answered_without_needle,
            refused=row.refused,
        )
    )


def _few_and_many(facts: Mapping[int, pd.DataFrame]) -> tuple[int, pd.DataFrame, int, pd.DataFrame]:
    """The prompt facts (one row per query) at the fewest and the most chunks kept."""
    few, many = min(facts), max(facts)
    return few, facts[few], many, facts[many]


def _needles_gained(four: pd.DataFrame, twenty: pd.DataFrame) -> int:
    return int(twenty["needle at"].notna().sum() - four["needle at"].notna().sum())


def more_chunks(facts: Mapping[int, pd.DataFrame], counted_with: TokenCounter, generator: bool) -> Markdown:
    """What more chunks buy: needles gained, the prompt's growth, where the rescued needles sit."""
    few, four, many, twenty = _few_and_many(facts)
    rescued = sorted(twenty["needle at"][four["needle at"].isna() & twenty["needle at"].notna()])
    where = (
        say(": the model reads at least **{before}** other sources before it. ", before=int(min(rescued)) - 1)
        if rescued
        else ". "
    )
    return Markdown(
        say(
            "{Many} chunks put the needle into **{gained}** more prompts than {few}, and make the median prompt "
            "**{growth:.1f}×** as long. In the prompts that only {many} chunks rescue, the needle sits at source "
            "**{sources}**{where}Counted with *{counted_with}*.",
            Many=_spelled_out(many).capitalize(),
            gained=_needles_gained(four, twenty),
            few=_spelled_out(few),
            growth=twenty.tokens.median() / four.tokens.median(),
            many=_spelled_out(many),
            sources=", ".join(str(int(x)) for x in rescued) or "–",
            where=where,
            counted_with=_counted_with(counted_with),
        )
        + (_(" With a generator installed, compare the two answers below.") if generator else "")
    )


def _spelled_out(n: int) -> str:
    """A count of chunks as the prose writes it: four and twenty in words, any other count in digits."""
    return {4: _("four"), 20: _("twenty")}.get(n, str(n))


def what_figures_say(facts: Mapping[int, pd.DataFrame], row: SweepRow) -> Markdown:
    """What the few-or-many figures can and cannot say, with the needles in the middle of a long prompt."""
    few, four, many, twenty = _few_and_many(facts)
    held = twenty["needle at"].dropna()
    middle = int(((held > few) & (held <= twenty.sources[held.index] - few)).sum())
    return Markdown(
        say(
            "What the figures say: {many} chunks put the needle into **{gained}** more prompts than {few_words}, at "
            "**{growth:.1f}×** the median length. Of the **{held}** {many}-chunk prompts that hold the needle, "
            "**{middle}** have it in the middle (past the first {few} sources and before the last {few}), where the "
            "chapter says a model reads least reliably. What they cannot say: whether a model then uses the needle, in "
            "the middle or anywhere; that takes graded answers, which the sections *Two halves, graded apart* and "
            "*Lost in the middle, measured*, above, grade on samples, each saying what its sample can show. The same "
            'limit is "reduces, not removes" on the retriever\'s side: at the default cut **{without_needle}** prompts '
            "lack the needle altogether, and the **{with_needle}** that hold it bound the answers that can rest on the "
            "needle.",
            many=_spelled_out(many),
            gained=_needles_gained(four, twenty),
            few_words=_spelled_out(few),
            few=few,
            growth=twenty.tokens.median() / four.tokens.median(),
            held=len(held),
            middle=middle,
            without_needle=row.answered_without_needle,
            with_needle=row.answered_with_needle,
        )
    )


def retrieval_bill(facts: Mapping[int, pd.DataFrame], counted_with: TokenCounter) -> Markdown:
    """Retrieval's side of the fine-tune, retrieve or prompt bill: the prompt it adds to every query."""
    few, four, many, twenty = _few_and_many(facts)
    return Markdown(
        say(
            "A prompt built from retrieval has a median of **{few_tokens:,.0f}** tokens with {few} chunks and "
            "**{many_tokens:,.0f}** with {many} (counted with *{counted_with}*), and those tokens are paid for on every"
            " query, for as long as the system runs; a fine-tune pays up front and then cannot cite its sources. That "
            "per-query token count is the figure the decision compares. And the question the chapter leaves open, what "
            "to do when the answer was never written, is one retrieval cannot answer at all: notebook 06's "
            "out-of-domain queries are those questions, and the honest reply to them is NO ANSWER.",
            few_tokens=four.tokens.median(),
            few=few,
            many_tokens=twenty.tokens.median(),
            many=many,
            counted_with=_counted_with(counted_with),
        )
    )


def needle_in_prompt(rates: Sequence[faithfulness.PromptRate], cross_encoder: bool) -> Markdown:
    """Which retriever puts the needle into the gated prompt most often, and which differences from dense are real."""
    best = max(rates, key=lambda r: r.rate.k)
    tied = [r.retriever for r in rates if r.rate.k == best.rate.k]
    detected = [
        say(
            "{retriever} ({test}, Holm p = {holm:.3g})",
            retriever=r.retriever,
            test=paired_test(r.against_dense),
            holm=r.holm_p,
        )
        for r in rates
        if r.against_dense and r.holm_p is not None and r.holm_p < ALPHA
    ]
    compared = sum(r.against_dense is not None for r in rates)
    reranked = [r.retriever for r in rates if "+" in r.retriever]
    which = (
        ""
        if not reranked
        else say(
            " The row {row} is hybrid reranked by {by}.",
            row=reranked[0],
            by=_("the chapter's cross-encoder")
            if cross_encoder
            else _("MaxSim (the chapter's cross-encoder is not on this machine: `make models` installs it)"),
        )
    )
    return Markdown(
        say(
            "All **{n}** in-domain queries, strategy E, four sources at most, the gate at cut {cut} on cosine distance "
            "whichever retriever ranked: no generation needed. Most prompts holding the needle: **{best}** (**{k}** of "
            "{n}).{which} Against dense, paired by needle (a needle's two phrasings look for the same chunk, so they "
            "are not independent: each needle is one pair) and Holm-adjusted over the {m} comparisons: {detected}.",
            n=best.rate.n,
            m=compared,
            cut=DEFAULT_CUT,
            best=", ".join(tied),
            k=best.rate.k,
            which=which,
            detected=", ".join(detected) + (_(" differs detectably") if len(detected) == 1 else _(" differ detectably"))
            if detected
            else _("no retriever's difference is detected by the sign test"),
        )
    )
