"""Narration: the sentences a notebook writes from its results, so that a cell of prose is one call, not formatting.

Each function takes the result objects a cell has computed and returns the Markdown the notebook displays; the
figures in it are always the computation's (the corpus can change, the prose must not lie).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import cast

import numpy as np
import pandas as pd
from IPython.display import Markdown

from ragkit.chunking import OVERLAP, SIZE, STRATEGIES, Chunk, Pathologies
from ragkit.citations import Citation, RenderedAnswer, verify
from ragkit.corpus import Corpus
from ragkit.data import Question
from ragkit.evaluation import Evaluation
from ragkit.teach import chapter, tables
from ragkit.threshold import DEFAULT_CUT, STRICT_CUT, Bluff, Sweep, SweepRow


def _same(flag: bool, same: str = "the same", other: str = "a different") -> str:
    return same if flag else other


# 01. Chunking

def chunk_counts(ev: Evaluation, corpus: Corpus, chunks_e: Sequence[Chunk]) -> Markdown:
    """How many chunks each family of cuts gives, here and in the chapter, and how large the two corpora are."""
    c = ev.chunks
    return Markdown(
        f"Blind cuts give **{c['A']}** chunks and boundary cuts **{c['C']}**. Overlap and header never move a cut: "
        f"B has {_same(c['A'] == c['B'])} count as A, and D, E, F "
        f"{_same(len({c[s] for s in 'CDEF'}) == 1, other='different counts')} as C. "
        f"The chapter's corpus gave **{chapter.CHUNKS_E}** chunks for E; this one gives **{c['E']}**. The chapter's "
        f"corpus: **{chapter.CORPUS['documents']}** documents, **{chapter.CORPUS['characters']:,}** characters, "
        f"**{chapter.CORPUS['sections']}** sections; this one: **{len(corpus.documents)}** documents, "
        f"**{sum(len(d.text) for d in corpus.documents):,}** characters, "
        f"**{len({(x.doc_id, x.section) for x in chunks_e})}** sections that hold text.")


def two_texts(corpus: Corpus, e: Chunk, f: Chunk, before_f: Chunk) -> Markdown:
    """What slicing the document proves about one chunk's ``content``, E's and F's ``text``, and F's overlap."""
    doc = corpus[e.doc_id].text
    return Markdown(
        f"`content` is exactly `document.text[{e.start}:{e.end}]`: **{doc[e.start:e.end] == e.content}**. "
        f"E's `text` occurs anywhere in the document: **{e.text in doc}**; F's: **{f.text in doc}**. "
        f"F's overlap is the last **{len(f.overlap.strip())}** characters of the chunk before, from section "
        f"**{before_f.section!r}**.")


def destroyed(ev: Evaluation) -> Markdown:
    """Needles destroyed by blind cuts, with and without overlap, against the chapter's count."""
    a, b = len(ev.destroyed["A"]), len(ev.destroyed["B"])
    return Markdown(
        f"The chapter: blind chunking destroyed **{chapter.DESTROYED_BLIND}** answers. This corpus: **{a}** of "
        f"**{ev.n_questions}**, {'more' if a > chapter.DESTROYED_BLIND else 'no more'} than the chapter. With "
        f"overlap (B): **{b}**. The four boundary strategies: **{sum(len(ev.destroyed[s]) for s in 'CDEF')}** "
        "between them.")


def blind_losses(ev: Evaluation, questions: Sequence[Question], windows: Sequence[tuple[str, int, int]]) -> Markdown:
    """Expected against observed losses to blind cuts, and whether the plot's red bars are the destroyed set."""
    lengths = np.array([len(q.needle) for q in questions])
    split = {q for q, off, n in windows if off + n > SIZE}
    return Markdown(
        f"Needles here average **{lengths.mean():.0f}** characters. Expected losses to blind cuts: about "
        f"**{(lengths - 1).sum() / SIZE:.1f}**; observed: **{len(ev.destroyed['A'])}**. The plot's red bars are "
        f"exactly the destroyed set: **{split == set(ev.destroyed['A'])}**.")


