"""What notebook 01-chunking says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown

from ragkit.chunking import OVERLAP, SIZE, STRATEGIES, Chunk, Pathologies
from ragkit.corpus import Corpus, corpus_stats
from ragkit.data import Question
from ragkit.evaluation import Evaluation
from ragkit.teach.course import chapter
from ragkit.teach.language import _, say
from ragkit.teach.lesson import formats
from ragkit.teach.lesson.formats import noun

__all__ = [
    "blind_losses",
    "boundaries_checked",
    "chunk_counts",
    "destroyed",
    "header_share",
    "most_over_window",
    "overlap_rule",
    "overlap_saves",
    "reference_costs",
    "text_and_content",
    "two_texts",
    "window_counts",
    "window_limit",
]


def chunk_counts(ev: Evaluation, corpus: Corpus, chunks_e: Sequence[Chunk]) -> Markdown:
    """How many chunks each family of cuts gives, here and in the chapter, and how large the two corpora are: their
    sections counted as 00 and the chapter count them (``corpus_stats``), and the parts of text chunking cuts."""
    c = ev.chunks
    characters = sum(len(d.text) for d in corpus.documents)
    sections = corpus_stats(corpus)[-1].sections  # what 00 counts: a heading's section, as the chapter counts them
    parts = len({(x.doc_id, x.section) for x in chunks_e})  # those, and each document's opening under its title
    return Markdown(
        say(
            "Blind cuts give **{blind:,}** chunks and boundary cuts **{boundaries:,}**. Overlap and header never move "
            "a cut: B has {b_like_a} count as A, and D, E, F {def_like_c} as C. "
            "The chapter's corpus gave **{chapter_e:,}** chunks for E; this one gives **{e:,}**. The chapter's "
            "corpus: **{chapter_documents}** documents, **{chapter_characters:,}** characters, "
            "**{chapter_sections}** sections; this one: **{documents}** {documents_noun}, "
            "**{characters:,}** {characters_noun}, **{sections}** {sections_noun} (**{parts}** {parts_noun}, "
            "each document's opening under its title among them).",
            blind=c["A"],
            boundaries=c["C"],
            b_like_a=_("the same") if c["A"] == c["B"] else _("a different"),
            def_like_c=_("the same") if len({c[s] for s in "CDEF"}) == 1 else _("different counts"),
            chapter_e=chapter.CHUNKS_E,
            e=c["E"],
            chapter_documents=chapter.CORPUS["documents"],
            chapter_characters=chapter.CORPUS["characters"],
            chapter_sections=chapter.CORPUS["sections"],
            documents=len(corpus.documents),
            documents_noun=noun(len(corpus.documents), _("document"), _("documents")),
            characters=characters,
            characters_noun=noun(characters, _("character"), _("characters")),
            sections=sections,
            sections_noun=noun(sections, _("section"), _("sections")),
            parts=parts,
            parts_noun=noun(parts, _("part that holds text"), _("parts that hold text")),
        )
    )


def two_texts(corpus: Corpus, e: Chunk, f: Chunk, before_f: Chunk) -> Markdown:
    """What slicing the document proves about one chunk's ``content``, E's and F's ``text``, and F's overlap."""
    doc = corpus[e.doc_id].text
    return Markdown(
        say(
            "`content` is exactly `document.text[{start}:{end}]`: **{exact}**. "
            "E's `text` occurs anywhere in the document: **{e_in_document}**; F's: **{f_in_document}**. "
            "F's overlap is the last **{overlap}** characters of the chunk before, from section **{section!r}**.",
            start=e.start,
            end=e.end,
            exact=formats.truth(doc[e.start : e.end] == e.content),
            e_in_document=formats.truth(e.text in doc),
            f_in_document=formats.truth(f.text in doc),
            overlap=len(f.overlap.strip()),
            section=before_f.section,
        )
    )


def text_and_content(c: Chunk, strategy: str) -> Markdown:
    """One chunk's two texts under a label: the ``text`` that is embedded and the ``content`` that is quoted."""
    return Markdown(
        say(
            "**{doc_id}, strategy {strategy}**\n\n`text` (embedded):\n```text\n{text}\n```\n"
            "`content` (quoted):\n```text\n{content}\n```",
            doc_id=c.doc_id,
            strategy=strategy,
            text=c.text,
            content=c.content,
        )
    )


