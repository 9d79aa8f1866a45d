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
# **Learning objectives.** After this notebook you can:
#
# - embed a query and rank chunks by cosine distance
# - report recall@k and MRR with 95% Wilson intervals
# - compare two runs with the paired sign test, and write that test in five lines checked against scipy
# - say whether the chapter's comparisons reproduce on this corpus, and why they might not

# %% [markdown]
# # 02. Dense retrieval and paired comparisons
#
# You will see how a query becomes a vector and meets every chunk in one matrix product, how good the six chunking strategies are at finding the needles, with honest error bars,
# and why the right way to compare two strategies is query by query, with a sign test, not by staring at two averages.

# %%
import time

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit.teach import chapter, plots, widgets
from ragkit.evaluation import METRICS, against_chapter, family, metric_shopping
from ragkit.teach.latency import measure, timings_table
from ragkit.statistics import sign_test, verdict, wilson

course = ragkit.teach.course.load()
ev = course.evaluation("ABCDEF")
r = course.retriever("E")
texts = [q.text for q in course.queries]
display(Markdown(course.truncation_note()))

# %%
from ragkit.teach import reminders

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
norms = np.linalg.norm(Q, axis=1)
same = np.array_equal(np.argsort(D, axis=1, kind="stable"), r.dense(texts).ranking)
display(Markdown(f"Queries: **{Q.shape[0]}** vectors of **{Q.shape[1]}** dimensions; chunks of strategy E: **{r.vectors.shape[0]}**. "
                 f"Distance matrix: **{D.shape[0]} × {D.shape[1]}**. Query vector lengths run from **{norms.min():.6f}** to **{norms.max():.6f}**. "
                 f"Sorting the rows by hand gives the same rankings as `r.dense(...)`: **{same}**."))

# %% [markdown]
# How expensive is that product? Time it for all queries at once and divide: that is a *batched* figure, with numpy free to use every core.

# %%
t = time.perf_counter()
for _ in range(50):
    1.0 - Q @ r.vectors.T
ms = 1000 * (time.perf_counter() - t) / 50 / len(Q)
display(Markdown(f"Batched: all **{len(Q)}** queries against **{len(r.vectors)}** chunks at once, numpy's default threads, divided by {len(Q)}: "
                 f"**{ms:.4f} ms** per query. This is *not* comparable with the chapter's single-threaded one-query figure; the table below is."))

# %% [markdown]
# The chapter timed one query at a time on one thread. The next cell does the same here, and also times what dense search needs before the scan:
# turning the question into a vector. Each row says how it was measured. The query is embedded by the model itself (the cache would make it free),
# after the model is loaded. On a machine shared with others the figures move from run to run.

# %%
timings_table([t for t in measure(r, course.queries[0].text) if t.stage in ("query embedding", "dense scan")])

# %% [markdown]
# Now look at one ranking. Below are the five nearest chunks for the first query, with their distances and whether each one carries the whole needle.
# Compare the spread of the top five with the spread over all chunks: a small gap between the first few means the model sees them all as *about* the topic, and is far less sure which one holds the answer.

# %%
run, q = r.dense(texts), course.queries[0]
needle = next(x.needle for x in course.questions if x.id == q.qid)
top = run.distance[0, run.top(0, 5)]
display(Markdown(f"**Query** ({q.phrasing}): {q.text}\n\n**Needle**: {needle}\n\nThe top five span **{top.min():.3f}** to **{top.max():.3f}**; "
                 f"all chunks span **{run.distance[0].min():.3f}** to **{run.distance[0].max():.3f}**."))
pd.DataFrame([{"rank": i + 1, "distance": round(float(run.distance[0, j]), 3), "document": r.chunks[j].doc_id,
               "section": r.chunks[j].section, "carries the needle": needle in r.chunks[j].carried}
              for i, j in enumerate(run.top(0, 5))])

