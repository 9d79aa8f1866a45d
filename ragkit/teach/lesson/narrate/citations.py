"""What notebook 07-citations says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import cast

import pandas as pd
from IPython.display import Markdown

from ragkit.answer import Answer
from ragkit.chunking import Chunk, Pathologies
from ragkit.citations import Citation, RenderedAnswer, text_fragment, verify
from ragkit.corpus import Corpus
from ragkit.teach.course import chapter
from ragkit.teach.language import _, say
from ragkit.teach.lesson.widgets import project_path
from ragkit.threshold import SweepRow


def prompt_flaws(found_here: Sequence[Mapping[str, str]], flaws: Pathologies) -> Markdown:
    """How many of a prompt's sources show a flaw of the reference rule, beside the counts over the whole strategy."""
    bad = [row["source"] for row in found_here if row["what is wrong with it"] != "nothing we count"]
    return Markdown(say(
        "**{bad}** of the **{sources}** sources in this prompt show a pathology ({which}). Across all of "
        "{strategy}: **{heading_only}** heading-only chunks, **{decimal_cuts}** cuts inside a decimal number, "
        "**{code_cuts}** inside code, **{mid_sentence}** chunks starting mid-sentence. A heading-only source takes "
        "one of the gate's slots and says nothing; half a number in a source is a number the model may quote wrong.",
        bad=len(bad), sources=len(found_here), which=", ".join(bad) or _("none"), strategy=flaws.strategy,
        heading_only=len(flaws.heading_only), decimal_cuts=len(flaws.decimal_cuts), code_cuts=len(flaws.code_cuts),
        mid_sentence=len(flaws.mid_sentence)))


def quote_or_text(corpus: Corpus, citation: Citation, f: Chunk) -> Markdown:
    """What slicing the document says about an F chunk's header, overlap, ``content`` and ``text`` as a quote."""
    doc = corpus[f.doc_id].text
    quoting_text = verify(dataclasses.replace(citation, quote=f.text), corpus)
    return Markdown(say(
        "Header: `{header}`.  \nOverlap carried from the previous chunk: `{overlap}`.\n\n"
        "Is `content` found at its range in the document? **{content_found}**.  \n"
        "Does `text` occur anywhere in the document? **{text_found}**.  \n"
        "Does the overlap sit right before the content? **{overlap_before}**.  \n"
        "Would a citation quoting `text` verify? **{quoting_text}**.",
        header=f.header.strip(), overlap=f.overlap, content_found=doc[f.start:f.end] == f.content,
        text_found=f.text in doc, overlap_before=doc[f.start - len(f.overlap):f.start] == f.overlap,
        quoting_text=quoting_text))


def two_locators(corpus: Corpus, citation: Citation) -> Markdown:
    """One citation's path, the locator the server verifies and the text fragment a browser follows."""
    return Markdown(say(
        "- Path in this project: `{path}`.\n"
        "- Locator the server verifies (RFC 5147): `{fragment}`: verifies **{verifies}**.\n"
        "- Text fragment a browser follows on an HTML page: `{text_fragment}`.",
        path=project_path(corpus[citation.document_id].path), fragment=citation.fragment,
        verifies=verify(citation, corpus), text_fragment=text_fragment(citation.quote)))


def prompt_length(result: Answer) -> Markdown:
    """How long a prompt is, in tokens (and by whose count), sources and characters, beside the chapter's."""
    return Markdown(say(
        "This prompt: **{tokens}** tokens, counted with *{counted_with}*; **{sources}** sources, **{characters:,}** "
        "characters.  \nThe chapter's opening prompt: **{chapter_tokens}** tokens, counted with Qwen2.5's tokenizer.",
        tokens=result.prompt_tokens, counted_with=result.counted_with, sources=len(result.citations),
        characters=len(result.prompt), chapter_tokens=chapter.PROMPT_TOKENS))


def unknown_markers(rendered: RenderedAnswer) -> Markdown:
    """The markers of an answer that name no source."""
    return Markdown(say("Markers that name no source: **{markers}**.", markers=list(rendered.unknown)))


def chapter_identifiers() -> Markdown:
    """The chapter's invented references, in numbers, introducing the ones it prints."""
    q = chapter.QWEN
    return Markdown(say(
        "Asked for **{asked}** papers on contrastive sentence embeddings with identifiers, **{model}** wrote "
        "**{well_formed}** well-formed identifiers; **{real}** resolve to real arXiv papers; **{right}** are the "
        "paper claimed. The chapter prints **{printed}** of them:",
        asked=q["asked"], model=q["model"], well_formed=q["well_formed"], real=q["real"], right=q["right"],
        printed=len(cast(tuple, q["printed"]))))


def identifier_checks(rows: Sequence[Mapping[str, object]]) -> Markdown:
    """The two checks (does it exist, does it point at what is claimed) on identifiers, beside the chapter's."""
    q = chapter.QWEN
    exists, ok = sum(bool(r["document exists"]) for r in rows), sum(bool(r["verifies"]) for r in rows)
    return Markdown(say(
        "The same two checks on the identifiers above: *does it exist* passes **{exists}** of **{rows}**; "
        "*does it point at what is claimed* passes **{ok}**. The chapter's {asked} identifiers would pass the "
        "first check {real} times out of {asked} and the second {right} times: for the chapter's identifiers "
        "the failure was in the association, not in the format.",
        exists=exists, rows=len(rows), ok=ok, asked=q["asked"], real=q["real"], right=q["right"]))


