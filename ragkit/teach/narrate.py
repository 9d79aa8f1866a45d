"""Narration: the sentences a notebook writes from its results, so that a cell of prose is one call, not formatting.

Each function takes the result objects a cell has computed and returns the Markdown the notebook displays; the
figures in it are always the computation's (the corpus can change, the prose must not lie).
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd
from IPython.display import HTML, Markdown

from ragkit.answer import Answer
from ragkit.chunking import OVERLAP, SIZE, STRATEGIES, Chunk, Pathologies
from ragkit.citations import Citation, RenderedAnswer, text_fragment, verify
from ragkit.corpus import Corpus
from ragkit.data import OutOfDomain, Question
from ragkit.distances import IdentityCheck
from ragkit.errors import ModelUnavailable
from ragkit.evaluation import Evaluation
from ragkit.fusion import K, rrf
from ragkit.index import Entry, Status
from ragkit.plumbing import locations
from ragkit.plumbing.models import HubModel, hub_model_path
from ragkit.report import Line, Report
from ragkit.retrieval import Retriever, Run
from ragkit.statistics import counts_test, verdict, wilson
from ragkit.teach import chapter, tables
from ragkit.teach.exercises import EX2, EX3, cost_minima, shared_needle_words
from ragkit.teach.language import _, say
from ragkit.teach.widgets import kind_of, project_path
from ragkit.threshold import DEFAULT_CUT, KEEP, STRICT_CUT, Bluff, Sweep, SweepRow
from ragkit.words import content_words, copied_share


def _same(flag: bool, same: str = "the same", other: str = "a different") -> str:
    return same if flag else other


# 00. Start here

def corpus_loaded(corpus: Corpus, total: pd.Series) -> Markdown:
    """How much was loaded, what it holds, and where the files are."""
    return Markdown(say(
        "**{documents}** documents loaded, **{failed}** failed; **{characters:,}** characters in "
        "**{sections}** sections, with **{tables}** tables, **{formulas}** formulas and "
        "**{code_blocks}** code blocks. The files are in `{folder}`.",
        documents=len(corpus), failed=len(corpus.failed), characters=total.characters, sections=total.sections,
        tables=total.tables, formulas=total.formulas, code_blocks=total.code_blocks,
        folder=str(locations.data_dir() / "corpus")))


def read_a_file(corpus: Corpus) -> Markdown:
    """An invitation to read one document of the corpus, linked from the notebook."""
    first = corpus.documents[0]
    return Markdown(say(
        "Open one of the files in `data/corpus/` now and read a page of it, for instance "
        "[{folder}/{name}]({link}) (the link opens it in "
        "JupyterLab; in the file browser on the left, go up from this notebook's folder to the project folder, "
        "then into `data/corpus/`). Everything the retrievers return later is a piece of these files, and you "
        "will judge the results much better if you know the text.", folder=first.path.parent.name,
        name=first.path.name, link=_from_here(first.path)))


def _from_here(path: Path) -> str:
    """A link to ``path`` from the kernel's folder, the notebook's: right at any depth (notebooks/, notebooks/nl/)."""
    try:
        return Path(os.path.relpath(path.resolve(), Path.cwd())).as_posix()
    except ValueError:  # another drive on Windows: no relative way there
        return path.resolve().as_uri()


def ground_truth(questions: Sequence[Question], queries: Sequence[object], corpus: Corpus) -> Markdown:
    """How many questions and queries, over how many documents, and how long the needles are."""
    lengths = pd.Series([len(q.needle) for q in questions])
    return Markdown(say(
        "**{questions}** questions, so **{queries}** queries, spread over "
        "**{covered}** of the **{documents}** documents. Needles are "
        "**{shortest}** to **{longest}** characters long (median **{median:.0f}**).",
        questions=len(questions), queries=len(queries), covered=len({q.doc_id for q in questions}),
        documents=len(corpus), shortest=lengths.min(), longest=lengths.max(), median=lengths.median()))


def model_here(model: HubModel) -> Markdown:
    """Whether one optional model is on this machine (and where), or what to run where there is internet."""
    try:
        path = hub_model_path(model)
    except ModelUnavailable:
        return Markdown(say("- `{name}`: **not on this machine**; run `make models` where there is internet.",
                            name=model.name))
    return Markdown(say("- `{name}`: found at `{path}`.", name=model.name, path=str(path)))


def out_of_domain_kinds(queries: Sequence[OutOfDomain]) -> Markdown:
    """How many out-of-domain queries there are, and how many of each kind (in the order the set first has them)."""
    counts = Counter(q.kind for q in queries)
    kinds = ", ".join(say("**{n}** {kind}", n=n, kind=kind_of(kind)) for kind, n in counts.items())
    return Markdown(say("**{n}** out-of-domain queries: {kinds}.", n=len(queries), kinds=kinds))


def ground_truth_problems(problems: Sequence[object]) -> Markdown:
    """How many problems the ground truth's checks found against the corpus."""
    return Markdown(say("Problems found in the ground truth: **{n}**.", n=len(problems)))


def chapter_figure() -> Markdown:
    """One figure of the chapter, as an example of where they live, and the notebook that measures it here."""
    return Markdown(say("The chapter reports blind chunking destroying **{destroyed}** of its **{questions}** answers. "
                        "Notebook 01 measures the same on this corpus.",
                        destroyed=chapter.DESTROYED_BLIND, questions=chapter.QUESTIONS))


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


