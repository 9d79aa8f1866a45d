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
# # Exercise 2. Choose a threshold when a bluff costs five refusals
# What you will see: how many out-of-domain queries bluff and how many answerable questions are refused at every cut.
# What you will do: pick the cosine-distance cut that makes the total cost as small as possible.

# %%
# On Google Colab only (anywhere else this cell does nothing): install ragkit and turn on its widgets.
import sys

if "google.colab" in sys.modules:
    import os, subprocess
    target = os.environ.get("RAGKIT_INSTALL", "ragkit @ git+https://github.com/OWNER/ragkit@main")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", target], check=True)
    from google.colab import output
    output.enable_custom_widget_manager()
    print("On Colab, a plotly chart inside a widget may stay blank: Colab does not run plotly's FigureWidget.")

# %% [markdown]
# ## The task, and why it matters
#
# A retriever always returns something. The threshold is the only part of the pipeline that can say "I don't know":
# keep at most four chunks, and only those closer to the query than the cut (see 06-thresholds). In the
# chapter no single cut keeps every answerable question and refuses every out-of-domain one (the first tool below
# checks whether that holds here too), so someone has to decide which mistake is worse.
#
# Here the decision has been made for you. Your product owner says a *bluff* (an out-of-domain query that still gets
# sources and so an invented-looking answer) costs five times as much as a *refusal* (an answerable question turned
# away). Find the cut that minimises
#
# > total cost = bluffs × bluff cost + refusals × refusal cost
#
# for dense retrieval on strategy E. Choosing a threshold from stated costs, rather than by feel, is a decision you
# can defend and revisit when the costs change.
#
# One more rule, the one that makes the number honest: a cut tuned on the very queries that judge it flatters itself.
# So the queries are split in two with a fixed seed, by needle (both phrasings of a needle stay on the same side)
# and by out-of-domain query. You choose on `tune`; the check judges your cut on `judge`, which you must not use.

# %%
from IPython.display import Markdown, display
import numpy as np
import ragkit.teach.course
from ragkit.teach import chapter, plots, tables, widgets
from ragkit.answer import DEFAULT_CUT
import plotly.express as px
from ragkit.teach.exercises import check_threshold_choice, cost_minima, cost_table, threshold_halves

course = ragkit.teach.course.load()
s = course.sweep("E", "dense")
BLUFF_COST, REFUSAL_COST = 5, 1
tune, judge = threshold_halves(s)
display(Markdown(f"Tuning half: **{len(tune.questions)}** needles (**{len(tune.queries)}** queries) and "
                 f"**{len(tune.out_of_domain)}** out-of-domain queries; the judging half keeps the other "
                 f"**{len(judge.questions)}** and **{len(judge.out_of_domain)}**."))

# %% [markdown]
# ## Tools to investigate
#
# First the two distances that say why no cut is perfect: the answerable question furthest from its answer, and
# the out-of-domain query closest to some chunk. The chapter's pair is shown beside ours.

# %%
display(Markdown(
    f"Worst in-domain distance: the chapter **{chapter.THRESHOLD['worst_in_domain']}**, "
    f"ours **{s.worst_in_domain:.3f}**. "
    f"Best out-of-domain distance: the chapter **{chapter.THRESHOLD['best_out_of_domain']}**, "
    f"ours **{s.best_out_of_domain:.3f}**. A perfect cut exists only when the second is larger than the first: "
    f"here it **{'does' if s.best_out_of_domain > s.worst_in_domain else 'does not'}**."))

# %% [markdown]
# The sweep counts, for a grid of cuts, the bluffs (`bluffs` of `out_of_domain`) and the refusals (`refused` of
# `in_domain`). The first row is no threshold at all.

# %%
tables.sweep(s).astype({"cut": object}).fillna({"cut": "none"})  # the first row: no threshold at all

# %% [markdown]
# The same sweep as two curves: bluffs fall as the cut gets stricter, refusals rise.

# %%
plots.bluffs_and_refusals(s)

# %% [markdown]
# Move the slider: the explorer shows, for any cut, the counts and which out-of-domain queries still bluff.

# %%
widgets.ThresholdExplorer(s).widget()

# %% [markdown]
# The total cost over every cut, on all queries and on each half. On all queries the curve has two valleys of nearly
# the same depth; which one is "the" minimum is decided by a query or two, which is exactly why a cut should be
# chosen on one set of queries and judged on another.

# %%
costs = cost_table(s, BLUFF_COST, REFUSAL_COST)
(first, c1), (second, c2) = cost_minima(costs["all"])
display(Markdown(f"On all queries the two cheapest valleys: **{first:.3f}** (cost **{c1:g}**) and **{second:.3f}** "
                 f"(cost **{c2:g}**)."))
plots.described(px.line(costs, x="cut", y=["all", "tune", "judge"], labels={"value": "total cost", "variable": "queries"},
        title=f"Total cost (bluff {BLUFF_COST}, refusal {REFUSAL_COST}) against the cut", template="plotly_white"),
                plots.lowest_points(costs, "cut", ["all", "tune", "judge"]))

# %% [markdown]
# `s.at(cut)` evaluates any cut, not only the grid's. For instance, the chapter's default cut:

# %%
row = s.at(DEFAULT_CUT)
display(Markdown(f"At **{row.cut}**: **{row.bluffs}** bluffs, **{row.refused}** refusals, cost "
                 f"**{row.bluffs * BLUFF_COST + row.refused * REFUSAL_COST}**."))

# %% [markdown]
# ## ✏️ Your answer
#
# Replace `None` with a cosine distance between 0.3 and 1.0, chosen on the tuning half only. Hint: `tables.sweep(tune, cuts)`
# accepts your own grid of cuts, and a table can take a new column.

# %%
my_cut = None  # your answer

# %% [markdown]
# ## Check

# %%
check_threshold_choice(s, my_cut, bluff_cost=BLUFF_COST, refusal_cost=REFUSAL_COST)

# %% [markdown]
# ## Try this
#
# 1. Make a refusal as expensive as a bluff (`BLUFF_COST = 1`). Where does the best cut move, and why in that
#    direction?
# 2. The check judged your cut on the held-out half. How far was it from the best cut there, and what does that say
#    about a threshold tuned on 32 needles? Compute a Wilson interval for its bluff rate with
#    `ragkit.statistics.wilson`.
# 3. Look at the queries that still bluff at your cut (`s.bluffs(my_cut)`). Would more documents, a different
#    retriever or a stricter cut fix them, and at what price?
