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
from ragkit.teach.lesson.widgets import project_path
from ragkit.threshold import SweepRow


def prompt_flaws(found_here: Sequence[Mapping[str, str]], flaws: Pathologies) -> Markdown:
    """How many of a prompt's sources show a flaw of the reference rule, beside the counts over the whole strategy."""
    bad = [row["source"] for row in found_here if row["what is wrong with it"] != "nothing we count"]
    return Markdown(
        f"**{len(bad)}** of the **{len(found_here)}** sources in this prompt show a pathology "
        f"({', '.join(bad) or 'none'}). Across all of {flaws.strategy}: **{len(flaws.heading_only)}** heading-only "
        f"chunks, **{len(flaws.decimal_cuts)}** cuts inside a decimal number, **{len(flaws.code_cuts)}** inside code, "
        f"**{len(flaws.mid_sentence)}** chunks starting mid-sentence. A heading-only source takes one of the gate's "
        "slots and says nothing; half a number in a source is a number the model may quote wrong.")


def quote_or_text(corpus: Corpus, citation: Citation, f: Chunk) -> Markdown:
    """What slicing the document says about an F chunk's header, overlap, ``content`` and ``text`` as a quote."""
    doc = corpus[f.doc_id].text
    quoting_text = verify(dataclasses.replace(citation, quote=f.text), corpus)
    return Markdown(
        f"Header: `{f.header.strip()}`.  \nOverlap carried from the previous chunk: `{f.overlap}`.\n\n"
        f"Is `content` found at its range in the document? **{doc[f.start:f.end] == f.content}**.  \n"
        f"Does `text` occur anywhere in the document? **{f.text in doc}**.  \n"
        f"Does the overlap sit right before the content? **{doc[f.start - len(f.overlap):f.start] == f.overlap}**.  \n"
        f"Would a citation quoting `text` verify? **{quoting_text}**.")


def two_locators(corpus: Corpus, citation: Citation) -> Markdown:
    """One citation's path, the locator the server verifies and the text fragment a browser follows."""
    return Markdown(
        f"- Path in this project: `{project_path(corpus[citation.document_id].path)}`.\n"
        f"- Locator the server verifies (RFC 5147): `{citation.fragment}`: verifies "
        f"**{verify(citation, corpus)}**.\n"
        f"- Text fragment a browser follows on an HTML page: `{text_fragment(citation.quote)}`.")


def prompt_length(result: Answer) -> Markdown:
    """How long a prompt is, in tokens (and by whose count), sources and characters, beside the chapter's."""
    return Markdown(
        f"This prompt: **{result.prompt_tokens}** tokens, counted with *{result.counted_with}*; "
        f"**{len(result.citations)}** sources, **{len(result.prompt):,}** characters.  \n"
        f"The chapter's opening prompt: **{chapter.PROMPT_TOKENS}** tokens, counted with Qwen2.5's tokenizer.")

def unknown_markers(rendered: RenderedAnswer) -> Markdown:
    """The markers of an answer that name no source."""
    return Markdown(f"Markers that name no source: **{list(rendered.unknown)}**.")


def chapter_identifiers() -> Markdown:
    """The chapter's invented references, in numbers, introducing the ones it prints."""
    q = chapter.QWEN
    return Markdown(
        f"Asked for **{q['asked']}** papers on contrastive sentence embeddings with identifiers, **{q['model']}** "
        f"wrote **{q['well_formed']}** well-formed identifiers; **{q['real']}** resolve to real arXiv papers; "
        f"**{q['right']}** are the paper claimed. The chapter prints **{len(cast(tuple, q['printed']))}** of them:")