# 02. Dense retrieval and paired comparisons

def sign_test_on_chapter_counts() -> Markdown:
    """Whether ragkit's exact sign test gives back the chapter's reported p-values from its own counts."""
    match = [np.isclose(counts_test(wins, losses).p, p, rtol=0.05) for wins, losses, p in chapter.COMPARISONS.values()
             if p is not None]
    return Markdown(f"ragkit's sign test on the chapter's own counts matches its reported p (within rounding) in "
                    f"**{sum(match)} of {len(match)}** cases.")


def room_to_win(ev: Evaluation) -> Markdown:
    """How many queries E could win over C at R@20 (those C misses), here and in the chapter."""
    n = len(ev.queries)
    room = int((ev["C/dense"].per_query("R@20") == 0).sum())
    t = ev.compare("E/dense", "C/dense", "R@20").test
    (e_hits, n_ch), (w, lost, _) = chapter.RECALL20["E"], chapter.COMPARISONS["E/dense", "C/dense", "R@20"]
    missed = n_ch - e_hits + w - lost
    return Markdown(
        f"This corpus: C misses **{room}** of **{n}** queries at R@20, so E can win at most **{room}**; it wins "
        f"**{t.wins}** and loses **{t.losses}**. The chapter: E found **{e_hits}/{n_ch}** and beat C "
        f"**+{w}/-{lost}**, so its C found **{e_hits - w + lost}/{n_ch}** and missed **{missed}**: "
        f"{'more' if missed > room else 'no more'} room than here.")