# %% [markdown]
# ## Recall@k and MRR, with intervals
#
# For each query ragkit records the rank of the first chunk that carries the whole needle (0 if none does).
# Two summaries follow from those ranks:
#
# - **recall@k**: the share of queries whose needle appears in the top k. Use k equal to the number of chunks you will put in the prompt.
# - **MRR** (mean reciprocal rank): the average of 1/rank, counting a miss as 0. It rewards putting the answer first, not just somewhere near the top.
#
# Each recall is a proportion of a small number of queries, so it comes with a 95% Wilson interval in brackets. The last column counts needles that no chunk carries at all (the chunking notebook shows why).

# %%
ev.summary().query("retriever == 'dense'").drop(columns="retriever")

# %% [markdown]
# The same numbers as curves, k from 1 to 20. The shaded band around each line is its Wilson interval. Watch how much the bands overlap.

# %%
plots.recall_curves(ev, "dense")

# %% [markdown]
# ## Why a four-point lead says nothing
#
# Suppose a strategy finds the needle for exactly half of the queries. How sure can you be that its true recall is one half? The Wilson interval answers that.

# %%
n = len(course.queries)
low, high = wilson(n // 2, n)
lead = 3 / n  # the smallest whole number of queries worth at least four points
low3, high3 = wilson(n // 2 + 3, n)
display(Markdown(f"With **{n}** queries, a recall of **{(n // 2) / n:.2f}** has the interval **[{low:.3f}, {high:.3f}]**: "
                 f"**{high - low:.3f}** wide, roughly **±{(high - low) / 2:.3f}**. Three more hits (a lead of **{lead:.3f}**) "
                 f"give **[{low3:.3f}, {high3:.3f}]**; the two intervals {'overlap' if low3 < high else 'do not overlap'}."))

# %% [markdown]
# So two strategies a few points apart are, on their own intervals, indistinguishable. But the intervals treat the two strategies as if they had been tested on different queries.
# They were not: both answered *the same* queries. That pairing is information you should use.
#
# ## The paired sign test
#
# Line the two strategies up query by query. Most queries are ties: both find the needle, or both miss. Ties tell you nothing about which is better, so drop them.
# What is left are the *discordant* queries: A wins (A hits, B misses) or B wins. If the two strategies were equally good, each discordant query would be a fair coin toss.
# The exact two-sided sign test asks how surprising the observed split of wins and losses would be under that coin.
#
# Here is the chapter's headline comparison, boundaries plus header (E) against blind cuts (A), at R@20, on this corpus.

# %%
c = ev.compare("E/dense", "A/dense", "R@20")
destroyed = sum(q.qid in ev.destroyed["A"] for q in course.queries if q.id in c.wins)
display(Markdown(f"E wins **{c.test.wins}** queries, A wins **{c.test.losses}**, p = **{c.test.p:.2g}**. "
                 f"Of E's wins, **{destroyed}** are queries whose needle A destroyed outright, so they are wins by construction, not by better ranking."))

# %% [markdown]
# ## Queries are not needles
#
# That test counted every query as an independent pair. They are not: each needle is asked twice (question and ticket), and both phrasings
# look for the same sentence in the same chunk. If E's chunk is easy to find, it is usually easy to find for both phrasings, so one good chunk
# shows up as two wins. Counting them twice makes the evidence look stronger than it is (statisticians call it *pseudo-replication*).
#
# The honest unit is the needle. Give each needle a score per run: the share of its phrasings that hit (0, one half or 1 with two phrasings).
# A needle whose score differs between the two runs is one win or one loss; the sign test then runs over needles.

# %%
n_level = ev.compare("E/dense", "A/dense", "R@20", "needle")
needles_in_wins = len({q.qid for q in course.queries if q.id in c.wins})
display(Markdown(f"Query level: **+{c.test.wins}/-{c.test.losses}**, p = **{c.test.p:.2g}**. The **{c.test.wins}** query wins come from only "
                 f"**{needles_in_wins}** needles. Needle level: **+{n_level.test.wins}/-{n_level.test.losses}**, p = **{n_level.test.p:.2g}**."))

# %% [markdown]
# The same goes for the intervals. Wilson's interval assumes every query is independent. A *cluster bootstrap* makes no such assumption: it builds
# 10,000 imaginary evaluation sets by drawing as many needles as there are, with replacement (each drawn needle brings all its phrasings), computes recall on each,
# and keeps the middle 95%. The ratio of its variance to the independent-queries variance is the *design effect*: 1 when the phrasings of a
# needle behave like strangers, 2 when they always agree (two phrasings then carry the information of one). Dividing 64 by it gives the
# effective number of independent queries.

# %%
row = ev.table().query("strategy == 'E' and retriever == 'dense' and metric == 'R@20'").iloc[0]
display(Markdown(f"E dense, R@20 = **{row.value:.3f}**. Wilson ({row.n} independent queries): **[{row.low:.3f}, {row.high:.3f}]**, "
                 f"**{row.high - row.low:.3f}** wide. Cluster bootstrap over needles: **[{row.needle_low:.3f}, {row.needle_high:.3f}]**, "
                 f"**{row.needle_high - row.needle_low:.3f}** wide. Design effect **{row.design_effect:.2f}**: the {row.n} queries weigh as much as "
                 f"about **{row.n / row.design_effect:.0f}** independent ones. The clustered interval is "
                 f"**{'wider' if row.needle_high - row.needle_low > row.high - row.low else 'not wider'}** than Wilson's here."))

# %% [markdown]
# How strongly the two phrasings of a needle agree depends on the run and the metric. The design effect of every dense run at every recall:
# where it is near 1 the phrasings behave almost like independent queries, where it approaches 2 they mostly succeed or fail together.

# %%
deff = ev.table().query("retriever == 'dense' and metric != 'MRR'").pivot(index="strategy", columns="metric", values="design_effect")
display(deff[[m for m in METRICS if m != "MRR"]].round(2))
display(Markdown(f"Design effects of the dense runs range from **{deff.min().min():.2f}** to **{deff.max().max():.2f}**. Whatever the interval "
                 "does, the sign test's unit still has to be the needle: two wins that come from one chunk are one piece of evidence."))

# %% [markdown]
# ## The chapter's comparisons, on this corpus
#
# The chapter reports a handful of paired comparisons. First a check that ragkit's sign test is the chapter's: run it on the chapter's own counts.
# Where the chapter gave counts but no p-value, the test recomputes it (column `chapter p reported` says which).

# %%
p_of = lambda w, l: sign_test([1] * w + [0] * l, [0] * w + [1] * l).p  # exact p from a pair of counts
table = pd.DataFrame([{"comparison": f"{a} vs {b}", "metric": m, "chapter": f"+{w}/-{l}",
                       "chapter p": f"{p if p is not None else p_of(w, l):.3g}",
                       "chapter p reported": p is not None, "recomputed": f"{p_of(w, l):.3g}"}
                      for (a, b, m), (w, l, p) in chapter.COMPARISONS.items()])
match = [np.isclose(p_of(w, l), p, rtol=0.05) for w, l, p in chapter.COMPARISONS.values() if p is not None]
display(Markdown(f"ragkit's sign test on the chapter's own counts matches its reported p (within rounding) in **{sum(match)} of {len(match)}** cases."))
table

# %% [markdown]
# ### Many looks at once: Holm
#
# Each p below 0.05 has a one-in-twenty chance of being a fluke. Look at seven comparisons and the chance that *some* fluke turns up is much
# larger. Holm's correction fixes that for a *family* (here: the chapter's comparisons shown together): sort the m p-values, multiply the smallest
# by m, the next by m - 1, and so on, never letting an adjusted p fall below the one before it, and cap at 1. A family of one is left as it is.
#
# ### Three words, one rule
#
# Each comparison gets one of three words, by a rule fixed before looking, written once in code and printed here. It uses the needle level
# and the Holm-adjusted p, and the metric the chapter chose for that comparison (`ragkit.teach.chapter` fixes it).

# %%
import inspect

print(inspect.getsource(verdict))

# %%
seven = family(ev, chapter.COMPARISONS)
verdicts = against_chapter(seven)
verdicts.style.format({c: "{:.3g}" for c in verdicts.columns if c.startswith(("p ", "Holm"))}).hide(axis="index")

# %%
counts = verdicts.verdict.str.split(",").str[0].value_counts()
display(Markdown("Of the chapter's **" + str(len(verdicts)) + "** comparisons, here: " +
                 ", ".join(f"**{counts.get(v, 0)}** {v}" for v in ("consistent", "contradicts", "inconclusive")) + ". " +
                 f"Inconclusive is not a failure to reproduce: it says this corpus cannot tell, in either direction, with {len(course.questions)} needles."))

# %% [markdown]
# How to read an "inconclusive":
#
# - *Same direction*: this corpus leans the chapter's way but too few needles disagree to be sure. A larger test set might settle it.
# - *Opposite direction*: the lean goes the other way, but so weakly that a coin could have produced it. It is not a contradiction.
# - A paired test can only find wins where there is room for them. If the weaker strategy already finds most needles, few remain to disagree
#   about. The next cell counts that room for the header ablation (E against C).

# %%
room = int((ev["C/dense"].per_query("R@20") == 0).sum())
t = ev.compare("E/dense", "C/dense", "R@20").test
(e_hits, n_ch), (w, l, _) = chapter.RECALL20["E"], chapter.COMPARISONS["E/dense", "C/dense", "R@20"]
display(Markdown(f"This corpus: C misses **{room}** of **{n}** queries at R@20, so E can win at most **{room}**; it wins **{t.wins}** and loses **{t.losses}**. "
                 f"The chapter: E found **{e_hits}/{n_ch}** and beat C **+{w}/-{l}**, so its C found **{e_hits - w + l}/{n_ch}** and missed **{n_ch - e_hits + w - l}**: "
                 f"{'more' if n_ch - e_hits + w - l > room else 'no more'} room than here."))

# %% [markdown]
# ## The header, confronted (optional)
#
# The headline E-vs-A gain mixes two things: E's boundaries keep needles that A's blind cuts destroy, and E's header may help ranking.
# Two comparisons pull them apart, both at R@20 and at both levels: E against A on the needles A did *not* destroy (what E buys beyond not
# cutting answers in two), and E against C (same cuts, the header alone).

# %%
header = [("E vs A, A's destroyed needles left out", ev.compare("E/dense", "A/dense", "R@20", level, drop=ev.destroyed["A"]))
          for level in ("query", "needle")]
header += [("E vs C: the header alone", ev.compare("E/dense", "C/dense", "R@20", level)) for level in ("query", "needle")]
pd.DataFrame([{"comparison": name, "level": c.level, "wins": c.test.wins, "losses": c.test.losses, "p": f"{c.test.p:.3g}"}
              for name, c in header])

# %%
rest, alone = header[1][1].test, header[3][1].test
display(Markdown(f"Without the needles A destroyed, E against A, needle by needle: **+{rest.wins}/-{rest.losses}**, p = **{rest.p:.2g}**. "
                 f"The header alone (E against C), needle by needle: **+{alone.wins}/-{alone.losses}**, p = **{alone.p:.2g}**. "
                 f"Of the headline's **{n_level.test.wins}** needle wins, **{n_level.test.wins - rest.wins}** are needles A destroyed."))

# %% [markdown]
# ## Metric shopping (optional)
#
# Every comparison above used the metric the chapter chose. But the evaluation computes five. Look at all of them for the seven pairs and some
# cell will always look exciting. The table lists the ten most striking of every pair at every metric, needle level, sorted by raw p, with Holm
# over all of them (the honest family once you have looked at everything).

# %%
pairs = list(dict.fromkeys((a, b) for a, b, _ in chapter.COMPARISONS))
shopping = metric_shopping(ev, pairs, chapter.COMPARISONS).sort_values("p")
shopping.head(10).style.format({"p": "{:.3g}", "Holm p": "{:.3g}"}).hide(axis="index")

# %%
unchosen = shopping[~shopping["chosen by the chapter"]]
best = unchosen.iloc[0]
hurts = unchosen[unchosen.comparison.isin(["F/dense vs E/dense", "B/dense vs A/dense"])].sort_values("p").groupby("comparison").head(1)
display(Markdown(f"Of **{len(shopping)}** looks, the most striking one the chapter did *not* choose is **{best.comparison} at {best.metric}**: "
                 f"**+{best.wins}/-{best.losses}**, raw p = **{best.p:.3g}**, Holm p over all {len(shopping)} = **{best['Holm p']:.3g}**. "
                 + " ".join(f"{r['comparison']} is most striking at **{r['metric']}** (+{r['wins']}/-{r['losses']}, raw p = {r['p']:.3g}, "
                            f"Holm p = {r['Holm p']:.3g})." for _, r in hurts.iterrows()) +
                 " Picking the metric that makes a story after seeing the table turns noise into a finding: the metric has to be fixed first, "
                 "and every extra look has to pay for itself in the correction."))

# %% [markdown]
# ## Every pair at once (optional)
#
# The matrix shows, for each pair of strategies, the net wins of the row over the column at R@20 (wins minus losses), counted in needles.
# Hover over a cell for the counts, the exact p and the Holm p. The Holm family is the whole matrix at all five metrics, because that is how many
# looks this figure invites. Blue means the row wins more needles than it loses, red the opposite. A deep colour with a large p is still noise.

# %%
plots.win_loss_matrix(ev, "R@20", "dense")

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
# Split E's dense recall by phrasing.

# %%
phrasing = np.array([q.phrasing for q in course.queries])
run_e = ev["E/dense"]
pd.DataFrame({m: {p: run_e.per_query(m)[phrasing == p].mean() for p in ("question", "ticket")} for m in METRICS}).round(3)

# %% [markdown]
# Both phrasings ask about the same needles in the same order, so this is a paired comparison too: the question and the ticket for one needle form a pair.

# %%
sig = lambda p: "significant" if p < 0.05 else "not significant"
for m in ("R@1", "R@8", "R@20"):
    t = sign_test(run_e.per_query(m)[phrasing == "question"], run_e.per_query(m)[phrasing == "ticket"])
    display(Markdown(f"At {m}, the question finds the needle and the ticket does not for **{t.wins}** needles; the reverse for **{t.losses}**; p = **{t.p:.2g}** ({sig(t.p)})."))

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
worst = max(abs(sign_test_by_hand(w, l) - binomtest(w, w + l, 0.5).pvalue) for w, l in splits)
tests = [ev.compare(a, b, m).test for a, b, m in chapter.COMPARISONS]
agree = sum(abs(sign_test_by_hand(t.wins, t.losses) - t.p) < 1e-12 for t in tests)
display(Markdown(f"Largest difference from scipy over **{len(splits)}** splits: **{worst:.1e}**. Agreement with "
                 f"`ragkit` on the chapter's comparisons: **{agree}** of **{len(tests)}**."))
assert worst < 1e-9 and agree == len(tests)

# %% [markdown]
# Real users write tickets, not textbook questions. The difference between the two rows above is exactly what you would never see if you evaluated a retriever only on questions phrased in the vocabulary of your documents.
#
# ## Try this (optional)
#
# 1. In the duel, set A to `F/dense`, B to `E/dense` and step through the metrics. Does overlap on top of the header ever win significantly? Open the query lists and look at the chunks that moved.
# 2. Change `run_e` to `ev["A/dense"]` and rerun the phrasing cells. Is the gap between questions and tickets larger or smaller with blind chunking? Why might that be?
# 3. Use `wilson(k, n)` to find out how many queries you would need for a recall of one half to have an interval about five points either side. What does that tell you about the evaluation sets in most blog posts?
# 4. Run `ev.compare("E/dense", "F/dense", m, "needle")` for every metric `m`. Before you look, write down which metric you would report and why.

# %% [markdown]
# ## Knowledge check
#
# Choose one answer per question, then press the button: the feedback explains every option, the wrong ones too.

# %%
from ragkit.teach.quiz import Quiz

Quiz("02", course).widget()