def identifier_checks(rows: Sequence[Mapping[str, object]]) -> Markdown:
    """The two checks (does it exist, does it point at what is claimed) on identifiers, beside the chapter's."""
    q = chapter.QWEN
    exists, ok = sum(bool(r["document exists"]) for r in rows), sum(bool(r["verifies"]) for r in rows)
    return Markdown(
        f"The same two checks on the identifiers above: *does it exist* passes **{exists}** of **{len(rows)}**; "
        f"*does it point at what is claimed* passes **{ok}**. The chapter's {q['asked']} identifiers would pass the "
        f"first check {q['real']} times out of {q['asked']} and the second {q['right']} times: the failure is in the "
        "association, never in the format.")


def two_halves(row: SweepRow) -> Markdown:
    """Which in-domain queries are the generator's to get wrong, and which the retriever's, at one cut."""
    return Markdown(
        f"All **{row.in_domain}** in-domain queries at the default cut ({row.cut}), dense retrieval on E:\n\n"
        f"- **{row.answered_with_needle}** reach a prompt that holds the needle: here a wrong answer is the "
        "generator's fault;\n"
        f"- **{row.answered_without_needle}** reach a prompt without the needle: a retrieval failure that no "
        "generator can repair;\n"
        f"- **{row.refused}** are refused by the gate: the threshold's cost from notebook 06.\n\n"
        f"So at most **{row.answered_with_needle}** of {row.in_domain} answers are in the generator's hands, measured "
        "without generating anything.")


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
    where = (f": the model reads at least **{int(min(rescued)) - 1}** other sources before it. " if rescued else ". ")
    return Markdown(
        f"{_number(many).capitalize()} chunks put the needle into **{_needles_gained(four, twenty)}** more prompts "
        f"than {_number(few)}, and make the median prompt **{twenty.tokens.median() / four.tokens.median():.1f}×** as "
        f"long. In the prompts that only {_number(many)} chunks rescue, the needle sits at source "
        f"**{', '.join(str(int(x)) for x in rescued) or '–'}**{where}Counted with *{counted_with}*."
        + (" With a generator installed, compare the two answers below." if generator else ""))


def _number(n: int) -> str:
    return {4: "four", 20: "twenty"}.get(n, str(n))


def what_figures_say(facts: Mapping[int, pd.DataFrame], row: SweepRow) -> Markdown:
    """What the few-or-many figures can and cannot say, with the needles in the middle of a long prompt."""
    few, four, many, twenty = _few_and_many(facts)
    held = twenty["needle at"].dropna()
    middle = int(((held > few) & (held <= twenty.sources[held.index] - few)).sum())
    return Markdown(
        f"What the figures say: {_number(many)} chunks put the needle into **{_needles_gained(four, twenty)}** more "
        f"prompts than {few}, at **{twenty.tokens.median() / four.tokens.median():.1f}×** the median length. Of the "
        f"**{len(held)}** {_number(many)}-chunk prompts that hold the needle, **{middle}** have it in the middle "
        f"(past the first {few} sources and before the last {few}), where the chapter says a model reads least "
        "reliably. What they cannot say: whether a model then uses the needle, in the middle or anywhere; that "
        "takes a generator and graded answers. The same limit is \"reduces, not removes\" on the retriever's side: "
        f"at the default cut **{row.answered_without_needle}** prompts lack the needle altogether, and the "
        f"**{row.answered_with_needle}** that hold it are only an upper bound on right answers.")


def retrieval_bill(facts: Mapping[int, pd.DataFrame], counted_with: str) -> Markdown:
    """Retrieval's side of the fine-tune, retrieve or prompt bill: the prompt it adds to every query."""
    few, four, many, twenty = _few_and_many(facts)
    return Markdown(
        f"Retrieval adds a prompt of median **{four.tokens.median():.0f}** tokens with {few} chunks and "
        f"**{twenty.tokens.median():.0f}** with {many} (counted with *{counted_with}*), on every query, for as long "
        "as the system runs; a fine-tune pays up front and then cannot cite its sources. That per-query token count "
        "is the figure the decision compares. And the question the chapter leaves open, what to do when the answer "
        "was never written, is one retrieval cannot answer at all: notebook 06's out-of-domain queries are those "
        "questions, and the honest reply to them is NO ANSWER.")