def overlap_rule(ev: Evaluation, questions: Sequence[Question], cuts: pd.DataFrame) -> Markdown:
    """What overlap saves of the split needles, against the 64-character rule and the chapter's zero."""
    lengths = np.array([len(q.needle) for q in questions])
    a, b = len(ev.destroyed["A"]), len(ev.destroyed["B"])
    expected_b = np.clip(lengths - 1 - OVERLAP, 0, None).sum() / SIZE
    implied = SIZE * chapter.DESTROYED_BLIND / chapter.QUESTIONS + 1
    tiny = (cuts[["before the cut", "after the cut"]].min(axis=1) <= 5).sum()
    lost = "zero as well" if b == 0 else f"{b} lost, not zero"
    return Markdown(
        f"Rule and result agree on every split needle: **{(cuts['cut in first 64?'] == cuts['saved by B?']).all()}**. "
        f"Overlap saved **{a - b}** of **{a}**; expected still lost with overlap: about **{expected_b:.1f}**, "
        f"observed **{b}**.\n\n"
        f"The chapter says overlap lost zero answers. This corpus, blind chunking with overlap (B): **{lost}**. "
        f"For the chapter's count of {chapter.DESTROYED_BLIND} to be the expected loss, its needles would average "
        f"about **{implied:.0f}** characters; ours average **{lengths.mean():.0f}**.\n\n"
        f"Split needles with five characters or fewer on one side of the cut: **{tiny}** of **{a}**.")


def reference_costs(found: Mapping[str, Pathologies], destroyed_by_e: Sequence[str]) -> Markdown:
    """What the reference rule costs in E, against blind chunking, with one example of each kind of flaw."""
    e = found["E"]
    cut, heading = e.decimal_cuts[0], e.heading_only[0]
    fate = ("None of these flaws destroys a needle here: every needle sits whole in some chunk of E."
            if not destroyed_by_e else
            f"E destroys **{len(destroyed_by_e)}** needle{'s' if len(destroyed_by_e) > 1 else ''} all the same "
            f"({', '.join(destroyed_by_e)}): no chunk of E quotes {'them' if len(destroyed_by_e) > 1 else 'it'} whole.")
    return Markdown(
        f"Strategy E has **{len(e.heading_only)}** heading-only chunks, **{len(e.decimal_cuts)}** cuts inside a "
        f"decimal number, **{len(e.code_cuts)}** cuts inside code and **{len(e.mid_sentence)}** chunks that start "
        f"mid-sentence, out of **{e.chunks}**. Blind chunking (A) starts **{len(found['A'].mid_sentence)}** of its "
        f"**{found['A'].chunks}** chunks mid-sentence: it never looks.\n\n"
        f"Two examples from E. A number cut in two, in *{cut.before.doc_id}*:\n\n"
        f"> end of one chunk: `…{cut.before.content[-50:]}`  \n> start of the next: `{cut.after.content[:50]}…`\n\n"
        f"A chunk that is only a heading, in *{heading.doc_id}*, section *{heading.section}*: `{heading.content}`.\n\n"
        + fate)


def header_share(ev: Evaluation) -> Markdown:
    """What the header costs in word pieces, in total and per chunk, here and in the chapter."""
    t = ev.tokens["E"]
    theirs = chapter.HEADER_TOKENS / chapter.EMBEDDED_TOKENS
    return Markdown(
        f"Header share in E. The chapter: **{chapter.HEADER_TOKENS:,}** of **{chapter.EMBEDDED_TOKENS:,}** pieces "
        f"(**{theirs:.1%}**). This corpus: **{t.header_pieces:,}** of **{t.pieces:,}** (**{t.header_share:.1%}**).\n\n"
        f"Per chunk, a header costs **{chapter.HEADER_TOKENS / chapter.CHUNKS_E:.1f}** pieces in the chapter and "
        f"**{t.header_pieces / t.chunks:.1f}** here, while the rest of each chunk costs "
        f"**{(chapter.EMBEDDED_TOKENS - chapter.HEADER_TOKENS) / chapter.CHUNKS_E:.1f}** and "
        f"**{(t.pieces - t.header_pieces) / t.chunks:.1f}**.")


