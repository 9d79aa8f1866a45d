"""What notebook 01-chunking says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown

from ragkit.chunking import OVERLAP, SIZE, STRATEGIES, Chunk, Pathologies
from ragkit.corpus import Corpus
from ragkit.data import Question
from ragkit.evaluation import Evaluation
from ragkit.teach.course import chapter


def _same(flag: bool, same: str = "the same", other: str = "a different") -> str:
    return same if flag else other


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