def overlap_saves(saved: Mapping[str, Sequence[str]], questions: Sequence[Question]) -> Markdown:
    """Per strategy with overlap, the needles some chunk quotes whole only thanks to its overlap."""
    per_strategy = "; ".join(
        say("**{strategy}**: **{n}** ({ids})", strategy=s, n=len(ids), ids=", ".join(ids))
        if ids
        else say("**{strategy}**: **{n}**", strategy=s, n=0)
        for s, ids in saved.items()
    )
    return Markdown(
        say(
            "Needles that some chunk quotes whole only thanks to its overlap: {per_strategy} (of {questions}).",
            per_strategy=per_strategy,
            questions=len(questions),
        )
    )


def destroyed(ev: Evaluation) -> Markdown:
    """Needles destroyed by blind cuts, with and without overlap, against the chapter's count."""
    a, b = len(ev.destroyed["A"]), len(ev.destroyed["B"])
    return Markdown(
        say(
            "The chapter: blind chunking destroyed **{chapter_destroyed}** answers. This corpus: **{a}** of "
            "**{questions}**, {more} than the chapter. With overlap (B): **{b}**. The four boundary strategies: "
            "**{boundaries}** between them.",
            chapter_destroyed=chapter.DESTROYED_BLIND,
            a=a,
            questions=ev.n_questions,
            more=_("more") if a > chapter.DESTROYED_BLIND else _("no more"),
            b=b,
            boundaries=sum(len(ev.destroyed[s]) for s in "CDEF"),
        )
    )


def blind_losses(ev: Evaluation, questions: Sequence[Question], windows: Sequence[tuple[str, int, int]]) -> Markdown:
    """Expected against observed losses to blind cuts, and whether the plot's crossed bars are the destroyed set."""
    from ragkit.teach.lesson.plots import DESTROYED_COLOUR, colour_word

    lengths = np.array([len(q.needle) for q in questions])
    split = {q for q, off, n in windows if off + n > SIZE}
    return Markdown(
        say(
            "Needles here average **{mean:.0f}** characters. Expected losses to blind cuts: about **{expected:.1f}**; "
            "observed: **{observed}**. The plot's {colour} bars are exactly the destroyed set: **{same}**.",
            mean=lengths.mean(),
            expected=(lengths - 1).sum() / SIZE,
            observed=len(ev.destroyed["A"]),
            same=formats.truth(split == set(ev.destroyed["A"])),
            colour=colour_word(DESTROYED_COLOUR),
        )
    )


def overlap_rule(ev: Evaluation, questions: Sequence[Question], cuts: pd.DataFrame) -> Markdown:
    """What overlap saves of the split needles, against the 64-character rule and the chapter's zero."""
    lengths = np.array([len(q.needle) for q in questions])
    a, b = len(ev.destroyed["A"]), len(ev.destroyed["B"])
    expected_b = np.clip(lengths - 1 - OVERLAP, 0, None).sum() / SIZE
    implied = SIZE * chapter.DESTROYED_BLIND / chapter.QUESTIONS + 1
    tiny = (cuts[["before the cut", "after the cut"]].min(axis=1) <= 5).sum()
    lost = _("zero as well") if b == 0 else say("{b} lost, not zero", b=b)
    return Markdown(
        say(
            "Rule and result agree on every split needle: **{agree}**. Overlap saved **{saved}** of **{a}**; expected "
            "still lost with overlap: about **{expected:.1f}**, observed **{b}**.\n\n"
            "The chapter says overlap lost zero answers. This corpus, blind chunking with overlap (B): **{lost}**. "
            "For the chapter's count of {chapter_destroyed} to be the expected loss, its needles would average "
            "about **{implied:.0f}** characters; ours average **{mean:.0f}**.\n\n"
            "Split needles with five characters or fewer on one side of the cut: **{tiny}** of **{a}**.",
            agree=formats.truth(bool((cuts["cut in first 64?"] == cuts["saved by B?"]).all())),
            saved=a - b,
            a=a,
            expected=expected_b,
            b=b,
            lost=lost,
            chapter_destroyed=chapter.DESTROYED_BLIND,
            implied=implied,
            mean=lengths.mean(),
            tiny=tiny,
        )
    )