def window_limit(chunks_f: Sequence[Chunk], pieces: Sequence[int], window: int, too_long: pd.DataFrame,
                 chunks_c: Sequence[Chunk]) -> Markdown:
    """Which limit bites, the character budget or the encoder's window, and the longest boundary chunk."""
    per_piece = sum(len(c.text) for c in chunks_f) / sum(pieces)
    holds = (window - 2) * per_piece
    longest = max(chunks_c, key=lambda c: len(c.content))
    over = too_long["characters per piece"].mean() if len(too_long) else float("nan")
    fits = ("longer than the budget, because a run of text without sentence-ending punctuation cannot be split by "
            "this rule." if len(longest.content) > SIZE else "within the budget.")
    return Markdown(
        f"Across all of F, a word piece covers **{per_piece:.1f}** characters on average, so the window holds about "
        f"**{holds:.0f}** characters of typical text: there the "
        f"{'character budget' if holds > SIZE else 'window'} is the limit that bites. The chunks over the window "
        f"average **{over:.1f}** characters per piece.\n\n"
        f"The longest boundary chunk (C, section *{longest.section}*) has **{len(longest.content)}** characters of "
        f"content: {fits}")


def most_over_window(over: Mapping[str, int], chunks_of: Callable[[str], Sequence[Chunk]]) -> Markdown:
    """Which strategy has the most chunks over the window, whether that is F as expected, and why not."""
    most = max(over, key=lambda s: over[s])
    mean = {s: np.mean([len(c.text) for c in chunks_of(s)]) for s in {most, "F"}}
    if over["F"] == over[most]:
        why = ", the most, as expected."
    else:
        cause = ("a blind chunk is a full 512 characters (plus overlap, for B), while a boundary chunk usually closes "
                 "before the budget" if not STRATEGIES[most].boundaries else "its chunks are longer on this corpus")
        why = (f"; the expectation fails here. {most} wins because {cause}: the embedded text averages "
               f"**{mean[most]:.0f}** characters in {most} and **{mean['F']:.0f}** in F.")
    theirs = ", ".join(f"{s} **{n}**" for s, n in chapter.OVER_WINDOW.items())
    return Markdown(
        f"Most chunks over the window: **{most}** ({over[most]}). F, with header and overlap, has **{over['F']}**"
        f"{why} The chapter counted E and F only: {theirs}. On any corpus, count before you trust your configured "
        "chunk size.")


# 06. Thresholds and bluffs

def distributions(s: Sweep) -> Markdown:
    """The worst answerable query against the closest out-of-domain one: do the two distributions overlap?"""
    worst = int(np.argmax(np.where(np.isfinite(s.best_answer), s.best_answer, -np.inf)))
    overlap = s.worst_in_domain > s.best_out_of_domain
    verdict = ("no single cut answers every answerable question and refuses every out-of-domain one, as in the "
               "chapter." if overlap else "here a perfect cut exists, unlike in the chapter.")
    return Markdown(
        f"Worst answerable query: *{s.queries[worst].text}*, its answer at **{s.worst_in_domain:.3f}** "
        f"(the chapter: **{chapter.THRESHOLD['worst_in_domain']}**).  \n"
        f"Closest out-of-domain query: at **{s.best_out_of_domain:.3f}** "
        f"(the chapter: **{chapter.THRESHOLD['best_out_of_domain']}**).  \n"
        f"So the two distributions **{'overlap' if overlap else 'do not overlap'}**: {verdict}")


def crossings(s: Sweep) -> Markdown:
    """How many queries of each kind sit on the wrong side of the other kind's extreme."""
    return Markdown(
        "Answerable queries whose answer is further away than the closest out-of-domain query: "
        f"**{int((s.best_answer > s.best_out_of_domain).sum())}** of {len(s.queries)}.  \n"
        "Out-of-domain queries closer to some chunk than the worst answer is to its query: "
        f"**{int((s.nearest_out < s.worst_in_domain).sum())}** of {len(s.out_of_domain)}.")