def interval_width(n: int) -> Markdown:
    """How wide a Wilson interval is at ``n`` queries, and whether a lead of three hits clears it."""
    low, high = wilson(n // 2, n)
    low3, high3 = wilson(n // 2 + 3, n)
    return Markdown(
        f"With **{n}** queries, a recall of **{(n // 2) / n:.2f}** has the interval **[{low:.3f}, {high:.3f}]**: "
        f"**{high - low:.3f}** wide, roughly **±{(high - low) / 2:.3f}**. Three more hits (a lead of **{3 / n:.3f}**) "
        f"give **[{low3:.3f}, {high3:.3f}]**; the two intervals {'overlap' if low3 < high else 'do not overlap'}.")


def headline(ev: Evaluation) -> Markdown:
    """E against A at R@20, query by query, and how many of E's wins are needles A destroyed."""
    c = ev.compare("E/dense", "A/dense", "R@20")
    destroyed = sum(q.qid in ev.destroyed["A"] for q in ev.queries if q.id in c.wins)
    return Markdown(
        f"E wins **{c.test.wins}** queries, A wins **{c.test.losses}**, p = **{c.test.p:.2g}**. Of E's wins, "
        f"**{destroyed}** are queries whose needle A destroyed outright, so they are wins by construction, not by "
        "better ranking.")


def queries_or_needles(ev: Evaluation) -> Markdown:
    """The headline comparison counted in queries and in needles: how many needles the query wins come from."""
    c = ev.compare("E/dense", "A/dense", "R@20")
    n_level = ev.compare("E/dense", "A/dense", "R@20", "needle").test
    needles = len({q.qid for q in ev.queries if q.id in c.wins})
    return Markdown(
        f"Query level: **+{c.test.wins}/-{c.test.losses}**, p = **{c.test.p:.2g}**. The **{c.test.wins}** query wins "
        f"come from only **{needles}** needles. Needle level: **+{n_level.wins}/-{n_level.losses}**, p = "
        f"**{n_level.p:.2g}**.")


def header_alone(ev: Evaluation) -> Markdown:
    """E against A without A's destroyed needles, and E against C: what the header buys, needle by needle."""
    rest = ev.compare("E/dense", "A/dense", "R@20", "needle", drop=ev.destroyed["A"]).test
    alone = ev.compare("E/dense", "C/dense", "R@20", "needle").test
    headline = ev.compare("E/dense", "A/dense", "R@20", "needle").test
    return Markdown(
        f"Without the needles A destroyed, E against A, needle by needle: **+{rest.wins}/-{rest.losses}**, p = "
        f"**{rest.p:.2g}**. The header alone (E against C), needle by needle: **+{alone.wins}/-{alone.losses}**, p = "
        f"**{alone.p:.2g}**. Of the headline's **{headline.wins}** needle wins, **{headline.wins - rest.wins}** are "
        "needles A destroyed.")

# 02b. Statistics further

def clustered_interval(row: pd.Series) -> Markdown:
    """One figure's Wilson interval beside its needle-level cluster bootstrap, and the design effect between them."""
    wilson_width, needle_width = row.high - row.low, row.needle_high - row.needle_low
    return Markdown(
        f"E dense, R@20 = **{row.value:.3f}**. Wilson ({row.n} independent queries): **[{row.low:.3f}, "
        f"{row.high:.3f}]**, **{wilson_width:.3f}** wide. Cluster bootstrap over needles: **[{row.needle_low:.3f}, "
        f"{row.needle_high:.3f}]**, **{needle_width:.3f}** wide. Design effect **{row.design_effect:.2f}**: the "
        f"{row.n} queries weigh as much as about **{row.n / row.design_effect:.0f}** independent ones. The clustered "
        f"interval is **{'wider' if needle_width > wilson_width else 'not wider'}** than Wilson's here.")


def design_effects(deff: pd.DataFrame) -> Markdown:
    """The range of the design effects, what one below 1 means, and why the sign test's unit stays the needle."""
    low, high = deff.min().min(), deff.max().max()
    below = "" if low >= 1 else (
        " Below 1, the phrasings of a needle disagree more often than two independent queries would (one finds the "
        "needle, the other does not), and the clustered interval is the narrower one.")
    return Markdown(
        f"Design effects of the dense runs range from **{low:.2f}** to **{high:.2f}**.{below} Whatever the interval "
        "does, the sign test's unit still has to be the needle: two wins that come from one chunk are one piece of "
        "evidence.")


def metric_shopping(shopping: pd.DataFrame, watched: Sequence[str] = ("F/dense vs E/dense", "B/dense vs A/dense")
                    ) -> Markdown:
    """The most striking look the chapter did not choose, the watched pairs' best metric, and why that misleads."""
    unchosen = shopping[~shopping["chosen by the chapter"]]
    best = unchosen.iloc[0]
    hurts = unchosen[unchosen.comparison.isin(list(watched))].sort_values("p").groupby("comparison").head(1)
    each = " ".join(f"{r['comparison']} is most striking at **{r['metric']}** (+{r['wins']}/-{r['losses']}, raw p = "
                    f"{r['p']:.3g}, Holm p = {r['Holm p']:.3g})." for _, r in hurts.iterrows())
    return Markdown(
        f"Of **{len(shopping)}** looks, the most striking one the chapter did *not* choose is **{best.comparison} at "
        f"{best.metric}**: **+{best.wins}/-{best.losses}**, raw p = **{best.p:.3g}**, Holm p over all {len(shopping)} "
        f"= **{best['Holm p']:.3g}**. {each} Picking the metric that makes a story after seeing the table turns noise "
        "into a finding: the metric has to be fixed first, and every extra look has to pay for itself in the "
        "correction.")


# 03. BM25 and hybrid

def _rank(run: Run, chunk: int) -> int:
    """Where a chunk sits in a run's first ranking, counted from 1."""
    return int(np.where(run.ranking[0] == chunk)[0][0]) + 1


def constant_ranks(r: Retriever, token: str, runs: Mapping[str, Run]) -> Markdown:
    """Which chunks hold a rare token, and where each retriever ranks the first of them."""
    holders = [i for i, c in enumerate(r.chunks) if token in c.content]
    holder = r.chunks[holders[0]]
    ranks = ", ".join(f"{name} **{_rank(run, holders[0])}**" for name, run in runs.items())
    return Markdown(
        f"Chunks containing `{token}`: **{len(holders)}**, in *{holder.doc_id}*, section *{holder.section}*. Its rank "
        f"among **{len(r.chunks)}** chunks: {ranks}.")


def dense_first_choice(r: Retriever, dense: Run, holder: int) -> Markdown:
    """Where dense retrieval looked instead of the chunk that holds the token, and how far each is."""
    best, dist = dense.ranking[0, 0], dense.distance[0] if dense.distance is not None else None
    assert dist is not None, "a dense run carries its distances"
    return Markdown(
        f"Dense's first choice: *{r.chunks[best].doc_id}*, section *{r.chunks[best].section}*, distance "
        f"**{dist[best]:.3f}**. The chunk that holds the constant: distance **{dist[holder]:.3f}**.\n\n"
        f"> {r.chunks[best].content[:300]}...")


def bm25_against_dense(ev: Evaluation, curve: pd.DataFrame) -> Markdown:
    """The chapter's three claims on BM25 (doubles top-1, falls behind around rank 8, fails elsewhere), checked."""
    d1, b1, ch1 = ev["E/dense"].value("R@1"), ev["E/bm25"].value("R@1"), chapter.RERANK["R@1"][0]
    ahead = [k for k in curve.index if curve.loc[k, "E/bm25"] > curve.loc[k, "E/dense"]]
    t1 = ev.compare("E/bm25", "E/dense", "R@1", "needle").test
    t8 = ev.compare("E/bm25", "E/dense", "R@8", "needle").test
    q8 = ev.compare("E/bm25", "E/dense", "R@8").test
    side = "behind" if t8.losses > t8.wins else "ahead" if t8.wins > t8.losses else "level"
    told = "a difference this data can tell apart" if t8.p < 0.05 else "but not distinguishably"
    return Markdown(
        f"- **Top-1**: BM25 **{b1:.3f}**, dense **{d1:.3f}** (ratio **{b1 / d1:.2f}**; the chapter's dense top-1 was "
        f"**{ch1}**, so its BM25 top-1 exceeded **{2 * ch1:.3f}**). Needle by needle at R@1: BM25 wins "
        f"**{t1.wins}**, dense **{t1.losses}**, p = **{t1.p:.2g}**. BM25 more than doubles dense here: "
        f"**{'yes' if b1 > 2 * d1 else 'no'}**.\n"
        f"- **Where BM25 leads**: {'at k = ' + ', '.join(map(str, ahead)) if ahead else 'at no k from 1 to 20'}.\n"
        f"- **Around rank 8**, needle by needle: BM25 wins **{t8.wins}**, dense **{t8.losses}**, p = **{t8.p:.2g}**: "
        f"BM25 is **{side}**, {told}. They fail on different queries: **{q8.wins + q8.losses}** queries are found by "
        "one and not the other.")


def two_scales(distances: np.ndarray, scores: np.ndarray) -> Markdown:
    """The ranges and directions of dense distances and BM25 scores for one query."""
    d, b = distances, scores
    return Markdown(
        f"Dense distances run from **{d.min():.3f}** (best) to **{d.max():.3f}**: lower is better. BM25 scores run "
        f"from **{b.max():.2f}** (best) down to **{b.min():.2f}**: higher is better, and **{int((b == 0).sum())}** of "
        f"**{len(b)}** chunks score exactly zero.")


def rrf_weights(k: int = K) -> Markdown:
    """Reciprocal rank fusion on a small example, and how much rank 1 outweighs rank 10 at ``k`` and at 0."""
    return Markdown(
        f"`rrf([[7, 3, 5], [5, 7, 9]])` → **{rrf([[7, 3, 5], [5, 7, 9]], k).tolist()}**. With k = {k}, rank 1 is "
        f"worth **{(k + 10) / (k + 1):.2f}** times rank 10; with k = 0 it would be worth **{10 / 1:.0f}** times.")


def fused_ranks(runs: Mapping[str, Run], token: str, holder: int, k: int = K) -> Markdown:
    """The token's chunk and hybrid's first chunk: their ranks in each list and their fused scores."""
    top = int(runs["hybrid"].ranking[0, 0])

    def fused(i: int) -> float:
        return sum(1 / (k + _rank(runs[n], i)) for n in ("dense", "bm25"))

    return Markdown(
        f"The `{token}` chunk: dense rank **{_rank(runs['dense'], holder)}**, BM25 rank "
        f"**{_rank(runs['bm25'], holder)}**, fused score **{fused(holder):.4f}**, hybrid rank "
        f"**{_rank(runs['hybrid'], holder)}**.\n\n"
        f"Hybrid's first chunk: dense rank **{_rank(runs['dense'], top)}**, BM25 rank **{_rank(runs['bm25'], top)}**, "
        f"fused score **{fused(top):.4f}**.")


def chapter_verdicts(lines: Sequence[Line], family: int) -> Markdown:
    """Each chapter comparison in a list: what the chapter said, ours at both levels, the claim and the verdict."""
    items = []
    for x in lines:
        assert x.finding is not None and x.needle.p_holm is not None, "a chapter line carries its finding and Holm p"
        items.append(
            f"- **{x.a} vs {x.b} at {x.metric}**: the chapter {x.finding.said}; here +{x.query.test.wins}/"
            f"-{x.query.test.losses} queries (p = {x.query.test.p:.2g}), +{x.needle.test.wins}/-{x.needle.test.losses} "
            f"needles (p = {x.needle.test.p:.2g}, Holm p over {family} = {x.needle.p_holm:.2g}); the chapter claims "
            f"{x.finding.claim}: **{x.verdict}**.")
    return Markdown("\n".join(items))


def ahead_of_both(table: pd.DataFrame) -> Markdown:
    """Whether hybrid is ahead of both parents on every metric's point estimate, and where it is not."""
    behind = [m for m in table.index if not table.loc[m, "hybrid ahead of both"]]
    return Markdown(
        f"Hybrid ahead of both parents on every metric's point estimate here: **{'yes' if not behind else 'no'}**"
        + (f" (not ahead of both at {', '.join(behind)})." if behind else "."))


def needle_tests(rep: Report, against: str = "dense") -> Markdown:
    """A report's comparisons at the needle level, one line each: wins, losses, p, Holm p and what it means."""
    items = []
    for c in (x.needle for x in rep.lines):
        assert c.p_holm is not None, "a report fills in every comparison's Holm p"
        sig = "significant" if c.p_holm < 0.05 else "not significant"
        items.append(f"- **{c.metric}**: hybrid +{c.test.wins}/-{c.test.losses} needles against {against}, "
                     f"p = **{c.test.p:.2g}**, Holm p = **{c.p_holm:.2g}** ({sig} after correction).")
    return Markdown("\n".join(items))


# 04. Reranking

def no_cross_encoder() -> HTML:
    """The boxed warning shown when the chapter's cross-encoder is not installed: what is missing and what to do."""
    return HTML(
        "<div style='border:2px solid #ef6c00;background:#fff3e0;padding:.6em 1em;border-radius:4px'>"
        "<b>No cross-encoder on this machine.</b> The chapter's reranker, "
        "<code>cross-encoder/ms-marco-MiniLM-L-6-v2</code>, is not installed here, so this notebook cannot measure its "
        "gain. Below you get the chapter's own figures, labelled as such, and an offline reranker (MaxSim) that runs "
        "without it. <b>MaxSim is not a stand-in for the cross-encoder's gain</b>: it is a different, untrained "
        "method, and whatever it scores tells you nothing about what the cross-encoder would do on this corpus. To "
        "measure the real thing, run <code>make models</code> on a machine with internet, then rerun this "
        "notebook.</div>")


def chapter_rerank_time() -> Markdown:
    """What the chapter's cross-encoder cost per query."""
    return Markdown(f"The chapter's cross-encoder over its top 25 took **{chapter.RERANK_MS} ms** per query on its "
                    "CPU.")


# 05. Distances

FLOAT32_STEP = float(np.finfo(np.float32).eps)
"""The step float32 resolves near 1: the size of rounding noise in a stored unit vector."""


def identity_noise(check: IdentityCheck) -> Markdown:
    """The identity's two sides on one pair, here and in the chapter: rounding noise or not."""
    noise = "rounding noise" if check.difference < 10 * FLOAT32_STEP else "larger than rounding noise"
    return Markdown(
        f"The two sides differ by **{check.difference:.2e}** here and by **{chapter.IDENTITY['diff']:.2e}** in the "
        f"chapter. A float32 resolves steps of about **{FLOAT32_STEP:.1e}** near 1, so this difference is "
        f"**{noise}**.")


def identity_gap(sample: Sequence[Chunk], chunks: int, documents: int, gap: float) -> Markdown:
    """How a sample of chunk vectors was drawn from ``chunks`` over ``documents``, and its worst identity gap."""
    vectors = len(sample)
    verdict = ("still rounding noise" if gap < 100 * FLOAT32_STEP
               else "more than rounding noise: look for a vector that is not unit length")
    return Markdown(
        f"The sample takes every **{chunks / vectors:.1f}**th chunk of **{chunks}** and covers "
        f"**{len({c.doc_id for c in sample})}** of the **{documents}** documents.  \n"
        f"Worst gap over **{vectors * (vectors - 1) // 2}** distinct pairs of **{vectors}** chunk vectors: "
        f"**{gap:.2e}**; the chapter, over its own 200: **{chapter.IDENTITY['max_diff_200']:.2e}**. That is "
        f"**{verdict}**.")


def unnormalised(raw: IdentityCheck, unit: IdentityCheck, predicted: float) -> Markdown:
    """What dropping the normalisation does to the identity, to cosine, and to the general formula's prediction."""
    return Markdown(
        f"Un-normalised, the two sides of the identity differ by **{raw.difference:.4f}**, against "
        f"**{unit.difference:.2e}** on unit vectors. The cosine distance moved by only "
        f"**{abs(raw.cosine_distance - unit.cosine_distance):.1e}**: cosine divides the norms out, so it never "
        f"noticed. The general line above predicts L2²/2 = **{predicted:.6f}** from the norms and the cosine; "
        f"measured: **{raw.half_l2_squared:.6f}**.")


def length_and_norm(lengths: pd.DataFrame) -> Markdown:
    """How a chunk's length goes with its un-normalised norm, and that normalised norms stay at 1."""
    corr = lengths.corr().loc["word pieces", "norm, un-normalised"]
    return Markdown(
        f"Correlation between length (word pieces) and un-normalised norm over these **{len(lengths)}** chunks: "
        f"**{corr:.2f}**, so longer chunks tend to have **{'shorter' if corr < 0 else 'longer'}** vectors. The "
        f"normalised norms stay between **{lengths['norm, normalised'].min():.6f}** and "
        f"**{lengths['norm, normalised'].max():.6f}** whatever the length.")


def length_sensitivity(lengths: pd.DataFrame) -> Markdown:
    """For one query: which distance follows chunk length more, un-normalised L2 or cosine."""
    corr_l2, corr_cos = lengths.corr().loc[["L2, un-normalised", "cosine distance"], "word pieces"]
    return Markdown(
        f"For this query, un-normalised L2 correlates with chunk length at **{corr_l2:.2f}**, cosine distance at "
        f"**{corr_cos:.2f}**: the un-normalised distance is the "
        f"**{'more' if abs(corr_l2) > abs(corr_cos) else 'less'}** length-sensitive of the two.")


def nearest_moved(l2: np.ndarray, cosine: np.ndarray) -> Markdown:
    """For how many queries the nearest chunk differs between un-normalised L2 and cosine distance."""
    moved = int((l2.argmin(axis=1) != cosine.argmin(axis=1)).sum())
    return Markdown(
        f"For **{moved}** of **{len(l2)}** queries the nearest of these chunks is a different one under "
        "un-normalised L2 than under cosine distance. How the distance to the nearest chunk relates to the *query's* "
        "length and norm:")


def length_cut(nearest: pd.DataFrame) -> Markdown:
    """Whether a fixed cut on each distance would be a cut on the query's length."""
    r_l2, r_cos = nearest.corr().loc[["nearest L2, un-normalised", "nearest cosine distance"], "query word pieces"]
    verdict = ("A fixed cut on un-normalised L2 would largely be a cut on how many words the user typed; a cut on "
               "cosine distance is not." if abs(r_l2) >= 0.5 and abs(r_cos) < abs(r_l2) / 2
               else "On this corpus the contrast is weaker than the algebra suggests: look at the panels.")
    return Markdown(f"Correlation with query length: nearest un-normalised L2 **{r_l2:.2f}**, nearest cosine distance "
                    f"**{r_cos:.2f}**. {verdict}")


# 06. Thresholds and bluffs

def query_line(query: OutOfDomain) -> Markdown:
    """One out-of-domain query, with its kind."""
    return Markdown(say("Query: **{query}** ({kind}).", query=query.query, kind=kind_of(query.kind)))


def gate_kept(kept: Mapping[float | None, int]) -> Markdown:
    """How many chunks the gate keeps for one query at each cut (None: no cut), and how many it keeps at most."""
    cuts = ", ".join(say("cut {cut}: **{n}**", cut=_("none") if cut is None else cut, n=n) for cut, n in kept.items())
    return Markdown(say("The gate keeps at most **{keep}** chunks. Chunks kept: {cuts}.", keep=KEEP, cuts=cuts))


def distributions(s: Sweep) -> Markdown:
    """The worst answerable query against the closest out-of-domain one: do the two distributions overlap?"""
    worst = int(np.argmax(np.where(np.isfinite(s.best_answer), s.best_answer, -np.inf)))
    overlap = s.worst_in_domain > s.best_out_of_domain
    verdict = (_("no single cut answers every answerable question and refuses every out-of-domain one, as in the "
                 "chapter.") if overlap else _("here a perfect cut exists, unlike in the chapter."))
    return Markdown(say(
        "Worst answerable query: *{query}*, its answer at **{worst:.3f}** "
        "(the chapter: **{chapter_worst}**).  \n"
        "Closest out-of-domain query: at **{best:.3f}** "
        "(the chapter: **{chapter_best}**).  \n"
        "So the two distributions **{relation}**: {verdict}",
        query=s.queries[worst].text, worst=s.worst_in_domain, chapter_worst=chapter.THRESHOLD["worst_in_domain"],
        best=s.best_out_of_domain, chapter_best=chapter.THRESHOLD["best_out_of_domain"],
        relation=_("overlap") if overlap else _("do not overlap"), verdict=verdict))


def crossings(s: Sweep) -> Markdown:
    """How many queries of each kind sit on the wrong side of the other kind's extreme."""
    return Markdown(say(
        "Answerable queries whose answer is further away than the closest out-of-domain query: "
        "**{further}** of {queries}.  \n"
        "Out-of-domain queries closer to some chunk than the worst answer is to its query: "
        "**{closer}** of {out_of_domain}.",
        further=int((s.best_answer > s.best_out_of_domain).sum()), queries=len(s.queries),
        closer=int((s.nearest_out < s.worst_in_domain).sum()), out_of_domain=len(s.out_of_domain)))


def strict_cut(s: Sweep) -> Markdown:
    """The strict cut's refusals for the bluffs it stops, and the default cut's bluffs, beside the chapter's."""
    ours, theirs, default = s.at(STRICT_CUT), chapter.THRESHOLD, s.at(DEFAULT_CUT)
    verdict = (_("the default cut is more forgiving to bluffs here than there.")
               if default.bluffs > theirs["bluffs"][DEFAULT_CUT] else _("the default cut does at least as well here."))
    return Markdown(say(
        "At {strict} this corpus refuses **{refused}** of {in_domain} answerable queries "
        "(the chapter: **{chapter_refused}**) to bring bluffs down to **{bluffs}** of "
        "{out_of_domain} (the chapter: **{chapter_bluffs}**).  \n"
        "At {default} we bluff **{default_bluffs}** times against the chapter's "
        "**{chapter_default_bluffs}**: {verdict}",
        strict=STRICT_CUT, refused=ours.refused, in_domain=ours.in_domain, chapter_refused=theirs["refused_at_0.525"],
        bluffs=ours.bluffs, out_of_domain=ours.out_of_domain, chapter_bluffs=theirs["bluffs"][STRICT_CUT],
        default=DEFAULT_CUT, default_bluffs=default.bluffs, chapter_default_bluffs=theirs["bluffs"][DEFAULT_CUT],
        verdict=verdict))


def sweep_shape(s: Sweep) -> Markdown:
    """Whether the sweep trades bluffs for refusals monotonically, and which kinds bluff at the default cut."""
    grid = tables.sweep(s)
    shape = bool(grid.bluffs.is_monotonic_decreasing and grid.refused.is_monotonic_increasing)
    kinds = pd.Series([b.query.kind for b in s.bluffs(DEFAULT_CUT)]).value_counts()
    by_kind = ", ".join(say("**{n}** {kind}", n=n, kind=kind_of(k)) for k, n in kinds.items()) or _("none")
    return Markdown(say(
        "Bluffs never rise and refusals never fall as the cut tightens: **{shape}** "
        "({same} trade-off as the chapter's).  \n"
        "Bluffs at {cut} by kind: {by_kind}.",
        shape=_truth(shape), same=_("the same") if shape else _("not the same"), cut=DEFAULT_CUT, by_kind=by_kind))


def _truth(flag: bool) -> str:
    """A yes/no figure as the notebooks print it: Python's True and False in English."""
    return _("True") if flag else _("False")


def _quoted(chunk: Chunk) -> str:
    return f"\n\n```text\n{chunk.content}\n```"


def near_miss(s: Sweep, near: Bluff) -> Markdown:
    """Where the nearest out-of-domain query lands, and how many true answers are further away; then the chunk."""
    further = int((s.best_answer > near.distance).sum())
    verdict = (_("most of them.") if further > len(s.queries) / 2
               else _("not most of them, but a cut that stops it refuses those."))
    return Markdown(say(
        "The nearest out-of-domain query, *{query}* ({kind}, {topic}), lands on "
        "**{doc_id} > {section}** at **{distance:.3f}** "
        "(the chapter's near miss: **{chapter_best}**).  \n"
        "That is closer than the true answer of **{further}** of {queries} answerable queries: {verdict}",
        query=near.query.query, kind=kind_of(near.query.kind), topic=near.query.topic, doc_id=near.chunk.doc_id,
        section=near.chunk.section, distance=near.distance, chapter_best=chapter.THRESHOLD["best_out_of_domain"],
        further=further, queries=len(s.queries), verdict=verdict)
        + _quoted(near.chunk))


def literal_match(s: Sweep, bluff: Bluff, cuts: Sequence[float] = (DEFAULT_CUT, STRICT_CUT)) -> Markdown:
    """Where an out-of-domain query lands, what each cut does with it, and whether the chunk holds *Paris*."""
    bluffs = {c: any(b.query == bluff.query for b in s.bluffs(c)) for c in cuts}
    fate = "; ".join(say("at cut {cut} it **bluffs**", cut=c) if p else say("at cut {cut} it **is refused**", cut=c)
                     for c, p in bluffs.items())
    return Markdown(say(
        "Nearest chunk: **{doc_id} > {section}** at **{distance:.3f}**. "
        "{fate}. Does that chunk contain the word *Paris*? **{paris}**.",
        doc_id=bluff.chunk.doc_id, section=bluff.chunk.section, distance=bluff.distance,
        fate=f"{fate[0].upper()}{fate[1:]}", paris=_truth("Paris" in bluff.chunk.content))
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


# 08. Production

def needle_after_extraction(q: Question, clean: str, extracted: str) -> Markdown:
    """Whether a needle survives a page header that extraction put in the middle of it."""
    return Markdown(f"Needle of **{q.id}** found in the clean text: **{q.needle in clean}**; after a page header "
                    f"lands in it: **{q.needle in extracted}**.")


def guessed_counts(counts: pd.DataFrame) -> Markdown:
    """Whether a client's guess of the chunk count, the indexer's count and the stored vectors agree."""
    guess, counted, held = (counts[c] for c in counts.columns)
    return Markdown(f"The guess matches the indexer's count for **{(guess == counted).sum()}** of **{len(counts)}** "
                    f"documents; the recorded count matches the stored vectors for **{(counted == held).sum()}**.")


def killed_update(returncode: int, unchanged: bool) -> Markdown:
    """What an update killed in the middle of its writes left behind."""
    return Markdown(f"The update process ended with signal **{-returncode}** (SIGKILL) in the middle of its writes. "
                    f"The index still holds exactly what it held before: **{unchanged}**; its status is unchanged, "
                    "stale documents and all.")


def update_summary(before: Status, after: Status, old: Mapping[str, Entry], new: Mapping[str, Entry],
                   corpus: Corpus) -> Markdown:
    """What an update re-embedded, kept and dropped, against what the status before it said it would."""
    to_embed = sorted([d for d in before.stale if d in corpus.ids] + list(before.new))
    rewritten = sorted(d for d, e in new.items() if e.status == "indexed" and
                       (d not in old or old[d].content_hash != e.content_hash or old[d].status != "indexed"))
    kept = [d for d in after.current if d not in rewritten]
    return Markdown(
        f"Status before the update: **{len(before.stale)}** stale and **{len(before.new)}** new; stale ones still in "
        f"the folder, so to be embedded again: **{len(to_embed)}** ({', '.join(to_embed)}). The update wrote new "
        f"vectors for **{len(rewritten)}** document(s) ({', '.join(rewritten)}) and left **{len(kept)}** untouched. "
        f"Dropped: **{', '.join(sorted(set(old) - set(new))) or 'none'}**. Still failed: **{len(after.failed)}**. "
        f"Only the changed documents were re-embedded: **{rewritten == to_embed}**.")


def repaired(foreign: Status, after: Status, corpus: Corpus, searchable: bool) -> Markdown:
    """What an update did to an index another configuration had made stale, and whether it opens again."""
    return Markdown(
        f"Stale before the update: **{len(foreign.stale)}** documents, of which "
        f"**{sum(d in corpus.ids for d in foreign.stale)}** were still in the folder and so re-embedded; after it: "
        f"**{len(after.current)}** current, **{len(after.stale)}** stale. The index opens again: **{searchable}**.")


# The exercises

def destroyed_at_size(carried: np.ndarray, mine: np.ndarray, size: int) -> Markdown:
    """Needles blind chunking destroys at the course's size and at the student's, beside the chapter's count."""
    return Markdown(f"Needles destroyed by blind chunking: the chapter **{chapter.DESTROYED_BLIND}**; this corpus "
                    f"**{int((~carried).sum())}** of **{len(carried)}** at {SIZE} characters, **{int((~mine).sum())}** "
                    f"at your {size}.")


def perfect_cut(tune: Sweep) -> Markdown:
    """The worst in-domain and best out-of-domain distances of a half, beside the chapter's: is a perfect cut there?"""
    exists = tune.best_out_of_domain > tune.worst_in_domain
    return Markdown(say(
        "Worst in-domain distance: the chapter **{chapter_worst}**, `tune` "
        "**{worst:.3f}**. Best out-of-domain distance: the chapter "
        "**{chapter_best}**, `tune` **{best:.3f}**. A perfect cut "
        "exists only when the second is larger than the first: here it **{exists}**.",
        chapter_worst=chapter.THRESHOLD["worst_in_domain"], worst=tune.worst_in_domain,
        chapter_best=chapter.THRESHOLD["best_out_of_domain"], best=tune.best_out_of_domain,
        exists=_("does") if exists else _("does not")))


def cost_valleys(costs: pd.DataFrame, tune: Sweep) -> Markdown:
    """The cheapest valleys of a cost curve, with their refusals, and the refusal ceiling."""
    valleys = ", ".join(say("**{cut:.3f}** (cost **{cost:g}**, {refused} refused)", cut=cut, cost=cost,
                            refused=int(costs.refused[costs.cut == cut].item()))
                        for cut, cost in cost_minima(costs["cost"]))
    return Markdown(say(
        "On `tune`, the cheapest valleys: {valleys}; at most **{ceiling:g}** of the "
        "**{queries}** answerable queries may be refused.",
        valleys=valleys, ceiling=EX2.max_refused * len(tune.queries), queries=len(tune.queries)))


def ex2_rules(tune: Sweep, judge: Sweep) -> Markdown:
    """Exercise 2's costs and refusal ceiling, and how many needles and queries each half holds."""
    return Markdown(say(
        "The rules: bluff cost **{bluff:g}**, refusal cost **{refusal:g}**, at most **{ceiling:.0%}** of the "
        "answerable queries refused. Tuning half: **{needles}** needles (**{queries}** queries) and "
        "**{out_of_domain}** out-of-domain queries; the judging half keeps the other **{judge_needles}** and "
        "**{judge_out_of_domain}**.",
        bluff=EX2.bluff_cost, refusal=EX2.refusal_cost, ceiling=EX2.max_refused, needles=len(tune.questions),
        queries=len(tune.queries), out_of_domain=len(tune.out_of_domain), judge_needles=len(judge.questions),
        judge_out_of_domain=len(judge.out_of_domain)))


def cost_on_tune(row: SweepRow) -> Markdown:
    """What one cut does on the tuning half: bluffs, refusals and exercise 2's total cost."""
    return Markdown(say(
        "At **{cut}** on `tune`: **{bluffs}** bluffs, **{refused}** of **{in_domain}** refused, cost **{cost:g}**.",
        cut=row.cut, bluffs=row.bluffs, refused=row.refused, in_domain=row.in_domain,
        cost=row.bluffs * EX2.bluff_cost + row.refused * EX2.refusal_cost))


def cheapest_cuts(table: pd.DataFrame, tune: Sweep) -> Markdown:
    """The cheapest cut of all against the cheapest within the refusal ceiling, and what no threshold costs."""
    cheapest = table.loc[table.cost.idxmin()]
    allowed = table[table["within ceiling"]]
    best, none = allowed.loc[allowed.cost.idxmin()], tune.at(None)
    return Markdown(
        f"Cheapest cut of all: **{cheapest.cut:.3f}** (cost **{cheapest.cost:g}**), but it refuses "
        f"**{int(cheapest.refused)}** of **{len(tune.queries)}** answerable queries ({cheapest['refused share']:.0%}), "
        f"over the ceiling of {EX2.max_refused:.0%}. Cheapest cut within the ceiling: **{float(best.cut):.3f}**, with "
        f"**{int(best.bluffs)}** bluffs and **{int(best.refused)}** refusals ({best['refused share']:.0%}), cost "
        f"**{best.cost:g}** (no threshold at all costs "
        f"**{none.bluffs * EX2.bluff_cost + none.refused * EX2.refusal_cost:g}**).")


def ticket_words(q: Question) -> Markdown:
    """One question's needle and ticket, the distinctive words they share and how much the ticket copies."""
    copied = copied_share(content_words(q.ticket), content_words(q.question))
    return Markdown(
        f"Needle of **{q.id}**:\n\n> {q.needle}\n\nIts ticket:\n\n> {q.ticket}\n\nShared distinctive words: "
        f"**{shared_needle_words(q.ticket, q.needle)}**; copied share of the course question: **{copied:.0%}** "
        f"(a copy from {EX3.copy_share:.0%} on).")


def header_duel(ev: Evaluation) -> Markdown:
    """E against C at R@20, needle by needle, beside the chapter's count and the verdict on its finding."""
    duel = ev.compare("E/dense", "C/dense", "R@20", "needle").test
    wins, losses, p = chapter.COMPARISONS[("E/dense", "C/dense", "R@20")]
    return Markdown(
        f"E vs C at R@20: the chapter **+{wins}/-{losses}** queries, p = **{p}**; this corpus, needle by needle (both "
        f"phrasings of a needle count once), **+{duel.wins}/-{duel.losses}**, p = **{duel.p:.3g}**: "
        f"**{verdict(wins - losses, duel.wins, duel.losses, duel.p)}** with the chapter's finding that the header "
        "helps.")


def header_room(ev: Evaluation, questions: int) -> Markdown:
    """How much room there was for a header to help: recall at 20 without and with it, and the needles at stake."""
    duel = ev.compare("E/dense", "C/dense", "R@20", "needle").test
    return Markdown(
        f"Recall@20 without the header (C): **{ev['C/dense'].value('R@20'):.3f}**; with it (E): "
        f"**{ev['E/dense'].value('R@20'):.3f}**; needles where they disagree: **{duel.wins + duel.losses}** of "
        f"**{questions}**.")
