# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: -all
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
# # Exercise 1. Find a needle that blind chunking destroys
# What you will see: where every needle sits in its 512-character blind window, and which ones an edge slices in two.
# What you will do: name one destroyed needle and the exact character offset where the cut falls.

# %% [markdown]
# ## The task, and why it matters
#
# In the chunking notebook (see 01-chunking) you met strategy A: cut each document every 512 characters, without
# looking at what is there. When a cut lands inside a needle, no chunk carries the whole sentence. The answer is
# *destroyed*: no retriever, reranker, threshold or larger model can ever bring it back, and from the outside it looks
# exactly like a weak retriever.
#
# Your job is to prove one such destruction by hand. Give the id of a question whose needle strategy A destroys, and
# the character offset in its document where the blind window that cuts it begins. If you can point at the cut, you
# can tell a chunking failure from a retrieval failure, which is most of debugging a RAG system.

# %%
from IPython.display import Markdown, display
import pandas as pd
import ragkit.course
from ragkit import chapter, plots, widgets
from ragkit.chunking import SIZE, blind_window_start
from ragkit.evaluation import needle_hits, needle_windows
from ragkit.exercises import check_destroyed_needle

course = ragkit.course.load()

# %% [markdown]
# ## Tools to investigate
#
# `needle_windows` gives, for every question, the needle's offset inside the blind window where it starts, and its
# length. Each bar below is one needle drawn inside its window; the dashed line is where the window ends.

# %%
windows = needle_windows(course.corpus, course.questions)
plots.needle_cuts(windows)

# %% [markdown]
# The same numbers as a table, so that you can sort and filter them yourself.

# %%
pd.DataFrame(windows, columns=["question", "offset in window", "length"]).set_index("question")

# %% [markdown]
# How many needles does A destroy on this corpus? A needle is carried when some chunk's own words contain all of it.
# The chapter's figure is shown beside ours; the two corpora differ, so the counts need not agree.

# %%
carried = needle_hits(course.chunks("A"), course.questions).any(axis=1)
display(Markdown(f"Needles destroyed by blind chunking: the chapter **{chapter.DESTROYED_BLIND}**; "
                 f"this corpus **{int((~carried).sum())}** of **{len(course.questions)}**."))

# %% [markdown]
# Pick a strategy and a question to see the document around a needle, with every chunk edge drawn in orange.

# %%
widgets.ChunkExplorer(course, strategy="A").widget()

# %% [markdown]
# One trap: the windows do not start at character 0 of the file. The `# ` title line is never chunked, so the
# windows restart right after it. `blind_window_start(document, position)` tells you where the window holding any
# character begins. Here it is for one position of the first document, next to the naive guess.

# %%
doc, position = course.corpus.documents[0], 1500
display(Markdown(f"Character **{position}** of `{doc.id}`: its blind window starts at "
                 f"**{blind_window_start(doc, position)}**; a naive `position // {SIZE} * {SIZE}` says "
                 f"**{position // SIZE * SIZE}**."))

# %% [markdown]
# ## ✏️ Your answer
#
# Replace the two `None`s. `question_id` is a string such as `"qNN"`; `cut_at` is a character offset in the whole
# document (not inside the window).

# %%
question_id = None  # your answer
cut_at = None  # your answer

# %% [markdown]
# ## Check

# %%
check_destroyed_needle(course, question_id, cut_at)

# %% [markdown]
# ## Try this
#
# 1. Switch the chunk explorer to strategy B for your question. Which chunk now carries the needle, and is it in
#    the chunk's own words or in the part it carries from its neighbour?
# 2. Call `needle_windows(course.corpus, course.questions, size=400)`. Does a smaller window destroy more needles
#    or fewer, and why would you expect that?
# 3. Your needle is destroyed for every retriever. Which number in an evaluation table would show that, and which
#    number would hide it?