def reference_costs(found: Mapping[str, Pathologies], destroyed_by_e: Sequence[str]) -> Markdown:
    """What the reference rule costs in E, against blind chunking, with one example of each kind of flaw."""
    e = found["E"]
    cut, heading = e.decimal_cuts[0], e.heading_only[0]
    if not destroyed_by_e:
        fate = _("None of these flaws destroys a needle here: every needle sits whole in some chunk of E.")
    elif len(destroyed_by_e) == 1:
        fate = say(
            "E destroys **{n}** needle all the same ({needles}): no chunk of E quotes it whole.",
            n=1,
            needles=destroyed_by_e[0],
        )
    else:
        fate = say(
            "E destroys **{n}** needles all the same ({needles}): no chunk of E quotes them whole.",
            n=len(destroyed_by_e),
            needles=", ".join(destroyed_by_e),
        )
    return Markdown(
        say(
            "Strategy E has **{heading_only}** {heading_only_noun}, **{decimal_cuts}** {decimal_cuts_noun}, "
            "**{code_cuts}** {code_cuts_noun} and **{mid_sentence}** {mid_sentence_noun}, out of **{chunks:,}**. Blind "
            "chunking (A) starts **{blind_mid_sentence}** of its **{blind_chunks}** chunks mid-sentence: it never "
            "looks.\n\nTwo examples from E. A number cut in two, in *{cut_doc_id}*:\n\n> end of one chunk: "
            "`…{end_of_one}`  \n> start of the next: `{start_of_next}…`\n\nA chunk that is only a heading, in "
            "*{heading_doc_id}*, section *{heading_section}*: `{heading}`.\n\n{fate}",
            heading_only=len(e.heading_only),
            decimal_cuts=len(e.decimal_cuts),
            code_cuts=len(e.code_cuts),
            heading_only_noun=noun(len(e.heading_only), _("heading-only chunk"), _("heading-only chunks")),
            decimal_cuts_noun=noun(
                len(e.decimal_cuts), _("cut inside a decimal number"), _("cuts inside a decimal number")
            ),
            code_cuts_noun=noun(len(e.code_cuts), _("cut inside code"), _("cuts inside code")),
            mid_sentence_noun=noun(
                len(e.mid_sentence), _("chunk that starts mid-sentence"), _("chunks that start mid-sentence")
            ),
            mid_sentence=len(e.mid_sentence),
            chunks=e.chunks,
            blind_mid_sentence=len(found["A"].mid_sentence),
            blind_chunks=found["A"].chunks,
            cut_doc_id=cut.before.doc_id,
            end_of_one=cut.before.content[-50:],
            start_of_next=cut.after.content[:50],
            heading_doc_id=heading.doc_id,
            heading_section=heading.section,
            heading=heading.content,
            fate=fate,
        )
    )


def header_share(ev: Evaluation) -> Markdown:
    """What the header costs in word pieces, in total and per chunk, here and in the chapter."""
    t = ev.tokens["E"]
    return Markdown(
        say(
            "Header share in E. The chapter: **{chapter_header:,}** of **{chapter_pieces:,}** pieces "
            "(**{chapter_share:.1%}**). This corpus: **{header:,}** of **{pieces:,}** (**{share:.1%}**).\n\n"
            "Per chunk, a header costs **{chapter_per_chunk:.1f}** pieces in the chapter and **{per_chunk:.1f}** here, "
            "while the rest of each chunk costs **{chapter_rest:.1f}** and **{rest:.1f}**.",
            chapter_header=chapter.HEADER_TOKENS,
            chapter_pieces=chapter.EMBEDDED_TOKENS,
            chapter_share=chapter.HEADER_TOKENS / chapter.EMBEDDED_TOKENS,
            header=t.header_pieces,
            pieces=t.pieces,
            share=t.header_share,
            chapter_per_chunk=chapter.HEADER_TOKENS / chapter.CHUNKS_E,
            per_chunk=t.header_pieces / t.chunks,
            chapter_rest=(chapter.EMBEDDED_TOKENS - chapter.HEADER_TOKENS) / chapter.CHUNKS_E,
            rest=(t.pieces - t.header_pieces) / t.chunks,
        )
    )