def strict_cut(s: Sweep) -> Markdown:
    """The strict cut's refusals for the bluffs it stops, and the default cut's bluffs, beside the chapter's."""
    ours, theirs, default = s.at(STRICT_CUT), chapter.THRESHOLD, s.at(DEFAULT_CUT)
    verdict = ("the default cut is more forgiving to bluffs here than there."
               if default.bluffs > theirs["bluffs"][DEFAULT_CUT] else "the default cut does at least as well here.")
    return Markdown(
        f"At {STRICT_CUT} this corpus refuses **{ours.refused}** of {ours.in_domain} answerable queries "
        f"(the chapter: **{theirs['refused_at_0.525']}**) to bring bluffs down to **{ours.bluffs}** of "
        f"{ours.out_of_domain} (the chapter: **{theirs['bluffs'][STRICT_CUT]}**).  \n"
        f"At {DEFAULT_CUT} we bluff **{default.bluffs}** times against the chapter's "
        f"**{theirs['bluffs'][DEFAULT_CUT]}**: {verdict}")


def sweep_shape(s: Sweep) -> Markdown:
    """Whether the sweep trades bluffs for refusals monotonically, and which kinds bluff at the default cut."""
    grid = tables.sweep(s)
    shape = bool(grid.bluffs.is_monotonic_decreasing and grid.refused.is_monotonic_increasing)
    kinds = pd.Series([b.query.kind for b in s.bluffs(DEFAULT_CUT)]).value_counts()
    return Markdown(
        f"Bluffs never rise and refusals never fall as the cut tightens: **{shape}** "
        f"({'the same' if shape else 'not the same'} trade-off as the chapter's).  \n"
        f"Bluffs at {DEFAULT_CUT} by kind: {', '.join(f'**{n}** {k}' for k, n in kinds.items()) or 'none'}.")


def _quoted(chunk: Chunk) -> str:
    return f"\n\n```text\n{chunk.content}\n```"


def near_miss(s: Sweep, near: Bluff) -> Markdown:
    """Where the nearest out-of-domain query lands, and how many true answers are further away; then the chunk."""
    further = int((s.best_answer > near.distance).sum())
    verdict = ("most of them." if further > len(s.queries) / 2
               else "not most of them, but a cut that stops it refuses those.")
    return Markdown(
        f"*{near.query.query}* ({near.query.kind}, {near.query.topic}) lands on "
        f"**{near.chunk.doc_id} > {near.chunk.section}** at **{near.distance:.3f}** "
        f"(the chapter's near miss: **{chapter.THRESHOLD['best_out_of_domain']}**).  \n"
        f"That is closer than the true answer of **{further}** of {len(s.queries)} answerable queries: {verdict}"
        + _quoted(near.chunk))


def literal_match(s: Sweep, bluff: Bluff, cuts: Sequence[float] = (DEFAULT_CUT, STRICT_CUT)) -> Markdown:
    """Where an out-of-domain query lands, what each cut does with it, and whether the chunk holds *Paris*."""
    bluffs = {c: any(b.query == bluff.query for b in s.bluffs(c)) for c in cuts}
    fate = "; ".join(f"at cut {c} it **{'bluffs' if p else 'is refused'}**" for c, p in bluffs.items())
    return Markdown(
        f"Nearest chunk: **{bluff.chunk.doc_id} > {bluff.chunk.section}** at **{bluff.distance:.3f}**. "
        f"{fate[0].upper()}{fate[1:]}. Does that chunk contain the word *Paris*? **{'Paris' in bluff.chunk.content}**."
        + _quoted(bluff.chunk))


# 07. Citations and NO ANSWER

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
        f"Is `content` found at its range in the document? **{doc[f.start:f.end] == f.content}**  \n"
        f"Does `text` occur anywhere in the document? **{f.text in doc}**  \n"
        f"Does the overlap sit right before the content? **{doc[f.start - len(f.overlap):f.start] == f.overlap}**  \n"
        f"Would a citation quoting `text` verify? **{quoting_text}**")


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