def two_halves(row: SweepRow) -> Markdown:
    """Which in-domain queries are the generator's to get wrong, and which the retriever's, at one cut."""
    return Markdown(say(
        "All **{in_domain}** in-domain queries at the default cut ({cut}), dense retrieval on E:\n\n"
        "- **{with_needle}** reach a prompt that holds the needle: here a wrong answer is the generator's fault;\n"
        "- **{without_needle}** reach a prompt without the needle: retrieval did not supply the answer, so a right "
        "answer could only come from elsewhere (the model's own memory, or a passage saying it in other words);\n"
        "- **{refused}** are refused by the gate: the threshold's cost from notebook 06.\n\n"
        "So **{with_needle}** of {in_domain} answers can be grounded in their needle, measured without "
        "generating anything.",
        in_domain=row.in_domain, cut=row.cut, with_needle=row.answered_with_needle,
        without_needle=row.answered_without_needle, refused=row.refused))


def _few_and_many(facts: Mapping[int, pd.DataFrame]) -> tuple[int, pd.DataFrame, int, pd.DataFrame]:
    """The prompt facts (one row per query) at the fewest and the most chunks kept."""
    few, many = min(facts), max(facts)
    return few, facts[few], many, facts[many]


def _needles_gained(four: pd.DataFrame, twenty: pd.DataFrame) -> int:
    return int(twenty["needle at"].notna().sum() - four["needle at"].notna().sum())


def four_or_twenty(facts: Mapping[int, pd.DataFrame], counted_with: str, generator: bool) -> Markdown:
    """What more chunks buy: needles gained, the prompt's growth, where the rescued needles sit."""
    few, four, many, twenty = _few_and_many(facts)
    rescued = sorted(twenty["needle at"][four["needle at"].isna() & twenty["needle at"].notna()])
    where = (say(": the model reads at least **{before}** other sources before it. ", before=int(min(rescued)) - 1)
             if rescued else ". ")
    return Markdown(say(
        "{Many} chunks put the needle into **{gained}** more prompts than {few}, and make the median prompt "
        "**{growth:.1f}×** as long. In the prompts that only {many} chunks rescue, the needle sits at source "
        "**{sources}**{where}Counted with *{counted_with}*.",
        Many=_spelled_out(many).capitalize(), gained=_needles_gained(four, twenty), few=_spelled_out(few),
        growth=twenty.tokens.median() / four.tokens.median(), many=_spelled_out(many),
        sources=", ".join(str(int(x)) for x in rescued) or "–", where=where, counted_with=counted_with)
        + (_(" With a generator installed, compare the two answers below.") if generator else ""))


def _spelled_out(n: int) -> str:
    """A count of chunks as the prose writes it: four and twenty in words, any other count in digits."""
    return {4: _("four"), 20: _("twenty")}.get(n, str(n))


def what_figures_say(facts: Mapping[int, pd.DataFrame], row: SweepRow) -> Markdown:
    """What the few-or-many figures can and cannot say, with the needles in the middle of a long prompt."""
    few, four, many, twenty = _few_and_many(facts)
    held = twenty["needle at"].dropna()
    middle = int(((held > few) & (held <= twenty.sources[held.index] - few)).sum())
    return Markdown(say(
        "What the figures say: {many} chunks put the needle into **{gained}** more prompts than {few}, at "
        "**{growth:.1f}×** the median length. Of the **{held}** {many}-chunk prompts that hold the needle, "
        "**{middle}** have it in the middle (past the first {few} sources and before the last {few}), where the "
        "chapter says a model reads least reliably. What they cannot say: whether a model then uses the needle, in "
        "the middle or anywhere; that takes a generator and graded answers. The same limit is \"reduces, not "
        "removes\" on the retriever's side: at the default cut **{without_needle}** prompts lack the needle "
        "altogether, and the **{with_needle}** that hold it bound the answers grounded in the needle.",
        many=_spelled_out(many), gained=_needles_gained(four, twenty), few=few,
        growth=twenty.tokens.median() / four.tokens.median(), held=len(held), middle=middle,
        without_needle=row.answered_without_needle, with_needle=row.answered_with_needle))


def retrieval_bill(facts: Mapping[int, pd.DataFrame], counted_with: str) -> Markdown:
    """Retrieval's side of the fine-tune, retrieve or prompt bill: the prompt it adds to every query."""
    few, four, many, twenty = _few_and_many(facts)
    return Markdown(say(
        "Retrieval adds a prompt of median **{few_tokens:.0f}** tokens with {few} chunks and **{many_tokens:.0f}** "
        "with {many} (counted with *{counted_with}*), on every query, for as long as the system runs; a fine-tune "
        "pays up front and then cannot cite its sources. That per-query token count is the figure the decision "
        "compares. And the question the chapter leaves open, what to do when the answer was never written, is one "
        "retrieval cannot answer at all: notebook 06's out-of-domain queries are those questions, and the honest "
        "reply to them is NO ANSWER.",
        few_tokens=four.tokens.median(), few=few, many_tokens=twenty.tokens.median(), many=many,
        counted_with=counted_with))