def window_counts(over: Mapping[str, int]) -> Markdown:
    """How many chunks of each strategy run past the encoder's window, beside the chapter's counts."""

    def counted(counts: Mapping[str, int]) -> str:
        return ", ".join(say("{strategy} **{n}**", strategy=s, n=n) for s, n in counts.items())

    return Markdown(
        say(
            "Chunks longer than the window, per strategy: {ours}. The chapter: {theirs}.",
            ours=counted(over),
            theirs=counted(chapter.OVER_WINDOW),
        )
    )


def window_limit(
    chunks_f: Sequence[Chunk], pieces: Sequence[int], window: int, too_long: pd.DataFrame, chunks_c: Sequence[Chunk]
) -> Markdown:
    """Which limit bites, the character budget or the encoder's window, and the longest boundary chunk."""
    per_piece = sum(len(c.text) for c in chunks_f) / sum(pieces)
    holds = (window - 2) * per_piece
    longest = max(chunks_c, key=lambda c: len(c.content))
    over = too_long["characters per piece"].mean() if len(too_long) else float("nan")
    fits = (
        _(
            "longer than the budget, because a run of text without sentence-ending punctuation cannot be split by this "
            "rule."
        )
        if len(longest.content) > SIZE
        else _("within the budget.")
    )
    return Markdown(
        say(
            "Across all of F, a word piece covers **{per_piece:.1f}** characters on average, so the window holds about "
            "**{holds:.0f}** characters of typical text: there the {limit} is the limit that bites. The chunks over "
            "the window average **{over:.1f}** characters per piece.\n\n"
            "The longest boundary chunk (C, section *{section}*) has **{characters}** characters of content: {fits}",
            per_piece=per_piece,
            holds=holds,
            limit=_("character budget") if holds > SIZE else _("window"),
            over=over,
            section=longest.section,
            characters=len(longest.content),
            fits=fits,
        )
    )


def most_over_window(over: Mapping[str, int], chunks_of: Callable[[str], Sequence[Chunk]]) -> Markdown:
    """Which strategy has the most chunks over the window, whether that is F as expected, and why not."""
    most = max(over, key=lambda s: over[s])
    mean = {s: np.mean([len(c.text) for c in chunks_of(s)]) for s in {most, "F"}}
    if over["F"] == over[most]:
        why = _(", the most, as expected.")
    else:
        cause = (
            _(
                "a blind chunk is a full 512 characters (plus overlap, for B), while a boundary chunk usually "
                "closes before the budget"
            )
            if not STRATEGIES[most].boundaries
            else _("its chunks are longer on this corpus")
        )
        why = say(
            "; the expectation fails here. {most} wins because {cause}: the embedded text averages "
            "**{mean_most:.0f}** characters in {most} and **{mean_f:.0f}** in F.",
            most=most,
            cause=cause,
            mean_most=mean[most],
            mean_f=mean["F"],
        )
    theirs = ", ".join(say("{strategy} **{n}**", strategy=s, n=n) for s, n in chapter.OVER_WINDOW.items())
    return Markdown(
        say(
            "Most chunks over the window: **{most}** ({n}). F, with header and overlap, has **{f}**{why} The chapter "
            "counted E and F only: {theirs}. On any corpus, count before you trust your configured chunk size.",
            most=most,
            n=over[most],
            f=over["F"],
            why=why,
            theirs=theirs,
        )
    )


def boundaries_checked(by_hand: Sequence[str], by_ragkit: Sequence[str], same: int) -> Markdown:
    """The boundaries rule by hand against ragkit's strategy C: how many chunks each cut, and how many agree."""
    return Markdown(
        say(
            "Chunks by hand **{hand:,}**, by `ragkit` (strategy C) **{ragkit:,}**; identical, position by "
            "position: **{same:,}**.",
            hand=len(by_hand),
            ragkit=len(by_ragkit),
            same=same,
        )
    )
